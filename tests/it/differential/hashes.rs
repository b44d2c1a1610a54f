//! The hash commands against Redis 8.8 over the wire, RESP2 and RESP3: HSET, HSETNX, HMSET,
//! HGET, HMGET, HGETALL, HKEYS, HVALS, HLEN, HSTRLEN, HEXISTS, HDEL, HINCRBY, HINCRBYFLOAT,
//! HRANDFIELD, HSCAN, the field-expiry family (HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL,
//! HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST), HGETEX, HSETEX and HGETDEL, and OBJECT
//! ENCODING over a hash's history: replies and errors byte for byte.
//!
//! Replies whose order is a table's (a hashtable hash's HGETALL) or random (HRANDFIELD below
//! the size) are left out; times are absolute and far in the future, or relative and read back
//! in whole seconds, or in the past.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, line_words as argv};

/// 2100-01-01 in Unix seconds and milliseconds.
const FAR_S: &str = "4102444800";
const FAR_MS: &str = "4102444800000";

fn lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        "SET str v",
        // Writes and reads of a listpack.
        "HSET h a 1 b 2 c 3",
        "HSET h a 10 d 4",
        "HSET h a",
        "HSET str a 1",
        "HMSET h e 5",
        "HMSET h e",
        "HSETNX h a 1",
        "HSETNX h f 6",
        "HSETNX str a 1",
        "HGET h a",
        "HGET h zz",
        "HGET nokey a",
        "HGET str a",
        "HMGET h a zz b",
        "HMGET nokey a b",
        "HMGET str a",
        "HGETALL h",
        "HGETALL nokey",
        "HGETALL str",
        "HKEYS h",
        "HVALS h",
        "HKEYS nokey",
        "HVALS str",
        "HLEN h",
        "HLEN nokey",
        "HSTRLEN h a",
        "HSTRLEN h zz",
        "HEXISTS h b",
        "HEXISTS h zz",
        "HEXISTS str b",
        "OBJECT ENCODING h",
        "TYPE h",
        // HDEL.
        "HDEL h zz",
        "HDEL h b zz c",
        "HDEL nokey a",
        "HDEL str a",
        "HSET one x 1",
        "HDEL one x x",
        "EXISTS one",
        // HINCRBY, HINCRBYFLOAT.
        "HINCRBY h n 5",
        "HINCRBY h n -7",
        "HINCRBY h n x",
        "HINCRBY h e 1.5",
        "HSET h s abc big 9223372036854775807",
        "HINCRBY h s 1",
        "HINCRBY h big 1",
        "HINCRBY str n 1",
        "HINCRBY newh n 3",
        "HINCRBYFLOAT h fl 10.5",
        "HINCRBYFLOAT h fl 0.1",
        "HINCRBYFLOAT h fl -3e3",
        "HINCRBYFLOAT fh fl 1.0e200",
        "OBJECT ENCODING fh",
        "HINCRBYFLOAT h s 1",
        "HINCRBYFLOAT h fl abc",
        "HINCRBYFLOAT h fl inf",
        "HINCRBYFLOAT h fl nan",
        "HINCRBYFLOAT h n 1e5000",
        "HINCRBYFLOAT str fl 1",
        "HGET h fl",
        // Values and increments are read as strtold reads them, hexadecimal floats included.
        "HSET hx a 0x1 b 0x b2 0x1p",
        "HINCRBYFLOAT hx a -2",
        "HINCRBYFLOAT hx a 0x1.8p1",
        "HINCRBYFLOAT hx a 0X.8",
        "HINCRBYFLOAT hx b 1",
        "HINCRBYFLOAT hx b2 1",
        "HINCRBYFLOAT hx a 0x1p99999",
        "HINCRBYFLOAT hx a 0xg",
        // HRANDFIELD: errors, and counts at or past the size (the whole hash, in order).
        "HRANDFIELD nokey",
        "HRANDFIELD nokey 5",
        "HRANDFIELD nokey 5 WITHVALUES",
        "HRANDFIELD str",
        "HRANDFIELD str 1",
        "HRANDFIELD h x",
        "HRANDFIELD h 1 FOO",
        "HRANDFIELD h 1 WITHVALUES FOO",
        "HRANDFIELD h -9223372036854775808",
        "HRANDFIELD h 9223372036854775807 WITHVALUES",
        "HRANDFIELD h -4611686018427387904 WITHVALUES",
        "HRANDFIELD h 0",
        "HRANDFIELD h 100",
        "HRANDFIELD h 100 WITHVALUES",
        "HRANDFIELD h 100 withvalues",
        // HSCAN.
        "HSCAN h 0",
        "HSCAN h 0 NOVALUES",
        "HSCAN h 0 MATCH [a-e] COUNT 100",
        "HSCAN h 0 MATCH * NOVALUES",
        "HSCAN h x",
        "HSCAN h 0 COUNT 0",
        "HSCAN h 0 COUNT x",
        "HSCAN h 0 FOO",
        "HSCAN h 0 MATCH",
        "HSCAN nokey 0 FOO",
        "HSCAN str 0",
        "HSCAN str x",
        // Arity.
        "HGET h",
        "HLEN",
        "HSETNX h a",
        "HINCRBY h a",
        "HSCAN h",
        "HEXPIRE h 10 FIELDS",
        "HTTL h FIELDS 1",
        "HGETDEL h FIELDS 1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let far = [
        // Field TTLs: setters and read-backs in absolute times and whole seconds.
        "HSET e a 1 b 2 c 3 d 4".to_string(),
        "OBJECT ENCODING e".into(),
        "HTTL e FIELDS 2 a zz".into(),
        "HTTL nokey FIELDS 2 a b".into(),
        "HTTL str FIELDS 1 a".into(),
        format!("HEXPIREAT e {FAR_S} FIELDS 2 a zz"),
        "OBJECT ENCODING e".into(),
        "HEXPIRETIME e FIELDS 3 a b zz".into(),
        "HPEXPIRETIME e FIELDS 1 a".into(),
        format!("HPEXPIREAT e {FAR_MS} NX FIELDS 2 a b"),
        format!("HPEXPIREAT e {FAR_MS} XX FIELDS 2 a c"),
        "HEXPIRE e 100 GT FIELDS 2 a c".into(),
        "HEXPIRE e 100 LT FIELDS 3 a c d".into(),
        "HTTL e FIELDS 3 a c d".into(),
        "HEXPIRETIME e FIELDS 1 b".into(),
        "HPEXPIRE e 200000 FIELDS 1 b".into(),
        "HTTL e FIELDS 1 b".into(),
        "HGETALL e".into(),
        "HKEYS e".into(),
        "HRANDFIELD e 10 WITHVALUES".into(),
        "HSCAN e 0".into(),
        "HPERSIST e FIELDS 3 a d zz".into(),
        "HPERSIST e FIELDS 1 a".into(),
        "HPERSIST nokey FIELDS 1 a".into(),
        "HPERSIST str FIELDS 1 a".into(),
        "HPERSIST e FIELD 1 a".into(),
        "HPERSIST e FIELDS 0 a".into(),
        "HPERSIST e FIELDS 2 a".into(),
        "HTTL e FIELDS 3 a c d".into(),
        // b's time is relative (HPEXPIRE above): its TTL, not its time, is the same on both.
        "HTTL e FIELDS 1 b".into(),
        "OBJECT ENCODING e".into(),
        // A past time deletes the field; the last one takes the key.
        "HEXPIREAT e 1 FIELDS 2 a zz".into(),
        "HGETALL e".into(),
        "HPEXPIRE e 0 FIELDS 3 b c d".into(),
        "EXISTS e".into(),
        "HEXPIRE nokey 10 FIELDS 1 a".into(),
        "HEXPIRE str 10 FIELDS 1 a".into(),
        // Option errors in Redis's order.
        "HSET e a 1".into(),
        "HEXPIRE e x FIELDS 1 a".into(),
        "HEXPIRE e -1 FIELDS 1 a".into(),
        "HEXPIRE e 281474976710656 FIELDS 1 a".into(),
        "HPEXPIRE e 281474976710656 FIELDS 1 a".into(),
        "HEXPIREAT e 281474976710 FIELDS 1 a".into(),
        "HEXPIRE e 10 FIELDS 0 a".into(),
        "HEXPIRE e 10 FIELDS x a".into(),
        "HEXPIRE e 10 FIELDS 3 a b".into(),
        "HEXPIRE e 10 FIELDS 1 a FIELDS 1 a".into(),
        "HEXPIRE e 10 NX XX FIELDS 1 a".into(),
        "HEXPIRE e 10 NX NX FIELDS 1 a".into(),
        "HEXPIRE e 10 FOO FIELDS 1 a".into(),
        "HEXPIRE e 10 NX a b".into(),
        "HEXPIRE e 10 FIELDS 1 a NX".into(),
        "HEXPIRE e 10 FIELDS 1 a b".into(),
        "HEXPIRE e 10 XX FIELDS 1 a".into(),
        "HTTL e FIELDS 1 a".into(),
        "HTTL e FIELD 1 a".into(),
        "HTTL e FIELDS 0 a".into(),
        "HTTL e FIELDS -1 a".into(),
        "HTTL e FIELDS 2 a".into(),
        "HTTL e FIELDS 1 a b".into(),
        // HGETEX.
        "HSET g a 1 b 2 c 3".into(),
        "HGETEX g FIELDS 2 a zz".into(),
        format!("HGETEX g EXAT {FAR_S} FIELDS 2 a zz"),
        "HEXPIRETIME g FIELDS 1 a".into(),
        "OBJECT ENCODING g".into(),
        "HGETEX g PERSIST FIELDS 2 a b".into(),
        "HTTL g FIELDS 1 a".into(),
        "HGETEX g EX 100 FIELDS 1 b".into(),
        "HTTL g FIELDS 1 b".into(),
        "HGETEX g PX 0 FIELDS 1 b".into(),
        "HGETALL g".into(),
        "HGETEX nokey EX 10 FIELDS 1 a".into(),
        "HGETEX str FIELDS 1 a".into(),
        "HGETEX g EX 10 PX 10 FIELDS 1 a".into(),
        "HGETEX g PERSIST PERSIST FIELDS 1 a".into(),
        "HGETEX g KEEPTTL FIELDS 1 a".into(),
        "HGETEX g EX -1 FIELDS 1 a".into(),
        "HGETEX g EX x FIELDS 1 a".into(),
        "HGETEX g FIELDS 0 a".into(),
        "HGETEX g FIELDS 2 a".into(),
        "HGETEX g FIELDS 1 a b".into(),
        "HGETEX g FIELDS 1 a FIELDS 1 a".into(),
        "HGETEX g EX 10 a".into(),
        "HGETEX g FOO FIELDS 1 a".into(),
        // HSETEX.
        "HSETEX s FIELDS 2 a 1 b 2".into(),
        "HGETALL s".into(),
        "HSETEX s FNX FIELDS 1 a 9".into(),
        "HSETEX s FNX FIELDS 1 z 9".into(),
        "HSETEX s FXX FIELDS 2 a 7 y 8".into(),
        "HSETEX s FXX FIELDS 2 a 7 b 8".into(),
        "HSETEX nokey FXX FIELDS 1 a 1".into(),
        "EXISTS nokey".into(),
        format!("HSETEX s EXAT {FAR_S} FIELDS 1 a 11"),
        "HEXPIRETIME s FIELDS 2 a b".into(),
        "HSETEX s KEEPTTL FIELDS 1 a 12".into(),
        "HEXPIRETIME s FIELDS 1 a".into(),
        "HSETEX s FIELDS 1 a 13".into(),
        "HEXPIRETIME s FIELDS 1 a".into(),
        "HSETEX s PX 0 FIELDS 1 a 14".into(),
        "HGETALL s".into(),
        "HSETEX str FIELDS 1 a 1".into(),
        "HSETEX s EX 10 KEEPTTL FIELDS 1 a 1".into(),
        "HSETEX s FNX FXX FIELDS 1 a 1".into(),
        "HSETEX s EX 10 FIELDS 1 a 1 EX 20".into(),
        "HSETEX s FIELDS 0 a 1".into(),
        "HSETEX s FIELDS 2 a 1".into(),
        "HSETEX s FIELDS 1 a 1 b".into(),
        "HSETEX s PERSIST FIELDS 1 a 1".into(),
        "HSETEX s FIELDS 1 a 1 EX".into(),
        "HSETEX s EX -5 FIELDS 1 a 1".into(),
        // HGETDEL.
        "HSET d a 1 b 2 c 3".into(),
        "HGETDEL d FIELDS 2 a zz".into(),
        "HGETALL d".into(),
        "HGETDEL d FIELDS 2 b c".into(),
        "EXISTS d".into(),
        "HGETDEL nokey FIELDS 1 a".into(),
        "HGETDEL str FIELDS 1 a".into(),
        "HGETDEL s FIELD 1 a".into(),
        "HGETDEL s FIELDS 0 a".into(),
        "HGETDEL s FIELDS 2 a".into(),
        // Encodings over a hash's history.
        "HSET big f 1".into(),
        format!("HSET big long {}", "x".repeat(65)),
        "OBJECT ENCODING big".into(),
        "HSET lp f 1".into(),
        format!("HSET lp v {}", "y".repeat(64)),
        "OBJECT ENCODING lp".into(),
        format!("HINCRBYFLOAT lp {} 1", "z".repeat(65)),
        "OBJECT ENCODING lp".into(),
        format!("HEXPIREAT lp {FAR_S} FIELDS 1 f"),
        "HEXPIRETIME lp FIELDS 1 f".into(),
        "HPERSIST lp FIELDS 1 f".into(),
        // Keys that move carry the hash whole, field TTLs included.
        "HSET mv a 1 b 2".into(),
        format!("HEXPIREAT mv {FAR_S} FIELDS 1 b"),
        "COPY mv mvcopy".into(),
        "OBJECT ENCODING mvcopy".into(),
        "HEXPIRETIME mvcopy FIELDS 2 a b".into(),
        "RENAME mvcopy mvren".into(),
        "HGETALL mvren".into(),
        "HEXPIRETIME mvren FIELDS 2 a b".into(),
        "TYPE mvren".into(),
        "MOVE mvren 1".into(),
        "EXISTS mvren".into(),
        "HTTL lp FIELDS 1 f".into(),
    ]
    .to_vec();
    lines.append(&mut far.to_vec());
    // A hash of 512 fields is a listpack; one more makes it a table.
    let fields: Vec<String> = (0..512).map(|i| format!("f{i} {i}")).collect();
    lines.push(format!("HSET many {}", fields.join(" ")));
    lines.push("OBJECT ENCODING many".into());
    lines.push("HLEN many".into());
    lines.push("HSET many extra 1".into());
    lines.push("OBJECT ENCODING many".into());
    lines.push("HGET many f511".into());
    // CONFIG SET moves the thresholds for the next writes.
    for l in [
        "CONFIG SET hash-max-listpack-entries 2 hash-max-listpack-value 4",
        "HSET ch a 1 b 2",
        "OBJECT ENCODING ch",
        "HSET ch c 3",
        "OBJECT ENCODING ch",
        "HSET cv a 12345",
        "OBJECT ENCODING cv",
        "HSET cw a 1",
        "HINCRBYFLOAT cw a 0.25",
        "OBJECT ENCODING cw",
        "CONFIG SET hash-max-listpack-entries 512 hash-max-listpack-value 64",
        "HSET cx a 12345",
        "OBJECT ENCODING cx",
    ] {
        lines.push(l.into());
    }
    lines
}

#[test]
fn hash_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

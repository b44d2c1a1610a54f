//! The set commands against Redis 8.8 over the wire, RESP2 and RESP3: SADD, SREM, SCARD,
//! SISMEMBER, SMISMEMBER, SMEMBERS, SRANDMEMBER, SPOP, SMOVE, SINTER, SINTERSTORE,
//! SINTERCARD, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE, SSCAN, and OBJECT ENCODING over a
//! set's history: replies and errors byte for byte.
//!
//! Replies in a table's order or random ones are left out, or made deterministic: members
//! are read back from intsets (ascending) and listpacks (insertion order); SPOP and
//! SRANDMEMBER take counts at or past the size, or are checked through SCARD.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, line_words as argv};

fn lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        "SET str v",
        "SADD i 3 1 2 1",
        // An intset's integers widen for a wide member and stay wide after it goes (DUMP).
        "SADD iw 2 100 9223372036854775807",
        "SREM iw 9223372036854775807",
        "DUMP iw",
        "COPY iw iwc",
        "DUMP iwc",
        "SADD iw4 1 70000",
        "SREM iw4 70000",
        "SADD iw4 5",
        "DUMP iw4",
        "SINTERSTORE iws iw iw",
        "DUMP iws",
        "OBJECT ENCODING i",
        "SMEMBERS i",
        "SADD l b a 2",
        "OBJECT ENCODING l",
        "SMEMBERS l",
        "SADD i x",
        "OBJECT ENCODING i",
        "SMEMBERS i",
        "SADD str a",
        "SADD nokey",
        "SREM i 1 zz x",
        "SREM i 1",
        "SREM nokey a",
        "SREM str a",
        "SADD one a",
        "SREM one a a",
        "EXISTS one",
        "SCARD l",
        "SCARD nokey",
        "SCARD str",
        "SISMEMBER l a",
        "SISMEMBER l zz",
        "SISMEMBER nokey a",
        "SISMEMBER str a",
        "SMISMEMBER l a zz b",
        "SMISMEMBER nokey a",
        "SMISMEMBER str a",
        "SMEMBERS nokey",
        "SMEMBERS str",
        "TYPE l",
        // Algebra over intsets and listpacks.
        "SADD n1 1 2 3 4 5",
        "SADD n2 4 5 6",
        "SADD n3 5",
        "SINTER n1 n2",
        "SINTER n1 n2 n3",
        "SINTER n1 nokey",
        "SINTER n1 str",
        "SINTER nokey str",
        "SINTERCARD 2 n1 n2",
        "SINTERCARD 2 n1 n2 LIMIT 1",
        "SINTERCARD 2 n1 n2 LIMIT 0",
        "SINTERCARD 1 nokey",
        "SINTERCARD 0 n1",
        "SINTERCARD x n1",
        "SINTERCARD 3 n1 n2",
        "SINTERCARD 1 n1 LIMIT -1",
        "SINTERCARD 1 n1 LIMIT x",
        "SINTERCARD 1 n1 LIMIT",
        "SINTERCARD 1 n1 FOO 1",
        "SINTERCARD 2 n1 str",
        "SUNION n1 n2 nokey",
        "SDIFF n1 n2 n3",
        "SDIFF n1 n1",
        "SDIFF nokey n1",
        "SUNION n1 str",
        "SINTERSTORE d n1 n2",
        "OBJECT ENCODING d",
        "SMEMBERS d",
        "SINTERSTORE d n1 nokey",
        "EXISTS d",
        "SUNIONSTORE d n1 n2",
        "OBJECT ENCODING d",
        "SMEMBERS d",
        "SDIFFSTORE d n1 n2",
        "SMEMBERS d",
        "SDIFFSTORE d n1 n1",
        "EXISTS d",
        "SINTERSTORE d l l",
        "OBJECT ENCODING d",
        "SMEMBERS d",
        "SUNIONSTORE d l n3",
        "OBJECT ENCODING d",
        "SCARD d",
        "SINTERSTORE str2 n1 str",
        "SET str2 x",
        "SUNIONSTORE str2 n1",
        "TYPE str2",
        // SMOVE.
        "SMOVE n1 n2 1",
        "SMEMBERS n1",
        "SMEMBERS n2",
        "SMOVE n1 n2 4",
        "SMOVE n1 n2 zz",
        "SMOVE n1 fresh 2",
        "OBJECT ENCODING fresh",
        "SMOVE n1 n1 3",
        "SMOVE n1 n1 zz",
        "SMOVE nokey str a",
        "SMOVE n1 str 3",
        "SMOVE str n1 3",
        "SADD m x",
        "SMOVE m fresh x",
        "EXISTS m",
        // SPOP and SRANDMEMBER: errors and deterministic counts.
        "SPOP nokey",
        "SPOP nokey 3",
        "SPOP str",
        "SPOP str 1",
        "SPOP n2 1 2",
        "SPOP n2 -1",
        "SPOP n2 x",
        "SPOP n2 0",
        "SADD p 1 2 3",
        "SPOP p 5",
        "EXISTS p",
        "SADD p 7 8 9",
        "SPOP p 3",
        "EXISTS p",
        "SADD p 9",
        "SPOP p",
        "EXISTS p",
        "SRANDMEMBER nokey",
        "SRANDMEMBER nokey 5",
        "SRANDMEMBER str",
        "SRANDMEMBER str 1",
        "SRANDMEMBER n2 x",
        "SRANDMEMBER n2 1 2",
        "SRANDMEMBER n2 -9223372036854775808",
        "SRANDMEMBER n2 0",
        "SRANDMEMBER n2 100",
        "SRANDMEMBER l 100",
        // SSCAN.
        "SSCAN l 0",
        "SSCAN l 0 MATCH [ab] COUNT 100",
        "SSCAN l 0 NOVALUES",
        "SSCAN l x",
        "SSCAN l 0 COUNT 0",
        "SSCAN l 0 FOO",
        "SSCAN nokey 0 FOO",
        "SSCAN str 0",
        // Keys that move carry the set whole.
        "COPY l lcopy",
        "SMEMBERS lcopy",
        "OBJECT ENCODING lcopy",
        "RENAME lcopy lren",
        "SMEMBERS lren",
        "TYPE lren",
        "MOVE lren 1",
        "EXISTS lren",
        "COPY lren back DB 0",
        // Arity.
        "SADD s",
        "SCARD",
        "SISMEMBER s",
        "SMOVE a b",
        "SINTERCARD 1",
        "SSCAN s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Encodings: 512 integers are an intset, one more a table; a long member or the 129th
    // of a listpack makes a table.
    let ints: Vec<String> = (0..512).map(|i| i.to_string()).collect();
    lines.push(format!("SADD ints {}", ints.join(" ")));
    lines.push("OBJECT ENCODING ints".into());
    lines.push("SADD ints 512".into());
    lines.push("OBJECT ENCODING ints".into());
    let strs: Vec<String> = (0..128).map(|i| format!("m{i}")).collect();
    lines.push(format!("SADD strs {}", strs.join(" ")));
    lines.push("OBJECT ENCODING strs".into());
    lines.push("SADD strs last".into());
    lines.push("OBJECT ENCODING strs".into());
    lines.push(format!("SADD long a {}", "x".repeat(65)));
    lines.push("OBJECT ENCODING long".into());
    lines.push("SADD mixed 1 2".into());
    lines.push(format!("SADD mixed {}", "y".repeat(64)));
    lines.push("OBJECT ENCODING mixed".into());
    lines.push("SMEMBERS mixed".into());
    // CONFIG SET moves the thresholds for the next writes; existing sets keep their encoding.
    for l in [
        "CONFIG SET set-max-intset-entries 2 set-max-listpack-entries 3 set-max-listpack-value 4",
        "SADD ci 1 2",
        "OBJECT ENCODING ci",
        "SADD ci 3",
        "OBJECT ENCODING ci",
        "SADD cl a b c",
        "OBJECT ENCODING cl",
        "SADD cl d",
        "OBJECT ENCODING cl",
        "SADD cv abcde",
        "OBJECT ENCODING cv",
        "OBJECT ENCODING strs",
        "SADD c3 1 2 3",
        "OBJECT ENCODING c3",
        "SINTERSTORE cs c3 c3",
        "OBJECT ENCODING cs",
        "CONFIG SET set-max-intset-entries 512 set-max-listpack-entries 128 set-max-listpack-value 64",
    ] {
        lines.push(l.into());
    }
    lines
}

#[test]
fn set_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! The list commands against Redis 8.8 over the wire, RESP2 and RESP3: LPUSH, RPUSH, LPUSHX,
//! RPUSHX, LPOP, RPOP, LMPOP, LLEN, LINDEX, LRANGE, LPOS, LSET, LTRIM, LINSERT, LREM, LMOVE,
//! RPOPLPUSH and the blocking pops where they need not block, their replies, their errors in
//! Redis's order, OBJECT ENCODING as the list grows and shrinks, and DUMP's bytes, byte for
//! byte.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, line_words as argv};

fn lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        "SET s v",
        // Pushes.
        "LPUSH l a b c",
        "RPUSH l d e 1 -2 300 70000 99999999999 -0 007",
        "LPUSHX nokey a",
        "RPUSHX nokey a",
        "LPUSHX l x",
        "RPUSHX l y z",
        "LPUSH s a",
        "RPUSHX s a",
        "LPUSH l",
        "LRANGE l 0 -1",
        "LLEN l",
        "LLEN nokey",
        "LLEN s",
        "OBJECT ENCODING l",
        "DUMP l",
        // LINDEX, LRANGE.
        "LINDEX l 0",
        "LINDEX l -1",
        "LINDEX l 100",
        "LINDEX l -100",
        "LINDEX l abc",
        "LINDEX nokey abc",
        "LINDEX s 0",
        "LRANGE l 2 4",
        "LRANGE l -3 -1",
        "LRANGE l -100 100",
        "LRANGE l 5 2",
        "LRANGE l 100 200",
        "LRANGE nokey 0 -1",
        "LRANGE nokey a 1",
        "LRANGE s 0 1",
        "LRANGE s x 1",
        // LPOS.
        "RPUSH p a b c a b c a",
        "LPOS p a",
        "LPOS p a RANK 2",
        "LPOS p a RANK -1",
        "LPOS p a RANK -2 COUNT 0",
        "LPOS p a COUNT 0",
        "LPOS p a COUNT 2",
        "LPOS p a COUNT 0 MAXLEN 4",
        "LPOS p a RANK 0",
        "LPOS p a RANK abc",
        "LPOS p a RANK -9223372036854775808",
        "LPOS p a COUNT -1",
        "LPOS p a COUNT abc",
        "LPOS p a MAXLEN -1",
        "LPOS p a MAXLEN x",
        "LPOS p a FOO 1",
        "LPOS p a RANK",
        "LPOS p z",
        "LPOS p z COUNT 1",
        "LPOS nokey a",
        "LPOS nokey a COUNT 1",
        "LPOS s a",
        "LPOS s a RANK 0",
        // LSET.
        "LSET p 0 x",
        "LSET p -1 y",
        "LSET p 100 y",
        "LSET p abc y",
        "LSET nokey 0 y",
        "LSET nokey abc y",
        "LSET s 0 y",
        "LRANGE p 0 -1",
        // LINSERT.
        "LINSERT p BEFORE b B",
        "LINSERT p AFTER c C",
        "LINSERT p AFTER nothere C",
        "LINSERT p MIDDLE b B",
        "LINSERT nokey BEFORE b B",
        "LINSERT nokey MIDDLE b B",
        "LINSERT s BEFORE b B",
        "LRANGE p 0 -1",
        // LREM.
        "RPUSH r a b a c a b a",
        "LREM r 2 a",
        "LRANGE r 0 -1",
        "LREM r -1 a",
        "LRANGE r 0 -1",
        "LREM r 0 b",
        "LREM r 0 zz",
        "LREM r abc a",
        "LREM r -9223372036854775808 a",
        "LREM nokey 1 a",
        "LREM s 1 a",
        "LREM r 0 a",
        "LREM r 0 c",
        "EXISTS r",
        // LTRIM.
        "RPUSH t 1 2 3 4 5 6 7",
        "LTRIM t 1 -2",
        "LRANGE t 0 -1",
        "LTRIM t 0 100",
        "LTRIM t abc 1",
        "LTRIM nokey 0 1",
        "LTRIM s 0 1",
        "LTRIM t 5 1",
        "EXISTS t",
        // LPOP, RPOP.
        "RPUSH q 1 2 3 4 5",
        "LPOP q",
        "RPOP q",
        "LPOP q 2",
        "RPOP q 0",
        "LPOP q -1",
        "LPOP q abc",
        "LPOP q 1 2",
        "LPOP nokey",
        "LPOP nokey 2",
        "LPOP nokey -1",
        "LPOP s",
        "RPOP q 10",
        "EXISTS q",
        // LMPOP.
        "RPUSH m1 a b c",
        "RPUSH m2 d e f",
        "LMPOP 2 nokey m1 LEFT",
        "LMPOP 2 nokey m1 RIGHT COUNT 10",
        "LMPOP 2 m1 m2 RIGHT COUNT 2",
        "LMPOP 1 nokey LEFT",
        "LMPOP 0 m2 LEFT",
        "LMPOP -1 m2 LEFT",
        "LMPOP abc m2 LEFT",
        "LMPOP 3 m2 LEFT",
        "LMPOP 1 m2 MIDDLE",
        "LMPOP 1 m2 LEFT COUNT 0",
        "LMPOP 1 m2 LEFT COUNT abc",
        "LMPOP 1 m2 LEFT COUNT 1 COUNT 1",
        "LMPOP 1 m2 LEFT FOO",
        "LMPOP 2 s m2 LEFT",
        "LMPOP 2 m2 s LEFT",
        "LMPOP 9223372036854775807 m2 LEFT",
        // LMOVE, RPOPLPUSH.
        "RPUSH src a b c",
        "LMOVE src dst LEFT RIGHT",
        "LMOVE src dst RIGHT LEFT",
        "LRANGE dst 0 -1",
        "LMOVE src src LEFT RIGHT",
        "LMOVE src dst UP LEFT",
        "LMOVE src dst LEFT DOWN",
        "LMOVE nokey dst LEFT LEFT",
        "LMOVE s dst LEFT LEFT",
        "LMOVE src s LEFT LEFT",
        "LMOVE nokey s LEFT LEFT",
        "RPOPLPUSH src dst",
        "RPOPLPUSH src dst",
        "EXISTS src",
        "RPOPLPUSH dst dst",
        "LRANGE dst 0 -1",
        // The blocking forms where something is there.
        "RPUSH b1 x y",
        "BLPOP nokey b1 0",
        "BRPOP b1 nokey 1.5",
        "BLPOP b1 abc",
        "BLPOP b1 -1",
        "BLPOP b1 1e300",
        "BLPOP b1 nan",
        "BLPOP s 0",
        "RPUSH b2 1 2 3",
        "BLMPOP 0 2 nokey b2 LEFT COUNT 2",
        "BLMPOP abc 2 nokey b2 LEFT",
        "BLMPOP 0 0 b2 LEFT",
        "BLMPOP -1 1 b2 LEFT",
        "BLMOVE b2 b3 RIGHT LEFT 0",
        "BLMOVE b3 b2 RIGHT LEFT abc",
        "BLMOVE b3 b2 UP LEFT abc",
        "BRPOPLPUSH b3 b2 0",
        "BRPOPLPUSH b3 b2 -5",
        "BLMOVE s b2 LEFT LEFT 0",
        "LRANGE b2 0 -1",
        // Arity.
        "LPUSH l",
        "LLEN",
        "LINDEX l",
        "LRANGE l 0",
        "LSET l 0",
        "LINSERT l BEFORE a",
        "LMOVE a b LEFT",
        "BLPOP l",
        "BLMPOP 0 1",
        "LMPOP 1 l",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Encodings and DUMP bytes as a list grows past the listpack limits and shrinks back.
    lines.push("DEL big".into());
    for i in 0..40 {
        lines.push(format!("RPUSH big {}", format!("v{i:03}-").repeat(40)));
        if i % 8 == 0 {
            lines.push("OBJECT ENCODING big".into());
        }
    }
    lines.push("OBJECT ENCODING big".into());
    lines.push("DUMP big".into());
    lines.push("LINSERT big BEFORE v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020-v020- mid".into());
    lines.push("LINDEX big 20".into());
    lines.push("DUMP big".into());
    lines.push(format!("LSET big 5 {}", "L".repeat(9000)));
    lines.push("DUMP big".into());
    lines.push("LTRIM big 0 9".into());
    lines.push("OBJECT ENCODING big".into());
    lines.push("LTRIM big 0 3".into());
    lines.push("OBJECT ENCODING big".into());
    lines.push("DUMP big".into());
    lines.push("CONFIG SET list-max-listpack-size 4".into());
    lines.push("RPUSH small 1 2 3 4".into());
    lines.push("OBJECT ENCODING small".into());
    lines.push("RPUSH small 5".into());
    lines.push("OBJECT ENCODING small".into());
    lines.push("DUMP small".into());
    lines.push("RPOP small 3".into());
    lines.push("OBJECT ENCODING small".into());
    lines.push("CONFIG SET list-max-listpack-size -2".into());
    lines
}

#[test]
fn list_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// SORT and SORT_RO over lists: numeric and ALPHA, BY and GET patterns (`#`, strings, hash
/// fields, missing keys, a constant BY), LIMIT's edges, STORE (and its empty result), and the errors.
fn sort_lines() -> Vec<&'static str> {
    vec![
        "RPUSH n 3 1 2 10 -5 2.5 1e3",
        "SORT n",
        "SORT n DESC",
        "SORT n ALPHA",
        "SORT n ALPHA DESC",
        "SORT n LIMIT 1 3",
        "SORT n LIMIT -5 2",
        "SORT n LIMIT 2 -1",
        "SORT n LIMIT 100 5",
        "SORT n LIMIT 0 0",
        "SORT n LIMIT a 1",
        "SORT n LIMIT 1",
        "SORT n BY nosort",
        "SORT n BY nosort DESC",
        "SORT n BY nosort LIMIT 1 2",
        "SORT n BY nosort DESC LIMIT 1 2",
        "RPUSH w a b c d",
        "SORT w",
        "SORT w ALPHA",
        "MSET wa 3 wb 1 wc 2 oa x",
        "SORT w BY w* GET #",
        "SORT w BY w* GET # GET o* GET nosuch*",
        "SORT w BY w* ALPHA DESC",
        "SORT w BY o* ALPHA",
        "SORT w BY o*",
        "SORT w BY w*->f",
        "HSET ha f 9 g x",
        "HSET hb f 1",
        "HSET hc f 5 g z",
        "SORT w BY h*->f GET # GET h*->g GET h*->",
        "SORT w BY h*->f DESC GET h*->f",
        "SORT w BY h*->g ALPHA GET h*->g",
        "SORT w BY h*-> GET ha->f",
        "SORT w BY wa->f",
        "SORT w GET",
        "SORT w FOO",
        "SORT w STORE",
        "SORT w ALPHA STORE dst",
        "LRANGE dst 0 -1",
        "OBJECT ENCODING dst",
        "SORT w ALPHA GET o* STORE dst",
        "LRANGE dst 0 -1",
        "SORT nosuch STORE dst",
        "EXISTS dst",
        "SORT nosuch STORE dst",
        "SORT nosuch",
        "SORT w ALPHA STORE s",
        "TYPE s",
        "SET str v",
        "SORT str",
        "SORT str LIMIT x 1",
        "SORT_RO w ALPHA",
        "SORT_RO w ALPHA STORE dst",
        "SORT_RO n LIMIT 0 2",
        "SORT",
        "SORT_RO",
    ]
}

#[test]
fn sort_matches_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = sort_lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! The string commands against Redis 8.8 over the wire, RESP2 and RESP3: SET's options,
//! SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX, MGET, MSET, MSETNX, APPEND, SETRANGE,
//! GETRANGE, SUBSTR, INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT, LCS, DIGEST, DELEX and MSETEX, their replies and their
//! errors in Redis's order, byte for byte. Times are read back only where they do not depend
//! on the instant (absolute times, or TTL in whole seconds).

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<&'static str> {
    vec![
        "XADD s 1-1 f v",
        // SET's options: the words first, then the time, then the type.
        "SET k v NX NX",
        "SET k v XX GET",
        "SET k w EX 100 EX 200",
        "TTL k",
        "SET k v EX abc FOO",
        "SET k v EX 10 PX 10",
        "SET k v KEEPTTL EX 10",
        "SET k v PERSIST",
        "SET k v EX",
        "SET k v EX 0",
        "SET k v PX 9223372036854775807",
        "SET k v EX 9223372036854775807",
        "SET s v GET",
        "SET s v NX GET",
        "SET k x NX GET",
        "SET nokey x XX GET",
        "SET nokey x XX",
        // SETNX, SETEX, PSETEX.
        "SETNX k v",
        "SETNX k2 v",
        "GET k2",
        "SETEX k3 100 v3",
        "TTL k3",
        "SETEX k3 0 v3",
        "PSETEX k3 -1 v3",
        "SETEX k3 abc v3",
        "PSETEX k3 100000 v4",
        "TTL k3",
        "GET k3",
        "SETEX s 10 v",
        "TYPE s",
        "SETEX k3 10",
        // GETSET, GETDEL.
        "GETSET k3 v5",
        "TTL k3",
        "GETSET nokey v",
        "GETDEL nokey",
        "GETSET s v",
        "GETDEL s",
        "GETDEL k3",
        "EXISTS k3",
        // GETEX.
        "SET g v",
        "GETEX g",
        "GETEX g EX 100",
        "TTL g",
        "GETEX g PERSIST",
        "TTL g",
        "GETEX g PX 100000 PERSIST",
        "GETEX g PERSIST EX 10",
        "GETEX g KEEPTTL",
        "GETEX g NX",
        "GETEX g EX abc",
        "GETEX nokey EX abc",
        "GETEX g EX -1",
        "GETEX g EXAT 4102444800",
        "EXPIRETIME g",
        "GETEX s EX 10",
        "GETEX g EXAT 1",
        "EXISTS g",
        // MGET, MSET, MSETNX.
        "MSET a 1 b 2 c 3",
        "MGET a b c nokey s",
        "MSET a 1 b",
        "MSETNX a 1 d 4",
        "EXISTS d",
        "MSETNX d 4 e 5",
        "MGET d e",
        "MSETNX d",
        "MGET",
        // APPEND, SETRANGE, GETRANGE, SUBSTR, STRLEN.
        "APPEND ap Hello",
        "APPEND ap _World",
        "GET ap",
        "APPEND s x",
        "GETRANGE ap 0 4",
        "GETRANGE ap -5 -1",
        "GETRANGE ap -1 -5",
        "GETRANGE ap 5 3",
        "GETRANGE ap 0 -100",
        "GETRANGE ap -100 100",
        "GETRANGE ap 0 9223372036854775807",
        "SUBSTR ap 1 3",
        "GETRANGE nokey 0 -1",
        "GETRANGE ap a 1",
        "GETRANGE nokey a 1",
        "GETRANGE s 0 1",
        "SETRANGE ap 6 Redis",
        "GET ap",
        "SETRANGE ap 20 x",
        "STRLEN ap",
        "GETRANGE ap 10 20",
        "SETRANGE ap 0 ''",
        "SETRANGE sr 3 ''",
        "EXISTS sr",
        "SETRANGE sr 3 x",
        "GET sr",
        "SETRANGE sr -1 x",
        "SETRANGE sr abc x",
        "SETRANGE s 0 x",
        "SETRANGE s -1 x",
        "SETRANGE sr 536870911 xy",
        "SETRANGE nokey 536870912 x",
        "SETRANGE nokey 9223372036854775807 x",
        // INCR, DECR, INCRBY, DECRBY.
        "SET n 10",
        "INCRBY n 5",
        "DECR n",
        "DECRBY n 20",
        "DECR newn",
        "INCRBY n abc",
        "INCRBY s abc",
        "DECRBY n -9223372036854775808",
        "DECRBY s -9223372036854775808",
        "INCRBY n 9223372036854775807",
        "INCRBY n 9223372036854775800",
        "DECRBY ap 1",
        "INCRBY s 1",
        "SET big 9223372036854775807",
        "INCR big",
        "SET small -9223372036854775808",
        "DECR small",
        "SET sp 1x",
        "INCR sp",
        // INCRBYFLOAT.
        "SET f 10.50",
        "INCRBYFLOAT f 0.1",
        "INCRBYFLOAT f -5",
        "INCRBYFLOAT f 5.0e3",
        "INCRBYFLOAT f 2.0e2",
        "INCRBYFLOAT nf 3",
        "INCRBYFLOAT nf -3",
        "INCRBYFLOAT nf -1.5",
        "INCRBYFLOAT f abc",
        "INCRBYFLOAT ap 1",
        "INCRBYFLOAT s abc",
        "INCRBYFLOAT f inf",
        "INCRBYFLOAT f nan",
        "INCRBYFLOAT f 1x",
        "INCRBYFLOAT f 1e400",
        "INCRBYFLOAT f 1.1",
        "INCRBYFLOAT f 3.14159265358979323846",
        "INCRBYFLOAT f -1e-10",
        "INCRBYFLOAT f 1e400",
        "INCRBYFLOAT f 1e4932",
        "INCRBYFLOAT f 1e5000",
        "INCRBYFLOAT f -inf",
        "INCRBYFLOAT f .5",
        "INCRBYFLOAT f 5.",
        "INCRBYFLOAT f 1e",
        "SET f -0",
        "INCRBYFLOAT f -0",
        "SET f 7",
        "INCRBYFLOAT f -7.0000000000000000001",
        "SET f inf",
        "INCRBYFLOAT f abc",
        "INCRBYFLOAT f 1",
        "GET f",
        // LCS.
        "MSET l1 ohmytext l2 mynewtext",
        "LCS l1 l2",
        "LCS l1 l2 LEN",
        "LCS l1 l2 IDX",
        "LCS l1 l2 IDX MINMATCHLEN 4 WITHMATCHLEN",
        "LCS l1 l2 IDX MINMATCHLEN -4 WITHMATCHLEN",
        "LCS l1 l2 idx withmatchlen",
        "LCS l1 nokey IDX",
        "LCS nokey nokey",
        "LCS l1 l2 LEN IDX",
        "LCS l1 l2 MINMATCHLEN",
        "LCS l1 l2 MINMATCHLEN abc",
        "LCS l1 l2 FOO",
        "LCS l1 s FOO",
        "LCS s l1 LEN IDX",
        "MSET l3 abcabc l4 bcabca",
        "LCS l3 l4 IDX WITHMATCHLEN",
        "LCS l4 l3 IDX",
        "LCS l1",
        // DIGEST, DELEX, SET's conditions (Redis 8.4+).
        "SET d hello",
        "DIGEST d",
        "DIGEST nokey",
        "DIGEST s",
        "SET dn 12345",
        "DIGEST dn",
        "SET d world IFEQ nothello",
        "SET d world IFEQ hello",
        "GET d",
        "SET d again IFNE world",
        "SET d again IFNE other GET",
        "SET d x IFDEQ 9555E8555C62DCFD",
        "SET d x IFDEQ short",
        "SET nokey x IFDEQ short",
        "SET nokey x IFEQ a",
        "SET nokey x IFNE a",
        "DEL nokey",
        "SET nokey x IFDNE 0000000000000000",
        "DEL nokey",
        "SET d hello",
        "SET d x IFDNE 9555e8555c62dcfd",
        "SET d x IFDEQ 9555e8555c62dcfd EX 100",
        "TTL d",
        "SET s x IFEQ a",
        "SET s x IFEQ a GET",
        "SET d x IFEQ a IFNE b",
        "SET d x IFEQ a IFEQ x",
        "SET d x XX IFEQ a",
        "SET d x IFEQ a NX",
        "SET d x NX IFEQ a",
        "SET d x IFEQ",
        "GET d",
        "DELEX d IFEQ nope",
        "DELEX d IFNE x",
        "DELEX d IFEQ x",
        "EXISTS d",
        "SET d hello",
        "DELEX d IFDEQ 9555e8555c62dcfd",
        "SET d hello",
        "DELEX d IFDNE 9555e8555c62dcfd",
        "DELEX d IFDNE abc",
        "DELEX d IFXX a",
        "DELEX d IFEQ",
        "DELEX d IFEQ a b",
        "DELEX nokey IFXX a",
        "DELEX s IFEQ a",
        "DELEX d",
        "DELEX nokey",
        "DELEX",
        "DIGEST",
        // MSETEX (Redis 8.4+).
        "MSETEX 2 m1 a m2 b",
        "MGET m1 m2",
        "MSETEX 2 m1 a m2 b EX 100",
        "TTL m2",
        "MSETEX 1 m1 c KEEPTTL",
        "TTL m1",
        "GET m1",
        "MSETEX 2 m1 a m3 b NX",
        "EXISTS m3",
        "MSETEX 2 m1 a m3 b XX",
        "MSETEX 1 m3 b NX PXAT 4102444800000",
        "PEXPIRETIME m3",
        "MSETEX 2 m1 x m3 y XX EX 10 EX 20",
        "TTL m3",
        "MSETEX 0 m1 a",
        "MSETEX -1 m1 a",
        "MSETEX abc m1 a",
        "MSETEX 2 m1 a",
        "MSETEX 3 m1 a m2 b",
        "MSETEX 1 m1 a GET",
        "MSETEX 1 m1 a NX XX",
        "MSETEX 1 m1 a EX abc",
        "MSETEX 1 m1 a EX 0",
        "MSETEX 1 m1 a KEEPTTL EX 1",
        "MSETEX 1 m1 a PERSIST",
        "MSETEX 1 m1 a IFEQ a",
        "MSETEX 1 s a",
        "TYPE s",
        "MSETEX 1 m1",
        // Arity.
        "SETNX k",
        "GETDEL",
        "GETSET k",
        "APPEND k",
        "SETRANGE k 0",
        "GETRANGE k 0",
        "INCRBY k",
        "DECR",
        "INCRBYFLOAT k",
    ]
}

/// Histories whose OBJECT ENCODING (int, embstr, raw) Redis decides by how the value was
/// made, by its length and its key's.
fn encoding_lines() -> Vec<&'static str> {
    let mut lines = vec![
        "SET e 123",
        "OBJECT ENCODING e",
        "SET e -9223372036854775808",
        "OBJECT ENCODING e",
        "SET e 9223372036854775808",
        "OBJECT ENCODING e",
        "SET e 0123",
        "OBJECT ENCODING e",
        "SET e +1",
        "OBJECT ENCODING e",
        "SET e -0",
        "OBJECT ENCODING e",
        "SET e ''",
        "OBJECT ENCODING e",
        "SET e 12",
        "APPEND e 3",
        "OBJECT ENCODING e",
        "GET e",
        "INCR e",
        "OBJECT ENCODING e",
        "APPEND e2 12",
        "OBJECT ENCODING e2",
        "APPEND e3 ab",
        "OBJECT ENCODING e3",
        "SETRANGE e4 0 ab",
        "OBJECT ENCODING e4",
        "SET e5 abc",
        "SETRANGE e5 0 x",
        "OBJECT ENCODING e5",
        "INCRBYFLOAT e6 3",
        "OBJECT ENCODING e6",
        "INCRBYFLOAT e6 1.5",
        "OBJECT ENCODING e6",
        "INCR e7",
        "OBJECT ENCODING e7",
        "MSET e8 5 e9 five",
        "OBJECT ENCODING e8",
        "OBJECT ENCODING e9",
        "GETSET e8 x",
        "OBJECT ENCODING e8",
        "SETEX e10 100 42",
        "OBJECT ENCODING e10",
        "OBJECT ENCODING nokey",
        "SET e11 12",
        "GETEX e11 EX 100",
        "OBJECT ENCODING e11",
        "RENAME e5 e12",
        "OBJECT ENCODING e12",
    ];
    // 44 and 45 bytes under a short key, and a value that fits a cache line only with a
    // short key, through SET and through a RENAME.
    lines.extend([
        "SET a aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "OBJECT ENCODING a",
        "SET a aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "OBJECT ENCODING a",
        "SET b bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "OBJECT ENCODING b",
        "SET bb bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        "OBJECT ENCODING bb",
        "SET keykeykeykeykeykeykeykey vvvvvvvvvvvvvvvvvvvvvvvvvvvv",
        "OBJECT ENCODING keykeykeykeykeykeykeykey",
        "RENAME keykeykeykeykeykeykeykey k",
        "OBJECT ENCODING k",
        "SET k vvvvvvvvvvvvvvvvvvvvvvvvvvvv",
        "RENAME k keykeykeykeykeykeykeykey",
        "OBJECT ENCODING keykeykeykeykeykeykeykey",
        "SET big 12345678901234567890",
        "OBJECT ENCODING big",
        "DUMP e",
        "DUMP e6",
        "DUMP big",
    ]);
    lines
}

#[test]
fn string_encodings_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            encoding_lines()
                .iter()
                .try_for_each(|l| differ.run(&argv(l)).map(drop))
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Splits a line on spaces; `''` is the empty argument.
fn argv(line: &str) -> Vec<Vec<u8>> {
    let parts: Vec<&str> = line
        .split(' ')
        .map(|w| if w == "''" { "" } else { w })
        .collect();
    words(&parts)
}

#[test]
fn string_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            lines()
                .iter()
                .try_for_each(|l| differ.run(&argv(l)).map(drop))
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

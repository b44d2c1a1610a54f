//! The string commands against Redis 8.8 over the wire, RESP2 and RESP3: SET's options,
//! SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX, MGET, MSET, MSETNX, APPEND, SETRANGE,
//! GETRANGE, SUBSTR, INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT and LCS, their replies and their
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

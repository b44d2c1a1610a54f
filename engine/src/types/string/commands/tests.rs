//! The string commands through [`Keyspace::execute`]: replies, Redis's errors, and their
//! effects (the forms they propagate, the events they fire, the changes they count).

use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;

use crate::clock::ManualClock;
use crate::config::Config;
use crate::effects_fixture::{Fixture, NOW_MS};
use crate::keyspace::{Db, Keyspace, Value};
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

#[test]
fn set_and_get_reply_as_redis() {
    let f = Fixture::new();
    assert_eq!(f.run("GET k"), Ok(Reply::Null));
    assert_eq!(f.run("SET k v"), Ok(Reply::OK));
    assert_eq!(f.run("GET k"), Ok(bulk("v")));
    assert_eq!(f.run("SET k w NX"), Ok(Reply::Null));
    assert_eq!(f.run("SET k w XX GET"), Ok(bulk("v")));
    assert_eq!(f.run("SET n w NX GET"), Ok(Reply::Null));
    assert_eq!(f.run("STRLEN n"), Ok(Reply::Int(1)));
    assert_eq!(f.run("STRLEN missing"), Ok(Reply::Int(0)));
    assert_eq!(f.run("XADD s * f v").map(|_| ()), Ok(()));
    let wrongtype = Err(crate::Error::WrongType.to_string());
    assert_eq!(f.run("GET s"), wrongtype);
    assert_eq!(f.run("STRLEN s"), wrongtype);
    assert_eq!(f.run("SET s v GET"), wrongtype);
    assert_eq!(f.run("INCR s"), wrongtype);
    // Without GET, SET replaces a key of another type.
    assert_eq!(f.run("SET s v"), Ok(Reply::OK));
    assert_eq!(f.run("GET s"), Ok(bulk("v")));
}

#[test]
fn set_checks_options_in_redis_order_and_changes_nothing_on_error() {
    let f = Fixture::new();
    let syntax = Err("ERR syntax error".to_string());
    assert_eq!(f.run("SET k v NX XX"), syntax);
    assert_eq!(f.run("SET k v EX 1 PX 1"), syntax);
    assert_eq!(f.run("SET k v KEEPTTL EX 1"), syntax);
    assert_eq!(f.run("SET k v EX"), syntax);
    assert_eq!(f.run("SET k v FOO"), syntax);
    assert_eq!(
        f.run("SET k v EX x"),
        Err("ERR value is not an integer or out of range".to_string())
    );
    let invalid = Err("ERR invalid expire time in 'set' command".to_string());
    assert_eq!(f.run("SET k v EX 0"), invalid);
    assert_eq!(f.run("SET k v PX -1"), invalid);
    assert_eq!(f.run("SET k v EX 9223372036854775807"), invalid);
    assert_eq!(f.run("GET k"), Ok(Reply::Null));
    assert!(f.propagated().is_empty());
    assert_eq!(f.ks.dirty(), 0);
}

#[test]
fn set_propagates_redis_forms() {
    let f = Fixture::new();
    f.run("SET k v").unwrap();
    f.run("set k v ex 10").unwrap();
    f.run("SET k v NX").unwrap();
    f.run("SET k v XX PX 500").unwrap();
    f.run("SET k v GET").unwrap();
    f.run("SET k v KEEPTTL GET").unwrap();
    f.run("SET k v PXAT 2000000 GET").unwrap();
    f.run("SET k v EXAT 3000").unwrap();
    assert_eq!(
        f.propagated(),
        [
            "SET k v",
            "set k v PXAT 1010000",
            "SET k v PXAT 1000500",
            "SET k v",
            "SET k v KEEPTTL",
            "SET k v PXAT 2000000 GET",
            "SET k v PXAT 3000000",
        ]
    );
    assert_eq!(f.ks.dirty(), 7);
    // An absolute time already past deletes the old key only.
    f.run("SET k v PXAT 1").unwrap();
    f.run("SET k v EXAT 1").unwrap();
    assert_eq!(f.propagated(), ["DEL k"]);
    assert_eq!(f.ks.dirty(), 8);
    assert_eq!(f.run("GET k"), Ok(Reply::Null));
}

#[test]
fn set_fires_redis_events() {
    let f = Fixture::new();
    f.run("SET k v").unwrap();
    assert_eq!(f.events(), ["new", "set"]);
    f.run("SET k v EX 10").unwrap();
    assert_eq!(f.events(), ["overwritten", "set", "expire"]);
    f.run("SET k v NX").unwrap();
    assert!(f.events().is_empty());
    f.run("SET k v PXAT 1").unwrap();
    assert_eq!(f.events(), ["del"]);
}

#[test]
fn keepttl_keeps_the_time_and_a_plain_set_clears_it() {
    let f = Fixture::new();
    f.run("SET k v PX 100").unwrap();
    f.run("SET k w KEEPTTL").unwrap();
    let expiry = |ks: &Keyspace| {
        let mut at = None;
        ks.dirty_with(|dbs: &[Db]| at = dbs[0].expiry(b"k"));
        at
    };
    assert_eq!(expiry(&f.ks), Some(NOW_MS + 100));
    f.run("SET k w").unwrap();
    assert_eq!(expiry(&f.ks), None);
}

#[test]
fn incr_counts_and_propagates_verbatim() {
    let f = Fixture::new();
    assert_eq!(f.run("INCR n"), Ok(Reply::Int(1)));
    assert_eq!(f.run("incr n"), Ok(Reply::Int(2)));
    assert_eq!(f.events(), ["new", "incrby", "incrby"]);
    assert_eq!(f.propagated(), ["INCR n", "incr n"]);
    assert_eq!(f.ks.dirty(), 2);
    f.run("SET n abc").unwrap();
    assert_eq!(
        f.run("INCR n"),
        Err("ERR value is not an integer or out of range".to_string())
    );
    f.run("SET n 9223372036854775807").unwrap();
    assert_eq!(
        f.run("INCR n"),
        Err("ERR increment or decrement would overflow".to_string())
    );
    assert_eq!(f.run("GET n"), Ok(bulk("9223372036854775807")));
    assert_eq!(f.ks.dirty(), 4);
}

/// The keyspace's strings and their times, as text.
fn state(ks: &Keyspace) -> String {
    let mut out = String::new();
    ks.dirty_with(|dbs: &[Db]| {
        let mut keys: Vec<_> = dbs[0].keys().cloned().collect();
        keys.sort();
        for key in keys {
            if let Some(Value::String(s)) = dbs[0].get(&key) {
                out.push_str(&format!("{key:?}={s:?} {:?}\n", dbs[0].expiry(&key)));
            }
        }
    });
    out
}

fn op() -> impl Strategy<Value = String> {
    let key = prop_oneof![Just("a"), Just("b")];
    let option = prop_oneof![
        Just(""),
        Just(" NX"),
        Just(" XX"),
        Just(" GET"),
        Just(" KEEPTTL"),
        Just(" EX 5"),
        Just(" PX 300"),
        Just(" EXAT 2000"),
        Just(" PXAT 999999"),
        Just(" PXAT 1500000 GET"),
        Just(" NX EX 7"),
    ];
    prop_oneof![
        (key.clone(), 0u8..3, option).prop_map(|(k, v, o)| format!("SET {k} {v}{o}")),
        key.clone().prop_map(|k| format!("INCR {k}")),
        key.prop_map(|k| format!("GET {k}")),
    ]
}

proptest! {
    #[test]
    fn replaying_the_propagated_forms_rebuilds_the_strings(ops in prop::collection::vec(op(), 1..40)) {
        let f = Fixture::new();
        for line in &ops {
            let _ = f.run(line);
        }
        let replica = Fixture::new();
        // The forms are absolute: replayed later, they give the same state.
        let later = Keyspace::with_databases(
            Arc::new(ManualClock::new(NOW_MS + 1)),
            Arc::new(Config::default()),
            1,
        );
        for form in f.propagated() {
            let argv: Vec<&str> = form.split(' ').collect();
            replica.ks.execute(&argv).unwrap();
            later.execute(&argv).unwrap();
        }
        prop_assert_eq!(state(&f.ks), state(&replica.ks));
        prop_assert_eq!(state(&f.ks), state(&later));
    }
}

#[test]
fn the_newer_string_commands_propagate_redis_forms_and_fire_redis_events() {
    let f = Fixture::new();
    let at = NOW_MS + 100_000;
    assert_eq!(f.run("SETEX k 100 v"), Ok(Reply::OK));
    assert_eq!(f.propagated(), [format!("SET k v PXAT {at}")]);
    assert_eq!(f.events(), ["new", "set", "expire"]);
    assert_eq!(f.run("SETNX k w"), Ok(Reply::Int(0)));
    assert!(f.propagated().is_empty());
    assert_eq!(f.run("GETSET k w"), Ok(bulk("v")));
    assert_eq!(f.propagated(), ["SET k w"]);
    assert_eq!(f.events(), ["overwritten", "set"]);
    assert_eq!(f.run("GETEX k PX 5000"), Ok(bulk("w")));
    assert_eq!(f.propagated(), [format!("PEXPIREAT k {}", NOW_MS + 5000)]);
    assert_eq!(f.run("GETEX k PERSIST"), Ok(bulk("w")));
    assert_eq!(f.propagated(), ["PERSIST k"]);
    assert_eq!(f.events(), ["expire", "persist"]);
    assert_eq!(f.run("GETEX k PERSIST"), Ok(bulk("w")));
    assert!(f.propagated().is_empty());
    assert_eq!(f.run("GETDEL k"), Ok(bulk("w")));
    assert_eq!(f.propagated(), ["DEL k"]);
    assert_eq!(f.events(), ["del"]);
    assert_eq!(f.run("SET f 10.50 EXAT 4102444800"), Ok(Reply::OK));
    f.propagated();
    assert_eq!(f.run("INCRBYFLOAT f 0.1"), Ok(bulk("10.6")));
    assert_eq!(f.propagated(), ["SET f 10.6 KEEPTTL"]);
    assert_eq!(f.run("APPEND a x"), Ok(Reply::Int(1)));
    assert_eq!(f.run("SETRANGE a 2 y"), Ok(Reply::Int(3)));
    assert_eq!(f.run("GET a"), Ok(bulk("x\0y")));
    assert_eq!(f.propagated(), ["APPEND a x", "SETRANGE a 2 y"]);
    assert_eq!(f.run("MSETEX 1 m v EX 10"), Ok(Reply::Int(1)),);
    assert_eq!(
        f.propagated(),
        [format!("MSETEX 1 m v PXAT {}", NOW_MS + 10_000)]
    );
    assert_eq!(f.run("DELEX m IFEQ v"), Ok(Reply::Int(1)));
    assert_eq!(f.propagated(), ["DEL m"]);
}

#[test]
fn the_newer_string_commands_change_nothing_on_error() {
    let f = Fixture::new();
    assert_eq!(f.run("SET k v"), Ok(Reply::OK));
    f.propagated();
    f.events();
    for line in [
        "MSET a 1 b",
        "MSETEX 2 a 1",
        "MSETEX 1 a 1 EX 0",
        "SETEX k 0 v",
        "SETRANGE k -1 x",
        "SETRANGE k 536870912 x",
        "APPEND nokey",
        "INCRBYFLOAT k 1",
        "DECRBY k -9223372036854775808",
        "GETEX k EX abc",
        "SET k x IFDEQ short",
        "DELEX k IFXX a",
    ] {
        assert!(f.run(line).is_err(), "{line} should fail");
    }
    assert!(f.propagated().is_empty());
    assert!(f.events().is_empty());
    assert_eq!(f.run("GET k"), Ok(bulk("v")));
    assert_eq!(f.run("EXISTS a"), Ok(Reply::Int(0)));
}

#[test]
fn increx_propagates_a_set_and_fires_redis_events() {
    let f = Fixture::new();
    let pair = |a, b| Ok(Reply::Array(vec![Reply::Int(a), Reply::Int(b)]));
    assert_eq!(f.run("INCREX n BYINT 5 EX 10"), pair(5, 5));
    assert_eq!(
        f.propagated(),
        [format!("SET n 5 PXAT {}", NOW_MS + 10_000)]
    );
    assert_eq!(f.events(), ["new", "incrby", "expire"]);
    assert_eq!(f.run("INCREX n EX 20 ENX"), pair(6, 1));
    assert_eq!(f.propagated(), ["SET n 6 KEEPTTL"]);
    assert_eq!(f.events(), ["incrby"]);
    assert_eq!(f.run("INCREX n PERSIST"), pair(7, 1));
    assert_eq!(f.propagated(), ["SET n 7"]);
    assert_eq!(f.events(), ["incrby", "persist"]);
    // Refused past a bound: nothing changes.
    assert_eq!(f.run("INCREX n UBOUND 7"), pair(7, 0));
    assert!(f.propagated().is_empty());
    assert!(f.events().is_empty());
    assert_eq!(
        f.run("INCREX n BYFLOAT 0.5"),
        Ok(Reply::Array(vec![
            Reply::Double(Bytes::from_static(b"7.5")),
            Reply::Double(Bytes::from_static(b"0.5")),
        ]))
    );
    assert_eq!(f.propagated(), ["SET n 7.5 KEEPTTL"]);
    assert_eq!(f.events(), ["incrbyfloat"]);
    assert!(f.run("INCREX n BYFLOAT 1 EXAT 1").is_ok());
    assert_eq!(f.run("EXISTS n"), Ok(Reply::Int(0)));
    assert_eq!(f.propagated(), ["DEL n"]);
    assert_eq!(f.events(), ["del"]);
}

#[test]
fn bitmap_writes_fire_redis_events_only_when_they_change_something() {
    let f = Fixture::new();
    assert_eq!(f.run("SETBIT b 7 1"), Ok(Reply::Int(0)));
    assert_eq!(f.events(), ["new", "setbit"]);
    assert_eq!(f.propagated(), ["SETBIT b 7 1"]);
    assert_eq!(f.run("SETBIT b 7 1"), Ok(Reply::Int(1)));
    assert!(f.events().is_empty());
    assert!(f.propagated().is_empty());
    assert_eq!(f.run("BITFIELD b SET u8 0 2 GET u8 0").map(|_| ()), Ok(()));
    assert_eq!(f.events(), ["setbit"]);
    assert_eq!(f.propagated(), ["BITFIELD b SET u8 0 2 GET u8 0"]);
    assert_eq!(
        f.run("BITFIELD b OVERFLOW FAIL INCRBY u8 0 300")
            .map(|_| ()),
        Ok(())
    );
    assert!(f.events().is_empty());
    assert_eq!(f.run("BITOP NOT d b"), Ok(Reply::Int(1)));
    assert_eq!(f.events(), ["new", "set"]);
    assert_eq!(f.propagated(), ["BITOP NOT d b"]);
    assert_eq!(f.run("BITOP AND d nokey"), Ok(Reply::Int(0)));
    assert_eq!(f.events(), ["del"]);
    assert_eq!(f.propagated(), ["BITOP AND d nokey"]);
    assert_eq!(f.run("BITOP AND d nokey"), Ok(Reply::Int(0)));
    assert!(f.propagated().is_empty());
}

#[test]
fn hyperloglog_commands_fire_redis_events() {
    let f = Fixture::new();
    assert_eq!(f.run("PFADD h a b"), Ok(Reply::Int(1)));
    assert_eq!(f.events(), ["new", "pfadd"]);
    assert_eq!(f.propagated(), ["PFADD h a b"]);
    assert_eq!(f.run("PFADD h a"), Ok(Reply::Int(0)));
    assert!(f.events().is_empty());
    assert!(f.propagated().is_empty());
    // The first count caches the estimate: a change without an event.
    assert_eq!(f.run("PFCOUNT h"), Ok(Reply::Int(2)));
    assert!(f.events().is_empty());
    assert_eq!(f.propagated(), ["PFCOUNT h"]);
    assert_eq!(f.run("PFCOUNT h"), Ok(Reply::Int(2)));
    assert!(f.propagated().is_empty());
    assert_eq!(f.run("PFMERGE m h"), Ok(Reply::OK));
    assert_eq!(f.events(), ["new", "pfadd"]);
    assert_eq!(f.propagated(), ["PFMERGE m h"]);
    assert_eq!(f.run("PFDEBUG TODENSE m"), Ok(Reply::Int(1)));
    assert_eq!(f.propagated(), ["PFDEBUG TODENSE m"]);
    assert_eq!(f.run("PFCOUNT m h nokey"), Ok(Reply::Int(2)));
    assert_eq!(f.run("SET s hello"), Ok(Reply::OK));
    assert_eq!(
        f.run("PFADD s a"),
        Err("WRONGTYPE Key is not a valid HyperLogLog string value.".to_string())
    );
}

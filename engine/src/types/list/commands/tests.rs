//! The list commands through [`crate::Keyspace::execute`]: their effects (the forms they
//! propagate, the events they fire, the changes they count), that an error changes nothing,
//! and the blocking pops: FIFO service, wake-ups by pushes and moves, timeouts by the clock,
//! MULTI's non-blocking replies, a key of another type.

use std::sync::Arc;

use bytes::Bytes;

use crate::blocking::Parker;
use crate::effects_fixture::Fixture;
use crate::keyspace::{BlockedHandle, Execution};
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn bulks(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| bulk(s)).collect())
}

#[test]
fn writes_propagate_fire_and_count_as_redis() {
    let f = Fixture::new();
    assert_eq!(f.run("RPUSH l a b c"), Ok(Reply::Int(3)));
    assert_eq!(f.propagated(), ["RPUSH l a b c"]);
    assert_eq!(f.events(), ["new", "rpush"]);
    assert_eq!(f.ks.dirty(), 3);
    assert_eq!(f.run("LPUSHX nokey a"), Ok(Reply::Int(0)));
    assert!(f.propagated().is_empty());
    assert_eq!(f.run("LPOP l 2"), Ok(bulks(&["a", "b"])));
    assert_eq!(f.propagated(), ["LPOP l 2"]);
    assert_eq!(f.events(), ["lpop"]);
    assert_eq!(f.ks.dirty(), 5);
    assert_eq!(f.run("RPOP l"), Ok(bulk("c")));
    assert_eq!(f.events(), ["rpop", "del"]);
    assert_eq!(f.run("EXISTS l"), Ok(Reply::Int(0)));
    f.propagated();
    f.run("RPUSH m 1 2 3").unwrap();
    f.run("RPUSH n 4").unwrap();
    f.propagated();
    f.events();
    assert_eq!(
        f.run("LMPOP 2 nokey m RIGHT COUNT 5"),
        Ok(Reply::Array(vec![bulk("m"), bulks(&["3", "2", "1"])]))
    );
    assert_eq!(f.propagated(), ["RPOP m 3"]);
    assert_eq!(f.events(), ["rpop", "del"]);
    assert_eq!(f.run("LMOVE n d LEFT RIGHT"), Ok(bulk("4")));
    assert_eq!(f.propagated(), ["LMOVE n d LEFT RIGHT"]);
    assert_eq!(f.events(), ["new", "rpush", "lpop", "del"]);
    f.run("RPUSH t 1 2 3").unwrap();
    f.propagated();
    f.events();
    assert_eq!(f.run("LTRIM t 0 -1"), Ok(Reply::OK));
    assert!(f.propagated().is_empty());
    assert_eq!(f.events(), ["ltrim"]);
    assert_eq!(f.run("LTRIM t 1 1"), Ok(Reply::OK));
    assert_eq!(f.propagated(), ["LTRIM t 1 1"]);
    assert_eq!(f.run("LREM t 0 9"), Ok(Reply::Int(0)));
    assert_eq!(f.run("LINSERT t BEFORE 9 x"), Ok(Reply::Int(-1)));
    assert_eq!(f.run("LSET t 0 y"), Ok(Reply::OK));
    assert_eq!(f.propagated(), ["LSET t 0 y"]);
}

#[test]
fn errors_change_nothing() {
    let f = Fixture::new();
    f.run("SET s v").unwrap();
    f.run("RPUSH l a").unwrap();
    f.propagated();
    let dirty = f.ks.dirty();
    let wrongtype = Err(crate::Error::WrongType.to_string());
    for line in [
        "LPUSH s a",
        "LMOVE l s LEFT LEFT",
        "LSET l 5 x",
        "LPOP l -1",
        "LMPOP 0 l LEFT",
        "LINSERT l MIDDLE a b",
        "BLPOP l -1",
        "BLMOVE l x LEFT LEFT abc",
    ] {
        assert!(f.run(line).is_err(), "{line}");
    }
    assert_eq!(f.run("LMOVE l s LEFT LEFT"), wrongtype);
    assert_eq!(f.run("LRANGE l 0 -1"), Ok(bulks(&["a"])));
    assert!(f.propagated().is_empty());
    assert_eq!(f.ks.dirty(), dirty);
}

fn block(f: &Fixture, line: &str) -> (BlockedHandle, Arc<Parker>) {
    let parker = Arc::new(Parker::default());
    let argv: Vec<&str> = line.split(' ').collect();
    match f.ks.execute_blocking(&argv, parker.clone()) {
        Execution::Blocked(handle) => (handle, parker),
        Execution::Done(r) => panic!("{line} did not block: {r:?}"),
    }
}

#[test]
fn blocked_pops_are_served_in_blocking_order_and_propagate_as_pops() {
    let f = Fixture::new();
    let (first, _) = block(&f, "BLPOP a b 0");
    let (second, _) = block(&f, "BRPOP b 0");
    let (third, _) = block(&f, "BLMOVE b c LEFT RIGHT 0");
    assert_eq!(f.ks.blocked_count(), 3);
    assert_eq!(f.run("RPUSH b 1 2"), Ok(Reply::Int(2)));
    assert_eq!(
        first.try_take(),
        Some(Ok(Reply::Array(vec![bulk("b"), bulk("1")])))
    );
    assert_eq!(
        second.try_take(),
        Some(Ok(Reply::Array(vec![bulk("b"), bulk("2")])))
    );
    assert_eq!(third.try_take(), None);
    assert_eq!(f.propagated(), ["RPUSH b 1 2", "LPOP b", "RPOP b"]);
    // LMOVE into a waited key wakes its waiter.
    f.run("RPUSH x 9").unwrap();
    assert_eq!(f.run("LMOVE x b LEFT LEFT"), Ok(bulk("9")));
    assert_eq!(third.try_take(), Some(Ok(bulk("9"))));
    assert_eq!(
        f.propagated(),
        ["RPUSH x 9", "LMOVE x b LEFT LEFT", "LMOVE b c LEFT RIGHT"]
    );
    assert_eq!(f.run("LRANGE c 0 -1"), Ok(bulks(&["9"])));
    assert_eq!(f.ks.blocked_count(), 0);
    f.ks.check_invariants().unwrap();
}

#[test]
fn blocked_pops_time_out_by_the_clock_and_ignore_other_types() {
    let f = Fixture::new();
    let (timed, _) = block(&f, "BLPOP k 1.5");
    let (forever, _) = block(&f, "BLMPOP 0 1 k LEFT COUNT 2");
    f.clock.advance(1499);
    assert_eq!(f.ks.expire_blocked(), 0);
    f.clock.advance(1);
    assert_eq!(f.ks.expire_blocked(), 1);
    assert_eq!(timed.try_take(), Some(Ok(Reply::NullArray)));
    // A stream under the key does not serve (nor fail) the list waiter.
    f.run("XADD k * f v").unwrap();
    assert_eq!(forever.try_take(), None);
    f.run("DEL k").unwrap();
    f.run("LPUSH k a b c").unwrap();
    assert_eq!(
        forever.try_take(),
        Some(Ok(Reply::Array(vec![bulk("k"), bulks(&["c", "b"])])))
    );
    assert!(f.propagated().ends_with(&["LPOP k 2".to_string()]));
}

#[test]
fn where_blocking_is_not_allowed_the_replies_are_redis_timeouts() {
    let f = Fixture::new();
    assert_eq!(f.run("BLPOP k 0"), Ok(Reply::NullArray));
    assert_eq!(f.run("BLMPOP 0 1 k LEFT"), Ok(Reply::NullArray));
    assert_eq!(f.run("BLMOVE k d LEFT LEFT 0"), Ok(Reply::Null));
    assert_eq!(f.run("BRPOPLPUSH k d 0"), Ok(Reply::Null));
    assert_eq!(
        f.run("BLPOP k -1"),
        Err("ERR timeout is negative".to_string())
    );
    assert_eq!(
        f.run("BLPOP k x"),
        Err("ERR timeout is not a float or out of range".to_string())
    );
    assert_eq!(
        f.run("BLPOP k 1e300"),
        Err("ERR timeout is out of range".to_string())
    );
}

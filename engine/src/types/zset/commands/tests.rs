//! The sorted set commands through [`Keyspace::execute`](crate::Keyspace::execute): the
//! effects (propagated forms, events, dirty) and the answers that are random (ZRANDMEMBER's
//! shapes), which the differential script leaves out.

use std::sync::Arc;

use crate::blocking::Parker;
use crate::effects_fixture::Fixture;
use crate::keyspace::{BlockedHandle, Execution};
use crate::reply::Reply;

fn len(r: Result<Reply, String>) -> usize {
    match r {
        Ok(Reply::Array(v)) => v.len(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn writes_propagate_and_notify_as_redis() {
    let f = Fixture::new();
    assert_eq!(f.run("ZADD z 1 a 2 b 3 c"), Ok(Reply::Int(3)));
    assert_eq!(f.propagated(), vec!["ZADD z 1 a 2 b 3 c"]);
    assert_eq!(f.events(), vec!["new", "zadd"]);
    assert_eq!(f.run("ZADD z NX 5 a"), Ok(Reply::Int(0)));
    assert!(f.propagated().is_empty());
    assert!(f.events().is_empty());
    f.run("ZINCRBY z 1 a").unwrap();
    assert_eq!(f.events(), vec!["zincr"]);
    f.run("ZMPOP 1 z MAX COUNT 2").unwrap();
    assert_eq!(f.propagated(), vec!["ZINCRBY z 1 a", "ZPOPMAX z 2"]);
    assert_eq!(f.events(), vec!["zpopmax"]);
    f.run("ZREMRANGEBYSCORE z -inf +inf").unwrap();
    assert_eq!(f.events(), vec!["zremrangebyscore", "del"]);
    assert_eq!(f.run("EXISTS z"), Ok(Reply::Int(0)));
    f.run("ZADD z 1 a").unwrap();
    f.run("ZADD y 2 b").unwrap();
    f.propagated();
    f.events();
    assert_eq!(f.run("ZUNIONSTORE d 2 z y"), Ok(Reply::Int(2)));
    assert_eq!(f.propagated(), vec!["ZUNIONSTORE d 2 z y"]);
    assert_eq!(f.events(), vec!["new", "zunionstore"]);
    f.ks.check_invariants().unwrap();
}

#[test]
fn zrandmember_answers_in_redis_shapes() {
    let f = Fixture::new();
    f.run("ZADD z 1 a 2 b 3 c 4 d 5 e").unwrap();
    f.propagated();
    assert_eq!(len(f.run("ZRANDMEMBER z 3")), 3);
    assert_eq!(len(f.run("ZRANDMEMBER z 3 WITHSCORES")), 6);
    assert_eq!(len(f.run("ZRANDMEMBER z -8")), 8);
    assert_eq!(len(f.run("ZRANDMEMBER z 50")), 5);
    let Ok(Reply::Array(distinct)) = f.run("ZRANDMEMBER z 4") else {
        panic!()
    };
    let mut seen: Vec<_> = distinct.iter().map(|r| format!("{r:?}")).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 4);
    assert!(matches!(f.run("ZRANDMEMBER z"), Ok(Reply::Bulk(_))));
    assert!(f.propagated().is_empty());
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
fn a_blocked_pop_is_served_by_a_later_zadd() {
    let f = Fixture::new();
    let (blocked, _) = block(&f, "BZPOPMIN z 0");
    let (other, _) = block(&f, "BZMPOP 0 1 y MAX");
    f.run("LPUSH y 1").unwrap();
    assert_eq!(other.try_take(), None);
    f.run("ZADD z 1 a").unwrap();
    assert_eq!(f.propagated(), ["LPUSH y 1", "ZADD z 1 a", "ZPOPMIN z"]);
    assert_eq!(
        blocked.try_take(),
        Some(Ok(Reply::Array(vec![
            Reply::bulk("z"),
            Reply::bulk("a"),
            Reply::Double(bytes::Bytes::from_static(b"1")),
        ])))
    );
    assert_eq!(f.run("EXISTS z"), Ok(Reply::Int(0)));
}

/// Redis's `setKey` signals nothing ready when it overwrites a key: a STORE onto a key that
/// took another type after the reader blocked leaves the reader waiting (re-run, it would meet
/// WRONGTYPE on its first key); a STORE onto a missing key serves it.
#[test]
fn a_store_over_an_existing_key_leaves_its_blocked_pop_waiting() {
    let f = Fixture::new();
    let (blocked, _) = block(&f, "BZPOPMIN e d 0");
    f.run("SADD e x").unwrap();
    f.run("HSET d f v").unwrap();
    f.run("ZADD src 1 a 2 b").unwrap();
    f.run("ZUNIONSTORE d 1 src").unwrap();
    f.run("ZRANGESTORE d src 0 -1").unwrap();
    assert_eq!(blocked.try_take(), None);
    f.run("DEL e").unwrap();
    f.run("ZRANGESTORE e src 0 0").unwrap();
    assert_eq!(
        blocked.try_take(),
        Some(Ok(Reply::Array(vec![
            Reply::bulk("e"),
            Reply::bulk("a"),
            Reply::Double(bytes::Bytes::from_static(b"1")),
        ])))
    );
}

#[test]
fn zscan_of_a_skiplist_pages_by_count_and_returns_every_member_held_throughout() {
    let f = Fixture::new();
    for i in 0..600 {
        f.run(&format!("ZADD z {i} m{i}")).unwrap();
    }
    let (calls, seen) = f.scan_with_churn(
        "ZSCAN z {} COUNT 20",
        |i| format!("ZADD z {i} m{i}"),
        |i| format!("ZREM z m{i}"),
    );
    assert!(calls > 20, "{calls} calls");
    let scores: std::collections::HashMap<&str, &str> = seen
        .chunks(2)
        .map(|p| (p[0].as_str(), p[1].as_str()))
        .collect();
    for i in 0..600 {
        assert_eq!(
            scores.get(format!("m{i}").as_str()),
            Some(&i.to_string().as_str())
        );
    }
    // A listpack is scanned whole, in order, whatever the cursor.
    f.run("ZADD small 2 b 1 a").unwrap();
    assert_eq!(
        f.scan_call("ZSCAN small 7 COUNT 1"),
        (
            "0".to_string(),
            vec!["a", "1", "b", "2"]
                .into_iter()
                .map(String::from)
                .collect()
        )
    );
}

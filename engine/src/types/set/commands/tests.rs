//! The set commands through [`Keyspace::execute`](crate::Keyspace::execute): replies,
//! Redis's errors in its order, encodings, and the effects (propagated forms, events, dirty).

use bytes::Bytes;

use crate::effects_fixture::Fixture;
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn set(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| bulk(s)).collect())
}

fn err(s: &str) -> Result<Reply, String> {
    Err(s.to_string())
}

fn encoding(f: &Fixture, key: &str) -> &'static str {
    f.ks.run(|db, _| match db.get(key.as_bytes()) {
        Some(crate::types::Value::Set(s)) => s.encoding(),
        _ => "none",
    })
}

#[test]
fn members_and_algebra_reply_as_redis() {
    let f = Fixture::new();
    assert_eq!(f.run("SADD s 3 1 2 1"), Ok(Reply::Int(3)));
    assert_eq!(encoding(&f, "s"), "intset");
    assert_eq!(f.run("SMEMBERS s"), Ok(set(&["1", "2", "3"])));
    assert_eq!(f.run("SADD t b a 2"), Ok(Reply::Int(3)));
    assert_eq!(encoding(&f, "t"), "listpack");
    assert_eq!(f.run("SMEMBERS t"), Ok(set(&["b", "a", "2"])));
    assert_eq!(f.run("SCARD t"), Ok(Reply::Int(3)));
    assert_eq!(f.run("SISMEMBER t a"), Ok(Reply::Int(1)));
    assert_eq!(
        f.run("SMISMEMBER t a z"),
        Ok(Reply::Array(vec![Reply::Int(1), Reply::Int(0)]))
    );
    assert_eq!(f.run("SINTER t s"), Ok(set(&["2"])));
    assert_eq!(f.run("SINTER t s nokey"), Ok(set(&[])));
    assert_eq!(f.run("SINTERCARD 2 t s LIMIT 0"), Ok(Reply::Int(1)));
    f.run("SADD two 2").unwrap();
    assert_eq!(f.run("SDIFF s two"), Ok(set(&["1", "3"])));
    assert_eq!(f.run("SUNIONSTORE u s t"), Ok(Reply::Int(5)));
    assert_eq!(f.run("SINTERSTORE i s s"), Ok(Reply::Int(3)));
    assert_eq!(encoding(&f, "i"), "intset");
    assert_eq!(f.run("SDIFFSTORE i s s"), Ok(Reply::Int(0)));
    assert_eq!(f.run("EXISTS i"), Ok(Reply::Int(0)));
    assert_eq!(f.run("SMOVE s t 1"), Ok(Reply::Int(1)));
    assert_eq!(f.run("SREM t 1 b zz"), Ok(Reply::Int(2)));
    assert_eq!(
        f.run("SSCAN s 0 MATCH 3"),
        Ok(Reply::Array(vec![bulk("0"), Reply::Array(vec![bulk("3")])]))
    );
    f.ks.check_invariants().unwrap();
}

#[test]
fn errors_come_in_redis_order_and_change_nothing() {
    let f = Fixture::new();
    f.run("SET str x").unwrap();
    f.run("SADD s a").unwrap();
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(f.run("SADD str a"), wrongtype);
    assert_eq!(f.run("SINTER s str"), wrongtype);
    assert_eq!(f.run("SMOVE nokey str a"), Ok(Reply::Int(0)));
    assert_eq!(f.run("SMOVE s str a"), wrongtype);
    assert_eq!(f.run("SPOP s 1 2"), err("ERR syntax error"));
    assert_eq!(
        f.run("SPOP s -1"),
        err("ERR value is out of range, must be positive")
    );
    assert_eq!(
        f.run("SPOP str x"),
        err("ERR value is out of range, must be positive")
    );
    assert_eq!(f.run("SPOP str 1"), wrongtype);
    assert_eq!(
        f.run("SRANDMEMBER s -9223372036854775808"),
        err(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
        )
    );
    assert_eq!(
        f.run("SINTERCARD 0 s"),
        err("ERR numkeys should be greater than 0")
    );
    assert_eq!(
        f.run("SINTERCARD 3 s s"),
        err("ERR Number of keys can't be greater than number of args")
    );
    assert_eq!(
        f.run("SINTERCARD 1 s LIMIT -1"),
        err("ERR LIMIT can't be negative")
    );
    assert_eq!(f.run("SINTERCARD 1 s FOO"), err("ERR syntax error"));
    assert_eq!(
        f.run("SSCAN s 0 NOVALUES"),
        err("ERR NOVALUES option can only be used in HSCAN")
    );
    assert_eq!(f.run("SMEMBERS s"), Ok(set(&["a"])));
}

#[test]
fn encodings_convert_at_redis_thresholds() {
    let f = Fixture::new();
    let ints: Vec<String> = (0..512).map(|i| i.to_string()).collect();
    f.run(&format!("SADD s {}", ints.join(" "))).unwrap();
    assert_eq!(encoding(&f, "s"), "intset");
    f.run("SADD s 512").unwrap();
    assert_eq!(encoding(&f, "s"), "hashtable");
    f.run("SADD l 1 a").unwrap();
    assert_eq!(encoding(&f, "l"), "listpack");
    f.run(&format!("SADD l {}", "x".repeat(65))).unwrap();
    assert_eq!(encoding(&f, "l"), "hashtable");
    let many: Vec<String> = (0..129).map(|i| format!("m{i}")).collect();
    f.run(&format!("SADD m {}", many.join(" "))).unwrap();
    assert_eq!(encoding(&f, "m"), "hashtable");
}

#[test]
fn spop_propagates_as_redis() {
    let f = Fixture::new();
    f.run("SADD s a b c d e").unwrap();
    f.propagated();
    f.events();
    let Ok(Reply::Bulk(one)) = f.run("SPOP s") else {
        panic!()
    };
    assert_eq!(
        f.propagated(),
        vec![format!("SREM s {}", String::from_utf8_lossy(&one))]
    );
    let Ok(Reply::Set(two)) = f.run("SPOP s 2") else {
        panic!()
    };
    assert_eq!(two.len(), 2);
    assert_eq!(f.propagated().len(), 1);
    let Ok(Reply::Set(rest)) = f.run("SPOP s 10") else {
        panic!()
    };
    assert_eq!(rest.len(), 2);
    assert_eq!(f.propagated(), vec!["DEL s"]);
    assert_eq!(f.events(), vec!["spop", "spop", "spop", "del"]);
    assert_eq!(f.run("EXISTS s"), Ok(Reply::Int(0)));
    assert_eq!(f.ks.dirty(), 5 + 5);
    f.ks.check_invariants().unwrap();
}

fn texts(reply: Result<Reply, String>) -> Vec<String> {
    let reply = match reply {
        Ok(Reply::Bulks(bulks)) => Ok(bulks.to_reply()),
        other => other,
    };
    match reply {
        Ok(Reply::Set(items) | Reply::Array(items)) => items
            .into_iter()
            .map(|r| match r {
                Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn distinct(items: &[String]) -> usize {
    items
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// Each of Redis's SRANDMEMBER and SPOP cases on a table: distinct members where they must
/// be, repeats allowed for a negative count, the whole set past its size; SPOP taking most of
/// a set moves what stays to a new set of the encoding its members get.
#[test]
fn random_picks_from_a_table_follow_redis_cases() {
    let f = Fixture::new();
    let all: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    f.run(&format!("SADD big {}", all.join(" "))).unwrap();
    assert_eq!(encoding(&f, "big"), "hashtable");
    for (count, want) in [(5, 5), (200, 200), (1000, 300)] {
        let picked = texts(f.run(&format!("SRANDMEMBER big {count}")));
        assert_eq!((picked.len(), distinct(&picked)), (want, want), "{count}");
        assert!(picked.iter().all(|m| all.contains(m)));
    }
    let repeats = texts(f.run("SRANDMEMBER big -400"));
    assert_eq!(repeats.len(), 400);
    assert!(repeats.iter().all(|m| all.contains(m)));
    f.propagated();

    let popped = texts(f.run("SPOP big 10"));
    assert_eq!(distinct(&popped), 10);
    assert_eq!(f.run("SCARD big"), Ok(Reply::Int(290)));
    assert_eq!(
        f.propagated(),
        vec![format!("SREM big {}", popped.join(" "))]
    );
    let most = texts(f.run("SPOP big 280"));
    assert_eq!(distinct(&most), 280);
    let mut left = texts(f.run("SMEMBERS big"));
    assert_eq!(left.len(), 10);
    assert_eq!(encoding(&f, "big"), "listpack");
    left.extend(popped);
    left.extend(most);
    left.sort();
    let mut want = all.clone();
    want.sort();
    assert_eq!(left, want);
    f.ks.check_invariants().unwrap();
}

#[test]
fn sscan_of_a_table_pages_by_count_and_returns_every_member_held_throughout() {
    let f = Fixture::new();
    for i in 0..600 {
        f.run(&format!("SADD s m{i}")).unwrap();
    }
    let (calls, seen) = f.scan_with_churn(
        "SSCAN s {} COUNT 20",
        |i| format!("SADD s m{i}"),
        |i| format!("SREM s m{i}"),
    );
    assert!(calls > 20, "{calls} calls");
    for i in 0..600 {
        assert!(seen.contains(&format!("m{i}")), "m{i} never returned");
    }
    // An intset is scanned whole, whatever the cursor.
    f.run("SADD ints 3 1 2").unwrap();
    assert_eq!(
        f.scan_call("SSCAN ints 99 COUNT 1"),
        (
            "0".to_string(),
            vec!["1", "2", "3"].into_iter().map(String::from).collect()
        )
    );
}

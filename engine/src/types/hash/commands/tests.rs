//! The hash commands through [`Keyspace::execute`](crate::Keyspace::execute): replies,
//! Redis's errors in its order, field expiry by the manual clock, and the effects (propagated
//! forms, events, dirty).

use bytes::Bytes;

use crate::effects_fixture::{Fixture, NOW_MS};
use crate::reply::Reply;

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn ints(v: &[i64]) -> Reply {
    Reply::Array(v.iter().map(|&n| Reply::Int(n)).collect())
}

fn err(s: &str) -> Result<Reply, String> {
    Err(s.to_string())
}

fn encoding(f: &Fixture, key: &str) -> &'static str {
    f.ks.run(|db, _| match db.get(key.as_bytes()) {
        Some(crate::types::Value::Hash(h)) => h.encoding(),
        _ => "none",
    })
}

#[test]
fn set_get_and_read_commands_reply_as_redis() {
    let f = Fixture::new();
    assert_eq!(f.run("HSET h a 1 b 2"), Ok(Reply::Int(2)));
    assert_eq!(f.run("HSET h a 3 c 4"), Ok(Reply::Int(1)));
    assert_eq!(f.run("HGET h a"), Ok(bulk("3")));
    assert_eq!(f.run("HGET h zz"), Ok(Reply::Null));
    assert_eq!(f.run("HGET nokey a"), Ok(Reply::Null));
    assert_eq!(
        f.run("HMGET h a zz c"),
        Ok(Reply::Array(vec![bulk("3"), Reply::Null, bulk("4")]))
    );
    assert_eq!(f.run("HLEN h"), Ok(Reply::Int(3)));
    assert_eq!(f.run("HSTRLEN h c"), Ok(Reply::Int(1)));
    assert_eq!(f.run("HEXISTS h b"), Ok(Reply::Int(1)));
    assert_eq!(
        f.run("HKEYS h"),
        Ok(Reply::Array(vec![bulk("a"), bulk("b"), bulk("c")]))
    );
    assert_eq!(
        f.run("HVALS h"),
        Ok(Reply::Array(vec![bulk("3"), bulk("2"), bulk("4")]))
    );
    assert_eq!(
        f.run("HGETALL h"),
        Ok(Reply::Map(vec![
            (bulk("a"), bulk("3")),
            (bulk("b"), bulk("2")),
            (bulk("c"), bulk("4"))
        ]))
    );
    assert_eq!(f.run("HSETNX h a 9"), Ok(Reply::Int(0)));
    assert_eq!(f.run("HSETNX h d 9"), Ok(Reply::Int(1)));
    assert_eq!(f.run("HMSET h e 5"), Ok(Reply::OK));
    assert_eq!(f.run("HDEL h a zz b"), Ok(Reply::Int(2)));
    assert_eq!(
        f.run("HSCAN h 0 MATCH [cd] NOVALUES"),
        Ok(Reply::Array(vec![
            bulk("0"),
            Reply::Array(vec![bulk("c"), bulk("d")])
        ]))
    );
    assert_eq!(encoding(&f, "h"), "listpack");
    f.ks.check_invariants().unwrap();
}

#[test]
fn errors_come_in_redis_order_and_change_nothing() {
    let f = Fixture::new();
    f.run("SET s x").unwrap();
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(
        f.run("HSET h a"),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(f.run("HSET s a 1"), wrongtype);
    assert_eq!(f.run("HGET s a"), wrongtype);
    assert_eq!(
        f.run("HINCRBY s a x"),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(f.run("HINCRBY s a 1"), wrongtype);
    f.run("HSET h a x n 9223372036854775807").unwrap();
    assert_eq!(
        f.run("HINCRBY h a 1"),
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        f.run("HINCRBY h n 1"),
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(
        f.run("HINCRBYFLOAT h a 1"),
        err("ERR hash value is not a float")
    );
    assert_eq!(
        f.run("HINCRBYFLOAT h a inf"),
        err("ERR value is NaN or Infinity")
    );
    assert_eq!(
        f.run("HINCRBYFLOAT h a x"),
        err("ERR value is not a valid float")
    );
    assert_eq!(f.run("HSCAN h x"), err("ERR invalid cursor"));
    assert_eq!(f.run("HSCAN h 0 COUNT 0"), err("ERR syntax error"));
    assert_eq!(f.run("HRANDFIELD h 1 FOO"), err("ERR syntax error"));
    assert_eq!(
        f.run("HRANDFIELD h -9223372036854775808"),
        err(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
        )
    );
    assert_eq!(
        f.run("HRANDFIELD h 9223372036854775807 WITHVALUES"),
        err("ERR value is out of range")
    );
    assert_eq!(f.run("HEXPIRE s 10 FIELDS 1 a"), wrongtype);
    assert_eq!(
        f.run("HEXPIRE h -1 FIELDS 1 a"),
        err("ERR invalid expire time, must be >= 0")
    );
    assert_eq!(
        f.run("HEXPIRE h 70368744177664 FIELDS 1 a"),
        err("ERR invalid expire time in 'hexpire' command")
    );
    assert_eq!(
        f.run("HEXPIRE h 10 FIELDS 0 a"),
        err("ERR Parameter `numFields` should be greater than 0")
    );
    assert_eq!(
        f.run("HEXPIRE h 10 FIELDS 2 a"),
        err("ERR wrong number of arguments")
    );
    assert_eq!(
        f.run("HEXPIRE h 10 FOO FIELDS 1 a"),
        err("ERR unknown argument: FOO")
    );
    assert_eq!(
        f.run("HEXPIRE h 10 NX XX FIELDS 1 a"),
        err("ERR Multiple condition flags specified")
    );
    assert_eq!(f.run("HEXPIRE h 10 NX a b"), err("ERR unknown argument: a"));
    assert_eq!(
        f.run("HEXPIRE h 10 NX XX a"),
        err("ERR unknown argument: a")
    );
    assert_eq!(
        f.run("HTTL h FIELD 1 a"),
        err("ERR Mandatory argument FIELDS is missing or not at the right position")
    );
    assert_eq!(
        f.run("HTTL h FIELDS 0 a"),
        err("ERR Number of fields must be a positive integer")
    );
    assert_eq!(
        f.run("HTTL h FIELDS 2 a"),
        err("ERR The `numfields` parameter must match the number of arguments")
    );
    assert_eq!(
        f.run("HSETEX h EX 10 PX 10 FIELDS 1 a b"),
        err("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")
    );
    assert_eq!(
        f.run("HSETEX h FNX FXX FIELDS 1 a b"),
        err("ERR Only one of FXX or FNX arguments can be specified")
    );
    assert_eq!(
        f.run("HSETEX h EX 10 FNX x"),
        err("ERR unknown argument: x")
    );
    assert_eq!(
        f.run("HSETEX h FIELDS 2 a b"),
        err("ERR wrong number of arguments")
    );
    assert_eq!(
        f.run("HSETEX h FIELDS 0 a b"),
        err("ERR invalid number of fields")
    );
    assert_eq!(
        f.run("HSETEX h FIELDS 1 a b EX"),
        err("ERR missing expire time")
    );
    assert_eq!(
        f.run("HGETEX h PERSIST EX 1 FIELDS 1 a"),
        err("ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified")
    );
    assert_eq!(f.run("HGET h a"), Ok(bulk("x")));
    assert_eq!(encoding(&f, "h"), "listpack");
    f.ks.check_invariants().unwrap();
}

#[test]
fn encodings_convert_at_redis_thresholds() {
    let f = Fixture::new();
    f.run("HSET h a 1").unwrap();
    assert_eq!(encoding(&f, "h"), "listpack");
    f.run("HEXPIRE h 100 FIELDS 1 zz").unwrap();
    assert_eq!(encoding(&f, "h"), "listpackex");
    f.run(&format!("HSET h big {}", "x".repeat(65))).unwrap();
    assert_eq!(encoding(&f, "h"), "hashtable");
    f.run("HSET g f 1").unwrap();
    f.run(&format!("HINCRBYFLOAT g {} 1", "y".repeat(65)))
        .unwrap();
    assert_eq!(encoding(&f, "g"), "hashtable");
}

#[test]
fn field_ttls_expire_lazily_and_actively_by_the_clock() {
    let f = Fixture::new();
    f.run("HSET h a 1 b 2 c 3").unwrap();
    f.propagated();
    f.events();
    assert_eq!(
        f.run("HPEXPIRE h 100 FIELDS 3 a b zz"),
        Ok(ints(&[1, 1, -2]))
    );
    assert_eq!(
        f.propagated(),
        vec![format!("HPEXPIREAT h {} FIELDS 2 a b", NOW_MS + 100)]
    );
    assert_eq!(f.events(), vec!["hexpire"]);
    assert_eq!(f.run("HPEXPIRE h 50 GT FIELDS 1 a"), Ok(ints(&[0])));
    assert_eq!(f.run("HPEXPIRE h 50 LT FIELDS 2 a c"), Ok(ints(&[1, 1])));
    assert_eq!(f.run("HPTTL h FIELDS 3 a b c"), Ok(ints(&[50, 100, 50])));
    assert_eq!(f.run("HTTL h FIELDS 1 b"), Ok(ints(&[1])));
    assert_eq!(
        f.run("HPEXPIRETIME h FIELDS 1 b"),
        Ok(ints(&[(NOW_MS + 100) as i64]))
    );
    assert_eq!(f.run("HPERSIST h FIELDS 2 c zz"), Ok(ints(&[1, -2])));
    assert_eq!(f.run("HPERSIST h FIELDS 1 c"), Ok(ints(&[-1])));
    f.propagated();
    f.events();
    // Fields expire after their time: a read deletes one, HGETALL skips them.
    f.clock.advance(51);
    assert_eq!(
        f.run("HGETALL h"),
        Ok(Reply::Map(vec![
            (bulk("b"), bulk("2")),
            (bulk("c"), bulk("3"))
        ]))
    );
    assert_eq!(f.run("HLEN h"), Ok(Reply::Int(3)));
    assert_eq!(f.run("HGET h a"), Ok(Reply::Null));
    assert_eq!(f.propagated(), vec!["HDEL h a"]);
    assert_eq!(f.events(), vec!["hexpired"]);
    assert_eq!(f.run("HLEN h"), Ok(Reply::Int(2)));
    // The expiry cycle deletes the rest when due.
    f.clock.advance(50);
    f.ks.expire_all_due();
    assert_eq!(f.propagated(), vec!["HDEL h b"]);
    assert_eq!(f.events(), vec!["hexpired"]);
    assert_eq!(
        f.run("HGETALL h"),
        Ok(Reply::Map(vec![(bulk("c"), bulk("3"))]))
    );
    // A past time deletes at once, and the last field takes the key.
    assert_eq!(f.run("HPEXPIREAT h 1 FIELDS 1 c"), Ok(ints(&[2])));
    assert_eq!(f.propagated(), vec!["HDEL h c"]);
    assert_eq!(f.events(), vec!["hdel", "del"]);
    assert_eq!(f.run("EXISTS h"), Ok(Reply::Int(0)));
    f.ks.check_invariants().unwrap();
}

#[test]
fn the_last_field_expiring_takes_the_key_with_it() {
    let f = Fixture::new();
    f.run("HSET h a 1").unwrap();
    f.run("HPEXPIRE h 10 FIELDS 1 a").unwrap();
    f.propagated();
    f.events();
    f.clock.advance(11);
    assert_eq!(f.run("HGET h a"), Ok(Reply::Null));
    assert_eq!(f.propagated(), vec!["HDEL h a"]);
    assert_eq!(f.events(), vec!["del"]);
    assert_eq!(f.run("EXISTS h"), Ok(Reply::Int(0)));
    f.run("HSET g a 1").unwrap();
    f.run("HPEXPIRE g 10 FIELDS 1 a").unwrap();
    f.clock.advance(11);
    f.ks.expire_all_due();
    assert_eq!(f.run("EXISTS g"), Ok(Reply::Int(0)));
    f.ks.check_invariants().unwrap();
}

#[test]
fn writes_propagate_as_redis() {
    let f = Fixture::new();
    f.run("HSET h a 1").unwrap();
    f.run("HINCRBYFLOAT h f 1.5").unwrap();
    f.run("HINCRBY h i 3").unwrap();
    f.run("HSETEX h EX 10 FIELDS 1 x y").unwrap();
    f.run("HGETEX h PERSIST FIELDS 1 x").unwrap();
    f.run("HGETDEL h FIELDS 2 x zz").unwrap();
    assert_eq!(
        f.propagated(),
        vec![
            "HSET h a 1".to_string(),
            "HSETEX h KEEPTTL FIELDS 1 f 1.5".into(),
            "HINCRBY h i 3".into(),
            format!("HSETEX h PXAT {} FIELDS 1 x y", NOW_MS + 10_000),
            "HPERSIST h FIELDS 1 x".into(),
            "HDEL h x zz".into(),
        ]
    );
    assert_eq!(f.ks.dirty(), 6);
    assert_eq!(
        f.events(),
        vec![
            "new",
            "hset",
            "hincrbyfloat",
            "hincrby",
            "hset",
            "hexpire",
            "hpersist",
            "hdel"
        ]
    );
}

#[test]
fn hrandfield_counts_follow_redis() {
    let f = Fixture::new();
    f.run("HSET h a 1 b 2 c 3").unwrap();
    let Ok(Reply::Array(all)) = f.run("HRANDFIELD h 5") else {
        panic!()
    };
    assert_eq!(all, vec![bulk("a"), bulk("b"), bulk("c")]);
    let Ok(Reply::Array(two)) = f.run("HRANDFIELD h 2 WITHVALUES") else {
        panic!()
    };
    assert_eq!(two.len(), 4);
    let Ok(Reply::Array(rep)) = f.run("HRANDFIELD h -7") else {
        panic!()
    };
    assert_eq!(rep.len(), 7);
    assert_eq!(f.run("HRANDFIELD nokey"), Ok(Reply::Null));
    assert_eq!(f.run("HRANDFIELD nokey 3"), Ok(Reply::Array(vec![])));
}

#[test]
fn the_active_cycle_expires_due_fields_a_bounded_number_per_hold() {
    let f = Fixture::new();
    let fields: Vec<String> = (0..1500).map(|i| format!("f{i} v")).collect();
    f.run(&format!("HSET big {}", fields.join(" "))).unwrap();
    let names: Vec<String> = (0..1500).map(|i| format!("f{i}")).collect();
    f.run(&format!("HPEXPIRE big 10 FIELDS 1500 {}", names.join(" ")))
        .unwrap();
    f.run("HSET small a 1 b 2").unwrap();
    f.run("HPEXPIRE small 10 FIELDS 1 a").unwrap();
    f.propagated();
    f.events();
    f.clock.advance(11);
    // One step expires at most its quota of fields; the cycle goes on until all are gone.
    let mut cycle = f.ks.expire_cycle(std::time::Duration::from_secs(10));
    cycle.step();
    let after_one = f.ks.run(|db, _| match db.get(b"big") {
        Some(crate::types::Value::Hash(h)) => h.len(),
        _ => 0,
    });
    assert!(after_one >= 1500 - super::expiry::FIELDS_PER_STEP);
    drop(cycle);
    while f.ks.run(|db, _| db.get(b"big").is_some()) {
        f.ks.active_expire_cycle(std::time::Duration::from_secs(10));
    }
    assert_eq!(
        f.run("HGETALL small"),
        Ok(Reply::Map(vec![(bulk("b"), bulk("2"))]))
    );
    let hdels = f
        .propagated()
        .iter()
        .filter(|l| l.starts_with("HDEL "))
        .count();
    assert_eq!(hdels, 1501);
    f.ks.check_invariants().unwrap();
}

#[test]
fn hscan_of_a_table_pages_by_count_and_returns_every_field_held_throughout() {
    let f = Fixture::new();
    for i in 0..600 {
        f.run(&format!("HSET h f{i} v{i}")).unwrap();
    }
    assert_eq!(encoding(&f, "h"), "hashtable");
    f.run("HPEXPIRE h 10 FIELDS 2 f0 f1").unwrap();
    f.clock.advance(20);
    let (calls, seen) = f.scan_with_churn(
        "HSCAN h {} COUNT 20",
        |i| format!("HSET h f{i} v{i}"),
        |i| format!("HDEL h f{i}"),
    );
    assert!(calls > 20, "{calls} calls");
    let pairs: std::collections::HashMap<&str, &str> = seen
        .chunks(2)
        .map(|p| (p[0].as_str(), p[1].as_str()))
        .collect();
    for i in 2..600 {
        assert_eq!(
            pairs.get(format!("f{i}").as_str()),
            Some(&format!("v{i}").as_str())
        );
    }
    assert!(
        !pairs.contains_key("f0") && !pairs.contains_key("f1"),
        "expired fields"
    );
    let (cursor, fields) = f.scan_call("HSCAN h 0 COUNT 50 NOVALUES MATCH f1*");
    assert_ne!(cursor, "0");
    assert!(fields.iter().all(|f| f.starts_with("f1")), "{fields:?}");
    // A listpack is scanned whole, whatever the cursor.
    f.run("HSET small a 1 b 2").unwrap();
    assert_eq!(
        f.scan_call("HSCAN small 12345 COUNT 1"),
        (
            "0".to_string(),
            vec!["a", "1", "b", "2"]
                .into_iter()
                .map(String::from)
                .collect()
        )
    );
}

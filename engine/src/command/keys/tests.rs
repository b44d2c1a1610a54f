//! The generic key commands through [`Keyspace::execute`]: replies, Redis's errors, and their
//! effects (the forms they propagate, the events they fire, the changes they count).

use crate::effects_fixture::Fixture;
use crate::reply::Reply;

#[test]
fn del_counts_removed_keys_and_propagates_verbatim_only_when_it_removed() {
    let f = Fixture::new();
    f.run("SET a 1").unwrap();
    f.run("SET b 1").unwrap();
    f.propagated();
    f.events();
    let dirty = f.ks.dirty();
    assert_eq!(f.run("DEL nope"), Ok(Reply::Int(0)));
    assert!(f.propagated().is_empty());
    assert_eq!(f.run("del a b a c"), Ok(Reply::Int(2)));
    assert_eq!(f.propagated(), ["del a b a c"]);
    assert_eq!(f.events(), ["del", "del"]);
    assert_eq!(f.ks.dirty(), dirty + 2);
    f.run("SET a 1").unwrap();
    assert_eq!(f.run("UNLINK a"), Ok(Reply::Int(1)));
    assert_eq!(f.propagated(), ["SET a 1", "UNLINK a"]);
}

#[test]
fn expire_propagates_an_absolute_pexpireat_or_a_del() {
    let f = Fixture::new();
    f.run("SET k v").unwrap();
    f.propagated();
    assert_eq!(f.run("EXPIRE k 10"), Ok(Reply::Int(1)));
    assert_eq!(f.run("pexpire k 500 LT"), Ok(Reply::Int(1)));
    assert_eq!(f.run("EXPIREAT k 2000 GT"), Ok(Reply::Int(1)));
    assert_eq!(f.run("pexpireat k 3000000"), Ok(Reply::Int(1)));
    assert_eq!(f.run("EXPIRE k 1 NX"), Ok(Reply::Int(0)));
    assert_eq!(f.run("EXPIRE missing 1"), Ok(Reply::Int(0)));
    assert_eq!(
        f.propagated(),
        [
            "PEXPIREAT k 1010000",
            "PEXPIREAT k 1000500 LT",
            "PEXPIREAT k 2000000 GT",
            "pexpireat k 3000000",
        ]
    );
    assert_eq!(f.run("TTL k"), Ok(Reply::Int(2000)));
    assert_eq!(f.run("PEXPIRETIME k"), Ok(Reply::Int(3_000_000)));
    f.events();
    assert_eq!(f.run("EXPIRE k -1"), Ok(Reply::Int(1)));
    assert_eq!(f.propagated(), ["DEL k"]);
    assert_eq!(f.events(), ["del"]);
    assert_eq!(f.run("TTL k"), Ok(Reply::Int(-2)));
}

#[test]
fn expire_checks_in_redis_order_and_changes_nothing_on_error() {
    let f = Fixture::new();
    f.run("SET k v").unwrap();
    f.propagated();
    let dirty = f.ks.dirty();
    assert_eq!(
        f.run("EXPIRE k x FOO"),
        Err("ERR Unsupported option FOO".to_string())
    );
    assert_eq!(
        f.run("EXPIRE k x"),
        Err("ERR value is not an integer or out of range".to_string())
    );
    assert_eq!(
        f.run("EXPIRE k 9223372036854775807"),
        Err("ERR invalid expire time in 'expire' command".to_string())
    );
    assert_eq!(
        f.run("PEXPIRE k 9223372036854775807"),
        Err("ERR invalid expire time in 'pexpire' command".to_string())
    );
    assert_eq!(f.run("TTL k"), Ok(Reply::Int(-1)));
    assert!(f.propagated().is_empty());
    assert_eq!(f.ks.dirty(), dirty);
}

#[test]
fn persist_and_rename_propagate_verbatim_when_they_changed() {
    let f = Fixture::new();
    f.run("SET k v PX 100").unwrap();
    f.propagated();
    f.events();
    assert_eq!(f.run("PERSIST k"), Ok(Reply::Int(1)));
    assert_eq!(f.run("PERSIST k"), Ok(Reply::Int(0)));
    assert_eq!(f.run("RENAME k k"), Ok(Reply::OK));
    assert_eq!(f.run("RENAME k j"), Ok(Reply::OK));
    assert_eq!(f.run("RENAME k j"), Err("ERR no such key".to_string()));
    f.run("SET k v").unwrap();
    assert_eq!(f.run("RENAMENX k j"), Ok(Reply::Int(0)));
    assert_eq!(f.propagated(), ["PERSIST k", "RENAME k j", "SET k v"]);
    assert_eq!(
        f.events(),
        ["persist", "new", "rename_from", "rename_to", "new", "set"]
    );
    assert_eq!(f.run("EXISTS k j k nope"), Ok(Reply::Int(3)));
    assert_eq!(f.run("TYPE j"), Ok(Reply::Status("string")));
    assert_eq!(f.run("TYPE nope"), Ok(Reply::Status("none")));
    assert_eq!(f.run("DBSIZE"), Ok(Reply::Int(2)));
}

#[test]
fn keys_and_scan_match_globs_and_types_and_check_in_redis_order() {
    let f = Fixture::new();
    f.run("SET user:1 a").unwrap();
    f.run("SET user:2 b").unwrap();
    f.run("XADD user:s * f v").unwrap();
    let sorted = |reply: Reply| {
        let items = match reply {
            Reply::Array(items) => items,
            Reply::Bulks(bulks) => bulks.to_replies(),
            other => panic!("{other:?}"),
        };
        let mut keys: Vec<String> = items
            .into_iter()
            .map(|item| match item {
                Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(
        sorted(f.run("KEYS user:?").unwrap()),
        ["user:1", "user:2", "user:s"]
    );
    let Ok(Reply::Array(mut scan)) = f.run("SCAN 0 MATCH user:* COUNT 10 TYPE STRING") else {
        panic!("SCAN")
    };
    assert_eq!(scan[0], Reply::bulk_static("0"));
    assert_eq!(sorted(scan.remove(1)), ["user:1", "user:2"]);
    assert_eq!(f.run("SCAN x"), Err("ERR invalid cursor".to_string()));
    assert_eq!(f.run("SCAN 0 COUNT"), Err("ERR syntax error".to_string()));
    assert_eq!(f.run("SCAN 0 COUNT 0"), Err("ERR syntax error".to_string()));
    assert_eq!(
        f.run("SCAN 0 COUNT x"),
        Err("ERR value is not an integer or out of range".to_string())
    );
    assert_eq!(f.run("SCAN 0 FOO 1"), Err("ERR syntax error".to_string()));
}

#[test]
fn flushdb_empties_the_database_and_propagates_verbatim() {
    let f = Fixture::new();
    f.run("SET a 1").unwrap();
    f.propagated();
    let dirty = f.ks.dirty();
    assert_eq!(f.run("FLUSHDB NOW"), Err("ERR syntax error".to_string()));
    assert_eq!(f.run("FLUSHDB async"), Ok(Reply::OK));
    assert_eq!(f.run("DBSIZE"), Ok(Reply::Int(0)));
    assert_eq!(f.propagated(), ["FLUSHDB async"]);
    assert_eq!(f.ks.dirty(), dirty + 1);
}

#[test]
fn scan_returns_about_count_keys_a_call_and_every_key_held_throughout() {
    let f = Fixture::new();
    for i in 0..1000 {
        f.run(&format!("SET k{i} v")).unwrap();
    }
    // Writes between calls: new keys (which a scan may or may not return), deletions of keys
    // not yet returned or returned, and enough of both to grow and shrink the table.
    let (calls, seen) = f.scan_through("SCAN {} COUNT 20", |call| {
        if call == 5 {
            for i in 1000..3000 {
                f.run(&format!("SET k{i} v")).unwrap();
            }
        }
        if call == 10 {
            for i in 1000..3000 {
                f.run(&format!("DEL k{i}")).unwrap();
            }
            f.run("DEL k0 k1 k2").unwrap();
        }
    });
    let (cursor, keys) = f.scan_call("SCAN 0 COUNT 20");
    assert!(
        cursor != "0" && (20..40).contains(&keys.len()),
        "{} keys",
        keys.len()
    );
    assert!(calls > 20, "{calls} calls");
    for i in 3..1000 {
        assert!(seen.contains(&format!("k{i}")), "k{i} never returned");
    }
}

#[test]
fn scan_deletes_the_expired_keys_it_visits_after_match_and_before_type() {
    let f = Fixture::new();
    f.run("SET a:1 v").unwrap();
    f.run("SET a:2 v").unwrap();
    f.run("SET b:1 v").unwrap();
    f.run("RPUSH a:3 x").unwrap();
    f.run("PEXPIRE a:2 10").unwrap();
    f.run("PEXPIRE b:1 10").unwrap();
    f.propagated();
    f.events();
    f.clock.advance(20);
    let (cursor, mut keys) = f.scan_call("SCAN 0 MATCH a:* TYPE string COUNT 100");
    keys.sort();
    assert_eq!((cursor.as_str(), keys), ("0", vec!["a:1".to_string()]));
    // b:1 does not match, so it is left for another lookup.
    assert_eq!(f.propagated(), ["DEL a:2"]);
    assert_eq!(f.events(), ["expired"]);
    assert_eq!(
        f.run("SCAN 0 TYPE nosuchtype"),
        Ok(Reply::Array(vec![
            Reply::bulk_static("0"),
            Reply::Array(vec![]),
        ]))
    );
    assert_eq!(
        f.run("SCAN 18446744073709551615"),
        Ok(Reply::Array(vec![
            Reply::bulk_static("0"),
            Reply::Array(vec![]),
        ]))
    );
}

/// Waits until the keyspace's lazy freeing has nothing pending.
fn lazily_freed(f: &Fixture) -> u64 {
    let lazyfree = f.ks.lazyfree();
    for _ in 0..2000 {
        if lazyfree.pending() == 0 {
            return lazyfree.freed();
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("{} objects still pending", lazyfree.pending());
}

#[test]
fn unlink_and_async_flushes_free_big_values_in_the_background_and_count_them() {
    let f = Fixture::new();
    let members: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let sadd = |key: &str| f.run(&format!("SADD {key} {}", members.join(" "))).unwrap();
    sadd("big");
    f.run("SADD small a b c").unwrap();
    assert_eq!(f.run("UNLINK big small nokey"), Ok(Reply::Int(2)));
    // The big set went to the thread; the small one was freed in place.
    assert_eq!(lazily_freed(&f), 1);
    sadd("big");
    assert_eq!(f.run("DEL big"), Ok(Reply::Int(1)));
    assert_eq!(lazily_freed(&f), 1);
    f.ks.lazyfree().set_user_del(true);
    sadd("big");
    assert_eq!(f.run("DEL big"), Ok(Reply::Int(1)));
    assert_eq!(lazily_freed(&f), 2);
    f.ks.lazyfree().set_user_del(false);
    // Every flush hands its table over (counted as its keys); SYNC replies once it is freed.
    for i in 0..5 {
        f.run(&format!("SET k{i} v")).unwrap();
    }
    assert_eq!(f.run("FLUSHDB SYNC"), Ok(Reply::OK));
    assert_eq!(f.ks.lazyfree().pending(), 0);
    assert_eq!(lazily_freed(&f), 7);
    for i in 0..5 {
        f.run(&format!("SET k{i} v")).unwrap();
    }
    assert_eq!(f.run("FLUSHDB ASYNC"), Ok(Reply::OK));
    assert_eq!(lazily_freed(&f), 12);
    f.run("SET k v").unwrap();
    assert_eq!(f.run("FLUSHDB"), Ok(Reply::OK));
    assert_eq!(lazily_freed(&f), 13);
    assert_eq!(f.run("DBSIZE"), Ok(Reply::Int(0)));
    assert_eq!(f.run("FLUSHDB LATER"), Err("ERR syntax error".to_string()));
    f.ks.lazyfree().reset_freed();
    assert_eq!(lazily_freed(&f), 0);
}

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
        let Reply::Array(items) = reply else {
            panic!("{reply:?}")
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

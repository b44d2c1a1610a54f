//! Sorted sets interchange with Redis 8.8: DUMP payloads of listpack sets (integer, text and
//! infinite scores) are Redis 8.8's byte for byte, listpack and skiplist payloads RESTORE on
//! the other side to the same entries and encodings, and a `dump.rdb` echomq saved with them
//! passes `redis-check-rdb` and loads into Redis 8.8. Skipped where Redis 8.8 is not
//! installed.

use super::{serve_rdb, start_redis};
use crate::aof::interchange::redis8;
use crate::aof::{Conn, text};

/// Builds the same sorted sets on a server.
fn build(c: &mut Conn) {
    c.ok(&[
        "ZADD", "zlp", "1", "a", "2.5", "b", "-inf", "c", "inf", "d", "0.1", "e",
    ]);
    c.ok(&[
        "ZADD",
        "zint",
        "-5",
        "x",
        "1152921504606846976",
        "y",
        "12",
        "13",
    ]);
    let long = "x".repeat(100);
    c.ok(&["ZADD", "zsl", "1", "a", "1e300", &long, "-2.75", "c"]);
    let pairs: Vec<String> = (0..200)
        .map(|i| format!("{} m{i}", f64::from(i) / 4.0))
        .collect();
    let mut zadd = vec!["ZADD", "zbig"];
    zadd.extend(pairs.iter().flat_map(|p| p.split(' ')));
    c.ok(&zadd);
}

/// A sorted set's type, encoding and entries with scores.
fn contents(c: &mut Conn, key: &str) -> String {
    let kind = c.ok(&["TYPE", key]);
    let encoding = c.ok(&["OBJECT", "ENCODING", key]);
    let items: Vec<String> = match c.run(&["ZRANGE", key, "0", "-1", "WITHSCORES"]).unwrap() {
        redis::Value::Array(v) => v.iter().map(text).collect(),
        _ => vec![],
    };
    format!("{kind} {encoding} {items:?}")
}

const KEYS: [&str; 4] = ["zlp", "zint", "zsl", "zbig"];

#[test]
fn zset_dumps_equal_redis8_bytes_and_restore_both_ways() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    build(&mut r);
    build(&mut c);
    for key in ["zlp", "zint"] {
        assert_eq!(c.dump(key), r.dump(key), "DUMP {key}");
    }
    super::restore_both_ways(&mut c, &mut r, &KEYS, contents);
}

#[test]
fn an_rdb_with_zsets_loads_into_redis8() {
    let Some(redis) = redis8() else { return };
    super::saved_rdb_loads_into_redis8(&redis, build, &KEYS, contents);
}

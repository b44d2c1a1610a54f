//! Hashes and sets interchange with Redis 8.8: DUMP payloads of the compact encodings
//! (listpack, listpackex, intset, set listpack) are Redis 8.8's byte for byte, every encoding's
//! payload (tables and field TTLs included) RESTOREs on the other side to the same contents,
//! encodings and field expiry times, and a `dump.rdb` echomq saved with them loads into Redis
//! 8.8 and passes `redis-check-rdb`. Skipped where Redis 8.8 is not installed.

use super::{serve_rdb, start_redis};
use crate::aof::interchange::redis8;
use crate::aof::{Conn, text};

/// 2100-01-01 in Unix milliseconds.
const FAR_MS: &str = "4102444800000";

/// Builds the same hashes and sets on a server.
fn build(c: &mut Conn) {
    c.ok(&["HSET", "hlp", "a", "1", "b", "two", "n", "-77"]);
    c.ok(&["HSET", "hex", "a", "1", "b", "2", "c", "3"]);
    c.ok(&["HPEXPIREAT", "hex", FAR_MS, "FIELDS", "1", "b"]);
    let long = "x".repeat(100);
    c.ok(&["HSET", "hht", "a", "1", "long", &long]);
    c.ok(&["HSET", "hhtx", "a", "1", "long", &long, "c", "3"]);
    c.ok(&["HPEXPIREAT", "hhtx", FAR_MS, "FIELDS", "2", "a", "long"]);
    c.ok(&["SADD", "sint", "5", "-3", "70000", "1"]);
    c.ok(&["SADD", "sbig", "5", "9223372036854775807"]);
    c.ok(&["SADD", "slp", "b", "a", "12"]);
    let members: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let mut sadd = vec!["SADD", "sht"];
    sadd.extend(members.iter().map(String::as_str));
    c.ok(&sadd);
}

/// What a hash or set under `key` holds, in an order that does not depend on the table.
fn contents(c: &mut Conn, key: &str) -> String {
    let kind = c.ok(&["TYPE", key]);
    let encoding = c.ok(&["OBJECT", "ENCODING", key]);
    let mut items: Vec<String> = match kind.as_str() {
        "hash" => {
            let fields = c.run(&["HKEYS", key]).unwrap();
            let fields: Vec<String> = match fields {
                redis::Value::Array(v) => v.iter().map(text).collect(),
                _ => vec![],
            };
            fields
                .iter()
                .map(|f| {
                    let v = c.ok(&["HGET", key, f]);
                    let at = c.ok(&["HPEXPIRETIME", key, "FIELDS", "1", f]);
                    format!("{f}={v}@{at}")
                })
                .collect()
        }
        _ => match c.run(&["SMEMBERS", key]).unwrap() {
            redis::Value::Array(v) | redis::Value::Set(v) => v.iter().map(text).collect(),
            _ => vec![],
        },
    };
    items.sort();
    format!("{kind} {encoding} {items:?}")
}

const KEYS: [&str; 8] = ["hlp", "hex", "hht", "hhtx", "sint", "sbig", "slp", "sht"];

#[test]
fn hash_and_set_dumps_equal_redis8_bytes_and_restore_both_ways() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    build(&mut r);
    build(&mut c);
    for key in ["hlp", "hex", "sint", "sbig", "slp"] {
        assert_eq!(c.dump(key), r.dump(key), "DUMP {key}");
    }
    super::restore_both_ways(&mut c, &mut r, &KEYS, contents);
}

#[test]
fn an_rdb_with_hashes_and_sets_loads_into_redis8() {
    let Some(redis) = redis8() else { return };
    super::saved_rdb_loads_into_redis8(&redis, build, &KEYS, contents);
}

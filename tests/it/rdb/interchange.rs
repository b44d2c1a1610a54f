//! Interchange with Redis 8.8: a `dump.rdb` echomq saved loads into Redis 8.8 (and passes
//! Redis 8.8's `redis-check-rdb`) with the same XRANGE, XINFO STREAM FULL and XPENDING, one
//! Redis 8.8 saved loads into echomq the same way, DUMP payloads RESTORE on the other side
//! both ways, and for a stream built by the same commands (no consumer, whose seen time is the
//! clock's) echomq's DUMP payload is Redis 8.8's byte for byte. Skipped (with a note) where
//! Redis 8.8 is not installed.

use std::path::Path;

use super::{all_state, redis_check_rdb, serve_rdb, start_redis, state};
use crate::aof::interchange::redis8;
use crate::aof::{Conn, workload};

/// Commands whose effect is fully determined by their arguments: explicit ids, trims, deletes,
/// groups without consumers, IDMP with explicit ids, long values (LZF) and integer values.
fn deterministic(c: &mut Conn) {
    let long = "x".repeat(300);
    for n in 1..=250u32 {
        let id = format!("{n}-{}", n % 3);
        let v = format!("value-{n}");
        if n % 17 == 0 {
            c.ok(&["XADD", "d", &id, "other", &long, "n", &n.to_string()]);
        } else {
            c.ok(&["XADD", "d", &id, "f", &v, "g", &(n * 1000).to_string()]);
        }
    }
    c.ok(&["XDEL", "d", "5-2", "6-0", "200-2"]);
    c.ok(&["XTRIM", "d", "MAXLEN", "~", "200"]);
    c.ok(&["XTRIM", "d", "MINID", "70"]);
    c.ok(&["XGROUP", "CREATE", "d", "g1", "0"]);
    c.ok(&["XGROUP", "CREATE", "d", "g2", "120-0", "ENTRIESREAD", "50"]);
    c.ok(&["XADD", "e2", "MAXLEN", "0", "5-5", "a", "b"]);
    c.ok(&[
        "XSETID",
        "e2",
        "9-9",
        "ENTRIESADDED",
        "12",
        "MAXDELETEDID",
        "7-0",
    ]);
}

fn check_rdb(redis: &Path, file: &Path) {
    let log = redis_check_rdb(redis, file);
    assert!(log.contains("RDB looks OK"), "{log}");
}

#[test]
fn rdb_saved_by_echomq_loads_into_redis8_and_passes_its_checker() {
    let Some(redis) = redis8() else { return };
    // Compressed and checksummed (the defaults), then neither (a zero checksum, unchecked).
    for compression in ["yes", "no"] {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "--rdbcompression",
            compression,
            "--rdbchecksum",
            compression,
        ];
        let (server, addr) = serve_rdb(dir.path(), &args);
        let mut c = Conn::open(addr);
        workload(&mut c);
        deterministic(&mut c);
        c.ok(&["XADD", "i", "IDMP", "p1", "i1", "*", "a", "b"]);
        c.ok(&["XADD", "i", "IDMP", "p1", "i1", "*", "a", "b"]);
        assert_eq!(c.ok(&["SAVE"]), "OK");
        let ours = all_state(&mut c);
        drop(server);
        check_rdb(&redis, &dir.path().join("dump.rdb"));
        let (_redis, addr) = start_redis(&redis, dir.path());
        let mut r = Conn::open(addr);
        let theirs = all_state(&mut r);
        assert_eq!(theirs, ours, "rdbcompression {compression}");
    }
}

#[test]
fn rdb_saved_by_redis8_loads_into_echomq() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = start_redis(&redis, dir.path());
    let mut r = Conn::open(addr);
    workload(&mut r);
    deterministic(&mut r);
    r.ok(&["XADD", "i", "IDMP", "p1", "i1", "*", "a", "b"]);
    r.ok(&["XADD", "i", "IDMP", "p1", "i1", "*", "a", "b"]);
    r.ok(&["XNACK", "s", "g1", "SILENT", "IDS", "1", "20-1"]);
    r.ok(&["BGSAVE"]);
    r.wait_bgsave();
    assert_eq!(r.info_field("rdb_last_bgsave_status"), "ok");
    let theirs = all_state(&mut r);
    drop(server);
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    let ours = all_state(&mut c);
    assert_eq!(ours, theirs);
    assert_ne!(c.info_field("rdb_last_load_keys_loaded"), "0");
}

#[test]
fn dump_payloads_equal_redis8_bytes_and_restore_both_ways() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    for conn in [&mut r, &mut c] {
        deterministic(conn);
        conn.ok(&["SET", "str", "hello"]);
        conn.ok(&["SET", "num", "12345"]);
        conn.ok(&["SET", "long", &"abc".repeat(40)]);
    }
    for key in ["d", "e2", "str", "num", "long"] {
        assert_eq!(c.dump(key), r.dump(key), "DUMP {key}");
    }
    // Consumers, PELs, the NACK zone and IDMP, both ways.
    workload(&mut r);
    workload(&mut c);
    for conn in [&mut r, &mut c] {
        conn.ok(&["XNACK", "s", "g1", "SILENT", "IDS", "1", "20-1"]);
        conn.ok(&["XADD", "i", "IDMP", "p1", "i1", "*", "a", "b"]);
    }
    for key in ["s", "d", "e", "i"] {
        let theirs = r.dump(key);
        let ours = c.dump(key);
        let copy = format!("{key}-copy");
        assert_eq!(c.restore(&copy, "0", &theirs, &[]), "OK");
        assert_eq!(r.restore(&copy, "0", &ours, &[]), "OK");
        assert_eq!(
            state(&mut c, &copy),
            state(&mut r, key),
            "Redis's {key} in echomq"
        );
        assert_eq!(
            state(&mut r, &copy),
            state(&mut c, key),
            "echomq's {key} in Redis"
        );
    }
}

/// A stream of 300 nodes (the RDB writer and loader take two threads from 256): DUMP is Redis
/// 8.8's payload byte for byte, and each side's payload restores on the other to the same
/// stream.
#[test]
fn a_stream_of_many_nodes_dumps_to_redis8_bytes_and_restores_both_ways() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    let long = "payload-".repeat(20);
    for conn in [&mut r, &mut c] {
        conn.ok(&["CONFIG", "SET", "stream-node-max-entries", "4"]);
        for n in 1..=1200u32 {
            let id = format!("{}-{}", 1000 + n / 3, n % 3);
            let value = match n % 5 {
                0 => n.to_string(),
                1 => long.clone(),
                _ => format!("v{n}"),
            };
            if n % 11 == 0 {
                conn.ok(&["XADD", "big", &id, "other", &value]);
            } else {
                conn.ok(&["XADD", "big", &id, "f", &value, "g", "x"]);
            }
        }
        for n in (7..1200u32).step_by(13) {
            conn.ok(&["XDEL", "big", &format!("{}-{}", 1000 + n / 3, n % 3)]);
        }
    }
    for compression in ["yes", "no"] {
        for conn in [&mut r, &mut c] {
            conn.ok(&["CONFIG", "SET", "rdbcompression", compression]);
        }
        let theirs = r.dump("big");
        let ours = c.dump("big");
        assert_eq!(ours, theirs, "DUMP big, rdbcompression {compression}");
        let copy = format!("big-{compression}");
        assert_eq!(c.restore(&copy, "0", &theirs, &[]), "OK");
        assert_eq!(r.restore(&copy, "0", &ours, &[]), "OK");
        assert_eq!(state(&mut c, &copy), state(&mut r, "big"));
        assert_eq!(state(&mut r, &copy), state(&mut c, "big"));
    }
}

#[test]
fn restore_errors_are_redis8_errors() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    for conn in [&mut r, &mut c] {
        deterministic(conn);
    }
    let good = r.dump("d");
    let mut bad_crc = good.clone();
    let n = bad_crc.len();
    bad_crc[n - 1] ^= 1;
    let mut newer = good.clone();
    newer[n - 10] = 99;
    let mut bad_body = good[..n - 10].to_vec();
    bad_body.truncate(bad_body.len() / 2);
    bad_body.extend_from_slice(&good[n - 10..n - 8]);
    bad_body.extend_from_slice(&[0; 8]);
    let cases: Vec<(&str, &str, &[u8], Vec<&str>)> = vec![
        ("d", "0", &good, vec![]),
        ("x1", "0", &bad_crc, vec![]),
        ("x1", "0", &newer, vec![]),
        ("x1", "0", &bad_body, vec![]),
        ("x1", "0", b"short", vec![]),
        ("x1", "-1", &good, vec![]),
        ("x1", "abc", &good, vec![]),
        ("x1", "0", &good, vec!["BOGUS"]),
        ("x1", "0", &good, vec!["IDLETIME", "-1"]),
        ("x1", "0", &good, vec!["FREQ", "256"]),
        ("x1", "0", &good, vec!["IDLETIME", "1", "FREQ", "1"]),
        ("x1", "0", &good, vec!["IDLETIME", "5", "REPLACE"]),
        ("x1", "0", &good, vec!["REPLACE", "FREQ", "7"]),
        ("d", "0", &good, vec!["REPLACE"]),
        ("x2", "1", &good, vec!["ABSTTL"]),
        ("x3", "100000", &good, vec![]),
    ];
    for (key, ttl, payload, more) in cases {
        let theirs = r.restore(key, ttl, payload, &more);
        let ours = c.restore(key, ttl, payload, &more);
        assert_eq!(ours, theirs, "RESTORE {key} {ttl} {more:?}");
    }
    for conn in [&mut r, &mut c] {
        assert_eq!(conn.ok(&["EXISTS", "x2"]), "0");
        let ttl: i64 = conn.ok(&["PTTL", "x3"]).parse().unwrap();
        assert!((1..=100_000).contains(&ttl), "{ttl}");
    }
    assert_eq!(state(&mut c, "x1"), state(&mut r, "x1"));
}

/// `payload` with its RDB version set to `version` and its checksum recomputed.
fn with_version(payload: &[u8], version: u16) -> Vec<u8> {
    let n = payload.len();
    let mut out = payload[..n - 10].to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let crc = echomq_engine::rdb::crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Redis 8.10 DUMPs a stream as 8.8 does but with version 15 (its stream layout is 8.8's):
/// echomq restores it to the same stream, where Redis 8.8 refuses it; a version-15 payload of
/// a type echomq does not hold (8.10's hash templates) is `Bad data format`.
#[test]
fn a_redis_8_10_stream_dump_restores_and_unknown_types_are_refused() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    deterministic(&mut r);
    workload(&mut r);
    for key in ["d", "s"] {
        let v15 = with_version(&r.dump(key), 15);
        let copy = format!("{key}-8.10");
        assert_eq!(c.restore(&copy, "0", &v15, &[]), "OK");
        assert_eq!(state(&mut c, &copy), state(&mut r, key));
        assert!(
            r.restore(&copy, "0", &v15, &[])
                .contains("version or checksum")
        );
        // echomq's own DUMP stays version 14, which Redis 8.8 restores.
        let ours = c.dump(&copy);
        assert_eq!(&ours[ours.len() - 10..ours.len() - 8], &14u16.to_le_bytes());
        assert_eq!(r.restore(&format!("{key}-back"), "0", &ours, &[]), "OK");
    }
    let template = with_version(&[29u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 15);
    assert!(
        c.restore("h", "0", &template, &[])
            .contains("Bad data format")
    );
    let too_new = with_version(&r.dump("d"), 16);
    assert!(
        c.restore("x", "0", &too_new, &[])
            .contains("version or checksum")
    );
}

/// Lists in both encodings, with plain nodes and with LZF-compressed inner nodes: DUMP is
/// Redis 8.8's payload byte for byte, and each side's payload restores on the other to the
/// same elements and encoding.
#[test]
fn lists_dump_to_redis8_bytes_and_restore_both_ways() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    let keys = ["small", "long", "plain", "deep"];
    for conn in [&mut r, &mut c] {
        conn.ok(&["RPUSH", "small", "a", "12", "-7", "hello"]);
        for n in 0..2000u32 {
            let v = if n % 3 == 0 {
                n.to_string()
            } else {
                format!("element-{n}")
            };
            conn.ok(&["RPUSH", "long", &v]);
        }
        conn.ok(&["LINSERT", "long", "AFTER", "element-700", "inserted"]);
        conn.ok(&["LREM", "long", "0", "element-5"]);
        conn.ok(&["RPUSH", "plain", "a", &"P".repeat(10000), "b"]);
        conn.ok(&["CONFIG", "SET", "list-compress-depth", "1"]);
        for n in 0..3000u32 {
            conn.ok(&["LPUSH", "deep", &format!("compressible-{}", n % 10)]);
        }
        conn.ok(&["CONFIG", "SET", "list-compress-depth", "0"]);
    }
    for key in keys {
        let theirs = r.dump(key);
        let ours = c.dump(key);
        assert_eq!(ours, theirs, "DUMP {key}");
        let copy = format!("{key}-copy");
        assert_eq!(c.restore(&copy, "0", &theirs, &[]), "OK");
        assert_eq!(r.restore(&copy, "0", &ours, &[]), "OK");
        for conn in [&mut r, &mut c] {
            assert_eq!(
                conn.ok(&["LRANGE", &copy, "0", "-1"]),
                conn.ok(&["LRANGE", key, "0", "-1"])
            );
        }
        assert_eq!(
            c.ok(&["OBJECT", "ENCODING", &copy]),
            r.ok(&["OBJECT", "ENCODING", &copy])
        );
    }
}

/// Lists of both encodings, a plain node and compressed nodes, written by the commands.
fn lists(c: &mut Conn) {
    c.ok(&["RPUSH", "small", "a", "12", "-7", "hello"]);
    for n in 0..1500u32 {
        c.ok(&["RPUSH", "long", &format!("element-{n}")]);
    }
    c.ok(&["RPUSH", "plain", "a", &"P".repeat(10000), "b"]);
    c.ok(&["CONFIG", "SET", "list-compress-depth", "1"]);
    for n in 0..2000u32 {
        c.ok(&["LPUSH", "deep", &format!("compressible-{}", n % 10)]);
    }
    c.ok(&["CONFIG", "SET", "list-compress-depth", "0"]);
}

/// Every element and the encoding of the lists [`lists`] writes.
fn lists_state(c: &mut Conn) -> String {
    ["small", "long", "plain", "deep"]
        .iter()
        .map(|key| {
            format!(
                "{key}: {} {}\n",
                c.ok(&["OBJECT", "ENCODING", key]),
                c.ok(&["LRANGE", key, "0", "-1"])
            )
        })
        .collect()
}

#[test]
fn lists_saved_by_either_side_load_into_the_other() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    lists(&mut c);
    assert_eq!(c.ok(&["SAVE"]), "OK");
    let ours = lists_state(&mut c);
    drop(server);
    check_rdb(&redis, &dir.path().join("dump.rdb"));
    let (server, addr) = start_redis(&redis, dir.path());
    let mut r = Conn::open(addr);
    assert_eq!(lists_state(&mut r), ours, "echomq's lists in Redis");
    r.ok(&["FLUSHALL"]);
    lists(&mut r);
    let theirs = lists_state(&mut r);
    r.ok(&["SAVE"]);
    drop(server);
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(lists_state(&mut c), theirs, "Redis's lists in echomq");
}

/// Strings of every encoding, bitmaps and HyperLogLogs (sparse, dense, with a cached and a
/// stale estimate) built by the same commands: echomq's DUMP payloads are Redis 8.8's byte for
/// byte, and each side's payload restores on the other to the same bytes, encoding and count.
#[test]
fn string_bitmap_and_hll_dumps_equal_redis8_bytes_and_restore_both_ways() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut r = Conn::open(raddr);
    let mut c = Conn::open(addr);
    let elements: Vec<String> = (0..3000).map(|i| format!("el{i}")).collect();
    for conn in [&mut r, &mut c] {
        conn.ok(&["SET", "int", "-1234567890123"]);
        conn.ok(&["SET", "emb", "short"]);
        conn.ok(&["SET", "raw", &"r".repeat(100)]);
        conn.ok(&["SET", "empty", ""]);
        conn.ok(&["APPEND", "app", "12"]);
        conn.ok(&["APPEND", "app", "34"]);
        conn.ok(&["SETBIT", "bits", "1000", "1"]);
        conn.ok(&["BITFIELD", "bits", "SET", "i16", "#3", "-300"]);
        conn.ok(&["SET", "zeros", &"0".repeat(50)]);
        conn.ok(&["BITOP", "XOR", "x", "bits", "zeros"]);
        conn.ok(&["PFADD", "sparse", "a", "b", "c"]);
        conn.ok(&["PFADD", "cached", "a", "b", "c", "d"]);
        conn.ok(&["PFCOUNT", "cached"]);
        let mut args = vec!["PFADD", "dense"];
        args.extend(elements.iter().map(String::as_str));
        conn.ok(&args);
        conn.ok(&["PFADD", "todense", "q"]);
        conn.ok(&["PFDEBUG", "TODENSE", "todense"]);
        conn.ok(&["PFMERGE", "merged", "sparse", "dense"]);
    }
    let keys = [
        "int", "emb", "raw", "empty", "app", "bits", "x", "sparse", "cached", "dense", "todense",
        "merged",
    ];
    let look = |conn: &mut Conn, key: &str| {
        format!(
            "{} {} {}",
            conn.ok(&["GET", key]),
            conn.ok(&["OBJECT", "ENCODING", key]),
            conn.ok(&["STRLEN", key])
        )
    };
    for key in keys {
        let theirs = r.dump(key);
        let ours = c.dump(key);
        assert_eq!(ours, theirs, "DUMP {key}");
        let copy = format!("{key}-copy");
        assert_eq!(c.restore(&copy, "0", &theirs, &[]), "OK");
        assert_eq!(r.restore(&copy, "0", &ours, &[]), "OK");
        assert_eq!(look(&mut c, key), look(&mut r, key), "{key}");
        assert_eq!(look(&mut c, &copy), look(&mut r, &copy), "{key} restored");
    }
    for key in ["sparse-copy", "cached-copy", "dense-copy", "merged-copy"] {
        assert_eq!(
            c.ok(&["PFCOUNT", key]),
            r.ok(&["PFCOUNT", key]),
            "PFCOUNT {key}"
        );
        assert_eq!(c.dump(key), r.dump(key), "DUMP {key} after PFCOUNT");
    }
}

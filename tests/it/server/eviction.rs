//! Eviction over raw RESP, as Redis 8.8's `maxmemory-policy`: writes past `maxmemory` evict
//! instead of answering `-OOM` while something is evictable, memory stays at the limit,
//! `volatile-*` policies never evict a key without a TTL, each eviction fires `evicted` and is
//! in the AOF as a `DEL` of its own, and OBJECT IDLETIME / FREQ and RESTORE's IDLETIME / FREQ
//! read and set the keys' access metadata on the test server's manual clock.
//!
//! `used_memory` counts the whole process, test included: like `memory.rs`, these tests need a
//! process of their own (`cargo nextest`, as CI runs them).

use echomq::testing::TestServer;

use super::{Wire, info_field, request, show};

const OOM: &[u8] = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n";
const LIMIT: u64 = 2 << 20;

fn used_memory(wire: &mut Wire) -> u64 {
    info_field(wire, "memory", "used_memory").parse().unwrap()
}

fn evicted_keys(wire: &mut Wire) -> u64 {
    info_field(wire, "stats", "evicted_keys").parse().unwrap()
}

/// SETs of `size`-byte values under `prefix:i` for `i` in `range` (with `extra` arguments),
/// pipelined [`PIPELINE`] at a time (a whole burst would sit in the query buffer, which counts
/// against `maxmemory` and no eviction can free); returns how many were refused with `-OOM`.
fn set_many(
    wire: &mut Wire,
    prefix: &str,
    range: std::ops::Range<usize>,
    size: usize,
    extra: &[&str],
) -> usize {
    const PIPELINE: usize = 32;
    let value = "v".repeat(size);
    let mut refused = 0;
    let keys: Vec<usize> = range.collect();
    for chunk in keys.chunks(PIPELINE) {
        for i in chunk {
            let key = format!("{prefix}:{i}");
            let mut argv = vec!["SET", key.as_str(), value.as_str()];
            argv.extend_from_slice(extra);
            wire.send(&request(&argv));
        }
        for _ in chunk {
            let reply = wire.read_reply();
            if reply == OOM {
                refused += 1;
            } else {
                assert_eq!(reply, b"+OK\r\n", "{}", show(&reply));
            }
        }
    }
    refused
}

fn count_existing(wire: &mut Wire, prefix: &str, range: std::ops::Range<usize>) -> usize {
    range
        .filter(|i| wire.command(&["EXISTS", &format!("{prefix}:{i}")]) == b":1\r\n")
        .count()
}

#[test]
fn every_allkeys_policy_evicts_instead_of_refusing_and_holds_the_limit() {
    for policy in [
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
        "allkeys-lrm",
    ] {
        let server = TestServer::start().unwrap();
        let mut wire = Wire::connect(&server);
        wire.expect(
            format!("CONFIG SET maxmemory 2mb maxmemory-policy {policy}\r\n").as_bytes(),
            b"+OK\r\n",
        );
        // 6 MB of values into 2 MB.
        assert_eq!(set_many(&mut wire, "k", 0..6000, 1000, &[]), 0, "{policy}");
        let used = used_memory(&mut wire);
        assert!(
            used <= LIMIT + LIMIT / 10,
            "{policy}: {used} bytes used under a {LIMIT}-byte limit"
        );
        let evicted = evicted_keys(&mut wire);
        let left: u64 = String::from_utf8_lossy(&wire.command(&["DBSIZE"]))
            .trim_start_matches(':')
            .trim()
            .parse()
            .unwrap();
        assert_eq!(evicted + left, 6000, "{policy}");
        assert!(evicted > 3000, "{policy}: {evicted} evicted");
        assert_eq!(info_field(&mut wire, "stats", "expired_keys"), "0");
    }
}

#[test]
fn volatile_policies_keep_the_keys_without_a_ttl_and_refuse_once_none_is_left() {
    for policy in [
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
        "volatile-lrm",
    ] {
        let server = TestServer::start().unwrap();
        let mut wire = Wire::connect(&server);
        assert_eq!(set_many(&mut wire, "p", 0..500, 1000, &[]), 0);
        let limit = used_memory(&mut wire) + (1 << 20);
        wire.expect(
            format!("CONFIG SET maxmemory {limit} maxmemory-policy {policy}\r\n").as_bytes(),
            b"+OK\r\n",
        );
        assert_eq!(
            set_many(&mut wire, "t", 0..3000, 1000, &["EX", "1000"]),
            0,
            "{policy}"
        );
        assert!(evicted_keys(&mut wire) > 1000, "{policy}");
        assert_eq!(count_existing(&mut wire, "p", 0..500), 500, "{policy}");
        // Only keys without a TTL now: once the last volatile key is gone, writes are refused.
        let refused = set_many(&mut wire, "q", 0..3000, 1000, &[]);
        assert!(refused > 1000, "{policy}: {refused} refused");
        assert_eq!(count_existing(&mut wire, "p", 0..500), 500, "{policy}");
        assert_eq!(count_existing(&mut wire, "t", 0..3000), 0, "{policy}");
    }
}

#[test]
fn evictions_fire_evicted_and_are_single_dels_in_the_aof() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start().unwrap();
    let handle = server.handle();
    handle
        .config_set("dir", dir.path().to_str().unwrap())
        .unwrap();
    handle.config_set("appendonly", "yes").unwrap();
    handle.start_persistence().unwrap();
    let mut subscriber = Wire::connect(&server);
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"CONFIG SET notify-keyspace-events Ee maxmemory-policy allkeys-random\r\n",
        b"+OK\r\n",
    );
    subscriber.expect(
        b"SUBSCRIBE __keyevent@0__:evicted\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$22\r\n__keyevent@0__:evicted\r\n:1\r\n",
    );
    assert_eq!(set_many(&mut wire, "a", 0..300, 1000, &[]), 0);
    let limit = used_memory(&mut wire) + 100_000;
    wire.expect(
        format!("CONFIG SET maxmemory {limit}\r\n").as_bytes(),
        b"+OK\r\n",
    );
    assert_eq!(set_many(&mut wire, "b", 0..300, 1000, &[]), 0);
    // Every command may evict (INFO too): the count is read once none can.
    wire.expect(b"CONFIG SET maxmemory 0\r\n", b"+OK\r\n");
    let evicted = evicted_keys(&mut wire);
    assert!(evicted >= 100, "{evicted} evicted");
    let message = subscriber.read_reply();
    let text = String::from_utf8_lossy(&message);
    assert!(
        text.starts_with("*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n"),
        "{text}"
    );

    let mut aof = Vec::new();
    for entry in std::fs::read_dir(dir.path().join("appendonlydir")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".incr.aof") {
            aof = std::fs::read(path).unwrap();
        }
    }
    let aof = String::from_utf8_lossy(&aof);
    assert_eq!(aof.matches("*2\r\n$3\r\nDEL\r\n").count() as u64, evicted);
    assert!(!aof.contains("MULTI"), "an eviction is never wrapped");
}

#[test]
fn object_idletime_and_freq_follow_the_clock_and_the_policy() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(b"SET k v\r\n", b"+OK\r\n");
    server.advance_ms(10_000);
    wire.expect(b"OBJECT IDLETIME k\r\n", b":10\r\n");
    // TYPE, EXISTS and OBJECT do not touch the key; a NO-TOUCH client's GET neither, its
    // TOUCH does.
    wire.expect(
        b"TYPE k\r\nEXISTS k\r\nCLIENT NO-TOUCH ON\r\nGET k\r\nOBJECT IDLETIME k\r\n",
        b"+string\r\n:1\r\n+OK\r\n$1\r\nv\r\n:10\r\n",
    );
    wire.expect(
        b"TOUCH k nokey k\r\nOBJECT IDLETIME k\r\nCLIENT NO-TOUCH OFF\r\n",
        b":2\r\n:0\r\n+OK\r\n",
    );
    server.advance_ms(3_000);
    wire.expect(b"GET k\r\nOBJECT IDLETIME k\r\n", b"$1\r\nv\r\n:0\r\n");
    wire.expect(
        b"OBJECT FREQ k\r\n",
        b"-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n",
    );

    wire.expect(
        b"CONFIG SET maxmemory-policy allkeys-lfu lfu-decay-time 1\r\nSET f v\r\nOBJECT FREQ f\r\nGET f\r\nOBJECT FREQ f\r\n",
        b"+OK\r\n+OK\r\n:5\r\n$1\r\nv\r\n:6\r\n",
    );
    wire.expect(
        b"OBJECT IDLETIME f\r\n",
        b"-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n",
    );
    // The counter loses one per `lfu-decay-time` minutes without access.
    server.advance_ms(3 * 60_000);
    wire.expect(b"OBJECT FREQ f\r\n", b":3\r\n");
    wire.expect(b"OBJECT FREQ nokey\r\n", b"$-1\r\n");
}

#[test]
fn restore_sets_idletime_or_freq_as_the_policy_tracks() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(b"SET src v\r\n", b"+OK\r\n");
    let dump = wire.command(&["DUMP", "src"]);
    // `$<len>\r\n<payload>\r\n`
    let start = dump.iter().position(|&b| b == b'\n').unwrap() + 1;
    let payload = &dump[start..dump.len() - 2];
    let restore = |wire: &mut Wire, key: &str, option: &str, n: &str| {
        let mut req = Vec::new();
        let args: [&[u8]; 6] = [
            b"RESTORE",
            key.as_bytes(),
            b"0",
            payload,
            option.as_bytes(),
            n.as_bytes(),
        ];
        req.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            req.extend_from_slice(a);
            req.extend_from_slice(b"\r\n");
        }
        wire.send(&req);
        wire.read_reply()
    };
    assert_eq!(restore(&mut wire, "r1", "IDLETIME", "100"), b"+OK\r\n");
    wire.expect(b"OBJECT IDLETIME r1\r\n", b":100\r\n");
    // FREQ is accepted but not tracked without an LFU policy: the key is new.
    assert_eq!(restore(&mut wire, "r2", "FREQ", "42"), b"+OK\r\n");
    wire.expect(b"OBJECT IDLETIME r2\r\n", b":0\r\n");
    wire.expect(b"CONFIG SET maxmemory-policy volatile-lfu\r\n", b"+OK\r\n");
    assert_eq!(restore(&mut wire, "r3", "FREQ", "42"), b"+OK\r\n");
    wire.expect(b"OBJECT FREQ r3\r\n", b":42\r\n");
    assert_eq!(restore(&mut wire, "r4", "IDLETIME", "100"), b"+OK\r\n");
    wire.expect(b"OBJECT FREQ r4\r\n", b":5\r\n");
}

#[test]
fn randomkey_draws_live_keys_and_deletes_the_expired_it_meets() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(b"RANDOMKEY\r\n", b"$-1\r\n");
    wire.expect(
        b"SET a 1\r\nSET b 2 PX 10\r\nSET c 3 PX 10\r\n",
        b"+OK\r\n+OK\r\n+OK\r\n",
    );
    // Expired but not yet deleted: RANDOMKEY only ever answers `a`.
    server.clock().advance(100);
    for _ in 0..20 {
        wire.expect(b"RANDOMKEY\r\n", b"$1\r\na\r\n");
    }
    assert_eq!(info_field(&mut wire, "stats", "expired_keys"), "2");
    wire.expect(b"DEL a\r\nRANDOMKEY\r\n", b":1\r\n$-1\r\n");
}

#[test]
fn the_cron_goes_on_evicting_after_a_command_ran_out_of_time() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    assert_eq!(set_many(&mut wire, "k", 0..3000, 1000, &[]), 0);
    // Tenacity 0: a command evicts 16 keys and goes ahead; only the cron (at hz 100) gets
    // memory back under the limit. The test reads the keyspace directly meanwhile, which runs
    // no command.
    let limit = used_memory(&mut wire) / 2;
    wire.expect(
        format!(
            "CONFIG SET hz 100 maxmemory-eviction-tenacity 0 maxmemory-policy allkeys-random \
             maxmemory {limit}\r\n"
        )
        .as_bytes(),
        b"+OK\r\n",
    );
    super::wait_until("the cron evicted half the keys", || {
        server.keyspace().run(|db, _| db.len()) < 1600
    });
    assert!(server.keyspace().evicted_keys() > 1400);
}

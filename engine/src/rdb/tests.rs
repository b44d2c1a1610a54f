//! The RDB codec's round trips and its refusals of damaged input.

use std::sync::Arc;

use bytes::Bytes;

use crate::clock::{Clock, ManualClock};
use crate::keyspace::{Keyspace, Value};

use super::file::{self, DbSnapshot, LoadOptions, SaveOptions};
use super::{RDB_VERSION, dump};

const NOW: u64 = 1_700_000_000_000;

fn keyspace() -> (Arc<Keyspace>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(NOW));
    (Arc::new(Keyspace::new(clock.clone())), clock)
}

fn run(ks: &Keyspace, command: &str) {
    let argv: Vec<&str> = command.split_whitespace().collect();
    ks.execute(&argv)
        .unwrap_or_else(|e| panic!("{command}: {e}"));
}

/// A stream with every part RDB saves: several nodes (with tombstones), groups with pending
/// entries, consumers with and without them, a NACKed entry, IDMP producers, and a string.
pub(crate) fn rich_keyspace() -> (Arc<Keyspace>, Arc<ManualClock>) {
    let (ks, clock) = keyspace();
    ks.config().set_node_entries_max(3);
    for i in 1..=10 {
        run(&ks, &format!("XADD s {i}-1 f v{i} g {}", i * 1000));
    }
    run(&ks, "XADD s 11-0 other 1");
    run(&ks, "XDEL s 2-1 5-1");
    run(&ks, "XGROUP CREATE s g1 0");
    run(&ks, "XGROUP CREATE s g2 $");
    run(&ks, "XREADGROUP GROUP g1 alice COUNT 4 STREAMS s >");
    clock.advance(5);
    run(&ks, "XREADGROUP GROUP g1 bob COUNT 2 STREAMS s >");
    run(&ks, "XGROUP CREATECONSUMER s g1 carol");
    run(&ks, "XACK s g1 1-1");
    run(&ks, "XNACK s g1 SILENT IDS 1 3-1");
    run(&ks, "XADD s IDMP p1 i1 * a b");
    run(&ks, "XADD s IDMP p2 i9 * a c");
    run(&ks, "XADD s IDMP p1 i1 * a b");
    ks.run(|db, _| {
        db.insert(b"str", Value::String(Bytes::from_static(b"hello").into()));
        db.set_expiry(b"str", Some(NOW + 100_000));
    });
    (ks, clock)
}

fn snapshot(ks: &Keyspace) -> Vec<DbSnapshot> {
    ks.run_all(|dbs, _| {
        dbs.iter()
            .map(|db| {
                db.keys()
                    .filter_map(|k| Some((Bytes::from(k), db.get(k)?.clone(), db.expiry(k))))
                    .collect()
            })
            .collect()
    })
}

fn save(dbs: &[DbSnapshot], compress: bool, checksum: bool) -> Vec<u8> {
    let opts = SaveOptions {
        compress,
        checksum,
        now_ms: NOW,
        redis_ver: "8.8.0".into(),
        ctime_s: NOW / 1000,
        used_mem: 1 << 20,
        aof_base: false,
        functions: Vec::new(),
        key_save_delay_us: 0,
    };
    let mut out = Vec::new();
    file::write(dbs, &opts, &mut out).unwrap();
    out
}

fn load(bytes: &[u8]) -> Result<file::Loaded, crate::error::RdbError> {
    file::read(
        bytes,
        &LoadOptions {
            now_ms: NOW,
            databases: 16,
            drop_expired: true,
            limits: Default::default(),
        },
    )
}

fn dumps(dbs: &[DbSnapshot]) -> Vec<(Bytes, Vec<u8>, Option<u64>)> {
    let mut all: Vec<_> = dbs
        .iter()
        .flatten()
        .map(|(k, v, e)| (k.clone(), dump::dump(v, NOW, false), *e))
        .collect();
    all.sort();
    all
}

#[test]
fn function_libraries_round_trip_through_a_file_before_the_keys() {
    let (ks, _) = rich_keyspace();
    let dbs = snapshot(&ks);
    let codes = vec![
        Bytes::from_static(b"#!lua name=a\nredis.register_function('f', function() end)"),
        Bytes::from(format!("#!lua name=b\n-- {}", "x".repeat(200))),
    ];
    for compress in [true, false] {
        let opts = SaveOptions {
            compress,
            checksum: true,
            now_ms: NOW,
            redis_ver: "8.8.0".into(),
            ctime_s: NOW / 1000,
            used_mem: 1 << 20,
            aof_base: false,
            functions: codes.clone(),
            key_save_delay_us: 0,
        };
        let mut out = Vec::new();
        file::write(&dbs, &opts, &mut out).unwrap();
        let loaded = load(&out).unwrap();
        assert_eq!(loaded.functions, codes);
        assert_eq!(dumps(&loaded.dbs), dumps(&dbs));
    }
    // A pre-GA record is refused, as Redis 8.8 refuses it.
    let mut bytes = save(&dbs, false, false);
    let at = bytes
        .windows(3)
        .position(|w| w == [0xFE, 0x00, 0xFB])
        .unwrap();
    bytes.insert(at, 246);
    assert!(load(&bytes).is_err());
}

#[test]
fn a_rich_keyspace_round_trips_through_a_file() {
    let (ks, _) = rich_keyspace();
    let before = snapshot(&ks);
    for (compress, checksum) in [(true, true), (false, false)] {
        let bytes = save(&before, compress, checksum);
        assert!(bytes.starts_with(b"REDIS0014"));
        let loaded = load(&bytes).unwrap();
        assert_eq!(loaded.keys_loaded, 2);
        assert_eq!(loaded.bytes, bytes.len());
        for (_, value, _) in loaded.dbs.iter().flatten() {
            if let Value::Stream(s) = value {
                s.check_invariants().unwrap();
                let g1 = s.group(b"g1").unwrap();
                assert_eq!(g1.nacked_count(), 1);
                assert_eq!(g1.pending_count(), 5);
                assert!(g1.consumer(b"carol").is_some());
                assert_eq!(s.idmp().info(NOW).iids_duplicates, 1);
            }
        }
        assert_eq!(dumps(&loaded.dbs), dumps(&before));
    }
}

#[test]
fn every_truncation_and_every_flipped_byte_is_refused_or_loads_whole() {
    let (ks, _) = rich_keyspace();
    let bytes = save(&snapshot(&ks), true, true);
    for cut in 0..bytes.len() {
        assert!(load(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x5a;
        // With the checksum on, every change is caught.
        assert!(load(&bad).is_err(), "flip at {at}");
    }
    let unchecked = save(&snapshot(&ks), true, false);
    for at in 0..unchecked.len() {
        let mut bad = unchecked.clone();
        bad[at] ^= 0x5a;
        if let Ok(loaded) = load(&bad) {
            for (_, value, _) in loaded.dbs.iter().flatten() {
                if let Value::Stream(s) = value {
                    s.check_invariants().unwrap();
                }
            }
        }
    }
}

#[test]
fn dump_payloads_carry_version_and_checksum() {
    let (ks, clock) = rich_keyspace();
    let value = ks.run(|db, _| db.get(b"s").unwrap().clone());
    let payload = dump::dump(&value, clock.now_ms(), true);
    assert_eq!(payload[0], super::types::STREAM_WRITTEN);
    let n = payload.len();
    assert_eq!(&payload[n - 10..n - 8], &RDB_VERSION.to_le_bytes());
    assert!(dump::verify(&payload));
    let back = dump::restore(&payload, NOW, &Default::default()).unwrap();
    assert_eq!(dump::dump(&back, NOW, true), payload);
    let mut bad = payload.clone();
    bad[3] ^= 1;
    assert!(!dump::verify(&bad));
    let mut newer = payload.clone();
    newer[n - 10] = super::RDB_VERSION_READ as u8 + 1;
    assert!(!dump::verify(&newer));
    assert!(!dump::verify(&payload[..9]));
    // A zero checksum is not checked, as Redis does not check it.
    let mut unchecked = payload.clone();
    unchecked[n - 8..].fill(0);
    assert!(dump::verify(&unchecked));
    for cut in 0..n - 10 {
        let mut short = payload[..cut].to_vec();
        short.extend_from_slice(&payload[n - 10..n - 8]);
        short.extend_from_slice(&[0; 8]);
        assert!(
            dump::restore(&short, NOW, &Default::default()).is_err(),
            "cut at {cut}"
        );
    }
}

#[test]
fn a_string_dump_is_redis_bytes() {
    // Redis 8.8: SET k hello; DUMP k.
    let payload = dump::dump(
        &Value::String(Bytes::from_static(b"hello").into()),
        NOW,
        true,
    );
    assert_eq!(&payload[..8], b"\x00\x05hello\x0e");
    assert_eq!(payload.len(), 1 + 1 + 5 + 2 + 8);
}

#[test]
fn expired_keys_are_dropped_on_load() {
    let dbs = vec![vec![
        (
            Bytes::from_static(b"old"),
            Value::String(Bytes::from_static(b"x").into()),
            Some(NOW - 1),
        ),
        (
            Bytes::from_static(b"new"),
            Value::String(Bytes::from_static(b"y").into()),
            Some(NOW + 1),
        ),
    ]];
    let loaded = load(&save(&dbs, true, true)).unwrap();
    assert_eq!((loaded.keys_loaded, loaded.keys_expired), (1, 1));
}

/// Any engine state (a random operation sequence through the engine fuzzer's decoder, every
/// invariant checked as it runs) saved to a file loads back to values that pass their
/// invariants and DUMP to the same bytes, with the same expiry times.
fn round_trip(data: &[u8]) {
    let (ks, clock) = crate::fuzzing::build(data);
    let now = clock.now_ms();
    let before = snapshot(&ks);
    let opts = SaveOptions {
        compress: data.len() % 2 == 0,
        checksum: true,
        now_ms: now,
        redis_ver: "8.8.0".into(),
        ctime_s: now / 1000,
        used_mem: 0,
        aof_base: false,
        functions: Vec::new(),
        key_save_delay_us: 0,
    };
    let mut bytes = Vec::new();
    file::write(&before, &opts, &mut bytes).unwrap();
    let loaded = file::read(
        &bytes,
        &LoadOptions {
            now_ms: now,
            databases: 16,
            drop_expired: false,
            limits: Default::default(),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dump_all = |dbs: &[DbSnapshot]| {
        let mut all: Vec<_> = dbs
            .iter()
            .flatten()
            .map(|(k, v, e)| (k.clone(), dump::dump(v, now, false), *e))
            .collect();
        all.sort();
        all
    };
    for (_, value, _) in loaded.dbs.iter().flatten() {
        if let Value::Stream(s) = value {
            s.check_invariants().unwrap();
        }
    }
    assert_eq!(dump_all(&loaded.dbs), dump_all(&before));
}

#[test]
fn pseudo_random_engine_states_round_trip() {
    for data in echomq_testkit::inputs(200, 2000) {
        round_trip(&data);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    #[test]
    fn any_engine_state_round_trips(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000)) {
        round_trip(&data);
    }
}

/// A file past the size from which the checksum is computed on a second thread: a good file
/// loads, a flipped byte is a checksum error, bytes after the checksum change nothing.
#[test]
fn a_large_files_checksum_is_checked() {
    let mut x: u32 = 1;
    let big: Vec<u8> = (0..3 << 20)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    let dbs = vec![vec![(
        Bytes::from_static(b"big"),
        Value::String(Bytes::from(big).into()),
        None,
    )]];
    let bytes = save(&dbs, false, true);
    assert!(bytes.len() > 3 << 20);
    assert_eq!(load(&bytes).unwrap().keys_loaded, 1);
    let mut bad = bytes.clone();
    bad[bytes.len() / 2] ^= 1;
    assert!(matches!(
        load(&bad),
        Err(crate::error::RdbError::Checksum { .. })
    ));
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"trailing");
    let loaded = load(&longer).unwrap();
    assert_eq!((loaded.keys_loaded, loaded.bytes), (1, bytes.len()));
}

/// A payload is encoded under the limits the load is given (the server's current ones), as
/// Redis's loader reads `server.*_max_listpack_*`: compact payloads past tiny limits become
/// tables, and a table payload within them a listpack, unless a member is too long.
#[test]
fn restore_encodes_under_the_given_limits() {
    let (ks, clock) = keyspace();
    run(&ks, "HSET h a 1 b 2 c 3");
    run(&ks, "SADD si 1 2 3");
    run(&ks, "SADD sl a b c");
    run(&ks, "ZADD z 1 a 2 b 3 c");
    ks.config()
        .encoding
        .zset_max_listpack_value
        .store(8, std::sync::atomic::Ordering::Relaxed);
    run(&ks, "ZADD zlong 1 aaaaaaaaaaaa");
    let payload = |key: &str| {
        let value = ks.run(|db, _| db.get(key.as_bytes()).unwrap().clone());
        dump::dump(&value, clock.now_ms(), false)
    };
    let encoding = |value: &Value| match value {
        Value::Hash(h) => h.encoding(),
        Value::Set(s) => s.encoding(),
        Value::ZSet(z) => z.encoding(),
        _ => "other",
    };
    let mut tiny = super::LoadLimits::default();
    tiny.encoding.hash_entries = 2;
    tiny.encoding.set_intset_entries = 2;
    tiny.encoding.set_entries = 2;
    tiny.encoding.zset_entries = 2;
    tiny.encoding.zset_value = 8;
    for (key, compact, table) in [
        ("h", "listpack", "hashtable"),
        ("si", "intset", "hashtable"),
        ("sl", "listpack", "hashtable"),
        ("z", "listpack", "skiplist"),
    ] {
        let p = payload(key);
        let under = |lim: &super::LoadLimits| encoding(&dump::restore(&p, NOW, lim).unwrap());
        assert_eq!(under(&super::LoadLimits::default()), compact, "{key}");
        assert_eq!(under(&tiny), table, "{key}");
    }
    let p = payload("zlong");
    assert_eq!(p[0], super::zset::types::ZSET_2);
    let back = dump::restore(&p, NOW, &Default::default()).unwrap();
    assert_eq!(encoding(&back), "listpack");
    let back = dump::restore(&p, NOW, &tiny).unwrap();
    assert_eq!(encoding(&back), "skiplist");
}

//! RDB save and load of a large stream, embedded: `rdb/save` writes the keyspace as an RDB file
//! into memory ([`echomq::engine::rdb::file::write`], LZF on, as SAVE and BGSAVE write it),
//! `rdb/load` decodes that file back into values ([`echomq::engine::rdb::file::read`], every
//! value checked as the loader checks it). The stream has [`ENTRIES`] entries, a group that
//! read them all and [`PENDING`] of them still pending over four consumers.
//!
//! Target: SAVE and load of a 10M-entry stream with 100k pending at most 1.0x Redis
//! 8.8's time on the same data; this bench is the embedded half of that comparison (run it on
//! a quiet machine, at a larger `ENTRIES`). Under `cargo test --benches` each runs once.

// A benchmark's own data: a failure is a bug in the bench, shown by the panic.
#![allow(clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput};
use echomq::engine::rdb::file::{self, DbSnapshot, LoadOptions, SaveOptions};
use echomq::engine::{Keyspace, ManualClock};

/// Entries in the stream.
const ENTRIES: u64 = 200_000;
/// Entries left pending.
const PENDING: u64 = 10_000;
/// 2024-01-01 00:00:00 UTC.
const START_MS: u64 = 1_704_067_200_000;

fn run(ks: &Keyspace, words: &[&str]) {
    if let Err(e) = ks.execute(words) {
        panic!("{words:?}: {e}");
    }
}

/// The keyspace to save, as a SAVE copies it.
fn snapshot() -> Vec<DbSnapshot> {
    let ks = Keyspace::new(Arc::new(ManualClock::new(START_MS)));
    for n in 1..=ENTRIES {
        let id = format!("{}-{}", START_MS + n / 10, n % 10);
        let seq = n.to_string();
        run(
            &ks,
            &[
                "XADD",
                "s",
                &id,
                "user",
                "u123",
                "seq",
                &seq,
                "payload",
                "abcdefghij",
            ],
        );
    }
    run(&ks, &["XGROUP", "CREATE", "s", "g", "0"]);
    let per_consumer = (PENDING / 4).to_string();
    for consumer in ["a", "b", "c", "d"] {
        run(
            &ks,
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                consumer,
                "COUNT",
                &per_consumer,
                "STREAMS",
                "s",
                ">",
            ],
        );
    }
    ks.run_all(|dbs, _| {
        dbs.iter()
            .map(|db| {
                db.keys()
                    .filter_map(|k| Some((bytes::Bytes::from(k), db.get(k)?.clone(), db.expiry(k))))
                    .collect()
            })
            .collect()
    })
}

fn options() -> SaveOptions {
    SaveOptions {
        compress: true,
        checksum: true,
        now_ms: START_MS,
        redis_ver: "7.4.0".into(),
        ctime_s: START_MS / 1000,
        used_mem: 0,
        aof_base: false,
        functions: Vec::new(),
        key_save_delay_us: 0,
    }
}

fn bench(c: &mut Criterion) {
    let dbs = snapshot();
    let mut bytes = Vec::new();
    file::write(&dbs, &options(), &mut bytes).expect("in memory");
    let mut group = c.benchmark_group("rdb");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ENTRIES));
    group.bench_function("save", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(bytes.len());
            file::write(black_box(&dbs), &options(), &mut out).expect("in memory");
            out
        })
    });
    let load = LoadOptions {
        now_ms: START_MS,
        databases: 16,
        drop_expired: true,
        limits: Default::default(),
    };
    group.bench_function("load", |b| {
        b.iter(|| file::read(black_box(&bytes), &load).expect("loads"))
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}

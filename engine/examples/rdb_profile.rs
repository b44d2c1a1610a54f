//! Saves and loads one large stream as an RDB file in memory, for instruction counts of the
//! two halves (`valgrind --tool=callgrind` on a `--profile bench` build, then
//! `callgrind_annotate --inclusive=yes` and look at `rdb::file::write` / `rdb::file::read`;
//! `fill` only builds the stream, `save` also writes the file once, `load` writes it and
//! reads it back: with a worker thread counted too, `save - fill` and `load - save` are the
//! two halves' totals).
//! The data is `scripts/bench-rdb`'s: `XADD s * f1 v1 f2 v2` `entries` times, a thousand ids per
//! millisecond, a group with `pending` entries delivered to one consumer; LZF and the checksum
//! on, as SAVE writes with the default settings.
//!
//!     cargo build --profile bench -p echomq-engine --example rdb_profile
//!     target/release/examples/rdb_profile [entries] [pending] [fill|save|load]
//!
//! It also prints the wall time of the write and of the read (to standard error).

// A tool's own data: a failure is a bug in the tool, shown by the panic.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Instant;

use echomq_engine::rdb::file::{self, DbSnapshot, LoadOptions, SaveOptions};
use echomq_engine::{Keyspace, ManualClock};

/// Ids per millisecond: about what `redis-cli --pipe` gets from a server (bench-rdb's fill),
/// so a node's entries mostly share their master's millisecond, as in bench-rdb's files.
const IDS_PER_MS: u64 = 1000;

/// 2024-01-01 00:00:00 UTC.
const START_MS: u64 = 1_704_067_200_000;

fn run(ks: &Keyspace, words: &[&str]) {
    if let Err(e) = ks.execute(words) {
        panic!("{words:?}: {e}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let entries: u64 = args.get(1).map_or(200_000, |a| a.parse().unwrap());
    let pending: u64 = args.get(2).map_or(10_000, |a| a.parse().unwrap());
    let what = args.get(3).map_or("load", String::as_str);
    let ks = Keyspace::new(Arc::new(ManualClock::new(START_MS)));
    for n in 0..entries {
        let id = format!("{}-{}", START_MS + n / IDS_PER_MS, n % IDS_PER_MS);
        run(&ks, &["XADD", "s", &id, "f1", "v1", "f2", "v2"]);
    }
    run(&ks, &["XGROUP", "CREATE", "s", "g", "0"]);
    let count = pending.to_string();
    run(
        &ks,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            &count,
            "STREAMS",
            "s",
            ">",
        ],
    );
    let dbs: Vec<DbSnapshot> = ks.run_all(|dbs, _| {
        dbs.iter()
            .map(|db| {
                db.keys()
                    .filter_map(|k| Some((bytes::Bytes::from(k), db.get(k)?.clone(), db.expiry(k))))
                    .collect()
            })
            .collect()
    });
    let options = SaveOptions {
        compress: true,
        checksum: true,
        now_ms: START_MS,
        redis_ver: "8.8.0".into(),
        ctime_s: START_MS / 1000,
        used_mem: 0,
        aof_base: false,
        functions: Vec::new(),
        key_save_delay_us: 0,
    };
    if what == "fill" {
        return;
    }
    let mut bytes = Vec::new();
    let started = Instant::now();
    file::write(&dbs, &options, &mut bytes).expect("in memory");
    eprintln!("write: {:.3} s", started.elapsed().as_secs_f64());
    if what == "load" {
        let load = LoadOptions {
            now_ms: START_MS,
            databases: 16,
            drop_expired: true,
            limits: Default::default(),
        };
        let started = Instant::now();
        let loaded = file::read(&bytes, &load).expect("loads");
        eprintln!("read: {:.3} s", started.elapsed().as_secs_f64());
        assert_eq!(loaded.keys_loaded, 1);
    }
    println!("{} bytes", bytes.len());
}

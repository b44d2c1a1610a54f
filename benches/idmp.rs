//! Idempotent production (XADD IDMP) against plain XADD, embedded, through
//! [`Keyspace::execute`] (the argv path a server runs):
//!
//! - `xadd_idmp/plain`: `XADD bench * f1 v1 f2 v2`, the baseline;
//! - `xadd_idmp/fresh`: `XADD bench IDMP p <iid> * f1 v1 f2 v2` with a new 16-byte iid each
//!   time (an insert, and at the default `stream-idmp-maxsize` of 100 an eviction, per append);
//! - `xadd_idmp/duplicate`: the same IDMP XADD again and again (a lookup answered with the
//!   original id; nothing appended).
//!
//! The clock moves 1 ms every [`ADDS_PER_MS`] appends, as in `engine`'s `xadd` group. Target:
//! at least Redis 8.8's rate for each (`scripts/bench-vs-redis`, load `xadd_idmp`,
//! compares over RESP). Under `cargo test --benches` each runs once as a smoke test.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use echomq::engine::{Keyspace, ManualClock};

const KEY: &[u8] = b"bench";
/// Appends per millisecond of the manual clock.
const ADDS_PER_MS: u64 = 5000;
/// 2024-01-01 00:00:00 UTC.
const START_MS: u64 = 1_704_067_200_000;
/// A new stream past this length, so memory stays bounded however long criterion runs.
const STREAM_LEN_MAX: u64 = 5_000_000;

/// What each append sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Load {
    Plain,
    Fresh,
    Duplicate,
}

#[derive(Debug)]
struct Appender {
    keyspace: Keyspace,
    clock: Arc<ManualClock>,
    load: Load,
    sent: u64,
    len: u64,
}

impl Appender {
    fn new(load: Load) -> Appender {
        let clock = Arc::new(ManualClock::new(START_MS));
        let appender = Appender {
            keyspace: Keyspace::new(clock.clone()),
            clock,
            load,
            sent: 0,
            len: 0,
        };
        if load == Load::Duplicate {
            assert!(appender.keyspace.execute(&DUPLICATE_ARGV).is_ok());
        }
        appender
    }

    fn run(&mut self, iters: u64) -> Duration {
        if self.load != Load::Duplicate && self.len + iters > STREAM_LEN_MAX {
            drop(self.keyspace.run(|db, _| db.remove(KEY)));
            self.len = 0;
        }
        let mut iid = *b"iid-0000000000000000";
        let mut ok = 0u64;
        let start = Instant::now();
        for _ in 0..iters {
            if self.sent % ADDS_PER_MS == 0 {
                self.clock.advance(1);
            }
            self.sent += 1;
            let reply = match self.load {
                Load::Plain => self.keyspace.execute(black_box(&PLAIN_ARGV)),
                Load::Fresh => {
                    write_hex(&mut iid[4..], self.sent);
                    self.keyspace.execute(black_box(&[
                        b"XADD",
                        KEY,
                        b"IDMP",
                        b"p",
                        &iid[..],
                        b"*",
                        b"f1",
                        b"v1",
                        b"f2",
                        b"v2",
                    ]))
                }
                Load::Duplicate => self.keyspace.execute(black_box(&DUPLICATE_ARGV)),
            };
            ok += u64::from(black_box(reply).is_ok());
        }
        let elapsed = start.elapsed();
        assert_eq!(ok, iters, "some XADDs failed");
        if self.load != Load::Duplicate {
            self.len += iters;
        }
        elapsed
    }
}

/// The baseline append.
const PLAIN_ARGV: [&[u8]; 7] = [b"XADD", KEY, b"*", b"f1", b"v1", b"f2", b"v2"];
/// The append every duplicate iteration repeats.
const DUPLICATE_ARGV: [&[u8]; 10] = [
    b"XADD",
    KEY,
    b"IDMP",
    b"p",
    b"the-iid-00000000",
    b"*",
    b"f1",
    b"v1",
    b"f2",
    b"v2",
];

/// `n` as 16 lower-case hex digits into `out`.
fn write_hex(out: &mut [u8], mut n: u64) {
    for byte in out.iter_mut().rev() {
        *byte = b"0123456789abcdef"[(n & 0xF) as usize];
        n >>= 4;
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("xadd_idmp");
    group
        .throughput(Throughput::Elements(1))
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (name, load) in [
        ("plain", Load::Plain),
        ("fresh", Load::Fresh),
        ("duplicate", Load::Duplicate),
    ] {
        let mut appender = Appender::new(load);
        group.bench_function(name, |b| b.iter_custom(|iters| appender.run(iters)));
    }
    group.finish();
    c.final_summary();
}

//! Shared pieces of the engine benchmarks: a counting allocator for memory figures, and the
//! stream builders the timed benchmarks start from.

mod counting_alloc;

pub use counting_alloc::Window;

use std::sync::Arc;

use echomq::engine::{AddId, Keyspace, ManualClock, NodeLimits, Stream, StreamId, Value};

/// The key every benchmark stream lives under.
pub const KEY: &[u8] = b"bench";

/// The entry of every benchmark: two small fields, as in the performance targets.
pub const FIELDS: [&[u8]; 4] = [b"f1", b"v1", b"f2", b"v2"];

/// `XADD <KEY> * f1 v1 f2 v2`.
pub const XADD_ARGV: [&[u8]; 7] = [b"XADD", KEY, b"*", b"f1", b"v1", b"f2", b"v2"];

/// `*` appends per millisecond of the simulated clock: about what one core sustains, so ids
/// look like a real clock's (a run of sequence numbers under each ms).
pub const ADDS_PER_MS: u64 = 5000;

/// Where simulated clocks start (2024-01-01T00:00:00Z), so `*` ids have realistic widths.
pub const START_MS: u64 = 1_704_067_200_000;

/// A stream of `len` entries with explicit ids `1-0, 2-0, ...` (entry `i` has id `i+1-0`),
/// built through the typed API with the default node limits.
pub fn build_stream(len: u64) -> Stream {
    let limits = NodeLimits::default();
    let mut stream = Stream::new();
    for i in 0..len {
        let added = stream.add(AddId::Explicit(entry_id(i)), &FIELDS, START_MS, limits);
        assert!(
            added.is_ok(),
            "building a benchmark stream failed: {added:?}"
        );
    }
    stream
}

/// The id [`build_stream`] gives entry `i`.
pub fn entry_id(i: u64) -> StreamId {
    StreamId::new(i + 1, 0)
}

/// A keyspace on a manual clock holding `stream` under [`KEY`].
pub fn keyspace_with(stream: Stream) -> Keyspace {
    let keyspace = Keyspace::new(Arc::new(ManualClock::new(START_MS)));
    keyspace.run(|db, _| db.insert(KEY, Value::Stream(Box::new(stream))));
    keyspace
}

/// A compact count for benchmark names: `10k`, `1.1M`.
pub fn human(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 100_000 == 0 => trim_zero(n as f64 / 1e6, "M"),
        n if n >= 1_000 && n % 100 == 0 => trim_zero(n as f64 / 1e3, "k"),
        n => n.to_string(),
    }
}

fn trim_zero(v: f64, unit: &str) -> String {
    let s = format!("{v:.1}");
    format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
}

/// A tiny deterministic generator (xorshift64*), for scattered read positions.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

//! Randomized differential sequences for the core stream commands.
//!
//! A sequence picks node limits, then runs commands: XADD with explicit increasing ids and
//! `<ms>-*` (never bare `*`: the two clocks differ), field sets that repeat (SAMEFIELDS) or not,
//! values that are short, integer-looking (`123`, `-5`, `007`) or long (up to ~300 bytes, across
//! the listpack size classes), trimming inside XADD and by XTRIM (MAXLEN/MINID, `=`/`~`, LIMIT),
//! XDEL, XSETID, XRANGE/XREVRANGE with COUNT, XLEN, and CONFIG SET of the node limits midway.
//!
//! Operations are generated as plans relative to the stream's current state ("the next id
//! after the last one", "the third live entry") and turned into arguments against the engine's
//! state just before they run. So a shrunk sequence (proptest drops operations) still makes
//! sense, and most commands succeed instead of failing on a stale id. Error paths are still
//! generated on purpose, at a low rate.
//!
//! After every command the key's `XINFO STREAM` bookkeeping is compared with the engine's, which
//! checks node boundaries (`radix-tree-keys`) command by command; at the end, the content.

mod render;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use crate::support::differ::{Differ, Mismatch};

use render::{config_set, render};

/// Seed used unless `PROPTEST_RNG_SEED` is set, so CI runs are reproducible.
const SEED_DEFAULT: u64 = 0xEC40_2024;
/// Operations per sequence, at most.
const OPS_MAX: usize = 250;
/// `stream-node-max-entries` values tried (0 = no count limit).
const NODE_ENTRIES: [u64; 6] = [0, 1, 2, 7, 10, 100];
/// `stream-node-max-bytes` values tried (0 = 1 GiB).
const NODE_BYTES: [u64; 5] = [0, 50, 300, 1024, 4096];
/// The keys written: mostly the first; the last is rarely written, so often missing.
const KEYS: [&str; 3] = ["s", "t", "u"];

/// Runs `cases` random sequences (`PROPTEST_CASES` overrides) against `differ`, shrinking a
/// failure to a short reproduction.
pub fn run(differ: Differ, cases: u32) {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if matches!(config.rng_seed, RngSeed::Random) {
        config.rng_seed = RngSeed::Fixed(SEED_DEFAULT);
    }
    config.failure_persistence = None;
    config.max_shrink_iters = 2000;
    config.max_shrink_time = 120_000;
    let seed = config.rng_seed;
    let peer = differ.info();
    let differ = std::cell::RefCell::new(differ);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&sequence(), |seq| {
        run_sequence(&mut differ.borrow_mut(), &seq)
            .map_err(|mismatch| TestCaseError::fail(mismatch.to_string()))
    });
    if let Err(e) = result {
        panic!("random sequences vs {peer} ({seed:?}, set PROPTEST_RNG_SEED to vary): {e}");
    }
}

/// One generated sequence.
#[derive(Debug, Clone)]
struct Sequence {
    entries_max: u64,
    bytes_max: u64,
    ops: Vec<Op>,
}

#[derive(Debug, Clone)]
enum Op {
    Add {
        key: usize,
        nomkstream: bool,
        trim: Option<TrimPlan>,
        id: IdPlan,
        fields: Vec<(Vec<u8>, Vec<u8>)>,
    },
    /// Many XADDs in a row with one field set, so streams reach several nodes.
    Burst {
        key: usize,
        count: usize,
        gap: u64,
        fields: Vec<(Vec<u8>, Vec<u8>)>,
    },
    Del {
        key: usize,
        picks: Vec<u16>,
        bad: bool,
    },
    Trim {
        key: usize,
        trim: TrimPlan,
    },
    SetId {
        key: usize,
        target: u8,
        entries_added: Option<i64>,
        max_deleted: Option<u8>,
    },
    Range {
        key: usize,
        rev: bool,
        start: Bound,
        end: Bound,
        count: Option<i64>,
    },
    Len {
        key: usize,
    },
    Config {
        entries_max: Option<u64>,
        bytes_max: u64,
    },
}

/// XADD's id, relative to the stream's `last_id`.
#[derive(Debug, Clone)]
enum IdPlan {
    /// `last.ms + gap`, seq given (or `last.seq + 1 + seq` when the gap is 0).
    Next { gap: u64, seq: u64 },
    /// `<last.ms + gap>`: an incomplete id, seq 0.
    MsOnly { gap: u64 },
    /// `<last.ms + gap>-*`.
    SeqAuto { gap: u64 },
    /// An id at or below `last_id`: an error.
    Stale(u16),
    /// `0-0`: an error.
    Zero,
}

#[derive(Debug, Clone)]
struct TrimPlan {
    minid: bool,
    /// "", "=" or "~".
    mode: &'static str,
    threshold: u16,
    /// Rendered as given; LIMIT without `~` is an error case.
    limit: Option<u64>,
}

#[derive(Debug, Clone)]
enum Bound {
    Min,
    Max,
    Live {
        pick: u16,
        exclusive: bool,
        incomplete: bool,
    },
    Past,
}

fn sequence() -> impl Strategy<Value = Sequence> {
    (
        select(&NODE_ENTRIES[..]),
        select(&NODE_BYTES[..]),
        prop::collection::vec(op(), 1..=OPS_MAX),
    )
        .prop_map(|(entries_max, bytes_max, ops)| Sequence {
            entries_max,
            bytes_max,
            ops,
        })
}

fn key() -> impl Strategy<Value = usize> {
    prop_oneof![12 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize)]
}

fn op() -> impl Strategy<Value = Op> {
    let add = (
        key(),
        prop::bool::weighted(0.05),
        prop::option::weighted(0.15, trim_plan()),
        id_plan(),
        fields(),
    )
        .prop_map(|(key, nomkstream, trim, id, fields)| Op::Add {
            key,
            nomkstream,
            trim,
            id,
            fields,
        });
    let burst =
        (key(), 10usize..=150, 0u64..3, fields()).prop_map(|(key, count, gap, fields)| Op::Burst {
            key,
            count,
            gap,
            fields,
        });
    let del = (
        key(),
        prop::collection::vec(any::<u16>(), 1..4),
        prop::bool::weighted(0.03),
    )
        .prop_map(|(key, picks, bad)| Op::Del { key, picks, bad });
    let trim = (key(), trim_plan()).prop_map(|(key, trim)| Op::Trim { key, trim });
    let set_id = (
        key(),
        0u8..5,
        prop::option::weighted(0.3, -2i64..6),
        prop::option::weighted(0.3, 0u8..4),
    )
        .prop_map(|(key, target, entries_added, max_deleted)| Op::SetId {
            key,
            target,
            entries_added,
            max_deleted,
        });
    let range = (
        key(),
        any::<bool>(),
        bound(),
        bound(),
        prop_oneof![
            6 => Just(None),
            1 => select(vec![0i64, -1, 1, 2, 5, 100]).prop_map(Some),
        ],
    )
        .prop_map(|(key, rev, start, end, count)| Op::Range {
            key,
            rev,
            start,
            end,
            count,
        });
    let len = key().prop_map(|key| Op::Len { key });
    let config = (
        prop::option::of(select(&NODE_ENTRIES[..])),
        select(&NODE_BYTES[..]),
    )
        .prop_map(|(entries_max, bytes_max)| Op::Config {
            entries_max,
            bytes_max,
        });
    prop_oneof![
        40 => add,
        3 => burst,
        4 => del,
        6 => trim,
        2 => set_id,
        6 => range,
        2 => len,
        1 => config,
    ]
}

/// Millisecond gaps: mostly 0 or 1 (many entries per ms), sometimes big, so the ms deltas
/// against a node's master id take every listpack integer size.
fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => Just(0u64),
        6 => 1u64..3,
        2 => 3u64..200,
        1 => 200u64..5000,
        1 => 5000u64..100_000,
        1 => Just(1u64 << 24),
        1 => Just(1u64 << 33),
    ]
}

fn id_plan() -> impl Strategy<Value = IdPlan> {
    let seq = prop_oneof![
        8 => Just(0u64),
        3 => 0u64..10,
        1 => 100u64..70_000,
        1 => Just(1u64 << 40),
    ];
    prop_oneof![
        30 => (gap(), seq).prop_map(|(gap, seq)| IdPlan::Next { gap, seq }),
        3 => (1u64..3).prop_map(|gap| IdPlan::MsOnly { gap }),
        5 => (0u64..3).prop_map(|gap| IdPlan::SeqAuto { gap }),
        1 => any::<u16>().prop_map(IdPlan::Stale),
        1 => Just(IdPlan::Zero),
    ]
}

fn trim_plan() -> impl Strategy<Value = TrimPlan> {
    let limits = select(vec![0u64, 1, 2, 5, 10, 30, 100, 1000]);
    (
        any::<bool>(),
        select(vec!["", "=", "~", "~"]),
        any::<u16>(),
        prop::option::weighted(0.3, limits),
    )
        .prop_map(|(minid, mode, threshold, limit)| TrimPlan {
            minid,
            mode,
            threshold,
            // LIMIT without `~` is an error; keep that path rare.
            limit: limit.filter(|_| mode == "~" || threshold % 8 == 0),
        })
}

fn bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        3 => Just(Bound::Min),
        3 => Just(Bound::Max),
        6 => (any::<u16>(), prop::bool::weighted(0.3), prop::bool::weighted(0.2)).prop_map(
            |(pick, exclusive, incomplete)| Bound::Live {
                pick,
                exclusive,
                incomplete,
            }
        ),
        1 => Just(Bound::Past),
    ]
}

/// Field/value pairs. Field sets repeat often (fixed schemas) so SAMEFIELDS is common, and
/// sometimes vary; values cover the listpack encodings.
fn fields() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    let schema = prop_oneof![
        4 => Just(vec!["f".to_string()]),
        3 => Just(vec!["f".to_string(), "g".to_string()]),
        2 => Just(vec!["type", "user_id", "ts", "payload"].into_iter().map(String::from).collect()),
        1 => Just(vec!["1".to_string(), "2".to_string()]),
        3 => prop::collection::vec(field_name(), 1..=4),
    ];
    schema
        .prop_flat_map(|names| {
            let n = names.len();
            (Just(names), prop::collection::vec(value(), n))
        })
        .prop_map(|(names, values)| {
            names
                .into_iter()
                .map(String::into_bytes)
                .zip(values)
                .collect()
        })
}

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => select(vec!["a", "b", "f", "g", "-5", "123", "007", "0", ""]).prop_map(String::from),
        1 => Just("n".repeat(70)),
        1 => Just("k".repeat(130)),
    ]
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    const INTEGER_EDGES: [&str; 28] = [
        "0",
        "-0",
        "007",
        "+5",
        "123",
        "-5",
        "-1",
        "127",
        "128",
        "-4096",
        "4095",
        "4096",
        "-4097",
        "32767",
        "32768",
        "-32769",
        "8388607",
        "8388608",
        "2147483647",
        "2147483648",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "00",
        "1.5",
        " 1",
        "12345678901234567890",
    ];
    let long_len = prop_oneof![
        3 => 40usize..300,
        1 => select(vec![62usize, 63, 64, 65, 124, 125, 126, 127, 128, 129]),
    ];
    prop_oneof![
        4 => prop::collection::vec(b'a'..=b'z', 0..9),
        3 => any::<i64>().prop_map(|n| n.to_string().into_bytes()),
        3 => (-5000i64..5000).prop_map(|n| n.to_string().into_bytes()),
        2 => select(&INTEGER_EDGES[..]).prop_map(|s| s.as_bytes().to_vec()),
        2 => (long_len, b'a'..=b'z').prop_map(|(len, c)| vec![c; len]),
    ]
}

fn run_sequence(differ: &mut Differ, seq: &Sequence) -> Result<(), Mismatch> {
    differ.reset();
    differ.run(&config_set("stream-node-max-entries", seq.entries_max))?;
    differ.run(&config_set("stream-node-max-bytes", seq.bytes_max))?;
    let peer = differ.info();
    for op in &seq.ops {
        for argv in render(op, differ.engine(), &peer) {
            differ.run_and_check(&argv)?;
        }
        differ.check_invariants()?;
    }
    differ.check_all()
}

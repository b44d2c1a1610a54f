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

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use echomq_engine::{Keyspace, StreamId};

use crate::support::differ::{Differ, Mismatch};
use crate::support::peer::PeerInfo;

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

/// What a plan needs to know about a stream, read from the engine before the command runs.
#[derive(Debug, Default)]
struct View {
    live: Vec<StreamId>,
    last_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
}

impl View {
    fn of(engine: &Keyspace, key: &str) -> View {
        engine.run(|db, _| match db.stream(key.as_bytes()) {
            Ok(Some(s)) => View {
                live: s
                    .range(StreamId::MIN, StreamId::MAX)
                    .map(|e| e.id)
                    .collect(),
                last_id: s.last_id(),
                max_deleted: s.max_deleted_entry_id(),
                entries_added: s.entries_added(),
            },
            _ => View::default(),
        })
    }

    /// A live id chosen by `pick`, or `last_id` when there is none.
    fn live(&self, pick: u16) -> StreamId {
        match self.live.len() {
            0 => self.last_id,
            n => self.live[usize::from(pick) % n],
        }
    }
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

fn config_set(name: &str, value: u64) -> Vec<String> {
    vec![
        "CONFIG".into(),
        "SET".into(),
        name.into(),
        value.to_string(),
    ]
}

/// The commands for one plan, against the engine's current state, steering around documented
/// differences of older servers.
fn render(op: &Op, engine: &Keyspace, peer: &PeerInfo) -> Vec<Vec<Vec<u8>>> {
    let text = |words: Vec<String>| words.into_iter().map(String::into_bytes).collect();
    match op {
        Op::Add {
            key,
            nomkstream,
            trim,
            id,
            fields,
        } => {
            let view = View::of(engine, KEYS[*key]);
            let mut argv: Vec<String> = vec!["XADD".into(), KEYS[*key].into()];
            if *nomkstream {
                argv.push("NOMKSTREAM".into());
            }
            if let Some(trim) = trim {
                argv.extend(render_trim(trim, &view));
            }
            argv.push(render_id(id, &view));
            let mut argv: Vec<Vec<u8>> = text(argv);
            for (field, value) in fields {
                argv.push(field.clone());
                argv.push(value.clone());
            }
            vec![argv]
        }
        Op::Burst {
            key,
            count,
            gap,
            fields,
        } => {
            let last = View::of(engine, KEYS[*key]).last_id;
            (1..=*count as u64)
                .map(|i| {
                    let id = match gap {
                        0 => last
                            .seq
                            .checked_add(i)
                            .map(|seq| StreamId::new(last.ms, seq)),
                        g => last.ms.checked_add(g * i).map(|ms| StreamId::new(ms, 0)),
                    };
                    let id = id.map_or_else(|| "0-0".to_string(), |id| id.to_string());
                    let mut argv = text(vec!["XADD".into(), KEYS[*key].into(), id]);
                    for (n, (field, value)) in fields.iter().enumerate() {
                        argv.push(field.clone());
                        // Every third entry gets integer values: same fields, other sizes.
                        argv.push(if i % 3 == 0 {
                            (i * 7 + n as u64).to_string().into_bytes()
                        } else {
                            value.clone()
                        });
                    }
                    argv
                })
                .collect()
        }
        Op::Del { key, picks, bad } => {
            let view = View::of(engine, KEYS[*key]);
            let mut argv: Vec<String> = vec!["XDEL".into(), KEYS[*key].into()];
            for &pick in picks {
                let n = view.live.len();
                argv.push(match usize::from(pick) % (n + 2) {
                    i if i < n => view.live[i].to_string(),
                    i if i == n => next_after(view.last_id).to_string(),
                    _ => "0-1".to_string(),
                });
            }
            if *bad {
                argv.push("not-an-id".into());
            }
            vec![text(argv)]
        }
        Op::Trim { key, trim } => {
            let view = View::of(engine, KEYS[*key]);
            let mut argv: Vec<String> = vec!["XTRIM".into(), KEYS[*key].into()];
            argv.extend(render_trim(trim, &view));
            vec![text(argv)]
        }
        Op::SetId {
            key,
            target,
            entries_added,
            max_deleted,
        } => {
            let view = View::of(engine, KEYS[*key]);
            let last = view.last_id;
            let id = match target {
                0 | 1 => last,
                2 => StreamId::new(last.ms.saturating_add(3), 0),
                3 => view.live.last().copied().unwrap_or(last),
                _ => view.live.first().copied().unwrap_or(StreamId::MIN),
            };
            // Reference §6.1: newer servers refuse an id below the current
            // max_deleted_entry_id; Redis 7.0 has no such check (see cases.rs).
            let id = if peer.is_redis_before(7, 2) {
                id.max(view.max_deleted)
            } else {
                id
            };
            let mut argv: Vec<String> = vec!["XSETID".into(), KEYS[*key].into(), id.to_string()];
            if let Some(delta) = entries_added {
                argv.push("ENTRIESADDED".into());
                argv.push((view.entries_added as i64 + delta).to_string());
            }
            if let Some(which) = max_deleted {
                argv.push("MAXDELETEDID".into());
                argv.push(match which {
                    0 => view.max_deleted.to_string(),
                    1 => id.to_string(),
                    2 => next_after(id).to_string(),
                    _ => "0-0".to_string(),
                });
            }
            vec![text(argv)]
        }
        Op::Range {
            key,
            rev,
            start,
            end,
            count,
        } => {
            let view = View::of(engine, KEYS[*key]);
            let (start, end) = (render_bound(start, &view), render_bound(end, &view));
            let mut argv: Vec<String> = if *rev {
                vec!["XREVRANGE".into(), KEYS[*key].into(), end, start]
            } else {
                vec!["XRANGE".into(), KEYS[*key].into(), start, end]
            };
            if let Some(count) = count {
                argv.push("COUNT".into());
                argv.push(count.to_string());
            }
            vec![text(argv)]
        }
        Op::Len { key } => vec![text(vec!["XLEN".into(), KEYS[*key].into()])],
        Op::Config {
            entries_max,
            bytes_max,
        } => {
            // Redis 7.0.15 crashes (cases::REDIS_7_0_SHRINK_CRASH) when the byte limit is
            // lowered under an existing node; there, the limit only goes up.
            let bytes_max = if peer.is_redis_before(7, 2) {
                let current = engine.config().node_limits().bytes_max;
                match (current, *bytes_max) {
                    (0, _) | (_, 0) => 0,
                    (a, b) => a.max(b),
                }
            } else {
                *bytes_max
            };
            let mut out = vec![text(config_set("stream-node-max-bytes", bytes_max))];
            if let Some(n) = entries_max {
                out.push(text(config_set("stream-node-max-entries", *n)));
            }
            out
        }
    }
}

fn render_id(plan: &IdPlan, view: &View) -> String {
    let last = view.last_id;
    let ms = |gap: u64| last.ms.checked_add(gap);
    match plan {
        IdPlan::Next { gap: 0, seq } => match last.seq.checked_add(1 + seq) {
            Some(s) => StreamId::new(last.ms, s).to_string(),
            None => next_after(last).to_string(),
        },
        IdPlan::Next { gap, seq } => match ms(*gap) {
            Some(ms) => StreamId::new(ms, *seq).to_string(),
            None => next_after(last).to_string(),
        },
        IdPlan::MsOnly { gap } => ms(*gap).map_or_else(|| last.to_string(), |m| m.to_string()),
        IdPlan::SeqAuto { gap } => {
            ms(*gap).map_or_else(|| format!("{}-*", last.ms), |m| format!("{m}-*"))
        }
        IdPlan::Stale(pick) => view.live(*pick).to_string(),
        IdPlan::Zero => "0-0".to_string(),
    }
}

fn render_trim(plan: &TrimPlan, view: &View) -> Vec<String> {
    let mut out = Vec::new();
    let threshold = if plan.minid {
        out.push("MINID".to_string());
        let n = view.live.len();
        // Mostly a point in the oldest quarter, so streams keep most of their entries.
        let i = match plan.threshold % 4 {
            0 => usize::from(plan.threshold / 4) % (n + 2),
            _ => usize::from(plan.threshold / 4) % (n / 4 + 1),
        };
        match i {
            i if i < n && plan.threshold % 5 == 0 => view.live[i].ms.to_string(),
            i if i < n => view.live[i].to_string(),
            i if i == n => next_after(view.last_id).to_string(),
            _ => "0".to_string(),
        }
    } else {
        out.push("MAXLEN".to_string());
        // Mostly a few entries below the length, sometimes anywhere up to a bit above it.
        let len = view.live.len();
        match plan.threshold % 4 {
            0 => (usize::from(plan.threshold / 4) % (len + 3)).to_string(),
            _ => len
                .saturating_sub(usize::from(plan.threshold / 4) % 12)
                .to_string(),
        }
    };
    if !plan.mode.is_empty() {
        out.push(plan.mode.to_string());
    }
    out.push(threshold);
    if let Some(limit) = plan.limit {
        out.push("LIMIT".to_string());
        out.push(limit.to_string());
    }
    out
}

fn render_bound(bound: &Bound, view: &View) -> String {
    match bound {
        Bound::Min => "-".to_string(),
        Bound::Max => "+".to_string(),
        Bound::Live {
            pick,
            exclusive,
            incomplete,
        } => {
            let id = view.live(*pick);
            let id = if *incomplete {
                id.ms.to_string()
            } else {
                id.to_string()
            };
            if *exclusive { format!("({id}") } else { id }
        }
        Bound::Past => view.last_id.ms.saturating_add(1).to_string(),
    }
}

/// The id after `id` (or `id` itself at the very end).
fn next_after(id: StreamId) -> StreamId {
    id.next().unwrap_or(id)
}

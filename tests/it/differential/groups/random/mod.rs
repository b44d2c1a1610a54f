//! Randomized differential sequences for consumer groups.
//!
//! A sequence mixes XADD (explicit ids only) and bursts of them, XDEL, XTRIM, XGROUP CREATE /
//! SETID / DESTROY / CREATECONSUMER / DELCONSUMER, XREADGROUP (`>` and history, COUNT, NOACK,
//! one or two streams), XACK, XCLAIM (IDLE, TIME, RETRYCOUNT, FORCE, JUSTID, LASTID), XAUTOCLAIM
//! (COUNT, JUSTID, exclusive starts), XPENDING (summary and extended, IDLE, consumer), XINFO
//! and XREAD, over two keys, two groups and three consumers.
//!
//! As in the core sequences, operations are plans relative to the state ("a pending id of this
//! group", "the third live entry") and become arguments against the engine's state just before
//! they run (`render`), so a shrunk sequence still makes sense and most commands hit something.
//! Error paths come up on purpose at a low rate (a missing group, a bad id).
//!
//! Time never decides an outcome: min-idle and IDLE filters are 0 or an hour, and XCLAIM moves
//! entries two hours back (`IDLE 7200000`) or to 1970 (`TIME 1000`), so the server's running
//! clock and the engine's manual one agree on every comparison; the time fields themselves are
//! normalized (`support::normalize`).
//!
//! After every command the named keys' stream and group state are compared (XINFO STREAM
//! bookkeeping, XINFO GROUPS, XPENDING summary and the whole PEL, XINFO CONSUMERS from 7.2).

mod render;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use crate::differential::known_differences::lacks_lag_fixes;
use crate::support::differ::{Differ, Mismatch};

pub use render::render;

/// Seed used unless `PROPTEST_RNG_SEED` is set, so CI runs are reproducible.
const SEED_DEFAULT: u64 = 0xEC40_6209;
/// Operations per sequence, at most.
const OPS_MAX: usize = 120;
/// The keys: mostly the first.
pub const KEYS: [&str; 2] = ["s", "t"];
/// The groups.
pub const GROUPS: [&str; 2] = ["g1", "g2"];
/// The consumers.
pub const CONSUMERS: [&str; 3] = ["c1", "c2", "c3"];
/// The commands every sequence starts with.
pub const SETUP: [[&str; 6]; 2] = [
    ["XGROUP", "CREATE", KEYS[0], GROUPS[0], "0", "MKSTREAM"],
    ["XGROUP", "CREATE", KEYS[1], GROUPS[0], "$", "MKSTREAM"],
];
/// An idle threshold no freshly delivered entry reaches on either clock.
pub const HOUR_MS: u64 = 3_600_000;
/// How far XCLAIM `IDLE` moves entries back: past [`HOUR_MS`] on either clock.
pub const TWO_HOURS_MS: u64 = 7_200_000;

/// Runs `cases` random sequences (`PROPTEST_CASES` overrides) against `differ`, shrinking a
/// failure to a short reproduction.
pub fn run(mut differ: Differ, cases: u32) {
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
    if lacks_lag_fixes(&peer) {
        differ.mask_lag_after_taint();
    }
    let differ = std::cell::RefCell::new(differ);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&sequence(), |ops| {
        run_sequence(&mut differ.borrow_mut(), &ops)
            .map_err(|mismatch| TestCaseError::fail(mismatch.to_string()))
    });
    if let Err(e) = result {
        panic!("group random sequences vs {peer} ({seed:?}, set PROPTEST_RNG_SEED to vary): {e}");
    }
}

/// Where XGROUP CREATE or SETID puts the cursor.
#[derive(Debug, Clone, Copy)]
pub enum At {
    Zero,
    Dollar,
    /// A live entry.
    Live(u16),
    /// Past the last id.
    Past,
}

/// An idle threshold or age.
#[derive(Debug, Clone, Copy)]
pub enum Idle {
    Zero,
    Hour,
}

/// Where an XCLAIM moves the delivery time.
#[derive(Debug, Clone, Copy)]
pub enum Age {
    /// `IDLE 7200000`.
    TwoHours,
    /// `IDLE 0`.
    Now,
    /// `TIME 1000`.
    Epoch,
}

/// Which ids an id list picks.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// A pending id of the group.
    Pending(u16),
    /// A live entry.
    Live(u16),
    /// An id that was never added (or is gone).
    Absent,
}

/// One operation, as a plan.
#[derive(Debug, Clone)]
pub enum Op {
    Add {
        key: usize,
        gap: u64,
        fields: u8,
    },
    Burst {
        key: usize,
        count: u8,
    },
    Del {
        key: usize,
        picks: Vec<(usize, Pick)>,
    },
    Trim {
        key: usize,
        minid: bool,
        approx: bool,
        keep: u16,
    },
    Create {
        key: usize,
        group: usize,
        at: At,
        mkstream: bool,
        entries_read: Option<u8>,
    },
    SetId {
        key: usize,
        group: usize,
        at: At,
        entries_read: Option<u8>,
    },
    Destroy {
        key: usize,
        group: usize,
    },
    CreateConsumer {
        key: usize,
        group: usize,
        consumer: usize,
    },
    DelConsumer {
        key: usize,
        group: usize,
        consumer: usize,
    },
    ReadGroup {
        keys: Vec<usize>,
        group: usize,
        consumer: usize,
        count: Option<u8>,
        noack: bool,
        /// `None` for `>`, else a history read after the n-th pending id of the consumer (or 0);
        /// a history read by a consumer with nothing pending is made by one that has some.
        history: Option<u16>,
    },
    Ack {
        key: usize,
        group: usize,
        picks: Vec<Pick>,
    },
    Claim {
        key: usize,
        group: usize,
        consumer: usize,
        min_idle: Idle,
        picks: Vec<Pick>,
        age: Option<Age>,
        retry: Option<u8>,
        force: bool,
        justid: bool,
        lastid: Option<u16>,
    },
    AutoClaim {
        key: usize,
        group: usize,
        consumer: usize,
        min_idle: Idle,
        start: Option<(u16, bool)>,
        count: Option<u8>,
        justid: bool,
    },
    Pending {
        key: usize,
        group: usize,
        extended: Option<Extended>,
    },
    Info {
        key: usize,
        group: usize,
        what: u8,
    },
    Read {
        keys: Vec<(usize, Option<u16>)>,
        count: Option<u8>,
    },
}

/// XPENDING's range form.
#[derive(Debug, Clone)]
pub struct Extended {
    pub idle: Option<Idle>,
    pub start: Option<(u16, bool)>,
    pub end: Option<(u16, bool)>,
    pub count: i8,
    pub consumer: Option<usize>,
}

pub fn sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=OPS_MAX)
}

fn key() -> impl Strategy<Value = usize> {
    prop_oneof![5 => Just(0usize), 1 => Just(1usize)]
}

fn group() -> impl Strategy<Value = usize> {
    prop_oneof![4 => Just(0usize), 1 => Just(1usize)]
}

fn consumer() -> impl Strategy<Value = usize> {
    0..CONSUMERS.len()
}

fn at() -> impl Strategy<Value = At> {
    prop_oneof![
        3 => Just(At::Zero),
        2 => Just(At::Dollar),
        3 => any::<u16>().prop_map(At::Live),
        1 => Just(At::Past),
    ]
}

fn idle() -> impl Strategy<Value = Idle> {
    prop_oneof![3 => Just(Idle::Zero), 1 => Just(Idle::Hour)]
}

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        6 => any::<u16>().prop_map(Pick::Pending),
        2 => any::<u16>().prop_map(Pick::Live),
        1 => Just(Pick::Absent),
    ]
}

fn bound() -> impl Strategy<Value = Option<(u16, bool)>> {
    prop::option::weighted(0.4, (any::<u16>(), prop::bool::weighted(0.3)))
}

fn op() -> impl Strategy<Value = Op> {
    let add = (key(), gap(), 1u8..4).prop_map(|(key, gap, fields)| Op::Add { key, gap, fields });
    let burst = (key(), 5u8..40).prop_map(|(key, count)| Op::Burst { key, count });
    let del = (
        key(),
        prop::collection::vec((0..GROUPS.len(), pick()), 1..4),
    )
        .prop_map(|(key, picks)| Op::Del { key, picks });
    let trim = (
        key(),
        any::<bool>(),
        prop::bool::weighted(0.3),
        any::<u16>(),
    )
        .prop_map(|(key, minid, approx, keep)| Op::Trim {
            key,
            minid,
            approx,
            keep,
        });
    let create = (
        key(),
        group(),
        at(),
        prop::bool::weighted(0.2),
        prop::option::weighted(0.15, 0u8..8),
    )
        .prop_map(|(key, group, at, mkstream, entries_read)| Op::Create {
            key,
            group,
            at,
            mkstream,
            entries_read,
        });
    let set_id = (key(), group(), at(), prop::option::weighted(0.2, 0u8..8)).prop_map(
        |(key, group, at, entries_read)| Op::SetId {
            key,
            group,
            at,
            entries_read,
        },
    );
    let destroy = (key(), group()).prop_map(|(key, group)| Op::Destroy { key, group });
    let create_consumer =
        (key(), group(), consumer()).prop_map(|(key, group, consumer)| Op::CreateConsumer {
            key,
            group,
            consumer,
        });
    let del_consumer =
        (key(), group(), consumer()).prop_map(|(key, group, consumer)| Op::DelConsumer {
            key,
            group,
            consumer,
        });
    let read_group = (
        prop_oneof![6 => key().prop_map(|k| vec![k]), 1 => Just(vec![0, 1]), 1 => Just(vec![1, 0])],
        group(),
        consumer(),
        prop::option::weighted(0.6, 0u8..6),
        prop::bool::weighted(0.1),
        prop::option::weighted(0.3, any::<u16>()),
    )
        .prop_map(
            |(keys, group, consumer, count, noack, history)| Op::ReadGroup {
                keys,
                group,
                consumer,
                count,
                noack,
                history,
            },
        );
    let ack = (key(), group(), prop::collection::vec(pick(), 1..4))
        .prop_map(|(key, group, picks)| Op::Ack { key, group, picks });
    let claim = (
        (key(), group(), consumer(), idle()),
        prop::collection::vec(pick(), 1..4),
        prop::option::weighted(
            0.4,
            prop_oneof![Just(Age::TwoHours), Just(Age::Now), Just(Age::Epoch)],
        ),
        prop::option::weighted(0.15, 0u8..5),
        (
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.3),
            prop::option::weighted(0.1, any::<u16>()),
        ),
    )
        .prop_map(
            |((key, group, consumer, min_idle), picks, age, retry, (force, justid, lastid))| {
                Op::Claim {
                    key,
                    group,
                    consumer,
                    min_idle,
                    picks,
                    age,
                    retry,
                    force,
                    justid,
                    lastid,
                }
            },
        );
    let auto_claim = (
        (key(), group(), consumer(), idle()),
        bound(),
        prop::option::weighted(0.5, 1u8..6),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |((key, group, consumer, min_idle), start, count, justid)| Op::AutoClaim {
                key,
                group,
                consumer,
                min_idle,
                start,
                count,
                justid,
            },
        );
    let extended = (
        prop::option::weighted(0.3, idle()),
        bound(),
        bound(),
        -1i8..8,
        prop::option::weighted(0.3, consumer()),
    )
        .prop_map(|(idle, start, end, count, consumer)| Extended {
            idle,
            start,
            end,
            count,
            consumer,
        });
    let pending = (key(), group(), prop::option::weighted(0.6, extended)).prop_map(
        |(key, group, extended)| Op::Pending {
            key,
            group,
            extended,
        },
    );
    let info =
        (key(), group(), 0u8..4).prop_map(|(key, group, what)| Op::Info { key, group, what });
    let read = (
        prop_oneof![
            3 => (key(), prop::option::of(any::<u16>())).prop_map(|k| vec![k]),
            1 => (prop::option::of(any::<u16>()), prop::option::of(any::<u16>()))
                .prop_map(|(a, b)| vec![(0, a), (1, b)]),
        ],
        prop::option::weighted(0.4, 0u8..4),
    )
        .prop_map(|(keys, count)| Op::Read { keys, count });
    prop_oneof![
        12 => add,
        2 => burst,
        3 => del,
        2 => trim,
        3 => create,
        2 => set_id,
        1 => destroy,
        1 => create_consumer,
        1 => del_consumer,
        14 => read_group,
        5 => ack,
        5 => claim,
        4 => auto_claim,
        3 => pending,
        2 => info,
        2 => read,
    ]
}

/// Millisecond gaps between ids: mostly small.
fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![4 => Just(0u64), 4 => 1u64..3, 1 => 3u64..1000]
}

fn run_sequence(differ: &mut Differ, ops: &[Op]) -> Result<(), Mismatch> {
    differ.reset();
    let peer = differ.info();
    // A group per key to start with; plans that name a missing one fall back to an existing one.
    for argv in SETUP {
        differ.run_and_check(&argv)?;
    }
    for op in ops {
        for argv in render(op, differ.engine(), &peer) {
            differ.run_and_check(&argv)?;
        }
        differ.check_invariants()?;
    }
    differ.check_all()
}

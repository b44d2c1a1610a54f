//! Random sequences of idempotent writes on one seeded stream against Redis 8.8: XADD with
//! IDMP or IDMPAUTO (with and without MAXLEN, the options in either order), XIDMPRECORD of
//! existing, deleted and missing entries, XCFGSET (same and changed values), XDEL, XTRIM and
//! XINFO STREAM [FULL], in RESP2 or RESP3. Few producers, iids and values, so duplicates,
//! eviction at small `idmp-maxsize` values, conflicts and clears all happen often. A mismatch
//! is shrunk to a short reproduction.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use crate::support::differ::Mismatch;
use crate::support::wire::WireDiffer;

use super::{SEED, default_settings};

/// Sequences per run (`PROPTEST_CASES` overrides).
pub const SEQUENCES: u32 = 48;
/// Seed used unless `PROPTEST_RNG_SEED` is set.
const SEED_DEFAULT: u64 = 0x1D3F_2026;
/// The seed entry's milliseconds: every `*` after it is `<SEED_MS>-<n>`.
const SEED_MS: &str = "9999999999999";

/// One operation.
#[derive(Debug, Clone)]
enum Op {
    Add {
        pid: u8,
        iid: u8,
        auto: bool,
        value: u8,
        maxlen: Option<u8>,
        trim_first: bool,
    },
    Record {
        pid: u8,
        iid: u8,
        seq: u8,
    },
    Configure {
        duration: Option<bool>,
        maxsize: Option<u8>,
    },
    Delete {
        seq: u8,
    },
    Trim {
        maxlen: u8,
    },
    Info {
        full: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..3, 0u8..4, any::<bool>(), 0u8..3, prop::option::weighted(0.2, 0u8..4), any::<bool>())
            .prop_map(|(pid, iid, auto, value, maxlen, trim_first)| Op::Add {
                pid, iid, auto, value, maxlen, trim_first,
            }),
        2 => (0u8..3, 0u8..4, 0u8..12).prop_map(|(pid, iid, seq)| Op::Record { pid, iid, seq }),
        1 => (prop::option::of(any::<bool>()), prop::option::of(1u8..4))
            .prop_map(|(duration, maxsize)| Op::Configure { duration, maxsize }),
        1 => (0u8..12).prop_map(|seq| Op::Delete { seq }),
        1 => (0u8..4).prop_map(|maxlen| Op::Trim { maxlen }),
        1 => any::<bool>().prop_map(|full| Op::Info { full }),
    ]
}

fn render(op: &Op) -> Vec<String> {
    let words = |s: String| s.split_whitespace().map(str::to_string).collect();
    match op {
        Op::Add {
            pid,
            iid,
            auto,
            value,
            maxlen,
            trim_first,
        } => {
            let idmp = if *auto {
                format!("IDMPAUTO p{pid}")
            } else {
                format!("IDMP p{pid} i{iid}")
            };
            let trim = maxlen.map_or(String::new(), |n| format!("MAXLEN {n}"));
            let options = if *trim_first {
                format!("{trim} {idmp}")
            } else {
                format!("{idmp} {trim}")
            };
            words(format!("XADD s {options} * f v{value}"))
        }
        Op::Record { pid, iid, seq } => {
            words(format!("XIDMPRECORD s p{pid} i{iid} {SEED_MS}-{seq}"))
        }
        Op::Configure { duration, maxsize } => {
            let mut line = "XCFGSET s".to_string();
            if let Some(long) = duration {
                line.push_str(if *long {
                    " IDMP-DURATION 200"
                } else {
                    " IDMP-DURATION 100"
                });
            }
            if let Some(n) = maxsize {
                line.push_str(&format!(" IDMP-MAXSIZE {n}"));
            }
            words(line)
        }
        Op::Delete { seq } => words(format!("XDEL s {SEED_MS}-{seq}")),
        Op::Trim { maxlen } => words(format!("XTRIM s MAXLEN {maxlen}")),
        Op::Info { full } => words(format!(
            "XINFO STREAM s{}",
            if *full { " FULL" } else { "" }
        )),
    }
}

fn run_sequence(differ: &mut WireDiffer, resp3: bool, ops: &[Op]) -> Result<(), Mismatch> {
    differ.reset(if resp3 { 3 } else { 2 })?;
    default_settings(differ)?;
    differ.run(&["XADD", "s", SEED, "seed", "0"])?;
    for op in ops {
        differ.run(&render(op))?;
    }
    differ.run(&["XINFO", "STREAM", "s", "FULL", "COUNT", "0"])?;
    Ok(())
}

/// Runs `cases` random sequences against `differ`.
pub fn run(differ: WireDiffer, cases: u32) {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if matches!(config.rng_seed, RngSeed::Random) {
        config.rng_seed = RngSeed::Fixed(SEED_DEFAULT);
    }
    config.failure_persistence = None;
    config.max_shrink_iters = 1000;
    config.max_shrink_time = 120_000;
    let seed = config.rng_seed;
    let peer = differ.info();
    let differ = std::cell::RefCell::new(differ);
    let mut runner = TestRunner::new(config);
    let sequence = (any::<bool>(), prop::collection::vec(op(), 1..80));
    let result = runner.run(&sequence, |(resp3, ops)| {
        run_sequence(&mut differ.borrow_mut(), resp3, &ops)
            .map_err(|mismatch| TestCaseError::fail(mismatch.to_string()))
    });
    if let Err(e) = result {
        panic!("idmp random sequences vs {peer} ({seed:?}, set PROPTEST_RNG_SEED to vary): {e}");
    }
}

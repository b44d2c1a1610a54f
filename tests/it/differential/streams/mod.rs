//! The core stream commands (XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID) against Redis
//! and Valkey: the hand-written cases of `cases`, then the random sequences of `random`.

mod cases;
mod random;

use crate::support::differ::Differ;
use crate::support::peer::PeerKind;

/// Random sequences per server; with up to 250 operations each this stays within seconds.
const RANDOM_SEQUENCES_REDIS: u32 = 64;
const RANDOM_SEQUENCES_VALKEY: u32 = 24;

/// Runs every case on one server, collecting every mismatch before failing.
fn run_cases(kind: PeerKind) {
    let Some(mut differ) = Differ::start(kind) else {
        return;
    };
    let peer = differ.info();
    let all = cases::all();
    let mut failures = Vec::new();
    for case in &all {
        if let Some(skip) = case.skip.as_ref().filter(|s| (s.applies)(&peer)) {
            eprintln!("case {:?} skipped on {peer}: {}", case.name, skip.why);
            continue;
        }
        differ.reset();
        let outcome = case
            .steps
            .iter()
            .try_for_each(|argv| {
                differ.run_and_check(argv)?;
                differ.check_invariants()
            })
            .and_then(|()| differ.check_all());
        if let Err(mismatch) = outcome {
            failures.push(format!("case {:?}: {mismatch}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ on {peer}:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn core_cases_match_redis() {
    run_cases(PeerKind::Redis);
}

#[test]
fn core_cases_match_valkey() {
    run_cases(PeerKind::Valkey);
}

#[test]
fn core_random_sequences_match_redis() {
    if let Some(differ) = Differ::start(PeerKind::Redis) {
        random::run(differ, RANDOM_SEQUENCES_REDIS);
    }
}

#[test]
fn core_random_sequences_match_valkey() {
    if let Some(differ) = Differ::start(PeerKind::Valkey) {
        random::run(differ, RANDOM_SEQUENCES_VALKEY);
    }
}

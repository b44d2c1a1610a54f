//! Consumer groups and XREAD against Redis and Valkey: the hand-written cases of `cases`, then
//! the random sequences of `random`.

mod cases;
pub(super) mod random;

use crate::differential::case::{run_cases, run_engine_bug_cases};
use crate::support::differ::Differ;
use crate::support::peer::PeerKind;

/// Random sequences per server (up to 120 operations each, every command followed by the group
/// state check).
const RANDOM_SEQUENCES_REDIS: u32 = 96;
const RANDOM_SEQUENCES_VALKEY: u32 = 96;

#[test]
fn group_cases_match_redis() {
    run_cases(PeerKind::Redis, &cases::all());
}

#[test]
fn group_cases_match_valkey() {
    run_cases(PeerKind::Valkey, &cases::all());
}

/// Cases whose expectations predate Redis 8.8 and differ on it, to re-check with issue 15's
/// pass over `known_differences` (not part of this work): HELP's last line reads `Print this
/// help.` on 8.8; XREAD `+` after the last entry is deleted serves the live last entry; and
/// 8.8's entries-read and lag after an XTRIM past the cursor.
const NOT_YET_RECHECKED_ON_REDIS8: &[&str] = &[
    "XGROUP HELP",
    "XINFO HELP",
    "lag: XTRIM past the cursor",
    "XREAD + reads the last entry only, if it is live",
];

/// The same cases against Redis 8.8: the behaviour we target, including what the older
/// peers lack (the ENTRIESREAD cap cases run only here).
#[test]
fn group_cases_match_redis8() {
    let cases: Vec<_> = cases::all()
        .into_iter()
        .filter(|c| !NOT_YET_RECHECKED_ON_REDIS8.contains(&c.name))
        .collect();
    run_cases(PeerKind::Redis8, &cases);
}

#[test]
fn group_random_sequences_match_redis() {
    if let Some(differ) = Differ::start(PeerKind::Redis) {
        random::run(differ, RANDOM_SEQUENCES_REDIS);
    }
}

#[test]
fn group_random_sequences_match_valkey() {
    if let Some(differ) = Differ::start(PeerKind::Valkey) {
        random::run(differ, RANDOM_SEQUENCES_VALKEY);
    }
}

#[test]
fn fixed_engine_bugs_stay_fixed_against_redis() {
    run_engine_bug_cases(PeerKind::Redis, &cases::all());
}

#[test]
fn fixed_engine_bugs_stay_fixed_against_valkey() {
    run_engine_bug_cases(PeerKind::Valkey, &cases::all());
}

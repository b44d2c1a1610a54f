//! The core stream commands (XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID) against Redis
//! and Valkey: the hand-written cases of `cases`, then the random sequences of `random`.

mod cases;
mod random;

use crate::differential::case::run_cases;
use crate::support::differ::Differ;
use crate::support::peer::PeerKind;

/// Random sequences per server; with up to 250 operations each this stays within seconds.
const RANDOM_SEQUENCES_REDIS: u32 = 64;
const RANDOM_SEQUENCES_VALKEY: u32 = 24;

#[test]
fn core_cases_match_redis() {
    run_cases(PeerKind::Redis, &cases::all());
}

#[test]
fn core_cases_match_valkey() {
    run_cases(PeerKind::Valkey, &cases::all());
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

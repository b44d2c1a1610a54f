//! Idempotent production against Redis 8.8 over the wire (`docs/reference/streams-8.md` §3): every
//! form and error of `XADD … IDMP pid iid` / `IDMPAUTO pid`, `XCFGSET` and `XIDMPRECORD`, the XINFO
//! STREAM fields, the `stream-idmp-*` settings, and the maps following their key through RENAME,
//! COPY, MOVE, SWAPDB, DEL, FLUSHDB and FLUSHALL. Each case runs on `echomq serve` and Redis 8.8 in
//! RESP2 and RESP3, replies compared byte for byte.
//!
//! `*` ids come from each server's own clock, so every stream a case appends to with `*` is
//! first seeded with an entry in the year 2286 (`9999999999999-0`): `*` then gives the next
//! sequence number on both sides, and the ids IDMP answers are compared exactly. For the same
//! reason no case waits for expiry (Redis expires in a once-a-second cron; the engine's tests
//! move a manual clock instead: `engine/src/command/idmp_tests.rs`).
//!
//! - `cases`: hand-written cases, each form and error;
//! - `keyspace`: COPY, MOVE and SWAPDB carrying the maps, and readers blocked across SWAPDB;
//! - `random`: random sequences of IDMP writes, XIDMPRECORD, XCFGSET, XDEL and XTRIM on one
//!   seeded stream, shrunk to a short reproduction on a mismatch.
//!
//! Not compared (documented departures): an XADD IDMP that fails on a stream whose last id is
//! the largest possible leaves an empty producer in Redis (`pids-tracked` counts it) and none in
//! echomq.

mod cases;
mod keyspace;
mod random;

use crate::support::peer::PeerKind;
use crate::support::wire::WireDiffer;

use cases::{cases, send};

/// The seed entry: far in the future, so `*` is deterministic after it.
pub const SEED: &str = "9999999999999-0";

/// Puts both servers' `stream-idmp-*` settings back to their defaults (settings survive
/// FLUSHALL).
fn default_settings(differ: &mut WireDiffer) -> Result<(), crate::support::differ::Mismatch> {
    for name in ["stream-idmp-duration", "stream-idmp-maxsize"] {
        differ.run(&["CONFIG", "SET", name, "100"])?;
    }
    Ok(())
}

#[test]
fn idmp_cases_match_redis_8_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let peer = differ.info();
    let mut all = cases();
    all.extend(keyspace::cases());
    let mut failures = Vec::new();
    for case in &all {
        for protocol in [2, 3] {
            let outcome = differ.reset(protocol).and_then(|()| {
                default_settings(&mut differ)?;
                case.batches.iter().try_for_each(|b| send(&mut differ, b))
            });
            if let Err(mismatch) = outcome {
                failures.push(format!("idmp case {:?}: {mismatch}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {} idmp cases x 2 protocols on {peer}:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn idmp_random_sequences_match_redis_8_8() {
    if let Some(differ) = WireDiffer::start(PeerKind::Redis8) {
        random::run(differ, random::SEQUENCES);
    }
}

//! Redis 8.2–8.8 consumer-group additions against Redis 8.8 (`docs/reference/streams-8.md` §1,
//! §2, §4, §5): the deletion strategies on XADD and XTRIM, XDELEX, XACKDEL, the ENTRIESREAD
//! cap, XREADGROUP CLAIM and XNACK with the NACK zone, and their errors.
//!
//! The cases of `cases` run twice: against the engine in process (every reply and the group
//! state after each command, as `differential::case` does), and against `echomq serve` over the
//! wire in RESP2 and RESP3. Older peers (Redis 7.0, Valkey 8.1) have none of these commands, so
//! the cases run only on Redis 8.8; what 8.8 changes in replies the older peers also see
//! (`nacked-count` in XINFO STREAM FULL) is aligned by `support::normalize`.
//! Idle times (of CLAIM replies and XPENDING) are normalized; the cases keep membership
//! deterministic with CLAIM 0 (everything) or an hour (NACKed entries only, whose idle time is
//! the Unix time).

mod cases;

use crate::differential::case::{Case, run_cases};
use crate::support::differ::Mismatch;
use crate::support::peer::PeerKind;
use crate::support::wire::WireDiffer;

#[test]
fn deletion_claim_and_nack_cases_match_redis8() {
    run_cases(PeerKind::Redis8, &cases::all());
}

#[test]
fn deletion_claim_and_nack_cases_match_redis8_over_the_wire_in_resp2_and_resp3() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let all: Vec<Case> = cases::all();
    let mut failures = Vec::new();
    for case in &all {
        for protocol in [2, 3] {
            let outcome: Result<(), Mismatch> = differ.reset(protocol).and_then(|()| {
                case.steps
                    .iter()
                    .try_for_each(|argv| differ.run(argv).map(|_| ()))
            });
            if let Err(mismatch) = outcome {
                failures.push(format!("case {:?} (RESP{protocol}): {mismatch}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {} cases x 2 protocols on {}:\n\n{}",
        failures.len(),
        all.len(),
        differ.info(),
        failures.join("\n")
    );
}

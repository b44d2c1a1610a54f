//! XREADGROUP's CLAIM option (`docs/reference/streams-8.md` §4), through the command layer,
//! with the invariants (time order, NACK zone) checked after every command.

use std::sync::Arc;

use super::tests::{err, int, keyspace, ok, pending, read_stream};
use crate::keyspace::Keyspace;
use crate::reply::Reply;

// XREADGROUP ... CLAIM.

pub(super) fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

/// `[id, [f, v], idle, count]`.
pub(super) fn claimed(id: &str, idle: i64, count: i64) -> Reply {
    Reply::Array(vec![
        bulk(id),
        Reply::Array(vec![bulk("f"), bulk("v")]),
        int(idle),
        int(count),
    ])
}

pub(super) fn one_stream(key: &str, entries: Vec<Reply>) -> Reply {
    Reply::StreamMap(vec![(bulk(key), Reply::Array(entries))])
}

/// `(owner, delivery count)` of a pending id, from XPENDING's extended form.
pub(super) fn pending_row(ks: &Keyspace, id: &str) -> (Reply, Reply, Reply) {
    let Reply::Array(rows) = ok(ks, &format!("XPENDING s g {id} {id} 1")) else {
        panic!("XPENDING");
    };
    let Some(Reply::Array(row)) = rows.first() else {
        panic!("{id} is not pending");
    };
    (row[1].clone(), row[2].clone(), row[3].clone())
}

#[test]
fn claim_takes_idle_entries_first_then_new_ones_with_count_capping_the_total() {
    let (ks, clock) = keyspace(1000);
    read_stream(&ks, 3);
    ok(&ks, "XADD s 4-0 f v");
    ok(&ks, "XADD s 5-0 f v");
    clock.advance(100);
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c2 COUNT 4 CLAIM 50 STREAMS s >"),
        one_stream(
            "s",
            vec![
                claimed("1-0", 100, 1),
                claimed("2-0", 100, 1),
                claimed("3-0", 100, 1),
                claimed("4-0", 0, 0),
            ]
        )
    );
    assert_eq!(pending_row(&ks, "1-0"), (bulk("c2"), int(0), int(2)));
    // The claimed entries went to the end of the time order: nothing is idle enough now.
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c3 CLAIM 50 STREAMS s >"),
        one_stream("s", vec![claimed("5-0", 0, 0)])
    );
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c3 CLAIM 50 STREAMS s >"),
        Reply::NullArray
    );
}

#[test]
fn claim_walks_oldest_delivery_first_and_stops_at_the_first_fresh_entry() {
    let (ks, clock) = keyspace(1000);
    read_stream(&ks, 2);
    clock.advance(10);
    ok(&ks, "XCLAIM s g c 0 1-0");
    clock.advance(40);
    // 2-0 is idle 50, 1-0 only 40: 2-0 is first in time order and the walk stops at 1-0.
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c2 CLAIM 45 STREAMS s >"),
        one_stream("s", vec![claimed("2-0", 50, 1)])
    );
}

#[test]
fn claim_with_noack_claims_but_does_not_add_new_entries_to_the_pel() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XADD s 2-0 f v");
    ok(&ks, "XGROUP CREATE s g 0");
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c NOACK CLAIM 50 STREAMS s >"),
        one_stream("s", vec![claimed("1-0", 0, 0), claimed("2-0", 0, 0)])
    );
    assert_eq!(pending(&ks, "s", "g"), int(0));
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c NOACK CLAIM 50 STREAMS s >"),
        Reply::NullArray
    );
}

#[test]
fn claim_skips_ghosts_and_a_history_read_ignores_claim() {
    let (ks, clock) = keyspace(1000);
    read_stream(&ks, 2);
    ok(&ks, "XDEL s 1-0");
    clock.advance(100);
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >"),
        one_stream("s", vec![claimed("2-0", 100, 1)])
    );
    assert_eq!(pending(&ks, "s", "g"), int(2));
    let Reply::StreamMap(served) = ok(&ks, "XREADGROUP GROUP g c2 CLAIM 0 STREAMS s 0") else {
        panic!("history read");
    };
    let Reply::Entries(entries) = &served[0].1 else {
        panic!("a history read replies plain entries");
    };
    assert_eq!(entries.len(), 1);
}

#[test]
fn after_setid_an_entry_can_come_back_claimed_and_new_in_one_reply() {
    let (ks, clock) = keyspace(1000);
    read_stream(&ks, 1);
    ok(&ks, "XREADGROUP GROUP g c STREAMS s 0");
    ok(&ks, "XGROUP SETID s g 0");
    clock.advance(10);
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c CLAIM 5 STREAMS s >"),
        one_stream("s", vec![claimed("1-0", 10, 2), claimed("1-0", 0, 0)])
    );
    assert_eq!(pending_row(&ks, "1-0").2, int(1));
}

#[test]
fn claim_errors_as_redis_8_8() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 1);
    let cases = [
        (
            "XREAD CLAIM 10 STREAMS s 0",
            "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.",
        ),
        (
            "XREADGROUP GROUP g c CLAIM -1 STREAMS s >",
            "ERR min-idle-time must be a positive integer",
        ),
        (
            "XREADGROUP GROUP g c CLAIM 5.5 STREAMS s >",
            "ERR min-idle-time is not an integer or out of range",
        ),
        (
            "XREADGROUP GROUP g c CLAIM +10 STREAMS s >",
            "ERR min-idle-time is not an integer or out of range",
        ),
        (
            "XREADGROUP GROUP g c CLAIM STREAMS s >",
            "ERR min-idle-time is not an integer or out of range",
        ),
        (
            "XREADGROUP CLAIM GROUP g c STREAMS s >",
            "ERR min-idle-time is not an integer or out of range",
        ),
    ];
    for (command, expected) in cases {
        assert_eq!(err(&ks, command), expected, "{command}");
    }
    // The last CLAIM wins.
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c CLAIM 1000 CLAIM 0 STREAMS s >"),
        one_stream("s", vec![claimed("1-0", 0, 1)])
    );
}

#[test]
fn a_blocked_claim_read_wakes_when_an_entry_becomes_claimable_by_the_manual_clock() {
    let (ks, clock) = keyspace(1000);
    read_stream(&ks, 1);
    clock.advance(10);
    let parker = Arc::new(crate::blocking::Parker::default());
    let argv = [
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "BLOCK",
        "0",
        "CLAIM",
        "100",
        "STREAMS",
        "s",
        ">",
    ];
    let crate::keyspace::Execution::Blocked(handle) = ks.execute_blocking(&argv, parker) else {
        panic!("did not block");
    };
    assert_eq!(handle.deadline_ms(), Some(1100));
    clock.advance(89);
    assert_eq!(ks.expire_blocked(), 0);
    assert!(handle.try_take().is_none());
    clock.advance(1);
    assert_eq!(ks.expire_blocked(), 0);
    assert_eq!(
        handle.try_take(),
        Some(Ok(one_stream("s", vec![claimed("1-0", 100, 1)])))
    );
    assert_eq!(ks.blocked_count(), 0);
    ks.check_invariants().unwrap();
}

#[test]
fn a_blocked_claim_read_with_an_empty_pel_waits_min_idle_from_now() {
    let (ks, clock) = keyspace(1000);
    ok(&ks, "XGROUP CREATE s g $ MKSTREAM");
    let parker = Arc::new(crate::blocking::Parker::default());
    let argv = [
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "5000",
        "CLAIM",
        "100",
        "STREAMS",
        "s",
        ">",
    ];
    let crate::keyspace::Execution::Blocked(handle) = ks.execute_blocking(&argv, parker) else {
        panic!("did not block");
    };
    assert_eq!(handle.deadline_ms(), Some(1100));
    clock.advance(100);
    // Nothing to claim: it blocks again, with its next check after now.
    ks.expire_blocked();
    assert!(handle.try_take().is_none());
    assert!(handle.deadline_ms().is_some_and(|d| d > 1100));
    ok(&ks, "XADD s 1-0 f v");
    assert_eq!(
        handle.try_take(),
        Some(Ok(one_stream("s", vec![claimed("1-0", 0, 0)])))
    );
}

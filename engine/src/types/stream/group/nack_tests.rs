//! XNACK and the NACK zone (`docs/reference/streams-8.md` §5), and the invariants of the
//! indexes they use, through the command layer.

use std::sync::Arc;

use super::claim_tests::{bulk, claimed, one_stream, pending_row};
use super::tests::{err, int, keyspace, ok, pending, read_stream};
use crate::id::StreamId;
use crate::keyspace::Keyspace;
use crate::reply::Reply;

// XNACK and the NACK zone.

/// XPENDING's extended rows, `[id, consumer, idle, count]` each.
fn pending_rows(ks: &Keyspace) -> Vec<Reply> {
    let Reply::Array(rows) = ok(ks, "XPENDING s g - + 100") else {
        panic!("XPENDING");
    };
    rows
}

fn row(id: &str, consumer: &str, idle: i64, count: i64) -> Reply {
    Reply::Array(vec![bulk(id), bulk(consumer), int(idle), int(count)])
}

#[test]
fn xnack_modes_set_the_count_and_unown_the_entries() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 4);
    assert_eq!(ok(&ks, "XNACK s g SILENT IDS 1 1-0"), int(1));
    assert_eq!(ok(&ks, "XNACK s g FAIL IDS 1 2-0"), int(1));
    assert_eq!(ok(&ks, "XNACK s g FATAL IDS 1 3-0"), int(1));
    assert_eq!(ok(&ks, "XNACK s g SILENT IDS 1 4-0 RETRYCOUNT 7"), int(1));
    assert_eq!(
        pending_rows(&ks),
        vec![
            row("1-0", "", -1, 0),
            row("2-0", "", -1, 1),
            row("3-0", "", -1, i64::MAX),
            row("4-0", "", -1, 7),
        ]
    );
    let Reply::Array(summary) = ok(&ks, "XPENDING s g") else {
        panic!("XPENDING");
    };
    assert_eq!(summary[0], int(4));
    assert_eq!(summary[3], Reply::Array(vec![]));
    // SILENT never goes below 0.
    assert_eq!(ok(&ks, "XNACK s g SILENT IDS 1 1-0"), int(1));
    assert_eq!(pending_rows(&ks)[0], row("1-0", "", -1, 0));
}

#[test]
fn nacked_entries_are_claimed_first_in_nack_order() {
    let (ks, clock) = keyspace(1000);
    read_stream(&ks, 3);
    ok(&ks, "XNACK s g FAIL IDS 2 3-0 1-0");
    // Re-NACKing moves an entry to the end of the zone.
    ok(&ks, "XNACK s g FAIL IDS 1 3-0");
    clock.advance(5);
    assert_eq!(
        ok(&ks, "XREADGROUP GROUP g c2 COUNT 2 CLAIM 1000 STREAMS s >"),
        one_stream("s", vec![claimed("1-0", 1005, 1), claimed("3-0", 1005, 1)])
    );
    assert_eq!(pending_row(&ks, "1-0"), (bulk("c2"), int(0), int(2)));
}

#[test]
fn xnack_force_creates_unowned_entries_only_for_existing_ids() {
    let (ks, _) = keyspace(1000);
    for i in 1..=2 {
        ok(&ks, &format!("XADD s {i}-0 f v"));
    }
    ok(&ks, "XGROUP CREATE s g $");
    assert_eq!(ok(&ks, "XNACK s g FAIL IDS 3 1-0 9-0 1-0"), int(0));
    assert_eq!(ok(&ks, "XNACK s g FATAL IDS 3 1-0 9-0 2-0 FORCE"), int(2));
    assert_eq!(
        pending_rows(&ks),
        vec![row("1-0", "", -1, i64::MAX), row("2-0", "", -1, i64::MAX)]
    );
    // Duplicates count each time; a ghost is NACKed too.
    ok(&ks, "XDEL s 2-0");
    assert_eq!(
        ok(&ks, "XNACK s g FAIL IDS 3 1-0 1-0 2-0 RETRYCOUNT 0"),
        int(3)
    );
}

#[test]
fn other_commands_treat_nacked_entries_as_8_8() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 3);
    ok(&ks, "XNACK s g FAIL IDS 2 1-0 2-0");
    // A history read no longer returns them; the consumer keeps 3-0 only.
    let Reply::StreamMap(served) = ok(&ks, "XREADGROUP GROUP g c STREAMS s 0") else {
        panic!("history");
    };
    let Reply::Entries(entries) = &served[0].1 else {
        panic!("entries");
    };
    assert_eq!(entries.len(), 1);
    // DELCONSUMER removes only its own entries.
    assert_eq!(ok(&ks, "XGROUP DELCONSUMER s g c"), int(1));
    assert_eq!(pending(&ks, "s", "g"), int(2));
    // XCLAIM takes them whatever the min idle time.
    let Reply::Array(got) = ok(&ks, "XCLAIM s g c2 99999 1-0 JUSTID") else {
        panic!("XCLAIM");
    };
    assert_eq!(got, vec![bulk("1-0")]);
    // XAUTOCLAIM too, and drops a ghost.
    ok(&ks, "XNACK s g FAIL IDS 1 1-0");
    ok(&ks, "XDEL s 2-0");
    let Reply::Array(auto) = ok(&ks, "XAUTOCLAIM s g c3 99999 0 JUSTID") else {
        panic!("XAUTOCLAIM");
    };
    assert_eq!(auto[1], Reply::Array(vec![bulk("1-0")]));
    assert_eq!(auto[2], Reply::Array(vec![bulk("2-0")]));
    // XACK removes a NACKed entry.
    ok(&ks, "XNACK s g FAIL IDS 1 1-0");
    assert_eq!(ok(&ks, "XACK s g 1-0"), int(1));
    assert_eq!(pending(&ks, "s", "g"), int(0));
}

#[test]
fn xinfo_full_shows_the_nack_zone() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 2);
    ok(&ks, "XNACK s g FAIL IDS 1 2-0");
    let info = ok(&ks, "XINFO STREAM s FULL");
    let Reply::Map(fields) = info else {
        panic!("map")
    };
    let Some((_, Reply::Array(groups))) = fields.iter().find(|(k, _)| *k == bulk("groups")) else {
        panic!("groups");
    };
    let Reply::Map(group) = &groups[0] else {
        panic!("group map")
    };
    let names: Vec<Reply> = group.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        names,
        [
            "name",
            "last-delivered-id",
            "entries-read",
            "lag",
            "pel-count",
            "nacked-count",
            "pending",
            "consumers"
        ]
        .map(bulk)
    );
    assert_eq!(group[4].1, int(2));
    assert_eq!(group[5].1, int(1));
    let Reply::Array(pel) = &group[6].1 else {
        panic!("pending")
    };
    assert_eq!(pel[1], row("2-0", "", 0, 1));
}

#[test]
fn xnack_errors_in_redis_8_8_order() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 1);
    let cases = [
        (
            "XNACK s g SILENT IDS 1",
            "ERR wrong number of arguments for 'xnack' command",
        ),
        (
            "XNACK nokey g BAD IDS 1 x",
            "NOGROUP No such key 'nokey' or consumer group 'g'",
        ),
        (
            "XNACK s nog BAD IDS 1 x",
            "NOGROUP No such key 's' or consumer group 'nog'",
        ),
        (
            "XNACK s g BAD IDS 1 1-0",
            "ERR mode must be SILENT, FAIL, or FATAL",
        ),
        (
            "XNACK s g FAIL IDS 0 1-0",
            "ERR numids must be a positive integer",
        ),
        (
            "XNACK s g FAIL IDS x 1-0",
            "ERR numids must be a positive integer",
        ),
        (
            "XNACK s g FAIL IDS 2147483648 1-0",
            "ERR numids must be a positive integer",
        ),
        (
            "XNACK s g FAIL IDS 3 1-0 2-0",
            "ERR number of IDs doesn't match numids",
        ),
        (
            "XNACK s g FAIL IDS 1 1-0 2-0",
            "ERR Unrecognized XNACK option '2-0'",
        ),
        (
            "XNACK s g FAIL IDS 1 1-0 FAIL",
            "ERR Unrecognized XNACK option 'FAIL'",
        ),
        (
            "XNACK s g FAIL IDS 1 1-0 RETRYCOUNT",
            "ERR Unrecognized XNACK option 'RETRYCOUNT'",
        ),
        (
            "XNACK s g FAIL IDS 1 1-0 RETRYCOUNT x",
            "ERR value is not an integer or out of range",
        ),
        (
            "XNACK s g FAIL IDS 1 1-0 RETRYCOUNT -1",
            "ERR Invalid RETRYCOUNT value, must be >= 0",
        ),
        (
            "XNACK s g FAIL FORCE RETRYCOUNT 1",
            "ERR syntax error, expected IDS keyword",
        ),
        (
            "XNACK s g FAIL IDS 1 bad",
            "ERR Invalid stream ID specified as stream command argument",
        ),
    ];
    for (command, expected) in cases {
        assert_eq!(err(&ks, command), expected, "{command}");
    }
    // FORCE and RETRYCOUNT may come first; nothing changed so far.
    assert_eq!(
        ok(&ks, "XNACK s g FAIL FORCE RETRYCOUNT 3 IDS 1 1-0"),
        int(1)
    );
    assert_eq!(pending_rows(&ks), vec![row("1-0", "", -1, 3)]);
}

#[test]
fn xnack_wakes_a_blocked_claim_reader() {
    let (ks, _) = keyspace(1_700_000_000_000);
    read_stream(&ks, 1);
    let parker = Arc::new(crate::blocking::Parker::default());
    let argv = [
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "BLOCK",
        "0",
        "CLAIM",
        "60000",
        "STREAMS",
        "s",
        ">",
    ];
    let crate::keyspace::Execution::Blocked(handle) = ks.execute_blocking(&argv, parker) else {
        panic!("did not block");
    };
    ok(&ks, "XNACK s g FAIL IDS 1 1-0");
    assert_eq!(
        handle.try_take(),
        Some(Ok(one_stream(
            "s",
            vec![claimed("1-0", 1_700_000_000_000, 1)]
        )))
    );
}

// The invariants cover the new indexes: each corruption below is caught.

fn corrupted(corrupt: impl FnOnce(&mut crate::stream::Stream)) -> Result<(), String> {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 3);
    ok(&ks, "XNACK s g FAIL IDS 1 2-0");
    ok(&ks, "XTRIM s MAXLEN 3 ACKED");
    ks.check_invariants()?;
    ks.run(|db, _| {
        if let Ok(Some(stream)) = db.stream_mut(b"s") {
            corrupt(stream);
        }
    });
    ks.check_invariants()
}

#[test]
fn check_invariants_catches_a_wrong_cached_minimum_cursor() {
    let wrong = crate::id::StreamId::new(1, 0);
    let e = corrupted(|s| s.index.min_last_id = Some(wrong)).unwrap_err();
    assert!(e.contains("cached minimum cursor"), "{e}");
}

#[test]
fn check_invariants_catches_an_entry_indexed_twice_or_not_at_all() {
    let id = crate::id::StreamId::new(1, 0);
    let e = corrupted(|s| {
        let tag = s.groups.values().next().map(|g| g.tag).unwrap_or(0);
        s.index.refs.link(id, tag);
    })
    .unwrap_err();
    assert!(e.contains("indexed 2 times"), "{e}");
    let e = corrupted(|s| {
        s.index.refs.take(id);
    })
    .unwrap_err();
    assert!(e.contains("indexed 0 times"), "{e}");
}

#[test]
fn check_invariants_catches_a_nack_zone_that_is_not_the_unowned_entries() {
    let e = corrupted(|s| {
        if let Some(g) = s.groups.values_mut().next() {
            g.nacked += 1;
        }
    })
    .unwrap_err();
    assert!(e.contains("nacked-count"), "{e}");
    let e = corrupted(|s| {
        if let Some(g) = s.groups.values_mut().next() {
            let first = g.by_time.pop_first();
            if let Some((mut key, id)) = first {
                key.owned = true;
                g.by_time.insert(key, id);
            }
        }
    })
    .unwrap_err();
    assert!(e.contains("time order"), "{e}");
}

#[test]
fn a_claim_walk_ends_even_when_the_clock_went_back() {
    let (ks, clock) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XADD s 2-0 f v");
    ok(&ks, "XADD s 3-0 f v");
    ok(&ks, "XGROUP CREATE s g 0");
    clock.set(1100);
    ok(&ks, "XREADGROUP GROUP g c COUNT 1 STREAMS s >");
    clock.set(1120);
    ok(&ks, "XREADGROUP GROUP g c COUNT 1 STREAMS s >");
    clock.set(1200);
    ok(&ks, "XREADGROUP GROUP g c COUNT 1 STREAMS s >");
    clock.set(1150);
    // Re-timed to 1150, 1-0 and 2-0 land before 3-0 and would leapfrog forever: the walk
    // takes at most one step per entry pending when it began.
    let Reply::StreamMap(served) = ok(&ks, "XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >") else {
        panic!("a CLAIM read");
    };
    let Reply::Array(entries) = &served[0].1 else {
        panic!("entries");
    };
    assert_eq!(entries.len(), 3);
}

#[test]
fn pel_heap_bytes_counts_the_time_order_and_the_reference_index() {
    const N: usize = 1_000;
    let (ks, _) = keyspace(1000);
    read_stream(&ks, N as u64);
    ok(&ks, "XGROUP CREATE s g2 0");
    ok(&ks, "XREADGROUP GROUP g2 c STREAMS s >");
    ks.run(|db, _| {
        let Ok(Some(stream)) = db.stream(b"s") else {
            panic!("no stream s");
        };
        let Some(group) = stream.group(b"g") else {
            panic!("no group g");
        };
        // The chunk maps alone, as pel_heap_bytes counted before the 8.x indexes.
        let pels = group.pel.heap_bytes()
            + group
                .consumers
                .values()
                .map(|c| c.pel.heap_bytes())
                .sum::<usize>();
        let time_order =
            N * (std::mem::size_of::<super::TimeKey>() + std::mem::size_of::<StreamId>());
        assert!(
            group.pel_heap_bytes() >= pels + time_order,
            "the delivery-time order is not counted: {} < {pels} + {time_order}",
            group.pel_heap_bytes()
        );
        let groups: usize = stream.groups().map(|(_, g)| g.pel_heap_bytes()).sum();
        // Every pending id is in the reference index, under two groups (a list of two tags).
        let refs = N * (std::mem::size_of::<StreamId>() + 2 * std::mem::size_of::<u32>());
        assert!(
            stream.pel_heap_bytes() >= groups + refs,
            "the reference index is not counted: {} < {groups} + {refs}",
            stream.pel_heap_bytes()
        );
    });
}

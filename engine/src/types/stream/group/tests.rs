//! Consumer-group corner cases from `docs/reference/streams.md` (§4, §5), through the command
//! layer.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::blocking::Parker;
use crate::clock::ManualClock;
use crate::error::Error;
use crate::keyspace::{Execution, Keyspace};
use crate::reply::Reply;

pub(super) fn keyspace(ms: u64) -> (Arc<Keyspace>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(ms));
    (Arc::new(Keyspace::new(clock.clone())), clock)
}

pub(super) fn run(ks: &Keyspace, command: &str) -> Result<Reply, Error> {
    let argv: Vec<&str> = command.split_whitespace().collect();
    let reply = ks.execute(&argv);
    ks.check_invariants().unwrap();
    reply
}

pub(super) fn ok(ks: &Keyspace, command: &str) -> Reply {
    run(ks, command).unwrap_or_else(|e| panic!("{command}: {e}"))
}

pub(super) fn err(ks: &Keyspace, command: &str) -> String {
    run(ks, command).expect_err(command).to_string()
}

fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

pub(super) fn int(n: i64) -> Reply {
    Reply::Int(n)
}

/// XPENDING's total for a group.
pub(super) fn pending(ks: &Keyspace, key: &str, group: &str) -> Reply {
    let Reply::Array(summary) = ok(ks, &format!("XPENDING {key} {group}")) else {
        panic!("XPENDING did not reply an array");
    };
    summary[0].clone()
}

/// `n` entries `1-0 .. n-0`, read by group `g` (consumer `c`).
pub(super) fn read_stream(ks: &Keyspace, n: u64) {
    for i in 1..=n {
        ok(ks, &format!("XADD s {i}-0 f v"));
    }
    ok(ks, "XGROUP CREATE s g 0");
    ok(ks, "XREADGROUP GROUP g c STREAMS s >");
}

fn entry(id: &str, fields: &[&str]) -> Reply {
    Reply::Array(vec![
        bulk(id),
        Reply::Array(fields.iter().map(|f| bulk(f)).collect()),
    ])
}

/// The value of `name` in an XINFO map reply.
fn field(reply: &Reply, name: &str) -> Reply {
    let Reply::Map(pairs) = reply else {
        panic!("not a map: {reply:?}")
    };
    pairs
        .iter()
        .find(|(k, _)| *k == bulk(name))
        .map(|(_, v)| v.clone())
        .expect(name)
}

fn group_info(ks: &Keyspace, key: &str) -> Reply {
    match ok(ks, &format!("XINFO GROUPS {key}")) {
        Reply::Array(groups) => groups[0].clone(),
        other => panic!("{other:?}"),
    }
}

fn fill(ks: &Keyspace, key: &str, n: u64) {
    for i in 1..=n {
        ok(ks, &format!("XADD {key} {i}-0 f v{i}"));
    }
}

#[test]
fn xautoclaim_reports_deleted_entries_and_drops_them_from_the_pel() {
    let (ks, clock) = keyspace(1000);
    fill(&ks, "s", 3);
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XREADGROUP GROUP g alice STREAMS s >");
    ok(&ks, "XDEL s 2-0");
    clock.advance(100);
    let reply = ok(&ks, "XAUTOCLAIM s g bob 10 0 COUNT 10");
    assert_eq!(
        reply,
        Reply::Array(vec![
            bulk("0-0"),
            Reply::Array(vec![entry("1-0", &["f", "v1"]), entry("3-0", &["f", "v3"])]),
            Reply::Array(vec![bulk("2-0")]),
        ])
    );
    assert_eq!(
        ok(&ks, "XPENDING s g"),
        Reply::Array(vec![
            int(2),
            bulk("1-0"),
            bulk("3-0"),
            Reply::Array(vec![Reply::Array(vec![bulk("bob"), bulk("2")])]),
        ])
    );
}

#[test]
fn xautoclaim_count_bounds_the_scan_and_returns_a_cursor() {
    let (ks, clock) = keyspace(1000);
    fill(&ks, "s", 3);
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XREADGROUP GROUP g alice STREAMS s >");
    ok(&ks, "XDEL s 1-0");
    clock.advance(100);
    let reply = ok(&ks, "XAUTOCLAIM s g bob 10 0 COUNT 1 JUSTID");
    assert_eq!(
        reply,
        Reply::Array(vec![
            bulk("2-0"),
            Reply::Array(vec![]),
            Reply::Array(vec![bulk("1-0")])
        ])
    );
    assert_eq!(
        err(&ks, "XAUTOCLAIM s g bob 10 0 COUNT 0"),
        "ERR COUNT must be > 0"
    );
    assert_eq!(
        err(&ks, "XAUTOCLAIM nokey g c 1 1 COUNT 0"),
        "ERR COUNT must be > 0"
    );
    assert_eq!(
        err(&ks, "XAUTOCLAIM nokey g c 1 1"),
        "NOGROUP No such key 'nokey' or consumer group 'g'"
    );
}

#[test]
fn entries_read_and_lag_follow_reads_deletes_and_trims() {
    let (ks, _) = keyspace(1000);
    fill(&ks, "s", 5);
    ok(&ks, "XGROUP CREATE s g 0");
    let info = group_info(&ks, "s");
    assert_eq!(
        (field(&info, "entries-read"), field(&info, "lag")),
        (Reply::Null, int(5))
    );
    ok(&ks, "XREADGROUP GROUP g c COUNT 1 STREAMS s >");
    let info = group_info(&ks, "s");
    assert_eq!(
        (field(&info, "entries-read"), field(&info, "lag")),
        (int(1), int(4))
    );
    ok(&ks, "XDEL s 3-0");
    let info = group_info(&ks, "s");
    assert_eq!(
        field(&info, "lag"),
        Reply::Null,
        "a tombstone in the unread part hides the lag"
    );
    ok(&ks, "XREADGROUP GROUP g c STREAMS s >");
    let info = group_info(&ks, "s");
    assert_eq!(
        (field(&info, "entries-read"), field(&info, "lag")),
        (int(5), int(0))
    );

    let (ks, _) = keyspace(1000);
    fill(&ks, "t", 5);
    ok(&ks, "XGROUP CREATE t g 0");
    ok(&ks, "XTRIM t MAXLEN 2");
    let info = group_info(&ks, "t");
    assert_eq!(
        field(&info, "lag"),
        int(2),
        "past a trim the lag is the length"
    );
    let stream = ok(&ks, "XINFO STREAM t");
    assert_eq!(field(&stream, "max-deleted-entry-id"), bulk("0-0"));
}

#[test]
fn xpending_on_an_empty_pel_and_with_ranges() {
    let (ks, clock) = keyspace(1000);
    fill(&ks, "s", 3);
    ok(&ks, "XGROUP CREATE s g 0");
    assert_eq!(
        ok(&ks, "XPENDING s g"),
        Reply::Array(vec![int(0), Reply::Null, Reply::Null, Reply::NullArray])
    );
    ok(&ks, "XREADGROUP GROUP g a COUNT 2 STREAMS s >");
    clock.advance(50);
    ok(&ks, "XREADGROUP GROUP g b STREAMS s >");
    assert_eq!(
        ok(&ks, "XPENDING s g IDLE 40 - + 10"),
        Reply::Array(vec![
            Reply::Array(vec![bulk("1-0"), bulk("a"), int(50), int(1)]),
            Reply::Array(vec![bulk("2-0"), bulk("a"), int(50), int(1)]),
        ])
    );
    assert_eq!(
        ok(&ks, "XPENDING s g (1-0 + 10 b"),
        Reply::Array(vec![Reply::Array(vec![
            bulk("3-0"),
            bulk("b"),
            int(0),
            int(1)
        ])])
    );
    assert_eq!(ok(&ks, "XPENDING s g - + 10 nobody"), Reply::Array(vec![]));
    assert_eq!(ok(&ks, "XPENDING s g - + -1"), Reply::Array(vec![]));
    assert_eq!(err(&ks, "XPENDING s g - +"), "ERR syntax error");
    assert_eq!(err(&ks, "XPENDING s g IDLE 10 - +"), "ERR syntax error");
    assert_eq!(
        err(&ks, "XPENDING s nog"),
        "NOGROUP No such key 's' or consumer group 'nog'"
    );
}

#[test]
fn history_reads_return_deleted_entries_as_null_and_bump_counts() {
    let (ks, _) = keyspace(1000);
    fill(&ks, "s", 2);
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XREADGROUP GROUP g c STREAMS s >");
    ok(&ks, "XDEL s 1-0");
    let reply = ok(&ks, "XREADGROUP GROUP g c STREAMS s 0");
    assert_eq!(
        reply,
        Reply::StreamMap(vec![(
            bulk("s"),
            Reply::Array(vec![
                Reply::Array(vec![bulk("1-0"), Reply::NullArray]),
                entry("2-0", &["f", "v2"])
            ]),
        )])
    );
    assert_eq!(
        ok(&ks, "XPENDING s g - + 10"),
        Reply::Array(vec![
            Reply::Array(vec![bulk("1-0"), bulk("c"), int(0), int(1)]),
            Reply::Array(vec![bulk("2-0"), bulk("c"), int(0), int(2)]),
        ])
    );
    let empty = ok(&ks, "XREADGROUP GROUP g c STREAMS s 2-0");
    assert_eq!(
        empty,
        Reply::StreamMap(vec![(bulk("s"), Reply::Array(vec![]))])
    );
    assert_eq!(ok(&ks, "XACK s g 1-0 2-0 3-0"), int(2));
}

#[test]
fn setid_backwards_reassigns_pending_entries_to_the_new_reader() {
    let (ks, _) = keyspace(1000);
    fill(&ks, "s", 2);
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XREADGROUP GROUP g a STREAMS s >");
    ok(&ks, "XGROUP SETID s g 0");
    ok(&ks, "XREADGROUP GROUP g b COUNT 1 STREAMS s >");
    assert_eq!(
        ok(&ks, "XPENDING s g - + 10"),
        Reply::Array(vec![
            Reply::Array(vec![bulk("1-0"), bulk("b"), int(0), int(1)]),
            Reply::Array(vec![bulk("2-0"), bulk("a"), int(0), int(1)]),
        ])
    );
}

#[test]
fn xclaim_moves_entries_and_drops_deleted_ones() {
    let (ks, clock) = keyspace(1000);
    fill(&ks, "s", 3);
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XREADGROUP GROUP g a STREAMS s >");
    ok(&ks, "XDEL s 2-0");
    clock.advance(10);
    assert_eq!(
        ok(&ks, "XCLAIM s g b 20 1-0"),
        Reply::Array(vec![]),
        "not idle long enough"
    );
    assert_eq!(
        ok(&ks, "XCLAIM s g b 5 1-0 2-0 9-0 JUSTID"),
        Reply::Array(vec![bulk("1-0")])
    );
    assert_eq!(
        ok(&ks, "XPENDING s g - + 10"),
        Reply::Array(vec![
            Reply::Array(vec![bulk("1-0"), bulk("b"), int(0), int(1)]),
            Reply::Array(vec![bulk("3-0"), bulk("a"), int(10), int(1)]),
        ])
    );
    assert_eq!(
        ok(&ks, "XCLAIM s g c 0 3-0 RETRYCOUNT 7 IDLE 5"),
        Reply::Array(vec![entry("3-0", &["f", "v3"])])
    );
    assert_eq!(
        ok(&ks, "XPENDING s g - + 10 c"),
        Reply::Array(vec![Reply::Array(vec![
            bulk("3-0"),
            bulk("c"),
            int(5),
            int(7)
        ])])
    );
    assert_eq!(
        err(&ks, "XCLAIM s g c 0 3-0 JUSTID 5-0"),
        "ERR Unrecognized XCLAIM option '5-0'"
    );
    assert_eq!(
        err(&ks, "XCLAIM s g c x 3-0"),
        "ERR Invalid min-idle-time argument for XCLAIM"
    );
    assert_eq!(
        err(&ks, "XCLAIM s g c 0 3-0 IDLE x"),
        "ERR Invalid IDLE option argument for XCLAIM"
    );
    assert_eq!(
        err(&ks, "XCLAIM s nog c 0 3-0"),
        "NOGROUP No such key 's' or consumer group 'nog'"
    );
    assert_eq!(
        ok(&ks, "XCLAIM s g d 0 1-0 FORCE LASTID 9-0 JUSTID"),
        Reply::Array(vec![bulk("1-0")])
    );
    assert_eq!(
        field(&group_info(&ks, "s"), "last-delivered-id"),
        bulk("9-0")
    );
}

#[test]
fn xgroup_errors_and_consumers() {
    let (ks, _) = keyspace(1000);
    assert_eq!(
        err(&ks, "XGROUP CREATE s g $"),
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
    );
    assert_eq!(
        err(&ks, "XGROUP DESTROY s g"),
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
    );
    ok(&ks, "XGROUP CREATE s g $ MKSTREAM");
    assert_eq!(
        err(&ks, "XGROUP CREATE s g $"),
        "BUSYGROUP Consumer Group name already exists"
    );
    assert_eq!(
        err(&ks, "XGROUP CREATE s h $ ENTRIESREAD -2"),
        "ERR value for ENTRIESREAD must be positive or -1"
    );
    assert_eq!(
        err(&ks, "XGROUP CREATE s h $ FOO"),
        "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    );
    assert_eq!(
        err(&ks, "XGROUP create s h $ ENTRIESREAD"),
        "ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP."
    );
    assert_eq!(
        err(&ks, "XGROUP FOO s"),
        "ERR unknown subcommand 'FOO'. Try XGROUP HELP."
    );
    assert_eq!(
        err(&ks, "XGROUP CREATE s"),
        "ERR wrong number of arguments for 'xgroup|create' command"
    );
    assert_eq!(
        err(&ks, "XGROUP SETID s nog 0"),
        "NOGROUP No such consumer group 'nog' for key name 's'"
    );
    assert_eq!(ok(&ks, "XGROUP CREATECONSUMER s g alice"), int(1));
    assert_eq!(ok(&ks, "XGROUP CREATECONSUMER s g alice"), int(0));
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XREADGROUP GROUP g alice STREAMS s >");
    assert_eq!(ok(&ks, "XGROUP DELCONSUMER s g alice"), int(1));
    assert_eq!(
        ok(&ks, "XPENDING s g"),
        Reply::Array(vec![int(0), Reply::Null, Reply::Null, Reply::NullArray])
    );
    assert_eq!(ok(&ks, "XGROUP DESTROY s g"), int(1));
    assert_eq!(ok(&ks, "XGROUP DESTROY s g"), int(0));
    assert!(matches!(ok(&ks, "XGROUP HELP"), Reply::Array(lines) if lines.len() == 17));
}

#[test]
fn xreadgroup_and_xread_argument_errors() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XADD str 1-0 f v");
    assert_eq!(
        err(&ks, "XREADGROUP GROUP g c STREAMS s"),
        "ERR wrong number of arguments for 'xreadgroup' command"
    );
    assert_eq!(
        err(&ks, "XREADGROUP GROUP g c STREAMS s t >"),
        "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified."
    );
    assert_eq!(
        err(&ks, "XREAD STREAMS s t 0"),
        "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified."
    );
    assert_eq!(
        err(&ks, "XREADGROUP GROUP g c STREAMS s $")
            .split(':')
            .next(),
        Some("ERR The $ ID is meaningless in the context of XREADGROUP")
    );
    assert_eq!(
        err(&ks, "XREADGROUP GROUP g c STREAMS nokey >"),
        "NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option"
    );
    assert_eq!(
        err(&ks, "XREAD STREAMS s >"),
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
    );
    assert_eq!(
        err(&ks, "XREAD GROUP g c STREAMS s 0"),
        "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
    );
    assert_eq!(
        err(&ks, "XREAD BLOCK -1 STREAMS s 0"),
        "ERR timeout is negative"
    );
    assert_eq!(
        err(&ks, "XREAD BLOCK x STREAMS s 0"),
        "ERR timeout is not an integer or out of range"
    );
    assert_eq!(
        err(&ks, "XREADGROUP COUNT 1 NOACK STREAMS s >"),
        "ERR Missing GROUP option for XREADGROUP"
    );
    assert_eq!(ok(&ks, "XREAD STREAMS s 1-0"), Reply::NullArray);
    assert_eq!(
        ok(&ks, "XREAD STREAMS s +"),
        Reply::StreamMap(vec![(
            bulk("s"),
            Reply::Array(vec![entry("1-0", &["f", "v"])])
        )])
    );
    assert_eq!(
        ok(&ks, "XREAD BLOCK 10 STREAMS s $"),
        Reply::NullArray,
        "execute cannot block"
    );
}

#[test]
fn noack_reads_leave_nothing_pending_and_do_not_mark_active() {
    let (ks, _) = keyspace(1000);
    fill(&ks, "s", 2);
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XREADGROUP GROUP g c NOACK STREAMS s >");
    let consumers = ok(&ks, "XINFO CONSUMERS s g");
    let Reply::Array(consumers) = consumers else {
        panic!()
    };
    assert_eq!(field(&consumers[0], "pending"), int(0));
    assert_eq!(field(&consumers[0], "inactive"), int(-1));
    assert_eq!(
        field(&group_info(&ks, "s"), "last-delivered-id"),
        bulk("2-0")
    );
}

fn blocked(ks: &Arc<Keyspace>, command: &str) -> (crate::keyspace::BlockedHandle, Arc<Parker>) {
    let parker = Arc::new(Parker::default());
    let argv: Vec<&str> = command.split_whitespace().collect();
    match ks.execute_blocking(&argv, parker.clone()) {
        Execution::Blocked(handle) => (handle, parker),
        Execution::Done(reply) => panic!("{command} did not block: {reply:?}"),
    }
}

#[test]
fn a_blocked_reader_wakes_on_xadd_from_another_thread() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    let reader = {
        let ks = ks.clone();
        thread::spawn(move || ks.execute_wait(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]))
    };
    while ks.blocked_count() == 0 {
        thread::sleep(Duration::from_millis(1));
    }
    ok(&ks, "XADD s 2-0 f w");
    let reply = reader.join().unwrap().unwrap();
    assert_eq!(
        reply,
        Reply::StreamMap(vec![(
            bulk("s"),
            Reply::Array(vec![entry("2-0", &["f", "w"])])
        )])
    );
    assert_eq!(ks.blocked_count(), 0);
}

#[test]
fn a_timeout_fires_at_its_deadline_by_the_manual_clock() {
    let (ks, clock) = keyspace(1000);
    let (handle, _) = blocked(&ks, "XREAD BLOCK 500 STREAMS s 0");
    assert_eq!(handle.deadline_ms(), Some(1500));
    clock.advance(499);
    assert_eq!(ks.expire_blocked(), 0);
    assert!(handle.try_take().is_none());
    clock.advance(1);
    assert_eq!(ks.expire_blocked(), 1);
    assert_eq!(handle.try_take(), Some(Ok(Reply::NullArray)));
    assert_eq!(ks.blocked_count(), 0);
}

#[test]
fn readers_of_one_group_wake_in_fifo_order_and_the_rest_block_again() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XGROUP CREATE s g $ MKSTREAM");
    let (first, _) = blocked(&ks, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS s >");
    let (second, _) = blocked(&ks, "XREADGROUP GROUP g c2 BLOCK 0 STREAMS s >");
    ok(&ks, "XADD s 1-0 f v");
    assert!(first.try_take().is_some_and(|r| r.is_ok()));
    assert!(
        second.try_take().is_none(),
        "the first reader took the entry"
    );
    assert_eq!(ks.blocked_count(), 1);
    ok(&ks, "XADD s 2-0 f v");
    assert_eq!(
        second.try_take(),
        Some(Ok(Reply::StreamMap(vec![(
            bulk("s"),
            Reply::Array(vec![entry("2-0", &["f", "v"])])
        )])))
    );
}

#[test]
fn plain_readers_wake_in_fifo_order() {
    let (ks, _) = keyspace(1000);
    let parkers: Vec<_> = (0..3)
        .map(|_| blocked(&ks, "XREAD BLOCK 0 STREAMS s 0"))
        .collect();
    ok(&ks, "XADD s 1-0 f v");
    for (handle, _) in &parkers {
        assert!(handle.try_take().is_some());
    }
}

#[test]
fn xreadgroup_fails_with_nogroup_when_the_group_is_destroyed_or_key_deleted() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XGROUP CREATE s g $ MKSTREAM");
    let (reader, _) = blocked(&ks, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    let (plain, _) = blocked(&ks, "XREAD BLOCK 0 STREAMS s $");
    ok(&ks, "XGROUP DESTROY s g");
    assert_eq!(
        reader.try_take().map(|r| r.map_err(|e| e.to_string())),
        Some(Err(
            "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option".into()
        ))
    );
    assert!(plain.try_take().is_none(), "XREAD ignores deletions");
    ok(&ks, "XGROUP CREATE s g $");
    let (reader, _) = blocked(&ks, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    ks.run(|db, _| db.remove(b"s"));
    assert!(reader.try_take().is_some_and(|r| r.is_err()));
    assert_eq!(ks.blocked_count(), 1);
}

#[test]
fn dropping_a_blocked_handle_unregisters_it() {
    let (ks, _) = keyspace(1000);
    let (handle, _) = blocked(&ks, "XREAD BLOCK 0 STREAMS a b 0 0");
    assert_eq!(ks.blocked_count(), 1);
    drop(handle);
    assert_eq!(ks.blocked_count(), 0);
    ks.check_invariants().unwrap();
}

#[test]
fn dollar_is_rewritten_before_blocking() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 5-0 f v");
    let (handle, _) = blocked(&ks, "XREAD BLOCK 0 STREAMS s $");
    ok(&ks, "XDEL s 5-0");
    ok(&ks, "XADD s 6-0 f v");
    assert!(handle.try_take().is_some());
}

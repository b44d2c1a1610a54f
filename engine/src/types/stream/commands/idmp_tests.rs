//! XADD IDMP/IDMPAUTO, XCFGSET, XIDMPRECORD and XINFO's IDMP fields through the command layer
//! (`docs/reference/streams-8.md` §3), with a manual clock: expiry is shown by moving time, never
//! by sleeping.

use std::sync::Arc;

use crate::clock::ManualClock;
use crate::error::Error;
use crate::keyspace::Keyspace;
use crate::reply::Reply;
use crate::stream::idmp::auto_iid;

/// A time far from 0, so `now - duration` is a real threshold.
const T0: u64 = 1_000_000_000;

fn keyspace() -> (Keyspace, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(T0));
    (Keyspace::new(clock.clone()), clock)
}

fn run_argv(ks: &Keyspace, argv: &[&[u8]]) -> Result<Reply, Error> {
    let reply = ks.execute(argv);
    ks.check_invariants().unwrap();
    reply
}

fn run(ks: &Keyspace, command: &str) -> Result<Reply, Error> {
    let argv: Vec<&[u8]> = command.split_whitespace().map(str::as_bytes).collect();
    run_argv(ks, &argv)
}

fn ok(ks: &Keyspace, command: &str) -> Reply {
    run(ks, command).unwrap_or_else(|e| panic!("{command}: {e}"))
}

fn err(ks: &Keyspace, command: &str) -> String {
    run(ks, command).expect_err(command).to_string()
}

fn id(text: &str) -> Reply {
    Reply::bulk(text)
}

/// XINFO STREAM's value of `field`.
fn info(ks: &Keyspace, key: &str, field: &str) -> Reply {
    let Reply::Map(pairs) = ok(ks, &format!("XINFO STREAM {key}")) else {
        panic!("XINFO STREAM is a map");
    };
    pairs
        .into_iter()
        .find(|(name, _)| *name == Reply::bulk(field))
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("no {field}"))
}

fn int(ks: &Keyspace, key: &str, field: &str) -> i64 {
    match info(ks, key, field) {
        Reply::Int(n) => n,
        other => panic!("{field} is {other:?}"),
    }
}

#[test]
fn a_duplicate_answers_the_original_id_and_changes_nothing() {
    let (ks, clock) = keyspace();
    assert_eq!(ok(&ks, "XADD s IDMP p1 i1 * f v"), id("1000000000-0"));
    clock.advance(5);
    assert_eq!(ok(&ks, "XADD s IDMP p1 i1 * f other"), id("1000000000-0"));
    assert_eq!(ok(&ks, "XLEN s"), Reply::Int(1));
    assert_eq!(info(&ks, "s", "last-generated-id"), id("1000000000-0"));
    assert_eq!(int(&ks, "s", "entries-added"), 1);
    // Another producer, or another iid, is a new entry.
    assert_eq!(ok(&ks, "XADD s IDMP p2 i1 * f v"), id("1000000005-0"));
    assert_eq!(ok(&ks, "XADD s IDMP p1 i2 * f v"), id("1000000005-1"));
    assert_eq!(int(&ks, "s", "pids-tracked"), 2);
    assert_eq!(int(&ks, "s", "iids-tracked"), 3);
    assert_eq!(int(&ks, "s", "iids-added"), 3);
    assert_eq!(int(&ks, "s", "iids-duplicates"), 1);
}

#[test]
fn a_duplicate_does_not_trim_and_survives_xdel_and_trimming() {
    let (ks, _) = keyspace();
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XADD s 2-0 f v");
    let first = ok(&ks, "XADD s IDMP p i * f v");
    assert_eq!(ok(&ks, "XADD s MAXLEN 1 IDMP p i * f v"), first);
    assert_eq!(ok(&ks, "XLEN s"), Reply::Int(3));
    // The map is independent of content: the entry gone, the iid still answers.
    ok(&ks, "XTRIM s MAXLEN 0");
    assert_eq!(ok(&ks, "XADD s IDMP p i * f v"), first);
    assert_eq!(ok(&ks, "XLEN s"), Reply::Int(0));
}

#[test]
fn options_come_in_any_order() {
    let (ks, _) = keyspace();
    ok(&ks, "XADD s 9999999999999-0 f v");
    for (i, form) in [
        "XADD s NOMKSTREAM IDMP p a{} MAXLEN ~ 10 * f v",
        "XADD s IDMP p a{} NOMKSTREAM MAXLEN = 10 * f v",
        "XADD s MAXLEN ~ 10 LIMIT 0 IDMP p a{} * f v",
        "XADD s MINID 0 IDMPAUTO p NOMKSTREAM * f a{}",
        "XADD s idmpauto p maxlen 10 * g a{}",
    ]
    .iter()
    .enumerate()
    {
        let cmd = form.replace("{}", &i.to_string());
        let first = ok(&ks, &cmd);
        assert_eq!(ok(&ks, &cmd), first, "{cmd}");
    }
    assert_eq!(int(&ks, "s", "iids-added"), 5);
    assert_eq!(int(&ks, "s", "iids-duplicates"), 5);
    // NOMKSTREAM on a missing key replies null before any IDMP work.
    assert_eq!(ok(&ks, "XADD nokey NOMKSTREAM IDMP p i * f v"), Reply::Null);
    assert_eq!(ok(&ks, "XLEN nokey"), Reply::Int(0));
}

#[test]
fn xadd_idmp_errors_in_redis_order() {
    let (ks, _) = keyspace();
    let cases = [
        (
            "XADD s IDMP p i IDMP p j * f v",
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            "XADD s IDMPAUTO p IDMP p j * f v",
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            "XADD s IDMP p i IDMPAUTO q * f v",
            "ERR syntax error, IDMP/IDMPAUTO specified multiple times",
        ),
        (
            "XADD s IDMP p i 1-1 f v",
            "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        ),
        (
            "XADD s IDMPAUTO p 5-* f v",
            "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        ),
        // The id must parse before it is found not to be `*`.
        (
            "XADD s IDMP p i bad f v",
            "ERR Invalid stream ID specified as stream command argument",
        ),
        // IDMP takes two tokens whatever they are: `*` is the iid and `f` the id.
        (
            "XADD s IDMP p1 * f v",
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (
            "XADD s IDMP p *",
            "ERR wrong number of arguments for 'xadd' command",
        ),
        (
            "XADD s f v IDMP",
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (
            "XADD s IDMPAUTO",
            "ERR wrong number of arguments for 'xadd' command",
        ),
        (
            "XADD s IDMP p i * f",
            "ERR wrong number of arguments for 'xadd' command",
        ),
        (
            "XADD s IDMPAUTO p *",
            "ERR wrong number of arguments for 'xadd' command",
        ),
        (
            "XADD s IDMP p i 0-0 f v",
            "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs",
        ),
    ];
    for (cmd, want) in cases {
        assert_eq!(err(&ks, cmd), want, "{cmd}");
    }
    let empty: [(&[&[u8]], &str); 4] = [
        (
            &[b"XADD", b"s", b"IDMP", b"", b"i", b"*", b"f", b"v"],
            "ERR syntax error, IDMP requires a non-empty producer ID",
        ),
        (
            &[b"XADD", b"s", b"IDMP", b"p", b"", b"*", b"f", b"v"],
            "ERR syntax error, IDMP requires a non-empty idempotent ID",
        ),
        (
            &[b"XADD", b"s", b"IDMP", b"", b"", b"*", b"f", b"v"],
            "ERR syntax error, IDMP requires a non-empty producer ID",
        ),
        (
            &[b"XADD", b"s", b"IDMPAUTO", b"", b"*", b"f", b"v"],
            "ERR syntax error, IDMPAUTO requires a non-empty producer ID",
        ),
    ];
    for (argv, want) in empty {
        assert_eq!(run_argv(&ks, argv).unwrap_err().to_string(), want);
    }
    // Nothing was created by any of them.
    assert_eq!(ok(&ks, "XLEN s"), Reply::Int(0));
    assert_eq!(err(&ks, "XINFO STREAM s"), "ERR no such key");
}

#[test]
fn idmpauto_ignores_pair_order_and_shares_the_explicit_namespace() {
    let (ks, _) = keyspace();
    let first = ok(&ks, "XADD s IDMPAUTO p * a 1 b 2");
    assert_eq!(ok(&ks, "XADD s IDMPAUTO p * b 2 a 1"), first);
    assert_ne!(ok(&ks, "XADD s IDMPAUTO p * a 2 b 1"), first);
    // The same 16 bytes given to IDMP are the same iid.
    let iid = auto_iid(&["a", "1", "b", "2"]);
    let argv: [&[u8]; 8] = [b"XADD", b"s", b"IDMP", b"p", &iid, b"*", b"x", b"y"];
    assert_eq!(run_argv(&ks, &argv).unwrap(), first);
    // Binary fields and values are hashed as bytes.
    let bin: [&[u8]; 7] = [b"XADD", b"s", b"IDMPAUTO", b"p", b"*", b"\x00\xff", b"\r\n"];
    let bin_id = run_argv(&ks, &bin).unwrap();
    assert_eq!(run_argv(&ks, &bin).unwrap(), bin_id);
    assert_eq!(int(&ks, "s", "iids-added"), 3);
}

#[test]
fn eviction_at_maxsize_drops_the_oldest_iid() {
    let (ks, _) = keyspace();
    ok(&ks, "XADD s 9999999999999-0 f v");
    assert_eq!(ok(&ks, "XCFGSET s IDMP-MAXSIZE 2"), Reply::OK);
    let a = ok(&ks, "XADD s IDMP p a * f v");
    let b = ok(&ks, "XADD s IDMP p b * f v");
    // A hit does not refresh a's position.
    assert_eq!(ok(&ks, "XADD s IDMP p a * f v"), a);
    ok(&ks, "XADD s IDMP p c * f v");
    assert_eq!(int(&ks, "s", "iids-tracked"), 2);
    assert_eq!(ok(&ks, "XADD s IDMP p b * f v"), b);
    assert_ne!(ok(&ks, "XADD s IDMP p a * f v"), a);
    // Each producer has its own bound.
    ok(&ks, "XADD s IDMP q a * f v");
    assert_eq!(int(&ks, "s", "iids-tracked"), 3);
}

#[test]
fn iids_expire_by_their_ids_milliseconds_as_the_clock_moves() {
    let (ks, clock) = keyspace();
    ok(&ks, "XADD s IDMP p old * f v");
    ok(&ks, "XCFGSET s IDMP-DURATION 10");
    let old = ok(&ks, "XADD s IDMP p old * f v");
    clock.advance(4_000);
    let young = ok(&ks, "XADD s IDMP p young * f v");
    clock.advance(5_999);
    assert_eq!(int(&ks, "s", "iids-tracked"), 2);
    assert_eq!(ok(&ks, "XADD s IDMP p old * f v"), old);
    clock.advance(1);
    // now - 10 s is old's millisecond: it is gone, young (4 s later) is not.
    assert_eq!(int(&ks, "s", "iids-tracked"), 1);
    assert_ne!(ok(&ks, "XADD s IDMP p old * f v"), old);
    assert_eq!(ok(&ks, "XADD s IDMP p young * f v"), young);
    clock.advance(60_000);
    assert_eq!(int(&ks, "s", "pids-tracked"), 0);
    assert_eq!(int(&ks, "s", "iids-tracked"), 0);
    // The lifetime counters stay.
    assert_eq!(int(&ks, "s", "iids-added"), 4);
    assert_eq!(int(&ks, "s", "iids-duplicates"), 2);
}

#[test]
fn xcfgset_validates_in_redis_order_and_clears_only_on_change() {
    let (ks, _) = keyspace();
    assert_eq!(err(&ks, "XCFGSET nokey IDMP-DURATION 5"), "ERR no such key");
    assert_eq!(err(&ks, "XCFGSET nokey"), "ERR no such key");
    ks.run(|db, _| db.insert(b"str", crate::keyspace::Value::String("x".into())));
    assert_eq!(
        err(&ks, "XCFGSET str IDMP-DURATION 5"),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
    ok(&ks, "XADD s IDMP p i * f v");
    let cases = [
        ("XCFGSET s", "ERR At least one parameter must be specified"),
        ("XCFGSET s IDMP-DURATION", "ERR syntax error"),
        ("XCFGSET s FOO 1", "ERR syntax error"),
        (
            "XCFGSET s IDMP-DURATION x",
            "ERR value is not an integer or out of range",
        ),
        (
            "XCFGSET s IDMP-DURATION 01",
            "ERR value is not an integer or out of range",
        ),
        (
            "XCFGSET s IDMP-DURATION 0",
            "ERR IDMP-DURATION must be between 1 and 86400 seconds",
        ),
        (
            "XCFGSET s IDMP-DURATION 86401",
            "ERR IDMP-DURATION must be between 1 and 86400 seconds",
        ),
        (
            "XCFGSET s IDMP-DURATION -1",
            "ERR IDMP-DURATION must be between 1 and 86400 seconds",
        ),
        (
            "XCFGSET s IDMP-MAXSIZE 0",
            "ERR IDMP-MAXSIZE must be between 1 and 10000 entries",
        ),
        (
            "XCFGSET s IDMP-MAXSIZE 10001",
            "ERR IDMP-MAXSIZE must be between 1 and 10000 entries",
        ),
        (
            "XCFGSET s IDMP-DURATION 5 IDMP-DURATION 5",
            "ERR IDMP-DURATION specified multiple times",
        ),
        (
            "XCFGSET s IDMP-MAXSIZE 5 IDMP-MAXSIZE 6",
            "ERR IDMP-MAXSIZE specified multiple times",
        ),
        // Checked in argument order: the bad value before the repeat after it.
        (
            "XCFGSET s IDMP-MAXSIZE 0 IDMP-MAXSIZE 6",
            "ERR IDMP-MAXSIZE must be between 1 and 10000 entries",
        ),
        ("XCFGSET s IDMP-DURATION 5 FOO", "ERR syntax error"),
    ];
    for (cmd, want) in cases {
        assert_eq!(err(&ks, cmd), want, "{cmd}");
    }
    // Nothing changed by the failures.
    assert_eq!(int(&ks, "s", "idmp-duration"), 100);
    assert_eq!(int(&ks, "s", "iids-tracked"), 1);
    // The same values: no clear.
    ok(&ks, "XCFGSET s IDMP-DURATION 100 IDMP-MAXSIZE 100");
    assert_eq!(int(&ks, "s", "iids-tracked"), 1);
    // A different value clears every producer, counters kept.
    ok(&ks, "xcfgset s idmp-maxsize 7");
    assert_eq!(int(&ks, "s", "idmp-maxsize"), 7);
    assert_eq!(int(&ks, "s", "pids-tracked"), 0);
    assert_eq!(int(&ks, "s", "iids-tracked"), 0);
    assert_eq!(int(&ks, "s", "iids-added"), 1);
    assert_ne!(ok(&ks, "XADD s IDMP p i * f v"), Reply::Null);
    assert_eq!(int(&ks, "s", "iids-added"), 2);
    assert_eq!(int(&ks, "s", "iids-duplicates"), 0);
}

#[test]
fn xidmprecord_checks_in_redis_order_then_records() {
    let (ks, _) = keyspace();
    ks.run(|db, _| db.insert(b"str", crate::keyspace::Value::String("x".into())));
    let cases = [
        (
            "XIDMPRECORD nokey p i bad",
            "ERR Invalid stream ID specified as stream command argument",
        ),
        ("XIDMPRECORD nokey p i 1", "ERR no such key"),
        (
            "XIDMPRECORD str p i 1-0",
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        (
            "XIDMPRECORD s p i 1-0 extra",
            "ERR wrong number of arguments for 'xidmprecord' command",
        ),
        (
            "XIDMPRECORD s p i",
            "ERR wrong number of arguments for 'xidmprecord' command",
        ),
    ];
    for (cmd, want) in cases {
        assert_eq!(err(&ks, cmd), want, "{cmd}");
    }
    let empty: [(&[&[u8]], &str); 3] = [
        (
            &[b"XIDMPRECORD", b"nokey", b"", b"i", b"x"],
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (
            &[b"XIDMPRECORD", b"nokey", b"", b"", b"1-0"],
            "ERR producer ID must be non-empty",
        ),
        (
            &[b"XIDMPRECORD", b"nokey", b"p", b"", b"1-0"],
            "ERR idempotent ID must be non-empty",
        ),
    ];
    for (argv, want) in empty {
        assert_eq!(run_argv(&ks, argv).unwrap_err().to_string(), want);
    }
    ok(&ks, "XADD s 9999999999999-0 f v");
    ok(&ks, "XADD s 9999999999999-1 f v");
    ok(&ks, "XDEL s 9999999999999-1");
    assert_eq!(
        err(&ks, "XIDMPRECORD s p i 9999999999999-1"),
        "ERR No such message in stream"
    );
    assert_eq!(
        err(&ks, "XIDMPRECORD s p i 5-0"),
        "ERR No such message in stream"
    );
    assert_eq!(ok(&ks, "XIDMPRECORD s p i 9999999999999-0"), Reply::OK);
    assert_eq!(ok(&ks, "XIDMPRECORD s p i 9999999999999-0"), Reply::OK);
    ok(&ks, "XADD s 9999999999999-5 f v");
    assert_eq!(
        err(&ks, "XIDMPRECORD s p i 9999999999999-5"),
        "ERR IID already exists for this producer with a different stream ID"
    );
    assert_eq!(int(&ks, "s", "iids-added"), 1);
    assert_eq!(int(&ks, "s", "iids-duplicates"), 0);
    assert_eq!(ok(&ks, "XADD s IDMP p i * f v"), id("9999999999999-0"));
    assert_eq!(int(&ks, "s", "iids-duplicates"), 1);
}

#[test]
fn xinfo_stream_shows_the_idmp_fields_in_redis_order() {
    let (ks, _) = keyspace();
    ok(&ks, "XADD s IDMP p i * f v");
    let names = |reply: Reply| -> Vec<Reply> {
        let Reply::Map(pairs) = reply else {
            panic!("a map")
        };
        pairs.into_iter().map(|(name, _)| name).collect()
    };
    let expected = |tail: &[&str]| -> Vec<Reply> {
        [
            "length",
            "radix-tree-keys",
            "radix-tree-nodes",
            "last-generated-id",
            "max-deleted-entry-id",
            "entries-added",
            "recorded-first-entry-id",
            "idmp-duration",
            "idmp-maxsize",
            "pids-tracked",
            "iids-tracked",
            "iids-added",
            "iids-duplicates",
        ]
        .iter()
        .chain(tail)
        .map(Reply::bulk)
        .collect()
    };
    assert_eq!(
        names(ok(&ks, "XINFO STREAM s")),
        expected(&["groups", "first-entry", "last-entry"])
    );
    assert_eq!(
        names(ok(&ks, "XINFO STREAM s FULL")),
        expected(&["entries", "groups"])
    );
}

#[test]
fn new_streams_take_the_idmp_settings_in_force_at_creation() {
    let (ks, _) = keyspace();
    ok(&ks, "XADD a 1-0 f v");
    ks.config().set_idmp_duration(7);
    ks.config().set_idmp_maxsize(3);
    ok(&ks, "XADD b 1-0 f v");
    ok(&ks, "XGROUP CREATE c g $ MKSTREAM");
    assert_eq!(int(&ks, "a", "idmp-duration"), 100);
    assert_eq!(int(&ks, "a", "idmp-maxsize"), 100);
    for key in ["b", "c"] {
        assert_eq!(int(&ks, key, "idmp-duration"), 7);
        assert_eq!(int(&ks, key, "idmp-maxsize"), 3);
    }
}

#[test]
fn the_map_lives_in_the_value_and_follows_it() {
    let (ks, _) = keyspace();
    let first = ok(&ks, "XADD s IDMP p i * f v");
    // RENAME moves the value: the map goes with it.
    ks.run(|db, _| {
        let value = db.remove(b"s").unwrap();
        db.insert(b"t", value);
    });
    assert_eq!(ok(&ks, "XADD t IDMP p i * f v"), first);
    // DEL (and FLUSHDB) drop it: a new stream starts empty.
    ks.run(|db, _| db.remove(b"t"));
    assert_ne!(ok(&ks, "XADD t IDMP p i * f v"), Reply::Null);
    assert_eq!(int(&ks, "t", "iids-duplicates"), 0);
    ks.run(|db, _| db.clear());
    ok(&ks, "XADD t IDMP p i * f v");
    assert_eq!(int(&ks, "t", "iids-added"), 1);
}

#[test]
fn idle_streams_free_expired_iids_at_the_next_command_a_second_on() {
    let (ks, clock) = keyspace();
    ok(&ks, "XADD idle IDMP p i * f v");
    ok(&ks, "XADD idle IDMP q i * f v");
    ok(&ks, "XCFGSET idle IDMP-DURATION 1");
    ok(&ks, "XADD idle IDMP p i * f v");
    // Renamed: the value carries its state and the new key is tracked.
    ks.run(|db, _| {
        let value = db.remove(b"idle").unwrap();
        db.insert(b"moved", value);
    });
    let held =
        |ks: &Keyspace| ks.run(|db, _| db.stream(b"moved").unwrap().unwrap().idmp().iids_tracked());
    assert_eq!(held(&ks), 1);
    clock.advance(1_000);
    // Any command runs the sweep once a second of the clock: the idle stream's iid is freed,
    // not only hidden from XINFO.
    ok(&ks, "XLEN other");
    assert_eq!(held(&ks), 0);
    assert_eq!(int(&ks, "moved", "iids-added"), 3);
}

#[test]
fn swapped_databases_take_their_streams_idmp_tracking_with_them() {
    let clock = Arc::new(ManualClock::new(T0));
    let config = Arc::new(crate::config::Config::default());
    let ks = Keyspace::with_databases(clock.clone(), config, 2);
    ok(&ks, "XADD idle IDMP p i * f v");
    ok(&ks, "XCFGSET idle IDMP-DURATION 1");
    ok(&ks, "XADD idle IDMP p i * f v");
    ks.run_all(|dbs, _| {
        let (zero, one) = dbs.split_at_mut(1);
        zero[0].swap_contents(&mut one[0]);
    });
    ks.check_invariants().unwrap();
    let held = |ks: &Keyspace| {
        ks.run_db(1, |db, _| {
            db.stream(b"idle").unwrap().map(|s| s.idmp().iids_tracked())
        })
    };
    assert_eq!(held(&ks), Some(1));
    assert_eq!(ks.run(|db, _| db.len()), 0);
    clock.advance(1_000);
    // The sweep of database 1 now knows the stream: its expired iid is freed.
    ks.run_db(1, |_, _| ());
    assert_eq!(held(&ks), Some(0));
}

//! Keyspace notifications against Redis 8.8: a subscriber to `__key*@*__:*` on each server,
//! a writer running the same script, and every event message the subscriber receives must be
//! the same bytes in the same order (each writer reply is compared too). The script ends
//! with a PUBLISH on a marker channel, so the subscriber knows it has read everything.
//!
//! Expiry needs time to pass: a `wait` step sleeps on Redis and moves echomq's manual clock
//! (whose `advance_ms` runs the expiry sweep); either way the key's `expired` event comes
//! before the next command's, as no other key changes in between.
//!
//! A script's commands fire their events as they do outside one.
//!
//! Also here: `notify-keyspace-events` as CONFIG SET parses it and CONFIG GET shows it, and
//! INFO's `keyspace_hits` / `keyspace_misses` after the same reads.

use std::time::Duration;

use echomq::testing::TestServer;

use super::pubsub::{self, Conn, expect};
use crate::support::differ::show_raw;
use crate::support::peer::{Peer, PeerKind};
use crate::support::resp::Resp;
use crate::support::wire::{WireDiffer, words};

/// One writer step: a command, one whose reply depends on the clock (an auto id: not
/// compared), or time passing.
enum Step {
    Run(&'static str),
    Clocked(&'static str),
    WaitMs(u64),
}

use Step::{Clocked, Run, WaitMs};

/// What the subscriber of one server received, frame by frame, up to the marker.
fn events(sub: &mut Conn) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    loop {
        let (reply, raw) = sub.read();
        if let Resp::Array(parts) = &reply
            && parts.get(1) == Some(&Resp::Bulk(b"marker".to_vec()))
        {
            return frames;
        }
        frames.push(raw);
    }
}

fn subscribe(addr: std::net::SocketAddr) -> Conn {
    let mut sub = Conn::open(addr);
    sub.send(&["PSUBSCRIBE", "__key*@*__:*"]);
    sub.read();
    sub.send(&["SUBSCRIBE", "marker"]);
    sub.read();
    sub
}

/// Runs `script` with `classes` on both servers; panics on the first difference.
fn compare(name: &str, classes: &str, script: &[Step]) {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut theirs_w = Conn::open(peer.addr());
    let mut ours_w = Conn::open(ours.addr());
    for w in [&mut theirs_w, &mut ours_w] {
        w.send(&["FLUSHALL"]);
        w.read();
        w.send(&["CONFIG", "SET", "notify-keyspace-events", classes]);
        assert_eq!(w.read().0, Resp::Simple("OK".into()));
    }
    let mut theirs_s = subscribe(peer.addr());
    let mut ours_s = subscribe(ours.addr());
    let mut history = Vec::new();
    for step in script {
        match step {
            Run(line) | Clocked(line) => {
                history.push(line.to_string());
                let argv: Vec<&str> = line.split_whitespace().collect();
                theirs_w.send(&argv);
                ours_w.send(&argv);
                let (theirs, theirs_raw) = theirs_w.read();
                let (mine, ours_raw) = ours_w.read();
                assert!(
                    theirs_raw == ours_raw || matches!(step, Clocked(_)),
                    "{name}: the reply to {line} differs:\n  redis8: {theirs}\n  echomq: {mine}"
                );
            }
            WaitMs(ms) => {
                history.push(format!("(wait {ms} ms)"));
                std::thread::sleep(Duration::from_millis(*ms));
                ours.advance_ms(*ms);
            }
        }
    }
    for w in [&mut theirs_w, &mut ours_w] {
        w.send(&["PUBLISH", "marker", "end"]);
        w.read();
    }
    let theirs = events(&mut theirs_s);
    let mine = events(&mut ours_s);
    let show = |frames: &[Vec<u8>]| {
        frames
            .iter()
            .map(|f| show_raw(f))
            .collect::<Vec<_>>()
            .join("\n    ")
    };
    assert!(
        theirs == mine,
        "{name}: the events differ after:\n  {}\n  redis8 ({}):\n    {}\n  echomq ({}):\n    {}",
        history.join("\n  "),
        theirs.len(),
        show(&theirs),
        mine.len(),
        show(&mine),
    );
    // Without `K` or `E` nothing is published at all; else the script fires something.
    let channels = classes.contains('K') || classes.contains('E');
    assert_eq!(!theirs.is_empty(), channels, "{name}: events published");
}

/// Every stream command echomq has, with the events Redis 8.8 fires for it.
fn stream_script() -> Vec<Step> {
    vec![
        Run("XADD s 1-1 f v"),
        Run("XADD s 2-1 f v"),
        Run("XADD s MAXLEN 1 3-1 f v"),
        Run("XADD s MAXLEN 5 4-1 f v"),
        Run("XADD s NOMKSTREAM 5-1 f v"),
        Run("XADD nokey NOMKSTREAM 1-1 f v"),
        Run("XADD s 1-0 f v"),
        Run("XLEN s"),
        Run("XRANGE s - +"),
        Run("XTRIM s MAXLEN 10"),
        Run("XTRIM s MAXLEN 1"),
        Run("XDEL s 1-1"),
        Run("XADD s 6-1 f v"),
        Run("XDEL s 6-1"),
        Run("XSETID s 10-0"),
        Run("XSETID s 9-0"),
        Run("XGROUP CREATE s g 0"),
        Run("XGROUP CREATE s g 0"),
        Run("XGROUP CREATE m g $ MKSTREAM"),
        Run("XGROUP SETID s g 0"),
        Run("XGROUP CREATECONSUMER s g alice"),
        Run("XGROUP CREATECONSUMER s g alice"),
        Run("XADD s 11-1 f v"),
        Run("XADD s 12-1 f v"),
        Run("XREADGROUP GROUP g bob COUNT 1 STREAMS s >"),
        Run("XREADGROUP GROUP g bob COUNT 1 STREAMS s >"),
        Run("XREADGROUP GROUP g carol COUNT 1 STREAMS s m > >"),
        Run("XACK s g 11-1"),
        Run("XACK s g 11-1"),
        Run("XCLAIM s g dave 0 12-1"),
        Run("XCLAIM s g dave 0 12-1"),
        Run("XAUTOCLAIM s g erin 0 0"),
        Run("XPENDING s g"),
        Run("XINFO STREAM s"),
        Run("XGROUP DELCONSUMER s g erin"),
        Run("XGROUP DELCONSUMER s g nobody"),
        Run("XGROUP DESTROY s g"),
        Run("XGROUP DESTROY s g"),
        Run("XADD d 1-1 f v"),
        Run("XADD d 2-1 f v"),
        Run("XADD d 3-1 f v"),
        Run("XGROUP CREATE d g 0"),
        Run("XREADGROUP GROUP g c STREAMS d >"),
        Run("XDELEX d IDS 1 9-9"),
        Run("XDELEX d IDS 1 1-1"),
        Run("XACKDEL d g IDS 1 2-1"),
        Run("XACKDEL d g IDS 1 2-1"),
        Run("XNACK d g c SILENT IDS 1 3-1"),
        Run("XCFGSET d IDMP-DURATION 50"),
        Clocked("XADD d IDMP p i1 * f v"),
        Clocked("XADD d IDMP p i1 * f v"),
        Run("XIDMPRECORD d p i2 3-1"),
    ]
}

/// The generic and string commands echomq has, expiry included.
fn generic_script() -> Vec<Step> {
    vec![
        Run("SET k v"),
        Run("SET k w"),
        Run("SET k v NX"),
        Run("SET k v XX EX 100"),
        Run("SET k v KEEPTTL"),
        Run("SET k v EXAT 1"),
        Run("SET k v EXAT 1"),
        Run("INCR n"),
        Run("INCR n"),
        Run("DEL n nokey k"),
        Run("SET a 1"),
        Run("EXPIRE a 100"),
        Run("EXPIRE a 100 NX"),
        Run("PEXPIRE a 100000"),
        Run("EXPIREAT a 4102444800"),
        Run("PEXPIREAT a 4102444800000"),
        Run("PERSIST a"),
        Run("PERSIST a"),
        Run("EXPIRE a -1"),
        Run("EXPIRE nokey 10"),
        Run("SET a 1"),
        Run("XADD s 1-1 f v"),
        Run("RENAME a b"),
        Run("RENAME b s"),
        Run("RENAMENX s t"),
        Run("SET a 1"),
        Run("RENAMENX a t"),
        Run("COPY t u"),
        Run("COPY t u"),
        Run("SET v 1"),
        Run("COPY t v REPLACE"),
        Run("COPY t u REPLACE"),
        Run("COPY a w DB 1"),
        Run("MOVE a 2"),
        Run("MOVE u 2"),
        Run("SWAPDB 0 1"),
        Run("SWAPDB 0 1"),
        Run("UNLINK v"),
        Run("PEXPIRE t 10"),
        WaitMs(50),
        Run("EXISTS t"),
        Run("SET e 1 PX 10"),
        WaitMs(50),
        Run("GET e"),
        // A transaction's events come in execution order, across databases too.
        Run("MULTI"),
        Run("XADD q 1-1 f v"),
        Run("SET x 1"),
        Run("MOVE x 3"),
        Run("SELECT 3"),
        Run("RENAME x y"),
        Run("SELECT 0"),
        Run("DEL q"),
        Run("EXEC"),
        Run("FLUSHDB"),
        Run("SET f 1"),
        Run("FLUSHALL"),
    ]
}

fn zset_script() -> Vec<Step> {
    vec![
        Run("ZADD z 1 a 2 b 3 c"),
        Run("ZADD z NX 5 a"),
        Run("ZADD z XX CH 5 a"),
        Run("ZINCRBY z 1 b"),
        Run("ZREM z nope"),
        Run("ZREM z c"),
        Run("ZADD y 1 x 2 y"),
        Run("ZUNIONSTORE u 2 z y"),
        Run("ZINTERSTORE u 2 z y"),
        Run("ZDIFFSTORE d 1 z"),
        Run("ZRANGESTORE r z 0 0"),
        Run("ZREMRANGEBYRANK d 0 0"),
        Run("ZREMRANGEBYSCORE d -inf +inf"),
        Run("ZREMRANGEBYLEX r - +"),
        Run("ZPOPMIN z"),
        Run("ZPOPMAX z 5"),
        Run("ZMPOP 1 y MIN COUNT 1"),
        Run("BZPOPMAX y 0"),
        Run("GEOADD g 13.361389 38.115556 p 15.087269 37.502669 c"),
        Run("GEOSEARCHSTORE gs g FROMMEMBER p BYRADIUS 500 km ASC"),
        Run("GEORADIUS g 15 37 500 km STORE gr"),
        Run("GEOSEARCHSTORE gs g FROMMEMBER p BYRADIUS 1 m"),
        Run("ZADD z 1 a"),
        Run("SORT z"),
        Run("DEL z"),
    ]
}

#[test]
fn zset_command_events_match_redis8() {
    compare("zsets, all classes", "KEAnocm", &zset_script());
}

#[test]
fn stream_command_events_match_redis8() {
    compare("streams, KEA", "KEA", &stream_script());
}

#[test]
fn generic_command_events_match_redis8() {
    compare("generic, KEA", "KEA", &generic_script());
}

#[test]
fn new_overwritten_type_changed_and_keymiss_events_match_redis8() {
    compare("streams, all classes", "KEAnocm", &stream_script());
    compare("generic, all classes", "KEAnocm", &generic_script());
}

#[test]
fn class_subsets_select_events_like_redis8() {
    compare("keyspace only, stream", "Kt", &stream_script());
    compare(
        "keyevent only, generic and expired",
        "Egx",
        &generic_script(),
    );
    compare("strings only", "E$", &generic_script());
    compare("no channel class", "A", &generic_script());
}

#[test]
fn notify_keyspace_events_config_matches_redis8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            [
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events KEA",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events Ex$",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events AKEmnoc",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events gnocdlshzea",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events tSTIVm",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events KEQ",
                "CONFIG SET notify-keyspace-events KEr",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events \"\"",
                "CONFIG GET notify-keyspace-events",
            ]
            .iter()
            .try_for_each(|line| {
                let argv: Vec<&str> = line.split_whitespace().collect();
                let argv: Vec<&str> = argv
                    .iter()
                    .map(|a| if *a == "\"\"" { "" } else { a })
                    .collect();
                differ.run(&words(&argv)).map(drop)
            })
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// INFO stats' keyspace hits and misses after `lines` on a fresh server at `addr`.
fn hits_and_misses(addr: std::net::SocketAddr, lines: &[&str]) -> (u64, u64) {
    let mut conn = Conn::open(addr);
    for line in ["FLUSHALL", "CONFIG RESETSTAT"].iter().chain(lines) {
        let argv: Vec<&str> = line.split_whitespace().collect();
        conn.send(&argv);
        conn.read();
    }
    conn.send(&["INFO", "stats"]);
    let (Resp::Bulk(info), _) = conn.read() else {
        panic!("INFO is not a bulk string");
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("INFO stats has no {name}"))
    };
    (field("keyspace_hits"), field("keyspace_misses"))
}

#[test]
fn keyspace_hits_and_misses_count_like_redis8() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    // Each group: the commands Redis counts (reads) and those it does not (writes).
    let cases: &[(&str, &[&str])] = &[
        (
            "strings",
            &[
                "SET k v",
                "GET k",
                "GET nokey",
                "SET k w GET",
                "SET j w GET",
                "STRLEN k",
                "STRLEN nokey",
                "INCR n",
            ],
        ),
        (
            "generic",
            &[
                "SET k v",
                "EXISTS k nokey k",
                "TYPE k",
                "TYPE nokey",
                "TTL k",
                "PTTL nokey",
                "EXPIRETIME k",
                "PEXPIRETIME k",
                "OBJECT ENCODING k",
                "OBJECT ENCODING nokey",
                "MEMORY USAGE k",
                "COPY k k2",
                "COPY nokey k3",
                "DEL k",
                "RENAME k2 k4",
                "EXPIRE k4 100",
                "PERSIST k4",
                "KEYS *",
                "SCAN 0",
                "DBSIZE",
            ],
        ),
        (
            "stream reads",
            &[
                "XADD s 1-1 f v",
                "XLEN s",
                "XLEN nokey",
                "XRANGE s - +",
                "XREVRANGE nokey + -",
                "XRANGE s bad +",
                "XREAD STREAMS s nokey 0 0",
                "XREAD COUNT 1 STREAMS s 0",
                "XINFO STREAM s",
                "XINFO STREAM nokey",
                "XINFO HELP",
            ],
        ),
        (
            "group reads",
            &[
                "XADD s 1-1 f v",
                "XGROUP CREATE s g 0",
                "XREADGROUP GROUP g c STREAMS s >",
                "XREADGROUP GROUP g c STREAMS nokey >",
                "XPENDING s g",
                "XPENDING nokey g",
                "XACK s g 1-1",
                "XACK nokey g 1-1",
                "XCLAIM s g c 0 1-1",
                "XAUTOCLAIM s g c 0 0",
                "XACKDEL s g IDS 1 1-1",
                "XINFO GROUPS s",
                "XINFO CONSUMERS s g",
            ],
        ),
        (
            "stream writes",
            &[
                "XADD s 1-1 f v",
                "XDEL s 1-1",
                "XTRIM s MAXLEN 0",
                "XSETID s 5-0",
                "XGROUP CREATE s g 0",
                "XGROUP SETID s g 0",
                "XDELEX s IDS 1 1-1",
                "XCFGSET s IDMP-MAXSIZE 5",
            ],
        ),
    ];
    for (name, lines) in cases {
        let theirs = hits_and_misses(peer.addr(), lines);
        let mine = hits_and_misses(ours.addr(), lines);
        assert_eq!(
            mine, theirs,
            "{name}: echomq's (hits, misses), then redis 8.8's"
        );
        // Writes look up for writing, which Redis does not count; every read group counts.
        assert_eq!(
            *name == "stream writes",
            theirs == (0, 0),
            "{name}: {theirs:?}"
        );
    }
}

#[test]
fn a_subscriber_sees_its_own_events_before_its_reply_like_redis8() {
    // In RESP3 a subscribed client runs commands; the events its own write fires are pushed
    // before that write's reply, and a second client's subscription sees them too.
    let script = vec![
        pubsub::step(0, "CONFIG SET notify-keyspace-events KEA", 1),
        pubsub::step(0, "SUBSCRIBE __keyspace@0__:s", 1),
        pubsub::step(1, "PSUBSCRIBE __keyevent@0__:x*", 1),
        pubsub::step(0, "XADD s MAXLEN 0 1-1 f v", 3),
        expect(1, 2),
        pubsub::step(0, "XGROUP CREATE s g $", 2),
        pubsub::step(0, "SET s v", 2),
        pubsub::step(0, "UNSUBSCRIBE", 1),
    ];
    pubsub::run("own events", 3, 2, &script);
}

/// A script's commands fire their events as they run (written without spaces: the steps are
/// split on them).
#[test]
fn script_command_events_match_redis8() {
    compare(
        "scripts, all classes",
        "KEAnocm",
        &[
            Run(
                "EVAL redis.call('set','a','1');redis.call('incr','a');redis.call('get','nokey');return(redis.call('del','a')) 0",
            ),
            Run("EVAL redis.call('rpush','l','x','y');return(redis.call('lpop','l')) 0"),
            Run("EVAL return(redis.pcall('incr','l')) 0"),
        ],
    );
}

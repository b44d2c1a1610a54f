//! COPY, MOVE and SWAPDB against Redis 8.8: every value kind echomq has (streams, strings),
//! the IDMP maps carried as Redis 8.8 carries them (`streamDup` for COPY, the value itself for
//! MOVE and SWAPDB), each error in Redis's checking order, WATCH, and readers blocked in a
//! database that SWAPDB changes under them.
//!
//! The scripted cases run through `super`'s runner (both protocols). Blocked readers need a
//! second connection, so [`blocked_readers_wake_on_swapdb_as_redis_8_8`] drives each server
//! itself: a reader blocks in database 0, a writer swaps, and the reader's reply (raw bytes)
//! must be the same on both.

use std::net::SocketAddr;

use echomq::testing::TestServer;

use crate::server::{Wire, show, wait_blocked_clients};
use crate::support::peer::{Peer, PeerKind};

use super::cases::Case;

/// The cases.
pub fn cases() -> Vec<Case> {
    vec![
        Case::new("COPY duplicates a stream with its groups and its IDMP state")
            .seed("s")
            .cmd("XCFGSET s IDMP-DURATION 50 IDMP-MAXSIZE 5")
            .cmd("XADD s IDMP p1 i1 * f v")
            .cmd("XADD s IDMP p1 i1 * f v")
            .cmd("XADD s IDMPAUTO p2 * f w")
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s >")
            .cmd("COPY s t")
            .cmd("XINFO STREAM t")
            // (Not XINFO STREAM FULL: its 8.8 group fields are compared by the group tests.)
            .cmd("XPENDING t g")
            .cmd("XREADGROUP GROUP g c STREAMS t 0")
            .cmd("XREADGROUP GROUP g c2 STREAMS t >")
            .cmd("XADD t IDMP p1 i1 * f v")
            .cmd("XADD t IDMPAUTO p2 * f w")
            .cmd("XADD t IDMP p1 i2 * f v")
            .cmd("XIDMPRECORD t p3 i3 9999999999999-1")
            .cmd("XINFO STREAM s")
            .cmd("XINFO STREAM t")
            .cmd("XADD s IDMP p1 i2 * f other")
            .cmd("XRANGE s - +")
            .cmd("XRANGE t - +"),
        Case::new("COPY: replies and errors, in Redis's order")
            .seed("s")
            .cmd("SET str x")
            .cmd("COPY")
            .cmd("COPY s")
            .cmd("COPY s s")
            .cmd("COPY s s DB 0")
            .cmd("COPY nokey t")
            .cmd("COPY nokey nokey")
            .cmd("COPY s t DB")
            .cmd("COPY s t DB x")
            .cmd("COPY s t DB 16")
            .cmd("COPY s t DB -1")
            .cmd("COPY s t DB 99999999999")
            .cmd("COPY s t DB 99 FOO")
            .cmd("COPY s t FOO DB 99")
            .cmd("COPY s t REPLACE DB")
            .cmd("EXISTS t")
            .cmd("COPY s str")
            .cmd("GET str")
            .cmd("COPY s str REPLACE REPLACE")
            .cmd("TYPE str")
            .cmd("COPY s str replace")
            .cmd("COPY s s DB 1")
            .cmd("COPY s s db 1")
            .cmd("COPY s s db 1 replace")
            .cmd("SELECT 1")
            .cmd("XINFO STREAM s")
            .cmd("DBSIZE"),
        Case::new("COPY of a string, across databases, over a stream")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("SET str hello")
            .cmd("COPY str str2")
            .cmd("GET str2")
            .cmd("COPY str s")
            .cmd("COPY str s REPLACE")
            .cmd("TYPE s")
            .cmd("GET s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("COPY str2 other DB 3")
            .cmd("SELECT 3")
            .cmd("GET other")
            .cmd("DBSIZE"),
        Case::new("COPY to another database carries the IDMP maps; REPLACE drops the old ones")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("SELECT 2")
            .seed("s")
            .cmd("XADD s IDMP q j * f v")
            .cmd("SELECT 0")
            .cmd("COPY s s DB 2")
            .cmd("COPY s s DB 2 REPLACE")
            .cmd("SELECT 2")
            .cmd("XINFO STREAM s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XADD s IDMP q j * f v")
            .cmd("XINFO STREAM s"),
        Case::new("MOVE carries the stream and its IDMP maps; replies and errors")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XCFGSET s IDMP-MAXSIZE 7")
            .cmd("XADD s IDMP p i * f v")
            .cmd("MOVE")
            .cmd("MOVE s")
            .cmd("MOVE s 0")
            .cmd("MOVE s x")
            .cmd("MOVE s 16")
            .cmd("MOVE s -1")
            .cmd("MOVE s 99999999999")
            .cmd("MOVE nokey 1")
            .cmd("MOVE nokey 0")
            .cmd("MOVE s 1")
            .cmd("EXISTS s")
            .cmd("MOVE s 1")
            .cmd("SELECT 1")
            .cmd("XINFO STREAM s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("SET str x")
            .cmd("SELECT 0")
            .cmd("SET str y")
            .cmd("MOVE str 1")
            .cmd("GET str")
            .cmd("DEL str")
            .cmd("SELECT 1")
            .cmd("MOVE str 0")
            .cmd("MOVE s 0")
            .cmd("DBSIZE")
            .cmd("SELECT 0")
            .cmd("GET str")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XINFO STREAM s"),
        Case::new("SWAPDB exchanges data with its IDMP maps; replies and errors")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("SET str zero")
            .cmd("SELECT 1")
            .seed("t")
            .cmd("XADD t IDMPAUTO q * f v")
            .cmd("SWAPDB")
            .cmd("SWAPDB 0")
            .cmd("SWAPDB x 0")
            .cmd("SWAPDB 0 x")
            .cmd("SWAPDB x y")
            .cmd("SWAPDB 16 x")
            .cmd("SWAPDB 0 16")
            .cmd("SWAPDB -1 0")
            .cmd("SWAPDB 99999999999 0")
            .cmd("SWAPDB 1 1")
            .cmd("DBSIZE")
            .cmd("SWAPDB 0 1")
            .cmd("EXISTS t")
            .cmd("GET str")
            .cmd("XINFO STREAM s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("SELECT 0")
            .cmd("XADD t IDMPAUTO q * f v")
            .cmd("XINFO STREAM t")
            .cmd("SWAPDB 0 5")
            .cmd("DBSIZE")
            .cmd("SWAPDB 5 1")
            .cmd("SELECT 5")
            .cmd("XINFO STREAM s")
            .cmd("DBSIZE"),
        Case::new("WATCH: COPY and MOVE touch what they write, SWAPDB what either side holds")
            .seed("s")
            .cmd("WATCH s")
            .cmd("COPY s t")
            .multi(&["XLEN s"])
            .cmd("WATCH t")
            .cmd("COPY s t")
            .multi(&["XLEN t"])
            .cmd("WATCH t")
            .cmd("COPY s t REPLACE")
            .multi(&["XLEN t"])
            .cmd("WATCH s")
            .cmd("MOVE s 1")
            .multi(&["EXISTS s"])
            .cmd("WATCH s")
            .cmd("SELECT 1")
            .cmd("MOVE s 0")
            .cmd("SELECT 0")
            .multi(&["EXISTS s"])
            .cmd("WATCH nowhere")
            .cmd("SWAPDB 0 1")
            .multi(&["EXISTS nowhere"])
            .cmd("WATCH s")
            .cmd("SWAPDB 0 0")
            .multi(&["EXISTS s"])
            .cmd("WATCH s")
            .cmd("SWAPDB 0 1")
            .multi(&["EXISTS s"])
            .cmd("WATCH s")
            .cmd("SWAPDB 0 1")
            .multi(&["EXISTS s"]),
        Case::new("COPY, MOVE and SWAPDB inside MULTI/EXEC")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .multi(&[
                "COPY s t",
                "COPY s t",
                "COPY s s",
                "MOVE t 1",
                "MOVE t 0",
                "SWAPDB 0 1",
                "EXISTS s t",
                "SWAPDB 0 x",
                "XADD t IDMP p i * f v",
            ])
            .cmd("XINFO STREAM t"),
    ]
}

/// A reader blocked in database 0 and what the swap puts there.
struct BlockedCase {
    name: &'static str,
    /// Run first, on the writer's connection (database 0, then SELECTs as written).
    setup: &'static [&'static str],
    /// The reader's blocking command (database 0).
    block: &'static str,
}

const BLOCKED_CASES: &[BlockedCase] = &[
    BlockedCase {
        name: "XREADGROUP whose stream SWAPDB takes away fails",
        setup: &["XADD s 1-0 f v", "XGROUP CREATE s g $"],
        block: "XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
    },
    BlockedCase {
        name: "XREADGROUP whose stream SWAPDB turns into a string fails",
        setup: &[
            "XADD s 1-0 f v",
            "XGROUP CREATE s g $",
            "SELECT 1",
            "SET s x",
        ],
        block: "XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
    },
    BlockedCase {
        name: "XREADGROUP whose stream SWAPDB replaces by one without its group fails",
        setup: &[
            "XADD s 1-0 f v",
            "XGROUP CREATE s g $",
            "SELECT 1",
            "XADD s 2-0 f w",
        ],
        block: "XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
    },
    BlockedCase {
        name: "XREADGROUP is served from the swapped-in stream's group",
        setup: &[
            "XADD s 1-0 f v",
            "XGROUP CREATE s g $",
            "SELECT 1",
            "XADD s 1-0 f v",
            "XGROUP CREATE s g 0",
            "XADD s 2-0 f w",
        ],
        block: "XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
    },
    BlockedCase {
        name: "XREAD on a missing key is served by the swapped-in stream",
        setup: &["SELECT 1", "XADD s 3-0 f v"],
        block: "XREAD BLOCK 0 STREAMS s 0-0",
    },
    BlockedCase {
        name: "XREAD $ is served by newer entries of the swapped-in stream",
        setup: &[
            "XADD s 5-0 f v",
            "SELECT 1",
            "XADD s 4-0 a b",
            "XADD s 6-0 c d",
        ],
        block: "XREAD BLOCK 0 STREAMS s $",
    },
];

fn argv(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs one blocked case on the server at `addr` in `protocol`; returns what the reader got
/// after the swap, then the writer's view of database 0 afterwards (no time fields).
fn run_blocked(case: &BlockedCase, addr: SocketAddr, protocol: u8) -> Vec<u8> {
    let mut writer = Wire::connect_to(addr);
    let mut reader = Wire::connect_to(addr);
    let mut observer = Wire::connect_to(addr);
    if protocol == 3 {
        for wire in [&mut writer, &mut reader] {
            let hello = wire.command(&["HELLO", "3"]);
            assert!(hello.starts_with(b"%"), "HELLO 3 gave {}", show(&hello));
        }
    }
    writer.command(&["FLUSHALL"]);
    for line in case.setup {
        let reply = writer.command(&argv(line));
        assert!(
            !reply.starts_with(b"-"),
            "{}: setup `{line}` failed: {}",
            case.name,
            show(&reply)
        );
    }
    writer.command(&["SELECT", "0"]);
    reader.send_command(&argv(case.block));
    wait_blocked_clients(&mut observer, 1);
    let swapped = writer.command(&["SWAPDB", "0", "1"]);
    assert_eq!(swapped, b"+OK\r\n", "{}: SWAPDB", case.name);
    let mut seen = reader.read_reply();
    for line in ["XRANGE s - +", "XPENDING s g", "XINFO STREAM s"] {
        seen.extend(writer.command(&argv(line)));
    }
    seen
}

#[test]
fn blocked_readers_wake_on_swapdb_as_redis_8_8() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut failures = Vec::new();
    for case in BLOCKED_CASES {
        for protocol in [2, 3] {
            let theirs = run_blocked(case, peer.addr(), protocol);
            let mine = run_blocked(case, ours.addr(), protocol);
            if theirs != mine {
                failures.push(format!(
                    "{} (RESP{protocol}):\n  {}: {}\n  echomq: {}",
                    case.name,
                    peer.info(),
                    show(&theirs),
                    show(&mine)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

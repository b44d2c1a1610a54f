//! `EMQ.CLOCK` over RESP: `echomq serve --clock manual` moved by a client (ids, TTLs and BLOCK
//! timeouts follow it), refused on the system clock, and the test double's clocks.

use echomq::testing::TestServer;
use echomq_engine::Clock;

use super::{Wire, show};
use crate::support::process::{echomq, serve};

/// The integer of a `:n\r\n` reply.
fn int(reply: &[u8]) -> u64 {
    std::str::from_utf8(reply)
        .ok()
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| r.trim_end().parse().ok())
        .unwrap_or_else(|| panic!("not a non-negative integer: {}", show(reply)))
}

/// The id an `XADD ... *` replied (a bulk string).
fn added_id(reply: &[u8]) -> String {
    let text = String::from_utf8_lossy(reply);
    text.lines()
        .nth(1)
        .unwrap_or_else(|| panic!("not a bulk id: {}", show(reply)))
        .to_string()
}

fn is_error_containing(reply: &[u8], text: &str) -> bool {
    reply.starts_with(b"-") && String::from_utf8_lossy(reply).contains(text)
}

#[test]
fn a_manual_clock_server_moves_ids_ttls_and_block_timeouts_with_emq_clock() {
    let (_server, addr) = serve(echomq(), &["--clock", "manual"]);
    let mut wire = Wire::connect_to(addr);
    let start = int(&wire.command(&["EMQ.CLOCK"]));
    assert_eq!(int(&wire.command(&["EMQ.CLOCK", "GET"])), start);

    // `*` ids take the clock's millisecond, and it stands still until moved.
    assert_eq!(
        added_id(&wire.command(&["XADD", "s", "*", "f", "v"])),
        format!("{start}-0")
    );
    assert_eq!(
        added_id(&wire.command(&["XADD", "s", "*", "f", "v"])),
        format!("{start}-1")
    );
    assert_eq!(
        int(&wire.command(&["EMQ.CLOCK", "ADVANCE", "5"])),
        start + 5
    );
    assert_eq!(
        added_id(&wire.command(&["XADD", "s", "*", "f", "v"])),
        format!("{}-0", start + 5)
    );

    // A PX key lives until the clock reaches its time, and is gone right after the move.
    wire.expect(b"SET k v PX 100\r\n", b"+OK\r\n");
    wire.command(&["EMQ.CLOCK", "ADVANCE", "99"]);
    wire.expect(b"PTTL k\r\n", b":1\r\n");
    wire.command(&["EMQ.CLOCK", "ADVANCE", "1"]);
    wire.expect(b"DBSIZE\r\n", b":1\r\n");
    wire.expect(b"EXISTS k\r\n", b":0\r\n");

    // A BLOCK with no data waits until the clock passes its timeout, then answers null.
    let mut reader = Wire::connect_to(addr);
    reader.send_command(&["XREAD", "BLOCK", "1000", "STREAMS", "empty", "$"]);
    super::wait_until("the reader blocks", || {
        super::info_field(&mut wire, "clients", "blocked_clients") == "1"
    });
    wire.command(&["EMQ.CLOCK", "ADVANCE", "999"]);
    reader.expect_silence();
    let now = int(&wire.command(&["EMQ.CLOCK"]));
    assert_eq!(
        int(&wire.command(&["EMQ.CLOCK", "SET", &(now + 1).to_string()])),
        now + 1
    );
    reader.expect_replies(b"XREAD BLOCK 1000 (timed out)", b"*-1\r\n");

    // Time never goes back over RESP; the same time is allowed.
    let now = int(&wire.command(&["EMQ.CLOCK"]));
    let back = wire.command(&["EMQ.CLOCK", "SET", &(now - 1).to_string()]);
    assert!(is_error_containing(&back, "backwards"), "{}", show(&back));
    assert_eq!(int(&wire.command(&["EMQ.CLOCK"])), now);
    assert_eq!(
        int(&wire.command(&["EMQ.CLOCK", "SET", &now.to_string()])),
        now
    );
    let negative = wire.command(&["EMQ.CLOCK", "ADVANCE", "-1"]);
    assert!(
        is_error_containing(&negative, "non-negative"),
        "{}",
        show(&negative)
    );
    let word = wire.command(&["EMQ.CLOCK", "ADVANCE", "soon"]);
    assert_eq!(word, b"-ERR value is not an integer or out of range\r\n");
    let unknown = wire.command(&["EMQ.CLOCK", "REWIND", "1"]);
    assert!(
        is_error_containing(&unknown, "Try EMQ.CLOCK HELP."),
        "{}",
        show(&unknown)
    );

    // Pipelined after a write (the batch already holds the keyspace lock), then read.
    wire.send(b"SET p v PX 10\r\nEMQ.CLOCK ADVANCE 10\r\nEXISTS p\r\n");
    wire.expect_replies(
        b"SET p v PX 10 / EMQ.CLOCK ADVANCE 10 / EXISTS p",
        format!("+OK\r\n:{}\r\n:0\r\n", now + 10).as_bytes(),
    );

    // Not from a transaction or a script: a move there could not run the expiry it causes.
    wire.expect(b"MULTI\r\n", b"+OK\r\n");
    let queued = wire.command(&["EMQ.CLOCK", "ADVANCE", "1"]);
    assert!(queued.starts_with(b"-"), "{}", show(&queued));
    wire.expect(b"DISCARD\r\n", b"+OK\r\n");
    let scripted = wire.command(&["EVAL", "return redis.call('emq.clock', 'advance', 1)", "0"]);
    assert!(
        is_error_containing(&scripted, "not allowed from script"),
        "{}",
        show(&scripted)
    );
    assert_eq!(int(&wire.command(&["EMQ.CLOCK"])), now + 10);
}

#[test]
fn emq_clock_is_refused_on_the_system_clock() {
    let (_server, addr) = serve(echomq(), &[]);
    let mut wire = Wire::connect_to(addr);
    for argv in [
        &["EMQ.CLOCK"][..],
        &["EMQ.CLOCK", "ADVANCE", "1000"],
        &["EMQ.CLOCK", "SET", "1"],
    ] {
        let reply = wire.command(argv);
        assert!(
            is_error_containing(&reply, "needs a manual clock")
                && is_error_containing(&reply, "--clock manual"),
            "{argv:?}: {}",
            show(&reply)
        );
    }
    let help = wire.command(&["EMQ.CLOCK", "HELP"]);
    assert!(help.starts_with(b"*"), "{}", show(&help));
    let docs = wire.command(&["COMMAND", "DOCS", "EMQ.CLOCK"]);
    assert!(
        String::from_utf8_lossy(&docs).contains("manual clock"),
        "{}",
        show(&docs)
    );
}

#[test]
fn the_test_double_offers_both_clocks_and_emq_clock_moves_the_manual_one() {
    let manual = TestServer::start().unwrap();
    let mut wire = Wire::connect(&manual);
    let before = manual.clock().now_ms();
    assert_eq!(
        int(&wire.command(&["EMQ.CLOCK", "ADVANCE", "250"])),
        before + 250
    );
    assert_eq!(manual.clock().now_ms(), before + 250);
    manual.advance_ms(50);
    assert_eq!(int(&wire.command(&["EMQ.CLOCK"])), before + 300);

    let system = TestServer::with_system_clock().unwrap();
    let mut wire = Wire::connect(&system);
    let reply = wire.command(&["EMQ.CLOCK"]);
    assert!(
        is_error_containing(&reply, "needs a manual clock"),
        "{}",
        show(&reply)
    );
    let wall = echomq_engine::SystemClock.now_ms();
    let first = added_id(&wire.command(&["XADD", "s", "*", "f", "v"]));
    let ms: u64 = first.split('-').next().unwrap().parse().unwrap();
    assert!(ms >= wall, "{first} before the wall clock's {wall}");
}

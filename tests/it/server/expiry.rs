//! Key expiry over the wire, driven by the manual clock (no sleeps): TTLs on strings and
//! streams run out when the test moves the clock, an expired stream wakes its blocked
//! XREADGROUP readers as DEL does, a transaction sees one instant, WATCH sees an expiry as a
//! change, the server's own active expiry cycle deletes keys nobody touches, and expiry fires
//! the `expired` keyspace event.

use echomq::testing::TestServer;

use super::{Wire, info_field, wait_blocked_clients, wait_until};

#[test]
fn a_key_expires_when_the_clock_passes_its_ttl_and_is_counted() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(b"SET k v PX 100\r\n", b"+OK\r\n");
    c.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    c.expect(b"EXPIRE s 1\r\n", b":1\r\n");
    c.expect(b"PTTL k\r\n", b":100\r\n");
    c.expect(b"TTL s\r\n", b":1\r\n");
    server.advance_ms(99);
    c.expect(b"GET k\r\n", b"$1\r\nv\r\n");
    c.expect(b"PTTL k\r\n", b":1\r\n");
    server.advance_ms(1);
    c.expect(b"GET k\r\n", b"$-1\r\n");
    c.expect(b"TTL k\r\n", b":-2\r\n");
    c.expect(b"DBSIZE\r\n", b":1\r\n");
    server.advance_ms(900);
    c.expect(b"EXISTS s k\r\n", b":0\r\n");
    c.expect(b"XLEN s\r\n", b":0\r\n");
    c.expect(b"DBSIZE\r\n", b":0\r\n");
    assert_eq!(info_field(&mut c, "stats", "expired_keys"), "2");
    assert_eq!(info_field(&mut c, "stats", "expired_keys_active"), "2");
}

#[test]
fn persist_and_a_rewrite_clear_the_ttl_and_keepttl_keeps_it() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(b"SET k v EX 10\r\n", b"+OK\r\n");
    c.expect(b"SET k w KEEPTTL\r\n", b"+OK\r\n");
    c.expect(b"TTL k\r\n", b":10\r\n");
    c.expect(b"PERSIST k\r\n", b":1\r\n");
    c.expect(b"PERSIST k\r\n", b":0\r\n");
    c.expect(b"TTL k\r\n", b":-1\r\n");
    c.expect(b"EXPIRE k 10\r\n", b":1\r\n");
    c.expect(b"SET k x\r\n", b"+OK\r\n");
    c.expect(b"TTL k\r\n", b":-1\r\n");
    server.advance_ms(60_000);
    c.expect(b"GET k\r\n", b"$1\r\nx\r\n");
}

#[test]
fn an_expired_stream_wakes_blocked_xreadgroup_readers_as_del_does() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut group_reader = Wire::connect(&server);
    let mut plain_reader = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    observer.expect(b"PEXPIRE s 500\r\n", b":1\r\n");
    group_reader.send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS s >\r\n");
    plain_reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 2);
    server.advance_ms(499);
    group_reader.expect_silence();
    server.advance_ms(1);
    group_reader.expect_replies(
        b"XREADGROUP BLOCK 0, then the stream expired",
        b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n",
    );
    // A plain XREAD waits for data, as after DEL, and the recreated stream serves it.
    plain_reader.expect_silence();
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"XADD s 5-1 f v\r\n", b"$3\r\n5-1\r\n");
    let served = plain_reader.read_reply();
    assert!(String::from_utf8_lossy(&served).contains("5-1"));
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn a_transaction_sees_one_instant_and_watch_sees_an_expiry_as_a_change() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(b"SET k v PX 100\r\n", b"+OK\r\n");
    c.expect(b"MULTI\r\n", b"+OK\r\n");
    c.expect(b"GET k\r\n", b"+QUEUED\r\n");
    c.expect(b"PTTL k\r\n", b"+QUEUED\r\n");
    // The clock moves while the commands are queued: EXEC runs at the new time.
    server.clock().advance(40);
    c.expect(b"EXEC\r\n", b"*2\r\n$1\r\nv\r\n:60\r\n");
    c.expect(b"MULTI\r\n", b"+OK\r\n");
    c.expect(b"PEXPIRE k 10\r\n", b"+QUEUED\r\n");
    c.expect(b"GET k\r\n", b"+QUEUED\r\n");
    c.expect(b"PTTL k\r\n", b"+QUEUED\r\n");
    c.expect(b"EXEC\r\n", b"*3\r\n:1\r\n$1\r\nv\r\n:10\r\n");
    // Expired by the clock alone (no sweep): the key reads as missing inside EXEC.
    server.clock().advance(10);
    c.expect(b"MULTI\r\n", b"+OK\r\n");
    c.expect(b"GET k\r\n", b"+QUEUED\r\n");
    c.expect(b"EXISTS k\r\n", b"+QUEUED\r\n");
    c.expect(b"EXEC\r\n", b"*2\r\n$-1\r\n:0\r\n");
    // WATCH: a watched key that expires before EXEC aborts the transaction.
    c.expect(b"SET w v PX 100\r\n", b"+OK\r\n");
    c.expect(b"WATCH w\r\n", b"+OK\r\n");
    server.advance_ms(100);
    c.expect(b"MULTI\r\n", b"+OK\r\n");
    c.expect(b"SET w fresh\r\n", b"+QUEUED\r\n");
    c.expect(b"EXEC\r\n", b"*-1\r\n");
    c.expect(b"GET w\r\n", b"$-1\r\n");
}

#[test]
fn the_active_expiry_cycle_deletes_keys_nobody_touches() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(b"CONFIG SET hz 100\r\n", b"+OK\r\n");
    c.expect(b"CONFIG GET hz\r\n", b"*2\r\n$2\r\nhz\r\n$3\r\n100\r\n");
    for i in 0..30 {
        c.expect(format!("SET k{i} v PX 10\r\n").as_bytes(), b"+OK\r\n");
    }
    // Moved without the sweep advance_ms runs: only the server's cron can delete them.
    server.clock().advance(10);
    wait_until("the active cycle expired every key", || {
        info_field(&mut c, "stats", "expired_keys_active") == "30"
    });
    assert_eq!(info_field(&mut c, "stats", "expired_keys"), "30");
    assert_eq!(info_field(&mut c, "server", "hz"), "100");
}

#[test]
fn expire_with_a_time_in_the_past_deletes_the_key_at_once() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    let mut reader = Wire::connect(&server);
    reader.send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut c, 1);
    c.expect(b"EXPIRE s -1\r\n", b":1\r\n");
    reader.expect_replies(
        b"XREADGROUP BLOCK 0, then EXPIRE s -1",
        b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n",
    );
    c.expect(b"SET k v\r\n", b"+OK\r\n");
    c.expect(b"PEXPIREAT k 1\r\n", b":1\r\n");
    c.expect(b"EXISTS k s\r\n", b":0\r\n");
    c.expect(b"SET k v EXAT 1\r\n", b"+OK\r\n");
    c.expect(b"EXISTS k\r\n", b":0\r\n");
}

/// `message` frame for a `__keyevent@0__:<event>` subscription.
fn keyevent(event: &str, key: &str) -> Vec<u8> {
    let channel = format!("__keyevent@0__:{event}");
    format!(
        "*3\r\n$7\r\nmessage\r\n${}\r\n{channel}\r\n${}\r\n{key}\r\n",
        channel.len(),
        key.len()
    )
    .into_bytes()
}

#[test]
fn expiry_and_blocked_readers_fire_keyspace_events_in_order() {
    let server = TestServer::start().unwrap();
    server
        .handle()
        .config_set("notify-keyspace-events", "Ext")
        .unwrap();
    let mut listener = Wire::connect(&server);
    listener.send(
        b"SUBSCRIBE __keyevent@0__:expired __keyevent@0__:xadd __keyevent@0__:xgroup-createconsumer\r\n",
    );
    for _ in 0..3 {
        listener.read_reply();
    }
    let mut writer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    writer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    assert_eq!(listener.read_reply(), keyevent("xadd", "s"));
    writer.expect(b"XGROUP CREATE s g $\r\n", b"+OK\r\n");
    // A blocking read that creates its consumer fires the event when it blocks, not again
    // when it is served.
    reader.send(b"XREADGROUP GROUP g bob BLOCK 0 STREAMS s >\r\n");
    assert_eq!(
        listener.read_reply(),
        keyevent("xgroup-createconsumer", "s")
    );
    wait_blocked_clients(&mut writer, 1);
    writer.expect(b"XADD s 2-1 f v\r\n", b"$3\r\n2-1\r\n");
    assert_eq!(listener.read_reply(), keyevent("xadd", "s"));
    reader.read_reply();
    // Active expiry (the clock moving) fires `expired`, once.
    writer.expect(b"PEXPIRE s 100\r\n", b":1\r\n");
    server.advance_ms(100);
    assert_eq!(listener.read_reply(), keyevent("expired", "s"));
    writer.expect(b"EXISTS s\r\n", b":0\r\n");
    // Lazy expiry (the clock moved, no sweep): the read finds the key due and fires it (or
    // the server's own cycle got there first); either way once.
    writer.expect(b"SET k v PX 10\r\n", b"+OK\r\n");
    server.clock().advance(10);
    writer.expect(b"GET k\r\n", b"$-1\r\n");
    assert_eq!(listener.read_reply(), keyevent("expired", "k"));
    listener.expect_silence();
}

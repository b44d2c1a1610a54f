//! XREAD / XREADGROUP BLOCK over the wire (`docs/reference/streams.md` §5): woken by writes on
//! other connections, timed out by the manual clock, unregistered when the client goes away.
//!
//! Before another connection writes, each test waits until the server counts the reader as
//! blocked (`INFO clients`), so the write cannot overtake the read.

use echomq::testing::{TestServer, TestServerOptions};

use super::{Wire, info_field, wait_blocked_clients};

/// One entry `id` with field `f` = `v`, as XREAD lists it under a key (RESP2 pair form).
fn pair(key: &str, id: &str) -> String {
    format!(
        "*1\r\n*2\r\n${}\r\n{key}\r\n*1\r\n*2\r\n${}\r\n{id}\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
        key.len(),
        id.len()
    )
}

/// The same in RESP3 map form.
fn map(key: &str, id: &str) -> String {
    format!(
        "%1\r\n${}\r\n{key}\r\n*1\r\n*2\r\n${}\r\n{id}\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
        key.len(),
        id.len()
    )
}

#[test]
fn xread_block_0_is_woken_by_an_xadd_from_another_connection() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    let mut reader3 = Wire::connect_resp3(&server);
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    reader3.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 2);
    reader.expect_silence();
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    reader.expect_replies(b"XREAD BLOCK 0 STREAMS s $", pair("s", "1-1").as_bytes());
    reader3.expect_replies(b"XREAD BLOCK 0 STREAMS s $", map("s", "1-1").as_bytes());
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn a_woken_multi_key_xread_returns_every_stream_with_new_entries() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    observer.expect(b"XADD b 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    reader.send(b"XREAD BLOCK 0 STREAMS a b $ $\r\n");
    wait_blocked_clients(&mut observer, 1);
    // One transaction writes both keys: the re-executed read sees both (Redis 7.2+).
    observer.expect(
        b"MULTI\r\nXADD b 2-1 f v\r\nXADD a 3-1 f v\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$3\r\n2-1\r\n$3\r\n3-1\r\n",
    );
    let a = pair("a", "3-1");
    let b = pair("b", "2-1");
    let expected = format!("*2\r\n{}{}", &a[4..], &b[4..]);
    reader.expect_replies(b"XREAD BLOCK 0 STREAMS a b $ $", expected.as_bytes());
}

#[test]
fn commands_pipelined_behind_a_blocked_read_wait_their_turn() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\nPING\r\nXLEN s\r\n");
    wait_blocked_clients(&mut observer, 1);
    reader.expect_silence();
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    let expected = format!("{}+PONG\r\n:1\r\n", pair("s", "1-1"));
    reader.expect_replies(b"XREAD BLOCK 0 ...; PING; XLEN s", expected.as_bytes());
}

#[test]
fn xreadgroup_block_is_woken_by_an_xadd() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    reader.send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 1);
    reader.expect_silence();
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    reader.expect_replies(b"XREADGROUP ... BLOCK 0", pair("s", "1-1").as_bytes());
    observer.expect(
        b"XPENDING s g\r\n",
        b"*4\r\n:1\r\n$3\r\n1-1\r\n$3\r\n1-1\r\n*1\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n",
    );
}

#[test]
fn block_with_a_timeout_expires_when_the_manual_clock_passes_the_deadline() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    let mut reader3 = Wire::connect_resp3(&server);
    let mut group_reader = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    reader.send(b"XREAD BLOCK 1000 STREAMS s $\r\n");
    reader3.send(b"XREAD BLOCK 1000 STREAMS s $\r\n");
    group_reader.send(b"XREADGROUP GROUP g c BLOCK 1000 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 3);
    server.advance_ms(999);
    reader.expect_silence();
    reader3.expect_silence();
    group_reader.expect_silence();
    assert_eq!(info_field(&mut observer, "clients", "blocked_clients"), "3");
    server.advance_ms(2);
    reader.expect_replies(b"XREAD BLOCK 1000 (timed out)", b"*-1\r\n");
    reader3.expect_replies(b"XREAD BLOCK 1000 (timed out, RESP3)", b"_\r\n");
    group_reader.expect_replies(b"XREADGROUP BLOCK 1000 (timed out)", b"*-1\r\n");
    wait_blocked_clients(&mut observer, 0);
    // The connections go on as usual.
    reader.expect(b"PING\r\n", b"+PONG\r\n");
    reader3.expect(b"XLEN s\r\n", b":0\r\n");
}

#[test]
fn a_blocked_client_that_disconnects_is_unregistered() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    let mut group_reader = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    group_reader.send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 2);
    reader.close();
    wait_blocked_clients(&mut observer, 1);
    group_reader.close();
    wait_blocked_clients(&mut observer, 0);
    // Nobody is left to take the entry: it stays unread by the group.
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    observer.expect(b"XPENDING s g\r\n", b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n");
}

#[test]
fn a_blocked_client_killed_with_client_kill_is_unregistered() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 1);
    let kill = format!("CLIENT KILL ADDR {}\r\n", reader.local_addr());
    observer.expect(kill.as_bytes(), b":1\r\n");
    assert!(reader.read_until_closed().is_empty());
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn xreadgroup_blocked_then_key_deleted_gets_nogroup() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    let mut reader3 = Wire::connect_resp3(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    reader.send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS s >\r\n");
    reader3.send(b"XREADGROUP GROUP g bob BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 2);
    observer.expect(b"DEL s\r\n", b":1\r\n");
    let nogroup =
        b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n";
    reader.expect_replies(b"XREADGROUP BLOCK 0, then DEL s", nogroup);
    reader3.expect_replies(b"XREADGROUP BLOCK 0, then DEL s (RESP3)", nogroup);
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn xreadgroup_blocked_then_key_overwritten_or_group_destroyed_is_woken_with_an_error() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    reader.send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"XGROUP DESTROY s g\r\n", b":1\r\n");
    reader.expect_replies(
        b"XREADGROUP BLOCK 0, then XGROUP DESTROY",
        b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n",
    );
    observer.expect(b"XGROUP CREATE s g $\r\n", b"+OK\r\n");
    reader.send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"SET s x\r\n", b"+OK\r\n");
    reader.expect_replies(
        b"XREADGROUP BLOCK 0, then SET s",
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    );
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn a_plain_xread_stays_blocked_through_del_and_is_served_by_the_recreated_stream() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"DEL s\r\n", b":1\r\n");
    reader.expect_silence();
    // `$` was fixed at 1-1 when the read blocked: an older id does not serve it.
    observer.expect(b"XADD s 1-0 f v\r\n", b"$3\r\n1-0\r\n");
    reader.expect_silence();
    observer.expect(b"XADD s 2-1 f v\r\n", b"$3\r\n2-1\r\n");
    reader.expect_replies(b"XREAD BLOCK 0 STREAMS s $", pair("s", "2-1").as_bytes());
}

#[test]
fn two_consumers_blocked_on_one_group_the_first_gets_the_entry_the_second_stays_blocked() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut first = Wire::connect(&server);
    let mut second = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    first.send(b"XREADGROUP GROUP g c1 BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 1);
    second.send(b"XREADGROUP GROUP g c2 BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 2);
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    first.expect_replies(b"c1: XREADGROUP BLOCK 0", pair("s", "1-1").as_bytes());
    second.expect_silence();
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"XADD s 2-1 f v\r\n", b"$3\r\n2-1\r\n");
    second.expect_replies(b"c2: XREADGROUP BLOCK 0", pair("s", "2-1").as_bytes());
    wait_blocked_clients(&mut observer, 0);
    observer.expect(
        b"XPENDING s g\r\n",
        b"*4\r\n:2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n\
          *2\r\n*2\r\n$2\r\nc1\r\n$1\r\n1\r\n*2\r\n$2\r\nc2\r\n$1\r\n1\r\n",
    );
}

#[test]
fn a_requeued_consumer_keeps_its_original_deadline() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut first = Wire::connect(&server);
    let mut second = Wire::connect(&server);
    observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
    first.send(b"XREADGROUP GROUP g c1 BLOCK 1000 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 1);
    second.send(b"XREADGROUP GROUP g c2 BLOCK 1000 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 2);
    server.advance_ms(600);
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    first.expect_replies(b"c1: XREADGROUP BLOCK 1000", pair("s", "1-1").as_bytes());
    wait_blocked_clients(&mut observer, 1);
    server.advance_ms(300);
    second.expect_silence();
    // 600 + 300 + 101 > 1000: the original deadline, not 1000 ms after the requeue.
    server.advance_ms(101);
    second.expect_replies(b"requeued XREADGROUP BLOCK 1000", b"*-1\r\n");
}

#[test]
fn client_list_flags_a_blocked_client_with_b() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 1);
    let list = observer.call(b"CLIENT LIST\r\n");
    let list = String::from_utf8_lossy(&list).into_owned();
    let addr = format!(" addr={} ", reader.local_addr());
    let line = list
        .lines()
        .find(|l| l.contains(&addr))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(line.contains(" flags=b "), "{line}");
    assert!(line.contains(" cmd=xread "), "{line}");
}

#[test]
fn flushall_and_flushdb_wake_a_blocked_xreadgroup_with_nogroup() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    let nogroup =
        b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n";
    for flush in [&b"FLUSHALL\r\n"[..], b"FLUSHDB\r\n"] {
        observer.expect(b"XGROUP CREATE s g $ MKSTREAM\r\n", b"+OK\r\n");
        reader.send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS s >\r\n");
        wait_blocked_clients(&mut observer, 1);
        observer.expect(flush, b"+OK\r\n");
        reader.expect_replies(flush, nogroup);
    }
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn rename_of_a_stream_with_the_group_onto_the_blocked_key_serves_the_reader() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    observer.expect(
        b"XGROUP CREATE s g $ MKSTREAM\r\nXADD t 1-1 f v\r\nXGROUP CREATE t g 0\r\n",
        b"+OK\r\n$3\r\n1-1\r\n+OK\r\n",
    );
    reader.send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS s >\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"RENAME t s\r\n", b"+OK\r\n");
    reader.expect_replies(
        b"XREADGROUP BLOCK 0, then RENAME t s",
        pair("s", "1-1").as_bytes(),
    );
}

#[test]
fn only_a_finished_write_to_the_same_key_in_the_same_database_wakes_a_reader() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    observer.expect(b"XADD s 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 1);
    // Signals are handled after the transaction: by then the key is gone.
    observer.expect(
        b"MULTI\r\nXADD s 2-1 f v\r\nDEL s\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$3\r\n2-1\r\n:1\r\n",
    );
    reader.expect_silence();
    observer.expect(
        b"SELECT 1\r\nXADD s 3-1 f v\r\nSELECT 0\r\nXADD other 3-1 f v\r\n",
        b"+OK\r\n$3\r\n3-1\r\n+OK\r\n$3\r\n3-1\r\n",
    );
    reader.expect_silence();
    assert_eq!(info_field(&mut observer, "clients", "blocked_clients"), "1");
    observer.expect(b"XADD s 4-1 f v\r\n", b"$3\r\n4-1\r\n");
    reader.expect_replies(b"XREAD BLOCK 0 STREAMS s $", pair("s", "4-1").as_bytes());
}

#[test]
fn a_woken_read_honours_count_and_plus_returns_only_the_newest_entry() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut counted = Wire::connect(&server);
    let mut newest = Wire::connect(&server);
    counted.send(b"XREAD COUNT 1 BLOCK 0 STREAMS s 0\r\n");
    newest.send(b"XREAD BLOCK 0 STREAMS s +\r\n");
    wait_blocked_clients(&mut observer, 2);
    observer.expect(
        b"MULTI\r\nXADD s 1-1 f v\r\nXADD s 2-1 f v\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n",
    );
    counted.expect_replies(
        b"XREAD COUNT 1 BLOCK 0 STREAMS s 0",
        pair("s", "1-1").as_bytes(),
    );
    newest.expect_replies(b"XREAD BLOCK 0 STREAMS s +", pair("s", "2-1").as_bytes());
}

#[test]
fn with_the_system_clock_a_block_timeout_expires_on_its_own() {
    let server = TestServer::start_with(TestServerOptions {
        system_clock: true,
        ..TestServerOptions::default()
    })
    .unwrap();
    let mut reader = Wire::connect(&server);
    let started = std::time::Instant::now();
    reader.expect(b"XREAD BLOCK 50 STREAMS s $\r\n", b"*-1\r\n");
    assert!(started.elapsed() >= std::time::Duration::from_millis(50));
}

#[test]
fn dropping_the_server_closes_a_blocked_connection() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 1);
    drop(server);
    assert!(reader.read_until_closed().is_empty());
}

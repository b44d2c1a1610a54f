//! BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP over the wire with several connections: served
//! in the order the clients blocked, woken by pushes and by LMOVE into the key, timed out by
//! the manual clock, not blocking inside MULTI, staying blocked through DEL and a change of
//! type, and the served pop's propagated form (MONITOR is not it: the AOF is, see
//! `aof::forms`).

use echomq::testing::TestServer;

use super::{Wire, wait_blocked_clients};

fn bulk(s: &str) -> String {
    format!("${}\r\n{s}\r\n", s.len())
}

fn pair(key: &str, value: &str) -> String {
    format!("*2\r\n{}{}", bulk(key), bulk(value))
}

#[test]
fn blocked_pops_are_served_first_come_first_served() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut first = Wire::connect(&server);
    let mut second = Wire::connect(&server);
    let mut third = Wire::connect_resp3(&server);
    first.send(b"BLPOP q 0\r\n");
    wait_blocked_clients(&mut observer, 1);
    second.send(b"BRPOP other q 0\r\n");
    wait_blocked_clients(&mut observer, 2);
    third.send(b"BLMPOP 0 1 q LEFT COUNT 5\r\n");
    wait_blocked_clients(&mut observer, 3);
    first.expect_silence();
    observer.expect(b"RPUSH q a b\r\n", b":2\r\n");
    first.expect_replies(b"BLPOP q 0", pair("q", "a").as_bytes());
    second.expect_replies(b"BRPOP other q 0", pair("q", "b").as_bytes());
    third.expect_silence();
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"LPUSH q c d e\r\n", b":3\r\n");
    let served = format!(
        "*2\r\n{}*3\r\n{}{}{}",
        bulk("q"),
        bulk("e"),
        bulk("d"),
        bulk("c")
    );
    third.expect_replies(b"BLMPOP 0 1 q LEFT COUNT 5", served.as_bytes());
    observer.expect(b"EXISTS q\r\n", b":0\r\n");
}

#[test]
fn an_lmove_into_the_key_wakes_a_blocked_move_and_the_chain_goes_on() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut mover = Wire::connect(&server);
    let mut popper = Wire::connect(&server);
    mover.send(b"BLMOVE a b LEFT RIGHT 0\r\n");
    popper.send(b"BRPOPLPUSH b c 0\r\n");
    wait_blocked_clients(&mut observer, 2);
    observer.expect(b"RPUSH src x\r\n", b":1\r\n");
    observer.expect(b"LMOVE src a LEFT LEFT\r\n", &bulk("x").into_bytes());
    mover.expect_replies(b"BLMOVE a b LEFT RIGHT 0", bulk("x").as_bytes());
    popper.expect_replies(b"BRPOPLPUSH b c 0", bulk("x").as_bytes());
    observer.expect(
        b"LRANGE c 0 -1\r\n",
        format!("*1\r\n{}", bulk("x")).as_bytes(),
    );
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn timeouts_follow_the_manual_clock_and_reply_a_null_array() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut resp2 = Wire::connect(&server);
    let mut resp3 = Wire::connect_resp3(&server);
    let mut mover = Wire::connect(&server);
    resp2.send(b"BLPOP k 0.5\r\n");
    resp3.send(b"BRPOP k 0.5\r\n");
    mover.send(b"BLMOVE k d LEFT LEFT 0.5\r\n");
    wait_blocked_clients(&mut observer, 3);
    server.advance_ms(499);
    resp2.expect_silence();
    server.advance_ms(2);
    resp2.expect_replies(b"BLPOP k 0.5 (timed out)", b"*-1\r\n");
    resp3.expect_replies(b"BRPOP k 0.5 (timed out, RESP3)", b"_\r\n");
    mover.expect_replies(b"BLMOVE k d LEFT LEFT 0.5 (timed out)", b"*-1\r\n");
    wait_blocked_clients(&mut observer, 0);
}

#[test]
fn inside_multi_the_blocking_forms_do_not_block() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(
        b"MULTI\r\nBLPOP k 0\r\nBLMOVE k d LEFT LEFT 0\r\nBLMPOP 0 1 k LEFT\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n*-1\r\n$-1\r\n*-1\r\n",
    );
}

#[test]
fn a_blocked_pop_stays_blocked_through_del_and_another_type() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut popper = Wire::connect(&server);
    popper.send(b"BLPOP k 0\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"SET k v\r\n", b"+OK\r\n");
    observer.expect(b"DEL k\r\n", b":1\r\n");
    observer.expect(b"XADD k 1-1 f v\r\n", b"$3\r\n1-1\r\n");
    popper.expect_silence();
    observer.expect(b"DEL k\r\n", b":1\r\n");
    observer.expect(b"RPUSH k v\r\n", b":1\r\n");
    popper.expect_replies(b"BLPOP k 0", pair("k", "v").as_bytes());
}

#[test]
fn a_push_and_pop_in_one_transaction_serve_nobody() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut popper = Wire::connect(&server);
    popper.send(b"BLPOP k 0\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(
        b"MULTI\r\nRPUSH k v\r\nLPOP k\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n$1\r\nv\r\n",
    );
    popper.expect_silence();
    observer.expect(b"RPUSH k w\r\n", b":1\r\n");
    popper.expect_replies(b"BLPOP k 0", pair("k", "w").as_bytes());
}

/// The client id in a `:N` reply.
fn client_id(wire: &mut Wire) -> String {
    let reply = wire.call(b"CLIENT ID\r\n");
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

#[test]
fn client_unblock_ends_a_wait_as_a_timeout_or_an_error() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut popper = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    let popper_id = client_id(&mut popper);
    let reader_id = client_id(&mut reader);
    observer.expect(
        format!("CLIENT UNBLOCK {popper_id}\r\n").as_bytes(),
        b":0\r\n",
    );
    popper.send(b"BLPOP k 0\r\n");
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 2);
    observer.expect(
        format!("CLIENT UNBLOCK {popper_id} MAYBE\r\n").as_bytes(),
        b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n",
    );
    observer.expect(
        b"CLIENT UNBLOCK abc\r\n",
        b"-ERR value is not an integer or out of range\r\n",
    );
    observer.expect(
        format!("CLIENT UNBLOCK {popper_id} TIMEOUT\r\n").as_bytes(),
        b":1\r\n",
    );
    popper.expect_replies(b"BLPOP k 0 (unblocked)", b"*-1\r\n");
    observer.expect(
        format!("CLIENT UNBLOCK {reader_id} ERROR\r\n").as_bytes(),
        b":1\r\n",
    );
    reader.expect_replies(
        b"XREAD BLOCK 0 (unblocked)",
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
    );
    wait_blocked_clients(&mut observer, 0);
    // Neither waits any more: a push serves nobody, the connections go on.
    observer.expect(b"RPUSH k v\r\n", b":1\r\n");
    popper.expect(b"LLEN k\r\n", b":1\r\n");
    observer.expect(
        format!("CLIENT UNBLOCK {popper_id}\r\n").as_bytes(),
        b":0\r\n",
    );
}

#[test]
fn a_list_swapped_in_serves_a_blocked_pop() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut popper = Wire::connect(&server);
    observer.expect(
        b"SELECT 1\r\nRPUSH k v\r\nSELECT 0\r\n",
        b"+OK\r\n:1\r\n+OK\r\n",
    );
    popper.send(b"BLPOP k 0\r\n");
    wait_blocked_clients(&mut observer, 1);
    observer.expect(b"SWAPDB 0 1\r\n", b"+OK\r\n");
    popper.expect_replies(b"BLPOP k 0", pair("k", "v").as_bytes());
}

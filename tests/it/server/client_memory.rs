//! What a client holds in memory, as CLIENT LIST and INFO show it, buffers given back when
//! they outgrow their use, and `maxmemory-clients`: the largest clients without CLIENT
//! NO-EVICT are closed once the clients together reach it.

use std::io::Write;

use echomq::testing::TestServer;

use super::{Wire, info_field, wait_until};

/// A field of the CLIENT LIST line of the client `id`, as seen by `observer`.
fn listed(observer: &mut Wire, id: &str, name: &str) -> u64 {
    let line = String::from_utf8(observer.command(&["CLIENT", "LIST", "ID", id])).unwrap();
    line.split([' ', '\r', '\n'])
        .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        .parse()
        .unwrap()
}

/// The client's id, as CLIENT ID answers it.
fn id_of(wire: &mut Wire) -> String {
    let reply = wire.command(&["CLIENT", "ID"]);
    String::from_utf8(reply[1..reply.len() - 2].to_vec()).unwrap()
}

/// The start of a SET of `len` bytes under `key`, with `sent` of its bytes.
fn partial_set(key: &str, len: usize, sent: usize) -> Vec<u8> {
    let mut request =
        format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${len}\r\n", key.len()).into_bytes();
    request.resize(request.len() + sent, b'v');
    request
}

#[test]
fn a_big_request_shows_in_the_clients_memory_until_an_idle_client_gives_it_back() {
    let server = TestServer::start().unwrap();
    let mut big = Wire::connect(&server);
    let mut observer = Wire::connect(&server);
    let id = id_of(&mut big);
    let usual = listed(&mut observer, &id, "tot-mem");
    assert!(usual > 0 && usual < 64 * 1024, "tot-mem {usual}");
    // Half a 4 MB value: the query buffer holds it, unparsed.
    big.send(&partial_set("k", 4 << 20, 2 << 20));
    wait_until("the half request is read", || {
        listed(&mut observer, &id, "qbuf") > 2 << 20
    });
    assert!(listed(&mut observer, &id, "tot-mem") > 2 << 20);
    let normal: u64 = info_field(&mut observer, "memory", "mem_clients_normal")
        .parse()
        .unwrap();
    assert!(normal > 2 << 20, "mem_clients_normal {normal}");
    let max_in: u64 = info_field(&mut observer, "clients", "client_recent_max_input_buffer")
        .parse()
        .unwrap();
    assert!(max_in >= 2 << 20, "client_recent_max_input_buffer {max_in}");
    // The rest: the request runs, and the buffer stays until the client has been idle.
    let rest = vec![b'v'; 2 << 20];
    big.send(&rest);
    big.send(b"\r\n");
    assert_eq!(big.read_reply(), b"+OK\r\n");
    // Published once the reply is out.
    wait_until("the request is consumed", || {
        listed(&mut observer, &id, "qbuf") == 0
    });
    assert!(listed(&mut observer, &id, "tot-mem") > 4 << 20);
    wait_until("the idle client gives its buffer back", || {
        listed(&mut observer, &id, "tot-mem") < 64 * 1024
    });
    big.expect(b"PING\r\n", b"+PONG\r\n");
}

#[test]
fn a_transaction_counts_what_it_queued() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    let mut observer = Wire::connect(&server);
    let id = id_of(&mut c);
    assert_eq!(listed(&mut observer, &id, "multi-mem"), 0);
    let value = "x".repeat(10_000);
    c.expect(b"MULTI\r\n", b"+OK\r\n");
    assert_eq!(c.command(&["SET", "a", &value]), b"+QUEUED\r\n");
    let one = listed(&mut observer, &id, "multi-mem");
    assert!(one > 10_000, "multi-mem {one}");
    assert_eq!(c.command(&["SET", "b", &value]), b"+QUEUED\r\n");
    let two = listed(&mut observer, &id, "multi-mem");
    assert!(two > one + 10_000, "multi-mem {two} after {one}");
    c.expect(b"EXEC\r\n", b"*2\r\n+OK\r\n+OK\r\n");
    assert_eq!(listed(&mut observer, &id, "multi-mem"), 0);
}

#[test]
fn maxmemory_clients_evicts_the_largest_clients_but_not_those_with_no_evict() {
    let server = TestServer::start().unwrap();
    let mut control = Wire::connect(&server);
    control.expect(b"CLIENT NO-EVICT ON\r\n", b"+OK\r\n");
    control.expect(b"CONFIG SET maxmemory-clients 2mb\r\n", b"+OK\r\n");
    // An evictable client past the limit is closed, and counted.
    let mut evictable = Wire::connect(&server);
    let mut small = Wire::connect(&server);
    // The server may close it before it has sent everything.
    let _ = evictable
        .try_clone_stream()
        .write_all(&partial_set("a", 8 << 20, 3 << 20));
    evictable.read_until_closed();
    assert_eq!(info_field(&mut control, "stats", "evicted_clients"), "1");
    small.expect(b"PING\r\n", b"+PONG\r\n");
    // A client with NO-EVICT on is spared, and its request completes.
    let mut spared = Wire::connect(&server);
    spared.expect(b"CLIENT NO-EVICT ON\r\n", b"+OK\r\n");
    spared.send(&partial_set("b", 3 << 20, 3 << 20));
    wait_until("the spared client's request is read", || {
        info_field(&mut control, "memory", "mem_clients_normal")
            .parse::<u64>()
            .unwrap()
            > 3 << 20
    });
    // The small evictable client was closed in its place, the limit still exceeded.
    small.read_until_closed();
    spared.send(b"\r\n");
    assert_eq!(spared.read_reply(), b"+OK\r\n");
    assert_eq!(info_field(&mut control, "stats", "evicted_clients"), "2");
    // Lowering the limit under what a client holds evicts it at once.
    control.expect(b"CONFIG SET maxmemory-clients 0\r\n", b"+OK\r\n");
    let mut holding = Wire::connect(&server);
    let holding_id = id_of(&mut holding);
    holding.send(&partial_set("c", 4 << 20, 1 << 20));
    wait_until("the partial request is read", || {
        listed(&mut control, &holding_id, "qbuf") > 1 << 20
    });
    control.expect(b"CONFIG SET maxmemory-clients 512kb\r\n", b"+OK\r\n");
    holding.read_until_closed();
    assert_eq!(info_field(&mut control, "stats", "evicted_clients"), "3");
}

#[test]
fn a_client_that_does_not_read_its_replies_is_evicted_past_the_limit() {
    let server = TestServer::start().unwrap();
    let mut control = Wire::connect(&server);
    control.expect(b"CLIENT NO-EVICT ON\r\n", b"+OK\r\n");
    // A 16 MB value from a small request, so no query buffer grows for it.
    assert_eq!(
        control.command(&["SETRANGE", "big", "16777215", "x"]),
        b":16777216\r\n"
    );
    control.expect(b"CONFIG SET maxmemory-clients 4mb\r\n", b"+OK\r\n");
    let mut reader = Wire::connect(&server);
    reader.send(b"GET big\r\n");
    // More than the sockets take stays with the server, past the limit.
    wait_until("the client that does not read is evicted", || {
        info_field(&mut control, "stats", "evicted_clients") == "1"
    });
    reader.read_until_closed();
    control.expect(b"PING\r\n", b"+PONG\r\n");
}

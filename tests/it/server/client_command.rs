//! CLIENT subcommands whose effect shows over the wire rather than in their reply: REPLY
//! OFF and SKIP silence replies (the bytes are those Redis 8.8 sends for the same pipeline),
//! UNBLOCK ends another client's blocking read as a timeout or an error, NO-EVICT and
//! SETINFO show in CLIENT LIST, CLIENT LIST counts a client's traffic and watched keys and
//! shows its transaction (`x`, `multi`), a MONITOR (`O`) and the socket's descriptor, and
//! CLIENT LIST and CLIENT KILL filter by TYPE (a subscribed client is `pubsub`) and MAXAGE.

use echomq::testing::TestServer;

use super::{Wire, wait_blocked_clients, wait_until};

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split([' ', '\r', '\n'])
        .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

#[test]
fn reply_skip_silences_the_next_command_and_off_everything_until_on() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.send(
        b"CLIENT REPLY SKIP\r\nSET a 1\r\nGET a\r\nCLIENT REPLY OFF\r\nSET a 2\r\n\
          CLIENT REPLY SKIP\r\nGET a\r\nCLIENT REPLY ON\r\nGET a\r\n\
          CLIENT REPLY SKIP\r\nCLIENT REPLY SKIP\r\nPING\r\nPING\r\n",
    );
    c.expect_replies(b"(pipeline)", b"$1\r\n1\r\n+OK\r\n$1\r\n2\r\n+PONG\r\n");
    c.expect_silence();
    c.expect(
        b"CLIENT REPLY OFF\r\nRESET\r\nPING\r\n",
        b"+RESET\r\n+PONG\r\n",
    );
}

#[test]
fn unblock_ends_a_blocked_read_as_a_timeout_or_an_error() {
    let server = TestServer::start().unwrap();
    let mut blocked = Wire::connect(&server);
    let reply = blocked.command(&["CLIENT", "ID"]);
    let id = String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned();
    let mut c = Wire::connect(&server);
    c.expect(format!("CLIENT UNBLOCK {id}\r\n").as_bytes(), b":0\r\n");
    blocked.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut c, 1);
    c.expect(
        format!("CLIENT UNBLOCK {id} TIMEOUT\r\n").as_bytes(),
        b":1\r\n",
    );
    blocked.expect_replies(b"(unblocked)", b"*-1\r\n");
    blocked.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut c, 1);
    c.expect(
        format!("CLIENT UNBLOCK {id} ERROR\r\n").as_bytes(),
        b":1\r\n",
    );
    blocked.expect_replies(
        b"(unblocked)",
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
    );
    blocked.expect(b"PING\r\n", b"+PONG\r\n");
    wait_blocked_clients(&mut c, 0);
}

#[test]
fn client_list_shows_flags_names_watches_and_traffic() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    c.expect(b"CLIENT NO-EVICT on\r\n", b"+OK\r\n");
    c.expect(b"CLIENT SETINFO LIB-NAME redis-py\r\n", b"+OK\r\n");
    c.expect(b"CLIENT SETINFO LIB-VER 5.1\r\n", b"+OK\r\n");
    c.expect(b"WATCH a b\r\n", b"+OK\r\n");
    c.expect(b"PING\r\nPING\r\n", b"+PONG\r\n+PONG\r\n");
    let reply = c.command(&["CLIENT", "INFO"]);
    let line = String::from_utf8_lossy(&reply).into_owned();
    assert_eq!(field(&line, "flags"), "e");
    assert_eq!(field(&line, "lib-name"), "redis-py");
    assert_eq!(field(&line, "lib-ver"), "5.1");
    assert_eq!(field(&line, "watch"), "2");
    // Six commands before CLIENT INFO, itself not yet run but read (with the rest, in five
    // reads) and counted in the pipeline figures.
    assert_eq!(field(&line, "tot-cmds"), "6");
    assert_eq!(field(&line, "read-events"), "6");
    assert_eq!(field(&line, "avg-pipeline-len-sum"), "7");
    assert_eq!(field(&line, "avg-pipeline-len-cnt"), "6");
    assert_ne!(field(&line, "tot-net-in"), "0");
    c.expect(
        b"CLIENT SETINFO LIB-VER ''\r\nRESET\r\n",
        b"+OK\r\n+RESET\r\n",
    );
    let reply = c.command(&["CLIENT", "INFO"]);
    let line = String::from_utf8_lossy(&reply).into_owned();
    assert_eq!(field(&line, "flags"), "N");
    assert_eq!(field(&line, "lib-ver"), "");
    assert_eq!(field(&line, "watch"), "0");
}

#[test]
fn client_list_shows_a_transaction_a_monitor_and_the_socket() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    let mut other = Wire::connect(&server);
    let own = String::from_utf8_lossy(&c.command(&["CLIENT", "INFO"])).into_owned();
    assert_eq!(field(&own, "multi"), "-1");
    assert_eq!(field(&own, "flags"), "N");
    let fd: i32 = field(&own, "fd").parse().unwrap();
    assert!(
        fd > 2,
        "a socket's descriptor, not a standard stream's: {own}"
    );
    // Queued commands count, seen from another client and from inside EXEC, as Redis 8.8
    // shows them (`flags=x multi=3` for MULTI, SET, GET, CLIENT INFO, EXEC).
    c.expect(
        b"MULTI\r\nSET a 1\r\nGET a\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n",
    );
    let id = field(&own, "id").to_string();
    let listed = String::from_utf8(other.command(&["CLIENT", "LIST", "ID", &id])).unwrap();
    assert_eq!(field(&listed, "flags"), "x");
    assert_eq!(field(&listed, "multi"), "2");
    c.expect(b"CLIENT INFO\r\n", b"+QUEUED\r\n");
    let exec = String::from_utf8_lossy(&c.command(&["EXEC"])).into_owned();
    assert_eq!(field(&exec, "flags"), "x");
    assert_eq!(field(&exec, "multi"), "3");
    let after = String::from_utf8_lossy(&c.command(&["CLIENT", "INFO"])).into_owned();
    assert_eq!(field(&after, "flags"), "N");
    assert_eq!(field(&after, "multi"), "-1");
    c.expect(b"MULTI\r\nDISCARD\r\n", b"+OK\r\n+OK\r\n");
    let listed = String::from_utf8(other.command(&["CLIENT", "LIST", "ID", &id])).unwrap();
    assert_eq!(field(&listed, "multi"), "-1");
    c.expect(b"MONITOR\r\n", b"+OK\r\n");
    let listed = String::from_utf8(other.command(&["CLIENT", "LIST", "ID", &id])).unwrap();
    assert_eq!(field(&listed, "flags"), "O");
    let others: Vec<i32> = String::from_utf8(other.command(&["CLIENT", "LIST"]))
        .unwrap()
        .lines()
        .filter(|l| l.contains("id="))
        .map(|l| field(l, "fd").parse().unwrap())
        .collect();
    assert_eq!(others.len(), 2);
    assert_ne!(others[0], others[1], "each connection its own descriptor");
}

#[test]
fn latency_histogram_reports_each_commands_cumulative_calls() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect_resp3(&server);
    c.expect(
        b"SET a 1\r\nSET b 2\r\nGET a\r\n",
        b"+OK\r\n+OK\r\n$1\r\n1\r\n",
    );
    let reply = String::from_utf8_lossy(&c.command(&["LATENCY", "HISTOGRAM", "set", "nosuch"]))
        .into_owned();
    assert!(
        reply.starts_with(
            "%1\r\n$3\r\nset\r\n%2\r\n$5\r\ncalls\r\n:2\r\n$14\r\nhistogram_usec\r\n%"
        ),
        "{reply}"
    );
    // The last bucket counts every call.
    assert!(reply.ends_with(":2\r\n"), "{reply}");
    c.expect(b"CONFIG SET latency-tracking no\r\n", b"+OK\r\n");
    c.expect(b"LATENCY HISTOGRAM\r\n", b"%0\r\n");
}

#[test]
fn list_and_kill_filter_by_type_and_age() {
    let server = TestServer::start().unwrap();
    let mut admin = Wire::connect(&server);
    let mut subscriber = Wire::connect(&server);
    subscriber.send(b"SUBSCRIBE news\r\n");
    subscriber.expect_replies(
        b"SUBSCRIBE news\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n",
    );
    let mut normal = Wire::connect(&server);
    // A round trip: the server has registered the connection.
    normal.expect(b"PING\r\n", b"+PONG\r\n");
    let ids = |wire: &mut Wire, kind: &str| -> Vec<String> {
        let list = String::from_utf8(wire.command(&["CLIENT", "LIST", "TYPE", kind])).unwrap();
        list.lines()
            .filter(|l| l.contains("id="))
            .map(|l| field(l, "id").to_string())
            .collect()
    };
    assert_eq!(ids(&mut admin, "pubsub").len(), 1);
    assert_eq!(ids(&mut admin, "normal").len(), 2);
    assert!(ids(&mut admin, "master").is_empty());
    // Every client is younger than a minute: none is old enough to go.
    admin.expect(b"CLIENT KILL MAXAGE 60\r\n", b":0\r\n");
    admin.expect(b"CLIENT KILL TYPE replica\r\n", b":0\r\n");
    // Only the subscriber is a pub/sub client.
    admin.expect(b"CLIENT KILL TYPE pubsub\r\n", b":1\r\n");
    subscriber.read_until_closed();
    wait_until("the subscriber is gone", || {
        ids(&mut admin, "pubsub").is_empty()
    });
    assert_eq!(ids(&mut admin, "normal").len(), 2);
    admin.expect(b"CLIENT KILL TYPE normal\r\n", b":1\r\n");
    wait_until("only the admin is left", || {
        ids(&mut admin, "normal").len() == 1
    });
    normal.close();
}

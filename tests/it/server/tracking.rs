//! Client-side caching over the wire: CLIENT TRACKING in its modes (default, BCAST with
//! prefixes, OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, REDIRECT), the RESP3 `invalidate`
//! pushes and the RESP2 `__redis__:invalidate` messages, invalidation on writes, flushes,
//! expiry and the table's key limit, and what CLIENT LIST, TRACKINGINFO and INFO show. The
//! bytes are those Redis 8.8 sends for the same exchange.

use echomq::testing::TestServer;

use super::{Wire, info_field};

const OK: &[u8] = b"+OK\r\n";

fn invalidate(keys: &[&str]) -> Vec<u8> {
    let mut out = format!(">2\r\n$10\r\ninvalidate\r\n*{}\r\n", keys.len()).into_bytes();
    for key in keys {
        out.extend_from_slice(format!("${}\r\n{key}\r\n", key.len()).as_bytes());
    }
    out
}

fn client_id(wire: &mut Wire) -> String {
    let reply = wire.command(&["CLIENT", "ID"]);
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

#[test]
fn a_read_key_changed_by_another_client_is_invalidated_once() {
    let server = TestServer::start().unwrap();
    let mut reader = Wire::connect_resp3(&server);
    let mut writer = Wire::connect(&server);
    reader.expect(b"CLIENT TRACKING ON\r\n", OK);
    writer.expect(b"SET k v\r\n", OK);
    reader.expect(b"GET k\r\n", b"$1\r\nv\r\n");
    writer.expect(b"SET k w\r\n", OK);
    reader.expect_replies(b"(push)", &invalidate(&["k"]));
    // Forgotten until read again.
    writer.expect(b"SET k x\r\n", OK);
    reader.expect(b"PING\r\n", b"+PONG\r\n");
    reader.expect(b"MGET k other\r\n", b"*2\r\n$1\r\nx\r\n_\r\n");
    writer.expect(b"DEL other\r\n", b":0\r\n");
    writer.expect(b"MSET other 1 k 2\r\n", OK);
    let mut both = invalidate(&["other"]);
    both.extend_from_slice(&invalidate(&["k"]));
    reader.expect_replies(b"(pushes)", &both);
}

#[test]
fn a_clients_own_write_is_invalidated_after_its_reply_unless_noloop() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect_resp3(&server);
    c.expect(b"CLIENT TRACKING ON\r\n", OK);
    c.expect(b"GET k\r\n", b"_\r\n");
    let mut expected = OK.to_vec();
    expected.extend_from_slice(&invalidate(&["k"]));
    c.expect(b"SET k v\r\n", &expected);
    c.expect(b"CLIENT TRACKING ON NOLOOP\r\n", OK);
    c.expect(b"GET k\r\n", b"$1\r\nv\r\n");
    c.expect(b"SET k w\r\n", OK);
    c.expect(b"PING\r\n", b"+PONG\r\n");
    c.expect(b"CLIENT TRACKING OFF\r\n", OK);
    assert_eq!(info_field(&mut c, "clients", "tracking_clients"), "0");
}

#[test]
fn a_resp2_client_redirects_to_a_subscriber_of_the_invalidate_channel() {
    let server = TestServer::start().unwrap();
    let mut sub = Wire::connect(&server);
    let sub_id = client_id(&mut sub);
    sub.expect(
        b"SUBSCRIBE __redis__:invalidate\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n",
    );
    let mut c = Wire::connect(&server);
    c.expect(
        format!("CLIENT TRACKING ON REDIRECT {sub_id}\r\n").as_bytes(),
        OK,
    );
    c.expect(b"CLIENT GETREDIR\r\n", format!(":{sub_id}\r\n").as_bytes());
    c.expect(b"GET a\r\n", b"$-1\r\n");
    c.expect(b"SET a 1\r\n", OK);
    sub.expect_replies(
        b"(message)",
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\na\r\n",
    );
    // A flush invalidates everything: the tracking client's own null.
    c.expect(b"FLUSHALL\r\n", OK);
    sub.expect_replies(
        b"(message)",
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n",
    );
    let list = String::from_utf8_lossy(&c.command(&["CLIENT", "INFO"])).into_owned();
    assert!(list.contains(" flags=t "), "{list}");
    assert!(list.contains(&format!(" redir={sub_id} ")), "{list}");
    // The target goes away: the redirect is broken.
    drop(sub);
    super::wait_until("the subscriber is gone", || {
        info_field(&mut c, "clients", "connected_clients") == "1"
    });
    c.expect(b"GET a\r\n", b"$-1\r\n");
    c.expect(b"SET a 2\r\n", OK);
    let list = String::from_utf8_lossy(&c.command(&["CLIENT", "INFO"])).into_owned();
    assert!(list.contains(" flags=tR "), "{list}");
}

#[test]
fn bcast_sends_every_changed_key_under_the_prefixes_sorted_per_transaction() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect_resp3(&server);
    let mut writer = Wire::connect(&server);
    c.expect(b"CLIENT TRACKING ON BCAST PREFIX user: PREFIX job:\r\n", OK);
    writer.expect(
        b"MULTI\r\nSET user:2 a\r\nSET other b\r\nSET user:1 c\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n+OK\r\n+OK\r\n",
    );
    c.expect_replies(b"(push)", &invalidate(&["user:1", "user:2"]));
    writer.expect(b"SET job:9 x\r\n", OK);
    c.expect_replies(b"(push)", &invalidate(&["job:9"]));
    let info = c.command(&["CLIENT", "TRACKINGINFO"]);
    assert_eq!(
        info,
        b"%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*2\r\n$4\r\njob:\r\n$5\r\nuser:\r\n"
    );
    assert_eq!(info_field(&mut c, "stats", "tracking_total_prefixes"), "2");
    let list = String::from_utf8_lossy(&c.command(&["CLIENT", "INFO"])).into_owned();
    assert!(list.contains(" flags=tB "), "{list}");
    c.expect(
        b"CLIENT TRACKING ON BCAST PREFIX use\r\n",
        b"-ERR Prefix 'use' overlaps with an existing prefix 'user:'. Prefixes for a single client must not overlap.\r\n",
    );
}

#[test]
fn optin_tracks_only_after_caching_yes_and_for_one_command() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect_resp3(&server);
    let mut writer = Wire::connect(&server);
    c.expect(b"CLIENT TRACKING ON OPTIN\r\n", OK);
    c.expect(b"GET a\r\n", b"_\r\n");
    c.expect(b"CLIENT CACHING YES\r\n", OK);
    c.expect(b"GET b\r\n", b"_\r\n");
    c.expect(b"GET c\r\n", b"_\r\n");
    assert_eq!(info_field(&mut c, "stats", "tracking_total_keys"), "1");
    writer.expect(b"MSET a 1 b 2 c 3\r\n", OK);
    c.expect_replies(b"(push)", &invalidate(&["b"]));
    c.expect(
        b"CLIENT CACHING NO\r\n",
        b"-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n",
    );
}

#[test]
fn expiry_and_the_key_limit_invalidate_as_changes_do() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect_resp3(&server);
    let mut writer = Wire::connect(&server);
    writer.expect(b"SET e v PX 100\r\n", OK);
    c.expect(b"CLIENT TRACKING ON\r\n", OK);
    c.expect(b"GET e\r\n", b"$1\r\nv\r\n");
    server.advance_ms(200);
    writer.expect(b"DBSIZE\r\n", b":0\r\n");
    c.expect_replies(b"(push)", &invalidate(&["e"]));
    writer.expect(b"CONFIG SET tracking-table-max-keys 1\r\n", OK);
    c.expect(b"GET x\r\n", b"_\r\n");
    // Over the limit: one key is invalidated to make room.
    c.expect(b"GET y\r\n", b"_\r\n");
    let push = c.read_reply();
    assert!(
        push == invalidate(&["x"]) || push == invalidate(&["y"]),
        "{}",
        super::show(&push)
    );
    assert_eq!(info_field(&mut c, "stats", "tracking_total_keys"), "1");
}

#[test]
fn tracking_options_are_refused_in_redis_order() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    for (request, reply) in [
        (
            &b"CLIENT TRACKING ON PREFIX a\r\n"[..],
            &b"-ERR PREFIX option requires BCAST mode to be enabled\r\n"[..],
        ),
        (
            b"CLIENT TRACKING ON BCAST OPTIN\r\n",
            b"-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n",
        ),
        (
            b"CLIENT TRACKING ON OPTIN OPTOUT\r\n",
            b"-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n",
        ),
        (
            b"CLIENT TRACKING ON REDIRECT 9999\r\n",
            b"-ERR The client ID you want redirect to does not exist\r\n",
        ),
        (b"CLIENT TRACKING MAYBE\r\n", b"-ERR syntax error\r\n"),
        (b"CLIENT TRACKING ON FOO\r\n", b"-ERR syntax error\r\n"),
        (
            b"CLIENT CACHING YES\r\n",
            b"-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n",
        ),
        (b"CLIENT GETREDIR\r\n", b":-1\r\n"),
        (b"CLIENT TRACKING ON OPTOUT\r\n", b"+OK\r\n"),
        (
            b"CLIENT TRACKING ON OPTIN\r\n",
            b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n",
        ),
        (
            b"CLIENT TRACKING ON BCAST\r\n",
            b"-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.\r\n",
        ),
        (b"CLIENT GETREDIR\r\n", b":0\r\n"),
    ] {
        c.expect(request, reply);
    }
    assert_eq!(info_field(&mut c, "clients", "tracking_clients"), "1");
    c.expect(b"RESET\r\n", b"+RESET\r\n");
    assert_eq!(info_field(&mut c, "clients", "tracking_clients"), "0");
}

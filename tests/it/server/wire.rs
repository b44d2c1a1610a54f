//! Reply shapes over a real socket, byte for byte, RESP2 and RESP3: the stream commands, their
//! nulls and maps, their errors, and the rules that follow the manual clock.
//!
//! Every expected reply here is what redis-server sends for the same bytes (checked against
//! 7.0.15), except where 7.4 — the version echomq follows — differs: HELLO's `version`, the
//! `Unbalanced 'xread'` text and XINFO CONSUMERS' `inactive` field.

use echomq::testing::TestServer;

use super::{Wire, hello_reply};

fn server() -> TestServer {
    TestServer::start().unwrap()
}

fn client_id(wire: &mut Wire) -> i64 {
    let reply = wire.call(b"CLIENT ID\r\n");
    let text = std::str::from_utf8(&reply).unwrap();
    text.trim_start_matches(':').trim_end().parse().unwrap()
}

#[test]
fn ping_and_echo_answer_in_both_protocols() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(b"PING\r\n", b"+PONG\r\n");
    wire.expect(b"*1\r\n$4\r\nPING\r\n", b"+PONG\r\n");
    wire.expect(b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n", b"$2\r\nhi\r\n");
    wire.expect(b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", b"$0\r\n\r\n");
    wire.expect(
        b"*2\r\n$4\r\nECHO\r\n$5\r\na\r\nb\0\r\n",
        b"$5\r\na\r\nb\0\r\n",
    );
    let id = client_id(&mut wire);
    wire.expect(b"HELLO 3\r\n", &hello_reply(id, true));
    wire.expect(b"PING\r\n", b"+PONG\r\n");
    wire.expect(b"ECHO hi\r\n", b"$2\r\nhi\r\n");
    wire.expect(b"HELLO\r\n", &hello_reply(id, true));
    wire.expect(b"HELLO 2\r\n", &hello_reply(id, false));
    wire.expect(
        b"HELLO 4\r\nHELLO x\r\n",
        b"-NOPROTO unsupported protocol version\r\n\
          -ERR Protocol version is not an integer or out of range\r\n",
    );
}

#[test]
fn xadd_xrange_xrevrange_with_explicit_ids() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXADD s 2-1 b 2 c 3\r\n",
        b"$3\r\n1-1\r\n$3\r\n2-1\r\n",
    );
    let range = b"*2\r\n\
        *2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n\
        *2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n";
    let revrange = b"*2\r\n\
        *2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n\
        *2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n";
    wire.expect(b"XRANGE s - +\r\n", range);
    wire.expect(b"XREVRANGE s + -\r\n", revrange);
    wire.expect(
        b"XRANGE s (1-1 + COUNT 1\r\n",
        b"*1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n",
    );
    wire.expect(b"XRANGE s 3 +\r\nXRANGE nokey - +\r\n", b"*0\r\n*0\r\n");
    // Fields stay a flat array in RESP3: never a map.
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(b"XRANGE s - +\r\n", range);
    wire3.expect(b"XREVRANGE s + -\r\n", revrange);
    wire3.expect(b"XADD s 3-1 d 4\r\n", b"$3\r\n3-1\r\n");
}

#[test]
fn xrange_count_zero_is_a_null_array_in_resp2_and_null_in_resp3() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(b"XADD s 1-1 a 1\r\n", b"$3\r\n1-1\r\n");
    wire.expect(
        b"XRANGE s - + COUNT 0\r\nXREVRANGE s + - COUNT 0\r\n",
        b"*-1\r\n*-1\r\n",
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(
        b"XRANGE s - + COUNT 0\r\nXREVRANGE s + - COUNT 0\r\n",
        b"_\r\n_\r\n",
    );
}

#[test]
fn xadd_nomkstream_on_a_missing_key_is_a_null_bulk_in_resp2_and_null_in_resp3() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(b"XADD nope NOMKSTREAM * a 1\r\n", b"$-1\r\n");
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(b"XADD nope NOMKSTREAM 1-1 a 1\r\n", b"_\r\n");
    wire.expect(b"EXISTS nope\r\n", b":0\r\n");
}

#[test]
fn xread_and_xreadgroup_reply_pairs_in_resp2_and_a_map_in_resp3() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXADD t 2-1 b 2\r\nXGROUP CREATE s g 0\r\n",
        b"$3\r\n1-1\r\n$3\r\n2-1\r\n+OK\r\n",
    );
    let s_entry = b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n";
    let t_entry = b"*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n";
    let pairs = [
        &b"*2\r\n*2\r\n$1\r\ns\r\n"[..],
        s_entry,
        b"*2\r\n$1\r\nt\r\n",
        t_entry,
    ]
    .concat();
    let map = [&b"%2\r\n$1\r\ns\r\n"[..], s_entry, b"$1\r\nt\r\n", t_entry].concat();
    wire.expect(b"XREAD STREAMS s t 0 0\r\n", &pairs);
    wire.expect(b"XREAD STREAMS s t 1-1 2-1\r\n", b"*-1\r\n");
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(b"XREAD STREAMS s t 0 0\r\n", &map);
    wire3.expect(b"XREAD STREAMS s t 1-1 2-1\r\n", b"_\r\n");

    // Only the streams that have something are listed.
    wire.expect(
        b"XREAD COUNT 5 STREAMS s t 1-1 0\r\n",
        &[&b"*1\r\n*2\r\n$1\r\nt\r\n"[..], t_entry].concat(),
    );
    wire.expect(
        b"XREADGROUP GROUP g alice STREAMS s >\r\n",
        &[&b"*1\r\n*2\r\n$1\r\ns\r\n"[..], s_entry].concat(),
    );
    wire.expect(b"XREADGROUP GROUP g alice STREAMS s >\r\n", b"*-1\r\n");
    wire3.expect(
        b"XREADGROUP GROUP g alice STREAMS s 0\r\n",
        &[&b"%1\r\n$1\r\ns\r\n"[..], s_entry].concat(),
    );
    wire3.expect(b"XREADGROUP GROUP g bob STREAMS s >\r\n", b"_\r\n");
}

#[test]
fn xinfo_is_flat_arrays_in_resp2_and_maps_in_resp3() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXADD s 2-1 b 2\r\nXGROUP CREATE s g 0\r\nXDEL s 1-1\r\n",
        b"$3\r\n1-1\r\n$3\r\n2-1\r\n+OK\r\n:1\r\n",
    );
    let stream_fields = b"$6\r\nlength\r\n:1\r\n\
        $15\r\nradix-tree-keys\r\n:1\r\n\
        $16\r\nradix-tree-nodes\r\n:2\r\n\
        $17\r\nlast-generated-id\r\n$3\r\n2-1\r\n\
        $20\r\nmax-deleted-entry-id\r\n$3\r\n1-1\r\n\
        $13\r\nentries-added\r\n:2\r\n\
        $23\r\nrecorded-first-entry-id\r\n$3\r\n2-1\r\n\
        $13\r\nidmp-duration\r\n:100\r\n\
        $12\r\nidmp-maxsize\r\n:100\r\n\
        $12\r\npids-tracked\r\n:0\r\n\
        $12\r\niids-tracked\r\n:0\r\n\
        $10\r\niids-added\r\n:0\r\n\
        $15\r\niids-duplicates\r\n:0\r\n\
        $6\r\ngroups\r\n:1\r\n\
        $11\r\nfirst-entry\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n\
        $10\r\nlast-entry\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n";
    let group_fields = b"$4\r\nname\r\n$1\r\ng\r\n\
        $9\r\nconsumers\r\n:0\r\n\
        $7\r\npending\r\n:0\r\n\
        $17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n\
        $12\r\nentries-read\r\n$-1\r\n\
        $3\r\nlag\r\n:1\r\n";
    wire.expect(
        b"XINFO STREAM s\r\n",
        &[&b"*32\r\n"[..], stream_fields].concat(),
    );
    wire.expect(
        b"XINFO GROUPS s\r\n",
        &[&b"*1\r\n*12\r\n"[..], group_fields].concat(),
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(
        b"XINFO STREAM s\r\n",
        &[&b"%16\r\n"[..], stream_fields].concat(),
    );
    let group_fields3 = String::from_utf8_lossy(group_fields).replace("$-1", "_");
    wire3.expect(
        b"XINFO GROUPS s\r\n",
        &[&b"*1\r\n%6\r\n"[..], group_fields3.as_bytes()].concat(),
    );

    // Empty stream: first-entry and last-entry are null.
    wire.expect(b"XGROUP CREATE e g $ MKSTREAM\r\n", b"+OK\r\n");
    let empty = b"$6\r\nlength\r\n:0\r\n\
        $15\r\nradix-tree-keys\r\n:0\r\n\
        $16\r\nradix-tree-nodes\r\n:1\r\n\
        $17\r\nlast-generated-id\r\n$3\r\n0-0\r\n\
        $20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n\
        $13\r\nentries-added\r\n:0\r\n\
        $23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n\
        $13\r\nidmp-duration\r\n:100\r\n\
        $12\r\nidmp-maxsize\r\n:100\r\n\
        $12\r\npids-tracked\r\n:0\r\n\
        $12\r\niids-tracked\r\n:0\r\n\
        $10\r\niids-added\r\n:0\r\n\
        $15\r\niids-duplicates\r\n:0\r\n\
        $6\r\ngroups\r\n:1\r\n\
        $11\r\nfirst-entry\r\n$-1\r\n\
        $10\r\nlast-entry\r\n$-1\r\n";
    wire.expect(b"XINFO STREAM e\r\n", &[&b"*32\r\n"[..], empty].concat());
    let empty3 = String::from_utf8_lossy(empty).replace("$-1", "_");
    wire3.expect(
        b"XINFO STREAM e\r\n",
        &[&b"%16\r\n"[..], empty3.as_bytes()].concat(),
    );
}

#[test]
fn xinfo_consumers_idle_and_inactive_follow_the_manual_clock() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXGROUP CREATE s g 0\r\nXGROUP CREATECONSUMER s g bob\r\n",
        b"$3\r\n1-1\r\n+OK\r\n:1\r\n",
    );
    wire.send(b"XREADGROUP GROUP g alice STREAMS s >\r\n");
    wire.read_reply();
    server.advance_ms(5000);
    // 7.2+: `inactive` is -1 for a consumer that never read.
    let fields = |idle: &str, alice_inactive: &str, bob: &str| {
        format!(
            "*2\r\n\
             {map}$4\r\nname\r\n$5\r\nalice\r\n$7\r\npending\r\n:1\r\n\
             $4\r\nidle\r\n:{idle}\r\n$8\r\ninactive\r\n:{alice_inactive}\r\n\
             {map}$4\r\nname\r\n$3\r\nbob\r\n$7\r\npending\r\n:0\r\n\
             $4\r\nidle\r\n:{bob}\r\n$8\r\ninactive\r\n:-1\r\n",
            map = "*8\r\n",
        )
    };
    wire.expect(
        b"XINFO CONSUMERS s g\r\n",
        fields("5000", "5000", "5000").as_bytes(),
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(
        b"XINFO CONSUMERS s g\r\n",
        fields("5000", "5000", "5000")
            .replace("*8\r\n", "%4\r\n")
            .as_bytes(),
    );
}

#[test]
fn xpending_summary_counts_are_bulk_strings_and_empty_summary_has_nulls() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXADD s 2-1 b 2\r\nXGROUP CREATE s g 0\r\nXGROUP CREATE s empty $\r\n",
        b"$3\r\n1-1\r\n$3\r\n2-1\r\n+OK\r\n+OK\r\n",
    );
    wire.send(b"XREADGROUP GROUP g alice COUNT 1 STREAMS s >\r\n");
    wire.read_reply();
    wire.send(b"XREADGROUP GROUP g bob STREAMS s >\r\n");
    wire.read_reply();
    let summary = b"*4\r\n:2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n\
        *2\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n*2\r\n$3\r\nbob\r\n$1\r\n1\r\n";
    wire.expect(b"XPENDING s g\r\n", summary);
    wire.expect(
        b"XPENDING s empty\r\n",
        b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n",
    );
    wire.expect(
        b"XPENDING s g - + 10\r\n",
        b"*2\r\n*4\r\n$3\r\n1-1\r\n$5\r\nalice\r\n:0\r\n:1\r\n\
          *4\r\n$3\r\n2-1\r\n$3\r\nbob\r\n:0\r\n:1\r\n",
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(b"XPENDING s g\r\n", summary);
    wire3.expect(b"XPENDING s empty\r\n", b"*4\r\n:0\r\n_\r\n_\r\n_\r\n");
    wire.expect(
        b"XPENDING s nog\r\n",
        b"-NOGROUP No such key 's' or consumer group 'nog'\r\n",
    );
}

#[test]
fn history_entries_whose_stream_entry_was_deleted_are_id_and_null() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXADD s 2-1 b 2\r\nXGROUP CREATE s g 0\r\n",
        b"$3\r\n1-1\r\n$3\r\n2-1\r\n+OK\r\n",
    );
    wire.send(b"XREADGROUP GROUP g alice STREAMS s >\r\n");
    wire.read_reply();
    wire.expect(b"XDEL s 1-1\r\n", b":1\r\n");
    let tail = b"*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n";
    wire.expect(
        b"XREADGROUP GROUP g alice STREAMS s 0\r\n",
        &[
            &b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*-1\r\n"[..],
            tail,
        ]
        .concat(),
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(
        b"XREADGROUP GROUP g alice STREAMS s 0\r\n",
        &[
            &b"%1\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n_\r\n"[..],
            tail,
        ]
        .concat(),
    );
}

#[test]
fn errors_carry_redis_codes_and_exact_texts() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"FOO a b\r\n*3\r\n$3\r\nfoo\r\n$1\r\na\r\n$5\r\nb c d\r\n*1\r\n$3\r\nbar\r\n",
        b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n\
          -ERR unknown command 'foo', with args beginning with: 'a' 'b c d' \r\n\
          -ERR unknown command 'bar'\r\n",
    );
    // CR and LF inside an error become spaces: a reply can never break the framing.
    wire.expect(
        b"*2\r\n$5\r\nfo\r\no\r\n$3\r\na\nb\r\n",
        b"-ERR unknown command 'fo  o', with args beginning with: 'a b' \r\n",
    );
    // Arguments are quoted up to 128 bytes in all.
    let long = format!("FOO {} {} cccccc dddd\r\n", "a".repeat(94), "b".repeat(75));
    let long_reply = format!(
        "-ERR unknown command 'FOO', with args beginning with: '{}' '{}' \r\n",
        "a".repeat(94),
        "b".repeat(31)
    );
    wire.expect(long.as_bytes(), long_reply.as_bytes());
    wire.expect(
        b"XADD\r\nGET\r\nXGROUP\r\nXINFO\r\nPING a b\r\nECHO\r\nXADD s 2-1\r\n",
        b"-ERR wrong number of arguments for 'xadd' command\r\n\
          -ERR wrong number of arguments for 'get' command\r\n\
          -ERR wrong number of arguments for 'xgroup' command\r\n\
          -ERR wrong number of arguments for 'xinfo' command\r\n\
          -ERR wrong number of arguments for 'ping' command\r\n\
          -ERR wrong number of arguments for 'echo' command\r\n\
          -ERR wrong number of arguments for 'xadd' command\r\n",
    );
    wire.expect(
        b"XADD w 1-1 a 1\r\nSET str v\r\nXADD str 1-1 a 1\r\nXRANGE str - +\r\n\
          XREADGROUP GROUP g c STREAMS w >\r\nXGROUP CREATE w g 0\r\nXGROUP CREATE w g 0\r\n\
          XINFO STREAM nokey\r\nXADD w 1-1 a 1\r\nXADD w 0-0 a 1\r\nXGROUP FOO\r\nXINFO FOO\r\n\
          XRANGE w - + COUNT x\r\nXCLAIM w nog c 0 1-1\r\nXAUTOCLAIM w g c 0 0 COUNT 0\r\n\
          XGROUP SETID w nog 0\r\nXACK w g 1-1 x\r\nXREAD STREAMS w >\r\n\
          XREAD BLOCK -1 STREAMS w 0\r\nXREAD BLOCK x STREAMS w 0\r\n\
          XREAD COUNT 1 STREAMS w x y\r\nXGROUP CREATE nokey g $\r\n",
        b"$3\r\n1-1\r\n+OK\r\n\
          -WRONGTYPE Operation against a key holding the wrong kind of value\r\n\
          -WRONGTYPE Operation against a key holding the wrong kind of value\r\n\
          -NOGROUP No such key 'w' or consumer group 'g' in XREADGROUP with GROUP option\r\n\
          +OK\r\n\
          -BUSYGROUP Consumer Group name already exists\r\n\
          -ERR no such key\r\n\
          -ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n\
          -ERR The ID specified in XADD must be greater than 0-0\r\n\
          -ERR unknown subcommand 'FOO'. Try XGROUP HELP.\r\n\
          -ERR unknown subcommand 'FOO'. Try XINFO HELP.\r\n\
          -ERR value is not an integer or out of range\r\n\
          -NOGROUP No such key 'w' or consumer group 'nog'\r\n\
          -ERR COUNT must be > 0\r\n\
          -NOGROUP No such consumer group 'nog' for key name 'w'\r\n\
          -ERR Invalid stream ID specified as stream command argument\r\n\
          -ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.\r\n\
          -ERR timeout is negative\r\n\
          -ERR timeout is not an integer or out of range\r\n\
          -ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified.\r\n\
          -ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n",
    );
    // An error changes nothing and the connection goes on.
    wire.expect(b"XLEN w\r\nPING\r\n", b":1\r\n+PONG\r\n");
}

#[test]
fn star_ids_come_from_the_manual_clock_and_one_exec_shares_one_millisecond() {
    let server = server();
    server.clock().set(1_700_000_000_000);
    let mut wire = Wire::connect(&server);
    wire.expect(b"XADD s * f v\r\n", b"$15\r\n1700000000000-0\r\n");
    wire.expect(
        b"MULTI\r\nXADD s * f v\r\nXADD s * f v\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$15\r\n1700000000000-1\r\n$15\r\n1700000000000-2\r\n",
    );
    server.advance_ms(1);
    wire.expect(
        b"XADD s * f v\r\nXADD s 1700000000005-* f v\r\n",
        b"$15\r\n1700000000001-0\r\n$15\r\n1700000000005-0\r\n",
    );
}

#[test]
fn xautoclaim_and_xpending_idle_follow_the_manual_clock() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 f v\r\nXGROUP CREATE s g 0\r\n",
        b"$3\r\n1-1\r\n+OK\r\n",
    );
    wire.send(b"XREADGROUP GROUP g alice STREAMS s >\r\n");
    wire.read_reply();
    server.advance_ms(1000);
    wire.expect(
        b"XPENDING s g - + 10\r\nXPENDING s g IDLE 1001 - + 10\r\n",
        b"*1\r\n*4\r\n$3\r\n1-1\r\n$5\r\nalice\r\n:1000\r\n:1\r\n*0\r\n",
    );
    // Not idle long enough: nothing claimed.
    wire.expect(
        b"XAUTOCLAIM s g bob 1001 0-0\r\n",
        b"*3\r\n$3\r\n0-0\r\n*0\r\n*0\r\n",
    );
    wire.expect(
        b"XAUTOCLAIM s g bob 1000 0-0\r\n",
        b"*3\r\n$3\r\n0-0\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*0\r\n",
    );
    wire.expect(
        b"XPENDING s g - + 10\r\n",
        b"*1\r\n*4\r\n$3\r\n1-1\r\n$3\r\nbob\r\n:0\r\n:2\r\n",
    );
    // A claimed entry deleted meanwhile is reported in the third element and dropped.
    server.advance_ms(50);
    wire.expect(
        b"XDEL s 1-1\r\nXAUTOCLAIM s g carol 10 0-0\r\nXPENDING s g\r\n",
        b":1\r\n*3\r\n$3\r\n0-0\r\n*0\r\n*1\r\n$3\r\n1-1\r\n\
          *4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n",
    );
}

#[test]
fn xinfo_stream_full_nests_maps_in_resp3_and_reads_times_from_the_manual_clock() {
    let server = server();
    server.clock().set(1_700_000_000_000);
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 a 1\r\nXADD s 2-1 b 2\r\nXGROUP CREATE s g 0\r\n",
        b"$3\r\n1-1\r\n$3\r\n2-1\r\n+OK\r\n",
    );
    wire.send(b"XREADGROUP GROUP g alice COUNT 1 STREAMS s >\r\n");
    wire.read_reply();
    let t = ":1700000000000\r\n";
    let body = |stream: &str, group: &str, consumer: &str| {
        format!(
            "{stream}$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n\
             $16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n2-1\r\n\
             $20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:2\r\n\
             $23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n\
             $13\r\nidmp-duration\r\n:100\r\n$12\r\nidmp-maxsize\r\n:100\r\n\
             $12\r\npids-tracked\r\n:0\r\n$12\r\niids-tracked\r\n:0\r\n\
             $10\r\niids-added\r\n:0\r\n$15\r\niids-duplicates\r\n:0\r\n\
             $7\r\nentries\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n\
             $6\r\ngroups\r\n*1\r\n{group}$4\r\nname\r\n$1\r\ng\r\n\
             $17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n:1\r\n\
             $3\r\nlag\r\n:1\r\n$9\r\npel-count\r\n:1\r\n$12\r\nnacked-count\r\n:0\r\n\
             $7\r\npending\r\n*1\r\n*4\r\n$3\r\n1-1\r\n$5\r\nalice\r\n{t}:1\r\n\
             $9\r\nconsumers\r\n*1\r\n{consumer}$4\r\nname\r\n$5\r\nalice\r\n\
             $9\r\nseen-time\r\n{t}$11\r\nactive-time\r\n{t}$9\r\npel-count\r\n:1\r\n\
             $7\r\npending\r\n*1\r\n*3\r\n$3\r\n1-1\r\n{t}:1\r\n"
        )
    };
    wire.expect(
        b"XINFO STREAM s FULL COUNT 1\r\n",
        body("*30\r\n", "*16\r\n", "*10\r\n").as_bytes(),
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(
        b"XINFO STREAM s FULL COUNT 1\r\n",
        body("%15\r\n", "%8\r\n", "%5\r\n").as_bytes(),
    );
}

//! The connection over raw RESP: framing (multibulk, inline, pipelining, partial frames),
//! protocol errors that close only the offending connection, transactions, authentication,
//! databases, and the limits Redis names (`proto-max-bulk-len`, `maxclients`,
//! `client-query-buffer-limit`, `maxmemory`, `timeout`). Expected bytes as in `wire`: what
//! redis-server sends, 7.4 where it differs from 7.0.

use std::io::Write;
use std::thread;

use echomq::testing::{TestServer, TestServerOptions};

use super::{Wire, hello_reply, request, show};

fn server() -> TestServer {
    TestServer::start().unwrap()
}

#[test]
fn inline_commands_split_words_and_quotes_like_redis() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"xAdD s 1-1 f \"two words\" g 'it\\'s' h \"\\x41\\n\"\r\n",
        b"$3\r\n1-1\r\n",
    );
    wire.expect(
        b"XRANGE s - +\n",
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*6\r\n$1\r\nf\r\n$9\r\ntwo words\r\n\
          $1\r\ng\r\n$4\r\nit's\r\n$1\r\nh\r\n$2\r\nA\n\r\n",
    );
    // Blank lines and empty multibulks are skipped without a reply.
    wire.expect(b"\r\n\r\n*0\r\n*-1\r\n   \r\nPING\n", b"+PONG\r\n");
    // An inline line that looks like a header is just an unknown command.
    wire.expect(b"$-5\r\n", b"-ERR unknown command '$-5'\r\n");
}

#[test]
fn pipelined_commands_in_one_write_get_every_reply_in_order() {
    let server = server();
    let mut wire = Wire::connect(&server);
    const N: usize = 5000;
    let mut requests = Vec::new();
    let mut expected = Vec::new();
    for i in 1..=N {
        requests.extend_from_slice(&request(&["XADD", "s", &format!("{i}-1"), "f", "v"]));
        let id = format!("{i}-1");
        expected.extend_from_slice(format!("${}\r\n{id}\r\n", id.len()).as_bytes());
        if i % 1000 == 0 {
            requests.extend_from_slice(b"XLEN s\r\n");
            expected.extend_from_slice(format!(":{i}\r\n").as_bytes());
        }
    }
    requests.extend_from_slice(b"XRANGE s - + COUNT 1\r\nXADD s 1-1 f v\r\nPING\r\n");
    expected.extend_from_slice(
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n\
          -ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n\
          +PONG\r\n",
    );
    // A writer of its own: the server answers while the requests are still arriving, and a
    // test that only wrote could fill both socket buffers.
    let mut writer = wire.try_clone_stream();
    let sender = thread::spawn(move || writer.write_all(&requests).unwrap());
    wire.expect_replies(
        b"<5000 XADDs, XLENs, XRANGE, XADD, PING in one write>",
        &expected,
    );
    sender.join().unwrap();
}

#[test]
fn a_pipeline_sent_one_byte_at_a_time_decodes_the_same() {
    let server = server();
    let mut wire = Wire::connect(&server);
    let requests: &[u8] = b"*4\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n1-1\r\n$1\r\nf\r\n\
        XADD s 2-1 f 'v w'\r\n*2\r\n$4\r\nXLEN\r\n$1\r\ns\r\nPING\n";
    for byte in requests {
        wire.send(std::slice::from_ref(byte));
    }
    wire.expect_replies(
        requests,
        b"-ERR wrong number of arguments for 'xadd' command\r\n$3\r\n2-1\r\n:1\r\n+PONG\r\n",
    );
}

#[test]
fn large_values_round_trip_whole() {
    let server = server();
    let mut wire = Wire::connect(&server);
    let value = "x".repeat(300 * 1024);
    let reply = wire.command(&["XADD", "s", "1-1", "f", &value]);
    assert_eq!(reply, b"$3\r\n1-1\r\n", "{}", show(&reply));
    let expected = format!(
        "*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n${}\r\n{value}\r\n",
        value.len()
    );
    wire.expect(b"XRANGE s - +\r\n", expected.as_bytes());
}

#[test]
fn multi_exec_queues_aborts_and_honours_watch() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"MULTI\r\nXADD m 1-1 a 1\r\nXLEN m\r\nXADD m 1-1 a 1\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n\
          *3\r\n$3\r\n1-1\r\n:1\r\n\
          -ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
    );
    // Unknown commands and wrong arity fail while queueing; EXEC then aborts.
    wire.expect(
        b"MULTI\r\nXADD m 2-1 a 1\r\nFOO\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n-ERR unknown command 'FOO'\r\n\
          -EXECABORT Transaction discarded because of previous errors.\r\n",
    );
    wire.expect(
        b"MULTI\r\nXADD\r\nEXEC\r\nXLEN m\r\n",
        b"+OK\r\n-ERR wrong number of arguments for 'xadd' command\r\n\
          -EXECABORT Transaction discarded because of previous errors.\r\n:1\r\n",
    );
    wire.expect(
        b"EXEC\r\nDISCARD\r\nMULTI\r\nMULTI\r\nDISCARD\r\n",
        b"-ERR EXEC without MULTI\r\n-ERR DISCARD without MULTI\r\n+OK\r\n\
          -ERR MULTI calls can not be nested\r\n+OK\r\n",
    );
    // A blocking read inside EXEC answers as if it timed out.
    wire.expect(
        b"XGROUP CREATE m g $\r\nMULTI\r\nXREAD BLOCK 0 STREAMS m $\r\n\
          XREADGROUP GROUP g c BLOCK 0 STREAMS m >\r\nEXEC\r\n",
        b"+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n*-1\r\n*-1\r\n",
    );
    // WATCH: a change by another client aborts EXEC with a null array.
    let mut other = Wire::connect(&server);
    wire.expect(b"WATCH m\r\n", b"+OK\r\n");
    other.expect(b"XADD m 5-1 a 1\r\n", b"$3\r\n5-1\r\n");
    wire.expect(
        b"MULTI\r\nXADD m 6-1 a 1\r\nEXEC\r\nXLEN m\r\n",
        b"+OK\r\n+QUEUED\r\n*-1\r\n:2\r\n",
    );
    // No change: it runs. And the watch ended with the EXEC above.
    wire.expect(b"WATCH m\r\n", b"+OK\r\n");
    wire.expect(
        b"MULTI\r\nXADD m 6-1 a 1\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n*1\r\n$3\r\n6-1\r\n",
    );
    let mut wire3 = Wire::connect_resp3(&server);
    wire3.expect(
        b"WATCH m\r\nMULTI\r\nXREAD BLOCK 10 STREAMS m $\r\n",
        b"+OK\r\n+OK\r\n+QUEUED\r\n",
    );
    other.expect(b"XADD m 7-1 a 1\r\n", b"$3\r\n7-1\r\n");
    wire3.expect(b"EXEC\r\n", b"_\r\n");
    wire3.expect(
        b"MULTI\r\nXREAD BLOCK 10 STREAMS m $\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n*1\r\n_\r\n",
    );
}

/// Sends `bad` on a fresh connection, expects `replies_before` then `error`, and the close;
/// another client connected all along keeps working.
fn assert_protocol_error(server: &TestServer, bad: &[u8], replies_before: &[u8], error: &[u8]) {
    let mut bystander = Wire::connect(server);
    bystander.expect(b"PING\r\n", b"+PONG\r\n");
    let mut wire = Wire::connect(server);
    wire.send(bad);
    let got = wire.read_until_closed();
    let expected = [replies_before, error].concat();
    assert!(
        got == expected,
        "request:  {}\nexpected: {} then close\nactual:   {}",
        show(bad),
        show(&expected),
        show(&got)
    );
    bystander.expect(
        b"XADD bystander 1-1 f v\r\nDEL bystander\r\nPING\r\n",
        b"$3\r\n1-1\r\n:1\r\n+PONG\r\n",
    );
}

#[test]
fn a_protocol_error_closes_only_that_connection() {
    let server = server();
    assert_protocol_error(
        &server,
        b"*x\r\n",
        b"",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    );
    assert_protocol_error(
        &server,
        b"*1\r\n$-5\r\n",
        b"",
        b"-ERR Protocol error: invalid bulk length\r\n",
    );
    assert_protocol_error(
        &server,
        b"*1\r\n+a\r\n",
        b"",
        b"-ERR Protocol error: expected '$', got '+'\r\n",
    );
    assert_protocol_error(
        &server,
        b"PING\r\n*x\r\nPING\r\n",
        b"+PONG\r\n",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    );
    assert_protocol_error(
        &server,
        b"SET x \"a b\" \r\nSET y \"a\r\n",
        b"+OK\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    );
    assert_protocol_error(
        &server,
        b"*3000000000\r\n",
        b"",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    );
}

#[test]
fn proto_max_bulk_len_is_enforced_after_config_set() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"CONFIG SET proto-max-bulk-len 100\r\nCONFIG SET proto-max-bulk-len 1mb\r\n\
          CONFIG GET proto-max-bulk-len\r\n",
        b"-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n\
          +OK\r\n*2\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n1048576\r\n",
    );
    // At the limit: fine.
    let value = "x".repeat(1024 * 1024);
    let reply = wire.command(&["ECHO", &value]);
    assert!(
        reply.starts_with(b"$1048576\r\nxxx") && reply.len() == 1024 * 1024 + 12,
        "{}",
        show(&reply[..reply.len().min(40)])
    );
    // One byte over: refused from the header alone, before any payload arrives.
    assert_protocol_error(
        &server,
        b"*2\r\n$4\r\nECHO\r\n$1048577\r\n",
        b"",
        b"-ERR Protocol error: invalid bulk length\r\n",
    );
}

#[test]
fn requirepass_refuses_commands_until_auth() {
    let server = TestServer::start_with(TestServerOptions {
        requirepass: "sekret".into(),
        ..TestServerOptions::default()
    })
    .unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"PING\r\nXADD s 1-1 a 1\r\nAUTH\r\nAUTH wrong\r\nHELLO 3\r\nHELLO 3 AUTH default bad\r\n",
        b"-NOAUTH Authentication required.\r\n\
          -NOAUTH Authentication required.\r\n\
          -ERR wrong number of arguments for 'auth' command\r\n\
          -WRONGPASS invalid username-password pair or user is disabled.\r\n\
          -NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n\
          -WRONGPASS invalid username-password pair or user is disabled.\r\n",
    );
    wire.expect(
        b"AUTH sekret\r\nXADD s 1-1 a 1\r\nXLEN s\r\n",
        b"+OK\r\n$3\r\n1-1\r\n:1\r\n",
    );
    let mut other = Wire::connect(&server);
    other.expect(b"AUTH default sekret\r\nXLEN s\r\n", b"+OK\r\n:1\r\n");
    let mut hello = Wire::connect(&server);
    hello.expect(b"CLIENT ID\r\n", b"-NOAUTH Authentication required.\r\n");
    let id = client_id_of(&mut other, &hello);
    hello.expect(b"HELLO 3 AUTH default sekret\r\n", &hello_reply(id, true));
    hello.expect(b"XLEN s\r\n", b":1\r\n");
    // Before AUTH, large frames are a protocol error (Redis's unauthenticated limits).
    let mut anonymous = Wire::connect(&server);
    anonymous.send(b"*11\r\n");
    let got = anonymous.read_until_closed();
    assert_eq!(
        got,
        b"-ERR Protocol error: unauthenticated multibulk length\r\n",
        "{}",
        show(&got)
    );
    other.expect(b"PING\r\n", b"+PONG\r\n");
}

/// The id of `target` as `observer` (authenticated) sees it in CLIENT LIST.
fn client_id_of(observer: &mut Wire, target: &Wire) -> i64 {
    let list = observer.call(b"CLIENT LIST\r\n");
    let list = String::from_utf8_lossy(&list).into_owned();
    let addr = format!(" addr={} ", target.local_addr());
    let line = list
        .lines()
        .find(|line| line.contains(&addr))
        .unwrap_or_else(|| panic!("no{addr}in CLIENT LIST: {list}"));
    let id = line
        .split(' ')
        .find_map(|field| field.strip_prefix("id="))
        .unwrap_or_else(|| panic!("no id in {line}"));
    id.parse().unwrap()
}

#[test]
fn select_isolates_databases() {
    let server = server();
    let mut wire = Wire::connect(&server);
    let mut other = Wire::connect(&server);
    wire.expect(
        b"SELECT 1\r\nXADD s 1-1 a 1\r\nDBSIZE\r\n",
        b"+OK\r\n$3\r\n1-1\r\n:1\r\n",
    );
    other.expect(b"EXISTS s\r\nDBSIZE\r\nXLEN s\r\n", b":0\r\n:0\r\n:0\r\n");
    other.expect(b"XADD s 7-7 b 2\r\n", b"$3\r\n7-7\r\n");
    wire.expect(
        b"XRANGE s - +\r\n",
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
    );
    wire.expect(
        b"SELECT 0\r\nXRANGE s - +\r\nSELECT 16\r\nSELECT -1\r\nSELECT x\r\n",
        b"+OK\r\n*1\r\n*2\r\n$3\r\n7-7\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n\
          -ERR DB index is out of range\r\n-ERR DB index is out of range\r\n\
          -ERR value is not an integer or out of range\r\n",
    );
}

#[test]
fn quit_replies_ok_then_closes() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.send(b"QUIT\r\nPING\r\n");
    let got = wire.read_until_closed();
    assert_eq!(got, b"+OK\r\n", "{}", show(&got));
}

#[test]
fn a_server_started_with_resp3_speaks_it_before_hello() {
    let server = TestServer::start_with(TestServerOptions {
        resp3: true,
        ..TestServerOptions::default()
    })
    .unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 f v\r\nXRANGE s - + COUNT 0\r\nXREAD STREAMS s 1-1\r\nXADD n NOMKSTREAM * f v\r\n",
        b"$3\r\n1-1\r\n_\r\n_\r\n_\r\n",
    );
    wire.send(b"HELLO 2\r\n");
    wire.read_reply();
    wire.expect(
        b"XRANGE s - + COUNT 0\r\nXREAD STREAMS s 1-1\r\nXADD n NOMKSTREAM * f v\r\n",
        b"*-1\r\n*-1\r\n$-1\r\n",
    );
}

#[test]
fn maxclients_refuses_the_connection_over_the_limit() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(b"CONFIG SET maxclients 2\r\n", b"+OK\r\n");
    let mut second = Wire::connect(&server);
    second.expect(b"PING\r\n", b"+PONG\r\n");
    let mut third = Wire::connect(&server);
    let got = third.read_until_closed();
    assert_eq!(
        got,
        b"-ERR max number of clients reached\r\n",
        "{}",
        show(&got)
    );
    second.close();
    super::wait_until("the second client is gone", || {
        super::info_field(&mut wire, "clients", "connected_clients") == "1"
    });
    let mut again = Wire::connect(&server);
    again.expect(b"PING\r\n", b"+PONG\r\n");
}

#[test]
fn a_query_buffer_over_client_query_buffer_limit_closes_the_connection() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(b"CONFIG SET client-query-buffer-limit 1mb\r\n", b"+OK\r\n");
    let mut greedy = Wire::connect(&server);
    let mut writer = greedy.try_clone_stream();
    // A 2 MB bulk is within proto-max-bulk-len, but not within the query buffer. The server
    // may close while we still write: a write error is expected then.
    let sender = thread::spawn(move || {
        let _ = writer.write_all(b"*2\r\n$4\r\nECHO\r\n$2000000\r\n");
        let _ = writer.write_all(&vec![b'x'; 1_500_000]);
    });
    let got = greedy.read_until_closed();
    assert!(got.is_empty(), "{}", show(&got));
    sender.join().unwrap();
    wire.expect(b"PING\r\n", b"+PONG\r\n");
}

#[test]
fn over_maxmemory_writes_answer_oom_and_reads_still_work() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XADD s 1-1 f v\r\nCONFIG SET maxmemory 1\r\n\
          XADD s 2-1 f v\r\nXLEN s\r\nSET k v\r\nXGROUP CREATE s g $\r\nXRANGE s - +\r\n",
        b"$3\r\n1-1\r\n+OK\r\n\
          -OOM command not allowed when used memory > 'maxmemory'.\r\n:1\r\n\
          -OOM command not allowed when used memory > 'maxmemory'.\r\n\
          -OOM command not allowed when used memory > 'maxmemory'.\r\n\
          *1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
    wire.expect(
        b"CONFIG SET maxmemory 0\r\nXADD s 2-1 f v\r\n",
        b"+OK\r\n$3\r\n2-1\r\n",
    );
}

#[test]
fn an_idle_client_is_closed_after_timeout() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(b"CONFIG SET timeout 1\r\n", b"+OK\r\n");
    let mut idle = Wire::connect(&server);
    idle.expect(b"PING\r\n", b"+PONG\r\n");
    let got = idle.read_until_closed();
    assert!(got.is_empty(), "{}", show(&got));
}

#[test]
fn a_client_that_stops_reading_gets_every_reply_once_it_reads_again() {
    let server = server();
    let mut wire = Wire::connect(&server);
    let value = "v".repeat(100 * 1024);
    let reply = wire.command(&["XADD", "s", "1-1", "f", &value]);
    assert_eq!(reply, b"$3\r\n1-1\r\n", "{}", show(&reply));
    const N: usize = 100;
    let one = format!(
        "*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n${}\r\n{value}\r\n",
        value.len()
    );
    // 10 MB of replies pile up while the client only writes; then it reads them all.
    let mut writer = wire.try_clone_stream();
    let sender = thread::spawn(move || {
        for _ in 0..N {
            writer.write_all(b"XRANGE s - +\r\n").unwrap();
        }
        writer.write_all(b"PING\r\n").unwrap();
    });
    sender.join().unwrap();
    let expected = [one.repeat(N).as_bytes(), b"+PONG\r\n"].concat();
    wire.expect_replies(b"<100 XRANGE of a 100 KB entry, then PING>", &expected);
}

#[test]
fn info_commandstats_counts_container_commands_by_subcommand() {
    let server = server();
    let mut wire = Wire::connect(&server);
    wire.expect(
        b"XGROUP CREATE s g $ MKSTREAM\r\nXGROUP CREATE s g $\r\nXINFO STREAM s\r\nXINFO FOO\r\n",
        b"+OK\r\n-BUSYGROUP Consumer Group name already exists\r\n",
    );
    wire.read_reply();
    wire.read_reply();
    let stats = wire.call(b"INFO commandstats\r\n");
    let stats = String::from_utf8_lossy(&stats).into_owned();
    let line = |name: &str| {
        stats
            .split("\r\n")
            .find(|l| l.starts_with(&format!("cmdstat_{name}:")))
            .map(str::to_string)
    };
    let create = line("xgroup|create").unwrap_or_else(|| panic!("{stats}"));
    assert!(
        create.starts_with("cmdstat_xgroup|create:calls=2,")
            && create.ends_with(",rejected_calls=0,failed_calls=1"),
        "{create}"
    );
    let info = line("xinfo|stream").unwrap_or_else(|| panic!("{stats}"));
    assert!(
        info.starts_with("cmdstat_xinfo|stream:calls=1,")
            && info.ends_with(",rejected_calls=0,failed_calls=0"),
        "{info}"
    );
    // An unknown subcommand is rejected before any command runs: no line of its own.
    assert_eq!(line("xinfo"), None, "{stats}");
    assert_eq!(line("xgroup"), None, "{stats}");
}

#[test]
fn watch_is_touched_only_by_real_changes_to_the_watched_key() {
    let server = server();
    let mut wire = Wire::connect(&server);
    let mut other = Wire::connect(&server);
    let ran = b"+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n";
    let aborted = b"+OK\r\n+QUEUED\r\n*-1\r\n";
    let tx = b"MULTI\r\nPING\r\nEXEC\r\n";
    wire.expect(
        b"XADD s 5-1 f v\r\nXGROUP CREATE s g 0\r\n",
        b"$3\r\n5-1\r\n+OK\r\n",
    );
    // Writes that change nothing leave the watch alone.
    for (no_op, reply) in [
        (&b"XADD s 1-1 f v\r\n"[..], &b"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"[..]),
        (b"XTRIM s MAXLEN 10\r\n", b":0\r\n"),
        (b"XDEL s 1-1\r\n", b":0\r\n"),
        (b"XACK s g 5-1\r\n", b":0\r\n"),
        (b"DEL missing\r\n", b":0\r\n"),
        (b"SELECT 2\r\nFLUSHDB\r\nSELECT 0\r\n", b"+OK\r\n+OK\r\n+OK\r\n"),
    ] {
        wire.expect(b"WATCH s missing\r\n", b"+OK\r\n");
        other.expect(no_op, reply);
        wire.expect(tx, ran);
    }
    // The watch stays on database 0 after SELECT.
    wire.expect(b"WATCH s\r\nSELECT 1\r\n", b"+OK\r\n+OK\r\n");
    other.expect(b"XADD s 6-1 f v\r\n", b"$3\r\n6-1\r\n");
    wire.expect(tx, aborted);
    wire.expect(b"SELECT 0\r\n", b"+OK\r\n");
    // A watched key created, renamed onto, or flushed while it exists.
    for (change, reply) in [
        (&b"XADD missing 1-1 f v\r\n"[..], &b"$3\r\n1-1\r\n"[..]),
        (b"RENAME missing s\r\n", b"+OK\r\n"),
        (b"FLUSHALL\r\n", b"+OK\r\n"),
    ] {
        wire.expect(b"WATCH s missing\r\n", b"+OK\r\n");
        other.expect(change, reply);
        wire.expect(tx, aborted);
    }
    // DISCARD and UNWATCH drop the watch; the client's own change counts too.
    wire.expect(
        b"XADD s 1-1 f v\r\nWATCH s\r\nMULTI\r\nDISCARD\r\n",
        b"$3\r\n1-1\r\n+OK\r\n+OK\r\n+OK\r\n",
    );
    other.expect(b"XADD s 2-1 f v\r\n", b"$3\r\n2-1\r\n");
    wire.expect(tx, ran);
    wire.expect(b"WATCH s\r\nUNWATCH\r\n", b"+OK\r\n+OK\r\n");
    other.expect(b"XADD s 3-1 f v\r\n", b"$3\r\n3-1\r\n");
    wire.expect(tx, ran);
    wire.expect(b"WATCH s\r\nXADD s 4-1 f v\r\n", b"+OK\r\n$3\r\n4-1\r\n");
    wire.expect(tx, aborted);
}

#[test]
fn xsetid_does_not_touch_a_watched_key() {
    let server = server();
    let mut wire = Wire::connect(&server);
    let mut other = Wire::connect(&server);
    wire.expect(b"XADD s 5-1 f v\r\nWATCH s\r\n", b"$3\r\n5-1\r\n+OK\r\n");
    other.expect(b"XSETID s 6-1\r\n", b"+OK\r\n");
    wire.expect(
        b"MULTI\r\nPING\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n",
    );
}

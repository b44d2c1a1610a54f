//! Introspection against Redis 8.8 over the wire, RESP2 and RESP3: OBJECT, MEMORY USAGE of
//! strings (exact) and streams (within 20%), MEMORY HELP, MEMORY DOCTOR of a small instance, SLOWLOG (entries' arguments and
//! counts; times, ids and client addresses differ by nature), LATENCY, WAIT, COMMAND GETKEYS
//! and WAITAOF with the AOF off, and the slow log's CONFIG parameters.

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};

use echomq::testing::TestServer;

use crate::support::peer::{Peer, PeerKind};
use crate::support::resp::{Resp, write_command};
use crate::support::wire::{WireDiffer, words};

const CASES: &[&str] = &[
    "SET a 1",
    "SET b 12345",
    "SET c abc",
    "SET d aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "SET c2 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "SET z 012",
    "SET n -42",
    "XADD s 1-0 f v",
    "OBJECT ENCODING a",
    "OBJECT ENCODING b",
    "OBJECT ENCODING c",
    "OBJECT ENCODING d",
    "OBJECT ENCODING c2",
    "OBJECT ENCODING z",
    "OBJECT ENCODING n",
    "OBJECT ENCODING s",
    "OBJECT ENCODING nokey",
    "OBJECT REFCOUNT a",
    "OBJECT REFCOUNT s",
    "OBJECT REFCOUNT nokey",
    "OBJECT IDLETIME s",
    "OBJECT FREQ s",
    "OBJECT HELP",
    "OBJECT",
    "OBJECT foo",
    "OBJECT ENCODING",
    "OBJECT ENCODING a b",
    "MEMORY USAGE a",
    "MEMORY USAGE b",
    "MEMORY USAGE c",
    "MEMORY USAGE d",
    "MEMORY USAGE c2",
    "MEMORY USAGE nokey",
    "MEMORY USAGE a SAMPLES 0",
    "MEMORY USAGE a SAMPLES -1",
    "MEMORY USAGE a SAMPLES x",
    "MEMORY USAGE a foo",
    "MEMORY USAGE",
    "MEMORY HELP",
    "MEMORY DOCTOR",
    "MEMORY frob",
    "SLOWLOG HELP",
    "SLOWLOG RESET",
    "SLOWLOG LEN",
    "SLOWLOG GET",
    "SLOWLOG GET -2",
    "SLOWLOG GET x",
    "SLOWLOG LEN x",
    "SLOWLOG frob",
    "LATENCY LATEST",
    "LATENCY HISTORY command",
    "LATENCY RESET",
    "LATENCY RESET command",
    "LATENCY HELP",
    "LATENCY HISTORY",
    "WAIT 0 0",
    "WAIT 0 100",
    "WAIT x 0",
    "WAIT 0 -1",
    "WAIT 0 x",
    "WAIT 0",
    // WAITAOF with the AOF off (the `aof` tests run it with the AOF on).
    "WAITAOF 0 0 0",
    "WAITAOF 0 0 100",
    "WAITAOF 1 0 0",
    "WAITAOF 2 0 0",
    "WAITAOF -1 0 0",
    "WAITAOF x 0 0",
    "WAITAOF 0 -1 0",
    "WAITAOF 0 x 0",
    "WAITAOF 0 0 -1",
    "WAITAOF 0 0 x",
    "WAITAOF 0 0 9223372036854775807",
    "WAITAOF 1 x 0",
    "WAITAOF 0 0",
    "MULTI",
    "WAITAOF 0 0 0",
    "WAITAOF 1 0 0",
    "EXEC",
    "COMMAND GETKEYS waitaof 0 0 0",
    "COMMAND GETKEYS get a",
    "COMMAND GETKEYS xadd s * f v",
    "COMMAND GETKEYS del a b c",
    "COMMAND GETKEYS rename a b",
    "COMMAND GETKEYS xgroup create s g 0",
    "COMMAND GETKEYS xread count 1 streams s1 s2 0 0",
    "COMMAND GETKEYS xreadgroup group g c streams s1 0",
    "COMMAND GETKEYS ping",
    "COMMAND GETKEYS foo",
    "COMMAND GETKEYS get",
    "COMMAND GETKEYS",
    "CONFIG GET slowlog-log-slower-than",
    "CONFIG GET slowlog-max-len",
    "CONFIG SET slowlog-max-len -1",
    "CONFIG SET slowlog-log-slower-than x",
];

#[test]
fn introspection_matches_redis8_in_resp2_and_resp3() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    for protocol in [2, 3] {
        differ.reset(protocol).unwrap();
        for line in CASES {
            let argv = words(&line.split_whitespace().collect::<Vec<_>>());
            if let Err(mismatch) = differ.run(&argv) {
                panic!("{mismatch}");
            }
        }
    }
}

struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).unwrap();
        Conn {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    fn call(&mut self, line: &str) -> Resp {
        let argv: Vec<&str> = line.split_whitespace().collect();
        write_command(&mut self.writer, &argv).unwrap();
        let mut raw = Vec::new();
        Resp::read(&mut self.reader, &mut raw).unwrap()
    }

    /// Many XADDs in one pipeline.
    fn fill(&mut self, key: &str, entries: usize) {
        let mut bytes = Vec::new();
        for i in 0..entries {
            let value = format!("value-{i}");
            write_command(
                &mut bytes,
                &["XADD", key, &format!("{}-0", i + 1), "field", &value],
            )
            .unwrap();
        }
        self.writer.write_all(&bytes).unwrap();
        for _ in 0..entries {
            let mut raw = Vec::new();
            Resp::read(&mut self.reader, &mut raw).unwrap();
        }
    }
}

fn int(reply: Resp) -> i64 {
    match reply {
        Resp::Int(n) => n,
        other => panic!("not an integer: {other}"),
    }
}

#[test]
fn memory_usage_of_streams_is_within_20_percent_of_redis8() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut theirs = Conn::open(peer.addr());
    let mut mine = Conn::open(ours.addr());
    for entries in [1, 10, 100, 1000, 5000] {
        let key = format!("s{entries}");
        theirs.fill(&key, entries);
        mine.fill(&key, entries);
        let redis = int(theirs.call(&format!("MEMORY USAGE {key}")));
        let echomq = int(mine.call(&format!("MEMORY USAGE {key}")));
        let ratio = echomq as f64 / redis as f64;
        assert!(
            (0.8..=1.2).contains(&ratio),
            "{entries} entries: echomq {echomq} bytes, redis 8.8 {redis} (ratio {ratio:.2})"
        );
    }
}

/// The slow log's entries as far as they agree between servers: their arguments.
fn slowlog_arguments(reply: Resp) -> Vec<Resp> {
    let Resp::Array(entries) = reply else {
        panic!("SLOWLOG GET is not an array: {reply}");
    };
    entries
        .into_iter()
        .map(|entry| match entry {
            Resp::Array(fields) if fields.len() == 6 => fields[3].clone(),
            other => panic!("not a slow log entry: {other}"),
        })
        .collect()
}

#[test]
fn slowlog_logs_what_redis8_logs() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let long = "x".repeat(130);
    let many = vec!["a"; 40].join(" ");
    let script = [
        "CONFIG SET slowlog-log-slower-than 0".to_string(),
        "SLOWLOG RESET".into(),
        "SET k v".into(),
        format!("SET long {long}"),
        format!("DEL {many}"),
        "CLIENT SETNAME me".into(),
        "XADD s 1-0 f v".into(),
        "CONFIG SET slowlog-max-len 4".into(),
        "GET k".into(),
    ];
    let mut results = Vec::new();
    for addr in [peer.addr(), ours.addr()] {
        let mut conn = Conn::open(addr);
        for line in &script {
            conn.call(line);
        }
        let len = conn.call("SLOWLOG LEN");
        let all = slowlog_arguments(conn.call("SLOWLOG GET -1"));
        let two = slowlog_arguments(conn.call("SLOWLOG GET 2"));
        conn.call("CONFIG SET slowlog-log-slower-than -1");
        conn.call("SLOWLOG RESET");
        conn.call("GET k");
        let off = conn.call("SLOWLOG LEN");
        results.push((len, all, two, off));
    }
    assert_eq!(results[1], results[0], "echomq, then redis 8.8");
    assert_eq!(results[1].0, Resp::Int(4));
}

/// A MONITOR line with its time and client port blanked: `+T [db 127.0.0.1:P] args`.
fn monitor_line(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw).into_owned();
    let rest = text.split_once(' ').map_or("", |(_, rest)| rest);
    let (db, rest) = rest
        .trim_start_matches('[')
        .split_once(' ')
        .unwrap_or_default();
    let (source, args) = rest.split_once("] ").unwrap_or_default();
    // A script's commands show as `lua`'s, not a client's.
    let source = if source == "lua" {
        "lua"
    } else {
        "127.0.0.1:P"
    };
    format!("+T [{db} {source}] {}", args.trim_end())
}

/// What a monitor sees while another client runs a script, up to `ECHO done`.
fn monitored(addr: SocketAddr, script: &[&[&str]]) -> Vec<String> {
    let mut monitor = Conn::open(addr);
    assert_eq!(monitor.call("MONITOR"), Resp::Simple("OK".into()));
    let mut client = Conn::open(addr);
    for argv in script {
        write_command(&mut client.writer, argv).unwrap();
        let mut raw = Vec::new();
        Resp::read(&mut client.reader, &mut raw).unwrap();
    }
    client.call("ECHO done");
    let mut lines = Vec::new();
    loop {
        let mut raw = Vec::new();
        Resp::read(&mut monitor.reader, &mut raw).unwrap();
        let line = monitor_line(&raw);
        let done = line.ends_with("\"ECHO\" \"done\"");
        lines.push(line);
        if done {
            return lines;
        }
    }
}

#[test]
fn monitor_shows_commands_as_redis8_does() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let script: &[&[&str]] = &[
        &["SET", "k", "v"],
        &["GET", "k"],
        &["XADD", "s", "1-0", "f", "a b\"c\\\n\t\x01"],
        &["CONFIG", "GET", "maxmemory"],
        &["SELECT", "2"],
        &["PING"],
        &["NOSUCHCOMMAND"],
        &["GET"],
        &["SLOWLOG", "LEN"],
        &["MULTI"],
        &["SET", "x", "1"],
        &["EXEC"],
        &["SELECT", "0"],
        // A script: the call first, then its commands as `lua`'s.
        &[
            "EVAL",
            "redis.call('set', 'k', 'v'); return redis.call('get', 'k')",
            "0",
        ],
        &["EVAL", "return 1", "x"],
        &["MULTI"],
        &["EVAL", "return redis.call('incr', 'n')", "0"],
        &["EXEC"],
    ];
    let theirs = monitored(peer.addr(), script);
    let mine = monitored(ours.addr(), script);
    assert_eq!(mine, theirs, "echomq, then redis 8.8");
}

/// CLIENT PAUSE's behaviour on one server: the replies, and whether a held write answered
/// before CLIENT UNPAUSE.
fn pause_script(addr: SocketAddr) -> (Vec<Resp>, bool) {
    let mut control = Conn::open(addr);
    let mut client = Conn::open(addr);
    let mut replies = Vec::new();
    for line in [
        "CLIENT PAUSE x",
        "CLIENT PAUSE -1",
        "CLIENT PAUSE 10 foo",
        "CLIENT PAUSE 10 write extra",
        "CLIENT PAUSE",
        "CLIENT PAUSE 100000 WRITE",
    ] {
        replies.push(control.call(line));
    }
    // Reads run, writes wait.
    replies.push(client.call("GET k"));
    write_command(&mut client.writer, &["SET", "k", "v"]).unwrap();
    client
        .writer
        .set_read_timeout(Some(crate::server::QUIET_WINDOW))
        .unwrap();
    let mut raw = Vec::new();
    let early = Resp::read(&mut client.reader, &mut raw).is_ok();
    client
        .writer
        .set_read_timeout(Some(crate::server::REPLY_TIMEOUT))
        .unwrap();
    replies.push(control.call("CLIENT UNPAUSE"));
    if !early {
        let mut raw = Vec::new();
        replies.push(Resp::read(&mut client.reader, &mut raw).unwrap());
    }
    // An ALL pause holds reads too, until its timeout.
    replies.push(control.call("CLIENT PAUSE 200 ALL"));
    replies.push(client.call("GET k"));
    (replies, early)
}

#[test]
fn client_pause_holds_commands_like_redis8() {
    let ours = TestServer::start().expect("echomq's test server starts");
    let mine = pause_script(ours.addr());
    assert!(!mine.1, "a write ran during CLIENT PAUSE WRITE");
    assert_eq!(mine.0.last(), Some(&Resp::Bulk(b"v".to_vec())));
    if let Some(peer) = Peer::start(PeerKind::Redis8) {
        assert_eq!(mine, pause_script(peer.addr()), "echomq, then redis 8.8");
    }
}

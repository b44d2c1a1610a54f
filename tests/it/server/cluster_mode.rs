//! echomq in cluster mode (`cluster-enabled yes`, `TestServer::start_cluster`): a one-node
//! Redis Cluster that owns all 16384 slots.
//!
//! Real cluster clients run stream commands through it unchanged: redis-rs `ClusterClient`
//! (in process), redis-py `RedisCluster` (a script run by the peers' Python) and `redis-cli
//! -c`. The CLUSTER replies, CROSSSLOT refusals and their errors are compared with a one-node
//! Redis 8.8 cluster where they are deterministic; node ids, addresses and ports differ
//! between the two and are replaced before comparing, so the shapes must match exactly.

use std::process::Command;
use std::time::{Duration, Instant};

use echomq::testing::TestServer;
use redis::Value;
use redis::cluster::ClusterClient;
use tempfile::TempDir;

use super::clients::{python, redis_cli, run};
use crate::support::peer::{Launch, Peer, PeerKind};

/// How long a one-node Redis cluster may take to report `cluster_state:ok`.
const CLUSTER_OK_TIMEOUT: Duration = Duration::from_secs(20);

const CROSSSLOT: &str = "-CROSSSLOT Keys in request don't hash to the same slot";

fn connect(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

fn call(con: &mut redis::Connection, argv: &[&str]) -> Value {
    let mut cmd = redis::cmd(argv[0]);
    for arg in &argv[1..] {
        cmd.arg(*arg);
    }
    match cmd.query::<Value>(con) {
        Ok(value) => value,
        Err(e) => Value::SimpleString(format!(
            "-{} {}",
            e.code().unwrap_or("?"),
            e.detail().unwrap_or("")
        )),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::VerbatimString { text, .. } => text.clone(),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Int(n) => n.to_string(),
        other => panic!("not text: {other:?}"),
    }
}

/// `value` with this node's id, addresses and port replaced by placeholders.
fn normalized(value: &Value, id: &str, port: u16) -> Value {
    let ip_like = |s: &str| s.is_empty() || s == "127.0.0.1";
    match value {
        Value::BulkString(bytes) => {
            let s = String::from_utf8_lossy(bytes);
            if s == id {
                Value::BulkString(b"<id>".to_vec())
            } else if ip_like(&s) {
                Value::BulkString(b"<ip>".to_vec())
            } else {
                value.clone()
            }
        }
        Value::Int(n) if *n == i64::from(port) => Value::Int(-1),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| normalized(v, id, port)).collect())
        }
        Value::Map(pairs) => Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (normalized(k, id, port), normalized(v, id, port)))
                .collect(),
        ),
        Value::VerbatimString { format, text } => Value::VerbatimString {
            format: format.clone(),
            text: normalized_nodes(text),
        },
        other => other.clone(),
    }
}

/// CLUSTER NODES's line with the id and `ip:port@bus-port` replaced.
fn normalized_nodes(text: &str) -> String {
    let mut fields: Vec<&str> = text.trim_end().split(' ').collect();
    assert!(fields.len() >= 9, "CLUSTER NODES: {text:?}");
    fields[0] = "<id>";
    fields[1] = "<addr>";
    fields.join(" ")
}

/// A one-node Redis 8.8 cluster owning every slot, or `None` (skipped) without Redis 8.8.
fn redis8_cluster(dir: &TempDir) -> Option<Peer> {
    let nodes = dir.path().join("nodes.conf");
    let launch = Launch {
        args: vec![
            "--cluster-enabled".into(),
            "yes".into(),
            "--cluster-config-file".into(),
            nodes.display().to_string(),
        ],
        nofile: None,
    };
    let mut peer = Peer::start_with(PeerKind::Redis8, &launch)?;
    peer.call(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
    let deadline = Instant::now() + CLUSTER_OK_TIMEOUT;
    loop {
        let info = peer.call(&["CLUSTER", "INFO"]);
        if info.to_string().contains("cluster_state:ok") {
            return Some(peer);
        }
        assert!(Instant::now() < deadline, "no cluster_state:ok: {info}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn cluster_mode_answers_cluster_commands_as_a_node_owning_every_slot() {
    let server = TestServer::start_cluster().unwrap();
    let mut con = connect(&server.url());
    let info = text(&call(&mut con, &["CLUSTER", "INFO"]));
    assert!(info.starts_with("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n"));
    assert!(info.contains("cluster_known_nodes:1\r\ncluster_size:1\r\n"));
    let id = text(&call(&mut con, &["CLUSTER", "MYID"]));
    assert_eq!(id.len(), 40);
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let port = i64::from(server.port());
    let node = Value::Array(vec![
        Value::BulkString(b"127.0.0.1".to_vec()),
        Value::Int(port),
        Value::BulkString(id.clone().into_bytes()),
        Value::Array(vec![]),
    ]);
    assert_eq!(
        call(&mut con, &["CLUSTER", "SLOTS"]),
        Value::Array(vec![Value::Array(vec![
            Value::Int(0),
            Value::Int(16383),
            node
        ])])
    );
    assert_eq!(
        text(&call(&mut con, &["CLUSTER", "NODES"])),
        format!(
            "{id} 127.0.0.1:{port}@{} myself,master - 0 0 0 connected 0-16383\n",
            port + 10_000
        )
    );
    assert_eq!(
        text(&call(&mut con, &["CLUSTER", "KEYSLOT", "foo"])),
        "12182"
    );
    for key in ["{q}:a", "{q}:b", "other"] {
        call(&mut con, &["XADD", key, "*", "f", "v"]);
    }
    let slot = text(&call(&mut con, &["CLUSTER", "KEYSLOT", "q"]));
    assert_eq!(
        text(&call(&mut con, &["CLUSTER", "COUNTKEYSINSLOT", &slot])),
        "2"
    );
    assert_eq!(
        call(&mut con, &["CLUSTER", "GETKEYSINSLOT", &slot, "1"]),
        Value::Array(vec![Value::BulkString(b"{q}:a".to_vec())])
    );
    // Keys across slots are refused; keys sharing a hash tag run.
    for argv in [
        &["DEL", "{q}:a", "other"][..],
        &["XREAD", "STREAMS", "{q}:a", "other", "0", "0"],
        &["RENAME", "{q}:a", "elsewhere"],
    ] {
        assert_eq!(text(&call(&mut con, argv)), CROSSSLOT);
    }
    let read = call(
        &mut con,
        &["XREAD", "COUNT", "5", "STREAMS", "{q}:a", "{q}:b", "0", "0"],
    );
    assert!(
        matches!(&read, Value::Array(streams) if streams.len() == 2),
        "{read:?}"
    );
    assert_eq!(text(&call(&mut con, &["EXISTS", "{q}:a", "{q}:b"])), "2");
    // A transaction across slots is discarded at EXEC.
    assert_eq!(text(&call(&mut con, &["MULTI"])), "OK");
    call(&mut con, &["XLEN", "{q}:a"]);
    call(&mut con, &["XLEN", "other"]);
    assert_eq!(text(&call(&mut con, &["EXEC"])), CROSSSLOT);
    assert_eq!(text(&call(&mut con, &["XLEN", "other"])), "1");
    // One database; READONLY and READWRITE accepted; INFO and CONFIG say cluster.
    assert_eq!(
        text(&call(&mut con, &["SELECT", "1"])),
        "-ERR SELECT is not allowed in cluster mode"
    );
    assert_eq!(text(&call(&mut con, &["SELECT", "0"])), "OK");
    assert_eq!(text(&call(&mut con, &["READONLY"])), "OK");
    assert_eq!(text(&call(&mut con, &["READWRITE"])), "OK");
    let info = text(&call(&mut con, &["INFO", "cluster"]));
    assert_eq!(info, "# Cluster\r\ncluster_enabled:1\r\n");
    assert!(text(&call(&mut con, &["INFO", "server"])).contains("redis_mode:cluster\r\n"));
    assert_eq!(
        call(&mut con, &["CONFIG", "GET", "cluster-enabled"]),
        Value::Array(vec![
            Value::BulkString(b"cluster-enabled".to_vec()),
            Value::BulkString(b"yes".to_vec())
        ])
    );
}

#[test]
fn without_cluster_mode_cluster_commands_are_disabled_and_keys_may_span_slots() {
    let server = TestServer::start().unwrap();
    let mut con = connect(&server.url());
    let disabled = "-ERR This instance has cluster support disabled";
    for argv in [&["CLUSTER", "INFO"][..], &["READONLY"], &["READWRITE"]] {
        assert_eq!(text(&call(&mut con, argv)), disabled);
    }
    assert_eq!(text(&call(&mut con, &["DEL", "foo", "bar"])), "0");
    assert_eq!(text(&call(&mut con, &["SELECT", "1"])), "OK");
    let info = text(&call(&mut con, &["INFO", "cluster"]));
    assert_eq!(info, "# Cluster\r\ncluster_enabled:0\r\n");
}

#[test]
fn redis_rs_cluster_client_runs_streams_through_cluster_mode() {
    let server = TestServer::start_cluster().unwrap();
    let client = ClusterClient::new(vec![server.url()]).unwrap();
    let mut con = client.get_connection().unwrap();
    for (key, n) in [("{orders}:live", 3), ("{orders}:dead", 1)] {
        for i in 0..n {
            let _: String = redis::cmd("XADD")
                .arg(key)
                .arg("*")
                .arg("n")
                .arg(i)
                .query(&mut con)
                .unwrap();
        }
    }
    let len: i64 = redis::cmd("XLEN")
        .arg("{orders}:live")
        .query(&mut con)
        .unwrap();
    assert_eq!(len, 3);
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg("{orders}:live")
        .arg("workers")
        .arg("0")
        .query(&mut con)
        .unwrap();
    let read: Value = redis::cmd("XREADGROUP")
        .arg("GROUP")
        .arg("workers")
        .arg("w1")
        .arg("COUNT")
        .arg(10)
        .arg("STREAMS")
        .arg("{orders}:live")
        .arg(">")
        .query(&mut con)
        .unwrap();
    let ids: Vec<String> = match &read {
        Value::Array(streams) => match &streams[..] {
            [Value::Array(pair)] => match &pair[..] {
                [_, Value::Array(entries)] => entries
                    .iter()
                    .map(|e| match e {
                        Value::Array(parts) => text(&parts[0]),
                        other => panic!("entry {other:?}"),
                    })
                    .collect(),
                other => panic!("stream {other:?}"),
            },
            other => panic!("streams {other:?}"),
        },
        other => panic!("XREADGROUP {other:?}"),
    };
    assert_eq!(ids.len(), 3);
    let acked: i64 = redis::cmd("XACK")
        .arg("{orders}:live")
        .arg("workers")
        .arg(&ids)
        .query(&mut con)
        .unwrap();
    assert_eq!(acked, 3);
    // Both streams in one slot: a multi-key read runs.
    let both: Value = redis::cmd("XREAD")
        .arg("STREAMS")
        .arg("{orders}:live")
        .arg("{orders}:dead")
        .arg("0")
        .arg("0")
        .query(&mut con)
        .unwrap();
    assert!(matches!(&both, Value::Array(s) if s.len() == 2), "{both:?}");
    // Across slots, a command the client does not split is refused by the server.
    let err = redis::cmd("RENAME")
        .arg("{orders}:dead")
        .arg("{other}:x")
        .query::<()>(&mut con)
        .unwrap_err();
    assert!(err.to_string().contains("same slot"), "{err}");
    // A DEL across slots the client splits into one DEL per slot, which the server runs.
    let deleted: i64 = redis::cmd("DEL")
        .arg("{orders}:live")
        .arg("{other}:x")
        .query(&mut con)
        .unwrap();
    assert_eq!(deleted, 1);
}

#[test]
fn redis_py_redis_cluster_runs_streams_through_cluster_mode() {
    let Some(python) = python() else { return };
    let server = TestServer::start_cluster().unwrap();
    let script = r#"
import sys
from redis.cluster import RedisCluster
from redis.exceptions import ResponseError
rc = RedisCluster(host="127.0.0.1", port=int(sys.argv[1]), decode_responses=True)
assert len(rc.get_nodes()) == 1, rc.get_nodes()
ids = [rc.xadd("{feed}:events", {"n": str(i)}) for i in range(3)]
assert rc.xlen("{feed}:events") == 3
rc.xgroup_create("{feed}:events", "g", id="0")
got = rc.xreadgroup("g", "c", {"{feed}:events": ">"}, count=10)
assert [e[0] for e in got[0][1]] == ids, got
assert rc.xack("{feed}:events", "g", *ids) == 3
assert rc.keyslot("{feed}:events") == rc.execute_command("CLUSTER KEYSLOT", "feed")
p = rc.pipeline()
p.xadd("{feed}:other", {"k": "v"})
p.xlen("{feed}:other")
assert p.execute()[1] == 1
try:
    # RedisCluster refuses keys across slots itself; the node's own connection reaches the server.
    rc.get_default_node().redis_connection.execute_command("DEL", "{feed}:events", "x")
    raise SystemExit("DEL across slots was not refused")
except ResponseError as e:
    assert "same slot" in str(e), e
print("ok")
"#;
    let output = run(
        Command::new(&python)
            .arg("-c")
            .arg(script)
            .arg(server.port().to_string()),
        b"",
    );
    assert!(
        output.status.success() && output.stdout.starts_with(b"ok"),
        "{}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn redis_cli_in_cluster_mode_runs_streams() {
    let Some(cli) = redis_cli() else { return };
    let server = TestServer::start_cluster().unwrap();
    let port = server.port().to_string();
    let cli = |args: &[&str]| {
        let output = run(
            Command::new(&cli)
                .args(["-c", "-h", "127.0.0.1", "-p", &port])
                .args(args),
            b"",
        );
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(cli(&["XADD", "{cli}:s", "1-1", "f", "v"]), "1-1\n");
    assert_eq!(cli(&["XADD", "{cli}:s", "2-1", "f", "w"]), "2-1\n");
    assert_eq!(cli(&["XLEN", "{cli}:s"]), "2\n");
    assert_eq!(
        cli(&["XRANGE", "{cli}:s", "-", "+", "COUNT", "1"]),
        "1-1\nf\nv\n"
    );
    assert_eq!(
        cli(&["CLUSTER", "KEYSLOT", "{cli}:s"]),
        cli(&["CLUSTER", "KEYSLOT", "cli"])
    );
    assert_eq!(cli(&["CLUSTER", "COUNTKEYSINSLOT", "5061"]), "0\n");
    assert!(cli(&["DEL", "{cli}:s", "x"]).contains("CROSSSLOT"));
    assert!(cli(&["CLUSTER", "INFO"]).starts_with("cluster_state:ok"));
}

/// Requests whose replies are deterministic on both servers, in order (keys written first).
const DIFFERENTIAL: &[&[&str]] = &[
    &["CLUSTER", "KEYSLOT", "foo"],
    &["CLUSTER", "KEYSLOT", "{user1}.following"],
    &["CLUSTER", "KEYSLOT", "foo{}{bar}"],
    &["CLUSTER", "KEYSLOT", "foo{{bar}}zap"],
    &["CLUSTER", "KEYSLOT", ""],
    &["CLUSTER", "KEYSLOT"],
    &["CLUSTER", "COUNTKEYSINSLOT", "12182"],
    &["CLUSTER", "COUNTKEYSINSLOT", "16384"],
    &["CLUSTER", "COUNTKEYSINSLOT", "-1"],
    &["CLUSTER", "COUNTKEYSINSLOT", "x"],
    &["CLUSTER", "GETKEYSINSLOT", "12182", "0"],
    &["CLUSTER", "GETKEYSINSLOT", "12182", "-1"],
    &["CLUSTER", "GETKEYSINSLOT", "16384", "1"],
    &["CLUSTER", "GETKEYSINSLOT", "1", "x"],
    &["CLUSTER", "FROB"],
    &["CLUSTER", "MYID", "extra"],
    &["DEL", "foo", "bar"],
    &["EXISTS", "foo", "{foo}x"],
    &["XREAD", "STREAMS", "foo", "bar", "0", "0"],
    &[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "STREAMS",
        "foo",
        "bar",
        ">",
        ">",
    ],
    &["RENAME", "foo", "bar"],
    &["SELECT", "1"],
    &["SELECT", "0"],
    &["READONLY"],
    &["READWRITE"],
    &["READONLY", "extra"],
    &[
        "COMMAND",
        "GETKEYS",
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "STREAMS",
        "a",
        "b",
        ">",
        ">",
    ],
    &[
        "COMMAND", "GETKEYS", "XREAD", "COUNT", "2", "STREAMS", "{a}1", "0",
    ],
    &["COMMAND", "GETKEYS", "DEL", "a", "b"],
    &["COMMAND", "GETKEYS", "PING"],
    &["COMMAND", "GETKEYS", "NOSUCH", "a"],
    &["MOVE", "foo", "1"],
    &["SWAPDB", "0", "1"],
    &["COPY", "foo", "{foo}z", "DB", "1"],
    &["COPY", "foo", "{foo}z"],
    &["COPY", "foo", "bar"],
    &["CONFIG", "GET", "cluster-enabled"],
    &["CONFIG", "SET", "cluster-enabled", "no"],
    // Lists: LMPOP's and SORT's keys (movable), SORT's BY and GET patterns.
    &["RPUSH", "{l}a", "3", "1", "2"],
    &["RPUSH", "{l}b", "x"],
    &["LMPOP", "2", "{l}a", "{l}b", "LEFT"],
    &["LMPOP", "2", "{l}a", "other", "LEFT"],
    &["BLMPOP", "0", "2", "{l}a", "other", "LEFT"],
    &["SORT", "{l}a"],
    &["SORT", "{l}a", "STORE", "{l}dst"],
    &["SORT", "{l}a", "STORE", "dst"],
    &["SORT", "{l}a", "BY", "w*"],
    &["SORT", "{l}a", "BY", "{l}w*"],
    &["SORT", "{l}a", "BY", "nosort"],
    &["SORT", "{l}a", "GET", "#", "GET", "{l}w*"],
    &["SORT", "{l}a", "GET", "w*"],
    &["SORT", "{l}a", "LIMIT", "x", "1", "BY", "w*"],
    &["SORT", "{l}a", "BY", "w*", "LIMIT", "x", "1"],
    &["SORT_RO", "{l}a", "GET", "{x}*"],
    &["COMMAND", "GETKEYS", "LMPOP", "2", "{l}a", "{l}b", "LEFT"],
    &[
        "COMMAND", "GETKEYS", "SORT", "{l}a", "LIMIT", "0", "1", "STORE", "{l}d",
    ],
];

#[test]
fn cluster_replies_match_a_one_node_redis8_cluster() {
    let dir = TempDir::new().unwrap();
    let Some(peer) = redis8_cluster(&dir) else {
        return;
    };
    let server = TestServer::start_cluster().unwrap();
    let mut ours = connect(&server.url());
    let mut theirs = connect(&format!("redis://{}/", peer.addr()));
    let our_id = text(&call(&mut ours, &["CLUSTER", "MYID"]));
    let their_id = text(&call(&mut theirs, &["CLUSTER", "MYID"]));
    let (our_port, their_port) = (server.port(), peer.addr().port());
    // The topology replies, before any write (Redis's replication offset stays 0).
    for argv in [&["CLUSTER", "SLOTS"][..], &["CLUSTER", "SHARDS"]] {
        assert_eq!(
            normalized(&call(&mut ours, argv), &our_id, our_port),
            normalized(&call(&mut theirs, argv), &their_id, their_port),
            "{argv:?}"
        );
    }
    // The same in RESP3: maps and verbatim strings.
    let mut ours3 = connect(&format!("{}?protocol=resp3", server.url()));
    let mut theirs3 = connect(&format!("redis://{}/?protocol=resp3", peer.addr()));
    let shards = call(&mut ours3, &["CLUSTER", "SHARDS"]);
    assert!(
        matches!(&shards, Value::Array(s) if matches!(s[..], [Value::Map(_)])),
        "RESP3 CLUSTER SHARDS is an array of maps: {shards:?}"
    );
    for argv in [
        &["CLUSTER", "SLOTS"][..],
        &["CLUSTER", "SHARDS"],
        &["CLUSTER", "NODES"],
    ] {
        assert_eq!(
            normalized(&call(&mut ours3, argv), &our_id, our_port),
            normalized(&call(&mut theirs3, argv), &their_id, their_port),
            "RESP3 {argv:?}"
        );
    }
    assert_eq!(
        normalized_nodes(&text(&call(&mut ours, &["CLUSTER", "NODES"]))),
        normalized_nodes(&text(&call(&mut theirs, &["CLUSTER", "NODES"]))),
    );
    // Every CLUSTER INFO line echomq writes, Redis writes with the same value.
    let their_info = text(&call(&mut theirs, &["CLUSTER", "INFO"]));
    for line in text(&call(&mut ours, &["CLUSTER", "INFO"])).split_terminator("\r\n") {
        assert!(
            their_info.contains(&format!("{line}\r\n")),
            "{line} not in {their_info}"
        );
    }
    for con in [&mut ours, &mut theirs] {
        for key in ["foo", "{foo}x", "{foo}y", "bar"] {
            call(con, &["XADD", key, "1-1", "f", "v"]);
        }
    }
    let sorted_keys =
        |con: &mut redis::Connection| match call(con, &["CLUSTER", "GETKEYSINSLOT", "12182", "10"])
        {
            Value::Array(mut keys) => {
                keys.sort_by_key(text);
                keys
            }
            other => panic!("GETKEYSINSLOT {other:?}"),
        };
    assert_eq!(sorted_keys(&mut ours), sorted_keys(&mut theirs));
    for argv in DIFFERENTIAL {
        assert_eq!(call(&mut ours, argv), call(&mut theirs, argv), "{argv:?}");
    }
    // A transaction across slots: both queue, then refuse EXEC and discard.
    for argv in [
        &["MULTI"][..],
        &["XLEN", "foo"],
        &["XLEN", "bar"],
        &["EXEC"],
        &["MULTI"],
        &["DEL", "foo", "bar"],
        &["EXEC"],
        &["XLEN", "bar"],
    ] {
        assert_eq!(call(&mut ours, argv), call(&mut theirs, argv), "{argv:?}");
    }
}

#[test]
fn echomq_serve_takes_cluster_enabled_from_its_option_and_its_config_file() {
    use crate::support::process::{echomq, serve};
    let (_running, addr) = serve(echomq(), &["--cluster-enabled", "yes"]);
    let mut con = connect(&format!("redis://{addr}/"));
    assert!(text(&call(&mut con, &["CLUSTER", "INFO"])).starts_with("cluster_state:ok"));
    let dir = TempDir::new().unwrap();
    let config = dir.path().join("echomq.conf");
    std::fs::write(&config, "# cluster mode\ncluster-enabled yes\n").unwrap();
    let config = config.display().to_string();
    let (_running, addr) = serve(echomq(), &["--config", &config]);
    let mut con = connect(&format!("redis://{addr}/"));
    assert_eq!(
        text(&call(&mut con, &["INFO", "cluster"])),
        "# Cluster\r\ncluster_enabled:1\r\n"
    );
}

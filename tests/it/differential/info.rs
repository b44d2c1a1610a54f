//! INFO against Redis 8.8: after the same commands on both servers, every form of INFO
//! (`INFO`, `all`, `everything`, `default`, each section by name, several names at once, in
//! any case and order) must show the same section headers in the same order, and in each
//! section the same field names in the same order. Values differ by design (process ids,
//! memory, times); the deterministic ones are compared too ([`SAME_VALUES`], the keyspace and
//! keysizes lines, the calls counted per command, the errors counted per code).
//!
//! Known differences, kept out of the comparison:
//! - `echomq_version` (server section): echomq's own field, after `redis_version`.
//! - the Modules section: Redis 8.8 loads its `vectorset` module (a `module:` line); echomq
//!   has no modules.
//! - the order of the per-command lines of Commandstats and Latencystats: Redis writes them
//!   in its command table's hash order (echomq: by name), so they are compared sorted.
//! - echomq's extension section (`# Archive`), shown by `everything`, `modules` and by name,
//!   where Redis would show its modules' sections (it has none with INFO fields).

use std::io::BufReader;
use std::net::TcpStream;

use echomq::testing::TestServer;

use crate::support::peer::{Peer, PeerKind};
use crate::support::resp::{Resp, write_command};

/// Fields only echomq has.
const OURS_ONLY: &[&str] = &["echomq_version"];
/// Fields whose values are the same on both servers for the same commands.
const SAME_VALUES: &[&str] = &[
    "redis_mode",
    "arch_bits",
    "process_supervised",
    "hz",
    "configured_hz",
    "config_file",
    "io_threads_active",
    "cluster_connections",
    "maxclients",
    "blocked_clients",
    "tracking_clients",
    "pubsub_clients",
    "watching_clients",
    "clients_in_timeout_table",
    "total_watched_keys",
    "total_blocking_keys",
    "total_blocking_keys_on_nokey",
    "maxmemory",
    "maxmemory_human",
    "maxmemory_policy",
    "loading",
    "async_loading",
    "rdb_bgsave_in_progress",
    "rdb_last_bgsave_status",
    "rdb_last_bgsave_time_sec",
    "rdb_current_bgsave_time_sec",
    "aof_enabled",
    "aof_rewrite_in_progress",
    "aof_last_rewrite_time_sec",
    "aof_last_bgrewrite_status",
    "aof_last_write_status",
    "rejected_connections",
    "sync_full",
    "expired_keys",
    "evicted_keys",
    "pubsub_channels",
    "total_error_replies",
    "role",
    "connected_slaves",
    "master_failover_state",
    "master_replid2",
    "master_repl_offset",
    "second_repl_offset",
    "repl_backlog_active",
    "repl_backlog_size",
    "repl_backlog_first_byte_offset",
    "repl_backlog_histlen",
    "cluster_enabled",
];

/// A section: its header and its `(name, value)` fields in order.
type Section = (String, Vec<(String, String)>);

fn parse(text: &str) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    for line in text.split("\r\n").filter(|l| !l.is_empty()) {
        if let Some(title) = line.strip_prefix("# ") {
            sections.push((title.to_string(), Vec::new()));
        } else if let Some((name, value)) = line.split_once(':') {
            let section = sections.last_mut().expect("a field before any header");
            section.1.push((name.to_string(), value.to_string()));
        } else {
            panic!("not an INFO line: {line:?}");
        }
    }
    sections
}

/// One plain connection.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(addr: std::net::SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).unwrap();
        Conn {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    fn call(&mut self, argv: &[&str]) -> Resp {
        write_command(&mut self.writer, argv).unwrap();
        Resp::read(&mut self.reader, &mut Vec::new()).unwrap()
    }

    fn info(&mut self, args: &[&str]) -> String {
        let mut argv = vec!["INFO"];
        argv.extend_from_slice(args);
        match self.call(&argv) {
            Resp::Bulk(text) | Resp::Verbatim(text) => String::from_utf8(text).unwrap(),
            other => panic!("INFO answered {other}"),
        }
    }
}

/// The same commands on both: keys of both kinds with and without TTL, a failing command,
/// a rejected one, a container's subcommand.
const SETUP: &[&[&str]] = &[
    &["FLUSHALL"],
    &["CONFIG", "RESETSTAT"],
    &["SET", "a", "b", "EX", "1000"],
    &["SET", "longer", "0123456789abcdef0123"],
    &["SET", "c", "d"],
    &["XADD", "s", "1-1", "f", "v"],
    &["EXPIRE", "s", "5000"],
    &["XGROUP", "CREATE", "s", "g", "$"],
    &["GET", "nokey"],
    &["XADD", "s"],
    &["XADD", "s", "0-0", "f", "v"],
    &["GET", "s"],
];

/// The INFO forms compared.
const FORMS: &[&[&str]] = &[
    &[],
    &["all"],
    &["everything"],
    &["default"],
    &["server"],
    &["clients"],
    &["memory"],
    &["persistence"],
    &["threads"],
    &["stats"],
    &["replication"],
    &["cpu"],
    &["hotkeys"],
    &["commandstats"],
    &["errorstats"],
    &["latencystats"],
    &["cluster"],
    &["keyspace"],
    &["keysizes"],
    &["KEYSPACE", "Server", "nosuch"],
    &["default", "commandstats"],
    &["cluster", "replication", "clients"],
    &["nosuch"],
];

/// Drops what only one side has by design (see the module doc).
fn comparable(mut sections: Vec<Section>) -> Vec<Section> {
    sections.retain(|(title, _)| title != "Archive");
    for (title, fields) in &mut sections {
        fields.retain(|(name, _)| !OURS_ONLY.contains(&name.as_str()));
        if title == "Modules" {
            fields.clear();
        }
        // Redis lists commands in its command table's hash order: no order to match.
        if title == "Commandstats" || title == "Latencystats" {
            fields.sort();
        }
    }
    sections
}

fn shape(sections: &[Section]) -> Vec<(String, Vec<String>)> {
    sections
        .iter()
        .map(|(title, fields)| {
            let names = fields.iter().map(|(n, _)| n.clone()).collect();
            (title.clone(), names)
        })
        .collect()
}

/// The parts of a value both servers agree on: whole values for [`SAME_VALUES`], the
/// deterministic parts of per-key, per-command and per-error lines.
fn deterministic(name: &str, value: &str) -> Option<String> {
    if SAME_VALUES.contains(&name) {
        return Some(value.to_string());
    }
    if (name.starts_with("db") && name.contains("_distrib_")) || name.starts_with("errorstat_") {
        return Some(value.to_string());
    }
    let keep = |value: &str, parts: &[&str]| {
        value
            .split(',')
            .filter(|kv| parts.iter().any(|p| kv.starts_with(p)))
            .collect::<Vec<_>>()
            .join(",")
    };
    if name.starts_with("db") {
        return Some(keep(value, &["keys=", "expires=", "subexpiry="]));
    }
    if name.starts_with("cmdstat_") {
        return Some(keep(value, &["calls=", "rejected_calls=", "failed_calls="]));
    }
    None
}

fn values(sections: &[Section]) -> Vec<(String, String)> {
    sections
        .iter()
        .flat_map(|(_, fields)| fields.iter())
        .filter(|(name, _)| !name.starts_with("cmdstat_info") && name != "total_error_replies")
        .filter_map(|(name, value)| Some((name.clone(), deterministic(name, value)?)))
        .collect()
}

#[test]
fn info_sections_fields_and_order_match_redis_8() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut theirs = Conn::open(peer.addr());
    let mut mine = Conn::open(ours.addr());
    for argv in SETUP {
        let (a, b) = (theirs.call(argv), mine.call(argv));
        assert_eq!(a, b, "setup step {argv:?}");
    }
    let mut failures = Vec::new();
    for form in FORMS {
        let a = comparable(parse(&theirs.info(form)));
        let b = comparable(parse(&mine.info(form)));
        if shape(&a) != shape(&b) {
            failures.push(format!(
                "INFO {form:?}: sections and fields differ\n  redis 8.8: {:?}\n  echomq:    {:?}",
                shape(&a),
                shape(&b)
            ));
            continue;
        }
        let (va, vb) = (values(&a), values(&b));
        for ((name, x), (_, y)) in va.iter().zip(&vb) {
            if x != y {
                failures.push(format!(
                    "INFO {form:?}: {name} is {x:?} on redis 8.8, {y:?} on echomq"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn info_values_echomq_reports_of_itself() {
    let server = TestServer::start().unwrap();
    let mut c = Conn::open(server.addr());
    for argv in SETUP {
        c.call(argv);
    }
    let sections = parse(&c.info(&["everything"]));
    let field = |name: &str| {
        sections
            .iter()
            .flat_map(|(_, f)| f.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {name}"))
    };
    assert_eq!(field("redis_version"), "8.8.0");
    assert_eq!(field("tcp_port"), server.port().to_string());
    assert_eq!(field("run_id").len(), 40);
    assert_eq!(field("master_replid").len(), 40);
    assert_ne!(field("run_id"), field("master_replid"));
    assert_eq!(field("db0"), "keys=4,expires=2,avg_ttl=0,subexpiry=0");
    assert_eq!(field("db0_distrib_strings_sizes"), "1=2,16=1");
    assert_eq!(field("errorstat_ERR"), "count=2");
    assert_eq!(field("errorstat_WRONGTYPE"), "count=1");
    assert!(field("cmdstat_xgroup|create").starts_with("calls=1,"));
    assert!(field("cmdstat_xadd").ends_with("rejected_calls=1,failed_calls=1"));
    assert!(field("latency_percentiles_usec_set").starts_with("p50="));
    assert!(field("used_cpu_user").contains('.'));
    assert!(field("listener0").ends_with(&format!("port={}", server.port())));
    assert_eq!(field("archive_enabled"), "0");
    // Section names are found in any case; an unknown one adds nothing.
    assert_eq!(parse(&c.info(&["nosuch"])).len(), 0);
    assert_eq!(parse(&c.info(&["CLUSTER"])).len(), 1);
}

#[test]
fn hello_reports_role_and_mode_as_redis_8_does() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().unwrap();
    let pick = |reply: Resp| -> Vec<(String, Resp)> {
        let Resp::Map(pairs) = reply else {
            panic!("HELLO 3 answered {reply}")
        };
        pairs
            .into_iter()
            .filter_map(|(k, v)| {
                let k = k.as_text()?.to_string();
                matches!(k.as_str(), "server" | "proto" | "mode" | "role").then_some((k, v))
            })
            .collect()
    };
    let theirs = pick(Conn::open(peer.addr()).call(&["HELLO", "3"]));
    let mine = pick(Conn::open(ours.addr()).call(&["HELLO", "3"]));
    assert_eq!(theirs, mine);
}

//! Real clients against the server: redis-cli (one command per process, and `--pipe`),
//! redis-py (a script run by the peers' Python, RESP2 and RESP3) and redis-rs (in process,
//! RESP2 and RESP3).
//!
//! redis-cli and Python are external programs: a missing one skips its test with a printed
//! notice, except under `CI=true`, where it fails. Lookup, first hit wins: the environment
//! variable `scripts/install-peers` writes (`ECHOMQ_REDIS_CLI`, `ECHOMQ_PYTHON`), then `PATH`
//! (redis-cli only: a system Python may lack redis-py), then
//! `${ECHOMQ_PEERS:-~/.cache/echomq/peers}`.

use std::env;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use echomq::testing::TestServer;
use redis::Value;

use super::{Wire, wait_blocked_clients};

/// A client program slower than this hung.
const PROGRAM_TIMEOUT: Duration = Duration::from_secs(30);

/// Finds a client program, or skips (fails under `CI=true`) with a notice.
fn find_program(
    what: &str,
    env_var: &str,
    on_path: Option<&str>,
    under_peers: &str,
) -> Option<PathBuf> {
    let from_env = env::var_os(env_var)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let from_path = || {
        let name = on_path?;
        env::split_paths(&env::var_os("PATH")?)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    };
    let from_peers = || {
        let peers = env::var_os("ECHOMQ_PEERS")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cache/echomq/peers")))?;
        Some(peers.join(under_peers)).filter(|p| p.is_file())
    };
    let found = match from_env {
        Some(path) => path.is_file().then_some(path),
        None => from_path().or_else(from_peers),
    };
    if found.is_none() {
        let why = format!("{what} not found (set {env_var} or run scripts/install-peers)");
        if env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true requires it: {why}");
        }
        eprintln!("SKIPPED: {why}");
    }
    found
}

pub(super) fn redis_cli() -> Option<PathBuf> {
    find_program(
        "redis-cli",
        "ECHOMQ_REDIS_CLI",
        Some("redis-cli"),
        "bin/redis-cli",
    )
}

pub(super) fn python() -> Option<PathBuf> {
    find_program(
        "the peers' Python (with redis-py)",
        "ECHOMQ_PYTHON",
        None,
        "venv/bin/python",
    )
}

/// Runs `command` with `stdin`, killing it after [`PROGRAM_TIMEOUT`].
pub(super) fn run(command: &mut Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {command:?}: {e}"));
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeder = thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let drain = |mut out: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + PROGRAM_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {PROGRAM_TIMEOUT:?}");
        }
        thread::sleep(Duration::from_millis(5));
    };
    feeder.join().unwrap();
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// `redis-cli -p PORT args...`: its standard output (raw mode, as when piped).
fn cli(program: &Path, server: &TestServer, args: &[&str]) -> String {
    let output = run(
        Command::new(program)
            .args(["-h", "127.0.0.1", "-p", &server.port().to_string()])
            .args(args),
        b"",
    );
    assert!(
        output.status.success(),
        "redis-cli {args:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn redis_cli_drives_the_stream_commands() {
    let Some(program) = redis_cli() else { return };
    let server = TestServer::start().unwrap();
    let cli = |args: &[&str]| cli(&program, &server, args);
    assert_eq!(cli(&["XADD", "s", "1-1", "f", "v"]), "1-1\n");
    assert_eq!(cli(&["XADD", "s", "2-1", "f", "w", "g", "x"]), "2-1\n");
    assert_eq!(
        cli(&["XRANGE", "s", "-", "+"]),
        "1-1\nf\nv\n2-1\nf\nw\ng\nx\n"
    );
    assert_eq!(
        cli(&["--no-raw", "XRANGE", "s", "-", "+"]),
        "1) 1) \"1-1\"\n   2) 1) \"f\"\n      2) \"v\"\n\
         2) 1) \"2-1\"\n   2) 1) \"f\"\n      2) \"w\"\n      3) \"g\"\n      4) \"x\"\n"
    );
    assert_eq!(cli(&["XGROUP", "CREATE", "s", "g", "0"]), "OK\n");
    assert_eq!(
        cli(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">"
        ]),
        "s\n1-1\nf\nv\n"
    );
    assert_eq!(cli(&["XACK", "s", "g", "1-1"]), "1\n");
    assert_eq!(
        cli(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]),
        "s\n2-1\nf\nw\ng\nx\n"
    );
    // The next cursor, the claimed entries, then the (empty) list of deleted ids.
    assert_eq!(
        cli(&["XAUTOCLAIM", "s", "g", "bob", "0", "0-0"]),
        "0-0\n2-1\nf\nw\ng\nx\n\n"
    );
    assert_eq!(
        cli(&["--no-raw", "XPENDING", "s", "g"]),
        "1) (integer) 1\n2) \"2-1\"\n3) \"2-1\"\n4) 1) 1) \"bob\"\n      2) \"1\"\n"
    );
    let info = "length\n2\nradix-tree-keys\n1\nradix-tree-nodes\n2\n\
        last-generated-id\n2-1\nmax-deleted-entry-id\n0-0\nentries-added\n2\n\
        recorded-first-entry-id\n1-1\nidmp-duration\n100\nidmp-maxsize\n100\n\
        pids-tracked\n0\niids-tracked\n0\niids-added\n0\niids-duplicates\n0\ngroups\n1\n\
        first-entry\n1-1\nf\nv\nlast-entry\n2-1\nf\nw\ng\nx\n";
    assert_eq!(cli(&["XINFO", "STREAM", "s"]), info);
    // RESP3 (redis-cli -3 sends HELLO 3): the map is shown as key-value lines.
    assert_eq!(
        cli(&["-3", "XINFO", "STREAM", "s"]),
        "length 2\nradix-tree-keys 1\nradix-tree-nodes 2\nlast-generated-id 2-1\n\
         max-deleted-entry-id 0-0\nentries-added 2\nrecorded-first-entry-id 1-1\n\
         idmp-duration 100\nidmp-maxsize 100\npids-tracked 0\niids-tracked 0\n\
         iids-added 0\niids-duplicates 0\ngroups 1\n\
         first-entry 1-1\nf\nv\nlast-entry 2-1\nf\nw\ng\nx\n"
    );
    assert_eq!(
        cli(&["XADD", "s", "1-1", "a", "b"]),
        "ERR The ID specified in XADD is equal or smaller than the target stream top item\n\n"
    );
}

#[test]
fn redis_cli_pipe_mode_loads_ten_thousand_xadds() {
    let Some(program) = redis_cli() else { return };
    let server = TestServer::start().unwrap();
    const N: usize = 10_000;
    let mut input = Vec::new();
    for i in 1..=N {
        let id = format!("{i}-1");
        let n = i.to_string();
        let args = ["XADD", "p", &id, "n", &n];
        input.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for arg in args {
            input.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
        }
    }
    let output = run(
        Command::new(&program)
            .args(["-h", "127.0.0.1", "-p", &server.port().to_string()])
            .arg("--pipe"),
        &input,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "redis-cli --pipe: {stdout}");
    assert!(
        stdout.ends_with("errors: 0, replies: 10000\n"),
        "redis-cli --pipe: {stdout}"
    );
    let cli = |args: &[&str]| cli(&program, &server, args);
    assert_eq!(cli(&["XLEN", "p"]), "10000\n");
    assert_eq!(
        cli(&["XREVRANGE", "p", "+", "-", "COUNT", "1"]),
        "10000-1\nn\n10000\n"
    );
    assert_eq!(cli(&["XRANGE", "p", "-", "+", "COUNT", "1"]), "1-1\nn\n1\n");
}

/// Runs one of this folder's redis-py scripts against a fresh server; fails with its output.
fn run_redis_py(script: &str) {
    let Some(python) = python() else { return };
    let server = TestServer::start().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/it/server")
        .join(script);
    let output = run(
        Command::new(&python)
            .arg(&script)
            .arg(server.port().to_string()),
        b"",
    );
    assert!(
        output.status.success(),
        "{} {}: {}\nstdout:\n{}\nstderr:\n{}",
        python.display(),
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn redis_py_drives_streams_and_pipelines_in_resp2_and_resp3() {
    run_redis_py("redis_py_client.py");
}

#[test]
fn redis_py_reads_info_as_its_test_harness_does() {
    run_redis_py("redis_py_info.py");
}

// --- redis-rs ---------------------------------------------------------------------------

fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).unwrap(),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Int(n) => n.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        other => panic!("not an array: {other:?}"),
    }
}

/// A stream entry: its id and `[field, value, ...]`.
type Entry = (String, Vec<String>);

/// Entries as `(id, [field, value, ...])`.
fn entries(value: &Value) -> Vec<Entry> {
    items(value)
        .iter()
        .map(|entry| match items(entry) {
            [id, fields] => (text(id), items(fields).iter().map(text).collect()),
            other => panic!("not an entry: {other:?}"),
        })
        .collect()
}

/// An XREAD/XREADGROUP reply as `(key, entries)`: pairs in RESP2, a map in RESP3.
fn streams(value: &Value, resp3: bool) -> Vec<(String, Vec<Entry>)> {
    match value {
        Value::Map(pairs) => {
            assert!(resp3, "a map in RESP2: {value:?}");
            pairs.iter().map(|(k, v)| (text(k), entries(v))).collect()
        }
        Value::Array(pairs) => {
            assert!(!resp3, "pairs in RESP3: {value:?}");
            pairs
                .iter()
                .map(|pair| match items(pair) {
                    [k, v] => (text(k), entries(v)),
                    other => panic!("not a pair: {other:?}"),
                })
                .collect()
        }
        Value::Nil => Vec::new(),
        other => panic!("not an XREAD reply: {other:?}"),
    }
}

/// An XINFO reply as name/value pairs: a flat array in RESP2, a map in RESP3.
fn fields(value: &Value, resp3: bool) -> Vec<(String, Value)> {
    match value {
        Value::Map(pairs) => {
            assert!(resp3, "a map in RESP2: {value:?}");
            pairs.iter().map(|(k, v)| (text(k), v.clone())).collect()
        }
        Value::Array(flat) => {
            assert!(!resp3, "a flat array in RESP3: {value:?}");
            flat.chunks(2)
                .map(|kv| (text(&kv[0]), kv[1].clone()))
                .collect()
        }
        other => panic!("not an XINFO reply: {other:?}"),
    }
}

fn entry(id: &str, kv: &[&str]) -> Entry {
    (id.into(), kv.iter().map(|s| s.to_string()).collect())
}

fn redis_rs_session(server: &TestServer, resp3: bool) {
    let url = if resp3 {
        format!("{}?protocol=resp3", server.url())
    } else {
        server.url()
    };
    let client = redis::Client::open(url).unwrap();
    let mut con = client.get_connection().unwrap();
    con.set_read_timeout(Some(super::REPLY_TIMEOUT)).unwrap();
    let k = if resp3 { "rs3:s" } else { "rs2:s" };
    let mut query = |args: &[&str]| -> Value {
        let mut cmd = redis::cmd(args[0]);
        for arg in &args[1..] {
            cmd.arg(*arg);
        }
        cmd.query(&mut con)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    assert_eq!(text(&query(&["XADD", k, "1-1", "f", "v"])), "1-1");
    assert_eq!(text(&query(&["XADD", k, "2-1", "f", "w", "g", "x"])), "2-1");
    assert_eq!(
        query(&["XADD", "rs:none", "NOMKSTREAM", "*", "f", "v"]),
        Value::Nil
    );
    let all = vec![
        entry("1-1", &["f", "v"]),
        entry("2-1", &["f", "w", "g", "x"]),
    ];
    assert_eq!(entries(&query(&["XRANGE", k, "-", "+"])), all);
    assert_eq!(query(&["XRANGE", k, "-", "+", "COUNT", "0"]), Value::Nil);

    assert_eq!(text(&query(&["XGROUP", "CREATE", k, "g", "0"])), "OK");
    let read = query(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", k, ">"]);
    assert_eq!(streams(&read, resp3), vec![(k.to_string(), all.clone())]);
    let none = query(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", k, ">"]);
    assert_eq!(none, Value::Nil);
    assert_eq!(query(&["XACK", k, "g", "1-1"]), Value::Int(1));

    // XAUTOCLAIM: [cursor, entries, deleted ids].
    let claimed = query(&["XAUTOCLAIM", k, "g", "bob", "0", "0-0"]);
    match items(&claimed) {
        [cursor, claimed, deleted] => {
            assert_eq!(text(cursor), "0-0");
            assert_eq!(entries(claimed), vec![all[1].clone()]);
            assert!(items(deleted).is_empty());
        }
        other => panic!("XAUTOCLAIM gave {other:?}"),
    }

    let info = fields(&query(&["XINFO", "STREAM", k]), resp3);
    let names: Vec<&str> = info.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "length",
            "radix-tree-keys",
            "radix-tree-nodes",
            "last-generated-id",
            "max-deleted-entry-id",
            "entries-added",
            "recorded-first-entry-id",
            "idmp-duration",
            "idmp-maxsize",
            "pids-tracked",
            "iids-tracked",
            "iids-added",
            "iids-duplicates",
            "groups",
            "first-entry",
            "last-entry"
        ]
    );
    assert_eq!(info[0].1, Value::Int(2));
    assert_eq!(text(&info[3].1), "2-1");
    let groups = query(&["XINFO", "GROUPS", k]);
    let group = fields(&items(&groups)[0], resp3);
    assert_eq!(text(&group[0].1), "g");
    assert_eq!(group[2], ("pending".to_string(), Value::Int(1)));
    let consumers = query(&["XINFO", "CONSUMERS", k, "g"]);
    let names: Vec<String> = items(&consumers)
        .iter()
        .map(|c| text(&fields(c, resp3)[0].1))
        .collect();
    assert_eq!(names, ["alice", "bob"]);

    // Pipelines, plain and atomic (MULTI/EXEC).
    let (id, len, range): (String, i64, Value) = redis::pipe()
        .cmd("XADD")
        .arg(k)
        .arg("3-1")
        .arg("n")
        .arg("1")
        .cmd("XLEN")
        .arg(k)
        .cmd("XRANGE")
        .arg(k)
        .arg("3")
        .arg("+")
        .query(&mut con)
        .unwrap();
    assert_eq!((id.as_str(), len), ("3-1", 3));
    assert_eq!(entries(&range), vec![entry("3-1", &["n", "1"])]);
    let (deleted, len): (i64, i64) = redis::pipe()
        .atomic()
        .cmd("XDEL")
        .arg(k)
        .arg("3-1")
        .cmd("XLEN")
        .arg(k)
        .query(&mut con)
        .unwrap();
    assert_eq!((deleted, len), (1, 2));
    let error = redis::cmd("XADD")
        .arg(k)
        .arg("1-1")
        .arg("f")
        .arg("v")
        .query::<Value>(&mut con)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("equal or smaller than the target stream top item"),
        "{error}"
    );
}

#[test]
fn redis_rs_drives_streams_and_pipelines_in_resp2_and_resp3() {
    let server = TestServer::start().unwrap();
    redis_rs_session(&server, false);
    redis_rs_session(&server, true);
}

#[test]
fn redis_rs_blocking_xreadgroup_is_woken_by_another_client() {
    let server = TestServer::start().unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let mut writer = client.get_connection().unwrap();
    redis::cmd("XGROUP")
        .arg("CREATE")
        .arg("s")
        .arg("g")
        .arg("$")
        .arg("MKSTREAM")
        .query::<()>(&mut writer)
        .unwrap();
    let mut reader = client.get_connection().unwrap();
    reader.set_read_timeout(Some(super::REPLY_TIMEOUT)).unwrap();
    let blocked = thread::spawn(move || {
        redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("g")
            .arg("c")
            .arg("BLOCK")
            .arg(0)
            .arg("STREAMS")
            .arg("s")
            .arg(">")
            .query::<Value>(&mut reader)
            .unwrap()
    });
    let mut observer = Wire::connect(&server);
    wait_blocked_clients(&mut observer, 1);
    let id: String = redis::cmd("XADD")
        .arg("s")
        .arg("1-1")
        .arg("f")
        .arg("v")
        .query(&mut writer)
        .unwrap();
    assert_eq!(id, "1-1");
    let read = blocked.join().unwrap();
    assert_eq!(
        streams(&read, false),
        vec![("s".to_string(), vec![entry("1-1", &["f", "v"])])]
    );
}

#[test]
fn redis_py_pubsub_receives_messages_in_resp2_and_resp3() {
    let Some(python) = python() else { return };
    let server = TestServer::start().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/it/server/redis_py_pubsub.py");
    let output = run(
        Command::new(&python)
            .arg(&script)
            .arg(server.port().to_string()),
        b"",
    );
    assert!(
        output.status.success(),
        "{} {}: {}\nstdout:\n{}\nstderr:\n{}",
        python.display(),
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

//! `echomq bench` end to end: a run over the embedded engine, `echomq serve` and a real Redis
//! writes every figure to JSON and draws a well-formed SVG; bad targets and sizes are refused
//! with clear errors before anything is written; Ctrl-C mid-run leaves no keys on the server;
//! a run on a Redis Cluster (`redis-cluster://`) measures every operation and cleans up, and
//! with `--queues 3` puts its queues on the cluster's three masters and reports aggregates.

use std::net::TcpListener;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cluster::{self, Cluster};
use crate::support::peer::{Peer, PeerKind};
use crate::support::process::{self, Running, echomq};
use crate::support::resp::Resp;

/// A bench run that takes longer than this hung (a small run takes seconds).
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the interrupted run may take to start writing keys.
const KEYS_APPEAR_TIMEOUT: Duration = Duration::from_secs(60);

/// `echomq serve` on a free port, and its `redis://` URL.
fn serve() -> (Running, String) {
    let (running, addr) = process::serve(echomq(), &[]);
    (running, format!("redis://{addr}"))
}

/// Waits for the child at most [`RUN_TIMEOUT`], killing it (and failing) past that.
fn wait(running: &mut Running) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = running.0.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < RUN_TIMEOUT, "echomq bench hung");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `echomq bench <args>` to completion within [`RUN_TIMEOUT`].
fn bench(args: &[&str]) -> Output {
    let mut running = Running(
        echomq()
            .arg("bench")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let status = wait(&mut running);
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(running.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    std::io::Read::read_to_end(running.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    Output {
        status,
        stdout,
        stderr,
    }
}

/// A directory of the test's own, removed when the test ends (passing or not).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("echomq-bench-it-")
        .tempdir()
        .unwrap()
}

fn dbsize(peer: &mut Peer) -> i64 {
    match peer.call(&["DBSIZE"]) {
        Resp::Int(n) => n,
        other => panic!("DBSIZE replied {other:?}"),
    }
}

fn positive(row: &Value, field: &str) -> f64 {
    let v = row[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} missing in {row}"));
    assert!(v > 0.0 && v.is_finite(), "{field} = {v} in {row}");
    v
}

fn count(row: &Value, field: &str) -> u64 {
    row[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {row}"))
}

#[test]
fn bench_all_on_three_targets_writes_every_figure_and_a_plot() {
    let Some(mut redis) = Peer::start(PeerKind::Redis) else {
        return;
    };
    let (_serve, serve_url) = serve();
    let redis_url = format!("redis://{}", redis.addr());
    let dir = scratch();
    let (json, svg) = (dir.path().join("all.json"), dir.path().join("all.svg"));
    let out = bench(&[
        "all",
        "--entries",
        "1e3,1e4",
        "--target",
        "embedded",
        "--target",
        &serve_url,
        "--target",
        &redis_url,
        "--samples",
        "5",
        "--trim-repeats",
        "1",
        "--ops",
        "300",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    for heading in ["window:", "trim:", "append:", "consume:"] {
        assert!(table.contains(heading), "no {heading} table in\n{table}");
    }

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let targets = report["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3);
    let servers: Vec<&str> = targets
        .iter()
        .map(|t| t["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers[0], "embedded");
    assert!(servers[1].starts_with("echomq serve"), "{servers:?}");
    assert!(servers[2].starts_with("redis 7"), "{servers:?}");
    let per_target = |section: &str, cases: usize| {
        let rows = report[section].as_array().unwrap();
        assert_eq!(rows.len(), 2 * 3 * cases, "{section}: {rows:?}");
        rows.clone()
    };
    for row in per_target("load", 1) {
        positive(&row, "seconds");
        positive(&row, "entries_per_s");
    }
    for row in per_target("window", 6) {
        let read = count(&row, "read_entries");
        assert!(read >= 1 && read <= count(&row, "entries"), "{row}");
        let p50 = positive(&row, "p50_us");
        assert!(positive(&row, "p99_us") >= p50, "{row}");
        positive(&row, "entries_per_s");
    }
    for row in per_target("trim", 9) {
        positive(&row, "time_us");
        let (entries, requested) = (count(&row, "entries"), count(&row, "requested"));
        let (removed, left) = (count(&row, "removed"), count(&row, "left"));
        assert_eq!(removed + left, entries, "{row}");
        assert!(removed <= requested, "a trim over-trimmed: {row}");
        assert_eq!(count(&row, "under_trim"), requested - removed, "{row}");
        if row["strategy"] == "MAXLEN =" {
            assert_eq!(removed, requested, "an exact trim under-trimmed: {row}");
        }
        if removed > 0 {
            positive(&row, "ns_per_entry");
        } else {
            assert!(row["ns_per_entry"].is_null(), "{row}");
        }
        // A 50% trim of 10k entries frees whole nodes on every target.
        if entries == 10_000 && row["fraction"] == 0.5 {
            assert!(count(&row, "nodes_freed") > 0, "{row}");
        }
    }
    for row in per_target("append", 2) {
        assert_eq!(count(&row, "ops"), 300);
        positive(&row, "ops_per_s");
        positive(&row, "us_per_op");
    }
    for row in per_target("consume", 2) {
        assert!(count(&row, "consumed") >= 300, "{row}");
        positive(&row, "entries_per_s");
        let whole = positive(&row, "us_per_entry");
        // Every turn's append is part of that turn, so its median is too.
        assert!(positive(&row, "append_us_per_entry") <= whole, "{row}");
    }
    // The same stream gives the same trim outcome on every target: node boundaries agree.
    let trims = report["trim"].as_array().unwrap();
    for case in trims.chunks(3) {
        let left: Vec<u64> = case.iter().map(|r| count(r, "left")).collect();
        assert!(left.iter().all(|&l| l == left[0]), "{case:?}");
    }

    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the plot is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let lines = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline" || n.tag_name().name() == "path")
        .count();
    // At least one line per target in each of the four panels.
    assert!(lines >= 12, "{lines} lines in the plot");
    let labels: String = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(
        labels.contains("embedded") && labels.contains("redis-7"),
        "no legend"
    );
    check_plot_layout(&doc, 4);
    let stderr_lines: Vec<&str> = stderr.lines().collect();
    for t in targets {
        let label = t["label"].as_str().unwrap();
        for size in ["1.0k", "10k"] {
            let line = format!("echomq bench: {size} entries: loading {label}");
            assert!(
                stderr_lines.contains(&line.as_str()),
                "no {line:?} in\n{stderr}"
            );
        }
    }

    assert_eq!(dbsize(&mut redis), 0, "the bench left keys on Redis");
}

/// Every node of a cluster is empty once the bench is done. Replicas apply their masters'
/// last deletions asynchronously, so a replica may still hold a key for a moment: each node
/// has a few seconds to reach zero.
fn assert_no_keys_left(ports: &[u16]) {
    for &port in ports {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let size = cluster::call(port, &["DBSIZE"]).ok();
            if size == Some(redis::Value::Int(0)) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the bench left keys on {port}: {size:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `name`'s attribute `attr` as a number.
fn number(node: &roxmltree::Node<'_, '_>, attr: &str) -> f64 {
    node.attribute(attr)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no numeric {attr} on {node:?}"))
}

/// The plot's `panels` frames cover most of the canvas, each with its legend box inside it
/// and every legend label inside its box; series have markers of several shapes (circles,
/// and triangles and diamonds as polygons).
fn check_plot_layout(doc: &roxmltree::Document<'_>, panels: usize) {
    let boxes = |n: &roxmltree::Node<'_, '_>| {
        n.tag_name().name() == "rect"
            && n.attribute("fill") == Some("none")
            && n.attribute("stroke") == Some("#000000")
    };
    let mut frames: Vec<_> = doc.descendants().filter(boxes).collect();
    frames.sort_by(|a, b| number(b, "width").total_cmp(&number(a, "width")));
    assert_eq!(
        frames.len(),
        2 * panels,
        "a frame and a legend box per panel"
    );
    let (plots, legends) = frames.split_at(panels);
    let area: f64 = plots
        .iter()
        .map(|p| number(p, "width") * number(p, "height"))
        .sum();
    assert!(
        area > 0.6 * 1400.0 * 1000.0,
        "the panels use {area} px² of the canvas"
    );
    let inside = |outer: &roxmltree::Node<'_, '_>, x: f64, y: f64| {
        let (ox, oy) = (number(outer, "x"), number(outer, "y"));
        ox < x && x < ox + number(outer, "width") && oy < y && y < oy + number(outer, "height")
    };
    for legend in legends {
        let (x, y) = (number(legend, "x"), number(legend, "y"));
        let (r, b) = (x + number(legend, "width"), y + number(legend, "height"));
        assert!(
            plots.iter().any(|p| inside(p, x, y) && inside(p, r, b)),
            "legend box at {x},{y} outside every panel"
        );
    }
    for text in doc
        .descendants()
        .filter(|n| n.tag_name().name() == "text" && n.attribute("text-anchor") == Some("start"))
    {
        let (x, y) = (number(&text, "x"), number(&text, "y"));
        assert!(
            legends.iter().any(|l| inside(l, x, y)),
            "legend label {:?} at {x},{y} outside its box",
            text.text()
        );
    }
    let count = |tag: &str| {
        doc.descendants()
            .filter(|n| n.tag_name().name() == tag)
            .count()
    };
    assert!(
        count("circle") > 0 && count("polygon") > 0,
        "markers of one shape only"
    );
}

#[test]
fn bench_all_on_a_redis_cluster_measures_every_operation_and_leaves_no_keys() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let ports = cluster.live_ports();
    let target = format!(
        "redis-cluster://127.0.0.1:{},127.0.0.1:{}",
        ports[0], ports[1]
    );
    let dir = scratch();
    let json = dir.path().join("cluster.json");
    let out = bench(&[
        "all",
        "--entries",
        "1e3",
        "--target",
        &target,
        "--samples",
        "3",
        "--trim-repeats",
        "1",
        "--ops",
        "100",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let server = report["targets"][0]["server"].as_str().unwrap();
    assert!(
        server.starts_with("redis 7") && server.ends_with("cluster"),
        "{server}"
    );
    for section in ["load", "window", "trim", "append", "consume"] {
        assert!(
            !report[section].as_array().unwrap().is_empty(),
            "no {section} rows"
        );
    }
    for row in report["append"].as_array().unwrap() {
        assert_eq!(count(row, "ops"), 100);
    }
    for row in report["consume"].as_array().unwrap() {
        assert!(count(row, "consumed") >= 100, "{row}");
    }
    assert_no_keys_left(&ports);
}

#[test]
fn bench_queues_on_a_cluster_sit_on_three_masters_and_report_an_aggregate() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let ports = cluster.live_ports();
    let target = format!("redis-cluster://127.0.0.1:{}", ports[0]);
    let dir = scratch();
    let json = dir.path().join("cluster-queues.json");
    let out = bench(&[
        "all",
        "--entries",
        "1e3",
        "--queues",
        "3",
        "--target",
        &target,
        "--samples",
        "3",
        "--trim-repeats",
        "1",
        "--ops",
        "100",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let queues = report["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 3, "{queues:?}");
    let mut masters = Vec::new();
    for (i, queue) in queues.iter().enumerate() {
        assert_eq!(count(queue, "queue"), i as u64);
        let name = queue["name"].as_str().unwrap();
        // Where the cluster itself puts the queue's keys.
        let key = format!("emq:{{{name}}}:stream:t0-n1000");
        let slot = cluster.slot_of(&key);
        assert_eq!(count(queue, "slot"), u64::from(slot), "{queue}");
        let master = cluster.master_of(slot);
        assert_eq!(
            queue["master"].as_str().unwrap(),
            format!("127.0.0.1:{master}"),
            "{queue}"
        );
        assert!(
            stdout.contains(&format!(
                "{name} (slot {slot}, on master 127.0.0.1:{master})"
            )),
            "{stdout}"
        );
        masters.push(master);
    }
    masters.sort_unstable();
    masters.dedup();
    assert_eq!(masters, cluster.masters(), "the queues share a master");
    for (section, aggregate, field, rate) in [
        ("append", "append_aggregate", "ops", "ops_per_s"),
        ("consume", "consume_aggregate", "consumed", "entries_per_s"),
    ] {
        let rows = report[section].as_array().unwrap();
        assert_eq!(rows.len(), 6, "{section}: 3 queues x 2 modes");
        for row in rows {
            assert!(count(row, field) >= 100, "{row}");
            positive(row, rate);
        }
        let totals = report[aggregate].as_array().unwrap();
        assert_eq!(totals.len(), 2, "{aggregate}: one per mode");
        for row in totals {
            assert_eq!(count(row, "queues"), 3);
            assert!(count(row, "total") >= 300, "{row}");
            positive(row, "entries_per_s");
        }
    }
    assert!(stdout.contains(" all 3 "), "{stdout}");
    assert_no_keys_left(&ports);
}

#[test]
fn bench_refuses_dead_and_foreign_targets_quickly() {
    // A port nobody listens on.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_url = format!("redis://{}", closed.local_addr().unwrap());
    drop(closed);
    // A port that answers like a web server, and one that accepts and never answers.
    let http = TcpListener::bind("127.0.0.1:0").unwrap();
    let http_url = format!("redis://{}", http.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in http.incoming().flatten() {
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("redis://{}", silent.local_addr().unwrap());
    let cases = [
        (closed_url.as_str(), "is unreachable"),
        (http_url.as_str(), "does not speak the Redis protocol"),
        (silent_url.as_str(), "does not speak the Redis protocol"),
        ("http://localhost:80", "bad --target"),
    ];
    for (url, expected) in cases {
        let started = Instant::now();
        let out = bench(&["window", "--entries", "1e3", "--target", url]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{url}: {stderr}");
        assert!(stderr.contains(expected), "{url}: {stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url} took too long"
        );
    }
    drop(silent);
}

#[test]
fn bench_refuses_sizes_that_do_not_fit_before_loading() {
    let out = bench(&["trim", "--entries", "1e4,1e11", "--target", "embedded"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("100000000000 entries do not fit"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "measured before refusing");

    for bad in [["--entries", "0"], ["--entries", "ten"], ["--rate", "0"]] {
        let out = bench(&["window", bad[0], bad[1]]);
        assert!(!out.status.success(), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("bad"),
            "{bad:?}"
        );
    }

    // A server's maxmemory is a limit too, and nothing is written before the refusal.
    let Some(mut redis) = Peer::start(PeerKind::Redis) else {
        return;
    };
    redis.call(&["CONFIG", "SET", "maxmemory", "20mb"]);
    let url = format!("redis://{}", redis.addr());
    let out = bench(&["window", "--entries", "1e6", "--target", &url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("maxmemory"), "{stderr}");
    assert_eq!(dbsize(&mut redis), 0);
}

#[test]
fn ctrl_c_mid_run_removes_the_bench_keys_from_redis() {
    let Some(mut redis) = Peer::start(PeerKind::Redis) else {
        return;
    };
    let url = format!("redis://{}", redis.addr());
    // Interrupted while loading a big stream, and while measuring (a tiny stream read for a
    // long time).
    let runs: [(&[&str], Duration); 2] = [
        (&["all", "--entries", "2e6"], Duration::ZERO),
        (
            &["window", "--entries", "1e3", "--samples", "1000000"],
            Duration::from_millis(300),
        ),
    ];
    for (args, settle) in runs {
        let mut running = Running(
            echomq()
                .arg("bench")
                .args(args)
                .args(["--target", &url])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let started = Instant::now();
        while dbsize(&mut redis) == 0 {
            assert!(
                started.elapsed() < KEYS_APPEAR_TIMEOUT,
                "the bench wrote nothing"
            );
            assert!(
                running.0.try_wait().unwrap().is_none(),
                "the bench ended early"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(settle);
        assert!(
            running.0.try_wait().unwrap().is_none(),
            "{args:?} ended early"
        );
        let signalled = Command::new("kill")
            .args(["-INT", &running.0.id().to_string()])
            .status()
            .unwrap();
        assert!(signalled.success());
        let status = wait(&mut running);
        let mut stderr = String::new();
        std::io::Read::read_to_string(running.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(130), "{args:?}: {stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        assert_eq!(dbsize(&mut redis), 0, "keys left after Ctrl-C in {args:?}");
    }
}

#[test]
fn streams_smaller_than_a_node_or_a_batch_are_measured_too() {
    let dir = scratch();
    let json = dir.path().join("tiny.json");
    let out = bench(&[
        "all",
        "--entries",
        "1,7",
        "--samples",
        "2",
        "--trim-repeats",
        "1",
        "--ops",
        "20",
        "--batch",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for row in report["trim"].as_array().unwrap() {
        // One entry asked for at least; `=` removes it, `~` may keep the only node.
        assert!(count(row, "removed") <= count(row, "requested"), "{row}");
        assert_eq!(
            count(row, "removed") + count(row, "left"),
            count(row, "entries")
        );
    }
    assert_eq!(report["consume"].as_array().unwrap().len(), 4);
    // Each size and operation is announced on stderr as it starts, and each table is on stdout
    // once its measurements end: the smaller size's tables come before the larger's load.
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        "echomq bench: 1 entries: loading embedded",
        "echomq bench: 1 entries: window reads (embedded)",
        "echomq bench: 7 entries: loading embedded",
        "echomq bench: 7 entries: trims (embedded)",
        "echomq bench: 7 entries: appends (embedded)",
        "echomq bench: 7 entries: consumes (embedded)",
    ] {
        assert!(
            stderr.lines().any(|l| l == line),
            "no {line:?} in\n{stderr}"
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for heading in [
        "\nload (",
        "\nwindow:",
        "\ntrim:",
        "\nappend:",
        "\nconsume:",
    ] {
        assert_eq!(
            stdout.matches(heading).count(),
            2,
            "{heading:?} once per size in\n{stdout}"
        );
    }
    let first_consume = stdout.find("\nconsume:").unwrap();
    let second_load = stdout.rfind("\nload (").unwrap();
    assert!(
        first_consume < second_load,
        "tables held back to the end:\n{stdout}"
    );
}

//! A real Redis Cluster on loopback: 3 masters and 3 replicas of Debian's `redis-server` 7.0.
//!
//! [`Cluster::start`] starts six nodes (`--cluster-enabled yes`, each with its node table in a
//! temporary directory, persistence off, the cluster bus on a port of its own), joins them
//! with `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`, and waits until
//! every node reports `cluster_state:ok`, agrees on the slot map and every replica's link is
//! up. Dropping it kills every node by pid. A missing `redis-server` or `redis-cli` skips the
//! test with a printed notice, except under `CI=true`, where it fails (as [`super::peer`]).
//!
//! Binaries: `ECHOMQ_REDIS_SERVER` and `ECHOMQ_REDIS_CLI` (the peers env file sets both), else
//! `PATH`. Faults for the fault tests: [`Cluster::move_slot`] reshards one slot to another
//! master (`CLUSTER SETSLOT ... IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT ... NODE`) and
//! [`Cluster::kill`] sends SIGKILL to a node, [`Cluster::restart`] brings it back on its port
//! with its node table, so it rejoins (as a replica, once failed over).

use std::fs::File;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use std::{env, thread};

use super::field_of_info;
use echomq::feed::ClusterBackend;
use redis::Value;
use tempfile::TempDir;

/// Nodes: 3 masters, each with 1 replica.
const NODES: usize = 6;
/// How long the cluster may take to start, join, fail over or settle.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between probes.
const POLL: Duration = Duration::from_millis(20);
/// Attempts at picking ports that stay free until the nodes bind them.
const START_ATTEMPTS_MAX: usize = 3;
/// The node timeout for a cluster that must not fail over by accident on a loaded machine.
pub const NODE_TIMEOUT_CALM_MS: u64 = 5_000;
/// The node timeout for failover tests: a killed master is replaced within a few seconds.
pub const NODE_TIMEOUT_FAST_MS: u64 = 1_000;

/// One node process.
#[derive(Debug)]
struct Node {
    port: u16,
    bus_port: u16,
    child: Option<Child>,
}

/// A running cluster; every node is killed when dropped.
#[derive(Debug)]
pub struct Cluster {
    server: PathBuf,
    nodes: Vec<Node>,
    node_timeout_ms: u64,
    dir: TempDir,
}

fn binary(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = env::var_os(var).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn free_ports(n: usize) -> Vec<u16> {
    // Hold them all at once, so they are distinct.
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// Runs one command on one node (not cluster-routed); errors as `Err(text)`.
pub fn call(port: u16, argv: &[&str]) -> Result<Value, String> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
    let mut connection = client
        .get_connection_with_timeout(Duration::from_secs(2))
        .map_err(|e| e.to_string())?;
    connection
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut command = redis::cmd(argv[0]);
    for arg in &argv[1..] {
        command.arg(*arg);
    }
    command
        .query::<Value>(&mut connection)
        .map_err(|e| e.to_string())
}

/// A reply as text (bulk and simple strings).
pub fn text(value: &Value) -> String {
    match value {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::VerbatimString { text, .. } => text.clone(),
        other => format!("{other:?}"),
    }
}

/// Polls `done` until it holds; panics with `what` after [`SETTLE_TIMEOUT`].
fn settle(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "cluster: timed out waiting for {what}"
        );
        thread::sleep(POLL);
    }
}

impl Cluster {
    /// A calm cluster (see [`NODE_TIMEOUT_CALM_MS`]), or `None` (skipped) outside CI when the
    /// binaries are missing.
    pub fn start() -> Option<Cluster> {
        Cluster::start_with(NODE_TIMEOUT_CALM_MS)
    }

    /// A cluster whose nodes judge a peer failed after `node_timeout_ms`.
    pub fn start_with(node_timeout_ms: u64) -> Option<Cluster> {
        let found = (
            binary("ECHOMQ_REDIS_SERVER", "redis-server"),
            binary("ECHOMQ_REDIS_CLI", "redis-cli"),
        );
        let (Some(server), Some(cli)) = found else {
            let why = "redis-server or redis-cli not found (set ECHOMQ_REDIS_SERVER and \
                       ECHOMQ_REDIS_CLI, or run scripts/install-peers)";
            if env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true requires a Redis Cluster: {why}");
            }
            eprintln!("SKIPPED: {why}");
            return None;
        };
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS_MAX {
            match Cluster::try_start(&server, &cli, node_timeout_ms) {
                Ok(cluster) => return Some(cluster),
                Err(why) => failures.push(why),
            }
        }
        panic!("starting a Redis Cluster failed {START_ATTEMPTS_MAX} times: {failures:#?}");
    }

    /// Seconds `redis-cli --cluster create` may take before the start is retried.
    const CREATE_TIMEOUT_S: u64 = 60;

    fn try_start(server: &Path, cli: &Path, node_timeout_ms: u64) -> Result<Cluster, String> {
        let ports = free_ports(2 * NODES);
        let mut cluster = Cluster {
            server: server.to_path_buf(),
            nodes: (0..NODES)
                .map(|i| Node {
                    port: ports[i],
                    bus_port: ports[NODES + i],
                    child: None,
                })
                .collect(),
            node_timeout_ms,
            dir: tempfile::tempdir().unwrap(),
        };
        for i in 0..NODES {
            cluster.spawn(i)?;
        }
        for i in 0..NODES {
            cluster.wait_answering(i)?;
        }
        // `redis-cli --cluster create` waits for the nodes to meet with no deadline of its
        // own; a bus port taken between probing and binding would make it wait forever, so it
        // runs under coreutils' `timeout` and a failed start is retried on fresh ports.
        let mut create = Command::new("timeout");
        create.arg(Self::CREATE_TIMEOUT_S.to_string()).arg(cli);
        create.arg("--cluster").arg("create");
        for node in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let output = create
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running redis-cli: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "redis-cli --cluster create: {}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        cluster.wait_healthy();
        Ok(cluster)
    }

    /// Starts node `i` on its ports (again, after [`Cluster::kill`]: the node table in the
    /// directory makes it rejoin as the node it was).
    fn spawn(&mut self, i: usize) -> Result<(), String> {
        let node = &self.nodes[i];
        let dir = self.dir.path();
        let log =
            File::create(dir.join(format!("node-{}.log", node.port))).map_err(|e| e.to_string())?;
        let child = Command::new(&self.server)
            .args(["--port", &node.port.to_string()])
            .args(["--cluster-port", &node.bus_port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes"])
            .arg("--cluster-config-file")
            .arg(dir.join(format!("nodes-{}.conf", node.port)))
            .args(["--cluster-node-timeout", &self.node_timeout_ms.to_string()])
            // A replica however stale may take over: the tests kill masters on purpose.
            .args(["--cluster-replica-validity-factor", "0"])
            .arg("--dir")
            .arg(dir)
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().map_err(|e| e.to_string())?))
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("spawning redis-server: {e}"))?;
        self.nodes[i].child = Some(child);
        Ok(())
    }

    fn wait_answering(&mut self, i: usize) -> Result<(), String> {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        let port = self.nodes[i].port;
        loop {
            if let Some(child) = self.nodes[i].child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!(
                    "node {port} exited with {status}: {}",
                    self.log_tail(port)
                ));
            }
            if matches!(call(port, &["PING"]), Ok(Value::SimpleString(ref s)) if s == "PONG") {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "node {port} did not answer: {}",
                    self.log_tail(port)
                ));
            }
            thread::sleep(POLL);
        }
    }

    fn log_tail(&self, port: u16) -> String {
        let log = std::fs::read_to_string(self.dir.path().join(format!("node-{port}.log")))
            .unwrap_or_default();
        let start = log.len().saturating_sub(2_000);
        log.get(start..).unwrap_or_default().to_string()
    }

    /// The ports of the nodes still running.
    pub fn live_ports(&self) -> Vec<u16> {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .map(|n| n.port)
            .collect()
    }

    /// Seed URLs, one per running node.
    pub fn seeds(&self) -> Vec<String> {
        self.live_ports()
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}/"))
            .collect()
    }

    /// A backend on the cluster with the default timeouts.
    pub fn backend(&self) -> ClusterBackend {
        ClusterBackend::connect(&self.seeds()).unwrap()
    }

    /// Waits until every running node says `cluster_state:ok`, they agree on which node serves
    /// each slot range, and every replica's link to its master is up.
    pub fn wait_healthy(&self) {
        let ports = self.live_ports();
        settle("cluster_state:ok on every node", || {
            ports.iter().all(|&p| {
                call(p, &["CLUSTER", "INFO"]).is_ok_and(|v| {
                    field_of_info(&text(&v), "cluster_state").as_deref() == Some("ok")
                })
            })
        });
        settle("every node agreeing on the slot map", || {
            let maps: Vec<_> = ports.iter().map(|&p| self.slot_owners(p)).collect();
            maps.iter().all(|m| m.is_some() && *m == maps[0])
        });
        settle("every replica's link up", || {
            ports.iter().all(|&p| {
                call(p, &["INFO", "replication"]).is_ok_and(|v| {
                    let info = text(&v);
                    field_of_info(&info, "role").as_deref() == Some("master")
                        || field_of_info(&info, "master_link_status").as_deref() == Some("up")
                })
            })
        });
    }

    /// `(first slot, last slot, master port)` for each range, as node `port` sees them.
    fn slot_owners(&self, port: u16) -> Option<Vec<(i64, i64, i64)>> {
        let Ok(Value::Array(ranges)) = call(port, &["CLUSTER", "SLOTS"]) else {
            return None;
        };
        let mut owners: Vec<(i64, i64, i64)> = ranges
            .iter()
            .filter_map(|r| match r {
                Value::Array(cells) => match (cells.first(), cells.get(1), cells.get(2)) {
                    (Some(Value::Int(a)), Some(Value::Int(b)), Some(Value::Array(master))) => {
                        match master.get(1) {
                            Some(Value::Int(p)) => Some((*a, *b, *p)),
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        owners.sort_unstable();
        Some(owners)
    }

    /// The slot of `key`.
    pub fn slot_of(&self, key: &str) -> u16 {
        let port = self.live_ports()[0];
        match call(port, &["CLUSTER", "KEYSLOT", key]) {
            Ok(Value::Int(slot)) => u16::try_from(slot).unwrap(),
            other => panic!("CLUSTER KEYSLOT {key}: {other:?}"),
        }
    }

    /// The port of the master serving `slot`, as the first running node sees it.
    pub fn master_of(&self, slot: u16) -> u16 {
        let port = self.live_ports()[0];
        let owners = self.slot_owners(port).unwrap_or_default();
        owners
            .iter()
            .find(|(a, b, _)| (*a..=*b).contains(&i64::from(slot)))
            .map(|(_, _, p)| u16::try_from(*p).unwrap())
            .unwrap_or_else(|| panic!("no master serves slot {slot}"))
    }

    /// The ports of the masters.
    pub fn masters(&self) -> Vec<u16> {
        let port = self.live_ports()[0];
        let mut masters: Vec<u16> = self
            .slot_owners(port)
            .unwrap_or_default()
            .iter()
            .map(|(_, _, p)| u16::try_from(*p).unwrap())
            .collect();
        masters.sort_unstable();
        masters.dedup();
        masters
    }

    fn id_of(port: u16) -> String {
        text(&call(port, &["CLUSTER", "MYID"]).unwrap())
    }

    /// Moves `slot` with its keys to the master on `to` while clients keep using it: the
    /// source answers `ASK` for keys already moved, then every master learns the new owner.
    /// `pause` is held between the steps so that clients run into each state.
    pub fn move_slot(&self, slot: u16, to: u16, pause: Duration) {
        let from = self.master_of(slot);
        assert_ne!(from, to, "slot {slot} is already on {to}");
        let (from_id, to_id) = (Cluster::id_of(from), Cluster::id_of(to));
        let slot_text = slot.to_string();
        let s = slot_text.as_str();
        call(to, &["CLUSTER", "SETSLOT", s, "IMPORTING", &from_id]).unwrap();
        call(from, &["CLUSTER", "SETSLOT", s, "MIGRATING", &to_id]).unwrap();
        thread::sleep(pause);
        loop {
            let Ok(Value::Array(keys)) = call(from, &["CLUSTER", "GETKEYSINSLOT", s, "100"]) else {
                panic!("CLUSTER GETKEYSINSLOT {slot} on {from}");
            };
            if keys.is_empty() {
                break;
            }
            for key in &keys {
                // One key at a time, with a pause, so clients see a half-moved slot.
                let key = text(key);
                let to_port = to.to_string();
                call(
                    from,
                    &[
                        "MIGRATE",
                        "127.0.0.1",
                        &to_port,
                        "",
                        "0",
                        "5000",
                        "KEYS",
                        &key,
                    ],
                )
                .unwrap();
                thread::sleep(pause);
            }
        }
        call(to, &["CLUSTER", "SETSLOT", s, "NODE", &to_id]).unwrap();
        call(from, &["CLUSTER", "SETSLOT", s, "NODE", &to_id]).unwrap();
        for master in self.masters() {
            let _ = call(master, &["CLUSTER", "SETSLOT", s, "NODE", &to_id]);
        }
        settle("every node seeing the slot's new owner", || {
            self.live_ports().iter().all(|&p| {
                self.slot_owners(p).is_some_and(|owners| {
                    owners.iter().any(|(a, b, owner)| {
                        (*a..=*b).contains(&i64::from(slot)) && *owner == i64::from(to)
                    })
                })
            })
        });
    }

    /// The port of the (first) replica of the master on `port`.
    pub fn replica_of(&self, port: u16) -> u16 {
        let info = text(&call(port, &["INFO", "replication"]).unwrap());
        field_of_info(&info, "slave0")
            .and_then(|v| {
                v.split(',')
                    .find_map(|kv| kv.strip_prefix("port=")?.parse().ok())
            })
            .unwrap_or_else(|| panic!("master {port} has no replica: {info}"))
    }

    /// Waits until every running node reports `cluster_state:<state>`.
    pub fn wait_state(&self, state: &str) {
        settle(
            &format!("cluster_state:{state} on every running node"),
            || {
                self.live_ports().iter().all(|&p| {
                    call(p, &["CLUSTER", "INFO"]).is_ok_and(|v| {
                        field_of_info(&text(&v), "cluster_state").as_deref() == Some(state)
                    })
                })
            },
        );
    }

    /// Kills the node on `port` with SIGKILL (by pid).
    pub fn kill(&mut self, port: u16) {
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port == port)
            .unwrap_or_else(|| panic!("no node on {port}"));
        if let Some(mut child) = node.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits until a master other than `dead` serves `slot` (its replica took over) and the
    /// running nodes are healthy again.
    pub fn wait_failed_over(&self, slot: u16, dead: u16) {
        settle("a replica taking over the dead master's slots", || {
            self.live_ports().iter().all(|&p| {
                self.slot_owners(p).is_some_and(|owners| {
                    owners.iter().any(|(a, b, owner)| {
                        (*a..=*b).contains(&i64::from(slot)) && *owner != i64::from(dead)
                    })
                })
            }) && self.live_ports().iter().all(|&p| {
                call(p, &["CLUSTER", "INFO"]).is_ok_and(|v| {
                    field_of_info(&text(&v), "cluster_state").as_deref() == Some("ok")
                })
            })
        });
    }

    /// Starts the killed node on `port` again; it rejoins with its node table (as a replica of
    /// whoever took over its slots) once it answers and its link is up.
    pub fn restart(&mut self, port: u16) {
        let i = self
            .nodes
            .iter()
            .position(|n| n.port == port)
            .unwrap_or_else(|| panic!("no node on {port}"));
        assert!(self.nodes[i].child.is_none(), "node {port} is running");
        self.spawn(i).unwrap();
        self.wait_answering(i).unwrap();
        self.wait_healthy();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            if let Some(mut child) = node.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

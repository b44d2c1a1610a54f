//! A place streams live during a bench: the engine in this process, a Redis-protocol server
//! on our own connection, or a Redis Cluster on a cluster connection (`wire` says how raw
//! commands reach either; replies are handled here once).
//!
//! Remote targets are probed before use: a TCP connect and a raw `PING` with short timeouts, so
//! an unreachable address or a port that speaks something else (HTTP, SSH) is a clear error
//! instead of a hang. Every later command has a read timeout too. Window reads go through the
//! feed's `read_window` on both kinds (the path applications use), and so does consuming
//! (a [`StreamConsumer`] over the feed's backend); trims and appends send the same command argv
//! to both, through [`Keyspace::execute`] in process and over RESP otherwise, so the two differ
//! only by the network and the protocol.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use echomq::engine::{Keyspace, Reply, SystemClock};
use echomq::feed::{
    ClusterBackend, ConsumerSettings, Delivery, Embedded, Feed, RedisBackend, StreamConsumer,
    Subscription,
};
use redis::Value;
use time::OffsetDateTime;

use super::args::TargetSpec;
use super::error::BenchError;
use super::queues::{self, Queue};
use super::wire::Wire;

/// How long a TCP connect, and the first reply, may take before the target counts as dead.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// A reply slower than this means a hung server; a 50% exact trim of a large stream stays
/// well below it.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// Bytes of a non-RESP reply quoted in the error.
const PREVIEW_BYTES: usize = 40;

/// One command's arguments.
pub type Argv = Vec<Vec<u8>>;

/// Where the streams live.
// One value per target, made once and never moved in a measured path: its size is no cost.
#[allow(clippy::large_enum_variant)]
enum Place {
    Embedded {
        keyspace: Arc<Keyspace>,
        feed: Feed<Embedded>,
    },
    Remote {
        connection: Box<dyn Wire>,
        feed: RemoteFeed,
    },
}

/// The feed over a server or a cluster.
// One value per target, as `Place`.
#[allow(clippy::large_enum_variant)]
enum RemoteFeed {
    One(Feed<RedisBackend>),
    Cluster(Feed<ClusterBackend>),
}

/// What the bench knows about a target's memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerMemory {
    /// `used_memory`.
    pub used_bytes: u64,
    /// `maxmemory` (0: none).
    pub max_bytes: u64,
    /// `total_system_memory`, when the server reports it.
    pub system_bytes: u64,
}

/// A connected target.
pub struct Target {
    /// How the user named it.
    pub spec: TargetSpec,
    /// What answers there: `embedded`, `echomq serve 0.1.0`, `redis 7.0.15`.
    pub server: String,
    /// A short name of what answers: `echomq-serve`, `redis-7.0.15`, `valkey-8.1.1`.
    kind: String,
    /// Whether the target's memory is this machine's (embedded or a loopback address).
    pub local: bool,
    /// Memory figures of a server (zeros for embedded).
    pub memory: ServerMemory,
    /// The run's queues here (see `queues`); empty until [`Target::place_queues`].
    pub queues: Vec<Queue>,
    place: Place,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("spec", &self.spec)
            .field("server", &self.server)
            .finish()
    }
}

fn server_error(target: &str, e: impl std::fmt::Display) -> BenchError {
    BenchError::Server {
        target: target.to_string(),
        message: e.to_string(),
    }
}

/// Connects to the target, or says why it cannot be used.
pub fn connect(spec: &TargetSpec) -> Result<Target, BenchError> {
    match spec {
        TargetSpec::Embedded => {
            let keyspace = Arc::new(Keyspace::new(Arc::new(SystemClock)));
            let feed = Feed::new(Embedded::new(Arc::clone(&keyspace)));
            Ok(Target {
                spec: spec.clone(),
                server: "embedded".to_string(),
                kind: "embedded".to_string(),
                local: true,
                memory: ServerMemory::default(),
                queues: Vec::new(),
                place: Place::Embedded { keyspace, feed },
            })
        }
        TargetSpec::Remote { url, addr } => {
            let resolved = probe(url, addr)?;
            let unreachable = |e: redis::RedisError| BenchError::Unreachable {
                target: url.clone(),
                reason: e.to_string(),
            };
            let client = redis::Client::open(url.as_str()).map_err(unreachable)?;
            let connection = client
                .get_connection_with_timeout(PROBE_TIMEOUT)
                .map_err(unreachable)?;
            connection
                .set_read_timeout(Some(COMMAND_TIMEOUT))
                .and_then(|()| connection.set_write_timeout(Some(COMMAND_TIMEOUT)))
                .map_err(unreachable)?;
            let feed = Feed::new(RedisBackend::connect(url).map_err(|e| server_error(url, e))?);
            let mut target = Target {
                spec: spec.clone(),
                server: String::new(),
                kind: String::new(),
                local: resolved.iter().all(|a| a.ip().is_loopback()),
                memory: ServerMemory::default(),
                queues: Vec::new(),
                place: Place::Remote {
                    connection: Box::new(connection),
                    feed: RemoteFeed::One(feed),
                },
            };
            target.read_info()?;
            Ok(target)
        }
        TargetSpec::Cluster { seeds, addrs } => {
            let label = spec.label();
            let mut local = true;
            for (seed, addr) in seeds.iter().zip(addrs) {
                local &= probe(seed, addr)?.iter().all(|a| a.ip().is_loopback());
            }
            let unreachable = |e: redis::RedisError| BenchError::Unreachable {
                target: label.clone(),
                reason: e.to_string(),
            };
            let connection =
                redis::cluster::ClusterClient::builder(seeds.iter().map(String::as_str))
                    .connection_timeout(PROBE_TIMEOUT)
                    .response_timeout(COMMAND_TIMEOUT)
                    .build()
                    .and_then(|client| client.get_connection())
                    .map_err(unreachable)?;
            let backend = ClusterBackend::connect_with(seeds, PROBE_TIMEOUT, COMMAND_TIMEOUT)
                .map_err(|e| server_error(&label, e))?;
            let mut target = Target {
                spec: spec.clone(),
                server: String::new(),
                kind: String::new(),
                local,
                memory: ServerMemory::default(),
                queues: Vec::new(),
                place: Place::Remote {
                    connection: Box::new(connection),
                    feed: RemoteFeed::Cluster(Feed::new(backend)),
                },
            };
            target.read_info()?;
            Ok(target)
        }
    }
}

/// A TCP connect and a raw RESP `PING`: any `+` or `-` reply is the Redis protocol (`-NOAUTH`
/// included; the client authenticates from the URL afterwards).
fn probe(url: &str, addr: &str) -> Result<Vec<SocketAddr>, BenchError> {
    let unreachable = |reason: String| BenchError::Unreachable {
        target: url.to_string(),
        reason,
    };
    let not_redis = |reason: String| BenchError::NotRedis {
        target: url.to_string(),
        reason,
    };
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve {addr}: {e}")))?
        .collect();
    let mut last = format!("{addr} resolves to no address");
    let mut stream = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, PROBE_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("connecting to {a}: {e}"),
        }
    }
    let mut stream = stream.ok_or_else(|| unreachable(last))?;
    let io =
        |e: std::io::Error| not_redis(format!("no reply to PING within {PROBE_TIMEOUT:?}: {e}"));
    stream.set_read_timeout(Some(PROBE_TIMEOUT)).map_err(io)?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT)).map_err(io)?;
    stream.write_all(b"*1\r\n$4\r\nPING\r\n").map_err(io)?;
    let mut reply = [0u8; PREVIEW_BYTES];
    let n = stream.read(&mut reply).map_err(io)?;
    match reply.first() {
        _ if n == 0 => Err(not_redis("it closed the connection on PING".into())),
        Some(b'+' | b'-') => Ok(addrs),
        _ => Err(not_redis(format!(
            "it answered PING with {:?}",
            String::from_utf8_lossy(&reply[..n])
        ))),
    }
}

/// `name:value` from INFO text.
fn info_field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        line.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    })
}

fn as_bytes(value: &Value) -> Option<&[u8]> {
    match value {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.as_bytes()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes()),
        _ => None,
    }
}

fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

impl Target {
    /// The label of tables and plots.
    pub fn label(&self) -> String {
        match &self.spec {
            TargetSpec::Embedded => "embedded".to_string(),
            TargetSpec::Remote { addr, .. } => format!("{}@{addr}", self.kind),
            TargetSpec::Cluster { addrs, .. } => format!("{}@{}", self.kind, addrs.join(",")),
        }
    }

    /// Another handle on the same place with connections of its own (the same keyspace in
    /// process), for a queue's producer thread.
    pub fn fork(&self) -> Result<Target, BenchError> {
        let mut fork = match &self.place {
            Place::Embedded { keyspace, .. } => Target {
                spec: self.spec.clone(),
                server: self.server.clone(),
                kind: self.kind.clone(),
                local: self.local,
                memory: self.memory,
                queues: Vec::new(),
                place: Place::Embedded {
                    keyspace: Arc::clone(keyspace),
                    feed: Feed::new(Embedded::new(Arc::clone(keyspace))),
                },
            },
            Place::Remote { .. } => connect(&self.spec)?,
        };
        fork.queues = self.queues.clone();
        Ok(fork)
    }

    /// Chooses the run's `n` queues here: on a cluster, on different masters as far as there
    /// are masters (read from `CLUSTER SLOTS` of the first seed node, checked against the
    /// node's `CLUSTER KEYSLOT`); elsewhere any `n` distinct names.
    pub fn place_queues(&mut self, run: &str, n: usize) -> Result<(), BenchError> {
        let TargetSpec::Cluster { seeds, addrs } = &self.spec else {
            self.queues = queues::choose(run, n, None);
            return Ok(());
        };
        let label = self.spec.label();
        let fail = |e: redis::RedisError| server_error(&label, e);
        let seed = seeds
            .first()
            .ok_or_else(|| server_error(&label, "no seed node"))?;
        let host = addrs
            .first()
            .and_then(|a| a.rsplit_once(':'))
            .map_or("127.0.0.1", |(h, _)| h);
        let mut node = redis::Client::open(seed.as_str())
            .and_then(|c| c.get_connection_with_timeout(PROBE_TIMEOUT))
            .map_err(fail)?;
        node.set_read_timeout(Some(PROBE_TIMEOUT)).map_err(fail)?;
        let slots: Value = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut node)
            .map_err(fail)?;
        let masters = queues::parse_cluster_slots(&slots, host);
        if masters.is_empty() {
            return Err(server_error(&label, "CLUSTER SLOTS names no master"));
        }
        let chosen = queues::choose(run, n, Some(&masters));
        for queue in &chosen {
            let key = echomq::feed::stream_key(&queue.name, "s");
            let slot: i64 = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(&key)
                .query(&mut node)
                .map_err(fail)?;
            if queue.placement.as_ref().map(|(s, _)| i64::from(*s)) != Some(slot) {
                return Err(server_error(
                    &label,
                    format!("CLUSTER KEYSLOT {key} is {slot}, not the slot the bench computed"),
                ));
            }
        }
        self.queues = chosen;
        Ok(())
    }

    fn error(&self, e: impl std::fmt::Display) -> BenchError {
        server_error(&self.spec.label(), e)
    }

    fn read_info(&mut self) -> Result<(), BenchError> {
        let text = self.info()?;
        let version = |name| info_field(&text, name).unwrap_or("?");
        (self.kind, self.server) = if let Some(v) = info_field(&text, "echomq_version") {
            // This build's server: its version says nothing a reader needs in every row.
            ("echomq-serve".to_string(), format!("echomq serve {v}"))
        } else if let Some(v) = info_field(&text, "valkey_version") {
            (format!("valkey-{v}"), format!("valkey {v}"))
        } else {
            let v = version("redis_version");
            (format!("redis-{v}"), format!("redis {v}"))
        };
        if let TargetSpec::Cluster { .. } = self.spec {
            // INFO of one node (the memory check's figures are one master's).
            self.kind.push_str("-cluster");
            self.server.push_str(" cluster");
        }
        let number = |name| info_field(&text, name).and_then(|v| v.parse().ok());
        self.memory = ServerMemory {
            used_bytes: number("used_memory").unwrap_or(0),
            max_bytes: number("maxmemory").unwrap_or(0),
            system_bytes: number("total_system_memory").unwrap_or(0),
        };
        Ok(())
    }

    fn info(&mut self) -> Result<String, BenchError> {
        let Place::Remote { connection, .. } = &mut self.place else {
            return Ok(String::new());
        };
        let reply = connection
            .query(&redis::cmd("INFO"))
            .map_err(|e| server_error(&self.spec.label(), e))?;
        // A cluster connection asks every node: take one node's answer.
        let reply = match reply {
            Value::Map(mut nodes) if !nodes.is_empty() => nodes.swap_remove(0).1,
            other => other,
        };
        Ok(as_bytes(&reply)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default())
    }

    /// The in-process keyspace, for the embedded target.
    pub fn keyspace(&self) -> Option<&Arc<Keyspace>> {
        match &self.place {
            Place::Embedded { keyspace, .. } => Some(keyspace),
            Place::Remote { .. } => None,
        }
    }

    /// Sends `commands` in one pipeline (remote) or runs them in turn (embedded); any error
    /// reply fails the batch.
    pub fn pipeline(&mut self, commands: &[Argv]) -> Result<(), BenchError> {
        let label = self.spec.label();
        match &mut self.place {
            Place::Embedded { keyspace, .. } => {
                for argv in commands {
                    keyspace
                        .execute(argv)
                        .map_err(|e| server_error(&label, e))?;
                }
                Ok(())
            }
            Place::Remote { connection, .. } => {
                let replies = connection
                    .pipeline(commands.iter().map(command).collect())
                    .map_err(|e| server_error(&label, e))?;
                match replies.iter().find(|v| matches!(v, Value::ServerError(_))) {
                    Some(Value::ServerError(e)) => Err(server_error(&label, format!("{e:?}"))),
                    _ => Ok(()),
                }
            }
        }
    }

    /// Runs `commands` as one atomic batch: inside one `Keyspace::run` in process, as
    /// `MULTI`/`EXEC` over RESP. A reader blocked on the key is served once, after the whole
    /// batch, as it would be by a producer's transaction; any error reply fails the batch.
    pub fn append_atomically(&mut self, commands: &[Argv]) -> Result<(), BenchError> {
        let label = self.spec.label();
        match &mut self.place {
            Place::Embedded { keyspace, .. } => keyspace.run(|db, snapshot| {
                for argv in commands {
                    echomq::engine::command::execute(db, snapshot, argv)
                        .map_err(|e| server_error(&label, e))?;
                }
                Ok(())
            }),
            Place::Remote { connection, .. } => {
                let key = commands.first().and_then(|argv| argv.get(1));
                let replies = connection
                    .atomic(
                        key.map_or(&[][..], Vec::as_slice),
                        commands.iter().map(command).collect(),
                    )
                    .map_err(|e| server_error(&label, e))?;
                match replies.iter().find(|v| matches!(v, Value::ServerError(_))) {
                    Some(Value::ServerError(e)) => Err(server_error(&label, format!("{e:?}"))),
                    _ if replies.len() != commands.len() => Err(server_error(
                        &label,
                        format!("EXEC ran {} of {} commands", replies.len(), commands.len()),
                    )),
                    _ => Ok(()),
                }
            }
        }
    }

    /// Starts a [`StreamConsumer`] with a no-op handler on this target: on the engine in
    /// process, or on a connection of its own to the server.
    pub fn start_consumer(
        &self,
        subscription: Subscription,
        settings: ConsumerSettings,
    ) -> Result<StreamConsumer, BenchError> {
        let handler = |_: Delivery| Ok::<(), Infallible>(());
        let started = match &self.place {
            Place::Embedded { feed, .. } => {
                StreamConsumer::start(feed.backend(), subscription, settings, handler)
            }
            Place::Remote {
                feed: RemoteFeed::One(feed),
                ..
            } => StreamConsumer::start(feed.backend(), subscription, settings, handler),
            Place::Remote {
                feed: RemoteFeed::Cluster(feed),
                ..
            } => StreamConsumer::start(feed.backend(), subscription, settings, handler),
        };
        started.map_err(|e| self.error(e))
    }

    /// Runs a command whose reply is an integer (XTRIM, XACK, DEL).
    pub fn int(&mut self, argv: &Argv) -> Result<i64, BenchError> {
        let label = self.spec.label();
        let bad = |what: &str| server_error(&label, format!("unexpected reply to {what}"));
        match &mut self.place {
            Place::Embedded { keyspace, .. } => match keyspace.execute(argv) {
                Ok(Reply::Int(n)) => Ok(n),
                Ok(_) => Err(bad("an integer command")),
                Err(e) => Err(server_error(&label, e)),
            },
            Place::Remote { connection, .. } => {
                let reply = connection
                    .query(&command(argv))
                    .map_err(|e| server_error(&label, e))?;
                as_int(&reply).ok_or_else(|| bad("an integer command"))
            }
        }
    }

    /// Runs a command and ignores its (non-error) reply (XADD, XGROUP CREATE).
    pub fn run(&mut self, argv: &Argv) -> Result<(), BenchError> {
        let label = self.spec.label();
        match &mut self.place {
            Place::Embedded { keyspace, .. } => keyspace
                .execute(argv)
                .map(drop)
                .map_err(|e| server_error(&label, e)),
            Place::Remote { connection, .. } => connection
                .query(&command(argv))
                .map(drop)
                .map_err(|e| server_error(&label, e)),
        }
    }

    /// XINFO STREAM's `length` and `radix-tree-keys` (macro nodes).
    pub fn stream_info(&mut self, key: &str) -> Result<(u64, u64), BenchError> {
        let label = self.spec.label();
        let bad = || server_error(&label, "unexpected XINFO STREAM reply");
        let argv: Argv = vec![
            b"XINFO".to_vec(),
            b"STREAM".to_vec(),
            key.as_bytes().to_vec(),
        ];
        let mut length = None;
        let mut nodes = None;
        match &mut self.place {
            Place::Embedded { keyspace, .. } => {
                let reply = keyspace
                    .execute(&argv)
                    .map_err(|e| server_error(&label, e))?;
                let pairs = match reply {
                    Reply::Map(pairs) => pairs,
                    _ => return Err(bad()),
                };
                for (k, v) in pairs {
                    match (k, v) {
                        (Reply::Bulk(k), Reply::Int(n)) if &k[..] == b"length" => length = Some(n),
                        (Reply::Bulk(k), Reply::Int(n)) if &k[..] == b"radix-tree-keys" => {
                            nodes = Some(n)
                        }
                        _ => {}
                    }
                }
            }
            Place::Remote { connection, .. } => {
                let reply = connection
                    .query(&command(&argv))
                    .map_err(|e| server_error(&label, e))?;
                let pairs: Vec<(Value, Value)> = match reply {
                    Value::Map(pairs) => pairs,
                    Value::Array(flat) => flat
                        .chunks(2)
                        .filter_map(|kv| match kv {
                            [k, v] => Some((k.clone(), v.clone())),
                            _ => None,
                        })
                        .collect(),
                    _ => return Err(bad()),
                };
                for (k, v) in &pairs {
                    match as_bytes(k) {
                        Some(b"length") => length = as_int(v),
                        Some(b"radix-tree-keys") => nodes = as_int(v),
                        _ => {}
                    }
                }
            }
        }
        match (length, nodes) {
            (Some(l), Some(n)) if l >= 0 && n >= 0 => Ok((l as u64, n as u64)),
            _ => Err(bad()),
        }
    }

    /// `read_window` through the feed; returns the entries read.
    pub fn read_window(
        &self,
        queue: &str,
        name: &str,
        t0: OffsetDateTime,
        t1: OffsetDateTime,
    ) -> Result<usize, BenchError> {
        let read = match &self.place {
            Place::Embedded { feed, .. } => feed.read_window(queue, name, t0, t1, None),
            Place::Remote {
                feed: RemoteFeed::One(feed),
                ..
            } => feed.read_window(queue, name, t0, t1, None),
            Place::Remote {
                feed: RemoteFeed::Cluster(feed),
                ..
            } => feed.read_window(queue, name, t0, t1, None),
        };
        read.map(|records| records.len()).map_err(|e| self.error(e))
    }

    /// Deletes every key matching `pattern` (SCAN + DEL, so a big keyspace is not blocked);
    /// returns how many were deleted.
    pub fn delete_matching(&mut self, pattern: &str) -> Result<u64, BenchError> {
        let label = self.spec.label();
        match &mut self.place {
            Place::Embedded { keyspace, .. } => {
                let prefix = pattern.trim_end_matches('*').as_bytes().to_vec();
                Ok(keyspace.run(|db, _| {
                    let keys: Vec<_> = db
                        .keys()
                        .filter(|k| k.starts_with(&prefix))
                        .cloned()
                        .collect();
                    for key in &keys {
                        db.remove(key);
                    }
                    keys.len() as u64
                }))
            }
            Place::Remote { connection, .. } => {
                let mut cursor = 0u64;
                let mut deleted = 0u64;
                loop {
                    let (next, keys) = connection
                        .scan(pattern, cursor)
                        .map_err(|e| server_error(&label, e))?;
                    if !keys.is_empty() {
                        let reply = connection
                            .query(redis::cmd("DEL").arg(&keys))
                            .map_err(|e| server_error(&label, e))?;
                        deleted += as_int(&reply)
                            .and_then(|n| u64::try_from(n).ok())
                            .unwrap_or(0);
                    }
                    if next == 0 {
                        return Ok(deleted);
                    }
                    cursor = next;
                }
            }
        }
    }
}

fn command(argv: &Argv) -> redis::Cmd {
    let mut command = redis::Cmd::new();
    for arg in argv {
        command.arg(arg.as_slice());
    }
    command
}

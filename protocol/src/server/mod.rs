//! The Redis-protocol server: accepts connections and runs one task per client.
//!
//! [`Server::bind`] binds (port 0 picks a free port) and [`Server::run`] serves until
//! [`ServerHandle::shutdown`] or the future is dropped. Everything connections share lives in
//! [`Shared`]: the keyspace (16 databases), the run-time [`Settings`], the [`Stats`] and the
//! table of connected clients (CLIENT LIST / KILL, `connected_clients`), and the archive
//! trims fold into when one is configured ([`archive`]).

pub mod accept;
pub mod archive;
pub(crate) mod client;
mod connection;
pub mod fd_limit;
pub mod output_limit;
pub mod protected;
pub mod settings;
pub mod stats;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use echomq_archive::Archive;
use echomq_engine::{Clock, Config as EngineConfig, Keyspace, SystemClock};
use parking_lot::{Mutex, RwLock};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinSet;

pub use archive::{ArchiveReplica, ServerArchive};
pub use client::ClientInfo;
pub use settings::Settings;
pub use stats::Stats;

use crate::resp::Protocol;

/// How to start a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind.
    pub bind: String,
    /// Port; 0 picks a free one.
    pub port: u16,
    /// `requirepass`; empty for none.
    pub requirepass: String,
    /// Protocol new connections speak before HELLO: RESP2, as Redis; RESP3 is a test switch
    /// (like the Redis test suite's `--force-resp3`).
    pub default_protocol: Protocol,
    /// Number of databases (SELECT).
    pub databases: usize,
    /// Bytes of memory in use, for INFO and `maxmemory` (by default the resident set size;
    /// an embedder with a counting allocator can pass its figure).
    pub memory_used: fn() -> u64,
    /// The archive that trims of covered streams fold into (`echomq serve --archive`).
    pub archive: Option<Arc<Archive>>,
    /// The replicator of `archive` (`echomq serve --replicate`): notified after each fold,
    /// reported in INFO. Ignored without an archive.
    pub archive_replica: Option<ArchiveReplica>,
    /// `tcp-backlog`: the listen backlog (Redis's default 511; the kernel caps it at
    /// `net.core.somaxconn`).
    pub tcp_backlog: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1".into(),
            port: 6379,
            requirepass: String::new(),
            default_protocol: Protocol::Resp2,
            databases: 16,
            memory_used: resident_bytes,
            archive: None,
            archive_replica: None,
            tcp_backlog: settings::TCP_BACKLOG_DEFAULT,
        }
    }
}

/// How long a memory reading stays good for the `maxmemory` check.
pub const MEMORY_SAMPLE_MS: u64 = 100;

/// What every connection shares.
pub struct Shared {
    /// The data.
    pub keyspace: Arc<Keyspace>,
    /// Run-time settings (CONFIG).
    pub settings: RwLock<Settings>,
    /// Counters (INFO).
    pub stats: Stats,
    /// Connected clients by id.
    pub clients: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
    /// The next client id.
    next_client_id: AtomicU64,
    /// When the server started.
    pub started: Instant,
    /// Protocol of new connections.
    pub default_protocol: Protocol,
    /// Bytes of memory in use, as INFO reports it and `maxmemory` checks it.
    pub memory_used: fn() -> u64,
    /// The last `memory_used` reading and when it was taken: write commands check
    /// `maxmemory` against it instead of measuring each time.
    memory_sample: Mutex<Option<(Instant, u64)>>,
    /// The archive, when the server has one.
    pub archive: Option<ServerArchive>,
    /// Signalled to stop the server.
    shutdown: Notify,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("keyspace", &self.keyspace)
            .finish_non_exhaustive()
    }
}

/// Resident set size from `/proc/self/statm`, the default memory measure; 0 if unreadable.
pub fn resident_bytes() -> u64 {
    const PAGE_BYTES: u64 = 4096;
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|pages| pages.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * PAGE_BYTES)
}

impl Shared {
    /// The keyspace's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.keyspace.clock()
    }

    /// The engine's settings (stream node limits).
    pub fn engine_config(&self) -> &EngineConfig {
        self.keyspace.config()
    }

    /// Memory in use for the `maxmemory` check, measured at most every
    /// [`MEMORY_SAMPLE_MS`] milliseconds (reading it costs a file read by default).
    pub fn memory_in_use(&self) -> u64 {
        let mut sample = self.memory_sample.lock();
        match *sample {
            Some((at, bytes)) if at.elapsed().as_millis() < u128::from(MEMORY_SAMPLE_MS) => bytes,
            _ => {
                let bytes = (self.memory_used)();
                *sample = Some((Instant::now(), bytes));
                bytes
            }
        }
    }

    fn next_id(&self) -> u64 {
        self.next_client_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Stops a running server from elsewhere.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

impl ServerHandle {
    /// Stops accepting and closes every connection.
    pub fn shutdown(&self) {
        self.shared.shutdown.notify_one();
    }

    /// The shared state (keyspace, settings, stats).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Server {
    /// Binds with the system clock.
    pub async fn bind(config: ServerConfig) -> std::io::Result<Server> {
        Server::bind_with_clock(config, Arc::new(SystemClock)).await
    }

    /// Binds with the given clock (a manual clock for tests).
    pub async fn bind_with_clock(
        config: ServerConfig,
        clock: Arc<dyn Clock>,
    ) -> std::io::Result<Server> {
        let listener = listen(&config.bind, config.port, config.tcp_backlog).await?;
        let port = listener.local_addr()?.port();
        let keyspace = Arc::new(Keyspace::with_databases(
            clock,
            Arc::new(EngineConfig::default()),
            config.databases,
        ));
        // Room for maxclients descriptors, or fewer clients (Redis's adjustOpenFilesLimit).
        let maxclients = fd_limit::adjust_at_start(settings::MAXCLIENTS_DEFAULT)
            .map_err(std::io::Error::other)?;
        let settings = Settings {
            maxclients,
            requirepass: config.requirepass.clone(),
            port,
            bind: config.bind.clone(),
            databases: config.databases as u64,
            tcp_backlog: config.tcp_backlog,
            ..Settings::default()
        };
        let shared = Arc::new(Shared {
            keyspace,
            settings: RwLock::new(settings),
            stats: Stats::default(),
            clients: Mutex::new(BTreeMap::new()),
            next_client_id: AtomicU64::new(1),
            started: Instant::now(),
            default_protocol: config.default_protocol,
            memory_used: config.memory_used,
            memory_sample: Mutex::new(None),
            archive: config
                .archive
                .map(|archive| ServerArchive::new(archive, config.archive_replica)),
            shutdown: Notify::new(),
        });
        if let Some(archive) = &shared.archive {
            archive
                .seed_watermarks(&shared.keyspace)
                .map_err(std::io::Error::other)?;
        }
        Ok(Server { listener, shared })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A handle to stop it and reach its state.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Serves until shut down.
    pub async fn run(self) {
        let Server { listener, shared } = self;
        let mut connections = JoinSet::new();
        let mut accept_errors = accept::AcceptErrors::default();
        let reopener = shared.archive.is_some().then(|| {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                if let Some(archive) = &shared.archive {
                    archive.keep_open().await;
                }
            })
        });
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (socket, peer) = match accepted {
                        Ok(pair) => {
                            accept_errors.succeeded();
                            pair
                        }
                        Err(e) => {
                            let pause = accept_errors.failed(&e);
                            if !pause.is_zero() {
                                tokio::time::sleep(pause).await;
                            }
                            continue;
                        }
                    };
                    shared.stats.total_connections_received.fetch_add(1, Ordering::Relaxed);
                    let (maxclients, denied) = {
                        let settings = shared.settings.read();
                        (
                            settings.maxclients,
                            protected::refuses(settings.protected_mode, &settings.requirepass, &peer),
                        )
                    };
                    if shared.clients.lock().len() as u64 >= maxclients {
                        shared.stats.rejected_connections.fetch_add(1, Ordering::Relaxed);
                        connections.spawn(connection::refuse(socket));
                        continue;
                    }
                    if denied {
                        shared.stats.rejected_connections.fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(%peer, "protected mode: refused a client not on loopback");
                        connections.spawn(connection::deny(socket));
                        continue;
                    }
                    let _ = socket.set_nodelay(true);
                    let local = socket.local_addr().ok();
                    let id = shared.next_id();
                    let info = Arc::new(ClientInfo::new(id, peer, local, shared.default_protocol));
                    shared.clients.lock().insert(id, Arc::clone(&info));
                    connections.spawn(connection::serve(socket, Arc::clone(&shared), info));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                () = shared.shutdown.notified() => break,
            }
        }
        if let Some(reopener) = reopener {
            reopener.abort();
        }
        connections.abort_all();
        while connections.join_next().await.is_some() {}
        shared.clients.lock().clear();
    }
}

/// Binds `host:port` (the first address it resolves to) and listens with `backlog`.
async fn listen(host: &str, port: u16, backlog: u32) -> std::io::Result<TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        match socket.bind(addr).and_then(|()| socket.listen(backlog)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::AddrNotAvailable, "no address to bind")
    }))
}

/// Client names may not contain spaces or special characters.
pub fn valid_client_name(name: &[u8]) -> bool {
    name.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

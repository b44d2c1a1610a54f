//! The Redis-protocol server: accepts connections and runs one task per client.
//!
//! [`Server::bind`] binds (port 0 picks a free port) and [`Server::run`] serves until
//! [`ServerHandle::shutdown`] or the future is dropped. What connections share is the
//! crate's `state` module's server state; each connection (`connection.rs`) runs its requests
//! through the dispatcher function it is handed (the commands' `execute`, wired here), so the
//! connection loop never names a command. Embedders reach a running server through
//! [`ServerHandle`]: its keyspace, CONFIG SET by name, and shutdown.

mod connection;

use std::net::SocketAddr;
use std::sync::Arc;

use echomq_archive::Archive;
use echomq_engine::{Clock, Config as EngineConfig, Keyspace, SystemClock};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

pub use crate::state::MEMORY_SAMPLE_MS;
pub use crate::state::archive::ArchiveReplica;
pub use crate::state::resident_bytes;
pub use crate::state::settings::SettingError;

use crate::resp::Protocol;
use crate::state::{Execute, ServerArchive, ServerState, Settings};

/// The dispatcher every connection runs its requests through.
const EXECUTE: Execute = crate::cmd::execute;

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
        }
    }
}

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    state: Arc<ServerState>,
}

/// A running server as its embedder sees it: the data, CONFIG SET by name, and shutdown.
/// Cheap to clone; every clone reaches the same server.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    state: Arc<ServerState>,
}

impl ServerHandle {
    /// Stops accepting and closes every connection.
    pub fn shutdown(&self) {
        self.state.shutdown();
    }

    /// The keyspace the server serves (database 0 is what clients see first).
    pub fn keyspace(&self) -> &Arc<Keyspace> {
        self.state.keyspace()
    }

    /// Sets one run-time parameter, as `CONFIG SET name value` does (names as CONFIG GET
    /// lists them, any case). Immutable parameters (`port`, `bind`, `databases`) and unknown
    /// names are refused with their own [`SettingError`].
    pub fn config_set(&self, name: &str, value: &str) -> Result<(), SettingError> {
        self.state.config_set(name, value)
    }

    /// Starts persistence once the settings are in (call once, before or while serving): with
    /// `appendonly yes`, loads the AOF (clients get `-LOADING` meanwhile) and then appends
    /// every write. An error (a corrupt or unreadable AOF) means the server must not serve.
    pub fn start_persistence(&self) -> Result<(), crate::AofError> {
        self.state.start_persistence().map(|_| ())
    }

    /// The first step of [`ServerHandle::start_persistence`], to call before serving: from
    /// here on, with `appendonly yes`, clients get `-LOADING` until the load is done.
    pub fn prepare_persistence(&self) {
        self.state.prepare_persistence();
    }

    /// The state behind the server, for the crate's fuzz target (which runs requests without
    /// connections).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn state(&self) -> &Arc<ServerState> {
        &self.state
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
        let listener = TcpListener::bind((config.bind.as_str(), config.port)).await?;
        let port = listener.local_addr()?.port();
        let keyspace = Arc::new(Keyspace::with_databases(
            clock,
            Arc::new(EngineConfig::default()),
            config.databases,
        ));
        let settings = Settings {
            requirepass: config.requirepass.clone(),
            port,
            bind: config.bind.clone(),
            databases: config.databases as u64,
            ..Settings::default()
        };
        let archive = config
            .archive
            .map(|archive| ServerArchive::new(archive, config.archive_replica));
        let state = Arc::new(ServerState::new(
            keyspace,
            settings,
            config.default_protocol,
            config.memory_used,
            archive,
        ));
        Ok(Server { listener, state })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// A handle to stop it and reach its state.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            state: Arc::clone(&self.state),
        }
    }

    /// Serves until shut down.
    pub async fn run(self) {
        let Server { listener, state } = self;
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (socket, peer) = match accepted {
                        Ok(pair) => pair,
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed");
                            continue;
                        }
                    };
                    state.stats().connection_received();
                    if !state.has_room() {
                        state.stats().connection_rejected();
                        connections.spawn(connection::refuse(socket));
                        continue;
                    }
                    let _ = socket.set_nodelay(true);
                    let local = socket.local_addr().ok();
                    let client = state.connect(peer, local);
                    let serve = connection::serve(socket, Arc::clone(&state), client, EXECUTE);
                    connections.spawn(serve);
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                () = state.stopping() => break,
            }
        }
        connections.abort_all();
        while connections.join_next().await.is_some() {}
        state.forget_clients();
    }
}

//! The Redis-protocol server: accepts connections and runs one task per client.
//!
//! [`Server::bind`] binds (port 0 picks a free port) and [`Server::run`] serves until
//! [`ServerHandle::shutdown`] or the future is dropped. What connections share is the
//! crate's `state` module's server state; each connection (`connection.rs`) runs its requests
//! through the dispatcher function it is handed (the commands' `execute`, wired here), so the
//! connection loop never names a command. Embedders reach a running server through
//! [`ServerHandle`]: its keyspace, CONFIG SET by name, and shutdown.
//!
//! At the door, as Redis: `maxclients` (fitted to the open-files limit at bind), protected
//! mode ([`protected`]), and an accept loop that pauses when it runs out of descriptors
//! ([`accept`]); the listen backlog is `tcp-backlog`. The TCP ports' listeners are the
//! state's, which CONFIG SET of `port`, `bind` or `tls-port` replaces ([`sockets`]). With an archive, a task reopens it after
//! a storage failure and archived streams start at their W.

pub mod accept;
mod buffers;
mod connection;
mod cron;
mod listeners;
pub(crate) mod pipeline;
pub mod protected;
pub(crate) mod sockets;
pub(crate) mod tls;
mod transport;
mod turn;

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use echomq_archive::Archive;
use echomq_engine::{Clock, Config as EngineConfig, Keyspace};
use tokio::task::JoinSet;

pub use crate::cmd::rename::set_renames as set_command_renames;
pub use crate::state::MEMORY_SAMPLE_MS;
pub use crate::state::archive::ArchiveReplica;
pub use crate::state::settings::{SettingError, TCP_BACKLOG_DEFAULT};
pub use crate::state::{heap_or_resident_bytes, resident_bytes};

use crate::resp::Protocol;
use crate::state::addr::ClientAddr;
use crate::state::sockets::{PortKind, Slot};
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
    /// The memory measure INFO's `used_memory` and `maxmemory` count from (what it grew by
    /// since start): by default the heap bytes of [`crate::CountingAlloc`] when the binary
    /// installed it as its global allocator, else the resident set size.
    pub memory_used: fn() -> u64,
    /// The archive that trims of covered streams fold into (`echomq serve --archive`).
    pub archive: Option<Arc<Archive>>,
    /// The replicator of `archive` (`echomq serve --replicate`): notified after each fold,
    /// reported in INFO. Ignored without an archive.
    pub archive_replica: Option<ArchiveReplica>,
    /// `tcp-backlog`: the listen backlog (Redis's default 511; the kernel caps it at
    /// `net.core.somaxconn`).
    pub tcp_backlog: u32,
    /// `cluster-enabled`: serve as a one-node Redis Cluster owning all 16384 slots.
    pub cluster_enabled: bool,
    /// Whether the process's working directory follows `dir`, as redis-server's: `dir`
    /// changes directory (at start and on CONFIG SET) and CONFIG GET answers the absolute
    /// path. For a server that owns its process (`echomq serve`); an embedded one (the
    /// default) leaves the process's directory alone and joins paths to `dir`.
    pub dir_is_cwd: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1".into(),
            port: 6379,
            requirepass: String::new(),
            default_protocol: Protocol::Resp2,
            databases: 16,
            memory_used: heap_or_resident_bytes,
            archive: None,
            archive_replica: None,
            tcp_backlog: crate::state::settings::TCP_BACKLOG_DEFAULT,
            cluster_enabled: false,
            dir_is_cwd: false,
        }
    }
}

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    /// The port [`ServerConfig`] asked for (0: any, or none beside another listener).
    port_asked: u16,
    /// The unix socket listener ([`Server::open_listeners`]); the TCP ports' are the state's
    /// (one per `bind` address each; the plain port's none after [`Server::open_listeners`]
    /// with port 0 and another listener, Redis's `port 0`), which CONFIG SET may change.
    more: listeners::Listeners,
    state: Arc<ServerState>,
}

impl Drop for Server {
    /// A server dropped without running closes the ports it bound.
    fn drop(&mut self) {
        if !self.state.sockets().is_serving() {
            self.state.sockets().close_all();
        }
    }
}

/// Closes the server's ports when dropped.
struct ClosePorts(Arc<ServerState>);

impl Drop for ClosePorts {
    fn drop(&mut self) {
        self.0.sockets().close_all();
    }
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

    /// What Redis does on SIGTERM or SIGINT: the final save first (with `save` points
    /// configured), then the stop. When that save fails the server keeps serving (Redis's log
    /// lines say why) and this returns `false`; the operator fixes the disk and signals
    /// again, or stops it with `SHUTDOWN NOSAVE`. Blocks while saving: call it off the
    /// runtime's threads.
    pub fn shutdown_on_signal(&self) -> bool {
        if !self.state.save_before_signal_exit() {
            return false;
        }
        self.state.shutdown();
        true
    }

    /// Why the server stopped on its own, if it did: an AOF write or fsync that failed under
    /// `appendfsync always` (Redis exits with status 1 then; so should the embedder).
    pub fn fatal_error(&self) -> Option<String> {
        self.state.aof().fatal_error()
    }

    /// The keyspace the server serves (database 0 is what clients see first).
    pub fn keyspace(&self) -> &Arc<Keyspace> {
        self.state.keyspace()
    }

    /// Sets one run-time parameter, as `CONFIG SET name value` does (names as CONFIG GET
    /// lists them, any case). Immutable parameters (`databases` …), unknown names, and, once
    /// the server runs, `port`, `bind` and `tls-port` (a client's CONFIG SET opens new ports;
    /// before [`Server::run`] they only set the values [`Server::open_listeners`] uses) are
    /// refused with their own [`SettingError`].
    pub fn config_set(&self, name: &str, value: &str) -> Result<(), SettingError> {
        self.state.config_set(name, value)
    }

    /// Sets `aclfile` (a config file's line; CONFIG SET refuses it).
    pub fn set_aclfile(&self, path: &str) {
        self.state.set_aclfile(path);
    }

    /// Records the config file the server runs with (INFO's `config_file`, what CONFIG
    /// REWRITE rewrites); made absolute here.
    pub fn set_config_file(&self, path: &std::path::Path) {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut settings = self.state.settings().clone();
        settings.config_file = path.display().to_string();
        self.state.replace_settings(settings);
    }

    /// The value CONFIG GET shows for `name` (a parameter or an accepted directive).
    pub fn config_get(&self, name: &str) -> Option<String> {
        let settings = self.state.settings();
        let engine = self.state.engine_config();
        match crate::state::settings::param(name) {
            Some(p) => Some((p.get)(&settings, engine)),
            None => crate::config_file::directives::lookup(name)
                .map(|d| crate::config_file::current::value(&settings, engine, d)),
        }
    }

    /// Sets a directive echomq accepts without implementing it (shown by CONFIG GET, kept by
    /// CONFIG REWRITE); `Err` holds Redis's reason for a refused value.
    pub fn config_accept(
        &self,
        directive: &'static crate::config_file::directives::Directive,
        value: &str,
    ) -> Result<(), String> {
        let value =
            crate::config_file::current::accept(directive, value).map_err(|e| e.to_string())?;
        let mut settings = self.state.settings().clone();
        settings.accepted.insert(directive.name, value);
        self.state.replace_settings(settings);
        Ok(())
    }

    /// Applies a config file's `user <name> <rules…>` line (its words).
    pub fn config_user(&self, words: &[&str]) -> Result<(), String> {
        let mut users = self.state.acl_users();
        self.state
            .acl()
            .configure_user(&mut users, words, self.state.settings().acl_pubsub_all)
    }

    /// Loads the users of the `aclfile`, if one is set: call once the config is in, before
    /// serving. Users in the config file and an ACL file are refused together, as in Redis.
    pub fn load_acl_file(&self, users_configured: bool) -> Result<(), String> {
        let path = self.state.settings().aclfile.clone();
        if path.is_empty() {
            return Ok(());
        }
        if users_configured {
            return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
        }
        let mut users = self.state.acl_users();
        self.state
            .acl()
            .load_file(&mut users, &path, self.state.settings().acl_pubsub_all)
    }

    /// Starts persistence once the settings are in (call once, before or while serving): with
    /// `appendonly yes`, loads the AOF (clients get `-LOADING` meanwhile) and then appends
    /// every write. An error (a corrupt or unreadable AOF) means the server must not serve.
    pub fn start_persistence(&self) -> Result<(), crate::PersistError> {
        self.state
            .start_persistence(crate::cmd::replay::replay)
            .map(|_| ())
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
        Server::bind_with_clock(config, Arc::new(echomq_engine::SystemClock)).await
    }

    /// Binds with the given clock (a manual clock for tests).
    pub async fn bind_with_clock(
        config: ServerConfig,
        clock: Arc<dyn Clock>,
    ) -> std::io::Result<Server> {
        let listeners = sockets::fresh(sockets::open_set(
            &config.bind,
            config.port,
            config.tcp_backlog,
            &[],
        )?);
        let port = listeners
            .first()
            .map_or(Ok(config.port), |l| l.local_addr().map(|a| a.port()))?;
        let engine_config = EngineConfig::default();
        engine_config.set_cluster_enabled(config.cluster_enabled);
        let keyspace = Arc::new(Keyspace::with_databases(
            clock,
            Arc::new(engine_config),
            // A cluster has database 0 only, as Redis's (SELECT, MOVE, COPY ... DB refuse more).
            if config.cluster_enabled {
                1
            } else {
                config.databases
            },
        ));
        // Room for maxclients descriptors, or fewer clients (Redis's adjustOpenFilesLimit).
        let maxclients =
            crate::state::fd_limit::adjust_at_start(crate::state::settings::MAXCLIENTS_DEFAULT)
                .map_err(std::io::Error::other)?;
        let settings = Settings {
            maxclients,
            requirepass: config.requirepass.clone(),
            port,
            bind: config.bind.clone(),
            databases: config.databases as u64,
            tcp_backlog: config.tcp_backlog,
            cluster_enabled: config.cluster_enabled,
            cluster_node_id: crate::cmd::new_node_id(),
            dir_is_cwd: config.dir_is_cwd,
            dir: if config.dir_is_cwd {
                std::env::current_dir()?.display().to_string()
            } else {
                Settings::default().dir
            },
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
            crate::cmd::call_name,
            archive,
        ));
        let events = crate::state::notify::KeyspaceEvents {
            state: Arc::downgrade(&state),
        };
        state
            .keyspace()
            .set_notification_sink(Some(Arc::new(events)));
        let invalidations = crate::state::tracking::Invalidations {
            state: Arc::downgrade(&state),
        };
        state
            .keyspace()
            .set_invalidation_sink(Some(Arc::new(invalidations)));
        if let Some(archive) = state.archive() {
            archive
                .seed_watermarks(state.keyspace())
                .map_err(std::io::Error::other)?;
            archive.start_syncer(Arc::downgrade(&state));
            let trims = crate::state::archive::ArchiveTrims::new(Arc::downgrade(&state));
            state.keyspace().set_trim_hook(Some(Arc::new(trims)));
        }
        let listeners = listeners.into_iter().map(Slot::Fresh).collect();
        state.sockets().replace(PortKind::Plain, listeners);
        Ok(Server {
            port_asked: config.port,
            more: listeners::Listeners::default(),
            state,
        })
    }

    /// The address the plain TCP port listens on (the first `bind` address's; an error when
    /// it has none: `port 0` beside a TLS port or unix socket).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match self.local_addrs().first() {
            Some(addr) => Ok(*addr),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "no plain TCP port (port 0)",
            )),
        }
    }

    /// Every address the plain TCP port listens on, one per `bind` address.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.state.sockets().addrs(PortKind::Plain)
    }

    /// Opens the TLS port (`tls-port`, on every `bind` address) and the unix socket
    /// (`unixsocket`, with `unixsocketperm`) from the settings: call once the configuration
    /// is in, before [`Server::run`]. With port 0 asked for and either of them open, the
    /// plain port closes, as Redis's `port 0` means no TCP port (without them, port 0 keeps
    /// picking a free port). The error says why the server cannot start.
    pub async fn open_listeners(&mut self) -> Result<(), String> {
        let settings = self.state.settings().listeners.clone();
        let bind = self.state.settings().bind.clone();
        let backlog = self.state.settings().tcp_backlog;
        if settings.tls_port != 0 {
            let acceptor = tls::acceptor(&settings)?;
            let opened = sockets::open_set(&bind, settings.tls_port, backlog, &[]);
            let opened = opened.map_err(|e| {
                format!(
                    "Failed listening on port {} (tls), aborting: {e}",
                    settings.tls_port
                )
            })?;
            self.state.set_tls_acceptor(acceptor);
            self.state.sockets().replace(PortKind::Tls, opened);
        }
        self.more = listeners::Listeners::open(&settings)?;
        if self.port_asked == 0 && (settings.tls_port != 0 || !self.more.is_empty()) {
            self.state.sockets().replace(PortKind::Plain, Vec::new());
            self.state.set_port(0);
        }
        Ok(())
    }

    /// What the server listens on, one line each: `ADDR`, `ADDR (tls)`, `PATH (unix socket)`.
    pub fn listening(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .local_addrs()
            .into_iter()
            .map(|a| a.to_string())
            .collect();
        let tls = self.state.sockets().addrs(PortKind::Tls);
        lines.extend(tls.into_iter().map(|a| format!("{a} (tls)")));
        lines.extend(self.more.describe());
        lines
    }

    /// A handle to stop it and reach its state.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            state: Arc::clone(&self.state),
        }
    }

    /// Serves until shut down.
    pub async fn run(mut self) {
        let more = std::mem::take(&mut self.more);
        let state = Arc::clone(&self.state);
        // From here the accept loop owns the ports, and closes them when it ends or its
        // future is dropped.
        state
            .sockets()
            .set_runtime(tokio::runtime::Handle::current());
        drop(self);
        let ports = ClosePorts(Arc::clone(&state));
        {
            let settings = state.settings();
            let warning = protected::startup_warning(
                settings.protected_mode,
                &settings.requirepass,
                &settings.bind,
            );
            if let Some(warning) = warning {
                tracing::warn!("{warning}");
            }
            settings.tuning.apply_allocator_settings();
        }
        let cron = tokio::spawn(cron::run(Arc::clone(&state)));
        let mut connections = JoinSet::new();
        let mut accept_errors = accept::AcceptErrors::default();
        let reopener = state.archive().is_some().then(|| {
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                if let Some(archive) = state.archive() {
                    archive.keep_open().await;
                }
            })
        });
        loop {
            tokio::select! {
                (accepted, kind) = std::future::poll_fn(|cx| state.sockets().poll_accept(cx)) => {
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
                    if kind == PortKind::Tls {
                        if let Some(acceptor) = state.tls_acceptor() {
                            let served = listeners::serve_tls(acceptor, socket, peer, Arc::clone(&state), EXECUTE);
                            connections.spawn(served);
                        }
                        continue;
                    }
                    let _ = socket.set_nodelay(true);
                    let local = socket.local_addr().ok().map(ClientAddr::Tcp);
                    let fd = socket.as_raw_fd();
                    let door = listeners::door(&state, ClientAddr::Tcp(peer), local, fd);
                    connections.spawn(listeners::enter(door, socket, Arc::clone(&state), EXECUTE));
                }
                accepted = listeners::accept_unix(more.unix_listener()) => match accepted {
                    Ok(socket) => {
                        accept_errors.succeeded();
                        let path = more.unix_path();
                        let fd = socket.as_raw_fd();
                        let door = listeners::door(&state, path.clone(), Some(path), fd);
                        connections.spawn(listeners::enter(door, socket, Arc::clone(&state), EXECUTE));
                    }
                    Err(e) => {
                        let pause = accept_errors.failed(&e);
                        if !pause.is_zero() {
                            tokio::time::sleep(pause).await;
                        }
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                () = state.stopping() => break,
            }
        }
        if let Some(reopener) = reopener {
            reopener.abort();
        }
        cron.abort();
        drop(ports);
        connections.abort_all();
        while connections.join_next().await.is_some() {}
        state.forget_clients();
        more.close();
        // As Redis on SIGTERM: with save points configured, a last SAVE before exiting.
        let saving = Arc::clone(&state);
        let _ = tokio::task::spawn_blocking(move || saving.save_on_shutdown()).await;
    }
}

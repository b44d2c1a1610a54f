//! What every connection of one server shares: [`ServerState`], and the contract between the
//! connection loop and the commands.
//!
//! The state module sits under both: the connection loop (`crate::server`) and the commands
//! (`crate::cmd`) read and change the server only through [`ServerState`]'s methods and the
//! per-client [`ClientState`], and neither imports the other. The server wires them together
//! by handing each connection an [`Execute`] function (the commands' dispatcher).
//!
//! - [`ServerState`]: the keyspace handle, the run-time [`Settings`] (CONFIG), the [`Stats`]
//!   (INFO), the table of connected clients ([`clients`]), the archive and its replica
//!   ([`archive`]), the memory reading for `maxmemory` (`used_memory`: what the measure grew
//!   by since start), the [`Identity`] INFO
//!   reports (run and replication ids, start time, memory at start and at peak), and the
//!   shutdown signal. [`latency`] holds the per-command latency histograms of [`Stats`]. Its
//!   fields are private; embedders reach it through [`crate::ServerHandle`].
//! - [`client`]: one client as others see it ([`ClientInfo`]: CLIENT LIST, KILL) and as only
//!   its connection sees it ([`ClientState`]: protocol, database, AUTH, MULTI, WATCH).
//! - [`Action`] and [`Execute`]: what running one request leads to, and the signature of the
//!   function that runs it.
//! - [`output_limit`]: `client-output-buffer-limit` (its parse, and the per-client guard the
//!   connection checks while replies stay unwritten); [`fd_limit`]: `maxclients` fitted to
//!   `RLIMIT_NOFILE` (at start, and for CONFIG SET).
//! - [`pause`]: CLIENT PAUSE; [`slowlog`]: SLOWLOG's entries; [`monitor`]: MONITOR's clients and line format.
//! - [`pubsub`]: the subscriptions of every client, and each client's mailbox of messages;
//!   [`notify`]: keyspace notifications published there; [`tracking`]: client-side caching's
//!   table and its invalidation messages, delivered there too.
//! - `persistence`: what the settings ask of persistence (`crate::persist`, the layer
//!   beneath): the startup load, commits before replies, automatic rewrites, SAVE/BGSAVE and
//!   the save points, `-MISCONF` after a failed save. What only the command table knows (the
//!   AOF's replay, a command id's name) is handed down by the server as a function.

pub(crate) mod addr;
pub(crate) mod archive;
mod archive_sync;
pub(crate) mod client;
pub(crate) mod client_memory;
pub(crate) mod clients;
pub(crate) mod fd_limit;
mod hot_settings;
pub(crate) mod kill_signal;
pub(crate) mod latency;
pub(crate) mod listeners;
pub(crate) mod monitor;
pub(crate) mod notify;
pub(crate) mod output_limit;
pub(crate) mod pause;
mod persistence;
pub(crate) mod protected;
pub(crate) mod pubsub;
pub(crate) mod settings;
pub(crate) mod slowlog;
pub(crate) mod sockets;
pub(crate) mod stats;
pub(crate) mod tracking;
pub(crate) mod tuning;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use echomq_engine::{Batch, BlockedHandle, Clock, Config as EngineConfig, Keyspace, Reply, Wake};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

pub(crate) use archive::ServerArchive;
pub(crate) use client::{ClientInfo, ClientState};
use clients::Clients;
pub(crate) use settings::{SettingError, Settings};
pub(crate) use stats::Stats;

use crate::resp::Protocol;
use stats::CallId;

/// How long a memory reading stays good for the `maxmemory` check.
pub const MEMORY_SAMPLE_MS: u64 = 100;

/// The default memory measure: the heap bytes [`crate::alloc::CountingAlloc`] counts when the
/// binary installed it, else the resident set size.
pub fn heap_or_resident_bytes() -> u64 {
    crate::alloc::heap_bytes().unwrap_or_else(resident_bytes)
}

/// Resident set size from `/proc/self/statm`; 0 if unreadable.
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

/// 40 random hex digits, as Redis's run id and replication id.
fn random_hex_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut id = String::with_capacity(40);
    while id.len() < 40 {
        // Each RandomState is seeded afresh by the standard library.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(id.len());
        id.push_str(&format!("{:016x}", hasher.finish()));
    }
    id.truncate(40);
    id
}

/// Identity and memory figures fixed or tracked since start, for INFO.
#[derive(Debug)]
pub(crate) struct Identity {
    /// INFO's `run_id`.
    pub run_id: String,
    /// INFO's `master_replid`.
    pub replid: String,
    /// The memory measure at start: the empty process, which `used_memory` does not count.
    pub memory_startup: u64,
    /// The highest `used_memory` seen and its Unix time (INFO's `used_memory_peak*`).
    pub memory_peak: Mutex<(u64, u64)>,
}

/// What the connection does after a command.
#[derive(Debug)]
pub(crate) enum Action {
    /// Send this reply.
    Reply(Reply),
    /// The command is blocked; send its reply when the handle has one.
    Block(BlockedHandle),
    /// Send this reply, then close the connection (QUIT).
    Close(Reply),
    /// Send these bytes as they are: a reply [`Reply`] cannot hold (an error echoing bytes that
    /// are not UTF-8).
    Raw(Vec<u8>),
    /// Close the connection at once, dropping the replies not sent yet (a cross-protocol
    /// attack).
    Drop,
    /// CLIENT PAUSE holds the command: run it again once the pause ends (at the latest at
    /// this instant).
    Postpone(Instant),
}

/// Runs one request (`argv`, name first) from a client, in the connection's keyspace `Batch`
/// (its pipelined requests share one acquisition of the lock); `waker` is woken when a
/// blocked command has its reply.
pub(crate) type Execute =
    fn(&ServerState, &mut ClientState, &mut Batch<'_>, &[&[u8]], &Arc<dyn Wake>) -> Action;

/// What every connection of one server shares.
pub(crate) struct ServerState {
    keyspace: Arc<Keyspace>,
    settings: RwLock<Settings>,
    /// What the request path reads of `settings` on every call, in atomics.
    hot: hot_settings::HotSettings,
    stats: Stats,
    clients: Clients,
    pubsub: pubsub::Registry,
    /// Client-side caching's tracking table.
    tracking: tracking::Tracking,
    /// Whether the cron runs active expiry (DEBUG SET-ACTIVE-EXPIRE).
    active_expire: std::sync::atomic::AtomicBool,
    slowlog: slowlog::SlowLog,
    monitors: monitor::Monitors,
    pause: pause::Pause,
    started: Instant,
    /// Protocol of new connections.
    default_protocol: Protocol,
    /// Bytes of memory in use, as INFO reports it and `maxmemory` checks it.
    memory_used: fn() -> u64,
    /// The name a command id's calls are counted under (the command table's, handed down by
    /// the server): CLIENT LIST's `cmd`.
    call_name: fn(CallId) -> &'static str,
    /// The last `memory_used` reading and when it was taken: write commands check
    /// `maxmemory` against it instead of measuring each time.
    memory_sample: Mutex<Option<(Instant, u64)>>,
    /// When memory last went over `maxmemory` without eviction bringing it back (monotonic ns,
    /// 0 = not over), and the time spent so, in total, before it (INFO's
    /// `current_eviction_exceeded_time`, `total_eviction_exceeded_time`).
    eviction_exceeded_since_ns: AtomicU64,
    eviction_exceeded_total_ns: AtomicU64,
    archive: Option<ServerArchive>,
    identity: Identity,
    shutdown: Notify,
    /// The append-only file (see `persistence.rs`).
    aof: Arc<crate::persist::aof::Aof>,
    /// Whether the AOF is being loaded.
    loading: std::sync::atomic::AtomicBool,
    /// RDB snapshots (see `crate::persist::rdb`).
    pub(crate) rdb: Arc<crate::persist::rdb::Rdb>,
    /// The Lua script cache (EVAL, SCRIPT).
    scripts: crate::script::Scripts,
    /// The function libraries (FUNCTION, FCALL).
    functions: crate::script::function::Functions,
    /// A script running past `busy-reply-threshold`.
    busy: Arc<crate::script::busy::Busy>,
    /// The ACL users, log and counters.
    acl: crate::acl::Acl,
    /// The TLS port's configuration, when it has one ([`listeners`]).
    tls: RwLock<Option<tokio_rustls::TlsAcceptor>>,
    /// The plain and TLS ports' listeners ([`sockets`]).
    sockets: sockets::Sockets,
}

impl std::fmt::Debug for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerState")
            .field("keyspace", &self.keyspace)
            .finish_non_exhaustive()
    }
}

impl ServerState {
    /// A server's state before any client connects.
    pub(crate) fn new(
        keyspace: Arc<Keyspace>,
        settings: Settings,
        default_protocol: Protocol,
        memory_used: fn() -> u64,
        call_name: fn(CallId) -> &'static str,
        archive: Option<ServerArchive>,
    ) -> ServerState {
        let started_unix_s = keyspace.clock().now_ms() / 1000;
        let memory_startup = memory_used();
        let identity = Identity {
            run_id: random_hex_id(),
            replid: random_hex_id(),
            memory_startup,
            memory_peak: Mutex::new((0, started_unix_s)),
        };
        ServerState {
            identity,
            keyspace,
            hot: hot_settings::HotSettings::new(&settings),
            settings: RwLock::new(settings),
            stats: Stats::default(),
            clients: Clients::default(),
            pubsub: pubsub::Registry::default(),
            tracking: tracking::Tracking::default(),
            active_expire: std::sync::atomic::AtomicBool::new(true),
            slowlog: slowlog::SlowLog::default(),
            monitors: monitor::Monitors::default(),
            pause: pause::Pause::default(),
            started: Instant::now(),
            default_protocol,
            memory_used,
            call_name,
            memory_sample: Mutex::new(None),
            eviction_exceeded_since_ns: AtomicU64::new(0),
            eviction_exceeded_total_ns: AtomicU64::new(0),
            archive,
            shutdown: Notify::new(),
            aof: Arc::default(),
            loading: std::sync::atomic::AtomicBool::new(false),
            rdb: Arc::new(crate::persist::rdb::Rdb::new(started_unix_s)),
            scripts: crate::script::Scripts::default(),
            functions: crate::script::function::Functions::default(),
            busy: Arc::default(),
            acl: crate::acl::Acl::default(),
            tls: RwLock::new(None),
            sockets: sockets::Sockets::default(),
        }
    }

    /// Whether memory in use is over `maxmemory` (a script's `pre_command_oom_state`: eviction
    /// already ran before the script's command).
    pub(crate) fn over_maxmemory(&self) -> bool {
        let maxmemory = self.hot.maxmemory();
        maxmemory != 0 && self.memory_in_use() > maxmemory
    }

    /// The Lua script cache.
    pub(crate) fn scripts(&self) -> &crate::script::Scripts {
        &self.scripts
    }

    /// A script running past `busy-reply-threshold`.
    pub(crate) fn busy(&self) -> &Arc<crate::script::busy::Busy> {
        &self.busy
    }

    /// `busy-reply-threshold` in milliseconds.
    pub(crate) fn busy_reply_threshold_ms(&self) -> u64 {
        self.hot.busy_reply_threshold_ms()
    }

    /// The function libraries.
    pub(crate) fn functions(&self) -> &crate::script::function::Functions {
        &self.functions
    }

    /// The data.
    pub(crate) fn keyspace(&self) -> &Arc<Keyspace> {
        &self.keyspace
    }

    /// The keyspace's clock.
    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        self.keyspace.clock()
    }

    /// The engine's settings (stream node limits).
    pub(crate) fn engine_config(&self) -> &EngineConfig {
        self.keyspace.config()
    }

    /// The run-time settings, read-locked: hold the guard only for the reads at hand.
    pub(crate) fn settings(&self) -> RwLockReadGuard<'_, Settings> {
        self.settings.read()
    }

    /// Replaces the settings at once (CONFIG SET applies all its pairs or none).
    pub(crate) fn replace_settings(&self, settings: Settings) {
        let mut current = self.settings.write();
        *current = settings;
        self.hot.refresh(&current);
    }

    /// Sets one parameter by its CONFIG name.
    pub(crate) fn config_set(&self, name: &str, value: &str) -> Result<(), SettingError> {
        // Opening ports is CONFIG SET's (`crate::server::sockets`): a running server's are
        // not changed behind its listeners.
        let opens_ports = ["port", "bind", "tls-port"]
            .iter()
            .any(|p| p.eq_ignore_ascii_case(name));
        if opens_ports && self.sockets.is_serving() {
            return Err(SettingError::Immutable(name.to_ascii_lowercase()));
        }
        let mut settings = self.settings.write();
        let dir_before = settings.dir.clone();
        settings::set_one(&mut settings, self.engine_config(), name, value)?;
        if settings.dir_is_cwd && settings.dir != dir_before {
            if let Err(refusal) = settings::change_directory(&settings.dir) {
                settings.dir = dir_before;
                return Err(SettingError::Invalid(refusal));
            }
        }
        self.hot.refresh(&settings);
        Ok(())
    }

    /// `cluster-enabled`, read without the settings lock (the request path asks on every
    /// call).
    pub(crate) fn cluster_enabled(&self) -> bool {
        self.hot.cluster_enabled()
    }

    /// `client-output-buffer-limit` of the normal class (the pubsub class when `pubsub`),
    /// read without the settings lock (on every write to a client).
    pub(crate) fn output_limit(&self, pubsub: bool) -> output_limit::ClassLimit {
        self.hot.output_limit(pubsub)
    }

    /// `proto-max-bulk-len`, read without the settings lock (once per batch of requests).
    pub(crate) fn proto_max_bulk_len(&self) -> u64 {
        self.hot.proto_max_bulk_len()
    }

    /// `client-query-buffer-limit` and `timeout`, read without the settings lock (once per
    /// batch of requests).
    pub(crate) fn connection_limits(&self) -> (u64, u64) {
        self.hot.connection_limits()
    }

    /// `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size`, without the lock.
    pub(crate) fn auto_aof_rewrite(&self) -> (u64, u64) {
        self.hot.auto_aof_rewrite()
    }

    /// The plain and TLS ports' listeners.
    pub(crate) fn sockets(&self) -> &sockets::Sockets {
        &self.sockets
    }

    /// Sets `port` as CONFIG GET shows it (0 when the server has no plain TCP port).
    pub(crate) fn set_port(&self, port: u16) {
        self.settings.write().port = port;
    }

    /// Sets `aclfile` (immutable to CONFIG SET, as in Redis: the config file sets it).
    pub(crate) fn set_aclfile(&self, path: &str) {
        self.settings.write().aclfile = path.to_string();
    }

    /// The ACL users, log and counters.
    pub(crate) fn acl(&self) -> &crate::acl::Acl {
        &self.acl
    }

    /// The ACL users, the default user's password in line with `requirepass`.
    pub(crate) fn acl_users(&self) -> parking_lot::MutexGuard<'_, crate::acl::Users> {
        // Lock order: settings, then users (nothing takes them the other way round).
        let settings = self.settings.read();
        self.acl.users(&settings.requirepass)
    }

    /// The counters.
    pub(crate) fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Seconds since the server started.
    pub(crate) fn uptime_s(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// The memory measure now, the empty process included (for the fragmentation ratio).
    pub(crate) fn memory_measure(&self) -> u64 {
        (self.memory_used)()
    }

    /// Memory in use (`used_memory`), measured now: what the measure grew by since start, so
    /// the binary and the empty process count nothing.
    fn memory_now(&self) -> u64 {
        self.memory_measure()
            .saturating_sub(self.identity.memory_startup)
    }

    /// [`ServerState::memory_now`], raising the recorded peak (INFO, MEMORY STATS).
    pub(crate) fn memory_used(&self) -> u64 {
        let bytes = self.memory_now();
        let mut peak = self.identity.memory_peak.lock();
        if bytes > peak.0 {
            *peak = (bytes, self.clock().now_ms() / 1000);
        }
        bytes
    }

    /// Run id, replication id, start time and memory figures.
    pub(crate) fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Memory in use (`used_memory`) for the `maxmemory` check: exact and read each time with
    /// the counting allocator (a few loads), else measured at most every [`MEMORY_SAMPLE_MS`]
    /// milliseconds (the resident size costs a file read).
    pub(crate) fn memory_in_use(&self) -> u64 {
        if crate::alloc::heap_bytes().is_some() {
            return self.memory_now();
        }
        let mut sample = self.memory_sample.lock();
        match *sample {
            Some((at, bytes)) if at.elapsed().as_millis() < u128::from(MEMORY_SAMPLE_MS) => bytes,
            _ => {
                let bytes = self.memory_now();
                *sample = Some((Instant::now(), bytes));
                bytes
            }
        }
    }

    /// Evicts keys as `maxmemory-policy` says while memory in use is over `maxmemory` (Redis's
    /// `performEvictions`, before each command); returns whether memory is still over it
    /// with nothing left to evict (`EVICT_FAIL`: DENY_OOM commands are refused). A command
    /// that finds the time budget spent is let through, as Redis's `EVICT_RUNNING`.
    pub(crate) fn make_room(&self, batch: &mut Batch<'_>) -> bool {
        let maxmemory = self.hot.maxmemory();
        if maxmemory == 0 {
            return false;
        }
        let used = self.memory_in_use();
        if used <= maxmemory {
            self.eviction_exceeded(false);
            return false;
        }
        let settings = self.engine_config().eviction();
        let exact = || self.memory_now();
        let memory: Option<&dyn Fn() -> u64> = crate::alloc::heap_bytes()
            .is_some()
            .then_some(&exact as &dyn Fn() -> u64);
        let outcome = batch.evict(&settings, used - maxmemory, memory);
        self.eviction_exceeded(outcome != echomq_engine::EvictOutcome::Ok);
        outcome == echomq_engine::EvictOutcome::Fail
    }

    /// Opens (over the limit after eviction) or closes the window INFO's eviction exceeded
    /// times measure, as Redis's `performEvictions` does at its end.
    fn eviction_exceeded(&self, over: bool) {
        let since = self.eviction_exceeded_since_ns.load(Ordering::Relaxed);
        match (over, since) {
            (true, 0) => self
                .eviction_exceeded_since_ns
                .store(crate::monotonic::now_ns().max(1), Ordering::Relaxed),
            (false, since) if since != 0 => {
                let spent = crate::monotonic::now_ns().saturating_sub(since);
                self.eviction_exceeded_total_ns
                    .fetch_add(spent, Ordering::Relaxed);
                self.eviction_exceeded_since_ns.store(0, Ordering::Relaxed);
            }
            _ => {}
        }
    }

    /// INFO's `total_eviction_exceeded_time` and `current_eviction_exceeded_time`, in ms.
    pub(crate) fn eviction_exceeded_ms(&self) -> (u64, u64) {
        let since = self.eviction_exceeded_since_ns.load(Ordering::Relaxed);
        let current = if since == 0 {
            0
        } else {
            crate::monotonic::now_ns().saturating_sub(since)
        };
        let total = self.eviction_exceeded_total_ns.load(Ordering::Relaxed);
        ((total + current) / 1_000_000, current / 1_000_000)
    }

    /// Zeroes the eviction figures (CONFIG RESETSTAT).
    pub(crate) fn reset_eviction_stats(&self) {
        self.eviction_exceeded_total_ns.store(0, Ordering::Relaxed);
        self.keyspace.reset_evicted_keys();
    }

    /// The archive, when the server has one.
    pub(crate) fn archive(&self) -> Option<&ServerArchive> {
        self.archive.as_ref()
    }

    /// Whether another client may connect under `maxclients`.
    pub(crate) fn has_room(&self) -> bool {
        (self.clients.len() as u64) < self.settings.read().maxclients
    }

    /// Registers a new client and returns its connection's state: the default protocol,
    /// database 0, authenticated when no password is required.
    pub(crate) fn connect(
        &self,
        peer: addr::ClientAddr,
        local: Option<addr::ClientAddr>,
    ) -> ClientState {
        let id = self.clients.next_id();
        let info = Arc::new(ClientInfo::new(id, peer, local, self.default_protocol));
        self.clients.insert(Arc::clone(&info));
        // Authenticated as the default user at once when it needs no password (Redis).
        let authenticated = {
            let users = self.acl_users();
            let default = users.default_user();
            default.nopass && default.enabled
        };
        ClientState::new(info, self.default_protocol, authenticated)
    }

    /// A client's connection ended: releases its watches and forgets it.
    pub(crate) fn disconnect(&self, client: ClientState) {
        let watched = client.watched;
        if !watched.is_empty() {
            self.keyspace.run_all(|dbs, _| {
                for (db, key, _) in watched {
                    if let Some(db) = dbs.get_mut(db) {
                        db.unwatch(&key);
                    }
                }
            });
        }
        self.pubsub.forget(&client.info);
        self.monitors.remove(client.info.id);
        self.disable_tracking(&client.info);
        client.info.memory.withdraw(self.clients.memory(), false);
        self.clients.remove(client.info.id);
    }

    /// Every client's memory, and how many were evicted.
    pub(crate) fn clients_memory(&self) -> &client_memory::ClientsMemory {
        self.clients.memory()
    }

    /// Publishes `client`'s memory (see [`client_memory`]) and, if it grew the clients' total
    /// to the eviction limit, evicts clients.
    pub(crate) fn publish_client_memory(&self, client: &ClientInfo) {
        let grew = client.memory.publish(
            self.clients.memory(),
            client.watching(),
            client.pubsub.total(),
        );
        if grew {
            self.evict_clients();
        }
    }

    /// While the clients' memory is at or over `maxmemory-clients`, closes the largest
    /// clients without CLIENT NO-EVICT, largest first (Redis's `evictClients`).
    pub(crate) fn evict_clients(&self) {
        let limit = self.hot.client_eviction_limit();
        let memory = self.clients.memory();
        if limit == 0 || memory.total() < limit {
            return;
        }
        let mut candidates: Vec<(u64, Arc<ClientInfo>)> = self
            .clients
            .list()
            .into_iter()
            .filter(|c| !c.no_evict() && !c.memory.is_evicted())
            .map(|c| (c.memory.total(), c))
            .collect();
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (_, client) in candidates {
            if memory.total() < limit {
                return;
            }
            tracing::info!("Evicting client: {}", self.client_line(&client));
            client.memory.withdraw(memory, true);
            client.kill();
            memory.count_evicted();
        }
        if memory.total() >= limit {
            tracing::warn!("Over client maxmemory after evicting all evictable clients");
        }
    }

    /// Whether the cron runs active expiry (DEBUG SET-ACTIVE-EXPIRE turns it off).
    pub(crate) fn active_expire(&self) -> &std::sync::atomic::AtomicBool {
        &self.active_expire
    }

    /// The tracking table ([`tracking`]).
    pub(crate) fn tracking(&self) -> &tracking::Tracking {
        &self.tracking
    }

    /// Turns CLIENT TRACKING off for `client`, and the keyspace's recording of changed keys
    /// with the last tracking client.
    pub(crate) fn disable_tracking(&self, client: &ClientInfo) {
        if client.is_tracking() {
            self.tracking.disable(client);
            if self.tracking.clients_on() == 0 {
                self.keyspace.set_key_tracking(false);
            }
        }
    }

    /// The connected client with this id.
    pub(crate) fn client_by_id(&self, id: u64) -> Option<Arc<ClientInfo>> {
        self.clients.get(id)
    }

    /// Appends an invalidation push (or `__redis__:invalidate` message) to `client`'s
    /// mailbox, within its output limit.
    pub(crate) fn push_to(&self, client: &ClientInfo, frame: &[u8]) {
        let limits = pubsub::Limits {
            limit: self.hot.output_limit(client.pubsub.is_subscribed()),
            stats: &self.stats,
            call_name: self.call_name,
        };
        pubsub::deliver(client, frame, &limits);
    }

    /// Hands changed keys to the tracking table (the engine's invalidation sink).
    pub(crate) fn invalidate(&self, keys: &[bytes::Bytes], flushed: bool) {
        let deliver = |client: &ClientInfo, frame: &[u8]| self.push_to(client, frame);
        let lookup = |id: u64| self.clients.get(id);
        self.tracking.invalidate(keys, flushed, &deliver, &lookup);
        self.limit_tracked_keys();
    }

    /// Keeps the tracking table within `tracking-table-max-keys`, invalidating keys over it.
    pub(crate) fn limit_tracked_keys(&self) {
        let max_keys = self.hot.tracking_table_max_keys();
        if max_keys > 0 {
            let deliver = |client: &ClientInfo, frame: &[u8]| self.push_to(client, frame);
            let lookup = |id: u64| self.clients.get(id);
            self.tracking.limit_keys(max_keys, &deliver, &lookup);
        }
    }

    /// CLIENT PAUSE's state ([`pause`]).
    pub(crate) fn pause(&self) -> &pause::Pause {
        &self.pause
    }

    /// The MONITOR clients ([`monitor`]).
    pub(crate) fn monitors(&self) -> &monitor::Monitors {
        &self.monitors
    }

    /// Shows `argv`, run by `client` in `db`, to every monitor.
    pub(crate) fn feed_monitors(&self, client: &ClientInfo, db: usize, argv: &[&[u8]]) {
        // Checked before the address is formatted: most calls have no monitor to feed.
        if self.monitors.any() {
            self.feed_monitors_as(client, &client.addr.to_string(), db, argv);
        }
    }

    /// [`ServerState::feed_monitors`] showing `source` instead of the client's address (`lua`
    /// for a script's commands).
    pub(crate) fn feed_monitors_as(
        &self,
        client: &ClientInfo,
        source: &str,
        db: usize,
        argv: &[&[u8]],
    ) {
        if !self.monitors.any() {
            return;
        }
        let now_us = self.clock().now_ms() * 1000;
        let line = monitor::line(now_us, db, source, argv);
        let limits = pubsub::Limits {
            limit: self.hot.output_limit(false),
            stats: &self.stats,
            call_name: self.call_name,
        };
        self.monitors.feed(client.id, &line, &limits);
    }

    /// The slow log ([`slowlog`]).
    pub(crate) fn slowlog(&self) -> &slowlog::SlowLog {
        &self.slowlog
    }

    /// Whether a command that ran `usec` goes in the slow log by the settings as they are now
    /// (two atomic loads and a compare: asked after every call).
    #[inline]
    pub(crate) fn is_slow(&self, usec: u64) -> bool {
        let (slower_than, max_len) = self.hot.slowlog();
        slower_than >= 0 && max_len > 0 && usec >= slower_than.unsigned_abs()
    }

    /// Logs `argv` in the slow log if it ran long enough by the settings.
    #[cold]
    pub(crate) fn log_if_slow(&self, client: &ClientInfo, argv: &[&[u8]], usec: u64) {
        let (slower_than, max_len) = self.hot.slowlog();
        self.slowlog
            .record(slower_than, max_len, argv, usec, || slowlog::Caller {
                peer: client.addr.to_string(),
                name: client.name().unwrap_or_default(),
                time_s: self.clock().now_ms() / 1000,
            });
    }

    /// Who subscribes to what ([`pubsub`]).
    pub(crate) fn pubsub(&self) -> &pubsub::Registry {
        &self.pubsub
    }

    /// Publishes `message` to `channel` (SPUBLISH when `shard`); returns the receivers.
    pub(crate) fn publish(&self, channel: &[u8], message: &[u8], shard: bool) -> usize {
        let limits = pubsub::Limits {
            limit: self.hot.output_limit(true),
            stats: &self.stats,
            call_name: self.call_name,
        };
        self.pubsub.publish(channel, message, shard, &limits)
    }

    /// Publishes one keyspace notification (under the keyspace lock: reads no settings).
    pub(crate) fn publish_event(&self, channel: &[u8], message: &[u8]) -> usize {
        let limits = pubsub::Limits {
            limit: self.hot.output_limit(true),
            stats: &self.stats,
            call_name: self.call_name,
        };
        self.pubsub.publish(channel, message, false, &limits)
    }

    /// The connected clients, in id order.
    /// The CLIENT LIST / CLIENT INFO line of `client` (without the newline).
    pub(crate) fn client_line(&self, client: &ClientInfo) -> String {
        client.line(self.call_name)
    }

    /// Every connected client.
    pub(crate) fn clients(&self) -> Vec<Arc<ClientInfo>> {
        self.clients.list()
    }

    /// How many clients are connected.
    pub(crate) fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// Forgets every client (the server stopped and aborted its connections).
    pub(crate) fn forget_clients(&self) {
        self.clients.clear();
    }

    /// Asks the server to stop.
    pub(crate) fn shutdown(&self) {
        self.shutdown.notify_one();
    }

    /// Completes once [`ServerState::shutdown`] was called.
    pub(crate) fn stopping(&self) -> Notified<'_> {
        self.shutdown.notified()
    }
}

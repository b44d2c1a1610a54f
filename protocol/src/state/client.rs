//! Per-client state: what CLIENT LIST shows ([`ClientInfo`], shared) and what only the
//! connection uses ([`ClientState`]: protocol, database, authentication, transaction, watches).
//!
//! A [`ClientInfo`] is read by other clients' commands (CLIENT LIST, KILL) while its own
//! connection runs, so its changing parts sit behind atomics and a lock, reached only through
//! its methods; [`ClientState`] keeps the shared view's database and protocol in step.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use parking_lot::Mutex;

use super::addr::ClientAddr;
use super::client_memory::ClientMemory;
use super::kill_signal::KillSignal;
use super::pubsub::{Kind, Subscriber};
use super::stats::CallId;
use super::tracking::TrackingOptions;
use crate::resp::Protocol;

/// A connected client as others see it (CLIENT LIST, CLIENT KILL).
#[derive(Debug)]
pub struct ClientInfo {
    /// CLIENT ID.
    pub id: u64,
    /// The peer address.
    pub addr: ClientAddr,
    /// The local address.
    pub laddr: Option<ClientAddr>,
    /// When it connected ([`crate::monotonic::now_ns`]).
    created_ns: u64,
    /// When its last batch of requests was read, on the same clock.
    last_active_ns: AtomicU64,
    /// Its database.
    db: AtomicUsize,
    /// Whether it speaks RESP3.
    resp3: AtomicBool,
    /// CLIENT SETNAME, CLIENT SETINFO LIB-NAME and LIB-VER.
    names: Mutex<Names>,
    /// The last command's [`CallId`] (`usize::MAX` before the first: `NULL`).
    last_command: AtomicUsize,
    /// Signalled by CLIENT KILL.
    kill: KillSignal,
    /// Whether it waits in a blocking command (CLIENT LIST's `b` flag).
    blocked: AtomicBool,
    /// CLIENT NO-EVICT (CLIENT LIST's `e` flag).
    no_evict: AtomicBool,
    /// How many keys it watches (CLIENT LIST's `watch`; INFO's `watching_clients`).
    watching: AtomicUsize,
    /// How many commands its open transaction queued, -1 outside MULTI (CLIENT LIST's
    /// `multi` and `x` flag); the connection's own state mirrored after each command.
    multi: AtomicI64,
    /// Its socket's descriptor, -1 for a client without one (the AOF's, a test's).
    fd: AtomicI32,
    /// Traffic and work, for CLIENT LIST: bytes read and written, reads, commands run, and
    /// the batches of requests run with their commands (Redis's average pipeline length).
    traffic: Traffic,
    /// Signalled by CLIENT UNBLOCK; `unblock_error` says whether with ERROR.
    unblock: KillSignal,
    unblock_error: AtomicBool,
    /// CLIENT NO-TOUCH: its commands (but TOUCH) leave keys' access metadata alone.
    no_touch: AtomicBool,
    /// Its subscriptions' counts and its mailbox of messages.
    pub(crate) pubsub: Subscriber,
    /// CLIENT TRACKING's options ([`super::tracking`]; taken after the tracking table).
    pub(crate) tracking: Mutex<TrackingOptions>,
    /// Whether tracking is on (read on every call without the lock).
    tracking_on: AtomicBool,
    /// What its connection holds in memory ([`super::client_memory`]).
    pub(crate) memory: ClientMemory,
}

/// A client's traffic counters (CLIENT LIST's `tot-net-in`, `tot-net-out`, `read-events`,
/// `tot-cmds`, `avg-pipeline-len-sum`, `avg-pipeline-len-cnt`).
#[derive(Debug, Default)]
struct Traffic {
    net_in: AtomicU64,
    net_out: AtomicU64,
    read_events: AtomicU64,
    commands: AtomicU64,
    batched_commands: AtomicU64,
    batches: AtomicU64,
}

/// A client's self-declared names.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names {
    /// CLIENT SETNAME.
    pub name: Option<Bytes>,
    /// CLIENT SETINFO LIB-NAME.
    pub lib_name: Option<Bytes>,
    /// CLIENT SETINFO LIB-VER.
    pub lib_ver: Option<Bytes>,
    /// The ACL user it runs as (`None`: `default`).
    pub user: Option<Bytes>,
}

impl ClientInfo {
    /// A new client.
    pub fn new(
        id: u64,
        addr: impl Into<ClientAddr>,
        laddr: Option<ClientAddr>,
        protocol: Protocol,
    ) -> ClientInfo {
        let addr = addr.into();
        let now_ns = crate::monotonic::now_ns();
        ClientInfo {
            id,
            addr,
            laddr,
            created_ns: now_ns,
            last_active_ns: AtomicU64::new(now_ns),
            db: AtomicUsize::new(0),
            resp3: AtomicBool::new(protocol == Protocol::Resp3),
            names: Mutex::new(Names::default()),
            last_command: AtomicUsize::new(usize::MAX),
            kill: KillSignal::default(),
            blocked: AtomicBool::new(false),
            no_evict: AtomicBool::new(false),
            watching: AtomicUsize::new(0),
            multi: AtomicI64::new(-1),
            fd: AtomicI32::new(-1),
            traffic: Traffic::default(),
            unblock: KillSignal::default(),
            unblock_error: AtomicBool::new(false),
            no_touch: AtomicBool::new(false),
            pubsub: Subscriber::default(),
            tracking: Mutex::new(TrackingOptions::default()),
            tracking_on: AtomicBool::new(false),
            memory: ClientMemory::default(),
        }
    }

    /// Whether CLIENT TRACKING is on.
    pub(crate) fn is_tracking(&self) -> bool {
        self.tracking_on.load(Ordering::Relaxed)
    }

    /// Mirrors the tracking options' `on` (the tracking table's lock held).
    pub(crate) fn set_tracking_on(&self, on: bool) {
        self.tracking_on.store(on, Ordering::Relaxed);
    }

    /// CLIENT SETNAME's name, if set.
    pub fn name(&self) -> Option<Bytes> {
        self.names.lock().name.clone()
    }

    /// The ACL user it runs as.
    pub fn user(&self) -> Bytes {
        self.names
            .lock()
            .user
            .clone()
            .unwrap_or_else(|| Bytes::from_static(b"default"))
    }

    /// Makes it run as `user` (AUTH, HELLO AUTH).
    pub fn set_user(&self, user: &[u8]) {
        self.names.lock().user = (user != b"default").then(|| Bytes::copy_from_slice(user));
    }

    /// Sets or (with `None`) clears the name.
    pub fn set_name(&self, name: Option<Bytes>) {
        self.names.lock().name = name;
    }

    /// CLIENT SETINFO LIB-NAME (`None`: cleared by an empty value).
    pub fn set_lib_name(&self, lib_name: Option<Bytes>) {
        self.names.lock().lib_name = lib_name;
    }

    /// CLIENT SETINFO LIB-VER (`None`: cleared by an empty value).
    pub fn set_lib_ver(&self, lib_ver: Option<Bytes>) {
        self.names.lock().lib_ver = lib_ver;
    }

    /// CLIENT NO-EVICT ON or OFF.
    pub(crate) fn set_no_evict(&self, on: bool) {
        self.no_evict.store(on, Ordering::Relaxed);
    }

    /// Whether CLIENT NO-EVICT is on.
    pub(crate) fn no_evict(&self) -> bool {
        self.no_evict.load(Ordering::Relaxed)
    }

    /// CLIENT KILL: its connection closes at its next wait.
    pub fn kill(&self) {
        self.kill.fire();
    }

    /// Completes once the client was killed (at once if it was). Only the client's own
    /// connection waits on it.
    pub fn killed(&self) -> impl Future<Output = ()> + '_ {
        self.kill.wait()
    }

    /// Whether it speaks RESP3 (how messages published to it are encoded).
    pub(crate) fn is_resp3(&self) -> bool {
        self.resp3.load(Ordering::Relaxed)
    }

    /// Marks it waiting in a blocking command, or no longer. A CLIENT UNBLOCK aimed at an
    /// earlier wait is forgotten when a new one starts.
    pub fn set_blocked(&self, blocked: bool) {
        if blocked {
            self.unblock.take();
        }
        self.blocked.store(blocked, Ordering::Relaxed);
    }

    /// CLIENT UNBLOCK: if it waits in a blocking command, asks its connection to end the wait
    /// as a timeout or (`error`) with `-UNBLOCKED`; returns whether it was waiting.
    pub fn unblock(&self, error: bool) -> bool {
        if !self.blocked.load(Ordering::Relaxed) {
            return false;
        }
        self.unblock_error.store(error, Ordering::Relaxed);
        self.unblock.fire();
        true
    }

    /// Completes once CLIENT UNBLOCK asked to end the current wait (only the client's own
    /// connection waits on it).
    pub fn unblock_requested(&self) -> impl Future<Output = ()> + '_ {
        self.unblock.wait()
    }

    /// Whether the CLIENT UNBLOCK asked for an error (clears the request).
    pub fn take_unblock(&self) -> bool {
        self.unblock.take();
        self.unblock_error.load(Ordering::Relaxed)
    }

    /// Mirrors its transaction: how many commands it queued, `None` outside MULTI.
    pub(crate) fn set_multi(&self, queued: Option<usize>) {
        let n = queued.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        self.multi.store(n, Ordering::Relaxed);
    }

    /// Notes its socket's descriptor.
    pub(crate) fn set_fd(&self, fd: i32) {
        self.fd.store(fd, Ordering::Relaxed);
    }

    /// Records how many keys it watches (0: none).
    pub fn set_watching(&self, keys: usize) {
        self.watching.store(keys, Ordering::Relaxed);
    }

    /// How many keys it watches.
    pub fn watching(&self) -> usize {
        self.watching.load(Ordering::Relaxed)
    }

    /// Whether it watches keys.
    pub fn is_watching(&self) -> bool {
        self.watching.load(Ordering::Relaxed) > 0
    }

    /// Counts `bytes` read from it in one read.
    pub(crate) fn count_read(&self, bytes: usize) {
        self.traffic
            .net_in
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.traffic.read_events.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `bytes` written to it.
    pub(crate) fn count_written(&self, bytes: usize) {
        self.traffic
            .net_out
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts one command it ran (after it ran, as Redis counts it).
    pub(crate) fn count_command(&self) {
        self.traffic.commands.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one request about to run in a batch of requests read together (`first`: the
    /// batch's first), before it runs, as Redis counts a pipeline when it parses it.
    pub(crate) fn count_batched(&self, first: bool) {
        if first {
            self.traffic.batches.fetch_add(1, Ordering::Relaxed);
        }
        self.traffic
            .batched_commands
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Milliseconds since its last batch of requests.
    pub fn idle_ms(&self) -> u64 {
        let last = self.last_active_ns.load(Ordering::Relaxed);
        crate::monotonic::now_ns().saturating_sub(last) / 1_000_000
    }

    /// Records the command being run (CLIENT LIST's `cmd`).
    pub fn touch(&self, command: CallId) {
        self.last_command.store(command, Ordering::Relaxed);
    }

    /// Marks the client active at `now_ns` ([`crate::monotonic::now_ns`]; CLIENT LIST's `idle`):
    /// once per batch of requests read, with the batch's own clock reading, so no clock is
    /// read for it.
    pub(crate) fn mark_active_at(&self, now_ns: u64) {
        self.last_active_ns.store(now_ns, Ordering::Relaxed);
    }

    /// Seconds since its last command.
    pub fn idle_s(&self) -> u64 {
        self.idle_ms() / 1000
    }

    /// Whether CLIENT NO-TOUCH is on.
    pub fn no_touch(&self) -> bool {
        self.no_touch.load(Ordering::Relaxed)
    }

    /// CLIENT NO-TOUCH ON|OFF.
    pub fn set_no_touch(&self, on: bool) {
        self.no_touch.store(on, Ordering::Relaxed);
    }

    /// Whole seconds since the client connected (CLIENT LIST's `age`).
    pub fn age_s(&self) -> u64 {
        crate::monotonic::now_ns().saturating_sub(self.created_ns) / 1_000_000_000
    }

    /// The CLIENT LIST / CLIENT INFO line for this client (without the newline);
    /// `call_name` names its last command (the command table's, which this layer does not
    /// know).
    pub fn line(&self, call_name: fn(CallId) -> &'static str) -> String {
        let names = self.names.lock().clone();
        let text = |b: &Option<Bytes>| {
            b.as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        let tracking = self.tracking.lock().clone();
        let multi = self.multi.load(Ordering::Relaxed);
        // In Redis's order (`catClientInfoString`).
        let mut flags = String::new();
        if self.pubsub.is_monitoring() {
            flags.push('O');
        }
        if self.pubsub.is_subscribed() {
            flags.push('P');
        }
        if multi >= 0 {
            flags.push('x');
        }
        if self.blocked.load(Ordering::Relaxed) {
            flags.push('b');
        }
        if tracking.on {
            flags.push('t');
            if tracking.broken_redirect {
                flags.push('R');
            }
            if tracking.bcast {
                flags.push('B');
            }
        }
        if matches!(self.addr, ClientAddr::Unix(_)) {
            flags.push('U');
        }
        if self.no_evict.load(Ordering::Relaxed) {
            flags.push('e');
        }
        if self.no_touch() {
            flags.push('T');
        }
        if flags.is_empty() {
            flags.push('N');
        }
        let redir = if tracking.on {
            tracking.redirect as i64
        } else {
            -1
        };
        let traffic = &self.traffic;
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        let memory = self.memory.fields();
        format!(
            "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} watch={} qbuf={} qbuf-free={} argv-mem=0 multi-mem={} rbs={} rbp={} obl={} oll={} omem={} omem-shared=0 omem-unshared={} tot-mem={} events=r cmd={} user={} redir={} resp={} lib-name={} lib-ver={} io-thread=0 tot-net-in={} tot-net-out={} tot-cmds={} read-events={} avg-pipeline-len-sum={} avg-pipeline-len-cnt={}",
            self.id,
            self.addr,
            self.laddr
                .as_ref()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            self.fd.load(Ordering::Relaxed),
            text(&names.name),
            self.age_s(),
            self.idle_s(),
            flags,
            self.db.load(Ordering::Relaxed),
            self.pubsub.count(Kind::Channel),
            self.pubsub.count(Kind::Pattern),
            self.pubsub.count(Kind::Shard),
            multi,
            self.watching.load(Ordering::Relaxed),
            memory.qbuf,
            memory.qbuf_free,
            memory.multi_mem,
            memory.rbs,
            memory.rbp,
            memory.obl,
            memory.oll,
            memory.omem,
            memory.omem,
            memory.tot_mem,
            call_name(self.last_command.load(Ordering::Relaxed)),
            String::from_utf8_lossy(names.user.as_deref().unwrap_or(b"default")),
            redir,
            if self.resp3.load(Ordering::Relaxed) {
                3
            } else {
                2
            },
            text(&names.lib_name),
            text(&names.lib_ver),
            load(&traffic.net_in),
            load(&traffic.net_out),
            load(&traffic.commands),
            load(&traffic.read_events),
            load(&traffic.batched_commands),
            load(&traffic.batches),
        )
    }
}

/// What only the connection itself uses.
#[derive(Debug)]
pub struct ClientState {
    /// The shared view.
    pub info: Arc<ClientInfo>,
    /// RESP2 or RESP3.
    pub protocol: Protocol,
    /// Selected database.
    pub db: usize,
    /// Whether AUTH succeeded (or no password is needed).
    pub authenticated: bool,
    /// The ACL user it runs as, and the users' generation it was read at (a cache: `None`
    /// after AUTH or RESET).
    pub acl_user: Option<(u64, Arc<crate::acl::User>)>,
    /// The command it called last, by name (what most requests call again).
    pub(crate) recent_command: crate::cmd::RecentCommand,
    /// Commands queued since MULTI, if in a transaction.
    pub multi: Option<Vec<Vec<Bytes>>>,
    /// A command failed to queue: EXEC must abort.
    pub multi_failed: bool,
    /// EXEC is running this client's queued commands (Redis's `server.in_exec`).
    pub in_exec: bool,
    /// Watched keys: database, key, version when watched.
    pub watched: Vec<(usize, Bytes, u64)>,
    /// Within a batch of pipelined requests, when the previous call ended (or the batch
    /// began): the next call's duration (INFO commandstats, SLOWLOG) is measured from it, and
    /// its time of day is the mark's, so a call reads the monotonic clock once and the wall
    /// clock not at all ([`crate::monotonic::Mark`]). `None` outside a batch.
    pub clock_mark: Option<crate::monotonic::Mark>,
    /// Where this connection's calls are counted (its thread's shard of the server's
    /// counters), taken at its first call.
    pub counter: Option<super::stats::Counter>,
    /// A script of this client is running: the commands it runs show in MONITOR as the
    /// script's (`[0 lua]`), not the client's.
    pub in_script: bool,
    /// CLIENT REPLY OFF: no reply is sent.
    pub reply_off: bool,
    /// CLIENT REPLY SKIP ran: the next command's reply is not sent.
    pub reply_skip_next: bool,
    /// The running command's reply is not sent (it follows CLIENT REPLY SKIP).
    pub reply_skip: bool,
}

impl ClientState {
    /// A new connection's state.
    pub fn new(info: Arc<ClientInfo>, protocol: Protocol, authenticated: bool) -> ClientState {
        ClientState {
            info,
            protocol,
            db: 0,
            authenticated,
            acl_user: None,
            recent_command: crate::cmd::RecentCommand::default(),
            multi: None,
            multi_failed: false,
            in_exec: false,
            watched: Vec::new(),
            clock_mark: None,
            counter: None,
            in_script: false,
            reply_off: false,
            reply_skip_next: false,
            reply_skip: false,
        }
    }

    /// Whether the reply of the command that just ran is dropped (CLIENT REPLY OFF, or SKIP
    /// before it); moves a pending SKIP on to the next command, as Redis's `resetClient`.
    pub fn reply_silenced(&mut self) -> bool {
        let silenced = self.reply_off || self.reply_skip;
        self.reply_skip = std::mem::take(&mut self.reply_skip_next);
        silenced
    }

    /// Switches protocol, keeping the shared view in step.
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
        self.info
            .resp3
            .store(protocol == Protocol::Resp3, Ordering::Relaxed);
    }

    /// Switches database, keeping the shared view in step.
    pub fn select(&mut self, db: usize) {
        self.db = db;
        self.info.db.store(db, Ordering::Relaxed);
    }
}

/// Client names may not contain spaces or special characters.
pub fn valid_client_name(name: &[u8]) -> bool {
    name.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

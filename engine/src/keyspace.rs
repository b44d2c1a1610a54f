//! The keyspace: binary-safe keys mapping to values, shared across threads.
//!
//! One lock guards the whole keyspace. Redis runs commands one at a time, and a command (or a
//! MULTI/EXEC) must see and change several keys atomically, so one short critical section per
//! command is both the simplest correct choice and fast: no command does I/O or waits while
//! holding it. [`Keyspace::run`] takes the lock and one clock snapshot, runs a closure over the
//! [`Db`], then serves blocked readers of the keys that closure signalled (see
//! [`crate::blocking`]), and wakes them once the lock is released. A [`crate::Batch`] runs
//! several such calls (a connection's pipelined requests) under one acquisition.
//!
//! Layering: the keyspace knows its databases ([`Db`], in `db/`: values and expiry, WATCH and
//! blocked readers, the effects log, statistics) and its sinks, not the commands. A blocked command is re-run with the `Rerun` its caller registered it
//! with; the command entry points ([`Keyspace::execute`] and its blocking forms) live in
//! `execute.rs`, above both this module and [`crate::command`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::blocking::{BlockRequest, Slot, Waiter, Wake};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, IdmpConfig, NodeLimits};
use crate::error::Result;
use crate::reply::Reply;
use crate::reply_size::Protocol;

use crate::db::Readiness;
pub(crate) use crate::db::Rerun;
pub use crate::db::{Db, Dbs, SIZE_CLASSES};
use crate::invalidate::InvalidationSink;
use crate::notify::{Notification, NotificationSink};
pub use crate::propagate::PropagationSink;
use crate::trim_hook::TrimHook;
pub use crate::types::Value;

/// What one command sees: its time snapshot and the settings in force.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    /// Unix milliseconds, read once for the whole command.
    pub now_ms: u64,
    /// Node limits (`stream-node-max-entries`, `stream-node-max-bytes`).
    pub limits: NodeLimits,
    /// The IDMP bounds new streams start with (`stream-idmp-duration`, `stream-idmp-maxsize`).
    pub idmp: IdmpConfig,
    /// The list settings (`list-max-listpack-size`, `list-compress-depth`).
    pub list: crate::types::list::ListConfig,
    /// The hash, set and sorted set encoding thresholds (`*-max-listpack-*`, `*-max-intset-*`).
    pub encoding: crate::config::Thresholds,
    /// Whether the server runs in cluster mode.
    pub cluster: bool,
    /// The caller's protocol: what sizes the command's reply (XREAD `MAXSIZE` counts the
    /// bytes it writes). RESP2 unless the caller says otherwise ([`Snapshot::speaking`]).
    pub protocol: Protocol,
    /// What keys' access metadata tracks (from `maxmemory-policy` and the LFU settings).
    pub access: crate::db::access::Access,
    /// `hll-sparse-max-bytes`: the longest a sparse HyperLogLog grows before turning dense.
    pub hll_sparse_max_bytes: u64,
}

impl Snapshot {
    /// This snapshot for a caller speaking `protocol`.
    pub fn speaking(self, protocol: Protocol) -> Snapshot {
        Snapshot { protocol, ..self }
    }
}

/// The result of [`Keyspace::execute_blocking`].
#[derive(Debug)]
pub enum Execution {
    /// The command replied at once.
    Done(Result<Reply>),
    /// The command is blocked; its reply will be left in the handle.
    Blocked(BlockedHandle),
}

/// A blocked command. Dropping it unblocks the command (a client that went away).
#[derive(Debug)]
pub struct BlockedHandle {
    db: usize,
    id: u64,
    slot: Arc<Slot>,
    deadline_ms: Option<u64>,
    keyspace: Weak<Keyspace>,
}

impl BlockedHandle {
    /// The reply, once there is one (taken: later calls return `None`).
    pub fn try_take(&self) -> Option<Result<Reply>> {
        self.slot.take()
    }

    /// When to call [`Keyspace::expire_blocked`] next for this command, by the keyspace's
    /// clock: its timeout, or sooner when a CLAIM read's pending entry becomes claimable;
    /// `None` = never.
    pub fn deadline_ms(&self) -> Option<u64> {
        match (self.deadline_ms, self.slot.claim_wake()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl BlockedHandle {
    /// Ends the wait now (CLIENT UNBLOCK): the command is unregistered; if it was served
    /// before that, its reply.
    pub fn cancel(&self) -> Option<Result<Reply>> {
        if let Some(keyspace) = self.keyspace.upgrade()
            && let Some(db) = keyspace.dbs.lock().get_mut(self.db)
        {
            db.watch.blocked.unregister(self.id);
        }
        self.slot.take()
    }
}

impl Drop for BlockedHandle {
    fn drop(&mut self) {
        if let Some(keyspace) = self.keyspace.upgrade()
            && let Some(db) = keyspace.dbs.lock().get_mut(self.db)
        {
            db.watch.blocked.unregister(self.id);
        }
    }
}

/// A thread-safe keyspace with an injected clock: one or more numbered databases (SELECT)
/// behind one lock.
#[derive(Debug)]
pub struct Keyspace {
    pub(crate) dbs: Mutex<Vec<Db>>,
    clock: Arc<dyn Clock>,
    config: Arc<Config>,
    /// The active expiry cycle's own figures (see `expire.rs`).
    pub(crate) cycle: Mutex<crate::expire::CycleStats>,
    /// Where propagated commands go, fed under the lock (so in execution order).
    sink: parking_lot::RwLock<Option<Arc<dyn PropagationSink>>>,
    /// Whether `sink` is set, read once per command without a lock.
    propagating: std::sync::atomic::AtomicBool,
    /// Where keyspace notifications go, fed under the lock (so in execution order).
    notification_sink: parking_lot::RwLock<Option<Arc<dyn NotificationSink>>>,
    /// Whether `notification_sink` is set.
    notifying: std::sync::atomic::AtomicBool,
    /// Where the keys each unit changed go for client-side caching ([`crate::invalidate`]).
    invalidation_sink: parking_lot::RwLock<Option<Arc<dyn InvalidationSink>>>,
    /// Whether changed keys are recorded: a sink is set and some client tracks keys.
    key_tracking: std::sync::atomic::AtomicBool,
    /// The eviction pool and cursor, kept between evictions (see `evict.rs`).
    pub(crate) eviction: Mutex<crate::evict::EvictionState>,
    /// Keys evicted (`evicted_keys`).
    pub(crate) evicted_keys: std::sync::atomic::AtomicU64,
}

/// Wakes the blocked clients a call served (after the keyspace lock is released).
pub(crate) fn wake_all(wakers: Vec<Arc<dyn Wake>>) {
    for waker in wakers {
        waker.wake();
    }
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace::new(Arc::new(SystemClock))
    }
}

impl Keyspace {
    /// An empty keyspace with one database, reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Keyspace {
        Keyspace::with_databases(clock, Arc::new(Config::default()), 1)
    }

    /// An empty keyspace with `databases` databases (at least one) sharing `config`.
    pub fn with_databases(
        clock: Arc<dyn Clock>,
        config: Arc<Config>,
        databases: usize,
    ) -> Keyspace {
        let seq: Arc<std::sync::atomic::AtomicU64> = Arc::default();
        let lazyfree = Arc::clone(&config.lazyfree);
        let dbs = (0..databases.max(1))
            .map(|index| {
                let mut db = Db {
                    index,
                    lazyfree: Arc::clone(&lazyfree),
                    ..Db::default()
                };
                db.effects.event_seq = Arc::clone(&seq);
                db
            })
            .collect();
        Keyspace {
            dbs: Mutex::new(dbs),
            clock,
            config,
            cycle: Mutex::new(crate::expire::CycleStats::default()),
            sink: parking_lot::RwLock::new(None),
            propagating: std::sync::atomic::AtomicBool::new(false),
            notification_sink: parking_lot::RwLock::new(None),
            notifying: std::sync::atomic::AtomicBool::new(false),
            invalidation_sink: parking_lot::RwLock::new(None),
            key_tracking: std::sync::atomic::AtomicBool::new(false),
            eviction: Mutex::default(),
            evicted_keys: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Lazy freeing: `lazyfree-lazy-user-del` and `-user-flush`, and INFO's counts.
    pub fn lazyfree(&self) -> &crate::lazyfree::LazyFree {
        &self.config.lazyfree
    }

    /// The settings (changeable at run time).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The clock this keyspace reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Number of databases.
    pub fn databases(&self) -> usize {
        self.dbs.lock().len()
    }

    /// The encoding settings a RESTORE or a file load builds values under: the current ones.
    pub fn load_limits(&self) -> crate::rdb::LoadLimits {
        crate::rdb::LoadLimits {
            encoding: self.config.encoding.thresholds(),
            list: self.config.list_config(),
        }
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        self.snapshot_at(None)
    }

    /// [`Keyspace::snapshot`] at `wall_ms` when the clock takes an extrapolated time (see
    /// [`Clock::now_ms_or`]).
    pub(crate) fn snapshot_at(&self, wall_ms: Option<u64>) -> Snapshot {
        Snapshot {
            now_ms: self.clock.now_ms_or(wall_ms),
            limits: self.config.node_limits(),
            idmp: self.config.idmp_defaults(),
            list: self.config.list_config(),
            encoding: self.config.encoding.thresholds(),
            cluster: self.config.cluster_enabled(),
            protocol: Protocol::Resp2,
            access: self.config.eviction().access(),
            hll_sparse_max_bytes: self.config.hll_sparse_max_bytes(),
        }
    }

    /// Runs `f` on database 0 atomically with one time snapshot, then serves blocked readers
    /// of the keys it signalled.
    pub fn run<R>(&self, f: impl FnOnce(&mut Db, &Snapshot) -> R) -> R {
        self.run_db(0, f)
    }

    /// Runs `f` on database `index` (which must exist; out of range means database 0).
    pub fn run_db<R>(&self, index: usize, f: impl FnOnce(&mut Db, &Snapshot) -> R) -> R {
        let mut wakers = Vec::new();
        let result = self.run_db_locked(&mut self.dbs.lock(), index, None, f, &mut wakers);
        wake_all(wakers);
        result
    }

    /// Runs `f` over every database atomically (MULTI/EXEC, FLUSHALL) with one time snapshot.
    pub fn run_all<R>(&self, f: impl FnOnce(&mut [Db], &Snapshot) -> R) -> R {
        let mut wakers = Vec::new();
        let result = self.run_all_locked(
            &mut self.dbs.lock(),
            None,
            |mut dbs, snapshot| f(dbs.all(), snapshot),
            &mut wakers,
        );
        wake_all(wakers);
        result
    }

    /// [`Keyspace::run_db`] on databases already locked, at `wall_ms` if the clock takes it
    /// ([`Keyspace::snapshot_at`]): the blocked readers it serves are added to `wakers`, to be
    /// woken once the lock is released.
    pub(crate) fn run_db_locked<R>(
        &self,
        dbs: &mut [Db],
        index: usize,
        wall_ms: Option<u64>,
        f: impl FnOnce(&mut Db, &Snapshot) -> R,
        wakers: &mut Vec<Arc<dyn Wake>>,
    ) -> R {
        let snapshot = self.snapshot_at(wall_ms);
        let index = if index < dbs.len() { index } else { 0 };
        let db = &mut dbs[index];
        self.readiness(&snapshot).ready(db);
        let result = f(db, &snapshot);
        if db.has_signals() {
            wakers.extend(db.serve_signalled(&snapshot));
        }
        if db.has_propagated() {
            let propagated = db.take_propagated();
            self.feed(propagated.into_iter().map(|argv| (index, argv)).collect());
        }
        // Most calls have nothing to hand over: no event fired and no client tracks keys.
        if db.effects.has_events() || db.watch.tracking {
            self.hand_over_events(std::iter::once((index, db)));
        }
        result
    }

    /// What readying a database for one call under `snapshot` takes: the settings in force.
    #[inline]
    fn readiness<'s>(&self, snapshot: &'s Snapshot) -> Readiness<'s> {
        Readiness::new(
            snapshot,
            self.propagating.load(Ordering::Acquire),
            self.notify_flags(),
            self.key_tracking(),
        )
    }

    /// [`Keyspace::run_all`] on databases already locked (see [`Keyspace::run_db_locked`]).
    pub(crate) fn run_all_locked<R>(
        &self,
        dbs: &mut [Db],
        wall_ms: Option<u64>,
        f: impl FnOnce(Dbs<'_>, &Snapshot) -> R,
        wakers: &mut Vec<Arc<dyn Wake>>,
    ) -> R {
        let snapshot = self.snapshot_at(wall_ms);
        let readiness = self.readiness(&snapshot);
        let result = f(Dbs::new(dbs, &readiness), &snapshot);
        // Only a database the call reached can have changed.
        let reached = |(index, _): &(usize, &mut Db)| readiness.reached(*index);
        let mut propagated = Vec::new();
        for (index, db) in dbs.iter_mut().enumerate().filter(reached) {
            if db.has_signals() {
                wakers.extend(db.serve_signalled(&snapshot));
            }
            if db.has_propagated() {
                propagated.extend(
                    db.take_propagated_sequenced()
                        .into_iter()
                        .map(|(seq, argv)| (seq, index, argv)),
                );
            }
        }
        if !propagated.is_empty() {
            // In the order the unit wrote, across databases (a script or EXEC that SELECTs).
            propagated.sort_by_key(|(seq, _, _)| *seq);
            self.feed(
                propagated
                    .into_iter()
                    .map(|(_, index, argv)| (index, argv))
                    .collect(),
            );
        }
        self.hand_over_events(dbs.iter_mut().enumerate().filter(reached));
        result
    }

    /// Sets (or, with `None`, removes) where propagated commands go. Without a sink they are
    /// dropped. Set it after loading a file, so replayed commands are not logged again.
    pub fn set_propagation_sink(&self, sink: Option<Arc<dyn PropagationSink>>) {
        let on = sink.is_some();
        *self.sink.write() = sink;
        self.propagating
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// Installs (or, with `None`, removes) the hook that takes over the trims of the streams
    /// it covers (see [`crate::trim_hook`]).
    pub fn set_trim_hook(&self, hook: Option<Arc<dyn TrimHook>>) {
        for db in self.dbs.lock().iter_mut() {
            db.trim_hook = hook.clone();
        }
    }

    /// Sets (or, with `None`, removes) where keyspace notifications go. Without a sink no
    /// event is recorded, whatever `notify-keyspace-events` says.
    pub fn set_notification_sink(&self, sink: Option<Arc<dyn NotificationSink>>) {
        let on = sink.is_some();
        *self.notification_sink.write() = sink;
        self.notifying
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// Sets (or, with `None`, removes) where changed keys go for client-side caching; they
    /// are recorded only while [`Keyspace::set_key_tracking`] is on as well.
    pub fn set_invalidation_sink(&self, sink: Option<Arc<dyn InvalidationSink>>) {
        *self.invalidation_sink.write() = sink;
    }

    /// Turns the recording of changed keys on (some client tracks keys) or off.
    pub fn set_key_tracking(&self, on: bool) {
        self.key_tracking.store(on, Ordering::Release);
    }

    /// Whether changed keys are recorded now.
    pub(crate) fn key_tracking(&self) -> bool {
        self.key_tracking.load(Ordering::Acquire)
    }

    /// The notification classes commands record now: the configured ones with a sink, else 0.
    pub(crate) fn notify_flags(&self) -> u32 {
        if self.notifying.load(std::sync::atomic::Ordering::Acquire) {
            self.config.notify_flags()
        } else {
            0
        }
    }

    /// Hands the events the given databases recorded to the sink, in firing order (under the
    /// keyspace lock).
    ///
    /// The keys the unit changed go to the invalidation sink first, as Redis invalidates a key
    /// as it changes, before the unit's notifications are published.
    pub(crate) fn hand_over_events<'d>(&self, dbs: impl Iterator<Item = (usize, &'d mut Db)>) {
        let mut batch = Vec::new();
        let (mut invalidated, mut flushed) = (Vec::new(), false);
        for (index, db) in dbs {
            if db.effects.has_events() {
                db.effects.take_events(index, &mut batch);
            }
            if db.watch.tracking {
                let (keys, flush) = db.watch.take_invalidated();
                if invalidated.is_empty() {
                    invalidated = keys;
                } else {
                    invalidated.extend(keys);
                }
                flushed |= flush;
            }
        }
        if (!invalidated.is_empty() || flushed)
            && let Some(sink) = self.invalidation_sink.read().as_ref()
        {
            sink.invalidate(invalidated, flushed);
        }
        if batch.is_empty() {
            return;
        }
        batch.sort_by_key(|(seq, _)| *seq);
        let events: Vec<Notification> = batch.into_iter().map(|(_, event)| event).collect();
        if let Some(sink) = self.notification_sink.read().as_ref() {
            sink.notify(self.config.notify_flags(), events);
        }
    }

    /// Whether a propagation sink is installed.
    pub(crate) fn propagation_on(&self) -> bool {
        self.propagating.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Hands one execution unit's propagated commands to the sink (under the keyspace lock).
    pub(crate) fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        if let Some(sink) = self.sink.read().as_ref() {
            sink.feed(commands);
        }
    }

    /// Changes made to every database since start (Redis's dirty counter).
    pub fn dirty(&self) -> u64 {
        self.dirty_with(|_| {})
    }

    /// Runs `f` over every database under the lock (nothing is served or propagated: for a
    /// consistent read of everything, as a rewrite takes), and returns the dirty counter then.
    pub fn dirty_with(&self, f: impl FnOnce(&[Db])) -> u64 {
        let dbs = self.dbs.lock();
        f(&dbs);
        dbs.iter().map(Db::dirty).sum()
    }

    /// Registers a blocked command in database `index` (the one `db` is): it waits for its
    /// keys and is re-run with `rerun`; `waker` is called once it has a reply.
    pub(crate) fn block(
        self: &Arc<Self>,
        db: &mut Db,
        index: usize,
        request: BlockRequest,
        rerun: Rerun,
        waker: Arc<dyn Wake>,
    ) -> BlockedHandle {
        let deadline_ms = request.deadline_ms;
        let slot = Arc::new(Slot::new(waker));
        slot.set_claim_wake(request.claim_wake_ms);
        let id = db.watch.blocked.register(Waiter {
            request,
            slot: Arc::clone(&slot),
            rerun,
        });
        BlockedHandle {
            db: index,
            id,
            slot,
            deadline_ms,
            keyspace: Arc::downgrade(self),
        }
    }

    /// Times out every blocked command whose deadline has passed by the clock (its reply is a
    /// null array); returns how many. A server calls this on a timer; a test calls it after
    /// moving a manual clock.
    ///
    /// First, the keys of XREADGROUP CLAIM readers whose pending entry became claimable are
    /// signalled and their waiters re-run (as Redis signals such keys before it sleeps).
    pub fn expire_blocked(&self) -> usize {
        let mut wakers: Vec<Arc<dyn Wake>> = Vec::new();
        let expired = self.expire_blocked_in(&mut self.dbs.lock(), &mut wakers);
        for waker in wakers {
            waker.wake();
        }
        expired
    }

    /// [`Keyspace::expire_blocked`] over databases already locked; the commands it served or
    /// timed out go to `wakers`, to wake once the lock is released.
    pub(crate) fn expire_blocked_in(
        &self,
        dbs: &mut [Db],
        wakers: &mut Vec<Arc<dyn Wake>>,
    ) -> usize {
        let snapshot = self.snapshot();
        let now = snapshot.now_ms;
        let mut timed_out = 0;
        for db in dbs.iter_mut() {
            let due = db.watch.blocked.claim_due(now);
            if !due.is_empty() {
                db.values.now_ms = now;
                db.effects.notify_flags = self.notify_flags();
                for id in due {
                    for key in db.watch.blocked.keys_of(id) {
                        db.signal_ready(&key);
                    }
                }
                wakers.extend(db.serve_signalled(&snapshot));
            }
            for id in db.watch.blocked.expired(now) {
                if let Some(waiter) = db.watch.blocked.unregister(id) {
                    wakers.push(waiter.slot.complete(Ok(Reply::NullArray)));
                    timed_out += 1;
                }
            }
        }
        self.hand_over_events(dbs.iter_mut().enumerate());
        timed_out
    }

    /// The earliest deadline of any blocked command, by the clock.
    pub fn next_block_deadline(&self) -> Option<u64> {
        self.dbs
            .lock()
            .iter()
            .filter_map(|db| db.watch.blocked.next_deadline())
            .min()
    }

    /// Commands blocked now.
    pub fn blocked_count(&self) -> usize {
        self.dbs.lock().iter().map(Db::blocked_count).sum()
    }

    /// Checks the invariants of every stream and of the blocked readers (for tests and
    /// fuzzing; walks everything).
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        for (index, db) in self.dbs.lock().iter().enumerate() {
            db.check_invariants()
                .map_err(|e| format!("db {index}: {e}"))?;
        }
        Ok(())
    }
}

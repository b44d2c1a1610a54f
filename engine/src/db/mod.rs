//! One database of a [`Keyspace`](crate::Keyspace): the data behind the keyspace lock, split by
//! concern into four parts, each with its invariants stated in its module and checked by its
//! `check_invariants` ([`Db::check_invariants`] runs them all; the model and property tests
//! call it after every operation):
//!
//! - `values`: keys to values, expiry times, the keysizes histogram, IDMP sweep tracking;
//! - `watch`: WATCH versions, the keys signalled for blocked readers, the blocked readers;
//! - `effects`: the effects log: what commands propagate, the events they fire, `dirty`;
//! - `stats`: expired keys, keyspace hits and misses.
//!
//! The [`Db`] methods join them. Key lookups and changes (`keys.rs`) keep them consistent: a
//! key added, replaced, removed or expired touches WATCH, signals blocked readers and fires
//! the keyspace's own events (`new`, `overwritten`, `type_changed`, `expired`). The effects
//! API a command calls as it runs is small: [`Db::propagate`], [`Db::notify`], [`Db::touch`]
//! (Redis's `signalModifiedKey`), [`Db::signal_ready`] (`signalKeyAsReady`),
//! [`Db::add_dirty`], and two combinations, [`Db::wrote`] and [`Db::changed`].

pub mod access;
mod blocked;
mod effects;
mod keys;
mod readied;
mod stats;
mod table;
mod values;
mod watch;

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use crate::keyspace::Snapshot;
use crate::lazyfree::LazyFree;
use crate::trim_hook::TrimHook;
use crate::types::Value;

pub(crate) use effects::Effects;
pub use readied::Dbs;
pub(crate) use readied::Readiness;
pub(crate) use stats::Stats;
pub use table::Key;
/// Bytes of one key's entry in the table (its share of the index not counted).
/// Keys a database holds before prefetching lookups pays: about what fills a core's 2 MiB
/// second-level cache with entries and index slots.
pub(crate) const PREFETCH_KEYS_MIN: usize = 1 << 15;
pub(crate) const ENTRY_BYTES: usize = std::mem::size_of::<table::Entry>();
pub use values::SIZE_CLASSES;
pub(crate) use values::Values;
pub(crate) use watch::{Rerun, Watches};

/// The data behind the lock: one database.
#[derive(Default)]
pub struct Db {
    /// Keys, values and expiry.
    pub(crate) values: Values,
    /// WATCH versions and blocked readers.
    pub(crate) watch: Watches,
    /// What commands propagate, fire and count.
    pub(crate) effects: Effects,
    /// Expired keys, hits and misses.
    pub(crate) stats: Stats,
    /// This database's number in its keyspace (for [`TrimHook::covers`]).
    pub(crate) index: usize,
    /// The embedder's trim hook, if one is installed (see [`crate::trim_hook`]).
    pub(crate) trim_hook: Option<Arc<dyn TrimHook>>,
    /// The keyspace's lazy freeing (shared by its databases).
    pub(crate) lazyfree: Arc<LazyFree>,
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("keys", &self.values.map.len())
            .field("blocked", &self.watch.blocked.len())
            .finish_non_exhaustive()
    }
}

impl Db {
    /// The keyspace's lazy freeing settings and counts.
    pub fn lazyfree(&self) -> &Arc<LazyFree> {
        &self.lazyfree
    }

    /// Frees a removed value as UNLINK does: on the background thread when that costs more
    /// than [`crate::lazyfree::THRESHOLD`] allocations, else here.
    pub fn free_lazily(&self, value: Value) {
        if value.free_effort() > crate::lazyfree::THRESHOLD {
            self.lazyfree.hand_over(value, 1);
        }
    }

    /// Readies this database for one call: its time snapshot, whether writes propagate, the
    /// notification classes, the IDMP defaults, and the periodic IDMP sweep.
    pub(crate) fn prepare(&mut self, snapshot: &Snapshot, propagating: bool, notify_flags: u32) {
        self.effects.propagating = propagating;
        self.effects.notify_flags = notify_flags;
        self.values.now_ms = snapshot.now_ms;
        self.values.idmp_defaults = snapshot.idmp;
        self.values.access = snapshot.access;
        self.values.no_touch = false;
        self.values.sweep_idmp(snapshot.now_ms);
    }

    // The effects API: what a command calls as it runs.

    /// Appends a command to what this database's running command propagates (Redis's
    /// `alsoPropagate`): a deterministic form that replays to the same state.
    pub fn propagate(&mut self, argv: Vec<Bytes>) {
        self.effects.propagate(argv);
    }

    /// Turns off (or back on) recording what the next commands of this call propagate, for a
    /// script's `redis.set_repl`: a command run while it is off reaches no AOF.
    pub fn set_propagating(&mut self, on: bool) {
        self.effects.propagating = on;
    }

    /// Whether what commands propagate is recorded (a sink is installed): commands skip
    /// building their propagated forms otherwise.
    pub fn propagating(&self) -> bool {
        self.effects.propagating
    }

    /// Reports that `event` (of `class`) happened to `key`, as Redis's `notifyKeyspaceEvent`.
    pub fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        self.effects.notify(class, event, key);
    }

    /// Reports that `event` (of `class`) happened to `key`'s `subkeys` (a hash's fields), as
    /// Redis's `notifyKeyspaceEventWithSubkeys`: the key-level channels as [`Db::notify`],
    /// and the subkey channels.
    pub fn notify_subkeys(
        &mut self,
        class: u32,
        event: &'static str,
        key: &[u8],
        subkeys: &[&[u8]],
    ) {
        self.effects.notify_subkeys(class, event, key, subkeys);
    }

    /// Whether any event of `class` would be recorded (commands may skip reading state
    /// otherwise).
    pub fn notifying(&self, class: u32) -> bool {
        self.effects.notifying(class)
    }

    /// Records that `key` changed (for WATCH; Redis's `signalModifiedKey`). Creating,
    /// replacing, removing and expiring keys call it themselves.
    pub fn touch(&mut self, key: &[u8]) {
        self.watch.touch(key);
        self.values.modified(key);
    }

    /// Makes the running command leave keys' access metadata alone (a CLIENT NO-TOUCH
    /// caller's command other than TOUCH); reset before each command.
    pub fn set_no_touch(&mut self, no_touch: bool) {
        self.values.no_touch = no_touch;
    }

    /// Counts `n` changes (Redis's `server.dirty += n`).
    pub fn add_dirty(&mut self, n: u64) {
        self.effects.add_dirty(n);
    }

    /// The common effects of a command that changed `key`, in Redis's order: WATCH sees the
    /// key modified, `event` of `class` fires, `dirty` changes are counted, and `argv` (copied
    /// only when something records it) is propagated verbatim.
    pub fn wrote(
        &mut self,
        key: &[u8],
        class: u32,
        event: &'static str,
        dirty: u64,
        argv: &[&[u8]],
    ) {
        self.touch(key);
        self.notify(class, event, key);
        self.changed(dirty, argv);
    }

    /// Propagates `argv` verbatim (copied only when something records it), counting `dirty`
    /// changes: a command that changed state but touches no WATCH and fires no event.
    pub fn changed(&mut self, dirty: u64, argv: &[&[u8]]) {
        self.effects.add_dirty(dirty);
        self.effects.propagate_args(argv);
    }

    /// Changes made to this database so far.
    pub fn dirty(&self) -> u64 {
        self.effects.dirty()
    }

    /// Takes what was propagated since the last call.
    pub fn take_propagated(&mut self) -> Vec<Vec<Bytes>> {
        self.effects.take_propagated()
    }

    /// [`Db::take_propagated`] with each command's keyspace-wide sequence number.
    pub(crate) fn take_propagated_sequenced(&mut self) -> Vec<(u64, Vec<Bytes>)> {
        self.effects.take_propagated_sequenced()
    }

    /// Whether a command run here propagated something not yet taken.
    pub(crate) fn has_propagated(&self) -> bool {
        self.effects.has_propagated()
    }

    /// The trim hook that covers `key` in this database, if any.
    pub(crate) fn trim_hook_for(&self, key: &[u8]) -> Option<Arc<dyn TrimHook>> {
        self.trim_hook
            .as_ref()
            .filter(|hook| hook.covers(self.index, key))
            .cloned()
    }

    // WATCH.

    /// Starts watching `key`; returns its version now.
    pub fn watch(&mut self, key: &[u8]) -> u64 {
        self.watch.watch(key);
        self.version(key)
    }

    /// Stops one watch of `key`.
    pub fn unwatch(&mut self, key: &[u8]) {
        self.watch.unwatch(key);
    }

    /// The version of a watched key (0 if unwatched). An expired key counts as changed.
    pub fn version(&self, key: &[u8]) -> u64 {
        let version = self.watch.version(key);
        if self.values.expired(key) {
            version + 1
        } else {
            version
        }
    }

    /// Keys under WATCH (INFO's `total_watched_keys`).
    pub fn watched_count(&self) -> usize {
        self.watch.watched_count()
    }

    // Statistics.

    /// Counts one read lookup of `key` (Redis's `lookupKeyRead`): a hit, or a miss that fires
    /// `keymiss` unless `quiet` (OBJECT's lookup). An expired key is a miss.
    pub fn count_read(&mut self, key: &[u8], quiet: bool) {
        if self.values.get(key).is_some() {
            self.stats.keyspace_hits += 1;
        } else {
            self.stats.keyspace_misses += 1;
            if !quiet {
                self.notify(crate::notify::KEY_MISS, "keymiss", key);
            }
        }
    }

    // Access metadata (OBJECT IDLETIME and FREQ, RESTORE's IDLETIME and FREQ, eviction).

    /// What keys' access metadata tracks for the running command.
    pub fn access(&self) -> access::Access {
        self.values.access
    }

    /// Milliseconds since `key` was last accessed (LRU; last modified under LRM), as Redis
    /// estimates it; `None` for a missing key.
    pub fn idle_ms(&self, key: &[u8]) -> Option<u64> {
        self.values.get(key)?;
        let meta = self.values.map.meta(key)?;
        Some(access::idle_ms(meta, self.values.now_ms))
    }

    /// `key`'s LFU counter after the decay due now (Redis's `LFUDecrAndReturn`); `None` for a
    /// missing key.
    pub fn frequency(&self, key: &[u8]) -> Option<u32> {
        self.values.get(key)?;
        let meta = self.values.map.meta(key)?;
        Some(access::lfu_decayed(
            meta,
            self.values.now_ms,
            self.values.access.lfu_decay_time,
        ))
    }

    /// Sets `key`'s access metadata from RESTORE's `IDLETIME seconds` or `FREQ f`, whichever
    /// the policy tracks (Redis's `objectSetLRUOrLFU`); returns whether it was set.
    pub fn restore_access(&mut self, key: &[u8], idle_s: Option<u64>, freq: Option<u8>) -> bool {
        match self
            .values
            .access
            .restored(idle_s, freq, self.values.now_ms)
        {
            Some(meta) => self.values.map.set_meta(key, meta),
            None => false,
        }
    }

    /// Bytes the table's own structure holds (index, entries, expiry records, long keys;
    /// values' heap memory not counted).
    pub fn table_bytes(&self) -> usize {
        self.values.map.structure_bytes()
    }

    /// Read lookups that found their key and that did not, since start.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.stats.keyspace_hits, self.stats.keyspace_misses)
    }

    /// Checks every part's invariants (each stream's included); the error names the part and
    /// the key.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.values.check_invariants()?;
        self.watch
            .check_invariants()
            .map_err(|e| format!("watch: {e}"))?;
        self.effects
            .check_invariants()
            .map_err(|e| format!("effects: {e}"))?;
        self.stats
            .check_invariants()
            .map_err(|e| format!("stats: {e}"))
    }
}

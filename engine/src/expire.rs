//! Key expiry: Redis's active expiry cycle over each database's keys with a TTL, and the full
//! sweep a test double runs after moving its clock.
//!
//! Lazy expiry lives in the [`Db`] itself: a key whose time has passed reads as missing, and
//! any write to it, or [`Db::expire_if_due`] (which the server calls for every key a command
//! names), deletes it — touching WATCH and signalling blocked readers as DEL does.
//!
//! The active cycle ([`Keyspace::active_expire_cycle`]) is Redis's slow cycle: per database,
//! sample up to [`KEYS_PER_LOOP`] keys with a TTL from where the last scan stopped (the keys
//! with a TTL are a dense array, scanned by position), delete the expired
//! ones, and go on while more than [`ACCEPTABLE_STALE_PERC`]% of a sample had expired and the
//! scan has not wrapped; every 16 loops, stop if the CPU budget the caller gives (Redis: 25%
//! of one `hz` tick) is spent. TTLs are read from the keyspace's injected clock; the budget
//! is real time, because it limits how long other clients wait for the lock. It also keeps
//! Redis's running estimates: each database's average TTL (2% weight per sample batch) and
//! the share of stale keys (5% per cycle).
//!
//! A cycle runs one lock hold at a time ([`ExpireCycle::step`]): the server's cron lets its
//! clients' tasks run between holds, so a client waits for at most one hold, however many
//! keys are expiring, where Redis's clients wait for its whole slow cycle (up to 25% of a
//! tick).
//!
//! Hash fields with a TTL expire in the same cycle: once a database's keys are sampled, its
//! hashes that hold fields past their time lose them (at most a fixed number per lock hold;
//! see `types/hash/commands/expiry.rs`), and the full sweep takes them all.
//!
//! Invariant: the cycle holds the lock for at most 16 loops at a time, and serves the blocked
//! readers its deletions signalled before releasing it, as after any command.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::blocking::Wake;
use crate::command::CommandSpec;
use crate::keyspace::{Db, Keyspace};

/// Keys sampled per loop (Redis's `ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP`).
pub const KEYS_PER_LOOP: usize = 20;
/// A loop that found more than this share of stale keys is repeated.
pub const ACCEPTABLE_STALE_PERC: u64 = 10;
/// Loops between time checks (and lock releases).
const LOOPS_PER_CHECK: u32 = 16;
/// `pow(0.98, n)` for `n` in 1..=16: the weight an old average TTL keeps after `n` batches.
const AVG_TTL_FACTOR: [f64; 16] = [
    0.98, 0.9604, 0.941192, 0.922368, 0.903921, 0.885842, 0.868126, 0.850763, 0.833748, 0.817073,
    0.800731, 0.784717, 0.769022, 0.753642, 0.738569, 0.723798,
];

/// The active cycle's figures, for INFO stats.
#[derive(Debug, Default, Clone, Copy)]
pub struct CycleStats {
    /// Running estimate of the share of stale keys, 0..=1 (`expired_stale_perc` / 100).
    pub stale_share: f64,
    /// Cycles that stopped at their time budget (`expired_time_cap_reached_count`).
    pub time_cap_reached: u64,
    /// Microseconds spent in cycles (`expire_cycle_cpu_milliseconds` * 1000).
    pub time_used_us: u64,
}

/// Expiry figures of a whole keyspace.
#[derive(Debug, Default, Clone, Copy)]
pub struct ExpireStats {
    /// Keys deleted because they expired (`expired_keys`).
    pub expired_keys: u64,
    /// Of those, deleted by the active cycle (`expired_keys_active`).
    pub expired_keys_active: u64,
    /// The cycle's own figures.
    pub cycle: CycleStats,
}

/// What one sampling loop saw.
#[derive(Debug, Default)]
struct Sample {
    sampled: u64,
    expired: u64,
    ttl_sum: u64,
    ttl_samples: u64,
    /// The scan reached the last key and wraps.
    done: bool,
}

impl Db {
    /// One loop: samples up to `count` keys with a TTL after the cursor, deleting the
    /// expired ones.
    fn sample_expires(&mut self, count: usize) -> Sample {
        let from = self.values.expire_cursor;
        let to = from
            .saturating_add(count)
            .min(self.values.map.volatile_len());
        let picked: Vec<(Bytes, u64)> = (from..to)
            .map(|slot| {
                let (key, at) = self.values.map.volatile_at(slot);
                (Bytes::copy_from_slice(key), at)
            })
            .collect();
        let mut sample = Sample::default();
        for (key, at) in picked {
            sample.sampled += 1;
            if at <= self.values.now_ms {
                if self.expire_if_due(&key) {
                    sample.expired += 1;
                    self.stats.expired_keys_active += 1;
                }
            } else {
                sample.ttl_sum += at - self.values.now_ms;
                sample.ttl_samples += 1;
            }
        }
        // Each deletion moved a record from the end into the range just sampled: the scan
        // resumes early by as many slots, so those are sampled too.
        let next = to.saturating_sub(sample.expired as usize);
        sample.done = next >= self.values.map.volatile_len();
        self.values.expire_cursor = if sample.done { 0 } else { next };
        sample
    }

    /// Folds a batch of TTL samples into the running average, as Redis does every 16 loops.
    fn update_avg_ttl(&mut self, ttl_sum: u64, ttl_samples: u64, batches: usize) {
        if ttl_samples == 0 || batches == 0 {
            return;
        }
        let avg = ttl_sum / ttl_samples;
        self.values.avg_ttl_ms = if self.values.avg_ttl_ms == 0 {
            avg
        } else {
            let factor = AVG_TTL_FACTOR[batches.min(AVG_TTL_FACTOR.len()) - 1];
            (avg as f64 + (self.values.avg_ttl_ms as f64 - avg as f64) * factor) as u64
        };
    }

    /// Deletes every key whose time has passed; returns how many.
    fn sweep_expired(&mut self) -> usize {
        let due: Vec<Bytes> = (0..self.values.map.volatile_len())
            .map(|slot| self.values.map.volatile_at(slot))
            .filter(|&(_, at)| at <= self.values.now_ms)
            .map(|(k, _)| Bytes::copy_from_slice(k))
            .collect();
        let keys = due.iter().filter(|key| self.expire_if_due(key)).count();
        self.expire_hash_fields(usize::MAX);
        keys
    }
}

/// The keys `argv` names, by its spec's key positions; XREAD and XREADGROUP name theirs
/// after `STREAMS`, found by walking their options ([`crate::command::streams_keys`]).
pub fn command_keys<'a>(spec: &CommandSpec, argv: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let argc = argv.len() as i64;
    let k = spec.keys;
    if spec.name == "sort" {
        // The key, and STORE's destination, found as Redis's `sortGetKeys` walks the
        // options: LIMIT skips two arguments, GET and BY one; the last STORE counts.
        let mut store = None;
        let mut i = 2;
        while i < argv.len() {
            let arg = argv[i];
            if arg.eq_ignore_ascii_case(b"limit") {
                i += 2;
            } else if arg.eq_ignore_ascii_case(b"get") || arg.eq_ignore_ascii_case(b"by") {
                i += 1;
            } else if arg.eq_ignore_ascii_case(b"store") && i + 1 < argv.len() {
                store = Some(argv[i + 1]);
                i += 1;
            }
            i += 1;
        }
        return argv.get(1).copied().into_iter().chain(store).collect();
    }
    if k.first > 0 && k.step > 0 {
        let last = if k.last < 0 { argc + k.last } else { k.last };
        return (k.first..=last.min(argc - 1))
            .step_by(k.step as usize)
            .map(|i| argv[i as usize])
            .collect();
    }
    if spec.name == "xread" || spec.name == "xreadgroup" {
        return crate::command::streams_keys(argv);
    }
    if spec.name == "lmpop" || spec.name == "blmpop" {
        return crate::types::list::commands::numkeys_keys(
            argv,
            if spec.name == "lmpop" { 1 } else { 2 },
        );
    }
    Vec::new()
}

impl Db {
    /// Lazy expiry and the access update for one command (Redis's `lookupKey`): deletes those
    /// of its keys whose time has passed, and records an access to the others in their
    /// metadata, except for the commands Redis looks up with `LOOKUP_NOTOUCH`, for a CLIENT
    /// NO-TOUCH caller (whose TOUCH still counts), and while a forked child saves.
    pub fn expire_keys_of(&mut self, spec: &CommandSpec, argv: &[&[u8]]) {
        let touches = touches_its_keys(spec.name)
            && self.values.access.mode != crate::db::access::AccessMode::Lrm
            && (!self.values.no_touch || spec.name == "touch")
            && !crate::db::access::child_active();
        if !touches && self.values.map.volatile_len() == 0 {
            return;
        }
        let k = spec.keys;
        if k.first > 0 && k.step > 0 {
            // The common shape, walked without collecting the keys.
            let argc = argv.len() as i64;
            let last = if k.last < 0 { argc + k.last } else { k.last };
            for i in (k.first..=last.min(argc - 1)).step_by(k.step as usize) {
                self.look_up(argv[i as usize], touches);
            }
            return;
        }
        for key in command_keys(spec, argv) {
            self.look_up(key, touches);
        }
    }

    /// One key of a command: deleted if its time has passed, else its access recorded if
    /// `touches` (one table lookup either way).
    fn look_up(&mut self, key: &[u8], touches: bool) {
        let Some(pos) = self.values.map.find(key) else {
            return;
        };
        if self
            .values
            .map
            .expiry_at(pos)
            .is_some_and(|at| at <= self.values.now_ms)
        {
            self.expire_if_due(key);
        } else if touches {
            self.values.accessed_at(pos);
        }
    }
}

/// Commands that read their keys without moving the access metadata (Redis looks their keys
/// up with `LOOKUP_NOTOUCH`, or not through `lookupKey`).
const NO_TOUCH_COMMANDS: &[&str] = &[
    "exists",
    "type",
    "ttl",
    "pttl",
    "expiretime",
    "pexpiretime",
    "object",
    "memory",
    "debug",
    "del",
    "unlink",
];

/// The first bytes of [`NO_TOUCH_COMMANDS`]: most commands are told apart from them by their
/// first byte, without comparing names.
const NO_TOUCH_FIRST_BYTES: [bool; 256] = {
    let mut firsts = [false; 256];
    let mut i = 0;
    while i < NO_TOUCH_COMMANDS.len() {
        firsts[NO_TOUCH_COMMANDS[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    firsts
};

/// Whether the command `name` (lower case) records an access to its keys.
fn touches_its_keys(name: &str) -> bool {
    match name.as_bytes().first() {
        Some(&first) if NO_TOUCH_FIRST_BYTES[usize::from(first)] => {
            !NO_TOUCH_COMMANDS.contains(&name)
        }
        _ => true,
    }
}

/// Where one database's cycle stands between lock holds.
#[derive(Debug, Default)]
struct DbRun {
    sampled: u64,
    expired: u64,
    ttl_sum: u64,
    ttl_samples: u64,
    ttl_batches: usize,
}

/// One active expiry cycle, run one lock hold at a time ([`ExpireCycle::step`]) so that its
/// caller may let other work run between holds (the server's cron yields to its clients'
/// tasks there); [`Keyspace::active_expire_cycle`] runs one through at once. The budget
/// counts only the time spent in steps. Its figures are recorded when it is dropped.
#[derive(Debug)]
pub struct ExpireCycle<'a> {
    keyspace: &'a Keyspace,
    budget: Duration,
    /// Time spent in steps so far.
    used: Duration,
    /// The database being sampled.
    index: usize,
    run: DbRun,
    loops: u32,
    sampled: u64,
    expired: u64,
    capped: bool,
    done: bool,
}

impl ExpireCycle<'_> {
    /// Runs one lock hold (up to 16 sampling loops of one database);
    /// returns whether the cycle goes on (call again), false once it is over: every database
    /// was sampled until mostly fresh, or the budget is spent.
    pub fn step(&mut self) -> bool {
        if self.done {
            return false;
        }
        let started = Instant::now();
        let keyspace = self.keyspace;
        let index = self.index;
        let snapshot = keyspace.snapshot();
        let (repeat, wakers) = {
            let mut dbs = keyspace.dbs.lock();
            match dbs.get_mut(index) {
                None => {
                    self.done = true;
                    (false, Vec::new())
                }
                Some(db) => {
                    db.values.now_ms = snapshot.now_ms;
                    db.effects.propagating = keyspace.propagation_on();
                    db.effects.notify_flags = keyspace.notify_flags();
                    db.watch.tracking = keyspace.key_tracking();
                    let repeat = self.sample_loops(db);
                    // Hash fields past their TTL (Redis's active expiry of `subexpires`),
                    // once per database per cycle, a bounded number per hold.
                    if !repeat {
                        db.expire_hash_fields(
                            crate::types::hash::commands::expiry::FIELDS_PER_STEP,
                        );
                    }
                    // Each deletion propagates as a DEL, fed under the lock (execution order).
                    let propagated = db.take_propagated();
                    let wakers = db.serve_signalled(&snapshot);
                    if !propagated.is_empty() {
                        keyspace.feed(propagated.into_iter().map(|argv| (index, argv)).collect());
                    }
                    keyspace.hand_over_events(std::iter::once((index, &mut *db)));
                    (repeat, wakers)
                }
            }
        };
        wake_all(wakers);
        self.used += started.elapsed();
        if !repeat {
            self.next_db();
        } else if self.used > self.budget {
            self.capped = true;
            self.next_db();
            self.done = true;
        }
        !self.done
    }

    /// Up to [`LOOPS_PER_CHECK`] loops on `db`; returns whether it should be sampled again.
    fn sample_loops(&mut self, db: &mut Db) -> bool {
        let run = &mut self.run;
        for _ in 0..LOOPS_PER_CHECK {
            self.loops += 1;
            if db.values.map.volatile_len() == 0 {
                db.values.avg_ttl_ms = 0;
                return false;
            }
            let sample = db.sample_expires(KEYS_PER_LOOP.min(db.values.map.volatile_len()));
            run.sampled += sample.sampled;
            run.expired += sample.expired;
            if sample.ttl_samples > 0 {
                run.ttl_sum += sample.ttl_sum;
                run.ttl_samples += sample.ttl_samples;
                run.ttl_batches += 1;
            }
            let repeat = !sample.done
                && (sample.sampled == 0
                    || sample.expired * 100 / sample.sampled > ACCEPTABLE_STALE_PERC);
            if self.loops % LOOPS_PER_CHECK == 0 || !repeat {
                db.update_avg_ttl(run.ttl_sum, run.ttl_samples, run.ttl_batches);
                (run.ttl_sum, run.ttl_samples, run.ttl_batches) = (0, 0, 0);
            }
            if !repeat {
                return false;
            }
        }
        true
    }

    /// Counts the database just sampled and moves to the next.
    fn next_db(&mut self) {
        let run = std::mem::take(&mut self.run);
        self.sampled += run.sampled;
        self.expired += run.expired;
        self.loops = 0;
        self.index += 1;
        if self.index >= self.keyspace.databases() {
            self.done = true;
        }
    }

    /// Keys deleted so far.
    pub fn expired(&self) -> u64 {
        self.expired + self.run.expired
    }
}

impl Drop for ExpireCycle<'_> {
    fn drop(&mut self) {
        let sampled = self.sampled + self.run.sampled;
        let expired = self.expired();
        let mut cycle = self.keyspace.cycle.lock();
        cycle.time_used_us += self.used.as_micros() as u64;
        if self.capped {
            cycle.time_cap_reached += 1;
        }
        let share = if sampled == 0 {
            0.0
        } else {
            expired as f64 / sampled as f64
        };
        cycle.stale_share = share * 0.05 + cycle.stale_share * 0.95;
    }
}

impl Keyspace {
    /// Starts an active expiry cycle over every database with `budget` of real time (spent
    /// in its steps); run it with [`ExpireCycle::step`].
    pub fn expire_cycle(&self, budget: Duration) -> ExpireCycle<'_> {
        ExpireCycle {
            keyspace: self,
            budget,
            used: Duration::ZERO,
            index: 0,
            run: DbRun::default(),
            loops: 0,
            sampled: 0,
            expired: 0,
            capped: false,
            done: self.databases() == 0,
        }
    }

    /// Runs one active expiry cycle over every database within `budget` of real time, all at
    /// once; returns how many keys it deleted.
    pub fn active_expire_cycle(&self, budget: Duration) -> u64 {
        let mut cycle = self.expire_cycle(budget);
        while cycle.step() {}
        cycle.expired()
    }

    /// Deletes every key whose time has passed by the clock, in every database; returns how
    /// many. A test double calls this after moving its manual clock, so expiry does not
    /// depend on where the sampling cycle stands.
    pub fn expire_all_due(&self) -> usize {
        let mut wakers = Vec::new();
        let expired = self.expire_all_due_in(&mut self.dbs.lock(), &mut wakers);
        wake_all(wakers);
        expired
    }

    /// [`Keyspace::expire_all_due`] over databases already locked; the blocked readers it
    /// served go to `wakers`, to wake once the lock is released.
    pub(crate) fn expire_all_due_in(
        &self,
        dbs: &mut [Db],
        wakers: &mut Vec<Arc<dyn Wake>>,
    ) -> usize {
        let snapshot = self.snapshot();
        let mut expired = 0;
        let mut propagated = Vec::new();
        let propagating = self.propagation_on();
        let notify_flags = self.notify_flags();
        let tracking = self.key_tracking();
        for (index, db) in dbs.iter_mut().enumerate() {
            db.values.now_ms = snapshot.now_ms;
            db.effects.propagating = propagating;
            db.effects.notify_flags = notify_flags;
            db.watch.tracking = tracking;
            let n = db.sweep_expired();
            db.stats.expired_keys_active += n as u64;
            expired += n;
            wakers.extend(db.serve_signalled(&snapshot));
            propagated.extend(db.take_propagated().into_iter().map(|argv| (index, argv)));
        }
        if !propagated.is_empty() {
            self.feed(propagated);
        }
        self.hand_over_events(dbs.iter_mut().enumerate());
        expired
    }

    /// What a moved clock makes due, at once: every key whose TTL ran out is deleted
    /// ([`Keyspace::expire_all_due`]), then every blocked command whose deadline passed times
    /// out ([`Keyspace::expire_blocked`]). Whoever moves a manual clock calls this (the test
    /// double, `EMQ.CLOCK`), so a client sees the effects right after the move rather than
    /// whenever the sampling expiry cycle and the blocking timer come round.
    pub fn catch_up_with_clock(self: &Arc<Self>) {
        let mut batch = self.batch();
        batch.catch_up_with_clock();
        batch.end();
    }

    /// The active cycle's own figures (a lock of its own: callable under the keyspace lock).
    pub fn cycle_stats(&self) -> CycleStats {
        *self.cycle.lock()
    }

    /// The expiry figures of every database and the cycle. Takes the keyspace lock: not for
    /// use inside [`Keyspace::run`] (there, sum [`Db::expired_counts`] and add
    /// [`Keyspace::cycle_stats`]).
    pub fn expire_stats(&self) -> ExpireStats {
        let cycle = self.cycle_stats();
        let dbs = self.dbs.lock();
        let mut stats = ExpireStats {
            cycle,
            ..ExpireStats::default()
        };
        for db in dbs.iter() {
            let (all, active) = db.expired_counts();
            stats.expired_keys += all;
            stats.expired_keys_active += active;
        }
        stats
    }

    /// Zeroes the cycle's figures (CONFIG RESETSTAT, with [`Db::reset_expired_counts`]).
    pub fn reset_cycle_stats(&self) {
        *self.cycle.lock() = CycleStats::default();
    }
}

impl Db {
    /// Keys deleted because they expired, and of those by the active cycle.
    pub fn expired_counts(&self) -> (u64, u64) {
        (self.stats.expired_keys, self.stats.expired_keys_active)
    }

    /// Hash fields deleted because they expired, and of those the active cycle's (INFO's
    /// `expired_subkeys`, `expired_subkeys_active`).
    pub fn expired_subkey_counts(&self) -> (u64, u64) {
        (
            self.stats.expired_subkeys,
            self.stats.expired_subkeys_active,
        )
    }

    /// Zeroes [`Db::expired_counts`], [`Db::expired_subkey_counts`] and the read lookup
    /// counts (CONFIG RESETSTAT).
    pub fn reset_expired_counts(&mut self) {
        self.stats.expired_keys = 0;
        self.stats.expired_keys_active = 0;
        self.stats.expired_subkeys = 0;
        self.stats.expired_subkeys_active = 0;
        self.stats.keyspace_hits = 0;
        self.stats.keyspace_misses = 0;
    }
}

fn wake_all(wakers: Vec<std::sync::Arc<dyn Wake>>) {
    for waker in wakers {
        waker.wake();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::ManualClock;
    use crate::keyspace::Value;

    #[test]
    fn only_the_no_touch_commands_leave_access_alone() {
        for name in NO_TOUCH_COMMANDS {
            assert!(!touches_its_keys(name), "{name}");
        }
        for name in [
            "get", "set", "dump", "expire", "persist", "pexpire", "touch", "object2", "",
        ] {
            assert!(touches_its_keys(name), "{name}");
        }
    }

    fn keyspace_with(keys: usize, ttl_every: usize) -> (Arc<ManualClock>, Keyspace) {
        let clock = Arc::new(ManualClock::new(1_000));
        let keyspace = Keyspace::new(clock.clone());
        keyspace.run(|db, snapshot| {
            for i in 0..keys {
                let key = Bytes::from(format!("k{i:05}"));
                db.insert(&key, Value::String(Bytes::from_static(b"v").into()));
                let ttl = if i % ttl_every == 0 { 100 } else { 1_000_000 };
                db.set_expiry(&key, Some(snapshot.now_ms + ttl));
            }
        });
        (clock, keyspace)
    }

    #[test]
    fn a_cycle_repeats_while_samples_are_mostly_stale() {
        let (clock, keyspace) = keyspace_with(200, 1);
        clock.advance(100);
        assert_eq!(keyspace.active_expire_cycle(Duration::from_secs(10)), 200);
        assert_eq!(keyspace.run(|db, _| db.len()), 0);
        keyspace.check_invariants().unwrap();
        let stats = keyspace.expire_stats();
        assert_eq!((stats.expired_keys, stats.expired_keys_active), (200, 200));
        assert!(stats.cycle.stale_share > 0.0);
    }

    #[test]
    fn a_cycle_stops_once_a_sample_is_mostly_fresh() {
        // One key in 20 expires: the first sample is 5% stale, under the 10% threshold.
        let (clock, keyspace) = keyspace_with(400, 20);
        clock.advance(100);
        let first = keyspace.active_expire_cycle(Duration::from_secs(10));
        assert_eq!(first, 1);
        assert_eq!(keyspace.run(|db, _| db.len()), 380);
        assert_eq!(keyspace.run(|db, _| db.values.expires_count()), 380);
        // Later cycles go on from where the scan stopped, and wrap.
        let mut total = first;
        for _ in 0..40 {
            total += keyspace.active_expire_cycle(Duration::from_secs(10));
        }
        assert_eq!(total, 20);
        assert!(keyspace.run(|db, _| db.avg_ttl_ms()) > 900_000);
    }

    #[test]
    fn a_step_holds_the_lock_for_one_batch_of_loops_only() {
        let per_hold = (LOOPS_PER_CHECK as usize * KEYS_PER_LOOP) as u64;
        let (clock, keyspace) = keyspace_with(1_000, 1);
        clock.advance(100);
        let mut cycle = keyspace.expire_cycle(Duration::from_secs(10));
        assert!(cycle.step());
        assert_eq!(cycle.expired(), per_hold);
        // Between steps the keyspace is free: another caller runs (and sees the keys the
        // cycle has not reached yet still stored, though expired).
        assert_eq!(
            keyspace.run(|db, _| db.values.map.volatile_len()),
            1_000 - per_hold as usize
        );
        // 1,000 keys at 320 a hold: three more holds, the last finding the scan's end.
        let mut holds = 1;
        loop {
            holds += 1;
            if !cycle.step() {
                break;
            }
        }
        assert_eq!(holds, 4);
        assert_eq!(cycle.expired(), 1_000);
        assert!(!cycle.step());
        drop(cycle);
        assert_eq!(keyspace.expire_stats().expired_keys_active, 1_000);
        keyspace.check_invariants().unwrap();
    }

    #[test]
    fn a_cycle_over_its_budget_stops_and_counts_the_cap() {
        let (clock, keyspace) = keyspace_with(1_000, 1);
        clock.advance(100);
        let deleted = keyspace.active_expire_cycle(Duration::ZERO);
        assert_eq!(deleted, (LOOPS_PER_CHECK as usize * KEYS_PER_LOOP) as u64);
        assert_eq!(keyspace.cycle_stats().time_cap_reached, 1);
    }

    #[test]
    fn the_sweep_deletes_every_due_key_and_counts_it() {
        let (clock, keyspace) = keyspace_with(50, 2);
        assert_eq!(keyspace.expire_all_due(), 0);
        clock.advance(100);
        assert_eq!(keyspace.expire_all_due(), 25);
        assert_eq!(keyspace.expire_stats().expired_keys, 25);
        keyspace.reset_cycle_stats();
        keyspace.run(|db, _| db.reset_expired_counts());
        assert_eq!(keyspace.expire_stats().expired_keys, 0);
    }

    #[test]
    fn an_expired_key_is_deleted_on_access_and_keysizes_follow() {
        let (clock, keyspace) = keyspace_with(3, 1);
        assert_eq!(keyspace.run(|db, _| db.string_sizes()[1]), 3);
        clock.advance(100);
        keyspace.run(|db, _| {
            assert!(db.get(b"k00000").is_none());
            assert!(db.expire_if_due(b"k00000"));
            assert!(!db.expire_if_due(b"k00000"));
            assert_eq!(db.string_sizes()[1], 2);
        });
        assert_eq!(keyspace.expire_stats().expired_keys, 1);
        keyspace.check_invariants().unwrap();
    }

    #[derive(Debug, Default)]
    struct Collect(parking_lot::Mutex<Vec<(usize, Vec<Bytes>)>>);

    impl crate::propagate::PropagationSink for Collect {
        fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
            self.0.lock().extend(commands);
        }
    }

    fn dels(sink: &Collect) -> Vec<(usize, Vec<Bytes>)> {
        std::mem::take(&mut *sink.0.lock())
    }

    #[test]
    fn every_expiry_deletion_propagates_as_del() {
        let (clock, keyspace) = keyspace_with(4, 2);
        let sink = Arc::new(Collect::default());
        keyspace.set_propagation_sink(Some(sink.clone()));
        clock.advance(100);
        let del = |key: &str| {
            (
                0,
                vec![Bytes::from_static(b"DEL"), Bytes::from(key.to_owned())],
            )
        };
        // Lazy: a command's access.
        keyspace.run(|db, _| assert!(db.expire_if_due(b"k00000")));
        assert_eq!(dels(&sink), vec![del("k00000")]);
        // Active: the cycle and the sweep.
        assert_eq!(keyspace.active_expire_cycle(Duration::from_secs(10)), 1);
        assert_eq!(dels(&sink), vec![del("k00002")]);
        keyspace.run(|db, snapshot| {
            db.set_expiry(b"k00001", Some(snapshot.now_ms));
        });
        assert_eq!(keyspace.expire_all_due(), 1);
        assert_eq!(dels(&sink), vec![del("k00001")]);
    }
}

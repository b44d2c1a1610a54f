//! Eviction under `maxmemory`, as Redis 8.8's `evict.c`: the caller (the server, before each
//! command, where Redis's `processCommand` calls `performEvictions`) says how much memory must
//! go and how to read the memory in use; [`Batch::evict`] deletes keys chosen by the policy
//! until that much is freed, the time budget of `maxmemory-eviction-tenacity` is spent, or
//! nothing is left to evict.
//!
//! - **LRU, LFU, LRM, volatile-ttl**: an eviction pool of [`POOL_SIZE`] candidates, kept
//!   between calls and sorted by score (idle time; `255 -` the decayed LFU counter; `u64::MAX
//!   -` the expiry time), refilled by sampling `maxmemory-samples` random keys of every
//!   database (all keys, or the keys with a TTL under `volatile-*`); the best-scored candidate
//!   that still exists is evicted. A candidate inserted into a full pool displaces the
//!   worst-scored one, exactly as `evictionPoolPopulate`.
//! - **random**: one uniformly random key (or key with a TTL), visiting the databases in
//!   turn.
//!
//! Each eviction is its own execution unit: the key is deleted, `evicted` (class `e`) fires,
//! WATCH sees it modified, blocked readers of a stream are signalled, and a `DEL` is
//! propagated alone (never wrapped with anything else); `evicted_keys` counts it. Expiry
//! statistics are not touched. The memory freed is measured across the deletion alone (as
//! Redis's `key_mem_freed`), so the propagated `DEL` on its way to the AOF does not count.
//!
//! Redis's eviction timer (`startEvictionTimeProc`, which goes on evicting between commands
//! once a command's time budget ran out) is replaced by the next command and the server's
//! `hz` cron: a command that finds the budget spent is let through
//! ([`EvictOutcome::Running`], as `EVICT_RUNNING`), and the next call goes on evicting.
//!
//! Invariant (checked by [`EvictionState::check_invariants`]): the pool holds at most
//! [`POOL_SIZE`] candidates, sorted by ascending score.

use std::sync::atomic::Ordering;
use std::time::Instant;

use bytes::Bytes;

use crate::batch::Batch;
use crate::config::{Eviction, Policy};
use crate::keyspace::Db;
use crate::notify as events;

/// Candidates kept in the eviction pool (Redis's `EVPOOL_SIZE`).
pub const POOL_SIZE: usize = 16;
/// Evictions between time checks (Redis checks every 16).
const EVICTIONS_PER_CHECK: u64 = 16;

/// One candidate of the pool.
#[derive(Debug, Clone)]
struct Candidate {
    /// Higher evicts first.
    score: u64,
    key: Bytes,
    db: usize,
}

/// The state eviction keeps between calls: the pool and the random policies' next database.
#[derive(Debug, Default)]
pub struct EvictionState {
    /// Sorted by ascending score; at most [`POOL_SIZE`].
    pool: Vec<Candidate>,
    /// The database the random policies try next.
    next_db: usize,
}

impl EvictionState {
    /// Adds a sampled key, as `evictionPoolPopulate` does: dropped if the pool is full and it
    /// scores below every candidate, else inserted in order, the lowest-scored candidate
    /// going if the pool is full.
    fn offer(&mut self, score: u64, key: &[u8], db: usize) {
        let k = self.pool.partition_point(|c| c.score < score);
        if k == 0 && self.pool.len() == POOL_SIZE {
            return;
        }
        let candidate = Candidate {
            score,
            key: Bytes::copy_from_slice(key),
            db,
        };
        if self.pool.len() < POOL_SIZE {
            self.pool.insert(k, candidate);
        } else {
            self.pool.remove(0);
            self.pool.insert(k - 1, candidate);
        }
    }

    /// Checks that the pool is sorted and bounded.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.pool.len() > POOL_SIZE {
            return Err(format!("{} candidates in the pool", self.pool.len()));
        }
        if self.pool.windows(2).any(|w| w[0].score > w[1].score) {
            return Err("the pool is not sorted by score".into());
        }
        Ok(())
    }
}

/// What [`Batch::evict`] achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvictOutcome {
    /// Enough was freed (or nothing had to be).
    Ok,
    /// The time budget ran out first: the command goes on, the next one evicts more.
    Running,
    /// Over the limit with nothing (more) to evict: DENY_OOM commands are refused.
    Fail,
}

impl Db {
    /// Samples `maxmemory-samples` keys of this database (with replacement) into `state`'s
    /// pool, scored by `settings`' policy.
    fn sample_into(&mut self, state: &mut EvictionState, index: usize, settings: &Eviction) {
        let all = settings.policy.all_keys();
        let access = settings.access();
        let now = self.values.now_ms;
        for _ in 0..settings.samples {
            let random = self.values.random();
            let pos = if all {
                self.values.map.random_pos(random)
            } else {
                self.values.map.random_volatile_pos(random)
            };
            let Some(pos) = pos else {
                return;
            };
            let entry = self.values.map.entry(pos);
            let score = match settings.policy {
                Policy::VolatileTtl => u64::MAX - self.values.map.expiry_at(pos).unwrap_or(0),
                _ => access.score(entry.meta(), now),
            };
            state.offer(score, entry.key.as_bytes(), index);
        }
    }

    /// Keys eviction may choose from here under `policy`.
    fn evictable(&self, policy: Policy) -> usize {
        if policy.all_keys() {
            self.values.map.len()
        } else {
            self.values.map.volatile_len()
        }
    }

    /// A random evictable key under `policy`.
    fn random_evictable(&mut self, policy: Policy) -> Option<Bytes> {
        let random = self.values.random();
        let pos = if policy.all_keys() {
            self.values.map.random_pos(random)
        } else {
            self.values.map.random_volatile_pos(random)
        }?;
        Some(Bytes::copy_from_slice(&self.values.map.entry(pos).key))
    }

    /// Whether `key` may still be evicted under `policy` (a pool candidate may have been
    /// deleted, or lost its TTL, since it was sampled).
    fn still_evictable(&self, key: &[u8], policy: Policy) -> bool {
        match self.values.map.find(key) {
            None => false,
            Some(pos) => policy.all_keys() || self.values.map.expiry_at(pos).is_some(),
        }
    }

    /// Deletes `key` as an eviction (Redis's `deleteEvictedKeyAndPropagate`); returns the bytes
    /// `memory` says the deletion freed (without a measure, the value's own estimate and the
    /// key's entry).
    fn evict_key(&mut self, key: &[u8], memory: Option<&dyn Fn() -> u64>) -> u64 {
        let before = memory.map(|m| m());
        let previous = self.values.take(key);
        let was_stream = matches!(previous, Some(crate::types::Value::Stream(_)));
        let estimate = previous
            .as_ref()
            .map_or(0, |v| v.memory_bytes() + key.len() + crate::db::ENTRY_BYTES);
        drop(previous);
        let freed = match (memory, before) {
            (Some(m), Some(before)) => before.saturating_sub(m()),
            _ => estimate as u64,
        };
        self.notify(events::EVICTED, "evicted", key);
        self.touch(key);
        if was_stream {
            self.signal_deleted(key);
        }
        self.propagate(vec![
            Bytes::from_static(b"DEL"),
            Bytes::copy_from_slice(key),
        ]);
        self.add_dirty(1);
        freed
    }
}

impl Batch<'_> {
    /// Evicts keys under `settings` until `to_free` bytes are freed as `memory` measures them
    /// (`None`: as the values' own estimates say), the tenacity's time budget is spent, or
    /// nothing is left to evict (see the module doc). `noeviction` evicts nothing and fails.
    pub fn evict(
        &mut self,
        settings: &Eviction,
        to_free: u64,
        memory: Option<&dyn Fn() -> u64>,
    ) -> EvictOutcome {
        if to_free == 0 {
            return EvictOutcome::Ok;
        }
        if settings.policy == Policy::NoEviction {
            return EvictOutcome::Fail;
        }
        let started = Instant::now();
        let limit = settings.time_limit();
        let keyspace = std::sync::Arc::clone(self.keyspace());
        // The keyspace lock before the eviction state's, as every path takes them: the cron
        // and a command evicting at once would otherwise each hold the lock the other waits
        // for.
        self.dbs();
        let mut state = keyspace.eviction.lock();
        let mut freed = 0u64;
        let mut evicted = 0u64;
        while freed < to_free {
            // One execution unit per eviction: the key is chosen and deleted in one call, whose
            // DEL is propagated alone.
            let deleted = self.run_all(|mut dbs, _| {
                let dbs = dbs.all();
                let (db, key) = choose(dbs, &mut state, settings)?;
                Some(dbs[db].evict_key(&key, memory))
            });
            let Some(bytes) = deleted else {
                return EvictOutcome::Fail;
            };
            freed += bytes;
            keyspace.evicted_keys.fetch_add(1, Ordering::Relaxed);
            evicted += 1;
            if evicted % EVICTIONS_PER_CHECK == 0
                && limit.is_some_and(|limit| started.elapsed() > limit)
            {
                return EvictOutcome::Running;
            }
        }
        EvictOutcome::Ok
    }
}

/// The next key to evict, and its database; `None` if nothing is evictable.
fn choose(
    dbs: &mut [Db],
    state: &mut EvictionState,
    settings: &Eviction,
) -> Option<(usize, Bytes)> {
    let policy = settings.policy;
    if matches!(policy, Policy::AllkeysRandom | Policy::VolatileRandom) {
        let n = dbs.len();
        for _ in 0..n {
            state.next_db = (state.next_db + 1) % n;
            let index = state.next_db;
            if let Some(key) = dbs[index].random_evictable(policy) {
                return Some((index, key));
            }
        }
        return None;
    }
    loop {
        let mut total = 0;
        for (index, db) in dbs.iter_mut().enumerate() {
            let keys = db.evictable(policy);
            if keys == 0 {
                continue;
            }
            total += keys;
            db.sample_into(state, index, settings);
        }
        if total == 0 {
            return None;
        }
        // Best first; a candidate whose key went meanwhile is a ghost and is dropped. This
        // round's candidates are live, so one is found.
        while let Some(best) = state.pool.pop() {
            if dbs
                .get(best.db)
                .is_some_and(|db| db.still_evictable(&best.key, policy))
            {
                return Some((best.db, best.key));
            }
        }
    }
}

impl crate::keyspace::Keyspace {
    /// Keys evicted since start or the last [`Keyspace::reset_evicted_keys`]
    /// (`evicted_keys`).
    pub fn evicted_keys(&self) -> u64 {
        self.evicted_keys.load(Ordering::Relaxed)
    }

    /// Zeroes `evicted_keys` (CONFIG RESETSTAT).
    pub fn reset_evicted_keys(&self) {
        self.evicted_keys.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parking_lot::Mutex;

    use super::*;
    use crate::clock::ManualClock;
    use crate::config::Config;
    use crate::keyspace::Keyspace;
    use crate::notify::{Notification, NotificationSink};
    use crate::propagate::PropagationSink;

    const NOW_MS: u64 = 1_700_000_000_000;

    /// Each feed (one execution unit) as it came.
    #[derive(Debug, Default)]
    struct Units(Mutex<Vec<Vec<Vec<Bytes>>>>);

    impl PropagationSink for Units {
        fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
            self.0
                .lock()
                .push(commands.into_iter().map(|(_, argv)| argv).collect());
        }
    }

    #[derive(Debug, Default)]
    struct Events(Mutex<Vec<(&'static str, Bytes)>>);

    impl NotificationSink for Events {
        fn notify(&self, _flags: u32, events: Vec<Notification>) {
            self.0
                .lock()
                .extend(events.into_iter().map(|n| (n.event, n.key)));
        }
    }

    struct Setup {
        ks: Arc<Keyspace>,
        clock: Arc<ManualClock>,
        units: Arc<Units>,
        events: Arc<Events>,
    }

    fn setup(policy: Policy, databases: usize) -> Setup {
        let clock = Arc::new(ManualClock::new(NOW_MS));
        let ks = Arc::new(Keyspace::with_databases(
            clock.clone(),
            Arc::new(Config::default()),
            databases,
        ));
        ks.config().set_maxmemory_policy(policy);
        let units = Arc::new(Units::default());
        let events = Arc::new(Events::default());
        ks.set_propagation_sink(Some(units.clone()));
        ks.config()
            .set_notify_flags(crate::notify::parse("KEA").unwrap_or(0));
        ks.set_notification_sink(Some(events.clone()));
        Setup {
            ks,
            clock,
            units,
            events,
        }
    }

    impl Setup {
        fn run(&self, line: &str) {
            let argv: Vec<&str> = line.split(' ').collect();
            self.ks.execute(&argv).unwrap();
        }

        /// Evicts until the estimate of `keys` keys is freed (every key of these tests is
        /// four bytes long and holds a one-byte string), with no time limit.
        fn evict_keys(&self, keys: u64) -> EvictOutcome {
            self.ks.config().set_eviction_tenacity(100);
            let settings = self.ks.config().eviction();
            let value =
                crate::types::Value::String(crate::types::string::StringValue::from_arg(b"v"));
            let per_key = (value.memory_bytes() + 4 + crate::db::ENTRY_BYTES) as u64;
            self.ks.batch().evict(&settings, keys * per_key, None)
        }

        fn exists(&self, key: &str) -> bool {
            self.ks.run(|db, _| db.get(key.as_bytes()).is_some())
        }

        fn len(&self) -> usize {
            self.ks.run(|db, _| db.len())
        }

        fn clear_effects(&self) {
            self.units.0.lock().clear();
            self.events.0.lock().clear();
        }
    }

    #[test]
    fn noeviction_fails_and_nothing_to_evict_fails() {
        let s = setup(Policy::NoEviction, 1);
        s.run("SET a 1");
        assert_eq!(s.evict_keys(1), EvictOutcome::Fail);
        assert!(s.exists("a"));
        let s = setup(Policy::VolatileLru, 1);
        s.run("SET a 1");
        assert_eq!(s.evict_keys(1), EvictOutcome::Fail, "no key has a TTL");
        assert!(s.exists("a"));
        assert_eq!(s.evict_keys(0), EvictOutcome::Ok);
    }

    #[test]
    fn each_eviction_is_a_del_of_its_own_with_an_evicted_event() {
        let s = setup(Policy::AllkeysRandom, 1);
        for i in 0..10 {
            s.run(&format!("SET k{i:03} v"));
        }
        s.clear_effects();
        assert_eq!(s.evict_keys(3), EvictOutcome::Ok);
        assert_eq!(s.len(), 7);
        let units = s.units.0.lock().clone();
        assert_eq!(units.len(), 3, "{units:?}");
        let events = s.events.0.lock().clone();
        assert_eq!(events.len(), 3);
        for (unit, (event, key)) in units.iter().zip(&events) {
            assert_eq!(unit.len(), 1, "one DEL per unit");
            assert_eq!(unit[0][0].as_ref(), b"DEL");
            assert_eq!(&unit[0][1], key);
            assert_eq!(*event, "evicted");
            assert!(!s.exists(std::str::from_utf8(key).unwrap()));
        }
        assert_eq!(s.ks.evicted_keys(), 3);
        assert_eq!(s.ks.expire_stats().expired_keys, 0);
        s.ks.check_invariants().unwrap();
    }

    #[test]
    fn volatile_policies_never_evict_a_key_without_a_ttl() {
        for policy in [
            Policy::VolatileLru,
            Policy::VolatileLfu,
            Policy::VolatileRandom,
            Policy::VolatileTtl,
            Policy::VolatileLrm,
        ] {
            let s = setup(policy, 2);
            for i in 0..50 {
                s.run(&format!("SET p{i:03} v"));
                s.run(&format!("SET t{i:03} v EX {}", 100 + i));
            }
            assert_eq!(s.evict_keys(50), EvictOutcome::Ok, "{policy:?}");
            assert_eq!(s.evict_keys(1), EvictOutcome::Fail, "{policy:?}");
            assert_eq!(s.len(), 50, "{policy:?}");
            assert!((0..50).all(|i| s.exists(&format!("p{i:03}"))), "{policy:?}");
            s.ks.check_invariants().unwrap();
        }
    }

    #[test]
    fn volatile_ttl_evicts_the_soonest_expiring_first() {
        let s = setup(Policy::VolatileTtl, 1);
        s.ks.config().set_maxmemory_samples(64);
        for i in 0..100 {
            s.run(&format!("SET t{i:03} v EX {}", 1000 + i));
        }
        assert_eq!(s.evict_keys(20), EvictOutcome::Ok);
        let gone: Vec<usize> = (0..100)
            .filter(|i| !s.exists(&format!("t{i:03}")))
            .collect();
        assert_eq!(gone.len(), 20);
        // 64 samples of 100 keys each round, 16 best kept: the evicted are the earliest ones,
        // up to the sampling's misses.
        let mean = gone.iter().sum::<usize>() as f64 / gone.len() as f64;
        assert!(mean < 25.0, "evicted {gone:?}");
    }

    #[test]
    fn lru_keeps_the_keys_read_recently() {
        let s = setup(Policy::AllkeysLru, 1);
        s.ks.config().set_maxmemory_samples(10);
        for i in 0..200 {
            s.run(&format!("SET k{i:03} v"));
        }
        s.clock.advance(100_000);
        // The first 50 keys are read later than the rest were written.
        for i in 0..50 {
            s.run(&format!("GET k{i:03}"));
        }
        s.clock.advance(10_000);
        assert_eq!(s.evict_keys(100), EvictOutcome::Ok);
        let kept_hot = (0..50).filter(|i| s.exists(&format!("k{i:03}"))).count();
        assert!(kept_hot >= 45, "only {kept_hot} of the 50 hot keys kept");
    }

    #[test]
    fn lfu_keeps_the_keys_read_often() {
        let s = setup(Policy::AllkeysLfu, 1);
        s.ks.config().set_maxmemory_samples(10);
        for i in 0..200 {
            s.run(&format!("SET k{i:03} v"));
        }
        for _ in 0..20 {
            for i in 0..50 {
                s.run(&format!("GET k{i:03}"));
            }
        }
        let freq = s.ks.run(|db, _| db.frequency(b"k000").unwrap());
        assert!(freq > 5, "counter {freq}");
        assert_eq!(s.evict_keys(100), EvictOutcome::Ok);
        let kept_hot = (0..50).filter(|i| s.exists(&format!("k{i:03}"))).count();
        assert!(kept_hot >= 45, "only {kept_hot} of the 50 hot keys kept");
    }

    #[test]
    fn lru_idle_time_follows_the_clock_and_no_touch_commands_leave_it() {
        let s = setup(Policy::NoEviction, 1);
        s.run("SET k v");
        s.clock.advance(5_500);
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(5_000));
        // EXISTS, TYPE, TTL and OBJECT do not touch; GET does.
        s.run("EXISTS k");
        s.run("TYPE k");
        s.run("TTL k");
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(5_000));
        s.run("GET k");
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(0));
        // A NO-TOUCH caller's GET leaves it; its TOUCH does not.
        s.clock.advance(3_000);
        let get = crate::command::spec(b"get").unwrap();
        let touch = crate::command::spec(b"touch").unwrap();
        s.ks.run(|db, _| {
            db.set_no_touch(true);
            db.expire_keys_of(get, &[b"GET", b"k"]);
        });
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(3_000));
        s.ks.run(|db, _| {
            db.set_no_touch(true);
            db.expire_keys_of(touch, &[b"TOUCH", b"k"]);
        });
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(0));
    }

    #[test]
    fn lrm_moves_on_writes_only() {
        let s = setup(Policy::AllkeysLrm, 1);
        s.run("SET k 1");
        s.clock.advance(4_000);
        s.run("GET k");
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(4_000));
        s.run("INCR k");
        assert_eq!(s.ks.run(|db, _| db.idle_ms(b"k")), Some(0));
    }

    #[test]
    fn the_pool_keeps_the_best_sixteen_in_order() {
        let mut state = EvictionState::default();
        for score in [
            5u64, 1, 9, 3, 7, 20, 0, 11, 13, 2, 8, 4, 6, 10, 12, 14, 15, 16, 17, 0,
        ] {
            state.offer(score, format!("k{score}").as_bytes(), 0);
            state.check_invariants().unwrap();
        }
        let scores: Vec<u64> = state.pool.iter().map(|c| c.score).collect();
        assert_eq!(scores, (3..=17).chain([20]).collect::<Vec<_>>());
    }
}

//! A run of calls under one acquisition of the keyspace lock.
//!
//! A server connection that received several requests at once (pipelining) runs them in one
//! [`Batch`]: the lock is taken by the first call that needs the keyspace and released when
//! the batch ends, and the blocked clients its calls served are woken then, once, after the
//! lock is released. Each call still takes its own time snapshot, and serves the blocked
//! readers of the keys it signalled (and propagates its writes) before the next call runs, so
//! a batch does exactly what its calls would do one after another; only the lock and the
//! wake-ups are shared.
//!
//! Invariants: a batch is never held across an await or any wait (its guard is not `Send`,
//! so the compiler refuses it in a spawned task), and nothing that takes the keyspace lock
//! itself ([`Keyspace::run_db`], [`Keyspace::expire_blocked`], dropping a
//! [`crate::BlockedHandle`], …) runs on the same thread while a batch holds it: the lock is
//! not reentrant, so that would deadlock.

use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::blocking::Outcome;
use crate::blocking::Wake;
use crate::command;
use crate::keyspace::{Db, Dbs, Execution, Keyspace, Rerun, Snapshot, wake_all};
use crate::reply_size::Protocol;

/// Calls made under one acquisition of the keyspace lock (see the module docs).
pub struct Batch<'a> {
    keyspace: &'a Arc<Keyspace>,
    dbs: Option<MutexGuard<'a, Vec<Db>>>,
    wakers: Vec<Arc<dyn Wake>>,
    /// The time of day the next call takes, if the clock takes it ([`Batch::set_wall_ms`]).
    wall_ms: Option<u64>,
}

impl std::fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("locked", &self.dbs.is_some())
            .field("wakers", &self.wakers.len())
            .finish()
    }
}

impl Keyspace {
    /// Starts a batch of calls; the lock is taken by the first call that needs it.
    pub fn batch(self: &Arc<Self>) -> Batch<'_> {
        Batch {
            keyspace: self,
            dbs: None,
            wakers: Vec::new(),
            wall_ms: None,
        }
    }
}

impl<'a> Batch<'a> {
    /// The keyspace this batch runs on.
    pub fn keyspace(&self) -> &'a Arc<Keyspace> {
        self.keyspace
    }

    /// The databases, locking the keyspace on first use. A caller that also takes another of
    /// the keyspace's locks (the eviction state) takes this one first: always the same order.
    pub(crate) fn dbs(&mut self) -> &mut Vec<Db> {
        let (dbs, _) = self.dbs_and_wakers();
        dbs
    }

    /// [`Batch::dbs`], and beside it the wakers the calls collect (borrowed apart, so a call
    /// adds to them in place).
    fn dbs_and_wakers(&mut self) -> (&mut Vec<Db>, &mut Vec<Arc<dyn Wake>>) {
        let keyspace = self.keyspace;
        let dbs = self.dbs.get_or_insert_with(|| keyspace.dbs.lock());
        (dbs, &mut self.wakers)
    }

    /// Gives the next call ([`Batch::run_db`], [`Batch::run_all`]) its time of day, `ms`, in
    /// place of a reading of the keyspace's clock, if that is the system clock (see
    /// [`crate::Clock::now_ms_or`]): a server that read the wall clock once for a batch of
    /// requests carries that reading forward along the monotonic clock it times the calls
    /// with. The call after it reads the clock again unless given one too.
    pub fn set_wall_ms(&mut self, ms: Option<u64>) {
        self.wall_ms = ms;
    }

    /// [`Keyspace::run_db`] within the batch.
    pub fn run_db<R>(&mut self, index: usize, f: impl FnOnce(&mut Db, &Snapshot) -> R) -> R {
        let keyspace = self.keyspace;
        let wall_ms = self.wall_ms.take();
        let (dbs, wakers) = self.dbs_and_wakers();
        keyspace.run_db_locked(dbs, index, wall_ms, f, wakers)
    }

    /// Brings into the cache what the lookups of `keys` in database `index` will read (see
    /// the table's `prefetch`), locking the keyspace if the batch has not yet. A hint: it
    /// changes nothing, and an index out of range does nothing.
    pub fn prefetch(&mut self, index: usize, keys: &[&[u8]], scratch: &mut Vec<u64>) {
        if let Some(db) = self.dbs().get(index) {
            db.values.map.prefetch(keys, scratch);
        }
    }

    /// Brings into the cache what looking up `elements` in the collection under `key` in
    /// database `index` will read (see `Value::prefetch_elements`), locking the keyspace if
    /// the batch has not yet. A hint: it changes nothing (the key's lookup is not counted as
    /// a read, and an expired key is not deleted). Returns whether the collection was one
    /// big enough for it.
    pub fn prefetch_elements(
        &mut self,
        index: usize,
        key: &[u8],
        elements: &[&[u8]],
        scratch: &mut Vec<u64>,
    ) -> bool {
        self.dbs()
            .get(index)
            .and_then(|db| db.values.map.get(key))
            .is_some_and(|value| value.prefetch_elements(elements, scratch))
    }

    /// Whether database `index` holds enough keys for their lookups to miss the cache (a
    /// smaller table stays in it, and prefetching its keys only costs), locking the keyspace
    /// if the batch has not yet.
    pub fn worth_prefetching(&mut self, index: usize) -> bool {
        self.dbs()
            .get(index)
            .is_some_and(|db| db.values.map.len() >= crate::db::PREFETCH_KEYS_MIN)
    }

    /// [`Keyspace::run_all`] within the batch, each database readied for the call when `f`
    /// first reaches it through [`Dbs`].
    pub fn run_all<R>(&mut self, f: impl FnOnce(Dbs<'_>, &Snapshot) -> R) -> R {
        let keyspace = self.keyspace;
        let wall_ms = self.wall_ms.take();
        let (dbs, wakers) = self.dbs_and_wakers();
        keyspace.run_all_locked(dbs, wall_ms, f, wakers)
    }

    /// [`Keyspace::execute_blocking_in`] within the batch.
    pub fn execute_blocking_in<A: AsRef<[u8]>>(
        &mut self,
        index: usize,
        argv: &[A],
        waker: Arc<dyn Wake>,
    ) -> Execution {
        self.execute_blocking_as(index, Protocol::Resp2, argv, waker)
    }

    /// [`Batch::execute_blocking_in`] for a caller speaking `protocol` (what XREAD `MAXSIZE`
    /// measures its reply in, now and when re-run after blocking).
    pub fn execute_blocking_as<A: AsRef<[u8]>>(
        &mut self,
        index: usize,
        protocol: Protocol,
        argv: &[A],
        waker: Arc<dyn Wake>,
    ) -> Execution {
        let keyspace = self.keyspace;
        self.run_db(index, |db, snapshot| {
            let snapshot = &snapshot.speaking(protocol);
            match command::execute_outcome(db, snapshot, argv) {
                Ok(Outcome::Reply(reply)) => Execution::Done(Ok(reply)),
                Err(e) => Execution::Done(Err(e)),
                Ok(Outcome::Block(request)) => {
                    let rerun: Rerun = command::execute_outcome::<bytes::Bytes>;
                    Execution::Blocked(keyspace.block(db, index, request, rerun, waker))
                }
            }
        })
    }

    /// [`Keyspace::catch_up_with_clock`] within the batch: after a manual clock moved, deletes
    /// the keys whose TTL ran out and times out the blocked commands whose deadline passed.
    pub fn catch_up_with_clock(&mut self) {
        let keyspace = self.keyspace;
        let mut wakers = std::mem::take(&mut self.wakers);
        let dbs = self.dbs();
        keyspace.expire_all_due_in(dbs, &mut wakers);
        keyspace.expire_blocked_in(dbs, &mut wakers);
        self.wakers = wakers;
    }

    /// Ends the batch: releases the lock, then wakes the blocked clients its calls served.
    pub fn end(self) {}
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.dbs = None;
        wake_all(std::mem::take(&mut self.wakers));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{Keyspace, ManualClock, SystemClock};

    #[test]
    fn a_call_given_a_time_of_day_takes_it_once_on_the_system_clock() {
        let keyspace = Arc::new(Keyspace::new(Arc::new(SystemClock)));
        let mut batch = keyspace.batch();
        batch.set_wall_ms(Some(42));
        assert_eq!(batch.run_db(0, |_, snapshot| snapshot.now_ms), 42);
        // The next call was given none: it reads the clock.
        assert!(batch.run_db(0, |_, snapshot| snapshot.now_ms) > 42);
        batch.set_wall_ms(Some(43));
        assert_eq!(batch.run_all(|_, snapshot| snapshot.now_ms), 43);
    }

    #[test]
    fn a_manual_clock_is_read_whatever_time_a_call_is_given() {
        let keyspace = Arc::new(Keyspace::new(Arc::new(ManualClock::new(5_000))));
        let mut batch = keyspace.batch();
        batch.set_wall_ms(Some(42));
        assert_eq!(batch.run_db(0, |_, snapshot| snapshot.now_ms), 5_000);
    }
}

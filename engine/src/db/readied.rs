//! The databases a call over all of them sees (a script, MULTI/EXEC, FLUSHALL, SWAPDB): each
//! is readied for the call ([`Db::prepare`]: its time snapshot, propagation, notification
//! flags, key tracking) when the call first reaches it, so a call that uses one database
//! readies and touches one, not every configured database.
//!
//! Invariants: a database the call reaches through [`Dbs`] is readied exactly once before it
//! is handed out; [`Readiness::reached`] is true of every database readied, and the keyspace
//! collects the signals, propagated commands and events of those alone after the call (a
//! database not reached changed nothing).

use std::cell::Cell;

use super::Db;
use crate::keyspace::Snapshot;

/// Databases whose readiness is kept one bit each; a call reaching one past them readies all.
const BITS: usize = u64::BITS as usize;

/// What readying a database for the call needs, and which ones were.
#[derive(Debug)]
pub(crate) struct Readiness<'s> {
    pub(crate) snapshot: &'s Snapshot,
    pub(crate) propagating: bool,
    pub(crate) notify_flags: u32,
    pub(crate) tracking: bool,
    /// Bit `i`: database `i` is readied.
    ready: Cell<u64>,
    /// Every database is readied.
    all: Cell<bool>,
}

impl<'s> Readiness<'s> {
    #[inline]
    pub(crate) fn new(
        snapshot: &'s Snapshot,
        propagating: bool,
        notify_flags: u32,
        tracking: bool,
    ) -> Self {
        Readiness {
            snapshot,
            propagating,
            notify_flags,
            tracking,
            ready: Cell::new(0),
            all: Cell::new(false),
        }
    }

    /// Whether the call reached database `index`.
    pub(crate) fn reached(&self, index: usize) -> bool {
        self.all.get() || (index < BITS && self.ready.get() & (1 << index) != 0)
    }

    /// Readies `db` for the call (one database's call readies it with this too).
    #[inline]
    pub(crate) fn ready(&self, db: &mut Db) {
        db.prepare(self.snapshot, self.propagating, self.notify_flags);
        db.watch.tracking = self.tracking;
    }
}

/// Every database, each readied for the call when first reached (see the module docs).
pub struct Dbs<'a> {
    dbs: &'a mut [Db],
    readiness: &'a Readiness<'a>,
}

impl<'a> Dbs<'a> {
    pub(crate) fn new(dbs: &'a mut [Db], readiness: &'a Readiness<'a>) -> Self {
        Dbs { dbs, readiness }
    }

    /// How many databases there are.
    pub fn len(&self) -> usize {
        self.dbs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.dbs.is_empty()
    }

    /// Database `index`, readied for the call; `None` past the last.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut Db> {
        if index >= self.dbs.len() {
            return None;
        }
        Some(self.ready_at(index))
    }

    /// Database `index`, or the last one past it (a keyspace has at least one), readied for
    /// the call.
    pub fn clamped(&mut self, index: usize) -> &mut Db {
        self.ready_at(index.min(self.dbs.len().saturating_sub(1)))
    }

    fn ready_at(&mut self, index: usize) -> &mut Db {
        let readiness = self.readiness;
        if !readiness.reached(index) {
            if index >= BITS {
                return &mut self.all()[index];
            }
            readiness.ready(&mut self.dbs[index]);
            readiness.ready.set(readiness.ready.get() | 1 << index);
        }
        &mut self.dbs[index]
    }

    /// Every database, all readied for the call.
    pub fn all(&mut self) -> &mut [Db] {
        let readiness = self.readiness;
        if !readiness.all.get() {
            for (index, db) in self.dbs.iter_mut().enumerate() {
                if !readiness.reached(index) {
                    readiness.ready(db);
                }
            }
            readiness.all.set(true);
        }
        self.dbs
    }
}

impl std::fmt::Debug for Dbs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dbs")
            .field("len", &self.dbs.len())
            .field("ready", &self.readiness.ready.get())
            .field("all", &self.readiness.all.get())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use parking_lot::Mutex;

    use super::*;
    use crate::clock::ManualClock;
    use crate::config::Config;
    use crate::keyspace::Keyspace;
    use crate::propagate::PropagationSink;

    #[derive(Debug, Default)]
    struct Fed(Mutex<Vec<(usize, String)>>);

    impl PropagationSink for Fed {
        fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
            let mut fed = self.0.lock();
            for (index, argv) in commands {
                let words: Vec<String> = argv
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                fed.push((index, words.join(" ")));
            }
        }
    }

    #[test]
    fn a_database_is_readied_when_first_reached_and_all_of_them_by_all() {
        let ks = Keyspace::new(Arc::new(ManualClock::new(5_000)));
        let snapshot = ks.snapshot();
        let readiness = Readiness::new(&snapshot, true, 0, false);
        let mut dbs: Vec<Db> = (0..5).map(|_| Db::default()).collect();
        {
            let mut view = Dbs::new(&mut dbs, &readiness);
            assert_eq!(view.len(), 5);
            assert!(view.get_mut(5).is_none());
            assert_eq!(view.get_mut(2).map(|db| db.values.now_ms), Some(5_000));
            assert_eq!(view.clamped(9).values.now_ms, 5_000);
        }
        let reached: Vec<bool> = (0..5).map(|i| readiness.reached(i)).collect();
        assert_eq!(reached, [false, false, true, false, true]);
        assert_eq!(
            dbs[0].values.now_ms, 0,
            "a database not reached is left alone"
        );
        Dbs::new(&mut dbs, &readiness).all();
        assert!((0..5).all(|i| readiness.reached(i)));
        assert!(dbs.iter().all(|db| db.values.now_ms == 5_000));
    }

    #[test]
    fn what_a_call_over_all_databases_propagates_comes_from_those_it_reached() {
        // Past 64 databases a reached one is not a bit of its own: reaching it readies all.
        let ks = Arc::new(Keyspace::with_databases(
            Arc::new(ManualClock::new(1_000)),
            Arc::new(Config::default()),
            70,
        ));
        let fed = Arc::new(Fed::default());
        ks.set_propagation_sink(Some(fed.clone()));
        let set = |dbs: &mut Dbs<'_>, index: usize, snapshot: &Snapshot| {
            let db = dbs
                .get_mut(index)
                .unwrap_or_else(|| panic!("no db {index}"));
            crate::command::execute(db, snapshot, &["SET", "k", "v"]).map(|_| ())
        };
        let mut batch = ks.batch();
        batch
            .run_all(|mut dbs, snapshot| {
                set(&mut dbs, 3, snapshot)?;
                set(&mut dbs, 1, snapshot)
            })
            .unwrap();
        batch
            .run_all(|mut dbs, snapshot| {
                set(&mut dbs, 66, snapshot)?;
                set(&mut dbs, 5, snapshot)
            })
            .unwrap();
        drop(batch);
        let fed: Vec<(usize, String)> = fed.0.lock().clone();
        let set_k = "SET k v".to_string();
        assert_eq!(
            fed,
            [
                (3, set_k.clone()),
                (1, set_k.clone()),
                (66, set_k.clone()),
                (5, set_k)
            ]
        );
        for index in [1, 3, 5, 66] {
            let got = ks.run_db(index, |db, snapshot| {
                crate::command::execute(db, snapshot, &["GET", "k"])
            });
            assert_eq!(got.ok(), Some(crate::Reply::bulk("v")));
        }
    }
}

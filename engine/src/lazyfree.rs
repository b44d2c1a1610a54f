//! Freeing what a command removes off the caller's thread, as Redis's lazy free
//! (`lazyfree.c`): UNLINK hands a removed value to a background thread when freeing it costs
//! more than [`THRESHOLD`] allocations, and FLUSHDB and FLUSHALL ASYNC hand over a database's
//! whole table, so the command answers at once however big the data was; DEL, FLUSHDB and
//! FLUSHALL do the same under `lazyfree-lazy-user-del` and `lazyfree-lazy-user-flush`, as
//! Redis's do, and so do expiry under `lazyfree-lazy-expire` and a write that replaces a value
//! (SET over a big hash, say) under `lazyfree-lazy-server-del`. Below the threshold a value is
//! freed in place: handing it over costs more. A
//! SYNC flush hands its tables over too and waits until they are freed, as Redis 8.8 runs it
//! ("blocking ASYNC", `flushCommandCommon` in db.c), so its reply means the memory is back and
//! its keys count as lazily freed, as Redis counts them. (Redis frees a SYNC flush in place,
//! uncounted, inside MULTI and scripts, where it cannot block the caller; echomq counts it
//! there too. Eviction frees in place whatever `lazyfree-lazy-eviction` says, since it
//! measures what each deletion freed; and the implicit deletions other than a replaced value,
//! such as RENAME's of its destination, free in place under `lazyfree-lazy-server-del`.)
//!
//! One thread, started on first use and shared by every keyspace of the process, frees in
//! the order handed over. Each keyspace counts what it handed over and what was freed
//! ([`LazyFree`], INFO's `lazyfree_pending_objects` and `lazyfreed_objects`): a value counts
//! one, a table its keys, as Redis counts. If the thread cannot be started, everything is
//! freed in place (and counted alike).
//!
//! A flushed database's pages go back to the system once its table is freed: the allocator
//! keeps freed pages for reuse and, with no traffic to prompt it, would keep them for good.
//! The binary that chose the allocator says how ([`set_release`]); Redis purges jemalloc at
//! the same point (`lazyfreeFreeDatabase` in lazyfree.c, `flushallSyncBgDone` in db.c), and a
//! SYNC flush answers after it.
//!
//! A forked child (`protocol/src/persist/fork.rs`) frees nothing and takes no allocator lock,
//! so this thread holding one at the fork is harmless.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};

/// Allocations from which a value is freed in the background (Redis's `LAZYFREE_THRESHOLD`).
pub const THRESHOLD: usize = 64;

/// One keyspace's lazy-free settings and counts.
#[derive(Debug, Default)]
pub struct LazyFree {
    /// `lazyfree-lazy-user-del`: DEL frees as UNLINK does.
    user_del: AtomicBool,
    /// `lazyfree-lazy-user-flush`: FLUSHDB and FLUSHALL without a mode free as with ASYNC.
    user_flush: AtomicBool,
    /// `lazyfree-lazy-expire`: a key deleted by expiry frees as UNLINK does.
    expire: AtomicBool,
    /// `lazyfree-lazy-server-del`: a value a write replaces frees as UNLINK does.
    server_del: AtomicBool,
    /// Objects handed over and not yet freed.
    pending: AtomicU64,
    /// Objects freed by the thread since the last reset.
    freed: AtomicU64,
}

/// What the thread frees, whose counts it moves, and who waits for it.
struct Job {
    garbage: Box<dyn Any + Send>,
    objects: u64,
    owner: Arc<LazyFree>,
    done: Option<SyncSender<()>>,
    /// A flushed database with keys: [`RELEASE`] runs once it is freed.
    release: bool,
}

/// Hands the freed pages back to the system, on the thread that freed them (see
/// [`set_release`]).
static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Sets what runs after a flushed database's table is freed, on the thread that freed it: the
/// allocator's own way of giving its free pages back to the system (jemalloc: flush the
/// thread's cache, purge every arena). Set once, by the binary; a second call changes nothing.
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

impl LazyFree {
    /// Whether DEL frees lazily.
    pub fn user_del(&self) -> bool {
        self.user_del.load(Ordering::Relaxed)
    }

    /// Sets `lazyfree-lazy-user-del`.
    pub fn set_user_del(&self, on: bool) {
        self.user_del.store(on, Ordering::Relaxed);
    }

    /// Whether a flush without ASYNC or SYNC frees lazily.
    pub fn user_flush(&self) -> bool {
        self.user_flush.load(Ordering::Relaxed)
    }

    /// Sets `lazyfree-lazy-user-flush`.
    pub fn set_user_flush(&self, on: bool) {
        self.user_flush.store(on, Ordering::Relaxed);
    }

    /// Whether expiry frees lazily.
    pub fn expire(&self) -> bool {
        self.expire.load(Ordering::Relaxed)
    }

    /// Sets `lazyfree-lazy-expire`.
    pub fn set_expire(&self, on: bool) {
        self.expire.store(on, Ordering::Relaxed);
    }

    /// Whether a replaced value frees lazily.
    pub fn server_del(&self) -> bool {
        self.server_del.load(Ordering::Relaxed)
    }

    /// Sets `lazyfree-lazy-server-del`.
    pub fn set_server_del(&self, on: bool) {
        self.server_del.store(on, Ordering::Relaxed);
    }

    /// INFO's `lazyfree_pending_objects`.
    pub fn pending(&self) -> u64 {
        self.pending.load(Ordering::Relaxed)
    }

    /// INFO's `lazyfreed_objects`.
    pub fn freed(&self) -> u64 {
        self.freed.load(Ordering::Relaxed)
    }

    /// CONFIG RESETSTAT: the freed count starts again from zero.
    pub fn reset_freed(&self) {
        self.freed.store(0, Ordering::Relaxed);
    }

    /// Frees `garbage`, counted as `objects`, on the background thread (in place if there is
    /// none).
    pub(crate) fn hand_over<T: Send + 'static>(self: &Arc<Self>, garbage: T, objects: u64) {
        self.send(Box::new(garbage), objects, None, false);
    }

    /// Frees a flushed database's `table` of `keys` keys on the background thread, and then
    /// gives the freed pages back to the system (see [`set_release`]); with `wait`, returns
    /// once that is done, and everything handed over before it freed.
    pub(crate) fn hand_over_database<T: Send + 'static>(
        self: &Arc<Self>,
        table: T,
        keys: u64,
        wait: bool,
    ) {
        let (done, freed) = if wait {
            let (done, freed) = sync_channel(1);
            (Some(done), Some(freed))
        } else {
            (None, None)
        };
        self.send(Box::new(table), keys, done, keys > 0);
        // Sent back after the free, or dropped with the job if the thread died: either ends
        // the wait.
        if let Some(freed) = freed {
            let _ = freed.recv();
        }
    }

    fn send(
        self: &Arc<Self>,
        garbage: Box<dyn Any + Send>,
        objects: u64,
        done: Option<SyncSender<()>>,
        release: bool,
    ) {
        self.pending.fetch_add(objects, Ordering::Relaxed);
        let job = Job {
            garbage,
            objects,
            owner: Arc::clone(self),
            done,
            release,
        };
        match freeing_thread() {
            Some(thread) => {
                if let Ok(Err(unsent)) = thread.lock().map(|tx| tx.send(job)) {
                    // The thread is gone: free here, counted as the thread would.
                    free(unsent.0);
                }
            }
            None => free(job),
        }
    }
}

/// Frees one job and moves its owner's counts.
fn free(job: Job) {
    let Job {
        garbage,
        objects,
        owner,
        done,
        release,
    } = job;
    drop(garbage);
    if release && let Some(release) = RELEASE.get() {
        release();
    }
    owner.pending.fetch_sub(objects, Ordering::Relaxed);
    owner.freed.fetch_add(objects, Ordering::Relaxed);
    if let Some(done) = done {
        let _ = done.send(());
    }
}

/// The channel to the freeing thread, started on first use; `None` if it could not start.
fn freeing_thread() -> Option<&'static Mutex<Sender<Job>>> {
    static THREAD: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    THREAD
        .get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            std::thread::Builder::new()
                .name("echomq-lazyfree".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        free(job);
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits until nothing is pending (the thread frees in order).
    fn settled(lazy: &LazyFree) {
        for _ in 0..1000 {
            if lazy.pending() == 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("{} objects still pending", lazy.pending());
    }

    #[test]
    fn handed_over_garbage_is_freed_and_counted_per_owner() {
        let (a, b) = (Arc::new(LazyFree::default()), Arc::new(LazyFree::default()));
        let dropped = Arc::new(AtomicBool::new(false));
        struct Flag(Arc<AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        a.hand_over(Flag(Arc::clone(&dropped)), 1);
        b.hand_over(vec![0u8; 1000], 7);
        settled(&a);
        settled(&b);
        assert!(dropped.load(Ordering::SeqCst));
        assert_eq!((a.freed(), b.freed()), (1, 7));
        a.reset_freed();
        assert_eq!((a.freed(), b.freed()), (0, 7));
    }

    /// What the freeing thread did, in order (each test runs in a process of its own).
    static FREEING_LOG: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

    fn log(what: &'static str) {
        FREEING_LOG.lock().expect("not poisoned").push(what);
    }

    #[test]
    fn a_flushed_database_with_keys_is_released_after_it_is_freed() {
        struct Table(&'static str);
        impl Drop for Table {
            fn drop(&mut self) {
                log(self.0);
            }
        }
        set_release(|| log("released"));
        let lazy = Arc::new(LazyFree::default());
        lazy.hand_over_database(Table("table with keys"), 3, true);
        lazy.hand_over_database(Table("empty table"), 0, true);
        lazy.hand_over(Table("value"), 1);
        lazy.hand_over_database(Table("table freed lazily"), 2, false);
        settled(&lazy);
        assert_eq!(
            *FREEING_LOG.lock().expect("not poisoned"),
            [
                "table with keys",
                "released",
                "empty table",
                "value",
                "table freed lazily",
                "released"
            ]
        );
    }
}

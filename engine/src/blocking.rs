//! Blocked readers: XREAD / XREADGROUP with BLOCK, without any async runtime.
//!
//! This module owns the blocking vocabulary: a command replies or asks to block ([`Outcome`]);
//! one that cannot be served and was given BLOCK returns a [`BlockRequest`]. The keyspace
//! registers it here, in FIFO order on each of its keys, with the function that re-runs it
//! (the command dispatcher's, handed in by the caller that blocks it: the keyspace never calls
//! into the commands itself).
//!
//! When a command signals a key (XADD: ready; DEL, overwrite, FLUSHALL or XGROUP DESTROY:
//! deleted), the keyspace, still holding its lock and right after that command, re-runs each
//! waiter's command in FIFO order (Redis ≥ 7.2's model): if it now replies (entries, or an
//! error such as NOGROUP), the reply is stored in the waiter's [`Slot`] and its [`Wake`] is
//! called once the lock is released; if it still cannot be served it goes to the back of the
//! queues, keeping its original deadline. Waiters that only asked for data (XREAD) ignore
//! deletions. Deadlines are read from the keyspace's clock by
//! [`crate::Keyspace::expire_blocked`], so a manual clock drives timeouts.
//!
//! Invariants: a registered waiter is in the queue of every one of its keys exactly once, and
//! every queued id is registered.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use parking_lot::{Condvar, Mutex};

use crate::error::Result;
use crate::reply::Reply;

/// What running a command led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The reply.
    Reply(Reply),
    /// Nothing to serve yet and BLOCK was given: the caller may block (see
    /// [`crate::Keyspace::execute_blocking`]) or treat it as an immediate timeout.
    Block(BlockRequest),
}

/// How a command wants to block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRequest {
    /// The command to run again when woken (`$` ids replaced by concrete ids).
    pub argv: Vec<Bytes>,
    /// The keys to wait on, each once, in argument order.
    pub keys: Vec<Bytes>,
    /// When to give up (the clock's ms), `None` to wait forever (BLOCK 0).
    pub deadline_ms: Option<u64>,
    /// Wake also when a key is deleted, overwritten or its group destroyed (XREADGROUP).
    pub wake_on_delete: bool,
    /// XREADGROUP CLAIM: when a pending entry becomes claimable (the clock's ms); at that
    /// time [`crate::Keyspace::expire_blocked`] signals the keys, so the command re-runs.
    pub claim_wake_ms: Option<u64>,
    /// The protocol the blocked client speaks: a re-run sizes its reply for it.
    pub protocol: crate::reply_size::Protocol,
    /// Re-run only while a signalled key holds this type (Redis serves a blocked client
    /// only when the key's type matches what it blocked for: a BLPOP is not re-run, and
    /// stays blocked, when its key becomes a stream); `None` for any.
    pub key_type: Option<&'static str>,
    /// The reply where blocking is not allowed (MULTI/EXEC, scripts); `None` means a null
    /// array, as a timeout.
    pub denied_reply: Option<Reply>,
}

impl BlockRequest {
    /// What the command replies where it may not block.
    pub fn denied(&self) -> Reply {
        self.denied_reply.clone().unwrap_or(Reply::NullArray)
    }
}

/// Something to call when a blocked command has its reply. Must not block or call back into
/// the keyspace synchronously from within `wake` in a way that waits on the reply's reader.
pub trait Wake: Send + Sync {
    /// The reply is ready.
    fn wake(&self);
}

/// Where a blocked command's reply is left for its reader.
pub struct Slot {
    result: Mutex<Option<Result<Reply>>>,
    waker: Arc<dyn Wake>,
    /// The blocked command's current claim wake-up time (`u64::MAX`: none), for its handle.
    claim_wake_ms: AtomicU64,
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("done", &self.result.lock().is_some())
            .finish()
    }
}

impl Slot {
    pub(crate) fn new(waker: Arc<dyn Wake>) -> Slot {
        Slot {
            result: Mutex::new(None),
            waker,
            claim_wake_ms: AtomicU64::new(u64::MAX),
        }
    }

    /// Records the command's claim wake-up time (`None`: none).
    pub(crate) fn set_claim_wake(&self, at_ms: Option<u64>) {
        self.claim_wake_ms
            .store(at_ms.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The command's claim wake-up time, if it has one.
    pub(crate) fn claim_wake(&self) -> Option<u64> {
        match self.claim_wake_ms.load(Ordering::Relaxed) {
            u64::MAX => None,
            at => Some(at),
        }
    }

    /// Stores the reply; the caller wakes the reader after releasing the keyspace lock.
    pub(crate) fn complete(&self, result: Result<Reply>) -> Arc<dyn Wake> {
        *self.result.lock() = Some(result);
        Arc::clone(&self.waker)
    }

    /// Takes the reply if it is there.
    pub fn take(&self) -> Option<Result<Reply>> {
        self.result.lock().take()
    }
}

/// One blocked command; `R` is how it is run again (the keyspace's [`crate::keyspace::Rerun`]).
#[derive(Debug)]
pub(crate) struct Waiter<R> {
    pub request: BlockRequest,
    pub slot: Arc<Slot>,
    pub rerun: R,
}

/// How a key was signalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// New data (XADD) or the key was created as a stream.
    Ready,
    /// Deleted, overwritten with another type, flushed, or a group destroyed.
    Deleted,
}

/// The blocked commands of one keyspace.
#[derive(Debug)]
pub(crate) struct Registry<R> {
    waiters: HashMap<u64, Waiter<R>>,
    queues: HashMap<Bytes, VecDeque<u64>>,
    next_id: u64,
}

impl<R> Default for Registry<R> {
    fn default() -> Self {
        Registry {
            waiters: HashMap::new(),
            queues: HashMap::new(),
            next_id: 0,
        }
    }
}

impl<R> Registry<R> {
    /// Registers a new waiter at the back of its keys' queues; returns its id.
    pub fn register(&mut self, waiter: Waiter<R>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.requeue(id, waiter);
        id
    }

    /// Puts a waiter (new or re-run) at the back of its keys' queues.
    pub fn requeue(&mut self, id: u64, waiter: Waiter<R>) {
        waiter.slot.set_claim_wake(waiter.request.claim_wake_ms);
        for key in &waiter.request.keys {
            self.queues.entry(key.clone()).or_default().push_back(id);
        }
        self.waiters.insert(id, waiter);
    }

    /// Removes a waiter from every queue.
    pub fn unregister(&mut self, id: u64) -> Option<Waiter<R>> {
        let waiter = self.waiters.remove(&id)?;
        for key in &waiter.request.keys {
            if let Some(queue) = self.queues.get_mut(key) {
                queue.retain(|&queued| queued != id);
                if queue.is_empty() {
                    self.queues.remove(key);
                }
            }
        }
        Some(waiter)
    }

    /// Whether anyone waits on `key`.
    pub fn has_waiters(&self, key: &[u8]) -> bool {
        self.queues.contains_key(key)
    }

    /// Every key someone waits on (in no particular order).
    pub fn waited_keys(&self) -> impl Iterator<Item = &Bytes> {
        self.queues.keys()
    }

    /// The waiters on `key`, in FIFO order, as they are now.
    pub fn queued(&self, key: &[u8]) -> Vec<u64> {
        self.queues
            .get(key)
            .map(|q| q.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Whether waiter `id` wants a deletion signal.
    pub fn wakes_on_delete(&self, id: u64) -> Option<bool> {
        self.waiters.get(&id).map(|w| w.request.wake_on_delete)
    }

    /// The type waiter `id` waits for, if it waits for one.
    pub fn key_type(&self, id: u64) -> Option<&'static str> {
        self.waiters.get(&id).and_then(|w| w.request.key_type)
    }

    /// Waiters whose deadline is at or before `now_ms`.
    pub fn expired(&self, now_ms: u64) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.request.deadline_ms.is_some_and(|d| d <= now_ms))
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Waiters whose claim wake-up time is at or before `now_ms`, in registration order.
    pub fn claim_due(&self, now_ms: u64) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.request.claim_wake_ms.is_some_and(|d| d <= now_ms))
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The keys waiter `id` waits on.
    pub fn keys_of(&self, id: u64) -> Vec<Bytes> {
        self.waiters
            .get(&id)
            .map(|w| w.request.keys.clone())
            .unwrap_or_default()
    }

    /// The earliest deadline or claim wake-up time of any waiter.
    pub fn next_deadline(&self) -> Option<u64> {
        self.waiters
            .values()
            .flat_map(|w| [w.request.deadline_ms, w.request.claim_wake_ms])
            .flatten()
            .min()
    }

    /// Keys with a waiter, and keys with a waiter that wakes on deletion.
    pub fn key_counts(&self) -> (usize, usize) {
        let on_delete = self
            .queues
            .values()
            .filter(|q| {
                q.iter().any(|id| {
                    self.waiters
                        .get(id)
                        .is_some_and(|w| w.request.wake_on_delete)
                })
            })
            .count();
        (self.queues.len(), on_delete)
    }

    /// Waiters with a deadline.
    pub fn with_deadline(&self) -> usize {
        self.waiters
            .values()
            .filter(|w| w.request.deadline_ms.is_some())
            .count()
    }

    /// Number of blocked commands (INFO's `blocked_clients`).
    pub fn len(&self) -> usize {
        self.waiters.len()
    }

    /// Checks the invariants in the module doc.
    pub fn check(&self) -> std::result::Result<(), String> {
        for (id, waiter) in &self.waiters {
            for key in &waiter.request.keys {
                let n = self
                    .queues
                    .get(key)
                    .map_or(0, |q| q.iter().filter(|&&q| q == *id).count());
                if n != 1 {
                    return Err(format!("waiter {id} is queued {n} times on {key:?}"));
                }
            }
        }
        for (key, queue) in &self.queues {
            if queue.is_empty() || queue.iter().any(|id| !self.waiters.contains_key(id)) {
                return Err(format!(
                    "queue {key:?} is empty or holds an unregistered waiter"
                ));
            }
        }
        Ok(())
    }
}

/// A thread parker that is also a [`Wake`]: for waiting on a blocked command from a plain
/// thread.
#[derive(Debug, Default)]
pub struct Parker {
    woken: Mutex<bool>,
    condvar: Condvar,
}

impl Parker {
    /// Waits until woken or `timeout` passes, then clears the wake-up.
    pub fn park_timeout(&self, timeout: Duration) {
        let mut woken = self.woken.lock();
        if !*woken {
            self.condvar.wait_for(&mut woken, timeout);
        }
        *woken = false;
    }
}

impl Wake for Parker {
    fn wake(&self) {
        *self.woken.lock() = true;
        self.condvar.notify_all();
    }
}

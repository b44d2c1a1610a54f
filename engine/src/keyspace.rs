//! The keyspace: binary-safe keys mapping to values, shared across threads.
//!
//! One lock guards the whole keyspace. Redis runs commands one at a time, and a command (or a
//! MULTI/EXEC) must see and change several keys atomically, so one short critical section per
//! command is both the simplest correct choice and fast: no command does I/O or waits while
//! holding it. [`Keyspace::run`] takes the lock and one clock snapshot, runs a closure over the
//! [`Db`], and afterwards wakes whoever subscribed to keys the command signalled as ready (XADD
//! signals its key), in signal order and per key in subscription order. Wakers run after the
//! lock is released, so a waker may call back into the keyspace.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Weak};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::clock::{Clock, SystemClock};
use crate::command;
use crate::config::{Config, NodeLimits};
use crate::error::{Error, Result};
use crate::reply::Reply;
use crate::stream::Stream;

/// A value stored under a key.
#[derive(Debug, Clone)]
pub enum Value {
    /// A stream.
    Stream(Stream),
    /// A plain string (so keys of another type exist, as WRONGTYPE tests need).
    String(Bytes),
}

impl Value {
    /// The type name TYPE replies.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Stream(_) => "stream",
            Value::String(_) => "string",
        }
    }
}

/// What one command sees: its time snapshot and the settings in force.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    /// Unix milliseconds, read once for the whole command.
    pub now_ms: u64,
    /// Node limits (`stream-node-max-entries`, `stream-node-max-bytes`).
    pub limits: NodeLimits,
}

/// Something to call when a key it subscribed to is signalled. Must not block.
pub trait Wake: Send + Sync {
    /// The key changed (an entry was added, or it was created with a blockable type).
    fn wake(&self);
}

/// One subscription's entry in a key's queue: its id and its waker.
type Subscriber = (u64, Arc<dyn Wake>);

/// The data behind the lock.
#[derive(Default)]
pub struct Db {
    values: HashMap<Bytes, Value>,
    /// Keys signalled ready by the running command, in signal order, each once.
    ready: Vec<Bytes>,
    /// Subscribers per key, in subscription order.
    subscribers: HashMap<Bytes, VecDeque<Subscriber>>,
    next_subscription: u64,
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("keys", &self.values.len())
            .finish_non_exhaustive()
    }
}

impl Db {
    /// The value under `key`.
    pub fn get(&self, key: &[u8]) -> Option<&Value> {
        self.values.get(key)
    }

    /// The stream under `key`: `Ok(None)` if the key is missing, WRONGTYPE if it holds
    /// something else.
    pub fn stream(&self, key: &[u8]) -> Result<Option<&Stream>> {
        match self.values.get(key) {
            None => Ok(None),
            Some(Value::Stream(s)) => Ok(Some(s)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The stream under `key`, mutably.
    pub fn stream_mut(&mut self, key: &[u8]) -> Result<Option<&mut Stream>> {
        match self.values.get_mut(key) {
            None => Ok(None),
            Some(Value::Stream(s)) => Ok(Some(s)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The stream under `key`, created empty if the key is missing.
    pub fn stream_or_create(&mut self, key: &[u8]) -> Result<&mut Stream> {
        if !self.values.contains_key(key) {
            self.values
                .insert(Bytes::copy_from_slice(key), Value::Stream(Stream::new()));
        }
        self.stream_mut(key)?.ok_or(Error::NoSuchKey)
    }

    /// Stores `value` under `key`, replacing what was there.
    pub fn insert(&mut self, key: Bytes, value: Value) {
        self.values.insert(key, value);
    }

    /// Removes `key`; returns the value it held.
    pub fn remove(&mut self, key: &[u8]) -> Option<Value> {
        self.values.remove(key)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every key (in no particular order).
    pub fn keys(&self) -> impl Iterator<Item = &Bytes> {
        self.values.keys()
    }

    /// Checks every stream's invariants; the error names the key.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        for (key, value) in &self.values {
            if let Value::Stream(stream) = value {
                stream
                    .check_invariants()
                    .map_err(|e| format!("stream {:?}: {e}", String::from_utf8_lossy(key)))?;
            }
        }
        Ok(())
    }

    /// Marks `key` ready: its subscribers are woken when the command finishes.
    pub fn signal_ready(&mut self, key: &[u8]) {
        if self.subscribers.contains_key(key) && !self.ready.iter().any(|k| k == key) {
            self.ready.push(Bytes::copy_from_slice(key));
        }
    }

    /// Takes the wakers of every signalled key, in order, clearing the signals.
    fn take_wakers(&mut self) -> Vec<Arc<dyn Wake>> {
        let mut wakers = Vec::new();
        for key in self.ready.drain(..) {
            if let Some(subs) = self.subscribers.get(&key) {
                wakers.extend(subs.iter().map(|(_, w)| Arc::clone(w)));
            }
        }
        wakers
    }
}

/// A thread-safe keyspace with an injected clock.
#[derive(Debug)]
pub struct Keyspace {
    db: Mutex<Db>,
    clock: Arc<dyn Clock>,
    config: Config,
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace::new(Arc::new(SystemClock))
    }
}

impl Keyspace {
    /// An empty keyspace reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Keyspace {
        Keyspace {
            db: Mutex::new(Db::default()),
            clock,
            config: Config::default(),
        }
    }

    /// The settings (changeable at run time).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The clock this keyspace reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Runs `f` atomically with one time snapshot, then wakes subscribers of signalled keys.
    pub fn run<R>(&self, f: impl FnOnce(&mut Db, &Snapshot) -> R) -> R {
        let snapshot = Snapshot {
            now_ms: self.clock.now_ms(),
            limits: self.config.node_limits(),
        };
        let (result, wakers) = {
            let mut db = self.db.lock();
            let result = f(&mut db, &snapshot);
            let wakers = db.take_wakers();
            (result, wakers)
        };
        for waker in wakers {
            waker.wake();
        }
        result
    }

    /// Executes one stream command given as arguments (`["XADD", "k", "*", "f", "v"]`),
    /// with Redis's parsing, errors and reply shapes.
    pub fn execute<A: AsRef<[u8]>>(&self, argv: &[A]) -> Result<Reply> {
        self.run(|db, snapshot| command::execute(db, snapshot, argv))
    }

    /// Checks the invariants of every stream (for tests and fuzzing; walks everything).
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.db.lock().check_invariants()
    }

    /// Calls `waker` whenever a command signals one of `keys` ready, until the returned
    /// [`Subscription`] is dropped.
    pub fn subscribe(self: &Arc<Self>, keys: &[&[u8]], waker: Arc<dyn Wake>) -> Subscription {
        let mut db = self.db.lock();
        let id = db.next_subscription;
        db.next_subscription += 1;
        let mut owned = Vec::with_capacity(keys.len());
        for &key in keys {
            let key = Bytes::copy_from_slice(key);
            if owned.contains(&key) {
                continue;
            }
            db.subscribers
                .entry(key.clone())
                .or_default()
                .push_back((id, Arc::clone(&waker)));
            owned.push(key);
        }
        Subscription {
            keyspace: Arc::downgrade(self),
            id,
            keys: owned,
        }
    }
}

/// A registration made by [`Keyspace::subscribe`]; dropping it unregisters.
#[derive(Debug)]
pub struct Subscription {
    keyspace: Weak<Keyspace>,
    id: u64,
    keys: Vec<Bytes>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let Some(keyspace) = self.keyspace.upgrade() else {
            return;
        };
        let mut db = keyspace.db.lock();
        for key in &self.keys {
            if let Some(subs) = db.subscribers.get_mut(key) {
                subs.retain(|(id, _)| *id != self.id);
                if subs.is_empty() {
                    db.subscribers.remove(key);
                }
            }
        }
    }
}

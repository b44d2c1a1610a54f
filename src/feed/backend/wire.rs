//! What the server backends share: the commands the feed sends are the same on one server
//! ([`super::RedisBackend`]) and on a cluster ([`super::ClusterBackend`]); only how a command
//! reaches its server differs. [`Wire`] is that difference, and `server.rs` and
//! `redis_groups.rs` implement [`super::Backend`] and [`super::GroupBackend`] once for every
//! `Wire`.
//!
//! Invariants a `Wire` keeps: every failure is mapped once, by `redis::failure`, into the
//! feed's typed errors; a connection that timed out or broke is never reused (a late reply
//! would answer the wrong command); [`Wire::query_at`] runs on the same connection the key's
//! own commands use, so `WAIT` after an `XADD` and `WATCH`/`MULTI`/`EXEC` around a key see that
//! connection's writes.

use std::sync::OnceLock;
use std::time::Duration;

use redis::Value;

use crate::feed::error::FeedError;

/// An opt-in replicated append: after each XADD, `WAIT replicas timeout`; the append is
/// acknowledged only when `replicas` replicas hold it, [`FeedError::NotReplicated`] otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replication {
    /// Replicas that must hold the entry (at least 1).
    pub replicas: u32,
    /// How long WAIT may wait for them.
    pub timeout: Duration,
}

/// How commands reach a Redis-protocol server or cluster.
pub trait Wire: Send + Sync + std::fmt::Debug {
    /// Runs one keyed command (the command names its key, which routes it on a cluster).
    fn query(&self, command: &redis::Cmd) -> Result<Value, FeedError>;

    /// Runs a command that may block for `block_ms` before the server answers
    /// (`XREADGROUP ... BLOCK block_ms`): its reply may take the reply timeout longer.
    fn query_blocking(&self, command: &redis::Cmd, block_ms: u64) -> Result<Value, FeedError>;

    /// Runs `command` (keyless, like `WAIT`, `MULTI`, `EXEC`) on the node serving `key`, on the
    /// connection `key`'s own commands use; it may block for `block_ms` (`WAIT`'s timeout).
    fn query_at(&self, key: &str, command: &redis::Cmd, block_ms: u64) -> Result<Value, FeedError>;

    /// Refuses a key the backend cannot place (a cluster needs the `{queue}` hash tag, so a
    /// queue's streams share one slot); nothing is sent for a refused key.
    fn check_key(&self, _key: &str) -> Result<(), FeedError> {
        Ok(())
    }

    /// The replicated-append setting, if opted in.
    fn replication(&self) -> Option<Replication>;

    /// Runs `transaction` (an atomic pipeline: `MULTI`, its commands, `EXEC`, written in one
    /// go) on the connection `key`'s commands use, and returns EXEC's replies (an array, an
    /// error reply in place of each refused command). `None` where the wire cannot: the cluster
    /// connection has no pipeline pinned to one node, so recorded appends are off there.
    fn transaction(
        &self,
        key: &str,
        transaction: &redis::Pipeline,
    ) -> Option<Result<Value, FeedError>>;

    /// Where the answer to "does the server have XIDMPRECORD" is kept once asked (a fork
    /// shares the answer). A wire whose [`Wire::transaction`] is `None` sets it to `false`
    /// before any call.
    fn records(&self) -> &OnceLock<bool>;

    /// Another connection with the same settings (a consumer's own, a dedup store's own).
    fn fork(&self) -> Result<Self, FeedError>
    where
        Self: Sized;
}

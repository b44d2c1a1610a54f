//! Propagation: the deterministic form of every write, for an append-only file.
//!
//! A command that changes the keyspace leaves, next to its reply, the commands that replay
//! that change exactly (Redis's `alsoPropagate` and `rewriteClientCommandVector`): XADD with
//! the id it got and an approximate trim as its exact effect, XREADGROUP as one XCLAIM per
//! delivered entry plus XGROUP SETID, and so on. Every command pushes its own forms with
//! [`Db::propagate`] as it runs (the stream commands build theirs in `command/forms.rs`);
//! nothing derives them afterwards from a command's name or arguments.
//! They collect in the [`Db`] during the command; [`Keyspace`] hands each execution unit's
//! commands (a command, or a whole MULTI/EXEC, and the blocked readers it served) to the
//! [`PropagationSink`] while still holding the lock, so the sink sees them in execution order.
//! The sink must not do I/O there: it buffers, and writes outside the lock.
//!
//! Invariant: replaying, in order, everything fed to the sink into an empty keyspace (with the
//! same databases) gives the keyspace the commands built: entries, last id, max deleted id,
//! entries added, groups with last id and entries read, PELs with owners, delivery counts and
//! times, and consumers (their seen and active times excepted, as in Redis).
//!
//! [`Db`]: crate::Db
//! [`Db::propagate`]: crate::Db::propagate
//! [`Keyspace`]: crate::Keyspace

use std::fmt;

use bytes::Bytes;

/// Receives propagated commands, under the keyspace lock.
pub trait PropagationSink: Send + Sync + fmt::Debug {
    /// One execution unit's commands, each with the index of its database.
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>);
}

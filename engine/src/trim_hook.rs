//! The trim hook: how an embedder takes over the trims of the streams it covers.
//!
//! The server's archive folds the entries a trim removes into durable storage before they go.
//! Instead of running XADD and XTRIM its own way, it installs a [`TrimHook`] on the
//! [`Keyspace`](crate::Keyspace); XADD's and XTRIM's trim step hands the stream to it when it
//! covers the key, and the commands go on producing their own effects (propagation, events,
//! WATCH, dirty) from what the hook reports. So an archived stream is written through the
//! same path as any other.
//!
//! Contract:
//! - [`TrimHook::refusal`] is asked before a covered write that would trim changes anything;
//!   an error there is the command's reply and nothing changes.
//! - [`TrimHook::trim`] (XTRIM) removes what the trim asks or fails with nothing removed.
//! - [`TrimHook::trim_after_add`] (XADD, once the entry is added) never fails the XADD: it
//!   trims, skips the trim (reporting `Removed(0)`), or defers it ([`TrimDone::Deferred`]):
//!   then XADD propagates itself without its trim, and the hook must propagate the trim when
//!   it runs it.
//!
//! The hook runs under the keyspace lock: it must not wait on another keyspace call.

use std::fmt;

use crate::config::NodeLimits;
use crate::error::{Error, Result};
use crate::stream::{Stream, Trim};

/// What a hook did with XADD's trim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimDone {
    /// Trimmed now: the live entries removed (0 when it removed nothing or skipped the trim).
    Removed(u64),
    /// Left for later: the hook runs (and propagates) the trim itself.
    Deferred,
}

/// Takes over the trims of the streams it covers (see the module doc).
pub trait TrimHook: Send + Sync + fmt::Debug {
    /// Whether the trims of `key` in database `db` go through this hook.
    fn covers(&self, db: usize, key: &[u8]) -> bool;

    /// The error a covered write that would trim gets now, before it changes anything;
    /// `None` when trims may run.
    fn refusal(&self) -> Option<Error>;

    /// XTRIM's trim of a covered stream: the live entries removed, or an error with nothing
    /// removed.
    fn trim(&self, key: &[u8], stream: &mut Stream, trim: &Trim, limits: NodeLimits)
    -> Result<u64>;

    /// XADD's trim of a covered stream, after the entry was added.
    fn trim_after_add(
        &self,
        key: &[u8],
        stream: &mut Stream,
        trim: &Trim,
        limits: NodeLimits,
    ) -> TrimDone;
}

//! echomq-engine: Redis Streams, in memory, in process.
//!
//! The engine reproduces Redis's stream data structure and commands without Redis: it is
//! synchronous, does no I/O, and reads time only from an injected [`Clock`]. Modules:
//!
//! - [`id`]: [`StreamId`] and Redis's exact id parsing for every argument context.
//! - `node`: the macro node, a compact byte buffer of entries delta-encoded against a master
//!   id, with tombstones; `listpack_size` models the bytes Redis would use so nodes split where
//!   Redis splits them; `varint` is the number encoding inside nodes.
//! - [`stream`]: one stream (ordered node index plus bookkeeping): append, range reads,
//!   deletion, trimming (and a preview of what a trim would remove, for the archive's
//!   fold-before-trim), XSETID, idempotent production's per-producer IID maps
//!   ([`stream::idmp`]), and `check_invariants`.
//! - [`group`]: consumer groups: cursor, entries-read and lag, pending entries lists shared
//!   between group and consumer (`chunk_map` is their compact ordered map), claiming. A stream
//!   owns its groups; the group operations are methods of [`group::Group`], and the API callers
//!   use is one `impl Stream` block in `group/api.rs`, so `stream/` holds the stream's own
//!   operations only.
//! - [`blocking`]: the blocking vocabulary ([`Outcome`], [`BlockRequest`]) and the registry of
//!   blocked XREAD/XREADGROUP readers, re-run in FIFO order when their keys are signalled, with
//!   no async runtime: a [`Wake`] callback tells the reader.
//! - [`keyspace`]: binary-safe keys to values behind one lock, one clock snapshot per command,
//!   and the signals that serve blocked readers. It knows no command: a blocked command is
//!   re-run with the function it was registered with.
//! - [`command`]: the stream commands with Redis's argument grammar, errors and replies, over a
//!   [`Db`]; `execute` holds [`Keyspace::execute`] and its blocking forms, which join the
//!   keyspace and the commands. The embedded API, the server and the fuzz target all go
//!   through them.
//! - [`expire`]: key expiry: Redis's active expiry cycle (sampling keys with a TTL, `hz`
//!   times a second, by the injected clock) and a full sweep for test doubles; lazy expiry is
//!   the [`Db`]'s own ([`Db::expire_if_due`]).
//! - [`notify`]: keyspace notifications: the `notify-keyspace-events` classes and the events
//!   commands and expiry fire, handed to a [`NotificationSink`] in execution order.
//! - [`reply`]: protocol-neutral replies; [`error`]: the one error enum, whose messages are
//!   Redis's exact text; [`config`]: run-time settings; [`clock`]: system and manual clocks.
//! - `fuzzing` (the `fuzzing` feature, and this crate's tests): the `engine_ops` fuzz target.

pub mod batch;
pub mod blocking;
mod chunk_map;
pub mod clock;
pub mod command;
pub mod config;
mod db;
pub mod error;
mod execute;
pub mod expire;
// The fuzz targets: for cargo-fuzz (fuzz/ enables the feature) and this crate's replays.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod group;
mod heap_size;
pub mod id;
pub mod keyspace;
mod listpack_size;
mod node;
pub mod notify;
pub mod propagate;
pub mod rdb;
pub mod reply;
pub mod stream;
pub mod trim_hook;
pub mod types;
mod varint;

pub use batch::Batch;
pub use blocking::{BlockRequest, Outcome, Parker, Wake};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{Config, NodeLimits};
pub use error::{Error, RdbError, Result};
pub use expire::{ExpireCycle, ExpireStats};
pub use id::{AddId, StreamId};
pub use keyspace::{BlockedHandle, Db, Execution, Keyspace, Snapshot, Value};
pub use node::{Entry, EntryRef, Fields};
pub use notify::{Notification, NotificationSink};
pub use propagate::PropagationSink;
pub use reply::{Entries, EntryView, Reply};
pub use stream::{DeleteStrategy, Stream, Trim, TrimPreview, TrimStrategy};
pub use trim_hook::{TrimDone, TrimHook};

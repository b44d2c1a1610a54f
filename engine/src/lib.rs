//! echomq-engine: Redis Streams, in memory, in process.
//!
//! The engine reproduces Redis's stream data structure and commands without Redis: it is
//! synchronous, does no I/O, and reads time only from an injected [`Clock`]. Modules:
//!
//! - [`types`]: the [`Value`] enum and one folder per value type, each with its data
//!   structure, its commands and its memory accounting. The stream (`types/stream/`):
//!   [`id`] ([`StreamId`] and Redis's exact id parsing), `node` (the macro node, a compact byte
//!   buffer of entries delta-encoded against a master id, with tombstones; `listpack_size`
//!   models Redis's bytes so nodes split where Redis splits them; `varint`), [`stream`] (one
//!   stream: append, range reads, deletion, trimming and its preview, XSETID, IDMP
//!   ([`stream::idmp`]), `check_invariants`), [`group`] (consumer groups, their pending
//!   entries lists in a `chunk_map`, claiming; the API callers use is one `impl Stream` block
//!   in `group/api.rs`) and `commands` (the X* commands and the forms they propagate). The
//!   string (`types/string/`). Their RDB and DUMP forms are in [`rdb`].
//! - [`trim_hook`]: how an embedder (the server's archive) takes over the trims of the streams
//!   it covers, while XADD and XTRIM keep their own effects.
//! - [`blocking`]: the blocking vocabulary ([`Outcome`], [`BlockRequest`]) and the registry of
//!   blocked XREAD/XREADGROUP readers, re-run in FIFO order when their keys are signalled, with
//!   no async runtime: a [`Wake`] callback tells the reader.
//! - [`keyspace`]: the databases behind one lock, one clock snapshot per command, the sinks
//!   effects go to, and serving blocked readers. It knows no command: a blocked command is
//!   re-run with the function it was registered with. `db/` is one database ([`Db`]), split
//!   by concern (values and expiry; WATCH and blocked-reader signals; the effects log;
//!   statistics), with the small effects API every write goes through ([`Db::propagate`],
//!   [`Db::notify`], [`Db::touch`], [`Db::signal_ready`], [`Db::add_dirty`]) and the typed
//!   write [`Db::xadd`].
//! - [`command`]: the one command table (names, arities, flags, key positions) and its
//!   dispatch over a [`Db`]; `execute` holds [`Keyspace::execute`] and its blocking forms. The
//!   embedded API, the server and the fuzz target all go through them.
//! - [`expire`]: key expiry: Redis's active expiry cycle (sampling keys with a TTL, `hz`
//!   times a second, by the injected clock) and a full sweep for test doubles; lazy expiry is
//!   the [`Db`]'s own ([`Db::expire_if_due`]).
//! - [`notify`]: keyspace notifications: the `notify-keyspace-events` classes and the events
//!   commands and expiry fire, handed to a [`NotificationSink`] in execution order.
//! - [`invalidate`]: the keys each execution unit changed, handed to the embedder for
//!   client-side caching; [`debug_digest`]: DEBUG DIGEST's dataset and value digests, as
//!   Redis computes them.
//! - [`glob`]: Redis's glob matching (KEYS, SCAN MATCH; the server's CONFIG GET, PSUBSCRIBE).
//! - [`reply`]: protocol-neutral replies; [`error`]: the one error enum, whose messages are
//!   Redis's exact text; [`config`]: run-time settings; [`clock`]: system and manual clocks.
//! - `fuzzing` (the `fuzzing` feature, and this crate's tests): the `engine_ops` fuzz target.

pub mod batch;
pub mod blocking;
pub mod clock;
pub mod command;
pub mod config;
mod db;
pub mod debug_digest;
#[cfg(test)]
mod effects_fixture;
pub mod error;
pub mod evict;
mod execute;
pub mod expire;
pub mod glob;
pub mod invalidate;
// The fuzz targets: for cargo-fuzz (fuzz/ enables the feature) and this crate's replays.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(any(test, feature = "fuzzing"))]
mod fuzzing_caps;
mod hash_index;
mod heap_size;
pub mod keyspace;
pub mod lazyfree;
pub mod notify;
mod prefetch;
pub mod propagate;
pub mod rdb;
pub mod reply;
pub mod reply_size;
mod sip;
pub mod slot;
pub mod trim_hook;
pub mod types;

// The stream type's modules keep their crate-level paths (`crate::stream`, `crate::group`,
// `crate::id`, ...), which the rest of the workspace uses.
use types::stream::{chunk_map, listpack_size, node, varint};
pub use types::stream::{group, id, log as stream};
pub use types::string::{Encoding as StringEncoding, StringValue};

pub use batch::Batch;
pub use blocking::{BlockRequest, Outcome, Parker, Wake};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{Config, Eviction, NodeLimits, Policy};
pub use db::access;
pub use db::{Dbs, Key};
pub use error::{Error, RdbError, Result};
pub use evict::EvictOutcome;
pub use expire::{ExpireCycle, ExpireStats};
pub use id::{AddId, StreamId};
pub use invalidate::InvalidationSink;
pub use keyspace::{BlockedHandle, Db, Execution, Keyspace, Snapshot, Value};
pub use node::{Entry, EntryRef, Fields};
pub use notify::{Notification, NotificationSink};
pub use propagate::PropagationSink;
pub use reply::{Bulks, BulksShape, Entries, EntryView, Reply};
pub use reply_size::{Protocol, encoded_len};
pub use stream::{DeleteStrategy, Stream, Trim, TrimPreview, TrimStrategy};
pub use trim_hook::{TrimDone, TrimHook};

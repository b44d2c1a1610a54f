//! echomq-protocol: the RESP2/RESP3 codec and a Redis-protocol server over the echomq engine.
//!
//! Layers, bottom up; each imports only those below it. At the bottom, [`error`], [`glob`],
//! [`slot`] and the monotonic clock (`monotonic`) import nothing else of this crate, and
//! [`resp`] only [`error`]:
//!
//! - [`resp`]: request decoding (multibulk and inline, Redis's limits and error texts) and
//!   reply encoding for both protocol versions.
//! - `persist`: persistence. The append-only file (`persist/aof`: the multi-part layout and
//!   its manifest, the commit pipeline and group fsync, rewrites, the startup load) and RDB
//!   snapshots (`persist/rdb`: SAVE/BGSAVE's files written atomically, `dump.rdb` loaded at
//!   start): every file the server opens, writes, syncs or renames. It knows the keyspace and
//!   its own bookkeeping, not the settings, the clients or the commands: replaying the AOF's
//!   commands is handed to it as a function. The RDB format is the engine's.
//! - `state`: what every connection of one server shares, behind private fields and methods:
//!   the keyspace handle, run-time settings (CONFIG), statistics (INFO), the table of
//!   connected clients, pub/sub, the archive and its replica, the memory reading for
//!   `maxmemory`, the shutdown signal, and the persistence the settings ask for (when to
//!   save, commit or rewrite: `state/persistence`); plus each client's own state and the
//!   contract between the connection loop and the commands (the `Action` a request leads to).
//!   What only the command table knows (a command id's name) is handed down as a function.
//! - `cmd`: the commands. `cmd/table.rs` is the server's command table (name, arity, flags,
//!   key positions, subcommands, run function), looked up together with the engine's stream
//!   command table (`echomq_engine::command::specs`); dispatch, arity and subcommand errors,
//!   deny-OOM, the names calls are counted under and COMMAND INFO/DOCS/COUNT/LIST all come
//!   from the two tables. One file per command or command family, a folder for INFO's
//!   sections, what the server's write commands propagate (`cmd/propagate.rs`) and the AOF's
//!   replay through the command path (`cmd/replay.rs`). Commands see the server only through
//!   `state`.
//! - `script`: Lua scripting (EVAL, EVALSHA and their `_RO` forms, SCRIPT): the script cache,
//!   the sandboxed VM, Redis's Lua/RESP conversions and `redis.call` through `cmd`'s dispatch
//!   of a queued command, under the lock EVAL holds.
//! - [`server`]: the tokio server: accepting, one task per connection, pipelined reads and
//!   batched writes, blocking reads, limits, shutdown, and the `hz` cron (active expiry,
//!   save points, AOF commits). The connection loop knows no command: it is handed the
//!   dispatcher as a function. Embedders hold a [`ServerHandle`]: the keyspace, CONFIG SET by
//!   name, the startup load, shutdown.
//! - [`slot`]: Redis Cluster's key slots (CRC16, hash tags) and a request's keys, for cluster
//!   mode (`cluster-enabled yes`: `cmd/cluster.rs`, CLUSTER and the CROSSSLOT check).
//! - [`glob`]: Redis's glob matching (the engine's, for CONFIG GET, PSUBSCRIBE,
//!   `archive-streams`).
//! - [`error`]: protocol errors.
//! - [`alloc`]: [`CountingAlloc`], the system allocator counting the heap bytes the process
//!   holds, which a binary installs so `used_memory` and `maxmemory` see what the data holds.
//! - `fuzzing` (the `fuzzing` feature, and this crate's tests): the `resp_decode`,
//!   `server_commands`, `script_eval` and `aof_load` fuzz targets; `tests`: persistence tested through a whole server.

mod acl;
pub mod alloc;
mod cmd;
pub mod config_file;
pub mod error;
mod monotonic;
mod persist;
// The fuzz targets: for cargo-fuzz (fuzz/ enables the feature) and this crate's replays.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub use echomq_engine::glob;
pub mod resp;
mod script;
pub mod server;
pub mod slot;
mod state;
// Tests of persistence through a whole server (they start one, and run commands).
#[cfg(test)]
mod tests;

/// The version echomq reports (INFO, HELLO, an RDB file's `redis-ver`): the Redis whose stream
/// behaviour it follows.
pub(crate) const REDIS_VERSION: &str = "8.8.0";

pub use alloc::CountingAlloc;
pub use error::{PersistError, ProtocolError};
pub use server::{Server, ServerConfig, ServerHandle};

//! echomq-protocol: the RESP2/RESP3 codec and a Redis-protocol server over the echomq engine.
//!
//! Layers, bottom up; each depends only on those before it:
//!
//! - [`resp`]: request decoding (multibulk and inline, Redis's limits and error texts) and
//!   reply encoding for both protocol versions.
//! - `state`: what every connection of one server shares, behind private fields and methods:
//!   the keyspace handle, run-time settings (CONFIG), statistics (INFO), the table of
//!   connected clients, the archive and its replica, the sampled memory reading for
//!   `maxmemory`, and the shutdown signal; plus each client's own state and the contract
//!   between the connection loop and the commands (the `Action` a request leads to).
//! - `cmd`: the commands. `cmd/table.rs` is the server's command table (name, arity, flags,
//!   key positions, subcommands, run function), looked up together with the engine's stream
//!   command table (`echomq_engine::command::specs`); dispatch, arity and subcommand errors,
//!   deny-OOM, the names calls are counted under and COMMAND INFO/DOCS/COUNT/LIST all come
//!   from the two tables. One file per command family (connection, keyspace, expiry,
//!   strings, transactions, CONFIG, COMMAND, the archive's EMQ.XRANGE), and a folder for
//!   INFO's sections. Commands see the server
//!   only through `state`.
//! - [`server`]: the tokio server: accepting, one task per connection, pipelined reads and
//!   batched writes, blocking reads, limits, shutdown, and the `hz` cron (active expiry). The connection loop knows no command:
//!   it is handed the dispatcher as a function. Embedders hold a [`ServerHandle`]: the
//!   keyspace, CONFIG SET by name, shutdown.
//! - [`slot`]: Redis Cluster's key slots (CRC16, hash tags) and a request's keys, for cluster
//!   mode (`cluster-enabled yes`: `cmd/cluster.rs`, CLUSTER and the CROSSSLOT check).
//! - [`glob`]: Redis's glob matching (KEYS, SCAN MATCH, CONFIG GET, `archive-streams`).
//! - [`error`]: protocol errors.
//! - `fuzzing` (the `fuzzing` feature, and this crate's tests): the `resp_decode` and
//!   `server_commands` fuzz targets.

mod aof;
mod cmd;
pub mod error;
mod mono;
mod rdb;
// The fuzz targets: for cargo-fuzz (fuzz/ enables the feature) and this crate's replays.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod glob;
pub mod resp;
pub mod server;
pub mod slot;
mod state;

pub use error::{AofError, ProtocolError};
pub use server::{Server, ServerConfig, ServerHandle};

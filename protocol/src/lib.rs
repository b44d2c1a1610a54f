//! echomq-protocol: the RESP2/RESP3 codec and a Redis-protocol server over the echomq engine.
//!
//! - [`resp`]: request decoding (multibulk and inline, Redis's limits and error texts) and
//!   reply encoding for both protocol versions.
//! - [`server`]: the tokio server: accepting, one task per connection, pipelined reads and
//!   batched writes, blocking reads, limits, shutdown; [`server::Shared`] holds the keyspace,
//!   run-time settings and statistics every connection sees.
//! - `cmd`: the commands the server adds around the engine's stream commands (connection,
//!   keyspace, strings, transactions, CONFIG, INFO, COMMAND), one file per family.
//! - [`error`]: protocol errors.

mod cmd;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod glob;
pub mod resp;
pub mod server;
mod state;

pub use error::ProtocolError;
pub use server::{Server, ServerConfig, ServerHandle};

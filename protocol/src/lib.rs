//! echomq-protocol: the RESP2/RESP3 codec, command parsing and the Redis-protocol server.
//!
//! Not built yet: the server issue fills this crate. Until then it only re-exports the engine so
//! the dependency direction (`engine` ← `archive` ← `protocol` ← `echomq`) is already in place.

pub use echomq_engine as engine;

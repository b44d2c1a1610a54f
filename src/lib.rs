//! echomq: a pure-Rust, in-process stream engine that speaks Redis Streams natively.
//!
//! One engine, three ways to use it:
//!
//! - **Embedded engine.** Link the crate and run stream commands (`XADD`, `XREADGROUP`, `XTRIM`,
//!   ...) in-process, with Redis's semantics and no server. The engine lives in
//!   [`engine`] (the `echomq-engine` crate): synchronous, no I/O, clock injected.
//! - **Server.** `echomq serve` speaks RESP2/RESP3 on a TCP port, so any Redis client or tool can
//!   use the same engine over the network (the `echomq-protocol` crate). [`testing::TestServer`]
//!   starts one in-process as a test double.
//! - **Feed layer.** Branded ids, an append/read/window API, projections, a consumer runtime and
//!   a retention driver over one `Backend` trait, implemented by the embedded engine
//!   ([`feed::Embedded`]), by any Redis-compatible server ([`feed::RedisBackend`]) and by a
//!   Redis or Valkey Cluster ([`feed::ClusterBackend`]), so the same code runs in-process,
//!   against `echomq serve`, against Redis or Valkey, or on a cluster.
//!
//! Trimmed entries can be folded into an archive (the `echomq-archive` crate, re-exported as
//! [`archive`]): `Feed::with_archive` and `echomq serve --archive` fold what a trim removes
//! before removing it, so a range read returns the same entries as a log that was never
//! trimmed.
//!
//! The `echomq` binary is not part of this crate: it is the `echomq-cli` package (`cli/`), and
//! `echomq bench` the `echomq-bench` crate (`bench/`), so their argument parsing, logging
//! setup, progress bars, plots and JSON report are not dependencies of code that embeds
//! echomq.

pub use echomq_archive as archive;
pub use echomq_protocol as protocol;

/// The embedded engine: the `echomq-engine` crate, re-exported whole so its types are
/// documented here.
///
/// [`Keyspace`](engine::Keyspace) holds the databases and runs commands:
/// [`Keyspace::execute`](engine::Keyspace::execute) takes a command as arguments and answers
/// with a [`Reply`](engine::Reply), exactly as Redis would. [`Stream`](engine::Stream) is one
/// stream with a typed API (`add`, `range`, `trim`, `deliver_new`, ...) that skips the parsing.
/// The engine is synchronous, does no I/O and reads time only from an injected
/// [`Clock`](engine::Clock), so it doubles as a test double.
pub mod engine {
    #[doc(inline)]
    pub use echomq_engine::*;
}

pub mod feed;
pub mod testing;

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// `docs/feed.md`'s examples, compiled and run as doc tests.
#[doc = include_str!("../docs/feed.md")]
#[cfg(doctest)]
pub struct FeedDoctests;

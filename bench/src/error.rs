//! The one error type of `echomq bench`: every message says what the user can change.

use std::path::PathBuf;

/// Why a bench run stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// An `--entries` item that is not a count.
    #[error("bad --entries value '{0}': give counts like 10000, 1e4 or 10k, at least 1")]
    BadSize(String),
    /// A `--target` that is neither `embedded`, a `redis://` URL nor a `redis-cluster://` list.
    #[error(
        "bad --target '{0}': give `embedded`, `redis://host:port` or \
         `redis-cluster://host:port[,host:port...]`"
    )]
    BadTarget(String),
    /// Another option out of range.
    #[error("bad option: {0}")]
    BadOption(String),
    /// Nothing accepts connections at the target's address.
    #[error("{target} is unreachable: {reason} (is the server running, and is the port right?)")]
    Unreachable {
        /// The target as given.
        target: String,
        /// What the connection attempt said.
        reason: String,
    },
    /// Something answers, but not in the Redis protocol.
    #[error(
        "{target} does not speak the Redis protocol: {reason} (point --target at a Redis, Valkey or `echomq serve` port)"
    )]
    NotRedis {
        /// The target as given.
        target: String,
        /// What was seen instead of a RESP reply.
        reason: String,
    },
    /// The streams would not fit in memory; nothing was loaded.
    #[error(
        "{entries} entries do not fit: about {need_mb} MB needed on {place}, {available_mb} MB available; choose smaller --entries, fewer --fields or a smaller --value-bytes"
    )]
    TooBig {
        /// The stream size refused.
        entries: u64,
        /// Estimated need.
        need_mb: u64,
        /// What is available there.
        available_mb: u64,
        /// Where: this machine, or a server's maxmemory.
        place: String,
    },
    /// A command failed on a target.
    #[error("{target}: {message}")]
    Server {
        /// The target.
        target: String,
        /// The failure.
        message: String,
    },
    /// SIGINT or SIGTERM arrived; the bench's keys were removed.
    #[error("interrupted; the bench's keys were removed")]
    Interrupted,
    /// A results file could not be written.
    #[error("cannot write {path}: {reason}")]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

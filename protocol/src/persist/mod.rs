//! Persistence: the append-only file ([`aof`]) and RDB snapshots ([`rdb`]), with every file
//! the server opens, writes, syncs, renames or truncates for them, and the startup load of
//! either.
//!
//! This layer sits beneath the server state: it knows the keyspace (`echomq_engine`), the
//! AOF's and RDB's own bookkeeping (INFO's `aof_*` and `rdb_*` figures) and nothing of the
//! settings, the clients or the commands. What to save, where and when is decided above it
//! (`crate::state`, from the settings); replaying the AOF's commands is the command path's
//! (`crate::cmd::replay`), handed to [`aof::load::load`] as a function. The RDB format itself
//! is the engine's (`echomq_engine::rdb`), which encodes and decodes bytes and touches no file.
//!
//! Invariant: a file the server reads at start is only ever replaced whole (written to a temp
//! file, fsynced, renamed, its directory fsynced), so a crash leaves the old one or the new.

pub(crate) mod aof;
pub(crate) mod fork;
pub(crate) mod rdb;
pub(crate) mod synced;

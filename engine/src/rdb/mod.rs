//! Redis's RDB format: snapshot files (SAVE, BGSAVE, loading `dump.rdb`) and DUMP/RESTORE
//! payloads, as Redis 8.8 (RDB version 14) writes them, readable from what Redis 5.0–8.10 write
//! (versions up to 15, for the types echomq holds).
//! This module encodes into a [`codec::SaveOutput`] and decodes from byte slices; it opens,
//! writes and syncs no file (the server does, through its own `SaveOutput`).
//!
//! One job per file: [`crc64`] the footer checksum, [`lzf`] the string compression, [`codec`]
//! lengths, strings and times, [`listpack`] the node layout, `nodes` a stream's nodes (on two
//! threads when many), [`stream`] a stream value, [`value`] a value with its type byte,
//! [`file`] a whole file (header, aux fields, databases, expiry, EOF and checksum), [`dump`]
//! DUMP payloads (value, version, CRC64).
//!
//! Invariants:
//! - what is written loads back to an equal value (`rdb::tests`, and the round-trip property
//!   test over random keyspaces with `check_invariants` on the result);
//! - reading never panics and never allocates beyond a bound of the input's size: every
//!   length is checked against the bytes left before it is used;
//! - a value is built whole and checked before it is returned, so a failed load leaves no
//!   partial key; errors are [`RdbError`](crate::error::RdbError).

pub mod codec;
pub mod collections;
pub mod crc64;
pub mod dump;
pub mod file;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzz;
pub mod list;
pub mod listpack;
pub mod lzf;
pub(crate) mod nodes;

/// Set in a process that saves in the background beside a server (a forked save child):
/// saves encode on their one thread, leaving the other cores to the server's threads, as
/// Redis's child does (on two cores a second encoding thread took the core a writer needed).
static ONE_THREAD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on this process's saves encode streams on the calling thread only.
pub fn encode_on_one_thread() {
    ONE_THREAD.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn one_thread() -> bool {
    ONE_THREAD.load(std::sync::atomic::Ordering::Relaxed)
}
pub mod stream;
pub mod value;
pub mod zset;

#[cfg(test)]
mod hardening_tests;
#[cfg(test)]
mod reference;
#[cfg(test)]
pub(crate) mod tests;

/// The encoding settings a load builds values under: the server's current ones (Redis's
/// loader reads `server.*_max_listpack_*` as it converts), so a RESTORE or a load after
/// CONFIG SET (or a config file) encodes as a write under those settings would. The default is
/// Redis 8.8's defaults, for a load with no server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadLimits {
    /// The listpack, intset and table thresholds of hashes, sets and sorted sets.
    pub encoding: crate::config::Thresholds,
    /// `list-max-listpack-size` and `list-compress-depth`.
    pub list: crate::types::list::ListConfig,
}

/// The RDB version written (Redis 8.8's `RDB_VERSION`): a DUMP or file from echomq loads on
/// Redis 8.8 (which refuses anything newer) and on 8.10.
pub const RDB_VERSION: u16 = 14;

/// The newest RDB version read (Redis 8.10's): version 15 adds hash templates only
/// (`docs/reference/streams-8.md` §8), so a payload of a type echomq knows reads as in 14,
/// and one of a type it does not know is refused as Redis refuses an unknown type.
pub const RDB_VERSION_READ: u16 = 15;

/// Value type bytes (Redis's `RDB_TYPE_*`).
pub mod types {
    /// A string.
    pub const STRING: u8 = 0;
    /// A list of plain strings (before 3.2).
    pub const LIST: u8 = 1;
    /// A quicklist of listpack or plain nodes (7.0+).
    pub const LIST_QUICKLIST_2: u8 = 18;
    /// Streams before 7.0.
    pub const STREAM_LISTPACKS: u8 = 15;
    /// 7.0: first id, max deleted id, entries added, entries read.
    pub const STREAM_LISTPACKS_2: u8 = 19;
    /// 7.2: consumers' active time.
    pub const STREAM_LISTPACKS_3: u8 = 21;
    /// 8.6: IDMP.
    pub const STREAM_LISTPACKS_4: u8 = 26;
    /// 8.8: the NACK zone.
    pub const STREAM_LISTPACKS_5: u8 = 27;
    /// What echomq writes for a stream.
    pub const STREAM_WRITTEN: u8 = STREAM_LISTPACKS_5;

    /// Whether `t` is one of the stream types.
    pub fn is_stream(t: u8) -> bool {
        matches!(
            t,
            STREAM_LISTPACKS
                | STREAM_LISTPACKS_2
                | STREAM_LISTPACKS_3
                | STREAM_LISTPACKS_4
                | STREAM_LISTPACKS_5
        )
    }

    /// Whether `t` is a value type some Redis writes (echomq reads strings and streams only).
    pub fn is_known(t: u8) -> bool {
        t <= 29 && t != 8
    }
}

/// Opcode bytes (Redis's `RDB_OPCODE_*`).
pub mod opcodes {
    /// Key metadata (module metadata classes).
    pub const KEY_META: u8 = 243;
    /// Slot info (cluster mode).
    pub const SLOT_INFO: u8 = 244;
    /// A function library.
    pub const FUNCTION2: u8 = 245;
    /// Pre-GA function library.
    pub const FUNCTION_PRE_GA: u8 = 246;
    /// Module auxiliary data.
    pub const MODULE_AUX: u8 = 247;
    /// LRU idle time.
    pub const IDLE: u8 = 248;
    /// LFU frequency.
    pub const FREQ: u8 = 249;
    /// An aux field.
    pub const AUX: u8 = 250;
    /// Hash table sizes.
    pub const RESIZEDB: u8 = 251;
    /// Expire time in milliseconds.
    pub const EXPIRETIME_MS: u8 = 252;
    /// Expire time in seconds.
    pub const EXPIRETIME: u8 = 253;
    /// Database selector.
    pub const SELECTDB: u8 = 254;
    /// End of the file.
    pub const EOF: u8 = 255;
}

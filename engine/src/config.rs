//! Run-time settings of the engine, with Redis's names, defaults and ranges.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `stream-node-max-entries` default: entries (live and deleted) per node.
pub const NODE_ENTRIES_MAX_DEFAULT: u64 = 100;
/// `hll-sparse-max-bytes` default (Redis's).
pub const HLL_SPARSE_MAX_BYTES_DEFAULT: u64 = 3000;
/// `stream-node-max-bytes` default: listpack bytes per node.
pub const NODE_BYTES_MAX_DEFAULT: u64 = 4096;
/// A node never grows past 1 GiB; `stream-node-max-bytes 0` means this.
pub const NODE_BYTES_MAX_CEILING: u64 = 1 << 30;
/// Largest accepted value of either node limit (Redis: `LLONG_MAX`).
pub const NODE_LIMIT_SETTING_MAX: u64 = i64::MAX as u64;

/// `stream-idmp-duration` default: seconds an IID is remembered.
pub const IDMP_DURATION_DEFAULT: u64 = 100;
/// `stream-idmp-duration` (and XCFGSET IDMP-DURATION) range, seconds.
pub const IDMP_DURATION_RANGE: std::ops::RangeInclusive<u64> = 1..=86_400;
/// `stream-idmp-maxsize` default: IIDs remembered per producer.
pub const IDMP_MAXSIZE_DEFAULT: u64 = 100;
/// `stream-idmp-maxsize` (and XCFGSET IDMP-MAXSIZE) range, IIDs per producer.
pub const IDMP_MAXSIZE_RANGE: std::ops::RangeInclusive<u64> = 1..=10_000;

/// A stream's IDMP bounds: copied from the settings when the stream is created, changed only by
/// XCFGSET afterwards (a later CONFIG SET does not touch existing streams).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdmpConfig {
    /// Seconds an IID is remembered, by its stream id's milliseconds (`idmp-duration`).
    pub duration_s: u64,
    /// IIDs remembered per producer (`idmp-maxsize`); the oldest is evicted beyond it.
    pub maxsize: u64,
}

impl Default for IdmpConfig {
    fn default() -> Self {
        IdmpConfig {
            duration_s: IDMP_DURATION_DEFAULT,
            maxsize: IDMP_MAXSIZE_DEFAULT,
        }
    }
}

/// The node split limits in force for one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeLimits {
    /// `stream-node-max-entries`; 0 = no count limit.
    pub entries_max: u64,
    /// `stream-node-max-bytes`; 0 = 1 GiB.
    pub bytes_max: u64,
}

impl Default for NodeLimits {
    fn default() -> Self {
        NodeLimits {
            entries_max: NODE_ENTRIES_MAX_DEFAULT,
            bytes_max: NODE_BYTES_MAX_DEFAULT,
        }
    }
}

impl NodeLimits {
    /// The byte limit as Redis applies it: 0 or anything above 1 GiB means 1 GiB.
    pub fn effective_bytes_max(self) -> u64 {
        if self.bytes_max == 0 || self.bytes_max > NODE_BYTES_MAX_CEILING {
            NODE_BYTES_MAX_CEILING
        } else {
            self.bytes_max
        }
    }

    /// The LIMIT `~` trimming uses when none is given: `100 * entries_max`, 10000 when that is
    /// 0, at most 1,000,000.
    pub fn default_approx_trim_limit(self) -> u64 {
        const FALLBACK: u64 = 10_000;
        const CEILING: u64 = 1_000_000;
        match self.entries_max.saturating_mul(100) {
            0 => FALLBACK,
            n => n.min(CEILING),
        }
    }
}

/// Settings shared by every stream of a keyspace, changeable while it runs (CONFIG SET).
#[derive(Debug)]
pub struct Config {
    node_entries_max: AtomicU64,
    node_bytes_max: AtomicU64,
    idmp_duration_s: AtomicU64,
    idmp_maxsize: AtomicU64,
    /// `notify-keyspace-events` as flags (see [`crate::notify`]).
    notify_flags: AtomicU32,
    /// `hll-sparse-max-bytes`.
    hll_sparse_max_bytes: AtomicU64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            node_entries_max: AtomicU64::new(NODE_ENTRIES_MAX_DEFAULT),
            node_bytes_max: AtomicU64::new(NODE_BYTES_MAX_DEFAULT),
            idmp_duration_s: AtomicU64::new(IDMP_DURATION_DEFAULT),
            idmp_maxsize: AtomicU64::new(IDMP_MAXSIZE_DEFAULT),
            notify_flags: AtomicU32::new(0),
            hll_sparse_max_bytes: AtomicU64::new(HLL_SPARSE_MAX_BYTES_DEFAULT),
        }
    }
}

impl Config {
    /// `hll-sparse-max-bytes` now.
    pub fn hll_sparse_max_bytes(&self) -> u64 {
        self.hll_sparse_max_bytes.load(Ordering::Relaxed)
    }

    /// Sets `hll-sparse-max-bytes`.
    pub fn set_hll_sparse_max_bytes(&self, n: u64) {
        self.hll_sparse_max_bytes.store(n, Ordering::Relaxed);
    }

    /// The node limits now.
    pub fn node_limits(&self) -> NodeLimits {
        NodeLimits {
            entries_max: self.node_entries_max.load(Ordering::Relaxed),
            bytes_max: self.node_bytes_max.load(Ordering::Relaxed),
        }
    }

    /// Sets `stream-node-max-entries` (0 = no count limit).
    pub fn set_node_entries_max(&self, n: u64) {
        self.node_entries_max
            .store(n.min(NODE_LIMIT_SETTING_MAX), Ordering::Relaxed);
    }

    /// Sets `stream-node-max-bytes` (0 = 1 GiB).
    pub fn set_node_bytes_max(&self, n: u64) {
        self.node_bytes_max
            .store(n.min(NODE_LIMIT_SETTING_MAX), Ordering::Relaxed);
    }

    /// The IDMP bounds new streams start with (`stream-idmp-duration`, `stream-idmp-maxsize`).
    pub fn idmp_defaults(&self) -> IdmpConfig {
        IdmpConfig {
            duration_s: self.idmp_duration_s.load(Ordering::Relaxed),
            maxsize: self.idmp_maxsize.load(Ordering::Relaxed),
        }
    }

    /// Sets `stream-idmp-duration` for streams created from now on, clamped to
    /// [`IDMP_DURATION_RANGE`] (the server validates first and reports Redis's error).
    pub fn set_idmp_duration(&self, seconds: u64) {
        let s = seconds.clamp(*IDMP_DURATION_RANGE.start(), *IDMP_DURATION_RANGE.end());
        self.idmp_duration_s.store(s, Ordering::Relaxed);
    }

    /// Sets `stream-idmp-maxsize` for streams created from now on, clamped to
    /// [`IDMP_MAXSIZE_RANGE`].
    pub fn set_idmp_maxsize(&self, n: u64) {
        let n = n.clamp(*IDMP_MAXSIZE_RANGE.start(), *IDMP_MAXSIZE_RANGE.end());
        self.idmp_maxsize.store(n, Ordering::Relaxed);
    }

    /// The `notify-keyspace-events` classes in force (flags of [`crate::notify`]).
    pub fn notify_flags(&self) -> u32 {
        self.notify_flags.load(Ordering::Relaxed)
    }

    /// Sets the `notify-keyspace-events` classes (parsed with [`crate::notify::parse`]).
    pub fn set_notify_flags(&self, flags: u32) {
        self.notify_flags.store(flags, Ordering::Relaxed);
    }
}

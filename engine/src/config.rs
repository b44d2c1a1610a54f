//! Run-time settings of the engine, with Redis's names, defaults and ranges.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

/// `stream-node-max-entries` default: entries (live and deleted) per node.
pub const NODE_ENTRIES_MAX_DEFAULT: u64 = 100;
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
    /// The value types' encoding thresholds (CONFIG's `*-max-listpack-*` and friends).
    pub encoding: EncodingConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            node_entries_max: AtomicU64::new(NODE_ENTRIES_MAX_DEFAULT),
            node_bytes_max: AtomicU64::new(NODE_BYTES_MAX_DEFAULT),
            idmp_duration_s: AtomicU64::new(IDMP_DURATION_DEFAULT),
            idmp_maxsize: AtomicU64::new(IDMP_MAXSIZE_DEFAULT),
            notify_flags: AtomicU32::new(0),
            encoding: EncodingConfig::default(),
        }
    }
}

impl Config {
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

/// The thresholds at which Redis 8.8 converts a value from its compact encoding (listpack,
/// intset) to its general one, and the list and HyperLogLog tuning, as CONFIG sets them: each
/// value type reads the ones it needs on every write that may convert it. Atomics, so a read
/// costs a load and CONFIG SET needs no lock. Defaults are Redis 8.8's.
#[derive(Debug)]
pub struct EncodingConfig {
    /// `hash-max-listpack-entries` (alias `hash-max-ziplist-entries`).
    pub hash_max_listpack_entries: AtomicU64,
    /// `hash-max-listpack-value` (alias `hash-max-ziplist-value`), bytes.
    pub hash_max_listpack_value: AtomicU64,
    /// `set-max-intset-entries`.
    pub set_max_intset_entries: AtomicU64,
    /// `set-max-listpack-entries`.
    pub set_max_listpack_entries: AtomicU64,
    /// `set-max-listpack-value`, bytes.
    pub set_max_listpack_value: AtomicU64,
    /// `zset-max-listpack-entries` (alias `zset-max-ziplist-entries`).
    pub zset_max_listpack_entries: AtomicU64,
    /// `zset-max-listpack-value` (alias `zset-max-ziplist-value`), bytes.
    pub zset_max_listpack_value: AtomicU64,
    /// `list-max-listpack-size` (alias `list-max-ziplist-size`): positive, entries per
    /// quicklist node; -1 to -5, a node's size limit of 4, 8, 16, 32 or 64 KiB.
    pub list_max_listpack_size: AtomicI64,
    /// `list-compress-depth`: quicklist nodes left uncompressed at each end (0: none
    /// compressed).
    pub list_compress_depth: AtomicU64,
    /// `hll-sparse-max-bytes`: a HyperLogLog's sparse form becomes dense past this.
    pub hll_sparse_max_bytes: AtomicU64,
}

impl Default for EncodingConfig {
    fn default() -> Self {
        EncodingConfig {
            hash_max_listpack_entries: AtomicU64::new(512),
            hash_max_listpack_value: AtomicU64::new(64),
            set_max_intset_entries: AtomicU64::new(512),
            set_max_listpack_entries: AtomicU64::new(128),
            set_max_listpack_value: AtomicU64::new(64),
            zset_max_listpack_entries: AtomicU64::new(128),
            zset_max_listpack_value: AtomicU64::new(64),
            list_max_listpack_size: AtomicI64::new(-2),
            list_compress_depth: AtomicU64::new(0),
            hll_sparse_max_bytes: AtomicU64::new(3000),
        }
    }
}

/// A copy of every [`EncodingConfig`] value at once (to restore them when a CONFIG SET of
/// several parameters fails half-way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodingLimits([i64; 10]);

impl EncodingConfig {
    fn unsigned(&self) -> [&AtomicU64; 9] {
        [
            &self.hash_max_listpack_entries,
            &self.hash_max_listpack_value,
            &self.set_max_intset_entries,
            &self.set_max_listpack_entries,
            &self.set_max_listpack_value,
            &self.zset_max_listpack_entries,
            &self.zset_max_listpack_value,
            &self.list_compress_depth,
            &self.hll_sparse_max_bytes,
        ]
    }

    /// Every value now.
    pub fn limits(&self) -> EncodingLimits {
        let mut all = [0i64; 10];
        for (to, from) in all.iter_mut().zip(self.unsigned()) {
            *to = from.load(Ordering::Relaxed) as i64;
        }
        all[9] = self.list_max_listpack_size.load(Ordering::Relaxed);
        EncodingLimits(all)
    }

    /// Puts back values taken by [`EncodingConfig::limits`].
    pub fn restore(&self, limits: EncodingLimits) {
        for (to, from) in self.unsigned().into_iter().zip(limits.0) {
            to.store(from as u64, Ordering::Relaxed);
        }
        self.list_max_listpack_size
            .store(limits.0[9], Ordering::Relaxed);
    }
}

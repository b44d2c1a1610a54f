//! Run-time settings of the engine, with Redis's names, defaults and ranges.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::db::access::{Access, AccessMode};

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
    /// The value types' encoding thresholds (CONFIG's `*-max-listpack-*` and friends).
    pub encoding: EncodingConfig,
    /// `list-max-listpack-size`.
    list_fill: std::sync::atomic::AtomicI32,
    /// `list-compress-depth`.
    list_depth: AtomicU32,
    /// `cluster-enabled` (fixed at start): SORT refuses patterns that may name other slots.
    cluster_enabled: std::sync::atomic::AtomicBool,
    /// `maxmemory-policy` ([`Policy`] as its index in [`Policy::ALL`]).
    maxmemory_policy: AtomicU32,
    /// `maxmemory-samples`.
    maxmemory_samples: AtomicU32,
    /// `maxmemory-eviction-tenacity`.
    eviction_tenacity: AtomicU32,
    /// `lfu-log-factor`.
    lfu_log_factor: AtomicU32,
    /// `lfu-decay-time`.
    lfu_decay_time: AtomicU32,
    /// `hll-sparse-max-bytes`.
    hll_sparse_max_bytes: AtomicU64,
    /// Lazy freeing: its switches and counts (each database holds it too).
    pub lazyfree: std::sync::Arc<crate::lazyfree::LazyFree>,
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
            list_fill: std::sync::atomic::AtomicI32::new(crate::types::list::FILL_DEFAULT),
            list_depth: AtomicU32::new(0),
            cluster_enabled: std::sync::atomic::AtomicBool::new(false),
            maxmemory_policy: AtomicU32::new(Policy::NoEviction as u32),
            maxmemory_samples: AtomicU32::new(MAXMEMORY_SAMPLES_DEFAULT),
            eviction_tenacity: AtomicU32::new(EVICTION_TENACITY_DEFAULT),
            lfu_log_factor: AtomicU32::new(LFU_LOG_FACTOR_DEFAULT),
            lfu_decay_time: AtomicU32::new(LFU_DECAY_TIME_DEFAULT),
            hll_sparse_max_bytes: AtomicU64::new(HLL_SPARSE_MAX_BYTES_DEFAULT),
            lazyfree: std::sync::Arc::default(),
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

    /// The list settings now (`list-max-listpack-size`, `list-compress-depth`).
    pub fn list_config(&self) -> crate::types::list::ListConfig {
        crate::types::list::ListConfig {
            fill: self.list_fill.load(Ordering::Relaxed),
            depth: self.list_depth.load(Ordering::Relaxed),
        }
    }

    /// Sets `list-max-listpack-size` (lists converted or created from now on use it).
    pub fn set_list_fill(&self, fill: i32) {
        self.list_fill.store(fill, Ordering::Relaxed);
    }

    /// Sets `list-compress-depth` (quicklists created from now on use it).
    pub fn set_list_depth(&self, depth: u32) {
        self.list_depth.store(depth, Ordering::Relaxed);
    }

    /// Whether the server runs in cluster mode.
    pub fn cluster_enabled(&self) -> bool {
        self.cluster_enabled.load(Ordering::Relaxed)
    }

    /// Sets whether the server runs in cluster mode.
    pub fn set_cluster_enabled(&self, enabled: bool) {
        self.cluster_enabled.store(enabled, Ordering::Relaxed);
    }

    /// Sets the `notify-keyspace-events` classes (parsed with [`crate::notify::parse`]).
    pub fn set_notify_flags(&self, flags: u32) {
        self.notify_flags.store(flags, Ordering::Relaxed);
    }

    /// The eviction settings in force.
    pub fn eviction(&self) -> Eviction {
        let policy = Policy::ALL
            .get(self.maxmemory_policy.load(Ordering::Relaxed) as usize)
            .copied()
            .unwrap_or(Policy::NoEviction);
        Eviction {
            policy,
            samples: self.maxmemory_samples.load(Ordering::Relaxed),
            tenacity: self.eviction_tenacity.load(Ordering::Relaxed),
            lfu_log_factor: self.lfu_log_factor.load(Ordering::Relaxed),
            lfu_decay_time: self.lfu_decay_time.load(Ordering::Relaxed),
        }
    }

    /// Sets `maxmemory-policy`.
    pub fn set_maxmemory_policy(&self, policy: Policy) {
        self.maxmemory_policy
            .store(policy as u32, Ordering::Relaxed);
    }

    /// Sets `maxmemory-samples`, clamped to [`MAXMEMORY_SAMPLES_RANGE`] (the server validates
    /// first and reports Redis's error).
    pub fn set_maxmemory_samples(&self, n: u32) {
        let (min, max) = (
            MAXMEMORY_SAMPLES_RANGE.start(),
            MAXMEMORY_SAMPLES_RANGE.end(),
        );
        self.maxmemory_samples
            .store(n.clamp(*min, *max), Ordering::Relaxed);
    }

    /// Sets `maxmemory-eviction-tenacity`, at most 100.
    pub fn set_eviction_tenacity(&self, n: u32) {
        self.eviction_tenacity.store(n.min(100), Ordering::Relaxed);
    }

    /// Sets `lfu-log-factor`.
    pub fn set_lfu_log_factor(&self, n: u32) {
        self.lfu_log_factor.store(n, Ordering::Relaxed);
    }

    /// Sets `lfu-decay-time` (minutes).
    pub fn set_lfu_decay_time(&self, n: u32) {
        self.lfu_decay_time.store(n, Ordering::Relaxed);
    }
}

/// `maxmemory-samples` default: keys sampled per eviction pool refill.
pub const MAXMEMORY_SAMPLES_DEFAULT: u32 = 5;
/// `maxmemory-samples` range (Redis: 1..=64).
pub const MAXMEMORY_SAMPLES_RANGE: std::ops::RangeInclusive<u32> = 1..=64;
/// `maxmemory-eviction-tenacity` default.
pub const EVICTION_TENACITY_DEFAULT: u32 = 10;
/// `lfu-log-factor` default.
pub const LFU_LOG_FACTOR_DEFAULT: u32 = 10;
/// `lfu-decay-time` default (minutes).
pub const LFU_DECAY_TIME_DEFAULT: u32 = 1;

/// A `maxmemory-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `volatile-lru`.
    VolatileLru,
    /// `volatile-lfu`.
    VolatileLfu,
    /// `volatile-random`.
    VolatileRandom,
    /// `volatile-ttl`.
    VolatileTtl,
    /// `volatile-lrm` (least recently modified).
    VolatileLrm,
    /// `allkeys-lru`.
    AllkeysLru,
    /// `allkeys-lfu`.
    AllkeysLfu,
    /// `allkeys-random`.
    AllkeysRandom,
    /// `allkeys-lrm`.
    AllkeysLrm,
    /// `noeviction`.
    NoEviction,
}

impl Policy {
    /// Every policy, in Redis's order (its CONFIG SET error lists them so).
    pub const ALL: [Policy; 10] = [
        Policy::VolatileLru,
        Policy::VolatileLfu,
        Policy::VolatileRandom,
        Policy::VolatileTtl,
        Policy::VolatileLrm,
        Policy::AllkeysLru,
        Policy::AllkeysLfu,
        Policy::AllkeysRandom,
        Policy::AllkeysLrm,
        Policy::NoEviction,
    ];

    /// Redis's name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::VolatileLru => "volatile-lru",
            Policy::VolatileLfu => "volatile-lfu",
            Policy::VolatileRandom => "volatile-random",
            Policy::VolatileTtl => "volatile-ttl",
            Policy::VolatileLrm => "volatile-lrm",
            Policy::AllkeysLru => "allkeys-lru",
            Policy::AllkeysLfu => "allkeys-lfu",
            Policy::AllkeysRandom => "allkeys-random",
            Policy::AllkeysLrm => "allkeys-lrm",
            Policy::NoEviction => "noeviction",
        }
    }

    /// The policy named `name` (any case).
    pub fn parse(name: &str) -> Option<Policy> {
        Policy::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// Whether it samples every key (`allkeys-*`) rather than the keys with a TTL.
    pub fn all_keys(self) -> bool {
        matches!(
            self,
            Policy::AllkeysLru | Policy::AllkeysLfu | Policy::AllkeysRandom | Policy::AllkeysLrm
        )
    }

    /// What keys' access metadata tracks under this policy.
    pub fn access_mode(self) -> AccessMode {
        match self {
            Policy::VolatileLfu | Policy::AllkeysLfu => AccessMode::Lfu,
            Policy::VolatileLrm | Policy::AllkeysLrm => AccessMode::Lrm,
            _ => AccessMode::Lru,
        }
    }
}

/// The eviction settings of one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eviction {
    /// `maxmemory-policy`.
    pub policy: Policy,
    /// `maxmemory-samples`.
    pub samples: u32,
    /// `maxmemory-eviction-tenacity`.
    pub tenacity: u32,
    /// `lfu-log-factor`.
    pub lfu_log_factor: u32,
    /// `lfu-decay-time`.
    pub lfu_decay_time: u32,
}

impl Eviction {
    /// How the access metadata moves under these settings.
    pub fn access(&self) -> Access {
        Access {
            mode: self.policy.access_mode(),
            lfu_log_factor: self.lfu_log_factor,
            lfu_decay_time: self.lfu_decay_time,
        }
    }

    /// The time one command may spend evicting (Redis's `evictionTimeLimitUs`): 50 µs per
    /// step up to tenacity 10, then 15% more per step (about 2 minutes at 99), no limit at
    /// 100.
    pub fn time_limit(&self) -> Option<std::time::Duration> {
        let t = self.tenacity.min(100);
        let us = match t {
            0..=10 => 50 * u64::from(t),
            100 => return None,
            _ => (500.0 * 1.15f64.powi(t as i32 - 10)) as u64,
        };
        Some(std::time::Duration::from_micros(us))
    }
}

/// The thresholds at which Redis 8.8 converts a hash, set or sorted set from its compact
/// encoding (listpack, intset) to its general one, as CONFIG sets them: each
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
        }
    }
}

/// The encoding thresholds one command sees: a copy of [`EncodingConfig`] taken into its
/// [`crate::keyspace::Snapshot`], so a CONFIG SET takes effect from the next command on, as in
/// Redis. The default is Redis 8.8's defaults (what a load with no server uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// `hash-max-listpack-entries`.
    pub hash_entries: usize,
    /// `hash-max-listpack-value`.
    pub hash_value: usize,
    /// `set-max-intset-entries`.
    pub set_intset_entries: usize,
    /// `set-max-listpack-entries`.
    pub set_entries: usize,
    /// `set-max-listpack-value`.
    pub set_value: usize,
    /// `zset-max-listpack-entries`.
    pub zset_entries: usize,
    /// `zset-max-listpack-value`.
    pub zset_value: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        EncodingConfig::default().thresholds()
    }
}

/// A copy of every [`EncodingConfig`] value at once (to restore them when a CONFIG SET of
/// several parameters fails half-way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodingLimits([u64; 7]);

impl EncodingConfig {
    fn all(&self) -> [&AtomicU64; 7] {
        [
            &self.hash_max_listpack_entries,
            &self.hash_max_listpack_value,
            &self.set_max_intset_entries,
            &self.set_max_listpack_entries,
            &self.set_max_listpack_value,
            &self.zset_max_listpack_entries,
            &self.zset_max_listpack_value,
        ]
    }

    /// The thresholds now, as commands read them.
    pub fn thresholds(&self) -> Thresholds {
        let [he, hv, si, se, sv, ze, zv] = self
            .all()
            .map(|a| usize::try_from(a.load(Ordering::Relaxed)).unwrap_or(usize::MAX));
        Thresholds {
            hash_entries: he,
            hash_value: hv,
            set_intset_entries: si,
            set_entries: se,
            set_value: sv,
            zset_entries: ze,
            zset_value: zv,
        }
    }

    /// Every value now.
    pub fn limits(&self) -> EncodingLimits {
        EncodingLimits(self.all().map(|a| a.load(Ordering::Relaxed)))
    }

    /// Puts back values taken by [`EncodingConfig::limits`].
    pub fn restore(&self, limits: EncodingLimits) {
        for (to, from) in self.all().into_iter().zip(limits.0) {
            to.store(from, Ordering::Relaxed);
        }
    }
}

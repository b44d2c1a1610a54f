//! The settings every call reads, mirrored in atomics.
//!
//! [`super::Settings`] sits behind a read-write lock; a read lock taken on every call by every
//! connection's thread makes them all write the lock's one cache line. The few values the
//! request path reads per call (the slow log's threshold and length, `maxmemory`,
//! `cluster-enabled`, `proto-max-bulk-len`) are copied here whenever the settings change. Invariant: every change
//! of the settings ends with [`HotSettings::refresh`] while the write lock is still held, so a
//! reader sees either the old or the new value of each, as with the lock.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use super::Settings;

/// The per-call settings (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct HotSettings {
    slowlog_log_slower_than: AtomicI64,
    slowlog_max_len: AtomicU64,
    maxmemory: AtomicU64,
    cluster_enabled: AtomicBool,
    proto_max_bulk_len: AtomicU64,
}

impl HotSettings {
    /// A mirror of `settings`.
    pub fn new(settings: &Settings) -> HotSettings {
        let hot = HotSettings::default();
        hot.refresh(settings);
        hot
    }

    /// Copies the mirrored values from `settings`.
    pub fn refresh(&self, settings: &Settings) {
        self.slowlog_log_slower_than
            .store(settings.slowlog_log_slower_than, Ordering::Relaxed);
        self.slowlog_max_len
            .store(settings.slowlog_max_len, Ordering::Relaxed);
        self.maxmemory.store(settings.maxmemory, Ordering::Relaxed);
        self.cluster_enabled
            .store(settings.cluster_enabled, Ordering::Relaxed);
        self.proto_max_bulk_len
            .store(settings.proto_max_bulk_len, Ordering::Relaxed);
    }

    /// `proto-max-bulk-len`.
    pub fn proto_max_bulk_len(&self) -> u64 {
        self.proto_max_bulk_len.load(Ordering::Relaxed)
    }

    /// `slowlog-log-slower-than` and `slowlog-max-len`.
    pub fn slowlog(&self) -> (i64, u64) {
        (
            self.slowlog_log_slower_than.load(Ordering::Relaxed),
            self.slowlog_max_len.load(Ordering::Relaxed),
        )
    }

    /// `maxmemory` (0: no limit).
    pub fn maxmemory(&self) -> u64 {
        self.maxmemory.load(Ordering::Relaxed)
    }

    /// `cluster-enabled`.
    pub fn cluster_enabled(&self) -> bool {
        self.cluster_enabled.load(Ordering::Relaxed)
    }
}

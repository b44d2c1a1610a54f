//! The settings every call reads, mirrored in atomics.
//!
//! [`super::Settings`] sits behind a read-write lock; a read lock taken on every call by every
//! connection's thread makes them all write the lock's one cache line. The few values the
//! request path reads per call (the slow log's threshold and length, `maxmemory`,
//! `cluster-enabled`; per batch of requests `proto-max-bulk-len`, the query buffer limit
//! and `timeout`; per AOF commit the automatic rewrite's thresholds; per write to a client its output
//! buffer limit, also read by publishes under the keyspace lock; whenever a client's memory
//! grows the clients' eviction limit, `maxmemory-clients` under `maxmemory`) are copied here
//! whenever the settings change. Invariant: every change
//! of the settings ends with [`HotSettings::refresh`] while the write lock is still held, so a
//! reader sees either the old or the new value of each, as with the lock.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering, fence};

use super::Settings;
use super::output_limit::ClassLimit;

/// The per-call settings (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct HotSettings {
    slowlog_log_slower_than: AtomicI64,
    slowlog_max_len: AtomicU64,
    maxmemory: AtomicU64,
    /// `maxmemory-clients` in bytes under `maxmemory` (0: none), read when a client's memory
    /// grows.
    client_eviction_limit: AtomicU64,
    cluster_enabled: AtomicBool,
    proto_max_bulk_len: AtomicU64,
    client_query_buffer_limit: AtomicU64,
    timeout_s: AtomicU64,
    auto_aof_rewrite_percentage: AtomicU64,
    auto_aof_rewrite_min_size: AtomicU64,
    /// Read by the tracking table under the keyspace lock.
    tracking_table_max_keys: AtomicU64,
    /// `client-output-buffer-limit`'s normal and pubsub classes (hard, soft, soft seconds),
    /// read on every write to a client; a class is three values, read consistently through
    /// `output_limits_seq` (odd while a change is being stored).
    output_limits: [[AtomicU64; 3]; 2],
    output_limits_seq: AtomicU64,
    /// `busy-reply-threshold`, read by every script run.
    busy_reply_threshold_ms: AtomicU64,
}

impl HotSettings {
    /// A mirror of `settings`.
    pub fn new(settings: &Settings) -> HotSettings {
        let hot = HotSettings::default();
        hot.refresh(settings);
        hot
    }

    /// `busy-reply-threshold` in milliseconds (0: never busy).
    pub fn busy_reply_threshold_ms(&self) -> u64 {
        self.busy_reply_threshold_ms.load(Ordering::Relaxed)
    }

    /// Copies the mirrored values from `settings`.
    pub fn refresh(&self, s: &Settings) {
        let relaxed = Ordering::Relaxed;
        self.slowlog_log_slower_than
            .store(s.slowlog_log_slower_than, relaxed);
        self.slowlog_max_len.store(s.slowlog_max_len, relaxed);
        self.maxmemory.store(s.maxmemory, relaxed);
        self.client_eviction_limit
            .store(s.maxmemory_clients.limit(s.maxmemory), relaxed);
        self.cluster_enabled.store(s.cluster_enabled, relaxed);
        self.proto_max_bulk_len.store(s.proto_max_bulk_len, relaxed);
        self.client_query_buffer_limit
            .store(s.client_query_buffer_limit, relaxed);
        self.timeout_s.store(s.timeout_s, relaxed);
        self.busy_reply_threshold_ms
            .store(s.busy_reply_threshold_ms, relaxed);
        self.auto_aof_rewrite_percentage
            .store(s.auto_aof_rewrite_percentage, relaxed);
        self.auto_aof_rewrite_min_size
            .store(s.auto_aof_rewrite_min_size, relaxed);
        self.tracking_table_max_keys
            .store(s.tracking_table_max_keys, relaxed);
        // A seqlock's write (changes are serialised by the settings' write lock).
        let seq = self.output_limits_seq.load(relaxed);
        self.output_limits_seq.store(seq.wrapping_add(1), relaxed);
        fence(Ordering::Release);
        let classes = [
            s.client_output_buffer_limit.normal,
            s.client_output_buffer_limit.pubsub,
        ];
        for (to, class) in self.output_limits.iter().zip(classes) {
            to[0].store(class.hard, relaxed);
            to[1].store(class.soft, relaxed);
            to[2].store(class.soft_seconds, relaxed);
        }
        self.output_limits_seq
            .store(seq.wrapping_add(2), Ordering::Release);
    }

    /// `tracking-table-max-keys`.
    pub fn tracking_table_max_keys(&self) -> u64 {
        self.tracking_table_max_keys.load(Ordering::Relaxed)
    }

    /// `client-output-buffer-limit` of the normal class, or of the pubsub class when
    /// `pubsub`: one change's three values, never a mix of two changes.
    pub fn output_limit(&self, pubsub: bool) -> ClassLimit {
        let class = &self.output_limits[usize::from(pubsub)];
        loop {
            let before = self.output_limits_seq.load(Ordering::Acquire);
            let limit = ClassLimit {
                hard: class[0].load(Ordering::Relaxed),
                soft: class[1].load(Ordering::Relaxed),
                soft_seconds: class[2].load(Ordering::Relaxed),
            };
            fence(Ordering::Acquire);
            if before % 2 == 0 && self.output_limits_seq.load(Ordering::Relaxed) == before {
                return limit;
            }
            std::hint::spin_loop();
        }
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

    /// The clients' eviction limit in bytes (0: none).
    pub fn client_eviction_limit(&self) -> u64 {
        self.client_eviction_limit.load(Ordering::Relaxed)
    }

    /// `cluster-enabled`.
    pub fn cluster_enabled(&self) -> bool {
        self.cluster_enabled.load(Ordering::Relaxed)
    }

    /// `proto-max-bulk-len`.
    pub fn proto_max_bulk_len(&self) -> u64 {
        self.proto_max_bulk_len.load(Ordering::Relaxed)
    }

    /// `client-query-buffer-limit` and `timeout` (seconds; 0: never).
    pub fn connection_limits(&self) -> (u64, u64) {
        (
            self.client_query_buffer_limit.load(Ordering::Relaxed),
            self.timeout_s.load(Ordering::Relaxed),
        )
    }

    /// `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size`.
    pub fn auto_aof_rewrite(&self) -> (u64, u64) {
        (
            self.auto_aof_rewrite_percentage.load(Ordering::Relaxed),
            self.auto_aof_rewrite_min_size.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_limits_follow_the_settings_by_class() {
        let follows = |hot: &HotSettings, settings: &Settings| {
            let limits = &settings.client_output_buffer_limit;
            assert_eq!(hot.output_limit(false), limits.normal);
            assert_eq!(hot.output_limit(true), limits.pubsub);
        };
        let mut settings = Settings::default();
        let hot = HotSettings::new(&settings);
        follows(&hot, &settings);
        settings.client_output_buffer_limit.normal = ClassLimit {
            hard: 10,
            soft: 5,
            soft_seconds: 2,
        };
        hot.refresh(&settings);
        follows(&hot, &settings);
    }
}

//! Per-key access metadata, Redis's `lru` field of an object: 24 bits that hold either
//!
//! - under an LRU or LRM policy (and `noeviction`, `*-random`, `volatile-ttl`), the LRU clock
//!   of the last access (LRM: of the last write): Unix seconds modulo 2^24 (Redis's
//!   `LRU_CLOCK`, resolution 1000 ms), which wraps every 194 days, or
//! - under an LFU policy, the last decrement time in minutes modulo 2^16 (high 16 bits) and a
//!   logarithmic access counter (low 8 bits) that starts at [`LFU_INIT_VAL`], grows with
//!   probability `1 / ((counter - 5) * lfu-log-factor + 1)` per access and loses one per
//!   `lfu-decay-time` minutes without access.
//!
//! Switching policy at run time reinterprets the field, as in Redis. All times come from the
//! running command's snapshot of the keyspace's injected clock.
//!
//! While a forked child saves the process's memory (BGSAVE, BGREWRITEAOF), lookups leave the
//! field alone, as Redis's `lookupKey` does with a child active: each update would write a
//! page the child shares, and copy it. The count of such children is process-wide, as a
//! fork's copy is ([`child_started`], [`child_ended`]).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The LRU clock's range.
pub const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;
/// Milliseconds per LRU clock tick.
pub const LRU_CLOCK_RESOLUTION_MS: u64 = 1000;
/// A new key's LFU counter (so a new key is not evicted before it had a chance to be read).
pub const LFU_INIT_VAL: u32 = 5;

/// What the metadata means and how it moves, from the settings of the running command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Kind of tracking.
    pub mode: AccessMode,
    /// `lfu-log-factor`.
    pub lfu_log_factor: u32,
    /// `lfu-decay-time` (minutes; 0 = never decay).
    pub lfu_decay_time: u32,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            mode: AccessMode::Lru,
            lfu_log_factor: 10,
            lfu_decay_time: 1,
        }
    }
}

/// What a key's metadata tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessMode {
    /// Time of the last access (every policy but the LFU and LRM ones).
    Lru,
    /// Time of the last modification (`*-lrm`): reads do not move it.
    Lrm,
    /// Logarithmic access frequency (`*-lfu`).
    Lfu,
}

/// Forked children of this process that are saving its memory.
static SAVING_CHILDREN: AtomicUsize = AtomicUsize::new(0);

/// A forked child now shares this process's pages: lookups stop recording accesses until it
/// ends ([`child_ended`]).
pub fn child_started() {
    SAVING_CHILDREN.fetch_add(1, Ordering::Relaxed);
}

/// A child [`child_started`] announced has ended.
pub fn child_ended() {
    // Never below zero, whatever a caller does twice.
    let _ =
        SAVING_CHILDREN.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
}

/// Whether a forked child is saving (Redis's `hasActiveChildProcess`).
pub fn child_active() -> bool {
    SAVING_CHILDREN.load(Ordering::Relaxed) != 0
}

/// The LRU clock at `now_ms`.
pub fn lru_clock(now_ms: u64) -> u32 {
    ((now_ms / LRU_CLOCK_RESOLUTION_MS) & u64::from(LRU_CLOCK_MAX)) as u32
}

/// Minutes modulo 2^16 at `now_ms` (Redis's `LFUGetTimeInMinutes`).
pub fn lfu_minutes(now_ms: u64) -> u32 {
    ((now_ms / 1000 / 60) & 0xFFFF) as u32
}

/// Milliseconds since the LRU clock `lru`, as Redis estimates them (one wrap at most).
pub fn idle_ms(lru: u32, now_ms: u64) -> u64 {
    let now = lru_clock(now_ms);
    let lru = lru & LRU_CLOCK_MAX;
    let ticks = if now >= lru {
        now - lru
    } else {
        now + (LRU_CLOCK_MAX - lru)
    };
    u64::from(ticks) * LRU_CLOCK_RESOLUTION_MS
}

/// The LFU counter of `meta` after the decay due at `now_ms` (Redis's `LFUDecrAndReturn`;
/// the field itself is not changed).
pub fn lfu_decayed(meta: u32, now_ms: u64, decay_time: u32) -> u32 {
    let ldt = (meta >> 8) & 0xFFFF;
    let counter = meta & 0xFF;
    let now = lfu_minutes(now_ms);
    let elapsed = if now >= ldt {
        now - ldt
    } else {
        65535 - ldt + now
    };
    let periods = elapsed.checked_div(decay_time).unwrap_or(0);
    counter.saturating_sub(periods)
}

/// The counter after one access, drawn with `random` (a uniform value in `0.0..=1.0`) as
/// Redis's `LFULogIncr`.
pub fn lfu_log_incr(counter: u32, random: f64, log_factor: u32) -> u32 {
    if counter >= 255 {
        return 255;
    }
    let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
    let p = 1.0 / (base * f64::from(log_factor) + 1.0);
    if random < p { counter + 1 } else { counter }
}

/// LFU metadata: decay time `now_ms` and `counter`.
pub fn lfu_meta(now_ms: u64, counter: u32) -> u32 {
    (lfu_minutes(now_ms) << 8) | (counter & 0xFF)
}

impl Access {
    /// Metadata of a new key at `now_ms`.
    pub fn new_meta(&self, now_ms: u64) -> u32 {
        match self.mode {
            AccessMode::Lfu => lfu_meta(now_ms, LFU_INIT_VAL),
            AccessMode::Lru | AccessMode::Lrm => lru_clock(now_ms),
        }
    }

    /// `meta` after a read or write lookup at `now_ms` (Redis's `lookupKey`): LFU decays then
    /// counts the access, LRU takes the clock, LRM is unchanged (only writes move it).
    pub fn accessed(&self, meta: u32, now_ms: u64, random: f64) -> u32 {
        match self.mode {
            AccessMode::Lfu => {
                let counter = lfu_decayed(meta, now_ms, self.lfu_decay_time);
                lfu_meta(now_ms, lfu_log_incr(counter, random, self.lfu_log_factor))
            }
            AccessMode::Lru => lru_clock(now_ms),
            AccessMode::Lrm => meta,
        }
    }

    /// The eviction score of `meta` (higher evicts first): idle ms (LRU, LRM) or `255 -`
    /// the decayed frequency (LFU), as Redis's `evictionPoolPopulate`.
    pub fn score(&self, meta: u32, now_ms: u64) -> u64 {
        match self.mode {
            AccessMode::Lfu => 255 - u64::from(lfu_decayed(meta, now_ms, self.lfu_decay_time)),
            AccessMode::Lru | AccessMode::Lrm => idle_ms(meta, now_ms),
        }
    }

    /// Metadata RESTORE sets from `IDLETIME seconds` or `FREQ f` (Redis's
    /// `objectSetLRUOrLFU`): FREQ under LFU, IDLETIME otherwise; `None` if the option given
    /// does not apply.
    pub fn restored(&self, idle_s: Option<u64>, freq: Option<u8>, now_ms: u64) -> Option<u32> {
        match self.mode {
            AccessMode::Lfu => freq.map(|f| lfu_meta(now_ms, u32::from(f))),
            AccessMode::Lru | AccessMode::Lrm => idle_s.map(|idle| {
                let clock = i64::from(lru_clock(now_ms));
                let ticks = i64::try_from(idle).unwrap_or(i64::MAX);
                let mut abs = clock.saturating_sub(ticks);
                if abs < 0 {
                    // Under a wrapped clock the access time is near the top of the range;
                    // `idle_ms` unwraps it (Redis adds the range once, never more).
                    abs = abs.saturating_add(i64::from(LRU_CLOCK_MAX));
                }
                (abs.max(0) as u64 & u64::from(LRU_CLOCK_MAX)) as u32
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_time_counts_whole_seconds_and_unwraps_once() {
        assert_eq!(idle_ms(lru_clock(10_500), 13_999), 3000);
        let near_top = LRU_CLOCK_MAX - 1;
        // The clock wrapped: now is 5 ticks after zero.
        assert_eq!(idle_ms(near_top, 5_000), 6000);
    }

    #[test]
    fn lfu_counter_decays_one_per_period_and_never_below_zero() {
        let meta = lfu_meta(0, 10);
        assert_eq!(lfu_decayed(meta, 59_999, 1), 10);
        assert_eq!(lfu_decayed(meta, 3 * 60_000, 1), 7);
        assert_eq!(lfu_decayed(meta, 3 * 60_000, 2), 9);
        assert_eq!(lfu_decayed(meta, 3 * 60_000, 0), 10);
        assert_eq!(lfu_decayed(meta, 100 * 60_000, 1), 0);
    }

    #[test]
    fn lfu_increment_is_certain_below_init_and_saturates() {
        assert_eq!(lfu_log_incr(3, 0.999, 10), 4);
        assert_eq!(lfu_log_incr(5, 0.999, 10), 6);
        assert_eq!(lfu_log_incr(255, 0.0, 10), 255);
        // At 15 with factor 10, p = 1/101.
        assert_eq!(lfu_log_incr(15, 0.5, 10), 15);
        assert_eq!(lfu_log_incr(15, 0.001, 10), 16);
    }

    #[test]
    fn restore_sets_the_field_the_policy_reads() {
        let lru = Access::default();
        let meta = lru.restored(Some(100), None, 1_000_000).unwrap();
        assert_eq!(idle_ms(meta, 1_000_000), 100_000);
        assert_eq!(lru.restored(None, Some(3), 0), None);
        let lfu = Access {
            mode: AccessMode::Lfu,
            ..Access::default()
        };
        assert_eq!(
            lfu_decayed(lfu.restored(None, Some(42), 0).unwrap(), 0, 1),
            42
        );
        assert_eq!(lfu.restored(Some(5), None, 0), None);
    }
}

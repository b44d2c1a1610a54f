//! The monotonic clock in plain nanoseconds, for durations: timing calls (INFO commandstats,
//! latency histograms, SLOWLOG) and a client's age and idle time (CLIENT LIST), which must not
//! jump with the wall clock. Times of day are the keyspace's clock (`echomq_engine::Clock`).
//!
//! `Instant` differences go through a seconds-and-nanoseconds subtraction with checks on
//! every call; a call timed twice per request wants a `u64` and a subtraction. Invariant:
//! readings never decrease within a process (CLOCK_MONOTONIC, or `Instant` elsewhere).

/// Nanoseconds on the monotonic clock since an arbitrary fixed point.
#[cfg(unix)]
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(t.tv_nsec as u64)
}

/// Nanoseconds on the monotonic clock since an arbitrary fixed point.
#[cfg(not(unix))]
pub(crate) fn now_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn readings_never_go_back_and_follow_real_time() {
        let start = super::now_ns();
        let instant = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let end = super::now_ns();
        let elapsed = instant.elapsed().as_nanos() as u64;
        assert!(end >= start + 5_000_000, "{start} -> {end}");
        assert!(
            end - start <= elapsed + 5_000_000,
            "{} vs {elapsed}",
            end - start
        );
    }
}

//! A monotonic clock in plain nanoseconds, for timing calls (INFO commandstats, latency
//! histograms, SLOWLOG).
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

/// The wall clock of [`echomq_engine::SystemClock`] (CLOCK_REALTIME in milliseconds, 0 before
/// 1970), read without `SystemTime`'s checked subtraction and 128-bit division: the server
/// reads it for every command's time snapshot.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WallClock;

impl echomq_engine::Clock for WallClock {
    #[cfg(unix)]
    fn now_ms(&self) -> u64 {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        match u64::try_from(t.tv_sec) {
            Ok(secs) => secs * 1000 + t.tv_nsec as u64 / 1_000_000,
            Err(_) => 0,
        }
    }

    #[cfg(not(unix))]
    fn now_ms(&self) -> u64 {
        echomq_engine::SystemClock.now_ms()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_wall_clock_reads_as_the_system_clock() {
        use echomq_engine::Clock;
        let before = echomq_engine::SystemClock.now_ms();
        let ours = super::WallClock.now_ms();
        let after = echomq_engine::SystemClock.now_ms();
        assert!(before <= ours && ours <= after, "{before} {ours} {after}");
    }

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

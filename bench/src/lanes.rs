//! Running one piece of work per queue at the same time (`--queues N`), each on its own handle
//! on the target and its own thread, and the aggregate rate of a round.
//!
//! The threads start together (a barrier, so thread start-up is not timed) and each times its
//! own work; a round's aggregate rate is all the entries over the time from the first start
//! to the last end. With one queue the work runs on the calling thread, as before `--queues`.

use std::sync::Barrier;
use std::time::Instant;

use super::error::BenchError;
use super::target::Target;

/// When one lane's work ran.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Its start, after the barrier.
    pub start: Instant,
    /// Its end.
    pub end: Instant,
}

impl Span {
    /// The span's length in microseconds.
    pub fn us(&self) -> f64 {
        self.end.duration_since(self.start).as_secs_f64() * 1e6
    }
}

/// Runs `f(lane, work)` for every lane with its work item at once; returns each lane's span
/// and result in lane order, or the first lane's error.
pub fn run<W, R, F>(lanes: &mut [Target], work: Vec<W>, f: F) -> Result<Vec<(Span, R)>, BenchError>
where
    W: Send,
    R: Send,
    F: Fn(&mut Target, W) -> Result<R, BenchError> + Sync,
{
    let timed = |lane: &mut Target, w: W| {
        let start = Instant::now();
        let r = f(lane, w)?;
        Ok((
            Span {
                start,
                end: Instant::now(),
            },
            r,
        ))
    };
    if lanes.len() == 1 {
        return lanes
            .iter_mut()
            .zip(work)
            .map(|(lane, w)| timed(lane, w))
            .collect();
    }
    let barrier = Barrier::new(lanes.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = lanes
            .iter_mut()
            .zip(work)
            .map(|(lane, w)| {
                let (barrier, timed) = (&barrier, &timed);
                scope.spawn(move || {
                    barrier.wait();
                    timed(lane, w)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(BenchError::Server {
                        target: "bench".to_string(),
                        message: "a queue's thread panicked".to_string(),
                    })
                })
            })
            .collect()
    })
}

/// `entries` over the time from the first span's start to the last one's end, per second.
pub fn aggregate_per_s(spans: &[Span], entries: u64) -> f64 {
    let (Some(start), Some(end)) = (
        spans.iter().map(|s| s.start).min(),
        spans.iter().map(|s| s.end).max(),
    ) else {
        return 0.0;
    };
    entries as f64 / end.duration_since(start).as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_aggregate_spans_from_first_start_to_last_end() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let spans = [
            Span {
                start: at(0),
                end: at(500),
            },
            Span {
                start: at(100),
                end: at(1000),
            },
        ];
        assert!((aggregate_per_s(&spans, 3000) - 3000.0).abs() < 1e-6);
        assert!((spans[0].us() - 500_000.0).abs() < 1e-3);
        assert_eq!(aggregate_per_s(&[], 10), 0.0);
    }
}

//! Window reads: `Feed::read_window` of 1 s, 1 min and 5 min, at the tail of the stream and
//! in its middle (queue 0), timed one call at a time, the targets taking turns read by read.

use std::time::Instant;

use super::cleanup;
use super::error::BenchError;
use super::results::{WindowRow, quantile};
use super::stage::Stage;
use super::timeline::instant;

/// The spans read, with their labels.
pub const SPANS: [(&str, u64); 3] = [("1s", 1000), ("1min", 60_000), ("5min", 300_000)];
/// Where in the stream the window lies.
pub const POSITIONS: [&str; 2] = ["tail", "middle"];

/// The window's first and last instant (ms) for target `t`.
fn bounds(stage: &Stage<'_>, t: usize, span_ms: u64, position: &str) -> (u64, u64) {
    let tl = &stage.timeline;
    if position == "tail" {
        let t1 = tl.ms(stage.hi[t][0] - 1);
        (t1.saturating_sub(span_ms - 1), t1)
    } else {
        let middle = stage.lo[t][0] + stage.len(t, 0) / 2;
        let t0 = tl.ms(middle).saturating_sub(span_ms / 2);
        (t0, t0 + span_ms - 1)
    }
}

/// Measures every span and position.
pub fn measure(stage: &mut Stage<'_>, rows: &mut Vec<WindowRow>) -> Result<(), BenchError> {
    let n = stage.targets.len();
    for (span, span_ms) in SPANS {
        for position in POSITIONS {
            let windows: Vec<_> = (0..n)
                .map(|t| {
                    let (t0, t1) = bounds(stage, t, span_ms, position);
                    let queue = stage.queue(t, 0).to_string();
                    (queue, stage.name(t), instant(t0), instant(t1))
                })
                .collect();
            // One untimed read each: warms caches and tells how many entries a read returns.
            let mut read = vec![0u64; n];
            for (t, (queue, name, t0, t1)) in windows.iter().enumerate() {
                read[t] = stage.targets[t].read_window(queue, name, *t0, *t1)? as u64;
            }
            let mut samples = vec![Vec::with_capacity(stage.args.samples as usize); n];
            for _ in 0..stage.args.samples {
                cleanup::check()?;
                for (t, (queue, name, t0, t1)) in windows.iter().enumerate() {
                    let started = Instant::now();
                    let got = stage.targets[t].read_window(queue, name, *t0, *t1)?;
                    samples[t].push(started.elapsed().as_secs_f64() * 1e6);
                    std::hint::black_box(got);
                }
            }
            for (t, s) in samples.iter_mut().enumerate() {
                let p50 = quantile(s, 0.5);
                rows.push(WindowRow {
                    target: stage.targets[t].label(),
                    entries: stage.entries,
                    span: span.to_string(),
                    position: position.to_string(),
                    read_entries: read[t],
                    p50_us: p50,
                    p99_us: quantile(s, 0.99),
                    entries_per_s: read[t] as f64 / (p50 / 1e6),
                });
            }
        }
    }
    Ok(())
}

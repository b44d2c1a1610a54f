//! Appends: one `XADD` per round trip with an explicit id and the branded `id` field (what
//! `Feed::append` sends), plain and with `MAXLEN ~ <size>` on every append so the stream stays
//! at its size and each append may free a node. Targets take turns every [`CHUNK_OPS`] appends;
//! the figure is the median over chunks, so a chunk slowed by another process on the machine
//! does not move it.

use std::time::Instant;

use super::cleanup;
use super::error::BenchError;
use super::results::{AppendRow, quantile};
use super::stage::Stage;
use super::target::Argv;

/// Appends per turn: long enough to dwarf the timer, short enough that the targets interleave
/// many times per case.
pub const CHUNK_OPS: u64 = 500;
/// The modes, as labelled in tables.
pub const MODES: [&str; 2] = ["plain", "maxlen~"];

/// Measures both modes.
pub fn measure(stage: &mut Stage<'_>, rows: &mut Vec<AppendRow>) -> Result<(), BenchError> {
    let n = stage.targets.len();
    for mode in MODES {
        let maxlen = (mode == "maxlen~").then_some(stage.entries);
        // Microseconds per append of every chunk.
        let mut chunks: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut done = vec![0u64; n];
        while done.iter().any(|&d| d < stage.args.ops) {
            for t in 0..n {
                cleanup::check()?;
                let count = CHUNK_OPS.min(stage.args.ops - done[t]);
                if count == 0 {
                    continue;
                }
                let key = stage.key(t);
                let commands: Vec<Argv> = (stage.hi[t]..stage.hi[t] + count)
                    .map(|i| stage.payload.xadd(&key, &stage.timeline, i, maxlen))
                    .collect();
                let target = &mut stage.targets[t];
                let started = Instant::now();
                for argv in &commands {
                    target.run(argv)?;
                }
                chunks[t].push(started.elapsed().as_secs_f64() * 1e6 / count as f64);
                stage.hi[t] += count;
                done[t] += count;
            }
        }
        for t in 0..n {
            stage.resync(t)?;
            let us_per_op = quantile(&mut chunks[t], 0.5);
            rows.push(AppendRow {
                target: stage.targets[t].label(),
                entries: stage.entries,
                mode: mode.to_string(),
                ops: done[t],
                ops_per_s: 1e6 / us_per_op,
                us_per_op,
            });
        }
    }
    Ok(())
}

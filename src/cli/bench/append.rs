//! Appends: one `XADD` per round trip with an explicit id and the branded `id` field (what
//! `Feed::append` sends), plain and with `MAXLEN ~ <size>` on every append so the stream stays
//! at its size and each append may free a node. Targets take turns every [`CHUNK_OPS`] appends.

use std::time::{Duration, Instant};

use super::cleanup;
use super::error::BenchError;
use super::results::AppendRow;
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
        let mut spent = vec![Duration::ZERO; n];
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
                spent[t] += started.elapsed();
                stage.hi[t] += count;
                done[t] += count;
            }
        }
        for t in 0..n {
            stage.resync(t)?;
            let seconds = spent[t].as_secs_f64();
            rows.push(AppendRow {
                target: stage.targets[t].label(),
                entries: stage.entries,
                mode: mode.to_string(),
                ops: done[t],
                ops_per_s: done[t] as f64 / seconds,
                us_per_op: seconds * 1e6 / done[t] as f64,
            });
        }
    }
    Ok(())
}

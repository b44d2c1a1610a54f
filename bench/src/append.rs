//! Appends: one `XADD` per round trip with an explicit id and the branded `id` field (what
//! `Feed::append` sends), plain and with `MAXLEN ~ <size>` on every append so the stream stays
//! at its size and each append may free a node. Targets take turns every [`CHUNK_OPS`] appends;
//! the figure is the median over chunks, so a chunk slowed by another process on the machine
//! does not move it.
//!
//! With `--queues N` every chunk runs in all N queues at once, one thread and connection each
//! (`lanes`): each queue's figure is the median over its chunks, the target's aggregate the
//! median over rounds of all the round's appends over its wall time.

use super::cleanup;
use super::error::BenchError;
use super::lanes::{self, Span};
use super::results::{AggregateRow, AppendRow, quantile};
use super::stage::Stage;
use super::target::Argv;

/// Appends per turn: long enough to dwarf the timer, short enough that the targets interleave
/// many times per case.
pub const CHUNK_OPS: u64 = 500;
/// The modes, as labelled in tables.
pub const MODES: [&str; 2] = ["plain", "maxlen~"];

/// Measures both modes.
pub fn measure(
    stage: &mut Stage<'_>,
    rows: &mut Vec<AppendRow>,
    totals: &mut Vec<AggregateRow>,
) -> Result<(), BenchError> {
    let n = stage.targets.len();
    let queues = stage.args.queues;
    for mode in MODES {
        let maxlen = (mode == "maxlen~").then_some(stage.entries);
        // Microseconds per append of every chunk, per target and queue.
        let mut chunks: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); queues]; n];
        // Appends per second of every round, all queues of a target together.
        let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut done = vec![0u64; n];
        while done.iter().any(|&d| d < stage.args.ops) {
            for t in 0..n {
                cleanup::check()?;
                let count = CHUNK_OPS.min(stage.args.ops - done[t]);
                if count == 0 {
                    continue;
                }
                let work: Vec<Vec<Argv>> = (0..queues)
                    .map(|q| {
                        let key = stage.key(t, q);
                        (stage.hi[t][q]..stage.hi[t][q] + count)
                            .map(|i| stage.payload.xadd(&key, &stage.timeline, i, maxlen))
                            .collect()
                    })
                    .collect();
                let ran = lanes::run(&mut stage.lanes[t], work, |lane, commands| {
                    for argv in &commands {
                        lane.run(argv)?;
                    }
                    Ok(())
                })?;
                let spans: Vec<Span> = ran.iter().map(|(span, ())| *span).collect();
                for (q, span) in spans.iter().enumerate() {
                    chunks[t][q].push(span.us() / count as f64);
                    stage.hi[t][q] += count;
                }
                rounds[t].push(lanes::aggregate_per_s(&spans, count * queues as u64));
                done[t] += count;
            }
        }
        for t in 0..n {
            for (q, chunks) in chunks[t].iter_mut().enumerate() {
                stage.resync(t, q)?;
                let us_per_op = quantile(chunks, 0.5);
                rows.push(AppendRow {
                    target: stage.targets[t].label(),
                    entries: stage.entries,
                    queue: q,
                    mode: mode.to_string(),
                    ops: done[t],
                    ops_per_s: 1e6 / us_per_op,
                    us_per_op,
                });
            }
            totals.push(AggregateRow {
                target: stage.targets[t].label(),
                entries: stage.entries,
                mode: mode.to_string(),
                queues,
                total: done[t] * queues as u64,
                entries_per_s: quantile(&mut rounds[t], 0.5),
            });
        }
    }
    Ok(())
}

//! Consuming: a consumer group created at the tail; each turn a producer appends a batch
//! (pipelined, untimed; plain or with `MAXLEN ~ <size>` on every append) and the consumer
//! takes it with `XREADGROUP GROUP g c COUNT <batch> STREAMS key >` and acknowledges it with
//! one `XACK` (timed). The figure is entries delivered and acknowledged per second of consumer
//! time, the median over turns. The commands go over our own connection (or `Keyspace::execute`), not through a
//! consumer runtime, so the figure is the commands' cost without a handler's.

use std::time::Instant;

use super::cleanup;
use super::error::BenchError;
use super::results::{ConsumeRow, quantile};
use super::stage::Stage;
use super::target::Argv;

/// The modes, as labelled in tables.
pub const MODES: [&str; 2] = ["plain", "maxlen~"];
/// How the figures are taken, for the report.
pub const METHOD: &str = "XREADGROUP COUNT <batch> + XACK on the bench's own connection \
     (Keyspace::execute in process); the producer's appends are not timed";

fn argv(parts: &[&[u8]]) -> Argv {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// Measures both modes.
pub fn measure(stage: &mut Stage<'_>, rows: &mut Vec<ConsumeRow>) -> Result<(), BenchError> {
    let n = stage.targets.len();
    let batch = stage.args.batch;
    let count = batch.to_string();
    for mode in MODES {
        let group = format!("bench-{mode}");
        // Never below one batch: `~` keeps at least `maxlen` entries, so the batch just
        // appended is never trimmed before the consumer reads it.
        let maxlen = (mode == "maxlen~").then_some(stage.entries.max(batch));
        for t in 0..n {
            let key = stage.key(t);
            stage.targets[t].run(&argv(&[
                b"XGROUP",
                b"CREATE",
                key.as_bytes(),
                group.as_bytes(),
                b"$",
            ]))?;
        }
        // Microseconds per entry of every turn.
        let mut turns: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut consumed = vec![0u64; n];
        while consumed.iter().any(|&c| c < stage.args.ops) {
            for t in 0..n {
                cleanup::check()?;
                if consumed[t] >= stage.args.ops {
                    continue;
                }
                let key = stage.key(t);
                let produce: Vec<Argv> = (stage.hi[t]..stage.hi[t] + batch)
                    .map(|i| stage.payload.xadd(&key, &stage.timeline, i, maxlen))
                    .collect();
                stage.targets[t].pipeline(&produce)?;
                stage.hi[t] += batch;
                let read = argv(&[
                    b"XREADGROUP",
                    b"GROUP",
                    group.as_bytes(),
                    b"c",
                    b"COUNT",
                    count.as_bytes(),
                    b"STREAMS",
                    key.as_bytes(),
                    b">",
                ]);
                let target = &mut stage.targets[t];
                let started = Instant::now();
                let ids = target.read_group_ids(&read)?;
                let mut ack = argv(&[b"XACK", key.as_bytes(), group.as_bytes()]);
                ack.extend(ids.iter().cloned());
                let acked = if ids.is_empty() { 0 } else { target.int(&ack)? };
                turns[t].push(started.elapsed().as_secs_f64() * 1e6 / batch as f64);
                if acked != ids.len() as i64 || ids.len() as u64 != batch {
                    return Err(BenchError::Server {
                        target: target.label(),
                        message: format!(
                            "the group got {} of {batch} new entries and acknowledged {acked}",
                            ids.len()
                        ),
                    });
                }
                consumed[t] += batch;
            }
        }
        for t in 0..n {
            stage.resync(t)?;
            let us_per_entry = quantile(&mut turns[t], 0.5);
            rows.push(ConsumeRow {
                target: stage.targets[t].label(),
                entries: stage.entries,
                mode: mode.to_string(),
                consumed: consumed[t],
                entries_per_s: 1e6 / us_per_entry,
                us_per_entry,
            });
        }
    }
    Ok(())
}

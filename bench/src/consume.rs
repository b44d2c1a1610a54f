//! Appending and consuming, end to end: one [`StreamConsumer`](echomq::feed::StreamConsumer)
//! per target (its group created at the tail, a no-op handler, `COUNT <batch>` reads), the
//! path applications use. Each turn a producer appends a batch atomically (one `MULTI`/`EXEC`
//! over RESP, one lock of the engine in process; plain or with `MAXLEN ~ <size>` on every
//! append), which wakes the consumer's blocked `XREADGROUP` once with the whole batch; the turn
//! is timed from the start of that append until the consumer's `acked` counter covers the
//! batch. The figure is entries appended, delivered and acknowledged per second, the median
//! over turns, with the median time until the append returned beside it; the targets take
//! turns batch by batch.
//!
//! Why the append is inside the timing: a blocked reader is served by the producer's own
//! command (the engine and Redis both build the blocked `XREADGROUP`'s reply right after the
//! write, before the writer's reply), and the consumer may finish before the producer's call
//! even returns, so no instant outside the runtime separates "appended" from "consumed".
//!
//! Invariant checked every turn: the consumer acknowledges exactly the entries appended, no
//! more, and none of them is malformed or fails.

use std::time::{Duration, Instant};

use echomq::feed::consumer::{BATCH_SIZE_MAX, ConsumerMetrics};
use echomq::feed::{ConsumerSettings, StreamConsumer, Subscription};

use super::cleanup;
use super::error::BenchError;
use super::results::{ConsumeRow, quantile};
use super::stage::Stage;
use super::target::Argv;

/// The modes, as labelled in tables.
pub const MODES: [&str; 2] = ["plain", "maxlen~"];
/// How the figures are taken, for the report.
pub const METHOD: &str = "append + consume end to end: a batch appended atomically (MULTI/EXEC, \
     or one engine lock), then a StreamConsumer with a no-op handler (XREADGROUP COUNT <batch> \
     BLOCK, one XACK per batch; in process, or its own connection) acks it; timed from the start \
     of the append to the ack of the whole batch";
/// The consumer's consumer name in every group.
const CONSUMER: &str = "bench";
/// How long a consumer's blocking read waits: short, so that stopping the consumers at the
/// end of a mode (which waits for a read in flight against a server) is quick. An idle
/// consumer re-reading 10 times a second costs nothing measurable.
const BLOCK_MS: u64 = 100;
/// Longest wait for a batch to be acked before the consumer counts as stuck: far above any
/// batch's cost, and above the consumer's first back-off steps after a transient error.
const ACK_WAIT_MAX: Duration = Duration::from_secs(60);

/// The consumer's settings for `batch`-entry reads; `batch` was checked against
/// [`BATCH_SIZE_MAX`] with the options.
fn settings(batch: u64) -> ConsumerSettings {
    ConsumerSettings {
        batch_size: usize::try_from(batch)
            .unwrap_or(BATCH_SIZE_MAX)
            .min(BATCH_SIZE_MAX),
        block_ms: BLOCK_MS,
        ..ConsumerSettings::default()
    }
}

/// Waits until `consumer` has acked `target` entries; fails if it acks more, stops, or takes
/// longer than [`ACK_WAIT_MAX`]. Spins (yielding the core) rather than sleeps: a batch takes
/// tens of microseconds in process, below a sleep's granularity.
fn wait_acked(consumer: &StreamConsumer, target: u64, label: &str) -> Result<(), BenchError> {
    let started = Instant::now();
    let stuck = |m: ConsumerMetrics, why: &str| BenchError::Server {
        target: label.to_string(),
        message: format!(
            "the consumer {why}: {} of {target} entries acked ({} delivered, {} failed, {} \
             malformed, {} backend errors)",
            m.acked, m.delivered, m.failed, m.malformed, m.errors
        ),
    };
    loop {
        let m = consumer.metrics();
        if m.acked > target || m.malformed > 0 || m.failed > 0 {
            return Err(stuck(
                m,
                "acked entries the bench did not append, or refused some",
            ));
        }
        if m.acked == target {
            return Ok(());
        }
        if !consumer.is_running() {
            return Err(stuck(m, "stopped"));
        }
        if started.elapsed() > ACK_WAIT_MAX {
            return Err(stuck(
                m,
                &format!("did not ack a batch in {ACK_WAIT_MAX:?}"),
            ));
        }
        cleanup::check()?;
        std::thread::yield_now();
    }
}

/// Measures both modes.
pub fn measure(stage: &mut Stage<'_>, rows: &mut Vec<ConsumeRow>) -> Result<(), BenchError> {
    let n = stage.targets.len();
    let batch = stage.args.batch;
    for mode in MODES {
        let group = format!("bench-{mode}");
        // Never below one batch: `~` keeps at least `maxlen` entries, so the batch just
        // appended is never trimmed before the consumer reads it.
        let maxlen = (mode == "maxlen~").then_some(stage.entries.max(batch));
        let mut consumers = Vec::with_capacity(n);
        for t in 0..n {
            let subscription =
                Subscription::new(&stage.keys.queue, &stage.name(t), &group, CONSUMER);
            consumers.push(stage.targets[t].start_consumer(subscription, settings(batch))?);
        }
        // Microseconds per entry of every turn, and of its append alone.
        let mut turns: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut appends: Vec<Vec<f64>> = vec![Vec::new(); n];
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
                let started = Instant::now();
                stage.targets[t].append_atomically(&produce)?;
                appends[t].push(started.elapsed().as_secs_f64() * 1e6 / batch as f64);
                stage.hi[t] += batch;
                wait_acked(
                    &consumers[t],
                    consumed[t] + batch,
                    &stage.targets[t].label(),
                )?;
                turns[t].push(started.elapsed().as_secs_f64() * 1e6 / batch as f64);
                consumed[t] += batch;
            }
        }
        // Ask every consumer first, so their last blocking reads run out together.
        for consumer in &consumers {
            consumer.request_stop();
        }
        for (t, consumer) in consumers.into_iter().enumerate() {
            let label = stage.targets[t].label();
            let m = consumer.stop().map_err(|e| BenchError::Server {
                target: label.clone(),
                message: e.to_string(),
            })?;
            if m.acked != consumed[t] || m.delivered != consumed[t] {
                return Err(BenchError::Server {
                    target: label,
                    message: format!(
                        "the consumer got {} and acked {} of {} entries",
                        m.delivered, m.acked, consumed[t]
                    ),
                });
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
                append_us_per_entry: quantile(&mut appends[t], 0.5),
            });
        }
    }
    Ok(())
}

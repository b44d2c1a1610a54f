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
//! With `--queues N` each queue has its own consumer and its own producer thread and
//! connection (`lanes`); a round is a few batches in every queue at once, each queue's figure
//! the median over its turns, the target's aggregate the median over rounds of the round's
//! entries over its wall time.
//!
//! Invariant checked every turn: the consumer acknowledges exactly the entries appended, no
//! more, and none of them is malformed or fails.

use std::time::{Duration, Instant};

use echomq::feed::consumer::{BATCH_SIZE_MAX, ConsumerMetrics};
use echomq::feed::{ConsumerSettings, StreamConsumer, Subscription};

use super::append;
use super::cleanup;
use super::error::BenchError;
use super::lanes::{self, Span};
use super::results::{AggregateRow, ConsumeRow, quantile};
use super::stage::Stage;
use super::target::{Argv, Target};

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

/// Batches per queue in one round of `--queues` (one chunk of appends' worth, at least one),
/// so that the threads' start-up skew weighs little against a round.
fn turns_per_round(batch: u64) -> u64 {
    (append::CHUNK_OPS / batch).max(1)
}

/// One queue's share of a round: its batches, its consumer, and how many entries that
/// consumer had acked before.
struct Turns<'c> {
    batches: Vec<Vec<Argv>>,
    consumer: &'c StreamConsumer,
    acked_before: u64,
}

/// Appends each batch atomically and waits for its ack; the time per entry of each turn and
/// of its append.
fn produce(lane: &mut Target, turns: Turns<'_>) -> Result<Vec<(f64, f64)>, BenchError> {
    let label = lane.label();
    let mut acked = turns.acked_before;
    let mut times = Vec::with_capacity(turns.batches.len());
    for batch in &turns.batches {
        let entries = batch.len() as f64;
        let started = Instant::now();
        lane.append_atomically(batch)?;
        let append_us = started.elapsed().as_secs_f64() * 1e6 / entries;
        acked += batch.len() as u64;
        wait_acked(turns.consumer, acked, &label)?;
        times.push((started.elapsed().as_secs_f64() * 1e6 / entries, append_us));
    }
    Ok(times)
}

/// Measures both modes.
pub fn measure(
    stage: &mut Stage<'_>,
    rows: &mut Vec<ConsumeRow>,
    totals: &mut Vec<AggregateRow>,
) -> Result<(), BenchError> {
    let n = stage.targets.len();
    let queues = stage.args.queues;
    let batch = stage.args.batch;
    for mode in MODES {
        let group = format!("bench-{mode}");
        // Never below one batch: `~` keeps at least `maxlen` entries, so the batch just
        // appended is never trimmed before the consumer reads it.
        let maxlen = (mode == "maxlen~").then_some(stage.entries.max(batch));
        let mut consumers: Vec<Vec<StreamConsumer>> = Vec::with_capacity(n);
        for t in 0..n {
            let mut of_target = Vec::with_capacity(queues);
            for q in 0..queues {
                let subscription =
                    Subscription::new(stage.queue(t, q), &stage.name(t), &group, CONSUMER);
                of_target.push(stage.targets[t].start_consumer(subscription, settings(batch))?);
            }
            consumers.push(of_target);
        }
        // Microseconds per entry of every turn, and of its append alone, per target and queue.
        let mut turns: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); queues]; n];
        let mut appends: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); queues]; n];
        // Entries per second of every round, all queues of a target together.
        let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut consumed = vec![0u64; n];
        while consumed.iter().any(|&c| c < stage.args.ops) {
            for t in 0..n {
                cleanup::check()?;
                if consumed[t] >= stage.args.ops {
                    continue;
                }
                let left = (stage.args.ops - consumed[t]).div_ceil(batch);
                let count = turns_per_round(batch).min(left);
                let work: Vec<Turns<'_>> = (0..queues)
                    .map(|q| {
                        let key = stage.key(t, q);
                        let first = stage.hi[t][q];
                        let batches = (0..count)
                            .map(|k| {
                                let from = first + k * batch;
                                (from..from + batch)
                                    .map(|i| stage.payload.xadd(&key, &stage.timeline, i, maxlen))
                                    .collect()
                            })
                            .collect();
                        Turns {
                            batches,
                            consumer: &consumers[t][q],
                            acked_before: consumed[t],
                        }
                    })
                    .collect();
                let ran = lanes::run(&mut stage.lanes[t], work, produce)?;
                let spans: Vec<Span> = ran.iter().map(|(span, _)| *span).collect();
                for (q, (_, times)) in ran.into_iter().enumerate() {
                    for (turn, append) in times {
                        turns[t][q].push(turn);
                        appends[t][q].push(append);
                    }
                    stage.hi[t][q] += count * batch;
                }
                rounds[t].push(lanes::aggregate_per_s(
                    &spans,
                    count * batch * queues as u64,
                ));
                consumed[t] += count * batch;
            }
        }
        // Ask every consumer first, so their last blocking reads run out together.
        for consumer in consumers.iter().flatten() {
            consumer.request_stop();
        }
        for (t, of_target) in consumers.into_iter().enumerate() {
            let label = stage.targets[t].label();
            for consumer in of_target {
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
        }
        for t in 0..n {
            for q in 0..queues {
                stage.resync(t, q)?;
                let us_per_entry = quantile(&mut turns[t][q], 0.5);
                rows.push(ConsumeRow {
                    target: stage.targets[t].label(),
                    entries: stage.entries,
                    queue: q,
                    mode: mode.to_string(),
                    consumed: consumed[t],
                    entries_per_s: 1e6 / us_per_entry,
                    us_per_entry,
                    append_us_per_entry: quantile(&mut appends[t][q], 0.5),
                });
            }
            totals.push(AggregateRow {
                target: stage.targets[t].label(),
                entries: stage.entries,
                mode: mode.to_string(),
                queues,
                total: consumed[t] * queues as u64,
                entries_per_s: quantile(&mut rounds[t], 0.5),
            });
        }
    }
    Ok(())
}

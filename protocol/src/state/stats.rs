//! Counters for INFO: connections, network reads and writes, commands per name (calls, time,
//! latency histogram), errors per code.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use super::latency::Histogram;
use crate::fnv::FnvBuild;

/// Calls, time and failures of one command (INFO commandstats).
#[derive(Debug, Default, Clone, Copy)]
pub struct CommandStat {
    /// Times run.
    pub calls: u64,
    /// Microseconds spent.
    pub usec: u64,
    /// Refused before running (arity, auth, OOM, unknown in MULTI).
    pub rejected_calls: u64,
    /// Ran and replied an error.
    pub failed_calls: u64,
}

/// One command's counters and latency histogram.
#[derive(Debug, Default)]
struct Calls {
    stat: CommandStat,
    latency: Option<Box<Histogram>>,
}

/// Samples kept per instantaneous metric (Redis's `STATS_METRIC_SAMPLES`).
const METRIC_SAMPLES: usize = 16;
/// Shortest time between samples (Redis samples every 100 ms of `serverCron`).
const METRIC_PERIOD_MS: u128 = 100;

/// One instantaneous metric: per-second rates of a counter, sampled by the cron.
#[derive(Debug, Default, Clone, Copy)]
struct Metric {
    last_value: u64,
    samples: [u64; METRIC_SAMPLES],
    next: usize,
}

impl Metric {
    fn sample(&mut self, value: u64, elapsed_ms: u128) {
        let delta = u128::from(value.saturating_sub(self.last_value));
        self.samples[self.next] = (delta * 1000 / elapsed_ms.max(1)) as u64;
        self.next = (self.next + 1) % METRIC_SAMPLES;
        self.last_value = value;
    }

    /// The mean of the samples (slots not yet sampled count as 0, as in Redis).
    fn rate(&self) -> u64 {
        self.samples.iter().sum::<u64>() / METRIC_SAMPLES as u64
    }
}

/// Commands, input bytes and output bytes per second, and when they were last sampled.
#[derive(Debug, Default)]
struct Instantaneous {
    last: Option<Instant>,
    metrics: [Metric; 3],
}

/// Server-wide counters.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    total_connections_received: AtomicU64,
    /// Connections refused (maxclients).
    rejected_connections: AtomicU64,
    /// Clients dropped for `client-output-buffer-limit`.
    output_limit_disconnections: AtomicU64,
    /// Commands run.
    total_commands_processed: AtomicU64,
    /// Error replies sent.
    total_error_replies: AtomicU64,
    /// Per command, by lower-case name (a table name: the set of keys is small and fixed), its
    /// counters and latencies: one lock and one lookup per call.
    calls: Mutex<HashMap<&'static str, Calls, FnvBuild>>,
    /// Per error code (`ERR`, `WRONGTYPE`, ...).
    errors: Mutex<BTreeMap<String, u64>>,
    /// Bytes read from and written to clients.
    net_input_bytes: AtomicU64,
    net_output_bytes: AtomicU64,
    /// Socket reads and writes done (INFO's `total_reads_processed`, `io_thread_0`).
    reads_processed: AtomicU64,
    writes_processed: AtomicU64,
    /// INFO's `instantaneous_*` rates.
    instantaneous: Mutex<Instantaneous>,
}

impl Stats {
    /// Counts a connection accepted (before the `maxclients` check, as Redis).
    pub fn connection_received(&self) {
        self.total_connections_received
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection refused for `maxclients`.
    pub fn connection_rejected(&self) {
        self.rejected_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// INFO's `total_connections_received`.
    pub fn total_connections_received(&self) -> u64 {
        self.total_connections_received.load(Ordering::Relaxed)
    }

    /// Counts a client dropped for `client-output-buffer-limit`.
    pub fn output_limit_disconnection(&self) {
        self.output_limit_disconnections
            .fetch_add(1, Ordering::Relaxed);
    }

    /// INFO's `client_output_buffer_limit_disconnections`.
    pub fn output_limit_disconnections(&self) -> u64 {
        self.output_limit_disconnections.load(Ordering::Relaxed)
    }

    /// INFO's `rejected_connections`.
    pub fn rejected_connections(&self) -> u64 {
        self.rejected_connections.load(Ordering::Relaxed)
    }

    /// INFO's `total_commands_processed`.
    pub fn total_commands_processed(&self) -> u64 {
        self.total_commands_processed.load(Ordering::Relaxed)
    }

    /// INFO's `total_error_replies`.
    pub fn total_error_replies(&self) -> u64 {
        self.total_error_replies.load(Ordering::Relaxed)
    }

    /// Counts one read of `bytes` bytes from a client.
    pub fn read_processed(&self, bytes: usize) {
        self.reads_processed.fetch_add(1, Ordering::Relaxed);
        self.net_input_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts one write of `bytes` bytes to a client.
    pub fn write_processed(&self, bytes: usize) {
        self.writes_processed.fetch_add(1, Ordering::Relaxed);
        self.net_output_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// INFO's `total_net_input_bytes` and `total_net_output_bytes`.
    pub fn net_bytes(&self) -> (u64, u64) {
        (
            self.net_input_bytes.load(Ordering::Relaxed),
            self.net_output_bytes.load(Ordering::Relaxed),
        )
    }

    /// INFO's `total_reads_processed` and `total_writes_processed`.
    pub fn io_processed(&self) -> (u64, u64) {
        (
            self.reads_processed.load(Ordering::Relaxed),
            self.writes_processed.load(Ordering::Relaxed),
        )
    }

    /// Records one call of `name` that took `ns` nanoseconds; `outcome` says whether it
    /// failed or was refused before running (a refused call has no latency).
    pub fn record(&self, name: &'static str, ns: u64, outcome: CallOutcome<'_>) {
        let usec = ns / 1000;
        self.total_commands_processed.fetch_add(
            u64::from(!matches!(outcome, CallOutcome::Rejected(_))),
            Ordering::Relaxed,
        );
        {
            let mut calls = self.calls.lock();
            let entry = calls.entry(name).or_default();
            let stat = &mut entry.stat;
            match outcome {
                CallOutcome::Ok => {
                    stat.calls += 1;
                    stat.usec += usec;
                }
                CallOutcome::Failed(_) => {
                    stat.calls += 1;
                    stat.usec += usec;
                    stat.failed_calls += 1;
                }
                CallOutcome::Rejected(_) => stat.rejected_calls += 1,
            }
            // A refused call has no latency; a command only ever refused has no histogram.
            if !matches!(outcome, CallOutcome::Rejected(_)) {
                entry.latency.get_or_insert_with(Box::default).record(ns);
            }
        }
        if let CallOutcome::Failed(text) | CallOutcome::Rejected(text) = outcome {
            self.record_error(text);
        }
    }

    /// Samples the instantaneous rates if [`METRIC_PERIOD_MS`] passed since the last sample
    /// (the server cron calls this every tick).
    pub fn sample_instantaneous(&self) {
        let now = Instant::now();
        let (input, output) = self.net_bytes();
        let values = [self.total_commands_processed(), input, output];
        let mut inst = self.instantaneous.lock();
        let Some(last) = inst.last else {
            inst.last = Some(now);
            for (metric, value) in inst.metrics.iter_mut().zip(values) {
                metric.last_value = value;
            }
            return;
        };
        let elapsed = now.duration_since(last).as_millis();
        if elapsed < METRIC_PERIOD_MS {
            return;
        }
        inst.last = Some(now);
        for (metric, value) in inst.metrics.iter_mut().zip(values) {
            metric.sample(value, elapsed);
        }
    }

    /// INFO's `instantaneous_ops_per_sec`, and input and output bytes per second.
    pub fn instantaneous(&self) -> (u64, u64, u64) {
        let inst = self.instantaneous.lock();
        let [ops, input, output] = inst.metrics.map(|m| m.rate());
        (ops, input, output)
    }

    /// A copy of the per-command latency histograms.
    pub fn latencies(&self) -> BTreeMap<String, Histogram> {
        let calls = self.calls.lock();
        calls
            .iter()
            .filter_map(|(name, c)| Some((name.to_string(), (**c.latency.as_ref()?).clone())))
            .collect()
    }

    /// Records an error reply by its code (the first word).
    pub fn record_error(&self, text: &str) {
        self.total_error_replies.fetch_add(1, Ordering::Relaxed);
        let code = text.split(' ').next().unwrap_or("ERR").to_string();
        *self.errors.lock().entry(code).or_default() += 1;
    }

    /// A copy of the per-command counters.
    pub fn commands(&self) -> BTreeMap<String, CommandStat> {
        let calls = self.calls.lock();
        calls
            .iter()
            .map(|(name, c)| (name.to_string(), c.stat))
            .collect()
    }

    /// A copy of the per-error-code counters.
    pub fn errors(&self) -> BTreeMap<String, u64> {
        self.errors.lock().clone()
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&self) {
        self.total_connections_received.store(0, Ordering::Relaxed);
        self.rejected_connections.store(0, Ordering::Relaxed);
        self.output_limit_disconnections.store(0, Ordering::Relaxed);
        self.total_commands_processed.store(0, Ordering::Relaxed);
        self.total_error_replies.store(0, Ordering::Relaxed);
        self.calls.lock().clear();
        self.errors.lock().clear();
        *self.instantaneous.lock() = Instantaneous::default();
        for counter in [
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.reads_processed,
            &self.writes_processed,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

/// How a call ended, for the counters.
#[derive(Debug, Clone, Copy)]
pub enum CallOutcome<'a> {
    /// Replied normally.
    Ok,
    /// Ran and replied this error.
    Failed(&'a str),
    /// Refused before running, with this error.
    Rejected(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_is_the_mean_rate_over_its_samples() {
        let mut m = Metric::default();
        m.sample(100, 100);
        m.sample(300, 100);
        // 1000/s and 2000/s over 16 slots.
        assert_eq!(m.rate(), 3000 / 16);
        assert_eq!(Metric::default().rate(), 0);
    }
}

//! Counters for INFO: connections, network reads and writes, commands per name (calls, time,
//! latency histogram), errors per code.
//!
//! The per-command and network counters are written on every call by whichever thread runs
//! it, so they are kept in one [`Shard`] per thread and summed when read (INFO, LATENCY): a
//! call touches only its own thread's shard, which no other thread touches but a reader,
//! instead of one lock and one cache line every connection's thread would fight over.
//! Invariant: a shard is registered in its [`Stats`]'s list before its first call is counted,
//! so a read sees every counted call.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use parking_lot::Mutex;

use super::latency::Histogram;

/// A counted name's id: its place in the command tables (`cmd::table::find`), the same for
/// every call of a command (or subcommand), so a shard's counters are a vector indexed by it.
pub type CallId = usize;

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

/// One command's counters and latency histogram (an unused id's have no name).
#[derive(Debug, Default)]
struct Calls {
    name: &'static str,
    stat: CommandStat,
    latency: Option<Box<Histogram>>,
}

/// One thread's per-command and network counters.
#[derive(Debug, Default)]
struct Shard {
    /// Per command, by [`CallId`] (the set of ids is small and fixed).
    calls: Mutex<ShardCalls>,
    /// Bytes read from and written to clients.
    net_input_bytes: AtomicU64,
    net_output_bytes: AtomicU64,
    /// Socket reads and writes done (INFO's `total_reads_processed`, `io_thread_0`).
    reads_processed: AtomicU64,
    writes_processed: AtomicU64,
}

impl Shard {
    fn count_read(&self, bytes: usize) {
        self.reads_processed.fetch_add(1, Ordering::Relaxed);
        self.net_input_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    fn count_write(&self, bytes: usize) {
        self.writes_processed.fetch_add(1, Ordering::Relaxed);
        self.net_output_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    fn io_counters(&self) -> [&AtomicU64; 4] {
        [
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.reads_processed,
            &self.writes_processed,
        ]
    }
}

/// A handle on one thread's counters ([`Stats::counter`]).
#[derive(Debug, Clone)]
pub struct Counter(Arc<Shard>);

impl ShardCalls {
    /// Counts one call (see [`Stats::record`]).
    #[inline]
    fn count(&mut self, id: CallId, name: &'static str, ns: u64, outcome: CallOutcome<'_>) {
        let rejected = matches!(outcome, CallOutcome::Rejected(_));
        self.processed += u64::from(!rejected);
        if id >= self.by_id.len() {
            self.by_id.resize_with(id + 1, Calls::default);
        }
        let entry = &mut self.by_id[id];
        debug_assert!(entry.name.is_empty() || entry.name == name);
        entry.name = name;
        let stat = &mut entry.stat;
        if rejected {
            stat.rejected_calls += 1;
            // A refused call has no latency; a command only ever refused has no histogram.
            return;
        }
        stat.calls += 1;
        stat.usec += ns / 1000;
        stat.failed_calls += u64::from(matches!(
            outcome,
            CallOutcome::Failed(_) | CallOutcome::FailedCounted
        ));
        entry.latency.get_or_insert_with(Box::default).record(ns);
    }
}

#[derive(Debug, Default)]
struct ShardCalls {
    /// By [`CallId`].
    by_id: Vec<Calls>,
    /// Commands run (INFO's `total_commands_processed`).
    processed: u64,
}

/// Ids telling [`Stats`] instances apart in the threads' shard lists (a process may run
/// several servers; an address could be reused by a later one).
static NEXT_STATS_ID: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard of every live [`Stats`] it counted calls for, by [`Stats::id`]
    /// (with a handle telling whether that instance still exists).
    static SHARDS: RefCell<Vec<ThreadShard>> = const { RefCell::new(Vec::new()) };
}

/// One entry of a thread's [`SHARDS`].
struct ThreadShard {
    stats_id: usize,
    alive: Weak<()>,
    shard: Arc<Shard>,
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
#[derive(Debug)]
pub struct Stats {
    /// Tells this instance's shards apart in the threads' lists.
    id: usize,
    /// Dropped with the instance: the threads' lists forget its shards then.
    alive: Arc<()>,
    /// Every thread's shard of the per-command counters (see the module docs).
    shards: Mutex<Vec<Arc<Shard>>>,
    /// Connections accepted.
    total_connections_received: AtomicU64,
    /// Connections refused (maxclients).
    rejected_connections: AtomicU64,
    /// Clients dropped for `client-output-buffer-limit`.
    output_limit_disconnections: AtomicU64,
    /// Error replies sent.
    total_error_replies: AtomicU64,
    /// Per error code (`ERR`, `WRONGTYPE`, ...).
    errors: Mutex<BTreeMap<String, u64>>,
    /// INFO's `instantaneous_*` rates.
    instantaneous: Mutex<Instantaneous>,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            id: NEXT_STATS_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            shards: Mutex::default(),
            total_connections_received: AtomicU64::default(),
            rejected_connections: AtomicU64::default(),
            output_limit_disconnections: AtomicU64::default(),
            total_error_replies: AtomicU64::default(),
            errors: Mutex::default(),
            instantaneous: Mutex::default(),
        }
    }
}

impl Stats {
    /// Runs `f` on the calling thread's shard, registering it first if it is new.
    fn with_shard<R>(&self, mut f: impl FnMut(&Shard) -> R) -> R {
        self.with_shard_arc(|shard| f(shard))
    }

    /// A handle on the calling thread's shard, for a connection to count its calls in
    /// without finding the shard again on every call (a connection's task stays on its
    /// thread; were it to move, its calls would still be counted, in the old thread's shard).
    pub fn counter(&self) -> Counter {
        Counter(self.with_shard_arc(Arc::clone))
    }

    /// [`Stats::with_shard`] with the shard's handle.
    fn with_shard_arc<R>(&self, mut f: impl FnMut(&Arc<Shard>) -> R) -> R {
        let counted = SHARDS.try_with(|shards| {
            let mut shards = shards.borrow_mut();
            let index = match shards.iter().position(|entry| entry.stats_id == self.id) {
                Some(index) => index,
                None => {
                    // First call on this thread: forget the shards of instances gone since.
                    shards.retain(|entry| entry.alive.strong_count() > 0);
                    shards.push(ThreadShard {
                        stats_id: self.id,
                        alive: Arc::downgrade(&self.alive),
                        shard: self.register(),
                    });
                    shards.len() - 1
                }
            };
            f(&shards[index].shard)
        });
        match counted {
            Ok(r) => r,
            // A thread whose locals are being torn down counts into a fresh registered shard.
            Err(_) => f(&self.register()),
        }
    }

    /// Runs `f` on the calling thread's per-command counters.
    fn with_calls<R>(&self, mut f: impl FnMut(&mut ShardCalls) -> R) -> R {
        self.with_shard(|shard| f(&mut shard.calls.lock()))
    }

    /// The sum of one network counter over the shards.
    fn sum_io(&self, which: usize) -> u64 {
        self.shards
            .lock()
            .iter()
            .map(|shard| shard.io_counters()[which].load(Ordering::Relaxed))
            .sum()
    }

    /// A new shard, in this instance's list.
    fn register(&self) -> Arc<Shard> {
        let shard = Arc::new(Shard::default());
        self.shards.lock().push(Arc::clone(&shard));
        shard
    }

    /// Runs `f` over every shard's counters (a read: INFO, LATENCY, RESETSTAT).
    fn each_shard(&self, mut f: impl FnMut(&mut ShardCalls)) {
        for shard in self.shards.lock().iter() {
            f(&mut shard.calls.lock());
        }
    }

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
        let mut total = 0;
        self.each_shard(|calls| total += calls.processed);
        total
    }

    /// INFO's `total_error_replies`.
    pub fn total_error_replies(&self) -> u64 {
        self.total_error_replies.load(Ordering::Relaxed)
    }

    /// Counts one read of `bytes` bytes from a client.
    pub fn read_processed(&self, bytes: usize) {
        self.with_shard(|shard| shard.count_read(bytes));
    }

    /// Counts one write of `bytes` bytes to a client.
    pub fn write_processed(&self, bytes: usize) {
        self.with_shard(|shard| shard.count_write(bytes));
    }

    /// [`Stats::read_processed`] into `counter`'s shard when the connection has one.
    pub fn read_processed_in(&self, counter: Option<&Counter>, bytes: usize) {
        match counter {
            Some(counter) => counter.0.count_read(bytes),
            None => self.read_processed(bytes),
        }
    }

    /// [`Stats::write_processed`] into `counter`'s shard when the connection has one.
    pub fn write_processed_in(&self, counter: Option<&Counter>, bytes: usize) {
        match counter {
            Some(counter) => counter.0.count_write(bytes),
            None => self.write_processed(bytes),
        }
    }

    /// INFO's `total_net_input_bytes` and `total_net_output_bytes`.
    pub fn net_bytes(&self) -> (u64, u64) {
        (self.sum_io(0), self.sum_io(1))
    }

    /// INFO's `total_reads_processed` and `total_writes_processed`.
    pub fn io_processed(&self) -> (u64, u64) {
        (self.sum_io(2), self.sum_io(3))
    }

    /// Records one call of `name` (whose id is `id`: one id, one name) that took `ns`
    /// nanoseconds; `outcome` says whether it failed or was refused before running (a
    /// refused call has no latency).
    pub fn record(&self, id: CallId, name: &'static str, ns: u64, outcome: CallOutcome<'_>) {
        self.with_calls(|calls| calls.count(id, name, ns, outcome));
        if let CallOutcome::Failed(text) | CallOutcome::Rejected(text) = outcome {
            self.record_error(text);
        }
    }

    /// [`Stats::record`] into `counter`'s shard (one of this instance's, from
    /// [`Stats::counter`]).
    #[inline]
    pub fn record_in(
        &self,
        counter: &Counter,
        id: CallId,
        name: &'static str,
        ns: u64,
        outcome: CallOutcome<'_>,
    ) {
        counter.0.calls.lock().count(id, name, ns, outcome);
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
        let mut all: BTreeMap<String, Histogram> = BTreeMap::new();
        self.each_shard(|calls| {
            for c in calls.by_id.iter().filter(|c| !c.name.is_empty()) {
                if let Some(latency) = &c.latency {
                    all.entry(c.name.to_string()).or_default().merge(latency);
                }
            }
        });
        all
    }

    /// Records an error reply by its code (the first word).
    pub fn record_error(&self, text: &str) {
        self.total_error_replies.fetch_add(1, Ordering::Relaxed);
        let code = text.split(' ').next().unwrap_or("ERR").to_string();
        *self.errors.lock().entry(code).or_default() += 1;
    }

    /// A copy of the per-command counters.
    pub fn commands(&self) -> BTreeMap<String, CommandStat> {
        let mut all: BTreeMap<String, CommandStat> = BTreeMap::new();
        self.each_shard(|calls| {
            for c in calls.by_id.iter().filter(|c| !c.name.is_empty()) {
                let sum = all.entry(c.name.to_string()).or_default();
                sum.calls += c.stat.calls;
                sum.usec += c.stat.usec;
                sum.rejected_calls += c.stat.rejected_calls;
                sum.failed_calls += c.stat.failed_calls;
            }
        });
        all
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
        self.total_error_replies.store(0, Ordering::Relaxed);
        for shard in self.shards.lock().iter() {
            *shard.calls.lock() = ShardCalls::default();
            for counter in shard.io_counters() {
                counter.store(0, Ordering::Relaxed);
            }
        }
        self.errors.lock().clear();
        *self.instantaneous.lock() = Instantaneous::default();
    }
}

/// How a call ended, for the counters.
#[derive(Debug, Clone, Copy)]
pub enum CallOutcome<'a> {
    /// Replied normally.
    Ok,
    /// Ran and replied this error.
    Failed(&'a str),
    /// Ran and replied an error the error stats counted already (a script's error from a
    /// command it ran, counted when that command failed).
    FailedCounted,
    /// Refused before running, with this error.
    Rejected(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_counted_on_several_threads_are_summed_and_reset_together() {
        let stats = Arc::new(Stats::default());
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let stats = Arc::clone(&stats);
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        stats.record(3, "xadd", 2_000, CallOutcome::Ok);
                    }
                    stats.record(3, "xadd", 0, CallOutcome::Rejected("ERR wrong"));
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        stats.record(0, "ping", 1_000, CallOutcome::Failed("ERR x"));
        let xadd = stats.commands()["xadd"];
        assert_eq!((xadd.calls, xadd.usec, xadd.rejected_calls), (30, 60, 3));
        assert_eq!(stats.commands()["ping"].failed_calls, 1);
        assert_eq!(stats.total_commands_processed(), 31);
        assert_eq!(stats.latencies()["xadd"].value_at(50.0) / 100, 20);
        // Another instance on the same threads counts apart.
        let other = Stats::default();
        other.record(3, "xadd", 1, CallOutcome::Ok);
        assert_eq!(other.commands()["xadd"].calls, 1);
        assert_eq!(stats.commands()["xadd"].calls, 30);
        stats.read_processed(10);
        stats.write_processed(4);
        std::thread::scope(|scope| {
            scope.spawn(|| stats.read_processed(5));
        });
        let counter = stats.counter();
        stats.read_processed_in(Some(&counter), 3);
        stats.write_processed_in(Some(&counter), 2);
        stats.write_processed_in(None, 1);
        assert_eq!(stats.net_bytes(), (18, 7));
        assert_eq!(stats.io_processed(), (3, 3));
        stats.reset();
        assert_eq!(stats.net_bytes(), (0, 0));
        assert!(stats.commands().is_empty());
        assert_eq!(stats.total_commands_processed(), 0);
    }

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

//! Every figure a run produces, one row type per operation, serialized as the `--json` file.
//! Times are in microseconds (`_us`) or nanoseconds (`_ns`), rates per second (`_per_s`).

use serde::Serialize;

/// The whole run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The command line that produced it.
    pub command: String,
    /// `uptime`'s 1-, 5- and 15-minute load averages when the run started.
    pub load_average: [f64; 3],
    /// The options.
    pub config: Config,
    /// The targets, in the order measured.
    pub targets: Vec<TargetInfo>,
    /// Pipelined loads.
    pub load: Vec<LoadRow>,
    /// Window reads.
    pub window: Vec<WindowRow>,
    /// Trims.
    pub trim: Vec<TrimRow>,
    /// Every target's queues and, on a cluster, where they live.
    pub queues: Vec<QueueInfo>,
    /// Appends, per queue.
    pub append: Vec<AppendRow>,
    /// Appends, all queues of a target together.
    pub append_aggregate: Vec<AggregateRow>,
    /// Consumer-group reads, per queue.
    pub consume: Vec<ConsumeRow>,
    /// Consumer-group reads, all queues of a target together.
    pub consume_aggregate: Vec<AggregateRow>,
    /// How consume was measured.
    pub consume_method: String,
}

/// The options that shape the figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Config {
    /// Stream sizes.
    pub entries: Vec<u64>,
    /// Fields per entry besides `id`.
    pub fields: u32,
    /// Bytes per value.
    pub value_bytes: u32,
    /// Simulated entries per second.
    pub rate: u64,
    /// Reads per window case.
    pub samples: u32,
    /// Trims per trim case.
    pub trim_repeats: u32,
    /// `LIMIT` of the `~` trims (0: none).
    pub trim_limit: u64,
    /// Appends per append case.
    pub ops: u64,
    /// XREADGROUP COUNT.
    pub batch: u64,
    /// Queues appended to and consumed from at once.
    pub queues: usize,
    /// Estimated bytes per entry, used by the memory check.
    pub estimated_entry_bytes: u64,
}

/// One target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetInfo {
    /// Its label in rows.
    pub label: String,
    /// What answered.
    pub server: String,
}

/// One queue of a target.
#[derive(Debug, Clone, Serialize)]
pub struct QueueInfo {
    /// Target label.
    pub target: String,
    /// Its index, as in the rows' `queue`.
    pub queue: usize,
    /// The feed's queue name (its keys' hash tag).
    pub name: String,
    /// Its keys' slot, on a cluster.
    pub slot: Option<u16>,
    /// The master serving that slot when the run started (`host:port`), on a cluster.
    pub master: Option<String>,
}

/// All queues of a target at once, in one append or consume case.
#[derive(Debug, Clone, Serialize)]
pub struct AggregateRow {
    /// Target label.
    pub target: String,
    /// Stream size.
    pub entries: u64,
    /// `plain` or `maxlen~`.
    pub mode: String,
    /// Queues that ran at once.
    pub queues: usize,
    /// Entries appended (or consumed) in all.
    pub total: u64,
    /// Entries per second over all queues: the median over rounds of a round's entries over
    /// the time from its first queue's start to its last queue's end.
    pub entries_per_s: f64,
}

/// Loading one stream.
#[derive(Debug, Clone, Serialize)]
pub struct LoadRow {
    /// Target label.
    pub target: String,
    /// Stream size.
    pub entries: u64,
    /// The queue.
    pub queue: usize,
    /// Wall time.
    pub seconds: f64,
    /// Entries per second (pipelined XADD over RESP, direct adds in process).
    pub entries_per_s: f64,
}

/// One window case.
#[derive(Debug, Clone, Serialize)]
pub struct WindowRow {
    /// Target label.
    pub target: String,
    /// Stream size.
    pub entries: u64,
    /// `1s`, `1min`, `5min`.
    pub span: String,
    /// `tail` or `middle`.
    pub position: String,
    /// Entries the window returned.
    pub read_entries: u64,
    /// Median latency of one `read_window`.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// `read_entries / p50`.
    pub entries_per_s: f64,
}

/// One trim case.
#[derive(Debug, Clone, Serialize)]
pub struct TrimRow {
    /// Target label.
    pub target: String,
    /// Stream size before the trim.
    pub entries: u64,
    /// `MAXLEN ~`, `MAXLEN =`, `MINID ~`.
    pub strategy: String,
    /// Share of the stream the trim asks to remove.
    pub fraction: f64,
    /// Entries the trim asks to remove.
    pub requested: u64,
    /// Entries removed (median run).
    pub removed: u64,
    /// Entries left.
    pub left: u64,
    /// Entries left beyond the request: `~`'s under-trim.
    pub under_trim: u64,
    /// `radix-tree-keys` before minus after.
    pub nodes_freed: u64,
    /// Median time of the XTRIM call, as the client sees it.
    pub time_us: f64,
    /// `time / removed`; absent when nothing was removed.
    pub ns_per_entry: Option<f64>,
}

/// One append case.
#[derive(Debug, Clone, Serialize)]
pub struct AppendRow {
    /// Target label.
    pub target: String,
    /// Stream size.
    pub entries: u64,
    /// The queue.
    pub queue: usize,
    /// `plain` or `maxlen~` (trim on every append).
    pub mode: String,
    /// Appends timed.
    pub ops: u64,
    /// Appends per second, one command per round trip (from the median chunk).
    pub ops_per_s: f64,
    /// Median over chunks of the time per append.
    pub us_per_op: f64,
}

/// One consume case.
#[derive(Debug, Clone, Serialize)]
pub struct ConsumeRow {
    /// Target label.
    pub target: String,
    /// Stream size.
    pub entries: u64,
    /// The queue.
    pub queue: usize,
    /// `plain` or `maxlen~` (the producer trims on every append).
    pub mode: String,
    /// Entries delivered and acknowledged.
    pub consumed: u64,
    /// Entries per second appended, delivered by the consumer and acknowledged (from the
    /// median turn).
    pub entries_per_s: f64,
    /// Median over turns of the time per entry, from the start of the append to the ack.
    pub us_per_entry: f64,
    /// Median over turns of the producer's part per entry: until its atomic append returned
    /// (on the engine and Redis alike this includes building the blocked consumer's reply).
    pub append_us_per_entry: f64,
}

/// The `q`-quantile (0..=1) of `samples`, nearest rank; `samples` is sorted in place.
pub fn quantile(samples: &mut [f64], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    let rank = (q * samples.len() as f64).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut s: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(quantile(&mut s, 0.5), 50.0);
        assert_eq!(quantile(&mut s, 0.99), 99.0);
        assert_eq!(quantile(&mut [3.0], 0.99), 3.0);
        assert_eq!(quantile(&mut [], 0.5), 0.0);
    }
}

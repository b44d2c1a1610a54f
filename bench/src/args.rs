//! The options of `echomq bench` and the parsing of stream sizes and targets.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use echomq::feed::consumer::BATCH_SIZE_MAX;

use super::error::BenchError;

/// Largest stream size accepted on the command line; the memory check refuses most sizes far
/// below it, this only keeps the arithmetic of ids and estimates far from overflow.
pub const ENTRIES_MAX: u64 = 1_000_000_000_000;
/// Highest append rate: ids carry a 22-bit sequence per millisecond, and a faster simulated
/// clock gains nothing for a bench.
pub const RATE_MAX: u64 = 1_000_000;

/// Most queues at once: each is a thread, a producer connection and a consumer.
pub const QUEUES_MAX: usize = 256;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Operation {
    /// `read_window` of 1 s, 1 min and 5 min at the tail and in the middle.
    Window,
    /// `XTRIM MAXLEN ~`, `MAXLEN =`, `MINID ~` removing 1%, 10% and 50%.
    Trim,
    /// `XADD`, with and without `MAXLEN ~` on every append.
    Append,
    /// `XREADGROUP` + `XACK`, with and without `MAXLEN ~` on the producer's appends.
    Consume,
    /// All of the above.
    All,
}

/// Options of `echomq bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// What to measure.
    #[arg(value_enum)]
    pub operation: Operation,
    /// Stream sizes, comma separated (10000, 1e4 and 10k are the same).
    #[arg(long, value_delimiter = ',', default_values = ["1e4", "1e5", "1e6"])]
    pub entries: Vec<String>,
    /// Fields per entry besides the branded `id` field.
    #[arg(long, default_value_t = 2)]
    pub fields: u32,
    /// Bytes per field value.
    #[arg(long, default_value_t = 8)]
    pub value_bytes: u32,
    /// `embedded` (in this process) or `redis://host:port[/db]`; repeat to compare targets.
    #[arg(long = "target", default_values = ["embedded"])]
    pub targets: Vec<String>,
    /// Entries per second of simulated time, so that ids map to instants for the window reads.
    #[arg(long, default_value_t = 10)]
    pub rate: u64,
    /// Timed reads per window case and target (p50 and p99 come from these).
    #[arg(long, default_value_t = 200)]
    pub samples: u32,
    /// Timed trims per trim case and target (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub trim_repeats: u32,
    /// `LIMIT` of the `~` trims; 0 removes every whole node it may (Redis's default caps a
    /// call at 100 x stream-node-max-entries).
    #[arg(long, default_value_t = 0)]
    pub trim_limit: u64,
    /// Appends (and consumed entries) per append/consume case and target.
    #[arg(long, default_value_t = 10_000)]
    pub ops: u64,
    /// Entries per producer batch and per consumer read (XREADGROUP COUNT) in the consume
    /// cases; at most 10000, a consumer's largest read.
    #[arg(long, default_value_t = 100)]
    pub batch: u64,
    /// Queues appended to and consumed from at once in the append and consume cases, one
    /// producer thread and connection each; on a `redis-cluster://` target their slots sit on
    /// different masters as far as the cluster has masters. Window reads and trims use one.
    #[arg(long, default_value_t = 1)]
    pub queues: usize,
    /// Write every figure as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw cost against stream size (log-log) as SVG to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

impl BenchArgs {
    /// Checks the numeric options.
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |what: &str| Err(BenchError::BadOption(what.to_string()));
        if self.rate == 0 || self.rate > RATE_MAX {
            return bad(&format!("--rate must be 1..={RATE_MAX} entries per second"));
        }
        if self.samples == 0 || self.trim_repeats == 0 || self.ops == 0 || self.batch == 0 {
            return bad("--samples, --trim-repeats, --ops and --batch must be at least 1");
        }
        if self.batch > BATCH_SIZE_MAX as u64 {
            return bad(&format!(
                "--batch must be at most {BATCH_SIZE_MAX} (a consumer's largest read)"
            ));
        }
        if self.queues == 0 || self.queues > QUEUES_MAX {
            return bad(&format!("--queues must be 1..={QUEUES_MAX}"));
        }
        if self.value_bytes == 0 || self.fields == 0 {
            return bad("--fields and --value-bytes must be at least 1");
        }
        if self.fields > 1000 || self.value_bytes > 1 << 20 {
            return bad("--fields is at most 1000 and --value-bytes at most 1048576");
        }
        if let Some(plot) = &self.plot
            && plot
                .extension()
                .is_none_or(|e| !e.eq_ignore_ascii_case("svg"))
        {
            return bad("--plot draws SVG: give a file name ending in .svg");
        }
        // A results file that cannot be written is found now, not after the measurements.
        for path in self.json.iter().chain(&self.plot) {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            if !dir.is_dir() {
                return bad(&format!("{} is not a directory", dir.display()));
            }
        }
        Ok(())
    }

    /// Whether `op` is part of this run.
    pub fn runs(&self, op: Operation) -> bool {
        self.operation == op || self.operation == Operation::All
    }
}

/// Parses one stream size: `10000`, `1e4`, `2.5e5`, `10k`, `1M`.
pub fn parse_entries(text: &str) -> Result<u64, BenchError> {
    let bad = || BenchError::BadSize(text.to_string());
    let t = text.trim();
    let (number, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    if let Ok(n) = number.parse::<u64>() {
        let n = (n as f64 * scale) as u64;
        return (1..=ENTRIES_MAX).contains(&n).then_some(n).ok_or_else(bad);
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let value = value * scale;
    if !value.is_finite() || value < 1.0 || value > ENTRIES_MAX as f64 || value.fract() != 0.0 {
        return Err(bad());
    }
    Ok(value as u64)
}

/// Where a stream lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// The engine in this process.
    Embedded,
    /// A Redis-protocol server.
    Remote {
        /// The URL as given.
        url: String,
        /// `host:port`, for the reachability probe.
        addr: String,
    },
    /// A Redis or Valkey Cluster, through these seed nodes.
    Cluster {
        /// `redis://host:port` per seed node.
        seeds: Vec<String>,
        /// `host:port` per seed node, for the probe and the label.
        addrs: Vec<String>,
    },
}

impl TargetSpec {
    /// Parses `embedded`, `redis://[user:pass@]host[:port][/db]` or
    /// `redis-cluster://host:port[,host:port...]`.
    pub fn parse(text: &str) -> Result<TargetSpec, BenchError> {
        if text == "embedded" {
            return Ok(TargetSpec::Embedded);
        }
        if let Some(nodes) = text.strip_prefix("redis-cluster://") {
            let mut seeds = Vec::new();
            let mut addrs = Vec::new();
            for node in nodes.split(',') {
                match TargetSpec::parse(&format!("redis://{node}")) {
                    Ok(TargetSpec::Remote { url, addr }) if !node.contains('/') => {
                        seeds.push(url);
                        addrs.push(addr);
                    }
                    _ => return Err(BenchError::BadTarget(text.to_string())),
                }
            }
            return Ok(TargetSpec::Cluster { seeds, addrs });
        }
        let bad = || BenchError::BadTarget(text.to_string());
        let rest = text.strip_prefix("redis://").ok_or_else(bad)?;
        let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        let hostport = rest.split('/').next().unwrap_or("");
        if hostport.is_empty() {
            return Err(bad());
        }
        let addr = if hostport.starts_with('[') {
            // [::1]:port
            match hostport.rsplit_once("]:") {
                Some(_) => hostport.to_string(),
                None => format!("{hostport}:6379"),
            }
        } else {
            match hostport.rsplit_once(':') {
                Some((host, port)) => {
                    port.parse::<u16>().map_err(|_| bad())?;
                    if host.is_empty() {
                        return Err(bad());
                    }
                    hostport.to_string()
                }
                None => format!("{hostport}:6379"),
            }
        };
        redis::Client::open(text).map_err(|_| bad())?;
        Ok(TargetSpec::Remote {
            url: text.to_string(),
            addr,
        })
    }

    /// The name shown in tables and plots.
    pub fn label(&self) -> String {
        match self {
            TargetSpec::Embedded => "embedded".to_string(),
            TargetSpec::Remote { addr, .. } => addr.clone(),
            TargetSpec::Cluster { addrs, .. } => format!("cluster:{}", addrs.join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_every_spelling() {
        for (text, n) in [
            ("10000", 10_000),
            ("1e4", 10_000),
            ("2.5e5", 250_000),
            ("10k", 10_000),
            ("1M", 1_000_000),
            ("1e7", 10_000_000),
        ] {
            assert_eq!(parse_entries(text).unwrap(), n, "{text}");
        }
        for text in ["", "0", "-1", "1.5", "1e13", "abc", "1e4x", "NaN", "inf"] {
            assert!(parse_entries(text).is_err(), "{text}");
        }
    }

    #[test]
    fn output_files_are_checked_before_measuring() {
        use clap::Parser;
        #[derive(Debug, Parser)]
        struct Cli {
            #[command(flatten)]
            args: BenchArgs,
        }
        let parse = |extra: &[&str]| {
            let mut argv = vec!["bench", "window"];
            argv.extend_from_slice(extra);
            Cli::parse_from(argv).args.validate()
        };
        assert!(parse(&[]).is_ok());
        assert!(parse(&["--plot", "out.svg", "--json", "out.json"]).is_ok());
        assert!(parse(&["--plot", "out.png"]).is_err());
        assert!(parse(&["--json", "/nonexistent-dir/out.json"]).is_err());
        assert!(parse(&["--rate", "0"]).is_err());
        assert!(parse(&["--fields", "0"]).is_err());
        assert!(parse(&["--batch", "10000"]).is_ok());
        assert!(parse(&["--batch", "10001"]).is_err());
        assert!(parse(&["--queues", "3"]).is_ok());
        assert!(parse(&["--queues", "0"]).is_err());
        assert!(parse(&["--queues", "257"]).is_err());
    }

    #[test]
    fn targets_parse_or_say_what_is_wrong() {
        assert_eq!(TargetSpec::parse("embedded").unwrap(), TargetSpec::Embedded);
        let remote = TargetSpec::parse("redis://127.0.0.1:6380").unwrap();
        assert_eq!(remote.label(), "127.0.0.1:6380");
        assert_eq!(
            TargetSpec::parse("redis://localhost").unwrap().label(),
            "localhost:6379"
        );
        assert_eq!(
            TargetSpec::parse("redis://:pw@localhost:7000/2")
                .unwrap()
                .label(),
            "localhost:7000"
        );
        for text in ["", "http://x:1", "redis://", "redis://host:notaport", "emb"] {
            assert!(TargetSpec::parse(text).is_err(), "{text}");
        }
        let cluster = TargetSpec::parse("redis-cluster://127.0.0.1:7000,127.0.0.1:7001").unwrap();
        assert_eq!(
            cluster,
            TargetSpec::Cluster {
                seeds: vec![
                    "redis://127.0.0.1:7000".to_string(),
                    "redis://127.0.0.1:7001".to_string()
                ],
                addrs: vec!["127.0.0.1:7000".to_string(), "127.0.0.1:7001".to_string()],
            }
        );
        assert_eq!(cluster.label(), "cluster:127.0.0.1:7000,127.0.0.1:7001");
        assert_eq!(
            TargetSpec::parse("redis-cluster://h").unwrap().label(),
            "cluster:h:6379"
        );
        for text in [
            "redis-cluster://",
            "redis-cluster://h:1,",
            "redis-cluster://h:x",
            "redis-cluster://h:1/2",
        ] {
            assert!(TargetSpec::parse(text).is_err(), "{text}");
        }
    }
}

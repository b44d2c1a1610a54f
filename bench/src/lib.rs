//! `echomq bench window|trim|append|consume|all [--entries 1e4,1e5,1e6] [--fields N]
//! [--value-bytes B] [--target embedded|redis://host:port|redis-cluster://host:port,... ...] [--json FILE] [--plot FILE.svg]`
//!
//! What a retention policy or a "last five minutes" read costs at a user's volume, how that
//! grows with the stream, and how the embedded engine compares with a server. For each size
//! the bench loads one stream per target, then measures window reads, trims, appends, and
//! appending and consuming through the consumer runtime, the targets taking turns measurement
//! by measurement so that their ratios stay fair on a noisy machine. Then it deletes the
//! streams and goes to the next size.
//!
//! This crate (`echomq-bench`) is the command only: the `echomq` binary (`echomq-cli`) parses
//! [`BenchArgs`] as its `bench` subcommand and calls [`run`]. It links the `echomq` library as
//! any user would; the library does not depend on it, so the bench's plots (`plotters`),
//! progress bars (`indicatif`), JSON report (`serde`) and argument parsing (`clap`) are not
//! in what embedders build.
//!
//! Modules (private; the command is the interface):
//!
//! - `args`: options, sizes and targets; `target`: connecting (with the probe that turns
//!   a dead or non-Redis port into a clear error) and the commands the bench sends; `wire`:
//!   how those reach a server or a cluster.
//! - `timeline`: ids that map to instants; `loader`: pipelined loading; `stage`: the
//!   streams of one size and the entries they hold.
//! - `window`, `trim`, `append`, `consume`: the measurements.
//! - `results`: the figures (the `--json` file); `table`, `plot`: how they are shown.
//! - `memory`: refusing sizes that do not fit; `cleanup`: the run's own key prefix, and
//!   removing its keys at the end and on Ctrl-C.
//! - `queues`: the `--queues N` queues of a target and, on a cluster, which master each is
//!   on; `lanes`: running the N queues' work at once.

mod append;
mod args;
mod cleanup;
mod consume;
mod error;
mod lanes;
mod loader;
mod memory;
mod plot;
mod queues;
mod results;
mod stage;
mod table;
mod target;
mod timeline;
mod trim;
mod window;
mod wire;

pub use args::BenchArgs;

use args::{Operation, TargetSpec};
use cleanup::RunKeys;
use error::BenchError;
use loader::Payload;
use results::{Config, LoadRow, QueueInfo, Report, TargetInfo};
use stage::Stage;
use target::Target;

/// How long a failed run waits for a signal's flag before reporting the failure as its own.
const SIGNAL_FLAG_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Runs the bench; an interrupted run removes its keys and exits with status 130.
pub fn run(args: BenchArgs) -> Result<(), String> {
    match bench(&args) {
        Ok(()) => Ok(()),
        Err(BenchError::Interrupted) => {
            eprintln!("echomq bench: {}", BenchError::Interrupted);
            std::process::exit(cleanup::INTERRUPTED_EXIT);
        }
        // A signal interrupts socket reads that have a timeout (EINTR, even with SA_RESTART), so
        // the first error after Ctrl-C may be that read's, seen before the signal thread has
        // raised the flag: give it a moment before calling the error a failure.
        Err(e) if cleanup::interrupted_within(SIGNAL_FLAG_WAIT) => {
            eprintln!("echomq bench: {} ({e})", BenchError::Interrupted);
            std::process::exit(cleanup::INTERRUPTED_EXIT);
        }
        Err(e) => Err(e.to_string()),
    }
}

fn bench(args: &BenchArgs) -> Result<(), BenchError> {
    args.validate()?;
    let mut sizes = args
        .entries
        .iter()
        .map(|s| args::parse_entries(s))
        .collect::<Result<Vec<u64>, _>>()?;
    sizes.sort_unstable();
    sizes.dedup();
    let specs = args
        .targets
        .iter()
        .map(|t| TargetSpec::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    cleanup::install_signal_handler();
    let mut targets = specs
        .iter()
        .map(target::connect)
        .collect::<Result<Vec<_>, _>>()?;
    let entry_bytes = memory::entry_bytes(args.fields, args.value_bytes);
    if let Some(&largest) = sizes.last() {
        // Plain appends and the consume producer grow the stream past its size; every queue
        // holds a stream of each size.
        let extra = 2 * (args.ops + args.batch);
        let queues = args.queues as u64;
        memory::check(
            &targets,
            largest.saturating_mul(queues),
            extra.saturating_mul(queues),
            entry_bytes,
            memory::available_bytes(),
        )?;
    }
    let keys = RunKeys::new();
    for target in &mut targets {
        target.place_queues(&keys.run, args.queues)?;
    }
    let queues = targets
        .iter()
        .flat_map(|t| {
            t.queues.iter().enumerate().map(|(q, queue)| QueueInfo {
                target: t.label(),
                queue: q,
                name: queue.name.clone(),
                slot: queue.placement.as_ref().map(|(slot, _)| *slot),
                master: queue.placement.as_ref().map(|(_, m)| m.clone()),
            })
        })
        .collect();
    // One handle per queue and target for the concurrent cases, connected before anything
    // is written.
    let mut lanes = if args.runs(Operation::Append) || args.runs(Operation::Consume) {
        targets
            .iter()
            .map(|t| (0..args.queues).map(|_| t.fork()).collect())
            .collect::<Result<Vec<Vec<Target>>, _>>()?
    } else {
        targets.iter().map(|_| Vec::new()).collect()
    };
    let mut report = Report {
        // `echomq` rather than the binary's path, which says nothing about the run.
        command: std::iter::once("echomq".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        load_average: load_average(),
        config: Config {
            entries: sizes.clone(),
            fields: args.fields,
            value_bytes: args.value_bytes,
            rate: args.rate,
            samples: args.samples,
            trim_repeats: args.trim_repeats,
            trim_limit: args.trim_limit,
            ops: args.ops,
            batch: args.batch,
            queues: args.queues,
            estimated_entry_bytes: entry_bytes,
        },
        targets: targets
            .iter()
            .map(|t| TargetInfo {
                label: t.label(),
                server: t.server.clone(),
            })
            .collect(),
        consume_method: consume::METHOD.to_string(),
        queues,
        ..Report::default()
    };
    show(&table::header(&report));
    let measured = measure_all(args, &sizes, &mut targets, &mut lanes, &keys, &mut report);
    let cleaned = remove_keys(&mut targets);
    measured?;
    cleaned?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| BenchError::Output {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        std::fs::write(path, text + "\n").map_err(|e| BenchError::Output {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    }
    if let Some(path) = &args.plot {
        plot::draw(&report, path)?;
    }
    Ok(())
}

fn measure_all(
    args: &BenchArgs,
    sizes: &[u64],
    targets: &mut [Target],
    lanes: &mut [Vec<Target>],
    keys: &RunKeys,
    report: &mut Report,
) -> Result<(), BenchError> {
    let payload = Payload::new(args.fields, args.value_bytes);
    // Each table prints as soon as its measurements end, with the rows they added.
    let mut shown = table::Shown::all(report);
    let mut show_new = |report: &Report| {
        show(&table::tables_since(report, &shown));
        shown = table::Shown::all(report);
    };
    for &entries in sizes {
        let size = table::human(entries as f64);
        let mut stage = Stage::new(targets, lanes, keys, &payload, entries, args);
        for t in 0..stage.targets.len() {
            for q in 0..args.queues {
                let queue = if args.queues > 1 {
                    format!(" q{q}")
                } else {
                    String::new()
                };
                announce(&format!(
                    "{size} entries: loading {}{queue}",
                    stage.targets[t].label()
                ));
                let took = stage.grow(t, q, entries)?;
                report.load.push(LoadRow {
                    target: stage.targets[t].label(),
                    entries,
                    queue: q,
                    seconds: took.as_secs_f64(),
                    entries_per_s: entries as f64 / took.as_secs_f64(),
                });
            }
        }
        show_new(report);
        let turns = stage
            .targets
            .iter()
            .map(Target::label)
            .collect::<Vec<_>>()
            .join(", ");
        let measuring = |what: &str| announce(&format!("{size} entries: {what} ({turns})"));
        if args.runs(Operation::Window) {
            measuring("window reads");
            window::measure(&mut stage, &mut report.window)?;
            show_new(report);
        }
        if args.runs(Operation::Trim) {
            measuring("trims");
            trim::measure(&mut stage, &mut report.trim)?;
            show_new(report);
        }
        if args.runs(Operation::Append) {
            measuring("appends");
            append::measure(&mut stage, &mut report.append, &mut report.append_aggregate)?;
            show_new(report);
        }
        if args.runs(Operation::Consume) {
            measuring("consumes");
            consume::measure(
                &mut stage,
                &mut report.consume,
                &mut report.consume_aggregate,
            )?;
            show_new(report);
        }
        remove_keys(stage.targets)?;
    }
    Ok(())
}

/// What the run starts next, on stderr (the tables are stdout's): a run of several sizes and
/// targets takes a while, and says where it is.
fn announce(what: &str) {
    eprintln!("echomq bench: {what}");
}

/// Writes `text` to stdout now, not when the run ends.
fn show(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Deletes every key of the run's queues on every target; tries them all before reporting a
/// failure. A target whose connection failed (a signal can interrupt a socket read that has a
/// timeout, leaving a reply half read) is reconnected once and tried again.
fn remove_keys(targets: &mut [Target]) -> Result<(), BenchError> {
    let mut first_error = None;
    for target in targets.iter_mut() {
        let patterns: Vec<String> = target.queues.iter().map(|q| q.pattern()).collect();
        let delete_all = |t: &mut Target| -> Result<(), BenchError> {
            for pattern in &patterns {
                t.delete_matching(pattern)?;
            }
            Ok(())
        };
        if delete_all(target).is_ok() {
            continue;
        }
        let retried = target::connect(&target.spec).and_then(|mut fresh| {
            fresh.queues = target.queues.clone();
            delete_all(&mut fresh)?;
            *target = fresh;
            Ok(())
        });
        if let Err(e) = retried {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The 1-, 5- and 15-minute load averages (zeros where /proc is missing).
fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(0.0));
    [(); 3].map(|()| fields.next().unwrap_or(0.0))
}

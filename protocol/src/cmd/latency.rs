//! LATENCY: the latency monitor's reports, which `redis-cli --latency` tooling asks for.

use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, error, help, subcommand_of, subcommand_syntax, unknown_subcommand};
use crate::error::CommandError;
use crate::state::latency::Histogram;

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Print this help.",
];

/// Redis's LATENCY DOCTOR while the monitor is off.
const DOCTOR_DISABLED: &str = "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency-monitor.\n";
/// Redis's LATENCY DOCTOR with the monitor on and no event recorded.
const DOCTOR_NOTHING: &str = "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n";

/// `LATENCY LATEST|HISTORY event|RESET [event ...]|DOCTOR|GRAPH event|HISTOGRAM [command
/// ...]|HELP`. echomq's latency monitor records no event (none of Redis's events — forks,
/// fsyncs, expiry cycles above `latency-monitor-threshold` — are sampled yet), so LATEST and
/// HISTORY are empty, GRAPH has no samples and DOCTOR says what Redis says then; HISTOGRAM
/// reports the per-command latency histograms (INFO latencystats').
pub(crate) fn latency(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "help" => help(LATENCY_HELP),
        "latest" | "history" => Reply::Array(vec![]),
        "reset" => Reply::Int(0),
        "doctor" => {
            let on = ctx.state.settings().tuning.latency_monitor_threshold_ms > 0;
            let text = if on { DOCTOR_NOTHING } else { DOCTOR_DISABLED };
            Reply::Verbatim(bytes::Bytes::from_static(text.as_bytes()))
        }
        "graph" => {
            CommandError::NoLatencySamples(String::from_utf8_lossy(argv[2]).into_owned()).into()
        }
        "histogram" => histogram(ctx, &argv[2..]),
        _ => subcommand_syntax(argv),
    }
}

/// One command's LATENCY HISTOGRAM entry: `calls` and `histogram_usec`, a map of
/// microseconds to the calls at or below them.
fn entry(histogram: &Histogram) -> Reply {
    let buckets = histogram
        .cumulative_usec()
        .into_iter()
        .map(|(usec, count)| (Reply::Int(usec as i64), Reply::Int(count as i64)))
        .collect();
    Reply::Map(vec![
        (
            Reply::bulk_static("calls"),
            Reply::Int(histogram.calls() as i64),
        ),
        (Reply::bulk_static("histogram_usec"), Reply::Map(buckets)),
    ])
}

/// `LATENCY HISTOGRAM [command ...]`: every command with calls, or those named (a container
/// with its subcommands'; an unknown name is skipped), by their full names.
fn histogram(ctx: &mut Ctx<'_>, names: &[&[u8]]) -> Reply {
    if !ctx.state.settings().tuning.latency_tracking {
        return Reply::Map(vec![]);
    }
    let all = ctx.state.stats().latencies();
    let wanted = |name: &str| {
        names.is_empty()
            || names.iter().any(|n| {
                let n = String::from_utf8_lossy(n).to_ascii_lowercase();
                name == n
                    || name
                        .split_once('|')
                        .is_some_and(|(container, _)| container == n)
            })
    };
    Reply::Map(
        all.iter()
            .filter(|(name, h)| !h.is_empty() && wanted(name))
            .map(|(name, h)| (Reply::bulk(name.as_bytes()), entry(h)))
            .collect(),
    )
}

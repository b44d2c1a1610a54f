//! LATENCY: the latency monitor's reports, which `redis-cli --latency` tooling asks for.

use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, error, help, subcommand_of, subcommand_syntax, unknown_subcommand};

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

/// `LATENCY LATEST|HISTORY event|RESET [event ...]|HELP`: echomq's latency monitor is off
/// (`latency-monitor-threshold 0`, Redis's default), so there are no samples.
pub(crate) fn latency(_: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
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
        _ => subcommand_syntax(argv),
    }
}

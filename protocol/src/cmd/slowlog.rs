//! SLOWLOG: the commands that ran longer than `slowlog-log-slower-than` (the log itself is
//! the server's, `state/slowlog.rs`).

use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, error, help, int_arg, is, subcommand_of, subcommand_syntax, unknown_subcommand};
use crate::error::CommandError;
use crate::state::slowlog::Entry;

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Print this help.",
];

fn slowlog_entry(entry: Entry) -> Reply {
    Reply::Array(vec![
        Reply::Int(entry.id as i64),
        Reply::Int(entry.time_s as i64),
        Reply::Int(entry.usec as i64),
        Reply::Array(entry.argv.into_iter().map(Reply::Bulk).collect()),
        Reply::bulk(entry.peer),
        Reply::Bulk(entry.name),
    ])
}

/// `SLOWLOG GET [count]|LEN|RESET|HELP`.
pub(crate) fn slowlog(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(found) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !found.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(found.full_name.to_string()));
    }
    let log = ctx.state.slowlog();
    let sub = argv[1];
    let argc = argv.len();
    if argc == 2 && is(sub, "help") {
        help(SLOWLOG_HELP)
    } else if argc == 2 && is(sub, "reset") {
        log.reset();
        Reply::OK
    } else if argc == 2 && is(sub, "len") {
        Reply::Int(log.len() as i64)
    } else if (argc == 2 || argc == 3) && is(sub, "get") {
        let count = match argv.get(2).map(|a| int_arg(a)) {
            None => Some(10),
            Some(Ok(-1)) => None,
            Some(Ok(n)) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Some(Ok(_)) | Some(Err(_)) => {
                return CommandError::SlowlogCount.into();
            }
        };
        Reply::Array(log.newest(count).into_iter().map(slowlog_entry).collect())
    } else {
        subcommand_syntax(argv)
    }
}

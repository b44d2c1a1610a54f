//! Command dispatch: the server's own commands (this folder, one file per family) around the
//! engine's stream commands.
//!
//! [`execute`] is the one path every request takes: look the command up, check arity,
//! authentication, MULTI queuing and `maxmemory`, run it (stream commands in the engine,
//! XREAD/XREADGROUP possibly blocking), and count it for INFO. Server commands run under the
//! keyspace lock with one time snapshot, through a [`Ctx`].

mod archive;
mod config;
mod connection;
mod info;
mod introspection;
mod keys;
mod strings;
mod transaction;

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use echomq_engine::command as stream;
use echomq_engine::{BlockedHandle, Db, Error as EngineError, Execution, Reply, Snapshot, Wake};

use crate::server::Shared;
use crate::server::client::ClientState;
use crate::server::stats::CallOutcome;

/// What the connection does after a command.
#[derive(Debug)]
pub(crate) enum Action {
    /// Send this reply.
    Reply(Reply),
    /// The command is blocked; send its reply when the handle has one.
    Block(BlockedHandle),
    /// Send this reply, then close the connection (QUIT).
    Close(Reply),
}

/// What a server command sees.
pub(crate) struct Ctx<'a> {
    pub shared: &'a Shared,
    pub client: &'a mut ClientState,
    pub dbs: &'a mut [Db],
    pub snapshot: &'a Snapshot,
    /// Set by QUIT: close after replying.
    pub close: bool,
}

impl Ctx<'_> {
    /// The client's database.
    pub fn db(&mut self) -> &mut Db {
        let index = self.client.db.min(self.dbs.len() - 1);
        &mut self.dbs[index]
    }
}

type Run = fn(&mut Ctx<'_>, &[&[u8]]) -> Reply;

/// Allowed before AUTH.
const NO_AUTH: u8 = 1;
/// Runs at once inside MULTI instead of being queued.
const TX_CONTROL: u8 = 2;
/// Refused when over `maxmemory`.
const DENY_OOM: u8 = 4;

struct Command {
    name: &'static str,
    arity: i32,
    flags: u8,
    run: Run,
}

const COMMANDS: &[Command] = &[
    Command {
        name: "ping",
        arity: -1,
        flags: 0,
        run: connection::ping,
    },
    Command {
        name: "echo",
        arity: 2,
        flags: 0,
        run: connection::echo,
    },
    Command {
        name: "hello",
        arity: -1,
        flags: NO_AUTH,
        run: connection::hello,
    },
    Command {
        name: "auth",
        arity: -2,
        flags: NO_AUTH,
        run: connection::auth,
    },
    Command {
        name: "select",
        arity: 2,
        flags: 0,
        run: connection::select,
    },
    Command {
        name: "quit",
        arity: -1,
        flags: NO_AUTH | TX_CONTROL,
        run: connection::quit,
    },
    Command {
        name: "reset",
        arity: 1,
        flags: NO_AUTH | TX_CONTROL,
        run: connection::reset,
    },
    Command {
        name: "client",
        arity: -2,
        flags: 0,
        run: connection::client,
    },
    Command {
        name: "del",
        arity: -2,
        flags: 0,
        run: keys::del,
    },
    Command {
        name: "unlink",
        arity: -2,
        flags: 0,
        run: keys::del,
    },
    Command {
        name: "exists",
        arity: -2,
        flags: 0,
        run: keys::exists,
    },
    Command {
        name: "type",
        arity: 2,
        flags: 0,
        run: keys::type_,
    },
    Command {
        name: "keys",
        arity: 2,
        flags: 0,
        run: keys::keys,
    },
    Command {
        name: "scan",
        arity: -2,
        flags: 0,
        run: keys::scan,
    },
    Command {
        name: "dbsize",
        arity: 1,
        flags: 0,
        run: keys::dbsize,
    },
    Command {
        name: "rename",
        arity: 3,
        flags: 0,
        run: keys::rename,
    },
    Command {
        name: "renamenx",
        arity: 3,
        flags: 0,
        run: keys::renamenx,
    },
    Command {
        name: "flushdb",
        arity: -1,
        flags: 0,
        run: keys::flushdb,
    },
    Command {
        name: "flushall",
        arity: -1,
        flags: 0,
        run: keys::flushall,
    },
    Command {
        name: "set",
        arity: -3,
        flags: DENY_OOM,
        run: strings::set,
    },
    Command {
        name: "get",
        arity: 2,
        flags: 0,
        run: strings::get,
    },
    Command {
        name: "incr",
        arity: 2,
        flags: DENY_OOM,
        run: strings::incr,
    },
    Command {
        name: "multi",
        arity: 1,
        flags: TX_CONTROL,
        run: transaction::multi,
    },
    Command {
        name: "exec",
        arity: 1,
        flags: TX_CONTROL,
        run: transaction::exec,
    },
    Command {
        name: "discard",
        arity: 1,
        flags: TX_CONTROL,
        run: transaction::discard,
    },
    Command {
        name: "watch",
        arity: -2,
        flags: TX_CONTROL,
        run: transaction::watch,
    },
    Command {
        name: "unwatch",
        arity: 1,
        flags: 0,
        run: transaction::unwatch,
    },
    Command {
        name: "config",
        arity: -2,
        flags: 0,
        run: config::config,
    },
    Command {
        name: "info",
        arity: -1,
        flags: 0,
        run: info::info,
    },
    Command {
        name: "command",
        arity: -1,
        flags: 0,
        run: introspection::command,
    },
    Command {
        name: "time",
        arity: 1,
        flags: 0,
        run: introspection::time,
    },
    Command {
        name: "function",
        arity: -2,
        flags: 0,
        run: introspection::accept,
    },
    Command {
        name: "script",
        arity: -2,
        flags: 0,
        run: introspection::accept,
    },
    Command {
        name: "emq.xrange",
        arity: -4,
        flags: 0,
        run: archive::xrange,
    },
    Command {
        name: "emq.xrevrange",
        arity: -4,
        flags: 0,
        run: archive::xrevrange,
    },
    Command {
        name: "debug",
        arity: -2,
        flags: 0,
        run: introspection::debug,
    },
];

/// Stream commands refused over `maxmemory` (Redis's `denyoom` ones).
const STREAM_DENY_OOM: &[&str] = &[
    "xadd",
    "xgroup|create",
    "xgroup|createconsumer",
    "xsetid",
    "xidmprecord",
];

fn server_command(name: &[u8]) -> Option<&'static Command> {
    COMMANDS
        .iter()
        .find(|c| name.eq_ignore_ascii_case(c.name.as_bytes()))
}

/// A command's lower-case name and arity, server or stream; `None` if unknown.
pub(crate) fn lookup(name: &[u8]) -> Option<(&'static str, i32)> {
    if let Some(c) = server_command(name) {
        return Some((c.name, c.arity));
    }
    let arity = stream::arity(name)?;
    stream::names()
        .find(|n| name.eq_ignore_ascii_case(n.as_bytes()))
        .map(|n| (n, arity))
}

fn arity_ok(arity: i32, argc: usize) -> bool {
    let (arity, argc) = (i64::from(arity), argc as i64);
    !((arity > 0 && argc != arity) || argc < -arity)
}

/// An error reply from an engine error.
pub(crate) fn error(e: impl std::fmt::Display) -> Reply {
    Reply::Error(e.to_string())
}

/// The text of an error reply, if it is one.
fn error_text(reply: &Reply) -> Option<&str> {
    match reply {
        Reply::Error(text) => Some(text),
        _ => None,
    }
}

/// Container commands and their subcommands. Redis names and counts calls per subcommand
/// (`cmdstat_xgroup|create`), and an unknown subcommand is refused before it counts as a call.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "xgroup",
        &[
            "xgroup|create",
            "xgroup|setid",
            "xgroup|destroy",
            "xgroup|createconsumer",
            "xgroup|delconsumer",
            "xgroup|help",
        ],
    ),
    (
        "xinfo",
        &[
            "xinfo|consumers",
            "xinfo|groups",
            "xinfo|stream",
            "xinfo|help",
        ],
    ),
    (
        "config",
        &[
            "config|get",
            "config|set",
            "config|resetstat",
            "config|rewrite",
            "config|help",
        ],
    ),
    (
        "client",
        &[
            "client|id",
            "client|getname",
            "client|setname",
            "client|setinfo",
            "client|info",
            "client|list",
            "client|kill",
            "client|no-evict",
            "client|no-touch",
            "client|help",
        ],
    ),
    (
        "command",
        &[
            "command|count",
            "command|docs",
            "command|info",
            "command|list",
        ],
    ),
    (
        "function",
        &["function|flush", "function|list", "function|kill"],
    ),
    ("script", &["script|flush", "script|kill"]),
];

/// The name a call is counted under: `xgroup|create` for a container's subcommand, the
/// command's own name otherwise. An unknown subcommand is Redis's error.
fn stat_name(name: &'static str, argv: &[&[u8]]) -> Result<&'static str, Reply> {
    let Some((_, subs)) = SUBCOMMANDS.iter().find(|(container, _)| *container == name) else {
        return Ok(name);
    };
    let Some(sub) = argv.get(1) else {
        return Ok(name);
    };
    subs.iter()
        .copied()
        .find(|full| {
            full.split_once('|')
                .is_some_and(|(_, s)| sub.eq_ignore_ascii_case(s.as_bytes()))
        })
        .ok_or_else(|| unknown_subcommand(sub, upper(name)))
}

/// The upper-case name Redis shows in `Try XGROUP HELP.`.
fn upper(name: &str) -> &'static str {
    match name {
        "xgroup" => "XGROUP",
        "xinfo" => "XINFO",
        "config" => "CONFIG",
        "client" => "CLIENT",
        "command" => "COMMAND",
        "function" => "FUNCTION",
        _ => "SCRIPT",
    }
}

/// Runs one request from a client.
pub(crate) fn execute(
    shared: &Arc<Shared>,
    client: &mut ClientState,
    argv: &[&[u8]],
    waker: &Arc<dyn Wake>,
) -> Action {
    let started = Instant::now();
    let Some((name, arity)) = lookup(argv[0]) else {
        let reply = error(stream::unknown_command(argv[0], &argv[1..]));
        if client.multi.is_some() {
            client.multi_failed = true;
        }
        shared
            .stats
            .record_error(error_text(&reply).unwrap_or("ERR"));
        return Action::Reply(reply);
    };
    let name = match stat_name(name, argv) {
        Ok(name) => name,
        Err(reply) => {
            if client.multi.is_some() {
                client.multi_failed = true;
            }
            shared
                .stats
                .record_error(error_text(&reply).unwrap_or("ERR"));
            return Action::Reply(reply);
        }
    };
    client.info.touch(name);
    let reject = |client: &mut ClientState, reply: Reply| {
        if client.multi.is_some() {
            client.multi_failed = true;
        }
        shared.stats.record(
            name,
            0,
            CallOutcome::Rejected(error_text(&reply).unwrap_or("ERR")),
        );
        Action::Reply(reply)
    };
    if !arity_ok(arity, argv.len()) {
        return reject(client, error(EngineError::WrongArity(name.to_string())));
    }
    let server = server_command(argv[0]);
    let flags = server.map_or(0, |c| c.flags);
    if !client.authenticated && flags & NO_AUTH == 0 {
        return reject(
            client,
            Reply::Error("NOAUTH Authentication required.".into()),
        );
    }
    if let Some(queue) = client.multi.as_mut()
        && flags & TX_CONTROL == 0
    {
        queue.push(argv.iter().map(|a| Bytes::copy_from_slice(a)).collect());
        return Action::Reply(Reply::Status("QUEUED"));
    }
    let deny_oom = flags & DENY_OOM != 0 || STREAM_DENY_OOM.contains(&name);
    if deny_oom && over_maxmemory(shared) {
        return reject(
            client,
            Reply::Error("OOM command not allowed when used memory > 'maxmemory'.".into()),
        );
    }
    let action = match server {
        Some(command) => {
            let mut close = false;
            let reply = shared.keyspace.run_all(|dbs, snapshot| {
                let mut ctx = Ctx {
                    shared,
                    client,
                    dbs,
                    snapshot,
                    close: false,
                };
                let reply = (command.run)(&mut ctx, argv);
                close = ctx.close;
                reply
            });
            if close {
                Action::Close(reply)
            } else {
                Action::Reply(reply)
            }
        }
        None if name == "xread" || name == "xreadgroup" => {
            match shared
                .keyspace
                .execute_blocking_in(client.db, argv, Arc::clone(waker))
            {
                Execution::Done(result) => Action::Reply(result.unwrap_or_else(error)),
                Execution::Blocked(handle) => Action::Block(handle),
            }
        }
        None if archive::intercepts(shared, client.db, name, argv) => {
            Action::Reply(shared.keyspace.run_db(client.db, |db, snapshot| {
                archive::run_trim_command(shared, db, snapshot, name, argv)
            }))
        }
        None => Action::Reply(
            shared
                .keyspace
                .run_db(client.db, |db, snapshot| {
                    stream::execute(db, snapshot, argv)
                })
                .unwrap_or_else(error),
        ),
    };
    let usec = started.elapsed().as_micros() as u64;
    let outcome = match &action {
        Action::Reply(reply) | Action::Close(reply) => {
            error_text(reply).map_or(CallOutcome::Ok, CallOutcome::Failed)
        }
        Action::Block(_) => CallOutcome::Ok,
    };
    shared.stats.record(name, usec, outcome);
    action
}

/// Runs a queued command inside EXEC (already under the lock, blocking impossible).
pub(crate) fn execute_queued(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some((name, _)) = lookup(argv[0]) else {
        return error(stream::unknown_command(argv[0], &[]));
    };
    let reply = match server_command(argv[0]) {
        Some(command) => (command.run)(ctx, argv),
        None if archive::intercepts(ctx.shared, ctx.client.db, name, argv) => {
            let snapshot = *ctx.snapshot;
            let shared = ctx.shared;
            archive::run_trim_command(shared, ctx.db(), &snapshot, name, argv)
        }
        None => {
            let snapshot = *ctx.snapshot;
            stream::execute(ctx.db(), &snapshot, argv).unwrap_or_else(error)
        }
    };
    let outcome = error_text(&reply).map_or(CallOutcome::Ok, CallOutcome::Failed);
    ctx.shared.stats.record(name, 0, outcome);
    reply
}

fn over_maxmemory(shared: &Shared) -> bool {
    let maxmemory = shared.settings.read().maxmemory;
    maxmemory > 0 && shared.memory_in_use() > maxmemory
}

/// Parses an integer argument strictly, as Redis does.
pub(crate) fn int_arg(arg: &[u8]) -> Result<i64, Reply> {
    stream::parse_i64(arg).map_err(error)
}

/// Whether `arg` is `word` in any case.
pub(crate) fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// Redis's `unknown subcommand` error for a container command.
pub(crate) fn unknown_subcommand(sub: &[u8], command: &'static str) -> Reply {
    error(EngineError::UnknownSubcommand {
        sub: String::from_utf8_lossy(sub).into_owned(),
        command,
    })
}

/// Redis's `unknown subcommand or wrong number of arguments` error.
pub(crate) fn subcommand_syntax(sub: &[u8], command: &'static str) -> Reply {
    error(EngineError::SubcommandSyntax {
        sub: String::from_utf8_lossy(sub).into_owned(),
        command,
    })
}

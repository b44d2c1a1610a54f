//! Command dispatch: the server's own commands (this folder, one file per family: those that
//! need several databases or the server's state) around the engine's commands (the value
//! types' and the one-database key commands).
//!
//! [`execute`] is the one path every request takes: look the command up in the tables
//! ([`table`]: the server's, then the engine's), name the call (`xgroup|create` for a
//! subcommand) or refuse an unknown subcommand, check arity, authentication, ACLs, `maxmemory` (the
//! table's DENY_OOM flag, of the command, its subcommand or a queued command for EXEC) and
//! MULTI queuing, run it (engine
//! commands in the engine, BLOCKING ones possibly blocking), and count it for INFO. A request
//! refused before it runs goes through [`refuse`]: inside MULTI it makes EXEC abort, and its
//! error is counted. Server commands run under the keyspace lock with one time snapshot,
//! through a [`Ctx`]. The commands see the server only through [`ServerState`]. Every command,
//! the server's included, produces its own effects (propagated form, events, WATCH, dirty)
//! through the `Db` as it runs: nothing here recomputes them from the name or the reply.

mod acl;
mod archive;
mod clock;
mod cluster;
mod command_docs_reads;
mod command_meta;
pub(crate) mod command_rows;
mod command_rows_data;
mod config;
pub(crate) mod connection;
mod copy;
mod debug;
mod dump;
mod flushall;
mod info;
mod introspection;
mod latency;
mod lolwut;
mod memory;
mod memory_doctor;
mod object;
mod overhead;
mod pause;
mod persistence;
mod pubsub;
mod recent;
pub(crate) mod rename;
pub(crate) mod replay;
mod role;
mod security;
mod shutdown;
mod slowlog;
mod table;
mod tracking;
mod transaction;
mod unknown;
mod wait;

use std::sync::Arc;

use bytes::Bytes;
use echomq_engine::command::flags::{
    BLOCKING, DENY_OOM, MAY_REPLICATE, NO_AUTH, NO_MULTI, TX_CONTROL, WRITE,
};
use echomq_engine::command::{self as engine, CommandSpec, Subcommand};
use echomq_engine::{Batch, Db, Dbs, Error as EngineError, Execution, Reply, Snapshot, Wake};

use crate::error::CommandError;
use crate::persist::aof::load::AOF_CLIENT_ID;
use crate::resp::Protocol;
use crate::state::stats::{CallId, CallOutcome};
use crate::state::{Action, ClientState, ServerState};
pub(crate) use acl::{
    acl_calls, acl_find, acl_has_keys, acl_key_flags, script_caller, user_permits,
};
pub(crate) use cluster::new_node_id;
pub(crate) use recent::RecentCommand;
pub(crate) use table::Found;
use table::{Command, Run};
pub(crate) use table::{call_name, find, lookup};

/// What a server command sees.
pub(crate) struct Ctx<'a> {
    pub state: &'a ServerState,
    pub client: &'a mut ClientState,
    /// Every database, each readied for the call when first reached.
    pub dbs: Dbs<'a>,
    pub snapshot: &'a Snapshot,
    /// Set by QUIT: close after replying.
    pub close: bool,
    /// Set by a command whose reply is not one value (SUBSCRIBE's confirmations): these
    /// bytes go out instead of the reply.
    pub raw: Option<Vec<u8>>,
    /// Set by SHUTDOWN: the connection closes without its reply (or any other it owes).
    pub drop_connection: bool,
}

impl Ctx<'_> {
    /// The client's database.
    pub fn db(&mut self) -> &mut Db {
        self.dbs.clamped(self.client.db)
    }
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

/// How a call that replied `reply` is counted: an error reply fails it, and an error already
/// encoded ([`Reply::Raw`], a script's error from a command it ran) fails it without
/// counting the error again.
fn outcome_of(reply: &Reply) -> CallOutcome<'_> {
    match reply {
        Reply::Raw(bytes) if bytes.first() == Some(&b'-') => CallOutcome::FailedCounted,
        reply => error_text(reply).map_or(CallOutcome::Ok, CallOutcome::Failed),
    }
}

/// The name a call is counted under, its id ([`CallId`]) and its subcommand: `xgroup|create`
/// for a container's subcommand, the command's own name otherwise (a container without a
/// subcommand argument included, which then fails its arity). Redis refuses an unknown
/// subcommand before it counts as a call.
fn counted_as(
    spec: &'static CommandSpec,
    id: CallId,
    argv: &[&[u8]],
) -> Result<(Counted, Option<&'static Subcommand>), Reply> {
    let Some(sub) = argv.get(1).filter(|_| !spec.subcommands.is_empty()) else {
        return Ok(((id, spec.name), None));
    };
    match table::find_subcommand(spec, id, sub) {
        Some((found, sub_id)) => Ok(((sub_id, found.full_name), Some(found))),
        None => Err(unknown_subcommand_in(spec, sub)),
    }
}

/// A call's id and the name it is counted under.
type Counted = (CallId, &'static str);

/// Answers a request refused before it ran: inside MULTI the transaction is marked failed, so
/// EXEC aborts; the error is counted, as a rejected call of `counted` when the call has a name
/// (an unknown command or subcommand has none).
fn refuse(
    state: &ServerState,
    client: &mut ClientState,
    counted: Option<Counted>,
    reply: Reply,
) -> Action {
    if client.multi.is_some() {
        client.multi_failed = true;
    }
    let text = error_text(&reply).unwrap_or("ERR");
    match counted {
        Some((id, name)) => state
            .stats()
            .record(id, name, 0, CallOutcome::Rejected(text)),
        None => state.stats().record_error(text),
    }
    Action::Reply(reply)
}

/// Runs one request from a client, in the connection's keyspace batch.
pub(crate) fn execute(
    state: &ServerState,
    client: &mut ClientState,
    batch: &mut Batch<'_>,
    argv: &[&[u8]],
    waker: &Arc<dyn Wake>,
) -> Action {
    let action = run_request(state, client, batch, argv, waker);
    // MULTI, a queued command, EXEC, DISCARD, RESET and a refused EXEC open, grow or end a
    // transaction; during EXEC the client still shows what it queued, as Redis's does.
    client.info.set_multi(client.multi.as_ref().map(Vec::len));
    client.info.memory.note_queue(client.multi.as_deref());
    action
}

/// [`execute`], but for the transaction CLIENT LIST shows.
fn run_request(
    state: &ServerState,
    client: &mut ClientState,
    batch: &mut Batch<'_>,
    argv: &[&[u8]],
    waker: &Arc<dyn Wake>,
) -> Action {
    let started = client
        .clock_mark
        .map_or_else(crate::monotonic::now_ns, |mark| mark.ns);
    batch.set_wall_ms(client.clock_mark.and_then(crate::monotonic::Mark::wall_ms));
    let Some((found, id)) = client.recent_command.find(argv[0]) else {
        // An HTTP request's lines (a browser tricked into talking to the port): Redis closes.
        if security::is_attack(argv[0]) {
            security::warn(&client.info.addr);
            return Action::Drop;
        }
        // An echo that is not UTF-8 goes out as raw bytes, counted as any unknown command.
        if let Some(line) = unknown::raw_unknown_command(argv) {
            if client.multi.is_some() {
                client.multi_failed = true;
            }
            state.stats().record_error("ERR");
            return Action::Raw(line);
        }
        let reply = error(engine::unknown_command(argv[0], &argv[1..]));
        return refuse(state, client, None, reply);
    };
    let spec = found.spec();
    let (counted, sub) = match counted_as(spec, id, argv) {
        Ok(counted) => counted,
        Err(reply) => return refuse(state, client, None, reply),
    };
    let name = counted.1;
    client.info.touch(counted.0);
    if !spec.arity_ok(argv.len()) {
        let reply = error(EngineError::WrongArity(name.to_string()));
        return refuse(state, client, Some(counted), reply);
    }
    // Redis's protected commands, checked before authentication as Redis does.
    if spec.name == "debug"
        && !state
            .settings()
            .enable_debug_command
            .allows(&client.info.addr)
    {
        let reply = CommandError::DebugNotAllowed.into();
        return refuse(state, client, Some(counted), reply);
    }
    if !client.authenticated && !spec.has(NO_AUTH) {
        // A rejected EXEC aborts the transaction with the reason (Redis's execCommandAbort).
        if name == "exec" {
            client.multi = None;
            let reply = CommandError::ExecAbortNoAuth.into();
            return refuse(state, client, Some(counted), reply);
        }
        let reply = CommandError::NoAuth.into();
        return refuse(state, client, Some(counted), reply);
    }
    // ACLs: one branch while every user may run everything.
    if state.acl().restricted()
        && let Some(action) = acl::refusal(state, client, counted.0, spec, argv)
    {
        return match action {
            Action::Reply(reply) => refuse(state, client, Some(counted), reply),
            other => other,
        };
    }
    if state.cluster_enabled()
        && let Some(reply) = cluster::refusal(state, client, spec, argv)
    {
        return refuse(state, client, Some(counted), reply);
    }
    if let Some(until) = state
        .pause()
        .holds(spec.has(WRITE) || spec.has(MAY_REPLICATE))
    {
        return Action::Postpone(until);
    }
    // RESP2 pub/sub mode: only (un)subscribing, PING, QUIT and RESET.
    if client.protocol == Protocol::Resp2
        && client.info.pubsub.is_subscribed()
        && !pubsub::allowed_when_subscribed(spec.name)
    {
        return refuse(
            state,
            client,
            Some(counted),
            pubsub::subscribed_mode_error(name),
        );
    }
    if client.multi.is_some() && spec.has(NO_MULTI) {
        client.multi_failed = true;
        let reply = CommandError::NotAllowedInMulti.into();
        return refuse(state, client, Some(counted), reply);
    }
    // A script past `busy-reply-threshold` holds the keyspace lock: answered before anything
    // waits for it (one relaxed load while none is).
    if state.busy().active() {
        match crate::script::busy::refusal(state, name, argv) {
            crate::script::busy::WhileBusy::Answer(reply) => return Action::Reply(reply),
            crate::script::busy::WhileBusy::Refuse(reply) => {
                return refuse(state, client, Some(counted), reply);
            }
            crate::script::busy::WhileBusy::Proceed => {}
        }
    }
    // `maxmemory`, before queuing as Redis checks it: a DENY_OOM command refused inside MULTI
    // makes EXEC abort; EXEC of a transaction that queued one is refused whole. The AOF's
    // replay is not checked (Redis loads by calling the commands directly): a dataset larger
    // than the limit must load whole, never lose writes.
    // Eviction runs first, for every command (Redis's `performEvictions`): `-OOM` only when it
    // could not free enough.
    let deny_oom = spec.has(DENY_OOM) || sub.is_some_and(|s| s.has(DENY_OOM));
    let out_of_memory = client.info.id != AOF_CLIENT_ID && state.make_room(batch);
    if (deny_oom || name == "exec")
        && out_of_memory
        && (deny_oom || transaction::queued_deny_oom(client))
    {
        if name == "exec" {
            transaction::abort(client, batch);
            let reply = CommandError::ExecAbortOutOfMemory.into();
            return refuse(state, client, Some(counted), reply);
        }
        let reply = CommandError::OutOfMemory.into();
        return refuse(state, client, Some(counted), reply);
    }
    if let Some(queue) = client.multi.as_mut()
        && !spec.has(TX_CONTROL)
    {
        queue.push(argv.iter().map(|a| Bytes::copy_from_slice(a)).collect());
        return Action::Reply(Reply::Status("QUEUED"));
    }
    if let Some(reply) = persistence::refusal(state, client, spec) {
        return refuse(state, client, Some(counted), reply);
    }
    let action = match found {
        // WAITAOF fsyncs: not inside a keyspace call (a pipelined batch whose earlier requests
        // took the lock still holds it, as for any request of the batch).
        Found::Server(_) if name == "waitaof" => Action::Reply(persistence::waitaof(state, argv)),
        // Moving the clock runs the expiry it makes due, under the batch's lock.
        Found::Server(_) if name == "emq.clock" => {
            Action::Reply(clock::emq_clock(state, batch, argv))
        }
        Found::Server(Command {
            run: Run::NoKeyspace(run),
            ..
        }) => Action::Reply(run(state, client, argv)),
        Found::Server(Command {
            run: Run::Keyspace(run),
            ..
        }) => {
            let (mut close, mut raw, mut drop_connection) = (false, None, false);
            let reply = batch.run_all(|dbs, snapshot| {
                tracking::running(state, client);
                let mut ctx = Ctx {
                    state,
                    client,
                    dbs,
                    snapshot,
                    close: false,
                    raw: None,
                    drop_connection: false,
                };
                let no_touch = ctx.client.info.no_touch();
                ctx.db().set_no_touch(no_touch);
                ctx.db().expire_keys_of(spec, argv);
                let reply = run(&mut ctx, argv);
                close = ctx.close;
                raw = ctx.raw;
                drop_connection = ctx.drop_connection;
                reply
            });
            if drop_connection {
                Action::Drop
            } else if let Some(raw) = raw {
                Action::Raw(raw)
            } else if close {
                Action::Close(reply)
            } else {
                Action::Reply(reply)
            }
        }
        Found::Engine(spec) if spec.has(BLOCKING) => {
            tracking::running(state, client);
            match batch.execute_blocking_as(client.db, client.protocol, argv, Arc::clone(waker)) {
                Execution::Done(result) => Action::Reply(result.unwrap_or_else(error)),
                Execution::Blocked(handle) => Action::Block(handle),
            }
        }
        Found::Engine(spec) => Action::Reply(
            batch
                .run_db(client.db, |db, snapshot| {
                    tracking::running(state, client);
                    db.set_no_touch(client.info.no_touch());
                    let snapshot = snapshot.speaking(client.protocol);
                    engine::execute_spec(db, &snapshot, spec, argv)
                })
                .unwrap_or_else(error),
        ),
    };
    tracking::after_call(state, client, spec, argv, false);
    let action = tracking::flush_push_first(client, name, argv, action);
    let ended = crate::monotonic::now_ns();
    if let Some(mark) = client.clock_mark {
        client.clock_mark = Some(mark.at(ended));
    }
    let ns = ended.saturating_sub(started);
    let usec = ns / 1000;
    // EXEC is not logged (its commands are not either, as in Redis); AUTH, HELLO and the ACL
    // subcommands naming users would show a password or a user's name (Redis redacts those
    // arguments).
    if state.is_slow(usec)
        && !matches!(
            name,
            "exec" | "auth" | "hello" | "acl|setuser" | "acl|deluser" | "acl|getuser"
        )
    {
        state.log_if_slow(&client.info, argv, usec);
    }
    if state.monitors().any() && !introspection::hidden_from_monitors(name) {
        state.feed_monitors(&client.info, client.db, argv);
    }
    let outcome = match &action {
        Action::Reply(reply) | Action::Close(reply) => outcome_of(reply),
        Action::Block(_) | Action::Raw(_) | Action::Drop | Action::Postpone(_) => CallOutcome::Ok,
    };
    let stats = state.stats();
    let counter = client.counter.get_or_insert_with(|| stats.counter());
    stats.record_in(counter, counted.0, name, ns, outcome);
    if !matches!(action, Action::Block(_)) {
        client.info.count_command();
    }
    action
}

/// The spec of the command called `name` (any case), server or engine; `None` if unknown.
pub(crate) fn spec_of(name: &[u8]) -> Option<&'static CommandSpec> {
    table::lookup(name).map(Found::spec)
}

/// Runs a queued command inside EXEC (already under the lock, blocking impossible). The call
/// is counted under the command's own name (`xgroup`, where a call outside MULTI counts as
/// `xgroup|create`).
pub(crate) fn execute_queued(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some((found, id)) = rename::find(argv[0]) else {
        return error(engine::unknown_command(argv[0], &[]));
    };
    execute_found(ctx, argv, found, id)
}

/// [`execute_queued`] of a command already looked up: `found` and `id` are what
/// `rename::find(argv[0])` answers.
pub(crate) fn execute_found(ctx: &mut Ctx<'_>, argv: &[&[u8]], found: Found, id: CallId) -> Reply {
    let started = crate::monotonic::now_ns();
    let name = found.spec().name;
    // The rules may have changed since the command was queued: Redis checks again.
    if ctx.state.acl().restricted()
        && let Some(reply) = acl::exec_refusal(ctx.state, ctx.client, found.spec(), id, argv)
    {
        return reply;
    }
    let reply = match found {
        Found::Server(Command {
            run: Run::NoKeyspace(run),
            ..
        }) => run(ctx.state, ctx.client, argv),
        Found::Server(Command {
            spec,
            run: Run::Keyspace(run),
        }) => {
            let no_touch = ctx.client.info.no_touch();
            ctx.db().set_no_touch(no_touch);
            ctx.db().expire_keys_of(spec, argv);
            let reply = run(ctx, argv);
            // Inside EXEC a reply is a value in EXEC's array: raw bytes have no place there.
            ctx.raw = None;
            reply
        }
        Found::Engine(spec) => {
            let no_touch = ctx.client.info.no_touch();
            ctx.db().set_no_touch(no_touch);
            let snapshot = ctx.snapshot.speaking(ctx.client.protocol);
            engine::execute_spec(ctx.db(), &snapshot, spec, argv).unwrap_or_else(error)
        }
    };
    tracking::after_call(ctx.state, ctx.client, found.spec(), argv, true);
    let outcome = outcome_of(&reply);
    let ns = crate::monotonic::now_ns().saturating_sub(started);
    ctx.state.stats().record(id, name, ns, outcome);
    if ctx.state.monitors().any() && !introspection::hidden_from_monitors(name) {
        let source = if ctx.client.in_script {
            "lua".to_string()
        } else {
            ctx.client.info.addr.to_string()
        };
        ctx.state
            .feed_monitors_as(&ctx.client.info, &source, ctx.client.db, argv);
    }
    reply
}

/// [`persistence::refusal`] for the command named `name`.
#[cfg(test)]
pub(crate) fn persistence_refusal(
    state: &ServerState,
    client: &ClientState,
    name: &str,
) -> Option<Reply> {
    persistence::refusal(state, client, lookup(name.as_bytes())?.spec())
}

/// Parses an integer argument strictly, as Redis does.
pub(crate) fn int_arg(arg: &[u8]) -> Result<i64, Reply> {
    engine::parse_i64(arg).map_err(error)
}

/// A HELP subcommand's reply: its lines as status replies.
fn help(lines: &[&'static str]) -> Reply {
    Reply::Array(lines.iter().map(|l| Reply::Status(l)).collect())
}

/// Whether `arg` is `word` in any case.
pub(crate) fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// The table row of `argv`'s container command (`argv[0]`) and the subcommand it names
/// (`argv[1]`), `None` when that is not one of the container's.
pub(crate) fn subcommand_of(argv: &[&[u8]]) -> Option<&'static Subcommand> {
    let spec = rename::lookup(argv[0])?.spec();
    spec.subcommand(argv.get(1)?)
}

/// The upper-case name `argv`'s container shows in its errors (`Try CLIENT HELP.`).
fn container_of(argv: &[&[u8]]) -> &'static str {
    rename::lookup(argv[0]).map_or("", |found| found.spec().container)
}

/// `argv[1]` as an error shows it.
fn typed_sub(argv: &[&[u8]]) -> String {
    String::from_utf8_lossy(argv.get(1).copied().unwrap_or_default()).into_owned()
}

fn unknown_subcommand_in(spec: &CommandSpec, sub: &[u8]) -> Reply {
    error(EngineError::UnknownSubcommand {
        sub: String::from_utf8_lossy(sub).into_owned(),
        command: spec.container,
    })
}

/// Redis's `unknown subcommand` error for `argv`'s container command.
pub(crate) fn unknown_subcommand(argv: &[&[u8]]) -> Reply {
    error(EngineError::UnknownSubcommand {
        sub: typed_sub(argv),
        command: container_of(argv),
    })
}

/// Redis's `unknown subcommand or wrong number of arguments` error for `argv`'s container.
pub(crate) fn subcommand_syntax(argv: &[&[u8]]) -> Reply {
    error(EngineError::SubcommandSyntax {
        sub: typed_sub(argv),
        command: container_of(argv),
    })
}

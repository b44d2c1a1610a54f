//! `redis.call` and `redis.pcall`: a script's command, checked as Redis's `scriptCall` checks
//! it, then run through the server's own dispatch of a queued command
//! ([`crate::cmd::execute_queued`], the path EXEC takes), under the keyspace lock the script
//! already holds.
//!
//! So a command run from a script produces its effects (propagated form, keyspace events,
//! WATCH signals, dirty) exactly as from a client, into the execution unit of the EVAL that
//! ran it: the AOF receives them wrapped in MULTI/EXEC when there are several, as Redis's
//! effects replication does. Blocking commands run as inside EXEC: they never block.

use std::cell::{Cell, RefCell};

use bytes::BytesMut;
use echomq_engine::Reply;
use echomq_engine::command::flags::{DENY_OOM, MAY_REPLICATE, WRITE};
use mlua::{Lua, Value, WeakLua};

use super::sandbox::{self, CommandArgs, ScriptError};
use super::{busy, convert, current};
use crate::cmd::{Ctx, Found, execute_found, find, lookup, rename};
use crate::resp::{Protocol, encode};
use crate::state::stats::{CallId, CallOutcome};

/// Whether Redis marks the command (or `container|subcommand`) `noscript`: a script may not
/// run it. A `match`, so the check is a comparison by length and bytes, not a list walk.
fn is_denied(name: &str) -> bool {
    matches!(
        name,
        "acl"
            | "auth"
            | "bgrewriteaof"
            | "bgsave"
            | "client"
            | "cluster|reset"
            | "config"
            | "debug"
            | "discard"
            | "emq.clock"
            | "eval"
            | "eval_ro"
            | "evalsha"
            | "evalsha_ro"
            | "exec"
            | "failover"
            | "fcall"
            | "fcall_ro"
            | "function"
            | "hello"
            | "hotkeys"
            | "latency"
            | "module"
            | "monitor"
            | "multi"
            | "psubscribe"
            | "psync"
            | "punsubscribe"
            | "quit"
            | "replconf"
            | "replicaof"
            | "reset"
            | "role"
            | "save"
            | "script"
            | "shutdown"
            | "slaveof"
            | "ssubscribe"
            | "subscribe"
            | "sunsubscribe"
            | "sync"
            | "unsubscribe"
            | "unwatch"
            | "watch"
    )
}

/// What a script run allows its commands.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Limits {
    /// EVAL_RO, EVALSHA_RO or a `no-writes` script: write commands are refused.
    pub read_only: bool,
    /// Memory was over `maxmemory` when the script started and it lacks `allow-oom`: a
    /// DENY_OOM command is refused until the script has written.
    pub deny_oom: bool,
    /// The script ran a write command already (Redis's `SCRIPT_WRITE_DIRTY`): past that,
    /// a write cannot be refused for memory.
    pub dirty: bool,
}

/// What `redis.call` and `redis.pcall` keep across runs, in the VM that created them: the
/// running script's choices of protocol and replication (written by `redis.setresp` and
/// `redis.set_repl`, set back at each run's start), and the buffers a command's arguments
/// and reply pass through, so a command allocates nothing once the VM has run a few.
pub(crate) struct Calls {
    /// Whether the running script asked for RESP3 (`redis.setresp(3)`).
    pub resp3: Cell<bool>,
    /// `redis.set_repl`'s flags: REPL_AOF (1) and REPL_REPLICA (2); only the AOF receives
    /// what echomq propagates.
    pub repl: Cell<i32>,
    args: RefCell<CommandArgs>,
    reply: RefCell<BytesMut>,
    /// The VM's Lua, for `redis.call` to reach without a lookup in the Lua registry (a weak
    /// handle: the VM's own functions hold these buffers, and must not hold the VM).
    lua: WeakLua,
}

/// What the buffers may keep between runs: a run that passed a big argument or reply gives
/// its memory back rather than hold it in a thread's VM for good.
const KEPT_BUFFER: usize = 64 * 1024;

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls")
            .field("resp3", &self.resp3)
            .field("repl", &self.repl)
            .field("args", &self.args)
            .field("reply", &self.reply)
            .finish_non_exhaustive()
    }
}

impl Calls {
    /// The buffers and flags of `lua`'s calls.
    pub(crate) fn new(lua: &Lua) -> Calls {
        Calls {
            resp3: Cell::new(false),
            repl: Cell::new(sandbox::REPL_ALL),
            args: RefCell::default(),
            reply: RefCell::default(),
            lua: lua.weak(),
        }
    }

    /// The VM's Lua, while it exists.
    pub(crate) fn lua(&self) -> Option<Lua> {
        self.lua.try_upgrade()
    }

    /// Readies the VM for a new run.
    pub(crate) fn start(&self) {
        self.resp3.set(false);
        self.repl.set(sandbox::REPL_ALL);
    }

    /// Ends a run: buffers grown past [`KEPT_BUFFER`] are let go.
    pub(crate) fn finish(&self) {
        if let Ok(mut args) = self.args.try_borrow_mut() {
            args.shrink(KEPT_BUFFER);
        }
        if let Ok(mut reply) = self.reply.try_borrow_mut()
            && reply.capacity() > KEPT_BUFFER
        {
            *reply = BytesMut::new();
        }
    }
}

/// `redis.call` (`raise`: a failure raises Redis's error) and `redis.pcall` (a failure is
/// returned as the error table): the script's command run on the run [`current`] lends,
/// its reply as the Lua value Redis hands a script.
///
/// `fill` puts the call's arguments into the buffer it is lent, or raises Redis's refusal.
pub(crate) fn script_command(
    lua: &Lua,
    raise: bool,
    calls: &Calls,
    fill: impl FnOnce(&mut CommandArgs) -> mlua::Result<()>,
) -> mlua::Result<Value> {
    // `counted`: the error is in the error stats already (see `ScriptError`).
    let fail = |text: Vec<u8>, counted: bool| -> mlua::Result<Value> {
        if raise {
            return Err(mlua::Error::external(ScriptError { text, counted }));
        }
        error_table(lua, &ScriptError { text, counted }).map(Value::Table)
    };
    let recursive = || {
        fail(convert::error_text(b"luaRedisGenericCommand() recursive call detected. Are you doing funny stuff with Lua debug hooks?"), false)
    };
    let Ok(mut argv) = calls.args.try_borrow_mut() else {
        return recursive();
    };
    if let Err(e) = fill(&mut argv) {
        return match sandbox::script_error(&e) {
            Some(refusal) => fail(refusal.text.clone(), false),
            None => Err(e),
        };
    }
    let Ok(mut reply) = calls.reply.try_borrow_mut() else {
        return recursive();
    };
    let resp3 = calls.resp3.get();
    let suppressed = calls.repl.get() & sandbox::REPL_AOF == 0;
    let ran = current::with(|run| {
        let ctx = &mut *run.ctx;
        let was_dirty = run.limits.dirty;
        let propagating = ctx.db().propagating();
        if suppressed && propagating {
            ctx.dbs
                .all()
                .iter_mut()
                .for_each(|db| db.set_propagating(false));
        }
        let ran = argv.with_argv(|argv| call(ctx, &mut run.limits, resp3, argv, &mut reply));
        if suppressed && propagating {
            ctx.dbs
                .all()
                .iter_mut()
                .for_each(|db| db.set_propagating(true));
        }
        if run.limits.dirty && !was_dirty {
            busy::wrote();
        }
        ran
    });
    match ran {
        None => recursive(),
        Some(Ok(())) if reply.first() == Some(&b'-') => {
            let end = reply.len().saturating_sub(2).max(1);
            fail(convert::error_text(&reply[..end]), true)
        }
        Some(Ok(())) => convert::reply_to_lua(lua, &reply),
        Some(Err(text)) => fail(convert::error_text(text.as_bytes()), true),
    }
}

/// The table Redis raises or returns for a script's error: `{err = "CODE msg"}`, with
/// `ignore_error_stats_update` when the error was counted already.
pub(crate) fn error_table(lua: &Lua, error: &ScriptError) -> mlua::Result<mlua::Table> {
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(&error.text)?)?;
    if error.counted {
        t.raw_set("ignore_error_stats_update", true)?;
    }
    Ok(t)
}

/// Runs one command for a script: its reply encoded in the script's protocol into `out`
/// (cleared first; what Lua will parse), or the refusal's text (Redis's, without a code: the
/// caller adds `ERR`). `out` is the run's, so commands after the first allocate nothing for
/// their replies.
pub(crate) fn call(
    ctx: &mut Ctx<'_>,
    limits: &mut Limits,
    resp3: bool,
    args: &[&[u8]],
    out: &mut BytesMut,
) -> Result<(), &'static str> {
    let (found, id) = match check(*limits, args) {
        Ok(checked) => {
            limits.dirty |= checked.writes;
            (checked.found, checked.id)
        }
        Err(refusal) => {
            count_refusal(ctx, args, refusal);
            return Err(refusal);
        }
    };
    let protocol = if resp3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    let caller = std::mem::replace(&mut ctx.client.protocol, protocol);
    let reply = execute_found(ctx, args, found, id);
    ctx.client.protocol = caller;
    out.clear();
    match reply {
        Reply::Status(status) => crate::resp::encode_status(status, out),
        reply => encode(&reply, protocol, out),
    }
    Ok(())
}

/// Counts a refused command as Redis's `scriptCall` does: the error, and a rejected call of
/// the command when there is one.
fn count_refusal(ctx: &Ctx<'_>, argv: &[&[u8]], refusal: &str) {
    let text = match refusal.strip_prefix('-') {
        Some(coded) => coded.to_string(),
        None => format!("ERR {refusal}"),
    };
    let stats = ctx.state.stats();
    match argv.first().and_then(|name| find(name)) {
        Some((found, id)) => stats.record(id, found.spec().name, 0, CallOutcome::Rejected(&text)),
        None => stats.record_error(&text),
    }
}

/// A command a script may run: what it is, and whether it writes.
#[derive(Clone, Copy)]
pub(crate) struct Checked {
    pub found: Found,
    pub id: CallId,
    pub writes: bool,
}

/// Redis's checks before a script's command runs, in its order: the command exists (under
/// its name after `rename-command`) with its arity, may run from a script, writes only where
/// the script may write, and grows memory only where it may.
pub(crate) fn check(limits: Limits, argv: &[&[u8]]) -> Result<Checked, &'static str> {
    let Some((found, id)) = argv.first().and_then(|name| rename::find(name)) else {
        return Err("Unknown Redis command called from script");
    };
    let spec = found.spec();
    let (arity, flags, name) = if spec.subcommands.is_empty() {
        (spec.arity, spec.flags, spec.name)
    } else {
        match argv.get(1).and_then(|sub| spec.subcommand(sub)) {
            Some(sub) => (sub.arity, spec.flags | sub.flags, sub.full_name),
            None if argv.len() < 2 => (spec.arity, spec.flags, spec.name),
            None => return Err("Unknown Redis command called from script"),
        }
    };
    let n = argv.len() as i64;
    let arity = i64::from(arity);
    if (arity > 0 && arity != n) || n < -arity {
        return Err("Wrong number of args calling Redis command from script");
    }
    if is_denied(spec.name) || is_denied(name) {
        return Err("This Redis command is not allowed from script");
    }
    if limits.read_only && flags & (WRITE | MAY_REPLICATE) != 0 {
        return Err("Write commands are not allowed from read-only scripts.");
    }
    if limits.deny_oom && !limits.dirty && flags & DENY_OOM != 0 {
        return Err("-OOM command not allowed when used memory > 'maxmemory'.");
    }
    Ok(Checked {
        found,
        id,
        writes: flags & WRITE != 0,
    })
}

/// `redis.acl_check_cmd`: whether the caller's user may run `argv`, or Redis's refusal of a
/// command that does not exist or has a wrong arity.
pub(crate) fn acl_check(
    caller: Option<&crate::acl::User>,
    argv: &[&[u8]],
) -> Result<bool, &'static str> {
    let Some(found) = argv.first().and_then(|name| lookup(name)) else {
        return Err("Invalid command passed to redis.acl_check_cmd()");
    };
    if !found.spec().arity_ok(argv.len()) {
        return Err("Wrong number of args for redis.acl_check_cmd()");
    }
    Ok(crate::cmd::user_permits(caller, argv))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(read_only: bool, argv: &[&str]) -> Result<(), &'static str> {
        let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
        let limits = Limits {
            read_only,
            ..Limits::default()
        };
        check(limits, &argv).map(drop)
    }

    #[test]
    fn scripts_commands_are_checked_in_redis_s_order() {
        assert_eq!(
            checked(false, &["nosuch"]),
            Err("Unknown Redis command called from script")
        );
        assert_eq!(
            checked(false, &["get"]),
            Err("Wrong number of args calling Redis command from script")
        );
        assert_eq!(
            checked(false, &["multi"]),
            Err("This Redis command is not allowed from script")
        );
        assert_eq!(
            checked(true, &["set", "k", "v"]),
            Err("Write commands are not allowed from read-only scripts.")
        );
        assert_eq!(checked(true, &["get", "k"]), Ok(()));
        assert_eq!(checked(false, &["set", "k", "v"]), Ok(()));
        let mut limits = Limits {
            deny_oom: true,
            ..Limits::default()
        };
        let set: [&[u8]; 3] = [b"set", b"k", b"v"];
        assert_eq!(
            check(limits, &set).map(|c| c.writes),
            Err("-OOM command not allowed when used memory > 'maxmemory'.")
        );
        assert_eq!(check(limits, &[b"del", b"k"]).map(|c| c.writes), Ok(true));
        limits.dirty = true;
        assert_eq!(check(limits, &set).map(|c| c.writes), Ok(true));
    }
}

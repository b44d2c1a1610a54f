//! Lua scripting as Redis 8.8 runs it: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
//!
//! - [`cache`]: the scripts by SHA1, shared by every connection; their shebang flags.
//! - [`sandbox`]: the Lua 5.1 VM with the globals Redis allows and its protections.
//! - [`convert`]: Lua values to RESP and replies to Lua values, as Redis converts them.
//! - [`call`]: `redis.call`/`redis.pcall`, through the server's own command dispatch.
//! - [`current`]: the run those functions reach, lent for its duration.
//! - [`raw`]: a run's protected call, with KEYS and ARGV built on Lua's stack.
//! - [`bit`], [`cjson`], [`cmsgpack`], [`lstruct`] (`struct`): the libraries scripts see.
//!
//! Invariants:
//! - A script runs as one command: EVAL is a server command, so the keyspace lock is held
//!   for the whole script, with one time snapshot, and every command it runs belongs to
//!   EVAL's execution unit. Its writes reach the AOF as the commands it ran (effects
//!   replication), wrapped in MULTI/EXEC when there are several, like a transaction's.
//! - Each thread has its own VM ([`VM`]), built on first use and rebuilt when the shared cache
//!   is flushed (its `generation` moved): compiled functions are per VM, the bodies shared.
//!   The VM is borrowed for the whole run; nothing a script does can start another script
//!   (EVAL is refused from scripts), so the borrow never nests.
//! - A script's SELECT changes the database of its own commands only: the caller's database
//!   and protocol are restored when the script ends, whatever it did.
//! - A VM holds compiled functions only for scripts the cache holds: it drops those the
//!   cache evicted at its next run.
//! - Nothing here panics on a script's doing: Lua errors, bad values and VM failures become
//!   error replies; nesting (in `cjson`, `cmsgpack`, the conversions) grows the stack rather
//!   than overflow a worker thread's.
//!
//! FUNCTION/FCALL can reuse the pieces as they are: [`sandbox::Vm`] (the globals, the `redis`
//! table whose `call`/`pcall` reach the run [`current`] lends), [`convert`], and
//! [`call`] with its [`call::Limits`]; what is EVAL's own is here (KEYS/ARGV as globals, the
//! `f_<sha>` cache, the error suffix naming the script).

mod base;
mod bit;
pub(crate) mod busy;
pub(crate) mod cache;
pub(crate) mod call;
mod cjson;
mod cmsgpack;
pub(crate) mod convert;
pub(crate) mod current;
pub(crate) mod function;
mod lstruct;
mod raw;
pub(crate) mod sandbox;

use std::cell::{Cell, RefCell};

use bytes::{Bytes, BytesMut};
use echomq_engine::Reply;
use mlua::Value;
use parking_lot::Mutex;

use crate::cmd::{Ctx, int_arg, is};
use crate::resp::Protocol;
use cache::{Cache, Script, ScriptFlags, parse_shebang, sha1hex};
use sandbox::Vm;

thread_local! {
    /// This thread's Lua VM (see the module docs).
    static VM: RefCell<Option<Vm>> = const { RefCell::new(None) };
    /// [`VM`]'s memory as its current run started: what INFO reports when a script runs it
    /// (the run holds the VM).
    static VM_MEMORY_AT_RUN: Cell<usize> = const { Cell::new(0) };
}

/// The script cache, shared by every connection.
#[derive(Debug, Default)]
pub(crate) struct Scripts {
    cache: Mutex<Cache>,
}

impl Scripts {
    /// How many scripts are cached (INFO's `number_of_cached_scripts`).
    pub(crate) fn count(&self) -> usize {
        self.cache.lock().len()
    }

    /// Bytes the cached scripts hold (INFO's `used_memory_scripts_eval`).
    pub(crate) fn memory(&self) -> usize {
        self.cache.lock().memory()
    }

    /// Scripts evicted from the cache (INFO's `evicted_scripts`).
    pub(crate) fn evicted(&self) -> u64 {
        self.cache.lock().evicted
    }
}

/// Memory this thread's Lua VM holds (INFO's `used_memory_lua`; Redis's VM starts at about
/// 31 KB, which an unused thread reports).
pub(crate) fn vm_memory() -> usize {
    VM.with(|vm| match vm.try_borrow() {
        Ok(vm) => vm.as_ref().map_or(31_744, Vm::memory),
        Err(_) => VM_MEMORY_AT_RUN.get(),
    })
}

/// Which EVAL variant runs.
#[derive(Debug, Clone, Copy)]
struct Variant {
    by_sha: bool,
    read_only: bool,
}

/// `EVAL script numkeys [key ...] [arg ...]`.
pub(crate) fn eval(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    run(
        ctx,
        argv,
        Variant {
            by_sha: false,
            read_only: false,
        },
    )
}

/// `EVAL_RO script numkeys [key ...] [arg ...]`.
pub(crate) fn eval_ro(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    run(
        ctx,
        argv,
        Variant {
            by_sha: false,
            read_only: true,
        },
    )
}

/// `EVALSHA sha1 numkeys [key ...] [arg ...]`.
pub(crate) fn evalsha(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    run(
        ctx,
        argv,
        Variant {
            by_sha: true,
            read_only: false,
        },
    )
}

/// `EVALSHA_RO sha1 numkeys [key ...] [arg ...]`.
pub(crate) fn evalsha_ro(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    run(
        ctx,
        argv,
        Variant {
            by_sha: true,
            read_only: true,
        },
    )
}

fn noscript() -> Reply {
    Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into())
}

fn err(text: impl std::fmt::Display) -> Reply {
    Reply::Error(format!("ERR {text}"))
}

/// Compiles `body` into the cache (Redis's `luaCreateFunction`): its SHA1, or the error
/// reply.
fn create(state: &crate::state::ServerState, body: &[u8], by_eval: bool) -> Result<String, Reply> {
    let sha = sha1hex(body);
    let mut cache = state.scripts().cache.lock();
    if cache.get(sha.as_bytes()).is_some() {
        return Ok(sha);
    }
    let (flags, code_start) = parse_shebang(body).map_err(err)?;
    let generation = cache.generation;
    let compiled = with_vm(generation, |vm| {
        let function = vm
            .compile(&body[code_start..])
            .map_err(|e| err(format!("Error compiling script (new function): {e}")))?;
        let key = vm
            .lua
            .create_registry_value(function)
            .map_err(|e| err(format!("Lua VM: {e}")))?;
        vm.functions.insert(sha.clone(), key);
        Ok::<_, Reply>(())
    });
    compiled.and_then(|r| r)?;
    let script = Script {
        body: Bytes::copy_from_slice(body),
        flags,
        code_start,
    };
    let evicted = cache.insert(sha.clone(), script, by_eval);
    drop(cache);
    if !evicted.is_empty() {
        let _ = with_vm(generation, |vm| {
            for gone in &evicted {
                vm.functions.remove(gone);
            }
        });
    }
    Ok(sha)
}

/// Runs `f` on this thread's VM, first building it or rebuilding it for a newer cache
/// generation.
fn with_vm<R>(generation: u64, f: impl FnOnce(&mut Vm) -> R) -> Result<R, Reply> {
    VM.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|vm| vm.generation != generation) {
            *slot = None;
            *slot = Some(Vm::new(generation).map_err(|e| err(format!("Lua VM: {e}")))?);
        }
        match slot.as_mut() {
            Some(vm) => {
                VM_MEMORY_AT_RUN.set(vm.memory());
                Ok(f(vm))
            }
            None => Err(err("Lua VM unavailable")),
        }
    })
}

/// Whether Redis's `processCommand` refuses this EVAL over `maxmemory` before it runs: a
/// script with a shebang that lacks `allow-oom` and `no-writes` makes its EVAL a DENY_OOM
/// command (`evalGetCommandFlags`), judged from the cached script or the body's shebang.
fn refused_for_memory(ctx: &Ctx<'_>, argv: &[&[u8]], variant: Variant) -> bool {
    if !ctx.state.over_maxmemory() {
        return false;
    }
    let flags = if variant.by_sha {
        ctx.state
            .scripts()
            .cache
            .lock()
            .get(argv[1])
            .map(|script| script.flags)
    } else {
        parse_shebang(argv[1]).ok().map(|(flags, _)| flags)
    };
    flags.is_some_and(denies_oom)
}

/// Whether a script with `flags` makes its call a DENY_OOM command.
fn denies_oom(flags: ScriptFlags) -> bool {
    !flags.compat && !flags.allow_oom && !flags.no_writes
}

fn run(ctx: &mut Ctx<'_>, argv: &[&[u8]], variant: Variant) -> Reply {
    // MONITOR shows the call before the commands its script runs (Redis feeds it first).
    ctx.state
        .feed_monitors(&ctx.client.info, ctx.client.db, argv);
    if refused_for_memory(ctx, argv, variant) {
        return crate::error::CommandError::OutOfMemory.into();
    }
    if variant.by_sha && argv[1].len() != 40 {
        return noscript();
    }
    let numkeys = match int_arg(argv[2]) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    if numkeys > argv.len() as i64 - 3 {
        return err("Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return err("Number of keys can't be negative");
    }
    let numkeys = numkeys as usize;
    let sha = if variant.by_sha {
        match cache::lowercase_sha(argv[1]) {
            Some(sha) => sha,
            None => return noscript(),
        }
    } else {
        // `create` names it by its hex digest, which is always a valid name.
        match create(ctx.state, argv[1], true).map(|sha| cache::lowercase_sha(sha.as_bytes())) {
            Ok(Some(sha)) => sha,
            Ok(None) => return noscript(),
            Err(reply) => return reply,
        }
    };
    let sha = sha.as_str();
    let (script, generation, evicted) = {
        let mut cache = ctx.state.scripts().cache.lock();
        let Some(script) = cache.use_script(sha) else {
            return noscript();
        };
        (script, cache.generation, cache.evicted)
    };
    let limits = match prepare(ctx, script.flags, variant.read_only) {
        Ok(limits) => limits,
        Err(refusal) => return refusal,
    };
    let _watch = busy::watch(ctx.state.busy(), ctx.state.busy_reply_threshold_ms(), true);
    as_script(ctx, |ctx| {
        let result = with_vm(generation, |vm| {
            if vm.pruned_at != evicted {
                prune(vm, ctx.state.scripts());
            }
            if let Err(reply) = select_compiled(vm, sha, &script) {
                return reply;
            }
            let vm: &Vm = vm;
            let Some(function) = vm.functions.selected() else {
                return err("Lua VM: no function selected");
            };
            execute(
                vm,
                ctx,
                sha,
                function,
                Invocation::Eval,
                argv,
                numkeys,
                limits,
            )
        });
        match result {
            Ok(reply) | Err(reply) => reply,
        }
    })
}

/// Runs `f` as a script's run: the caller's database and protocol are restored when it ends,
/// whatever the script selected.
fn as_script(ctx: &mut Ctx<'_>, f: impl FnOnce(&mut Ctx<'_>) -> Reply) -> Reply {
    let caller_db = ctx.client.db;
    let caller_protocol = ctx.client.protocol;
    ctx.client.in_script = true;
    let reply = f(ctx);
    ctx.client.in_script = false;
    ctx.client.db = caller_db;
    ctx.client.protocol = caller_protocol;
    reply
}

/// Selects the compiled function of a cached script on `vm` ([`sandbox::Compiled::select`]),
/// compiling it first if this VM lacks it.
fn select_compiled(vm: &mut Vm, sha: &str, script: &Script) -> Result<(), Reply> {
    let lua_error = |e: mlua::Error| err(format!("Lua VM: {e}"));
    if let Some(selected) = vm.functions.select(&vm.lua, sha) {
        return selected.map_err(lua_error);
    }
    let f = vm
        .compile(&script.body[script.code_start..])
        .map_err(|e| err(format!("Error compiling script (new function): {e}")))?;
    let key = vm.lua.create_registry_value(f.clone()).map_err(lua_error)?;
    vm.functions.insert_selected(sha.to_string(), key, f);
    Ok(())
}

/// Drops the compiled scripts the cache evicted since this VM last looked, so a VM never
/// holds more than the cache does.
fn prune(vm: &mut Vm, scripts: &Scripts) {
    let cache = scripts.cache.lock();
    if vm.pruned_at != cache.evicted {
        vm.functions
            .retain(|sha| cache.get(sha.as_bytes()).is_some());
        vm.pruned_at = cache.evicted;
    }
}

/// Redis's `scriptPrepareForRun` checks, in its order (those of the shebang's flags apply to
/// a script with one; a function always has one): what the script's commands may do, or the
/// refusal.
fn prepare(ctx: &Ctx<'_>, flags: ScriptFlags, read_only: bool) -> Result<call::Limits, Reply> {
    let over_maxmemory = ctx.state.over_maxmemory();
    if !flags.compat {
        if flags.no_cluster && ctx.state.cluster_enabled() {
            return Err(err(
                "Can not run script on cluster, 'no-cluster' flag is set.",
            ));
        }
        if !flags.no_writes && read_only {
            return Err(err(
                "Can not execute a script with write flag using *_ro command.",
            ));
        }
        if over_maxmemory && !flags.allow_oom && !flags.no_writes {
            return Err(Reply::Error(
                "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
                    .into(),
            ));
        }
    }
    let allow_oom = !flags.compat && (flags.allow_oom || flags.no_writes);
    Ok(call::Limits {
        read_only: read_only || (!flags.compat && flags.no_writes),
        deny_oom: over_maxmemory && !allow_oom,
        dirty: false,
    })
}

/// How a script's function is called: EVAL's sees KEYS and ARGV as globals, a library's
/// function gets them as its two arguments.
#[derive(Debug, Clone, Copy)]
enum Invocation {
    Eval,
    Fcall,
}

/// Runs a script's function on `vm`: its reply, encoded for the caller. `name` is what
/// errors name it by (the SHA1, or the function's name).
#[allow(clippy::too_many_arguments)]
fn execute(
    vm: &Vm,
    ctx: &mut Ctx<'_>,
    name: &str,
    function: &mlua::Function,
    invocation: Invocation,
    call: &[&[u8]],
    numkeys: usize,
    limits: call::Limits,
) -> Reply {
    let keys = &call[3..3 + numkeys];
    let args = &call[3 + numkeys..];
    let sha = name;
    let client_resp3 = ctx.client.protocol == Protocol::Resp3;
    let calls = &*vm.calls;
    calls.start();
    *vm.caller.borrow_mut() = crate::cmd::script_caller(ctx.state, ctx.client);
    let mut run = current::Run { ctx, call, limits };
    let outcome = current::enter(&mut run, || -> mlua::Result<Reply> {
        let arrays = match invocation {
            Invocation::Eval => raw::Arrays::Globals(&vm.globals, &vm.array_names),
            Invocation::Fcall => raw::Arrays::Arguments,
        };
        let (ok, value) = raw::protected_call(&vm.lua, &vm.handler, function, keys, args, arrays)?;
        if ok {
            // A number is an integer reply, in either protocol: no buffer to build.
            match value {
                Value::Integer(n) => return Ok(Reply::Int(n)),
                Value::Number(n) => return Ok(Reply::Int(convert::truncate(n))),
                _ => {}
            }
            let mut out = BytesMut::new();
            let enc = convert::Encoding {
                client_resp3,
                script_resp3: calls.resp3.get(),
            };
            convert::lua_to_resp(&value, enc, &mut out);
            if out.first() == Some(&b'-') && !already_counted(&value) {
                let text = &out[1..out.len().saturating_sub(2).max(1)];
                return Ok(Reply::Error(String::from_utf8_lossy(text).into_owned()));
            }
            return Ok(Reply::Raw(out.freeze()));
        }
        let message = error_message(&value, sha);
        if already_counted(&value) {
            let mut out = BytesMut::new();
            crate::resp::encode_error(&message, &mut out);
            return Ok(Reply::Raw(out.freeze()));
        }
        Ok(Reply::Error(message))
    });
    calls.finish();
    outcome.unwrap_or_else(|e| err(format!("Error running script {sha}, {e}")))
}

/// Whether a script's error value was counted in the error stats when its command failed:
/// its reply goes out as [`Reply::Raw`], which dispatch counts as a failed call only.
fn already_counted(value: &Value) -> bool {
    matches!(value, Value::Table(t)
        if matches!(t.raw_get::<Value>("ignore_error_stats_update"), Ok(Value::Boolean(true))))
}

/// A failed script's error reply, as Redis's `luaCallFunction` words it: the error's `err`
/// text, then where it was raised.
fn error_message(value: &Value, sha: &str) -> String {
    let Value::Table(t) = value else {
        let msg = match value {
            Value::String(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            _ => "execution failure".into(),
        };
        let msg: String = msg.chars().take(100).collect();
        return format!("ERR Error running script {sha}, {msg}");
    };
    let text = |field: &str| -> Option<String> {
        match t.get::<Value>(field).ok()? {
            Value::String(s) => Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
            Value::Number(n) => Some(convert::format_number(n)),
            Value::Integer(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let mut msg = text("err").unwrap_or_else(|| "ERR unknown error".into());
    if let Some(stripped) = msg.strip_prefix('-') {
        msg = stripped.to_string();
    }
    if let (Some(source), Some(line)) = (text("source"), text("line")) {
        msg.push_str(&format!(" script: {sha}, on {source}:{line}."));
    }
    msg
}

/// `SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP`.
pub(crate) fn script(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let sub = argv[1];
    if let Some(found) = crate::cmd::subcommand_of(argv)
        && !found.arity_ok(argv.len())
    {
        return crate::cmd::error(echomq_engine::Error::WrongArity(
            found.full_name.to_string(),
        ));
    }
    if argv.len() == 2 && is(sub, "help") {
        return Reply::Array(HELP.iter().map(|l| Reply::Status(l)).collect());
    }
    if is(sub, "flush") {
        if argv.len() > 3 || (argv.len() == 3 && !is(argv[2], "sync") && !is(argv[2], "async")) {
            return err("SCRIPT FLUSH only support SYNC|ASYNC option");
        }
        ctx.state.scripts().cache.lock().flush();
        // This thread's VM goes now; the others see the new generation on their next script.
        VM.with(|vm| vm.borrow_mut().take());
        return Reply::OK;
    }
    if is(sub, "exists") {
        let cache = ctx.state.scripts().cache.lock();
        return Reply::Array(
            argv[2..]
                .iter()
                .map(|sha| Reply::Int(i64::from(cache.get(sha).is_some())))
                .collect(),
        );
    }
    if argv.len() == 3 && is(sub, "load") {
        return match create(ctx.state, argv[2], false) {
            Ok(sha) => Reply::bulk(sha),
            Err(reply) => reply,
        };
    }
    if argv.len() == 2 && is(sub, "kill") {
        return Reply::Error("NOTBUSY No scripts in execution right now.".into());
    }
    crate::cmd::subcommand_syntax(argv)
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Print this help.",
];

#[cfg(test)]
mod tests {
    use super::raw::{Arrays, protected_call};
    use super::sandbox::Vm;

    /// Whether `code`, run as an EVAL script without keys or arguments, fails.
    fn fails(vm: &Vm, code: &str) -> bool {
        let f = vm.compile(code.as_bytes()).unwrap();
        let arrays = Arrays::Globals(&vm.globals, &vm.array_names);
        !protected_call(&vm.lua, &vm.handler, &f, &[], &[], arrays)
            .unwrap()
            .0
    }

    #[test]
    fn the_protection_of_the_globals_cannot_be_removed() {
        let vm = Vm::new(0).unwrap();
        for code in [
            "setmetatable(_G, {}) x = 1",
            "setmetatable(redis, nil) redis.call = 1",
            "rawset(_G, 'x', 1)",
        ] {
            assert!(fails(&vm, code), "{code}");
        }
        assert!(fails(&vm, "return x"), "a global leaked");
    }
}

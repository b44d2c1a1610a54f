//! The Lua VM scripts run in, with the globals Redis allows and Redis's protections.
//!
//! The VM has the base library (less `dofile`, `loadfile`, `print`, and the deprecated
//! `setfenv`, `getfenv`, `newproxy`), `table`, `string`, `math` (with Redis's own `random`),
//! `os` with only `clock`, `bit`, `cjson`, `cmsgpack`, `struct`, and the `redis` table. Redis runs a patched Lua
//! whose tables can be made read-only; this VM is stock Lua 5.1, so a script runs in an
//! environment of its own, an empty proxy over the globals: reading a name the globals lack
//! raises Redis's `Script attempted to access nonexistent global variable`, and assigning
//! any global raises `Attempt to modify a readonly table`. The library tables are proxied the
//! same way, so `redis.call = nil` fails as in Redis, and so is strings' metatable as
//! `getmetatable` shows it, so no script keeps a value there for the next.
//!
//! Errors follow Redis's model: `redis.call` raises Redis's error (a [`ScriptError`], which
//! the error handler turns into the table `{err = "CODE msg"}`), the handler adds the `source`
//! and `line` of the script's frame (skipping C functions and the internal wrappers), and
//! `pcall` hands scripts the `err` text. The functions that raise are Rust functions, so a
//! `return redis.call(...)` tail call keeps the script's frame, as Redis's C functions do;
//! library errors (`bit`, `cjson`, ...) carry `luaL_error`'s `source:line: ` ([`located`]).
//!
//! `redis.call` and `redis.pcall` are the VM's own functions, created with it like the rest
//! of the `redis` table: they reach the running script's client and keyspace through the run
//! [`super::current`] lends them for its duration, so the VM itself holds nothing of a
//! request, and a run creates no function. FUNCTION can build its libraries on the same VM
//! setup. Scripts read globals through a proxy whose `__index` is the globals
//! table itself, so only a missing global costs a call (the one that raises).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::acl::User;

use mlua::{Function, Lua, LuaOptions, MultiValue, RegistryKey, StdLib, Table, Value};

use super::call::Calls;
use super::{bit, cjson, cmsgpack, convert, lstruct};

/// The chunk name of the wrappers below: their frames are skipped when an error is located.
pub(crate) const INTERNAL: &str = "=redis";

/// The chunk name scripts compile under (Redis's), so messages read `user_script:1: ...`.
pub(crate) const USER_SCRIPT: &str = "@user_script";

/// The globals' protections and the `redis` API, in Lua (run once per VM, with the real
/// globals as its environment; `...` is the hooks table).
const PRELUDE: &str = r#"
local I = ...
local G = _G
local error, type, select, rawget, rawset, tostring, unpack, setmetatable =
      error, type, select, rawget, rawset, tostring, unpack, setmetatable
local rawpcall = pcall
local rawsetfenv = setfenv


-- Each read-only proxy's real table: iteration and raw access see through the proxy, as
-- they see Redis's read-only tables themselves.
local real_of = setmetatable({}, {__mode = 'k'})
local function readonly(real)
  local proxy = {}
  setmetatable(proxy, {
    __index = real,
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    -- Redis's read-only tables cannot lose their protection; nor can a proxy.
    __metatable = false,
  })
  real_of[proxy] = real
  return proxy
end
-- C functions like the base library's own, which see through the proxies (`script/base.rs`).
G.next, G.pairs, G.ipairs, G.rawget, G.rawset, G.setmetatable = I.base(real_of)

local function pack(...) return select('#', ...), {...} end

pcall = function(...)
  local n, r = pack(rawpcall(...))
  if not r[1] then r[2] = I.errvalue(r[2]) end
  return unpack(r, 1, n)
end

local redis = I.redis
redis.error_reply = function(...)
  local e = ...
  if select('#', ...) ~= 1 or type(e) ~= 'string' then
    return {err = 'ERR wrong number or type of arguments'}
  end
  if e:sub(1, 1) ~= '-' then e = '-' .. e end
  return {err = I.errtext(e)}
end
redis.status_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return {err = 'ERR wrong number or type of arguments'}
  end
  return {ok = s}
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL =
  0, 1, 2, 2, 3
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.REDIS_VERSION = I.version
redis.REDIS_VERSION_NUM = I.version_num

math.random = I.random
math.randomseed = I.randomseed
os = {clock = os.clock}
bit = I.bit
cjson = I.cjson
cmsgpack = I.cmsgpack
struct = I.struct

dofile, loadfile, print, setfenv, getfenv, newproxy, module, require, package, debug, io =
  nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil

G.redis = readonly(redis)
for _, name in ipairs({'string', 'math', 'table', 'os', 'coroutine', 'bit', 'cjson', 'cmsgpack', 'struct'}) do
  if rawget(G, name) ~= nil then rawset(G, name, readonly(rawget(G, name))) end
end

-- Redis's strings share a read-only metatable whose `__index` is the read-only `string`; stock
-- Lua's is a plain table, through which a script could keep values from one call to the next.
-- Scripts are shown a read-only stand-in (the VM itself still indexes strings through the real
-- one).
G.getmetatable = I.getmetatable(readonly({__index = G.string}))

-- Scripts see `env`, an empty proxy whose reads fall through to the real globals as a table
-- (a lookup, not a call), and only a missing global reaches the function that raises:
-- every `redis.call` reads two globals.
local env = {}
real_of[env] = G
setmetatable(env, {
  __index = G,
  __newindex = function() error('Attempt to modify a readonly table', 2) end,
  __metatable = false,
})
G._G = env
setmetatable(G, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
})

local rawloadstring, rawload = loadstring, load
loadstring = function(...)
  local f, e = rawloadstring(...)
  if f then rawsetfenv(f, env) end
  return f, e
end
load = function(...)
  local f, e = rawload(...)
  if f then rawsetfenv(f, env) end
  return f, e
end

G.__redis__err__handler = I.handler
-- Another read-only view of a real table (FUNCTION's environment over these globals) made
-- known to the functions above, so they see through it and refuse to write to it.
local function protect(proxy, real) real_of[proxy] = real end
return env, protect
"#;

/// `redis.REPL_AOF`: the script's commands reach the AOF.
pub(crate) const REPL_AOF: i32 = 1;
/// `redis.REPL_ALL`: they reach the AOF and replicas (echomq has only the AOF).
pub(crate) const REPL_ALL: i32 = 3;

/// A Lua VM set up as Redis sets up its scripting VM (see the module docs).
pub(crate) struct Vm {
    pub lua: Lua,
    /// The environment scripts run in (the read-only proxy).
    pub env: Table,
    /// Registers another read-only view of a real table (`protect(proxy, real)`), which the
    /// base functions then see through and refuse to write to (`script/base.rs`).
    pub protect: Function,
    /// The real `redis` table (scripts see a read-only proxy of it).
    pub redis: Table,
    /// What `redis.call`, `redis.pcall`, `redis.setresp` and `redis.set_repl` share: the
    /// running script's protocol and replication choices, the commands' buffers.
    pub calls: Rc<Calls>,
    /// The user the running script's `redis.acl_check_cmd` answers for (set at its start;
    /// `None` while no user is restricted).
    pub caller: Rc<RefCell<Option<Arc<User>>>>,
    /// The real globals (an EVAL's KEYS and ARGV are set here).
    pub globals: Table,
    /// The error handler a script's function runs under (`__redis__err__handler`).
    pub handler: Function,
    /// `KEYS` and `ARGV`, the names an EVAL's arrays are set under in `globals`.
    pub array_names: super::raw::GlobalNames,
    /// Compiled scripts by SHA1 (EVAL's VM) or library functions by name (FUNCTION's).
    pub functions: Compiled,
    /// The script cache generation the compiled scripts belong to.
    pub generation: u64,
    /// The cache's eviction count when `functions` last dropped the evicted scripts (a script
    /// evicted by another thread's EVAL is dropped here at this VM's next run).
    pub pruned_at: u64,
}

impl std::fmt::Debug for Vm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vm")
            .field("functions", &self.functions.len())
            .finish_non_exhaustive()
    }
}

/// A VM's compiled scripts or library functions by name, kept in the Lua registry: a
/// `Function` handle would take one of the 8000 slots of mlua's reference stack, which
/// loaded scripts (never evicted) could fill. The one called last is also held as a handle
/// (one slot), so calling it again, the common case, costs no lookup.
///
/// Invariant: `last`, when set, is the function `keys` holds under its name.
#[derive(Default)]
pub(crate) struct Compiled {
    keys: HashMap<String, RegistryKey>,
    last: Option<(String, Function)>,
}

impl Compiled {
    /// Makes the function named `name` the one [`Compiled::selected`] lends, if it is compiled
    /// on `lua` (`None` when it is not).
    pub fn select(&mut self, lua: &Lua, name: &str) -> Option<mlua::Result<()>> {
        if self.last.as_ref().is_some_and(|(last, _)| last == name) {
            return Some(Ok(()));
        }
        match lua.registry_value::<Function>(self.keys.get(name)?) {
            Ok(f) => {
                self.last = Some((name.to_string(), f));
                Some(Ok(()))
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// The function [`Compiled::select`] last selected, lent rather than copied into a new
    /// handle.
    pub fn selected(&self) -> Option<&Function> {
        self.last.as_ref().map(|(_, f)| f)
    }

    pub fn insert(&mut self, name: String, key: RegistryKey) {
        self.forget_last(&name);
        self.keys.insert(name, key);
    }

    /// Adds the function `f` compiled under `name` (kept at `key`) and selects it.
    pub fn insert_selected(&mut self, name: String, key: RegistryKey, f: Function) {
        self.keys.insert(name.clone(), key);
        self.last = Some((name, f));
    }

    pub fn remove(&mut self, name: &str) {
        self.forget_last(name);
        self.keys.remove(name);
    }

    /// Keeps only the functions whose names `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.keys.retain(|name, _| keep(name));
        if let Some((last, _)) = &self.last
            && !self.keys.contains_key(last)
        {
            self.last = None;
        }
    }

    pub fn clear(&mut self) {
        self.keys.clear();
        self.last = None;
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    fn forget_last(&mut self, name: &str) {
        if self.last.as_ref().is_some_and(|(last, _)| last == name) {
            self.last = None;
        }
    }
}

/// Redis's `redisLrand48` state: a 48-bit linear congruence, as `drand48`.
#[derive(Debug, Clone, Copy)]
struct Lrand48(u64);

/// The process's `redisLrand48` state: one sequence for every script, across SCRIPT FLUSH,
/// as Redis keeps it (scripts run one at a time under the keyspace lock).
static RANDOM: AtomicU64 = AtomicU64::new(Lrand48::INITIAL);

impl Lrand48 {
    const INITIAL: u64 = 0x1234_ABCD_330E;

    /// The next number of the process's sequence.
    fn draw() -> i32 {
        let mut r = Lrand48(RANDOM.load(Ordering::Relaxed));
        let drawn = r.next();
        RANDOM.store(r.0, Ordering::Relaxed);
        drawn
    }
    const MASK: u64 = (1 << 48) - 1;

    fn seed(seed: i32) -> Lrand48 {
        Lrand48((((seed as u32) as u64) << 16 | 0x330E) & Self::MASK)
    }

    fn next(&mut self) -> i32 {
        self.0 = (self.0.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & Self::MASK;
        (self.0 >> 17) as i32
    }
}

/// A number argument as `luaL_checkint` reads it, or Lua's argument error.
fn check_int(lua: &Lua, value: Option<&Value>, n: usize, fname: &str) -> mlua::Result<i64> {
    match value {
        Some(Value::Number(x)) => Ok(*x as i64),
        Some(Value::Integer(x)) => Ok(*x),
        Some(Value::String(s)) => s
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .map(|x| x as i64)
            .ok_or_else(|| arg_error(lua, n, fname, "number expected, got string")),
        other => {
            let got = other.map_or("no value", |v| v.type_name());
            Err(arg_error(
                lua,
                n,
                fname,
                &format!("number expected, got {got}"),
            ))
        }
    }
}

fn arg_error(lua: &Lua, n: usize, fname: &str, msg: &str) -> mlua::Error {
    located(lua, &format!("bad argument #{n} to '{fname}' ({msg})"))
}

impl Vm {
    /// A new VM, set up (see the module docs).
    pub fn new(generation: u64) -> mlua::Result<Vm> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::OS,
            LuaOptions::new(),
        )?;
        let hooks = lua.create_table()?;
        hooks.set("version", crate::REDIS_VERSION)?;
        hooks.set("version_num", version_num(crate::REDIS_VERSION))?;
        let redis = lua.create_table()?;
        hooks.set("redis", redis.clone())?;
        hooks.set(
            "errtext",
            lua.create_function(|lua, s: mlua::String| {
                lua.create_string(convert::error_text(&s.as_bytes()))
            })?,
        )?;
        hooks.set(
            "errvalue",
            lua.create_function(|lua, v: Value| error_value(lua, v))?,
        )?;
        redis.set(
            "sha1hex",
            lua.create_function(|_, args: MultiValue| {
                if args.len() != 1 {
                    return raise("wrong number of arguments");
                }
                let text = match &args[0] {
                    Value::String(s) => s.as_bytes().to_vec(),
                    Value::Number(n) => lua_number_text(*n).into_bytes(),
                    Value::Integer(n) => lua_number_text(*n as f64).into_bytes(),
                    _ => Vec::new(),
                };
                Ok(super::cache::sha1hex(&text))
            })?,
        )?;
        redis.set(
            "log",
            lua.create_function(|_, args: MultiValue| {
                if args.len() < 2 {
                    return raise("redis.log() requires two arguments or more.");
                }
                let Some(level) = to_number(&args[0]) else {
                    return raise("First argument must be a number (log level).");
                };
                let level = level as i64;
                if !(0..=3).contains(&level) {
                    return raise("Invalid log level.");
                }
                let parts: Vec<String> = args
                    .iter()
                    .skip(1)
                    .filter_map(|v| match v {
                        Value::String(s) => {
                            Some(String::from_utf8_lossy(&s.as_bytes()).into_owned())
                        }
                        Value::Number(n) => Some(lua_number_text(*n)),
                        Value::Integer(n) => Some(lua_number_text(*n as f64)),
                        _ => None,
                    })
                    .collect();
                let text = parts.join(" ");
                match level {
                    0 | 1 => tracing::debug!(target: "script", "{text}"),
                    2 => tracing::info!(target: "script", "{text}"),
                    _ => tracing::warn!(target: "script", "{text}"),
                }
                Ok(())
            })?,
        )?;
        let calls = Rc::new(Calls::new(&lua));
        for (name, raise) in [("call", true), ("pcall", false)] {
            redis.set(name, super::raw::command_function(&lua, &calls, raise)?)?;
        }
        let script_calls = Rc::clone(&calls);
        redis.set(
            "set_repl",
            lua.create_function(move |_, args: MultiValue| {
                if args.len() != 1 {
                    return raise("redis.set_repl() requires one argument.");
                }
                let flags = to_number(&args[0]).unwrap_or(0.0) as i32;
                if flags & !REPL_ALL != 0 {
                    return raise(
                        "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                    );
                }
                script_calls.repl.set(flags);
                Ok(())
            })?,
        )?;
        let caller: Rc<RefCell<Option<Arc<User>>>> = Rc::default();
        let script_caller = Rc::clone(&caller);
        redis.set(
            "acl_check_cmd",
            lua.create_function(move |_, args: MultiValue| {
                let mut argv = CommandArgs::default();
                argv.fill(&args)?;
                let caller = script_caller.borrow();
                super::call::acl_check(caller.as_deref(), &argv.argv()).or_else(raise)
            })?,
        )?;
        hooks.set(
            "random",
            lua.create_function(|lua, args: MultiValue| {
                let drawn = Lrand48::draw();
                let max = i32::MAX as f64;
                let x = f64::from(drawn % i32::MAX) / max;
                let args: Vec<Value> = args.into_iter().collect();
                match args.len() {
                    0 => Ok(x),
                    1 => {
                        let u = check_int(lua, args.first(), 1, "random")?;
                        if u < 1 {
                            return Err(arg_error(lua, 1, "random", "interval is empty"));
                        }
                        Ok((x * u as f64).floor() + 1.0)
                    }
                    2 => {
                        let l = check_int(lua, args.first(), 1, "random")?;
                        let u = check_int(lua, args.get(1), 2, "random")?;
                        if l > u {
                            return Err(arg_error(lua, 2, "random", "interval is empty"));
                        }
                        Ok((x * (u - l + 1) as f64).floor() + l as f64)
                    }
                    _ => Err(located(lua, "wrong number of arguments")),
                }
            })?,
        )?;
        hooks.set(
            "randomseed",
            lua.create_function(|lua, args: MultiValue| {
                let args: Vec<Value> = args.into_iter().collect();
                let seed = check_int(lua, args.first(), 1, "randomseed")?;
                RANDOM.store(Lrand48::seed(seed as i32).0, Ordering::Relaxed);
                Ok(())
            })?,
        )?;
        hooks.set(
            "handler",
            lua.create_function(|lua, err: Value| locate_error(lua, err))?,
        )?;
        hooks.set("getmetatable", super::base::metatable_function(&lua)?)?;
        hooks.set("base", super::base::maker(&lua)?)?;
        hooks.set("bit", bit::library(&lua)?)?;
        hooks.set("cjson", cjson::library(&lua)?)?;
        hooks.set("cmsgpack", cmsgpack::library(&lua)?)?;
        hooks.set("struct", lstruct::library(&lua)?)?;
        let script_calls = Rc::clone(&calls);
        redis.set(
            "setresp",
            lua.create_function(move |_, args: MultiValue| {
                if args.len() != 1 {
                    return raise("redis.setresp() requires one argument.");
                }
                let resp = to_number(&args[0]).unwrap_or(0.0) as i32;
                if resp != 2 && resp != 3 {
                    return raise("RESP version must be 2 or 3.");
                }
                script_calls.resp3.set(resp == 3);
                Ok(())
            })?,
        )?;
        let (env, protect): (Table, Function) =
            lua.load(PRELUDE).set_name(INTERNAL).call(hooks.clone())?;
        lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(super::busy::HOOK_INSTRUCTIONS),
            super::busy::hook,
        )?;
        let handler: Function = hooks.get("handler")?;
        let globals = lua.globals();
        let array_names = super::raw::GlobalNames::new(&lua)?;
        Ok(Vm {
            lua,
            env,
            protect,
            redis,
            calls,
            caller,
            globals,
            handler,
            array_names,
            functions: Compiled::default(),
            generation,
            pruned_at: 0,
        })
    }

    /// Compiles a script body (after its shebang) in the scripts' environment. The error is
    /// Lua's message (`user_script:1: ...`).
    pub fn compile(&self, code: &[u8]) -> Result<Function, String> {
        self.lua
            .load(code)
            .set_name(USER_SCRIPT)
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| match e {
                mlua::Error::SyntaxError { message, .. } => message,
                other => other.to_string(),
            })
    }

    /// Memory the VM holds (INFO's `used_memory_lua`).
    pub fn memory(&self) -> usize {
        self.lua.used_memory()
    }
}

/// `0x00MMmmpp` from `M.m.p`, as Redis's `REDIS_VERSION_NUM`.
fn version_num(version: &str) -> i64 {
    let mut parts = version.split('.').map(|p| p.parse::<i64>().unwrap_or(0));
    let (major, minor, patch) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    (major << 16) | (minor << 8) | patch
}

/// The error handler (Redis's `__redis__err__handler`): the error as a table with `err`, and
/// the `source` and `line` of the frame that raised it, skipping C functions and the internal
/// wrappers (so an error raised by `redis.call` or a global lookup points at the script).
fn locate_error(lua: &Lua, err: Value) -> mlua::Result<Value> {
    let table = match err {
        Value::Table(t) => t,
        Value::Error(e) => {
            let t = lua.create_table()?;
            let text = match script_error(&e) {
                Some(ScriptError { text, counted }) => {
                    if *counted {
                        t.raw_set("ignore_error_stats_update", true)?;
                    }
                    text.clone()
                }
                None => {
                    let mut text = b"ERR ".to_vec();
                    text.extend_from_slice(runtime_message(&e).as_bytes());
                    text
                }
            };
            t.raw_set("err", lua.create_string(text)?)?;
            t
        }
        other => {
            let text = match &other {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Number(n) => lua_number_text(*n).into_bytes(),
                Value::Integer(n) => lua_number_text(*n as f64).into_bytes(),
                Value::Nil => b"nil".to_vec(),
                Value::Boolean(b) => b.to_string().into_bytes(),
                Value::Error(e) => e.to_string().into_bytes(),
                v => format!("{}: {:p}", v.type_name(), v.to_pointer()).into_bytes(),
            };
            let t = lua.create_table()?;
            let mut msg = b"ERR ".to_vec();
            msg.extend_from_slice(&text);
            t.raw_set("err", lua.create_string(msg)?)?;
            t
        }
    };
    for level in 1..64 {
        let Some(frame) = lua.inspect_stack(level, |d| {
            let source = d.source();
            (
                source.what,
                source.source.map(|s| s.into_owned()),
                d.current_line(),
            )
        }) else {
            break;
        };
        let (what, source, line) = frame;
        if what == "C" || source.as_deref() == Some(INTERNAL) {
            continue;
        }
        if let (Some(source), Some(line)) = (source, line) {
            table.raw_set("source", source)?;
            table.raw_set("line", line)?;
        }
        break;
    }
    Ok(Value::Table(table))
}

/// An error as Redis raises it from `redis.call` and the other `redis` functions: the table
/// `{err = "CODE msg"}` (Rust functions raise it as this error value, which the error handler
/// and `pcall` turn back into the table and its text).
#[derive(Debug, Clone)]
pub(crate) struct ScriptError {
    /// The `err` text, `CODE msg`.
    pub text: Vec<u8>,
    /// The error was counted in the error stats already (a command's error, or `redis.call`'s
    /// refusal): the reply that carries it is not counted again (Redis's
    /// `ignore_error_stats_update`).
    pub counted: bool,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.text))
    }
}

impl std::error::Error for ScriptError {}

/// Raises Redis's error for `msg` (`ERR msg`, or the code a `-CODE msg` text carries).
pub(crate) fn raise<T>(msg: &str) -> mlua::Result<T> {
    Err(mlua::Error::external(ScriptError {
        text: convert::error_text(msg.as_bytes()),
        counted: false,
    }))
}

/// The [`ScriptError`] an error carries, if any.
pub(crate) fn script_error(e: &mlua::Error) -> Option<&ScriptError> {
    match e {
        mlua::Error::CallbackError { cause, .. } => script_error(cause),
        mlua::Error::WithContext { cause, .. } => script_error(cause),
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<ScriptError>(),
        _ => None,
    }
}

/// An error's message as a Lua error string would read.
pub(crate) fn runtime_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => runtime_message(cause),
        mlua::Error::WithContext { cause, .. } => runtime_message(cause),
        mlua::Error::RuntimeError(msg) => msg.clone(),
        other => other.to_string(),
    }
}

/// `pcall`'s error value: an error table's `err` text, a raised Redis error's text, a
/// library error's message; anything else as it is.
fn error_value(lua: &Lua, v: Value) -> mlua::Result<Value> {
    // A killed script's `pcall` does not stop the kill.
    if super::busy::killed() {
        return raise("Script killed by user with SCRIPT KILL...");
    }
    Ok(match v {
        Value::Table(t) => match t.get::<Value>("err")? {
            text @ (Value::String(_) | Value::Number(_) | Value::Integer(_)) => text,
            _ => Value::Table(t),
        },
        Value::Error(e) => match script_error(&e) {
            Some(ScriptError { text, .. }) => Value::String(lua.create_string(text)?),
            None => Value::String(lua.create_string(runtime_message(&e))?),
        },
        other => other,
    })
}

/// A runtime error raised by a library function, placed as `luaL_error` places it: prefixed
/// with the calling Lua function's `source:line: `.
pub(crate) fn located(lua: &Lua, msg: &str) -> mlua::Error {
    let place = lua
        .inspect_stack(1, |d| {
            let source = d.source();
            match (source.short_src, d.current_line()) {
                (Some(src), Some(line)) if source.what != "C" => format!("{src}:{line}: "),
                _ => String::new(),
            }
        })
        .unwrap_or_default();
    mlua::Error::RuntimeError(format!("{place}{msg}"))
}

/// A value as `lua_tonumber` reads it (numbers, and strings holding one).
pub(crate) fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        Value::Integer(n) => Some(*n as f64),
        Value::String(s) => s.to_str().ok().and_then(|s| parse_lua_number(s.trim())),
        _ => None,
    }
}

fn parse_lua_number(s: &str) -> Option<f64> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    s.parse().ok()
}

/// `redis.call`'s refusal of a call without arguments.
pub(crate) const NO_ARGUMENTS: &str =
    "Please specify at least one argument for this redis lib call";
/// `redis.call`'s refusal of an argument that is neither a string nor a number.
pub(crate) const NOT_STRINGS: &str = "Lua redis lib command arguments must be strings or integers";

/// `redis.call`'s arguments as a command (`luaArgsToRedisArgv`), or Redis's refusal raised.
/// They are laid end to end in one buffer, kept by the caller across calls, so a command
/// from a script costs no allocation per argument.
#[derive(Debug, Default)]
pub(crate) struct CommandArgs {
    bytes: Vec<u8>,
    /// Where each argument ends in `bytes`.
    ends: Vec<usize>,
}

impl CommandArgs {
    /// Replaces the arguments with `args`'s, or raises Redis's refusal.
    pub(crate) fn fill(&mut self, args: &MultiValue) -> mlua::Result<()> {
        if args.is_empty() {
            return raise(NO_ARGUMENTS);
        }
        self.clear();
        for arg in args.iter() {
            if convert::arg_bytes(arg, &mut self.bytes).is_none() {
                return raise(NOT_STRINGS);
            }
            self.ends.push(self.bytes.len());
        }
        Ok(())
    }

    /// Drops every argument.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends an argument.
    pub(crate) fn push(&mut self, arg: &[u8]) {
        self.bytes.extend_from_slice(arg);
        self.ends.push(self.bytes.len());
    }

    /// Appends a number argument, written as Redis writes a Lua number it is passed.
    pub(crate) fn push_number(&mut self, n: f64) {
        self.bytes
            .extend_from_slice(convert::format_number(n).as_bytes());
        self.ends.push(self.bytes.len());
    }

    /// Lets the buffer go if it grew past `max` bytes.
    pub(crate) fn shrink(&mut self, max: usize) {
        if self.bytes.capacity() > max {
            self.bytes = Vec::new();
        }
        if self.ends.capacity() * std::mem::size_of::<usize>() > max {
            self.ends = Vec::new();
        }
    }

    /// Runs `f` on the arguments, in order: laid out on the stack when they are few, as a
    /// script's command's usually are.
    pub(crate) fn with_argv<R>(&self, f: impl FnOnce(&[&[u8]]) -> R) -> R {
        const FEW: usize = 16;
        if self.ends.len() > FEW {
            return f(&self.argv());
        }
        let mut few: [&[u8]; FEW] = [&[]; FEW];
        let mut start = 0;
        for (slot, &end) in few.iter_mut().zip(&self.ends) {
            *slot = &self.bytes[start..end];
            start = end;
        }
        f(&few[..self.ends.len()])
    }

    /// The arguments, in order.
    pub(crate) fn argv(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let arg = &self.bytes[start..end];
                start = end;
                arg
            })
            .collect()
    }
}

/// A number as Lua's `tostring` writes it (`%.14g`).
pub(crate) fn lua_number_text(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.into();
    }
    if n == n.trunc() && n.abs() < 1e14 {
        // `%g` keeps the sign of a negative zero.
        if n == 0.0 && n.is_sign_negative() {
            return "-0".into();
        }
        return format!("{}", n as i64);
    }
    // %.14g: 14 significant digits, trailing zeros dropped, exponent form outside 1e-5..1e14.
    let exp = n.abs().log10().floor() as i32;
    if !(-5..14).contains(&exp) {
        let s = format!("{:.13e}", n);
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", e.abs());
    }
    let decimals = (13 - exp).max(0) as usize;
    let s = format!("{:.*}", decimals, n);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lrand48_is_drand48_s_sequence() {
        // Redis seeds its generator as drand48's seed48({0x330E, 0xABCD, 0x1234}) would.
        let mut r = Lrand48(Lrand48::INITIAL);
        assert_eq!(
            [r.next(), r.next(), r.next()],
            [851401618, 1804928587, 758783491]
        );
        let mut s = Lrand48::seed(1);
        assert_eq!(
            [s.next(), s.next(), s.next()],
            [89400484, 976015093, 1792756325]
        );
    }

    #[test]
    fn version_num_is_redis_s() {
        assert_eq!(version_num("8.8.0"), 0x0008_0800);
    }

    #[test]
    fn lua_numbers_print_as_lua_prints_them() {
        assert_eq!(lua_number_text(1.0), "1");
        assert_eq!(lua_number_text(0.1), "0.1");
        assert_eq!(lua_number_text(-0.0), "-0");
        assert_eq!(lua_number_text(1e100), "1e+100");
        assert_eq!(lua_number_text(1.0 / 3.0), "0.33333333333333");
    }
}

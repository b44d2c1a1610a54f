//! Functions as Redis 8.8 runs them: FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE/STATS/KILL
//! /HELP, FCALL and FCALL_RO.
//!
//! A library is its code (`#!lua name=<lib>` then Lua); loading runs the code once, in an
//! environment that holds only the load API (`redis.register_function`, `redis.log`, the
//! log levels and versions: anything else is Redis's "nonexistent global variable"), and
//! the functions it registered are the library's. Calls run in the scripting sandbox, with
//! the keys and arguments as the function's two arguments.
//!
//! Invariants:
//! - The [`Registry`] is the only truth: its libraries' codes are what persists (RDB
//!   `FUNCTION2` records, FUNCTION DUMP, the AOF's FUNCTION LOAD commands). Every library in it
//!   loaded without error and registered at least one function, and no two libraries register
//!   the same function name; `functions` indexes exactly the libraries' functions.
//! - `generation` moves on every change. Each thread has its own VM for functions ([`FVM`]),
//!   whose callbacks belong to one generation: a call on a VM of an older generation first
//!   loads the registry's libraries again on it (loading is deterministic: what loaded once
//!   loads again).
//! - A change is all or nothing: a library that fails to load, a name collision or a bad
//!   payload leave the registry as it was.
//! - Every FUNCTION command that changes the registry runs under the keyspace lock (it is a
//!   keyspace command) and is propagated verbatim, counting one change, as Redis's.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use echomq_engine::Reply;
use echomq_engine::rdb::codec::{Reader, Writer};
use echomq_engine::rdb::{RDB_VERSION, crc64::crc64, opcodes};
use mlua::{Function, MultiValue, Table, Value};
use parking_lot::Mutex;

use super::cache::ScriptFlags;
use super::sandbox::{self, Vm};
use super::{Invocation, as_script, err, execute, prepare};
use crate::cmd::{Ctx, is};

/// How long a library's code may run while it loads (Redis's `LOAD_TIMEOUT_MS`).
const LOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// The chunk name library code compiles under (Redis's), so messages read
/// `user_function:2: ...`.
const USER_FUNCTION: &str = "@user_function";

/// One function a library registered.
#[derive(Debug, Clone)]
pub(crate) struct FunctionInfo {
    pub name: String,
    pub description: Option<Bytes>,
    pub flags: ScriptFlags,
}

/// A loaded library.
#[derive(Debug, Clone)]
pub(crate) struct Library {
    pub name: String,
    /// The whole code, shebang included (what persists).
    pub code: Bytes,
    pub functions: Vec<FunctionInfo>,
}

/// The libraries (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Registry {
    libraries: BTreeMap<String, Arc<Library>>,
    /// Function name → its library's name and its flags.
    functions: HashMap<String, (String, ScriptFlags)>,
    generation: u64,
}

impl Registry {
    /// Adds libraries loaded from elsewhere (already checked against each other), replacing
    /// those of the same names when `replace`; refuses a library or function name collision
    /// with Redis's text (`libraryJoin`).
    fn join(&mut self, new: Vec<Library>, replace: bool) -> Result<(), String> {
        let mut kept = self.libraries.clone();
        for library in &new {
            if kept.contains_key(&library.name) {
                if !replace {
                    return Err(format!("Library {} already exists", library.name));
                }
                kept.remove(&library.name);
            }
        }
        let taken: HashMap<&str, ()> = kept
            .values()
            .flat_map(|l| l.functions.iter().map(|f| (f.name.as_str(), ())))
            .collect();
        for library in &new {
            for function in &library.functions {
                if taken.contains_key(function.name.as_str()) {
                    return Err(format!("Function {} already exists", function.name));
                }
            }
        }
        for library in new {
            kept.insert(library.name.clone(), Arc::new(library));
        }
        self.set(kept);
        Ok(())
    }

    /// Makes `libraries` the registry's, moving the generation.
    fn set(&mut self, libraries: BTreeMap<String, Arc<Library>>) {
        self.functions = libraries
            .values()
            .flat_map(|l| {
                l.functions
                    .iter()
                    .map(|f| (f.name.clone(), (l.name.clone(), f.flags)))
            })
            .collect();
        self.libraries = libraries;
        self.generation += 1;
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        let mut seen = std::collections::HashSet::new();
        for (name, library) in &self.libraries {
            assert_eq!(*name, library.name);
            assert!(!library.functions.is_empty());
            for f in &library.functions {
                assert!(seen.insert(f.name.clone()), "{} twice", f.name);
                assert_eq!(self.functions.get(&f.name).map(|x| &x.0), Some(name));
            }
        }
        assert_eq!(seen.len(), self.functions.len());
    }
}

/// The function libraries, shared by every connection.
#[derive(Debug, Default)]
pub(crate) struct Functions {
    registry: Mutex<Registry>,
}

impl Functions {
    /// The libraries' codes (what an RDB file or a rewritten AOF holds), in name order.
    pub(crate) fn codes(&self) -> Vec<Bytes> {
        self.registry
            .lock()
            .libraries
            .values()
            .map(|l| l.code.clone())
            .collect()
    }

    /// How many libraries and functions there are (INFO's `libraries_count`/`functions_count`).
    pub(crate) fn counts(&self) -> (usize, usize) {
        let registry = self.registry.lock();
        (registry.libraries.len(), registry.functions.len())
    }

    /// Bytes the libraries' codes take (INFO's `used_memory_functions`, roughly).
    pub(crate) fn memory(&self) -> usize {
        self.registry
            .lock()
            .libraries
            .values()
            .map(|l| l.code.len() + l.name.len())
            .sum()
    }

    /// Loads the libraries of an RDB file (or an AOF's RDB preamble) at start: all of them or
    /// none, the error naming what failed.
    pub(crate) fn load_codes(&self, codes: &[Bytes]) -> Result<(), String> {
        let libraries = with_fvm(|fvm| load_all(fvm, codes))
            .map_err(|e| format!("{e:?}"))?
            .map_err(|e| format!("Failed creating the library: {e}"))?;
        self.registry.lock().join(libraries, true)
    }
}

/// What a thread's function VM holds besides the sandbox.
struct FnVm {
    vm: Vm,
    /// The libraries' environment: the load API while loading, the sandbox's globals after.
    env: Table,
    /// `function(chunk) -> ok, err`: runs a library's code in load mode.
    loader: Function,
    /// The registrations of the library loading now (`None` outside a load: a function that
    /// kept `redis.register_function` and calls it later gets Redis's refusal).
    pending: Rc<RefCell<Option<Vec<Registered>>>>,
}

/// One `redis.register_function` call.
struct Registered {
    info: FunctionInfo,
    callback: Function,
}

thread_local! {
    /// This thread's VM for functions (see the module docs); its `vm.generation` is the
    /// registry generation whose callbacks `vm.functions` holds.
    static FVM: RefCell<Option<FnVm>> = const { RefCell::new(None) };
    /// [`FVM`]'s memory as its current run started: what INFO reports when a function runs
    /// it (the run holds the VM).
    static FVM_MEMORY_AT_RUN: Cell<usize> = const { Cell::new(0) };
}

/// Sets up the libraries' environment on a sandbox VM; `...` is the real globals, the
/// register function, `redis.log`, and the versions.
const LIBRARY_ENV: &str = r#"
local G, register, log, version, version_num, protect = ...
local function strict(t)
  return setmetatable({}, {
    __index = function(_, k)
      local v = rawget(t, k)
      if v == nil then
        error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
      end
      return v
    end,
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    __metatable = false,
  })
end
local api = {
  redis = strict({
    register_function = register,
    log = log,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = version,
    REDIS_VERSION_NUM = version_num,
  }),
}
local env = {}
local mt = {
  __newindex = function() error('Attempt to modify a readonly table', 2) end,
  __metatable = false,
}
-- While a library loads, its code sees only the load API.
local function load_index(_, k)
  local v = rawget(api, k)
  if v == nil then
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end
  return v
end
-- Its functions read the globals through tables (a lookup, not a call): `_G` is this
-- environment, any other name the globals', whose own `__index` raises for a missing one.
local run_index = setmetatable({_G = env}, {__index = G})
mt.__index = run_index
setmetatable(env, mt)
-- As EVAL's: `rawset(_G, ...)` refused, `pairs(_G)` the globals; Redis's function VM has no
-- `__redis__err__handler` among them (the handler runs from its handle, not by name).
protect(env, G)
rawset(G, '__redis__err__handler', nil)
local function loader(chunk)
  mt.__index = load_index
  local ok, e = xpcall(chunk, function(e) return e end)
  mt.__index = run_index
  return ok, e
end
return env, loader
"#;

impl FnVm {
    fn new() -> mlua::Result<FnVm> {
        let vm = Vm::new(u64::MAX)?;
        let pending: Rc<RefCell<Option<Vec<Registered>>>> = Rc::default();
        let registering = pending.clone();
        let register = vm.lua.create_function(move |_, args: MultiValue| {
            let mut pending = registering.borrow_mut();
            let Some(registered) = pending.as_mut() else {
                return sandbox::raise(
                    "redis.register_function can only be called on FUNCTION LOAD command",
                );
            };
            let new = registration(&args).or_else(sandbox::raise)?;
            if !valid_name(&new.info.name) {
                return sandbox::raise(
                    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long",
                );
            }
            if registered.iter().any(|r| r.info.name == new.info.name) {
                return sandbox::raise("Function already exists in the library");
            }
            registered.push(new);
            Ok(())
        })?;
        let log: Value = vm.redis.raw_get("log")?;
        let version = crate::REDIS_VERSION;
        let version_num: Value = vm.redis.raw_get("REDIS_VERSION_NUM")?;
        let (env, loader): (Table, Function) =
            vm.lua.load(LIBRARY_ENV).set_name(sandbox::INTERNAL).call((
                vm.globals.clone(),
                register,
                log,
                version,
                version_num,
                vm.protect.clone(),
            ))?;
        Ok(FnVm {
            vm,
            env,
            loader,
            pending,
        })
    }

    /// Loads a library's code on this VM (Redis's `functionsCreateWithLibraryCtx` up to its
    /// checks against the other libraries): the library and its callbacks, or Redis's error
    /// text (without its `ERR ` code).
    fn load(&self, code: &[u8]) -> Result<(Library, Vec<Function>), String> {
        let (name, body_start) = metadata(code)?;
        let chunk = self
            .vm
            .lua
            .load(&code[body_start..])
            .set_name(USER_FUNCTION)
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| {
                let message = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                format!("Error compiling function: {message}")
            })?;
        *self.pending.borrow_mut() = Some(Vec::new());
        let ran: mlua::Result<(bool, Value)> =
            super::busy::with_load_deadline(LOAD_TIMEOUT, || self.loader.call(chunk));
        let registered = self.pending.borrow_mut().take().unwrap_or_default();
        let (ok, error) = ran.map_err(|e| format!("Error registering functions: ERR {e}"))?;
        if !ok {
            return Err(format!(
                "Error registering functions: {}",
                load_error_text(&error)
            ));
        }
        if registered.is_empty() {
            return Err("No functions registered".into());
        }
        let (functions, callbacks) = registered.into_iter().map(|r| (r.info, r.callback)).unzip();
        let library = Library {
            name,
            code: Bytes::copy_from_slice(code),
            functions,
        };
        Ok((library, callbacks))
    }

    /// Makes this VM's callbacks those of `libraries` (of registry generation `generation`).
    fn sync(&mut self, libraries: &[Arc<Library>], generation: u64) {
        self.vm.functions.clear();
        for library in libraries {
            if let Ok((loaded, callbacks)) = self.load(&library.code) {
                for (info, callback) in loaded.functions.into_iter().zip(callbacks) {
                    if let Ok(key) = self.vm.lua.create_registry_value(callback) {
                        self.vm.functions.insert(info.name, key);
                    }
                }
            }
        }
        self.vm.generation = generation;
    }
}

/// The error a library's code raised while loading, as Redis's `luaExtractErrorInformation`
/// words it.
fn load_error_text(error: &Value) -> String {
    match error {
        Value::String(s) => format!("ERR {}", String::from_utf8_lossy(&s.as_bytes())),
        Value::Number(n) => format!("ERR {}", sandbox::lua_number_text(*n)),
        Value::Integer(n) => format!("ERR {n}"),
        Value::Table(t) => match t.raw_get::<Value>("err") {
            Ok(Value::String(s)) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            _ => "ERR unknown error".into(),
        },
        Value::Error(e) => match sandbox::script_error(e) {
            Some(raised) => String::from_utf8_lossy(&raised.text).into_owned(),
            None => format!("ERR {}", sandbox::runtime_message(e)),
        },
        _ => "ERR unknown error".into(),
    }
}

/// Memory this thread's function VM holds (INFO's `used_memory_vm_functions`; Redis's starts
/// at about 32 KB, which a thread without one reports).
pub(crate) fn vm_memory() -> usize {
    FVM.with(|vm| match vm.try_borrow() {
        Ok(vm) => vm.as_ref().map_or(32_768, |f| f.vm.memory()),
        Err(_) => FVM_MEMORY_AT_RUN.get(),
    })
}

/// Runs `f` on this thread's function VM, building it first if needed.
fn with_fvm<R>(f: impl FnOnce(&mut FnVm) -> R) -> Result<R, Reply> {
    FVM.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(FnVm::new().map_err(|e| err(format!("Lua VM: {e}")))?);
        }
        match slot.as_mut() {
            Some(fvm) => {
                FVM_MEMORY_AT_RUN.set(fvm.vm.memory());
                Ok(f(fvm))
            }
            None => Err(err("Lua VM unavailable")),
        }
    })
}

/// Loads several libraries' codes, each checked against the others as Redis loads a payload
/// into a fresh context: a library name twice is refused.
fn load_all(fvm: &FnVm, codes: &[Bytes]) -> Result<Vec<Library>, String> {
    let mut libraries: Vec<Library> = Vec::with_capacity(codes.len());
    for code in codes {
        let (library, _) = fvm.load(code)?;
        if libraries.iter().any(|l| l.name == library.name) {
            return Err(format!("Library '{}' already exists", library.name));
        }
        for f in &library.functions {
            if libraries
                .iter()
                .any(|l| l.functions.iter().any(|g| g.name == f.name))
            {
                return Err(format!("Function {} already exists", f.name));
            }
        }
        libraries.push(library);
    }
    Ok(libraries)
}

/// Redis's `functionsVerifyName`.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Redis's `functionExtractLibMetaData` and the checks after it: the library's name and
/// where the code after the shebang starts (at its line feed, so line numbers hold).
fn metadata(code: &[u8]) -> Result<(String, usize), String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(end) = code.iter().position(|&b| b == b'\n') else {
        return Err("Invalid library metadata".into());
    };
    let line = String::from_utf8_lossy(&code[..end]);
    let mut parts = line.split_ascii_whitespace();
    let engine = parts.next().unwrap_or("#!").get(2..).unwrap_or("");
    let mut name: Option<&str> = None;
    for part in parts {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case("name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(&part[5..]);
            continue;
        }
        return Err(format!("Invalid metadata value given: {part}"));
    }
    let Some(name) = name else {
        return Err("Library name was not given".into());
    };
    if !valid_name(name) {
        return Err("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into());
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("Engine '{engine}' not found"));
    }
    Ok((name.to_string(), end))
}

/// The flags Redis knows, in its order (`scripts_flags_def`).
const FLAG_NAMES: [&str; 5] = [
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

fn flag_names(flags: ScriptFlags) -> Vec<&'static str> {
    let set = [
        flags.no_writes,
        flags.allow_oom,
        flags.allow_stale,
        flags.no_cluster,
        flags.allow_cross_slot,
    ];
    FLAG_NAMES
        .iter()
        .zip(set)
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect()
}

/// A flags table (`{'no-writes', ...}`), as `luaRegisterFunctionReadFlags` reads it.
fn read_flags(table: &Table) -> Option<ScriptFlags> {
    let mut flags = ScriptFlags::default();
    for i in 1.. {
        let value: Value = table.raw_get(i).ok()?;
        let text = match &value {
            Value::Nil => break,
            Value::String(s) => s.to_str().ok()?.to_string(),
            Value::Number(_) | Value::Integer(_) => String::new(),
            _ => return None,
        };
        let text = text.to_ascii_lowercase();
        match text.as_str() {
            "no-writes" => flags.no_writes = true,
            "allow-oom" => flags.allow_oom = true,
            "allow-stale" => flags.allow_stale = true,
            "no-cluster" => flags.no_cluster = true,
            "allow-cross-slot-keys" => flags.allow_cross_slot = true,
            _ => return None,
        }
    }
    Some(flags)
}

/// A string argument as `luaGetStringSds` takes it (strings and numbers).
fn lua_text(value: &Value) -> Option<String> {
    super::convert::arg_vec(value).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// `redis.register_function`'s arguments, positional or named, with Redis's errors.
fn registration(args: &MultiValue) -> Result<Registered, &'static str> {
    match args.len() {
        1 => {
            let Value::Table(table) = &args[0] else {
                return Err(
                    "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).",
                );
            };
            let mut name = None;
            let mut description = None;
            let mut callback = None;
            let mut flags = ScriptFlags::default();
            for pair in table.clone().pairs::<Value, Value>() {
                let (key, value) =
                    pair.map_err(|_| "unknown argument given to redis.register_function")?;
                let Some(key) = lua_text(&key) else {
                    return Err(
                        "named argument key given to redis.register_function is not a string",
                    );
                };
                if key.eq_ignore_ascii_case("function_name") {
                    name = Some(lua_text(&value).ok_or(
                        "function_name argument given to redis.register_function must be a string",
                    )?);
                } else if key.eq_ignore_ascii_case("description") {
                    let text = super::convert::arg_vec(&value).ok_or(
                        "description argument given to redis.register_function must be a string",
                    )?;
                    description = Some(Bytes::from(text));
                } else if key.eq_ignore_ascii_case("callback") {
                    let Value::Function(f) = value else {
                        return Err(
                            "callback argument given to redis.register_function must be a function",
                        );
                    };
                    callback = Some(f);
                } else if key.eq_ignore_ascii_case("flags") {
                    let Value::Table(t) = value else {
                        return Err(
                            "flags argument to redis.register_function must be a table representing function flags",
                        );
                    };
                    flags = read_flags(&t).ok_or("unknown flag given")?;
                } else {
                    return Err("unknown argument given to redis.register_function");
                }
            }
            let name = name.ok_or("redis.register_function must get a function name argument")?;
            let callback =
                callback.ok_or("redis.register_function must get a callback argument")?;
            Ok(Registered {
                info: FunctionInfo {
                    name,
                    description,
                    flags: ScriptFlags {
                        compat: false,
                        ..flags
                    },
                },
                callback,
            })
        }
        2 => {
            let name = lua_text(&args[0])
                .ok_or("first argument to redis.register_function must be a string")?;
            let Value::Function(callback) = &args[1] else {
                return Err("second argument to redis.register_function must be a function");
            };
            Ok(Registered {
                info: FunctionInfo {
                    name,
                    description: None,
                    flags: ScriptFlags::default(),
                },
                callback: callback.clone(),
            })
        }
        _ => Err("wrong number of arguments to redis.register_function"),
    }
}

/// `FCALL function numkeys [key ...] [arg ...]`.
pub(crate) fn fcall(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    call(ctx, argv, false)
}

/// `FCALL_RO function numkeys [key ...] [arg ...]`.
pub(crate) fn fcall_ro(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    call(ctx, argv, true)
}

fn call(ctx: &mut Ctx<'_>, argv: &[&[u8]], read_only: bool) -> Reply {
    // MONITOR shows the call before the commands its function runs (Redis feeds it first).
    ctx.state
        .feed_monitors(&ctx.client.info, ctx.client.db, argv);
    let name = String::from_utf8_lossy(argv[1]);
    let name: &str = &name;
    let found = {
        let registry = ctx.state.functions().registry.lock();
        registry
            .functions
            .get(name)
            .map(|(_, flags)| (*flags, registry.generation))
    };
    // Redis's `processCommand` refuses a function that may write over `maxmemory` before it
    // runs (`fcallGetCommandFlags` makes FCALL a DENY_OOM command).
    if found.is_some_and(|(flags, _)| super::denies_oom(flags)) && ctx.state.over_maxmemory() {
        return crate::error::CommandError::OutOfMemory.into();
    }
    let Some((flags, generation)) = found else {
        return err("Function not found");
    };
    let Ok(numkeys) = crate::cmd::int_arg(argv[2]) else {
        return err("Bad number of keys provided");
    };
    if numkeys > argv.len() as i64 - 3 {
        return err("Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return err("Number of keys can't be negative");
    }
    let numkeys = numkeys as usize;
    let limits = match prepare(ctx, flags, read_only) {
        Ok(limits) => limits,
        Err(refusal) => return refusal,
    };
    let _watch = super::busy::watch(ctx.state.busy(), ctx.state.busy_reply_threshold_ms(), false);
    as_script(ctx, |ctx| {
        let ran = with_fvm(|fvm| {
            if fvm.vm.generation != generation {
                let libraries: Vec<Arc<Library>> = ctx
                    .state
                    .functions()
                    .registry
                    .lock()
                    .libraries
                    .values()
                    .cloned()
                    .collect();
                fvm.sync(&libraries, generation);
            }
            let Some(Ok(())) = fvm.vm.functions.select(&fvm.vm.lua, name) else {
                return err("Function not found");
            };
            let Some(function) = fvm.vm.functions.selected() else {
                return err("Function not found");
            };
            execute(
                &fvm.vm,
                ctx,
                name,
                function,
                Invocation::Fcall,
                argv,
                numkeys,
                limits,
            )
        });
        match ran {
            Ok(reply) | Err(reply) => reply,
        }
    })
}

/// `FUNCTION <subcommand> ...`.
pub(crate) fn function(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(found) = crate::cmd::subcommand_of(argv) else {
        return crate::cmd::unknown_subcommand(argv);
    };
    if !found.arity_ok(argv.len()) {
        return crate::cmd::error(echomq_engine::Error::WrongArity(
            found.full_name.to_string(),
        ));
    }
    let sub = argv[1];
    if is(sub, "load") {
        load(ctx, argv)
    } else if is(sub, "delete") {
        delete(ctx, argv)
    } else if is(sub, "flush") {
        flush(ctx, argv)
    } else if is(sub, "list") {
        list(ctx, argv)
    } else if is(sub, "dump") {
        Reply::Bulk(Bytes::from(dump(
            &ctx.state.functions().codes(),
            ctx.state.settings().rdbcompression,
        )))
    } else if is(sub, "restore") {
        restore(ctx, argv)
    } else if is(sub, "stats") {
        stats(ctx)
    } else if is(sub, "kill") {
        Reply::Error("NOTBUSY No scripts in execution right now.".into())
    } else {
        Reply::Array(HELP.iter().map(|l| Reply::Status(l)).collect())
    }
}

/// `FUNCTION LOAD [REPLACE] code`.
fn load(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let mut replace = false;
    for option in &argv[2..argv.len() - 1] {
        if is(option, "replace") {
            replace = true;
            continue;
        }
        return err(format!(
            "Unknown option given: {}",
            String::from_utf8_lossy(option)
        ));
    }
    let code = argv[argv.len() - 1];
    let functions = ctx.state.functions();
    // Redis checks the name against the loaded libraries before it runs the code.
    if !replace
        && let Ok((name, _)) = metadata(code)
        && functions.registry.lock().libraries.contains_key(&name)
    {
        return err(format!("Library '{name}' already exists"));
    }
    let loaded = match with_fvm(|fvm| fvm.load(code)) {
        Ok(Ok((library, _))) => library,
        Ok(Err(text)) => return err(text),
        Err(reply) => return reply,
    };
    let name = loaded.name.clone();
    let mut registry = functions.registry.lock();
    let mut kept = registry.libraries.clone();
    kept.remove(&name);
    for f in &loaded.functions {
        if kept
            .values()
            .any(|l| l.functions.iter().any(|g| g.name == f.name))
        {
            return err(format!("Function {} already exists", f.name));
        }
    }
    kept.insert(name.clone(), Arc::new(loaded));
    registry.set(kept);
    drop(registry);
    ctx.db().changed(1, argv);
    Reply::bulk(name)
}

/// `FUNCTION DELETE library`.
fn delete(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let name = String::from_utf8_lossy(argv[2]).into_owned();
    let mut registry = ctx.state.functions().registry.lock();
    let mut kept = registry.libraries.clone();
    if kept.remove(&name).is_none() {
        return err("Library not found");
    }
    registry.set(kept);
    drop(registry);
    ctx.db().changed(1, argv);
    Reply::OK
}

/// `FUNCTION FLUSH [ASYNC|SYNC]`.
fn flush(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if argv.len() > 3 {
        return crate::cmd::subcommand_syntax(argv);
    }
    if argv.len() == 3 && !is(argv[2], "sync") && !is(argv[2], "async") {
        return err("FUNCTION FLUSH only supports SYNC|ASYNC option");
    }
    ctx.state.functions().registry.lock().set(BTreeMap::new());
    ctx.db().changed(1, argv);
    Reply::OK
}

/// `FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]`.
fn list(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 2;
    while i < argv.len() {
        let arg = argv[i];
        if !with_code && is(arg, "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(arg, "libraryname") {
            if i >= argv.len() - 1 {
                return err("library name argument was not given");
            }
            i += 1;
            pattern = Some(argv[i]);
        } else {
            return err(format!("Unknown argument {}", String::from_utf8_lossy(arg)));
        }
        i += 1;
    }
    let registry = ctx.state.functions().registry.lock();
    let bulk = |s: &str| Reply::bulk(s);
    let libraries = registry
        .libraries
        .values()
        .filter(|l| {
            pattern.is_none_or(|p| echomq_engine::glob::matches(p, l.name.as_bytes(), true))
        })
        .map(|l| {
            let functions = l
                .functions
                .iter()
                .map(|f| {
                    Reply::Map(vec![
                        (bulk("name"), bulk(&f.name)),
                        (
                            bulk("description"),
                            f.description.clone().map_or(Reply::Null, Reply::Bulk),
                        ),
                        (
                            bulk("flags"),
                            Reply::Set(
                                flag_names(f.flags).into_iter().map(Reply::Status).collect(),
                            ),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                (bulk("library_name"), bulk(&l.name)),
                (bulk("engine"), bulk("LUA")),
                (bulk("functions"), Reply::Array(functions)),
            ];
            if with_code {
                fields.push((bulk("library_code"), Reply::Bulk(l.code.clone())));
            }
            Reply::Map(fields)
        })
        .collect();
    Reply::Array(libraries)
}

/// `FUNCTION STATS` under the keyspace lock: no script runs (a busy one's is answered by
/// [`super::busy`]), so `running_script` is nil.
fn stats(ctx: &mut Ctx<'_>) -> Reply {
    stats_with(ctx.state, Reply::Null)
}

/// FUNCTION STATS's reply with `running` as its `running_script`.
pub(crate) fn stats_with(state: &crate::state::ServerState, running: Reply) -> Reply {
    let (libraries, functions) = state.functions().counts();
    let bulk = |s: &str| Reply::bulk(s);
    Reply::Map(vec![
        (bulk("running_script"), running),
        (
            bulk("engines"),
            Reply::Map(vec![(
                bulk("LUA"),
                Reply::Map(vec![
                    (bulk("libraries_count"), Reply::Int(libraries as i64)),
                    (bulk("functions_count"), Reply::Int(functions as i64)),
                ]),
            )]),
        ),
    ])
}

/// FUNCTION DUMP's payload of `codes`, as Redis's `createFunctionDumpPayload`: a `FUNCTION2`
/// record per library (its code an RDB string, LZF-compressed under `rdbcompression` as
/// Redis's), the RDB version (2 bytes little-endian) and the CRC64 of all before it.
pub(crate) fn dump(codes: &[Bytes], compress: bool) -> Vec<u8> {
    let mut w = Writer::new(compress);
    for code in codes {
        w.byte(opcodes::FUNCTION2);
        w.string(code);
    }
    w.raw(&RDB_VERSION.to_le_bytes());
    let mut payload = w.into_bytes();
    let crc = crc64(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    payload
}

/// The library codes of a FUNCTION DUMP payload, with Redis's errors (without `ERR `).
fn payload_codes(payload: &[u8]) -> Result<Vec<Bytes>, String> {
    if !echomq_engine::rdb::dump::verify(payload) {
        return Err("DUMP payload version or checksum are wrong".into());
    }
    let body = &payload[..payload.len() - 10];
    let mut r = Reader::new(body);
    let mut codes = Vec::new();
    while r.remaining() > 0 {
        let t = r.byte().map_err(|_| "can not read data type".to_string())?;
        if t == opcodes::FUNCTION_PRE_GA {
            return Err("Pre-GA function format not supported".into());
        }
        if t != opcodes::FUNCTION2 {
            return Err("given type is not a function".into());
        }
        let code = r
            .string()
            .map_err(|_| "Failed loading library payload".to_string())?;
        codes.push(Bytes::from(code));
    }
    Ok(codes)
}

/// `FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]`.
fn restore(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if argv.len() > 4 {
        return crate::cmd::subcommand_syntax(argv);
    }
    #[derive(PartialEq)]
    enum Policy {
        Append,
        Replace,
        Flush,
    }
    let policy = match argv.get(3) {
        None => Policy::Append,
        Some(p) if is(p, "append") => Policy::Append,
        Some(p) if is(p, "replace") => Policy::Replace,
        Some(p) if is(p, "flush") => Policy::Flush,
        Some(_) => {
            return err(
                "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            );
        }
    };
    let codes = match payload_codes(argv[2]) {
        Ok(codes) => codes,
        Err(text) => return err(text),
    };
    let libraries = match with_fvm(|fvm| load_all(fvm, &codes)) {
        Ok(Ok(libraries)) => libraries,
        Ok(Err(text)) => return err(text),
        Err(reply) => return reply,
    };
    let mut registry = ctx.state.functions().registry.lock();
    let joined = if policy == Policy::Flush {
        registry.set(BTreeMap::new());
        registry.join(libraries, false)
    } else {
        registry.join(libraries, policy == Policy::Replace)
    };
    drop(registry);
    if let Err(text) = joined {
        return err(text);
    }
    ctx.db().changed(1, argv);
    Reply::OK
}

const HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Print this help.",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn library(name: &str, functions: &[&str]) -> Library {
        Library {
            name: name.into(),
            code: Bytes::new(),
            functions: functions
                .iter()
                .map(|f| FunctionInfo {
                    name: (*f).into(),
                    description: None,
                    flags: ScriptFlags::default(),
                })
                .collect(),
        }
    }

    #[test]
    fn joins_refuse_collisions_and_change_nothing() {
        let mut r = Registry::default();
        r.join(vec![library("a", &["f", "g"])], false).unwrap();
        r.check_invariants();
        assert_eq!(
            r.join(vec![library("a", &["h"])], false).unwrap_err(),
            "Library a already exists"
        );
        assert_eq!(
            r.join(vec![library("b", &["g"])], false).unwrap_err(),
            "Function g already exists"
        );
        r.check_invariants();
        let generation = r.generation;
        r.join(vec![library("a", &["h"])], true).unwrap();
        r.check_invariants();
        assert!(r.generation > generation);
        assert!(r.functions.contains_key("h") && !r.functions.contains_key("f"));
    }

    #[test]
    fn metadata_is_checked_as_redis_checks_it() {
        assert_eq!(metadata(b"#!lua name=x\nreturn").unwrap(), ("x".into(), 12));
        assert_eq!(metadata(b"return").unwrap_err(), "Missing library metadata");
        assert_eq!(
            metadata(b"#!lua name=x").unwrap_err(),
            "Invalid library metadata"
        );
        assert_eq!(
            metadata(b"#!lua\n").unwrap_err(),
            "Library name was not given"
        );
        assert_eq!(
            metadata(b"#!lua name=a name=b\n").unwrap_err(),
            "Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(
            metadata(b"#!lua foo=1\n").unwrap_err(),
            "Invalid metadata value given: foo=1"
        );
        assert_eq!(
            metadata(b"#!js name=x\n").unwrap_err(),
            "Engine 'js' not found"
        );
    }

    #[test]
    fn dump_payloads_read_back() {
        let codes = vec![
            Bytes::from_static(
                b"#!lua name=a\nredis.register_function('f', function() return 1 end)",
            ),
            Bytes::from_static(
                b"#!lua name=b\nredis.register_function('g', function() return 2 end)",
            ),
        ];
        for compress in [false, true] {
            let payload = dump(&codes, compress);
            assert_eq!(payload_codes(&payload).unwrap(), codes);
        }
        let mut bad = dump(&codes, false);
        bad[3] ^= 1;
        assert_eq!(
            payload_codes(&bad).unwrap_err(),
            "DUMP payload version or checksum are wrong"
        );
    }

    #[test]
    fn libraries_load_in_the_load_sandbox() {
        let fvm = FnVm::new().unwrap();
        let (library, callbacks) = fvm
            .load(b"#!lua name=lib\nredis.register_function{function_name='f', callback=function(k, a) return 1 end, flags={'no-writes'}, description='d'}\nredis.register_function('g', function() end)")
            .unwrap();
        assert_eq!(library.functions.len(), 2);
        assert_eq!(callbacks.len(), 2);
        assert!(library.functions[0].flags.no_writes);
        assert_eq!(
            fvm.load(b"#!lua name=lib\nredis.call('set', 'x', 1)")
                .unwrap_err(),
            "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"
        );
        assert_eq!(
            fvm.load(b"#!lua name=lib\nx = 1").unwrap_err(),
            "Error registering functions: ERR user_function:2: Attempt to modify a readonly table"
        );
        assert_eq!(
            fvm.load(b"#!lua name=lib\nredis.register_function('a')")
                .unwrap_err(),
            "Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
        );
        assert_eq!(
            fvm.load(b"#!lua name=lib\nreturn 1").unwrap_err(),
            "No functions registered"
        );
        assert_eq!(
            fvm.load(b"#!lua name=lib\nreturn +").unwrap_err(),
            "Error compiling function: user_function:2: unexpected symbol near '+'"
        );
    }
}

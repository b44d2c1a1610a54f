//! What runs on Lua's stack directly rather than through mlua's handles, on the two paths
//! every script takes:
//! - A script's run, as Redis's `luaCallFunction` makes it: KEYS and ARGV built there
//!   (Redis's `luaCreateArray`), then one protected call of the script's function with the
//!   error handler (`__redis__err__handler`).
//! - `redis.call` and `redis.pcall`, C functions reading their arguments off the stack
//!   (Redis's `luaArgsToRedisArgv`).
//!
//! Through mlua's safe API each array is a handle (a slot in its reference thread, moved back
//! onto the stack for the call and released after) and each element a checked push; a call
//! with a handler needs a Lua wrapper around `xpcall`; and every call from Rust is protected
//! by a `lua_pcall` of two C functions pushed for it, which Lua 5.1 allocates as closures
//! each time. Together that was as many instructions as the rest of a short script's run.
//! Here the run is made on the raw state mlua lends (`Lua::exec_raw_lua`, which holds its
//! lock for the duration): the handler and the function are pushed, the arrays built beside
//! them, and one `lua_pcall` runs the function, as Redis does.
//!
//! As an mlua function, `redis.call` took each argument as a handle and its reply back
//! through mlua's callback frame (a reserved error slot, a panic guard, a handle per value):
//! about a thousand instructions a call, a script doing a hundred commands paid it a hundred
//! times.
//!
//! Invariants (what makes the raw calls sound):
//! - The only Lua errors that can be raised outside the script's own `lua_pcall` are memory
//!   errors from creating the arrays (and `KEYS`/`ARGV` growing the globals table). Those are
//!   unprotected, as mlua's own pushes are when no memory limit is set (none is: scripts'
//!   memory counts against `maxmemory` as Redis counts it) and as Redis's `luaCreateArray`
//!   is: the process is out of memory.
//! - Nothing with a destructor is live across a raw call that can raise.
//! - The stack is checked for the six slots used at most (the handler, the function, the
//!   globals, a name, a table and one string) and set back to where it was found.
//! - `redis.call`'s upvalue points at the VM's [`Calls`], which the VM holds (`Vm::calls`)
//!   for as long as its Lua state exists, and Lua code runs only through the VM.
//! - `redis.call` raises (`lua_error`, a long jump) only after every Rust value it made is
//!   dropped, from a frame that owns none; a panic inside is caught and raised as an error.
//!   Its result is pushed onto the state it was called on (a coroutine's, when a script
//!   calls from one), moved there from the state mlua pushes onto.

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use mlua::{Function, Lua, Table, Value, ffi};

use super::call::{Calls, error_table, script_command};
use super::sandbox::{CommandArgs, NO_ARGUMENTS, NOT_STRINGS, raise, script_error};

/// How a run hands its keys and arguments to the script.
pub(crate) enum Arrays<'t> {
    /// EVAL's: `KEYS` and `ARGV` become globals of the table given (the names are given as
    /// Lua strings, so setting them interns nothing); the function is called without
    /// arguments. The table has no `__newindex`, so they are set raw.
    Globals(&'t Table, &'t GlobalNames),
    /// FCALL's: they are the function's two arguments.
    Arguments,
}

/// Runs `function` under `handler` with `keys` and `args` handed over as `arrays` says, and
/// returns what `xpcall` would: whether it succeeded, and its first result or the handler's
/// value for its error.
pub(crate) fn protected_call(
    lua: &Lua,
    handler: &Function,
    function: &Function,
    keys: &[&[u8]],
    args: &[&[u8]],
    arrays: Arrays<'_>,
) -> mlua::Result<(bool, Value)> {
    lua.exec_raw_lua(|raw| {
        let state = raw.state();
        // SAFETY: `state` is mlua's main state, locked for this closure; the module's
        // invariants hold: the stack is checked first and restored last, and nothing here owns
        // a destructor while a raw call that can raise runs (the pushes of the handles return
        // before, the popped value is taken after).
        #[allow(unsafe_code)]
        unsafe {
            let top = ffi::lua_gettop(state);
            if ffi::lua_checkstack(state, 6) == 0 {
                return Err(mlua::Error::StackError);
            }
            // Pushing a handle cannot fail (only an error value's push allocates), but should
            // one, the stack is still set back.
            let pushed = (|| -> mlua::Result<c_int> {
                raw.push(handler)?;
                raw.push(function)?;
                Ok(match arrays {
                    Arrays::Globals(globals, names) => {
                        raw.push(globals)?;
                        raw.push(&names.keys)?;
                        push_array(state, keys);
                        ffi::lua_rawset(state, -3);
                        raw.push(&names.argv)?;
                        push_array(state, args);
                        ffi::lua_rawset(state, -3);
                        ffi::lua_pop(state, 1);
                        0
                    }
                    Arrays::Arguments => {
                        push_array(state, keys);
                        push_array(state, args);
                        2
                    }
                })
            })();
            let nargs = match pushed {
                Ok(nargs) => nargs,
                Err(e) => {
                    ffi::lua_settop(state, top);
                    return Err(e);
                }
            };
            let status = ffi::lua_pcall(state, nargs, 1, top + 1);
            let value = raw.pop_value();
            ffi::lua_settop(state, top);
            Ok((status == 0, value))
        }
    })
}

/// The names EVAL's arrays are set under, as Lua strings.
#[derive(Debug)]
pub(crate) struct GlobalNames {
    keys: mlua::String,
    argv: mlua::String,
}

impl GlobalNames {
    pub(crate) fn new(lua: &Lua) -> mlua::Result<GlobalNames> {
        Ok(GlobalNames {
            keys: lua.create_string("KEYS")?,
            argv: lua.create_string("ARGV")?,
        })
    }
}

/// Pushes a new table holding `items` at 1, 2, ...
///
/// # Safety
/// `state` is a live Lua state with two free stack slots.
#[allow(unsafe_code)]
unsafe fn push_array(state: *mut ffi::lua_State, items: &[&[u8]]) {
    // SAFETY: as the caller promises. An index past `c_int` cannot occur: a request holds far
    // fewer arguments than that (the protocol layer bounds a multibulk's length).
    unsafe {
        ffi::lua_createtable(state, c_int::try_from(items.len()).unwrap_or(0), 0);
        for (i, item) in items.iter().enumerate() {
            ffi::lua_pushlstring_(state, item.as_ptr().cast(), item.len());
            ffi::lua_rawseti_(state, -2, c_int::try_from(i + 1).unwrap_or(c_int::MAX));
        }
    }
}

/// `redis.call` (`raise`: a failed command raises its error) or `redis.pcall` (it is
/// returned as an error table), running its commands with `calls`' buffers and flags.
pub(crate) fn command_function(
    lua: &Lua,
    calls: &Rc<Calls>,
    raise: bool,
) -> mlua::Result<Function> {
    let calls = Rc::as_ptr(calls).cast_mut().cast::<c_void>();
    let function: ffi::lua_CFunction = if raise { redis_call } else { redis_pcall };
    // SAFETY: pushes two values in a protected call, leaving the closure as the one result.
    #[allow(unsafe_code)]
    unsafe {
        lua.exec_raw((), |state| {
            ffi::lua_pushlightuserdata(state, calls);
            ffi::lua_pushcclosure(state, function, 1);
        })
    }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn redis_call(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the closure `command_function` made.
    unsafe { command(state, true) }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn redis_pcall(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as `redis_call`.
    unsafe { command(state, false) }
}

/// The body of both functions: one result, or the error raised.
///
/// # Safety
/// `state` is the state Lua called a closure made by [`command_function`] on.
#[allow(unsafe_code)]
unsafe fn command(state: *mut ffi::lua_State, raise: bool) -> c_int {
    // SAFETY: as the caller promises; `run_command` returns with its values dropped, so the
    // jump of `lua_error` skips nothing (this frame owns nothing).
    unsafe {
        if run_command(state, raise) {
            ffi::lua_error(state)
        } else {
            1
        }
    }
}

/// Runs the call's command and leaves on `state`'s stack its result (false) or the error to
/// raise (true).
///
/// # Safety
/// As [`command`].
#[allow(unsafe_code)]
unsafe fn run_command(state: *mut ffi::lua_State, raise: bool) -> bool {
    // SAFETY: the upvalue is the pointer `command_function` stored, to `Calls` the VM keeps
    // alive (see the module's invariants); its `Lua` is the one whose state this is, alive
    // while its code runs (the handle taken here is dropped when this function returns).
    // Arguments are read from this frame only, and the result goes onto mlua's current state
    // first (as every mlua push does), then to this one.
    unsafe {
        let calls = &*ffi::lua_touserdata(state, ffi::lua_upvalueindex(1)).cast::<Calls>();
        let Some(lua) = calls.lua() else {
            ffi::lua_pushstring(state, c"redis.call ran without its VM".as_ptr());
            return true;
        };
        let lua = &lua;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            script_command(lua, raise, calls, |args| read_arguments(state, args))
        }));
        let (value, raised) = match outcome {
            Ok(Ok(value)) => (value, false),
            // Raised as the table itself, as Redis raises it: what a script catching it with
            // `coroutine.resume` (which no wrapper converts) sees.
            Ok(Err(e)) => match script_error(&e).map(|refusal| error_table(lua, refusal)) {
                Some(Ok(table)) => (Value::Table(table), true),
                _ => (Value::Error(Box::new(e)), true),
            },
            Err(_) => {
                let e = mlua::Error::runtime("redis.call failed unexpectedly");
                (Value::Error(Box::new(e)), true)
            }
        };
        let pushed = lua.exec_raw_lua(|raw| {
            let from = raw.state();
            if ffi::lua_checkstack(from, 2) == 0 {
                return false;
            }
            if raw.push_value(&value).is_err() {
                return false;
            }
            if from != state {
                ffi::lua_xmove(from, state, 1);
            }
            true
        });
        if !pushed {
            ffi::lua_pushstring(state, c"redis.call could not return its result".as_ptr());
            return true;
        }
        raised
    }
}

/// Reads the call's arguments off `state`'s stack into `args` (`luaArgsToRedisArgv`):
/// strings as they are, numbers as Redis writes them; any other value is refused.
///
/// # Safety
/// `state` is a C function's frame whose arguments are the call's.
#[allow(unsafe_code)]
unsafe fn read_arguments(state: *mut ffi::lua_State, args: &mut CommandArgs) -> mlua::Result<()> {
    // SAFETY: reads only indexes 1..=top of this frame; `lua_tolstring` on a string makes
    // no conversion (numbers are read as numbers), so it cannot raise.
    unsafe {
        let n = ffi::lua_gettop(state);
        if n == 0 {
            return raise(NO_ARGUMENTS);
        }
        args.clear();
        for i in 1..=n {
            match ffi::lua_type(state, i) {
                ffi::LUA_TSTRING => {
                    let mut len = 0usize;
                    let ptr = ffi::lua_tolstring(state, i, &mut len);
                    args.push(std::slice::from_raw_parts(ptr.cast::<u8>(), len));
                }
                ffi::LUA_TNUMBER => args.push_number(ffi::lua_tonumber(state, i)),
                _ => return raise(NOT_STRINGS),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (Lua, Function) {
        let lua = Lua::new();
        let handler = function(&lua, "function(e) return 'handled: ' .. tostring(e) end");
        (lua, handler)
    }

    /// The function `source` evaluates to.
    fn function(lua: &Lua, source: &str) -> Function {
        lua.load(format!("return {source}")).eval().unwrap()
    }

    /// `f` called as a library function (the arrays as its arguments).
    fn call(
        lua: &Lua,
        handler: &Function,
        f: &Function,
        keys: &[&[u8]],
        args: &[&[u8]],
    ) -> (bool, Value) {
        protected_call(lua, handler, f, keys, args, Arrays::Arguments).unwrap()
    }

    fn text(value: Value) -> Vec<u8> {
        match value {
            Value::String(s) => s.as_bytes().to_vec(),
            other => panic!("not a string: {other:?}"),
        }
    }

    const SHOW: &str =
        "return #k .. ':' .. table.concat(k, ',') .. '|' .. #a .. ':' .. table.concat(a, ',')";

    #[test]
    fn a_library_function_gets_both_arrays_as_arguments() {
        let (lua, handler) = setup();
        let f = function(&lua, &format!("function(k, a) {SHOW} end"));
        let (ok, value) = call(&lua, &handler, &f, &[b"k1", b"\xff\x00k"], &[b"", b"a"]);
        assert!(ok);
        assert_eq!(text(value), b"2:k1,\xff\x00k|2:,a");
        let (ok, value) = call(&lua, &handler, &f, &[], &[]);
        assert!(ok);
        assert_eq!(text(value), b"0:|0:");
    }

    #[test]
    fn a_script_gets_them_as_globals_and_no_arguments() {
        let (lua, handler) = setup();
        let f = function(
            &lua,
            &format!(
                "function(...) local k, a = KEYS, ARGV assert(select('#', ...) == 0) {SHOW} end"
            ),
        );
        let globals = lua.globals();
        let names = GlobalNames::new(&lua).unwrap();
        let arrays = Arrays::Globals(&globals, &names);
        let (ok, value) =
            protected_call(&lua, &handler, &f, &[b"x"], &[b"1", b"2"], arrays).unwrap();
        assert!(ok);
        assert_eq!(text(value), b"1:x|2:1,2");
    }

    #[test]
    fn an_error_goes_through_the_handler_and_only_the_first_result_comes_back() {
        let (lua, handler) = setup();
        let fails = function(&lua, "function() error('boom', 0) end");
        let (ok, value) = call(&lua, &handler, &fails, &[], &[]);
        assert!(!ok);
        assert_eq!(text(value), b"handled: boom");
        let two = function(&lua, "function() return 1, 2 end");
        let (ok, value) = call(&lua, &handler, &two, &[], &[]);
        assert!(ok);
        assert!(
            matches!(value, Value::Integer(1)) || value == Value::Number(1.0),
            "{value:?}"
        );
        let none = function(&lua, "function() end");
        let (ok, value) = call(&lua, &handler, &none, &[], &[]);
        assert!(ok);
        assert_eq!(value, Value::Nil);
    }
}

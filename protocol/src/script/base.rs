//! The base library's functions that meet the sandbox's read-only proxies (`sandbox.rs`):
//! `next`, `pairs`, `ipairs`, `rawget`, `rawset`, `setmetatable` and `getmetatable`, as C
//! functions like Lua 5.1's own (`lbaselib.c`), so their argument errors read as Redis's do
//! (`user_script:1: bad argument #1 to 'rawset' (table expected, got number)`, and `'?'` for
//! a call through `pcall`), where functions written in Lua around the originals named their
//! own locals and lines.
//!
//! The first six are closures over the table of proxies (`real_of`: a proxy's real table by
//! the proxy, weak-keyed); `getmetatable` over the read-only stand-in it shows for strings'
//! metatable. Reading through a proxy reads its real table; the real table is never handed
//! to a script (`pairs` and `ipairs` return the proxy as their state, and their iterators see
//! through it), so no script can write around a proxy. Writing to a proxy raises Redis's
//! `Attempt to modify a readonly table`, after the argument checks, as Redis's patched
//! `lua_rawset` and `lua_setmetatable` raise it.
//!
//! Safety: every function here is called by Lua with its own frame; none owns a value with a
//! destructor, so the errors Lua raises (long jumps) skip nothing.

use std::ffi::c_int;

use mlua::{Function, Lua, ffi};

/// The error writing to a read-only table raises (without a position, as Redis's).
const READONLY: &std::ffi::CStr = c"Attempt to modify a readonly table";

/// A function taking the table of proxies and returning `next`, `pairs`, `ipairs`, `rawget`,
/// `rawset` and `setmetatable` over it.
pub(crate) fn maker(lua: &Lua) -> mlua::Result<Function> {
    // SAFETY: `make` is a C function of Lua's calling convention.
    #[allow(unsafe_code)]
    unsafe {
        lua.create_c_function(make)
    }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn make(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua; uses eight of the twenty slots a C function is given.
    unsafe {
        ffi::lua_settop(state, 1);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushcclosure(state, next, 1);
        // `pairs` returns a `next` of its own, not the global one, as Lua 5.1's does.
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushcclosure(state, next, 1);
        ffi::lua_pushcclosure(state, pairs, 2);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushcclosure(state, ipairs_step, 1);
        ffi::lua_pushcclosure(state, ipairs, 1);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushcclosure(state, rawget, 1);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushcclosure(state, rawset, 1);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushcclosure(state, setmetatable, 1);
    }
    6
}

/// Pushes the real table of the value at `index` (positive) of this frame, or nil if it is
/// not a proxy; whether it is one.
///
/// # Safety
/// `state` is a frame of a closure `make` made, with two free slots.
#[allow(unsafe_code)]
unsafe fn push_real(state: *mut ffi::lua_State, index: c_int) -> bool {
    // SAFETY: as the caller promises; the upvalue is the table of proxies.
    unsafe {
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_pushvalue(state, index);
        ffi::lua_rawget(state, -2);
        ffi::lua_remove(state, -2);
        ffi::lua_isnil(state, -1) == 0
    }
}

/// Replaces the table at `index` (positive) of this frame with its real table if it is a
/// proxy.
///
/// # Safety
/// As [`push_real`].
#[allow(unsafe_code)]
unsafe fn see_through(state: *mut ffi::lua_State, index: c_int) {
    // SAFETY: as the caller promises.
    unsafe {
        if push_real(state, index) {
            ffi::lua_replace(state, index);
        } else {
            ffi::lua_pop(state, 1);
        }
    }
}

/// Whether the value at `index` is a proxy.
///
/// # Safety
/// As [`push_real`].
#[allow(unsafe_code)]
unsafe fn is_proxy(state: *mut ffi::lua_State, index: c_int) -> bool {
    // SAFETY: as the caller promises.
    unsafe {
        let proxy = push_real(state, index);
        ffi::lua_pop(state, 1);
        proxy
    }
}

/// Raises Redis's read-only error.
///
/// # Safety
/// `state` is a running C function's frame.
#[allow(unsafe_code)]
unsafe fn raise_readonly(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        ffi::lua_pushstring(state, READONLY.as_ptr());
        ffi::lua_error(state)
    }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn next(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc.
    unsafe {
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        ffi::lua_settop(state, 2);
        see_through(state, 1);
        if ffi::lua_next(state, 1) != 0 {
            2
        } else {
            ffi::lua_pushnil(state);
            1
        }
    }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn pairs(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc; upvalue 2 is a `next` of this module.
    unsafe {
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(2));
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushnil(state);
    }
    3
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn ipairs(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc; upvalue 1 is the step function.
    unsafe {
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushinteger(state, 0);
    }
    3
}

/// `ipairs`' iterator (`ipairsaux`).
#[allow(unsafe_code)]
unsafe extern "C-unwind" fn ipairs_step(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc.
    unsafe {
        // `luaL_checkint`: an `int`, as Lua 5.1 reads the index.
        let i = (ffi::luaL_checkinteger(state, 2) as c_int).wrapping_add(1);
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        see_through(state, 1);
        ffi::lua_pushinteger(state, i.into());
        ffi::lua_rawgeti(state, 1, i.into());
        if ffi::lua_isnil(state, -1) != 0 { 0 } else { 2 }
    }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn rawget(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc.
    unsafe {
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkany(state, 2);
        ffi::lua_settop(state, 2);
        see_through(state, 1);
        ffi::lua_rawget(state, 1);
    }
    1
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn rawset(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc.
    unsafe {
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkany(state, 2);
        ffi::luaL_checkany(state, 3);
        ffi::lua_settop(state, 3);
        if is_proxy(state, 1) {
            return raise_readonly(state);
        }
        ffi::lua_rawset(state, 1);
    }
    1
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn setmetatable(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module doc.
    unsafe {
        let meta = ffi::lua_type(state, 2);
        ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
        if meta != ffi::LUA_TNIL && meta != ffi::LUA_TTABLE {
            return ffi::luaL_argerror(state, 2, c"nil or table expected".as_ptr());
        }
        if is_proxy(state, 1) {
            return raise_readonly(state);
        }
        if ffi::luaL_getmetafield(state, 1, c"__metatable".as_ptr()) != ffi::LUA_TNIL {
            return ffi::luaL_error(state, c"cannot change a protected metatable".as_ptr());
        }
        ffi::lua_settop(state, 2);
        ffi::lua_setmetatable(state, 1);
    }
    1
}

/// A function that takes the table scripts are to see as strings' metatable and returns
/// Lua's `getmetatable` showing it (see [`get_metatable`]).
pub(crate) fn metatable_function(lua: &Lua) -> mlua::Result<Function> {
    // SAFETY: `make_get_metatable` is a C function of Lua's calling convention.
    #[allow(unsafe_code)]
    unsafe {
        lua.create_c_function(make_get_metatable)
    }
}

#[allow(unsafe_code)]
unsafe extern "C-unwind" fn make_get_metatable(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua; keeps its first argument (nil if none) as the closure's upvalue.
    unsafe {
        ffi::lua_settop(state, 1);
        ffi::lua_pushcclosure(state, get_metatable, 1);
    }
    1
}

/// Lua's own `getmetatable` (`luaB_getmetatable`: the `__metatable` field if the metatable
/// has one, else the metatable), except that a string's is the table in its upvalue: Redis's
/// strings share a read-only metatable, stock Lua's is a plain table through which a script
/// could keep values from one call to the next. A C function like the original, so its
/// argument error reads as the original's (`user_script:1: bad argument #1 to
/// 'getmetatable' (value expected)`).
#[allow(unsafe_code)]
unsafe extern "C-unwind" fn get_metatable(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the closure `make_get_metatable` made; this frame owns nothing,
    // so `luaL_checkany`'s error (a long jump) skips no destructor.
    unsafe {
        ffi::luaL_checkany(state, 1);
        if ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
            ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
            return 1;
        }
        if ffi::lua_getmetatable(state, 1) == 0 {
            ffi::lua_pushnil(state);
            return 1;
        }
        // Pushes the field over the metatable if there is one: the top is the answer.
        ffi::luaL_getmetafield(state, 1, c"__metatable".as_ptr());
    }
    1
}

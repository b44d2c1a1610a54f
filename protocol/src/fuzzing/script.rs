//! The `script_eval` target: Lua scripts built from a small grammar of the scripting API, run
//! through the server's command dispatch as EVAL or EVAL_RO.
//!
//! Each input gets a fresh server (as `server_commands` builds it) and two clients, the first
//! speaking RESP2, the second RESP3 (after `HELLO 3`). The bytes pick up to [`SCRIPTS_MAX`]
//! scripts; each is one chunk of Lua text:
//!
//! ```text
//! input  := script*
//! script := flags stmt_count stmt{stmt_count % 8} value     the script ends `return value`
//! flags  := bit 0: the RESP3 client sends it     bit 1: as EVAL_RO     bits 2-3: numkeys % 3
//! stmt   := b ...                                b % 24 picks the kind (`Gen::statement`:
//!                                                redis.call, redis.pcall, setresp, cjson, cmsgpack,
//!                                                struct, bit, string, error, pcall, an undefined
//!                                                global, a global assignment, `for i=1,n`, ...)
//! value  := b ...                                nil, booleans, numbers, strings, raw bytes,
//!                                                KEYS/ARGV, tables nested up to VALUE_DEPTH_MAX,
//!                                                {err=}, {ok=}, {double=}, {map=}, {set=},
//!                                                {big_number=}
//! ```
//! Loops are only `for i=1,n` with a small `n`, so every script ends.
//!
//! After every script: no panic (nor a panic that mlua caught and turned into a Lua error,
//! which ends as `C stack overflow`); the reply is well-formed RESP in the client's protocol (its
//! errors may lack a code, as a script's `{err = ...}` reaches clients verbatim); the
//! client's protocol and database are those it had before (a script's `redis.setresp` and
//! SELECT are its own); and the keyspace invariants hold. The input ends with SCRIPT FLUSH, so
//! the thread's VM does not carry compiled scripts from one input's server to the next.

use std::sync::Arc;

use bytes::BytesMut;
use echomq_engine::{Reply, Wake};

use super::Input;
use super::resp_check::{check_reply, check_script_reply};
use super::server::fresh_server;
use crate::cmd;
use crate::resp::{Protocol, encode};
use crate::state::{Action, ClientState, ServerState};

/// Scripts per input, at most.
const SCRIPTS_MAX: usize = 6;
/// Nesting of generated tables and of statements inside loops and `pcall`s.
const VALUE_DEPTH_MAX: u8 = 3;
/// Longest raw-bytes string.
const RAW_LEN_MAX: usize = 24;

/// Commands scripts call: the value types' own, the ones Redis refuses from scripts (MULTI,
/// EVAL, WATCH, SUBSCRIBE, blocking forms), and one unknown.
const COMMANDS: [&str; 48] = [
    "SET",
    "GET",
    "INCR",
    "DEL",
    "APPEND",
    "GETRANGE",
    "INCRBYFLOAT",
    "EXPIRE",
    "TTL",
    "TYPE",
    "EXISTS",
    "HSET",
    "HGET",
    "HGETALL",
    "HINCRBY",
    "HDEL",
    "LPUSH",
    "RPOP",
    "LRANGE",
    "LPOS",
    "SADD",
    "SMEMBERS",
    "SPOP",
    "SINTER",
    "ZADD",
    "ZRANGE",
    "ZSCORE",
    "ZINCRBY",
    "XADD",
    "XRANGE",
    "XLEN",
    "XREAD",
    "PING",
    "ECHO",
    "SELECT",
    "TIME",
    "INFO",
    "HELLO",
    "MULTI",
    "EXEC",
    "EVAL",
    "WATCH",
    "SUBSCRIBE",
    "BLPOP",
    "CLIENT",
    "SCRIPT",
    "FLUSHALL",
    "NOSUCH",
];

/// Command arguments and strings, as Lua expressions.
const ARGS: [&str; 28] = [
    "'s'",
    "'h'",
    "'l'",
    "'z'",
    "'x'",
    "KEYS[1]",
    "KEYS[2]",
    "ARGV[1]",
    "'0'",
    "'1'",
    "'-1'",
    "'1.5'",
    "'9223372036854775807'",
    "'*'",
    "'v'",
    "''",
    "'BLOCK'",
    "'STREAMS'",
    "'WITHSCORES'",
    "'COUNT'",
    "'EX'",
    "1",
    "2.5",
    "-3",
    "true",
    "{}",
    "nil",
    "'\\0\\255'",
];

/// `struct` formats.
const FORMATS: [&str; 12] = [
    "'>I2'", "'<i4'", "'b'", "'B'", "'h'", "'l'", "'d'", "'f'", "'s'", "'c3'", "'!4i'", "'x'",
];

/// One generated script's builder.
struct Gen<'i, 'a> {
    input: &'i mut Input<'a>,
    out: String,
}

impl Gen<'_, '_> {
    fn byte(&mut self) -> u8 {
        self.input.byte_or_zero()
    }

    fn pick<'s>(&mut self, list: &[&'s str]) -> &'s str {
        let b = usize::from(self.byte());
        list[b % list.len()]
    }

    /// A string literal: from the vocabulary, or raw bytes as decimal escapes.
    fn string(&mut self) -> String {
        let b = self.byte();
        if b & 1 == 0 {
            return self.pick(&ARGS[..21]).to_owned();
        }
        let len = usize::from(b >> 1) % (RAW_LEN_MAX + 1);
        let mut s = String::from("'");
        for &c in self.input.bytes(len) {
            s.push_str(&format!("\\{c}"));
        }
        s.push('\'');
        s
    }

    fn number(&mut self) -> String {
        let b = self.byte();
        match b % 8 {
            0 => "0".into(),
            1 => (i64::from(b as i8) * 1000).to_string(),
            2 => "2^53".into(),
            3 => "-2^63".into(),
            4 => "1/0".into(),
            5 => "0/0".into(),
            6 => format!("{}.25", b >> 3),
            _ => "1e300".into(),
        }
    }

    fn args(&mut self) -> String {
        let argc = self.byte() % 6;
        let mut s = String::new();
        for _ in 0..argc {
            s.push_str(", ");
            let arg = self.pick(&ARGS);
            s.push_str(arg);
        }
        s
    }

    fn command(&mut self) -> String {
        let name = self.pick(&COMMANDS);
        format!("'{name}'{}", self.args())
    }

    fn value(&mut self, depth: u8) -> String {
        let b = self.byte();
        let kind = if depth >= VALUE_DEPTH_MAX {
            b % 8
        } else {
            b % 18
        };
        match kind {
            0 => "nil".into(),
            1 => "false".into(),
            2 => "true".into(),
            3 => self.number(),
            4 | 5 => self.string(),
            6 => "KEYS[1]".into(),
            7 => "ARGV[2]".into(),
            8 | 9 => {
                let n = self.byte() % 4;
                let items: Vec<String> = (0..n).map(|_| self.value(depth + 1)).collect();
                format!("{{{}}}", items.join(", "))
            }
            10 => format!("{{err={}}}", self.value(depth + 1)),
            11 => format!("{{ok={}}}", self.value(depth + 1)),
            12 => format!("{{double={}}}", self.value(depth + 1)),
            13 => format!(
                "{{map={{a={}, [{}]={}}}}}",
                self.value(depth + 1),
                self.number(),
                self.value(depth + 1)
            ),
            14 => format!(
                "{{set={{a=true, [{}]={}}}}}",
                self.string(),
                self.value(depth + 1)
            ),
            15 => format!("{{big_number={}}}", self.value(depth + 1)),
            16 => format!("redis.pcall({})", self.command()),
            _ => format!(
                "{{1, {{2, {{{}}}}}, n={}}}",
                self.value(depth + 1),
                self.value(depth + 1)
            ),
        }
    }

    /// One statement, ending in a newline.
    fn statement(&mut self, depth: u8) {
        let b = self.byte();
        let kind = if depth >= VALUE_DEPTH_MAX {
            b % 22
        } else {
            b % 24
        };
        let line = match kind {
            0 | 1 => format!("redis.call({})", self.command()),
            2 | 3 => format!("local r = redis.pcall({})", self.command()),
            4 => format!("redis.setresp({})", 1 + self.byte() % 3),
            5 => format!("local r = redis.error_reply({})", self.value(depth)),
            6 => format!("local r = redis.status_reply({})", self.value(depth)),
            7 => format!("local r = redis.sha1hex({})", self.value(depth)),
            8 => format!("redis.log(redis.LOG_WARNING, {})", self.value(depth)),
            9 => {
                let flags = self.pick(&[
                    "redis.REPL_ALL",
                    "redis.REPL_NONE",
                    "redis.REPL_AOF",
                    "redis.REPL_REPLICA",
                    "7",
                    "-1",
                ]);
                format!("redis.set_repl({flags})")
            }
            10 => format!("local r = redis.acl_check_cmd({})", self.command()),
            11 => format!(
                "local r = cjson.decode(cjson.encode({}))",
                self.value(depth)
            ),
            12 => format!("local r = pcall(cjson.decode, {})", self.string()),
            13 => format!(
                "local r = cmsgpack.unpack(cmsgpack.pack({}))",
                self.value(depth)
            ),
            14 => format!("local r = pcall(cmsgpack.unpack, {})", self.string()),
            15 => {
                let format = self.pick(&FORMATS);
                let b = self.byte();
                if b & 1 == 0 {
                    format!(
                        "local r = pcall(struct.unpack, {format}, {})",
                        self.string()
                    )
                } else {
                    format!("local r = struct.pack({format}, {})", self.value(depth))
                }
            }
            16 => {
                let f = self.pick(&[
                    "band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "ror", "tobit",
                    "tohex", "bnot", "bswap",
                ]);
                format!(
                    "local r = bit.{f}({}, {})",
                    self.number(),
                    self.value(depth)
                )
            }
            17 => {
                let f = self.pick(&[
                    "rep", "sub", "byte", "format", "upper", "find", "gsub", "len", "reverse",
                    "lower", "char", "match",
                ]);
                let (a, c) = (self.string(), self.byte() % 9);
                if f == "rep" || f == "char" {
                    format!("local r = string.{f}({a}, {c})")
                } else {
                    let extra = self.value(depth);
                    format!("local r = string.{f}({a}, {extra})")
                }
            }
            18 => {
                let (a, c) = (self.value(depth), self.value(depth));
                format!("local r = tostring({a}) .. tostring(tonumber({c}))")
            }
            19 => format!("error({})", self.value(depth)),
            20 => {
                let b = self.byte();
                match b % 3 {
                    0 => "local r = undefined_global".into(),
                    1 => "new_global = 1".into(),
                    _ => "redis = nil".into(),
                }
            }
            21 => format!("local r = pcall(error, {})", self.value(depth)),
            22 => {
                let n = 1 + self.byte() % 5;
                self.out.push_str(&format!("for i=1,{n} do\n"));
                self.statement(depth + 1);
                "end".into()
            }
            _ => {
                self.out.push_str("local ok, e = pcall(function()\n");
                self.statement(depth + 1);
                "end)".into()
            }
        };
        self.out.push_str(&line);
        self.out.push('\n');
    }
}

/// The next script and its flags, or `None` at the end of the input.
fn script(input: &mut Input<'_>) -> Option<(u8, String)> {
    let flags = input.byte()?;
    let mut generator = Gen {
        input,
        out: String::new(),
    };
    let statements = generator.byte() % 8;
    for _ in 0..statements {
        generator.statement(0);
    }
    let value = generator.value(0);
    generator.out.push_str(&format!("return {value}\n"));
    Some((flags, generator.out))
}

/// A script's commands never block: this waker is never woken.
struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

/// Runs the scripts `data` encodes; panics if a property breaks.
pub fn run(data: &[u8]) {
    let (state, _clock) = fresh_server("", Protocol::Resp2);
    let waker: Arc<dyn Wake> = Arc::new(NoWake);
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], 6379));
    let mut clients: Vec<ClientState> = (0..2u16)
        .map(|i| {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 10_000 + i));
            state.connect(addr.into(), Some(local.into()))
        })
        .collect();
    execute(
        &state,
        &mut clients[1],
        &[b"HELLO", b"3"],
        &waker,
        "HELLO 3",
        false,
    );
    assert_eq!(clients[1].protocol, Protocol::Resp3);
    let mut input = Input::new(data);
    for _ in 0..SCRIPTS_MAX {
        let Some((flags, text)) = script(&mut input) else {
            break;
        };
        let client = &mut clients[usize::from(flags & 1)];
        let name: &[u8] = if flags & 2 != 0 { b"EVAL_RO" } else { b"EVAL" };
        let numkeys = (flags >> 2) % 3;
        let numkeys_text = numkeys.to_string();
        let mut argv: Vec<&[u8]> = vec![name, text.as_bytes(), numkeys_text.as_bytes()];
        argv.extend([b"s".as_slice(), b"k"].iter().take(usize::from(numkeys)));
        argv.extend([b"a".as_slice(), b"7"]);
        let (protocol, db) = (client.protocol, client.db);
        let reply = execute(&state, client, &argv, &waker, &text, true);
        // The grammar only makes valid Lua: a compile error is the generator's bug, and would
        // leave the rest of the API untried.
        if let Some(Reply::Error(e)) = &reply
            && e.contains("Error compiling script")
        {
            panic!("a generated script does not compile ({e}):\n{text}");
        }
        // A Rust panic inside a script's call comes back as a Lua error (mlua catches it),
        // looping through the error handler to this overflow: the grammar nests too little to
        // reach it otherwise.
        if let Some(Reply::Error(e)) = &reply
            && (e.contains("C stack overflow") || e.contains("panic"))
        {
            panic!("a script's call panicked ({e}):\n{text}");
        }
        if (client.protocol, client.db) != (protocol, db) {
            panic!(
                "the script left the client at {:?}, db {}, was {protocol:?}, db {db}:\n{text}",
                client.protocol, client.db
            );
        }
        if let Err(e) = state.keyspace().check_invariants() {
            panic!("invariant broken after the script:\n{text}\n{e}");
        }
    }
    for client in clients {
        state.disconnect(client);
    }
    execute_flush(&state);
}

/// SCRIPT FLUSH: each input's server starts a cache at the same generation, so this thread's
/// VM would otherwise keep every earlier input's compiled scripts.
fn execute_flush(state: &Arc<ServerState>) {
    let waker: Arc<dyn Wake> = Arc::new(NoWake);
    let mut client = state.connect(
        std::net::SocketAddr::from(([127, 0, 0, 1], 10_999)).into(),
        None,
    );
    let reply = execute(
        state,
        &mut client,
        &[b"SCRIPT", b"FLUSH"],
        &waker,
        "SCRIPT FLUSH",
        false,
    );
    assert_eq!(reply, Some(Reply::OK), "SCRIPT FLUSH");
    state.disconnect(client);
}

/// Runs one request and checks its reply's encoding; returns the reply (none for a
/// postponed request).
fn execute(
    state: &Arc<ServerState>,
    client: &mut ClientState,
    argv: &[&[u8]],
    waker: &Arc<dyn Wake>,
    what: &str,
    script: bool,
) -> Option<Reply> {
    let mut batch = state.keyspace().batch();
    let action = cmd::execute(state, client, &mut batch, argv, waker);
    batch.end();
    let reply = match action {
        Action::Reply(reply) | Action::Close(reply) => reply,
        Action::Postpone(_) => {
            state.pause().unpause();
            return None;
        }
        other => panic!("{what}: unexpected action {other:?}"),
    };
    check(client.protocol, &reply, what, script);
    Some(reply)
}

/// Checks a reply's encoding; a script's errors need no code (see [`check_script_reply`]).
fn check(protocol: Protocol, reply: &Reply, what: &str, script: bool) {
    let mut out = BytesMut::new();
    encode(reply, protocol, &mut out);
    let resp3 = protocol == Protocol::Resp3;
    let checked = if script {
        check_script_reply(&out, resp3)
    } else {
        check_reply(&out, resp3)
    };
    if let Err(e) = checked {
        panic!(
            "malformed reply ({e}) to:\n{what}\n{:?}",
            String::from_utf8_lossy(&out)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_kind_compiles_and_runs() {
        // One script per statement kind, each with a table return value.
        for kind in 0u8..24 {
            let data = [0, 1, kind, 3, 2, 9, 9, 9, 9, 9, 9, 9, 9];
            run(&data);
        }
    }

    #[test]
    fn a_script_can_read_info_while_it_holds_the_vm() {
        let (state, _clock) = fresh_server("", Protocol::Resp2);
        let waker: Arc<dyn Wake> = Arc::new(NoWake);
        let mut client = state.connect(
            std::net::SocketAddr::from(([127, 0, 0, 1], 10_000)).into(),
            None,
        );
        let script = "return redis.call('INFO', 'memory')";
        let argv: [&[u8]; 3] = [b"EVAL", script.as_bytes(), b"0"];
        let reply = execute(&state, &mut client, &argv, &waker, script, false);
        let text = match &reply {
            Some(Reply::Raw(raw)) => String::from_utf8_lossy(raw).into_owned(),
            other => panic!("{other:?}"),
        };
        assert!(text.contains("used_memory_lua:"), "{text}");
        // And from a function, which holds the function VM.
        let library = "#!lua name=lib\nredis.register_function('f', function() return redis.call('INFO', 'memory') end)";
        let argv: [&[u8]; 3] = [b"FUNCTION", b"LOAD", library.as_bytes()];
        let reply = execute(&state, &mut client, &argv, &waker, library, false);
        assert!(matches!(reply, Some(Reply::Bulk(_))), "{reply:?}");
        let argv: [&[u8]; 3] = [b"FCALL", b"f", b"0"];
        let reply = execute(&state, &mut client, &argv, &waker, "FCALL f 0", false);
        let text = match &reply {
            Some(Reply::Raw(raw)) => String::from_utf8_lossy(raw).into_owned(),
            other => panic!("{other:?}"),
        };
        assert!(text.contains("used_memory_vm_functions:"), "{text}");
        state.disconnect(client);
        execute_flush(&state);
    }

    #[test]
    fn more_loaded_scripts_than_lua_has_stack_slots_stay_compiled() {
        // Loaded scripts are never evicted; each thread's VM holds all it ran, past the
        // 8000 references a Lua 5.1 stack holds.
        let (state, _clock) = fresh_server("", Protocol::Resp2);
        let waker: Arc<dyn Wake> = Arc::new(NoWake);
        let mut client = state.connect(
            std::net::SocketAddr::from(([127, 0, 0, 1], 10_000)).into(),
            None,
        );
        for n in 0..8_100 {
            let body = format!("return {n}");
            let argv: [&[u8]; 3] = [b"SCRIPT", b"LOAD", body.as_bytes()];
            let reply = execute(&state, &mut client, &argv, &waker, &body, false);
            assert!(matches!(reply, Some(Reply::Bulk(_))), "{reply:?}");
        }
        let reply = execute(
            &state,
            &mut client,
            &[b"EVAL", b"return 8099", b"0"],
            &waker,
            "EVAL",
            false,
        );
        assert!(matches!(&reply, Some(Reply::Int(8099))), "{reply:?}");
        state.disconnect(client);
        execute_flush(&state);
    }

    #[test]
    fn a_generated_script_reads_as_lua() {
        // Flags 4; two statements: redis.call (kind 0) of SET (0) with three arguments, and
        // a cjson round trip (kind 11) of `true` (value 2); then `return true`.
        let mut input = Input::new(&[4, 2, 0, 0, 3, 21, 22, 23, 11, 2, 2]);
        let (flags, text) = script(&mut input).unwrap();
        assert_eq!(flags, 4);
        assert_eq!(
            text,
            "redis.call('SET', 1, 2.5, -3)\n\
             local r = cjson.decode(cjson.encode(true))\n\
             return true\n"
        );
    }
}

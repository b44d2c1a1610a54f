//! The `server_commands` target: requests from a few clients of one server, through the
//! decoder and the server's command dispatch.
//!
//! Each input gets a fresh server (bound to `127.0.0.1:0` for its shared state only: no
//! connection is made), a manual clock and three clients. A request is rendered as a
//! multibulk or inline frame, decoded as the connection would (with the client's limits), run
//! by the dispatch the connections use, and its reply encoded in the client's protocol.
//!
//! ```text
//! input  := head op*                           at most OPS_MAX ops
//! head   := bit 0: requirepass is set          bit 1: new clients speak RESP3
//! op     := b (b % 16 == 0) n                  move the clock (forward, back, far forward)
//!         | b (b % 16 == 1) n                  switch to client n % CLIENTS
//!         | b (b % 16 == 2)                    the client disconnects (and is replaced)
//!         | b (b % 16 == 3)                    time out blocked commands
//!         | b command                          a request; inline if b & 0x80
//! command := name argc arg{argc}               NAMES[name % 112]
//! arg    := tag ...                            tag % 8 picks the kind, tag >> 3 the word:
//!           0 key, 1 id, 2 number, 3 keyword (the next byte picks it), 4 word,
//!           5 small id from the next byte, 6 number from the next 1..8 bytes,
//!           7 raw bytes (length from the next byte)
//! ```
//! The first argument is a key unless its tag has the top bit set.
//!
//! After every operation: each reply that became available (blocked commands included) is
//! well-formed RESP for its client's protocol, every error with its code; CLIENT KILL victims
//! are disconnected; the keyspace invariants hold; and the commands blocked in the keyspace are
//! exactly those of the clients still waiting. At the end every client hangs up, after which
//! nothing may stay blocked or registered.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Waker};

use bytes::BytesMut;
use echomq_engine::{BlockedHandle, Clock, ManualClock, Reply, Wake};

use super::Input;
use super::decode::multibulk;
use super::resp_check::check_reply;
use crate::cmd;
use crate::resp::{DecodeLimits, Decoded, Protocol, decode, encode};
use crate::server::{Server, ServerConfig};
use crate::state::{Action, ClientState, ServerState};

/// Operations per input, at most.
const OPS_MAX: usize = 256;
/// Clients talking to the server.
const CLIENTS: usize = 3;
/// Databases (SELECT 0 to 3).
const DATABASES: usize = 4;
/// Where the clock starts: a realistic Unix time in ms.
const CLOCK_START_MS: u64 = 1_700_000_000_000;
/// The password when the head asks for one.
const PASSWORD: &str = "pw";
/// Operations shown in the failure message, the most recent.
const LOG_LINES_MAX: usize = 48;
/// Longest raw-bytes argument.
const RAW_ARG_LEN_MAX: usize = 63;

/// The memory measure INFO and `maxmemory` count from: a megabyte more at each reading, so
/// every reading after the server's start is over `CONFIG SET maxmemory 1` and writes answer
/// OOM (`used_memory` is what the measure grew by since start).
fn memory_used() -> u64 {
    static READINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    READINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) << 20
}

/// Command names: the server's and the engine's (a test checks both lists are covered), two
/// unknown ones, the two lines of an HTTP request Redis treats as an attack (`POST`, `Host:`),
/// and the most interesting again to fill 64.
pub(super) const NAMES: [&str; 227] = [
    "PING",
    "ECHO",
    "HELLO",
    "AUTH",
    "SELECT",
    "QUIT",
    "RESET",
    "CLIENT",
    "DEL",
    "UNLINK",
    "EXISTS",
    "TYPE",
    "KEYS",
    "SCAN",
    "DBSIZE",
    "RENAME",
    "RENAMENX",
    "FLUSHDB",
    "FLUSHALL",
    "SET",
    "GET",
    "INCR",
    "MULTI",
    "EXEC",
    "DISCARD",
    "WATCH",
    "UNWATCH",
    "CONFIG",
    "INFO",
    "COMMAND",
    "TIME",
    "FUNCTION",
    "SCRIPT",
    "DEBUG",
    "XADD",
    "XRANGE",
    "XREVRANGE",
    "XLEN",
    "XDEL",
    "XTRIM",
    "XSETID",
    "XREAD",
    "XREADGROUP",
    "XGROUP",
    "XACK",
    "XPENDING",
    "XCLAIM",
    "XAUTOCLAIM",
    "XINFO",
    "NOSUCHCOMMAND",
    "",
    "xadd",
    "xreadgroup",
    "SWAPDB",
    "COPY",
    "DUMP",
    "RESTORE",
    "POST",
    "Host:",
    "MOVE",
    "XCFGSET",
    "CONFIG",
    "XIDMPRECORD",
    "XACKDEL",
    "XNACK",
    "XDELEX",
    "XREAD",
    "STRLEN",
    "EXPIRE",
    "PEXPIRE",
    "EXPIREAT",
    "PEXPIREAT",
    "TTL",
    "PTTL",
    "EXPIRETIME",
    "PEXPIRETIME",
    "PERSIST",
    "SETNX",
    "SETEX",
    "PSETEX",
    "GETSET",
    "GETDEL",
    "GETEX",
    "MGET",
    "MSET",
    "MSETNX",
    "MSETEX",
    "INCREX",
    "TOUCH",
    "SETBIT",
    "GETBIT",
    "BITCOUNT",
    "BITPOS",
    "BITOP",
    "BITFIELD",
    "BITFIELD_RO",
    "PFADD",
    "PFCOUNT",
    "PFMERGE",
    "PFDEBUG",
    "PFSELFTEST",
    "APPEND",
    "SETRANGE",
    "GETRANGE",
    "SUBSTR",
    "DECR",
    "INCRBY",
    "DECRBY",
    "INCRBYFLOAT",
    "LCS",
    "DIGEST",
    "DELEX",
    // The hash and set commands.
    "HSET",
    "HSETNX",
    "HMSET",
    "HGET",
    "HMGET",
    "HEXISTS",
    "HSTRLEN",
    "HLEN",
    "HGETALL",
    "HKEYS",
    "HVALS",
    "HSCAN",
    "HDEL",
    "HGETDEL",
    "HINCRBY",
    "HINCRBYFLOAT",
    "HRANDFIELD",
    "HEXPIRE",
    "HPEXPIRE",
    "HEXPIREAT",
    "HPEXPIREAT",
    "HPERSIST",
    "HTTL",
    "HPTTL",
    "HEXPIRETIME",
    "HPEXPIRETIME",
    "HGETEX",
    "HSETEX",
    "SADD",
    "SREM",
    "SCARD",
    "SISMEMBER",
    "SMISMEMBER",
    "SMEMBERS",
    "SSCAN",
    "SRANDMEMBER",
    "SPOP",
    "SMOVE",
    "SINTER",
    "SINTERSTORE",
    "SINTERCARD",
    "SUNION",
    "SUNIONSTORE",
    "SDIFF",
    "SDIFFSTORE",
    "LPUSH",
    "RPUSH",
    "LPUSHX",
    "RPUSHX",
    "LPOP",
    "RPOP",
    "LMPOP",
    "LLEN",
    "LINDEX",
    "LRANGE",
    "LPOS",
    "LSET",
    "LTRIM",
    "LINSERT",
    "LREM",
    "LMOVE",
    "RPOPLPUSH",
    "BLPOP",
    "BRPOP",
    "BLMPOP",
    "BLMOVE",
    "BRPOPLPUSH",
    "SORT",
    "SORT_RO",
    "RANDOMKEY",
    "ZADD",
    "ZINCRBY",
    "ZREM",
    "ZCARD",
    "ZSCORE",
    "ZMSCORE",
    "ZRANK",
    "ZREVRANK",
    "ZCOUNT",
    "ZLEXCOUNT",
    "ZSCAN",
    "ZRANGE",
    "ZREVRANGE",
    "ZRANGEBYSCORE",
    "ZREVRANGEBYSCORE",
    "ZRANGEBYLEX",
    "ZREVRANGEBYLEX",
    "ZRANGESTORE",
    "ZREMRANGEBYRANK",
    "ZREMRANGEBYSCORE",
    "ZREMRANGEBYLEX",
    "ZPOPMIN",
    "ZPOPMAX",
    "ZMPOP",
    "ZUNION",
    "ZINTER",
    "ZDIFF",
    "ZUNIONSTORE",
    "ZINTERSTORE",
    "ZDIFFSTORE",
    "ZINTERCARD",
    "BZPOPMIN",
    "BZPOPMAX",
    "BZMPOP",
    "ZRANDMEMBER",
    "GEOADD",
    "GEOPOS",
    "GEODIST",
    "GEOHASH",
    "GEORADIUS",
    "GEORADIUS_RO",
    "GEORADIUSBYMEMBER",
    "GEORADIUSBYMEMBER_RO",
    "GEOSEARCH",
    "GEOSEARCHSTORE",
];

const KEYS: [&str; 4] = ["s", "t", "k", ""];

const IDS: [&str; 16] = [
    "0",
    "0-1",
    "1",
    "1-0",
    "1-1",
    "2-1",
    "5-5",
    "*",
    "$",
    ">",
    "-",
    "+",
    "(1-1",
    "1-*",
    "18446744073709551615-18446744073709551615",
    "abc",
];

const NUMBERS: [&str; 16] = [
    "0",
    "1",
    "2",
    "3",
    "10",
    "100",
    "-1",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1.5",
    "",
    "01",
    "1k",
    "1mb",
];

const KEYWORDS: [&str; 82] = [
    "MAXLEN",
    "MINID",
    "LIMIT",
    "~",
    "NOMKSTREAM",
    "COUNT",
    "BLOCK",
    "STREAMS",
    "GROUP",
    "NOACK",
    "CREATE",
    "SETID",
    "DESTROY",
    "CREATECONSUMER",
    "DELCONSUMER",
    "MKSTREAM",
    "ENTRIESREAD",
    "IDLE",
    "RETRYCOUNT",
    "FORCE",
    "JUSTID",
    "LASTID",
    "STREAM",
    "GROUPS",
    "CONSUMERS",
    "FULL",
    "HELP",
    "EX",
    "PX",
    "NX",
    "XX",
    "KEEPTTL",
    "GET",
    "MATCH",
    "TYPE",
    "ASYNC",
    "SETNAME",
    "GETNAME",
    "ID",
    "LIST",
    "KILL",
    "INFO",
    "SETINFO",
    "LIB-NAME",
    "NO-EVICT",
    "SKIPME",
    "SET",
    "RESETSTAT",
    "DOCS",
    "AUTH",
    "default",
    "stream-node-max-entries",
    "stream-node-max-bytes",
    "maxmemory",
    "requirepass",
    "proto-max-bulk-len",
    "maxclients",
    "timeout",
    "databases",
    "*",
    "all",
    "everything",
    "stats",
    "commandstats",
    // Redis 8.2–8.8 stream words: deletion strategies, the IDS block of XDELEX, XACKDEL and
    // XNACK, XREADGROUP's CLAIM, XNACK's modes, XADD's IDMP and XCFGSET's settings.
    "IDS",
    "CLAIM",
    "KEEPREF",
    "DELREF",
    "ACKED",
    "SILENT",
    "FAIL",
    "FATAL",
    "IDMP",
    "IDMPAUTO",
    "IDMP-DURATION",
    "IDMP-MAXSIZE",
    "=",
    "ENTRIESADDED",
    "MAXDELETEDID",
    "TIME",
    // Redis 8.10's XREAD/XREADGROUP read caps.
    "MAXCOUNT",
    "MAXSIZE",
];

const WORDS: [&str; 16] = [
    "g", "g2", "c", "c2", "v", "pw", "*", "s*", "[a-z]*", "?", "\\", "é", "a b", "\r\n", "\0", "",
];

/// A blocked command's waker: the fuzzer polls handles instead of waiting.
struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

/// One connected client.
struct Client {
    state: ClientState,
    /// Its blocked command, if it waits for one.
    blocked: Option<BlockedHandle>,
}

/// One fuzz run's state.
struct Fuzz<'a> {
    state: Arc<ServerState>,
    clock: Arc<ManualClock>,
    clients: Vec<Client>,
    current: usize,
    next_client_id: u64,
    waker: Arc<dyn Wake>,
    input: Input<'a>,
    /// The most recent operations, for the failure message.
    log: VecDeque<String>,
}

thread_local! {
    /// One runtime per thread, for binding each input's server.
    static RUNTIME: tokio::runtime::Runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("no tokio runtime for the fuzz target: {e}"),
    };
}

/// Runs the requests `data` encodes; panics if a property breaks.
pub fn run(data: &[u8]) {
    run_logged(data);
}

/// [`run`], returning the last operations' log.
fn run_logged(data: &[u8]) -> Vec<String> {
    let mut input = Input::new(data);
    let head = input.byte_or_zero();
    let (state, clock) = fresh_server(
        if head & 1 != 0 { PASSWORD } else { "" },
        if head & 2 != 0 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        },
    );
    // Half the inputs run DEBUG, the other half its refusal (`enable-debug-command no`).
    if head & 4 != 0 {
        let enabled = state.config_set("enable-debug-command", "yes");
        assert!(enabled.is_ok(), "{enabled:?}");
    }
    let mut fuzz = Fuzz {
        state,
        clock,
        clients: Vec::new(),
        current: 0,
        next_client_id: 1,
        waker: Arc::new(NoWake),
        input,
        log: VecDeque::new(),
    };
    for _ in 0..CLIENTS {
        let client = fuzz.connect();
        fuzz.clients.push(client);
    }
    for _ in 0..OPS_MAX {
        let Some(op) = fuzz.input.byte() else {
            break;
        };
        let line = fuzz.op(op);
        fuzz.record(line);
        fuzz.after_op();
    }
    fuzz.hang_up_all();
    fuzz.log.into()
}

/// A fresh server's shared state (bound to `127.0.0.1:0`, no connection made) on a manual
/// clock at [`CLOCK_START_MS`], with [`DATABASES`] databases.
pub(super) fn fresh_server(
    requirepass: &str,
    default_protocol: Protocol,
) -> (Arc<ServerState>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(CLOCK_START_MS));
    let config = ServerConfig {
        bind: "127.0.0.1".into(),
        port: 0,
        requirepass: requirepass.into(),
        default_protocol,
        databases: DATABASES,
        cluster_enabled: false,
        archive: None,
        archive_replica: None,
        tcp_backlog: crate::state::settings::TCP_BACKLOG_DEFAULT,
        memory_used,
        dir_is_cwd: false,
    };
    let server = RUNTIME.with(|rt| rt.block_on(Server::bind_with_clock(config, clock.clone())));
    let server = match server {
        Ok(server) => server,
        Err(e) => panic!("cannot bind the fuzz target's server: {e}"),
    };
    let state = Arc::clone(server.handle().state());
    drop(server);
    (state, clock)
}

impl Fuzz<'_> {
    fn record(&mut self, line: String) {
        if self.log.len() == LOG_LINES_MAX {
            self.log.pop_front();
        }
        self.log.push_back(line);
    }

    fn fail(&self, what: &str) -> ! {
        panic!(
            "{what}\nlast operations:\n  {}",
            self.log.iter().cloned().collect::<Vec<_>>().join("\n  ")
        );
    }

    /// A new client, registered as the server registers connections.
    fn connect(&mut self) -> Client {
        let id = self.next_client_id;
        self.next_client_id += 1;
        let port = 10_000 + (id % 50_000) as u16;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let local = SocketAddr::from(([127, 0, 0, 1], 6379));
        let state = self.state.connect(addr.into(), Some(local.into()));
        if state.info.id != id {
            self.fail(&format!(
                "the server gave client id {}, expected {id}",
                state.info.id
            ));
        }
        Client {
            state,
            blocked: None,
        }
    }

    /// Client `index` goes away and a new client takes its place.
    fn disconnect(&mut self, index: usize) {
        let fresh = self.connect();
        let old = std::mem::replace(&mut self.clients[index], fresh);
        self.hang_up(old);
    }

    /// A client goes away as its connection ends: its blocked command is dropped, its watches
    /// released, and it is forgotten.
    fn hang_up(&self, old: Client) {
        drop(old.blocked);
        self.state.disconnect(old.state);
    }

    /// Runs one operation; returns it as a line for the log.
    fn op(&mut self, op: u8) -> String {
        match op % 16 {
            0 => {
                let n = self.input.byte_or_zero();
                let step = u64::from(n & 63);
                let now = self.clock.now_ms();
                let ms = match n >> 6 {
                    0 => now.saturating_add(step),
                    1 => now.saturating_sub(step),
                    2 => now.saturating_add(step * 1000),
                    _ => now.saturating_add(step * 3_600_000),
                };
                self.clock.set(ms);
                format!("(clock {ms})")
            }
            1 => {
                self.current = usize::from(self.input.byte_or_zero()) % CLIENTS;
                format!("(client {})", self.current)
            }
            2 => {
                self.disconnect(self.current);
                format!("(client {} disconnects)", self.current)
            }
            3 => {
                let expired = self.state.keyspace().expire_blocked();
                format!("(expired {expired})")
            }
            _ => {
                let argv = self.command();
                let inline = op & 0x80 != 0;
                let outcome = self.request(&argv, inline);
                format!(
                    "client {}{}: {} -> {outcome}",
                    self.current,
                    if inline { " inline" } else { "" },
                    show(&argv)
                )
            }
        }
    }

    /// Sends one request from the current client, as its connection would run it.
    fn request(&mut self, argv: &[Vec<u8>], inline: bool) -> String {
        let index = self.current;
        if self.clients[index].blocked.is_some() {
            return "(waits behind a blocked command)".into();
        }
        let frame = if inline {
            inline_frame(argv)
        } else {
            multibulk(argv)
        };
        let bulk_bytes_max =
            i64::try_from(self.state.settings().proto_max_bulk_len).unwrap_or(i64::MAX);
        let limits = DecodeLimits {
            bulk_bytes_max,
            unauthenticated: !self.clients[index].state.authenticated,
        };
        let decoded = match decode(&frame, &limits) {
            Ok(Decoded::Command(decoded, used)) => {
                if used != frame.len()
                    || decoded
                        .iter()
                        .map(|a| a.as_ref())
                        .ne(argv.iter().map(Vec::as_slice))
                {
                    self.fail(&format!(
                        "the frame {:?} decodes to {decoded:?} using {used} bytes",
                        String::from_utf8_lossy(&frame)
                    ));
                }
                decoded
            }
            Ok(Decoded::Incomplete) => self.fail("a whole frame decodes as incomplete"),
            Err(e) => {
                // Redis replies the protocol error and closes the connection.
                self.disconnect(index);
                return format!("protocol error ({e}), disconnected");
            }
        };
        let client = &mut self.clients[index];
        let decoded: Vec<&[u8]> = decoded.iter().map(|a| a.as_ref()).collect();
        let mut batch = self.state.keyspace().batch();
        let action = cmd::execute(
            &self.state,
            &mut client.state,
            &mut batch,
            &decoded,
            &self.waker,
        );
        batch.end();
        match action {
            Action::Reply(reply) => self.check(index, &reply),
            Action::Close(reply) => {
                let line = self.check(index, &reply);
                self.disconnect(index);
                format!("{line}, closed")
            }
            Action::Block(handle) => {
                self.clients[index].blocked = Some(handle);
                "(blocked)".into()
            }
            Action::Raw(bytes) => {
                let protocol = self.clients[index].state.protocol;
                if let Err(e) = check_reply(&bytes, protocol == Protocol::Resp3) {
                    self.fail(&format!(
                        "malformed raw reply ({e}): {:?}",
                        String::from_utf8_lossy(&bytes)
                    ));
                }
                format!("{} (raw)", String::from_utf8_lossy(&bytes).trim_end())
            }
            Action::Drop => {
                self.disconnect(index);
                "dropped".into()
            }
            // CLIENT PAUSE: a connection would wait; the harness ends the pause instead.
            Action::Postpone(_) => {
                self.state.pause().unpause();
                "(postponed, unpaused)".into()
            }
        }
    }

    /// Encodes a reply for client `index` and checks the bytes; returns a short outcome.
    fn check(&self, index: usize, reply: &Reply) -> String {
        let protocol = self.clients[index].state.protocol;
        let mut out = BytesMut::new();
        encode(reply, protocol, &mut out);
        if let Err(e) = check_reply(&out, protocol == Protocol::Resp3) {
            self.fail(&format!(
                "malformed reply ({e}): {:?}",
                String::from_utf8_lossy(&out)
            ));
        }
        match reply {
            Reply::Error(text) => text.clone(),
            _ => "ok".into(),
        }
    }

    /// Collects replies of blocked commands, disconnects killed clients, and checks the
    /// keyspace.
    fn after_op(&mut self) {
        for index in 0..CLIENTS {
            let Some(result) = self.clients[index]
                .blocked
                .as_ref()
                .and_then(BlockedHandle::try_take)
            else {
                continue;
            };
            self.clients[index].blocked = None;
            let reply = result.unwrap_or_else(cmd::error);
            let line = self.check(index, &reply);
            self.record(format!("client {index} unblocked -> {line}"));
        }
        for index in 0..CLIENTS {
            let killed = {
                let kill = pin!(self.clients[index].state.info.killed());
                kill.poll(&mut Context::from_waker(Waker::noop()))
                    .is_ready()
            };
            if killed {
                self.disconnect(index);
                self.record(format!("(client {index} killed, disconnected)"));
            }
        }
        if let Err(e) = self.state.keyspace().check_invariants() {
            self.fail(&format!("invariant broken: {e}"));
        }
        let waiting = self.clients.iter().filter(|c| c.blocked.is_some()).count();
        let blocked = self.state.keyspace().blocked_count();
        if blocked != waiting {
            self.fail(&format!(
                "{blocked} commands blocked in the keyspace, {waiting} clients waiting"
            ));
        }
    }

    /// Every client goes away: nothing may stay blocked or registered.
    fn hang_up_all(&mut self) {
        for client in std::mem::take(&mut self.clients) {
            self.hang_up(client);
        }
        let blocked = self.state.keyspace().blocked_count();
        let clients = self.state.client_count();
        if blocked != 0 || clients != 0 {
            self.fail(&format!(
                "with every client gone, {blocked} commands stay blocked and {clients} clients registered"
            ));
        }
    }

    fn command(&mut self) -> Vec<Vec<u8>> {
        let name = self.input.byte_or_zero();
        let mut argv = vec![NAMES[usize::from(name) % NAMES.len()].as_bytes().to_vec()];
        let argc = self.input.byte_or_zero() % 12;
        for position in 1..=argc {
            let tag = self.input.byte_or_zero();
            if position == 1 && tag & 0x80 == 0 {
                argv.push(KEYS[usize::from(tag) % KEYS.len()].as_bytes().to_vec());
            } else {
                argv.push(self.arg(tag));
            }
        }
        argv
    }

    fn arg(&mut self, tag: u8) -> Vec<u8> {
        let word = usize::from(tag >> 3);
        let pick = |list: &[&str]| list[word % list.len()].as_bytes().to_vec();
        match tag % 8 {
            0 => pick(&KEYS),
            1 => pick(&IDS),
            2 => pick(&NUMBERS),
            3 => {
                let index = usize::from(self.input.byte_or_zero());
                KEYWORDS[index % KEYWORDS.len()].as_bytes().to_vec()
            }
            4 => pick(&WORDS),
            5 => {
                let b = self.input.byte_or_zero();
                format!("{}-{}", b >> 4, b & 15).into_bytes()
            }
            6 => {
                let width = 1 + (word & 7);
                let mut bytes = [0u8; 8];
                for b in bytes.iter_mut().take(width) {
                    *b = self.input.byte_or_zero();
                }
                let n = u64::from_le_bytes(bytes);
                if word & 8 != 0 {
                    (n as i64).to_string().into_bytes()
                } else {
                    n.to_string().into_bytes()
                }
            }
            _ => {
                let len = usize::from(self.input.byte_or_zero()) % (RAW_ARG_LEN_MAX + 1);
                self.input.bytes(len).to_vec()
            }
        }
    }
}

/// A request as an inline line: every argument double-quoted, with `\xHH` escapes.
fn inline_frame(argv: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for arg in argv {
        out.push(b'"');
        for &b in arg {
            if b.is_ascii_alphanumeric() {
                out.push(b);
            } else {
                out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
            }
        }
        out.extend_from_slice(b"\" ");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// An argv as a readable line.
fn show(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|a| format!("{:?}", String::from_utf8_lossy(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_the_server_knows_is_in_the_fuzz_name_list() {
        let known = |name: &str| NAMES.iter().any(|n| n.eq_ignore_ascii_case(name));
        for name in echomq_engine::command::names() {
            assert!(known(name), "add {name} to NAMES");
        }
        for name in [
            "ping", "echo", "hello", "auth", "select", "quit", "reset", "client", "del", "unlink",
            "exists", "type", "keys", "scan", "dbsize", "rename", "renamenx", "flushdb",
            "flushall", "set", "get", "incr", "multi", "exec", "discard", "watch", "unwatch",
            "config", "info", "command", "time", "function", "script", "debug", "copy", "move",
            "swapdb", "dump", "restore",
        ] {
            assert!(
                cmd::lookup(name.as_bytes()).is_some(),
                "{name} is no command"
            );
            assert!(known(name), "add {name} to NAMES");
        }
        assert!(NAMES.iter().any(|n| cmd::lookup(n.as_bytes()).is_none()));
    }

    #[test]
    fn the_redis_8_stream_words_are_in_the_keyword_list() {
        for word in [
            "IDS",
            "CLAIM",
            "KEEPREF",
            "DELREF",
            "ACKED",
            "SILENT",
            "FAIL",
            "FATAL",
            "IDMP",
            "IDMPAUTO",
            "IDMP-DURATION",
            "IDMP-MAXSIZE",
            "RETRYCOUNT",
            "FORCE",
            "MAXCOUNT",
            "MAXSIZE",
        ] {
            assert!(KEYWORDS.contains(&word), "add {word} to KEYWORDS");
        }
        for name in ["XDELEX", "XACKDEL", "XNACK", "XCFGSET", "XIDMPRECORD"] {
            assert!(NAMES.contains(&name), "add {name} to NAMES");
        }
    }

    #[test]
    fn a_hand_written_input_runs_a_transaction_and_a_blocked_read() {
        // Head 0. MULTI (name 22); XADD s 1-1 v v (name 34, argc 4, key 0, small id, word 4
        // twice); EXEC (23). Client 1: XREAD BLOCK 0 STREAMS s $ (name 41, argc 5, keyword
        // BLOCK, number 0, keyword STREAMS, key 0, id 8). Client 0: XADD s 2-1 v v.
        let xadd = |id: u8| [4u8, 34, 4, 0, 5, id, 4 + (4 << 3), 4 + (4 << 3)];
        let mut data = vec![0u8, 4, 22, 0];
        data.extend(xadd(0x11));
        data.extend([4, 23, 0]);
        data.extend([1, 1]);
        data.extend([4, 41, 5, 0x80 | 3, 6, 2, 3, 7, 0, 1 + (8 << 3)]);
        data.extend([1, 0]);
        data.extend(xadd(0x21));
        let log = run_logged(&data);
        let want = [
            r#"client 0: "MULTI" -> ok"#,
            r#"client 0: "XADD" "s" "1-1" "v" "v" -> ok"#,
            r#"client 0: "EXEC" -> ok"#,
            "(client 1)",
            r#"client 1: "XREAD" "BLOCK" "0" "STREAMS" "s" "$" -> (blocked)"#,
            "(client 0)",
            r#"client 0: "XADD" "s" "2-1" "v" "v" -> ok"#,
            "client 1 unblocked -> ok",
        ];
        assert_eq!(log, want);
    }
}

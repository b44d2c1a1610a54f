//! Fuzzing support: arbitrary bytes become a sequence of engine operations, and every invariant
//! is checked after each one.
//!
//! [`run`] is the whole fuzz target: `fuzz/fuzz_targets/engine_ops.rs` calls it under libFuzzer,
//! and this module's tests replay the committed corpus (`fuzz/corpus/engine_ops`) and a few
//! thousand pseudo-random inputs through it, so `cargo test` covers the same code without
//! cargo-fuzz. `run` panics only when [`Keyspace::check_invariants`] fails (or the engine itself
//! panics); error replies are expected and ignored.
//!
//! Every byte string is a valid input; running out of bytes ends it:
//!
//! ```text
//! input := op*                                     at most OPS_MAX ops
//! op    := b (b % 8 == 0) entries bytes            stream-node-max-entries, -bytes (from lists)
//!        | b (b % 8 == 1) n                         move the clock (forward, back, far forward)
//!        | b (b % 8 == 2) k                         store a string under a key, or delete the key
//!        | b (b % 8 == 3) command                   run it with `execute_blocking`, keep the handle
//!        | b (b % 8 == 4) n                         time out blocked commands, drop finished
//!                                                   handles (and the oldest if n is odd)
//!        | b (b % 8 == 5) k c m z                   a capped XREAD of 1-3 keys (k), COUNT c%4,
//!                                                   MAXCOUNT (m), MAXSIZE (z), RESP2 or RESP3
//!                                                   (k's top bit), checked against the caps'
//!                                                   model (`fuzzing_caps.rs`)
//!        | b command                                run it with `execute`
//! command := name argc arg{argc}                    NAMES[name % 16] (lower case if name & 16),
//!          | name (>= 0xE0) b argc arg{argc}        NAMES[16 + b % (len - 16)]
//! arg   := tag ...                                  tag % 8 picks the kind, tag >> 3 the word:
//!          0 key, 1 id, 2 number, 3 keyword, 4 word (group, consumer, field, value)
//!          5 small id from the next byte, 6 number from the next 1..8 bytes, 7 raw bytes
//! keyword := word < 24: KEYWORDS[word]             the 7.x words, one byte
//!          | word >= 24, then b: KEYWORDS[24 + b % (len - 24)]
//!                                                   the rest, 8.x's included (IDS, CLAIM,
//!                                                   KEEPREF, DELREF, ACKED, XNACK's modes,
//!                                                   8.10's MAXCOUNT and MAXSIZE)
//! ```
//! The first argument is a key unless its tag has the top bit set, so most commands reach a
//! stream; words are drawn from small vocabularies so that ids, groups and consumers repeat.

pub use crate::rdb::fuzz::run as rdb_load;

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use crate::blocking::Wake;
use crate::clock::{Clock, ManualClock};
use crate::error::Result;
use crate::fuzzing_caps::CappedRead;
use crate::keyspace::{BlockedHandle, Execution, Keyspace, Value};
use crate::reply::Reply;
use crate::reply_size::Protocol;

/// Operations per input, at most (keeps one input fast).
const OPS_MAX: usize = 512;
/// Where the clock starts: a realistic Unix time in ms.
const CLOCK_START_MS: u64 = 1_700_000_000_000;
/// Operations shown in the failure message, the most recent.
const LOG_LINES_MAX: usize = 64;
/// Blocked commands kept at once; the oldest is dropped (its client went away) beyond this.
const BLOCKED_MAX: usize = 8;

/// Command names: every command the engine knows (a test checks the list against
/// [`crate::command::names`]) and one it does not. Sixteen first, so a byte below 0xE0 picks
/// one of them evenly; the Redis 8.x commands, the string, key, list, bitmap, HyperLogLog,
/// hash, set and sorted set commands follow.
pub const NAMES: [&str; 195] = [
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
    "XNOSUCHCOMMAND",
    // Redis 8.2–8.8, reached by name bytes from 0xE0 on.
    "XDELEX",
    "XACKDEL",
    "XNACK",
    "XREADGROUP",
    "XCFGSET",
    "XIDMPRECORD",
    "SET",
    "GET",
    "INCR",
    "STRLEN",
    "DEL",
    "UNLINK",
    "EXISTS",
    "TYPE",
    "DBSIZE",
    "RENAME",
    "RENAMENX",
    "EXPIRE",
    "PEXPIRE",
    "EXPIREAT",
    "PEXPIREAT",
    "TTL",
    "PTTL",
    "EXPIRETIME",
    "PEXPIRETIME",
    "PERSIST",
    "KEYS",
    "SCAN",
    "FLUSHDB",
    "SETNX",
    "SETEX",
    "PSETEX",
    "GETSET",
    "GETDEL",
    "GETEX",
    "MGET",
    "MSET",
    "MSETNX",
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
    "MSETEX",
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
    "TOUCH",
    "RANDOMKEY",
    "INCREX",
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

const IDS: [&str; 32] = [
    "0-0",
    "0",
    "0-1",
    "1",
    "1-0",
    "1-1",
    "1-2",
    "2",
    "2-1",
    "3-0",
    "5-5",
    "1-*",
    "2-*",
    "*",
    "$",
    ">",
    "-",
    "+",
    "(1-1",
    "(0-0",
    "(18446744073709551615-18446744073709551615",
    "18446744073709551615-18446744073709551615",
    "18446744073709551615-18446744073709551614",
    "18446744073709551615",
    "18446744073709551615-*",
    "18446744073709551616",
    "1-18446744073709551616",
    "abc",
    "1-x",
    "",
    "+5-0",
    "018-1",
];

const NUMBERS: [&str; 24] = [
    "0",
    "1",
    "2",
    "3",
    "5",
    "10",
    "100",
    "1000",
    "-1",
    "-2",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "-9223372036854775809",
    "1.5",
    "abc",
    "",
    "01",
    "+1",
    " 1",
    "0x10",
    "100000000",
];

/// The first [`KEYWORDS_DIRECT`] are picked by the tag alone; the rest by one more byte (a
/// tag has only 32 words).
const KEYWORDS: [&str; 77] = [
    "MAXLEN",
    "MINID",
    "LIMIT",
    "~",
    "=",
    "NOMKSTREAM",
    "COUNT",
    "ENTRIESADDED",
    "MAXDELETEDID",
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
    "TIME",
    "RETRYCOUNT",
    "FORCE",
    "JUSTID",
    "LASTID",
    "STREAM",
    "GROUPS",
    "CONSUMERS",
    "FULL",
    "HELP",
    "maxlen",
    "IDMP",
    "IDMPAUTO",
    "IDMP-DURATION",
    "IDMP-MAXSIZE",
    // Redis 8.2–8.8 consumer-group words: deletion strategies, XDELEX/XACKDEL/XNACK's IDS
    // block, XREADGROUP's CLAIM, XNACK's modes.
    "IDS",
    "CLAIM",
    "KEEPREF",
    "DELREF",
    "ACKED",
    "SILENT",
    "FAIL",
    "FATAL",
    "acked",
    "ids",
    "claim",
    // Redis 8.10's read caps.
    "MAXCOUNT",
    "MAXSIZE",
    "maxcount",
    // The string commands' options.
    "NX",
    "XX",
    "GET",
    "EX",
    "PX",
    "EXAT",
    "KEEPTTL",
    "PERSIST",
    "IDX",
    "LEN",
    "WITHMATCHLEN",
    "IFEQ",
    "IFDNE",
    // The hash field expiry and set words.
    "FIELDS",
    "WITHVALUES",
    "NOVALUES",
    "FNX",
    "FXX",
    "KEEPTTL",
    "PERSIST",
    "EXAT",
    "PXAT",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "RANK",
];

/// Keywords a tag picks without a further byte.
const KEYWORDS_DIRECT: usize = 24;

const WORDS: [&str; 16] = [
    "g", "g2", "c", "c2", "a", "b", "f", "v", "1", "", "x", "alice", "Bob", "\r\n", "é", "\0",
];

/// `stream-node-max-entries` values to switch between (0 = no count limit).
const NODE_ENTRIES_MAX: [u64; 8] = [0, 1, 2, 3, 4, 5, 10, 100];
/// `stream-node-max-bytes` values to switch between (0 = 1 GiB).
const NODE_BYTES_MAX: [u64; 8] = [0, 1, 16, 64, 128, 300, 4096, (1 << 30) + 1];
/// Longest raw-bytes argument.
const RAW_ARG_LEN_MAX: usize = 63;

/// Runs the operations `data` encodes; panics if an invariant breaks.
pub fn run(data: &[u8]) {
    build(data);
}

/// Runs the operations `data` encodes (panicking if an invariant breaks) and returns the
/// keyspace they leave, with its clock: random engine states for other properties (the RDB
/// round trip).
pub fn build(data: &[u8]) -> (Arc<Keyspace>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(CLOCK_START_MS));
    let mut fuzz = Fuzz {
        keyspace: Arc::new(Keyspace::new(clock.clone())),
        clock,
        input: Input { data, pos: 0 },
        blocked: Vec::new(),
        log: VecDeque::new(),
    };
    for _ in 0..OPS_MAX {
        let Some(op) = fuzz.input.byte() else {
            break;
        };
        let line = fuzz.op(op);
        if fuzz.log.len() == LOG_LINES_MAX {
            fuzz.log.pop_front();
        }
        fuzz.log.push_back(line);
        if let Err(e) = fuzz.keyspace.check_invariants() {
            panic!(
                "invariant broken: {e}\nlast operations:\n  {}",
                Vec::from(fuzz.log).join("\n  ")
            );
        }
    }
    (fuzz.keyspace, fuzz.clock)
}

/// A blocked command's waker: the fuzzer polls handles instead of waiting.
struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

/// One fuzz run's state.
struct Fuzz<'a> {
    keyspace: Arc<Keyspace>,
    clock: Arc<ManualClock>,
    input: Input<'a>,
    blocked: Vec<BlockedHandle>,
    /// The most recent operations, for the failure message.
    log: VecDeque<String>,
}

impl Fuzz<'_> {
    /// Runs one operation; returns it as a line for the log.
    fn op(&mut self, op: u8) -> String {
        match op % 8 {
            0 => {
                let entries = NODE_ENTRIES_MAX[usize::from(self.input.byte_or_zero()) % 8];
                let bytes = NODE_BYTES_MAX[usize::from(self.input.byte_or_zero()) % 8];
                self.keyspace.config().set_node_entries_max(entries);
                self.keyspace.config().set_node_bytes_max(bytes);
                format!("(node limits: {entries} entries, {bytes} bytes)")
            }
            1 => {
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
            2 => {
                let k = self.input.byte_or_zero();
                let key = KEYS[usize::from(k) % KEYS.len()];
                let delete = k & 0x80 != 0;
                self.keyspace.run(|db, _| {
                    if delete {
                        db.remove(key.as_bytes());
                    } else {
                        db.insert(
                            key.as_bytes(),
                            Value::String(Bytes::from_static(b"v").into()),
                        );
                    }
                });
                format!("({} {key:?})", if delete { "delete" } else { "string" })
            }
            3 => {
                let argv = self.input.command();
                let outcome = match self.keyspace.execute_blocking(&argv, Arc::new(NoWake)) {
                    Execution::Done(reply) => outcome(&reply),
                    Execution::Blocked(handle) => {
                        if self.blocked.len() == BLOCKED_MAX {
                            self.blocked.remove(0);
                        }
                        self.blocked.push(handle);
                        "(blocked)".to_string()
                    }
                };
                format!("blocking {} -> {outcome}", show(&argv))
            }
            4 => {
                let n = self.input.byte_or_zero();
                let expired = self.keyspace.expire_blocked();
                let before = self.blocked.len();
                self.blocked.retain(|h| h.try_take().is_none());
                let finished = before - self.blocked.len();
                let dropped = n & 1 == 1 && !self.blocked.is_empty();
                if dropped {
                    self.blocked.remove(0);
                }
                format!("(expired {expired}, {finished} finished, dropped one: {dropped})")
            }
            5 => {
                let read = self.input.capped_read();
                read.check(&mut self.keyspace.batch())
            }
            _ => {
                let argv = self.input.command();
                // Errors are fine: only a broken invariant (or a panic inside) is a finding.
                let reply = self.keyspace.execute(&argv);
                format!("{} -> {}", show(&argv), outcome(&reply))
            }
        }
    }
}

/// The undecoded rest of the input.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn byte_or_zero(&mut self) -> u8 {
        self.byte().unwrap_or(0)
    }

    fn capped_read(&mut self) -> CappedRead {
        /// MAXSIZE values around the size of one small entry (about 30 bytes).
        const MAX_SIZES: [Option<usize>; 8] = [
            None,
            Some(1),
            Some(20),
            Some(40),
            Some(60),
            Some(100),
            Some(200),
            Some(1000),
        ];
        let k = self.byte_or_zero();
        let keys = (0..1 + usize::from(k % 3))
            .map(|i| KEYS[(usize::from(k >> 2) + i) % 3])
            .collect();
        let count = usize::from(self.byte_or_zero() % 4);
        let m = self.byte_or_zero();
        let max_count = (m & 8 == 0).then_some(1 + usize::from(m % 6));
        let max_size = MAX_SIZES[usize::from(self.byte_or_zero() % 8)];
        CappedRead {
            keys,
            count,
            max_count,
            max_size,
            protocol: if k & 0x80 != 0 {
                Protocol::Resp3
            } else {
                Protocol::Resp2
            },
        }
    }

    fn command(&mut self) -> Vec<Vec<u8>> {
        let name = self.byte_or_zero();
        let index = if name >= 0xE0 {
            16 + usize::from(self.byte_or_zero()) % (NAMES.len() - 16)
        } else {
            usize::from(name % 16)
        };
        let mut argv = vec![NAMES[index].as_bytes().to_vec()];
        if name & 0x10 != 0 {
            argv[0].make_ascii_lowercase();
        }
        let argc = self.byte_or_zero() % 16;
        for position in 1..=argc {
            let tag = self.byte_or_zero();
            if position == 1 && tag & 0x80 == 0 {
                argv.push(KEYS[usize::from(tag) % 3].as_bytes().to_vec());
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
            3 if word < KEYWORDS_DIRECT => pick(&KEYWORDS),
            3 => {
                let extra = usize::from(self.byte_or_zero()) % (KEYWORDS.len() - KEYWORDS_DIRECT);
                KEYWORDS[KEYWORDS_DIRECT + extra].as_bytes().to_vec()
            }
            4 => pick(&WORDS),
            5 => {
                let b = self.byte_or_zero();
                let (ms, seq) = (b >> 4, b & 15);
                let exclusive = if word & 2 != 0 { "(" } else { "" };
                match word & 5 {
                    1 => format!("{exclusive}{ms}"),
                    4 => format!("{ms}-*"),
                    _ => format!("{exclusive}{ms}-{seq}"),
                }
                .into_bytes()
            }
            6 => {
                let width = 1 + (word & 7);
                let mut bytes = [0u8; 8];
                for b in bytes.iter_mut().take(width) {
                    *b = self.byte_or_zero();
                }
                let n = u64::from_le_bytes(bytes);
                match word >> 3 {
                    0 => n.to_string(),
                    1 => (n as i64).wrapping_neg().to_string(),
                    2 => (n as i64).to_string(),
                    _ => format!("{n}-{}", n >> 7),
                }
                .into_bytes()
            }
            _ => {
                let len = usize::from(self.byte_or_zero()) % (RAW_ARG_LEN_MAX + 1);
                let start = self.pos.min(self.data.len());
                let end = (start + len).min(self.data.len());
                self.pos = end;
                self.data[start..end].to_vec()
            }
        }
    }
}

/// A reply, short: replies can be large and the log is written on every operation.
fn outcome(reply: &Result<Reply>) -> String {
    match reply {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
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

    /// Pseudo-random inputs per test run, and their longest length.
    const RANDOM_INPUTS: usize = 3000;
    const RANDOM_INPUT_LEN_MAX: usize = 600;

    #[test]
    fn every_engine_command_is_in_the_fuzz_name_list() {
        for name in crate::command::names() {
            assert!(
                NAMES.iter().any(|n| n.eq_ignore_ascii_case(name)),
                "add {name} to fuzzing::NAMES"
            );
        }
        assert!(
            NAMES
                .iter()
                .any(|n| !crate::command::is_engine_command(n.as_bytes()))
        );
    }

    #[test]
    fn the_committed_corpus_runs_clean() {
        echomq_testkit::replay_corpus("engine_ops", run);
    }

    #[test]
    fn pseudo_random_inputs_run_clean() {
        for data in echomq_testkit::inputs(RANDOM_INPUTS, RANDOM_INPUT_LEN_MAX) {
            run(&data);
        }
    }

    #[test]
    fn a_hand_written_input_decodes_as_documented() {
        // XADD s 5-1 a 1: name 0, argc 4, key tag 0, small id tag 5 then 0x51, words 4 and 8.
        let mut input = Input {
            data: &[0, 4, 0, 5, 0x51, 4 + (4 << 3), 4 + (8 << 3)],
            pos: 0,
        };
        let want: Vec<&[u8]> = vec![b"XADD", b"s", b"5-1", b"a", b"1"];
        assert_eq!(input.command(), want);
        // xrange s - +: name 1 in lower case, argc 3, key, ids 16 and 17.
        let mut input = Input {
            data: &[1 | 0x10, 3, 0, 1 + (16 << 3), 1 + (17 << 3)],
            pos: 0,
        };
        let want: Vec<&[u8]> = vec![b"xrange", b"s", b"-", b"+"];
        assert_eq!(input.command(), want);
        // XACKDEL s g ACKED IDS 1 1-1: name 0xE9 then 1 (16 + 1 = 17), argc 6, key, word 0,
        // keywords past the direct ones (tag 3 + (24 << 3), then 16 and 12: 24 + b % 23 is
        // ACKED, IDS), number 1, id 5.
        let far = 3 + (24 << 3);
        let mut input = Input {
            data: &[
                0xE9,
                1,
                6,
                0,
                4,
                far,
                16,
                far,
                12,
                2 + (1 << 3),
                1 + (5 << 3),
            ],
            pos: 0,
        };
        let want: Vec<&[u8]> = vec![b"XACKDEL", b"s", b"g", b"ACKED", b"IDS", b"1", b"1-1"];
        assert_eq!(input.command(), want);
    }

    #[test]
    fn every_keyword_can_be_drawn() {
        let mut drawn = std::collections::HashSet::new();
        for tag in (3u8..=255).step_by(8) {
            for extra in 0..=255u8 {
                let mut input = Input {
                    data: &[extra],
                    pos: 0,
                };
                drawn.insert(input.arg(tag));
            }
        }
        for keyword in KEYWORDS {
            assert!(
                drawn.contains(keyword.as_bytes()),
                "{keyword} is never drawn"
            );
        }
    }
}

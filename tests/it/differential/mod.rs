//! Differential tests: the engine and a real Redis-compatible server run the same commands and
//! must give the same bytes. See `support::differ` for what is compared, `support::normalize`
//! for the time fields blanked on both sides, and `known_differences` for the servers' known
//! departures from the behaviour we target.
//!
//! - `acl`: ACL SETUSER, GETUSER, LIST, DRYRUN, CAT, AUTH and NOPERM refusals against Redis 8.8
//!   over the wire, RESP2 and RESP3.
//! - `case`: hand-written cases and their runner.
//! - `command_info`: COMMAND INFO and COMMAND DOCS of XGROUP and XINFO with their subcommands
//!   and key specs against Redis 8.8, RESP2 and RESP3.
//! - `streams`: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID.
//! - `groups`: consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO)
//!   and XREAD.
//! - `idmp`: idempotent production (XADD IDMP/IDMPAUTO, XCFGSET, XIDMPRECORD) against Redis 8.8
//!   over the wire, RESP2 and RESP3.
//! - `group_deletion_claim_nack`: deletion strategies, XDELEX, XACKDEL, the ENTRIESREAD cap,
//!   XREADGROUP CLAIM and XNACK (Redis 8.2–8.8) against Redis 8.8, in process and
//!   over the wire.
//! - `info`: INFO's sections, fields and order against Redis 8.8, and HELLO's role and mode.
//! - `expiry`: EXPIRE and its family, TTL readers, PERSIST and SET's expiry options against
//!   Redis 8.8 over the wire.
//! - `introspection`: OBJECT, MEMORY, SLOWLOG, LATENCY, WAIT, COMMAND GETKEYS against Redis 8.8.
//! - `lolwut`: LOLWUT (exact where Redis's art is not random, by shape where it is) and ROLE
//!   against Redis 8.8, RESP2 and RESP3.
//! - `pubsub`: pub/sub against Redis 8.8 with real subscribed connections, RESP2 and RESP3.
//! - `notify`: keyspace notifications (`notify-keyspace-events`) and INFO's keyspace hits and
//!   misses against Redis 8.8: the event messages a subscriber receives, byte for byte.
//! - `strings`: the string commands and SET's options against Redis 8.8 over the wire, RESP2
//!   and RESP3.
//! - `bitmaps`: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD against Redis 8.8 over the
//!   wire, RESP2 and RESP3.
//! - `hyperloglog`: PFADD, PFCOUNT, PFMERGE, PFDEBUG and the HLL strings' bytes against Redis
//!   8.8 over the wire, RESP2 and RESP3.
//! - `string_fuzz`: random string, bitmap and HyperLogLog sequences against Redis 8.8, replies
//!   and every key's DUMP compared (`ECHOMQ_STRING_FUZZ_SEQUENCES` for longer runs).
//! - `collections_fuzz`: random hash (field TTLs included), set and sorted set commands with
//!   clients blocked in BZPOPMIN/BZPOPMAX/BZMPOP against Redis 8.8, step by step
//!   (`ECHOMQ_COLLECTIONS_FUZZ_STEPS` for longer runs).
//! - `scripting`: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT against Redis 8.8 over the
//!   wire, RESP2 and RESP3: conversions, error texts, the sandbox, `bit` and `cjson`.
//! - `functions`: FUNCTION and FCALL against Redis 8.8 over the wire, RESP2 and RESP3: the
//!   load sandbox, `register_function`, every refusal, DUMP/RESTORE payloads.
//! - `zsets`: the sorted set commands against Redis 8.8 over the wire, RESP2 and RESP3.
//! - `server`: `echomq serve` against a real server over the wire, RESP2 and RESP3.

mod acl;
mod bitmaps;
mod case;
mod client;
mod collections_fuzz;
mod command_info;
mod command_keys;
mod config_values;
mod debug;
mod eviction;
mod expiry;
mod functions;
mod group_deletion_claim_nack;
mod groups;
mod hashes;
mod hyperloglog;
mod idmp;
mod info;
mod introspection;
mod known_differences;
mod lazyfree;
mod lists;
mod lists_fuzz;
mod lolwut;
mod notify;
mod pubsub;
mod scan;
mod scripting;
mod server;
mod sets;
mod streams;
mod string_fuzz;
mod strings;
mod tracking;
mod tuning;
mod zsets;

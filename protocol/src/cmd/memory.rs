//! MEMORY: what `redis-cli --memkeys` and monitoring ask about the server's memory. Sizes are
//! OBJECT's (see `object.rs`); the allocator reports (DOCTOR, MALLOC-STATS) answer as Redis
//! does where it has nothing to say.

use bytes::Bytes;
use echomq_engine::{Error as EngineError, Reply};

use super::object::usage;
use super::{Ctx, error, help, int_arg, is, subcommand_of, subcommand_syntax, unknown_subcommand};

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Print this help.",
];

/// `MEMORY USAGE key [SAMPLES n]|STATS|DOCTOR|MALLOC-STATS|PURGE|HELP`.
pub(crate) fn memory(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "help" => help(MEMORY_HELP),
        "usage" => {
            let mut j = 3;
            while j < argv.len() {
                if is(argv[j], "samples") && j + 1 < argv.len() {
                    match int_arg(argv[j + 1]) {
                        Ok(n) if n >= 0 => {}
                        Ok(_) => return error(EngineError::Syntax),
                        Err(reply) => return reply,
                    }
                    j += 2;
                } else {
                    return error(EngineError::Syntax);
                }
            }
            let key = argv[2];
            match ctx.db().get(key) {
                None => Reply::Null,
                Some(value) => Reply::Int(usage(key, value) as i64),
            }
        }
        "doctor" => Reply::Verbatim(Bytes::from(super::memory_doctor::report(ctx.state))),
        "malloc-stats" => Reply::Verbatim(
            crate::alloc::allocator_introspection()
                .and_then(|a| a.report())
                .map_or_else(
                    || Bytes::from_static(b"Stats not supported for the current allocator"),
                    Bytes::from,
                ),
        ),
        "purge" => {
            if let Some(allocator) = crate::alloc::allocator_introspection() {
                allocator.purge();
            }
            Reply::OK
        }
        "stats" => {
            let used = ctx.state.memory_used() as i64;
            let keys: usize = ctx.dbs.all().iter().map(|db| db.len()).sum();
            let field = |name: &'static str, n: i64| (Reply::bulk_static(name), Reply::Int(n));
            Reply::Map(vec![
                field("peak.allocated", used),
                field("total.allocated", used),
                field("startup.allocated", 0),
                field("replication.backlog", 0),
                field("clients.slaves", 0),
                field("clients.normal", 0),
                field("aof.buffer", 0),
                field("keys.count", keys as i64),
                field("dataset.bytes", used),
            ])
        }
        _ => subcommand_syntax(argv),
    }
}

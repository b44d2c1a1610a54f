//! The stream commands as Redis defines them: parse arguments, apply to the [`Db`], reply.
//!
//! One file per command (or pair of mirror commands), each a struct named after the command
//! with `parse` (arguments to a typed request, Redis's exact errors) and `apply` (the request
//! against the keyspace, producing a [`Reply`]). Arity is checked once, here, from the table
//! below; option parsing happens before any key lookup where Redis does it that way, so a
//! failed command changes nothing. The embedded API, the server and the fuzz target all go
//! through [`execute`], so they cannot disagree.

mod args;
mod trim_args;
mod xack;
mod xadd;
mod xautoclaim;
mod xclaim;
mod xdel;
mod xdelex;
mod xgroup;
mod xinfo;
mod xlen;
mod xnack;
mod xpending;
mod xrange;
mod xread;
mod xsetid;
mod xtrim;

pub use args::{parse_i64, parse_u64_nonneg};
pub use xadd::{Trimmer, XAdd};
pub use xrange::{RangeArgs, parse_range};
pub use xtrim::parse_xtrim;

use crate::blocking::Outcome;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

type PlainRun = fn(&mut Db, &Snapshot, &[&[u8]]) -> Result<Reply>;
type BlockingRun = fn(&mut Db, &Snapshot, &[&[u8]]) -> Result<Outcome>;

/// How a command runs.
#[derive(Clone, Copy)]
enum Run {
    /// Always replies.
    Plain(PlainRun),
    /// May ask to block.
    Blocking(BlockingRun),
}

/// A command this module knows: its lower-case name and Redis's arity (negative = at least).
#[derive(Clone, Copy)]
struct Spec {
    name: &'static str,
    arity: i32,
    run: Run,
}

const COMMANDS: &[Spec] = &[
    Spec {
        name: "xadd",
        arity: -5,
        run: Run::Plain(xadd::XAdd::run),
    },
    Spec {
        name: "xrange",
        arity: -4,
        run: Run::Plain(xrange::XRange::run_forward),
    },
    Spec {
        name: "xrevrange",
        arity: -4,
        run: Run::Plain(xrange::XRange::run_reverse),
    },
    Spec {
        name: "xlen",
        arity: 2,
        run: Run::Plain(xlen::XLen::run),
    },
    Spec {
        name: "xdel",
        arity: -3,
        run: Run::Plain(xdel::XDel::run),
    },
    Spec {
        name: "xtrim",
        arity: -4,
        run: Run::Plain(xtrim::XTrim::run),
    },
    Spec {
        name: "xsetid",
        arity: -3,
        run: Run::Plain(xsetid::XSetId::run),
    },
    Spec {
        name: "xgroup",
        arity: -2,
        run: Run::Plain(xgroup::XGroup::run),
    },
    Spec {
        name: "xread",
        arity: -4,
        run: Run::Blocking(xread::XRead::run_plain),
    },
    Spec {
        name: "xreadgroup",
        arity: -7,
        run: Run::Blocking(xread::XRead::run_group),
    },
    Spec {
        name: "xack",
        arity: -4,
        run: Run::Plain(xack::XAck::run),
    },
    Spec {
        name: "xpending",
        arity: -3,
        run: Run::Plain(xpending::XPending::run),
    },
    Spec {
        name: "xclaim",
        arity: -6,
        run: Run::Plain(xclaim::XClaim::run),
    },
    Spec {
        name: "xautoclaim",
        arity: -6,
        run: Run::Plain(xautoclaim::XAutoClaim::run),
    },
    Spec {
        name: "xinfo",
        arity: -2,
        run: Run::Plain(xinfo::XInfo::run),
    },
    Spec {
        name: "xdelex",
        arity: -5,
        run: Run::Plain(xdelex::XDelEx::run_delex),
    },
    Spec {
        name: "xackdel",
        arity: -6,
        run: Run::Plain(xdelex::XDelEx::run_ackdel),
    },
    Spec {
        name: "xnack",
        arity: -7,
        run: Run::Plain(xnack::XNack::run),
    },
];

/// Redis's arity of a command [`execute`] handles (negative = at least), by name in any case.
pub fn arity(name: &[u8]) -> Option<i32> {
    find(name).map(|spec| spec.arity)
}

/// The names of the commands [`execute`] handles, lower case.
pub fn names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|spec| spec.name)
}

/// Whether `name` (any case) is a command [`execute`] handles.
pub fn is_stream_command(name: &[u8]) -> bool {
    find(name).is_some()
}

fn find(name: &[u8]) -> Option<&'static Spec> {
    // Every stream command starts with X: most other names are rejected after one byte.
    if !name.first().is_some_and(|c| c.eq_ignore_ascii_case(&b'x')) {
        return None;
    }
    COMMANDS.iter().find(|spec| {
        spec.name.len() == name.len() && name.eq_ignore_ascii_case(spec.name.as_bytes())
    })
}

/// Runs one command where blocking is not possible (as in MULTI/EXEC): a command that would
/// block replies as if it timed out, with a null array. `argv[0]` is the command name.
pub fn execute<A: AsRef<[u8]>>(db: &mut Db, snapshot: &Snapshot, argv: &[A]) -> Result<Reply> {
    Ok(match execute_outcome(db, snapshot, argv)? {
        Outcome::Reply(reply) => reply,
        Outcome::Block(_) => Reply::NullArray,
    })
}

/// Runs one command, reporting whether it asks to block.
pub fn execute_outcome<A: AsRef<[u8]>>(
    db: &mut Db,
    snapshot: &Snapshot,
    argv: &[A],
) -> Result<Outcome> {
    // Most commands have few arguments: keep their slices on the stack.
    const STACK_ARGS_MAX: usize = 16;
    let mut stack: [&[u8]; STACK_ARGS_MAX] = [&[]; STACK_ARGS_MAX];
    let heap: Vec<&[u8]>;
    let argv: &[&[u8]] = if argv.len() <= STACK_ARGS_MAX {
        for (slot, arg) in stack.iter_mut().zip(argv) {
            *slot = arg.as_ref();
        }
        &stack[..argv.len()]
    } else {
        heap = argv.iter().map(AsRef::as_ref).collect();
        &heap
    };
    let Some(&name) = argv.first() else {
        return Err(unknown_command(b"", &[]));
    };
    let Some(spec) = find(name) else {
        return Err(unknown_command(name, &argv[1..]));
    };
    let argc = argv.len() as i64;
    let arity = i64::from(spec.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        return Err(Error::WrongArity(spec.name.to_string()));
    }
    match spec.run {
        Run::Plain(run) => run(db, snapshot, argv).map(Outcome::Reply),
        Run::Blocking(run) => run(db, snapshot, argv),
    }
}

/// Redis's unknown-command error: the name and the first arguments, quoted, at most about 128
/// bytes of them, with CR and LF turned into spaces so the reply stays one line.
pub fn unknown_command(name: &[u8], args: &[&[u8]]) -> Error {
    const SHOWN_BYTES_MAX: usize = 128;
    let mut shown = String::new();
    for arg in args {
        if shown.len() >= SHOWN_BYTES_MAX {
            break;
        }
        let room = SHOWN_BYTES_MAX - shown.len();
        let arg = String::from_utf8_lossy(&arg[..arg.len().min(room)]).into_owned();
        shown.push('\'');
        shown.push_str(&arg);
        shown.push_str("' ");
    }
    let name = String::from_utf8_lossy(&name[..name.len().min(SHOWN_BYTES_MAX)]).into_owned();
    let clean = |s: String| s.replace(['\r', '\n'], " ");
    Error::UnknownCommand {
        name: clean(name),
        args: clean(shown),
    }
}

#[cfg(test)]
mod tests;

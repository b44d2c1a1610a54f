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
mod xadd;
mod xdel;
mod xlen;
mod xrange;
mod xsetid;
mod xtrim;

pub use args::{parse_i64, parse_u64_nonneg};

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// A command this module knows: its lower-case name and Redis's arity (negative = at least).
#[derive(Debug, Clone, Copy)]
struct Spec {
    name: &'static str,
    arity: i32,
    run: fn(&mut Db, &Snapshot, &[&[u8]]) -> Result<Reply>,
}

const COMMANDS: &[Spec] = &[
    Spec {
        name: "xadd",
        arity: -5,
        run: xadd::XAdd::run,
    },
    Spec {
        name: "xrange",
        arity: -4,
        run: xrange::XRange::run_forward,
    },
    Spec {
        name: "xrevrange",
        arity: -4,
        run: xrange::XRange::run_reverse,
    },
    Spec {
        name: "xlen",
        arity: 2,
        run: xlen::XLen::run,
    },
    Spec {
        name: "xdel",
        arity: -3,
        run: xdel::XDel::run,
    },
    Spec {
        name: "xtrim",
        arity: -4,
        run: xtrim::XTrim::run,
    },
    Spec {
        name: "xsetid",
        arity: -3,
        run: xsetid::XSetId::run,
    },
];

/// Whether `name` (any case) is a command [`execute`] handles.
pub fn is_stream_command(name: &[u8]) -> bool {
    find(name).is_some()
}

fn find(name: &[u8]) -> Option<&'static Spec> {
    COMMANDS
        .iter()
        .find(|spec| name.eq_ignore_ascii_case(spec.name.as_bytes()))
}

/// Runs one command. `argv[0]` is the command name.
pub fn execute<A: AsRef<[u8]>>(db: &mut Db, snapshot: &Snapshot, argv: &[A]) -> Result<Reply> {
    let argv: Vec<&[u8]> = argv.iter().map(AsRef::as_ref).collect();
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
    (spec.run)(db, snapshot, &argv)
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

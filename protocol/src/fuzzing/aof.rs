//! The `aof_load` target: arbitrary bytes as an append-only file, replayed by the loader into
//! a fresh server.
//!
//! ```text
//! input := head body
//! head  := bit 0: the file is the last one (a cut tail may be cut)
//!          bit 1: the body is made of commands (name, args from the next bytes), then cut or
//!                 damaged at a byte the input picks; otherwise the body is raw bytes
//! ```
//! Properties: the loader never panics; a clean end means every byte was a whole command; a
//! cut is only allowed in the last file and points at a command boundary at or before the
//! end; a format error points inside the file; the keyspace invariants hold whatever happened.

use std::sync::Arc;

use echomq_engine::ManualClock;

use super::Input;
use crate::cmd::replay::replay;
use crate::error::PersistError;
use crate::persist::aof::codec::{self, Parsed};
use crate::persist::aof::load::Loaded;
use crate::server::{Server, ServerConfig};

/// Commands a generated body is made of.
const NAMES: &[&str] = &[
    "XADD",
    "XDEL",
    "XTRIM",
    "XGROUP",
    "XREADGROUP",
    "XACK",
    "XCLAIM",
    "XSETID",
    "SET",
    "DEL",
    "SELECT",
    "MULTI",
    "EXEC",
    "INCR",
    "XAUTOCLAIM",
    "FLUSHALL",
];
/// Argument words.
const WORDS: &[&str] = &[
    "s",
    "t",
    "*",
    "1-1",
    "2-0",
    "0",
    "$",
    ">",
    "g",
    "c",
    "f",
    "v",
    "MAXLEN",
    "~",
    "=",
    "MINID",
    "CREATE",
    "SETID",
    "MKSTREAM",
    "GROUP",
    "STREAMS",
    "COUNT",
    "2",
    "LIMIT",
    "5",
    "JUSTID",
    "FORCE",
    "ENTRIESREAD",
    "CREATECONSUMER",
    "1",
];

fn generated(input: &mut Input<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(b) = input.byte() {
        let name = NAMES[usize::from(b) % NAMES.len()];
        let argc = usize::from(input.byte_or_zero() % 8);
        let mut argv = vec![name.to_string()];
        for _ in 0..argc {
            argv.push(WORDS[usize::from(input.byte_or_zero()) % WORDS.len()].to_string());
        }
        codec::encode(&argv, &mut out);
    }
    out
}

/// Runs the loader on the file `data` encodes; panics if a property breaks.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let head = input.byte_or_zero();
    let last = head & 1 != 0;
    let mut body = if head & 2 != 0 {
        let damage = input.byte_or_zero();
        let at = input.byte_or_zero();
        let mut body = generated(&mut input);
        if !body.is_empty() {
            let at = usize::from(at) * body.len() / 256;
            match damage % 3 {
                0 => body.truncate(at),
                1 => body[at] ^= damage | 1,
                _ => {}
            }
        }
        body
    } else {
        input.bytes(usize::MAX).to_vec()
    };
    body.truncate(1 << 16);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("no tokio runtime for the fuzz target: {e}"),
    };
    let config = ServerConfig {
        port: 0,
        databases: 4,
        ..ServerConfig::default()
    };
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let server = match runtime.block_on(Server::bind_with_clock(config, clock)) {
        Ok(server) => server,
        Err(e) => panic!("cannot bind the fuzz target's server: {e}"),
    };
    let state = Arc::clone(server.handle().state());
    drop(server);
    let mut loaded = Loaded::default();
    match replay(&state, "fuzz.aof", &body, last, &mut loaded) {
        Ok(None) => assert!(whole_commands(&body, body.len()), "a clean end left bytes"),
        Ok(Some(cut)) => {
            assert!(last, "cut a file that is not the last");
            assert!(
                cut <= body.len() && whole_commands(&body, cut),
                "cut at {cut}"
            );
        }
        Err(PersistError::Truncated { offset, .. }) => {
            assert!(!last, "refused a cut in the last file");
            assert!(offset as usize <= body.len());
        }
        Err(PersistError::BadFormat { offset, .. }) => assert!(offset as usize <= body.len()),
        Err(_) => {}
    }
    if let Err(e) = state.keyspace().check_invariants() {
        panic!("invariants after loading: {e}");
    }
}

/// Whether `body[..end]` is whole commands.
fn whole_commands(body: &[u8], end: usize) -> bool {
    let mut at = 0;
    while at < end {
        match codec::parse(&body[at..end]) {
            Parsed::Command(_, used) => at += used,
            _ => return false,
        }
    }
    true
}

//! The AOF's commands replayed at startup through the server's own command path, as a client
//! of its own (Redis's AOF client, id `u64::MAX`): the replay the startup load
//! (`crate::persist::aof::load`) hands each file's commands to.
//!
//! A command that fails is logged and skipped, as Redis does; one that would block is given
//! up. An unfinished MULTI at the end of a file counts as cut, back to before its MULTI.

use std::sync::Arc;

use bytes::Bytes;
use echomq_engine::{Reply, Wake};

use super::{execute, is, lookup};
use crate::error::PersistError;
use crate::persist::aof::codec::{Parsed, parse};
use crate::persist::aof::load::{AOF_CLIENT_ID, Loaded};
use crate::resp::Protocol;
use crate::state::{Action, ClientInfo, ClientState, ServerState};

/// The loader's waker: a replayed command that would block is given up, so none is woken.
struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

/// Redis's AOF client: RESP2, authenticated, id [`AOF_CLIENT_ID`] (which the persistence
/// refusals let through while loading).
fn loader_client() -> ClientState {
    let addr = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
    let info = Arc::new(ClientInfo::new(AOF_CLIENT_ID, addr, None, Protocol::Resp2));
    ClientState::new(info, Protocol::Resp2, true)
}

/// Redis writes a `~` trim as `=` but keeps its LIMIT, which only its AOF client may send:
/// the LIMIT of an exact trim changes nothing, so it is dropped before replay.
fn without_exact_limit(argv: &mut Vec<Bytes>) {
    if !(is(&argv[0], "xadd") || is(&argv[0], "xtrim")) {
        return;
    }
    let exact = argv.iter().any(|a| a.as_ref() == b"=");
    if !exact {
        return;
    }
    if let Some(at) = (2..argv.len().saturating_sub(1)).find(|&i| is(&argv[i], "limit")) {
        argv.drain(at..at + 2);
    }
}

/// Commands replayed under one acquisition of the keyspace lock.
const REPLAY_BATCH: usize = 1024;

/// Replays one file's bytes. Returns where to cut it when it ends inside a command and
/// `cut_ok`; errors otherwise.
pub(crate) fn replay(
    state: &ServerState,
    name: &str,
    bytes: &[u8],
    cut_ok: bool,
    loaded: &mut Loaded,
) -> Result<Option<usize>, PersistError> {
    let mut client = loader_client();
    let waker: Arc<dyn Wake> = Arc::new(NoWake);
    // Commands are replayed in batches (one lock per batch), short enough that INFO and the
    // `-LOADING` refusals of clients connected meanwhile are not held up.
    let mut batch = state.keyspace().batch();
    let mut in_batch = 0;
    let mut at = 0;
    let mut before_multi = 0;
    let truncated = |offset: usize| {
        if cut_ok {
            Ok(Some(offset))
        } else {
            Err(PersistError::Truncated {
                file: name.to_string(),
                offset: offset as u64,
            })
        }
    };
    while at < bytes.len() {
        let (mut argv, used) = match parse(&bytes[at..]) {
            Parsed::Command(argv, used) => (argv, used),
            Parsed::Truncated => {
                return truncated(if client.multi.is_some() {
                    before_multi
                } else {
                    at
                });
            }
            Parsed::Corrupt => {
                return Err(PersistError::BadFormat {
                    file: name.to_string(),
                    offset: at as u64,
                });
            }
        };
        if lookup(&argv[0]).is_none() {
            return Err(PersistError::UnknownCommand {
                command: String::from_utf8_lossy(&argv[0]).into_owned(),
                file: name.to_string(),
            });
        }
        if is(&argv[0], "multi") {
            before_multi = at;
        }
        without_exact_limit(&mut argv);
        let args: Vec<&[u8]> = argv.iter().map(AsRef::as_ref).collect();
        if in_batch == REPLAY_BATCH {
            batch = state.keyspace().batch();
            in_batch = 0;
        }
        in_batch += 1;
        match execute(state, &mut client, &mut batch, &args, &waker) {
            Action::Reply(Reply::Error(e)) => {
                tracing::debug!(file = name, offset = at, error = %e, "AOF command failed");
            }
            Action::Block(handle) => {
                // The handle unregisters under the keyspace lock when dropped: end the batch
                // holding that lock first.
                std::mem::replace(&mut batch, state.keyspace().batch()).end();
                in_batch = 0;
                drop(handle);
                tracing::debug!(file = name, offset = at, "AOF command would block");
            }
            _ => {}
        }
        loaded.commands += 1;
        at += used;
    }
    if client.multi.is_some() {
        tracing::warn!("Revert incomplete MULTI/EXEC transaction in AOF file {name}");
        return truncated(before_multi);
    }
    Ok(None)
}

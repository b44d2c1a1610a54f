//! Loading at startup: the files the manifest lists (base, then incremental files, in order)
//! replayed through the server's own command path as a client of its own (Redis's AOF client,
//! id `u64::MAX`), before anything is appended (so nothing replayed is logged again).
//!
//! Each file starts in database 0, as in Redis. A file that ends inside a command (a crash
//! mid-write) is cut back to its last whole command with a warning when it is the last file
//! and `aof-load-truncated` is on (an unfinished MULTI counts as cut, back to before its
//! MULTI); otherwise, and for bytes that are not a command, loading stops with the file, the
//! offset and Redis's wording, and the server does not start: never a partial load served.

use std::fs;
use std::sync::Arc;

use bytes::Bytes;
use echomq_engine::{Reply, Wake};

use super::AofConfig;
use super::codec::{Parsed, parse};
use super::manifest::Manifest;
use crate::cmd::{is, lookup};
use crate::error::AofError;
use crate::resp::Protocol;
use crate::state::{Action, ClientInfo, ClientState, ServerState};

/// Redis's id for the client that replays the AOF.
pub(crate) const AOF_CLIENT_ID: u64 = u64::MAX;

/// What a load did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Loaded {
    /// Commands replayed.
    pub commands: u64,
    /// Files read.
    pub files: usize,
    /// Whether a truncated tail was cut.
    pub truncated: bool,
}

struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

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

/// Loads the AOF in the configured directory, if it has a manifest. `Ok(None)`: none there.
pub(crate) fn load(state: &ServerState, config: &AofConfig) -> Result<Option<Loaded>, AofError> {
    let path = config.path();
    let manifest_path = path.join(Manifest::file_name(&config.filename));
    let text = match fs::read_to_string(&manifest_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(AofError::Io(format!(
                "cannot read {}: {e}",
                manifest_path.display()
            )));
        }
    };
    let manifest = Manifest::parse(&text)?;
    let files: Vec<_> = manifest.loaded().cloned().collect();
    let mut loaded = Loaded::default();
    for (n, file) in files.iter().enumerate() {
        if file.name.ends_with(".rdb") {
            return Err(AofError::RdbBase(file.name.clone()));
        }
        let last = n + 1 == files.len();
        let file_path = path.join(&file.name);
        let bytes = match fs::read(&file_path) {
            Ok(bytes) => bytes,
            // Redis skips an empty or missing last incremental file created just before a crash.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && last
                    && file.kind == super::manifest::Kind::Incr =>
            {
                continue;
            }
            Err(e) => {
                return Err(AofError::Io(format!(
                    "The append log file {} doesn't exist: {e}",
                    file.name
                )));
            }
        };
        tracing::info!(file = %file.name, "Reading the append only file");
        let truncated = replay(
            state,
            &file.name,
            &bytes,
            last && config.load_truncated,
            &mut loaded,
        )?;
        if let Some(valid) = truncated {
            tracing::warn!(
                "!!! Warning: short read while loading the AOF file {}!!!",
                file.name
            );
            tracing::warn!("!!! Truncating the AOF {} at offset {valid} !!!", file.name);
            let cut = fs::OpenOptions::new()
                .write(true)
                .open(&file_path)
                .and_then(|f| f.set_len(valid as u64));
            if let Err(e) = cut {
                return Err(AofError::Io(format!(
                    "Error truncating the AOF file {}: {e}",
                    file.name
                )));
            }
            tracing::warn!(
                "AOF {} loaded anyway because aof-load-truncated is enabled",
                file.name
            );
            loaded.truncated = true;
        }
        loaded.files += 1;
    }
    Ok(Some(loaded))
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
) -> Result<Option<usize>, AofError> {
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
            Err(AofError::Truncated {
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
                return Err(AofError::BadFormat {
                    file: name.to_string(),
                    offset: at as u64,
                });
            }
        };
        if lookup(&argv[0]).is_none() {
            return Err(AofError::UnknownCommand {
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
        match crate::cmd::execute(state, &mut client, &mut batch, &args, &waker) {
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

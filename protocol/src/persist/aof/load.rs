//! Loading at startup: the files the manifest lists (base, then incremental files, in order)
//! read and handed to the caller's replay (the server's own command path, as a client of its
//! own: Redis's AOF client, id `u64::MAX`; see `crate::cmd::replay`), a base in RDB form
//! (`.base.rdb`) decoded and stored first, before anything is appended (so nothing replayed is
//! logged again).
//!
//! Each file starts in database 0, as in Redis. A file that ends inside a command (a crash
//! mid-write) is cut back to its last whole command with a warning when it is the last file
//! and `aof-load-truncated` is on (an unfinished MULTI counts as cut, back to before its
//! MULTI); otherwise, and for bytes that are not a command, loading stops with the file, the
//! offset and Redis's wording, and the server does not start: never a partial load served.

use std::fs;

use echomq_engine::Keyspace;

use super::AofConfig;
use super::manifest::Manifest;
use crate::error::PersistError;

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

/// Replays one file's commands (`bytes`, named `name`) into the keyspace, counting them in
/// `loaded`. Returns where to cut the file when it ends inside a command and `cut_ok`
/// (the last file, `aof-load-truncated yes`); errors otherwise.
pub(crate) type Replay<'r> =
    dyn FnMut(&str, &[u8], bool, &mut Loaded) -> Result<Option<usize>, PersistError> + 'r;

/// Loads the AOF in the configured directory into `keyspace` (of `databases` databases), if it
/// has a manifest, replaying its commands through `replay`. `Ok(None)`: none there.
pub(crate) fn load(
    config: &AofConfig,
    keyspace: &Keyspace,
    databases: usize,
    functions: &crate::script::function::Functions,
    replay: &mut Replay<'_>,
) -> Result<Option<Loaded>, PersistError> {
    let path = config.path();
    let manifest_path = path.join(Manifest::file_name(&config.filename));
    let text = match fs::read_to_string(&manifest_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(PersistError::ManifestUnreadable {
                path: manifest_path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    let manifest = Manifest::parse_lines(&text).map_err(|(line, error)| {
        let text = line
            .checked_sub(1)
            .and_then(|n| text.lines().nth(n))
            .unwrap_or_default();
        PersistError::ManifestInvalid {
            path: manifest_path.display().to_string(),
            line,
            text: text.to_string(),
            error,
        }
    })?;
    let files: Vec<_> = manifest.loaded().cloned().collect();
    let mut loaded = Loaded::default();
    for (n, file) in files.iter().enumerate() {
        let last = n + 1 == files.len();
        let file_path = path.join(&file.name);
        // Every listed file must be there, the last one too, as Redis checks before loading
        // any: a missing one would leave its commands out without a word.
        let bytes = match fs::read(&file_path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(PersistError::FileMissing {
                    file: file.name.clone(),
                    reason: super::failure::os_error_text(&e),
                });
            }
            Err(e) => {
                return Err(PersistError::FileUnreadable {
                    file: file.name.clone(),
                    reason: super::failure::os_error_text(&e),
                });
            }
        };
        tracing::info!(file = %file.name, "Reading the append only file");
        // An RDB preamble (a `.base.rdb` file, or an old single-file AOF): loaded as RDB, then
        // the commands after it, if any, replayed.
        let commands = if bytes.starts_with(b"REDIS") {
            let rdb_bytes = rdb_preamble(keyspace, databases, functions, &file.name, &bytes)?;
            &bytes[rdb_bytes..]
        } else {
            &bytes[..]
        };
        let truncated = replay(
            &file.name,
            commands,
            last && config.load_truncated,
            &mut loaded,
        )?
        .map(|valid| valid + (bytes.len() - commands.len()));
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
                return Err(PersistError::TruncateFailed {
                    file: file.name.clone(),
                    reason: e.to_string(),
                });
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

/// Loads the RDB at the start of `bytes` into the keyspace (keys that expired are kept: the
/// commands after it may refer to them, as Redis keeps them for an AOF preamble); returns the
/// bytes it took.
fn rdb_preamble(
    keyspace: &Keyspace,
    databases: usize,
    functions: &crate::script::function::Functions,
    name: &str,
    bytes: &[u8],
) -> Result<usize, PersistError> {
    let options = echomq_engine::rdb::file::LoadOptions {
        now_ms: keyspace.clock().now_ms(),
        databases,
        drop_expired: false,
        limits: keyspace.load_limits(),
    };
    let loaded = echomq_engine::rdb::file::read(bytes, &options).map_err(|error| {
        PersistError::PreambleCorrupt {
            file: name.to_string(),
            error,
        }
    })?;
    let used = loaded.bytes;
    functions
        .load_codes(&loaded.functions)
        .map_err(|what| PersistError::PreambleCorrupt {
            file: name.to_string(),
            error: echomq_engine::RdbError::Corrupt { offset: 0, what },
        })?;
    keyspace.run_all(|dbs, _| crate::persist::rdb::load::store(dbs, loaded.dbs));
    Ok(used)
}

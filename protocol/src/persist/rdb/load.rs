//! Loading `dump.rdb` at start, when the AOF is off (with `appendonly yes` the AOF wins, as in
//! Redis). The whole file is read and decoded before any key is stored, so a damaged file
//! stops the start and changes nothing; keys whose expiry has passed are dropped and counted
//! (`rdb_last_load_keys_expired`).

use std::fs;
use std::path::Path;
use std::time::Instant;

use echomq_engine::rdb::file::{self, LoadOptions};
use echomq_engine::{Db, Keyspace};

use super::Rdb;
use crate::error::PersistError;

/// What a load found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RdbLoaded {
    /// Keys stored.
    pub keys: u64,
    /// Keys dropped as expired.
    pub expired: u64,
}

/// Stores decoded databases into `dbs` (call under the keyspace lock).
pub(crate) fn store(dbs: &mut [Db], loaded: Vec<file::DbSnapshot>) {
    for (db, keys) in dbs.iter_mut().zip(loaded) {
        for (key, value, expiry) in keys {
            let name = key.clone();
            db.insert(&key, value);
            if expiry.is_some() {
                db.set_expiry(&name, expiry);
            }
        }
    }
}

/// Loads the RDB file at `path` into `keyspace` if it exists (the caller marked the server as
/// loading), recording what it loaded in `rdb`.
pub(crate) fn load(
    path: &Path,
    databases: usize,
    keyspace: &Keyspace,
    functions: &crate::script::function::Functions,
    rdb: &Rdb,
) -> Result<Option<RdbLoaded>, PersistError> {
    let data = match fs::read(path) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(PersistError::RdbUnreadable {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    let started = Instant::now();
    let options = LoadOptions {
        now_ms: keyspace.clock().now_ms(),
        databases,
        drop_expired: true,
        limits: keyspace.load_limits(),
    };
    let loaded = file::read(&data, &options).map_err(|error| PersistError::RdbCorrupt {
        path: path.display().to_string(),
        error,
    })?;
    drop(data);
    functions
        .load_codes(&loaded.functions)
        .map_err(|what| PersistError::RdbCorrupt {
            path: path.display().to_string(),
            error: echomq_engine::RdbError::Corrupt { offset: 0, what },
        })?;
    let found = RdbLoaded {
        keys: loaded.keys_loaded,
        expired: loaded.keys_expired,
    };
    let dirty = keyspace.run_all(|dbs, _| {
        store(dbs, loaded.dbs);
        dbs.iter().map(Db::dirty).sum()
    });
    rdb.loaded(found.keys, found.expired, dirty);
    tracing::info!(
        keys = found.keys,
        expired = found.expired,
        "DB loaded from disk: {:.3} seconds",
        started.elapsed().as_secs_f64()
    );
    Ok(Some(found))
}

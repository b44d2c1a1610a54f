//! Writing `dump.rdb`: SAVE (under the keyspace lock, from the keyspace itself, uncopied) and
//! BGSAVE (a copy taken under the lock, written on a thread; the automatic save points start
//! one too).
//!
//! The file is replaced atomically: written to `temp-<pid>.rdb` in `dir`, fsynced, renamed over
//! `dbfilename`, the directory fsynced. A failure removes the temp file and leaves the old
//! `dump.rdb` as it was.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use echomq_engine::rdb::file::{self, DbSnapshot, KeyRef, SaveOptions};
use echomq_engine::{Clock, Db};

use super::Rdb;
use crate::error::CommandError;
use crate::persist::synced::SyncedFile;

/// Where and how a file is written, from the settings.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// `dir`.
    pub dir: PathBuf,
    /// `dbfilename`.
    pub filename: String,
    /// How the bytes are written.
    pub options: SaveOptions,
}

/// Copies the keyspace (call under the lock).
pub(crate) fn snapshot(dbs: &[Db]) -> Vec<DbSnapshot> {
    crate::persist::aof::rewrite::snapshot(dbs)
}

/// The keyspace's keys as they are, borrowed (SAVE writes them under the lock, uncopied).
fn borrowed(dbs: &[Db]) -> Vec<Vec<KeyRef<'_>>> {
    dbs.iter()
        .map(|db| {
            db.keys()
                .filter_map(|key| Some((&key[..], db.get(key)?, db.expiry(key))))
                .collect()
        })
        .collect()
}

/// A copy's keys, borrowed.
fn borrowed_copy(dbs: &[DbSnapshot]) -> Vec<Vec<KeyRef<'_>>> {
    dbs.iter()
        .map(|keys| keys.iter().map(|(k, v, e)| (&k[..], v, *e)).collect())
        .collect()
}

/// Writes `dbs` to `target` atomically; returns the file's size.
pub(crate) fn write_atomically(target: &Target, dbs: &[Vec<KeyRef<'_>>]) -> Result<u64, String> {
    let temp = target.dir.join(format!("temp-{}.rdb", std::process::id()));
    let written = write_temp(&temp, target, dbs);
    let done = written.and_then(|size| {
        let path = target.dir.join(&target.filename);
        fs::rename(&temp, &path).map_err(|e| {
            format!(
                "Error moving temp DB file {} on the final destination {} (in server root dir {}): {e}",
                temp.display(),
                target.filename,
                target.dir.display()
            )
        })?;
        sync_dir(&target.dir)?;
        Ok(size)
    });
    if done.is_err() {
        let _ = fs::remove_file(&temp);
    }
    done
}

fn write_temp(temp: &Path, target: &Target, dbs: &[Vec<KeyRef<'_>>]) -> Result<u64, String> {
    let file = File::create(temp).map_err(|e| {
        format!(
            "Failed opening the temp RDB file {} (in server root dir {}) for saving: {e}",
            temp.display(),
            target.dir.display()
        )
    })?;
    let mut out = SyncedFile::new(&file);
    let size = file::write_refs(dbs, &target.options, &mut out)
        .and_then(|size| out.flush().map(|()| size))
        .map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    drop(out);
    file.sync_all()
        .map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    Ok(size)
}

fn sync_dir(dir: &Path) -> Result<(), String> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("Failed to fsync directory {}: {e}", dir.display()))
}

impl Rdb {
    /// SAVE: writes `dbs` (the keyspace's databases, under its lock) to `target` now.
    pub(crate) fn save(
        &self,
        dbs: &[Db],
        target: &Target,
        clock: &dyn Clock,
    ) -> Result<(), CommandError> {
        let dirty = dbs.iter().map(Db::dirty).sum();
        if !self.begin(false, clock.now_ms(), dirty) {
            return Err(CommandError::SaveInProgress);
        }
        let done = write_atomically(target, &borrowed(dbs));
        self.finish(done.is_ok(), clock.now_ms());
        match done {
            Ok(_) => {
                tracing::info!("DB saved on disk");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %e, "Error saving DB on disk");
                Err(CommandError::SaveFailed)
            }
        }
    }

    /// BGSAVE: copies `dbs` (under the keyspace lock) and writes the copy to `target` on a
    /// thread.
    pub(crate) fn bgsave(
        self: &Arc<Rdb>,
        dbs: &[Db],
        target: Target,
        clock: &Arc<dyn Clock>,
    ) -> Result<(), CommandError> {
        let now_ms = clock.now_ms();
        let dirty = dbs.iter().map(Db::dirty).sum();
        if !self.begin(true, now_ms, dirty) {
            return Err(CommandError::SaveInProgress);
        }
        let copy = snapshot(dbs);
        let rdb = Arc::clone(self);
        let clock = Arc::clone(clock);
        let spawned = std::thread::Builder::new()
            .name("rdb-bgsave".into())
            .spawn(move || {
                let done = write_atomically(&target, &borrowed_copy(&copy));
                drop(copy);
                match &done {
                    Ok(size) => {
                        tracing::info!(bytes = size, "Background saving terminated with success")
                    }
                    Err(e) => tracing::warn!(error = %e, "Background saving error"),
                }
                rdb.finish(done.is_ok(), clock.now_ms());
            });
        if let Err(e) = spawned {
            self.finish(false, now_ms);
            tracing::warn!(error = %e, "Can't save in background");
            return Err(CommandError::BgsaveNotStarted(e.to_string()));
        }
        tracing::info!("Background saving started");
        Ok(())
    }
}

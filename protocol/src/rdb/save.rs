//! Writing `dump.rdb`: SAVE (under the keyspace lock, from the keyspace itself, uncopied),
//! BGSAVE (a copy taken under the lock, written on a thread), and the automatic save points.
//!
//! The file is replaced atomically: written to `temp-<pid>.rdb` in `dir`, fsynced, renamed over
//! `dbfilename`, the directory fsynced. A failure removes the temp file and leaves the old
//! `dump.rdb` as it was.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use echomq_engine::Db;
use echomq_engine::rdb::file::{self, DbSnapshot, KeyRef, SaveOptions};

use crate::state::ServerState;
use crate::state::settings::Settings;

use super::Rdb;

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
    crate::aof::rewrite::snapshot(dbs)
}

/// The keyspace's keys as they are, borrowed (SAVE writes them under the lock, uncopied).
fn borrowed(dbs: &[Db]) -> Vec<Vec<KeyRef<'_>>> {
    dbs.iter()
        .map(|db| {
            db.keys()
                .filter_map(|key| Some((key, db.get(key)?, db.expiry(key))))
                .collect()
        })
        .collect()
}

/// A copy's keys, borrowed.
fn borrowed_copy(dbs: &[DbSnapshot]) -> Vec<Vec<KeyRef<'_>>> {
    dbs.iter()
        .map(|keys| keys.iter().map(|(k, v, e)| (k, v, *e)).collect())
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
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let size = file::write_refs(dbs, &target.options, &mut out)
        .and_then(|size| out.flush().map(|()| size))
        .map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    let file = out
        .into_inner()
        .map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    file.sync_all()
        .map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    Ok(size)
}

fn sync_dir(dir: &Path) -> Result<(), String> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("Failed to fsync directory {}: {e}", dir.display()))
}

impl ServerState {
    /// The RDB state.
    pub(crate) fn rdb(&self) -> &Arc<Rdb> {
        &self.rdb
    }

    /// Where a save writes now, and how.
    pub(crate) fn rdb_target(&self, aof_base: bool) -> Target {
        let settings = self.settings();
        Target {
            dir: settings.dir.clone().into(),
            filename: settings.dbfilename.clone(),
            options: self.save_options(&settings, aof_base),
        }
    }

    /// How a file is written under `settings` (taken by the caller: this takes no lock).
    pub(crate) fn save_options(&self, settings: &Settings, aof_base: bool) -> SaveOptions {
        let now_ms = self.clock().now_ms();
        SaveOptions {
            compress: settings.rdbcompression,
            checksum: settings.rdbchecksum,
            now_ms,
            redis_ver: crate::cmd::connection::REDIS_VERSION.into(),
            ctime_s: now_ms / 1000,
            used_mem: self.memory_used(),
            aof_base,
        }
    }

    /// SAVE: writes the file now, holding the keyspace lock (`dbs` are its databases).
    pub(crate) fn save(&self, dbs: &[Db]) -> Result<(), String> {
        let now_ms = self.clock().now_ms();
        let dirty = dbs.iter().map(Db::dirty).sum();
        if !self.rdb.begin(false, now_ms, dirty) {
            return Err("ERR Background save already in progress".into());
        }
        let target = self.rdb_target(false);
        let done = write_atomically(&target, &borrowed(dbs));
        self.rdb.finish(done.is_ok(), self.clock().now_ms());
        match done {
            Ok(_) => {
                tracing::info!("DB saved on disk");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %e, "Error saving DB on disk");
                Err("ERR".into())
            }
        }
    }

    /// BGSAVE: copies the keyspace (under the lock, `dbs`) and writes it on a thread.
    pub(crate) fn bgsave(&self, dbs: &[Db]) -> Result<(), String> {
        let now_ms = self.clock().now_ms();
        let dirty = dbs.iter().map(Db::dirty).sum();
        if !self.rdb.begin(true, now_ms, dirty) {
            return Err("ERR Background save already in progress".into());
        }
        let target = self.rdb_target(false);
        let copy = snapshot(dbs);
        let rdb = Arc::clone(&self.rdb);
        let clock = Arc::clone(self.clock());
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
            self.rdb.finish(false, now_ms);
            tracing::warn!(error = %e, "Can't save in background");
            return Err(format!("ERR Can't save in background: {e}"));
        }
        tracing::info!("Background saving started");
        Ok(())
    }

    /// The server cron's check: starts a BGSAVE when one was scheduled (`BGSAVE SCHEDULE`
    /// during a save) or a `save` point is due.
    pub(crate) fn rdb_cron(&self) {
        if self.rdb.take_scheduled() {
            let _ = self.keyspace().run_all(|dbs, _| self.bgsave(dbs));
            return;
        }
        let points = {
            let settings = self.settings();
            if settings.save.is_empty() {
                return;
            }
            super::save_points(&settings.save).unwrap_or_default()
        };
        let now_s = self.clock().now_ms() / 1000;
        let dirty = self.keyspace().dirty();
        if self.rdb.save_point_due(&points, now_s, dirty) {
            let _ = self.keyspace().run_all(|dbs, _| self.bgsave(dbs));
        }
    }

    /// At shutdown: with `save` points configured, waits for a running save and saves once
    /// more, as Redis does on SIGTERM (a failure is logged; the server stops either way);
    /// nothing after a SHUTDOWN command, which saved (or was told not to) itself.
    pub(crate) fn save_on_shutdown(&self) {
        if self.settings().save.is_empty() || self.loading() || self.rdb.final_save_skipped() {
            return;
        }
        self.rdb.wait_for_background_save();
        tracing::info!("Saving the final RDB snapshot before exiting.");
        if let Err(e) = self.keyspace().run_all(|dbs, _| self.save(dbs)) {
            tracing::warn!(error = %e, "Error trying to save the DB, can't exit.");
        }
    }

    /// The `-MISCONF` that refuses writes after a failed background save, if it applies now.
    pub(crate) fn rdb_write_refusal(&self) -> Option<&'static str> {
        if !self.rdb.last_failed() {
            return None;
        }
        let settings = self.settings();
        (settings.stop_writes_on_bgsave_error && !settings.save.is_empty())
            .then_some(super::MISCONF)
    }
}

//! Writing `dump.rdb`: SAVE (under the keyspace lock, from the keyspace itself, uncopied) and
//! BGSAVE (a forked child writes the keyspace as it was at the fork, `crate::persist::fork`;
//! the automatic save points start one too).
//!
//! The file is replaced atomically: written to `temp-<pid>.rdb` in `dir` (the pid of the
//! process writing it: the server's for SAVE, the child's for BGSAVE), fsynced, renamed over
//! `dbfilename`, the directory fsynced. A failure removes the temp file and leaves the old
//! `dump.rdb` as it was. A BGSAVE's file is renamed by the server once the child reported
//! success, never by the child: an orphaned child replaces nothing.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use echomq_engine::rdb::file::{self, SaveOptions};
use echomq_engine::{Clock, Db};

use super::Rdb;
use crate::error::CommandError;
use crate::persist::fork::Outcome;
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

/// The temp file the process `pid` writes a save to.
fn temp_path(target: &Target, pid: u32) -> PathBuf {
    target.dir.join(format!("temp-{pid}.rdb"))
}

/// Writes `dbs` to `target` atomically; returns the file's size.
pub(crate) fn write_atomically(target: &Target, dbs: &[Db]) -> Result<u64, String> {
    let temp = temp_path(target, std::process::id());
    let done = write_temp(&temp, target, dbs, &AtomicU64::new(0))
        .and_then(|size| install(&temp, target).map(|()| size));
    if done.is_err() {
        let _ = fs::remove_file(&temp);
    }
    done
}

/// Renames the written `temp` over `dbfilename` and fsyncs the directory.
fn install(temp: &Path, target: &Target) -> Result<(), String> {
    let path = target.dir.join(&target.filename);
    fs::rename(temp, &path).map_err(|e| {
        format!(
            "Error moving temp DB file {} on the final destination {} (in server root dir {}): {e}",
            temp.display(),
            target.filename,
            target.dir.display()
        )
    })?;
    sync_dir(&target.dir)
}

/// Writes `dbs` as they are (walked, nothing copied) to `temp` and fsyncs it: SAVE's writer,
/// and a BGSAVE child's.
fn write_temp(temp: &Path, target: &Target, dbs: &[Db], saved: &AtomicU64) -> Result<u64, String> {
    let file = File::create(temp).map_err(|e| {
        format!(
            "Failed opening the temp RDB file {} (in server root dir {}) for saving: {e}",
            temp.display(),
            target.dir.display()
        )
    })?;
    let mut out = SyncedFile::new(&file);
    let size = file::write_dbs(dbs, &target.options, &mut out, saved)
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
        let done = write_atomically(target, dbs);
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

    /// BGSAVE: forks (under the keyspace lock, `dbs` its databases); the child writes the
    /// temp file from its image of `dbs`, and a thread of the server waits for it, then
    /// installs the file and records the outcome.
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
        let keys = dbs.iter().map(|db| db.len() as u64).sum();
        let forked = self.fork.spawn(
            keys,
            |pid| temp_path(&target, pid),
            |saved| {
                let temp = temp_path(&target, std::process::id());
                write_temp(&temp, &target, dbs, saved).map_err(|_| ())
            },
        );
        let child = match forked {
            Ok(child) => child,
            Err(e) => {
                self.finish(false, now_ms);
                tracing::warn!(error = %e, "Can't save in background: fork");
                return Err(CommandError::BgsaveNotStarted(format!("fork: {e}")));
            }
        };
        let rdb = Arc::clone(self);
        let clock = Arc::clone(clock);
        let reaper = std::thread::Builder::new()
            .name("rdb-bgsave".into())
            .spawn(move || {
                let pid = child.pid();
                let outcome = rdb.fork.wait(child);
                rdb.child_done(outcome, &temp_path(&target, pid), &target, clock.now_ms());
            });
        if let Err(e) = reaper {
            // The child is gone with the closure's pipe; it must not outlive its slot.
            self.fork.kill_unreaped();
            self.finish(false, now_ms);
            tracing::warn!(error = %e, "Can't save in background");
            return Err(CommandError::BgsaveNotStarted(e.to_string()));
        }
        tracing::info!("Background saving started");
        Ok(())
    }

    /// A BGSAVE's child ended as `outcome`, its file at `temp`: installs it or removes it,
    /// and records the outcome as Redis's `backgroundSaveDoneHandler` does.
    fn child_done(&self, outcome: Outcome, temp: &Path, target: &Target, now_ms: u64) {
        let installed = match outcome {
            Outcome::Done { bytes } => install(temp, target).map(|()| bytes),
            Outcome::Failed => Err("Background saving error".to_string()),
            Outcome::Aborted | Outcome::Signaled(_) => Err(String::new()),
        };
        if installed.is_err() {
            let _ = fs::remove_file(temp);
        }
        match (&installed, outcome) {
            (Ok(bytes), _) => {
                tracing::info!(bytes, "Background saving terminated with success");
                self.finish(true, now_ms);
            }
            (Err(_), Outcome::Aborted) => {
                tracing::warn!("Background saving terminated by signal 9");
                self.abort(now_ms);
            }
            (Err(_), Outcome::Signaled(signal)) => {
                tracing::warn!("Background saving terminated by signal {signal}");
                self.finish(false, now_ms);
            }
            (Err(e), _) => {
                tracing::warn!(error = %e, "Background saving error");
                self.finish(false, now_ms);
            }
        }
    }
}

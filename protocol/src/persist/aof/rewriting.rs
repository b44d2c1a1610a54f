//! A rewrite's steps on the files: under the keyspace lock, the pending buffer goes to the old
//! incremental file, a new one is created and listed in the manifest, and the server forks
//! (`crate::persist::fork`); the child writes the new base from its image of the keyspace (as
//! commands, or as an RDB file with `aof-use-rdb-preamble`) to
//! `temp-rewriteaof-bg-<child pid>.aof` and fsyncs it; once it reported success, a thread of
//! the server renames it, swaps the manifest atomically to the new base and the incremental
//! files from the switch on, and deletes the files it no longer lists.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use echomq_engine::Db;

use super::manifest::{AofFile, Kind, Manifest};
use super::{Aof, AofConfig, io_error, rewrite, write_atomically};
use crate::error::PersistError;
use crate::persist::fork::Outcome;

impl Aof {
    /// Starts a rewrite (call under the keyspace lock): switches to a new incremental file and
    /// forks a child that writes the new base; a thread waits for it and installs the base.
    /// Refused while one runs.
    pub fn rewrite(self: &Arc<Self>, dbs: &[Db], config: &AofConfig) -> Result<(), PersistError> {
        if self.rewriting.swap(true, Ordering::AcqRel) {
            return Err(PersistError::RewriteInProgress);
        }
        let started = self.switch_incr(config);
        let (path, new_incr_seq) = match started {
            Ok(found) => found,
            Err(e) => {
                self.rewriting.store(false, Ordering::Release);
                self.bgrewrite_failed.store(true, Ordering::Release);
                tracing::warn!(error = %e, "cannot start the AOF rewrite");
                return Err(e);
            }
        };
        let temp_of = |pid: u32| path.join(format!("temp-rewriteaof-bg-{pid}.aof"));
        let keys = dbs.iter().map(|db| db.len() as u64).sum();
        let forked = self.fork.spawn(keys, temp_of, |saved| {
            write_base_file(&temp_of(std::process::id()), config, dbs, saved).map_err(|_| ())
        });
        let child = match forked {
            Ok(child) => child,
            Err(e) => {
                self.rewriting.store(false, Ordering::Release);
                self.bgrewrite_failed.store(true, Ordering::Release);
                tracing::warn!(error = %e, "Can't rewrite append only file in background: fork");
                return Err(PersistError::RewriteNotStarted(format!("fork: {e}")));
            }
        };
        let aof = Arc::clone(self);
        let config = config.clone();
        let reaper_path = path.clone();
        let spawned = std::thread::Builder::new()
            .name("aof-rewrite".into())
            .spawn(move || {
                let path = reaper_path;
                let temp = path.join(format!("temp-rewriteaof-bg-{}.aof", child.pid()));
                let outcome = aof.fork.wait(child);
                let done = match outcome {
                    Outcome::Done { .. } => aof.install_base(&path, &config, &temp, new_incr_seq),
                    Outcome::Failed => Err(PersistError::RewriteNotStarted(
                        "the rewrite child failed".into(),
                    )),
                    Outcome::Aborted | Outcome::Signaled(_) => Err(
                        PersistError::RewriteNotStarted("the rewrite child was killed".into()),
                    ),
                };
                if done.is_err() {
                    let _ = fs::remove_file(&temp);
                }
                // As Redis's `killAppendOnlyChild`: a rewrite the server stopped changes no
                // status.
                if outcome != Outcome::Aborted {
                    aof.bgrewrite_failed.store(done.is_err(), Ordering::Release);
                }
                match done {
                    Ok(()) => tracing::info!("Background AOF rewrite finished successfully"),
                    Err(e) => tracing::warn!(error = %e, "Background AOF rewrite failed"),
                }
                aof.rewriting.store(false, Ordering::Release);
            });
        if let Err(e) = spawned {
            self.fork.kill_unreaped();
            self.rewriting.store(false, Ordering::Release);
            self.bgrewrite_failed.store(true, Ordering::Release);
            return Err(PersistError::RewriteNotStarted(e.to_string()));
        }
        self.rewrite_scheduled.store(false, Ordering::Release);
        tracing::info!("Background append only file rewriting started");
        Ok(())
    }

    /// Writes what is pending to the current file, opens the next incremental file and lists
    /// it in the manifest. Returns the AOF directory and the new file's sequence number.
    fn switch_incr(&self, config: &AofConfig) -> Result<(PathBuf, u64), PersistError> {
        let path = config.path();
        fs::create_dir_all(&path).map_err(|e| io_error("cannot create", &path, e))?;
        if self.enabled() {
            self.commit().map_err(PersistError::WriteFailed)?;
        }
        let mut files = self.files.lock();
        if files.path != path || files.filename != config.filename {
            // First start, or a new place: begin from what is there (a manifest left by an
            // earlier run is continued).
            let manifest_path = path.join(Manifest::file_name(&config.filename));
            files.manifest = match fs::read_to_string(&manifest_path) {
                Ok(text) => Manifest::parse(&text)?,
                Err(_) => Manifest::default(),
            };
            files.path = path.clone();
            files.filename = config.filename.clone();
        }
        let seq = files.manifest.next_incr_seq();
        let name = Manifest::incr_name(&config.filename, seq);
        let incr_path = path.join(&name);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&incr_path)
            .map_err(|e| io_error("cannot open", &incr_path, e))?;
        let mut manifest = files.manifest.clone();
        manifest.incrs.push(AofFile {
            name,
            seq,
            kind: Kind::Incr,
        });
        write_atomically(
            &path,
            &Manifest::file_name(&config.filename),
            manifest.format().as_bytes(),
        )?;
        if let Some(old) = files.incr.replace(file) {
            let _ = old.sync_data();
        }
        files.manifest = manifest;
        files.incr_len = 0;
        files.unsynced = false;
        self.buffer.pending.lock().db = None;
        Ok((path, seq))
    }

    /// Kills a running rewrite's child (Redis's `killAppendOnlyChild`) and waits until its
    /// end is recorded and its temp file removed. Whether one was killed.
    /// A first rewrite (no base yet: it holds everything written before the AOF was turned on)
    /// is waited for instead, as Redis will not stop while it writes its initial AOF.
    pub(crate) fn kill_child(&self) -> bool {
        let first = self.files.lock().manifest.base.is_none();
        if first || !self.fork.kill() {
            return false;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self.rewriting() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        true
    }

    /// The reaping thread, once the child wrote `temp`: the new base installed, then the
    /// manifest swap.
    fn install_base(
        &self,
        path: &Path,
        config: &AofConfig,
        temp: &Path,
        new_incr_seq: u64,
    ) -> Result<(), PersistError> {
        let base_size = fs::metadata(temp).map_or(0, |m| m.len());

        let mut files = self.files.lock();
        let seq = files.manifest.next_base_seq();
        let name = if config.rdb_preamble.is_some() {
            Manifest::rdb_base_name(&config.filename, seq)
        } else {
            Manifest::base_name(&config.filename, seq)
        };
        fs::rename(temp, path.join(&name)).map_err(|e| io_error("cannot rename", temp, e))?;
        let mut manifest = files.manifest.clone();
        let mut obsolete: Vec<String> = manifest.base.take().into_iter().map(|b| b.name).collect();
        obsolete.extend(manifest.history.drain(..).map(|h| h.name));
        let (old, kept): (Vec<AofFile>, Vec<AofFile>) =
            manifest.incrs.drain(..).partition(|f| f.seq < new_incr_seq);
        obsolete.extend(old.into_iter().map(|f| f.name));
        manifest.incrs = kept;
        manifest.base = Some(AofFile {
            name,
            seq,
            kind: Kind::Base,
        });
        write_atomically(
            path,
            &Manifest::file_name(&config.filename),
            manifest.format().as_bytes(),
        )?;
        files.manifest = manifest;
        let incr_size: u64 = files
            .manifest
            .incrs
            .iter()
            .filter_map(|f| fs::metadata(path.join(&f.name)).ok())
            .map(|m| m.len())
            .sum();
        drop(files);
        for name in obsolete {
            let _ = fs::remove_file(path.join(name));
        }
        self.base_size.store(base_size, Ordering::Relaxed);
        self.incr_size.store(incr_size, Ordering::Relaxed);
        self.rewrite_base_size
            .store(base_size + incr_size, Ordering::Relaxed);
        Ok(())
    }
}

/// The child's work: the new base written to `temp` from `dbs` and fsynced.
fn write_base_file(
    temp: &Path,
    config: &AofConfig,
    dbs: &[Db],
    saved: &std::sync::atomic::AtomicU64,
) -> Result<u64, PersistError> {
    let file = File::create(temp).map_err(|e| io_error("cannot create", temp, e))?;
    {
        let mut out = crate::persist::synced::SyncedFile::new(&file);
        match &config.rdb_preamble {
            Some(options) => {
                let options = echomq_engine::rdb::file::SaveOptions {
                    aof_base: true,
                    ..options.clone()
                };
                echomq_engine::rdb::file::write_dbs(dbs, &options, &mut out, saved).map(|_| ())
            }
            None => rewrite::write_base(
                dbs,
                &config.functions,
                config.idmp,
                config.key_save_delay_us,
                &mut out,
                saved,
            ),
        }
        .and_then(|()| out.flush())
        .map_err(|e| io_error("cannot write", temp, e))?;
    }
    file.sync_all()
        .map_err(|e| io_error("cannot fsync", temp, e))?;
    Ok(file.metadata().map_or(0, |m| m.len()))
}

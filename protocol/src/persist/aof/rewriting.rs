//! A rewrite's steps on the files: under the keyspace lock, the pending buffer goes to the old
//! incremental file and a new one is created and listed in the manifest; on a thread, the new
//! base is written from the copy (as commands, or as an RDB file with `aof-use-rdb-preamble`),
//! fsynced and renamed; then the manifest is swapped atomically to the new base and the
//! incremental files from the switch on, and the files it no longer lists are deleted.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use echomq_engine::Db;

use super::manifest::{AofFile, Kind, Manifest};
use super::{Aof, AofConfig, io_error, rewrite, write_atomically};
use crate::error::PersistError;

impl Aof {
    /// Starts a rewrite (call under the keyspace lock): switches to a new incremental file,
    /// copies the keyspace, and writes the new base on a thread. Refused while one runs.
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
        let snapshot = rewrite::snapshot(dbs);
        let aof = Arc::clone(self);
        let config = config.clone();
        let spawned = std::thread::Builder::new()
            .name("aof-rewrite".into())
            .spawn(move || {
                let done = aof.write_base(&path, &config, &snapshot, new_incr_seq);
                aof.bgrewrite_failed.store(done.is_err(), Ordering::Release);
                match done {
                    Ok(()) => tracing::info!("Background AOF rewrite finished successfully"),
                    Err(e) => tracing::warn!(error = %e, "Background AOF rewrite failed"),
                }
                aof.rewriting.store(false, Ordering::Release);
            });
        if let Err(e) = spawned {
            self.rewriting.store(false, Ordering::Release);
            self.bgrewrite_failed.store(true, Ordering::Release);
            return Err(PersistError::RewriteNotStarted(e.to_string()));
        }
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

    /// The rewrite thread: the base from `snapshot`, then the manifest swap.
    fn write_base(
        &self,
        path: &Path,
        config: &AofConfig,
        snapshot: &rewrite::Snapshot,
        new_incr_seq: u64,
    ) -> Result<(), PersistError> {
        let temp = path.join(format!("temp-rewriteaof-bg-{}.aof", std::process::id()));
        let file = File::create(&temp).map_err(|e| io_error("cannot create", &temp, e))?;
        {
            let mut out = crate::persist::synced::SyncedFile::new(&file);
            match &config.rdb_preamble {
                Some(options) => {
                    let options = echomq_engine::rdb::file::SaveOptions {
                        aof_base: true,
                        ..options.clone()
                    };
                    echomq_engine::rdb::file::write(snapshot, &options, &mut out).map(|_| ())
                }
                None => rewrite::write_base(snapshot, &config.functions, config.idmp, &mut out),
            }
            .and_then(|()| out.flush())
            .map_err(|e| io_error("cannot write", &temp, e))?;
        }
        file.sync_all()
            .map_err(|e| io_error("cannot fsync", &temp, e))?;
        let base_size = file.metadata().map_or(0, |m| m.len());
        let mut files = self.files.lock();
        let seq = files.manifest.next_base_seq();
        let name = if config.rdb_preamble.is_some() {
            Manifest::rdb_base_name(&config.filename, seq)
        } else {
            Manifest::base_name(&config.filename, seq)
        };
        fs::rename(&temp, path.join(&name)).map_err(|e| io_error("cannot rename", &temp, e))?;
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

//! The append-only file, in Redis 7+'s multi-part layout (see [`manifest`]), and its one
//! commit pipeline.
//!
//! Commands run under the keyspace lock and leave their propagated form in the [`Db`]; the
//! keyspace hands each execution unit's forms to this module's [`Buffer`] (the
//! [`PropagationSink`]) while it still holds the lock, so the buffer is in execution order.
//! Encoding is all that happens there. [`Aof::commit`] then writes the buffer to the current
//! incremental file outside the lock, for every client whose writes it holds at once: a
//! connection calls it before it sends replies, so no reply goes out before the write it
//! acknowledges is in the file (Redis does this before each event-loop sleep). With
//! `appendfsync always` the connection then waits for the group syncer's fsync to cover its
//! bytes ([`group_sync`]): one fsync for every connection that wrote meanwhile. With `everysec` a background thread fsyncs once a second; with `no`
//! the OS decides.
//!
//! A rewrite (BGREWRITEAOF, `CONFIG SET appendonly yes`, the automatic one) copies the
//! keyspace (and writes the base as commands, or with `aof-use-rdb-preamble yes` as an RDB
//! file, `.base.rdb`, as Redis does) and switches to a new incremental file under the lock (the only file I/O made
//! under it: the pending buffer goes to the old file, the new one is created and listed in the
//! manifest), then writes the new base on a thread while writes go on into the new file, and
//! swaps the manifest atomically (write a temp file, rename, fsync the directory) to the new
//! base and the incremental files from the switch on. A crash at any point leaves a manifest
//! that loads everything acknowledged.
//!
//! Invariants: the files the manifest lists, loaded in order, replay every command whose
//! commit returned; a failed write keeps its bytes pending (retried by the next commit) and
//! sets `aof_last_write_status:err`, during which write commands get `-MISCONF` (see
//! [`failure`], which also says what `appendfsync always` does instead).
//!
//! [`Db`]: echomq_engine::Db

pub(crate) mod codec;
pub(crate) mod failure;
mod group_sync;
pub(crate) mod load;
pub(crate) mod manifest;
pub(crate) mod rewrite;
mod rewriting;

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use echomq_engine::config::IdmpConfig;
use echomq_engine::{Db, Keyspace, PropagationSink};
use parking_lot::Mutex;

use crate::error::{AofWriteError, PersistError};
use manifest::{AofFile, Kind, Manifest};

/// `appendfsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Fsync {
    /// Fsync before replying.
    Always,
    /// Fsync once a second.
    #[default]
    EverySec,
    /// Leave it to the OS.
    No,
}

impl Fsync {
    /// Parses a CONFIG value.
    pub fn parse(value: &str) -> Option<Fsync> {
        match value.to_ascii_lowercase().as_str() {
            "always" => Some(Fsync::Always),
            "everysec" => Some(Fsync::EverySec),
            "no" => Some(Fsync::No),
            _ => None,
        }
    }

    /// The CONFIG value.
    pub fn name(self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::EverySec => "everysec",
            Fsync::No => "no",
        }
    }
}

/// Where the AOF lives and how it is written, from the settings.
#[derive(Debug, Clone)]
pub(crate) struct AofConfig {
    /// `dir`.
    pub dir: PathBuf,
    /// `appenddirname`.
    pub dirname: String,
    /// `appendfilename`.
    pub filename: String,
    /// `appendfsync`.
    pub fsync: Fsync,
    /// `aof-load-truncated`.
    pub load_truncated: bool,
    /// The IDMP bounds of new streams (a rewrite writes XCFGSET for streams that differ).
    pub idmp: IdmpConfig,
    /// The function libraries' codes (a command base loads each with FUNCTION LOAD).
    pub functions: Vec<bytes::Bytes>,
    /// `aof-use-rdb-preamble`: a rewrite writes the base as an RDB file with these options
    /// (`aof-base` set), named `.base.rdb`.
    pub rdb_preamble: Option<echomq_engine::rdb::file::SaveOptions>,
    /// `rdb-key-save-delay`: a rewrite's child pauses after each key (a testing knob).
    pub key_save_delay_us: i64,
}

impl AofConfig {
    /// The AOF directory.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.dirname)
    }
}

/// What a connection waits for before its replies go out ([`Aof::commit_for_reply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Nothing: written, and durable as the policy asks.
    Done,
    /// The fsync of the bytes up to this target ([`Aof::wait_durable`]).
    Bytes(u64),
    /// A group round that covers everything fed up to this offset ([`Aof::wait_round`]). The
    /// connection yields before it waits: the offset is its own bytes' end, taken before the
    /// others feed, so a round already under way for them may cover it and it need not lead
    /// one (measured: taking the offset after the yield runs at 0.8x instead of 1.0x).
    Round(u64),
}

/// The pending, encoded propagation: fed under the keyspace lock, taken by [`Aof::commit`].
///
/// Every byte fed has an offset in the stream of everything fed since the server started:
/// `fed` is the end of what was fed, so `fed - bytes.len()` is the end of what was taken out
/// and written (a failed write puts its bytes back). Under the files lock that is the end of
/// what the files hold, so an fsync made then covers every offset below it.
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    pending: Mutex<Pending>,
    /// The offset of the end of what was fed (changed only under the `pending` lock).
    fed: AtomicU64,
}

#[derive(Debug, Default)]
struct Pending {
    bytes: Vec<u8>,
    /// The database the file's commands run in now (`None`: a SELECT is due).
    db: Option<usize>,
}

impl Buffer {
    /// The end of everything fed so far.
    pub(crate) fn fed(&self) -> u64 {
        self.fed.load(Ordering::Acquire)
    }
}

impl PropagationSink for Buffer {
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        let mut pending = self.pending.lock();
        let before = pending.bytes.len();
        let wrap = commands.len() > 1;
        // MULTI goes before any SELECT, which the first command brings inside the
        // transaction, as Redis propagates MULTI with no database.
        if wrap {
            codec::encode(&[b"MULTI"], &mut pending.bytes);
        }
        for (db, argv) in &commands {
            if pending.db != Some(*db) {
                let select = [Bytes::from_static(b"SELECT"), Bytes::from(db.to_string())];
                codec::encode(&select, &mut pending.bytes);
                pending.db = Some(*db);
            }
            codec::encode(argv, &mut pending.bytes);
        }
        if wrap {
            codec::encode(&[b"EXEC"], &mut pending.bytes);
        }
        self.fed
            .fetch_add((pending.bytes.len() - before) as u64, Ordering::AcqRel);
    }
}

/// The open files.
#[derive(Debug, Default)]
struct Files {
    /// The AOF directory and file name prefix in use.
    path: PathBuf,
    filename: String,
    manifest: Manifest,
    /// The incremental file commands are appended to.
    incr: Option<File>,
    /// The length of `incr` that holds whole committed commands.
    incr_len: u64,
    /// Bytes written since the last fsync.
    unsynced: bool,
}

/// The AOF: buffer, files, and the figures INFO reports.
#[derive(Debug, Default)]
pub(crate) struct Aof {
    buffer: Arc<Buffer>,
    files: Mutex<Files>,
    /// `aof_enabled`: commands are being appended.
    enabled: AtomicBool,
    /// `aof_rewrite_in_progress`.
    rewriting: AtomicBool,
    /// `aof_rewrite_scheduled`: a rewrite asked for while another child ran (or inside EXEC)
    /// waits for the cron to start it; cleared when a rewrite starts.
    rewrite_scheduled: AtomicBool,
    /// `aof_last_bgrewrite_status` is `err`.
    bgrewrite_failed: AtomicBool,
    /// `aof_last_write_status` is `err`; the error is in `write_error`.
    write_failed: AtomicBool,
    write_error: Mutex<String>,
    /// Set, with Redis's log line, when a write or fsync failed under `appendfsync always`:
    /// the server must stop ([`failure`]).
    fatal: Mutex<Option<String>>,
    /// `aof_base_size`, and the bytes in the incremental files.
    base_size: AtomicU64,
    incr_size: AtomicU64,
    /// `aof_current_size` at the last rewrite (for auto-aof-rewrite-percentage).
    rewrite_base_size: AtomicU64,
    /// `appendfsync`, as 0 always, 1 everysec, 2 no.
    fsync: AtomicU64,
    fsync_thread: AtomicBool,
    /// `appendfsync always`'s group commit ([`group_sync`]).
    group: group_sync::GroupSync,
    /// The rewrite's child (INFO's `aof_last_cow_size`, the fork figures).
    pub(crate) fork: crate::persist::fork::Slot,
}

fn io_error(what: &'static str, path: &Path, e: std::io::Error) -> PersistError {
    PersistError::Io {
        what,
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Writes `text` to `path` atomically: a temp file, fsynced, renamed over it, the directory
/// fsynced.
fn write_atomically(dir: &Path, name: &str, text: &[u8]) -> Result<(), PersistError> {
    let temp = dir.join(format!("temp-{name}"));
    let target = dir.join(name);
    let mut file = File::create(&temp).map_err(|e| io_error("cannot create", &temp, e))?;
    file.write_all(text)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("cannot write", &temp, e))?;
    fs::rename(&temp, &target).map_err(|e| io_error("cannot rename", &temp, e))?;
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> Result<(), PersistError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("cannot fsync", dir, e))
}

impl Aof {
    /// Whether commands are appended (`aof_enabled`).
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Whether a rewrite runs.
    pub fn rewriting(&self) -> bool {
        self.rewriting.load(Ordering::Acquire)
    }

    /// Whether a rewrite waits to start (`aof_rewrite_scheduled`).
    pub fn rewrite_scheduled(&self) -> bool {
        self.rewrite_scheduled.load(Ordering::Acquire)
    }

    /// Notes a rewrite to start once no child runs.
    pub fn schedule_rewrite(&self) {
        self.rewrite_scheduled.store(true, Ordering::Release);
    }

    /// Whether the last rewrite failed.
    pub fn bgrewrite_failed(&self) -> bool {
        self.bgrewrite_failed.load(Ordering::Acquire)
    }

    /// `aof_base_size`.
    pub fn base_size(&self) -> u64 {
        self.base_size.load(Ordering::Relaxed)
    }

    /// `aof_current_size`.
    pub fn current_size(&self) -> u64 {
        self.base_size() + self.incr_size.load(Ordering::Relaxed)
    }

    /// The size the last rewrite left (`aof_current_size` then).
    pub fn rewrite_base_size(&self) -> u64 {
        self.rewrite_base_size.load(Ordering::Relaxed)
    }

    /// Sets `appendfsync`.
    pub fn set_fsync(&self, fsync: Fsync) {
        let n = match fsync {
            Fsync::Always => 0,
            Fsync::EverySec => 1,
            Fsync::No => 2,
        };
        self.fsync.store(n, Ordering::Release);
    }

    fn fsync_policy(&self) -> Fsync {
        match self.fsync.load(Ordering::Acquire) {
            0 => Fsync::Always,
            1 => Fsync::EverySec,
            _ => Fsync::No,
        }
    }

    /// Starts appending (call under the keyspace lock, `dbs` being its databases): continues
    /// the AOF the manifest in the directory lists, or, with none, writes a first base by a
    /// rewrite. Installs the propagation sink.
    pub fn start(
        self: &Arc<Self>,
        keyspace: &Keyspace,
        dbs: &[Db],
        config: &AofConfig,
    ) -> Result<(), PersistError> {
        self.set_fsync(config.fsync);
        let path = config.path();
        let manifest_path = path.join(Manifest::file_name(&config.filename));
        if manifest_path.exists() {
            let text = fs::read_to_string(&manifest_path)
                .map_err(|e| io_error("cannot read", &manifest_path, e))?;
            let manifest = Manifest::parse(&text)?;
            let mut files = self.files.lock();
            files.path = path.clone();
            files.filename = config.filename.clone();
            files.manifest = manifest;
            let base_size = files
                .manifest
                .base
                .as_ref()
                .and_then(|b| fs::metadata(path.join(&b.name)).ok())
                .map_or(0, |m| m.len());
            let incr_size: u64 = files
                .manifest
                .incrs
                .iter()
                .filter_map(|f| fs::metadata(path.join(&f.name)).ok())
                .map(|m| m.len())
                .sum();
            self.base_size.store(base_size, Ordering::Relaxed);
            self.incr_size.store(incr_size, Ordering::Relaxed);
            self.rewrite_base_size
                .store(base_size + incr_size, Ordering::Relaxed);
            let last = match files.manifest.incrs.last() {
                Some(last) => last.name.clone(),
                None => {
                    let seq = files.manifest.next_incr_seq();
                    let name = Manifest::incr_name(&config.filename, seq);
                    files.manifest.incrs.push(AofFile {
                        name: name.clone(),
                        seq,
                        kind: Kind::Incr,
                    });
                    write_atomically(
                        &path,
                        &Manifest::file_name(&config.filename),
                        files.manifest.format().as_bytes(),
                    )?;
                    name
                }
            };
            let incr_path = path.join(&last);
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&incr_path)
                .map_err(|e| io_error("cannot open", &incr_path, e))?;
            files.incr_len = file.metadata().map_or(0, |m| m.len());
            files.incr = Some(file);
            self.buffer.pending.lock().db = None;
            drop(files);
            self.enable(keyspace);
            return Ok(());
        }
        self.rewrite(dbs, config)?;
        self.enable(keyspace);
        Ok(())
    }

    /// Starts appending to the incremental file a rewrite just opened (`CONFIG SET
    /// appendonly yes`).
    pub fn enable_appending(self: &Arc<Self>, keyspace: &Keyspace) {
        self.enable(keyspace);
    }

    fn enable(self: &Arc<Self>, keyspace: &Keyspace) {
        self.enabled.store(true, Ordering::Release);
        let sink: Arc<dyn PropagationSink> = self.buffer.clone();
        keyspace.set_propagation_sink(Some(sink));
        self.group.start(Arc::downgrade(self));
        if !self.fsync_thread.swap(true, Ordering::AcqRel) {
            let aof = Arc::downgrade(self);
            let spawned = std::thread::Builder::new()
                .name("aof-fsync".into())
                .spawn(move || {
                    while let Some(aof) = aof.upgrade() {
                        if aof.enabled() && aof.fsync_policy() == Fsync::EverySec {
                            aof.sync_now();
                        }
                        drop(aof);
                        std::thread::sleep(Duration::from_secs(1));
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "cannot start the AOF fsync thread");
                self.fsync_thread.store(false, Ordering::Release);
            }
        }
    }

    /// Stops appending (`CONFIG SET appendonly no`): what is pending is written, the sink
    /// removed, the file closed.
    pub fn stop(&self, keyspace: &Keyspace) {
        keyspace.set_propagation_sink(None);
        let _ = self.commit();
        self.enabled.store(false, Ordering::Release);
        self.rewrite_scheduled.store(false, Ordering::Release);
        let mut files = self.files.lock();
        if let Some(file) = files.incr.take() {
            let _ = file.sync_data();
        }
    }

    /// Writes what is pending and fsyncs it (SHUTDOWN, as Redis's `finishShutdown` calls
    /// `flushAppendOnlyFile(1)` and fsync); a failure is recorded as any write's is.
    pub(crate) fn flush_for_shutdown(&self) {
        if !self.enabled() {
            return;
        }
        if let Err(e) = self.commit() {
            tracing::warn!(error = %e, "Fail to write the AOF file at shutdown.");
        }
        self.sync_now();
    }

    /// Fsyncs the incremental file if it has unsynced writes (the `everysec` thread).
    fn sync_now(&self) {
        let mut files = self.files.lock();
        if files.unsynced
            && let Some(file) = &files.incr
        {
            match file.sync_data() {
                Ok(()) => {
                    files.unsynced = false;
                    // A failed fsync's refusal ends here, unless a write still fails.
                    if self.buffer.pending.lock().bytes.is_empty() {
                        self.write_succeeded();
                    }
                }
                Err(e) => self.fail_fsync(&e),
            }
        }
    }

    /// Whether everything appended so far is written and fsynced (Redis's `fsynced_reploff`
    /// caught up with the writes, for WAITAOF).
    pub fn synced(&self) -> bool {
        let files = self.files.lock();
        self.enabled() && !files.unsynced && self.buffer.pending.lock().bytes.is_empty()
    }

    /// Writes and fsyncs everything appended so far, unless `appendfsync no` (which never
    /// fsyncs): WAITAOF's local acknowledgement, sooner than the `everysec` thread would give
    /// it. Returns whether everything is fsynced now.
    pub fn sync_all(&self) -> bool {
        if self.fsync_policy() != Fsync::No && self.commit().is_ok() {
            self.sync_now();
        }
        self.synced()
    }

    /// Writes everything pending, for every client whose writes it holds. With `always` it
    /// does not fsync: it returns the target to [`Aof::wait_durable`] for before replying
    /// (one fsync covers every connection that wrote meanwhile). On failure the bytes stay
    /// pending and the error is returned.
    pub fn commit(&self) -> Result<Option<u64>, AofWriteError> {
        self.write_pending(true)
    }

    /// A connection's commit before its replies go out. Under `always`, with the group
    /// syncer running, the write too is left to the syncer, so one write and one fsync serve
    /// every connection that committed meanwhile (as Redis's `beforeSleep` writes and fsyncs
    /// once per event-loop turn): returns the round to [`Aof::wait_round`] for. Otherwise
    /// [`Aof::commit`], with its byte target for [`Aof::wait_durable`].
    pub fn commit_for_reply(&self) -> Result<Commit, AofWriteError> {
        if self.enabled() && self.fsync_policy() == Fsync::Always && self.group.running() {
            return Ok(Commit::Round(self.buffer.fed()));
        }
        Ok(self.commit()?.map_or(Commit::Done, Commit::Bytes))
    }

    /// Whether a commit now would write bytes itself (`everysec`, `no`): then it pays to let
    /// every connection ready to run feed first, so one write carries them all. (Under
    /// `always` the connection yields after taking its offset instead, see
    /// [`Commit::Round`].)
    pub(crate) fn commit_would_write(&self) -> bool {
        self.enabled()
            && self.fsync_policy() != Fsync::Always
            && !self.buffer.pending.lock().bytes.is_empty()
    }

    /// The syncer's write: everything pending, without asking for another fsync.
    fn write_for_group(&self) -> Result<(), AofWriteError> {
        self.write_pending(false).map(|_| ())
    }

    /// [`Aof::commit`]; `ask` whether, under `always`, the write asks the syncer for an fsync.
    fn write_pending(&self, ask: bool) -> Result<Option<u64>, AofWriteError> {
        if !self.enabled() {
            return Ok(None);
        }
        let fsync = self.fsync_policy();
        let ask = ask && fsync == Fsync::Always;
        let mut files = self.files.lock();
        let data = std::mem::take(&mut self.buffer.pending.lock().bytes);
        if data.is_empty() {
            // Nothing new, but what this caller's replies acknowledge may still await the
            // fsync another caller's commit asked for.
            // (Bytes written under another policy may be unsynced too: ask for the fsync.)
            return Ok((fsync == Fsync::Always && files.unsynced).then(|| self.group.wrote(0, ask)));
        }
        let Some(file) = files.incr.as_mut() else {
            return Ok(None);
        };
        match file.write_all(&data) {
            Ok(()) => {
                files.unsynced = true;
                files.incr_len += data.len() as u64;
                self.incr_size
                    .fetch_add(data.len() as u64, Ordering::Relaxed);
                self.write_succeeded();
                let target = self.group.wrote(data.len() as u64, ask);
                Ok((fsync == Fsync::Always).then_some(target))
            }
            Err(e) => {
                // Keep the bytes for the next attempt, ahead of anything fed since. A partial
                // write may have left part of them in the file: the file is cut back to its
                // size before, as Redis does.
                let mut pending = self.buffer.pending.lock();
                let mut bytes = data;
                bytes.extend_from_slice(&pending.bytes);
                pending.bytes = bytes;
                if let Some(file) = files.incr.as_ref() {
                    let _ = file.set_len(files.incr_len);
                }
                let text = failure::os_error_text(&e);
                self.fail_write(&text);
                Err(AofWriteError::Write(text))
            }
        }
    }

    /// Waits (without holding the thread) until the bytes up to `target` are fsynced; an
    /// error if that fsync failed.
    pub(crate) async fn wait_durable(&self, target: u64) -> Result<(), AofWriteError> {
        self.group.wait(target).await
    }

    /// Waits (without holding the thread) until a syncer round wrote and fsynced everything
    /// fed up to offset `fed` (a [`Commit::Round`]), asking for one if none covers it yet;
    /// an error if its write or fsync failed.
    pub(crate) async fn wait_round(&self, fed: u64) -> Result<(), AofWriteError> {
        self.group.wait_fed(fed, self).await
    }

    /// What the group syncer fsyncs: the bytes written so far, the fed offset they end at,
    /// and a handle of the file they are in, if anything was written since the last group
    /// fsync (earlier files were fsynced when a rewrite switched away from them).
    fn sync_point(&self) -> (u64, u64, Option<File>) {
        let files = self.files.lock();
        let target = self.group.written();
        let fed = {
            let pending = self.buffer.pending.lock();
            self.buffer.fed() - pending.bytes.len() as u64
        };
        // Nothing written since the last group fsync: nothing to fsync.
        let file = if target > self.group.synced() {
            files.incr.as_ref().and_then(|f| f.try_clone().ok())
        } else {
            None
        };
        (target, fed, file)
    }

    /// Everything up to `target` is fsynced: the file counts as synced if nothing was written
    /// since (WAITAOF, INFO).
    fn synced_upto(&self, target: u64) {
        let mut files = self.files.lock();
        if self.group.written() == target {
            files.unsynced = false;
        }
    }
}

#[cfg(test)]
mod tests;

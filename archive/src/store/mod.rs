//! The [`Archive`] handle: opening (and recovery), stream state, figures, and the full
//! invariant walk.
//!
//! Opening creates a missing file atomically (built under a temporary name, then renamed, so
//! a crash during creation leaves nothing half-written), checks the format version, and checks that
//! every stream's W agrees with its last extent and that the last record of each stream
//! decodes to W. redb itself guarantees that a commit is wholly there or wholly absent after a
//! crash (its commit slots are checksummed and it repairs the allocator on open), so a fold
//! interrupted by a crash is simply absent; the checks here catch a file damaged in other ways.
//!
//! One writer at a time (redb's rule): `fold` and `put_page` take redb's write lock; readers
//! use MVCC snapshots and never wait for the writer.

mod business;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use echomq_engine::StreamId;
use parking_lot::{MappedRwLockReadGuard, Mutex, RwLock, RwLockReadGuard};
use redb::{Database, ReadableDatabase, ReadableTable, StorageBackend};

use crate::error::{ArchiveError, Result};
use crate::format::record::{self, Record};
use crate::format::tables::{
    EXTENTS, FORMAT_VERSION, META, META_FORMAT_VERSION, META_NEXT_PAGE, META_NEXT_STREAM, PAGES,
    STREAMS,
};
use crate::format::{ARCHIVE_BASE, PageNo};

/// The redb page cache the archive asks for: enough to keep the recent pages of a busy feed
/// hot without taking much of a small machine's memory.
const CACHE_BYTES: usize = 64 << 20;

/// One stream's state in the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamState {
    /// The stream's number in `extents` and records.
    pub stream_no: u64,
    /// The watermark: the highest folded id, `None` before the first fold.
    pub watermark: Option<StreamId>,
    /// Records folded.
    pub records: u64,
}

impl StreamState {
    pub(crate) fn from_row((stream_no, ms, seq, records): (u64, u64, u64, u64)) -> StreamState {
        StreamState {
            stream_no,
            watermark: (records > 0).then(|| StreamId::new(ms, seq)),
            records,
        }
    }

    pub(crate) fn to_row(self) -> (u64, u64, u64, u64) {
        let w = self.watermark.unwrap_or(StreamId::MIN);
        (self.stream_no, w.ms, w.seq, self.records)
    }
}

/// Archive-wide figures (INFO's `archive` section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArchiveStats {
    /// Streams with at least one fold.
    pub streams: u64,
    /// Records folded, all streams.
    pub records: u64,
    /// Archive pages allocated.
    pub archive_pages: u64,
    /// Size of the file on disk.
    pub file_bytes: u64,
}

/// Runs inside every fold's transaction before it commits (see [`Archive::set_fold_hook`]).
pub(crate) type FoldHook =
    Box<dyn Fn(&redb::WriteTransaction, &crate::FoldReceipt) -> Result<()> + Send + Sync>;

/// Opens the redb database of an archive on a storage backend (see
/// [`Archive::open_with_backend`]).
type BackendOpener =
    Arc<dyn Fn(&redb::Builder) -> std::result::Result<Database, redb::DatabaseError> + Send + Sync>;

/// Where the archive's bytes live.
enum Source {
    /// Its file, at the archive's path.
    File,
    /// A storage backend opened anew at each (re)open (tests inject faults through it).
    Backend(BackendOpener),
}

/// The archive: one redb file of business pages and folded stream records.
///
/// The redb handle sits behind a lock so that [`Archive::reopen`] can replace it after an I/O
/// error (redb refuses every later call with "Previous I/O error ... re-open the database"):
/// every call takes the handle for as long as it starts its transaction, never longer, and
/// while the handle is closed calls fail with [`ArchiveError::Closed`].
pub struct Archive {
    pub(crate) db: RwLock<Option<Database>>,
    source: Source,
    path: PathBuf,
    /// Set at most once, to write state in every fold's transaction (nothing sets it outside
    /// tests: replication keeps its state in its own transactions).
    pub(crate) fold_hook: OnceLock<FoldHook>,
    /// Set when a deferred fold ([`Archive::fold_for_deferred_trim`]) committed without an
    /// fsync; cleared by [`Archive::sync`] once a durable commit covers it.
    pub(crate) unsynced: AtomicBool,
    /// Held for the length of one [`Archive::sync`].
    pub(crate) sync_lock: Mutex<()>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("path", &self.path)
            .field("fold_hook", &self.fold_hook.get().is_some())
            .finish()
    }
}

pub(crate) fn corrupt(page: u64, fault: record::RecordFault) -> ArchiveError {
    ArchiveError::CorruptRecord {
        page: PageNo(page),
        fault,
    }
}

fn builder() -> redb::Builder {
    let mut builder = Database::builder();
    builder.set_cache_size(CACHE_BYTES);
    builder
}

impl Archive {
    /// Opens the archive at `path`, creating the file if it does not exist.
    ///
    /// A damaged or truncated file is [`ArchiveError::CorruptFile`]; a file whose tables
    /// disagree is [`ArchiveError::Inconsistent`]. Neither changes the file.
    pub fn open(path: impl AsRef<Path>) -> Result<Archive> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            Archive::create(&path)?;
        }
        let db = builder().open(&path)?;
        Archive::start(db, Source::File, path)
    }

    /// Opens (creating if empty) an archive stored on the backend `open` returns; `path` is
    /// only named in messages and figures. `open` runs again at each [`Archive::reopen`], so
    /// it should return a fresh handle on the same storage. This is the seam tests use to
    /// make the storage fail (a full disk) and recover.
    pub fn open_with_backend<B, F>(path: impl AsRef<Path>, open: F) -> Result<Archive>
    where
        B: StorageBackend,
        F: Fn() -> std::io::Result<B> + Send + Sync + 'static,
    {
        let opener: BackendOpener = Arc::new(move |builder: &redb::Builder| {
            let backend = open().map_err(|e| redb::DatabaseError::Storage(e.into()))?;
            builder.create_with_backend(backend)
        });
        let db = opener(&builder())?;
        Archive::start(db, Source::Backend(opener), path.as_ref().to_path_buf())
    }

    fn start(db: Database, source: Source, path: PathBuf) -> Result<Archive> {
        let archive = Archive {
            db: RwLock::new(Some(db)),
            source,
            path,
            fold_hook: OnceLock::new(),
            unsynced: AtomicBool::new(false),
            sync_lock: Mutex::new(()),
        };
        archive.init()?;
        archive.check_streams()?;
        Ok(archive)
    }

    /// The open redb handle, for starting one transaction; [`ArchiveError::Closed`] while a
    /// [`Archive::reopen`] has not succeeded.
    pub(crate) fn db(&self) -> Result<MappedRwLockReadGuard<'_, Database>> {
        RwLockReadGuard::try_map(self.db.read(), Option::as_ref).map_err(|_| ArchiveError::Closed)
    }

    /// Closes the redb handle and opens the file again, with the same checks as
    /// [`Archive::open`]: what a caller does after an I/O error (after one, redb refuses
    /// every call until it is reopened). Committed folds are all there after it; a fold that
    /// failed is absent. On an error the archive stays closed ([`ArchiveError::Closed`])
    /// until a later `reopen` succeeds. A transaction still running on the old handle (a
    /// replicator's) keeps the file locked until it ends: the reopen then fails with
    /// [`ArchiveError::AlreadyOpen`] and can be retried.
    pub fn reopen(&self) -> Result<()> {
        let mut slot = self.db.write();
        drop(slot.take());
        let db = match &self.source {
            Source::File => builder().open(&self.path)?,
            Source::Backend(open) => open(&builder())?,
        };
        *slot = Some(db);
        drop(slot);
        let checked = self.init().and_then(|()| self.check_streams());
        if checked.is_err() {
            drop(self.db.write().take());
        }
        checked
    }

    /// Installs the hook every fold runs inside its transaction, after writing its pages and
    /// before committing, for state that must commit atomically with a fold. A hook error
    /// aborts the fold. Only one hook: a second call returns it back.
    #[allow(
        dead_code,
        reason = "a spare seam: replication follows folds through the extents table and its own \
                  transactions, so only the test installs a hook"
    )]
    pub(crate) fn set_fold_hook(&self, hook: FoldHook) -> Result<(), FoldHook> {
        self.fold_hook.set(hook)
    }

    /// Creates a new, initialized archive file at `path` atomically: it is built under a
    /// temporary name and renamed into place, so a crash while creating it leaves no
    /// half-written file at `path` (a redb file cut inside its header would not open again).
    fn create(path: &Path) -> Result<()> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".creating-{}", std::process::id()));
        let temporary = path.with_file_name(name);
        let _ = std::fs::remove_file(&temporary);
        {
            let db = builder().create(&temporary)?;
            Archive {
                db: RwLock::new(Some(db)),
                source: Source::File,
                path: temporary.clone(),
                fold_hook: OnceLock::new(),
                unsynced: AtomicBool::new(false),
                sync_lock: Mutex::new(()),
            }
            .init()?;
        }
        std::fs::rename(&temporary, path)?;
        // Make the rename itself durable.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates missing tables and checks the format version.
    fn init(&self) -> Result<()> {
        let read = self.db()?.begin_read()?;
        let version = match read.open_table(META) {
            Ok(meta) => meta.get(META_FORMAT_VERSION)?.map(|v| v.value()),
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(e.into()),
        };
        drop(read);
        match version {
            Some(FORMAT_VERSION) => Ok(()),
            Some(found) => Err(ArchiveError::UnsupportedFormat {
                found,
                supported: FORMAT_VERSION,
            }),
            None => {
                let tx = self.db()?.begin_write()?;
                {
                    tx.open_table(PAGES)?;
                    tx.open_table(STREAMS)?;
                    tx.open_table(EXTENTS)?;
                    let mut meta = tx.open_table(META)?;
                    meta.insert(META_FORMAT_VERSION, FORMAT_VERSION)?;
                    meta.insert(META_NEXT_PAGE, ARCHIVE_BASE)?;
                    meta.insert(META_NEXT_STREAM, 0)?;
                }
                tx.commit()?;
                Ok(())
            }
        }
    }

    /// The recovery check on open: every stream's W is its last extent's last id, and that
    /// extent's last page holds a record of the stream with id W.
    fn check_streams(&self) -> Result<()> {
        let read = self.db()?.begin_read()?;
        let streams = read.open_table(STREAMS)?;
        let extents = read.open_table(EXTENTS)?;
        let pages = read.open_table(PAGES)?;
        for row in streams.iter()? {
            let (key, state) = row?;
            let state = StreamState::from_row(state.value());
            let name = String::from_utf8_lossy(key.value()).into_owned();
            let last = extents
                .range((state.stream_no, 0, 0)..=(state.stream_no, u64::MAX, u64::MAX))?
                .next_back()
                .transpose()?;
            match (state.watermark, last) {
                (None, None) => {}
                (Some(w), Some((_, extent))) => {
                    let (_, last_page, ms, seq) = extent.value();
                    if StreamId::new(ms, seq) != w {
                        return Err(ArchiveError::Inconsistent(format!(
                            "stream {name}: W {w} but its last fold ends at {ms}-{seq}"
                        )));
                    }
                    let bytes = pages.get(last_page)?.ok_or_else(|| {
                        ArchiveError::Inconsistent(format!(
                            "stream {name}: page {} of its last fold is missing",
                            PageNo(last_page)
                        ))
                    })?;
                    let record =
                        record::decode(PageNo(last_page), Bytes::copy_from_slice(bytes.value()))
                            .map_err(|f| corrupt(last_page, f))?;
                    if record.stream_no != state.stream_no || record.entry.id != w {
                        return Err(ArchiveError::Inconsistent(format!(
                            "stream {name}: the record at W's page is not W"
                        )));
                    }
                }
                _ => {
                    return Err(ArchiveError::Inconsistent(format!(
                        "stream {name}: W and its folds disagree"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The state of `stream`, `None` if it was never folded into.
    pub fn stream_state(&self, stream: &[u8]) -> Result<Option<StreamState>> {
        let read = self.db()?.begin_read()?;
        let streams = read.open_table(STREAMS)?;
        Ok(streams
            .get(stream)?
            .map(|row| StreamState::from_row(row.value())))
    }

    /// The durable watermark of `stream`: the highest id folded, `None` before any fold.
    pub fn watermark(&self, stream: &[u8]) -> Result<Option<StreamId>> {
        Ok(self.stream_state(stream)?.and_then(|s| s.watermark))
    }

    /// Every stream with its state, in key order.
    pub fn streams(&self) -> Result<Vec<(Vec<u8>, StreamState)>> {
        let read = self.db()?.begin_read()?;
        let streams = read.open_table(STREAMS)?;
        streams
            .iter()?
            .map(|row| {
                let (key, state) = row?;
                Ok((key.value().to_vec(), StreamState::from_row(state.value())))
            })
            .collect()
    }

    /// Archive-wide figures.
    pub fn stats(&self) -> Result<ArchiveStats> {
        let read = self.db()?.begin_read()?;
        let streams = read.open_table(STREAMS)?;
        let meta = read.open_table(META)?;
        let mut stats = ArchiveStats::default();
        for row in streams.iter()? {
            let state = StreamState::from_row(row?.1.value());
            stats.streams += u64::from(state.records > 0);
            stats.records += state.records;
        }
        stats.archive_pages = meta
            .get(META_NEXT_PAGE)?
            .map_or(0, |v| v.value().saturating_sub(ARCHIVE_BASE));
        stats.file_bytes = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        Ok(stats)
    }

    /// Walks every table and record and checks the invariants in [`crate::format`]: extents
    /// ordered, disjoint and covering every archive page exactly once; every record decoding,
    /// in its stream and in id order; W and record counts agreeing with the extents.
    pub fn check_invariants(&self) -> Result<()> {
        let read = self.db()?.begin_read()?;
        let streams = read.open_table(STREAMS)?;
        let extents = read.open_table(EXTENTS)?;
        let pages = read.open_table(PAGES)?;
        let meta = read.open_table(META)?;
        let bad = |text: String| Err(ArchiveError::Inconsistent(text));
        let next_page = meta
            .get(META_NEXT_PAGE)?
            .map_or(ARCHIVE_BASE, |v| v.value());
        let next_stream = meta.get(META_NEXT_STREAM)?.map_or(0, |v| v.value());
        let mut covered = 0u64;
        for row in streams.iter()? {
            let (key, state) = row?;
            let name = String::from_utf8_lossy(key.value()).into_owned();
            let state = StreamState::from_row(state.value());
            if state.stream_no >= next_stream {
                return bad(format!("stream {name} has a number past next_stream"));
            }
            let mut records = 0u64;
            let mut prev: Option<StreamId> = None;
            let mut prev_page: Option<u64> = None;
            for extent in
                extents.range((state.stream_no, 0, 0)..=(state.stream_no, u64::MAX, u64::MAX))?
            {
                let (key, value) = extent?;
                let (_, first_ms, first_seq) = key.value();
                let (first_page, last_page, last_ms, last_seq) = value.value();
                if first_page < ARCHIVE_BASE || last_page < first_page || last_page >= next_page {
                    return bad(format!(
                        "stream {name}: extent pages out of the archive range"
                    ));
                }
                if prev_page.is_some_and(|p| p >= first_page) {
                    return bad(format!("stream {name}: extents overlap in pages"));
                }
                prev_page = Some(last_page);
                let mut expect_first = Some(StreamId::new(first_ms, first_seq));
                let mut in_extent = 0u64;
                for page in pages.range(first_page..=last_page)? {
                    let (page_no, bytes) = page?;
                    let page_no = page_no.value();
                    let record =
                        record::decode(PageNo(page_no), Bytes::copy_from_slice(bytes.value()))
                            .map_err(|f| corrupt(page_no, f))?;
                    let Record { stream_no, entry } = record;
                    if stream_no != state.stream_no {
                        return bad(format!(
                            "page {}: record of another stream",
                            PageNo(page_no)
                        ));
                    }
                    if let Some(first) = expect_first.take()
                        && entry.id != first
                    {
                        return bad(format!("stream {name}: extent key is not its first record"));
                    }
                    if prev.is_some_and(|p| p >= entry.id) {
                        return bad(format!("stream {name}: records out of id order"));
                    }
                    prev = Some(entry.id);
                    in_extent += 1;
                }
                records += in_extent;
                if in_extent != last_page - first_page + 1 {
                    return bad(format!("stream {name}: an extent has missing pages"));
                }
                if prev != Some(StreamId::new(last_ms, last_seq)) {
                    return bad(format!(
                        "stream {name}: extent's last id is not its last record"
                    ));
                }
                covered += in_extent;
            }
            if records != state.records {
                return bad(format!(
                    "stream {name}: {} records recorded, {records} found",
                    state.records
                ));
            }
            if prev != state.watermark {
                return bad(format!("stream {name}: W is not the last folded id"));
            }
        }
        let archive_pages = pages.range(ARCHIVE_BASE..)?.count() as u64;
        if archive_pages != covered {
            return bad(format!(
                "{archive_pages} archive pages but extents cover {covered}"
            ));
        }
        Ok(())
    }
}

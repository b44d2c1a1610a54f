//! A storage backend whose writes can be made to fail, as a full disk fails them: the seam
//! tests use to drive the archive through an I/O error and its recovery
//! ([`crate::Archive::open_with_backend`], [`crate::Archive::reopen`]) without a small file
//! system to fill.
//!
//! [`FaultyFile`] is redb's own file backend with a shared switch ([`DiskFull`]): while it is
//! on, every `write`, `set_len` and `sync_data` fails with `ENOSPC` ("No space left on
//! device") and changes nothing; reads and locks always pass through.

use std::fs::{File, OpenOptions};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};

/// `ENOSPC` on Linux and the BSDs.
const ENOSPC: i32 = 28;

/// The switch: while on, the backends sharing it fail their writes.
#[derive(Debug, Default)]
pub struct DiskFull {
    full: AtomicBool,
    refused: AtomicU64,
}

impl DiskFull {
    /// A switch, off.
    pub fn new() -> Arc<DiskFull> {
        Arc::new(DiskFull::default())
    }

    /// Makes writes fail (`true`) or pass (`false`).
    pub fn set(&self, full: bool) {
        self.full.store(full, Ordering::SeqCst);
    }

    /// Writes refused so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::SeqCst)
    }

    fn check(&self) -> std::io::Result<()> {
        if self.full.load(Ordering::SeqCst) {
            self.refused.fetch_add(1, Ordering::SeqCst);
            return Err(std::io::Error::from_raw_os_error(ENOSPC));
        }
        Ok(())
    }
}

/// redb's file backend behind a [`DiskFull`] switch.
#[derive(Debug)]
pub struct FaultyFile {
    inner: FileBackend,
    disk: Arc<DiskFull>,
}

impl FaultyFile {
    /// Opens (creating) the file at `path`.
    pub fn open(path: &Path, disk: Arc<DiskFull>) -> std::io::Result<FaultyFile> {
        let file: File = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let inner = FileBackend::new(file).map_err(std::io::Error::other)?;
        Ok(FaultyFile { inner, disk })
    }

    /// An opener for [`crate::Archive::open_with_backend`]: the file at `path` behind `disk`.
    pub fn opener(
        path: PathBuf,
        disk: Arc<DiskFull>,
    ) -> impl Fn() -> std::io::Result<FaultyFile> + Send + Sync + 'static {
        move || FaultyFile::open(&path, Arc::clone(&disk))
    }
}

impl StorageBackend for FaultyFile {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.inner.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        self.inner.read(offset, out)
    }

    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        self.disk.check()?;
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> Result<(), std::io::Error> {
        self.disk.check()?;
        self.inner.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        self.disk.check()?;
        self.inner.write(offset, data)
    }

    fn close(&self) -> Result<(), std::io::Error> {
        self.inner.close()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_range(start, end)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        self.inner.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(start, end)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(start, end)
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.query_lock_range(start, end)
    }
}

//! The output a save writes an RDB file through: buffered, and made durable part way when the
//! engine's writer asks ([`SaveOutput::sync_written`]), so a large file's first bytes reach
//! the disk while the rest is still being encoded and the final fsync has less to do.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use echomq_engine::rdb::codec::SaveOutput;

/// Bytes buffered before they are written to the file.
const BUFFER_BYTES: usize = 1 << 20;

/// A file being written by a save; the caller fsyncs it whole (`sync_all`) once written.
pub(crate) struct SyncedFile<'f> {
    out: BufWriter<&'f File>,
}

impl<'f> SyncedFile<'f> {
    /// Writes to `file` from where it stands.
    pub(crate) fn new(file: &'f File) -> SyncedFile<'f> {
        SyncedFile {
            out: BufWriter::with_capacity(BUFFER_BYTES, file),
        }
    }
}

impl Write for SyncedFile<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl SaveOutput for SyncedFile<'_> {
    fn sync_written(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_data()
    }
}

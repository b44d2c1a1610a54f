//! RDB's encoding primitives: lengths, strings (plain, integer-encoded, LZF), times.
//!
//! - A length is 1, 2, 5 or 9 bytes: `00llllll`; `01llllll llllllll` (14 bits, big-endian);
//!   `0x80` and 4 bytes big-endian; `0x81` and 8 bytes big-endian. `11eeeeee` instead announces
//!   an encoded string (`e`: 0 int8, 1 int16, 2 int32, little-endian; 3 LZF: compressed length,
//!   plain length, compressed bytes).
//! - A string is written as Redis's `rdbSaveRawString` writes it: up to 11 bytes that are a
//!   canonical integer in `i32` as an integer; else, with compression on and more than 20
//!   bytes, LZF if that saves at least 4 bytes; else its length and bytes.
//! - A millisecond time is 8 bytes little-endian, a second time 4.
//!
//! The [`Reader`] works on a slice: every read is checked against what is left, so a length
//! never allocates more than the input holds (LZF's output is bounded by its input times the
//! format's largest expansion), and a failed read is a [`RdbError`], never a panic.

use std::io::Write;

use crate::error::RdbError;
use crate::id::{StreamId, string_to_i64};

use super::{crc64, lzf};

const ENCVAL: u8 = 3;
const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

/// The most an LZF stream can expand: a 2-byte reference yields 9 bytes, a 3-byte one 264.
const LZF_MAX_EXPANSION: usize = 88;

/// Appends a length to `buf`.
fn put_len(buf: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        buf.push(n as u8);
    } else if n < 1 << 14 {
        buf.push(0x40 | (n >> 8) as u8);
        buf.push(n as u8);
    } else if n <= u64::from(u32::MAX) {
        buf.push(0x80);
        buf.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        buf.push(0x81);
        buf.extend_from_slice(&n.to_be_bytes());
    }
}

/// Bytes being written, with Redis's string rules; optionally with the CRC64 of everything
/// written (an RDB file's footer), kept as the bytes leave (see [`Writer::flush_into`]) and
/// as buffers written on another thread are taken in ([`Writer::push_part`]).
///
/// What has been written and not flushed is `parts` (in order) and then `buf`: a buffer
/// taken in becomes a part as it is, without a copy.
#[derive(Debug, Default)]
pub struct Writer<'s> {
    /// Where the bytes go while they are being written (a file being saved), with the first
    /// error a write to it met: see [`Writer::spill`].
    spill: Option<Spill<'s>>,
    /// The bytes written after `parts`. Only appended to, except by [`Writer::flush_into`]
    /// and [`Writer::push_part`], so that `crc_from` stays a position in it.
    pub buf: Vec<u8>,
    /// Buffers written before `buf`, in order (see [`Writer::push_part`]); all in `crc`.
    parts: Vec<Vec<u8>>,
    /// `rdbcompression`: strings over 20 bytes are LZF-compressed when that saves space.
    pub compress: bool,
    /// The LZF compressor, kept between strings (its table is 256 KiB).
    lzf: lzf::Compressor,
    /// The CRC64 is kept (`rdbchecksum`).
    pub checksum: bool,
    /// CRC64 of every byte written before `buf[crc_from..]` (flushed bytes included).
    crc: u64,
    /// Where in `buf` the bytes not yet in `crc` start.
    crc_from: usize,
}

/// Where a save's bytes go: a [`Write`] that can also make what it holds durable part way
/// through (so a large file's first bytes reach the disk while the rest is still encoded).
/// The engine opens and syncs no file: the server implements this for the files it writes.
pub trait SaveOutput: Write + Send {
    /// Makes the bytes written so far durable: a file flushes and fdatasyncs; an output in
    /// memory does nothing (the default).
    fn sync_written(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl SaveOutput for Vec<u8> {}

impl<T: SaveOutput + ?Sized> SaveOutput for &mut T {
    fn sync_written(&mut self) -> std::io::Result<()> {
        (**self).sync_written()
    }
}

/// Pending bytes from which [`Writer::spill`] writes them out.
pub const SPILL_BYTES: usize = 1 << 20;

/// A [`Writer`]'s output while it writes (see [`Writer::spill`]).
struct Spill<'s> {
    out: &'s mut dyn SaveOutput,
    /// Pending bytes from which [`Writer::spill`] writes ([`SPILL_BYTES`]; less in tests).
    at: usize,
    /// The first failed write; nothing is written after it.
    error: Option<std::io::Error>,
}

impl std::fmt::Debug for Spill<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<'s> Writer<'s> {
    /// An empty writer.
    pub fn new(compress: bool) -> Writer<'s> {
        Writer {
            buf: Vec::new(),
            compress,
            lzf: lzf::Compressor::new(),
            ..Writer::default()
        }
    }

    /// An empty writer that keeps the CRC64 of what it writes when `checksum`.
    pub fn with_checksum(compress: bool, checksum: bool) -> Writer<'s> {
        Writer {
            checksum,
            ..Writer::new(compress)
        }
    }

    /// This writer, with [`Writer::spill`] writing its bytes to `out` as they come.
    pub fn spilling_into(self, out: &'s mut dyn SaveOutput) -> Writer<'s> {
        Writer {
            spill: Some(Spill {
                out,
                at: SPILL_BYTES,
                error: None,
            }),
            ..self
        }
    }

    /// Whether the writer has an output to spill to ([`Writer::spilling_into`]).
    pub fn spills(&self) -> bool {
        self.spill.is_some()
    }

    /// Writes the pending bytes to the output given to [`Writer::spilling_into`] once there
    /// are [`SPILL_BYTES`] of them (nothing without such an output). A failed write is kept
    /// for [`Writer::finish_spill`], and nothing more is written: encoding goes on in memory,
    /// so an error does not have to stop the threads filling other writers.
    pub fn spill(&mut self) {
        self.spill_at(None);
    }

    /// Spills from `at` pending bytes instead of [`SPILL_BYTES`] (tests of small writes).
    #[cfg(test)]
    pub(crate) fn set_spill_bytes(&mut self, at: usize) {
        if let Some(spill) = self.spill.as_mut() {
            spill.at = at;
        }
    }

    /// [`Writer::spill`] from `at_least` pending bytes, or its own threshold.
    fn spill_at(&mut self, at_least: Option<usize>) {
        let Some(mut spill) = self.spill.take() else {
            return;
        };
        if spill.error.is_none()
            && self.pending_len() >= at_least.unwrap_or(spill.at)
            && let Err(e) = self.flush_into(&mut spill.out)
        {
            spill.error = Some(e);
        }
        self.spill = Some(spill);
    }

    /// Writes every pending byte to the spill output and makes it durable
    /// ([`SaveOutput::sync_written`]); a failure is kept as [`Writer::spill`] keeps one.
    pub fn sync_spilled(&mut self) {
        self.spill_at(Some(0));
        if let Some(spill) = self.spill.as_mut()
            && spill.error.is_none()
            && let Err(e) = spill.out.sync_written()
        {
            spill.error = Some(e);
        }
    }

    /// Writes every pending byte to the spill output; the first error any write to it met.
    pub fn finish_spill(&mut self) -> std::io::Result<()> {
        self.spill_at(Some(0));
        match self.spill.as_mut().and_then(|spill| spill.error.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The CRC64 of every byte written so far (0 without `checksum`).
    pub fn crc(&mut self) -> u64 {
        if self.checksum {
            self.crc = crc64::crc64(self.crc, &self.buf[self.crc_from..]);
            self.crc_from = self.buf.len();
        }
        self.crc
    }

    /// Writes the buffered bytes to `out` and empties the buffer (the CRC64 goes on).
    pub fn flush_into(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        self.crc();
        for part in self.parts.drain(..) {
            out.write_all(&part)?;
        }
        out.write_all(&self.buf)?;
        self.buf.clear();
        self.crc_from = 0;
        Ok(())
    }

    /// Bytes written and not flushed.
    pub fn pending_len(&self) -> usize {
        self.parts.iter().map(Vec::len).sum::<usize>() + self.buf.len()
    }

    /// Every byte written and not flushed, in one buffer.
    pub fn into_bytes(mut self) -> Vec<u8> {
        if self.parts.is_empty() {
            return self.buf;
        }
        let mut bytes = Vec::with_capacity(self.pending_len());
        for part in self.parts.drain(..) {
            bytes.extend_from_slice(&part);
        }
        bytes.extend_from_slice(&self.buf);
        bytes
    }

    /// Appends `part` (bytes written elsewhere, another thread's buffer) as a part, without a
    /// copy; its checksum is computed here.
    pub fn push_part(&mut self, part: Vec<u8>) {
        if part.is_empty() {
            return;
        }
        let crc = self.crc();
        if self.checksum {
            self.crc = crc64::crc64(crc, &part);
        }
        let buf = std::mem::take(&mut self.buf);
        if !buf.is_empty() {
            self.parts.push(buf);
        }
        self.parts.push(part);
        self.crc_from = 0;
    }

    /// One byte (a type or an opcode).
    pub fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// Bytes as they are.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// A length.
    pub fn len(&mut self, n: u64) {
        put_len(&mut self.buf, n);
    }

    /// A millisecond time (Redis's `rdbSaveMillisecondTime`: an `i64`, little-endian).
    pub fn millis(&mut self, ms: i64) {
        self.buf.extend_from_slice(&ms.to_le_bytes());
    }

    /// A stream id as two lengths, `ms` then `seq`.
    pub fn id_lens(&mut self, id: StreamId) {
        self.len(id.ms);
        self.len(id.seq);
    }

    /// A string, as `rdbSaveRawString` encodes it.
    pub fn string(&mut self, s: &[u8]) {
        if s.len() <= 11
            && let Some(v) = string_to_i64(s)
        {
            if let Ok(v) = i8::try_from(v) {
                self.buf.push((ENCVAL << 6) | ENC_INT8);
                self.buf.push(v as u8);
                return;
            }
            if let Ok(v) = i16::try_from(v) {
                self.buf.push((ENCVAL << 6) | ENC_INT16);
                self.buf.extend_from_slice(&v.to_le_bytes());
                return;
            }
            if let Ok(v) = i32::try_from(v) {
                self.buf.push((ENCVAL << 6) | ENC_INT32);
                self.buf.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
        if self.compress
            && s.len() > 20
            && let Some(packed) = self.lzf.compress(s, s.len() - 4)
        {
            self.buf.push((ENCVAL << 6) | ENC_LZF);
            put_len(&mut self.buf, packed.len() as u64);
            put_len(&mut self.buf, s.len() as u64);
            self.buf.extend_from_slice(packed);
            return;
        }
        self.len(s.len() as u64);
        self.buf.extend_from_slice(s);
    }
}

/// A string read by [`Reader::string_frame`], to be decoded by [`Frame::bytes`].
#[derive(Debug, Clone)]
pub enum Frame<'a> {
    /// Stored as it is.
    Plain(&'a [u8]),
    /// LZF-compressed: the compressed bytes, the plain length, the offset just past them.
    Lzf {
        /// The compressed bytes.
        packed: &'a [u8],
        /// The plain length.
        len: usize,
        /// The input offset just past the compressed bytes (where an error is reported).
        offset: usize,
    },
    /// An integer encoding, already decoded to its text.
    Owned(Vec<u8>),
}

impl Frame<'_> {
    /// The string's bytes, decompressed into `scratch` if need be (reused between calls).
    pub fn bytes<'s>(&'s self, scratch: &'s mut Vec<u8>) -> Result<&'s [u8], RdbError> {
        match self {
            Frame::Plain(bytes) => Ok(bytes),
            Frame::Owned(bytes) => Ok(bytes),
            Frame::Lzf {
                packed,
                len,
                offset,
            } => {
                if lzf::decompress_into(packed, *len, scratch) {
                    Ok(scratch.as_slice())
                } else {
                    Err(RdbError::Corrupt {
                        offset: *offset,
                        what: "Invalid LZF compressed string".into(),
                    })
                }
            }
        }
    }
}

/// A checked cursor over RDB bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

/// A length, or the encoding of a string that follows.
enum Len {
    Plain(u64),
    Encoded(u8),
}

impl<'a> Reader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, pos: 0 }
    }

    /// Bytes read so far.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// A corruption error at the current offset.
    pub fn corrupt(&self, what: impl Into<String>) -> RdbError {
        RdbError::Corrupt {
            offset: self.pos,
            what: what.into(),
        }
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], RdbError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
            .ok_or(RdbError::Truncated(self.pos))?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// One byte.
    pub fn byte(&mut self) -> Result<u8, RdbError> {
        Ok(self.array::<1>()?[0])
    }

    fn len_or_encoding(&mut self) -> Result<Len, RdbError> {
        let first = self.byte()?;
        Ok(match first >> 6 {
            0 => Len::Plain(u64::from(first & 0x3f)),
            1 => Len::Plain((u64::from(first & 0x3f) << 8) | u64::from(self.byte()?)),
            2 if first == 0x80 => Len::Plain(u64::from(u32::from_be_bytes(self.array()?))),
            2 if first == 0x81 => Len::Plain(u64::from_be_bytes(self.array()?)),
            2 => return Err(self.corrupt(format!("Unknown length encoding {first}"))),
            _ => Len::Encoded(first & 0x3f),
        })
    }

    /// A length.
    pub fn length(&mut self) -> Result<u64, RdbError> {
        match self.len_or_encoding()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(_) => Err(self.corrupt("an encoded string where a length belongs")),
        }
    }

    /// A length that counts things each taking at least one more byte of input: refused if
    /// more than the bytes left, so a loop over it is bounded by the input.
    pub fn count(&mut self) -> Result<u64, RdbError> {
        let n = self.length()?;
        if n > self.remaining() as u64 {
            return Err(self.corrupt(format!("count {n} exceeds the bytes left")));
        }
        Ok(n)
    }

    /// A millisecond time.
    pub fn millis(&mut self) -> Result<i64, RdbError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// A second time (`RDB_OPCODE_EXPIRETIME`).
    pub fn seconds(&mut self) -> Result<i32, RdbError> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// A stream id as two lengths.
    pub fn id_lens(&mut self) -> Result<StreamId, RdbError> {
        let ms = self.length()?;
        let seq = self.length()?;
        Ok(StreamId::new(ms, seq))
    }

    /// A stream id as 16 raw big-endian bytes.
    pub fn raw_id(&mut self) -> Result<StreamId, RdbError> {
        Ok(StreamId::from_u128(u128::from_be_bytes(self.array()?)))
    }

    /// A string in any of its encodings, not yet decoded: borrowed from the input when it is
    /// stored plain or compressed (a [`Frame`] decodes later, on any thread), decoded now
    /// when it is an integer.
    pub fn string_frame(&mut self) -> Result<Frame<'a>, RdbError> {
        let mut probe = self.clone();
        let frame = match probe.len_or_encoding()? {
            Len::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| RdbError::Truncated(probe.pos))?;
                Frame::Plain(probe.take(n)?)
            }
            Len::Encoded(ENC_LZF) => {
                let (packed, len) = probe.lzf_frame()?;
                Frame::Lzf {
                    packed,
                    len,
                    offset: probe.pos,
                }
            }
            Len::Encoded(_) => return Ok(Frame::Owned(self.string()?)),
        };
        *self = probe;
        Ok(frame)
    }

    /// An LZF string's compressed bytes and its plain length (after its encoding byte).
    fn lzf_frame(&mut self) -> Result<(&'a [u8], usize), RdbError> {
        let clen = self.length()?;
        let len = self.length()?;
        let clen = usize::try_from(clen).map_err(|_| RdbError::Truncated(self.pos))?;
        let packed = self.take(clen)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&len| len <= clen.saturating_mul(LZF_MAX_EXPANSION))
            .ok_or_else(|| self.corrupt("LZF length beyond its compressed size"))?;
        Ok((packed, len))
    }

    /// A string in any of its encodings.
    pub fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        match self.len_or_encoding()? {
            Len::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| RdbError::Truncated(self.pos))?;
                Ok(self.take(n)?.to_vec())
            }
            Len::Encoded(ENC_INT8) => Ok(i64::from(self.byte()? as i8).to_string().into_bytes()),
            Len::Encoded(ENC_INT16) => {
                Ok(i16::from_le_bytes(self.array()?).to_string().into_bytes())
            }
            Len::Encoded(ENC_INT32) => {
                Ok(i32::from_le_bytes(self.array()?).to_string().into_bytes())
            }
            Len::Encoded(ENC_LZF) => {
                let (packed, len) = self.lzf_frame()?;
                lzf::decompress(packed, len)
                    .ok_or_else(|| self.corrupt("Invalid LZF compressed string"))
            }
            Len::Encoded(other) => {
                Err(self.corrupt(format!("Unknown RDB string encoding type {other}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(s: &[u8], compress: bool) -> Vec<u8> {
        let mut w = Writer::new(compress);
        w.string(s);
        let mut r = Reader::new(&w.buf);
        let back = r.string().unwrap();
        assert_eq!(r.remaining(), 0);
        back
    }

    #[test]
    fn the_checksum_covers_flushed_bytes_and_parts() {
        let mut w = Writer::with_checksum(false, true);
        let mut out = Vec::new();
        w.raw(b"first part ");
        w.flush_into(&mut out).unwrap();
        w.string(b"second");
        w.push_part(b" from another writer".to_vec());
        w.raw(b" and after");
        let crc = w.crc();
        w.flush_into(&mut out).unwrap();
        assert_eq!(crc, crc64::crc64(0, &out));
        assert_eq!(Writer::new(false).crc(), 0);
    }

    #[test]
    fn lengths_take_redis_sizes() {
        for (n, size) in [
            (0u64, 1),
            (63, 1),
            (64, 2),
            (16383, 2),
            (16384, 5),
            (1 << 32, 9),
        ] {
            let mut w = Writer::new(false);
            w.len(n);
            assert_eq!(w.buf.len(), size, "{n}");
            assert_eq!(Reader::new(&w.buf).length().unwrap(), n);
        }
    }

    #[test]
    fn strings_use_integer_and_lzf_encodings() {
        let mut w = Writer::new(false);
        w.string(b"-100");
        assert_eq!(w.buf, [0xc0, 0x9c]);
        let mut w = Writer::new(false);
        w.string(b"0100");
        assert_eq!(w.buf, [4, b'0', b'1', b'0', b'0']);
        for s in [&b"12345678901"[..], b"-2147483648", b"", b"x", &[b'z'; 100]] {
            assert_eq!(round_trip(s, true), s);
        }
        let mut w = Writer::new(true);
        w.string(&[b'z'; 100]);
        assert_eq!(w.buf[0], 0xc3);
    }

    #[test]
    fn announced_sizes_never_exceed_the_input() {
        assert!(
            Reader::new(&[0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
                .string()
                .is_err()
        );
        assert!(
            Reader::new(&[0xc3, 0x01, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 0])
                .string()
                .is_err()
        );
        assert!(Reader::new(&[0x80, 0, 0, 0, 9]).count().is_err());
    }
}

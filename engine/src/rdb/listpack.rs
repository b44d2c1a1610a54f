//! Redis's listpack, the byte layout of a stream node inside an RDB file.
//!
//! ```text
//! listpack := total_bytes:u32le count:u16le element* 0xFF
//! element  := encoding data backlen
//! ```
//! Encodings: `0xxxxxxx` 7-bit unsigned int; `10llllll` string up to 63 bytes; `110xxxxx x` 13-bit
//! signed int; `1110llll l` string up to 4095 bytes; `0xF0` + u32le length, string; `0xF1`..`0xF4`
//! 16-, 24-, 32-, 64-bit signed ints, little-endian. `backlen` is the length of `encoding data`
//! in 1 to 5 bytes, 7 bits each, most significant first, every byte but the first with bit 7 set.
//! `count` is the element count, or 65535 when there are that many or more.
//!
//! The writer stores a string that is a canonical `i64` of fewer than 21 bytes as an integer,
//! in the smallest encoding, as Redis's `lpAppend` does, so the bytes equal Redis's. The reader
//! checks the header, every element's bounds and back-length and the terminator before it
//! yields anything.

use crate::id::string_to_i64;

/// One listpack element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element<'a> {
    /// An integer.
    Int(i64),
    /// A string.
    Str(&'a [u8]),
}

impl Element<'_> {
    /// The element as Redis returns it: an integer as its decimal text.
    pub fn to_bytes(self) -> Vec<u8> {
        match self {
            Element::Int(v) => v.to_string().into_bytes(),
            Element::Str(s) => s.to_vec(),
        }
    }
}

/// Builds a listpack.
#[derive(Debug)]
pub struct Builder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// Bytes of the back-length of an element whose encoding takes `len` bytes.
pub(crate) fn backlen_size(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// The back-length of an element whose encoding takes `len` bytes: 7 bits a byte, most
/// significant first, bit 7 set on all but the first; and how many bytes it takes.
fn backlen_bytes(len: usize) -> ([u8; 5], usize) {
    let size = backlen_size(len);
    let mut out = [0u8; 5];
    for (i, byte) in out[..size].iter_mut().enumerate() {
        let shift = 7 * (size - 1 - i);
        *byte = ((len >> shift) & 127) as u8 | if i == 0 { 0 } else { 128 };
    }
    (out, size)
}

/// Appends the back-length of an element whose encoding takes `len` bytes.
fn backlen(len: usize, out: &mut Vec<u8>) {
    let (bytes, size) = backlen_bytes(len);
    out.extend_from_slice(&bytes[..size]);
}

/// Appends an integer element in its smallest encoding.
#[inline]
pub fn put_int(out: &mut Vec<u8>, v: i64) {
    // One byte and a back-length of 1: the common case (flags, small deltas and counts),
    // kept small enough to inline into the node writer's loop.
    if (0..=127).contains(&v) {
        out.extend_from_slice(&[v as u8, 1]);
    } else {
        put_wide_int(out, v);
    }
}

/// [`put_int`] of an integer outside `0..=127`.
#[cold]
fn put_wide_int(out: &mut Vec<u8>, v: i64) {
    match v {
        0..=127 => out.extend_from_slice(&[v as u8, 1]),
        -4096..=4095 => {
            let u = if v < 0 { (1 << 13) + v } else { v } as u16;
            out.extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8, 2]);
        }
        -32_768..=32_767 => {
            let b = (v as i16).to_le_bytes();
            out.extend_from_slice(&[0xf1, b[0], b[1], 3]);
        }
        -8_388_608..=8_388_607 => {
            let b = (v as i32).to_le_bytes();
            out.extend_from_slice(&[0xf2, b[0], b[1], b[2], 4]);
        }
        -2_147_483_648..=2_147_483_647 => {
            let b = (v as i32).to_le_bytes();
            out.extend_from_slice(&[0xf3, b[0], b[1], b[2], b[3], 5]);
        }
        _ => {
            out.push(0xf4);
            out.extend_from_slice(&v.to_le_bytes());
            out.push(9);
        }
    }
}

/// Appends a string element (as an integer when it is one, as Redis's `lpAppend` does).
#[inline]
pub fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    // The common case, inlined into the node writer's loop: a short string that cannot be an
    // integer; a 1-byte header and a 1-byte back-length (`1 + len` < 128).
    if len < 64 && !matches!(s.first(), Some(b'-' | b'0'..=b'9')) {
        out.push(0x80 | len as u8);
        out.extend_from_slice(s);
        out.push(1 + len as u8);
    } else {
        put_other_str(out, s);
    }
}

/// [`put_str`] of a string that may be an integer, or of 64 bytes or more.
fn put_other_str(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() < 21
        && matches!(s.first(), Some(b'-' | b'0'..=b'9'))
        && let Some(v) = string_to_i64(s)
    {
        put_int(out, v);
        return;
    }
    let len = s.len();
    let enc = if len < 64 {
        out.push(0x80 | len as u8);
        1 + len
    } else if len < 4096 {
        out.extend_from_slice(&[0xe0 | (len >> 8) as u8, len as u8]);
        2 + len
    } else {
        out.push(0xf0);
        out.extend_from_slice(&(len as u32).to_le_bytes());
        5 + len
    };
    out.extend_from_slice(s);
    backlen(enc, out);
}

/// Opens a listpack at the end of `out`: room for the header, filled by [`close`].
pub fn open(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0; 6]);
    start
}

/// Ends the listpack [`open`] started at `start` holding `count` elements: its terminator
/// and header.
pub fn close(out: &mut Vec<u8>, start: usize, count: usize) {
    out.push(0xff);
    let total = (out.len() - start) as u32;
    let count = count.min(usize::from(u16::MAX)) as u16;
    out[start..start + 4].copy_from_slice(&total.to_le_bytes());
    out[start + 4..start + 6].copy_from_slice(&count.to_le_bytes());
}

impl Builder {
    /// An empty listpack.
    pub fn new() -> Builder {
        let mut buf = Vec::new();
        open(&mut buf);
        Builder { buf, count: 0 }
    }

    /// Appends an integer element.
    pub fn int(&mut self, v: i64) {
        put_int(&mut self.buf, v);
        self.count += 1;
    }

    /// Appends a string element (as an integer when it is one).
    pub fn string(&mut self, s: &[u8]) {
        put_str(&mut self.buf, s);
        self.count += 1;
    }

    /// The finished listpack.
    pub fn finish(mut self) -> Vec<u8> {
        close(&mut self.buf, 0, self.count);
        self.buf
    }
}

/// A listpack that does not decode: what is wrong with its frame or an element (an RDB load
/// reports the text as the corruption it found).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ListpackError {
    /// Fewer bytes than the 6-byte header and the terminator.
    #[error("listpack shorter than its header")]
    ShorterThanHeader,
    /// The header's total length is not the buffer's.
    #[error("listpack header says {header} bytes, it has {actual}")]
    WrongTotal {
        /// The header's total.
        header: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// The last byte is not 0xff.
    #[error("listpack without its terminator")]
    NoTerminator,
    /// An element runs past the terminator.
    #[error("listpack element past its end")]
    PastEnd,
    /// An element's first byte is no encoding.
    #[error("listpack element encoding {0:#x}")]
    UnknownEncoding(u8),
    /// An element's back-length does not match its length.
    #[error("listpack element back-length is wrong")]
    WrongBackLength,
    /// The header's element count is not the number of elements.
    #[error("listpack header counts {header} elements, it has {actual}")]
    WrongCount {
        /// The header's count.
        header: u16,
        /// The elements read.
        actual: usize,
    },
}

// The stream node decoders (`crate::node::listpack`) report corruption as text.
impl From<ListpackError> for String {
    fn from(e: ListpackError) -> String {
        e.to_string()
    }
}

/// A checked walk over a listpack's elements, one at a time, without allocating.
///
/// [`Cursor::new`] checks the header's byte count and the terminator; [`Cursor::element`] checks
/// each element's bounds and back-length as it reaches it; [`Cursor::finish`] checks the
/// header's element count once the walk reached the end.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    lp: &'a [u8],
    pos: usize,
    end: usize,
    seen: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor before the first element of `lp`, or what is wrong with its frame.
    pub fn new(lp: &'a [u8]) -> Result<Cursor<'a>, ListpackError> {
        if lp.len() < 7 {
            return Err(ListpackError::ShorterThanHeader);
        }
        let total = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]) as usize;
        if total != lp.len() {
            return Err(ListpackError::WrongTotal {
                header: total,
                actual: lp.len(),
            });
        }
        let end = lp.len() - 1;
        if lp[end] != 0xff {
            return Err(ListpackError::NoTerminator);
        }
        Ok(Cursor {
            lp,
            pos: 6,
            end,
            seen: 0,
        })
    }

    /// Whether every element has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// Bytes of elements not read yet (an upper bound on the elements left).
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    fn take(&self, from: usize, n: usize) -> Result<&'a [u8], ListpackError> {
        let lp = self.lp;
        from.checked_add(n)
            .filter(|&e| e <= self.end)
            .map(|e| &lp[from..e])
            .ok_or(ListpackError::PastEnd)
    }

    /// The next element if it is an integer of 7 or 13 bits (one-byte back-length), which it
    /// consumes; `None`, consuming nothing, for anything else (other encodings, the end, a
    /// broken element: [`Cursor::element`] then reads it, or says what is wrong).
    #[inline(always)]
    pub fn small_int(&mut self) -> Option<i64> {
        let pos = self.pos;
        let first = *self.lp.get(pos)?;
        if first < 0x80 {
            if pos + 2 <= self.end && self.lp[pos + 1] == 1 {
                self.pos = pos + 2;
                self.seen += 1;
                return Some(i64::from(first));
            }
        } else if first & 0xe0 == 0xc0 && pos + 3 <= self.end && self.lp[pos + 2] == 2 {
            let u = (i64::from(first & 0x1f) << 8) | i64::from(self.lp[pos + 1]);
            self.pos = pos + 3;
            self.seen += 1;
            return Some(if u >= 1 << 12 { u - (1 << 13) } else { u });
        }
        None
    }

    /// The next element if it is a string of under 64 bytes that does not start like an
    /// integer (`-` or a digit), which it consumes; `None`, consuming nothing, otherwise (as
    /// [`Cursor::small_int`]).
    #[inline(always)]
    pub fn short_text(&mut self) -> Option<&'a [u8]> {
        let pos = self.pos;
        let first = *self.lp.get(pos)?;
        if first & 0xc0 != 0x80 {
            return None;
        }
        let n = usize::from(first & 0x3f);
        let back = pos + 1 + n;
        if back >= self.end || usize::from(self.lp[back]) != n + 1 {
            return None;
        }
        let text = &self.lp[pos + 1..back];
        if matches!(text.first(), Some(b'-' | b'0'..=b'9')) {
            return None;
        }
        self.pos = back + 1;
        self.seen += 1;
        Some(text)
    }

    /// Where the cursor is, for [`Cursor::rewind`].
    pub fn mark(&self) -> (usize, usize) {
        (self.pos, self.seen)
    }

    /// Goes back to a [`Cursor::mark`] of this cursor.
    pub fn rewind(&mut self, (pos, seen): (usize, usize)) {
        self.pos = pos;
        self.seen = seen;
    }

    /// The next element, `None` at the end.
    #[inline]
    pub fn element(&mut self) -> Result<Option<Element<'a>>, ListpackError> {
        // The three encodings of nearly every element of a stream node (flags, deltas and
        // counts; short strings), whose back-length is one byte: checked here inline, every
        // other case (and every error) below.
        let pos = self.pos;
        if pos < self.end {
            let first = self.lp[pos];
            if first < 0x80 {
                if pos + 2 <= self.end && self.lp[pos + 1] == 1 {
                    self.pos = pos + 2;
                    self.seen += 1;
                    return Ok(Some(Element::Int(i64::from(first))));
                }
            } else if first < 0xc0 {
                let n = usize::from(first & 0x3f);
                let back = pos + 1 + n;
                if back < self.end && usize::from(self.lp[back]) == n + 1 {
                    self.pos = back + 1;
                    self.seen += 1;
                    return Ok(Some(Element::Str(&self.lp[pos + 1..back])));
                }
            } else if first < 0xe0 && pos + 3 <= self.end && self.lp[pos + 2] == 2 {
                // A 13-bit integer (deltas of 128 and more: sequence numbers within a
                // millisecond).
                let u = (i64::from(first & 0x1f) << 8) | i64::from(self.lp[pos + 1]);
                self.pos = pos + 3;
                self.seen += 1;
                return Ok(Some(Element::Int(if u >= 1 << 12 {
                    u - (1 << 13)
                } else {
                    u
                })));
            }
        }
        self.next_any()
    }

    /// [`Cursor::element`] for any encoding.
    #[inline(never)]
    fn next_any(&mut self) -> Result<Option<Element<'a>>, ListpackError> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let pos = self.pos;
        let first = self.lp[pos];
        let (element, enc_len) = match first {
            0x00..=0x7f => (Element::Int(i64::from(first)), 1),
            0x80..=0xbf => {
                let n = usize::from(first & 0x3f);
                (Element::Str(self.take(pos + 1, n)?), 1 + n)
            }
            0xc0..=0xdf => {
                let b = self.take(pos + 1, 1)?;
                let u = (i64::from(first & 0x1f) << 8) | i64::from(b[0]);
                let v = if u >= 1 << 12 { u - (1 << 13) } else { u };
                (Element::Int(v), 2)
            }
            0xe0..=0xef => {
                let b = self.take(pos + 1, 1)?;
                let n = (usize::from(first & 0x0f) << 8) | usize::from(b[0]);
                (Element::Str(self.take(pos + 2, n)?), 2 + n)
            }
            0xf0 => {
                let b = self.take(pos + 1, 4)?;
                let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
                (Element::Str(self.take(pos + 5, n)?), 5 + n)
            }
            0xf1 => {
                let b = self.take(pos + 1, 2)?;
                (Element::Int(i64::from(i16::from_le_bytes([b[0], b[1]]))), 3)
            }
            0xf2 => {
                let b = self.take(pos + 1, 3)?;
                let v = i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8;
                (Element::Int(i64::from(v)), 4)
            }
            0xf3 => {
                let b = self.take(pos + 1, 4)?;
                (
                    Element::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
                    5,
                )
            }
            0xf4 => {
                let b = self.take(pos + 1, 8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                (Element::Int(i64::from_le_bytes(a)), 9)
            }
            _ => return Err(ListpackError::UnknownEncoding(first)),
        };
        let size = backlen_size(enc_len);
        let back = self.take(pos + enc_len, size)?;
        let ok = if size == 1 {
            usize::from(back[0]) == enc_len
        } else {
            back == &backlen_bytes(enc_len).0[..size]
        };
        if !ok {
            return Err(ListpackError::WrongBackLength);
        }
        self.pos = pos + enc_len + size;
        self.seen += 1;
        Ok(Some(element))
    }

    /// After the last element: checks the header's element count against what was read.
    pub fn finish(&self) -> Result<(), ListpackError> {
        let count = u16::from_le_bytes([self.lp[4], self.lp[5]]);
        if count != u16::MAX && usize::from(count) != self.seen {
            return Err(ListpackError::WrongCount {
                header: count,
                actual: self.seen,
            });
        }
        Ok(())
    }
}

/// Decodes and checks a whole listpack: its elements, or what is wrong with it.
pub fn parse(lp: &[u8]) -> Result<Vec<Element<'_>>, ListpackError> {
    let mut cursor = Cursor::new(lp)?;
    let mut out = Vec::new();
    while let Some(element) = cursor.element()? {
        out.push(element);
    }
    cursor.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_round_trips() {
        let ints = [
            0i64,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -32768,
            32767,
            40000,
            -8_388_608,
            8_388_607,
            1 << 24,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
        ];
        let long = vec![b'q'; 5000];
        let mid = vec![b'm'; 100];
        let mut b = Builder::new();
        for v in ints {
            b.int(v);
        }
        b.string(b"hello");
        b.string(&mid);
        b.string(&long);
        b.string(b"123");
        let lp = b.finish();
        let parsed = parse(&lp).unwrap();
        let mut expected: Vec<Element<'_>> = ints.iter().map(|&v| Element::Int(v)).collect();
        expected.extend([
            Element::Str(b"hello"),
            Element::Str(&mid),
            Element::Str(&long),
            Element::Int(123),
        ]);
        assert_eq!(parsed, expected);
    }

    #[test]
    fn a_small_stream_node_has_redis_size() {
        // The listpack `XADD s 1-1 f1 v1 f2 v2` makes (see listpack_size's test): 45 bytes.
        let mut b = Builder::new();
        for v in [1, 0, 2] {
            b.int(v);
        }
        b.string(b"f1");
        b.string(b"f2");
        for v in [0, 2, 0, 0] {
            b.int(v);
        }
        b.string(b"v1");
        b.string(b"v2");
        b.int(5);
        assert_eq!(
            b.finish().len(),
            7 + 2 + 2 + 2 + 4 + 4 + 2 + 2 + 2 + 2 + 4 + 4 + 2
        );
    }

    #[test]
    fn damaged_listpacks_are_refused() {
        let mut b = Builder::new();
        b.string(b"abc");
        let lp = b.finish();
        for cut in 0..lp.len() {
            assert!(parse(&lp[..cut]).is_err());
        }
        let mut bad = lp.clone();
        bad[6 + 4] ^= 1; // back-length
        assert!(parse(&bad).is_err());
    }
}

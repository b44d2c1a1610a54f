//! A compact byte buffer of small strings, the shape of Redis's listpack: one allocation
//! holding every element back to back, each a LEB128 length then its bytes. Hashes keep
//! field-value pairs in one while small (triples with an expiry time once a field had one),
//! sets keep members.
//!
//! Elements are grouped in fixed-size tuples (the `stride`): 1 for a set's members, 2 for a
//! hash's field and value, 3 for field, value and expiry time. A lookup walks the tuples from
//! the start, as Redis's `lpFind` does; the buffer stays small (Redis's `*-max-listpack-*`
//! thresholds), so a walk is a few cache lines.
//!
//! The buffer is allocated at its exact size and starts with a 4-byte little-endian header:
//! the element count, and in its top bit a flag the owning type gives a meaning to (a hash's
//! listpackex). So a `Pack` is one pointer and a length (16 bytes) and a small collection
//! pays for its bytes and nothing more; an empty pack without its flag allocates nothing.
//! Each change reallocates once, as Redis's listpack does.
//!
//! Invariants (checked by [`Pack::check_invariants`]): the buffer is empty, or a header then
//! as many well-formed elements as it counts, a multiple of the stride; a header counting no
//! element has its flag set.

use crate::types::stream::varint;

/// Bytes of the header at the front of a non-empty buffer.
const HEADER: usize = 4;
/// The header's flag bit; the bits below it count the elements.
const FLAG: u32 = 1 << 31;

/// A buffer of length-prefixed elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pack {
    /// Empty, or the element count then the elements, each a LEB128 length and its bytes.
    buf: Box<[u8]>,
}

/// Reads the element at `*pos`, advancing past it. `None` only on a malformed buffer, which
/// the type's own writes never produce.
#[inline]
fn read<'a>(buf: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(varint::get(buf, pos)?).ok()?;
    let end = pos.checked_add(len)?;
    let bytes = buf.get(*pos..end)?;
    *pos = end;
    Some(bytes)
}

/// The header at the front of `buf` (0 for an empty buffer).
fn header_of(buf: &[u8]) -> u32 {
    match buf.first_chunk::<HEADER>() {
        Some(header) => u32::from_le_bytes(*header),
        None => 0,
    }
}

/// The element count in `buf`'s header.
fn count_of(buf: &[u8]) -> usize {
    (header_of(buf) & !FLAG) as usize
}

/// Bytes `tuple` takes encoded.
fn encoded_len(tuple: &[&[u8]]) -> usize {
    tuple
        .iter()
        .map(|e| varint::len(e.len() as u64) + e.len())
        .sum()
}

fn encode(tuple: &[&[u8]], into: &mut Vec<u8>) {
    for e in tuple {
        varint::put(into, e.len() as u64);
        into.extend_from_slice(e);
    }
}

impl Pack {
    /// An empty buffer.
    pub fn new() -> Pack {
        Pack::default()
    }

    /// An empty buffer with its flag set (it allocates its header).
    pub fn flagged() -> Pack {
        Pack {
            buf: Box::new(FLAG.to_le_bytes()),
        }
    }

    /// Whether the flag is set.
    pub fn flag(&self) -> bool {
        header_of(&self.buf) & FLAG != 0
    }

    /// The number of elements.
    pub fn elements(&self) -> usize {
        count_of(&self.buf)
    }

    /// The buffer's size in bytes.
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// Where the elements start.
    fn start(&self) -> usize {
        HEADER.min(self.buf.len())
    }

    /// Applies `change` to the buffer (given with its count, grown by `reserve` bytes first)
    /// and to the count (by `delta` elements), keeping the allocation exact.
    fn edit(&mut self, reserve: usize, delta: isize, change: impl FnOnce(&mut Vec<u8>)) {
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        if buf.is_empty() {
            buf.reserve_exact(HEADER + reserve);
            buf.extend_from_slice(&[0; HEADER]);
        } else {
            buf.reserve_exact(reserve);
        }
        let flag = header_of(&buf) & FLAG;
        let count = count_of(&buf).saturating_add_signed(delta);
        change(&mut buf);
        if count == 0 && flag == 0 {
            return;
        }
        // A count reaching the flag bit would need a buffer of over 2 GiB of elements.
        let count = u32::try_from(count).unwrap_or(u32::MAX).min(FLAG - 1);
        buf[..HEADER].copy_from_slice(&(flag | count).to_le_bytes());
        self.buf = buf.into_boxed_slice();
    }

    /// Every element in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            pos: self.start(),
        }
    }

    /// Every tuple of `stride` elements, with the byte offset where it starts.
    pub fn tuples(&self, stride: usize) -> Tuples<'_> {
        Tuples {
            buf: &self.buf,
            pos: self.start(),
            stride,
        }
    }

    /// The offset of the tuple whose first element is `first`.
    pub fn find(&self, stride: usize, first: &[u8]) -> Option<usize> {
        self.tuples(stride)
            .find(|(_, t)| t.first().is_some_and(|f| *f == first))
            .map(|(at, _)| at)
    }

    /// The tuple of `stride` elements starting at `at`, and the offset after it.
    pub fn tuple_at(&self, at: usize, stride: usize) -> (Vec<&[u8]>, usize) {
        let mut pos = at;
        let mut out = Vec::with_capacity(stride);
        for _ in 0..stride {
            match read(&self.buf, &mut pos) {
                Some(e) => out.push(e),
                None => break,
            }
        }
        (out, pos)
    }

    /// Appends one tuple.
    pub fn push(&mut self, tuple: &[&[u8]]) {
        self.edit(encoded_len(tuple), tuple.len() as isize, |buf| {
            encode(tuple, buf)
        });
    }

    /// Inserts one tuple at byte offset `at` (a tuple boundary).
    pub fn insert(&mut self, at: usize, tuple: &[&[u8]]) {
        let at = at.max(HEADER);
        self.edit(encoded_len(tuple), tuple.len() as isize, |buf| {
            let at = at.min(buf.len());
            // Encoded at the end, then turned into place (no buffer of its own).
            let end = buf.len();
            encode(tuple, buf);
            let added = buf.len() - end;
            buf[at..].rotate_right(added);
        });
    }

    /// Removes the tuple of `stride` elements at `at`.
    pub fn remove(&mut self, at: usize, stride: usize) {
        let (tuple, end) = self.tuple_at(at, stride);
        let n = tuple.len();
        if n == 0 {
            return;
        }
        self.edit(0, -(n as isize), |buf| {
            buf.drain(at..end);
        });
    }

    /// Replaces element `index` (0-based) of the tuple at `at`.
    pub fn replace(&mut self, at: usize, index: usize, with: &[u8]) {
        let mut pos = at;
        for _ in 0..index {
            if read(&self.buf, &mut pos).is_none() {
                return;
            }
        }
        let start = pos;
        if read(&self.buf, &mut pos).is_none() {
            return;
        }
        let mut encoded = Vec::with_capacity(encoded_len(&[with]));
        encode(&[with], &mut encoded);
        let grow = encoded.len().saturating_sub(pos - start);
        self.edit(grow, 0, |buf| {
            buf.splice(start..pos, encoded);
        });
    }

    /// Checks the invariants of the module doc for tuples of `stride`.
    pub fn check_invariants(&self, stride: usize) -> Result<(), String> {
        let mut pos = self.start();
        let mut n = 0;
        while pos < self.buf.len() {
            read(&self.buf, &mut pos).ok_or("malformed element")?;
            n += 1;
        }
        if n != self.elements() {
            return Err(format!("{n} elements held, {} counted", self.elements()));
        }
        if !self.buf.is_empty() && n == 0 && !self.flag() {
            return Err("an empty pack holds a buffer".into());
        }
        if stride == 0 || n % stride != 0 {
            return Err(format!(
                "{n} elements is no whole number of tuples of {stride}"
            ));
        }
        Ok(())
    }
}

/// The elements of a [`Pack`].
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.buf.len() {
            return None;
        }
        read(self.buf, &mut self.pos)
    }
}

/// The tuples of a [`Pack`] with their offsets.
#[derive(Debug, Clone)]
pub struct Tuples<'a> {
    buf: &'a [u8],
    pos: usize,
    stride: usize,
}

impl<'a> Iterator for Tuples<'a> {
    type Item = (usize, Vec<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let at = self.pos;
        let mut tuple = Vec::with_capacity(self.stride);
        for _ in 0..self.stride {
            tuple.push(read(self.buf, &mut self.pos)?);
        }
        Some((at, tuple))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_are_found_replaced_inserted_and_removed() {
        let mut p = Pack::new();
        p.push(&[b"a", b"1"]);
        p.push(&[b"b", b"2"]);
        let at = p.find(2, b"b").unwrap();
        p.replace(at, 1, b"twenty");
        assert_eq!(p.tuple_at(at, 2).0, vec![&b"b"[..], b"twenty"]);
        p.insert(0, &[b"z", b""]);
        let firsts: Vec<&[u8]> = p.tuples(2).map(|(_, t)| t[0]).collect();
        assert_eq!(firsts, vec![&b"z"[..], b"a", b"b"]);
        let at = p.find(2, b"a").unwrap();
        p.remove(at, 2);
        assert_eq!(p.elements(), 4);
        p.check_invariants(2).unwrap();
        assert!(p.find(2, b"a").is_none());
        assert_eq!(std::mem::size_of::<Pack>(), 16);
    }

    #[test]
    fn a_pack_emptied_holds_no_buffer_and_grows_exactly() {
        let mut p = Pack::new();
        p.push(&[b"member"]);
        assert_eq!(p.bytes(), HEADER + 7);
        p.push(&[b"x"]);
        assert_eq!((p.bytes(), p.elements()), (HEADER + 9, 2));
        for _ in 0..2 {
            let at = p.tuples(1).next().unwrap().0;
            p.remove(at, 1);
            p.check_invariants(1).unwrap();
        }
        assert_eq!((p.bytes(), p.elements(), p.iter().count()), (0, 0, 0));
    }

    #[test]
    fn the_flag_survives_every_change_and_emptiness() {
        let mut p = Pack::flagged();
        assert!(p.flag() && p.elements() == 0 && p.iter().next().is_none());
        p.push(&[b"f", b"v", b"t"]);
        p.replace(p.find(3, b"f").unwrap(), 1, b"value");
        assert!(p.flag() && p.elements() == 3);
        p.remove(p.find(3, b"f").unwrap(), 3);
        assert!(p.flag() && p.elements() == 0);
        p.check_invariants(3).unwrap();
        assert!(!Pack::new().flag());
    }
}

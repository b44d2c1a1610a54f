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
//! Invariants (checked by [`Pack::check_invariants`]): the buffer is a whole number of
//! well-formed elements, `elements` of them, a multiple of the stride.

use crate::types::stream::varint;

/// A buffer of length-prefixed elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pack {
    /// The elements, each a LEB128 length and its bytes.
    buf: Vec<u8>,
    /// How many elements `buf` holds.
    elements: usize,
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

impl Pack {
    /// An empty buffer.
    pub fn new() -> Pack {
        Pack::default()
    }

    /// The number of elements.
    pub fn elements(&self) -> usize {
        self.elements
    }

    /// The buffer's size in bytes.
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// Every element in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            pos: 0,
        }
    }

    /// Every tuple of `stride` elements, with the byte offset where it starts.
    pub fn tuples(&self, stride: usize) -> Tuples<'_> {
        Tuples {
            buf: &self.buf,
            pos: 0,
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
        for e in tuple {
            varint::put(&mut self.buf, e.len() as u64);
            self.buf.extend_from_slice(e);
        }
        self.elements += tuple.len();
    }

    /// Inserts one tuple at byte offset `at` (a tuple boundary).
    pub fn insert(&mut self, at: usize, tuple: &[&[u8]]) {
        let mut encoded = Vec::new();
        for e in tuple {
            varint::put(&mut encoded, e.len() as u64);
            encoded.extend_from_slice(e);
        }
        self.buf.splice(at..at, encoded);
        self.elements += tuple.len();
    }

    /// Removes the tuple of `stride` elements at `at`.
    pub fn remove(&mut self, at: usize, stride: usize) {
        let (tuple, end) = self.tuple_at(at, stride);
        let n = tuple.len();
        self.buf.drain(at..end);
        self.elements -= n;
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
        let mut encoded = Vec::with_capacity(with.len() + 2);
        varint::put(&mut encoded, with.len() as u64);
        encoded.extend_from_slice(with);
        self.buf.splice(start..pos, encoded);
    }

    /// Checks the invariants of the module doc for tuples of `stride`.
    pub fn check_invariants(&self, stride: usize) -> Result<(), String> {
        let mut pos = 0;
        let mut n = 0;
        while pos < self.buf.len() {
            read(&self.buf, &mut pos).ok_or("malformed element")?;
            n += 1;
        }
        if n != self.elements {
            return Err(format!("{n} elements held, {} counted", self.elements));
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
    }
}

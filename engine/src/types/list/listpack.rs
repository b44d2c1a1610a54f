//! A list's listpack: Redis's byte layout (see [`crate::rdb::listpack`]) kept in memory, so a
//! small list costs what Redis's costs and its RDB form is the buffer itself.
//!
//! The buffer is always a whole, valid listpack: the 6-byte header (total bytes, element
//! count saturating at 65535), the elements, the 0xff terminator. Positions are byte offsets
//! of an element's first byte. Elements are written as Redis's `lpAppend` writes them (a
//! canonical integer string as an integer), so the bytes equal Redis's for the same history.
//! The functions here trust the buffer: it was built here or checked whole when loaded.

use bytes::Bytes;

use crate::rdb::listpack::{Element, backlen_size, put_str};

/// Bytes of the header.
pub(crate) const HEADER: usize = 6;

/// An empty listpack.
pub(crate) fn new() -> Vec<u8> {
    vec![7, 0, 0, 0, 0, 0, 0xff]
}

/// Its element count (walked when the header saturated).
pub(crate) fn count(lp: &[u8]) -> usize {
    let c = u16::from_le_bytes([lp[4], lp[5]]);
    if c != u16::MAX {
        return usize::from(c);
    }
    let mut n = 0;
    let mut at = first(lp);
    while let Some(p) = at {
        n += 1;
        at = next(lp, p);
    }
    n
}

/// Rewrites the header for `count` elements.
pub(crate) fn set_header(lp: &mut [u8], count: usize) {
    let total = lp.len() as u32;
    lp[..4].copy_from_slice(&total.to_le_bytes());
    let c = count.min(usize::from(u16::MAX)) as u16;
    lp[4..6].copy_from_slice(&c.to_le_bytes());
}

/// Grows the capacity to hold `extra` more bytes, up to the allocator's size class of the need,
/// not doubling: a list's memory stays near its bytes, and a node of at most 8 KB is never held
/// in a bigger class than its bytes take.
fn reserve(lp: &mut Vec<u8>, extra: usize) {
    let need = lp.len() + extra;
    if need > lp.capacity() {
        lp.reserve_exact(size_class(need) - lp.len());
    }
}

/// The smallest of jemalloc's size classes (as `echomq serve` and Redis build it: 8-byte
/// quantum) holding `n` bytes: multiples of 8 to 64, then four classes between powers of two.
fn size_class(n: usize) -> usize {
    if n <= 64 {
        return n.max(1).next_multiple_of(8);
    }
    let log2 = usize::BITS - 1 - (n - 1).leading_zeros();
    n.next_multiple_of(1 << (log2 - 2))
}

/// The first element's position.
pub(crate) fn first(lp: &[u8]) -> Option<usize> {
    (lp.len() > HEADER + 1).then_some(HEADER)
}

/// The last element's position.
pub(crate) fn last(lp: &[u8]) -> Option<usize> {
    prev(lp, lp.len() - 1)
}

/// The element at `pos` and the bytes it takes (encoding, data and back-length).
pub(crate) fn decode(lp: &[u8], pos: usize) -> (Element<'_>, usize) {
    let first = lp[pos];
    let int = |v: i64, enc: usize| (Element::Int(v), enc);
    let (element, enc) = match first {
        0x00..=0x7f => int(i64::from(first), 1),
        0x80..=0xbf => {
            let n = usize::from(first & 0x3f);
            (Element::Str(&lp[pos + 1..pos + 1 + n]), 1 + n)
        }
        0xc0..=0xdf => {
            let u = (i64::from(first & 0x1f) << 8) | i64::from(lp[pos + 1]);
            int(if u >= 1 << 12 { u - (1 << 13) } else { u }, 2)
        }
        0xe0..=0xef => {
            let n = (usize::from(first & 0x0f) << 8) | usize::from(lp[pos + 1]);
            (Element::Str(&lp[pos + 2..pos + 2 + n]), 2 + n)
        }
        0xf0 => {
            let n = u32::from_le_bytes([lp[pos + 1], lp[pos + 2], lp[pos + 3], lp[pos + 4]]);
            let n = n as usize;
            (Element::Str(&lp[pos + 5..pos + 5 + n]), 5 + n)
        }
        0xf1 => int(i64::from(i16::from_le_bytes([lp[pos + 1], lp[pos + 2]])), 3),
        0xf2 => {
            let v = i32::from_le_bytes([0, lp[pos + 1], lp[pos + 2], lp[pos + 3]]) >> 8;
            int(i64::from(v), 4)
        }
        0xf3 => {
            let b = [lp[pos + 1], lp[pos + 2], lp[pos + 3], lp[pos + 4]];
            int(i64::from(i32::from_le_bytes(b)), 5)
        }
        _ => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&lp[pos + 1..pos + 9]);
            int(i64::from_le_bytes(b), 9)
        }
    };
    (element, enc + backlen_size(enc))
}

/// The position after the element at `pos`, if it is not the last.
pub(crate) fn next(lp: &[u8], pos: usize) -> Option<usize> {
    skip(lp, pos, decode(lp, pos).1)
}

/// The position after the element at `pos` of `size` bytes (as [`decode`] measured it), if
/// it is not the last: a forward walk decodes each element once.
#[inline]
pub(crate) fn skip(lp: &[u8], pos: usize, size: usize) -> Option<usize> {
    let after = pos + size;
    (after < lp.len() - 1).then_some(after)
}

/// The position before `pos` (`pos` may be the terminator's), if there is one.
pub(crate) fn prev(lp: &[u8], pos: usize) -> Option<usize> {
    if pos <= HEADER {
        return None;
    }
    // The back-length, read backwards: 7 bits a byte, least significant nearest `pos`.
    let mut at = pos - 1;
    let mut enc = 0usize;
    let mut shift = 0;
    loop {
        let b = lp[at];
        enc |= usize::from(b & 127) << shift;
        if b & 128 == 0 {
            break;
        }
        shift += 7;
        at -= 1;
    }
    Some(pos - enc - backlen_size(enc))
}

/// The position of element `index` (negative: from the end), walking from the nearer end.
pub(crate) fn seek(lp: &[u8], index: i64) -> Option<usize> {
    let n = count(lp) as i64;
    let index = if index < 0 { n + index } else { index };
    if index < 0 || index >= n {
        return None;
    }
    if index < n / 2 {
        let mut p = first(lp)?;
        for _ in 0..index {
            p = next(lp, p)?;
        }
        Some(p)
    } else {
        let mut p = last(lp)?;
        for _ in 0..n - 1 - index {
            p = prev(lp, p)?;
        }
        Some(p)
    }
}

/// The element at `pos` as the bytes Redis replies.
pub(crate) fn bytes_at(lp: &[u8], pos: usize) -> Bytes {
    element_bytes(decode(lp, pos).0)
}

/// An element as the bytes Redis replies (an integer as its decimal text).
pub(crate) fn element_bytes(e: Element<'_>) -> Bytes {
    match e {
        Element::Int(v) => {
            let mut buf = itoa::Buffer::new();
            Bytes::copy_from_slice(buf.format(v).as_bytes())
        }
        Element::Str(s) => Bytes::copy_from_slice(s),
    }
}

/// Whether the element equals `value` (an integer element equals its canonical text).
pub(crate) fn element_eq(e: Element<'_>, value: &[u8]) -> bool {
    match e {
        Element::Str(s) => s == value,
        Element::Int(v) => {
            let mut buf = itoa::Buffer::new();
            buf.format(v).as_bytes() == value
        }
    }
}

/// The bytes `value` takes at most as an element: as a string (an integer's encoding is no
/// longer than its text's).
pub(crate) fn encoded_len_max(value: &[u8]) -> usize {
    let len = value.len();
    let entry = match len {
        0..64 => 1 + len,
        64..4096 => 2 + len,
        _ => 5 + len,
    };
    // The back length: 7 bits a byte.
    entry + (usize::BITS - entry.leading_zeros()).div_ceil(7) as usize
}

/// The bytes `value` takes as an element.
pub(crate) fn encoded(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 6);
    put_str(&mut out, value);
    out
}

/// Inserts `value` before the element at `pos` (or at the end if `pos` is the terminator's).
pub(crate) fn insert(lp: &mut Vec<u8>, pos: usize, value: &[u8]) {
    let n = count(lp);
    if pos == lp.len() - 1 {
        reserve(lp, value.len() + 6);
        lp.pop();
        put_str(lp, value);
        lp.push(0xff);
    } else {
        // Encoded at the end, then turned into place: no buffer of its own, one move of the
        // elements after `pos`.
        reserve(lp, encoded_len_max(value));
        let end = lp.len();
        put_str(lp, value);
        let added = lp.len() - end;
        lp[pos..].rotate_right(added);
    }
    set_header(lp, n + 1);
}

/// Appends `value`.
pub(crate) fn push_back(lp: &mut Vec<u8>, value: &[u8]) {
    let end = lp.len() - 1;
    insert(lp, end, value);
}

/// Prepends `value`.
pub(crate) fn push_front(lp: &mut Vec<u8>, value: &[u8]) {
    insert(lp, HEADER, value);
}

/// Deletes up to `n` elements from `pos` on; returns how many.
pub(crate) fn delete(lp: &mut Vec<u8>, pos: usize, n: usize) -> usize {
    let total = count(lp);
    let mut end = pos;
    let mut gone = 0;
    while gone < n && end < lp.len() - 1 {
        end += decode(lp, end).1;
        gone += 1;
    }
    lp.drain(pos..end);
    set_header(lp, total - gone);
    gone
}

/// Deletes `n` elements from element `start` on (negative: from the end), as Redis's
/// `lpDeleteRange`; returns how many.
pub(crate) fn delete_range(lp: &mut Vec<u8>, start: i64, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    match seek(lp, start) {
        Some(pos) => delete(lp, pos, n),
        None => 0,
    }
}

/// Replaces the element at `pos` with `value`.
pub(crate) fn replace(lp: &mut Vec<u8>, pos: usize, value: &[u8]) {
    let n = count(lp);
    let size = decode(lp, pos).1;
    let enc = encoded(value);
    if enc.len() > size {
        reserve(lp, enc.len() - size);
    }
    lp.splice(pos..pos + size, enc);
    set_header(lp, n);
}

/// Appends every element of `other` to `lp`.
pub(crate) fn merge(lp: &mut Vec<u8>, other: &[u8]) {
    let n = count(lp) + count(other);
    reserve(lp, other.len() - HEADER - 1);
    lp.pop();
    lp.extend_from_slice(&other[HEADER..]);
    set_header(lp, n);
}

/// Trims the capacity to the bytes (after a shrink).
pub(crate) fn shrink(lp: &mut Vec<u8>) {
    if lp.capacity() > lp.len() + lp.len() / 8 + 16 {
        lp.shrink_to_fit();
    }
}

/// Checks the header against the elements.
pub(crate) fn check(lp: &[u8]) -> Result<usize, String> {
    let mut cursor = crate::rdb::listpack::Cursor::new(lp).map_err(|e| e.to_string())?;
    let mut n = 0;
    while cursor.element().map_err(|e| e.to_string())?.is_some() {
        n += 1;
    }
    cursor.finish().map_err(|e| e.to_string())?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_are_jemallocs() {
        let classes: Vec<usize> = [1, 8, 9, 32, 33, 64, 65, 100, 129, 8000, 8192, 8193]
            .into_iter()
            .map(size_class)
            .collect();
        assert_eq!(
            classes,
            [8, 8, 16, 32, 40, 64, 80, 112, 160, 8192, 8192, 10240]
        );
    }
}

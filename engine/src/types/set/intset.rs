//! An intset blob in Redis's encoding (`intset.h`), which is also what RDB and DUMP write:
//!
//! ```text
//! width:u32le  len:u32le  int*   (len integers, ascending, each `width` bytes little-endian)
//! ```
//!
//! The width is 2, 4 or 8: the widest any member ever needed (Redis's `_intsetValueEncoding`).
//! It grows when a wider member comes and never shrinks, as Redis's intset does.
//!
//! Every change builds a new blob at its exact size (one allocation a change, as Redis's
//! intset reallocates): intsets are small (`set-max-intset-entries`).

/// Bytes before the integers: the width and the count.
pub(super) const HEADER: usize = 8;

/// The bytes per integer `n` needs (Redis's `_intsetValueEncoding`).
pub(super) fn width_of(n: i64) -> usize {
    if i16::try_from(n).is_ok() {
        2
    } else if i32::try_from(n).is_ok() {
        4
    } else {
        8
    }
}

fn word(blob: &[u8], at: usize) -> usize {
    blob.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, |b| u32::from_le_bytes(b) as usize)
}

/// The bytes per integer.
pub(super) fn width(blob: &[u8]) -> usize {
    word(blob, 0)
}

/// The integers held.
pub(super) fn len(blob: &[u8]) -> usize {
    word(blob, 4)
}

/// The integer at `i`; 0 past the end (never read: callers stay below [`len`]).
pub(super) fn get(blob: &[u8], i: usize) -> i64 {
    let w = width(blob);
    let at = HEADER + i * w;
    let Some(b) = blob.get(at..at + w) else {
        return 0;
    };
    match w {
        2 => i64::from(i16::from_le_bytes([b[0], b[1]])),
        4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        _ => i64::from_le_bytes(b.try_into().unwrap_or_default()),
    }
}

/// The integers, ascending.
pub(super) fn iter(blob: &[u8]) -> impl Iterator<Item = i64> + '_ {
    (0..len(blob)).map(move |i| get(blob, i))
}

/// Where `n` is (`Ok`) or would go (`Err`).
pub(super) fn search(blob: &[u8], n: i64) -> Result<usize, usize> {
    let (mut lo, mut hi) = (0, len(blob));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match get(blob, mid).cmp(&n) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// A blob of the `count` integers `ints` (ascending) at `width` bytes each.
pub(super) fn encode(count: usize, ints: impl Iterator<Item = i64>, width: usize) -> Vec<u8> {
    let mut blob = Vec::with_capacity(HEADER + count * width);
    blob.extend_from_slice(&(width as u32).to_le_bytes());
    blob.extend_from_slice(&(count as u32).to_le_bytes());
    for n in ints {
        blob.extend_from_slice(&n.to_le_bytes()[..width]);
    }
    blob
}

/// An empty blob of the narrowest width.
pub(super) fn empty() -> Vec<u8> {
    encode(0, std::iter::empty(), 2)
}

/// `blob` with `n` inserted at `at` (from [`search`]), widened if `n` needs it.
pub(super) fn inserted(blob: &[u8], at: usize, n: i64) -> Vec<u8> {
    let all = iter(blob).take(at).chain([n]).chain(iter(blob).skip(at));
    encode(len(blob) + 1, all, width(blob).max(width_of(n)))
}

/// `blob` without the integer at `at`.
pub(super) fn removed(blob: &[u8], at: usize) -> Vec<u8> {
    let all = iter(blob).take(at).chain(iter(blob).skip(at + 1));
    encode(len(blob).saturating_sub(1), all, width(blob))
}

/// Checks a blob: a width of 2, 4 or 8, as many bytes as its count needs, strictly ascending.
pub(super) fn check(blob: &[u8]) -> Result<(), String> {
    let w = width(blob);
    if !matches!(w, 2 | 4 | 8) || blob.len() < HEADER {
        return Err(format!("intset of width {w}, {} bytes", blob.len()));
    }
    if blob.len() != HEADER + len(blob).saturating_mul(w) {
        return Err(format!(
            "intset counting {} of {w} bytes in {} bytes",
            len(blob),
            blob.len()
        ));
    }
    let ints: Vec<i64> = iter(blob).collect();
    if ints.windows(2).any(|p| p[0] >= p[1]) {
        return Err("intset not strictly ascending".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_redis_intsets() {
        let blob = inserted(&inserted(&empty(), 0, 5), 0, -1);
        assert_eq!(blob, [2, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 5, 0]);
        check(&blob).unwrap();
        let wide = inserted(&blob, 2, 70_000);
        assert_eq!(width(&wide), 4);
        assert_eq!(iter(&wide).collect::<Vec<_>>(), [-1, 5, 70_000]);
        let narrower = removed(&wide, 2);
        assert_eq!(width(&narrower), 4, "a width never shrinks");
        assert_eq!(search(&narrower, 5), Ok(1));
        assert_eq!(search(&narrower, 4), Err(1));
        let big = inserted(&narrower, 0, i64::MIN);
        assert_eq!((width(&big), len(&big)), (8, 3));
        assert_eq!(iter(&big).collect::<Vec<_>>(), [i64::MIN, -1, 5]);
        check(&big).unwrap();
    }

    #[test]
    fn ill_formed_blobs_fail_the_check() {
        for bad in [
            &[][..],
            &[3, 0, 0, 0, 0, 0, 0, 0],
            &[2, 0, 0, 0, 1, 0, 0, 0],
            &[2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 5, 0],
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
    }
}

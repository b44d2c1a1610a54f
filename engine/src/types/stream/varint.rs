//! LEB128 variable-length integers: the only number encoding inside a node buffer.
//!
//! Seven bits per byte, low groups first, high bit set on every byte but the last. Small
//! deltas and lengths (the common case) take one byte.

/// Appends `v` to `out`.
#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes that [`put`] writes for `v`.
#[inline]
pub fn len(v: u64) -> usize {
    // 1 byte per started group of 7 bits; 0 still takes one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Reads a varint at `*pos`, advancing it. Returns `None` if the buffer ends first or the
/// number does not fit 64 bits (only possible on a corrupt buffer). Always inlined: node scans
/// read several per entry, and the one-byte case is a compare.
#[inline(always)]
pub fn get(buf: &[u8], pos: &mut usize) -> Option<u64> {
    // One byte (small deltas and lengths): the common case, without the loop's checks.
    let first = *buf.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    let mut value: u64 = 0;
    let mut shift = 0u32;
    loop {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips_and_len_matches(v in any::<u64>()) {
            let mut buf = Vec::new();
            put(&mut buf, v);
            prop_assert_eq!(buf.len(), len(v));
            let mut pos = 0;
            prop_assert_eq!(get(&buf, &mut pos), Some(v));
            prop_assert_eq!(pos, buf.len());
        }
    }

    #[test]
    fn truncated_and_overlong_inputs_are_rejected() {
        assert_eq!(get(&[0x80], &mut 0), None);
        assert_eq!(get(&[0xff; 10], &mut 0), None);
        assert_eq!(
            get(
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                &mut 0
            ),
            Some(u64::MAX)
        );
        assert_eq!(
            get(
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
                &mut 0
            ),
            None
        );
    }
}

//! Keys of at most [`SHORT`] bytes (most keys: `redis-benchmark`'s, `user:1234`,
//! `counter:000000012345`) as three machine words, so comparing or fingerprinting one is a few
//! loads and compares rather than a call to `memcmp`.
//!
//! [`words`] reads a short key without a loop: above sixteen bytes its first sixteen and its
//! last eight; from eight, its first and last eight (overlapping below sixteen); below eight its
//! first and last four; below four its first, middle and last byte. Each byte of the key is in
//! one of the words, so the length and the words determine the key ([`bytes_of`] gives it back;
//! a test checks the round trip at every length).

/// The longest key [`words`] reads.
pub(crate) const SHORT: usize = 24;

#[inline(always)]
fn load8(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn load4(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    u64::from(u32::from_le_bytes(word))
}

/// The words of a key of at most [`SHORT`] bytes (see the module doc).
pub(crate) type Words = [u64; 3];

/// The words of a key of at most [`SHORT`] bytes (see the module doc).
#[inline(always)]
pub(crate) fn words(bytes: &[u8]) -> Words {
    let n = bytes.len();
    debug_assert!(n <= SHORT);
    if n > 16 {
        [load8(bytes), load8(&bytes[8..]), load8(&bytes[n - 8..])]
    } else if n >= 8 {
        [load8(bytes), load8(&bytes[n - 8..]), 0]
    } else if n >= 4 {
        [load4(bytes), load4(&bytes[n - 4..]), 0]
    } else if n > 0 {
        let three =
            u64::from(bytes[0]) | (u64::from(bytes[n / 2]) << 8) | (u64::from(bytes[n - 1]) << 16);
        [three, 0, 0]
    } else {
        [0; 3]
    }
}

/// The key of `len` bytes (at most [`SHORT`]) whose words are `words`.
pub(crate) fn bytes_of(len: usize, words: Words) -> Vec<u8> {
    let [first, last, tail] = words;
    let mut bytes = vec![0u8; len];
    if len > 16 {
        bytes[len - 8..].copy_from_slice(&tail.to_le_bytes());
        bytes[8..16].copy_from_slice(&last.to_le_bytes());
        bytes[..8].copy_from_slice(&first.to_le_bytes());
    } else if len >= 8 {
        bytes[len - 8..].copy_from_slice(&last.to_le_bytes());
        bytes[..8].copy_from_slice(&first.to_le_bytes());
    } else if len >= 4 {
        bytes[len - 4..].copy_from_slice(&last.to_le_bytes()[..4]);
        bytes[..4].copy_from_slice(&first.to_le_bytes()[..4]);
    } else if len > 0 {
        let three = first.to_le_bytes();
        bytes[len - 1] = three[2];
        bytes[len / 2] = three[1];
        bytes[0] = three[0];
    }
    bytes
}

/// Whether `a` and `b` are the same bytes: from eight to [`SHORT`] bytes, by the words that
/// hold them (below eight, the library's comparison is as short).
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=SHORT).contains(&n) {
        return load8(a) == load8(b)
            && load8(&a[n - 8..]) == load8(&b[n - 8..])
            && (n <= 16 || load8(&a[8..]) == load8(&b[8..]));
    }
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_key_comes_back_from_its_words_at_every_length() {
        let source: Vec<u8> = (1..=SHORT as u8).map(|b| b.wrapping_mul(37)).collect();
        for len in 0..=SHORT {
            let key = &source[..len];
            assert_eq!(bytes_of(len, words(key)), key, "{len}");
        }
    }

    #[test]
    fn every_byte_counts_at_every_length() {
        for len in 0..=SHORT + 3 {
            let key: Vec<u8> = (0..len as u8).collect();
            assert!(same_bytes(&key, &key.clone()));
            for at in 0..len {
                let mut other = key.clone();
                other[at] ^= 0x80;
                assert!(!same_bytes(&key, &other), "{len} {at}");
            }
            let mut longer = key.clone();
            longer.push(0);
            assert!(!same_bytes(&key, &longer));
        }
    }
}

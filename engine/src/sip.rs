//! SipHash-1-3 of one byte string under a secret random key: how the keyspace and the big
//! collections hash their keys (Redis's `dict.c` hashes with SipHash under a random seed too, so
//! that clients cannot choose keys that collide).
//!
//! SipHash-1-3 is what the standard library's `RandomState` hashers compute today (the byte
//! count's low byte in the last block); here it is computed in one pass over a slice the caller
//! already holds: the streaming `Hasher` buffers partial words between writes, which a key
//! hashed whole never needs, and costs about twice the instructions on a 16-byte key.
//!
//! The key is drawn from the standard library's own per-process secret
//! ([`std::hash::RandomState`]), so a hash is as unpredictable to a client as `RandomState`'s.

use std::hash::{BuildHasher, RandomState};

/// A secret 128-bit SipHash key.
#[derive(Clone, Copy)]
pub(crate) struct SipKey {
    k0: u64,
    k1: u64,
}

impl std::fmt::Debug for SipKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A key printed is a key leaked.
        f.write_str("SipKey(..)")
    }
}

impl SipKey {
    /// A fresh key, unpredictable from outside the process.
    pub(crate) fn random() -> SipKey {
        let seed = RandomState::new();
        SipKey {
            k0: seed.hash_one(0x6b30_u64),
            k1: seed.hash_one(0x6b31_u64),
        }
    }

    /// SipHash-1-3 of `bytes` (no length prefix).
    #[inline]
    pub(crate) fn hash(&self, bytes: &[u8]) -> u64 {
        siphash::<1, 3>(self.k0, self.k1, bytes)
    }
}

/// The four words of SipHash's state.
struct State([u64; 4]);

impl State {
    #[inline(always)]
    fn round(&mut self) {
        let [v0, v1, v2, v3] = &mut self.0;
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13);
        *v1 ^= *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16);
        *v3 ^= *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21);
        *v3 ^= *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17);
        *v1 ^= *v2;
        *v2 = v2.rotate_left(32);
    }

    #[inline(always)]
    fn compress<const C: usize>(&mut self, word: u64) {
        self.0[3] ^= word;
        for _ in 0..C {
            self.round();
        }
        self.0[0] ^= word;
    }
}

/// The last 0 to 7 bytes as a little-endian word.
#[inline(always)]
fn tail_word(tail: &[u8]) -> u64 {
    debug_assert!(tail.len() < 8);
    let mut word = 0u64;
    let mut at = 0;
    if tail.len() >= 4 {
        let mut four = [0u8; 4];
        four.copy_from_slice(&tail[..4]);
        word = u64::from(u32::from_le_bytes(four));
        at = 4;
    }
    if tail.len() - at >= 2 {
        let two = [tail[at], tail[at + 1]];
        word |= u64::from(u16::from_le_bytes(two)) << (8 * at);
        at += 2;
    }
    if at < tail.len() {
        word |= u64::from(tail[at]) << (8 * at);
    }
    word
}

/// SipHash-C-D of `bytes` under the key `(k0, k1)`.
#[inline(always)]
fn siphash<const C: usize, const D: usize>(k0: u64, k1: u64, bytes: &[u8]) -> u64 {
    let mut state = State([
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ]);
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(chunk);
        state.compress::<C>(u64::from_le_bytes(eight));
    }
    // The length's low byte tops the last word, as the reference's `b = inlen << 56`.
    let last = ((bytes.len() as u64) << 56) | tail_word(words.remainder());
    state.compress::<C>(last);
    state.0[2] ^= 0xff;
    for _ in 0..D {
        state.round();
    }
    let [v0, v1, v2, v3] = state.0;
    v0 ^ v1 ^ v2 ^ v3
}

#[cfg(test)]
mod tests {
    use std::hash::Hasher;

    use super::*;

    #[test]
    fn matches_the_reference_vector() {
        // SipHash-2-4 of the bytes 0..15 under the key 0..16, from the SipHash paper
        // (Aumasson and Bernstein, appendix A).
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let message: Vec<u8> = (0..15).collect();
        assert_eq!(siphash::<2, 4>(k0, k1, &message), 0xa129_ca61_49be_45e5);
    }

    #[test]
    #[allow(deprecated)]
    fn matches_the_standard_streaming_hasher_at_every_length() {
        // std's `SipHasher` is SipHash-2-4 through the same streaming code as `RandomState`'s
        // SipHash-1-3; every tail length and word count is covered.
        let (k0, k1) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
        let bytes: Vec<u8> = (0..70u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in 0..bytes.len() {
            let mut std = std::hash::SipHasher::new_with_keys(k0, k1);
            std.write(&bytes[..len]);
            assert_eq!(
                siphash::<2, 4>(k0, k1, &bytes[..len]),
                std.finish(),
                "{len}"
            );
        }
    }

    #[test]
    fn keys_differ_and_hashes_depend_on_them() {
        let (a, b) = (SipKey::random(), SipKey::random());
        assert!(a.k0 != b.k0 || a.k1 != b.k1);
        assert_ne!(a.hash(b"key:000000012345"), b.hash(b"key:000000012345"));
        assert_ne!(a.hash(b"a"), a.hash(b"b"));
        assert_ne!(a.hash(b""), a.hash(b"\0"));
        assert_eq!(format!("{a:?}"), "SipKey(..)");
    }
}

//! IDMPAUTO's IID: a 16-byte digest of an entry's field/value pairs, the same bytes Redis 8.8
//! derives, so an IID from IDMPAUTO and the same 16 bytes given to IDMP are one IID.
//!
//! Each pair is hashed with XXH3-128 (seed 0) over `field`, then the field's length as 8
//! little-endian bytes (Redis hashes its `long`), then `value`. The pair digests are combined
//! so that pair order does not matter: with `sum` the wrapping sum and `xor` the xor of the
//! pairs' low and high halves, the IID is `low = sum_lo ^ rotl(xor_hi, 1)`,
//! `high = sum_hi ^ rotl(xor_lo, 1)`, stored as `low` then `high`, each little-endian (the
//! layout of Redis's `XXH128_hash_t` on a little-endian machine).

use xxhash_rust::xxh3::Xxh3;

/// Bytes of an IDMPAUTO IID.
pub const AUTO_IID_BYTES: usize = 16;

/// The IID IDMPAUTO gives the entry `fields` (`field, value, field, value, ...`; an odd last
/// element is ignored, as arity checking rejects it first).
pub fn auto_iid<T: AsRef<[u8]>>(fields: &[T]) -> [u8; AUTO_IID_BYTES] {
    let (mut sum_lo, mut sum_hi, mut xor_lo, mut xor_hi) = (0u64, 0u64, 0u64, 0u64);
    let mut state = Xxh3::new();
    for pair in fields.chunks_exact(2) {
        let (field, value) = (pair[0].as_ref(), pair[1].as_ref());
        state.reset();
        state.update(field);
        state.update(&(field.len() as u64).to_le_bytes());
        state.update(value);
        let digest = state.digest128();
        let (lo, hi) = (digest as u64, (digest >> 64) as u64);
        sum_lo = sum_lo.wrapping_add(lo);
        sum_hi = sum_hi.wrapping_add(hi);
        xor_lo ^= lo;
        xor_hi ^= hi;
    }
    let low = sum_lo ^ xor_hi.rotate_left(1);
    let high = sum_hi ^ xor_lo.rotate_left(1);
    let mut iid = [0u8; AUTO_IID_BYTES];
    iid[..8].copy_from_slice(&low.to_le_bytes());
    iid[8..].copy_from_slice(&high.to_le_bytes());
    iid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_order_does_not_matter_but_pairing_does() {
        let a = auto_iid(&["a", "1", "b", "2"]);
        assert_eq!(a, auto_iid(&["b", "2", "a", "1"]));
        assert_ne!(a, auto_iid(&["a", "2", "b", "1"]));
        // The field length separates field from value: "ab"+"c" is not "a"+"bc".
        assert_ne!(auto_iid(&["ab", "c"]), auto_iid(&["a", "bc"]));
        assert_ne!(auto_iid(&["a", "1"]), auto_iid(&["a", "1", "a", "1"]));
    }

    #[test]
    fn one_pair_is_its_digest_folded_with_itself() {
        // With one pair, sum == xor == the digest.
        let mut input = b"f".to_vec();
        input.extend_from_slice(&1u64.to_le_bytes());
        input.extend_from_slice(b"v");
        let d = xxhash_rust::xxh3::xxh3_128(&input);
        let (lo, hi) = (d as u64, (d >> 64) as u64);
        let iid = auto_iid(&["f", "v"]);
        assert_eq!(iid[..8], (lo ^ hi.rotate_left(1)).to_le_bytes());
        assert_eq!(iid[8..], (hi ^ lo.rotate_left(1)).to_le_bytes());
    }
}

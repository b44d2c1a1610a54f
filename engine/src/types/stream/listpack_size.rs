//! The byte size Redis's listpack would have for a node, used only to decide node splits.
//!
//! echomq stores nodes in its own, smaller encoding ([`crate::node`]), but Redis starts a new node
//! when `lpBytes(tail) + fields_and_values_len >= stream-node-max-bytes`, so to reproduce node
//! boundaries exactly (and with them `~` trimming and `radix-tree-keys`) we keep the size the
//! listpack would have. The model (`docs/reference/streams.md` §1.3, checked against Redis 7.0.15):
//! - header 6 bytes, terminator 1 byte;
//! - each element costs `enc + backlen(enc)`;
//! - strings that parse strictly as i64 (and are shorter than 21 bytes) are stored as integers.

use crate::id::string_to_i64;

/// Listpack header (total bytes u32 + element count u16) plus the end byte.
pub const LISTPACK_FIXED_BYTES: u64 = 6 + 1;

/// Bytes used by the encoding of an integer element, before its back-length.
fn int_enc_len(v: i64) -> u64 {
    match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32_768..=32_767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    }
}

/// Bytes used by the back-length that follows an element encoding of `enc` bytes.
fn backlen_len(enc: u64) -> u64 {
    match enc {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Total bytes of an integer element.
pub fn int_element_bytes(v: i64) -> u64 {
    let enc = int_enc_len(v);
    enc + backlen_len(enc)
}

/// Total bytes of an element holding `s` (stored as an integer when it is one).
pub fn str_element_bytes(s: &[u8]) -> u64 {
    if s.len() < 21
        && let Some(v) = string_to_i64(s)
    {
        return int_element_bytes(v);
    }
    let len = s.len() as u64;
    let enc = match len {
        0..=63 => 1 + len,
        64..=4095 => 2 + len,
        _ => 5 + len,
    };
    enc + backlen_len(enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_take_the_smallest_encoding() {
        assert_eq!(int_element_bytes(0), 2);
        assert_eq!(int_element_bytes(127), 2);
        assert_eq!(int_element_bytes(128), 3);
        assert_eq!(int_element_bytes(-1), 3);
        assert_eq!(int_element_bytes(40_000), 5);
        assert_eq!(int_element_bytes(i64::MIN), 10);
    }

    #[test]
    fn strings_are_stored_as_integers_when_they_parse_strictly() {
        assert_eq!(str_element_bytes(b"5"), 2);
        assert_eq!(str_element_bytes(b"05"), 4);
        assert_eq!(str_element_bytes(b"v1"), 4);
        assert_eq!(str_element_bytes(&[b'x'; 63]), 65);
        assert_eq!(str_element_bytes(&[b'x'; 64]), 66 + 1);
        assert_eq!(str_element_bytes(&[b'x'; 4096]), 4101 + 2);
    }
}

//! Redis Cluster's key slots: CRC16 (XMODEM: polynomial 0x1021, initial value 0, no
//! reflection) of a key modulo [`SLOTS`], where a hash tag narrows the hashed part: when the
//! key holds a `{` followed later by a `}` with at least one byte between them, only the bytes
//! between the first `{` and the first `}` after it are hashed. [`pattern_slot`] is the slot
//! every key a glob pattern can name falls in, when there is one (SORT's BY and GET patterns in
//! cluster mode).

/// The number of slots.
pub const SLOTS: u16 = 16384;

/// CRC16/XMODEM's table, built at compile time.
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = (byte as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[byte] = crc;
        byte += 1;
    }
    table
};

/// CRC16/XMODEM of `bytes`.
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The part of `key` that is hashed: the hash tag's content when it has a non-empty one, the
/// whole key otherwise.
pub fn hashed_part(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    let rest = &key[open + 1..];
    match rest.iter().position(|&b| b == b'}') {
        Some(close) if close > 0 => &rest[..close],
        _ => key,
    }
}

/// The slot `key` hashes to.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hashed_part(key)) % SLOTS
}

/// The slot every key matching `pattern` hashes to, if one (Redis's `patternHashSlot`): a
/// non-empty hash tag closed before any wildcard (`*`, `?`, `[`) or escape fixes it.
pub fn pattern_slot(pattern: &[u8]) -> Option<u16> {
    let mut open = None;
    for (i, &b) in pattern.iter().enumerate() {
        match (b, open) {
            (b'*' | b'?' | b'[' | b'\\', _) => return None,
            (b'{', None) => open = Some(i),
            (b'}', Some(at)) if i == at + 1 => return None,
            (b'}', Some(at)) => return Some(crc16(&pattern[at + 1..i]) % SLOTS),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_has_a_slot_only_through_a_tag_closed_before_any_wildcard() {
        assert_eq!(pattern_slot(b"{user1}*"), Some(key_slot(b"{user1}x")));
        assert_eq!(pattern_slot(b"w*"), None);
        assert_eq!(pattern_slot(b"{a*}"), None);
        assert_eq!(pattern_slot(b"{}*"), None);
        assert_eq!(pattern_slot(b"\\{a}"), None);
        assert_eq!(pattern_slot(b"x{ab}?"), Some(key_slot(b"ab")));
    }
}

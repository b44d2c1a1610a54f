//! CRC-64/Jones, the checksum Redis puts after an RDB file and a DUMP payload.
//!
//! Parameters (as Redis's `crc64.c` documents them): polynomial `0xad93d23594c935a9`, input and
//! output reflected, initial value 0, no final xor; `crc64(0, "123456789") =
//! 0xe9c6d914c4b8d9ca`. Computed eight bytes at a time ("slice by 8") from tables built at
//! compile time, on three lanes at once for long inputs (joined with [`combine`]). Stored
//! little-endian.
//!
//! [`combine`] gives the CRC of `a ++ b` from the CRCs of `a` and `b` and the length of `b`
//! (zlib's `crc32_combine` method: with initial value 0 and no final xor, the CRC is the
//! message times `x^64` modulo the polynomial, so `crc(a ++ b) = crc(a) * x^(8 len(b)) +
//! crc(b)`), so parts written on different threads are each checksummed on their own.

/// The Jones polynomial, bit-reflected (the table form for a reflected CRC).
const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

/// `TABLES[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
static TABLES: [[u64; 256]; 8] = build_tables();

const fn build_tables() -> [[u64; 256]; 8] {
    let mut tables = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = tables[0][(prev & 0xff) as usize] ^ (prev >> 8);
            i += 1;
        }
        k += 1;
    }
    tables
}

/// Inputs from which [`crc64`] runs three lanes at once.
const LANES_MIN: usize = 64 * 1024;

/// Continues `crc` over `data` (start with 0).
///
/// A long input is cut into three lanes whose CRCs are computed in one loop, eight bytes of
/// each per step: slice-by-8 is bound by the latency of its table lookups, and three
/// independent chains keep the core busy. The lanes are joined with [`combine`] (about as
/// costly as a few kilobytes of input, hence [`LANES_MIN`]).
pub fn crc64(crc: u64, data: &[u8]) -> u64 {
    if data.len() < LANES_MIN {
        return serial(crc, data);
    }
    let lane = data.len() / 3 / 8 * 8;
    let (a, rest) = data.split_at(lane);
    let (b, rest) = rest.split_at(lane);
    let (c, tail) = rest.split_at(lane);
    let (mut ca, mut cb, mut cc) = (crc, 0, 0);
    for ((wa, wb), wc) in a
        .chunks_exact(8)
        .zip(b.chunks_exact(8))
        .zip(c.chunks_exact(8))
    {
        ca = step(ca, wa);
        cb = step(cb, wb);
        cc = step(cc, wc);
    }
    let cc = serial(cc, tail);
    let ab = combine(ca, cb, lane as u64);
    combine(ab, cc, (lane + tail.len()) as u64)
}

/// `crc` over one eight-byte word.
#[inline(always)]
fn step(crc: u64, word: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(word);
    let v = crc ^ u64::from_le_bytes(bytes);
    TABLES[7][(v & 0xff) as usize]
        ^ TABLES[6][((v >> 8) & 0xff) as usize]
        ^ TABLES[5][((v >> 16) & 0xff) as usize]
        ^ TABLES[4][((v >> 24) & 0xff) as usize]
        ^ TABLES[3][((v >> 32) & 0xff) as usize]
        ^ TABLES[2][((v >> 40) & 0xff) as usize]
        ^ TABLES[1][((v >> 48) & 0xff) as usize]
        ^ TABLES[0][(v >> 56) as usize]
}

/// Slice-by-8 on one chain.
fn serial(mut crc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        crc = step(crc, chunk);
    }
    for &byte in chunks.remainder() {
        crc = TABLES[0][((crc ^ u64::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// `a * b` modulo the polynomial, in the reflected representation (bit 63 is `x^0`).
const fn mul_mod(a: u64, mut b: u64) -> u64 {
    let mut product = 0;
    let mut bit = 1u64 << 63;
    while bit != 0 {
        if a & bit != 0 {
            product ^= b;
        }
        bit >>= 1;
        b = if b & 1 == 1 {
            (b >> 1) ^ POLY_REFLECTED
        } else {
            b >> 1
        };
    }
    product
}

/// `X_POW_2K[k]`: `x^(2^k)` modulo the polynomial, reflected.
static X_POW_2K: [u64; 64] = build_powers();

const fn build_powers() -> [u64; 64] {
    let mut powers = [0u64; 64];
    // x^1, reflected.
    powers[0] = 1 << 62;
    let mut k = 1;
    while k < 64 {
        powers[k] = mul_mod(powers[k - 1], powers[k - 1]);
        k += 1;
    }
    powers
}

/// The CRC of `a ++ b`, given `crc_a = crc64(0, a)`, `crc_b = crc64(0, b)` and `len_b =
/// b.len()`.
pub fn combine(crc_a: u64, crc_b: u64, len_b: u64) -> u64 {
    // x^(8 len_b): multiply the powers x^(2^k) for the bits of 8 len_b (k from 3).
    let mut shift = 1u64 << 63;
    let mut n = len_b;
    let mut k = 3;
    while n != 0 {
        if n & 1 == 1 {
            shift = mul_mod(X_POW_2K[k % 64], shift);
        }
        n >>= 1;
        k += 1;
    }
    mul_mod(shift, crc_a) ^ crc_b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value_of_the_jones_crc() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn chunked_equals_bytewise() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut bytewise = 0;
        for b in &data {
            bytewise = crc64(bytewise, std::slice::from_ref(b));
        }
        assert_eq!(crc64(0, &data), bytewise);
        let (a, b) = data.split_at(333);
        assert_eq!(crc64(crc64(0, a), b), bytewise);
    }

    #[test]
    fn three_lanes_give_the_one_chain_crc() {
        for len in [
            LANES_MIN - 1,
            LANES_MIN,
            LANES_MIN + 1,
            LANES_MIN + 7,
            3 * LANES_MIN + 5,
        ] {
            let data: Vec<u8> = (0..len as u32).map(|i| (i * 131 % 251) as u8).collect();
            assert_eq!(crc64(0, &data), serial(0, &data), "{len}");
            assert_eq!(
                crc64(0x1234_5678, &data),
                serial(0x1234_5678, &data),
                "{len}"
            );
        }
    }

    #[test]
    fn combined_parts_give_the_whole_crc() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 131 % 251) as u8).collect();
        let whole = crc64(0, &data);
        for cut in [0, 1, 7, 8, 9, 333, 4096, 4999, 5000] {
            let (a, b) = data.split_at(cut);
            assert_eq!(
                combine(crc64(0, a), crc64(0, b), b.len() as u64),
                whole,
                "{cut}"
            );
        }
        assert_eq!(combine(0x1234, 0, 0), 0x1234);
    }
}

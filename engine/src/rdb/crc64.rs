//! CRC-64/Jones, the checksum Redis puts after an RDB file and a DUMP payload.
//!
//! Parameters (as Redis's `crc64.c` documents them): polynomial `0xad93d23594c935a9`, input and
//! output reflected, initial value 0, no final xor; `crc64(0, "123456789") =
//! 0xe9c6d914c4b8d9ca`. Computed eight bytes at a time ("slice by 8") from tables built at
//! compile time. Stored little-endian.

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

/// Continues `crc` over `data` (start with 0).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = crc ^ u64::from_le_bytes(word);
        crc = TABLES[7][(v & 0xff) as usize]
            ^ TABLES[6][((v >> 8) & 0xff) as usize]
            ^ TABLES[5][((v >> 16) & 0xff) as usize]
            ^ TABLES[4][((v >> 24) & 0xff) as usize]
            ^ TABLES[3][((v >> 32) & 0xff) as usize]
            ^ TABLES[2][((v >> 40) & 0xff) as usize]
            ^ TABLES[1][((v >> 48) & 0xff) as usize]
            ^ TABLES[0][(v >> 56) as usize];
    }
    for &byte in chunks.remainder() {
        crc = TABLES[0][((crc ^ u64::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
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
}

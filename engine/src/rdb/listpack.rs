//! Redis's listpack, the byte layout of a stream node inside an RDB file.
//!
//! ```text
//! listpack := total_bytes:u32le count:u16le element* 0xFF
//! element  := encoding data backlen
//! ```
//! Encodings: `0xxxxxxx` 7-bit unsigned int; `10llllll` string up to 63 bytes; `110xxxxx x` 13-bit
//! signed int; `1110llll l` string up to 4095 bytes; `0xF0` + u32le length, string; `0xF1`..`0xF4`
//! 16-, 24-, 32-, 64-bit signed ints, little-endian. `backlen` is the length of `encoding data`
//! in 1 to 5 bytes, 7 bits each, most significant first, every byte but the first with bit 7 set.
//! `count` is the element count, or 65535 when there are that many or more.
//!
//! The writer stores a string that is a canonical `i64` of fewer than 21 bytes as an integer,
//! in the smallest encoding, as Redis's `lpAppend` does, so the bytes equal Redis's. The reader
//! checks the header, every element's bounds and back-length and the terminator before it
//! yields anything.

use crate::id::string_to_i64;

/// One listpack element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element<'a> {
    /// An integer.
    Int(i64),
    /// A string.
    Str(&'a [u8]),
}

impl Element<'_> {
    /// The element as Redis returns it: an integer as its decimal text.
    pub fn to_bytes(self) -> Vec<u8> {
        match self {
            Element::Int(v) => v.to_string().into_bytes(),
            Element::Str(s) => s.to_vec(),
        }
    }
}

/// Builds a listpack.
#[derive(Debug)]
pub struct Builder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

fn backlen(len: usize, out: &mut Vec<u8>) {
    let l = len as u64;
    if l <= 127 {
        out.push(l as u8);
    } else if l < 16383 {
        out.extend_from_slice(&[(l >> 7) as u8, (l & 127) as u8 | 128]);
    } else if l < 2_097_151 {
        out.extend_from_slice(&[
            (l >> 14) as u8,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    } else if l < 268_435_455 {
        out.extend_from_slice(&[
            (l >> 21) as u8,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    } else {
        out.extend_from_slice(&[
            (l >> 28) as u8,
            ((l >> 21) & 127) as u8 | 128,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    }
}

impl Builder {
    /// An empty listpack.
    pub fn new() -> Builder {
        Builder {
            buf: vec![0; 6],
            count: 0,
        }
    }

    /// Appends an integer element.
    pub fn int(&mut self, v: i64) {
        let start = self.buf.len();
        match v {
            0..=127 => self.buf.push(v as u8),
            -4096..=4095 => {
                let u = if v < 0 { (1 << 13) + v } else { v } as u16;
                self.buf
                    .extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8]);
            }
            -32_768..=32_767 => {
                self.buf.push(0xf1);
                self.buf.extend_from_slice(&(v as i16).to_le_bytes());
            }
            -8_388_608..=8_388_607 => {
                self.buf.push(0xf2);
                self.buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
            }
            -2_147_483_648..=2_147_483_647 => {
                self.buf.push(0xf3);
                self.buf.extend_from_slice(&(v as i32).to_le_bytes());
            }
            _ => {
                self.buf.push(0xf4);
                self.buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        let len = self.buf.len() - start;
        backlen(len, &mut self.buf);
        self.count += 1;
    }

    /// Appends a string element (as an integer when it is one).
    pub fn string(&mut self, s: &[u8]) {
        if s.len() < 21
            && let Some(v) = string_to_i64(s)
        {
            self.int(v);
            return;
        }
        let start = self.buf.len();
        let len = s.len();
        if len < 64 {
            self.buf.push(0x80 | len as u8);
        } else if len < 4096 {
            self.buf
                .extend_from_slice(&[0xe0 | (len >> 8) as u8, len as u8]);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(len as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        let enc = self.buf.len() - start;
        backlen(enc, &mut self.buf);
        self.count += 1;
    }

    /// The finished listpack.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xff);
        let total = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let count = self.count.min(usize::from(u16::MAX)) as u16;
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// Decodes and checks a whole listpack: its elements, or what is wrong with it.
pub fn parse(lp: &[u8]) -> Result<Vec<Element<'_>>, String> {
    if lp.len() < 7 {
        return Err("listpack shorter than its header".into());
    }
    let total = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]) as usize;
    if total != lp.len() {
        return Err(format!(
            "listpack header says {total} bytes, it has {}",
            lp.len()
        ));
    }
    let count = u16::from_le_bytes([lp[4], lp[5]]);
    let end = lp.len() - 1;
    if lp[end] != 0xff {
        return Err("listpack without its terminator".into());
    }
    let mut out = Vec::new();
    let mut pos = 6;
    let take = |from: usize, n: usize| -> Result<&[u8], String> {
        from.checked_add(n)
            .filter(|&e| e <= end)
            .map(|e| &lp[from..e])
            .ok_or_else(|| "listpack element past its end".to_string())
    };
    while pos < end {
        let first = lp[pos];
        let (element, enc_len) = match first {
            0x00..=0x7f => (Element::Int(i64::from(first)), 1),
            0x80..=0xbf => {
                let n = usize::from(first & 0x3f);
                (Element::Str(take(pos + 1, n)?), 1 + n)
            }
            0xc0..=0xdf => {
                let b = take(pos + 1, 1)?;
                let u = (i64::from(first & 0x1f) << 8) | i64::from(b[0]);
                let v = if u >= 1 << 12 { u - (1 << 13) } else { u };
                (Element::Int(v), 2)
            }
            0xe0..=0xef => {
                let b = take(pos + 1, 1)?;
                let n = (usize::from(first & 0x0f) << 8) | usize::from(b[0]);
                (Element::Str(take(pos + 2, n)?), 2 + n)
            }
            0xf0 => {
                let b = take(pos + 1, 4)?;
                let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
                (Element::Str(take(pos + 5, n)?), 5 + n)
            }
            0xf1 => {
                let b = take(pos + 1, 2)?;
                (Element::Int(i64::from(i16::from_le_bytes([b[0], b[1]]))), 3)
            }
            0xf2 => {
                let b = take(pos + 1, 3)?;
                let v = i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8;
                (Element::Int(i64::from(v)), 4)
            }
            0xf3 => {
                let b = take(pos + 1, 4)?;
                (
                    Element::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
                    5,
                )
            }
            0xf4 => {
                let b = take(pos + 1, 8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                (Element::Int(i64::from_le_bytes(a)), 9)
            }
            _ => return Err(format!("listpack element encoding {first:#x}")),
        };
        let mut expected = Vec::with_capacity(5);
        backlen(enc_len, &mut expected);
        let back = take(pos + enc_len, expected.len())?;
        if back != expected.as_slice() {
            return Err("listpack element back-length is wrong".into());
        }
        pos += enc_len + expected.len();
        out.push(element);
    }
    if count != u16::MAX && usize::from(count) != out.len() {
        return Err(format!(
            "listpack header counts {count} elements, it has {}",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_round_trips() {
        let ints = [
            0i64,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -32768,
            32767,
            40000,
            -8_388_608,
            8_388_607,
            1 << 24,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
        ];
        let long = vec![b'q'; 5000];
        let mid = vec![b'm'; 100];
        let mut b = Builder::new();
        for v in ints {
            b.int(v);
        }
        b.string(b"hello");
        b.string(&mid);
        b.string(&long);
        b.string(b"123");
        let lp = b.finish();
        let parsed = parse(&lp).unwrap();
        let mut expected: Vec<Element<'_>> = ints.iter().map(|&v| Element::Int(v)).collect();
        expected.extend([
            Element::Str(b"hello"),
            Element::Str(&mid),
            Element::Str(&long),
            Element::Int(123),
        ]);
        assert_eq!(parsed, expected);
    }

    #[test]
    fn a_small_stream_node_has_redis_size() {
        // The listpack `XADD s 1-1 f1 v1 f2 v2` makes (see listpack_size's test): 45 bytes.
        let mut b = Builder::new();
        for v in [1, 0, 2] {
            b.int(v);
        }
        b.string(b"f1");
        b.string(b"f2");
        for v in [0, 2, 0, 0] {
            b.int(v);
        }
        b.string(b"v1");
        b.string(b"v2");
        b.int(5);
        assert_eq!(
            b.finish().len(),
            7 + 2 + 2 + 2 + 4 + 4 + 2 + 2 + 2 + 2 + 4 + 4 + 2
        );
    }

    #[test]
    fn damaged_listpacks_are_refused() {
        let mut b = Builder::new();
        b.string(b"abc");
        let lp = b.finish();
        for cut in 0..lp.len() {
            assert!(parse(&lp[..cut]).is_err());
        }
        let mut bad = lp.clone();
        bad[6 + 4] ^= 1; // back-length
        assert!(parse(&bad).is_err());
    }
}

//! LZF, the compression RDB strings use (`RDB_ENC_LZF`), written from the format's description.
//!
//! The stream is a sequence of runs: a control byte `000LLLLL` starts `L + 1` literal bytes; a
//! control byte `LLLooooo` (`L` in 1..=6) or `111ooooo` followed by a length byte `l` (`L = 7 +
//! l`) is a back reference of `L + 2` bytes from `((o << 8) | next byte) + 1` bytes back.
//!
//! [`compress`] makes the same choices as liblzf 3.6 built the way Redis builds it (a 65536-slot
//! hash table of 3-byte prefixes, `VERY_FAST` re-hashing of two positions after a match, back
//! references up to 8192 bytes away and 264 long, nothing at offset 0), so a payload compressed
//! here is byte for byte what Redis writes for the same input, which DUMP's byte equality needs.
//! (Redis's table starts uninitialised; it gives the same output whenever stale slots never point
//! into the input, which is what a fresh process sees.)
//!
//! [`decompress`] checks every reference and length against the buffers: hostile input gives
//! `None`, never a panic or a read outside the input.

/// Longest literal run.
const MAX_LIT: usize = 1 << 5;
/// Farthest back reference.
const MAX_OFF: usize = 1 << 13;
/// Longest back reference, minus 2.
const MAX_REF: usize = (1 << 8) + (1 << 3);
/// log2 of the hash table's slots.
const HLOG: u32 = 16;

fn idx(h: u32) -> usize {
    ((h >> (24 - HLOG)).wrapping_sub(h.wrapping_mul(5)) & ((1 << HLOG) - 1)) as usize
}

/// A compressor that keeps its hash table and output buffer between calls.
///
/// liblzf starts every call with an empty table (Redis: a fresh process; see the module doc).
/// Zeroing 256 KiB per string would cost more than compressing a stream node, so the table
/// holds `base + position` and a call only believes slots at or above its own `base`, which
/// moves past every position the previous call stored: a slot from an earlier call reads as
/// empty, exactly as in a zeroed table. When `base` would overflow, the table is zeroed once.
#[derive(Debug, Default)]
pub struct Compressor {
    htab: Vec<u32>,
    base: u32,
    out: Vec<u8>,
}

impl Compressor {
    /// A compressor (its table is allocated on first use).
    pub fn new() -> Compressor {
        Compressor::default()
    }

    /// Compresses `input` into at most `out_len` bytes; `None` if it does not fit (or is
    /// empty). The bytes are liblzf's for the same input, whatever came before this call.
    pub fn compress(&mut self, input: &[u8], out_len: usize) -> Option<&[u8]> {
        let in_len = input.len();
        if in_len == 0 || out_len == 0 || in_len >= (u32::MAX / 2) as usize {
            return None;
        }
        if self.htab.is_empty() || u64::from(self.base) + in_len as u64 + 1 >= u64::from(u32::MAX) {
            self.htab.clear();
            self.htab.resize(1 << HLOG, 0);
            self.base = 1;
        }
        // A little slack past `out_len`: the checks below are liblzf's, which may leave `op`
        // one past the end before they stop. Every byte up to `op` is written before use.
        if self.out.len() < out_len + 4 {
            self.out.resize(out_len + 4, 0);
        }
        let base = self.base;
        self.base = base + in_len as u32 + 1;
        // The table's fixed size lets the masked hash index it without a bounds check.
        let htab = <&mut [u32; 1 << HLOG]>::try_from(self.htab.as_mut_slice()).ok()?;
        let len = compress_with(input, out_len, htab, base, &mut self.out)?;
        Some(&self.out[..len])
    }
}

/// Compresses `input` into at most `out_len` bytes; `None` if it does not fit (or is empty).
pub fn compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    Compressor::new()
        .compress(input, out_len)
        .map(<[u8]>::to_vec)
}

/// liblzf's loop. `htab` slots below `base` are empty; `out` has at least `out_len + 4`
/// bytes. Returns the compressed length.
fn compress_with(
    input: &[u8],
    out_len: usize,
    htab: &mut [u32; 1 << HLOG],
    base: u32,
    out: &mut [u8],
) -> Option<usize> {
    let in_len = input.len();
    let at = |i: usize| input.get(i).copied();
    let mut lit: usize = 0;
    let mut op: usize = 1; // start run
    let mut ip: usize = 0;
    let mut hval: u32 = (u32::from(at(0)?) << 8) | u32::from(at(1).unwrap_or(0));
    // Indexing below is in bounds: `ip + 2 < in_len` holds wherever a byte is read, and
    // `r < ip`.
    while ip + 2 < in_len {
        hval = (hval << 8) | u32::from(input[ip + 2]);
        let slot = idx(hval);
        let stored = htab[slot];
        let r = if stored >= base {
            (stored - base) as usize
        } else {
            0
        };
        htab[slot] = base + ip as u32;
        let matched = r > 0
            && r < ip
            && ip - r - 1 < MAX_OFF
            && input[r + 2] == input[ip + 2]
            && input[r] == input[ip]
            && input[r + 1] == input[ip + 1];
        if matched {
            let off = ip - r - 1;
            let maxlen = (in_len - ip - 2).min(MAX_REF);
            if op + 3 + 1 >= out_len && op - usize::from(lit == 0) + 3 + 1 >= out_len {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop run
            op -= usize::from(lit == 0); // undo run if length is zero
            let mut len = match_len(input, r, ip, maxlen);
            len -= 2; // octets - 1
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1; // start run
            ip += len + 1;
            if ip + 2 >= in_len {
                break;
            }
            ip -= 2;
            hval = (u32::from(input[ip]) << 8) | u32::from(input[ip + 1]);
            hval = (hval << 8) | u32::from(input[ip + 2]);
            htab[idx(hval)] = base + ip as u32;
            ip += 1;
            hval = (hval << 8) | u32::from(input[ip + 2]);
            htab[idx(hval)] = base + ip as u32;
            ip += 1;
        } else {
            if op >= out_len {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        if op >= out.len() {
            return None;
        }
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1); // end run
    op -= usize::from(lit == 0);
    if op > out_len {
        return None;
    }
    Some(op)
}

/// The length liblzf's match loop ends at for a match of 3 bytes at `ip` against `r < ip`
/// (`maxlen`: its bound, `in_len - ip - 2` at most): the first index from 3 where the bytes
/// differ, or where the loop stops. liblzf first compares indices 3 to 18 without looking at
/// `maxlen` when `maxlen > 16` (so near the end of the input it can return more than
/// `maxlen`), then goes on one index at a time while below `maxlen`. The same result here,
/// eight bytes at a time.
#[inline(always)]
fn match_len(input: &[u8], r: usize, ip: usize, maxlen: usize) -> usize {
    if maxlen > 16 {
        // maxlen > 16 means ip + 18 < in_len: indices to 18 are in the input.
        let first = mismatch(input, r, ip, 3, 19);
        if first < 19 || 19 >= maxlen {
            return first;
        }
        return mismatch(input, r, ip, 19, maxlen);
    }
    if 3 >= maxlen {
        return 3;
    }
    mismatch(input, r, ip, 3, maxlen)
}

/// The first `k` in `from..limit` with `input[a + k] != input[b + k]`, or `limit` (`a < b`,
/// `b + limit <= input.len()`).
#[inline(always)]
fn mismatch(input: &[u8], a: usize, b: usize, from: usize, limit: usize) -> usize {
    let mut k = from;
    while k + 8 <= limit {
        let diff = word(input, a + k) ^ word(input, b + k);
        if diff != 0 {
            return k + (diff.trailing_zeros() / 8) as usize;
        }
        k += 8;
    }
    while k < limit && input[a + k] == input[b + k] {
        k += 1;
    }
    k
}

/// The eight bytes of `input` at `at`, little-endian (the first byte lowest).
#[inline]
fn word(input: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&input[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// Decompresses `input`, which must expand to exactly `out_len` bytes.
pub fn decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    decompress_into(input, out_len, &mut out).then_some(out)
}

/// Decompresses `input` into `out` (cleared first), which must come to exactly `out_len`
/// bytes; `false` (and `out` in an unspecified state) if the input is not such a stream.
pub fn decompress_into(input: &[u8], out_len: usize, out: &mut Vec<u8>) -> bool {
    out.clear();
    out.reserve(out_len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < (1 << 5) {
            let run = ctrl + 1;
            let Some(literal) = input.get(ip..ip + run) else {
                return false;
            };
            if out.len() + run > out_len {
                return false;
            }
            out.extend_from_slice(literal);
            ip += run;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                let Some(&more) = input.get(ip) else {
                    return false;
                };
                len += usize::from(more);
                ip += 1;
            }
            let Some(&low) = input.get(ip) else {
                return false;
            };
            let back = ((ctrl & 0x1f) << 8) + usize::from(low) + 1;
            ip += 1;
            let len = len + 2;
            if out.len() + len > out_len || back > out.len() {
                return false;
            }
            let start = out.len() - back;
            if back >= len {
                out.extend_from_within(start..start + len);
            } else {
                // Overlapping: each byte may be one this reference wrote.
                for i in 0..len {
                    let byte = out[start + i];
                    out.push(byte);
                }
            }
        }
    }
    out.len() == out_len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compressor as first written (liblzf's match loop one byte at a time): the model
    /// [`match_len`] is checked against.
    /// liblzf's loop. `htab` slots below `base` are empty; `out` has at least `out_len + 4`
    /// bytes. Returns the compressed length.
    fn bytewise_compress_with(
        input: &[u8],
        out_len: usize,
        htab: &mut [u32],
        base: u32,
        out: &mut [u8],
    ) -> Option<usize> {
        let in_len = input.len();
        let at = |i: usize| input.get(i).copied();
        let mut lit: usize = 0;
        let mut op: usize = 1; // start run
        let mut ip: usize = 0;
        let mut hval: u32 = (u32::from(at(0)?) << 8) | u32::from(at(1).unwrap_or(0));
        while ip + 2 < in_len {
            hval = (hval << 8) | u32::from(at(ip + 2)?);
            let slot = idx(hval);
            let stored = htab[slot];
            let r = if stored >= base {
                (stored - base) as usize
            } else {
                0
            };
            htab[slot] = base + ip as u32;
            let matched = r > 0
                && r < ip
                && ip - r - 1 < MAX_OFF
                && at(r + 2) == at(ip + 2)
                && at(r) == at(ip)
                && at(r + 1) == at(ip + 1);
            if matched {
                let off = ip - r - 1;
                let mut len: usize = 2;
                let maxlen = (in_len - ip - len).min(MAX_REF);
                if op + 3 + 1 >= out_len && op - usize::from(lit == 0) + 3 + 1 >= out_len {
                    return None;
                }
                out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop run
                op -= usize::from(lit == 0); // undo run if length is zero
                // liblzf's unrolled first 16 comparisons do not stop at `maxlen` (near the end
                // of the input they can run past it): kept as it is, for the same bytes.
                let mut done = false;
                if maxlen > 16 {
                    for _ in 0..16 {
                        len += 1;
                        if at(r + len) != at(ip + len) {
                            done = true;
                            break;
                        }
                    }
                }
                if !done {
                    loop {
                        len += 1;
                        if !(len < maxlen && at(r + len) == at(ip + len)) {
                            break;
                        }
                    }
                }
                len -= 2; // octets - 1
                ip += 1;
                if len < 7 {
                    out[op] = ((off >> 8) + (len << 5)) as u8;
                    op += 1;
                } else {
                    out[op] = ((off >> 8) + (7 << 5)) as u8;
                    out[op + 1] = (len - 7) as u8;
                    op += 2;
                }
                out[op] = off as u8;
                op += 1;
                lit = 0;
                op += 1; // start run
                ip += len + 1;
                if ip + 2 >= in_len {
                    break;
                }
                ip -= 2;
                hval = (u32::from(at(ip)?) << 8) | u32::from(at(ip + 1)?);
                hval = (hval << 8) | u32::from(at(ip + 2)?);
                htab[idx(hval)] = base + ip as u32;
                ip += 1;
                hval = (hval << 8) | u32::from(at(ip + 2)?);
                htab[idx(hval)] = base + ip as u32;
                ip += 1;
            } else {
                if op >= out_len {
                    return None;
                }
                lit += 1;
                out[op] = input[ip];
                op += 1;
                ip += 1;
                if lit == MAX_LIT {
                    out[op - lit - 1] = (lit - 1) as u8;
                    lit = 0;
                    op += 1;
                }
            }
        }
        if op + 3 > out_len {
            return None;
        }
        while ip < in_len {
            if op >= out.len() {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
        out[op - lit - 1] = (lit as u8).wrapping_sub(1); // end run
        op -= usize::from(lit == 0);
        if op > out_len {
            return None;
        }
        Some(op)
    }

    /// Compresses with a fresh table, by both loops.
    fn both(input: &[u8], out_len: usize) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let mut out = vec![0; out_len + 4];
        let mut htab = Box::new([0; 1 << HLOG]);
        let new = compress_with(input, out_len, &mut htab, 1, &mut out).map(|n| out[..n].to_vec());
        let mut htab = vec![0; 1 << HLOG];
        let old = bytewise_compress_with(input, out_len, &mut htab, 1, &mut out)
            .map(|n| out[..n].to_vec());
        (new, old)
    }

    proptest::proptest! {
        #[test]
        fn word_matching_gives_the_bytewise_bytes(
            input in proptest::collection::vec(0u8..3, 1..700),
            runs in proptest::collection::vec((0usize..700, 1usize..300), 0..4),
            slack in 0usize..8,
        ) {
            // Small alphabets and long runs: matches of every length, some ending near the end.
            let mut input = input;
            for (at, len) in runs {
                let at = at.min(input.len());
                let run: Vec<u8> = (0..len).map(|i| (i % 5) as u8).collect();
                input.splice(at..at, run);
            }
            for out_len in [input.len().saturating_sub(4).max(1), input.len() + 40 + slack] {
                let (new, old) = both(&input, out_len);
                proptest::prop_assert_eq!(new, old);
            }
        }
    }

    #[test]
    fn matches_near_the_end_keep_liblzfs_overrun() {
        // Every input length around the unrolled comparisons' reach, all one byte, so the
        // match runs to the end.
        for len in 3..80 {
            let input = vec![b'a'; len];
            for out_len in [len.saturating_sub(4).max(1), len + 16] {
                let (new, old) = both(&input, out_len);
                assert_eq!(new, old, "{len}");
            }
        }
    }

    #[test]
    fn round_trips_repetitive_and_random_input() {
        let mut inputs: Vec<Vec<u8>> = vec![
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".to_vec(),
            b"hello hello hello hello hello world world world".to_vec(),
        ];
        let mut x: u32 = 12345;
        let mut random = Vec::new();
        for _ in 0..5000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            random.push((x >> 16) as u8 % 7);
        }
        inputs.push(random);
        for input in inputs {
            let packed = compress(&input, input.len() - 4).expect("compressible");
            assert!(packed.len() < input.len());
            assert_eq!(
                decompress(&packed, input.len()).as_deref(),
                Some(&input[..])
            );
        }
    }

    #[test]
    fn a_reused_compressor_gives_a_fresh_ones_bytes() {
        // Inputs that share prefixes, so stale slots of an earlier call would match if the
        // table believed them.
        let mut x: u32 = 7;
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for n in 0..200 {
            let mut v = b"stream node stream node ".repeat(1 + n % 5);
            for _ in 0..(n * 7 % 300) {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                v.push(b"abcv12"[(x >> 16) as usize % 6]);
            }
            inputs.push(v);
        }
        let mut reused = Compressor::new();
        // Close to u32::MAX, so the table is zeroed again part way.
        reused.compress(b"x", 1);
        reused.base = u32::MAX - 5000;
        for input in &inputs {
            let fresh = compress(input, input.len().saturating_sub(4).max(1));
            let again = reused
                .compress(input, input.len().saturating_sub(4).max(1))
                .map(<[u8]>::to_vec);
            assert_eq!(again, fresh);
            if let Some(packed) = &fresh {
                assert_eq!(decompress(packed, input.len()).as_deref(), Some(&input[..]));
            }
        }
    }

    #[test]
    fn incompressible_input_does_not_fit() {
        let input: Vec<u8> = (0..=255u8).collect();
        assert!(compress(&input, input.len() - 4).is_none());
    }

    #[test]
    fn hostile_input_is_refused() {
        assert!(decompress(&[0x20, 0x00], 10).is_none()); // reference before the start
        assert!(decompress(&[0x05, b'a'], 6).is_none()); // literal past the input
        assert!(decompress(&[0x00, b'a'], 2).is_none()); // wrong length
        assert!(decompress(&[0xe0], 10).is_none()); // truncated reference
    }

    #[test]
    fn matches_liblzf_on_a_known_input() {
        // 21 "a"s: the hash of the first position differs (the hash carries one byte less), so
        // liblzf writes a 2-byte literal run, then a 19-byte back reference at offset 0.
        let input = [b'a'; 21];
        assert_eq!(
            compress(&input, 17),
            Some(vec![0x01, b'a', b'a', 0xe0, 0x0a, 0x00])
        );
    }
}

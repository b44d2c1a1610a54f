//! HyperLogLog: a cardinality estimate held in a string, in Redis's exact format so a DUMP
//! moves between echomq and Redis both ways and counts the same.
//!
//! Layout (`struct hllhdr`): `HYLL`, the encoding (0 dense, 1 sparse), 3 zero bytes, the
//! cached cardinality (8 bytes little endian, its top bit set when stale), then the registers.
//! There are 2^14 registers of 6 bits: an element's MurmurHash64A (seed `0xadc83b19`) picks a
//! register with its low 14 bits, and the register keeps the longest run of zeros (plus one)
//! seen in the other 50.
//!
//! - Dense: the registers packed 6 bits each, least significant bits first (12288 bytes).
//! - Sparse: run-length opcodes: `00xxxxxx` ZERO (1..64 zero registers), `01xxxxxx yyyyyyyy`
//!   XZERO (1..16384 zero registers), `1vvvvvxx` VAL (1..4 registers of value 1..32). A new
//!   HLL is sparse; it turns dense when a register needs more than 32 or the string would
//!   pass `hll-sparse-max-bytes`, edited exactly as `hllSparseSet` edits it (so the same
//!   additions give the same bytes).
//!
//! The estimate is Ertl's improved estimator over the register histogram, as `hllCount`.
//! The commands are in `commands.rs`.

pub(crate) mod commands;
mod simd;

/// Header bytes.
pub const HEADER_BYTES: usize = 16;
/// Index bits.
const P: u32 = 14;
/// Registers.
pub const REGISTERS: usize = 1 << P;
/// Bits of the hash left for the run of zeros.
const Q: usize = 64 - P as usize;
/// Bits per dense register.
const BITS: usize = 6;
const REGISTER_MAX: u8 = (1 << BITS) - 1;
/// A dense HLL's length.
pub const DENSE_BYTES: usize = HEADER_BYTES + (REGISTERS * BITS).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// An HLL whose registers do not add up (Redis's `INVALIDOBJ Corrupted HLL object detected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// MurmurHash2, 64-bit, as Redis's endian-neutral `MurmurHash64A`.
pub fn murmur64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = u64::from(seed) ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let mut k = u64::from_le_bytes(w);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element goes to and its run length (`hllPatLen`).
pub fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// A new, empty HLL: sparse, one XZERO per 16384 registers, a valid cached 0.
pub fn new_sparse() -> Vec<u8> {
    let mut v = vec![0u8; HEADER_BYTES];
    v[..4].copy_from_slice(b"HYLL");
    v[4] = SPARSE;
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(XZERO_MAX_LEN);
        v.extend_from_slice(&xzero(run));
        left -= run;
    }
    v
}

fn xzero(run: usize) -> [u8; 2] {
    let l = run - 1;
    [(l >> 8) as u8 | 0x40, (l & 0xff) as u8]
}

fn val(value: u8, run: usize) -> u8 {
    ((value - 1) << 2) | (run as u8 - 1) | 0x80
}

/// Whether `bytes` is an HLL Redis accepts (`isHLLObjectOrReply`): the header, a known
/// encoding, a dense one of the right length.
pub fn is_valid(bytes: &[u8]) -> bool {
    bytes.len() >= HEADER_BYTES
        && &bytes[..4] == b"HYLL"
        && bytes[4] <= SPARSE
        && (bytes[4] != DENSE || bytes.len() == DENSE_BYTES)
}

/// Whether a valid HLL is dense.
pub fn is_dense(bytes: &[u8]) -> bool {
    bytes[4] == DENSE
}

/// The cached cardinality, if valid.
pub fn cached(bytes: &[u8]) -> Option<u64> {
    let mut card = [0u8; 8];
    card.copy_from_slice(&bytes[8..16]);
    (card[7] & 0x80 == 0).then(|| u64::from_le_bytes(card))
}

/// Stores the cached cardinality.
pub fn set_cached(bytes: &mut [u8], card: u64) {
    bytes[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Marks the cached cardinality stale (only its top bit, as Redis).
pub fn invalidate(bytes: &mut [u8]) {
    bytes[15] |= 0x80;
}

/// A dense register.
pub fn dense_get(registers: &[u8], index: usize) -> u8 {
    let byte = index * BITS / 8;
    let fb = (index * BITS) & 7;
    let b0 = u16::from(registers.get(byte).copied().unwrap_or(0));
    let b1 = u16::from(registers.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) as u8) & REGISTER_MAX
}

fn dense_put(registers: &mut [u8], index: usize, value: u8) {
    let byte = index * BITS / 8;
    let fb = (index * BITS) & 7;
    let v = u16::from(value);
    if let Some(b) = registers.get_mut(byte) {
        *b &= !((u16::from(REGISTER_MAX) << fb) as u8);
        *b |= (v << fb) as u8;
    }
    if let Some(b) = registers.get_mut(byte + 1) {
        *b &= !((u16::from(REGISTER_MAX) >> (8 - fb)) as u8);
        *b |= (v >> (8 - fb)) as u8;
    }
}

/// Raises a dense register to `count`; whether it changed.
pub fn dense_set(registers: &mut [u8], index: usize, count: u8) -> bool {
    if count > dense_get(registers, index) {
        dense_put(registers, index, count);
        true
    } else {
        false
    }
}

/// One sparse opcode: its run, its value (0 for the zero runs) and its length in bytes.
fn opcode(bytes: &[u8], at: usize) -> (usize, u8, usize) {
    let b = bytes[at];
    if b & 0xc0 == 0 {
        (usize::from(b & 0x3f) + 1, 0, 1)
    } else if b & 0xc0 == 0x40 {
        let low = usize::from(bytes.get(at + 1).copied().unwrap_or(0));
        (((usize::from(b & 0x3f) << 8) | low) + 1, 0, 2)
    } else {
        (usize::from(b & 0x3) + 1, ((b >> 2) & 0x1f) + 1, 1)
    }
}

/// Calls `f(first register, run, value)` for each sparse opcode; fails when they overflow or
/// do not cover every register.
fn sparse_runs(bytes: &[u8], mut f: impl FnMut(usize, usize, u8)) -> Result<(), Corrupt> {
    let mut at = HEADER_BYTES;
    let mut index = 0;
    while at < bytes.len() {
        let (run, value, len) = opcode(bytes, at);
        if index + run > REGISTERS {
            return Err(Corrupt);
        }
        f(index, run, value);
        index += run;
        at += len;
    }
    if index == REGISTERS {
        Ok(())
    } else {
        Err(Corrupt)
    }
}

/// Turns a sparse HLL dense (`hllSparseToDense`); a dense one is left alone.
pub fn to_dense(hll: &mut Vec<u8>) -> Result<(), Corrupt> {
    if hll[4] == DENSE {
        return Ok(());
    }
    let mut dense = vec![0u8; DENSE_BYTES];
    dense[..HEADER_BYTES].copy_from_slice(&hll[..HEADER_BYTES]);
    dense[4] = DENSE;
    {
        let registers = &mut dense[HEADER_BYTES..];
        sparse_runs(hll, |first, run, value| {
            if value > 0 {
                for i in first..first + run {
                    dense_put(registers, i, value);
                }
            }
        })?;
    }
    *hll = dense;
    Ok(())
}

/// Raises register `index` to `count` in a sparse HLL, as `hllSparseSet` rewrites the
/// opcodes (promoting to dense when it must). Whether it changed.
fn sparse_set(hll: &mut Vec<u8>, index: usize, count: u8, max_bytes: u64) -> Result<bool, Corrupt> {
    if count > VAL_MAX_VALUE {
        return promote(hll, index, count);
    }
    let end = hll.len();
    let mut at = HEADER_BYTES;
    let mut first = 0usize;
    let mut prev: Option<usize> = None;
    let mut span = 0usize;
    while at < end {
        let (run, _, len) = opcode(hll, at);
        span = run;
        if index < first + span {
            break;
        }
        prev = Some(at);
        at += len;
        first += span;
    }
    if span == 0 || at >= end {
        return Err(Corrupt);
    }
    let (runlen, value, oplen) = opcode(hll, at);
    let is_val = value > 0;
    let is_xzero = oplen == 2;
    if is_val && value >= count {
        return Ok(false);
    }
    if runlen == 1 && (is_val || !is_xzero) {
        hll[at] = val(count, 1);
    } else {
        let mut seq: Vec<u8> = Vec::with_capacity(5);
        let last = first + span - 1;
        let zeros = |seq: &mut Vec<u8>, len: usize| {
            if len > ZERO_MAX_LEN {
                seq.extend_from_slice(&xzero(len));
            } else {
                seq.push((len - 1) as u8);
            }
        };
        if is_val {
            if index != first {
                seq.push(val(value, index - first));
            }
            seq.push(val(count, 1));
            if index != last {
                seq.push(val(value, last - index));
            }
        } else {
            if index != first {
                zeros(&mut seq, index - first);
            }
            seq.push(val(count, 1));
            if index != last {
                zeros(&mut seq, last - index);
            }
        }
        let grows = seq.len() > oplen;
        if grows && (hll.len() + seq.len() - oplen) as u64 > max_bytes {
            return promote(hll, index, count);
        }
        // A truncated XZERO at the very end reads its missing byte as 0 (Redis reads the
        // string's terminator) and the length moves by the opcodes' difference all the same.
        let new_len = hll.len() + seq.len() - oplen;
        let end = (at + oplen).min(hll.len());
        hll.splice(at..end, seq);
        hll.truncate(new_len);
    }
    // Merge adjacent VAL opcodes of one value, scanning up to 5 opcodes from the previous.
    let mut p = prev.unwrap_or(HEADER_BYTES);
    let mut scans = 5;
    while p < hll.len() && scans > 0 {
        scans -= 1;
        let b = hll[p];
        if b & 0xc0 == 0x40 {
            p += 2;
            continue;
        } else if b & 0xc0 == 0 {
            p += 1;
            continue;
        }
        if p + 1 < hll.len() && hll[p + 1] & 0x80 != 0 {
            let (len1, v1, _) = opcode(hll, p);
            let (len2, v2, _) = opcode(hll, p + 1);
            if v1 == v2 && len1 + len2 <= VAL_MAX_LEN {
                hll[p + 1] = val(v1, len1 + len2);
                hll.remove(p);
                continue;
            }
        }
        p += 1;
    }
    invalidate(hll);
    Ok(true)
}

fn promote(hll: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    to_dense(hll)?;
    Ok(dense_set(&mut hll[HEADER_BYTES..], index, count))
}

/// Raises register `index` to `count` in either encoding; whether it changed.
pub fn set(hll: &mut Vec<u8>, index: usize, count: u8, max_bytes: u64) -> Result<bool, Corrupt> {
    if hll[4] == DENSE {
        Ok(dense_set(&mut hll[HEADER_BYTES..], index, count))
    } else {
        sparse_set(hll, index, count, max_bytes)
    }
}

/// The register histogram of a valid HLL (`hllDenseRegHisto`, `hllSparseRegHisto`); a sparse
/// one that does not add up is `Err`.
fn histogram(hll: &[u8]) -> Result<[u32; 64], Corrupt> {
    let mut h = [0u32; 64];
    if hll[4] == DENSE {
        // One histogram per register of a group, for the reason `count_raw` gives.
        let mut lanes = [[0u32; 64]; 4];
        for packed in hll[HEADER_BYTES..].chunks_exact(12) {
            for group in unpack16(packed).chunks_exact(4) {
                for (lane, &r) in lanes.iter_mut().zip(group) {
                    lane[usize::from(r & REGISTER_MAX)] += 1;
                }
            }
        }
        for lane in &lanes {
            for (total, n) in h.iter_mut().zip(lane) {
                *total += n;
            }
        }
        return Ok(h);
    }
    sparse_runs(hll, |_, run, value| h[usize::from(value)] += run as u32)?;
    Ok(h)
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// The estimate from a register histogram (`hllCount`).
pub fn estimate(h: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(h[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(h[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(h[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// The estimate of a valid HLL; `Err` for a sparse one that does not add up.
pub fn count(hll: &[u8]) -> Result<u64, Corrupt> {
    histogram(hll).map(|h| estimate(&h))
}

/// The estimate of unpacked registers (one byte each).
pub fn count_raw(registers: &[u8; REGISTERS]) -> u64 {
    // Four histograms, one per lane: most registers hold one of a few values, and one
    // histogram would make each increment wait for the previous one to the same counter.
    let mut lanes = [[0u32; 64]; 4];
    for group in registers.chunks_exact(4) {
        for (lane, &r) in lanes.iter_mut().zip(group) {
            lane[usize::from(r & 63)] += 1;
        }
    }
    let mut h = [0u32; 64];
    for lane in &lanes {
        for (total, n) in h.iter_mut().zip(lane) {
            *total += n;
        }
    }
    estimate(&h)
}

/// Eight dense registers (the low 48 bits of `packed`, six bytes read little endian) one to a
/// byte, the first lowest: the 24-bit halves move into 32-bit lanes, their 12-bit halves into
/// 16-bit lanes, and theirs, the registers, into bytes. A dozen integer operations where a
/// register at a time takes a shift and a mask each, with no vector instructions to ask for.
#[inline]
fn spread8(packed: u64) -> u64 {
    let v = (packed & 0x00ff_ffff) | (packed & 0xffff_ff00_0000) << 8;
    let v = (v & 0x0000_0fff_0000_0fff) | (v & 0x00ff_f000_00ff_f000) << 4;
    (v & 0x003f_003f_003f_003f) | (v & 0x0fc0_0fc0_0fc0_0fc0) << 2
}

/// The inverse of [`spread8`]: eight registers of a byte each (the top two bits ignored)
/// packed into the low 48 bits.
#[inline]
fn gather8(bytes: u64) -> u64 {
    let v = (bytes & 0x003f_003f_003f_003f) | (bytes & 0x3f00_3f00_3f00_3f00) >> 2;
    let v = (v & 0x0000_0fff_0000_0fff) | (v & 0x0fff_0000_0fff_0000) >> 4;
    (v & 0x00ff_ffff) | (v & 0x00ff_ffff_0000_0000) >> 8
}

/// Sixteen dense registers (the twelve bytes of a `chunks_exact(12)` chunk) one to a byte.
#[inline]
fn unpack16(packed: &[u8]) -> [u8; 16] {
    let six = |at: usize| {
        let mut word = [0u8; 8];
        word[..6].copy_from_slice(&packed[at..at + 6]);
        u64::from_le_bytes(word)
    };
    let (low, high) = (six(0), six(6));
    let mut registers = [0u8; 16];
    registers[..8].copy_from_slice(&spread8(low).to_le_bytes());
    registers[8..].copy_from_slice(&spread8(high).to_le_bytes());
    registers
}

/// Raises each of `max` to the valid HLL's register (`hllMerge`).
pub fn merge_into(max: &mut [u8; REGISTERS], hll: &[u8]) -> Result<(), Corrupt> {
    if hll[4] == DENSE {
        let dense = &hll[HEADER_BYTES..];
        let done = simd::merge_groups(max, dense);
        for (m, packed) in max
            .chunks_exact_mut(16)
            .zip(dense.chunks_exact(12))
            .skip(done)
        {
            // Sixteen at a time, so the compiler raises them with vector instructions.
            for (m, r) in m.iter_mut().zip(unpack16(packed)) {
                *m = (*m).max(r);
            }
        }
        return Ok(());
    }
    sparse_runs(hll, |first, run, value| {
        for m in &mut max[first..first + run] {
            *m = (*m).max(value);
        }
    })
}

/// Writes unpacked registers into a dense HLL (`hllDenseCompress`).
pub fn compress_into(hll: &mut [u8], max: &[u8; REGISTERS]) {
    let registers = &mut hll[HEADER_BYTES..];
    for (packed, m) in registers.chunks_exact_mut(6).zip(max.chunks_exact(8)) {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(m);
        let bytes = gather8(u64::from_le_bytes(eight)).to_le_bytes();
        packed.copy_from_slice(&bytes[..6]);
    }
}

/// PFDEBUG DECODE's text of a sparse HLL.
pub fn decode(hll: &[u8]) -> String {
    let mut out = Vec::new();
    let mut at = HEADER_BYTES;
    while at < hll.len() {
        let (run, value, len) = opcode(hll, at);
        out.push(match (value, len) {
            (0, 1) => format!("z:{run}"),
            (0, _) => format!("Z:{run}"),
            (v, _) => format!("v:{v},{run}"),
        });
        at += len;
    }
    out.join(" ")
}

/// The checks of PFSELFTEST: dense registers read back what was written, and sparse and
/// dense HLLs fed the same elements agree and stay within the expected error. `Err` carries
/// Redis's failure text.
pub fn self_test(max_bytes: u64) -> Result<(), String> {
    let mut registers = vec![0u8; DENSE_BYTES - HEADER_BYTES];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..10 {
        for (i, e) in expected.iter_mut().enumerate() {
            *e = (next() & u64::from(REGISTER_MAX)) as u8;
            dense_put(&mut registers, i, *e);
        }
        for (i, &e) in expected.iter().enumerate() {
            let got = dense_get(&registers, i);
            if got != e {
                return Err(format!(
                    "TESTFAILED Register {i} should be {e} but is {got}"
                ));
            }
        }
    }
    let mut dense = new_sparse();
    to_dense(&mut dense).map_err(|_| "TESTFAILED dense conversion".to_string())?;
    let mut sparse = new_sparse();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let seed = next();
    let mut checkpoint = 1u64;
    for j in 1..=10_000u64 {
        let element = (j ^ seed).to_le_bytes();
        let (index, count) = pattern(&element);
        dense_set(&mut dense[HEADER_BYTES..], index, count);
        set(&mut sparse, index, count, max_bytes).map_err(|_| "TESTFAILED corrupt".to_string())?;
        if j == checkpoint {
            if j < max_bytes / 2 && is_dense(&sparse) {
                return Err("TESTFAILED sparse encoding not used".into());
            }
            let (a, b) = (count_of(&dense), count_of(&sparse));
            if a != b {
                return Err("TESTFAILED dense/sparse disagree".into());
            }
            let abserr = checkpoint.abs_diff(a);
            let maxerr = if j == 10 {
                1
            } else {
                (relerr * 6.0 * checkpoint as f64).ceil() as u64
            };
            if abserr > maxerr {
                return Err(format!(
                    "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
                ));
            }
            checkpoint *= 10;
        }
    }
    Ok(())
}

fn count_of(hll: &[u8]) -> u64 {
    count(hll).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn murmur_matches_redis() {
        // Registers and runs Redis 8.8 gives these elements (PFDEBUG GETREG after PFADD).
        assert_eq!(murmur64a(b"", 0), 0);
        let (index, count) = pattern(b"a");
        assert!(index < REGISTERS && (1..=51).contains(&count));
    }

    #[test]
    fn a_new_hll_is_sparse_and_counts_zero() {
        let hll = new_sparse();
        assert_eq!(hll.len(), 18);
        assert_eq!(decode(&hll), "Z:16384");
        assert_eq!(count(&hll), Ok(0));
        assert_eq!(cached(&hll), Some(0));
    }

    #[test]
    fn self_test_passes() {
        assert_eq!(self_test(3000), Ok(()));
    }

    proptest! {
        /// Whatever a sparse body holds, nothing panics and a result is either `Corrupt` or
        /// an HLL of valid form.
        #[test]
        fn any_sparse_body_is_handled(body in proptest::collection::vec(any::<u8>(), 0..40),
                                      index in 0usize..REGISTERS, run in 1u8..52) {
            let mut hll = new_sparse();
            hll.truncate(HEADER_BYTES);
            hll.extend_from_slice(&body);
            let _ = count(&hll);
            let mut max = [0u8; REGISTERS];
            let _ = merge_into(&mut max, &hll);
            let _ = decode(&hll);
            let mut dense = hll.clone();
            let _ = to_dense(&mut dense);
            if set(&mut hll, index, run, 3000).is_ok() {
                prop_assert!(is_valid(&hll));
            }
        }

        /// Registers packed sixteen at a time read back one by one, and unpacked sixteen at
        /// a time as they were.
        #[test]
        fn packing_registers_in_words_matches_one_at_a_time(
            registers in proptest::collection::vec(0u8..=REGISTER_MAX, REGISTERS)
        ) {
            let mut raw = [0u8; REGISTERS];
            raw.copy_from_slice(&registers);
            let mut dense = new_sparse();
            to_dense(&mut dense).map_err(|_| TestCaseError::fail("to_dense"))?;
            compress_into(&mut dense, &raw);
            prop_assert_eq!(dense.len(), DENSE_BYTES);
            for (i, &r) in raw.iter().enumerate() {
                prop_assert_eq!(dense_get(&dense[HEADER_BYTES..], i), r);
            }
            let mut merged = [0u8; REGISTERS];
            merge_into(&mut merged, &dense).map_err(|_| TestCaseError::fail("merge"))?;
            prop_assert_eq!(&merged[..], &raw[..]);
            prop_assert_eq!(count(&dense), Ok(count_raw(&raw)));
        }

        #[test]
        fn sparse_and_dense_agree(elements in proptest::collection::vec(any::<u32>(), 0..400),
                                  max_bytes in prop_oneof![Just(3000u64), Just(40u64)]) {
            let mut sparse = new_sparse();
            let mut dense = new_sparse();
            to_dense(&mut dense).map_err(|_| TestCaseError::fail("to_dense"))?;
            for e in &elements {
                let (index, count) = pattern(&e.to_le_bytes());
                let a = set(&mut sparse, index, count, max_bytes).map_err(|_| TestCaseError::fail("corrupt"))?;
                let b = set(&mut dense, index, count, max_bytes).map_err(|_| TestCaseError::fail("corrupt"))?;
                prop_assert_eq!(a, b);
                prop_assert!(is_valid(&sparse));
                if !is_dense(&sparse) {
                    prop_assert!(sparse.len() as u64 <= max_bytes.max(18));
                }
            }
            prop_assert_eq!(count(&sparse), count(&dense));
            let mut converted = sparse.clone();
            to_dense(&mut converted).map_err(|_| TestCaseError::fail("to_dense"))?;
            prop_assert_eq!(&converted[HEADER_BYTES..], &dense[HEADER_BYTES..]);
            // Merging either gives every register as read one by one.
            let (mut from_sparse, mut from_dense) = ([0u8; REGISTERS], [0u8; REGISTERS]);
            merge_into(&mut from_sparse, &sparse).map_err(|_| TestCaseError::fail("merge"))?;
            merge_into(&mut from_dense, &dense).map_err(|_| TestCaseError::fail("merge"))?;
            let one_by_one: Vec<u8> =
                (0..REGISTERS).map(|i| dense_get(&dense[HEADER_BYTES..], i)).collect();
            prop_assert_eq!(&from_dense[..], &one_by_one[..]);
            prop_assert_eq!(&from_sparse[..], &one_by_one[..]);
        }
    }
}

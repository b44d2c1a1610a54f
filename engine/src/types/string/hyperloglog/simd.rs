//! Dense registers unpacked sixteen at a time with SSSE3's byte shuffle, where the CPU has it
//! (checked once by the standard library, then an atomic load per call): the hot loop of
//! PFCOUNT over several keys and of PFMERGE, as Redis 8.8 unpacks with AVX2
//! (`hllMergeDenseAVX2`).
//!
//! Sixteen 6-bit registers are twelve bytes. A shuffle puts each three bytes (four registers)
//! in a 32-bit lane of their own with a zero byte on top; in every lane register `k` is then
//! bits `6k..6k+6`, and shifting the lane left by `2k` and masking moves it to byte `k`.
//! A 16-byte load at byte `12g` reads four bytes past the group, so the last group, whose
//! next four bytes are past the array, is left to the caller's scalar loop.

/// Raises `max[16g..16g + 16]` to the registers of group `g` of `dense` for every group
/// whose 16-byte load stays inside `dense`; returns how many groups that was (the caller
/// does the rest). With no SSSE3, does nothing and returns 0.
pub(super) fn merge_groups(max: &mut [u8], dense: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("ssse3") {
            let groups = (dense.len().saturating_sub(4) / 12).min(max.len() / 16);
            // SAFETY: the CPU has SSSE3 (just checked), and `groups` keeps every access in
            // bounds: group g < groups reads dense[12g..12g + 16], where 12g + 16 <=
            // 12(groups - 1) + 16 <= dense.len(), and reads and writes max[16g..16g + 16],
            // where 16g + 16 <= 16 * groups <= max.len().
            #[allow(unsafe_code)]
            unsafe {
                x86::merge(max, dense, groups);
            }
            return groups;
        }
    }
    let _ = (max, dense);
    0
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_loadu_si128, _mm_max_epu8, _mm_or_si128, _mm_set1_epi32,
        _mm_setr_epi8, _mm_shuffle_epi8, _mm_slli_epi32, _mm_storeu_si128,
    };

    /// See [`super::merge_groups`].
    ///
    /// # Safety
    /// The CPU has SSSE3; `dense.len() >= 12 * (groups - 1) + 16` and
    /// `max.len() >= 16 * groups`.
    #[allow(unsafe_code)]
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn merge(max: &mut [u8], dense: &[u8], groups: usize) {
        // Byte 3 of each lane comes from index -1: the shuffle writes zero there.
        let lanes = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
        let six_bits = _mm_set1_epi32(0x3f);
        for g in 0..groups {
            // SAFETY (the loads and the store): in bounds by this function's contract;
            // unaligned access is what `loadu`/`storeu` allow.
            let (packed, current) = unsafe {
                (
                    _mm_loadu_si128(dense.as_ptr().add(12 * g).cast::<__m128i>()),
                    _mm_loadu_si128(max.as_ptr().add(16 * g).cast::<__m128i>()),
                )
            };
            let words = _mm_shuffle_epi8(packed, lanes);
            let r0 = _mm_and_si128(words, six_bits);
            let r1 = _mm_and_si128(_mm_slli_epi32::<2>(words), _mm_slli_epi32::<8>(six_bits));
            let r2 = _mm_and_si128(_mm_slli_epi32::<4>(words), _mm_slli_epi32::<16>(six_bits));
            let r3 = _mm_and_si128(_mm_slli_epi32::<6>(words), _mm_slli_epi32::<24>(six_bits));
            let registers = _mm_or_si128(_mm_or_si128(r0, r1), _mm_or_si128(r2, r3));
            let raised = _mm_max_epu8(current, registers);
            // SAFETY: as the loads.
            unsafe { _mm_storeu_si128(max.as_mut_ptr().add(16 * g).cast::<__m128i>(), raised) };
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{REGISTERS, unpack16};

    proptest! {
        /// Whatever the bytes, each group the shuffle did holds the registers the scalar
        /// unpacking reads, raised over what was there.
        #[test]
        fn shuffled_groups_match_the_scalar_unpacking(
            dense in proptest::collection::vec(any::<u8>(), REGISTERS * 6 / 8),
            before in proptest::collection::vec(0u8..64, REGISTERS),
        ) {
            let mut max = before.clone();
            let done = super::merge_groups(&mut max, &dense);
            prop_assert!(done < REGISTERS / 16);
            for (g, packed) in dense.chunks_exact(12).enumerate() {
                let expected: Vec<u8> = if g < done {
                    unpack16(packed)
                        .iter()
                        .zip(&before[16 * g..16 * g + 16])
                        .map(|(&r, &m)| r.max(m))
                        .collect()
                } else {
                    before[16 * g..16 * g + 16].to_vec()
                };
                prop_assert_eq!(&max[16 * g..16 * g + 16], &expected[..]);
            }
        }
    }
}

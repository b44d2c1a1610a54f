//! Damaged copies of a valid input: what a decoder of disk or network bytes must refuse (or at
//! least survive) when one byte changes or the input stops early.

/// `seed` with each byte in turn flipped three ways (its low bit, its high bit, all bits).
pub fn flips(seed: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    (0..seed.len()).flat_map(move |at| {
        [1u8, 0x80, 0xFF].into_iter().map(move |flip| {
            let mut bad = seed.to_vec();
            bad[at] ^= flip;
            bad
        })
    })
}

/// Every proper prefix of `seed`, the empty one first.
pub fn truncations(seed: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    (0..seed.len()).map(|cut| seed[..cut].to_vec())
}

/// [`flips`], then [`truncations`].
pub fn corruptions(seed: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    flips(seed).chain(truncations(seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_flipped_three_ways_and_every_prefix_is_cut() {
        let seed = [0u8, 0x7F, 0xFF];
        let all: Vec<Vec<u8>> = corruptions(&seed).collect();
        assert_eq!(all.len(), 3 * 3 + 3);
        assert!(all[..9].iter().all(|bad| {
            bad.len() == 3 && bad.iter().zip(&seed).filter(|(a, b)| a != b).count() == 1
        }));
        assert_eq!(all[9..], [vec![], vec![0], vec![0, 0x7F]]);
    }
}

//! Pseudo-random inputs for fuzz targets under `cargo test`: xorshift64* from a fixed seed, so
//! every run tries the same inputs and a failure reproduces.

/// The xorshift64* generator (Marsaglia's xorshift with Vigna's multiplier).
#[derive(Debug, Clone)]
pub struct XorShift {
    state: u64,
}

impl XorShift {
    /// The seed every replay starts from.
    pub const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

    /// A generator at [`XorShift::SEED`].
    pub fn new() -> XorShift {
        XorShift { state: Self::SEED }
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next byte (the top bits, xorshift64*'s best).
    pub fn byte(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }

    /// An input of fewer than `len_max` bytes (at least one byte of range: `len_max > 0`).
    pub fn input(&mut self, len_max: usize) -> Vec<u8> {
        let len = (self.next_u64() % len_max.max(1) as u64) as usize;
        (0..len).map(|_| self.byte()).collect()
    }
}

impl Default for XorShift {
    fn default() -> XorShift {
        XorShift::new()
    }
}

/// `count` inputs of fewer than `len_max` bytes each, from a fresh generator.
pub fn inputs(count: usize, len_max: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut rng = XorShift::new();
    (0..count).map(move |_| rng.input(len_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_fixed_and_lengths_stay_below_the_maximum() {
        let first: Vec<Vec<u8>> = inputs(50, 30).collect();
        let again: Vec<Vec<u8>> = inputs(50, 30).collect();
        assert_eq!(first, again);
        assert!(first.iter().all(|input| input.len() < 30));
        assert!(first.iter().any(|input| input.len() > 10));
        let mut bytes = first.concat();
        bytes.sort_unstable();
        bytes.dedup();
        assert!(bytes.len() > 100, "only {} distinct bytes", bytes.len());
    }
}

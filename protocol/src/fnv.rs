//! FNV-1a, the hasher of the maps keyed by command names (the command lookup, the
//! per-command counters). Those keys are short and come from the command tables, not from
//! clients, so SipHash's defence against hash flooding buys nothing there while its cost
//! shows on every call.

use std::hash::{BuildHasherDefault, Hasher};

/// [`Fnv`] as a `HashMap`'s hasher.
pub(crate) type FnvBuild = BuildHasherDefault<Fnv>;

/// The FNV-1a 64-bit hash state.
#[derive(Debug)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// A slice's length prefix (and any `usize`) in one step instead of eight bytes' worth.
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

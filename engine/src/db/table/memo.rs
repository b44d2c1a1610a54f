//! The hashes of the keys a table looked up or prefetched last, and which of them it found
//! absent: a command looks its key up several times (the expiry check, the read, the write),
//! and a pipelined batch's keys are hashed ahead of running to prefetch their slots, so without
//! this most keys are hashed three times and a key that is not there is searched for twice.
//!
//! Direct-mapped: a short key (up to [`SHORT`] bytes, the keys of most workloads) has one
//! slot, chosen from its bytes; a slot holds one key (as its length and words, `short.rs`), its
//! hash and, when the key was searched for and not found, the table's insert count then.
//!
//! Invariants (checked by the table's `check_invariants`):
//! - a slot's hash is the table's hash of exactly the bytes it holds, so a key equal to them
//!   may use it: which key lands in which slot only decides how often a hash is reused;
//! - a key marked absent under insert count `n` was not held when marked; only an insert makes
//!   a key held, and every insert moves the count on, so while the count is still `n` the key is
//!   not held.

use std::cell::Cell;

use super::short::{self, SHORT, Words};
/// Slots (a power of two).
const SLOTS: usize = 32;
/// A slot's `absent_at` when its key is not known to be absent; the insert count never gets
/// there.
const NOT_ABSENT: u64 = u64::MAX;

/// A free slot's `len`.
const FREE: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Remembered {
    len: u64,
    words: Words,
    hash: u64,
    absent_at: u64,
}

const FREE_SLOT: Remembered = Remembered {
    len: FREE,
    words: [0; 3],
    hash: 0,
    absent_at: NOT_ABSENT,
};

/// A key the memo can hold, read once for both looking it up and remembering it.
#[derive(Clone, Copy)]
pub(super) struct ShortKey {
    len: u64,
    words: Words,
    slot: usize,
}

impl ShortKey {
    /// `key`, if it is short enough to be remembered.
    #[inline]
    pub(super) fn of(key: &[u8]) -> Option<ShortKey> {
        if key.len() > SHORT {
            return None;
        }
        let words = short::words(key);
        let len = key.len() as u64;
        Some(ShortKey {
            len,
            words,
            slot: slot_of(len, words),
        })
    }
}

/// What the memo knows of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Recalled {
    /// The key's hash.
    pub(super) hash: u64,
    /// Whether the key is known not to be held.
    pub(super) absent: bool,
}

/// See the module doc.
#[derive(Clone)]
pub(super) struct HashMemo {
    slots: [Cell<Remembered>; SLOTS],
    /// Inserts into the table so far.
    inserts: u64,
}

impl Default for HashMemo {
    fn default() -> Self {
        HashMemo {
            slots: [const { Cell::new(FREE_SLOT) }; SLOTS],
            inserts: 0,
        }
    }
}

/// The slot of a short key: its length and words mixed.
#[inline(always)]
fn slot_of(len: u64, [first, last, tail]: Words) -> usize {
    let mixed = (first ^ last.rotate_left(29) ^ tail.rotate_left(43) ^ len)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> (64 - SLOTS.trailing_zeros())) as usize
}

impl HashMemo {
    /// What is remembered of `key`, if anything.
    #[inline]
    pub(super) fn recall(&self, key: ShortKey) -> Option<Recalled> {
        let slot = self.slots[key.slot].get();
        (slot.len == key.len && slot.words == key.words).then_some(Recalled {
            hash: slot.hash,
            absent: slot.absent_at == self.inserts,
        })
    }

    /// Remembers that `key` hashes to `hash` (and, with `absent`, that it is not held now).
    #[inline]
    pub(super) fn remember(&self, key: ShortKey, hash: u64, absent: bool) {
        self.slots[key.slot].set(Remembered {
            len: key.len,
            words: key.words,
            hash,
            absent_at: if absent { self.inserts } else { NOT_ABSENT },
        });
    }

    /// Notes an insert into the table: every key known absent may be held now.
    #[inline]
    pub(super) fn inserted(&mut self) {
        self.inserts += 1;
    }

    /// Every remembered key with its hash and whether it is known absent (for the table's
    /// invariant check).
    pub(super) fn remembered(&self) -> impl Iterator<Item = (Vec<u8>, Recalled)> + '_ {
        self.slots.iter().filter_map(|slot| {
            let slot = slot.get();
            (slot.len != FREE).then(|| {
                (
                    short::bytes_of(slot.len as usize, slot.words),
                    Recalled {
                        hash: slot.hash,
                        absent: slot.absent_at == self.inserts,
                    },
                )
            })
        })
    }

    /// Whether each remembered key sits in its own slot.
    pub(super) fn check(&self) -> Result<(), String> {
        for (i, slot) in self.slots.iter().enumerate() {
            let slot = slot.get();
            if slot.len == FREE {
                continue;
            }
            if slot.len > SHORT as u64 || slot_of(slot.len, slot.words) != i {
                return Err(format!("hash memo slot {i} holds a key of another slot"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recall(memo: &HashMemo, key: &[u8]) -> Option<Recalled> {
        memo.recall(ShortKey::of(key)?)
    }

    fn remember(memo: &HashMemo, key: &[u8], hash: u64, absent: bool) {
        memo.remember(ShortKey::of(key).unwrap(), hash, absent);
    }

    #[test]
    fn a_key_is_recalled_with_its_hash_and_only_by_its_own_bytes() {
        let memo = HashMemo::default();
        assert_eq!(recall(&memo, b"key:1"), None);
        remember(&memo, b"key:1", 7, false);
        assert_eq!(
            recall(&memo, b"key:1"),
            Some(Recalled {
                hash: 7,
                absent: false
            })
        );
        assert_eq!(recall(&memo, b"key:10"), None);
        assert_eq!(recall(&memo, b"key:"), None);
        assert_eq!(recall(&memo, b""), None);
        remember(&memo, b"", 9, false);
        assert_eq!(recall(&memo, b"").map(|r| r.hash), Some(9));
        let remembered: Vec<Vec<u8>> = memo.remembered().map(|(key, _)| key).collect();
        assert!(remembered.contains(&b"key:1".to_vec()) && remembered.contains(&Vec::new()));
        memo.check().unwrap();
    }

    #[test]
    fn absence_lasts_until_the_next_insert() {
        let mut memo = HashMemo::default();
        remember(&memo, b"missing", 1, true);
        assert_eq!(recall(&memo, b"missing").map(|r| r.absent), Some(true));
        memo.inserted();
        assert_eq!(
            recall(&memo, b"missing"),
            Some(Recalled {
                hash: 1,
                absent: false
            })
        );
    }

    #[test]
    fn only_short_keys_are_remembered() {
        assert!(ShortKey::of(&[b'k'; SHORT + 1]).is_none());
        let memo = HashMemo::default();
        remember(&memo, &[b'k'; SHORT], 4, false);
        assert_eq!(recall(&memo, &[b'k'; SHORT]).map(|r| r.hash), Some(4));
    }

    #[test]
    fn benchmark_keys_spread_over_the_slots() {
        // `redis-benchmark -r` keys differ in their last digits only.
        let used: std::collections::HashSet<usize> = (0..64)
            .filter_map(|i| ShortKey::of(format!("key:{i:012}").as_bytes()))
            .map(|key| key.slot)
            .collect();
        assert!(used.len() >= SLOTS * 3 / 4, "{} slots used", used.len());
    }
}

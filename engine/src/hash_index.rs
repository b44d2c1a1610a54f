//! A hash index: positions by key hash, in one array of 8-byte slots. The keyspace table
//! (`db/table`) and the big collections' record tables (`types/records.rs`) find their entries
//! through it; what a position means, and how a key is compared, is theirs.
//!
//! A slot holds a position (low 32 bits) and 32 bits of the key's hash (high 32 bits), so a
//! lookup reads one slot and, when the hash bits match, the entry: two cache misses for a key
//! held inline, where a table of bare positions beside separate control bytes costs three. The
//! hash bits also give a slot's home bucket (their top `bits` bits), so growing or shrinking
//! re-places the slots without reading a key.
//!
//! Robin Hood linear probing with backward-shift deletion:
//! - a slot is [`EMPTY`] or sits at or after its home bucket (cyclically), at distance
//!   `(i - home) & mask`;
//! - along any run of occupied slots, no slot is further from its home than the slot after it
//!   plus one (the Robin Hood order), so a lookup stops at the first slot nearer to its home
//!   than the probe has gone;
//! - at most 7/8 of the slots are occupied, and there are at least [`MIN_SLOTS`].
//!
//! With `bits` bits of hash used for the home, the other `32 - bits` tell keys of one home
//! apart before their entries are read: at 2^24 slots one comparison in 256 reads an entry for
//! nothing.
//!
//! [`Index::scan`] walks the positions in the order of their 32 hash bits, a home bucket at a
//! time, and its cursor is a point of that order. A slot moves (Robin Hood displacement,
//! backward shift, a resize) but its hash bits do not, and a bucket at any size is a range of
//! them (growing splits a bucket into the two halves of its range), so a scan resumed from a
//! cursor visits every position held since the scan began at least once, whatever changed in
//! between: SCAN's guarantee, which Redis's `dictScan` keeps with reversed cursor bits because
//! its buckets are the low bits of the hash.

/// A free slot. No real slot equals it: a position is below `u32::MAX`.
const EMPTY: u64 = u64::MAX;
/// The smallest slot array (a power of two).
const MIN_SLOTS: usize = 8;

/// The bits of a hash the index reads (a slot keeps them): a hash with only these set finds
/// what the whole hash finds.
pub(crate) const HASH_BITS: u64 = 0xffff_ffff_0000_0000;

/// The 32 hash bits a slot keeps.
fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

fn slot_of(tag: u32, pos: u32) -> u64 {
    (u64::from(tag) << 32) | u64::from(pos)
}

fn pos_of(slot: u64) -> u32 {
    slot as u32
}

fn tag_of(slot: u64) -> u32 {
    (slot >> 32) as u32
}

/// Positions by hash (see the module doc).
#[derive(Clone)]
pub(crate) struct Index {
    slots: Box<[u64]>,
    len: usize,
    /// log2 of the slot count.
    bits: u32,
}

impl Default for Index {
    fn default() -> Self {
        Index::with_slots(MIN_SLOTS)
    }
}

impl Index {
    fn with_slots(n: usize) -> Index {
        debug_assert!(n.is_power_of_two() && n >= MIN_SLOTS);
        Index {
            slots: vec![EMPTY; n].into_boxed_slice(),
            len: 0,
            bits: n.trailing_zeros(),
        }
    }

    /// Positions held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Slots allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Bytes allocated.
    pub(crate) fn allocation_size(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The home bucket of a tag: its top `bits` bits.
    fn home(&self, tag: u32) -> usize {
        // `bits` is at least 3, so the shift is below 32.
        (tag >> (32 - self.bits)) as usize
    }

    fn distance(&self, i: usize, slot: u64) -> usize {
        i.wrapping_sub(self.home(tag_of(slot))) & self.mask()
    }

    /// The position stored for `hash` for which `is_key` holds.
    #[inline]
    pub(crate) fn find(&self, hash: u64, is_key: impl FnMut(u32) -> bool) -> Option<u32> {
        self.find_slot(hash, is_key).map(|i| pos_of(self.slots[i]))
    }

    #[inline]
    fn find_slot(&self, hash: u64, mut is_key: impl FnMut(u32) -> bool) -> Option<usize> {
        let tag = tag(hash);
        let mask = self.mask();
        let mut i = self.home(tag);
        let mut dist = 0;
        loop {
            let slot = self.slots[i];
            if slot == EMPTY || self.distance(i, slot) < dist {
                return None;
            }
            if tag_of(slot) == tag && is_key(pos_of(slot)) {
                return Some(i);
            }
            i = (i + 1) & mask;
            dist += 1;
        }
    }

    /// The slot at the home bucket of `hash`, read for its cache line alone (see
    /// `Table::prefetch` in `db/table`).
    pub(crate) fn home_slot(&self, hash: u64) -> u64 {
        self.slots[self.home(tag(hash))]
    }

    /// The first position stored with `hash`'s bits, without comparing keys: the entry a
    /// lookup of that key will most likely read.
    pub(crate) fn candidate(&self, hash: u64) -> Option<u32> {
        self.find(hash, |_| true)
    }

    /// The position in slot `i` (below [`Index::capacity`]), if the slot is held: a uniform
    /// random held slot is a uniform random position.
    pub(crate) fn position_at(&self, i: usize) -> Option<u32> {
        self.slots
            .get(i)
            .filter(|&&slot| slot != EMPTY)
            .map(|&slot| pos_of(slot))
    }

    /// Adds `pos` for `hash` (the caller knows no slot holds `pos`).
    pub(crate) fn insert(&mut self, hash: u64, pos: u32) {
        debug_assert!(pos != u32::MAX);
        if (self.len + 1) * 8 > self.slots.len() * 7 {
            self.resize(self.slots.len() * 2);
        }
        self.place(slot_of(tag(hash), pos));
        self.len += 1;
    }

    /// Puts a slot in the array (a free slot is there: the load is below 1).
    fn place(&mut self, mut slot: u64) {
        let mask = self.mask();
        let mut i = self.home(tag_of(slot));
        let mut dist = 0;
        loop {
            let here = self.slots[i];
            if here == EMPTY {
                self.slots[i] = slot;
                return;
            }
            let here_dist = self.distance(i, here);
            if here_dist < dist {
                // The richer slot moves on; this one takes its place.
                self.slots[i] = slot;
                slot = here;
                dist = here_dist;
            }
            i = (i + 1) & mask;
            dist += 1;
        }
    }

    /// Removes the slot holding `pos` for `hash`; returns whether there was one.
    pub(crate) fn remove(&mut self, hash: u64, pos: u32) -> bool {
        let Some(mut i) = self.find_slot(hash, |p| p == pos) else {
            return false;
        };
        let mask = self.mask();
        // Backward shift: the slots after it that are not at home move back by one.
        loop {
            let next = (i + 1) & mask;
            let slot = self.slots[next];
            if slot == EMPTY || self.distance(next, slot) == 0 {
                self.slots[i] = EMPTY;
                break;
            }
            self.slots[i] = slot;
            i = next;
        }
        self.len -= 1;
        true
    }

    /// Visits the positions whose hash bits are at or after `cursor`, in the order of those
    /// bits, a whole home bucket at a time, until `count` are visited or `count * 10` buckets
    /// are walked (as Redis bounds a scan of a sparse table); returns the cursor to resume
    /// from, or 0 once the last bucket is walked. A cursor past 32 bits visits nothing.
    pub(crate) fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(u32)) -> u64 {
        let Ok(from) = u32::try_from(cursor) else {
            return 0;
        };
        let shift = 32 - self.bits;
        let mut bucket = self.home(from);
        let (mut visited, mut walked) = (0usize, 0usize);
        let max_walked = count.saturating_mul(10);
        loop {
            self.scan_bucket(bucket, from, |pos| {
                visit(pos);
                visited += 1;
            });
            bucket += 1;
            walked += 1;
            if bucket == self.slots.len() {
                return 0;
            }
            if visited >= count || walked >= max_walked {
                return (bucket as u64) << shift;
            }
        }
    }

    /// Visits the positions whose home is `bucket` and whose hash bits are at least `from`.
    /// They follow one another from the first slot at or after `bucket` that is not taken by
    /// an earlier home (the Robin Hood order).
    fn scan_bucket(&self, bucket: usize, from: u32, mut visit: impl FnMut(u32)) {
        let mask = self.mask();
        let mut i = bucket;
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                return;
            }
            let (dist, from_bucket) = (self.distance(i, slot), i.wrapping_sub(bucket) & mask);
            if dist == from_bucket {
                if tag_of(slot) >= from {
                    visit(pos_of(slot));
                }
            } else if dist < from_bucket {
                // A later home: this bucket's slots are behind.
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Changes the position stored for `hash` from `from` to `to`; returns whether `from` was
    /// there.
    pub(crate) fn repoint(&mut self, hash: u64, from: u32, to: u32) -> bool {
        match self.find_slot(hash, |p| p == from) {
            Some(i) => {
                self.slots[i] = slot_of(tag(hash), to);
                true
            }
            None => false,
        }
    }

    /// Shrinks the array to the smallest that holds `keep` positions under the load limit
    /// (but never below what it holds).
    pub(crate) fn shrink_to(&mut self, keep: usize) {
        let need = keep.max(self.len) * 8 / 7 + 1;
        let n = need.next_power_of_two().max(MIN_SLOTS);
        if n < self.slots.len() {
            self.resize(n);
        }
    }

    /// Re-places every slot in an array of `n` slots: the homes come from the stored bits.
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(self, Index::with_slots(n));
        self.len = old.len;
        for &slot in old.slots.iter().filter(|&&s| s != EMPTY) {
            self.place(slot);
        }
    }

    /// Checks the module doc's invariants.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let n = self.slots.len();
        if !n.is_power_of_two() || n < MIN_SLOTS || n != 1 << self.bits {
            return Err(format!("{n} slots for {} bits", self.bits));
        }
        let held = self.slots.iter().filter(|&&s| s != EMPTY).count();
        if held != self.len {
            return Err(format!("{held} slots held, {} counted", self.len));
        }
        if held * 8 > n * 7 {
            return Err(format!("{held} slots held of {n}"));
        }
        for i in 0..n {
            let (here, next) = (self.slots[i], self.slots[(i + 1) & self.mask()]);
            if here != EMPTY
                && next != EMPTY
                && self.distance((i + 1) & self.mask(), next) > self.distance(i, here) + 1
            {
                return Err(format!("slot {} is out of Robin Hood order", i + 1));
            }
            if here == EMPTY && next != EMPTY && self.distance((i + 1) & self.mask(), next) != 0 {
                return Err(format!(
                    "slot {} is away from home after a free slot",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    /// Hashes that collide on purpose: few distinct homes, repeated tags.
    fn hash_of(key: u16) -> u64 {
        let h = u64::from(key % 37).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ u64::from(key % 5)
    }

    proptest! {
        #[test]
        fn the_index_matches_a_map(ops in proptest::collection::vec((any::<bool>(), 0u16..300), 1..600)) {
            let mut index = Index::default();
            let mut model: HashMap<u16, u32> = HashMap::new();
            let mut next = 0u32;
            for (add, key) in ops {
                if add && !model.contains_key(&key) {
                    index.insert(hash_of(key), next);
                    model.insert(key, next);
                    next += 1;
                } else if let Some(pos) = model.remove(&key) {
                    prop_assert!(index.remove(hash_of(key), pos));
                    if model.len() * 8 < index.capacity() {
                        index.shrink_to(model.len() * 2);
                    }
                }
                index.check_invariants().map_err(TestCaseError::fail)?;
                prop_assert_eq!(index.len(), model.len());
                for (&k, &pos) in &model {
                    prop_assert_eq!(index.find(hash_of(k), |p| p == pos), Some(pos));
                }
            }
        }
    }

    /// Scans `index` to the end from `cursor`, `count` at a time.
    fn scan_all(index: &Index, mut cursor: u64, count: usize) -> Vec<u32> {
        let mut seen = Vec::new();
        loop {
            cursor = index.scan(cursor, count, |pos| seen.push(pos));
            if cursor == 0 {
                return seen;
            }
        }
    }

    proptest! {
        /// SCAN's guarantee: a scan interleaved with inserts, removals, growth and shrinking
        /// visits every position held from its start to its end at least once.
        #[test]
        fn a_scan_visits_every_position_held_throughout(
            start in 0u16..400,
            steps in proptest::collection::vec(
                (0usize..4, any::<bool>(), proptest::collection::vec(0u16..400, 0..120)),
                1..20,
            ),
            count in 1usize..20,
        ) {
            let hasher = crate::sip::SipKey::random();
            let hash = |key: u16| hasher.hash(&key.to_le_bytes());
            let mut index = Index::default();
            let mut model: HashMap<u16, u32> = HashMap::new();
            let mut next = 0u32;
            for key in 0..start {
                index.insert(hash(key), next);
                model.insert(key, next);
                next += 1;
            }
            let mut throughout: HashMap<u16, u32> = model.clone();
            let mut seen = std::collections::HashSet::new();
            // The cursor to resume from, or None once a call returned 0.
            let mut cursor = Some(0);
            for (calls, adding, keys) in steps {
                for _ in 0..calls {
                    let Some(from) = cursor else { break };
                    let next = index.scan(from, count, |pos| { seen.insert(pos); });
                    cursor = (next != 0).then_some(next);
                }
                if cursor.is_none() {
                    break;
                }
                for key in keys {
                    if adding && !model.contains_key(&key) {
                        index.insert(hash(key), next);
                        model.insert(key, next);
                        next += 1;
                    } else if !adding {
                        if let Some(pos) = model.remove(&key) {
                            prop_assert!(index.remove(hash(key), pos));
                            throughout.remove(&key);
                            if model.len() * 8 < index.capacity() {
                                index.shrink_to(model.len());
                            }
                        }
                    }
                }
                index.check_invariants().map_err(TestCaseError::fail)?;
            }
            if let Some(from) = cursor {
                seen.extend(scan_all(&index, from, count));
            }
            for (key, pos) in throughout {
                prop_assert!(seen.contains(&pos), "key {} at {} never visited", key, pos);
            }
        }
    }

    #[test]
    fn a_scan_visits_about_count_positions_a_call_and_each_once_without_changes() {
        let (mut index, hasher) = (Index::default(), crate::sip::SipKey::random());
        for pos in 0..10_000u32 {
            index.insert(hasher.hash(&pos.to_le_bytes()), pos);
        }
        let (mut cursor, mut calls, mut seen) = (0, 0, Vec::new());
        loop {
            let before = seen.len();
            cursor = index.scan(cursor, 100, |pos| seen.push(pos));
            calls += 1;
            // A call stops after the bucket that reaches the count.
            assert!(
                cursor == 0 || (100..110).contains(&(seen.len() - before)),
                "{}",
                seen.len() - before
            );
            if cursor == 0 {
                break;
            }
        }
        assert!((95..=105).contains(&calls), "{calls} calls");
        seen.sort_unstable();
        assert_eq!(seen, (0..10_000).collect::<Vec<u32>>());
        assert_eq!(index.scan(1 << 32, 10, |_| panic!("visited")), 0);
    }

    #[test]
    fn repoint_moves_one_position() {
        let mut index = Index::default();
        for pos in 0..100 {
            index.insert(hash_of(pos as u16), pos);
        }
        assert!(index.repoint(hash_of(7), 7, 1000));
        assert_eq!(index.find(hash_of(7), |p| p == 1000), Some(1000));
        assert_eq!(index.find(hash_of(7), |p| p == 7), None);
        assert!(!index.repoint(hash_of(7), 7, 1001));
        index.check_invariants().unwrap();
    }
}

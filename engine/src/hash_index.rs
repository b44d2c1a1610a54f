//! A hash index: positions by key hash, in one array of 8-byte slots. The keyspace table
//! (`db/table`) and the big collections' record tables (`types/records.rs`) find their entries
//! through it; what a position means, and how a key is compared, is theirs.
//!
//! A slot holds a position (low 32 bits) and 32 bits of the key's hash (high 32 bits), so a
//! lookup reads one slot and, when the hash bits match, the entry: two cache misses for a key
//! held inline, where a table of bare positions beside separate control bytes costs three. The
//! hash bits also give a slot's home bucket (`tag * capacity >> 32`: the buckets split the
//! tags into contiguous ranges, in order), so growing or shrinking re-places the slots without
//! reading a key.
//!
//! The capacity is a step of the ladder `m * 2^s` for `m` in 4..=7 (8, 10, 12, 14, 16, 20, …),
//! not a power of two: growing multiplies it by 1.14 to 1.25 rather than 2, so a table just
//! grown holds 0.64 to 0.70 of its slots, not 0.4 (1M keys take 1.31M slots, not 2.1M). Each
//! step re-places every slot, so a key is re-placed 4 to 7 times over its table's growth
//! instead of once; a resize walks the old slots in their order, which is their homes' order
//! at any capacity, and lays them down in one pass (see [`Index::resize`]).
//!
//! Robin Hood linear probing with backward-shift deletion:
//! - a slot is [`EMPTY`] or sits at or after its home bucket (cyclically), at distance
//!   `(i - home) mod capacity`;
//! - along any run of occupied slots, no slot is further from its home than the slot after it
//!   plus one (the Robin Hood order), so a lookup stops at the first slot nearer to its home
//!   than the probe has gone;
//! - at most [`MAX_LOAD`] of the slots are occupied (a lower limit than a power-of-two table
//!   would take, as the ladder keeps a table nearer its limit: an insert's probe at 4/5 full is
//!   about 13 slots, at 7/8 about 32), and the capacity is a step of the ladder, at least
//!   [`MIN_SLOTS`].
//!
//! A home takes about `log2(capacity)` bits of the tag; the rest tell keys of one home apart
//! before their entries are read: at 2^24 slots one comparison in 256 reads an entry for
//! nothing.
//!
//! [`Index::scan`] walks the positions in the order of their 32 hash bits, a home bucket at a
//! time, and its cursor is a point of that order. A slot moves (Robin Hood displacement,
//! backward shift, a resize) but its hash bits do not, and a bucket at any size is a range of
//! them (at any capacity the buckets are contiguous ranges of them), so a scan resumed from a
//! cursor visits every position held since the scan began at least once, whatever changed in
//! between: SCAN's guarantee, which Redis's `dictScan` keeps with reversed cursor bits because
//! its buckets are the low bits of the hash.

/// A free slot. No real slot equals it: a position is below `u32::MAX`.
const EMPTY: u64 = u64::MAX;
/// The smallest slot array (the ladder's first step).
const MIN_SLOTS: usize = 8;

/// The most of its slots an index holds, as a fraction `(numerator, denominator)`.
const MAX_LOAD: (usize, usize) = (4, 5);

/// Whether `held` slots of `capacity` are within [`MAX_LOAD`].
fn within_load(held: usize, capacity: usize) -> bool {
    held * MAX_LOAD.1 <= capacity * MAX_LOAD.0
}

/// The home bucket of a tag among `capacity` buckets: where the tag falls among their equal
/// ranges.
#[inline(always)]
fn home_among(tag: u32, capacity: usize) -> usize {
    // Below the capacity: `tag < 2^32`. The capacity is far below 2^32 (positions are u32).
    ((u64::from(tag) * capacity as u64) >> 32) as usize
}

/// How far `i` is after `from` in a cycle of `capacity` (both below it).
#[inline(always)]
fn cyclic_after(i: usize, from: usize, capacity: usize) -> usize {
    if i >= from {
        i - from
    } else {
        i + capacity - from
    }
}

/// The ladder's smallest step holding `n` slots or more.
fn step_at_least(n: usize) -> usize {
    let n = n.max(MIN_SLOTS);
    // `n` lies in [4 * 2^s, 8 * 2^s) for this `s`; the step is `m * 2^s`, `m = ceil(n / 2^s)`.
    let s = (usize::BITS - 1 - n.leading_zeros()) - 2;
    let m = n.div_ceil(1 << s);
    m << s
}

/// Whether `n` is a step of the ladder.
fn is_step(n: usize) -> bool {
    n >= MIN_SLOTS && step_at_least(n) == n
}

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
}

impl Default for Index {
    fn default() -> Self {
        Index::with_slots(MIN_SLOTS)
    }
}

impl Index {
    fn with_slots(n: usize) -> Index {
        debug_assert!(is_step(n));
        Index {
            slots: vec![EMPTY; n].into_boxed_slice(),
            len: 0,
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

    /// The home bucket of a tag.
    #[inline]
    fn home(&self, tag: u32) -> usize {
        home_among(tag, self.slots.len())
    }

    /// The first tag whose home is `bucket` (at most the capacity): 2^32 for the capacity.
    fn first_tag(&self, bucket: usize) -> u64 {
        ((bucket as u64) << 32).div_ceil(self.slots.len() as u64)
    }

    /// The slot after `i`, cyclically.
    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() { 0 } else { i + 1 }
    }

    /// How far slot `i` is after `home`, cyclically.
    #[inline]
    fn after(&self, i: usize, home: usize) -> usize {
        cyclic_after(i, home, self.slots.len())
    }

    #[inline]
    fn distance(&self, i: usize, slot: u64) -> usize {
        self.after(i, self.home(tag_of(slot)))
    }

    /// The position stored for `hash` for which `is_key` holds.
    #[inline]
    pub(crate) fn find(&self, hash: u64, is_key: impl FnMut(u32) -> bool) -> Option<u32> {
        self.find_slot(hash, is_key).map(|i| pos_of(self.slots[i]))
    }

    #[inline]
    fn find_slot(&self, hash: u64, mut is_key: impl FnMut(u32) -> bool) -> Option<usize> {
        let tag = tag(hash);
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
            i = self.next(i);
            dist += 1;
        }
    }

    /// Hints the line of `hash`'s home slot into the cache (`crate::prefetch`).
    pub(crate) fn prefetch_home(&self, hash: u64) {
        crate::prefetch::line(std::ptr::from_ref(&self.slots[self.home(tag(hash))]).cast());
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
        if !within_load(self.len + 1, self.slots.len()) {
            self.resize(step_at_least(self.slots.len() + 1));
        }
        self.place(slot_of(tag(hash), pos));
        self.len += 1;
    }

    /// Puts a slot in the array (a free slot is there: the load is below 1).
    fn place(&mut self, mut slot: u64) {
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
            i = self.next(i);
            dist += 1;
        }
    }

    /// Removes the slot holding `pos` for `hash`; returns whether there was one.
    pub(crate) fn remove(&mut self, hash: u64, pos: u32) -> bool {
        let Some(mut i) = self.find_slot(hash, |p| p == pos) else {
            return false;
        };
        // Backward shift: the slots after it that are not at home move back by one.
        loop {
            let next = self.next(i);
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
                return self.first_tag(bucket);
            }
        }
    }

    /// Visits the positions whose home is `bucket` and whose hash bits are at least `from`.
    /// They follow one another from the first slot at or after `bucket` that is not taken by
    /// an earlier home (the Robin Hood order).
    fn scan_bucket(&self, bucket: usize, from: u32, mut visit: impl FnMut(u32)) {
        let mut i = bucket;
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                return;
            }
            let (dist, from_bucket) = (self.distance(i, slot), self.after(i, bucket));
            if dist == from_bucket {
                if tag_of(slot) >= from {
                    visit(pos_of(slot));
                }
            } else if dist < from_bucket {
                // A later home: this bucket's slots are behind.
                return;
            }
            i = self.next(i);
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
        let need = keep.max(self.len) * MAX_LOAD.1 / MAX_LOAD.0 + 1;
        let n = step_at_least(need);
        if n < self.slots.len() {
            self.resize(n);
        }
    }

    /// Re-places every slot in an array of `n` slots: the homes come from the stored bits.
    ///
    /// In one pass, not a `place` each: after a free slot, the old array's slots follow in the
    /// order of their homes (the Robin Hood order), so of their tags but among slots of one
    /// home, and a home at any capacity keeps the tags' order. So the walk meets the new homes
    /// in order too, cyclically from the new bucket where the walk's first old bucket begins,
    /// and lays each slot down at its home or just after the one before, which is the Robin
    /// Hood layout. The few slots met out of that order (two of one old home whose tags fall in
    /// new buckets the other way round, those of the first new bucket met again at the walk's
    /// end, those that would run past the array's end into its start) are placed after it.
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(self, Index::with_slots(n));
        self.len = old.len;
        let Some(free) = old.slots.iter().position(|&s| s == EMPTY) else {
            // The load is below 1, so a free slot exists; if it did not, place each.
            for &slot in old.slots.iter() {
                self.place(slot);
            }
            return;
        };
        let start = if free + 1 == old.slots.len() {
            0
        } else {
            free + 1
        };
        // `first_tag` of a bucket below the capacity is below 2^32.
        let base = self.home(old.first_tag(start) as u32);
        let mut layer = Layer {
            slots: &mut self.slots,
            base,
            next_free: 0,
            last_home: 0,
            out_of_order: Vec::new(),
        };
        for &slot in &old.slots[start..] {
            layer.lay(slot);
        }
        for &slot in &old.slots[..start] {
            layer.lay(slot);
        }
        let out_of_order = std::mem::take(&mut layer.out_of_order);
        for slot in out_of_order {
            self.place(slot);
        }
    }

    /// Checks the module doc's invariants.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let n = self.slots.len();
        if !is_step(n) {
            return Err(format!("{n} slots is not a step of the ladder"));
        }
        let held = self.slots.iter().filter(|&&s| s != EMPTY).count();
        if held != self.len {
            return Err(format!("{held} slots held, {} counted", self.len));
        }
        if !within_load(held, n) {
            return Err(format!("{held} slots held of {n}"));
        }
        for i in 0..n {
            let (here, next) = (self.slots[i], self.slots[self.next(i)]);
            if here != EMPTY
                && next != EMPTY
                && self.distance(self.next(i), next) > self.distance(i, here) + 1
            {
                return Err(format!("slot {} is out of Robin Hood order", i + 1));
            }
            if here == EMPTY && next != EMPTY && self.distance(self.next(i), next) != 0 {
                return Err(format!(
                    "slot {} is away from home after a free slot",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

/// A resize's one pass (see [`Index::resize`]): lays slots down in the order of their homes,
/// counted as offsets from `base`, cyclically.
struct Layer<'a> {
    slots: &'a mut [u64],
    base: usize,
    /// The offset after the last slot laid down.
    next_free: usize,
    /// The greatest home offset laid down.
    last_home: usize,
    /// The slots left for [`Index::place`]: met far out of their homes' order, or that would
    /// run past the array's end.
    out_of_order: Vec<u64>,
}

/// How many laid slots a slot met out of order may step back over (two of one old home whose
/// tags fall in new buckets the other way round); past it, the slot is left for `place`.
const STEP_BACK_MAX: usize = 4;

impl Layer<'_> {
    /// The array index of an offset below the capacity.
    #[inline(always)]
    fn index(&self, offset: usize) -> usize {
        let i = self.base + offset;
        if i >= self.slots.len() {
            i - self.slots.len()
        } else {
            i
        }
    }

    /// The home offset of a held slot.
    #[inline(always)]
    fn home(&self, slot: u64) -> usize {
        let n = self.slots.len();
        cyclic_after(home_among(tag_of(slot), n), self.base, n)
    }

    #[inline(always)]
    fn lay(&mut self, slot: u64) {
        if slot == EMPTY {
            return;
        }
        let home = self.home(slot);
        let at = home.max(self.next_free);
        if at >= self.slots.len() {
            self.out_of_order.push(slot);
        } else if home >= self.last_home {
            let i = self.index(at);
            self.slots[i] = slot;
            (self.next_free, self.last_home) = (at + 1, home);
        } else {
            self.step_back(slot, home);
        }
    }

    /// Lays `slot`, whose home is before the last one laid: at its home if that is free, else
    /// in front of the laid slots of later homes (the end of the run), which move one place on.
    #[cold]
    fn step_back(&mut self, slot: u64, home: usize) {
        // `home < last_home < next_free`. A free home (in a gap the walk left) takes it: a
        // slot at its home is in order whatever surrounds it.
        let at_home = self.index(home);
        if self.slots[at_home] == EMPTY {
            self.slots[at_home] = slot;
            return;
        }
        // The run ends at `next_free`.
        let mut first = self.next_free;
        while first > 0 && self.next_free - first < STEP_BACK_MAX {
            let before = self.slots[self.index(first - 1)];
            if before == EMPTY || self.home(before) <= home {
                break;
            }
            first -= 1;
        }
        let before = (first > 0).then(|| self.slots[self.index(first - 1)]);
        let held_before = before.is_some_and(|s| s != EMPTY);
        let in_order = !held_before || before.is_some_and(|s| self.home(s) <= home);
        // Its place must follow a held slot, or be its home, and end the later homes' walk.
        if !in_order || (first > home && !held_before) {
            self.out_of_order.push(slot);
            return;
        }
        for offset in (first..self.next_free).rev() {
            let (from, to) = (self.index(offset), self.index(offset + 1));
            self.slots[to] = self.slots[from];
        }
        let i = self.index(first);
        self.slots[i] = slot;
        self.next_free += 1;
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
    fn the_ladder_steps_by_a_quarter_to_an_eighth() {
        let steps: Vec<usize> =
            std::iter::successors(Some(MIN_SLOTS), |&n| Some(step_at_least(n + 1)))
                .take(12)
                .collect();
        assert_eq!(steps, [8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56]);
        assert_eq!(step_at_least(1_000_000 * 5 / 4 + 1), 5 << 18);
        assert_eq!(step_at_least(0), MIN_SLOTS);
        assert!((8..5000).all(|n| is_step(step_at_least(n)) && step_at_least(n) >= n));
    }

    #[test]
    fn a_bucket_is_the_range_of_tags_from_its_first() {
        for n in [8, 10, 14, 20, 28, 5 << 18, 7 << 20] {
            let index = Index::with_slots(n);
            for bucket in [1, 2, n / 3, n / 2, n - 1] {
                let first = index.first_tag(bucket);
                assert_eq!(
                    index.home(first as u32),
                    bucket,
                    "{n} slots, bucket {bucket}"
                );
                assert_eq!(
                    index.home(first as u32 - 1),
                    bucket - 1,
                    "{n} slots, bucket {bucket}"
                );
            }
            assert_eq!(index.home(u32::MAX), n - 1);
            assert_eq!(index.first_tag(n), 1 << 32);
        }
    }

    #[test]
    fn a_resize_to_any_step_keeps_every_position_in_robin_hood_order() {
        let hasher = crate::sip::SipKey::random();
        let mut index = Index::default();
        for pos in 0..20_000u32 {
            index.insert(hasher.hash(&pos.to_le_bytes()), pos);
        }
        // Up and down the ladder, through wrapped runs at the array's end.
        for n in [28_672, 40_960, 57_344, 32_768, 28_672, 49_152] {
            index.resize(n);
            index.check_invariants().unwrap();
            assert!((0..20_000u32).all(|pos| {
                index.find(hasher.hash(&pos.to_le_bytes()), |p| p == pos) == Some(pos)
            }));
        }
        // Colliding tags: many slots of one home, in any order.
        let mut index = Index::default();
        for pos in 0..3_000u32 {
            index.insert(hash_of(pos as u16), pos);
        }
        index.resize(step_at_least(4_000));
        index.check_invariants().unwrap();
        assert!(
            (0..3_000u32).all(|pos| index.find(hash_of(pos as u16), |p| p == pos) == Some(pos))
        );
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

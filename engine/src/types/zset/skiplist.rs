//! The skiplist encoding's data (Redis's skiplist + dict), in two parts:
//!
//! - `members`: each member with its score as one record of `types/records.rs` (the member's
//!   bytes, then the score's 8 bytes little-endian; the key is the member), found by member;
//! - `order`: a [`Slot`] per member in ascending (score, member) order, in sorted chunks
//!   (`chunks.rs`): the score inline, so a search compares doubles and reads a member from
//!   `members` only on a tie, and the position of the member's record.
//!
//! A member's bytes are held once, in a page of records. A record moves only when a removal
//! compacts its page; the table reports the moves, and the slot of each moved record, found
//! by its (score, member), is repointed before the operation returns.
//!
//! Invariants (checked by [`Skiplist::check_invariants`], with those of the records and the
//! chunks): the slots are strictly ascending by (score, member) and no score is NaN; a slot's
//! position holds the record its member is indexed at, with the slot's score (bit for bit);
//! there are as many slots as records.

use std::cmp::Ordering;

use crate::types::records::{Keyed, Records};

use super::chunks::{ChunkIter, Chunks};
use super::{Entry, EntryRef};

/// The record layout: the member, then the score's 8 bytes.
pub(super) struct MemberRecord;

impl Keyed for MemberRecord {
    fn key(record: &[u8]) -> &[u8] {
        &record[..record.len().saturating_sub(8)]
    }
}

/// The member and score of a record; an ill-formed one (never written) reads as an empty
/// member of score 0.
fn parts(record: &[u8]) -> (&[u8], f64) {
    let at = record.len().saturating_sub(8);
    let score = record
        .get(at..)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0.0, f64::from_le_bytes);
    (&record[..at], score)
}

/// One member in the order: its score, and its record's position. 12 bytes (align 4).
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    score: [u32; 2],
    pos: u32,
}

impl Slot {
    fn new(score: f64, pos: u32) -> Slot {
        let bits = score.to_bits();
        Slot {
            score: [bits as u32, (bits >> 32) as u32],
            pos,
        }
    }

    fn score(self) -> f64 {
        f64::from_bits(u64::from(self.score[0]) | (u64::from(self.score[1]) << 32))
    }
}

/// The member at `pos`.
fn member_at(members: &Records<MemberRecord>, pos: u32) -> &[u8] {
    MemberRecord::key(members.get_at(pos))
}

/// Whether `slot` orders before (score, member); `member_of` reads a slot's member.
#[inline]
fn before<'m>(
    slot: &Slot,
    score: f64,
    member: &[u8],
    member_of: impl FnOnce(u32) -> &'m [u8],
) -> bool {
    match slot.score().partial_cmp(&score) {
        Some(Ordering::Less) => true,
        Some(Ordering::Greater) => false,
        _ => member_of(slot.pos) < member,
    }
}

/// The skiplist encoding (see the module doc).
#[derive(Debug, Clone, Default)]
pub(super) struct Skiplist {
    members: Records<MemberRecord>,
    order: Chunks<Slot>,
}

/// A skiplist's entries from one rank on.
#[derive(Debug, Clone)]
pub(super) struct Iter<'a> {
    members: &'a Records<MemberRecord>,
    slots: ChunkIter<'a, Slot>,
}

impl<'a> Iter<'a> {
    fn entry(&self, slot: &Slot) -> EntryRef<'a> {
        EntryRef {
            score: slot.score(),
            member: member_at(self.members, slot.pos),
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        let slot = self.slots.next()?;
        Some(self.entry(slot))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let slot = self.slots.next_back()?;
        Some(self.entry(slot))
    }
}

impl Skiplist {
    /// Brings into the cache what looking up `members` will read.
    pub(super) fn prefetch_members(&self, members: &[&[u8]], hashes: &mut Vec<u64>) -> bool {
        self.members.prefetch(members, hashes)
    }

    /// Members held.
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    /// A skiplist of entries already ascending and distinct.
    pub(super) fn from_sorted<'a>(entries: impl Iterator<Item = EntryRef<'a>>) -> Skiplist {
        let mut members = Records::new();
        let slots = entries
            .map(|e| {
                let pos = members.insert_absent(e.member, &[e.member, &e.score.to_le_bytes()]);
                Slot::new(e.score, pos)
            })
            .collect();
        Skiplist {
            members,
            order: Chunks::from_sorted(slots),
        }
    }

    fn entry(&self, slot: &Slot) -> EntryRef<'_> {
        EntryRef {
            score: slot.score(),
            member: member_at(&self.members, slot.pos),
        }
    }

    /// The entry at rank `i`.
    pub(super) fn get(&self, i: usize) -> Option<EntryRef<'_>> {
        self.order.get(i).map(|s| self.entry(s))
    }

    /// Entries from rank `start` on, ascending.
    pub(super) fn iter_from(&self, start: usize) -> Iter<'_> {
        Iter {
            members: &self.members,
            slots: self.order.iter_from(start),
        }
    }

    /// The number of leading entries for which `pred` holds (true on a prefix).
    pub(super) fn partition_point(&self, pred: impl Fn(EntryRef<'_>) -> bool) -> usize {
        self.order.partition_point(|s| pred(self.entry(s)))
    }

    /// Visits about `count` members with their scores from `cursor`, in the order of their
    /// hash; returns the cursor to resume from, 0 at the end (`Records::scan`).
    pub(super) fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8], f64)) -> u64 {
        self.members.scan(cursor, count, |record| {
            let (member, score) = parts(record);
            visit(member, score);
        })
    }

    /// The score of `member`.
    pub(super) fn score(&self, member: &[u8]) -> Option<f64> {
        self.members.get(member).map(|r| parts(r).1)
    }

    /// The rank of (score, member), held or not.
    fn rank_of(&self, score: f64, member: &[u8]) -> usize {
        let members = &self.members;
        self.order
            .partition_point(|s| before(s, score, member, |p| member_at(members, p)))
    }

    /// The rank and score of `member`.
    pub(super) fn rank(&self, member: &[u8]) -> Option<(usize, f64)> {
        let score = self.score(member)?;
        Some((self.rank_of(score, member), score))
    }

    /// A uniformly random entry.
    pub(super) fn random(&self) -> Option<EntryRef<'_>> {
        self.members.random().map(|r| {
            let (member, score) = parts(r);
            EntryRef { score, member }
        })
    }

    /// Adds a member not held.
    pub(super) fn insert_new(&mut self, score: f64, member: &[u8]) {
        let pos = self
            .members
            .insert_absent(member, &[member, &score.to_le_bytes()]);
        self.place(Slot::new(score, pos), member);
    }

    /// Puts `slot` (of `member`, whose record is stored) in the order.
    fn place(&mut self, slot: Slot, member: &[u8]) {
        let members = &self.members;
        let score = slot.score();
        self.order.insert(slot, |s| {
            before(s, score, member, |p| member_at(members, p))
        });
    }

    /// Changes a held member's score; returns whether it is held. Its record stays where it
    /// is: the score's bytes are rewritten in place.
    pub(super) fn set_score(&mut self, member: &[u8], score: f64) -> bool {
        let Some(pos) = self.members.position(member) else {
            return false;
        };
        let old = parts(self.members.get_at(pos)).1;
        let rank = self.rank_of(old, member);
        self.order.remove_at(rank);
        let record = self.members.get_at_mut(pos);
        let at = record.len() - 8;
        record[at..].copy_from_slice(&score.to_le_bytes());
        self.place(Slot::new(score, pos), member);
        true
    }

    /// Removes `member`; returns whether it was held.
    pub(super) fn remove(&mut self, member: &[u8]) -> bool {
        let Some(score) = self.score(member) else {
            return false;
        };
        let rank = self.rank_of(score, member);
        self.order.remove_at(rank);
        let mut moves = Vec::new();
        self.members.remove_tracked(member, &mut moves);
        self.repoint(&mut moves);
        true
    }

    /// Removes the entries of ranks `start..end` (clamped); returns them.
    pub(super) fn remove_ranks(&mut self, start: usize, end: usize) -> Vec<Entry> {
        let slots = if end.saturating_sub(start) < 16 {
            (start..end.min(self.len()))
                .filter_map(|_| self.order.remove_at(start))
                .collect()
        } else {
            self.order.remove_range(start, end)
        };
        let removed: Vec<Entry> = slots.iter().map(|s| self.entry(s).to_entry()).collect();
        let mut moves = Vec::new();
        for e in &removed {
            self.members.remove_tracked(&e.member, &mut moves);
            self.repoint(&mut moves);
        }
        removed
    }

    /// Points the slots of the records `moves` moved at their new positions; empties
    /// `moves`. Until it is done, a slot may hold a position moved from: its member is read
    /// at the position moved to.
    fn repoint(&mut self, moves: &mut Vec<(u32, u32)>) {
        if moves.is_empty() {
            return;
        }
        moves.sort_unstable();
        let members = &self.members;
        let member_of = |pos: u32| {
            let pos = moves
                .binary_search_by_key(&pos, |m| m.0)
                .map_or(pos, |i| moves[i].1);
            member_at(members, pos)
        };
        for &(old, new) in moves.iter() {
            let (member, score) = parts(members.get_at(new));
            let rank = self
                .order
                .partition_point(|s| before(s, score, member, member_of));
            // A record moved while it waits for its removal has no slot.
            if let Some(slot) = self.order.get_mut(rank).filter(|s| s.pos == old) {
                slot.pos = new;
            }
        }
        moves.clear();
    }

    /// Bytes allocated.
    pub(super) fn allocation_size(&self) -> usize {
        self.members.allocation_size() + self.order.allocation_size()
    }

    /// Checks the module doc's invariants.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        self.members.check_invariants()?;
        self.order.check_invariants()?;
        if self.members.len() != self.order.len() {
            return Err(format!(
                "{} in the table, {} ordered",
                self.members.len(),
                self.order.len()
            ));
        }
        let mut prev: Option<EntryRef<'_>> = None;
        for slot in self.order.iter_from(0) {
            let (member, score) = parts(self.members.get_at(slot.pos));
            if self.members.position(member) != Some(slot.pos) {
                return Err(format!("a slot's position {} holds no member", slot.pos));
            }
            if score.to_bits() != slot.score().to_bits() {
                return Err("the table and the order disagree".into());
            }
            if score.is_nan() {
                return Err("a NaN score".into());
            }
            if let Some(p) = prev
                && !super::cmp(p.score, p.member, score, member).is_lt()
            {
                return Err("entries out of order".into());
            }
            prev = Some(EntryRef { score, member });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_its_member_and_score() {
        let mut r = b"member:1".to_vec();
        r.extend_from_slice(&(-2.5f64).to_le_bytes());
        assert_eq!(parts(&r), (&b"member:1"[..], -2.5));
        assert_eq!(MemberRecord::key(&r), b"member:1");
        assert_eq!(parts(b"abc"), (&b""[..], 0.0));
        assert_eq!(std::mem::size_of::<Slot>(), 12);
    }

    #[test]
    fn removals_that_compact_pages_keep_every_slot_pointing_at_its_member() {
        let mut z = Skiplist::default();
        for i in 0..30_000u32 {
            // Few distinct scores: the repointing searches break ties on members.
            z.insert_new(f64::from(i % 3), format!("member:{i}").as_bytes());
        }
        for i in (0..30_000u32).filter(|i| i % 5 != 0) {
            assert!(z.remove(format!("member:{i}").as_bytes()));
        }
        z.check_invariants().unwrap();
        assert_eq!(z.len(), 6000);
        z.remove_ranks(100, 5000);
        z.check_invariants().unwrap();
        assert_eq!(z.len(), 1100);
    }
}

//! The sorted set type: distinct byte-string members, each with a score (a double, never
//! NaN), ordered by score then by member bytes, in one of Redis's two encodings.
//!
//! - **listpack**: while small (at most `zset-max-listpack-entries` members of at most
//!   `zset-max-listpack-value` bytes: the [`Thresholds`] of the command's snapshot), the
//!   entries in order and nothing else: a member's score is found by a walk, as Redis's
//!   `zzlFind` does.
//! - **skiplist**: past those limits, Redis's skiplist + dict as two parts (`skiplist.rs`):
//!   each member with its score as a record in pages (`types/records.rs`), found by member
//!   through a hash index, and the order as sorted chunks of 12-byte slots (the score and the
//!   record's position), so a member's bytes are held once and a rank is a walk over chunk
//!   lengths and a search within one chunk that reads members only on tied scores.
//!
//! Both keep their order in sorted chunks (`chunks.rs`); [`Order`] reads either as
//! [`EntryRef`]s.
//!
//! As in Redis's `zsetAdd`, a listpack becomes a skiplist when an insert would pass a limit,
//! and a skiplist never converts back except where Redis rebuilds a result (the STORE forms,
//! [`ZSet::maybe_to_listpack`]). Scores compare as doubles: `-0` and `0` tie, and the tie is
//! broken by the members' bytes.
//!
//! Invariants (checked by [`ZSet::check_invariants`]): the entries are strictly ascending by
//! (score, member) and no score is NaN; the chunks are non-empty, within their bound, and
//! their counted length is exact; a listpack holds no member twice and no `-0` score (Redis
//! stores it as the integer 0); a skiplist's slots each point at the record of their member,
//! with the same score bit for bit, and there are as many records as slots (so the table and
//! the order hold the same members), besides the records' own invariants.

mod chunks;
pub(crate) mod commands;
pub mod geo;
pub mod score;
mod skiplist;

use std::cmp::Ordering;

use bytes::Bytes;

use crate::config::Thresholds;
use crate::types::random;
use chunks::{ChunkIter, Chunks};
use skiplist::Skiplist;

/// One member and its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The score (never NaN).
    pub score: f64,
    /// The member.
    pub member: Bytes,
}

/// Orders (score, member) pairs as Redis's skiplist does.
pub fn cmp(a_score: f64, a_member: &[u8], b_score: f64, b_member: &[u8]) -> Ordering {
    a_score
        .partial_cmp(&b_score)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a_member.cmp(b_member))
}

/// Whether `score` is `-0` (a listpack stores an integral score as an integer, so never).
fn is_negative_zero(score: f64) -> bool {
    score == 0.0 && score.is_sign_negative()
}

/// A member and its score, borrowed from the set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EntryRef<'a> {
    /// The score (never NaN).
    pub score: f64,
    /// The member.
    pub member: &'a [u8],
}

impl EntryRef<'_> {
    /// The entry, owned.
    pub fn to_entry(self) -> Entry {
        Entry {
            score: self.score,
            member: Bytes::copy_from_slice(self.member),
        }
    }
}

impl<'a> From<&'a Entry> for EntryRef<'a> {
    fn from(e: &'a Entry) -> EntryRef<'a> {
        EntryRef {
            score: e.score,
            member: &e.member,
        }
    }
}

/// The encoding and its data.
#[derive(Debug, Clone)]
enum Repr {
    /// The entries in order.
    Listpack(Chunks<Entry>),
    /// Members in a table of records, ordered by score in chunks of compact slots.
    Skiplist(Skiplist),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Listpack(Chunks::default())
    }
}

/// A set's entries in ascending (score, member) order, whatever the encoding.
#[derive(Debug, Clone, Copy)]
pub struct Order<'a>(&'a Repr);

/// An [`Order`]'s entries from one rank on.
#[derive(Debug, Clone)]
pub struct Iter<'a>(IterRepr<'a>);

#[derive(Debug, Clone)]
enum IterRepr<'a> {
    Listpack(ChunkIter<'a, Entry>),
    Skiplist(skiplist::Iter<'a>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        match &mut self.0 {
            IterRepr::Listpack(it) => it.next().map(EntryRef::from),
            IterRepr::Skiplist(it) => it.next(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Listpack(it) => it.next_back().map(EntryRef::from),
            IterRepr::Skiplist(it) => it.next_back(),
        }
    }
}

impl<'a> Order<'a> {
    /// Entries held.
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Listpack(c) => c.len(),
            Repr::Skiplist(s) => s.len(),
        }
    }

    /// Whether none are held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry at rank `i`.
    pub fn get(&self, i: usize) -> Option<EntryRef<'a>> {
        match self.0 {
            Repr::Listpack(c) => c.get(i).map(EntryRef::from),
            Repr::Skiplist(s) => s.get(i),
        }
    }

    /// The number of leading entries for which `pred` holds (`pred` true on a prefix).
    pub fn partition_point(&self, pred: impl Fn(EntryRef<'_>) -> bool) -> usize {
        match self.0 {
            Repr::Listpack(c) => c.partition_point(|e| pred(e.into())),
            Repr::Skiplist(s) => s.partition_point(pred),
        }
    }

    /// Entries from rank `start` on, ascending.
    pub fn iter_from(&self, start: usize) -> Iter<'a> {
        Iter(match self.0 {
            Repr::Listpack(c) => IterRepr::Listpack(c.iter_from(start)),
            Repr::Skiplist(s) => IterRepr::Skiplist(s.iter_from(start)),
        })
    }

    /// Every entry, ascending.
    pub fn iter(&self) -> Iter<'a> {
        self.iter_from(0)
    }

    /// Entries of ranks `start..=end` (clamped), ascending, owned.
    pub fn range(&self, start: usize, end: usize) -> Vec<Entry> {
        self.range_refs(start, end)
            .map(EntryRef::to_entry)
            .collect()
    }

    /// Entries of ranks `start..=end` (clamped), ascending.
    pub fn range_refs(&self, start: usize, end: usize) -> std::iter::Take<Iter<'a>> {
        let len = self.len();
        let n = if start > end || start >= len {
            0
        } else {
            end.min(len - 1) - start + 1
        };
        self.iter_from(start).take(n)
    }
}

/// A sorted set value.
#[derive(Debug, Clone, Default)]
pub struct ZSet {
    repr: Repr,
}

/// What [`ZSet::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new member.
    Added,
    /// An existing member's score changed.
    Updated,
    /// Nothing (NX/XX/GT/LT refused, or the same score).
    Nop,
}

/// The conditions of ZADD.
#[derive(Debug, Clone, Copy, Default)]
pub struct AddFlags {
    /// Only add new members.
    pub nx: bool,
    /// Only update existing ones.
    pub xx: bool,
    /// Only update to a greater score.
    pub gt: bool,
    /// Only update to a smaller score.
    pub lt: bool,
    /// Add the score to the current one.
    pub incr: bool,
}

/// A listpack's entries before (score, member).
fn listpack_before(e: &Entry, score: f64, member: &[u8]) -> bool {
    cmp(e.score, &e.member, score, member).is_lt()
}

impl ZSet {
    /// Brings into the cache what looking up `members` will read (see
    /// [`Value::prefetch_elements`](crate::types::Value::prefetch_elements)).
    pub(crate) fn prefetch_members(&self, members: &[&[u8]], hashes: &mut Vec<u64>) -> bool {
        match &self.repr {
            Repr::Skiplist(s) => s.prefetch_members(members, hashes),
            Repr::Listpack(_) => false,
        }
    }

    /// An empty sorted set in the encoding Redis's `zsetTypeCreate` picks for about
    /// `size_hint` members of up to `value_len` bytes.
    pub fn create(size_hint: usize, value_len: usize, lim: &Thresholds) -> ZSet {
        if size_hint > lim.zset_entries || value_len > lim.zset_value {
            ZSet::new_skiplist()
        } else {
            ZSet::default()
        }
    }

    /// An empty skiplist (where Redis builds a result before picking its encoding).
    pub fn new_skiplist() -> ZSet {
        ZSet {
            repr: Repr::Skiplist(Skiplist::default()),
        }
    }

    /// Converts a listpack to a skiplist if about `size_hint` members are coming (Redis's
    /// `zsetTypeMaybeConvert`).
    pub fn maybe_convert(&mut self, size_hint: usize, lim: &Thresholds) {
        if self.is_listpack() && size_hint > lim.zset_entries {
            self.to_skiplist();
        }
    }

    /// Turns the set into a skiplist.
    pub fn to_skiplist(&mut self) {
        if let Repr::Listpack(c) = &self.repr {
            let s = Skiplist::from_sorted(c.iter_from(0).map(EntryRef::from));
            self.repr = Repr::Skiplist(s);
        }
    }

    /// Turns a skiplist back into a listpack if it fits one (Redis's
    /// `zsetConvertToListpackIfNeeded`, for results the STORE forms build). A `-0` score
    /// becomes `0` on the way, as each entry goes through `zzlInsertAt`.
    pub fn maybe_to_listpack(&mut self, lim: &Thresholds) {
        let Repr::Skiplist(s) = &self.repr else {
            return;
        };
        let widest = s.iter_from(0).map(|e| e.member.len()).max().unwrap_or(0);
        if s.len() <= lim.zset_entries && widest <= lim.zset_value {
            let entries = s
                .iter_from(0)
                .map(|e| Entry {
                    score: if e.score == 0.0 { 0.0 } else { e.score },
                    member: Bytes::copy_from_slice(e.member),
                })
                .collect();
            self.repr = Repr::Listpack(Chunks::from_sorted(entries));
        }
    }

    /// Whether the encoding is listpack.
    pub fn is_listpack(&self) -> bool {
        matches!(self.repr, Repr::Listpack(_))
    }

    /// The encoding's name, as OBJECT ENCODING reports it.
    pub fn encoding(&self) -> &'static str {
        if self.is_listpack() {
            "listpack"
        } else {
            "skiplist"
        }
    }

    /// Members held.
    pub fn len(&self) -> usize {
        self.order().len()
    }

    /// What freeing it costs, as Redis counts it (`lazyfreeGetFreeEffort`): a skiplist's
    /// members.
    pub(crate) fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Skiplist(s) => s.len(),
            Repr::Listpack(_) => 1,
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ordered entries.
    pub fn order(&self) -> Order<'_> {
        Order(&self.repr)
    }

    /// ZSCAN's walk: the members and scores from `cursor`, about `count` of a skiplist in
    /// the order of their hash, and the cursor to resume from; a listpack's all at once, in
    /// order, with cursor 0, as Redis scans a listpack.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8], f64)) -> u64 {
        match &self.repr {
            Repr::Skiplist(s) => s.scan(cursor, count, visit),
            Repr::Listpack(c) => {
                c.iter_from(0).for_each(|e| visit(&e.member, e.score));
                0
            }
        }
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.repr {
            Repr::Skiplist(s) => s.score(member),
            Repr::Listpack(c) => c.iter_from(0).find(|e| e.member == member).map(|e| e.score),
        }
    }

    /// The 0-based rank of `member` from the lowest score, with its score.
    pub fn rank(&self, member: &[u8]) -> Option<(usize, f64)> {
        match &self.repr {
            Repr::Skiplist(s) => s.rank(member),
            Repr::Listpack(c) => c
                .iter_from(0)
                .enumerate()
                .find(|(_, e)| e.member == member)
                .map(|(i, e)| (i, e.score)),
        }
    }

    /// A uniformly random entry.
    pub fn random(&self) -> Option<EntryRef<'_>> {
        match &self.repr {
            Repr::Skiplist(s) => s.random(),
            Repr::Listpack(c) => c.get(random::below(c.len().max(1))).map(EntryRef::from),
        }
    }

    /// Adds or updates `member` as Redis's `zsetAdd`: `Err(())` when the score (or the
    /// incremented one) is NaN; else what happened and the member's score after.
    #[allow(clippy::result_unit_err)]
    pub fn add(
        &mut self,
        score: f64,
        member: &[u8],
        flags: AddFlags,
        lim: &Thresholds,
    ) -> Result<(Added, Option<f64>), ()> {
        if score.is_nan() {
            return Err(());
        }
        if let Some(cur) = self.score(member) {
            if flags.nx {
                return Ok((Added::Nop, None));
            }
            let mut score = score;
            if flags.incr {
                score += cur;
                if score.is_nan() {
                    return Err(());
                }
            }
            if (flags.lt && score >= cur) || (flags.gt && score <= cur) {
                return Ok((Added::Nop, None));
            }
            if score == cur {
                return Ok((Added::Nop, Some(score)));
            }
            match &mut self.repr {
                Repr::Skiplist(s) => {
                    s.set_score(member, score);
                }
                Repr::Listpack(_) => {
                    self.remove(member);
                    self.insert_new(score, member);
                }
            }
            return Ok((Added::Updated, Some(score)));
        }
        if flags.xx {
            return Ok((Added::Nop, None));
        }
        if self.is_listpack()
            && (self.len() + 1 > lim.zset_entries || member.len() > lim.zset_value)
        {
            self.to_skiplist();
        }
        self.insert_new(score, member);
        Ok((Added::Added, Some(score)))
    }

    fn insert_new(&mut self, score: f64, member: &[u8]) {
        match &mut self.repr {
            Repr::Skiplist(s) => s.insert_new(score, member),
            Repr::Listpack(_) => self.insert_unchecked(score, Bytes::copy_from_slice(member)),
        }
    }

    /// Inserts a member known to be absent, keeping the encoding (loads, results). A listpack
    /// keeps an integral score as an integer, as Redis's `zzlInsertAt` does, so `-0` is
    /// stored as `0` there.
    pub fn insert_unchecked(&mut self, score: f64, member: Bytes) {
        match &mut self.repr {
            Repr::Skiplist(s) => s.insert_new(score, &member),
            Repr::Listpack(c) => {
                let score = if score == 0.0 { 0.0 } else { score };
                let at = |e: &Entry| listpack_before(e, score, &member);
                let entry = Entry {
                    score,
                    member: member.clone(),
                };
                c.insert(entry, at);
            }
        }
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        if let Repr::Skiplist(s) = &mut self.repr {
            return s.remove(member);
        }
        let Some((rank, _)) = self.rank(member) else {
            return false;
        };
        if let Repr::Listpack(c) = &mut self.repr {
            c.remove_at(rank);
        }
        true
    }

    /// Removes the entries of ranks `start..=end`; returns them.
    pub fn remove_ranks(&mut self, start: usize, end: usize) -> Vec<Entry> {
        if start > end || start >= self.len() {
            return Vec::new();
        }
        let end = end.min(self.len() - 1);
        match &mut self.repr {
            Repr::Skiplist(s) => s.remove_ranks(start, end + 1),
            Repr::Listpack(c) if end - start < 16 => {
                (start..=end).filter_map(|_| c.remove_at(start)).collect()
            }
            Repr::Listpack(c) => c.remove_range(start, end + 1),
        }
    }

    /// A sorted set from loaded entries, in the encoding Redis loads them in.
    pub fn from_entries(entries: Vec<(Bytes, f64)>, lim: &Thresholds) -> ZSet {
        let widest = entries.iter().map(|e| e.0.len()).max().unwrap_or(0);
        let mut z = ZSet::create(entries.len(), widest, lim);
        for (m, s) in entries {
            if z.score(&m).is_none() {
                z.insert_unchecked(s, m);
            }
        }
        z
    }

    /// The bytes the set holds (an estimate for a listpack; a skiplist's allocations).
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Listpack(c) => c.iter_from(0).map(|e| e.member.len() + 2 + 8).sum(),
            Repr::Skiplist(s) => s.allocation_size(),
        }
    }

    /// Checks the invariants of the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.repr {
            Repr::Skiplist(s) => s.check_invariants(),
            Repr::Listpack(c) => {
                c.check_invariants()?;
                let mut prev: Option<&Entry> = None;
                for e in c.iter_from(0) {
                    if e.score.is_nan() {
                        return Err("a NaN score".into());
                    }
                    if is_negative_zero(e.score) {
                        return Err("a listpack holds a -0 score".into());
                    }
                    if let Some(p) = prev
                        && !cmp(p.score, &p.member, e.score, &e.member).is_lt()
                    {
                        return Err("entries out of order".into());
                    }
                    prev = Some(e);
                }
                let mut seen = std::collections::HashSet::new();
                if c.iter_from(0).any(|e| !seen.insert(&e.member)) {
                    return Err("a member held twice".into());
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;

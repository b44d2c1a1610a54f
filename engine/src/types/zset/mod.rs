//! The sorted set type: distinct byte-string members, each with a score (a double, never
//! NaN), ordered by score then by member bytes, in one of Redis's two encodings.
//!
//! - **listpack**: while small (at most `zset-max-listpack-entries` members of at most
//!   `zset-max-listpack-value` bytes: the [`Thresholds`] of the command's snapshot), the
//!   entries in order and nothing else: a member's score is found by a walk, as Redis's
//!   `zzlFind` does.
//! - **skiplist**: past those limits, the same ordered entries beside a hash table of member to
//!   score (Redis's skiplist + dict). The order is a [`Ordered`] run of sorted chunks, so a
//!   rank is a walk over chunk lengths and a search within one chunk (no O(n) scan per rank).
//!
//! As in Redis's `zsetAdd`, a listpack becomes a skiplist when an insert would pass a limit,
//! and a skiplist never converts back except where Redis rebuilds a result (the STORE forms,
//! [`ZSet::maybe_to_listpack`]). Scores compare as doubles: `-0` and `0` tie, and the tie is
//! broken by the members' bytes.
//!
//! Invariants (checked by [`ZSet::check_invariants`]): the entries are strictly ascending by
//! (score, member), no score is NaN, no listpack score is `-0` (Redis stores it as the
//! integer 0), every chunk is non-empty and within its bound, the
//! counted length is exact, and a skiplist's table holds exactly the entries' members with
//! their scores.

pub(crate) mod commands;
pub mod geo;
pub mod score;

use std::cmp::Ordering;
use std::collections::HashMap;

use bytes::Bytes;

use crate::config::Thresholds;

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

/// Entries per chunk before it splits.
const CHUNK_MAX: usize = 512;

/// Entries in ascending order, as a run of sorted chunks.
#[derive(Debug, Clone, Default)]
pub struct Ordered {
    chunks: Vec<Vec<Entry>>,
    len: usize,
}

impl Ordered {
    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none are held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk and offset of index `i` (< len).
    fn locate(&self, mut i: usize) -> (usize, usize) {
        for (c, chunk) in self.chunks.iter().enumerate() {
            if i < chunk.len() {
                return (c, i);
            }
            i -= chunk.len();
        }
        (self.chunks.len(), 0)
    }

    /// The entry at index `i`.
    pub fn get(&self, i: usize) -> Option<&Entry> {
        let (c, o) = self.locate(i);
        self.chunks.get(c).and_then(|ch| ch.get(o))
    }

    /// The number of leading entries for which `pred` holds (`pred` true on a prefix).
    pub fn partition_point(&self, pred: impl Fn(&Entry) -> bool) -> usize {
        let c = self
            .chunks
            .partition_point(|ch| ch.last().is_some_and(&pred));
        let before: usize = self.chunks[..c].iter().map(Vec::len).sum();
        before + self.chunks.get(c).map_or(0, |ch| ch.partition_point(&pred))
    }

    /// The index of the entry (score, member), if held.
    pub fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        let i = self.partition_point(|e| cmp(e.score, &e.member, score, member).is_lt());
        self.get(i).filter(|e| e.member == member).map(|_| i)
    }

    /// Inserts an entry not held.
    pub fn insert(&mut self, entry: Entry) {
        let c = self.chunks.partition_point(|ch| {
            ch.last()
                .is_some_and(|l| cmp(l.score, &l.member, entry.score, &entry.member).is_lt())
        });
        let c = c.min(self.chunks.len().saturating_sub(1));
        if self.chunks.is_empty() {
            self.chunks.push(Vec::new());
        }
        let chunk = &mut self.chunks[c];
        let at =
            chunk.partition_point(|e| cmp(e.score, &e.member, entry.score, &entry.member).is_lt());
        chunk.insert(at, entry);
        if chunk.len() > CHUNK_MAX * 2 {
            let tail = chunk.split_off(CHUNK_MAX);
            self.chunks.insert(c + 1, tail);
        }
        self.len += 1;
    }

    /// Removes the entry at index `i`.
    pub fn remove_at(&mut self, i: usize) -> Option<Entry> {
        let (c, o) = self.locate(i);
        let chunk = self.chunks.get_mut(c)?;
        if o >= chunk.len() {
            return None;
        }
        let e = chunk.remove(o);
        if chunk.is_empty() {
            self.chunks.remove(c);
        }
        self.len -= 1;
        Some(e)
    }

    /// Removes the entries of indexes `start..end`.
    pub fn remove_range(&mut self, start: usize, end: usize) -> Vec<Entry> {
        let all: Vec<Entry> = self.chunks.drain(..).flatten().collect();
        let mut all = all;
        let removed: Vec<Entry> = all
            .drain(start.min(all.len())..end.min(all.len()))
            .collect();
        *self = Ordered::from_sorted(all);
        removed
    }

    /// Entries from index `start` on, ascending.
    pub fn iter_from(&self, start: usize) -> impl DoubleEndedIterator<Item = &Entry> + '_ {
        let (c, o) = if start >= self.len {
            (self.chunks.len(), 0)
        } else {
            self.locate(start)
        };
        let first: &[Entry] = self.chunks.get(c).map_or(&[], |ch| &ch[o..]);
        let rest = self.chunks.get(c + 1..).unwrap_or(&[]);
        first.iter().chain(rest.iter().flatten())
    }

    /// Every entry, ascending.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Entry> + '_ {
        self.chunks.iter().flatten()
    }

    /// Entries of indexes `start..=end` (clamped), ascending.
    pub fn range(&self, start: usize, end: usize) -> Vec<Entry> {
        if start > end || start >= self.len {
            return Vec::new();
        }
        self.iter_from(start)
            .take(end.min(self.len - 1) - start + 1)
            .cloned()
            .collect()
    }

    /// An order from entries already ascending and distinct.
    pub fn from_sorted(entries: Vec<Entry>) -> Ordered {
        let len = entries.len();
        let mut chunks = Vec::with_capacity(len / CHUNK_MAX + 1);
        let mut it = entries.into_iter().peekable();
        while it.peek().is_some() {
            chunks.push(it.by_ref().take(CHUNK_MAX).collect());
        }
        Ordered { chunks, len }
    }

    fn check_invariants(&self) -> Result<(), String> {
        let mut n = 0;
        let mut prev: Option<&Entry> = None;
        for ch in &self.chunks {
            if ch.is_empty() || ch.len() > CHUNK_MAX * 2 {
                return Err(format!("a chunk of {}", ch.len()));
            }
            for e in ch {
                if e.score.is_nan() {
                    return Err("a NaN score".into());
                }
                if let Some(p) = prev
                    && !cmp(p.score, &p.member, e.score, &e.member).is_lt()
                {
                    return Err("entries out of order".into());
                }
                prev = Some(e);
                n += 1;
            }
        }
        if n != self.len {
            return Err(format!("{n} entries held, {} counted", self.len));
        }
        Ok(())
    }
}

/// A sorted set value.
#[derive(Debug, Clone, Default)]
pub struct ZSet {
    order: Ordered,
    /// Member to score: present exactly for the skiplist encoding.
    dict: Option<HashMap<Bytes, f64>>,
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

impl ZSet {
    /// An empty sorted set in the encoding Redis's `zsetTypeCreate` picks for about
    /// `size_hint` members of up to `value_len` bytes.
    pub fn create(size_hint: usize, value_len: usize, lim: &Thresholds) -> ZSet {
        let mut z = ZSet::default();
        if size_hint > lim.zset_entries || value_len > lim.zset_value {
            z.dict = Some(HashMap::with_capacity(size_hint.min(1 << 16)));
        }
        z
    }

    /// An empty skiplist (where Redis builds a result before picking its encoding).
    pub fn new_skiplist() -> ZSet {
        ZSet {
            order: Ordered::default(),
            dict: Some(HashMap::new()),
        }
    }

    /// Converts a listpack to a skiplist if about `size_hint` members are coming (Redis's
    /// `zsetTypeMaybeConvert`).
    pub fn maybe_convert(&mut self, size_hint: usize, lim: &Thresholds) {
        if self.dict.is_none() && size_hint > lim.zset_entries {
            self.to_skiplist();
        }
    }

    /// Turns the set into a skiplist.
    pub fn to_skiplist(&mut self) {
        if self.dict.is_none() {
            self.dict = Some(
                self.order
                    .iter()
                    .map(|e| (e.member.clone(), e.score))
                    .collect(),
            );
        }
    }

    /// Turns a skiplist back into a listpack if it fits one (Redis's
    /// `zsetConvertToListpackIfNeeded`, for results the STORE forms build). A `-0` score
    /// becomes `0` on the way, as each entry goes through `zzlInsertAt`.
    pub fn maybe_to_listpack(&mut self, lim: &Thresholds) {
        let widest = self.order.iter().map(|e| e.member.len()).max().unwrap_or(0);
        if self.dict.is_some() && self.len() <= lim.zset_entries && widest <= lim.zset_value {
            self.dict = None;
            if self.order.iter().any(|e| is_negative_zero(e.score)) {
                let entries = self
                    .order
                    .iter()
                    .map(|e| Entry {
                        score: if e.score == 0.0 { 0.0 } else { e.score },
                        member: e.member.clone(),
                    })
                    .collect();
                self.order = Ordered::from_sorted(entries);
            }
        }
    }

    /// Whether the encoding is listpack.
    pub fn is_listpack(&self) -> bool {
        self.dict.is_none()
    }

    /// The encoding's name, as OBJECT ENCODING reports it.
    pub fn encoding(&self) -> &'static str {
        if self.dict.is_none() {
            "listpack"
        } else {
            "skiplist"
        }
    }

    /// Members held.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The ordered entries.
    pub fn order(&self) -> &Ordered {
        &self.order
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.dict {
            Some(d) => d.get(member).copied(),
            None => self
                .order
                .iter()
                .find(|e| e.member == member)
                .map(|e| e.score),
        }
    }

    /// The 0-based rank of `member` from the lowest score, with its score.
    pub fn rank(&self, member: &[u8]) -> Option<(usize, f64)> {
        match &self.dict {
            Some(d) => {
                let s = *d.get(member)?;
                self.order.rank(s, member).map(|r| (r, s))
            }
            None => self
                .order
                .iter()
                .position(|e| e.member == member)
                .and_then(|i| self.order.get(i).map(|e| (i, e.score))),
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
            self.remove(member);
            self.insert_new(score, member);
            return Ok((Added::Updated, Some(score)));
        }
        if flags.xx {
            return Ok((Added::Nop, None));
        }
        if self.dict.is_none()
            && (self.len() + 1 > lim.zset_entries || member.len() > lim.zset_value)
        {
            self.to_skiplist();
        }
        self.insert_new(score, member);
        Ok((Added::Added, Some(score)))
    }

    fn insert_new(&mut self, score: f64, member: &[u8]) {
        self.insert_unchecked(score, Bytes::copy_from_slice(member));
    }

    /// Inserts a member known to be absent, keeping the encoding (loads, results). A listpack
    /// keeps an integral score as an integer, as Redis's `zzlInsertAt` does, so `-0` is
    /// stored as `0` there.
    pub fn insert_unchecked(&mut self, score: f64, member: Bytes) {
        let score = if score == 0.0 && self.dict.is_none() {
            0.0
        } else {
            score
        };
        if let Some(d) = &mut self.dict {
            d.insert(member.clone(), score);
        }
        self.order.insert(Entry { score, member });
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        let Some((rank, _)) = self.rank(member) else {
            return false;
        };
        self.order.remove_at(rank);
        if let Some(d) = &mut self.dict {
            d.remove(member);
        }
        true
    }

    /// Removes the entries of ranks `start..=end`; returns them.
    pub fn remove_ranks(&mut self, start: usize, end: usize) -> Vec<Entry> {
        if start > end || start >= self.len() {
            return Vec::new();
        }
        let end = end.min(self.len() - 1);
        let removed = if end - start < 16 {
            (start..=end)
                .filter_map(|_| self.order.remove_at(start))
                .collect()
        } else {
            self.order.remove_range(start, end + 1)
        };
        if let Some(d) = &mut self.dict {
            for e in &removed {
                d.remove(&e.member);
            }
        }
        removed
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

    /// The bytes the set holds (an estimate).
    pub fn memory_bytes(&self) -> usize {
        let entries: usize = self.order.iter().map(|e| e.member.len() + 2 + 8).sum();
        match &self.dict {
            None => entries,
            Some(d) => entries + d.len() * 64,
        }
    }

    /// Checks the invariants of the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.order.check_invariants()?;
        if let Some(d) = &self.dict {
            if d.len() != self.order.len() {
                return Err(format!(
                    "{} in the table, {} ordered",
                    d.len(),
                    self.order.len()
                ));
            }
            for e in self.order.iter() {
                if d.get(&e.member).map(|s| s.to_bits()) != Some(e.score.to_bits()) {
                    return Err("the table and the order disagree".into());
                }
            }
        } else {
            let mut seen = std::collections::HashSet::new();
            if self.order.iter().any(|e| !seen.insert(&e.member)) {
                return Err("a member held twice".into());
            }
            if self.order.iter().any(|e| is_negative_zero(e.score)) {
                return Err("a listpack holds a -0 score".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

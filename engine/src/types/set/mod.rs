//! The set type: distinct byte-string members, in one of Redis's three encodings.
//!
//! - **intset**: every member an integer (as Redis's `string2ll` reads one), at most
//!   `set-max-intset-entries` of them, sorted ascending (so SMEMBERS answers in order) in
//!   Redis's intset blob (`intset.rs`): the integers at the width the widest member ever
//!   needed (2, 4 or 8 bytes), which grows with a wider member and never shrinks, as Redis's
//!   does. RDB and DUMP write the blob as it is.
//! - **listpack**: at most `set-max-listpack-entries` members of at most
//!   `set-max-listpack-value` bytes, back to back in one buffer (`types/pack.rs`) in insertion order.
//! - **hashtable**: past those limits, a table of records (`types/records.rs`), each record a
//!   member: found by its hash, a random one drawn in O(1) (SPOP, SRANDMEMBER), iterated in
//!   storage order. As in Redis, a set only grows out of an encoding: removing members
//!   converts nothing back.
//!
//! A `Set` is 16 bytes, so it sits in the keyspace entry's `Value` itself: an intset is a pack
//! with its flag set holding one element, the blob; a listpack a pack without the flag; the
//! table is boxed (the small encodings are what most sets are). A small set is one
//! allocation.
//!
//! Conversions follow Redis 8.8's `setTypeAddAux`: an intset that receives a non-integer
//! becomes a listpack if it and the new member fit one, else a table; an intset past its
//! limit becomes a table; a listpack that would pass its limits becomes a table.
//!
//! The limits are the [`Thresholds`] of the command's snapshot (CONFIG SET takes effect on the
//! next write, as in Redis); a load uses the server's current ones.
//!
//! Invariants (checked by [`Set::check_invariants`]): an intset is a well-formed blob (its
//! width one of 2, 4, 8, its integers strictly ascending); a listpack holds no member twice;
//! the table keeps its own (`Records::check_invariants`). (The sizes are not checked: a limit
//! lowered by CONFIG SET leaves bigger compact sets as they are until their next write, as in
//! Redis.)

pub(crate) mod commands;
mod intset;

use std::collections::HashSet;
use std::ops::ControlFlow;

use bytes::Bytes;

use crate::config::Thresholds;
use crate::id::string_to_i64;
use crate::types::pack::Pack;
use crate::types::random;
use crate::types::records::{Records, WholeKey};

/// A set value.
#[derive(Debug, Clone)]
pub struct Set {
    repr: Repr,
}

/// The encoding (see the module doc for why 16 bytes).
#[derive(Debug, Clone)]
enum Repr {
    /// A listpack; with the pack's flag set, an intset: one element, its blob.
    Pack(Pack),
    /// The table, boxed: the small encodings are what most sets are.
    Table(Box<Records<WholeKey>>),
}

/// The encoding as the methods read it.
enum View<'a> {
    Intset(&'a [u8]),
    Listpack(&'a Pack),
    Table(&'a Records<WholeKey>),
}

/// The pack holding an intset blob.
fn intset_pack(blob: &[u8]) -> Pack {
    let mut p = Pack::flagged();
    p.push(&[blob]);
    p
}

/// The integer a member stands for, if Redis would keep it in an intset.
pub fn as_int(member: &[u8]) -> Option<i64> {
    string_to_i64(member)
}

impl Set {
    fn view(&self) -> View<'_> {
        match &self.repr {
            Repr::Pack(p) if p.flag() => View::Intset(p.iter().next().unwrap_or_default()),
            Repr::Pack(p) => View::Listpack(p),
            Repr::Table(t) => View::Table(t),
        }
    }

    /// Brings into the cache what looking up `members` will read (see
    /// [`Value::prefetch_elements`](crate::types::Value::prefetch_elements)).
    pub(crate) fn prefetch_members(&self, members: &[&[u8]], hashes: &mut Vec<u64>) -> bool {
        match &self.repr {
            Repr::Table(t) => t.prefetch(members, hashes),
            Repr::Pack(_) => false,
        }
    }

    fn set_intset(&mut self, blob: &[u8]) {
        self.repr = Repr::Pack(intset_pack(blob));
    }

    /// An empty set in the encoding Redis's `setTypeCreate` picks for a first member
    /// `first` and about `size_hint` members.
    pub fn for_members(first: &[u8], size_hint: usize, lim: &Thresholds) -> Set {
        if as_int(first).is_some() && size_hint <= lim.set_intset_entries {
            Set::new_intset()
        } else if size_hint <= lim.set_entries {
            Set::new_listpack()
        } else {
            Set::new_table()
        }
    }

    /// An empty intset (what SINTERSTORE and SUNIONSTORE start their result from).
    pub fn new_intset() -> Set {
        Set {
            repr: Repr::Pack(intset_pack(&intset::empty())),
        }
    }

    /// An empty listpack.
    pub fn new_listpack() -> Set {
        Set {
            repr: Repr::Pack(Pack::new()),
        }
    }

    /// An empty table.
    pub fn new_table() -> Set {
        Set {
            repr: Repr::Table(Box::default()),
        }
    }

    /// A set from a loaded intset blob, as it is (its width kept), made a table if it holds
    /// more integers than an intset may; an error saying what is wrong with an ill-formed
    /// blob.
    pub fn from_intset_blob(blob: &[u8], lim: &Thresholds) -> Result<Set, String> {
        intset::check(blob)?;
        let mut set = Set {
            repr: Repr::Pack(intset_pack(blob)),
        };
        if set.len() > lim.set_intset_entries {
            set.convert_to_table();
        }
        Ok(set)
    }

    /// An intset's blob in Redis's encoding (what RDB and DUMP write); `None` for the other
    /// encodings.
    pub fn intset_blob(&self) -> Option<&[u8]> {
        match self.view() {
            View::Intset(blob) => Some(blob),
            _ => None,
        }
    }

    /// Whether the set is an intset.
    pub fn is_intset(&self) -> bool {
        matches!(self.view(), View::Intset(_))
    }

    /// Whether the set is a listpack.
    pub fn is_listpack(&self) -> bool {
        matches!(self.view(), View::Listpack(_))
    }

    /// Converts to a table when about `size_hint` members are coming and the encoding would
    /// not hold them (Redis's `setTypeMaybeConvert`).
    pub fn reserve(&mut self, size_hint: usize, lim: &Thresholds) {
        let convert = match self.view() {
            View::Intset(_) => size_hint > lim.set_intset_entries,
            View::Listpack(_) => size_hint > lim.set_entries,
            View::Table(_) => false,
        };
        if convert {
            self.convert_to_table();
        }
    }

    /// The encoding's name, as OBJECT ENCODING reports it.
    pub fn encoding(&self) -> &'static str {
        match self.view() {
            View::Intset(_) => "intset",
            View::Listpack(_) => "listpack",
            View::Table(_) => "hashtable",
        }
    }

    /// What freeing it costs, as Redis counts it (`lazyfreeGetFreeEffort`): a table's
    /// members.
    pub(crate) fn free_effort(&self) -> usize {
        match self.view() {
            View::Table(t) => t.len(),
            _ => 1,
        }
    }

    /// Members held.
    pub fn len(&self) -> usize {
        match self.view() {
            View::Intset(blob) => intset::len(blob),
            View::Listpack(p) => p.elements(),
            View::Table(t) => t.len(),
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `member` is in the set.
    pub fn contains(&self, member: &[u8]) -> bool {
        match self.view() {
            View::Intset(blob) => as_int(member).is_some_and(|n| intset::search(blob, n).is_ok()),
            View::Listpack(p) => p.find(1, member).is_some(),
            View::Table(t) => t.contains(member),
        }
    }

    /// Calls `f` with every member, in the encoding's order.
    pub fn for_each(&self, mut f: impl FnMut(&[u8])) {
        self.try_for_each(|m| {
            f(m);
            ControlFlow::Continue(())
        });
    }

    /// Calls `f` with every member, in the encoding's order, until it breaks.
    pub fn try_for_each(&self, mut f: impl FnMut(&[u8]) -> ControlFlow<()>) {
        let _ = match self.view() {
            View::Intset(blob) => {
                let mut text = itoa::Buffer::new();
                intset::iter(blob).try_for_each(|n| f(text.format(n).as_bytes()))
            }
            View::Listpack(p) => p.iter().try_for_each(f),
            View::Table(t) => t.iter().try_for_each(f),
        };
    }

    /// SSCAN's walk: the members from `cursor`, about `count` of a table in the order of
    /// their hash, and the cursor to resume from; an intset's or listpack's all at once, with
    /// cursor 0, as Redis scans them.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8])) -> u64 {
        match self.view() {
            View::Table(t) => t.scan(cursor, count, visit),
            _ => {
                self.for_each(&mut visit);
                0
            }
        }
    }

    /// The members, in the encoding's order.
    pub fn members(&self) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(self.len());
        self.for_each(|m| out.push(Bytes::copy_from_slice(m)));
        out
    }

    /// A uniformly random member.
    pub fn random_member(&self) -> Option<Bytes> {
        match self.view() {
            View::Intset(blob) if intset::len(blob) > 0 => Some(Bytes::from(
                intset::get(blob, random::below(intset::len(blob))).to_string(),
            )),
            View::Intset(_) => None,
            View::Listpack(p) if p.elements() > 0 => p
                .iter()
                .nth(random::below(p.elements()))
                .map(Bytes::copy_from_slice),
            View::Listpack(_) => None,
            View::Table(t) => t.random().map(Bytes::copy_from_slice),
        }
    }

    /// `count` uniformly random members, each drawn on its own (so they may repeat), in the
    /// order drawn: O(count) for a table, one walk of a compact set.
    pub fn random_members(&self, count: usize) -> Vec<Bytes> {
        if self.is_empty() {
            return Vec::new();
        }
        match self.view() {
            View::Table(t) => (0..count)
                .filter_map(|_| t.random().map(Bytes::copy_from_slice))
                .collect(),
            _ => {
                let all = self.members();
                (0..count)
                    .map(|_| all[random::below(all.len())].clone())
                    .collect()
            }
        }
    }

    /// `count` distinct members (all of them if `count` is at least the size), each subset
    /// as likely as another, in random order: Redis's SRANDMEMBER cases 3 and 4, O(count)
    /// for a table much bigger than `count`, else one walk of the set.
    pub fn random_distinct(&self, count: usize) -> Vec<Bytes> {
        match self.view() {
            View::Table(t) => t
                .sample(count)
                .into_iter()
                .map(Bytes::copy_from_slice)
                .collect(),
            _ => {
                let all = self.members();
                random::distinct(all.len(), count)
                    .into_iter()
                    .map(|i| all[i].clone())
                    .collect()
            }
        }
    }

    /// Removes a uniformly random member and returns it.
    pub fn pop_random(&mut self) -> Option<Bytes> {
        let member = self.random_member()?;
        self.remove(&member);
        Some(member)
    }

    /// Adds `member`; returns whether it was new.
    pub fn add(&mut self, member: &[u8], lim: &Thresholds) -> bool {
        match &mut self.repr {
            Repr::Pack(p) if p.flag() => {
                let blob = p.iter().next().unwrap_or_default();
                if let Some(n) = as_int(member) {
                    let Err(at) = intset::search(blob, n) else {
                        return false;
                    };
                    let grown = intset::inserted(blob, at, n);
                    self.set_intset(&grown);
                    if intset::len(&grown) > lim.set_intset_entries {
                        self.convert_to_table();
                    }
                    return true;
                }
                let len = intset::len(blob);
                let widest = [0, len.saturating_sub(1)]
                    .into_iter()
                    .filter(|&i| i < len)
                    .map(|i| intset::get(blob, i).to_string().len())
                    .max()
                    .unwrap_or(0);
                if len < lim.set_entries && member.len() <= lim.set_value && widest <= lim.set_value
                {
                    let mut pack = Pack::new();
                    for n in intset::iter(blob) {
                        pack.push(&[n.to_string().as_bytes()]);
                    }
                    pack.push(&[member]);
                    self.repr = Repr::Pack(pack);
                } else {
                    self.convert_to_table();
                    self.add(member, lim);
                }
                true
            }
            Repr::Pack(p) => {
                if p.find(1, member).is_some() {
                    return false;
                }
                if p.elements() < lim.set_entries && member.len() <= lim.set_value {
                    p.push(&[member]);
                } else {
                    self.convert_to_table();
                    self.add(member, lim);
                }
                true
            }
            Repr::Table(t) => t.insert(member, &[member]),
        }
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Pack(p) if p.flag() => {
                let blob = p.iter().next().unwrap_or_default();
                match as_int(member).map(|n| intset::search(blob, n)) {
                    Some(Ok(at)) => {
                        let shrunk = intset::removed(blob, at);
                        self.set_intset(&shrunk);
                        true
                    }
                    _ => false,
                }
            }
            Repr::Pack(p) => p.find(1, member).map(|at| p.remove(at, 1)).is_some(),
            Repr::Table(t) => t.remove(member),
        }
    }

    /// Turns the set into a table.
    pub fn convert_to_table(&mut self) {
        if matches!(self.repr, Repr::Table(_)) {
            return;
        }
        let mut table = Records::new();
        self.for_each(|m| {
            table.insert(m, &[m]);
        });
        self.repr = Repr::Table(Box::new(table));
    }

    /// Turns the set into an intset if every member is an integer and they fit one (Redis's
    /// `maybeConvertToIntset`, used where a result is known to hold integers only).
    pub fn maybe_to_intset(&mut self, lim: &Thresholds) {
        if self.is_intset() || self.len() > lim.set_intset_entries {
            return;
        }
        let ints: Option<Vec<i64>> = self.members().iter().map(|m| as_int(m)).collect();
        if let Some(mut ints) = ints {
            ints.sort_unstable();
            let width = ints.iter().map(|&n| intset::width_of(n)).max().unwrap_or(2);
            let blob = intset::encode(ints.len(), ints.into_iter(), width);
            self.set_intset(&blob);
        }
    }

    /// A set from the members of a plain set record, in the encoding Redis's `rdbLoadObject`
    /// gives it: a table when they outnumber `set-max-intset-entries`, else an intset each
    /// member converts as SADD would (so a few strings make a listpack, but a few more
    /// integers than an intset holds make a table, whatever the listpack limits).
    pub fn from_members(members: Vec<Bytes>, lim: &Thresholds) -> Set {
        const INTSET_ENTRIES_MAX: usize = 1 << 30;
        let mut set = if members.len() > lim.set_intset_entries.min(INTSET_ENTRIES_MAX) {
            Set::new_table()
        } else {
            Set::new_intset()
        };
        for m in members {
            set.add(&m, lim);
        }
        set
    }

    /// The bytes the set holds (an estimate: its buffer, or the table's allocations).
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.bytes(),
            Repr::Table(t) => std::mem::size_of::<Records<WholeKey>>() + t.allocation_size(),
        }
    }

    /// Checks the invariants of the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.repr {
            Repr::Pack(p) if p.flag() => {
                p.check_invariants(1)?;
                if p.elements() != 1 {
                    return Err(format!("an intset pack of {} elements", p.elements()));
                }
            }
            Repr::Pack(p) => p.check_invariants(1)?,
            Repr::Table(_) => {}
        }
        match self.view() {
            View::Intset(blob) => intset::check(blob)?,
            View::Listpack(p) => {
                let mut seen = HashSet::new();
                for m in p.iter() {
                    if !seen.insert(m) {
                        return Err("a member held twice".into());
                    }
                }
            }
            View::Table(t) => t.check_invariants()?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

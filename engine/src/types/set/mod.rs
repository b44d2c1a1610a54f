//! The set type: distinct byte-string members, in one of Redis's three encodings.
//!
//! - **intset**: every member an integer (as Redis's `string2ll` reads one), at most
//!   `set-max-intset-entries` of them, kept sorted ascending (so SMEMBERS answers in order).
//! - **listpack**: at most `set-max-listpack-entries` members of at most
//!   `set-max-listpack-value` bytes, back to back in one buffer (`types/pack.rs`) in insertion order.
//! - **hashtable**: a hash set, past those limits. As in Redis, a set only grows out of an
//!   encoding: removing members converts nothing back.
//!
//! Conversions follow Redis 8.8's `setTypeAddAux`: an intset that receives a non-integer
//! becomes a listpack if it and the new member fit one, else a table; an intset past its
//! limit becomes a table; a listpack that would pass its limits becomes a table.
//!
//! The limits are the [`Thresholds`] of the command's snapshot (CONFIG SET takes effect on the
//! next write, as in Redis); a load uses the server's current ones.
//!
//! An intset also keeps the width of its integers (2, 4 or 8 bytes), which grows with a wider
//! member and never shrinks, as Redis's blob does: DUMP writes it.
//!
//! Invariants (checked by [`Set::check_invariants`]): an intset is strictly ascending and its
//! width holds every member; a listpack holds no member twice. (The sizes are not checked: a limit lowered by CONFIG SET
//! leaves bigger compact sets as they are until their next write, as in Redis.)

pub(crate) mod commands;

use std::collections::HashSet;

use indexmap::IndexSet;

use bytes::Bytes;

use crate::config::Thresholds;
use crate::id::string_to_i64;
use crate::types::pack::Pack;

/// A set value.
#[derive(Debug, Clone)]
pub struct Set {
    repr: Repr,
}

/// The bytes per integer an intset needs for `n` (Redis's `_intsetValueEncoding`).
fn int_width(n: i64) -> u8 {
    if i16::try_from(n).is_ok() {
        2
    } else if i32::try_from(n).is_ok() {
        4
    } else {
        8
    }
}

#[derive(Debug, Clone)]
enum Repr {
    /// Sorted distinct integers, held at their exact count (one reallocation a change, as
    /// Redis's intset makes), and the bytes per integer of the intset (2, 4 or 8): as in
    /// Redis, it widens for a wider member and never narrows when that member goes, and DUMP
    /// writes it. Both fit the 24 bytes the other encodings take.
    Intset(Box<[i64]>, u8),
    /// Members in insertion order.
    Listpack(Pack),
    /// A hash set, indexed by position for random picks.
    /// Boxed: the small encodings are what most sets are, and they should not pay for the
    /// table's size.
    Table(Box<IndexSet<Bytes>>),
}

/// The integer a member stands for, if Redis would keep it in an intset.
pub fn as_int(member: &[u8]) -> Option<i64> {
    string_to_i64(member)
}

impl Set {
    /// An empty set in the encoding Redis's `setTypeCreate` picks for a first member
    /// `first` and about `size_hint` members.
    pub fn for_members(first: &[u8], size_hint: usize, lim: &Thresholds) -> Set {
        let repr = if as_int(first).is_some() && size_hint <= lim.set_intset_entries {
            Repr::Intset(Box::default(), 2)
        } else if size_hint <= lim.set_entries {
            Repr::Listpack(Pack::new())
        } else {
            Repr::Table(Box::new(IndexSet::with_capacity(size_hint)))
        };
        Set { repr }
    }

    /// An empty intset (what SINTERSTORE and SUNIONSTORE start their result from).
    pub fn new_intset() -> Set {
        Set {
            repr: Repr::Intset(Box::default(), 2),
        }
    }

    /// An empty listpack.
    pub fn new_listpack() -> Set {
        Set {
            repr: Repr::Listpack(Pack::new()),
        }
    }

    /// An empty table.
    pub fn new_table() -> Set {
        Set {
            repr: Repr::Table(Box::default()),
        }
    }

    /// The bytes per integer of an intset's blob (2, 4 or 8): the widest its members ever
    /// needed.
    pub fn intset_width(&self) -> u8 {
        match &self.repr {
            Repr::Intset(_, width) => *width,
            _ => 2,
        }
    }

    /// Widens an intset's blob to at least `width` bytes per integer (a loaded blob keeps its
    /// width).
    pub fn widen_intset(&mut self, width: u8) {
        if let Repr::Intset(_, w) = &mut self.repr {
            *w = (*w).max(width);
        }
    }

    /// Whether the set is an intset.
    pub fn is_intset(&self) -> bool {
        matches!(self.repr, Repr::Intset(..))
    }

    /// Whether the set is a listpack.
    pub fn is_listpack(&self) -> bool {
        matches!(self.repr, Repr::Listpack(_))
    }

    /// Converts to a table when about `size_hint` members are coming and the encoding would
    /// not hold them (Redis's `setTypeMaybeConvert`).
    pub fn reserve(&mut self, size_hint: usize, lim: &Thresholds) {
        let convert = match &self.repr {
            Repr::Intset(..) => size_hint > lim.set_intset_entries,
            Repr::Listpack(_) => size_hint > lim.set_entries,
            Repr::Table(_) => false,
        };
        if convert {
            self.convert_to_table();
        }
    }

    /// The encoding's name, as OBJECT ENCODING reports it.
    pub fn encoding(&self) -> &'static str {
        match self.repr {
            Repr::Intset(..) => "intset",
            Repr::Listpack(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    /// Members held.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Intset(v, _) => v.len(),
            Repr::Listpack(p) => p.elements(),
            Repr::Table(t) => t.len(),
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `member` is in the set.
    pub fn contains(&self, member: &[u8]) -> bool {
        match &self.repr {
            Repr::Intset(v, _) => as_int(member).is_some_and(|n| v.binary_search(&n).is_ok()),
            Repr::Listpack(p) => p.find(1, member).is_some(),
            Repr::Table(t) => t.contains(member),
        }
    }

    /// The members, in the encoding's order.
    pub fn members(&self) -> Vec<Bytes> {
        match &self.repr {
            Repr::Intset(v, _) => v.iter().map(|n| Bytes::from(n.to_string())).collect(),
            Repr::Listpack(p) => p.iter().map(Bytes::copy_from_slice).collect(),
            Repr::Table(t) => t.iter().cloned().collect(),
        }
    }

    /// The member at `index` of the encoding's order (for random picks).
    pub fn nth(&self, index: usize) -> Option<Bytes> {
        match &self.repr {
            Repr::Intset(v, _) => v.get(index).map(|n| Bytes::from(n.to_string())),
            Repr::Listpack(p) => p.iter().nth(index).map(Bytes::copy_from_slice),
            Repr::Table(t) => t.get_index(index).cloned(),
        }
    }

    /// Adds `member`; returns whether it was new.
    pub fn add(&mut self, member: &[u8], lim: &Thresholds) -> bool {
        match &mut self.repr {
            Repr::Intset(v, width) => {
                if let Some(n) = as_int(member) {
                    return match v.binary_search(&n) {
                        Ok(_) => false,
                        Err(at) => {
                            let mut ints = std::mem::take(v).into_vec();
                            ints.reserve_exact(1);
                            ints.insert(at, n);
                            *v = ints.into_boxed_slice();
                            *width = (*width).max(int_width(n));
                            if v.len() > lim.set_intset_entries {
                                self.convert_to_table();
                            }
                            true
                        }
                    };
                }
                let widest = [v.first(), v.last()]
                    .into_iter()
                    .flatten()
                    .map(|n| n.to_string().len())
                    .max()
                    .unwrap_or(0);
                if v.len() < lim.set_entries
                    && member.len() <= lim.set_value
                    && widest <= lim.set_value
                {
                    let mut p = Pack::new();
                    for n in v.iter() {
                        p.push(&[n.to_string().as_bytes()]);
                    }
                    p.push(&[member]);
                    self.repr = Repr::Listpack(p);
                } else {
                    self.convert_to_table();
                    self.add(member, lim);
                }
                true
            }
            Repr::Listpack(p) => {
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
            Repr::Table(t) => {
                if t.contains(member) {
                    false
                } else {
                    t.insert(Bytes::copy_from_slice(member))
                }
            }
        }
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Intset(v, _) => match as_int(member).map(|n| v.binary_search(&n)) {
                Some(Ok(at)) => {
                    let mut ints = std::mem::take(v).into_vec();
                    ints.remove(at);
                    *v = ints.into_boxed_slice();
                    true
                }
                _ => false,
            },
            Repr::Listpack(p) => p.find(1, member).map(|at| p.remove(at, 1)).is_some(),
            Repr::Table(t) => t.swap_remove(member),
        }
    }

    /// Turns the set into a table.
    pub fn convert_to_table(&mut self) {
        if !matches!(self.repr, Repr::Table(_)) {
            let members = self.members();
            self.repr = Repr::Table(Box::new(members.into_iter().collect()));
        }
    }

    /// Turns the set into an intset if every member is an integer and they fit one (Redis's
    /// `maybeConvertToIntset`, used where a result is known to hold integers only).
    pub fn maybe_to_intset(&mut self, lim: &Thresholds) {
        if matches!(self.repr, Repr::Intset(..)) || self.len() > lim.set_intset_entries {
            return;
        }
        let ints: Option<Vec<i64>> = self.members().iter().map(|m| as_int(m)).collect();
        if let Some(mut ints) = ints {
            ints.sort_unstable();
            let width = ints.iter().map(|&n| int_width(n)).max().unwrap_or(2);
            self.repr = Repr::Intset(ints.into_boxed_slice(), width);
        }
    }

    /// A set from loaded members in the encoding Redis loads them in.
    pub fn from_members(members: Vec<Bytes>, lim: &Thresholds) -> Set {
        let mut set = match members.first() {
            Some(first) => Set::for_members(first, members.len(), lim),
            None => Set::new_intset(),
        };
        for m in members {
            set.add(&m, lim);
        }
        set
    }

    /// The bytes the set holds (an estimate).
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Intset(v, _) => v.len() * 8,
            Repr::Listpack(p) => p.bytes(),
            Repr::Table(t) => t.iter().map(|m| m.len() + 32).sum(),
        }
    }

    /// Checks the invariants of the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.repr {
            Repr::Intset(v, width) => {
                if v.windows(2).any(|w| w[0] >= w[1]) {
                    return Err("intset not strictly ascending".into());
                }
                if !matches!(width, 2 | 4 | 8) || v.iter().any(|&n| int_width(n) > *width) {
                    return Err(format!("intset width {width} too narrow"));
                }
            }
            Repr::Listpack(p) => {
                p.check_invariants(1)?;
                let mut seen = HashSet::new();
                for m in p.iter() {
                    if !seen.insert(m) {
                        return Err("a member held twice".into());
                    }
                }
            }
            Repr::Table(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

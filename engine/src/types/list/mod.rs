//! The list type: a sequence of byte strings with cheap pushes and pops at both ends.
//!
//! Encodings, as Redis 8.8 (`t_list.c`): a small list is one listpack ([`listpack`], OBJECT
//! ENCODING `listpack`); a list that outgrows `list-max-listpack-size` becomes a
//! [`quicklist`] of listpack nodes (`quicklist`). Growing converts when the listpack plus the
//! raw bytes about to be added would exceed the limits (checked before a push, an insert, a
//! replacement); shrinking (pops, LREM, LTRIM, LSET) converts back when the quicklist is down
//! to one packed node within half the limits, so a list near the limit does not flip on every
//! change. Element bytes are Redis's, so RDB and DUMP payloads are the buffers themselves.
//!
//! Invariants (checked by [`List::check_invariants`]):
//! - the listpack encoding holds a valid listpack within the limits it was grown under;
//! - the quicklist encoding's own invariants hold ([`quicklist::Quicklist::check_invariants`]);
//! - a list stored under a key is never empty (the commands delete an emptied key).

pub mod commands;
pub(crate) mod listpack;
pub(crate) mod quicklist;

use bytes::Bytes;

use crate::rdb::listpack::Element;
use listpack as lp;
use quicklist::{Quicklist, exceeds};

/// `list-max-listpack-size` default.
pub const FILL_DEFAULT: i32 = -2;

/// The list settings in force for one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListConfig {
    /// `list-max-listpack-size`: negative, a node's byte limit (-1: 4 KiB .. -5: 64 KiB);
    /// positive, its element limit.
    pub fill: i32,
    /// `list-compress-depth`: nodes at each end left uncompressed (0: none compressed).
    pub depth: u32,
}

impl Default for ListConfig {
    fn default() -> Self {
        ListConfig {
            fill: FILL_DEFAULT,
            depth: 0,
        }
    }
}

/// How a list is held.
#[derive(Debug, Clone)]
enum Repr {
    /// Held at its exact size (see [`edit`]), so a list is 16 bytes and sits in the
    /// keyspace entry's `Value` itself: a small list is one allocation.
    Listpack(Box<[u8]>),
    Quicklist(Box<Quicklist>),
}

/// Runs `change` on a listpack as a `Vec` with `extra` bytes reserved, then holds it at its
/// exact size again: one reallocation a change, as Redis's listpack makes.
fn edit<R>(data: &mut Box<[u8]>, extra: usize, change: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut buf = std::mem::take(data).into_vec();
    buf.reserve_exact(extra);
    let result = change(&mut buf);
    *data = buf.into_boxed_slice();
    result
}

/// A list.
#[derive(Debug, Clone)]
pub struct List {
    repr: Repr,
}

impl Default for List {
    fn default() -> Self {
        List::new()
    }
}

impl List {
    /// An empty list (listpack encoded).
    pub fn new() -> List {
        List {
            repr: Repr::Listpack(lp::new().into_boxed_slice()),
        }
    }

    /// A list of `values`, encoded as Redis encodes a list built from them with RPUSH.
    pub fn from_values<V: AsRef<[u8]>>(values: &[V], cfg: ListConfig) -> List {
        let mut list = List::new();
        let refs: Vec<&[u8]> = values.iter().map(AsRef::as_ref).collect();
        list.push(&refs, false, cfg);
        list
    }

    /// A list of `values` built as SORT STORE builds one: pushed into a quicklist, then
    /// converted to a listpack if it is one node within the limits.
    pub fn from_quicklist_pushes<V: AsRef<[u8]>>(values: &[V], cfg: ListConfig) -> List {
        let mut ql = Quicklist::new(cfg.fill, cfg.depth);
        for v in values {
            ql.push_back(v.as_ref());
        }
        List::from_quicklist(ql, cfg)
    }

    /// A quicklist as loaded (RDB): converted back to a listpack if small enough.
    pub(crate) fn from_quicklist(ql: Quicklist, cfg: ListConfig) -> List {
        let mut list = List {
            repr: Repr::Quicklist(Box::new(ql)),
        };
        list.convert_back(cfg, false);
        list
    }

    /// Elements held.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Listpack(data) => lp::count(data),
            Repr::Quicklist(ql) => ql.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The allocations freeing it costs: a quicklist's nodes (Redis's
    /// `lazyfreeGetFreeEffort`).
    pub(crate) fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Listpack(_) => 1,
            Repr::Quicklist(ql) => ql.node_count(),
        }
    }

    /// OBJECT ENCODING's name.
    pub fn encoding(&self) -> &'static str {
        match &self.repr {
            Repr::Listpack(_) => "listpack",
            Repr::Quicklist(_) => "quicklist",
        }
    }

    /// The listpack, if listpack encoded (RDB).
    pub(crate) fn as_listpack(&self) -> Option<&[u8]> {
        match &self.repr {
            Repr::Listpack(data) => Some(data),
            Repr::Quicklist(_) => None,
        }
    }

    /// The quicklist, if quicklist encoded (RDB).
    pub(crate) fn as_quicklist(&self) -> Option<&Quicklist> {
        match &self.repr {
            Repr::Listpack(_) => None,
            Repr::Quicklist(ql) => Some(ql.as_ref()),
        }
    }

    /// Converts a listpack about to take `add_len` elements of `add_bytes` raw bytes to a
    /// quicklist if that would exceed the limits (Redis's `listTypeTryConvertListpack`).
    fn grow_check(&mut self, add_bytes: usize, add_len: usize, cfg: ListConfig) {
        if let Repr::Listpack(data) = &mut self.repr
            && exceeds(cfg.fill, data.len() + add_bytes, lp::count(data) + add_len)
        {
            let mut ql = Quicklist::new(cfg.fill, cfg.depth);
            ql.append_listpack(std::mem::take(data).into_vec());
            self.repr = Repr::Quicklist(Box::new(ql));
        }
    }

    /// Converts a quicklist of one packed node within the limits (halved when `shrinking`)
    /// back to a listpack (Redis's `listTypeTryConvertQuicklist`).
    fn convert_back(&mut self, cfg: ListConfig, shrinking: bool) {
        let Repr::Quicklist(ql) = &self.repr else {
            return;
        };
        let Some((sz, count)) = ql.single_listpack() else {
            return;
        };
        let (mut sz_limit, mut count_limit) = quicklist::limits(cfg.fill);
        if shrinking {
            sz_limit /= 2;
            count_limit /= 2;
        }
        if sz > sz_limit || count > count_limit {
            return;
        }
        let Repr::Quicklist(ql) = std::mem::replace(&mut self.repr, Repr::Listpack(Box::default()))
        else {
            return;
        };
        self.repr = Repr::Listpack((*ql).into_listpack().into_boxed_slice());
    }

    /// After elements were removed: converts back to a listpack if small enough.
    pub fn shrink_check(&mut self, cfg: ListConfig) {
        self.convert_back(cfg, true);
    }

    /// Pushes `values` one by one at the head (`front`, so the last ends first) or the tail.
    pub fn push(&mut self, values: &[&[u8]], front: bool, cfg: ListConfig) {
        let bytes = values.iter().map(|v| v.len()).sum();
        self.grow_check(bytes, values.len(), cfg);
        match &mut self.repr {
            Repr::Listpack(data) => {
                let extra = values.iter().map(|v| lp::encoded_len_max(v)).sum();
                edit(data, extra, |data| {
                    for value in values {
                        if front {
                            lp::push_front(data, value);
                        } else {
                            lp::push_back(data, value);
                        }
                    }
                });
            }
            Repr::Quicklist(ql) => {
                for value in values {
                    if front {
                        ql.push_front(value);
                    } else {
                        ql.push_back(value);
                    }
                }
            }
        }
    }

    /// Removes and returns the head (`front`) or tail element. The caller runs
    /// [`List::shrink_check`] once done removing.
    pub fn pop(&mut self, front: bool) -> Option<Bytes> {
        match &mut self.repr {
            Repr::Listpack(data) => {
                let pos = if front {
                    lp::first(data)
                } else {
                    lp::last(data)
                }?;
                let value = lp::bytes_at(data, pos);
                edit(data, 0, |data| lp::delete(data, pos, 1));
                Some(value)
            }
            Repr::Quicklist(ql) => ql.pop(front),
        }
    }

    /// `index` (negative: from the tail) as an offset from the head, if in range.
    pub fn offset(&self, index: i64) -> Option<usize> {
        let len = self.len() as i64;
        let at = if index < 0 { len + index } else { index };
        (0..len).contains(&at).then_some(at as usize)
    }

    /// The element at `index` (negative: from the tail).
    pub fn get(&self, index: i64) -> Option<Bytes> {
        let at = self.offset(index)?;
        match &self.repr {
            Repr::Listpack(data) => lp::seek(data, at as i64).map(|p| lp::bytes_at(data, p)),
            Repr::Quicklist(ql) => ql.get(at),
        }
    }

    /// Replaces the element at `index` (LSET); false if out of range.
    pub fn set(&mut self, index: i64, value: &[u8], cfg: ListConfig) -> bool {
        self.grow_check(value.len(), 1, cfg);
        let Some(at) = self.offset(index) else {
            return false;
        };
        match &mut self.repr {
            Repr::Listpack(data) => {
                if let Some(pos) = lp::seek(data, at as i64) {
                    let extra = lp::encoded_len_max(value);
                    edit(data, extra, |data| lp::replace(data, pos, value));
                }
            }
            Repr::Quicklist(ql) => ql.replace(at, value),
        }
        self.shrink_check(cfg);
        true
    }

    /// Calls `f` on the elements from offset `start` on, towards the tail (or the head if
    /// `reverse`), until it returns false.
    pub fn walk(&self, start: usize, reverse: bool, mut f: impl FnMut(Element<'_>) -> bool) {
        match &self.repr {
            Repr::Listpack(data) => {
                let mut pos = lp::seek(data, start as i64);
                while let Some(p) = pos {
                    let (element, size) = lp::decode(data, p);
                    if !f(element) {
                        return;
                    }
                    pos = if reverse {
                        lp::prev(data, p)
                    } else {
                        lp::skip(data, p, size)
                    };
                }
            }
            Repr::Quicklist(ql) => ql.walk(start, reverse, f),
        }
    }

    /// `n` elements from offset `start` on (towards the head if `reverse`), as Redis replies
    /// them.
    pub fn range(&self, start: usize, n: usize, reverse: bool) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(n.min(self.len()));
        if n == 0 {
            return out;
        }
        self.walk(start, reverse, |e| {
            out.push(lp::element_bytes(e));
            out.len() < n
        });
        out
    }

    /// `n` elements from offset `start` on, encoded for the reply in one buffer (LRANGE).
    pub fn range_bulks(&self, start: usize, n: usize) -> crate::reply::Bulks {
        let n = n.min(self.len().saturating_sub(start));
        // A guess of the bytes: the elements' own plus framing; the buffer grows past it.
        let mut out = crate::reply::Bulks::with_capacity(n * 16);
        if n == 0 {
            return out;
        }
        self.walk(start, false, |e| {
            match e {
                Element::Int(v) => out.push_int(v),
                Element::Str(s) => out.push(s),
            }
            out.len() < n
        });
        out
    }

    /// Deletes `n` elements from offset `start` on (start in range). The caller runs
    /// [`List::shrink_check`].
    pub fn delete_range(&mut self, start: usize, n: usize) {
        if n == 0 || start >= self.len() {
            return;
        }
        match &mut self.repr {
            Repr::Listpack(data) => {
                edit(data, 0, |data| lp::delete_range(data, start as i64, n));
            }
            Repr::Quicklist(ql) => ql.delete_range(start, n),
        }
    }

    /// Inserts `value` before (or `after`) the first element equal to `pivot`; false if there
    /// is none. Converts for growth first, as Redis does, even when no pivot is found.
    pub fn insert(&mut self, pivot: &[u8], value: &[u8], after: bool, cfg: ListConfig) -> bool {
        self.grow_check(value.len(), 1, cfg);
        let mut found = None;
        let mut i = 0;
        self.walk(0, false, |e| {
            if lp::element_eq(e, pivot) {
                found = Some(i);
                return false;
            }
            i += 1;
            true
        });
        let Some(at) = found else {
            return false;
        };
        match &mut self.repr {
            Repr::Listpack(data) => {
                if let Some(pos) = lp::seek(data, at as i64) {
                    let pos = if after {
                        pos + lp::decode(data, pos).1
                    } else {
                        pos
                    };
                    let extra = lp::encoded_len_max(value);
                    edit(data, extra, |data| lp::insert(data, pos, value));
                }
            }
            Repr::Quicklist(ql) => ql.insert(at, value, after),
        }
        true
    }

    /// Removes elements equal to `value`: `count` > 0 the first `count` from the head, < 0
    /// from the tail, 0 all. Returns how many. The caller runs [`List::shrink_check`].
    pub fn remove(&mut self, value: &[u8], count: i64) -> usize {
        let reverse = count < 0;
        let limit = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        match &mut self.repr {
            Repr::Listpack(data) => edit(data, 0, |data| {
                quicklist::remove_in_listpack(data, value, limit, limit == 0, reverse)
            }),
            Repr::Quicklist(ql) => ql.remove_matching(value, limit, reverse),
        }
    }

    /// Every element, head first (AOF rewrite, SORT, tests).
    pub fn to_vec(&self) -> Vec<Bytes> {
        self.range(0, self.len(), false)
    }

    /// The bytes each node's buffer holds (one for a listpack), as stored (compressed or
    /// not): what MEMORY USAGE sizes.
    pub fn node_bytes(&self) -> Vec<usize> {
        match &self.repr {
            Repr::Listpack(data) => vec![data.len()],
            Repr::Quicklist(ql) => ql.nodes().map(|n| n.stored().0.len()).collect(),
        }
    }

    /// Bytes the list takes (its struct and buffers).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<List>()
            + match &self.repr {
                Repr::Listpack(data) => data.len(),
                Repr::Quicklist(ql) => std::mem::size_of::<Quicklist>() + ql.heap_bytes(),
            }
    }

    /// Checks the invariants of the module doc (but emptiness, which the keyspace checks).
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.repr {
            Repr::Listpack(data) => lp::check(data).map(|_| ()),
            Repr::Quicklist(ql) => ql.check_invariants(),
        }
    }
}

#[cfg(test)]
mod tests;

// A small list costs its bytes alone.
const _: () = assert!(std::mem::size_of::<List>() == 16);

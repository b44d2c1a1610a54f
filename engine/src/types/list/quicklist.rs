//! A long list: a sequence of nodes, each a listpack of elements ([`super::listpack`]) or one
//! large element alone (a plain node), as Redis's `quicklist.c` lays them out.
//!
//! Node sizes follow `list-max-listpack-size` (`fill`): negative, a node's listpack stays
//! within 4, 8, 16, 32 or 64 KiB (-1 .. -5); positive, within that many elements and 8 KiB.
//! An element larger than the size limit gets a plain node of its own. Pushes, inserts (with
//! Redis's split and merge of full nodes), replacements and range deletions make the same
//! node boundaries Redis makes for the same history, so RDB and DUMP bytes match.
//!
//! With `list-compress-depth` d > 0, every node but the d first and d last is kept LZF
//! compressed when that saves at least 8 bytes (nodes under 48 bytes are not tried).
//!
//! The head node keeps room before its listpack, so an element pushed at the front (LPUSH,
//! the producer's end of a queue) or popped from it (LPOP) moves the listpack's 6-byte header
//! rather than every element after it, which Redis's `lpInsert` and `lpDelete` move. The room
//! is made about as large as the node when it runs out (each byte is copied O(1) times on
//! average) and never past the node's size limit; any other edit of the node, or a new node
//! taking over the head, gives it up. What is saved (`Node::stored`) is the listpack alone.
//!
//! Invariants (checked by [`Quicklist::check_invariants`]):
//! - no node is empty; `count` is the sum of the nodes' counts;
//! - a packed node's bytes (decompressed) are a valid listpack holding `count` elements, and
//!   `raw_len` is their length; a plain node holds one element;
//! - only nodes farther than `depth` from both ends are compressed, and a compressed node's
//!   bytes decompress to `raw_len` bytes;
//! - only the head node keeps room at its front, and only while packed and uncompressed.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;

use bytes::Bytes;

use super::listpack as lp;
use crate::rdb::listpack::Element;
use crate::rdb::lzf;

/// Largest listpack of a node limited by count (Redis's `SIZE_SAFETY_LIMIT`).
const SIZE_SAFETY_LIMIT: usize = 8192;
/// Bytes added to an element's length to estimate its encoded size.
const SIZE_ESTIMATE_OVERHEAD: usize = 8;
/// Nodes smaller than this are not compressed.
const MIN_COMPRESS_BYTES: usize = 48;
/// Compression must save at least this many bytes.
const MIN_COMPRESS_IMPROVE: usize = 8;

/// A node holding one element as its raw bytes.
const PLAIN: u8 = 1;
/// A node whose bytes are LZF compressed.
const LZF: u8 = 2;
/// A raw node compression was tried on and did not pay (cleared when it changes).
const REFUSED: u8 = 4;

thread_local! {
    static COMPRESSOR: RefCell<lzf::Compressor> = RefCell::new(lzf::Compressor::new());
    /// An element pushed at the front, encoded before it is copied into the node's room (a
    /// buffer kept, so a push allocates nothing).
    static ELEMENT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The byte and element limits of a node (or of a listpack-encoded list) for `fill`.
pub(crate) fn limits(fill: i32) -> (usize, usize) {
    if fill >= 0 {
        (usize::MAX, if fill == 0 { 1 } else { fill as usize })
    } else {
        let level = ((-(fill as i64)) - 1).min(4) as u32;
        (4096usize << level, usize::MAX)
    }
}

/// Whether a node of `sz` bytes and `count` elements is over the limits of `fill`.
pub(crate) fn exceeds(fill: i32, sz: usize, count: usize) -> bool {
    let (size_limit, count_limit) = limits(fill);
    if size_limit != usize::MAX {
        sz > size_limit
    } else {
        sz > SIZE_SAFETY_LIMIT || count > count_limit
    }
}

/// Whether an element of `sz` bytes gets a plain node of its own.
pub(crate) fn is_large(sz: usize, fill: i32) -> bool {
    if fill >= 0 {
        sz > SIZE_SAFETY_LIMIT
    } else {
        sz > limits(fill).0
    }
}

/// One node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// A listpack, a plain element, or either LZF compressed; the head node's listpack may
    /// start `front` bytes in, after room kept for pushes at the front.
    data: Vec<u8>,
    /// Bytes of `data` before the listpack: room for elements pushed at the front, which then
    /// move only the listpack's header rather than every element after it (Redis moves the
    /// whole listpack). Only the head node keeps any, only while packed and uncompressed.
    front: u32,
    /// Elements held.
    count: u32,
    /// The uncompressed length of `data`.
    raw_len: u32,
    /// `PLAIN`, `LZF`, `REFUSED`.
    flags: u8,
}

impl Node {
    fn packed(data: Vec<u8>) -> Node {
        let count = lp::count(&data) as u32;
        Node {
            raw_len: data.len() as u32,
            data,
            front: 0,
            count,
            flags: 0,
        }
    }

    fn plain(value: &[u8]) -> Node {
        Node {
            data: value.to_vec(),
            front: 0,
            count: 1,
            raw_len: value.len() as u32,
            flags: PLAIN,
        }
    }

    fn is_plain(&self) -> bool {
        self.flags & PLAIN != 0
    }

    fn is_compressed(&self) -> bool {
        self.flags & LZF != 0
    }

    /// The stored bytes past the room at the front: the listpack or plain element, or their
    /// LZF compression.
    fn held(&self) -> &[u8] {
        &self.data[self.front as usize..]
    }

    /// The raw bytes (decompressed into a copy if compressed).
    fn bytes(&self) -> Cow<'_, [u8]> {
        if self.is_compressed() {
            let raw = lzf::decompress(&self.data, self.raw_len as usize).unwrap_or_default();
            Cow::Owned(raw)
        } else {
            Cow::Borrowed(self.held())
        }
    }

    /// The raw bytes, decompressed in place and without room at the front, for a change.
    fn open(&mut self) -> &mut Vec<u8> {
        if self.is_compressed() {
            self.data = lzf::decompress(&self.data, self.raw_len as usize).unwrap_or_default();
        } else {
            self.give_up_front();
        }
        self.flags &= !(LZF | REFUSED);
        &mut self.data
    }

    /// Drops the room at the front: `data` is the listpack alone, in an allocation of its
    /// size (a node no longer the head keeps no room).
    fn give_up_front(&mut self) {
        if self.front != 0 {
            self.data.drain(..self.front as usize);
            self.data.shrink_to_fit();
            self.front = 0;
        }
    }

    /// Re-reads the lengths after a change of a packed node.
    fn update(&mut self) {
        self.raw_len = self.held().len() as u32;
        self.count = lp::count(self.held()) as u32;
    }

    /// Prepends `value` to this packed node: its element goes into the room at the front
    /// (made first if too small, about as large as the node, so each byte is copied O(1)
    /// times on average, and no larger than `grows_to`, the bytes the node may reach), and the
    /// header moves back by its length; no other element moves.
    fn push_front(&mut self, value: &[u8], grows_to: usize) {
        if self.is_compressed() {
            self.open();
        }
        self.flags &= !REFUSED;
        ELEMENT.with_borrow_mut(|element| {
            element.clear();
            crate::rdb::listpack::put_str(element, value);
            self.push_front_encoded(element, grows_to);
        });
    }

    /// [`Node::push_front`] of an element already encoded.
    fn push_front_encoded(&mut self, element: &[u8], grows_to: usize) {
        let need = element.len();
        if (self.front as usize) < need {
            let raw = self.held().len();
            let room = need.max(raw.min(grows_to.saturating_sub(raw)));
            let mut data = Vec::with_capacity(room + raw);
            data.resize(room, 0);
            data.extend_from_slice(self.held());
            self.data = data;
            self.front = room as u32;
        }
        let old = self.front as usize;
        let new = old - need;
        self.data.copy_within(old..old + lp::HEADER, new);
        self.data[new + lp::HEADER..old + lp::HEADER].copy_from_slice(element);
        self.front = new as u32;
        self.count += 1;
        lp::set_header(&mut self.data[new..], self.count as usize);
        self.raw_len = self.held().len() as u32;
    }

    /// Removes and returns the first element of this packed node, which holds more than one:
    /// the header moves forward over it, and its bytes join the room at the front.
    fn pop_front(&mut self) -> Option<Bytes> {
        if self.is_compressed() {
            self.open();
        }
        self.flags &= !REFUSED;
        let listpack = self.held();
        let first = lp::first(listpack)?;
        let value = lp::bytes_at(listpack, first);
        let second = lp::next(listpack, first)?;
        let old = self.front as usize;
        let new = old + (second - first);
        self.data.copy_within(old..old + lp::HEADER, new);
        self.front = new as u32;
        self.count -= 1;
        lp::set_header(&mut self.data[new..], self.count as usize);
        self.raw_len = self.held().len() as u32;
        Some(value)
    }

    fn decompress(&mut self) {
        if self.is_compressed() {
            self.open();
        }
    }

    fn compress(&mut self) {
        if self.flags & (LZF | REFUSED) != 0 {
            return;
        }
        self.give_up_front();
        let raw = self.data.len();
        if raw < MIN_COMPRESS_BYTES {
            self.flags |= REFUSED;
            return;
        }
        let packed = COMPRESSOR.with(|c| {
            let mut c = c.borrow_mut();
            c.compress(&self.data, raw)
                .filter(|out| out.len() + MIN_COMPRESS_IMPROVE < raw)
                .map(<[u8]>::to_vec)
        });
        match packed {
            Some(out) => {
                self.data = out;
                self.flags |= LZF;
            }
            None => self.flags |= REFUSED,
        }
    }

    /// The element as Redis stores it in an RDB node: the listpack or plain bytes, and
    /// whether they are compressed.
    pub(crate) fn stored(&self) -> (&[u8], bool, bool) {
        (self.held(), self.is_plain(), self.is_compressed())
    }

    /// Uncompressed length.
    pub(crate) fn raw_len(&self) -> usize {
        self.raw_len as usize
    }

    /// Heap bytes held.
    fn heap(&self) -> usize {
        self.data.capacity()
    }
}

/// A quicklist.
#[derive(Debug, Clone)]
pub(crate) struct Quicklist {
    nodes: VecDeque<Node>,
    count: usize,
    fill: i32,
    depth: u32,
}

impl Quicklist {
    /// An empty quicklist with these settings.
    pub(crate) fn new(fill: i32, depth: u32) -> Quicklist {
        Quicklist {
            nodes: VecDeque::new(),
            count: 0,
            fill,
            depth,
        }
    }

    /// Elements held.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Nodes held.
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes, head first.
    pub(crate) fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter()
    }

    /// Appends a whole listpack as a node (conversion, RDB load); an empty one is dropped.
    pub(crate) fn append_listpack(&mut self, data: Vec<u8>) {
        let node = Node::packed(data);
        if node.count > 0 {
            self.count += node.count as usize;
            self.nodes.push_back(node);
            self.settle();
        }
    }

    /// Appends a plain node (RDB load).
    pub(crate) fn append_plain(&mut self, value: &[u8]) {
        self.count += 1;
        self.nodes.push_back(Node::plain(value));
        self.settle();
    }

    /// The only node's listpack bytes and elements, if it has one packed node or none (for
    /// conversion back).
    pub(crate) fn single_listpack(&self) -> Option<(usize, usize)> {
        match self.nodes.front() {
            None => Some((7, 0)),
            Some(node) if self.nodes.len() == 1 && !node.is_plain() => {
                Some((node.raw_len(), node.count as usize))
            }
            _ => None,
        }
    }

    /// Takes the only node's listpack.
    pub(crate) fn into_listpack(mut self) -> Vec<u8> {
        let mut node = self.nodes.pop_front().map_or_else(lp::new, |mut n| {
            n.open();
            n.data
        });
        lp::shrink(&mut node);
        node
    }

    /// Keeps exactly the nodes farther than `depth` from both ends compressed (where that
    /// pays), as Redis's compression leaves them.
    fn settle(&mut self) {
        if self.depth == 0 {
            return;
        }
        let len = self.nodes.len();
        let depth = self.depth as usize;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if len >= depth * 2 && i >= depth && i < len - depth {
                node.compress();
            } else {
                node.decompress();
            }
        }
    }

    /// Puts `node` at `at`; a node put at the head takes over from the old head, which gives
    /// up its room (only the head keeps any).
    fn insert_node(&mut self, at: usize, node: Node) {
        if at == 0 {
            if let Some(head) = self.nodes.front_mut() {
                head.give_up_front();
            }
        }
        self.nodes.insert(at, node);
    }

    fn allow_insert(&self, at: Option<usize>, sz: usize) -> bool {
        let Some(node) = at.and_then(|i| self.nodes.get(i)) else {
            return false;
        };
        if node.is_plain() || is_large(sz, self.fill) {
            return false;
        }
        let new_sz = node.raw_len() + sz + SIZE_ESTIMATE_OVERHEAD;
        !exceeds(self.fill, new_sz, node.count as usize + 1)
    }

    fn allow_merge(&self, a: usize, b: usize) -> bool {
        match (self.nodes.get(a), self.nodes.get(b)) {
            (Some(a), Some(b)) if !a.is_plain() && !b.is_plain() => {
                let sz = (a.raw_len() + b.raw_len()).saturating_sub(7);
                !exceeds(self.fill, sz, (a.count + b.count) as usize)
            }
            _ => false,
        }
    }

    fn new_node(&self, value: &[u8]) -> Node {
        if is_large(value.len(), self.fill) {
            Node::plain(value)
        } else {
            let mut data = lp::new();
            lp::push_back(&mut data, value);
            Node::packed(data)
        }
    }

    /// Prepends `value`.
    pub(crate) fn push_front(&mut self, value: &[u8]) {
        if !is_large(value.len(), self.fill) && self.allow_insert(Some(0), value.len()) {
            let grows_to = match limits(self.fill).0 {
                usize::MAX => SIZE_SAFETY_LIMIT,
                size_limit => size_limit,
            };
            self.nodes[0].push_front(value, grows_to);
        } else {
            let node = self.new_node(value);
            self.insert_node(0, node);
        }
        self.count += 1;
        self.settle();
    }

    /// Appends `value`.
    pub(crate) fn push_back(&mut self, value: &[u8]) {
        let last = self.nodes.len().checked_sub(1);
        if !is_large(value.len(), self.fill) && self.allow_insert(last, value.len()) {
            if let Some(node) = self.nodes.back_mut() {
                lp::push_back(node.open(), value);
                node.update();
            }
        } else {
            let node = self.new_node(value);
            self.nodes.push_back(node);
        }
        self.count += 1;
        self.settle();
    }

    /// Removes and returns the first (`front`) or last element.
    pub(crate) fn pop(&mut self, front: bool) -> Option<Bytes> {
        let i = self.nodes.len().checked_sub(1)?;
        let i = if front { 0 } else { i };
        let value = {
            let node = &mut self.nodes[i];
            if node.is_plain() {
                node.count = 0;
                let raw = node.bytes().into_owned();
                Bytes::from(raw)
            } else if front && node.count > 1 {
                node.pop_front()?
            } else {
                let data = node.open();
                let pos = if front {
                    lp::first(data)
                } else {
                    lp::last(data)
                }?;
                let value = lp::bytes_at(data, pos);
                lp::delete(data, pos, 1);
                node.update();
                value
            }
        };
        self.count -= 1;
        if self.nodes[i].count == 0 {
            self.nodes.remove(i);
        }
        self.settle();
        Some(value)
    }

    /// The node and offset in it of element `index` (0-based from the head).
    fn locate(&self, index: usize) -> Option<(usize, usize)> {
        if index >= self.count {
            return None;
        }
        if index < self.count / 2 {
            let mut left = index;
            for (i, node) in self.nodes.iter().enumerate() {
                let c = node.count as usize;
                if left < c {
                    return Some((i, left));
                }
                left -= c;
            }
        } else {
            let mut left = self.count - 1 - index;
            for (i, node) in self.nodes.iter().enumerate().rev() {
                let c = node.count as usize;
                if left < c {
                    return Some((i, c - 1 - left));
                }
                left -= c;
            }
        }
        None
    }

    /// Calls `f` on `n` elements from `index` on, towards the tail (or the head if
    /// `reverse`), until it returns false.
    pub(crate) fn walk(&self, index: usize, reverse: bool, mut f: impl FnMut(Element<'_>) -> bool) {
        let Some((mut ni, off)) = self.locate(index) else {
            return;
        };
        let mut start = Some(off);
        loop {
            let node = &self.nodes[ni];
            let bytes = node.bytes();
            if node.is_plain() {
                if !f(Element::Str(&bytes)) {
                    return;
                }
            } else {
                let mut pos = match (start, reverse) {
                    (Some(off), _) => lp::seek(&bytes, off as i64),
                    (None, false) => lp::first(&bytes),
                    (None, true) => lp::last(&bytes),
                };
                while let Some(p) = pos {
                    let (element, size) = lp::decode(&bytes, p);
                    if !f(element) {
                        return;
                    }
                    pos = if reverse {
                        lp::prev(&bytes, p)
                    } else {
                        lp::skip(&bytes, p, size)
                    };
                }
            }
            start = None;
            if reverse {
                if ni == 0 {
                    return;
                }
                ni -= 1;
            } else {
                ni += 1;
                if ni == self.nodes.len() {
                    return;
                }
            }
        }
    }

    /// Deletes `n` elements from `start` on (start in range), as `quicklistDelRange`: nodes
    /// emptied go, nothing merges.
    pub(crate) fn delete_range(&mut self, start: usize, n: usize) {
        let Some((mut ni, mut off)) = self.locate(start) else {
            return;
        };
        let mut extent = n.min(self.count - start);
        while extent > 0 && ni < self.nodes.len() {
            let node = &mut self.nodes[ni];
            let c = node.count as usize;
            let del = (c - off).min(extent);
            if del == c || node.is_plain() {
                self.nodes.remove(ni);
            } else {
                let data = node.open();
                lp::delete_range(data, off as i64, del);
                node.update();
                ni += 1;
            }
            self.count -= del;
            extent -= del;
            off = 0;
        }
        self.settle();
    }

    /// Removes elements equal to `value`, at most `limit` (0: all), from the head (or the
    /// tail if `reverse`); returns how many. Emptied nodes go; nothing merges.
    pub(crate) fn remove_matching(&mut self, value: &[u8], limit: usize, reverse: bool) -> usize {
        let mut removed = 0;
        let order: Vec<usize> = if reverse {
            (0..self.nodes.len()).rev().collect()
        } else {
            (0..self.nodes.len()).collect()
        };
        let mut emptied = Vec::new();
        for ni in order {
            if limit != 0 && removed == limit {
                break;
            }
            let node = &mut self.nodes[ni];
            if node.is_plain() {
                if node.bytes().as_ref() == value {
                    node.count = 0;
                    removed += 1;
                    emptied.push(ni);
                }
                continue;
            }
            let has = {
                let bytes = node.bytes();
                let mut pos = lp::first(&bytes);
                let mut found = false;
                while let Some(p) = pos {
                    if lp::element_eq(lp::decode(&bytes, p).0, value) {
                        found = true;
                        break;
                    }
                    pos = lp::next(&bytes, p);
                }
                found
            };
            if !has {
                continue;
            }
            let data = node.open();
            removed += remove_in_listpack(
                data,
                value,
                limit.saturating_sub(removed),
                limit == 0,
                reverse,
            );
            node.update();
            if node.count == 0 {
                emptied.push(ni);
            }
        }
        emptied.sort_unstable();
        for ni in emptied.into_iter().rev() {
            self.nodes.remove(ni);
        }
        self.count -= removed;
        self.settle();
        removed
    }

    /// The element at `index`.
    pub(crate) fn get(&self, index: usize) -> Option<Bytes> {
        let mut out = None;
        self.walk(index, false, |e| {
            out = Some(lp::element_bytes(e));
            false
        });
        out
    }

    /// Replaces element `index` (in range) with `value`, as `quicklistReplaceEntry`.
    pub(crate) fn replace(&mut self, index: usize, value: &[u8]) {
        let Some((ni, off)) = self.locate(index) else {
            return;
        };
        let large = is_large(value.len(), self.fill);
        let node = &mut self.nodes[ni];
        if !node.is_plain() && !large {
            let data = node.open();
            if let Some(pos) = lp::seek(data, off as i64) {
                lp::replace(data, pos, value);
            }
            node.update();
        } else if node.is_plain() {
            if large {
                node.data = value.to_vec();
                node.front = 0;
                node.raw_len = value.len() as u32;
                node.flags = PLAIN;
            } else {
                self.insert_at(ni, 0, value, true);
                self.nodes.remove(ni);
                self.count -= 1;
            }
        } else {
            // A large value in a packed node: the node splits around it.
            let count = node.count as usize;
            let mut at = ni;
            if off != count - 1 {
                let rest = self.split(ni, off, true);
                self.insert_node(ni + 1, rest);
            }
            self.insert_node(ni + 1, Node::plain(value));
            self.count += 1;
            let node = &mut self.nodes[at];
            if node.count == 1 {
                self.nodes.remove(at);
            } else {
                let data = node.open();
                lp::delete_range(data, -1, 1);
                node.update();
                at += 1;
                self.merge_around(at);
            }
            self.count -= 1;
        }
        self.settle();
    }

    /// Splits node `ni` at `off`: with `after`, the node keeps `[0, off]` and the returned
    /// node holds the rest; else the returned node holds `[0, off)` and the node the rest.
    fn split(&mut self, ni: usize, off: usize, after: bool) -> Node {
        let node = &mut self.nodes[ni];
        let data = node.open();
        let mut other = data.clone();
        let n = lp::count(data);
        if after {
            lp::delete_range(data, off as i64 + 1, n);
            lp::delete_range(&mut other, 0, off + 1);
        } else {
            lp::delete_range(data, 0, off);
            lp::delete_range(&mut other, off as i64, n);
        }
        node.update();
        Node::packed(other)
    }

    /// Merges node `b` (= `a + 1`) into node `a`.
    fn merge(&mut self, a: usize) {
        let Some(b) = self.nodes.remove(a + 1) else {
            return;
        };
        let node = &mut self.nodes[a];
        lp::merge(node.open(), &b.bytes());
        node.update();
    }

    /// `_quicklistMergeNodes`: merges the two nodes before `center`, the two after, then the
    /// center with its neighbours, where the limits allow.
    fn merge_around(&mut self, center: usize) {
        let mut center = center;
        if center >= 2 && self.allow_merge(center - 2, center - 1) {
            self.merge(center - 2);
            center -= 1;
        }
        if self.allow_merge(center + 1, center + 2) {
            self.merge(center + 1);
        }
        let mut target = center;
        if center >= 1 && self.allow_merge(center - 1, center) {
            self.merge(center - 1);
            target = center - 1;
        }
        if self.allow_merge(target, target + 1) {
            self.merge(target);
        }
    }

    /// Inserts `value` before or `after` the element at offset `off` of node `ni`, as
    /// `_quicklistInsert`.
    pub(crate) fn insert_at(&mut self, ni: usize, off: usize, value: &[u8], after: bool) {
        let sz = value.len();
        let fill = self.fill;
        let count = self.nodes[ni].count as usize;
        let full = !self.allow_insert(Some(ni), sz);
        let at_tail = after && off == count - 1;
        let at_head = !after && off == 0;
        let avail_next = at_tail && self.allow_insert(Some(ni + 1), sz);
        let avail_prev = at_head && ni > 0 && self.allow_insert(Some(ni - 1), sz);
        self.count += 1;
        if is_large(sz, fill) {
            let plain = Node::plain(value);
            if self.nodes[ni].is_plain() || at_tail || at_head {
                self.insert_node(if after { ni + 1 } else { ni }, plain);
            } else {
                let rest = self.split(ni, off, after);
                if after {
                    self.insert_node(ni + 1, plain);
                    self.insert_node(ni + 2, rest);
                } else {
                    self.insert_node(ni, plain);
                    self.insert_node(ni, rest);
                }
            }
        } else if !full {
            let node = &mut self.nodes[ni];
            let data = node.open();
            if let Some(pos) = lp::seek(data, off as i64) {
                let pos = if after {
                    pos + lp::decode(data, pos).1
                } else {
                    pos
                };
                lp::insert(data, pos, value);
            }
            node.update();
        } else if at_tail && avail_next {
            let node = &mut self.nodes[ni + 1];
            lp::push_front(node.open(), value);
            node.update();
        } else if at_head && avail_prev {
            let node = &mut self.nodes[ni - 1];
            lp::push_back(node.open(), value);
            node.update();
        } else if at_tail || at_head {
            let node = self.new_node(value);
            self.insert_node(if after { ni + 1 } else { ni }, node);
        } else {
            let mut rest = self.split(ni, off, after);
            if after {
                lp::push_front(rest.open(), value);
            } else {
                lp::push_back(rest.open(), value);
            }
            rest.update();
            let center = if after {
                self.insert_node(ni + 1, rest);
                ni
            } else {
                self.insert_node(ni, rest);
                ni + 1
            };
            self.merge_around(center);
        }
        self.settle();
    }

    /// Inserts `value` next to element `index` (in range).
    pub(crate) fn insert(&mut self, index: usize, value: &[u8], after: bool) {
        if let Some((ni, off)) = self.locate(index) {
            self.insert_at(ni, off, value, after);
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.nodes.iter().map(Node::heap).sum::<usize>()
    }

    /// Checks the invariants of the module doc.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let mut total = 0;
        let len = self.nodes.len();
        let depth = self.depth as usize;
        for (i, node) in self.nodes.iter().enumerate() {
            if node.count == 0 {
                return Err(format!("node {i} is empty"));
            }
            let bytes = node.bytes();
            if bytes.len() != node.raw_len() {
                return Err(format!(
                    "node {i} holds {} bytes, says {}",
                    bytes.len(),
                    node.raw_len
                ));
            }
            if node.is_plain() {
                if node.count != 1 {
                    return Err(format!("plain node {i} counts {}", node.count));
                }
            } else {
                let n = lp::check(&bytes).map_err(|e| format!("node {i}: {e}"))?;
                if n != node.count as usize {
                    return Err(format!("node {i} counts {} of {n} elements", node.count));
                }
            }
            if node.is_compressed() && (depth == 0 || i < depth || i + depth >= len) {
                return Err(format!("node {i} is compressed within depth {depth}"));
            }
            if node.front != 0 && (i != 0 || node.is_plain() || node.is_compressed()) {
                return Err(format!(
                    "node {i} keeps {} bytes of room at its front",
                    node.front
                ));
            }
            total += node.count as usize;
        }
        if total != self.count {
            return Err(format!("count {} but nodes hold {total}", self.count));
        }
        Ok(())
    }
}

/// Removes elements equal to `value` from a listpack, at most `limit` unless `all`, from the
/// head or the tail; returns how many.
pub(crate) fn remove_in_listpack(
    data: &mut Vec<u8>,
    value: &[u8],
    limit: usize,
    all: bool,
    reverse: bool,
) -> usize {
    let mut removed = 0;
    if reverse {
        let mut pos = lp::last(data);
        while let Some(p) = pos {
            if !all && removed == limit {
                break;
            }
            let before = lp::prev(data, p);
            if lp::element_eq(lp::decode(data, p).0, value) {
                lp::delete(data, p, 1);
                removed += 1;
            }
            pos = before;
        }
    } else {
        let mut pos = lp::first(data);
        while let Some(p) = pos {
            if !all && removed == limit {
                break;
            }
            if lp::element_eq(lp::decode(data, p).0, value) {
                lp::delete(data, p, 1);
                removed += 1;
                pos = (p < data.len() - 1).then_some(p);
            } else {
                pos = lp::next(data, p);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::{Quicklist, lp};

    fn elements(list: &Quicklist) -> Vec<Vec<u8>> {
        let mut all = Vec::new();
        list.walk(0, false, |e| {
            all.push(lp::element_bytes(e).to_vec());
            true
        });
        all
    }

    #[test]
    fn pushes_and_pops_at_the_head_move_only_the_header_and_keep_the_room_bounded() {
        let mut list = Quicklist::new(-2, 0);
        let mut model = VecDeque::new();
        for i in 0..20_000u32 {
            let value = format!("element:{i}").into_bytes();
            list.push_front(&value);
            model.push_front(value);
            if i % 7 == 0 {
                assert_eq!(list.pop(true).map(|b| b.to_vec()), model.pop_front());
            }
            if i % 11 == 0 {
                assert_eq!(list.pop(false).map(|b| b.to_vec()), model.pop_back());
            }
            if i % 1_000 == 0 {
                list.check_invariants().unwrap();
            }
            // The room is about the node's bytes at most, and never past the 8 KiB a node
            // reaches: a long list pays for it once.
            if let Some(head) = list.nodes.front() {
                assert!(head.data.len() <= 2 * 8192, "{} bytes", head.data.len());
            }
        }
        list.check_invariants().unwrap();
        assert_eq!(elements(&list), Vec::from(model.clone()));
        // What a save writes is the listpack alone, as Redis's.
        let (stored, plain, compressed) = list.nodes[0].stored();
        assert!(!plain && !compressed);
        assert_eq!(lp::check(stored), Ok(list.nodes[0].count as usize));
        assert!(list.nodes[0].front > 0, "the head keeps room at its front");
        // An edit elsewhere in the head gives the room up.
        list.insert(1, b"inserted", false);
        model.insert(1, b"inserted".to_vec());
        assert_eq!(list.nodes[0].front, 0);
        list.check_invariants().unwrap();
        assert_eq!(elements(&list), Vec::from(model));
    }
}

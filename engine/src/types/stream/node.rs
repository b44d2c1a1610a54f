//! A macro node: consecutive entries of one stream packed into one byte buffer.
//!
//! Redis keeps each node as a listpack; echomq keeps the same logical content (a master entry,
//! entries delta-encoded against the master id, values only when the field names match the
//! master's, tombstone flags) in a smaller encoding, because nothing here needs the listpack's
//! back-lengths: a reverse scan decodes the node forwards first (a node holds at most
//! `stream-node-max-entries` entries, 100 by default).
//!
//! ```text
//! buf := master entry*
//! master := n (len name){n}                 the first entry's names (loaded: the listpack's)
//! entry  := flags:u8 ms_delta seq_delta body
//! body   := (len value){n}                  if flags & SAME_FIELDS (names are the master's)
//!         | m (len field len value){m}      otherwise
//! ```
//! Every number is a LEB128 varint ([`crate::varint`]). Deltas are against the master id (the
//! node's key), `ms` first; they are never negative because ids only grow within a stream.
//!
//! Invariants (checked by [`Node::check`]):
//! - entries are in strictly increasing id order, the first entry's id is the master id;
//! - `live` + `deleted` equals the number of entries, `deleted` the number with `DELETED`;
//! - `last` is the id of the last entry, deleted or not;
//! - `lp_body` is the listpack size model ([`crate::listpack_size`]) of the node's elements
//!   other than the master's `count` and `deleted` numbers.
//!
//! The conversion to and from Redis's listpack (RDB files, DUMP) is in [`listpack`].

use bytes::Bytes;

use crate::id::StreamId;
use crate::listpack_size::{LISTPACK_FIXED_BYTES, int_element_bytes, str_element_bytes};
use crate::varint;

mod listpack;

/// The entry is a tombstone: deleted by XDEL or an exact trim, still taking its place.
const FLAG_DELETED: u8 = 1;
/// The entry's field names are the master's, so only its values are stored.
const FLAG_SAME_FIELDS: u8 = 2;

/// One node of a stream. Its master id is the key it is stored under, passed in by the caller.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The encoded master entry and entries.
    buf: Vec<u8>,
    /// Bytes of `buf` taken by the master entry; entries start here.
    master_len: u32,
    /// Entries not deleted.
    live: u32,
    /// Tombstones. Counts toward `stream-node-max-entries`, as in Redis.
    deleted: u32,
    /// Id of the last entry in the node, a tombstone or not (MINID trimming looks at it).
    last: StreamId,
    /// Listpack bytes of every element except the master's `count` and `deleted`.
    lp_body: u64,
}

/// Where one entry sits in a node, as found by a scan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawEntry {
    /// Offset of the flags byte.
    pub offset: usize,
    /// Whether the entry is a tombstone.
    pub deleted: bool,
    /// The entry id.
    pub id: StreamId,
    /// Offset of the body.
    body: usize,
    /// Whether the body holds values only (the entry has the master's field names).
    pub same_fields: bool,
}

impl Node {
    /// A node whose first entry is `(id, fields)`; `id` becomes the master id.
    pub fn new<T: AsRef<[u8]>>(id: StreamId, fields: &[T]) -> Node {
        let n = fields.len() / 2;
        let mut buf = Vec::with_capacity(64);
        varint::put(&mut buf, n as u64);
        let mut lp_body = int_element_bytes(n as i64) + int_element_bytes(0); // num-fields, master end
        for name in fields.iter().step_by(2) {
            let name = name.as_ref();
            varint::put(&mut buf, name.len() as u64);
            buf.extend_from_slice(name);
            lp_body += str_element_bytes(name);
        }
        let master_len = buf.len() as u32;
        let mut node = Node {
            buf,
            master_len,
            live: 0,
            deleted: 0,
            last: id,
            lp_body,
        };
        node.push_encoded(id, id, fields, true);
        node
    }

    /// Live entries.
    pub fn live(&self) -> u64 {
        u64::from(self.live)
    }

    /// Tombstones.
    pub fn deleted(&self) -> u64 {
        u64::from(self.deleted)
    }

    /// Id of the last entry, deleted or not.
    pub fn last(&self) -> StreamId {
        self.last
    }

    /// Id of the last live entry (`None` if every entry is a tombstone): the node's last id
    /// when it holds no tombstone, else found by a scan. `master` is the node's key.
    pub fn last_live(&self, master: StreamId) -> Option<StreamId> {
        match (self.live, self.deleted) {
            (0, _) => None,
            (_, 0) => Some(self.last),
            _ => self
                .scan(master)
                .filter(|r| !r.deleted)
                .last()
                .map(|r| r.id),
        }
    }

    /// Bytes the equivalent Redis listpack would take.
    pub fn listpack_bytes(&self) -> u64 {
        LISTPACK_FIXED_BYTES
            + self.lp_body
            + int_element_bytes(i64::from(self.live))
            + int_element_bytes(i64::from(self.deleted))
    }

    /// Heap bytes held by this node's buffer.
    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Gives back spare capacity once the node will no longer grow.
    pub fn seal(&mut self) {
        self.buf.shrink_to_fit();
    }

    /// Appends an entry. `id` must be greater than every id in the node.
    pub fn push<T: AsRef<[u8]>>(&mut self, master: StreamId, id: StreamId, fields: &[T]) {
        let same = self.has_master_fields(fields);
        self.push_encoded(master, id, fields, same);
    }

    fn push_encoded<T: AsRef<[u8]>>(
        &mut self,
        master: StreamId,
        id: StreamId,
        fields: &[T],
        same: bool,
    ) {
        debug_assert!(id >= master && (self.live + self.deleted == 0 || id > self.last));
        let ms_delta = id.ms.wrapping_sub(master.ms);
        let seq_delta = id.seq.wrapping_sub(master.seq);
        let n = fields.len() / 2;
        let flags = if same { FLAG_SAME_FIELDS } else { 0 };
        self.buf.push(flags);
        varint::put(&mut self.buf, ms_delta);
        varint::put(&mut self.buf, seq_delta);
        // Redis writes the deltas as int64 and the element count that allows reverse scans.
        let mut lp = int_element_bytes(i64::from(flags))
            + int_element_bytes(ms_delta as i64)
            + int_element_bytes(seq_delta as i64);
        if same {
            for value in fields.iter().skip(1).step_by(2) {
                let value = value.as_ref();
                varint::put(&mut self.buf, value.len() as u64);
                self.buf.extend_from_slice(value);
                lp += str_element_bytes(value);
            }
            lp += int_element_bytes(n as i64 + 3);
        } else {
            varint::put(&mut self.buf, n as u64);
            for item in fields {
                let item = item.as_ref();
                varint::put(&mut self.buf, item.len() as u64);
                self.buf.extend_from_slice(item);
                lp += str_element_bytes(item);
            }
            lp += int_element_bytes(n as i64) + int_element_bytes(2 * n as i64 + 4);
        }
        self.lp_body += lp;
        self.live += 1;
        self.last = id;
    }

    // Only the old RDB loader, kept as the reference its tests compare with, uses this.
    #[cfg(test)]
    /// A node whose first entry, read from a snapshot, is `(id, fields)`, a tombstone if
    /// `deleted`.
    pub fn new_loaded<T: AsRef<[u8]>>(id: StreamId, fields: &[T], deleted: bool) -> Node {
        let mut node = Node::new(id, fields);
        if deleted {
            node.tombstone_at(node.master_len as usize);
        }
        node
    }

    // Only the old RDB loader, kept as the reference its tests compare with, uses this.
    #[cfg(test)]
    /// Appends an entry read from a snapshot, a tombstone if `deleted`. `id` must be greater
    /// than every id in the node.
    pub fn push_loaded<T: AsRef<[u8]>>(
        &mut self,
        master: StreamId,
        id: StreamId,
        fields: &[T],
        deleted: bool,
    ) {
        let offset = self.buf.len();
        self.push(master, id, fields);
        if deleted {
            self.tombstone_at(offset);
        }
    }

    // Only the old RDB loader, kept as the reference its tests compare with, uses this.
    #[cfg(test)]
    /// Flags the live entry whose flags byte is at `offset` as deleted.
    fn tombstone_at(&mut self, offset: usize) {
        if let Some(flags) = self.buf.get_mut(offset) {
            *flags |= FLAG_DELETED;
            self.live -= 1;
            self.deleted += 1;
        }
    }

    // Only the old RDB loader, kept as the reference its tests compare with, uses this.
    #[cfg(test)]
    /// The master entry's field names, in order.
    pub fn master_fields(&self) -> Vec<&[u8]> {
        let master = &self.buf[..self.master_len as usize];
        let mut pos = 0;
        let n = varint::get(master, &mut pos).unwrap_or(0);
        let mut names = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let Some(len) = varint::get(master, &mut pos) else {
                break;
            };
            let end = (pos + len as usize).min(master.len());
            names.push(&master[pos..end]);
            pos = end;
        }
        names
    }

    /// Whether `fields` has exactly the master's field names in the master's order.
    fn has_master_fields<T: AsRef<[u8]>>(&self, fields: &[T]) -> bool {
        let master = &self.buf[..self.master_len as usize];
        let mut pos = 0;
        let Some(n) = varint::get(master, &mut pos) else {
            return false;
        };
        if n != (fields.len() / 2) as u64 {
            return false;
        }
        for name in fields.iter().step_by(2) {
            let name = name.as_ref();
            let Some(len) = varint::get(master, &mut pos) else {
                return false;
            };
            let end = pos + len as usize;
            if master.get(pos..end) != Some(name) {
                return false;
            }
            pos = end;
        }
        true
    }

    /// Scans every entry, tombstones included, in id order.
    pub fn scan(&self, master: StreamId) -> Scan<'_> {
        let mut at = 0;
        Scan {
            node: self,
            master,
            pos: self.master_len as usize,
            master_fields: varint::get(&self.buf, &mut at),
        }
    }

    /// Scans every entry into a vector, for reverse iteration.
    pub fn scan_all(&self, master: StreamId) -> Vec<RawEntry> {
        let mut all = Vec::with_capacity((self.live + self.deleted) as usize);
        all.extend(self.scan(master));
        all
    }

    /// The entry at `raw` as a borrowed view.
    pub fn entry(&self, raw: &RawEntry) -> EntryRef<'_> {
        let master = &self.buf[..self.master_len as usize];
        let mut pos = 0;
        let master_n = varint::get(master, &mut pos).unwrap_or(0) as usize;
        if raw.same_fields {
            EntryRef {
                id: raw.id,
                names: Some(&master[pos..]),
                body: &self.buf[raw.body..],
                len: master_n,
            }
        } else {
            let mut body = raw.body;
            let n = varint::get(&self.buf, &mut body).unwrap_or(0) as usize;
            EntryRef {
                id: raw.id,
                names: None,
                body: &self.buf[body..],
                len: n,
            }
        }
    }

    /// Marks the live entry at `raw` deleted. The caller removes the node if no live entry is
    /// left (XDEL) or keeps it (the one exact-trim case where Redis keeps an empty node).
    pub fn mark_deleted(&mut self, raw: &RawEntry) {
        debug_assert!(!raw.deleted);
        self.buf[raw.offset] |= FLAG_DELETED;
        self.live -= 1;
        self.deleted += 1;
    }

    /// Finds the entry with id `id`, if the node holds it (live or not).
    pub fn find(&self, master: StreamId, id: StreamId) -> Option<RawEntry> {
        if id < master || id > self.last {
            return None;
        }
        self.scan(master)
            .take_while(|raw| raw.id <= id)
            .find(|raw| raw.id == id)
    }

    /// Drops the trailing entries with ids at or above `id`, which must all be tombstones
    /// (XSETID can move a stream's last id below them). Returns whether the node is now empty.
    pub fn drop_tombstones_from(&mut self, master: StreamId, id: StreamId) -> bool {
        let Some(first) = self.scan(master).find(|raw| raw.id >= id) else {
            return false;
        };
        debug_assert!(
            self.scan(master)
                .filter(|raw| raw.id >= id)
                .all(|raw| raw.deleted)
        );
        if first.offset == self.master_len as usize {
            return true;
        }
        self.buf.truncate(first.offset);
        // A rare path: recount from the bytes rather than subtract piecemeal.
        if let Ok(measured) = self.measure(master) {
            self.live = measured.live;
            self.deleted = measured.deleted;
            self.lp_body = measured.lp_body;
            if let Some(last) = measured.last {
                self.last = last;
            }
        }
        false
    }

    /// Every field, for tests that compare two nodes.
    #[cfg(test)]
    pub(crate) fn parts(&self) -> (&[u8], u32, u32, u32, StreamId, u64) {
        (
            &self.buf,
            self.master_len,
            self.live,
            self.deleted,
            self.last,
            self.lp_body,
        )
    }

    /// Walks the whole node and checks the invariants in the module doc.
    pub fn check(&self, master: StreamId) -> Result<(), String> {
        let measured = self.measure(master)?;
        if (measured.live, measured.deleted) != (self.live, self.deleted) {
            return Err(format!(
                "counted {} live and {} deleted, node says {} and {}",
                measured.live, measured.deleted, self.live, self.deleted
            ));
        }
        if measured.last != Some(self.last) {
            return Err(format!(
                "last is {} but the last entry is {:?}",
                self.last, measured.last
            ));
        }
        if measured.lp_body != self.lp_body {
            return Err(format!(
                "listpack model {} but node says {}",
                measured.lp_body, self.lp_body
            ));
        }
        Ok(())
    }

    /// Decodes the whole node, checking its encoding and order, and counts what it holds.
    fn measure(&self, master: StreamId) -> Result<Measured, String> {
        let mut m = Measured {
            live: 0,
            deleted: 0,
            last: None,
            lp_body: 0,
        };
        let mut pos = 0;
        let n = varint::get(&self.buf, &mut pos).ok_or("master field count")?;
        m.lp_body += int_element_bytes(n as i64) + int_element_bytes(0);
        for _ in 0..n {
            let len = varint::get(&self.buf, &mut pos).ok_or("master name length")? as usize;
            let name = self
                .buf
                .get(pos..pos + len)
                .ok_or("master name past the end")?;
            m.lp_body += str_element_bytes(name);
            pos += len;
        }
        if pos != self.master_len as usize {
            return Err(format!(
                "master_len {} but master ends at {pos}",
                self.master_len
            ));
        }
        for raw in self.scan(master) {
            if m.last.is_none() && raw.id != master {
                return Err(format!(
                    "first entry {} is not the master id {master}",
                    raw.id
                ));
            }
            if m.last.is_some_and(|p| p >= raw.id) {
                return Err(format!("entry {} out of order", raw.id));
            }
            m.last = Some(raw.id);
            if raw.deleted {
                m.deleted += 1;
            } else {
                m.live += 1;
            }
            let flags = self.buf[raw.offset];
            m.lp_body += int_element_bytes(i64::from(flags & !FLAG_DELETED));
            m.lp_body += int_element_bytes(raw.id.ms.wrapping_sub(master.ms) as i64);
            m.lp_body += int_element_bytes(raw.id.seq.wrapping_sub(master.seq) as i64);
            let entry = self.entry(&raw);
            let pairs = entry.len() as i64;
            for (field, value) in entry.fields() {
                if !raw.same_fields {
                    m.lp_body += str_element_bytes(field);
                }
                m.lp_body += str_element_bytes(value);
            }
            m.lp_body += if raw.same_fields {
                int_element_bytes(pairs + 3)
            } else {
                int_element_bytes(pairs) + int_element_bytes(2 * pairs + 4)
            };
        }
        Ok(m)
    }
}

/// What [`Node::measure`] counted.
#[derive(Debug, Clone, Copy)]
struct Measured {
    live: u32,
    deleted: u32,
    last: Option<StreamId>,
    lp_body: u64,
}

/// Forward scan over a node's entries, tombstones included.
#[derive(Debug)]
pub(crate) struct Scan<'a> {
    node: &'a Node,
    master: StreamId,
    pos: usize,
    /// The master's field count, read once (`None` only on a buffer this module did not write).
    master_fields: Option<u64>,
}

impl Iterator for Scan<'_> {
    type Item = RawEntry;

    #[inline]
    fn next(&mut self) -> Option<RawEntry> {
        let buf = &self.node.buf;
        let offset = self.pos;
        let flags = *buf.get(offset)?;
        let mut pos = offset + 1;
        let ms_delta = varint::get(buf, &mut pos)?;
        let seq_delta = varint::get(buf, &mut pos)?;
        let body = pos;
        let same_fields = flags & FLAG_SAME_FIELDS != 0;
        let items = if same_fields {
            self.master_fields?
        } else {
            varint::get(buf, &mut pos)? * 2
        };
        for _ in 0..items {
            let len = varint::get(buf, &mut pos)?;
            pos = pos.checked_add(usize::try_from(len).ok()?)?;
        }
        self.pos = pos;
        Some(RawEntry {
            offset,
            deleted: flags & FLAG_DELETED != 0,
            id: StreamId::new(
                self.master.ms.wrapping_add(ms_delta),
                self.master.seq.wrapping_add(seq_delta),
            ),
            body,
            same_fields,
        })
    }
}

/// A borrowed view of one entry: its id and its field/value pairs in the order they were given.
#[derive(Debug, Clone, Copy)]
pub struct EntryRef<'a> {
    /// The entry id.
    pub id: StreamId,
    /// The master's names (after its count) when the entry has the master's fields.
    names: Option<&'a [u8]>,
    /// The entry's values (or field/value pairs), running to the end of the node.
    body: &'a [u8],
    /// Number of field/value pairs.
    len: usize,
}

impl<'a> EntryRef<'a> {
    /// Number of field/value pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the entry has no fields (never true for entries added through XADD).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The field/value pairs, in insertion order, duplicates kept.
    pub fn fields(&self) -> Fields<'a> {
        Fields {
            names: self.names,
            body: self.body,
            remaining: self.len,
        }
    }

    /// An owned copy.
    pub fn to_entry(&self) -> Entry {
        Entry {
            id: self.id,
            fields: self
                .fields()
                .map(|(f, v)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
                .collect(),
        }
    }
}

/// Iterator over an entry's field/value pairs.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    names: Option<&'a [u8]>,
    body: &'a [u8],
    remaining: usize,
}

fn take_bytes<'a>(buf: &mut &'a [u8]) -> &'a [u8] {
    let mut pos = 0;
    let len = varint::get(buf, &mut pos).unwrap_or(0) as usize;
    let end = (pos + len).min(buf.len());
    let item = &buf[pos..end];
    *buf = &buf[end..];
    item
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let field = match &mut self.names {
            Some(names) => take_bytes(names),
            None => take_bytes(&mut self.body),
        };
        let value = take_bytes(&mut self.body);
        Some((field, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Fields<'_> {}

/// An owned stream entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry id.
    pub id: StreamId,
    /// Field/value pairs in insertion order, duplicates kept.
    pub fields: Vec<(Bytes, Bytes)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(entry: EntryRef<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
        entry
            .fields()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect()
    }

    #[test]
    fn same_fields_entries_store_only_values_and_read_back() {
        let master = StreamId::new(10, 0);
        let mut node = Node::new(master, &["f1", "v1", "f2", "v2"]);
        node.push(master, StreamId::new(10, 1), &["f1", "a", "f2", "b"]);
        node.push(
            master,
            StreamId::new(11, 0),
            &["f2", "x", "f1", "y", "f2", "z"],
        );
        node.check(master).unwrap();
        let all = node.scan_all(master);
        assert_eq!(all.len(), 3);
        assert!(all[0].same_fields && all[1].same_fields && !all[2].same_fields);
        assert_eq!(
            fields(node.entry(&all[1])),
            vec![
                (b"f1".to_vec(), b"a".to_vec()),
                (b"f2".to_vec(), b"b".to_vec())
            ]
        );
        assert_eq!(fields(node.entry(&all[2])).len(), 3);
        assert_eq!(
            fields(node.entry(&all[2]))[2],
            (b"f2".to_vec(), b"z".to_vec())
        );
    }

    #[test]
    fn tombstones_keep_their_place() {
        let master = StreamId::new(1, 1);
        let mut node = Node::new(master, &["a", "1"]);
        node.push(master, StreamId::new(1, 2), &["a", "2"]);
        let raw = node.find(master, StreamId::new(1, 2)).unwrap();
        node.mark_deleted(&raw);
        node.check(master).unwrap();
        assert_eq!((node.live(), node.deleted()), (1, 1));
        assert_eq!(node.last(), StreamId::new(1, 2));
        assert!(node.find(master, StreamId::new(1, 2)).unwrap().deleted);
        assert!(node.find(master, StreamId::new(1, 3)).is_none());
        // The last live entry skips the trailing tombstone; none is left once all are.
        assert_eq!(node.last_live(master), Some(StreamId::new(1, 1)));
        node.push(master, StreamId::new(1, 3), &["a", "3"]);
        assert_eq!(node.last_live(master), Some(StreamId::new(1, 3)));
        for seq in [1, 3] {
            let raw = node.find(master, StreamId::new(1, seq)).unwrap();
            node.mark_deleted(&raw);
        }
        assert_eq!(node.last_live(master), None);
    }

    #[test]
    fn listpack_model_of_a_small_node() {
        // XADD s 1-1 f1 v1 f2 v2 in Redis: header 6 + end 1, master: count 1 (2), deleted 0 (2),
        // num-fields 2 (2), "f1" (4), "f2" (4), end 0 (2); entry: flags (2), deltas (2 + 2),
        // "v1" (4), "v2" (4), lp-count 5 (2).
        let master = StreamId::new(1, 1);
        let node = Node::new(master, &["f1", "v1", "f2", "v2"]);
        assert_eq!(
            node.listpack_bytes(),
            7 + 2 + 2 + 2 + 4 + 4 + 2 + 2 + 2 + 2 + 4 + 4 + 2
        );
    }
}

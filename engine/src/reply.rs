//! Command replies, independent of the wire protocol.
//!
//! The server encodes a [`Reply`] as RESP2 or RESP3; the embedded API returns it as is. The
//! variants are the distinctions Redis's replies make: the two kinds of null matter (a missing
//! bulk string is `$-1` in RESP2, a missing array `*-1`; both are `_` in RESP3), and maps are
//! flat arrays in RESP2.

use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};

use crate::id::StreamId;
use crate::node::EntryRef;
use crate::reply_size::Protocol;

/// A reply value. Equality compares what a client would see: [`Reply::Entries`] equals the
/// array of entry arrays it stands for.
#[derive(Debug, Clone, Eq)]
pub enum Reply {
    /// A status line, `+OK` and friends.
    Status(&'static str),
    /// An integer.
    Int(i64),
    /// A bulk string.
    Bulk(Bytes),
    /// A missing bulk string (`$-1` / `_`).
    Null,
    /// A missing array (`*-1` / `_`).
    NullArray,
    /// An array.
    Array(Vec<Reply>),
    /// A map (RESP3 `%`; a flat array of keys and values in RESP2).
    Map(Vec<(Reply, Reply)>),
    /// XREAD's shape: a map in RESP3, an array of `[key, value]` pairs in RESP2.
    StreamMap(Vec<(Reply, Reply)>),
    /// A set (RESP3 `~`; an array in RESP2): COMMAND INFO's flags, categories, tips and key
    /// specs, as Redis sends them.
    Set(Vec<Reply>),
    /// Text meant for people (INFO): a verbatim string in RESP3, a bulk string in RESP2.
    Verbatim(Bytes),
    /// A double as its text (a RESP3 `,` double, a bulk string in RESP2), as Redis's
    /// `addReplyHumanLongDouble`.
    Double(Bytes),
    /// An error inside a reply (EXEC's array); the text starts with its code.
    Error(String),
    /// An array of stream entries, `[[id, [f1, v1, ...]], ...]`, kept in one buffer so the
    /// server writes it without building a tree of small values (XRANGE, XREAD, XREADGROUP).
    Entries(Entries),
    /// Bulk strings kept in one buffer (LRANGE, HGETALL, SMEMBERS), sent as an array, a set or
    /// a map as their [`BulksShape`] says: the server writes them with one copy, with no
    /// value per element.
    Bulks(Bulks),
    /// A reply already encoded in the caller's protocol: a script's, whose Lua values have
    /// shapes (a status of any text, a boolean, a big number, a verbatim string of any
    /// format) the other variants do not hold.
    Raw(Bytes),
}

impl PartialEq for Reply {
    fn eq(&self, other: &Reply) -> bool {
        match (self, other) {
            (Reply::Entries(a), Reply::Entries(b)) => a.to_replies() == b.to_replies(),
            (Reply::Entries(a), other) | (other, Reply::Entries(a)) => {
                matches!(other, Reply::Array(items) if *items == a.to_replies())
            }
            (Reply::Bulks(a), Reply::Bulks(b)) => a == b,
            (Reply::Bulks(a), other) | (other, Reply::Bulks(a)) => *other == a.to_reply(),
            (Reply::Status(a), Reply::Status(b)) => a == b,
            (Reply::Int(a), Reply::Int(b)) => a == b,
            (Reply::Bulk(a), Reply::Bulk(b))
            | (Reply::Verbatim(a), Reply::Verbatim(b))
            | (Reply::Double(a), Reply::Double(b)) => a == b,
            (Reply::Null, Reply::Null) | (Reply::NullArray, Reply::NullArray) => true,
            (Reply::Array(a), Reply::Array(b)) | (Reply::Set(a), Reply::Set(b)) => a == b,
            (Reply::Map(a), Reply::Map(b)) | (Reply::StreamMap(a), Reply::StreamMap(b)) => a == b,
            (Reply::Error(a), Reply::Error(b)) => a == b,
            (Reply::Raw(a), Reply::Raw(b)) => a == b,
            _ => false,
        }
    }
}

impl Reply {
    /// `+OK`.
    pub const OK: Reply = Reply::Status("OK");

    /// A bulk string copied from bytes.
    pub fn bulk(bytes: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(bytes.as_ref()))
    }

    /// A bulk string from a static string.
    pub fn bulk_static(s: &'static str) -> Reply {
        Reply::Bulk(Bytes::from_static(s.as_bytes()))
    }

    /// An id as a bulk string, `<ms>-<seq>`.
    pub fn id(id: StreamId) -> Reply {
        let mut text = [0u8; StreamId::TEXT_BYTES_MAX];
        let len = id.write_text(&mut text);
        Reply::Bulk(Bytes::copy_from_slice(&text[..len]))
    }

    /// An entry as Redis replies it: `[id, [f1, v1, ...]]` (fields are never a map).
    pub fn entry(entry: &EntryRef<'_>) -> Reply {
        let mut fields = Vec::with_capacity(entry.len() * 2);
        for (field, value) in entry.fields() {
            fields.push(Reply::bulk(field));
            fields.push(Reply::bulk(value));
        }
        Reply::Array(vec![Reply::id(entry.id), Reply::Array(fields)])
    }
}

/// A byte range of an [`Entries`] buffer.
type Span = (usize, usize);

/// One entry of an [`Entries`]: its id, and its fields and values as a run of spans
/// (`None`: a pending entry whose stream entry was deleted, sent as a null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntryItem {
    id: Span,
    fields: Option<(usize, usize)>,
}

/// Stream entries in one buffer, which already holds their RESP encoding (the same in RESP2
/// and RESP3 but for a deleted entry's null), so the server sends it with one copy. The spans
/// point at the id, field and value bytes inside it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Entries {
    /// `[id, [f1, v1, ...]]` for every entry, RESP2-encoded, without the outer array header.
    data: Bytes,
    items: Vec<EntryItem>,
    /// Field and value spans of every entry, in order.
    spans: Vec<Span>,
    /// How many entries are deleted ones (encoded `*-1`, which RESP3 writes `_`).
    deleted: usize,
}

/// What a [`Bulks`] is sent as. The elements are encoded the same in every shape; only the
/// header differs, and only in RESP3.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BulksShape {
    /// An array (LRANGE, HKEYS, SCAN's keys).
    #[default]
    Array,
    /// A set: `~` in RESP3, an array in RESP2 (SMEMBERS).
    Set,
    /// A map of the elements taken two by two, key then value: `%` in RESP3, the flat array
    /// in RESP2 (HGETALL).
    Map,
}

/// Bulk strings encoded back to back (`$<len>\r\n<bytes>\r\n` each), how many, and what
/// they are sent as. A map's elements are pushed key, value, key, value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bulks {
    data: Vec<u8>,
    count: usize,
    shape: BulksShape,
}

impl Bulks {
    /// An empty array with room for `bytes` bytes of encoded elements.
    pub fn with_capacity(bytes: usize) -> Bulks {
        Bulks::shaped(BulksShape::Array, bytes)
    }

    /// An empty `shape` with room for `bytes` bytes of encoded elements.
    pub fn shaped(shape: BulksShape, bytes: usize) -> Bulks {
        Bulks {
            data: Vec::with_capacity(bytes),
            count: 0,
            shape,
        }
    }

    /// What the elements are sent as.
    pub fn shape(&self) -> BulksShape {
        self.shape
    }

    /// Appends one bulk string.
    ///
    /// A list's or a scan's reply is hundreds of these, most a few bytes long, so the
    /// header of an element under 10,000 bytes is framed in a word and appended as one
    /// fixed-size copy (the unused bytes then cut off), not digit by digit.
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) {
        // Counted first: counted after the copies, the compiler adds to the count and the
        // buffer's length in one vector store, which reads the length just written by a
        // narrower store and stalls on it (store forwarding fails), element after element.
        self.count += 1;
        let n = bytes.len();
        self.data.reserve(n + 24);
        if n < 10_000 {
            let (head, used) = short_bulk_head(n);
            let at = self.data.len();
            self.data.extend_from_slice(&head);
            self.data.truncate(at + used);
        } else {
            self.data.push(b'$');
            self.data
                .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            self.data.extend_from_slice(b"\r\n");
        }
        self.data.extend_from_slice(bytes);
        self.data.extend_from_slice(b"\r\n");
    }

    /// Appends an integer as its decimal text.
    pub fn push_int(&mut self, n: i64) {
        self.push(itoa::Buffer::new().format(n).as_bytes());
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded elements, without the array's header.
    pub fn encoded(&self) -> &[u8] {
        &self.data
    }

    /// The reply the elements stand for, in their shape (a map's pairs in order).
    pub fn to_reply(&self) -> Reply {
        let items = self.to_replies();
        match self.shape {
            BulksShape::Array => Reply::Array(items),
            BulksShape::Set => Reply::Set(items),
            BulksShape::Map => {
                let mut items = items.into_iter();
                let mut pairs = Vec::with_capacity(self.count / 2);
                while let (Some(k), Some(v)) = (items.next(), items.next()) {
                    pairs.push((k, v));
                }
                Reply::Map(pairs)
            }
        }
    }

    /// The elements as bulk replies.
    pub fn to_replies(&self) -> Vec<Reply> {
        let mut out = Vec::with_capacity(self.count);
        let mut rest = &self.data[..];
        while let Some(line_end) = rest.iter().position(|&b| b == b'\r') {
            let len: usize = std::str::from_utf8(&rest[1..line_end])
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let start = line_end + 2;
            out.push(Reply::bulk(&rest[start..start + len]));
            rest = &rest[start + len + 2..];
        }
        out
    }
}

/// `$<n>\r\n` for `n` under 10,000, in the first bytes of a little-endian word, and how many
/// they are. Built in a register: written byte by byte to memory and read back as a word,
/// it would stall the read on the narrower stores.
#[inline]
fn short_bulk_head(n: usize) -> ([u8; 8], usize) {
    let digits = match n {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        _ => 4,
    };
    let mut word = u64::from(b'$') | (0x0a0d << (8 * (digits + 1)));
    let mut rest = n as u64;
    for at in (1..=digits).rev() {
        word |= (u64::from(b'0') + rest % 10) << (8 * at);
        rest /= 10;
    }
    (word.to_le_bytes(), digits + 3)
}

/// One entry of [`Entries`], borrowed: its id text and its field/value items (`None`: deleted).
#[derive(Debug, Clone, Copy)]
pub struct EntryView<'a> {
    /// The id, `<ms>-<seq>`.
    pub id: &'a [u8],
    /// Fields and values alternating, or `None` for a deleted entry.
    pub items: Option<&'a [Span]>,
    data: &'a [u8],
}

impl<'a> EntryView<'a> {
    /// The bytes of one span of `items`.
    pub fn bytes(&self, (start, end): Span) -> &'a [u8] {
        &self.data[start..end]
    }
}

impl Entries {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = EntryView<'_>> + '_ {
        self.items.iter().map(|item| EntryView {
            id: &self.data[item.id.0..item.id.1],
            items: item.fields.map(|(from, to)| &self.spans[from..to]),
            data: &self.data,
        })
    }

    /// The RESP2 encoding of the entries, without the array header; `None` when it is not
    /// also the RESP3 encoding and `resp3` is asked for.
    pub fn encoded(&self, resp3: bool) -> Option<&[u8]> {
        (!resp3 || self.deleted == 0).then_some(&self.data[..])
    }

    /// The bytes of the entries' encoding under `protocol`, without the array header.
    pub fn encoded_len(&self, protocol: Protocol) -> usize {
        entries_len(self.data.len(), self.deleted, protocol)
    }

    /// The same entries as a tree of replies.
    pub fn to_replies(&self) -> Vec<Reply> {
        self.iter()
            .map(|e| {
                let fields = match e.items {
                    Some(items) => Reply::Array(
                        items
                            .iter()
                            .map(|&span| Reply::bulk(e.bytes(span)))
                            .collect(),
                    ),
                    None => Reply::NullArray,
                };
                Reply::Array(vec![Reply::bulk(e.id), fields])
            })
            .collect()
    }
}

impl fmt::Debug for Entries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.to_replies()).finish()
    }
}

/// Builds an [`Entries`]: push entries (or deleted ids), then finish.
#[derive(Debug, Default)]
pub struct EntryReplies {
    buf: BytesMut,
    items: Vec<EntryItem>,
    spans: Vec<Span>,
    deleted: usize,
}

impl EntryReplies {
    /// An empty builder.
    pub fn new() -> EntryReplies {
        EntryReplies::default()
    }

    fn put_header(&mut self, kind: u8, n: usize) {
        let mut digits = itoa::Buffer::new();
        self.buf.put_u8(kind);
        self.buf.put_slice(digits.format(n).as_bytes());
        self.buf.put_slice(b"\r\n");
    }

    /// Writes `*2` and the id as a bulk string; returns the id's span.
    fn put_id(&mut self, id: StreamId) -> Span {
        let mut text = [0u8; StreamId::TEXT_BYTES_MAX];
        let len = id.write_text(&mut text);
        self.buf.put_slice(b"*2\r\n");
        self.put(&text[..len])
    }

    /// Writes a bulk string; returns its payload's span.
    fn put(&mut self, bytes: &[u8]) -> Span {
        self.put_header(b'$', bytes.len());
        let start = self.buf.len();
        self.buf.put_slice(bytes);
        self.buf.put_slice(b"\r\n");
        (start, start + bytes.len())
    }

    /// Adds `[id, [f1, v1, ...]]`.
    pub fn push(&mut self, entry: &EntryRef<'_>) {
        self.push_fields(entry.id, entry.fields());
    }

    /// Adds `[id, [f1, v1, ...]]` from an id and its field/value pairs (an archived entry).
    pub fn push_fields<'a>(
        &mut self,
        id: StreamId,
        pairs: impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])>,
    ) {
        let id = self.put_id(id);
        self.put_header(b'*', 2 * pairs.len());
        let from = self.spans.len();
        for (field, value) in pairs {
            let field = self.put(field);
            let value = self.put(value);
            self.spans.push(field);
            self.spans.push(value);
        }
        self.items.push(EntryItem {
            id,
            fields: Some((from, self.spans.len())),
        });
    }

    /// Adds `[id, nil]`: a pending entry whose stream entry was deleted.
    pub fn push_deleted(&mut self, id: StreamId) {
        let id = self.put_id(id);
        self.buf.put_slice(b"*-1\r\n");
        self.deleted += 1;
        self.items.push(EntryItem { id, fields: None });
    }

    /// Number of entries added.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The bytes of the entries added so far under `protocol`, without the array header.
    pub fn encoded_len(&self, protocol: Protocol) -> usize {
        entries_len(self.buf.len(), self.deleted, protocol)
    }

    /// The entries.
    pub fn finish(self) -> Entries {
        Entries {
            data: self.buf.freeze(),
            items: self.items,
            spans: self.spans,
            deleted: self.deleted,
        }
    }

    /// The entries as a reply.
    pub fn into_reply(self) -> Reply {
        Reply::Entries(self.finish())
    }
}

/// The entries' encoding is RESP2's but for a deleted entry's `*-1`, which RESP3 writes `_`.
fn entries_len(resp2_bytes: usize, deleted: usize, protocol: Protocol) -> usize {
    match protocol {
        Protocol::Resp2 => resp2_bytes,
        Protocol::Resp3 => resp2_bytes.saturating_sub(2 * deleted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulks_frame_every_length_as_resp_does() {
        let lengths = (0..1_200).chain([9_999, 10_000, 10_001, 123_456]);
        let mut bulks = Bulks::default();
        let mut expected = Vec::new();
        for n in lengths {
            let element = vec![b'a' + (n % 26) as u8; n];
            bulks.push(&element);
            expected.extend_from_slice(format!("${n}\r\n").as_bytes());
            expected.extend_from_slice(&element);
            expected.extend_from_slice(b"\r\n");
        }
        assert_eq!(bulks.encoded(), &expected[..]);
        assert_eq!(bulks.len(), 1_204);
        let replies = bulks.to_replies();
        assert_eq!(replies.len(), 1_204);
        assert_eq!(
            replies[1_200],
            Reply::bulk(&vec![b'a' + (9_999 % 26) as u8; 9_999][..])
        );
    }

    #[test]
    fn bulks_push_integers_as_their_text() {
        let mut bulks = Bulks::default();
        for n in [0, -1, 42, i64::MIN, i64::MAX] {
            bulks.push_int(n);
        }
        let text = format!(
            "$1\r\n0\r\n$2\r\n-1\r\n$2\r\n42\r\n$20\r\n{}\r\n$19\r\n{}\r\n",
            i64::MIN,
            i64::MAX
        );
        assert_eq!(bulks.encoded(), text.as_bytes());
    }
}

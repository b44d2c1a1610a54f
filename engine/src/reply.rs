//! Command replies, independent of the wire protocol.
//!
//! The server encodes a [`Reply`] as RESP2 or RESP3; the embedded API returns it as is. The
//! variants are the distinctions Redis's replies make: the two kinds of null matter (a missing
//! bulk string is `$-1` in RESP2, a missing array `*-1`; both are `_` in RESP3), and maps are
//! flat arrays in RESP2.

use bytes::{BufMut, Bytes, BytesMut};

use crate::id::StreamId;
use crate::node::EntryRef;

/// A reply value.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Text meant for people (INFO): a verbatim string in RESP3, a bulk string in RESP2.
    Verbatim(Bytes),
    /// An error inside a reply (EXEC's array); the text starts with its code.
    Error(String),
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
        // At most 20 + 1 + 20 bytes; formatted without the fmt machinery (a hot path).
        let mut text = [0u8; 41];
        let mut ms = itoa::Buffer::new();
        let mut seq = itoa::Buffer::new();
        let (ms, seq) = (ms.format(id.ms).as_bytes(), seq.format(id.seq).as_bytes());
        text[..ms.len()].copy_from_slice(ms);
        text[ms.len()] = b'-';
        text[ms.len() + 1..ms.len() + 1 + seq.len()].copy_from_slice(seq);
        Reply::Bulk(Bytes::copy_from_slice(&text[..ms.len() + 1 + seq.len()]))
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

/// A byte range of [`EntryReplies`]' buffer.
type Span = (usize, usize);

/// Builds the replies for many entries over one shared buffer: the bytes of every id, field
/// and value are copied once into it, and each bulk string is a slice of it, so a reply of `n`
/// entries costs a few allocations per entry (its arrays) instead of one per field.
#[derive(Debug, Default)]
pub struct EntryReplies {
    buf: BytesMut,
    /// Per entry: the id's span, and the spans of its fields and values (`None`: deleted).
    items: Vec<(Span, Option<Vec<Span>>)>,
}

impl EntryReplies {
    /// An empty builder.
    pub fn new() -> EntryReplies {
        EntryReplies::default()
    }

    fn put_id(&mut self, id: StreamId) -> Span {
        let start = self.buf.len();
        let mut ms = itoa::Buffer::new();
        let mut seq = itoa::Buffer::new();
        self.buf.put_slice(ms.format(id.ms).as_bytes());
        self.buf.put_u8(b'-');
        self.buf.put_slice(seq.format(id.seq).as_bytes());
        (start, self.buf.len())
    }

    fn put(&mut self, bytes: &[u8]) -> Span {
        let start = self.buf.len();
        self.buf.put_slice(bytes);
        (start, self.buf.len())
    }

    /// Adds `[id, [f1, v1, ...]]`.
    pub fn push(&mut self, entry: &EntryRef<'_>) {
        let id = self.put_id(entry.id);
        let mut spans = Vec::with_capacity(entry.len() * 2);
        for (field, value) in entry.fields() {
            spans.push(self.put(field));
            spans.push(self.put(value));
        }
        self.items.push((id, Some(spans)));
    }

    /// Adds `[id, nil]`: a pending entry whose stream entry was deleted.
    pub fn push_deleted(&mut self, id: StreamId) {
        let id = self.put_id(id);
        self.items.push((id, None));
    }

    /// Number of entries added.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entry replies, in the order added.
    pub fn finish(self) -> Vec<Reply> {
        let data = self.buf.freeze();
        let bulk = |(start, end): Span| Reply::Bulk(data.slice(start..end));
        self.items
            .into_iter()
            .map(|(id, fields)| {
                let fields = match fields {
                    Some(spans) => Reply::Array(spans.into_iter().map(bulk).collect()),
                    None => Reply::NullArray,
                };
                Reply::Array(vec![bulk(id), fields])
            })
            .collect()
    }
}

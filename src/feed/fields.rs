//! An entry's field/value pairs, sharing one buffer.
//!
//! A window read can return thousands of entries; giving each field and value its own
//! allocation made reads cost several allocations per entry. [`Fields`] keeps the bytes in one
//! shared buffer (one per read, reference-counted) and the pairs as offsets into it.

use std::fmt;

use bytes::{Bytes, BytesMut};

/// Field/value pairs in the order written, duplicates kept. Two `Fields` are equal when their
/// pairs are, whatever buffers hold them.
#[derive(Clone, Default)]
pub struct Fields {
    /// The bytes of every pair (possibly of other entries too).
    data: Bytes,
    /// Per pair: field start, value start, value end, as offsets into `data`.
    spans: Vec<[u32; 3]>,
}

impl Fields {
    /// Pairs copied from `(field, value)` slices.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Fields {
        let mut builder = FieldsBuilder::default();
        let mut fields = builder.start();
        for (f, v) in pairs {
            builder.push(&mut fields, f, v);
        }
        let data = builder.finish();
        fields.data = data;
        fields
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[u8], &[u8])> + '_ {
        self.spans.iter().map(|&[f, v, end]| {
            let (f, v, end) = (f as usize, v as usize, end as usize);
            (&self.data[f..v], &self.data[v..end])
        })
    }

    /// The pair at `index`.
    pub fn pair(&self, index: usize) -> Option<(&[u8], &[u8])> {
        let &[f, v, end] = self.spans.get(index)?;
        let (f, v, end) = (f as usize, v as usize, end as usize);
        Some((&self.data[f..v], &self.data[v..end]))
    }

    /// The first value of `field`, as text if it is UTF-8.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.iter()
            .find(|(f, _)| *f == field.as_bytes())
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// Drops the first pair (the feed's `id` field once checked).
    pub(crate) fn drop_first(&mut self) {
        if !self.spans.is_empty() {
            self.spans.remove(0);
        }
    }

    /// Owned copies of the pairs.
    pub fn to_vec(&self) -> Vec<(Bytes, Bytes)> {
        self.iter()
            .map(|(f, v)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
            .collect()
    }
}

impl PartialEq for Fields {
    fn eq(&self, other: &Fields) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Fields {}

impl fmt::Debug for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.iter()
                    .map(|(k, v)| (String::from_utf8_lossy(k), String::from_utf8_lossy(v))),
            )
            .finish()
    }
}

/// Builds many entries' [`Fields`] over one buffer: `start` each entry, `push` its pairs, then
/// `finish` and hand the frozen buffer to every entry with [`FieldsBuilder::attach`].
#[derive(Debug, Default)]
pub(crate) struct FieldsBuilder {
    buf: BytesMut,
}

impl FieldsBuilder {
    /// A builder with room for `bytes`.
    pub fn with_capacity(bytes: usize) -> FieldsBuilder {
        FieldsBuilder {
            buf: BytesMut::with_capacity(bytes),
        }
    }

    /// An empty entry to push pairs into.
    pub fn start(&mut self) -> Fields {
        Fields::default()
    }

    /// Appends a pair to `fields`.
    pub fn push(&mut self, fields: &mut Fields, field: &[u8], value: &[u8]) {
        let at = self.buf.len() as u32;
        self.buf.extend_from_slice(field);
        self.buf.extend_from_slice(value);
        fields.spans.push([
            at,
            at + field.len() as u32,
            at + (field.len() + value.len()) as u32,
        ]);
    }

    /// The shared buffer.
    pub fn finish(self) -> Bytes {
        self.buf.freeze()
    }

    /// Points `fields` at the shared buffer.
    pub fn attach(fields: &mut Fields, data: &Bytes) {
        fields.data = data.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_read_back_in_order_with_duplicates() {
        let mut fields = Fields::from_pairs([(&b"a"[..], &b"1"[..]), (b"b", b""), (b"a", b"3")]);
        assert_eq!(fields.len(), 3);
        assert_eq!(fields.get("a"), Some("1"));
        assert_eq!(fields.pair(2), Some((&b"a"[..], &b"3"[..])));
        fields.drop_first();
        assert_eq!(
            fields.iter().collect::<Vec<_>>(),
            vec![(&b"b"[..], &b""[..]), (b"a", b"3")]
        );
    }
}

//! How many bytes a [`Reply`] takes on the wire, per protocol.
//!
//! Commands build protocol-neutral [`Reply`] values; the server encodes them for the
//! connection's [`Protocol`]. A few commands must know the size of what they write before the
//! reply exists (XREAD/XREADGROUP `MAXSIZE`, `docs/reference/streams-8.md` §6): the command's
//! [`crate::Snapshot`] carries the caller's protocol, and [`encoded_len`] computes the length
//! the server's encoder will produce for it, byte for byte (the protocol crate's encoder tests
//! hold the two to each other).

use crate::reply::{BulksShape, Reply};

/// The protocol version a connection speaks (HELLO 2 or HELLO 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2, the default.
    #[default]
    Resp2,
    /// RESP3.
    Resp3,
}

/// The length of `n` in decimal, sign included.
pub(crate) fn digits(n: i64) -> usize {
    let mut buf = itoa::Buffer::new();
    buf.format(n).len()
}

/// `<prefix><n>\r\n`.
pub(crate) fn header_len(n: usize) -> usize {
    3 + digits(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `$<len>\r\n<bytes>\r\n`.
pub(crate) fn bulk_len(len: usize) -> usize {
    header_len(len) + len + 2
}

/// The bytes `reply` encodes to under `protocol`.
pub fn encoded_len(reply: &Reply, protocol: Protocol) -> usize {
    let resp3 = protocol == Protocol::Resp3;
    match reply {
        Reply::Status(s) => s.len() + 3,
        Reply::Int(n) => digits(*n) + 3,
        Reply::Bulk(b) => bulk_len(b.len()),
        Reply::Verbatim(b) if resp3 => header_len(b.len() + 4) + 4 + b.len() + 2,
        Reply::Double(b) if resp3 => b.len() + 3,
        Reply::Verbatim(b) | Reply::Double(b) => bulk_len(b.len()),
        Reply::Null | Reply::NullArray if resp3 => 3,
        Reply::Null => 5,
        Reply::NullArray => 5,
        Reply::Array(items) | Reply::Set(items) => {
            header_len(items.len())
                + items
                    .iter()
                    .map(|r| encoded_len(r, protocol))
                    .sum::<usize>()
        }
        Reply::Map(pairs) => {
            let n = if resp3 { pairs.len() } else { 2 * pairs.len() };
            header_len(n) + pairs_len(pairs, protocol)
        }
        Reply::StreamMap(pairs) => {
            let framing = if resp3 { 0 } else { 4 * pairs.len() };
            header_len(pairs.len()) + framing + pairs_len(pairs, protocol)
        }
        Reply::Error(text) => text.len() + 3,
        Reply::Raw(bytes) => bytes.len(),
        Reply::Bulks(bulks) => {
            let n = match bulks.shape() {
                BulksShape::Map if resp3 => bulks.len() / 2,
                _ => bulks.len(),
            };
            header_len(n) + bulks.encoded().len()
        }
        Reply::Entries(entries) => header_len(entries.len()) + entries.encoded_len(protocol),
    }
}

fn pairs_len(pairs: &[(Reply, Reply)], protocol: Protocol) -> usize {
    pairs
        .iter()
        .map(|(k, v)| encoded_len(k, protocol) + encoded_len(v, protocol))
        .sum()
}

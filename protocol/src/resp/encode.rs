//! Reply encoding for RESP2 and RESP3.
//!
//! The differences that matter to clients: both kinds of null are `_` in RESP3 but `$-1`
//! (missing bulk) and `*-1` (missing array) in RESP2; maps are `%` in RESP3 and flat arrays in
//! RESP2, except XREAD's shape, which RESP2 sends as an array of `[key, value]` pairs; verbatim
//! strings (INFO) are `=` in RESP3 and bulk strings in RESP2; sets (COMMAND INFO's flags) are
//! `~` in RESP3 and arrays in RESP2.

use bytes::{BufMut, BytesMut};
use echomq_engine::{BulksShape, Reply};

/// The protocol version a connection speaks: the engine's, so a command can size its reply
/// for it (`echomq_engine::encoded_len` matches [`encode`] byte for byte).
pub use echomq_engine::Protocol;

fn put_int_line(out: &mut BytesMut, prefix: u8, n: i64) {
    let mut digits = itoa::Buffer::new();
    out.put_u8(prefix);
    out.put_slice(digits.format(n).as_bytes());
    out.put_slice(b"\r\n");
}

/// Appends a status line (`+OK`), the same in both protocols.
#[inline]
pub fn encode_status(status: &str, out: &mut BytesMut) {
    out.reserve(status.len() + 3);
    out.put_u8(b'+');
    out.put_slice(status.as_bytes());
    out.put_slice(b"\r\n");
}

/// Appends `reply` to `out`.
pub fn encode(reply: &Reply, protocol: Protocol, out: &mut BytesMut) {
    let resp3 = protocol == Protocol::Resp3;
    match reply {
        Reply::Status(s) => encode_status(s, out),
        Reply::Int(n) => put_int_line(out, b':', *n),
        Reply::Bulk(b) => put_bulk(out, b),
        Reply::Verbatim(b) if resp3 => {
            put_int_line(out, b'=', b.len() as i64 + 4);
            out.put_slice(b"txt:");
            out.put_slice(b);
            out.put_slice(b"\r\n");
        }
        Reply::Double(b) if resp3 => {
            out.put_u8(b',');
            out.put_slice(b);
            out.put_slice(b"\r\n");
        }
        Reply::Verbatim(b) | Reply::Double(b) => {
            put_int_line(out, b'$', b.len() as i64);
            out.put_slice(b);
            out.put_slice(b"\r\n");
        }
        Reply::Null | Reply::NullArray if resp3 => out.put_slice(b"_\r\n"),
        Reply::Null => out.put_slice(b"$-1\r\n"),
        Reply::NullArray => out.put_slice(b"*-1\r\n"),
        Reply::Array(items) => {
            put_int_line(out, b'*', items.len() as i64);
            for item in items {
                encode(item, protocol, out);
            }
        }
        Reply::Set(items) => {
            put_int_line(out, if resp3 { b'~' } else { b'*' }, items.len() as i64);
            for item in items {
                encode(item, protocol, out);
            }
        }
        Reply::Map(pairs) => {
            if resp3 {
                put_int_line(out, b'%', pairs.len() as i64);
            } else {
                put_int_line(out, b'*', 2 * pairs.len() as i64);
            }
            for (k, v) in pairs {
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
        Reply::StreamMap(pairs) => {
            put_int_line(out, if resp3 { b'%' } else { b'*' }, pairs.len() as i64);
            for (k, v) in pairs {
                if !resp3 {
                    out.put_slice(b"*2\r\n");
                }
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
        Reply::Error(text) => encode_error(text, out),
        Reply::Raw(bytes) => out.put_slice(bytes),
        Reply::Bulks(bulks) => {
            let n = bulks.len() as i64;
            match (bulks.shape(), resp3) {
                (BulksShape::Set, true) => put_int_line(out, b'~', n),
                (BulksShape::Map, true) => put_int_line(out, b'%', n / 2),
                _ => put_int_line(out, b'*', n),
            }
            out.put_slice(bulks.encoded());
        }
        Reply::Entries(entries) => {
            put_int_line(out, b'*', entries.len() as i64);
            if let Some(encoded) = entries.encoded(resp3) {
                out.put_slice(encoded);
                return;
            }
            for entry in entries.iter() {
                out.put_slice(b"*2\r\n");
                put_bulk(out, entry.id);
                match entry.items {
                    Some(items) => {
                        put_int_line(out, b'*', items.len() as i64);
                        for &span in items {
                            put_bulk(out, entry.bytes(span));
                        }
                    }
                    None if resp3 => out.put_slice(b"_\r\n"),
                    None => out.put_slice(b"*-1\r\n"),
                }
            }
        }
    }
}

fn put_bulk(out: &mut BytesMut, bytes: &[u8]) {
    put_int_line(out, b'$', bytes.len() as i64);
    out.put_slice(bytes);
    out.put_slice(b"\r\n");
}

/// Appends an error line. `text` starts with its code (`ERR ...`, `NOGROUP ...`); CR and LF
/// become spaces so a message can never break the protocol, as Redis does.
pub fn encode_error(text: &str, out: &mut BytesMut) {
    out.put_u8(b'-');
    for &b in text.as_bytes() {
        out.put_u8(if b == b'\r' || b == b'\n' { b' ' } else { b });
    }
    out.put_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn enc(reply: &Reply, protocol: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        encode(reply, protocol, &mut out);
        out.to_vec()
    }

    #[test]
    fn nulls_differ_in_resp2_and_merge_in_resp3() {
        assert_eq!(enc(&Reply::Null, Protocol::Resp2), b"$-1\r\n");
        assert_eq!(enc(&Reply::NullArray, Protocol::Resp2), b"*-1\r\n");
        assert_eq!(enc(&Reply::Null, Protocol::Resp3), b"_\r\n");
        assert_eq!(enc(&Reply::NullArray, Protocol::Resp3), b"_\r\n");
    }

    #[test]
    fn maps_and_stream_maps() {
        let k = || Reply::Bulk(Bytes::from_static(b"k"));
        let map = Reply::Map(vec![(k(), Reply::Int(1))]);
        assert_eq!(enc(&map, Protocol::Resp2), b"*2\r\n$1\r\nk\r\n:1\r\n");
        assert_eq!(enc(&map, Protocol::Resp3), b"%1\r\n$1\r\nk\r\n:1\r\n");
        let xread = Reply::StreamMap(vec![(k(), Reply::Array(vec![]))]);
        assert_eq!(
            enc(&xread, Protocol::Resp2),
            b"*1\r\n*2\r\n$1\r\nk\r\n*0\r\n"
        );
        assert_eq!(enc(&xread, Protocol::Resp3), b"%1\r\n$1\r\nk\r\n*0\r\n");
    }

    #[test]
    fn errors_stay_on_one_line() {
        assert_eq!(
            enc(&Reply::Error("ERR a\r\nb".into()), Protocol::Resp2),
            b"-ERR a  b\r\n"
        );
        let v = Reply::Verbatim(Bytes::from_static(b"x"));
        assert_eq!(enc(&v, Protocol::Resp3), b"=5\r\ntxt:x\r\n");
        assert_eq!(enc(&v, Protocol::Resp2), b"$1\r\nx\r\n");
    }

    #[test]
    fn the_engines_sizes_are_the_encoders_lengths() {
        use echomq_engine::reply::EntryReplies;
        use echomq_engine::{StreamId, encoded_len};
        let mut entries = EntryReplies::new();
        entries.push_fields(
            StreamId::new(1, 2),
            [(&b"f"[..], &b"v"[..]), (b"field", b"")].into_iter(),
        );
        entries.push_deleted(StreamId::new(3, 0));
        let b = |s: &'static str| Reply::Bulk(Bytes::from_static(s.as_bytes()));
        let replies = [
            Reply::OK,
            Reply::Int(-1234),
            Reply::Int(0),
            b(""),
            b("0123456789"),
            Reply::Null,
            Reply::NullArray,
            Reply::Verbatim(Bytes::from_static(b"info")),
            Reply::Error("ERR x\r\ny".into()),
            Reply::Set(vec![b("a"), Reply::Int(7)]),
            Reply::Map(vec![(b("k"), Reply::Array(vec![Reply::Null]))]),
            Reply::StreamMap(vec![
                (b("s1"), Reply::Entries(entries.finish())),
                (b("s2"), Reply::Array(vec![])),
            ]),
        ];
        for reply in &replies {
            for protocol in [Protocol::Resp2, Protocol::Resp3] {
                assert_eq!(
                    encoded_len(reply, protocol),
                    enc(reply, protocol).len(),
                    "{reply:?} in {protocol:?}"
                );
            }
        }
    }
}

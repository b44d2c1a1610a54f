//! A node to and from Redis's listpack (the layout a stream node has in an RDB file), in one
//! pass over the bytes each way.
//!
//! The listpack holds the master entry `count deleted n field{n} 0` and then per entry
//! `flags ms_delta seq_delta (value{n} | m (field value){m}) lp_count`, elements in Redis's
//! encodings ([`crate::rdb::listpack`]): the same content as the node's buffer (module doc of
//! [`crate::node`]) with other number and string encodings, so each side is written straight
//! from the other, without a per-entry allocation.
//!
//! - [`Node::write_listpack`] writes exactly [`Node::listpack_bytes`] bytes (the size model is
//!   of this very layout), the bytes Redis keeps for the same entries.
//! - [`Node::from_listpack`] checks what Redis 8.8's loader checks of a node and builds the
//!   buffer, counts, last id and size model as it goes; an entry whose field names are the
//!   master's is stored with values only whatever its flag says, as [`Node::push`] stores it,
//!   so the node is the one the same entries appended one by one would give. The master names
//!   are the listpack's master entry's: in every file Redis writes, the first entry's names
//!   (a hand-made listpack whose first entry has others loads, and saves back, as it is).

use crate::id::StreamId;
use crate::listpack_size::{int_element_bytes, str_element_bytes};
use crate::rdb::listpack::{self, Cursor, Element};
use crate::varint;

use super::{FLAG_DELETED, FLAG_SAME_FIELDS, Node};

/// The next varint of `buf` at `pos` (a node's own buffer: 0 past its end, never a panic).
#[inline(always)]
fn num(buf: &[u8], pos: &mut usize) -> u64 {
    varint::get(buf, pos).unwrap_or(0)
}

/// The next length-prefixed string of `buf` at `pos`.
#[inline(always)]
fn bytes<'a>(buf: &'a [u8], pos: &mut usize) -> &'a [u8] {
    let len = num(buf, pos) as usize;
    let start = (*pos).min(buf.len());
    let end = start.saturating_add(len).min(buf.len());
    *pos = end;
    &buf[start..end]
}

/// An integer element (counts, flags and deltas), or the reason it is not one.
#[inline]
fn int(element: Option<Element<'_>>) -> Result<i64, String> {
    match element {
        Some(Element::Int(v)) => Ok(v),
        Some(Element::Str(s)) => std::str::from_utf8(s)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "a stream listpack number is not an integer".to_string()),
        None => Err("stream listpack ends inside an entry".into()),
    }
}

/// Appends a string element to a node buffer (an integer as its decimal text) and returns its
/// size in the listpack model.
#[inline]
fn put_element(buf: &mut Vec<u8>, element: Option<Element<'_>>) -> Result<u64, String> {
    match element {
        // A short string that cannot be an integer (nearly every value): a one-byte length
        // here, a one-byte header and back-length in the listpack.
        Some(Element::Str(s)) if s.len() < 64 && !matches!(s.first(), Some(b'-' | b'0'..=b'9')) => {
            buf.push(s.len() as u8);
            buf.extend_from_slice(s);
            Ok(2 + s.len() as u64)
        }
        Some(Element::Str(s)) => {
            varint::put(buf, s.len() as u64);
            buf.extend_from_slice(s);
            Ok(str_element_bytes(s))
        }
        Some(Element::Int(v)) => {
            let mut text = itoa::Buffer::new();
            let text = text.format(v).as_bytes();
            varint::put(buf, text.len() as u64);
            buf.extend_from_slice(text);
            Ok(int_element_bytes(v))
        }
        None => Err("stream listpack ends inside an entry".into()),
    }
}

/// The common entry, read in one go: flags `SAME_FIELDS` (deleted or not), deltas and the
/// lp-count as 7- or 13-bit integers, the values short strings that cannot be integers.
/// Appends it to `buf` as [`Node::push`] stores it, adds its listpack size to `lp_body`, and
/// returns its flags and deltas. `None` for any other entry: the caller truncates `buf`,
/// rewinds the cursor and reads the entry element by element (which also reports what is
/// wrong with a broken one).
#[inline]
fn same_fields_entry(
    cur: &mut Cursor<'_>,
    n_master: usize,
    buf: &mut Vec<u8>,
    lp_body: &mut u64,
) -> Option<(i64, u64, u64)> {
    let flags = cur.small_int()?;
    if flags & !i64::from(FLAG_DELETED) != i64::from(FLAG_SAME_FIELDS) {
        return None;
    }
    let ms_delta = u64::try_from(cur.small_int()?).ok()?;
    let seq_delta = u64::try_from(cur.small_int()?).ok()?;
    buf.push(FLAG_SAME_FIELDS);
    varint::put(buf, ms_delta);
    varint::put(buf, seq_delta);
    let mut lp = int_element_bytes(i64::from(FLAG_SAME_FIELDS))
        + int_element_bytes(ms_delta as i64)
        + int_element_bytes(seq_delta as i64);
    for _ in 0..n_master {
        let value = cur.short_text()?;
        buf.push(value.len() as u8);
        buf.extend_from_slice(value);
        // A one-byte header and back-length (under 64 bytes).
        lp += 2 + value.len() as u64;
    }
    let lp_count = n_master as i64 + 3;
    if cur.small_int()? != lp_count {
        return None;
    }
    *lp_body += lp + int_element_bytes(lp_count);
    Some((flags, ms_delta, seq_delta))
}

impl Node {
    /// Appends the node as Redis's listpack to `out` (the master id is the node's key).
    pub fn write_listpack(&self, out: &mut Vec<u8>) {
        let buf = &self.buf;
        out.reserve(self.listpack_bytes() as usize);
        let start = listpack::open(out);
        listpack::put_int(out, i64::from(self.live));
        listpack::put_int(out, i64::from(self.deleted));
        let mut pos = 0;
        let n = num(buf, &mut pos);
        listpack::put_int(out, n as i64);
        for _ in 0..n {
            listpack::put_str(out, bytes(buf, &mut pos));
        }
        listpack::put_int(out, 0);
        let mut count = 4 + n as usize;
        while let Some(&flags) = buf.get(pos) {
            pos += 1;
            let ms_delta = num(buf, &mut pos);
            let seq_delta = num(buf, &mut pos);
            if flags < 128 && ms_delta < 128 && seq_delta < 128 {
                // Three one-byte integers, each with its one-byte back-length (flags < 128).
                out.extend_from_slice(&[flags, 1, ms_delta as u8, 1, seq_delta as u8, 1]);
            } else {
                listpack::put_int(out, i64::from(flags));
                listpack::put_int(out, ms_delta as i64);
                listpack::put_int(out, seq_delta as i64);
            }
            if flags & FLAG_SAME_FIELDS != 0 {
                for _ in 0..n {
                    listpack::put_str(out, bytes(buf, &mut pos));
                }
                listpack::put_int(out, n as i64 + 3);
                count += 4 + n as usize;
            } else {
                let m = num(buf, &mut pos);
                listpack::put_int(out, m as i64);
                for _ in 0..2 * m {
                    listpack::put_str(out, bytes(buf, &mut pos));
                }
                listpack::put_int(out, 2 * m as i64 + 4);
                count += 5 + 2 * m as usize;
            }
        }
        listpack::close(out, start, count);
        debug_assert_eq!((out.len() - start) as u64, self.listpack_bytes());
    }

    /// The node in Redis's listpack `lp` under master id `master`, with its live entry count,
    /// or what is wrong with it (the messages are Redis's where it has one).
    pub fn from_listpack(master: StreamId, lp: &[u8]) -> Result<(Node, u64), String> {
        let mut cur = Cursor::new(lp)?;
        let count = int(cur.element()?)?;
        let deleted = int(cur.element()?)?;
        let n_master = int(cur.element()?)?;
        if count <= 0 {
            return Err("Stream listpack bad entry count".into());
        }
        let n_master =
            usize::try_from(n_master).map_err(|_| "negative master field count".to_string())?;
        if n_master > cur.remaining() {
            return Err("master field count beyond the listpack".into());
        }
        // The node buffer is smaller than the listpack (no back-lengths, shorter numbers).
        let mut buf = Vec::with_capacity(lp.len());
        varint::put(&mut buf, n_master as u64);
        let mut lp_body = int_element_bytes(n_master as i64) + int_element_bytes(0);
        for _ in 0..n_master {
            lp_body += put_element(&mut buf, cur.element()?)?;
        }
        if int(cur.element()?)? != 0 {
            return Err("stream master entry without its terminator".into());
        }
        let master_len = buf.len();
        let mut node = Node {
            buf,
            master_len: u32::try_from(master_len)
                .map_err(|_| "stream master entry too large".to_string())?,
            live: 0,
            deleted: 0,
            last: master,
            lp_body,
        };
        let mut last: Option<StreamId> = None;
        while !cur.at_end() {
            let offset = node.buf.len();
            let mark = cur.mark();
            let fast = same_fields_entry(&mut cur, n_master, &mut node.buf, &mut node.lp_body);
            let (flags, ms_delta, seq_delta) = if let Some(fast) = fast {
                fast
            } else {
                node.buf.truncate(offset);
                cur.rewind(mark);
                let flags = int(cur.element()?)?;
                let ms_delta = int(cur.element()?)? as u64;
                let seq_delta = int(cur.element()?)? as u64;
                (flags, ms_delta, seq_delta)
            };
            let id = StreamId::new(
                master.ms.wrapping_add(ms_delta),
                master.seq.wrapping_add(seq_delta),
            );
            let same = flags & i64::from(FLAG_SAME_FIELDS) != 0;
            if fast.is_some() {
                // Read whole by the fast path.
            } else if same {
                node.buf.push(FLAG_SAME_FIELDS);
                varint::put(&mut node.buf, ms_delta);
                varint::put(&mut node.buf, seq_delta);
                let mut lp = int_element_bytes(i64::from(FLAG_SAME_FIELDS))
                    + int_element_bytes(ms_delta as i64)
                    + int_element_bytes(seq_delta as i64);
                for _ in 0..n_master {
                    lp += put_element(&mut node.buf, cur.element()?)?;
                }
                lp += int_element_bytes(n_master as i64 + 3);
                if int(cur.element()?)? != n_master as i64 + 3 {
                    return Err("stream entry lp-count is wrong".into());
                }
                node.lp_body += lp;
            } else {
                let m = int(cur.element()?)?;
                let m = usize::try_from(m)
                    .ok()
                    .filter(|&m| m <= cur.remaining())
                    .ok_or_else(|| "bad entry field count".to_string())?;
                node.buf.push(0);
                varint::put(&mut node.buf, ms_delta);
                varint::put(&mut node.buf, seq_delta);
                varint::put(&mut node.buf, m as u64);
                let mut lp = int_element_bytes(0)
                    + int_element_bytes(ms_delta as i64)
                    + int_element_bytes(seq_delta as i64)
                    + int_element_bytes(m as i64)
                    + int_element_bytes(2 * m as i64 + 4);
                for _ in 0..2 * m {
                    lp += put_element(&mut node.buf, cur.element()?)?;
                }
                if int(cur.element()?)? != 2 * m as i64 + 4 {
                    return Err("stream entry lp-count is wrong".into());
                }
                node.lp_body += lp;
                node.restore_same_fields(offset);
            }
            if last.is_some_and(|l| l >= id) {
                return Err("stream entries out of order".into());
            }
            if last.is_none() && id != master {
                return Err("the first entry is not the node's master id".into());
            }
            if flags & i64::from(FLAG_DELETED) != 0 {
                node.buf[offset] |= FLAG_DELETED;
                node.deleted += 1;
            } else {
                node.live += 1;
            }
            node.last = id;
            last = Some(id);
        }
        cur.finish()?;
        if last.is_none() {
            return Err("Empty listpack inside stream".into());
        }
        if i64::from(node.live) != count || i64::from(node.deleted) != deleted {
            return Err("stream master entry counts do not match the entries".into());
        }
        node.buf.shrink_to_fit();
        let live = node.live();
        Ok((node, live))
    }

    /// Re-stores the entry at `offset` (the last one, written with its field names) with values
    /// only if its names are the master's, as [`Node::push`] would have stored it.
    fn restore_same_fields(&mut self, offset: usize) {
        let mut pos = offset + 1;
        let ms_delta = num(&self.buf, &mut pos);
        let seq_delta = num(&self.buf, &mut pos);
        let m = num(&self.buf, &mut pos) as usize;
        let mut fields = Vec::with_capacity(2 * m);
        for _ in 0..2 * m {
            fields.push(bytes(&self.buf, &mut pos));
        }
        if !self.has_master_fields(&fields) {
            return;
        }
        let lp_fields: u64 = fields.iter().step_by(2).map(|f| str_element_bytes(f)).sum();
        let values: Vec<Vec<u8>> = fields
            .iter()
            .skip(1)
            .step_by(2)
            .map(|v| v.to_vec())
            .collect();
        self.buf.truncate(offset);
        self.buf.push(FLAG_SAME_FIELDS);
        varint::put(&mut self.buf, ms_delta);
        varint::put(&mut self.buf, seq_delta);
        for value in &values {
            varint::put(&mut self.buf, value.len() as u64);
            self.buf.extend_from_slice(value);
        }
        // The model drops the names, the field count and the longer lp-count, and adds the
        // shorter one and the flag's size (the same: both flags fit one byte).
        self.lp_body = self.lp_body
            - lp_fields
            - int_element_bytes(m as i64)
            - int_element_bytes(2 * m as i64 + 4)
            + int_element_bytes(m as i64 + 3);
    }
}

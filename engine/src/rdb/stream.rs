//! A stream value in RDB form, as Redis 8.8 writes it (`RDB_TYPE_STREAM_LISTPACKS_5`) and as
//! Redis 5.0–8.8 wrote it (types 15, 19, 21, 26, 27).
//!
//! ```text
//! stream   := nodes:len (master_id:string(16 bytes BE) listpack:string){nodes}
//!             length:len last_id:(len len)
//!             [first_id:(len len) max_deleted:(len len) entries_added:len]          type >= 19
//!             groups:len group{groups}
//!             [idmp_duration:len idmp_maxsize:len producers:len producer{producers}
//!              iids_added:len iids_duplicates:len]                                   type >= 26
//! group    := name:string last_id:(len len) [entries_read:len]                      type >= 19
//!             pel:len (id:16 bytes BE delivery_time:ms delivery_count:len){pel}
//!             consumers:len (name:string seen:ms [active:ms] pel:len id:16{pel}){consumers}
//!             [nacked:len id:16{nacked}]                                             type >= 27
//! producer := pid:string iids:len (iid:string ms:len seq:len){iids}
//! ```
//! A node's listpack holds the master entry (`count deleted n field{n} 0`) and then per entry
//! `flags ms_delta seq_delta (value{n} | m (field value){m}) lp_count` (see [`crate::node`] for
//! the same content in echomq's own encoding); it is built element for element as Redis builds
//! it, so equal streams give equal bytes.
//!
//! Saving skips a node with no live entry (an exact trim can leave one; Redis's own loader
//! refuses such a node) and IDMP IIDs expired at the save time, as Redis does. Loading checks
//! what Redis 8.8's loader checks and then the value's own invariants
//! ([`Stream::check_invariants`]), so a hostile payload yields an [`RdbError`], never a stream
//! that breaks later.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::config::{IDMP_DURATION_RANGE, IDMP_MAXSIZE_RANGE, IdmpConfig};
use crate::error::RdbError;
use crate::group::restore::{LoadedConsumer, LoadedGroup, LoadedPending};
use crate::id::StreamId;
use crate::node::Node;
use crate::stream::Stream;
use crate::stream::idmp::Idmp;
use crate::stream::restore::LoadedCounters;

use super::codec::{Reader, Writer};
use super::listpack::{self, Builder, Element};
use super::types;

const FLAG_DELETED: i64 = 1;
const FLAG_SAME_FIELDS: i64 = 2;

/// A node as Redis's listpack.
fn node_listpack(master: StreamId, node: &Node) -> Vec<u8> {
    let mut lp = Builder::new();
    let names = node.master_fields();
    lp.int(node.live() as i64);
    lp.int(node.deleted() as i64);
    lp.int(names.len() as i64);
    for name in &names {
        lp.string(name);
    }
    lp.int(0);
    for raw in node.scan(master) {
        let entry = node.entry(&raw);
        let mut flags = 0;
        if raw.deleted {
            flags |= FLAG_DELETED;
        }
        if raw.same_fields {
            flags |= FLAG_SAME_FIELDS;
        }
        lp.int(flags);
        lp.int(raw.id.ms.wrapping_sub(master.ms) as i64);
        lp.int(raw.id.seq.wrapping_sub(master.seq) as i64);
        let n = entry.len() as i64;
        if raw.same_fields {
            for (_, value) in entry.fields() {
                lp.string(value);
            }
            lp.int(n + 3);
        } else {
            lp.int(n);
            for (field, value) in entry.fields() {
                lp.string(field);
                lp.string(value);
            }
            lp.int(2 * n + 4);
        }
    }
    lp.finish()
}

/// Writes `stream` (without its type byte) as Redis 8.8 does; IIDs expired at `now_ms` are
/// left out.
pub fn write(stream: &Stream, now_ms: u64, w: &mut Writer) {
    let nodes: Vec<_> = stream.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
    w.len(nodes.len() as u64);
    for (master, node) in nodes {
        w.string(&master.to_be_bytes());
        w.string(&node_listpack(*master, node));
    }
    w.len(stream.len());
    w.id_lens(stream.last_id());
    w.id_lens(stream.first_id());
    w.id_lens(stream.max_deleted_entry_id());
    w.len(stream.entries_added());
    w.len(stream.groups.len() as u64);
    for (name, group) in &stream.groups {
        w.string(name);
        w.id_lens(group.last_id);
        w.len(group.entries_read.map_or(u64::MAX, |n| n as u64));
        w.len(group.pending_count() as u64);
        for (id, nack) in group.pending() {
            w.raw(&id.to_be_bytes());
            w.millis(nack.delivery_time as i64);
            w.len(nack.delivery_count);
        }
        w.len(group.consumers().count() as u64);
        for (name, consumer) in group.consumers() {
            w.string(name.as_bytes());
            w.millis(consumer.seen_time as i64);
            w.millis(consumer.active_time.map_or(-1, |t| t as i64));
            w.len(consumer.pending_count() as u64);
            for id in consumer.pending_ids() {
                w.raw(&id.to_be_bytes());
            }
        }
        w.len(group.nacked_count() as u64);
        for id in group.pending_by_time().take(group.nacked_count()) {
            w.raw(&id.to_be_bytes());
        }
    }
    let idmp = stream.idmp();
    let config = idmp.config();
    w.len(config.duration_s);
    w.len(config.maxsize);
    let producers = idmp.live_producers(now_ms);
    w.len(producers.len() as u64);
    for (pid, iids) in producers {
        w.string(pid);
        w.len(iids.len() as u64);
        for (iid, id) in iids {
            w.string(iid);
            w.id_lens(id);
        }
    }
    let (added, duplicates) = idmp.counters();
    w.len(added);
    w.len(duplicates);
}

/// An integer element (counts and deltas), or the reason it is not one.
fn int(element: Option<&Element<'_>>) -> Result<i64, String> {
    match element {
        Some(Element::Int(v)) => Ok(*v),
        Some(Element::Str(s)) => std::str::from_utf8(s)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "a stream listpack number is not an integer".to_string()),
        None => Err("stream listpack ends inside an entry".into()),
    }
}

/// An element's bytes: a string borrowed from the listpack, an integer as its decimal text.
fn element<'a>(element: Option<&Element<'a>>) -> Result<Cow<'a, [u8]>, String> {
    match element {
        Some(Element::Str(s)) => Ok(Cow::Borrowed(s)),
        Some(Element::Int(v)) => Ok(Cow::Owned(v.to_string().into_bytes())),
        None => Err("stream listpack ends inside an entry".into()),
    }
}

/// A node from Redis's listpack, with its live entry count.
fn node_from_listpack(master: StreamId, lp: &[u8]) -> Result<(Node, u64), String> {
    let elements = listpack::parse(lp)?;
    let mut it = elements.iter();
    let count = int(it.next())?;
    let deleted = int(it.next())?;
    let n_master = int(it.next())?;
    if count <= 0 {
        return Err("Stream listpack bad entry count".into());
    }
    let n_master =
        usize::try_from(n_master).map_err(|_| "negative master field count".to_string())?;
    if n_master > elements.len() {
        return Err("master field count beyond the listpack".into());
    }
    let mut master_fields = Vec::with_capacity(n_master);
    for _ in 0..n_master {
        master_fields.push(element(it.next())?);
    }
    if int(it.next())? != 0 {
        return Err("stream master entry without its terminator".into());
    }
    let mut node: Option<Node> = None;
    let (mut live, mut dead) = (0i64, 0i64);
    let mut last: Option<StreamId> = None;
    let mut fields: Vec<Cow<'_, [u8]>> = Vec::new();
    while let Some(first) = it.next() {
        let flags = int(Some(first))?;
        let ms = master.ms.wrapping_add(int(it.next())? as u64);
        let seq = master.seq.wrapping_add(int(it.next())? as u64);
        let id = StreamId::new(ms, seq);
        fields.clear();
        let lp_count = if flags & FLAG_SAME_FIELDS != 0 {
            for name in &master_fields {
                fields.push(Cow::Borrowed(name.as_ref()));
                fields.push(element(it.next())?);
            }
            n_master as i64 + 3
        } else {
            let n = int(it.next())?;
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= elements.len())
                .ok_or_else(|| "bad entry field count".to_string())?;
            for _ in 0..2 * n {
                fields.push(element(it.next())?);
            }
            2 * n as i64 + 4
        };
        if int(it.next())? != lp_count {
            return Err("stream entry lp-count is wrong".into());
        }
        if last.is_some_and(|l| l >= id) {
            return Err("stream entries out of order".into());
        }
        let is_deleted = flags & FLAG_DELETED != 0;
        match node.as_mut() {
            None => {
                if id != master {
                    return Err("the first entry is not the node's master id".into());
                }
                node = Some(Node::new_loaded(id, &fields, is_deleted));
            }
            Some(node) => node.push_loaded(master, id, &fields, is_deleted),
        }
        if is_deleted {
            dead += 1;
        } else {
            live += 1;
        }
        last = Some(id);
    }
    let node = node.ok_or_else(|| "Empty listpack inside stream".to_string())?;
    if live != count || dead != deleted {
        return Err("stream master entry counts do not match the entries".into());
    }
    Ok((node, live as u64))
}

/// Reads a stream of RDB type `rdb_type` (one of the stream types); IIDs expired at `now_ms`
/// are dropped, as Redis drops them.
pub fn read(r: &mut Reader<'_>, rdb_type: u8, now_ms: u64) -> Result<Stream, RdbError> {
    let corrupt = |r: &Reader<'_>, what: String| r.corrupt(what);
    let count = r.count()?;
    let mut nodes: BTreeMap<StreamId, Node> = BTreeMap::new();
    let mut live_entries: u64 = 0;
    for _ in 0..count {
        let key = r.string()?;
        let key: [u8; 16] = key
            .as_slice()
            .try_into()
            .map_err(|_| r.corrupt("Stream node key entry is not the size of a stream ID"))?;
        let master = StreamId::from_u128(u128::from_be_bytes(key));
        let lp = r.string()?;
        let (node, live) = node_from_listpack(master, &lp).map_err(|e| corrupt(r, e))?;
        live_entries = live_entries
            .checked_add(live)
            .ok_or_else(|| r.corrupt("Stream listpack bad entry count"))?;
        if let Some((&prev, prev_node)) = nodes.last_key_value()
            && (prev >= master || prev_node.last() >= master)
        {
            return Err(r.corrupt("Listpack re-added with existing key or out of order"));
        }
        nodes.insert(master, node);
    }
    let length = r.length()?;
    let last_id = r.id_lens()?;
    let (max_deleted_entry_id, entries_added) = if rdb_type >= types::STREAM_LISTPACKS_2 {
        let _first_id = r.id_lens()?;
        (r.id_lens()?, r.length()?)
    } else {
        (StreamId::MIN, length)
    };
    if length != live_entries {
        return Err(r.corrupt("Stream length inconsistent with live entries"));
    }
    let mut groups = Vec::new();
    let group_count = r.count()?;
    for _ in 0..group_count {
        groups.push(read_group(r, rdb_type, last_id, entries_added)?);
    }
    let idmp = if rdb_type >= types::STREAM_LISTPACKS_4 {
        let duration_s = r.length()?;
        if !IDMP_DURATION_RANGE.contains(&duration_s) {
            return Err(r.corrupt("Stream IDMP duration out of range"));
        }
        let maxsize = r.length()?;
        if !IDMP_MAXSIZE_RANGE.contains(&maxsize) {
            return Err(r.corrupt("Stream IDMP max entries out of range"));
        }
        let mut producers = Vec::new();
        for _ in 0..r.count()? {
            let pid = r.string()?;
            let n = r.count()?;
            let mut iids = Vec::new();
            for _ in 0..n {
                let iid = r.string()?;
                iids.push((iid, r.id_lens()?));
            }
            producers.push((pid, iids));
        }
        let added = r.length()?;
        let duplicates = r.length()?;
        let config = IdmpConfig {
            duration_s,
            maxsize,
        };
        Idmp::restore(config, added, duplicates, producers, now_ms)
    } else {
        Idmp::default()
    };
    let counters = LoadedCounters {
        length,
        last_id,
        max_deleted_entry_id,
        entries_added,
    };
    let mut stream = Stream::from_loaded(nodes, counters, idmp);
    for group in groups {
        stream.restore_group(group).map_err(|e| corrupt(r, e))?;
    }
    stream
        .check_invariants()
        .map_err(|e| corrupt(r, format!("stream breaks its invariants: {e}")))?;
    Ok(stream)
}

fn read_group(
    r: &mut Reader<'_>,
    rdb_type: u8,
    stream_last_id: StreamId,
    entries_added: u64,
) -> Result<LoadedGroup, RdbError> {
    let name = r.string()?;
    let last_id = r.id_lens()?;
    let entries_read = if rdb_type >= types::STREAM_LISTPACKS_2 {
        let n = r.length()? as i64;
        (n >= 0).then_some(n)
    } else if last_id >= stream_last_id {
        // Redis's estimate for a group from before 7.0: all read when it is at the end.
        Some(entries_added as i64)
    } else {
        None
    };
    let mut pel = Vec::new();
    for _ in 0..r.count()? {
        let id = r.raw_id()?;
        let delivery_time = r.millis()?.max(0) as u64;
        let delivery_count = r.length()?;
        pel.push(LoadedPending {
            id,
            delivery_time,
            delivery_count,
        });
    }
    let mut consumers = Vec::new();
    for _ in 0..r.count()? {
        let name = r.string()?;
        let seen_time = r.millis()?.max(0) as u64;
        let active_time = if rdb_type >= types::STREAM_LISTPACKS_3 {
            let t = r.millis()?;
            (t >= 0).then_some(t as u64)
        } else {
            Some(seen_time)
        };
        let mut pending = Vec::new();
        for _ in 0..r.count()? {
            pending.push(r.raw_id()?);
        }
        consumers.push(LoadedConsumer {
            name,
            seen_time,
            active_time,
            pending,
        });
    }
    let mut nack_zone = Vec::new();
    if rdb_type >= types::STREAM_LISTPACKS_5 {
        for _ in 0..r.count()? {
            nack_zone.push(r.raw_id()?);
        }
    }
    Ok(LoadedGroup {
        name,
        last_id,
        entries_read,
        pel,
        consumers,
        nack_zone,
    })
}

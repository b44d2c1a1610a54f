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
//! the same content in echomq's own encoding); it is written straight from the node's buffer
//! and read straight into one ([`crate::node`]'s `listpack` module), element for element as
//! Redis builds it, so equal streams give equal bytes.
//!
//! Saving skips a node with no live entry (an exact trim can leave one; Redis's own loader
//! refuses such a node) and IDMP IIDs expired at the save time, as Redis does. Loading checks
//! what Redis 8.8's loader checks and then the value's own invariants
//! ([`Stream::check_invariants`]; each node's own are checked as the node is decoded, and a
//! group's indexes are built whole from checked input, so release builds walk neither the
//! nodes nor the PELs a second time), so a hostile payload yields an [`RdbError`], never a
//! stream that breaks later.

use crate::config::{IDMP_DURATION_RANGE, IDMP_MAXSIZE_RANGE, IdmpConfig};
use crate::error::RdbError;
use crate::group::restore::{LoadedConsumer, LoadedGroup, LoadedPending};
use crate::id::StreamId;
use crate::stream::Stream;
use crate::stream::idmp::Idmp;
use crate::stream::restore::LoadedCounters;

use super::codec::{Reader, Writer};
use super::nodes;
use super::types;

/// Writes `stream` (without its type byte) as Redis 8.8 does; IIDs expired at `now_ms` are
/// left out.
pub fn write(stream: &Stream, now_ms: u64, w: &mut Writer) {
    let nodes: Vec<_> = stream.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
    nodes::write(&nodes, w);
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

/// Reads a stream of RDB type `rdb_type` (one of the stream types); IIDs expired at `now_ms`
/// are dropped, as Redis drops them.
pub fn read(r: &mut Reader<'_>, rdb_type: u8, now_ms: u64) -> Result<Stream, RdbError> {
    let corrupt = |r: &Reader<'_>, what: String| r.corrupt(what);
    let (nodes, live_entries) = nodes::read(r)?;
    let length = r.length()?;
    let last_id = r.id_lens()?;
    let (first_id, max_deleted_entry_id, entries_added) = if rdb_type >= types::STREAM_LISTPACKS_2 {
        let first_id = r.id_lens()?;
        (Some(first_id), r.id_lens()?, r.length()?)
    } else {
        (None, StreamId::MIN, length)
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
        .check_loaded_invariants()
        .map_err(|e| corrupt(r, format!("stream breaks its invariants: {e}")))?;
    // Redis 8.10's load hardening: the saved first id is the first live entry's (0-0 when
    // there is none); the stream recomputes it, so a payload that disagrees is corrupt.
    if first_id.is_some_and(|id| id != stream.first_id()) {
        return Err(r.corrupt("Stream first ID does not match its first entry"));
    }
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

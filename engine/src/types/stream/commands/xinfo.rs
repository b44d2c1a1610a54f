//! `XINFO STREAM key [FULL [COUNT n]]`, `XINFO GROUPS key`, `XINFO CONSUMERS key group`,
//! `XINFO HELP`.
//!
//! Replies are maps (flat name/value arrays in RESP2). Unknown entries-read or lag, and a
//! missing first or last entry, are nulls. `radix-tree-nodes` is an estimate of Redis's rax
//! internals (1 when empty, `4n - 2` for n nodes: 2 for one node, 6 for two, as Redis shows);
//! no client or test depends on more than that.
//!
//! XINFO STREAM (plain and FULL) shows Redis 8.8's six IDMP fields after
//! `recorded-first-entry-id`: `idmp-duration`, `idmp-maxsize`, `pids-tracked`, `iids-tracked`,
//! `iids-added`, `iids-duplicates` (the tracked counts as expiry at the command's time leaves
//! them).
//!
//! Effects: a read lookup of the key once the subcommand is known.

use crate::error::{Error, Result, shown};
use crate::group::Group;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::stream::Stream;

use super::args::{help, is, parse_i64};

const HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Print this help.",
];

/// Entries (and pending entries) XINFO STREAM FULL shows without COUNT.
const FULL_COUNT_DEFAULT: usize = 10;

/// XINFO.
#[derive(Debug)]
pub struct XInfo;

fn pair(name: &'static str, value: Reply) -> (Reply, Reply) {
    (Reply::bulk_static(name), value)
}

fn opt_int(v: Option<i64>) -> Reply {
    v.map_or(Reply::Null, Reply::Int)
}

impl XInfo {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let sub = super::subcommand(argv)?;
        if sub == "help" {
            return Ok(help(HELP));
        }
        let key = argv[2];
        db.count_read(key, false);
        let stream = db.stream(key)?.ok_or(Error::NoSuchKey)?;
        let now = snapshot.now_ms;
        match sub {
            "consumers" => {
                let group = stream.group(argv[3]).ok_or_else(|| Error::NoGroupForKey {
                    key: shown(key),
                    group: shown(argv[3]),
                })?;
                Ok(Reply::Array(
                    group
                        .consumers()
                        .map(|(name, c)| {
                            // Redis clamps `idle` at 0 but not `inactive`.
                            let inactive = c
                                .active_time
                                .map_or(-1, |t| (now as i64).wrapping_sub(t as i64));
                            Reply::Map(vec![
                                pair("name", Reply::bulk(name.as_bytes())),
                                pair("pending", Reply::Int(c.pending_count() as i64)),
                                pair("idle", Reply::Int(since(now, c.seen_time))),
                                pair("inactive", Reply::Int(inactive)),
                            ])
                        })
                        .collect(),
                ))
            }
            "groups" => Ok(Reply::Array(
                stream
                    .groups()
                    .map(|(name, group)| {
                        Reply::Map(vec![
                            pair("name", Reply::bulk(name)),
                            pair("consumers", Reply::Int(group.consumers().count() as i64)),
                            pair("pending", Reply::Int(group.pending_count() as i64)),
                            pair("last-delivered-id", Reply::id(group.last_id)),
                            pair("entries-read", opt_int(group.entries_read)),
                            pair("lag", opt_int(stream.group_lag(group))),
                        ])
                    })
                    .collect(),
            )),
            _ => {
                let syntax = || Error::SubcommandSyntax {
                    sub: shown(argv[1]),
                    command: "XINFO",
                };
                let options = &argv[3..];
                let full_count = match options {
                    [] => None,
                    [full] if is(full, "full") => Some(FULL_COUNT_DEFAULT),
                    [full, count, n] if is(full, "full") && is(count, "count") => {
                        let n = parse_i64(n)?;
                        Some(if n < 0 {
                            FULL_COUNT_DEFAULT
                        } else {
                            n as usize
                        })
                    }
                    _ => return Err(syntax()),
                };
                Ok(match full_count {
                    None => stream_summary(stream, now),
                    Some(count) => stream_full(stream, count, now),
                })
            }
        }
    }
}

/// Milliseconds since `then`, 0 if the clock went back.
fn since(now_ms: u64, then_ms: u64) -> i64 {
    (now_ms as i64).wrapping_sub(then_ms as i64).max(0)
}

fn radix_tree_nodes(stream: &Stream) -> i64 {
    match stream.node_count() {
        0 => 1,
        n => (4 * n - 2) as i64,
    }
}

fn common(stream: &Stream, now_ms: u64) -> Vec<(Reply, Reply)> {
    let idmp = stream.idmp().info(now_ms);
    let int = |n: u64| Reply::Int(i64::try_from(n).unwrap_or(i64::MAX));
    vec![
        pair("length", Reply::Int(stream.len() as i64)),
        pair("radix-tree-keys", Reply::Int(stream.node_count() as i64)),
        pair("radix-tree-nodes", Reply::Int(radix_tree_nodes(stream))),
        pair("last-generated-id", Reply::id(stream.last_id())),
        pair(
            "max-deleted-entry-id",
            Reply::id(stream.max_deleted_entry_id()),
        ),
        pair("entries-added", Reply::Int(stream.entries_added() as i64)),
        pair("recorded-first-entry-id", Reply::id(stream.first_id())),
        pair("idmp-duration", int(idmp.duration_s)),
        pair("idmp-maxsize", int(idmp.maxsize)),
        pair("pids-tracked", int(idmp.pids_tracked)),
        pair("iids-tracked", int(idmp.iids_tracked)),
        pair("iids-added", int(idmp.iids_added)),
        pair("iids-duplicates", int(idmp.iids_duplicates)),
    ]
}

fn stream_summary(stream: &Stream, now_ms: u64) -> Reply {
    let mut fields = common(stream, now_ms);
    fields.push(pair("groups", Reply::Int(stream.group_count() as i64)));
    fields.push(pair(
        "first-entry",
        stream
            .first_entry()
            .map_or(Reply::Null, |e| Reply::entry(&e)),
    ));
    fields.push(pair(
        "last-entry",
        stream
            .last_entry()
            .map_or(Reply::Null, |e| Reply::entry(&e)),
    ));
    Reply::Map(fields)
}

fn stream_full(stream: &Stream, count: usize, now_ms: u64) -> Reply {
    let limit = if count == 0 { usize::MAX } else { count };
    let mut fields = common(stream, now_ms);
    let entries = stream
        .range(crate::id::StreamId::MIN, crate::id::StreamId::MAX)
        .take(limit)
        .map(|e| Reply::entry(&e))
        .collect();
    fields.push(pair("entries", Reply::Array(entries)));
    let groups = stream
        .groups()
        .map(|(name, group)| group_full(stream, name, group, limit))
        .collect();
    fields.push(pair("groups", Reply::Array(groups)));
    Reply::Map(fields)
}

fn group_full(stream: &Stream, name: &[u8], group: &Group, limit: usize) -> Reply {
    let pending = group
        .pending()
        .take(limit)
        .map(|(id, nack)| {
            Reply::Array(vec![
                Reply::id(*id),
                Reply::bulk(nack.owner_bytes()),
                Reply::Int(nack.delivery_time as i64),
                Reply::Int(nack.delivery_count as i64),
            ])
        })
        .collect();
    let consumers = group
        .consumers()
        .map(|(cname, consumer)| {
            let pending = consumer
                .pending_ids()
                .take(limit)
                .filter_map(|id| group.nack(id).map(|nack| (id, nack)))
                .map(|(id, nack)| {
                    Reply::Array(vec![
                        Reply::id(id),
                        Reply::Int(nack.delivery_time as i64),
                        Reply::Int(nack.delivery_count as i64),
                    ])
                })
                .collect();
            Reply::Map(vec![
                pair("name", Reply::bulk(cname.as_bytes())),
                pair("seen-time", Reply::Int(consumer.seen_time as i64)),
                pair(
                    "active-time",
                    Reply::Int(consumer.active_time.map_or(-1, |t| t as i64)),
                ),
                pair("pel-count", Reply::Int(consumer.pending_count() as i64)),
                pair("pending", Reply::Array(pending)),
            ])
        })
        .collect();
    Reply::Map(vec![
        pair("name", Reply::bulk(name)),
        pair("last-delivered-id", Reply::id(group.last_id)),
        pair("entries-read", opt_int(group.entries_read)),
        pair("lag", opt_int(stream.group_lag(group))),
        pair("pel-count", Reply::Int(group.pending_count() as i64)),
        // Redis 8.8: the NACK zone's size.
        pair("nacked-count", Reply::Int(group.nacked_count() as i64)),
        pair("pending", Reply::Array(pending)),
        pair("consumers", Reply::Array(consumers)),
    ])
}

//! The model's XINFO GROUPS, CONSUMERS and STREAM [FULL [COUNT n]]
//! (`docs/reference/streams.md` §4.8).

use super::model::{GroupModel, NOT_AN_INTEGER, Res, entry_reply, id_reply, int, lag, text, word};
use super::stream_model::ModelStream;
use crate::reply::Reply;

/// XINFO STREAM FULL's entries and pending entries without COUNT.
const FULL_COUNT_DEFAULT: usize = 10;

fn pair(name: &'static str, value: Reply) -> (Reply, Reply) {
    (Reply::bulk(name), value)
}

impl GroupModel {
    /// `XINFO GROUPS|CONSUMERS|STREAM ...` (§4.8).
    pub(super) fn xinfo(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        const SUBCOMMANDS: [(&str, i64); 4] =
            [("consumers", 4), ("groups", 3), ("stream", -3), ("help", 2)];
        let typed = text(&argv[1]);
        let Some(&(sub, arity)) = SUBCOMMANDS.iter().find(|(s, _)| word(&argv[1], s)) else {
            return Err(format!("ERR unknown subcommand '{typed}'. Try XINFO HELP."));
        };
        let argc = argv.len() as i64;
        if (arity > 0 && argc != arity) || argc < -arity {
            return Err(format!(
                "ERR wrong number of arguments for 'xinfo|{sub}' command"
            ));
        }
        assert_ne!(sub, "help", "the generator does not send XINFO HELP");
        let key = &argv[2];
        let stream = self.stream(key)?.ok_or("ERR no such key")?;
        match sub {
            "consumers" => {
                let group = self
                    .groups_of(key)
                    .find(|(g, _)| **g == argv[3])
                    .map(|(_, g)| g)
                    .ok_or_else(|| {
                        format!(
                            "NOGROUP No such consumer group '{}' for key name '{}'",
                            text(&argv[3]),
                            text(key)
                        )
                    })?;
                let since = |t: u64| now_ms as i64 - t as i64;
                Ok(Reply::Array(
                    group
                        .consumers
                        .iter()
                        .map(|(name, c)| {
                            Reply::Map(vec![
                                pair("name", Reply::bulk(name)),
                                pair("pending", Reply::Int(group.pending_of(name).count() as i64)),
                                pair("idle", Reply::Int(since(c.seen_time).max(0))),
                                // Redis clamps idle at 0 but not inactive, which goes negative if
                                // the clock went back.
                                pair("inactive", Reply::Int(c.active_time.map_or(-1, since))),
                            ])
                        })
                        .collect(),
                ))
            }
            "groups" => Ok(Reply::Array(
                self.groups_of(key)
                    .map(|(name, g)| {
                        Reply::Map(vec![
                            pair("name", Reply::bulk(name)),
                            pair("consumers", Reply::Int(g.consumers.len() as i64)),
                            pair("pending", Reply::Int(g.pel.len() as i64)),
                            pair("last-delivered-id", id_reply(g.last_id)),
                            pair(
                                "entries-read",
                                g.entries_read.map_or(Reply::Null, Reply::Int),
                            ),
                            pair("lag", lag(stream, g).map_or(Reply::Null, Reply::Int)),
                        ])
                    })
                    .collect(),
            )),
            _ => {
                let options = &argv[3..];
                let full = match options {
                    [] => None,
                    [full] if word(full, "full") => Some(FULL_COUNT_DEFAULT),
                    [full, count, n] if word(full, "full") && word(count, "count") => {
                        let n = int(n).ok_or(NOT_AN_INTEGER)?;
                        Some(if n < 0 {
                            FULL_COUNT_DEFAULT
                        } else {
                            n as usize
                        })
                    }
                    _ => {
                        return Err(format!(
                            "ERR unknown subcommand or wrong number of arguments for '{typed}'. Try XINFO HELP."
                        ));
                    }
                };
                Ok(self.stream_info(key, stream, full))
            }
        }
    }

    /// XINFO STREAM's reply, summary (`full` = `None`) or FULL with a count (0 = all).
    fn stream_info(&self, key: &[u8], stream: &ModelStream, full: Option<usize>) -> Reply {
        let nodes = stream.nodes.len() as i64;
        let mut fields = vec![
            pair("length", Reply::Int(stream.length as i64)),
            pair("radix-tree-keys", Reply::Int(nodes)),
            // The engine's documented estimate of Redis's rax internals.
            pair(
                "radix-tree-nodes",
                Reply::Int(if nodes == 0 { 1 } else { 4 * nodes - 2 }),
            ),
            pair("last-generated-id", id_reply(stream.last_id)),
            pair(
                "max-deleted-entry-id",
                id_reply(stream.max_deleted_entry_id),
            ),
            pair("entries-added", Reply::Int(stream.entries_added as i64)),
            pair("recorded-first-entry-id", id_reply(stream.first_id)),
            // The model streams never use IDMP: the defaults and zero counters.
            pair("idmp-duration", Reply::Int(100)),
            pair("idmp-maxsize", Reply::Int(100)),
            pair("pids-tracked", Reply::Int(0)),
            pair("iids-tracked", Reply::Int(0)),
            pair("iids-added", Reply::Int(0)),
            pair("iids-duplicates", Reply::Int(0)),
        ];
        let Some(count) = full else {
            fields.push(pair(
                "groups",
                Reply::Int(self.groups_of(key).count() as i64),
            ));
            fields.push(pair(
                "first-entry",
                stream.live().next().map_or(Reply::Null, entry_reply),
            ));
            fields.push(pair(
                "last-entry",
                stream.live().next_back().map_or(Reply::Null, entry_reply),
            ));
            return Reply::Map(fields);
        };
        let limit = if count == 0 { usize::MAX } else { count };
        fields.push(pair(
            "entries",
            Reply::Array(stream.live().take(limit).map(entry_reply).collect()),
        ));
        let groups = self
            .groups_of(key)
            .map(|(name, g)| {
                let pending = g
                    .pel
                    .iter()
                    .take(limit)
                    .map(|(id, n)| {
                        Reply::Array(vec![
                            id_reply(*id),
                            Reply::bulk(&n.owner),
                            Reply::Int(n.delivery_time as i64),
                            Reply::Int(n.delivery_count as i64),
                        ])
                    })
                    .collect();
                let consumers = g
                    .consumers
                    .iter()
                    .map(|(cname, c)| {
                        let pending = g
                            .pending_of(cname)
                            .take(limit)
                            .map(|id| {
                                let n = &g.pel[&id];
                                Reply::Array(vec![
                                    id_reply(id),
                                    Reply::Int(n.delivery_time as i64),
                                    Reply::Int(n.delivery_count as i64),
                                ])
                            })
                            .collect();
                        Reply::Map(vec![
                            pair("name", Reply::bulk(cname)),
                            pair("seen-time", Reply::Int(c.seen_time as i64)),
                            pair(
                                "active-time",
                                Reply::Int(c.active_time.map_or(-1, |t| t as i64)),
                            ),
                            pair("pel-count", Reply::Int(g.pending_of(cname).count() as i64)),
                            pair("pending", Reply::Array(pending)),
                        ])
                    })
                    .collect();
                Reply::Map(vec![
                    pair("name", Reply::bulk(name)),
                    pair("last-delivered-id", id_reply(g.last_id)),
                    pair(
                        "entries-read",
                        g.entries_read.map_or(Reply::Null, Reply::Int),
                    ),
                    pair("lag", lag(stream, g).map_or(Reply::Null, Reply::Int)),
                    pair("pel-count", Reply::Int(g.pel.len() as i64)),
                    pair("nacked-count", Reply::Int(g.zone.len() as i64)),
                    pair("pending", Reply::Array(pending)),
                    pair("consumers", Reply::Array(consumers)),
                ])
            })
            .collect();
        fields.push(pair("groups", Reply::Array(groups)));
        Reply::Map(fields)
    }
}

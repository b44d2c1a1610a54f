//! The model's XREAD, XREADGROUP (§4.2, §5.1), XACK (§4.3) and XPENDING (§4.4).

use super::model::{
    COUNT_MAX, GroupModel, NOT_AN_INTEGER, Res, SYNTAX, entry_reply, id, id_reply, int, live_entry,
    on_delivery, range_end, range_start, text, word,
};
use crate::id::StreamId;
use crate::reply::Reply;

/// Where one stream is read from.
#[derive(Debug, Clone, Copy)]
enum From {
    /// Entries (XREAD) or the consumer's pending ids (XREADGROUP) after this id.
    After(StreamId),
    /// XREADGROUP `>`.
    New,
}

impl GroupModel {
    /// `XREAD [COUNT n] [BLOCK ms] STREAMS key... id...` and
    /// `XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id...`. Options are
    /// read in order (the first bad one is the error); then, key by key, the type, the group
    /// and the id; then each stream is served. A command that would block replies as if it
    /// timed out, as `Keyspace::execute` does.
    pub(super) fn xread(&mut self, argv: &[Vec<u8>], now_ms: u64, grouped: bool) -> Res {
        let mut count = 0usize;
        let mut noack = false;
        let mut claim: Option<u64> = None;
        let mut group: Option<(&[u8], &[u8])> = None;
        let mut streams_at = None;
        let mut i = 1;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            let opt = &argv[i];
            if word(opt, "claim") && more > 0 {
                if !grouped {
                    return Err("ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.".into());
                }
                i += 1;
                let ms =
                    int(&argv[i]).ok_or("ERR min-idle-time is not an integer or out of range")?;
                if ms < 0 {
                    return Err("ERR min-idle-time must be a positive integer".into());
                }
                claim = Some(ms as u64);
            } else if word(opt, "block") && more > 0 {
                i += 1;
                let ms = int(&argv[i]).ok_or("ERR timeout is not an integer or out of range")?;
                if ms < 0 {
                    return Err("ERR timeout is negative".into());
                }
            } else if word(opt, "count") && more > 0 {
                i += 1;
                count = int(&argv[i]).ok_or(NOT_AN_INTEGER)?.max(0) as usize;
            } else if word(opt, "streams") && more > 0 {
                if (argv.len() - i - 1) % 2 != 0 {
                    return Err(if grouped {
                        "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified."
                    } else {
                        "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified."
                    }
                    .into());
                }
                streams_at = Some(i + 1);
                break;
            } else if word(opt, "group") && more >= 2 {
                if !grouped {
                    return Err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.".into());
                }
                group = Some((&argv[i + 1], &argv[i + 2]));
                i += 2;
            } else if word(opt, "noack") {
                if !grouped {
                    return Err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.".into());
                }
                noack = true;
            } else {
                return Err(SYNTAX.into());
            }
            i += 1;
        }
        let streams_at = streams_at.ok_or(SYNTAX)?;
        if grouped && group.is_none() {
            return Err("ERR Missing GROUP option for XREADGROUP".into());
        }
        let n = (argv.len() - streams_at) / 2;
        let keys = &argv[streams_at..streams_at + n];
        let mut froms = Vec::with_capacity(n);
        for (key, arg) in keys.iter().zip(&argv[streams_at + n..]) {
            let stream = self.stream(key)?;
            if let Some((g, _)) = group
                && (stream.is_none() || !self.groups_of(key).any(|(name, _)| name == g))
            {
                return Err(format!(
                    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                    text(key),
                    text(g)
                ));
            }
            let last_id = stream.map_or(StreamId::MIN, |s| s.last_id);
            let meaningless = |symbol: char| {
                format!(
                    "ERR The {symbol} ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The {symbol} ID would just return an empty result set."
                )
            };
            froms.push(match arg.as_slice() {
                b"$" if grouped => return Err(meaningless('$')),
                b"+" if grouped => return Err(meaningless('+')),
                b"$" => From::After(last_id),
                // Redis 8.8: just before the last live entry; nothing on an empty stream.
                b"+" => From::After(
                    stream
                        .and_then(|s| {
                            s.nodes
                                .iter()
                                .flatten()
                                .rev()
                                .find(|e| !e.deleted)
                                .and_then(|e| e.id.prev())
                        })
                        .unwrap_or(StreamId::MIN),
                ),
                b">" if grouped => From::New,
                b">" => return Err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.".into()),
                // Redis marks `>` internally with the largest id, so that id reads as `>`.
                arg => match id(arg, 0, true)? {
                    StreamId::MAX if grouped => From::New,
                    id => From::After(id),
                },
            });
        }
        let limit = if count == 0 { usize::MAX } else { count };
        let mut served = Vec::new();
        for (key, from) in keys.iter().zip(froms) {
            let entries = match group {
                Some((g, consumer)) => {
                    self.serve_group(key, g, consumer, from, limit, noack, &mut claim, now_ms)
                }
                None => self.serve_plain(key, from, limit),
            };
            if let Some(entries) = entries {
                served.push((Reply::bulk(key), Reply::Array(entries)));
            }
        }
        if served.is_empty() {
            Ok(Reply::NullArray)
        } else {
            Ok(Reply::StreamMap(served))
        }
    }

    fn serve_plain(&self, key: &[u8], from: From, limit: usize) -> Option<Vec<Reply>> {
        let From::After(after) = from else {
            unreachable!("XREAD has no `>`")
        };
        let stream = self.stream(key).ok()??;
        if stream.live().next_back().is_none_or(|e| e.id <= after) {
            return None;
        }
        Some(
            stream
                .live()
                .filter(|e| e.id > after)
                .take(limit)
                .map(entry_reply)
                .collect(),
        )
    }

    /// One stream of an XREADGROUP: the consumer is created and seen whether or not anything
    /// is served. With CLAIM (`docs/reference/streams-8.md` §2): a `>` stream is also served when
    /// its first pending entry that still exists is idle enough; idle entries are claimed first,
    /// walking the time order up to its tail as it was; a history read turns CLAIM off for this and
    /// later streams.
    #[allow(clippy::too_many_arguments)]
    fn serve_group(
        &mut self,
        key: &[u8],
        g: &[u8],
        consumer: &[u8],
        from: From,
        limit: usize,
        noack: bool,
        claim: &mut Option<u64>,
        now_ms: u64,
    ) -> Option<Vec<Reply>> {
        let Ok(Some(stream)) = self.stream(key) else {
            unreachable!("checked before serving")
        };
        let stream = stream.clone();
        let group = self.group_mut(key, g);
        let claimable = claim.is_some_and(|min| {
            group
                .time_order()
                .into_iter()
                .find(|id| live_entry(&stream, *id).is_some())
                .is_some_and(|id| now_ms.wrapping_sub(group.pel[&id].delivery_time) >= min)
        });
        let mut serve = match from {
            From::After(_) => true,
            From::New => stream
                .live()
                .next_back()
                .is_some_and(|e| e.id > group.last_id),
        };
        group.consumer_or_create(consumer, now_ms).seen_time = now_ms;
        let mut claimed_only = false;
        if matches!(from, From::After(_)) {
            *claim = None;
        } else if !serve && claimable {
            serve = true;
            claimed_only = true;
        }
        if !serve {
            return None;
        }
        let mut entries = Vec::new();
        if let (Some(min), From::New) = (*claim, from) {
            let order = group.time_order();
            let tail = order.last().copied();
            let mut cursor = order.first().copied();
            // At most one step per entry pending at the start (the engine's guard against
            // entries leapfrogging forever after the clock went back).
            let mut steps = order.len();
            while let Some(id) = cursor {
                if steps == 0 {
                    break;
                }
                steps -= 1;
                let now_order = group.time_order();
                let at = now_order.iter().position(|x| *x == id).unwrap_or(0);
                let next = now_order.get(at + 1).copied();
                let nack = &group.pel[&id];
                let idle = now_ms.wrapping_sub(nack.delivery_time);
                if idle < min {
                    break;
                }
                let count = nack.delivery_count;
                if let Some(e) = live_entry(&stream, id) {
                    let Reply::Array(mut parts) = entry_reply(e) else {
                        unreachable!("an entry is an array")
                    };
                    parts.push(Reply::Int(idle as i64));
                    parts.push(Reply::Int(count as i64));
                    entries.push(Reply::Array(parts));
                    group.put(id, consumer, now_ms, (count + 1).min(COUNT_MAX));
                    group.consumer_or_create(consumer, now_ms).active_time = Some(now_ms);
                    if entries.len() >= limit {
                        break;
                    }
                }
                cursor = if Some(id) == tail { None } else { next };
            }
            if claimed_only || entries.len() >= limit {
                return Some(entries);
            }
            let after = group.last_id;
            let rest = limit - entries.len();
            for e in stream.live().filter(|e| e.id > after).take(rest) {
                on_delivery(&stream, group, e.id);
                if !noack {
                    group.put(e.id, consumer, now_ms, 1);
                    group.consumer_or_create(consumer, now_ms).active_time = Some(now_ms);
                }
                let Reply::Array(mut parts) = entry_reply(e) else {
                    unreachable!("an entry is an array")
                };
                parts.push(Reply::Int(0));
                parts.push(Reply::Int(0));
                entries.push(Reply::Array(parts));
            }
            return Some(entries);
        }
        match from {
            From::After(after) => {
                let ids: Vec<StreamId> = group
                    .pending_of(consumer)
                    .filter(|id| *id > after)
                    .take(limit)
                    .collect();
                for id in ids {
                    match live_entry(&stream, id) {
                        Some(e) => {
                            let count = group.pel[&id].delivery_count;
                            group.retime(id, now_ms, (count + 1).min(COUNT_MAX));
                            entries.push(entry_reply(e));
                        }
                        None => entries.push(Reply::Array(vec![id_reply(id), Reply::NullArray])),
                    }
                }
            }
            From::New => {
                let after = group.last_id;
                for e in stream.live().filter(|e| e.id > after).take(limit) {
                    on_delivery(&stream, group, e.id);
                    if !noack {
                        group.put(e.id, consumer, now_ms, 1);
                        group.consumer_or_create(consumer, now_ms).active_time = Some(now_ms);
                    }
                    entries.push(entry_reply(e));
                }
            }
        }
        Some(entries)
    }

    /// `XACK key group id...`: 0 for a missing key or group before the ids are read; then
    /// every id is read before any is acknowledged.
    pub(super) fn xack(&mut self, argv: &[Vec<u8>]) -> Res {
        let key = &argv[1];
        if self.stream(key)?.is_none() || !self.groups_of(key).any(|(g, _)| *g == argv[2]) {
            return Ok(Reply::Int(0));
        }
        let ids = argv[3..]
            .iter()
            .map(|arg| id(arg, 0, true))
            .collect::<Result<Vec<_>, _>>()?;
        let group = self.group_mut(key, &argv[2]);
        let acked = ids.iter().filter(|id| group.unpend(**id).is_some()).count();
        Ok(Reply::Int(acked as i64))
    }

    /// `XPENDING key group [[IDLE min] start end count [consumer]]`: the range arguments
    /// (count, start, end) are read before the key.
    pub(super) fn xpending(&self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        let argc = argv.len();
        if argc != 3 && !(6..=9).contains(&argc) {
            return Err(SYNTAX.into());
        }
        let mut range = None;
        if argc >= 6 {
            let mut at = 3;
            let mut min_idle = 0;
            if word(&argv[3], "idle") {
                min_idle = int(&argv[4]).ok_or(NOT_AN_INTEGER)?;
                if argc < 8 {
                    return Err(SYNTAX.into());
                }
                at += 2;
            }
            let count = int(&argv[at + 2]).ok_or(NOT_AN_INTEGER)?.max(0) as usize;
            let start = range_start(&argv[at])?;
            let end = range_end(&argv[at + 1])?;
            range = Some((min_idle, start, end, count, argv.get(at + 3)));
        }
        let (key, g) = (&argv[1], &argv[2]);
        let no_group = || {
            format!(
                "NOGROUP No such key '{}' or consumer group '{}'",
                text(key),
                text(g)
            )
        };
        self.stream(key)?.ok_or_else(no_group)?;
        let group = self
            .groups_of(key)
            .find(|(name, _)| *name == g)
            .map(|(_, group)| group)
            .ok_or_else(no_group)?;
        let Some((min_idle, start, end, count, consumer)) = range else {
            let (Some(first), Some(last)) = (group.pel.keys().next(), group.pel.keys().last())
            else {
                return Ok(Reply::Array(vec![
                    Reply::Int(0),
                    Reply::Null,
                    Reply::Null,
                    Reply::NullArray,
                ]));
            };
            let consumers = group
                .consumers
                .keys()
                .map(|name| (name, group.pending_of(name).count()))
                .filter(|(_, n)| *n > 0)
                .map(|(name, n)| Reply::Array(vec![Reply::bulk(name), Reply::bulk(n.to_string())]))
                .collect();
            return Ok(Reply::Array(vec![
                Reply::Int(group.pel.len() as i64),
                id_reply(*first),
                id_reply(*last),
                Reply::Array(consumers),
            ]));
        };
        if consumer.is_some_and(|c| !group.consumers.contains_key(c)) {
            return Ok(Reply::Array(Vec::new()));
        }
        let rows = group
            .pel
            .range(start..)
            .take_while(|(id, _)| **id <= end)
            .filter(|(_, nack)| consumer.is_none_or(|c| nack.owner == *c))
            .filter_map(|(id, nack)| {
                if nack.owner.is_empty() {
                    // Unowned: idle -1, never filtered out by IDLE.
                    return Some(Reply::Array(vec![
                        id_reply(*id),
                        Reply::bulk(""),
                        Reply::Int(-1),
                        Reply::Int(nack.delivery_count as i64),
                    ]));
                }
                let idle = now_ms as i64 - nack.delivery_time as i64;
                (min_idle == 0 || idle >= min_idle).then(|| {
                    Reply::Array(vec![
                        id_reply(*id),
                        Reply::bulk(&nack.owner),
                        Reply::Int(idle.max(0)),
                        Reply::Int(nack.delivery_count as i64),
                    ])
                })
            })
            .take(count)
            .collect();
        Ok(Reply::Array(rows))
    }
}

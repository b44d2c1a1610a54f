//! The model's XCLAIM and XAUTOCLAIM (`docs/reference/streams.md` §4.5, §4.6).

use super::model::{
    COUNT_MAX, GroupModel, Res, SYNTAX, entry_reply, id, id_reply, int, live_entry, range_start,
    text, word,
};
use crate::id::StreamId;
use crate::reply::Reply;

/// XAUTOCLAIM's COUNT at most: Redis's `LONG_MAX / 16`.
const AUTOCLAIM_COUNT_MAX: i64 = i64::MAX / 16;
/// XAUTOCLAIM looks at no more than COUNT times this many PEL entries.
const AUTOCLAIM_ATTEMPTS_PER_COUNT: i64 = 10;

impl GroupModel {
    fn no_key_or_group(key: &[u8], group: &[u8]) -> String {
        format!(
            "NOGROUP No such key '{}' or consumer group '{}'",
            text(key),
            text(group)
        )
    }

    /// Whether `key` holds a stream with group `group` (WRONGTYPE first).
    fn has_group(&self, key: &[u8], group: &[u8]) -> Result<bool, String> {
        Ok(self.stream(key)?.is_some() && self.groups_of(key).any(|(g, _)| g == group))
    }

    /// `XCLAIM key group consumer min-idle id... [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE]
    /// [JUSTID] [LASTID id]`: the key and group first, then min-idle, the ids up to the first
    /// argument that is not one, and the options.
    pub(super) fn xclaim(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        let (key, g, consumer) = (&argv[1], &argv[2], &argv[3]);
        if !self.has_group(key, g)? {
            return Err(Self::no_key_or_group(key, g));
        }
        let min_idle = int(&argv[4])
            .ok_or("ERR Invalid min-idle-time argument for XCLAIM")?
            .max(0);
        let mut ids = Vec::new();
        let mut j = 5;
        while j < argv.len() {
            let Ok(id) = id(&argv[j], 0, true) else { break };
            ids.push(id);
            j += 1;
        }
        let now = now_ms as i64;
        // Redis's -1 means "not given", so an IDLE or TIME landing on -1 is "now" as well.
        let mut delivery_time = -1i64;
        let mut retry_count = -1i64;
        let (mut force, mut just_id) = (false, false);
        let mut last_id = StreamId::MIN;
        while j < argv.len() {
            let more = argv.len() - 1 - j;
            let opt = &argv[j];
            let value = |name: &str| {
                int(&argv[j + 1]).ok_or(format!("ERR Invalid {name} option argument for XCLAIM"))
            };
            if word(opt, "force") {
                force = true;
            } else if word(opt, "justid") {
                just_id = true;
            } else if word(opt, "idle") && more > 0 {
                delivery_time = now.wrapping_sub(value("IDLE")?);
                j += 1;
            } else if word(opt, "time") && more > 0 {
                delivery_time = value("TIME")?;
                j += 1;
            } else if word(opt, "retrycount") && more > 0 {
                retry_count = value("RETRYCOUNT")?;
                j += 1;
            } else if word(opt, "lastid") && more > 0 {
                last_id = id(&argv[j + 1], 0, true)?;
                j += 1;
            } else {
                return Err(format!("ERR Unrecognized XCLAIM option '{}'", text(opt)));
            }
            j += 1;
        }
        let delivery_time = if delivery_time < 0 || delivery_time > now {
            now_ms
        } else {
            delivery_time as u64
        };
        let stream = self.stream(key)?.expect("checked above").clone();
        let group = self.group_mut(key, g);
        if last_id > group.last_id {
            group.last_id = last_id;
        }
        group.consumer_or_create(consumer, now_ms).seen_time = now_ms;
        let mut claimed = Vec::new();
        for id in ids {
            let Some(entry) = live_entry(&stream, id) else {
                group.unpend(id);
                continue;
            };
            let (count, forced) = match group.pel.get(&id) {
                Some(nack) => (nack.delivery_count, false),
                // FORCE creates the NACK (count 1, no owner) and then claims it.
                None if force => (1, true),
                None => continue,
            };
            // An unowned (NACKed) entry is claimable whatever the minimum idle time.
            if !forced && min_idle > 0 && !group.pel[&id].owner.is_empty() {
                let idle = now - group.pel[&id].delivery_time as i64;
                if idle < min_idle {
                    continue;
                }
            }
            let delivery_count = if retry_count >= 0 {
                retry_count as u64
            } else if just_id {
                count
            } else {
                (count + 1).min(COUNT_MAX)
            };
            group.put(id, consumer, delivery_time, delivery_count);
            group.consumer_or_create(consumer, now_ms).active_time = Some(now_ms);
            claimed.push(if just_id {
                id_reply(id)
            } else {
                entry_reply(entry)
            });
        }
        Ok(Reply::Array(claimed))
    }

    /// `XAUTOCLAIM key group consumer min-idle start [COUNT n] [JUSTID]`: all arguments are
    /// read before the key. The scan looks at up to COUNT x 10 PEL entries and stops once
    /// COUNT entries were claimed or dropped as deleted.
    pub(super) fn xautoclaim(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        let (key, g, consumer) = (&argv[1], &argv[2], &argv[3]);
        let min_idle = int(&argv[4])
            .ok_or("ERR Invalid min-idle-time argument for XAUTOCLAIM")?
            .max(0);
        let start = range_start(&argv[5])?;
        let mut count = 100i64;
        let mut just_id = false;
        let mut j = 6;
        while j < argv.len() {
            let more = argv.len() - 1 - j;
            if word(&argv[j], "count") && more > 0 {
                count = int(&argv[j + 1])
                    .filter(|n| (1..=AUTOCLAIM_COUNT_MAX).contains(n))
                    .ok_or("ERR COUNT must be > 0")?;
                j += 1;
            } else if word(&argv[j], "justid") {
                just_id = true;
            } else {
                return Err(SYNTAX.into());
            }
            j += 1;
        }
        if !self.has_group(key, g)? {
            return Err(Self::no_key_or_group(key, g));
        }
        let stream = self.stream(key)?.expect("checked above").clone();
        let group = self.group_mut(key, g);
        group.consumer_or_create(consumer, now_ms).seen_time = now_ms;
        let mut attempts = count * AUTOCLAIM_ATTEMPTS_PER_COUNT;
        let mut claimed = Vec::new();
        let mut deleted = Vec::new();
        // The next PEL id to look at; `None` once past the end.
        let mut cursor = Some(start);
        while attempts > 0 && count > 0 {
            attempts -= 1;
            let Some(from) = cursor else { break };
            let Some((&id, nack)) = group.pel.range(from..).next() else {
                cursor = None;
                break;
            };
            cursor = id.next();
            let Some(entry) = live_entry(&stream, id) else {
                group.unpend(id);
                deleted.push(id_reply(id));
                count -= 1;
                continue;
            };
            if min_idle > 0
                && !nack.owner.is_empty()
                && (now_ms as i64 - nack.delivery_time as i64) < min_idle
            {
                continue;
            }
            let delivery_count = (nack.delivery_count + u64::from(!just_id)).min(COUNT_MAX);
            group.put(id, consumer, now_ms, delivery_count);
            group.consumer_or_create(consumer, now_ms).active_time = Some(now_ms);
            claimed.push(if just_id {
                id_reply(id)
            } else {
                entry_reply(entry)
            });
            count -= 1;
        }
        let next = cursor
            .and_then(|from| group.pel.range(from..).next().map(|(id, _)| *id))
            .unwrap_or(StreamId::MIN);
        Ok(Reply::Array(vec![
            id_reply(next),
            Reply::Array(claimed),
            Reply::Array(deleted),
        ]))
    }
}

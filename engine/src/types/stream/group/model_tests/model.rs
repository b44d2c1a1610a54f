//! The consumer-group model: groups as plain maps, read straight from
//! `docs/reference/streams.md` §4 and Redis's argument-parsing order, over the stream model.
//!
//! Streams (XADD, XDEL, XTRIM, XSETID, XLEN, XRANGE) are the stream model's business: this model
//! hands those commands to it and keeps, per stream key, its groups. A group is a cursor, an
//! entries-read counter (`None` = unknown), a PEL (`BTreeMap` id -> owner, delivery time,
//! delivery count) and its consumers (name -> seen time, active time). A consumer's own PEL is
//! not stored: it is the group PEL filtered by owner, which is the invariant the engine keeps
//! with two maps.
//!
//! Errors are the exact texts Redis sends, written out here rather than borrowed from the
//! engine's error enum. Numbers and ids are read in canonical decimal only, as in the stream
//! model. A command checks everything before it changes anything.

use std::collections::BTreeMap;

use super::stream_model::{Model as StreamModel, ModelEntry, ModelStream, ModelValue};
use crate::id::StreamId;
use crate::reply::Reply;

/// A reply, or the exact error text.
pub type Res = Result<Reply, String>;

pub const SYNTAX: &str = "ERR syntax error";
pub const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
pub const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// Longest id argument Redis reads (its parse buffer is 128 bytes with the NUL).
const ID_ARG_LEN_MAX: usize = 127;

/// One pending entry. An entry handed back with XNACK has no owner (empty) and time 0, and
/// is in its group's NACK zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nack {
    pub owner: Vec<u8>,
    pub delivery_time: u64,
    pub delivery_count: u64,
    /// When it was last placed (delivered, claimed, re-timed): equal delivery times keep this
    /// order in the time order.
    pub placed: u64,
}

/// The largest delivery count (LLONG_MAX).
pub const COUNT_MAX: u64 = i64::MAX as u64;

/// One consumer; its PEL is the group PEL's entries it owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumer {
    pub seen_time: u64,
    pub active_time: Option<u64>,
}

/// One consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub last_id: StreamId,
    pub entries_read: Option<i64>,
    pub pel: BTreeMap<StreamId, Nack>,
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
    /// The NACK zone: unowned ids, in the order they were NACKed.
    pub zone: Vec<StreamId>,
    /// The next placement number.
    pub placed: u64,
}

impl Group {
    fn new(last_id: StreamId, entries_read: Option<i64>) -> Group {
        Group {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: BTreeMap::new(),
            zone: Vec::new(),
            placed: 0,
        }
    }

    /// Makes `id` pending for `owner` with this time and count (out of the NACK zone).
    pub fn put(&mut self, id: StreamId, owner: &[u8], delivery_time: u64, delivery_count: u64) {
        self.zone.retain(|z| *z != id);
        self.placed += 1;
        self.pel.insert(
            id,
            Nack {
                owner: owner.to_vec(),
                delivery_time,
                delivery_count,
                placed: self.placed,
            },
        );
    }

    /// Re-times a pending `id` for its owner: `count` deliveries, now.
    pub fn retime(&mut self, id: StreamId, delivery_time: u64, delivery_count: u64) {
        if let Some(owner) = self.pel.get(&id).map(|n| n.owner.clone()) {
            self.put(id, &owner, delivery_time, delivery_count);
        }
    }

    /// Hands `id` back unowned, at the end of the NACK zone, with this count.
    pub fn nack(&mut self, id: StreamId, delivery_count: u64) {
        self.zone.retain(|z| *z != id);
        self.zone.push(id);
        self.placed += 1;
        self.pel.insert(
            id,
            Nack {
                owner: Vec::new(),
                delivery_time: 0,
                delivery_count,
                placed: self.placed,
            },
        );
    }

    /// Removes `id` from the PEL (and the zone).
    pub fn unpend(&mut self, id: StreamId) -> Option<Nack> {
        self.zone.retain(|z| *z != id);
        self.pel.remove(&id)
    }

    /// The pending ids in delivery-time order: the NACK zone, then owned entries by delivery
    /// time, equal times in placement order.
    pub fn time_order(&self) -> Vec<StreamId> {
        let mut owned: Vec<(u64, u64, StreamId)> = self
            .pel
            .iter()
            .filter(|(_, n)| !n.owner.is_empty())
            .map(|(id, n)| (n.delivery_time, n.placed, *id))
            .collect();
        owned.sort();
        self.zone
            .iter()
            .copied()
            .chain(owned.into_iter().map(|(_, _, id)| id))
            .collect()
    }

    /// The ids `consumer` holds, in order.
    pub fn pending_of<'a>(&'a self, consumer: &'a [u8]) -> impl Iterator<Item = StreamId> + 'a {
        self.pel
            .iter()
            .filter(move |(_, nack)| nack.owner == consumer)
            .map(|(id, _)| *id)
    }

    /// The consumer, created (seen now, never active) if missing; an existing one is not
    /// touched.
    pub fn consumer_or_create(&mut self, name: &[u8], now_ms: u64) -> &mut Consumer {
        self.consumers.entry(name.to_vec()).or_insert(Consumer {
            seen_time: now_ms,
            active_time: None,
        })
    }
}

/// Streams (the stream model) and the groups of each stream key.
#[derive(Debug, Clone)]
pub struct GroupModel {
    pub streams: StreamModel,
    pub groups: BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, Group>>,
}

/// What the harness compares after every command, for each stream key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyState {
    pub length: u64,
    pub last_id: StreamId,
    pub first_id: StreamId,
    pub max_deleted: StreamId,
    pub entries_added: u64,
    pub live: Vec<StreamId>,
    pub groups: BTreeMap<Vec<u8>, GroupState>,
}

/// A group as the harness compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupState {
    pub last_id: StreamId,
    pub entries_read: Option<i64>,
    pub pel: Vec<PendingRow>,
    /// The pending ids in delivery-time order (the NACK zone first).
    pub time_order: Vec<StreamId>,
    pub consumers: Vec<ConsumerRow>,
}

/// A pending entry as the harness compares it: id, owner, delivery time, delivery count.
pub type PendingRow = (StreamId, Vec<u8>, u64, u64);
/// A consumer as the harness compares it: name, seen time, active time, pending ids.
pub type ConsumerRow = (Vec<u8>, u64, Option<u64>, Vec<StreamId>);

impl GroupModel {
    pub fn new(node_entries_max: u64) -> GroupModel {
        GroupModel {
            streams: StreamModel::new(node_entries_max),
            groups: BTreeMap::new(),
        }
    }

    /// The stream under `key`: `Ok(None)` if missing, WRONGTYPE if another type.
    pub fn stream(&self, key: &[u8]) -> Result<Option<&ModelStream>, String> {
        match self.streams.values.get(key) {
            Some(ModelValue::Other) => Err(WRONGTYPE.into()),
            _ => Ok(self.streams.stream(key)),
        }
    }

    /// The groups of a stream key (empty for a key without groups).
    pub fn groups_of(&self, key: &[u8]) -> impl Iterator<Item = (&Vec<u8>, &Group)> {
        self.groups.get(key).into_iter().flatten()
    }

    /// Removes a key (DEL): its stream and its groups.
    pub fn remove(&mut self, key: &[u8]) {
        self.streams.values.remove(key);
        self.groups.remove(key);
    }

    /// Runs one command at time `now_ms`.
    pub fn execute(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        if matches!(name.as_str(), "xadd" | "xtrim")
            && let Some(res) = self.trim_command(argv, now_ms)
        {
            return res;
        }
        if matches!(
            name.as_str(),
            "xadd" | "xdel" | "xtrim" | "xsetid" | "xlen" | "xrange" | "xrevrange"
        ) {
            return self
                .streams
                .execute(argv, now_ms)
                .map_err(|e| e.to_string());
        }
        let arity: i64 = match name.as_str() {
            "xgroup" | "xinfo" => -2,
            "xread" | "xack" => -4,
            "xreadgroup" => -7,
            "xpending" => -3,
            "xclaim" | "xautoclaim" => -6,
            "xnack" => -7,
            "xdelex" => -5,
            "xackdel" => -6,
            _ => panic!("the model has no command {name}"),
        };
        let argc = argv.len() as i64;
        if (arity > 0 && argc != arity) || argc < -arity {
            return Err(format!(
                "ERR wrong number of arguments for '{name}' command"
            ));
        }
        match name.as_str() {
            "xgroup" => self.xgroup(argv, now_ms),
            "xinfo" => self.xinfo(argv, now_ms),
            "xread" => self.xread(argv, now_ms, false),
            "xreadgroup" => self.xread(argv, now_ms, true),
            "xack" => self.xack(argv),
            "xpending" => self.xpending(argv, now_ms),
            "xclaim" => self.xclaim(argv, now_ms),
            "xnack" => self.xnack(argv),
            "xdelex" => self.xdelex(argv, now_ms),
            "xackdel" => self.xackdel(argv, now_ms),
            _ => self.xautoclaim(argv, now_ms),
        }
    }

    /// Every stream key as the harness compares it.
    pub fn state(&self) -> BTreeMap<Vec<u8>, KeyState> {
        self.streams
            .values
            .iter()
            .filter_map(|(key, value)| {
                let ModelValue::Stream(s) = value else {
                    return None;
                };
                let groups = self
                    .groups_of(key)
                    .map(|(name, g)| {
                        let state = GroupState {
                            last_id: g.last_id,
                            entries_read: g.entries_read,
                            pel: g
                                .pel
                                .iter()
                                .map(|(id, n)| {
                                    (*id, n.owner.clone(), n.delivery_time, n.delivery_count)
                                })
                                .collect(),
                            time_order: g.time_order(),
                            consumers: g
                                .consumers
                                .iter()
                                .map(|(c, consumer)| {
                                    (
                                        c.clone(),
                                        consumer.seen_time,
                                        consumer.active_time,
                                        g.pending_of(c).collect(),
                                    )
                                })
                                .collect(),
                        };
                        (name.clone(), state)
                    })
                    .collect();
                let state = KeyState {
                    length: s.length,
                    last_id: s.last_id,
                    first_id: s.first_id,
                    max_deleted: s.max_deleted_entry_id,
                    entries_added: s.entries_added,
                    live: s.live().map(|e| e.id).collect(),
                    groups,
                };
                Some((key.clone(), state))
            })
            .collect()
    }

    /// `XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER ...` (§4.1): CREATE's and
    /// SETID's options first, then the key, then the group, then the subcommand's own checks.
    fn xgroup(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        const SUBCOMMANDS: [(&str, i64); 6] = [
            ("create", -5),
            ("setid", -5),
            ("destroy", 4),
            ("createconsumer", 5),
            ("delconsumer", 5),
            ("help", 2),
        ];
        let typed = text(&argv[1]);
        let Some(&(sub, arity)) = SUBCOMMANDS.iter().find(|(s, _)| word(&argv[1], s)) else {
            return Err(format!(
                "ERR unknown subcommand '{typed}'. Try XGROUP HELP."
            ));
        };
        let argc = argv.len() as i64;
        if (arity > 0 && argc != arity) || argc < -arity {
            return Err(format!(
                "ERR wrong number of arguments for 'xgroup|{sub}' command"
            ));
        }
        assert_ne!(sub, "help", "the generator does not send XGROUP HELP");
        let syntax = || {
            format!(
                "ERR unknown subcommand or wrong number of arguments for '{typed}'. Try XGROUP HELP."
            )
        };
        let mut mkstream = false;
        let mut entries_read = None;
        let mut i = 5;
        while i < argv.len() {
            if sub == "create" && word(&argv[i], "mkstream") {
                mkstream = true;
                i += 1;
            } else if matches!(sub, "create" | "setid")
                && word(&argv[i], "entriesread")
                && i + 1 < argv.len()
            {
                entries_read = parse_entries_read(&argv[i + 1])?;
                i += 2;
            } else {
                return Err(syntax());
            }
        }
        let (key, name) = (&argv[2], &argv[3]);
        let stream = self.stream(key)?;
        let exists = stream.is_some();
        let has_group = self.groups_of(key).any(|(g, _)| g == name);
        if !mkstream {
            if !exists {
                return Err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.".into());
            }
            if !has_group && matches!(sub, "setid" | "createconsumer" | "delconsumer") {
                return Err(format!(
                    "NOGROUP No such consumer group '{}' for key name '{}'",
                    text(name),
                    text(key)
                ));
            }
        }
        let stream_last_id = stream.map_or(StreamId::MIN, |s| s.last_id);
        // Redis 8.2.2+: ENTRIESREAD above entries-added is capped to entries-added.
        let added = stream.map_or(0, |s| s.entries_added) as i64;
        let entries_read = entries_read.map(|n| n.min(added));
        match sub {
            "create" if argc <= 8 => {
                let id = match argv[4].as_slice() {
                    b"$" => stream_last_id,
                    arg => id(arg, 0, true)?,
                };
                if !exists {
                    self.streams
                        .values
                        .insert(key.clone(), ModelValue::Stream(ModelStream::default()));
                }
                if has_group {
                    return Err("BUSYGROUP Consumer Group name already exists".into());
                }
                self.groups
                    .entry(key.clone())
                    .or_default()
                    .insert(name.clone(), Group::new(id, entries_read));
                Ok(Reply::Status("OK"))
            }
            "setid" if argc == 5 || argc == 7 => {
                let id = match argv[4].as_slice() {
                    b"$" => stream_last_id,
                    arg => id(arg, 0, false)?,
                };
                let group = self.group_mut(key, name);
                group.last_id = id;
                group.entries_read = entries_read;
                Ok(Reply::Status("OK"))
            }
            "destroy" => {
                let removed = self
                    .groups
                    .get_mut(key)
                    .and_then(|groups| groups.remove(name));
                Ok(Reply::Int(i64::from(removed.is_some())))
            }
            "createconsumer" => {
                let group = self.group_mut(key, name);
                let created = !group.consumers.contains_key(&argv[4]);
                group.consumer_or_create(&argv[4], now_ms);
                Ok(Reply::Int(i64::from(created)))
            }
            "delconsumer" => {
                let group = self.group_mut(key, name);
                if group.consumers.remove(&argv[4]).is_none() {
                    return Ok(Reply::Int(0));
                }
                let before = group.pel.len();
                // Unowned (NACKed) entries are nobody's and stay.
                group.pel.retain(|_, nack| nack.owner != argv[4]);
                Ok(Reply::Int((before - group.pel.len()) as i64))
            }
            _ => Err(syntax()),
        }
    }

    /// A group known to exist.
    pub fn group_mut(&mut self, key: &[u8], name: &[u8]) -> &mut Group {
        self.groups
            .get_mut(key)
            .and_then(|groups| groups.get_mut(name))
            .expect("the caller checked the group exists")
    }
}

/// ENTRIESREAD's value: -1 is "unknown", other negatives are refused.
fn parse_entries_read(arg: &[u8]) -> Result<Option<i64>, String> {
    match int(arg).ok_or(NOT_AN_INTEGER)? {
        -1 => Ok(None),
        n if n < 0 => Err("ERR value for ENTRIESREAD must be positive or -1".into()),
        n => Ok(Some(n)),
    }
}

// ---------------------------------------------------------------------------------------------
// §4.7: tombstones, the entries-read estimate, delivery bookkeeping and lag.

/// "Has tombstones in range [a, b]", decided from max-deleted alone.
fn has_tombstones(s: &ModelStream, a: StreamId, b: StreamId) -> bool {
    s.length > 0
        && !s.max_deleted_entry_id.is_zero()
        && a <= s.max_deleted_entry_id
        && s.max_deleted_entry_id <= b
}

/// The counter an entry with id `x` would have, `None` when it cannot be known.
fn estimate(s: &ModelStream, x: StreamId) -> Option<i64> {
    let added = s.entries_added as i64;
    if s.entries_added == 0 {
        return Some(0);
    }
    if s.length == 0 && x <= s.last_id {
        return Some(added);
    }
    if !x.is_zero() && x < s.max_deleted_entry_id {
        return None;
    }
    if x == s.last_id {
        return Some(added);
    }
    if x > s.last_id {
        return None;
    }
    if s.max_deleted_entry_id.is_zero() || s.max_deleted_entry_id < s.first_id {
        if x < s.first_id {
            return Some(added - s.length as i64);
        }
        if x == s.first_id {
            return Some(added - s.length as i64 + 1);
        }
    }
    None
}

/// A delivery of `id` with `>`: the counter and then the cursor. As §4.7 words it, plus what
/// Redis 8's `streamReplyWithRange` also asks (and the reference does not say): that the
/// cursor be at or past `first_id` before it counts on (Redis 8.8 differs otherwise after a
/// trim past the cursor).
pub fn on_delivery(s: &ModelStream, g: &mut Group, id: StreamId) {
    if id <= g.last_id {
        return;
    }
    match g.entries_read {
        Some(read) if g.last_id >= s.first_id && !has_tombstones(s, g.last_id, StreamId::MAX) => {
            g.entries_read = Some(read + 1);
        }
        _ if s.entries_added > 0 => g.entries_read = estimate(s, id),
        _ => {}
    }
    g.last_id = id;
}

/// The group's lag, `None` when unknown.
pub fn lag(s: &ModelStream, g: &Group) -> Option<i64> {
    let added = s.entries_added as i64;
    if s.entries_added == 0 || s.length == 0 {
        return Some(0);
    }
    if g.last_id < s.first_id && s.max_deleted_entry_id < s.first_id {
        return Some(s.length as i64);
    }
    if let Some(read) = g.entries_read
        && !has_tombstones(s, g.last_id, StreamId::MAX)
    {
        return Some(added - read);
    }
    estimate(s, g.last_id).map(|read| added - read)
}

// ---------------------------------------------------------------------------------------------
// Replies and argument readers.

/// The live entry `id`, if any.
pub fn live_entry(s: &ModelStream, id: StreamId) -> Option<&ModelEntry> {
    s.live().find(|e| e.id == id)
}

pub fn id_reply(id: StreamId) -> Reply {
    Reply::bulk(format!("{}-{}", id.ms, id.seq))
}

pub fn entry_reply(e: &ModelEntry) -> Reply {
    let fields = e
        .fields
        .iter()
        .flat_map(|(f, v)| [Reply::bulk(f), Reply::bulk(v)])
        .collect();
    Reply::Array(vec![id_reply(e.id), Reply::Array(fields)])
}

/// An argument as error messages show it.
pub fn text(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

pub fn word(arg: &[u8], w: &str) -> bool {
    arg.eq_ignore_ascii_case(w.as_bytes())
}

/// An integer argument in canonical decimal.
pub fn int(arg: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(arg).ok()?;
    s.parse::<i64>().ok().filter(|n| n.to_string() == s)
}

fn id_number(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n.to_string() == s => Ok(n),
        _ => Err(INVALID_ID.into()),
    }
}

/// `<ms>[-<seq>]`, and `-`/`+` unless `strict`.
pub fn id(arg: &[u8], missing_seq: u64, strict: bool) -> Result<StreamId, String> {
    if arg.len() > ID_ARG_LEN_MAX {
        return Err(INVALID_ID.into());
    }
    match arg {
        b"-" if !strict => return Ok(StreamId::MIN),
        b"+" if !strict => return Ok(StreamId::MAX),
        _ => {}
    }
    let s = std::str::from_utf8(arg).map_err(|_| INVALID_ID.to_string())?;
    Ok(match s.split_once('-') {
        None => StreamId::new(id_number(s)?, missing_seq),
        Some((ms, seq)) => StreamId::new(id_number(ms)?, id_number(seq)?),
    })
}

/// A range bound: `(id` is exclusive and strict; anything else is lenient.
pub fn interval(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), String> {
    match arg {
        [b'(', rest @ ..] if !rest.is_empty() => Ok((id(rest, missing_seq, true)?, true)),
        _ => Ok((id(arg, missing_seq, false)?, false)),
    }
}

/// A range start: an exclusive one is the next id.
pub fn range_start(arg: &[u8]) -> Result<StreamId, String> {
    match interval(arg, 0)? {
        (id, false) => Ok(id),
        (id, true) => id
            .next()
            .ok_or_else(|| "ERR invalid start ID for the interval".to_string()),
    }
}

/// A range end: an exclusive one is the previous id.
pub fn range_end(arg: &[u8]) -> Result<StreamId, String> {
    match interval(arg, u64::MAX)? {
        (id, false) => Ok(id),
        (id, true) => id
            .prev()
            .ok_or_else(|| "ERR invalid end ID for the interval".to_string()),
    }
}

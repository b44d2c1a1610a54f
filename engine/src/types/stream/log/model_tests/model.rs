//! The model: Redis's stream commands written the most obvious way, with no encoding and no
//! index, read straight from `docs/reference/streams.md` and Redis's argument-parsing order.
//!
//! A stream is a `Vec` of nodes, oldest first, each a `Vec` of entries with a deleted flag.
//! Nodes split by count only (§1.3 with `stream-node-max-bytes 0`), trimming walks the nodes
//! from the head (§2.2), the bookkeeping follows the §2.4 table and ids follow §3. Numbers are
//! read in canonical decimal only: the generator never emits the quirky forms C's `strtoull`
//! also accepts (`+5`, ` 7`, `018`), which `id.rs` unit-tests instead.
//!
//! A command checks everything before it changes anything, so an error changes nothing.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::id::StreamId;
use crate::reply::Reply;

/// Longest id argument Redis reads.
const ID_ARG_LEN_MAX: usize = 127;
/// `~` trimming's LIMIT when none is given is `100 * stream-node-max-entries`...
const APPROX_LIMIT_PER_NODE_ENTRY: u64 = 100;
/// ...or this when that is 0...
const APPROX_LIMIT_FALLBACK: u64 = 10_000;
/// ...and never more than this.
const APPROX_LIMIT_CEILING: u64 = 1_000_000;

/// One entry, live or a tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEntry {
    pub id: StreamId,
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    pub deleted: bool,
}

/// One stream: its nodes and Redis's bookkeeping fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelStream {
    pub nodes: Vec<Vec<ModelEntry>>,
    pub length: u64,
    pub last_id: StreamId,
    pub first_id: StreamId,
    pub max_deleted_entry_id: StreamId,
    pub entries_added: u64,
}

/// What a key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelValue {
    Stream(ModelStream),
    /// Any other type (a string key, for WRONGTYPE).
    Other,
}

/// The keyspace and the one setting that shapes nodes.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub values: BTreeMap<Vec<u8>, ModelValue>,
    pub node_entries_max: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    MaxLen(u64),
    MinId(StreamId),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddId {
    Auto,
    AutoSeq(u64),
    Explicit(StreamId),
}

/// What XADD's and XTRIM's options say.
#[derive(Debug, Default)]
struct TrimOptions {
    strategy: Option<Strategy>,
    approx: bool,
    /// The limit in force, 0 = none.
    limit: u64,
    no_mkstream: bool,
    /// XADD's id and its position; the position is `argv.len()` when there is none.
    id: Option<AddId>,
    id_pos: usize,
}

impl Model {
    pub fn new(node_entries_max: u64) -> Model {
        Model {
            values: BTreeMap::new(),
            node_entries_max,
        }
    }

    /// The stream under `key`, if it holds one.
    pub fn stream(&self, key: &[u8]) -> Option<&ModelStream> {
        match self.values.get(key) {
            Some(ModelValue::Stream(s)) => Some(s),
            _ => None,
        }
    }

    /// Runs one command at time `now_ms`.
    pub fn execute(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply> {
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        let arity: i64 = match name.as_str() {
            "xadd" => -5,
            "xrange" | "xrevrange" | "xtrim" => -4,
            "xdel" | "xsetid" => -3,
            "xlen" => 2,
            _ => panic!("the model has no command {name}"),
        };
        let argc = argv.len() as i64;
        if (arity > 0 && argc != arity) || argc < -arity {
            return Err(Error::WrongArity(name));
        }
        match name.as_str() {
            "xadd" => self.xadd(argv, now_ms),
            "xrange" => self.xrange(argv, false),
            "xrevrange" => self.xrange(argv, true),
            "xtrim" => self.xtrim(argv),
            "xdel" => self.xdel(argv),
            "xsetid" => self.xsetid(argv),
            _ => self.xlen(argv),
        }
    }

    fn lookup(&self, key: &[u8]) -> Result<Option<&ModelStream>> {
        match self.values.get(key) {
            None => Ok(None),
            Some(ModelValue::Stream(s)) => Ok(Some(s)),
            Some(ModelValue::Other) => Err(Error::WrongType),
        }
    }

    fn lookup_mut(&mut self, key: &[u8]) -> Result<Option<&mut ModelStream>> {
        match self.values.get_mut(key) {
            None => Ok(None),
            Some(ModelValue::Stream(s)) => Ok(Some(s)),
            Some(ModelValue::Other) => Err(Error::WrongType),
        }
    }

    fn xadd(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Result<Reply> {
        let opts = self.parse_trim_options(argv, true)?;
        let field_pos = opts.id_pos + 1;
        let field_args = argv.len() as i64 - field_pos as i64;
        if field_args < 2 || field_args % 2 == 1 {
            return Err(Error::WrongArity("xadd".into()));
        }
        let id_arg = opts.id.expect("fields follow an id");
        if id_arg == AddId::Explicit(StreamId::MIN) {
            return Err(Error::XaddIdZero);
        }
        let key = &argv[1];
        let mut stream = match self.lookup(key)? {
            Some(s) => s.clone(),
            None if opts.no_mkstream => return Ok(Reply::Null),
            None => ModelStream::default(),
        };
        let last = stream.last_id;
        if last == StreamId::MAX {
            return Err(Error::StreamExhausted);
        }
        let id = match id_arg {
            AddId::Auto if now_ms > last.ms => StreamId::new(now_ms, 0),
            AddId::Auto => StreamId::from_u128(last.as_u128() + 1),
            AddId::AutoSeq(ms) if ms == last.ms => {
                if last.seq == u64::MAX {
                    return Err(Error::XaddIdTooSmall);
                }
                StreamId::new(ms, last.seq + 1)
            }
            AddId::AutoSeq(ms) => StreamId::new(ms, 0),
            AddId::Explicit(id) => id,
        };
        if id <= last {
            return Err(Error::XaddIdTooSmall);
        }
        let fields = argv[field_pos..]
            .chunks(2)
            .map(|pair| (pair[0].clone(), pair[1].clone()))
            .collect();
        stream.append(id, fields, self.node_entries_max);
        if let Some(strategy) = opts.strategy {
            stream.trim(strategy, opts.approx, opts.limit);
        }
        self.values.insert(key.clone(), ModelValue::Stream(stream));
        Ok(Reply::id(id))
    }

    fn xtrim(&mut self, argv: &[Vec<u8>]) -> Result<Reply> {
        let opts = self.parse_trim_options(argv, false)?;
        let strategy = opts.strategy.expect("XTRIM parsing demands a strategy");
        let removed = match self.lookup_mut(&argv[1])? {
            Some(stream) => stream.trim(strategy, opts.approx, opts.limit),
            None => 0,
        };
        Ok(Reply::Int(removed as i64))
    }

    /// `[NOMKSTREAM] [MAXLEN|MINID [=|~] threshold] [LIMIT n]` then, for XADD, the id:
    /// Redis's loop, check for check.
    fn parse_trim_options(&self, argv: &[Vec<u8>], xadd: bool) -> Result<TrimOptions> {
        let mut o = TrimOptions::default();
        let mut limit_given = false;
        let mut i = 2;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            let opt = &argv[i];
            if xadd && opt == b"*" {
                o.id = Some(AddId::Auto);
                break;
            } else if (word(opt, "maxlen") || word(opt, "minid")) && more > 0 {
                if o.strategy.is_some() {
                    return Err(Error::MaxlenAndMinid);
                }
                o.approx = false;
                let next = &argv[i + 1];
                if more >= 2 && next == b"~" {
                    o.approx = true;
                    i += 1;
                } else if more >= 2 && next == b"=" {
                    i += 1;
                }
                let threshold = &argv[i + 1];
                o.strategy = Some(if word(opt, "maxlen") {
                    let n = int(threshold)?;
                    if n < 0 {
                        return Err(Error::MaxlenNegative);
                    }
                    Strategy::MaxLen(n as u64)
                } else {
                    Strategy::MinId(id(threshold, 0, true)?)
                });
                i += 1;
            } else if word(opt, "limit") && more > 0 {
                let n = int(&argv[i + 1])?;
                if n < 0 {
                    return Err(Error::LimitNegative);
                }
                o.limit = n as u64;
                limit_given = true;
                i += 1;
            } else if xadd && word(opt, "nomkstream") {
                o.no_mkstream = true;
            } else if xadd {
                o.id = Some(add_id(opt)?);
                break;
            } else {
                return Err(Error::Syntax);
            }
            i += 1;
        }
        o.id_pos = i;
        if o.limit != 0 && o.strategy.is_none() {
            return Err(Error::LimitWithoutStrategy);
        }
        if !xadd && o.strategy.is_none() {
            return Err(Error::XtrimWithoutStrategy);
        }
        if limit_given && !o.approx {
            return Err(Error::LimitWithoutApprox);
        }
        if !limit_given && o.approx {
            o.limit = match APPROX_LIMIT_PER_NODE_ENTRY * self.node_entries_max {
                0 => APPROX_LIMIT_FALLBACK,
                n => n.min(APPROX_LIMIT_CEILING),
            };
        }
        Ok(o)
    }

    fn xdel(&mut self, argv: &[Vec<u8>]) -> Result<Reply> {
        let Some(stream) = self.lookup_mut(&argv[1])? else {
            return Ok(Reply::Int(0));
        };
        let ids = argv[2..]
            .iter()
            .map(|arg| id(arg, 0, true))
            .collect::<Result<Vec<_>>>()?;
        let mut deleted = 0;
        for id in ids {
            if stream.delete(id) {
                stream.max_deleted_entry_id = stream.max_deleted_entry_id.max(id);
                deleted += 1;
            }
        }
        if deleted > 0 {
            stream.first_id = stream.first_live_id();
        }
        Ok(Reply::Int(deleted))
    }

    fn xsetid(&mut self, argv: &[Vec<u8>]) -> Result<Reply> {
        let last_id = id(&argv[2], 0, true)?;
        let mut entries_added: Option<u64> = None;
        let mut max_deleted = StreamId::MIN;
        let mut i = 3;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            if word(&argv[i], "entriesadded") && more > 0 {
                let n = int(&argv[i + 1])?;
                if n < 0 {
                    return Err(Error::EntriesAddedNegative);
                }
                entries_added = Some(n as u64);
            } else if word(&argv[i], "maxdeletedid") && more > 0 {
                max_deleted = id(&argv[i + 1], 0, true)?;
                if last_id < max_deleted {
                    return Err(Error::XsetidBelowGivenMaxDeleted);
                }
            } else {
                return Err(Error::Syntax);
            }
            i += 2;
        }
        let stream = self.lookup_mut(&argv[1])?.ok_or(Error::NoSuchKey)?;
        if last_id < stream.max_deleted_entry_id {
            return Err(Error::XsetidBelowMaxDeleted);
        }
        if stream.length > 0 {
            let top = stream.live().last().map(|e| e.id).expect("length > 0");
            if last_id < top {
                return Err(Error::XsetidBelowTop);
            }
            if entries_added.is_some_and(|n| n < stream.length) {
                return Err(Error::XsetidEntriesAddedBelowLength);
            }
        }
        stream.last_id = last_id;
        if let Some(n) = entries_added {
            stream.entries_added = n;
        }
        if !max_deleted.is_zero() {
            stream.max_deleted_entry_id = max_deleted;
        }
        Ok(Reply::OK)
    }

    fn xrange(&self, argv: &[Vec<u8>], reverse: bool) -> Result<Reply> {
        let (start_arg, end_arg) = if reverse {
            (&argv[3], &argv[2])
        } else {
            (&argv[2], &argv[3])
        };
        let (mut start, exclusive) = interval(start_arg, 0)?;
        if exclusive {
            if start == StreamId::MAX {
                return Err(Error::InvalidStartInterval);
            }
            start = StreamId::from_u128(start.as_u128() + 1);
        }
        let (mut end, exclusive) = interval(end_arg, u64::MAX)?;
        if exclusive {
            if end == StreamId::MIN {
                return Err(Error::InvalidEndInterval);
            }
            end = StreamId::from_u128(end.as_u128() - 1);
        }
        let mut count: Option<usize> = None;
        let mut j = 4;
        while j < argv.len() {
            if word(&argv[j], "count") && j + 1 < argv.len() {
                count = Some(int(&argv[j + 1])?.max(0) as usize);
                j += 2;
            } else {
                return Err(Error::Syntax);
            }
        }
        let Some(stream) = self.lookup(&argv[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        if count == Some(0) {
            return Ok(Reply::NullArray);
        }
        let mut entries: Vec<&ModelEntry> = stream
            .live()
            .filter(|e| start <= e.id && e.id <= end)
            .collect();
        if reverse {
            entries.reverse();
        }
        entries.truncate(count.unwrap_or(usize::MAX));
        Ok(Reply::Array(entries.into_iter().map(entry_reply).collect()))
    }

    fn xlen(&self, argv: &[Vec<u8>]) -> Result<Reply> {
        let len = self.lookup(&argv[1])?.map_or(0, |s| s.length);
        Ok(Reply::Int(len as i64))
    }
}

impl ModelStream {
    /// Live entries in id order.
    pub fn live(&self) -> impl DoubleEndedIterator<Item = &ModelEntry> {
        self.nodes.iter().flatten().filter(|e| !e.deleted)
    }

    fn first_live_id(&self) -> StreamId {
        self.live().next().map_or(StreamId::MIN, |e| e.id)
    }

    /// Appends to the tail node unless it holds `entries_max` entries, tombstones included.
    ///
    /// One deliberate difference from Redis (documented in `Stream::append`): after XSETID
    /// lowered `last_id` on an emptied stream, a tail node of tombstones at or above the new id
    /// is dropped first, where Redis would append into it out of order.
    fn append(&mut self, id: StreamId, fields: Vec<(Vec<u8>, Vec<u8>)>, entries_max: u64) {
        // XSETID can leave tombstones above last_id at the end of the tail node: they go
        // (and the node with them if nothing else is left), as the engine does.
        if let Some(tail) = self.nodes.last_mut() {
            while tail.last().is_some_and(|e| e.deleted && e.id >= id) {
                tail.pop();
            }
            if tail.is_empty() {
                self.nodes.pop();
            }
        }
        let entry = ModelEntry {
            id,
            fields,
            deleted: false,
        };
        match self.nodes.last_mut() {
            Some(tail) if entries_max == 0 || (tail.len() as u64) < entries_max => tail.push(entry),
            _ => self.nodes.push(vec![entry]),
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
    }

    /// Tombstones the live entry `id`; a node left with no live entry goes.
    fn delete(&mut self, id: StreamId) -> bool {
        for n in 0..self.nodes.len() {
            let node = &mut self.nodes[n];
            if let Some(entry) = node.iter_mut().find(|e| e.id == id && !e.deleted) {
                entry.deleted = true;
                self.length -= 1;
                if node.iter().all(|e| e.deleted) {
                    self.nodes.remove(n);
                }
                return true;
            }
        }
        false
    }

    /// §2.2: whole nodes from the head while the strategy allows, then (exact only) entries
    /// of the first node that cannot go whole.
    fn trim(&mut self, strategy: Strategy, approx: bool, limit: u64) -> u64 {
        let mut removed = 0;
        while let Some(head) = self.nodes.first() {
            if let Strategy::MaxLen(maxlen) = strategy
                && self.length <= maxlen
            {
                break;
            }
            let live = head.iter().filter(|e| !e.deleted).count() as u64;
            if limit != 0 && removed + live > limit {
                break;
            }
            let whole = match strategy {
                Strategy::MaxLen(maxlen) => self.length - live >= maxlen,
                Strategy::MinId(min) => head.last().expect("nodes are never empty").id < min,
            };
            if whole {
                self.nodes.remove(0);
                self.length -= live;
                removed += live;
                continue;
            }
            if approx {
                break;
            }
            for entry in &mut self.nodes[0] {
                let stop = match strategy {
                    Strategy::MaxLen(maxlen) => self.length <= maxlen,
                    Strategy::MinId(min) => entry.id >= min,
                };
                if stop {
                    break;
                }
                if !entry.deleted {
                    entry.deleted = true;
                    self.length -= 1;
                    removed += 1;
                }
            }
            break;
        }
        if removed > 0 {
            self.first_id = self.first_live_id();
        }
        removed
    }
}

fn entry_reply(entry: &ModelEntry) -> Reply {
    let fields = entry
        .fields
        .iter()
        .flat_map(|(f, v)| [Reply::bulk(f), Reply::bulk(v)])
        .collect();
    Reply::Array(vec![Reply::id(entry.id), Reply::Array(fields)])
}

fn word(arg: &[u8], w: &str) -> bool {
    arg.eq_ignore_ascii_case(w.as_bytes())
}

/// An integer argument: canonical decimal `i64`.
fn int(arg: &[u8]) -> Result<i64> {
    let s = std::str::from_utf8(arg).map_err(|_| Error::NotAnInteger)?;
    match s.parse::<i64>() {
        Ok(n) if n.to_string() == s => Ok(n),
        _ => Err(Error::NotAnInteger),
    }
}

/// One part of an id: canonical decimal `u64`.
fn id_number(s: &str) -> Result<u64> {
    match s.parse::<u64>() {
        Ok(n) if n.to_string() == s => Ok(n),
        _ => Err(Error::InvalidStreamId),
    }
}

/// `<ms>[-<seq>|-*]`, or `-`/`+` when not strict. `Ok(Err(ms))` is `<ms>-*`.
fn id_or_seq_auto(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
) -> Result<std::result::Result<StreamId, u64>> {
    if arg.len() > ID_ARG_LEN_MAX {
        return Err(Error::InvalidStreamId);
    }
    if !strict && arg == b"-" {
        return Ok(Ok(StreamId::MIN));
    }
    if !strict && arg == b"+" {
        return Ok(Ok(StreamId::MAX));
    }
    let s = std::str::from_utf8(arg).map_err(|_| Error::InvalidStreamId)?;
    Ok(match s.split_once('-') {
        None => Ok(StreamId::new(id_number(s)?, missing_seq)),
        Some((ms, "*")) => Err(id_number(ms)?),
        Some((ms, seq)) => Ok(StreamId::new(id_number(ms)?, id_number(seq)?)),
    })
}

/// An id where `<ms>-*` is not allowed.
fn id(arg: &[u8], missing_seq: u64, strict: bool) -> Result<StreamId> {
    id_or_seq_auto(arg, missing_seq, strict)?.map_err(|_| Error::InvalidStreamId)
}

/// XADD's id: `*`, `<ms>-*` or a strict id.
fn add_id(arg: &[u8]) -> Result<AddId> {
    Ok(match id_or_seq_auto(arg, 0, true)? {
        Ok(id) => AddId::Explicit(id),
        Err(ms) => AddId::AutoSeq(ms),
    })
}

/// A range bound: `(id` is exclusive and strict, anything else is lenient.
fn interval(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool)> {
    match arg {
        [b'(', rest @ ..] if !rest.is_empty() => Ok((id(rest, missing_seq, true)?, true)),
        _ => Ok((id(arg, missing_seq, false)?, false)),
    }
}

//! The differential harness: every command runs on a real server and on the engine, and the two
//! RESP2 replies must be the same bytes.
//!
//! A [`Differ`] owns one [`Peer`] and one [`Keyspace`] and keeps the commands sent since the last
//! [`Differ::reset`], so a [`Mismatch`] shows how to reproduce it: the command sequence, the
//! server's reply and the engine's. Besides command replies it compares stream state the
//! commands do not show: `XINFO STREAM`'s bookkeeping against the engine's [`Stream`]
//! accessors, where `radix-tree-keys` against `node_count` proves node boundaries (the listpack
//! byte model) match the server's.
//!
//! A few commands are mirrored rather than executed, because the engine has no command for
//! them: `CONFIG SET stream-node-max-entries|stream-node-max-bytes` sets the engine's
//! [`Config`](echomq_engine::Config), and `SET key value` stores a string value (for WRONGTYPE
//! cases). For those the engine's reply is taken to be `+OK`.
//!
//! `XADD ... *` takes its id from the clock, which differs between the two sides: its reply is
//! compared by shape only (both an id), and the key's id fields are not compared afterwards.
//!
//! The engine reads a [`ManualClock`] set to the wall clock at each reset and never moved, so
//! its replies are deterministic; the time fields that still differ from the server's (idle
//! times, delivery, seen and active times) are normalized on both sides as
//! [`normalize`](super::normalize) documents.
//!
//! Consumer groups have state no reply shows in full either. After each command,
//! [`Differ::run_and_check`] compares, for every key the command names and every group the
//! engine has on it: `XINFO GROUPS` (cursor, entries-read, lag, counts), the XPENDING summary
//! and the whole PEL (`XPENDING key group - + n`), and on servers from 7.2 `XINFO CONSUMERS`.
//! These checks are not part of the reproduction shown in a mismatch report, as they change
//! nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use echomq_engine::{Keyspace, ManualClock, Stream, Value};

use super::normalize;
use super::peer::{Peer, PeerInfo, PeerKind};
use super::resp::{Resp, show_argv};

/// Commands shown in a mismatch report (the most recent ones).
const HISTORY_SHOWN_MAX: usize = 400;
/// Raw reply bytes shown in a mismatch report.
const RAW_SHOWN_MAX: usize = 600;
/// The COUNT of the XPENDING that lists a whole PEL in the state check.
const PEL_LISTED_MAX: &str = "1000000";

/// A real server and the engine, driven in lockstep.
#[derive(Debug)]
pub struct Differ {
    peer: Peer,
    engine: Keyspace,
    /// The engine's clock: the wall clock at the last reset.
    clock: Arc<ManualClock>,
    /// Commands since the last reset, in order.
    history: Vec<Vec<Vec<u8>>>,
    /// Keys named by a command since the last reset.
    touched: BTreeSet<Vec<u8>>,
    /// Keys that got an id from the clock: their ids differ between the sides.
    clock_keys: BTreeSet<Vec<u8>>,
    /// Whether to mask entries-read and lag of keys in `lag_masked` (see
    /// [`Differ::mask_lag_after_taint`]).
    lag_masking: bool,
    /// Keys whose lag is masked.
    lag_masked: BTreeSet<Vec<u8>>,
}

/// The two sides disagree; the text says on what and how to reproduce it.
pub struct Mismatch(String);

impl Mismatch {
    /// A mismatch described by `text` (for harnesses beside [`Differ`]).
    pub fn new(text: String) -> Mismatch {
        Mismatch(text)
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The bookkeeping `XINFO STREAM` shows, as text so both sides print alike.
type StreamState = BTreeMap<&'static str, String>;

/// The `XINFO STREAM` fields compared, and whether each is an id (not comparable after `*`).
const STATE_FIELDS: [(&str, bool); 7] = [
    ("length", false),
    ("radix-tree-keys", false),
    ("last-generated-id", true),
    ("max-deleted-entry-id", true),
    ("entries-added", false),
    ("recorded-first-entry-id", true),
    ("groups", false),
];

/// Whether `peer` predates idempotent production (Redis 8.6): its XINFO STREAM lacks
/// [`normalize::IDMP_FIELDS`], which are then left out of the comparison.
pub fn lacks_idmp(peer: &PeerInfo) -> bool {
    peer.kind == PeerKind::Valkey || peer.is_redis_before(8, 6)
}

/// The wall clock in Unix milliseconds.
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Differ {
    /// Starts a server of `kind` next to a fresh engine; `None` if the server is not installed
    /// (see [`Peer::start`]).
    pub fn start(kind: PeerKind) -> Option<Differ> {
        let clock = Arc::new(ManualClock::new(wall_ms()));
        let mut differ = Differ {
            peer: Peer::start(kind)?,
            engine: Keyspace::new(clock.clone()),
            clock,
            history: Vec::new(),
            touched: BTreeSet::new(),
            clock_keys: BTreeSet::new(),
            lag_masking: false,
            lag_masked: BTreeSet::new(),
        };
        differ.reset();
        Some(differ)
    }

    /// The server's kind and version.
    pub fn info(&self) -> PeerInfo {
        self.peer.info()
    }

    /// The engine side.
    pub fn engine(&self) -> &Keyspace {
        &self.engine
    }

    /// Empties both sides and restores default settings. A server that died (say, crashed on
    /// the last sequence) is replaced by a fresh one, so a shrinking search can go on.
    pub fn reset(&mut self) {
        if !self.peer.is_running() {
            let kind = self.info().kind;
            self.peer = Peer::start(kind).unwrap_or_else(|| panic!("{kind} vanished"));
        }
        for argv in [
            &["FLUSHALL"][..],
            &["CONFIG", "SET", "stream-node-max-entries", "100"],
            &["CONFIG", "SET", "stream-node-max-bytes", "4096"],
        ] {
            let reply = self.peer.call(argv);
            assert_eq!(reply, Resp::Simple("OK".into()), "{}", show_argv(argv));
        }
        self.clock.set(wall_ms());
        self.engine = Keyspace::new(self.clock.clone());
        self.history.clear();
        self.touched.clear();
        self.clock_keys.clear();
        self.lag_masked.clear();
    }

    /// From now on, once a command takes a key's lag where a peer without the 8.0 lag rules
    /// differs ([`normalize::taints_lag`]), mask `entries-read` and `lag` of that key's groups
    /// in every reply compared (see `known_differences::LAG_FIXES_8_0`). For random sequences
    /// on such peers; hand cases skip instead.
    pub fn mask_lag_after_taint(&mut self) {
        self.lag_masking = true;
    }

    /// Runs one command on both sides and compares the replies byte for byte. Returns the
    /// server's reply.
    pub fn run<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Result<Resp, Mismatch> {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_ref().to_vec()).collect();
        self.history.push(argv.clone());
        let name = argv
            .first()
            .map(|n| n.to_ascii_lowercase())
            .unwrap_or_default();
        self.touched
            .extend(keys_of(&argv).into_iter().map(<[u8]>::to_vec));
        if self.lag_masking
            && let Some(key) = normalize::taints_lag(&argv)
        {
            self.lag_masked.insert(key.to_vec());
        }
        let (theirs, raw) = match self.peer.try_call(&argv) {
            Ok(reply) => reply,
            Err(e) => return Err(self.server_failed(&e)),
        };
        let ours = match name.as_slice() {
            b"config" => self.mirror_config(&argv, &theirs)?,
            b"set" => self.mirror_set(&argv, &theirs)?,
            _ => Resp::from_engine(&self.engine.execute(&argv)),
        };
        let clock_id = name == b"xadd" && argv.iter().skip(2).any(|a| a == b"*");
        if clock_id && is_id(&theirs) && is_id(&ours) {
            self.clock_keys.insert(argv[1].clone());
            return Ok(theirs);
        }
        if !self.same(&argv, &theirs, &raw, &ours) {
            return Err(self.reply_mismatch(&theirs, &raw, &ours));
        }
        Ok(theirs)
    }

    /// [`Differ::run`], then for every key the command names, [`Differ::check_stream`] and
    /// [`Differ::check_groups`].
    pub fn run_and_check<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Result<Resp, Mismatch> {
        let reply = self.run(argv)?;
        let keys: Vec<Vec<u8>> = keys_of(argv).into_iter().map(<[u8]>::to_vec).collect();
        for key in keys {
            self.check_stream(&key)?;
            self.check_groups(&key)?;
        }
        Ok(reply)
    }

    /// Compares the consumer groups of the stream under `key`: `XINFO GROUPS`, then for each
    /// group the XPENDING summary, the whole PEL, and (from 7.2) `XINFO CONSUMERS`. Nothing to
    /// do when the engine has no stream or no group there: [`Differ::check_stream`] compares
    /// the key's existence and group count.
    pub fn check_groups(&mut self, key: &[u8]) -> Result<(), Mismatch> {
        let groups: Vec<Vec<u8>> = self.engine.run(|db, _| match db.stream(key) {
            Ok(Some(stream)) => stream.groups().map(|(name, _)| name.to_vec()).collect(),
            _ => Vec::new(),
        });
        if groups.is_empty() {
            return Ok(());
        }
        self.compare_quietly(&[&b"XINFO"[..], b"GROUPS", key])?;
        // Redis 7.0's XINFO CONSUMERS has no `inactive` (`docs/reference/streams.md` §8, 7.2).
        let consumers = !self.info().is_redis_before(7, 2);
        for group in &groups {
            self.compare_quietly(&[&b"XPENDING"[..], key, group])?;
            self.compare_quietly(&[
                &b"XPENDING"[..],
                key,
                group,
                b"-",
                b"+",
                PEL_LISTED_MAX.as_bytes(),
            ])?;
            if consumers {
                self.compare_quietly(&[&b"XINFO"[..], b"CONSUMERS", key, group])?;
            }
        }
        Ok(())
    }

    /// Runs a read-only command on both sides and compares the replies (normalized), without
    /// recording it in the history.
    fn compare_quietly(&mut self, argv: &[&[u8]]) -> Result<(), Mismatch> {
        let (theirs, raw) = match self.peer.try_call(argv) {
            Ok(reply) => reply,
            Err(e) => return Err(self.server_failed(&e)),
        };
        let ours = Resp::from_engine(&self.engine.execute(argv));
        if !self.same(argv, &theirs, &raw, &ours) {
            let what = format!(
                "state check `{}` differs after the last command",
                show_argv(argv)
            );
            let mismatch = self.reply_mismatch(&theirs, &raw, &ours);
            return Err(Mismatch(format!("{what}\n{}", mismatch.0)));
        }
        Ok(())
    }

    /// Checks the invariants of every engine stream (a walk over everything: call it per
    /// operation, not per command, on big streams).
    pub fn check_invariants(&self) -> Result<(), Mismatch> {
        self.engine
            .check_invariants()
            .map_err(|e| self.report(&format!("engine invariant broken: {e}")))
    }

    /// Compares `XINFO STREAM key` on the server with the engine's stream under `key` (both may
    /// be missing).
    pub fn check_stream(&mut self, key: &[u8]) -> Result<(), Mismatch> {
        let masked = self.clock_keys.contains(key);
        let theirs = match self.peer.try_call(&[&b"XINFO"[..], b"STREAM", key]) {
            Ok((reply, _)) => server_state(&reply, masked),
            Err(e) => return Err(self.server_failed(&e)),
        };
        let ours = self.engine.run(|db, _| match db.stream(key) {
            Ok(Some(stream)) => Ok(Some(engine_state(stream, masked))),
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        });
        if theirs != ours {
            let what = format!(
                "stream state of key {} differs\n  {}: {}\n  engine: {}",
                show_argv(&[key]),
                self.info(),
                show_state(&theirs),
                show_state(&ours),
            );
            return Err(self.report(&what));
        }
        Ok(())
    }

    /// The engine's invariants, then for every key touched since the reset: the stream state,
    /// and the whole content both ways (`XRANGE - +`, `XREVRANGE + -`) unless its ids came from
    /// the clock.
    pub fn check_all(&mut self) -> Result<(), Mismatch> {
        self.check_invariants()?;
        let keys: Vec<Vec<u8>> = self.touched.iter().cloned().collect();
        for key in keys {
            self.check_stream(&key)?;
            self.check_groups(&key)?;
            if !self.clock_keys.contains(&key) {
                self.run(&[&b"XRANGE"[..], &key, b"-", b"+"])?;
                self.run(&[&b"XREVRANGE"[..], &key, b"+", b"-"])?;
            }
        }
        Ok(())
    }

    /// `CONFIG SET stream-node-max-entries|stream-node-max-bytes n` on the engine's settings.
    fn mirror_config(&self, argv: &[Vec<u8>], theirs: &Resp) -> Result<Resp, Mismatch> {
        let [_, sub, name, value] = argv else {
            return Err(self.report("harness: only `CONFIG SET name value` is mirrored"));
        };
        let value = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse::<u64>().ok());
        let config = self.engine.config();
        match (sub.to_ascii_lowercase().as_slice(), name.as_slice(), value) {
            (b"set", b"stream-node-max-entries", Some(n)) => config.set_node_entries_max(n),
            (b"set", b"stream-node-max-bytes", Some(n)) => config.set_node_bytes_max(n),
            _ => {
                return Err(self.report(&format!(
                    "harness: cannot mirror this CONFIG command (server said {theirs})"
                )));
            }
        }
        Ok(Resp::Simple("OK".into()))
    }

    /// `SET key value` as a string value in the engine's keyspace.
    fn mirror_set(&self, argv: &[Vec<u8>], theirs: &Resp) -> Result<Resp, Mismatch> {
        let [_, key, value] = argv else {
            return Err(self.report(&format!(
                "harness: only `SET key value` is mirrored (server said {theirs})"
            )));
        };
        let (key, value) = (Bytes::from(key.clone()), Bytes::from(value.clone()));
        self.engine
            .run(|db, _| db.insert(&key, Value::String(value.into())));
        Ok(Resp::Simple("OK".into()))
    }

    /// Whether the server's reply (raw bytes `raw`, parsed `theirs`) and the engine's are the
    /// same, time fields and masked lags aside.
    fn same<A: AsRef<[u8]>>(&self, argv: &[A], theirs: &Resp, raw: &[u8], ours: &Resp) -> bool {
        normalize::same_aligned(
            argv,
            |reply| {
                let masked = |key: &[u8]| self.lag_masked.contains(key);
                let idmp = lacks_idmp(&self.info()) && normalize::drop_idmp_fields(argv, reply);
                normalize::times(argv, reply) | normalize::lag(argv, reply, masked) | idmp
            },
            (theirs, raw),
            (ours, &ours.to_bytes()),
        )
    }

    /// The server stopped answering: most likely it crashed on the last command.
    fn server_failed(&mut self, error: &std::io::Error) -> Mismatch {
        // A crashing server may still be writing its report; wait for it to exit, briefly.
        for _ in 0..100 {
            if !self.peer.is_running() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let state = if self.peer.is_running() {
            "still running"
        } else {
            "exited"
        };
        self.report(&format!(
            "I/O error talking to the server ({state}): {error}\nserver output (tail):\n{}",
            self.peer.log_tail()
        ))
    }

    fn reply_mismatch(&self, theirs: &Resp, raw: &[u8], ours: &Resp) -> Mismatch {
        let what = format!(
            "replies differ\n  {peer}: {theirs}\n  engine: {ours}\n  {peer} bytes: {raw}\n  engine bytes: {ours_raw}",
            peer = self.info(),
            theirs = indent(&theirs.to_string()),
            ours = indent(&ours.to_string()),
            raw = show_raw(raw),
            ours_raw = show_raw(&ours.to_bytes()),
        );
        self.report(&what)
    }

    /// A report: what differs, then the commands that led there (the last one is the culprit
    /// for a reply mismatch).
    fn report(&self, what: &str) -> Mismatch {
        let mut text = format!("engine vs {}: {what}\n", self.info());
        let skipped = self.history.len().saturating_sub(HISTORY_SHOWN_MAX);
        text.push_str(&format!(
            "commands since FLUSHALL ({}{}):\n",
            self.history.len(),
            if skipped > 0 {
                format!(", first {skipped} not shown")
            } else {
                String::new()
            }
        ));
        for (i, argv) in self.history.iter().enumerate().skip(skipped) {
            text.push_str(&format!("  {:>4}  {}\n", i + 1, show_argv(argv)));
        }
        Mismatch(text)
    }
}

/// The keys a command names, for the checks after it and [`Differ::check_all`]: the first
/// argument of the key-first commands, the third of XGROUP and XINFO (except HELP), and the
/// keys after STREAMS of XREAD and XREADGROUP.
pub fn keys_of<A: AsRef<[u8]>>(argv: &[A]) -> Vec<&[u8]> {
    const KEY_FIRST: &[&[u8]] = &[
        b"xadd",
        b"xrange",
        b"xrevrange",
        b"xlen",
        b"xdel",
        b"xtrim",
        b"xsetid",
        b"xack",
        b"xpending",
        b"xclaim",
        b"xautoclaim",
        b"set",
    ];
    let argv: Vec<&[u8]> = argv.iter().map(AsRef::as_ref).collect();
    let Some(name) = argv.first().map(|n| n.to_ascii_lowercase()) else {
        return Vec::new();
    };
    let word = |i: usize| argv.get(i).map(|a| a.to_ascii_lowercase());
    match name.as_slice() {
        n if KEY_FIRST.contains(&n) => argv.get(1).copied().into_iter().collect(),
        b"xgroup" | b"xinfo" if word(1).as_deref() != Some(b"help") => {
            argv.get(2).copied().into_iter().collect()
        }
        b"xread" | b"xreadgroup" => {
            let mut i = 1;
            while let Some(option) = word(i) {
                i += match option.as_slice() {
                    b"group" => 3,
                    b"count" | b"block" => 2,
                    b"noack" => 1,
                    b"streams" => {
                        let rest = &argv[i + 1..];
                        return rest[..rest.len() / 2].to_vec();
                    }
                    _ => return Vec::new(),
                };
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn is_id(reply: &Resp) -> bool {
    let Some(text) = reply.as_text() else {
        return false;
    };
    text.split_once('-')
        .is_some_and(|(ms, seq)| ms.parse::<u64>().is_ok() && seq.parse::<u64>().is_ok())
}

fn server_state(reply: &Resp, masked: bool) -> Result<Option<StreamState>, String> {
    let items = match reply {
        Resp::Error(e) if e == "ERR no such key" => return Ok(None),
        Resp::Error(e) => return Err(e.clone()),
        Resp::Array(items) => items,
        other => return Err(format!("unexpected XINFO reply {other}")),
    };
    let mut state = StreamState::new();
    for pair in items.chunks(2) {
        let [name, value] = pair else { break };
        let Some(&(field, is_id)) = STATE_FIELDS
            .iter()
            .find(|(f, _)| name.as_text() == Some(*f))
        else {
            continue;
        };
        let text = match value {
            _ if masked && is_id => "(clock)".to_string(),
            Resp::Int(n) => n.to_string(),
            Resp::Bulk(_) => value.as_text().unwrap_or("(not UTF-8)").to_string(),
            other => format!("unexpected {other}"),
        };
        state.insert(field, text);
    }
    Ok(Some(state))
}

fn engine_state(stream: &Stream, masked: bool) -> StreamState {
    let values = [
        stream.len().to_string(),
        stream.node_count().to_string(),
        stream.last_id().to_string(),
        stream.max_deleted_entry_id().to_string(),
        stream.entries_added().to_string(),
        stream.first_id().to_string(),
        stream.group_count().to_string(),
    ];
    STATE_FIELDS
        .iter()
        .zip(values)
        .map(|(&(field, is_id), value)| {
            let value = if masked && is_id {
                "(clock)".to_string()
            } else {
                value
            };
            (field, value)
        })
        .collect()
}

fn show_state(state: &Result<Option<StreamState>, String>) -> String {
    match state {
        Err(e) => format!("(error) {e}"),
        Ok(None) => "(no such key)".to_string(),
        Ok(Some(fields)) => fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Reply bytes for a report, shortened.
pub fn show_raw(raw: &[u8]) -> String {
    let shown = &raw[..raw.len().min(RAW_SHOWN_MAX)];
    let mut text = format!("{:?}", String::from_utf8_lossy(shown));
    if raw.len() > RAW_SHOWN_MAX {
        text.push_str(&format!("...({} bytes)", raw.len()));
    }
    text
}

/// A multi-line value indented under its label in a report.
pub fn indent(text: &str) -> String {
    text.replace('\n', "\n          ")
}

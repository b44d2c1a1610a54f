//! Property tests: consumer groups against a deliberately simple model ([`model`]).
//!
//! Random operation sequences over two streams and a string key run against the engine,
//! through [`Keyspace::execute`], and against the model: XGROUP CREATE (with `$`, MKSTREAM,
//! ENTRIESREAD), SETID, DESTROY, CREATECONSUMER, DELCONSUMER; XREADGROUP `>` and history reads
//! (COUNT, NOACK, BLOCK, two streams); XACK; XPENDING summary and extended (IDLE, bounds, COUNT,
//! consumer); XCLAIM (IDLE, TIME, RETRYCOUNT, FORCE, JUSTID, LASTID); XAUTOCLAIM (cursor, COUNT,
//! JUSTID); Redis 8.2's XDELEX and XACKDEL (KEEPREF, DELREF, ACKED); Redis 8.8's XNACK (modes, RETRYCOUNT, FORCE, options before or after IDS) and
//! XREADGROUP CLAIM (the NACK zone first, then delivery-time order, new entries after);
//! XINFO GROUPS, CONSUMERS and STREAM [FULL]; plain XREAD; and under them XADD, XDEL,
//! XTRIM (exact and `~`) and XSETID, so that pending entries outlive their stream entries. A
//! manual clock moves between commands (mostly forward, sometimes back), so idle times matter.
//! Group commands are sometimes mangled to reach their errors.
//!
//! After every command:
//! - the reply, or the error text, equals the model's;
//! - `check_invariants()` passes (it checks that group and consumer PELs agree);
//! - every stream key's bookkeeping and live ids, and every group's cursor, entries-read,
//!   PEL (owner, delivery time and count of each entry), delivery-time order (the NACK zone
//!   first) and consumers (seen and active times,
//!   pending ids) equal the model's. As this compares everything, a failed command that changed
//!   anything is caught too.
//!
//! Failures the generator found are kept below as plain regression tests.

mod claims;
mod delete_strategy;
mod delex;
mod info;
mod model;
mod nack;
mod ops;
mod reads;
mod render;
/// The stream model of `stream::model_tests`, compiled here as well: the group model keeps
/// its streams in it rather than in a second copy. (A `use` would do once that module is
/// visible outside `stream`.)
#[allow(
    clippy::duplicate_mod,
    reason = "the stream model is private to stream::model_tests"
)]
#[path = "../log/model_tests/model.rs"]
mod stream_model;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;

use self::model::{GroupModel, GroupState, KeyState};
use self::ops::{KEYS, Op, STRING_KEY, op};
use self::render::render;
use self::stream_model::ModelValue;
use crate::clock::ManualClock;
use crate::keyspace::{Keyspace, Value};
use crate::stream::Stream;

/// Proptest cases per run; `PROPTEST_CASES` overrides it for longer runs.
const CASES_DEFAULT: u32 = 256;
/// Operations per case, at most.
const OPS_MAX: usize = 150;
/// Where the clock starts: far enough from 0 that going back stays positive.
const CLOCK_START_MS: u64 = 1_000;

/// Compares the engine with the model command by command.
struct Harness {
    clock: Arc<ManualClock>,
    now_ms: u64,
    keyspace: Keyspace,
    model: GroupModel,
    /// Everything done so far, for failure messages.
    log: Vec<String>,
}

impl Harness {
    fn new(node_entries_max: u64) -> Harness {
        let clock = Arc::new(ManualClock::new(CLOCK_START_MS));
        let keyspace = Keyspace::new(clock.clone());
        keyspace.config().set_node_entries_max(node_entries_max);
        keyspace.config().set_node_bytes_max(0);
        keyspace.run(|db, _| {
            db.insert(
                STRING_KEY.as_bytes(),
                Value::String(Bytes::from_static(b"v").into()),
            );
        });
        let mut model = GroupModel::new(node_entries_max);
        model
            .streams
            .values
            .insert(STRING_KEY.as_bytes().to_vec(), ModelValue::Other);
        Harness {
            clock,
            now_ms: CLOCK_START_MS,
            keyspace,
            model,
            log: vec![format!(
                "node-max-entries {node_entries_max}, clock {CLOCK_START_MS}"
            )],
        }
    }

    fn set_clock(&mut self, ms: u64) {
        self.now_ms = ms;
        self.clock.set(ms);
        self.log.push(format!("clock {ms}"));
    }

    fn delete(&mut self, key: &str) -> Result<(), String> {
        self.log.push(format!("del {key}"));
        self.keyspace.run(|db, _| db.remove(key.as_bytes()));
        self.model.remove(key.as_bytes());
        self.compare_state()
    }

    /// Runs `argv` on both sides; `Err` describes the first difference.
    fn command(&mut self, argv: &[Vec<u8>]) -> Result<(), String> {
        self.log.push(
            argv.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" "),
        );
        let want = self.model.execute(argv, self.now_ms);
        let got = self.keyspace.execute(argv).map_err(|e| e.to_string());
        if got != want {
            return self.fail(format!("engine replied\n  {got:?}\nmodel\n  {want:?}"));
        }
        if let Err(e) = self.keyspace.check_invariants() {
            return self.fail(format!("invariant broken: {e}"));
        }
        self.compare_state()
    }

    fn compare_state(&self) -> Result<(), String> {
        let engine = self.engine_state();
        let model = self.model.state();
        if engine != model {
            return self.fail(format!("engine state {engine:#?}\nmodel state {model:#?}"));
        }
        Ok(())
    }

    fn fail(&self, what: String) -> Result<(), String> {
        Err(format!("{what}\nafter:\n  {}", self.log.join("\n  ")))
    }

    /// Every stream key as the model describes it.
    fn engine_state(&self) -> BTreeMap<Vec<u8>, KeyState> {
        self.keyspace.run(|db, _| {
            db.keys()
                .filter_map(|key| match db.get(key) {
                    Some(Value::Stream(s)) => Some((key.to_vec(), key_state(s))),
                    _ => None,
                })
                .collect()
        })
    }
}

fn key_state(stream: &Stream) -> KeyState {
    let groups = stream
        .groups()
        .map(|(name, g)| {
            let state = GroupState {
                last_id: g.last_id,
                entries_read: g.entries_read,
                pel: g
                    .pending()
                    .map(|(id, n)| {
                        (
                            *id,
                            n.owner_bytes().to_vec(),
                            n.delivery_time,
                            n.delivery_count,
                        )
                    })
                    .collect(),
                time_order: g.pending_by_time().collect(),
                consumers: g
                    .consumers()
                    .map(|(c, consumer)| {
                        (
                            c.as_bytes().to_vec(),
                            consumer.seen_time,
                            consumer.active_time,
                            consumer.pending_ids().collect(),
                        )
                    })
                    .collect(),
            };
            (name.to_vec(), state)
        })
        .collect();
    KeyState {
        length: stream.len(),
        last_id: stream.last_id(),
        first_id: stream.first_id(),
        max_deleted: stream.max_deleted_entry_id(),
        entries_added: stream.entries_added(),
        live: stream
            .range(crate::id::StreamId::MIN, crate::id::StreamId::MAX)
            .map(|e| e.id)
            .collect(),
        groups,
    }
}

/// Most cases start with two groups on the first stream, so that group commands do not
/// mostly meet NOGROUP until one is created.
const SETUP: [&str; 2] = ["XGROUP CREATE s g1 0 MKSTREAM", "XGROUP CREATE s g2 $"];

fn run_ops(node_entries_max: u64, setup: bool, ops: &[Op]) -> Result<(), String> {
    let mut h = Harness::new(node_entries_max);
    if setup {
        for line in SETUP {
            let argv: Vec<Vec<u8>> = line.split(' ').map(|w| w.as_bytes().to_vec()).collect();
            h.command(&argv)?;
        }
    }
    for op in ops {
        match op {
            Op::Clock(delta) => {
                let ms = h.now_ms.saturating_add_signed(i64::from(*delta));
                h.set_clock(ms);
            }
            Op::DelKey(key) => h.delete(KEYS[*key])?,
            Op::Command { key, cmd, mangle } => {
                let argv = render(*key, cmd, mangle, &h.model, h.now_ms);
                h.command(&argv)?;
            }
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CASES_DEFAULT)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn consumer_groups_match_the_model(
        node_entries_max in 1u64..9,
        setup in prop::bool::weighted(0.8),
        ops in prop::collection::vec(op(), 1..OPS_MAX),
    ) {
        run_ops(node_entries_max, setup, &ops).map_err(TestCaseError::fail)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Regression tests: sequences the generator found, replayed as plain argv.

/// Replays `commands` through the harness (node-max-entries 100); `clock <ms>` sets the clock,
/// `del <key>` deletes a key.
fn replay(commands: &[&str]) {
    let mut h = Harness::new(100);
    for line in commands {
        let words: Vec<&str> = line.split(' ').collect();
        let result = match words.as_slice() {
            ["clock", ms] => {
                h.set_clock(ms.parse().unwrap());
                Ok(())
            }
            ["del", key] => h.delete(key),
            _ => {
                let argv: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
                h.command(&argv)
            }
        };
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}

#[test]
fn the_harness_sees_deliveries_claims_and_acks() {
    replay(&[
        "XADD s 1-1 f v",
        "XADD s 1-2 f v",
        "XADD s 1-3 f v",
        "XGROUP CREATE s g1 0",
        "XREADGROUP GROUP g1 alice COUNT 2 STREAMS s >",
        "clock 1100",
        "XDEL s 1-1",
        "XCLAIM s g1 bob 50 1-1 1-2",
        "XREADGROUP GROUP g1 alice STREAMS s 0",
        "XAUTOCLAIM s g1 carol 0 - COUNT 1",
        "XPENDING s g1",
        "XPENDING s g1 IDLE 0 - + 10 bob",
        "XACK s g1 1-2 1-3",
        "XINFO GROUPS s",
        "XINFO CONSUMERS s g1",
        "XINFO STREAM s FULL",
    ]);
}

#[test]
fn xgroup_setid_reads_its_options_before_the_key() {
    // Redis's xgroupCommand parses CREATE's and SETID's options (MKSTREAM, ENTRIESREAD) in one
    // loop before looking the key up, so an unknown option or a bad ENTRIESREAD wins over a
    // missing key, a missing group and a bad id.
    replay(&[
        "XGROUP SETID s g1 $ ENTRIESREAD -1 COUNT",
        "XGROUP SETID s g1 $ ENTRIESREAD x",
        "XADD s 1-1 f v",
        "XGROUP SETID s nogroup 0 ENTRIESREAD -5",
        "XGROUP SETID s nogroup abc MKSTREAM",
    ]);
}

#[test]
fn xreadgroup_with_the_largest_id_reads_new_entries() {
    // xreadCommand stores `>` as the id 18446744073709551615-18446744073709551615 and later
    // tells the two apart by that value alone, so that id, given explicitly, reads new
    // entries (and creates pending entries) exactly as `>` does.
    replay(&[
        "XADD s 1-1 f v",
        "XGROUP CREATE s g1 0",
        "XREADGROUP GROUP g1 alice STREAMS s 18446744073709551615-18446744073709551615",
        "XPENDING s g1",
    ]);
}

#[test]
fn xinfo_consumers_inactive_is_not_clamped() {
    // xinfoCommand: `inactive = active_time != -1 ? now - active_time : -1` with no clamp,
    // while `idle` is clamped at 0.
    replay(&[
        "XADD s 1-1 f v",
        "XGROUP CREATE s g1 0",
        "XREADGROUP GROUP g1 alice STREAMS s >",
        "clock 998",
        "XINFO CONSUMERS s g1",
    ]);
}

#[test]
fn xautoclaim_stops_after_ten_times_count_entries() {
    // Twenty-five entries pending and none idle enough: COUNT 1 looks at ten of them and
    // returns the eleventh as the cursor; the next call goes on from there.
    let mut commands = vec!["XGROUP CREATE s g1 0 MKSTREAM".to_string()];
    commands.extend((1..=25).map(|i| format!("XADD s {i}-1 f v")));
    commands.extend([
        "XREADGROUP GROUP g1 alice STREAMS s >".into(),
        "XAUTOCLAIM s g1 bob 100 - COUNT 1".into(),
        "XDEL s 13-1".into(),
        "XAUTOCLAIM s g1 bob 100 11-1 COUNT 2 JUSTID".into(),
        "clock 1100".into(),
        "XAUTOCLAIM s g1 bob 100 (20-1 COUNT 2".into(),
        "XAUTOCLAIM s g1 bob 100 24-1 COUNT 5".into(),
    ]);
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    replay(&commands);
}

#[test]
fn pending_entries_outlive_their_stream_entries() {
    // `docs/reference/streams.md` §4.9: XDEL and XTRIM leave the PEL alone; history reads show the
    // ids with null fields, XCLAIM drops them silently, XAUTOCLAIM reports them, XACK acknowledges
    // them.
    replay(&[
        "XADD s 1-1 f v",
        "XADD s 1-2 f v",
        "XADD s 1-3 f v",
        "XADD s 1-4 f v",
        "XGROUP CREATE s g1 0",
        "XREADGROUP GROUP g1 alice STREAMS s >",
        "XDEL s 1-2",
        "XTRIM s MAXLEN 1",
        "XPENDING s g1",
        "XREADGROUP GROUP g1 alice STREAMS s 0",
        "XCLAIM s g1 bob 0 1-1 1-4 JUSTID",
        "XAUTOCLAIM s g1 bob 0 0 COUNT 2",
        "XACK s g1 1-3",
        "XINFO STREAM s FULL",
        "XINFO GROUPS s",
    ]);
}

#[test]
fn entries_read_and_lag_follow_the_reference_cases() {
    // The worked cases of `docs/reference/streams.md` §4.7: a group at 0 on 5 entries, then one
    // read; a tombstone in the unread part makes both unknown until the group reads past it; XTRIM
    // past the group's cursor makes the lag the length.
    replay(&[
        "XADD s 1-0 f v",
        "XADD s 2-0 f v",
        "XADD s 3-0 f v",
        "XADD s 4-0 f v",
        "XADD s 5-0 f v",
        "XGROUP CREATE s g1 0",
        "XINFO GROUPS s",
        "XREADGROUP GROUP g1 alice COUNT 1 STREAMS s >",
        "XINFO GROUPS s",
        "XDEL s 3-0",
        "XINFO GROUPS s",
        "XREADGROUP GROUP g1 alice COUNT 1 STREAMS s >",
        "XINFO GROUPS s",
        "XREADGROUP GROUP g1 alice COUNT 1 STREAMS s >",
        "XINFO GROUPS s",
        "XGROUP CREATE s g2 1-0 ENTRIESREAD 1",
        "XTRIM s MAXLEN 1",
        "XINFO GROUPS s",
        "XGROUP SETID s g2 $",
        "XADD s 6-0 f v",
        "XINFO GROUPS s",
    ]);
}

//! `echomq serve` (in-process, [`TestServer`](echomq::testing::TestServer)) against a real
//! server over the wire: identical bytes in, identical bytes out, in RESP2 and after `HELLO 3`
//! (see `support::wire` for what is compared and what is not).
//!
//! The hand-written cases cover what only a server has: keyspace commands on streams (DEL,
//! EXISTS, TYPE, DBSIZE, RENAME, FLUSHDB), errors raised before a command runs (unknown command,
//! arity, WRONGTYPE via SET), RESP3 reply shapes of every stream command, pipelines, and
//! MULTI/EXEC with stream commands (runtime and queue-time errors, BLOCK inside EXEC, WATCH).
//! Every case runs in both protocols. The random sequences reuse the group generator
//! (`groups::random`), sending its commands one by one, as pipelines and as transactions.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use crate::differential::case::Skip;
use crate::differential::groups::random::{self as group_random, GROUPS, KEYS, Op};
use crate::differential::known_differences::{
    CONSUMER_ACTIVE_TIME, HELP_LAST_LINE, MULTI_NESTED, XREAD_PLUS_8_8, is_valkey, lacks_lag_fixes,
    lacks_xread_plus_8_8, redis_before_7_2,
};
use crate::support::differ::Mismatch;
use crate::support::peer::{PeerInfo, PeerKind};
use crate::support::wire::{WireDiffer, words};

/// Random sequences per server, each in a random protocol.
const RANDOM_SEQUENCES_REDIS: u32 = 48;
const RANDOM_SEQUENCES_VALKEY: u32 = 48;
/// Seed used unless `PROPTEST_RNG_SEED` is set.
const SEED_DEFAULT: u64 = 0xEC40_3E5F;

/// What goes out at once.
#[derive(Debug, Clone)]
enum Batch {
    /// One command, its reply read before the next is sent.
    One(Vec<Vec<u8>>),
    /// Commands written together, replies read after.
    Pipeline(Vec<Vec<Vec<u8>>>),
    /// `MULTI`, the commands, `EXEC`, as one pipeline.
    Transaction(Vec<Vec<Vec<u8>>>),
}

/// A scripted wire case.
#[derive(Debug)]
struct WireCase {
    name: &'static str,
    batches: Vec<Batch>,
    skip: Option<Skip>,
    engine_bug: Option<&'static str>,
}

fn line(line: &str) -> Vec<Vec<u8>> {
    words(&line.split_whitespace().collect::<Vec<_>>())
}

impl WireCase {
    fn new(name: &'static str) -> WireCase {
        WireCase {
            name,
            batches: Vec::new(),
            skip: None,
            engine_bug: None,
        }
    }

    fn cmd(mut self, text: &str) -> WireCase {
        self.batches.push(Batch::One(line(text)));
        self
    }

    fn argv(mut self, argv: &[&str]) -> WireCase {
        self.batches.push(Batch::One(words(argv)));
        self
    }

    fn fill(mut self, key: &str, from: u64, to: u64) -> WireCase {
        let batch = (from..=to)
            .map(|i| line(&format!("XADD {key} {i}-0 f {i}")))
            .collect();
        self.batches.push(Batch::Pipeline(batch));
        self
    }

    fn pipeline(mut self, lines: &[&str]) -> WireCase {
        self.batches
            .push(Batch::Pipeline(lines.iter().map(|l| line(l)).collect()));
        self
    }

    fn multi(mut self, lines: &[&str]) -> WireCase {
        self.batches
            .push(Batch::Transaction(lines.iter().map(|l| line(l)).collect()));
        self
    }

    fn skip_if(mut self, applies: fn(&PeerInfo) -> bool, why: &'static str) -> WireCase {
        self.skip = Some(Skip { applies, why });
        self
    }

    /// No wire case shows an engine bug now; kept for the next one.
    #[allow(dead_code)]
    fn engine_bug(mut self, why: &'static str) -> WireCase {
        self.engine_bug = Some(why);
        self
    }
}

fn send(differ: &mut WireDiffer, batch: &Batch) -> Result<(), Mismatch> {
    match batch {
        Batch::One(argv) => differ.run(argv).map(drop),
        Batch::Pipeline(batch) => differ.pipeline(batch),
        Batch::Transaction(commands) => differ.transaction(commands),
    }
}

fn cases() -> Vec<WireCase> {
    vec![
        WireCase::new("keyspace commands on streams and strings")
            .fill("s", 1, 2)
            .cmd("SET k v")
            .cmd("EXISTS s k nokey s")
            .cmd("TYPE s")
            .cmd("TYPE k")
            .cmd("TYPE nokey")
            .cmd("DBSIZE")
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("RENAME s s2")
            .cmd("EXISTS s")
            .cmd("TYPE s2")
            .cmd("XINFO GROUPS s2")
            .cmd("XPENDING s2 g")
            .cmd("XRANGE s2 - +")
            .cmd("RENAME nokey x")
            .cmd("RENAME s2 s2")
            .cmd("RENAME k s2")
            .cmd("TYPE s2")
            .cmd("XLEN s2")
            .cmd("DEL s2 nokey k")
            .cmd("DBSIZE")
            .fill("s", 1, 1)
            .cmd("FLUSHDB")
            .cmd("DBSIZE")
            .cmd("XLEN s")
            .cmd("EXISTS s"),
        WireCase::new("errors before and while running")
            .cmd("FOO a b")
            .cmd("xfoo x")
            .cmd("XADD s")
            .cmd("GET")
            .cmd("DEL")
            .cmd("XINFO")
            .cmd("SET str x")
            .cmd("XADD str 1-0 f v")
            .cmd("XREADGROUP GROUP g c STREAMS str >")
            .fill("s", 1, 1)
            .cmd("GET s")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XPENDING s g")
            .cmd("XINFO CONSUMERS s g")
            .cmd("XGROUP SETID s g 0")
            .cmd("XADD s 0-0 f v")
            .cmd("XINFO STREAM nokey")
            .cmd("XGROUP CREATE s g 0")
            .cmd("XGROUP CREATE s g 0"),
        WireCase::new("reply shapes of the stream commands")
            .fill("s", 1, 3)
            .cmd("XRANGE s - +")
            .cmd("XRANGE s - + COUNT 0")
            .cmd("XREVRANGE s + - COUNT 1")
            .cmd("XADD nokey NOMKSTREAM 1-0 f v")
            .cmd("XREAD STREAMS s 0")
            .cmd("XREAD STREAMS nokey 0")
            .cmd("XREAD COUNT 1 STREAMS s s 0 1")
            .cmd("XGROUP CREATE s g 0")
            .cmd("XGROUP CREATE s e $")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XDEL s 2-0")
            .cmd("XREADGROUP GROUP g c STREAMS s 0")
            .cmd("XPENDING s g")
            .cmd("XPENDING s e")
            .cmd("XPENDING s g - + 10")
            .cmd("XCLAIM s g c2 0 1-0")
            .cmd("XCLAIM s g c2 0 3-0 JUSTID")
            .cmd("XAUTOCLAIM s g c 0 0")
            .cmd("XACK s g 1-0")
            .cmd("XINFO STREAM s")
            .cmd("XINFO GROUPS s")
            .cmd("XSETID s 3-0")
            .cmd("XTRIM s MAXLEN 0")
            .cmd("XINFO STREAM s"),
        WireCase::new("reply shapes of XINFO CONSUMERS and FULL")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s >")
            .cmd("XGROUP CREATECONSUMER s g idle")
            .cmd("XINFO CONSUMERS s g")
            .cmd("XINFO STREAM s FULL")
            .cmd("XINFO STREAM s FULL COUNT 1")
            .skip_if(redis_before_7_2, CONSUMER_ACTIVE_TIME),
        WireCase::new("HELP replies")
            .cmd("XINFO HELP")
            .cmd("XGROUP HELP")
            .skip_if(redis_before_7_2, HELP_LAST_LINE),
        WireCase::new("a pipeline mixing stream, keyspace and failing commands")
            .pipeline(&[
                "PING",
                "XADD s 1-0 a 1",
                "XADD s 2-0 b 2",
                "XADD s 2-0 b 2",
                "XGROUP CREATE s g 0",
                "XREADGROUP GROUP g c STREAMS s >",
                "XPENDING s g - + 10",
                "XACK s g 1-0 2-0",
                "SET str x",
                "XLEN str",
                "NOSUCHCOMMAND x",
                "XLEN",
                "TYPE s",
                "EXISTS s str",
                "XINFO GROUPS s",
                "XREAD STREAMS s 1-0",
                "DEL str",
                "DBSIZE",
            ])
            .pipeline(&["XDEL s 1-0", "XRANGE s - +", "XTRIM s MAXLEN 0", "XLEN s"]),
        WireCase::new("MULTI/EXEC with stream commands, BLOCK inside does not block")
            .multi(&[
                "XADD s 1-0 f v",
                "XADD s 2-0 f v",
                "XGROUP CREATE s g 0",
                "XREADGROUP GROUP g c COUNT 1 STREAMS s >",
                "XACK s g 1-0",
                "XREADGROUP GROUP g c STREAMS s >",
                "XPENDING s g - + 10",
                "XREAD BLOCK 0 STREAMS s $",
                "XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
                "XINFO GROUPS s",
            ])
            .cmd("XPENDING s g"),
        WireCase::new("MULTI/EXEC: runtime errors stay inside the EXEC array")
            .fill("s", 1, 1)
            .multi(&[
                "SET str x",
                "XADD str 1-0 f v",
                "XREADGROUP GROUP nog c STREAMS s >",
                "XADD s 0-0 f v",
                "XLEN s",
                "XGROUP CREATE s g $",
                "XGROUP CREATE s g $",
            ]),
        WireCase::new("MULTI/EXEC: queue-time errors abort, DISCARD, nesting, WATCH")
            .pipeline(&["MULTI", "XADD s 3-0 f v", "XADD s", "EXEC", "XLEN s"])
            .pipeline(&["MULTI", "XADD s 3-0 f v", "FOO x", "EXEC", "XLEN s"])
            .pipeline(&["MULTI", "XADD s 9-0 f v", "DISCARD", "XLEN s"])
            .pipeline(&["EXEC", "DISCARD"])
            .pipeline(&["WATCH s", "XADD s 5-0 f v", "MULTI", "XLEN s", "EXEC"])
            .pipeline(&["WATCH s", "MULTI", "XLEN s", "EXEC"]),
        WireCase::new("MULTI inside MULTI")
            .pipeline(&["MULTI", "MULTI", "XLEN s", "EXEC"])
            .skip_if(is_valkey, MULTI_NESTED),
        WireCase::new("node limits set over the wire")
            .cmd("CONFIG SET stream-node-max-entries 2")
            .fill("s", 1, 7)
            .cmd("XINFO STREAM s")
            .cmd("XDEL s 3-0 4-0")
            .cmd("XINFO STREAM s")
            .cmd("XTRIM s MAXLEN ~ 1")
            .cmd("XINFO STREAM s"),
        WireCase::new("errors that echo CR and LF stay one line")
            .argv(&["XADD", "k\r\n", "1-0", "f", "v"])
            .argv(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "k\r\n", ">"])
            .argv(&["XGROUP", "x\ny"])
            .argv(&["XCLAIM", "k\r\n", "g", "c", "0", "1-0"])
            .cmd("PING"),
        WireCase::new("XREAD + on an empty stream at 0-0 reads nothing")
            .cmd("XGROUP CREATE e g $ MKSTREAM")
            .cmd("XREAD STREAMS e +")
            .skip_if(lacks_xread_plus_8_8, XREAD_PLUS_8_8),
    ]
}

/// SHUTDOWN's refusals (a case that shut down would stop the peer): ABORT with nothing in
/// progress, illegal combinations, and inside MULTI (Redis's `no-multi`, failing EXEC).
fn shutdown_cases() -> Vec<WireCase> {
    vec![
        WireCase::new("SHUTDOWN refused")
            .cmd("SHUTDOWN ABORT")
            .cmd("shutdown abort")
            .cmd("SHUTDOWN SAVE NOSAVE")
            .cmd("SHUTDOWN NOW ABORT")
            .cmd("SHUTDOWN ABORT FORCE")
            .cmd("SHUTDOWN SOON")
            .multi(&["XADD s 1-0 f v", "SHUTDOWN NOSAVE"])
            .cmd("XLEN s")
            .cmd("PING"),
    ]
}

fn run_cases(kind: PeerKind, bugs: bool) {
    let all: Vec<WireCase> = cases()
        .into_iter()
        .chain(shutdown_cases())
        .filter(|c| c.engine_bug.is_some() == bugs)
        .collect();
    run_these(kind, &all);
}

fn run_these(kind: PeerKind, all: &[WireCase]) {
    let Some(mut differ) = WireDiffer::start(kind) else {
        return;
    };
    let peer = differ.info();
    let mut failures = Vec::new();
    for case in all {
        if let Some(skip) = case.skip.as_ref().filter(|s| (s.applies)(&peer)) {
            eprintln!("wire case {:?} skipped on {peer}: {}", case.name, skip.why);
            continue;
        }
        for protocol in [2, 3] {
            let outcome = differ
                .reset(protocol)
                .and_then(|()| case.batches.iter().try_for_each(|b| send(&mut differ, b)));
            if let Err(mismatch) = outcome {
                failures.push(format!("wire case {:?}: {mismatch}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {} wire cases x 2 protocols on {peer}:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn wire_cases_match_redis() {
    run_cases(PeerKind::Redis, false);
}

/// Unknown commands: Redis 8.8 shows the first arguments only of a call that has some (7.0
/// and Valkey 8.1 add an empty "with args beginning with:" to a call without).
fn unknown_command_cases() -> Vec<WireCase> {
    vec![
        WireCase::new("unknown commands with and without arguments")
            .cmd("xfoo")
            .cmd("xfoo ''")
            .cmd("NOSUCH a b")
            .pipeline(&["PING", "NOSUCH", "NOSUCH x", "PING"])
            .multi(&["SET k 1", "NOSUCH"])
            .cmd("GET k"),
    ]
}

#[test]
fn unknown_commands_match_redis8() {
    run_these(PeerKind::Redis8, &unknown_command_cases());
}

#[test]
fn shutdown_refusals_match_redis8() {
    run_these(PeerKind::Redis8, &shutdown_cases());
}

#[test]
fn wire_cases_match_valkey() {
    run_cases(PeerKind::Valkey, false);
}

#[test]
fn fixed_wire_bugs_stay_fixed_against_valkey() {
    run_cases(PeerKind::Valkey, true);
}

/// How a random sequence's commands go out: each plan's commands as one batch kind.
#[derive(Debug, Clone, Copy)]
enum Send {
    One,
    Pipeline,
    Transaction,
}

fn send_kind() -> impl Strategy<Value = Send> {
    prop_oneof![
        3 => Just(Send::One),
        2 => Just(Send::Pipeline),
        1 => Just(Send::Transaction),
    ]
}

/// A sequence: protocol, group plans, and for each run of plans how it is sent and how many
/// plans it spans.
fn wire_sequence() -> impl Strategy<Value = (bool, Vec<Op>, Vec<(Send, u8)>)> {
    (
        any::<bool>(),
        group_random::sequence(),
        prop::collection::vec((send_kind(), 1u8..6), 1..40),
    )
}

fn run_wire_sequence(
    differ: &mut WireDiffer,
    resp3: bool,
    ops: &[Op],
    sends: &[(Send, u8)],
) -> Result<(), Mismatch> {
    differ.reset(if resp3 { 3 } else { 2 })?;
    let peer = differ.info();
    for argv in group_random::SETUP {
        differ.run(&argv)?;
    }
    let mut plans = ops.iter();
    for &(how, span) in sends.iter().cycle() {
        // Plans of one batch are rendered against the state before it is sent.
        let keyspace = differ.ours().keyspace().clone();
        let batch: Vec<Vec<Vec<u8>>> = plans
            .by_ref()
            .take(usize::from(span))
            .flat_map(|op| group_random::render(op, &keyspace, &peer))
            .collect();
        if batch.is_empty() {
            break;
        }
        match how {
            Send::One => batch
                .iter()
                .try_for_each(|argv| differ.run(argv).map(drop))?,
            Send::Pipeline => differ.pipeline(&batch)?,
            Send::Transaction => differ.transaction(&batch)?,
        }
    }
    // The state no reply showed in full.
    for key in KEYS {
        differ.run(&["XRANGE", key, "-", "+"])?;
        differ.run(&["XINFO", "GROUPS", key])?;
        for group in GROUPS {
            differ.run(&["XPENDING", key, group, "-", "+", "1000"])?;
            if !redis_before_7_2(&peer) {
                differ.run(&["XINFO", "CONSUMERS", key, group])?;
            }
        }
    }
    Ok(())
}

fn run_random(kind: PeerKind, cases: u32) {
    let Some(mut differ) = WireDiffer::start(kind) else {
        return;
    };
    let peer = differ.info();
    if lacks_lag_fixes(&peer) {
        differ.mask_lag_after_taint();
    }
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if matches!(config.rng_seed, RngSeed::Random) {
        config.rng_seed = RngSeed::Fixed(SEED_DEFAULT);
    }
    config.failure_persistence = None;
    config.max_shrink_iters = 1000;
    config.max_shrink_time = 120_000;
    let seed = config.rng_seed;
    let differ = std::cell::RefCell::new(differ);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&wire_sequence(), |(resp3, ops, sends)| {
        run_wire_sequence(&mut differ.borrow_mut(), resp3, &ops, &sends)
            .map_err(|mismatch| TestCaseError::fail(mismatch.to_string()))
    });
    if let Err(e) = result {
        panic!("wire random sequences vs {peer} ({seed:?}, set PROPTEST_RNG_SEED to vary): {e}");
    }
}

#[test]
fn wire_random_sequences_match_redis() {
    run_random(PeerKind::Redis, RANDOM_SEQUENCES_REDIS);
}

#[test]
fn wire_random_sequences_match_valkey() {
    run_random(PeerKind::Valkey, RANDOM_SEQUENCES_VALKEY);
}

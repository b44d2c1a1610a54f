//! Hand-written differential cases: a name, the commands, and the servers a case does not apply
//! to (with the documented reason), plus the runner every command family shares.

use crate::support::differ::Differ;
use crate::support::peer::{PeerInfo, PeerKind};

/// One scripted case.
#[derive(Debug)]
pub struct Case {
    /// What the case shows (printed on failure).
    pub name: &'static str,
    /// The commands, in order.
    pub steps: Vec<Vec<Vec<u8>>>,
    /// Servers the case does not apply to, and why.
    pub skip: Option<Skip>,
    /// A known engine bug the case shows: it runs only in the ignored `*_engine_bugs` tests
    /// until the engine is fixed.
    pub engine_bug: Option<&'static str>,
}

/// A documented reason not to run a case against some server.
#[derive(Debug)]
pub struct Skip {
    /// Whether the server is one the case does not apply to.
    pub applies: fn(&PeerInfo) -> bool,
    /// The reference section that documents the difference (see `known_differences`).
    pub why: &'static str,
}

impl Case {
    /// A case with no commands yet.
    pub fn new(name: &'static str) -> Case {
        Case {
            name,
            steps: Vec::new(),
            skip: None,
            engine_bug: None,
        }
    }

    /// A command written as space-separated words (none of them empty or containing spaces).
    pub fn cmd(mut self, line: &str) -> Case {
        self.steps.push(
            line.split_whitespace()
                .map(|w| w.as_bytes().to_vec())
                .collect(),
        );
        self
    }

    /// A command given argument by argument.
    pub fn argv(mut self, argv: &[&str]) -> Case {
        self.steps
            .push(argv.iter().map(|a| a.as_bytes().to_vec()).collect());
        self
    }

    /// `XADD key <i>-0 f <i>` for `i` in `from..=to`.
    pub fn fill(mut self, key: &str, from: u64, to: u64) -> Case {
        for i in from..=to {
            self = self.cmd(&format!("XADD {key} {i}-0 f {i}"));
        }
        self
    }

    /// Node limits on both sides.
    pub fn nodes(self, entries_max: u64, bytes_max: u64) -> Case {
        self.cmd(&format!("CONFIG SET stream-node-max-entries {entries_max}"))
            .cmd(&format!("CONFIG SET stream-node-max-bytes {bytes_max}"))
    }

    /// Not run against servers for which `applies` is true, for the documented reason `why`.
    pub fn skip_if(mut self, applies: fn(&PeerInfo) -> bool, why: &'static str) -> Case {
        self.skip = Some(Skip { applies, why });
        self
    }

    /// Marks the case as showing a known engine bug (described by `why`, as reported).
    pub fn engine_bug(mut self, why: &'static str) -> Case {
        self.engine_bug = Some(why);
        self
    }

    /// Whether the case is skipped on `peer`, printing why if so.
    pub fn skipped_on(&self, peer: &PeerInfo) -> bool {
        match self.skip.as_ref().filter(|s| (s.applies)(peer)) {
            Some(skip) => {
                eprintln!("case {:?} skipped on {peer}: {}", self.name, skip.why);
                true
            }
            None => false,
        }
    }
}

/// Runs every case not marked [`Case::engine_bug`] on one server, each from an empty server
/// and engine: every reply compared, after every command the stream and group state of the
/// keys it named, and at the end every key touched. Collects every mismatch before failing.
pub fn run_cases(kind: PeerKind, all: &[Case]) {
    run(
        kind,
        all.iter().filter(|c| c.engine_bug.is_none()).collect(),
    );
}

/// Runs the cases marked [`Case::engine_bug`], as [`run_cases`] does; they fail until the bugs
/// are fixed.
pub fn run_engine_bug_cases(kind: PeerKind, all: &[Case]) {
    run(
        kind,
        all.iter().filter(|c| c.engine_bug.is_some()).collect(),
    );
}

fn run(kind: PeerKind, all: Vec<&Case>) {
    let Some(mut differ) = Differ::start(kind) else {
        return;
    };
    let peer = differ.info();
    let mut failures = Vec::new();
    for case in &all {
        if case.skipped_on(&peer) {
            continue;
        }
        differ.reset();
        let outcome = case
            .steps
            .iter()
            .try_for_each(|argv| {
                differ.run_and_check(argv)?;
                differ.check_invariants()
            })
            .and_then(|()| differ.check_all());
        if let Err(mismatch) = outcome {
            let bug = case
                .engine_bug
                .map_or(String::new(), |why| format!(" (known engine bug: {why})"));
            failures.push(format!("case {:?}{bug}: {mismatch}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ on {peer}:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

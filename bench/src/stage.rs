//! The streams of one size, one per target, and what the bench knows about their contents.
//!
//! Invariant: target `t`'s stream holds exactly the timeline entries `lo[t]..hi[t]` (trims
//! remove from the head, appends add at the tail), so a window's instants, a trim's `MINID`
//! and the next append's id follow from two numbers without reading the stream.

use std::time::Duration;

use super::args::BenchArgs;
use super::cleanup::RunKeys;
use super::error::BenchError;
use super::loader::{self, Payload};
use super::target::Target;
use super::timeline::Timeline;

/// One stream size across every target.
#[derive(Debug)]
pub struct Stage<'a> {
    /// The targets, measured in this order within every round.
    pub targets: &'a mut [Target],
    /// The run's key names.
    pub keys: &'a RunKeys,
    /// Entries' fields.
    pub payload: &'a Payload,
    /// Entries' ids.
    pub timeline: Timeline,
    /// The size being measured.
    pub entries: u64,
    /// The options.
    pub args: &'a BenchArgs,
    /// First live entry of each target's stream.
    pub lo: Vec<u64>,
    /// One past the last entry of each target's stream.
    pub hi: Vec<u64>,
}

impl<'a> Stage<'a> {
    /// A stage whose streams are not loaded yet.
    pub fn new(
        targets: &'a mut [Target],
        keys: &'a RunKeys,
        payload: &'a Payload,
        entries: u64,
        args: &'a BenchArgs,
    ) -> Stage<'a> {
        let n = targets.len();
        Stage {
            targets,
            keys,
            payload,
            timeline: Timeline::ending_now(entries, args.rate),
            entries,
            args,
            lo: vec![0; n],
            hi: vec![0; n],
        }
    }

    /// The stream name of target `t` (the feed's `name` argument).
    pub fn name(&self, t: usize) -> String {
        self.keys.name(t, self.entries)
    }

    /// The full key of target `t`'s stream.
    pub fn key(&self, t: usize) -> String {
        self.keys.key(&self.name(t))
    }

    /// Live entries of target `t`'s stream.
    pub fn len(&self, t: usize) -> u64 {
        self.hi[t] - self.lo[t]
    }

    /// Appends `count` entries to target `t`'s stream.
    pub fn grow(&mut self, t: usize, count: u64) -> Result<Duration, BenchError> {
        let key = self.key(t);
        let (from, to) = (self.hi[t], self.hi[t] + count);
        let took = loader::load(
            &mut self.targets[t],
            &key,
            self.payload,
            &self.timeline,
            from,
            to,
        )?;
        self.hi[t] = to;
        Ok(took)
    }

    /// Re-reads target `t`'s length after a trim the bench cannot predict (`~`).
    pub fn resync(&mut self, t: usize) -> Result<u64, BenchError> {
        let key = self.key(t);
        let (length, nodes) = self.targets[t].stream_info(&key)?;
        if length > self.hi[t] {
            return Err(BenchError::Server {
                target: self.targets[t].label(),
                message: format!("stream {key} holds {length} entries, more than were added"),
            });
        }
        self.lo[t] = self.hi[t] - length;
        Ok(nodes)
    }
}

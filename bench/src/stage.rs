//! The streams of one size, one per target and queue, and what the bench knows about their
//! contents. Window reads and trims use queue 0; appends and consumes run every queue at once,
//! each from its own handle on the target (`lanes`).
//!
//! Invariant: target `t`'s stream in queue `q` holds exactly the timeline entries
//! `lo[t][q]..hi[t][q]` (trims remove from the head, appends add at the tail), so a window's
//! instants, a trim's `MINID` and the next append's id follow from two numbers without
//! reading the stream.

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
    /// Per target, one handle per queue (connections of their own), for concurrent work.
    pub lanes: &'a mut [Vec<Target>],
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
    /// First live entry of each target's stream in each queue.
    pub lo: Vec<Vec<u64>>,
    /// One past the last entry of each target's stream in each queue.
    pub hi: Vec<Vec<u64>>,
}

impl<'a> Stage<'a> {
    /// A stage whose streams are not loaded yet.
    pub fn new(
        targets: &'a mut [Target],
        lanes: &'a mut [Vec<Target>],
        keys: &'a RunKeys,
        payload: &'a Payload,
        entries: u64,
        args: &'a BenchArgs,
    ) -> Stage<'a> {
        let n = targets.len();
        let queues = args.queues;
        Stage {
            targets,
            lanes,
            keys,
            payload,
            timeline: Timeline::ending_now(entries, args.rate),
            entries,
            args,
            lo: vec![vec![0; queues]; n],
            hi: vec![vec![0; queues]; n],
        }
    }

    /// The stream name of target `t` (the feed's `name` argument; the same in every queue).
    pub fn name(&self, t: usize) -> String {
        self.keys.name(t, self.entries)
    }

    /// The name of target `t`'s queue `q`.
    pub fn queue(&self, t: usize, q: usize) -> &str {
        &self.targets[t].queues[q].name
    }

    /// The full key of target `t`'s stream in queue `q`.
    pub fn key(&self, t: usize, q: usize) -> String {
        echomq::feed::stream_key(self.queue(t, q), &self.name(t))
    }

    /// Live entries of target `t`'s stream in queue `q`.
    pub fn len(&self, t: usize, q: usize) -> u64 {
        self.hi[t][q] - self.lo[t][q]
    }

    /// Appends `count` entries to target `t`'s stream in queue `q`.
    pub fn grow(&mut self, t: usize, q: usize, count: u64) -> Result<Duration, BenchError> {
        let key = self.key(t, q);
        let (from, to) = (self.hi[t][q], self.hi[t][q] + count);
        let took = loader::load(
            &mut self.targets[t],
            &key,
            self.payload,
            &self.timeline,
            from,
            to,
        )?;
        self.hi[t][q] = to;
        Ok(took)
    }

    /// Re-reads target `t`'s length in queue `q` after a trim the bench cannot predict (`~`).
    pub fn resync(&mut self, t: usize, q: usize) -> Result<u64, BenchError> {
        let key = self.key(t, q);
        let (length, nodes) = self.targets[t].stream_info(&key)?;
        if length > self.hi[t][q] {
            return Err(BenchError::Server {
                target: self.targets[t].label(),
                message: format!("stream {key} holds {length} entries, more than were added"),
            });
        }
        self.lo[t][q] = self.hi[t][q] - length;
        Ok(nodes)
    }
}

//! The retention driver: declared trim policies per stream, applied on a beat.
//!
//! A log that only grows is a leak, so retention is a policy, never a default: a
//! [`StreamRetention`] trims exactly the streams declared to it ([`StreamRetention::declare`])
//! and nothing else. Policies are `MaxLen { n, approx }` (keep the newest `n`; `~` trims whole
//! nodes only, so it may keep more than `n` but never fewer) and `MaxAge { age_ms, approx }`
//! (remove entries minted more than `age_ms` before the driver's clock, a `MINID` trim).
//! [`StreamRetention::apply`] runs one pass by hand; [`StreamRetention::start`] runs passes on
//! a beat thread. A manual [`Feed::trim`] call is equally supported and needs no driver.
//!
//! **The seam.** The driver trims only through [`Trimmer`], which [`Feed`] implements with its
//! public [`Feed::trim`], never with a raw XTRIM on a backend. Whatever `Feed::trim` does
//! before it removes entries (the archive folds a slice durably before its trim)
//! the driver does too, with no change here.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use echomq_engine::{Clock, SystemClock};
use parking_lot::{Condvar, Mutex};
use time::OffsetDateTime;
use tracing::{debug, warn};

use super::backend::Backend;
use super::error::FeedError;
use super::{Feed, TrimPolicy};

/// What the driver trims through: the feed's public trim.
pub trait Trimmer: Send + Sync {
    /// Trims `queue`'s stream `name` by `policy`; returns the entries removed.
    fn trim(&self, queue: &str, name: &str, policy: TrimPolicy) -> Result<u64, FeedError>;
}

impl<B: Backend> Trimmer for Feed<B> {
    fn trim(&self, queue: &str, name: &str, policy: TrimPolicy) -> Result<u64, FeedError> {
        Feed::trim(self, queue, name, policy)
    }
}

impl<T: Trimmer + ?Sized> Trimmer for Arc<T> {
    fn trim(&self, queue: &str, name: &str, policy: TrimPolicy) -> Result<u64, FeedError> {
        (**self).trim(queue, name, policy)
    }
}

/// A declared policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetentionPolicy {
    /// Keep the newest `n` entries (`MAXLEN [~] n`).
    MaxLen {
        /// Entries to keep.
        n: u64,
        /// `~`: whole nodes only (never fewer than `n` kept). The safe default.
        approx: bool,
    },
    /// Remove entries minted more than `age_ms` before now (`MINID [~] <now - age>`).
    MaxAge {
        /// The age past which entries go.
        age_ms: u64,
        /// `~`: whole nodes only (never removes an entry younger than the age).
        approx: bool,
    },
}

impl RetentionPolicy {
    /// The trim this policy asks for at `now_ms`.
    pub fn at(self, now_ms: u64) -> Result<TrimPolicy, FeedError> {
        Ok(match self {
            RetentionPolicy::MaxLen { n, approx } => TrimPolicy::MaxLen { n, approx },
            RetentionPolicy::MaxAge { age_ms, approx } => {
                let cut_ms = now_ms.saturating_sub(age_ms);
                let before =
                    OffsetDateTime::from_unix_timestamp_nanos(i128::from(cut_ms) * 1_000_000)
                        .map_err(|e| FeedError::Backend(format!("retention cut-off: {e}")))?;
                TrimPolicy::MinId { before, approx }
            }
        })
    }
}

/// One stream's result in a pass.
#[derive(Debug)]
pub struct Trimmed {
    /// The queue.
    pub queue: String,
    /// The stream's name.
    pub stream: String,
    /// Entries removed, or why the trim failed (the next pass tries again).
    pub result: Result<u64, FeedError>,
}

/// The driver's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionMetrics {
    /// Passes run (by hand or on the beat).
    pub passes: u64,
    /// Entries removed, all streams, all passes.
    pub removed: u64,
    /// Trims that failed.
    pub errors: u64,
}

#[derive(Debug, Default)]
struct Counters {
    passes: AtomicU64,
    removed: AtomicU64,
    errors: AtomicU64,
}

/// The beat thread's stop signal.
#[derive(Debug, Default)]
struct Stop {
    stopped: Mutex<bool>,
    condvar: Condvar,
}

/// A named retention driver over a [`Trimmer`] (usually an `Arc<Feed<B>>`).
pub struct StreamRetention<T> {
    name: String,
    target: T,
    clock: Arc<dyn Clock>,
    policies: Mutex<BTreeMap<(String, String), RetentionPolicy>>,
    counters: Counters,
}

impl<T> fmt::Debug for StreamRetention<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamRetention")
            .field("name", &self.name)
            .field("policies", &*self.policies.lock())
            .finish_non_exhaustive()
    }
}

impl<T: Trimmer> StreamRetention<T> {
    /// A driver called `name` (for its events) trimming through `target`, ages by the wall
    /// clock.
    pub fn new(name: &str, target: T) -> StreamRetention<T> {
        StreamRetention::with_clock(name, target, Arc::new(SystemClock))
    }

    /// A driver reading ages from `clock`.
    pub fn with_clock(name: &str, target: T, clock: Arc<dyn Clock>) -> StreamRetention<T> {
        StreamRetention {
            name: name.to_string(),
            target,
            clock,
            policies: Mutex::new(BTreeMap::new()),
            counters: Counters::default(),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Declares (or replaces) the policy of `queue`'s stream `stream`; returns the previous.
    pub fn declare(
        &self,
        queue: &str,
        stream: &str,
        policy: RetentionPolicy,
    ) -> Option<RetentionPolicy> {
        self.policies
            .lock()
            .insert((queue.to_string(), stream.to_string()), policy)
    }

    /// Stops trimming a stream; returns its policy.
    pub fn forget(&self, queue: &str, stream: &str) -> Option<RetentionPolicy> {
        self.policies
            .lock()
            .remove(&(queue.to_string(), stream.to_string()))
    }

    /// The declared policies, by queue and stream.
    pub fn policies(&self) -> Vec<(String, String, RetentionPolicy)> {
        self.policies
            .lock()
            .iter()
            .map(|((q, s), p)| (q.clone(), s.clone(), *p))
            .collect()
    }

    /// Runs one pass: trims every declared stream by its policy, one after another; a failure
    /// on one stream does not stop the others.
    pub fn apply(&self) -> Vec<Trimmed> {
        let now_ms = self.clock.now_ms();
        let declared = self.policies();
        let mut out = Vec::with_capacity(declared.len());
        for (queue, stream, policy) in declared {
            let result = policy
                .at(now_ms)
                .and_then(|trim| self.target.trim(&queue, &stream, trim));
            match &result {
                Ok(n) => {
                    self.counters.removed.fetch_add(*n, Ordering::Relaxed);
                    debug!(driver = %self.name, %queue, %stream, removed = n, "retention trim");
                }
                Err(e) => {
                    self.counters.errors.fetch_add(1, Ordering::Relaxed);
                    warn!(driver = %self.name, %queue, %stream, error = %e, "retention trim failed");
                }
            }
            out.push(Trimmed {
                queue,
                stream,
                result,
            });
        }
        self.counters.passes.fetch_add(1, Ordering::Relaxed);
        out
    }

    /// Its counters now.
    pub fn metrics(&self) -> RetentionMetrics {
        RetentionMetrics {
            passes: self.counters.passes.load(Ordering::Relaxed),
            removed: self.counters.removed.load(Ordering::Relaxed),
            errors: self.counters.errors.load(Ordering::Relaxed),
        }
    }
}

impl<T: Trimmer + 'static> StreamRetention<T> {
    /// Runs a pass every `interval` (real time) on a thread of its own, the first one right
    /// away, until the returned beat is stopped or dropped.
    pub fn start(self: &Arc<Self>, interval: Duration) -> Result<RetentionBeat, std::io::Error> {
        let stop = Arc::new(Stop::default());
        let (driver, signal) = (Arc::clone(self), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name(format!("emq-retention-{}", self.name))
            .spawn(move || {
                loop {
                    driver.apply();
                    let mut stopped = signal.stopped.lock();
                    if !*stopped {
                        signal.condvar.wait_for(&mut stopped, interval);
                    }
                    if *stopped {
                        break;
                    }
                }
            })?;
        Ok(RetentionBeat {
            stop,
            thread: Some(thread),
        })
    }
}

/// A running retention beat; stops (and joins) when stopped or dropped.
#[derive(Debug)]
pub struct RetentionBeat {
    stop: Arc<Stop>,
    thread: Option<JoinHandle<()>>,
}

impl RetentionBeat {
    /// Stops the beat after the pass in progress, if any.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        *self.stop.stopped.lock() = true;
        self.stop.condvar.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RetentionBeat {
    fn drop(&mut self) {
        self.shut_down();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trimmer that only records what it is asked: the driver can reach streams through
    /// nothing else, which is the seam the archive's fold-before-trim relies on.
    #[derive(Default)]
    struct Seam(Mutex<Vec<(String, String, TrimPolicy)>>);

    impl Trimmer for Seam {
        fn trim(&self, queue: &str, name: &str, policy: TrimPolicy) -> Result<u64, FeedError> {
            self.0
                .lock()
                .push((queue.to_string(), name.to_string(), policy));
            if name == "broken" {
                return Err(FeedError::Backend("disk full".into()));
            }
            Ok(1)
        }
    }

    #[test]
    fn every_pass_trims_each_declared_stream_through_the_trimmer_and_nothing_else() {
        let clock = Arc::new(echomq_engine::ManualClock::new(10_000));
        let driver = StreamRetention::with_clock("seam", Arc::new(Seam::default()), clock);
        let keep = RetentionPolicy::MaxLen { n: 3, approx: true };
        driver.declare("cm", "events", keep);
        driver.declare("cm", "broken", keep);
        let pass = driver.apply();
        assert_eq!(pass.len(), 2);
        assert!(
            pass.iter()
                .any(|t| t.stream == "broken" && t.result.is_err())
        );
        let calls = driver.target.0.lock().clone();
        let expected = TrimPolicy::MaxLen { n: 3, approx: true };
        assert_eq!(
            calls,
            vec![
                ("cm".to_string(), "broken".to_string(), expected),
                ("cm".to_string(), "events".to_string(), expected),
            ]
        );
        assert_eq!(
            driver.metrics(),
            RetentionMetrics {
                passes: 1,
                removed: 1,
                errors: 1
            }
        );
    }

    #[test]
    fn an_age_policy_cuts_at_now_minus_the_age_and_never_before_the_epoch() {
        let policy = RetentionPolicy::MaxAge {
            age_ms: 1_000,
            approx: true,
        };
        let TrimPolicy::MinId { before, approx } = policy.at(5_000).unwrap() else {
            panic!("an age is a MINID trim");
        };
        assert!(approx);
        assert_eq!(before.unix_timestamp_nanos(), 4_000 * 1_000_000);
        let TrimPolicy::MinId { before, .. } = policy.at(10).unwrap() else {
            panic!("an age is a MINID trim");
        };
        assert_eq!(before.unix_timestamp_nanos(), 0);
        assert_eq!(
            RetentionPolicy::MaxLen {
                n: 5,
                approx: false
            }
            .at(1)
            .unwrap(),
            TrimPolicy::MaxLen {
                n: 5,
                approx: false
            }
        );
    }
}

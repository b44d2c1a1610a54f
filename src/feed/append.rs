//! Appends: [`Feed::append`], [`Feed::append_bytes`] and [`Feed::append_retrying`].
//!
//! An append mints the next branded id of the stream's writer (under the writer's lock, so a
//! feed's threads append in mint order) and stores the entry at that id, the `id` field first.
//! When another writer moved the stream's top past the mint, the writer re-reads the top and
//! mints again (at most [`APPEND_ATTEMPTS_MAX`] times).
//!
//! Recorded appends: over a backend whose [`Backend::records_appends`] is true (the embedded
//! engine, `echomq serve`, Redis 8.6.2 and later), every append is stored together with an
//! IDMP record `(producer, branded id) -> stream id` (XADD and XIDMPRECORD in one MULTI/EXEC),
//! under the feed's producer id ([`Feed::producer`]). That is what makes a retry safe:
//! [`Feed::append_retrying`] resends an append whose outcome is unknown (the connection broke,
//! the reply timed out) with the *same* branded id, and
//! - if the first attempt never ran, the retry stores it: one entry;
//! - if it ran, the retry's XADD is refused (the id is not above the top) while its
//!   XIDMPRECORD finds the entry, which is read back and compared with what was sent (the
//!   record alone cannot tell this writer's entry from another writer's at the same id): the
//!   caller gets the original receipt and nothing is written twice;
//! - if it never ran and another writer moved the top past it, XIDMPRECORD finds no entry:
//!   the append is minted again (it was never stored, so this is no duplicate).
//!
//! Why not `XADD … IDMP`: Redis accepts IDMP only with `*` ids, and the feed's stream ids are
//! its minted branded ids. Limits: an entry trimmed or deleted between an attempt that stored
//! it and the retry is not found, and the append is stored again; an entry of another writer
//! with the same id *and* the same fields is taken as this append's (they are the same record).
//!
//! Over older servers (Redis before 8.6.2, Valkey) appends are plain XADDs, as before this
//! module: [`Feed::idempotent_appends`] says `false`, and [`Feed::append_retrying`] retries
//! only failures that happened before anything was sent ([`FeedError::is_unsent`]); any other
//! failure is returned, since a retry could write the entry twice.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use echomq_engine::StreamId;

use super::backend::{Backend, Recorded};
use super::brand::Branded;
use super::error::FeedError;
use super::{Feed, ID_FIELD, stream_key};

/// How often an append re-reads the stream top after another writer got there first.
const APPEND_ATTEMPTS_MAX: usize = 8;

/// How [`Feed::append_retrying`] retries: retryable failures ([`FeedError::is_retryable`])
/// are retried after a backoff that doubles from `first_backoff` up to `max_backoff`, until
/// `deadline` has passed since the call began; then the last failure is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How long the whole call may keep retrying.
    pub deadline: Duration,
    /// The first wait.
    pub first_backoff: Duration,
    /// The longest wait.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// Ten seconds of retries, waiting 10 ms, 20 ms, ... up to one second.
    fn default() -> RetryPolicy {
        RetryPolicy {
            deadline: Duration::from_secs(10),
            first_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(1),
        }
    }
}

/// A producer id unique to this feed instance: process, start time and a counter.
pub(super) fn default_producer() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "emq-feed:{}:{nanos:x}:{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The waits of one call under a policy (none without one).
struct Backoff<'a> {
    policy: Option<&'a RetryPolicy>,
    started: Instant,
    next: Duration,
}

impl Backoff<'_> {
    fn new(policy: Option<&RetryPolicy>) -> Backoff<'_> {
        Backoff {
            policy,
            started: Instant::now(),
            next: policy.map_or(Duration::ZERO, |p| p.first_backoff),
        }
    }

    /// Whether to retry after `error`: waits first and says yes when it is retryable and the
    /// deadline has not passed.
    fn wait(&mut self, error: &FeedError) -> bool {
        let Some(policy) = self.policy else {
            return false;
        };
        let left = policy.deadline.saturating_sub(self.started.elapsed());
        if !error.is_retryable() || left.is_zero() {
            return false;
        }
        std::thread::sleep(self.next.min(left));
        self.next = self.next.saturating_mul(2).min(policy.max_backoff);
        true
    }

    /// `call` until it succeeds or fails for good (for calls that write nothing).
    fn read<T>(&mut self, mut call: impl FnMut() -> Result<T, FeedError>) -> Result<T, FeedError> {
        loop {
            match call() {
                Err(e) if self.wait(&e) => {}
                result => return result,
            }
        }
    }
}

impl<B: Backend> Feed<B> {
    /// This feed's IDMP producer id, the one its appends are recorded under.
    pub fn producer(&self) -> &str {
        &self.producer
    }

    /// This feed with another producer id (any non-empty text unique among the stream's
    /// writers; the default is unique per feed instance).
    pub fn with_producer(mut self, producer: impl Into<String>) -> Feed<B> {
        let producer = producer.into();
        if !producer.is_empty() {
            self.producer = producer;
        }
        self
    }

    /// Whether appends are recorded in the stream's IDMP map, so that
    /// [`Feed::append_retrying`] never writes an append twice (asked of the backend once:
    /// true for the embedded engine, `echomq serve`, Redis 8.6.2 and later; false for older
    /// servers and Valkey, where appends are plain XADDs as before).
    pub fn idempotent_appends(&self) -> Result<bool, FeedError> {
        self.backend.records_appends()
    }

    /// Appends an entry; returns its branded id, the receipt. `fields` must not use `id`.
    /// One attempt: a transport failure is returned (see [`Feed::append_retrying`]).
    pub fn append(
        &self,
        queue: &str,
        name: &str,
        fields: &[(&str, &str)],
    ) -> Result<Branded, FeedError> {
        let fields = as_bytes(fields);
        self.append_with(queue, name, &fields, None)
    }

    /// [`Feed::append`] with binary fields.
    pub fn append_bytes(
        &self,
        queue: &str,
        name: &str,
        fields: &[(&[u8], &[u8])],
    ) -> Result<Branded, FeedError> {
        self.append_with(queue, name, fields, None)
    }

    /// [`Feed::append`], retrying retryable failures ([`FeedError::is_retryable`]) under
    /// `policy`. Over a backend that
    /// records appends ([`Feed::idempotent_appends`]) every retry resends the same branded id,
    /// so the call returns the receipt of the one entry stored, however many attempts ran
    /// (see the module docs for the limits). Over one that does not, only failures before
    /// anything was sent are retried.
    pub fn append_retrying(
        &self,
        queue: &str,
        name: &str,
        fields: &[(&str, &str)],
        policy: &RetryPolicy,
    ) -> Result<Branded, FeedError> {
        let fields = as_bytes(fields);
        self.append_with(queue, name, &fields, Some(policy))
    }

    /// [`Feed::append_retrying`] with binary fields.
    pub fn append_bytes_retrying(
        &self,
        queue: &str,
        name: &str,
        fields: &[(&[u8], &[u8])],
        policy: &RetryPolicy,
    ) -> Result<Branded, FeedError> {
        self.append_with(queue, name, fields, Some(policy))
    }

    fn append_with(
        &self,
        queue: &str,
        name: &str,
        fields: &[(&[u8], &[u8])],
        policy: Option<&RetryPolicy>,
    ) -> Result<Branded, FeedError> {
        if fields.is_empty() {
            return Err(FeedError::NoFields);
        }
        if fields.iter().any(|(f, _)| *f == ID_FIELD.as_bytes()) {
            return Err(FeedError::ReservedField);
        }
        let key = stream_key(queue, name);
        let mut backoff = Backoff::new(policy);
        let writer = backoff.read(|| self.writer(&key))?;
        let recorded = backoff.read(|| self.backend.records_appends())?;
        let _in_mint_order = writer.append.lock();
        let minter = &writer.minter;
        let mut reseeds = 0;
        // An attempt whose outcome is unknown: the next one resends its id.
        let mut pending: Option<Branded> = None;
        loop {
            let id = match pending {
                Some(id) => id,
                None => minter.mint(self.brand, self.clock.now_ms())?,
            };
            let text = id.to_text();
            let mut all: Vec<&[u8]> = Vec::with_capacity(2 * fields.len() + 2);
            all.push(ID_FIELD.as_bytes());
            all.push(&text);
            for (f, v) in fields {
                all.push(f);
                all.push(v);
            }
            let outcome = if recorded {
                self.backend.add_recorded(
                    &key,
                    id.stream_id(),
                    &all,
                    self.producer.as_bytes(),
                    &text,
                )
            } else {
                match self.backend.add(&key, id.stream_id(), &all) {
                    Ok(stored) => Ok(Recorded::Added(stored)),
                    Err(FeedError::IdNotAboveTop(_)) => Ok(Recorded::Absent),
                    Err(e) => Err(e),
                }
            };
            match outcome {
                Ok(Recorded::Added(_)) => return Ok(id),
                Ok(Recorded::Exists)
                    if pending.is_some()
                        && backoff.read(|| self.stored_as(&key, id.stream_id(), &all))? =>
                {
                    return Ok(id);
                }
                // Another writer moved the stream top: catch up and mint again.
                Ok(Recorded::Exists | Recorded::Absent) => {
                    if reseeds == APPEND_ATTEMPTS_MAX {
                        return Err(FeedError::IdNotAboveTop(format!(
                            "{key}: other writers moved the stream top past {reseeds} mints in a row"
                        )));
                    }
                    reseeds += 1;
                    pending = None;
                    if let Some(meta) = backoff.read(|| self.backend.meta(&key))? {
                        minter.seed(meta.last_id);
                    }
                }
                Err(e) if (recorded || e.is_unsent()) && backoff.wait(&e) => {
                    pending = Some(id);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether the entry at `id` holds exactly `all` (the `id` field and the payload).
    fn stored_as(&self, key: &str, id: StreamId, all: &[&[u8]]) -> Result<bool, FeedError> {
        let entries = self.backend.range(key, id, id, Some(1), false)?;
        Ok(entries.first().is_some_and(|entry| {
            entry.id == id
                && entry.fields.len() * 2 == all.len()
                && entry
                    .fields
                    .iter()
                    .zip(all.chunks(2))
                    .all(|((f, v), pair)| pair == [f, v])
        }))
    }
}

fn as_bytes<'a>(fields: &[(&'a str, &'a str)]) -> Vec<(&'a [u8], &'a [u8])> {
    fields
        .iter()
        .map(|(f, v)| (f.as_bytes(), v.as_bytes()))
        .collect()
}

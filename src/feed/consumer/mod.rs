//! The consumer runtime: a named consumer in a group that hands each entry of a feed stream
//! to a handler, at least once.
//!
//! The reader law (`docs/architecture.md`, "The feed layer"): on start the consumer creates its
//! group if missing, drains its own PEL (`XREADGROUP ... 0`: exactly what it held when it last
//! stopped or crashed), then reads new entries (`>`) with a blocking read. A handler gets a
//! [`Delivery`] `{ id, payload, attempts, group }`; `Ok` acks the entry (XACK, batched), `Err` or a
//! panic leaves it pending. How idle entries are taken over and failures retried depends on the
//! backend, chosen once at start and reported as [`ConsumerMetrics::claim_path`]:
//!
//! - [`ClaimPath::ReadClaim`] (the embedded engine, `echomq serve`, Redis 8.8): every read is
//!   `XREADGROUP … CLAIM claim_idle_ms … >`, which hands out entries idle past the threshold
//!   (a dead peer's) before new ones, with no separate claim call; a handler's `Err` hands
//!   the entry back with `XNACK … FAIL`, so the next read (this consumer's or a peer's)
//!   redelivers it at once, its attempts counted. A panic leaves the entry pending until it
//!   is idle past `claim_idle_ms`, as on the other path (a bug is not worth an at-once retry).
//! - [`ClaimPath::AutoClaim`] (Redis 7, Valkey 8, or `read_claim: false`): a beat reclaims
//!   entries idle past `claim_idle_ms` with XAUTOCLAIM, from a dead peer or this consumer's
//!   own failures, so a failed entry is retried after that threshold.
//!
//! Limit of the CLAIM path: Redis's CLAIM skips a pending id whose entry was deleted from the
//! stream (a ghost) and leaves it pending, so a ghost held by a consumer name that never comes
//! back stays in the PEL (XAUTOCLAIM would have dropped it); its own name's next start acks
//! it away (the backlog drain).
//!
//! Delivery is at least once and a reclaimed entry may arrive after a newer one: handlers
//! must be idempotent, keyed by the branded id ([`crate::feed::dedup`]).
//!
//! Entries the handler never sees: one without a parsable branded `id` field (reported and
//! parked on the dead-letter stream, then acked: never looped on), one delivered more than
//! `max_attempts` times (parked or dropped by the [`PoisonPolicy`]), and one deleted from the
//! stream while pending (acked away).
//!
//! - [`settings`]: [`ConsumerSettings`] and their limits; [`delivery`]: what a handler gets;
//!   [`metrics`]: the counters snapshot; `dead_letter`: the parked-entry layout; `runtime`:
//!   the consumer thread's loop; [`error`]: [`ConsumerError`].
//!
//! The consumer runs on its own thread over [`GroupBackend::dedicated`] (its own connection to
//! a server). [`StreamConsumer::stop`], or dropping the handle, raises its interrupt and joins
//! it: on the embedded engine at once, against a server within one BLOCK time.

mod dead_letter;
pub mod delivery;
pub mod error;
pub mod metrics;
mod runtime;
pub mod settings;

use std::fmt::Display;
use std::sync::Arc;
use std::thread::JoinHandle;

use echomq_engine::StreamId;

use crate::feed::backend::{GroupBackend, Interrupt};
use crate::feed::stream_key;

pub use delivery::{Delivery, GroupName, Origin};
pub use error::ConsumerError;
pub use metrics::{ClaimPath, ConsumerMetrics};
pub use settings::{BATCH_SIZE_MAX, BLOCK_MS_MAX, ConsumerSettings, GroupLost, PoisonPolicy};

use metrics::Counters;
use runtime::Worker;

/// Which stream a consumer reads, in which group, under which name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The queue (`cm`): the stream key is `emq:{<queue>}:stream:<stream>`.
    pub queue: String,
    /// The stream's name in the queue (`events`).
    pub stream: String,
    /// The consumer group.
    pub group: String,
    /// This consumer's name in the group: restart with the same name to resume its backlog.
    pub consumer: String,
}

impl Subscription {
    /// A subscription of `consumer` in `group` to `queue`'s stream `stream`.
    pub fn new(queue: &str, stream: &str, group: &str, consumer: &str) -> Subscription {
        Subscription {
            queue: queue.to_string(),
            stream: stream.to_string(),
            group: group.to_string(),
            consumer: consumer.to_string(),
        }
    }

    /// The stream's key.
    pub fn key(&self) -> String {
        stream_key(&self.queue, &self.stream)
    }

    fn check(&self) -> Result<(), ConsumerError> {
        for (value, what) in [
            (&self.queue, "queue"),
            (&self.stream, "stream"),
            (&self.group, "group"),
            (&self.consumer, "consumer"),
        ] {
            if value.is_empty() {
                return Err(ConsumerError::EmptyName(what));
            }
        }
        Ok(())
    }
}

/// A running consumer. Stop it with [`StreamConsumer::stop`]; dropping it stops it too.
#[derive(Debug)]
pub struct StreamConsumer {
    subscription: Subscription,
    counters: Arc<Counters>,
    interrupt: Arc<Interrupt>,
    thread: Option<JoinHandle<Result<(), ConsumerError>>>,
}

impl StreamConsumer {
    /// Creates the group if missing (from `settings.start`, with MKSTREAM), then starts the
    /// consumer's thread. Returns once the group exists, so every entry appended after this
    /// returns is delivered.
    pub fn start<B, F, E>(
        backend: &B,
        subscription: Subscription,
        settings: ConsumerSettings,
        handler: F,
    ) -> Result<StreamConsumer, ConsumerError>
    where
        B: GroupBackend + 'static,
        F: FnMut(Delivery) -> Result<(), E> + Send + 'static,
        E: Display,
    {
        settings.validate()?;
        subscription.check()?;
        let backend = backend.dedicated()?;
        let key = subscription.key();
        backend.create_group(&key, &subscription.group, settings.start)?;
        let dead_key = stream_key(
            &subscription.queue,
            &settings
                .dead_letter_stream
                .clone()
                .unwrap_or_else(|| format!("{}:dead", subscription.stream)),
        );
        // Once per consumer: the path cannot change under a running consumer.
        let claim_path = if settings.read_claim && backend.claims_on_read(&key)? {
            ClaimPath::ReadClaim
        } else {
            ClaimPath::AutoClaim
        };
        let counters = Arc::new(Counters::on(claim_path));
        let interrupt = Arc::new(Interrupt::new());
        let clock = backend.clock();
        let worker = Worker {
            backend,
            key,
            dead_key,
            group: GroupName::new(&subscription.group),
            consumer: subscription.consumer.clone(),
            backoff_ms: settings.retry_backoff_ms,
            settings,
            handler,
            counters: Arc::clone(&counters),
            interrupt: Arc::clone(&interrupt),
            clock,
            claim_cursor: StreamId::MIN,
            last_beat_ms: 0,
            recreated: false,
            acks: Vec::new(),
            nacks: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name(format!("emq-consumer-{}", subscription.consumer))
            .spawn(move || worker.run())
            .map_err(ConsumerError::Spawn)?;
        Ok(StreamConsumer {
            subscription,
            counters,
            interrupt,
            thread: Some(thread),
        })
    }

    /// What it reads.
    pub fn subscription(&self) -> &Subscription {
        &self.subscription
    }

    /// Its counters now.
    pub fn metrics(&self) -> ConsumerMetrics {
        self.counters.snapshot()
    }

    /// How it reclaims and retries (chosen at start from what the backend has).
    pub fn claim_path(&self) -> ClaimPath {
        self.counters.claim_path
    }

    /// Whether its thread still runs (it ends on a stop or a fatal error such as a lost
    /// group with [`GroupLost::Stop`]).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Asks the consumer to stop without waiting (it stops after the entry in hand); then
    /// [`StreamConsumer::stop`] or a drop joins it. Stopping many consumers this way first
    /// overlaps their waits.
    pub fn request_stop(&self) {
        self.interrupt.raise();
    }

    /// Stops the consumer and waits for its thread: the entry being handled finishes, the
    /// rest of its batch stays pending, done entries are acked. Returns the final counters,
    /// or the error that had stopped it.
    pub fn stop(mut self) -> Result<ConsumerMetrics, ConsumerError> {
        self.shut_down()?;
        Ok(self.counters.snapshot())
    }

    fn shut_down(&mut self) -> Result<(), ConsumerError> {
        self.interrupt.raise();
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        match thread.join() {
            Ok(result) => result,
            Err(panic) => Err(ConsumerError::Panicked(
                panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default(),
            )),
        }
    }
}

impl Drop for StreamConsumer {
    fn drop(&mut self) {
        if let Err(e) = self.shut_down() {
            tracing::error!(consumer = %self.subscription.consumer, error = %e, "consumer had stopped on an error");
        }
    }
}

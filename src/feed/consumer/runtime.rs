//! The consumer's thread: drain the backlog, then read new entries, beat, stop.
//!
//! Order of work, which the crash-and-resume guarantee rests on:
//! 1. **Backlog**: `XREADGROUP ... <cursor>` from `0-0`, batch by batch, until the consumer's
//!    own PEL has nothing after the cursor. Entries that fail again stay pending (or are
//!    NACKed, on the CLAIM path) and the cursor moves past them, so the drain always ends.
//! 2. **Beat** (right after the backlog, then every `beat_interval_ms` by the backend's clock):
//!    on the XAUTOCLAIM path, XAUTOCLAIM entries idle at least `claim_idle_ms` (a bounded
//!    number of rounds per beat, the scan cursor kept between beats) and handle them; on both
//!    paths, refresh the pending count.
//! 3. **New entries**: `XREADGROUP ... >` with BLOCK no longer than the time to the next beat;
//!    on the CLAIM path `XREADGROUP ... CLAIM claim_idle_ms ... >`, whose claimed entries
//!    (idle ones, NACKed ones first) come before the new ones and count as reclaimed.
//!
//! Each batch is handled in order and acked with one XACK of every id whose handler returned
//! `Ok` (and of every entry parked or dropped). On the CLAIM path the ids whose handler
//! returned `Err` (not those that panicked: a bug is not worth an at-once retry) are then handed back with one `XNACK ... FAIL`; if that call fails they stay pending with
//! this consumer and come back once idle past `claim_idle_ms`, as on the XAUTOCLAIM path. A
//! failed XACK keeps its ids for the next one.
//! A raised interrupt stops between entries; what was not handled stays pending for the
//! backlog of the next start. Backend errors back off (doubling, capped) instead of spinning.

use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use echomq_engine::{Clock, StreamId};
use tracing::{debug, error, info, warn};

use crate::feed::backend::{Block, GroupBackend, GroupEntry, Interrupt, ReadFrom};
use crate::feed::brand::{Brand, Branded};
use crate::feed::error::FeedError;
use crate::feed::fields::Fields;
use crate::feed::{ID_FIELD, Record};

use super::dead_letter::{Parking, park};
use super::delivery::{Delivery, GroupName, Origin};
use super::error::ConsumerError;
use super::metrics::{ClaimPath, Counters, add};
use super::settings::{ConsumerSettings, GroupLost, PoisonPolicy};

/// XAUTOCLAIM calls per beat at most: a huge PEL is scanned over several beats instead of
/// starving new entries.
const CLAIM_ROUNDS_PER_BEAT_MAX: usize = 16;

/// The entry's branded id, checked as [`Record::from_raw`] checks it (an `id` field first,
/// parsing as `brand`, naming this very entry), but without taking the entry apart, so a
/// malformed one can be parked whole and a good one costs no copy.
fn branded_id(entry: StreamId, fields: &Fields, brand: Brand) -> Result<Branded, FeedError> {
    let Some((_, value)) = fields
        .pair(0)
        .filter(|(name, _)| *name == ID_FIELD.as_bytes())
    else {
        return Err(FeedError::MissingIdField(entry));
    };
    let text = std::str::from_utf8(value).map_err(|_| FeedError::BadIdField {
        entry,
        reason: "not UTF-8".into(),
    })?;
    let id = Branded::parse_as(text, brand).map_err(|e| FeedError::BadIdField {
        entry,
        reason: e.to_string(),
    })?;
    if id.stream_id() != entry {
        return Err(FeedError::IdMismatch {
            entry,
            field: text.to_string(),
            expected: id.stream_id(),
        });
    }
    Ok(id)
}

/// One consumer's state, owned by its thread.
pub(crate) struct Worker<B, F> {
    pub backend: B,
    pub key: String,
    pub dead_key: String,
    pub group: GroupName,
    pub consumer: String,
    pub settings: ConsumerSettings,
    pub handler: F,
    pub counters: Arc<Counters>,
    pub interrupt: Arc<Interrupt>,
    pub clock: Arc<dyn Clock>,
    /// Where the next XAUTOCLAIM starts.
    pub claim_cursor: StreamId,
    /// The backend clock's ms at the last beat.
    pub last_beat_ms: u64,
    /// The pause after the next backend error.
    pub backoff_ms: u64,
    /// The group was recreated and no read has succeeded since.
    pub recreated: bool,
    /// Ids to ack with the next XACK.
    pub acks: Vec<StreamId>,
    /// Ids whose handler failed, to hand back with the next `XNACK ... FAIL` (CLAIM path).
    pub nacks: Vec<StreamId>,
}

/// What a backend error means for the loop.
enum Recovery {
    /// Go on (after a back-off, or after recreating the group).
    Continue,
    /// The group was recreated: the backlog is gone with it.
    Recreated,
}

impl<B, F, E> Worker<B, F>
where
    B: GroupBackend,
    F: FnMut(Delivery) -> Result<(), E>,
    E: Display,
{
    /// Runs until stopped or a fatal error.
    pub fn run(mut self) -> Result<(), ConsumerError> {
        info!(
            key = %self.key, group = %self.group, consumer = %self.consumer,
            claim_path = ?self.counters.claim_path, "consumer started"
        );
        let result = self.run_phases();
        self.flush_acks();
        self.flush_nacks();
        self.refresh_pending();
        let m = self.counters.snapshot();
        match &result {
            Ok(()) => info!(
                key = %self.key, group = %self.group, consumer = %self.consumer,
                delivered = m.delivered, acked = m.acked, failed = m.failed,
                reclaimed = m.reclaimed, pending = m.pending, dead_lettered = m.dead_lettered,
                "consumer stopped"
            ),
            Err(e) => error!(
                key = %self.key, group = %self.group, consumer = %self.consumer, error = %e,
                "consumer stopped on an error"
            ),
        }
        result
    }

    fn run_phases(&mut self) -> Result<(), ConsumerError> {
        self.drain_backlog()?;
        self.beat()?;
        while !self.interrupt.is_raised() {
            let now = self.clock.now_ms();
            let since_beat = now.saturating_sub(self.last_beat_ms);
            if since_beat >= self.settings.beat_interval_ms {
                self.beat()?;
                continue;
            }
            let wait_ms = (self.settings.beat_interval_ms - since_beat)
                .min(self.settings.block_ms)
                .max(1);
            let block = Block {
                ms: wait_ms,
                interrupt: &self.interrupt,
            };
            let from = match self.counters.claim_path {
                ClaimPath::ReadClaim => ReadFrom::Claiming {
                    min_idle_ms: self.settings.claim_idle_ms,
                },
                ClaimPath::AutoClaim => ReadFrom::New,
            };
            let read = self.backend.read_group(
                &self.key,
                self.group.as_str(),
                &self.consumer,
                from,
                self.settings.batch_size,
                Some(block),
            );
            match read {
                Ok(entries) => {
                    self.succeeded();
                    let claimed = entries.iter().filter(|e| e.claimed).count();
                    if claimed > 0 {
                        add(&self.counters.reclaimed, claimed as u64);
                        info!(
                            key = %self.key, group = %self.group, consumer = %self.consumer,
                            n = claimed, "claimed idle or NACKed entries"
                        );
                    }
                    self.process(entries, Origin::New);
                }
                Err(e) => {
                    self.recover(e)?;
                }
            }
        }
        Ok(())
    }

    /// Step 1: the consumer's own pending entries, oldest first.
    fn drain_backlog(&mut self) -> Result<(), ConsumerError> {
        let mut cursor = StreamId::MIN;
        while !self.interrupt.is_raised() {
            let read = self.backend.read_group(
                &self.key,
                self.group.as_str(),
                &self.consumer,
                ReadFrom::Pending(cursor),
                self.settings.batch_size,
                None,
            );
            match read {
                Ok(entries) => {
                    self.succeeded();
                    let Some(last) = entries.last() else {
                        break;
                    };
                    cursor = last.id;
                    debug!(key = %self.key, consumer = %self.consumer, n = entries.len(), "backlog batch");
                    self.process(entries, Origin::Backlog);
                }
                Err(e) => {
                    if let Recovery::Recreated = self.recover(e)? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Step 2: reclaim idle entries (XAUTOCLAIM path; the CLAIM path's reads do it), refresh
    /// the pending count.
    fn beat(&mut self) -> Result<(), ConsumerError> {
        add(&self.counters.beats, 1);
        self.last_beat_ms = self.clock.now_ms();
        let rounds = match self.counters.claim_path {
            ClaimPath::AutoClaim => CLAIM_ROUNDS_PER_BEAT_MAX,
            ClaimPath::ReadClaim => 0,
        };
        for _ in 0..rounds {
            if self.interrupt.is_raised() {
                break;
            }
            let claimed = self.backend.auto_claim(
                &self.key,
                self.group.as_str(),
                &self.consumer,
                self.settings.claim_idle_ms,
                self.claim_cursor,
                self.settings.batch_size,
            );
            let claimed = match claimed {
                Ok(claimed) => claimed,
                Err(e) => {
                    self.recover(e)?;
                    break;
                }
            };
            self.succeeded();
            self.claim_cursor = claimed.next;
            if !claimed.deleted.is_empty() {
                add(&self.counters.deleted, claimed.deleted.len() as u64);
                warn!(
                    key = %self.key, group = %self.group, n = claimed.deleted.len(),
                    "pending entries deleted from the stream were dropped by XAUTOCLAIM"
                );
            }
            if !claimed.entries.is_empty() {
                add(&self.counters.reclaimed, claimed.entries.len() as u64);
                info!(
                    key = %self.key, group = %self.group, consumer = %self.consumer,
                    n = claimed.entries.len(), "reclaimed idle entries"
                );
                self.process(claimed.entries, Origin::Reclaimed);
            }
            if self.claim_cursor == StreamId::MIN {
                break;
            }
        }
        self.refresh_pending();
        let m = self.counters.snapshot();
        debug!(
            key = %self.key, group = %self.group, consumer = %self.consumer,
            delivered = m.delivered, acked = m.acked, failed = m.failed, reclaimed = m.reclaimed,
            pending = m.pending, dead_lettered = m.dead_lettered, errors = m.errors,
            "consumer beat"
        );
        Ok(())
    }

    fn refresh_pending(&mut self) {
        match self
            .backend
            .pending_count(&self.key, self.group.as_str(), &self.consumer)
        {
            Ok(n) => self
                .counters
                .pending
                .store(n, std::sync::atomic::Ordering::Relaxed),
            Err(e) => debug!(key = %self.key, error = %e, "pending count unavailable"),
        }
    }

    /// Handles a batch in order, then acks what is done (and NACKs what failed, on the CLAIM
    /// path). An entry a claim took (`claimed`) is handled as [`Origin::Reclaimed`].
    fn process(&mut self, entries: Vec<GroupEntry>, origin: Origin) {
        let mut delivered = 0;
        for entry in entries {
            if self.interrupt.is_raised() {
                break;
            }
            delivered += 1;
            self.handle_one(entry, origin);
        }
        add(&self.counters.delivered, delivered);
        self.flush_acks();
        self.flush_nacks();
    }

    fn handle_one(&mut self, entry: GroupEntry, origin: Origin) {
        let GroupEntry {
            id,
            fields,
            delivery_count,
            claimed,
        } = entry;
        let origin = if claimed { Origin::Reclaimed } else { origin };
        let Some(fields) = fields else {
            // Deleted from the stream while pending: nothing to handle, and Redis would keep
            // it pending forever.
            add(&self.counters.deleted, 1);
            self.acks.push(id);
            return;
        };
        let record = match branded_id(id, &fields, self.settings.brand) {
            Ok(branded) => {
                let mut payload = fields;
                payload.drop_first();
                Record {
                    id: branded,
                    fields: payload,
                }
            }
            Err(e) => {
                add(&self.counters.malformed, 1);
                error!(
                    key = %self.key, group = %self.group, entry = %id, error = %e,
                    "entry has no parsable branded id; parking it on the dead-letter stream"
                );
                self.park(id, delivery_count, &e.to_string(), fields.iter());
                return;
            }
        };
        if self
            .settings
            .max_attempts
            .is_some_and(|max| delivery_count > max)
        {
            self.poison(record, delivery_count);
            return;
        }
        let delivery = Delivery {
            id: record.id,
            payload: record.fields,
            attempts: delivery_count,
            group: self.group.clone(),
            origin,
        };
        let handler = &mut self.handler;
        match catch_unwind(AssertUnwindSafe(|| handler(delivery))) {
            Ok(Ok(())) => self.acks.push(id),
            Ok(Err(e)) => {
                add(&self.counters.failed, 1);
                warn!(
                    key = %self.key, group = %self.group, id = %record.id, attempts = delivery_count,
                    error = %e, "handler failed; the entry stays pending"
                );
                self.hand_back(id);
            }
            Err(panic) => {
                add(&self.counters.failed, 1);
                add(&self.counters.panicked, 1);
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a non-text panic".to_string());
                error!(
                    key = %self.key, group = %self.group, id = %record.id, attempts = delivery_count,
                    panic = %message, "handler panicked; the entry stays pending"
                );
                // Not NACKed: a panic is a bug in the handler, and an at-once retry would
                // only repeat it; the entry comes back once idle past claim_idle_ms.
            }
        }
    }

    /// An entry whose handler returned `Err`: on the CLAIM path it is NACKed with the batch,
    /// so it is redelivered at once; on the XAUTOCLAIM path it waits in this consumer's PEL for
    /// the beat.
    fn hand_back(&mut self, id: StreamId) {
        if self.counters.claim_path == ClaimPath::ReadClaim {
            self.nacks.push(id);
        }
    }

    fn flush_nacks(&mut self) {
        if self.nacks.is_empty() {
            return;
        }
        match self
            .backend
            .nack_fail(&self.key, self.group.as_str(), &self.nacks)
        {
            Ok(n) => add(&self.counters.nacked, n),
            Err(e) => {
                add(&self.counters.errors, 1);
                warn!(
                    key = %self.key, n = self.nacks.len(), error = %e,
                    "XNACK failed; the entries come back once idle past claim_idle_ms"
                );
            }
        }
        self.nacks.clear();
    }

    fn poison(&mut self, record: Record, attempts: u64) {
        let id = record.id.stream_id();
        match self.settings.poison {
            PoisonPolicy::DeadLetter => {
                error!(
                    key = %self.key, group = %self.group, id = %record.id, attempts,
                    "entry failed too often; parking it on the dead-letter stream"
                );
                let text = record.id.to_text();
                let head = std::iter::once((ID_FIELD.as_bytes(), &text[..]));
                let reason = format!("delivered {attempts} times");
                self.park(id, attempts, &reason, head.chain(record.fields.iter()));
            }
            PoisonPolicy::Drop => {
                error!(
                    key = %self.key, group = %self.group, id = %record.id, attempts,
                    "entry failed too often; acking it without handling"
                );
                add(&self.counters.dropped, 1);
                self.acks.push(id);
            }
        }
    }

    /// Copies an entry to the dead-letter stream and queues its ack; if the copy fails, the
    /// entry stays pending (it comes back through the beat).
    fn park<'a>(
        &mut self,
        id: StreamId,
        attempts: u64,
        reason: &str,
        fields: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    ) {
        let parking = Parking {
            source_key: &self.key,
            entry: id,
            group: self.group.as_str(),
            consumer: &self.consumer,
            attempts,
            reason,
        };
        match park(&self.backend, &self.dead_key, &parking, fields) {
            Ok(_) => {
                add(&self.counters.dead_lettered, 1);
                self.acks.push(id);
            }
            Err(e) => {
                add(&self.counters.errors, 1);
                error!(key = %self.dead_key, entry = %id, error = %e, "could not park the entry; it stays pending");
            }
        }
    }

    fn flush_acks(&mut self) {
        if self.acks.is_empty() {
            return;
        }
        match self.backend.ack(&self.key, self.group.as_str(), &self.acks) {
            Ok(n) => {
                add(&self.counters.acked, n);
                self.acks.clear();
            }
            Err(e) => {
                add(&self.counters.errors, 1);
                warn!(key = %self.key, n = self.acks.len(), error = %e, "XACK failed; retrying with the next batch");
            }
        }
    }

    fn succeeded(&mut self) {
        self.backoff_ms = self.settings.retry_backoff_ms;
        self.recreated = false;
    }

    /// Deals with a failed backend call: group lost (recreate or stop) or back off.
    fn recover(&mut self, e: FeedError) -> Result<Recovery, ConsumerError> {
        if matches!(e, FeedError::NoGroup(_)) {
            let lost = || ConsumerError::GroupLost {
                key: self.key.clone(),
                group: self.group.to_string(),
            };
            if self.settings.on_group_lost == GroupLost::Stop || self.recreated {
                return Err(lost());
            }
            warn!(key = %self.key, group = %self.group, "consumer group disappeared; recreating it");
            self.acks.clear();
            self.nacks.clear();
            match self
                .backend
                .create_group(&self.key, self.group.as_str(), self.settings.start)
            {
                Ok(_) => {
                    add(&self.counters.groups_recreated, 1);
                    self.recreated = true;
                    self.claim_cursor = StreamId::MIN;
                    return Ok(Recovery::Recreated);
                }
                Err(e) => return self.back_off(e),
            }
        }
        self.back_off(e)
    }

    fn back_off(&mut self, e: FeedError) -> Result<Recovery, ConsumerError> {
        add(&self.counters.errors, 1);
        warn!(
            key = %self.key, group = %self.group, consumer = %self.consumer, error = %e,
            backoff_ms = self.backoff_ms, "backend call failed; backing off"
        );
        self.interrupt.sleep(Duration::from_millis(self.backoff_ms));
        self.backoff_ms = (self.backoff_ms * 2).min(self.settings.retry_backoff_ms_max);
        Ok(Recovery::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Fields {
        Fields::from_pairs(pairs.iter().map(|(f, v)| (f.as_bytes(), v.as_bytes())))
    }

    #[test]
    fn branded_id_accepts_only_an_id_field_first_that_names_the_entry() {
        let id = Branded::from_parts(Brand::Evt, 1_796_000_000_000, 7).unwrap();
        let entry = id.stream_id();
        let text = id.to_string();
        assert_eq!(
            branded_id(entry, &fields(&[("id", &text), ("k", "v")]), Brand::Evt).ok(),
            Some(id)
        );
        assert!(matches!(
            branded_id(entry, &fields(&[("k", "v"), ("id", &text)]), Brand::Evt),
            Err(FeedError::MissingIdField(_))
        ));
        assert!(matches!(
            branded_id(entry, &fields(&[]), Brand::Evt),
            Err(FeedError::MissingIdField(_))
        ));
        assert!(matches!(
            branded_id(entry, &fields(&[("id", "EVT_garbage")]), Brand::Evt),
            Err(FeedError::BadIdField { .. })
        ));
        assert!(matches!(
            branded_id(entry, &fields(&[("id", &text)]), Brand::Job),
            Err(FeedError::BadIdField { .. })
        ));
        let other = entry.next().unwrap();
        assert!(matches!(
            branded_id(other, &fields(&[("id", &text)]), Brand::Evt),
            Err(FeedError::IdMismatch { .. })
        ));
    }
}

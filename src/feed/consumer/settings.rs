//! A consumer's settings, with defaults that suit a notification reader, and their limits.

use crate::feed::backend::GroupStart;
use crate::feed::brand::Brand;

use super::error::ConsumerError;

/// The most entries one read may ask for: a batch is held in memory and acked in one XACK.
pub const BATCH_SIZE_MAX: usize = 10_000;
/// The longest BLOCK: a stop against a server waits for the read in flight, so this bounds
/// how long a shutdown can take.
pub const BLOCK_MS_MAX: u64 = 60_000;

/// What happens to an entry delivered more than [`ConsumerSettings::max_attempts`] times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoisonPolicy {
    /// Copy it to the dead-letter stream, then ack it (the default).
    #[default]
    DeadLetter,
    /// Ack it without handling it, with an error event: the entry stays in the stream but the
    /// group never delivers it again.
    Drop,
}

/// What the consumer does when its group disappears under it (XGROUP DESTROY, the key
/// deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupLost {
    /// Create the group again (from [`ConsumerSettings::start`]) and go on (the default). If it
    /// is lost again before any read succeeds, the consumer stops with
    /// [`ConsumerError::GroupLost`] rather than loop.
    #[default]
    Recreate,
    /// Stop with [`ConsumerError::GroupLost`].
    Stop,
}

/// How a [`super::StreamConsumer`] reads, retries and reclaims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerSettings {
    /// Entries per read (XREADGROUP COUNT, XAUTOCLAIM COUNT) and at most per XACK. Default 256.
    pub batch_size: usize,
    /// How long a read of new entries blocks (XREADGROUP BLOCK). Default 1000 ms; against a
    /// server a stop waits up to this long for the read in flight.
    pub block_ms: u64,
    /// A pending entry idle this long (not delivered or claimed for this long) is reclaimed,
    /// whoever holds it: a dead peer's entries (and, on the XAUTOCLAIM path, this consumer's own
    /// failed ones), by the beat or, on the CLAIM path, by the next read. Default 30 000 ms.
    pub claim_idle_ms: u64,
    /// How often the beat runs XAUTOCLAIM (on the XAUTOCLAIM path) and refreshes the pending
    /// count. Default 5000 ms.
    pub beat_interval_ms: u64,
    /// An entry delivered more than this many times is not handed to the handler again but
    /// dealt with by `poison`; `None` retries forever. Default `Some(10)`. On the CLAIM path a
    /// failed entry is redelivered at once, so with `None` an entry that always fails is
    /// retried back to back; the bound is what stops it.
    pub max_attempts: Option<u64>,
    /// What happens to a poison entry.
    pub poison: PoisonPolicy,
    /// The dead-letter stream's name in the same queue; default `<stream>:dead`.
    pub dead_letter_stream: Option<String>,
    /// Where a group created by the consumer starts. Default [`GroupStart::End`] (`$`).
    pub start: GroupStart,
    /// What to do when the group disappears.
    pub on_group_lost: GroupLost,
    /// The brand of the entries' `id` fields. Default `EVT`.
    pub brand: Brand,
    /// First pause after a backend error; doubles on each further error up to
    /// `retry_backoff_ms_max`. Default 50 ms.
    pub retry_backoff_ms: u64,
    /// Longest pause after backend errors. Default 5000 ms.
    pub retry_backoff_ms_max: u64,
    /// Read with `XREADGROUP … CLAIM` and hand failures back with `XNACK … FAIL` where the
    /// backend has them ([`super::ClaimPath::ReadClaim`]); `false` keeps the XAUTOCLAIM beat
    /// ([`super::ClaimPath::AutoClaim`]) everywhere. Default `true`.
    pub read_claim: bool,
}

impl Default for ConsumerSettings {
    fn default() -> ConsumerSettings {
        ConsumerSettings {
            batch_size: 256,
            block_ms: 1_000,
            claim_idle_ms: 30_000,
            beat_interval_ms: 5_000,
            max_attempts: Some(10),
            poison: PoisonPolicy::DeadLetter,
            dead_letter_stream: None,
            start: GroupStart::End,
            on_group_lost: GroupLost::Recreate,
            brand: Brand::Evt,
            retry_backoff_ms: 50,
            retry_backoff_ms_max: 5_000,
            read_claim: true,
        }
    }
}

impl ConsumerSettings {
    /// Checks every limit; the error names the setting.
    pub fn validate(&self) -> Result<(), ConsumerError> {
        let bad = |what: &'static str| Err(ConsumerError::Settings(what));
        if self.batch_size == 0 || self.batch_size > BATCH_SIZE_MAX {
            return bad("batch_size must be 1..=10000");
        }
        if self.block_ms == 0 || self.block_ms > BLOCK_MS_MAX {
            return bad("block_ms must be 1..=60000 (BLOCK 0 would never let the consumer stop)");
        }
        if self.claim_idle_ms == 0 {
            return bad("claim_idle_ms must be at least 1 (0 would steal entries in flight)");
        }
        if self.beat_interval_ms == 0 {
            return bad("beat_interval_ms must be at least 1");
        }
        if self.max_attempts == Some(0) {
            return bad("max_attempts must be at least 1, or None to retry forever");
        }
        if self.retry_backoff_ms == 0 || self.retry_backoff_ms_max < self.retry_backoff_ms {
            return bad("retry_backoff_ms must be at least 1 and at most retry_backoff_ms_max");
        }
        if self
            .dead_letter_stream
            .as_deref()
            .is_some_and(|s| s.is_empty())
        {
            return bad("dead_letter_stream must not be empty");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_each_limit_is_checked() {
        assert!(ConsumerSettings::default().validate().is_ok());
        let broken = [
            ConsumerSettings {
                batch_size: 0,
                ..ConsumerSettings::default()
            },
            ConsumerSettings {
                batch_size: BATCH_SIZE_MAX + 1,
                ..ConsumerSettings::default()
            },
            ConsumerSettings {
                block_ms: 0,
                ..ConsumerSettings::default()
            },
            ConsumerSettings {
                claim_idle_ms: 0,
                ..ConsumerSettings::default()
            },
            ConsumerSettings {
                beat_interval_ms: 0,
                ..ConsumerSettings::default()
            },
            ConsumerSettings {
                max_attempts: Some(0),
                ..ConsumerSettings::default()
            },
            ConsumerSettings {
                dead_letter_stream: Some(String::new()),
                ..ConsumerSettings::default()
            },
        ];
        for settings in broken {
            assert!(
                matches!(settings.validate(), Err(ConsumerError::Settings(_))),
                "{settings:?}"
            );
        }
    }
}

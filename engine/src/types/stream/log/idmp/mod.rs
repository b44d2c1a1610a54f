//! A stream's idempotency state (XADD IDMP/IDMPAUTO, XCFGSET, XIDMPRECORD;
//! `docs/reference/streams-8.md` §3).
//!
//! Per producer id (`pid`, binary-safe) a FIFO of IIDs, each remembering the stream id it
//! produced (`producer`). The state belongs to the stream value, so it follows the key through
//! RENAME and goes with it on DEL, FLUSHDB and FLUSHALL. It is independent of the stream's
//! content: XDEL and trimming remove no IID.
//!
//! Rules, as Redis 8.8 applies them:
//! - bounds `idmp-duration` (seconds) and `idmp-maxsize` (IIDs per producer) are copied from
//!   the settings when the stream is created and changed only by XCFGSET; setting either to a
//!   *different* value clears every producer (counters kept), the same value changes nothing;
//! - after an insert, a producer above `maxsize` loses its oldest IID (by insertion); a
//!   duplicate hit does not refresh an IID's position;
//! - expiry drops, from the oldest end of each producer, IIDs whose stream id's milliseconds are
//!   at most `now − duration × 1000`, stopping at the first younger one; a producer left empty
//!   is removed;
//! - `iids-added` counts every insert, `iids-duplicates` every duplicate hit; neither is reset.
//!
//! Expiry is driven by the command's clock snapshot, never by a timer: before a producer is
//! looked up it is expired exactly, the stream's other producers are swept at most once a
//! second of the clock, and so is every stream of a database that holds IDMP state
//! (`Db::sweep_idmp`, run before a command at Redis's cron rate; both for memory only). XINFO
//! reports the counts as expiry at its `now` would leave them. So every observable answer is exact at the command's time, where
//! Redis's lazy cron may still answer an IID up to a second past its expiry.
//!
//! Memory per tracked IID: `17 + len(iid)` record bytes (one more from 128-byte IIDs on), about
//! 10–21 bytes of index slot, and buffer slack bounded to ~60% of the record bytes. Measured
//! (`model_tests::memory_per_iid_is_below_redis_8_8`, a full producer of 10000): 47–53 bytes per
//! 16-byte IDMPAUTO IID and 68–79 per 36-byte UUID, against Redis 8.8.0's 91.7 and 123.7 (its
//! `used_memory` growth over the same XADDs with and without IDMP: a 32-byte header plus the IID
//! in one allocation, a 24-byte dict entry and the dict's bucket array).
//!
//! Invariants ([`Idmp::check_invariants`]): every producer is well formed and non-empty, holds
//! at most `maxsize` IIDs, and the IIDs held number at most `iids-added`.

mod auto_iid;
mod producer;

#[cfg(test)]
mod model_tests;

use std::collections::BTreeMap;
use std::hash::RandomState;

use bytes::Bytes;

pub use auto_iid::{AUTO_IID_BYTES, auto_iid};

use crate::config::IdmpConfig;
use crate::id::StreamId;
use crate::stream::Stream;
use producer::Producer;

/// A producer read from a snapshot: its pid and its IIDs with their stream ids, oldest first.
pub(crate) type LoadedProducer = (Vec<u8>, Vec<(Vec<u8>, StreamId)>);

/// A producer's pid and IIDs with their stream ids, oldest first, borrowed.
pub(crate) type ProducerIids<'a> = (&'a [u8], Vec<(&'a [u8], StreamId)>);

/// Clock milliseconds between sweeps of every producer of a stream.
const SWEEP_INTERVAL_MS: u64 = 1000;

/// The producers of a stream that has used IDMP (allocated on first use, as Redis does).
#[derive(Debug, Clone, Default)]
struct Producers {
    /// Hashes IIDs for every producer's index (randomly keyed: client bytes cannot aim at
    /// collisions).
    hasher: RandomState,
    /// Producers by pid, in byte order.
    by_pid: BTreeMap<Bytes, Producer>,
    /// The clock time of the last sweep of every producer.
    swept_ms: u64,
}

/// A stream's idempotency state: bounds, producers and lifetime counters.
#[derive(Debug, Clone, Default)]
pub struct Idmp {
    config: IdmpConfig,
    iids_added: u64,
    iids_duplicates: u64,
    producers: Option<Box<Producers>>,
}

/// What [`Idmp::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdmpCheck {
    /// The iid is held: the stream id it produced.
    Duplicate(StreamId),
    /// The iid is not held: what [`Idmp::record`] needs to record it.
    Fresh(FreshIid),
}

/// A fresh iid's hash, when the check computed one ([`Idmp::check`], [`Idmp::record`]); the
/// default knows none (the record computes it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FreshIid {
    hash: Option<u64>,
}

/// XINFO STREAM's IDMP numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdmpInfo {
    /// `idmp-duration`, seconds.
    pub duration_s: u64,
    /// `idmp-maxsize`, IIDs per producer.
    pub maxsize: u64,
    /// `pids-tracked`: producers holding at least one IID.
    pub pids_tracked: u64,
    /// `iids-tracked`: IIDs held, over all producers.
    pub iids_tracked: u64,
    /// `iids-added`: every IID ever inserted.
    pub iids_added: u64,
    /// `iids-duplicates`: every duplicate hit.
    pub iids_duplicates: u64,
}

/// The newest stream-id milliseconds that have expired at `now_ms`, if any have.
fn threshold(config: IdmpConfig, now_ms: u64) -> Option<u64> {
    now_ms.checked_sub(config.duration_s.saturating_mul(1000))
}

impl Idmp {
    /// Empty state with these bounds.
    pub fn new(config: IdmpConfig) -> Idmp {
        Idmp {
            config,
            ..Idmp::default()
        }
    }

    /// The bounds.
    pub fn config(&self) -> IdmpConfig {
        self.config
    }

    /// XINFO STREAM's numbers as expiry at `now_ms` leaves them (nothing is changed).
    pub fn info(&self, now_ms: u64) -> IdmpInfo {
        let (mut pids, mut iids) = (0u64, 0u64);
        if let Some(p) = &self.producers {
            let threshold = threshold(self.config, now_ms);
            for producer in p.by_pid.values() {
                let gone = threshold.map_or(0, |t| producer.expirable(t));
                let left = producer.len() - gone;
                if left > 0 {
                    pids += 1;
                    iids += left as u64;
                }
            }
        }
        IdmpInfo {
            duration_s: self.config.duration_s,
            maxsize: self.config.maxsize,
            pids_tracked: pids,
            iids_tracked: iids,
            iids_added: self.iids_added,
            iids_duplicates: self.iids_duplicates,
        }
    }

    /// Producers holding IIDs now (without expiring anything).
    pub fn pids_tracked(&self) -> usize {
        self.producers.as_ref().map_or(0, |p| p.by_pid.len())
    }

    /// IIDs held now, over all producers (without expiring anything).
    pub fn iids_tracked(&self) -> usize {
        self.producers
            .as_ref()
            .map_or(0, |p| p.by_pid.values().map(Producer::len).sum())
    }

    /// Heap bytes of the producers (records, indexes and pids), for INFO and tests.
    pub fn memory_bytes(&self) -> usize {
        self.producers.as_ref().map_or(0, |p| {
            p.by_pid
                .iter()
                .map(|(pid, producer)| {
                    pid.len() + producer.heap_bytes() + std::mem::size_of::<Producer>()
                })
                .sum::<usize>()
                + std::mem::size_of::<Producers>()
        })
    }

    /// Expires every producer's IIDs at `now_ms` (Redis's cron pass over one stream).
    pub fn expire(&mut self, now_ms: u64) {
        let Some(threshold) = threshold(self.config, now_ms) else {
            return;
        };
        let Some(p) = self.producers.as_deref_mut() else {
            return;
        };
        let Producers {
            hasher,
            by_pid,
            swept_ms,
        } = p;
        by_pid.retain(|_, producer| {
            producer.expire(hasher, threshold);
            !producer.is_empty()
        });
        *swept_ms = now_ms;
        if by_pid.is_empty() {
            self.producers = None;
        }
    }

    /// The stream id `pid`'s `iid` produced, after expiring `pid` at `now_ms`; counts nothing.
    pub fn lookup(&mut self, pid: &[u8], iid: &[u8], now_ms: u64) -> Option<StreamId> {
        match self.find(pid, iid, now_ms) {
            IdmpCheck::Duplicate(id) => Some(id),
            IdmpCheck::Fresh(_) => None,
        }
    }

    /// XADD's duplicate check: [`Idmp::lookup`], counting a hit in `iids-duplicates`.
    pub fn duplicate_of(&mut self, pid: &[u8], iid: &[u8], now_ms: u64) -> Option<StreamId> {
        match self.check(pid, iid, now_ms) {
            IdmpCheck::Duplicate(id) => Some(id),
            IdmpCheck::Fresh(_) => None,
        }
    }

    /// XADD's duplicate check ([`Idmp::duplicate_of`]) keeping what a miss found for the
    /// [`Idmp::record`] that follows it, so the iid is hashed once.
    pub fn check(&mut self, pid: &[u8], iid: &[u8], now_ms: u64) -> IdmpCheck {
        let found = self.find(pid, iid, now_ms);
        if matches!(found, IdmpCheck::Duplicate(_)) {
            self.iids_duplicates += 1;
        }
        found
    }

    /// Expires `pid` at `now_ms` (and every producer once a second of the clock), then looks
    /// `iid` up, with one search of the producers.
    fn find(&mut self, pid: &[u8], iid: &[u8], now_ms: u64) -> IdmpCheck {
        let threshold = threshold(self.config, now_ms);
        if threshold.is_some()
            && self
                .producers
                .as_ref()
                .is_some_and(|p| now_ms.saturating_sub(p.swept_ms) >= SWEEP_INTERVAL_MS)
        {
            self.expire(now_ms);
        }
        let Some(p) = self.producers.as_deref_mut() else {
            return IdmpCheck::Fresh(FreshIid { hash: None });
        };
        let Producers { hasher, by_pid, .. } = p;
        let iid_hash = producer::hash(hasher, iid);
        let fresh = IdmpCheck::Fresh(FreshIid {
            hash: Some(iid_hash),
        });
        let Some(producer) = by_pid.get_mut(pid) else {
            return fresh;
        };
        if let Some(t) = threshold {
            producer.expire(hasher, t);
            if producer.is_empty() {
                by_pid.remove(pid);
                if by_pid.is_empty() {
                    self.producers = None;
                    return IdmpCheck::Fresh(FreshIid { hash: None });
                }
                return fresh;
            }
        }
        match producer.get_hashed(iid_hash, iid) {
            Some(id) => IdmpCheck::Duplicate(id),
            None => fresh,
        }
    }

    /// Records `pid`'s `iid` as having produced `id` (the caller has looked it up and not found
    /// it), evicting the producer's oldest IID beyond `maxsize`; counts it in `iids-added`.
    pub fn insert(&mut self, pid: &[u8], iid: &[u8], id: StreamId, now_ms: u64) {
        self.record(pid, iid, id, now_ms, FreshIid::default());
    }

    /// [`Idmp::insert`] after a [`Idmp::check`] that found `iid` fresh (`fresh`, nothing
    /// changed in between).
    pub fn record(&mut self, pid: &[u8], iid: &[u8], id: StreamId, now_ms: u64, fresh: FreshIid) {
        let maxsize = self.config.maxsize;
        let p = self.producers.get_or_insert_with(|| {
            Box::new(Producers {
                swept_ms: now_ms,
                ..Producers::default()
            })
        });
        let Producers { hasher, by_pid, .. } = &mut **p;
        let producer = match by_pid.get_mut(pid) {
            Some(producer) => producer,
            None => by_pid
                .entry(Bytes::copy_from_slice(pid))
                .or_insert_with(Producer::default),
        };
        // The hash is only kept from a check that found the producers allocated, with this
        // same hasher.
        let iid_hash = fresh.hash.unwrap_or_else(|| producer::hash(hasher, iid));
        producer.push(hasher, iid_hash, iid, id);
        while producer.len() as u64 > maxsize {
            producer.pop_oldest(hasher);
        }
        self.iids_added += 1;
    }

    /// XCFGSET: sets the bounds given; if either changes, every producer is dropped (the
    /// counters stay). Returns whether anything changed.
    pub fn configure(&mut self, duration_s: Option<u64>, maxsize: Option<u64>) -> bool {
        let mut changed = false;
        if let Some(d) = duration_s.filter(|&d| d != self.config.duration_s) {
            self.config.duration_s = d;
            changed = true;
        }
        if let Some(m) = maxsize.filter(|&m| m != self.config.maxsize) {
            self.config.maxsize = m;
            changed = true;
        }
        if changed {
            self.producers = None;
        }
        changed
    }

    /// State read from a snapshot: bounds, lifetime counters and, per producer, its IIDs
    /// oldest first. As Redis 8.8 loads them, IIDs expired at `now_ms` are left out, a
    /// duplicate IID of a producer is skipped and a producer left empty is not kept.
    pub(crate) fn restore(
        config: IdmpConfig,
        iids_added: u64,
        iids_duplicates: u64,
        producers: Vec<LoadedProducer>,
        now_ms: u64,
    ) -> Idmp {
        let mut idmp = Idmp::new(config);
        let expired = threshold(config, now_ms);
        for (pid, iids) in producers {
            for (iid, id) in iids {
                if expired.is_some_and(|t| id.ms <= t) || idmp.lookup(&pid, &iid, now_ms).is_some()
                {
                    continue;
                }
                idmp.insert(&pid, &iid, id, now_ms);
            }
        }
        idmp.iids_added = iids_added;
        idmp.iids_duplicates = iids_duplicates;
        idmp
    }

    /// The IIDs not expired at `now_ms`, per producer in pid order, each oldest first (what
    /// an RDB snapshot saves).
    pub(crate) fn live_producers(&self, now_ms: u64) -> Vec<ProducerIids<'_>> {
        let expired = threshold(self.config, now_ms);
        let Some(p) = &self.producers else {
            return Vec::new();
        };
        p.by_pid
            .iter()
            .map(|(pid, producer)| {
                let iids = producer
                    .records()
                    .filter(|r| expired.is_none_or(|t| r.id.ms > t))
                    .map(|r| (r.iid, r.id))
                    .collect();
                (pid.as_ref(), iids)
            })
            .collect()
    }

    /// Lifetime counters: `iids-added`, `iids-duplicates`.
    pub(crate) fn counters(&self) -> (u64, u64) {
        (self.iids_added, self.iids_duplicates)
    }

    /// Every `(pid, iid, stream id)` held, producers in pid order, each oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8], StreamId)> {
        self.producers.iter().flat_map(|p| {
            p.by_pid.iter().flat_map(|(pid, producer)| {
                producer.records().map(move |r| (pid.as_ref(), r.iid, r.id))
            })
        })
    }

    /// Checks the invariants in the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        let Some(p) = &self.producers else {
            return Ok(());
        };
        if p.by_pid.is_empty() {
            return Err("producer map allocated but empty".into());
        }
        let mut held = 0u64;
        for (pid, producer) in &p.by_pid {
            let shown = String::from_utf8_lossy(pid);
            producer
                .check(&p.hasher)
                .map_err(|e| format!("producer {shown:?}: {e}"))?;
            if producer.is_empty() {
                return Err(format!("producer {shown:?} is empty"));
            }
            if producer.len() as u64 > self.config.maxsize {
                return Err(format!(
                    "producer {shown:?} holds {} IIDs, maxsize {}",
                    producer.len(),
                    self.config.maxsize
                ));
            }
            held += producer.len() as u64;
        }
        if held > self.iids_added {
            return Err(format!("{held} IIDs held but {} added", self.iids_added));
        }
        Ok(())
    }
}

impl Stream {
    /// An empty stream whose IDMP bounds are `config` (the settings at creation).
    pub fn with_idmp_config(config: IdmpConfig) -> Stream {
        let mut stream = Stream::new();
        stream.idmp = Idmp::new(config);
        stream
    }

    /// The stream's idempotency state.
    pub fn idmp(&self) -> &Idmp {
        &self.idmp
    }

    /// The stream's idempotency state, mutably.
    pub fn idmp_mut(&mut self) -> &mut Idmp {
        &mut self.idmp
    }
}

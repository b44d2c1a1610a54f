//! What each client's connection holds in memory, the clients' total, and client eviction
//! under `maxmemory-clients` (Redis's `getClientMemoryUsage` and `evictClients`).
//!
//! A connection owns its buffers, so it publishes what they hold into its [`ClientMemory`]
//! (after reading, and before it waits for the next read); CLIENT LIST and INFO read the
//! published figures. A client's total (CLIENT LIST's `tot-mem`) is its query buffer's and
//! reply buffer's allocations, the commands its transaction queued, an overhead per watched
//! key and per subscription, and a fixed part for the connection's own state; arguments are
//! slices of the query buffer, never copies, so `argv-mem` is 0.
//!
//! Invariant: [`ClientsMemory::total`] is the sum of every connected client's published
//! total. A client publishes by swapping its total and adding the difference; eviction and
//! disconnection swap it to 0 and subtract what they took; an evicted client publishes
//! nothing more (its connection is closing).
//!
//! Eviction: while the total is at or over the limit (`maxmemory-clients` in bytes, or as a
//! percentage of `maxmemory`, never under [`EVICTION_LIMIT_MIN`]), the largest evictable
//! clients (all but those with CLIENT NO-EVICT on) are closed, largest first, each logged
//! with its CLIENT LIST line, as Redis's `evictClients` does.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;

use super::output_limit::UNCOUNTED_BYTES;

/// The least eviction limit: Redis's floor, so a bad setting still lets clients talk to the
/// server (`getClientEvictionLimit`).
pub const EVICTION_LIMIT_MIN: u64 = 128 * 1024;
/// Bytes counted per watched key (its entry in the client's list and the key's watcher
/// list; Redis counts a list node and a `watchedKey`).
const WATCHED_KEY_BYTES: u64 = 64;
/// Bytes counted per subscription (the client's own table entry of the channel or pattern).
const SUBSCRIPTION_BYTES: u64 = 48;
/// Bytes counted per queued command beside its arguments (its argument vector).
const QUEUED_COMMAND_BYTES: u64 = 24;
/// Bytes counted per queued argument beside its bytes.
const QUEUED_ARG_BYTES: u64 = std::mem::size_of::<Bytes>() as u64;
/// The connection's own state, whatever its buffers hold: the client's shared and private
/// records and the connection task's frame.
const CONNECTION_BYTES: u64 = 2048;

/// `maxmemory-clients`: no limit, a number of bytes, or a percentage of `maxmemory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaxmemoryClients {
    /// No limit (`0`).
    #[default]
    Off,
    /// This many bytes.
    Bytes(u64),
    /// This percentage of `maxmemory` (no limit while `maxmemory` is 0).
    Percent(u64),
}

impl MaxmemoryClients {
    /// Reads a CONFIG value as Redis does, through the directives' shared parsing of a memory
    /// value or `N%` (its bounds and refusal texts: `crate::config_file::current::accept`).
    pub fn parse(value: &str) -> Result<MaxmemoryClients, crate::error::ConfigWhy> {
        let directive = crate::config_file::directives::lookup("maxmemory-clients")
            .ok_or_else(|| crate::error::ConfigWhy::Other("unknown directive".into()))?;
        let normal = crate::config_file::current::accept(directive, value)?;
        // Normalised: digits, with `%` for a percentage.
        let (digits, percent) = match normal.strip_suffix('%') {
            Some(digits) => (digits, true),
            None => (normal.as_str(), false),
        };
        let n: u64 = digits.parse().unwrap_or(0);
        Ok(match (n, percent) {
            (0, _) => MaxmemoryClients::Off,
            (n, true) => MaxmemoryClients::Percent(n),
            (n, false) => MaxmemoryClients::Bytes(n),
        })
    }

    /// The limit in bytes under `maxmemory` (0: none), as Redis's `getClientEvictionLimit`.
    pub fn limit(self, maxmemory: u64) -> u64 {
        let bytes = match self {
            MaxmemoryClients::Off => return 0,
            MaxmemoryClients::Percent(_) if maxmemory == 0 => return 0,
            MaxmemoryClients::Percent(p) => (maxmemory as f64 * p as f64 / 100.0) as u64,
            MaxmemoryClients::Bytes(n) => n,
        };
        bytes.max(EVICTION_LIMIT_MIN)
    }
}

impl fmt::Display for MaxmemoryClients {
    /// CONFIG GET's form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxmemoryClients::Off => write!(f, "0"),
            MaxmemoryClients::Bytes(n) => write!(f, "{n}"),
            MaxmemoryClients::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// One client's published memory figures (see the module docs). Written only by the
/// client's own connection (and zeroed by eviction and disconnection), read by anyone.
#[derive(Debug, Default)]
pub struct ClientMemory {
    /// Unconsumed bytes in the query buffer (`qbuf`).
    query_len: AtomicUsize,
    /// The query buffer's capacity.
    query_cap: AtomicUsize,
    /// The reply buffer's capacity (`rbs`).
    reply_cap: AtomicUsize,
    /// The most reply bytes held at once since the buffer was last sized (`rbp`).
    reply_peak: AtomicUsize,
    /// Reply bytes the socket has not taken yet (`obl`, `oll`, `omem`).
    pending: AtomicUsize,
    /// Commands queued by MULTI, and their bytes (`multi-mem`).
    queued: AtomicUsize,
    queued_bytes: AtomicU64,
    /// The published total (`tot-mem`).
    total: AtomicU64,
    /// Evicted: its connection is closing and publishes nothing more.
    evicted: AtomicBool,
}

/// CLIENT LIST's memory fields of one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFields {
    pub qbuf: usize,
    pub qbuf_free: usize,
    pub multi_mem: u64,
    pub rbs: usize,
    pub rbp: usize,
    pub obl: usize,
    pub oll: usize,
    pub omem: u64,
    pub tot_mem: u64,
}

impl ClientMemory {
    /// Notes the query buffer after a read or a batch.
    pub fn note_query(&self, len: usize, capacity: usize) {
        self.query_len.store(len, Ordering::Relaxed);
        self.query_cap.store(capacity.max(len), Ordering::Relaxed);
    }

    /// Notes the reply buffer's capacity and the most it has held since it was last sized.
    pub fn note_reply(&self, capacity: usize, peak: usize) {
        self.reply_cap.store(capacity, Ordering::Relaxed);
        self.reply_peak.store(peak, Ordering::Relaxed);
    }

    /// Notes the reply bytes waiting for the socket.
    pub fn note_pending(&self, bytes: usize) {
        self.pending.store(bytes, Ordering::Relaxed);
    }

    /// Notes the transaction's queue after a command (`None`: no transaction). Grown by one
    /// command, only that command is counted; otherwise the queue is counted again.
    pub fn note_queue(&self, queue: Option<&[Vec<Bytes>]>) {
        let known = self.queued.load(Ordering::Relaxed);
        let Some(queue) = queue else {
            if known != 0 || self.queued_bytes.load(Ordering::Relaxed) != 0 {
                self.queued.store(0, Ordering::Relaxed);
                self.queued_bytes.store(0, Ordering::Relaxed);
            }
            return;
        };
        let bytes = match queue.len() {
            n if n == known => return,
            n if n == known + 1 => {
                self.queued_bytes.load(Ordering::Relaxed)
                    + queue.last().map_or(0, |c| command_bytes(c))
            }
            _ => queue.iter().map(|c| command_bytes(c)).sum(),
        };
        self.queued.store(queue.len(), Ordering::Relaxed);
        self.queued_bytes.store(bytes, Ordering::Relaxed);
    }

    /// The client's total with `watched` keys and `subscriptions`, from its published parts.
    fn total_with(&self, watched: usize, subscriptions: usize) -> u64 {
        let relaxed = Ordering::Relaxed;
        CONNECTION_BYTES
            + self.query_cap.load(relaxed) as u64
            + self.reply_cap.load(relaxed).max(self.pending.load(relaxed)) as u64
            + self.queued_bytes.load(relaxed)
            + watched as u64 * WATCHED_KEY_BYTES
            + subscriptions as u64 * SUBSCRIPTION_BYTES
    }

    /// Publishes the total with `watched` keys and `subscriptions` into `all`; returns whether
    /// it grew (and so may call for eviction).
    pub fn publish(&self, all: &ClientsMemory, watched: usize, subscriptions: usize) -> bool {
        if self.evicted.load(Ordering::Relaxed) {
            return false;
        }
        let total = self.total_with(watched, subscriptions);
        let before = self.total.load(Ordering::Relaxed);
        if total == before {
            return false;
        }
        let before = self.total.swap(total, Ordering::Relaxed);
        all.adjust(before, total);
        total > before
    }

    /// Takes the client's total out of `all` (it is disconnecting, or `evicted`).
    pub fn withdraw(&self, all: &ClientsMemory, evicted: bool) -> u64 {
        if evicted {
            self.evicted.store(true, Ordering::Relaxed);
        }
        let before = self.total.swap(0, Ordering::Relaxed);
        all.adjust(before, 0);
        before
    }

    /// The published total.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Whether it was evicted.
    pub fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// The query buffer's capacity and the reply buffer's (INFO's recent maximum buffers).
    pub fn buffers(&self) -> (usize, usize) {
        (
            self.query_cap.load(Ordering::Relaxed),
            self.reply_cap.load(Ordering::Relaxed),
        )
    }

    /// CLIENT LIST's fields. The reply bytes past the first [`UNCOUNTED_BYTES`] are the
    /// reply list of Redis's (`oll` blocks of that size, `omem` bytes), the first its buffer.
    pub fn fields(&self) -> MemoryFields {
        let relaxed = Ordering::Relaxed;
        let (qbuf, cap) = (self.query_len.load(relaxed), self.query_cap.load(relaxed));
        let pending = self.pending.load(relaxed);
        let listed = pending.saturating_sub(UNCOUNTED_BYTES as usize);
        MemoryFields {
            qbuf,
            qbuf_free: cap.saturating_sub(qbuf),
            multi_mem: self.queued_bytes.load(relaxed),
            rbs: self.reply_cap.load(relaxed),
            rbp: self.reply_peak.load(relaxed),
            obl: pending.min(UNCOUNTED_BYTES as usize),
            oll: listed.div_ceil(UNCOUNTED_BYTES as usize),
            omem: listed as u64,
            tot_mem: self.total(),
        }
    }
}

/// A queued command's bytes.
fn command_bytes(argv: &[Bytes]) -> u64 {
    QUEUED_COMMAND_BYTES
        + argv
            .iter()
            .map(|a| a.len() as u64 + QUEUED_ARG_BYTES)
            .sum::<u64>()
}

/// Every client's total, and how many were evicted.
#[derive(Debug, Default)]
pub struct ClientsMemory {
    total: AtomicU64,
    evicted: AtomicU64,
}

impl ClientsMemory {
    fn adjust(&self, before: u64, after: u64) {
        if after >= before {
            self.total.fetch_add(after - before, Ordering::Relaxed);
        } else {
            self.total.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// The clients' total (INFO's `mem_clients_normal`).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Counts an evicted client.
    pub fn count_evicted(&self) {
        self.evicted.fetch_add(1, Ordering::Relaxed);
    }

    /// INFO's `evicted_clients`.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maxmemory_clients_reads_and_shows_as_redis() {
        assert_eq!(MaxmemoryClients::parse("0"), Ok(MaxmemoryClients::Off));
        assert_eq!(MaxmemoryClients::parse("0%"), Ok(MaxmemoryClients::Off));
        assert_eq!(
            MaxmemoryClients::parse("1mb"),
            Ok(MaxmemoryClients::Bytes(1 << 20))
        );
        assert_eq!(
            MaxmemoryClients::parse("10%"),
            Ok(MaxmemoryClients::Percent(10))
        );
        let why = |v: &str| MaxmemoryClients::parse(v).unwrap_err().to_string();
        assert_eq!(
            why("101%"),
            "percentage argument must be less or equal to 100"
        );
        for bad in ["%", "-1%", "abc", "1.5%", "-5"] {
            assert_eq!(
                why(bad),
                "argument must be a memory or percent value",
                "{bad}"
            );
        }
        assert_eq!(MaxmemoryClients::Percent(10).to_string(), "10%");
        assert_eq!(MaxmemoryClients::Bytes(5).to_string(), "5");
        assert_eq!(MaxmemoryClients::Off.to_string(), "0");
    }

    #[test]
    fn the_limit_follows_maxmemory_and_has_a_floor() {
        assert_eq!(MaxmemoryClients::Off.limit(1 << 30), 0);
        assert_eq!(MaxmemoryClients::Percent(10).limit(0), 0);
        assert_eq!(MaxmemoryClients::Percent(10).limit(100 << 20), 10 << 20);
        assert_eq!(MaxmemoryClients::Bytes(1000).limit(0), EVICTION_LIMIT_MIN);
        assert_eq!(
            MaxmemoryClients::Percent(1).limit(1 << 20),
            EVICTION_LIMIT_MIN
        );
    }

    #[test]
    fn a_queue_is_counted_command_by_command_and_again_when_it_changes_otherwise() {
        let m = ClientMemory::default();
        let cmd = |n: usize| vec![Bytes::from(vec![b'x'; n]); 2];
        let mut queue = vec![cmd(10)];
        m.note_queue(Some(&queue));
        let one = command_bytes(&queue[0]);
        assert_eq!(m.fields().multi_mem, one);
        queue.push(cmd(100));
        m.note_queue(Some(&queue));
        assert_eq!(m.fields().multi_mem, one + command_bytes(&queue[1]));
        m.note_queue(Some(&queue));
        assert_eq!(m.fields().multi_mem, one + command_bytes(&queue[1]));
        let fresh = vec![cmd(1)];
        m.note_queue(Some(&fresh));
        assert_eq!(m.fields().multi_mem, command_bytes(&fresh[0]));
        m.note_queue(None);
        assert_eq!(m.fields().multi_mem, 0);
    }

    #[test]
    fn the_sum_is_every_published_total_until_withdrawn() {
        let all = ClientsMemory::default();
        let (a, b) = (ClientMemory::default(), ClientMemory::default());
        a.note_query(0, 16 * 1024);
        assert!(a.publish(&all, 0, 0));
        b.note_query(100, 1 << 20);
        assert!(b.publish(&all, 2, 1));
        assert_eq!(all.total(), a.total() + b.total());
        assert_eq!(b.total(), CONNECTION_BYTES + (1 << 20) + 2 * 64 + 48);
        // Unchanged: nothing to publish.
        assert!(!a.publish(&all, 0, 0));
        b.note_query(0, 16 * 1024);
        assert!(!b.publish(&all, 0, 0));
        assert_eq!(all.total(), a.total() + b.total());
        let taken = b.withdraw(&all, true);
        assert_eq!(taken, CONNECTION_BYTES + 16 * 1024);
        assert!(b.is_evicted());
        // An evicted client publishes nothing more.
        b.note_query(0, 1 << 20);
        assert!(!b.publish(&all, 0, 0));
        assert_eq!(all.total(), a.total());
        a.withdraw(&all, false);
        assert_eq!(all.total(), 0);
    }

    #[test]
    fn pending_replies_show_as_a_buffer_then_a_list() {
        let m = ClientMemory::default();
        m.note_pending(1000);
        let f = m.fields();
        assert_eq!((f.obl, f.oll, f.omem), (1000, 0, 0));
        m.note_pending(UNCOUNTED_BYTES as usize + 40_000);
        let f = m.fields();
        assert_eq!(
            (f.obl, f.oll, f.omem),
            (UNCOUNTED_BYTES as usize, 3, 40_000)
        );
    }
}

//! XREAD / XREADGROUP `MAXCOUNT` and `MAXSIZE` (Redis 8.10): caps on the whole reply of a
//! multi-stream read, where COUNT caps each stream (`docs/reference/streams-8.md` §6).
//!
//! Streams are served in the order given; each gets `min(COUNT, entries left of MAXCOUNT)`.
//! MAXSIZE bounds the bytes the command has written to its reply, as Redis counts them: its
//! own bytes only (earlier replies in a MULTI never count, since each command has its own
//! [`Budget`]), in the caller's protocol ([`crate::Snapshot::protocol`]), and a header whose
//! length is only known at the end (the outer array or map, a stream's entry array) counts
//! once it is complete: a stream's entry array when the stream is done, the outer one never.
//!
//! The test, made before each stream and before each entry: stop when at least one entry has
//! been emitted and the bytes reach MAXSIZE. So one entry is always returned when any is
//! available (an oversized first entry whole), an empty read stays empty, no entry is cut, and
//! a stream the budget never reaches is left out of the reply. An entry not emitted has no
//! effect at all (the callers check before touching the PEL or the group's cursor).

use std::cell::Cell;

use crate::error::{Error, Result};
use crate::reply_size::{Protocol, bulk_len, header_len};

use super::args::parse_i64;

/// The caps one read was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Caps {
    /// MAXCOUNT: the most entries in the whole reply.
    pub max_count: Option<usize>,
    /// MAXSIZE: the reply bytes after which no further entry is emitted.
    pub max_size: Option<usize>,
}

impl Caps {
    /// Parses MAXCOUNT's value: a positive integer (the same error for anything else).
    pub(crate) fn parse_max_count(arg: &[u8]) -> Result<usize> {
        positive(arg).ok_or(Error::MaxCountNotPositive)
    }

    /// Parses MAXSIZE's value: a positive integer (the same error for anything else).
    pub(crate) fn parse_max_size(arg: &[u8]) -> Result<usize> {
        positive(arg).ok_or(Error::MaxSizeNotPositive)
    }

    /// After the option loop: MAXCOUNT must not be below COUNT (COUNT 0 is no per-stream cap).
    pub(crate) fn check(&self, count: usize) -> Result<()> {
        match self.max_count {
            Some(max) if count > 0 && max < count => Err(Error::MaxCountBelowCount),
            _ => Ok(()),
        }
    }
}

fn positive(arg: &[u8]) -> Option<usize> {
    parse_i64(arg)
        .ok()
        .filter(|&n| n > 0)
        .and_then(|n| usize::try_from(n).ok())
}

/// What one read has spent of its caps. Shared by the entry callback and the check before
/// each entry, hence the cells.
#[derive(Debug)]
pub(crate) struct Budget {
    caps: Caps,
    protocol: Protocol,
    /// Entries emitted so far, over all streams.
    emitted: Cell<usize>,
    /// Reply bytes counted so far (see the module doc for what counts when).
    bytes: Cell<usize>,
    /// Whether the current stream's header has been counted.
    header_counted: Cell<bool>,
}

impl Budget {
    /// A fresh budget for one command run.
    pub(crate) fn new(caps: Caps, protocol: Protocol) -> Budget {
        Budget {
            caps,
            protocol,
            emitted: Cell::new(0),
            bytes: Cell::new(0),
            header_counted: Cell::new(false),
        }
    }

    /// The protocol the reply is measured in.
    pub(crate) fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Whether entry sizes matter (MAXSIZE given): measuring costs nothing otherwise.
    pub(crate) fn sizing(&self) -> bool {
        self.caps.max_size.is_some()
    }

    fn size_reached(&self) -> bool {
        self.caps
            .max_size
            .is_some_and(|max| self.emitted.get() > 0 && self.bytes.get() >= max)
    }

    /// The check before a stream: `None` when serving stops here (this stream and every later
    /// one left out), else the most entries it may get (0: no limit), `min(count, left)`.
    pub(crate) fn open_stream(&self, count: usize) -> Option<usize> {
        self.header_counted.set(false);
        if self.size_reached() {
            return None;
        }
        match self.caps.max_count {
            None => Some(count),
            Some(max) => {
                let left = max.saturating_sub(self.emitted.get());
                if left == 0 {
                    None
                } else if count == 0 {
                    Some(left)
                } else {
                    Some(count.min(left))
                }
            }
        }
    }

    /// The check before an entry of the stream `key`: whether it may be emitted. The first
    /// one counts the stream's header (RESP2 `*2` and the key, RESP3 the key), as Redis writes
    /// it before the entries.
    pub(crate) fn may_emit(&self, key: &[u8]) -> bool {
        self.count_header(key);
        !self.size_reached()
    }

    /// Counts one emitted entry of `bytes` (measured only when [`Budget::sizing`]).
    pub(crate) fn emitted(&self, bytes: usize) {
        self.emitted.set(self.emitted.get() + 1);
        self.bytes.set(self.bytes.get().saturating_add(bytes));
    }

    /// The stream `key` was served with `entries` entries: its header and its entry array's
    /// header now count.
    pub(crate) fn close_stream(&self, key: &[u8], entries: usize) {
        self.count_header(key);
        self.bytes
            .set(self.bytes.get().saturating_add(header_len(entries)));
    }

    fn count_header(&self, key: &[u8]) {
        if self.header_counted.replace(true) {
            return;
        }
        let framing = match self.protocol {
            Protocol::Resp2 => header_len(2),
            Protocol::Resp3 => 0,
        };
        self.bytes.set(
            self.bytes
                .get()
                .saturating_add(framing + bulk_len(key.len())),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_must_be_positive_integers() {
        assert_eq!(Caps::parse_max_count(b"3").ok(), Some(3));
        for bad in [&b"0"[..], b"-1", b"abc", b""] {
            assert!(matches!(
                Caps::parse_max_count(bad),
                Err(Error::MaxCountNotPositive)
            ));
            assert!(matches!(
                Caps::parse_max_size(bad),
                Err(Error::MaxSizeNotPositive)
            ));
        }
    }

    #[test]
    fn max_count_at_least_count_and_count_zero_is_unlimited() {
        let caps = Caps {
            max_count: Some(2),
            max_size: None,
        };
        assert!(caps.check(2).is_ok());
        assert!(caps.check(0).is_ok());
        assert!(matches!(caps.check(3), Err(Error::MaxCountBelowCount)));
    }

    #[test]
    fn count_budget_shrinks_per_stream_and_closes() {
        let budget = Budget::new(
            Caps {
                max_count: Some(3),
                max_size: None,
            },
            Protocol::Resp2,
        );
        assert_eq!(budget.open_stream(2), Some(2));
        budget.emitted(0);
        budget.emitted(0);
        assert_eq!(budget.open_stream(2), Some(1));
        assert_eq!(budget.open_stream(0), Some(1));
        budget.emitted(0);
        assert_eq!(budget.open_stream(5), None);
    }

    #[test]
    fn size_budget_never_stops_before_the_first_entry() {
        let budget = Budget::new(
            Caps {
                max_count: None,
                max_size: Some(1),
            },
            Protocol::Resp3,
        );
        assert_eq!(budget.open_stream(0), Some(0));
        assert!(budget.may_emit(b"s"), "the first entry is always emitted");
        budget.emitted(100);
        assert!(!budget.may_emit(b"s"));
        assert_eq!(budget.open_stream(0), None);
    }
}

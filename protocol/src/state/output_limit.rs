//! `client-output-buffer-limit`: how many reply bytes a client may leave unread before the
//! server drops it, per class (`normal`, `replica` alias `slave`, `pubsub`), as Redis has it.
//!
//! A class has a hard limit (bytes; reaching it closes the client at once) and a soft limit
//! with a duration (staying at or over it for more than that many seconds closes it); 0
//! disables either. The bytes counted are the replies the server holds for the client that
//! the kernel has not taken yet — a client that never reads keeps its socket buffers full and
//! everything past them counts — so a client that asks for a huge XRANGE and never reads is
//! dropped instead of holding the reply in memory. An unauthenticated client (a password is
//! set, no AUTH yet) may hold at most [`UNAUTHENTICATED_BYTES_MAX`], as in Redis. As in
//! Redis, the first [`UNCOUNTED_BYTES`] are not counted. Dropping
//! logs Redis's line ("Client ... for overcoming of output buffer limits.").
//!
//! Parsing and CONFIG GET's form are Redis's (`updateClientOutputBufferLimit`): groups of
//! `class hard soft seconds`, memory units allowed, all groups checked before any is set;
//! classes not named keep their limits.

use std::time::Instant;

use super::settings::parse_memory;

/// Reply bytes an unauthenticated client may hold (Redis's 1024).
pub const UNAUTHENTICATED_BYTES_MAX: u64 = 1024;
/// The first reply bytes a client holds that no limit counts: Redis keeps them in a static
/// 16 KiB buffer outside its "logical" output size.
pub const UNCOUNTED_BYTES: u64 = 16 * 1024;

/// The bytes the limits count when `pending` reply bytes are unwritten.
pub fn counted(pending: usize) -> u64 {
    (pending as u64).saturating_sub(UNCOUNTED_BYTES)
}

/// One class's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassLimit {
    /// Bytes at which the client is dropped at once; 0 = none.
    pub hard: u64,
    /// Bytes at or over which the client may stay only `soft_seconds`; 0 = none.
    pub soft: u64,
    /// Seconds.
    pub soft_seconds: u64,
}

/// The three classes, in CONFIG GET's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Ordinary clients.
    pub normal: ClassLimit,
    /// Replicas (`slave`).
    pub replica: ClassLimit,
    /// Pub/sub subscribers.
    pub pubsub: ClassLimit,
}

impl Default for OutputLimits {
    /// Redis's defaults: `normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60`.
    fn default() -> Self {
        OutputLimits {
            normal: ClassLimit {
                hard: 0,
                soft: 0,
                soft_seconds: 0,
            },
            replica: ClassLimit {
                hard: 256 << 20,
                soft: 64 << 20,
                soft_seconds: 60,
            },
            pubsub: ClassLimit {
                hard: 32 << 20,
                soft: 8 << 20,
                soft_seconds: 60,
            },
        }
    }
}

impl std::fmt::Display for OutputLimits {
    /// CONFIG GET's form: bytes, classes in order, `slave` for replicas.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let class = |f: &mut std::fmt::Formatter<'_>, name: &str, c: &ClassLimit| {
            write!(f, "{name} {} {} {}", c.hard, c.soft, c.soft_seconds)
        };
        class(f, "normal", &self.normal)?;
        f.write_str(" ")?;
        class(f, "slave", &self.replica)?;
        f.write_str(" ")?;
        class(f, "pubsub", &self.pubsub)
    }
}

impl OutputLimits {
    /// These limits with the groups of `value` applied (Redis's CONFIG SET): the error text
    /// is Redis's, and on an error nothing changes.
    pub fn with(&self, value: &str) -> Result<OutputLimits, &'static str> {
        let words: Vec<&str> = value.split_ascii_whitespace().collect();
        if words.len() % 4 != 0 {
            return Err("Wrong number of arguments in buffer limit configuration.");
        }
        let mut next = *self;
        for group in words.chunks(4) {
            let class = match group[0].to_ascii_lowercase().as_str() {
                "normal" => &mut next.normal,
                "slave" | "replica" => &mut next.replica,
                "pubsub" => &mut next.pubsub,
                _ => return Err("Invalid client class specified in buffer limit configuration."),
            };
            let bad = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            let hard = parse_memory(group[1]).ok_or(bad)?;
            let soft = parse_memory(group[2]).ok_or(bad)?;
            let soft_seconds: u64 = group[3]
                .parse::<i64>()
                .ok()
                .and_then(|s| u64::try_from(s).ok())
                .ok_or(bad)?;
            *class = ClassLimit {
                hard,
                soft,
                soft_seconds,
            };
        }
        Ok(next)
    }
}

/// A client's standing against its class limit, checked each time its pending bytes change.
#[derive(Debug, Default)]
pub struct OutputGuard {
    /// When it first reached the soft limit, while it stays at or over it.
    soft_since: Option<Instant>,
}

/// Why a client is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// Reached the hard limit.
    Hard,
    /// Over the soft limit for longer than allowed.
    Soft,
    /// Unauthenticated and over [`UNAUTHENTICATED_BYTES_MAX`].
    Unauthenticated,
}

impl OutputGuard {
    /// Checks `pending` bytes against `limit` (Redis's `checkClientOutputBufferLimits`):
    /// `Err` means drop the client now.
    pub fn check(
        &mut self,
        pending: u64,
        limit: &ClassLimit,
        unauthenticated: bool,
    ) -> Result<(), Overrun> {
        if unauthenticated && pending > UNAUTHENTICATED_BYTES_MAX {
            return Err(Overrun::Unauthenticated);
        }
        if limit.hard > 0 && pending >= limit.hard {
            return Err(Overrun::Hard);
        }
        if limit.soft > 0 && pending >= limit.soft {
            let since = *self.soft_since.get_or_insert_with(Instant::now);
            if since.elapsed().as_secs() > limit.soft_seconds {
                return Err(Overrun::Soft);
            }
        } else {
            self.soft_since = None;
        }
        Ok(())
    }

    /// When the soft limit must be checked again to catch its duration running out, while
    /// the client stays over it.
    pub fn soft_deadline(&self, limit: &ClassLimit) -> Option<Instant> {
        let since = self.soft_since?;
        Some(since + std::time::Duration::from_secs(limit.soft_seconds + 1))
    }
}

/// Logs Redis's line for a client dropped for its output (`client` is its CLIENT LIST line):
/// a reply that crossed a limit "scheduled to be closed ASAP", a soft limit outlasted (Redis
/// finds it in its cron) "closed".
pub fn log_drop(client: &str, overrun: Overrun) {
    match overrun {
        Overrun::Hard | Overrun::Unauthenticated => tracing::warn!(
            "Client {client} scheduled to be closed ASAP for overcoming of output buffer limits."
        ),
        Overrun::Soft => {
            tracing::warn!("Client {client} closed for overcoming of output buffer limits.");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_groups_like_redis_and_shows_bytes() {
        let limits = OutputLimits::default();
        assert_eq!(
            limits.to_string(),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        let set = limits.with("normal 10mb 5mb 10").unwrap();
        assert_eq!(
            set.to_string(),
            "normal 10485760 5242880 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        let set = set.with("replica 1 2 3 PUBSUB 1k 1kb 0").unwrap();
        assert_eq!(
            set.to_string(),
            "normal 10485760 5242880 10 slave 1 2 3 pubsub 1000 1024 0"
        );
        assert_eq!(set.with("").unwrap(), set);
        let wrong = "Wrong number of arguments in buffer limit configuration.";
        let class = "Invalid client class specified in buffer limit configuration.";
        let value = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        assert_eq!(limits.with("normal 1 2"), Err(wrong));
        assert_eq!(limits.with("master 1 1 1"), Err(class));
        assert_eq!(limits.with("bogus 1 1 1"), Err(class));
        assert_eq!(limits.with("normal 10mb 5mb x"), Err(value));
        assert_eq!(limits.with("normal -1 0 0"), Err(value));
        assert_eq!(limits.with("normal 1x 0 0"), Err(value));
        assert_eq!(limits.with("normal 1 0 -1"), Err(value));
        // A bad later group leaves the earlier ones unset too.
        assert_eq!(limits.with("normal 1 1 1 bogus 1 1 1"), Err(class));
    }

    #[test]
    fn hard_drops_at_once_soft_only_after_its_seconds() {
        let limit = ClassLimit {
            hard: 100,
            soft: 50,
            soft_seconds: 3600,
        };
        let mut guard = OutputGuard::default();
        assert_eq!(guard.check(10, &limit, false), Ok(()));
        assert_eq!(guard.check(60, &limit, false), Ok(()));
        assert!(guard.soft_deadline(&limit).is_some());
        assert_eq!(guard.check(10, &limit, false), Ok(()));
        assert!(guard.soft_deadline(&limit).is_none());
        assert_eq!(guard.check(100, &limit, false), Err(Overrun::Hard));
        assert_eq!(
            guard.check(
                1025,
                &ClassLimit {
                    hard: 0,
                    soft: 0,
                    soft_seconds: 0
                },
                true
            ),
            Err(Overrun::Unauthenticated)
        );
        let instant = ClassLimit {
            hard: 0,
            soft: 50,
            soft_seconds: 0,
        };
        let mut guard = OutputGuard {
            soft_since: Some(Instant::now() - std::time::Duration::from_secs(2)),
        };
        assert_eq!(guard.check(60, &instant, false), Err(Overrun::Soft));
    }
}

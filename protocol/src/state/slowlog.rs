//! The slow log (SLOWLOG): the commands that took at least `slowlog-log-slower-than`
//! microseconds, newest first, at most `slowlog-max-len` of them, as Redis keeps it.
//!
//! An entry keeps at most [`ARGS_MAX`] arguments (the last one then says how many more there
//! were) and at most [`ARG_BYTES_MAX`] bytes of each (the rest counted in a suffix), Redis's
//! `slowlog-entry-max-argc` and `slowlog-entry-max-string-len` defaults. Ids count from 0
//! and are not reused after SLOWLOG RESET. A smaller `slowlog-max-len` takes effect at the
//! next entry, as in Redis.

use std::collections::VecDeque;

use bytes::Bytes;
use parking_lot::Mutex;

/// Arguments kept per entry.
pub const ARGS_MAX: usize = 32;
/// Bytes kept per argument.
pub const ARG_BYTES_MAX: usize = 128;

/// One slow command.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its id.
    pub id: u64,
    /// Unix seconds when it was logged.
    pub time_s: u64,
    /// How long it ran.
    pub usec: u64,
    /// Its arguments, shortened as the module says.
    pub argv: Vec<Bytes>,
    /// The client's `ip:port`.
    pub peer: String,
    /// The client's name, or empty.
    pub name: Bytes,
}

/// The log.
#[derive(Debug, Default)]
pub(crate) struct SlowLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: VecDeque<Entry>,
    next_id: u64,
}

/// `argv` as an entry keeps it.
fn shortened(argv: &[&[u8]]) -> Vec<Bytes> {
    let kept = argv.len().min(ARGS_MAX);
    (0..kept)
        .map(|j| {
            if kept != argv.len() && j == kept - 1 {
                return Bytes::from(format!("... ({} more arguments)", argv.len() - kept + 1));
            }
            let arg = argv[j];
            if arg.len() > ARG_BYTES_MAX {
                let mut text = arg[..ARG_BYTES_MAX].to_vec();
                text.extend_from_slice(
                    format!("... ({} more bytes)", arg.len() - ARG_BYTES_MAX).as_bytes(),
                );
                Bytes::from(text)
            } else {
                Bytes::copy_from_slice(arg)
            }
        })
        .collect()
}

/// Who ran a command, as an entry shows it.
pub(crate) struct Caller {
    /// `ip:port`.
    pub peer: String,
    /// CLIENT SETNAME's name, or empty.
    pub name: Bytes,
    /// Unix seconds now.
    pub time_s: u64,
}

impl SlowLog {
    /// Logs a command that ran `usec` if the settings say it is slow (`slower_than` < 0
    /// disables the log, as does `max_len` 0).
    pub(crate) fn record(
        &self,
        slower_than: i64,
        max_len: u64,
        argv: &[&[u8]],
        usec: u64,
        caller: impl FnOnce() -> Caller,
    ) {
        if slower_than < 0 || max_len == 0 || (usec as i128) < i128::from(slower_than) {
            return;
        }
        let caller = caller();
        let mut inner = self.inner.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.entries.push_front(Entry {
            id,
            time_s: caller.time_s,
            usec,
            argv: shortened(argv),
            peer: caller.peer,
            name: caller.name,
        });
        let max = usize::try_from(max_len).unwrap_or(usize::MAX);
        inner.entries.truncate(max);
    }

    /// The newest `count` entries (all with `None`).
    pub(crate) fn newest(&self, count: Option<usize>) -> Vec<Entry> {
        let inner = self.inner.lock();
        let count = count.unwrap_or(inner.entries.len());
        inner.entries.iter().take(count).cloned().collect()
    }

    /// How many entries it holds.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().entries.len()
    }

    /// Empties it (ids go on counting).
    pub(crate) fn reset(&self) {
        self.inner.lock().entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            peer: "127.0.0.1:1".into(),
            name: Bytes::new(),
            time_s: 0,
        }
    }

    #[test]
    fn keeps_slow_commands_newest_first_within_max_len() {
        let log = SlowLog::default();
        log.record(10, 2, &[b"a"], 9, caller);
        assert_eq!(log.len(), 0);
        log.record(10, 2, &[b"a"], 10, caller);
        log.record(10, 2, &[b"b"], 11, caller);
        log.record(10, 2, &[b"c"], 12, caller);
        let ids: Vec<u64> = log.newest(None).iter().map(|e| e.id).collect();
        assert_eq!(ids, [2, 1]);
        log.record(-1, 2, &[b"d"], 100, caller);
        assert_eq!(log.len(), 2);
        log.reset();
        log.record(0, 2, &[b"e"], 0, caller);
        assert_eq!(log.newest(Some(5))[0].id, 3);
    }

    #[test]
    fn shortens_long_arguments_and_argument_lists_like_redis() {
        let long = vec![b'x'; 130];
        let args: Vec<&[u8]> = vec![&long; 40];
        let kept = shortened(&args);
        assert_eq!(kept.len(), 32);
        assert_eq!(kept[31].as_ref(), b"... (9 more arguments)");
        assert!(kept[0].ends_with(b"x... (2 more bytes)"));
        assert_eq!(kept[0].len(), 128 + "... (2 more bytes)".len());
    }
}

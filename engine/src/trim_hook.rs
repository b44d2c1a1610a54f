//! The trim hook: how an embedder takes over the trims of the streams it covers.
//!
//! The server's archive folds the entries a trim removes into durable storage before they go.
//! Instead of running XADD and XTRIM its own way, it installs a [`TrimHook`] on the
//! [`Keyspace`](crate::Keyspace); XADD's and XTRIM's trim step hands the stream to it when it
//! covers the key, and the commands go on producing their own effects (propagation, events,
//! WATCH, dirty) from what the hook reports. So an archived stream is written through the
//! same path as any other.
//!
//! Contract:
//! - [`TrimHook::refusal`] is asked before a covered write that would trim changes anything;
//!   an error there is the command's reply and nothing changes.
//! - [`TrimHook::trim`] (XTRIM) removes what the trim asks or fails with nothing removed.
//! - [`TrimHook::trim_after_add`] (XADD, once the entry is added) never fails the XADD: it
//!   trims, skips the trim (reporting `Removed(0)`), or defers it ([`TrimDone::Deferred`]):
//!   then XADD propagates itself without its trim, and the hook must propagate the trim when
//!   it runs it.
//!
//! The hook runs under the keyspace lock: it must not wait on another keyspace call.

use std::fmt;

use crate::config::NodeLimits;
use crate::error::{Error, Result};
use crate::stream::{Stream, Trim};

/// What a hook did with XADD's trim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimDone {
    /// Trimmed now: the live entries removed (0 when it removed nothing or skipped the trim).
    Removed(u64),
    /// Left for later: the hook runs (and propagates) the trim itself.
    Deferred,
}

/// Takes over the trims of the streams it covers (see the module doc).
pub trait TrimHook: Send + Sync + fmt::Debug {
    /// Whether the trims of `key` in database `db` go through this hook.
    fn covers(&self, db: usize, key: &[u8]) -> bool;

    /// The error a covered write that would trim gets now, before it changes anything;
    /// `None` when trims may run.
    fn refusal(&self) -> Option<Error>;

    /// XTRIM's trim of a covered stream: the live entries removed, or an error with nothing
    /// removed.
    fn trim(&self, key: &[u8], stream: &mut Stream, trim: &Trim, limits: NodeLimits)
    -> Result<u64>;

    /// XADD's trim of a covered stream, after the entry was added.
    fn trim_after_add(
        &self,
        key: &[u8],
        stream: &mut Stream,
        trim: &Trim,
        limits: NodeLimits,
    ) -> TrimDone;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use bytes::Bytes;
    use parking_lot::Mutex;

    use super::*;
    use crate::clock::ManualClock;
    use crate::keyspace::Keyspace;
    use crate::propagate::PropagationSink;
    use crate::reply::Reply;

    /// Covers keys starting with `a`; refuses while `refusing`; defers XADD's trims and counts
    /// XTRIM's.
    #[derive(Debug, Default)]
    struct Hook {
        refusing: AtomicBool,
        trims: AtomicUsize,
    }

    impl TrimHook for Hook {
        fn covers(&self, _db: usize, key: &[u8]) -> bool {
            key.starts_with(b"a")
        }

        fn refusal(&self) -> Option<Error> {
            self.refusing
                .load(Ordering::Relaxed)
                .then(|| Error::TrimRefused("MISCONF refused".into()))
        }

        fn trim(
            &self,
            _: &[u8],
            stream: &mut Stream,
            trim: &Trim,
            limits: NodeLimits,
        ) -> Result<u64> {
            self.trims.fetch_add(1, Ordering::Relaxed);
            Ok(stream.trim(trim, limits))
        }

        fn trim_after_add(&self, _: &[u8], _: &mut Stream, _: &Trim, _: NodeLimits) -> TrimDone {
            TrimDone::Deferred
        }
    }

    #[derive(Debug, Default)]
    struct Collect(Mutex<Vec<String>>);

    impl PropagationSink for Collect {
        fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
            self.0.lock().extend(commands.into_iter().map(|(_, argv)| {
                let words: Vec<String> = argv
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                words.join(" ")
            }));
        }
    }

    fn keyspace() -> (Keyspace, Arc<Hook>, Arc<Collect>) {
        let ks = Keyspace::new(Arc::new(ManualClock::new(1_000)));
        let hook = Arc::new(Hook::default());
        let sink = Arc::new(Collect::default());
        ks.set_trim_hook(Some(hook.clone()));
        ks.set_propagation_sink(Some(sink.clone()));
        (ks, hook, sink)
    }

    fn run(ks: &Keyspace, line: &str) -> crate::error::Result<Reply> {
        ks.execute(&line.split(' ').collect::<Vec<_>>())
    }

    #[test]
    fn a_refusing_hook_fails_a_trimming_write_before_it_changes_anything() {
        let (ks, hook, sink) = keyspace();
        hook.refusing.store(true, Ordering::Relaxed);
        let refused = Err(Error::TrimRefused("MISCONF refused".into()));
        assert_eq!(run(&ks, "XADD a MAXLEN 1 1-1 f v"), refused);
        assert_eq!(run(&ks, "XTRIM a MAXLEN 1"), refused);
        assert_eq!(run(&ks, "XLEN a"), Ok(Reply::Int(0)));
        // A write that does not trim, and a key the hook does not cover, go on.
        assert!(run(&ks, "XADD a 1-1 f v").is_ok());
        assert!(run(&ks, "XADD b MAXLEN 1 1-1 f v").is_ok());
        assert_eq!(
            *sink.0.lock(),
            ["XADD a 1-1 f v", "XADD b MAXLEN 1 1-1 f v"]
        );
        ks.check_invariants().unwrap();
    }

    #[test]
    fn a_deferred_trim_leaves_the_entries_and_propagates_the_xadd_without_its_trim() {
        let (ks, _, sink) = keyspace();
        run(&ks, "XADD a 1-1 f v").unwrap();
        run(&ks, "XADD a MAXLEN ~ 1 LIMIT 10 ACKED 2-1 f v").unwrap();
        assert_eq!(run(&ks, "XLEN a"), Ok(Reply::Int(2)));
        assert_eq!(*sink.0.lock(), ["XADD a 1-1 f v", "XADD a 2-1 f v"]);
        ks.check_invariants().unwrap();
    }

    #[test]
    fn xtrim_of_a_covered_stream_is_the_hooks_with_xtrims_own_effects() {
        let (ks, hook, sink) = keyspace();
        for i in 1..=3 {
            run(&ks, &format!("XADD a {i}-1 f v")).unwrap();
        }
        assert_eq!(run(&ks, "XTRIM a MAXLEN 1"), Ok(Reply::Int(2)));
        assert_eq!(hook.trims.load(Ordering::Relaxed), 1);
        assert_eq!(
            sink.0.lock().last().map(String::as_str),
            Some("XTRIM a MAXLEN 1")
        );
        assert_eq!(ks.dirty(), 3 + 2);
        ks.check_invariants().unwrap();
    }
}

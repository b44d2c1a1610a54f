//! What the accept loop does when `accept` fails.
//!
//! Out of descriptors (`EMFILE`, `ENFILE`) or kernel memory (`ENOBUFS`, `ENOMEM`), retrying at
//! once fails again at once: the loop would spin on one core and log without end. So it pauses
//! before the next accept, doubling from [`PAUSE_FIRST`] to [`PAUSE_MAX`] while the failures
//! last (as mini-redis backs off), and resets after an accept succeeds. Connections wait in the
//! listen backlog meanwhile and are served once descriptors free up. Other errors (a peer that
//! reset before it was accepted) are retried at once. Either way there is one warning, then at
//! most one per [`WARN_INTERVAL`], counting the failures in between.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

/// The first pause after running out of descriptors.
pub const PAUSE_FIRST: Duration = Duration::from_millis(10);
/// The longest pause.
pub const PAUSE_MAX: Duration = Duration::from_secs(1);
/// At most one accept warning per this long.
pub const WARN_INTERVAL: Duration = Duration::from_secs(60);

/// `ENOMEM`, `ENFILE`, `EMFILE`, `ENOBUFS` on Linux.
const RESOURCE_ERRNOS: [i32; 4] = [12, 23, 24, 105];

/// The accept loop's error state.
#[derive(Debug, Default)]
pub struct AcceptErrors {
    pause: Option<Duration>,
    last_warning: Option<Instant>,
    since_warning: u64,
}

/// Whether `e` means the process or system ran out of a resource `accept` needs.
pub fn is_resource_exhaustion(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::OutOfMemory
        || e.raw_os_error()
            .is_some_and(|errno| RESOURCE_ERRNOS.contains(&errno))
}

impl AcceptErrors {
    /// An accept succeeded: the next failure starts from the first pause again.
    pub fn succeeded(&mut self) {
        self.pause = None;
    }

    /// An accept failed with `e`: logs (rate-limited) and returns how long to pause before
    /// accepting again (zero for errors that retrying at once can clear).
    pub fn failed(&mut self, e: &std::io::Error) -> Duration {
        self.since_warning += 1;
        let exhausted = is_resource_exhaustion(e);
        let due = self
            .last_warning
            .is_none_or(|at| at.elapsed() >= WARN_INTERVAL);
        if due {
            let failures = std::mem::take(&mut self.since_warning);
            if exhausted {
                tracing::warn!(
                    error = %e,
                    failures,
                    "accepting client connection failed: out of descriptors or memory; pausing accepts (lower maxclients or raise 'ulimit -n')"
                );
            } else {
                tracing::warn!(error = %e, failures, "accepting client connection failed");
            }
            self.last_warning = Some(Instant::now());
        }
        if !exhausted {
            return Duration::ZERO;
        }
        let pause = self.pause.map_or(PAUSE_FIRST, |p| (p * 2).min(PAUSE_MAX));
        self.pause = Some(pause);
        pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_descriptors_pauses_doubling_and_warns_once() {
        let mut errors = AcceptErrors::default();
        let emfile = std::io::Error::from_raw_os_error(24);
        let pauses: Vec<Duration> = (0..10).map(|_| errors.failed(&emfile)).collect();
        assert_eq!(pauses[0], PAUSE_FIRST);
        assert_eq!(pauses[1], PAUSE_FIRST * 2);
        assert_eq!(*pauses.last().unwrap(), PAUSE_MAX);
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]));
        // Nine failures after the first warning wait for the next one.
        assert_eq!(errors.since_warning, 9);
        errors.succeeded();
        assert_eq!(errors.failed(&emfile), PAUSE_FIRST);
        let reset = std::io::Error::from(ErrorKind::ConnectionAborted);
        assert_eq!(errors.failed(&reset), Duration::ZERO);
        assert!(is_resource_exhaustion(&std::io::Error::from_raw_os_error(
            23
        )));
        assert!(!is_resource_exhaustion(&reset));
    }
}

//! CLIENT KILL's signal to a client's connection: a flag and the waker of the one task that
//! waits on it.
//!
//! The connection polls [`KillSignal::wait`] in every wait it makes (for input, for its socket
//! to take output, for a blocked command's reply), so the poll must cost next to nothing: an
//! atomic load and, when the task's waker is the one stored already, no clone and no lock
//! (unlike a `tokio::sync::Notify`, whose waiters sit in a locked list).
//!
//! Invariants: once fired, the signal stays fired; a wait polled before or after the firing
//! completes (the flag is checked again after the waker is stored, so a firing between the two
//! is not missed). Only one task waits on a signal at a time: the client's own connection.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures_util::task::AtomicWaker;

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct KillSignal {
    fired: AtomicBool,
    waker: AtomicWaker,
}

impl KillSignal {
    /// Fires the signal: the waiting task (if any) wakes, and every wait from now completes.
    pub(crate) fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Clears the signal; returns whether it had fired (a signal used again, as CLIENT
    /// UNBLOCK's is for each blocking command).
    pub(crate) fn take(&self) -> bool {
        self.fired.swap(false, Ordering::AcqRel)
    }

    /// Whether the signal fired.
    pub(crate) fn fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    /// Completes once the signal fired (at once if it has).
    pub(crate) fn wait(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            if self.fired() {
                return Poll::Ready(());
            }
            self.waker.register(cx.waker());
            if self.fired() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Context, Wake, Waker};

    use super::*;

    struct CountingWake(AtomicUsize);

    impl Wake for CountingWake {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_wait_pending_before_the_firing_is_woken_and_then_completes() {
        let signal = KillSignal::default();
        let counter = Arc::new(CountingWake(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut wait = pin!(signal.wait());
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        signal.fire();
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert!(wait.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn a_wait_made_after_the_firing_completes_at_once_every_time() {
        let signal = KillSignal::default();
        signal.fire();
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..2 {
            assert!(pin!(signal.wait()).poll(&mut cx).is_ready());
        }
        assert!(signal.fired());
    }
}

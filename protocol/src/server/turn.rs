//! [`after_ready_tasks`]: lets every task already queued to run go first, as Redis lets every
//! client its event-loop turn read before it writes any reply (`beforeSleep`).
//!
//! `tokio::task::yield_now` hands its waker to the scheduler, which wakes it only after the
//! run queue is empty and the I/O driver has been polled: one more `epoll_wait` (with a zero
//! timeout) in every turn some connection yields in. Here the task wakes itself before it
//! returns `Pending`, which queues it behind the tasks already queued and polls nothing: on
//! the current-thread scheduler the next poll comes once those have run (on the multi-thread
//! one, a task woken while it runs is queued as a yield, behind the worker's queue too).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Completes on its second poll, having queued its task behind the tasks ready to run.
pub(super) fn after_ready_tasks() -> AfterReadyTasks {
    AfterReadyTasks { queued: false }
}

/// See [`after_ready_tasks`].
#[derive(Debug)]
#[must_use = "a future does nothing unless awaited"]
pub(super) struct AfterReadyTasks {
    queued: bool,
}

impl Future for AfterReadyTasks {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.queued {
            return Poll::Ready(());
        }
        self.queued = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn a_task_waiting_runs_after_the_tasks_queued_before_it_resumes() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let order = Arc::new(Mutex::new(Vec::new()));
        let note = |order: &Arc<Mutex<Vec<&'static str>>>, what| {
            order.lock().expect("not poisoned").push(what);
        };
        runtime.block_on(async {
            let first = tokio::spawn({
                let order = Arc::clone(&order);
                async move {
                    note(&order, "first ran");
                    after_ready_tasks().await;
                    note(&order, "first resumed");
                }
            });
            let second = tokio::spawn({
                let order = Arc::clone(&order);
                async move { note(&order, "second ran") }
            });
            first.await.expect("first");
            second.await.expect("second");
        });
        assert_eq!(
            *order.lock().expect("not poisoned"),
            ["first ran", "second ran", "first resumed"],
            "the waiting task resumed before the task queued behind it ran"
        );
    }
}

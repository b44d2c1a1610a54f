//! The command entry points of a [`Keyspace`]: where the keyspace, the blocked-reader registry
//! and the command dispatcher meet.
//!
//! The keyspace (`keyspace.rs`) knows no command and the commands (`command/`) know no lock:
//! these methods take the lock, run one command through [`command::execute_outcome`], and,
//! when it asks to block, register it with that same dispatcher as the function that re-runs
//! it. So the layering is `blocking` ← `keyspace` ← `command` ← here.

use std::sync::Arc;
use std::time::Duration;

use crate::blocking::{Parker, Wake};
use crate::command;
use crate::error::Result;
use crate::keyspace::{Execution, Keyspace};
use crate::reply::Reply;

impl Keyspace {
    /// Executes one stream command given as arguments (`["XADD", "k", "*", "f", "v"]`),
    /// with Redis's parsing, errors and reply shapes. A command that would block replies as if
    /// it timed out (a null array), as in MULTI/EXEC; see [`Keyspace::execute_blocking`].
    pub fn execute<A: AsRef<[u8]>>(&self, argv: &[A]) -> Result<Reply> {
        self.run(|db, snapshot| command::execute(db, snapshot, argv))
    }

    /// Executes a command that may block (XREAD/XREADGROUP with BLOCK). If it blocks, `waker`
    /// is called when its reply is ready (data arrived, an error such as NOGROUP, or
    /// [`Keyspace::expire_blocked`] timed it out), and the reply is taken from the handle.
    pub fn execute_blocking<A: AsRef<[u8]>>(
        self: &Arc<Self>,
        argv: &[A],
        waker: Arc<dyn Wake>,
    ) -> Execution {
        self.execute_blocking_in(0, argv, waker)
    }

    /// [`Keyspace::execute_blocking`] in database `index`.
    pub fn execute_blocking_in<A: AsRef<[u8]>>(
        self: &Arc<Self>,
        index: usize,
        argv: &[A],
        waker: Arc<dyn Wake>,
    ) -> Execution {
        self.batch().execute_blocking_in(index, argv, waker)
    }

    /// Executes a command, blocking the calling thread while it is blocked (until data, an
    /// error, or its deadline by this keyspace's clock).
    pub fn execute_wait<A: AsRef<[u8]>>(self: &Arc<Self>, argv: &[A]) -> Result<Reply> {
        /// Longest sleep between deadline checks: a manual clock can be moved at any time.
        const POLL_MS_MAX: u64 = 20;
        let parker = Arc::new(Parker::default());
        let handle = match self.execute_blocking(argv, parker.clone()) {
            Execution::Done(result) => return result,
            Execution::Blocked(handle) => handle,
        };
        loop {
            if let Some(result) = handle.try_take() {
                return result;
            }
            let now = self.clock().now_ms();
            let wait_ms = match handle.deadline_ms() {
                Some(deadline) if deadline <= now => {
                    self.expire_blocked();
                    continue;
                }
                Some(deadline) => (deadline - now).min(POLL_MS_MAX),
                None => POLL_MS_MAX,
            };
            parker.park_timeout(Duration::from_millis(wait_ms));
        }
    }
}

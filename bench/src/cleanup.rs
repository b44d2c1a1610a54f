//! The bench's keys and their removal, at the end of a run and on SIGINT/SIGTERM.
//!
//! Every key a run writes is a feed stream of one of its queues, `echomq-bench:<run-id>:q<i>`
//! (see `queues`), i.e. it matches `emq:{echomq-bench:<run-id>:q<i>…}:*`, so a run can remove
//! exactly its own keys and never a user's. A signal only raises a flag: the measuring loops check it between commands (each
//! bounded by the command timeout), stop, and the run removes its keys before exiting. A second
//! signal exits at once, leaving the keys for `SCAN MATCH emq:{echomq-bench:*` to find.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::BenchError;

/// The exit status of a process stopped by SIGINT, as shells report it (128 + 2).
pub const INTERRUPTED_EXIT: i32 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The prefix of the queue names (and so of the keys) of one run.
#[derive(Debug, Clone)]
pub struct RunKeys {
    /// `echomq-bench:<run-id>`.
    pub run: String,
}

impl RunKeys {
    /// A fresh run id from the time and the process id, so concurrent runs never share keys.
    pub fn new() -> RunKeys {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        RunKeys {
            run: format!("echomq-bench:{:x}-{}", nanos, std::process::id()),
        }
    }

    /// The stream name of target `index` at `entries`.
    pub fn name(&self, index: usize, entries: u64) -> String {
        format!("t{index}-n{entries}")
    }
}

/// Whether a signal arrived, waiting up to `wait` for its flag.
pub fn interrupted_within(wait: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + wait;
    loop {
        if INTERRUPTED.load(Ordering::Relaxed) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Fails with [`BenchError::Interrupted`] once a signal arrived.
pub fn check() -> Result<(), BenchError> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        Err(BenchError::Interrupted)
    } else {
        Ok(())
    }
}

/// Listens for SIGINT and SIGTERM on a thread of its own: the first raises the flag, the
/// second exits.
pub fn install_signal_handler() {
    let spawned = std::thread::Builder::new()
        .name("bench-signals".into())
        .spawn(|| {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async {
                for _ in 0..2 {
                    wait_for_signal().await;
                    if INTERRUPTED.swap(true, Ordering::Relaxed) {
                        eprintln!("echomq bench: second signal, exiting without cleanup");
                        std::process::exit(INTERRUPTED_EXIT);
                    }
                    eprintln!("echomq bench: interrupted, removing the bench's keys");
                }
            });
        });
    if spawned.is_err() {
        eprintln!("echomq bench: cannot watch for Ctrl-C; an interrupted run may leave keys");
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

//! A script running past `busy-reply-threshold` (`lua-time-limit`): other clients get
//! `-BUSY`, and SCRIPT KILL, FUNCTION KILL, FUNCTION STATS and SHUTDOWN NOSAVE answer, as
//! Redis 8.8 answers them while a script runs long.
//!
//! A script runs holding the keyspace lock, so those answers cannot wait for it: the request
//! path looks at [`Busy::active`] (one relaxed load) before anything takes the lock, and only
//! when a script is past the threshold goes to [`refusal`]. The running script's side is a
//! Lua count hook (every [`HOOK_INSTRUCTIONS`] instructions, as Redis's) that reads this
//! thread's [`Watch`], set for the run: it marks the script busy once the threshold has
//! passed, and raises Redis's error once a kill was asked for.
//!
//! Invariants: `state` is not idle only while a watched run is past its threshold, and the
//! run sets it back to idle when it ends (a kill request with it); a kill is granted only to
//! a script that has not written (`dirty`), by the command of its kind (SCRIPT KILL for an
//! EVAL, FUNCTION KILL for a function). A client that was already waiting for the keyspace
//! lock when the threshold passed waits for the script's end (Redis would answer it `-BUSY`),
//! and so does the cron if it took the lock's queue just as the script started (it skips its
//! ticks while one runs). The answers need a worker thread the script does not occupy:
//! `echomq serve --threads 2` or more (one thread runs the script and nothing else).

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use echomq_engine::Reply;
use parking_lot::Mutex;

/// Instructions between two looks of the hook (Redis's `LUA_MASKCOUNT` of 100000).
pub(crate) const HOOK_INSTRUCTIONS: u32 = 100_000;

const IDLE: u8 = 0;
const BUSY_EVAL: u8 = 1;
const BUSY_FUNCTION: u8 = 2;

/// Redis's `slowevalerr`.
pub(crate) const SLOW_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// Redis's `slowscripterr`.
pub(crate) const SLOW_SCRIPT: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// The long-running script, as the other connections see it (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Busy {
    state: AtomicU8,
    /// A watched script is running (busy or not yet): the cron leaves the keyspace alone
    /// rather than wait for the lock on a worker thread the busy answers need.
    running: AtomicBool,
    kill: AtomicBool,
    /// The running script wrote (Redis's `SCRIPT_WRITE_DIRTY`): it cannot be killed.
    dirty: AtomicBool,
    /// What FUNCTION STATS shows of a busy function: its name, its call, its start.
    running_call: Mutex<Option<RunningCall>>,
}

/// A busy function's name, call and start.
type RunningCall = (String, Vec<Vec<u8>>, Instant);

impl Busy {
    /// Whether a script is past its threshold (the request path's one load).
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.state.load(Ordering::Relaxed) != IDLE
    }

    /// Whether a watched script is running.
    pub(crate) fn script_running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }
}

/// The run this thread is executing, watched by the hook.
pub(crate) struct Watch {
    busy: Arc<Busy>,
    started: Instant,
    threshold: Duration,
    eval: bool,
}

thread_local! {
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
    /// When the library loading on this thread must have finished (FUNCTION LOAD's 500 ms).
    static LOAD_DEADLINE: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` (a library's loading) with a deadline `limit` from now: past it, the hook raises
/// Redis's `FUNCTION LOAD timeout`.
pub(crate) fn with_load_deadline<R>(limit: Duration, f: impl FnOnce() -> R) -> R {
    LOAD_DEADLINE.with(|d| d.set(Some(Instant::now() + limit)));
    let result = f();
    LOAD_DEADLINE.with(|d| d.set(None));
    result
}

/// Watches the run about to start on this thread (`threshold` 0: never busy); ends when the
/// returned guard drops.
pub(crate) fn watch(busy: &Arc<Busy>, threshold_ms: u64, eval: bool) -> Guard {
    if threshold_ms == 0 {
        return Guard { watching: false };
    }
    busy.dirty.store(false, Ordering::Relaxed);
    busy.running.store(true, Ordering::Relaxed);
    WATCH.with(|w| {
        *w.borrow_mut() = Some(Watch {
            busy: Arc::clone(busy),
            started: Instant::now(),
            threshold: Duration::from_millis(threshold_ms),
            eval,
        });
    });
    Guard { watching: true }
}

/// Ends a watched run (see [`watch`]).
pub(crate) struct Guard {
    watching: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.watching {
            return;
        }
        if let Some(watch) = WATCH.with(|w| w.borrow_mut().take()) {
            *watch.busy.running_call.lock() = None;
            watch.busy.kill.store(false, Ordering::Relaxed);
            watch.busy.state.store(IDLE, Ordering::Release);
            watch.busy.running.store(false, Ordering::Relaxed);
        }
    }
}

/// Notes that the running script wrote (it can no longer be killed).
pub(crate) fn wrote() {
    WATCH.with(|w| {
        if let Some(watch) = w.borrow().as_ref() {
            watch.busy.dirty.store(true, Ordering::Relaxed);
        }
    });
}

/// Whether the running script was killed (its `pcall` cannot catch that).
pub(crate) fn killed() -> bool {
    WATCH.with(|w| {
        w.borrow()
            .as_ref()
            .is_some_and(|watch| watch.busy.kill.load(Ordering::Relaxed))
    })
}

/// The count hook: marks the run busy past its threshold; raises Redis's error once killed.
pub(crate) fn hook(_: &mlua::Lua, _: &mlua::Debug) -> mlua::Result<mlua::VmState> {
    if LOAD_DEADLINE.with(|d| d.get().is_some_and(|at| Instant::now() > at)) {
        return super::sandbox::raise("FUNCTION LOAD timeout");
    }
    let killed = WATCH.with(|w| {
        let w = w.borrow();
        let Some(watch) = w.as_ref() else {
            return false;
        };
        if watch.busy.state.load(Ordering::Relaxed) == IDLE {
            if watch.started.elapsed() >= watch.threshold {
                tracing::warn!(
                    "Slow script detected: still in execution after {} milliseconds. \
                     You can try killing the script using the {} command.",
                    watch.started.elapsed().as_millis(),
                    if watch.eval {
                        "SCRIPT KILL"
                    } else {
                        "FUNCTION KILL"
                    }
                );
                let (name, argv) = if watch.eval {
                    Default::default()
                } else {
                    running_call()
                };
                *watch.busy.running_call.lock() = Some((name, argv, watch.started));
                let state = if watch.eval { BUSY_EVAL } else { BUSY_FUNCTION };
                watch.busy.state.store(state, Ordering::Release);
                release_worker();
            }
            return false;
        }
        watch.busy.kill.load(Ordering::Relaxed)
    });
    if killed {
        tracing::info!("Lua script killed by user with SCRIPT KILL.");
        return super::sandbox::raise("Script killed by user with SCRIPT KILL...");
    }
    Ok(mlua::VmState::Continue)
}

/// The running function's name and call, as FUNCTION STATS shows them: copied only once
/// the function turns busy (FUNCTION STATS answers a busy EVAL with an error), from the run
/// [`super::current`] lends.
fn running_call() -> (String, Vec<Vec<u8>>) {
    super::current::with(|run| {
        let name = run
            .call
            .get(1)
            .map(|name| String::from_utf8_lossy(name).into_owned());
        let argv = run.call.iter().map(|a| a.to_vec()).collect();
        (name.unwrap_or_default(), argv)
    })
    .unwrap_or_default()
}

/// Hands this worker thread's share of the runtime (its task queue, and the I/O driver it may
/// be the one to poll) to another thread, so the other clients are served while the script
/// goes on here: a task that never yields would otherwise stall them all. Needs the
/// multi-threaded runtime; the wait lets the new thread take the worker's place before the
/// script continues, so the place is not taken back.
fn release_worker() {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_thread {
        tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(5)));
    }
}

/// Redis's `scriptKill`: `eval` for SCRIPT KILL, else FUNCTION KILL.
fn kill(busy: &Busy, eval: bool) -> Reply {
    let state = busy.state.load(Ordering::Acquire);
    if state == IDLE {
        return Reply::Error("NOTBUSY No scripts in execution right now.".into());
    }
    if busy.dirty.load(Ordering::Relaxed) {
        return Reply::Error(
            "UNKILLABLE Sorry the script already executed write commands against the dataset. \
             You can either wait the script termination or kill the server in a hard way using \
             the SHUTDOWN NOSAVE command."
                .into(),
        );
    }
    if eval && state != BUSY_EVAL {
        return Reply::Error(SLOW_SCRIPT.into());
    }
    if !eval && state == BUSY_EVAL {
        return Reply::Error(SLOW_EVAL.into());
    }
    busy.kill.store(true, Ordering::Relaxed);
    Reply::OK
}

/// FUNCTION STATS while a script is busy.
fn stats(state: &crate::state::ServerState) -> Reply {
    let busy = state.busy();
    if busy.state.load(Ordering::Acquire) == BUSY_EVAL {
        return Reply::Error(SLOW_EVAL.into());
    }
    let running = busy.running_call.lock().clone();
    let running = match running {
        Some((name, argv, started)) => Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(name)),
            (
                Reply::bulk("command"),
                Reply::Array(argv.into_iter().map(|a| Reply::Bulk(a.into())).collect()),
            ),
            (
                Reply::bulk("duration_ms"),
                Reply::Int(started.elapsed().as_millis() as i64),
            ),
        ]),
        None => Reply::Null,
    };
    super::function::stats_with(state, running)
}

/// The commands Redis lets through while a script is busy (`CMD_ALLOW_BUSY`).
const ALLOWED: &[&str] = &[
    "auth",
    "discard",
    "function|kill",
    "function|stats",
    "hello",
    "multi",
    "quit",
    "replconf",
    "reset",
    "script|kill",
    "shutdown",
    "unwatch",
    "watch",
];

/// What a request gets while a script is busy (`name` its full name): the answer of the
/// commands that answer without the keyspace lock, Redis's `-BUSY` for those it refuses, or
/// `None` for those it lets through.
pub(crate) enum WhileBusy {
    Answer(Reply),
    Refuse(Reply),
    Proceed,
}

pub(crate) fn refusal(state: &crate::state::ServerState, name: &str, argv: &[&[u8]]) -> WhileBusy {
    let busy = state.busy();
    let eval = busy.state.load(Ordering::Acquire) == BUSY_EVAL;
    let slow = || Reply::Error(if eval { SLOW_EVAL } else { SLOW_SCRIPT }.into());
    if !ALLOWED.contains(&name) {
        return WhileBusy::Refuse(slow());
    }
    match name {
        "script|kill" => WhileBusy::Answer(kill(busy, true)),
        "function|kill" => WhileBusy::Answer(kill(busy, false)),
        "function|stats" => WhileBusy::Answer(stats(state)),
        "shutdown" => {
            let nosave = argv[1..].iter().any(|a| crate::cmd::is(a, "nosave"));
            if !nosave {
                return WhileBusy::Answer(slow());
            }
            // The script holds the keyspace lock and will not return: exit as Redis does,
            // with the AOF's completed commands written (the script's own are not).
            tracing::warn!("User requested shutdown while a script was busy (NOSAVE).");
            state.aof().flush_for_shutdown();
            state.rdb().skip_final_save();
            std::process::exit(0);
        }
        _ => WhileBusy::Proceed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kills_are_granted_as_redis_grants_them() {
        let busy = Busy::default();
        assert!(matches!(kill(&busy, true), Reply::Error(e) if e.starts_with("NOTBUSY")));
        busy.state.store(BUSY_EVAL, Ordering::Relaxed);
        assert!(matches!(kill(&busy, false), Reply::Error(e) if e == SLOW_EVAL));
        busy.dirty.store(true, Ordering::Relaxed);
        assert!(matches!(kill(&busy, true), Reply::Error(e) if e.starts_with("UNKILLABLE")));
        busy.dirty.store(false, Ordering::Relaxed);
        assert!(matches!(kill(&busy, true), Reply::Status("OK")));
        assert!(busy.kill.load(Ordering::Relaxed));
        busy.state.store(BUSY_FUNCTION, Ordering::Relaxed);
        assert!(matches!(kill(&busy, true), Reply::Error(e) if e == SLOW_SCRIPT));
    }
}

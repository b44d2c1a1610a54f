//! The run a script's `redis.call` reaches: the command context of the EVAL or FCALL executing
//! on this thread, lent to the VM's callbacks for exactly the run's duration.
//!
//! `redis.call` and `redis.pcall` are plain functions of the VM, created once with it, so
//! they cannot capture a run's borrowed context the way functions scoped to the run would
//! (`mlua::Lua::scope`, which creates two Lua functions per run and tears them down after).
//! [`enter`] lends the run through a thread-local cell while its closure executes; [`with`]
//! borrows it back inside a callback.
//!
//! Invariants: the cell holds a pointer only while the [`enter`] frame that put it there is
//! live, and that pointer is derived from the frame's exclusive borrow of the run, which
//! nothing else uses meanwhile; [`with`] takes the pointer out of the cell for as long as it
//! lends it, so at most one `&mut` to the run exists at any time (a nested [`with`] finds
//! nothing). Both put the cell back as they found it when they end, unwinding included.

use std::cell::Cell;
use std::ptr::NonNull;

use super::call::Limits;
use crate::cmd::Ctx;

/// What a run lends the commands its script runs.
pub(crate) struct Run<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    /// The EVAL or FCALL itself.
    pub call: &'c [&'c [u8]],
    /// What the run allows its commands (updated as it writes).
    pub limits: Limits,
}

/// The run's pointer, its lifetimes erased: only [`with`] turns it back into a borrow, for
/// a closure that accepts any lifetimes, so none of `'static` can escape.
type Lent = NonNull<Run<'static, 'static>>;

thread_local! {
    static CURRENT: Cell<Option<Lent>> = const { Cell::new(None) };
}

/// Puts the cell back as it was when the guard was made.
struct Restore(Option<Lent>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `run` lent to [`with`] on this thread.
pub(crate) fn enter<R>(run: &mut Run<'_, '_>, f: impl FnOnce() -> R) -> R {
    let lent: Lent = NonNull::from(run).cast();
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(lent))));
    f()
}

/// Lends the run [`enter`] lent to `f`: `None` when no run is executing on this thread, or
/// when the run is already lent (a callback reached from inside another's borrow).
pub(crate) fn with<R>(f: impl FnOnce(&mut Run<'_, '_>) -> R) -> Option<R> {
    let lent = CURRENT.with(Cell::take)?;
    let _restore = Restore(Some(lent));
    // SAFETY: `lent` came from the `&mut Run` of an `enter` frame that is still live: the
    // cell holds it only between that frame's start and its `Restore`, and this call runs
    // inside it (a callback of the script `enter`'s closure executes). That frame does not
    // touch the run while its closure runs, and the pointer was taken out of the cell above
    // and goes back only when this borrow has ended, so this is the one reference to the
    // run. Its lifetimes are erased; `f` accepts any lifetimes and its result cannot name
    // them, so nothing it is handed outlives this call.
    #[allow(unsafe_code)]
    let run = unsafe { &mut *lent.as_ptr() };
    Some(f(run))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_lent_outside_a_run() {
        assert!(with(|_| ()).is_none());
    }
}

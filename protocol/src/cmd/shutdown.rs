//! `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]`, as Redis 8.8's `shutdownCommand` and
//! `finishShutdown` do it for a server without replicas (so there is nothing to wait for:
//! `NOW` changes nothing, and a shutdown is never left in progress for `ABORT` to cancel).
//!
//! In order: the AOF's pending bytes are written and fsynced; a final SAVE runs when save
//! points are configured (unless `NOSAVE`) or `SAVE` is given (never while loading, which
//! would overwrite `dump.rdb` with half the data); then the server stops, and the client gets
//! no reply: its connection closes, as it does when Redis exits. A failed save keeps the
//! server running and answers `-ERR Errors trying to SHUTDOWN. Check logs.`, unless `FORCE`
//! (then the server stops anyway). Nothing at shutdown saves again after this.

use echomq_engine::Reply;

use super::Ctx;

use crate::error::CommandError;

/// What the arguments ask for.
#[derive(Debug, Default, Clone, Copy)]
struct Flags {
    nosave: bool,
    save: bool,
    force: bool,
    abort: bool,
    /// Any of NOSAVE, SAVE, NOW, FORCE (ABORT takes none of them).
    any: bool,
}

fn parse(argv: &[&[u8]]) -> Option<Flags> {
    let mut flags = Flags::default();
    for arg in &argv[1..] {
        if super::is(arg, "nosave") {
            flags.nosave = true;
        } else if super::is(arg, "save") {
            flags.save = true;
        } else if super::is(arg, "force") {
            flags.force = true;
        } else if super::is(arg, "abort") {
            flags.abort = true;
            continue;
        } else if !super::is(arg, "now") {
            return None;
        }
        flags.any = true;
    }
    let illegal = (flags.abort && flags.any) || (flags.nosave && flags.save);
    (!illegal).then_some(flags)
}

/// SHUTDOWN.
pub(crate) fn shutdown(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(flags) = parse(argv) else {
        return super::error(echomq_engine::Error::Syntax);
    };
    if flags.abort {
        return CommandError::NoShutdownInProgress.into();
    }
    let state = ctx.state;
    tracing::warn!("User requested shutdown...");
    state.kill_children();
    state.aof().flush_for_shutdown();
    let wants_save = flags.save || !state.settings().save.is_empty();
    if wants_save && !flags.nosave && !state.loading() {
        tracing::info!("Saving the final RDB snapshot before exiting.");
        if let Err(e) = state.save(ctx.dbs.all()) {
            if !flags.force {
                tracing::warn!(error = %e, "Error trying to save the DB, can't exit.");
                tracing::warn!(
                    "Errors trying to shut down the server. Check the logs for more information."
                );
                return CommandError::ShutdownFailed.into();
            }
            tracing::warn!(error = %e, "Error trying to save the DB. Exit anyway.");
        }
    }
    state.rdb().skip_final_save();
    state.shutdown();
    ctx.drop_connection = true;
    Reply::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(args: &[&str]) -> Option<Flags> {
        let argv: Vec<&[u8]> = std::iter::once("shutdown")
            .chain(args.iter().copied())
            .map(str::as_bytes)
            .collect();
        parse(&argv)
    }

    #[test]
    fn arguments_combine_as_redis_allows() {
        assert!(flags(&[]).is_some());
        assert!(flags(&["NOSAVE", "now", "FORCE"]).is_some_and(|f| f.nosave && f.force));
        assert!(flags(&["save"]).is_some_and(|f| f.save && !f.nosave));
        assert!(flags(&["abort"]).is_some_and(|f| f.abort));
        assert!(flags(&["abort", "now"]).is_none());
        assert!(flags(&["now", "abort"]).is_none());
        assert!(flags(&["save", "nosave"]).is_none());
        assert!(flags(&["later"]).is_none());
    }
}

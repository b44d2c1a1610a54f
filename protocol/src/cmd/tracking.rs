//! Client-side caching's commands: CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO
//! (Redis 8.8's `clientCommand`), and what every call does for a tracking client
//! ([`after_call`]: remember the keys a read-only command read, spend a CLIENT CACHING).
//! The table and the invalidations are [`crate::state::tracking`]'s.

use std::sync::Arc;

use echomq_engine::command::CommandSpec;
use echomq_engine::command::flags::{MAY_REPLICATE, WRITE};
use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, error, is};
use crate::error::CommandError;
use crate::state::tracking::{Tracking, TrackingOptions};
use crate::state::{Action, ClientState, ServerState};

/// `CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX prefix ...] [BCAST] [OPTIN] [OPTOUT]
/// [NOLOOP]`: options are parsed first (a syntax error or a bad REDIRECT before anything
/// else), then ON checks them against each other and the client's state in Redis's order.
pub(crate) fn tracking(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let mut options = TrackingOptions::default();
    let mut redirect: Option<Arc<crate::state::ClientInfo>> = None;
    let mut prefixes: Vec<&[u8]> = Vec::new();
    let mut j = 3;
    while j < argv.len() {
        let more = argv.len() - 1 - j > 0;
        let option = argv[j];
        if is(option, "redirect") && more {
            j += 1;
            if options.redirect != 0 {
                return CommandError::TrackingRedirectTwice.into();
            }
            let id = match super::int_arg(argv[j]) {
                Ok(id) => id,
                Err(reply) => return reply,
            };
            // Redis stores the id whatever it is, then asks for a client with it.
            options.redirect = id as u64;
            match u64::try_from(id)
                .ok()
                .and_then(|id| ctx.state.client_by_id(id))
            {
                Some(target) => redirect = Some(target),
                None => return CommandError::TrackingRedirectMissing.into(),
            }
        } else if is(option, "bcast") {
            options.bcast = true;
        } else if is(option, "optin") {
            options.optin = true;
        } else if is(option, "optout") {
            options.optout = true;
        } else if is(option, "noloop") {
            options.noloop = true;
        } else if is(option, "prefix") && more {
            j += 1;
            prefixes.push(argv[j]);
        } else {
            return error(EngineError::Syntax);
        }
        j += 1;
    }
    let info = Arc::clone(&ctx.client.info);
    if is(argv[2], "on") {
        if !options.bcast && !prefixes.is_empty() {
            return CommandError::TrackingPrefixWithoutBcast.into();
        }
        let current = info.tracking.lock().clone();
        if current.on && current.bcast != options.bcast {
            return CommandError::TrackingBcastSwitch.into();
        }
        if options.bcast && (options.optin || options.optout) {
            return CommandError::TrackingOptWithBcast.into();
        }
        if options.optin && options.optout {
            return CommandError::TrackingOptinAndOptout.into();
        }
        if (options.optin && current.optout) || (options.optout && current.optin) {
            return CommandError::TrackingOptSwitch.into();
        }
        if options.bcast
            && let Err(text) = Tracking::check_prefixes(&info, &prefixes)
        {
            return Reply::Error(text);
        }
        ctx.state
            .tracking()
            .enable(&info, redirect, options, &prefixes);
        ctx.state.keyspace().set_key_tracking(true);
    } else if is(argv[2], "off") {
        ctx.state.disable_tracking(&info);
    } else {
        return error(EngineError::Syntax);
    }
    Reply::OK
}

/// `CLIENT CACHING YES|NO`: the next command's (or transaction's) keys are tracked (OPTIN)
/// or not (OPTOUT).
pub(crate) fn caching(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let mut own = ctx.client.info.tracking.lock();
    if !own.on {
        return CommandError::CachingWithoutTracking.into();
    }
    if is(argv[2], "yes") {
        if !own.optin {
            return CommandError::CachingYesWithoutOptin.into();
        }
    } else if is(argv[2], "no") {
        if !own.optout {
            return CommandError::CachingNoWithoutOptout.into();
        }
    } else {
        return error(EngineError::Syntax);
    }
    own.caching = true;
    Reply::OK
}

/// `CLIENT GETREDIR`: the redirect id, 0 for none, -1 when not tracking.
pub(crate) fn getredir(ctx: &mut Ctx<'_>) -> Reply {
    let own = ctx.client.info.tracking.lock();
    Reply::Int(if own.on { own.redirect as i64 } else { -1 })
}

/// `CLIENT TRACKINGINFO`: a map of `flags` (a set), `redirect` and `prefixes`.
pub(crate) fn trackinginfo(ctx: &mut Ctx<'_>) -> Reply {
    let own = ctx.client.info.tracking.lock().clone();
    let mut flags = vec![Reply::bulk_static(if own.on { "on" } else { "off" })];
    if own.bcast {
        flags.push(Reply::bulk_static("bcast"));
    }
    if own.optin {
        flags.push(Reply::bulk_static("optin"));
        if own.caching {
            flags.push(Reply::bulk_static("caching-yes"));
        }
    }
    if own.optout {
        flags.push(Reply::bulk_static("optout"));
        if own.caching {
            flags.push(Reply::bulk_static("caching-no"));
        }
    }
    if own.noloop {
        flags.push(Reply::bulk_static("noloop"));
    }
    if own.broken_redirect {
        flags.push(Reply::bulk_static("broken_redirect"));
    }
    Reply::Map(vec![
        (Reply::bulk_static("flags"), Reply::Set(flags)),
        (
            Reply::bulk_static("redirect"),
            Reply::Int(if own.on { own.redirect as i64 } else { -1 }),
        ),
        (
            Reply::bulk_static("prefixes"),
            Reply::Array(
                own.prefixes
                    .iter()
                    .map(|p| Reply::Bulk(p.clone()))
                    .collect(),
            ),
        ),
    ])
}

/// Whether a call of `spec` is a read-only command with keys, whose keys a tracking client
/// may cache (Redis's `CMD_READONLY`, pub/sub's shard channels and WATCH aside).
fn reads_keys(spec: &CommandSpec) -> bool {
    !spec.has(WRITE)
        && !spec.has(MAY_REPLICATE)
        && (spec.keys.first > 0 || crate::slot::has_movable_keys(spec))
        && !matches!(
            spec.name,
            "watch" | "ssubscribe" | "sunsubscribe" | "spublish" | "restore"
        )
}

/// Marks `client` as the one whose command runs now (under the keyspace lock), for NOLOOP.
#[inline]
pub(crate) fn running(state: &ServerState, client: &ClientState) {
    if state.tracking().clients_on() > 0 {
        state.tracking().set_current(client.info.id);
    }
}

/// After a call of `spec` by a tracking `client` (Redis's `call` and `resetClient`): a
/// read-only command's keys are remembered; CLIENT CACHING is spent by any command but
/// CLIENT's own, outside MULTI (`in_exec`: a command EXEC runs).
pub(crate) fn after_call(
    state: &ServerState,
    client: &ClientState,
    spec: &CommandSpec,
    argv: &[&[u8]],
    in_exec: bool,
) {
    let info = &client.info;
    if !info.is_tracking() {
        return;
    }
    if reads_keys(spec) {
        let keys = crate::slot::keys_of(spec, argv);
        if !keys.is_empty() {
            state.tracking().remember(info, keys.into_iter());
            state.limit_tracked_keys();
        }
    }
    if !in_exec && client.multi.is_none() && spec.name != "client" {
        info.tracking.lock().caching = false;
    }
}

/// A FLUSHALL or FLUSHDB run in the foreground by a tracking client: its own null
/// invalidation goes before the reply. Redis 8.8 runs such a flush as a blocked background
/// job and replies when it ends, after the push went out; with ASYNC (or inside EXEC, where it
/// cannot block) the reply comes first, as for any command.
pub(crate) fn flush_push_first(
    client: &ClientState,
    name: &str,
    argv: &[&[u8]],
    action: Action,
) -> Action {
    if !client.info.is_tracking()
        || !matches!(name, "flushall" | "flushdb")
        || argv.get(1).is_some_and(|mode| is(mode, "async"))
    {
        return action;
    }
    let Action::Reply(reply) = action else {
        return action;
    };
    if matches!(reply, Reply::Error(_)) {
        return Action::Reply(reply);
    }
    let mut out = client.info.pubsub.take();
    if out.is_empty() {
        return Action::Reply(reply);
    }
    crate::resp::encode(&reply, client.protocol, &mut out);
    Action::Raw(out.to_vec())
}

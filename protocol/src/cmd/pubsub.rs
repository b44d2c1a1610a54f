//! SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH,
//! SPUBLISH and PUBSUB, over the server's [`Registry`](crate::state::pubsub::Registry).
//!
//! A (un)subscribe command answers with one confirmation frame per name (`*3` in RESP2, a
//! `>3` push in RESP3), sent as raw bytes ([`Ctx::raw`]); inside EXEC, where replies are
//! values, the confirmations are arrays. In RESP2 a subscribed client may run only the
//! commands [`allowed_when_subscribed`] names (the dispatcher refuses the others with
//! [`subscribed_mode_error`]).

use bytes::BytesMut;
use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, error, is, subcommand_of, subcommand_syntax, unknown_subcommand};
use crate::error::CommandError;
use crate::resp::Protocol;
use crate::state::pubsub::{Frames, Kind};
use crate::state::{ClientState, ServerState};

/// Commands a RESP2 client may run while subscribed (Redis's list).
pub(crate) fn allowed_when_subscribed(name: &str) -> bool {
    matches!(
        name,
        "ping"
            | "subscribe"
            | "ssubscribe"
            | "unsubscribe"
            | "sunsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "quit"
            | "reset"
    )
}

/// Redis's refusal of `name` (the full name, `xgroup|create`) in RESP2 pub/sub mode.
pub(crate) fn subscribed_mode_error(name: &str) -> Reply {
    CommandError::NotAllowedWhileSubscribed(name.to_string()).into()
}

/// Sends `frames` as the reply: raw bytes normally; as arrays inside EXEC.
fn answer(ctx: &mut Ctx<'_>, frames: Frames) -> Reply {
    let resp3 = ctx.client.protocol == Protocol::Resp3;
    let mut raw = BytesMut::new();
    for frame in &frames {
        frame.encode(resp3, &mut raw);
    }
    ctx.raw = Some(raw.to_vec());
    let mut values: Vec<Reply> = frames
        .into_iter()
        .map(|f| {
            Reply::Array(vec![
                Reply::bulk_static(f.verb),
                f.name.map_or(Reply::Null, Reply::Bulk),
                Reply::Int(f.count as i64),
            ])
        })
        .collect();
    match values.len() {
        1 => values.pop().unwrap_or(Reply::NullArray),
        _ => Reply::Array(values),
    }
}

fn subscribe_as(ctx: &mut Ctx<'_>, argv: &[&[u8]], kind: Kind) -> Reply {
    let frames = ctx
        .state
        .pubsub()
        .subscribe(&ctx.client.info, kind, &argv[1..]);
    answer(ctx, frames)
}

fn unsubscribe_as(ctx: &mut Ctx<'_>, argv: &[&[u8]], kind: Kind) -> Reply {
    let frames = ctx
        .state
        .pubsub()
        .unsubscribe(&ctx.client.info, kind, &argv[1..]);
    answer(ctx, frames)
}

/// `SUBSCRIBE channel [channel ...]`.
pub(crate) fn subscribe(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    subscribe_as(ctx, argv, Kind::Channel)
}

/// `UNSUBSCRIBE [channel ...]`.
pub(crate) fn unsubscribe(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    unsubscribe_as(ctx, argv, Kind::Channel)
}

/// `PSUBSCRIBE pattern [pattern ...]`.
pub(crate) fn psubscribe(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    subscribe_as(ctx, argv, Kind::Pattern)
}

/// `PUNSUBSCRIBE [pattern ...]`.
pub(crate) fn punsubscribe(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    unsubscribe_as(ctx, argv, Kind::Pattern)
}

/// `SSUBSCRIBE shardchannel [shardchannel ...]`: refused inside MULTI, as in Redis.
pub(crate) fn ssubscribe(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if ctx.client.multi.is_some() {
        return CommandError::SsubscribeDenyBlocking.into();
    }
    subscribe_as(ctx, argv, Kind::Shard)
}

/// `SUNSUBSCRIBE [shardchannel ...]`.
pub(crate) fn sunsubscribe(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    unsubscribe_as(ctx, argv, Kind::Shard)
}

/// `PUBLISH channel message`: the number of clients that received it.
pub(crate) fn publish(state: &ServerState, _: &ClientState, argv: &[&[u8]]) -> Reply {
    Reply::Int(state.publish(argv[1], argv[2], false) as i64)
}

/// `SPUBLISH shardchannel message`.
pub(crate) fn spublish(state: &ServerState, _: &ClientState, argv: &[&[u8]]) -> Reply {
    Reply::Int(state.publish(argv[1], argv[2], true) as i64)
}

const PUBSUB_HELP: &[&str] = &[
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Print this help.",
];

/// `PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP`.
pub(crate) fn pubsub(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(found) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !found.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(found.full_name.to_string()));
    }
    let registry = ctx.state.pubsub();
    let sub = argv[1];
    let argc = argv.len();
    let numsub = |kind: Kind| {
        let mut pairs = Vec::with_capacity(2 * (argc - 2));
        for &name in &argv[2..] {
            pairs.push(Reply::bulk(name));
            pairs.push(Reply::Int(registry.subscribers(kind, name) as i64));
        }
        Reply::Array(pairs)
    };
    if argc == 2 && is(sub, "help") {
        super::help(PUBSUB_HELP)
    } else if (is(sub, "channels") || is(sub, "shardchannels")) && argc <= 3 {
        let shard = is(sub, "shardchannels");
        let names = registry.channels(shard, argv.get(2).copied());
        Reply::Array(names.into_iter().map(Reply::Bulk).collect())
    } else if is(sub, "numsub") {
        numsub(Kind::Channel)
    } else if is(sub, "shardnumsub") {
        numsub(Kind::Shard)
    } else if is(sub, "numpat") && argc == 2 {
        Reply::Int(registry.distinct(Kind::Pattern) as i64)
    } else {
        subcommand_syntax(argv)
    }
}

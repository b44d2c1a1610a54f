//! ACL and its subcommands, the permission check every request passes when some user is
//! restricted ([`refusal`]), and what [`crate::acl`] needs of the command tables.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use std::sync::Arc;

use bytes::Bytes;
use echomq_engine::command::CommandSpec;
use echomq_engine::command::flags::NO_AUTH;
use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, command_meta, error, help, int_arg, is, subcommand_of, subcommand_syntax, table};
use crate::acl::log::Context;
use crate::acl::rules::{has_spaces, set_user};
use crate::acl::{CATEGORIES, Entry, Reason, User, catalog, category_bit, check, describe};
use crate::state::stats::CallId;
use crate::state::{Action, ClientState, ServerState};

/// Every call id's ACL entry, in id order: its full name, its container (a subcommand's),
/// its subcommands, its categories and whether it runs before authentication.
pub(crate) fn acl_calls() -> Vec<Entry> {
    let categories = |name: &str| {
        command_meta::find(name).map_or(0, |m| {
            m.categories
                .iter()
                .filter_map(|c| category_bit(c.trim_start_matches('@').as_bytes()))
                .fold(0, |all, bit| all | bit)
        })
    };
    let mut calls = Vec::new();
    let mut container = 0;
    for (id, spec, sub) in table::calls() {
        calls.push(match sub {
            None => {
                container = id;
                Entry {
                    name: spec.name,
                    parent: None,
                    subs: id + 1..id + 1 + spec.subcommands.len(),
                    categories: categories(spec.name),
                    no_auth: spec.has(NO_AUTH),
                }
            }
            Some(sub) => Entry {
                name: sub.full_name,
                parent: Some(container),
                subs: id..id,
                categories: categories(sub.full_name),
                no_auth: sub.has(NO_AUTH),
            },
        });
    }
    calls
}

/// The id of `cmd` or `cmd|sub` (any case).
pub(crate) fn acl_find(name: &[u8]) -> Option<usize> {
    let mut parts = name.split(|&c| c == b'|');
    let command = parts.next()?;
    let sub = parts.next();
    if parts.next().is_some() {
        return None;
    }
    let (found, id) = table::find(command)?;
    match sub {
        None => Some(id),
        Some(sub) => table::find_subcommand(found.spec(), id, sub).map(|(_, id)| id),
    }
}

/// The access flags of the `index`-th key of a request of `name`.
pub(crate) fn acl_key_flags(name: &str, argv: &[&[u8]], index: usize) -> Vec<&'static str> {
    command_meta::key_flags(name, argv, index)
}

/// Whether requests of `name` name keys (a key spec that is not NOT_KEY).
pub(crate) fn acl_has_keys(name: &str) -> bool {
    command_meta::find(name).is_some_and(|m| m.key_specs.iter().any(|f| !f.contains("NOT_KEY")))
}

/// Counts and logs a refusal of `client` (ACL LOG), `object` being the command, key, channel
/// or (for AUTH) the command's name as typed.
pub(crate) fn log_denial(
    state: &ServerState,
    client: &ClientState,
    reason: Reason,
    object: &[u8],
    username: &[u8],
) {
    state.acl().count(reason);
    let context = if client.multi.is_some() {
        Context::Multi
    } else {
        Context::Toplevel
    };
    let info = client.info.line(super::call_name);
    let now_ms = state.clock().now_ms();
    let max_len = usize::try_from(state.settings().acllog_max_len).unwrap_or(usize::MAX);
    state
        .acl_users()
        .log
        .add(max_len, reason, context, object, username, info, now_ms);
}

/// The user `client` runs as (cached until the users change); `None` once it was deleted.
fn current_user(state: &ServerState, client: &mut ClientState) -> Option<Arc<User>> {
    let generation = state.acl().generation();
    if let Some((seen, user)) = &client.acl_user
        && *seen == generation
    {
        return Some(Arc::clone(user));
    }
    let name = client.info.user();
    let user = state.acl_users().get(&name).cloned()?;
    client.acl_user = Some((generation, Arc::clone(&user)));
    Some(user)
}

/// The refusal of a request `client` may not run as its user (Redis's NOPERM), or `None`.
/// A client whose user was deleted is dropped.
pub(crate) fn refusal(
    state: &ServerState,
    client: &mut ClientState,
    id: CallId,
    spec: &CommandSpec,
    argv: &[&[u8]],
) -> Option<Action> {
    let Some(user) = current_user(state, client) else {
        return Some(Action::Drop);
    };
    let denial = check::check(&user, id, spec, argv).err()?;
    let name = user.name.clone();
    let full_name = catalog().entries[id].name;
    let (reason, object) = match denial {
        check::Denial::Command => (Reason::Command, full_name.as_bytes()),
        check::Denial::Key(at) => (Reason::Key, argv[at]),
        check::Denial::Channel(at) => (Reason::Channel, argv[at]),
    };
    log_denial(state, client, reason, object, &name);
    let text = check::message(denial, &user, full_name, argv, false);
    Some(Action::Reply(Reply::Error(format!("NOPERM {text}"))))
}

/// The user whose permissions a script's `redis.acl_check_cmd` checks: `None` while no user
/// is restricted (or the client's user is gone), when every command is permitted.
pub(crate) fn script_caller(state: &ServerState, client: &mut ClientState) -> Option<Arc<User>> {
    if !state.acl().restricted() {
        return None;
    }
    current_user(state, client)
}

/// Whether `user` may run `argv` (`None`: anyone may).
pub(crate) fn user_permits(user: Option<&User>, argv: &[&[u8]]) -> bool {
    let Some(user) = user else {
        return true;
    };
    let Some((found, id)) = table::find(argv[0]) else {
        return false;
    };
    let spec = found.spec();
    let id = match argv.get(1).filter(|_| !spec.subcommands.is_empty()) {
        Some(sub) => table::find_subcommand(spec, id, sub).map_or(id, |(_, sub_id)| sub_id),
        None => id,
    };
    check::check(user, id, spec, argv).is_ok()
}

/// The refusal of a queued command EXEC is about to run, when the client's user may no longer
/// run it (the rules changed since it was queued), as Redis words it inside EXEC's reply.
pub(crate) fn exec_refusal(
    state: &ServerState,
    client: &mut ClientState,
    spec: &'static CommandSpec,
    id: CallId,
    argv: &[&[u8]],
) -> Option<Reply> {
    let id = match argv.get(1).filter(|_| !spec.subcommands.is_empty()) {
        Some(sub) => table::find_subcommand(spec, id, sub).map_or(id, |(_, sub_id)| sub_id),
        None => id,
    };
    let user = current_user(state, client)?;
    let denial = check::check(&user, id, spec, argv).err()?;
    let name = user.name.clone();
    let (reason, object, why) = match denial {
        check::Denial::Command => (
            Reason::Command,
            catalog().entries[id].name.as_bytes(),
            "no permission to execute the command or subcommand",
        ),
        check::Denial::Key(at) => (
            Reason::Key,
            argv[at],
            "no permission to touch the specified keys",
        ),
        check::Denial::Channel(at) => (
            Reason::Channel,
            argv[at],
            "no permission to access one of the channels used as arguments",
        ),
    };
    state.acl().count(reason);
    let info = client.info.line(super::call_name);
    let now_ms = state.clock().now_ms();
    let max_len = usize::try_from(state.settings().acllog_max_len).unwrap_or(usize::MAX);
    state
        .acl_users()
        .log
        .add(max_len, reason, Context::Multi, object, &name, info, now_ms);
    Some(Reply::Error(format!(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {why}"
    )))
}

const ACL_HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Print this help.",
];

/// `ACL <subcommand> ...`.
pub(crate) fn acl(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return subcommand_syntax(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "setuser" => setuser(ctx, argv),
        "deluser" => deluser(ctx, argv),
        "getuser" => match ctx.state.acl_users().get(argv[2]) {
            Some(user) => describe::getuser_reply(user),
            None => Reply::Null,
        },
        "users" => Reply::Array(
            ctx.state
                .acl_users()
                .map
                .keys()
                .map(|name| Reply::Bulk(name.clone()))
                .collect(),
        ),
        "list" => Reply::Array(
            ctx.state
                .acl_users()
                .map
                .values()
                .map(|user| Reply::bulk(describe::user_line(user)))
                .collect(),
        ),
        "whoami" => Reply::Bulk(ctx.client.info.user()),
        "cat" => cat(argv),
        "genpass" => genpass(argv),
        "log" => log(ctx, argv),
        "dryrun" => dryrun(ctx, argv),
        "load" | "save" if ctx.state.settings().aclfile.is_empty() => Reply::Error(
            "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.".into(),
        ),
        "load" => load(ctx),
        "save" => save(ctx),
        _ => help(ACL_HELP),
    }
}

fn setuser(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let name = argv[2];
    if has_spaces(name) {
        return Reply::Error("ERR Usernames can't contain spaces or null characters".into());
    }
    let channels_default_all = ctx.state.settings().acl_pubsub_all;
    let mut users = ctx.state.acl_users();
    let existing = users.get(name).map(|u| u.as_ref());
    match set_user(existing, name, &argv[3..], channels_default_all) {
        Ok(user) => {
            users
                .map
                .insert(Bytes::copy_from_slice(name), Arc::new(user));
            ctx.state.acl().changed(&users);
            drop(users);
            close_revoked_subscribers(ctx.state);
            Reply::OK
        }
        Err(text) => Reply::Error(format!("ERR {text}")),
    }
}

/// Closes the clients whose user no longer exists (Redis frees them).
fn close_orphans(state: &ServerState) {
    let users = state.acl_users();
    let orphans: Vec<_> = state
        .clients()
        .into_iter()
        .filter(|client| users.get(&client.user()).is_none())
        .collect();
    drop(users);
    for client in orphans {
        client.kill();
    }
}

/// Closes the subscribed clients whose user may no longer use one of their channels (Redis
/// disconnects them when SETUSER or LOAD revokes a channel).
fn close_revoked_subscribers(state: &ServerState) {
    let mut revoked = Vec::new();
    for client in state.clients() {
        if !client.pubsub.is_subscribed() {
            continue;
        }
        let Some(user) = state.acl_users().get(&client.user()).cloned() else {
            continue;
        };
        let [channels, patterns, shards] = state.pubsub().subscriptions_of(client.id);
        let allowed = channels
            .iter()
            .chain(&shards)
            .all(|c| check::channel_permitted(&user, c, false))
            && patterns
                .iter()
                .all(|p| check::channel_permitted(&user, p, true));
        if !allowed {
            revoked.push(client);
        }
    }
    for client in revoked {
        client.kill();
    }
}

/// `ACL LOAD`: the users of the `aclfile` replace the current ones, or nothing changes.
fn load(ctx: &mut Ctx<'_>) -> Reply {
    let path = ctx.state.settings().aclfile.clone();
    let loaded = {
        let mut users = ctx.state.acl_users();
        ctx.state
            .acl()
            .load_file(&mut users, &path, ctx.state.settings().acl_pubsub_all)
    };
    match loaded {
        Ok(()) => {
            close_orphans(ctx.state);
            close_revoked_subscribers(ctx.state);
            Reply::OK
        }
        Err(text) => Reply::Error(format!("ERR {text}")),
    }
}

/// `ACL SAVE`: the users to the `aclfile`.
fn save(ctx: &mut Ctx<'_>) -> Reply {
    let path = ctx.state.settings().aclfile.clone();
    let contents = {
        let users = ctx.state.acl_users();
        crate::acl::file::render(users.map.values().map(|u| u.as_ref()))
    };
    match crate::acl::file::save(std::path::Path::new(&path), &contents) {
        Ok(()) => Reply::OK,
        Err(e) => {
            tracing::warn!("Writing ACL file for ACL SAVE: {e}");
            Reply::Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information".into())
        }
    }
}

fn deluser(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if argv[2..].iter().any(|name| *name == b"default") {
        return Reply::Error("ERR The 'default' user cannot be removed".into());
    }
    let mut users = ctx.state.acl_users();
    let mut deleted = 0;
    for name in &argv[2..] {
        if users.map.remove(*name).is_some() {
            deleted += 1;
        }
    }
    ctx.state.acl().changed(&users);
    drop(users);
    // Redis frees the clients authenticated as a deleted user.
    if deleted > 0 {
        close_orphans(ctx.state);
    }
    Reply::Int(deleted)
}

fn cat(argv: &[&[u8]]) -> Reply {
    let Some(category) = argv.get(2) else {
        return Reply::Array(CATEGORIES.iter().map(|c| Reply::bulk_static(c)).collect());
    };
    let Some(bit) = category_bit(category) else {
        let shown = &category[..category.len().min(128)];
        return Reply::Error(format!(
            "ERR Unknown category '{}'",
            String::from_utf8_lossy(shown)
        ));
    };
    Reply::Array(
        catalog()
            .entries
            .iter()
            .filter(|e| e.categories & bit != 0)
            .map(|e| Reply::bulk_static(e.name))
            .collect(),
    )
}

/// Random hex digits (GENPASS).
fn random_hex(chars: usize) -> String {
    let mut out = String::with_capacity(chars + 16);
    let mut round = 0u64;
    while out.len() < chars {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(round);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        out.push_str(&format!("{:016x}", hasher.finish()));
        round += 1;
    }
    out.truncate(chars);
    out
}

fn genpass(argv: &[&[u8]]) -> Reply {
    const MAX_BITS: i64 = 4096;
    let bits = match argv.get(2) {
        Some(arg) => match int_arg(arg) {
            Ok(bits) => bits,
            Err(reply) => return reply,
        },
        None => 256,
    };
    if bits <= 0 || bits > MAX_BITS {
        return Reply::Error(format!(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {MAX_BITS}"
        ));
    }
    Reply::bulk(random_hex(((bits + 3) / 4) as usize).as_bytes())
}

fn log(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let mut count = 10;
    if let Some(arg) = argv.get(2) {
        if is(arg, "reset") {
            ctx.state.acl_users().log.reset();
            return Reply::OK;
        }
        count = match int_arg(arg) {
            Ok(n) => n.max(0),
            Err(reply) => return reply,
        };
    }
    let now_ms = ctx.state.clock().now_ms();
    ctx.state
        .acl_users()
        .log
        .reply(usize::try_from(count).unwrap_or(usize::MAX), now_ms)
}

fn dryrun(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(user) = ctx.state.acl_users().get(argv[2]).cloned() else {
        return Reply::Error(format!(
            "ERR User '{}' not found",
            String::from_utf8_lossy(argv[2])
        ));
    };
    let request = &argv[3..];
    let not_found = || {
        Reply::Error(format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(request[0])
        ))
    };
    let Some((found, id)) = table::find(request[0]) else {
        return not_found();
    };
    let spec = found.spec();
    let (id, full_name, arity_ok) = match request.get(1).filter(|_| !spec.subcommands.is_empty()) {
        Some(sub) => match table::find_subcommand(spec, id, sub) {
            Some((sub, sub_id)) => (sub_id, sub.full_name, sub.arity_ok(request.len())),
            None => return not_found(),
        },
        None => (id, spec.name, spec.arity_ok(request.len())),
    };
    if !arity_ok {
        return error(EngineError::WrongArity(full_name.to_string()));
    }
    match check::check(&user, id, spec, request) {
        Ok(()) => Reply::OK,
        Err(denial) => {
            Reply::bulk(check::message(denial, &user, full_name, request, true).as_bytes())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command whose keys ACLs would not check would let a user reach any key: every
    /// command with keys has them placed by its table row or by `check`'s own list, and only
    /// the shard channel commands (their "keys" are channels) and the containers' keyless
    /// rows have positions without keys.
    #[test]
    fn acls_check_the_keys_of_every_command_with_keys() {
        let mut unchecked = Vec::new();
        let mut unfound = Vec::new();
        for (_, spec, sub) in table::calls() {
            let name = sub.map_or(spec.name, |s| s.full_name);
            let positioned = spec.keys.first > 0
                || crate::slot::has_movable_keys(spec)
                || crate::slot::has_counted_keys(spec);
            if positioned && !acl_has_keys(name) {
                unchecked.push(name);
            }
            let unplaced = matches!(
                name,
                "object|encoding"
                    | "object|refcount"
                    | "object|idletime"
                    | "object|freq"
                    | "memory|usage"
                    | "msetex"
            );
            if !positioned && !unplaced && acl_has_keys(name) {
                unfound.push(name);
            }
        }
        assert_eq!(
            unchecked,
            [
                "ssubscribe",
                "sunsubscribe",
                "spublish",
                "xgroup",
                "xgroup|help",
                "xinfo",
                "xinfo|help"
            ]
        );
        assert!(unfound.is_empty(), "{unfound:?}");
    }
}

//! Whether a user may run a request (Redis's `ACLCheckAllUserCommandPerm`).
//!
//! A selector allows a request when it allows the command (its bit, or an allowed first
//! argument; commands that run before authentication always), every key the request names
//! (as the command table finds them: XREAD's after `STREAMS`) with the access the key's spec
//! declares (`access` needs a readable pattern; `insert`, `update` and `delete` a writable
//! one), and every channel it publishes or subscribes to (a PSUBSCRIBE pattern must equal an
//! allowed pattern). The user may run it when one selector allows it; otherwise the denial
//! reported is a command one when no selector allowed the command, else the key or channel
//! one at the last argument position, as Redis picks it.

use echomq_engine::command::CommandSpec;

use super::catalog;
use super::user::{Selector, User};
use crate::cmd::{acl_has_keys, acl_key_flags};
use echomq_engine::glob;

/// Why a request is refused; the index is the argument's position in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Denial {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denial {
    /// Redis's order of importance (ACL_DENIED_CMD < KEY < CHANNEL), then the position.
    fn rank(self) -> (u8, usize) {
        match self {
            Denial::Command => (0, 0),
            Denial::Key(at) => (1, at),
            Denial::Channel(at) => (2, at),
        }
    }

    /// The refused argument's position (0 for the command).
    pub fn position(self) -> usize {
        match self {
            Denial::Command => 0,
            Denial::Key(at) | Denial::Channel(at) => at,
        }
    }
}

/// The positions of the keys of the commands whose table rows do not place them: the
/// OBJECT and MEMORY USAGE subcommands' key, MSETEX's counted keys.
fn unplaced_keys(full_name: &str, argv: &[&[u8]]) -> Option<Vec<usize>> {
    match full_name {
        "object|encoding" | "object|refcount" | "object|idletime" | "object|freq"
        | "memory|usage" => Some((2..argv.len().min(3)).collect()),
        "msetex" => {
            let count = std::str::from_utf8(argv.get(1)?)
                .ok()?
                .parse::<usize>()
                .ok()?;
            Some(
                (0..count)
                    .map(|i| 2 + 2 * i)
                    .take_while(|&at| at < argv.len())
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The request's keys: each key's position and whether it needs read and write access.
fn keys_of(spec: &CommandSpec, full_name: &str, argv: &[&[u8]]) -> Vec<(usize, bool, bool)> {
    let positions = unplaced_keys(full_name, argv).unwrap_or_else(|| {
        // The table's keys are slices of `argv`: found again by address.
        let mut from = 1;
        crate::slot::keys_of(spec, argv)
            .iter()
            .filter_map(|key| {
                let at = (from..argv.len()).find(|&at| {
                    std::ptr::eq(argv[at].as_ptr(), key.as_ptr()) && argv[at].len() == key.len()
                })?;
                from = at;
                Some(at)
            })
            .collect()
    });
    positions
        .into_iter()
        .enumerate()
        .map(|(i, at)| {
            let flags = acl_key_flags(full_name, argv, i);
            let read = flags.contains(&"access");
            let write = flags
                .iter()
                .any(|f| matches!(*f, "insert" | "update" | "delete"));
            (at, read, write)
        })
        .collect()
}

/// The channels a request publishes or subscribes to: position and whether it is a pattern.
fn channels_of(name: &str, argv: &[&[u8]]) -> Vec<(usize, bool)> {
    match name {
        "publish" | "spublish" if argv.len() > 1 => vec![(1, false)],
        "subscribe" | "ssubscribe" => (1..argv.len()).map(|at| (at, false)).collect(),
        "psubscribe" => (1..argv.len()).map(|at| (at, true)).collect(),
        _ => Vec::new(),
    }
}

fn key_allowed(selector: &Selector, key: &[u8], read: bool, write: bool) -> bool {
    selector.all_keys
        || selector
            .keys
            .iter()
            .filter(|p| (!read || p.read) && (!write || p.write))
            .any(|p| glob::matches(&p.pattern, key, false))
}

fn channel_allowed(selector: &Selector, channel: &[u8], pattern: bool) -> bool {
    selector.all_channels
        || selector.channels.iter().any(|p| {
            if pattern {
                p[..] == *channel
            } else {
                glob::matches(p, channel, false)
            }
        })
}

/// One selector's verdict (Redis's `ACLSelectorCheckCmd`).
fn check_selector(
    selector: &Selector,
    id: usize,
    spec: &CommandSpec,
    argv: &[&[u8]],
    keys: &mut Option<Vec<(usize, bool, bool)>>,
) -> Result<(), Denial> {
    let entry = &catalog().entries[id];
    if !selector.all_commands && !entry.no_auth && !selector.bit(id) {
        let at = if entry.parent.is_some() { 2 } else { 1 };
        let allowed = selector.first_args.get(&id).is_some_and(|args| {
            argv.get(at)
                .is_some_and(|arg| args.iter().any(|a| a.eq_ignore_ascii_case(arg)))
        });
        if argv.len() < 2 || !allowed {
            return Err(Denial::Command);
        }
    }
    if !selector.all_keys && acl_has_keys(entry.name) {
        let keys = keys.get_or_insert_with(|| keys_of(spec, entry.name, argv));
        for &(at, read, write) in keys.iter() {
            if !key_allowed(selector, argv[at], read, write) {
                return Err(Denial::Key(at));
            }
        }
    }
    if !selector.all_channels {
        for (at, pattern) in channels_of(entry.name, argv) {
            if !channel_allowed(selector, argv[at], pattern) {
                return Err(Denial::Channel(at));
            }
        }
    }
    Ok(())
}

/// Whether `user` may run `argv`, the request of command `id` (`spec` its container's or own
/// row).
pub(crate) fn check(
    user: &User,
    id: usize,
    spec: &CommandSpec,
    argv: &[&[u8]],
) -> Result<(), Denial> {
    if user.unrestricted() {
        return Ok(());
    }
    let mut worst: Option<Denial> = None;
    let mut keys = None;
    for selector in &user.selectors {
        match check_selector(selector, id, spec, argv, &mut keys) {
            Ok(()) => return Ok(()),
            Err(denial) => {
                if worst.is_none_or(|w| denial.rank() > w.rank()) {
                    worst = Some(denial);
                }
            }
        }
    }
    Err(worst.unwrap_or(Denial::Command))
}

/// Redis's NOPERM text for a denial (`verbose`: ACL DRYRUN's, naming the key or channel).
pub(crate) fn message(
    denial: Denial,
    user: &User,
    command: &str,
    argv: &[&[u8]],
    verbose: bool,
) -> String {
    let user_name = String::from_utf8_lossy(&user.name);
    let arg = || String::from_utf8_lossy(argv[denial.position()]).into_owned();
    match denial {
        Denial::Command => {
            format!("User {user_name} has no permissions to run the '{command}' command")
        }
        Denial::Key(_) if verbose => {
            format!(
                "User {user_name} has no permissions to access the '{}' key",
                arg()
            )
        }
        Denial::Key(_) => "No permissions to access a key".to_string(),
        Denial::Channel(_) if verbose => format!(
            "User {user_name} has no permissions to access the '{}' channel",
            arg()
        ),
        Denial::Channel(_) => "No permissions to access a channel".to_string(),
    }
}

/// Whether one of `user`'s selectors allows `channel` (a PSUBSCRIBE pattern when `pattern`),
/// as Redis's `ACLUserCheckChannelPerm`.
pub(crate) fn channel_permitted(user: &User, channel: &[u8], pattern: bool) -> bool {
    user.selectors
        .iter()
        .any(|s| channel_allowed(s, channel, pattern))
}

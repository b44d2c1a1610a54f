//! COMMAND, TIME, and the commands tooling sends on connect that echomq accepts and ignores
//! (FUNCTION FLUSH, SCRIPT FLUSH ...).

use echomq_engine::{Error as EngineError, Reply};

use echomq_engine::command::CommandSpec;

use super::table::all;
use super::{Ctx, error, is, lookup, unknown_subcommand};
use super::{command_docs_reads, command_meta, command_rows};

use crate::error::CommandError;

/// Whether echomq has the subcommand `full_name` (`container|sub`).
fn has_subcommand(full_name: &str) -> bool {
    let Some((container, _)) = full_name.split_once('|') else {
        return false;
    };
    lookup(container.as_bytes()).is_some_and(|found| {
        found
            .spec()
            .subcommands
            .iter()
            .any(|s| s.full_name == full_name)
    })
}

/// COMMAND INFO's entry: `[name, arity, flags, first-key, last-key, step, categories, tips,
/// key-specs, subcommands]`. XREAD and XREADGROUP are described as 8.10 does
/// ([`command_docs_reads`]), the others as Redis 8.8 declares them ([`command_rows`]), with
/// the subcommands echomq has. A command Redis does not declare comes from its table row:
/// flags are `movablekeys` for a command whose keys the positions cannot name, empty
/// otherwise; categories, tips, key specs and subcommands are reported empty. The sets are
/// sets in RESP3, as Redis sends them.
fn info_entry(spec: &CommandSpec) -> Reply {
    if let Some(row) = command_docs_reads::row(spec.name) {
        return row.info(&has_subcommand);
    }
    if let Some(row) = command_rows::find_lower(spec.name) {
        return row.info(&has_subcommand);
    }
    let flags = if crate::slot::has_movable_keys(spec) {
        vec![Reply::Status("movablekeys")]
    } else {
        vec![]
    };
    Reply::Array(vec![
        Reply::bulk(spec.name),
        Reply::Int(i64::from(spec.arity)),
        Reply::Set(flags),
        Reply::Int(spec.keys.first),
        Reply::Int(spec.keys.last),
        Reply::Int(spec.keys.step),
        Reply::Set(vec![]),
        Reply::Set(vec![]),
        Reply::Set(vec![]),
        Reply::Set(vec![]),
    ])
}

/// COMMAND DOCS's map for one command: XREAD and XREADGROUP as 8.10 ([`command_docs_reads`]),
/// the others as Redis 8.8 declares them ([`command_rows`]); a command Redis does not declare
/// with an empty summary.
fn docs_entry(name: &'static str) -> Reply {
    if let Some(row) = command_docs_reads::row(name) {
        return row.docs(&has_subcommand);
    }
    if let Some(row) = command_rows::find(name.as_bytes()) {
        return row.docs(&has_subcommand);
    }
    if let Some((_, summary, group)) = OWN_DOCS.iter().find(|(own, _, _)| *own == name) {
        return Reply::Map(vec![
            (Reply::bulk_static("summary"), Reply::bulk_static(summary)),
            (Reply::bulk_static("since"), Reply::bulk_static("0.1.0")),
            (Reply::bulk_static("group"), Reply::bulk_static(group)),
        ]);
    }
    Reply::Map(vec![
        (Reply::bulk_static("summary"), Reply::bulk_static("")),
        (Reply::bulk_static("since"), Reply::bulk_static("1.0.0")),
        (Reply::bulk_static("group"), Reply::bulk_static("generic")),
    ])
}

/// COMMAND DOCS's summary and group of echomq's own commands (`EMQ.*`, which Redis does not
/// declare); `since` is the echomq version that added them.
const OWN_DOCS: &[(&str, &str, &str)] = &[
    (
        "emq.clock",
        "Returns, advances or sets the manual clock of a server started on one (`--clock manual`).",
        "server",
    ),
    (
        "emq.xrange",
        "Returns the entries of a stream and its archive within a range of IDs.",
        "stream",
    ),
    (
        "emq.xrevrange",
        "Returns the entries of a stream and its archive within a range of IDs in reverse order.",
        "stream",
    ),
];

/// `COMMAND`, `COMMAND COUNT`, `COMMAND INFO name...`, `COMMAND DOCS [name...]`,
/// `COMMAND LIST [FILTERBY ...]`, `COMMAND GETKEYS|GETKEYSANDFLAGS command arg...`,
/// `COMMAND HELP`.
pub(crate) fn command(_: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = argv.get(1) else {
        return Reply::Array(all().map(info_entry).collect());
    };
    if is(sub, "count") && argv.len() == 2 {
        Reply::Int(all().count() as i64)
    } else if is(sub, "getkeys") && argv.len() >= 3 {
        getkeys(&argv[2..], false)
    } else if is(sub, "getkeysandflags") && argv.len() >= 3 {
        getkeys(&argv[2..], true)
    } else if is(sub, "list") {
        list(argv)
    } else if is(sub, "help") && argv.len() == 2 {
        super::help(COMMAND_HELP)
    } else if is(sub, "info") {
        if argv.len() == 2 {
            return Reply::Array(all().map(info_entry).collect());
        }
        Reply::Array(
            argv[2..]
                .iter()
                .map(|n| match lookup(n) {
                    Some(found) => info_entry(found.spec()),
                    None => subcommand_row(n).map_or(Reply::Null, |r| r.info(&has_subcommand)),
                })
                .collect(),
        )
    } else if is(sub, "getkeys") || is(sub, "getkeysandflags") {
        let with_flags = is(sub, "getkeysandflags");
        if argv.len() < 3 {
            let name = if with_flags {
                "command|getkeysandflags"
            } else {
                "command|getkeys"
            };
            return error(EngineError::WrongArity(name.into()));
        }
        getkeys(&argv[2..], with_flags)
    } else if is(sub, "help") {
        error(EngineError::WrongArity("command|help".into()))
    } else if is(sub, "docs") {
        let docs: Vec<(Reply, Reply)> = if argv.len() == 2 {
            all()
                .map(|spec| (Reply::bulk(spec.name), docs_entry(spec.name)))
                .collect()
        } else {
            argv[2..]
                .iter()
                .filter_map(|n| match lookup(n) {
                    Some(found) => Some((
                        Reply::bulk(found.spec().name),
                        docs_entry(found.spec().name),
                    )),
                    None => subcommand_row(n)
                        .map(|r| (Reply::bulk_static(r.name), r.docs(&has_subcommand))),
                })
                .collect()
        };
        Reply::Map(docs)
    } else {
        unknown_subcommand(argv)
    }
}

/// The declared row of `name` if it names a subcommand echomq has (`config|get`).
fn subcommand_row(name: &[u8]) -> Option<&'static command_rows::Row> {
    command_rows::find(name).filter(|r| r.name.contains('|') && has_subcommand(r.name))
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Print this help.",
];

/// `COMMAND GETKEYS command arg...` (`with_flags`: `GETKEYSANDFLAGS`, each key with its
/// key-spec flags, [`command_meta::key_flags`]): the keys of a request, as the cluster check
/// finds them. Checked in Redis's order: a known command, one that has keys, its arity.
fn getkeys(request: &[&[u8]], with_flags: bool) -> Reply {
    let Some(found) = lookup(request[0]) else {
        return CommandError::InvalidCommand.into();
    };
    let spec = found.spec();
    let sub = request
        .get(1)
        .filter(|_| !spec.subcommands.is_empty())
        .and_then(|s| spec.subcommand(s));
    let full_name = sub.map_or(spec.name, |s| s.full_name);
    // Redis's `doesCommandHaveKeys`: a key spec that is not NOT_KEY (shard channels are not
    // keys); the positions for a command without a row (echomq's own).
    let has_keys = match command_meta::find(full_name) {
        Some(row) => row.key_specs.iter().any(|flags| !flags.contains("NOT_KEY")),
        None => spec.keys.first > 0 || crate::slot::has_movable_keys(spec),
    };
    if !has_keys {
        return CommandError::NoKeyArguments.into();
    }
    let arity_ok = match sub {
        Some(sub) => sub.arity_ok(request.len()),
        None => spec.arity_ok(request.len()),
    };
    if !arity_ok {
        return CommandError::InvalidArgumentCount.into();
    }
    let keys = crate::slot::keys_of(spec, request);
    if keys.is_empty() {
        // EVAL's and FCALL's keys may be none: Redis's `CMD_NO_MANDATORY_KEYS`.
        let optional = command_rows::find_lower(full_name)
            .is_some_and(|row| row.flags.contains(&"no_mandatory_keys"));
        if optional {
            return Reply::Array(Vec::new());
        }
        return CommandError::InvalidArguments.into();
    }
    Reply::Array(
        keys.into_iter()
            .enumerate()
            .map(|(i, key)| {
                if !with_flags {
                    return Reply::bulk(key);
                }
                let flags = command_meta::key_flags(full_name, request, i);
                Reply::Array(vec![
                    Reply::bulk(key),
                    Reply::Set(flags.into_iter().map(Reply::Status).collect()),
                ])
            })
            .collect(),
    )
}

/// `COMMAND LIST [FILTERBY MODULE name|ACLCAT category|PATTERN pattern]`: every command's and
/// subcommand's full name (none for a module: echomq has none).
fn list(argv: &[&[u8]]) -> Reply {
    enum Filter<'a> {
        All,
        Module,
        Category(String),
        Pattern(&'a [u8]),
    }
    let filter = match argv {
        [_, _] => Filter::All,
        [_, _, filterby, kind, value] if is(filterby, "filterby") => {
            if is(kind, "module") {
                Filter::Module
            } else if is(kind, "aclcat") {
                Filter::Category(
                    format!("@{}", String::from_utf8_lossy(value)).to_ascii_lowercase(),
                )
            } else if is(kind, "pattern") {
                Filter::Pattern(value)
            } else {
                return error(EngineError::Syntax);
            }
        }
        _ => return error(EngineError::Syntax),
    };
    let mut names: Vec<&'static str> = Vec::new();
    for spec in all() {
        names.push(spec.name);
        names.extend(spec.subcommands.iter().map(|s| s.full_name));
    }
    let keep = |name: &&'static str| match &filter {
        Filter::All => true,
        Filter::Module => false,
        Filter::Category(category) => {
            command_meta::find(name).is_some_and(|m| m.categories.contains(&category.as_str()))
        }
        Filter::Pattern(pattern) => crate::glob::matches(pattern, name.as_bytes(), true),
    };
    Reply::Array(names.into_iter().filter(keep).map(Reply::bulk).collect())
}

/// Whether MONITOR does not show calls of `name` (a full name, `config|set`): Redis's admin
/// commands, and AUTH and HELLO, whose arguments may hold a password.
/// EVAL and its family show in MONITOR when they start, before the commands their script
/// runs (the script feeds them itself), not when they end.
fn is_script_call(name: &str) -> bool {
    matches!(name, "eval" | "evalsha" | "eval_ro" | "evalsha_ro")
}

pub(crate) fn hidden_from_monitors(name: &str) -> bool {
    let container = name.split_once('|').map_or(name, |(c, _)| c);
    matches!(
        container,
        "config" | "debug" | "monitor" | "slowlog" | "latency" | "auth" | "hello"
    ) || is_script_call(container)
        || matches!(
            name,
            "client|kill"
                | "client|list"
                | "client|pause"
                | "client|unpause"
                | "acl|deluser"
                | "acl|dryrun"
                | "acl|getuser"
                | "acl|list"
                | "acl|load"
                | "acl|log"
                | "acl|save"
                | "acl|setuser"
                | "acl|users"
        )
}

/// `MONITOR`: from now on this client sees every command the server runs.
pub(crate) fn monitor(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    ctx.state.monitors().add(&ctx.client.info);
    Reply::OK
}

/// `TIME`: seconds and microseconds, by the server's clock.
pub(crate) fn time(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    let ms = ctx.state.clock().now_ms();
    Reply::Array(vec![
        Reply::bulk((ms / 1000).to_string()),
        Reply::bulk(((ms % 1000) * 1000).to_string()),
    ])
}

/// The longest prefix of `text` that is a decimal number, as C's `strtod` reads it (leading
/// spaces skipped); 0 when none is.
pub(super) fn leading_f64(text: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_start();
    let numeric = text
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    (0..=numeric)
        .rev()
        .find_map(|end| text[..end].parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::leading_f64;

    #[test]
    fn sleep_seconds_read_like_strtod() {
        assert_eq!(leading_f64(b"0.25"), 0.25);
        assert_eq!(leading_f64(b"0.1x"), 0.1);
        assert_eq!(leading_f64(b" 2"), 2.0);
        assert_eq!(leading_f64(b"abc"), 0.0);
        assert_eq!(leading_f64(b""), 0.0);
        assert_eq!(leading_f64(b"-1"), -1.0);
        assert_eq!(leading_f64(b"1e-3s"), 0.001);
    }
}

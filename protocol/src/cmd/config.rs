//! `CONFIG GET pattern [pattern ...]`, `CONFIG SET name value [name value ...]`,
//! `CONFIG RESETSTAT`, `CONFIG REWRITE`, `CONFIG HELP`.

use bytes::Bytes;
use echomq_engine::Reply;

use echomq_engine::Error as EngineError;

use super::{Ctx, error, subcommand_of, unknown_subcommand};
use crate::config_file::directives::{DIRECTIVES, Directive};
use crate::config_file::{self, current};
use crate::error::CommandError;
use crate::glob;
use crate::state::protected::{self, Access};
use crate::state::settings::{Param, all_params, param};

const HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Print this help.",
];

/// CONFIG.
pub(crate) fn config(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    let argc = argv.len();
    // SET takes name-value pairs, as Redis checks beyond the table's arity.
    if !sub.arity_ok(argc) || (sub.name() == "set" && argc % 2 != 0) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "get" => get(ctx, &argv[2..]),
        "set" => set(ctx, &argv[2..]),
        "resetstat" => {
            ctx.state.stats().reset();
            ctx.state.keyspace().reset_cycle_stats();
            ctx.state.keyspace().lazyfree().reset_freed();
            ctx.state.reset_eviction_stats();
            for db in ctx.dbs.all().iter_mut() {
                db.reset_expired_counts();
            }
            Reply::OK
        }
        "rewrite" => rewrite(ctx),
        "help" => super::help(HELP),
        _ => unknown_subcommand(argv),
    }
}

fn get(ctx: &mut Ctx<'_>, patterns: &[&[u8]]) -> Reply {
    let settings = ctx.state.settings();
    let engine = ctx.state.engine_config();
    let pairs = all_params()
        .filter(|p| {
            patterns
                .iter()
                .any(|pat| glob::matches(pat, p.name.as_bytes(), true))
        })
        .map(|p| {
            (
                Reply::bulk_static(p.name),
                Reply::Bulk(Bytes::from((p.get)(&settings, engine))),
            )
        })
        .collect::<Vec<_>>();
    let mut pairs = pairs;
    // The directives echomq accepts without implementing them, under either name; a glob
    // leaves out the hidden ones, as Redis's.
    for d in DIRECTIVES
        .iter()
        .filter(|d| current::implemented(d).is_none())
    {
        for name in std::iter::once(d.name).chain(d.alias) {
            let shown = patterns.iter().any(|pat| {
                if glob_free(pat) {
                    pat.eq_ignore_ascii_case(name.as_bytes())
                } else {
                    !d.hidden() && glob::matches(pat, name.as_bytes(), true)
                }
            });
            if shown {
                let value = current::accepted_value(&settings, d);
                pairs.push((Reply::bulk_static(name), Reply::Bulk(Bytes::from(value))));
            }
        }
    }
    Reply::Map(pairs)
}

fn glob_free(pattern: &[u8]) -> bool {
    !pattern
        .iter()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
}

/// CONFIG REWRITE: the config file the server started with, rewritten with the current values
/// (see `config_file::rewrite`).
fn rewrite(ctx: &mut Ctx<'_>) -> Reply {
    let settings = ctx.state.settings().clone();
    if settings.config_file.is_empty() {
        return CommandError::NoConfigFile.into();
    }
    let users = ctx
        .state
        .acl_users()
        .map
        .values()
        .map(|user| String::from_utf8_lossy(&crate::acl::describe::user_line(user)).into_owned())
        .collect();
    let options = current::options(&settings, ctx.state.engine_config(), users);
    let path = std::path::Path::new(&settings.config_file);
    let old = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return rewrite_failed(&e),
    };
    let text = config_file::rewrite::rewritten(&old, &options, current::known);
    match config_file::rewrite::overwrite(path, &text) {
        Ok(()) => {
            tracing::info!("CONFIG REWRITE executed with success.");
            Reply::OK
        }
        Err(e) => rewrite_failed(&e),
    }
}

fn rewrite_failed(e: &std::io::Error) -> Reply {
    let why = crate::persist::aof::failure::os_error_text(e);
    tracing::warn!("CONFIG REWRITE failed: {why}");
    CommandError::ConfigRewriteFailed(why).into()
}

/// Whether `settings` turn on per-key memory tracking (`key-memory-histograms`, or the `mem`
/// flag of `cluster-slot-stats-enabled`).
fn memory_tracking(settings: &crate::state::Settings) -> bool {
    let value = |name: &str| settings.accepted.get(name).map(String::as_str);
    value("key-memory-histograms") == Some("yes")
        || value("cluster-slot-stats-enabled")
            .is_some_and(|v| v == "yes" || v.split(' ').any(|w| w == "mem"))
}

/// Redis's `updateMemoryTrackingEnabled`: memory tracking is set up at start-up only, so
/// CONFIG SET may keep or turn it off but not turn it on. The refusal names the first of
/// `accepted` that bears on it.
fn memory_tracking_refusal(
    before: &crate::state::Settings,
    after: &crate::state::Settings,
    accepted: &[(&'static Directive, String)],
) -> Option<crate::error::ConfigRefusal> {
    if memory_tracking(before) || !memory_tracking(after) {
        return None;
    }
    let (d, _) = accepted.iter().find(|(d, _)| {
        matches!(
            d.name,
            "key-memory-histograms" | "cluster-slot-stats-enabled"
        )
    })?;
    Some(crate::error::ConfigRefusal::new(
        d.name,
        crate::error::ConfigWhy::Other("memory tracking cannot be enabled at runtime".into()),
    ))
}

fn set(ctx: &mut Ctx<'_>, pairs: &[&[u8]]) -> Reply {
    // Every name is checked before any value, as Redis does: an unknown, immutable, protected
    // or repeated parameter refuses the whole command whatever the values are.
    let mut named: Vec<(&'static Param, String)> = Vec::with_capacity(pairs.len() / 2);
    let mut accepted: Vec<(&'static Directive, String)> = Vec::new();
    {
        let settings = ctx.state.settings();
        for pair in pairs.chunks(2) {
            let name = String::from_utf8_lossy(pair[0]).into_owned();
            let Some(p) = param(&name) else {
                // A directive accepted without effect: kept for CONFIG GET and REWRITE.
                match config_file::directives::lookup(&name) {
                    Some(d) if d.immutable() => return CommandError::ImmutableConfig(name).into(),
                    Some(d) => {
                        if accepted.iter().any(|(seen, _)| seen.name == d.name) {
                            return CommandError::DuplicateConfig(name).into();
                        }
                        accepted.push((d, String::from_utf8_lossy(pair[1]).into_owned()));
                        continue;
                    }
                    None => return CommandError::UnknownConfig(name).into(),
                }
            };
            match protected::access(&settings, p, &ctx.client.info.addr) {
                Access::Settable => {}
                Access::Immutable => return CommandError::ImmutableConfig(name).into(),
                Access::Protected => return CommandError::ProtectedConfig(name).into(),
            }
            if named.iter().any(|(seen, _)| seen.name == p.name) {
                return CommandError::DuplicateConfig(name).into();
            }
            named.push((p, String::from_utf8_lossy(pair[1]).into_owned()));
        }
    }
    let mut updated = ctx.state.settings().clone();
    for (d, value) in &accepted {
        match current::accept(d, value) {
            Ok(value) => {
                updated.accepted.insert(d.name, value);
            }
            Err(why) => {
                let refusal = crate::error::ConfigRefusal::new(d.name, why);
                return CommandError::ConfigRefused(refusal).into();
            }
        }
    }
    if let Some(refusal) = memory_tracking_refusal(&ctx.state.settings(), &updated, &accepted) {
        return CommandError::ConfigRefused(refusal).into();
    }
    let engine = ctx.state.engine_config();
    let before = engine.node_limits();
    let notify_before = engine.notify_flags();
    let encoding_before = engine.encoding.limits();
    // All or nothing, as Redis: a refusal puts the engine's limits back too.
    let refuse = |text| -> Reply {
        engine.set_node_entries_max(before.entries_max);
        engine.set_node_bytes_max(before.bytes_max);
        engine.set_notify_flags(notify_before);
        engine.encoding.restore(encoding_before);
        CommandError::ConfigRefused(text).into()
    };
    for (p, value) in &named {
        let Some(setter) = p.set else {
            return CommandError::ImmutableConfig(p.name.to_string()).into();
        };
        if let Err(text) = setter(&mut updated, engine, value) {
            return refuse(text);
        }
    }
    let current = ctx.state.settings().clone();
    // A new TLS configuration is built (and may be refused) before anything changes.
    let tls_name = named
        .iter()
        .map(|(p, _)| p.name)
        .find(|n| n.starts_with("tls-") && *n != "tls-port");
    let tls = match tls_name {
        Some(name) => {
            let prepared = crate::server::tls::prepare_reload(ctx.state, name, &updated.listeners);
            match prepared {
                Ok(tls) => tls,
                Err(text) => return refuse(text),
            }
        }
        None => None,
    };
    // New ports are opened before anything changes, and the old ones closed only after.
    let names: Vec<&str> = named.iter().map(|(p, _)| p.name).collect();
    let ports = match crate::server::sockets::prepare(ctx.state, &names, &current, &updated) {
        Ok(ports) => ports,
        Err(text) => return refuse(text),
    };
    // As Redis's `dir`, the served process changes directory (an embedded server does not).
    let chdir = updated.dir_is_cwd && updated.dir != current.dir;
    if chdir && let Err(text) = crate::state::settings::change_directory(&updated.dir) {
        if let Some(ports) = ports {
            crate::server::sockets::abandon(ctx.state, ports);
        }
        return CommandError::ConfigRefused(text).into();
    }
    if let Err(text) = ctx
        .state
        .apply_persistence(ctx.dbs.all(), &current, &updated)
    {
        if chdir {
            let _ = crate::state::settings::change_directory(&current.dir);
        }
        if let Some(ports) = ports {
            crate::server::sockets::abandon(ctx.state, ports);
        }
        return CommandError::ConfigRefused(text).into();
    }
    if let Some(acceptor) = tls {
        ctx.state.set_tls_acceptor(acceptor);
    }
    if let Some(ports) = ports {
        crate::server::sockets::commit(ctx.state, ports);
    }
    ctx.state.replace_settings(updated);
    // A lower `maxmemory-clients` (or `maxmemory` under a percentage) evicts at once.
    ctx.state.evict_clients();
    Reply::OK
}

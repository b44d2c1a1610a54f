//! `INFO [section ...]`: Redis's sections and field names, lines ending in CRLF.

use std::fmt::Write as _;

use bytes::Bytes;
use echomq_engine::Reply;

use super::Ctx;
use super::connection::REDIS_VERSION;
use crate::state::ServerState;
use crate::state::archive::ArchiveReplica;

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "keyspace",
];
const ALL_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "commandstats",
    "errorstats",
    "keyspace",
    "archive",
];

/// `1.23M`-style sizes, as Redis's `bytesToHuman`.
fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes}B"),
        1024..1_048_576 => format!("{:.2}K", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.2}M", b / 1_048_576.0),
        _ => format!("{:.2}G", b / 1_073_741_824.0),
    }
}

/// INFO.
pub(crate) fn info(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let requested: Vec<String> = argv[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let sections: Vec<&str> = if requested.is_empty() || requested.iter().any(|s| s == "default") {
        DEFAULT_SECTIONS.to_vec()
    } else if requested.iter().any(|s| s == "all" || s == "everything") {
        ALL_SECTIONS.to_vec()
    } else {
        ALL_SECTIONS
            .iter()
            .copied()
            .filter(|s| requested.iter().any(|r| r == s))
            .collect()
    };
    let mut text = String::new();
    for (n, section) in sections.iter().enumerate() {
        if n > 0 {
            text.push_str("\r\n");
        }
        write_section(ctx, section, &mut text);
    }
    Reply::Verbatim(Bytes::from(text))
}

fn write_section(ctx: &mut Ctx<'_>, section: &str, out: &mut String) {
    let state = ctx.state;
    let settings = state.settings().clone();
    let title = match section {
        "commandstats" => "Commandstats".to_string(),
        "errorstats" => "Errorstats".to_string(),
        other => format!("{}{}", other[..1].to_ascii_uppercase(), &other[1..]),
    };
    let _ = write!(out, "# {title}\r\n");
    let mut line = |k: &str, v: &dyn std::fmt::Display| {
        let _ = write!(out, "{k}:{v}\r\n");
    };
    match section {
        "server" => {
            let uptime = state.uptime_s();
            line("redis_version", &REDIS_VERSION);
            line("echomq_version", &env!("CARGO_PKG_VERSION"));
            line("redis_mode", &"standalone");
            line("os", &std::env::consts::OS);
            line("arch_bits", &64);
            line("process_id", &std::process::id());
            line("tcp_port", &settings.port);
            line("server_time_usec", &(state.clock().now_ms() * 1000));
            line("uptime_in_seconds", &uptime);
            line("uptime_in_days", &(uptime / 86_400));
            line("hz", &10);
            line("config_file", &"");
        }
        "clients" => {
            line("connected_clients", &state.client_count());
            line("maxclients", &settings.maxclients);
            line(
                "blocked_clients",
                &ctx.dbs.iter().map(|db| db.blocked_count()).sum::<usize>(),
            );
        }
        "memory" => {
            let used = state.memory_used();
            line("used_memory", &used);
            line("used_memory_human", &human(used));
            line("used_memory_rss", &crate::state::resident_bytes());
            line("maxmemory", &settings.maxmemory);
            line("maxmemory_human", &human(settings.maxmemory));
            line("maxmemory_policy", &settings.maxmemory_policy);
        }
        "stats" => {
            let stats = state.stats();
            line(
                "total_connections_received",
                &stats.total_connections_received(),
            );
            line(
                "total_commands_processed",
                &stats.total_commands_processed(),
            );
            line("rejected_connections", &stats.rejected_connections());
            line("expired_keys", &0);
            line("evicted_keys", &0);
            line("total_error_replies", &stats.total_error_replies());
        }
        "commandstats" => {
            for (name, s) in state.stats().commands() {
                let per_call = if s.calls == 0 {
                    0.0
                } else {
                    s.usec as f64 / s.calls as f64
                };
                line(
                    &format!("cmdstat_{name}"),
                    &format!(
                        "calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}",
                        s.calls, s.usec, s.rejected_calls, s.failed_calls
                    ),
                );
            }
        }
        "errorstats" => {
            for (code, count) in state.stats().errors() {
                line(&format!("errorstat_{code}"), &format!("count={count}"));
            }
        }
        "archive" => write_archive(state, &settings.archive_streams, &mut line),
        "persistence" => super::persistence::write_info(ctx, &mut line),
        _ => {
            for (index, db) in ctx.dbs.iter().enumerate() {
                let keys = db.len();
                if keys > 0 {
                    line(
                        &format!("db{index}"),
                        &format!("keys={keys},expires=0,avg_ttl=0"),
                    );
                }
            }
        }
    }
}

/// The `archive` section: whether an archive is configured, its policy, file and figures.
fn write_archive(
    state: &ServerState,
    pattern: &str,
    line: &mut dyn FnMut(&str, &dyn std::fmt::Display),
) {
    let Some(archive) = state.archive() else {
        line("archive_enabled", &0);
        return;
    };
    line("archive_enabled", &1);
    line("archive_path", &archive.archive().path().display());
    line("archive_streams_pattern", &pattern);
    let stats = archive.archive().stats();
    match &stats {
        Ok(stats) => {
            line("archive_streams", &stats.streams);
            line("archive_records", &stats.records);
            line("archive_pages", &stats.archive_pages);
            line("archive_file_bytes", &stats.file_bytes);
            line("archive_file_human", &human(stats.file_bytes));
        }
        Err(e) => line("archive_error", &one_line(&e.to_string())),
    }
    let (folds, records_folded, fold_errors) = archive.counters();
    line("archive_folds", &folds);
    line("archive_records_folded", &records_folded);
    line("archive_fold_errors", &fold_errors);
    write_replica(archive.replica(), stats.ok().map(|s| s.archive_pages), line);
}

/// The `archive_replica_*` fields: where the archive replicates to and how far it got.
/// Numbers with nothing to report yet (no commit, no page) are -1, as Redis reports an
/// unknown `master_last_io_seconds_ago`; `archive_replica_lag_pages` is -1 when the archive's
/// own page count cannot be read.
fn write_replica(
    replica: Option<&ArchiveReplica>,
    archive_pages: Option<u64>,
    line: &mut dyn FnMut(&str, &dyn std::fmt::Display),
) {
    let Some(replica) = replica else {
        line("archive_replica_enabled", &0);
        return;
    };
    let status = replica.link.status();
    let known = |n: Option<u64>| n.map_or(-1, i128::from);
    line("archive_replica_enabled", &1);
    line("archive_replica_location", &one_line(&replica.location));
    line("archive_replica_epoch", &known(status.epoch.map(|e| e.0)));
    line(
        "archive_replica_version",
        &known(status.head.map(|h| h.version.0)),
    );
    line("archive_replica_page", &known(status.replicated_page()));
    line("archive_replica_pages", &status.replicated_pages());
    line(
        "archive_replica_lag_pages",
        &known(archive_pages.map(|pages| status.lag_pages(pages))),
    );
    line("archive_replica_pending", &u8::from(status.pending));
    line("archive_replica_fenced", &u8::from(status.fenced));
    line("archive_replica_running", &u8::from(!status.stopped));
    line("archive_replica_commits", &status.commits);
    line("archive_replica_segment_bytes", &status.segment_bytes);
    line("archive_replica_errors", &status.errors);
    line("archive_replica_notifications", &status.notifications);
    line(
        "archive_replica_last_error",
        &one_line(status.last_error.as_deref().unwrap_or("")),
    );
}

/// `text` fit for an INFO value: no CR or LF, which would end the field.
fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

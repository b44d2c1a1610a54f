//! The sections about what the server did: stats, replication, commandstats, errorstats,
//! latencystats, cluster.
//!
//! echomq is always a master without replicas, without pub/sub, eviction or ACL users,
//! and outside a cluster unless `cluster-enabled yes` makes it a one-node one: those fields
//! read as Redis's do in that situation.

use super::Lines;
use crate::acl::Reason;
use crate::cmd::Ctx;
use crate::state::pubsub::Kind;

/// Redis's default `repl-backlog-size`.
const REPL_BACKLOG_BYTES: u64 = 1024 * 1024;

pub(super) fn stats(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let state = ctx.state;
    let stats = state.stats();
    // Under the keyspace lock: the databases' counts from the Ctx, the cycle's from its own
    // lock.
    let cycle = state.keyspace().cycle_stats();
    let (expired, expired_active) = ctx.dbs.all().iter().fold((0, 0), |(a, b), db| {
        let (all, active) = db.expired_counts();
        (a + all, b + active)
    });
    let (subkeys, subkeys_active) = ctx.dbs.all().iter().fold((0, 0), |(a, b), db| {
        let (all, active) = db.expired_subkey_counts();
        (a + all, b + active)
    });
    let (input, output) = stats.net_bytes();
    let (reads, writes) = stats.io_processed();
    out.field(
        "total_connections_received",
        stats.total_connections_received(),
    );
    out.field("total_commands_processed", stats.total_commands_processed());
    let (ops_per_sec, input_per_sec, output_per_sec) = stats.instantaneous();
    out.field("instantaneous_ops_per_sec", ops_per_sec);
    out.field("total_net_input_bytes", input);
    out.field("total_net_output_bytes", output);
    out.field("total_net_repl_input_bytes", 0);
    out.field("total_net_repl_output_bytes", 0);
    let kbps = |bytes: u64| format!("{:.2}", bytes as f64 / 1024.0);
    out.field("instantaneous_input_kbps", kbps(input_per_sec));
    out.field("instantaneous_output_kbps", kbps(output_per_sec));
    out.field("instantaneous_input_repl_kbps", "0.00");
    out.field("instantaneous_output_repl_kbps", "0.00");
    out.field("rejected_connections", stats.rejected_connections());
    out.field("sync_full", 0);
    out.field("sync_partial_ok", 0);
    out.field("sync_partial_err", 0);
    out.field("expired_subkeys", subkeys);
    out.field("expired_subkeys_active", subkeys_active);
    out.field("expired_keys", expired);
    out.field("expired_keys_active", expired_active);
    out.field(
        "expired_stale_perc",
        format!("{:.2}", cycle.stale_share * 100.0),
    );
    out.field("expired_time_cap_reached_count", cycle.time_cap_reached);
    out.field("expire_cycle_cpu_milliseconds", cycle.time_used_us / 1000);
    out.field("evicted_keys", state.keyspace().evicted_keys());
    out.field("evicted_clients", state.clients_memory().evicted());
    out.field("evicted_scripts", state.scripts().evicted());
    let (total_exceeded, current_exceeded) = state.eviction_exceeded_ms();
    out.field("total_eviction_exceeded_time", total_exceeded);
    out.field("current_eviction_exceeded_time", current_exceeded);
    let (hits, misses) = ctx.dbs.all().iter().fold((0, 0), |(h, m), db| {
        let (hits, misses) = db.hits_and_misses();
        (h + hits, m + misses)
    });
    out.field("keyspace_hits", hits);
    out.field("keyspace_misses", misses);
    let pubsub = state.pubsub();
    out.field("pubsub_channels", pubsub.distinct(Kind::Channel));
    out.field("pubsub_patterns", pubsub.distinct(Kind::Pattern));
    out.field("pubsubshard_channels", pubsub.distinct(Kind::Shard));
    let (rdb_fork, aof_fork) = (state.rdb().fork.figures(), state.aof().fork.figures());
    let latest = if rdb_fork.fork_seq >= aof_fork.fork_seq {
        rdb_fork
    } else {
        aof_fork
    };
    out.field("latest_fork_usec", latest.fork_usec);
    out.field("total_forks", rdb_fork.forks + aof_fork.forks);
    for name in [
        "migrate_cached_sockets",
        "slave_expires_tracked_keys",
        "active_defrag_hits",
        "active_defrag_misses",
        "active_defrag_key_hits",
        "active_defrag_key_misses",
        "total_active_defrag_time",
        "current_active_defrag_time",
    ] {
        out.field(name, 0);
    }
    let (tracked_keys, tracked_items, tracked_prefixes) = state.tracking().totals();
    out.field("tracking_total_keys", tracked_keys);
    out.field("tracking_total_items", tracked_items);
    out.field("tracking_total_prefixes", tracked_prefixes);
    out.field("unexpected_error_replies", 0);
    out.field("total_error_replies", stats.total_error_replies());
    out.field("dump_payload_sanitizations", 0);
    out.field("total_reads_processed", reads);
    out.field("total_writes_processed", writes);
    for name in [
        "io_threaded_reads_processed",
        "io_threaded_writes_processed",
        "io_threaded_total_prefetch_batches",
        "io_threaded_total_prefetch_entries",
        "client_query_buffer_limit_disconnections",
    ] {
        out.field(name, 0);
    }
    out.field(
        "client_output_buffer_limit_disconnections",
        stats.output_limit_disconnections(),
    );
    for name in [
        "reply_buffer_shrinks",
        "reply_buffer_expands",
        "eventloop_cycles",
        "eventloop_duration_sum",
        "eventloop_duration_cmd_sum",
        "instantaneous_eventloop_cycles_per_sec",
        "instantaneous_eventloop_duration_usec",
        "eventloop_cycles_with_clients_processing",
        "total_client_processing_events",
        "avg_pipeline_length_sum",
        "avg_pipeline_length_cnt",
    ] {
        out.field(name, 0);
    }
    out.field("avg_pipeline_length", "0.00");
    out.field("slowlog_commands_count", 0);
    out.field("slowlog_commands_time_ms_max", "0.00");
    out.field("slowlog_commands_time_ms_sum", "0.00");
    let acl = ctx.state.acl();
    for (name, reason) in [
        ("acl_access_denied_auth", Reason::Auth),
        ("acl_access_denied_cmd", Reason::Command),
        ("acl_access_denied_key", Reason::Key),
        ("acl_access_denied_channel", Reason::Channel),
    ] {
        out.field(name, acl.denied(reason));
    }
    out.field("acl_access_denied_tls_cert", 0);
}

pub(super) fn replication(ctx: &mut Ctx<'_>, out: &mut Lines) {
    out.field("role", "master");
    out.field("connected_slaves", 0);
    out.field("master_failover_state", "no-failover");
    out.field("master_replid", &ctx.state.identity().replid);
    out.field("master_replid2", "0".repeat(40));
    out.field("master_repl_offset", 0);
    out.field("second_repl_offset", -1);
    out.field("repl_backlog_active", 0);
    out.field("repl_backlog_size", REPL_BACKLOG_BYTES);
    out.field("repl_backlog_first_byte_offset", 0);
    out.field("repl_backlog_histlen", 0);
}

pub(super) fn commandstats(ctx: &mut Ctx<'_>, out: &mut Lines) {
    for (name, s) in ctx.state.stats().commands() {
        let per_call = if s.calls == 0 {
            0.0
        } else {
            s.usec as f64 / s.calls as f64
        };
        out.field(
            &format!("cmdstat_{name}"),
            format!(
                "calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}",
                s.calls, s.usec, s.rejected_calls, s.failed_calls
            ),
        );
    }
}

pub(super) fn errorstats(ctx: &mut Ctx<'_>, out: &mut Lines) {
    for (code, count) in ctx.state.stats().errors() {
        out.field(&format!("errorstat_{code}"), format!("count={count}"));
    }
}

/// Per-command latency percentiles, those of `latency-tracking-info-percentiles`, named as
/// Redis names them (`p99.9`); nothing with `latency-tracking no`.
pub(super) fn latencystats(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let (tracking, percentiles) = {
        let settings = ctx.state.settings();
        (
            settings.tuning.latency_tracking,
            settings.tuning.latency_tracking_info_percentiles.clone(),
        )
    };
    if !tracking {
        return;
    }
    for (name, histogram) in ctx.state.stats().latencies() {
        if histogram.is_empty() {
            continue;
        }
        let values: Vec<String> = percentiles
            .iter()
            .map(|p| {
                let label = format!("{p:.6}");
                let label = label.trim_end_matches('0').trim_end_matches('.');
                let usec = histogram.value_at(*p) as f64 / 1000.0;
                format!("p{label}={usec:.3}")
            })
            .collect();
        out.field(
            &format!("latency_percentiles_usec_{name}"),
            values.join(","),
        );
    }
}

pub(super) fn cluster(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let enabled = ctx.state.settings().cluster_enabled;
    out.field("cluster_enabled", u8::from(enabled));
}

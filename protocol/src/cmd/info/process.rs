//! The sections about the process: server, clients, memory, persistence, threads, cpu.
//!
//! Process figures come from `/proc` (Linux): the kernel release, total memory, CPU times
//! (in clock ticks of 1/100 s, Linux's `USER_HZ`). Where `/proc` cannot be read the figure
//! is 0. echomq has no RDB persistence, Lua, allocator statistics or I/O threads beyond the
//! runtime's: those fields are Redis's values for a server without them.

use super::{Lines, human};
use crate::REDIS_VERSION;
use crate::cmd::Ctx;
use crate::cmd::overhead::Overhead;

/// `/proc/<pid>/stat` clock ticks per second.
const TICKS_PER_S: u64 = 100;
/// Redis's LRU clock: seconds, in 24 bits.
const LRU_CLOCK_MAX: u64 = (1 << 24) - 1;
/// Redis's active-client window: 4 slots of 128 ms.
const ACTIVE_WINDOW_MS: u64 = 4 * 128;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `used_cpu_*` style: seconds with six decimals, from clock ticks.
fn cpu_seconds(ticks: u64) -> String {
    let micros = ticks * (1_000_000 / TICKS_PER_S);
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// utime, stime, cutime, cstime (ticks) from a `/proc/.../stat` line.
fn cpu_ticks(stat: &str) -> [u64; 4] {
    // The command name (field 2) may hold spaces: count fields after its closing paren.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let mut ticks = [0; 4];
    for (slot, value) in ticks.iter_mut().zip(fields) {
        *slot = value;
    }
    ticks
}

pub(super) fn server(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let state = ctx.state;
    let settings = state.settings().clone();
    let uptime = state.uptime_s();
    let now_ms = ctx.snapshot.now_ms;
    let release = read("/proc/sys/kernel/osrelease");
    let os = format!(
        "{} {} {}",
        if std::env::consts::OS == "linux" {
            "Linux"
        } else {
            std::env::consts::OS
        },
        release.trim(),
        std::env::consts::ARCH
    );
    let identity = state.identity();
    out.field("redis_version", REDIS_VERSION);
    out.field("echomq_version", env!("CARGO_PKG_VERSION"));
    out.field("redis_git_sha1", "00000000");
    out.field("redis_git_dirty", 0);
    out.field("redis_build_id", &identity.run_id[..16]);
    let mode = if settings.cluster_enabled {
        "cluster"
    } else {
        "standalone"
    };
    out.field("redis_mode", mode);
    out.field("os", os);
    out.field("arch_bits", usize::BITS);
    out.field("monotonic_clock", "POSIX clock_gettime");
    out.field("multiplexing_api", "epoll");
    out.field("atomicvar_api", "c11-builtin");
    out.field("gcc_version", "0.0.0");
    out.field("process_id", std::process::id());
    // `supervised systemd` (or `auto`) takes effect where systemd gave a socket.
    let supervised = matches!(
        settings.accepted.get("supervised").map(String::as_str),
        Some("systemd" | "auto")
    ) && std::env::var_os("NOTIFY_SOCKET").is_some();
    out.field(
        "process_supervised",
        if supervised { "systemd" } else { "no" },
    );
    out.field("run_id", &identity.run_id);
    out.field("tcp_port", settings.port);
    out.field("server_time_usec", now_ms * 1000);
    out.field("uptime_in_seconds", uptime);
    out.field("uptime_in_days", uptime / 86_400);
    out.field("hz", settings.hz);
    out.field("configured_hz", settings.hz);
    out.field("lru_clock", (now_ms / 1000) & LRU_CLOCK_MAX);
    let executable = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    out.field("executable", executable);
    out.field("config_file", &settings.config_file);
    out.field("io_threads_active", 0);
    // Redis's listeners: tcp, unix, tls (one `bind=` per address, and the port, while open;
    // tls once it was configured).
    let binds: String = settings
        .bind
        .split_whitespace()
        .map(|a| format!(",bind={a}"))
        .collect();
    let open = |port: u16| {
        if port == 0 {
            String::new()
        } else {
            format!("{binds},port={port}")
        }
    };
    out.field("listener0", format!("name=tcp{}", open(settings.port)));
    if !settings.listeners.unixsocket.is_empty() {
        let path = &settings.listeners.unixsocket;
        out.field("listener1", format!("name=unix,bind={path}"));
    }
    let tls_port = settings.listeners.tls_port;
    if tls_port != 0 || state.tls_acceptor().is_some() {
        out.field("listener2", format!("name=tls{}", open(tls_port)));
    }
}

pub(super) fn clients(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let state = ctx.state;
    let clients = state.clients();
    let blocked: usize = ctx.dbs.all().iter().map(|db| db.blocked_count()).sum();
    let in_timeout: usize = ctx
        .dbs
        .all()
        .iter()
        .map(|db| db.blocked_with_timeout())
        .sum();
    let watched: usize = ctx.dbs.all().iter().map(|db| db.watched_count()).sum();
    let (blocking, on_nokey) = ctx.dbs.all().iter().fold((0, 0), |(a, b), db| {
        let (keys, nokey) = db.blocking_keys();
        (a + keys, b + nokey)
    });
    out.field("connected_clients", clients.len());
    out.field("cluster_connections", 0);
    out.field("maxclients", state.settings().maxclients);
    // The largest buffers held now (Redis: the largest of the last few seconds).
    let (max_in, max_out) = clients.iter().fold((0, 0), |(i, o), c| {
        let (input, output) = c.memory.buffers();
        (i.max(input), o.max(output))
    });
    out.field("client_recent_max_input_buffer", max_in);
    out.field("client_recent_max_output_buffer", max_out);
    out.field("blocked_clients", blocked);
    out.field("tracking_clients", state.tracking().clients_on());
    out.field("pubsub_clients", state.pubsub().clients());
    out.field(
        "watching_clients",
        clients.iter().filter(|c| c.is_watching()).count(),
    );
    out.field("clients_in_timeout_table", in_timeout);
    out.field(
        "active_clients",
        clients
            .iter()
            .filter(|c| c.idle_ms() < ACTIVE_WINDOW_MS)
            .count(),
    );
    out.field("total_watched_keys", watched);
    out.field("total_blocking_keys", blocking);
    out.field("total_blocking_keys_on_nokey", on_nokey);
}

/// `12.34%` of `part` in `whole`.
fn percent(part: u64, whole: u64) -> String {
    let perc = if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    };
    format!("{perc:.2}%")
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn system_memory() -> u64 {
    read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

pub(super) fn memory(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let state = ctx.state;
    let settings = state.settings().clone();
    // One accounting for all the figures: `used_memory` counts from the empty process (the
    // binary, the runtime and the empty tables count nothing), so the startup figure is 0 and
    // the dataset is everything counted; the fragmentation ratio compares the resident size
    // with the whole heap, the empty process included, as the allocator holds it.
    let overhead = Overhead::now(state);
    let (used, rss) = (overhead.used, overhead.rss);
    let identity = state.identity();
    let (peak, peak_time) = *identity.memory_peak.lock();
    let startup = 0;
    let dataset = used;
    let system = system_memory();
    out.field("used_memory", used);
    out.field("used_memory_human", human(used));
    out.field("used_memory_rss", rss);
    out.field("used_memory_rss_human", human(rss));
    out.field("used_memory_peak", peak);
    out.field("used_memory_peak_human", human(peak));
    out.field("used_memory_peak_time", peak_time);
    out.field("used_memory_peak_perc", percent(used, peak));
    out.field("used_memory_overhead", startup);
    out.field("used_memory_startup", startup);
    out.field("used_memory_dataset", dataset);
    out.field("used_memory_dataset_perc", percent(dataset, used));
    let allocator = overhead.allocator;
    out.field("allocator_allocated", allocator.allocated);
    out.field("allocator_active", allocator.active);
    out.field("allocator_resident", allocator.resident);
    out.field("allocator_muzzy", allocator.muzzy);
    out.field("total_system_memory", system);
    out.field("total_system_memory_human", human(system));
    let lua = crate::script::vm_memory() as u64;
    let scripts = state.scripts().memory() as u64;
    let functions_vm = crate::script::function::vm_memory() as u64;
    let functions = state.functions().memory() as u64;
    let (libraries, function_count) = state.functions().counts();
    out.field("used_memory_lua", lua);
    out.field("used_memory_vm_eval", lua);
    out.field("used_memory_lua_human", human(lua));
    out.field("used_memory_scripts_eval", scripts);
    out.field("number_of_cached_scripts", state.scripts().count());
    out.field("number_of_functions", function_count);
    out.field("number_of_libraries", libraries);
    out.field("used_memory_vm_functions", functions_vm);
    out.field("used_memory_vm_total", lua + functions_vm);
    out.field("used_memory_vm_total_human", human(lua + functions_vm));
    out.field("used_memory_functions", functions);
    out.field("used_memory_scripts", scripts + functions);
    out.field("used_memory_scripts_human", human(scripts + functions));
    out.field("maxmemory", settings.maxmemory);
    out.field("maxmemory_human", human(settings.maxmemory));
    out.field("maxmemory_policy", &settings.maxmemory_policy);
    let two = |r: f64| format!("{r:.2}");
    out.field("allocator_frag_ratio", two(overhead.allocator_frag()));
    out.field("allocator_frag_bytes", allocator.small_free);
    out.field("allocator_rss_ratio", two(overhead.allocator_rss()));
    out.field("allocator_rss_bytes", overhead.allocator_rss_bytes());
    out.field("rss_overhead_ratio", two(overhead.rss_extra()));
    out.field("rss_overhead_bytes", overhead.rss_extra_bytes());
    out.field("mem_fragmentation_ratio", two(overhead.total_frag()));
    out.field("mem_fragmentation_bytes", overhead.total_frag_bytes());
    // echomq has no replicas, cluster links or AOF buffer; its clients are normal clients,
    // sharing nothing.
    let clients_memory = state.clients_memory().total();
    for (name, value) in [
        ("mem_not_counted_for_evict", 0),
        ("mem_replication_backlog", 0),
        ("mem_total_replication_buffers", 0),
        ("mem_replica_full_sync_buffer", 0),
        ("mem_clients_slaves", 0),
        ("mem_clients_normal", clients_memory),
        ("mem_clients_normal_shared", 0),
        ("mem_clients_normal_unshared", clients_memory),
        ("mem_cluster_slot_migration_output_buffer", 0),
        ("mem_cluster_slot_migration_input_buffer", 0),
        ("mem_cluster_slot_migration_input_buffer_peak", 0),
        ("mem_cluster_links", 0),
        ("mem_aof_buffer", 0),
    ] {
        out.field(name, value);
    }
    out.field("mem_allocator", crate::alloc::allocator_name());
    out.field("mem_overhead_db_hashtable_rehashing", 0);
    out.field("active_defrag_running", 0);
    let lazyfree = state.keyspace().lazyfree();
    out.field("lazyfree_pending_objects", lazyfree.pending());
    out.field("lazyfreed_objects", lazyfree.freed());
}

pub(super) fn persistence(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let state = ctx.state;
    let aof = state.aof();
    let status = |failed: bool| if failed { "err" } else { "ok" };
    let dirty: u64 = ctx.dbs.all().iter().map(|db| db.dirty()).sum();
    out.field("loading", u8::from(state.loading()));
    out.field("async_loading", 0);
    let rdb = state.rdb();
    let (rdb_fork, aof_fork) = (rdb.fork.figures(), aof.fork.figures());
    // The running child's figures (the RDB's when both run); Redis runs one child at a time.
    let current = [rdb_fork, aof_fork]
        .into_iter()
        .find(|f| f.running)
        .unwrap_or_default();
    out.field("current_cow_peak", current.current_cow_peak);
    out.field("current_cow_size", current.current_cow);
    out.field("current_cow_size_age", current.current_cow_age_s);
    let perc = if current.keys_total == 0 {
        0.0
    } else {
        current.keys_processed as f64 * 100.0 / current.keys_total as f64
    };
    out.field("current_fork_perc", format!("{perc:.2}"));
    out.field(
        "current_save_keys_processed",
        if current.running {
            current.keys_processed
        } else {
            0
        },
    );
    out.field("current_save_keys_total", current.keys_total);
    let now_ms = ctx.snapshot.now_ms;
    out.field("rdb_changes_since_last_save", rdb.changes_since_save(dirty));
    out.field("rdb_bgsave_in_progress", u8::from(rdb.bgsave_in_progress()));
    out.field("rdb_last_save_time", rdb.last_save_s());
    out.field("rdb_last_bgsave_status", status(rdb.last_failed()));
    out.field("rdb_last_bgsave_time_sec", rdb.last_bgsave_time_s());
    out.field(
        "rdb_current_bgsave_time_sec",
        rdb.current_bgsave_time_s(now_ms),
    );
    let (saves, failures) = rdb.saves();
    out.field("rdb_saves", saves);
    out.field("rdb_saves_consecutive_failures", failures);
    out.field("rdb_last_cow_size", rdb_fork.last_cow);
    let (loaded, expired) = rdb.load_keys();
    out.field("rdb_last_load_keys_expired", expired);
    out.field("rdb_last_load_keys_loaded", loaded);
    out.field("aof_enabled", u8::from(aof.enabled()));
    out.field("aof_rewrite_in_progress", u8::from(aof.rewriting()));
    out.field("aof_rewrite_scheduled", u8::from(aof.rewrite_scheduled()));
    out.field("aof_last_rewrite_time_sec", -1);
    out.field("aof_current_rewrite_time_sec", -1);
    out.field("aof_last_bgrewrite_status", status(aof.bgrewrite_failed()));
    out.field("aof_rewrites", 0);
    out.field("aof_rewrites_consecutive_failures", 0);
    out.field("aof_last_write_status", status(aof.write_error().is_some()));
    out.field("aof_last_cow_size", aof_fork.last_cow);
    out.field("module_fork_in_progress", 0);
    out.field("module_fork_last_cow_size", 0);
    if aof.enabled() {
        out.field("aof_current_size", aof.current_size());
        out.field("aof_base_size", aof.base_size());
        out.field("aof_pending_rewrite", u8::from(aof.rewrite_scheduled()));
        // Replies wait for the AOF write, so nothing is buffered or pending between commands.
        for name in [
            "aof_buffer_length",
            "aof_pending_bio_fsync",
            "aof_delayed_fsync",
        ] {
            out.field(name, 0);
        }
    }
}

pub(super) fn threads(ctx: &mut Ctx<'_>, out: &mut Lines) {
    let state = ctx.state;
    let (reads, writes) = state.stats().io_processed();
    out.field(
        "io_thread_0",
        format!(
            "clients={},reads={reads},writes={writes}",
            state.client_count()
        ),
    );
}

pub(super) fn cpu(_: &mut Ctx<'_>, out: &mut Lines) {
    let [user, sys, user_children, sys_children] = cpu_ticks(&read("/proc/self/stat"));
    let main = format!("/proc/self/task/{}/stat", std::process::id());
    let [main_user, main_sys, _, _] = cpu_ticks(&read(&main));
    out.field("used_cpu_sys", cpu_seconds(sys));
    out.field("used_cpu_user", cpu_seconds(user));
    out.field("used_cpu_sys_children", cpu_seconds(sys_children));
    out.field("used_cpu_user_children", cpu_seconds(user_children));
    out.field("used_cpu_sys_main_thread", cpu_seconds(main_sys));
    out.field("used_cpu_user_main_thread", cpu_seconds(main_user));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_are_read_after_the_command_name() {
        let stat = "42 (a b) S 1 2 3 4 5 6 7 8 9 10 250 130 7 3 20 0";
        assert_eq!(cpu_ticks(stat), [250, 130, 7, 3]);
        assert_eq!(cpu_seconds(250), "2.500000");
        assert_eq!(cpu_ticks(""), [0; 4]);
    }
}

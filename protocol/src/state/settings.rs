//! Run-time settings with Redis's names (CONFIG GET/SET), defaults and value forms.
//!
//! The table [`PARAMS`] is the one place a parameter is declared: its name, how it is read,
//! and how it is set (or that it cannot be). Stream node limits and the IDMP defaults of new
//! streams (`stream-idmp-duration`, `stream-idmp-maxsize`) and `notify-keyspace-events` (as
//! the engine's notification flags) live in the engine's
//! [`echomq_engine::Config`]; everything else here.

use echomq_engine::Config as EngineConfig;
use echomq_engine::config::{IDMP_DURATION_RANGE, IDMP_MAXSIZE_RANGE};

use crate::error::{ConfigRefusal, ConfigWhy};

/// Redis's `proto-max-bulk-len` default: 512 MiB.
pub const PROTO_MAX_BULK_LEN_DEFAULT: u64 = 512 * 1024 * 1024;
/// Redis's `client-query-buffer-limit` default: 1 GiB.
pub const CLIENT_QUERY_BUFFER_LIMIT_DEFAULT: u64 = 1024 * 1024 * 1024;
/// Redis's `tcp-backlog` default.
pub const TCP_BACKLOG_DEFAULT: u32 = 511;
/// Redis's `maxclients` default.
pub const MAXCLIENTS_DEFAULT: u64 = 10_000;
/// Redis's smallest `proto-max-bulk-len` and `client-query-buffer-limit`: 1 MiB.
const BUFFER_LIMIT_MIN: u64 = 1024 * 1024;

/// The settings a server reads while it runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `requirepass`: clients must AUTH with it; empty = no password.
    pub requirepass: String,
    /// `maxclients`: at start lowered to what `RLIMIT_NOFILE` allows, and CONFIG SET refuses
    /// more than it allows ([`super::fd_limit`]).
    pub maxclients: u64,
    /// `maxmemory` in bytes; 0 = no limit.
    pub maxmemory: u64,
    /// `maxmemory-clients`: the clients' memory at which the largest are evicted
    /// ([`super::client_memory`]).
    pub maxmemory_clients: super::client_memory::MaxmemoryClients,
    /// `maxmemory-policy`, mirrored in the engine's settings (which eviction and the keys'
    /// access metadata read).
    pub maxmemory_policy: String,
    /// `proto-max-bulk-len`.
    pub proto_max_bulk_len: u64,
    /// `client-query-buffer-limit`.
    pub client_query_buffer_limit: u64,
    /// `timeout`: seconds an idle client may stay connected; 0 = forever.
    pub timeout_s: u64,
    /// `client-output-buffer-limit`: unread reply bytes past which a client is dropped
    /// ([`super::output_limit`]).
    pub client_output_buffer_limit: super::output_limit::OutputLimits,
    /// `protected-mode`: without a password, refuse clients not on loopback
    /// ([`super::protected`]).
    pub protected_mode: bool,
    /// `tcp-backlog`: the listen backlog (immutable; set at start).
    pub tcp_backlog: u32,
    /// `save`: the RDB save points, `seconds changes` pairs (see `persist::rdb::save_points`); empty
    /// means no automatic BGSAVE. Empty by default here, so an embedded server (the test
    /// double) writes no file unless asked; `echomq serve` sets Redis's default,
    /// `3600 1 300 100 60 10000`, unless configured otherwise.
    pub save: String,
    /// `dbfilename`: the RDB file's name inside `dir`.
    pub dbfilename: String,
    /// `rdbcompression`: LZF-compress strings in RDB files and DUMP payloads.
    pub rdbcompression: bool,
    /// `rdbchecksum`: write (and check) the RDB file's CRC64.
    pub rdbchecksum: bool,
    /// `stop-writes-on-bgsave-error`: refuse writes with `-MISCONF` after a failed save.
    pub stop_writes_on_bgsave_error: bool,
    /// `appendonly`: append every write to the AOF (see the `aof` module).
    pub appendonly: bool,
    /// `appendfsync`: `always`, `everysec` or `no`.
    pub appendfsync: String,
    /// `dir`: where the AOF directory and the RDB file are.
    pub dir: String,
    /// Whether the process's working directory follows `dir`, as redis-server's does
    /// (`echomq serve`: `dir` is then kept absolute, and CONFIG SET changes directory). An
    /// embedded server shares its process with others and leaves it alone.
    pub dir_is_cwd: bool,
    /// `appenddirname` (set only before the server starts persisting).
    pub appenddirname: String,
    /// `appendfilename` (set only before the server starts persisting).
    pub appendfilename: String,
    /// `aclfile`: where ACL LOAD and ACL SAVE read and write the users (set only by the config
    /// file; empty for none).
    pub aclfile: String,
    /// `aof-load-truncated`.
    pub aof_load_truncated: bool,
    /// `aof-use-rdb-preamble`: a rewrite writes the AOF base as an RDB file (Redis's default).
    pub aof_use_rdb_preamble: bool,
    /// `auto-aof-rewrite-percentage`.
    pub auto_aof_rewrite_percentage: u64,
    /// `auto-aof-rewrite-min-size`.
    pub auto_aof_rewrite_min_size: u64,
    /// Whether persistence started: `appenddirname` and `appendfilename` are fixed now.
    pub persistence_started: bool,
    /// `port` the server listens on (CONFIG SET opens the new one).
    pub port: u16,
    /// `bind` addresses, space separated (CONFIG SET binds the new ones).
    pub bind: String,
    /// `databases` (immutable).
    pub databases: u64,
    /// `archive-streams`: a glob of the stream keys (database 0) whose trims fold into the
    /// archive first, when the server has an archive. Default `*`: every stream.
    pub archive_streams: String,
    /// `cluster-enabled` (immutable; set at start): a one-node cluster owning every slot.
    pub cluster_enabled: bool,
    /// The cluster node id (40 hex digits, drawn at start; not a CONFIG parameter).
    pub cluster_node_id: String,
    /// `hz`: how many times a second the server cron runs (active expiry, timeouts), clamped
    /// to 1..=500 as Redis clamps it.
    pub hz: u64,
    /// `slowlog-log-slower-than`: microseconds from which a command is logged; negative
    /// disables the slow log.
    pub slowlog_log_slower_than: i64,
    /// `busy-reply-threshold` (alias `lua-time-limit`): milliseconds a script runs before
    /// other clients get `-BUSY`; 0 never.
    pub busy_reply_threshold_ms: u64,
    /// `slowlog-max-len`: entries kept.
    pub slowlog_max_len: u64,
    /// `acllog-max-len`: ACL LOG's entries at most.
    pub acllog_max_len: u64,
    /// `acl-pubsub-default allchannels` (`false`: Redis's default, `resetchannels`): what a
    /// new user's channels, a new selector's and `reset` start from.
    pub acl_pubsub_all: bool,
    /// `enable-protected-configs`: who may CONFIG SET `dir` and `dbfilename`
    /// ([`super::protected`]).
    pub enable_protected_configs: super::protected::Allowed,
    /// `enable-debug-command`: who may run DEBUG.
    pub enable_debug_command: super::protected::Allowed,
    /// `enable-module-command` (kept for CONFIG GET; there is no MODULE command).
    pub enable_module_command: super::protected::Allowed,
    /// The latency monitor's and the lazy freeing's parameters ([`super::tuning`]).
    pub tuning: super::tuning::Tuning,
    /// `tracking-table-max-keys`: keys the client-side caching table remembers before it
    /// invalidates some at random; 0 = no limit.
    pub tracking_table_max_keys: u64,
    /// The config file the server started with (an absolute path; empty for none): INFO's
    /// `config_file`, the file CONFIG REWRITE rewrites.
    pub config_file: String,
    /// The directives echomq accepts without implementing them (by primary name), as the
    /// config file or CONFIG SET gave them; CONFIG GET and CONFIG REWRITE read them.
    pub accepted: std::collections::BTreeMap<&'static str, String>,
    /// The TLS port and the unix socket ([`super::listeners`]).
    pub listeners: super::listeners::ListenerSettings,
}

/// Redis's `tracking-table-max-keys` default: a million keys.
pub const TRACKING_TABLE_MAX_KEYS_DEFAULT: u64 = 1_000_000;

/// Redis's default `hz` and its clamp.
pub const HZ_DEFAULT: u64 = 10;
const HZ_MIN: u64 = 1;
const HZ_MAX: u64 = 500;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            requirepass: String::new(),
            maxclients: MAXCLIENTS_DEFAULT,
            maxmemory: 0,
            maxmemory_clients: Default::default(),
            maxmemory_policy: "noeviction".into(),
            proto_max_bulk_len: PROTO_MAX_BULK_LEN_DEFAULT,
            client_query_buffer_limit: CLIENT_QUERY_BUFFER_LIMIT_DEFAULT,
            timeout_s: 0,
            client_output_buffer_limit: super::output_limit::OutputLimits::default(),
            protected_mode: true,
            tcp_backlog: TCP_BACKLOG_DEFAULT,
            save: String::new(),
            dbfilename: "dump.rdb".into(),
            rdbcompression: true,
            rdbchecksum: true,
            stop_writes_on_bgsave_error: true,
            appendonly: false,
            appendfsync: "everysec".into(),
            dir: ".".into(),
            dir_is_cwd: false,
            appenddirname: "appendonlydir".into(),
            appendfilename: "appendonly.aof".into(),
            aclfile: String::new(),
            aof_load_truncated: true,
            aof_use_rdb_preamble: true,
            auto_aof_rewrite_percentage: 100,
            auto_aof_rewrite_min_size: 64 * 1024 * 1024,
            persistence_started: false,
            port: 6379,
            bind: "127.0.0.1".into(),
            databases: 16,
            archive_streams: "*".into(),
            cluster_enabled: false,
            cluster_node_id: String::new(),
            hz: HZ_DEFAULT,
            slowlog_log_slower_than: 10_000,
            busy_reply_threshold_ms: 5000,
            slowlog_max_len: 128,
            acllog_max_len: 128,
            acl_pubsub_all: false,
            enable_protected_configs: super::protected::Allowed::No,
            enable_debug_command: super::protected::Allowed::No,
            enable_module_command: super::protected::Allowed::No,
            tracking_table_max_keys: TRACKING_TABLE_MAX_KEYS_DEFAULT,
            tuning: super::tuning::Tuning::default(),
            config_file: String::new(),
            accepted: std::collections::BTreeMap::new(),
            listeners: super::listeners::ListenerSettings::default(),
        }
    }
}

type Get = fn(&Settings, &EngineConfig) -> String;
type Set = fn(&mut Settings, &EngineConfig, &str) -> Result<(), ConfigRefusal>;

/// One CONFIG parameter.
#[derive(Debug)]
pub struct Param {
    /// Its name.
    pub name: &'static str,
    /// Reads it as CONFIG GET shows it.
    pub get: Get,
    /// Sets it, or `None` if immutable.
    pub set: Option<Set>,
}

/// Parses a Redis memory value: an integer with an optional `k`, `kb`, `m`, `mb`, `g`, `gb`.
pub fn parse_memory(value: &str) -> Option<u64> {
    let lower = value.to_ascii_lowercase();
    let (digits, unit) = match lower.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => lower.split_at(at),
        None => (lower.as_str(), ""),
    };
    let n: u64 = digits.parse().ok()?;
    let unit = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(unit)
}

pub(super) fn int_in(name: &str, value: &str, min: u64, max: u64) -> Result<u64, ConfigRefusal> {
    let n: i128 = value
        .parse()
        .map_err(|_| ConfigRefusal::new(name, ConfigWhy::NotInteger))?;
    if n < i128::from(min) || n > i128::from(max) {
        let (min, max) = (min.into(), max.into());
        return Err(ConfigRefusal::new(name, ConfigWhy::OutOfRange { min, max }));
    }
    Ok(n as u64)
}

pub(super) fn memory_in(name: &str, value: &str, min: u64) -> Result<u64, ConfigRefusal> {
    let n = parse_memory(value).ok_or_else(|| ConfigRefusal::new(name, ConfigWhy::NotMemory))?;
    if n < min {
        let (min, max) = (min.into(), i64::MAX.into());
        return Err(ConfigRefusal::new(name, ConfigWhy::OutOfRange { min, max }));
    }
    Ok(n)
}

pub(super) fn yes_no_text(value: bool) -> String {
    if value { "yes" } else { "no" }.into()
}

pub(super) fn yes_no(name: &str, value: &str) -> Result<bool, ConfigRefusal> {
    match value.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(ConfigRefusal::new(name, ConfigWhy::NotYesNo)),
    }
}

/// Every parameter CONFIG knows, in the order CONFIG GET * lists them.
pub const PARAMS: &[Param] = &[
    Param {
        name: "stream-node-max-entries",
        get: |_, e| e.node_limits().entries_max.to_string(),
        set: Some(|_, e, v| {
            e.set_node_entries_max(int_in("stream-node-max-entries", v, 0, i64::MAX as u64)?);
            Ok(())
        }),
    },
    Param {
        name: "stream-node-max-bytes",
        get: |_, e| e.node_limits().bytes_max.to_string(),
        set: Some(|_, e, v| {
            e.set_node_bytes_max(memory_in("stream-node-max-bytes", v, 0)?);
            Ok(())
        }),
    },
    Param {
        name: "stream-idmp-duration",
        get: |_, e| e.idmp_defaults().duration_s.to_string(),
        set: Some(|_, e, v| {
            let (min, max) = (IDMP_DURATION_RANGE.start(), IDMP_DURATION_RANGE.end());
            e.set_idmp_duration(int_in("stream-idmp-duration", v, *min, *max)?);
            Ok(())
        }),
    },
    Param {
        name: "stream-idmp-maxsize",
        get: |_, e| e.idmp_defaults().maxsize.to_string(),
        set: Some(|_, e, v| {
            let (min, max) = (IDMP_MAXSIZE_RANGE.start(), IDMP_MAXSIZE_RANGE.end());
            e.set_idmp_maxsize(int_in("stream-idmp-maxsize", v, *min, *max)?);
            Ok(())
        }),
    },
    Param {
        name: "maxclients",
        get: |s, _| s.maxclients.to_string(),
        set: Some(|s, _, v| {
            let n = int_in("maxclients", v, 1, u64::from(u32::MAX))?;
            super::fd_limit::check_config_set(n)
                .map_err(|e| ConfigRefusal::new("maxclients", ConfigWhy::Other(e.to_string())))?;
            s.maxclients = n;
            Ok(())
        }),
    },
    Param {
        name: "maxmemory",
        get: |s, _| s.maxmemory.to_string(),
        set: Some(|s, _, v| {
            s.maxmemory = memory_in("maxmemory", v, 0)?;
            Ok(())
        }),
    },
    Param {
        name: "maxmemory-clients",
        get: |s, _| s.maxmemory_clients.to_string(),
        set: Some(|s, _, v| {
            s.maxmemory_clients = super::client_memory::MaxmemoryClients::parse(v)
                .map_err(|why| ConfigRefusal::new("maxmemory-clients", why))?;
            Ok(())
        }),
    },
    Param {
        name: "maxmemory-policy",
        get: |s, _| s.maxmemory_policy.clone(),
        set: Some(|s, e, v| {
            let Some(policy) = echomq_engine::Policy::parse(v) else {
                return Err(ConfigRefusal::new(
                    "maxmemory-policy",
                    ConfigWhy::NotOneOf(
                        "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, volatile-lrm, allkeys-lru, allkeys-lfu, allkeys-random, allkeys-lrm, noeviction",
                    ),
                ));
            };
            e.set_maxmemory_policy(policy);
            s.maxmemory_policy = policy.name().into();
            Ok(())
        }),
    },
    Param {
        name: "maxmemory-samples",
        get: |_, e| e.eviction().samples.to_string(),
        set: Some(|_, e, v| {
            let range = echomq_engine::config::MAXMEMORY_SAMPLES_RANGE;
            let n = int_in(
                "maxmemory-samples",
                v,
                u64::from(*range.start()),
                u64::from(*range.end()),
            )?;
            e.set_maxmemory_samples(n as u32);
            Ok(())
        }),
    },
    Param {
        name: "maxmemory-eviction-tenacity",
        get: |_, e| e.eviction().tenacity.to_string(),
        set: Some(|_, e, v| {
            e.set_eviction_tenacity(int_in("maxmemory-eviction-tenacity", v, 0, 100)? as u32);
            Ok(())
        }),
    },
    Param {
        name: "lfu-log-factor",
        get: |_, e| e.eviction().lfu_log_factor.to_string(),
        set: Some(|_, e, v| {
            let max = i32::MAX as u64;
            e.set_lfu_log_factor(int_in("lfu-log-factor", v, 0, max)? as u32);
            Ok(())
        }),
    },
    Param {
        name: "lfu-decay-time",
        get: |_, e| e.eviction().lfu_decay_time.to_string(),
        set: Some(|_, e, v| {
            let max = i32::MAX as u64;
            e.set_lfu_decay_time(int_in("lfu-decay-time", v, 0, max)? as u32);
            Ok(())
        }),
    },
    Param {
        name: "proto-max-bulk-len",
        get: |s, _| s.proto_max_bulk_len.to_string(),
        set: Some(|s, _, v| {
            s.proto_max_bulk_len = memory_in("proto-max-bulk-len", v, BUFFER_LIMIT_MIN)?;
            Ok(())
        }),
    },
    Param {
        name: "client-query-buffer-limit",
        get: |s, _| s.client_query_buffer_limit.to_string(),
        set: Some(|s, _, v| {
            s.client_query_buffer_limit =
                memory_in("client-query-buffer-limit", v, BUFFER_LIMIT_MIN)?;
            Ok(())
        }),
    },
    Param {
        name: "client-output-buffer-limit",
        get: |s, _| s.client_output_buffer_limit.to_string(),
        set: Some(|s, _, v| {
            s.client_output_buffer_limit = s.client_output_buffer_limit.with(v).map_err(|e| {
                ConfigRefusal::new("client-output-buffer-limit", ConfigWhy::Other(e.into()))
            })?;
            Ok(())
        }),
    },
    Param {
        name: "protected-mode",
        get: |s, _| if s.protected_mode { "yes" } else { "no" }.into(),
        set: Some(|s, _, v| {
            s.protected_mode = yes_no("protected-mode", v)?;
            Ok(())
        }),
    },
    Param {
        name: "tcp-backlog",
        get: |s, _| s.tcp_backlog.to_string(),
        set: None,
    },
    Param {
        name: "requirepass",
        get: |s, _| s.requirepass.clone(),
        set: Some(|s, _, v| {
            s.requirepass = v.to_string();
            Ok(())
        }),
    },
    Param {
        name: "busy-reply-threshold",
        get: |s, _| s.busy_reply_threshold_ms.to_string(),
        set: Some(|s, _, v| {
            s.busy_reply_threshold_ms = int_in("busy-reply-threshold", v, 0, i64::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "lua-time-limit",
        get: |s, _| s.busy_reply_threshold_ms.to_string(),
        set: Some(|s, _, v| {
            s.busy_reply_threshold_ms = int_in("lua-time-limit", v, 0, i64::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "slowlog-log-slower-than",
        get: |s, _| s.slowlog_log_slower_than.to_string(),
        set: Some(|s, _, v| {
            s.slowlog_log_slower_than = v.parse().map_err(|_| {
                ConfigRefusal::new("slowlog-log-slower-than", ConfigWhy::NotInteger)
            })?;
            Ok(())
        }),
    },
    Param {
        name: "tracking-table-max-keys",
        get: |s, _| s.tracking_table_max_keys.to_string(),
        set: Some(|s, _, v| {
            s.tracking_table_max_keys = int_in("tracking-table-max-keys", v, 0, i64::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "slowlog-max-len",
        get: |s, _| s.slowlog_max_len.to_string(),
        set: Some(|s, _, v| {
            s.slowlog_max_len = int_in("slowlog-max-len", v, 0, i64::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "acl-pubsub-default",
        get: |s, _| {
            if s.acl_pubsub_all {
                "allchannels"
            } else {
                "resetchannels"
            }
            .into()
        },
        set: Some(|s, _, v| {
            s.acl_pubsub_all = match v.to_ascii_lowercase().as_str() {
                "allchannels" => true,
                "resetchannels" => false,
                _ => {
                    return Err(ConfigRefusal::new(
                        "acl-pubsub-default",
                        ConfigWhy::NotOneOf("allchannels, resetchannels"),
                    ));
                }
            };
            Ok(())
        }),
    },
    Param {
        name: "acllog-max-len",
        get: |s, _| s.acllog_max_len.to_string(),
        set: Some(|s, _, v| {
            s.acllog_max_len = int_in("acllog-max-len", v, 0, i64::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "timeout",
        get: |s, _| s.timeout_s.to_string(),
        set: Some(|s, _, v| {
            s.timeout_s = int_in("timeout", v, 0, i32::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "notify-keyspace-events",
        get: |_, e| echomq_engine::notify::render(e.notify_flags()),
        set: Some(|_, e, v| {
            let flags = echomq_engine::notify::parse(v).ok_or_else(|| {
                let why = ConfigWhy::Other(echomq_engine::notify::INVALID_CLASS.into());
                ConfigRefusal::new("notify-keyspace-events", why)
            })?;
            e.set_notify_flags(flags);
            Ok(())
        }),
    },
    Param {
        name: "save",
        get: |s, _| s.save.clone(),
        set: Some(|s, _, v| {
            if crate::persist::rdb::save_points(v).is_none() {
                return Err(ConfigRefusal::new("save", ConfigWhy::InvalidSave));
            }
            s.save = crate::persist::rdb::save_points(v)
                .unwrap_or_default()
                .iter()
                .map(|(secs, changes)| format!("{secs} {changes}"))
                .collect::<Vec<_>>()
                .join(" ");
            Ok(())
        }),
    },
    Param {
        name: "dbfilename",
        get: |s, _| s.dbfilename.clone(),
        set: Some(|s, _, v| {
            if v.contains('/') {
                return Err(ConfigRefusal::new(
                    "dbfilename",
                    ConfigWhy::FilenameIsPath("dbfilename"),
                ));
            }
            s.dbfilename = v.to_string();
            Ok(())
        }),
    },
    Param {
        name: "rdbcompression",
        get: |s, _| yes_no_text(s.rdbcompression),
        set: Some(|s, _, v| {
            s.rdbcompression = yes_no("rdbcompression", v)?;
            Ok(())
        }),
    },
    Param {
        name: "rdbchecksum",
        get: |s, _| yes_no_text(s.rdbchecksum),
        set: Some(|s, _, v| {
            s.rdbchecksum = yes_no("rdbchecksum", v)?;
            Ok(())
        }),
    },
    Param {
        name: "stop-writes-on-bgsave-error",
        get: |s, _| yes_no_text(s.stop_writes_on_bgsave_error),
        set: Some(|s, _, v| {
            s.stop_writes_on_bgsave_error = yes_no("stop-writes-on-bgsave-error", v)?;
            Ok(())
        }),
    },
    Param {
        name: "appendonly",
        get: |s, _| {
            if s.appendonly {
                "yes".into()
            } else {
                "no".into()
            }
        },
        set: Some(|s, _, v| {
            s.appendonly = yes_no("appendonly", v)?;
            Ok(())
        }),
    },
    Param {
        name: "appendfsync",
        get: |s, _| s.appendfsync.clone(),
        set: Some(|s, _, v| {
            let Some(fsync) = crate::persist::aof::Fsync::parse(v) else {
                return Err(ConfigRefusal::new(
                    "appendfsync",
                    ConfigWhy::NotOneOf("everysec, always, no"),
                ));
            };
            s.appendfsync = fsync.name().into();
            Ok(())
        }),
    },
    Param {
        name: "dir",
        get: |s, _| {
            std::fs::canonicalize(&s.dir)
                .map_or_else(|_| s.dir.clone(), |p| p.display().to_string())
        },
        set: Some(|s, _, v| {
            if !std::path::Path::new(v).is_dir() {
                return Err(ConfigRefusal::new("dir", ConfigWhy::NoSuchDirectory));
            }
            s.dir = if s.dir_is_cwd {
                // What getcwd answers once there (the caller changes directory).
                let path = std::fs::canonicalize(v).map_err(|e| {
                    let why = crate::persist::aof::failure::os_error_text(&e);
                    ConfigRefusal::new("dir", ConfigWhy::Other(why))
                })?;
                path.display().to_string()
            } else {
                v.to_string()
            };
            Ok(())
        }),
    },
    Param {
        name: "appenddirname",
        get: |s, _| s.appenddirname.clone(),
        set: Some(|s, _, v| {
            if s.persistence_started {
                return Err(ConfigRefusal::new("appenddirname", ConfigWhy::Immutable));
            }
            if v.is_empty() || v.contains('/') {
                return Err(ConfigRefusal::new(
                    "appenddirname",
                    ConfigWhy::DirnameIsPath("appenddirname"),
                ));
            }
            s.appenddirname = v.to_string();
            Ok(())
        }),
    },
    Param {
        name: "aclfile",
        get: |s, _| s.aclfile.clone(),
        // Set by the config file only (`ServerHandle::set_aclfile`).
        set: None,
    },
    Param {
        name: "appendfilename",
        get: |s, _| s.appendfilename.clone(),
        set: Some(|s, _, v| {
            if s.persistence_started {
                return Err(ConfigRefusal::new("appendfilename", ConfigWhy::Immutable));
            }
            if v.is_empty() || v.contains('/') {
                return Err(ConfigRefusal::new(
                    "appendfilename",
                    ConfigWhy::FilenameIsPath("appendfilename"),
                ));
            }
            s.appendfilename = v.to_string();
            Ok(())
        }),
    },
    Param {
        name: "aof-load-truncated",
        get: |s, _| {
            if s.aof_load_truncated {
                "yes".into()
            } else {
                "no".into()
            }
        },
        set: Some(|s, _, v| {
            s.aof_load_truncated = yes_no("aof-load-truncated", v)?;
            Ok(())
        }),
    },
    Param {
        name: "aof-use-rdb-preamble",
        get: |s, _| {
            if s.aof_use_rdb_preamble {
                "yes".into()
            } else {
                "no".into()
            }
        },
        set: Some(|s, _, v| {
            s.aof_use_rdb_preamble = yes_no("aof-use-rdb-preamble", v)?;
            Ok(())
        }),
    },
    Param {
        name: "auto-aof-rewrite-percentage",
        get: |s, _| s.auto_aof_rewrite_percentage.to_string(),
        set: Some(|s, _, v| {
            s.auto_aof_rewrite_percentage =
                int_in("auto-aof-rewrite-percentage", v, 0, i32::MAX as u64)?;
            Ok(())
        }),
    },
    Param {
        name: "auto-aof-rewrite-min-size",
        get: |s, _| s.auto_aof_rewrite_min_size.to_string(),
        set: Some(|s, _, v| {
            s.auto_aof_rewrite_min_size = memory_in("auto-aof-rewrite-min-size", v, 0)?;
            Ok(())
        }),
    },
    // The new port and addresses are opened by CONFIG SET (`crate::server::sockets`).
    Param {
        name: "port",
        get: |s, _| s.port.to_string(),
        set: Some(|s, _, v| {
            s.port = int_in("port", v, 0, 65535)? as u16;
            Ok(())
        }),
    },
    Param {
        name: "bind",
        get: |s, _| s.bind.clone(),
        set: Some(|s, _, v| {
            // Split on single spaces, as Redis splits a multi-word value.
            let words: Vec<&str> = v.split(' ').collect();
            if words.len() > BIND_ADDRESSES_MAX {
                let why = ConfigWhy::Other("Too many bind addresses specified.".into());
                return Err(ConfigRefusal::new("bind", why));
            }
            let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
            s.bind = words.join(" ");
            Ok(())
        }),
    },
    Param {
        name: "databases",
        get: |s, _| s.databases.to_string(),
        set: None,
    },
    Param {
        name: "cluster-enabled",
        get: |s, _| if s.cluster_enabled { "yes" } else { "no" }.into(),
        set: None,
    },
    Param {
        name: "hz",
        get: |s, _| s.hz.to_string(),
        set: Some(|s, _, v| {
            s.hz = int_in("hz", v, 0, i32::MAX as u64)?.clamp(HZ_MIN, HZ_MAX);
            Ok(())
        }),
    },
    Param {
        name: "archive-streams",
        get: |s, _| s.archive_streams.clone(),
        set: Some(|s, _, v| {
            s.archive_streams = v.to_string();
            Ok(())
        }),
    },
    super::protected::ENABLE_PROTECTED_CONFIGS,
    super::protected::ENABLE_DEBUG_COMMAND,
    super::protected::ENABLE_MODULE_COMMAND,
];

/// Most `bind` addresses (Redis's `CONFIG_BINDADDR_MAX`).
const BIND_ADDRESSES_MAX: usize = 16;

/// The parameter called `name` (any case).
pub fn param(name: &str) -> Option<&'static Param> {
    all_params().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// Every parameter, in the order CONFIG GET * lists them: [`PARAMS`], then the tuning
/// parameters of [`super::tuning`], then the TLS and unix socket ones of [`super::listeners`].
pub fn all_params() -> impl Iterator<Item = &'static Param> {
    PARAMS
        .iter()
        .chain(super::tuning::TUNING_PARAMS)
        .chain(super::listeners::LISTENER_PARAMS)
}

/// Why one setting could not be applied (see [`crate::ServerHandle::config_set`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// No parameter has this name.
    #[error("unknown setting '{0}'")]
    Unknown(String),
    /// The parameter is fixed when the server starts (`databases`), or only a client's CONFIG
    /// SET changes it on a running server (`port`, `bind`, `tls-port`, which open ports).
    #[error("setting '{0}' is immutable")]
    Immutable(String),
    /// The value is refused; the text is CONFIG SET's, without the `ERR ` prefix.
    #[error(transparent)]
    Invalid(#[from] ConfigRefusal),
}

/// Makes `dir` the process's working directory (`dir_is_cwd`), refused with the system's
/// reason as Redis's `chdir` failure is.
pub(crate) fn change_directory(dir: &str) -> Result<(), ConfigRefusal> {
    std::env::set_current_dir(dir).map_err(|e| {
        let why = crate::persist::aof::failure::os_error_text(&e);
        ConfigRefusal::new("dir", ConfigWhy::Other(why))
    })
}

/// Sets one parameter by name, as a `CONFIG SET name value` of one pair would.
pub(crate) fn set_one(
    settings: &mut Settings,
    engine: &EngineConfig,
    name: &str,
    value: &str,
) -> Result<(), SettingError> {
    let p = param(name).ok_or_else(|| SettingError::Unknown(name.to_string()))?;
    let set = p
        .set
        .ok_or_else(|| SettingError::Immutable(p.name.to_string()))?;
    set(settings, engine, value).map_err(SettingError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values_take_units() {
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("1kb"), Some(1024));
        assert_eq!(parse_memory("2GB"), Some(2 << 30));
        assert_eq!(parse_memory("1k"), Some(1000));
        assert_eq!(parse_memory("x"), None);
        assert_eq!(parse_memory("-1"), None);
    }

    #[test]
    fn setting_validates_and_reports_redis_errors() {
        let mut s = Settings::default();
        let e = EngineConfig::default();
        let maxclients = param("MAXCLIENTS").unwrap();
        assert!(
            (maxclients.set.unwrap())(&mut s, &e, "0")
                .unwrap_err()
                .to_string()
                .contains("between 1 and")
        );
        (maxclients.set.unwrap())(&mut s, &e, "50").unwrap();
        assert_eq!((maxclients.get)(&s, &e), "50");
        (param("stream-node-max-entries").unwrap().set.unwrap())(&mut s, &e, "7").unwrap();
        assert_eq!(e.node_limits().entries_max, 7);
        assert!(param("databases").unwrap().set.is_none());
        let duration = param("stream-idmp-duration").unwrap();
        assert_eq!((duration.get)(&s, &e), "100");
        for bad in ["0", "86401"] {
            assert!(
                (duration.set.unwrap())(&mut s, &e, bad)
                    .unwrap_err()
                    .to_string()
                    .ends_with("argument must be between 1 and 86400 inclusive")
            );
        }
        (duration.set.unwrap())(&mut s, &e, "86400").unwrap();
        assert_eq!(e.idmp_defaults().duration_s, 86_400);
        let maxsize = param("stream-idmp-maxsize").unwrap();
        assert_eq!((maxsize.get)(&s, &e), "100");
        assert!(
            (maxsize.set.unwrap())(&mut s, &e, "10001")
                .unwrap_err()
                .to_string()
                .ends_with("argument must be between 1 and 10000 inclusive")
        );
        (maxsize.set.unwrap())(&mut s, &e, "1").unwrap();
        assert_eq!(e.idmp_defaults().maxsize, 1);
    }
}

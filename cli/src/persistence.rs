//! `echomq serve`'s persistence options and the protected-action switches, named as
//! `redis-server --NAME VALUE` takes them and applied like `CONFIG SET` after the config file
//! (so they win over it). The switches (`enable-protected-configs`, `enable-debug-command`,
//! `enable-module-command`) can be set only here or in the config file, as in Redis.

use clap::Args;
use echomq_protocol::ServerHandle;

/// Persistence options of `echomq serve`.
#[derive(Debug, Args)]
pub struct PersistenceArgs {
    /// Append every write to an append-only file (yes|no).
    #[arg(long)]
    appendonly: Option<String>,
    /// When to fsync the AOF: always, everysec, no.
    #[arg(long)]
    appendfsync: Option<String>,
    /// The working directory the AOF directory and the RDB file are in.
    #[arg(long)]
    dir: Option<String>,
    /// The AOF directory's name inside `dir` (default appendonlydir).
    #[arg(long)]
    appenddirname: Option<String>,
    /// The AOF files' name prefix (default appendonly.aof).
    #[arg(long)]
    appendfilename: Option<String>,
    /// Load an AOF whose last command is cut, cutting it (yes|no).
    #[arg(long = "aof-load-truncated")]
    aof_load_truncated: Option<String>,
    /// Write an RDB preamble in the AOF base (only `no` until RDB is supported).
    #[arg(long = "aof-use-rdb-preamble")]
    aof_use_rdb_preamble: Option<String>,
    /// RDB save points, `seconds changes` pairs ("" for none).
    #[arg(long, allow_hyphen_values = true)]
    save: Option<String>,
    /// The RDB file's name inside `dir` (default dump.rdb).
    #[arg(long)]
    dbfilename: Option<String>,
    /// LZF-compress strings in RDB files and DUMP payloads (yes|no).
    #[arg(long)]
    rdbcompression: Option<String>,
    /// Write and check the RDB file's CRC64 (yes|no).
    #[arg(long)]
    rdbchecksum: Option<String>,
    /// Refuse writes after a failed background save (yes|no).
    #[arg(long = "stop-writes-on-bgsave-error")]
    stop_writes_on_bgsave_error: Option<String>,
    /// Rewrite when the AOF grew by this percentage since the last rewrite (0: never).
    #[arg(long = "auto-aof-rewrite-percentage")]
    auto_aof_rewrite_percentage: Option<String>,
    /// The smallest AOF size that is rewritten automatically.
    #[arg(long = "auto-aof-rewrite-min-size")]
    auto_aof_rewrite_min_size: Option<String>,
    /// Who may CONFIG SET `dir` and `dbfilename`: no (default), yes, local (loopback clients).
    #[arg(long = "enable-protected-configs")]
    enable_protected_configs: Option<String>,
    /// Who may run DEBUG: no (default), yes, local (loopback clients).
    #[arg(long = "enable-debug-command")]
    enable_debug_command: Option<String>,
    /// Who may run MODULE (echomq has none; accepted as Redis accepts it).
    #[arg(long = "enable-module-command")]
    enable_module_command: Option<String>,
}

impl PersistenceArgs {
    /// Sets each given option, as CONFIG SET does.
    pub fn apply(&self, handle: &ServerHandle) -> Result<(), String> {
        let pairs = [
            ("enable-protected-configs", &self.enable_protected_configs),
            ("enable-debug-command", &self.enable_debug_command),
            ("enable-module-command", &self.enable_module_command),
            ("dir", &self.dir),
            ("appenddirname", &self.appenddirname),
            ("appendfilename", &self.appendfilename),
            ("appendfsync", &self.appendfsync),
            ("aof-load-truncated", &self.aof_load_truncated),
            ("aof-use-rdb-preamble", &self.aof_use_rdb_preamble),
            (
                "auto-aof-rewrite-percentage",
                &self.auto_aof_rewrite_percentage,
            ),
            ("auto-aof-rewrite-min-size", &self.auto_aof_rewrite_min_size),
            ("save", &self.save),
            ("dbfilename", &self.dbfilename),
            ("rdbcompression", &self.rdbcompression),
            ("rdbchecksum", &self.rdbchecksum),
            (
                "stop-writes-on-bgsave-error",
                &self.stop_writes_on_bgsave_error,
            ),
            ("appendonly", &self.appendonly),
        ];
        for (name, value) in pairs {
            if let Some(value) = value {
                handle
                    .config_set(name, value)
                    .map_err(|e| format!("--{name} {value}: {e}"))?;
            }
        }
        Ok(())
    }
}

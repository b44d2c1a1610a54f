//! `echomq serve [--bind ADDR] [--port PORT] [--requirepass PASS] [--config FILE] [--resp3]
//! [--protected-mode yes|no] [--tcp-backlog N] [--cluster-enabled yes|no]
//! [--threads N] [--archive [DIR]] [--replicate s3://BUCKET/PREFIX [--s3-endpoint URL]]`
//!
//! Binds (loopback by default), prints the address, and serves until SIGINT or SIGTERM (after
//! the final save when `save` points are set; if that save fails it keeps serving, as Redis
//! does, until the next signal or `SHUTDOWN NOSAVE`). A
//! config file holds Redis-style `name value` lines (comments with `#`), applied like
//! `CONFIG SET` before the first client connects.
//!
//! `--archive DIR` opens (or creates) `DIR/archive.redb`; `--archive` alone uses
//! [`ARCHIVE_DIR_DEFAULT`] in the working directory. Trims of streams matching the
//! `archive-streams` glob (default `*`, database 0) then fold into it first, and EMQ.XRANGE /
//! EMQ.XREVRANGE read archive and live stream as one.
//!
//! `--replicate s3://BUCKET/PREFIX` (needs `--archive`) replicates the archive: every fold the
//! server commits wakes the replicator, and INFO's `archive` section reports its
//! `archive_replica_*` figures. At shutdown the server waits (bounded) for the last folds.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use echomq_archive::Archive;
use echomq_protocol::resp::Protocol;
use echomq_protocol::server::ArchiveReplica;
use echomq_protocol::server::SettingError;
use echomq_protocol::{Server, ServerConfig};

/// The archive directory `--archive` uses without a value (relative to the working directory,
/// like Redis's `dir ./`).
pub const ARCHIVE_DIR_DEFAULT: &str = "echomq-archive";
/// The archive's file name inside its directory.
pub const ARCHIVE_FILE: &str = "archive.redb";

/// Options of `echomq serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Require clients to AUTH with this password.
    #[arg(long, default_value = "")]
    requirepass: String,
    /// A file of `name value` lines, as CONFIG SET takes them.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Protected mode (`yes` unless a config file says otherwise, as in Redis): without a
    /// password, refuse clients that do not connect over loopback with Redis's -DENIED reply.
    /// Wins over a config file's `protected-mode` line.
    #[arg(long, value_name = "yes|no", value_parser = ["yes", "no"])]
    protected_mode: Option<String>,
    /// The listen backlog (Redis's `tcp-backlog`; the kernel caps it at somaxconn). A config
    /// file's `tcp-backlog` line wins over the default, this option over both.
    #[arg(long, value_name = "N")]
    tcp_backlog: Option<u32>,
    /// Cluster mode (Redis's `cluster-enabled`): serve as a one-node Redis Cluster that owns
    /// all 16384 slots (CLUSTER SLOTS, -CROSSSLOT), for cluster clients. A config file's
    /// `cluster-enabled` line wins over the default (`no`), this option over both.
    #[arg(long, value_name = "yes|no", value_parser = ["yes", "no"])]
    cluster_enabled: Option<String>,
    /// Speak RESP3 to clients before they send HELLO (a switch for test suites).
    #[arg(long)]
    resp3: bool,
    /// Worker threads for connections (0 = half the cores, at least 1, at most 4). Commands
    /// run one at a time under the keyspace lock either way; more threads only parallelize
    /// reading, parsing and writing, and leave less CPU to everything else on the machine.
    /// With one, connections run on tokio's current-thread scheduler, like Redis's one event
    /// loop.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Fold trimmed entries into an archive in DIR (default: ./echomq-archive) before trimming.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ARCHIVE_DIR_DEFAULT)]
    archive: Option<PathBuf>,
    /// Replicate the archive to s3://BUCKET/PREFIX (credentials from AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY). Needs --archive.
    #[arg(long, value_name = "S3_URL")]
    replicate: Option<String>,
    #[command(flatten)]
    s3: super::replica::ReplicaArgs,
    #[command(flatten)]
    persistence: super::persistence::PersistenceArgs,
}

/// Opens the archive in `dir`, creating the directory if needed.
fn open_archive(dir: &Path) -> Result<Arc<Archive>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the archive directory {}: {e}", dir.display()))?;
    let path = dir.join(ARCHIVE_FILE);
    Archive::open(&path)
        .map(Arc::new)
        .map_err(|e| format!("cannot open the archive {}: {e}", path.display()))
}

/// Runs the server until a signal stops it.
pub fn run(args: ServeArgs) -> Result<(), String> {
    /// Most worker threads chosen automatically: commands serialize on the keyspace lock.
    const AUTO_THREADS_MAX: usize = 4;
    let threads = match args.threads {
        0 => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cores / 2).clamp(1, AUTO_THREADS_MAX)
        }
        n => n,
    };
    // One thread: the current-thread scheduler, as Redis's one event loop; a task woken by its
    // socket runs on the thread that polled the socket, with no cross-thread queue or unpark.
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(threads);
        builder
    };
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let archive = args.archive.as_deref().map(open_archive).transpose()?;
    let replication = match (&args.replicate, &archive) {
        (None, _) => None,
        (Some(_), None) => return Err("--replicate needs --archive DIR".into()),
        (Some(url), Some(archive)) => Some(super::replica::start(url, &args.s3, archive)?),
    };
    let archive_replica = match (&args.replicate, &replication) {
        (Some(location), Some(handle)) => Some(ArchiveReplica {
            location: location.clone(),
            link: handle.link(),
        }),
        _ => None,
    };
    let config = ServerConfig {
        bind: args.bind.clone(),
        port: args.port,
        requirepass: args.requirepass.clone(),
        default_protocol: if args.resp3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        },
        archive: archive.clone(),
        archive_replica,
        tcp_backlog: match args.tcp_backlog {
            Some(n) => n,
            None => config_backlog(args.config.as_deref())?,
        },
        cluster_enabled: match &args.cluster_enabled {
            Some(mode) => mode == "yes",
            None => config_cluster_enabled(args.config.as_deref())?,
        },
        ..ServerConfig::default()
    };
    let mut server = Server::bind(config)
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", args.bind, args.port))?;
    let users_configured = match &args.config {
        Some(path) => apply_config_file(&server, path)?,
        None => false,
    };
    if let Some(mode) = &args.protected_mode {
        server
            .handle()
            .config_set("protected-mode", mode)
            .map_err(|e| format!("--protected-mode: {e}"))?;
    }
    args.persistence.apply(&server.handle())?;
    server
        .handle()
        .load_acl_file(users_configured)
        .map_err(|e| format!("Aborting startup because of ACL errors: {e}"))?;
    open_listeners(&mut server).await?;
    if let Some(archive) = &archive {
        // Not on stdout: its first line is the address, and callers may stop reading there.
        tracing::info!(path = %archive.path().display(), "archive open");
    }
    tracing::info!("ready to accept connections");
    let handle = server.handle();
    let handle_for_load = server.handle();
    tokio::spawn(async move {
        loop {
            let signal = wait_for_signal().await;
            tracing::warn!("Received {signal} scheduling shutdown...");
            let attempt = handle.clone();
            let mut shutting = tokio::task::spawn_blocking(move || attempt.shutdown_on_signal());
            // A second SIGINT while the final save runs: the operator insists (Redis's
            // Ctrl-C twice); exit now, with an error as the shutdown was not clean.
            let stopped = loop {
                tokio::select! {
                    done = &mut shutting => break done.unwrap_or(true),
                    again = wait_for_signal() => {
                        if again == "SIGINT" {
                            tracing::warn!("You insist... exiting now.");
                            std::process::exit(1);
                        }
                    }
                }
            };
            if stopped {
                break;
            }
        }
    });
    handle_for_load.prepare_persistence();
    let running = tokio::spawn(server.run());
    let persistence = server_handle_for_persistence(&handle_for_load);
    if let Err(e) = persistence.await {
        handle_for_load.shutdown();
        let _ = running.await;
        return Err(e);
    }
    let _ = running.await;
    if let (Some(handle), Some(archive)) = (replication, &archive) {
        super::replica::finish(handle, archive);
    }
    // An AOF that failed under `appendfsync always` stopped the server: exit 1, as Redis.
    match handle_for_load.fatal_error() {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Opens the TLS port and unix socket the settings name (`tls-port`, `tls-*`, `unixsocket`,
/// `unixsocketperm`), then prints one line per listener: the plain port first (as before), then
/// `ADDR (tls)` and `PATH (unix socket)`. With `port 0` and one of those, there is no plain port.
async fn open_listeners(server: &mut Server) -> Result<(), String> {
    server.open_listeners().await.map_err(|e| {
        tracing::error!("{e}");
        e
    })?;
    for line in server.listening() {
        println!("echomq {} listening on {line}", env!("CARGO_PKG_VERSION"));
    }
    Ok(())
}

/// Waits for SIGTERM or SIGINT (Ctrl-C) and names it as Redis's log does.
async fn wait_for_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => "SIGINT",
                    _ = term.recv() => "SIGTERM",
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}

/// The `tcp-backlog` a config file sets (read before binding: the listen call takes it), else
/// Redis's default.
fn config_backlog(path: Option<&Path>) -> Result<u32, String> {
    let default = echomq_protocol::server::TCP_BACKLOG_DEFAULT;
    let Some(path) = path else {
        return Ok(default);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut backlog = default;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let (name, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if name.eq_ignore_ascii_case("tcp-backlog") {
            let value = value.trim().trim_matches('"');
            backlog = value.parse().map_err(|_| {
                format!(
                    "{}:{}: tcp-backlog must be a number, not '{value}'",
                    path.display(),
                    n + 1
                )
            })?;
        }
    }
    Ok(backlog)
}

/// The `cluster-enabled` a config file sets (read before binding: it is fixed at start), else
/// `no`.
fn config_cluster_enabled(path: Option<&Path>) -> Result<bool, String> {
    let Some(path) = path else {
        return Ok(false);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut enabled = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let (name, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if name.eq_ignore_ascii_case("cluster-enabled") {
            enabled = match value.trim().trim_matches('"').to_ascii_lowercase().as_str() {
                "yes" => true,
                "no" => false,
                other => {
                    return Err(format!(
                        "{}:{}: cluster-enabled must be yes or no, not '{other}'",
                        path.display(),
                        n + 1
                    ));
                }
            };
        }
    }
    Ok(enabled)
}

/// Loads the AOF (if `appendonly yes`) off the runtime's threads while the server answers
/// `-LOADING`, then appends to it.
async fn server_handle_for_persistence(
    handle: &echomq_protocol::ServerHandle,
) -> Result<(), String> {
    let handle = handle.clone();
    tokio::task::spawn_blocking(move || handle.start_persistence())
        .await
        .map_err(|e| format!("loading failed: {e}"))?
        .map_err(|e| {
            // The error names the file (RDB or AOF) and what failed.
            tracing::error!("{e}");
            e.to_string()
        })
}

/// Applies the config file's lines; returns whether it declared users (`user` lines).
fn apply_config_file(server: &Server, path: &PathBuf) -> Result<bool, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let handle = server.handle();
    let mut users_configured = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if name.eq_ignore_ascii_case("user") {
            let words: Vec<&str> = line.split_whitespace().collect();
            handle
                .config_user(&words)
                .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
            users_configured = true;
            continue;
        }
        let value = value.trim().trim_matches('"');
        if name.eq_ignore_ascii_case("aclfile") {
            handle.set_aclfile(value);
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        match handle.config_set(name, value) {
            // Immutable settings (port, bind) come from the command line.
            Ok(()) | Err(SettingError::Immutable(_)) => {}
            Err(SettingError::Unknown(_)) => {
                return Err(format!("{}: unknown setting '{name}'", at()));
            }
            Err(e) => return Err(format!("{}: {e}", at())),
        }
    }
    Ok(users_configured)
}

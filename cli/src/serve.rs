//! `echomq serve [FILE] [--directive value …] [--resp3] [--threads N] [--archive [DIR]]
//! [--replicate s3://BUCKET/PREFIX [--s3-endpoint URL]] [--clock system|manual]`
//!
//! Reads its configuration as `redis-server` does (see [`crate::config`]): a config file
//! (Redis's `redis.conf`; `--config FILE` names it too), then `--directive value …` options
//! that act as more lines after it (`--port 7000 --save ""`). Binds (loopback by default; every
//! `bind` address), prints `echomq <version> listening on <address>` on stdout first, and
//! serves until SIGINT or SIGTERM (after the final save when `save` points are set — Redis's
//! defaults unless configured otherwise; if that save fails it keeps serving, as Redis does,
//! until the next signal or `SHUTDOWN NOSAVE`). `daemonize`, `pidfile`, `logfile`, `loglevel`
//! and `supervised systemd` run it as a service ([`crate::service`]).
//!
//! `--archive DIR` opens (or creates) `DIR/archive.redb`; `--archive` alone uses
//! [`ARCHIVE_DIR_DEFAULT`] in the working directory. Trims of streams matching the
//! `archive-streams` glob (default `*`, database 0) then fold into it first, and EMQ.XRANGE /
//! EMQ.XREVRANGE read archive and live stream as one.
//!
//! `--clock manual` serves on a manual clock (starting at the wall time) that only
//! `EMQ.CLOCK ADVANCE|SET` moves: for test suites in any language, as the test double's clock.
//!
//! `--replicate s3://BUCKET/PREFIX` (needs `--archive`) replicates the archive: every fold the
//! server commits wakes the replicator, and INFO's `archive` section reports its
//! `archive_replica_*` figures. At shutdown the server waits (bounded) for the last folds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, CommandFactory, Parser};
use echomq_archive::Archive;
use echomq_engine::{Clock, ManualClock, SystemClock};
use echomq_protocol::config_file::{self, Fatal};
use echomq_protocol::resp::Protocol;
use echomq_protocol::server::ArchiveReplica;
use echomq_protocol::{Server, ServerConfig};

use crate::config::startup::Startup;
use crate::service::{PidFile, Supervised};

/// The archive directory `--archive` uses without a value (relative to the working directory,
/// like Redis's `dir ./`).
pub const ARCHIVE_DIR_DEFAULT: &str = "echomq-archive";
/// The archive's file name inside its directory.
pub const ARCHIVE_FILE: &str = "archive.redb";

/// Arguments of `echomq serve`: a config file, config directives, echomq's own flags.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// `[FILE] [--DIRECTIVE VALUE …]`: a Redis config file, then any directive of it as an
    /// option (`--port 7000 --save ""`), plus echomq's flags (`echomq serve --help` lists
    /// them).
    #[arg(
        allow_hyphen_values = true,
        trailing_var_arg = true,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

/// echomq's own flags of `echomq serve` (everything else is a config directive).
#[derive(Debug, Parser)]
#[command(
    name = "echomq serve",
    about = "Run the Redis-protocol server (RESP2/RESP3) on the embedded engine.",
    override_usage = "echomq serve [FILE] [--DIRECTIVE VALUE ...] [OPTIONS]",
    after_help = "Any directive of Redis's redis.conf may follow as an option, as redis-server takes \
                  them: --port 7000 --bind 127.0.0.1 --save \"\" --appendonly yes --dir DIR \
                  --requirepass PASS --protected-mode no --loglevel warning --logfile FILE \
                  --daemonize yes --pidfile FILE --supervised systemd. --config FILE names the \
                  config file. See docs/operations.md."
)]
struct Flags {
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
    /// The clock every time rule reads (`*` ids, TTLs, BLOCK timeouts, idle times): `system`,
    /// or `manual`, which starts at the wall time and moves only when a client sends
    /// `EMQ.CLOCK ADVANCE ms` or `EMQ.CLOCK SET ms` (for test suites; never in production).
    #[arg(long, value_name = "system|manual", value_parser = ["system", "manual"], default_value = "system")]
    clock: String,
    #[command(flatten)]
    s3: super::replica::ReplicaArgs,
}

/// Prints Redis's fatal configuration message on stderr (and in the log) and exits 1.
fn fatal(e: &Fatal) -> ! {
    eprintln!("{e}");
    if let Fatal::Other(text) = e {
        tracing::warn!("{text}");
    }
    std::process::exit(1);
}

/// Reads the configuration; sets up the log; daemonizes when asked.
fn configure(args: ServeArgs) -> Result<Option<(Flags, Startup, Option<PathBuf>)>, String> {
    if args.args.iter().any(|a| a == "--help" || a == "-h") {
        let _ = Flags::command().print_help();
        return Ok(None);
    }
    let split = crate::config::args::split(&args.args)?;
    let flags =
        Flags::try_parse_from(std::iter::once("echomq serve".to_string()).chain(split.echomq))
            .map_err(|e| e.to_string())?;
    let options = config_file::command_line_options(&split.directives);
    // As redis-server: the config file's path is made absolute first, then each `dir` line
    // changes directory as it is read, so `include`, `logfile`, `pidfile` and `--archive`
    // are relative to the last `dir`.
    let started_in = std::env::current_dir().ok();
    let file = split
        .file
        .map(|file| std::path::absolute(&file).unwrap_or(file));
    let lines =
        config_file::load_changing_dir(file.as_deref(), &options).unwrap_or_else(|e| fatal(&e));
    let startup = crate::config::startup::sort(lines).unwrap_or_else(|e| fatal(&e));
    if startup.daemonize && !crate::service::is_daemon() {
        crate::service::daemonize(started_in.as_deref())?;
        return Ok(None);
    }
    let target = if startup.logfile.is_empty() {
        crate::logging::Target::Stdout
    } else {
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&startup.logfile)
        {
            // Opened here to refuse a path that cannot be, as Redis does at start; each line
            // opens it again.
            Ok(file) => crate::logging::Target::File(startup.logfile.clone().into(), file),
            Err(e) => fatal(&Fatal::Config {
                at: None,
                reason: format!("Can't open the log file: {}", os_error_text(&e)),
            }),
        }
    };
    crate::logging::init_with(target, &startup.loglevel);
    if !startup.unclaimed.is_empty() {
        for line in &startup.unclaimed {
            tracing::warn!(">>> '{line}'");
        }
        tracing::warn!(
            "Module Configuration detected without loadmodule directive or no ApplyConfig call: aborting"
        );
        std::process::exit(1);
    }
    Ok(Some((flags, startup, file)))
}

/// The text C's `strerror` gives for `e`.
fn os_error_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
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
    let Some((args, startup, file)) = configure(args)? else {
        return Ok(());
    };
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
    runtime.block_on(serve(args, startup, file))
}

async fn serve(args: Flags, startup: Startup, file: Option<PathBuf>) -> Result<(), String> {
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
    let bind = startup.bind.join(" ");
    let config = ServerConfig {
        bind: bind.clone(),
        port: startup.port,
        default_protocol: if args.resp3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        },
        databases: startup.databases,
        archive: archive.clone(),
        archive_replica,
        tcp_backlog: startup.tcp_backlog,
        cluster_enabled: startup.cluster_enabled,
        dir_is_cwd: true,
        ..ServerConfig::default()
    };
    let clock: Arc<dyn Clock> = if args.clock == "manual" {
        Arc::new(ManualClock::new(SystemClock.now_ms()))
    } else {
        Arc::new(SystemClock)
    };
    let mut server = Server::bind_with_clock(config, clock)
        .await
        .map_err(|e| format!("cannot listen on {bind} port {}: {e}", startup.port))?;
    if let Some(file) = &file {
        server.handle().set_config_file(file);
    }
    let users_configured =
        crate::config::apply::apply(&server.handle(), &startup).unwrap_or_else(|e| fatal(&e));
    server
        .handle()
        .load_acl_file(users_configured)
        .map_err(|e| format!("Aborting startup because of ACL errors: {e}"))?;
    open_listeners(&mut server).await?;
    if !startup.no_effect.is_empty() {
        tracing::info!(
            "Configuration accepted, no effect in echomq: {}",
            startup.no_effect.join(", ")
        );
    }
    log_persistence(&server.handle());
    if let Some(archive) = &archive {
        tracing::info!(path = %archive.path().display(), "archive open");
    }
    if args.clock == "manual" {
        tracing::warn!("serving on a manual clock: time moves only with EMQ.CLOCK");
    }
    let _pidfile = if !startup.pidfile.is_empty() {
        PidFile::create(Path::new(&startup.pidfile))
    } else if startup.daemonize {
        PidFile::create(Path::new(crate::service::PIDFILE_DAEMON_DEFAULT))
    } else {
        None
    };
    let supervised = Supervised::from_directive(&startup.supervised);
    let handle = server.handle();
    let handle_for_load = server.handle();
    tokio::spawn(async move {
        loop {
            let signal = wait_for_signal().await;
            tracing::warn!("Received {signal} scheduling shutdown...");
            notify_stopping(supervised);
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
    tracing::info!("Ready to accept connections tcp");
    supervised.notify("STATUS=Ready to accept connections\nREADY=1\n");
    let _ = running.await;
    notify_stopping(supervised);
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
    // Written without `println!`, which panics on a closed stdout: a caller that read the
    // first address (what scripts and tests wait for) may close the pipe before the rest.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for line in server.listening() {
        let _ = writeln!(
            out,
            "echomq {} listening on {line}",
            env!("CARGO_PKG_VERSION")
        );
    }
    let _ = out.flush();
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

/// Tells systemd the server stops (once, from the signal or when serving ends).
fn notify_stopping(supervised: Supervised) {
    static SENT: AtomicBool = AtomicBool::new(false);
    if !SENT.swap(true, Ordering::SeqCst) {
        supervised.notify("STOPPING=1\n");
    }
}

/// Says at start which persistence is on: without it, a restart loses the data.
fn log_persistence(handle: &echomq_protocol::ServerHandle) {
    let save = handle.config_get("save").unwrap_or_default();
    let aof = handle.config_get("appendonly").as_deref() == Some("yes");
    let dir = handle.config_get("dir").unwrap_or_default();
    match (save.is_empty(), aof) {
        (true, false) => tracing::warn!(
            "Persistence is off (no save points, appendonly no): data is lost when the server stops"
        ),
        (false, false) => tracing::info!(
            "Persistence: RDB snapshots in {dir} at save points \"{save}\" (seconds changes) and on shutdown"
        ),
        (true, true) => tracing::info!("Persistence: AOF in {dir} (no RDB save points)"),
        (false, true) => tracing::info!(
            "Persistence: AOF in {dir}, and RDB snapshots at save points \"{save}\" (seconds changes)"
        ),
    }
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

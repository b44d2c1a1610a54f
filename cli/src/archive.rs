//! `echomq archive status|restore|verify`: the local archive's replication state, rebuilding
//! an archive from its replica, and checking a replica end to end.
//!
//! - `status --archive DIR [--replica s3://B/P]`: what the archive holds, the last commit it
//!   replicated, a pending commit, a fence; with `--replica`, the bucket's head and the lag.
//! - `restore --from s3://B/P --archive DIR`: walks and checks the chain, fetches every
//!   segment (progress bar on a terminal), installs the pages into a new archive. The archive
//!   then serves merge-reads; `serve --replicate` on it takes the chain over.
//! - `verify --from s3://B/P`: the same walk without keeping anything; exit status 1 on the
//!   first damaged object, named in the message.
//!
//! The server holds its archive file open, so `status` and `restore` need it stopped.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use echomq_archive::Archive;
use echomq_archive::replica::restore::{self, ChainSummary, Progress};
use echomq_archive::replica::{load_state, restore_into};
use indicatif::{ProgressBar, ProgressStyle};

use super::replica::{ReplicaArgs, parse_location};
use super::serve::ARCHIVE_FILE;

/// `echomq archive ...`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    #[command(subcommand)]
    command: ArchiveCommand,
}

#[derive(Debug, Subcommand)]
enum ArchiveCommand {
    /// Show the archive's contents and replication state (and the bucket's head).
    Status {
        /// The archive directory.
        #[arg(long, value_name = "DIR")]
        archive: PathBuf,
        /// Also read the replica's head: s3://BUCKET/PREFIX.
        #[arg(long, value_name = "S3_URL")]
        replica: Option<String>,
        #[command(flatten)]
        s3: ReplicaArgs,
    },
    /// Rebuild an archive in a new directory from its replica.
    Restore {
        /// The replica: s3://BUCKET/PREFIX.
        #[arg(long, value_name = "S3_URL")]
        from: String,
        /// The archive directory to create (must not hold an archive yet).
        #[arg(long, value_name = "DIR")]
        archive: PathBuf,
        #[command(flatten)]
        s3: ReplicaArgs,
    },
    /// Check a replica: every commit, the hash chain, every segment.
    Verify {
        /// The replica: s3://BUCKET/PREFIX.
        #[arg(long, value_name = "S3_URL")]
        from: String,
        #[command(flatten)]
        s3: ReplicaArgs,
    },
}

/// Runs the subcommand.
pub fn run(args: ArchiveArgs) -> Result<(), String> {
    match args.command {
        ArchiveCommand::Status {
            archive,
            replica,
            s3,
        } => status(&archive, replica.as_deref(), &s3),
        ArchiveCommand::Restore { from, archive, s3 } => restore_cmd(&from, &archive, &s3),
        ArchiveCommand::Verify { from, s3 } => verify(&from, &s3),
    }
}

fn open_existing(dir: &Path) -> Result<Archive, String> {
    let path = dir.join(ARCHIVE_FILE);
    if !path.exists() {
        return Err(format!("no archive at {}", path.display()));
    }
    Archive::open(&path).map_err(|e| format!("cannot open the archive {}: {e}", path.display()))
}

fn status(dir: &Path, replica: Option<&str>, s3: &ReplicaArgs) -> Result<(), String> {
    let archive = open_existing(dir)?;
    let stats = archive.stats().map_err(|e| e.to_string())?;
    println!("archive: {}", archive.path().display());
    println!(
        "streams: {}  records: {}  pages: {}  file_bytes: {}",
        stats.streams, stats.records, stats.archive_pages, stats.file_bytes
    );
    for (stream, state) in archive.streams().map_err(|e| e.to_string())? {
        let w = state.watermark.map_or("-".into(), |w| w.to_string());
        println!(
            "  {}  W={w}  records={}",
            String::from_utf8_lossy(&stream),
            state.records
        );
    }
    let state = load_state(&archive).map_err(|e| e.to_string())?;
    let local_version = match &state {
        None => {
            println!("replication: never replicated or restored");
            None
        }
        Some(state) => {
            let head = state.head.map_or("none".into(), |h| {
                format!(
                    "version {} (epoch {}, last page {})",
                    h.version,
                    h.epoch,
                    h.last_page.map_or("-".into(), |p| format!("{p:#x}"))
                )
            });
            println!("replication: writer {} head {head}", state.writer);
            match state.epoch {
                Some(e) => println!("  owns the chain at epoch {e}"),
                None => println!("  restored copy: `serve --replicate` takes the chain over"),
            }
            if state.pending.is_some() {
                println!("  a commit is pending: it is settled on the next replication round");
            }
            if let Some(v) = state.fenced {
                println!("  FENCED at version {v}: another writer owns the chain");
            }
            state.head.map(|h| h.version)
        }
    };
    if let Some(url) = replica {
        let location = parse_location(url)?;
        let store = s3.store(&location)?;
        let (chain, summary) = restore::read_chain(&store, &location.prefix, &mut |_| {})
            .map_err(|e| e.to_string())?;
        print_summary(&location.to_string(), &summary);
        let orphans = restore::orphan_segments(&store, &location.prefix, &chain)
            .map_err(|e| e.to_string())?;
        println!(
            "orphan segments (uploaded, never committed; safe to delete): {} ({} bytes)",
            orphans.len(),
            orphans.iter().map(|m| m.len).sum::<u64>()
        );
        let remote = summary.head.map_or(0, |h| h.version.0);
        let local = local_version.map_or(0, |v| v.0);
        println!("lag: {} commits", remote.saturating_sub(local));
    }
    Ok(())
}

fn print_summary(name: &str, summary: &ChainSummary) {
    match (&summary.head, &summary.head_writer) {
        (Some(head), Some((writer, epoch))) => println!(
            "replica {name}: {} commits, head version {} by writer {writer} epoch {epoch}; {} segments, {} bytes, {} pages",
            summary.commits, head.version, summary.segments, summary.segment_bytes, summary.pages
        ),
        _ => println!("replica {name}: empty"),
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
fn progress_bar() -> (ProgressBar, impl FnMut(Progress)) {
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(Duration::from_millis(200));
    let handle = bar.clone();
    let update = move |p: Progress| match p {
        Progress::Commits { read } => handle.set_message(format!("reading commits: {read}")),
        Progress::Fetching {
            commits,
            bytes_total,
        } => {
            handle.set_length(bytes_total);
            handle.set_position(0);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
            ) {
                handle.set_style(style.progress_chars("=> "));
            }
            handle.set_message(format!("{commits} commits, fetching segments"));
        }
        Progress::Fetched { bytes } => handle.set_position(bytes),
    };
    (bar, update)
}

fn restore_cmd(from: &str, dir: &Path, s3: &ReplicaArgs) -> Result<(), String> {
    let location = parse_location(from)?;
    let store = s3.store(&location)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the archive directory {}: {e}", dir.display()))?;
    let path = dir.join(ARCHIVE_FILE);
    if path.exists() {
        return Err(format!(
            "{} already exists: restore into a new, empty directory",
            path.display()
        ));
    }
    let archive = Archive::open(&path)
        .map_err(|e| format!("cannot create the archive {}: {e}", path.display()))?;
    let (bar, mut update) = progress_bar();
    let result = restore_into(&archive, &store, &location.prefix, &mut update);
    bar.finish_and_clear();
    match result {
        Ok(summary) => {
            print_summary(&location.to_string(), &summary);
            println!("restored into {}", path.display());
            Ok(())
        }
        Err(e) => {
            drop(archive);
            // Nothing from the bad commit onwards was installed; remove the partial file so a
            // retry starts clean.
            let _ = std::fs::remove_file(&path);
            Err(format!("restore failed: {e}"))
        }
    }
}

fn verify(from: &str, s3: &ReplicaArgs) -> Result<(), String> {
    let location = parse_location(from)?;
    let store = s3.store(&location)?;
    let (bar, mut update) = progress_bar();
    let result = restore::verify(&store, &location.prefix, &mut update);
    bar.finish_and_clear();
    let summary = result.map_err(|e| format!("verify failed: {e}"))?;
    print_summary(&location.to_string(), &summary);
    println!("ok");
    Ok(())
}

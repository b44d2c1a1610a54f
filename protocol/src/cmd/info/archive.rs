//! The `archive` section, echomq's own: whether an archive is configured, its policy, file,
//! figures, and its replica.

use super::{Lines, human, one_line};
use crate::cmd::Ctx;
use crate::state::archive::ArchiveReplica;

/// The `archive` section: whether an archive is configured, its policy, file and figures.
pub(super) fn archive(ctx: &mut Ctx<'_>, lines: &mut Lines) {
    let state = ctx.state;
    let pattern = state.settings().archive_streams.clone();
    let line = &mut |name: &str, value: &dyn std::fmt::Display| lines.field(name, value);
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
    line("archive_deferred_trims", &archive.deferred_trims());
    match archive.failure() {
        None => line("archive_status", &"ok"),
        Some(failure) => {
            line("archive_status", &"failed");
            line("archive_failure", &one_line(&failure.error));
            line("archive_failed_seconds", &failure.since.elapsed().as_secs());
            line("archive_reopen_attempts", &failure.attempts);
            if let Some(last) = &failure.last_attempt_error {
                line("archive_reopen_last_error", &one_line(last));
            }
        }
    }
    line("archive_reopens", &archive.reopens());
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

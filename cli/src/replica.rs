//! Reaching a replica from the command line: `s3://bucket/prefix` plus `--s3-endpoint`, with
//! credentials from the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_SESSION_TOKEN`, `AWS_REGION`; endpoint also from `AWS_ENDPOINT_URL_S3` or
//! `AWS_ENDPOINT_URL`).

use clap::Args;
use echomq_archive::replica::{Location, S3Config, S3Store};

/// Where a replica lives.
#[derive(Debug, Clone, Args)]
pub struct ReplicaArgs {
    /// The S3 endpoint URL (e.g. https://t3.storage.dev for Tigris, http://127.0.0.1:PORT for a
    /// local server); default from AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS.
    #[arg(long = "s3-endpoint", value_name = "URL")]
    pub s3_endpoint: Option<String>,
}

impl ReplicaArgs {
    /// The store for `location`.
    pub fn store(&self, location: &Location) -> Result<S3Store, String> {
        let config = S3Config::from_env(&location.bucket, self.s3_endpoint.as_deref())
            .map_err(|e| e.to_string())?;
        S3Store::new(config).map_err(|e| e.to_string())
    }
}

/// Parses `s3://bucket/prefix`.
pub fn parse_location(text: &str) -> Result<Location, String> {
    text.parse::<Location>().map_err(|e| e.to_string())
}

/// How often the replicator under `serve` looks for folds unasked. Only a safety net: the
/// server notifies it after every fold it commits.
const FALLBACK_POLL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);

/// How long `serve` waits at shutdown for the last folds to reach the bucket.
const FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Opens the replicator for `archive` on `url` (taking the chain over when the archive was
/// restored) and starts its thread.
pub fn start(
    url: &str,
    s3: &ReplicaArgs,
    archive: &std::sync::Arc<echomq_archive::Archive>,
) -> Result<echomq_archive::replica::ReplicatorHandle, String> {
    use echomq_archive::replica::{Replicator, WriterOptions};
    let location = parse_location(url)?;
    let store = s3.store(&location)?;
    let replicator = Replicator::open(
        std::sync::Arc::clone(archive),
        store,
        &location.prefix,
        WriterOptions::default(),
    )
    .map_err(|e| format!("cannot replicate to {location}: {e}"))?;
    tracing::info!(
        replica = %location,
        head = ?replicator.head().map(|h| h.version.0),
        "replicating the archive"
    );
    Ok(replicator.spawn_polling(FALLBACK_POLL_INTERVAL))
}

/// Waits (bounded) until everything folded so far is replicated, then stops the thread.
pub fn finish(
    handle: echomq_archive::replica::ReplicatorHandle,
    archive: &echomq_archive::Archive,
) {
    let last = archive
        .stats()
        .ok()
        .filter(|s| s.archive_pages > 0)
        .map(|s| echomq_archive::ARCHIVE_BASE + s.archive_pages - 1);
    if let Some(last) = last {
        let status = handle.wait_for_page(last, FLUSH_TIMEOUT);
        // A fenced replicator is reported below: no later run of this node sends them.
        if status.head.and_then(|h| h.last_page) < Some(last) && !status.fenced {
            tracing::warn!(
                error = status.last_error.as_deref().unwrap_or("timed out"),
                "the last folds are not replicated yet; the next `serve --replicate` sends them"
            );
        }
    }
    let status = handle.stop();
    if status.fenced {
        tracing::error!(
            error = status.last_error.as_deref().unwrap_or(""),
            "replication stopped: fenced"
        );
    }
}

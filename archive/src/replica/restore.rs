//! Reading a replica back: walk `commits/1, 2, ...` until one is missing, check every link of
//! the chain, fetch and check every segment, and hand the pages to a sink (the local archive)
//! in commit order. [`verify`] is the same walk with a sink that keeps nothing.
//!
//! Checks, each failing with an error that names the object: the commit decodes and its hash
//! matches; its version is its key's; `prev_hash` is the previous commit's hash; epochs never
//! go down; page ranges follow each other without gap or overlap; every stream's `W` strictly
//! increases; each segment exists, has the length and SHA-256 its commit records, and holds
//! strictly increasing pages inside its range. Nothing is handed to the sink from a commit
//! whose segments did not all pass.

use std::time::Duration;

use super::commit::{ChainState, Commit, EncodedCommit, commit_key};
use super::error::{ReplicaError, Result, StoreError};
use super::segment;
use super::state::ReplicaHead;
use super::store::ObjectStore;
use super::types::{Page, Version};

/// Bytes per ranged GET while fetching a segment: progress moves in steps this size and a
/// failed request repeats at most this much.
pub const FETCH_CHUNK_BYTES: u64 = 4 << 20;
/// Tries per read before the walk gives up.
const READ_ATTEMPTS_MAX: u32 = 5;
/// First pause between read retries (doubles each time).
const READ_BACKOFF: Duration = Duration::from_millis(200);

/// Where the walk is, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Commit objects read so far (the head is not known before the walk ends).
    Commits { read: u64 },
    /// Chain checked: segment bytes to fetch in total.
    Fetching { commits: u64, bytes_total: u64 },
    /// Segment bytes fetched so far.
    Fetched { bytes: u64 },
}

/// What a walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainSummary {
    /// The last commit, `None` for an empty prefix.
    pub head: Option<ReplicaHead>,
    /// Commit objects in the chain.
    pub commits: u64,
    /// Segments named.
    pub segments: u64,
    /// Their bytes.
    pub segment_bytes: u64,
    /// Pages in them.
    pub pages: u64,
    /// What the chain established: each stream's number and final `W`, the last page.
    pub chain: ChainState,
    /// The writer and epoch of the head.
    pub head_writer: Option<(super::types::WriterId, super::types::Epoch)>,
}

/// Where restored pages go.
pub trait RestoreSink {
    /// Installs one commit's pages (in page order). Called once per commit, in version order.
    fn apply(&mut self, commit: &Commit, pages: Vec<Page>) -> std::result::Result<(), String>;
}

/// A sink that only counts (verification).
#[derive(Debug, Default)]
pub struct DiscardSink {
    /// Pages seen.
    pub pages: u64,
}

impl RestoreSink for DiscardSink {
    fn apply(&mut self, _: &Commit, pages: Vec<Page>) -> std::result::Result<(), String> {
        self.pages += pages.len() as u64;
        Ok(())
    }
}

fn with_retries<T>(mut op: impl FnMut() -> std::result::Result<T, StoreError>) -> Result<T> {
    let mut pause = READ_BACKOFF;
    let mut attempt = 1;
    loop {
        match op() {
            Ok(v) => return Ok(v),
            Err(e) if e.is_transient() && attempt < READ_ATTEMPTS_MAX => {
                std::thread::sleep(pause);
                pause *= 2;
                attempt += 1;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reads and checks the whole chain of commits under `prefix` (no segments).
pub fn read_chain(
    store: &dyn ObjectStore,
    prefix: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<EncodedCommit>, ChainSummary)> {
    let prefix = prefix.trim_matches('/');
    let mut chain: Vec<EncodedCommit> = Vec::new();
    let mut summary = ChainSummary::default();
    let mut version = Version(1);
    loop {
        let key = commit_key(prefix, version);
        let Some(bytes) = with_retries(|| store.get(&key, true))? else {
            break;
        };
        let encoded = Commit::decode(&bytes).map_err(|reason| ReplicaError::CorruptCommit {
            key: key.clone(),
            reason,
        })?;
        summary
            .chain
            .advance(&encoded.commit, encoded.hash)
            .map_err(|reason| ReplicaError::BrokenChain {
                key: key.clone(),
                reason,
            })?;
        let c = &encoded.commit;
        for s in &c.segments {
            summary.segments += 1;
            // Saturating: the lengths come from the bucket; a lie is caught when the segment
            // is fetched, not by overflowing here.
            summary.segment_bytes = summary.segment_bytes.saturating_add(s.len);
            summary.pages = summary.pages.saturating_add(u64::from(s.page_count));
        }
        summary.head = Some(ReplicaHead {
            version: c.version,
            hash: encoded.hash,
            epoch: c.epoch,
            last_page: summary.chain.last_page,
        });
        summary.head_writer = Some((c.writer, c.epoch));
        summary.commits += 1;
        progress(Progress::Commits {
            read: summary.commits,
        });
        chain.push(encoded);
        version = version.next();
    }
    Ok((chain, summary))
}

/// Fetches one segment in ranged chunks and checks it against its reference.
fn fetch_segment(
    store: &dyn ObjectStore,
    commit_key: &str,
    reference: &super::commit::SegmentRef,
    fetched: &mut u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<Page>> {
    let mut bytes = Vec::with_capacity(usize::try_from(reference.len).unwrap_or(0).min(64 << 20));
    let mut at = 0u64;
    loop {
        let end = at.saturating_add(FETCH_CHUNK_BYTES).min(reference.len);
        let chunk = with_retries(|| store.get_range(&reference.key, at..end.max(at)))?;
        let Some(chunk) = chunk else {
            return Err(ReplicaError::MissingSegment {
                key: reference.key.clone(),
                commit: commit_key.to_owned(),
            });
        };
        if chunk.len() as u64 != end - at {
            // Shorter (truncated object) or longer (a store ignoring the range).
            let object_len = with_retries(|| store.head(&reference.key, false))?.map(|m| m.len);
            return Err(ReplicaError::CorruptSegment {
                key: reference.key.clone(),
                commit: commit_key.to_owned(),
                reason: format!(
                    "object is {} bytes, the commit says {}",
                    object_len.map_or("?".into(), |l| l.to_string()),
                    reference.len
                ),
            });
        }
        bytes.extend_from_slice(&chunk);
        *fetched += chunk.len() as u64;
        progress(Progress::Fetched { bytes: *fetched });
        at = end;
        if at >= reference.len {
            break;
        }
    }
    // A segment longer than its commit says is damaged too.
    if let Some(meta) = with_retries(|| store.head(&reference.key, false))?
        && meta.len != reference.len
    {
        return Err(ReplicaError::CorruptSegment {
            key: reference.key.clone(),
            commit: commit_key.to_owned(),
            reason: format!(
                "object is {} bytes, the commit says {}",
                meta.len, reference.len
            ),
        });
    }
    segment::decode(reference, &bytes).map_err(|reason| ReplicaError::CorruptSegment {
        key: reference.key.clone(),
        commit: commit_key.to_owned(),
        reason,
    })
}

/// Restores everything under `prefix` into `sink`.
pub fn restore(
    store: &dyn ObjectStore,
    prefix: &str,
    sink: &mut dyn RestoreSink,
    progress: &mut dyn FnMut(Progress),
) -> Result<ChainSummary> {
    let prefix = prefix.trim_matches('/');
    let (chain, summary) = read_chain(store, prefix, progress)?;
    progress(Progress::Fetching {
        commits: summary.commits,
        bytes_total: summary.segment_bytes,
    });
    let mut fetched = 0u64;
    for encoded in &chain {
        let c = &encoded.commit;
        let key = commit_key(prefix, c.version);
        let mut pages = Vec::new();
        for reference in &c.segments {
            pages.extend(fetch_segment(
                store,
                &key,
                reference,
                &mut fetched,
                progress,
            )?);
        }
        sink.apply(c, pages).map_err(ReplicaError::Sink)?;
    }
    Ok(summary)
}

/// Checks the whole replica (chain and every segment) without keeping anything.
pub fn verify(
    store: &dyn ObjectStore,
    prefix: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<ChainSummary> {
    restore(store, prefix, &mut DiscardSink::default(), progress)
}

/// Keys listed per request when scanning segments.
const LIST_PAGE_KEYS: usize = 1000;

/// Segment objects under `prefix` that no commit of `chain` names: uploads of rounds that
/// never committed (a crash, a fenced writer). Garbage, safe to delete; nothing else is.
pub fn orphan_segments(
    store: &dyn ObjectStore,
    prefix: &str,
    chain: &[EncodedCommit],
) -> Result<Vec<super::store::ObjectMeta>> {
    let prefix = prefix.trim_matches('/');
    let named: std::collections::HashSet<&str> = chain
        .iter()
        .flat_map(|c| c.commit.segments.iter().map(|s| s.key.as_str()))
        .collect();
    let segments = if prefix.is_empty() {
        "segments/".to_owned()
    } else {
        format!("{prefix}/segments/")
    };
    let mut orphans = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = with_retries(|| store.list(&segments, after.as_deref(), LIST_PAGE_KEYS))?;
        let Some(last) = page.last() else { break };
        after = Some(last.key.clone());
        let full = page.len() == LIST_PAGE_KEYS;
        orphans.extend(page.into_iter().filter(|m| !named.contains(m.key.as_str())));
        if !full {
            break;
        }
    }
    Ok(orphans)
}

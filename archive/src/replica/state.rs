//! The writer's local replication state: who it is, the last commit it knows is in the bucket,
//! and the commit it is sending. Saved as one value, so "pending" and "replicated" change in
//! one durable write (in the archive: one redb transaction).
//!
//! Encoding (big-endian, format 1):
//! ```text
//! "EMQR" | format u8 = 1 | writer [16] | owns u8 [epoch u64]
//! | has_head u8 [ version u64 | hash [32] | epoch u64 | has_last u8 [last_page u64] ]
//! | has_pending u8 [ len u32 | commit bytes ] | has_fenced u8 [ version u64 ]
//! ```

use parking_lot::Mutex;
use std::sync::Arc;

use super::codec::Reader;
use super::error::{ReplicaError, Result};
use super::types::{CommitHash, Epoch, Version, WriterId};

const STATE_MAGIC: &[u8; 4] = b"EMQR";
const STATE_FORMAT: u8 = 1;

/// The newest commit known to be in the bucket (and whose pages the local archive has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaHead {
    /// Its version.
    pub version: Version,
    /// Its hash (the next commit's `prev_hash`).
    pub hash: CommitHash,
    /// Its epoch.
    pub epoch: Epoch,
    /// The last page any commit so far covered; the next commit starts right after it.
    pub last_page: Option<u64>,
}

/// Everything a writer persists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalState {
    /// This node's writer id.
    pub writer: WriterId,
    /// The epoch this node writes in; `None` when it does not own the chain (after a
    /// restore): it must take over before writing.
    pub epoch: Option<Epoch>,
    /// The last commit known to be in the bucket.
    pub head: Option<ReplicaHead>,
    /// The encoded commit being sent; resolved before anything else on the next attempt.
    pub pending: Option<Vec<u8>>,
    /// Set when another writer took a version this writer tried: it writes nothing more until
    /// restored and taken over.
    pub fenced: Option<Version>,
}

impl LocalState {
    /// A new writer that has never replicated.
    pub fn fresh() -> LocalState {
        LocalState {
            writer: WriterId::generate(),
            epoch: Some(Epoch(1)),
            head: None,
            pending: None,
            fenced: None,
        }
    }

    /// Encodes for storage.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96 + self.pending.as_ref().map_or(0, Vec::len));
        out.extend_from_slice(STATE_MAGIC);
        out.push(STATE_FORMAT);
        out.extend_from_slice(&self.writer.0);
        match self.epoch {
            Some(e) => {
                out.push(1);
                out.extend_from_slice(&e.0.to_be_bytes());
            }
            None => out.push(0),
        }
        match &self.head {
            Some(h) => {
                out.push(1);
                out.extend_from_slice(&h.version.0.to_be_bytes());
                out.extend_from_slice(&h.hash.0);
                out.extend_from_slice(&h.epoch.0.to_be_bytes());
                match h.last_page {
                    Some(p) => {
                        out.push(1);
                        out.extend_from_slice(&p.to_be_bytes());
                    }
                    None => out.push(0),
                }
            }
            None => out.push(0),
        }
        match &self.pending {
            Some(p) => {
                out.push(1);
                out.extend_from_slice(&(p.len() as u32).to_be_bytes());
                out.extend_from_slice(p);
            }
            None => out.push(0),
        }
        match self.fenced {
            Some(v) => {
                out.push(1);
                out.extend_from_slice(&v.0.to_be_bytes());
            }
            None => out.push(0),
        }
        out
    }

    /// Decodes what [`LocalState::encode`] wrote.
    pub fn decode(bytes: &[u8]) -> Result<LocalState> {
        Self::decode_inner(bytes).map_err(|e| {
            ReplicaError::LocalState(format!(
                "the stored replication state is corrupt ({e}): restore the archive from the bucket"
            ))
        })
    }

    fn decode_inner(bytes: &[u8]) -> std::result::Result<LocalState, String> {
        let mut r = Reader::new(bytes);
        if r.take(4, "magic")? != STATE_MAGIC || r.u8("format")? != STATE_FORMAT {
            return Err("unknown magic or format".into());
        }
        let writer = WriterId(r.array("writer")?);
        let flag = |r: &mut Reader<'_>, what: &str| match r.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(format!("{what} flag {other}")),
        };
        let epoch = if flag(&mut r, "epoch")? {
            Some(Epoch(r.u64("epoch")?))
        } else {
            None
        };
        let head = if flag(&mut r, "head")? {
            let version = Version(r.u64("head version")?);
            let hash = CommitHash(r.array("head hash")?);
            let epoch = Epoch(r.u64("head epoch")?);
            let last_page = if flag(&mut r, "last page")? {
                Some(r.u64("last page")?)
            } else {
                None
            };
            Some(ReplicaHead {
                version,
                hash,
                epoch,
                last_page,
            })
        } else {
            None
        };
        let pending = if flag(&mut r, "pending")? {
            let len = r.u32("pending length")? as usize;
            Some(r.take(len, "pending commit")?.to_vec())
        } else {
            None
        };
        let fenced = if flag(&mut r, "fenced")? {
            Some(Version(r.u64("fenced version")?))
        } else {
            None
        };
        r.end("the state")?;
        Ok(LocalState {
            writer,
            epoch,
            head,
            pending,
            fenced,
        })
    }
}

/// Where a writer keeps its [`LocalState`]. `save` must be durable when it returns.
pub trait StateStore: Send + std::fmt::Debug {
    /// The saved state, `None` before the first save.
    fn load(&mut self) -> Result<Option<LocalState>>;
    /// Replaces the saved state atomically and durably.
    fn save(&mut self, state: &LocalState) -> Result<()>;
}

/// A [`StateStore`] in memory, shared by clones (a test "restarts" a writer by opening a new
/// one on a clone).
#[derive(Debug, Clone, Default)]
pub struct MemoryState(Arc<Mutex<Option<Vec<u8>>>>);

impl StateStore for MemoryState {
    fn load(&mut self) -> Result<Option<LocalState>> {
        self.0.lock().as_deref().map(LocalState::decode).transpose()
    }

    fn save(&mut self, state: &LocalState) -> Result<()> {
        *self.0.lock() = Some(state.encode());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_truncation_is_an_error() {
        let mut s = LocalState::fresh();
        assert_eq!(LocalState::decode(&s.encode()).unwrap(), s);
        s.epoch = None;
        s.head = Some(ReplicaHead {
            version: Version(4),
            hash: CommitHash([5; 32]),
            epoch: Epoch(2),
            last_page: Some(99),
        });
        s.pending = Some(vec![1, 2, 3]);
        s.fenced = Some(Version(5));
        let bytes = s.encode();
        assert_eq!(LocalState::decode(&bytes).unwrap(), s);
        for cut in 0..bytes.len() {
            assert!(LocalState::decode(&bytes[..cut]).is_err());
        }
    }
}

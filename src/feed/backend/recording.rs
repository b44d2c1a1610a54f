//! A backend wrapper that records every call, for tests that must prove a call was never made.

use echomq_engine::{StreamId, Trim};
use parking_lot::Mutex;

use super::{Backend, RawEntry, Recorded, StreamMeta};
use crate::feed::error::FeedError;

/// Wraps a backend and logs each call's name and key.
#[derive(Debug, Default)]
pub struct Recording<B> {
    inner: B,
    calls: Mutex<Vec<String>>,
}

impl<B> Recording<B> {
    /// Wraps `inner`.
    pub fn new(inner: B) -> Recording<B> {
        Recording {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The calls so far, as `"add emq:{cm}:stream:events"` and so on.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().clone()
    }

    fn log(&self, call: &str, key: &str) {
        self.calls.lock().push(format!("{call} {key}"));
    }
}

impl<B: Backend> Backend for Recording<B> {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        self.log("add", key);
        self.inner.add(key, id, fields)
    }

    /// A capability question, not a stream call: not logged.
    fn records_appends(&self) -> Result<bool, FeedError> {
        self.inner.records_appends()
    }

    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        self.log("add_recorded", key);
        self.inner.add_recorded(key, id, fields, pid, iid)
    }

    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        self.log("range", key);
        self.inner.range(key, start, end, count, reverse)
    }

    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError> {
        self.log("meta", key);
        self.inner.meta(key)
    }

    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError> {
        self.log("trim", key);
        self.inner.trim(key, trim)
    }

    fn fold_then_trim(
        &self,
        key: &str,
        trim: &Trim,
        archive: &echomq_archive::Archive,
    ) -> Result<u64, FeedError> {
        self.log("fold_then_trim", key);
        self.inner.fold_then_trim(key, trim, archive)
    }
}

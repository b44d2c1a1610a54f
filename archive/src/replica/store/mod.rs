//! The object store the replica lives in, behind a small trait so the fence protocol can be
//! tested against an in-memory store with injected faults and run against S3/Tigris.
//!
//! Keys are full object keys (the replica's prefix already applied). Every method is
//! blocking: the replicator runs on its own thread, never on the server's runtime.
//!
//! Contract every implementation keeps:
//! - `put_if_absent` is atomic: of any number of concurrent creators of one key, at most one
//!   gets [`PutOutcome::Created`]; an existing object is never replaced.
//! - [`PutOutcome::Unknown`] and [`StoreError::Transient`] mean the write may or may not have
//!   happened: the caller reads back to find out.
//! - `get` returns `Ok(None)` only for a missing object, never for an error.

pub mod memory;
#[cfg(feature = "s3")]
pub mod s3;

use std::ops::Range;

use super::error::StoreError;

/// How a create-only PUT ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutOutcome {
    /// 2xx: this call created the object.
    Created,
    /// 412: an object already exists under the key (maybe our own earlier attempt).
    Exists,
    /// 409 (AWS `ConditionalRequestConflict`): a concurrent conditional write; nothing was
    /// written by this call. Retry the same bytes.
    Conflict,
    /// Timeout, reset or 5xx: the write may have landed. Read back to decide.
    Unknown(String),
}

/// Size of an object, from a HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The full key.
    pub key: String,
    /// Length in bytes.
    pub len: u64,
}

/// A blocking object store.
pub trait ObjectStore: Send + Sync + std::fmt::Debug {
    /// Creates `key` only if absent (`If-None-Match: *`). `strong` asks for the store's
    /// strongest consistency (Tigris: `X-Tigris-Consistent: true`), as the fence needs.
    fn put_if_absent(&self, key: &str, body: &[u8], strong: bool)
    -> Result<PutOutcome, StoreError>;

    /// Writes `key` unconditionally (segments: immutable by naming, never rewritten).
    fn put(&self, key: &str, body: &[u8]) -> Result<(), StoreError>;

    /// Reads the whole object, `None` when it does not exist.
    fn get(&self, key: &str, strong: bool) -> Result<Option<Vec<u8>>, StoreError>;

    /// Reads bytes `range` of the object (clamped to its end), `None` when it does not exist.
    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Vec<u8>>, StoreError>;

    /// The object's size, `None` when it does not exist.
    fn head(&self, key: &str, strong: bool) -> Result<Option<ObjectMeta>, StoreError>;

    /// Objects whose key starts with `prefix`, in key order, after `start_after` if given, at
    /// most `limit` of them.
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ObjectMeta>, StoreError>;

    /// A short description for messages (`s3://bucket at http://host:port`).
    fn describe(&self) -> String;
}

impl<T: ObjectStore + ?Sized> ObjectStore for std::sync::Arc<T> {
    fn put_if_absent(
        &self,
        key: &str,
        body: &[u8],
        strong: bool,
    ) -> Result<PutOutcome, StoreError> {
        (**self).put_if_absent(key, body, strong)
    }
    fn put(&self, key: &str, body: &[u8]) -> Result<(), StoreError> {
        (**self).put(key, body)
    }
    fn get(&self, key: &str, strong: bool) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).get(key, strong)
    }
    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).get_range(key, range)
    }
    fn head(&self, key: &str, strong: bool) -> Result<Option<ObjectMeta>, StoreError> {
        (**self).head(key, strong)
    }
    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ObjectMeta>, StoreError> {
        (**self).list(prefix, start_after, limit)
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

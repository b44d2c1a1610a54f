//! An in-memory [`ObjectStore`] for tests, with fault injection.
//!
//! Objects live in a map shared by every handle made with [`MemoryStore::connect`]; each
//! handle is one "client" with its own fault plan and its own log of requests, so a test can
//! race two writers on one bucket and ask what each of them sent. Create-only puts are atomic
//! under the map's lock, like moto's and S3's.
//!
//! Faults come from a script (consumed one per request) and then, if set, from a seeded random
//! plan. [`Fault::TimeoutAfterWrite`] performs the request and then reports it as unknown:
//! the case that makes a fence protocol read back instead of trusting the error.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use parking_lot::Mutex;

use super::{ObjectMeta, ObjectStore, PutOutcome};
use crate::replica::error::StoreError;

/// One injected failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The request fails before reaching the store (connection refused): nothing happens.
    Fail,
    /// The request takes effect, then the answer is lost (timeout after the write).
    TimeoutAfterWrite,
    /// A 5xx: the store did nothing but the client cannot know that.
    ServerError,
    /// A 409 on a create-only put (other requests treat it as [`Fault::ServerError`]).
    Conflict,
}

/// What kind of request a handle sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `put_if_absent`.
    PutIfAbsent,
    /// `put`.
    Put,
    /// `get` or `get_range`.
    Get,
    /// `head`.
    Head,
    /// `list`.
    List,
}

impl OpKind {
    /// Whether the request can change the bucket.
    pub fn is_write(self) -> bool {
        matches!(self, OpKind::PutIfAbsent | OpKind::Put)
    }
}

/// Random faults: each request fails with probability `percent`/100, the fault drawn
/// uniformly from `kinds`.
#[derive(Debug, Clone)]
pub struct RandomFaults {
    /// Seed of the xorshift generator (never 0).
    pub seed: u64,
    /// Chance of a fault per request, 0..=100.
    pub percent: u8,
    /// The faults to draw from.
    pub kinds: Vec<Fault>,
}

#[derive(Debug, Default)]
struct Client {
    script: VecDeque<Option<Fault>>,
    random: Option<(u64, RandomFaults)>,
    log: Vec<(OpKind, String)>,
}

/// The in-memory store (one client handle).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    objects: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
    client: Arc<Mutex<Client>>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// An empty bucket and a first client handle.
    pub fn new() -> MemoryStore {
        MemoryStore {
            objects: Arc::default(),
            client: Arc::default(),
        }
    }

    /// Another client of the same bucket, with no faults and an empty log.
    pub fn connect(&self) -> MemoryStore {
        MemoryStore {
            objects: Arc::clone(&self.objects),
            client: Arc::default(),
        }
    }

    /// Queues faults for this handle's next requests (`None` = that request goes through).
    pub fn script(&self, faults: impl IntoIterator<Item = Option<Fault>>) {
        self.client.lock().script.extend(faults);
    }

    /// Random faults for this handle, after the script runs out.
    pub fn set_random_faults(&self, plan: Option<RandomFaults>) {
        self.client.lock().random = plan.map(|p| (p.seed.max(1), p));
    }

    /// Every request this handle sent, in order.
    pub fn log(&self) -> Vec<(OpKind, String)> {
        self.client.lock().log.clone()
    }

    /// A snapshot of the bucket.
    pub fn objects(&self) -> BTreeMap<String, Vec<u8>> {
        self.objects.lock().clone()
    }

    /// Overwrites or deletes an object behind the protocol's back (corruption tests).
    pub fn tamper(&self, key: &str, body: Option<Vec<u8>>) {
        let mut objects = self.objects.lock();
        match body {
            Some(body) => objects.insert(key.to_owned(), body),
            None => objects.remove(key),
        };
    }

    fn next_fault(&self, kind: OpKind, key: &str) -> Option<Fault> {
        let mut client = self.client.lock();
        client.log.push((kind, key.to_owned()));
        if let Some(scripted) = client.script.pop_front() {
            return scripted;
        }
        let (state, plan) = client.random.as_mut()?;
        // xorshift64: deterministic per seed, good enough to spread faults.
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let roll = *state % 100;
        if roll >= u64::from(plan.percent) || plan.kinds.is_empty() {
            return None;
        }
        let pick = (*state / 100) as usize % plan.kinds.len();
        plan.kinds.get(pick).copied()
    }

    fn transient(key: &str, why: &str) -> StoreError {
        StoreError::Transient {
            key: key.to_owned(),
            reason: why.to_owned(),
        }
    }

    /// Applies a read fault: `Fail` and `ServerError` fail the read; `TimeoutAfterWrite` lets
    /// the read happen and loses the answer.
    fn read_fault(&self, kind: OpKind, key: &str) -> Result<(), StoreError> {
        match self.next_fault(kind, key) {
            None => Ok(()),
            Some(Fault::Fail) => Err(StoreError::Unreachable {
                endpoint: "memory".into(),
                key: key.to_owned(),
                reason: "injected connection failure".into(),
            }),
            Some(_) => Err(Self::transient(key, "injected 5xx/timeout")),
        }
    }
}

impl ObjectStore for MemoryStore {
    fn put_if_absent(
        &self,
        key: &str,
        body: &[u8],
        _strong: bool,
    ) -> Result<PutOutcome, StoreError> {
        let fault = self.next_fault(OpKind::PutIfAbsent, key);
        match fault {
            Some(Fault::Fail) => {
                return Err(StoreError::Unreachable {
                    endpoint: "memory".into(),
                    key: key.to_owned(),
                    reason: "injected connection failure".into(),
                });
            }
            Some(Fault::ServerError) => return Ok(PutOutcome::Unknown("injected 503".into())),
            Some(Fault::Conflict) => return Ok(PutOutcome::Conflict),
            Some(Fault::TimeoutAfterWrite) | None => {}
        }
        let mut objects = self.objects.lock();
        let outcome = if objects.contains_key(key) {
            PutOutcome::Exists
        } else {
            objects.insert(key.to_owned(), body.to_vec());
            PutOutcome::Created
        };
        drop(objects);
        if fault == Some(Fault::TimeoutAfterWrite) {
            return Ok(PutOutcome::Unknown("injected timeout after write".into()));
        }
        Ok(outcome)
    }

    fn put(&self, key: &str, body: &[u8]) -> Result<(), StoreError> {
        let fault = self.next_fault(OpKind::Put, key);
        match fault {
            Some(Fault::Fail) => {
                return Err(StoreError::Unreachable {
                    endpoint: "memory".into(),
                    key: key.to_owned(),
                    reason: "injected connection failure".into(),
                });
            }
            Some(Fault::ServerError | Fault::Conflict) => {
                return Err(Self::transient(key, "injected 503"));
            }
            Some(Fault::TimeoutAfterWrite) | None => {}
        }
        self.objects.lock().insert(key.to_owned(), body.to_vec());
        if fault == Some(Fault::TimeoutAfterWrite) {
            return Err(Self::transient(key, "injected timeout after write"));
        }
        Ok(())
    }

    fn get(&self, key: &str, _strong: bool) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_fault(OpKind::Get, key)?;
        Ok(self.objects.lock().get(key).cloned())
    }

    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_fault(OpKind::Get, key)?;
        Ok(self.objects.lock().get(key).map(|body| {
            let len = body.len() as u64;
            let start = range.start.min(len) as usize;
            let end = range.end.clamp(range.start.min(len), len) as usize;
            body.get(start..end).map(<[u8]>::to_vec).unwrap_or_default()
        }))
    }

    fn head(&self, key: &str, _strong: bool) -> Result<Option<ObjectMeta>, StoreError> {
        self.read_fault(OpKind::Head, key)?;
        Ok(self.objects.lock().get(key).map(|body| ObjectMeta {
            key: key.to_owned(),
            len: body.len() as u64,
        }))
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ObjectMeta>, StoreError> {
        self.read_fault(OpKind::List, prefix)?;
        let objects = self.objects.lock();
        Ok(objects
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter(|(k, _)| start_after.is_none_or(|after| k.as_str() > after))
            .take(limit)
            .map(|(k, v)| ObjectMeta {
                key: k.clone(),
                len: v.len() as u64,
            })
            .collect())
    }

    fn describe(&self) -> String {
        "memory store".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_only_never_replaces_and_timeout_after_write_still_writes() {
        let store = MemoryStore::new();
        assert_eq!(
            store.put_if_absent("k", b"a", true),
            Ok(PutOutcome::Created)
        );
        assert_eq!(store.put_if_absent("k", b"b", true), Ok(PutOutcome::Exists));
        assert_eq!(store.get("k", true), Ok(Some(b"a".to_vec())));
        store.script([Some(Fault::TimeoutAfterWrite), Some(Fault::ServerError)]);
        assert!(matches!(
            store.put_if_absent("j", b"x", true),
            Ok(PutOutcome::Unknown(_))
        ));
        assert!(matches!(
            store.put_if_absent("i", b"x", true),
            Ok(PutOutcome::Unknown(_))
        ));
        assert_eq!(store.get("j", true), Ok(Some(b"x".to_vec())));
        assert_eq!(store.get("i", true), Ok(None));
    }

    #[test]
    fn handles_share_objects_but_not_faults_or_logs() {
        let a = MemoryStore::new();
        let b = a.connect();
        a.script([Some(Fault::Fail)]);
        assert!(b.put("k", b"v").is_ok());
        assert!(a.get("k", false).is_err());
        assert_eq!(a.get("k", false), Ok(Some(b"v".to_vec())));
        assert_eq!(b.log(), vec![(OpKind::Put, "k".to_owned())]);
        assert_eq!(a.log().len(), 2);
    }

    #[test]
    fn ranges_clamp_and_list_respects_prefix_and_start_after() {
        let s = MemoryStore::new();
        s.put("p/a", b"0123456789").unwrap();
        s.put("p/b", b"x").unwrap();
        s.put("q/c", b"y").unwrap();
        assert_eq!(s.get_range("p/a", 2..5), Ok(Some(b"234".to_vec())));
        assert_eq!(s.get_range("p/a", 8..50), Ok(Some(b"89".to_vec())));
        assert_eq!(s.get_range("p/a", 50..60), Ok(Some(Vec::new())));
        let keys: Vec<String> = s
            .list("p/", Some("p/a"), 10)
            .unwrap()
            .into_iter()
            .map(|m| m.key)
            .collect();
        assert_eq!(keys, vec!["p/b".to_owned()]);
    }
}

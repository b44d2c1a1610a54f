//! The server dedup store: one string key per mark on any Redis-compatible server, shared
//! by every process of a group.
//!
//! Key `emq:{<queue>}:dedup:<scope>:<BRANDED>` (the queue's hash tag: the marks share the
//! stream's Cluster slot). A lease is `SET key lease:<token> NX PX <lease_ms>` (atomic on the
//! server; expiry by the server's clock); done is `SET key done` (with `PX` when
//! [`RedisDedup::with_done_ttl_ms`] is set, so old marks expire); giving a lease back is
//! `WATCH key` / `GET` / `MULTI DEL EXEC` only if the lease is still the caller's. The store
//! uses a connection of its own, so those steps never interleave with another caller's. On a
//! cluster ([`RedisDedup::on_cluster`]) every step runs on the master serving the mark's slot,
//! over that node's one connection, so the transaction holds there too.

use parking_lot::Mutex;
use redis::Value;

use super::{Claim, DedupError, DedupStore};
use crate::feed::backend::wire::Wire;
use crate::feed::backend::{ClusterBackend, RedisBackend};
use crate::feed::brand::Branded;
use crate::feed::error::FeedError;

/// The value of a done mark.
const DONE: &[u8] = b"done";
/// How often `begin` retries when a lease vanished between its SET NX and its GET.
const BEGIN_ATTEMPTS_MAX: usize = 3;

fn server(e: FeedError) -> DedupError {
    DedupError::Server(e.to_string())
}

/// Marks on a server.
#[derive(Debug)]
pub struct RedisDedup {
    backend: Box<dyn Wire>,
    queue: String,
    done_ttl_ms: Option<u64>,
    /// Held across each multi-command step on the store's own connection.
    steps: Mutex<()>,
}

impl RedisDedup {
    /// A store on `backend`'s server (over a new connection), keyed in `queue`.
    pub fn new(backend: &RedisBackend, queue: &str) -> Result<RedisDedup, DedupError> {
        RedisDedup::over(Box::new(backend.fork().map_err(server)?), queue)
    }

    /// A store on `backend`'s cluster (over a new cluster connection), keyed in `queue`: the
    /// marks share the queue's slot.
    pub fn on_cluster(backend: &ClusterBackend, queue: &str) -> Result<RedisDedup, DedupError> {
        RedisDedup::over(Box::new(backend.fork().map_err(server)?), queue)
    }

    fn over(backend: Box<dyn Wire>, queue: &str) -> Result<RedisDedup, DedupError> {
        Ok(RedisDedup {
            backend,
            queue: queue.to_string(),
            done_ttl_ms: None,
            steps: Mutex::new(()),
        })
    }

    /// Runs one step of a mark on the node holding `key`.
    fn at(&self, key: &str, command: &redis::Cmd) -> Result<Value, DedupError> {
        self.backend.query_at(key, command, 0).map_err(server)
    }

    /// Lets done marks expire after `ms` (set it longer than entries can be redelivered).
    pub fn with_done_ttl_ms(mut self, ms: u64) -> RedisDedup {
        self.done_ttl_ms = Some(ms.max(1));
        self
    }

    /// The key of a mark.
    pub fn key(&self, scope: &str, id: Branded) -> String {
        format!("emq:{{{}}}:dedup:{scope}:{id}", self.queue)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, DedupError> {
        match self.at(key, redis::cmd("GET").arg(key))? {
            Value::Nil => Ok(None),
            Value::BulkString(b) => Ok(Some(b)),
            Value::SimpleString(s) => Ok(Some(s.into_bytes())),
            other => Err(DedupError::Corrupt(format!("{key}: {other:?}"))),
        }
    }
}

fn lease_value(token: u64) -> String {
    format!("lease:{token:016x}")
}

impl DedupStore for RedisDedup {
    fn begin(
        &self,
        scope: &str,
        id: Branded,
        token: u64,
        _now_ms: u64,
        lease_ms: u64,
    ) -> Result<Claim, DedupError> {
        let key = self.key(scope, id);
        let ours = lease_value(token);
        let _step = self.steps.lock();
        for _ in 0..BEGIN_ATTEMPTS_MAX {
            let set = self.at(
                &key,
                redis::cmd("SET")
                    .arg(&key)
                    .arg(&ours)
                    .arg("NX")
                    .arg("PX")
                    .arg(lease_ms.max(1)),
            )?;
            if !matches!(set, Value::Nil) {
                return Ok(Claim::Taken);
            }
            match self.get(&key)? {
                Some(v) if v == DONE => return Ok(Claim::Done),
                Some(v) if v == ours.as_bytes() => return Ok(Claim::Taken),
                Some(_) => return Ok(Claim::Busy),
                // The other lease expired in between: try to take it again.
                None => {}
            }
        }
        Ok(Claim::Busy)
    }

    fn finish(&self, scope: &str, id: Branded, _token: u64) -> Result<(), DedupError> {
        let key = self.key(scope, id);
        let mut command = redis::cmd("SET");
        command.arg(&key).arg(DONE);
        if let Some(ttl) = self.done_ttl_ms {
            command.arg("PX").arg(ttl);
        }
        let _step = self.steps.lock();
        self.at(&key, &command)?;
        Ok(())
    }

    fn abandon(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        let key = self.key(scope, id);
        let _step = self.steps.lock();
        self.at(&key, redis::cmd("WATCH").arg(&key))?;
        if self.get(&key)?.as_deref() != Some(lease_value(token).as_bytes()) {
            self.at(&key, &redis::cmd("UNWATCH"))?;
            return Ok(());
        }
        self.at(&key, &redis::cmd("MULTI"))?;
        self.at(&key, redis::cmd("DEL").arg(&key))?;
        // A nil EXEC means the lease changed hands meanwhile: then it is not ours to drop.
        self.at(&key, &redis::cmd("EXEC"))?;
        Ok(())
    }

    fn is_done(&self, scope: &str, id: Branded) -> Result<bool, DedupError> {
        let _step = self.steps.lock();
        Ok(self.get(&self.key(scope, id))?.as_deref() == Some(DONE))
    }
}

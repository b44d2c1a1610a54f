//! A Redis or Valkey Cluster as a backend, through the `redis` crate's synchronous cluster
//! connection. The commands are the server backend's own ([`Wire`]: `server.rs`,
//! `redis_groups.rs`); this file only says how they reach the cluster.
//!
//! Placement: every key must carry a `{hash tag}` (the feed's keys are `emq:{queue}:...`), so
//! one queue's streams, groups and dedup marks live in one slot, on one master, and the
//! multi-command steps (XADD then WAIT, WATCH/MULTI/EXEC) run on one node. A key without a tag
//! is refused before anything is sent ([`FeedError::NoHashTag`]).
//!
//! Topology: the client library follows `MOVED` (refreshing its slot map) and `ASK`, and waits
//! and retries `TRYAGAIN` and `CLUSTERDOWN`, a few times with a short backoff
//! ([`ClusterBackend::REDIRECTS_MAX`]); past that the call fails with a typed error
//! ([`FeedError::SlotMoved`], [`FeedError::ClusterDown`]) and the caller retries with its own
//! backoff, as the consumer runtime does.
//!
//! Timeouts as [`super::RedisBackend`] has them: `connect_timeout` for each node's TCP connect
//! and handshake, `response_timeout` for every reply, raised by a blocking read's BLOCK time
//! (and left raised on that connection, a consumer's own). A call that timed out or lost a
//! node's connection drops the whole cluster connection; the next call reconnects from the seed
//! nodes and reads the slot map afresh, so a failed-over master is never asked again.
//!
//! Appends are not recorded in the IDMP map on a cluster (`Backend::records_appends` is false,
//! whatever the nodes' version): the XADD + XIDMPRECORD transaction needs one pipeline pinned
//! to the key's node, which the cluster connection does not offer. `Feed::append_retrying`
//! therefore retries only failures before anything was sent ([`FeedError::is_unsent`]).

use std::sync::OnceLock;
use std::time::Duration;

use redis::Value;
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

use super::link::{Link, connect_failure};
use super::redis::backend;
use super::wire::{Replication, Wire};
use crate::feed::error::FeedError;

/// A backend over a Redis Cluster.
pub struct ClusterBackend {
    client: ClusterClient,
    /// The seed nodes, for errors.
    seeds: String,
    link: Link<ClusterConnection>,
}

impl std::fmt::Debug for ClusterBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterBackend")
            .field("seeds", &self.seeds)
            .finish()
    }
}

/// Whether `key` has a non-empty `{tag}`, the part Redis Cluster hashes to pick the slot.
pub(crate) fn has_hash_tag(key: &str) -> bool {
    key.find('{')
        .and_then(|open| key[open + 1..].find('}'))
        .is_some_and(|len| len > 0)
}

impl ClusterBackend {
    /// The default connect timeout, per node (as [`super::RedisBackend::CONNECT_TIMEOUT_DEFAULT`]).
    pub const CONNECT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(5);
    /// The default reply timeout (as [`super::RedisBackend::RESPONSE_TIMEOUT_DEFAULT`]).
    pub const RESPONSE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);
    /// Redirects and retries the client library makes within one call (`MOVED`, `ASK`,
    /// `TRYAGAIN`, `CLUSTERDOWN`, a lost node) before the call fails with a typed error.
    pub const REDIRECTS_MAX: u32 = 5;
    /// The shortest and longest wait between the library's retries, in ms: short, so a call
    /// returns within about a second and the caller's own backoff takes over.
    const RETRY_WAIT_MS: (u64, u64) = (10, 400);

    /// Connects to the cluster through `seeds` (`redis://host:port` each; any reachable node
    /// will do, the slot map names the rest) with the default timeouts.
    pub fn connect<S: AsRef<str>>(seeds: &[S]) -> Result<ClusterBackend, FeedError> {
        ClusterBackend::connect_with(
            seeds,
            ClusterBackend::CONNECT_TIMEOUT_DEFAULT,
            ClusterBackend::RESPONSE_TIMEOUT_DEFAULT,
        )
    }

    /// Connects through `seeds` with these timeouts (zero is taken as one millisecond).
    pub fn connect_with<S: AsRef<str>>(
        seeds: &[S],
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> Result<ClusterBackend, FeedError> {
        let link = Link::new(connect_timeout, response_timeout);
        // No transactions on a cluster (`Wire::transaction`): appends are never recorded.
        let _ = link.records.set(false);
        let urls: Vec<&str> = seeds.iter().map(AsRef::as_ref).collect();
        if urls.is_empty() {
            return Err(FeedError::Backend(
                "a cluster backend needs at least one seed node (redis://host:port)".to_string(),
            ));
        }
        let client = ClusterClient::builder(urls.iter().copied())
            .connection_timeout(link.connect_timeout)
            .response_timeout(link.response_timeout)
            .retries(ClusterBackend::REDIRECTS_MAX)
            .min_retry_wait(ClusterBackend::RETRY_WAIT_MS.0)
            .max_retry_wait(ClusterBackend::RETRY_WAIT_MS.1)
            .build()
            .map_err(backend)?;
        let cluster = ClusterBackend {
            client,
            seeds: urls.join(","),
            link,
        };
        cluster.link.install(cluster.open()?);
        Ok(cluster)
    }

    /// Opts in to replicated appends, as [`super::RedisBackend::with_replicated_append`]: `WAIT
    /// replicas timeout` on the key's master after each XADD; the append is acknowledged only
    /// when `replicas` of that master's replicas hold it.
    pub fn with_replicated_append(mut self, replicas: u32, timeout: Duration) -> ClusterBackend {
        self.link.replicate(replicas, timeout);
        self
    }

    /// A cluster connection through the seeds (the library sets each node connection's
    /// timeouts from the client's settings).
    fn open(&self) -> Result<ClusterConnection, FeedError> {
        self.client
            .get_connection()
            .map_err(|e| connect_failure(e, || self.seeds.clone(), self.link.connect_timeout))
    }

    fn run(
        &self,
        block: Duration,
        call: impl FnOnce(&mut ClusterConnection) -> redis::RedisResult<Value>,
    ) -> Result<Value, FeedError> {
        self.link
            .run(block, || self.open(), || self.seeds.clone(), call)
    }
}

impl Wire for ClusterBackend {
    fn query(&self, command: &redis::Cmd) -> Result<Value, FeedError> {
        self.run(Duration::ZERO, |c| command.query::<Value>(c))
    }

    fn query_blocking(&self, command: &redis::Cmd, block_ms: u64) -> Result<Value, FeedError> {
        self.run(Duration::from_millis(block_ms), |c| {
            command.query::<Value>(c)
        })
    }

    /// On the master serving `key`'s slot: the library keeps one connection per node, the
    /// one `key`'s own commands went over.
    fn query_at(&self, key: &str, command: &redis::Cmd, block_ms: u64) -> Result<Value, FeedError> {
        self.check_key(key)?;
        let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
            key,
            SlotAddr::Master,
        )));
        self.run(Duration::from_millis(block_ms), |c| {
            c.route_command(command, route)
        })
    }

    fn check_key(&self, key: &str) -> Result<(), FeedError> {
        if has_hash_tag(key) {
            Ok(())
        } else {
            Err(FeedError::NoHashTag {
                key: key.to_string(),
            })
        }
    }

    fn replication(&self) -> Option<Replication> {
        self.link.replication
    }

    /// Not on a cluster: the library's cluster connection pipelines without MULTI/EXEC and
    /// cannot pin a pipeline to the key's node, and sending MULTI, XADD, XIDMPRECORD and EXEC
    /// as separate routed calls would let another caller's command land inside the
    /// transaction. So a cluster does not record appends (`Backend::records_appends` is false).
    fn transaction(
        &self,
        _key: &str,
        _transaction: &redis::Pipeline,
    ) -> Option<Result<Value, FeedError>> {
        None
    }

    fn records(&self) -> &OnceLock<bool> {
        &self.link.records
    }

    /// Another cluster connection through the same seeds, with the same settings.
    fn fork(&self) -> Result<ClusterBackend, FeedError> {
        let forked = ClusterBackend {
            client: self.client.clone(),
            seeds: self.seeds.clone(),
            link: self.link.settings(),
        };
        forked.link.install(forked.open()?);
        Ok(forked)
    }
}

#[cfg(test)]
mod tests {
    use super::has_hash_tag;

    #[test]
    fn a_hash_tag_is_a_non_empty_brace_pair() {
        assert!(has_hash_tag("emq:{cm}:stream:rooms"));
        assert!(has_hash_tag("{a}"));
        assert!(has_hash_tag("x{a}{b}"));
        assert!(!has_hash_tag("emq:cm:stream:rooms"));
        assert!(!has_hash_tag("emq:{}:stream"));
        assert!(!has_hash_tag("emq:{cm:stream"));
        assert!(!has_hash_tag("emq:}cm{"));
    }
}

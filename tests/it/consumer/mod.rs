//! The consumer runtime, the dedup helper and the retention driver, end to end.
//!
//! Each behaviour runs on the embedded engine (with a manual clock where time matters) and,
//! where the server's part matters, against `echomq serve`, a real `redis-server` and a
//! 3-master, 3-replica Redis Cluster:
//!
//! - `resume`: backlog first, then new entries, after a drop without ack; a clean cold start
//!   has an empty backlog; `crash`: the same with a child process killed by SIGKILL.
//! - `reclaim`: a second consumer reclaims a dead peer's entries after the idle threshold, with
//!   growing attempts.
//! - `faults`: a handler failing 30% of the time over 10,000 entries, two consumers racing.
//! - `bad_input`: panics, entries without a parsable id, a group deleted underneath, poison
//!   entries.
//! - `retention`: declared streams trimmed on the beat, undeclared ones untouched.
//! - `claim_path`: the path a consumer reclaims and retries by (`XREADGROUP … CLAIM` and
//!   `XNACK … FAIL` on the embedded engine, `echomq serve` and Redis 8.8; XAUTOCLAIM on
//!   Redis 7 and Valkey), as its metrics report it.

mod bad_input;
mod claim_path;
mod crash;
mod faults;
mod reclaim;
mod resume;
mod retention;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use echomq::engine::{Keyspace, ManualClock, SystemClock};
use echomq::feed::backend::{GroupBackend, ReadFrom};
use echomq::feed::consumer::{ClaimPath, Origin};
use echomq::feed::{Backend, Branded, ClusterBackend, Delivery, Embedded, Feed, RedisBackend};
use echomq::testing::{TestServer, TestServerOptions};
use parking_lot::Mutex;

use crate::support::cluster::Cluster;
use crate::support::peer::{Peer, PeerKind};

/// 2026-11-30 00:00:00 UTC in ms.
pub const T: u64 = 1_796_000_000_000;
/// How long a test waits for a consumer to reach a state before failing.
pub const WAIT: Duration = Duration::from_secs(20);

/// Polls `done` until it holds; fails the test with `what` after [`WAIT`].
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Where the streams live, and what a test may do there besides the feed API.
pub enum Target {
    /// The embedded engine on a manual clock.
    Embedded {
        keyspace: Arc<Keyspace>,
        clock: Arc<ManualClock>,
    },
    /// The embedded engine on the wall clock.
    EmbeddedWall { keyspace: Arc<Keyspace> },
    /// `echomq serve`, in-process, on the wall clock.
    Serve(TestServer),
    /// A real redis-server (7.0 or 8.8) or valkey-server.
    Redis(Peer),
    /// A real Redis Cluster.
    Cluster(Cluster),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::Embedded { .. } => "embedded",
            Target::EmbeddedWall { .. } => "embedded (wall clock)",
            Target::Serve(_) => "echomq serve",
            Target::Redis(peer) => return write!(f, "{}", peer.info()),
            Target::Cluster(_) => "redis cluster",
        })
    }
}

/// A backend of either kind, so one test body serves every target.
#[allow(clippy::large_enum_variant)] // a handful per test; boxing would only add noise
pub enum Either {
    Embedded(Embedded),
    Redis(RedisBackend),
    Cluster(ClusterBackend),
}

impl Target {
    pub fn embedded() -> Target {
        let clock = Arc::new(ManualClock::new(T));
        Target::Embedded {
            keyspace: Arc::new(Keyspace::new(clock.clone())),
            clock,
        }
    }

    pub fn embedded_wall() -> Target {
        Target::EmbeddedWall {
            keyspace: Arc::new(Keyspace::new(Arc::new(SystemClock))),
        }
    }

    pub fn serve() -> Target {
        Target::Serve(
            TestServer::start_with(TestServerOptions {
                system_clock: true,
                ..TestServerOptions::default()
            })
            .unwrap(),
        )
    }

    /// `None` (skipped) when redis-server is missing outside CI.
    pub fn redis() -> Option<Target> {
        Peer::start(PeerKind::Redis).map(Target::Redis)
    }

    /// `None` (skipped) when Redis 8.8 is missing outside CI.
    pub fn redis8() -> Option<Target> {
        Peer::start(PeerKind::Redis8).map(Target::Redis)
    }

    /// `None` (skipped) when valkey-server is missing outside CI.
    pub fn valkey() -> Option<Target> {
        Peer::start(PeerKind::Valkey).map(Target::Redis)
    }

    /// The path a consumer on this target must report: `XREADGROUP … CLAIM` where the server
    /// has it and XNACK (the engine, `echomq serve`, Redis 8.8), XAUTOCLAIM elsewhere (Redis
    /// 7.0, Valkey 8.1, the Redis 7 cluster).
    pub fn claim_path(&self) -> ClaimPath {
        match self {
            Target::Embedded { .. } | Target::EmbeddedWall { .. } | Target::Serve(_) => {
                ClaimPath::ReadClaim
            }
            Target::Redis(peer) if peer.info().kind == PeerKind::Redis8 => ClaimPath::ReadClaim,
            Target::Redis(_) | Target::Cluster(_) => ClaimPath::AutoClaim,
        }
    }

    /// `None` (skipped) when redis-server or redis-cli is missing outside CI.
    pub fn cluster() -> Option<Target> {
        Cluster::start().map(Target::Cluster)
    }

    pub fn url(&self) -> Option<String> {
        match self {
            Target::Serve(server) => Some(server.url()),
            Target::Redis(peer) => Some(format!("redis://{}/", peer.addr())),
            _ => None,
        }
    }

    pub fn backend(&self) -> Either {
        match self {
            Target::Embedded { keyspace, .. } | Target::EmbeddedWall { keyspace } => {
                Either::Embedded(Embedded::new(keyspace.clone()))
            }
            Target::Cluster(cluster) => Either::Cluster(cluster.backend()),
            _ => Either::Redis(RedisBackend::connect(&self.url().unwrap()).unwrap()),
        }
    }

    /// A feed minting by the target's clock.
    pub fn feed(&self) -> Feed<Either> {
        match self {
            Target::Embedded { clock, .. } => Feed::with_clock(self.backend(), clock.clone()),
            _ => Feed::new(self.backend()),
        }
    }

    /// Moves the manual clock once a reader is blocked on the keyspace: a consumer that reaches
    /// its blocking read only after the move would wait from the new time, and with the clock
    /// frozen its timeout would never come.
    pub fn advance_blocked_ms(&self, ms: u64) {
        if let Target::Embedded { keyspace, .. } = self {
            wait_until("a blocked reader", || keyspace.blocked_count() >= 1);
        }
        self.advance_ms(ms);
    }

    /// Moves a manual clock (embedded only) and times out blocked reads.
    pub fn advance_ms(&self, ms: u64) {
        match self {
            Target::Embedded { keyspace, clock } => {
                clock.advance(ms);
                keyspace.expire_blocked();
            }
            _ => panic!("{self} has no manual clock"),
        }
    }

    /// Runs a raw command; returns the reply as text (errors as `ERR ...` text).
    pub fn raw(&self, argv: &[&str]) -> String {
        match self {
            Target::Embedded { keyspace, .. } | Target::EmbeddedWall { keyspace } => {
                match keyspace.execute(argv) {
                    Ok(reply) => format!("{reply:?}"),
                    Err(e) => e.to_string(),
                }
            }
            Target::Cluster(cluster) => {
                let client = redis::cluster::ClusterClient::new(cluster.seeds()).unwrap();
                raw_on(&mut client.get_connection().unwrap(), argv)
            }
            _ => {
                let client = redis::Client::open(self.url().unwrap()).unwrap();
                raw_on(&mut client.get_connection().unwrap(), argv)
            }
        }
    }
}

/// Runs `argv` on a server or cluster connection; the reply as text (errors as their text).
fn raw_on(connection: &mut impl redis::ConnectionLike, argv: &[&str]) -> String {
    let mut command = redis::cmd(argv[0]);
    for arg in &argv[1..] {
        command.arg(*arg);
    }
    match command.query::<redis::Value>(connection) {
        Ok(value) => format!("{value:?}"),
        Err(e) => e.to_string(),
    }
}

macro_rules! either {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Either::Embedded($b) => $e,
            Either::Redis($b) => $e,
            Either::Cluster($b) => $e,
        }
    };
}

impl Backend for Either {
    fn add(
        &self,
        key: &str,
        id: echomq::engine::StreamId,
        fields: &[&[u8]],
    ) -> Result<echomq::engine::StreamId, echomq::feed::FeedError> {
        either!(self, b => b.add(key, id, fields))
    }
    fn range(
        &self,
        key: &str,
        start: echomq::engine::StreamId,
        end: echomq::engine::StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<echomq::feed::RawEntry>, echomq::feed::FeedError> {
        either!(self, b => b.range(key, start, end, count, reverse))
    }
    fn meta(&self, key: &str) -> Result<Option<echomq::feed::StreamMeta>, echomq::feed::FeedError> {
        either!(self, b => b.meta(key))
    }
    fn trim(&self, key: &str, trim: &echomq::engine::Trim) -> Result<u64, echomq::feed::FeedError> {
        either!(self, b => Backend::trim(b, key, trim))
    }
}

impl GroupBackend for Either {
    fn create_group(
        &self,
        key: &str,
        group: &str,
        start: echomq::feed::backend::GroupStart,
    ) -> Result<bool, echomq::feed::FeedError> {
        either!(self, b => b.create_group(key, group, start))
    }
    fn read_group(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        from: ReadFrom,
        count: usize,
        block: Option<echomq::feed::backend::Block<'_>>,
    ) -> Result<Vec<echomq::feed::backend::GroupEntry>, echomq::feed::FeedError> {
        either!(self, b => b.read_group(key, group, consumer, from, count, block))
    }
    fn ack(
        &self,
        key: &str,
        group: &str,
        ids: &[echomq::engine::StreamId],
    ) -> Result<u64, echomq::feed::FeedError> {
        either!(self, b => b.ack(key, group, ids))
    }
    fn auto_claim(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        min_idle_ms: u64,
        start: echomq::engine::StreamId,
        count: usize,
    ) -> Result<echomq::feed::backend::Claimed, echomq::feed::FeedError> {
        either!(self, b => b.auto_claim(key, group, consumer, min_idle_ms, start, count))
    }
    fn claims_on_read(&self, key: &str) -> Result<bool, echomq::feed::FeedError> {
        either!(self, b => b.claims_on_read(key))
    }
    fn nack_fail(
        &self,
        key: &str,
        group: &str,
        ids: &[echomq::engine::StreamId],
    ) -> Result<u64, echomq::feed::FeedError> {
        either!(self, b => b.nack_fail(key, group, ids))
    }
    fn pending_count(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
    ) -> Result<u64, echomq::feed::FeedError> {
        either!(self, b => b.pending_count(key, group, consumer))
    }
    fn add_auto(
        &self,
        key: &str,
        fields: &[&[u8]],
    ) -> Result<echomq::engine::StreamId, echomq::feed::FeedError> {
        either!(self, b => b.add_auto(key, fields))
    }
    fn dedicated(&self) -> Result<Either, echomq::feed::FeedError> {
        Ok(match self {
            Either::Embedded(b) => Either::Embedded(b.dedicated()?),
            Either::Redis(b) => Either::Redis(b.dedicated()?),
            Either::Cluster(b) => Either::Cluster(b.dedicated()?),
        })
    }
    fn clock(&self) -> Arc<dyn echomq::engine::Clock> {
        either!(self, b => b.clock())
    }
}

/// One delivery as a test records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub id: Branded,
    pub attempts: u64,
    pub origin: Origin,
}

/// A shared log of deliveries.
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Seen>>>);

impl Log {
    pub fn record(&self, d: &Delivery) {
        self.0.lock().push(Seen {
            id: d.id,
            attempts: d.attempts,
            origin: d.origin,
        });
    }

    pub fn all(&self) -> Vec<Seen> {
        self.0.lock().clone()
    }

    pub fn len(&self) -> usize {
        self.0.lock().len()
    }

    pub fn clear(&self) {
        self.0.lock().clear();
    }
}

/// Appends `n` entries `n=<i>` (i from `from`); returns their receipts.
pub fn append(feed: &Feed<Either>, stream: &str, from: u64, n: u64) -> Vec<Branded> {
    (from..from + n)
        .map(|i| feed.append("cm", stream, &[("n", &i.to_string())]).unwrap())
        .collect()
}

/// Every target a server-side behaviour runs on: embedded, `echomq serve`, redis-server 7.0,
/// Redis 8.8 and a Redis Cluster (when installed, always under CI).
pub fn every_target(embedded: Target) -> Vec<Target> {
    let mut targets = vec![embedded, Target::serve()];
    targets.extend(Target::redis());
    targets.extend(Target::redis8());
    targets.extend(Target::cluster());
    targets
}

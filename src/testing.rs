//! echomq as a test double: a real Redis-protocol server, in-process, on an ephemeral port,
//! with a clock the test moves.
//!
//! ```no_run
//! use echomq::testing::TestServer;
//!
//! let server = TestServer::start().expect("server starts");
//! // Point any Redis client at server.url() (redis://127.0.0.1:<port>/).
//! server.keyspace().execute(&["XADD", "events", "1-1", "kind", "guess"]).unwrap();
//! // Idle-time rules (XPENDING IDLE, XCLAIM, XAUTOCLAIM), key TTLs (EXPIRE, SET EX) and
//! // BLOCK timeouts follow the manual clock: move it instead of sleeping.
//! server.advance_ms(60_000);
//! // Dropping the server stops it and closes every connection.
//! // TestServer::start_cluster() serves as a one-node Redis Cluster instead.
//! ```
//!
//! Two clocks:
//!
//! - **Manual** ([`TestServer::start`], the default): starts at the wall time and never moves
//!   by itself, so a test is deterministic: every `XADD *` in the same millisecond, no TTL
//!   runs out and no BLOCK times out until the test moves time, with
//!   [`TestServer::advance_ms`] from Rust or `EMQ.CLOCK ADVANCE ms` / `EMQ.CLOCK SET ms` from
//!   any client (the same path: due keys expire and due BLOCKs time out before either
//!   returns). A BLOCK with no data and no `advance` waits forever.
//! - **System** ([`TestServer::with_system_clock`]): the wall clock, as `echomq serve`; time
//!   passes by itself, `EMQ.CLOCK` is refused and `advance_ms` has no effect.
//!
//! The double keeps persistence off: nothing is saved or loaded unless a test asks for it.
//!
//! The server runs on its own thread with its own tokio runtime, so it works from plain
//! `#[test]` functions and from async tests alike. Unlike a default `echomq serve`, it lets
//! its (loopback) clients run DEBUG and CONFIG SET `dir`/`dbfilename`
//! (`enable-debug-command local`, `enable-protected-configs local`), as Redis's own test
//! suite starts its servers: a test may need them, and nobody else can reach the double.
//!
//! Persistence is off (no save points, no AOF), unlike `echomq serve`, which keeps Redis's
//! default save points: a test double writes no `dump.rdb`, and its data ends with it. A test
//! that wants files sets `dir` and `save` or `appendonly` itself (CONFIG SET).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use echomq_engine::{Clock, Keyspace, ManualClock, SystemClock};
use echomq_protocol::resp::Protocol;
use echomq_protocol::{Server, ServerConfig, ServerHandle};

/// How to start a [`TestServer`].
#[derive(Debug, Clone, Default)]
pub struct TestServerOptions {
    /// `requirepass`; empty for none.
    pub requirepass: String,
    /// Speak RESP3 before HELLO.
    pub resp3: bool,
    /// Read the wall clock instead of a manual clock.
    pub system_clock: bool,
    /// An archive that trims fold into (as `echomq serve --archive`).
    pub archive: Option<Arc<echomq_archive::Archive>>,
    /// The archive's replicator (as `echomq serve --replicate`): notified after each fold,
    /// reported in INFO.
    pub archive_replica: Option<echomq_protocol::server::ArchiveReplica>,
    /// Cluster mode (`cluster-enabled yes`): a one-node Redis Cluster owning all 16384 slots,
    /// for cluster clients (see [`TestServer::start_cluster`]).
    pub cluster_enabled: bool,
}

/// A server running in-process; stops when dropped.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    handle: ServerHandle,
    clock: Arc<ManualClock>,
    thread: Option<JoinHandle<()>>,
}

fn wall_ms() -> u64 {
    SystemClock.now_ms()
}

impl TestServer {
    /// Starts a server with a manual clock set to the current wall time.
    pub fn start() -> std::io::Result<TestServer> {
        TestServer::start_with(TestServerOptions::default())
    }

    /// Starts a server on the wall clock instead of a manual one: time passes by itself, as
    /// under `echomq serve`.
    pub fn with_system_clock() -> std::io::Result<TestServer> {
        TestServer::start_with(TestServerOptions {
            system_clock: true,
            ..TestServerOptions::default()
        })
    }

    /// Starts a server in cluster mode: a one-node Redis Cluster that owns all 16384 slots,
    /// so cluster clients (redis-rs `ClusterClient`, redis-py `RedisCluster`, `redis-cli -c`)
    /// can use it; multi-key requests across slots answer `-CROSSSLOT`.
    pub fn start_cluster() -> std::io::Result<TestServer> {
        TestServer::start_with(TestServerOptions {
            cluster_enabled: true,
            ..TestServerOptions::default()
        })
    }

    /// Starts a server with the given options.
    pub fn start_with(options: TestServerOptions) -> std::io::Result<TestServer> {
        let manual = Arc::new(ManualClock::new(wall_ms()));
        let clock: Arc<dyn Clock> = if options.system_clock {
            Arc::new(SystemClock)
        } else {
            manual.clone()
        };
        let config = ServerConfig {
            bind: "127.0.0.1".into(),
            port: 0,
            requirepass: options.requirepass,
            default_protocol: if options.resp3 {
                Protocol::Resp3
            } else {
                Protocol::Resp2
            },
            archive: options.archive,
            archive_replica: options.archive_replica,
            cluster_enabled: options.cluster_enabled,
            ..ServerConfig::default()
        };
        let (ready, started) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("echomq-test-server".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match Server::bind_with_clock(config, clock).await {
                        Ok(server) => {
                            let bound = server.local_addr().map(|addr| (addr, server.handle()));
                            let ok = bound.is_ok();
                            let _ = ready.send(bound);
                            if ok {
                                server.run().await;
                            }
                        }
                        Err(e) => {
                            let _ = ready.send(Err(e));
                        }
                    }
                });
            })?;
        let (addr, handle) = started
            .recv()
            .map_err(|_| std::io::Error::other("the server thread stopped before binding"))??;
        // A test double serves its own test on loopback: DEBUG and CONFIG SET dir/dbfilename
        // work for local clients, as Redis's own test suite enables them.
        for switch in ["enable-debug-command", "enable-protected-configs"] {
            handle
                .config_set(switch, "local")
                .map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        Ok(TestServer {
            addr,
            handle,
            clock: manual,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A `redis://` URL for clients.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// The engine behind it, for direct inspection (database 0 is what clients see first).
    pub fn keyspace(&self) -> &Arc<Keyspace> {
        self.handle.keyspace()
    }

    /// The manual clock (unused when started with `system_clock`).
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Moves the manual clock forward, deletes the keys whose TTL ran out (waking blocked
    /// readers of an expired stream as DEL does), and times out blocked reads whose deadline
    /// passed. The server's own active expiry cycle also reads this clock, but it samples;
    /// this deletes every due key at once, so a test sees them gone right after the call.
    /// `EMQ.CLOCK ADVANCE` does the same for clients.
    pub fn advance_ms(&self, ms: u64) {
        self.clock.advance(ms);
        self.keyspace().catch_up_with_clock();
    }

    /// The server's handle (keyspace, CONFIG SET, shutdown).
    pub fn handle(&self) -> &ServerHandle {
        &self.handle
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

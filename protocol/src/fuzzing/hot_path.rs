//! The server's request path in process, for benchmarks: bytes a client sent go through the
//! connection's own batch runner (`server::pipeline`: decode, execute in one keyspace batch,
//! encode), with no socket, no task and no runtime in between, so a criterion bench measures
//! the per-command cost without network noise.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use echomq_engine::Wake;

use crate::resp::Protocol;
use crate::server::pipeline::{self, Scratch, Step};
use crate::server::{Server, ServerConfig};
use crate::state::{ClientState, ServerState};

/// A server's state and one connected client, fed requests by [`Pipeline::run`].
pub struct Pipeline {
    state: Arc<ServerState>,
    client: ClientState,
    waker: Arc<dyn Wake>,
    input: BytesMut,
    output: BytesMut,
    scratch: Scratch,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").finish_non_exhaustive()
    }
}

struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

impl Pipeline {
    /// A fresh server (its listener bound to `127.0.0.1:0` only to build its state, then
    /// closed) with default settings, and one RESP2 client.
    pub fn new() -> std::io::Result<Pipeline> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let config = ServerConfig {
            bind: "127.0.0.1".into(),
            port: 0,
            requirepass: String::new(),
            default_protocol: Protocol::Resp2,
            databases: 16,
            cluster_enabled: false,
            archive: None,
            archive_replica: None,
            tcp_backlog: crate::state::settings::TCP_BACKLOG_DEFAULT,
            memory_used: crate::state::resident_bytes,
            dir_is_cwd: false,
        };
        let server = runtime.block_on(Server::bind(config))?;
        let state = Arc::clone(server.handle().state());
        drop(server);
        let peer = SocketAddr::from(([127, 0, 0, 1], 40_000));
        let local = SocketAddr::from(([127, 0, 0, 1], 6379));
        let client = state.connect(peer.into(), Some(local.into()));
        Ok(Pipeline {
            state,
            client,
            waker: Arc::new(NoWake),
            input: BytesMut::with_capacity(16 * 1024),
            output: BytesMut::with_capacity(16 * 1024),
            scratch: Scratch::default(),
        })
    }

    /// Runs `requests` as if one read had brought them, and returns the bytes the replies
    /// took (a blocked or paused command, or one that closes the connection, ends the run).
    pub fn run(&mut self, requests: &[u8]) -> usize {
        self.input.extend_from_slice(requests);
        self.output.clear();
        loop {
            let step = pipeline::run_ready(
                &self.state,
                &mut self.client,
                crate::cmd::execute,
                &self.waker,
                &mut self.input,
                &mut self.output,
                &mut self.scratch,
            );
            if !matches!(step, Step::Flush) {
                break;
            }
        }
        self.input.clear();
        self.output.len()
    }
}

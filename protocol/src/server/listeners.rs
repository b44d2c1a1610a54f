//! The unix socket beside the TCP ports (`sockets`), the TLS handshake, and the door every
//! new connection passes (maxclients, protected mode) whichever listener accepted it.
//!
//! A TLS client is admitted after its handshake, which runs in the connection's own task (at
//! most [`TLS_HANDSHAKE_TIMEOUT`]) so a slow handshake never holds up the accept loop. A unix
//! socket client is always local to protected mode. The socket file is removed (if stale) before
//! binding and when the server stops, as Redis does.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio_rustls::TlsAcceptor;

use super::transport::Transport;
use super::{connection, protected};
use crate::state::addr::ClientAddr;
use crate::state::listeners::ListenerSettings;
use crate::state::{ClientState, Execute, ServerState};

/// How long a TLS client has to finish its handshake.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The unix socket listener a server opened.
#[derive(Default)]
pub(super) struct Listeners {
    unix: Option<(UnixListener, PathBuf, ClientAddr)>,
}

impl std::fmt::Debug for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listeners")
            .field("unix", &self.unix.as_ref().map(|(_, path, _)| path))
            .finish()
    }
}

impl Listeners {
    /// Opens what the settings ask for.
    pub(super) fn open(settings: &ListenerSettings) -> Result<Listeners, String> {
        let mut opened = Listeners::default();
        if !settings.unixsocket.is_empty() {
            let path = PathBuf::from(&settings.unixsocket);
            opened.unix = Some(bind_unix(&path, settings.unixsocketperm)?);
        }
        Ok(opened)
    }

    /// Whether nothing was opened.
    pub(super) fn is_empty(&self) -> bool {
        self.unix.is_none()
    }

    /// One line per listener, as [`super::Server::listening`] shows them.
    pub(super) fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some((_, path, _)) = &self.unix {
            lines.push(format!("{} (unix socket)", path.display()));
        }
        lines
    }

    pub(super) fn unix_listener(&self) -> Option<&UnixListener> {
        self.unix.as_ref().map(|(listener, _, _)| listener)
    }

    /// The unix socket's address as its clients show it.
    pub(super) fn unix_path(&self) -> ClientAddr {
        self.unix
            .as_ref()
            .map_or_else(|| ClientAddr::Unix("".into()), |(_, _, addr)| addr.clone())
    }

    /// Stops listening and removes the socket file.
    pub(super) fn close(self) {
        if let Some((listener, path, _)) = self.unix {
            drop(listener);
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!(path = %path.display(), error = %e, "Error removing the unix socket file");
            } else {
                tracing::info!("Removing the unix socket file.");
            }
        }
    }
}

/// Binds the unix socket at `path` (removing a stale socket file first) and sets its mode.
fn bind_unix(path: &PathBuf, perm: u32) -> Result<(UnixListener, PathBuf, ClientAddr), String> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let failed = |e: std::io::Error| format!("Failed opening Unix socket: {}: {e}", path.display());
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.file_type().is_socket()
    {
        std::fs::remove_file(path).map_err(failed)?;
    }
    let listener = UnixListener::bind(path).map_err(failed)?;
    if perm != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm)).map_err(failed)?;
    }
    let addr = ClientAddr::Unix(path.display().to_string().into());
    Ok((listener, path.clone(), addr))
}

/// Accepts from `listener`, or waits forever without one.
pub(super) async fn accept_unix(listener: Option<&UnixListener>) -> std::io::Result<UnixStream> {
    match listener {
        Some(listener) => listener.accept().await.map(|(stream, _)| stream),
        None => std::future::pending().await,
    }
}

/// What the door decided for a new connection.
pub(super) enum Door {
    /// Over `maxclients`.
    Full,
    /// Refused by protected mode.
    Denied,
    /// Admitted, registered as this client.
    Enter(ClientState),
}

/// Counts a new connection and admits it, or not: `maxclients` first, then protected mode.
pub(super) fn door(
    state: &ServerState,
    peer: ClientAddr,
    local: Option<ClientAddr>,
    fd: std::os::fd::RawFd,
) -> Door {
    state.stats().connection_received();
    let denied = {
        let protected_mode = state.settings().protected_mode;
        protected_mode && {
            let nopass = state.acl_users().default_user().nopass;
            protected::refuses(protected_mode, nopass, &peer)
        }
    };
    if !state.has_room() {
        state.stats().connection_rejected();
        return Door::Full;
    }
    if denied {
        state.stats().connection_rejected();
        tracing::debug!(%peer, "protected mode: refused a client not on loopback");
        return Door::Denied;
    }
    let client = state.connect(peer, local);
    client.info.set_fd(fd);
    Door::Enter(client)
}

/// Serves a connection the door decided on.
pub(super) async fn enter<S: Transport>(
    door: Door,
    socket: S,
    state: Arc<ServerState>,
    execute: Execute,
) {
    match door {
        Door::Full => connection::refuse(socket).await,
        Door::Denied => connection::deny(socket).await,
        Door::Enter(client) => connection::serve(socket, state, client, execute).await,
    }
}

/// Runs a TLS client's handshake, then the door, then serves it.
pub(super) async fn serve_tls(
    acceptor: TlsAcceptor,
    socket: TcpStream,
    peer: SocketAddr,
    state: Arc<ServerState>,
    execute: Execute,
) {
    let _ = socket.set_nodelay(true);
    let local = socket.local_addr().ok().map(ClientAddr::Tcp);
    let stream = match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(socket)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "Error accepting a client connection");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let fd = stream.get_ref().0.as_raw_fd();
    let door = door(&state, ClientAddr::Tcp(peer), local, fd);
    enter(door, stream, state, execute).await;
}

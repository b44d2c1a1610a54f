//! Running `echomq serve` as a service: `daemonize`, `pidfile` and `supervised systemd`.
//!
//! `daemonize yes` starts the same command again in the background, detached (its own
//! process group, standard streams on `/dev/null`, working directory kept) and marked by
//! [`DAEMON_ENV`], and returns at once: the parent then exits 0, as Redis's parent does after
//! its fork. Re-running instead of forking keeps the daemon's start like any other (no
//! runtime or threads are copied) and needs no `unsafe`.
//!
//! The pid file is written once the server is bound, and removed when it stops. Under
//! `supervised systemd` (or `auto` with `NOTIFY_SOCKET` set), the server tells systemd
//! `READY=1` with a `STATUS=` once it accepts connections and `STOPPING=1` when it shuts down,
//! as datagrams on the socket `NOTIFY_SOCKET` names (a path, or `@name` for an abstract one).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Set in the daemon's environment (so it does not daemonize again).
pub const DAEMON_ENV: &str = "ECHOMQ_DAEMONIZED";

/// The pid file Redis writes when daemonized without a `pidfile`.
pub const PIDFILE_DAEMON_DEFAULT: &str = "/var/run/redis.pid";

/// Whether this process is the daemon a `daemonize yes` start spawned.
pub fn is_daemon() -> bool {
    std::env::var_os(DAEMON_ENV).is_some()
}

/// Starts this command again as a daemon and returns its pid.
pub fn daemonize(started_in: Option<&Path>) -> Result<u32, String> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| format!("cannot daemonize: {e}"))?;
    let mut command = Command::new(exe);
    // The arguments' relative paths are the caller's, whatever `dir` changed since.
    if let Some(dir) = started_in {
        command.current_dir(dir);
    }
    let child = command
        .args(std::env::args_os().skip(1))
        .env(DAEMON_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot daemonize: {e}"))?;
    Ok(child.id())
}

/// The pid file, removed when dropped.
#[derive(Debug)]
pub struct PidFile(PathBuf);

impl PidFile {
    /// Writes this process's pid to `path`. As Redis, a file that cannot be written is logged
    /// and the server runs on.
    pub fn create(path: &Path) -> Option<PidFile> {
        // Removed at exit from where it was written, even after CONFIG SET dir.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        match std::fs::write(&path, format!("{}\n", std::process::id())) {
            Ok(()) => Some(PidFile(path)),
            Err(e) => {
                tracing::warn!("Failed to write PID file: {e}");
                None
            }
        }
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `supervised`: whom to tell that the server is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Supervised {
    /// Nobody.
    No,
    /// systemd, over `NOTIFY_SOCKET`.
    Systemd,
}

impl Supervised {
    /// The mode `supervised <value>` asks for here: `systemd` (when `NOTIFY_SOCKET` is set;
    /// else Redis's warning and none), `auto` (systemd when `NOTIFY_SOCKET` is set), `upstart`
    /// (not supported: none) or `no`.
    pub fn from_directive(value: &str) -> Supervised {
        let socket = std::env::var_os("NOTIFY_SOCKET").is_some();
        match value {
            "systemd" | "auto" if socket => Supervised::Systemd,
            "systemd" => {
                tracing::warn!(
                    "systemd supervision requested or auto-detected, but NOTIFY_SOCKET not found!"
                );
                Supervised::No
            }
            "upstart" => {
                tracing::warn!("upstart supervision requested, but echomq supports only systemd");
                Supervised::No
            }
            _ => Supervised::No,
        }
    }

    /// Tells systemd `state` (lines of `NAME=value`), if supervised by it.
    pub fn notify(self, state: &str) {
        if self == Supervised::Systemd
            && let Err(e) = sd_notify(state)
        {
            tracing::warn!("Failed to notify systemd: {e}");
        }
    }
}

/// Sends `state` to the socket `NOTIFY_SOCKET` names.
fn sd_notify(state: &str) -> std::io::Result<()> {
    use std::os::unix::net::UnixDatagram;
    let Some(socket) = std::env::var_os("NOTIFY_SOCKET") else {
        return Ok(());
    };
    let datagram = UnixDatagram::unbound()?;
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(socket.as_os_str());
    if let Some(name) = bytes.strip_prefix(b"@") {
        #[cfg(target_os = "linux")]
        {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            datagram.send_to_addr(state.as_bytes(), &addr)?;
            return Ok(());
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = name;
            return Err(std::io::Error::other("abstract sockets need Linux"));
        }
    }
    datagram.send_to(state.as_bytes(), Path::new(&socket))?;
    Ok(())
}

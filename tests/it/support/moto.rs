//! A real S3-compatible server for replication tests: moto (PyPI `moto[s3]`, installed by
//! `scripts/install-peers` into the peers venv), which honours `If-None-Match: *` on PutObject
//! (`docs/reference/object-stores.md`).
//!
//! `moto_server` serves each request on its own thread and its create-only check is
//! check-then-put without a lock: under load two racing creators can both get 200 (seen here
//! in about one of four parallel runs of the 100-round race). S3 and Tigris are atomic, so
//! the helper runs moto's own WSGI app and request handler from the venv's Python behind one
//! lock ([`SERIALIZED_MOTO`]): connections stay concurrent, requests apply one at a time.
//!
//! [`Moto::start`] picks a free loopback port, starts the server, waits until it answers,
//! and kills it by pid when dropped (also when the test panics). A missing binary skips the
//! test with a notice, except under `CI=true`, where it fails. Requests must be signed; any
//! access key works.
//!
//! Binary lookup: `ECHOMQ_MOTO_SERVER`, then `PATH`, then
//! `${ECHOMQ_PEERS:-~/.cache/echomq/peers}/venv/bin/moto_server`; the Python that runs it is
//! the `python` beside it (the venv's).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use std::{env, thread};

use echomq_archive::replica::{S3Config, S3Store};

/// How long moto may take to answer (a cold Python start on a busy machine).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause between readiness probes.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Fresh ports to try when the chosen one was taken.
const START_ATTEMPTS_MAX: usize = 5;
/// Any credentials sign requests moto accepts.
pub const ACCESS_KEY: &str = "testing";
/// See [`ACCESS_KEY`].
pub const SECRET_KEY: &str = "testing";
/// rust-s3 always sends a LocationConstraint on bucket creation, which S3 (and moto) refuse
/// for `us-east-1`; any other region works.
pub const REGION: &str = "eu-west-1";

/// moto's server with every request applied under one lock (argv: host, port). The response
/// body is read inside the lock so a request has fully taken effect before the next starts.
pub const SERIALIZED_MOTO: &str = r#"
import sys, threading
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()
def serialized(environ, start_response):
    with lock:
        return [b"".join(app(environ, start_response))]
run_simple(sys.argv[1], int(sys.argv[2]), serialized, threaded=True, request_handler=MotoRequestHandler)
"#;

/// A running moto server.
#[derive(Debug)]
pub struct Moto {
    child: Child,
    endpoint: String,
}

impl Moto {
    /// Starts moto, or returns `None` (after printing why) when it is not installed. Under
    /// `CI=true` a missing binary panics instead.
    pub fn start() -> Option<Moto> {
        Moto::start_with_env(&[])
    }

    /// [`Moto::start`] with extra environment variables for the server.
    pub fn start_with_env(vars: &[(&str, &str)]) -> Option<Moto> {
        let Some(python) = find_binary().and_then(|b| {
            let python = b.parent()?.join("python");
            python.is_file().then_some(python)
        }) else {
            let why = "moto_server and its python not found (set ECHOMQ_MOTO_SERVER or run scripts/install-peers)";
            if env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true requires moto: {why}");
            }
            eprintln!("SKIPPED: {why}");
            return None;
        };
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS_MAX {
            match Moto::try_start(&python, vars) {
                Ok(moto) => return Some(moto),
                Err(why) => failures.push(why),
            }
        }
        panic!("starting moto with {}: {failures:?}", python.display());
    }

    fn try_start(python: &Path, vars: &[(&str, &str)]) -> Result<Moto, String> {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("probing a free port: {e}"))?
            .port();
        let mut command = Command::new(python);
        command
            .args(["-c", SERIALIZED_MOTO, "127.0.0.1", &port.to_string()])
            .env("MOTO_PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in vars {
            command.env(k, v);
        }
        let child = command.spawn().map_err(|e| format!("spawn: {e}"))?;
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = moto.child.try_wait() {
                return Err(format!("port {port}: exited early with {status}"));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "port {port}: not answering within {START_TIMEOUT:?}"
                ));
            }
            if probe(addr) {
                return Ok(moto);
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// A store on `bucket` with the test credentials (the bucket is not created).
    pub fn store(&self, bucket: &str) -> S3Store {
        self.store_as(bucket, ACCESS_KEY, SECRET_KEY)
    }

    /// A store on `bucket` signing as `access_key`.
    pub fn store_as(&self, bucket: &str, access_key: &str, secret_key: &str) -> S3Store {
        S3Store::new(S3Config {
            bucket: bucket.into(),
            endpoint: Some(self.endpoint.clone()),
            region: REGION.into(),
            access_key: access_key.into(),
            secret_key: secret_key.into(),
            session_token: None,
            tigris: false,
            request_timeout: Duration::from_secs(30),
        })
        .unwrap()
    }

    /// A store on a freshly created `bucket`.
    pub fn bucket(&self, bucket: &str) -> S3Store {
        let store = self.store(bucket);
        store.create_bucket().unwrap();
        store
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether moto's management API answers 200 on `addr` (and so it is moto listening).
fn probe(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET /moto-api/data.json HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.") && &head[9..12] == b"200"
}

fn find_binary() -> Option<PathBuf> {
    if let Some(path) = env::var_os("ECHOMQ_MOTO_SERVER").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let on_path = env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("moto_server"))
        .find(|p| p.is_file());
    on_path.or_else(|| {
        let peers = env::var_os("ECHOMQ_PEERS")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cache/echomq/peers")))?;
        let path = peers.join("venv/bin/moto_server");
        path.is_file().then_some(path)
    })
}

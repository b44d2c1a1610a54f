//! The writer's failure path: a write that fails keeps its bytes and makes write commands
//! answer `-MISCONF` until a later commit succeeds.

use std::fs::{self, File, OpenOptions};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use echomq_engine::{PropagationSink, Reply};

use super::Aof;
use crate::server::{Server, ServerConfig};

fn argv(words: &[&str]) -> Vec<Bytes> {
    words
        .iter()
        .map(|w| Bytes::copy_from_slice(w.as_bytes()))
        .collect()
}

#[test]
fn a_failed_write_keeps_its_bytes_and_a_later_commit_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("appendonly.aof.1.incr.aof");
    File::create(&path).unwrap();
    let aof = Aof::default();
    aof.enabled.store(true, Ordering::Release);
    // Opened read-only: every write fails.
    aof.files.lock().incr = Some(File::open(&path).unwrap());
    aof.buffer
        .feed(vec![(0, argv(&["XADD", "s", "1-1", "f", "v"]))]);
    assert!(aof.commit().is_err());
    assert!(aof.write_error().is_some());
    assert!(fs::read(&path).unwrap().is_empty());
    aof.buffer.feed(vec![(0, argv(&["XDEL", "s", "1-1"]))]);
    aof.files.lock().incr = Some(OpenOptions::new().append(true).open(&path).unwrap());
    aof.commit().unwrap();
    assert_eq!(aof.write_error(), None);
    let text = String::from_utf8(fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        text,
        "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n1-1\r\n$1\r\nf\r\n$1\r\nv\r\n*3\r\n$4\r\nXDEL\r\n$1\r\ns\r\n$3\r\n1-1\r\n"
    );
}

#[test]
fn writes_get_misconf_while_the_aof_cannot_be_written() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = ServerConfig {
        port: 0,
        ..ServerConfig::default()
    };
    let server = runtime.block_on(Server::bind(config)).unwrap();
    let state = Arc::clone(server.handle().state());
    state
        .aof()
        .fail_write("No space left on device (os error 28)");
    let client = state.connect("127.0.0.1:1".parse().unwrap(), None);
    let misconf = crate::cmd::persistence_refusal(&state, &client, "xadd");
    assert_eq!(
        misconf,
        Some(Reply::Error(
            "MISCONF Errors writing to the AOF file: No space left on device (os error 28)".into()
        ))
    );
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "xrange"),
        None
    );
}

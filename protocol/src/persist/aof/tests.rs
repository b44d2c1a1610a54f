//! The writer's failure path: a write that fails keeps its bytes for a later commit.

use std::fs::{self, File, OpenOptions};
use std::sync::atomic::Ordering;

use bytes::Bytes;
use echomq_engine::PropagationSink;

use super::Aof;

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

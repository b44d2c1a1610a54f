//! A server whose archive replicates (as `echomq serve --archive --replicate`), against the
//! in-memory store: a fold on the server wakes the replicator (its poll interval is an hour,
//! so only the notification can get the pages up in time), INFO's `archive_replica_*` fields
//! follow, and a fenced replicator shows in INFO while the server keeps serving.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use echomq::archive::{ARCHIVE_BASE, Archive};
use echomq::testing::{TestServer, TestServerOptions};
use echomq_archive::replica::{
    MemoryStore, Replicator, ReplicatorHandle, ReplicatorLink, WriterOptions, restore_into,
};
use echomq_protocol::server::ArchiveReplica;

use super::Client;
use crate::support::resp::Resp;

const PREFIX: &str = "node";
const LOCATION: &str = "s3://bucket/node";
/// The replicator's poll interval: far beyond any wait here, so replication within a test
/// means the server's notification woke the replicator.
const NEVER: Duration = Duration::from_secs(3600);
const WAIT: Duration = Duration::from_secs(20);

struct Node {
    _dir: tempfile::TempDir,
    archive: Arc<Archive>,
    handle: ReplicatorHandle,
    link: ReplicatorLink,
    server: TestServer,
}

/// A server on a fresh archive replicating to `store`, after its replicator's first round.
fn node(store: &MemoryStore) -> Node {
    let dir = tempfile::tempdir().unwrap();
    let archive = Arc::new(Archive::open(dir.path().join("archive.redb")).unwrap());
    let handle = Replicator::open(
        Arc::clone(&archive),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap()
    .spawn_polling(NEVER);
    let link = handle.link();
    // Past the first (unasked) round, the replicator only moves when notified.
    assert_eq!(link.wait_for(WAIT, |s| s.rounds > 0).rounds, 1);
    let server = TestServer::start_with(TestServerOptions {
        archive: Some(Arc::clone(&archive)),
        archive_replica: Some(ArchiveReplica {
            location: LOCATION.into(),
            link: link.clone(),
        }),
        ..TestServerOptions::default()
    })
    .unwrap();
    Node {
        _dir: dir,
        archive,
        handle,
        link,
        server,
    }
}

fn info(c: &mut Client) -> HashMap<String, String> {
    let Resp::Bulk(text) = c.call(&["INFO", "archive"]) else {
        panic!("INFO")
    };
    String::from_utf8(text)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Adds entries `1-from ..= 1-to` to `key`, then trims them all away (one fold).
fn add_and_trim(c: &mut Client, key: &str, from: u64, to: u64) {
    for n in from..=to {
        let id = format!("1-{n}");
        assert_eq!(
            c.call(&["XADD", key, &id, "f", &format!("v{n}")]),
            Resp::Bulk(id.into_bytes())
        );
    }
    assert_eq!(
        c.call(&["XTRIM", key, "MAXLEN", "0"]),
        Resp::Int((to - from + 1) as i64)
    );
}

fn last_page(archive: &Archive) -> u64 {
    ARCHIVE_BASE + archive.stats().unwrap().archive_pages - 1
}

#[test]
fn a_fold_on_the_server_is_replicated_at_once_and_info_follows_it() {
    let store = MemoryStore::new();
    let n = node(&store);
    let mut c = Client::connect(n.server.addr());
    let before = info(&mut c);
    for (field, value) in [
        ("archive_replica_enabled", "1"),
        ("archive_replica_location", LOCATION),
        ("archive_replica_epoch", "1"),
        ("archive_replica_version", "-1"),
        ("archive_replica_page", "-1"),
        ("archive_replica_pages", "0"),
        ("archive_replica_lag_pages", "0"),
        ("archive_replica_pending", "0"),
        ("archive_replica_fenced", "0"),
        ("archive_replica_running", "1"),
        ("archive_replica_commits", "0"),
        ("archive_replica_notifications", "0"),
        ("archive_replica_last_error", ""),
    ] {
        assert_eq!(
            before.get(field).map(String::as_str),
            Some(value),
            "{field}"
        );
    }

    add_and_trim(&mut c, "events", 1, 10);
    let page = last_page(&n.archive);
    let status = n.link.wait_for(WAIT, |s| s.replicated_page() == Some(page));
    assert_eq!(status.replicated_page(), Some(page), "{status:?}");
    assert_eq!(status.notifications, 1, "one fold, one notification");
    let after = info(&mut c);
    for (field, value) in [
        ("archive_replica_version", "1".to_string()),
        ("archive_replica_page", page.to_string()),
        ("archive_replica_pages", after["archive_pages"].clone()),
        ("archive_replica_lag_pages", "0".into()),
        ("archive_replica_pending", "0".into()),
        ("archive_replica_commits", "1".into()),
        ("archive_replica_notifications", "1".into()),
        ("archive_replica_fenced", "0".into()),
        ("archive_folds", "1".into()),
    ] {
        assert_eq!(after.get(field), Some(&value), "{field}: {after:?}");
    }
    assert_ne!(after["archive_replica_segment_bytes"], "0");

    // A trim that removes nothing folds nothing and does not wake the replicator.
    assert_eq!(c.call(&["XTRIM", "events", "MAXLEN", "0"]), Resp::Int(0));
    assert_eq!(info(&mut c)["archive_replica_notifications"], "1");

    // XADD with MAXLEN folds too, and replicates as the next version.
    c.call(&["XADD", "events", "1-11", "f", "v"]);
    c.call(&["XADD", "events", "MAXLEN", "0", "1-12", "f", "v"]);
    let page = last_page(&n.archive);
    let status = n.link.wait_for(WAIT, |s| s.replicated_page() == Some(page));
    assert_eq!(status.replicated_page(), Some(page), "{status:?}");
    let after = info(&mut c);
    assert_eq!(after["archive_replica_version"], "2");
    assert_eq!(after["archive_replica_page"], page.to_string());
    drop(n.server);
    assert!(!n.handle.stop().fenced);
}

#[test]
fn a_fenced_replicator_shows_in_info_and_the_server_keeps_serving() {
    let store = MemoryStore::new();
    let a = node(&store);
    let mut c = Client::connect(a.server.addr());
    add_and_trim(&mut c, "events", 1, 5);
    let page = last_page(&a.archive);
    assert_eq!(
        a.link
            .wait_for(WAIT, |s| s.replicated_page() == Some(page))
            .replicated_page(),
        Some(page)
    );

    // Another node restores the replica and takes the chain over (epoch 2).
    let dir_b = tempfile::tempdir().unwrap();
    let b = Archive::open(dir_b.path().join("archive.redb")).unwrap();
    restore_into(&b, &store, PREFIX, &mut |_| {}).unwrap();
    let _b = Replicator::open(
        Arc::new(b),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap();

    // A's next fold still commits locally; replicating it finds the version taken.
    add_and_trim(&mut c, "events", 6, 8);
    let status = a.link.wait_for(WAIT, |s| s.fenced);
    assert!(status.fenced && status.stopped, "{status:?}");
    let fields = info(&mut c);
    assert_eq!(fields["archive_replica_fenced"], "1");
    assert_eq!(fields["archive_replica_running"], "0");
    assert_eq!(fields["archive_replica_version"], "1");
    assert_eq!(fields["archive_replica_epoch"], "1");
    assert_ne!(fields["archive_replica_lag_pages"], "0", "{fields:?}");
    assert!(
        fields["archive_replica_last_error"].contains("fenced"),
        "{fields:?}"
    );
    assert_eq!(fields["archive_folds"], "2");

    // Reads and writes go on: the archive holds every trimmed entry.
    let Resp::Array(entries) = c.call(&["EMQ.XRANGE", "events", "-", "+"]) else {
        panic!("EMQ.XRANGE")
    };
    assert_eq!(entries.len(), 8);
    add_and_trim(&mut c, "events", 9, 9);
    let Resp::Array(entries) = c.call(&["EMQ.XRANGE", "events", "-", "+"]) else {
        panic!("EMQ.XRANGE")
    };
    assert_eq!(entries.len(), 9);
    assert_eq!(info(&mut c)["archive_folds"], "3");
}

//! The archive's disk fills during a fold, then frees up: the server keeps
//! serving, refuses what would drop unarchived entries, and recovers on its own.
//!
//! The disk is the archive crate's fault-injecting storage seam
//! (`echomq_archive::fault::FaultyFile`): while its switch is on, every write fails with
//! `ENOSPC`, as on a full file system. Redis has no archive; its posture for a persistence
//! failure (`-MISCONF`, writes refused, nothing changed) is what the server copies.

use std::sync::Arc;

use echomq::archive::Archive;
use echomq::archive::fault::{DiskFull, FaultyFile};
use echomq::testing::{TestServer, TestServerOptions};

use crate::server::{Wire, info_field, show, wait_until};

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

fn xlen(wire: &mut Wire, key: &str) -> String {
    text(&wire.command(&["XLEN", key]))
}

#[test]
fn a_full_disk_refuses_archived_trims_until_the_archive_reopens_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.redb");
    let disk = DiskFull::new();
    let archive = Arc::new(
        Archive::open_with_backend(&path, FaultyFile::opener(path.clone(), Arc::clone(&disk)))
            .unwrap(),
    );
    let server = TestServer::start_with(TestServerOptions {
        archive: Some(Arc::clone(&archive)),
        ..TestServerOptions::default()
    })
    .unwrap();
    let mut wire = Wire::connect(&server);
    for seq in 1..=10 {
        let id = format!("1-{seq}");
        assert_eq!(
            wire.command(&["XADD", "ev", &id, "n", &id]),
            format!("${}\r\n{id}\r\n", id.len()).into_bytes()
        );
    }
    assert_eq!(wire.command(&["XTRIM", "ev", "MAXLEN", "8"]), b":2\r\n");
    assert_eq!(info_field(&mut wire, "archive", "archive_status"), "ok");

    disk.set(true);
    // The first trim that needs a fold fails with the archive's error; nothing is trimmed.
    let failed = wire.command(&["XTRIM", "ev", "MAXLEN", "6"]);
    assert!(
        failed.starts_with(b"-ERR archive: archive I/O error: No space left on device"),
        "{}",
        show(&failed)
    );
    assert_eq!(xlen(&mut wire, "ev"), ":8\r\n");
    assert_eq!(info_field(&mut wire, "archive", "archive_status"), "failed");
    assert!(
        info_field(&mut wire, "archive", "archive_failure").contains("No space left on device")
    );

    // While it cannot fold, every write that would trim the archived stream is refused and
    // changes nothing: XTRIM, and XADD with MAXLEN or MINID (its entry is not added).
    for argv in [
        &["XTRIM", "ev", "MAXLEN", "2"][..],
        &["XTRIM", "ev", "MINID", "1-9"][..],
        &["XADD", "ev", "MAXLEN", "2", "1-11", "n", "x"][..],
        &["XADD", "ev", "MINID", "~", "1-9", "*", "n", "x"][..],
    ] {
        let refused = wire.command(argv);
        assert!(
            refused.starts_with(
                b"-MISCONF the archive cannot fold (archive I/O error: No space left on device"
            ),
            "{argv:?}: {}",
            show(&refused)
        );
        assert_eq!(
            xlen(&mut wire, "ev"),
            ":8\r\n",
            "{argv:?} changed the stream"
        );
    }
    // Writes that trim nothing still run; streams outside the policy trim as usual.
    assert_eq!(
        wire.command(&["XADD", "ev", "1-11", "n", "1-11"]),
        b"$4\r\n1-11\r\n"
    );
    assert_eq!(wire.command(&["SELECT", "1"]), b"+OK\r\n");
    assert_eq!(
        wire.command(&["XADD", "other", "MAXLEN", "1", "1-1", "n", "x"]),
        b"$3\r\n1-1\r\n"
    );
    assert_eq!(wire.command(&["SELECT", "0"]), b"+OK\r\n");
    // Reopening keeps failing while the disk is full, with backoff, counted in INFO.
    wait_until("a reopen attempt failed", || {
        info_field(&mut wire, "archive", "archive_reopen_attempts") != "0"
    });
    assert_eq!(info_field(&mut wire, "archive", "archive_status"), "failed");

    disk.set(false);
    wait_until("the archive reopened", || {
        info_field(&mut wire, "archive", "archive_status") == "ok"
    });
    assert_eq!(info_field(&mut wire, "archive", "archive_reopens"), "1");
    assert_eq!(wire.command(&["XTRIM", "ev", "MAXLEN", "2"]), b":7\r\n");
    // Nothing acknowledged was lost: the archive and the live tail hold all eleven entries.
    let all = wire.command(&["EMQ.XRANGE", "ev", "-", "+"]);
    assert!(all.starts_with(b"*11\r\n"), "{}", show(&all));
    for seq in 1..=11 {
        let id = format!("1-{seq}");
        assert!(
            text(&all).contains(&format!("\r\n{id}\r\n")),
            "{id} missing: {}",
            show(&all)
        );
    }
    archive.check_invariants().unwrap();
}

#[test]
fn a_full_disk_at_the_deferred_fsync_of_an_xadd_trim_keeps_every_entry_live() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.redb");
    let disk = DiskFull::new();
    let archive = Arc::new(
        Archive::open_with_backend(&path, FaultyFile::opener(path.clone(), Arc::clone(&disk)))
            .unwrap(),
    );
    let server = TestServer::start_with(TestServerOptions {
        archive: Some(Arc::clone(&archive)),
        ..TestServerOptions::default()
    })
    .unwrap();
    let mut wire = Wire::connect(&server);
    assert_eq!(
        wire.command(&["CONFIG", "SET", "stream-node-max-entries", "2"]),
        b"+OK\r\n"
    );
    // `~` trims are deferred: the XADD replies at once, the archive's syncer folds what the
    // trim removes, fsyncs, then trims.
    for seq in 1..=6 {
        let id = format!("1-{seq}");
        wire.command(&["XADD", "ev", "MAXLEN", "~", "2", &id, "n", &id]);
    }
    wait_until("the deferred trims ran", || {
        info_field(&mut wire, "archive", "archive_deferred_trims") == "0"
    });
    let trimmed: usize = xlen(&mut wire, "ev")[1..].trim().parse().unwrap();
    assert!(trimmed < 6, "the deferred trims ran: XLEN {trimmed}");
    assert_eq!(info_field(&mut wire, "archive", "archive_status"), "ok");

    disk.set(true);
    // The fold still commits (in memory), the fsync fails: the XADD succeeded, so its reply
    // is its id; the trim did not run, so nothing is lost from the live stream.
    // Two more entries make a whole node the trim may remove (nodes of two entries).
    for id in ["1-7", "1-8"] {
        assert_eq!(
            wire.command(&["XADD", "ev", "MAXLEN", "~", "2", id, "n", id]),
            format!("$3\r\n{id}\r\n").into_bytes()
        );
    }
    wait_until("the syncer's round failed", || {
        info_field(&mut wire, "archive", "archive_status") == "failed"
            && info_field(&mut wire, "archive", "archive_deferred_trims") == "0"
    });
    let after = xlen(&mut wire, "ev");
    assert_eq!(
        after,
        format!(":{}\r\n", trimmed + 2),
        "an entry left the live stream"
    );
    assert_ne!(info_field(&mut wire, "archive", "archive_fold_errors"), "0");

    disk.set(false);
    wait_until("the archive reopened", || {
        info_field(&mut wire, "archive", "archive_status") == "ok"
    });
    // Nothing acknowledged was lost: archive and live tail hold all eight entries once.
    let all = wire.command(&["EMQ.XRANGE", "ev", "-", "+"]);
    assert!(all.starts_with(b"*8\r\n"), "{}", show(&all));
    archive.check_invariants().unwrap();
}

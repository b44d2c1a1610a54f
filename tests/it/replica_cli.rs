//! `echomq serve --archive DIR --replicate s3://... --s3-endpoint URL` and `echomq archive
//! status|restore|verify` against a real moto server: trims fold, folds replicate, a restored
//! node serves the same EMQ.XRANGE, and taking over bumps the epoch.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use echomq_archive::replica::restore::{self, ChainSummary};
use echomq_archive::replica::{Epoch, S3Store};

use crate::archive::Client;
use crate::support::moto::{ACCESS_KEY, Moto, REGION, SECRET_KEY};
use crate::support::process::{self, Running};
use crate::support::resp::Resp;

impl Running {
    /// SIGTERM, then wait for a clean exit (the replicator flushes on the way out).
    fn stop(mut self) {
        let killed = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = self.0.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
}

/// The binary with moto's credentials in the environment, as a user would run it.
fn echomq() -> Command {
    let mut command = process::echomq();
    command
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .env("AWS_REGION", REGION)
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_ENDPOINT_URL_S3");
    command
}

fn serve(args: &[&str]) -> (Running, SocketAddr) {
    process::serve(echomq(), args)
}

fn archive_cmd(moto: &Moto, args: &[&str]) -> Output {
    echomq()
        .arg("archive")
        .args(args)
        .args(["--s3-endpoint", moto.endpoint()])
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Polls the bucket until `done` holds for its chain (bounded; the replicator runs on its own
/// thread in the server process).
fn wait_for(store: &S3Store, prefix: &str, done: impl Fn(&ChainSummary) -> bool) -> ChainSummary {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, summary) = restore::read_chain(store, prefix, &mut |_| {}).unwrap();
        if done(&summary) {
            return summary;
        }
        assert!(
            Instant::now() < deadline,
            "replica never got there: {summary:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn serve_replicates_and_archive_restore_verify_status_work() {
    let Some(moto) = Moto::start() else { return };
    let store = moto.bucket("cli-bucket");
    let replica = "s3://cli-bucket/node";
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let endpoint = ["--s3-endpoint", moto.endpoint()];

    // Node A folds 40 entries on trim; they reach the bucket.
    let (running, addr) = serve(
        &[
            &["--archive", path(&a), "--replicate", replica][..],
            &endpoint[..],
        ]
        .concat(),
    );
    let mut c = Client::connect(addr);
    for seq in 1..=50 {
        c.call(&["XADD", "s", &format!("1-{seq}"), "f", &format!("v{seq}")]);
    }
    assert_eq!(c.call(&["XTRIM", "s", "MAXLEN", "10"]), Resp::Int(40));
    let Resp::Array(before) = c.call(&["EMQ.XRANGE", "s", "-", "1-40"]) else {
        panic!("EMQ.XRANGE")
    };
    assert_eq!(before.len(), 40);
    wait_for(&store, "node", |s| s.pages == 40);
    // INFO reports the replicator the fold woke (its status follows the bucket closely).
    let deadline = Instant::now() + Duration::from_secs(30);
    let info = loop {
        let Resp::Bulk(info) = c.call(&["INFO", "archive"]) else {
            panic!("INFO")
        };
        let info = String::from_utf8(info).unwrap();
        if info.contains("archive_replica_pages:40\r\n") || Instant::now() > deadline {
            break info;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    for line in [
        "archive_replica_enabled:1",
        "archive_replica_location:s3://cli-bucket/node",
        "archive_replica_epoch:1",
        "archive_replica_pages:40",
        "archive_replica_lag_pages:0",
        "archive_replica_pending:0",
        "archive_replica_fenced:0",
        "archive_replica_notifications:1",
        "archive_replica_last_error:\r\n",
    ] {
        assert!(info.contains(line), "{line} missing from\n{info}");
    }
    running.stop();

    let status = archive_cmd(
        &moto,
        &["status", "--archive", path(&a), "--replica", replica],
    );
    assert!(status.status.success(), "{}", text(&status));
    let out = text(&status);
    assert!(out.contains("owns the chain at epoch 1"), "{out}");
    assert!(out.contains("lag: 0 commits"), "{out}");

    let verify = archive_cmd(&moto, &["verify", "--from", replica]);
    assert!(verify.status.success(), "{}", text(&verify));
    assert!(text(&verify).contains("40 pages"), "{}", text(&verify));

    let restore = archive_cmd(
        &moto,
        &["restore", "--from", replica, "--archive", path(&b)],
    );
    assert!(restore.status.success(), "{}", text(&restore));
    // Restoring over an existing archive is refused.
    let again = archive_cmd(
        &moto,
        &["restore", "--from", replica, "--archive", path(&b)],
    );
    assert!(!again.status.success());
    assert!(text(&again).contains("already exists"), "{}", text(&again));
    // A bucket that does not exist is named.
    let missing = archive_cmd(&moto, &["verify", "--from", "s3://no-such-bucket/x"]);
    assert!(!missing.status.success());
    assert!(
        text(&missing).contains("no-such-bucket"),
        "{}",
        text(&missing)
    );

    // Node B serves the same archive and, replicating, takes the chain over (epoch 2).
    let (running, addr) = serve(
        &[
            &["--archive", path(&b), "--replicate", replica][..],
            &endpoint[..],
        ]
        .concat(),
    );
    let mut c = Client::connect(addr);
    let Resp::Array(after) = c.call(&["EMQ.XRANGE", "s", "-", "+"]) else {
        panic!("EMQ.XRANGE")
    };
    assert_eq!(after, before);
    let summary = wait_for(&store, "node", |s| {
        s.head_writer.is_some_and(|(_, e)| e == Epoch(2))
    });
    assert_eq!(summary.pages, 40);
    running.stop();
}

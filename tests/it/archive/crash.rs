//! The crash test: a child process appends, folds and trims in a loop and is SIGKILLed at
//! random points; after each kill nothing acknowledged is missing and nothing is duplicated.
//!
//! Topology, and why: the child is the application (a `Feed` with an archive file) and the
//! live stream lives in a server that survives it, here an in-process [`TestServer`] owned by
//! the parent. That is the deployment where "archive + live" outlives the writer (an
//! in-memory live stream inside the killed process would die with it and prove nothing). The
//! child prints `A <branded id>` after each append returns, so the parent knows exactly which
//! entries were acknowledged; an append the server executed but the child never acknowledged
//! may be there too, once.
//!
//! After each kill the parent reopens the archive (redb recovery plus the archive's own
//! checks), walks every invariant, and reads archive + live through a merge-read: every
//! acknowledged id is there, ids strictly increase (nothing is duplicated), and W equals the
//! highest archived id. Then the next child reopens the same file and carries on.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use echomq::archive::Archive;
use echomq::feed::{Branded, Embedded, Feed, RedisBackend, TrimPolicy, stream_key};
use echomq::testing::TestServer;

use super::Lcg;

/// Set in the child's environment: the archive file and the server's URL.
const CHILD_ENV: &str = "ECHOMQ_ARCHIVE_CRASH_CHILD";
/// Kills the child this many times.
const KILLS: usize = 24;

/// The child: runs until killed. Ignored in normal runs; the crash test starts it with
/// `--ignored --exact`.
#[test]
#[ignore = "the crash test's child process; run by archive::crash::sigkill_at_random_points"]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        panic!("{CHILD_ENV} is not set: this test is the crash test's child, not a test");
    };
    let (path, url) = spec.split_once('|').unwrap();
    let archive = Arc::new(Archive::open(path).unwrap());
    let feed = Feed::new(RedisBackend::connect(url).unwrap()).with_archive(archive);
    let mut rng = Lcg(u64::from(std::process::id()));
    loop {
        for _ in 0..rng.below(20) + 1 {
            let id = feed.append("cm", "events", &[("k", "v")]).unwrap();
            println!("A {id}");
        }
        let policy = match rng.below(4) {
            0 => TrimPolicy::MaxLen {
                n: rng.below(30),
                approx: true,
            },
            1 => TrimPolicy::MaxLen {
                n: rng.below(30),
                approx: false,
            },
            2 => TrimPolicy::MinId {
                before: time::OffsetDateTime::now_utc(),
                approx: true,
            },
            _ => TrimPolicy::MinId {
                before: time::OffsetDateTime::now_utc() - time::Duration::milliseconds(2),
                approx: false,
            },
        };
        feed.trim("cm", "events", policy).unwrap();
    }
}

#[test]
fn sigkill_at_random_points_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.redb");
    let server = TestServer::start_with(echomq::testing::TestServerOptions {
        system_clock: true,
        ..Default::default()
    })
    .unwrap();
    server.keyspace().config().set_node_entries_max(8);
    let exe = std::env::current_exe().unwrap();
    let mut rng = Lcg(u64::from(std::process::id()));
    let mut acknowledged: Vec<Branded> = Vec::new();
    let mut folded_total = 0;
    for kill in 0..KILLS {
        let mut child = Command::new(&exe)
            .args([
                "archive::crash::crash_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env(CHILD_ENV, format!("{}|{}", path.display(), server.url()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|line| {
                    line.strip_prefix("A ")
                        .map(|id| id.parse::<Branded>().unwrap())
                })
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(30 + rng.below(120)));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "kill {kill}: the child ended on its own: {status:?}"
        );
        acknowledged.extend(reader.join().unwrap());

        let archive = Arc::new(Archive::open(&path).unwrap());
        archive.check_invariants().unwrap();
        let key = stream_key("cm", "events");
        let state = archive.stream_state(key.as_bytes()).unwrap();
        let archived = archive
            .range(
                key.as_bytes(),
                echomq::engine::StreamId::MIN,
                echomq::engine::StreamId::MAX,
                None,
            )
            .unwrap();
        assert_eq!(
            state.and_then(|s| s.watermark),
            archived.last().map(|e| e.id),
            "kill {kill}: W is the highest archived id"
        );
        folded_total = archived.len();
        let feed = Feed::new(Embedded::new(server.keyspace().clone())).with_archive(archive);
        let merged: Vec<Branded> = feed
            .read("cm", "events", ..)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert!(
            merged.windows(2).all(|w| w[0] < w[1]),
            "kill {kill}: a merge-read returned an id twice or out of order"
        );
        let missing: Vec<&Branded> = acknowledged
            .iter()
            .filter(|id| merged.binary_search(id).is_err())
            .collect();
        assert!(
            missing.is_empty(),
            "kill {kill}: acknowledged but lost: {missing:?}"
        );
    }
    assert!(acknowledged.len() > KILLS, "the children made progress");
    assert!(folded_total > 0, "trims folded entries into the archive");
}

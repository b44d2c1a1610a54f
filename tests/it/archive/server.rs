//! The server with an archive.

use std::sync::Arc;

use echomq::archive::Archive;
use echomq::feed::{Backend, Feed, RedisBackend, TrimPolicy};
use echomq::testing::{TestServer, TestServerOptions};

use super::{Client, Lcg};
use crate::support::cluster::{self, Cluster};
use crate::support::peer::{Peer, PeerKind};
use crate::support::process::{self, Running};
use crate::support::resp::Resp;

fn archived_server(dir: &std::path::Path) -> (TestServer, Arc<Archive>) {
    let archive = Arc::new(Archive::open(dir.join("archive.redb")).unwrap());
    let server = TestServer::start_with(TestServerOptions {
        archive: Some(archive.clone()),
        ..TestServerOptions::default()
    })
    .unwrap();
    (server, archive)
}

fn int(reply: Resp) -> i64 {
    match reply {
        Resp::Int(n) => n,
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// Random range arguments: incomplete, exclusive, `-`/`+`, with or without COUNT.
fn range_args(rng: &mut Lcg, top: u64) -> (String, String, Option<String>) {
    let bound = |rng: &mut Lcg| -> String {
        match rng.below(6) {
            0 => "-".into(),
            1 => "+".into(),
            2 => format!("({}", rng.below(top + 2)),
            3 => format!("1-{}", rng.below(top + 2)),
            4 => format!("(1-{}", rng.below(top + 2) + 1),
            _ => "1".into(),
        }
    };
    let (a, b) = (bound(rng), bound(rng));
    let count = match rng.below(3) {
        0 => None,
        _ => Some(rng.below(12).to_string()),
    };
    (a, b, count)
}

#[test]
fn trims_fold_first_and_emq_xrange_equals_a_never_trimmed_log() {
    let dir = tempfile::tempdir().unwrap();
    let (server, archive) = archived_server(dir.path());
    let mut ours = Client::connect(server.addr());
    let mut redis = Peer::start(PeerKind::Redis);
    ours.call(&["CONFIG", "SET", "stream-node-max-entries", "4"]);
    let mut rng = Lcg(7);
    let mut seq = 0u64;
    for round in 0..120 {
        // Append to the archived stream (sometimes trimming as it goes) and to two never
        // trimmed copies: one on our server, one on Redis.
        for _ in 0..rng.below(5) + 1 {
            seq += 1;
            let id = format!("1-{seq}");
            let value = format!("v{seq}");
            let mut add = vec!["XADD".to_string(), "live".into()];
            match rng.below(4) {
                0 => add.extend(["MAXLEN".into(), "~".into(), (rng.below(10) + 2).to_string()]),
                1 => add.extend([
                    "MINID".into(),
                    "=".into(),
                    format!("1-{}", seq.saturating_sub(rng.below(12))),
                ]),
                _ => {}
            }
            add.extend([
                id.clone(),
                "f".into(),
                value.clone(),
                "g".into(),
                "x".into(),
            ]);
            assert_eq!(ours.call(&add), Resp::Bulk(id.clone().into_bytes()));
            ours.call(&["XADD", "copy", &id, "f", &value, "g", "x"]);
            if let Some(redis) = redis.as_mut() {
                redis.call(&["XADD", "copy", &id, "f", &value, "g", "x"]);
            }
        }
        if rng.below(2) == 0 {
            let n = rng.below(10).to_string();
            let trim: Vec<String> = match rng.below(4) {
                0 => vec!["MAXLEN".into(), "~".into(), n],
                1 => vec!["MAXLEN".into(), "=".into(), n],
                2 => vec![
                    "MINID".into(),
                    "~".into(),
                    format!("1-{}", seq.saturating_sub(rng.below(10))),
                ],
                _ => vec![
                    "MINID".into(),
                    format!("1-{}", seq.saturating_sub(rng.below(10))),
                ],
            };
            let mut argv = vec!["XTRIM".to_string(), "live".into()];
            argv.extend(trim);
            int(ours.call(&argv));
        }
        let (a, b, count) = range_args(&mut rng, seq);
        for reverse in [false, true] {
            let (ours_cmd, theirs_cmd) = if reverse {
                ("EMQ.XREVRANGE", "XREVRANGE")
            } else {
                ("EMQ.XRANGE", "XRANGE")
            };
            let (x, y) = if reverse { (&b, &a) } else { (&a, &b) };
            let mut merged = vec![ours_cmd.to_string(), "live".into(), x.clone(), y.clone()];
            let mut plain = vec![theirs_cmd.to_string(), "copy".into(), x.clone(), y.clone()];
            if let Some(c) = &count {
                merged.extend(["COUNT".into(), c.clone()]);
                plain.extend(["COUNT".into(), c.clone()]);
            }
            let got = ours.call(&merged);
            assert_eq!(got, ours.call(&plain), "round {round}: {merged:?}");
            if let Some(redis) = redis.as_mut() {
                assert_eq!(
                    got,
                    redis.call(&plain),
                    "round {round} vs Redis: {merged:?}"
                );
            }
        }
    }
    // The live stream really was trimmed, and W is the last archived id.
    let xlen = int(ours.call(&["XLEN", "live"]));
    assert!(
        xlen < seq as i64,
        "the live stream was trimmed ({xlen} of {seq})"
    );
    let state = archive.stream_state(b"live").unwrap().unwrap();
    assert_eq!(
        state.records as i64 + xlen,
        seq as i64,
        "every entry is live or archived, once"
    );
    archive.check_invariants().unwrap();
    assert_eq!(
        archive.watermark(b"copy").unwrap(),
        None,
        "an untrimmed stream folds nothing"
    );
}

#[test]
fn emq_xrange_replies_like_xrange_on_bad_input_and_edge_cases() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _archive) = archived_server(dir.path());
    let mut c = Client::connect(server.addr());
    c.call(&["XADD", "s", "1-1", "f", "v"]);
    c.call(&["SET", "str", "x"]);
    let cases: &[&[&str]] = &[
        &["s", "-", "+"],
        &["s", "-", "+", "COUNT", "0"],
        &["s", "-", "+", "COUNT", "-3"],
        &["s", "-", "+", "COUNT", "x"],
        &["s", "-", "+", "COUNT"],
        &["s", "-", "+", "LIMIT", "1"],
        &["s", "bad", "+"],
        &["s", "(18446744073709551615-18446744073709551615", "+"],
        &["s", "-", "(0-0"],
        &["s", "5", "1"],
        &["missing", "-", "+"],
        &["missing", "-", "+", "COUNT", "0"],
        &["str", "-", "+"],
    ];
    for args in cases {
        for (ours, theirs) in [("EMQ.XRANGE", "XRANGE"), ("EMQ.XREVRANGE", "XREVRANGE")] {
            let mut a = vec![ours];
            a.extend_from_slice(args);
            let mut b = vec![theirs];
            b.extend_from_slice(args);
            assert_eq!(c.call(&a), c.call(&b), "{a:?}");
        }
    }
    assert_eq!(
        c.call(&["EMQ.XRANGE", "s", "-"]),
        Resp::Error("ERR wrong number of arguments for 'emq.xrange' command".into())
    );
}

#[test]
fn xadd_with_trim_inside_multi_folds_and_info_reports_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let (server, archive) = archived_server(dir.path());
    let mut c = Client::connect(server.addr());
    for seq in 1..=5 {
        c.call(&["XADD", "s", &format!("1-{seq}"), "f", "v"]);
    }
    c.call(&["MULTI"]);
    c.call(&["XADD", "s", "MAXLEN", "2", "1-6", "f", "v"]);
    c.call(&["XTRIM", "s", "MAXLEN", "1"]);
    let Resp::Array(replies) = c.call(&["EXEC"]) else {
        panic!("EXEC")
    };
    assert_eq!(replies[1], Resp::Int(1));
    assert_eq!(archive.stream_state(b"s").unwrap().unwrap().records, 5);
    let Resp::Array(all) = c.call(&["EMQ.XRANGE", "s", "-", "+"]) else {
        panic!("EMQ.XRANGE")
    };
    assert_eq!(all.len(), 6);
    let Resp::Bulk(info) = c.call(&["INFO", "archive"]) else {
        panic!("INFO")
    };
    let info = String::from_utf8(info).unwrap();
    for line in [
        "# Archive",
        "archive_enabled:1",
        "archive_streams:1",
        "archive_records:5",
        "archive_folds:2",
        "archive_records_folded:5",
        "archive_fold_errors:0",
        "archive_replica_enabled:0",
        "archive_streams_pattern:*",
    ] {
        assert!(info.contains(line), "{line} missing from\n{info}");
    }
    // A stream outside the policy trims as plain Redis does.
    c.call(&["CONFIG", "SET", "archive-streams", "feed:*"]);
    c.call(&["XADD", "other", "1-1", "f", "v"]);
    c.call(&["XADD", "other", "1-2", "f", "v"]);
    assert_eq!(c.call(&["XTRIM", "other", "MAXLEN", "0"]), Resp::Int(2));
    assert_eq!(archive.watermark(b"other").unwrap(), None);
    assert_eq!(
        c.call(&["EMQ.XRANGE", "other", "-", "+"]),
        Resp::Array(vec![])
    );
}

#[test]
fn info_without_an_archive_says_so() {
    let server = TestServer::start().unwrap();
    let mut c = Client::connect(server.addr());
    let Resp::Bulk(info) = c.call(&["INFO", "archive"]) else {
        panic!("INFO")
    };
    assert!(
        String::from_utf8(info)
            .unwrap()
            .contains("archive_enabled:0")
    );
    c.call(&["XADD", "s", "1-1", "f", "v"]);
    assert_eq!(c.call(&["XTRIM", "s", "MAXLEN", "0"]), Resp::Int(1));
    assert_eq!(c.call(&["EMQ.XRANGE", "s", "-", "+"]), Resp::Array(vec![]));
}

/// Starts `echomq serve --port 0` with `args` in `cwd`; returns it and its address.
fn serve(cwd: &std::path::Path, args: &[&str]) -> (Running, std::net::SocketAddr) {
    let mut command = process::echomq();
    command.current_dir(cwd);
    process::serve(command, args)
}

#[test]
fn serve_archive_keeps_trimmed_entries_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let archive_dir = dir.path().join("arch");
    {
        let (_running, addr) = serve(dir.path(), &["--archive", archive_dir.to_str().unwrap()]);
        let mut c = Client::connect(addr);
        for seq in 1..=4 {
            c.call(&["XADD", "s", &format!("1-{seq}"), "f", "v"]);
        }
        assert_eq!(c.call(&["XTRIM", "s", "MAXLEN", "1"]), Resp::Int(3));
    }
    assert!(archive_dir.join("archive.redb").exists());
    // The live stream died with the process; what was trimmed is still readable.
    let (_running, addr) = serve(dir.path(), &["--archive", archive_dir.to_str().unwrap()]);
    let mut c = Client::connect(addr);
    let Resp::Array(entries) = c.call(&["EMQ.XRANGE", "s", "-", "+"]) else {
        panic!("EMQ.XRANGE")
    };
    assert_eq!(entries.len(), 3);
    // `--archive` without a value uses ./echomq-archive.
    let (_bare, _) = serve(dir.path(), &["--archive"]);
    assert!(
        dir.path()
            .join("echomq-archive")
            .join("archive.redb")
            .exists()
    );
}

/// The feed over a real Redis (no trim preview): the superset fold and guarded MINID trim.
#[test]
fn feed_with_an_archive_over_redis_loses_nothing() {
    let Some(mut peer) = Peer::start(PeerKind::Redis) else {
        return;
    };
    peer.call(&["CONFIG", "SET", "stream-node-max-entries", "4"]);
    let url = format!("redis://{}/", peer.addr());
    archived_feed_loses_nothing(RedisBackend::connect(&url).unwrap());
}

/// The same on a Redis Cluster: the fold and the guarded trim reach the queue's master.
#[test]
fn feed_with_an_archive_over_a_redis_cluster_loses_nothing() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    for port in cluster.live_ports() {
        cluster::call(port, &["CONFIG", "SET", "stream-node-max-entries", "4"]).unwrap();
    }
    archived_feed_loses_nothing(cluster.backend());
}

/// Appends, trims by every policy and reads back: the archive and the stream together hold
/// every minted entry, in order.
fn archived_feed_loses_nothing<B: Backend>(backend: B) {
    let dir = tempfile::tempdir().unwrap();
    let archive = Arc::new(Archive::open(dir.path().join("a.redb")).unwrap());
    let feed = Feed::new(backend).with_archive(archive.clone());
    let mut minted = Vec::new();
    let mut rng = Lcg(3);
    for _ in 0..30 {
        for _ in 0..rng.below(6) {
            minted.push(feed.append("cm", "events", &[("k", "v")]).unwrap());
        }
        let policy = match rng.below(3) {
            0 => TrimPolicy::MaxLen {
                n: rng.below(8),
                approx: true,
            },
            1 => TrimPolicy::MaxLen {
                n: rng.below(8),
                approx: false,
            },
            _ => TrimPolicy::MinId {
                before: time::OffsetDateTime::now_utc(),
                approx: rng.below(2) == 0,
            },
        };
        feed.trim("cm", "events", policy).unwrap();
        let read: Vec<_> = feed
            .read("cm", "events", ..)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(read, minted);
        archive.check_invariants().unwrap();
    }
    assert!(archive.stats().unwrap().records > 0);
}

//! Crash and resume across processes: a consumer in a child process (this test binary again,
//! running the ignored helper below) is killed with SIGKILL while holding entries against
//! `echomq serve`; restarted under the same name, it gets exactly what it held first.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use echomq::feed::backend::{GroupBackend, GroupStart};
use echomq::feed::consumer::Origin;
use echomq::feed::{
    ConsumerSettings, Delivery, RedisBackend, StreamConsumer, Subscription, stream_key,
};

use super::{Log, Target, append, wait_until};
use crate::support::process::Running;

/// The variable that turns the helper on, holding the server's URL.
const CHILD_URL: &str = "ECHOMQ_CONSUMER_CHILD_URL";
/// Where the child stops handling: it prints this and hangs inside the handler.
const STUCK_AT: &str = "5";

fn settings() -> ConsumerSettings {
    ConsumerSettings {
        start: GroupStart::Beginning,
        batch_size: 4,
        block_ms: 50,
        beat_interval_ms: 600_000,
        claim_idle_ms: 600_000,
        ..ConsumerSettings::default()
    }
}

fn subscription() -> Subscription {
    Subscription::new("cm", "crash", "notify", "c1")
}

/// The child's consumer: handles entries until `n == STUCK_AT`, then hangs there until killed.
#[test]
#[ignore = "helper process for the crash test, which runs it with the server's URL"]
fn child_consumer_helper() {
    let Ok(url) = std::env::var(CHILD_URL) else {
        return;
    };
    let backend = RedisBackend::connect(&url).unwrap();
    let _consumer = StreamConsumer::start(
        &backend,
        subscription(),
        settings(),
        |d: Delivery| -> Result<(), String> {
            let mut out = std::io::stdout().lock();
            if d.get("n") == Some(STUCK_AT) {
                writeln!(out, "CHILD stuck {}", d.id).unwrap();
                out.flush().unwrap();
                loop {
                    std::thread::park();
                }
            }
            writeln!(out, "CHILD handled {}", d.id).unwrap();
            Ok(())
        },
    )
    .unwrap();
    loop {
        std::thread::park();
    }
}

#[test]
fn a_killed_consumer_process_resumes_exactly_its_backlog_against_echomq_serve() {
    let target = Target::serve();
    let url = target.url().unwrap();
    let key = stream_key("cm", "crash");
    let feed = target.feed();
    target
        .backend()
        .create_group(&key, "notify", GroupStart::Beginning)
        .unwrap();
    let ids = append(&feed, "crash", 0, 10);

    let mut child = Running(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "consumer::crash::child_consumer_helper",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_URL, &url)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let mut handled = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest may have printed "test <name> ... " on the same line first.
        if let Some((_, id)) = line.split_once("CHILD handled ") {
            handled.push(id.to_string());
        }
        if line.contains("CHILD stuck ") {
            break;
        }
    }
    // SIGKILL: no clean shutdown, no acks of the batch in hand.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert_eq!(handled.len(), 5, "entries 0..=4 were handled");

    // What the dead process held: the whole second batch (4..=7), handled or not, since acks
    // go out per batch.
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let held: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
        .arg(&key)
        .arg("notify")
        .arg("-")
        .arg("+")
        .arg(100)
        .arg("c1")
        .query(&mut connection)
        .unwrap();
    let held: Vec<String> = held.into_iter().map(|(id, ..)| id).collect();
    let expected: Vec<String> = ids[4..8]
        .iter()
        .map(|b| b.stream_id().to_string())
        .collect();
    assert_eq!(held, expected);

    let later = append(&feed, "crash", 10, 2);
    let log = Log::default();
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription(),
        settings(),
        move |d: Delivery| {
            l.record(&d);
            Ok::<(), String>(())
        },
    )
    .unwrap();
    wait_until("backlog and new entries", || log.len() == 8);
    let seen = log.all();
    assert_eq!(
        seen[..4].iter().map(|s| s.id).collect::<Vec<_>>(),
        ids[4..8].to_vec()
    );
    assert!(
        seen[..4]
            .iter()
            .all(|s| s.origin == Origin::Backlog && s.attempts == 2)
    );
    let mut new = ids[8..].to_vec();
    new.extend(later);
    assert_eq!(seen[4..].iter().map(|s| s.id).collect::<Vec<_>>(), new);
    assert!(seen[4..].iter().all(|s| s.origin == Origin::New));
    let metrics = consumer.stop().unwrap();
    assert_eq!((metrics.acked, metrics.pending), (8, 0));
}

//! A keyspace whose effects are collected, for tests of commands' effects: the forms they
//! propagate, the events they fire (every class enabled) and the changes they count.

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::clock::ManualClock;
use crate::config::Config;
use crate::keyspace::Keyspace;
use crate::notify::{Notification, NotificationSink};
use crate::propagate::PropagationSink;
use crate::reply::Reply;

/// The clock every test starts at (ms).
pub(crate) const NOW_MS: u64 = 1_000_000;

#[derive(Debug, Default)]
struct Collect(Mutex<Vec<Vec<Bytes>>>);

impl PropagationSink for Collect {
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        self.0
            .lock()
            .extend(commands.into_iter().map(|(_, argv)| argv));
    }
}

#[derive(Debug, Default)]
struct Events(Mutex<Vec<&'static str>>);

impl NotificationSink for Events {
    fn notify(&self, _flags: u32, events: Vec<Notification>) {
        self.0.lock().extend(events.into_iter().map(|n| n.event));
    }
}

pub(crate) struct Fixture {
    /// Shared, so blocking commands can be run against it.
    pub(crate) ks: Arc<Keyspace>,
    /// The keyspace's clock.
    pub(crate) clock: Arc<ManualClock>,
    propagated: Arc<Collect>,
    events: Arc<Events>,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let clock = Arc::new(ManualClock::new(NOW_MS));
        let ks = Arc::new(Keyspace::with_databases(
            clock.clone(),
            Arc::new(Config::default()),
            1,
        ));
        let propagated = Arc::new(Collect::default());
        let events = Arc::new(Events::default());
        ks.set_propagation_sink(Some(propagated.clone()));
        ks.config()
            .set_notify_flags(crate::notify::parse("KEAnoc").unwrap_or(0));
        ks.set_notification_sink(Some(events.clone()));
        Fixture {
            ks,
            clock,
            propagated,
            events,
        }
    }

    pub(crate) fn run(&self, line: &str) -> Result<Reply, String> {
        let argv: Vec<&str> = line.split(' ').collect();
        self.ks.execute(&argv).map_err(|e| e.to_string())
    }

    /// What was propagated since the last call, each command as one line.
    pub(crate) fn propagated(&self) -> Vec<String> {
        std::mem::take(&mut *self.propagated.0.lock())
            .iter()
            .map(|argv| {
                argv.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// The events fired since the last call.
    pub(crate) fn events(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.events.0.lock())
    }

    /// A SCAN-family call's cursor and elements.
    pub(crate) fn scan_call(&self, line: &str) -> (String, Vec<String>) {
        let text = |reply: Reply| match reply {
            Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
            other => panic!("{line}: {other:?}"),
        };
        match self.run(line) {
            Ok(Reply::Array(parts)) => {
                let mut parts = parts.into_iter();
                let (Some(cursor), Some(items)) = (parts.next(), parts.next()) else {
                    panic!("{line}")
                };
                let items = match items {
                    Reply::Array(items) => items,
                    Reply::Bulks(bulks) => bulks.to_replies(),
                    other => panic!("{line}: {other:?}"),
                };
                (text(cursor), items.into_iter().map(text).collect())
            }
            other => panic!("{line}: {other:?}"),
        }
    }

    /// Scans to the end with `command` (a SCAN-family call with `{}` for the cursor, COUNT
    /// 20) while, after the third call, `add(i)` runs for `i` in 600..1200, and after the
    /// sixth `remove(i)` for the same: enough to grow and shrink any index and compact record
    /// pages mid-scan. The calls made and everything returned.
    pub(crate) fn scan_with_churn(
        &self,
        command: &str,
        add: impl Fn(usize) -> String,
        remove: impl Fn(usize) -> String,
    ) -> (usize, Vec<String>) {
        self.scan_through(command, |call| {
            let step: &dyn Fn(usize) -> String = match call {
                3 => &add,
                6 => &remove,
                _ => return,
            };
            for i in 600..1200 {
                if let Err(e) = self.run(&step(i)) {
                    panic!("{}: {e}", step(i));
                }
            }
        })
    }

    /// Scans to the end with `command` (a SCAN-family call with `{}` for the cursor), running
    /// `between(call)` after each call; the calls made and everything returned.
    pub(crate) fn scan_through(
        &self,
        command: &str,
        mut between: impl FnMut(usize),
    ) -> (usize, Vec<String>) {
        let (mut cursor, mut seen, mut calls) = ("0".to_string(), Vec::new(), 0);
        loop {
            let (next, items) = self.scan_call(&command.replace("{}", &cursor));
            calls += 1;
            seen.extend(items);
            if next == "0" {
                return (calls, seen);
            }
            between(calls);
            cursor = next;
        }
    }
}

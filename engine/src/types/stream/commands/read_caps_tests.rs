//! XREADGROUP's MAXCOUNT/MAXSIZE at the engine's level (`docs/reference/streams-8.md` §6.4): an
//! entry the caps skip leaves no trace (no PEL entry, no cursor move, no claim, no propagated
//! form, no event), and a stream the caps never reach is not touched (its consumer is not
//! created).

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::clock::ManualClock;
use crate::keyspace::{Keyspace, Value};
use crate::notify::{Notification, NotificationSink};
use crate::propagate::PropagationSink;
use crate::reply::Reply;
use crate::reply_size::Protocol;

#[derive(Debug, Default)]
struct Forms(Mutex<Vec<String>>);

impl PropagationSink for Forms {
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        let mut out = self.0.lock();
        for (_, argv) in commands {
            let words: Vec<String> = argv
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            out.push(words.join(" "));
        }
    }
}

#[derive(Debug, Default)]
struct Events(Mutex<Vec<String>>);

impl NotificationSink for Events {
    fn notify(&self, _flags: u32, events: Vec<Notification>) {
        let mut out = self.0.lock();
        out.extend(events.iter().map(|e| format!("{e:?}")));
    }
}

fn setup() -> (Arc<Keyspace>, Arc<Forms>, Arc<Events>) {
    let ks = Arc::new(Keyspace::new(Arc::new(ManualClock::new(1_000))));
    for key in ["a", "b"] {
        for i in 1..=3 {
            ks.execute(&["XADD", key, &format!("{i}-0"), "f", "v"])
                .unwrap();
        }
        ks.execute(&["XGROUP", "CREATE", key, "g", "0"]).unwrap();
    }
    let forms = Arc::new(Forms::default());
    let events = Arc::new(Events::default());
    ks.set_propagation_sink(Some(forms.clone()));
    ks.config()
        .set_notify_flags(crate::notify::parse("KEA").unwrap_or(0));
    ks.set_notification_sink(Some(events.clone()));
    (ks, forms, events)
}

fn group_state(ks: &Keyspace, key: &[u8]) -> (String, usize, Vec<String>) {
    ks.run(|db, _| match db.get(key) {
        Some(Value::Stream(s)) => {
            let g = s.group(b"g").unwrap();
            let consumers = g
                .consumers()
                .map(|(c, _)| String::from_utf8_lossy(c.as_bytes()).into_owned())
                .collect();
            (g.last_id.to_string(), g.pending().count(), consumers)
        }
        _ => unreachable!("set up as a stream"),
    })
}

#[test]
fn skipped_entries_and_unreached_streams_leave_no_trace() {
    let (ks, forms, events) = setup();
    let reply = ks
        .execute(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "2",
            "MAXCOUNT",
            "2",
            "STREAMS",
            "a",
            "b",
            ">",
            ">",
        ])
        .unwrap();
    let Reply::StreamMap(pairs) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(pairs.len(), 1, "stream b is left out");
    assert_eq!(group_state(&ks, b"a"), ("2-0".into(), 2, vec!["c".into()]));
    assert_eq!(group_state(&ks, b"b"), ("0-0".into(), 0, vec![]));
    let forms = forms.0.lock().clone();
    assert_eq!(forms.len(), 3, "{forms:?}");
    assert!(forms[0].starts_with("XCLAIM a g c 0 1-0 "), "{forms:?}");
    assert!(forms[1].starts_with("XCLAIM a g c 0 2-0 "), "{forms:?}");
    assert!(
        forms[2].starts_with("XGROUP SETID a g 2-0 ENTRIESREAD 2"),
        "{forms:?}"
    );
    let events = events.0.lock().clone();
    assert!(events.iter().all(|e| !e.contains("\"b\"")), "{events:?}");
}

#[test]
fn max_size_one_claims_one_entry_and_keeps_the_others_owned() {
    let (ks, _, _) = setup();
    ks.execute(&["XREADGROUP", "GROUP", "g", "old", "STREAMS", "a", ">"])
        .unwrap();
    let reply = ks
        .execute(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "new",
            "MAXSIZE",
            "1",
            "CLAIM",
            "0",
            "STREAMS",
            "a",
            ">",
        ])
        .unwrap();
    let Reply::StreamMap(pairs) = reply else {
        panic!("{reply:?}")
    };
    assert!(matches!(&pairs[0].1, Reply::Array(e) if e.len() == 1));
    let owners: Vec<Option<String>> = ks.run(|db, _| match db.get(b"a") {
        Some(Value::Stream(s)) => s
            .group(b"g")
            .unwrap()
            .pending()
            .map(|(_, n)| {
                n.owner
                    .as_ref()
                    .map(|o| String::from_utf8_lossy(o.as_bytes()).into_owned())
            })
            .collect(),
        _ => unreachable!(),
    });
    assert_eq!(
        owners,
        [Some("new".into()), Some("old".into()), Some("old".into())]
    );
}

#[test]
fn the_same_max_size_cuts_by_the_callers_protocol() {
    let ks = Arc::new(Keyspace::new(Arc::new(ManualClock::new(1_000))));
    for i in 1..=5 {
        ks.execute(&["XADD", "s", &format!("{i}-0"), "f", "v"])
            .unwrap();
    }
    let argv = ["XREAD", "MAXSIZE", "40", "STREAMS", "s", "0"];
    let read = |protocol| {
        let mut batch = ks.batch();
        match batch.execute_blocking_as(0, protocol, &argv, Arc::new(crate::Parker::default())) {
            crate::Execution::Done(Ok(Reply::StreamMap(pairs))) => match &pairs[0].1 {
                Reply::Entries(e) => e.len(),
                other => panic!("{other:?}"),
            },
            _ => panic!("no reply"),
        }
    };
    // One entry is 31 bytes; the header 11 (RESP2) or 7 (RESP3) bytes.
    assert_eq!(read(Protocol::Resp2), 1);
    assert_eq!(read(Protocol::Resp3), 2);
}

#[test]
fn lazy_expiry_finds_the_keys_past_option_values_and_a_group_named_streams() {
    let spec = crate::command::spec(b"xreadgroup").unwrap();
    let argv: Vec<&[u8]> = "XREADGROUP GROUP STREAMS c MAXCOUNT 1 STREAMS k >"
        .split(' ')
        .map(str::as_bytes)
        .collect();
    assert_eq!(crate::expire::command_keys(spec, &argv), vec![&b"k"[..]]);
}

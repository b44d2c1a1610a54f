//! Propagation replays to the same state: any sequence of stream commands, its propagated
//! form replayed into an empty keyspace, gives the same entries, stream counters, groups,
//! PELs (owners, delivery times and counts) and consumers.

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use proptest::prelude::*;

use crate::clock::ManualClock;
use crate::config::Config;
use crate::keyspace::{Db, Keyspace, Value};
use crate::notify::{Notification, NotificationSink};
use crate::propagate::PropagationSink;

#[derive(Debug, Default)]
struct Collect(Mutex<Vec<(usize, Vec<Bytes>)>>);

impl PropagationSink for Collect {
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        self.0.lock().extend(commands);
    }
}

/// Counts the events it is handed, so every command also records its events (and the effects
/// log's invariants cover them).
#[derive(Debug, Default)]
struct Events(std::sync::atomic::AtomicUsize);

impl NotificationSink for Events {
    fn notify(&self, _flags: u32, events: Vec<Notification>) {
        self.0
            .fetch_add(events.len(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// Everything propagation must reproduce, as text.
fn dump(ks: &Keyspace) -> String {
    let mut out = String::new();
    ks.dirty_with(|dbs: &[Db]| {
        for (i, db) in dbs.iter().enumerate() {
            let mut keys: Vec<_> = db.keys().cloned().collect();
            keys.sort();
            for key in keys {
                out.push_str(&format!("db{i} {key:?}: "));
                match db.get(&key) {
                    Some(Value::Stream(s)) => {
                        out.push_str(&format!(
                            "len {} last {} maxdel {} added {}\n",
                            s.len(),
                            s.last_id(),
                            s.max_deleted_entry_id(),
                            s.entries_added()
                        ));
                        for e in s.range(crate::StreamId::MIN, crate::StreamId::MAX) {
                            out.push_str(&format!(
                                "  {} {:?}\n",
                                e.id,
                                e.fields().collect::<Vec<_>>()
                            ));
                        }
                        for (name, g) in s.groups() {
                            out.push_str(&format!(
                                "  group {name:?} last {} read {:?}\n",
                                g.last_id, g.entries_read
                            ));
                            for (id, n) in g.pending() {
                                out.push_str(&format!(
                                    "    pel {id} {:?} t{} n{}\n",
                                    n.owner.as_ref().map(|o| o.as_bytes()),
                                    n.delivery_time,
                                    n.delivery_count
                                ));
                            }
                            let mut consumers: Vec<_> =
                                g.consumers().map(|(c, _)| c.as_bytes().to_vec()).collect();
                            consumers.sort();
                            out.push_str(&format!("    consumers {consumers:?}\n"));
                        }
                    }
                    Some(Value::String(v)) => out.push_str(&format!("string {v:?}\n")),
                    Some(Value::Hash(h)) => {
                        let mut fields: Vec<_> = h.entries().collect();
                        fields.sort();
                        out.push_str(&format!("hash {fields:?}\n"));
                    }
                    Some(Value::Set(s)) => {
                        let mut members = s.members();
                        members.sort();
                        out.push_str(&format!("set {members:?}\n"));
                    }
                    Some(Value::List(l)) => out.push_str(&format!("list {:?}\n", l.to_vec())),
                    Some(Value::ZSet(z)) => {
                        let entries: Vec<_> = z.order().iter().collect();
                        out.push_str(&format!("zset {entries:?}\n"));
                    }
                    None => out.push_str("gone\n"),
                }
            }
        }
    });
    out
}

fn keyspace(clock: &Arc<ManualClock>) -> Arc<Keyspace> {
    Arc::new(Keyspace::with_databases(
        clock.clone(),
        Arc::new(Config::default()),
        2,
    ))
}

fn op() -> impl Strategy<Value = Vec<String>> {
    let key = prop_oneof![Just("s"), Just("t")];
    let id = (0u64..6, 0u64..3).prop_map(|(ms, seq)| format!("{ms}-{seq}"));
    let group = prop_oneof![Just("g"), Just("h")];
    let consumer = prop_oneof![Just("a"), Just("b")];
    let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    prop_oneof![
        4 => (key.clone(), 0u64..5).prop_map(move |(k, n)| words(&["XADD", k, "MAXLEN", "~", &n.to_string(), "*", "f", "v"])),
        4 => key.clone().prop_map(move |k| words(&["XADD", k, "*", "f", "v"])),
        1 => (key.clone(), id.clone()).prop_map(move |(k, i)| words(&["XADD", k, &i, "f", "v"])),
        1 => (key.clone(), id.clone()).prop_map(move |(k, i)| words(&["XDEL", k, &i])),
        1 => (key.clone(), 0u64..4).prop_map(move |(k, n)| words(&["XTRIM", k, "MAXLEN", &n.to_string()])),
        1 => (key.clone(), id.clone()).prop_map(move |(k, i)| words(&["XTRIM", k, "MINID", "~", &i])),
        1 => (key.clone(), group.clone()).prop_map(move |(k, g)| words(&["XGROUP", "CREATE", k, g, "0", "MKSTREAM"])),
        1 => (key.clone(), group.clone(), id.clone()).prop_map(move |(k, g, i)| words(&["XGROUP", "SETID", k, g, &i])),
        1 => (key.clone(), group.clone(), consumer.clone()).prop_map(move |(k, g, c)| words(&["XGROUP", "DELCONSUMER", k, g, c])),
        1 => (key.clone(), group.clone(), consumer.clone()).prop_map(move |(k, g, c)| words(&["XGROUP", "CREATECONSUMER", k, g, c])),
        1 => (key.clone(), group.clone()).prop_map(move |(k, g)| words(&["XGROUP", "DESTROY", k, g])),
        4 => (key.clone(), group.clone(), consumer.clone(), any::<bool>()).prop_map(move |(k, g, c, noack)| {
            let mut v = words(&["XREADGROUP", "GROUP", g, c, "COUNT", "2"]);
            if noack { v.push("NOACK".into()); }
            v.extend(words(&["STREAMS", k, ">"]));
            v
        }),
        1 => (key.clone(), group.clone(), consumer.clone()).prop_map(move |(k, g, c)| words(&["XREADGROUP", "GROUP", g, c, "STREAMS", k, "0"])),
        2 => (group.clone(), consumer.clone(), 1u64..4, prop_oneof![Just("1"), Just("60"), Just("100000")], any::<bool>()).prop_map(move |(g, c, n, size, history)| {
            let from = if history { "0" } else { ">" };
            words(&["XREADGROUP", "GROUP", g, c, "MAXCOUNT", &n.to_string(), "MAXSIZE", size, "STREAMS", "s", "t", from, from])
        }),
        1 => (key.clone(), group.clone(), id.clone()).prop_map(move |(k, g, i)| words(&["XACK", k, g, &i])),
        1 => (key.clone(), group.clone(), consumer.clone(), id.clone()).prop_map(move |(k, g, c, i)| words(&["XCLAIM", k, g, c, "0", &i])),
        1 => (key.clone(), group.clone(), consumer.clone(), id.clone()).prop_map(move |(k, g, c, i)| words(&["XCLAIM", k, g, c, "0", &i, "JUSTID", "LASTID", "9-0"])),
        1 => (key.clone(), group.clone(), consumer.clone()).prop_map(move |(k, g, c)| words(&["XAUTOCLAIM", k, g, c, "0", "0", "COUNT", "2"])),
        1 => (key.clone(), id.clone()).prop_map(move |(k, i)| words(&["XSETID", k, &i])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn replaying_the_propagated_form_rebuilds_the_state(ops in prop::collection::vec((op(), 0u64..3), 1..60)) {
        let clock = Arc::new(ManualClock::new(1_000));
        let original = keyspace(&clock);
        let sink = Arc::new(Collect::default());
        original.set_propagation_sink(Some(sink.clone()));
        original.config().set_notify_flags(crate::notify::parse("KEA").unwrap_or(0));
        original.set_notification_sink(Some(Arc::new(Events::default())));
        for (argv, advance) in &ops {
            clock.advance(*advance);
            let _ = original.execute(argv);
            let checked = original.check_invariants();
            prop_assert!(checked.is_ok(), "{:?}", checked);
        }
        let replica = keyspace(&Arc::new(ManualClock::new(999_999)));
        for (db, argv) in sink.0.lock().iter() {
            replica.run_db(*db, |db, snapshot| {
                let _ = crate::command::execute(db, snapshot, argv);
            });
        }
        prop_assert_eq!(dump(&original), dump(&replica));
        prop_assert!(replica.check_invariants().is_ok());
    }
}

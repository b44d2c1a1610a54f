//! The typed writes ([`Db::xadd`], [`Db::xtrim`], [`Db::xack`], [`Db::xreadgroup`],
//! [`Db::xautoclaim`]) have the effects of the commands they stand for: the same state, the
//! same changes counted and the same events, and forms that replay to the same state.

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use super::xreadgroup::{GroupFrom, GroupRead};
use crate::clock::ManualClock;
use crate::group::AutoClaimOptions;
use crate::id::{AddId, StreamId};
use crate::keyspace::Keyspace;
use crate::notify::{Notification, NotificationSink};
use crate::propagate::PropagationSink;
use crate::stream::Trim;

#[derive(Debug, Default)]
struct Record {
    forms: Mutex<Vec<Vec<Bytes>>>,
    events: Mutex<Vec<String>>,
}

impl PropagationSink for Record {
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        self.forms
            .lock()
            .extend(commands.into_iter().map(|(_, argv)| argv));
    }
}

impl NotificationSink for Record {
    fn notify(&self, _flags: u32, events: Vec<Notification>) {
        self.events.lock().extend(
            events
                .into_iter()
                .map(|e| format!("{} {}", e.event, String::from_utf8_lossy(&e.key))),
        );
    }
}

fn keyspace() -> (Arc<Keyspace>, Arc<Record>) {
    let ks = Arc::new(Keyspace::new(Arc::new(ManualClock::new(1_000))));
    let record = Arc::new(Record::default());
    ks.config()
        .set_notify_flags(crate::notify::parse("KEA").unwrap_or(0));
    ks.set_propagation_sink(Some(record.clone()));
    ks.set_notification_sink(Some(record.clone()));
    (ks, record)
}

fn id(ms: u64) -> StreamId {
    StreamId { ms, seq: 0 }
}

/// The keyspace's streams, groups and PELs, as XINFO STREAM FULL shows them.
fn state(ks: &Keyspace) -> String {
    format!("{:?}", ks.execute(&["XINFO", "STREAM", "s", "FULL"]))
}

#[test]
fn typed_writes_have_their_commands_effects() {
    let (typed, typed_record) = keyspace();
    let (commands, command_record) = keyspace();
    for ms in 1..=4 {
        commands
            .execute(&["XADD", "s", &format!("{ms}-0"), "f", "v"])
            .unwrap();
        typed
            .run(|db, snapshot| db.xadd(b"s", AddId::Explicit(id(ms)), &[b"f", b"v"], snapshot))
            .unwrap();
    }
    for ks in [&typed, &commands] {
        ks.execute(&["XGROUP", "CREATE", "s", "g", "0"]).unwrap();
    }
    commands
        .execute(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "3",
            "STREAMS",
            "s",
            ">",
        ])
        .unwrap();
    commands.execute(&["XACK", "s", "g", "1-0"]).unwrap();
    commands
        .execute(&["XAUTOCLAIM", "s", "g", "d", "0", "0"])
        .unwrap();
    commands
        .execute(&["XTRIM", "s", "MAXLEN", "=", "2"])
        .unwrap();
    typed
        .run(|db, snapshot| {
            let read = GroupRead {
                group: b"g",
                consumer: b"c",
                count: 3,
                noack: false,
            };
            db.xreadgroup(b"s", &read, GroupFrom::New, snapshot.now_ms, &mut |_| {})?;
            db.xack(b"s", b"g", &[id(1)])?;
            let options = AutoClaimOptions {
                min_idle_ms: 0,
                start: StreamId::MIN,
                count: 100,
                just_id: false,
            };
            db.xautoclaim(b"s", b"g", b"d", &options, snapshot.now_ms, &mut |_| {})?;
            db.xtrim(b"s", &Trim::maxlen(2), snapshot)
        })
        .unwrap();
    assert_eq!(state(&typed), state(&commands));
    assert_eq!(typed.dirty(), commands.dirty());
    assert_eq!(*typed_record.events.lock(), *command_record.events.lock());
    // The typed forms replay to the same state (at the same time: consumers' seen and active
    // times are not propagated, as in Redis).
    let replica = Keyspace::new(Arc::new(ManualClock::new(1_000)));
    for argv in typed_record.forms.lock().iter() {
        replica.execute(argv).unwrap();
    }
    assert_eq!(state(&replica), state(&typed));
    typed.check_invariants().unwrap();
}

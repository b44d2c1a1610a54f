//! Propagation replays to the same state for hashes (field TTLs included) and sets: any
//! sequence of their commands, its propagated form replayed into an empty keyspace, gives the
//! same fields, values, expiry times and members.

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use proptest::prelude::*;

use crate::clock::ManualClock;
use crate::config::Config;
use crate::keyspace::{Db, Keyspace, Value};
use crate::propagate::PropagationSink;

#[derive(Debug, Default)]
struct Collect(Mutex<Vec<(usize, Vec<Bytes>)>>);

impl PropagationSink for Collect {
    fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        self.0.lock().extend(commands);
    }
}

/// The hashes and sets, in an order that does not depend on a table's.
fn dump(ks: &Keyspace) -> String {
    let mut out = String::new();
    ks.dirty_with(|dbs: &[Db]| {
        let db = &dbs[0];
        let mut keys: Vec<_> = db.keys().cloned().collect();
        keys.sort();
        for key in keys {
            match db.get(&key) {
                Some(Value::Hash(h)) => {
                    let mut fields: Vec<_> = h.entries().collect();
                    fields.sort();
                    out.push_str(&format!("{key:?} hash {fields:?}\n"));
                }
                Some(Value::Set(s)) => {
                    let mut members = s.members();
                    members.sort();
                    out.push_str(&format!("{key:?} set {members:?}\n"));
                }
                other => out.push_str(&format!("{key:?} {other:?}\n")),
            }
        }
    });
    out
}

fn op() -> impl Strategy<Value = Vec<String>> {
    let hkey = prop_oneof![Just("h"), Just("g")];
    let skey = prop_oneof![Just("s"), Just("t")];
    let field = prop_oneof![Just("a"), Just("b"), Just("c"), Just("1")];
    let member = prop_oneof![Just("1"), Just("2"), Just("x"), Just("y")];
    let cond = prop_oneof![Just(""), Just("NX"), Just("XX"), Just("GT"), Just("LT")];
    let words = |v: &[&str]| {
        v.iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    prop_oneof![
        4 => (hkey.clone(), field.clone(), field.clone()).prop_map(move |(k, f, g)| words(&["HSET", k, f, "v", g, "w"])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HSETNX", k, f, "n"])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HDEL", k, f])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HINCRBY", k, f, "2"])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HINCRBYFLOAT", k, f, "1.5"])),
        3 => (hkey.clone(), field.clone(), cond.clone(), 1u64..4).prop_map(move |(k, f, c, n)| {
            words(&["HPEXPIRE", k, &(n * 100_000).to_string(), c, "FIELDS", "2", f, "zz"])
        }),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HPEXPIREAT", k, "1", "FIELDS", "1", f])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HPERSIST", k, "FIELDS", "1", f])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HGETDEL", k, "FIELDS", "1", f])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HGETEX", k, "PX", "300000", "FIELDS", "1", f])),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HGETEX", k, "PERSIST", "FIELDS", "1", f])),
        1 => (hkey.clone(), field.clone(), prop_oneof![Just("KEEPTTL"), Just("FNX"), Just("FXX"), Just("")]).prop_map(move |(k, f, o)| {
            words(&["HSETEX", k, o, "PX", "200000", "FIELDS", "1", f, "e"])
        }),
        1 => (hkey.clone(), field.clone()).prop_map(move |(k, f)| words(&["HSETEX", k, "KEEPTTL", "FIELDS", "1", f, "k"])),
        4 => (skey.clone(), member.clone(), member.clone()).prop_map(move |(k, m, n)| words(&["SADD", k, m, n])),
        1 => (skey.clone(), member.clone()).prop_map(move |(k, m)| words(&["SREM", k, m])),
        1 => skey.clone().prop_map(move |k| words(&["SPOP", k])),
        1 => (skey.clone(), 0u64..4).prop_map(move |(k, n)| words(&["SPOP", k, &n.to_string()])),
        1 => member.clone().prop_map(move |m| words(&["SMOVE", "s", "t", m])),
        1 => Just(words(&["SINTERSTORE", "u", "s", "t"])),
        1 => Just(words(&["SUNIONSTORE", "u", "s", "t"])),
        1 => Just(words(&["SDIFFSTORE", "t", "s", "u"])),
    ]
}

fn keyspace(clock: &Arc<ManualClock>) -> Keyspace {
    Keyspace::with_databases(clock.clone(), Arc::new(Config::default()), 1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn replaying_hash_and_set_writes_rebuilds_the_state(ops in prop::collection::vec((op(), 0u64..3), 1..60)) {
        let clock = Arc::new(ManualClock::new(1_000));
        let original = keyspace(&clock);
        let sink = Arc::new(Collect::default());
        original.set_propagation_sink(Some(sink.clone()));
        original.config().set_notify_flags(crate::notify::parse("KEAST").unwrap_or(0));
        for (argv, advance) in &ops {
            clock.advance(*advance);
            let _ = original.execute(argv);
            let checked = original.check_invariants();
            prop_assert!(checked.is_ok(), "{:?}", checked);
        }
        // No TTL set here is due before the replay ends: relative ones are 100 s and more.
        let replica = keyspace(&Arc::new(ManualClock::new(1_000)));
        for (db, argv) in sink.0.lock().iter() {
            replica.run_db(*db, |db, snapshot| {
                let _ = crate::command::execute(db, snapshot, argv);
            });
        }
        prop_assert_eq!(dump(&original), dump(&replica));
        prop_assert!(replica.check_invariants().is_ok());
    }
}

//! Model test: random operations on [`Idmp`] against a plain model (a vector of
//! `(pid, iid, id)` per producer in insertion order), with `check_invariants` after every op.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
enum Op {
    /// XADD's path: duplicate check, insert on a miss. `id_ms` is relative to the clock.
    Add { pid: u8, iid: Vec<u8>, back_ms: u64 },
    /// Plain lookup.
    Lookup { pid: u8, iid: Vec<u8> },
    /// Moves the clock.
    Advance(u64),
    /// A full expiry pass.
    Expire,
    /// XCFGSET.
    Configure(Option<u64>, Option<u64>),
}

fn op() -> impl Strategy<Value = Op> {
    // Few pids and short iids so duplicates, eviction and expiry all happen often.
    let iid = prop::collection::vec(0u8..4, 1..3);
    prop_oneof![
        6 => (0u8..3, iid.clone(), 0u64..5_000).prop_map(|(pid, iid, back_ms)| Op::Add { pid, iid, back_ms }),
        2 => (0u8..3, iid).prop_map(|(pid, iid)| Op::Lookup { pid, iid }),
        2 => (0u64..3_000).prop_map(Op::Advance),
        1 => Just(Op::Expire),
        1 => (prop::option::of(1u64..4), prop::option::of(1u64..6)).prop_map(|(d, m)| Op::Configure(d, m)),
    ]
}

/// The model: per pid, `(iid, id)` oldest first.
#[derive(Debug, Default)]
struct Model {
    config: IdmpConfig,
    producers: BTreeMap<Vec<u8>, Vec<(Vec<u8>, StreamId)>>,
    added: u64,
    duplicates: u64,
}

impl Model {
    /// Exact expiry of one producer (the real state may defer the others: not observable).
    fn expire_pid(&mut self, pid: &[u8], now: u64) {
        let Some(t) = now.checked_sub(self.config.duration_s * 1000) else {
            return;
        };
        if let Some(list) = self.producers.get_mut(pid) {
            let gone = list.iter().take_while(|(_, id)| id.ms <= t).count();
            list.drain(..gone);
            if list.is_empty() {
                self.producers.remove(pid);
            }
        }
    }

    fn expire_all(&mut self, now: u64) {
        let pids: Vec<Vec<u8>> = self.producers.keys().cloned().collect();
        for pid in pids {
            self.expire_pid(&pid, now);
        }
    }

    fn lookup(&self, pid: &[u8], iid: &[u8]) -> Option<StreamId> {
        self.producers
            .get(pid)?
            .iter()
            .find(|(i, _)| i == iid)
            .map(|(_, id)| *id)
    }

    fn info(&self, now: u64) -> (u64, u64) {
        let t = now.checked_sub(self.config.duration_s * 1000);
        let mut pids = 0;
        let mut iids = 0;
        for list in self.producers.values() {
            let gone = t.map_or(0, |t| list.iter().take_while(|(_, id)| id.ms <= t).count());
            if list.len() > gone {
                pids += 1;
                iids += (list.len() - gone) as u64;
            }
        }
        (pids, iids)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn idmp_matches_model(ops in prop::collection::vec(op(), 1..120)) {
        let config = IdmpConfig { duration_s: 2, maxsize: 3 };
        let mut real = Idmp::new(config);
        let mut model = Model { config, ..Model::default() };
        let mut now = 100_000u64;
        let mut seq = 0u64;
        for op in ops {
            match op {
                Op::Add { pid, iid, back_ms } => {
                    let pid = [b'p', pid];
                    model.expire_pid(&pid, now);
                    let expected = model.lookup(&pid, &iid);
                    let got = real.duplicate_of(&pid, &iid, now);
                    prop_assert_eq!(got, expected);
                    if got.is_some() {
                        model.duplicates += 1;
                    } else {
                        // Ids need not be ordered (XIDMPRECORD records old ones).
                        seq += 1;
                        let id = StreamId::new(now - back_ms, seq);
                        real.insert(&pid, &iid, id, now);
                        let list = model.producers.entry(pid.to_vec()).or_default();
                        list.push((iid, id));
                        if list.len() as u64 > model.config.maxsize {
                            list.remove(0);
                        }
                        model.added += 1;
                    }
                }
                Op::Lookup { pid, iid } => {
                    let pid = [b'p', pid];
                    model.expire_pid(&pid, now);
                    prop_assert_eq!(real.lookup(&pid, &iid, now), model.lookup(&pid, &iid));
                }
                Op::Advance(ms) => now += ms,
                Op::Expire => {
                    real.expire(now);
                    model.expire_all(now);
                    prop_assert_eq!(real.pids_tracked(), model.producers.len());
                }
                Op::Configure(d, m) => {
                    let changed = d.is_some_and(|d| d != model.config.duration_s)
                        || m.is_some_and(|m| m != model.config.maxsize);
                    prop_assert_eq!(real.configure(d, m), changed);
                    if changed {
                        model.config.duration_s = d.unwrap_or(model.config.duration_s);
                        model.config.maxsize = m.unwrap_or(model.config.maxsize);
                        model.producers.clear();
                    }
                }
            }
            prop_assert_eq!(real.check_invariants(), Ok(()));
            let info = real.info(now);
            prop_assert_eq!((info.pids_tracked, info.iids_tracked), model.info(now));
            prop_assert_eq!(info.iids_added, model.added);
            prop_assert_eq!(info.iids_duplicates, model.duplicates);
            prop_assert_eq!(real.config(), model.config);
        }
        // After a full pass the held IIDs are exactly the model's.
        real.expire(now);
        model.expire_all(now);
        let held: Vec<(Vec<u8>, Vec<u8>, StreamId)> =
            real.iter().map(|(p, i, id)| (p.to_vec(), i.to_vec(), id)).collect();
        let expected: Vec<(Vec<u8>, Vec<u8>, StreamId)> = model
            .producers
            .iter()
            .flat_map(|(p, list)| list.iter().map(move |(i, id)| (p.clone(), i.clone(), *id)))
            .collect();
        prop_assert_eq!(held, expected);
    }
}

#[test]
fn eviction_keeps_the_newest_maxsize_and_compacts() {
    let mut idmp = Idmp::new(IdmpConfig {
        duration_s: 100,
        maxsize: 2,
    });
    for i in 0..1000u64 {
        let iid = format!("iid-{i}");
        assert_eq!(idmp.duplicate_of(b"p", iid.as_bytes(), 1), None);
        idmp.insert(b"p", iid.as_bytes(), StreamId::new(1, i), 1);
        idmp.check_invariants().unwrap();
    }
    let held: Vec<StreamId> = idmp.iter().map(|(_, _, id)| id).collect();
    assert_eq!(held, [StreamId::new(1, 998), StreamId::new(1, 999)]);
    // The buffer did not grow with the 1000 inserts: two records plus bounded slack.
    assert!(idmp.memory_bytes() < 400, "{} bytes", idmp.memory_bytes());
}

#[test]
fn expiry_stops_at_the_first_younger_iid() {
    let mut idmp = Idmp::new(IdmpConfig {
        duration_s: 1,
        maxsize: 10,
    });
    idmp.insert(b"p", b"young", StreamId::new(5_000, 0), 5_000);
    idmp.insert(b"p", b"old", StreamId::new(1, 0), 5_000);
    idmp.expire(5_500);
    // "old" expired but sits behind "young": Redis's walk from the head keeps it.
    assert_eq!(idmp.iids_tracked(), 2);
    assert_eq!(idmp.lookup(b"p", b"old", 5_500), Some(StreamId::new(1, 0)));
    idmp.expire(6_000);
    assert_eq!(idmp.iids_tracked(), 0);
    assert_eq!(idmp.pids_tracked(), 0);
    assert_eq!(idmp.info(6_000).iids_added, 2);
}

/// Bytes per tracked IID, full producer at `maxsize` 10000, after `inserts` inserts of
/// `iid(i)`.
fn bytes_per_iid(inserts: u64, iid: impl Fn(u64) -> Vec<u8>) -> f64 {
    let mut idmp = Idmp::new(IdmpConfig {
        duration_s: 86_400,
        maxsize: 10_000,
    });
    for i in 0..inserts {
        idmp.insert(b"p", &iid(i), StreamId::new(1, i), 1);
    }
    assert_eq!(idmp.iids_tracked(), 10_000);
    idmp.memory_bytes() as f64 / 10_000.0
}

#[test]
fn memory_per_iid_is_below_redis_8_8() {
    // Redis 8.8.0, measured as used_memory growth over 10000 XADDs with and without IDMP at
    // idmp-maxsize 10000: 91.7 bytes per 16-byte IDMPAUTO iid, 123.7 per 36-byte UUID.
    const REDIS_AUTO: f64 = 91.7;
    const REDIS_UUID: f64 = 123.7;
    let auto = |i: u64| auto_iid(&["f".to_string(), i.to_string()]).to_vec();
    let uuid = |i: u64| format!("3f2504e0-4f89-11d3-9a0c-0305e8{i:06}").into_bytes();
    for inserts in [10_000, 25_000, 31_234] {
        let (a, u) = (bytes_per_iid(inserts, auto), bytes_per_iid(inserts, uuid));
        assert!(
            a < REDIS_AUTO,
            "{a:.1} bytes per 16-byte iid after {inserts} inserts"
        );
        assert!(
            u < REDIS_UUID,
            "{u:.1} bytes per UUID iid after {inserts} inserts"
        );
    }
}

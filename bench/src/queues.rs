//! The queues of a run on one target (`--queues N`), and where they live.
//!
//! A feed queue's keys all carry its name as their hash tag (`emq:{queue}:…`), so on a cluster
//! a queue lives in one slot on one master. With `--queues N` the append and consume cases run
//! N queues at once; to spread them over a cluster the names are chosen so that queue `i`'s
//! slot is served by master `i` (masters in address order; round robin when the cluster has
//! fewer than N), by trying suffixes until the name hashes there. On a single server or the
//! embedded engine any N distinct names do.
//!
//! Invariants: every name starts with the run's prefix (`echomq-bench:<run-id>:q<i>`), so
//! `emq:{echomq-bench:*` finds a run's keys; the N names of a target are distinct.

use echomq::protocol::slot::key_slot;
use redis::Value;

/// Suffixes tried per queue before giving up on a master (a slot range of 1/M of the slots is
/// hit within a few tries on average; this many failures means the master serves almost no
/// slots).
const SALT_TRIES: u32 = 1_000_000;

/// A master of a cluster and the slot ranges it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Master {
    /// `host:port`.
    pub addr: String,
    /// Inclusive slot ranges.
    pub ranges: Vec<(u16, u16)>,
}

impl Master {
    fn serves(&self, slot: u16) -> bool {
        self.ranges.iter().any(|&(a, b)| (a..=b).contains(&slot))
    }
}

/// One queue of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queue {
    /// The feed's queue name (the hash tag of its keys).
    pub name: String,
    /// Its slot and the master serving it, on a cluster.
    pub placement: Option<(u16, String)>,
}

impl Queue {
    /// The SCAN pattern of every key of this queue.
    pub fn pattern(&self) -> String {
        format!("emq:{{{}}}:*", self.name)
    }
}

/// The slot of queue `name`'s keys.
pub fn slot_of(name: &str) -> u16 {
    key_slot(echomq::feed::stream_key(name, "s").as_bytes())
}

/// The masters of a `CLUSTER SLOTS` reply, sorted by address; `default_host` stands for an
/// empty host (a node that does not know its own address).
pub fn parse_cluster_slots(reply: &Value, default_host: &str) -> Vec<Master> {
    let mut masters: Vec<Master> = Vec::new();
    let Value::Array(ranges) = reply else {
        return masters;
    };
    for range in ranges {
        let Value::Array(items) = range else { continue };
        let (Some(Value::Int(a)), Some(Value::Int(b)), Some(Value::Array(node))) =
            (items.first(), items.get(1), items.get(2))
        else {
            continue;
        };
        let (Ok(a), Ok(b)) = (u16::try_from(*a), u16::try_from(*b)) else {
            continue;
        };
        let host = match node.first() {
            Some(Value::BulkString(h)) => String::from_utf8_lossy(h).into_owned(),
            Some(Value::SimpleString(h)) => h.clone(),
            _ => continue,
        };
        let host = if host.is_empty() {
            default_host.to_string()
        } else {
            host
        };
        let Some(Value::Int(port)) = node.get(1) else {
            continue;
        };
        let addr = format!("{host}:{port}");
        match masters.iter_mut().find(|m| m.addr == addr) {
            Some(m) => m.ranges.push((a, b)),
            None => masters.push(Master {
                addr,
                ranges: vec![(a, b)],
            }),
        }
    }
    masters.sort_by(|x, y| x.addr.cmp(&y.addr));
    masters
}

/// The `n` queues of run `run` on a target: on a cluster (`masters` given and not empty),
/// queue `i` on master `i % masters.len()`; elsewhere `run:q<i>`.
pub fn choose(run: &str, n: usize, masters: Option<&[Master]>) -> Vec<Queue> {
    (0..n)
        .map(|i| {
            let base = format!("{run}:q{i}");
            let Some(masters) = masters.filter(|m| !m.is_empty()) else {
                return Queue {
                    name: base,
                    placement: None,
                };
            };
            let master = &masters[i % masters.len()];
            let candidates = std::iter::once(base.clone())
                .chain((0..SALT_TRIES).map(|salt| format!("{base}.{salt}")));
            for name in candidates {
                let slot = slot_of(&name);
                if master.serves(slot) {
                    return Queue {
                        name,
                        placement: Some((slot, master.addr.clone())),
                    };
                }
            }
            // A master without (findable) slots: keep the name, report where it landed.
            let slot = slot_of(&base);
            let owner = masters
                .iter()
                .find(|m| m.serves(slot))
                .map_or_else(|| "?".to_string(), |m| m.addr.clone());
            Queue {
                name: base,
                placement: Some((slot, owner)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three_masters() -> Vec<Master> {
        vec![
            Master {
                addr: "127.0.0.1:7000".into(),
                ranges: vec![(0, 5460)],
            },
            Master {
                addr: "127.0.0.1:7001".into(),
                ranges: vec![(5461, 10922)],
            },
            Master {
                addr: "127.0.0.1:7002".into(),
                ranges: vec![(10923, 16383)],
            },
        ]
    }

    #[test]
    fn queue_slots_are_the_slots_of_their_keys() {
        // CLUSTER KEYSLOT of a key with the hash tag {foo} is CLUSTER KEYSLOT foo = 12182.
        assert_eq!(slot_of("foo"), 12182);
        assert_eq!(slot_of("bar"), 5061);
    }

    #[test]
    fn three_queues_land_on_three_masters() {
        let masters = three_masters();
        let queues = choose("echomq-bench:abc-1", 3, Some(&masters));
        assert_eq!(queues.len(), 3);
        for (i, q) in queues.iter().enumerate() {
            assert!(
                q.name.starts_with(&format!("echomq-bench:abc-1:q{i}")),
                "{q:?}"
            );
            let (slot, master) = q.placement.clone().unwrap();
            assert_eq!(slot, slot_of(&q.name));
            assert_eq!(master, masters[i].addr);
            assert!(masters[i].serves(slot), "{q:?}");
        }
    }

    #[test]
    fn more_queues_than_masters_go_round_robin_and_stay_distinct() {
        let masters = three_masters();
        let queues = choose("run", 5, Some(&masters[..2]));
        let owners: Vec<String> = queues
            .iter()
            .map(|q| q.placement.clone().unwrap().1)
            .collect();
        assert_eq!(
            owners,
            ["7000", "7001", "7000", "7001", "7000"].map(|p| format!("127.0.0.1:{p}"))
        );
        let mut names: Vec<&str> = queues.iter().map(|q| q.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 5);
    }

    #[test]
    fn off_a_cluster_names_are_distinct_and_unplaced() {
        let queues = choose("run", 3, None);
        let names: Vec<&str> = queues.iter().map(|q| q.name.as_str()).collect();
        assert_eq!(names, ["run:q0", "run:q1", "run:q2"]);
        assert!(queues.iter().all(|q| q.placement.is_none()));
        assert_eq!(queues[1].pattern(), "emq:{run:q1}:*");
        assert_eq!(choose("run", 1, Some(&[])), choose("run", 1, None));
    }

    #[test]
    fn cluster_slots_replies_give_masters_in_address_order() {
        let node = |host: &str, port: i64| {
            Value::Array(vec![
                Value::BulkString(host.as_bytes().to_vec()),
                Value::Int(port),
                Value::BulkString(b"id".to_vec()),
            ])
        };
        let range = |a: i64, b: i64, master: Value, replica: Value| {
            Value::Array(vec![Value::Int(a), Value::Int(b), master, replica])
        };
        let reply = Value::Array(vec![
            range(
                10923,
                16383,
                node("127.0.0.1", 7002),
                node("127.0.0.1", 7005),
            ),
            range(0, 5460, node("", 7000), node("127.0.0.1", 7003)),
            range(
                5461,
                10921,
                node("127.0.0.1", 7001),
                node("127.0.0.1", 7004),
            ),
            range(
                10922,
                10922,
                node("127.0.0.1", 7002),
                node("127.0.0.1", 7005),
            ),
        ]);
        let masters = parse_cluster_slots(&reply, "127.0.0.1");
        assert_eq!(masters.len(), 3);
        assert_eq!(masters[0].addr, "127.0.0.1:7000");
        assert_eq!(masters[2].ranges, vec![(10923, 16383), (10922, 10922)]);
        assert!(masters[2].serves(10922));
        assert!(parse_cluster_slots(&Value::Nil, "h").is_empty());
    }
}

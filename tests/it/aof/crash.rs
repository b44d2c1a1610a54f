//! The crash test: `echomq serve --appendonly yes --appendfsync always` SIGKILLed at random
//! points while one client writes XADD, XREADGROUP, XACK, XCLAIM, XTRIM and XGROUP; after
//! each restart every write whose reply arrived is there and the PEL is exact.
//!
//! The client keeps a model of the stream from the replies it got (entries, the group's PEL
//! with owners and delivery counts, consumers). The one command in flight at a kill (sent,
//! no reply) may or may not have been applied: the loaded state must equal the model, or the
//! model with that command applied as the server would have (every command here is
//! deterministic given the state, ids being explicit).

use std::collections::{BTreeMap, BTreeSet};
use std::thread;
use std::time::Duration;

use super::{Conn, serve_aof, text};
use crate::archive::Lcg;

/// Kills and restarts.
const KILLS: usize = 25;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Model {
    entries: BTreeSet<u64>,
    /// id → (owner, delivery count).
    pel: BTreeMap<u64, (String, u64)>,
    consumers: BTreeSet<String>,
    last_delivered: u64,
    next_id: u64,
}

/// One command of the load.
#[derive(Debug, Clone)]
enum Op {
    Add,
    Read(String, u64),
    Ack(u64),
    Claim(String, u64),
    Trim(u64),
    CreateConsumer(String),
}

impl Op {
    fn argv(&self, model: &Model) -> Vec<String> {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match self {
            Op::Add => words(&["XADD", "s", &format!("{}-1", model.next_id), "f", "v"]),
            Op::Read(c, n) => words(&[
                "XREADGROUP",
                "GROUP",
                "g",
                c,
                "COUNT",
                &n.to_string(),
                "STREAMS",
                "s",
                ">",
            ]),
            Op::Ack(id) => words(&["XACK", "s", "g", &format!("{id}-1")]),
            Op::Claim(c, id) => words(&["XCLAIM", "s", "g", c, "0", &format!("{id}-1")]),
            Op::Trim(n) => words(&["XTRIM", "s", "MAXLEN", &n.to_string()]),
            Op::CreateConsumer(c) => words(&["XGROUP", "CREATECONSUMER", "s", "g", c]),
        }
    }

    /// The model after the command, as the server applies it.
    fn apply(&self, model: &Model) -> Model {
        let mut m = model.clone();
        match self {
            Op::Add => {
                m.entries.insert(m.next_id);
                m.next_id += 1;
            }
            Op::Read(c, n) => {
                m.consumers.insert(c.clone());
                let new: Vec<u64> = m
                    .entries
                    .range(m.last_delivered + 1..)
                    .take(*n as usize)
                    .copied()
                    .collect();
                for id in new {
                    m.pel.insert(id, (c.clone(), 1));
                    m.last_delivered = id;
                }
            }
            Op::Ack(id) => {
                m.pel.remove(id);
            }
            Op::Claim(c, id) => {
                m.consumers.insert(c.clone());
                if let Some((owner, count)) = m.pel.get_mut(id) {
                    if m.entries.contains(id) {
                        *owner = c.clone();
                        *count += 1;
                    } else {
                        m.pel.remove(id);
                    }
                }
            }
            Op::Trim(n) => {
                while m.entries.len() as u64 > *n {
                    let first = *m.entries.iter().next().unwrap();
                    m.entries.remove(&first);
                }
            }
            Op::CreateConsumer(c) => {
                m.consumers.insert(c.clone());
            }
        }
        m
    }
}

fn random_op(rng: &mut Lcg, model: &Model) -> Op {
    let consumer = ["a", "b", "c"][rng.below(3) as usize].to_string();
    let pending: Vec<u64> = model.pel.keys().copied().collect();
    let any_pending = |rng: &mut Lcg| {
        pending
            .get(rng.below(pending.len() as u64) as usize)
            .copied()
    };
    match rng.below(10) {
        0..=3 => Op::Add,
        4 | 5 => Op::Read(consumer, rng.below(3) + 1),
        6 => any_pending(rng).map_or(Op::Add, Op::Ack),
        7 => any_pending(rng).map_or(Op::Add, |id| Op::Claim(consumer, id)),
        8 => Op::Trim(rng.below(20) + 10),
        _ => Op::CreateConsumer(consumer),
    }
}

/// The loaded state, as a model (delivery counts from XPENDING).
fn read_state(c: &mut Conn, next_id: u64) -> Model {
    let mut m = Model {
        next_id,
        ..Model::default()
    };
    let ids = |v: &redis::Value| -> Vec<u64> {
        let mut out = Vec::new();
        if let redis::Value::Array(rows) = v {
            for row in rows {
                if let redis::Value::Array(f) = row
                    && let Some(redis::Value::BulkString(id)) = f.first()
                {
                    let id = String::from_utf8_lossy(id);
                    out.push(id.split('-').next().unwrap().parse().unwrap());
                }
            }
        }
        out
    };
    m.entries = ids(&c.run(&["XRANGE", "s", "-", "+"]).unwrap())
        .into_iter()
        .collect();
    if let Ok(redis::Value::Array(rows)) = c.run(&["XPENDING", "s", "g", "-", "+", "100000"]) {
        for row in rows {
            if let redis::Value::Array(f) = row {
                let id: u64 = text(&f[0]).split('-').next().unwrap().parse().unwrap();
                m.pel
                    .insert(id, (text(&f[1]), text(&f[3]).parse().unwrap()));
            }
        }
    }
    if let Ok(redis::Value::Array(consumers)) = c.run(&["XINFO", "CONSUMERS", "s", "g"]) {
        for consumer in consumers {
            let t = text(&consumer);
            m.consumers.insert(
                t.trim_start_matches('[')
                    .split(", ")
                    .nth(1)
                    .unwrap()
                    .to_string(),
            );
        }
    }
    if let Ok(redis::Value::Array(groups)) = c.run(&["XINFO", "GROUPS", "s"]) {
        let t = text(&groups[0]);
        let fields: Vec<&str> = t
            .trim_matches(|ch| ch == '[' || ch == ']')
            .split(", ")
            .collect();
        if let Some(at) = fields.iter().position(|f| *f == "last-delivered-id") {
            m.last_delivered = fields[at + 1].split('-').next().unwrap().parse().unwrap();
        }
    }
    m
}

#[test]
fn aof_sigkill_at_random_points_keeps_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(0x05ee_da0f);
    let mut model = Model {
        next_id: 1,
        ..Model::default()
    };
    for kill in 0..KILLS {
        let (mut server, addr) = serve_aof(dir.path(), &["--appendfsync", "always"]);
        let mut c = Conn::open(addr);
        if kill == 0 {
            c.ok(&["XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"]);
        }
        let loaded = read_state(&mut c, model.next_id);
        assert_eq!(
            loaded, model,
            "after restart {kill}: the loaded state is not the acknowledged one"
        );
        // The killer: after a random delay, SIGKILL while the client writes.
        let pid = server.0.id();
        let delay = Duration::from_millis(rng.below(150) + 5);
        let killer = thread::spawn(move || {
            thread::sleep(delay);
            // kill(1) by pid: the child this test started.
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        });
        loop {
            let op = random_op(&mut rng, &model);
            let argv = op.argv(&model);
            let args: Vec<&str> = argv.iter().map(String::as_str).collect();
            match c.run(&args) {
                Ok(_) => model = op.apply(&model),
                Err(e)
                    if e.is_io_error()
                        || e.is_connection_dropped()
                        || e.is_unrecoverable_error() =>
                {
                    // In flight at the kill: applied or not, both are allowed.
                    killer.join().unwrap();
                    let _ = server.0.wait();
                    let (restarted, addr) = serve_aof(dir.path(), &["--appendfsync", "always"]);
                    let mut c2 = Conn::open(addr);
                    let applied = op.apply(&model);
                    let loaded = read_state(&mut c2, applied.next_id);
                    if loaded == applied {
                        model = applied;
                    } else {
                        let loaded = Model {
                            next_id: model.next_id,
                            ..loaded
                        };
                        assert_eq!(loaded, model, "after kill {kill}: in flight {argv:?}");
                    }
                    drop(c2);
                    drop(restarted);
                    break;
                }
                Err(e) => panic!("{argv:?}: {e}"),
            }
        }
        drop(server);
    }
}

/// With `appendfsync everysec` a SIGKILL of the server alone (the OS keeps what was written)
/// loses nothing either; what is guaranteed is weaker, so this checks only that the loaded
/// state is one the client's history went through (a prefix of it), the latest or the one
/// after the command in flight.
#[test]
fn aof_everysec_sigkill_loads_a_prefix_of_the_history() {
    /// Kills for this variant.
    const EVERYSEC_KILLS: usize = 5;
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(0x0e5e_c0de);
    let mut model = Model {
        next_id: 1,
        ..Model::default()
    };
    for kill in 0..EVERYSEC_KILLS {
        let (mut server, addr) = serve_aof(dir.path(), &["--appendfsync", "everysec"]);
        let mut c = Conn::open(addr);
        if kill == 0 {
            c.ok(&["XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"]);
        }
        let mut history = vec![model.clone()];
        let mut ran = Vec::new();
        for _ in 0..rng.below(60) + 1 {
            let op = random_op(&mut rng, &model);
            let argv = op.argv(&model);
            let args: Vec<&str> = argv.iter().map(String::as_str).collect();
            c.ok(&args);
            ran.push(argv.join(" "));
            model = op.apply(&model);
            history.push(model.clone());
        }
        let _ = server.0.kill();
        let _ = server.0.wait();
        let (_restarted, addr) = serve_aof(dir.path(), &["--appendfsync", "everysec"]);
        let mut c = Conn::open(addr);
        let loaded = read_state(&mut c, model.next_id);
        let found = history.iter().rposition(|m| {
            Model {
                next_id: loaded.next_id,
                ..m.clone()
            } == loaded
        });
        let Some(at) = found else {
            panic!(
                "after kill {kill}: {loaded:?} is not a state the history went through; \
                 it ended at {:?} after {ran:?}",
                history.last()
            );
        };
        model = history[at].clone();
    }
}

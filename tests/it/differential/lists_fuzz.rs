//! A seeded differential fuzzer of lists with blocked clients, against Redis 8.8: one driver
//! connection sends random list writes (and now and then a MULTI of two, a DEL or a SET of a
//! waited key) while blocker connections wait in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP on
//! random keys. After every step the set of blockers still blocked (CLIENT LIST's `b` flag)
//! must be the same on both servers, and every blocker served must have received the same
//! reply bytes; every tenth step every key's DUMP payload (its nodes, byte for byte) is
//! compared, and at the end its elements. The last three quarters of the steps run with
//! `list-max-listpack-size 3`, so the lists become quicklists of many nodes. A few hundred
//! steps run in CI; `ECHOMQ_LIST_FUZZ_STEPS` (and `ECHOMQ_LIST_FUZZ_SEED`) run it longer or
//! elsewhere.

use echomq::testing::TestServer;

use crate::server::show;
use crate::support::fuzz::{Lockstep, Rng, env_u64, tail};
use crate::support::peer::{Peer, PeerKind};

const KEYS: [&str; 4] = ["a", "b", "c", "d"];
const VALUES: [&str; 6] = ["x", "y", "1", "-2", "300", "zz"];
const BLOCKERS: usize = 4;
const STEPS_DEFAULT: u64 = 300;

/// A random non-blocking list write (or read) for the driver.
fn write(rng: &mut Rng) -> Vec<String> {
    let k = rng.pick(&KEYS).to_string();
    let k2 = rng.pick(&KEYS).to_string();
    let v = rng.pick(&VALUES).to_string();
    let end = |rng: &mut Rng| if rng.below(2) == 0 { "LEFT" } else { "RIGHT" }.to_string();
    let n = (rng.below(4)).to_string();
    let words: Vec<String> = match rng.below(14) {
        0..=2 => {
            let mut w = vec![if rng.below(2) == 0 { "LPUSH" } else { "RPUSH" }.into(), k];
            for _ in 0..=rng.below(3) {
                w.push(rng.pick(&VALUES).into());
            }
            w
        }
        3 => vec!["LPOP".into(), k, n],
        4 => vec!["RPOP".into(), k],
        5 => vec!["LMOVE".into(), k, k2, end(rng), end(rng)],
        6 => vec!["RPOPLPUSH".into(), k, k2],
        7 => vec!["LTRIM".into(), k, "1".into(), "-2".into()],
        8 => vec!["LREM".into(), k, "0".into(), v],
        9 => vec!["LINSERT".into(), k, "BEFORE".into(), v, "ins".into()],
        10 => vec!["LSET".into(), k, "0".into(), v],
        11 => vec![
            "LMPOP".into(),
            "2".into(),
            k,
            k2,
            end(rng),
            "COUNT".into(),
            "2".into(),
        ],
        12 => vec!["DEL".into(), k],
        _ => vec!["SET".into(), k, v],
    };
    words
}

/// A random blocking command (timeout 0).
fn blocking(rng: &mut Rng) -> Vec<String> {
    let k = rng.pick(&KEYS).to_string();
    let k2 = rng.pick(&KEYS).to_string();
    match rng.below(5) {
        0 => vec!["BLPOP".into(), k, k2, "0".into()],
        1 => vec!["BRPOP".into(), k, "0".into()],
        2 => vec![
            "BLMOVE".into(),
            k,
            k2,
            "LEFT".into(),
            "RIGHT".into(),
            "0".into(),
        ],
        3 => vec!["BRPOPLPUSH".into(), k, k2, "0".into()],
        _ => vec![
            "BLMPOP".into(),
            "0".into(),
            "2".into(),
            k,
            k2,
            "RIGHT".into(),
            "COUNT".into(),
            "2".into(),
        ],
    }
}

#[test]
fn lists_with_blocked_clients_match_redis_8_step_by_step() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().unwrap();
    let steps = env_u64("ECHOMQ_LIST_FUZZ_STEPS", STEPS_DEFAULT);
    let seed = env_u64("ECHOMQ_LIST_FUZZ_SEED", 0x5eed_1157);
    let mut rng = Rng::new(seed);
    let mut run = Lockstep::open(peer.addr(), ours.addr(), BLOCKERS, false);
    run.call(&["FLUSHALL"]);
    for step in 0..steps {
        let fail = |run: &Lockstep, what: String| -> ! {
            panic!("seed {seed:#x} step {step}: {what}\n{}", tail(&run.log))
        };
        // The last three quarters run with nodes of three elements, so the lists grow into many
        // nodes (quicklists) and pushes and pops at either end cross node boundaries.
        if step == steps / 4 {
            run.call(&["CONFIG", "SET", "list-max-listpack-size", "3"]);
        }
        // Idle blockers may start waiting (one at a time, so the order of blocking is known).
        for i in 0..BLOCKERS {
            if !run.waiting[i] && rng.one_in(3) {
                let argv = blocking(&mut rng);
                let words: Vec<&str> = argv.iter().map(String::as_str).collect();
                if let Err(what) = run.block(i, &words) {
                    fail(&run, what);
                }
            }
        }
        // The driver writes, sometimes two writes in one transaction.
        let commands: Vec<Vec<String>> = if rng.one_in(8) {
            vec![
                vec!["MULTI".into()],
                write(&mut rng),
                write(&mut rng),
                vec!["EXEC".into()],
            ]
        } else {
            vec![write(&mut rng)]
        };
        for argv in &commands {
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            let (t, m) = run.call(&words);
            if m != t {
                fail(
                    &run,
                    format!("replies to {words:?} differ: echomq {}", show(&m)),
                );
            }
        }
        if let Err(what) = run.serve_blockers() {
            fail(&run, what);
        }
        // Now and then the keys' DUMP payloads: the same nodes, byte for byte, as a save
        // writes them.
        if step % 10 == 9 {
            for key in KEYS {
                let (t, m) = run.call(&["DUMP", key]);
                if m != t {
                    fail(&run, format!("DUMP of {key} differs: echomq {}", show(&m)));
                }
            }
        }
    }
    for key in KEYS {
        let (t, m) = run.call(&["LRANGE", key, "0", "-1"]);
        assert_eq!(show(&m), show(&t), "final elements of {key}");
    }
}

//! A seeded differential fuzzer of lists with blocked clients, against Redis 8.8: one driver
//! connection sends random list writes (and now and then a MULTI of two, a DEL or a SET of a
//! waited key) while blocker connections wait in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP on
//! random keys. After every step the set of blockers still blocked (CLIENT LIST's `b` flag)
//! must be the same on both servers, and every blocker served must have received the same
//! reply bytes; at the end every key's elements are compared. A few hundred steps run in CI;
//! `ECHOMQ_LIST_FUZZ_STEPS` (and `ECHOMQ_LIST_FUZZ_SEED`) run it longer or elsewhere.

use std::net::SocketAddr;

use echomq::testing::TestServer;

use crate::server::{Wire, request, show};
use crate::support::peer::{Peer, PeerKind};

const KEYS: [&str; 4] = ["a", "b", "c", "d"];
const VALUES: [&str; 6] = ["x", "y", "1", "-2", "300", "zz"];
const BLOCKERS: usize = 4;
const STEPS_DEFAULT: u64 = 300;

/// xorshift64*: deterministic from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

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

/// One server's connections: the driver and the blockers, with the blockers' client ids.
struct Side {
    driver: Wire,
    blockers: Vec<Wire>,
    ids: Vec<String>,
}

impl Side {
    fn open(addr: SocketAddr) -> Side {
        let mut driver = Wire::connect_to(addr);
        driver.call(b"FLUSHALL\r\n");
        let mut blockers = Vec::new();
        let mut ids = Vec::new();
        for _ in 0..BLOCKERS {
            let mut w = Wire::connect_to(addr);
            let id = w.call(b"CLIENT ID\r\n");
            ids.push(String::from_utf8_lossy(&id[1..id.len() - 2]).into_owned());
            blockers.push(w);
        }
        Side {
            driver,
            blockers,
            ids,
        }
    }

    /// Which blockers CLIENT LIST shows blocked.
    fn blocked(&mut self) -> Vec<bool> {
        let mut argv = vec!["CLIENT", "LIST", "ID"];
        argv.extend(self.ids.iter().map(String::as_str));
        let text = String::from_utf8_lossy(&self.driver.call(&request(&argv))).into_owned();
        self.ids
            .iter()
            .map(|id| {
                text.lines().any(|line| {
                    line.contains(&format!("id={id} "))
                        && line
                            .split(' ')
                            .any(|f| f.strip_prefix("flags=").is_some_and(|f| f.contains('b')))
                })
            })
            .collect()
    }
}

#[test]
fn lists_with_blocked_clients_match_redis_8_step_by_step() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().unwrap();
    let steps = std::env::var("ECHOMQ_LIST_FUZZ_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(STEPS_DEFAULT);
    let seed = std::env::var("ECHOMQ_LIST_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1157);
    let mut rng = Rng(seed | 1);
    let mut theirs = Side::open(peer.addr());
    let mut mine = Side::open(ours.addr());
    let mut waiting = [false; BLOCKERS];
    let mut log: Vec<String> = Vec::new();
    for step in 0..steps {
        // Idle blockers may start waiting (one at a time, so the order of blocking is known).
        for i in 0..BLOCKERS {
            if !waiting[i] && rng.below(3) == 0 {
                let argv = blocking(&mut rng);
                let words: Vec<&str> = argv.iter().map(String::as_str).collect();
                log.push(format!("blocker {i}: {}", words.join(" ")));
                let bytes = request(&words);
                theirs.blockers[i].send(&bytes);
                mine.blockers[i].send(&bytes);
                waiting[i] = true;
                // Wait until both count it blocked, or it was served at once.
                let (t, m) = (
                    settle(&mut theirs, i, &mut waiting),
                    settle(&mut mine, i, &mut [true; BLOCKERS]),
                );
                assert_eq!(
                    t,
                    m,
                    "step {step}: blocker {i} replied differently\n{}",
                    tail(&log)
                );
                if let Some(reply) = t {
                    log.push(format!("blocker {i} answered at once: {reply}"));
                }
            }
        }
        // The driver writes, sometimes two writes in one transaction.
        let commands: Vec<Vec<String>> = if rng.below(8) == 0 {
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
            log.push(format!("driver: {}", words.join(" ")));
            let bytes = request(&words);
            let t = theirs.driver.call(&bytes);
            let m = mine.driver.call(&bytes);
            log.push(format!("  -> {}", show(&t)));
            assert_eq!(
                show(&m),
                show(&t),
                "step {step}: replies to {words:?} differ\n{}",
                tail(&log)
            );
        }
        let tb = theirs.blocked();
        // A served client's connection clears its `b` flag when its task takes the reply, a
        // moment after the write that served it: give it that moment.
        let mut mb = mine.blocked();
        for _ in 0..200 {
            if mb == tb {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            mb = mine.blocked();
        }
        assert_eq!(
            mb,
            tb,
            "step {step}: blocked clients differ\n{}",
            tail(&log)
        );
        for i in 0..BLOCKERS {
            if waiting[i] && !tb[i] {
                let t = theirs.blockers[i].read_reply();
                let m = mine.blockers[i].read_reply();
                log.push(format!("blocker {i} served: {}", show(&t)));
                assert_eq!(
                    show(&m),
                    show(&t),
                    "step {step}: blocker {i}'s reply\n{}",
                    tail(&log)
                );
                waiting[i] = false;
            }
        }
    }
    for key in KEYS {
        let bytes = request(&["LRANGE", key, "0", "-1"]);
        let t = theirs.driver.call(&bytes);
        let m = mine.driver.call(&bytes);
        assert_eq!(show(&m), show(&t), "final elements of {key}");
    }
}

/// After blocker `i` sent its command: its reply if it was served at once (then it no longer
/// waits), else `None` once the server shows it blocked.
fn settle(side: &mut Side, i: usize, waiting: &mut [bool; BLOCKERS]) -> Option<String> {
    loop {
        if side.blocked()[i] {
            return None;
        }
        if let Some(reply) =
            side.blockers[i].read_reply_within(std::time::Duration::from_millis(20))
        {
            waiting[i] = false;
            return Some(show(&reply));
        }
    }
}

/// The last steps of the log, for a failure message.
fn tail(log: &[String]) -> String {
    log[log.len().saturating_sub(60)..].join("\n")
}

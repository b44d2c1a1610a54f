//! What the seeded differential fuzzers share: a deterministic random source, their
//! environment knobs, and a driver with blocked clients run in lockstep on two servers.
//!
//! [`Lockstep`] holds one [`Side`] per server: a driver connection and a few blocker
//! connections. A blocker starts waiting one at a time ([`Lockstep::block`]), so the order of
//! blocking, and so the order of serving, is the same on both servers. After the driver's
//! writes, [`Lockstep::serve_blockers`] checks that the same blockers are still blocked (CLIENT
//! LIST's `b` flag) and that every blocker served received the same bytes. The log of every
//! command and reply is kept for the failure message.

use std::net::SocketAddr;
use std::time::Duration;

use crate::server::{Wire, request, show};

/// Lines of the log shown with a failure (the most recent ones).
const LOG_SHOWN: usize = 80;

/// xorshift64*: deterministic from the seed, no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator; any seed works (it is made odd, xorshift's state must not be 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }

    /// Uniform in `lo..=hi`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// An environment variable as a number (decimal, or hex with `0x`), else `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        })
        .unwrap_or(default)
}

/// The last lines of a log, for a failure message.
pub fn tail(log: &[String]) -> String {
    log[log.len().saturating_sub(LOG_SHOWN)..].join("\n")
}

/// One server's connections: the driver and the blockers, with the blockers' client ids.
pub struct Side {
    pub driver: Wire,
    blockers: Vec<Wire>,
    ids: Vec<String>,
}

impl Side {
    /// Connects a driver and `blockers` blockers; with `resp3` each sends `HELLO 3` first
    /// (its reply, which names the server, is dropped).
    pub fn open(addr: SocketAddr, blockers: usize, resp3: bool) -> Side {
        let connect = || {
            let mut wire = Wire::connect_to(addr);
            if resp3 {
                wire.call(b"HELLO 3\r\n");
            }
            wire
        };
        let driver = connect();
        let mut wires = Vec::new();
        let mut ids = Vec::new();
        for _ in 0..blockers {
            let mut w = connect();
            let id = w.call(b"CLIENT ID\r\n");
            ids.push(String::from_utf8_lossy(&id[1..id.len() - 2]).into_owned());
            wires.push(w);
        }
        Side {
            driver,
            blockers: wires,
            ids,
        }
    }

    /// Which blockers CLIENT LIST shows blocked.
    pub fn blocked(&mut self) -> Vec<bool> {
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

    /// After blocker `i` sent its command: its reply if it was served at once, else `None`
    /// once the server shows it blocked.
    fn settle(&mut self, i: usize) -> Option<Vec<u8>> {
        loop {
            if self.blocked()[i] {
                return None;
            }
            if let Some(reply) = self.blockers[i].read_reply_within(Duration::from_millis(20)) {
                return Some(reply);
            }
        }
    }
}

/// A real server and echomq driven in lockstep, with blockers on both.
pub struct Lockstep {
    pub theirs: Side,
    pub mine: Side,
    /// Which blockers wait (the same on both sides, or a mismatch was reported).
    pub waiting: Vec<bool>,
    /// Every command sent and the real server's reply.
    pub log: Vec<String>,
}

impl Lockstep {
    pub fn open(theirs: SocketAddr, mine: SocketAddr, blockers: usize, resp3: bool) -> Lockstep {
        Lockstep {
            theirs: Side::open(theirs, blockers, resp3),
            mine: Side::open(mine, blockers, resp3),
            waiting: vec![false; blockers],
            log: Vec::new(),
        }
    }

    /// Blocker `i` sends `argv` on both servers; waits until each shows it blocked or serves
    /// it at once, which must be the same on both (and the same bytes).
    pub fn block(&mut self, i: usize, argv: &[&str]) -> Result<(), String> {
        self.log.push(format!("blocker {i}: {}", argv.join(" ")));
        let bytes = request(argv);
        self.theirs.blockers[i].send(&bytes);
        self.mine.blockers[i].send(&bytes);
        let (t, m) = (self.theirs.settle(i), self.mine.settle(i));
        let shown = |r: &Option<Vec<u8>>| r.as_deref().map(show);
        if t != m {
            return Err(format!(
                "blocker {i} answered differently at once: {:?} / echomq: {:?}",
                shown(&t),
                shown(&m)
            ));
        }
        match t {
            Some(reply) => self
                .log
                .push(format!("blocker {i} answered at once: {}", show(&reply))),
            None => self.waiting[i] = true,
        }
        Ok(())
    }

    /// Sends `argv` from the drivers and returns the replies (theirs, mine); logs both.
    pub fn call(&mut self, argv: &[&str]) -> (Vec<u8>, Vec<u8>) {
        self.log.push(format!("driver: {}", argv.join(" ")));
        let bytes = request(argv);
        let t = self.theirs.driver.call(&bytes);
        let m = self.mine.driver.call(&bytes);
        self.log.push(format!("  -> {}", show(&t)));
        if m != t {
            self.log.push(format!("  echomq -> {}", show(&m)));
        }
        (t, m)
    }

    /// The same blockers must still be blocked on both servers, and each one served since the
    /// last call must have received the same bytes.
    pub fn serve_blockers(&mut self) -> Result<(), String> {
        let tb = self.theirs.blocked();
        // A served client's connection clears its `b` flag when its task takes the reply, a
        // moment after the write that served it: give it that moment.
        let mut mb = self.mine.blocked();
        for _ in 0..200 {
            if mb == tb {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
            mb = self.mine.blocked();
        }
        if mb != tb {
            return Err(format!("blocked clients differ: {tb:?} / echomq: {mb:?}"));
        }
        for (i, still) in tb.into_iter().enumerate() {
            if self.waiting[i] && !still {
                let t = self.theirs.blockers[i].read_reply();
                let m = self.mine.blockers[i].read_reply();
                self.log.push(format!("blocker {i} served: {}", show(&t)));
                self.waiting[i] = false;
                if m != t {
                    return Err(format!(
                        "blocker {i}'s reply: {} / echomq: {}",
                        show(&t),
                        show(&m)
                    ));
                }
            }
        }
        Ok(())
    }
}

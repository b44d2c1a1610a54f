//! A differential fuzzer: random sequences of string, bitmap and HyperLogLog commands run on
//! echomq and Redis 8.8 over the wire (RESP2 and RESP3 in turn); every reply must be the same
//! bytes, and after each sequence so must every key's DUMP payload and OBJECT ENCODING.
//!
//! CI runs a short seeded run. `ECHOMQ_STRING_FUZZ_SEQUENCES` (default 12) and
//! `ECHOMQ_STRING_FUZZ_SEED` run longer or other ones; a failure prints the seed and the
//! commands that led to it.

use crate::support::fuzz::{Rng, env_u64};
use crate::support::peer::PeerKind;
use crate::support::wire::WireDiffer;

const SEED_DEFAULT: u64 = 0x5EED_B175;
const SEQUENCES_DEFAULT: u64 = 12;
/// Commands per sequence.
const COMMANDS: usize = 40;
const KEYS: [&str; 5] = ["k0", "k1", "k2", "k3", "k4"];

fn value(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.int(-1000, 1000).to_string(),
        1 => rng
            .pick(&[
                "9223372036854775807",
                "-9223372036854775808",
                "007",
                "+1",
                "1.5",
            ])
            .into(),
        2 => String::new(),
        3 => "v".repeat(rng.below(60)),
        4 => format!("x{}", rng.below(100)),
        _ => rng.pick(&["foobar", "HYLL", "\u{ff}\u{0}"]).into(),
    }
}

fn command(rng: &mut Rng) -> Vec<String> {
    let key = rng.pick(&KEYS).to_string();
    let other = rng.pick(&KEYS).to_string();
    let n = |rng: &mut Rng, lo, hi| rng.int(lo, hi).to_string();
    let argv: Vec<String> = match rng.below(26) {
        0 => vec!["SET".into(), key, value(rng)],
        1 => vec!["APPEND".into(), key, value(rng)],
        2 => vec!["SETRANGE".into(), key, n(rng, 0, 70), value(rng)],
        3 => vec!["INCRBY".into(), key, n(rng, -50, 50)],
        4 => vec!["INCR".into(), key],
        5 => vec![
            "INCRBYFLOAT".into(),
            key,
            rng.pick(&["0.5", "-1.25", "3", "1e3"]).into(),
        ],
        6 => vec!["GETRANGE".into(), key, n(rng, -20, 20), n(rng, -20, 20)],
        7 => vec!["GET".into(), key],
        8 => vec!["SETBIT".into(), key, n(rng, 0, 300), n(rng, 0, 1)],
        9 => vec!["GETBIT".into(), key, n(rng, 0, 300)],
        10 => {
            let mut v = vec!["BITCOUNT".into(), key];
            if rng.below(2) == 0 {
                v.push(n(rng, -40, 40));
                v.push(n(rng, -40, 40));
                if rng.below(2) == 0 {
                    v.push(rng.pick(&["BIT", "BYTE"]).into());
                }
            }
            v
        }
        11 => {
            let mut v = vec!["BITPOS".into(), key, n(rng, 0, 1)];
            for _ in 0..rng.below(3) {
                v.push(n(rng, -40, 40));
            }
            if v.len() == 5 && rng.below(2) == 0 {
                v.push(rng.pick(&["BIT", "BYTE"]).into());
            }
            v
        }
        12 => {
            let op = rng.pick(&["AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE"]);
            let mut v = vec!["BITOP".into(), op.into(), key, other];
            if op != "NOT" {
                v.push(rng.pick(&KEYS).into());
            }
            v
        }
        13 => {
            let mut v = vec!["BITFIELD".into(), key];
            for _ in 0..1 + rng.below(3) {
                let ty = format!("{}{}", rng.pick(&["i", "u"]), rng.int(1, 16));
                match rng.below(4) {
                    0 => v.extend(["GET".into(), ty, n(rng, 0, 100)]),
                    1 => v.extend(["SET".into(), ty, n(rng, 0, 100), n(rng, -70000, 70000)]),
                    2 => v.extend([
                        "INCRBY".into(),
                        ty,
                        format!("#{}", rng.below(8)),
                        n(rng, -300, 300),
                    ]),
                    _ => v.extend(["OVERFLOW".into(), rng.pick(&["WRAP", "SAT", "FAIL"]).into()]),
                }
            }
            v
        }
        14..=16 => {
            let mut v = vec!["PFADD".into(), key];
            let spread = if rng.below(4) == 0 { 2000 } else { 30 };
            for _ in 0..rng.below(if spread > 100 { 300 } else { 6 }) {
                v.push(format!("e{}", rng.below(spread)));
            }
            v
        }
        17 => {
            let mut v = vec!["PFCOUNT".into(), key];
            if rng.below(3) == 0 {
                v.push(other);
            }
            v
        }
        18 => vec!["PFMERGE".into(), key, other],
        19 => vec![
            "PFDEBUG".into(),
            rng.pick(&["ENCODING", "TODENSE", "DECODE"]).into(),
            key,
        ],
        20 => vec!["OBJECT".into(), "ENCODING".into(), key],
        21 => vec!["DEL".into(), key],
        22 => {
            let mut v = vec!["INCREX".into(), key];
            match rng.below(3) {
                0 => v.extend(["BYINT".into(), n(rng, -20, 20)]),
                1 => v.extend(["BYFLOAT".into(), rng.pick(&["0.5", "-2", "10"]).into()]),
                _ => {}
            }
            if rng.below(2) == 0 {
                v.extend(["UBOUND".into(), n(rng, 0, 30)]);
            }
            if rng.below(2) == 0 {
                v.push("SATURATE".into());
            }
            v
        }
        23 => vec!["STRLEN".into(), key],
        24 => vec!["GETDEL".into(), key],
        _ => vec!["LCS".into(), key, other],
    };
    argv
}

#[test]
fn random_string_bitmap_and_hll_sequences_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let seed = env_u64("ECHOMQ_STRING_FUZZ_SEED", SEED_DEFAULT);
    let sequences = env_u64("ECHOMQ_STRING_FUZZ_SEQUENCES", SEQUENCES_DEFAULT);
    for sequence in 0..sequences {
        let seq_seed = seed ^ sequence.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = Rng::new(seq_seed);
        let protocol = if sequence % 2 == 0 { 2 } else { 3 };
        let outcome = differ.reset(protocol).and_then(|()| {
            for _ in 0..COMMANDS {
                differ.run(&command(&mut rng))?;
            }
            for key in KEYS {
                differ.run(&["DUMP", key])?;
                differ.run(&["OBJECT", "ENCODING", key])?;
            }
            Ok(())
        });
        if let Err(mismatch) = outcome {
            panic!("seed {seed:#x} sequence {sequence} (RESP{protocol}):\n{mismatch}");
        }
    }
}

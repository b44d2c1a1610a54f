//! The hand-written cases: every form and error, in Redis's checking order (see `super`).

use echomq_engine::stream::idmp::auto_iid;

use crate::support::differ::Mismatch;
use crate::support::wire::{WireDiffer, words};

use super::SEED;

/// What goes out at once.
#[derive(Debug, Clone)]
pub enum Batch {
    One(Vec<Vec<u8>>),
    Transaction(Vec<Vec<Vec<u8>>>),
}

/// A scripted case.
#[derive(Debug)]
pub struct Case {
    /// What the case shows.
    pub name: &'static str,
    /// What it sends.
    pub batches: Vec<Batch>,
}

impl Case {
    pub(super) fn new(name: &'static str) -> Case {
        Case {
            name,
            batches: Vec::new(),
        }
    }

    /// A command as space-separated words.
    pub(super) fn cmd(self, line: &str) -> Case {
        let argv: Vec<&str> = line.split_whitespace().collect();
        self.argv(&argv)
    }

    /// A command argument by argument (empty and binary-looking ones allowed).
    fn argv(self, argv: &[&str]) -> Case {
        self.raw(words(argv))
    }

    /// A command of raw bytes.
    fn raw(mut self, argv: Vec<Vec<u8>>) -> Case {
        self.batches.push(Batch::One(argv));
        self
    }

    /// `XADD key 9999999999999-0 f v`.
    pub(super) fn seed(self, key: &str) -> Case {
        self.cmd(&format!("XADD {key} {SEED} seed 0"))
    }

    /// `MULTI`, the commands, `EXEC`.
    pub(super) fn multi(mut self, lines: &[&str]) -> Case {
        let commands = lines
            .iter()
            .map(|l| words(&l.split_whitespace().collect::<Vec<_>>()))
            .collect();
        self.batches.push(Batch::Transaction(commands));
        self
    }
}

fn bytes(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// Every case.
pub fn cases() -> Vec<Case> {
    // IDMPAUTO's iid for `a 1 b 2`, computed by the engine: Redis must take the same 16 bytes
    // given to IDMP as the same iid.
    let ab = auto_iid(&["a", "1", "b", "2"]);
    let binary_fields: [&[u8]; 4] = [b"\x00\xff", b"\r\n", "é".as_bytes(), b""];
    let bin = auto_iid(&binary_fields);
    vec![
        Case::new("a duplicate answers the original id and changes nothing")
            .seed("s")
            .cmd("XADD s IDMP p1 i1 * f v")
            .cmd("XADD s IDMP p1 i1 * f other")
            .cmd("XADD s IDMP p1 i1 * f v")
            .cmd("XLEN s")
            .cmd("XRANGE s - +")
            .cmd("XINFO STREAM s")
            .cmd("XINFO STREAM s FULL")
            .cmd("XINFO STREAM s FULL COUNT 1"),
        Case::new("producers are separate namespaces, iids are binary-safe")
            .seed("s")
            .cmd("XADD s IDMP p1 i1 * f v")
            .cmd("XADD s IDMP p2 i1 * f v")
            .cmd("XADD s IDMP p1 i2 * f v")
            .cmd("XADD s IDMP P1 i1 * f v")
            .cmd("XADD s IDMP p1 I1 * f v")
            .argv(&["XADD", "s", "IDMP", "p\0x", "i\r\n", "*", "f", "v"])
            .argv(&["XADD", "s", "IDMP", "p\0x", "i\r\n", "*", "f", "v"])
            .argv(&["XADD", "s", "IDMP", "p\0y", "i\r\n", "*", "f", "v"])
            .cmd("XADD s IDMP p2 i1 * f v")
            .cmd("XINFO STREAM s"),
        Case::new("options in any order and any case")
            .seed("s")
            .cmd("XADD s NOMKSTREAM IDMP p a0 MAXLEN ~ 10 * f v")
            .cmd("XADD s IDMP p a0 NOMKSTREAM MAXLEN = 10 * f v")
            .cmd("XADD s MAXLEN ~ 10 LIMIT 5 IDMP p a1 * f v")
            .cmd("XADD s MAXLEN ~ 10 IDMP p a1 LIMIT 5 * f v")
            .cmd("XADD s MINID 0 IDMPAUTO p NOMKSTREAM * f a2")
            .cmd("XADD s minid = 0 idmpauto p * f a2")
            .cmd("XADD s idmp p a3 nomkstream * f v")
            .cmd("XADD s IdMp p a3 * f v")
            .cmd("XINFO STREAM s"),
        Case::new("a duplicate neither trims nor appends")
            .seed("s")
            .cmd("XADD s 9999999999999-1 f v")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XADD s MAXLEN 1 IDMP p i * f v")
            .cmd("XADD s MINID 9999999999999-5 IDMP p i * f v")
            .cmd("XLEN s")
            .cmd("XADD s MAXLEN 1 IDMP p j * f v")
            .cmd("XLEN s")
            .cmd("XINFO STREAM s"),
        Case::new("the map is independent of content: XDEL and XTRIM keep iids")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XDEL s 9999999999999-1")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XTRIM s MAXLEN 0")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XLEN s")
            .cmd("XINFO STREAM s"),
        Case::new("NOMKSTREAM on a missing key replies nil before IDMP; WRONGTYPE")
            .cmd("XADD nokey NOMKSTREAM IDMP p i * f v")
            .cmd("XADD nokey NOMKSTREAM IDMPAUTO p * f v")
            .cmd("EXISTS nokey")
            .cmd("SET str x")
            .cmd("XADD str IDMP p i * f v")
            .cmd("XADD str IDMPAUTO p * f v"),
        Case::new("XADD IDMP errors, in Redis's order")
            .seed("s")
            .cmd("XADD s IDMP p i IDMP p j * f v")
            .cmd("XADD s IDMPAUTO p IDMP p j * f v")
            .cmd("XADD s IDMP p i IDMPAUTO q * f v")
            .cmd("XADD s IDMPAUTO p IDMPAUTO p * f v")
            .cmd("XADD s IDMP p i 1-1 f v")
            .cmd("XADD s IDMP p i 99999999999999-0 f v")
            .cmd("XADD s IDMPAUTO p 5-* f v")
            .cmd("XADD s IDMP p i 0-0 f v")
            .cmd("XADD s IDMP p i bad f v")
            .cmd("XADD s IDMP p1 * f v")
            .cmd("XADD s IDMP p *")
            .cmd("XADD s IDMP p i * f")
            .cmd("XADD s IDMPAUTO p *")
            .cmd("XADD s IDMPAUTO p * f")
            .cmd("XADD s f v IDMP")
            .cmd("XADD s * f v IDMP p i")
            .cmd("XADD s IDMP")
            .cmd("XADD s IDMPAUTO")
            .cmd("XADD s IDMP p i MAXLEN -1 * f v")
            .cmd("XADD s IDMP p i MAXLEN 1 MINID 0 * f v")
            .cmd("XADD s IDMP p i LIMIT 1 * f v")
            .argv(&["XADD", "s", "IDMP", "", "i", "*", "f", "v"])
            .argv(&["XADD", "s", "IDMP", "p", "", "*", "f", "v"])
            .argv(&["XADD", "s", "IDMP", "", "", "*", "f", "v"])
            .argv(&["XADD", "s", "IDMPAUTO", "", "*", "f", "v"])
            .argv(&[
                "XADD", "s", "IDMP", "", "i", "IDMP", "p", "i", "*", "f", "v",
            ])
            .argv(&[
                "XADD", "s", "IDMP", "p", "i", "IDMP", "", "i", "*", "f", "v",
            ])
            .cmd("XLEN s")
            .cmd("XINFO STREAM s"),
        Case::new("IDMPAUTO: pair order does not matter, fields and values do")
            .seed("s")
            .cmd("XADD s IDMPAUTO p * a 1 b 2")
            .cmd("XADD s IDMPAUTO p * b 2 a 1")
            .cmd("XADD s IDMPAUTO p * a 2 b 1")
            .cmd("XADD s IDMPAUTO p * A 1 b 2")
            .cmd("XADD s IDMPAUTO p * ab c")
            .cmd("XADD s IDMPAUTO p * a bc")
            .cmd("XADD s IDMPAUTO p * a 1")
            .cmd("XADD s IDMPAUTO p * a 1 a 1")
            .cmd("XADD s IDMPAUTO p * a 1 a 1 a 1")
            .cmd("XADD s IDMPAUTO q * b 2 a 1")
            .cmd("XADD s IDMPAUTO p * 123 456")
            .cmd("XADD s IDMPAUTO p * 123 456")
            .cmd("XINFO STREAM s"),
        Case::new("IDMPAUTO's iid is the 16-byte digest, shared with IDMP")
            .seed("s")
            .cmd("XADD s IDMPAUTO p * a 1 b 2")
            .raw(bytes(&[
                b"XADD", b"s", b"IDMP", b"p", &ab, b"*", b"x", b"y",
            ]))
            .raw(bytes(&[
                b"XADD", b"s", b"IDMP", b"q", &ab, b"*", b"x", b"y",
            ]))
            .cmd("XADD s IDMPAUTO q * b 2 a 1")
            .raw(bytes(&[
                b"XADD", b"s", b"IDMP", b"r", &bin, b"*", b"x", b"y",
            ]))
            .raw(bytes(&[
                b"XADD",
                b"s",
                b"IDMPAUTO",
                b"r",
                b"*",
                binary_fields[2],
                binary_fields[3],
                binary_fields[0],
                binary_fields[1],
            ]))
            .raw(bytes(&[
                b"XADD",
                b"s",
                b"IDMPAUTO",
                b"r",
                b"*",
                binary_fields[0],
                binary_fields[1],
                binary_fields[2],
                binary_fields[3],
            ]))
            .cmd("XINFO STREAM s"),
        Case::new("eviction at IDMP-MAXSIZE drops the oldest iid; a hit does not refresh it")
            .seed("s")
            .cmd("XCFGSET s IDMP-MAXSIZE 2")
            .cmd("XADD s IDMP p a * f v")
            .cmd("XADD s IDMP p b * f v")
            .cmd("XADD s IDMP p a * f v")
            .cmd("XADD s IDMP p c * f v")
            .cmd("XINFO STREAM s")
            .cmd("XADD s IDMP p b * f v")
            .cmd("XADD s IDMP p a * f v")
            .cmd("XADD s IDMP p b * f v")
            .cmd("XADD s IDMP q a * f v")
            .cmd("XADD s IDMPAUTO q * f v")
            .cmd("XADD s IDMPAUTO q * f w")
            .cmd("XADD s IDMP q a * f v")
            .cmd("XINFO STREAM s"),
        Case::new("XCFGSET errors, in Redis's order")
            .cmd("XCFGSET nokey IDMP-DURATION 5")
            .cmd("XCFGSET nokey")
            .cmd("XCFGSET nokey FOO")
            .cmd("SET str x")
            .cmd("XCFGSET str IDMP-DURATION 5")
            .cmd("XCFGSET str")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XCFGSET")
            .cmd("XCFGSET s")
            .cmd("XCFGSET s IDMP-DURATION")
            .cmd("XCFGSET s IDMP-MAXSIZE")
            .cmd("XCFGSET s FOO 1")
            .cmd("XCFGSET s IDMP-DURATION 5 FOO")
            .cmd("XCFGSET s IDMP-DURATION x")
            .cmd("XCFGSET s IDMP-DURATION 01")
            .cmd("XCFGSET s IDMP-DURATION 000000000")
            .cmd("XCFGSET s IDMP-DURATION 1.5")
            .cmd("XCFGSET s IDMP-DURATION 99999999999999999999")
            .cmd("XCFGSET s IDMP-DURATION 0")
            .cmd("XCFGSET s IDMP-DURATION -1")
            .cmd("XCFGSET s IDMP-DURATION 86401")
            .cmd("XCFGSET s IDMP-MAXSIZE 0")
            .cmd("XCFGSET s IDMP-MAXSIZE 10001")
            .cmd("XCFGSET s IDMP-DURATION 5 IDMP-DURATION 5")
            .cmd("XCFGSET s IDMP-MAXSIZE 5 IDMP-MAXSIZE 6")
            .cmd("XCFGSET s IDMP-MAXSIZE 0 IDMP-MAXSIZE 6")
            .cmd("XCFGSET s IDMP-MAXSIZE 6 IDMP-MAXSIZE 0")
            .cmd("XCFGSET s IDMP-DURATION 0 FOO")
            .argv(&["XCFGSET", "s", "IDMP-DURATION", ""])
            .cmd("XINFO STREAM s"),
        Case::new("XCFGSET: the same value keeps history, a different one clears it")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XADD s IDMP q i * f v")
            .cmd("XCFGSET s IDMP-DURATION 100 IDMP-MAXSIZE 100")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XINFO STREAM s")
            .cmd("xcfgset s idmp-duration 86400")
            .cmd("XINFO STREAM s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XCFGSET s IDMP-MAXSIZE 10000 IDMP-DURATION 1")
            .cmd("XINFO STREAM s")
            .cmd("XCFGSET s IDMP-MAXSIZE 1")
            .cmd("XCFGSET s IDMP-DURATION 1")
            .cmd("XINFO STREAM s FULL"),
        Case::new("XIDMPRECORD errors, in Redis's order")
            .cmd("XIDMPRECORD nokey p i bad")
            .cmd("XIDMPRECORD nokey p i 1")
            .argv(&["XIDMPRECORD", "nokey", "", "i", "x"])
            .argv(&["XIDMPRECORD", "nokey", "", "", "1-0"])
            .argv(&["XIDMPRECORD", "nokey", "p", "", "1-0"])
            .cmd("XIDMPRECORD nokey p i 1-*")
            .cmd("XIDMPRECORD nokey p i *")
            .cmd("SET str x")
            .cmd("XIDMPRECORD str p i 1-0")
            .cmd("XIDMPRECORD s p i")
            .cmd("XIDMPRECORD s p i 1-0 extra")
            .seed("s")
            .cmd("XADD s 9999999999999-1 f v")
            .cmd("XDEL s 9999999999999-1")
            .cmd("XIDMPRECORD s p i 9999999999999-1")
            .cmd("XIDMPRECORD s p i 9999999999999-7")
            .cmd("XIDMPRECORD s p i 5-0")
            .cmd("XINFO STREAM s"),
        Case::new("XIDMPRECORD records, repeats, conflicts, and XADD then answers it")
            .seed("s")
            .cmd("XADD s 9999999999999-1 f v")
            .cmd("XIDMPRECORD s p i 9999999999999-0")
            .cmd("XIDMPRECORD s p i 9999999999999")
            .cmd("XIDMPRECORD s p i 9999999999999-1")
            .cmd("XIDMPRECORD s q i 9999999999999-1")
            .cmd("XINFO STREAM s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XADD s IDMP q i * f v")
            .cmd("XADD s IDMP p j * f v")
            .cmd("XIDMPRECORD s p j 9999999999999-2")
            .cmd("XIDMPRECORD s p j 9999999999999-0")
            .cmd("XCFGSET s IDMP-MAXSIZE 1")
            .cmd("XIDMPRECORD s p a 9999999999999-0")
            .cmd("XIDMPRECORD s p b 9999999999999-1")
            .cmd("XADD s IDMP p a * f v")
            .cmd("XINFO STREAM s"),
        Case::new("XINFO STREAM of a stream that never used IDMP")
            .cmd("XADD s 1-0 f v")
            .cmd("XINFO STREAM s")
            .cmd("XINFO STREAM s FULL")
            .cmd("XGROUP CREATE e g $ MKSTREAM")
            .cmd("XINFO STREAM e"),
        Case::new("stream-idmp-duration and stream-idmp-maxsize: defaults, ranges, new streams")
            .cmd("CONFIG GET stream-idmp-duration")
            .cmd("CONFIG GET stream-idmp-maxsize")
            // (No glob: Redis lists a glob's matches in its hash order, seeded per process.)
            .cmd("XADD old 1-0 f v")
            .cmd("CONFIG SET stream-idmp-duration 0")
            .cmd("CONFIG SET stream-idmp-duration 86401")
            .cmd("CONFIG SET stream-idmp-duration x")
            .cmd("CONFIG SET stream-idmp-maxsize 0")
            .cmd("CONFIG SET stream-idmp-maxsize 10001")
            .cmd("CONFIG SET stream-idmp-duration 7")
            .cmd("CONFIG SET stream-idmp-maxsize 3")
            .cmd("CONFIG GET stream-idmp-duration")
            .cmd("CONFIG GET stream-idmp-maxsize")
            .cmd("XADD new 1-0 f v")
            .cmd("XGROUP CREATE mk g $ MKSTREAM")
            .cmd("XINFO STREAM old")
            .cmd("XINFO STREAM new")
            .cmd("XINFO STREAM mk")
            .cmd("XCFGSET new IDMP-DURATION 7")
            .cmd("CONFIG SET stream-idmp-duration 100")
            .cmd("CONFIG SET stream-idmp-maxsize 100")
            .cmd("XINFO STREAM new"),
        Case::new("the map follows its key through RENAME and goes with DEL and FLUSH")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("RENAME s t")
            .cmd("XADD t IDMP p i * f v")
            .cmd("XINFO STREAM t")
            .cmd("RENAMENX t u")
            .cmd("XADD u IDMP p i * f v")
            .cmd("DEL u")
            .seed("u")
            .cmd("XADD u IDMP p i * f v")
            .cmd("XINFO STREAM u")
            .cmd("FLUSHDB")
            .seed("u")
            .cmd("XADD u IDMP p i * f v")
            .cmd("XINFO STREAM u")
            .cmd("FLUSHALL")
            .seed("u")
            .cmd("XADD u IDMP p i * f v")
            .cmd("XINFO STREAM u"),
        Case::new(
            "WATCH: IDMP duplicates, XCFGSET and XIDMPRECORD do not touch the key, appends do",
        )
        .seed("s")
        .cmd("XADD s IDMP p i * f v")
        .cmd("XADD s 9999999999999-5 f v")
        .cmd("WATCH s")
        .cmd("XADD s IDMP p i * f v")
        .cmd("MULTI")
        .cmd("XLEN s")
        .cmd("EXEC")
        .cmd("WATCH s")
        .cmd("XCFGSET s IDMP-DURATION 100")
        .cmd("XIDMPRECORD s p i 9999999999999-1")
        .cmd("XIDMPRECORD s q i 9999999999999-5")
        .cmd("MULTI")
        .cmd("XLEN s")
        .cmd("EXEC")
        .cmd("WATCH s")
        .cmd("XCFGSET s IDMP-DURATION 200")
        .cmd("MULTI")
        .cmd("XLEN s")
        .cmd("EXEC")
        .cmd("WATCH s")
        .cmd("XADD s IDMP p new * f v")
        .cmd("MULTI")
        .cmd("XLEN s")
        .cmd("EXEC"),
        Case::new("a duplicate is answered even when the stream has no id left")
            .seed("s")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XSETID s 18446744073709551615-18446744073709551615")
            .cmd("XADD s IDMP p i * f v")
            .cmd("XADD s IDMP p j * f v")
            .cmd("XADD s IDMPAUTO p * f v")
            .cmd("XINFO STREAM s"),
        Case::new("IDMP inside MULTI/EXEC")
            .seed("s")
            .multi(&[
                "XADD s IDMP p i * f v",
                "XADD s IDMP p i * f v",
                "XADD s IDMPAUTO p * f v",
                "XADD s IDMPAUTO p * f v",
                "XADD s IDMP p i 1-1 f v",
                "XCFGSET s IDMP-MAXSIZE 5",
                "XIDMPRECORD s p i 9999999999999-0",
                "XLEN s",
            ])
            .cmd("XINFO STREAM s"),
    ]
}

/// Sends one batch to both servers and compares.
pub fn send(differ: &mut WireDiffer, batch: &Batch) -> Result<(), Mismatch> {
    match batch {
        Batch::One(argv) => differ.run(argv).map(drop),
        Batch::Transaction(commands) => differ.transaction(commands),
    }
}

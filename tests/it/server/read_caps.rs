//! XREAD / XREADGROUP `MAXCOUNT` and `MAXSIZE` (Redis 8.10) over a real socket, in RESP2 and
//! RESP3: every fact of `docs/reference/streams-8.md` §6, and each client library's assertion
//! against a live 8.10 server as one test (named after the library). Each test runs in both
//! protocols; the reply is read as streams in order, each with its entry ids.

use std::io::BufReader;

use echomq::testing::TestServer;

use super::Wire;
use crate::support::resp::Resp;

/// One connection in one protocol.
struct Client {
    wire: Wire,
    resp3: bool,
}

impl Client {
    fn call(&mut self, argv: &[&str]) -> Resp {
        let raw = self.wire.command(argv);
        let mut reader = BufReader::new(&raw[..]);
        Resp::read(&mut reader, &mut Vec::new()).unwrap()
    }

    fn ok(&mut self, argv: &[&str]) {
        let reply = self.call(argv);
        assert!(!matches!(reply, Resp::Error(_)), "{argv:?} gave {reply:?}");
    }

    fn error(&mut self, argv: &[&str]) -> String {
        match self.call(argv) {
            Resp::Error(text) => text,
            other => panic!("{argv:?} gave {other:?}, not an error"),
        }
    }

    /// An XREAD-shaped reply as `(key, ids)` in reply order; a null reply is no stream.
    fn read(&mut self, argv: &[&str]) -> Vec<(String, Vec<String>)> {
        let reply = self.call(argv);
        streams(&reply, self.resp3)
    }

    fn total(&mut self, argv: &[&str]) -> usize {
        self.read(argv).iter().map(|(_, ids)| ids.len()).sum()
    }

    /// Adds `n` entries `1-0`, `2-0`, ... to `key`.
    fn fill(&mut self, key: &str, n: usize) {
        for i in 1..=n {
            self.ok(&["XADD", key, &format!("{i}-0"), "f", "v"]);
        }
    }
}

fn text(r: &Resp) -> String {
    match r {
        Resp::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("not a bulk string: {other:?}"),
    }
}

fn streams(reply: &Resp, resp3: bool) -> Vec<(String, Vec<String>)> {
    let pairs: Vec<(&Resp, &Resp)> = match reply {
        Resp::NullArray | Resp::Null => return Vec::new(),
        Resp::Map(pairs) => {
            assert!(resp3, "a map in RESP2");
            pairs.iter().map(|(k, v)| (k, v)).collect()
        }
        Resp::Array(items) => {
            assert!(!resp3, "an array of pairs in RESP3");
            items
                .iter()
                .map(|p| match p {
                    Resp::Array(kv) if kv.len() == 2 => (&kv[0], &kv[1]),
                    other => panic!("not a [key, entries] pair: {other:?}"),
                })
                .collect()
        }
        other => panic!("not an XREAD reply: {other:?}"),
    };
    pairs
        .into_iter()
        .map(|(k, v)| {
            let ids = match v {
                Resp::Array(entries) => entries
                    .iter()
                    .map(|e| match e {
                        Resp::Array(parts) => text(&parts[0]),
                        other => panic!("not an entry: {other:?}"),
                    })
                    .collect(),
                other => panic!("not an entry list: {other:?}"),
            };
            (text(k), ids)
        })
        .collect()
}

/// Runs `body` on a fresh server once in RESP2 and once in RESP3.
fn both(body: impl Fn(&mut Client, &TestServer)) {
    for resp3 in [false, true] {
        let server = TestServer::start().unwrap();
        let wire = if resp3 {
            Wire::connect_resp3(&server)
        } else {
            Wire::connect(&server)
        };
        let mut client = Client { wire, resp3 };
        body(&mut client, &server);
    }
}

fn ids(range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|i| format!("{i}-0")).collect()
}

fn group(c: &mut Client, key: &str) {
    c.ok(&["XGROUP", "CREATE", key, "g", "0", "MKSTREAM"]);
}

#[test]
fn redis_py_max_count_max_size_and_count_with_max_count() {
    both(|c, _| {
        c.fill("one", 5);
        assert_eq!(
            c.total(&["XREAD", "MAXCOUNT", "2", "STREAMS", "one", "0"]),
            2
        );
        c.fill("single", 1);
        assert_eq!(
            c.total(&["XREAD", "MAXSIZE", "65536", "STREAMS", "single", "0"]),
            1
        );
        assert_eq!(
            c.total(&["XREAD", "MAXSIZE", "1", "STREAMS", "one", "0"]),
            1
        );
        c.fill("a", 3);
        c.fill("b", 3);
        let read = [
            "XREAD", "COUNT", "3", "MAXCOUNT", "4", "STREAMS", "a", "b", "0", "0",
        ];
        assert_eq!(c.total(&read), 4);
        group(c, "a");
        group(c, "b");
        let grouped = [
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "3",
            "MAXCOUNT",
            "4",
            "STREAMS",
            "a",
            "b",
            ">",
            ">",
        ];
        assert_eq!(c.total(&grouped), 4);
    });
}

#[test]
fn node_redis_and_ioredis_max_count_three_and_max_size_one_over_two_plus_two() {
    both(|c, _| {
        c.fill("s1", 2);
        c.fill("s2", 2);
        let keys = ["STREAMS", "s1", "s2", "0", "0"];
        assert_eq!(
            c.total(&[&["XREAD", "MAXCOUNT", "3"][..], &keys].concat()),
            3
        );
        assert_eq!(
            c.total(&[&["XREAD", "MAXSIZE", "1"][..], &keys].concat()),
            1
        );
        for key in ["s1", "s2"] {
            group(c, key);
        }
        let head = ["XREADGROUP", "GROUP", "g", "c"];
        let gt = ["STREAMS", "s1", "s2", ">", ">"];
        assert_eq!(c.total(&[&head[..], &["MAXCOUNT", "3"], &gt].concat()), 3);
        c.ok(&["XGROUP", "SETID", "s1", "g", "0"]);
        c.ok(&["XGROUP", "SETID", "s2", "g", "0"]);
        assert_eq!(c.total(&[&head[..], &["MAXSIZE", "1"], &gt].concat()), 1);
    });
}

#[test]
fn go_redis_max_count_four_and_max_size_one_from_the_first_stream() {
    both(|c, _| {
        c.fill("s1", 3);
        c.fill("s2", 3);
        let read = |opt: &str, n: &str| {
            ["XREAD", opt, n, "STREAMS", "s1", "s2", "0", "0"].map(str::to_owned)
        };
        let r = read("MAXCOUNT", "4");
        assert_eq!(c.total(&r.each_ref().map(String::as_str)), 4);
        let r = read("MAXSIZE", "1");
        let got = c.read(&r.each_ref().map(String::as_str));
        assert_eq!(got, vec![("s1".to_owned(), ids(1..=1))]);
    });
}

#[test]
fn lettuce_caller_order_first_entry_empty_stays_empty_and_pel_total() {
    both(|c, _| {
        c.fill("s1", 4);
        c.fill("s2", 4);
        let got = c.read(&[
            "XREAD", "BLOCK", "1000", "COUNT", "2", "MAXCOUNT", "3", "MAXSIZE", "65536", "STREAMS",
            "s1", "s2", "0", "0",
        ]);
        assert_eq!(
            got,
            vec![("s1".into(), ids(1..=2)), ("s2".into(), ids(1..=1))]
        );
        let got = c.read(&["XREAD", "MAXSIZE", "1", "STREAMS", "s1", "s2", "0", "0"]);
        assert_eq!(got, vec![("s1".to_owned(), ids(1..=1))]);
        // An empty read stays empty: a null reply, as without the option.
        let empty = c.call(&["XREAD", "MAXSIZE", "1", "STREAMS", "s1", "s2", "$", "$"]);
        assert!(matches!(empty, Resp::NullArray | Resp::Null), "{empty:?}");
        c.fill("p1", 2);
        c.fill("p2", 2);
        group(c, "p1");
        group(c, "p2");
        let n = c.total(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "MAXCOUNT",
            "3",
            "STREAMS",
            "p1",
            "p2",
            ">",
            ">",
        ]);
        assert_eq!(n, 3);
        let pending = |c: &mut Client, key: &str| match c.call(&["XPENDING", key, "g"]) {
            Resp::Array(items) => match items[0] {
                Resp::Int(n) => n,
                ref other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert_eq!(pending(c, "p1") + pending(c, "p2"), 3);
        assert!(
            c.error(&["XREAD", "MAXCOUNT", "0", "STREAMS", "s1", "0"])
                .contains("MAXCOUNT")
        );
        assert!(
            c.error(&["XREAD", "MAXSIZE", "-1", "STREAMS", "s1", "0"])
                .contains("MAXSIZE")
        );
    });
}

#[test]
fn jedis_errors_caller_order_oversized_tighter_cap_and_undelivered_entries() {
    both(|c, _| {
        c.fill("s1", 4);
        c.fill("s2", 4);
        for cmd in [
            &["XREAD", "COUNT", "5", "MAXCOUNT", "1", "STREAMS", "s1", "0"][..],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "COUNT",
                "2",
                "MAXCOUNT",
                "1",
                "STREAMS",
                "s1",
                ">",
            ],
        ] {
            assert_eq!(
                c.error(cmd),
                "ERR MAXCOUNT must be greater than or equal to COUNT"
            );
        }
        let got = c.read(&["XREAD", "MAXCOUNT", "3", "STREAMS", "s1", "s2", "0", "0"]);
        assert_eq!(got, vec![("s1".to_owned(), ids(1..=3))]);
        let big = "x".repeat(5000);
        c.ok(&["XADD", "big", "1-0", "f", &big]);
        c.ok(&["XADD", "big", "2-0", "f", "v"]);
        let got = c.read(&["XREAD", "MAXSIZE", "50", "STREAMS", "big", "0"]);
        assert_eq!(got, vec![("big".to_owned(), ids(1..=1))]);
        let both_caps = [
            "XREAD", "MAXCOUNT", "2", "MAXSIZE", "1000000", "STREAMS", "s1", "0",
        ];
        assert_eq!(c.total(&both_caps), 2);
        c.fill("g1", 3);
        c.fill("g2", 3);
        group(c, "g1");
        group(c, "g2");
        let first = c.read(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "2",
            "MAXCOUNT",
            "3",
            "STREAMS",
            "g1",
            "g2",
            ">",
            ">",
        ]);
        assert_eq!(
            first,
            vec![("g1".into(), ids(1..=2)), ("g2".into(), ids(1..=1))]
        );
        let rest = c.read(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "10",
            "STREAMS",
            "g1",
            "g2",
            ">",
            ">",
        ]);
        assert_eq!(
            rest,
            vec![("g1".into(), ids(3..=3)), ("g2".into(), ids(2..=3))]
        );
    });
}

#[test]
fn redis_rb_max_size_one_leaves_out_the_second_stream_and_block_keeps_the_caps() {
    both(|c, server| {
        c.fill("{s}1", 2);
        c.fill("{s}2", 2);
        let keys = ["STREAMS", "{s}1", "{s}2", "0", "0"];
        let got = c.read(&[&["XREAD", "MAXSIZE", "1"][..], &keys].concat());
        assert!(got.iter().all(|(k, _)| k != "{s}2"), "{got:?}");
        let all = c.total(&[&["XREAD", "MAXSIZE", "1048576"][..], &keys].concat());
        assert_eq!(all, 4);
        c.error(&["XREAD", "MAXCOUNT", "0", "STREAMS", "{s}1", "0"]);
        c.error(&[
            "XREAD", "COUNT", "2", "MAXCOUNT", "1", "STREAMS", "{s}1", "0",
        ]);
        let one = [
            "XREAD", "MAXCOUNT", "1", "BLOCK", "100", "STREAMS", "{s}1", "0",
        ];
        assert_eq!(c.total(&one), 1);
        // Nothing after `$`: the block times out with the null reply.
        c.wire.send_command(&[
            "XREAD", "MAXCOUNT", "1", "BLOCK", "100", "STREAMS", "{s}1", "$",
        ]);
        c.wire.expect_silence();
        server.advance_ms(200);
        let raw = c.wire.read_reply();
        assert!(raw == b"*-1\r\n" || raw == b"_\r\n", "{raw:?}");
    });
}

#[test]
fn predis_exact_messages_and_max_count_without_count() {
    both(|c, _| {
        c.fill("stream1", 2);
        c.fill("stream2", 2);
        assert_eq!(
            c.error(&["XREAD", "MAXCOUNT", "0", "STREAMS", "stream1", "0"]),
            "ERR MAXCOUNT must be a positive integer"
        );
        assert_eq!(
            c.error(&["XREAD", "MAXSIZE", "0", "STREAMS", "stream1", "0"]),
            "ERR MAXSIZE must be a positive integer"
        );
        assert_eq!(
            c.error(&[
                "XREAD", "COUNT", "2", "MAXCOUNT", "1", "STREAMS", "stream1", "0"
            ]),
            "ERR MAXCOUNT must be greater than or equal to COUNT"
        );
        let got = c.read(&[
            "XREAD", "MAXCOUNT", "2", "STREAMS", "stream1", "stream2", "0", "0",
        ]);
        assert_eq!(got, vec![("stream1".to_owned(), ids(1..=2))]);
        c.ok(&["XADD", "gone", "1-0", "f", "v"]);
        c.ok(&["XDEL", "gone", "1-0"]);
        let empty = c.call(&["XREAD", "MAXSIZE", "1", "STREAMS", "gone", "0"]);
        assert!(matches!(empty, Resp::NullArray | Resp::Null), "{empty:?}");
    });
}

#[test]
fn the_docs_examples_over_three_streams_of_a_hundred() {
    both(|c, _| {
        for key in ["s1", "s2", "s3"] {
            c.fill(key, 100);
        }
        let keys = ["STREAMS", "s1", "s2", "s3", "0", "0", "0"];
        let with = |opt: &[&'static str]| [&["XREAD"][..], opt, &keys].concat();
        let got = c.read(&with(&["COUNT", "50", "MAXCOUNT", "80"]));
        assert_eq!(
            got.iter().map(|(_, e)| e.len()).collect::<Vec<_>>(),
            [50, 30]
        );
        let got = c.read(&with(&["MAXCOUNT", "7"]));
        assert_eq!(got, vec![("s1".to_owned(), ids(1..=7))]);
        assert_eq!(c.total(&with(&["MAXCOUNT", "5", "MAXSIZE", "100000"])), 5);
        // Options in any order before STREAMS, MAXCOUNT == COUNT allowed.
        assert_eq!(
            c.total(&with(&["MAXSIZE", "100000", "MAXCOUNT", "5", "COUNT", "5"])),
            5
        );
    });
}

/// One entry `[n-0, [f, v]]` is 31 bytes; the stream's header (`*2` and `$1 s` in RESP2, the
/// key alone in RESP3) counts before the first entry: 42 bytes after one entry in RESP2, 38 in
/// RESP3. So MAXSIZE 40 cuts after one entry in RESP2 and after two in RESP3; in a MULTI the
/// replies before do not count.
#[test]
fn max_size_counts_the_bytes_written_in_the_callers_protocol_and_per_command() {
    both(|c, _| {
        c.fill("s", 5);
        let expect = |max: &str, resp3: bool| match (max, resp3) {
            ("40", false) | ("42", false) => 1,
            ("40", true) | ("42", true) | ("43", false) => 2,
            ("43", true) => 2,
            _ => unreachable!(),
        };
        for max in ["40", "42", "43"] {
            let n = c.total(&["XREAD", "MAXSIZE", max, "STREAMS", "s", "0"]);
            assert_eq!(n, expect(max, c.resp3), "MAXSIZE {max}");
        }
        c.ok(&["MULTI"]);
        c.ok(&["XRANGE", "s", "-", "+"]);
        c.ok(&["XREAD", "MAXSIZE", "40", "STREAMS", "s", "0"]);
        let exec = c.call(&["EXEC"]);
        let Resp::Array(replies) = exec else {
            panic!("{exec:?}")
        };
        let n: usize = streams(&replies[1], c.resp3)
            .iter()
            .map(|(_, e)| e.len())
            .sum();
        assert_eq!(n, expect("40", c.resp3));
    });
}

#[test]
fn xreadgroup_history_and_claim_reads_honour_the_caps_and_leave_the_rest_untouched() {
    both(|c, server| {
        c.fill("s", 4);
        group(c, "s");
        c.ok(&["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"]);
        // History: MAXCOUNT 2 re-delivers two; the others keep their delivery count 1.
        let got = c.read(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c1",
            "MAXCOUNT",
            "2",
            "STREAMS",
            "s",
            "0",
        ]);
        assert_eq!(got, vec![("s".to_owned(), ids(1..=2))]);
        let counts = |c: &mut Client| -> Vec<i64> {
            match c.call(&["XPENDING", "s", "g", "-", "+", "10"]) {
                Resp::Array(rows) => rows
                    .iter()
                    .map(|r| match r {
                        Resp::Array(f) => match f[3] {
                            Resp::Int(n) => n,
                            ref o => panic!("{o:?}"),
                        },
                        o => panic!("{o:?}"),
                    })
                    .collect(),
                o => panic!("{o:?}"),
            }
        };
        assert_eq!(counts(c), [2, 2, 1, 1]);
        // CLAIM: MAXSIZE 1 claims exactly one; the rest stay c1's.
        server.advance_ms(1000);
        let got = c.read(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c2",
            "MAXSIZE",
            "1",
            "CLAIM",
            "10",
            "STREAMS",
            "s",
            ">",
        ]);
        assert_eq!(got.iter().map(|(_, e)| e.len()).sum::<usize>(), 1);
        let owners = c.call(&["XPENDING", "s", "g"]);
        let Resp::Array(summary) = owners else {
            panic!("{owners:?}")
        };
        assert_eq!(summary[0], Resp::Int(4));
        let Resp::Array(per) = &summary[3] else {
            panic!("{summary:?}")
        };
        let owned: Vec<(String, String)> = per
            .iter()
            .map(|row| match row {
                Resp::Array(kv) => (text(&kv[0]), text(&kv[1])),
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(
            owned,
            [("c1".into(), "3".into()), ("c2".into(), "1".into())]
        );
    });
}

#[test]
fn a_blocked_xreadgroup_rerun_keeps_its_caps() {
    both(|c, server| {
        group(c, "s");
        c.wire.send_command(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "MAXCOUNT",
            "1",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ]);
        c.wire.expect_silence();
        let mut other = Wire::connect(server);
        other.command(&["XADD", "s", "1-0", "f", "v"]);
        let raw = c.wire.read_reply();
        let reply = Resp::read(&mut BufReader::new(&raw[..]), &mut Vec::new()).unwrap();
        assert_eq!(streams(&reply, c.resp3), vec![("s".to_owned(), ids(1..=1))]);
        // Two entries arrive at once (MULTI): the re-run still takes one.
        c.wire.send_command(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "MAXCOUNT",
            "1",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ]);
        c.wire.expect_silence();
        other.command(&["MULTI"]);
        other.command(&["XADD", "s", "2-0", "f", "v"]);
        other.command(&["XADD", "s", "3-0", "f", "v"]);
        other.command(&["EXEC"]);
        let raw = c.wire.read_reply();
        let reply = Resp::read(&mut BufReader::new(&raw[..]), &mut Vec::new()).unwrap();
        assert_eq!(streams(&reply, c.resp3), vec![("s".to_owned(), ids(2..=2))]);
    });
}

/// COMMAND GETKEYS steps over every option's value and GROUP's group and consumer, so a
/// group, consumer or key named STREAMS, or MAXCOUNT/MAXSIZE before STREAMS, never shifts the
/// keys (Redis 8.10's ACL cases, `docs/reference/streams-8.md` §7).
#[test]
fn command_getkeys_steps_over_option_values_and_the_group_triple() {
    both(|c, _| {
        let keys = |c: &mut Client, request: &str| -> Vec<String> {
            let argv: Vec<&str> = ["COMMAND", "GETKEYS"]
                .into_iter()
                .chain(request.split(' '))
                .collect();
            match c.call(&argv) {
                Resp::Array(items) => items.iter().map(text).collect(),
                other => panic!("{request}: {other:?}"),
            }
        };
        for (request, want) in [
            (
                "XREADGROUP NOACK GROUP g STREAMS STREAMS write2 >",
                vec!["write2"],
            ),
            (
                "XREADGROUP GROUP g consumer MAXCOUNT 10 STREAMS write2 >",
                vec!["write2"],
            ),
            ("XREAD MAXSIZE 5 STREAMS write2 $", vec!["write2"]),
            (
                "XREAD COUNT 1 MAXCOUNT 2 STREAMS STREAMS a 0 0",
                vec!["STREAMS", "a"],
            ),
        ] {
            assert_eq!(keys(c, request), want, "{request}");
        }
    });
}

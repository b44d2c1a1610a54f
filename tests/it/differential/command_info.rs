//! COMMAND INFO and COMMAND DOCS of the stream containers XGROUP and XINFO, their subcommands
//! by full name (`xgroup|create`), and the key specs in them, and of a sample of the other
//! commands and subcommands, against Redis 8.8 over the wire, RESP2 and RESP3.
//!
//! Replies are compared whole, as RESP values re-encoded with their types (sets as sets, maps
//! as maps), after one normalization: a container's subcommands are put in name order on both
//! sides, since Redis lists them in its hash table's order, which a random seed changes from
//! one run to the next.

use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};

use echomq::testing::TestServer;

use crate::support::peer::{Peer, PeerKind};
use crate::support::resp::{Resp, write_command};

const REQUESTS: &[&str] = &[
    "COMMAND INFO xgroup",
    "COMMAND INFO XINFO",
    "COMMAND INFO xgroup xinfo",
    "COMMAND INFO xgroup|create xgroup|setid xgroup|destroy xgroup|createconsumer",
    "COMMAND INFO xgroup|delconsumer xgroup|help XGROUP|CREATE",
    "COMMAND INFO xinfo|stream xinfo|groups xinfo|consumers xinfo|help",
    "COMMAND INFO xgroup|nosuch nosuch|create nosuch",
    "COMMAND DOCS xgroup",
    "COMMAND DOCS xinfo",
    "COMMAND DOCS xgroup|create xgroup|setid xinfo|stream xinfo|help",
    "COMMAND DOCS xgroup|destroy xgroup|createconsumer xgroup|delconsumer xinfo|groups",
    "COMMAND DOCS xinfo|consumers xgroup|nosuch",
    // The other commands, as Redis 8.8 declares them (protocol/src/cmd/command_rows.rs).
    "COMMAND INFO get set hset lpush sadd xadd mset del sort blpop",
    "COMMAND INFO incrbyfloat bitfield pfadd hexpire hgetex lmpop sintercard getex msetex",
    "COMMAND INFO ping hello select multi exec publish subscribe",
    "COMMAND DOCS get set hset lpush",
    "COMMAND DOCS sort bitfield hexpire lmpop",
    "COMMAND DOCS ping hello subscribe xadd",
    "COMMAND INFO client|list config|get object|encoding memory|usage",
    "COMMAND DOCS client|list config|set object|freq",
];

struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(addr: SocketAddr, protocol: u8) -> Conn {
        let stream = TcpStream::connect(addr).unwrap();
        let mut conn = Conn {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        };
        if protocol == 3 {
            conn.call("HELLO 3");
        }
        conn
    }

    fn call(&mut self, line: &str) -> Resp {
        let argv: Vec<&str> = line.split_whitespace().collect();
        write_command(&mut self.writer, &argv).unwrap();
        let mut raw = Vec::new();
        Resp::read(&mut self.reader, &mut raw).unwrap()
    }
}

/// The name a COMMAND INFO entry starts with.
fn entry_name(entry: &Resp) -> Vec<u8> {
    match entry {
        Resp::Array(items) => match items.first() {
            Some(Resp::Bulk(name)) => name.clone(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The pairs of a map, RESP3 or RESP2 (a flat array).
fn pairs_of(value: &mut Resp) -> Option<Vec<(Resp, Resp)>> {
    match value {
        Resp::Map(pairs) => Some(std::mem::take(pairs)),
        Resp::Array(flat) if flat.len() % 2 == 0 => {
            let items = std::mem::take(flat);
            let mut pairs = Vec::new();
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            Some(pairs)
        }
        _ => None,
    }
}

/// Puts the pairs back as they came (a map, or a flat array).
fn put_pairs(value: &mut Resp, pairs: Vec<(Resp, Resp)>, resp3: bool) {
    *value = if resp3 {
        Resp::Map(pairs)
    } else {
        Resp::Array(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect())
    };
}

/// Sorts every container's subcommands by name, in a COMMAND INFO or COMMAND DOCS reply.
fn sort_subcommands(line: &str, reply: &mut Resp, resp3: bool) {
    if line.starts_with("COMMAND INFO") {
        let Resp::Array(entries) = reply else { return };
        for entry in entries {
            if let Resp::Array(items) = entry
                && let Some(Resp::Array(subs)) = items.get_mut(9)
            {
                subs.sort_by_key(entry_name);
            }
        }
        return;
    }
    let Some(mut docs) = pairs_of(reply) else {
        return;
    };
    for (_, doc) in &mut docs {
        let Some(mut fields) = pairs_of(doc) else {
            continue;
        };
        for (key, value) in &mut fields {
            if key.as_text() == Some("subcommands")
                && let Some(mut subs) = pairs_of(value)
            {
                subs.sort_by_key(|pair| pair.0.to_bytes());
                put_pairs(value, subs, resp3);
            }
        }
        put_pairs(doc, fields, resp3);
    }
    put_pairs(reply, docs, resp3);
}

#[test]
fn command_info_and_docs_match_redis_8_8_key_specs_included() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    for protocol in [2u8, 3] {
        let mut theirs_conn = Conn::open(peer.addr(), protocol);
        let mut ours_conn = Conn::open(ours.addr(), protocol);
        for line in REQUESTS {
            let mut theirs = theirs_conn.call(line);
            let mut mine = ours_conn.call(line);
            sort_subcommands(line, &mut theirs, protocol == 3);
            sort_subcommands(line, &mut mine, protocol == 3);
            let (a, b) = (mine.to_bytes(), theirs.to_bytes());
            if a != b {
                let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
                let from = at.saturating_sub(200);
                panic!(
                    "RESP{protocol} {line}: differs at byte {at}\n echomq:    {}\n redis 8.8: {}",
                    String::from_utf8_lossy(&a[from..(at + 200).min(a.len())]).escape_debug(),
                    String::from_utf8_lossy(&b[from..(at + 200).min(b.len())]).escape_debug(),
                );
            }
        }
    }
}

#[test]
fn every_xgroup_and_xinfo_subcommand_has_its_key_spec() {
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut conn = Conn::open(ours.addr(), 3);
    let Resp::Array(entries) = conn.call("COMMAND INFO xgroup xinfo") else {
        panic!("COMMAND INFO did not answer an array");
    };
    let mut keyed = 0;
    for entry in &entries {
        let Resp::Array(items) = entry else {
            panic!("{entry:?}")
        };
        let Some(Resp::Array(subs)) = items.get(9) else {
            panic!("no subcommands in {entry:?}")
        };
        for sub in subs {
            let Resp::Array(fields) = sub else {
                panic!("{sub:?}")
            };
            let name = String::from_utf8_lossy(&entry_name(sub)).into_owned();
            let Some(Resp::Set(specs)) = fields.get(8) else {
                panic!("{name}: no key specs set")
            };
            if name.ends_with("|help") {
                assert!(specs.is_empty(), "{name}");
            } else {
                assert_eq!(specs.len(), 1, "{name}");
                assert_eq!(fields[3], Resp::Int(2), "{name}: the key is argument 2");
                keyed += 1;
            }
        }
    }
    assert_eq!(
        keyed,
        5 + 3,
        "XGROUP's five keyed subcommands and XINFO's three"
    );
}

/// Takes Redis 8.10's additions out of XREAD's and XREADGROUP's rows (key-spec notes and the
/// `incomplete` flag, the history entries, the MAXCOUNT and MAXSIZE arguments, an argument's
/// `since`): what is left must be Redis 8.8's row exactly.
fn without_8_10(value: &mut Resp) {
    let is_key = |k: &Resp, name: &str| match k {
        Resp::Bulk(b) => b == name.as_bytes(),
        Resp::Simple(s) => s == name,
        _ => false,
    };
    match value {
        Resp::Map(pairs) => {
            let argument = pairs.iter().any(|(k, _)| is_key(k, "name"));
            pairs.retain(|(k, _)| {
                !(is_key(k, "notes") || is_key(k, "history") || (argument && is_key(k, "since")))
            });
            for (_, v) in pairs {
                without_8_10(v);
            }
        }
        Resp::Set(items) => {
            items.retain(|item| !is_key(item, "incomplete"));
            items.iter_mut().for_each(without_8_10);
        }
        Resp::Array(items) => {
            items.retain(|item| match item {
                Resp::Map(pairs) => !pairs.iter().any(|(k, v)| {
                    is_key(k, "name") && (is_key(v, "maxcount") || is_key(v, "maxsize"))
                }),
                _ => true,
            });
            items.iter_mut().for_each(without_8_10);
        }
        _ => {}
    }
}

#[test]
fn xread_and_xreadgroup_rows_are_redis_8_8s_plus_8_10s_additions() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut theirs_conn = Conn::open(peer.addr(), 3);
    let mut ours_conn = Conn::open(ours.addr(), 3);
    for line in [
        "COMMAND INFO xread",
        "COMMAND INFO xreadgroup",
        "COMMAND DOCS xread",
        "COMMAND DOCS xreadgroup",
    ] {
        let theirs = theirs_conn.call(line);
        let mine = ours_conn.call(line);
        let text = String::from_utf8_lossy(&mine.to_bytes()).into_owned();
        if line.starts_with("COMMAND INFO") {
            assert!(text.contains("incomplete") && text.contains("fall back to xreadGetKeys"));
        } else {
            assert!(
                text.contains("MAXCOUNT") && text.contains("8.10.0"),
                "{text}"
            );
        }
        if line.ends_with("xreadgroup") && line.starts_with("COMMAND DOCS") {
            assert!(text.contains("Added the `CLAIM` option."));
        }
        let mut stripped = mine.clone();
        without_8_10(&mut stripped);
        assert_eq!(
            String::from_utf8_lossy(&stripped.to_bytes()),
            String::from_utf8_lossy(&theirs.to_bytes()),
            "{line}"
        );
    }
}

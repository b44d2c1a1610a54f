//! ACLs against Redis 8.8 over the wire, RESP2 and RESP3, byte for byte: ACL SETUSER's rules
//! (malformed ones with their errors, which change nothing) read back through ACL GETUSER and
//! ACL LIST; ACL DRYRUN over users × commands × keys; AUTH, WHOAMI and the NOPERM refusals
//! of a restricted user, in MULTI too; ACL CAT (as sets: Redis lists in hash order); ACL LOG's
//! entries but for their times and client info. ACL GENPASS depends on chance: its shape is
//! checked by the server tests.

use std::collections::BTreeSet;

use echomq::testing::TestServer;

use crate::server::Wire;
use crate::support::peer::{Peer, PeerKind};
use crate::support::resp::Resp;
use crate::support::wire::{WireDiffer, line_words as argv};

/// The users the scripts create, deleted first (users outlive FLUSHALL).
const USERS: &str = "ACL DELUSER u1 u2 u3 u4 prod cons sel nopw";

fn rules_lines() -> Vec<&'static str> {
    vec![
        USERS,
        "ACL SETUSER u1",
        "ACL GETUSER u1",
        "ACL SETUSER u1 on >p1 >p2 #2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae ~a* %R~r* %W~w* %RW~b &ch* +get +set -@all +@read -@keyspace +client|kill +select|0 +SELECT|1",
        "ACL GETUSER u1",
        "ACL SETUSER u1 <p2 -get +@all -set ~* &*",
        "ACL GETUSER u1",
        "ACL SETUSER u2 on nopass allkeys allchannels allcommands -@dangerous +config|get -config +client +client|kill",
        "ACL SETUSER u3 reset on >x (~s* +get) (+@write %W~w) resetkeys %R~x",
        "ACL GETUSER u3",
        "ACL SETUSER u3 clearselectors skip-sanitize-payload nocommands +xadd +xreadgroup|foo",
        "ACL SETUSER u4 %RW~k %W~k %R~j",
        "ACL LIST",
        "ACL USERS",
        // Malformed rules: each error, and the user unchanged.
        "ACL SETUSER u1 +nosuch",
        "ACL SETUSER u1 +@nosuch",
        "ACL SETUSER u1 -@nosuch",
        "ACL SETUSER u1 bogus",
        "ACL SETUSER u1 ~x",
        "ACL SETUSER u1 &x",
        "ACL SETUSER u1 <nopass",
        "ACL SETUSER u1 #abc",
        "ACL SETUSER u1 !ABC",
        "ACL SETUSER u1 +client|kill|x",
        "ACL SETUSER u1 +select|",
        "ACL SETUSER u1 +|",
        "ACL SETUSER u1 -select|0",
        "ACL SETUSER u1 %X~a",
        "ACL SETUSER u1 % ",
        "ACL SETUSER u1 (~a +get",
        "ACL SETUSER u1 (~a +nosuch)",
        "ACL SETUSER u1 on -@all +nosuch",
        "ACL SETUSER u1 + -",
        "ACL GETUSER u1",
        // Case, aliases, overriding rules and odd patterns.
        "ACL SETUSER u4 reset On NOPASS ALLKEYS +@READ -@Write +get|x +GET -get +get",
        "ACL SETUSER u4 +config|get -config +config -config|set +@all -client +client|list",
        "ACL SETUSER u4 resetkeys %RW~ %R ~ & resetchannels &",
        "ACL GETUSER u4",
        "ACL SETUSER u4 () ( ) (resetkeys)",
        "ACL SETUSER u4 (",
        "ACL SETUSER u4 #2C26B46B68FFC68FF99B453C1D30413413422D706483BFA0F98A5E886266E7AE",
        "ACL SETUSER u4 >a >a >b <a",
        "ACL SETUSER u4 allkeys %R~x",
        "ACL SETUSER u4 allchannels &x",
        "ACL LIST",
        "ACL GETUSER nosuch",
        "ACL SETUSER",
        "ACL GETUSER",
        "ACL DELUSER default",
        "ACL DELUSER u4 nosuch",
        "ACL USERS",
        "ACL WHOAMI",
        "ACL NOSUCH",
        "ACL LOAD",
        "ACL SAVE",
        "ACL HELP",
        "ACL GENPASS 0",
        "ACL GENPASS abc",
        "ACL GENPASS 4097",
        "ACL LOG abc",
        "ACL CAT",
        "ACL CAT nosuch",
        "CONFIG GET acllog-max-len",
        "CONFIG GET aclfile",
        "CONFIG SET acllog-max-len -1",
        "CONFIG SET aclfile x",
        // `acl-pubsub-default`: what new users, new selectors and `reset` start from.
        "CONFIG SET acl-pubsub-default allchannels",
        "CONFIG GET acl-pubsub-default",
        "ACL SETUSER p1 on nopass +@all ~*",
        "ACL GETUSER p1",
        "ACL SETUSER p2 (+get ~k)",
        "ACL GETUSER p2",
        "ACL SETUSER p1 reset",
        "ACL GETUSER p1",
        "ACL LIST",
        "CONFIG SET acl-pubsub-default nope",
        "CONFIG SET acl-pubsub-default RESETCHANNELS",
        "CONFIG GET acl-pubsub-default",
        "ACL SETUSER p3 (+get ~k)",
        "ACL GETUSER p3",
        "ACL DELUSER p1 p2 p3",
        USERS,
    ]
}

fn dryrun_lines() -> Vec<String> {
    let mut lines: Vec<String> = vec![
        USERS.into(),
        "ACL SETUSER u1 on nopass +@read +object +memory|usage ~r*".into(),
        "ACL SETUSER u2 on nopass +@write -del +object|encoding %W~w* %R~r*".into(),
        "ACL SETUSER u3 on nopass +get (+set ~s*) (+publish &news.*)".into(),
        "ACL SETUSER u4 on nopass +xread +xreadgroup +lmove %R~src %W~dst".into(),
    ];
    let commands = [
        "get rk",
        "get wk",
        "set wk v",
        "set rk v",
        "set sk v",
        "del wk",
        "mget rk r2 wk",
        "lmove src dst left right",
        "lmove dst src left right",
        "xread count 1 streams src dst 0 0",
        "xread streams src 0",
        "xreadgroup group g c streams src >",
        "publish news.1 hi",
        "publish other hi",
        "client list",
        "object encoding rk",
        "object encoding wk",
        "memory usage rk",
        "msetex 2 wk1 v wk2 v",
        "msetex 2 wk1 v rk v ex 10",
        "ping",
        "get",
    ];
    for user in ["u1", "u2", "u3", "u4", "nosuch"] {
        for command in commands {
            lines.push(format!("ACL DRYRUN {user} {command}"));
        }
    }
    lines.push("ACL DRYRUN u1 nosuch".into());
    lines.push("ACL DRYRUN u1 config nosuch".into());
    lines.push("ACL DRYRUN u1 client".into());
    lines.push(USERS.into());
    lines
}

fn auth_lines() -> Vec<&'static str> {
    vec![
        USERS,
        "AUTH default x",
        "AUTH onlypass",
        "ACL SETUSER u1 on >pw +get +set +acl|whoami +multi +exec +subscribe +publish ~k* &c*",
        "ACL SETUSER u2 off >pw +@all",
        "CLIENT KILL USER nosuch",
        "CLIENT KILL USER u1",
        "AUTH u1 wrong",
        "AUTH u2 pw",
        "AUTH nosuch pw",
        "AUTH u1 pw",
        "ACL WHOAMI",
        "SET k1 v",
        "GET k1",
        "SET other v",
        "GET other",
        "DEL k1",
        "ACL LIST",
        "CLIENT ID",
        "PUBLISH c1 m",
        "PUBLISH d1 m",
        "MULTI",
        "SET k2 v",
        "SET other v",
        "INCR k2",
        "EXEC",
        "GET k2",
        "CLIENT LIST",
        "XREAD STREAMS k1 0",
        "AUTH default anything",
        "ACL WHOAMI",
        "HELLO 2 AUTH u1 wrong",
        "HELLO 2 AUTH nosuch x",
        // `requirepass` is the default user's password.
        "CONFIG SET requirepass foo",
        "ACL GETUSER default",
        "AUTH bar",
        "AUTH foo",
        "AUTH default foo",
        "ACL SETUSER default >second",
        "AUTH second",
        "CONFIG GET requirepass",
        "CONFIG SET requirepass ''",
        "ACL GETUSER default",
        "AUTH foo",
        USERS,
    ]
}

#[test]
fn acl_setuser_getuser_and_list_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = rules_lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn acl_dryrun_matches_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = dryrun_lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn auth_whoami_and_noperm_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = auth_lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The bulk strings of an array reply.
fn names(reply: &Resp) -> BTreeSet<String> {
    match reply {
        Resp::Array(items) => items
            .iter()
            .filter_map(|i| i.as_text().map(str::to_string))
            .collect(),
        other => panic!("not an array: {other}"),
    }
}

#[test]
fn acl_cat_of_each_category_matches_redis_8_as_a_set() {
    let Some(mut peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut wire = Wire::connect(&ours);
    let mut ask = |argv: &[&str]| {
        let raw = wire.command(argv);
        Resp::read(&mut &raw[..], &mut Vec::new()).expect("a reply")
    };
    let categories = names(&peer.call(&["ACL", "CAT"]));
    assert_eq!(names(&ask(&["ACL", "CAT"])), categories);
    // Redis lists a category's commands in its hash table's order: compare them as sets,
    // over the commands echomq has (each has at least one category).
    let mut theirs = Vec::new();
    let mut ours_by_category = Vec::new();
    for category in &categories {
        theirs.push(names(&peer.call(&["ACL", "CAT", category])));
        ours_by_category.push(names(&ask(&["ACL", "CAT", category])));
    }
    let known: BTreeSet<String> = ours_by_category.iter().flatten().cloned().collect();
    for (i, category) in categories.iter().enumerate() {
        let expected: BTreeSet<String> = theirs[i]
            .iter()
            .filter(|name| known.contains(*name))
            .cloned()
            .collect();
        let extra: Vec<_> = ours_by_category[i].difference(&expected).collect();
        let missing: Vec<_> = expected.difference(&ours_by_category[i]).collect();
        // echomq's own commands (EMQ.*) are in no Redis category.
        let extra: Vec<_> = extra
            .into_iter()
            .filter(|n| !n.starts_with("emq."))
            .collect();
        assert!(
            extra.is_empty() && missing.is_empty(),
            "@{category}: echomq also lists {extra:?}, misses {missing:?}"
        );
    }
}

/// ACL LOG's entries with the fields that depend on the instant or the connection masked.
fn masked_log(reply: &Resp) -> Vec<Vec<(String, String)>> {
    let Resp::Array(entries) = reply else {
        panic!("not an array: {reply}");
    };
    entries
        .iter()
        .map(|entry| {
            let Resp::Array(fields) = entry else {
                panic!("not an entry: {entry}");
            };
            fields
                .chunks(2)
                .map(|pair| {
                    let name = pair[0].as_text().unwrap_or_default().to_string();
                    let value = match name.as_str() {
                        "age-seconds"
                        | "client-info"
                        | "timestamp-created"
                        | "timestamp-last-updated" => "*".to_string(),
                        _ => pair[1].to_string(),
                    };
                    (name, value)
                })
                .collect()
        })
        .collect()
}

#[test]
fn acl_log_entries_match_redis_8_but_for_times_and_client_info() {
    let Some(mut peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let ours = TestServer::start().expect("echomq's test server starts");
    let mut wire = Wire::connect(&ours);
    let script = [
        "ACL SETUSER u1 on >pw +get +multi +exec ~k*",
        "AUTH u1 wrong",
        "AUTH nosuch pw",
        "AUTH u1 wrong",
        "AUTH u1 pw",
        "GET other",
        "SET k v",
        "GET k",
        "MULTI",
        "GET other2",
        "SET k v",
        "EXEC",
        "AUTH default x",
        "ACL LOG 2",
    ];
    let mut last = None;
    for line in script {
        let parts: Vec<&str> = line.split(' ').collect();
        let theirs = peer.call(&parts);
        let raw = wire.command(&parts);
        let ours = Resp::read(&mut &raw[..], &mut Vec::new()).expect("a reply");
        if line.starts_with("ACL LOG") {
            last = Some((theirs, ours));
        } else {
            assert_eq!(ours.to_string(), theirs.to_string(), "{line}");
        }
    }
    let (theirs, ours) = last.unwrap();
    assert_eq!(masked_log(&theirs).len(), 2);
    assert_eq!(masked_log(&ours), masked_log(&theirs));
    let full_theirs = peer.call(&["ACL", "LOG"]);
    let raw = wire.command(&["ACL", "LOG"]);
    let full_ours = Resp::read(&mut &raw[..], &mut Vec::new()).expect("a reply");
    assert_eq!(masked_log(&full_ours), masked_log(&full_theirs));
    assert_eq!(
        peer.call(&["ACL", "LOG", "RESET"]).to_string(),
        Resp::read(
            &mut &wire.command(&["ACL", "LOG", "RESET"])[..],
            &mut Vec::new()
        )
        .unwrap()
        .to_string()
    );
}

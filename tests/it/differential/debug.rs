//! DEBUG against Redis 8.8 (started with `enable-debug-command yes`), byte for byte: DEBUG
//! DIGEST and DIGEST-VALUE of the same strings, streams and sorted sets (expiry, deleted entries, several
//! databases) are Redis's digests, DEBUG PROTOCOL's replies in both protocols, DEBUG OBJECT's
//! encoding and serialized length, the no-op switches and the errors, and the encodings
//! collections come back in from DEBUG RELOAD under changed thresholds.

use echomq::testing::TestServer;

use crate::server::{Wire, show};
use crate::support::peer::{Launch, Peer, PeerKind};

fn redis() -> Option<Peer> {
    Peer::start_with(
        PeerKind::Redis8,
        &Launch {
            args: vec!["--enable-debug-command".into(), "yes".into()],
            ..Launch::default()
        },
    )
}

/// Sends `request` to both and checks the replies are the same bytes.
fn same(ours: &mut Wire, theirs: &mut Wire, request: &str) -> Vec<u8> {
    let argv: Vec<&str> = request.split(' ').collect();
    let mine = ours.command(&argv);
    let redis = theirs.command(&argv);
    assert_eq!(
        show(&mine),
        show(&redis),
        "`{request}`: echomq's reply (left) differs from Redis 8.8's"
    );
    mine
}

const DATASET: &[&str] = &[
    "FLUSHALL",
    "SET s hello",
    "SET n 12345",
    "SET big 123456789012345678901",
    "SET e ''",
    "SET t v EX 1000",
    "XADD st 1-1 a 1 b 2",
    "XADD st 1-2 a 3 b 4",
    "XADD st 2-0 c 5",
    "XADD st 3-0 a 1 b 2",
    "XDEL st 1-2",
    "XGROUP CREATE st g 0",
    "XADD empty MAXLEN 0 * f v",
    "RPUSH l a 1 b 22",
    "HSET h f v g 1 k 300",
    "HSET hx f v g w",
    "HPEXPIRE hx 100000 FIELDS 1 f",
    "SADD si 3 1 2",
    "SADD ss a b c",
    "ZADD zl 1 a 2.5 b -inf c 1e300 d 1152921504606846976 e 0.1 f",
    "ZADD zb 1 a 2.5 b -0 c 3 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "SELECT 1",
    "SET s hello",
    "SELECT 0",
];

#[test]
fn debug_digest_and_digest_value_equal_redis_8() {
    let Some(peer) = redis() else {
        return;
    };
    let server = TestServer::start().unwrap();
    let mut ours = Wire::connect(&server);
    let mut theirs = Wire::connect_to(peer.addr());
    let empty = same(&mut ours, &mut theirs, "DEBUG DIGEST");
    assert_eq!(empty, format!("+{}\r\n", "0".repeat(40)).into_bytes());
    for line in DATASET {
        let argv: Vec<&str> = line
            .split(' ')
            .map(|w| if w == "''" { "" } else { w })
            .collect();
        let (mine, redis) = (ours.command(&argv), theirs.command(&argv));
        if !line.starts_with("XADD") || !line.contains('*') {
            assert_eq!(show(&mine), show(&redis), "`{line}`");
        }
    }
    same(&mut ours, &mut theirs, "DEBUG DIGEST");
    same(
        &mut ours,
        &mut theirs,
        "DEBUG DIGEST-VALUE s n big e t st zl zb missing l h hx si ss",
    );
    same(&mut ours, &mut theirs, "DEBUG DIGEST-VALUE");
    // The same data in another database is another digest; moving it back restores it.
    same(&mut ours, &mut theirs, "MOVE n 1");
    let moved = same(&mut ours, &mut theirs, "DEBUG DIGEST");
    same(&mut ours, &mut theirs, "SELECT 1");
    same(&mut ours, &mut theirs, "MOVE n 0");
    same(&mut ours, &mut theirs, "SELECT 0");
    assert_ne!(moved, same(&mut ours, &mut theirs, "DEBUG DIGEST"));
}

#[test]
fn debug_protocol_object_switches_and_errors_match_redis_8() {
    let Some(peer) = redis() else {
        return;
    };
    let server = TestServer::start().unwrap();
    for protocol in ["2", "3"] {
        let mut ours = Wire::connect(&server);
        let mut theirs = Wire::connect_to(peer.addr());
        // HELLO's ids and modules differ: only switch.
        ours.command(&["HELLO", protocol]);
        theirs.command(&["HELLO", protocol]);
        for kind in [
            "string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib",
            "true", "false", "verbatim", "nope",
        ] {
            same(&mut ours, &mut theirs, &format!("DEBUG PROTOCOL {kind}"));
        }
        if protocol == "2" {
            same(&mut ours, &mut theirs, "DEBUG PROTOCOL push");
        } else {
            ours.send_command(&["DEBUG", "PROTOCOL", "push"]);
            theirs.send_command(&["DEBUG", "PROTOCOL", "push"]);
            for _ in 0..2 {
                assert_eq!(show(&ours.read_reply()), show(&theirs.read_reply()));
            }
        }
    }
    let mut ours = Wire::connect(&server);
    let mut theirs = Wire::connect_to(peer.addr());
    for line in [
        "SET k 12",
        "SET s hello",
        "XADD st 1-1 f v",
        "DEBUG OBJECT missing",
        "DEBUG OBJECT k x",
        "DEBUG SET-ACTIVE-EXPIRE 1",
        "DEBUG QUICKLIST-PACKED-THRESHOLD 1K",
        "DEBUG QUICKLIST-PACKED-THRESHOLD 5G",
        "DEBUG QUICKLIST-PACKED-THRESHOLD abc",
        "DEBUG REPLYBUFFER PEAK-RESET-TIME never",
        "DEBUG REPLYBUFFER PEAK-RESET-TIME abc",
        "DEBUG REPLYBUFFER RESIZING 0",
        "DEBUG REPLYBUFFER FOO 1",
        "DEBUG LISTPACK s",
        "RPUSH smalllist a b",
        "DEBUG LISTPACK smalllist",
        "DEBUG QUICKLIST smalllist",
        "HSET smallhash f v",
        "DEBUG LISTPACK smallhash",
        "CONFIG SET list-max-listpack-size 1",
        "RPUSH biglist a b c",
        "DEBUG QUICKLIST biglist",
        "DEBUG QUICKLIST biglist 1",
        "DEBUG LISTPACK biglist",
        "CONFIG SET list-max-listpack-size -2",
        "DEBUG LISTPACK missing",
        "DEBUG QUICKLIST s",
        "DEBUG CHANGE-REPL-ID",
        "DEBUG SET-ALLOW-ACCESS-EXPIRED 0",
        "DEBUG RELOAD FOO",
        "DEBUG NOSUCH",
        "DEBUG SLEEP",
        "DEBUG",
    ] {
        same(&mut ours, &mut theirs, line);
    }
    // Redis runs ten million random patterns for STRINGMATCH-TEST (`stringmatchlen_fuzz_test`
    // in util.c): about 3 s, and on a loaded machine Redis 8.8 has crashed in it. Its reply when
    // it survives is this status line (`debugCommand` in debug.c).
    assert_eq!(
        ours.command(&["DEBUG", "STRINGMATCH-TEST"]),
        b"+Apparently Redis did not crash: test passed\r\n"
    );
    for key in ["k", "s", "st"] {
        let field = |reply: &[u8], name: &str| {
            String::from_utf8_lossy(reply)
                .split([' ', '\r'])
                .find(|w| w.starts_with(name))
                .map(str::to_owned)
        };
        let (mine, redis) = (
            ours.command(&["DEBUG", "OBJECT", key]),
            theirs.command(&["DEBUG", "OBJECT", key]),
        );
        for name in ["encoding:", "serializedlength:", "refcount:"] {
            assert_eq!(
                field(&mine, name),
                field(&redis, name),
                "DEBUG OBJECT {key}"
            );
        }
    }
}

#[test]
fn debug_populate_makes_redis_8s_keys_and_errors() {
    let Some(peer) = redis() else {
        return;
    };
    let server = TestServer::start().unwrap();
    let long_prefix = "p".repeat(130);
    for protocol in ["2", "3"] {
        let mut ours = Wire::connect(&server);
        let mut theirs = Wire::connect_to(peer.addr());
        ours.command(&["HELLO", protocol]);
        theirs.command(&["HELLO", protocol]);
        populate_lines(&mut ours, &mut theirs, &long_prefix);
    }
}

/// The DEBUG POPULATE requests of [`debug_populate_makes_redis_8s_keys_and_errors`].
fn populate_lines(ours: &mut Wire, theirs: &mut Wire, long_prefix: &str) {
    for line in [
        "FLUSHALL",
        "SET key:5 mine",
        "DEBUG POPULATE 100",
        "DEBUG POPULATE 12 short 3",
        "DEBUG POPULATE 3 padded 20",
        "DEBUG POPULATE 0 none",
        &format!("DEBUG POPULATE 2 {long_prefix}"),
        "GET key:5",
        "GET key:99",
        "GET short:11",
        "GET padded:2",
        "STRLEN padded:0",
        "OBJECT ENCODING key:1",
        "DBSIZE",
        "DEBUG DIGEST",
        "DEBUG POPULATE -1",
        "DEBUG POPULATE abc",
        "DEBUG POPULATE 1.5",
        "DEBUG POPULATE 1 k -5",
        "DEBUG POPULATE 1 k x",
        "DEBUG POPULATE -1 k x",
        "DEBUG POPULATE",
        "DEBUG POPULATE 1 k 2 3",
        "DBSIZE",
    ] {
        same(ours, theirs, line);
    }
}

#[test]
fn debug_reload_keeps_the_dataset_and_its_digest() {
    let server = TestServer::start().unwrap();
    let mut c = Wire::connect(&server);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    c.expect(format!("CONFIG SET dir {dir}\r\n").as_bytes(), b"+OK\r\n");
    for line in DATASET {
        let argv: Vec<&str> = line
            .split(' ')
            .map(|w| if w == "''" { "" } else { w })
            .collect();
        c.command(&argv);
    }
    let before = c.command(&["DEBUG", "DIGEST"]);
    c.expect(b"DEBUG RELOAD\r\n", b"+OK\r\n");
    assert_eq!(show(&c.command(&["DEBUG", "DIGEST"])), show(&before));
    c.expect(b"DBSIZE\r\n", b":14\r\n");
    c.expect(
        b"DEBUG RELOAD NOFLUSH NOSAVE\r\n",
        b"-ERR Error trying to load the RDB dump, check server logs.\r\n",
    );
    c.expect(b"DEBUG RELOAD NOFLUSH MERGE NOSAVE\r\n", b"+OK\r\n");
    c.expect(
        b"SET s changed\r\nDEBUG RELOAD NOSAVE\r\n",
        b"+OK\r\n+OK\r\n",
    );
    assert_eq!(show(&c.command(&["DEBUG", "DIGEST"])), show(&before));
}

/// The encodings collections take when DEBUG RELOAD loads them back under thresholds lower or
/// higher than the ones they were written under (Redis's `rdbLoadObject` rules: a plain set
/// record with more members than an intset holds loads as a table).
#[test]
fn reloaded_collections_take_redis_8s_encodings() {
    // DEBUG RELOAD writes dump.rdb: each server into a directory of its own, never the
    // working directory other tests start their peers in.
    let dir = tempfile::tempdir().unwrap();
    let Some(peer) = Peer::start_with(
        PeerKind::Redis8,
        &Launch {
            args: vec![
                "--enable-debug-command".into(),
                "yes".into(),
                "--dir".into(),
                dir.path().display().to_string(),
            ],
            ..Launch::default()
        },
    ) else {
        return;
    };
    let server = TestServer::start().unwrap();
    let mut ours = Wire::connect(&server);
    let ours_dir = tempfile::tempdir().unwrap();
    let ours_dir = ours_dir.path().to_str().unwrap();
    ours.expect(
        format!("CONFIG SET dir {ours_dir}\r\n").as_bytes(),
        b"+OK\r\n",
    );
    let mut theirs = Wire::connect_to(peer.addr());
    let keys = "s sa sm sb h h2 h3 z z2 l l2";
    let encodings = |ours: &mut Wire, theirs: &mut Wire| {
        for key in keys.split(' ') {
            same(ours, theirs, &format!("OBJECT ENCODING {key}"));
        }
    };
    for line in [
        "CONFIG SET set-max-intset-entries 2",
        "SADD s 1 2 3",
        "SADD sa a b c",
        "SADD sm 1 a",
        "CONFIG SET set-max-listpack-entries 2",
        "SADD sb a b",
        "CONFIG SET hash-max-listpack-entries 2",
        "HSET h a 1 b 2 c 3",
        "HSET h2 a 1 b 2",
        "CONFIG SET zset-max-listpack-entries 2",
        "ZADD z 1 a 2 b 3 c",
        "ZADD z2 1 a 2 b",
        "CONFIG SET hash-max-listpack-value 2",
        "HSET h3 a 123",
        "CONFIG SET list-max-listpack-size 2",
        "RPUSH l a b c d e",
        "RPUSH l2 a",
    ] {
        same(&mut ours, &mut theirs, line);
    }
    encodings(&mut ours, &mut theirs);
    same(&mut ours, &mut theirs, "DEBUG RELOAD");
    encodings(&mut ours, &mut theirs);
    same(
        &mut ours,
        &mut theirs,
        "CONFIG SET set-max-intset-entries 512 set-max-listpack-entries 128 \
         hash-max-listpack-entries 128 zset-max-listpack-entries 128 \
         hash-max-listpack-value 64 list-max-listpack-size -2",
    );
    same(&mut ours, &mut theirs, "DEBUG RELOAD");
    encodings(&mut ours, &mut theirs);
}

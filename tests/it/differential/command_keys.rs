//! COMMAND GETKEYS, GETKEYSANDFLAGS, LIST FILTERBY and HELP against Redis 8.8 over the wire,
//! RESP2 and RESP3: the keys and key-spec flags of requests of every shape echomq has (one
//! key, ranges, two key specs, SET's and DELEX's option-dependent flags, XREAD's STREAMS,
//! a container's subcommand; EVAL and FCALL, whose keys may be none), the errors in Redis's
//! order, and filtered lists that hold one
//! name (a list's order is Redis's dict order).

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<String> {
    let mut lines = Vec::new();
    for sub in ["GETKEYS", "GETKEYSANDFLAGS"] {
        for request in [
            "GET k",
            "SET k v",
            "SET k v GET",
            "SET k v IFEQ x",
            "DELEX k",
            "DELEX k IFEQ v",
            "MSET a 1 b 2",
            "MGET a b c",
            "DEL a b c",
            "COPY a b",
            "RENAME a b",
            "RENAMENX a b",
            "LCS a b",
            "EXISTS a b",
            "XADD s * f v",
            "XREAD COUNT 1 STREAMS s1 s2 0 0",
            "XREADGROUP GROUP g c STREAMS s >",
            "XGROUP CREATE s g $",
            "XINFO STREAM s",
            "EXPIRE k 10",
            "WATCH a b",
            "GETDEL k",
            "APPEND k v",
            "SSUBSCRIBE ch",
            "PING",
            "TIME x",
            "GET",
            "NOSUCH k",
            "XREAD STREAMS s",
            "EVAL x 0",
            "EVAL x 2 a b",
            "EVALSHA_RO x 0",
            "FCALL f 0",
            "FCALL f 1 k",
            "ZUNION 1 z",
            "LMPOP 1 l LEFT",
        ] {
            lines.push(format!("COMMAND {sub} {request}"));
        }
    }
    lines.extend(
        [
            "COMMAND GETKEYS",
            "COMMAND GETKEYSANDFLAGS",
            "COMMAND HELP",
            "COMMAND HELP x",
            "COMMAND LIST FILTERBY PATTERN xautoc*",
            "COMMAND LIST FILTERBY PATTERN client|trackingi*",
            "COMMAND LIST FILTERBY MODULE foo",
            "COMMAND LIST FILTERBY FOO bar",
            "COMMAND LIST FILTERBY PATTERN",
            "COMMAND LIST FOO",
            "COMMAND LIST FILTERBY ACLCAT nosuchcategory",
        ]
        .map(String::from),
    );
    lines
}

#[test]
fn command_keys_and_lists_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            lines().iter().try_for_each(|l| {
                differ
                    .run(&words(&l.split(' ').collect::<Vec<_>>()))
                    .map(drop)
            })
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

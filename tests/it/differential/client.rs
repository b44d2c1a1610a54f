//! CLIENT's subcommands against Redis 8.8 over the wire, RESP2 and RESP3: REPLY's errors
//! (what a silenced client gets is in `server::client_command`: the differ reads a reply per
//! command), SETINFO's checks, UNBLOCK's errors and its
//! answer for a client that is not blocked, NO-EVICT, LIST's and KILL's filters and their
//! errors, each subcommand's arity error, and HELP.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, line_words as argv};

fn lines() -> Vec<&'static str> {
    vec![
        "CLIENT HELP",
        "CLIENT ID x",
        "CLIENT SETNAME",
        "CLIENT GETNAME x",
        "CLIENT REPLY",
        "CLIENT REPLY maybe",
        "CLIENT SETINFO lib-name",
        "CLIENT SETINFO lib-foo x",
        "CLIENT SETINFO lib-name a\u{20}b",
        "CLIENT SETINFO LIB-VER 1\nx",
        "CLIENT SETINFO lib-name redis-py",
        "CLIENT SETINFO lib-ver 5.0",
        "CLIENT SETINFO lib-ver ''",
        "CLIENT UNBLOCK",
        "CLIENT UNBLOCK 1 maybe",
        "CLIENT UNBLOCK x",
        "CLIENT UNBLOCK x error",
        "CLIENT UNBLOCK 999999 timeout",
        "CLIENT UNBLOCK 1 2 3",
        "CLIENT NO-EVICT maybe",
        "CLIENT NO-EVICT on",
        "CLIENT NO-EVICT off",
        "CLIENT TRACKINGINFO x",
        "CLIENT KILL MAXAGE 0",
        "CLIENT KILL MAXAGE -5",
        "CLIENT KILL MAXAGE x",
        "CLIENT KILL TYPE foo",
        "CLIENT KILL TYPE master",
        "CLIENT KILL TYPE pubsub",
        "CLIENT KILL TYPE replica MAXAGE 1000",
        "CLIENT KILL MAXAGE 100000",
        "CLIENT KILL ID 0",
        "CLIENT LIST TYPE foo",
        "CLIENT LIST TYPE master",
        "CLIENT LIST TYPE pubsub",
        "CLIENT LIST TYPE",
        "CLIENT LIST TYPE normal ID 1",
        "CLIENT LIST ID x",
        "CLIENT LIST ID 0 -1 99999",
        "CLIENT LIST foo",
    ]
}

#[test]
fn client_subcommands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            lines()
                .iter()
                .try_for_each(|l| differ.run(&argv(l)).map(drop))
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

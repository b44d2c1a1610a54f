//! Client-side caching against Redis 8.8 over the wire, RESP2 and RESP3: CLIENT TRACKING's
//! errors in Redis's order, CLIENT CACHING, GETREDIR and TRACKINGINFO, and the invalidation
//! pushes a client receives for its own writes and flushes (RESP3), read where Redis sends
//! them: after the reply of the command that caused them.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<&'static str> {
    vec![
        "CLIENT TRACKING",
        "CLIENT TRACKING MAYBE",
        "CLIENT TRACKING ON FOO",
        "CLIENT TRACKING ON REDIRECT",
        "CLIENT TRACKING ON PREFIX",
        "CLIENT TRACKING ON REDIRECT abc",
        "CLIENT TRACKING ON REDIRECT -1",
        "CLIENT TRACKING ON REDIRECT 0 REDIRECT 5",
        "CLIENT TRACKING ON PREFIX a",
        "CLIENT TRACKING ON BCAST OPTIN",
        "CLIENT TRACKING ON BCAST OPTOUT",
        "CLIENT TRACKING ON OPTIN OPTOUT",
        "CLIENT TRACKING ON BCAST PREFIX a PREFIX ab",
        "CLIENT TRACKING OFF PREFIX a",
        "CLIENT TRACKINGINFO",
        "CLIENT GETREDIR",
        "CLIENT CACHING maybe",
        "CLIENT CACHING YES",
        "CLIENT TRACKING ON OPTIN",
        "CLIENT CACHING YES",
        "CLIENT TRACKINGINFO",
        "GET k",
        "CLIENT TRACKINGINFO",
        "CLIENT CACHING NO",
        "CLIENT CACHING FOO",
        "CLIENT TRACKING ON OPTOUT",
        "CLIENT GETREDIR",
        "CLIENT TRACKING OFF",
        "CLIENT GETREDIR",
        "CLIENT TRACKING ON OPTOUT NOLOOP",
        "CLIENT CACHING NO",
        "CLIENT TRACKINGINFO",
        "CLIENT TRACKING OFF",
        "CLIENT TRACKING ON BCAST PREFIX b PREFIX c NOLOOP",
        "CLIENT TRACKINGINFO",
        "CLIENT TRACKING ON BCAST PREFIX bb",
        "CLIENT TRACKING ON BCAST PREFIX d",
        "CLIENT TRACKINGINFO",
        "CLIENT TRACKING ON",
        "CLIENT TRACKING OFF",
        // Own writes: in RESP3 the push follows the reply (read as the next command's).
        "CLIENT TRACKING ON",
        "GET k",
        "SET k v",
        "PING",
        "MGET k k2",
        "DEL k k2",
        "PING",
        "GET k2",
        "FLUSHALL",
        "PING",
        "CLIENT TRACKING OFF",
        // BCAST pushes are left to tests/it/server/tracking.rs: Redis 8.8 under load sometimes
        // sends one after the next command's reply, so a lockstep comparison cannot hold them.
        "CONFIG GET tracking-table-max-keys",
        "CONFIG SET tracking-table-max-keys -1",
        "CONFIG SET tracking-table-max-keys abc",
        "CONFIG SET tracking-table-max-keys 1000000",
    ]
}

fn argv(line: &str) -> Vec<Vec<u8>> {
    words(&line.split(' ').collect::<Vec<_>>())
}

#[test]
fn client_tracking_matches_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

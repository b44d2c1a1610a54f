//! Eviction's settings and the access-metadata commands against Redis 8.8 over the wire,
//! RESP2 and RESP3: CONFIG SET's validation of `maxmemory-policy`, `maxmemory-samples`,
//! `maxmemory-eviction-tenacity`, `lfu-log-factor` and `lfu-decay-time` and CONFIG GET of them,
//! OBJECT IDLETIME and FREQ under each kind of policy (errors, a missing key, a new key's LFU
//! counter and its first increment, which is certain), TOUCH, RANDOMKEY and CLIENT NO-TOUCH.
//! Idle times are not compared: Redis's clock moves between two commands, the test server's
//! does not.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<&'static str> {
    vec![
        "CONFIG GET maxmemory-policy",
        "CONFIG GET maxmemory-samples",
        "CONFIG GET maxmemory-eviction-tenacity",
        "CONFIG GET lfu-log-factor",
        "CONFIG GET lfu-decay-time",
        "CONFIG SET maxmemory-policy bogus",
        "CONFIG SET maxmemory-policy ALLKEYS-LRU",
        "CONFIG GET maxmemory-policy",
        "CONFIG SET maxmemory-policy volatile-lrm",
        "CONFIG GET maxmemory-policy",
        "CONFIG SET maxmemory-samples 0",
        "CONFIG SET maxmemory-samples 65",
        "CONFIG SET maxmemory-samples abc",
        "CONFIG SET maxmemory-samples 10",
        "CONFIG GET maxmemory-samples",
        "CONFIG SET maxmemory-eviction-tenacity 101",
        "CONFIG SET maxmemory-eviction-tenacity -1",
        "CONFIG SET maxmemory-eviction-tenacity 100",
        "CONFIG SET lfu-log-factor -1",
        "CONFIG SET lfu-log-factor 2147483648",
        "CONFIG SET lfu-log-factor 0",
        "CONFIG SET lfu-decay-time x",
        "CONFIG SET lfu-decay-time 0",
        "CONFIG GET lfu-log-factor",
        "CONFIG GET lfu-decay-time",
        "CONFIG SET maxmemory-policy noeviction",
        "SET k v",
        "OBJECT FREQ k",
        "OBJECT FREQ nokey",
        "OBJECT IDLETIME nokey",
        "CONFIG SET maxmemory-policy allkeys-lfu",
        "SET f v",
        "OBJECT FREQ f",
        "GET f",
        "OBJECT FREQ f",
        "OBJECT IDLETIME f",
        "OBJECT IDLETIME nokey",
        "OBJECT FREQ nokey",
        "TOUCH f nokey f",
        "TOUCH",
        "CONFIG SET maxmemory-policy volatile-lfu",
        "OBJECT FREQ f",
        "CONFIG SET maxmemory-policy noeviction",
        "CLIENT NO-TOUCH ON",
        "CLIENT NO-TOUCH maybe",
        "CLIENT NO-TOUCH",
        "CLIENT NO-TOUCH OFF",
        "DEL k",
        "RANDOMKEY",
        "RANDOMKEY x",
        "DEL f",
        "RANDOMKEY",
    ]
}

#[test]
fn eviction_settings_and_access_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            lines().iter().try_for_each(|l| {
                let parts: Vec<&str> = l.split(' ').collect();
                differ.run(&words(&parts)).map(drop)
            })
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
        // Leave both servers as a reset expects them.
        for line in [
            "CONFIG SET maxmemory-policy noeviction",
            "CONFIG SET maxmemory-samples 5",
            "CONFIG SET maxmemory-eviction-tenacity 10",
            "CONFIG SET lfu-log-factor 10",
            "CONFIG SET lfu-decay-time 1",
        ] {
            let parts: Vec<&str> = line.split(' ').collect();
            let _ = differ.run(&words(&parts));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX, XX, GT, LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME,
//! PERSIST and SET's expiry options against Redis 8.8 over the wire, RESP2 and RESP3, on
//! strings and streams: replies and errors byte for byte.
//!
//! The two servers' clocks differ (echomq's test server runs a manual clock set at its
//! start), so the cases use what does not depend on the instant: absolute times far in the
//! future (read back exactly with EXPIRETIME/PEXPIRETIME), relative TTLs read back in whole
//! seconds (TTL rounds, so both say the same), and times in the past.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

/// 2100-01-01 in Unix seconds and milliseconds.
const FAR_S: &str = "4102444800";
const FAR_MS: &str = "4102444800000";

fn lines() -> Vec<String> {
    let far_later_s = "4102444900";
    [
        "SET k v",
        "XADD s 1-1 f v",
        "TTL k",
        "PTTL s",
        "TTL nokey",
        "PEXPIRETIME nokey",
        "EXPIRETIME k",
        // Setters, then read back exactly.
        &format!("EXPIREAT k {FAR_S}"),
        "EXPIRETIME k",
        "PEXPIRETIME k",
        &format!("PEXPIREAT s {FAR_MS}"),
        "EXPIRETIME s",
        "PEXPIRETIME s",
        "EXPIRE k 100",
        "TTL k",
        "PEXPIRE s 100000",
        "TTL s",
        "TYPE s",
        // Conditions.
        &format!("EXPIREAT k {FAR_S} NX"),
        "PERSIST k",
        &format!("EXPIREAT k {FAR_S} XX"),
        &format!("EXPIREAT k {FAR_S} GT"),
        &format!("EXPIREAT k {FAR_S} LT"),
        &format!("EXPIREAT k {FAR_S} nx"),
        "EXPIRETIME k",
        &format!("EXPIREAT k {far_later_s} LT"),
        &format!("EXPIREAT k {far_later_s} GT"),
        "EXPIRETIME k",
        &format!("EXPIREAT k {FAR_S} LT XX"),
        "EXPIRETIME k",
        &format!("EXPIREAT k {FAR_S} GT XX"),
        "PERSIST k",
        &format!("EXPIREAT k {FAR_S} LT"),
        "EXPIRETIME k",
        "PERSIST k",
        &format!("EXPIREAT k {FAR_S} GT"),
        "EXPIRETIME k",
        "EXPIRE nokey 10",
        "PERSIST nokey",
        // Errors, in Redis's order of checks.
        "EXPIRE k 10 NX XX",
        "EXPIRE k 10 GT LT",
        "EXPIRE k 10 NX GT",
        "EXPIRE k 10 FOO",
        "EXPIRE k abc",
        "EXPIRE k abc FOO",
        "EXPIRE nokey abc",
        "EXPIRE k 9223372036854775807",
        "EXPIREAT k 9223372036854775807",
        "PEXPIRE k 9223372036854775807",
        "EXPIRE k -9223372036854775808",
        "EXPIRE k",
        "TTL",
        "PERSIST k x",
        "PTTL k x",
        // Times in the past delete at once.
        "EXPIRE k -1",
        "EXISTS k",
        "PEXPIREAT s 1",
        "EXISTS s",
        "DBSIZE",
        // SET's options.
        "SET k v EX 100",
        "TTL k",
        &format!("SET k v PXAT {FAR_MS}"),
        "PEXPIRETIME k",
        &format!("SET k w EXAT {FAR_S} GET"),
        "EXPIRETIME k",
        "SET k x KEEPTTL",
        "EXPIRETIME k",
        "GET k",
        "SET k y",
        "TTL k",
        "SET k v EX 0",
        "SET k v PX -5",
        "SET k v EX 10 PX 10",
        "SET k v EX 10 KEEPTTL",
        "SET k v EX abc",
        "SET k v EXAT 1",
        "EXISTS k",
        "SET k v EXAT 1 GET",
        "SET k v",
        "SET k w EXAT 1 GET",
        "EXISTS k",
        // A TTL moves with RENAME and stays through INCR.
        &format!("SET n 1 EXAT {FAR_S}"),
        "INCR n",
        "EXPIRETIME n",
        "RENAME n m",
        "EXPIRETIME m",
        "TTL n",
        // STRLEN (redis-cli --bigkeys reads strings' sizes with it).
        "STRLEN m",
        "STRLEN nokey",
        "STRLEN s",
        "STRLEN",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect()
}

#[test]
fn expiry_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            lines().iter().try_for_each(|line| {
                let argv: Vec<&str> = line.split_whitespace().collect();
                differ.run(&words(&argv)).map(drop)
            })
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn expiry_inside_multi_matches_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let batch = |lines: &[&str]| -> Vec<Vec<Vec<u8>>> {
        lines
            .iter()
            .map(|l| words(&l.split_whitespace().collect::<Vec<_>>()))
            .collect()
    };
    for protocol in [2, 3] {
        differ.reset(protocol).unwrap();
        differ
            .transaction(&batch(&[
                "SET k v",
                &format!("EXPIREAT k {FAR_S}"),
                "EXPIRETIME k",
                "EXPIRE k -1",
                "GET k",
                "XADD s 1-1 f v",
                "EXPIRE s 100 XX",
                "EXPIRE s 100 FOO",
                "TTL s",
            ]))
            .unwrap();
        differ
            .pipeline(&batch(&["MULTI", "EXPIRE k", "EXEC", "TTL k"]))
            .unwrap();
    }
}

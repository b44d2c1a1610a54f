//! CONFIG parameters' values and refusals against Redis 8.8 over the wire (RESP2 and RESP3),
//! mostly of parameters echomq keeps without implementing: each enumerated one's refusal (its
//! words listed in Redis's order), words in any case, the several words of `shutdown-on-sig*`
//! and `cluster-slot-stats-enabled` and how CONFIG GET shows them, SAVE with NOSAVE refused,
//! memory tracking (which CONFIG SET cannot turn on), numeric bounds, a percentage or bytes
//! (`maxmemory-clients`, which echomq implements), and `oom-score-adj-values`.

use crate::support::peer::PeerKind;
use crate::support::wire::WireDiffer;

const LINES: &[&str] = &[
    "CONFIG SET appendfsync sometimes",
    "CONFIG SET maxmemory-policy foo",
    "CONFIG SET acl-pubsub-default foo",
    "CONFIG SET loglevel foo",
    "CONFIG SET loglevel NOTICE",
    "CONFIG GET loglevel",
    "CONFIG SET loglevel 'notice warning'",
    "CONFIG SET shutdown-on-sigterm foo",
    "CONFIG SET shutdown-on-sigterm 'save nosave'",
    "CONFIG SET shutdown-on-sigterm 'NOW save'",
    "CONFIG GET shutdown-on-sigterm",
    "CONFIG SET shutdown-on-sigterm 'save  now'",
    "CONFIG SET shutdown-on-sigterm ''",
    "CONFIG SET shutdown-on-sigterm default",
    "CONFIG GET shutdown-on-sigterm",
    "CONFIG SET shutdown-on-sigint 'force now nosave'",
    "CONFIG GET shutdown-on-sigint",
    "CONFIG SET shutdown-on-sigint default",
    "CONFIG SET oom-score-adj relative",
    "CONFIG GET oom-score-adj",
    "CONFIG SET oom-score-adj foo",
    "CONFIG SET oom-score-adj no",
    "CONFIG SET sanitize-dump-payload foo",
    "CONFIG SET sanitize-dump-payload clients",
    "CONFIG GET sanitize-dump-payload",
    "CONFIG SET sanitize-dump-payload no",
    "CONFIG SET cluster-preferred-endpoint-type foo",
    "CONFIG SET repl-diskless-load foo",
    "CONFIG SET repl-diskless-load swapdb",
    "CONFIG GET repl-diskless-load",
    "CONFIG SET repl-diskless-load disabled",
    "CONFIG SET propagation-error-behavior foo",
    "CONFIG SET propagation-error-behavior PANIC",
    "CONFIG GET propagation-error-behavior",
    "CONFIG SET propagation-error-behavior ignore",
    "CONFIG SET cluster-slot-stats-enabled foo",
    "CONFIG SET cluster-slot-stats-enabled 'cpu net'",
    "CONFIG GET cluster-slot-stats-enabled",
    "CONFIG SET cluster-slot-stats-enabled 'cpu net mem'",
    "CONFIG SET cluster-slot-stats-enabled no",
    "CONFIG SET key-memory-histograms yes",
    "CONFIG SET key-memory-histograms no",
    "CONFIG GET key-memory-histograms",
    "CONFIG SET oom-score-adj-values '1 2'",
    "CONFIG SET oom-score-adj-values '1 2 x'",
    "CONFIG SET oom-score-adj-values '+1 -2 3'",
    "CONFIG GET oom-score-adj-values",
    "CONFIG SET oom-score-adj-values '1  2'",
    "CONFIG GET oom-score-adj-values",
    "CONFIG SET oom-score-adj-values '1 2 2001'",
    "CONFIG SET oom-score-adj-values ''",
    "CONFIG SET oom-score-adj-values '0 200 800'",
    "CONFIG SET maxmemory-clients 10%",
    "CONFIG GET maxmemory-clients",
    "CONFIG SET maxmemory-clients 200%",
    "CONFIG SET maxmemory-clients -1",
    "CONFIG SET maxmemory-clients %",
    "CONFIG SET maxmemory-clients 1mb",
    "CONFIG GET maxmemory-clients",
    "CONFIG SET maxmemory-clients 100%",
    "CONFIG GET maxmemory-clients",
    "CONFIG SET maxmemory-clients 101%",
    // Under Redis's 128 KB floor: kept as given, the floor applies to the limit.
    "CONFIG SET maxmemory-clients 1024",
    "CONFIG GET maxmemory-clients",
    "CONFIG SET maxmemory-clients 0",
    "CONFIG GET maxmemory-clients",
    "CONFIG SET active-expire-effort 0",
    "CONFIG SET active-expire-effort 11",
    "CONFIG SET active-expire-effort +5",
    "CONFIG SET max-new-connections-per-cycle -1",
    "CONFIG SET replica-priority -1",
    "CONFIG SET shutdown-timeout -1",
    "CONFIG SET tcp-keepalive 99999999999",
    "CONFIG SET repl-backlog-size 0",
    "CONFIG SET repl-backlog-size 1kb",
    "CONFIG GET repl-backlog-size",
    "CONFIG SET repl-backlog-size 1mb",
    // A refused value in a multi-parameter SET changes none of them.
    "CONFIG SET loglevel warning shutdown-on-sigterm foo",
    "CONFIG GET loglevel",
];

/// Splits a line at spaces; `'…'` is one argument, spaces and all (`''` an empty one).
fn argv(line: &str) -> Vec<Vec<u8>> {
    let mut args = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        let (arg, after) = match rest.strip_prefix('\'') {
            Some(quoted) => quoted
                .split_once("' ")
                .unwrap_or((quoted.trim_end_matches('\''), "")),
            None => rest.split_once(' ').unwrap_or((rest, "")),
        };
        args.push(arg.as_bytes().to_vec());
        rest = after;
    }
    args
}

#[test]
fn kept_parameters_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            LINES
                .iter()
                .try_for_each(|l| differ.run(&argv(l)).map(drop))
        });
        if let Err(mismatch) = outcome {
            failures.push(mismatch.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

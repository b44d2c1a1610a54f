//! The tuning CONFIG parameters against Redis 8.8 over the wire (RESP2 and RESP3): the value
//! types' encoding thresholds with their `ziplist` aliases, `list-max-listpack-size` and
//! `list-compress-depth`, `hll-sparse-max-bytes`, the latency monitor's and tracking's
//! parameters, lazy freeing and `tracking-table-max-keys`: defaults, accepted forms, what
//! CONFIG GET shows back, and the refusal texts.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<&'static str> {
    let mut lines = vec![
        // One name at a time: a pattern's matches come in Redis's dict order.
        "CONFIG GET hash-max-listpack-entries",
        "CONFIG GET hash-max-ziplist-entries",
        "CONFIG GET hash-max-listpack-value",
        "CONFIG GET hash-max-ziplist-value",
        "CONFIG GET set-max-intset-entries",
        "CONFIG GET set-max-listpack-entries",
        "CONFIG GET set-max-listpack-value",
        "CONFIG GET zset-max-listpack-entries",
        "CONFIG GET zset-max-ziplist-entries",
        "CONFIG GET zset-max-listpack-value",
        "CONFIG GET zset-max-ziplist-value",
        "CONFIG GET list-max-listpack-size",
        "CONFIG GET list-max-ziplist-size",
        "CONFIG GET list-compress-depth",
        "CONFIG GET hll-sparse-max-bytes",
        "CONFIG GET latency-monitor-threshold",
        "CONFIG GET latency-tracking",
        "CONFIG GET latency-tracking-info-percentiles",
        "CONFIG GET lazyfree-lazy-eviction",
        "CONFIG GET lazyfree-lazy-expire",
        "CONFIG GET lazyfree-lazy-server-del",
        "CONFIG GET lazyfree-lazy-user-del",
        "CONFIG GET lazyfree-lazy-user-flush",
        "CONFIG GET replica-lazy-flush",
        "CONFIG GET slave-lazy-flush",
        "CONFIG GET tracking-table-max-keys",
        "CONFIG GET jemalloc-bg-thread",
        "CONFIG SET jemalloc-bg-thread maybe",
        "CONFIG SET jemalloc-bg-thread no",
        "CONFIG GET jemalloc-bg-thread",
        "CONFIG SET jemalloc-bg-thread yes",
        "CONFIG GET jemalloc-bg-thread",
        "CONFIG SET hash-max-listpack-entries 10",
        "CONFIG GET hash-max-ziplist-entries",
        "CONFIG SET hash-max-ziplist-value 1k",
        "CONFIG GET hash-max-listpack-value",
        "CONFIG SET hash-max-listpack-entries -1",
        "CONFIG SET hash-max-listpack-value abc",
        "CONFIG SET set-max-listpack-value 1k",
        "CONFIG SET set-max-intset-entries 9223372036854775808",
        "CONFIG SET zset-max-ziplist-value 2mb",
        "CONFIG GET zset-max-listpack-value",
        "CONFIG SET list-max-listpack-size -5",
        "CONFIG GET list-max-ziplist-size",
        "CONFIG SET list-max-ziplist-size 3000000000",
        "CONFIG SET list-max-listpack-size abc",
        "CONFIG SET list-compress-depth -1",
        "CONFIG SET list-compress-depth 2",
        "CONFIG SET hll-sparse-max-bytes -1",
        "CONFIG SET hll-sparse-max-bytes 1gb",
        "CONFIG SET latency-monitor-threshold -1",
        "CONFIG SET latency-monitor-threshold 100",
        "CONFIG SET latency-tracking maybe",
        "CONFIG SET latency-tracking no",
        "CONFIG SET latency-tracking-info-percentiles 50 101",
        "CONFIG SET latency-tracking-info-percentiles abc",
        "CONFIG SET latency-tracking-info-percentiles 99.99",
        "CONFIG GET latency-tracking-info-percentiles",
        "CONFIG SET lazyfree-lazy-expire maybe",
        "CONFIG SET lazyfree-lazy-user-flush yes slave-lazy-flush yes",
        "CONFIG GET lazyfree-lazy-user-flush",
        "CONFIG GET replica-lazy-flush",
        "CONFIG SET tracking-table-max-keys -1",
        // A refused pair leaves every other pair of the command unapplied.
        "CONFIG SET hash-max-listpack-entries 7 list-compress-depth -1",
        "CONFIG GET hash-max-listpack-entries",
    ];
    // Back to the defaults for the next protocol's run.
    lines.extend([
        "CONFIG SET hash-max-listpack-entries 512 hash-max-listpack-value 64",
        "CONFIG SET zset-max-listpack-value 64 list-max-listpack-size -2 list-compress-depth 0",
        "CONFIG SET hll-sparse-max-bytes 3000 latency-monitor-threshold 0 latency-tracking yes",
        "CONFIG SET lazyfree-lazy-user-flush no replica-lazy-flush no",
    ]);
    lines
}

/// Splits a line on spaces, except the percentiles' value, which is one argument.
fn argv(line: &str) -> Vec<Vec<u8>> {
    if let Some(value) = line.strip_prefix("CONFIG SET latency-tracking-info-percentiles ") {
        return words(&["CONFIG", "SET", "latency-tracking-info-percentiles", value]);
    }
    words(&line.split(' ').collect::<Vec<_>>())
}

#[test]
fn tuning_parameters_match_redis_8() {
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

#[test]
fn latency_doctor_graph_and_histogram_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    for protocol in [2, 3] {
        differ.reset(protocol).unwrap();
        for line in [
            "LATENCY DOCTOR",
            "LATENCY GRAPH command",
            "LATENCY GRAPH",
            "LATENCY HISTOGRAM nosuch",
            "LATENCY LATEST",
            "LATENCY HISTORY command",
            "CONFIG SET latency-monitor-threshold 100",
            "LATENCY DOCTOR",
            "CONFIG SET latency-monitor-threshold 0",
        ] {
            differ.run(&argv(line)).unwrap();
        }
    }
}

//! SCAN, HSCAN, SSCAN and ZSCAN of a big keyspace and big collections against Redis 8.8 over
//! the wire, RESP2 and RESP3. The two servers order elements by their own hashes, so each is
//! scanned to the end with its own cursors and the outcomes compared: a call returns about
//! COUNT elements (both servers walk more than one call), the cursor ends at 0, and the union
//! is every element, with a hash's values and a sorted set's scores as Redis gives them.
//! Writes between calls (new keys and fields, deletions of others) must not hide an element
//! held throughout.

use std::collections::BTreeMap;

use crate::support::differ::Mismatch;
use crate::support::peer::PeerKind;
use crate::support::resp::Resp;
use crate::support::wire::WireDiffer;

/// Elements a collection or the keyspace starts with: past every listpack limit.
const ELEMENTS: usize = 1500;
/// COUNT of every call.
const COUNT: usize = 50;

/// The writes that build the data: one keyspace of strings, a hash, a set and a sorted set.
fn setup() -> Vec<Vec<Vec<u8>>> {
    let mut batch = Vec::new();
    for chunk in (0..ELEMENTS).collect::<Vec<_>>().chunks(100) {
        let mut mset = vec!["MSET".to_string()];
        let mut hset = vec!["HSET".to_string(), "h".to_string()];
        let mut sadd = vec!["SADD".to_string(), "s".to_string()];
        let mut zadd = vec!["ZADD".to_string(), "z".to_string()];
        for i in chunk {
            mset.extend([format!("key:{i}"), format!("v{i}")]);
            hset.extend([format!("f{i}"), format!("v{i}")]);
            sadd.push(format!("m{i}"));
            zadd.extend([format!("{i}.5"), format!("m{i}")]);
        }
        for line in [mset, hset, sadd, zadd] {
            batch.push(line.into_iter().map(String::into_bytes).collect());
        }
    }
    batch
}

/// Writes made after a scan's third call: elements added and then some of them removed,
/// none of those held from the start.
fn churn(prefix: &str) -> Vec<Vec<Vec<u8>>> {
    let extra = ELEMENTS..ELEMENTS + 1000;
    let lines: Vec<String> = match prefix {
        "SCAN" => extra.clone().map(|i| format!("SET key:{i} x")).collect(),
        "HSCAN" => extra.clone().map(|i| format!("HSET h f{i} x")).collect(),
        "SSCAN" => extra.clone().map(|i| format!("SADD s m{i}")).collect(),
        _ => extra.clone().map(|i| format!("ZADD z 0 m{i}")).collect(),
    };
    let removals: Vec<String> = match prefix {
        "SCAN" => extra.step_by(2).map(|i| format!("DEL key:{i}")).collect(),
        "HSCAN" => extra.step_by(2).map(|i| format!("HDEL h f{i}")).collect(),
        "SSCAN" => extra.step_by(2).map(|i| format!("SREM s m{i}")).collect(),
        _ => extra.step_by(2).map(|i| format!("ZREM z m{i}")).collect(),
    };
    lines
        .iter()
        .chain(&removals)
        .map(|l| l.split(' ').map(|w| w.as_bytes().to_vec()).collect())
        .collect()
}

fn text(reply: &Resp) -> String {
    match reply {
        Resp::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

/// One call's cursor and elements.
fn parts(reply: Resp) -> Result<(String, Vec<String>), Mismatch> {
    match reply {
        Resp::Array(mut two) if two.len() == 2 => match two.remove(1) {
            Resp::Array(items) => Ok((text(&two[0]), items.iter().map(text).collect())),
            other => Err(Mismatch::new(format!("scan elements: {other:?}"))),
        },
        other => Err(Mismatch::new(format!("scan reply: {other:?}"))),
    }
}

/// What a finished scan saw on one server.
#[derive(Debug, Default)]
struct Walk {
    calls: usize,
    largest_call: usize,
    /// Each element with its value or score (empty for keys and set members).
    seen: BTreeMap<String, String>,
}

impl Walk {
    fn take(&mut self, items: Vec<String>, pairs: bool) {
        self.calls += 1;
        let step = if pairs { 2 } else { 1 };
        self.largest_call = self.largest_call.max(items.len() / step);
        for element in items.chunks(step) {
            let value = element.get(1).cloned().unwrap_or_default();
            self.seen.insert(element[0].clone(), value);
        }
    }
}

/// Scans with `prefix` on both servers at once, each with its own cursor.
fn scan_both(differ: &mut WireDiffer, prefix: &str) -> Result<(Walk, Walk), Mismatch> {
    let key = match prefix {
        "SCAN" => None,
        "HSCAN" => Some("h"),
        "SSCAN" => Some("s"),
        _ => Some("z"),
    };
    let pairs = matches!(prefix, "HSCAN" | "ZSCAN");
    let call = |cursor: &str| {
        let mut argv = vec![prefix.to_string()];
        argv.extend(key.map(String::from));
        argv.extend([cursor.to_string(), "COUNT".to_string(), COUNT.to_string()]);
        argv
    };
    let (mut theirs, mut ours) = (Walk::default(), Walk::default());
    let (mut their_cursor, mut our_cursor) = (Some("0".to_string()), Some("0".to_string()));
    while their_cursor.is_some() || our_cursor.is_some() {
        // A server that has finished is sent a harmless read while the other goes on.
        let idle = vec!["PING".to_string()];
        let t = their_cursor.as_deref().map_or(idle.clone(), call);
        let o = our_cursor.as_deref().map_or(idle, call);
        let (their_reply, our_reply) = differ.run_apart(&t, &o)?;
        if their_cursor.is_some() {
            let (next, items) = parts(their_reply)?;
            theirs.take(items, pairs);
            their_cursor = (next != "0").then_some(next);
        }
        if our_cursor.is_some() {
            let (next, items) = parts(our_reply)?;
            ours.take(items, pairs);
            our_cursor = (next != "0").then_some(next);
        }
        if theirs.calls.max(ours.calls) == 3 {
            differ.pipeline(&churn(prefix))?;
        }
        if theirs.calls.max(ours.calls) > 10 * ELEMENTS {
            return Err(Mismatch::new(format!("{prefix} does not end")));
        }
    }
    Ok((theirs, ours))
}

#[test]
fn scans_page_by_count_and_return_what_redis_8_returns() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut failures = Vec::new();
    for protocol in [2, 3] {
        let outcome = differ.reset(protocol).and_then(|()| {
            differ.pipeline(&setup())?;
            let mut outcomes = Vec::new();
            for prefix in ["SCAN", "HSCAN", "SSCAN", "ZSCAN"] {
                outcomes.push((prefix, scan_both(&mut differ, prefix)?));
            }
            Ok(outcomes)
        });
        let outcomes = match outcome {
            Ok(outcomes) => outcomes,
            Err(mismatch) => {
                failures.push(mismatch.to_string());
                continue;
            }
        };
        for (prefix, (theirs, ours)) in outcomes {
            // Held throughout: the first ELEMENTS and, of the churn, nothing.
            let held = |walk: &Walk| -> BTreeMap<String, String> {
                walk.seen
                    .iter()
                    .filter(|(k, _)| {
                        let n: usize = k
                            .trim_start_matches(|c: char| !c.is_ascii_digit())
                            .parse()
                            .unwrap_or(usize::MAX);
                        n < ELEMENTS
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            };
            let (their_held, our_held) = (held(&theirs), held(&ours));
            if their_held.len() != ELEMENTS || our_held != their_held {
                failures.push(format!(
                    "RESP{protocol} {prefix}: Redis returned {} of the {ELEMENTS} held throughout, echomq {}; first differences: {:?}",
                    their_held.len(),
                    our_held.len(),
                    their_held.iter().filter(|(k, v)| our_held.get(*k) != Some(v)).take(3).collect::<Vec<_>>()
                ));
            }
            // Both walk in steps of about COUNT: many calls, none much past COUNT.
            for (name, walk) in [("Redis", &theirs), ("echomq", &ours)] {
                if walk.calls < ELEMENTS / COUNT / 2 || walk.largest_call > 3 * COUNT {
                    failures.push(format!(
                        "RESP{protocol} {prefix}: {name} took {} calls, at most {} elements a call",
                        walk.calls, walk.largest_call
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

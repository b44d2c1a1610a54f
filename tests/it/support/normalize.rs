//! Time fields: reply values that depend on when a command ran. A real server reads its own
//! clock while the engine (and our server under test) reads a manual one, so these values
//! cannot be equal; they are replaced on both sides by the placeholder `+<time>` before the
//! comparison. Everything else in the reply is still compared byte for byte.
//!
//! The exact positions normalized, and nothing else:
//!
//! | command | position |
//! |---|---|
//! | `XPENDING key group [IDLE n] start end count [consumer]` (the extended form) | each row `[id, consumer, idle, delivery-count]`: `idle` (index 2) |
//! | `XINFO CONSUMERS key group` | each consumer map: the values of `idle` and `inactive` |
//! | `XINFO STREAM key FULL [COUNT n]` | each map in `groups`: each `pending` row `[id, consumer, delivery-time, delivery-count]` at index 2; each map in `consumers`: the values of `seen-time` and `active-time`, and each of its `pending` rows `[id, delivery-time, delivery-count]` at index 1 |
//! | `XREADGROUP ... CLAIM min-idle ...` (Redis 8.4) | each 4-element entry `[id, fields, idle, delivery-count]`: `idle` (index 2) |
//! | `EXEC` | each element, by the command queued at its position (`support::wire`) |
//!
//! Only a non-negative integer is replaced: `-1` (`inactive` and `active-time` of a consumer
//! that never read or claimed anything) is a fact, not a time, and stays compared. So is the
//! shape: a missing field, an error or a null in a normalized position still differs.
//! Delivery counts, PEL membership and every id are compared exactly; tests keep membership
//! deterministic by using min-idle 0 / IDLE 0, or idle thresholds far from both clocks (an
//! hour, with XCLAIM `IDLE`/`TIME` moving delivery times back by two).
//!
//! Maps are found in both shapes: RESP2 flat `[name, value, ...]` arrays and RESP3 `%` maps.
//!
//! One more field is normalized, by [`times`] too though it is no time: `radix-tree-nodes` of
//! `XINFO STREAM key [FULL]` becomes `+<rax>` when `radix-tree-keys` is 3 or more. It counts
//! Redis's internal radix tree nodes, which the engine estimates (`docs/reference/streams.md` §4.8:
//! "an approximation is fine"); the estimate is exact for up to two macro nodes (1, 2 and 6), which
//! stay compared.
//!
//! Against a peer older than Redis 8.6 (and Valkey), which has no idempotent production, the six
//! IDMP fields of `XINFO STREAM key [FULL]` ([`IDMP_FIELDS`]) are removed from echomq's reply
//! before the comparison ([`drop_idmp_fields`]); against Redis 8.8 they are compared.
//!
//! Separately, and only where a random sequence asks for it ([`lag`]), `entries-read` and `lag`
//! of the groups in `XINFO GROUPS` and `XINFO STREAM FULL` become `+<lag>` (any value, null
//! included) for keys whose history reaches the 8.0 lag rules that the peer lacks: see
//! `known_differences::LAG_FIXES_8_0` and [`taints_lag`].

use super::resp::Resp;

/// What a normalized time field becomes.
pub const PLACEHOLDER: &str = "<time>";
/// What an estimated `radix-tree-nodes` becomes.
pub const RAX_PLACEHOLDER: &str = "<rax>";
/// The most macro nodes for which the engine's `radix-tree-nodes` is exact.
const RAX_EXACT_NODES_MAX: i64 = 2;
/// What a masked `entries-read` or `lag` becomes.
pub const LAG_PLACEHOLDER: &str = "<lag>";

/// Replaces the time fields of `reply` to command `argv` (see the module table). Returns
/// whether anything was replaced.
pub fn times<A: AsRef<[u8]>>(argv: &[A], reply: &mut Resp) -> bool {
    let word = |i: usize| {
        argv.get(i)
            .map(|a| a.as_ref().to_ascii_lowercase())
            .unwrap_or_default()
    };
    match (word(0).as_slice(), word(1).as_slice()) {
        (b"xpending", _) if argv.len() >= 6 => rows(reply, 2),
        (b"xreadgroup", _) if claims(argv) => claimed_idle(reply),
        (b"xinfo", b"consumers") => items(reply)
            .into_iter()
            .map(|consumer| fields(consumer, &["idle", "inactive"]))
            .fold(false, |a, b| a | b),
        (b"xinfo", b"stream") => rax_nodes(reply) | (word(3) == b"full" && full(reply)),
        _ => false,
    }
}

/// Whether an XREADGROUP has a CLAIM option before STREAMS.
fn claims<A: AsRef<[u8]>>(argv: &[A]) -> bool {
    argv.iter()
        .map(AsRef::as_ref)
        .take_while(|a| !a.eq_ignore_ascii_case(b"streams"))
        .any(|a| a.eq_ignore_ascii_case(b"claim"))
}

/// The idle times of an XREADGROUP CLAIM reply: RESP2 `[[key, entries], ...]` or RESP3
/// `{key: entries}`; a 4-element entry's index 2.
fn claimed_idle(reply: &mut Resp) -> bool {
    let mut streams: Vec<&mut Resp> = Vec::new();
    match reply {
        Resp::Array(pairs) => {
            for pair in pairs {
                if let Resp::Array(kv) = pair
                    && let Some(entries) = kv.get_mut(1)
                {
                    streams.push(entries);
                }
            }
        }
        Resp::Map(pairs) => streams.extend(pairs.iter_mut().map(|(_, v)| v)),
        _ => {}
    }
    let mut changed = false;
    for entries in streams {
        for entry in items(entries) {
            if let Resp::Array(parts) = entry
                && parts.len() == 4
            {
                changed |= blank(&mut parts[2]);
            }
        }
    }
    changed
}

/// Aligns the XINFO STREAM replies of a peer and echomq where one side predates fields the
/// other has (a Redis 7 / Valkey peer has neither the IDMP fields of 8.6, [`IDMP_FIELDS`], nor a
/// FULL group's `nacked-count` of 8.8): such fields are removed from the side that has them. Returns whether anything was removed. Every field both sides have stays compared.
pub fn align_newer_fields<A: AsRef<[u8]>>(argv: &[A], theirs: &mut Resp, ours: &mut Resp) -> bool {
    let word = |i: usize| {
        argv.get(i)
            .map(|a| a.as_ref().to_ascii_lowercase())
            .unwrap_or_default()
    };
    if word(0) != b"xinfo" || word(1) != b"stream" {
        return false;
    }
    let mut changed = false;
    for name in IDMP_FIELDS {
        match (has_field(theirs, name), has_field(ours, name)) {
            (true, false) => changed |= remove_field(theirs, name),
            (false, true) => changed |= remove_field(ours, name),
            _ => {}
        }
    }
    if word(3) == b"full" {
        let theirs_has = first_group_has(theirs, "nacked-count");
        let ours_has = first_group_has(ours, "nacked-count");
        let side = match (theirs_has, ours_has) {
            (Some(true), Some(false)) => Some(&mut *theirs),
            (Some(false), Some(true)) => Some(&mut *ours),
            _ => None,
        };
        if let Some(side) = side {
            for_value(side, "groups", &mut |groups| {
                for group in items(groups) {
                    changed |= remove_field(group, "nacked-count");
                }
            });
        }
    }
    changed
}

/// Whether the first group of a FULL reply has `name` (`None` without groups).
fn first_group_has(reply: &mut Resp, name: &str) -> Option<bool> {
    let mut has = None;
    for_value(reply, "groups", &mut |groups| {
        if let Some(group) = items(groups).into_iter().next() {
            has = Some(has_field(group, name));
        }
    });
    has
}

fn has_field(map: &mut Resp, name: &str) -> bool {
    let mut found = false;
    for_value(map, name, &mut |_| found = true);
    found
}

/// Removes `name` and its value from a map, RESP2 (flat array) or RESP3.
fn remove_field(map: &mut Resp, name: &str) -> bool {
    match map {
        Resp::Array(flat) => {
            let Some(at) = flat
                .chunks(2)
                .position(|pair| pair.first().and_then(Resp::as_text) == Some(name))
            else {
                return false;
            };
            flat.drain(2 * at..2 * at + 2);
            true
        }
        Resp::Map(pairs) => {
            let before = pairs.len();
            pairs.retain(|(k, _)| k.as_text() != Some(name));
            pairs.len() != before
        }
        _ => false,
    }
}

/// `radix-tree-nodes` of an XINFO STREAM reply with more than [`RAX_EXACT_NODES_MAX`] nodes.
fn rax_nodes(reply: &mut Resp) -> bool {
    let mut keys = None;
    for_value(reply, "radix-tree-keys", &mut |value| {
        if let Resp::Int(n) = value {
            keys = Some(*n);
        }
    });
    if keys.is_none_or(|n| n <= RAX_EXACT_NODES_MAX) {
        return false;
    }
    let mut changed = false;
    for_value(reply, "radix-tree-nodes", &mut |value| {
        *value = Resp::Simple(RAX_PLACEHOLDER.to_string());
        changed = true;
    });
    changed
}

/// The fields XINFO STREAM gained in Redis 8.6 (`docs/reference/streams-8.md` §3.5), which echomq
/// shows.
pub const IDMP_FIELDS: [&str; 6] = [
    "idmp-duration",
    "idmp-maxsize",
    "pids-tracked",
    "iids-tracked",
    "iids-added",
    "iids-duplicates",
];

/// For a peer older than Redis 8.6 (or Valkey), which has no idempotent production: removes
/// [`IDMP_FIELDS`] from an `XINFO STREAM key [FULL]` reply, so the rest is compared as before.
/// Returns whether anything was removed.
pub fn drop_idmp_fields<A: AsRef<[u8]>>(argv: &[A], reply: &mut Resp) -> bool {
    let word = |i: usize| argv.get(i).map(|a| a.as_ref().to_ascii_lowercase());
    if word(0).as_deref() != Some(b"xinfo") || word(1).as_deref() != Some(b"stream") {
        return false;
    }
    let idmp = |key: &Resp| key.as_text().is_some_and(|k| IDMP_FIELDS.contains(&k));
    match reply {
        Resp::Array(flat) => {
            let before = flat.len();
            let pairs: Vec<Resp> = std::mem::take(flat);
            let mut kept = Vec::with_capacity(before);
            let mut it = pairs.into_iter();
            while let (Some(key), Some(value)) = (it.next(), it.next()) {
                if !idmp(&key) {
                    kept.push(key);
                    kept.push(value);
                }
            }
            *flat = kept;
            flat.len() != before
        }
        Resp::Map(pairs) => {
            let before = pairs.len();
            pairs.retain(|(key, _)| !idmp(key));
            pairs.len() != before
        }
        _ => false,
    }
}

/// Whether two replies (parsed, and their raw bytes) are the same: byte for byte, or if
/// `normalize` replaces time fields in either, byte for byte once both are normalized.
pub fn same(
    normalize: impl Fn(&mut Resp) -> bool,
    (theirs, theirs_raw): (&Resp, &[u8]),
    (ours, ours_raw): (&Resp, &[u8]),
) -> bool {
    let (mut theirs, mut ours) = (theirs.clone(), ours.clone());
    if normalize(&mut theirs) | normalize(&mut ours) {
        theirs.to_bytes() == ours.to_bytes()
    } else {
        theirs_raw == ours_raw
    }
}

/// Masks `entries-read` and `lag` in the group maps of `XINFO GROUPS key` and `XINFO STREAM
/// key FULL` if `masked(key)`. Returns whether anything was replaced.
pub fn lag<A: AsRef<[u8]>>(argv: &[A], reply: &mut Resp, masked: impl Fn(&[u8]) -> bool) -> bool {
    let word = |i: usize| {
        argv.get(i)
            .map(|a| a.as_ref().to_ascii_lowercase())
            .unwrap_or_default()
    };
    if word(0) != b"xinfo" || !argv.get(2).is_some_and(|k| masked(k.as_ref())) {
        return false;
    }
    let mut changed = false;
    let mut mask = |group: &mut Resp| {
        for name in ["entries-read", "lag"] {
            for_value(group, name, &mut |value| {
                *value = Resp::Simple(LAG_PLACEHOLDER.to_string());
                changed = true;
            });
        }
    };
    match word(1).as_slice() {
        b"groups" => items(reply).into_iter().for_each(&mut mask),
        b"stream" if word(3) == b"full" => {
            for_value(reply, "groups", &mut |groups| {
                items(groups).into_iter().for_each(&mut mask);
            });
        }
        _ => {}
    }
    changed
}

/// The key whose group lag a command takes out of what a peer without the 8.0 lag rules
/// computes alike: a deletion (XDEL, XTRIM, XADD with MAXLEN/MINID), ENTRIESREAD (XGROUP CREATE
/// and SETID), or XSETID with ENTRIESADDED/MAXDELETEDID. Without any of these a stream has no
/// tombstones and every group's counter starts unknown or exact, where the old and new rules
/// agree.
pub fn taints_lag<A: AsRef<[u8]>>(argv: &[A]) -> Option<&[u8]> {
    let word = |i: usize| argv.get(i).map(|a| a.as_ref().to_ascii_lowercase());
    let any = |words: &[&[u8]]| {
        argv.iter()
            .any(|a| words.iter().any(|w| a.as_ref().eq_ignore_ascii_case(w)))
    };
    let key = |i: usize| argv.get(i).map(AsRef::as_ref);
    match word(0)?.as_slice() {
        b"xdel" | b"xtrim" => key(1),
        b"xadd" if any(&[b"maxlen", b"minid"]) => key(1),
        b"xsetid" if argv.len() > 3 => key(1),
        b"xgroup" if any(&[b"entriesread"]) => key(2),
        _ => None,
    }
}

/// `XINFO STREAM key FULL`: the group and consumer times.
fn full(reply: &mut Resp) -> bool {
    let mut changed = false;
    for_value(reply, "groups", &mut |groups| {
        for group in items(groups) {
            for_value(group, "pending", &mut |pending| changed |= rows(pending, 2));
            for_value(group, "consumers", &mut |consumers| {
                for consumer in items(consumers) {
                    changed |= fields(consumer, &["seen-time", "active-time"]);
                    for_value(consumer, "pending", &mut |pending| {
                        changed |= rows(pending, 1);
                    });
                }
            });
        }
    });
    changed
}

/// Position `at` of each row of an array of rows.
fn rows(reply: &mut Resp, at: usize) -> bool {
    let mut changed = false;
    for row in items(reply) {
        if let Resp::Array(cells) = row
            && let Some(cell) = cells.get_mut(at)
        {
            changed |= blank(cell);
        }
    }
    changed
}

/// The values of the named fields of a map.
fn fields(map: &mut Resp, names: &[&str]) -> bool {
    let mut changed = false;
    for name in names {
        for_value(map, name, &mut |value| changed |= blank(value));
    }
    changed
}

fn blank(value: &mut Resp) -> bool {
    if matches!(value, Resp::Int(n) if *n >= 0) {
        *value = Resp::Simple(PLACEHOLDER.to_string());
        return true;
    }
    false
}

/// The items of an array (or set), none for anything else.
fn items(reply: &mut Resp) -> Vec<&mut Resp> {
    match reply {
        Resp::Array(items) | Resp::Set(items) => items.iter_mut().collect(),
        _ => Vec::new(),
    }
}

/// Calls `f` on the value under `name` in a map, RESP2 (flat array) or RESP3.
fn for_value(map: &mut Resp, name: &str, f: &mut dyn FnMut(&mut Resp)) {
    match map {
        Resp::Array(flat) => {
            for pair in flat.chunks_mut(2) {
                if let [key, value] = pair
                    && key.as_text() == Some(name)
                {
                    f(value);
                }
            }
        }
        Resp::Map(pairs) => {
            for (key, value) in pairs {
                if key.as_text() == Some(name) {
                    f(value);
                }
            }
        }
        _ => {}
    }
}

/// [`same`], after [`align_newer_fields`] (on a clone; the replies are not changed).
pub fn same_aligned<A: AsRef<[u8]>>(
    argv: &[A],
    normalize: impl Fn(&mut Resp) -> bool,
    (theirs, theirs_raw): (&Resp, &[u8]),
    (ours, ours_raw): (&Resp, &[u8]),
) -> bool {
    let (mut t, mut o) = (theirs.clone(), ours.clone());
    if align_newer_fields(argv, &mut t, &mut o) {
        let (t_raw, o_raw) = (t.to_bytes(), o.to_bytes());
        return same(normalize, (&t, &t_raw), (&o, &o_raw));
    }
    same(normalize, (theirs, theirs_raw), (ours, ours_raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Resp {
        Resp::Bulk(s.as_bytes().to_vec())
    }

    fn time() -> Resp {
        Resp::Simple(PLACEHOLDER.to_string())
    }

    #[test]
    fn xpending_rows_lose_only_their_idle_time() {
        let row = |idle| Resp::Array(vec![bulk("1-0"), bulk("c"), Resp::Int(idle), Resp::Int(2)]);
        let mut reply = Resp::Array(vec![row(17), row(0)]);
        assert!(times(&["XPENDING", "s", "g", "-", "+", "10"], &mut reply));
        let row = Resp::Array(vec![bulk("1-0"), bulk("c"), time(), Resp::Int(2)]);
        assert_eq!(reply, Resp::Array(vec![row.clone(), row]));
        let mut summary = Resp::Array(vec![Resp::Int(1), bulk("1-0"), bulk("1-0")]);
        assert!(!times(&["XPENDING", "s", "g"], &mut summary));
    }

    #[test]
    fn idmp_fields_are_dropped_from_xinfo_stream_only() {
        let mut flat = vec![bulk("length"), Resp::Int(1)];
        for name in IDMP_FIELDS {
            flat.extend([bulk(name), Resp::Int(0)]);
        }
        flat.extend([bulk("groups"), Resp::Int(0)]);
        let mut resp2 = Resp::Array(flat.clone());
        assert!(drop_idmp_fields(&["XINFO", "STREAM", "s"], &mut resp2));
        let kept = vec![bulk("length"), Resp::Int(1), bulk("groups"), Resp::Int(0)];
        assert_eq!(resp2, Resp::Array(kept.clone()));
        assert!(!drop_idmp_fields(&["XINFO", "STREAM", "s"], &mut resp2));
        let pairs: Vec<(Resp, Resp)> = flat
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        let mut resp3 = Resp::Map(pairs);
        assert!(drop_idmp_fields(
            &["xinfo", "stream", "s", "FULL"],
            &mut resp3
        ));
        assert_eq!(
            resp3,
            Resp::Map(vec![
                (kept[0].clone(), kept[1].clone()),
                (kept[2].clone(), kept[3].clone())
            ])
        );
        let mut groups = Resp::Array(flat);
        assert!(!drop_idmp_fields(&["XINFO", "GROUPS", "s"], &mut groups));
    }

    #[test]
    fn radix_tree_nodes_are_compared_up_to_two_macro_nodes() {
        let info = |keys, nodes| {
            Resp::Array(vec![
                bulk("radix-tree-keys"),
                Resp::Int(keys),
                bulk("radix-tree-nodes"),
                Resp::Int(nodes),
            ])
        };
        let mut two = info(2, 6);
        assert!(!times(&["XINFO", "STREAM", "s"], &mut two));
        let mut four = info(4, 11);
        assert!(times(&["XINFO", "STREAM", "s"], &mut four));
        assert_eq!(
            four,
            Resp::Array(vec![
                bulk("radix-tree-keys"),
                Resp::Int(4),
                bulk("radix-tree-nodes"),
                Resp::Simple(RAX_PLACEHOLDER.into()),
            ])
        );
    }

    #[test]
    fn lag_is_masked_only_for_masked_keys_and_only_what_taints_it_taints() {
        let group = || {
            Resp::Map(vec![
                (bulk("name"), bulk("g")),
                (bulk("entries-read"), Resp::Null),
                (bulk("lag"), Resp::Int(3)),
            ])
        };
        let mut reply = Resp::Array(vec![group()]);
        assert!(!lag(&["XINFO", "GROUPS", "s"], &mut reply, |_| false));
        assert!(lag(&["XINFO", "GROUPS", "s"], &mut reply, |k| k == b"s"));
        let masked = Resp::Simple(LAG_PLACEHOLDER.into());
        assert_eq!(
            reply,
            Resp::Array(vec![Resp::Map(vec![
                (bulk("name"), bulk("g")),
                (bulk("entries-read"), masked.clone()),
                (bulk("lag"), masked),
            ])])
        );
        assert_eq!(taints_lag(&["XDEL", "s", "1-0"]), Some(&b"s"[..]));
        assert_eq!(
            taints_lag(&["XADD", "s", "MAXLEN", "5", "*", "f", "v"]),
            Some(&b"s"[..])
        );
        assert_eq!(taints_lag(&["XADD", "s", "1-0", "f", "v"]), None);
        assert_eq!(
            taints_lag(&["XGROUP", "SETID", "t", "g", "0", "ENTRIESREAD", "1"]),
            Some(&b"t"[..])
        );
        assert_eq!(taints_lag(&["XGROUP", "SETID", "t", "g", "0"]), None);
        assert_eq!(taints_lag(&["XSETID", "s", "5-0"]), None);
    }

    #[test]
    fn consumer_times_are_replaced_in_both_map_shapes_but_minus_one_stays() {
        let mut resp2 = Resp::Array(vec![Resp::Array(vec![
            bulk("name"),
            bulk("c"),
            bulk("pending"),
            Resp::Int(3),
            bulk("idle"),
            Resp::Int(5),
            bulk("inactive"),
            Resp::Int(-1),
        ])]);
        assert!(times(&["XINFO", "CONSUMERS", "s", "g"], &mut resp2));
        let Resp::Array(consumers) = &resp2 else {
            unreachable!()
        };
        let Resp::Array(fields) = &consumers[0] else {
            unreachable!()
        };
        assert_eq!(fields[3], Resp::Int(3));
        assert_eq!(fields[5], time());
        assert_eq!(fields[7], Resp::Int(-1));
        let mut resp3 = Resp::Array(vec![Resp::Map(vec![
            (bulk("idle"), Resp::Int(0)),
            (bulk("inactive"), Resp::Int(9)),
        ])]);
        assert!(times(&["xinfo", "consumers", "s", "g"], &mut resp3));
        assert_eq!(
            resp3,
            Resp::Array(vec![Resp::Map(vec![
                (bulk("idle"), time()),
                (bulk("inactive"), time()),
            ])])
        );
    }
}

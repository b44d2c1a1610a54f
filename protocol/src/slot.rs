//! Redis Cluster's key slots: which of the 16384 slots a key hashes to, and which keys a
//! request names.
//!
//! A key's slot is CRC16 (XMODEM: polynomial 0x1021, initial value 0, no reflection) of the
//! key modulo [`SLOTS`], where a hash tag narrows the hashed part: when the key holds a `{`
//! followed later by a `}` with at least one byte between them, only the bytes between the
//! first `{` and the first `}` after it are hashed (`{user1}.a` and `{user1}.b` share a slot;
//! `{}x` hashes whole; the computation is the engine's [`echomq_engine::slot`]). [`keys_of`]
//! finds a request's keys from its command table row (first key, last key, step) and, for the
//! commands with movable keys, from the engine's `command_keys`: XREAD's and XREADGROUP's names
//! after `STREAMS` (option values stepped over), LMPOP's and BLMPOP's counted keys, SORT's
//! STORE destination; the same keys lazy expiry uses. [`common_slot`] is the CROSSSLOT rule:
//! every key of a request in one slot.

use echomq_engine::command::CommandSpec;

pub use echomq_engine::slot::{SLOTS, crc16, hashed_part, key_slot};

/// The keys `argv` names, by its command's table row. XREAD and XREADGROUP, whose keys follow
/// `STREAMS`, are found by that token; a request too short or malformed to name its keys
/// names none here (the command itself then answers its own error).
pub fn keys_of<'a>(spec: &CommandSpec, argv: &[&'a [u8]]) -> Vec<&'a [u8]> {
    if has_movable_keys(spec) {
        return echomq_engine::expire::command_keys(spec, argv);
    }
    if let Some(keys) = counted_keys(spec, argv) {
        return keys;
    }
    let positions = spec.keys;
    // A container's key positions count from its subcommand (XGROUP CREATE key …): one on.
    let shift = i64::from(!spec.subcommands.is_empty());
    let first = positions.first + shift;
    let argc = argv.len() as i64;
    if positions.first <= 0 || first >= argc || positions.step <= 0 {
        return Vec::new();
    }
    let last = if positions.last < 0 {
        argc + positions.last
    } else {
        (positions.last + shift).min(argc - 1)
    };
    let mut keys = Vec::new();
    let mut at = first;
    while at <= last {
        keys.push(argv[at as usize]);
        at += positions.step;
    }
    keys
}

/// The keys of a command whose declared key specs count them (`numkeys`: EVAL, SINTERCARD,
/// ZUNIONSTORE, ZMPOP ...), found as Redis's `getKeysUsingKeySpecs` finds them: each spec in
/// turn, a range from its index or the count at its index then that many keys. `None` for a
/// command without a counted spec; no keys for a count that is no integer, negative, or
/// longer than the request.
fn counted_keys<'a>(spec: &CommandSpec, argv: &[&'a [u8]]) -> Option<Vec<&'a [u8]>> {
    use crate::cmd::command_rows::{Begin, Find};
    if !has_counted_keys(spec) {
        return None;
    }
    let row = crate::cmd::command_rows::find_lower(spec.name)?;
    let argc = argv.len() as i64;
    let mut keys = Vec::new();
    for key_spec in row.key_specs {
        let Begin::Index(begin) = key_spec.begin else {
            return Some(Vec::new());
        };
        match key_spec.find {
            Find::Range(lastkey, step, _) => {
                let last = if lastkey >= 0 {
                    begin + lastkey
                } else {
                    argc + lastkey
                };
                let mut at = begin;
                while at <= last && at < argc && step > 0 {
                    keys.push(argv[at as usize]);
                    at += step;
                }
            }
            Find::Keynum(index, first, step) => {
                let count = argv
                    .get((begin + index) as usize)
                    .and_then(|n| std::str::from_utf8(n).ok())
                    .and_then(|n| n.parse::<i64>().ok());
                let Some(count) = count.filter(|&n| n >= 0) else {
                    return Some(Vec::new());
                };
                let from = begin + first;
                if count > 0 && from + (count - 1) * step >= argc {
                    return Some(Vec::new());
                }
                keys.extend((0..count).map(|i| argv[(from + i * step) as usize]));
            }
            Find::Unknown => return Some(Vec::new()),
        }
    }
    Some(keys)
}

/// Whether Redis declares a count of `spec`'s keys among its arguments (`numkeys`).
pub(crate) fn has_counted_keys(spec: &CommandSpec) -> bool {
    crate::cmd::command_rows::find_lower(spec.name).is_some_and(|row| {
        row.key_specs
            .iter()
            .any(|s| matches!(s.find, crate::cmd::command_rows::Find::Keynum(..)))
    })
}

/// Whether `spec`'s keys are found by a token or a count rather than by its key positions
/// (Redis's `movablekeys`): XREAD and XREADGROUP, LMPOP and BLMPOP, SORT (its STORE).
pub fn has_movable_keys(spec: &CommandSpec) -> bool {
    matches!(
        spec.name,
        "xread" | "xreadgroup" | "lmpop" | "blmpop" | "sort"
    )
}

/// Whether the keys are in one slot: `Ok(Some(slot))` when they are, `Ok(None)` without keys,
/// `Err(())` (CROSSSLOT) when two differ.
#[allow(clippy::result_unit_err)]
pub fn common_slot<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> Result<Option<u16>, ()> {
    let mut found = None;
    for key in keys {
        let slot = key_slot(key);
        match found {
            None => found = Some(slot),
            Some(seen) if seen != slot => return Err(()),
            Some(_) => {}
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use echomq_engine::command::spec;

    #[test]
    fn slots_match_the_cluster_specification() {
        // The spec's check value, and slots Redis's CLUSTER KEYSLOT reports.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn hash_tags_narrow_the_hashed_part_only_when_non_empty() {
        assert_eq!(hashed_part(b"{user1}.following"), b"user1");
        assert_eq!(key_slot(b"{foo}x"), key_slot(b"foo"));
        assert_eq!(hashed_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hashed_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hashed_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hashed_part(b"{unclosed"), b"{unclosed");
        assert_eq!(hashed_part(b"emq:{orders}:stream"), b"orders");
    }

    #[test]
    fn counted_keys_follow_the_declared_count() {
        let eval = crate::cmd::lookup(b"eval").unwrap().spec();
        let argv: &[&[u8]] = &[b"EVAL", b"return 1", b"2", b"a", b"b", b"x"];
        assert_eq!(keys_of(eval, argv), vec![&b"a"[..], b"b"]);
        assert!(keys_of(eval, &[b"EVAL", b"return 1", b"3", b"a"]).is_empty());
        assert!(keys_of(eval, &[b"EVAL", b"return 1", b"-1"]).is_empty());
        let store = spec(b"zunionstore").unwrap();
        let argv: &[&[u8]] = &[
            b"ZUNIONSTORE",
            b"d",
            b"2",
            b"s1",
            b"s2",
            b"WEIGHTS",
            b"1",
            b"2",
        ];
        assert_eq!(keys_of(store, argv), vec![&b"d"[..], b"s1", b"s2"]);
        let zmpop = spec(b"zmpop").unwrap();
        let argv: &[&[u8]] = &[b"ZMPOP", b"1", b"z", b"MIN"];
        assert_eq!(keys_of(zmpop, argv), vec![&b"z"[..]]);
    }

    #[test]
    fn keys_come_from_the_table_and_from_after_streams() {
        let del = CommandSpec::new("del", -2).keys(1, -1, 1);
        let argv: &[&[u8]] = &[b"DEL", b"a", b"b", b"c"];
        assert_eq!(keys_of(&del, argv), vec![&b"a"[..], b"b", b"c"]);
        let rename = CommandSpec::new("rename", 3).keys(1, 2, 1);
        assert_eq!(
            keys_of(&rename, &[b"RENAME", b"x", b"y"]),
            vec![&b"x"[..], b"y"]
        );
        assert!(keys_of(&CommandSpec::new("ping", -1), &[b"PING"]).is_empty());
        let xread = spec(b"xread").unwrap();
        let argv: &[&[u8]] = &[
            b"XREAD", b"COUNT", b"1", b"STREAMS", b"s1", b"s2", b"0", b"0",
        ];
        assert_eq!(keys_of(xread, argv), vec![&b"s1"[..], b"s2"]);
        let xreadgroup = spec(b"xreadgroup").unwrap();
        let argv: &[&[u8]] = &[b"XREADGROUP", b"GROUP", b"g", b"c", b"streams", b"k", b">"];
        assert_eq!(keys_of(xreadgroup, argv), vec![&b"k"[..]]);
        assert!(keys_of(xread, &[b"XREAD", b"STREAMS", b"a"]).is_empty());
        let argv: &[&[u8]] = &[
            b"XREADGROUP",
            b"GROUP",
            b"streams",
            b"c",
            b"STREAMS",
            b"k",
            b">",
        ];
        assert_eq!(keys_of(xreadgroup, argv), vec![&b"k"[..]]);
    }

    #[test]
    fn option_values_and_the_group_triple_never_shift_the_keys() {
        let xread = spec(b"xread").unwrap();
        let xreadgroup = spec(b"xreadgroup").unwrap();
        let words = |s: &'static str| s.split(' ').map(str::as_bytes).collect::<Vec<_>>();
        let cases: [(&CommandSpec, &str, &[&str]); 8] = [
            (
                xreadgroup,
                "XREADGROUP NOACK GROUP g STREAMS STREAMS write2 >",
                &["write2"],
            ),
            (
                xreadgroup,
                "XREADGROUP GROUP g consumer MAXCOUNT 10 STREAMS write2 >",
                &["write2"],
            ),
            (xread, "XREAD MAXSIZE 5 STREAMS write2 $", &["write2"]),
            (
                xread,
                "XREAD MAXCOUNT 5 MAXSIZE 9 STREAMS STREAMS x 0 0",
                &["STREAMS", "x"],
            ),
            (
                xreadgroup,
                "XREADGROUP COUNT 1 GROUP STREAMS c STREAMS k >",
                &["k"],
            ),
            (
                xreadgroup,
                "XREADGROUP GROUP g c CLAIM 5 BLOCK 0 STREAMS k >",
                &["k"],
            ),
            (xread, "XREAD BOGUS STREAMS k 0", &[]),
            (xread, "XREAD MAXCOUNT STREAMS k 0", &[]),
        ];
        for (spec, request, keys) in cases {
            let found = keys_of(spec, &words(request));
            let want: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
            assert_eq!(found, want, "{request}");
        }
    }

    #[test]
    fn one_slot_or_crossslot() {
        assert_eq!(
            common_slot([&b"{a}1"[..], b"{a}2"]),
            Ok(Some(key_slot(b"a")))
        );
        assert_eq!(common_slot([&b"foo"[..], b"bar"]), Err(()));
        assert_eq!(common_slot(std::iter::empty()), Ok(None));
    }
}

//! `SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE
//! destination]` and `SORT_RO` (the same without STORE), as Redis 8.8's `sort.c`.
//!
//! Options are read first (a syntax error, or LIMIT's "value is not an integer or out of
//! range", changes nothing), then the key, by a read lookup: a missing key sorts as an empty
//! list, a key that is not a sortable type is WRONGTYPE. What a type gives to sort is one
//! arm of [`elements`] (lists now; sets and sorted sets plug in there, with whether their
//! native order is meaningful). A BY pattern without `*` sorts nothing (native order, DESC
//! reversing it); a set in native order with STORE is sorted ALPHA instead, so replicas agree.
//!
//! Weights: an element's own value, or the string (or, with `->field`, hash field) found
//! under the pattern with its first `*` replaced by the element; a missing one weighs 0 (or
//! sorts first, ALPHA). Numeric weights must parse as doubles ("One or more scores can't be
//! converted into double", checked after sorting, before any output or store). Equal
//! numeric weights fall back to the elements' bytes. ALPHA compares bytes as `strcoll` does
//! in the C locale (up to a NUL), or plainly with STORE.
//!
//! Effects of STORE: a non-empty result replaces the destination with a list (as SET does:
//! `new` or `overwritten`, expiry dropped, blocked pops signalled), fires `sortstore` and
//! counts one change per element stored; an empty result deletes the destination (`del`, one
//! change) if it existed. Propagated verbatim when it changed something.
//!
//! In cluster mode a BY or GET pattern (but `#`) must name keys of the sorted key's slot only
//! (a hash tag closed before any wildcard), else the option is refused as Redis refuses it.

use std::cmp::Ordering;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, LIST};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::hash::commands::expiry::{FieldRead, Lazy, read_field};
use crate::types::list::List;

use super::args::is;
use super::parse_i64;

/// SORT and SORT_RO.
#[derive(Debug)]
pub struct Sort;

/// The elements a value gives to sort, and whether their native order means something
/// (lists, sorted sets) or not (sets: sorted ALPHA when stored).
fn elements(value: Option<&Value>) -> Result<(Vec<Bytes>, bool)> {
    match value {
        None => Ok((Vec::new(), true)),
        Some(Value::List(list)) => Ok((list.to_vec(), true)),
        Some(Value::Set(set)) => Ok((set.members(), false)),
        Some(Value::ZSet(z)) => Ok((
            z.order()
                .iter()
                .map(|e| Bytes::copy_from_slice(e.member))
                .collect(),
            true,
        )),
        Some(_) => Err(Error::WrongType),
    }
}

/// The bytes up to the first NUL, as C string functions see them.
fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |nul| &b[..nul])
}

/// The value `pattern` names for `element` (Redis's `lookupKeyByPattern`): `#` is the element
/// itself; otherwise the first `*` becomes the element and the key (a read lookup) must hold a
/// string, or, with `->field` after the `*`, a hash holding that field.
fn by_pattern(db: &mut Db, pattern: &[u8], element: &Bytes) -> Option<Bytes> {
    let pattern = c_str(pattern);
    if pattern == b"#" {
        return Some(element.clone());
    }
    let star = pattern.iter().position(|&c| c == b'*')?;
    let field_at = pattern[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|at| star + 1 + at)
        .filter(|&at| at + 2 < pattern.len());
    let key_end = field_at.unwrap_or(pattern.len());
    let mut key = Vec::with_capacity(key_end + element.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    db.expire_if_due(&key);
    db.count_read(&key, false);
    match (db.get(&key)?, field_at) {
        (Value::String(s), None) => Some(s.to_bytes()),
        // A field whose time passed is deleted as HGET would (Redis's `HFE_LAZY_EXPIRE`).
        (Value::Hash(_), Some(at)) => match read_field(db, &key, &pattern[at + 2..], Lazy::FULL) {
            FieldRead::Found(value) => Some(value),
            _ => None,
        },
        _ => None,
    }
}

/// Whether every key `pattern` can name is in `key`'s slot (cluster mode's rule for BY and
/// GET patterns).
fn same_slot(pattern: &[u8], key: &[u8]) -> bool {
    crate::slot::pattern_slot(pattern) == Some(crate::slot::key_slot(key))
}

/// A weight as Redis's `string2d` reads it: the whole text a finite or infinite double, no
/// space around it, no overflow or underflow to zero.
fn parse_score(b: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(b).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    if v.is_nan() {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    if v.is_infinite() && !lower.contains("inf") {
        return None;
    }
    if v == 0.0
        && lower
            .split(['e', 'E'])
            .next()
            .is_some_and(|m| m.bytes().any(|c| (b'1'..=b'9').contains(&c)))
    {
        return None;
    }
    Some(v)
}

/// One element to sort and its weight.
struct Item {
    element: Bytes,
    score: f64,
    by: Option<Bytes>,
}

impl Sort {
    /// SORT.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::sort(db, snapshot, argv, false)
    }

    /// SORT_RO.
    pub fn run_ro(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::sort(db, snapshot, argv, true)
    }

    fn sort(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]], readonly: bool) -> Result<Reply> {
        let mut desc = false;
        let mut alpha = false;
        let mut limit: (i64, i64) = (0, -1);
        let mut store: Option<&[u8]> = None;
        let mut sort_by: Option<&[u8]> = None;
        let mut dont_sort = false;
        let mut gets: Vec<&[u8]> = Vec::new();
        let mut j = 2;
        while j < argv.len() {
            let left = argv.len() - j - 1;
            let arg = argv[j];
            if is(arg, "asc") {
                desc = false;
            } else if is(arg, "desc") {
                desc = true;
            } else if is(arg, "alpha") {
                alpha = true;
            } else if is(arg, "limit") && left >= 2 {
                limit = (parse_i64(argv[j + 1])?, parse_i64(argv[j + 2])?);
                j += 2;
            } else if !readonly && is(arg, "store") && left >= 1 {
                store = Some(argv[j + 1]);
                j += 1;
            } else if is(arg, "by") && left >= 1 {
                sort_by = Some(argv[j + 1]);
                if !c_str(argv[j + 1]).contains(&b'*') {
                    dont_sort = true;
                } else if snapshot.cluster && !same_slot(argv[j + 1], argv[1]) {
                    return Err(Error::SortByCrossSlot);
                }
                j += 1;
            } else if is(arg, "get") && left >= 1 {
                if snapshot.cluster && argv[j + 1] != b"#" && !same_slot(argv[j + 1], argv[1]) {
                    return Err(Error::SortGetCrossSlot);
                }
                gets.push(argv[j + 1]);
                j += 1;
            } else {
                return Err(Error::Syntax);
            }
            j += 1;
        }
        let key = argv[1];
        db.count_read(key, false);
        let (mut all, ordered) = elements(db.get(key))?;
        if dont_sort && !ordered && store.is_some() {
            dont_sort = false;
            alpha = true;
            sort_by = None;
        }
        let len = all.len() as i64;
        let mut start = limit.0.max(0).min(len);
        let count = limit.1.max(-1).min(len);
        let mut end = if count < 0 {
            len - 1
        } else {
            start + count - 1
        };
        if start >= len {
            start = len - 1;
            end = len - 2;
        }
        end = end.min(len - 1);
        let picked: Vec<Bytes> = if dont_sort {
            if ordered && desc {
                all.reverse();
            }
            if end >= start {
                all[start as usize..=end as usize].to_vec()
            } else {
                Vec::new()
            }
        } else {
            let mut items: Vec<Item> = all
                .into_iter()
                .map(|element| Item {
                    element,
                    score: 0.0,
                    by: None,
                })
                .collect();
            let mut bad_score = false;
            for item in &mut items {
                let weight = match sort_by {
                    Some(pattern) => match by_pattern(db, pattern, &item.element) {
                        Some(w) => w,
                        None => continue,
                    },
                    None => item.element.clone(),
                };
                if alpha {
                    if sort_by.is_some() {
                        item.by = Some(weight);
                    }
                } else {
                    match parse_score(&weight) {
                        Some(score) => item.score = score,
                        None => bad_score = true,
                    }
                }
            }
            let stored = store.is_some();
            let by_pattern_set = sort_by.is_some();
            items.sort_by(|a, b| {
                let cmp = if !alpha {
                    a.score
                        .partial_cmp(&b.score)
                        .unwrap_or(Ordering::Equal)
                        .then_with(|| a.element.cmp(&b.element))
                } else if by_pattern_set {
                    match (&a.by, &b.by) {
                        (None, None) => Ordering::Equal,
                        (None, Some(_)) => Ordering::Less,
                        (Some(_), None) => Ordering::Greater,
                        (Some(x), Some(y)) if stored => x.cmp(y),
                        (Some(x), Some(y)) => c_str(x).cmp(c_str(y)),
                    }
                } else if stored {
                    a.element.cmp(&b.element)
                } else {
                    c_str(&a.element).cmp(c_str(&b.element))
                };
                if desc { cmp.reverse() } else { cmp }
            });
            if bad_score {
                return Err(Error::SortScores);
            }
            if end >= start {
                items
                    .drain(start as usize..=end as usize)
                    .map(|i| i.element)
                    .collect()
            } else {
                Vec::new()
            }
        };
        let mut out: Vec<Option<Bytes>> = Vec::new();
        for element in &picked {
            if gets.is_empty() {
                out.push(Some(element.clone()));
            }
            for pattern in &gets {
                out.push(by_pattern(db, pattern, element));
            }
        }
        let Some(dest) = store else {
            return Ok(Reply::Array(
                out.into_iter()
                    .map(|v| v.map_or(Reply::Null, Reply::Bulk))
                    .collect(),
            ));
        };
        let n = out.len();
        if n > 0 {
            let values: Vec<Bytes> = out.into_iter().map(Option::unwrap_or_default).collect();
            let list = List::from_quicklist_pushes(&values, snapshot.list);
            db.insert(dest, Value::List(list));
            db.notify(LIST, "sortstore", dest);
            db.changed(n as u64, argv);
        } else if db.remove(dest).is_some() {
            db.notify(GENERIC, "del", dest);
            db.changed(1, argv);
        }
        Ok(Reply::Int(n as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_score;

    #[test]
    fn scores_parse_as_string2d() {
        assert_eq!(parse_score(b"1.5"), Some(1.5));
        assert_eq!(parse_score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_score(b"1e400"), None);
        assert_eq!(parse_score(b"1e-400"), None);
        assert_eq!(parse_score(b"0e5"), Some(0.0));
        assert_eq!(parse_score(b" 1"), None);
        assert_eq!(parse_score(b"1 "), None);
        assert_eq!(parse_score(b"nan"), None);
        assert_eq!(parse_score(b""), None);
        assert_eq!(parse_score(b"abc"), None);
    }
}

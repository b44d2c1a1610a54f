use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

const LIM: Thresholds = Thresholds {
    hash_entries: 512,
    hash_value: 64,
    set_intset_entries: 512,
    set_entries: 128,
    set_value: 64,
    zset_entries: 128,
    zset_value: 64,
};

/// A field and its value and expiry, as the model holds them.
type Model = (Vec<u8>, (Vec<u8>, Option<u64>));

#[derive(Debug, Clone)]
enum Op {
    Set(u8, usize, bool),
    Remove(u8),
    Expire(u8, Option<u64>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), 0usize..80, any::<bool>()).prop_map(|(f, l, k)| Op::Set(f, l, k)),
        2 => any::<u8>().prop_map(Op::Remove),
        2 => (any::<u8>(), proptest::option::of(1u64..50)).prop_map(|(f, t)| Op::Expire(f, t)),
    ]
}

fn name(f: u8) -> Vec<u8> {
    // Few distinct names so fields repeat; a long one now and then forces a table.
    format!("f{}", f % 150).into_bytes()
}

proptest! {
    #[test]
    fn a_hash_agrees_with_a_map_after_every_operation(ops in proptest::collection::vec(op(), 1..300)) {
        let mut hash = Hash::new();
        let mut model: BTreeMap<Vec<u8>, (Vec<u8>, Option<u64>)> = BTreeMap::new();
        let mut was_table = false;
        for op in ops {
            match op {
                Op::Set(f, len, keep) => {
                    let value = vec![b'v'; len];
                    let updated = hash.set(&name(f), &value, keep, &LIM);
                    let old = model.get(&name(f)).cloned();
                    prop_assert_eq!(updated, old.is_some());
                    let ttl = if keep { old.and_then(|o| o.1) } else { None };
                    model.insert(name(f), (value, ttl));
                }
                Op::Remove(f) => {
                    prop_assert_eq!(hash.remove(&name(f)), model.remove(&name(f)).is_some());
                }
                Op::Expire(f, at) => {
                    let stored = hash.set_expiry(&name(f), at);
                    prop_assert_eq!(stored, model.contains_key(&name(f)));
                    if let Some(entry) = model.get_mut(&name(f)) {
                        entry.1 = at;
                    }
                    prop_assert!(hash.is_table() || hash.is_listpack_ex());
                }
            }
            hash.check_invariants().map_err(TestCaseError::fail)?;
            prop_assert!(!was_table || hash.is_table(), "a table never converts back");
            was_table = hash.is_table();
            let mut got: Vec<Model> = hash
                .entries()
                .map(|(f, v, at)| (f.to_vec(), (v.to_vec(), at)))
                .collect();
            got.sort();
            let want: Vec<_> = model.clone().into_iter().collect();
            prop_assert_eq!(got, want);
            let min = model.values().filter_map(|v| v.1).min();
            prop_assert_eq!(hash.min_expiry(), min);
            let due: usize = model.values().filter(|v| v.1.is_some_and(|t| t <= 25)).count();
            prop_assert_eq!(hash.due_fields(25).len(), due);
        }
    }
}

#[test]
fn encodings_follow_redis_thresholds() {
    let mut h = Hash::new();
    for i in 0..LIM.hash_entries {
        h.set(format!("f{i}").as_bytes(), b"v", false, &LIM);
    }
    assert_eq!(h.encoding(), "listpack");
    h.set(b"one-more", b"v", false, &LIM);
    assert_eq!(h.encoding(), "hashtable");

    let mut h = Hash::new();
    h.set(b"f", &[b'x'; LIM.hash_value], false, &LIM);
    assert_eq!(h.encoding(), "listpack");
    h.set(b"g", &[b'x'; LIM.hash_value + 1], false, &LIM);
    assert_eq!(h.encoding(), "hashtable");

    let mut h = Hash::new();
    h.set(b"a", b"1", false, &LIM);
    h.set_expiry(b"a", Some(100));
    assert_eq!(h.encoding(), "listpackex");
    h.set_expiry(b"a", None);
    assert_eq!(h.encoding(), "listpackex");
}

#[test]
fn listpackex_keeps_fields_in_expiry_order() {
    let mut h = Hash::new();
    for f in [b"a", b"b", b"c", b"d"] {
        h.set(f, b"v", false, &LIM);
    }
    h.set_expiry(b"c", Some(30));
    h.set_expiry(b"a", Some(20));
    h.set_expiry(b"d", Some(30));
    let order: Vec<&[u8]> = h.entries().map(|e| e.0).collect();
    assert_eq!(order, vec![&b"a"[..], b"d", b"c", b"b"]);
}

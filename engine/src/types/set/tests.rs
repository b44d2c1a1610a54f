use std::collections::BTreeSet;

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

fn member(n: u16, kind: u8) -> Vec<u8> {
    match kind % 3 {
        0 => (n % 700).to_string().into_bytes(),
        1 => format!("m{}", n % 200).into_bytes(),
        _ => vec![b'x'; usize::from(n % 80)],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn a_set_agrees_with_a_model_after_every_operation(
        ops in proptest::collection::vec((0u8..7, any::<u16>(), 0u8..6), 1..600)
    ) {
        let mut set = Set::new_intset();
        let mut model = BTreeSet::new();
        let mut rank = 0;
        for (op, n, kind) in ops {
            // Integers are most of the draws, so intsets grow past their limit too.
            let m = member(n, if kind < 4 { 0 } else { kind });
            match op {
                0..=3 => prop_assert_eq!(set.add(&m, &LIM), model.insert(m.clone())),
                4 | 5 => prop_assert_eq!(set.remove(&m), model.remove(&m)),
                _ => match set.pop_random() {
                    Some(popped) => prop_assert!(model.remove(&popped[..])),
                    None => prop_assert!(model.is_empty()),
                },
            }
            set.check_invariants().map_err(TestCaseError::fail)?;
            let now = match set.encoding() { "intset" => 0, "listpack" => 1, _ => 2 };
            prop_assert!(now >= rank, "a set never converts back");
            rank = now;
            let got: BTreeSet<Vec<u8>> = set.members().iter().map(|b| b.to_vec()).collect();
            prop_assert_eq!(&got, &model);
            prop_assert_eq!(set.len(), model.len());
            prop_assert_eq!(set.random_member().is_some(), !model.is_empty());
            prop_assert!(set.random_member().is_none_or(|m| model.contains(&m[..])));
            let count = usize::from(n % 40);
            let repeats = set.random_members(count);
            prop_assert_eq!(repeats.len(), if model.is_empty() { 0 } else { count });
            prop_assert!(repeats.iter().all(|m| model.contains(&m[..])));
            let distinct: BTreeSet<Vec<u8>> =
                set.random_distinct(count).iter().map(|b| b.to_vec()).collect();
            prop_assert_eq!(distinct.len(), count.min(model.len()));
            prop_assert!(distinct.is_subset(&model));
        }
    }
}

/// An intset keeps the width its widest member ever needed, as Redis's blob does, and a
/// loaded blob is kept as it was.
#[test]
fn intset_width_grows_and_stays() {
    let mut s = Set::new_intset();
    s.add(b"7", &LIM);
    assert_eq!(s.intset_blob(), Some(&[2, 0, 0, 0, 1, 0, 0, 0, 7, 0][..]));
    s.add(b"100000", &LIM);
    s.remove(b"100000");
    assert_eq!(
        s.intset_blob(),
        Some(&[4, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0][..])
    );
    s.check_invariants().unwrap();
    let wide = [8, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
    let loaded = Set::from_intset_blob(&wide, &LIM).unwrap();
    assert_eq!(loaded.intset_blob(), Some(&wide[..]));
    assert_eq!(loaded.members(), vec![Bytes::from_static(b"7")]);
    assert!(Set::from_intset_blob(&wide[..12], &LIM).is_err());
    let tiny = Thresholds {
        set_intset_entries: 0,
        ..LIM
    };
    assert_eq!(
        Set::from_intset_blob(&wide, &tiny).unwrap().encoding(),
        "hashtable"
    );
}

/// Every member of a table is drawn, single or in distinct samples of either size.
#[test]
fn a_table_draws_every_member() {
    let mut s = Set::new_table();
    for i in 0..40 {
        s.add(format!("m{i}").as_bytes(), &LIM);
    }
    for count in [1, 5, 30] {
        let mut seen = BTreeSet::new();
        for _ in 0..400 {
            let picked = s.random_distinct(count);
            assert_eq!(picked.len(), count);
            seen.extend(picked);
        }
        assert_eq!(seen.len(), 40, "count {count}");
    }
    let mut popped = BTreeSet::new();
    while let Some(m) = s.pop_random() {
        assert!(popped.insert(m));
        s.check_invariants().unwrap();
    }
    assert_eq!(popped.len(), 40);
}

#[test]
fn encodings_follow_redis_thresholds() {
    let mut s = Set::for_members(b"1", 1, &LIM);
    for i in 0..LIM.set_intset_entries {
        s.add(i.to_string().as_bytes(), &LIM);
    }
    assert_eq!(s.encoding(), "intset");
    s.add(b"100000", &LIM);
    assert_eq!(s.encoding(), "hashtable");

    let mut s = Set::for_members(b"1", 1, &LIM);
    s.add(b"1", &LIM);
    s.add(b"a", &LIM);
    assert_eq!(s.encoding(), "listpack");
    for i in 0..LIM.set_entries - 2 {
        s.add(format!("m{i}").as_bytes(), &LIM);
    }
    assert_eq!(s.encoding(), "listpack");
    s.add(b"last", &LIM);
    assert_eq!(s.encoding(), "hashtable");
    assert_eq!(Set::for_members(b"a", 200, &LIM).encoding(), "hashtable");
}

#[test]
fn a_plain_set_record_loads_as_redis_loads_it() {
    let members = |names: &[&str]| -> Vec<Bytes> {
        names
            .iter()
            .map(|n| Bytes::copy_from_slice(n.as_bytes()))
            .collect()
    };
    let small_intsets = Thresholds {
        set_intset_entries: 2,
        ..LIM
    };
    // More members than an intset holds: a table, though a listpack would hold them.
    let set = Set::from_members(members(&["1", "2", "3"]), &small_intsets);
    assert_eq!(set.encoding(), "hashtable");
    let set = Set::from_members(members(&["a", "b", "c"]), &small_intsets);
    assert_eq!(set.encoding(), "hashtable");
    // Few enough: an intset, made a listpack by the first member that is not an integer.
    assert_eq!(
        Set::from_members(members(&["1", "a"]), &small_intsets).encoding(),
        "listpack"
    );
    assert_eq!(
        Set::from_members(members(&["1", "2"]), &small_intsets).encoding(),
        "intset"
    );
    let set = Set::from_members(members(&["a", "b", "c"]), &LIM);
    assert_eq!(set.encoding(), "listpack");
    set.check_invariants().unwrap();
}

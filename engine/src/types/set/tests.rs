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
        ops in proptest::collection::vec((any::<bool>(), any::<u16>(), 0u8..6), 1..600)
    ) {
        let mut set = Set::new_intset();
        let mut model = BTreeSet::new();
        let mut rank = 0;
        for (add, n, kind) in ops {
            // Integers are most of the draws, so intsets grow past their limit too.
            let m = member(n, if kind < 4 { 0 } else { kind });
            if add {
                prop_assert_eq!(set.add(&m, &LIM), model.insert(m.clone()));
            } else {
                prop_assert_eq!(set.remove(&m), model.remove(&m));
            }
            set.check_invariants().map_err(TestCaseError::fail)?;
            let now = match set.encoding() { "intset" => 0, "listpack" => 1, _ => 2 };
            prop_assert!(now >= rank, "a set never converts back");
            rank = now;
            let got: BTreeSet<Vec<u8>> = set.members().iter().map(|b| b.to_vec()).collect();
            prop_assert_eq!(&got, &model);
            prop_assert_eq!(set.len(), model.len());
        }
    }
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

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

fn model_order(model: &BTreeMap<Vec<u8>, f64>) -> Vec<(f64, Vec<u8>)> {
    let mut v: Vec<(f64, Vec<u8>)> = model.iter().map(|(m, s)| (*s, m.clone())).collect();
    v.sort_by(|a, b| cmp(a.0, &a.1, b.0, &b.1));
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn a_zset_agrees_with_a_model_after_every_operation(
        ops in proptest::collection::vec((0u8..6, 0u16..400, -20i32..20, 0usize..90), 1..700)
    ) {
        let mut z = ZSet::default();
        let mut model: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
        let mut was_skiplist = false;
        for (op, m, s, len) in ops {
            // Long members fill more than one page of records, so removals compact pages
            // and move records under the order's slots; few scores make ties.
            let member = if len > 60 {
                let mut v = format!("m{}:", m % 50).into_bytes();
                v.resize(v.len() + usize::from(m % 20 + 1) * 190, b'x');
                v
            } else {
                format!("m{m}").into_bytes()
            };
            let score = f64::from(s) / 2.0;
            match op {
                0 | 1 => {
                    let (what, _) = z.add(score, &member, AddFlags::default(), &LIM).unwrap();
                    let old = model.insert(member.clone(), score);
                    let expect = match old {
                        None => Added::Added,
                        Some(o) if o == score => Added::Nop,
                        Some(_) => Added::Updated,
                    };
                    prop_assert_eq!(what, expect);
                }
                2 => prop_assert_eq!(z.remove(&member), model.remove(&member).is_some()),
                3 => {
                    let n = z.len();
                    let (a, b) = (len % (n + 1), (len * 7) % (n + 1));
                    let (a, b) = (a.min(b), a.max(b));
                    if a < b {
                        let gone = z.remove_ranks(a, b - 1);
                        for e in gone {
                            model.remove(&e.member[..]);
                        }
                    }
                }
                4 => {
                    let flags = AddFlags { incr: true, ..AddFlags::default() };
                    let (_, after) = z.add(score, &member, flags, &LIM).unwrap();
                    let now = model.get(&member).copied().unwrap_or(0.0) + score;
                    model.insert(member.clone(), now);
                    prop_assert_eq!(after, Some(now));
                }
                // The STORE forms' conversion back (no score here is -0).
                _ => z.maybe_to_listpack(&LIM),
            }
            z.check_invariants().map_err(TestCaseError::fail)?;
            if op != 5 {
                prop_assert!(!(was_skiplist && z.is_listpack()), "a zset never converts back");
            }
            was_skiplist = !z.is_listpack();
            let want = model_order(&model);
            let got: Vec<(f64, Vec<u8>)> = z.order().iter().map(|e| (e.score, e.member.to_vec())).collect();
            prop_assert_eq!(&got, &want);
            let mid = want.len() / 2;
            if let Some((s, m)) = want.get(mid) {
                prop_assert_eq!(z.rank(m), Some((mid, *s)));
                prop_assert_eq!(z.score(m), Some(*s));
                let below = z.order().partition_point(|e| e.score < *s);
                prop_assert_eq!(below, want.iter().filter(|e| e.0 < *s).count());
                let back: Vec<&[u8]> = z.order().iter_from(mid).rev().map(|e| e.member).collect();
                let back_want: Vec<&[u8]> = want[mid..].iter().rev().map(|e| &e.1[..]).collect();
                prop_assert_eq!(back, back_want);
                let r = z.random().unwrap();
                prop_assert_eq!(model.get(r.member), Some(&r.score));
            }
            prop_assert_eq!(z.score(&member), model.get(&member).copied());
        }
    }
}

#[test]
fn a_big_order_keeps_ranks_across_chunks() {
    let mut z = ZSet::create(5000, 0, &LIM);
    for i in (0..5000).rev() {
        z.add(
            f64::from(i),
            format!("m{i}").as_bytes(),
            AddFlags::default(),
            &LIM,
        )
        .unwrap();
    }
    z.check_invariants().unwrap();
    assert_eq!(z.rank(b"m4321"), Some((4321, 4321.0)));
    assert_eq!(z.order().get(1234).unwrap().member, &b"m1234"[..]);
    assert_eq!(
        z.order().range(4998, 6000),
        [4998, 4999]
            .map(|i| Entry {
                score: f64::from(i),
                member: Bytes::from(format!("m{i}")),
            })
            .to_vec()
    );
    z.remove_ranks(100, 3999);
    z.check_invariants().unwrap();
    assert_eq!(z.len(), 1100);
    assert_eq!(z.rank(b"m4000"), Some((100, 4000.0)));
}

#[test]
fn encodings_follow_redis_thresholds() {
    let mut z = ZSet::create(1, 1, &LIM);
    for i in 0..128 {
        z.add(1.0, format!("m{i}").as_bytes(), AddFlags::default(), &LIM)
            .unwrap();
    }
    assert_eq!(z.encoding(), "listpack");
    z.add(1.0, b"one-more", AddFlags::default(), &LIM).unwrap();
    assert_eq!(z.encoding(), "skiplist");
    let mut z = ZSet::create(1, 1, &LIM);
    z.add(1.0, &[b'x'; 65], AddFlags::default(), &LIM).unwrap();
    assert_eq!(z.encoding(), "skiplist");
    assert!(z.add(f64::NAN, b"a", AddFlags::default(), &LIM).is_err());
}

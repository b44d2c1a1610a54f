use std::collections::VecDeque;

use bytes::Bytes;
use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
enum Op {
    Push(Vec<Vec<u8>>, bool),
    Pop(bool),
    Set(i64, Vec<u8>),
    Insert(Vec<u8>, Vec<u8>, bool),
    Delete(usize, usize),
    Remove(Vec<u8>, i64),
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => prop::sample::select(vec!["a", "b", "12", "-7", "300", "hello", "0", "99999999999"])
            .prop_map(|s| s.as_bytes().to_vec()),
        2 => prop::collection::vec(b'a'..b'e', 0..100),
        1 => (0usize..3).prop_map(|k| vec![b'z'; [300, 5000, 9000][k]]),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (prop::collection::vec(value(), 1..8), any::<bool>()).prop_map(|(v, f)| Op::Push(v, f)),
        2 => any::<bool>().prop_map(Op::Pop),
        1 => (-20i64..20, value()).prop_map(|(i, v)| Op::Set(i, v)),
        1 => (value(), value(), any::<bool>()).prop_map(|(p, v, a)| Op::Insert(p, v, a)),
        1 => (0usize..30, 0usize..30).prop_map(|(s, n)| Op::Delete(s, n)),
        1 => (value(), -3i64..3).prop_map(|(v, c)| Op::Remove(v, c)),
    ]
}

/// The model's element as stored: the listpack writes canonical integers as integers, and
/// reads them back as the same text.
fn apply(list: &mut List, model: &mut VecDeque<Vec<u8>>, op: &Op, cfg: ListConfig) {
    match op {
        Op::Push(values, front) => {
            let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
            list.push(&refs, *front, cfg);
            for v in values {
                if *front {
                    model.push_front(v.clone());
                } else {
                    model.push_back(v.clone());
                }
            }
        }
        Op::Pop(front) => {
            let got = list.pop(*front);
            list.shrink_check(cfg);
            let want = if *front {
                model.pop_front()
            } else {
                model.pop_back()
            };
            assert_eq!(got.map(|b| b.to_vec()), want);
        }
        Op::Set(index, v) => {
            let ok = list.set(*index, v, cfg);
            let len = model.len() as i64;
            let at = if *index < 0 { len + index } else { *index };
            assert_eq!(ok, (0..len).contains(&at));
            if ok {
                model[at as usize] = v.clone();
            }
        }
        Op::Insert(pivot, v, after) => {
            let ok = list.insert(pivot, v, *after, cfg);
            let at = model.iter().position(|e| e == pivot);
            assert_eq!(ok, at.is_some());
            if let Some(at) = at {
                model.insert(if *after { at + 1 } else { at }, v.clone());
            }
        }
        Op::Delete(start, n) => {
            list.delete_range(*start, *n);
            list.shrink_check(cfg);
            if *start < model.len() {
                let end = (*start + *n).min(model.len());
                model.drain(*start..end);
            }
        }
        Op::Remove(v, count) => {
            let removed = list.remove(v, *count);
            list.shrink_check(cfg);
            let mut want = 0;
            let limit = count.unsigned_abs() as usize;
            if *count < 0 {
                let mut i = model.len();
                while i > 0 && (limit == 0 || want < limit) {
                    i -= 1;
                    if model[i] == *v {
                        model.remove(i);
                        want += 1;
                    }
                }
            } else {
                let mut i = 0;
                while i < model.len() && (limit == 0 || want < limit) {
                    if model[i] == *v {
                        model.remove(i);
                        want += 1;
                    } else {
                        i += 1;
                    }
                }
            }
            assert_eq!(removed, want);
        }
    }
}

fn check(list: &List, model: &VecDeque<Vec<u8>>) {
    list.check_invariants().unwrap();
    assert_eq!(list.len(), model.len());
    let all: Vec<Vec<u8>> = list.to_vec().into_iter().map(|b| b.to_vec()).collect();
    let want: Vec<Vec<u8>> = model.iter().cloned().collect();
    assert_eq!(all, want);
    let back: Vec<Bytes> = if model.is_empty() {
        Vec::new()
    } else {
        list.range(model.len() - 1, model.len(), true)
    };
    assert_eq!(back.len(), model.len());
    for (i, e) in back.iter().enumerate() {
        assert_eq!(e.as_ref(), model[model.len() - 1 - i].as_slice());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn list_matches_a_deque(
        fill in prop::sample::select(vec![-2, -1, 1, 3, 5, 0]),
        depth in 0u32..3,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let cfg = ListConfig { fill, depth };
        let mut list = List::new();
        let mut model = VecDeque::new();
        for op in &ops {
            apply(&mut list, &mut model, op, cfg);
            check(&list, &model);
        }
    }
}

#[test]
fn encoding_follows_redis_thresholds() {
    let cfg = ListConfig::default();
    let mut list = List::new();
    list.push(&[b"a"], false, cfg);
    assert_eq!(list.encoding(), "listpack");
    // 8 KiB listpack limit with fill -2.
    let big = vec![b'x'; 8200];
    list.push(&[&big], false, cfg);
    assert_eq!(list.encoding(), "quicklist");
    list.pop(false);
    list.shrink_check(cfg);
    assert_eq!(list.encoding(), "listpack");
    let count = ListConfig { fill: 4, depth: 0 };
    let mut list = List::from_values(&["1", "2", "3", "4"], count);
    assert_eq!(list.encoding(), "listpack");
    list.push(&[b"5"], false, count);
    assert_eq!(list.encoding(), "quicklist");
    list.pop(false);
    list.shrink_check(count);
    assert_eq!(list.encoding(), "quicklist");
    list.pop(false);
    list.pop(false);
    list.shrink_check(count);
    assert_eq!(list.encoding(), "listpack");
}

#[test]
fn inner_nodes_compress() {
    let cfg = ListConfig { fill: -1, depth: 1 };
    let mut list = List::new();
    let v = vec![b'q'; 100];
    for _ in 0..200 {
        list.push(&[&v], false, cfg);
    }
    let ql = list.as_quicklist().unwrap();
    assert!(ql.node_count() > 3);
    let compressed = ql.nodes().filter(|n| n.stored().2).count();
    assert_eq!(compressed, ql.node_count() - 2);
    list.check_invariants().unwrap();
    assert_eq!(list.get(100).unwrap().as_ref(), v.as_slice());
}

#[test]
fn damaged_list_payloads_never_panic() {
    use crate::keyspace::Value;
    use crate::rdb::dump;
    let now = 1_700_000_000_000;
    let mut payloads = Vec::new();
    let small = List::from_values(&["a", "12", "-7", "hello"], ListConfig::default());
    let big_values: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("v{i}-{}", "x".repeat(i % 50)).into_bytes())
        .collect();
    let big = List::from_values(&big_values, ListConfig { fill: -1, depth: 1 });
    let plain = List::from_values(&[vec![b'p'; 9000], b"q".to_vec()], ListConfig::default());
    for list in [small, big, plain] {
        payloads.push(dump::dump(&Value::List(list), now, true));
    }
    for payload in payloads {
        let value = dump::restore(&payload, now, &Default::default()).unwrap();
        crate::rdb::fuzz::run(&[&[0u8][..], &payload[..payload.len() - 10]].concat());
        assert!(matches!(value, Value::List(_)));
        for cut in (0..payload.len()).step_by(7) {
            let mut body = vec![0u8];
            body.extend_from_slice(&payload[..cut]);
            crate::rdb::fuzz::run(&body);
        }
        for at in (0..payload.len().saturating_sub(10)).step_by(3) {
            for flip in [1u8, 0x80, 0xff] {
                let mut body = vec![0u8];
                body.extend_from_slice(&payload[..payload.len() - 10]);
                body[1 + at] ^= flip;
                crate::rdb::fuzz::run(&body);
            }
        }
    }
}

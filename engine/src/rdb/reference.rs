//! The RDB node conversion as it was first written (a [`Builder`] element by element on save,
//! [`listpack::parse`] into a vector and `Node::new_loaded`/`push_loaded` per entry on load),
//! kept as the reference the direct one-pass conversion ([`crate::node`]'s `listpack` module)
//! is compared with: the same listpack bytes from the same node, the same node from the same
//! listpack, and on damaged listpacks no panic and only nodes that pass their check.

use std::borrow::Cow;

use proptest::prelude::*;

use crate::id::StreamId;
use crate::node::Node;

use super::listpack::{self, Builder, Element};

const FLAG_DELETED: i64 = 1;
const FLAG_SAME_FIELDS: i64 = 2;

/// A node as Redis's listpack.
fn node_listpack(master: StreamId, node: &Node) -> Vec<u8> {
    let mut lp = Builder::new();
    let names = node.master_fields();
    lp.int(node.live() as i64);
    lp.int(node.deleted() as i64);
    lp.int(names.len() as i64);
    for name in &names {
        lp.string(name);
    }
    lp.int(0);
    for raw in node.scan(master) {
        let entry = node.entry(&raw);
        let mut flags = 0;
        if raw.deleted {
            flags |= FLAG_DELETED;
        }
        if raw.same_fields {
            flags |= FLAG_SAME_FIELDS;
        }
        lp.int(flags);
        lp.int(raw.id.ms.wrapping_sub(master.ms) as i64);
        lp.int(raw.id.seq.wrapping_sub(master.seq) as i64);
        let n = entry.len() as i64;
        if raw.same_fields {
            for (_, value) in entry.fields() {
                lp.string(value);
            }
            lp.int(n + 3);
        } else {
            lp.int(n);
            for (field, value) in entry.fields() {
                lp.string(field);
                lp.string(value);
            }
            lp.int(2 * n + 4);
        }
    }
    lp.finish()
}

/// An integer element (counts and deltas), or the reason it is not one.
fn int(element: Option<&Element<'_>>) -> Result<i64, String> {
    match element {
        Some(Element::Int(v)) => Ok(*v),
        Some(Element::Str(s)) => std::str::from_utf8(s)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "a stream listpack number is not an integer".to_string()),
        None => Err("stream listpack ends inside an entry".into()),
    }
}

/// An element's bytes: a string borrowed from the listpack, an integer as its decimal text.
fn element<'a>(element: Option<&Element<'a>>) -> Result<Cow<'a, [u8]>, String> {
    match element {
        Some(Element::Str(s)) => Ok(Cow::Borrowed(s)),
        Some(Element::Int(v)) => Ok(Cow::Owned(v.to_string().into_bytes())),
        None => Err("stream listpack ends inside an entry".into()),
    }
}

/// A node from Redis's listpack, with its live entry count.
fn node_from_listpack(master: StreamId, lp: &[u8]) -> Result<(Node, u64), String> {
    let elements = listpack::parse(lp)?;
    let mut it = elements.iter();
    let count = int(it.next())?;
    let deleted = int(it.next())?;
    let n_master = int(it.next())?;
    if count <= 0 {
        return Err("Stream listpack bad entry count".into());
    }
    let n_master =
        usize::try_from(n_master).map_err(|_| "negative master field count".to_string())?;
    if n_master > elements.len() {
        return Err("master field count beyond the listpack".into());
    }
    let mut master_fields = Vec::with_capacity(n_master);
    for _ in 0..n_master {
        master_fields.push(element(it.next())?);
    }
    if int(it.next())? != 0 {
        return Err("stream master entry without its terminator".into());
    }
    let mut node: Option<Node> = None;
    let (mut live, mut dead) = (0i64, 0i64);
    let mut last: Option<StreamId> = None;
    let mut fields: Vec<Cow<'_, [u8]>> = Vec::new();
    while let Some(first) = it.next() {
        let flags = int(Some(first))?;
        let ms = master.ms.wrapping_add(int(it.next())? as u64);
        let seq = master.seq.wrapping_add(int(it.next())? as u64);
        let id = StreamId::new(ms, seq);
        fields.clear();
        let lp_count = if flags & FLAG_SAME_FIELDS != 0 {
            for name in &master_fields {
                fields.push(Cow::Borrowed(name.as_ref()));
                fields.push(element(it.next())?);
            }
            n_master as i64 + 3
        } else {
            let n = int(it.next())?;
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= elements.len())
                .ok_or_else(|| "bad entry field count".to_string())?;
            for _ in 0..2 * n {
                fields.push(element(it.next())?);
            }
            2 * n as i64 + 4
        };
        if int(it.next())? != lp_count {
            return Err("stream entry lp-count is wrong".into());
        }
        if last.is_some_and(|l| l >= id) {
            return Err("stream entries out of order".into());
        }
        let is_deleted = flags & FLAG_DELETED != 0;
        match node.as_mut() {
            None => {
                if id != master {
                    return Err("the first entry is not the node's master id".into());
                }
                node = Some(Node::new_loaded(id, &fields, is_deleted));
            }
            Some(node) => node.push_loaded(master, id, &fields, is_deleted),
        }
        if is_deleted {
            dead += 1;
        } else {
            live += 1;
        }
        last = Some(id);
    }
    let node = node.ok_or_else(|| "Empty listpack inside stream".to_string())?;
    if live != count || dead != deleted {
        return Err("stream master entry counts do not match the entries".into());
    }
    Ok((node, live as u64))
}

/// One entry of a generated node: field/value pairs and whether it is then deleted.
type GenEntry = (Vec<(Vec<u8>, Vec<u8>)>, bool);

/// Field names and values: short words, integers (stored as listpack integers), long strings
/// (the 2- and 5-byte string encodings and longer back-lengths).
fn item() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::sample::select(vec![&b"f1"[..], b"f2", b"v1", b"v2", b"", b"x"])
            .prop_map(<[u8]>::to_vec),
        3 => any::<i64>().prop_map(|v| v.to_string().into_bytes()),
        2 => (0i64..200).prop_map(|v| v.to_string().into_bytes()),
        1 => proptest::sample::select(
            vec![&b"007"[..], b"-0", b"+1", b"1e3", b"99999999999999999999"]
        )
        .prop_map(<[u8]>::to_vec),
        1 => (64usize..200).prop_map(|n| vec![b'q'; n]),
        1 => Just(vec![b'z'; 5000]),
    ]
}

fn entry() -> impl Strategy<Value = GenEntry> {
    (
        proptest::collection::vec((item(), item()), 0..4),
        any::<bool>(),
    )
}

/// A node of the generated entries under `master` (ids spaced by `steps`), some deleted, at
/// least one live; entries that repeat the first one's names share them, as XADD's do.
fn build(master: StreamId, entries: &[GenEntry], steps: &[(u64, u64)]) -> Node {
    let flat = |pairs: &Vec<(Vec<u8>, Vec<u8>)>| -> Vec<Vec<u8>> {
        pairs
            .iter()
            .flat_map(|(f, v)| [f.clone(), v.clone()])
            .collect()
    };
    let first = &entries[0].0;
    let mut node = Node::new(master, &flat(first));
    let mut id = master;
    let mut ids = vec![master];
    for (i, (pairs, _)) in entries.iter().enumerate().skip(1) {
        let (dms, dseq) = steps[i % steps.len()];
        id = if dms == 0 {
            StreamId::new(id.ms, id.seq + 1 + dseq)
        } else {
            StreamId::new(id.ms + dms, dseq)
        };
        // Every other entry takes the first one's names with its own values.
        let fields = if i % 2 == 0 {
            first
                .iter()
                .zip(
                    pairs
                        .iter()
                        .chain(std::iter::repeat(&(Vec::new(), b"v".to_vec()))),
                )
                .flat_map(|((f, _), (_, v))| [f.clone(), v.clone()])
                .collect()
        } else {
            flat(pairs)
        };
        node.push(master, id, &fields);
        ids.push(id);
    }
    let mut kept_live = false;
    for (i, (_, deleted)) in entries.iter().enumerate() {
        let live_left = entries.len() - i - 1;
        if *deleted && (kept_live || live_left > 0) {
            if let Some(raw) = node.find(master, ids[i]) {
                node.mark_deleted(&raw);
            }
        } else {
            kept_live = true;
        }
    }
    node
}

fn same_node(a: &Node, b: &Node) -> bool {
    a.parts() == b.parts()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn direct_conversion_equals_the_reference(
        ms in any::<u32>(),
        seq in 0u64..1000,
        entries in proptest::collection::vec(entry(), 1..40),
        steps in proptest::collection::vec((0u64..3, 0u64..300), 1..5),
    ) {
        let master = StreamId::new(u64::from(ms), seq);
        let node = build(master, &entries, &steps);
        node.check(master).unwrap();
        let reference = node_listpack(master, &node);
        let mut direct = vec![0xaa];
        node.write_listpack(&mut direct);
        prop_assert_eq!(&direct[1..], &reference[..]);
        prop_assert_eq!(reference.len() as u64, node.listpack_bytes());
        let (old, old_live) = node_from_listpack(master, &reference).unwrap();
        let (new, new_live) = Node::from_listpack(master, &reference).unwrap();
        prop_assert_eq!(old_live, new_live);
        prop_assert!(same_node(&old, &new));
        prop_assert!(same_node(&node, &new));
        new.check(master).unwrap();
    }

    #[test]
    fn damaged_listpacks_never_panic_and_load_only_sound_nodes(
        entries in proptest::collection::vec(entry(), 1..12),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let master = StreamId::new(1_000, 5);
        let node = build(master, &entries, &[(0, 1), (1, 0)]);
        let mut lp = node_listpack(master, &node);
        for (at, byte) in &edits {
            let i = at.index(lp.len());
            lp[i] = *byte;
        }
        if truncate {
            lp.truncate(cut.index(lp.len()));
        }
        let old = node_from_listpack(master, &lp);
        match Node::from_listpack(master, &lp) {
            Ok((new, live)) => {
                new.check(master).unwrap();
                prop_assert_eq!(live, new.live());
                // Saved again, it loads back to the same node.
                let mut again = Vec::new();
                new.write_listpack(&mut again);
                let (back, _) = Node::from_listpack(master, &again).unwrap();
                prop_assert!(same_node(&back, &new));
                // The old path accepts what the new one does, to the same node when the
                // listpack's master names are its first entry's (always so in Redis's files).
                let (old, _) = old.unwrap();
                if old.master_fields() == node.master_fields() {
                    prop_assert!(same_node(&old, &new));
                }
            }
            Err(_) => prop_assert!(old.is_err()),
        }
    }
}

/// A listpack whose second entry has the master's names without the same-fields flag (Redis
/// never writes one; a hand-made file may): stored with values only, as `Node::push` would
/// store it, and as the reference loads it.
#[test]
fn an_unflagged_entry_with_the_masters_names_shares_them() {
    let master = StreamId::new(7, 0);
    let mut lp = Builder::new();
    for v in [2, 0, 2] {
        lp.int(v); // count, deleted, master fields
    }
    lp.string(b"f");
    lp.string(b"g");
    lp.int(0);
    for v in [FLAG_SAME_FIELDS, 0, 0] {
        lp.int(v);
    }
    lp.string(b"1");
    lp.string(b"2");
    lp.int(5);
    for v in [0, 0, 1, 2] {
        lp.int(v); // flags without same-fields, deltas, field count
    }
    for s in [&b"f"[..], b"3", b"g", b"4"] {
        lp.string(s);
    }
    lp.int(8);
    let lp = lp.finish();
    let (new, live) = Node::from_listpack(master, &lp).unwrap();
    let (old, _) = node_from_listpack(master, &lp).unwrap();
    assert_eq!(live, 2);
    assert_eq!(new.parts(), old.parts());
    let mut pushed = Node::new(master, &["f", "1", "g", "2"]);
    pushed.push(master, StreamId::new(7, 1), &["f", "3", "g", "4"]);
    assert_eq!(new.parts(), pushed.parts());
    new.check(master).unwrap();
}

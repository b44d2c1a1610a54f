//! What a trim would remove, without removing it: the seam fold-before-trim needs.
//!
//! Every trim removes a prefix of the live entries: whole nodes from the head, then (exact
//! trims only) the first live entries of the next node. So "what would go" is fully described
//! by how many live entries go and the last of them: every live entry with an id at or below
//! [`TrimPreview::last`] goes, none above it. For `~` that prefix is the whole nodes the trim
//! drops; for `=` it also covers the entries tombstoned in the partial node.
//!
//! The walk below is [`Stream::trim`]'s walk with the mutations taken out; the property test
//! at the bottom runs both on the same streams and requires identical results.
//!
//! With DELREF the removed entries are still a prefix (that walk skips nothing, and with `~`
//! it also enters the partial node). With ACKED they are not: a referenced entry at or below
//! `last` stays. `last` is still the highest id removed, so folding every live entry up to it
//! covers what goes (and archives a few that stay, unchanged).

use crate::config::NodeLimits;
use crate::id::StreamId;

use super::{DeleteStrategy, Stream, Trim, TrimStrategy};

/// What a trim would remove from a stream now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimPreview {
    /// Live entries the trim would remove.
    pub removed: u64,
    /// The highest id it would remove (`None` when it removes nothing). Every live entry at
    /// or below it would be removed.
    pub last: Option<StreamId>,
}

impl Stream {
    /// What [`Stream::trim`] with these arguments would remove, without changing anything.
    pub fn trim_preview(&self, trim: &Trim, limits: NodeLimits) -> TrimPreview {
        let limit = trim.effective_limit(limits);
        let keep_ref = trim.delete == DeleteStrategy::KeepRef;
        let min_last_id = self.groups.values().map(|g| g.last_id).min();
        let referenced =
            |id: StreamId| min_last_id.is_some_and(|min| id > min || self.index.refs.contains(id));
        let mut preview = TrimPreview {
            removed: 0,
            last: None,
        };
        let mut length = self.length;
        for (&master, node) in &self.nodes {
            if let TrimStrategy::MaxLen(maxlen) = trim.strategy
                && length <= maxlen
            {
                break;
            }
            let live = node.live();
            if limit != 0 && preview.removed + live > limit {
                break;
            }
            let eligible = match trim.strategy {
                TrimStrategy::MaxLen(maxlen) => length - live >= maxlen,
                TrimStrategy::MinId(min) => node.last() < min,
            };
            if eligible && keep_ref {
                if let Some(last_live) = node.last_live(master) {
                    preview.last = Some(last_live);
                }
                length -= live;
                preview.removed += live;
                continue;
            }
            if trim.approx && keep_ref {
                break;
            }
            let mut from_node = 0;
            for raw in node.scan(master) {
                let done = match trim.strategy {
                    TrimStrategy::MaxLen(maxlen) => length <= maxlen,
                    TrimStrategy::MinId(min) => raw.id >= min,
                };
                if done {
                    break;
                }
                if raw.deleted || (trim.delete == DeleteStrategy::Acked && referenced(raw.id)) {
                    continue;
                }
                length -= 1;
                from_node += 1;
                preview.last = Some(raw.id);
            }
            preview.removed += from_node;
            if eligible {
                continue;
            }
            break;
        }
        preview
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::id::AddId;

    fn live_ids(s: &Stream) -> Vec<StreamId> {
        s.range(StreamId::MIN, StreamId::MAX)
            .map(|e| e.id)
            .collect()
    }

    #[test]
    fn approx_preview_names_the_whole_nodes_only() {
        let limits = NodeLimits {
            entries_max: 10,
            bytes_max: 4096,
        };
        let mut s = Stream::new();
        for seq in 1..=35 {
            s.add(
                AddId::Explicit(StreamId::new(1, seq)),
                &["f", "v"],
                0,
                limits,
            )
            .unwrap();
        }
        // MAXLEN ~ 20 drops the first node (ids 1..=10) only: a second would leave 15 < 20.
        let p = s.trim_preview(&Trim::maxlen_approx(20), limits);
        assert_eq!((p.removed, p.last), (10, Some(StreamId::new(1, 10))));
        // MAXLEN = 20 also tombstones 5 entries of the second node.
        let p = s.trim_preview(&Trim::maxlen(20), limits);
        assert_eq!((p.removed, p.last), (15, Some(StreamId::new(1, 15))));
        let p = s.trim_preview(&Trim::maxlen(40), limits);
        assert_eq!((p.removed, p.last), (0, None));
        assert_eq!(s.len(), 35, "a preview changes nothing");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(u8),
        Del(u16),
    }

    fn trim() -> impl Strategy<Value = Trim> {
        (
            any::<bool>(),
            0..60u64,
            any::<bool>(),
            prop::option::of(0..40u64),
            prop::sample::select(vec![
                DeleteStrategy::KeepRef,
                DeleteStrategy::DelRef,
                DeleteStrategy::Acked,
            ]),
        )
            .prop_map(|(maxlen, n, approx, limit, delete)| {
                let base = match (maxlen, approx) {
                    (true, true) => Trim::maxlen_approx(n),
                    (true, false) => Trim::maxlen(n),
                    (false, true) => Trim::minid_approx(StreamId::new(1, n)),
                    (false, false) => Trim::minid(StreamId::new(1, n)),
                };
                match limit {
                    Some(l) if approx => base.with_limit(l),
                    _ => base,
                }
                .with_delete(delete)
            })
    }

    proptest! {
        #[test]
        fn preview_matches_the_real_trim(
            entries_max in 1..8u64,
            ops in prop::collection::vec(prop_oneof![
                (0..3u8).prop_map(Op::Add),
                (1..60u16).prop_map(Op::Del),
            ], 0..60),
            trims in prop::collection::vec(trim(), 1..4),
            group in prop::option::of((0..60u64, 0..60u64)),
        ) {
            let limits = NodeLimits { entries_max, bytes_max: 4096 };
            let mut s = Stream::new();
            let mut seq = 0;
            for op in ops {
                match op {
                    Op::Add(width) => {
                        seq += 1;
                        let fields: Vec<&str> = ["a", "1", "b", "2", "c", "3"][..2 + 2 * width as usize].to_vec();
                        s.add(AddId::Explicit(StreamId::new(1, seq)), &fields, 0, limits).unwrap();
                    }
                    Op::Del(n) => {
                        s.delete(&[StreamId::new(1, u64::from(n))]);
                    }
                }
            }
            // A group that read up to `read` and acked all but ids above `acked_to`.
            if let Some((read, acked_to)) = group {
                s.create_group(b"g", StreamId::MIN, None).unwrap();
                s.deliver_new(b"g", b"c", read as usize, false, 0, &mut |_| {}).unwrap();
                let acks: Vec<StreamId> = (1..=acked_to).map(|n| StreamId::new(1, n)).collect();
                s.ack(b"g", &acks).unwrap();
            }
            for t in trims {
                let before = live_ids(&s);
                let preview = s.trim_preview(&t, limits);
                let removed = s.trim(&t, limits);
                s.check_invariants().unwrap();
                prop_assert_eq!(preview.removed, removed);
                let after = live_ids(&s);
                // Nothing above `last` went; with ACKED some at or below it may stay, else
                // exactly the prefix up to `last` went.
                let above: Vec<StreamId> = before
                    .iter()
                    .copied()
                    .filter(|id| preview.last.is_none_or(|l| *id > l))
                    .collect();
                prop_assert!(after.ends_with(&above));
                if t.delete != DeleteStrategy::Acked {
                    prop_assert_eq!(after, above);
                }
            }
        }
    }
}

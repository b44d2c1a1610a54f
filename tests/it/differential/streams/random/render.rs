//! Turning plans into commands against the engine's current state.

use echomq_engine::{Keyspace, StreamId};

use crate::support::peer::PeerInfo;

use super::{Bound, IdPlan, KEYS, Op, TrimPlan};

/// What a plan needs to know about a stream, read from the engine before the command runs.
#[derive(Debug, Default)]
struct View {
    live: Vec<StreamId>,
    last_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
}

impl View {
    fn of(engine: &Keyspace, key: &str) -> View {
        engine.run(|db, _| match db.stream(key.as_bytes()) {
            Ok(Some(s)) => View {
                live: s
                    .range(StreamId::MIN, StreamId::MAX)
                    .map(|e| e.id)
                    .collect(),
                last_id: s.last_id(),
                max_deleted: s.max_deleted_entry_id(),
                entries_added: s.entries_added(),
            },
            _ => View::default(),
        })
    }

    /// A live id chosen by `pick`, or `last_id` when there is none.
    fn live(&self, pick: u16) -> StreamId {
        match self.live.len() {
            0 => self.last_id,
            n => self.live[usize::from(pick) % n],
        }
    }
}

pub(super) fn config_set(name: &str, value: u64) -> Vec<String> {
    vec![
        "CONFIG".into(),
        "SET".into(),
        name.into(),
        value.to_string(),
    ]
}

/// The commands for one plan, against the engine's current state, steering around documented
/// differences of older servers.
pub(super) fn render(op: &Op, engine: &Keyspace, peer: &PeerInfo) -> Vec<Vec<Vec<u8>>> {
    let text = |words: Vec<String>| words.into_iter().map(String::into_bytes).collect();
    match op {
        Op::Add {
            key,
            nomkstream,
            trim,
            id,
            fields,
        } => {
            let view = View::of(engine, KEYS[*key]);
            let mut argv: Vec<String> = vec!["XADD".into(), KEYS[*key].into()];
            if *nomkstream {
                argv.push("NOMKSTREAM".into());
            }
            if let Some(trim) = trim {
                argv.extend(render_trim(trim, &view));
            }
            argv.push(render_id(id, &view));
            let mut argv: Vec<Vec<u8>> = text(argv);
            for (field, value) in fields {
                argv.push(field.clone());
                argv.push(value.clone());
            }
            vec![argv]
        }
        Op::Burst {
            key,
            count,
            gap,
            fields,
        } => {
            let last = View::of(engine, KEYS[*key]).last_id;
            (1..=*count as u64)
                .map(|i| {
                    let id = match gap {
                        0 => last
                            .seq
                            .checked_add(i)
                            .map(|seq| StreamId::new(last.ms, seq)),
                        g => last.ms.checked_add(g * i).map(|ms| StreamId::new(ms, 0)),
                    };
                    let id = id.map_or_else(|| "0-0".to_string(), |id| id.to_string());
                    let mut argv = text(vec!["XADD".into(), KEYS[*key].into(), id]);
                    for (n, (field, value)) in fields.iter().enumerate() {
                        argv.push(field.clone());
                        // Every third entry gets integer values: same fields, other sizes.
                        argv.push(if i % 3 == 0 {
                            (i * 7 + n as u64).to_string().into_bytes()
                        } else {
                            value.clone()
                        });
                    }
                    argv
                })
                .collect()
        }
        Op::Del { key, picks, bad } => {
            let view = View::of(engine, KEYS[*key]);
            let mut argv: Vec<String> = vec!["XDEL".into(), KEYS[*key].into()];
            for &pick in picks {
                let n = view.live.len();
                argv.push(match usize::from(pick) % (n + 2) {
                    i if i < n => view.live[i].to_string(),
                    i if i == n => next_after(view.last_id).to_string(),
                    _ => "0-1".to_string(),
                });
            }
            if *bad {
                argv.push("not-an-id".into());
            }
            vec![text(argv)]
        }
        Op::Trim { key, trim } => {
            let view = View::of(engine, KEYS[*key]);
            let mut argv: Vec<String> = vec!["XTRIM".into(), KEYS[*key].into()];
            argv.extend(render_trim(trim, &view));
            vec![text(argv)]
        }
        Op::SetId {
            key,
            target,
            entries_added,
            max_deleted,
        } => {
            let view = View::of(engine, KEYS[*key]);
            let last = view.last_id;
            let id = match target {
                0 | 1 => last,
                2 => StreamId::new(last.ms.saturating_add(3), 0),
                3 => view.live.last().copied().unwrap_or(last),
                _ => view.live.first().copied().unwrap_or(StreamId::MIN),
            };
            // `docs/reference/streams.md` §6.1: newer servers refuse an id below the current
            // max_deleted_entry_id; Redis 7.0 has no such check (see cases.rs).
            let id = if peer.is_redis_before(7, 2) {
                id.max(view.max_deleted)
            } else {
                id
            };
            let mut argv: Vec<String> = vec!["XSETID".into(), KEYS[*key].into(), id.to_string()];
            if let Some(delta) = entries_added {
                argv.push("ENTRIESADDED".into());
                argv.push((view.entries_added as i64 + delta).to_string());
            }
            if let Some(which) = max_deleted {
                argv.push("MAXDELETEDID".into());
                argv.push(match which {
                    0 => view.max_deleted.to_string(),
                    1 => id.to_string(),
                    2 => next_after(id).to_string(),
                    _ => "0-0".to_string(),
                });
            }
            vec![text(argv)]
        }
        Op::Range {
            key,
            rev,
            start,
            end,
            count,
        } => {
            let view = View::of(engine, KEYS[*key]);
            let (start, end) = (render_bound(start, &view), render_bound(end, &view));
            let mut argv: Vec<String> = if *rev {
                vec!["XREVRANGE".into(), KEYS[*key].into(), end, start]
            } else {
                vec!["XRANGE".into(), KEYS[*key].into(), start, end]
            };
            if let Some(count) = count {
                argv.push("COUNT".into());
                argv.push(count.to_string());
            }
            vec![text(argv)]
        }
        Op::Len { key } => vec![text(vec!["XLEN".into(), KEYS[*key].into()])],
        Op::Config {
            entries_max,
            bytes_max,
        } => {
            // Redis 7.0.15 crashes (known_differences::REDIS_7_0_SHRINK_CRASH) when the byte limit is
            // lowered under an existing node; there, the limit only goes up.
            let bytes_max = if peer.is_redis_before(7, 2) {
                let current = engine.config().node_limits().bytes_max;
                match (current, *bytes_max) {
                    (0, _) | (_, 0) => 0,
                    (a, b) => a.max(b),
                }
            } else {
                *bytes_max
            };
            let mut out = vec![text(config_set("stream-node-max-bytes", bytes_max))];
            if let Some(n) = entries_max {
                out.push(text(config_set("stream-node-max-entries", *n)));
            }
            out
        }
    }
}

fn render_id(plan: &IdPlan, view: &View) -> String {
    let last = view.last_id;
    let ms = |gap: u64| last.ms.checked_add(gap);
    match plan {
        IdPlan::Next { gap: 0, seq } => match last.seq.checked_add(1 + seq) {
            Some(s) => StreamId::new(last.ms, s).to_string(),
            None => next_after(last).to_string(),
        },
        IdPlan::Next { gap, seq } => match ms(*gap) {
            Some(ms) => StreamId::new(ms, *seq).to_string(),
            None => next_after(last).to_string(),
        },
        IdPlan::MsOnly { gap } => ms(*gap).map_or_else(|| last.to_string(), |m| m.to_string()),
        IdPlan::SeqAuto { gap } => {
            ms(*gap).map_or_else(|| format!("{}-*", last.ms), |m| format!("{m}-*"))
        }
        IdPlan::Stale(pick) => view.live(*pick).to_string(),
        IdPlan::Zero => "0-0".to_string(),
    }
}

fn render_trim(plan: &TrimPlan, view: &View) -> Vec<String> {
    let mut out = Vec::new();
    let threshold = if plan.minid {
        out.push("MINID".to_string());
        let n = view.live.len();
        // Mostly a point in the oldest quarter, so streams keep most of their entries.
        let i = match plan.threshold % 4 {
            0 => usize::from(plan.threshold / 4) % (n + 2),
            _ => usize::from(plan.threshold / 4) % (n / 4 + 1),
        };
        match i {
            i if i < n && plan.threshold % 5 == 0 => view.live[i].ms.to_string(),
            i if i < n => view.live[i].to_string(),
            i if i == n => next_after(view.last_id).to_string(),
            _ => "0".to_string(),
        }
    } else {
        out.push("MAXLEN".to_string());
        // Mostly a few entries below the length, sometimes anywhere up to a bit above it.
        let len = view.live.len();
        match plan.threshold % 4 {
            0 => (usize::from(plan.threshold / 4) % (len + 3)).to_string(),
            _ => len
                .saturating_sub(usize::from(plan.threshold / 4) % 12)
                .to_string(),
        }
    };
    if !plan.mode.is_empty() {
        out.push(plan.mode.to_string());
    }
    out.push(threshold);
    if let Some(limit) = plan.limit {
        out.push("LIMIT".to_string());
        out.push(limit.to_string());
    }
    out
}

fn render_bound(bound: &Bound, view: &View) -> String {
    match bound {
        Bound::Min => "-".to_string(),
        Bound::Max => "+".to_string(),
        Bound::Live {
            pick,
            exclusive,
            incomplete,
        } => {
            let id = view.live(*pick);
            let id = if *incomplete {
                id.ms.to_string()
            } else {
                id.to_string()
            };
            if *exclusive { format!("({id}") } else { id }
        }
        Bound::Past => view.last_id.ms.saturating_add(1).to_string(),
    }
}

/// The id after `id` (or `id` itself at the very end).
fn next_after(id: StreamId) -> StreamId {
    id.next().unwrap_or(id)
}

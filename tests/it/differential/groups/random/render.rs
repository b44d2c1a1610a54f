//! Turning group plans into commands against the engine's current state, steering around the
//! documented differences of older servers.

use echomq_engine::{Keyspace, StreamId};

use crate::differential::known_differences::{lacks_entries_read_cap, redis_before_7_2};
use crate::support::peer::PeerInfo;

use super::{Age, At, CONSUMERS, Extended, GROUPS, HOUR_MS, Idle, KEYS, Op, Pick, TWO_HOURS_MS};

/// What a plan needs to know about a stream, read from the engine before the command runs.
#[derive(Debug, Default)]
struct View {
    live: Vec<StreamId>,
    last_id: StreamId,
    /// The stream's entries-added (0 for a missing key).
    entries_added: u64,
    /// Per group (by index in [`GROUPS`]): its pending ids with their owners, if it exists.
    groups: Vec<Option<Vec<(StreamId, String)>>>,
}

impl View {
    fn of(engine: &Keyspace, key: usize) -> View {
        engine.run(|db, _| match db.stream(KEYS[key].as_bytes()) {
            Ok(Some(s)) => View {
                live: s
                    .range(StreamId::MIN, StreamId::MAX)
                    .map(|e| e.id)
                    .collect(),
                last_id: s.last_id(),
                entries_added: s.entries_added(),
                groups: GROUPS
                    .iter()
                    .map(|g| {
                        s.group(g.as_bytes()).map(|group| {
                            group
                                .pending()
                                .map(|(id, nack)| {
                                    let owner = String::from_utf8_lossy(nack.owner_bytes());
                                    (*id, owner.into_owned())
                                })
                                .collect()
                        })
                    })
                    .collect(),
            },
            _ => View {
                groups: vec![None; GROUPS.len()],
                ..View::default()
            },
        })
    }

    fn has_group(&self, group: usize) -> bool {
        self.groups[group].is_some()
    }

    /// The planned group if it exists, else another that does (a plan's group is a preference:
    /// missing groups would make most commands NOGROUP errors); the planned one if none does.
    fn resolve(&self, group: usize) -> usize {
        if self.has_group(group) {
            return group;
        }
        (0..GROUPS.len())
            .find(|&g| self.has_group(g))
            .unwrap_or(group)
    }

    fn pending(&self, group: usize) -> &[(StreamId, String)] {
        self.groups[group].as_deref().unwrap_or(&[])
    }

    /// `consumer` if it has pending entries in `group` (or nobody has), else one that has.
    fn owner_if_idle(&self, group: usize, consumer: usize) -> usize {
        let pel = self.pending(group);
        let owns = |c: usize| pel.iter().any(|(_, owner)| owner == CONSUMERS[c]);
        if owns(consumer) {
            return consumer;
        }
        (0..CONSUMERS.len()).find(|&c| owns(c)).unwrap_or(consumer)
    }

    /// A live id chosen by `pick`, or the last id when there is none.
    fn live(&self, pick: u16) -> StreamId {
        match self.live.len() {
            0 => self.last_id,
            n => self.live[usize::from(pick) % n],
        }
    }

    fn pick(&self, group: usize, pick: Pick) -> StreamId {
        match pick {
            Pick::Pending(i) => match self.pending(group) {
                [] => self.live(i),
                pel => pel[usize::from(i) % pel.len()].0,
            },
            Pick::Live(i) => self.live(i),
            Pick::Absent => self.last_id.next().unwrap_or(self.last_id),
        }
    }

    fn at(&self, at: At) -> String {
        match at {
            At::Zero => "0".into(),
            At::Dollar => "$".into(),
            At::Live(i) => self.live(i).to_string(),
            At::Past => StreamId::new(self.last_id.ms.saturating_add(5), 0).to_string(),
        }
    }

    fn bound(&self, group: usize, bound: Option<(u16, bool)>, default: &str) -> String {
        match bound {
            None => default.into(),
            Some((i, exclusive)) => {
                let id = self.pick(group, Pick::Pending(i));
                if exclusive {
                    format!("({id}")
                } else {
                    id.to_string()
                }
            }
        }
    }
}

fn words(words: Vec<String>) -> Vec<Vec<u8>> {
    words.into_iter().map(String::into_bytes).collect()
}

fn threshold(idle: Idle) -> String {
    match idle {
        Idle::Zero => "0".into(),
        Idle::Hour => HOUR_MS.to_string(),
    }
}

/// Redis 7.0 creates the consumer of XREADGROUP, XCLAIM and XAUTOCLAIM only when something is
/// served or claimed (known_differences::READ_CREATES_CONSUMER, CLAIM_CREATES_CONSUMER): there
/// the consumer is created first, so both sides agree. Always, not only where the engine has the
/// group: over the wire a pipeline is rendered before earlier commands of it have run (a
/// missing group is the same NOGROUP error on both sides).
fn precreate(peer: &PeerInfo, key: usize, group: usize, consumer: usize) -> Option<Vec<Vec<u8>>> {
    redis_before_7_2(peer).then(|| {
        words(vec![
            "XGROUP".into(),
            "CREATECONSUMER".into(),
            KEYS[key].into(),
            GROUPS[group].into(),
            CONSUMERS[consumer].into(),
        ])
    })
}

/// An ENTRIESREAD value: on a peer without the 8.2.2 cap, never above the stream's
/// entries-added (`known_differences::ENTRIES_READ_CAP`).
fn capped(n: u64, view: &View, peer: &PeerInfo) -> u64 {
    if lacks_entries_read_cap(peer) {
        n.min(view.entries_added)
    } else {
        n
    }
}

/// The commands for one plan.
pub fn render(op: &Op, engine: &Keyspace, peer: &PeerInfo) -> Vec<Vec<Vec<u8>>> {
    let view = |key: usize| View::of(engine, key);
    let s = |x: &str| x.to_string();
    match op {
        Op::Add { key, gap, fields } => {
            let v = view(*key);
            let id = match gap {
                0 => v.last_id.next().unwrap_or(v.last_id),
                g => StreamId::new(v.last_id.ms.saturating_add(*g), 0),
            };
            let mut argv = vec![s("XADD"), s(KEYS[*key]), id.to_string()];
            for f in 0..*fields {
                argv.push(format!("f{f}"));
                argv.push(format!("{}", id.seq * 7 + u64::from(f)));
            }
            vec![words(argv)]
        }
        Op::Burst { key, count } => {
            let last = view(*key).last_id;
            (1..=u64::from(*count))
                .map(|i| {
                    let id = StreamId::new(last.ms.saturating_add(i), 0);
                    words(vec![
                        s("XADD"),
                        s(KEYS[*key]),
                        id.to_string(),
                        s("f"),
                        i.to_string(),
                    ])
                })
                .collect()
        }
        Op::Del { key, picks } => {
            let v = view(*key);
            let mut argv = vec![s("XDEL"), s(KEYS[*key])];
            argv.extend(picks.iter().map(|(g, p)| v.pick(*g, *p).to_string()));
            vec![words(argv)]
        }
        Op::Trim {
            key,
            minid,
            approx,
            keep,
        } => {
            let v = view(*key);
            let n = v.live.len();
            // Mostly a trim of the oldest few entries, so streams keep most of theirs.
            let drop = usize::from(*keep) % (n / 3 + 2);
            let mut argv = vec![s("XTRIM"), s(KEYS[*key])];
            if *minid {
                argv.push(s("MINID"));
                if *approx {
                    argv.push(s("~"));
                }
                argv.push(v.live.get(drop).map_or_else(|| s("0"), ToString::to_string));
            } else {
                argv.push(s("MAXLEN"));
                if *approx {
                    argv.push(s("~"));
                }
                argv.push(n.saturating_sub(drop).to_string());
            }
            vec![words(argv)]
        }
        Op::Create {
            key,
            group,
            at,
            mkstream,
            entries_read,
        } => {
            let v = view(*key);
            let mut argv = vec![
                s("XGROUP"),
                s("CREATE"),
                s(KEYS[*key]),
                s(GROUPS[*group]),
                v.at(*at),
            ];
            if *mkstream {
                argv.push(s("MKSTREAM"));
            }
            if let Some(n) = entries_read {
                argv.push(s("ENTRIESREAD"));
                argv.push(capped(u64::from(*n), &v, peer).to_string());
            }
            vec![words(argv)]
        }
        Op::SetId {
            key,
            group,
            at,
            entries_read,
        } => {
            let v = view(*key);
            let group = &v.resolve(*group);
            let mut argv = vec![
                s("XGROUP"),
                s("SETID"),
                s(KEYS[*key]),
                s(GROUPS[*group]),
                v.at(*at),
            ];
            if let Some(n) = entries_read {
                argv.push(s("ENTRIESREAD"));
                argv.push(capped(u64::from(*n), &v, peer).to_string());
            }
            vec![words(argv)]
        }
        Op::Destroy { key, group } => vec![words(vec![
            s("XGROUP"),
            s("DESTROY"),
            s(KEYS[*key]),
            s(GROUPS[view(*key).resolve(*group)]),
        ])],
        Op::CreateConsumer {
            key,
            group,
            consumer,
        } => vec![words(vec![
            s("XGROUP"),
            s("CREATECONSUMER"),
            s(KEYS[*key]),
            s(GROUPS[view(*key).resolve(*group)]),
            s(CONSUMERS[*consumer]),
        ])],
        Op::DelConsumer {
            key,
            group,
            consumer,
        } => vec![words(vec![
            s("XGROUP"),
            s("DELCONSUMER"),
            s(KEYS[*key]),
            s(GROUPS[view(*key).resolve(*group)]),
            s(CONSUMERS[*consumer]),
        ])],
        Op::ReadGroup {
            keys,
            group,
            consumer,
            count,
            noack,
            history,
        } => {
            let mut out = Vec::new();
            let first = view(keys[0]);
            let group = &first.resolve(*group);
            let consumer = &match history {
                Some(_) => first.owner_if_idle(*group, *consumer),
                None => *consumer,
            };
            let mut argv = vec![
                s("XREADGROUP"),
                s("GROUP"),
                s(GROUPS[*group]),
                s(CONSUMERS[*consumer]),
            ];
            if let Some(n) = count {
                argv.push(s("COUNT"));
                argv.push(n.to_string());
            }
            if *noack {
                argv.push(s("NOACK"));
            }
            argv.push(s("STREAMS"));
            let mut ids = Vec::new();
            for &key in keys {
                let v = view(key);
                out.extend(precreate(peer, key, *group, *consumer));
                argv.push(s(KEYS[key]));
                ids.push(match history {
                    None => s(">"),
                    Some(i) => {
                        let own: Vec<StreamId> = v
                            .pending(*group)
                            .iter()
                            .filter(|(_, owner)| owner == CONSUMERS[*consumer])
                            .map(|(id, _)| *id)
                            .collect();
                        match own.len() {
                            0 => s("0"),
                            n => match usize::from(*i) % (n + 1) {
                                0 => s("0"),
                                j => own[j - 1].to_string(),
                            },
                        }
                    }
                });
            }
            argv.extend(ids);
            out.push(words(argv));
            out
        }
        Op::Ack { key, group, picks } => {
            let v = view(*key);
            let group = &v.resolve(*group);
            let mut argv = vec![s("XACK"), s(KEYS[*key]), s(GROUPS[*group])];
            argv.extend(picks.iter().map(|p| v.pick(*group, *p).to_string()));
            vec![words(argv)]
        }
        Op::Claim {
            key,
            group,
            consumer,
            min_idle,
            picks,
            age,
            retry,
            force,
            justid,
            lastid,
        } => {
            let v = view(*key);
            let group = &v.resolve(*group);
            let mut out: Vec<_> = precreate(peer, *key, *group, *consumer)
                .into_iter()
                .collect();
            let mut argv = vec![
                s("XCLAIM"),
                s(KEYS[*key]),
                s(GROUPS[*group]),
                s(CONSUMERS[*consumer]),
                threshold(*min_idle),
            ];
            argv.extend(picks.iter().map(|p| v.pick(*group, *p).to_string()));
            match age {
                None => {}
                Some(Age::TwoHours) => argv.extend([s("IDLE"), TWO_HOURS_MS.to_string()]),
                Some(Age::Now) => argv.extend([s("IDLE"), s("0")]),
                Some(Age::Epoch) => argv.extend([s("TIME"), s("1000")]),
            }
            if let Some(n) = retry {
                argv.extend([s("RETRYCOUNT"), n.to_string()]);
            }
            if *force {
                argv.push(s("FORCE"));
            }
            if *justid {
                argv.push(s("JUSTID"));
            }
            if let Some(i) = lastid {
                argv.extend([s("LASTID"), v.live(*i).to_string()]);
            }
            out.push(words(argv));
            out
        }
        Op::AutoClaim {
            key,
            group,
            consumer,
            min_idle,
            start,
            count,
            justid,
        } => {
            let v = view(*key);
            let group = &v.resolve(*group);
            let mut out: Vec<_> = precreate(peer, *key, *group, *consumer)
                .into_iter()
                .collect();
            let mut argv = vec![
                s("XAUTOCLAIM"),
                s(KEYS[*key]),
                s(GROUPS[*group]),
                s(CONSUMERS[*consumer]),
                threshold(*min_idle),
                v.bound(*group, *start, "0"),
            ];
            if let Some(n) = count {
                argv.extend([s("COUNT"), n.to_string()]);
            }
            if *justid {
                argv.push(s("JUSTID"));
            }
            out.push(words(argv));
            out
        }
        Op::Pending {
            key,
            group,
            extended,
        } => {
            let v = view(*key);
            let group = &v.resolve(*group);
            let mut argv = vec![s("XPENDING"), s(KEYS[*key]), s(GROUPS[*group])];
            if let Some(Extended {
                idle,
                start,
                end,
                count,
                consumer,
            }) = extended
            {
                if let Some(idle) = idle {
                    argv.extend([s("IDLE"), threshold(*idle)]);
                }
                argv.push(v.bound(*group, *start, "-"));
                argv.push(v.bound(*group, *end, "+"));
                argv.push(count.to_string());
                if let Some(c) = consumer {
                    argv.push(s(CONSUMERS[*c]));
                }
            }
            vec![words(argv)]
        }
        Op::Info { key, group, what } => {
            let k = s(KEYS[*key]);
            // Redis 7.0 has no consumer active time (known_differences::CONSUMER_ACTIVE_TIME):
            // there XINFO GROUPS stands in for CONSUMERS and FULL.
            let what = if redis_before_7_2(peer) { 0 } else { *what };
            vec![words(match what {
                0 => vec![s("XINFO"), s("GROUPS"), k],
                1 => {
                    let group = view(*key).resolve(*group);
                    vec![s("XINFO"), s("CONSUMERS"), k, s(GROUPS[group])]
                }
                2 => vec![s("XINFO"), s("STREAM"), k, s("FULL")],
                _ => vec![s("XINFO"), s("STREAM"), k, s("FULL"), s("COUNT"), s("3")],
            })]
        }
        Op::Read { keys, count } => {
            let mut argv = vec![s("XREAD")];
            if let Some(n) = count {
                argv.extend([s("COUNT"), n.to_string()]);
            }
            argv.push(s("STREAMS"));
            let mut ids = Vec::new();
            for &(key, pick) in keys {
                argv.push(s(KEYS[key]));
                let v = view(key);
                ids.push(match pick {
                    None => s("$"),
                    Some(i) => match usize::from(i) % (v.live.len() + 1) {
                        0 => s("0"),
                        j => v.live[j - 1].to_string(),
                    },
                });
            }
            argv.extend(ids);
            vec![words(argv)]
        }
    }
}

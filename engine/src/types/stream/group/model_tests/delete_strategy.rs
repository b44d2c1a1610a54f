//! The model's deletion strategies on XADD's and XTRIM's trimming (`docs/reference/streams-8.md`
//! §1.2, §1.3), written from that description of Redis 8.6's walk.
//!
//! The generator puts the strategy token right after the key, the first option slot, where
//! Redis always reads it as the strategy: the model takes it out and lets the stream model
//! parse (and reject) the rest. KEEPREF is then the stream model's own trim. DELREF and ACKED
//! go entry by entry through each node that qualifies, `~` or not, within the LIMIT.

use super::model::{GroupModel, Res};
use super::stream_model::ModelValue;
use crate::id::StreamId;
use crate::reply::Reply;

/// DELREF or ACKED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefStrategy {
    DelRef,
    Acked,
}

/// The trim XADD or XTRIM asks for, read from arguments the stream model accepted.
#[derive(Debug, Clone, Copy)]
struct TrimAsked {
    maxlen: Option<u64>,
    minid: Option<StreamId>,
    approx: bool,
    limit: Option<u64>,
}

fn word(arg: &[u8], w: &str) -> bool {
    arg.eq_ignore_ascii_case(w.as_bytes())
}

fn number(arg: &[u8]) -> u64 {
    std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The trim options and where XADD's id is (`argv.len()` for XTRIM), Redis's loop over
/// arguments already known to be valid.
fn asked(argv: &[Vec<u8>], xadd: bool) -> (Option<TrimAsked>, usize) {
    let mut t = TrimAsked {
        maxlen: None,
        minid: None,
        approx: false,
        limit: None,
    };
    let mut strategy = false;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        let opt = &argv[i];
        if xadd && opt == b"*" {
            break;
        } else if (word(opt, "maxlen") || word(opt, "minid")) && more > 0 {
            t.approx = false;
            let next = &argv[i + 1];
            if more >= 2 && (next == b"~" || next == b"=") {
                t.approx = next == b"~";
                i += 1;
            }
            let threshold = &argv[i + 1];
            if word(opt, "maxlen") {
                t.maxlen = Some(number(threshold));
            } else {
                let text = String::from_utf8_lossy(threshold);
                let (ms, seq) = text.split_once('-').unwrap_or((&text, "0"));
                t.minid = Some(StreamId::new(
                    ms.parse().unwrap_or(0),
                    seq.parse().unwrap_or(0),
                ));
            }
            strategy = true;
            i += 2;
        } else if word(opt, "limit") && more > 0 {
            t.limit = Some(number(&argv[i + 1]));
            i += 2;
        } else if xadd && word(opt, "nomkstream") {
            i += 1;
        } else {
            break;
        }
    }
    (strategy.then_some(t), i)
}

impl GroupModel {
    /// XADD or XTRIM whose first option is a strategy token.
    pub(super) fn trim_command(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Option<Res> {
        let name = argv[0].to_ascii_lowercase();
        let xadd = name == b"xadd";
        let token = argv.get(2)?;
        let strategy = if word(token, "keepref") {
            None
        } else if word(token, "delref") {
            Some(RefStrategy::DelRef)
        } else if word(token, "acked") {
            Some(RefStrategy::Acked)
        } else {
            return None;
        };
        let mut stripped = argv.to_vec();
        stripped.remove(2);
        // Parse (and for KEEPREF, run) on the stream model; its errors are Redis's.
        let Some(strategy) = strategy else {
            return Some(
                self.streams
                    .execute(&stripped, now_ms)
                    .map_err(|e| e.to_string()),
            );
        };
        let mut probe = self.streams.clone();
        if let Err(e) = probe.execute(&stripped, now_ms) {
            return Some(Err(e.to_string()));
        }
        let (trim, id_at) = asked(&stripped, xadd);
        let key = argv[1].clone();
        let reply = if xadd {
            // The append alone (options dropped but NOMKSTREAM), then the trim.
            let mut plain = vec![stripped[0].clone(), key.clone()];
            if stripped[2..id_at].iter().any(|a| word(a, "nomkstream")) {
                plain.push(b"NOMKSTREAM".to_vec());
            }
            plain.extend_from_slice(&stripped[id_at..]);
            match self.streams.execute(&plain, now_ms) {
                Ok(Reply::Null) => return Some(Ok(Reply::Null)),
                Ok(reply) => reply,
                Err(e) => return Some(Err(e.to_string())),
            }
        } else {
            Reply::Int(0)
        };
        let Some(trim) = trim else {
            return Some(Ok(reply));
        };
        let removed = self.trim_by_ref(&key, trim, strategy);
        Some(Ok(if xadd {
            reply
        } else {
            Reply::Int(removed as i64)
        }))
    }

    /// The walk for DELREF and ACKED: nodes from the head; a node whose live count would pass
    /// the limit is not entered; inside a node, entries until the target; a referenced entry
    /// is kept (ACKED) or first removed from every PEL (DELREF). A node that qualified whole
    /// goes when all its live entries went; the walk goes on only past a node that qualified.
    fn trim_by_ref(&mut self, key: &[u8], trim: TrimAsked, strategy: RefStrategy) -> u64 {
        let limit = match (trim.approx, trim.limit) {
            (false, _) => 0,
            (true, Some(n)) => n,
            (true, None) => match 100 * self.streams.node_entries_max {
                0 => 10_000,
                n => n.min(1_000_000),
            },
        };
        let Some(ModelValue::Stream(mut stream)) = self.streams.values.get(key).cloned() else {
            return 0;
        };
        let mut removed = 0u64;
        let mut n = 0;
        while n < stream.nodes.len() {
            if trim.maxlen.is_some_and(|m| stream.length <= m) {
                break;
            }
            let live = stream.nodes[n].iter().filter(|e| !e.deleted).count() as u64;
            if limit != 0 && removed + live > limit {
                break;
            }
            let eligible = match (trim.maxlen, trim.minid) {
                (Some(m), _) => stream.length - live >= m,
                (None, Some(min)) => stream.nodes[n].last().is_some_and(|e| e.id < min),
                (None, None) => false,
            };
            let mut from_node = 0;
            for e in 0..stream.nodes[n].len() {
                let id = stream.nodes[n][e].id;
                let stop = match (trim.maxlen, trim.minid) {
                    (Some(m), _) => stream.length <= m,
                    (None, Some(min)) => id >= min,
                    (None, None) => true,
                };
                if stop {
                    break;
                }
                if stream.nodes[n][e].deleted {
                    continue;
                }
                match strategy {
                    RefStrategy::Acked if self.is_referenced(key, id) => continue,
                    RefStrategy::Acked => {}
                    RefStrategy::DelRef => {
                        if let Some(groups) = self.groups.get_mut(key) {
                            for g in groups.values_mut() {
                                g.unpend(id);
                            }
                        }
                    }
                }
                stream.nodes[n][e].deleted = true;
                stream.length -= 1;
                from_node += 1;
            }
            removed += from_node;
            if eligible && from_node == live {
                stream.nodes.remove(n);
                continue;
            }
            if eligible {
                n += 1;
                continue;
            }
            break;
        }
        if removed > 0 {
            let first = stream.live().next().map_or(StreamId::MIN, |e| e.id);
            stream.first_id = first;
        }
        self.streams
            .values
            .insert(key.to_vec(), ModelValue::Stream(stream));
        removed
    }

    /// Whether a group references `id` (§1.1): it has not read it, or holds it pending.
    pub(super) fn is_referenced(&self, key: &[u8], id: StreamId) -> bool {
        let min = self.groups_of(key).map(|(_, g)| g.last_id).min();
        min.is_some_and(|min| id > min || self.groups_of(key).any(|(_, g)| g.pel.contains_key(&id)))
    }
}

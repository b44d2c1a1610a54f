//! The fuzz target's model of XREAD's `MAXCOUNT` and `MAXSIZE` (`docs/reference/streams-8.md`
//! §6): a capped read must be exactly the uncapped read (same COUNT) cut by the rules, written
//! here from the reference rather than from `read_caps.rs`: streams in order, each with
//! `min(COUNT, left)`; the stream's header counted before its first entry, its entry array's
//! header when it is done; stop before a stream or an entry once an entry has been emitted
//! and the bytes reached MAXSIZE. Sizes come from [`encoded_len`], which the protocol crate
//! holds to the encoder.

use crate::batch::Batch;
use crate::keyspace::Execution;
use crate::reply::Reply;
use crate::reply_size::{Protocol, encoded_len};

/// One capped read the fuzzer draws.
#[derive(Debug, Clone)]
pub(crate) struct CappedRead {
    pub keys: Vec<&'static str>,
    pub count: usize,
    pub max_count: Option<usize>,
    pub max_size: Option<usize>,
    pub protocol: Protocol,
}

impl CappedRead {
    fn argv(&self, capped: bool) -> Vec<String> {
        let mut argv = vec!["XREAD".to_string()];
        if self.count > 0 {
            argv.extend(["COUNT".to_string(), self.count.to_string()]);
        }
        if capped {
            if let Some(n) = self.max_count {
                argv.extend(["MAXCOUNT".to_string(), n.to_string()]);
            }
            if let Some(n) = self.max_size {
                argv.extend(["MAXSIZE".to_string(), n.to_string()]);
            }
        }
        argv.push("STREAMS".into());
        argv.extend(self.keys.iter().map(|k| k.to_string()));
        argv.extend(self.keys.iter().map(|_| "0".to_string()));
        argv
    }

    /// Runs the read uncapped and capped; panics when the capped reply is not the model's.
    /// Returns a line for the fuzz log.
    pub(crate) fn check(&self, batch: &mut Batch<'_>) -> String {
        let run = |batch: &mut Batch<'_>, argv: &[String]| match batch.execute_blocking_as(
            0,
            self.protocol,
            argv,
            std::sync::Arc::new(NoWake),
        ) {
            Execution::Done(reply) => reply,
            Execution::Blocked(_) => unreachable!("no BLOCK given"),
        };
        let full = run(batch, &self.argv(false));
        let capped = run(batch, &self.argv(true));
        let (Ok(full), Ok(capped)) = (full, capped) else {
            // A max count below COUNT, or a key of another type: both fail or neither reads.
            return format!("{self:?} -> error");
        };
        let expected = self.model(&full);
        assert_eq!(
            shape(&capped),
            shape(&expected),
            "capped read {self:?}\nuncapped: {full:?}"
        );
        format!("{self:?} -> {} entries", total(&expected))
    }

    fn model(&self, full: &Reply) -> Reply {
        let Reply::StreamMap(pairs) = full else {
            return full.clone();
        };
        let resp2 = self.protocol == Protocol::Resp2;
        let (mut emitted, mut bytes) = (0usize, 0usize);
        let over =
            |emitted: usize, bytes: usize| self.max_size.is_some_and(|m| emitted > 0 && bytes >= m);
        let mut out = Vec::new();
        for (key, entries) in pairs {
            let left = self.max_count.map_or(usize::MAX, |m| m - emitted.min(m));
            if left == 0 || over(emitted, bytes) {
                break;
            }
            bytes += encoded_len(key, self.protocol) + if resp2 { 4 } else { 0 };
            let mut taken = Vec::new();
            for entry in entry_list(entries).into_iter().take(left) {
                if over(emitted, bytes) {
                    break;
                }
                bytes += encoded_len(&entry, self.protocol);
                emitted += 1;
                taken.push(entry);
            }
            // The entry array's `*<n>\r\n`, known once the stream is done.
            bytes += 3 + taken.len().to_string().len();
            out.push((key.clone(), Reply::Array(taken)));
        }
        if out.is_empty() {
            Reply::NullArray
        } else {
            Reply::StreamMap(out)
        }
    }
}

struct NoWake;

impl crate::blocking::Wake for NoWake {
    fn wake(&self) {}
}

fn entry_list(entries: &Reply) -> Vec<Reply> {
    match entries {
        Reply::Entries(e) => e.to_replies(),
        Reply::Bulks(b) => b.to_replies(),
        Reply::Array(items) => items.clone(),
        _ => Vec::new(),
    }
}

/// A reply with entry lists as plain arrays, for comparing.
fn shape(reply: &Reply) -> Reply {
    match reply {
        Reply::StreamMap(pairs) => Reply::StreamMap(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), Reply::Array(entry_list(v))))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn total(reply: &Reply) -> usize {
    match reply {
        Reply::StreamMap(pairs) => pairs.iter().map(|(_, v)| entry_list(v).len()).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Keyspace;
    use crate::clock::ManualClock;
    use std::sync::Arc;

    #[test]
    fn the_model_agrees_with_the_engine_on_every_small_case() {
        let ks = Arc::new(Keyspace::new(Arc::new(ManualClock::new(1))));
        for (key, n) in [("s", 4), ("t", 3), ("k", 1)] {
            for i in 1..=n {
                ks.execute(&["XADD", key, &format!("{i}-0"), "f", "v"])
                    .unwrap();
            }
        }
        let mut entries_seen = 0;
        for protocol in [Protocol::Resp2, Protocol::Resp3] {
            for count in 0..4 {
                for max_count in [None, Some(1), Some(2), Some(5)] {
                    for max_size in [None, Some(1), Some(40), Some(60), Some(100)] {
                        let read = CappedRead {
                            keys: vec!["s", "t", "k"],
                            count,
                            max_count,
                            max_size,
                            protocol,
                        };
                        let line = read.check(&mut ks.batch());
                        entries_seen += usize::from(!line.ends_with("error"));
                    }
                }
            }
        }
        assert!(entries_seen > 100);
    }
}

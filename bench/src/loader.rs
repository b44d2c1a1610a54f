//! Loading bench streams: entries `from..to` of a [`Timeline`], pipelined over RESP or added
//! straight to the engine in process, with a progress bar for big loads.

use std::time::{Duration, Instant};

use echomq::engine::{AddId, StreamId};
use indicatif::{ProgressBar, ProgressStyle};

use super::cleanup;
use super::error::BenchError;
use super::target::{Argv, Target};
use super::timeline::Timeline;

/// XADDs per pipeline: large enough to hide the round trip, small enough that a signal is
/// seen quickly and the server's reply buffer stays small.
const PIPELINE_ENTRIES: u64 = 1000;
/// Entries added per lock of the embedded keyspace.
const EMBEDDED_BATCH: u64 = 10_000;
/// Loads smaller than this draw no progress bar (top-ups between trims, small sizes).
const PROGRESS_ENTRIES_MIN: u64 = 200_000;

/// What every entry carries besides its `id` field.
#[derive(Debug, Clone)]
pub struct Payload {
    /// `f1`, `f2`, ...
    names: Vec<Vec<u8>>,
    /// Bytes per value.
    value_bytes: usize,
}

impl Payload {
    /// `fields` fields of `value_bytes` bytes each.
    pub fn new(fields: u32, value_bytes: u32) -> Payload {
        Payload {
            names: (1..=fields).map(|n| format!("f{n}").into_bytes()).collect(),
            value_bytes: value_bytes as usize,
        }
    }

    /// The field/value items of entry `i` (values vary with `i`, as real payloads do).
    pub fn items(&self, timeline: &Timeline, i: u64) -> Vec<Vec<u8>> {
        let mut items = Vec::with_capacity(2 + 2 * self.names.len());
        items.push(echomq::feed::ID_FIELD.as_bytes().to_vec());
        items.push(timeline.branded(i));
        for (n, name) in self.names.iter().enumerate() {
            items.push(name.clone());
            items.push(
                (0..self.value_bytes)
                    .map(|k| b'a' + ((i as usize + n + k) % 26) as u8)
                    .collect(),
            );
        }
        items
    }

    /// `XADD key [MAXLEN ~ n] <id> id <branded> f1 v1 ...` for entry `i`.
    pub fn xadd(&self, key: &str, timeline: &Timeline, i: u64, maxlen: Option<u64>) -> Argv {
        let mut argv: Argv = vec![b"XADD".to_vec(), key.as_bytes().to_vec()];
        if let Some(n) = maxlen {
            argv.extend([
                b"MAXLEN".to_vec(),
                b"~".to_vec(),
                n.to_string().into_bytes(),
            ]);
        }
        argv.push(timeline.id(i).to_string().into_bytes());
        argv.extend(self.items(timeline, i));
        argv
    }
}

fn progress(label: &str, entries: u64) -> ProgressBar {
    if entries < PROGRESS_ENTRIES_MIN {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(entries);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:>40} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("loading {label}"));
    bar
}

/// Appends entries `from..to` to `key`; returns the time taken.
pub fn load(
    target: &mut Target,
    key: &str,
    payload: &Payload,
    timeline: &Timeline,
    from: u64,
    to: u64,
) -> Result<Duration, BenchError> {
    let bar = progress(&target.label(), to - from);
    let started = Instant::now();
    let mut next = from;
    while next < to {
        cleanup::check()?;
        if let Some(keyspace) = target.keyspace() {
            let end = (next + EMBEDDED_BATCH).min(to);
            // Through the engine's write path, as an XADD: the load has every effect a
            // client's appends have.
            let added = keyspace.run(|db, snapshot| {
                for i in next..end {
                    let items = payload.items(timeline, i);
                    db.xadd(
                        key.as_bytes(),
                        AddId::Explicit(timeline.id(i)),
                        &items,
                        snapshot,
                    )?;
                }
                Ok::<StreamId, echomq::engine::Error>(timeline.id(end - 1))
            });
            added.map_err(|e| BenchError::Server {
                target: target.label(),
                message: e.to_string(),
            })?;
            next = end;
        } else {
            let end = (next + PIPELINE_ENTRIES).min(to);
            let commands: Vec<Argv> = (next..end)
                .map(|i| payload.xadd(key, timeline, i, None))
                .collect();
            target.pipeline(&commands)?;
            next = end;
        }
        bar.set_position(next - from);
    }
    bar.finish_and_clear();
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_carry_the_branded_id_then_the_fields() {
        let t = Timeline {
            base_ms: 1_796_000_000_000,
            rate: 10,
        };
        let p = Payload::new(2, 5);
        let items = p.items(&t, 7);
        assert_eq!(items.len(), 6);
        assert_eq!(items[0], b"id");
        assert_eq!(items[1], t.branded(7));
        assert_eq!(items[2], b"f1");
        assert_eq!(items[3].len(), 5);
        let argv = p.xadd("k", &t, 7, Some(100));
        assert_eq!(
            argv[2..5],
            [b"MAXLEN".to_vec(), b"~".to_vec(), b"100".to_vec()]
        );
        assert_eq!(argv[5], t.id(7).to_string().into_bytes());
    }
}

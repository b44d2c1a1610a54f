//! Loading bench streams: entries `from..to` of a [`Timeline`], pipelined over RESP or added
//! straight to the engine in process, with a progress bar for every load expected to take
//! longer than [`PROGRESS_EXPECTED_MIN`].

use std::time::{Duration, Instant};

use echomq::engine::{AddId, StreamId};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::cleanup;
use super::error::BenchError;
use super::target::{Argv, Target};
use super::timeline::Timeline;

/// XADDs per pipeline: large enough to hide the round trip, small enough that a signal is
/// seen quickly and the server's reply buffer stays small.
const PIPELINE_ENTRIES: u64 = 1000;
/// Entries added per lock of the embedded keyspace.
const EMBEDDED_BATCH: u64 = 10_000;
/// A load expected to take longer than this draws a progress bar; a shorter one (top-ups
/// between trims, small sizes) would only flash one. The expectation is the rate of the load's
/// first batch, as the rate depends on the target, the payload and the machine.
pub const PROGRESS_EXPECTED_MIN: Duration = Duration::from_secs(1);

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

/// A hidden bar for a load of `entries` to `label`, shown by [`show_if_long`].
fn progress(label: &str, entries: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(entries), ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:>40} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("loading {label}"));
    bar
}

/// Whether a load of `total` entries that added `done` in `elapsed` is expected to take longer
/// than [`PROGRESS_EXPECTED_MIN`] in all.
fn expected_long(done: u64, total: u64, elapsed: Duration) -> bool {
    done > 0
        && elapsed.as_secs_f64() * total as f64 / done as f64 > PROGRESS_EXPECTED_MIN.as_secs_f64()
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
    let mut bar_shown = false;
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
        if !bar_shown && expected_long(next - from, to - from, started.elapsed()) {
            // Drawn on stderr when it is a terminal (indicatif hides it otherwise).
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar_shown = true;
        }
    }
    bar.finish_and_clear();
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_shows_when_the_first_batch_says_the_load_takes_over_a_second() {
        let ms = Duration::from_millis;
        // 1000 of 200k in 10 ms: 2 s expected.
        assert!(expected_long(1000, 200_000, ms(10)));
        // 1000 of 50k in 10 ms: half a second.
        assert!(!expected_long(1000, 50_000, ms(10)));
        // A small load on a slow target still takes long.
        assert!(expected_long(1000, 20_000, ms(100)));
        assert!(!expected_long(0, 20_000, ms(100)));
    }

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

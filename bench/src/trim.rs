//! Trims: `XTRIM MAXLEN ~`, `MAXLEN =` and `MINID ~` asking to remove 1%, 10% and 50% of the
//! stream, timed one call at a time with the targets taking turns.
//!
//! Before each trim the stream is back at its full size: the entries a trim removed from the
//! head are appended again at the tail (untimed), which is cheaper than reloading and is the
//! steady state a retention policy sees. Nodes freed come from XINFO STREAM's
//! `radix-tree-keys` before and after, which Redis reports too.

use std::time::Instant;

use super::cleanup;
use super::error::BenchError;
use super::results::TrimRow;
use super::stage::Stage;
use super::target::Argv;

/// The trims, as labelled in tables.
pub const STRATEGIES: [&str; 3] = ["MAXLEN ~", "MAXLEN =", "MINID ~"];
/// Shares of the stream each trim asks to remove.
pub const FRACTIONS: [f64; 3] = [0.01, 0.10, 0.50];

/// One timed trim.
#[derive(Debug, Clone, Copy)]
struct Sample {
    time_us: f64,
    removed: u64,
    left: u64,
    nodes_freed: u64,
}

/// The XTRIM for `strategy` removing `remove` of target `t`'s entries.
fn xtrim(stage: &Stage<'_>, t: usize, strategy: &str, remove: u64) -> Argv {
    let mut argv: Argv = vec![b"XTRIM".to_vec(), stage.key(t, 0).into_bytes()];
    let (kind, approx) = match strategy {
        "MAXLEN =" => ("MAXLEN", false),
        "MINID ~" => ("MINID", true),
        _ => ("MAXLEN", true),
    };
    argv.push(kind.as_bytes().to_vec());
    argv.push(if approx { b"~".to_vec() } else { b"=".to_vec() });
    if kind == "MAXLEN" {
        argv.push((stage.len(t, 0) - remove).to_string().into_bytes());
    } else {
        let first_kept = stage.lo[t][0] + remove;
        argv.push(stage.timeline.id(first_kept).to_string().into_bytes());
    }
    if approx {
        argv.push(b"LIMIT".to_vec());
        argv.push(stage.args.trim_limit.to_string().into_bytes());
    }
    argv
}

fn trim_once(
    stage: &mut Stage<'_>,
    t: usize,
    strategy: &str,
    remove: u64,
) -> Result<Sample, BenchError> {
    let key = stage.key(t, 0);
    let argv = xtrim(stage, t, strategy, remove);
    let (before, nodes_before) = stage.targets[t].stream_info(&key)?;
    let started = Instant::now();
    let removed = stage.targets[t].int(&argv)?;
    let time_us = started.elapsed().as_secs_f64() * 1e6;
    let (left, nodes_after) = stage.targets[t].stream_info(&key)?;
    let removed = u64::try_from(removed).unwrap_or(0);
    if before.checked_sub(removed) != Some(left) {
        return Err(BenchError::Server {
            target: stage.targets[t].label(),
            message: format!(
                "XTRIM said {removed} removed, but the length went {before} -> {left}"
            ),
        });
    }
    stage.lo[t][0] += removed;
    Ok(Sample {
        time_us,
        removed,
        left,
        nodes_freed: nodes_before.saturating_sub(nodes_after),
    })
}

/// Measures every strategy and fraction.
pub fn measure(stage: &mut Stage<'_>, rows: &mut Vec<TrimRow>) -> Result<(), BenchError> {
    let n = stage.targets.len();
    for strategy in STRATEGIES {
        for fraction in FRACTIONS {
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); n];
            let mut requested = vec![0u64; n];
            for _ in 0..stage.args.trim_repeats {
                for t in 0..n {
                    cleanup::check()?;
                    // Back to full size first.
                    let missing = stage.entries.saturating_sub(stage.len(t, 0));
                    if missing > 0 {
                        stage.grow(t, 0, missing)?;
                    }
                    let len = stage.len(t, 0);
                    let remove = ((len as f64 * fraction).round() as u64).clamp(1, len);
                    requested[t] = remove;
                    samples[t].push(trim_once(stage, t, strategy, remove)?);
                }
            }
            for (t, s) in samples.iter_mut().enumerate() {
                s.sort_by(|a, b| a.time_us.total_cmp(&b.time_us));
                let Some(&median) = s.get(s.len() / 2) else {
                    continue;
                };
                let wanted_left = stage.entries - requested[t];
                rows.push(TrimRow {
                    target: stage.targets[t].label(),
                    entries: stage.entries,
                    strategy: strategy.to_string(),
                    fraction,
                    requested: requested[t],
                    removed: median.removed,
                    left: median.left,
                    under_trim: median.left.saturating_sub(wanted_left),
                    nodes_freed: median.nodes_freed,
                    time_us: median.time_us,
                    ns_per_entry: (median.removed > 0)
                        .then(|| median.time_us * 1e3 / median.removed as f64),
                });
            }
        }
    }
    // Leave the stream at full size for the stages after this one.
    for t in 0..n {
        let missing = stage.entries.saturating_sub(stage.len(t, 0));
        if missing > 0 {
            stage.grow(t, 0, missing)?;
        }
    }
    Ok(())
}

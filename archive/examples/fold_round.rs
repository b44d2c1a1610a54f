//! The server's deferred-trim round in isolation, for instruction counts: each round appends
//! `BATCH` entries shaped like the `xadd_maxlen` load (`f1 v1 f2 v2`) to a stream kept at
//! 1,000 entries, copies out what the trim removes, folds it without an fsync, syncs, and
//! trims (what `ServerArchive::commit` does per round).
//!
//! ```text
//! cargo build --release -p echomq-archive --example fold_round
//! valgrind --tool=callgrind --toggle-collect='*fold_round::round*' \
//!     target/release/examples/fold_round [ROUNDS] [BATCH]
//! ```
//! Instructions per record = the collected total / (ROUNDS x BATCH).

use std::hint::black_box;

use echomq_archive::engine::{AddId, DeleteStrategy, NodeLimits, Stream, StreamId};
use echomq_archive::{Archive, FoldBatch};

/// Live entries kept after each round's trim (the load's `MAXLEN ~ 1000`).
const KEPT: u64 = 1_000;
const KEY: &[u8] = b"capped";

/// One round: the copy, the fold, the fsync and the trim.
#[inline(never)]
fn round(archive: &Archive, live: &mut Stream, up_to: StreamId, limits: NodeLimits) {
    let batch = FoldBatch::of(live.range(StreamId::MIN, up_to));
    black_box(archive.fold_for_deferred_trim(KEY, &batch).ok());
    black_box(archive.sync().ok());
    black_box(
        archive
            .trim_folded(KEY, live, up_to, DeleteStrategy::KeepRef, limits)
            .ok(),
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let batch: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(120);
    let dir = std::env::temp_dir().join(format!("fold-round-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("archive.redb");
    let archive = match Archive::open(&path) {
        Ok(archive) => archive,
        Err(e) => {
            eprintln!("cannot open {}: {e}", path.display());
            return;
        }
    };
    let limits = NodeLimits::default();
    let mut live = Stream::new();
    let mut next = 1u64;
    let mut add = |live: &mut Stream, n: u64| {
        for _ in 0..n {
            let id = StreamId::new(1_796_000_000_000 + next / 1000, next % 1000);
            next += 1;
            let _ = live.add(
                AddId::Explicit(id),
                &[b"f1", b"v1", b"f2", b"v2"],
                0,
                limits,
            );
        }
    };
    add(&mut live, KEPT);
    for _ in 0..rounds {
        add(&mut live, batch);
        let Some(up_to) = live
            .range(StreamId::MIN, StreamId::MAX)
            .nth(batch as usize - 1)
        else {
            break;
        };
        let up_to = up_to.id;
        round(&archive, &mut live, up_to, limits);
    }
    let records = archive.stats().map(|s| s.records).unwrap_or(0);
    println!("{rounds} rounds of {batch}: {records} records folded");
    drop(archive);
    let _ = std::fs::remove_dir_all(&dir);
}

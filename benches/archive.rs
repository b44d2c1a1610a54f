//! Archive benchmarks: durable fold throughput, merge-read throughput from
//! the archive side, and a 100-entry merge-read that straddles the watermark W.
//!
//! The files live under Cargo's target tmp dir (on the same disk as the build, so fsync is
//! real; /tmp may be a RAM disk). Targets: fold >= 300,000 records/s for 1,000-entry folds
//! with durable commits; >= 1M records/s read from the archive; straddling read < 200 µs.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use echomq::archive::{Archive, ArchiveError, RangeQuery};
use echomq::engine::{AddId, Entry, NodeLimits, Stream, StreamId};

/// Entries per fold: the group-commit size the fold target is stated for.
const FOLD_ENTRIES: u64 = 1_000;
/// Records preloaded for the read benchmarks.
const PRELOADED: u64 = 100_000;
/// Live entries above W for the straddling read.
const LIVE: u64 = 1_000;

/// A small feed entry, the shape `Feed::append` writes (about 60 bytes of fields).
fn entry(n: u64) -> Entry {
    Entry {
        id: StreamId::new(1_796_000_000_000 + n / 1000, n % 1000),
        fields: vec![
            ("id".into(), "EVT_01JD2P8Z9Q7RS".into()),
            ("kind".into(), "guess".into()),
            ("player".into(), "alex".into()),
        ],
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("archive-bench");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn fold(c: &mut Criterion) {
    let path = scratch("fold.redb");
    let Ok(archive) = Archive::open(&path) else {
        return;
    };
    let mut group = c.benchmark_group("archive");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(20)
        .throughput(Throughput::Elements(FOLD_ENTRIES));
    let mut next = 0u64;
    // The batch is built outside the measurement: a trim hands the fold entries it already
    // holds, so only the fold (encode, insert, durable commit) is timed.
    group.bench_function("fold_1000_durable", |b| {
        b.iter_batched(
            || {
                let batch: Vec<Entry> = (next..next + FOLD_ENTRIES).map(entry).collect();
                next += FOLD_ENTRIES;
                batch
            },
            |batch| black_box(archive.fold(b"emq:{cm}:stream:events", &batch).ok()),
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
    drop(archive);
    let _ = std::fs::remove_file(&path);
}

/// An archive holding `PRELOADED` records of one stream, and a live stream above W.
fn preloaded() -> Option<(Archive, Stream)> {
    let archive = Archive::open(scratch("read.redb")).ok()?;
    let all: Vec<Entry> = (0..PRELOADED).map(entry).collect();
    for chunk in all.chunks(10_000) {
        archive.fold(b"s", chunk).ok()?;
    }
    let mut live = Stream::new();
    let limits = NodeLimits::default();
    for n in PRELOADED..PRELOADED + LIVE {
        let e = entry(n);
        let fields: Vec<&[u8]> = e
            .fields
            .iter()
            .flat_map(|(f, v)| [f.as_ref(), v.as_ref()])
            .collect();
        live.add(AddId::Explicit(e.id), &fields, 0, limits).ok()?;
    }
    Some((archive, live))
}

fn merged(archive: &Archive, live: &Stream, q: RangeQuery) -> Vec<Entry> {
    archive
        .read_merged::<Entry, ArchiveError>(
            b"s",
            q,
            |a: StreamId, b: StreamId, n: Option<usize>, reverse: bool| {
                let n = n.unwrap_or(usize::MAX);
                Ok(if reverse {
                    live.rev_range(a, b).take(n).map(|e| e.to_entry()).collect()
                } else {
                    live.range(a, b).take(n).map(|e| e.to_entry()).collect()
                })
            },
            |e| e,
        )
        .unwrap_or_default()
}

fn read(c: &mut Criterion) {
    let Some((archive, live)) = preloaded() else {
        return;
    };
    let w = entry(PRELOADED - 1).id;
    let mut group = c.benchmark_group("archive");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(10_000));
    let mut start = 0u64;
    group.bench_function("merge_read_archive_side_10000", |b| {
        b.iter(|| {
            start = (start + 7_919) % (PRELOADED - 10_000);
            let q = RangeQuery::forward(entry(start).id, w, Some(10_000));
            let got = merged(&archive, &live, q);
            assert_eq!(got.len(), 10_000);
            black_box(got)
        })
    });
    group.throughput(Throughput::Elements(100));
    group.bench_function("merge_read_straddling_w_100", |b| {
        let q = RangeQuery::forward(entry(PRELOADED - 50).id, StreamId::MAX, Some(100));
        b.iter(|| {
            let got = merged(&archive, &live, q);
            assert_eq!(got.len(), 100);
            black_box(got)
        })
    });
    group.bench_function("merge_read_straddling_w_100_reverse", |b| {
        let q = RangeQuery::reverse(StreamId::MIN, entry(PRELOADED + 49).id, Some(100));
        b.iter(|| {
            let got = merged(&archive, &live, q);
            assert_eq!(got.len(), 100);
            black_box(got)
        })
    });
    group.finish();
}

criterion_group!(benches, fold, read);
criterion_main!(benches);

//! Replays of the `replica_decode` fuzz target under plain `cargo test`: the committed corpus
//! (`fuzz/corpus/replica_decode`), seeds built by the real encoders, every single-byte
//! corruption and truncation of those seeds, and pseudo-random inputs.

use echomq_engine::StreamId;
use echomq_testkit::corruptions;

use sha2::{Digest, Sha256};

use super::replica::{COMMIT, COMMIT_BODY, DECODERS, READER, SEGMENT, STATE, replica_decode, run};
use crate::replica::commit::{Commit, SegmentRef};
use crate::replica::segment;
use crate::replica::{
    CommitHash, Epoch, FoldRef, LocalState, Page, PageRange, ReplicaHead, Version, WriterId,
};

const TARGET: &str = "replica_decode";

fn fold(stream: &[u8], stream_no: u64, pages: (u64, u64), ids: (u64, u64)) -> FoldRef {
    FoldRef {
        stream: stream.to_vec(),
        stream_no,
        pages: PageRange {
            first: pages.0,
            last: pages.1,
        },
        first_id: StreamId::new(ids.0, 0),
        watermark: StreamId::new(ids.1, 7),
    }
}

fn segment_ref(key: &str, first: u64, last: u64) -> SegmentRef {
    SegmentRef {
        key: key.into(),
        pages: PageRange { first, last },
        page_count: (last - first + 1) as u32,
        len: 4096,
        sha256: [0xAB; 32],
    }
}

/// Commit objects of three shapes: an epoch bump, one fold and segment, two of each.
fn commit_seeds() -> Vec<Vec<u8>> {
    let bump = Commit {
        version: Version(7),
        prev_hash: CommitHash([3; 32]),
        epoch: Epoch(2),
        writer: WriterId([1; 16]),
        pages: None,
        folds: Vec::new(),
        segments: Vec::new(),
    };
    let one = Commit {
        version: Version(1),
        prev_hash: CommitHash::GENESIS,
        epoch: Epoch(1),
        writer: WriterId([2; 16]),
        pages: PageRange::new(1 << 62, (1 << 62) + 3),
        folds: vec![fold(b"orders", 0, (1 << 62, (1 << 62) + 3), (1, 9))],
        segments: vec![segment_ref("p/segments/a", 1 << 62, (1 << 62) + 3)],
    };
    let two = Commit {
        version: Version(2),
        prev_hash: CommitHash([9; 32]),
        epoch: Epoch(1),
        writer: WriterId([2; 16]),
        pages: PageRange::new(10, 20),
        folds: vec![
            fold(b"", 1, (10, 14), (5, 5)),
            fold(&[0, 255, 13, 10], 2, (15, 20), (6, 8)),
        ],
        segments: vec![segment_ref("s/1", 10, 12), segment_ref("s/2", 13, 20)],
    };
    [bump, one, two]
        .into_iter()
        .map(|c| c.encode().bytes)
        .collect()
}

/// Segments (with the reference the encoder made) of three shapes: one page, pages with gaps
/// and an empty page, binary page bytes.
fn segment_seeds() -> Vec<(SegmentRef, Vec<u8>)> {
    let page = |number: u64, bytes: &[u8]| Page {
        number,
        bytes: bytes.to_vec(),
    };
    let shapes = [
        vec![page(1 << 62, b"one record")],
        vec![page(5, b"a"), page(6, b""), page(9, b"last")],
        vec![
            page(u64::MAX - 1, &[0, 255, 0xEE]),
            page(u64::MAX, &[1; 40]),
        ],
    ];
    shapes
        .iter()
        .map(|pages| segment::encode("p", pages).unwrap())
        .collect()
}

/// Local states: fresh, everything set (with a real commit pending), a restored one.
fn state_seeds() -> Vec<Vec<u8>> {
    let fresh = LocalState {
        writer: WriterId([4; 16]),
        epoch: Some(Epoch(1)),
        head: None,
        pending: None,
        fenced: None,
    };
    let busy = LocalState {
        epoch: Some(Epoch(3)),
        head: Some(ReplicaHead {
            version: Version(4),
            hash: CommitHash([5; 32]),
            epoch: Epoch(2),
            last_page: Some(99),
        }),
        pending: commit_seeds().pop(),
        fenced: Some(Version(5)),
        ..fresh.clone()
    };
    let restored = LocalState {
        epoch: None,
        head: Some(ReplicaHead {
            version: Version(1),
            hash: CommitHash([6; 32]),
            epoch: Epoch(1),
            last_page: None,
        }),
        ..fresh.clone()
    };
    [fresh, busy, restored]
        .iter()
        .map(LocalState::encode)
        .collect()
}

fn with_selector(selector: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![selector];
    out.extend_from_slice(payload);
    out
}

fn segment_input(reference: &SegmentRef, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![SEGMENT];
    out.extend_from_slice(&reference.pages.first.to_be_bytes());
    out.extend_from_slice(&reference.pages.last.to_be_bytes());
    out.extend_from_slice(&reference.page_count.to_be_bytes());
    out.extend_from_slice(bytes);
    out
}

/// Every seed as a fuzz input.
fn seeds() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = commit_seeds()
        .iter()
        .map(|c| with_selector(COMMIT, c))
        .collect();
    out.extend(
        commit_seeds()
            .iter()
            .map(|c| with_selector(COMMIT_BODY, &c[..c.len() - 32])),
    );
    out.extend(segment_seeds().iter().map(|(r, b)| segment_input(r, b)));
    out.extend(state_seeds().iter().map(|s| with_selector(STATE, s)));
    // A reader script: eight ops of every kind over a dozen bytes.
    out.push(with_selector(
        READER,
        &[
            8,
            0,
            1,
            2,
            3,
            4,
            5 | 16,
            6,
            7,
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            9,
            10,
            11,
            12,
        ],
    ));
    out
}

#[test]
fn the_committed_corpus_runs_clean() {
    echomq_testkit::replay_corpus(TARGET, replica_decode);
}

#[test]
fn the_seeds_decode() {
    for seed in seeds() {
        assert!(run(&seed), "seed {seed:?} was refused by the fuzz target");
    }
    for bytes in commit_seeds() {
        assert_eq!(Commit::decode(&bytes).unwrap().bytes, bytes);
    }
    for (reference, bytes) in segment_seeds() {
        let pages = segment::decode(&reference, &bytes).unwrap();
        assert_eq!(pages.len(), reference.page_count as usize);
    }
    for bytes in state_seeds() {
        assert_eq!(LocalState::decode(&bytes).unwrap().encode(), bytes);
    }
}

/// Whatever a damaged seed does, the target's properties hold (it may decode: a changed page
/// byte in a segment input gets a matching reference).
#[test]
fn every_one_byte_corruption_and_truncation_of_the_seeds_runs_clean() {
    let mut runs = 0;
    for seed in seeds() {
        replica_decode(&seed);
        for bad in corruptions(&seed) {
            replica_decode(&bad);
            runs += 1;
        }
    }
    assert!(runs > 1000, "only {runs} corruptions ran");
}

/// The checks restore relies on: any damage to a commit is refused (the hash), and any damage
/// to a segment is refused against the reference its commit holds (length and checksum).
#[test]
fn damaged_commits_and_segments_are_refused() {
    for bytes in commit_seeds() {
        for bad in corruptions(&bytes) {
            assert!(Commit::decode(&bad).is_err(), "damaged commit decoded");
        }
    }
    for (reference, bytes) in segment_seeds() {
        for bad in corruptions(&bytes) {
            assert!(
                segment::decode(&reference, &bad).is_err(),
                "damaged segment"
            );
        }
    }
    for bytes in state_seeds() {
        for cut in 0..bytes.len() {
            assert!(LocalState::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}

/// Inputs the parser must refuse even when the reference's checksum matches the bytes.
#[test]
fn lying_segment_headers_are_refused_cleanly() {
    let (reference, bytes) = segment_seeds().swap_remove(1);
    let mut wrong_count = reference.clone();
    wrong_count.page_count += 1;
    assert!(segment::decode(&wrong_count, &bytes).is_err());
    let mut narrow = reference.clone();
    narrow.pages.last -= 1;
    assert!(segment::decode(&narrow, &bytes).is_err());
    // A page count of u32::MAX with nothing behind it must not allocate or panic.
    let mut huge = bytes[..5].to_vec();
    huge.extend_from_slice(&u32::MAX.to_be_bytes());
    let huge_ref = SegmentRef {
        page_count: u32::MAX,
        len: huge.len() as u64,
        sha256: Sha256::digest(&huge).into(),
        ..reference.clone()
    };
    let err = segment::decode(&huge_ref, &huge).unwrap_err();
    assert!(err.contains("truncated"), "{err}");
    replica_decode(&segment_input(&huge_ref, &huge));
}

#[test]
fn pseudo_random_inputs_run_clean() {
    for (i, mut data) in (0u32..).zip(echomq_testkit::inputs(4000, 300)) {
        // Give each decoder its share, and a real magic half of the time, so the random bytes
        // reach past the first check.
        if let Some(first) = data.first_mut() {
            *first = (i % u32::from(DECODERS)) as u8;
        }
        let magic: &[u8] = match i % 10 {
            0 | 1 => b"EMQC\x01",
            3 => b"EMQR\x01",
            _ => b"",
        };
        if data.len() > magic.len() {
            data[1..=magic.len()].copy_from_slice(magic);
        }
        replica_decode(&data);
    }
}

/// Writes the seeds into the corpus folder (run by hand with `--ignored` after a format
/// change; the files are committed).
#[test]
#[ignore = "writes fuzz/corpus/replica_decode; run by hand after a format change"]
fn write_seed_corpus() {
    let seeds = seeds().into_iter().enumerate();
    echomq_testkit::write_corpus(TARGET, seeds.map(|(i, seed)| (format!("seed-{i}"), seed)));
}

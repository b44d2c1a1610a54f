//! Fuzzing support for the decoders that read bytes from disk or from the bucket.
//!
//! - [`record_decode`] (below): the archive record decoder.
//! - [`replica_decode`] (in `fuzzing/replica.rs`): the replica's commit, segment, local state
//!   and bounds-checked reader decoders.
//!
//! [`record_decode`] is the whole fuzz target: `fuzz/fuzz_targets/record_decode.rs` calls it
//! under libFuzzer, and this module's tests replay the committed corpus
//! (`fuzz/corpus/record_decode`), pseudo-random inputs, and every single-byte corruption of
//! valid records through it under plain `cargo test`.
//!
//! Input: 8 bytes of page number (little-endian; fewer bytes mean page 0), then the record.
//! Properties: decoding never panics; a record that decodes re-encodes to the same bytes at
//! the same page (the encoding is canonical, so a checksum match means the bytes are the ones
//! written); [`record::peek`] agrees with the decoded stream and id.

use bytes::Bytes;

use crate::format::PageNo;
use crate::format::record;

mod replica;
#[cfg(test)]
mod replica_tests;

pub use replica::replica_decode;

/// Runs one input; panics only if a property fails.
pub fn record_decode(data: &[u8]) {
    let (page, body) = match data.split_first_chunk::<8>() {
        Some((page, body)) => (u64::from_le_bytes(*page), body),
        None => (0, data),
    };
    let Ok(decoded) = record::decode(PageNo(page), Bytes::copy_from_slice(body)) else {
        return;
    };
    let mut again = Vec::new();
    record::encode(
        &mut again,
        PageNo(page),
        decoded.stream_no,
        decoded.entry.id,
        decoded
            .entry
            .fields
            .iter()
            .map(|(f, v)| (f.as_ref(), v.as_ref())),
    );
    assert_eq!(again, body, "a decoded record re-encodes to other bytes");
    assert_eq!(
        record::peek(body),
        Ok((decoded.stream_no, decoded.entry.id)),
        "peek disagrees with decode"
    );
}

#[cfg(test)]
mod tests {
    use echomq_engine::StreamId;

    use super::*;

    const TARGET: &str = "record_decode";

    /// Valid inputs: a page number and a record written for it.
    fn seeds() -> Vec<Vec<u8>> {
        let shapes: [&[(&[u8], &[u8])]; 3] = [
            &[],
            &[(b"id", b"EVT_01JD2P8Z9Q7RS"), (b"kind", b"guess")],
            &[(b"", b""), (b"f", &[0, 255, 13, 10])],
        ];
        shapes
            .iter()
            .enumerate()
            .map(|(i, pairs)| {
                let page = crate::ARCHIVE_BASE + i as u64;
                let mut out = page.to_le_bytes().to_vec();
                let mut record = Vec::new();
                record::encode(
                    &mut record,
                    PageNo(page),
                    i as u64,
                    StreamId::new(1_796_000_000_000, i as u64),
                    pairs.iter().copied(),
                );
                out.extend(record);
                out
            })
            .collect()
    }

    #[test]
    fn the_committed_corpus_runs_clean() {
        echomq_testkit::replay_corpus(TARGET, record_decode);
    }

    #[test]
    fn seeds_decode_and_every_one_byte_corruption_is_refused_cleanly() {
        for seed in seeds() {
            record_decode(&seed);
            let body = &seed[8..];
            let page = PageNo(u64::from_le_bytes(seed[..8].try_into().unwrap()));
            assert!(record::decode(page, Bytes::copy_from_slice(body)).is_ok());
            for bad in echomq_testkit::flips(&seed) {
                record_decode(&bad);
                let (p, b) = bad.split_at(8);
                let p = PageNo(u64::from_le_bytes(p.try_into().unwrap()));
                assert!(
                    record::decode(p, Bytes::copy_from_slice(b)).is_err(),
                    "{bad:?} decoded"
                );
            }
            for cut in echomq_testkit::truncations(&seed) {
                record_decode(&cut);
            }
        }
    }

    #[test]
    fn pseudo_random_inputs_run_clean() {
        for data in echomq_testkit::inputs(3000, 200) {
            record_decode(&data);
        }
    }

    /// Writes the seeds into the corpus folder (run by hand with `--ignored` after a format
    /// change; the files are committed).
    #[test]
    #[ignore = "writes fuzz/corpus/record_decode; run by hand after a format change"]
    fn write_seed_corpus() {
        let seeds = seeds()
            .into_iter()
            .enumerate()
            .map(|(i, seed)| (format!("seed-{i}"), seed));
        echomq_testkit::write_corpus(TARGET, seeds.chain([("short".to_string(), vec![1, 2, 3])]));
    }
}

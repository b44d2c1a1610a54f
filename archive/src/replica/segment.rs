//! Segment objects, `{prefix}/segments/{first:016x}-{last:016x}-{rand}`: the pages of one
//! commit (or a slice of them), immutable once written. The random part makes every upload
//! a new key, so a plain PUT never overwrites anything a commit already names. Layout
//! (big-endian, format 1):
//!
//! ```text
//! "EMQS" | format u8 = 1 | count u32 | { page u64 | len u32 | bytes }*count
//! ```
//!
//! The segment's SHA-256 and length live in the commit that names it, so a segment needs no
//! checksum of its own. Pages are strictly increasing and inside the segment's range.

use sha2::{Digest, Sha256};

use super::codec::Reader;
use super::commit::SegmentRef;
use super::types::{Page, PageRange, hex, unique_digest};

/// First bytes of every segment.
pub const SEGMENT_MAGIC: &[u8; 4] = b"EMQS";
/// The encoding written today.
pub const SEGMENT_FORMAT: u8 = 1;
/// Segment size the replicator aims for: large enough that per-request latency does not
/// dominate (about 10 ms per PUT to a remote store), small enough that a failed upload is
/// cheap to repeat and a restore holds one segment in memory at a time.
pub const SEGMENT_BYTES_TARGET: usize = 8 << 20;
/// A page larger than this in a segment is corrupt (archive records stay under a redb page).
pub const PAGE_BYTES_MAX: usize = 16 << 20;

/// The object key of a new segment for `pages` under `prefix`.
pub fn segment_key(prefix: &str, pages: PageRange) -> String {
    let rand = hex(&unique_digest(b"segment")[..16]);
    let name = format!("segments/{:016x}-{:016x}-{rand}", pages.first, pages.last);
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

/// Encodes `pages` (strictly increasing, non-empty) as a segment under `prefix` and returns
/// its reference and bytes.
pub fn encode(prefix: &str, pages: &[Page]) -> Option<(SegmentRef, Vec<u8>)> {
    let first = pages.first()?.number;
    let last = pages.last()?.number;
    let range = PageRange::new(first, last)?;
    let size = pages.iter().map(|p| 12 + p.bytes.len()).sum::<usize>() + 9;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(SEGMENT_MAGIC);
    out.push(SEGMENT_FORMAT);
    out.extend_from_slice(&(pages.len() as u32).to_be_bytes());
    for page in pages {
        out.extend_from_slice(&page.number.to_be_bytes());
        out.extend_from_slice(&(page.bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(&page.bytes);
    }
    let reference = SegmentRef {
        key: segment_key(prefix, range),
        pages: range,
        page_count: pages.len() as u32,
        len: out.len() as u64,
        sha256: Sha256::digest(&out).into(),
    };
    Some((reference, out))
}

/// Checks `bytes` against its reference (length, checksum) and decodes its pages.
pub fn decode(reference: &SegmentRef, bytes: &[u8]) -> Result<Vec<Page>, String> {
    if bytes.len() as u64 != reference.len {
        return Err(format!(
            "{} bytes, the commit says {}",
            bytes.len(),
            reference.len
        ));
    }
    let sha: [u8; 32] = Sha256::digest(bytes).into();
    if sha != reference.sha256 {
        return Err("checksum does not match the commit's".into());
    }
    let mut r = Reader::new(bytes);
    if r.take(4, "magic")? != SEGMENT_MAGIC {
        return Err("wrong magic: not an echomq segment".into());
    }
    let format = r.u8("format")?;
    if format != SEGMENT_FORMAT {
        return Err(format!(
            "format {format}, this build reads {SEGMENT_FORMAT}"
        ));
    }
    let count = r.u32("page count")?;
    if count != reference.page_count {
        return Err(format!(
            "{count} pages, the commit says {}",
            reference.page_count
        ));
    }
    let mut pages: Vec<Page> = Vec::with_capacity((count as usize).min(r.remaining() / 12));
    for _ in 0..count {
        let number = r.u64("page number")?;
        let len = r.u32("page length")? as usize;
        if len > PAGE_BYTES_MAX {
            return Err(format!("page {number:016x} of {len} bytes"));
        }
        if !reference.pages.contains(number) {
            return Err(format!(
                "page {number:016x} outside the segment's range {}",
                reference.pages
            ));
        }
        if pages.last().is_some_and(|p| p.number >= number) {
            return Err(format!("page {number:016x} out of order"));
        }
        let at = r.position();
        let bytes = r
            .take(len, "page bytes")
            .map_err(|e| format!("{e} (page at offset {at})"))?
            .to_vec();
        pages.push(Page { number, bytes });
    }
    r.end("the last page")?;
    if pages.first().map(|p| p.number) != Some(reference.pages.first)
        || pages.last().map(|p| p.number) != Some(reference.pages.last)
    {
        return Err(format!(
            "pages do not start and end at the segment's range {}",
            reference.pages
        ));
    }
    Ok(pages)
}

/// Splits `pages` into runs of about [`SEGMENT_BYTES_TARGET`] bytes (at least one page each).
pub fn split(pages: &[Page], target_bytes: usize) -> Vec<&[Page]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0usize;
    for (i, page) in pages.iter().enumerate() {
        if i > start && size + page.bytes.len() + 12 > target_bytes {
            out.push(&pages[start..i]);
            start = i;
            size = 0;
        }
        size += page.bytes.len() + 12;
    }
    if start < pages.len() {
        out.push(&pages[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pages(numbers: &[u64]) -> Vec<Page> {
        numbers
            .iter()
            .map(|&n| Page {
                number: n,
                bytes: n.to_string().into_bytes(),
            })
            .collect()
    }

    #[test]
    fn round_trip_and_damage_is_detected() {
        let input = pages(&[5, 6, 9]);
        let (reference, bytes) = encode("pre", &input).unwrap();
        assert!(
            reference
                .key
                .starts_with("pre/segments/0000000000000005-0000000000000009-")
        );
        assert_eq!(decode(&reference, &bytes).unwrap(), input);
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 1;
            assert!(decode(&reference, &bad).is_err());
        }
        assert!(decode(&reference, &bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn a_lying_reference_is_caught_even_with_a_matching_checksum() {
        let input = pages(&[5, 6]);
        let (mut reference, bytes) = encode("", &input).unwrap();
        reference.pages = PageRange { first: 6, last: 6 };
        assert!(decode(&reference, &bytes).is_err());
    }

    #[test]
    fn keys_are_unique() {
        let r = PageRange { first: 1, last: 2 };
        assert_ne!(segment_key("p", r), segment_key("p", r));
    }

    proptest! {
        #[test]
        fn split_keeps_every_page_once_in_order(sizes in proptest::collection::vec(0usize..300, 0..50), target in 1usize..1000) {
            let input: Vec<Page> = sizes.iter().enumerate().map(|(i, &s)| Page { number: i as u64, bytes: vec![0; s] }).collect();
            let parts = split(&input, target);
            let joined: Vec<Page> = parts.iter().flat_map(|p| p.iter().cloned()).collect();
            prop_assert_eq!(&joined, &input);
            for part in parts {
                prop_assert!(!part.is_empty());
                let size: usize = part.iter().map(|p| p.bytes.len() + 12).sum();
                prop_assert!(part.len() == 1 || size <= target);
            }
        }
    }
}

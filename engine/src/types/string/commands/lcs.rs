//! `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]`: the longest common
//! subsequence of two strings (a missing key is the empty string).
//!
//! Checked in Redis's order: both keys are read first (WRONGTYPE is `ERR The specified keys
//! must contain string values`), then the options left to right (`ERR syntax error`; a
//! MINMATCHLEN that is no integer `ERR value is not an integer or out of range`, a negative
//! one read as 0), then LEN with IDX (`ERR If you want both the length and indexes, please
//! just use IDX.`), then the table's size (`ERR Insufficient memory, transient memory for LCS
//! exceeds proto-max-bulk-len` past [`STRING_BYTES_MAX`] bytes of 4-byte cells).
//!
//! Replies: the subsequence; with LEN its length; with IDX a map of `matches` (each a pair of
//! ranges `[start, end]` in key1 and key2, from the end of the strings backwards, only those
//! at least MINMATCHLEN long, with WITHMATCHLEN their length) and `len`.
//!
//! Effects: a read lookup of each key.

use bytes::Bytes;

use super::range::STRING_BYTES_MAX;
use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::Value;

/// LCS.
#[derive(Debug)]
pub struct Lcs;

impl Lcs {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        db.count_read(argv[2], false);
        let read = |v: Option<&Value>| match v {
            None => Some(Bytes::new()),
            Some(Value::String(s)) => Some(s.to_bytes()),
            Some(_) => None,
        };
        let (Some(a), Some(b)) = (read(db.get(argv[1])), read(db.get(argv[2]))) else {
            return Err(Error::LcsNotStrings);
        };
        let (mut len_only, mut idx, mut with_len, mut min_len) = (false, false, false, 0u64);
        let mut i = 3;
        while i < argv.len() {
            let opt = argv[i];
            if is(opt, "idx") {
                idx = true;
            } else if is(opt, "len") {
                len_only = true;
            } else if is(opt, "withmatchlen") {
                with_len = true;
            } else if is(opt, "minmatchlen") && i + 1 < argv.len() {
                min_len = u64::try_from(parse_i64(argv[i + 1])?).unwrap_or(0);
                i += 1;
            } else {
                return Err(Error::Syntax);
            }
            i += 1;
        }
        if len_only && idx {
            return Err(Error::LcsLenWithIdx);
        }
        let cells = (a.len() as u64 + 1).saturating_mul(b.len() as u64 + 1);
        if cells.saturating_mul(4) > STRING_BYTES_MAX {
            return Err(Error::LcsTooLarge);
        }
        let table = Table::build(&a, &b);
        let total = table.at(a.len(), b.len());
        if len_only {
            return Ok(Reply::Int(i64::from(total)));
        }
        let (sequence, matches) = table.walk(&a, &b, min_len, with_len);
        if !idx {
            return Ok(Reply::Bulk(Bytes::from(sequence)));
        }
        Ok(Reply::Map(vec![
            (Reply::bulk_static("matches"), Reply::Array(matches)),
            (Reply::bulk_static("len"), Reply::Int(i64::from(total))),
        ]))
    }
}

/// The dynamic-programming table: cell `(i, j)` is the LCS length of `a[..i]` and `b[..j]`.
struct Table {
    cells: Vec<u32>,
    width: usize,
}

impl Table {
    fn build(a: &[u8], b: &[u8]) -> Table {
        let width = b.len() + 1;
        let mut cells = vec![0u32; (a.len() + 1) * width];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * width + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        Table { cells, width }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }

    /// Walks back from the end: the subsequence, and the matched ranges as Redis emits them
    /// (a range closes when the walk leaves it or reaches the start of either string).
    fn walk(&self, a: &[u8], b: &[u8], min_len: u64, with_len: bool) -> (Vec<u8>, Vec<Reply>) {
        let mut sequence = Vec::with_capacity(self.at(a.len(), b.len()) as usize);
        let mut matches = Vec::new();
        // The open range: start and end in `a`, start and end in `b`.
        let mut open: Option<(usize, usize, usize, usize)> = None;
        let (mut i, mut j) = (a.len(), b.len());
        while i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                sequence.push(a[i - 1]);
                match &mut open {
                    None => open = Some((i - 1, i - 1, j - 1, j - 1)),
                    Some((a_start, _, b_start, _)) if *a_start == i && *b_start == j => {
                        *a_start -= 1;
                        *b_start -= 1;
                    }
                    Some(_) => emit = true,
                }
                if let Some((a_start, _, b_start, _)) = open
                    && (a_start == 0 || b_start == 0)
                {
                    emit = true;
                }
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                emit = open.is_some();
            }
            if emit && let Some((a_start, a_end, b_start, b_end)) = open.take() {
                let len = (a_end - a_start + 1) as u64;
                if min_len == 0 || len >= min_len {
                    let pair = |s: usize, e: usize| {
                        Reply::Array(vec![Reply::Int(s as i64), Reply::Int(e as i64)])
                    };
                    let mut item = vec![pair(a_start, a_end), pair(b_start, b_end)];
                    if with_len {
                        item.push(Reply::Int(len as i64));
                    }
                    matches.push(Reply::Array(item));
                }
            }
        }
        sequence.reverse();
        (sequence, matches)
    }
}

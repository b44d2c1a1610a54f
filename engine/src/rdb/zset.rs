//! Sorted sets in RDB form, as Redis 8.8's `rdbSaveObject` writes them and `rdbLoadObject`
//! reads them.
//!
//! ```text
//! ZSET_LISTPACK (17)  string(listpack of member, score, ...), ascending; scores as Redis's
//!                     d2string text (an integer element when the text is one)
//! ZSET_2 (5)          len (member score:f64le)*, from the highest entry to the lowest
//! ZSET (3)            len (member score:text)*, a text score a length byte then its text
//!                     (253 nan, 254 inf, 255 -inf): read only
//! ```
//!
//! Loading rebuilds the encoding Redis gives the value after a load (a ZSET_2 that fits a
//! listpack becomes one; a listpack past `zset-max-listpack-entries` a skiplist). A payload
//! whose counts or elements do not add up, that repeats a member, holds a NaN score, or holds
//! nothing, is an error.

use std::collections::HashSet;

use bytes::Bytes;

use crate::config::Thresholds;
use crate::error::RdbError;
use crate::types::zset::{ZSet, score};

use super::codec::{Reader, Writer};
use super::listpack::{Builder, Cursor, Element};

/// RDB type bytes of sorted sets.
pub mod types {
    /// Text scores.
    pub const ZSET: u8 = 3;
    /// Binary scores.
    pub const ZSET_2: u8 = 5;
    /// A listpack.
    pub const ZSET_LISTPACK: u8 = 17;
}

/// The type byte a sorted set is written with.
pub fn zset_type(z: &ZSet) -> u8 {
    if z.is_listpack() {
        types::ZSET_LISTPACK
    } else {
        types::ZSET_2
    }
}

/// Writes a sorted set's body.
pub fn write_zset(z: &ZSet, w: &mut Writer) {
    if z.is_listpack() {
        let mut lp = Builder::new();
        for e in z.order().iter() {
            lp.string(e.member);
            lp.string(score::format(e.score).as_bytes());
        }
        w.string(&lp.finish());
    } else {
        w.len(z.len() as u64);
        for e in z.order().iter().rev() {
            w.string(e.member);
            w.raw(&e.score.to_le_bytes());
        }
    }
}

/// Reads a sorted set's body of type `t`.
pub fn read_zset(r: &mut Reader<'_>, t: u8, lim: &Thresholds) -> Result<ZSet, RdbError> {
    let mut entries: Vec<(Bytes, f64)> = Vec::new();
    match t {
        types::ZSET_LISTPACK => {
            let lp = r.string()?;
            let mut cursor = Cursor::new(&lp).map_err(|e| r.corrupt(e.to_string()))?;
            let mut elements = Vec::new();
            while let Some(e) = cursor.element().map_err(|e| r.corrupt(e.to_string()))? {
                elements.push(match e {
                    Element::Int(n) => Bytes::from(n.to_string()),
                    Element::Str(s) => Bytes::copy_from_slice(s),
                });
            }
            cursor.finish().map_err(|e| r.corrupt(e.to_string()))?;
            if elements.len() % 2 != 0 {
                return Err(r.corrupt("zset listpack with an odd element count"));
            }
            for pair in elements.chunks_exact(2) {
                let s = std::str::from_utf8(&pair[1])
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .filter(|s| !s.is_nan())
                    .ok_or_else(|| r.corrupt("zset listpack score is no number"))?;
                entries.push((pair[0].clone(), s));
            }
        }
        _ => {
            let n = r.length()?;
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= r.remaining())
                .ok_or_else(|| r.corrupt("zset count past the payload"))?;
            for _ in 0..n {
                let member = Bytes::from(r.string()?);
                let s = if t == types::ZSET_2 {
                    f64::from_le_bytes(r.array::<8>()?)
                } else {
                    match r.byte()? {
                        253 => f64::NAN,
                        254 => f64::INFINITY,
                        255 => f64::NEG_INFINITY,
                        len => {
                            let text = r.take(usize::from(len))?;
                            std::str::from_utf8(text)
                                .ok()
                                .and_then(|t| t.parse::<f64>().ok())
                                .unwrap_or(f64::NAN)
                        }
                    }
                };
                if s.is_nan() {
                    return Err(r.corrupt("zset score is NaN"));
                }
                entries.push((member, s));
            }
        }
    }
    if entries.is_empty() {
        return Err(r.corrupt("empty zset"));
    }
    let mut seen = HashSet::with_capacity(entries.len());
    if entries.iter().any(|e| !seen.insert(e.0.clone())) {
        return Err(r.corrupt("zset with a repeated member"));
    }
    let widest = if t == types::ZSET_LISTPACK {
        0
    } else {
        entries.iter().map(|e| e.0.len()).max().unwrap_or(0)
    };
    let mut z = ZSet::create(entries.len(), widest, lim);
    for (m, s) in entries {
        z.insert_unchecked(s, m);
    }
    Ok(z)
}

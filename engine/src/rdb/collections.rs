//! Hashes and sets in RDB form, byte for byte as Redis 8.8's `rdbSaveObject` writes them and
//! `rdbLoadObject` reads them.
//!
//! ```text
//! HASH (4)              len (field value)*                 a table without field TTLs
//! HASH_METADATA (24)    min_expire:ms len (ttl field value)*   a table with field TTLs;
//!                       ttl 0 = none, else expire - min_expire + 1
//! HASH_LISTPACK (16)    string(listpack of field, value, ...)
//! HASH_LISTPACK_EX (25) min_expire:ms string(listpack of field, value, expire|0, ...)
//! SET (2)               len member*
//! SET_INTSET (11)       string(intset: encoding:u32le len:u32le int*), ints ascending,
//!                       each `encoding` (2, 4 or 8) bytes little-endian
//! SET_LISTPACK (20)     string(listpack of members)
//! ```
//!
//! Loading rebuilds the value in the encoding Redis would give it after the load (a listpack
//! past the listpack limits becomes a table). A payload whose counts, lengths or elements do
//! not add up, that repeats a field or member, or that holds nothing, is an error.

use std::collections::HashSet;

use bytes::Bytes;

use crate::config::Thresholds;
use crate::error::RdbError;
use crate::types::hash::{EXPIRE_TIME_MAX_MS, Hash};
use crate::types::set::{Set, as_int};

use super::codec::{Reader, Writer};
use super::listpack::{Builder, Cursor, Element};

/// RDB type bytes of the two types.
pub mod types {
    /// A set as a length and members.
    pub const SET: u8 = 2;
    /// A hash as a length and pairs.
    pub const HASH: u8 = 4;
    /// An intset blob.
    pub const SET_INTSET: u8 = 11;
    /// A hash listpack.
    pub const HASH_LISTPACK: u8 = 16;
    /// A set listpack.
    pub const SET_LISTPACK: u8 = 20;
    /// A table hash with field TTLs.
    pub const HASH_METADATA: u8 = 24;
    /// A listpackex hash.
    pub const HASH_LISTPACK_EX: u8 = 25;

    /// Whether `t` is a hash or set type this module reads.
    pub fn is_hash_or_set(t: u8) -> bool {
        matches!(
            t,
            SET | HASH
                | SET_INTSET
                | HASH_LISTPACK
                | SET_LISTPACK
                | HASH_METADATA
                | HASH_LISTPACK_EX
        )
    }
}

/// The type byte a hash is written with.
pub fn hash_type(hash: &Hash) -> u8 {
    match hash.encoding() {
        "listpack" => types::HASH_LISTPACK,
        "listpackex" => types::HASH_LISTPACK_EX,
        _ if hash.has_ttls() => types::HASH_METADATA,
        _ => types::HASH,
    }
}

/// The type byte a set is written with.
pub fn set_type(set: &Set) -> u8 {
    match set.encoding() {
        "intset" => types::SET_INTSET,
        "listpack" => types::SET_LISTPACK,
        _ => types::SET,
    }
}

/// Writes a hash's body.
pub fn write_hash(hash: &Hash, w: &mut Writer) {
    let min = hash.min_expiry();
    match hash_type(hash) {
        types::HASH_LISTPACK | types::HASH_LISTPACK_EX => {
            let ex = hash.is_listpack_ex();
            if ex {
                w.millis(min.unwrap_or(0) as i64);
            }
            let mut lp = Builder::new();
            for (f, v, at) in hash.entries() {
                lp.string(f);
                lp.string(v);
                if ex {
                    lp.int(at.unwrap_or(0) as i64);
                }
            }
            w.string(&lp.finish());
        }
        t => {
            let min = min.filter(|_| t == types::HASH_METADATA);
            if let Some(min) = min {
                w.millis(min as i64);
            }
            w.len(hash.len() as u64);
            for (f, v, at) in hash.entries() {
                if let Some(min) = min {
                    w.len(at.map_or(0, |at| at - min + 1));
                }
                w.string(f);
                w.string(v);
            }
        }
    }
}

/// Writes a set's body.
pub fn write_set(set: &Set, w: &mut Writer) {
    match set_type(set) {
        types::SET_INTSET => w.string(set.intset_blob().unwrap_or_default()),
        types::SET_LISTPACK => {
            let mut lp = Builder::new();
            for m in set.members() {
                lp.string(&m);
            }
            w.string(&lp.finish());
        }
        _ => {
            let members = set.members();
            w.len(members.len() as u64);
            for m in members {
                w.string(&m);
            }
        }
    }
}

/// A count read from the payload, bounded by what is left (each element takes a byte at
/// least), so a hostile count cannot reserve memory.
fn bounded_count(r: &mut Reader<'_>, per_item: usize) -> Result<usize, RdbError> {
    let n = r.length()?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n.saturating_mul(per_item) <= r.remaining())
        .ok_or_else(|| r.corrupt("collection length past the payload"))
}

/// Every element of a listpack, as bytes.
fn listpack_elements(r: &Reader<'_>, lp: &[u8]) -> Result<Vec<Bytes>, RdbError> {
    let mut cursor = Cursor::new(lp).map_err(|e| r.corrupt(e.to_string()))?;
    let mut out = Vec::new();
    while let Some(e) = cursor.element().map_err(|e| r.corrupt(e.to_string()))? {
        out.push(match e {
            Element::Int(n) => Bytes::from(n.to_string()),
            Element::Str(s) => Bytes::copy_from_slice(s),
        });
    }
    cursor.finish().map_err(|e| r.corrupt(e.to_string()))?;
    Ok(out)
}

/// Checks that no field repeats and the hash is not empty.
fn check_fields(r: &Reader<'_>, fields: &[(Bytes, Bytes, Option<u64>)]) -> Result<(), RdbError> {
    if fields.is_empty() {
        return Err(r.corrupt("empty hash"));
    }
    let mut seen = HashSet::with_capacity(fields.len());
    if fields.iter().any(|f| !seen.insert(&f.0)) {
        return Err(r.corrupt("hash with a repeated field"));
    }
    Ok(())
}

/// Reads a hash's body of type `t`.
pub fn read_hash(r: &mut Reader<'_>, t: u8, lim: &Thresholds) -> Result<Hash, RdbError> {
    let mut fields = Vec::new();
    let ex = t == types::HASH_LISTPACK_EX;
    match t {
        types::HASH_LISTPACK | types::HASH_LISTPACK_EX => {
            if ex {
                r.millis()?;
            }
            let lp = r.string()?;
            let elements = listpack_elements(r, &lp)?;
            let stride = if ex { 3 } else { 2 };
            if elements.len() % stride != 0 {
                return Err(r.corrupt("hash listpack with an odd element count"));
            }
            for t in elements.chunks_exact(stride) {
                let at = if ex {
                    let at = as_int(&t[2])
                        .and_then(|n| u64::try_from(n).ok())
                        .filter(|&n| n <= EXPIRE_TIME_MAX_MS)
                        .ok_or_else(|| r.corrupt("hash field expiry out of range"))?;
                    (at != 0).then_some(at)
                } else {
                    None
                };
                fields.push((t[0].clone(), t[1].clone(), at));
            }
        }
        _ => {
            let min = if t == types::HASH_METADATA {
                let min = u64::try_from(r.millis()?)
                    .ok()
                    .filter(|&m| m <= EXPIRE_TIME_MAX_MS)
                    .ok_or_else(|| r.corrupt("hash min expiry out of range"))?;
                Some(min)
            } else {
                None
            };
            let n = bounded_count(r, 2)?;
            for _ in 0..n {
                let at = match min {
                    Some(min) => match r.length()? {
                        0 => None,
                        ttl => Some(
                            (ttl - 1)
                                .checked_add(min)
                                .filter(|&at| at <= EXPIRE_TIME_MAX_MS)
                                .ok_or_else(|| r.corrupt("hash field expiry out of range"))?,
                        ),
                    },
                    None => None,
                };
                let f = Bytes::from(r.string()?);
                let v = Bytes::from(r.string()?);
                fields.push((f, v, at));
            }
        }
    }
    check_fields(r, &fields)?;
    Ok(Hash::from_fields(fields, ex, lim))
}

/// Reads a set's body of type `t`.
pub fn read_set(r: &mut Reader<'_>, t: u8, lim: &Thresholds) -> Result<Set, RdbError> {
    let members: Vec<Bytes> = match t {
        types::SET_INTSET => {
            let blob = r.string()?;
            // The blob is kept as it is, width included (DUMP gives it back byte for byte).
            let set = Set::from_intset_blob(&blob, lim).map_err(|e| r.corrupt(e))?;
            if set.is_empty() {
                return Err(r.corrupt("empty set"));
            }
            return Ok(set);
        }
        types::SET_LISTPACK => {
            let lp = r.string()?;
            listpack_elements(r, &lp)?
        }
        _ => {
            let n = bounded_count(r, 1)?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(Bytes::from(r.string()?));
            }
            out
        }
    };
    if members.is_empty() {
        return Err(r.corrupt("empty set"));
    }
    let mut seen = HashSet::with_capacity(members.len());
    if members.iter().any(|m| !seen.insert(m)) {
        return Err(r.corrupt("set with a repeated member"));
    }
    if t == types::SET_LISTPACK {
        let mut set = Set::new_listpack();
        for m in &members {
            set.add(m, lim);
        }
        return Ok(set);
    }
    Ok(Set::from_members(members, lim))
}

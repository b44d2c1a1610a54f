//! The hash type: fields to values, each field with an optional expiry time (Redis 7.4+'s
//! hash field expiration), in one of Redis's three encodings.
//!
//! - **listpack**: while the hash is small, field-value pairs back to back in one buffer
//!   (`types/pack.rs`), in insertion order (a new field goes last, a changed value stays in place).
//! - **listpackex**: the same pack with its flag set (`Pack::flagged`), holding triples of
//!   field, value and expiry time (0 for none), once
//!   any field was given an expiry: ordered by expiry time, soonest first, fields without one
//!   last (where Redis keeps them), so the fields due first are at the front.
//! - **hashtable**: a table of records (`types/records.rs`), each a field with its value and
//!   expiry time (`field_record.rs`), once the hash holds more than `hash-max-listpack-entries`
//!   fields or a field or value longer than `hash-max-listpack-value` bytes was written (the
//!   [`Thresholds`] of the command's snapshot; for a load, the server's current ones); a hash
//!   never converts back, as in Redis.
//!
//! A field past its expiry time stays stored until an access deletes it (lazy expiry, in the
//! commands) or the engine's expiry cycle does (active expiry): reads skip it meanwhile.
//!
//! Invariants (checked by [`Hash::check_invariants`]): the buffer is well formed; a listpack
//! holds no field twice; a listpackex's fields are
//! ordered by expiry time with the ones without one last; the table's count of fields with an
//! expiry time is exact.

pub(crate) mod commands;
mod field_record;

use bytes::Bytes;

use crate::config::Thresholds;
use crate::types::pack::Pack;
use crate::types::records::Records;
use field_record::FieldRecord;

/// The latest expiry time a field may hold, ms (Redis's `EB_EXPIRE_TIME_MAX`, 48 bits): what
/// a load accepts.
pub const EXPIRE_TIME_MAX_MS: u64 = (1 << 48) - 1;
/// The latest expiry time a command may set, ms (Redis's `HFE_MAX_ABS_TIME_MSEC`, a quarter
/// of the stored range).
pub const API_EXPIRE_TIME_MAX_MS: u64 = EXPIRE_TIME_MAX_MS >> 2;

/// A listpackex's expiry element for a field without expiry.
const NO_TTL: u64 = 0;

/// A stored field as the encodings yield it: the field, its value, its expiry time.
pub type FieldRef<'a> = (&'a [u8], &'a [u8], Option<u64>);

/// A hash value.
#[derive(Debug, Clone)]
pub struct Hash {
    /// The encoding and its data.
    repr: Repr,
}

/// The encoding. 16 bytes, so a hash sits in the keyspace entry's `Value` itself: a small
/// hash is one allocation, its pack.
#[derive(Debug, Clone)]
enum Repr {
    /// Field, value pairs; with the pack's flag set, field, value, expiry triples ordered by
    /// expiry (listpackex, see the module doc).
    Pack(Pack),
    /// The table, boxed: the small encodings are what most hashes are.
    Table(Box<Table>),
}

/// The table encoding.
#[derive(Debug, Clone, Default)]
struct Table {
    fields: Records<FieldRecord>,
    /// How many fields have an expiry time.
    ttls: usize,
}

/// The encoding as the methods match on it: the pack's flag tells a listpackex.
enum View<'a> {
    Listpack(&'a Pack),
    ListpackEx(&'a Pack),
    Table(&'a Table),
}

/// [`View`], mutably.
enum ViewMut<'a> {
    Listpack(&'a mut Pack),
    ListpackEx(&'a mut Pack),
    Table(&'a mut Table),
}

fn ttl_bytes(at: Option<u64>) -> [u8; 8] {
    at.unwrap_or(NO_TTL).to_le_bytes()
}

fn ttl_of(e: &[u8]) -> Option<u64> {
    let at = u64::from_le_bytes(e.try_into().ok()?);
    (at != NO_TTL).then_some(at)
}

impl Default for Hash {
    fn default() -> Self {
        Hash::new()
    }
}

impl Hash {
    /// An empty hash, listpack-encoded.
    pub fn new() -> Hash {
        Hash {
            repr: Repr::Pack(Pack::new()),
        }
    }

    fn view(&self) -> View<'_> {
        match &self.repr {
            Repr::Pack(p) if p.flag() => View::ListpackEx(p),
            Repr::Pack(p) => View::Listpack(p),
            Repr::Table(t) => View::Table(t),
        }
    }

    fn view_mut(&mut self) -> ViewMut<'_> {
        match &mut self.repr {
            Repr::Pack(p) => {
                if p.flag() {
                    ViewMut::ListpackEx(p)
                } else {
                    ViewMut::Listpack(p)
                }
            }
            Repr::Table(t) => ViewMut::Table(t),
        }
    }

    /// The encoding's name, as OBJECT ENCODING reports it.
    pub fn encoding(&self) -> &'static str {
        match self.view() {
            View::Listpack(_) => "listpack",
            View::ListpackEx(_) => "listpackex",
            View::Table(_) => "hashtable",
        }
    }

    /// Brings into the cache what looking up `fields` will read (see
    /// [`Value::prefetch_elements`](crate::types::Value::prefetch_elements)).
    pub(crate) fn prefetch_fields(&self, fields: &[&[u8]], hashes: &mut Vec<u64>) -> bool {
        match &self.repr {
            Repr::Table(t) => t.fields.prefetch(fields, hashes),
            Repr::Pack(_) => false,
        }
    }

    /// Whether the hash is a table.
    pub fn is_table(&self) -> bool {
        matches!(self.repr, Repr::Table(_))
    }

    /// Whether the hash is listpackex-encoded.
    pub fn is_listpack_ex(&self) -> bool {
        matches!(self.view(), View::ListpackEx(_))
    }

    /// What freeing it costs, as Redis counts it (`lazyfreeGetFreeEffort`): a table's fields.
    pub(crate) fn free_effort(&self) -> usize {
        match self.view() {
            View::Table(t) => t.fields.len(),
            _ => 1,
        }
    }

    /// Fields stored, expired ones not yet deleted included.
    pub fn len(&self) -> usize {
        match self.view() {
            View::Listpack(p) => p.elements() / 2,
            View::ListpackEx(p) => p.elements() / 3,
            View::Table(t) => t.fields.len(),
        }
    }

    /// Whether no field is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fields that are not expired at `now_ms` (Redis's `hashTypeLength(o, 1)`).
    pub fn len_live(&self, now_ms: u64) -> usize {
        if !self.has_ttls() {
            return self.len();
        }
        self.entries().filter(|e| !expired(e.2, now_ms)).count()
    }

    /// Whether some field has an expiry time.
    pub fn has_ttls(&self) -> bool {
        self.min_expiry().is_some()
    }

    /// The soonest expiry time of a field.
    pub fn min_expiry(&self) -> Option<u64> {
        match self.view() {
            View::Listpack(_) => None,
            View::ListpackEx(p) => p.tuples(3).next().and_then(|(_, t)| ttl_of(t[2])),
            View::Table(t) => {
                if t.ttls == 0 {
                    None
                } else {
                    t.fields
                        .iter()
                        .filter_map(|r| field_record::parts(r).2)
                        .min()
                }
            }
        }
    }

    /// Every stored field with its value and expiry time, in the encoding's order.
    pub fn entries(&self) -> Box<dyn Iterator<Item = FieldRef<'_>> + '_> {
        match self.view() {
            View::Listpack(p) => Box::new(p.tuples(2).map(|(_, t)| (t[0], t[1], None))),
            View::ListpackEx(p) => Box::new(p.tuples(3).map(|(_, t)| (t[0], t[1], ttl_of(t[2])))),
            View::Table(t) => Box::new(t.fields.iter().map(field_record::parts)),
        }
    }

    /// HSCAN's walk: the stored fields (expired or not) from `cursor`, about `count` of a
    /// table in the order of their hash, and the cursor to resume from; a listpack's all at
    /// once, with cursor 0, as Redis scans a listpack.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(FieldRef<'_>)) -> u64 {
        match self.view() {
            View::Table(t) => t
                .fields
                .scan(cursor, count, |r| visit(field_record::parts(r))),
            _ => {
                self.entries().for_each(visit);
                0
            }
        }
    }

    /// A uniformly random stored field (expired or not).
    pub fn random_entry(&self) -> Option<FieldRef<'_>> {
        match self.view() {
            View::Table(t) => t.fields.random().map(field_record::parts),
            _ if self.is_empty() => None,
            _ => self.entries().nth(crate::types::random::below(self.len())),
        }
    }

    /// The value and expiry time of a stored field (expired or not).
    pub fn get(&self, field: &[u8]) -> Option<(Bytes, Option<u64>)> {
        match self.view() {
            View::Listpack(p) => p.find(2, field).map(|at| {
                let (t, _) = p.tuple_at(at, 2);
                (Bytes::copy_from_slice(t[1]), None)
            }),
            View::ListpackEx(p) => p.find(3, field).map(|at| {
                let (t, _) = p.tuple_at(at, 3);
                (Bytes::copy_from_slice(t[1]), ttl_of(t[2]))
            }),
            View::Table(t) => t.fields.get(field).map(|r| {
                let (_, value, at) = field_record::parts(r);
                (Bytes::copy_from_slice(value), at)
            }),
        }
    }

    /// Whether a field is stored (expired or not).
    pub fn contains(&self, field: &[u8]) -> bool {
        match self.view() {
            View::Listpack(p) => p.find(2, field).is_some(),
            View::ListpackEx(p) => p.find(3, field).is_some(),
            View::Table(t) => t.fields.contains(field),
        }
    }

    /// Converts a compact hash to a table before `new_fields` fields of the given lengths
    /// are written, as Redis's `hashTypeTryConversion`: more new fields than a listpack
    /// holds, or a field or value too long for one.
    pub fn prepare_for(
        &mut self,
        new_fields: usize,
        lengths: impl IntoIterator<Item = usize>,
        lim: &Thresholds,
    ) {
        if self.is_table() {
            return;
        }
        if new_fields > lim.hash_entries || lengths.into_iter().any(|l| l > lim.hash_value) {
            self.convert_to_table();
        }
    }

    /// Sets `field` to `value`; returns whether the field existed (an update). An existing
    /// field's expiry time is dropped unless `keep_ttl`. Converts to a table as Redis does.
    pub fn set(&mut self, field: &[u8], value: &[u8], keep_ttl: bool, lim: &Thresholds) -> bool {
        if !self.is_table() && (field.len() > lim.hash_value || value.len() > lim.hash_value) {
            self.convert_to_table();
        }
        let updated = match self.view_mut() {
            ViewMut::Listpack(p) => match p.find(2, field) {
                Some(at) => {
                    p.replace(at, 1, value);
                    true
                }
                None => {
                    p.push(&[field, value]);
                    false
                }
            },
            ViewMut::ListpackEx(p) => match p.find(3, field) {
                Some(at) => {
                    let had = ttl_of(p.tuple_at(at, 3).0[2]);
                    if had.is_some() && !keep_ttl {
                        p.remove(at, 3);
                        insert_sorted(p, field, value, None);
                    } else {
                        p.replace(at, 1, value);
                    }
                    true
                }
                None => {
                    insert_sorted(p, field, value, None);
                    false
                }
            },
            ViewMut::Table(t) => {
                let lookup = t.fields.lookup(field);
                let had = t.fields.found(&lookup).map(|r| field_record::parts(r).2);
                let at = had.flatten().filter(|_| keep_ttl);
                if had.flatten().is_some() && at.is_none() {
                    t.ttls -= 1;
                }
                field_record::store_at(&mut t.fields, lookup, field, value, at);
                had.is_some()
            }
        };
        if !self.is_table() && self.len() > lim.hash_entries {
            self.convert_to_table();
        }
        updated
    }

    /// Removes a stored field; returns whether it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self.view_mut() {
            ViewMut::Listpack(p) => p.find(2, field).map(|at| p.remove(at, 2)).is_some(),
            ViewMut::ListpackEx(p) => p.find(3, field).map(|at| p.remove(at, 3)).is_some(),
            ViewMut::Table(t) => {
                let Some(at) = t.fields.get(field).map(|r| field_record::parts(r).2) else {
                    return false;
                };
                if at.is_some() {
                    t.ttls -= 1;
                }
                t.fields.remove(field)
            }
        }
    }

    /// Readies the hash to hold expiry times (a listpack becomes listpackex), as Redis's
    /// `hashTypeSetExInit` does before any HEXPIRE-family change.
    pub fn enable_ttls(&mut self) {
        if let View::Listpack(p) = self.view() {
            let mut ex = Pack::flagged();
            for (_, t) in p.tuples(2) {
                ex.push(&[t[0], t[1], &ttl_bytes(None)]);
            }
            self.repr = Repr::Pack(ex);
        }
    }

    /// Sets (or with `None` clears) a stored field's expiry time; returns whether the field
    /// is stored. A listpack is made listpackex first.
    pub fn set_expiry(&mut self, field: &[u8], at_ms: Option<u64>) -> bool {
        self.enable_ttls();
        match self.view_mut() {
            ViewMut::Listpack(_) => false,
            ViewMut::ListpackEx(p) => match p.find(3, field) {
                Some(at) => {
                    let value = Bytes::copy_from_slice(p.tuple_at(at, 3).0[1]);
                    p.remove(at, 3);
                    insert_sorted(p, field, &value, at_ms);
                    true
                }
                None => false,
            },
            ViewMut::Table(t) => {
                let Some((had, value)) = t.fields.get(field).map(|r| {
                    let (_, value, at) = field_record::parts(r);
                    (at, value.to_vec())
                }) else {
                    return false;
                };
                match (had.is_some(), at_ms.is_some()) {
                    (false, true) => t.ttls += 1,
                    (true, false) => t.ttls -= 1,
                    _ => {}
                }
                field_record::store(&mut t.fields, field, &value, at_ms);
                true
            }
        }
    }

    /// The stored fields whose expiry time is at or before `now_ms` (active expiry's
    /// condition), soonest first for a listpackex.
    pub fn due_fields(&self, now_ms: u64) -> Vec<Bytes> {
        match self.view() {
            View::Listpack(_) => Vec::new(),
            View::ListpackEx(p) => p
                .tuples(3)
                .map_while(|(_, t)| match ttl_of(t[2]) {
                    Some(at) if at <= now_ms => Some(Bytes::copy_from_slice(t[0])),
                    _ => None,
                })
                .collect(),
            View::Table(t) => {
                if t.ttls == 0 {
                    return Vec::new();
                }
                t.fields
                    .iter()
                    .map(field_record::parts)
                    .filter(|(_, _, at)| at.is_some_and(|at| at <= now_ms))
                    .map(|(f, _, _)| Bytes::copy_from_slice(f))
                    .collect()
            }
        }
    }

    /// Turns a compact hash into a table.
    pub fn convert_to_table(&mut self) {
        if self.is_table() {
            return;
        }
        let mut table = Table::default();
        for (f, v, at) in self.entries() {
            table.ttls += usize::from(at.is_some());
            field_record::store(&mut table.fields, f, v, at);
        }
        self.repr = Repr::Table(Box::new(table));
    }

    /// A hash from loaded fields, in the encoding Redis would load them in: compact when
    /// within the listpack limits (listpackex if any field has an expiry time, or if
    /// `listpack_ex` asks so), else a table.
    pub fn from_fields(
        fields: Vec<(Bytes, Bytes, Option<u64>)>,
        listpack_ex: bool,
        lim: &Thresholds,
    ) -> Hash {
        let compact = fields.len() <= lim.hash_entries
            && fields
                .iter()
                .all(|(f, v, _)| f.len() <= lim.hash_value && v.len() <= lim.hash_value);
        let mut hash = Hash::new();
        if !compact {
            hash.convert_to_table();
        } else if listpack_ex || fields.iter().any(|f| f.2.is_some()) {
            hash.enable_ttls();
        }
        for (f, v, at) in fields {
            hash.set(&f, &v, false, lim);
            if at.is_some() {
                hash.set_expiry(&f, at);
            }
        }
        hash
    }

    /// The bytes the hash holds (an estimate: buffers and table entries).
    pub fn memory_bytes(&self) -> usize {
        match self.view() {
            View::Listpack(p) | View::ListpackEx(p) => p.bytes(),
            View::Table(t) => t.fields.allocation_size(),
        }
    }

    /// Checks the invariants of the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for (f, _, _) in self.entries() {
            if !seen.insert(f) {
                return Err(format!("field {:?} held twice", String::from_utf8_lossy(f)));
            }
        }
        match self.view() {
            View::Listpack(p) | View::ListpackEx(p) => {
                let stride = if self.is_listpack_ex() { 3 } else { 2 };
                p.check_invariants(stride)?;
                if self.is_listpack_ex() {
                    let ttls: Vec<u64> = p
                        .tuples(3)
                        .map(|(_, t)| ttl_of(t[2]).unwrap_or(u64::MAX))
                        .collect();
                    if ttls.windows(2).any(|w| w[0] > w[1]) {
                        return Err("listpackex fields out of expiry order".into());
                    }
                }
            }
            View::Table(t) => {
                t.fields.check_invariants()?;
                let counted = self.entries().filter(|f| f.2.is_some()).count();
                if counted != t.ttls {
                    return Err(format!("{counted} fields with a ttl, {} counted", t.ttls));
                }
            }
        }
        Ok(())
    }
}

/// Whether a field with expiry `at` reads as expired at `now_ms` (Redis's
/// `hashTypeIsExpired`: strictly before now).
pub fn expired(at: Option<u64>, now_ms: u64) -> bool {
    at.is_some_and(|at| at < now_ms)
}

/// Inserts a triple into a listpackex at its place in expiry order (Redis's
/// `listpackExAddInternal`): before the first field expiring later or never; a field
/// without expiry goes last.
fn insert_sorted(p: &mut Pack, field: &[u8], value: &[u8], at_ms: Option<u64>) {
    let ttl = ttl_bytes(at_ms);
    let Some(at_ms) = at_ms else {
        p.push(&[field, value, &ttl]);
        return;
    };
    let place = p
        .tuples(3)
        .find(|(_, t)| ttl_of(t[2]).is_none_or(|t| t >= at_ms))
        .map(|(at, _)| at);
    match place {
        Some(at) => p.insert(at, &[field, value, &ttl]),
        None => p.push(&[field, value, &ttl]),
    }
}

#[cfg(test)]
mod tests;

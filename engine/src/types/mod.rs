//! The value types a keyspace holds: the [`Value`] enum, one variant per type, and what every
//! type answers (its TYPE name, its memory).
//!
//! Each type is one folder with its commands, its encodings and its memory accounting:
//! [`stream`] (the data structure, consumer groups, the X* commands), [`string`], [`list`],
//! [`hash`], [`set`] and [`zset`] (the compact encodings of hashes and sets share `pack.rs`). Their
//! RDB, AOF and DUMP forms are in [`crate::rdb`] and in the commands' propagation.

pub mod hash;
pub mod list;
pub(crate) mod pack;
pub(crate) mod random;
pub(crate) mod records;
pub mod set;
pub mod stream;
pub mod string;
pub mod zset;

use crate::stream::Stream;

/// A value stored under a key.
#[derive(Debug, Clone)]
pub enum Value {
    /// A stream (boxed, so the enum stays as small as a string).
    Stream(Box<Stream>),
    /// A string (plain, a bitmap or a HyperLogLog).
    String(string::StringValue),
    /// A list.
    List(list::List),
    /// A hash.
    Hash(hash::Hash),
    /// A set.
    Set(set::Set),
    /// A sorted set.
    ZSet(Box<zset::ZSet>),
}

impl Value {
    /// Brings into the cache what looking up `elements` in this collection will read (a
    /// hash's fields, a set's or a sorted set's members), when it is a table big enough to
    /// miss the cache (`records::Records::prefetch`); for other values, nothing. Returns
    /// whether it was such a table. A hint: it reads only.
    pub(crate) fn prefetch_elements(&self, elements: &[&[u8]], hashes: &mut Vec<u64>) -> bool {
        match self {
            Value::Hash(h) => h.prefetch_fields(elements, hashes),
            Value::Set(s) => s.prefetch_members(elements, hashes),
            Value::ZSet(z) => z.prefetch_members(elements, hashes),
            Value::Stream(_) | Value::String(_) | Value::List(_) => false,
        }
    }

    /// The allocations freeing it costs, as Redis counts them (`lazyfreeGetFreeEffort`):
    /// above [`crate::lazyfree::THRESHOLD`] UNLINK frees it in the background.
    pub fn free_effort(&self) -> usize {
        match self {
            Value::Stream(s) => s.free_effort(),
            Value::String(_) => 1,
            Value::List(l) => l.free_effort(),
            Value::Hash(h) => h.free_effort(),
            Value::Set(s) => s.free_effort(),
            Value::ZSet(z) => z.free_effort(),
        }
    }

    /// The type name TYPE replies.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Stream(_) => "stream",
            Value::String(_) => "string",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::List(_) => "list",
        }
    }

    /// The bytes the value holds (an estimate, as each type accounts it).
    pub fn memory_bytes(&self) -> usize {
        match self {
            Value::Stream(stream) => stream.memory_bytes(),
            Value::String(s) => string::memory_bytes(s),
            Value::Hash(h) => h.memory_bytes(),
            Value::Set(s) => s.memory_bytes(),
            Value::ZSet(z) => z.memory_bytes(),
            Value::List(l) => l.memory_bytes(),
        }
    }
}

// A value is at most 24 bytes (a string in place, a stream behind a box), so a key table of
// short strings costs little more than Redis's objects.
const _: () = assert!(std::mem::size_of::<Value>() <= 24);
#[cfg(test)]
mod sizes {
    /// A value sits in every table entry, and a small hash, set or list is its buffer alone:
    /// growing any of them grows every key.
    #[test]
    fn values_and_small_collections_stay_small() {
        assert_eq!(std::mem::size_of::<super::Value>(), 24);
        assert_eq!(std::mem::size_of::<super::hash::Hash>(), 16);
        assert_eq!(std::mem::size_of::<super::set::Set>(), 16);
        assert_eq!(std::mem::size_of::<super::list::List>(), 16);
        assert_eq!(std::mem::size_of::<super::pack::Pack>(), 16);
    }
}

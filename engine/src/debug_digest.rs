//! DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis 8.8's digest of a dataset and of one value
//! (`debug.c`), bit for bit, so that a dataset built in echomq and in Redis can be compared by
//! one string.
//!
//! Two operations on a 20-byte digest, both over SHA-1:
//! - *xor*: `digest ^= SHA1(data)`: order does not matter (sets, hash fields, the keys of a
//!   database);
//! - *mix*: `digest = SHA1(digest ^ SHA1(data))`: order matters (a list's elements, a
//!   stream's entries, a key then its value).
//!
//! A value's digest mixes its Redis type code (big-endian `u32`), then its contents as its
//! type defines them ([`Value::debug_digest`]: each type contributes its own), then, if the
//! key has a time to live, xors `!!expire!!`. The dataset's digest starts at zero; for each
//! non-empty database it mixes the database number, then xors, per key, the digest of the
//! key mixed with its value's digest. Keys whose time has passed but that are still stored
//! count, as in Redis (it walks its tables, not its lookups).

use sha1::{Digest as _, Sha1};

use crate::keyspace::{Db, Value};
use crate::types::stream::id::StreamId;

/// A digest: 20 bytes, zero when nothing was added.
pub type Digest = [u8; 20];

/// Redis's `OBJ_STRING`.
const TYPE_STRING: u32 = 0;
/// Redis's `OBJ_LIST`.
const TYPE_LIST: u32 = 1;
/// Redis's `OBJ_SET`.
const TYPE_SET: u32 = 2;
/// Redis's `OBJ_HASH`.
const TYPE_HASH: u32 = 4;
/// `OBJ_ZSET`.
const TYPE_ZSET: u32 = 3;
/// Redis's `OBJ_STREAM`.
const TYPE_STREAM: u32 = 6;

/// `digest ^= SHA1(data)` (Redis's `xorDigest`).
pub fn xor(digest: &mut Digest, data: &[u8]) {
    let hash = Sha1::digest(data);
    for (d, h) in digest.iter_mut().zip(hash.iter()) {
        *d ^= h;
    }
}

/// `digest = SHA1(digest ^ SHA1(data))` (Redis's `mixDigest`).
pub fn mix(digest: &mut Digest, data: &[u8]) {
    xor(digest, data);
    let hash = Sha1::digest(&digest[..]);
    digest.copy_from_slice(&hash);
}

/// The digest as DEBUG DIGEST shows it: 40 lower-case hex digits.
pub fn hex(digest: &Digest) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Value {
    /// Mixes this value into `digest` as Redis's `xorObjectDigest` does (its type code, then
    /// its contents; not the key, nor its expiry).
    pub fn debug_digest(&self, digest: &mut Digest) {
        match self {
            Value::String(string) => {
                mix(digest, &TYPE_STRING.to_be_bytes());
                mix(digest, &string.bytes());
            }
            Value::Set(set) => {
                mix(digest, &TYPE_SET.to_be_bytes());
                for member in set.members() {
                    xor(digest, &member);
                }
            }
            Value::ZSet(z) => {
                mix(digest, &TYPE_ZSET.to_be_bytes());
                for e in z.order().iter() {
                    let mut element = Digest::default();
                    mix(&mut element, e.member);
                    mix(
                        &mut element,
                        crate::types::zset::score::dtoa(e.score).as_bytes(),
                    );
                    xor(digest, &element);
                }
            }
            Value::Hash(hash) => {
                mix(digest, &TYPE_HASH.to_be_bytes());
                // Fields whose time passed but that are still stored count, as in Redis.
                for (field, value, expiry) in hash.entries() {
                    let mut element = Digest::default();
                    mix(&mut element, field);
                    mix(&mut element, value);
                    if expiry.is_some() {
                        xor(&mut element, b"!!hexpire!!");
                    }
                    xor(digest, &element);
                }
            }
            Value::List(list) => {
                mix(digest, &TYPE_LIST.to_be_bytes());
                list.walk(0, false, |element| {
                    mix(digest, &element.to_bytes());
                    true
                });
            }
            Value::Stream(stream) => {
                mix(digest, &TYPE_STREAM.to_be_bytes());
                // Entries only: consumer groups are not part of Redis's digest.
                for entry in stream.range(StreamId::MIN, StreamId::MAX) {
                    let id = format!("{}.{}", entry.id.ms, entry.id.seq);
                    mix(digest, id.as_bytes());
                    for (field, value) in entry.fields() {
                        mix(digest, field);
                        mix(digest, value);
                    }
                }
            }
        }
    }
}

impl Db {
    /// DEBUG DIGEST-VALUE of `key`: its value's digest with the expiry mark, zero when the key
    /// is not stored (a key whose time passed but is still stored counts).
    pub fn debug_digest_value(&self, key: &[u8]) -> Digest {
        let mut digest = Digest::default();
        self.debug_digest_into(key, &mut digest);
        digest
    }

    /// Mixes the value of `key` (if stored) into `digest`, then xors the expiry mark if the key
    /// has a time to live (Redis's `xorObjectDigest`).
    fn debug_digest_into(&self, key: &[u8], digest: &mut Digest) {
        if let Some(pos) = self.values.map.find(key) {
            let entry = self.values.map.entry(pos);
            entry.value.debug_digest(digest);
            if entry.has_ttl() {
                xor(digest, b"!!expire!!");
            }
        }
    }
}

/// DEBUG DIGEST of every database (`dbs[i]` is database `i`).
pub fn dataset_digest(dbs: &[Db]) -> Digest {
    let mut dataset = Digest::default();
    for (index, db) in dbs.iter().enumerate() {
        if db.values.map.is_empty() {
            continue;
        }
        mix(&mut dataset, &(index as u32).to_be_bytes());
        for entry in db.values.map.entries() {
            let mut digest = Digest::default();
            mix(&mut digest, entry.key.as_bytes());
            db.debug_digest_into(entry.key.as_bytes(), &mut digest);
            xor(&mut dataset, &digest);
        }
    }
    dataset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_dataset_digests_to_zero() {
        let dbs = [Db::default(), Db::default()];
        assert_eq!(hex(&dataset_digest(&dbs)), "0".repeat(40));
    }

    #[test]
    fn mix_is_ordered_and_xor_is_not() {
        let (mut ab, mut ba) = (Digest::default(), Digest::default());
        mix(&mut ab, b"a");
        mix(&mut ab, b"b");
        mix(&mut ba, b"b");
        mix(&mut ba, b"a");
        assert_ne!(ab, ba);
        let (mut x, mut y) = (Digest::default(), Digest::default());
        xor(&mut x, b"a");
        xor(&mut x, b"b");
        xor(&mut y, b"b");
        xor(&mut y, b"a");
        assert_eq!(x, y);
        // xor of SHA1("a") alone: the hash itself.
        let mut one = Digest::default();
        xor(&mut one, b"a");
        assert_eq!(hex(&one), "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8");
    }
}

//! A keyspace value in RDB form: its type byte and its body, as Redis's `rdbSaveObjectType` and
//! `rdbSaveObject` write them (a string: `RDB_TYPE_STRING` and the string; a stream: see
//! [`super::stream`]; a list: [`super::list`]; hashes and sets: [`super::collections`]; sorted sets: [`super::zset`]). Reading accepts those types; any other value type some Redis writes is
//! [`RdbError::UnsupportedType`], an unknown byte [`RdbError::UnknownType`].

use crate::error::RdbError;
use crate::keyspace::Value;
use crate::types::string::StringValue;

use super::codec::{Reader, Writer};
use super::{collections, list, stream, types, zset};

/// The type byte `value` is written with.
pub fn type_of(value: &Value) -> u8 {
    match value {
        Value::String(_) => types::STRING,
        Value::Stream(_) => types::STREAM_WRITTEN,
        Value::Hash(h) => collections::hash_type(h),
        Value::Set(s) => collections::set_type(s),
        Value::List(_) => types::LIST_QUICKLIST_2,
        Value::ZSet(z) => zset::zset_type(z),
    }
}

/// Writes `value`'s body (after its type byte).
pub fn write(value: &Value, now_ms: u64, w: &mut Writer) {
    match value {
        Value::String(s) => w.string(&s.bytes()),
        Value::Stream(s) => stream::write(s, now_ms, w),
        Value::Hash(h) => collections::write_hash(h, w),
        Value::Set(s) => collections::write_set(s, w),
        Value::List(l) => list::write(l, w),
        Value::ZSet(z) => zset::write_zset(z, w),
    }
}

/// Reads the body of a value of type `rdb_type`.
pub fn read(
    r: &mut Reader<'_>,
    rdb_type: u8,
    now_ms: u64,
    lim: &super::LoadLimits,
) -> Result<Value, RdbError> {
    match rdb_type {
        types::STRING => Ok(Value::String(StringValue::from_arg(&r.string()?))),
        types::LIST_QUICKLIST_2 => Ok(Value::List(list::read_quicklist(r, lim.list)?)),
        types::LIST => Ok(Value::List(list::read_plain(r, lim.list)?)),
        t if types::is_stream(t) => Ok(Value::Stream(Box::new(stream::read(r, t, now_ms)?))),
        t @ (collections::types::HASH
        | collections::types::HASH_LISTPACK
        | collections::types::HASH_METADATA
        | collections::types::HASH_LISTPACK_EX) => {
            Ok(Value::Hash(collections::read_hash(r, t, &lim.encoding)?))
        }
        t @ (collections::types::SET
        | collections::types::SET_INTSET
        | collections::types::SET_LISTPACK) => {
            Ok(Value::Set(collections::read_set(r, t, &lim.encoding)?))
        }
        t @ (zset::types::ZSET | zset::types::ZSET_2 | zset::types::ZSET_LISTPACK) => {
            Ok(Value::ZSet(Box::new(zset::read_zset(r, t, &lim.encoding)?)))
        }
        t if types::is_known(t) => Err(RdbError::UnsupportedType(t)),
        t => Err(RdbError::UnknownType(t, r.offset())),
    }
}

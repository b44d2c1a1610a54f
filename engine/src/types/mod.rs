//! The value types a keyspace holds: the [`Value`] enum, one variant per type, and what every
//! type answers (its TYPE name).
//!
//! Each type lives in its own module with its commands, its encodings and its accounting: the
//! stream in [`crate::stream`], [`crate::group`] and [`crate::command`] (its RDB, AOF and DUMP
//! forms in [`crate::rdb`]); the string is a plain byte string whose commands the server
//! implements.

use bytes::Bytes;

use crate::stream::Stream;

/// A value stored under a key.
#[derive(Debug, Clone)]
pub enum Value {
    /// A stream.
    Stream(Stream),
    /// A plain string.
    String(Bytes),
}

impl Value {
    /// The type name TYPE replies.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Stream(_) => "stream",
            Value::String(_) => "string",
        }
    }
}

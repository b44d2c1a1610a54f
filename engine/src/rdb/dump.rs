//! DUMP payloads: a value's type byte and body, then the RDB version (2 bytes little-endian)
//! and the CRC64 of everything before it (8 bytes little-endian), as Redis 8.8's
//! `createDumpPayload` writes them (version 14, which 8.8 and 8.10 both restore). [`verify`]
//! is `verifyDumpPayload`: at least 10 bytes, a version no newer than Redis 8.10's (15), and a
//! matching checksum unless the stored one is 0.

use crate::error::RdbError;
use crate::keyspace::Value;

use super::codec::{Reader, Writer};
use super::crc64::crc64;
use super::{RDB_VERSION, RDB_VERSION_READ, value};

/// The DUMP payload of `value`; `compress` is `rdbcompression`.
pub fn dump(value: &Value, now_ms: u64, compress: bool) -> Vec<u8> {
    let mut w = Writer::new(compress);
    w.byte(value::type_of(value));
    value::write(value, now_ms, &mut w);
    w.raw(&RDB_VERSION.to_le_bytes());
    let mut payload = w.into_bytes();
    let crc = crc64(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    payload
}

/// Whether `payload` has a version we read and a correct (or absent) checksum.
pub fn verify(payload: &[u8]) -> bool {
    if payload.len() < 10 {
        return false;
    }
    let footer = &payload[payload.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION_READ {
        return false;
    }
    let mut stored = [0u8; 8];
    stored.copy_from_slice(&footer[2..]);
    let stored = u64::from_le_bytes(stored);
    stored == 0 || crc64(0, &payload[..payload.len() - 8]) == stored
}

/// The value in a payload [`verify`] accepted (RESTORE's "Bad data format" on error), encoded
/// under `lim`.
pub fn restore(payload: &[u8], now_ms: u64, lim: &super::LoadLimits) -> Result<Value, RdbError> {
    let body = payload
        .get(..payload.len().saturating_sub(10))
        .ok_or(RdbError::Truncated(0))?;
    let mut r = Reader::new(body);
    let t = r.byte()?;
    value::read(&mut r, t, now_ms, lim)
}

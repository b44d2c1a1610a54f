//! A whole RDB file, as Redis 8.8's `rdbSaveRio` writes it and `rdbLoadRio` reads it.
//!
//! ```text
//! file := "REDIS" version:4 digits aux* lib* (SELECTDB db:len RESIZEDB keys:len expires:len key*)*
//!         EOF crc64:8le
//! aux  := AUX name:string value:string      redis-ver, redis-bits, ctime, used-mem, aof-base
//! lib  := FUNCTION2 code:string              a function library's code, after the aux fields
//! key  := [EXPIRETIME_MS ms:8le | EXPIRETIME s:4le] [IDLE len] [FREQ byte] type key:string value
//! ```
//! The checksum covers every byte before it; 0 means none was computed (`rdbchecksum no`),
//! and the reader then skips the check, as Redis does (for a file of 1 MiB or more it is
//! computed on a second thread while the body is decoded). Databases without keys are left out.
//!
//! Reading accepts versions 1 to [`super::RDB_VERSION_READ`], skips what does not change the keyspace (aux
//! fields, RESIZEDB, SLOT_INFO, IDLE, FREQ), hands function libraries' codes to the caller
//! (which loads them) and refuses what echomq cannot hold (pre-GA function records, module data, value types other than strings and streams). Keys whose expiry has
//! passed are dropped when `drop_expired` (a primary loading a file), as Redis drops them.
//! Values are checked whole as they are read; the caller stores nothing until the whole file
//! has loaded, so a damaged file changes nothing.

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use crate::error::RdbError;
use crate::keyspace::Value;

use super::codec::{Reader, SaveOutput, Writer};
use super::crc64::crc64;
use super::{RDB_VERSION, RDB_VERSION_READ, opcodes, value};

/// One database's keys: key, value, expiry (Unix ms).
pub type DbSnapshot = Vec<(Bytes, Value, Option<u64>)>;

/// One key to write, borrowed from wherever the keyspace is (SAVE writes from the keyspace
/// itself, under its lock, without copying it): key, value, expiry (Unix ms).
pub type KeyRef<'a> = (&'a [u8], &'a Value, Option<u64>);

/// How a file is written.
#[derive(Debug, Clone)]
pub struct SaveOptions {
    /// `rdbcompression`.
    pub compress: bool,
    /// `rdbchecksum` (else the footer is 0).
    pub checksum: bool,
    /// The save's clock (IDMP IIDs expired at it are left out).
    pub now_ms: u64,
    /// The `redis-ver` aux field.
    pub redis_ver: String,
    /// The `ctime` aux field (Unix seconds).
    pub ctime_s: u64,
    /// The `used-mem` aux field.
    pub used_mem: u64,
    /// The `aof-base` aux field: the file is an AOF base.
    pub aof_base: bool,
    /// The function libraries' codes, one `FUNCTION2` record each.
    pub functions: Vec<Bytes>,
    /// Redis's `rdb-key-save-delay`, a testing knob: a pause after each key written, in
    /// microseconds (negative `-n`: 1 µs after one key in `n`). 0 in production.
    pub key_save_delay_us: i64,
}

/// Pauses after the `written`th key as `rdb-key-save-delay` asks (`delay_us`, see
/// [`SaveOptions::key_save_delay_us`]).
pub fn key_save_delay(delay_us: i64, written: u64) {
    let us = match delay_us {
        0 => return,
        n if n > 0 => n.unsigned_abs(),
        n if written % n.unsigned_abs() == 0 => 1,
        _ => return,
    };
    std::thread::sleep(std::time::Duration::from_micros(us));
}

/// Writes into `out`, counting the bytes.
struct Counted<'a, W: Write> {
    out: &'a mut W,
    written: u64,
}

impl<W: SaveOutput> SaveOutput for Counted<'_, W> {
    fn sync_written(&mut self) -> io::Result<()> {
        self.out.sync_written()
    }
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = self.out.write(bytes)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn aux(w: &mut Writer, name: &str, value: &str) {
    w.byte(opcodes::AUX);
    w.string(name.as_bytes());
    w.string(value.as_bytes());
}

/// Writes `dbs` (index = database number) as an RDB file; returns the bytes written.
pub fn write(dbs: &[DbSnapshot], opts: &SaveOptions, out: &mut impl SaveOutput) -> io::Result<u64> {
    let refs: Vec<Vec<KeyRef<'_>>> = dbs
        .iter()
        .map(|keys| keys.iter().map(|(k, v, e)| (&k[..], v, *e)).collect())
        .collect();
    write_refs(&refs, opts, out)
}

/// [`write`] of borrowed keys.
pub fn write_refs(
    dbs: &[Vec<KeyRef<'_>>],
    opts: &SaveOptions,
    out: &mut impl SaveOutput,
) -> io::Result<u64> {
    write_each(
        dbs.len(),
        |index| dbs[index].iter().copied(),
        opts,
        out,
        None,
    )
}

/// [`write`] of the databases themselves, walked as they are: no list of their keys is built
/// (a BGSAVE's forked child writes from its image of the keyspace this way). `saved` counts
/// the keys written so far (INFO's `current_save_keys_processed`, read by another process).
pub fn write_dbs(
    dbs: &[crate::Db],
    opts: &SaveOptions,
    out: &mut impl SaveOutput,
    saved: &AtomicU64,
) -> io::Result<u64> {
    write_each(
        dbs.len(),
        |index| db_keys(&dbs[index]),
        opts,
        out,
        Some(saved),
    )
}

/// The keys of `db` to save, borrowed.
pub fn db_keys(db: &crate::Db) -> impl Iterator<Item = KeyRef<'_>> {
    db.keys()
        .filter_map(|key| Some((&key[..], db.get(key)?, db.expiry(key))))
}

/// Writes `count` databases, database `index`'s keys being `keys(index)` (walked twice: once
/// to count them for RESIZEDB, once to write them).
fn write_each<'a, I: Iterator<Item = KeyRef<'a>>>(
    count: usize,
    keys: impl Fn(usize) -> I,
    opts: &SaveOptions,
    out: &mut impl SaveOutput,
    saved: Option<&AtomicU64>,
) -> io::Result<u64> {
    let mut sink = Counted { out, written: 0 };
    // The writer keeps the checksum (parts encoded on other threads are checksummed there),
    // and writes to `sink` as it goes (a large stream's nodes too, while a second thread
    // encodes the rest: see `nodes::write`).
    let mut w = Writer::with_checksum(opts.compress, opts.checksum).spilling_into(&mut sink);
    let mut written = 0u64;
    w.raw(format!("REDIS{RDB_VERSION:04}").as_bytes());
    aux(&mut w, "redis-ver", &opts.redis_ver);
    aux(&mut w, "redis-bits", "64");
    aux(&mut w, "ctime", &opts.ctime_s.to_string());
    aux(&mut w, "used-mem", &opts.used_mem.to_string());
    aux(&mut w, "aof-base", if opts.aof_base { "1" } else { "0" });
    for code in &opts.functions {
        w.byte(opcodes::FUNCTION2);
        w.string(code);
    }
    for index in 0..count {
        let (len, expiring) = keys(index).fold((0u64, 0u64), |(n, e), (_, _, at)| {
            (n + 1, e + u64::from(at.is_some()))
        });
        if len == 0 {
            continue;
        }
        w.byte(opcodes::SELECTDB);
        w.len(index as u64);
        w.byte(opcodes::RESIZEDB);
        w.len(len);
        w.len(expiring);
        for (key, value, expiry) in keys(index) {
            if let Some(at) = expiry {
                w.byte(opcodes::EXPIRETIME_MS);
                w.millis(at as i64);
            }
            w.byte(value::type_of(value));
            w.string(key);
            value::write(value, opts.now_ms, &mut w);
            w.spill();
            if let Some(saved) = saved {
                saved.fetch_add(1, Ordering::Relaxed);
            }
            written += 1;
            key_save_delay(opts.key_save_delay_us, written);
        }
    }
    w.byte(opcodes::EOF);
    // 0 without `checksum`.
    let crc = w.crc();
    w.finish_spill()?;
    drop(w);
    sink.write_all(&crc.to_le_bytes())?;
    Ok(sink.written)
}

/// How a file is read.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// The load's clock: keys expired at it are dropped (with `drop_expired`), and IIDs.
    pub now_ms: u64,
    /// `databases`: a SELECTDB at or above it is refused.
    pub databases: usize,
    /// Drop keys whose expiry has passed (a primary's load; not an AOF base's).
    pub drop_expired: bool,
    /// The encoding settings values are built under.
    pub limits: super::LoadLimits,
}

/// A file's content.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Keys per database (index = database number, `databases` entries).
    pub dbs: Vec<DbSnapshot>,
    /// The file's RDB version.
    pub version: u32,
    /// The aux fields, in file order.
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    /// The function libraries' codes, in file order.
    pub functions: Vec<Bytes>,
    /// Keys stored (`rdb_last_load_keys_loaded`).
    pub keys_loaded: u64,
    /// Keys dropped as expired (`rdb_last_load_keys_expired`).
    pub keys_expired: u64,
    /// Bytes the file took up to and including its checksum.
    pub bytes: usize,
}

/// Reads a whole RDB file.
pub fn read(data: &[u8], opts: &LoadOptions) -> Result<Loaded, RdbError> {
    if data.len() < PARALLEL_CRC_BYTES {
        return read_with(data, opts, None);
    }
    // The checksum of a well-formed file covers all but its last 8 bytes: computed on a
    // second thread while the body is decoded (and again here if the body ends elsewhere).
    let body = &data[..data.len() - 8];
    std::thread::scope(|scope| {
        let crc = std::thread::Builder::new()
            .name("rdb-crc".into())
            .spawn_scoped(scope, || crc64(0, body))
            .ok();
        read_with(data, opts, crc)
    })
}

/// Files from which [`read`] computes the checksum on a second thread.
const PARALLEL_CRC_BYTES: usize = 1 << 20;

fn read_with(
    data: &[u8],
    opts: &LoadOptions,
    crc_of_all_but_8: Option<std::thread::ScopedJoinHandle<'_, u64>>,
) -> Result<Loaded, RdbError> {
    let mut r = Reader::new(data);
    let magic = r.take(9).map_err(|_| RdbError::BadMagic)?;
    if &magic[..5] != b"REDIS" {
        return Err(RdbError::BadMagic);
    }
    let version: u32 = std::str::from_utf8(&magic[5..])
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or(RdbError::BadMagic)?;
    if version < 1 || version > u32::from(RDB_VERSION_READ) {
        return Err(RdbError::Version(version));
    }
    let mut loaded = Loaded {
        dbs: (0..opts.databases).map(|_| Vec::new()).collect(),
        version,
        ..Loaded::default()
    };
    let mut seen: Vec<HashSet<Bytes>> = (0..opts.databases).map(|_| HashSet::new()).collect();
    let mut db = 0usize;
    let mut expiry: Option<i64> = None;
    loop {
        let at = r.offset();
        let t = r.byte()?;
        match t {
            opcodes::EXPIRETIME => {
                expiry = Some(i64::from(r.seconds()?).saturating_mul(1000));
                continue;
            }
            opcodes::EXPIRETIME_MS => {
                expiry = Some(r.millis()?);
                continue;
            }
            opcodes::FREQ => {
                r.byte()?;
                continue;
            }
            opcodes::IDLE => {
                r.length()?;
                continue;
            }
            opcodes::EOF => break,
            opcodes::SELECTDB => {
                let index = r.length()?;
                db = usize::try_from(index)
                    .ok()
                    .filter(|&i| i < opts.databases)
                    .ok_or(RdbError::DbIndex(opts.databases))?;
                continue;
            }
            opcodes::RESIZEDB => {
                r.length()?;
                r.length()?;
                continue;
            }
            opcodes::SLOT_INFO => {
                r.length()?;
                r.length()?;
                r.length()?;
                continue;
            }
            opcodes::AUX => {
                let name = r.string()?;
                let value = r.string()?;
                loaded.aux.push((name, value));
                continue;
            }
            opcodes::MODULE_AUX | opcodes::KEY_META => return Err(RdbError::UnsupportedType(t)),
            opcodes::FUNCTION2 => {
                loaded.functions.push(Bytes::from(r.string()?));
                continue;
            }
            opcodes::FUNCTION_PRE_GA => {
                return Err(RdbError::Corrupt {
                    offset: at,
                    what: "Pre-GA function format not supported".into(),
                });
            }
            _ => {}
        }
        let key = Bytes::from(r.string()?);
        let value = value::read(&mut r, t, opts.now_ms, &opts.limits)?;
        let expire_at = expiry.take().map(|ms| ms.max(0) as u64);
        if !seen[db].insert(key.clone()) {
            return Err(RdbError::DuplicateKey(db));
        }
        if opts.drop_expired && expire_at.is_some_and(|at| at < opts.now_ms) {
            loaded.keys_expired += 1;
            continue;
        }
        loaded.keys_loaded += 1;
        loaded.dbs[db].push((key, value, expire_at));
    }
    if version >= 5 {
        let body_end = r.offset();
        let stored = u64::from_le_bytes(r.array()?);
        if stored != 0 {
            let found = match crc_of_all_but_8.map(|h| h.join()) {
                Some(Ok(crc)) if body_end + 8 == data.len() => crc,
                _ => crc64(0, &data[..body_end]),
            };
            if found != stored {
                return Err(RdbError::Checksum {
                    expected: stored,
                    found,
                });
            }
        }
    }
    loaded.bytes = r.offset();
    Ok(loaded)
}

//! The base file of a rewrite: the keyspace as the fewest commands that rebuild it, in the
//! forms Redis 8.8's `rewriteStreamObject` writes (so Redis loads our base and we load its):
//!
//! - per entry `XADD key id f v …` (an empty stream: `XADD key MAXLEN 0 0-1 x y`), then
//!   `XSETID key last ENTRIESADDED n MAXDELETEDID id`;
//! - per group `XGROUP CREATE key group last ENTRIESREAD n`, per pending entry
//!   `XCLAIM key group owner 0 id TIME t RETRYCOUNT n JUSTID FORCE`, per consumer without
//!   pending entries `XGROUP CREATECONSUMER key group consumer`;
//! - `XCFGSET key IDMP-DURATION d IDMP-MAXSIZE m` when the stream's IDMP bounds differ from
//!   the server's, and `XIDMPRECORD key pid iid id` per IDMP record whose entry still exists;
//! - strings as `SET key value`, with `PXAT ms` when they expire; a stream that expires is
//!   followed by `PEXPIREAT key ms`, as Redis rewrites an expiry;
//! - hashes as HMSET batches (with field TTLs: HMSET and `HPEXPIREAT key ms FIELDS 1 field`
//!   per field), sets as SADD batches, 64 items per command, as Redis.
//!
//! It runs in the rewrite's forked child, on the keyspace borrowed from the child's image of
//! the parent's memory (`crate::persist::fork`).

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use echomq_engine::config::IdmpConfig;
use echomq_engine::rdb::file::db_keys;
use echomq_engine::{Db, Stream, StreamId, Value};

use super::codec::encode;

fn id(id: StreamId) -> Bytes {
    Bytes::from(id.to_string())
}

fn num(n: impl ToString) -> Bytes {
    Bytes::from(n.to_string())
}

fn lit(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

/// Writes the commands that rebuild `dbs` to `out`, walking them as they are (nothing is
/// copied, no list of keys is built); `saved` counts the keys written, and each is followed
/// by `rdb-key-save-delay`'s pause (`key_save_delay_us`).
pub(crate) fn write_base(
    dbs: &[Db],
    functions: &[Bytes],
    idmp: IdmpConfig,
    key_save_delay_us: i64,
    out: &mut impl Write,
    saved: &AtomicU64,
) -> io::Result<()> {
    /// Flush the buffer to `out` past this many bytes.
    const CHUNK_BYTES: usize = 1 << 20;
    let mut buf = Vec::with_capacity(CHUNK_BYTES);
    // Redis's `rewriteFunctions`: each library first, as the FUNCTION LOAD that made it.
    for code in functions {
        encode(&[lit("FUNCTION"), lit("LOAD"), code.clone()], &mut buf);
    }
    for (index, db) in dbs.iter().enumerate() {
        if db_keys(db).next().is_none() {
            continue;
        }
        encode(&[lit("SELECT"), num(index)], &mut buf);
        for (key, value, expiry) in db_keys(db) {
            let key = &Bytes::copy_from_slice(key);
            match value {
                Value::String(v) => {
                    let mut argv = vec![lit("SET"), key.clone(), v.to_bytes()];
                    if let Some(at) = expiry {
                        argv.extend([lit("PXAT"), num(at)]);
                    }
                    encode(&argv, &mut buf);
                }
                Value::Hash(h) => {
                    write_hash(key, h, &mut buf);
                    if let Some(at) = expiry {
                        encode(&[lit("PEXPIREAT"), key.clone(), num(at)], &mut buf);
                    }
                }
                Value::Set(set) => {
                    for batch in set.members().chunks(ITEMS_PER_CMD) {
                        let mut argv = vec![lit("SADD"), key.clone()];
                        argv.extend(batch.iter().cloned());
                        encode(&argv, &mut buf);
                    }
                    if let Some(at) = expiry {
                        encode(&[lit("PEXPIREAT"), key.clone(), num(at)], &mut buf);
                    }
                }
                Value::ZSet(z) => {
                    // Redis's rewriteSortedSetObject: ZADD batches of score-member pairs.
                    let entries: Vec<_> = z.order().iter().collect();
                    for batch in entries.chunks(ITEMS_PER_CMD) {
                        let mut argv = vec![lit("ZADD"), key.clone()];
                        for e in batch {
                            argv.push(Bytes::from(echomq_engine::types::zset::score::format(
                                e.score,
                            )));
                            argv.push(Bytes::copy_from_slice(e.member));
                        }
                        encode(&argv, &mut buf);
                    }
                    if let Some(at) = expiry {
                        encode(&[lit("PEXPIREAT"), key.clone(), num(at)], &mut buf);
                    }
                }
                Value::Stream(s) => {
                    write_stream(key, s, idmp, &mut buf, out)?;
                    if let Some(at) = expiry {
                        encode(&[lit("PEXPIREAT"), key.clone(), num(at)], &mut buf);
                    }
                }
                Value::List(list) => {
                    // Redis's rewriteListObject: RPUSH batches of AOF_REWRITE_ITEMS_PER_CMD.
                    const ITEMS_PER_CMD: usize = 64;
                    for chunk in list.to_vec().chunks(ITEMS_PER_CMD) {
                        let mut argv = vec![lit("RPUSH"), key.clone()];
                        argv.extend(chunk.iter().cloned());
                        encode(&argv, &mut buf);
                    }
                    if let Some(at) = expiry {
                        encode(&[lit("PEXPIREAT"), key.clone(), num(at)], &mut buf);
                    }
                }
            }
            let written = saved.fetch_add(1, Ordering::Relaxed) + 1;
            echomq_engine::rdb::file::key_save_delay(key_save_delay_us, written);
            if buf.len() >= CHUNK_BYTES {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    out.write_all(&buf)
}

/// Members or fields per rewritten SADD / HMSET (Redis's `AOF_REWRITE_ITEMS_PER_CMD`).
const ITEMS_PER_CMD: usize = 64;

/// A hash as Redis 8.8's `rewriteHashObject` writes it: HMSET batches, or, when a field has
/// a TTL, one HMSET per field followed by `HPEXPIREAT key ms FIELDS 1 field` for those with
/// one.
fn write_hash(key: &Bytes, h: &echomq_engine::types::hash::Hash, buf: &mut Vec<u8>) {
    let fields: Vec<_> = h.entries().collect();
    if !h.has_ttls() {
        for batch in fields.chunks(ITEMS_PER_CMD) {
            let mut argv = vec![lit("HMSET"), key.clone()];
            for (f, v, _) in batch {
                argv.push(Bytes::copy_from_slice(f));
                argv.push(Bytes::copy_from_slice(v));
            }
            encode(&argv, buf);
        }
        return;
    }
    for (f, v, at) in fields {
        let field = Bytes::copy_from_slice(f);
        encode(
            &[
                lit("HMSET"),
                key.clone(),
                field.clone(),
                Bytes::copy_from_slice(v),
            ],
            buf,
        );
        if let Some(at) = at {
            encode(
                &[
                    lit("HPEXPIREAT"),
                    key.clone(),
                    num(at),
                    lit("FIELDS"),
                    lit("1"),
                    field,
                ],
                buf,
            );
        }
    }
}

fn write_stream(
    key: &Bytes,
    s: &Stream,
    idmp: IdmpConfig,
    buf: &mut Vec<u8>,
    out: &mut impl Write,
) -> io::Result<()> {
    if s.is_empty() {
        encode(
            &[
                lit("XADD"),
                key.clone(),
                lit("MAXLEN"),
                lit("0"),
                lit("0-1"),
                lit("x"),
                lit("y"),
            ],
            buf,
        );
    }
    for entry in s.range(StreamId::MIN, StreamId::MAX) {
        let mut argv = vec![lit("XADD"), key.clone(), id(entry.id)];
        for (f, v) in entry.fields() {
            argv.push(Bytes::copy_from_slice(f));
            argv.push(Bytes::copy_from_slice(v));
        }
        encode(&argv, buf);
        if buf.len() >= 1 << 20 {
            out.write_all(buf)?;
            buf.clear();
        }
    }
    encode(
        &[
            lit("XSETID"),
            key.clone(),
            id(s.last_id()),
            lit("ENTRIESADDED"),
            num(s.entries_added()),
            lit("MAXDELETEDID"),
            id(s.max_deleted_entry_id()),
        ],
        buf,
    );
    for (name, group) in s.groups() {
        encode(
            &[
                lit("XGROUP"),
                lit("CREATE"),
                key.clone(),
                name.clone(),
                id(group.last_id),
                lit("ENTRIESREAD"),
                num(group.entries_read.unwrap_or(-1)),
            ],
            buf,
        );
        for (consumer, state) in group.consumers() {
            let consumer = Bytes::copy_from_slice(consumer.as_bytes());
            if state.pending_count() == 0 {
                encode(
                    &[
                        lit("XGROUP"),
                        lit("CREATECONSUMER"),
                        key.clone(),
                        name.clone(),
                        consumer,
                    ],
                    buf,
                );
                continue;
            }
            for pending in state.pending_ids() {
                let Some(nack) = group.nack(pending) else {
                    continue;
                };
                encode(
                    &[
                        lit("XCLAIM"),
                        key.clone(),
                        name.clone(),
                        consumer.clone(),
                        lit("0"),
                        id(pending),
                        lit("TIME"),
                        num(nack.delivery_time),
                        lit("RETRYCOUNT"),
                        num(nack.delivery_count),
                        lit("JUSTID"),
                        lit("FORCE"),
                    ],
                    buf,
                );
            }
        }
    }
    let config = s.idmp().config();
    if config != idmp {
        encode(
            &[
                lit("XCFGSET"),
                key.clone(),
                lit("IDMP-DURATION"),
                num(config.duration_s),
                lit("IDMP-MAXSIZE"),
                num(config.maxsize),
            ],
            buf,
        );
    }
    for (pid, iid, entry) in s.idmp().iter() {
        if s.get(entry).is_some() {
            encode(
                &[
                    lit("XIDMPRECORD"),
                    key.clone(),
                    Bytes::copy_from_slice(pid),
                    Bytes::copy_from_slice(iid),
                    id(entry),
                ],
                buf,
            );
        }
    }
    Ok(())
}

//! `MSETEX numkeys key value [key value ...] [NX|XX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`
//! (Redis 8.4+): MSET with one condition and one time for every key.
//!
//! Checked in Redis's order: `numkeys` an integer from 1 to `i32::MAX` (`ERR invalid numkeys
//! value`), enough arguments for its pairs (`ERR wrong number of key-value pairs`), the option
//! words ([`Options`], `ERR syntax error`), the time (`ERR value is not an integer or out of
//! range`, `ERR invalid expire time in 'msetex' command`). Then NX (every key missing) or XX
//! (every key present) refuses with 0, storing nothing.
//!
//! Effects as Redis 8.8's `msetexCommand`: each pair stored as SET does (`new` or
//! `overwritten`; the time set, or the old one kept with KEEPTTL), `expire` (when a time was
//! given) then `set` fired per key; one change per pair; propagated verbatim but for EX or PX,
//! rewritten in place to `PXAT ms`. Reply 1.

use bytes::Bytes;

use super::set::{Grammar, Options, Unit, expire_at};
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, STRING};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

/// MSETEX.
#[derive(Debug)]
pub struct MSetEx;

impl MSetEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let pairs = parse_i64(argv[1])
            .ok()
            .filter(|n| (1..=i64::from(i32::MAX)).contains(n))
            .ok_or(Error::InvalidNumkeys)? as usize;
        let options_from = pairs * 2 + 2;
        if options_from > argv.len() {
            return Err(Error::KeyValuePairs);
        }
        let options = Options::parse(argv, options_from, Grammar::MSetEx)?;
        let expire = match options.expire {
            Some((arg, unit)) => Some((expire_at(arg, unit, snapshot.now_ms, "msetex")?, unit)),
            None => None,
        };
        let keys = || argv[2..options_from].chunks_exact(2).map(|pair| pair[0]);
        if (options.nx && keys().any(|k| db.get(k).is_some()))
            || (options.xx && keys().any(|k| db.get(k).is_none()))
        {
            return Ok(Reply::Int(0));
        }
        for pair in argv[2..options_from].chunks_exact(2) {
            let key = pair[0];
            let kept = if options.keep_ttl {
                db.expiry(key)
            } else {
                None
            };
            db.insert(key, Value::String(StringValue::from_arg(pair[1])));
            match expire {
                Some((at, _)) if !options.keep_ttl => {
                    db.set_expiry(key, Some(at));
                    db.notify(GENERIC, "expire", key);
                }
                _ => db.set_expiry(key, kept),
            }
            db.notify(STRING, "set", key);
        }
        db.add_dirty(pairs as u64);
        if db.propagating() {
            let mut form: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
            if let Some((at, Unit::Ex | Unit::Px)) = expire {
                form[options.expire_index] = Bytes::from_static(b"PXAT");
                form[options.expire_index + 1] = Bytes::from(at.to_string());
            }
            db.propagate(form);
        }
        Ok(Reply::Int(1))
    }
}

//! DEBUG, where `enable-debug-command` allows it (dispatch checks), with the subcommands
//! Redis 8.8's own test suites and tools send:
//!
//! - `DIGEST`, `DIGEST-VALUE key...`: Redis's digests, bit for bit
//!   ([`echomq_engine::debug_digest`]), so a dataset can be compared with Redis's by one line;
//! - `RELOAD [MERGE] [NOFLUSH] [NOSAVE]`: SAVE, empty the databases, load the file back;
//! - `OBJECT key`: Redis's line (`Value at:… refcount:1 encoding:… serializedlength:… lru:…
//!   lru_seconds_idle:…`), the serialized length being the value's RDB form;
//! - `PROTOCOL type`: one reply of each RESP type, as Redis sends them;
//! - `POPULATE count [prefix] [size]`: Redis's test keys (`key:0` … holding `value:0` …);
//! - `SLEEP seconds`, `SET-ACTIVE-EXPIRE 0|1` (the cron's active expiry off or on), `LOG`,
//!   `CHANGE-REPL-ID`;
//! - switches of internals echomq does not have, accepted as no-ops so the tests that set
//!   them run: `QUICKLIST-PACKED-THRESHOLD` (checked as Redis checks it), `REPLYBUFFER
//!   PEAK-RESET-TIME|RESIZING`, `SET-ALLOW-ACCESS-EXPIRED`, `SET-SKIP-CHECKSUM-VALIDATION`,
//!   `PAUSE-CRON`, `REPLY-COPY-AVOIDANCE`, `STRINGMATCH-TEST`; `LISTPACK key` and `QUICKLIST
//!   key` answer what Redis answers for a value that is not so encoded.
//!
//! Anything else is refused as a subcommand Redis does not know.

use std::sync::atomic::Ordering;

use echomq_engine::debug_digest::{dataset_digest, hex};
use echomq_engine::rdb::file::{self, LoadOptions};
use echomq_engine::{Db, Reply, StringValue, Value};

use super::{Ctx, error, int_arg, is};
use crate::error::CommandError;
use crate::resp::Protocol;

/// The longest DEBUG SLEEP.
const DEBUG_SLEEP_MAX: std::time::Duration = std::time::Duration::from_secs(10);

/// Redis's largest QUICKLIST-PACKED-THRESHOLD: just under 4 GiB.
const PACKED_THRESHOLD_MAX: u64 = (1 << 32) - (1 << 20);

/// Redis's LRU clock: seconds, in 24 bits.
const LRU_CLOCK_MAX: u64 = (1 << 24) - 1;

fn unknown(argv: &[&[u8]]) -> Reply {
    CommandError::DebugUnknownSubcommand(String::from_utf8_lossy(argv[1]).into_owned()).into()
}

/// `DEBUG subcommand [arg ...]`: see the module docs.
pub(crate) fn debug(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let sub = argv[1];
    let argc = argv.len();
    let named = |name: &str| is(sub, name);
    if named("sleep") && argc == 3 {
        sleep(argv[2])
    } else if named("log") && argc == 3 {
        tracing::warn!("DEBUG LOG: {}", String::from_utf8_lossy(argv[2]));
        Reply::OK
    } else if named("digest") && argc == 2 {
        let line = hex(&dataset_digest(ctx.dbs.all()));
        status(ctx, &line)
    } else if named("digest-value") {
        let db = ctx.db();
        let mut raw = format!("*{}\r\n", argc - 2);
        for key in &argv[2..] {
            raw.push_str(&format!("+{}\r\n", hex(&db.debug_digest_value(key))));
        }
        ctx.raw = Some(raw.into_bytes());
        Reply::Null
    } else if named("reload") {
        reload(ctx, argv)
    } else if named("object") && argc == 3 {
        object(ctx, argv[2])
    } else if named("protocol") && argc == 3 {
        protocol(ctx, argv[2])
    } else if named("populate") && (3..=5).contains(&argc) {
        populate(ctx, argv)
    } else if named("set-active-expire") && argc == 3 {
        ctx.state
            .active_expire()
            .store(atoi(argv[2]) != 0, Ordering::Relaxed);
        Reply::OK
    } else if named("change-repl-id") && argc == 2 {
        Reply::OK
    } else if named("quicklist-packed-threshold") && argc == 3 {
        match crate::state::settings::parse_memory(&String::from_utf8_lossy(argv[2])) {
            Some(bytes) if bytes <= PACKED_THRESHOLD_MAX => Reply::OK,
            _ => CommandError::PackedThreshold.into(),
        }
    } else if (named("listpack") && argc == 3) || (named("quicklist") && (argc == 3 || argc == 4)) {
        let listpack = named("listpack");
        // Redis prints the structure on its standard output; echomq has nothing to print but
        // answers as Redis does for the encoding.
        match ctx.db().get(argv[2]).map(super::object::encoding) {
            None => error(echomq_engine::Error::NoSuchKey),
            Some("listpack" | "listpackex") if listpack => {
                Reply::Status("Listpack structure printed on stdout")
            }
            Some(_) if listpack => CommandError::NotListpack.into(),
            Some("quicklist") => Reply::Status("Quicklist structure printed on stdout"),
            Some(_) => CommandError::NotQuicklist.into(),
        }
    } else if named("stringmatch-test") && argc == 2 {
        Reply::Status("Apparently Redis did not crash: test passed")
    } else if (named("set-allow-access-expired")
        || named("set-skip-checksum-validation")
        || named("pause-cron")
        || named("reply-copy-avoidance"))
        && argc == 3
    {
        Reply::OK
    } else if named("replybuffer") && argc == 4 {
        replybuffer(argv)
    } else {
        unknown(argv)
    }
}

/// C's `atoi`: the leading optional sign and digits, 0 without any.
fn atoi(text: &[u8]) -> i64 {
    let text = text.trim_ascii_start();
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let n = digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0i64, |n, b| {
            n.wrapping_mul(10).wrapping_add(i64::from(b - b'0'))
        });
    if negative { n.wrapping_neg() } else { n }
}

/// `DEBUG SLEEP seconds`: sleeps with the keyspace lock held, so every other client waits for
/// it, as in Redis (whose one thread sleeps), for at most [`DEBUG_SLEEP_MAX`] (Redis has no
/// cap: a typo must not stop the server for good, nor a fuzz input the fuzzer). The seconds
/// are read as C's `strtod` reads them; a negative figure does not sleep.
fn sleep(seconds: &[u8]) -> Reply {
    if let Ok(pause) =
        std::time::Duration::try_from_secs_f64(super::introspection::leading_f64(seconds))
    {
        std::thread::sleep(pause.min(DEBUG_SLEEP_MAX));
    }
    Reply::OK
}

/// `DEBUG REPLYBUFFER PEAK-RESET-TIME NEVER|RESET|ms` or `RESIZING 0|1`: accepted (echomq's
/// reply buffers are not Redis's), the millisecond figure checked as an integer.
fn replybuffer(argv: &[&[u8]]) -> Reply {
    if is(argv[2], "peak-reset-time") {
        if !is(argv[3], "never")
            && !is(argv[3], "reset")
            && let Err(reply) = int_arg(argv[3])
        {
            return reply;
        }
        Reply::OK
    } else if is(argv[2], "resizing") {
        Reply::OK
    } else {
        unknown(argv)
    }
}

/// `DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]`: saves the RDB file (unless NOSAVE), empties every
/// database (unless NOFLUSH), and loads the file back; a key already there is an error unless
/// MERGE.
fn reload(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let (mut merge, mut flush, mut save) = (false, true, true);
    for option in &argv[2..] {
        if is(option, "merge") {
            merge = true;
        } else if is(option, "noflush") {
            flush = false;
        } else if is(option, "nosave") {
            save = false;
        } else {
            return CommandError::DebugReloadOption.into();
        }
    }
    if save && ctx.state.save_for_reload(ctx.dbs.all()).is_err() {
        return Reply::Error("ERR".into());
    }
    let (path, databases) = {
        let settings = ctx.state.settings();
        (
            std::path::Path::new(&settings.dir).join(&settings.dbfilename),
            settings.databases as usize,
        )
    };
    let options = LoadOptions {
        now_ms: ctx.snapshot.now_ms,
        databases,
        drop_expired: true,
        limits: echomq_engine::rdb::LoadLimits {
            encoding: ctx.snapshot.encoding,
            list: ctx.snapshot.list,
        },
    };
    let loaded = std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|data| file::read(&data, &options).map_err(|e| e.to_string()));
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(reason) => {
            tracing::warn!(path = %path.display(), %reason, "DEBUG RELOAD could not load");
            return CommandError::DebugReloadFailed.into();
        }
    };
    if flush {
        for db in ctx.dbs.all().iter_mut() {
            db.clear();
        }
    } else if !merge {
        let duplicate = ctx
            .dbs
            .all()
            .iter()
            .zip(&loaded.dbs)
            .any(|(db, keys)| keys.iter().any(|(key, _, _)| db.get(key).is_some()));
        if duplicate {
            return CommandError::DebugReloadFailed.into();
        }
    }
    crate::persist::rdb::load::store(ctx.dbs.all(), loaded.dbs);
    tracing::info!("DB reloaded by DEBUG RELOAD");
    Reply::OK
}

/// A count DEBUG POPULATE takes: an integer, not negative; anything else is refused with
/// one message (Redis's `getPositiveLongFromObjectOrReply`, which passes its message on to the
/// integer parse too).
fn positive(arg: &[u8]) -> Result<u64, Reply> {
    echomq_engine::command::parse_i64(arg)
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| error(echomq_engine::Error::MustBePositive))
}

/// `DEBUG POPULATE count [prefix] [size]`: string keys `prefix:0` to `prefix:<count - 1>`
/// (`key` without a prefix) holding `value:N`, or with a size that text cut or padded with
/// zero bytes to `size` bytes; a key that exists is left as it is. As Redis's
/// (`debugCommand`), the prefix is read up to a zero byte and the key formatted into 128
/// bytes, so a longer one is cut at 127; no keyspace event but `new`, nothing propagated.
fn populate(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let count = match positive(argv[2]) {
        Ok(count) => count,
        Err(reply) => return reply,
    };
    // Redis sizes its table for the keys first and refuses what it cannot allocate; a
    // database holds fewer than 2^32 keys here.
    if count.saturating_add(ctx.db().len() as u64) >= u64::from(u32::MAX) {
        return CommandError::PopulateOutOfMemory.into();
    }
    let size = match argv.get(4).map(|arg| positive(arg)) {
        None => 0,
        Some(Ok(size)) => usize::try_from(size).unwrap_or(usize::MAX),
        Some(Err(reply)) => return reply,
    };
    let prefix = argv.get(3).map_or(&b"key"[..], |prefix| {
        prefix.split(|b| *b == 0).next().unwrap_or_default()
    });
    let db = ctx.db();
    let mut key = Vec::with_capacity(KEY_BYTES_MAX + 21);
    for j in 0..count {
        key.clear();
        key.extend_from_slice(prefix);
        key.extend_from_slice(format!(":{j}").as_bytes());
        key.truncate(KEY_BYTES_MAX);
        if db.get(&key).is_some() {
            continue;
        }
        let text = format!("value:{j}");
        let value = if size == 0 {
            StringValue::from_arg(text.as_bytes())
        } else {
            let mut bytes = vec![0; size];
            let n = size.min(text.len());
            bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
            StringValue::from_arg(&bytes)
        };
        db.insert(&key, Value::String(value));
    }
    Reply::OK
}

/// The longest key DEBUG POPULATE makes: Redis formats it into 128 bytes.
const KEY_BYTES_MAX: usize = 127;

/// `DEBUG OBJECT key`: Redis's line. echomq has no object addresses, reference counts or
/// access clock: the address is the key's hash, the count 1, the LRU the current LRU clock
/// and the idle time 0 (as OBJECT IDLETIME).
fn object(ctx: &mut Ctx<'_>, key: &[u8]) -> Reply {
    let now_ms = ctx.snapshot.now_ms;
    let compress = ctx.state.settings().rdbcompression;
    let db: &Db = ctx.db();
    let Some(value) = db.get(key) else {
        return error(echomq_engine::Error::NoSuchKey);
    };
    // The DUMP payload is the type byte, the value, 2 bytes of version and 8 of checksum.
    let serialized = echomq_engine::rdb::dump::dump(value, now_ms, compress).len() - 11;
    let address = key.iter().fold(0x7f00_0000_0000u64, |h, b| {
        h.wrapping_mul(31).wrapping_add(u64::from(*b))
    }) & 0x7fff_ffff_fff0;
    let line = format!(
        "Value at:0x{address:x} refcount:1 encoding:{} serializedlength:{serialized} lru:{} lru_seconds_idle:0",
        super::object::encoding(value),
        (now_ms / 1000) & LRU_CLOCK_MAX,
    );
    status(ctx, &line)
}

/// A status reply of text known only at run time (sent raw: [`Reply::Status`] holds static
/// text).
fn status(ctx: &mut Ctx<'_>, line: &str) -> Reply {
    ctx.raw = Some(format!("+{line}\r\n").into_bytes());
    Reply::Null
}

/// `DEBUG PROTOCOL type`: one reply of each RESP type, as Redis sends them (raw: RESP3's
/// doubles, big numbers, attributes and booleans have no [`Reply`] of their own).
fn protocol(ctx: &mut Ctx<'_>, name: &[u8]) -> Reply {
    let resp3 = ctx.client.protocol == Protocol::Resp3;
    let pick = |resp2: &str, resp3_form: &str| {
        if resp3 {
            resp3_form.to_string()
        } else {
            resp2.to_string()
        }
    };
    let real = "$39\r\nSome real reply following the attribute\r\n";
    let raw = if is(name, "string") {
        "$11\r\nHello World\r\n".to_string()
    } else if is(name, "integer") {
        ":12345\r\n".to_string()
    } else if is(name, "double") {
        pick("$5\r\n3.141\r\n", ",3.141\r\n")
    } else if is(name, "bignum") {
        pick(
            "$37\r\n1234567999999999999999999999999999999\r\n",
            "(1234567999999999999999999999999999999\r\n",
        )
    } else if is(name, "null") {
        pick("$-1\r\n", "_\r\n")
    } else if is(name, "array") {
        "*3\r\n:0\r\n:1\r\n:2\r\n".to_string()
    } else if is(name, "set") {
        pick("*3\r\n:0\r\n:1\r\n:2\r\n", "~3\r\n:0\r\n:1\r\n:2\r\n")
    } else if is(name, "map") {
        pick(
            "*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
            "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
        )
    } else if is(name, "attrib") {
        let attribute = "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n";
        pick(real, &format!("{attribute}{real}"))
    } else if is(name, "push") {
        if !resp3 {
            return CommandError::DebugPushResp2.into();
        }
        // Redis defers a client's own pushes until its command's reply is out.
        "$40\r\nSome real reply following the push reply\r\n>2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n"
            .to_string()
    } else if is(name, "true") {
        pick(":1\r\n", "#t\r\n")
    } else if is(name, "false") {
        pick(":0\r\n", "#f\r\n")
    } else if is(name, "verbatim") {
        pick(
            "$25\r\nThis is a verbatim\nstring\r\n",
            "=29\r\ntxt:This is a verbatim\nstring\r\n",
        )
    } else {
        return CommandError::DebugProtocolType.into();
    };
    ctx.raw = Some(raw.into_bytes());
    Reply::Null
}

#[cfg(test)]
mod tests {
    use super::atoi;

    #[test]
    fn atoi_reads_the_leading_integer_as_c_does() {
        assert_eq!(atoi(b"1"), 1);
        assert_eq!(atoi(b"0"), 0);
        assert_eq!(atoi(b"12abc"), 12);
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b" -3"), -3);
    }
}

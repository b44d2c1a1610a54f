//! The engine's one error type.
//!
//! Every variant's `Display` is the exact text Redis sends, including the error code prefix
//! (`ERR`, `WRONGTYPE`, `NOGROUP`, `BUSYGROUP`), so the server writes `-{error}\r\n` and clients
//! that match on Redis's strings keep working. A failed operation never changes the keyspace.

use thiserror::Error;

/// An error returned by an engine operation or by the stream-command parser.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// An id argument that does not parse in its context.
    #[error("ERR Invalid stream ID specified as stream command argument")]
    InvalidStreamId,
    /// `XADD` with an explicit id at or below the stream's `last_id`.
    #[error("ERR The ID specified in XADD is equal or smaller than the target stream top item")]
    XaddIdTooSmall,
    /// `XADD 0-0` (checked before the key is touched).
    #[error("ERR The ID specified in XADD must be greater than 0-0")]
    XaddIdZero,
    /// The stream's `last_id` is `u64::MAX-u64::MAX`: no id is left for `*`.
    #[error("ERR The stream has exhausted the last possible ID, unable to add more items")]
    StreamExhausted,
    /// Fields and values of one entry add up to more than 1 GiB.
    #[error("ERR Elements are too large to be stored")]
    ElementsTooLarge,
    /// A key holds a value of another type.
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    /// ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD with numkeys below 1; carries
    /// the command's name.
    #[error("ERR at least 1 input key is needed for '{0}' command")]
    AtLeastOneKey(String),
    /// GEOADD's point outside the indexed area; carries `lon,lat` with six decimals.
    #[error("ERR invalid longitude,latitude pair {0}")]
    InvalidLonLat(String),
    /// GEORADIUS's STORE or GEOSEARCHSTORE with a WITH* option; carries which.
    #[error("ERR {0} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")]
    GeoStoreWith(&'static str),
    /// GEOSEARCH without its FROM* or BY* part; carries the pair and the command as called.
    #[error("ERR exactly one of {0} can be specified for {1}")]
    GeoExactlyOne(&'static str, String),
    /// Plain `ERR syntax error`.
    #[error("ERR syntax error")]
    Syntax,
    /// An argument that should be an integer is not one (or is out of range).
    #[error("ERR value is not an integer or out of range")]
    NotAnInteger,
    /// Wrong argument count; carries the lower-case command name (`xadd`, `xgroup|create`).
    #[error("ERR wrong number of arguments for '{0}' command")]
    WrongArity(String),
    /// `MAXLEN` below zero.
    #[error("ERR The MAXLEN argument must be >= 0.")]
    MaxlenNegative,
    /// `LIMIT` below zero.
    #[error("ERR The LIMIT argument must be >= 0.")]
    LimitNegative,
    /// `MAXLEN` and `MINID` together, or either one twice.
    #[error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")]
    MaxlenAndMinid,
    /// A non-zero `LIMIT` without `MAXLEN` or `MINID`.
    #[error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")]
    LimitWithoutStrategy,
    /// `LIMIT` in exact (`=` or default) mode, `LIMIT 0` included.
    #[error("ERR syntax error, LIMIT cannot be used without the special ~ option")]
    LimitWithoutApprox,
    /// `XTRIM key` with options but no strategy.
    #[error("ERR syntax error, XTRIM must be called with a trimming strategy")]
    XtrimWithoutStrategy,
    /// `(max-max` as a range start.
    #[error("ERR invalid start ID for the interval")]
    InvalidStartInterval,
    /// `(0-0` as a range end.
    #[error("ERR invalid end ID for the interval")]
    InvalidEndInterval,
    /// `XINFO` / `XSETID` on a missing key.
    #[error("ERR no such key")]
    NoSuchKey,
    /// `XSETID` below the last live entry.
    #[error("ERR The ID specified in XSETID is smaller than the target stream top item")]
    XsetidBelowTop,
    /// `XSETID` below the stream's current `max_deleted_entry_id`.
    #[error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")]
    XsetidBelowMaxDeleted,
    /// `XSETID id MAXDELETEDID m` with `id < m`.
    #[error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")]
    XsetidBelowGivenMaxDeleted,
    /// `XSETID ... ENTRIESADDED n` with `n` below the stream length.
    #[error("ERR The entries_added specified in XSETID is smaller than the target stream length")]
    XsetidEntriesAddedBelowLength,
    /// `XSETID ... ENTRIESADDED n` with `n < 0`.
    #[error("ERR entries_added must be positive")]
    EntriesAddedNegative,
    /// XGROUP SETID/CREATECONSUMER/DELCONSUMER or XINFO CONSUMERS on a missing group.
    #[error("NOGROUP No such consumer group '{group}' for key name '{key}'")]
    NoGroupForKey {
        /// The key as sent.
        key: String,
        /// The group as sent.
        group: String,
    },
    /// XPENDING, XCLAIM or XAUTOCLAIM on a missing key or group.
    #[error("NOGROUP No such key '{key}' or consumer group '{group}'")]
    NoKeyOrGroup {
        /// The key as sent.
        key: String,
        /// The group as sent.
        group: String,
    },
    /// XREADGROUP on a missing key or group.
    #[error(
        "NOGROUP No such key '{key}' or consumer group '{group}' in XREADGROUP with GROUP option"
    )]
    NoKeyOrGroupXreadgroup {
        /// The key as sent.
        key: String,
        /// The group as sent.
        group: String,
    },
    /// XGROUP CREATE of an existing group.
    #[error("BUSYGROUP Consumer Group name already exists")]
    BusyGroup,
    /// An XGROUP subcommand other than CREATE ... MKSTREAM on a missing key.
    #[error(
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
    )]
    XgroupKeyMissing,
    /// ENTRIESREAD below -1.
    #[error("ERR value for ENTRIESREAD must be positive or -1")]
    EntriesReadInvalid,
    /// A subcommand with bad options or argument count; carries the subcommand as typed and
    /// the upper-case command.
    #[error("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try {command} HELP.")]
    SubcommandSyntax {
        /// The subcommand as typed.
        sub: String,
        /// The command, upper case.
        command: &'static str,
    },
    /// An unknown subcommand.
    #[error("ERR unknown subcommand '{sub}'. Try {command} HELP.")]
    UnknownSubcommand {
        /// The subcommand as typed.
        sub: String,
        /// The command, upper case.
        command: &'static str,
    },
    /// GROUP given to XREAD.
    #[error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")]
    GroupOnlyInXreadgroup,
    /// NOACK given to XREAD.
    #[error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")]
    NoackOnlyInXreadgroup,
    /// XREAD with an odd number of keys and ids.
    #[error(
        "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified."
    )]
    UnbalancedXread,
    /// XREADGROUP with an odd number of keys and ids.
    #[error(
        "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified."
    )]
    UnbalancedXreadgroup,
    /// `>` given to XREAD.
    #[error(
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
    )]
    GtOnlyInXreadgroup,
    /// XREADGROUP without GROUP.
    #[error("ERR Missing GROUP option for XREADGROUP")]
    MissingGroup,
    /// `$` or `+` given to XREADGROUP; carries the symbol.
    #[error(
        "ERR The {0} ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The {0} ID would just return an empty result set."
    )]
    MeaninglessIdInXreadgroup(char),
    /// A BLOCK timeout that is not an integer.
    #[error("ERR timeout is not an integer or out of range")]
    TimeoutNotInteger,
    /// A negative BLOCK timeout.
    #[error("ERR timeout is negative")]
    TimeoutNegative,
    /// A BLOCK timeout whose deadline (now + timeout) would overflow.
    #[error("ERR timeout is out of range")]
    TimeoutOutOfRange,
    /// XAUTOCLAIM COUNT out of range.
    #[error("ERR COUNT must be > 0")]
    CountNotPositive,
    /// A bad min-idle-time; carries the command (XCLAIM or XAUTOCLAIM).
    #[error("ERR Invalid min-idle-time argument for {0}")]
    InvalidMinIdle(&'static str),
    /// A bad XCLAIM option value; carries the option (IDLE, TIME or RETRYCOUNT).
    #[error("ERR Invalid {0} option argument for XCLAIM")]
    InvalidClaimOption(&'static str),
    /// An unknown XCLAIM option.
    #[error("ERR Unrecognized XCLAIM option '{0}'")]
    UnrecognizedClaimOption(String),
    /// An unknown command name, and its first arguments when it has any (Redis 8.8's
    /// `commandCheckExistence`: a call without arguments gets no "with args" part).
    #[error("ERR unknown command '{name}'{}", with_args(.args))]
    UnknownCommand {
        /// The command name as sent.
        name: String,
        /// The first arguments, each as `'arg' `, as Redis prints them; empty when the call
        /// has none (an empty argument shows as `'' `).
        args: String,
    },
    /// XADD with IDMP or IDMPAUTO given twice (in any combination).
    #[error("ERR syntax error, IDMP/IDMPAUTO specified multiple times")]
    IdmpRepeated,
    /// `XADD ... IDMP "" iid`.
    #[error("ERR syntax error, IDMP requires a non-empty producer ID")]
    IdmpEmptyPid,
    /// `XADD ... IDMP pid ""`.
    #[error("ERR syntax error, IDMP requires a non-empty idempotent ID")]
    IdmpEmptyIid,
    /// `XADD ... IDMPAUTO ""`.
    #[error("ERR syntax error, IDMPAUTO requires a non-empty producer ID")]
    IdmpAutoEmptyPid,
    /// XADD with IDMP or IDMPAUTO and an id other than `*`.
    #[error("ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs")]
    IdmpNeedsAutoId,
    /// XCFGSET IDMP-DURATION outside 1..=86400.
    #[error("ERR IDMP-DURATION must be between 1 and 86400 seconds")]
    IdmpDurationRange,
    /// XCFGSET IDMP-MAXSIZE outside 1..=10000.
    #[error("ERR IDMP-MAXSIZE must be between 1 and 10000 entries")]
    IdmpMaxsizeRange,
    /// XCFGSET with IDMP-DURATION twice.
    #[error("ERR IDMP-DURATION specified multiple times")]
    IdmpDurationRepeated,
    /// XCFGSET with IDMP-MAXSIZE twice.
    #[error("ERR IDMP-MAXSIZE specified multiple times")]
    IdmpMaxsizeRepeated,
    /// `XCFGSET key` alone.
    #[error("ERR At least one parameter must be specified")]
    XcfgsetNothing,
    /// XIDMPRECORD with an empty producer id.
    #[error("ERR producer ID must be non-empty")]
    XidmprecordEmptyPid,
    /// XIDMPRECORD with an empty idempotent id.
    #[error("ERR idempotent ID must be non-empty")]
    XidmprecordEmptyIid,
    /// XIDMPRECORD naming an entry the stream does not hold.
    #[error("ERR No such message in stream")]
    NoSuchMessage,
    /// XIDMPRECORD of a pid/iid pair already mapped to another id.
    #[error("ERR IID already exists for this producer with a different stream ID")]
    IidConflict,
    /// A configuration parameter that does not exist or cannot be set.
    #[error("ERR Unknown option or number of arguments for CONFIG SET - '{0}'")]
    UnknownConfig(String),
    /// A configuration value out of its range.
    #[error(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - argument must be between {min} and {max} inclusive"
    )]
    ConfigOutOfRange {
        /// The parameter name.
        name: String,
        /// The smallest accepted value.
        min: i64,
        /// The largest accepted value.
        max: i64,
    },
    // Redis 8.2–8.8 consumer-group commands (XDELEX, XACKDEL, XREADGROUP CLAIM, XNACK).
    /// XDELEX/XACKDEL: `IDS numids` with numids not an integer from 1 up.
    #[error("ERR Number of IDs must be a positive integer")]
    NumIdsNotPositive,
    /// XDELEX/XACKDEL: fewer ids than numids.
    #[error("ERR The `numids` parameter must match the number of arguments")]
    NumIdsMismatch,
    /// XDELEX/XACKDEL without an IDS block.
    #[error("ERR IDS option is required")]
    IdsRequired,
    /// XREAD/XREADGROUP MAXCOUNT not a positive integer (Redis 8.10).
    #[error("ERR MAXCOUNT must be a positive integer")]
    MaxCountNotPositive,
    /// XREAD/XREADGROUP MAXSIZE not a positive integer (Redis 8.10).
    #[error("ERR MAXSIZE must be a positive integer")]
    MaxSizeNotPositive,
    /// XREAD/XREADGROUP MAXCOUNT below COUNT (Redis 8.10).
    #[error("ERR MAXCOUNT must be greater than or equal to COUNT")]
    MaxCountBelowCount,
    /// XREADGROUP CLAIM with a value that is not an integer.
    #[error("ERR min-idle-time is not an integer or out of range")]
    ClaimNotInteger,
    /// XREADGROUP CLAIM with a negative value.
    #[error("ERR min-idle-time must be a positive integer")]
    ClaimNegative,
    /// CLAIM given to XREAD.
    #[error("ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")]
    ClaimOnlyInXreadgroup,
    /// XNACK's mode is not SILENT, FAIL or FATAL.
    #[error("ERR mode must be SILENT, FAIL, or FATAL")]
    NackMode,
    /// XNACK's numids is not an integer from 1 to INT_MAX.
    #[error("ERR numids must be a positive integer")]
    NackNumIds,
    /// XNACK: fewer ids than numids.
    #[error("ERR number of IDs doesn't match numids")]
    NackNumIdsMismatch,
    /// XNACK RETRYCOUNT below 0.
    #[error("ERR Invalid RETRYCOUNT value, must be >= 0")]
    NackRetryCountNegative,
    /// XNACK: a token that is no option.
    #[error("ERR Unrecognized XNACK option '{0}'")]
    NackUnrecognized(String),
    /// XNACK without an IDS block.
    #[error("ERR syntax error, expected IDS keyword")]
    NackExpectedIds,
    /// A [`crate::TrimHook`] refused or failed a trim: the whole reply text, prefix included
    /// (the server's archive answers `MISCONF ...` or `ERR archive: ...`).
    #[error("{0}")]
    TrimRefused(String),
    /// An expiry (SET EX/PX/EXAT/PXAT, EXPIRE and its family) out of range; carries the
    /// command, lower case.
    #[error("ERR invalid expire time in '{0}' command")]
    InvalidExpireTime(&'static str),
    /// INCR past `i64`.
    #[error("ERR increment or decrement would overflow")]
    IncrOverflow,
    /// An EXPIRE-family condition that is none of NX, XX, GT, LT; carries it as sent.
    #[error("ERR Unsupported option {0}")]
    UnsupportedOption(String),
    /// NX with XX, GT or LT.
    #[error("ERR NX and XX, GT or LT options at the same time are not compatible")]
    NxWithXxGtLt,
    /// GT with LT.
    #[error("ERR GT and LT options at the same time are not compatible")]
    GtWithLt,
    /// SCAN with a cursor that is no unsigned integer.
    #[error("ERR invalid cursor")]
    InvalidCursor,
    /// DECRBY of `i64::MIN`, whose negation overflows.
    #[error("ERR decrement would overflow")]
    DecrOverflow,
    /// An argument or a string that should be a float is not one.
    #[error("ERR value is not a valid float")]
    NotAFloat,
    /// An argument, value or result refused with a message of its command's own (INCREX,
    /// the bitmap, HyperLogLog, hash and set commands); carries Redis's text after `ERR `.
    #[error("ERR {0}")]
    Text(&'static str),
    /// A string that is not a HyperLogLog given to a PF command.
    #[error("WRONGTYPE Key is not a valid HyperLogLog string value.")]
    NotHll,
    /// A sparse HyperLogLog whose runs do not cover its registers.
    #[error("INVALIDOBJ Corrupted HLL object detected")]
    HllCorrupt,
    /// PFDEBUG with an unknown subcommand; carries it as sent.
    #[error("ERR Unknown PFDEBUG subcommand '{0}'")]
    UnknownPfdebug(String),
    /// PFSELFTEST found a fault; carries Redis's `TESTFAILED ...` text.
    #[error("ERR {0}")]
    SelfTest(String),
    /// BITOP DIFF, DIFF1 or ANDOR with one source key; carries the operation, upper case.
    #[error("ERR BITOP {0} must be called with at least two source keys.")]
    BitopTwoKeys(String),
    /// INCRBYFLOAT whose result is not finite.
    #[error("ERR increment would produce NaN or Infinity")]
    FloatNotFinite,
    /// SETRANGE with a negative offset.
    #[error("ERR offset is out of range")]
    OffsetOutOfRange,
    /// APPEND or SETRANGE whose result would pass `proto-max-bulk-len`.
    #[error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")]
    StringTooLong,
    /// LCS of a key holding another type.
    #[error("ERR The specified keys must contain string values")]
    LcsNotStrings,
    /// LCS with both LEN and IDX.
    #[error("ERR If you want both the length and indexes, please just use IDX.")]
    LcsLenWithIdx,
    /// LCS whose table would pass `proto-max-bulk-len`.
    #[error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")]
    LcsTooLarge,
    /// A digest condition (IFDEQ, IFDNE) that is not 16 characters.
    #[error("ERR must be exactly 16 hexadecimal characters")]
    DigestLength,
    /// DELEX with a condition on a key of another type.
    #[error("ERR Key should be of string type if conditions are specified")]
    DelexNotString,
    /// DELEX with an unknown condition.
    #[error("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE")]
    DelexCondition,
    /// MSETEX's numkeys not an integer from 1 to `i32::MAX`.
    #[error("ERR invalid numkeys value")]
    InvalidNumkeys,
    /// MSETEX with fewer arguments than its numkeys pairs.
    #[error("ERR wrong number of key-value pairs")]
    KeyValuePairs,
    /// HEXPIRE-family and HGETEX/HSETEX's unknown argument; carries it as sent.
    #[error("ERR unknown argument: {0}")]
    UnknownArgument(String),
    /// HINCRBY on a value that is no integer.
    #[error("ERR hash value is not an integer")]
    HashNotInteger,
    /// HINCRBYFLOAT on a value that is no float.
    #[error("ERR hash value is not a float")]
    HashNotFloat,
    /// A count (HRANDFIELD, SRANDMEMBER, SPOP) out of range.
    #[error("ERR value is out of range")]
    OutOfRange,
    /// A count outside `getRangeLongFromObjectOrReply`'s bounds (HRANDFIELD, SRANDMEMBER).
    #[error("ERR value is out of range, value must between {0} and {1}")]
    OutOfRangeBetween(i64, i64),
    /// A count that must not be negative (SPOP, SINTERCARD's LIMIT, LPOP's and RPOP's count).
    #[error("ERR value is out of range, must be positive")]
    MustBePositive,
    /// LSET past either end of the list.
    #[error("ERR index out of range")]
    IndexOutOfRange,
    /// LREM's count or LPOS's RANK of `i64::MIN`.
    #[error(
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    )]
    OutOfLongRange,
    /// LPOS RANK 0.
    #[error(
        "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
    )]
    RankZero,
    /// LPOS COUNT not a non-negative integer.
    #[error("ERR COUNT can't be negative")]
    LposCountNegative,
    /// LPOS MAXLEN not a non-negative integer.
    #[error("ERR MAXLEN can't be negative")]
    LposMaxlenNegative,
    /// LMPOP's and BLMPOP's numkeys not a positive integer.
    #[error("ERR numkeys should be greater than 0")]
    NumkeysNotPositive,
    /// LMPOP's and BLMPOP's COUNT not a positive integer.
    #[error("ERR count should be greater than 0")]
    CountShouldBePositive,
    /// A blocked command ended by CLIENT UNBLOCK ... ERROR.
    #[error("UNBLOCKED client unblocked via CLIENT UNBLOCK")]
    Unblocked,
    /// SORT BY with a pattern that may name keys of other slots, in cluster mode.
    #[error(
        "ERR BY option of SORT denied in Cluster mode when keys formed by the pattern may be in different slots."
    )]
    SortByCrossSlot,
    /// SORT GET with such a pattern, in cluster mode.
    #[error(
        "ERR GET option of SORT denied in Cluster mode when keys formed by the pattern may be in different slots."
    )]
    SortGetCrossSlot,
    /// SORT by a weight that is no double.
    #[error("ERR One or more scores can't be converted into double")]
    SortScores,
    /// A blocking list command's timeout that is no number.
    #[error("ERR timeout is not a float or out of range")]
    TimeoutNotFloat,
}

/// Shorthand for engine results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Bytes from a client shown in an error message, as Redis shows them: up to a NUL, with CR
/// and LF turned into spaces so the reply stays one line.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let visible = bytes
        .iter()
        .position(|&b| b == 0)
        .map_or(bytes, |nul| &bytes[..nul]);
    String::from_utf8_lossy(visible).replace(['\r', '\n'], " ")
}

/// Why RDB bytes (a file or a DUMP payload) could not be loaded. Loading builds each value
/// whole before it is stored, so an error never leaves part of a key behind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RdbError {
    /// The bytes end inside a field.
    #[error("unexpected end of RDB data at offset {0}")]
    Truncated(usize),
    /// The file does not start with `REDIS` and a version.
    #[error("wrong signature trying to load DB from file")]
    BadMagic,
    /// A version newer than the one this server writes (or zero).
    #[error("can't handle RDB format version {0}")]
    Version(u32),
    /// The CRC64 in the footer is not the data's.
    #[error("wrong RDB checksum expected: ({expected:#018x}) got: ({found:#018x})")]
    Checksum {
        /// The checksum stored in the file.
        expected: u64,
        /// The checksum of the data read.
        found: u64,
    },
    /// A type or opcode byte no Redis writes.
    #[error("unknown RDB type or opcode {0} at offset {1}")]
    UnknownType(u8, usize),
    /// A value kind echomq cannot hold (lists, sets, hashes, sorted sets, modules, ...).
    #[error("unsupported RDB value type {0}: echomq holds strings and streams only")]
    UnsupportedType(u8),
    /// A database number at or above `databases`.
    #[error(
        "FATAL: Data file was created with a Redis server configured to handle more than {0} databases"
    )]
    DbIndex(usize),
    /// A key that appears twice in one database.
    #[error("RDB has duplicated key in DB {0}")]
    DuplicateKey(usize),
    /// Bytes that decode but break the format's rules; the text says which, as Redis's
    /// `rdbReportCorruptRDB` does.
    #[error("Internal error in RDB reading offset {offset}, function at rdb.c: {what}")]
    Corrupt {
        /// Where the reader was.
        offset: usize,
        /// What is wrong.
        what: String,
    },
}

/// The part of an unknown command's error that shows its first arguments, if it has any.
fn with_args(args: &str) -> String {
    if args.is_empty() {
        String::new()
    } else {
        format!(", with args beginning with: {args}")
    }
}

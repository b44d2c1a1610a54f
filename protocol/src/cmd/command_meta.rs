//! What COMMAND GETKEYSANDFLAGS and COMMAND LIST FILTERBY ACLCAT need to know of each command
//! and subcommand echomq has, as Redis 8.8 declares it (`src/commands/*.json`): the flags of
//! each key spec, in spec order (`RW|ACCESS|UPDATE`), and the ACL categories (the declared
//! ones and those Redis derives from the command's flags: `@write`, `@read`, `@fast` or
//! `@slow` ...), in Redis's category order.
//!
//! One row per command or subcommand (full name, `xgroup|create`), sorted by name; a new
//! command adds its row here. A command's i-th key takes the flags of its i-th key spec (the
//! last spec for the keys after it: MSET, DEL), except SET and DELEX, whose flags depend on
//! their options, as Redis computes them (`setGetKeys`, `delexGetKeys`).
//!
//! Invariant (tested): the rows are sorted and name only commands the tables have.

/// One command's or subcommand's row.
pub(crate) struct Meta {
    /// Full name, lower case.
    pub name: &'static str,
    /// Each key spec's flags, `|`-separated, in spec order.
    pub key_specs: &'static [&'static str],
    /// ACL categories, `@`-prefixed.
    pub categories: &'static [&'static str],
}

const fn meta(
    name: &'static str,
    key_specs: &'static [&'static str],
    categories: &'static [&'static str],
) -> Meta {
    Meta {
        name,
        key_specs,
        categories,
    }
}

/// The row of `name` (a full name, any case): this table's, else the one derived from Redis
/// 8.8's declaration of the command ([`super::command_rows`]).
pub(crate) fn find(name: &str) -> Option<&'static Meta> {
    let lower = name.to_ascii_lowercase();
    if let Ok(at) = ROWS.binary_search_by(|m| m.name.cmp(lower.as_str())) {
        return Some(&ROWS[at]);
    }
    let declared = DECLARED.get_or_init(declared_rows);
    declared
        .binary_search_by(|m| m.name.cmp(lower.as_str()))
        .ok()
        .map(|at| &declared[at])
}

/// The rows derived from Redis's declarations, built once.
static DECLARED: std::sync::OnceLock<Vec<Meta>> = std::sync::OnceLock::new();

/// A row per declared command and subcommand, its key specs' flags joined as this table writes
/// them (`RW|ACCESS`). Built once and kept for the process's life, so the strings are leaked.
fn declared_rows() -> Vec<Meta> {
    fn meta_of(row: &'static super::command_rows::Row) -> Meta {
        let key_specs: Vec<&'static str> = row
            .key_specs
            .iter()
            .map(|spec| {
                let joined: Vec<String> =
                    spec.flags.iter().map(|f| f.to_ascii_uppercase()).collect();
                &*Box::leak(joined.join("|").into_boxed_str())
            })
            .collect();
        Meta {
            name: row.name,
            key_specs: Box::leak(key_specs.into_boxed_slice()),
            categories: row.categories,
        }
    }
    let mut rows: Vec<Meta> = super::command_rows::rows()
        .iter()
        .flat_map(|row| std::iter::once(row).chain(row.subcommands.iter()))
        .map(meta_of)
        .collect();
    rows.sort_by(|a, b| a.name.cmp(b.name));
    rows
}

/// The key flags Redis reports, in its order.
const FLAG_ORDER: &[(&str, &str)] = &[
    ("RO", "RO"),
    ("RW", "RW"),
    ("OW", "OW"),
    ("RM", "RM"),
    ("ACCESS", "access"),
    ("UPDATE", "update"),
    ("INSERT", "insert"),
    ("DELETE", "delete"),
    ("NOT_KEY", "not_key"),
    ("INCOMPLETE", "incomplete"),
    ("VARIABLE_FLAGS", "variable_flags"),
];

/// The flags of the key at `index` (0-based among the request's keys) of a request of
/// `name` with arguments `argv` (name first), as GETKEYSANDFLAGS shows them.
pub(crate) fn key_flags(name: &str, argv: &[&[u8]], index: usize) -> Vec<&'static str> {
    let has = |words: &[&str], from: usize| {
        argv.iter()
            .skip(from)
            .any(|a| words.iter().any(|w| a.eq_ignore_ascii_case(w.as_bytes())))
    };
    let conditions = ["ifeq", "ifne", "ifdeq", "ifdne"];
    let spec: String = match name {
        "set" => {
            let get = has(&["get"], 3);
            match (get, has(&conditions, 3)) {
                (true, _) => "RW|ACCESS|UPDATE".into(),
                (false, true) => "RW|UPDATE".into(),
                (false, false) => "OW|UPDATE".into(),
            }
        }
        "delex" => {
            if has(&conditions, 2) {
                "RW|DELETE".into()
            } else {
                "RM|DELETE".into()
            }
        }
        _ => match find(name) {
            Some(row) if !row.key_specs.is_empty() => {
                row.key_specs[index.min(row.key_specs.len() - 1)].to_string()
            }
            _ => String::new(),
        },
    };
    let present: Vec<&str> = spec.split('|').collect();
    FLAG_ORDER
        .iter()
        .filter(|(flag, _)| present.contains(flag))
        .map(|(_, shown)| *shown)
        .collect()
}

/// The rows, sorted by name.
const ROWS: &[Meta] = &[
    meta("acl", &[], &["@slow"]),
    meta("acl|cat", &[], &["@slow"]),
    meta("acl|deluser", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|dryrun", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|genpass", &[], &["@slow"]),
    meta("acl|getuser", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|help", &[], &["@slow"]),
    meta("acl|list", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|load", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|log", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|save", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|setuser", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|users", &[], &["@admin", "@slow", "@dangerous"]),
    meta("acl|whoami", &[], &["@slow"]),
    meta("append", &["RW|INSERT"], &["@write", "@string", "@fast"]),
    meta("asking", &[], &["@fast", "@connection"]),
    meta("auth", &[], &["@fast", "@connection"]),
    meta("bgrewriteaof", &[], &["@admin", "@slow", "@dangerous"]),
    meta("bgsave", &[], &["@admin", "@slow", "@dangerous"]),
    meta("bitcount", &["RO|ACCESS"], &["@read", "@bitmap", "@slow"]),
    meta(
        "bitfield",
        &["RW|ACCESS|UPDATE|VARIABLE_FLAGS"],
        &["@write", "@bitmap", "@slow"],
    ),
    meta(
        "bitfield_ro",
        &["RO|ACCESS"],
        &["@read", "@bitmap", "@fast"],
    ),
    meta(
        "bitop",
        &["OW|UPDATE", "RO|ACCESS"],
        &["@write", "@bitmap", "@slow"],
    ),
    meta("bitpos", &["RO|ACCESS"], &["@read", "@bitmap", "@slow"]),
    meta(
        "blmove",
        &["RW|ACCESS|DELETE", "RW|INSERT"],
        &["@write", "@list", "@slow", "@blocking"],
    ),
    meta(
        "blmpop",
        &["RW|ACCESS|DELETE"],
        &["@write", "@list", "@slow", "@blocking"],
    ),
    meta(
        "blpop",
        &["RW|ACCESS|DELETE"],
        &["@write", "@list", "@slow", "@blocking"],
    ),
    meta(
        "brpop",
        &["RW|ACCESS|DELETE"],
        &["@write", "@list", "@slow", "@blocking"],
    ),
    meta(
        "brpoplpush",
        &["RW|ACCESS|DELETE", "RW|INSERT"],
        &["@write", "@list", "@slow", "@blocking"],
    ),
    meta("client", &[], &["@slow"]),
    meta("client|caching", &[], &["@slow", "@connection"]),
    meta("client|getname", &[], &["@slow", "@connection"]),
    meta("client|getredir", &[], &["@slow", "@connection"]),
    meta("client|help", &[], &["@slow", "@connection"]),
    meta("client|id", &[], &["@slow", "@connection"]),
    meta("client|info", &[], &["@slow", "@connection"]),
    meta(
        "client|kill",
        &[],
        &["@admin", "@slow", "@dangerous", "@connection"],
    ),
    meta(
        "client|list",
        &[],
        &["@admin", "@slow", "@dangerous", "@connection"],
    ),
    meta(
        "client|no-evict",
        &[],
        &["@admin", "@slow", "@dangerous", "@connection"],
    ),
    meta("client|no-touch", &[], &["@slow", "@connection"]),
    meta(
        "client|pause",
        &[],
        &["@admin", "@slow", "@dangerous", "@connection"],
    ),
    meta("client|reply", &[], &["@slow", "@connection"]),
    meta("client|setinfo", &[], &["@slow", "@connection"]),
    meta("client|setname", &[], &["@slow", "@connection"]),
    meta("client|tracking", &[], &["@slow", "@connection"]),
    meta("client|trackinginfo", &[], &["@slow", "@connection"]),
    meta(
        "client|unblock",
        &[],
        &["@admin", "@slow", "@dangerous", "@connection"],
    ),
    meta(
        "client|unpause",
        &[],
        &["@admin", "@slow", "@dangerous", "@connection"],
    ),
    meta("cluster", &[], &["@slow"]),
    meta("cluster|countkeysinslot", &[], &["@slow"]),
    meta("cluster|getkeysinslot", &[], &["@slow"]),
    meta("cluster|help", &[], &["@slow"]),
    meta("cluster|info", &[], &["@slow"]),
    meta("cluster|keyslot", &[], &["@slow"]),
    meta("cluster|myid", &[], &["@slow"]),
    meta("cluster|myshardid", &[], &["@slow"]),
    meta("cluster|nodes", &[], &["@slow"]),
    meta("cluster|shards", &[], &["@slow"]),
    meta("cluster|slots", &[], &["@slow"]),
    meta("command", &[], &["@slow", "@connection"]),
    meta("command|count", &[], &["@slow", "@connection"]),
    meta("command|docs", &[], &["@slow", "@connection"]),
    meta("command|getkeys", &[], &["@slow", "@connection"]),
    meta("command|getkeysandflags", &[], &["@slow", "@connection"]),
    meta("command|help", &[], &["@slow", "@connection"]),
    meta("command|info", &[], &["@slow", "@connection"]),
    meta("command|list", &[], &["@slow", "@connection"]),
    meta("config", &[], &["@slow"]),
    meta("config|get", &[], &["@admin", "@slow", "@dangerous"]),
    meta("config|help", &[], &["@slow"]),
    meta("config|resetstat", &[], &["@admin", "@slow", "@dangerous"]),
    meta("config|rewrite", &[], &["@admin", "@slow", "@dangerous"]),
    meta("config|set", &[], &["@admin", "@slow", "@dangerous"]),
    meta(
        "copy",
        &["RO|ACCESS", "OW|UPDATE"],
        &["@keyspace", "@write", "@slow"],
    ),
    meta("dbsize", &[], &["@keyspace", "@read", "@fast"]),
    meta("debug", &[], &["@admin", "@slow", "@dangerous"]),
    meta(
        "decr",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta(
        "decrby",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta("del", &["RM|DELETE"], &["@keyspace", "@write", "@slow"]),
    meta(
        "delex",
        &["RW|DELETE|VARIABLE_FLAGS"],
        &["@write", "@string", "@fast"],
    ),
    meta("digest", &["RO|ACCESS"], &["@read", "@string", "@fast"]),
    meta("discard", &[], &["@fast", "@transaction"]),
    meta("dump", &["RO|ACCESS"], &["@keyspace", "@read", "@slow"]),
    meta("echo", &[], &["@fast", "@connection"]),
    meta("emq.clock", &[], &["@admin", "@slow", "@dangerous"]),
    meta("emq.xrange", &["RO|ACCESS"], &["@read", "@stream", "@slow"]),
    meta(
        "emq.xrevrange",
        &["RO|ACCESS"],
        &["@read", "@stream", "@slow"],
    ),
    meta("exec", &[], &["@slow", "@transaction"]),
    meta("exists", &["RO"], &["@keyspace", "@read", "@fast"]),
    meta("expire", &["RW|UPDATE"], &["@keyspace", "@write", "@fast"]),
    meta(
        "expireat",
        &["RW|UPDATE"],
        &["@keyspace", "@write", "@fast"],
    ),
    meta(
        "expiretime",
        &["RO|ACCESS"],
        &["@keyspace", "@read", "@fast"],
    ),
    meta(
        "flushall",
        &[],
        &["@keyspace", "@write", "@slow", "@dangerous"],
    ),
    meta(
        "flushdb",
        &[],
        &["@keyspace", "@write", "@slow", "@dangerous"],
    ),
    meta("function", &[], &["@slow"]),
    meta("function|flush", &[], &["@write", "@slow", "@scripting"]),
    meta("function|kill", &[], &["@slow", "@scripting"]),
    meta("function|list", &[], &["@slow", "@scripting"]),
    meta("get", &["RO|ACCESS"], &["@read", "@string", "@fast"]),
    meta("getbit", &["RO|ACCESS"], &["@read", "@bitmap", "@fast"]),
    meta(
        "getdel",
        &["RW|ACCESS|DELETE"],
        &["@write", "@string", "@fast"],
    ),
    meta(
        "getex",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta("getrange", &["RO|ACCESS"], &["@read", "@string", "@slow"]),
    meta(
        "getset",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta("hello", &[], &["@fast", "@connection"]),
    meta(
        "incr",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta(
        "incrby",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta(
        "incrbyfloat",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta(
        "increx",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@string", "@fast"],
    ),
    meta("info", &[], &["@slow", "@dangerous"]),
    meta("keys", &[], &["@keyspace", "@read", "@slow", "@dangerous"]),
    meta("lastsave", &[], &["@admin", "@fast", "@dangerous"]),
    meta("latency", &[], &["@slow"]),
    meta("latency|doctor", &[], &["@admin", "@slow", "@dangerous"]),
    meta("latency|graph", &[], &["@admin", "@slow", "@dangerous"]),
    meta("latency|help", &[], &["@slow"]),
    meta("latency|histogram", &[], &["@admin", "@slow", "@dangerous"]),
    meta("latency|history", &[], &["@admin", "@slow", "@dangerous"]),
    meta("latency|latest", &[], &["@admin", "@slow", "@dangerous"]),
    meta("latency|reset", &[], &["@admin", "@slow", "@dangerous"]),
    meta("lcs", &["RO|ACCESS"], &["@read", "@string", "@slow"]),
    meta("lindex", &["RO|ACCESS"], &["@read", "@list", "@slow"]),
    meta("linsert", &["RW|INSERT"], &["@write", "@list", "@slow"]),
    meta("llen", &["RO"], &["@read", "@list", "@fast"]),
    meta(
        "lmove",
        &["RW|ACCESS|DELETE", "RW|INSERT"],
        &["@write", "@list", "@slow"],
    ),
    meta(
        "lmpop",
        &["RW|ACCESS|DELETE"],
        &["@write", "@list", "@slow"],
    ),
    meta("lpop", &["RW|ACCESS|DELETE"], &["@write", "@list", "@fast"]),
    meta("lpos", &["RO|ACCESS"], &["@read", "@list", "@slow"]),
    meta("lpush", &["RW|INSERT"], &["@write", "@list", "@fast"]),
    meta("lpushx", &["RW|INSERT"], &["@write", "@list", "@fast"]),
    meta("lrange", &["RO|ACCESS"], &["@read", "@list", "@slow"]),
    meta("lrem", &["RW|DELETE"], &["@write", "@list", "@slow"]),
    meta("lset", &["RW|UPDATE"], &["@write", "@list", "@slow"]),
    meta("ltrim", &["RW|DELETE"], &["@write", "@list", "@slow"]),
    meta("memory", &[], &["@slow"]),
    meta("memory|doctor", &[], &["@slow"]),
    meta("memory|help", &[], &["@slow"]),
    meta("memory|malloc-stats", &[], &["@slow"]),
    meta("memory|purge", &[], &["@slow"]),
    meta("memory|stats", &[], &["@slow"]),
    meta("memory|usage", &["RO"], &["@read", "@slow"]),
    meta("mget", &["RO|ACCESS"], &["@read", "@string", "@fast"]),
    meta("monitor", &[], &["@admin", "@slow", "@dangerous"]),
    meta(
        "move",
        &["RW|ACCESS|UPDATE"],
        &["@keyspace", "@write", "@fast"],
    ),
    meta("mset", &["OW|UPDATE"], &["@write", "@string", "@slow"]),
    meta("msetex", &["OW|UPDATE"], &["@write", "@string", "@slow"]),
    meta("msetnx", &["OW|INSERT"], &["@write", "@string", "@slow"]),
    meta("multi", &[], &["@fast", "@transaction"]),
    meta("object", &[], &["@slow"]),
    meta("object|encoding", &["RO"], &["@keyspace", "@read", "@slow"]),
    meta("object|freq", &["RO"], &["@keyspace", "@read", "@slow"]),
    meta("object|help", &[], &["@keyspace", "@slow"]),
    meta("object|idletime", &["RO"], &["@keyspace", "@read", "@slow"]),
    meta("object|refcount", &["RO"], &["@keyspace", "@read", "@slow"]),
    meta("persist", &["RW|UPDATE"], &["@keyspace", "@write", "@fast"]),
    meta("pexpire", &["RW|UPDATE"], &["@keyspace", "@write", "@fast"]),
    meta(
        "pexpireat",
        &["RW|UPDATE"],
        &["@keyspace", "@write", "@fast"],
    ),
    meta(
        "pexpiretime",
        &["RO|ACCESS"],
        &["@keyspace", "@read", "@fast"],
    ),
    meta(
        "pfadd",
        &["RW|INSERT"],
        &["@write", "@hyperloglog", "@fast"],
    ),
    meta(
        "pfcount",
        &["RW|ACCESS"],
        &["@read", "@hyperloglog", "@slow"],
    ),
    meta(
        "pfdebug",
        &["RW|ACCESS"],
        &["@write", "@hyperloglog", "@admin", "@slow", "@dangerous"],
    ),
    meta(
        "pfmerge",
        &["RW|ACCESS|INSERT", "RO|ACCESS"],
        &["@write", "@hyperloglog", "@slow"],
    ),
    meta(
        "pfselftest",
        &[],
        &["@hyperloglog", "@admin", "@slow", "@dangerous"],
    ),
    meta("ping", &[], &["@fast", "@connection"]),
    meta("psetex", &["OW|UPDATE"], &["@write", "@string", "@slow"]),
    meta("psubscribe", &[], &["@pubsub", "@slow"]),
    meta("pttl", &["RO|ACCESS"], &["@keyspace", "@read", "@fast"]),
    meta("publish", &[], &["@pubsub", "@fast"]),
    meta("pubsub", &[], &["@slow"]),
    meta("pubsub|channels", &[], &["@pubsub", "@slow"]),
    meta("pubsub|help", &[], &["@slow"]),
    meta("pubsub|numpat", &[], &["@pubsub", "@slow"]),
    meta("pubsub|numsub", &[], &["@pubsub", "@slow"]),
    meta("pubsub|shardchannels", &[], &["@pubsub", "@slow"]),
    meta("pubsub|shardnumsub", &[], &["@pubsub", "@slow"]),
    meta("punsubscribe", &[], &["@pubsub", "@slow"]),
    meta("quit", &[], &["@fast", "@connection"]),
    meta("randomkey", &[], &["@keyspace", "@read", "@slow"]),
    meta("readonly", &[], &["@fast", "@connection"]),
    meta("readwrite", &[], &["@fast", "@connection"]),
    meta(
        "rename",
        &["RW|ACCESS|DELETE", "OW|UPDATE"],
        &["@keyspace", "@write", "@slow"],
    ),
    meta(
        "renamenx",
        &["RW|ACCESS|DELETE", "OW|INSERT"],
        &["@keyspace", "@write", "@fast"],
    ),
    meta("reset", &[], &["@fast", "@connection"]),
    meta(
        "restore",
        &["OW|UPDATE"],
        &["@keyspace", "@write", "@slow", "@dangerous"],
    ),
    meta("rpop", &["RW|ACCESS|DELETE"], &["@write", "@list", "@fast"]),
    meta(
        "rpoplpush",
        &["RW|ACCESS|DELETE", "RW|INSERT"],
        &["@write", "@list", "@slow"],
    ),
    meta("rpush", &["RW|INSERT"], &["@write", "@list", "@fast"]),
    meta("rpushx", &["RW|INSERT"], &["@write", "@list", "@fast"]),
    meta("save", &[], &["@admin", "@slow", "@dangerous"]),
    meta("scan", &[], &["@keyspace", "@read", "@slow"]),
    meta("script", &[], &["@slow"]),
    meta("script|flush", &[], &["@slow", "@scripting"]),
    meta("script|kill", &[], &["@slow", "@scripting"]),
    meta("select", &[], &["@fast", "@connection"]),
    meta(
        "set",
        &["RW|ACCESS|UPDATE|VARIABLE_FLAGS"],
        &["@write", "@string", "@slow"],
    ),
    meta(
        "setbit",
        &["RW|ACCESS|UPDATE"],
        &["@write", "@bitmap", "@slow"],
    ),
    meta("setex", &["OW|UPDATE"], &["@write", "@string", "@slow"]),
    meta("setnx", &["OW|INSERT"], &["@write", "@string", "@fast"]),
    meta("setrange", &["RW|UPDATE"], &["@write", "@string", "@slow"]),
    meta("shutdown", &[], &["@admin", "@slow", "@dangerous"]),
    meta("slowlog", &[], &["@slow"]),
    meta("slowlog|get", &[], &["@admin", "@slow", "@dangerous"]),
    meta("slowlog|help", &[], &["@slow"]),
    meta("slowlog|len", &[], &["@admin", "@slow", "@dangerous"]),
    meta("slowlog|reset", &[], &["@admin", "@slow", "@dangerous"]),
    meta(
        "sort",
        &["RO|ACCESS", "OW|UPDATE"],
        &[
            "@write",
            "@set",
            "@sortedset",
            "@list",
            "@slow",
            "@dangerous",
        ],
    ),
    meta(
        "sort_ro",
        &["RO|ACCESS"],
        &[
            "@read",
            "@set",
            "@sortedset",
            "@list",
            "@slow",
            "@dangerous",
        ],
    ),
    meta("spublish", &["NOT_KEY"], &["@pubsub", "@fast"]),
    meta("ssubscribe", &["NOT_KEY"], &["@pubsub", "@slow"]),
    meta("strlen", &["RO"], &["@read", "@string", "@fast"]),
    meta("subscribe", &[], &["@pubsub", "@slow"]),
    meta("substr", &["RO|ACCESS"], &["@read", "@string", "@slow"]),
    meta("sunsubscribe", &["NOT_KEY"], &["@pubsub", "@slow"]),
    meta(
        "swapdb",
        &[],
        &["@keyspace", "@write", "@fast", "@dangerous"],
    ),
    meta("time", &[], &["@fast"]),
    meta("touch", &["RO"], &["@keyspace", "@read", "@fast"]),
    meta("ttl", &["RO|ACCESS"], &["@keyspace", "@read", "@fast"]),
    meta("type", &["RO"], &["@keyspace", "@read", "@fast"]),
    meta("unlink", &["RM|DELETE"], &["@keyspace", "@write", "@fast"]),
    meta("unsubscribe", &[], &["@pubsub", "@slow"]),
    meta("unwatch", &[], &["@fast", "@transaction"]),
    meta("wait", &[], &["@slow", "@blocking", "@connection"]),
    meta("waitaof", &[], &["@slow", "@blocking", "@connection"]),
    meta("watch", &["RO"], &["@fast", "@transaction"]),
    meta("xack", &["RW|UPDATE"], &["@write", "@stream", "@fast"]),
    meta(
        "xackdel",
        &["RW|UPDATE|DELETE"],
        &["@write", "@stream", "@fast"],
    ),
    meta("xadd", &["RW|UPDATE"], &["@write", "@stream", "@fast"]),
    meta(
        "xautoclaim",
        &["RW|DELETE"],
        &["@write", "@stream", "@fast"],
    ),
    meta("xcfgset", &["RW|UPDATE"], &["@write", "@stream", "@fast"]),
    meta("xclaim", &["RW|UPDATE"], &["@write", "@stream", "@fast"]),
    meta("xdel", &["RW|DELETE"], &["@write", "@stream", "@fast"]),
    meta("xdelex", &["RW|DELETE"], &["@write", "@stream", "@fast"]),
    meta("xgroup", &[], &["@slow"]),
    meta(
        "xgroup|create",
        &["RW|INSERT"],
        &["@write", "@stream", "@slow"],
    ),
    meta(
        "xgroup|createconsumer",
        &["RW|INSERT"],
        &["@write", "@stream", "@slow"],
    ),
    meta(
        "xgroup|delconsumer",
        &["RW|DELETE"],
        &["@write", "@stream", "@slow"],
    ),
    meta(
        "xgroup|destroy",
        &["RW|DELETE"],
        &["@write", "@stream", "@slow"],
    ),
    meta("xgroup|help", &[], &["@stream", "@slow"]),
    meta(
        "xgroup|setid",
        &["RW|UPDATE"],
        &["@write", "@stream", "@slow"],
    ),
    meta(
        "xidmprecord",
        &["RW|UPDATE"],
        &["@write", "@stream", "@fast"],
    ),
    meta("xinfo", &[], &["@slow"]),
    meta(
        "xinfo|consumers",
        &["RO|ACCESS"],
        &["@read", "@stream", "@slow"],
    ),
    meta(
        "xinfo|groups",
        &["RO|ACCESS"],
        &["@read", "@stream", "@slow"],
    ),
    meta("xinfo|help", &[], &["@stream", "@slow"]),
    meta(
        "xinfo|stream",
        &["RO|ACCESS"],
        &["@read", "@stream", "@slow"],
    ),
    meta("xlen", &["RO"], &["@read", "@stream", "@fast"]),
    meta("xnack", &["RW|UPDATE"], &["@write", "@stream", "@fast"]),
    meta("xpending", &["RO|ACCESS"], &["@read", "@stream", "@slow"]),
    meta("xrange", &["RO|ACCESS"], &["@read", "@stream", "@slow"]),
    meta(
        "xread",
        &["RO|ACCESS"],
        &["@read", "@stream", "@slow", "@blocking"],
    ),
    meta(
        "xreadgroup",
        &["RO|ACCESS"],
        &["@write", "@stream", "@slow", "@blocking"],
    ),
    meta("xrevrange", &["RO|ACCESS"], &["@read", "@stream", "@slow"]),
    meta("xsetid", &["RW|UPDATE"], &["@write", "@stream", "@fast"]),
    meta("xtrim", &["RW|DELETE"], &["@write", "@stream", "@slow"]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_and_name_commands_the_tables_have() {
        assert!(ROWS.windows(2).all(|w| w[0].name < w[1].name));
        for row in ROWS {
            let (container, sub) = match row.name.split_once('|') {
                Some((c, s)) => (c, Some(s)),
                None => (row.name, None),
            };
            let found = super::super::lookup(container.as_bytes())
                .unwrap_or_else(|| panic!("{} has no table row", row.name));
            if let Some(sub) = sub {
                assert!(
                    found.spec().subcommand(sub.as_bytes()).is_some(),
                    "{} is no subcommand",
                    row.name
                );
            }
        }
    }

    #[test]
    fn set_and_delex_flags_follow_their_options() {
        assert_eq!(key_flags("set", &[b"set", b"k", b"v"], 0), ["OW", "update"]);
        assert_eq!(
            key_flags("set", &[b"set", b"k", b"v", b"GET"], 0),
            ["RW", "access", "update"]
        );
        assert_eq!(
            key_flags("copy", &[b"copy", b"a", b"b"], 1),
            ["OW", "update"]
        );
        assert_eq!(
            key_flags("del", &[b"del", b"a", b"b", b"c"], 2),
            ["RM", "delete"]
        );
    }
}

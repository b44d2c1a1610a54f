//! Every directive Redis 8.8's config file accepts: the standard configs (with their aliases,
//! how CONFIG REWRITE writes them, and Redis's default as CONFIG GET shows it) and the
//! directives that only the file knows ([`FILE_ONLY`]).
//!
//! echomq implements some of them (the settings CONFIG SET takes, and what `echomq serve`
//! reads at start: `port`, `bind`, `daemonize`, `logfile` …); the others are accepted, kept
//! for CONFIG GET and CONFIG REWRITE, and have no effect.

/// How a directive's value is written back by CONFIG REWRITE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `yes` or `no`.
    Bool,
    /// A quoted string.
    Str,
    /// A quoted string; empty means unset, and an unset one leaves the file.
    StrOrNull,
    /// One word of a fixed set (or several, for multi-word enums).
    Enum,
    /// An integer.
    Int,
    /// Bytes, written with the largest unit that divides them (`64mb`).
    Memory,
    /// Bytes, or a percentage written with `%`.
    Percent,
    /// An octal integer (`unixsocketperm`).
    Octal,
    /// A directive with a form of its own (`save`, `bind`, `client-output-buffer-limit` …).
    Special,
}

/// Takes several words (`save 900 1`, `bind a b`).
pub const MULTI: u8 = 1;
/// Cannot be changed by CONFIG SET.
pub const IMMUTABLE: u8 = 2;
/// Not listed by `CONFIG GET *` (named exactly, it is).
pub const HIDDEN: u8 = 4;

/// One standard directive.
#[derive(Debug)]
pub struct Directive {
    /// Its name.
    pub name: &'static str,
    /// Its other name (Redis's old `slave…` names and a few more).
    pub alias: Option<&'static str>,
    /// How CONFIG REWRITE writes it.
    pub kind: Kind,
    /// [`MULTI`], [`IMMUTABLE`], [`HIDDEN`].
    pub flags: u8,
    /// Redis's default, as CONFIG GET shows it.
    pub default: &'static str,
}

impl Directive {
    /// Whether it takes several words.
    pub fn multi(&self) -> bool {
        self.flags & MULTI != 0
    }

    /// Whether CONFIG SET refuses it.
    pub fn immutable(&self) -> bool {
        self.flags & IMMUTABLE != 0
    }

    /// Whether `CONFIG GET *` leaves it out.
    pub fn hidden(&self) -> bool {
        self.flags & HIDDEN != 0
    }
}

/// Directives that are not configs: the file alone reads them.
pub const FILE_ONLY: &[&str] = &[
    "include",
    "rename-command",
    "user",
    "loadmodule",
    "sentinel",
];

/// Directives Redis still reads and ignores, with the words they take (the name included).
pub const DEPRECATED: &[(&str, usize)] = &[
    ("list-max-ziplist-entries", 2),
    ("list-max-ziplist-value", 2),
    ("lua-replicate-commands", 2),
    ("io-threads-do-reads", 2),
];

/// The words an enumerated directive echomq accepts without implementing takes, with the
/// value each stands for (Redis 8.8's `configEnum` tables in `config.c`, in their order),
/// and that list as its refusal shows it. A directive with [`MULTI`] takes several words,
/// whose values are bit flags OR-ed together.
#[derive(Debug)]
pub struct EnumWords {
    pub words: &'static [(&'static str, u32)],
    pub listed: &'static str,
}

/// The [`EnumWords`] of the enumerated directive called `name` (its canonical name).
pub fn enum_words(name: &str) -> Option<&'static EnumWords> {
    const SHUTDOWN_ON_SIGNAL: EnumWords = EnumWords {
        words: &[
            ("default", 0),
            ("save", 1),
            ("nosave", 2),
            ("now", 4),
            ("force", 8),
        ],
        listed: "default, save, nosave, now, force",
    };
    static TABLE: &[(&str, EnumWords)] = &[
        (
            "cluster-slot-stats-enabled",
            EnumWords {
                words: &[("no", 0), ("yes", 7), ("cpu", 1), ("net", 2), ("mem", 4)],
                listed: "no, yes, cpu, net, mem",
            },
        ),
        (
            "repl-diskless-load",
            EnumWords {
                words: &[
                    ("disabled", 0),
                    ("on-empty-db", 1),
                    ("swapdb", 2),
                    ("flushdb", 3),
                ],
                listed: "disabled, on-empty-db, swapdb, flushdb",
            },
        ),
        (
            "loglevel",
            EnumWords {
                words: &[
                    ("debug", 0),
                    ("verbose", 1),
                    ("notice", 2),
                    ("warning", 3),
                    ("nothing", 4),
                ],
                listed: "debug, verbose, notice, warning, nothing",
            },
        ),
        (
            "oom-score-adj",
            EnumWords {
                words: &[("no", 0), ("yes", 1), ("relative", 1), ("absolute", 2)],
                listed: "no, yes, relative, absolute",
            },
        ),
        (
            "sanitize-dump-payload",
            EnumWords {
                words: &[("no", 0), ("yes", 1), ("clients", 2)],
                listed: "no, yes, clients",
            },
        ),
        (
            "cluster-preferred-endpoint-type",
            EnumWords {
                words: &[("ip", 0), ("hostname", 1), ("unknown-endpoint", 2)],
                listed: "ip, hostname, unknown-endpoint",
            },
        ),
        (
            "propagation-error-behavior",
            EnumWords {
                words: &[("ignore", 0), ("panic", 1), ("panic-on-replicas", 2)],
                listed: "ignore, panic, panic-on-replicas",
            },
        ),
        ("shutdown-on-sigint", SHUTDOWN_ON_SIGNAL),
        ("shutdown-on-sigterm", SHUTDOWN_ON_SIGNAL),
    ];
    TABLE.iter().find(|(n, _)| *n == name).map(|(_, w)| w)
}

/// The standard directive called `name` (or aliased so), any case.
pub fn lookup(name: &str) -> Option<&'static Directive> {
    DIRECTIVES.iter().find(|d| {
        d.name.eq_ignore_ascii_case(name) || d.alias.is_some_and(|a| a.eq_ignore_ascii_case(name))
    })
}

use Directive as D;

/// Redis 8.8's standard directives, in its table's order (CONFIG REWRITE appends in this
/// order).
pub const DIRECTIVES: &[Directive] = &[
    D {
        name: "rdbchecksum",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "yes",
    },
    D {
        name: "daemonize",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "always-show-logo",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "protected-mode",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "rdbcompression",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "rdb-del-sync-files",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "activerehashing",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "stop-writes-on-bgsave-error",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "set-proc-title",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "yes",
    },
    D {
        name: "dynamic-hz",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "lazyfree-lazy-eviction",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "lazyfree-lazy-expire",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "lazyfree-lazy-server-del",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "lazyfree-lazy-user-del",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "lazyfree-lazy-user-flush",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "repl-disable-tcp-nodelay",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "repl-diskless-sync",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "repl-rdb-channel",
        alias: None,
        kind: Kind::Bool,
        flags: HIDDEN,
        default: "yes",
    },
    D {
        name: "aof-rewrite-incremental-fsync",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "no-appendfsync-on-rewrite",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "cluster-require-full-coverage",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "rdb-save-incremental-fsync",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "aof-load-truncated",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "aof-use-rdb-preamble",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "aof-timestamp-enabled",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "cluster-replica-no-failover",
        alias: Some("cluster-slave-no-failover"),
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "replica-lazy-flush",
        alias: Some("slave-lazy-flush"),
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "replica-serve-stale-data",
        alias: Some("slave-serve-stale-data"),
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "replica-read-only",
        alias: Some("slave-read-only"),
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "replica-ignore-maxmemory",
        alias: Some("slave-ignore-maxmemory"),
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "jemalloc-bg-thread",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "activedefrag",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "syslog-enabled",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "cluster-enabled",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "appendonly",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "cluster-allow-reads-when-down",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "cluster-allow-pubsubshard-when-down",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "crash-log-enabled",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "crash-memcheck-enabled",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "use-exit-on-panic",
        alias: None,
        kind: Kind::Bool,
        flags: HIDDEN,
        default: "no",
    },
    D {
        name: "disable-thp",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE,
        default: "yes",
    },
    D {
        name: "cluster-allow-replica-migration",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "replica-announced",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "latency-tracking",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "aof-disable-auto-gc",
        alias: None,
        kind: Kind::Bool,
        flags: HIDDEN,
        default: "no",
    },
    D {
        name: "replica-ignore-disk-write-errors",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "hide-user-data-from-log",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "lazyexpire-nested-arbitrary-keys",
        alias: None,
        kind: Kind::Bool,
        flags: HIDDEN,
        default: "yes",
    },
    D {
        name: "cluster-slot-stats-enabled",
        alias: None,
        kind: Kind::Enum,
        flags: MULTI,
        default: "no",
    },
    D {
        name: "lua-enable-deprecated-api",
        alias: None,
        kind: Kind::Bool,
        flags: IMMUTABLE | HIDDEN,
        default: "no",
    },
    D {
        name: "key-memory-histograms",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "aclfile",
        alias: None,
        kind: Kind::Str,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "unixsocket",
        alias: None,
        kind: Kind::StrOrNull,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "pidfile",
        alias: None,
        kind: Kind::StrOrNull,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "replica-announce-ip",
        alias: Some("slave-announce-ip"),
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "masteruser",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "cluster-announce-ip",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "cluster-config-file",
        alias: None,
        kind: Kind::Str,
        flags: IMMUTABLE,
        default: "nodes.conf",
    },
    D {
        name: "cluster-announce-hostname",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "cluster-announce-human-nodename",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "syslog-ident",
        alias: None,
        kind: Kind::Str,
        flags: IMMUTABLE,
        default: "redis",
    },
    D {
        name: "dbfilename",
        alias: None,
        kind: Kind::Str,
        flags: 0,
        default: "dump.rdb",
    },
    D {
        name: "appendfilename",
        alias: None,
        kind: Kind::Str,
        flags: IMMUTABLE,
        default: "appendonly.aof",
    },
    D {
        name: "appenddirname",
        alias: None,
        kind: Kind::Str,
        flags: IMMUTABLE,
        default: "appendonlydir",
    },
    D {
        name: "server-cpulist",
        alias: Some("server_cpulist"),
        kind: Kind::StrOrNull,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "bio-cpulist",
        alias: Some("bio_cpulist"),
        kind: Kind::StrOrNull,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "aof-rewrite-cpulist",
        alias: Some("aof_rewrite_cpulist"),
        kind: Kind::StrOrNull,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "bgsave-cpulist",
        alias: Some("bgsave_cpulist"),
        kind: Kind::StrOrNull,
        flags: IMMUTABLE,
        default: "",
    },
    D {
        name: "ignore-warnings",
        alias: None,
        kind: Kind::Str,
        flags: 0,
        default: "",
    },
    D {
        name: "proc-title-template",
        alias: None,
        kind: Kind::Str,
        flags: 0,
        default: "{title} {listen-addr} {server-mode}",
    },
    D {
        name: "bind-source-addr",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "logfile",
        alias: None,
        kind: Kind::Str,
        flags: IMMUTABLE,
        default: "/tmp/conf-r8/log",
    },
    D {
        name: "req-res-logfile",
        alias: None,
        kind: Kind::StrOrNull,
        flags: IMMUTABLE | HIDDEN,
        default: "",
    },
    D {
        name: "locale-collate",
        alias: None,
        kind: Kind::Str,
        flags: 0,
        default: "",
    },
    D {
        name: "masterauth",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "requirepass",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "supervised",
        alias: None,
        kind: Kind::Enum,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "syslog-facility",
        alias: None,
        kind: Kind::Enum,
        flags: IMMUTABLE,
        default: "local0",
    },
    D {
        name: "repl-diskless-load",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "disabled",
    },
    D {
        name: "loglevel",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "notice",
    },
    D {
        name: "maxmemory-policy",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "noeviction",
    },
    D {
        name: "appendfsync",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "everysec",
    },
    D {
        name: "oom-score-adj",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "no",
    },
    D {
        name: "acl-pubsub-default",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "resetchannels",
    },
    D {
        name: "sanitize-dump-payload",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "no",
    },
    D {
        name: "enable-protected-configs",
        alias: None,
        kind: Kind::Enum,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "enable-debug-command",
        alias: None,
        kind: Kind::Enum,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "enable-module-command",
        alias: None,
        kind: Kind::Enum,
        flags: IMMUTABLE,
        default: "no",
    },
    D {
        name: "cluster-preferred-endpoint-type",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "ip",
    },
    D {
        name: "propagation-error-behavior",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "ignore",
    },
    D {
        name: "shutdown-on-sigint",
        alias: None,
        kind: Kind::Enum,
        flags: MULTI,
        default: "default",
    },
    D {
        name: "shutdown-on-sigterm",
        alias: None,
        kind: Kind::Enum,
        flags: MULTI,
        default: "default",
    },
    D {
        name: "databases",
        alias: None,
        kind: Kind::Int,
        flags: IMMUTABLE,
        default: "16",
    },
    D {
        name: "port",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "17771",
    },
    D {
        name: "io-threads",
        alias: None,
        kind: Kind::Int,
        flags: IMMUTABLE,
        default: "1",
    },
    D {
        name: "prefetch-batch-max-size",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "16",
    },
    D {
        name: "auto-aof-rewrite-percentage",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "100",
    },
    D {
        name: "cluster-replica-validity-factor",
        alias: Some("cluster-slave-validity-factor"),
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "list-max-listpack-size",
        alias: Some("list-max-ziplist-size"),
        kind: Kind::Int,
        flags: 0,
        default: "-2",
    },
    D {
        name: "tcp-keepalive",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "300",
    },
    D {
        name: "cluster-migration-barrier",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1",
    },
    D {
        name: "active-defrag-cycle-min",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1",
    },
    D {
        name: "active-defrag-cycle-max",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "25",
    },
    D {
        name: "active-defrag-threshold-lower",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "active-defrag-threshold-upper",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "100",
    },
    D {
        name: "lfu-log-factor",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "lfu-decay-time",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1",
    },
    D {
        name: "replica-priority",
        alias: Some("slave-priority"),
        kind: Kind::Int,
        flags: 0,
        default: "100",
    },
    D {
        name: "repl-diskless-sync-delay",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "5",
    },
    D {
        name: "maxmemory-samples",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "5",
    },
    D {
        name: "maxmemory-eviction-tenacity",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "timeout",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "replica-announce-port",
        alias: Some("slave-announce-port"),
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "tcp-backlog",
        alias: None,
        kind: Kind::Int,
        flags: IMMUTABLE,
        default: "511",
    },
    D {
        name: "cluster-port",
        alias: None,
        kind: Kind::Int,
        flags: IMMUTABLE,
        default: "0",
    },
    D {
        name: "cluster-announce-bus-port",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "cluster-announce-port",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "cluster-announce-tls-port",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "repl-timeout",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "60",
    },
    D {
        name: "repl-ping-replica-period",
        alias: Some("repl-ping-slave-period"),
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "list-compress-depth",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "rdb-key-save-delay",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "0",
    },
    D {
        name: "key-load-delay",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "0",
    },
    D {
        name: "active-expire-effort",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1",
    },
    D {
        name: "hz",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "min-replicas-to-write",
        alias: Some("min-slaves-to-write"),
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "min-replicas-max-lag",
        alias: Some("min-slaves-max-lag"),
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "watchdog-period",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "0",
    },
    D {
        name: "shutdown-timeout",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "repl-diskless-sync-max-replicas",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "cluster-compatibility-sample-ratio",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "cluster-slot-migration-max-archived-tasks",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "32",
    },
    D {
        name: "lookahead",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "16",
    },
    D {
        name: "slowlog-entry-max-argc",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "32",
    },
    D {
        name: "maxclients",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10000",
    },
    D {
        name: "unixsocketperm",
        alias: None,
        kind: Kind::Octal,
        flags: IMMUTABLE,
        default: "0",
    },
    D {
        name: "socket-mark-id",
        alias: None,
        kind: Kind::Int,
        flags: IMMUTABLE,
        default: "0",
    },
    D {
        name: "max-new-connections-per-cycle",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "max-new-tls-connections-per-cycle",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1",
    },
    D {
        name: "array-slice-size",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "4096",
    },
    D {
        name: "array-sparse-kmax",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10",
    },
    D {
        name: "array-sparse-kmin",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "5",
    },
    D {
        name: "client-default-resp",
        alias: None,
        kind: Kind::Int,
        flags: IMMUTABLE | HIDDEN,
        default: "",
    },
    D {
        name: "active-defrag-max-scan-fields",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1000",
    },
    D {
        name: "slowlog-max-len",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "128",
    },
    D {
        name: "slowlog-entry-max-string-len",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "128",
    },
    D {
        name: "acllog-max-len",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "128",
    },
    D {
        name: "busy-reply-threshold",
        alias: Some("lua-time-limit"),
        kind: Kind::Int,
        flags: 0,
        default: "5000",
    },
    D {
        name: "cluster-node-timeout",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "15000",
    },
    D {
        name: "cluster-ping-interval",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "0",
    },
    D {
        name: "cluster-slot-migration-handoff-max-lag-bytes",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "1048576",
    },
    D {
        name: "cluster-slot-migration-write-pause-timeout",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10000",
    },
    D {
        name: "cluster-slot-migration-sync-buffer-drain-timeout",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "60000",
    },
    D {
        name: "slowlog-log-slower-than",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "10000",
    },
    D {
        name: "latency-monitor-threshold",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "proto-max-bulk-len",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "536870912",
    },
    D {
        name: "stream-node-max-entries",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "100",
    },
    D {
        name: "stream-idmp-duration",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "100",
    },
    D {
        name: "stream-idmp-maxsize",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "100",
    },
    D {
        name: "repl-backlog-size",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "1048576",
    },
    D {
        name: "replica-full-sync-buffer-limit",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "0",
    },
    D {
        name: "maxmemory",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "0",
    },
    D {
        name: "cluster-link-sendbuf-limit",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "0",
    },
    D {
        name: "hash-max-listpack-entries",
        alias: Some("hash-max-ziplist-entries"),
        kind: Kind::Int,
        flags: 0,
        default: "512",
    },
    D {
        name: "set-max-intset-entries",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "512",
    },
    D {
        name: "set-max-listpack-entries",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "128",
    },
    D {
        name: "set-max-listpack-value",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "64",
    },
    D {
        name: "zset-max-listpack-entries",
        alias: Some("zset-max-ziplist-entries"),
        kind: Kind::Int,
        flags: 0,
        default: "128",
    },
    D {
        name: "active-defrag-ignore-bytes",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "104857600",
    },
    D {
        name: "hash-max-listpack-value",
        alias: Some("hash-max-ziplist-value"),
        kind: Kind::Memory,
        flags: 0,
        default: "64",
    },
    D {
        name: "stream-node-max-bytes",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "4096",
    },
    D {
        name: "zset-max-listpack-value",
        alias: Some("zset-max-ziplist-value"),
        kind: Kind::Memory,
        flags: 0,
        default: "64",
    },
    D {
        name: "hll-sparse-max-bytes",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "3000",
    },
    D {
        name: "tracking-table-max-keys",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "1000000",
    },
    D {
        name: "client-query-buffer-limit",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "1073741824",
    },
    D {
        name: "maxmemory-clients",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "0",
    },
    D {
        name: "repl-backlog-ttl",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "3600",
    },
    D {
        name: "auto-aof-rewrite-min-size",
        alias: None,
        kind: Kind::Memory,
        flags: 0,
        default: "67108864",
    },
    D {
        name: "loading-process-events-interval-bytes",
        alias: None,
        kind: Kind::Int,
        flags: HIDDEN,
        default: "524288",
    },
    D {
        name: "aof-load-corrupt-tail-max-size",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "tls-port",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "0",
    },
    D {
        name: "tls-session-cache-size",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "20480",
    },
    D {
        name: "tls-session-cache-timeout",
        alias: None,
        kind: Kind::Int,
        flags: 0,
        default: "300",
    },
    D {
        name: "tls-cluster",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "tls-replication",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "tls-auth-clients",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "yes",
    },
    D {
        name: "tls-auth-clients-user",
        alias: None,
        kind: Kind::Enum,
        flags: 0,
        default: "off",
    },
    D {
        name: "tls-prefer-server-ciphers",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "no",
    },
    D {
        name: "tls-session-caching",
        alias: None,
        kind: Kind::Bool,
        flags: 0,
        default: "yes",
    },
    D {
        name: "tls-cert-file",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-key-file",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-key-file-pass",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-client-cert-file",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-client-key-file",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-client-key-file-pass",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-dh-params-file",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-ca-cert-file",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-ca-cert-dir",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-protocols",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-ciphers",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "tls-ciphersuites",
        alias: None,
        kind: Kind::StrOrNull,
        flags: 0,
        default: "",
    },
    D {
        name: "dir",
        alias: None,
        kind: Kind::Special,
        flags: 0,
        default: "",
    },
    D {
        name: "save",
        alias: None,
        kind: Kind::Special,
        flags: MULTI,
        default: "3600 1 300 100 60 10000",
    },
    D {
        name: "client-output-buffer-limit",
        alias: None,
        kind: Kind::Special,
        flags: MULTI,
        default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
    },
    D {
        name: "oom-score-adj-values",
        alias: None,
        kind: Kind::Special,
        flags: MULTI,
        default: "0 200 800",
    },
    D {
        name: "notify-keyspace-events",
        alias: None,
        kind: Kind::Special,
        flags: 0,
        default: "",
    },
    D {
        name: "bind",
        alias: None,
        kind: Kind::Special,
        flags: MULTI,
        default: "* -::*",
    },
    D {
        name: "replicaof",
        alias: Some("slaveof"),
        kind: Kind::Special,
        flags: MULTI | IMMUTABLE,
        default: "",
    },
    D {
        name: "latency-tracking-info-percentiles",
        alias: None,
        kind: Kind::Special,
        flags: MULTI,
        default: "50 99 99.9",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_enumerated_directive_lists_its_words_in_order() {
        for d in DIRECTIVES.iter().filter(|d| matches!(d.kind, Kind::Enum)) {
            let Some(words) = enum_words(d.name) else {
                continue;
            };
            let names: Vec<&str> = words.words.iter().map(|(n, _)| *n).collect();
            assert_eq!(words.listed, names.join(", "), "{}", d.name);
            assert!(names.contains(&d.default), "{}", d.name);
        }
        assert!(enum_words("loglevel").is_some());
    }
}

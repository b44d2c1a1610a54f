//! The errors the server's own commands reply with (the stream commands' are the engine's
//! [`echomq_engine::Error`]). Each variant's text is Redis's, prefix included (`ERR`,
//! `NOAUTH`, `EXECABORT`, ...), byte for byte: clients match on these, and the differential
//! tests compare them with Redis's replies.

use echomq_engine::Reply;
use thiserror::Error;

/// A command's error reply (see the module docs). `Reply::from` makes it the reply.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    // Refusals before a command runs.
    /// A NO_MULTI command inside MULTI.
    #[error("ERR Command not allowed inside a transaction")]
    NotAllowedInMulti,
    /// A command before AUTH.
    #[error("NOAUTH Authentication required.")]
    NoAuth,
    /// EXEC of a transaction queued by an unauthenticated client.
    #[error("EXECABORT Transaction discarded because of: NOAUTH Authentication required.")]
    ExecAbortNoAuth,
    /// EXEC of a transaction holding a DENY_OOM command, over `maxmemory`.
    #[error(
        "EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'."
    )]
    ExecAbortOutOfMemory,
    /// A DENY_OOM command over `maxmemory`.
    #[error("OOM command not allowed when used memory > 'maxmemory'.")]
    OutOfMemory,
    /// Any command but the LOADING_OK ones while the dataset loads.
    #[error("LOADING Redis is loading the dataset in memory")]
    Loading,
    /// A write while the AOF cannot be written; the failure's text.
    #[error("MISCONF Errors writing to the AOF file: {0}")]
    AofWriteFailed(String),
    /// A write after a failed background save (`stop-writes-on-bgsave-error yes`).
    #[error(
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
    )]
    BgsaveFailed,
    /// A command other than the few a subscribed RESP2 client may send (its name).
    #[error(
        "ERR Can't execute '{0}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    )]
    NotAllowedWhileSubscribed(String),

    // Arguments shared by several commands.
    /// A timeout that is no integer (WAIT, WAITAOF, CLIENT PAUSE).
    #[error("ERR timeout is not an integer or out of range")]
    TimeoutNotInteger,
    /// A negative timeout.
    #[error("ERR timeout is negative")]
    TimeoutNegative,
    /// A timeout too large to add to the current time.
    #[error("ERR timeout is out of range")]
    TimeoutOutOfRange,
    /// A database index past `databases`, or negative.
    #[error("ERR DB index is out of range")]
    DbIndexOutOfRange,
    /// An integer that does not fit 32 bits where Redis reads an `int`.
    #[error("ERR value is out of range, value must between {0} and {1}")]
    IntOutOfRange(i32, i32),

    // Connections: AUTH, HELLO, SELECT, CLIENT.
    /// AUTH with a wrong password.
    #[error("WRONGPASS invalid username-password pair or user is disabled.")]
    WrongPass,
    /// AUTH with no `requirepass` set.
    #[error(
        "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
    )]
    AuthWithoutPassword,
    /// HELLO with a protocol version other than 2 or 3.
    #[error("NOPROTO unsupported protocol version")]
    NoProto,
    /// HELLO with a protocol version that is no integer.
    #[error("ERR Protocol version is not an integer or out of range")]
    ProtocolVersionNotInteger,
    /// HELLO with an option it does not know (the option).
    #[error("ERR Syntax error in HELLO option '{0}'")]
    HelloSyntax(String),
    /// HELLO from an unauthenticated client without AUTH.
    #[error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
    )]
    HelloNoAuth,
    /// CLIENT SETNAME (or HELLO SETNAME) with a space, newline or special character.
    #[error("ERR Client names cannot contain spaces, newlines or special characters.")]
    InvalidClientName,
    /// CLIENT LIST or CLIENT KILL with an option it does not know (the option).
    #[error("ERR Unrecognized option '{0}'")]
    UnrecognizedOption(String),
    /// CLIENT TRACKING with REDIRECT twice.
    #[error("ERR A client can only redirect to a single other client")]
    TrackingRedirectTwice,
    /// CLIENT TRACKING REDIRECT to an id no client has.
    #[error("ERR The client ID you want redirect to does not exist")]
    TrackingRedirectMissing,
    /// CLIENT TRACKING ON with PREFIX but not BCAST.
    #[error("ERR PREFIX option requires BCAST mode to be enabled")]
    TrackingPrefixWithoutBcast,
    /// CLIENT TRACKING ON switching BCAST while tracking.
    #[error(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
    )]
    TrackingBcastSwitch,
    /// CLIENT TRACKING ON BCAST with OPTIN or OPTOUT.
    #[error("ERR OPTIN and OPTOUT are not compatible with BCAST")]
    TrackingOptWithBcast,
    /// CLIENT TRACKING ON OPTIN OPTOUT.
    #[error("ERR You can't specify both OPTIN mode and OPTOUT mode")]
    TrackingOptinAndOptout,
    /// CLIENT TRACKING ON switching between OPTIN and OPTOUT while tracking.
    #[error(
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
    )]
    TrackingOptSwitch,
    /// CLIENT CACHING without tracking on.
    #[error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
    )]
    CachingWithoutTracking,
    /// CLIENT CACHING YES outside OPTIN mode.
    #[error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")]
    CachingYesWithoutOptin,
    /// CLIENT CACHING NO outside OPTOUT mode.
    #[error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")]
    CachingNoWithoutOptout,
    /// CLIENT SETINFO with a value holding spaces or special characters (the option as given).
    #[error("ERR {0} cannot contain spaces, newlines or special characters.")]
    InvalidClientAttr(String),
    /// CLIENT UNBLOCK with a reason other than TIMEOUT or ERROR.
    #[error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")]
    UnblockReason,
    /// CLIENT LIST ID with an id that is no integer.
    #[error("ERR Invalid client ID")]
    InvalidClientId,
    /// CLIENT KILL ip:port naming no client.
    #[error("ERR No such client")]
    NoSuchClient,
    /// CLIENT KILL ID with an id below 1.
    #[error("ERR client-id should be greater than 0")]
    ClientIdNotPositive,
    /// CLIENT PAUSE with a mode other than WRITE or ALL.
    #[error("ERR CLIENT PAUSE mode must be WRITE or ALL")]
    PauseMode,

    // Transactions.
    /// MULTI inside MULTI.
    #[error("ERR MULTI calls can not be nested")]
    NestedMulti,
    /// DISCARD outside MULTI.
    #[error("ERR DISCARD without MULTI")]
    DiscardWithoutMulti,
    /// EXEC outside MULTI.
    #[error("ERR EXEC without MULTI")]
    ExecWithoutMulti,
    /// EXEC of a transaction a queued command was refused in.
    #[error("EXECABORT Transaction discarded because of previous errors.")]
    ExecAbort,
    /// WATCH inside MULTI.
    #[error("ERR WATCH inside MULTI is not allowed")]
    WatchInsideMulti,

    // Keys (the one-database key commands' errors are the engine's).
    /// COPY or MOVE onto the key itself.
    #[error("ERR source and destination objects are the same")]
    SameObject,
    /// SWAPDB's first index is no 32-bit integer.
    #[error("ERR invalid first DB index")]
    InvalidFirstDb,
    /// SWAPDB's second index is no 32-bit integer.
    #[error("ERR invalid second DB index")]
    InvalidSecondDb,
    /// RESTORE onto an existing key without REPLACE.
    #[error("BUSYKEY Target key name already exists.")]
    BusyKey,
    /// RESTORE with a negative TTL.
    #[error("ERR Invalid TTL value, must be >= 0")]
    InvalidTtl,
    /// RESTORE with a negative IDLETIME.
    #[error("ERR Invalid IDLETIME value, must be >= 0")]
    InvalidIdleTime,
    /// RESTORE with a FREQ outside 0..=255.
    #[error("ERR Invalid FREQ value, must be >= 0 and <= 255")]
    InvalidFreq,
    /// RESTORE of a payload whose footer does not check.
    #[error("ERR DUMP payload version or checksum are wrong")]
    BadDumpPayload,
    /// RESTORE of a payload whose value does not decode.
    #[error("ERR Bad data format")]
    BadDataFormat,
    /// OBJECT IDLETIME under an LFU policy.
    #[error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
    )]
    LruNotSelected,
    /// OBJECT FREQ without an LFU policy.
    #[error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
    )]
    LfuNotSelected,

    // Persistence.
    /// SAVE or BGSAVE while a save runs.
    #[error("ERR Background save already in progress")]
    SaveInProgress,
    /// SAVE that failed (the log says why; Redis replies the bare prefix).
    #[error("ERR")]
    SaveFailed,
    /// BGSAVE whose thread could not start (the reason).
    #[error("ERR Can't save in background: {0}")]
    BgsaveNotStarted(String),
    /// BGSAVE without SCHEDULE while another kind of child (an AOF rewrite) runs.
    #[error(
        "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."
    )]
    AnotherChildActive,
    /// BGREWRITEAOF while a rewrite runs.
    #[error("ERR Background append only file rewriting already in progress")]
    RewriteInProgress,
    /// BGREWRITEAOF that could not start.
    #[error(
        "ERR Can't execute an AOF background rewriting. Please check the server logs for more information."
    )]
    RewriteFailed,
    /// WAITAOF's numlocal not 0 or 1.
    #[error("ERR value is out of range, value must between 0 and 1")]
    NumLocalOutOfRange,
    /// DEBUG POPULATE of more keys than a database can hold (Redis's failed table expansion).
    #[error("ERR OOM in dictTryExpand")]
    PopulateOutOfMemory,
    /// WAITAOF's numreplicas negative.
    #[error("ERR value is out of range, must be positive")]
    NumReplicasNegative,
    /// WAITAOF numlocal 1 with `appendonly no`.
    #[error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")]
    WaitaofWithoutAof,
    /// SHUTDOWN ABORT with no shutdown running.
    #[error("ERR No shutdown in progress.")]
    NoShutdownInProgress,
    /// SHUTDOWN whose final save failed.
    #[error("ERR Errors trying to SHUTDOWN. Check logs.")]
    ShutdownFailed,

    // Introspection and configuration.
    /// COMMAND GETKEYS of a command that is not one.
    #[error("ERR Invalid command specified")]
    InvalidCommand,
    /// COMMAND GETKEYS with the wrong number of arguments for the command.
    #[error("ERR Invalid number of arguments specified for command")]
    InvalidArgumentCount,
    /// COMMAND GETKEYS of a command without keys.
    #[error("ERR The command has no key arguments")]
    NoKeyArguments,
    /// COMMAND GETKEYS of a request too malformed to name its keys.
    #[error("ERR Invalid arguments specified for command")]
    InvalidArguments,
    /// DEBUG with a subcommand it does not know (the subcommand).
    #[error("ERR unknown subcommand or wrong number of arguments for '{0}'. Try DEBUG HELP.")]
    DebugUnknownSubcommand(String),
    /// DEBUG QUICKLIST-PACKED-THRESHOLD out of range or not a memory value.
    #[error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")]
    PackedThreshold,
    /// DEBUG LISTPACK of a value not so encoded.
    #[error("ERR Not a listpack encoded object.")]
    NotListpack,
    /// DEBUG QUICKLIST of a value not so encoded.
    #[error("ERR Not a quicklist encoded object.")]
    NotQuicklist,
    /// DEBUG RELOAD with an option it does not know.
    #[error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")]
    DebugReloadOption,
    /// DEBUG RELOAD whose file could not be loaded (or held a key already there).
    #[error("ERR Error trying to load the RDB dump, check server logs.")]
    DebugReloadFailed,
    /// DEBUG PROTOCOL PUSH from a RESP2 client.
    #[error("ERR RESP2 is not supported by this command")]
    DebugPushResp2,
    /// DEBUG PROTOCOL with a type it does not know.
    #[error(
        "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"
    )]
    DebugProtocolType,
    /// LATENCY GRAPH of an event with no sample (the event).
    #[error("ERR No samples available for event '{0}'")]
    NoLatencySamples(String),
    /// DEBUG with `enable-debug-command no`.
    #[error(
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
    )]
    DebugNotAllowed,
    /// SLOWLOG GET with a count below -1.
    #[error("ERR count should be greater than or equal to -1")]
    SlowlogCount,
    /// CONFIG REWRITE (echomq runs without a config file).
    #[error("ERR The server is running without a config file")]
    NoConfigFile,
    /// CONFIG REWRITE that could not write the file (the system's reason).
    #[error("ERR Rewriting config file: {0}")]
    ConfigRewriteFailed(String),
    /// CONFIG SET of a parameter it does not know (the parameter).
    #[error("ERR Unknown option or number of arguments for CONFIG SET - '{0}'")]
    UnknownConfig(String),
    /// CONFIG SET naming a parameter twice (the parameter).
    #[error("ERR CONFIG SET failed (possibly related to argument '{0}') - duplicate parameter")]
    DuplicateConfig(String),
    /// CONFIG SET of a parameter fixed at start (the parameter).
    #[error(
        "ERR CONFIG SET failed (possibly related to argument '{0}') - can't set immutable config"
    )]
    ImmutableConfig(String),
    /// CONFIG SET of a protected parameter (`dir`, `dbfilename`) by a client that
    /// `enable-protected-configs` does not allow (the parameter).
    #[error(
        "ERR CONFIG SET failed (possibly related to argument '{0}') - can't set protected config"
    )]
    ProtectedConfig(String),
    /// CONFIG SET of a value the parameter refuses.
    #[error("ERR {0}")]
    ConfigRefused(#[from] crate::error::ConfigRefusal),

    // Pub/sub and cluster mode.
    /// SSUBSCRIBE from a client that may not block (inside MULTI).
    #[error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")]
    SsubscribeDenyBlocking,
    /// A CLUSTER command with `cluster-enabled no`.
    #[error("ERR This instance has cluster support disabled")]
    ClusterDisabled,
    /// A request whose keys hash to different slots.
    #[error("CROSSSLOT Keys in request don't hash to the same slot")]
    CrossSlot,
    /// SELECT of a database other than 0 in cluster mode.
    #[error("ERR SELECT is not allowed in cluster mode")]
    SelectInClusterMode,
    /// COPY with DB in cluster mode.
    #[error("ERR Copying to another database is not allowed in cluster mode")]
    CopyInClusterMode,
    /// MOVE or SWAPDB in cluster mode (the command, upper case).
    #[error("ERR {0} is not allowed in cluster mode")]
    NotAllowedInClusterMode(String),
    /// CLUSTER COUNTKEYSINSLOT of a slot outside 0..16384.
    #[error("ERR Invalid slot")]
    InvalidSlot,
    /// CLUSTER GETKEYSINSLOT of a slot outside 0..16384 or a negative count.
    #[error("ERR Invalid slot or number of keys")]
    InvalidSlotOrCount,
}

impl From<CommandError> for Reply {
    fn from(e: CommandError) -> Reply {
        Reply::Error(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_replies_its_text_with_the_arguments_in_place() {
        assert_eq!(
            Reply::from(CommandError::IntOutOfRange(i32::MIN, i32::MAX)),
            Reply::Error(
                "ERR value is out of range, value must between -2147483648 and 2147483647".into()
            )
        );
        assert_eq!(
            Reply::from(CommandError::SaveFailed),
            Reply::Error("ERR".into())
        );
    }
}

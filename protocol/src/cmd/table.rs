//! The server's command table, and the lookup over it and the engine's commands.
//!
//! [`COMMANDS`] is the one place a server command is declared: its [`CommandSpec`] (name,
//! arity, flags, key positions, subcommands with their own arity, flags and counted name) and
//! the function that runs it. The engine's commands (strings, one-database key commands,
//! streams) are declared in the engine's table
//! ([`echomq_engine::command::specs`]); [`lookup`] finds a name in either, server commands
//! first, and [`all`] lists both in that order (COMMAND, COMMAND LIST, COMMAND COUNT).

use std::sync::OnceLock;

use echomq_engine::Reply;
use echomq_engine::command::{self as engine, CommandSpec, Subcommand};

use super::{
    Ctx, acl, archive, clock, cluster, config, connection, copy, debug, dump, flushall, info,
    introspection, latency, lolwut, memory, object, persistence, pubsub, role, shutdown, slowlog,
    transaction, wait,
};
use crate::script;
use crate::state::stats::CallId;
use crate::state::{ClientState, ServerState};
use echomq_engine::command::flags::{
    DENY_OOM, LOADING_OK, MAY_REPLICATE, NO_AUTH, NO_MULTI, TX_CONTROL, WRITE,
};

/// How a server command runs.
#[derive(Clone, Copy)]
pub(crate) enum Run {
    /// Under the keyspace lock, with the databases and one time snapshot.
    Keyspace(fn(&mut Ctx<'_>, &[&[u8]]) -> Reply),
    /// Without the keyspace (PING, ECHO, PUBLISH): no lock, no snapshot, no database
    /// prepared; it sees the server and the client that sent it.
    NoKeyspace(fn(&ServerState, &ClientState, &[&[u8]]) -> Reply),
}

/// One server command: what it is and how it runs.
pub(crate) struct Command {
    pub spec: CommandSpec,
    pub run: Run,
}

const fn command(spec: CommandSpec, run: fn(&mut Ctx<'_>, &[&[u8]]) -> Reply) -> Command {
    Command {
        spec,
        run: Run::Keyspace(run),
    }
}

/// A command that does not touch the keyspace.
const fn keyless_command(
    spec: CommandSpec,
    run: fn(&ServerState, &ClientState, &[&[u8]]) -> Reply,
) -> Command {
    Command {
        spec,
        run: Run::NoKeyspace(run),
    }
}

const fn spec(name: &'static str, arity: i32) -> CommandSpec {
    CommandSpec::new(name, arity)
}

const fn sub(full_name: &'static str, arity: i32) -> Subcommand {
    Subcommand::new(full_name, arity)
}

/// The server commands, in COMMAND's order.
pub(crate) const COMMANDS: &[Command] = &[
    keyless_command(spec("ping", -1), connection::ping),
    keyless_command(spec("echo", 2), connection::echo),
    command(
        spec("hello", -1).flags(NO_AUTH | LOADING_OK),
        connection::hello,
    ),
    command(
        spec("auth", -2).flags(NO_AUTH | LOADING_OK),
        connection::auth,
    ),
    command(spec("select", 2), connection::select),
    command(
        spec("quit", -1).flags(NO_AUTH | TX_CONTROL | LOADING_OK),
        connection::quit,
    ),
    command(
        spec("reset", 1).flags(NO_AUTH | TX_CONTROL),
        connection::reset,
    ),
    command(
        spec("client", -2).flags(LOADING_OK).subcommands(
            "CLIENT",
            &[
                sub("client|id", 2),
                sub("client|getname", 2),
                sub("client|setname", 3),
                sub("client|setinfo", 4),
                sub("client|info", 2),
                sub("client|list", -2),
                sub("client|kill", -3),
                sub("client|no-evict", 3),
                sub("client|no-touch", 3),
                sub("client|pause", -3),
                sub("client|unpause", 2),
                sub("client|reply", 3),
                sub("client|unblock", -3),
                sub("client|tracking", -3),
                sub("client|caching", 3),
                sub("client|getredir", 2),
                sub("client|trackinginfo", 2),
                sub("client|help", 2),
            ],
        ),
        connection::client,
    ),
    command(
        spec("copy", -3).flags(DENY_OOM | WRITE).keys(1, 2, 1),
        copy::copy,
    ),
    command(spec("move", 3).flags(WRITE).keys(1, 1, 1), copy::move_),
    command(spec("swapdb", 3).flags(WRITE), copy::swapdb),
    command(spec("dump", 2).keys(1, 1, 1), dump::dump),
    command(
        spec("restore", -4).flags(DENY_OOM | WRITE).keys(1, 1, 1),
        dump::restore,
    ),
    command(spec("flushall", -1).flags(WRITE), flushall::flushall),
    command(spec("multi", 1).flags(TX_CONTROL), transaction::multi),
    command(
        spec("exec", 1).flags(TX_CONTROL | MAY_REPLICATE),
        transaction::exec,
    ),
    command(spec("discard", 1).flags(TX_CONTROL), transaction::discard),
    command(
        spec("watch", -2).flags(TX_CONTROL).keys(1, -1, 1),
        transaction::watch,
    ),
    command(spec("unwatch", 1), transaction::unwatch),
    command(
        spec("config", -2).flags(LOADING_OK).subcommands(
            "CONFIG",
            &[
                sub("config|get", -3),
                sub("config|set", -4),
                sub("config|resetstat", 2),
                sub("config|rewrite", 2),
                sub("config|help", 2),
            ],
        ),
        config::config,
    ),
    command(spec("info", -1).flags(LOADING_OK), info::info),
    command(
        spec("command", -1).flags(LOADING_OK).subcommands(
            "COMMAND",
            &[
                sub("command|count", 2),
                sub("command|docs", -2),
                sub("command|info", -2),
                sub("command|getkeys", -3),
                sub("command|getkeysandflags", -3),
                sub("command|list", -2),
                sub("command|help", 2),
            ],
        ),
        introspection::command,
    ),
    command(spec("time", 1), introspection::time),
    command(
        spec("function", -2).subcommands(
            "FUNCTION",
            &[
                sub("function|delete", 3).flags(WRITE),
                sub("function|dump", 2),
                sub("function|flush", -2).flags(WRITE),
                sub("function|help", 2).flags(LOADING_OK),
                sub("function|kill", 2),
                sub("function|list", -2),
                sub("function|load", -3).flags(WRITE | DENY_OOM),
                sub("function|restore", -3).flags(WRITE | DENY_OOM),
                sub("function|stats", 2),
            ],
        ),
        script::function::function,
    ),
    command(
        spec("script", -2).subcommands(
            "SCRIPT",
            &[
                sub("script|load", 3),
                sub("script|exists", -3),
                sub("script|flush", -2),
                sub("script|kill", 2),
                sub("script|help", 2),
            ],
        ),
        script::script,
    ),
    command(spec("eval", -3).flags(MAY_REPLICATE), script::eval),
    command(spec("evalsha", -3).flags(MAY_REPLICATE), script::evalsha),
    command(spec("eval_ro", -3), script::eval_ro),
    command(
        spec("fcall", -3).flags(MAY_REPLICATE),
        script::function::fcall,
    ),
    command(spec("fcall_ro", -3), script::function::fcall_ro),
    command(spec("evalsha_ro", -3), script::evalsha_ro),
    command(spec("emq.xrange", -4).keys(1, 1, 1), archive::xrange),
    command(spec("emq.xrevrange", -4).keys(1, 1, 1), archive::xrevrange),
    command(
        spec("emq.clock", -1).flags(NO_MULTI),
        clock::emq_clock_unbatched,
    ),
    command(spec("debug", -2), debug::debug),
    command(spec("subscribe", -2), pubsub::subscribe),
    command(spec("unsubscribe", -1), pubsub::unsubscribe),
    command(spec("psubscribe", -2), pubsub::psubscribe),
    command(spec("punsubscribe", -1), pubsub::punsubscribe),
    command(spec("ssubscribe", -2).keys(1, -1, 1), pubsub::ssubscribe),
    command(
        spec("sunsubscribe", -1).keys(1, -1, 1),
        pubsub::sunsubscribe,
    ),
    keyless_command(spec("publish", 3).flags(MAY_REPLICATE), pubsub::publish),
    keyless_command(
        spec("spublish", 3).flags(MAY_REPLICATE).keys(1, 1, 1),
        pubsub::spublish,
    ),
    command(
        spec("pubsub", -2).subcommands(
            "PUBSUB",
            &[
                sub("pubsub|channels", -2),
                sub("pubsub|numsub", -2),
                sub("pubsub|numpat", 2),
                sub("pubsub|shardchannels", -2),
                sub("pubsub|shardnumsub", -2),
                sub("pubsub|help", 2),
            ],
        ),
        pubsub::pubsub,
    ),
    command(
        spec("object", -2).subcommands(
            "OBJECT",
            &[
                sub("object|encoding", 3),
                sub("object|refcount", 3),
                sub("object|idletime", 3),
                sub("object|freq", 3),
                sub("object|help", 2),
            ],
        ),
        object::object,
    ),
    command(
        spec("memory", -2).subcommands(
            "MEMORY",
            &[
                sub("memory|usage", -3),
                sub("memory|stats", 2),
                sub("memory|doctor", 2),
                sub("memory|malloc-stats", 2),
                sub("memory|purge", 2),
                sub("memory|help", 2),
            ],
        ),
        memory::memory,
    ),
    command(
        spec("acl", -2).flags(LOADING_OK).subcommands(
            "ACL",
            &[
                sub("acl|cat", -2),
                sub("acl|deluser", -3),
                sub("acl|dryrun", -4),
                sub("acl|genpass", -2),
                sub("acl|getuser", 3),
                sub("acl|list", 2),
                sub("acl|load", 2),
                sub("acl|log", -2),
                sub("acl|save", 2),
                sub("acl|setuser", -3),
                sub("acl|users", 2),
                sub("acl|whoami", 2),
                sub("acl|help", 2),
            ],
        ),
        acl::acl,
    ),
    command(
        spec("slowlog", -2).subcommands(
            "SLOWLOG",
            &[
                sub("slowlog|get", -2),
                sub("slowlog|len", 2),
                sub("slowlog|reset", 2),
                sub("slowlog|help", 2),
            ],
        ),
        slowlog::slowlog,
    ),
    command(
        spec("latency", -2).subcommands(
            "LATENCY",
            &[
                sub("latency|latest", 2),
                sub("latency|history", 3),
                sub("latency|reset", -2),
                sub("latency|doctor", 2),
                sub("latency|graph", 3),
                sub("latency|histogram", -2),
                sub("latency|help", 2),
            ],
        ),
        latency::latency,
    ),
    command(spec("wait", 3), wait::wait),
    keyless_command(spec("role", 1).flags(LOADING_OK), role::role),
    keyless_command(spec("lolwut", -1), lolwut::lolwut),
    command(spec("waitaof", 4), persistence::waitaof_queued),
    command(spec("monitor", 1), introspection::monitor),
    command(
        spec("cluster", -2).subcommands(
            "CLUSTER",
            &[
                sub("cluster|info", 2),
                sub("cluster|myid", 2),
                sub("cluster|myshardid", 2),
                sub("cluster|slots", 2),
                sub("cluster|shards", 2),
                sub("cluster|nodes", 2),
                sub("cluster|keyslot", 3),
                sub("cluster|countkeysinslot", 3),
                sub("cluster|getkeysinslot", 4),
                sub("cluster|help", 2),
            ],
        ),
        cluster::cluster,
    ),
    command(spec("readonly", 1), cluster::mode),
    command(spec("readwrite", 1), cluster::mode),
    command(spec("asking", 1), cluster::mode),
    command(spec("bgrewriteaof", 1), persistence::bgrewriteaof),
    command(spec("save", 1), persistence::save),
    command(
        spec("shutdown", -1).flags(LOADING_OK | NO_MULTI),
        shutdown::shutdown,
    ),
    command(spec("bgsave", -1), persistence::bgsave),
    command(spec("lastsave", 1), persistence::lastsave),
];

/// A command found by name.
#[derive(Clone, Copy)]
pub(crate) enum Found {
    /// A server command: it runs here, under the keyspace lock, through a [`Ctx`].
    Server(&'static Command),
    /// An engine command (a value type's, or a one-database key command): the engine runs
    /// it.
    Engine(&'static CommandSpec),
}

impl Found {
    /// What the table says about it.
    pub fn spec(self) -> &'static CommandSpec {
        match self {
            Found::Server(command) => &command.spec,
            Found::Engine(spec) => spec,
        }
    }
}

/// Longest command name the hashed index holds (`emq.xrevrange`, `xgroup`'s `createconsumer`
/// is a subcommand); the few longer ones (`georadiusbymember_ro`) are found by a scan.
const NAME_BYTES_MAX: usize = 16;

/// A name of at most [`NAME_BYTES_MAX`] bytes as two little-endian words (zero past its end)
/// and its length: the index compares names as three integers, not as byte strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    lo: u64,
    hi: u64,
    len: usize,
}

/// `name`'s bytes as a [`Key`] (`name` is 1 to [`NAME_BYTES_MAX`] bytes), read as at most
/// four overlapping loads: a byte read twice sits at the same place both times.
fn key_of(name: &[u8]) -> Key {
    let len = name.len();
    let word = |at: usize| u64::from_le_bytes(name[at..at + 8].try_into().unwrap_or_default());
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            name[at..at + 4].try_into().unwrap_or_default(),
        ))
    };
    let (lo, hi) = match len {
        0 => (0, 0),
        1..=3 => {
            let byte = |i: usize| u64::from(name[i]) << (8 * i);
            (byte(0) | byte(len / 2) | byte(len - 1), 0)
        }
        4..=7 => (half(0) | half(len - 4) << (8 * (len - 4)), 0),
        8 => (word(0), 0),
        _ => (word(0), word(len - 8) >> (8 * (16 - len))),
    };
    Key { lo, hi, len }
}

/// `word` with its ASCII upper-case letters lowered, eight bytes at once: a byte's high bit
/// after adding `0x80 - b'A'` (or `0x7f - b'Z'`) to its low seven bits says whether it is at
/// least `A` (or past `Z`); no sum carries into the next byte.
fn lowered(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let low7 = word & !HIGH;
    let at_least_a = low7 + ONES * (0x80 - u64::from(b'A'));
    let past_z = low7 + ONES * (0x7f - u64::from(b'Z'));
    let upper = (at_least_a ^ past_z) & !word & HIGH;
    word | (upper >> 2)
}

/// Slots of the index: a power of two, over four times the number of names, so a probe
/// nearly always ends at its first slot.
const INDEX_BITS: u32 = 10;

fn slot_of(key: &Key) -> usize {
    let mixed = key.lo ^ key.hi.rotate_left(29) ^ key.len as u64;
    (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - INDEX_BITS)) as usize
}

/// A command's row in the index: its key, what it is, and the id its calls are counted under
/// ([`CallId`]; its subcommands' ids follow it, in the table's order).
type Slot = Option<(Key, Found, CallId)>;

/// Every command by its lower-case name, built once from both tables: open addressing with
/// linear probing over [`Key`]s; and the counted names by [`CallId`].
struct Index {
    slots: Vec<Slot>,
    /// Names past [`NAME_BYTES_MAX`] bytes, with what they are and their id.
    long: Vec<(&'static str, Found, CallId)>,
    names: Vec<&'static str>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut slots = vec![None; 1 << INDEX_BITS];
        let mut long = Vec::new();
        let mut names = Vec::new();
        let server = COMMANDS.iter().map(|c| (c.spec.name, Found::Server(c)));
        let engine = engine::specs().map(|spec| (spec.name, Found::Engine(spec)));
        for (name, found) in server.chain(engine) {
            if name.len() > NAME_BYTES_MAX {
                long.push((name, found, names.len()));
                names.push(name);
                names.extend(found.spec().subcommands.iter().map(|sub| sub.full_name));
                continue;
            }
            let key = key_of(name.as_bytes());
            let mut at = slot_of(&key);
            while slots[at].is_some() {
                at = (at + 1) & ((1 << INDEX_BITS) - 1);
            }
            slots[at] = Some((key, found, names.len()));
            names.push(name);
            names.extend(found.spec().subcommands.iter().map(|sub| sub.full_name));
        }
        Index { slots, long, names }
    })
}

/// The name calls of `id` are counted under (`NULL` for an id no call has, as CLIENT LIST
/// shows a client that ran nothing yet).
pub(crate) fn call_name(id: CallId) -> &'static str {
    index().names.get(id).copied().unwrap_or("NULL")
}

/// The command called `name` (any case), server or engine, with the id its calls are
/// counted under; `None` if unknown.
pub(crate) fn find(name: &[u8]) -> Option<(Found, CallId)> {
    if name.len() > NAME_BYTES_MAX {
        return index()
            .long
            .iter()
            .find(|(n, _, _)| name.eq_ignore_ascii_case(n.as_bytes()))
            .map(|(_, found, id)| (*found, *id));
    }
    let raw = key_of(name);
    let key = Key {
        lo: lowered(raw.lo),
        hi: if raw.len > 8 { lowered(raw.hi) } else { 0 },
        len: raw.len,
    };
    let slots = &index().slots;
    let mut at = slot_of(&key);
    loop {
        match &slots[at] {
            Some((candidate, found, id)) if *candidate == key => return Some((*found, *id)),
            Some(_) => at = (at + 1) & ((1 << INDEX_BITS) - 1),
            None => return None,
        }
    }
}

/// The command called `name` (any case), server or engine; `None` if unknown.
pub(crate) fn lookup(name: &[u8]) -> Option<Found> {
    find(name).map(|(found, _)| found)
}

/// The subcommand `sub` (any case) of `spec`, the container whose calls count under `id`,
/// with the id its own calls count under.
pub(crate) fn find_subcommand(
    spec: &'static CommandSpec,
    id: CallId,
    sub: &[u8],
) -> Option<(&'static Subcommand, CallId)> {
    let at = spec
        .subcommands
        .iter()
        .position(|s| sub.eq_ignore_ascii_case(s.name().as_bytes()))?;
    Some((&spec.subcommands[at], id + 1 + at))
}

/// Every call id with its command and, for a subcommand's id, the subcommand: the ids
/// [`find`] and [`find_subcommand`] give, in order (ACL's command bitmaps index them).
pub(crate) fn calls()
-> impl Iterator<Item = (CallId, &'static CommandSpec, Option<&'static Subcommand>)> {
    all()
        .flat_map(|spec| {
            std::iter::once((spec, None))
                .chain(spec.subcommands.iter().map(move |s| (spec, Some(s))))
        })
        .enumerate()
        .map(|(id, (spec, sub))| (id, spec, sub))
}

/// Every command the server knows, server commands first.
pub(crate) fn all() -> impl Iterator<Item = &'static CommandSpec> {
    COMMANDS.iter().map(|c| &c.spec).chain(engine::specs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_found_in_any_case() {
        for spec in all() {
            let upper = spec.name.to_ascii_uppercase();
            assert_eq!(
                lookup(upper.as_bytes()).map(|f| f.spec().name),
                Some(spec.name)
            );
        }
        assert!(lookup(b"nosuchcommand").is_none());
        assert!(lookup(&[b'x'; NAME_BYTES_MAX + 1]).is_none());
        assert!(lookup(b"").is_none());
    }

    #[test]
    fn a_name_matches_only_itself_in_another_case() {
        for spec in all() {
            let name = spec.name.as_bytes();
            // A trailing NUL, a byte that only a sloppy lowering would map onto the name's,
            // and every prefix are other names.
            let mut longer = name.to_vec();
            longer.push(0);
            assert!(lookup(&longer).is_none_or(|f| f.spec().name != spec.name));
            for i in 0..name.len() {
                let mut other = name.to_vec();
                other[i] ^= 0x20;
                let expect = other[i].is_ascii_alphabetic();
                assert_eq!(
                    lookup(&other).is_some_and(|f| f.spec().name == spec.name),
                    expect,
                    "{:?}",
                    String::from_utf8_lossy(&other)
                );
                other[i] ^= 0x20 | 0x80;
                assert!(lookup(&other).is_none_or(|f| f.spec().name != spec.name));
                assert!(lookup(&name[..i]).is_none_or(|f| f.spec().name != spec.name));
            }
        }
    }

    #[test]
    fn every_counted_name_has_its_own_id() {
        let mut ids = std::collections::HashMap::new();
        for spec in all() {
            let (_, id) = find(spec.name.as_bytes()).unwrap();
            assert_eq!(ids.insert(id, spec.name), None);
            for (at, sub) in spec.subcommands.iter().enumerate() {
                let (found, sub_id) = find_subcommand(spec, id, sub.name().as_bytes()).unwrap();
                assert_eq!(found, sub);
                // A subcommand listed twice (COMMAND's `getkeys`) is found, and counted, at
                // its first place.
                if spec.subcommands[..at].contains(sub) {
                    assert_eq!(ids[&sub_id], sub.full_name);
                    continue;
                }
                assert_eq!(ids.insert(sub_id, sub.full_name), None);
                assert_eq!(call_name(sub_id), sub.full_name);
            }
            assert_eq!(call_name(id), spec.name);
        }
        assert_eq!(call_name(usize::MAX), "NULL");
        assert!(ids.keys().all(|&id| id < ids.len() + 1));
    }

    #[test]
    fn words_lower_like_bytes() {
        for b in 0..=255u8 {
            let word = u64::from_le_bytes([b, 0, b'Q', b'@', b'[', b'z', 0xC1, b]);
            let mut bytes = word.to_le_bytes();
            bytes.make_ascii_lowercase();
            assert_eq!(lowered(word), u64::from_le_bytes(bytes), "{b:#x}");
        }
        for len in 1..=NAME_BYTES_MAX {
            let name: Vec<u8> = (1..=len as u8).collect();
            let key = key_of(&name);
            let mut padded = [0u8; 16];
            padded[..len].copy_from_slice(&name);
            assert_eq!(key.lo, u64::from_le_bytes(padded[..8].try_into().unwrap()));
            assert_eq!(key.hi, u64::from_le_bytes(padded[8..].try_into().unwrap()));
        }
    }

    #[test]
    fn every_name_is_declared_once_across_both_tables() {
        let names: Vec<&str> = all().map(|spec| spec.name).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(name), "{name} declared twice");
            assert_eq!(*name, name.to_ascii_lowercase());
        }
    }

    #[test]
    fn containers_name_themselves_and_their_subcommands_consistently() {
        for spec in all() {
            if spec.subcommands.is_empty() {
                assert!(
                    spec.container.is_empty(),
                    "{} has a container name",
                    spec.name
                );
                continue;
            }
            assert_eq!(spec.container, spec.name.to_ascii_uppercase());
            for sub in spec.subcommands {
                let (container, name) = sub.full_name.split_once('|').unwrap();
                assert_eq!(container, spec.name);
                assert_eq!(sub.name(), name);
                assert_eq!(
                    spec.subcommand(name.to_ascii_uppercase().as_bytes()),
                    Some(sub)
                );
            }
        }
    }

    #[test]
    fn lookup_ignores_case_and_finds_server_commands_before_engine_ones() {
        assert!(matches!(lookup(b"PiNg"), Some(Found::Server(c)) if c.spec.name == "ping"));
        assert!(matches!(lookup(b"XADD"), Some(Found::Engine(s)) if s.name == "xadd"));
        assert!(lookup(b"nosuchcommand").is_none());
    }
}

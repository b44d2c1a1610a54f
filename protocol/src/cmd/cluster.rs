//! Cluster mode (`cluster-enabled yes`): the server is a one-node Redis Cluster that owns all
//! 16384 slots, so cluster clients (redis-rs `ClusterClient`, redis-py `RedisCluster`,
//! `redis-cli -c`) use it unchanged.
//!
//! `CLUSTER INFO|MYID|MYSHARDID|SLOTS|SHARDS|NODES|KEYSLOT|COUNTKEYSINSLOT|GETKEYSINSLOT|HELP`
//! answer with Redis 8.8's reply shapes for a node that is alone in its cluster: one master,
//! no replicas, epoch 0, state `ok`. `READONLY`, `READWRITE` and `ASKING` answer OK (one
//! master serves every slot, so they change nothing). Without cluster mode every one of them
//! answers Redis's `This instance has cluster support disabled`.
//!
//! [`refusal`] is the dispatcher's cluster check, before a command is queued or run, as
//! Redis's: a request whose keys ([`crate::slot::keys_of`]) hash to two slots is `-CROSSSLOT`,
//! and so is an EXEC whose queued commands do (which also discards the transaction). The
//! node's id is 40 hex digits drawn when the server starts (Redis keeps it in nodes.conf; a
//! node here forgets it when it stops). Addresses are the connection's local address, the one
//! the client reached: a node alone never learns its own IP from peers.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};

use bytes::Bytes;
use echomq_engine::command::CommandSpec;
use echomq_engine::{Error as EngineError, Reply};

use super::{Ctx, error, int_arg, subcommand_of, unknown_subcommand};
use crate::error::CommandError;
use crate::slot::{SLOTS, common_slot, key_slot, keys_of};
use crate::state::{ClientState, ServerState};

/// Redis's cluster bus port offset (`cluster-port 0`: the client port plus this).
const BUS_PORT_OFFSET: u32 = 10_000;
/// The last slot.
const LAST_SLOT: i64 = SLOTS as i64 - 1;

const HELP: &[&str] = &[
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MYID",
    "    Return the node id.",
    "MYSHARDID",
    "    Return the node's shard id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "HELP",
    "    Print this help.",
];

/// A fresh node id: 40 lower-case hex digits from the process's random hash keys.
pub(crate) fn new_node_id() -> String {
    let mut id = String::with_capacity(40);
    let mut round = 0u64;
    while id.len() < 40 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(round);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        hasher.write_u64(nanos);
        let _ = write!(id, "{:016x}", hasher.finish());
        round += 1;
    }
    id.truncate(40);
    id
}

/// The cluster check of a request about to be queued or run: `Some(reply)` refuses it.
pub(crate) fn refusal(
    state: &ServerState,
    client: &mut ClientState,
    spec: &CommandSpec,
    argv: &[&[u8]],
) -> Option<Reply> {
    if !state.cluster_enabled() {
        return None;
    }
    if spec.name == "exec" {
        let queued = client.multi.as_ref()?;
        let keys = queued.iter().flat_map(|request| {
            let argv: Vec<&[u8]> = request.iter().map(Bytes::as_ref).collect();
            let keys: Vec<Vec<u8>> = match argv.first().and_then(|name| super::lookup(name)) {
                Some(found) => keys_of(found.spec(), &argv)
                    .into_iter()
                    .map(<[u8]>::to_vec)
                    .collect(),
                None => Vec::new(),
            };
            keys
        });
        let slots: Vec<u16> = keys.map(|k| key_slot(&k)).collect();
        if slots.windows(2).any(|pair| pair[0] != pair[1]) {
            // Redis discards the transaction along with the refusal.
            client.multi = None;
            client.multi_failed = false;
            return Some(CommandError::CrossSlot.into());
        }
        return None;
    }
    match common_slot(keys_of(spec, argv)) {
        Ok(_) => None,
        Err(()) => Some(CommandError::CrossSlot.into()),
    }
}

/// Whether SELECT of `index` is refused: in cluster mode only database 0 exists.
pub(crate) fn refuses_select(ctx: &Ctx<'_>, index: i64) -> Option<Reply> {
    (ctx.state.settings().cluster_enabled && index != 0)
        .then(|| CommandError::SelectInClusterMode.into())
}

/// Whether a command reaching beyond database 0 (`beyond`) is refused: in cluster mode only
/// database 0 exists. MOVE and SWAPDB always reach beyond it; COPY when its DB option does.
pub(crate) fn refuses_db(ctx: &Ctx<'_>, beyond: bool, command: &str) -> Option<Reply> {
    if !(beyond && ctx.state.settings().cluster_enabled) {
        return None;
    }
    Some(
        if command == "COPY" {
            CommandError::CopyInClusterMode
        } else {
            CommandError::NotAllowedInClusterMode(command.to_string())
        }
        .into(),
    )
}

/// `READONLY`, `READWRITE`, `ASKING`: OK in cluster mode.
pub(crate) fn mode(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    if ctx.state.settings().cluster_enabled {
        Reply::OK
    } else {
        CommandError::ClusterDisabled.into()
    }
}

/// What the replies say about this node.
struct Me {
    id: String,
    ip: String,
    port: u16,
}

impl Me {
    fn of(ctx: &Ctx<'_>) -> Me {
        let settings = ctx.state.settings();
        let ip = ctx
            .client
            .info
            .laddr
            .as_ref()
            .and_then(|addr| addr.ip())
            .map_or_else(|| settings.bind.clone(), |ip| ip.to_string());
        Me {
            id: settings.cluster_node_id.clone(),
            ip,
            port: settings.port,
        }
    }

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(text.as_bytes()))
    }
}

/// CLUSTER.
pub(crate) fn cluster(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if !ctx.state.settings().cluster_enabled {
        return CommandError::ClusterDisabled.into();
    }
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    let me = Me::of(ctx);
    match sub.name() {
        "help" => super::help(HELP),
        "info" => Reply::Verbatim(Bytes::from(info())),
        "myid" | "myshardid" => Me::bulk(&me.id),
        "nodes" => Reply::Verbatim(Bytes::from(format!(
            "{} {}:{}@{} myself,master - 0 0 0 connected 0-{LAST_SLOT}\n",
            me.id,
            me.ip,
            me.port,
            u32::from(me.port) + BUS_PORT_OFFSET
        ))),
        "slots" => Reply::Array(vec![Reply::Array(vec![
            Reply::Int(0),
            Reply::Int(LAST_SLOT),
            Reply::Array(vec![
                Me::bulk(&me.ip),
                Reply::Int(i64::from(me.port)),
                Me::bulk(&me.id),
                Reply::Map(Vec::new()),
            ]),
        ])]),
        "shards" => shards(&me),
        "keyslot" => Reply::Int(i64::from(key_slot(argv[2]))),
        "countkeysinslot" => match slot_arg(argv[2], CommandError::InvalidSlot) {
            Ok(slot) => Reply::Int(keys_in_slot(ctx, slot, usize::MAX).len() as i64),
            Err(reply) => reply,
        },
        "getkeysinslot" => getkeysinslot(ctx, argv),
        _ => unknown_subcommand(argv),
    }
}

/// CLUSTER INFO's text for a node alone in its cluster.
fn info() -> String {
    let slots = SLOTS;
    format!(
        "cluster_state:ok\r\n\
         cluster_slots_assigned:{slots}\r\n\
         cluster_slots_ok:{slots}\r\n\
         cluster_slots_pfail:0\r\n\
         cluster_slots_fail:0\r\n\
         cluster_known_nodes:1\r\n\
         cluster_size:1\r\n\
         cluster_current_epoch:0\r\n\
         cluster_my_epoch:0\r\n\
         cluster_stats_messages_sent:0\r\n\
         cluster_stats_messages_received:0\r\n\
         total_cluster_links_buffer_limit_exceeded:0\r\n"
    )
}

/// CLUSTER SHARDS: one shard, all slots, this node its master.
fn shards(me: &Me) -> Reply {
    let field = |name: &'static str, value: Reply| (Reply::bulk_static(name), value);
    let node = Reply::Map(vec![
        field("id", Me::bulk(&me.id)),
        field("port", Reply::Int(i64::from(me.port))),
        field("ip", Me::bulk(&me.ip)),
        field("endpoint", Me::bulk(&me.ip)),
        field("role", Reply::bulk_static("master")),
        field("replication-offset", Reply::Int(0)),
        field("health", Reply::bulk_static("online")),
    ]);
    Reply::Array(vec![Reply::Map(vec![
        field(
            "slots",
            Reply::Array(vec![Reply::Int(0), Reply::Int(LAST_SLOT)]),
        ),
        field("nodes", Reply::Array(vec![node])),
    ])])
}

/// A slot argument: an integer (Redis's integer error otherwise) in 0..16384 (`invalid`
/// otherwise).
fn slot_arg(arg: &[u8], invalid: CommandError) -> Result<u16, Reply> {
    let n = int_arg(arg)?;
    if !(0..=LAST_SLOT).contains(&n) {
        return Err(invalid.into());
    }
    Ok(n as u16)
}

/// CLUSTER GETKEYSINSLOT slot count.
fn getkeysinslot(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let slot = match int_arg(argv[2]) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    let count = match int_arg(argv[3]) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    if !(0..=LAST_SLOT).contains(&slot) || count < 0 {
        return CommandError::InvalidSlotOrCount.into();
    }
    let keys = keys_in_slot(
        ctx,
        slot as u16,
        usize::try_from(count).unwrap_or(usize::MAX),
    );
    Reply::Array(keys.into_iter().map(Reply::Bulk).collect())
}

/// Up to `limit` keys of database 0 in `slot`, in byte order.
fn keys_in_slot(ctx: &mut Ctx<'_>, slot: u16, limit: usize) -> Vec<Bytes> {
    let mut keys: Vec<Bytes> = ctx.dbs.all()[0]
        .keys()
        .filter(|key| key_slot(key) == slot)
        .map(Bytes::from)
        .collect();
    keys.sort();
    keys.truncate(limit);
    keys
}

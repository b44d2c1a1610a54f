//! The one command table and its dispatch: commands as Redis defines them (parse arguments,
//! apply to the [`Db`], reply).
//!
//! Each value type keeps its commands in its own folder (the stream's in
//! `types/stream/commands/`, the string's in `types/string/commands/`), and the generic key
//! commands that need one database are in `keys/`; one file per command (or pair of mirror commands), each a struct
//! named after the command with `parse` (arguments to a typed request, Redis's exact errors)
//! and `apply` (the request against the keyspace, producing a [`Reply`]). The table below, one [`CommandSpec`] per
//! command, is the one place a command's name, arity, flags, subcommands and key positions are
//! declared (the protocol crate reads it through [`spec`] and [`specs`]); arity is checked
//! once, here, from it, and a container's subcommand by its row. Option parsing happens before
//! any key lookup where Redis does it that way, so a failed command changes nothing. The
//! embedded API, the server and the fuzz target all go through [`execute`], so they cannot
//! disagree.
//!
//! Effects: each command's `apply` produces its own effects as it runs, through the [`Db`]
//! (Redis's order: the change, `signalModifiedKey` as [`Db::touch`], `notifyKeyspaceEvent` as
//! [`Db::notify`], `signalKeyAsReady` as [`Db::signal_ready`], `server.dirty` as
//! [`Db::add_dirty`], `alsoPropagate` as [`Db::propagate`]); [`Db::wrote`] and [`Db::changed`]
//! are the common combinations. Each command file documents its effects. The dirty counter
//! counts as Redis does: 1 per SET, INCR, RENAME, EXPIRE-family call, PERSIST and FLUSHDB
//! that changed something (and per string command that changed its key; MSET, MSETNX and
//! MSETEX one per pair), the keys removed for DEL and UNLINK; 1 per XADD, XSETID, XGROUP change, XCFGSET and XIDMPRECORD; the
//! entries removed or acknowledged for XDEL, XTRIM, XACK, XNACK, XDELEX and XACKDEL; the
//! forms XCLAIM and XAUTOCLAIM propagate; 1 per stream an XREADGROUP delivered from or created
//! its consumer in. Read lookups (INFO's `keyspace_hits`/`keyspace_misses`, `keymiss`) are
//! counted where Redis looks a key up for reading: XRANGE, XREVRANGE, XLEN, XPENDING and
//! XINFO after parsing; XACK, XACKDEL, XCLAIM and XAUTOCLAIM before; XREAD and XREADGROUP
//! once per key while checking ids and once per key while serving.

pub(crate) mod args;
mod by_name;
pub(crate) mod keys;
mod sort;
mod spec;

pub use args::{parse_i64, parse_u64_nonneg};
pub use keys::flushdb::FlushDb;
pub use spec::{CommandSpec, KeyPositions, Subcommand, flags, streams_keys};

pub use crate::types::stream::commands::{RangeArgs, XAdd, parse_range};
use crate::types::stream::commands::{
    xack, xadd, xautoclaim, xcfgset, xclaim, xdel, xdelex, xgroup, xidmprecord, xinfo, xlen, xnack,
    xpending, xrange, xread, xsetid, xtrim,
};

use crate::types::hash::commands as hash_cmds;
use crate::types::list::commands::{blocking, edit, lmove, pop, push, read};
use crate::types::set::commands as set_cmds;
use crate::types::string::bitmap::{bitfield, bitop, count_pos, setbit_getbit};
use crate::types::string::commands::{
    digest_delex, get, getex, getset_getdel, incr, incrbyfloat, increx, lcs, mget_mset, msetex,
    range, set, setnx_setex, strlen,
};
use crate::types::string::hyperloglog::commands as pf;
use crate::types::zset::commands as zset_cmds;
use keys::{dbsize, del, exists, expire, flushdb, keys_command, persist, rename, scan, touch, ttl};

use crate::blocking::Outcome;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

type PlainRun = fn(&mut Db, &Snapshot, &[&[u8]]) -> Result<Reply>;
type BlockingRun = fn(&mut Db, &Snapshot, &[&[u8]]) -> Result<Outcome>;

/// How a command runs.
#[derive(Clone, Copy)]
enum Run {
    /// Always replies.
    Plain(PlainRun),
    /// May ask to block.
    Blocking(BlockingRun),
}

/// One row of the table: what the command is ([`CommandSpec`]) and how it runs.
#[derive(Clone, Copy)]
struct Entry {
    spec: CommandSpec,
    run: Run,
}

impl Entry {
    const fn plain(spec: CommandSpec, run: PlainRun) -> Entry {
        Entry {
            spec,
            run: Run::Plain(run),
        }
    }

    /// A command that may block carries the BLOCKING flag, so the flag cannot disagree with
    /// how it runs.
    const fn blocking(spec: CommandSpec, run: BlockingRun) -> Entry {
        Entry {
            spec: spec.flags(flags::BLOCKING),
            run: Run::Blocking(run),
        }
    }
}

/// The engine's commands: the one place their names, arities, flags, subcommands and key
/// positions are declared. The string commands come first (the most frequent), then the
/// generic key commands that need one database (`keys/`), then the stream commands.
static COMMANDS: &[Entry] = &[
    Entry::plain(
        CommandSpec::new("set", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        set::Set::run,
    ),
    Entry::plain(CommandSpec::new("get", 2).keys(1, 1, 1), get::Get::run),
    Entry::plain(
        CommandSpec::new("incr", 2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        incr::Incr::run,
    ),
    Entry::plain(
        CommandSpec::new("strlen", 2).keys(1, 1, 1),
        strlen::StrLen::run,
    ),
    Entry::plain(
        CommandSpec::new("setnx", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        setnx_setex::SetNx::run,
    ),
    Entry::plain(
        CommandSpec::new("setex", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        setnx_setex::SetEx::run,
    ),
    Entry::plain(
        CommandSpec::new("psetex", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        setnx_setex::PSetEx::run,
    ),
    Entry::plain(
        CommandSpec::new("getset", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        getset_getdel::GetSet::run,
    ),
    Entry::plain(
        CommandSpec::new("getdel", 2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        getset_getdel::GetDel::run,
    ),
    Entry::plain(
        CommandSpec::new("getex", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        getex::GetEx::run,
    ),
    Entry::plain(
        CommandSpec::new("mget", -2).keys(1, -1, 1),
        mget_mset::MGet::run,
    ),
    Entry::plain(
        CommandSpec::new("mset", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, -1, 2),
        mget_mset::MSet::run,
    ),
    Entry::plain(
        CommandSpec::new("msetnx", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, -1, 2),
        mget_mset::MSet::run_nx,
    ),
    Entry::plain(
        CommandSpec::new("msetex", -4).flags(flags::DENY_OOM | flags::WRITE),
        msetex::MSetEx::run,
    ),
    Entry::plain(
        CommandSpec::new("append", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        range::Append::run,
    ),
    Entry::plain(
        CommandSpec::new("setrange", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        range::SetRange::run,
    ),
    Entry::plain(
        CommandSpec::new("getrange", 4).keys(1, 1, 1),
        range::GetRange::run,
    ),
    Entry::plain(
        CommandSpec::new("substr", 4).keys(1, 1, 1),
        range::GetRange::run,
    ),
    Entry::plain(
        CommandSpec::new("decr", 2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        incr::Incr::run_decr,
    ),
    Entry::plain(
        CommandSpec::new("incrby", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        incr::Incr::run_by,
    ),
    Entry::plain(
        CommandSpec::new("decrby", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        incr::Incr::run_decr_by,
    ),
    Entry::plain(
        CommandSpec::new("incrbyfloat", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        incrbyfloat::IncrByFloat::run,
    ),
    Entry::plain(
        CommandSpec::new("increx", -2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        increx::Increx::run,
    ),
    Entry::plain(
        CommandSpec::new("setbit", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        setbit_getbit::SetBit::run,
    ),
    Entry::plain(
        CommandSpec::new("getbit", 3).keys(1, 1, 1),
        setbit_getbit::GetBit::run,
    ),
    Entry::plain(
        CommandSpec::new("bitcount", -2).keys(1, 1, 1),
        count_pos::BitCount::run,
    ),
    Entry::plain(
        CommandSpec::new("bitpos", -3).keys(1, 1, 1),
        count_pos::BitPos::run,
    ),
    Entry::plain(
        CommandSpec::new("bitop", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(2, -1, 1),
        bitop::BitOp::run,
    ),
    Entry::plain(
        CommandSpec::new("bitfield", -2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        bitfield::BitField::run,
    ),
    Entry::plain(
        CommandSpec::new("bitfield_ro", -2).keys(1, 1, 1),
        bitfield::BitField::run_ro,
    ),
    Entry::plain(
        CommandSpec::new("pfadd", -2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        pf::PfAdd::run,
    ),
    Entry::plain(
        CommandSpec::new("pfcount", -2).keys(1, -1, 1),
        pf::PfCount::run,
    ),
    Entry::plain(
        CommandSpec::new("pfmerge", -2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, -1, 1),
        pf::PfMerge::run,
    ),
    Entry::plain(
        CommandSpec::new("pfdebug", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(2, 2, 1),
        pf::PfDebug::run,
    ),
    Entry::plain(CommandSpec::new("pfselftest", 1), pf::PfSelfTest::run),
    Entry::plain(CommandSpec::new("lcs", -3).keys(1, 2, 1), lcs::Lcs::run),
    Entry::plain(
        CommandSpec::new("digest", 2).keys(1, 1, 1),
        digest_delex::Digest::run,
    ),
    Entry::plain(
        CommandSpec::new("delex", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        digest_delex::DelEx::run,
    ),
    Entry::plain(
        CommandSpec::new("del", -2)
            .flags(flags::WRITE)
            .keys(1, -1, 1),
        del::Del::run,
    ),
    Entry::plain(
        CommandSpec::new("unlink", -2)
            .flags(flags::WRITE)
            .keys(1, -1, 1),
        del::Del::run,
    ),
    Entry::plain(
        CommandSpec::new("exists", -2).keys(1, -1, 1),
        exists::Exists::run,
    ),
    Entry::plain(CommandSpec::new("type", 2).keys(1, 1, 1), exists::Type::run),
    Entry::plain(CommandSpec::new("dbsize", 1), dbsize::DbSize::run),
    Entry::plain(
        CommandSpec::new("touch", -2).keys(1, -1, 1),
        touch::Touch::run,
    ),
    Entry::plain(CommandSpec::new("randomkey", 1), touch::RandomKey::run),
    Entry::plain(CommandSpec::new("keys", 2), keys_command::Keys::run),
    Entry::plain(CommandSpec::new("scan", -2), scan::Scan::run),
    Entry::plain(
        CommandSpec::new("flushdb", -1).flags(flags::WRITE),
        flushdb::FlushDb::run,
    ),
    Entry::plain(
        CommandSpec::new("rename", 3)
            .flags(flags::WRITE)
            .keys(1, 2, 1),
        rename::Rename::run,
    ),
    Entry::plain(
        CommandSpec::new("renamenx", 3)
            .flags(flags::WRITE)
            .keys(1, 2, 1),
        rename::Rename::run_nx,
    ),
    Entry::plain(
        CommandSpec::new("expire", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        expire::Expire::run_expire,
    ),
    Entry::plain(
        CommandSpec::new("pexpire", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        expire::Expire::run_pexpire,
    ),
    Entry::plain(
        CommandSpec::new("expireat", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        expire::Expire::run_expireat,
    ),
    Entry::plain(
        CommandSpec::new("pexpireat", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        expire::Expire::run_pexpireat,
    ),
    Entry::plain(CommandSpec::new("ttl", 2).keys(1, 1, 1), ttl::Ttl::run_ttl),
    Entry::plain(
        CommandSpec::new("pttl", 2).keys(1, 1, 1),
        ttl::Ttl::run_pttl,
    ),
    Entry::plain(
        CommandSpec::new("expiretime", 2).keys(1, 1, 1),
        ttl::Ttl::run_expiretime,
    ),
    Entry::plain(
        CommandSpec::new("pexpiretime", 2).keys(1, 1, 1),
        ttl::Ttl::run_pexpiretime,
    ),
    Entry::plain(
        CommandSpec::new("persist", 2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        persist::Persist::run,
    ),
    Entry::plain(
        CommandSpec::new("xadd", -5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        xadd::XAdd::run,
    ),
    Entry::plain(
        CommandSpec::new("xrange", -4).keys(1, 1, 1),
        xrange::XRange::run_forward,
    ),
    Entry::plain(
        CommandSpec::new("xrevrange", -4).keys(1, 1, 1),
        xrange::XRange::run_reverse,
    ),
    Entry::plain(CommandSpec::new("xlen", 2).keys(1, 1, 1), xlen::XLen::run),
    Entry::plain(
        CommandSpec::new("xdel", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xdel::XDel::run,
    ),
    Entry::plain(
        CommandSpec::new("xtrim", -4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xtrim::XTrim::run,
    ),
    Entry::plain(
        CommandSpec::new("xsetid", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        xsetid::XSetId::run,
    ),
    Entry::plain(
        CommandSpec::new("xgroup", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1)
            .subcommands(
                "XGROUP",
                &[
                    Subcommand::new("xgroup|create", -5).flags(flags::DENY_OOM),
                    Subcommand::new("xgroup|setid", -5),
                    Subcommand::new("xgroup|destroy", 4),
                    Subcommand::new("xgroup|createconsumer", 5).flags(flags::DENY_OOM),
                    Subcommand::new("xgroup|delconsumer", 5),
                    Subcommand::new("xgroup|help", 2),
                ],
            ),
        xgroup::XGroup::run,
    ),
    Entry::blocking(CommandSpec::new("xread", -4), xread::XRead::run_plain),
    Entry::blocking(
        CommandSpec::new("xreadgroup", -7).flags(flags::WRITE),
        xread::XRead::run_group,
    ),
    Entry::plain(
        CommandSpec::new("xack", -4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xack::XAck::run,
    ),
    Entry::plain(
        CommandSpec::new("xpending", -3).keys(1, 1, 1),
        xpending::XPending::run,
    ),
    Entry::plain(
        CommandSpec::new("xclaim", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xclaim::XClaim::run,
    ),
    Entry::plain(
        CommandSpec::new("xautoclaim", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xautoclaim::XAutoClaim::run,
    ),
    Entry::plain(
        CommandSpec::new("xinfo", -2).keys(1, 1, 1).subcommands(
            "XINFO",
            &[
                Subcommand::new("xinfo|consumers", 4),
                Subcommand::new("xinfo|groups", 3),
                Subcommand::new("xinfo|stream", -3),
                Subcommand::new("xinfo|help", 2),
            ],
        ),
        xinfo::XInfo::run,
    ),
    Entry::plain(
        CommandSpec::new("xcfgset", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xcfgset::XCfgSet::run,
    ),
    Entry::plain(
        CommandSpec::new("xidmprecord", 5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        xidmprecord::XIdmpRecord::run,
    ),
    Entry::plain(
        CommandSpec::new("xdelex", -5)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xdelex::XDelEx::run_delex,
    ),
    Entry::plain(
        CommandSpec::new("xackdel", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xdelex::XDelEx::run_ackdel,
    ),
    Entry::plain(
        CommandSpec::new("xnack", -7)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        xnack::XNack::run,
    ),
    // The hash commands (`types/hash/commands/`), then the set commands (`types/set/commands/`).
    Entry::plain(
        CommandSpec::new("hset", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, -1, 2),
        hash_cmds::hset::HSet::run,
    ),
    Entry::plain(
        CommandSpec::new("hsetnx", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        hash_cmds::hset::HSetNx::run,
    ),
    Entry::plain(
        CommandSpec::new("hmset", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, -1, 2),
        hash_cmds::hset::HSet::run_hmset,
    ),
    Entry::plain(
        CommandSpec::new("hget", 3).keys(1, 1, 1).elements(2, 2, 1),
        hash_cmds::hget::HGet::run,
    ),
    Entry::plain(
        CommandSpec::new("hmget", -3)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        hash_cmds::hget::HMGet::run,
    ),
    Entry::plain(
        CommandSpec::new("hexists", 3)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        hash_cmds::hget::HExists::run,
    ),
    Entry::plain(
        CommandSpec::new("hstrlen", 3)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        hash_cmds::hget::HStrLen::run,
    ),
    Entry::plain(
        CommandSpec::new("hlen", 2).keys(1, 1, 1),
        hash_cmds::hget::HLen::run,
    ),
    Entry::plain(
        CommandSpec::new("hgetall", 2).keys(1, 1, 1),
        hash_cmds::hgetall::HGetAll::run,
    ),
    Entry::plain(
        CommandSpec::new("hkeys", 2).keys(1, 1, 1),
        hash_cmds::hgetall::HGetAll::run_keys,
    ),
    Entry::plain(
        CommandSpec::new("hvals", 2).keys(1, 1, 1),
        hash_cmds::hgetall::HGetAll::run_vals,
    ),
    Entry::plain(
        CommandSpec::new("hscan", -3).keys(1, 1, 1),
        hash_cmds::hgetall::HScan::run,
    ),
    Entry::plain(
        CommandSpec::new("hdel", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        hash_cmds::hdel::HDel::run,
    ),
    Entry::plain(
        CommandSpec::new("hgetdel", -5)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hdel::HGetDel::run,
    ),
    Entry::plain(
        CommandSpec::new("hincrby", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        hash_cmds::hincr::HIncrBy::run,
    ),
    Entry::plain(
        CommandSpec::new("hincrbyfloat", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        hash_cmds::hincr::HIncrBy::run_float,
    ),
    Entry::plain(
        CommandSpec::new("hrandfield", -2).keys(1, 1, 1),
        hash_cmds::hrandfield::HRandField::run,
    ),
    Entry::plain(
        CommandSpec::new("hexpire", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hexpire::HExpire::run_hexpire,
    ),
    Entry::plain(
        CommandSpec::new("hpexpire", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hexpire::HExpire::run_hpexpire,
    ),
    Entry::plain(
        CommandSpec::new("hexpireat", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hexpire::HExpire::run_hexpireat,
    ),
    Entry::plain(
        CommandSpec::new("hpexpireat", -6)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hexpire::HExpire::run_hpexpireat,
    ),
    Entry::plain(
        CommandSpec::new("hpersist", -5)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hexpire::HPersist::run,
    ),
    Entry::plain(
        CommandSpec::new("httl", -5).keys(1, 1, 1),
        hash_cmds::httl::HTtl::run_httl,
    ),
    Entry::plain(
        CommandSpec::new("hpttl", -5).keys(1, 1, 1),
        hash_cmds::httl::HTtl::run_hpttl,
    ),
    Entry::plain(
        CommandSpec::new("hexpiretime", -5).keys(1, 1, 1),
        hash_cmds::httl::HTtl::run_hexpiretime,
    ),
    Entry::plain(
        CommandSpec::new("hpexpiretime", -5).keys(1, 1, 1),
        hash_cmds::httl::HTtl::run_hpexpiretime,
    ),
    Entry::plain(
        CommandSpec::new("hgetex", -5)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hgetex::HGetEx::run,
    ),
    Entry::plain(
        CommandSpec::new("hsetex", -6)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        hash_cmds::hsetex::HSetEx::run,
    ),
    Entry::plain(
        CommandSpec::new("sadd", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        set_cmds::sadd::SAdd::run,
    ),
    Entry::plain(
        CommandSpec::new("srem", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        set_cmds::sadd::SRem::run,
    ),
    Entry::plain(
        CommandSpec::new("scard", 2).keys(1, 1, 1),
        set_cmds::sismember::SCard::run,
    ),
    Entry::plain(
        CommandSpec::new("sismember", 3)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        set_cmds::sismember::SIsMember::run,
    ),
    Entry::plain(
        CommandSpec::new("smismember", -3)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        set_cmds::sismember::SMIsMember::run,
    ),
    Entry::plain(
        CommandSpec::new("smembers", 2).keys(1, 1, 1),
        set_cmds::sismember::SMembers::run,
    ),
    Entry::plain(
        CommandSpec::new("sscan", -3).keys(1, 1, 1),
        set_cmds::sismember::SScan::run,
    ),
    Entry::plain(
        CommandSpec::new("srandmember", -2).keys(1, 1, 1),
        set_cmds::spop::SRandMember::run,
    ),
    Entry::plain(
        CommandSpec::new("spop", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        set_cmds::spop::SPop::run,
    ),
    Entry::plain(
        CommandSpec::new("smove", 4)
            .flags(flags::WRITE)
            .keys(1, 2, 1),
        set_cmds::smove::SMove::run,
    ),
    Entry::plain(
        CommandSpec::new("sinter", -2).keys(1, -1, 1),
        set_cmds::algebra::SAlgebra::run_inter,
    ),
    Entry::plain(
        CommandSpec::new("sinterstore", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, -1, 1),
        set_cmds::algebra::SAlgebra::run_interstore,
    ),
    Entry::plain(
        CommandSpec::new("sintercard", -3),
        set_cmds::algebra::SAlgebra::run_intercard,
    ),
    Entry::plain(
        CommandSpec::new("sunion", -2).keys(1, -1, 1),
        set_cmds::algebra::SAlgebra::run_union,
    ),
    Entry::plain(
        CommandSpec::new("sunionstore", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, -1, 1),
        set_cmds::algebra::SAlgebra::run_unionstore,
    ),
    Entry::plain(
        CommandSpec::new("sdiff", -2).keys(1, -1, 1),
        set_cmds::algebra::SAlgebra::run_diff,
    ),
    Entry::plain(
        CommandSpec::new("sdiffstore", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, -1, 1),
        set_cmds::algebra::SAlgebra::run_diffstore,
    ),
    // The sorted set commands.
    Entry::plain(
        CommandSpec::new("zadd", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::zadd::ZAdd::run,
    ),
    Entry::plain(
        CommandSpec::new("zincrby", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1)
            .elements(3, 3, 1),
        zset_cmds::zadd::ZAdd::run_incrby,
    ),
    Entry::plain(
        CommandSpec::new("zrem", -3)
            .flags(flags::WRITE)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        zset_cmds::zadd::ZRem::run,
    ),
    Entry::plain(
        CommandSpec::new("zcard", 2).keys(1, 1, 1),
        zset_cmds::read::ZRead::run_zcard,
    ),
    Entry::plain(
        CommandSpec::new("zscore", 3)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        zset_cmds::read::ZRead::run_zscore,
    ),
    Entry::plain(
        CommandSpec::new("zmscore", -3)
            .keys(1, 1, 1)
            .elements(2, -1, 1),
        zset_cmds::read::ZRead::run_zmscore,
    ),
    Entry::plain(
        CommandSpec::new("zrank", -3)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        zset_cmds::read::ZRead::run_zrank,
    ),
    Entry::plain(
        CommandSpec::new("zrevrank", -3)
            .keys(1, 1, 1)
            .elements(2, 2, 1),
        zset_cmds::read::ZRead::run_zrevrank,
    ),
    Entry::plain(
        CommandSpec::new("zcount", 4).keys(1, 1, 1),
        zset_cmds::read::ZRead::run_zcount,
    ),
    Entry::plain(
        CommandSpec::new("zlexcount", 4).keys(1, 1, 1),
        zset_cmds::read::ZRead::run_zlexcount,
    ),
    Entry::plain(
        CommandSpec::new("zscan", -3).keys(1, 1, 1),
        zset_cmds::read::ZRead::run_zscan,
    ),
    Entry::plain(
        CommandSpec::new("zrange", -4).keys(1, 1, 1),
        zset_cmds::range::ZRange::run_zrange,
    ),
    Entry::plain(
        CommandSpec::new("zrevrange", -4).keys(1, 1, 1),
        zset_cmds::range::ZRange::run_zrevrange,
    ),
    Entry::plain(
        CommandSpec::new("zrangebyscore", -4).keys(1, 1, 1),
        zset_cmds::range::ZRange::run_zrangebyscore,
    ),
    Entry::plain(
        CommandSpec::new("zrevrangebyscore", -4).keys(1, 1, 1),
        zset_cmds::range::ZRange::run_zrevrangebyscore,
    ),
    Entry::plain(
        CommandSpec::new("zrangebylex", -4).keys(1, 1, 1),
        zset_cmds::range::ZRange::run_zrangebylex,
    ),
    Entry::plain(
        CommandSpec::new("zrevrangebylex", -4).keys(1, 1, 1),
        zset_cmds::range::ZRange::run_zrevrangebylex,
    ),
    Entry::plain(
        CommandSpec::new("zrangestore", -5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 2, 1),
        zset_cmds::range::ZRange::run_zrangestore,
    ),
    Entry::plain(
        CommandSpec::new("zremrangebyrank", 4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::range::ZRemRange::run_rank,
    ),
    Entry::plain(
        CommandSpec::new("zremrangebyscore", 4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::range::ZRemRange::run_score,
    ),
    Entry::plain(
        CommandSpec::new("zremrangebylex", 4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::range::ZRemRange::run_lex,
    ),
    Entry::plain(
        CommandSpec::new("zpopmin", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::pop::ZPop::run_zpopmin,
    ),
    Entry::plain(
        CommandSpec::new("zpopmax", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::pop::ZPop::run_zpopmax,
    ),
    Entry::plain(
        CommandSpec::new("zmpop", -4).flags(flags::WRITE),
        zset_cmds::pop::ZPop::run_zmpop,
    ),
    Entry::plain(
        CommandSpec::new("zunion", -3),
        zset_cmds::algebra::ZAlgebra::run_zunion,
    ),
    Entry::plain(
        CommandSpec::new("zinter", -3),
        zset_cmds::algebra::ZAlgebra::run_zinter,
    ),
    Entry::plain(
        CommandSpec::new("zdiff", -3),
        zset_cmds::algebra::ZAlgebra::run_zdiff,
    ),
    Entry::plain(
        CommandSpec::new("zunionstore", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::algebra::ZAlgebra::run_zunionstore,
    ),
    Entry::plain(
        CommandSpec::new("zinterstore", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::algebra::ZAlgebra::run_zinterstore,
    ),
    Entry::plain(
        CommandSpec::new("zdiffstore", -4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::algebra::ZAlgebra::run_zdiffstore,
    ),
    Entry::plain(
        CommandSpec::new("zintercard", -3),
        zset_cmds::algebra::ZAlgebra::run_zintercard,
    ),
    Entry::plain(
        CommandSpec::new("zrandmember", -2).keys(1, 1, 1),
        zset_cmds::random::ZRandMember::run,
    ),
    Entry::plain(
        CommandSpec::new("geoadd", -5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::geo::Geo::run_geoadd,
    ),
    Entry::plain(
        CommandSpec::new("geopos", -2).keys(1, 1, 1),
        zset_cmds::geo::Geo::run_geopos,
    ),
    Entry::plain(
        CommandSpec::new("geodist", -4).keys(1, 1, 1),
        zset_cmds::geo::Geo::run_geodist,
    ),
    Entry::plain(
        CommandSpec::new("geohash", -2).keys(1, 1, 1),
        zset_cmds::geo::Geo::run_geohash,
    ),
    Entry::plain(
        CommandSpec::new("georadius", -6)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::geo::GeoSearch::run_georadius,
    ),
    Entry::plain(
        CommandSpec::new("georadius_ro", -6).keys(1, 1, 1),
        zset_cmds::geo::GeoSearch::run_georadius_ro,
    ),
    Entry::plain(
        CommandSpec::new("georadiusbymember", -5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        zset_cmds::geo::GeoSearch::run_georadiusbymember,
    ),
    Entry::plain(
        CommandSpec::new("georadiusbymember_ro", -5).keys(1, 1, 1),
        zset_cmds::geo::GeoSearch::run_georadiusbymember_ro,
    ),
    Entry::plain(
        CommandSpec::new("geosearch", -7).keys(1, 1, 1),
        zset_cmds::geo::GeoSearch::run_geosearch,
    ),
    Entry::plain(
        CommandSpec::new("geosearchstore", -8)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 2, 1),
        zset_cmds::geo::GeoSearch::run_geosearchstore,
    ),
    Entry::blocking(
        CommandSpec::new("bzpopmin", -3)
            .flags(flags::WRITE)
            .keys(1, -2, 1),
        zset_cmds::pop::ZPop::run_bzpopmin,
    ),
    Entry::blocking(
        CommandSpec::new("bzpopmax", -3)
            .flags(flags::WRITE)
            .keys(1, -2, 1),
        zset_cmds::pop::ZPop::run_bzpopmax,
    ),
    Entry::blocking(
        CommandSpec::new("bzmpop", -5).flags(flags::WRITE),
        zset_cmds::pop::ZPop::run_bzmpop,
    ),
    // SORT, over lists (and the other collection types as they come).
    Entry::plain(
        CommandSpec::new("sort", -2)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        sort::Sort::run,
    ),
    Entry::plain(
        CommandSpec::new("sort_ro", -2).keys(1, 1, 1),
        sort::Sort::run_ro,
    ),
    // The list commands.
    Entry::plain(
        CommandSpec::new("lpush", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        push::Push::run_lpush,
    ),
    Entry::plain(
        CommandSpec::new("rpush", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        push::Push::run_rpush,
    ),
    Entry::plain(
        CommandSpec::new("lpushx", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        push::Push::run_lpushx,
    ),
    Entry::plain(
        CommandSpec::new("rpushx", -3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        push::Push::run_rpushx,
    ),
    Entry::plain(
        CommandSpec::new("lpop", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        pop::Pop::run_lpop,
    ),
    Entry::plain(
        CommandSpec::new("rpop", -2)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        pop::Pop::run_rpop,
    ),
    Entry::plain(
        CommandSpec::new("lmpop", -4).flags(flags::WRITE),
        pop::Pop::run_lmpop,
    ),
    Entry::plain(
        CommandSpec::new("llen", 2).keys(1, 1, 1),
        read::Read::run_llen,
    ),
    Entry::plain(
        CommandSpec::new("lindex", 3).keys(1, 1, 1),
        read::Read::run_lindex,
    ),
    Entry::plain(
        CommandSpec::new("lrange", 4).keys(1, 1, 1),
        read::Read::run_lrange,
    ),
    Entry::plain(
        CommandSpec::new("lpos", -3).keys(1, 1, 1),
        read::Read::run_lpos,
    ),
    Entry::plain(
        CommandSpec::new("lset", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        edit::Edit::run_lset,
    ),
    Entry::plain(
        CommandSpec::new("ltrim", 4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        edit::Edit::run_ltrim,
    ),
    Entry::plain(
        CommandSpec::new("linsert", 5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 1, 1),
        edit::Edit::run_linsert,
    ),
    Entry::plain(
        CommandSpec::new("lrem", 4)
            .flags(flags::WRITE)
            .keys(1, 1, 1),
        edit::Edit::run_lrem,
    ),
    Entry::plain(
        CommandSpec::new("lmove", 5)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 2, 1),
        lmove::LMove::run_lmove,
    ),
    Entry::plain(
        CommandSpec::new("rpoplpush", 3)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 2, 1),
        lmove::LMove::run_rpoplpush,
    ),
    Entry::blocking(
        CommandSpec::new("blpop", -3)
            .flags(flags::WRITE)
            .keys(1, -2, 1),
        blocking::BlockingPop::run_blpop,
    ),
    Entry::blocking(
        CommandSpec::new("brpop", -3)
            .flags(flags::WRITE)
            .keys(1, -2, 1),
        blocking::BlockingPop::run_brpop,
    ),
    Entry::blocking(
        CommandSpec::new("blmpop", -5).flags(flags::WRITE),
        blocking::BlockingPop::run_blmpop,
    ),
    Entry::blocking(
        CommandSpec::new("blmove", 6)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 2, 1),
        blocking::BlockingPop::run_blmove,
    ),
    Entry::blocking(
        CommandSpec::new("brpoplpush", 4)
            .flags(flags::DENY_OOM | flags::WRITE)
            .keys(1, 2, 1),
        blocking::BlockingPop::run_brpoplpush,
    ),
];

/// The spec of a command [`execute`] handles, by name in any case.
pub fn spec(name: &[u8]) -> Option<&'static CommandSpec> {
    find(name).map(|entry| &entry.spec)
}

/// The specs of the commands [`execute`] handles, in table order.
pub fn specs() -> impl Iterator<Item = &'static CommandSpec> {
    COMMANDS.iter().map(|entry| &entry.spec)
}

/// The names of the commands [`execute`] handles, lower case.
pub fn names() -> impl Iterator<Item = &'static str> {
    specs().map(|spec| spec.name)
}

/// Whether `name` (any case) is a command [`execute`] handles.
pub fn is_engine_command(name: &[u8]) -> bool {
    find(name).is_some()
}

fn find(name: &[u8]) -> Option<&'static Entry> {
    by_name::find(name)
}

/// A container's subcommand (`argv[1]`), checked against its table row: the subcommand's
/// lower-case name (`create` for `XGROUP CREATE`), or Redis's unknown-subcommand or arity
/// error.
pub(crate) fn subcommand(argv: &[&[u8]]) -> Result<&'static str> {
    let name = argv.first().copied().unwrap_or_default();
    let spec = spec(name).ok_or_else(|| unknown_command(name, &[]))?;
    spec.checked_subcommand(argv).map(Subcommand::name)
}

/// Runs one command where blocking is not possible (as in MULTI/EXEC): a command that would
/// block replies as if it timed out, with a null array. `argv[0]` is the command name.
pub fn execute<A: AsRef<[u8]>>(db: &mut Db, snapshot: &Snapshot, argv: &[A]) -> Result<Reply> {
    Ok(match execute_outcome(db, snapshot, argv)? {
        Outcome::Reply(reply) => reply,
        Outcome::Block(request) => request.denied(),
    })
}

/// [`execute`] for a command already found: `spec` is its row (from [`spec`] or
/// [`specs`]), so the name is not looked up again.
pub fn execute_spec(
    db: &mut Db,
    snapshot: &Snapshot,
    spec: &'static CommandSpec,
    argv: &[&[u8]],
) -> Result<Reply> {
    let entry = match entry_of(spec) {
        Some(entry) => entry,
        None => return execute(db, snapshot, argv),
    };
    Ok(match run_entry(db, snapshot, entry, argv)? {
        Outcome::Reply(reply) => reply,
        Outcome::Block(request) => request.denied(),
    })
}

/// The table row whose spec is `spec` (by address: its place in [`COMMANDS`]).
fn entry_of(spec: &'static CommandSpec) -> Option<&'static Entry> {
    let first = COMMANDS.as_ptr() as usize;
    let at = (spec as *const CommandSpec as usize).checked_sub(first)?;
    let entry = COMMANDS.get(at / std::mem::size_of::<Entry>())?;
    std::ptr::eq(&entry.spec, spec).then_some(entry)
}

/// Runs one command, reporting whether it asks to block.
pub fn execute_outcome<A: AsRef<[u8]>>(
    db: &mut Db,
    snapshot: &Snapshot,
    argv: &[A],
) -> Result<Outcome> {
    // Most commands have few arguments: keep their slices on the stack.
    const STACK_ARGS_MAX: usize = 16;
    let mut stack: [&[u8]; STACK_ARGS_MAX] = [&[]; STACK_ARGS_MAX];
    let heap: Vec<&[u8]>;
    let argv: &[&[u8]] = if argv.len() <= STACK_ARGS_MAX {
        for (slot, arg) in stack.iter_mut().zip(argv) {
            *slot = arg.as_ref();
        }
        &stack[..argv.len()]
    } else {
        heap = argv.iter().map(AsRef::as_ref).collect();
        &heap
    };
    let Some(&name) = argv.first() else {
        return Err(unknown_command(b"", &[]));
    };
    let Some(entry) = find(name) else {
        return Err(unknown_command(name, &argv[1..]));
    };
    run_entry(db, snapshot, entry, argv)
}

/// Runs `argv`, a call of `entry`'s command.
fn run_entry(
    db: &mut Db,
    snapshot: &Snapshot,
    entry: &'static Entry,
    argv: &[&[u8]],
) -> Result<Outcome> {
    if !entry.spec.arity_ok(argv.len()) {
        return Err(Error::WrongArity(entry.spec.name.to_string()));
    }
    db.expire_keys_of(&entry.spec, argv);
    // Each command produces its own effects (propagation, events, WATCH, blocked readers,
    // dirty, read lookups) as it runs, through the `Db`.
    match entry.run {
        Run::Plain(run) => run(db, snapshot, argv).map(Outcome::Reply),
        Run::Blocking(run) => run(db, snapshot, argv),
    }
}

/// Redis's unknown-command error: the name and the first arguments, quoted, at most about 128
/// bytes of them, with CR and LF turned into spaces so the reply stays one line.
pub fn unknown_command(name: &[u8], args: &[&[u8]]) -> Error {
    const SHOWN_BYTES_MAX: usize = 128;
    let mut shown = String::new();
    for arg in args {
        if shown.len() >= SHOWN_BYTES_MAX {
            break;
        }
        let room = SHOWN_BYTES_MAX - shown.len();
        let arg = String::from_utf8_lossy(&arg[..arg.len().min(room)]).into_owned();
        shown.push('\'');
        shown.push_str(&arg);
        shown.push_str("' ");
    }
    let name = String::from_utf8_lossy(&name[..name.len().min(SHOWN_BYTES_MAX)]).into_owned();
    let clean = |s: String| s.replace(['\r', '\n'], " ");
    Error::UnknownCommand {
        name: clean(name),
        args: clean(shown),
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;

    #[test]
    fn every_spec_leads_back_to_its_row() {
        for entry in COMMANDS {
            assert!(std::ptr::eq(entry_of(&entry.spec).unwrap(), entry));
        }
        let copy: &'static CommandSpec = Box::leak(Box::new(COMMANDS[0].spec));
        assert!(entry_of(copy).is_none());
    }
}

#[cfg(test)]
mod tests;

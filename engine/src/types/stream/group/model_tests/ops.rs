//! Random operations for the consumer-group model tests (rendered into arguments by
//! [`super::render`]).
//!
//! As in the stream model tests, an operation is generated without knowing the state it will
//! run in: ids are chosen when it is rendered, from what the key holds at that moment (an
//! entry or tombstone, a pending id, a group cursor, the stream's bookkeeping ids) or near its
//! `last_id`, so a shrunk case still hits pending entries. Streams grow (XADD is the most common
//! operation, mostly with `*` while the clock moves), entries get deleted and trimmed under the
//! PELs, and the clock moves by amounts comparable to the idle times the commands ask for.
//! Group commands are occasionally mangled (a stray token appended, the last argument dropped
//! or one replaced) to reach their error paths and Redis's order of checks.

use proptest::prelude::*;
use proptest::sample::Index;

/// Keys: two streams and a string (for WRONGTYPE).
pub const KEYS: [&str; 3] = ["s", "t", "str"];
pub const STRING_KEY: &str = "str";
pub const GROUPS: [&str; 3] = ["g1", "g2", "g3"];
pub const CONSUMERS: [&str; 3] = ["alice", "bob", "carol"];
pub const FIELDS: [[&str; 2]; 3] = [["f", "v"], ["a", "1"], ["b", ""]];
/// Malformed ids (`-` and `+` are fine where ids are lenient, `(1-1` where they are bounds).
pub const BAD_IDS: [&str; 7] = ["abc", "", "1-x", "-", "+", "(1-1", "1-"];
/// Tokens that replace or extend arguments of group commands.
pub const STRAY_TOKENS: [&str; 26] = [
    "COUNT",
    "IDLE",
    "JUSTID",
    "FORCE",
    "MKSTREAM",
    "ENTRIESREAD",
    "NOACK",
    "STREAMS",
    "GROUP",
    "BLOCK",
    "LASTID",
    "RETRYCOUNT",
    "FULL",
    ">",
    "$",
    "+",
    "-",
    "0",
    "1",
    "-1",
    "abc",
    "1-1",
    "(1-1",
    "g1",
    "alice",
    "s",
];

/// How an id argument is chosen.
#[derive(Debug, Clone)]
pub enum IdGen {
    /// Something the key holds or held: an entry or tombstone, a pending id, a group's cursor,
    /// or the stream's `last_id`, `first_id` or `max_deleted_entry_id`.
    Known(Index),
    /// A pending id of one of the key's groups (a known id if none is pending).
    Pending(Index),
    /// `last_id` moved by a little.
    NearLast {
        ms_delta: u8,
        seq_delta: i8,
    },
    Small {
        ms: u8,
        seq: u8,
    },
    /// Near the top of the id space.
    Top(u8),
}

/// An id argument, written in full or as `<ms>` only.
#[derive(Debug, Clone)]
pub struct IdArg {
    pub id: IdGen,
    pub ms_only: bool,
}

/// An id argument that may be malformed.
#[derive(Debug, Clone)]
pub enum IdTok {
    Id(IdArg),
    Bad(Index),
}

/// An integer argument that may be malformed.
#[derive(Debug, Clone)]
pub enum IntTok {
    N(i64),
    Bad,
}

/// A range bound.
#[derive(Debug, Clone)]
pub enum Bound {
    Min,
    Max,
    Id { id: IdArg, exclusive: bool },
}

/// XGROUP CREATE's and SETID's id.
#[derive(Debug, Clone)]
pub enum GroupId {
    Dollar,
    Zero,
    Tok(IdTok),
}

/// XREADGROUP's id for one stream.
#[derive(Debug, Clone)]
pub enum ReadFrom {
    New,
    /// `0`: the consumer's whole history.
    Zero,
    History(IdTok),
}

/// XREAD's id for one stream.
#[derive(Debug, Clone)]
pub enum PlainFrom {
    Dollar,
    Plus,
    Id(IdTok),
}

#[derive(Debug, Clone)]
pub enum ClaimOpt {
    Idle(IntTok),
    /// TIME at the clock moved by this many ms.
    Time(i16),
    RetryCount(IntTok),
    Force,
    JustId,
    LastId(IdTok),
}

#[derive(Debug, Clone)]
pub struct Trim {
    pub minid: bool,
    pub approx: bool,
    pub maxlen: u8,
    pub min: IdGen,
    /// The deletion strategy token (Redis 8.2), first after the key: 0 none, 1 KEEPREF,
    /// 2 DELREF, 3 ACKED.
    pub delete: u8,
}

#[derive(Debug, Clone)]
pub struct PendingRange {
    pub idle: Option<IntTok>,
    pub start: Bound,
    pub end: Bound,
    pub count: IntTok,
    pub consumer: Option<Index>,
}

#[derive(Debug, Clone)]
pub enum Cmd {
    /// XADD with `*` (`None`) or an id, maybe trimming.
    Add {
        id: Option<IdGen>,
        trim: Option<Trim>,
        fields: Index,
    },
    Del(Vec<IdGen>),
    Trim(Trim),
    /// XSETID to an id at or above `last_id`, maybe with ENTRIESADDED at length + n.
    SetId {
        id: IdGen,
        entries_added: Option<i8>,
    },
    Create {
        group: Index,
        id: GroupId,
        mkstream: bool,
        entries_read: Option<IntTok>,
    },
    SetGroupId {
        group: Index,
        id: GroupId,
        entries_read: Option<IntTok>,
    },
    Destroy {
        group: Index,
    },
    CreateConsumer {
        group: Index,
        consumer: Index,
    },
    DelConsumer {
        group: Index,
        consumer: Index,
    },
    ReadGroup {
        group: Index,
        consumer: Index,
        count: Option<IntTok>,
        block: bool,
        noack: bool,
        /// CLAIM min-idle-time (Redis 8.4).
        claim: Option<IntTok>,
        /// The command's key, then maybe another (key index, id).
        first: ReadFrom,
        second: Option<(usize, ReadFrom)>,
    },
    Read {
        count: Option<IntTok>,
        from: PlainFrom,
    },
    Ack {
        group: Index,
        ids: Vec<IdTok>,
    },
    /// XDELEX (`group: None`) or XACKDEL (Redis 8.2): strategy 0..3 is KEEPREF, DELREF,
    /// ACKED, none.
    DelEx {
        group: Option<Index>,
        strategy: u8,
        ids: Vec<IdGen>,
        /// The strategy after the IDS block.
        strategy_last: bool,
    },
    /// XNACK (Redis 8.8): mode 0..3 is SILENT, FAIL, FATAL; 3 is a bad mode.
    Nack {
        group: Index,
        mode: u8,
        ids: Vec<IdTok>,
        retry_count: Option<IntTok>,
        force: bool,
        /// RETRYCOUNT and FORCE before the IDS block.
        options_first: bool,
    },
    Pending {
        group: Index,
        range: Option<PendingRange>,
    },
    Claim {
        group: Index,
        consumer: Index,
        min_idle: IntTok,
        ids: Vec<IdTok>,
        options: Vec<ClaimOpt>,
    },
    AutoClaim {
        group: Index,
        consumer: Index,
        min_idle: IntTok,
        start: Bound,
        count: Option<IntTok>,
        just_id: bool,
    },
    InfoGroups,
    InfoConsumers {
        group: Index,
    },
    /// XINFO STREAM, with FULL (and maybe COUNT) if `Some`.
    InfoStream {
        full: Option<Option<IntTok>>,
    },
}

/// A way to break a well-formed group command.
#[derive(Debug, Clone)]
pub enum Mangle {
    None,
    Append(Index),
    DropLast,
    Replace(Index, Index),
}

#[derive(Debug, Clone)]
pub enum Op {
    /// Move the clock by this many ms (negative: back).
    Clock(i16),
    /// Delete a key (its groups go with it).
    DelKey(usize),
    Command {
        key: usize,
        cmd: Cmd,
        mangle: Mangle,
    },
}

fn id_gen() -> impl Strategy<Value = IdGen> {
    prop_oneof![
        10 => any::<Index>().prop_map(IdGen::Known),
        10 => any::<Index>().prop_map(IdGen::Pending),
        6 => (0u8..3, -2i8..3).prop_map(|(ms_delta, seq_delta)| IdGen::NearLast { ms_delta, seq_delta }),
        3 => (0u8..8, 0u8..3).prop_map(|(ms, seq)| IdGen::Small { ms, seq }),
        1 => (0u8..4).prop_map(IdGen::Top),
    ]
}

fn id_arg() -> impl Strategy<Value = IdArg> {
    (id_gen(), prop::bool::weighted(0.1)).prop_map(|(id, ms_only)| IdArg { id, ms_only })
}

fn id_tok() -> impl Strategy<Value = IdTok> {
    prop_oneof![
        20 => id_arg().prop_map(IdTok::Id),
        1 => any::<Index>().prop_map(IdTok::Bad),
    ]
}

/// An integer from `values`, rarely malformed.
fn int_tok(values: &'static [i64]) -> impl Strategy<Value = IntTok> {
    prop_oneof![
        20 => prop::sample::select(values).prop_map(IntTok::N),
        1 => Just(IntTok::Bad),
    ]
}

/// Idle times: comparable to the clock's steps.
const IDLE_MS: &[i64] = &[0, 0, 1, 10, 50, 100, 100, 250, 1000, -1];
const COUNTS: &[i64] = &[1, 1, 2, 3, 5, 0, -1];
const ENTRIES_READ: &[i64] = &[-1, 0, 1, 2, 3, 5, 100, -2];

fn bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        2 => Just(Bound::Min),
        2 => Just(Bound::Max),
        5 => (id_arg(), prop::bool::weighted(0.3)).prop_map(|(id, exclusive)| Bound::Id { id, exclusive }),
    ]
}

fn group_id() -> impl Strategy<Value = GroupId> {
    prop_oneof![
        3 => Just(GroupId::Dollar),
        3 => Just(GroupId::Zero),
        4 => id_tok().prop_map(GroupId::Tok),
    ]
}

fn read_from() -> impl Strategy<Value = ReadFrom> {
    prop_oneof![
        8 => Just(ReadFrom::New),
        2 => Just(ReadFrom::Zero),
        2 => id_tok().prop_map(ReadFrom::History),
    ]
}

fn trim() -> impl Strategy<Value = Trim> {
    (
        any::<bool>(),
        prop::bool::weighted(0.2),
        0u8..12,
        id_gen(),
        prop_oneof![4 => Just(0u8), 1 => Just(1u8), 2 => Just(2u8), 3 => Just(3u8)],
    )
        .prop_map(|(minid, approx, maxlen, min, delete)| Trim {
            minid,
            approx,
            maxlen,
            min,
            delete,
        })
}

fn claim_opt() -> impl Strategy<Value = ClaimOpt> {
    prop_oneof![
        3 => int_tok(IDLE_MS).prop_map(ClaimOpt::Idle),
        1 => (-300i16..50).prop_map(ClaimOpt::Time),
        2 => int_tok(&[0, 1, 5, -1]).prop_map(ClaimOpt::RetryCount),
        2 => Just(ClaimOpt::Force),
        2 => Just(ClaimOpt::JustId),
        1 => id_tok().prop_map(ClaimOpt::LastId),
    ]
}

fn pending_range() -> impl Strategy<Value = PendingRange> {
    (
        prop::option::weighted(0.3, int_tok(IDLE_MS)),
        bound(),
        bound(),
        int_tok(&[1, 2, 3, 10, 10, 0, -1]),
        prop::option::weighted(0.3, any::<Index>()),
    )
        .prop_map(|(idle, start, end, count, consumer)| PendingRange {
            idle,
            start,
            end,
            count,
            consumer,
        })
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let group = any::<Index>;
    let consumer = any::<Index>;
    prop_oneof![
        14 => (
            prop::option::weighted(
                0.3,
                (0u8..3, 1i8..3).prop_map(|(ms_delta, seq_delta)| IdGen::NearLast { ms_delta, seq_delta }),
            ),
            prop::option::weighted(0.05, trim()),
            any::<Index>(),
        )
            .prop_map(|(id, trim, fields)| Cmd::Add { id, trim, fields }),
        3 => prop::collection::vec(id_gen(), 1..3).prop_map(Cmd::Del),
        1 => trim().prop_map(Cmd::Trim),
        1 => (
            prop_oneof![
                30 => (0u8..3, 0i8..3).prop_map(|(ms_delta, seq_delta)| IdGen::NearLast { ms_delta, seq_delta }),
                1 => (0u8..4).prop_map(IdGen::Top),
            ],
            prop::option::weighted(0.5, -1i8..3),
        )
            .prop_map(|(id, entries_added)| Cmd::SetId { id, entries_added }),
        5 => (
            group(),
            group_id(),
            prop::bool::weighted(0.5),
            prop::option::weighted(0.3, int_tok(ENTRIES_READ)),
        )
            .prop_map(|(group, id, mkstream, entries_read)| Cmd::Create { group, id, mkstream, entries_read }),
        2 => (group(), group_id(), prop::option::weighted(0.4, int_tok(ENTRIES_READ)))
            .prop_map(|(group, id, entries_read)| Cmd::SetGroupId { group, id, entries_read }),
        1 => group().prop_map(|group| Cmd::Destroy { group }),
        1 => (group(), consumer()).prop_map(|(group, consumer)| Cmd::CreateConsumer { group, consumer }),
        1 => (group(), consumer()).prop_map(|(group, consumer)| Cmd::DelConsumer { group, consumer }),
        14 => (
            (group(), consumer()),
            prop::option::weighted(0.4, int_tok(COUNTS)),
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.15),
            read_from(),
            prop::option::weighted(0.15, (prop::bool::weighted(0.3).prop_map(usize::from), read_from())),
            prop::option::weighted(0.3, int_tok(IDLE_MS)),
        )
            .prop_map(|((group, consumer), count, block, noack, first, second, claim)| Cmd::ReadGroup {
                group, consumer, count, block, noack, claim, first, second,
            }),
        1 => (
            prop::option::weighted(0.3, int_tok(COUNTS)),
            prop_oneof![
                Just(PlainFrom::Dollar),
                Just(PlainFrom::Plus),
                id_tok().prop_map(PlainFrom::Id),
            ],
        )
            .prop_map(|(count, from)| Cmd::Read { count, from }),
        5 => (group(), prop::collection::vec(id_tok(), 1..4)).prop_map(|(group, ids)| Cmd::Ack { group, ids }),
        3 => (
            prop::option::weighted(0.6, group()),
            0u8..4,
            prop::collection::vec(id_gen(), 1..4),
            any::<bool>(),
        )
            .prop_map(|(group, strategy, ids, strategy_last)| Cmd::DelEx {
                group, strategy, ids, strategy_last,
            }),
        4 => (
            group(),
            prop_oneof![10 => 0u8..3, 1 => Just(3u8)],
            prop::collection::vec(id_tok(), 1..4),
            prop::option::weighted(0.3, int_tok(&[0, 1, 3, -1])),
            prop::bool::weighted(0.3),
            any::<bool>(),
        )
            .prop_map(|(group, mode, ids, retry_count, force, options_first)| Cmd::Nack {
                group, mode, ids, retry_count, force, options_first,
            }),
        4 => (group(), prop::option::weighted(0.6, pending_range()))
            .prop_map(|(group, range)| Cmd::Pending { group, range }),
        5 => (
            (group(), consumer()),
            int_tok(IDLE_MS),
            prop::collection::vec(id_tok(), 1..4),
            prop::collection::vec(claim_opt(), 0..3),
        )
            .prop_map(|((group, consumer), min_idle, ids, options)| Cmd::Claim {
                group, consumer, min_idle, ids, options,
            }),
        4 => (
            (group(), consumer()),
            int_tok(IDLE_MS),
            bound(),
            prop::option::weighted(0.6, int_tok(&[1, 1, 2, 3, 5, 10, 0, -1])),
            prop::bool::weighted(0.3),
        )
            .prop_map(|((group, consumer), min_idle, start, count, just_id)| Cmd::AutoClaim {
                group, consumer, min_idle, start, count, just_id,
            }),
        2 => Just(Cmd::InfoGroups),
        2 => group().prop_map(|group| Cmd::InfoConsumers { group }),
        1 => prop::option::weighted(
            0.6,
            prop::option::weighted(0.5, int_tok(&[0, 1, 2, 10, -1])),
        )
        .prop_map(|full| Cmd::InfoStream { full }),
    ]
}

fn mangle() -> impl Strategy<Value = Mangle> {
    prop_oneof![
        40 => Just(Mangle::None),
        1 => any::<Index>().prop_map(Mangle::Append),
        1 => Just(Mangle::DropLast),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(at, tok)| Mangle::Replace(at, tok)),
    ]
}

/// Mostly the first stream, sometimes the second, rarely the string key.
fn key_index() -> impl Strategy<Value = usize> {
    prop_oneof![16 => Just(0usize), 4 => Just(1usize), 1 => Just(2usize)]
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        24 => prop_oneof![
            8 => 0i16..120,
            2 => 120i16..1200,
            1 => -30i16..0,
        ]
        .prop_map(Op::Clock),
        1 => (0usize..2).prop_map(Op::DelKey),
        120 => (key_index(), cmd(), mangle()).prop_map(|(key, cmd, mangle)| Op::Command { key, cmd, mangle }),
    ]
}

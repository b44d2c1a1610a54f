//! Random operations for the model tests, and their rendering into arguments.
//!
//! An operation is generated without knowing the state it will run in; ids are chosen when it
//! is rendered, relative to the model's stream at that moment (an existing entry or tombstone,
//! just above `last_id`, a small id, the top of the id space), so a shrunk case still hits
//! existing entries. Weights keep streams growing (most XADD ids are just above `last_id`,
//! `max-max` ids that exhaust a stream are rare) while every error path stays reachable.

use proptest::prelude::*;
use proptest::sample::Index;

use super::model::{Model, ModelStream};
use crate::id::StreamId;

const FIELD_NAMES: [&str; 3] = ["a", "b", "c"];
const FIELD_VALUES: [&str; 5] = ["1", "x", "", "yy", "-7"];
/// Malformed ids in every context (`-`, `+` and `(id` are valid as range bounds).
const BAD_IDS: [&str; 9] = ["abc", "1-x", "", "1-2-3", "x-1", "-", "+", "(1-1", "1-"];
/// Tokens that replace or extend arguments to make invalid (or unusual) commands.
const STRAY_TOKENS: [&str; 20] = [
    "MAXLEN",
    "minid",
    "LIMIT",
    "~",
    "=",
    "NOMKSTREAM",
    "COUNT",
    "ENTRIESADDED",
    "MAXDELETEDID",
    "*",
    "-",
    "+",
    "0",
    "1",
    "-1",
    "abc",
    "1-1",
    "2-*",
    "(1-1",
    "a",
];

/// How an id argument is chosen.
#[derive(Debug, Clone)]
pub(super) enum IdGen {
    /// One the stream holds or held: an entry, a tombstone, `last_id`, `first_id` or
    /// `max_deleted_entry_id`.
    Known(Index),
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

/// An id argument: chosen by `id`, written in full or as `<ms>` only.
#[derive(Debug, Clone)]
pub(super) struct IdArg {
    id: IdGen,
    ms_only: bool,
}

/// An id argument that may be malformed.
#[derive(Debug, Clone)]
pub(super) enum IdTok {
    Id(IdArg),
    Bad(Index),
}

/// An integer argument that may be malformed.
#[derive(Debug, Clone)]
pub(super) enum IntTok {
    N(i64),
    Bad,
}

#[derive(Debug, Clone)]
pub(super) enum AddIdGen {
    Auto,
    AutoSeq(IdGen),
    Explicit(IdArg),
    /// `0` or `0-0`.
    Zero(bool),
    Bad(Index),
}

#[derive(Debug, Clone)]
pub(super) struct TrimGen {
    minid: bool,
    maxlen: IntTok,
    min: IdTok,
    /// 0: no mode, 1: `=`, 2: `~`.
    mode: u8,
    limit: Option<IntTok>,
    limit_first: bool,
}

#[derive(Debug, Clone)]
pub(super) enum RangeBound {
    Min,
    Max,
    Id { id: IdArg, exclusive: bool },
    Raw(&'static str),
}

#[derive(Debug, Clone)]
pub(super) enum SetIdOpt {
    /// ENTRIESADDED at the stream length plus this.
    EntriesAdded(i8),
    MaxDeletedId(IdTok),
}

/// A way to break a well-formed command.
#[derive(Debug, Clone)]
pub(super) enum Mangle {
    None,
    Append(Index),
    DropLast,
    Replace(Index, Index),
}

#[derive(Debug, Clone)]
pub(super) enum Cmd {
    Add {
        no_mkstream: bool,
        trim: Option<TrimGen>,
        id: AddIdGen,
        fields: Vec<(Index, Index)>,
    },
    Del(Vec<IdTok>),
    Trim(TrimGen),
    SetId(IdTok, Vec<SetIdOpt>),
    Range {
        reverse: bool,
        start: RangeBound,
        end: RangeBound,
        count: Option<IntTok>,
    },
    Len,
}

#[derive(Debug, Clone)]
pub(super) enum Op {
    /// Move the clock by this many ms (negative: back).
    Clock(i8),
    NodeEntriesMax(u64),
    Command {
        key: usize,
        cmd: Cmd,
        mangle: Mangle,
    },
}

/// Any id: known, near `last_id`, small, and (rarely: it exhausts the stream) near the top.
fn id_gen() -> impl Strategy<Value = IdGen> {
    prop_oneof![
        16 => any::<Index>().prop_map(IdGen::Known),
        16 => (0u8..3, -2i8..4).prop_map(|(ms_delta, seq_delta)| IdGen::NearLast { ms_delta, seq_delta }),
        8 => (0u8..8, 0u8..4).prop_map(|(ms, seq)| IdGen::Small { ms, seq }),
        1 => (0u8..4).prop_map(IdGen::Top),
    ]
}

/// An XADD id: mostly just above `last_id`, so streams grow.
fn new_id_gen() -> impl Strategy<Value = IdGen> {
    prop_oneof![
        90 => (0u8..3, 1i8..4).prop_map(|(ms_delta, seq_delta)| IdGen::NearLast { ms_delta, seq_delta }),
        5 => any::<Index>().prop_map(IdGen::Known),
        5 => (0u8..8, 0u8..4).prop_map(|(ms, seq)| IdGen::Small { ms, seq }),
        1 => (0u8..4).prop_map(IdGen::Top),
    ]
}

fn id_arg() -> impl Strategy<Value = IdArg> {
    (id_gen(), prop::bool::weighted(0.2)).prop_map(|(id, ms_only)| IdArg { id, ms_only })
}

fn id_tok() -> impl Strategy<Value = IdTok> {
    prop_oneof![
        12 => id_arg().prop_map(IdTok::Id),
        1 => any::<Index>().prop_map(IdTok::Bad),
    ]
}

fn int_tok(range: std::ops::Range<i64>) -> impl Strategy<Value = IntTok> {
    prop_oneof![12 => range.prop_map(IntTok::N), 1 => Just(IntTok::Bad)]
}

fn trim_gen() -> impl Strategy<Value = TrimGen> {
    (
        any::<bool>(),
        int_tok(-1..40),
        id_tok(),
        0u8..3,
        prop::option::weighted(0.3, int_tok(-1..10)),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(minid, maxlen, min, mode, limit, limit_first)| TrimGen {
            minid,
            maxlen,
            min,
            mode,
            limit,
            limit_first,
        })
}

fn add_id_gen() -> impl Strategy<Value = AddIdGen> {
    prop_oneof![
        6 => Just(AddIdGen::Auto),
        2 => new_id_gen().prop_map(AddIdGen::AutoSeq),
        8 => (new_id_gen(), prop::bool::weighted(0.1))
            .prop_map(|(id, ms_only)| AddIdGen::Explicit(IdArg { id, ms_only })),
        1 => prop_oneof![
            any::<bool>().prop_map(AddIdGen::Zero),
            any::<Index>().prop_map(AddIdGen::Bad),
        ],
    ]
}

fn range_bound() -> impl Strategy<Value = RangeBound> {
    prop_oneof![
        2 => Just(RangeBound::Min),
        2 => Just(RangeBound::Max),
        6 => (id_arg(), any::<bool>()).prop_map(|(id, exclusive)| RangeBound::Id { id, exclusive }),
        1 => prop::sample::select(vec![
            "(18446744073709551615-18446744073709551615",
            "(0-0",
            "(0",
            "(-",
            "(+",
            "(",
            "18446744073709551615",
            "abc",
            "1-*",
        ])
        .prop_map(RangeBound::Raw),
    ]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let field_pairs = prop::collection::vec((any::<Index>(), any::<Index>()), 1..4);
    prop_oneof![
        12 => (
            prop::bool::weighted(0.05),
            prop::option::weighted(0.1, trim_gen()),
            add_id_gen(),
            field_pairs,
        )
            .prop_map(|(no_mkstream, trim, id, fields)| Cmd::Add { no_mkstream, trim, id, fields }),
        3 => prop::collection::vec(id_tok(), 1..4).prop_map(Cmd::Del),
        1 => trim_gen().prop_map(Cmd::Trim),
        2 => (
            id_tok(),
            prop::collection::vec(
                prop_oneof![
                    (-3i8..4).prop_map(SetIdOpt::EntriesAdded),
                    id_tok().prop_map(SetIdOpt::MaxDeletedId),
                ],
                0..3,
            ),
        )
            .prop_map(|(id, opts)| Cmd::SetId(id, opts)),
        4 => (
            any::<bool>(),
            range_bound(),
            range_bound(),
            prop::option::weighted(0.4, int_tok(-2..8)),
        )
            .prop_map(|(reverse, start, end, count)| Cmd::Range { reverse, start, end, count }),
        1 => Just(Cmd::Len),
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

/// An index into the harness's three keys: mostly the first, rarely the string key.
fn key_index() -> impl Strategy<Value = usize> {
    prop_oneof![16 => Just(0usize), 4 => Just(1usize), 1 => Just(2usize)]
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (-3i8..5).prop_map(Op::Clock),
        1 => (1u64..9).prop_map(Op::NodeEntriesMax),
        20 => (key_index(), cmd(), mangle()).prop_map(|(key, cmd, mangle)| Op::Command { key, cmd, mangle }),
    ]
}

fn resolve(choice: &IdGen, stream: Option<&ModelStream>) -> StreamId {
    let empty = ModelStream::default();
    let s = stream.unwrap_or(&empty);
    match choice {
        IdGen::Known(index) => {
            let mut known: Vec<StreamId> = s.nodes.iter().flatten().map(|e| e.id).collect();
            known.extend([s.last_id, s.first_id, s.max_deleted_entry_id]);
            known[index.index(known.len())]
        }
        IdGen::NearLast {
            ms_delta,
            seq_delta,
        } => {
            let ms = s.last_id.ms.saturating_add(u64::from(*ms_delta));
            let seq = if *ms_delta == 0 {
                s.last_id.seq.saturating_add_signed(i64::from(*seq_delta))
            } else {
                u64::from(seq_delta.unsigned_abs())
            };
            StreamId::new(ms, seq)
        }
        IdGen::Small { ms, seq } => StreamId::new(u64::from(*ms), u64::from(*seq)),
        IdGen::Top(k) => [
            StreamId::MAX,
            StreamId::new(u64::MAX, u64::MAX - 1),
            StreamId::new(u64::MAX, 0),
            StreamId::new(u64::MAX - 1, u64::MAX),
        ][usize::from(*k) % 4],
    }
}

fn id_arg_text(arg: &IdArg, stream: Option<&ModelStream>) -> String {
    let id = resolve(&arg.id, stream);
    if arg.ms_only {
        id.ms.to_string()
    } else {
        id.to_string()
    }
}

fn id_tok_text(tok: &IdTok, stream: Option<&ModelStream>) -> String {
    match tok {
        IdTok::Id(arg) => id_arg_text(arg, stream),
        IdTok::Bad(i) => (*i.get(&BAD_IDS)).to_string(),
    }
}

fn int_tok_text(tok: &IntTok) -> String {
    match tok {
        IntTok::N(n) => n.to_string(),
        IntTok::Bad => "1.5".to_string(),
    }
}

fn trim_args(t: &TrimGen, stream: Option<&ModelStream>) -> Vec<String> {
    let mut strategy = vec![if t.minid { "MINID" } else { "MAXLEN" }.to_string()];
    match t.mode {
        1 => strategy.push("=".into()),
        2 => strategy.push("~".into()),
        _ => {}
    }
    strategy.push(if t.minid {
        id_tok_text(&t.min, stream)
    } else {
        int_tok_text(&t.maxlen)
    });
    let limit = t
        .limit
        .as_ref()
        .map(|n| vec!["LIMIT".to_string(), int_tok_text(n)])
        .unwrap_or_default();
    if t.limit_first {
        [limit, strategy].concat()
    } else {
        [strategy, limit].concat()
    }
}

pub(super) fn render(key: &str, cmd: &Cmd, mangle: &Mangle, model: &Model) -> Vec<Vec<u8>> {
    let stream = model.stream(key.as_bytes());
    let mut args: Vec<String> = match cmd {
        Cmd::Add {
            no_mkstream,
            trim,
            id,
            fields,
        } => {
            let mut args = vec!["XADD".to_string(), key.to_string()];
            if *no_mkstream {
                args.push("NOMKSTREAM".into());
            }
            if let Some(t) = trim {
                args.extend(trim_args(t, stream));
            }
            args.push(match id {
                AddIdGen::Auto => "*".into(),
                AddIdGen::AutoSeq(choice) => format!("{}-*", resolve(choice, stream).ms),
                AddIdGen::Explicit(arg) => id_arg_text(arg, stream),
                AddIdGen::Zero(short) => if *short { "0" } else { "0-0" }.into(),
                AddIdGen::Bad(i) => (*i.get(&BAD_IDS)).to_string(),
            });
            for (name, value) in fields {
                args.push((*name.get(&FIELD_NAMES)).to_string());
                args.push((*value.get(&FIELD_VALUES)).to_string());
            }
            args
        }
        Cmd::Del(ids) => ["XDEL".to_string(), key.to_string()]
            .into_iter()
            .chain(ids.iter().map(|t| id_tok_text(t, stream)))
            .collect(),
        Cmd::Trim(t) => [
            vec!["XTRIM".to_string(), key.to_string()],
            trim_args(t, stream),
        ]
        .concat(),
        Cmd::SetId(id, opts) => {
            let mut args = vec![
                "XSETID".to_string(),
                key.to_string(),
                id_tok_text(id, stream),
            ];
            for opt in opts {
                match opt {
                    SetIdOpt::EntriesAdded(delta) => {
                        let len = stream.map_or(0, |s| s.length as i64);
                        args.push("ENTRIESADDED".into());
                        args.push((len + i64::from(*delta)).to_string());
                    }
                    SetIdOpt::MaxDeletedId(tok) => {
                        args.push("MAXDELETEDID".into());
                        args.push(id_tok_text(tok, stream));
                    }
                }
            }
            args
        }
        Cmd::Range {
            reverse,
            start,
            end,
            count,
        } => {
            let bound = |b: &RangeBound| match b {
                RangeBound::Min => "-".to_string(),
                RangeBound::Max => "+".to_string(),
                RangeBound::Id { id, exclusive } => {
                    format!(
                        "{}{}",
                        if *exclusive { "(" } else { "" },
                        id_arg_text(id, stream)
                    )
                }
                RangeBound::Raw(s) => (*s).to_string(),
            };
            let (first, second) = if *reverse { (end, start) } else { (start, end) };
            let name = if *reverse { "XREVRANGE" } else { "XRANGE" };
            let mut args = vec![
                name.to_string(),
                key.to_string(),
                bound(first),
                bound(second),
            ];
            if let Some(n) = count {
                args.push("COUNT".into());
                args.push(int_tok_text(n));
            }
            args
        }
        Cmd::Len => vec!["XLEN".to_string(), key.to_string()],
    };
    match mangle {
        Mangle::None => {}
        Mangle::Append(tok) => args.push((*tok.get(&STRAY_TOKENS)).to_string()),
        Mangle::DropLast => {
            args.pop();
        }
        Mangle::Replace(at, tok) => {
            let at = 1 + at.index(args.len() - 1);
            args[at] = (*tok.get(&STRAY_TOKENS)).to_string();
        }
    }
    args.into_iter().map(String::into_bytes).collect()
}

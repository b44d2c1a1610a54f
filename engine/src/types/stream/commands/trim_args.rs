//! `[MAXLEN|MINID [=|~] threshold [LIMIT count]] [KEEPREF|DELREF|ACKED]`, shared by XADD and
//! XTRIM (`docs/reference/streams.md` §2.1; the strategy token is Redis 8.2's; only one strategy
//! token is an option: a second is XADD's id, so an invalid-id error, or XTRIM's syntax error), and
//! XADD's `NOMKSTREAM` and `IDMP pid iid | IDMPAUTO pid` (`docs/reference/streams-8.md` §3.2).

use crate::error::{Error, Result};
use crate::id::{AddId, StreamId};
use crate::stream::{DeleteStrategy, Trim, TrimStrategy};

use super::args::{is, parse_u64_nonneg};

/// XADD's idempotency option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdmpArg<'a> {
    /// `IDMP pid iid`.
    Explicit {
        /// The producer id.
        pid: &'a [u8],
        /// The idempotent id.
        iid: &'a [u8],
    },
    /// `IDMPAUTO pid`: the iid is derived from the fields.
    Auto {
        /// The producer id.
        pid: &'a [u8],
    },
}

/// What the options before XADD's id (or all of XTRIM's options) say.
#[derive(Debug, Default)]
pub struct TrimArgs<'a> {
    /// The trim, if a strategy was given.
    pub trim: Option<Trim>,
    /// XADD's NOMKSTREAM.
    pub no_mkstream: bool,
    /// XADD's id, and the index of the argument after it.
    pub id: Option<(AddId, usize)>,
    /// XADD's IDMP or IDMPAUTO.
    pub idmp: Option<IdmpArg<'a>>,
    /// Where the trim's words are, for the propagated forms.
    pub words: TrimWords,
}

/// Where a trim's words are among the arguments, recorded while parsing so the propagated
/// forms rewrite or drop them without parsing again.
#[derive(Debug, Default, Clone, Copy)]
pub struct TrimWords {
    /// MAXLEN/MINID's index and its word count (2, or 3 with `=`/`~`).
    pub strategy: Option<(usize, usize)>,
    /// LIMIT's index (LIMIT and its count).
    pub limit: Option<usize>,
    /// KEEPREF/DELREF/ACKED's index.
    pub delete: Option<usize>,
}

/// Parses options from `argv[2..]`. For XADD, the first argument that is not an option is the
/// id and ends parsing (a literal `*` always does); for XTRIM, anything else is a syntax error.
///
/// IDMP takes the next two arguments and IDMPAUTO the next one whatever they are (so
/// `IDMP p *` takes `*` as the iid); with fewer left, the word is read as the id. Redis's
/// checks come in argument order: repeated IDMP/IDMPAUTO, then empty pid, then empty iid; an
/// id other than `*` with IDMP is rejected once it parses.
pub fn parse<'a>(argv: &[&'a [u8]], xadd: bool) -> Result<TrimArgs<'a>> {
    let mut out = TrimArgs::default();
    let mut strategy: Option<TrimStrategy> = None;
    let mut approx = false;
    let mut limit: Option<u64> = None;
    let mut delete: Option<DeleteStrategy> = None;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        let opt = argv[i];
        if xadd && opt == b"*" {
            out.id = Some((AddId::Auto, i + 1));
            break;
        }
        let word = Word::of(opt);
        if matches!(word, Some(Word::MaxLen | Word::MinId)) && more > 0 {
            if strategy.is_some() {
                return Err(Error::MaxlenAndMinid);
            }
            approx = false;
            let at = i;
            let next = argv[i + 1];
            if more >= 2 && (next == b"~" || next == b"=") {
                approx = next == b"~";
                i += 1;
            }
            out.words.strategy = Some((at, i + 2 - at));
            let threshold = argv[i + 1];
            strategy = Some(if word == Some(Word::MaxLen) {
                TrimStrategy::MaxLen(parse_u64_nonneg(threshold, Error::MaxlenNegative)?)
            } else {
                TrimStrategy::MinId(StreamId::parse_strict(threshold)?)
            });
            i += 2;
        } else if word == Some(Word::Limit) && more > 0 {
            limit = Some(parse_u64_nonneg(argv[i + 1], Error::LimitNegative)?);
            out.words.limit = Some(i);
            i += 2;
        } else if let Some(d) = word
            .and_then(Word::delete_strategy)
            .filter(|_| delete.is_none())
        {
            delete = Some(d);
            out.words.delete = Some(i);
            i += 1;
        } else if xadd && word == Some(Word::NoMkStream) {
            out.no_mkstream = true;
            i += 1;
        } else if xadd && word == Some(Word::IdmpAuto) && more > 0 {
            if out.idmp.is_some() {
                return Err(Error::IdmpRepeated);
            }
            let pid = argv[i + 1];
            if pid.is_empty() {
                return Err(Error::IdmpAutoEmptyPid);
            }
            out.idmp = Some(IdmpArg::Auto { pid });
            i += 2;
        } else if xadd && word == Some(Word::Idmp) && more >= 2 {
            if out.idmp.is_some() {
                return Err(Error::IdmpRepeated);
            }
            let (pid, iid) = (argv[i + 1], argv[i + 2]);
            if pid.is_empty() {
                return Err(Error::IdmpEmptyPid);
            }
            if iid.is_empty() {
                return Err(Error::IdmpEmptyIid);
            }
            out.idmp = Some(IdmpArg::Explicit { pid, iid });
            i += 3;
        } else if xadd {
            let id = AddId::parse(opt)?;
            // A literal `*` ended the loop above: any id parsed here is not auto-generated.
            if out.idmp.is_some() {
                return Err(Error::IdmpNeedsAutoId);
            }
            out.id = Some((id, i + 1));
            break;
        } else {
            return Err(Error::Syntax);
        }
    }
    if limit.is_some_and(|l| l != 0) && strategy.is_none() {
        return Err(Error::LimitWithoutStrategy);
    }
    if !xadd && strategy.is_none() {
        return Err(Error::XtrimWithoutStrategy);
    }
    if limit.is_some() && !approx {
        return Err(Error::LimitWithoutApprox);
    }
    out.trim = strategy.map(|strategy| Trim {
        delete: delete.unwrap_or_default(),
        strategy,
        approx,
        limit,
    });
    Ok(out)
}

/// The option keywords, recognised once per argument (by length first, so most compare
/// against one or two words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    MaxLen,
    MinId,
    Limit,
    KeepRef,
    DelRef,
    Acked,
    NoMkStream,
    IdmpAuto,
    Idmp,
}

impl Word {
    /// The keyword `arg` spells (any case), if any.
    fn of(arg: &[u8]) -> Option<Word> {
        let candidates: &[(&str, Word)] = match arg.len() {
            4 => &[("idmp", Word::Idmp)],
            5 => &[
                ("minid", Word::MinId),
                ("limit", Word::Limit),
                ("acked", Word::Acked),
            ],
            6 => &[("maxlen", Word::MaxLen), ("delref", Word::DelRef)],
            7 => &[("keepref", Word::KeepRef)],
            8 => &[("idmpauto", Word::IdmpAuto)],
            10 => &[("nomkstream", Word::NoMkStream)],
            _ => return None,
        };
        candidates
            .iter()
            .find(|(word, _)| is(arg, word))
            .map(|&(_, w)| w)
    }

    fn delete_strategy(self) -> Option<DeleteStrategy> {
        match self {
            Word::KeepRef => Some(DeleteStrategy::KeepRef),
            Word::DelRef => Some(DeleteStrategy::DelRef),
            Word::Acked => Some(DeleteStrategy::Acked),
            _ => None,
        }
    }
}

/// `KEEPREF`, `DELREF` or `ACKED` (any case).
pub fn delete_strategy(arg: &[u8]) -> Option<DeleteStrategy> {
    if is(arg, "keepref") {
        Some(DeleteStrategy::KeepRef)
    } else if is(arg, "delref") {
        Some(DeleteStrategy::DelRef)
    } else if is(arg, "acked") {
        Some(DeleteStrategy::Acked)
    } else {
        None
    }
}

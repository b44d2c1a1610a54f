//! The propagated forms the stream commands build for their effects (Redis 8.8's
//! `t_stream.c`: `streamPropagateXCLAIM`, `streamPropagateGroupID`,
//! `streamPropagateConsumerCreation`, `streamRewriteApproxSpecifier` and
//! `streamRewriteTrimArgument`). Each command calls these while it runs, from its own parsed
//! arguments and the state it just changed, and only when a propagation sink is installed
//! ([`Db::propagating`]); nothing here parses an argument.
//!
//! [`Db::propagating`]: crate::Db::propagating

use bytes::Bytes;

use crate::group::Group;
use crate::id::StreamId;
use crate::stream::{DeleteStrategy, Stream, Trim, TrimStrategy};

use super::trim_args::TrimWords;

pub(super) fn bytes(arg: &[u8]) -> Bytes {
    Bytes::copy_from_slice(arg)
}

pub(super) fn id_bytes(id: StreamId) -> Bytes {
    Bytes::from(id.to_string())
}

/// `argv` as owned arguments: the verbatim form.
pub(super) fn verbatim(argv: &[&[u8]]) -> Vec<Bytes> {
    argv.iter().map(|a| bytes(a)).collect()
}

/// Rewrites the `~` trim at `words` in `form` to the exact trim it amounted to on `stream`
/// (`MAXLEN = <length>`, `MINID = <first id>`), and drops its LIMIT, so a replay removes exactly
/// what this run removed.
pub(super) fn exact_trim(
    form: &mut Vec<Bytes>,
    words: &TrimWords,
    strategy: TrimStrategy,
    stream: &Stream,
) {
    let Some((at, _)) = words.strategy else {
        return;
    };
    let threshold = match strategy {
        TrimStrategy::MaxLen(_) => Bytes::from(stream.len().to_string()),
        TrimStrategy::MinId(_) if stream.is_empty() => {
            // Everything went: a threshold above the last id removes it all again.
            id_bytes(stream.last_id().next().unwrap_or(StreamId::MAX))
        }
        TrimStrategy::MinId(_) => id_bytes(stream.first_id()),
    };
    form[at + 1] = Bytes::from_static(b"=");
    form[at + 2] = threshold;
    if let Some(limit_at) = words.limit {
        form.drain(limit_at..limit_at + 2);
    }
}

/// `argv` without its trim words (MAXLEN/MINID with sign and threshold, LIMIT, the deletion
/// strategy): an XADD whose trim is deferred to the archive's commit pipeline (which
/// propagates the trim itself, as an XTRIM).
pub(super) fn without_trim(form: Vec<Bytes>, words: &TrimWords) -> Vec<Bytes> {
    let mut spans: Vec<(usize, usize)> = [
        words.strategy,
        words.limit.map(|at| (at, 2)),
        words.delete.map(|at| (at, 1)),
    ]
    .into_iter()
    .flatten()
    .collect();
    spans.sort_unstable();
    let mut out = Vec::with_capacity(form.len());
    for (i, arg) in form.into_iter().enumerate() {
        if !spans.iter().any(|&(at, n)| (at..at + n).contains(&i)) {
            out.push(arg);
        }
    }
    out
}

/// `XTRIM key MAXLEN|MINID =|~ threshold [LIMIT n] [DELREF|ACKED]`: a typed trim as the XTRIM
/// that asks for it, with where its words are.
pub(super) fn xtrim(key: &[u8], trim: &Trim) -> (Vec<Bytes>, TrimWords) {
    let (word, threshold) = match trim.strategy {
        TrimStrategy::MaxLen(n) => (Bytes::from_static(b"MAXLEN"), Bytes::from(n.to_string())),
        TrimStrategy::MinId(id) => (Bytes::from_static(b"MINID"), id_bytes(id)),
    };
    let sign = Bytes::from_static(if trim.approx { b"~" } else { b"=" });
    let mut form = vec![
        Bytes::from_static(b"XTRIM"),
        bytes(key),
        word,
        sign,
        threshold,
    ];
    let mut words = TrimWords {
        strategy: Some((2, 3)),
        ..TrimWords::default()
    };
    if let (true, Some(limit)) = (trim.approx, trim.limit) {
        words.limit = Some(form.len());
        form.extend([Bytes::from_static(b"LIMIT"), Bytes::from(limit.to_string())]);
    }
    let strategy: Option<&'static [u8]> = match trim.delete {
        DeleteStrategy::KeepRef => None,
        DeleteStrategy::DelRef => Some(b"DELREF"),
        DeleteStrategy::Acked => Some(b"ACKED"),
    };
    if let Some(strategy) = strategy {
        words.delete = Some(form.len());
        form.push(Bytes::from_static(strategy));
    }
    (form, words)
}

/// `XCLAIM key group owner 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last` for a pending
/// entry, as Redis propagates a delivery or a claim; `None` if it is not pending or unowned
/// (a NACKed entry has no XCLAIM form).
pub(super) fn claim(
    key: &[u8],
    group_name: &[u8],
    group: &Group,
    id: StreamId,
) -> Option<Vec<Bytes>> {
    let nack = group.nack(id)?;
    let owner = nack.owner.as_ref()?;
    Some(vec![
        Bytes::from_static(b"XCLAIM"),
        bytes(key),
        bytes(group_name),
        bytes(owner.as_bytes()),
        Bytes::from_static(b"0"),
        id_bytes(id),
        Bytes::from_static(b"TIME"),
        Bytes::from(nack.delivery_time.to_string()),
        Bytes::from_static(b"RETRYCOUNT"),
        Bytes::from(nack.delivery_count.to_string()),
        Bytes::from_static(b"FORCE"),
        Bytes::from_static(b"JUSTID"),
        Bytes::from_static(b"LASTID"),
        id_bytes(group.last_id),
    ])
}

/// `XGROUP SETID key group last ENTRIESREAD n`.
pub(super) fn setid(key: &[u8], group_name: &[u8], group: &Group) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"SETID"),
        bytes(key),
        bytes(group_name),
        id_bytes(group.last_id),
        Bytes::from_static(b"ENTRIESREAD"),
        Bytes::from(group.entries_read.unwrap_or(-1).to_string()),
    ]
}

/// `XACK key group id`: a pending entry dropped because its entry was deleted.
pub(super) fn xack(key: &[u8], group: &[u8], id: StreamId) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XACK"),
        bytes(key),
        bytes(group),
        id_bytes(id),
    ]
}

/// `XGROUP CREATECONSUMER key group consumer`: a consumer a read or claim created that no
/// XCLAIM form carries.
pub(super) fn create_consumer(key: &[u8], group: &[u8], consumer: &[u8]) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"CREATECONSUMER"),
        bytes(key),
        bytes(group),
        bytes(consumer),
    ]
}

//! The archive's commands, and what its trim hook does to XADD and XTRIM (policy in
//! [`crate::state::archive`]; the hook is [`crate::state::archive::ArchiveTrims`], installed
//! on the keyspace, so XADD and XTRIM run through the engine's own dispatch and produce their
//! own effects: propagation, events, WATCH, dirty):
//!
//! - XTRIM on an archived stream: the engine previews the trim, the entries it removes are
//!   folded in one durable transaction, then the stream is trimmed; if the fold fails the
//!   reply is the archive's error and nothing is trimmed.
//! - XADD with MAXLEN/MINID on an archived stream: the entry is added, then the
//!   fold-before-trim. For an approximate trim (`~`, which may leave more entries than asked)
//!   the entries it would remove are folded without an fsync, and the trim itself runs in the
//!   commit pipeline once one fsync made those folds durable (`state::archive`'s deferred
//!   trims); an exact trim folds durably and trims at once, as XTRIM does.
//!   if the fold or the fsync fails the entry stays added, the trim is skipped (it runs again
//!   on the next trim) and `archive_fold_errors` counts it, because the client's XADD did
//!   succeed and an error reply would make it retry a write that is already there.
//! - While the archive cannot fold (a storage failure, until it is reopened), XTRIM and a
//!   trimming XADD on an archived stream answer `-MISCONF ...` naming the failure and change
//!   nothing; XADD without MAXLEN/MINID still appends.
//! - `EMQ.XRANGE key start end [COUNT n]` / `EMQ.XREVRANGE key end start [COUNT n]`: XRANGE's
//!   syntax, errors and reply, over archive (ids `<= W`) and live stream (ids `> W`). Without
//!   an archive, or outside its policy, they are XRANGE and XREVRANGE.
//!
//! Everything runs under the keyspace lock, so no trim can run between the split on W and the
//! live read. An XTRIM's fold fsyncs under it (holding other commands back, as Redis's
//! `appendfsync always` does); an XADD's does not.

use bytes::Bytes;
use echomq_archive::{ArchiveError, RangeQuery};
use echomq_engine::command::{self as stream, RangeArgs};
use echomq_engine::reply::EntryReplies;
use echomq_engine::{Entry, Reply, StreamId};

use super::{Ctx, error};

/// An archive error as a reply: `ERR archive: ...` with the archive's advice.
fn archive_error(e: &ArchiveError) -> Reply {
    Reply::Error(format!("ERR archive: {e}"))
}

/// `EMQ.XRANGE`.
pub(crate) fn xrange(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    merged_range(ctx, argv, false)
}

/// `EMQ.XREVRANGE`.
pub(crate) fn xrevrange(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    merged_range(ctx, argv, true)
}

fn merged_range(ctx: &mut Ctx<'_>, argv: &[&[u8]], reverse: bool) -> Reply {
    let RangeArgs { start, end, count } = match stream::parse_range(argv, reverse) {
        Ok(args) => args,
        Err(e) => return error(e),
    };
    let key = argv[1];
    let state = ctx.state;
    let db_index = ctx.client.db;
    let db = ctx.db();
    let live = match db.stream(key) {
        Ok(live) => live,
        Err(e) => return error(e),
    };
    let archive = state
        .archive()
        .filter(|a| a.covers(&state.settings().archive_streams, db_index, key));
    let watermark = match archive.map(|a| a.archive().watermark(key)) {
        Some(Ok(w)) => w,
        Some(Err(e)) => return archive_error(&e),
        None => None,
    };
    // XRANGE's order: a missing key is an empty array, then COUNT 0 a null array.
    if live.is_none() && watermark.is_none() {
        return Reply::Array(Vec::new());
    }
    if count == Some(0) {
        return Reply::NullArray;
    }
    let live_read = |a: StreamId, b: StreamId, n: Option<usize>, rev: bool| {
        let n = n.unwrap_or(usize::MAX);
        let entries: Vec<Entry> = match live {
            None => Vec::new(),
            Some(s) if rev => s.rev_range(a, b).take(n).map(|e| e.to_entry()).collect(),
            Some(s) => s.range(a, b).take(n).map(|e| e.to_entry()).collect(),
        };
        Ok::<_, ArchiveError>(entries)
    };
    let query = RangeQuery {
        start,
        end,
        count,
        reverse,
    };
    let entries = match archive {
        Some(a) => match a.archive().read_merged(key, query, live_read, |e| e) {
            Ok(entries) => entries,
            Err(e) => return archive_error(&e),
        },
        None => match live_read(start, end, count, reverse) {
            Ok(entries) => entries,
            Err(e) => return archive_error(&e),
        },
    };
    let mut replies = EntryReplies::new();
    for entry in &entries {
        replies.push_fields(
            entry.id,
            entry
                .fields
                .iter()
                .map(|(f, v): &(Bytes, Bytes)| (f.as_ref(), v.as_ref())),
        );
    }
    replies.into_reply()
}

//! The synchronous half of a connection: every complete request already read runs, in order,
//! in one keyspace [`Batch`], its reply encoded into the output buffer.
//!
//! Pipelined requests therefore take the keyspace lock once, not once each, and the blocked
//! clients they serve are woken once, when the batch ends. [`run_ready`] returns a [`Step`]
//! (ending the batch: the lock is released, then the wake-ups go out) whenever the connection
//! must wait or write: more input is needed, the replies reached [`OUTPUT_FLUSH_BYTES`], a
//! command blocked, CLIENT PAUSE holds the next request, or the connection closes. It never
//! awaits, so the lock is never held across a wait, and the AOF commit (which may write and
//! fsync) always comes after the batch, outside the lock.
//!
//! Requests are decoded into one argument vector kept across calls, and a multibulk request's
//! arguments are slices of the input buffer, which moves on once, after the batch.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, BytesMut};
use echomq_engine::{BlockedHandle, Reply, Wake};

use crate::resp::{Arg, DecodeLimits, decode_args_into, encode, encode_error, encode_status};
use crate::state::{Action, ClientState, Execute, ServerState};

/// Reply bytes that make the connection write before decoding more requests.
pub(crate) const OUTPUT_FLUSH_BYTES: usize = 64 * 1024;

/// Why [`run_ready`] stopped, and what the connection does next.
#[derive(Debug)]
pub(crate) enum Step {
    /// Every complete request ran: write the replies, read more.
    NeedInput,
    /// The replies reached [`OUTPUT_FLUSH_BYTES`]: write them, then run on.
    Flush,
    /// CLIENT PAUSE holds the next request (still unread in the input) until this instant.
    Postpone(Instant),
    /// A command blocked: write the replies so far, then wait for its reply.
    Block(BlockedHandle),
    /// Write the replies (the last one included), then close (QUIT, a protocol error).
    Close,
    /// Close at once, writing nothing more (a cross-protocol attack).
    Drop,
}

/// A request alone in its batch has its keys prefetched when it has more arguments than this:
/// a command, a key and a value have one key, which a prefetch would not overlap with any.
const PREFETCH_ALONE_ARGS: usize = 3;

/// What a connection keeps from one batch to the next.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    args: Vec<Arg>,
    /// The allocation of a batch's argument slices, kept empty between batches (see
    /// [`reuse_empty`]).
    argv: Vec<&'static [u8]>,
    /// Whether input was read since the last batch: the next batch marks the client active.
    pub(crate) read_since_batch: bool,
    /// Whether the last batch's replies wait for the other connections ready to run (see
    /// [`LONG_BATCH_NS`]).
    pub(crate) write_after_others: bool,
    /// The requests decoded ahead to prefetch their keys, and the keys (kept empty between
    /// batches, as `argv`), and the table's scratch for their hashes.
    ahead: Ahead,
    ahead_keys: Vec<&'static [u8]>,
    ahead_hashes: Vec<u64>,
    /// The requests' elements (kept empty between batches, as `argv`), in groups that
    /// each start with their collection's key (see [`push_elements`]).
    ahead_elements: Vec<&'static [u8]>,
    ahead_groups: Vec<Range<usize>>,
    /// Windows left before elements are looked at again, after a window whose collections
    /// were all too small to prefetch (finding them costs a lookup a request).
    elements_idle: u32,
}

/// The requests [`prefetch_ahead`] decoded after the one the loop is running, kept as the loop
/// would decode them, so each is decoded once.
///
/// Invariant: `requests` are, in order, the requests that follow in the input the last one the
/// loop took, each with its length, its arguments' range in `args` (spans of the request, as
/// the decoder gives them) and the limits it was decoded under. Both are emptied when a batch
/// ends, since the input moves on after it.
#[derive(Debug, Default)]
struct Ahead {
    requests: VecDeque<Decoded>,
    args: Vec<Arg>,
    /// What one request is decoded into before it joins `args`.
    one: Vec<Arg>,
}

#[derive(Debug)]
struct Decoded {
    used: usize,
    args: Range<usize>,
    limits: DecodeLimits,
}

impl Ahead {
    /// Adds the request just decoded into `one`.
    fn push(&mut self, used: usize, limits: DecodeLimits) {
        let start = self.args.len();
        self.args.append(&mut self.one);
        let args = start..self.args.len();
        self.requests.push_back(Decoded { used, args, limits });
    }

    /// The next request's length, its arguments moved into `args`, when it was decoded ahead
    /// under `limits`. A request decoded under other limits (an AUTH or RESET ran since) is
    /// forgotten with all after it, for the loop to decode again.
    fn take_next(&mut self, limits: &DecodeLimits, args: &mut Vec<Arg>) -> Option<usize> {
        let next = self.requests.pop_front()?;
        if next.limits != *limits {
            self.clear();
            return None;
        }
        args.clear();
        args.extend(
            self.args[next.args]
                .iter_mut()
                .map(|arg| std::mem::replace(arg, Arg::Span(0, 0))),
        );
        if self.requests.is_empty() {
            self.args.clear();
        }
        Some(next.used)
    }

    fn clear(&mut self) {
        self.requests.clear();
        self.args.clear();
    }
}

/// A batch that ran longer than this, or ran more than one request, has its replies written
/// after the other connections ready to run have run, as Redis writes every client's replies
/// before it sleeps. A client sleeps once it has read its replies and sent its next requests
/// (a few microseconds), and waking it costs the writer more than the write: replies written
/// further apart than that wake it once each, written together once for all. A short batch's
/// replies go out at once, which costs less than the extra turn (a publisher's next message
/// then also reaches its subscribers' next write).
const LONG_BATCH_NS: u64 = 4_000;

/// Requests whose keys are prefetched together (Redis's `prefetch-batch-max-size` default).
const PREFETCH_REQUESTS: u64 = 16;
/// At most this many keys are prefetched together (an MSET's keys count one each).
const PREFETCH_KEYS: usize = 32;
/// Windows of requests whose elements are not looked at after a window that found no
/// collection big enough to prefetch: a connection to small collections pays the lookups on
/// one window in this many and one.
const ELEMENTS_IDLE_WINDOWS: u32 = 16;

/// An empty vector of another lifetime's slices in `v`'s allocation. `v` is empty, so the map
/// never runs; collecting an exact-size `vec::IntoIter` of a same-layout type into a `Vec`
/// reuses its buffer, so a batch allocates no argument vector once the first one has.
fn reuse_empty<'a, 'b>(v: Vec<&'a [u8]>) -> Vec<&'b [u8]> {
    debug_assert!(v.is_empty());
    v.into_iter().map(|_| -> &'b [u8] { &[] }).collect()
}

/// Runs every complete request at the front of `input` (see the module docs), consuming the
/// ones that ran and appending their replies to `output`.
pub(crate) fn run_ready(
    state: &ServerState,
    client: &mut ClientState,
    execute: Execute,
    waker: &Arc<dyn Wake>,
    input: &mut BytesMut,
    output: &mut BytesMut,
    scratch: &mut Scratch,
) -> Step {
    let bulk_bytes_max = i64::try_from(state.proto_max_bulk_len()).unwrap_or(i64::MAX);
    let mut batch = state.keyspace().batch();
    let mark = crate::monotonic::Mark::now();
    let now_ns = mark.ns;
    client.clock_mark = Some(mark);
    if std::mem::take(&mut scratch.read_since_batch) {
        client.info.mark_active_at(now_ns);
    }
    let whole: &[u8] = input;
    let mut consumed = 0;
    let mut argv: Vec<&[u8]> = reuse_empty(std::mem::take(&mut scratch.argv));
    let mut ran = 0u64;
    // The requests before this one had their keys prefetched (or were passed over).
    let mut prefetched_to = 0u64;
    let step = loop {
        let limits = DecodeLimits {
            bulk_bytes_max,
            unauthenticated: !client.authenticated,
        };
        let buf = &whole[consumed..];
        let decoded = match scratch.ahead.take_next(&limits, &mut scratch.args) {
            Some(used) => Ok(Some(used)),
            None => decode_args_into(buf, &limits, &mut scratch.args),
        };
        let used = match decoded {
            Ok(None) => break Step::NeedInput,
            Ok(Some(used)) => used,
            Err(e) => {
                state.stats().record_error("ERR");
                encode_error(&format!("ERR {e}"), output);
                break Step::Close;
            }
        };
        if scratch.args.is_empty() {
            consumed += used;
            continue;
        }
        client.info.count_batched(ran == 0);
        // Worth it with requests behind this one, or for this one alone when it may name
        // several keys (MSET, MGET, DEL …: more arguments than a command and two).
        let several = consumed + used < whole.len() || scratch.args.len() > PREFETCH_ALONE_ARGS;
        if ran >= prefetched_to && several {
            prefetched_to =
                ran + prefetch_ahead(client.db, &mut batch, buf, used, &limits, scratch);
        }
        ran += 1;
        // Messages published before the command ran go out before its reply; those it
        // published to its own client go after (Redis defers a client's own pushes).
        client.info.pubsub.take_into(output);
        let action = if let Some(spans) = spans_of(&scratch.args, buf, &mut argv) {
            execute(state, client, &mut batch, spans, waker)
        } else {
            // Inline arguments are unquoted copies, not slices of the input.
            let owned: Vec<&[u8]> = scratch.args.iter().map(|arg| arg_bytes(arg, buf)).collect();
            execute(state, client, &mut batch, &owned, waker)
        };
        if let Action::Postpone(until) = action {
            break Step::Postpone(until);
        }
        consumed += used;
        if client.reply_silenced() {
            match action {
                Action::Block(handle) => break Step::Block(handle),
                Action::Drop => break Step::Drop,
                Action::Close(_) => break Step::Close,
                _ => {}
            }
            continue;
        }
        match action {
            Action::Reply(reply) => {
                // A status line has one shape in both protocols.
                if let Reply::Status(status) = reply {
                    encode_status(status, output);
                } else {
                    encode(&reply, client.protocol, output);
                }
                drop_reply(reply);
            }
            Action::Raw(bytes) => output.extend_from_slice(&bytes),
            Action::Postpone(_) => {}
            Action::Drop => break Step::Drop,
            Action::Close(reply) => {
                encode(&reply, client.protocol, output);
                break Step::Close;
            }
            Action::Block(handle) => break Step::Block(handle),
        }
        if output.len() >= OUTPUT_FLUSH_BYTES {
            break Step::Flush;
        }
    };
    let ended_ns = client.clock_mark.take().map_or(now_ns, |mark| mark.ns);
    scratch.write_after_others = ran > 1 || ended_ns.saturating_sub(now_ns) >= LONG_BATCH_NS;
    argv.clear();
    scratch.argv = reuse_empty(argv);
    scratch.ahead.clear();
    batch.end();
    consume(input, consumed);
    step
}

/// Drops the first `used` bytes of `input`. Consumed whole, the buffer starts again at its
/// front: the next read lands in the lines the last reads warmed rather than walking the
/// allocation (and the cache) read by read, as Redis reads every client into one reused query
/// buffer. Nothing is copied, since nothing is left.
fn consume(input: &mut BytesMut, used: usize) {
    input.advance(used);
    if input.is_empty() {
        // Asking for more than the capacity makes it take back the consumed front; `false`
        // only says there was none to take back.
        let _ = input.try_reclaim(input.capacity() + 1);
    }
}

/// Prefetches the keys of the request about to run (its arguments in `scratch.args`, its
/// `used` bytes at the front of `buf`) and of the complete requests after it, in database `db`
/// (see `Batch::prefetch`): up to [`PREFETCH_REQUESTS`] requests or [`PREFETCH_KEYS`] keys, so
/// their lookups overlap their cache misses. In a database too small for that, the elements
/// the requests look up in their collections (HSET's fields, SADD's members ...) are
/// prefetched instead (`Batch::prefetch_elements`: a no-op but for big ones). The requests
/// after it are kept decoded (`scratch.ahead`) for the loop. Only multibulk requests of known
/// commands count, and only when the request about to run has a key (it locks the keyspace
/// anyway). Returns how many requests it covered, that one included; it changes nothing in
/// the keyspace.
fn prefetch_ahead(
    db: usize,
    batch: &mut echomq_engine::Batch<'_>,
    buf: &[u8],
    used: usize,
    limits: &DecodeLimits,
    scratch: &mut Scratch,
) -> u64 {
    let Scratch {
        args,
        ahead,
        ahead_keys,
        ahead_hashes,
        ahead_elements,
        ahead_groups,
        elements_idle,
        ..
    } = scratch;
    let mut keys: Vec<&[u8]> = reuse_empty(std::mem::take(ahead_keys));
    let mut elements: Vec<&[u8]> = reuse_empty(std::mem::take(ahead_elements));
    push_keys(args, &buf[..used], &mut keys);
    let mut covered = 1;
    // A request without a key may not lock the keyspace, so neither does the prefetch.
    if !keys.is_empty() {
        let keys_worth = batch.worth_prefetching(db);
        let with_elements = !keys_worth && *elements_idle == 0;
        *elements_idle = elements_idle.saturating_sub(1);
        if with_elements {
            push_elements(args, &buf[..used], &mut elements, ahead_groups);
        }
        if keys_worth || !ahead_groups.is_empty() {
            let mut at = used;
            while covered < PREFETCH_REQUESTS
                && keys.len() < PREFETCH_KEYS
                && elements.len() < PREFETCH_KEYS
            {
                let Ok(Some(len)) = decode_args_into(&buf[at..], limits, &mut ahead.one) else {
                    break;
                };
                let request = &buf[at..at + len];
                push_keys(&ahead.one, request, &mut keys);
                if with_elements {
                    push_elements(&ahead.one, request, &mut elements, ahead_groups);
                }
                ahead.push(len, *limits);
                at += len;
                covered += 1;
            }
            if keys_worth && keys.len() > 1 {
                batch.prefetch(db, &keys, ahead_hashes);
            }
            let mut any_big = false;
            // One element alone has no miss to overlap with.
            if covered == 1 && elements.len() <= 2 {
                ahead_groups.clear();
            }
            for group in ahead_groups.drain(..) {
                let (key, members) = (elements[group.start], &elements[group.start + 1..group.end]);
                any_big |= batch.prefetch_elements(db, key, members, ahead_hashes);
            }
            if with_elements && !any_big && covered > 1 {
                *elements_idle = ELEMENTS_IDLE_WINDOWS;
            }
        } else {
            // Checked again after the next window, not at every request.
            covered = PREFETCH_REQUESTS;
        }
    }
    keys.clear();
    *ahead_keys = reuse_empty(keys);
    elements.clear();
    *ahead_elements = reuse_empty(elements);
    covered
}

/// Pushes the key and the elements of the decoded request `args` (spans of `request`) onto
/// `elements` as a group in `groups` (see `CommandSpec::elements`), or onto the last group
/// when it is the same key's, up to [`PREFETCH_KEYS`] elements: nothing for an inline
/// request, an unknown command or one without elements.
fn push_elements<'a>(
    args: &[Arg],
    request: &'a [u8],
    elements: &mut Vec<&'a [u8]>,
    groups: &mut Vec<Range<usize>>,
) {
    let Some(Arg::Span(start, end)) = args.first() else {
        return;
    };
    let Some(spec) = crate::cmd::spec_of(&request[*start..*end]) else {
        return;
    };
    let span = |i: usize| match args.get(i) {
        Some(Arg::Span(start, end)) => Some(&request[*start..*end]),
        _ => None,
    };
    let mut indexes = spec.elements.indexes(args.len()).peekable();
    let key_at = usize::try_from(spec.keys.first).unwrap_or(0);
    let (Some(&first), Some(key)) = (indexes.peek(), span(key_at).filter(|_| key_at >= 1)) else {
        return;
    };
    if span(first).is_none() {
        return;
    }
    match groups.last() {
        Some(last) if elements[last.start] == key => {}
        _ => {
            groups.push(elements.len()..elements.len());
            elements.push(key);
        }
    }
    for i in indexes {
        if elements.len() > PREFETCH_KEYS {
            break;
        }
        if let Some(element) = span(i) {
            elements.push(element);
        }
    }
    if let Some(last) = groups.last_mut() {
        last.end = elements.len();
    }
}

/// Pushes the keys of the decoded request `args` (spans of `request`) onto `keys`, up to
/// [`PREFETCH_KEYS`]: none for an inline request or an unknown command.
fn push_keys<'a>(args: &[Arg], request: &'a [u8], keys: &mut Vec<&'a [u8]>) {
    let Some(Arg::Span(start, end)) = args.first() else {
        return;
    };
    let Some(spec) = crate::cmd::spec_of(&request[*start..*end]) else {
        return;
    };
    for i in spec.keys.indexes(args.len()) {
        if keys.len() >= PREFETCH_KEYS {
            break;
        }
        if let Some(Arg::Span(start, end)) = args.get(i) {
            keys.push(&request[*start..*end]);
        }
    }
}

/// Drops `reply`, without the out-of-line drop of a `Reply` for the values that own nothing
/// (most replies: `+OK`, an integer, a null).
#[inline]
fn drop_reply(reply: Reply) {
    match reply {
        Reply::Status(_) | Reply::Int(_) | Reply::Null | Reply::NullArray => {
            std::mem::forget(reply);
        }
        owning => drop(owning),
    }
}

/// The arguments as slices of `buf` in `argv` (kept across requests), when every one is a
/// span of it (a multibulk request); `None` for an inline request.
fn spans_of<'a, 'v>(
    args: &[Arg],
    buf: &'a [u8],
    argv: &'v mut Vec<&'a [u8]>,
) -> Option<&'v [&'a [u8]]> {
    argv.clear();
    for arg in args {
        match arg {
            Arg::Span(start, end) => argv.push(&buf[*start..*end]),
            Arg::Owned(_) => return None,
        }
    }
    Some(argv)
}

fn arg_bytes<'a>(arg: &'a Arg, buf: &'a [u8]) -> &'a [u8] {
    match arg {
        Arg::Span(start, end) => &buf[*start..*end],
        Arg::Owned(bytes) => bytes,
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::{Ahead, PREFETCH_KEYS, consume, push_elements, push_keys, reuse_empty};
    use crate::resp::{Arg, DecodeLimits, decode_args_into};

    fn keys_of(request: &[u8]) -> Vec<Vec<u8>> {
        let mut args = Vec::new();
        let limits = DecodeLimits {
            bulk_bytes_max: i64::MAX,
            unauthenticated: false,
        };
        decode_args_into(request, &limits, &mut args).unwrap();
        let mut keys = Vec::new();
        push_keys(&args, request, &mut keys);
        keys.into_iter().map(<[u8]>::to_vec).collect()
    }

    /// The element groups of `requests` in order: each its key, then its elements.
    fn element_groups_of(requests: &[&[u8]]) -> Vec<Vec<Vec<u8>>> {
        let limits = DecodeLimits {
            bulk_bytes_max: i64::MAX,
            unauthenticated: false,
        };
        let (mut elements, mut groups) = (Vec::new(), Vec::new());
        let mut args = Vec::new();
        for request in requests {
            decode_args_into(request, &limits, &mut args).unwrap();
            push_elements(&args, request, &mut elements, &mut groups);
        }
        groups
            .iter()
            .map(|g| elements[g.clone()].iter().map(|e| e.to_vec()).collect())
            .collect()
    }

    #[test]
    fn the_elements_prefetched_are_the_commands_fields_and_members_by_key() {
        let hset =
            b"*6\r\n$4\r\nHSET\r\n$1\r\nh\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf2\r\n$2\r\nv2\r\n";
        let hget = b"*3\r\n$4\r\nhget\r\n$1\r\nh\r\n$2\r\nf3\r\n";
        let sadd = b"*4\r\n$4\r\nsadd\r\n$1\r\ns\r\n$1\r\na\r\n$1\r\nb\r\n";
        let zincrby = b"*4\r\n$7\r\nzincrby\r\n$1\r\nz\r\n$1\r\n2\r\n$1\r\nm\r\n";
        let g = |parts: &[&str]| {
            parts
                .iter()
                .map(|p| p.as_bytes().to_vec())
                .collect::<Vec<_>>()
        };
        // A key's requests one after another make one group; another key starts another.
        assert_eq!(
            element_groups_of(&[hset, hget, sadd, zincrby]),
            [
                g(&["h", "f1", "f2", "f3"]),
                g(&["s", "a", "b"]),
                g(&["z", "m"])
            ]
        );
        // No elements: a command without them, one too short for them, an inline request.
        let get = b"*2\r\n$3\r\nget\r\n$1\r\nk\r\n";
        let short = b"*2\r\n$4\r\nhget\r\n$1\r\nh\r\n";
        assert!(element_groups_of(&[get, short, b"hget h f\r\n"]).is_empty());
    }

    #[test]
    fn the_keys_prefetched_are_the_commands_keys() {
        assert_eq!(keys_of(b"*2\r\n$3\r\nget\r\n$1\r\nk\r\n"), [b"k"]);
        assert_eq!(
            keys_of(b"*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"),
            [b"a", b"b"]
        );
        // An arity error, a command without keys, an unknown one, an inline request.
        assert!(keys_of(b"*1\r\n$3\r\nget\r\n").is_empty());
        assert!(keys_of(b"*2\r\n$4\r\nping\r\n$1\r\nk\r\n").is_empty());
        assert!(keys_of(b"*2\r\n$6\r\nnosuch\r\n$1\r\nk\r\n").is_empty());
        assert!(keys_of(b"get k\r\n").is_empty());
        let mut mget = format!("*{}\r\n$4\r\nmget\r\n", PREFETCH_KEYS + 11);
        for _ in 0..PREFETCH_KEYS + 10 {
            mget.push_str("$1\r\nk\r\n");
        }
        assert_eq!(keys_of(mget.as_bytes()).len(), PREFETCH_KEYS);
    }

    #[test]
    fn requests_decoded_ahead_come_back_in_order_under_the_same_limits_only() {
        let limits = DecodeLimits {
            bulk_bytes_max: 1 << 20,
            unauthenticated: false,
        };
        let input = b"*2\r\n$3\r\nget\r\n$1\r\na\r\n*3\r\n$3\r\nset\r\n$1\r\nb\r\n$2\r\nvv\r\n";
        let mut ahead = Ahead::default();
        let mut at = 0;
        let mut direct = Vec::new();
        while let Ok(Some(used)) = decode_args_into(&input[at..], &limits, &mut ahead.one) {
            let mut args = Vec::new();
            decode_args_into(&input[at..], &limits, &mut args).unwrap();
            direct.push((used, args));
            ahead.push(used, limits);
            at += used;
        }
        assert_eq!(direct.len(), 2);
        let mut args = vec![Arg::Span(9, 9)];
        for (used, expected) in &direct {
            assert_eq!(ahead.take_next(&limits, &mut args), Some(*used));
            assert_eq!(&args, expected);
        }
        assert_eq!(ahead.take_next(&limits, &mut args), None);
        assert!(ahead.args.is_empty());

        ahead.one.clone_from(&direct[0].1);
        ahead.push(direct[0].0, limits);
        ahead.one.clone_from(&direct[1].1);
        ahead.push(direct[1].0, limits);
        let after_auth = DecodeLimits {
            unauthenticated: true,
            ..limits
        };
        assert_eq!(ahead.take_next(&after_auth, &mut args), None);
        assert!(ahead.requests.is_empty() && ahead.args.is_empty());
    }

    #[test]
    fn the_argument_vector_keeps_its_allocation_between_batches() {
        let mut v: Vec<&[u8]> = Vec::with_capacity(8);
        let buffer = v.as_ptr();
        v = reuse_empty(reuse_empty(v));
        assert!(v.capacity() >= 8);
        assert_eq!(v.as_ptr(), buffer);
    }

    #[test]
    fn a_buffer_consumed_whole_reads_again_at_its_front() {
        let mut input = BytesMut::with_capacity(1024);
        let front = input.as_ptr();
        input.extend_from_slice(b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI");
        consume(&mut input, 14);
        assert_eq!(&input[..], b"*1\r\n$4\r\nPI", "the partial request stays");
        assert_ne!(input.as_ptr(), front, "a partial request is not moved");
        input.extend_from_slice(b"NG\r\n");
        consume(&mut input, 14);
        assert!(input.is_empty());
        assert_eq!(
            input.as_ptr(),
            front,
            "the next read would not land at the front"
        );
        assert_eq!(
            input.capacity(),
            1024,
            "the consumed front was not taken back"
        );
    }
}

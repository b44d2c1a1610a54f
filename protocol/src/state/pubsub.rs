//! Pub/sub: who listens to which channel, pattern and shard channel ([`Registry`], one per
//! server), and each client's mailbox of messages not yet written ([`Subscriber`], one per
//! client, in its [`ClientInfo`]).
//!
//! Invariants:
//! - The registry's tables and every client's own lists say the same thing: a client is in a
//!   channel's list exactly when the channel is in its own list; a channel or pattern with no
//!   subscriber left is removed (PUBSUB CHANNELS does not show it). Both change only under the
//!   registry's lock.
//! - Publishing never waits for a subscriber: the message is encoded once (RESP2's `*3`
//!   array; a RESP3 subscriber gets the same bytes with the push type `>` in place of `*`,
//!   the only byte in which the two differ) and appended to each subscriber's mailbox, in
//!   publishing order. Only the message that finds a mailbox empty wakes its connection,
//!   which takes everything waiting at once and writes it in one go (Redis likewise appends
//!   to the client's buffer and writes once per event-loop turn), so a burst of messages
//!   costs one wake and one write, not one each. The mailbox keeps its allocation between
//!   bursts (up to [`MAILBOX_KEEP_BYTES`]).
//! - The mailbox counts toward the subscriber's `client-output-buffer-limit pubsub` (with
//!   the bytes its connection is still writing); a subscriber over the limit has its mailbox
//!   emptied, stops receiving, and is disconnected, as Redis does.
//! - A client's own lists keep subscription order: UNSUBSCRIBE without arguments answers in
//!   that order (Redis answers in its hash table's order, which tests do not depend on).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::{BufMut, Bytes, BytesMut};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

use super::client::ClientInfo;
use super::output_limit::{self, ClassLimit, OutputGuard};
use super::stats::Stats;
use crate::glob;

/// The three kinds of subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// SUBSCRIBE: a channel by name.
    Channel,
    /// PSUBSCRIBE: channels matching a glob pattern.
    Pattern,
    /// SSUBSCRIBE: a shard channel (SPUBLISH reaches only these).
    Shard,
}

impl Kind {
    fn index(self) -> usize {
        match self {
            Kind::Channel => 0,
            Kind::Pattern => 1,
            Kind::Shard => 2,
        }
    }

    /// The first element of a (un)subscribe confirmation.
    fn verbs(self) -> (&'static str, &'static str) {
        match self {
            Kind::Channel => ("subscribe", "unsubscribe"),
            Kind::Pattern => ("psubscribe", "punsubscribe"),
            Kind::Shard => ("ssubscribe", "sunsubscribe"),
        }
    }
}

/// A mailbox whose buffer grew past this many bytes gives it up when emptied, so one burst
/// does not pin its memory; a smaller one keeps it for the next burst.
pub(crate) const MAILBOX_KEEP_BYTES: usize = 64 * 1024;

/// Messages waiting for a client's connection to write them.
#[derive(Debug, Default)]
struct Mailbox {
    bytes: BytesMut,
    guard: OutputGuard,
    /// Over its output limit: dropped, receives nothing more.
    overrun: bool,
}

/// One client's side of pub/sub: its subscription counts (CLIENT LIST's `sub`, `psub`,
/// `ssub`) and its mailbox.
#[derive(Debug, Default)]
pub(crate) struct Subscriber {
    /// Subscriptions by [`Kind::index`].
    counts: [AtomicUsize; 3],
    mailbox: Mutex<Mailbox>,
    /// Set (under the mailbox's lock) whenever a message is appended, cleared by `take`:
    /// while it is clear the mailbox is empty, so the connection's check before each command
    /// costs one atomic swap instead of a lock.
    has_mail: AtomicBool,
    /// Bytes taken from the mailbox that the connection is still writing.
    in_flight: AtomicUsize,
    /// Signalled when a message finds the mailbox empty (once per burst).
    ready: Notify,
    /// Whether it is a MONITOR (set before it is fed, cleared after it no longer is).
    monitoring: AtomicBool,
    /// Whether it may receive pushes outside pub/sub: client-side caching's invalidations
    /// (it tracks keys, or a tracking client redirects to it). Never cleared: a stale flag
    /// only costs a wait registration.
    push_target: AtomicBool,
    /// How many times `ready` was signalled (what the tests check the once-per-burst wake by).
    #[cfg(test)]
    wakes: AtomicUsize,
}

impl Subscriber {
    /// How many subscriptions of `kind` it has.
    pub(crate) fn count(&self, kind: Kind) -> usize {
        self.counts[kind.index()].load(Ordering::Relaxed)
    }

    /// Every subscription, of every kind.
    pub(crate) fn total(&self) -> usize {
        self.channels_and_patterns() + self.count(Kind::Shard)
    }

    /// Channels and patterns together: what (un)subscribe confirmations report.
    fn channels_and_patterns(&self) -> usize {
        self.count(Kind::Channel) + self.count(Kind::Pattern)
    }

    /// Whether it has any subscription: Redis's pub/sub mode (the RESP2 command rules, the
    /// `pubsub` output class, CLIENT LIST's `P` flag).
    pub(crate) fn is_subscribed(&self) -> bool {
        self.channels_and_patterns() + self.count(Kind::Shard) > 0
    }

    /// Whether messages may reach it: it subscribes or monitors (or has mail waiting). Only
    /// its own commands change that, so its connection need not wait for [`Subscriber::ready`]
    /// otherwise.
    pub(crate) fn expects_mail(&self) -> bool {
        self.monitoring.load(Ordering::Relaxed)
            || self.push_target.load(Ordering::Relaxed)
            || self.is_subscribed()
            || self.has_mail.load(Ordering::Relaxed)
    }

    /// Marks it a receiver of invalidation pushes.
    pub(crate) fn set_push_target(&self) {
        self.push_target.store(true, Ordering::Relaxed);
    }

    /// Sets its channel count, as if it subscribed to `n` channels.
    #[cfg(test)]
    pub(crate) fn set_counts_for_tests(&self, n: usize) {
        self.counts[Kind::Channel.index()].store(n, Ordering::Relaxed);
    }

    /// Whether it is a MONITOR (CLIENT LIST's `O` flag).
    pub(crate) fn is_monitoring(&self) -> bool {
        self.monitoring.load(Ordering::Relaxed)
    }

    /// Marks it a MONITOR, or no longer.
    pub(crate) fn set_monitoring(&self, on: bool) {
        self.monitoring.store(on, Ordering::Relaxed);
    }

    /// Appends the messages waiting to `out` ([`Subscriber::take`]); one load when there are
    /// none, the case of nearly every request.
    #[inline]
    pub(crate) fn take_into(&self, out: &mut BytesMut) {
        if self.has_mail.load(Ordering::Relaxed) {
            out.extend_from_slice(&self.take());
        }
    }

    /// Takes the messages waiting, to be written; they count as in flight until
    /// [`Subscriber::written`].
    ///
    /// The taken bytes share the mailbox's buffer: once they are dropped, the next messages
    /// reuse it (unless it grew past [`MAILBOX_KEEP_BYTES`]), so a subscriber's steady
    /// traffic allocates nothing.
    pub(crate) fn take(&self) -> BytesMut {
        if !self.has_mail.swap(false, Ordering::Acquire) {
            return BytesMut::new();
        }
        let taken = {
            let mut mailbox = self.mailbox.lock();
            if mailbox.bytes.capacity() > MAILBOX_KEEP_BYTES {
                std::mem::take(&mut mailbox.bytes)
            } else {
                mailbox.bytes.split()
            }
        };
        self.in_flight.fetch_add(taken.len(), Ordering::Relaxed);
        taken
    }

    /// The bytes taken were written (or the connection ended).
    pub(crate) fn written(&self) {
        self.in_flight.store(0, Ordering::Relaxed);
    }

    /// Bytes waiting in the mailbox.
    pub(crate) fn waiting(&self) -> usize {
        self.mailbox.lock().bytes.len()
    }

    /// Completes once a message arrived in the empty mailbox (at once if one did since the
    /// last wait). Messages appended after it, until the next `take`, signal nothing: the
    /// connection takes them with the first.
    pub(crate) fn ready(&self) -> Notified<'_> {
        self.ready.notified()
    }

    fn wake(&self) {
        #[cfg(test)]
        self.wakes.fetch_add(1, Ordering::Relaxed);
        self.ready.notify_one();
    }
}

/// One (un)subscribe confirmation: verb, name (none: UNSUBSCRIBE without any), and the
/// client's subscriptions after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Confirmation {
    /// `subscribe`, `punsubscribe` ...
    pub verb: &'static str,
    /// The channel or pattern.
    pub name: Option<Bytes>,
    /// Channels and patterns (shard channels for the shard verbs) after it.
    pub count: usize,
}

impl Confirmation {
    /// Its frame: an array in RESP2, a push in RESP3.
    pub(crate) fn encode(&self, resp3: bool, out: &mut BytesMut) {
        put_header(out, resp3, 3);
        put_bulk(out, self.verb.as_bytes());
        match &self.name {
            Some(name) => put_bulk(out, name),
            None if resp3 => out.put_slice(b"_\r\n"),
            None => out.put_slice(b"$-1\r\n"),
        }
        put_line(out, b':', self.count);
    }
}

/// What one subscription change answers, in order.
pub(crate) type Frames = Vec<Confirmation>;

/// Every subscription of every client.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    tables: Mutex<Tables>,
}

#[derive(Debug, Default)]
struct Tables {
    /// Subscribers by channel, pattern and shard channel ([`Kind::index`]).
    by_name: [HashMap<Bytes, Vec<Arc<ClientInfo>>>; 3],
    /// Each subscribed client's own lists, in subscription order.
    by_client: HashMap<u64, [Vec<Bytes>; 3]>,
    /// Where a publish encodes its message once for all its subscribers (kept across
    /// publishes up to [`MAILBOX_KEEP_BYTES`] of capacity).
    scratch: Vec<u8>,
}

fn put_bulk(out: &mut impl BufMut, bytes: &[u8]) {
    put_line(out, b'$', bytes.len());
    out.put_slice(bytes);
    out.put_slice(b"\r\n");
}

fn put_line(out: &mut impl BufMut, prefix: u8, n: usize) {
    out.put_u8(prefix);
    out.put_slice(itoa::Buffer::new().format(n).as_bytes());
    out.put_slice(b"\r\n");
}

/// The header of a pub/sub frame of `len` elements: an array in RESP2, a push in RESP3.
fn put_header(out: &mut impl BufMut, resp3: bool, len: usize) {
    put_line(out, if resp3 { b'>' } else { b'*' }, len);
}

/// Where a publish must check limits and count drops.
pub(crate) struct Limits<'a> {
    /// `client-output-buffer-limit pubsub`.
    pub limit: ClassLimit,
    /// For `client_output_buffer_limit_disconnections`.
    pub stats: &'a Stats,
    /// Names a client's last command in the log line of a dropped client.
    pub call_name: fn(super::stats::CallId) -> &'static str,
}

impl Registry {
    /// Subscribes `client` to each of `names` as `kind`; returns the confirmations.
    pub(crate) fn subscribe(
        &self,
        client: &Arc<ClientInfo>,
        kind: Kind,
        names: &[&[u8]],
    ) -> Frames {
        let mut tables = self.tables.lock();
        let Tables {
            by_name, by_client, ..
        } = &mut *tables;
        let own = by_client.entry(client.id).or_default();
        let mut frames = Vec::with_capacity(names.len());
        for &name in names {
            let list = &mut own[kind.index()];
            if !list.iter().any(|n| n.as_ref() == name) {
                let name = Bytes::copy_from_slice(name);
                list.push(name.clone());
                by_name[kind.index()]
                    .entry(name)
                    .or_default()
                    .push(Arc::clone(client));
                client.pubsub.counts[kind.index()].fetch_add(1, Ordering::Relaxed);
            }
            let count = match kind {
                Kind::Shard => client.pubsub.count(Kind::Shard),
                _ => client.pubsub.channels_and_patterns(),
            };
            frames.push(Confirmation {
                verb: kind.verbs().0,
                name: Some(Bytes::copy_from_slice(name)),
                count,
            });
        }
        frames
    }

    /// Unsubscribes `client` from `names` of `kind`, or from all of that kind when `names`
    /// is empty (one confirmation with a null name when it had none); returns the
    /// confirmations.
    pub(crate) fn unsubscribe(
        &self,
        client: &Arc<ClientInfo>,
        kind: Kind,
        names: &[&[u8]],
    ) -> Frames {
        let mut tables = self.tables.lock();
        let all: Vec<Bytes>;
        let names: Vec<&[u8]> = if names.is_empty() {
            all = tables
                .by_client
                .get(&client.id)
                .map(|own| own[kind.index()].clone())
                .unwrap_or_default();
            all.iter().map(|n| n.as_ref()).collect()
        } else {
            names.to_vec()
        };
        let verb = kind.verbs().1;
        let mut frames = Vec::with_capacity(names.len().max(1));
        for &name in &names {
            tables.remove(client, kind, name);
            let count = match kind {
                Kind::Shard => client.pubsub.count(Kind::Shard),
                _ => client.pubsub.channels_and_patterns(),
            };
            frames.push(Confirmation {
                verb,
                name: Some(Bytes::copy_from_slice(name)),
                count,
            });
        }
        if names.is_empty() {
            let count = match kind {
                Kind::Shard => client.pubsub.count(Kind::Shard),
                _ => client.pubsub.channels_and_patterns(),
            };
            frames.push(Confirmation {
                verb,
                name: None,
                count,
            });
        }
        if !client.pubsub.is_subscribed() {
            tables.by_client.remove(&client.id);
        }
        frames
    }

    /// The channels, patterns and shard channels the client `id` is subscribed to (ACLs
    /// check them again when its user's channels change).
    pub(crate) fn subscriptions_of(&self, id: u64) -> [Vec<Bytes>; 3] {
        self.tables
            .lock()
            .by_client
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }

    /// Drops every subscription of `client`, confirming nothing (RESET, disconnect).
    pub(crate) fn forget(&self, client: &Arc<ClientInfo>) {
        let mut tables = self.tables.lock();
        let Some(own) = tables.by_client.remove(&client.id) else {
            return;
        };
        for (index, names) in own.iter().enumerate() {
            for name in names {
                let table = &mut tables.by_name[index];
                if let Some(list) = table.get_mut(name) {
                    list.retain(|c| c.id != client.id);
                    if list.is_empty() {
                        table.remove(name);
                    }
                }
            }
            client.pubsub.counts[index].store(0, Ordering::Relaxed);
        }
        client.pubsub.mailbox.lock().bytes.clear();
    }

    /// PUBLISH (`shard` false: channel subscribers, then pattern subscribers whose pattern
    /// matches) or SPUBLISH (`shard` true: shard channel subscribers only); returns how
    /// many received it.
    pub(crate) fn publish(
        &self,
        channel: &[u8],
        message: &[u8],
        shard: bool,
        limits: &Limits<'_>,
    ) -> usize {
        let mut tables = self.tables.lock();
        let Tables {
            by_name, scratch, ..
        } = &mut *tables;
        let mut receivers = 0;
        let (kind, verb) = if shard {
            (Kind::Shard, "smessage")
        } else {
            (Kind::Channel, "message")
        };
        if let Some(list) = by_name[kind.index()].get(channel) {
            scratch.clear();
            put_header(scratch, false, 3);
            put_bulk(scratch, verb.as_bytes());
            put_bulk(scratch, channel);
            put_bulk(scratch, message);
            for client in list {
                deliver_message(client, scratch, limits);
                receivers += 1;
            }
        }
        if !shard {
            for (pattern, list) in &by_name[Kind::Pattern.index()] {
                if !glob::matches(pattern, channel, false) {
                    continue;
                }
                scratch.clear();
                put_header(scratch, false, 4);
                put_bulk(scratch, b"pmessage");
                put_bulk(scratch, pattern);
                put_bulk(scratch, channel);
                put_bulk(scratch, message);
                for client in list {
                    deliver_message(client, scratch, limits);
                    receivers += 1;
                }
            }
        }
        if scratch.capacity() > MAILBOX_KEEP_BYTES {
            *scratch = Vec::new();
        }
        receivers
    }

    /// The channels (or shard channels) with subscribers, those matching `pattern` if given.
    pub(crate) fn channels(&self, shard: bool, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let kind = if shard { Kind::Shard } else { Kind::Channel };
        self.tables.lock().by_name[kind.index()]
            .keys()
            .filter(|name| pattern.is_none_or(|p| glob::matches(p, name, false)))
            .cloned()
            .collect()
    }

    /// How many clients subscribe to `name` as `kind`.
    pub(crate) fn subscribers(&self, kind: Kind, name: &[u8]) -> usize {
        self.tables.lock().by_name[kind.index()]
            .get(name)
            .map_or(0, Vec::len)
    }

    /// How many distinct channels, patterns or shard channels have subscribers (INFO's
    /// `pubsub_channels`, `pubsub_patterns`, `pubsubshard_channels`; PUBSUB NUMPAT).
    pub(crate) fn distinct(&self, kind: Kind) -> usize {
        self.tables.lock().by_name[kind.index()].len()
    }

    /// Whether no client subscribes to any channel or pattern (shard channels aside).
    pub(crate) fn is_empty(&self) -> bool {
        let tables = self.tables.lock();
        tables.by_name[Kind::Channel.index()].is_empty()
            && tables.by_name[Kind::Pattern.index()].is_empty()
    }

    /// How many clients have a subscription (INFO's `pubsub_clients`).
    pub(crate) fn clients(&self) -> usize {
        self.tables.lock().by_client.len()
    }
}

impl Tables {
    /// Removes one subscription, if `client` has it.
    fn remove(&mut self, client: &ClientInfo, kind: Kind, name: &[u8]) {
        let Some(own) = self.by_client.get_mut(&client.id) else {
            return;
        };
        let list = &mut own[kind.index()];
        let Some(at) = list.iter().position(|n| n.as_ref() == name) else {
            return;
        };
        list.remove(at);
        client.pubsub.counts[kind.index()].fetch_sub(1, Ordering::Relaxed);
        let table = &mut self.by_name[kind.index()];
        if let Some(subscribers) = table.get_mut(name) {
            subscribers.retain(|c| c.id != client.id);
            if subscribers.is_empty() {
                table.remove(name);
            }
        }
    }
}

/// Appends a message frame encoded for RESP2 (an array) to `client`'s mailbox, as a push
/// (`>` for `*`) if it speaks RESP3.
fn deliver_message(client: &ClientInfo, resp2: &[u8], limits: &Limits<'_>) {
    match resp2.split_first() {
        Some((_, rest)) if client.is_resp3() => append(client, b">", rest, limits),
        _ => append(client, &[], resp2, limits),
    }
}

/// Appends `frame` (a MONITOR line, a pub/sub message) to `client`'s mailbox; see
/// [`append`].
pub(crate) fn deliver(client: &ClientInfo, frame: &[u8], limits: &Limits<'_>) {
    append(client, &[], frame, limits);
}

/// Appends `head` then `body` to `client`'s mailbox, waking its connection if the mailbox
/// was empty, unless the client is over its output limit: then its mailbox is emptied and it
/// is disconnected.
fn append(client: &ClientInfo, head: &[u8], body: &[u8], limits: &Limits<'_>) {
    let subscriber = &client.pubsub;
    let mut mailbox = subscriber.mailbox.lock();
    if mailbox.overrun {
        return;
    }
    let was_empty = mailbox.bytes.is_empty();
    mailbox.bytes.reserve(head.len() + body.len());
    mailbox.bytes.extend_from_slice(head);
    mailbox.bytes.extend_from_slice(body);
    subscriber.has_mail.store(true, Ordering::Release);
    let pending = mailbox.bytes.len() + subscriber.in_flight.load(Ordering::Relaxed);
    let Mailbox { guard, .. } = &mut *mailbox;
    if let Err(overrun) = guard.check(output_limit::counted(pending), &limits.limit, false) {
        mailbox.overrun = true;
        mailbox.bytes = BytesMut::new();
        drop(mailbox);
        output_limit::log_drop(&client.line(limits.call_name), overrun);
        limits.stats.output_limit_disconnection();
        client.kill();
        return;
    }
    drop(mailbox);
    if was_empty {
        subscriber.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::Protocol;

    fn raw(frame: &Confirmation) -> Vec<u8> {
        let mut out = BytesMut::new();
        frame.encode(false, &mut out);
        out.to_vec()
    }

    fn client(id: u64) -> Arc<ClientInfo> {
        client_speaking(id, Protocol::Resp2)
    }

    fn client_speaking(id: u64, protocol: Protocol) -> Arc<ClientInfo> {
        let addr: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
        Arc::new(ClientInfo::new(id, addr, None, protocol))
    }

    fn wakes(client: &ClientInfo) -> usize {
        client.pubsub.wakes.load(Ordering::Relaxed)
    }

    fn limits(stats: &Stats) -> Limits<'_> {
        Limits {
            limit: ClassLimit {
                hard: 0,
                soft: 0,
                soft_seconds: 0,
            },
            stats,
            call_name: |_| "NULL",
        }
    }

    #[test]
    fn subscriptions_are_counted_confirmed_and_forgotten() {
        let registry = Registry::default();
        let a = client(1);
        let frames = registry.subscribe(&a, Kind::Channel, &[b"x", b"y", b"x"]);
        assert_eq!(
            raw(&frames[0]),
            b"*3\r\n$9\r\nsubscribe\r\n$1\r\nx\r\n:1\r\n"
        );
        assert_eq!(
            raw(&frames[2]),
            b"*3\r\n$9\r\nsubscribe\r\n$1\r\nx\r\n:2\r\n"
        );
        registry.subscribe(&a, Kind::Pattern, &[b"h*"]);
        assert_eq!(a.pubsub.count(Kind::Channel), 2);
        assert_eq!(registry.distinct(Kind::Pattern), 1);
        let frames = registry.unsubscribe(&a, Kind::Channel, &[]);
        assert_eq!(frames.len(), 2);
        assert_eq!(
            raw(&frames[1]),
            b"*3\r\n$11\r\nunsubscribe\r\n$1\r\ny\r\n:1\r\n"
        );
        let frames = registry.unsubscribe(&a, Kind::Channel, &[]);
        assert_eq!(
            raw(&frames[0]),
            b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:1\r\n"
        );
        assert!(a.pubsub.is_subscribed());
        registry.forget(&a);
        assert!(!a.pubsub.is_subscribed());
        assert_eq!(registry.distinct(Kind::Pattern), 0);
    }

    #[test]
    fn publish_reaches_channels_and_matching_patterns_not_shards() {
        let stats = Stats::default();
        let registry = Registry::default();
        let (a, b) = (client(1), client(2));
        registry.subscribe(&a, Kind::Channel, &[b"news"]);
        registry.subscribe(&b, Kind::Pattern, &[b"n*"]);
        registry.subscribe(&b, Kind::Shard, &[b"news"]);
        assert_eq!(registry.publish(b"news", b"hi", false, &limits(&stats)), 2);
        assert_eq!(
            a.pubsub.take().as_ref(),
            b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
        );
        assert_eq!(
            b.pubsub.take().as_ref(),
            b"*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
        );
        assert_eq!(registry.publish(b"news", b"s", true, &limits(&stats)), 1);
        assert_eq!(registry.publish(b"other", b"s", false, &limits(&stats)), 0);
    }

    #[test]
    fn a_subscriber_over_its_limit_gets_nothing_more() {
        let stats = Stats::default();
        let registry = Registry::default();
        let a = client(1);
        registry.subscribe(&a, Kind::Channel, &[b"c"]);
        let tight = Limits {
            limit: ClassLimit {
                hard: 1,
                soft: 0,
                soft_seconds: 0,
            },
            stats: &stats,
            call_name: |_| "NULL",
        };
        let big = vec![b'x'; output_limit::UNCOUNTED_BYTES as usize];
        assert_eq!(registry.publish(b"c", &big, false, &tight), 1);
        assert_eq!(a.pubsub.waiting(), 0);
        assert_eq!(registry.publish(b"c", b"small", false, &limits(&stats)), 1);
        assert_eq!(a.pubsub.waiting(), 0);
    }

    #[test]
    fn a_burst_wakes_once_and_is_taken_whole_in_publishing_order() {
        let stats = Stats::default();
        let registry = Registry::default();
        let a = client(1);
        registry.subscribe(&a, Kind::Channel, &[b"c"]);
        registry.subscribe(&a, Kind::Pattern, &[b"c*"]);
        for message in [b"1", b"2", b"3"] {
            assert_eq!(registry.publish(b"c", message, false, &limits(&stats)), 2);
        }
        assert_eq!(wakes(&a), 1);
        let mut expected = Vec::new();
        for message in ["1", "2", "3"] {
            expected.extend_from_slice(
                format!("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n{message}\r\n").as_bytes(),
            );
            expected.extend_from_slice(
                format!("*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$1\r\nc\r\n$1\r\n{message}\r\n")
                    .as_bytes(),
            );
        }
        assert_eq!(a.pubsub.take().as_ref(), &expected[..]);
        assert!(a.pubsub.take().is_empty());
        // Emptied, the mailbox wakes its connection again for the next message.
        registry.publish(b"c", b"4", false, &limits(&stats));
        assert_eq!(wakes(&a), 2);
    }

    #[test]
    fn one_encoding_serves_resp2_and_resp3_subscribers() {
        let stats = Stats::default();
        let registry = Registry::default();
        let (two, three) = (client(1), client_speaking(2, Protocol::Resp3));
        for c in [&two, &three] {
            registry.subscribe(c, Kind::Channel, &[b"news"]);
            registry.subscribe(c, Kind::Pattern, &[b"n*"]);
            registry.subscribe(c, Kind::Shard, &[b"news"]);
        }
        assert_eq!(registry.publish(b"news", b"hi", false, &limits(&stats)), 4);
        assert_eq!(registry.publish(b"news", b"s", true, &limits(&stats)), 2);
        let framed = |push: &str| {
            let frames = [
                ("3", "$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n"),
                (
                    "4",
                    "$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
                ),
                ("3", "$8\r\nsmessage\r\n$4\r\nnews\r\n$1\r\ns\r\n"),
            ];
            frames
                .iter()
                .map(|(len, body)| format!("{push}{len}\r\n{body}"))
                .collect::<String>()
        };
        assert_eq!(two.pubsub.take().as_ref(), framed("*").as_bytes());
        assert_eq!(three.pubsub.take().as_ref(), framed(">").as_bytes());
    }

    #[test]
    fn the_mailbox_reuses_its_buffer_once_the_taken_bytes_are_dropped() {
        let stats = Stats::default();
        let registry = Registry::default();
        let a = client(1);
        registry.subscribe(&a, Kind::Channel, &[b"c"]);
        registry.publish(b"c", b"first", false, &limits(&stats));
        let first = a.pubsub.take();
        let at = first.as_ptr();
        drop(first);
        registry.publish(b"c", b"again", false, &limits(&stats));
        assert_eq!(a.pubsub.take().as_ptr(), at);
        // A buffer grown past the keep size is given up instead.
        let big = vec![b'x'; MAILBOX_KEEP_BYTES + 1];
        registry.publish(b"c", &big, false, &limits(&stats));
        let taken = a.pubsub.take();
        assert!(taken.len() > MAILBOX_KEEP_BYTES);
        assert_eq!(a.pubsub.mailbox.lock().bytes.capacity(), 0);
    }

    #[test]
    fn only_subscribers_and_monitors_expect_mail() {
        let registry = Registry::default();
        let a = client(1);
        assert!(!a.pubsub.expects_mail());
        registry.subscribe(&a, Kind::Shard, &[b"s"]);
        assert!(a.pubsub.expects_mail());
        registry.unsubscribe(&a, Kind::Shard, &[]);
        assert!(!a.pubsub.expects_mail());
        let monitors = super::super::monitor::Monitors::default();
        monitors.add(&a);
        assert!(a.pubsub.expects_mail());
        monitors.remove(a.id);
        assert!(!a.pubsub.expects_mail());
    }
}

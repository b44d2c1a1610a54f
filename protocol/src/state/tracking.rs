//! Client-side caching (Redis 8.8's `tracking.c`): which clients may cache which keys, and
//! the invalidation messages sent when those keys change.
//!
//! Vocabulary:
//! - a *tracking client* ran `CLIENT TRACKING ON`; its options ([`TrackingOptions`]) live
//!   in its [`ClientInfo`], so CLIENT LIST shows them;
//! - in the default mode the server remembers, per key, the clients that read it
//!   ([`Tracking::remember`], after each read-only command) and tells them once when it
//!   changes, forgetting them for that key (they read it again to track it again);
//! - in BCAST mode a client names key prefixes instead, and hears about every key under them
//!   that changes; the keys changed under each prefix collect during an execution unit and
//!   go out together, sorted, as Redis sends them once per event-loop turn;
//! - messages go to the client itself as a RESP3 `invalidate` push, or, with `REDIRECT id`, to
//!   that client: a push if it speaks RESP3, a `message` on `__redis__:invalidate` if it is a
//!   RESP2 subscriber.
//!
//! The engine hands every execution unit's changed keys (and flushes) here, under the
//! keyspace lock ([`echomq_engine::invalidate`]); the recording is switched on only while
//! some client tracks. Messages go to the receivers' mailboxes ([`super::pubsub`]), so a
//! client's own invalidations follow the reply of the command that caused them.
//!
//! Lock order: the table, then a client's options; nothing here takes the keyspace lock.
//!
//! Invariants (checked by [`Tracking::check_invariants`]):
//! - `items` is the number of (key, client) pairs in `keys`, and no key has an empty set;
//! - every prefix has at least one client, and each such client is tracking in BCAST mode
//!   with that prefix among its own.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use parking_lot::Mutex;

use super::client::ClientInfo;

/// The engine's invalidation sink for one server.
#[derive(Debug)]
pub(crate) struct Invalidations {
    pub(crate) state: std::sync::Weak<super::ServerState>,
}

impl echomq_engine::InvalidationSink for Invalidations {
    fn invalidate(&self, keys: Vec<Bytes>, flushed: bool) {
        if let Some(state) = self.state.upgrade() {
            state.invalidate(&keys, flushed);
        }
    }
}

/// The channel RESP2 redirect targets receive invalidations on.
pub(crate) const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// One client's tracking options, as CLIENT TRACKING set them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TrackingOptions {
    /// Tracking is on.
    pub on: bool,
    /// BCAST mode: every key under `prefixes`.
    pub bcast: bool,
    /// OPTIN: only the keys of a command after `CLIENT CACHING YES` are tracked.
    pub optin: bool,
    /// OPTOUT: the keys of a command after `CLIENT CACHING NO` are not tracked.
    pub optout: bool,
    /// CLIENT CACHING was given for the next command (or transaction).
    pub caching: bool,
    /// NOLOOP: no message about keys this client changed itself.
    pub noloop: bool,
    /// The redirect target disconnected.
    pub broken_redirect: bool,
    /// REDIRECT's client id; 0 for none.
    pub redirect: u64,
    /// BCAST's prefixes (the empty prefix when none was given).
    pub prefixes: BTreeSet<Bytes>,
}

/// The keys changed under one BCAST prefix, and its clients.
#[derive(Debug, Default)]
struct Prefix {
    /// Client ids.
    clients: BTreeSet<u64>,
    /// Keys changed in the running unit, each with the id of the client that changed it last
    /// (0: none, e.g. expiry), for NOLOOP.
    changed: BTreeMap<Bytes, u64>,
}

#[derive(Debug, Default)]
struct Table {
    /// Default mode: key to the ids of the clients that may cache it.
    keys: HashMap<Bytes, BTreeSet<u64>>,
    /// The (key, client) pairs in `keys` (INFO's `tracking_total_items`).
    items: u64,
    /// BCAST prefixes.
    prefixes: BTreeMap<Bytes, Prefix>,
    /// Tracking clients, and the clients redirected to, by id.
    clients: BTreeMap<u64, Arc<ClientInfo>>,
}

/// What one invalidation message says.
enum Payload<'a> {
    /// One key.
    Key(&'a [u8]),
    /// Several keys (BCAST), already a RESP array.
    Array(&'a [u8]),
    /// Every key (a flush).
    All,
}

/// How a message reaches a client's mailbox: the server's delivery with its output limits.
pub(crate) type Deliver<'a> = &'a dyn Fn(&ClientInfo, &[u8]);

/// How a redirect target is found among the connected clients.
pub(crate) type Lookup<'a> = &'a dyn Fn(u64) -> Option<Arc<ClientInfo>>;

/// The tracking table of one server.
#[derive(Debug, Default)]
pub(crate) struct Tracking {
    table: Mutex<Table>,
    /// Clients with tracking on (INFO's `tracking_clients`).
    on: AtomicUsize,
    /// The client whose command runs now (set under the keyspace lock), for NOLOOP; 0 for
    /// none.
    current: AtomicU64,
}

/// Redis's error when two prefixes overlap.
fn overlap(new: &[u8], existing: &[u8], with_existing: bool) -> String {
    format!(
        "ERR Prefix '{}' overlaps with {} '{}'. Prefixes for a single client must not overlap.",
        String::from_utf8_lossy(new),
        if with_existing {
            "an existing prefix"
        } else {
            "another provided prefix"
        },
        String::from_utf8_lossy(existing)
    )
}

/// Whether one of `a`, `b` is a prefix of the other.
fn overlaps(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

impl Tracking {
    /// How many clients have tracking on.
    pub(crate) fn clients_on(&self) -> usize {
        self.on.load(Ordering::Relaxed)
    }

    /// INFO's `tracking_total_keys`, `tracking_total_items`, `tracking_total_prefixes`.
    pub(crate) fn totals(&self) -> (u64, u64, u64) {
        let table = self.table.lock();
        (
            table.keys.len() as u64,
            table.items,
            table.prefixes.len() as u64,
        )
    }

    /// Records the client whose command runs now (0: none).
    pub(crate) fn set_current(&self, id: u64) {
        self.current.store(id, Ordering::Relaxed);
    }

    /// Checks BCAST `prefixes` against each other and `client`'s own, in Redis's order:
    /// the error text when two overlap.
    pub(crate) fn check_prefixes(client: &ClientInfo, prefixes: &[&[u8]]) -> Result<(), String> {
        let own = client.tracking.lock().prefixes.clone();
        for (i, new) in prefixes.iter().enumerate() {
            if let Some(existing) = own.iter().find(|p| overlaps(p, new)) {
                return Err(overlap(new, existing, true));
            }
            if let Some(other) = prefixes[i + 1..].iter().find(|p| overlaps(new, p)) {
                return Err(overlap(new, other, false));
            }
        }
        Ok(())
    }

    /// Turns tracking on for `client` with `options` (already checked; `prefixes` is BCAST's
    /// list as given) (Redis's `enableTracking`): the options of an earlier CLIENT TRACKING
    /// ON are replaced, its prefixes kept.
    pub(crate) fn enable(
        &self,
        client: &Arc<ClientInfo>,
        redirect_to: Option<Arc<ClientInfo>>,
        options: TrackingOptions,
        prefixes: &[&[u8]],
    ) {
        let mut table = self.table.lock();
        let mut own = client.tracking.lock();
        if !own.on {
            self.on.fetch_add(1, Ordering::Relaxed);
        }
        let kept = std::mem::take(&mut own.prefixes);
        *own = TrackingOptions {
            on: true,
            caching: own.caching,
            prefixes: kept,
            ..options
        };
        client.set_tracking_on(true);
        client.pubsub.set_push_target();
        if let Some(target) = redirect_to {
            target.pubsub.set_push_target();
        }
        if own.bcast {
            let mut add = |prefix: &[u8]| {
                let entry = table
                    .prefixes
                    .entry(Bytes::copy_from_slice(prefix))
                    .or_default();
                if entry.clients.insert(client.id) {
                    own.prefixes.insert(Bytes::copy_from_slice(prefix));
                }
            };
            if prefixes.is_empty() {
                add(b"");
            }
            for prefix in prefixes {
                add(prefix);
            }
        }
        table.clients.insert(client.id, Arc::clone(client));
    }

    /// Turns tracking off for `client` (CLIENT TRACKING OFF, RESET, disconnection; Redis's
    /// `disableTracking`). Its entries in the key table go lazily, when those keys change.
    pub(crate) fn disable(&self, client: &ClientInfo) {
        let mut table = self.table.lock();
        let mut own = client.tracking.lock();
        if !own.on {
            return;
        }
        for prefix in std::mem::take(&mut own.prefixes) {
            if let Some(entry) = table.prefixes.get_mut(&prefix) {
                entry.clients.remove(&client.id);
                if entry.clients.is_empty() {
                    table.prefixes.remove(&prefix);
                }
            }
        }
        *own = TrackingOptions::default();
        client.set_tracking_on(false);
        table.clients.remove(&client.id);
        self.on.fetch_sub(1, Ordering::Relaxed);
    }

    /// After a read-only command of `client` (tracking, not BCAST): remembers that it may
    /// cache `keys` (Redis's `trackingRememberKeys`), unless OPTIN without CACHING YES or
    /// OPTOUT with CACHING NO.
    pub(crate) fn remember<'k>(&self, client: &ClientInfo, keys: impl Iterator<Item = &'k [u8]>) {
        let mut table = self.table.lock();
        {
            let own = client.tracking.lock();
            if !own.on || own.bcast || (own.optin && !own.caching) || (own.optout && own.caching) {
                return;
            }
        }
        for key in keys {
            let added = match table.keys.get_mut(key) {
                Some(ids) => ids.insert(client.id),
                None => {
                    table
                        .keys
                        .insert(Bytes::copy_from_slice(key), BTreeSet::from([client.id]));
                    true
                }
            };
            if added {
                table.items += 1;
            }
        }
    }

    /// `keys` changed (and, with `flushed`, a database was flushed): tells the clients that
    /// may cache them (see the module docs). Runs under the keyspace lock.
    pub(crate) fn invalidate(
        &self,
        keys: &[Bytes],
        flushed: bool,
        deliver: Deliver<'_>,
        lookup: Lookup<'_>,
    ) {
        let mut table = self.table.lock();
        let current = self.current.load(Ordering::Relaxed);
        for key in keys {
            for (prefix, entry) in table.prefixes.iter_mut() {
                if key.starts_with(prefix) {
                    entry.changed.insert(key.clone(), current);
                }
            }
            let Some(ids) = table.keys.remove(key) else {
                continue;
            };
            table.items -= ids.len() as u64;
            for id in ids {
                let Some(target) = table.clients.get(&id) else {
                    continue;
                };
                let mut own = target.tracking.lock();
                if !own.on || own.bcast || (own.noloop && id == current) {
                    continue;
                }
                send(target, &mut own, Payload::Key(key), deliver, lookup);
            }
        }
        if flushed {
            for target in table.clients.values() {
                let mut own = target.tracking.lock();
                if own.on {
                    send(target, &mut own, Payload::All, deliver, lookup);
                }
            }
            table.keys.clear();
            table.items = 0;
        }
        self.broadcast(&mut table, deliver, lookup);
    }

    /// Sends each BCAST prefix's changed keys to its clients (Redis's
    /// `trackingBroadcastInvalidationMessages`).
    fn broadcast(&self, table: &mut Table, deliver: Deliver<'_>, lookup: Lookup<'_>) {
        let Table {
            prefixes, clients, ..
        } = table;
        for entry in prefixes.values_mut() {
            if entry.changed.is_empty() {
                continue;
            }
            let changed = std::mem::take(&mut entry.changed);
            let everything = keys_array(changed.keys());
            for id in &entry.clients {
                let Some(target) = clients.get(id) else {
                    continue;
                };
                let mut own = target.tracking.lock();
                if own.noloop {
                    let others = changed
                        .iter()
                        .filter(|(_, writer)| **writer != *id)
                        .map(|(k, _)| k);
                    let array = keys_array(others);
                    if array != b"*0\r\n" {
                        send(target, &mut own, Payload::Array(&array), deliver, lookup);
                    }
                } else {
                    send(
                        target,
                        &mut own,
                        Payload::Array(&everything),
                        deliver,
                        lookup,
                    );
                }
            }
        }
    }

    /// Invalidates keys at random until the table holds at most `max_keys` keys (Redis's
    /// `trackingLimitUsedSlots`, `tracking-table-max-keys`; 0: no limit). The clients are
    /// told as if the keys changed.
    pub(crate) fn limit_keys(&self, max_keys: u64, deliver: Deliver<'_>, lookup: Lookup<'_>) {
        if max_keys == 0 {
            return;
        }
        let evicted: Vec<Bytes> = {
            let table = self.table.lock();
            let over = (table.keys.len() as u64).saturating_sub(max_keys);
            table.keys.keys().take(over as usize).cloned().collect()
        };
        if evicted.is_empty() {
            return;
        }
        // Not a change: BCAST clients hear nothing (Redis passes bcast=0 here).
        let mut table = self.table.lock();
        for key in evicted {
            let Some(ids) = table.keys.remove(&key) else {
                continue;
            };
            table.items -= ids.len() as u64;
            for id in ids {
                if let Some(target) = table.clients.get(&id) {
                    let mut own = target.tracking.lock();
                    if own.on && !own.bcast {
                        send(target, &mut own, Payload::Key(&key), deliver, lookup);
                    }
                }
            }
        }
    }

    /// Checks the invariants of the module doc.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let table = self.table.lock();
        let items: usize = table.keys.values().map(BTreeSet::len).sum();
        if items as u64 != table.items {
            return Err(format!("{items} items counted as {}", table.items));
        }
        if table.keys.values().any(BTreeSet::is_empty) {
            return Err("a tracked key has no client".into());
        }
        for (prefix, entry) in &table.prefixes {
            if entry.clients.is_empty() {
                return Err("a prefix has no client".into());
            }
            for id in &entry.clients {
                let Some(client) = table.clients.get(id) else {
                    return Err(format!("prefix client {id} is not tracking"));
                };
                let own = client.tracking.lock();
                if !own.on || !own.bcast || !own.prefixes.contains(prefix) {
                    return Err(format!("client {id} does not track its prefix"));
                }
            }
        }
        Ok(())
    }
}

/// `keys` as a RESP array of bulk strings.
fn keys_array<'k>(keys: impl Iterator<Item = &'k Bytes>) -> Vec<u8> {
    let keys: Vec<&Bytes> = keys.collect();
    let mut out = Vec::with_capacity(16 + keys.iter().map(|k| k.len() + 16).sum::<usize>());
    put_len(&mut out, b'*', keys.len());
    for key in keys {
        put_bulk(&mut out, key);
    }
    out
}

fn put_len(out: &mut Vec<u8>, prefix: u8, n: usize) {
    out.push(prefix);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn put_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, b'$', bytes.len());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// Sends one invalidation message on behalf of `client` (Redis's `sendTrackingMessage`): to
/// it, or to its redirect target; a missing target marks the redirect broken and, in RESP3,
/// tells the client so.
fn send(
    client: &ClientInfo,
    own: &mut TrackingOptions,
    payload: Payload<'_>,
    deliver: Deliver<'_>,
    lookup: Lookup<'_>,
) {
    let mut frame = Vec::new();
    // A flush's null is the tracking client's protocol's null, even when redirected.
    let null: &[u8] = if client.is_resp3() {
        b"_\r\n"
    } else {
        b"$-1\r\n"
    };
    let redirected;
    let target: &ClientInfo = if own.redirect != 0 {
        match lookup(own.redirect) {
            Some(target) => {
                redirected = target;
                &redirected
            }
            None => {
                own.broken_redirect = true;
                if client.is_resp3() {
                    frame.extend_from_slice(b">2\r\n");
                    put_bulk(&mut frame, b"tracking-redir-broken");
                    frame.push(b':');
                    frame.extend_from_slice(itoa::Buffer::new().format(own.redirect).as_bytes());
                    frame.extend_from_slice(b"\r\n");
                    deliver(client, &frame);
                }
                return;
            }
        }
    } else {
        client
    };
    if target.is_resp3() {
        frame.extend_from_slice(b">2\r\n");
        put_bulk(&mut frame, b"invalidate");
    } else if own.redirect != 0 && target.pubsub.is_subscribed() {
        frame.extend_from_slice(b"*3\r\n");
        put_bulk(&mut frame, b"message");
        put_bulk(&mut frame, INVALIDATE_CHANNEL);
    } else {
        // RESP2 without a redirect has no way to carry a push.
        return;
    }
    match payload {
        Payload::Key(key) => {
            frame.extend_from_slice(b"*1\r\n");
            put_bulk(&mut frame, key);
        }
        Payload::Array(array) => frame.extend_from_slice(array),
        Payload::All => frame.extend_from_slice(null),
    }
    deliver(target, &frame);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::Protocol;

    fn client(id: u64, protocol: Protocol) -> Arc<ClientInfo> {
        Arc::new(ClientInfo::new(
            id,
            "127.0.0.1:1"
                .parse::<std::net::SocketAddr>()
                .expect("address"),
            None,
            protocol,
        ))
    }

    type Sent = Mutex<Vec<(u64, Vec<u8>)>>;

    fn run(
        tracking: &Tracking,
        keys: &[&str],
        flushed: bool,
        clients: &[Arc<ClientInfo>],
    ) -> Vec<(u64, String)> {
        let sent: Sent = Mutex::default();
        let deliver = |c: &ClientInfo, frame: &[u8]| sent.lock().push((c.id, frame.to_vec()));
        let lookup = |id: u64| clients.iter().find(|c| c.id == id).cloned();
        let keys: Vec<Bytes> = keys
            .iter()
            .map(|k| Bytes::copy_from_slice(k.as_bytes()))
            .collect();
        tracking.invalidate(&keys, flushed, &deliver, &lookup);
        tracking.check_invariants().expect("invariants");
        sent.into_inner()
            .into_iter()
            .map(|(id, f)| (id, String::from_utf8_lossy(&f).into_owned()))
            .collect()
    }

    fn on() -> TrackingOptions {
        TrackingOptions {
            on: true,
            ..TrackingOptions::default()
        }
    }

    #[test]
    fn a_read_key_is_invalidated_once_then_forgotten() {
        let tracking = Tracking::default();
        let c = client(1, Protocol::Resp3);
        tracking.enable(&c, None, on(), &[]);
        tracking.remember(&c, [&b"a"[..], b"b"].into_iter());
        assert_eq!(tracking.totals(), (2, 2, 0));
        let sent = run(&tracking, &["a", "a", "z"], false, std::slice::from_ref(&c));
        assert_eq!(
            sent,
            vec![(
                1,
                ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n".to_string()
            )]
        );
        assert_eq!(tracking.totals(), (1, 1, 0));
    }

    #[test]
    fn a_resp2_client_hears_through_its_redirect_subscriber_and_a_flush_is_null() {
        let tracking = Tracking::default();
        let c = client(1, Protocol::Resp2);
        let target = client(2, Protocol::Resp2);
        target.pubsub.set_counts_for_tests(1);
        let options = TrackingOptions {
            redirect: 2,
            ..on()
        };
        tracking.enable(&c, Some(target.clone()), options, &[]);
        tracking.remember(&c, [&b"k"[..]].into_iter());
        let all = [c.clone(), target.clone()];
        let sent = run(&tracking, &["k"], false, &all);
        assert_eq!(
            sent,
            vec![(
                2,
                "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n"
                    .to_string()
            )]
        );
        let sent = run(&tracking, &[], true, &all);
        assert_eq!(
            sent,
            vec![(
                2,
                "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n".to_string()
            )]
        );
    }

    #[test]
    fn a_missing_redirect_target_breaks_the_redirect() {
        let tracking = Tracking::default();
        let c = client(1, Protocol::Resp3);
        let options = TrackingOptions {
            redirect: 9,
            ..on()
        };
        tracking.enable(&c, None, options, &[]);
        tracking.remember(&c, [&b"k"[..]].into_iter());
        let sent = run(&tracking, &["k"], false, std::slice::from_ref(&c));
        assert_eq!(
            sent,
            vec![(
                1,
                ">2\r\n$21\r\ntracking-redir-broken\r\n:9\r\n".to_string()
            )]
        );
        assert!(c.tracking.lock().broken_redirect);
    }

    #[test]
    fn bcast_sends_the_changed_keys_under_each_prefix_sorted_and_noloop_skips_its_own() {
        let tracking = Tracking::default();
        let a = client(1, Protocol::Resp3);
        let b = client(2, Protocol::Resp3);
        let bcast = TrackingOptions {
            bcast: true,
            ..on()
        };
        tracking.enable(&a, None, bcast.clone(), &[b"user:"]);
        let noloop = TrackingOptions {
            noloop: true,
            ..bcast
        };
        tracking.enable(&b, None, noloop, &[]);
        assert_eq!(tracking.totals(), (0, 0, 2));
        tracking.set_current(2);
        let sent = run(
            &tracking,
            &["user:2", "other", "user:1"],
            false,
            &[a.clone(), b.clone()],
        );
        assert_eq!(
            sent,
            vec![(
                1,
                ">2\r\n$10\r\ninvalidate\r\n*2\r\n$6\r\nuser:1\r\n$6\r\nuser:2\r\n".to_string()
            )]
        );
        tracking.disable(&a);
        tracking.disable(&b);
        assert_eq!(tracking.totals(), (0, 0, 0));
        assert_eq!(tracking.clients_on(), 0);
    }

    #[test]
    fn prefixes_may_not_overlap_in_redis_order() {
        let c = client(1, Protocol::Resp3);
        c.tracking.lock().prefixes.insert(Bytes::from_static(b"ab"));
        assert_eq!(
            Tracking::check_prefixes(&c, &[b"abc"]),
            Err("ERR Prefix 'abc' overlaps with an existing prefix 'ab'. Prefixes for a single client must not overlap.".into())
        );
        assert_eq!(
            Tracking::check_prefixes(&c, &[b"x", b"xy"]),
            Err("ERR Prefix 'x' overlaps with another provided prefix 'xy'. Prefixes for a single client must not overlap.".into())
        );
        assert!(Tracking::check_prefixes(&c, &[b"x", b"y"]).is_ok());
    }
}

//! Keyspace notifications out to pub/sub: the engine hands each execution unit's events to
//! [`KeyspaceEvents`] (under the keyspace lock, so in execution order), which publishes each
//! as Redis 8.8's `notifyKeyspaceEvent` does: with `K`, the event name on
//! `__keyspace@<db>__:<key>`; with `E`, the key on `__keyevent@<db>__:<event>`; keyspace
//! first; then, for an event about a hash's fields, the subkey channels (`S`, `T`, `I`, `V`).
//!
//! Invariants: publishing never waits (each message goes to the subscribers' mailboxes, see
//! [`super::pubsub`]) and takes no lock the keyspace lock may be waited for under: the
//! subscribers' output limit is read from a copy kept beside the settings, not from them.
//! With no subscriber at all nothing is built, as Redis returns early then.

use std::sync::Weak;

use echomq_engine::notify::{
    KEYEVENT, KEYSPACE, SUBKEYEVENT, SUBKEYSPACE, SUBKEYSPACEEVENT, SUBKEYSPACEITEM,
};
use echomq_engine::{Notification, NotificationSink};

use super::ServerState;

/// The engine's notification sink for one server.
#[derive(Debug)]
pub(crate) struct KeyspaceEvents {
    pub(crate) state: Weak<ServerState>,
}

impl NotificationSink for KeyspaceEvents {
    fn notify(&self, flags: u32, events: Vec<Notification>) {
        if let Some(state) = self.state.upgrade() {
            publish(&state, flags, &events);
        }
    }
}

/// Writes `__<kind>@<db>__:<name>` into `out` (emptied first).
fn channel(out: &mut Vec<u8>, kind: &str, db: usize, name: &[u8]) {
    out.clear();
    out.extend_from_slice(b"__");
    out.extend_from_slice(kind.as_bytes());
    out.push(b'@');
    out.extend_from_slice(itoa::Buffer::new().format(db).as_bytes());
    out.extend_from_slice(b"__:");
    out.extend_from_slice(name);
}

fn publish(state: &ServerState, flags: u32, events: &[Notification]) {
    if state.pubsub().is_empty() {
        return;
    }
    // One buffer for every channel name: room for the longest key, the event names are short.
    let longest = events.iter().map(|e| e.key.len()).max().unwrap_or(0);
    let mut name = Vec::with_capacity(longest.max(32) + 32);
    for event in events {
        if flags & KEYSPACE != 0 {
            channel(&mut name, "keyspace", event.db, &event.key);
            state.publish_event(&name, event.event.as_bytes());
        }
        if flags & KEYEVENT != 0 {
            channel(&mut name, "keyevent", event.db, event.event.as_bytes());
            state.publish_event(&name, &event.key);
        }
        if !event.subkeys.is_empty() {
            publish_subkeys(state, flags, event, &mut name);
        }
    }
}

/// `<len>:<subkey>[,<len>:<subkey>...]`, Redis's `catSubkeysPayload`, appended to `out`.
fn subkeys_payload(out: &mut Vec<u8>, subkeys: &[bytes::Bytes]) {
    for (i, subkey) in subkeys.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(itoa::Buffer::new().format(subkey.len()).as_bytes());
        out.push(b':');
        out.extend_from_slice(subkey);
    }
}

/// The subkey channels of an event about a hash's fields, as Redis 8.8's
/// `notifyKeyspaceEventImpl`: `S` on `__subkeyspace@<db>__:<key>` (`<event>|<subkeys>`), `T`
/// on `__subkeyevent@<db>__:<event>` (`<keylen>:<key>|<subkeys>`), `I` per field on
/// `__subkeyspaceitem@<db>__:<key>\n<field>` (the event; not for a key holding a newline),
/// `V` on `__subkeyspaceevent@<db>__:<event>|<key>` (`<subkeys>`).
fn publish_subkeys(state: &ServerState, flags: u32, event: &Notification, name: &mut Vec<u8>) {
    let ev = event.event.as_bytes();
    let mut payload = Vec::new();
    if flags & SUBKEYSPACE != 0 && !ev.contains(&b'|') {
        channel(name, "subkeyspace", event.db, &event.key);
        payload.clear();
        payload.extend_from_slice(ev);
        payload.push(b'|');
        subkeys_payload(&mut payload, &event.subkeys);
        state.publish_event(name, &payload);
    }
    if flags & SUBKEYEVENT != 0 {
        channel(name, "subkeyevent", event.db, ev);
        payload.clear();
        payload.extend_from_slice(itoa::Buffer::new().format(event.key.len()).as_bytes());
        payload.push(b':');
        payload.extend_from_slice(&event.key);
        payload.push(b'|');
        subkeys_payload(&mut payload, &event.subkeys);
        state.publish_event(name, &payload);
    }
    if flags & SUBKEYSPACEITEM != 0 && !event.key.contains(&b'\n') {
        for subkey in &event.subkeys {
            channel(name, "subkeyspaceitem", event.db, &event.key);
            name.push(b'\n');
            name.extend_from_slice(subkey);
            state.publish_event(name, ev);
        }
    }
    if flags & SUBKEYSPACEEVENT != 0 && !ev.contains(&b'|') {
        channel(name, "subkeyspaceevent", event.db, ev);
        name.push(b'|');
        name.extend_from_slice(&event.key);
        payload.clear();
        subkeys_payload(&mut payload, &event.subkeys);
        state.publish_event(name, &payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subkey_payloads_are_length_prefixed_as_redis_writes_them() {
        let mut out = b"hset|".to_vec();
        subkeys_payload(
            &mut out,
            &[
                bytes::Bytes::from_static(b"abc"),
                bytes::Bytes::from_static(b""),
            ],
        );
        assert_eq!(&out[..], b"hset|3:abc,0:");
    }

    #[test]
    fn channels_are_named_as_redis_names_them() {
        let mut name = Vec::new();
        channel(&mut name, "keyspace", 0, b"k");
        assert_eq!(&name[..], b"__keyspace@0__:k");
        channel(&mut name, "keyevent", 12, b"xadd");
        assert_eq!(&name[..], b"__keyevent@12__:xadd");
    }
}

//! Keyspace notifications out to pub/sub: the engine hands each execution unit's events to
//! [`KeyspaceEvents`] (under the keyspace lock, so in execution order), which publishes each
//! as Redis 8.8's `notifyKeyspaceEvent` does: with `K`, the event name on
//! `__keyspace@<db>__:<key>`; with `E`, the key on `__keyevent@<db>__:<event>`; keyspace
//! first.
//!
//! Invariants: publishing never waits (each message goes to the subscribers' mailboxes, see
//! [`super::pubsub`]) and takes no lock the keyspace lock may be waited for under: the
//! subscribers' output limit is read from a copy kept beside the settings, not from them.
//! With no subscriber at all nothing is built, as Redis returns early then.

use std::sync::Weak;

use echomq_engine::notify::{KEYEVENT, KEYSPACE};
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_named_as_redis_names_them() {
        let mut name = Vec::new();
        channel(&mut name, "keyspace", 0, b"k");
        assert_eq!(&name[..], b"__keyspace@0__:k");
        channel(&mut name, "keyevent", 12, b"xadd");
        assert_eq!(&name[..], b"__keyevent@12__:xadd");
    }
}

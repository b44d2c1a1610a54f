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

use bytes::{BufMut, BytesMut};
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

/// `__<kind>@<db>__:<name>`.
fn channel(kind: &str, db: usize, name: &[u8]) -> BytesMut {
    let mut out = BytesMut::with_capacity(kind.len() + name.len() + 8);
    out.put_slice(b"__");
    out.put_slice(kind.as_bytes());
    out.put_slice(format!("@{db}__:").as_bytes());
    out.put_slice(name);
    out
}

fn publish(state: &ServerState, flags: u32, events: &[Notification]) {
    if state.pubsub().is_empty() {
        return;
    }
    for event in events {
        if flags & KEYSPACE != 0 {
            let name = channel("keyspace", event.db, &event.key);
            state.publish_event(&name, event.event.as_bytes());
        }
        if flags & KEYEVENT != 0 {
            let name = channel("keyevent", event.db, event.event.as_bytes());
            state.publish_event(&name, &event.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_named_as_redis_names_them() {
        assert_eq!(&channel("keyspace", 0, b"k")[..], b"__keyspace@0__:k");
        assert_eq!(
            &channel("keyevent", 12, b"xadd")[..],
            b"__keyevent@12__:xadd"
        );
    }
}

//! Keyspace notifications: the events a command fires, as Redis 8.8's `notifyKeyspaceEvent`
//! calls do, and the `notify-keyspace-events` classes that select them.
//!
//! A command (or the keyspace itself: new keys, lazy and active expiry) reports each change
//! with [`Db::notify`]: a class, Redis's event name and the key. The events collect in the
//! [`Db`] in firing order, each with a sequence number shared by every database of the
//! keyspace, so a unit that spans databases (MOVE, COPY … DB, MULTI/EXEC) hands them over in
//! the order they fired. The [`Keyspace`] hands each execution unit's events to the
//! [`NotificationSink`] while still holding the lock, so the sink sees them in execution order
//! across clients; the sink must not block there (the server's publishes into mailboxes).
//!
//! Invariants:
//! - Nothing is recorded unless the class is enabled and a channel class is (Redis publishes
//!   nothing then), so a server without notifications pays one integer test per event.
//! - [`parse`] accepts exactly Redis 8.8's letters and [`render`] writes them back in Redis's
//!   order (`A` for all of `NOTIFY_ALL`), so CONFIG GET shows what Redis shows.
//!
//! The subkey classes (`S`, `T`, `I`, `V`): the hash commands fire their events with the
//! fields they concern ([`Db::notify_subkeys`], Redis's `notifyKeyspaceEventWithSubkeys`),
//! which the sink also publishes on the subkey channels; an event is recorded when its class
//! and any of `K`, `E`, `S`, `T`, `I`, `V` are enabled.
//!
//! [`Db::notify_subkeys`]: crate::Db::notify_subkeys
//!
//! [`Keyspace`]: crate::Keyspace
//! [`Db`]: crate::Db
//! [`Db::notify`]: crate::Db::notify

use std::fmt;

use bytes::Bytes;

/// `K`: `__keyspace@<db>__:<key>` channels.
pub const KEYSPACE: u32 = 1 << 0;
/// `E`: `__keyevent@<db>__:<event>` channels.
pub const KEYEVENT: u32 = 1 << 1;
/// `g`: generic commands (DEL, EXPIRE, RENAME, …).
pub const GENERIC: u32 = 1 << 2;
/// `$`: string commands.
pub const STRING: u32 = 1 << 3;
/// `l`: list commands.
pub const LIST: u32 = 1 << 4;
/// `s`: set commands.
pub const SET: u32 = 1 << 5;
/// `h`: hash commands.
pub const HASH: u32 = 1 << 6;
/// `z`: sorted set commands.
pub const ZSET: u32 = 1 << 7;
/// `x`: expired keys.
pub const EXPIRED: u32 = 1 << 8;
/// `e`: evicted keys.
pub const EVICTED: u32 = 1 << 9;
/// `t`: stream commands.
pub const STREAM: u32 = 1 << 10;
/// `m`: key misses of read lookups (not in `A`).
pub const KEY_MISS: u32 = 1 << 11;
/// `d`: module key types.
pub const MODULE: u32 = 1 << 13;
/// `n`: new keys (not in `A`).
pub const NEW: u32 = 1 << 14;
/// `o`: overwritten keys (not in `A`).
pub const OVERWRITTEN: u32 = 1 << 15;
/// `c`: keys whose type changed (not in `A`).
pub const TYPE_CHANGED: u32 = 1 << 16;
/// `S`: subkey keyspace channels.
pub const SUBKEYSPACE: u32 = 1 << 19;
/// `T`: subkey keyevent channels.
pub const SUBKEYEVENT: u32 = 1 << 20;
/// `I`: per-subkey item channels.
pub const SUBKEYSPACEITEM: u32 = 1 << 21;
/// `V`: subkey event-and-key channels.
pub const SUBKEYSPACEEVENT: u32 = 1 << 22;
/// Every channel class: an event is recorded only if one of them is enabled.
pub const CHANNELS: u32 =
    KEYSPACE | KEYEVENT | SUBKEYSPACE | SUBKEYEVENT | SUBKEYSPACEITEM | SUBKEYSPACEEVENT;
/// `a`: array commands.
pub const ARRAY: u32 = 1 << 23;
/// `A`: every type class (Redis's `NOTIFY_ALL`).
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE | ARRAY;

/// Redis 8.8's error for a letter it does not know (CONFIG SET's text after the argument).
pub const INVALID_CLASS: &str = "Invalid event class character. Use 'Ag$lshzxeKEtmdnocaSTIV'.";

/// The flags of a `notify-keyspace-events` value, or `None` for a letter Redis refuses.
pub fn parse(classes: &str) -> Option<u32> {
    classes.bytes().try_fold(0u32, |flags, c| {
        let class = match c {
            b'A' => ALL,
            b'g' => GENERIC,
            b'$' => STRING,
            b'l' => LIST,
            b's' => SET,
            b'h' => HASH,
            b'z' => ZSET,
            b'x' => EXPIRED,
            b'e' => EVICTED,
            b'K' => KEYSPACE,
            b'E' => KEYEVENT,
            b't' => STREAM,
            b'm' => KEY_MISS,
            b'd' => MODULE,
            b'a' => ARRAY,
            b'n' => NEW,
            b'o' => OVERWRITTEN,
            b'c' => TYPE_CHANGED,
            b'S' => SUBKEYSPACE,
            b'T' => SUBKEYEVENT,
            b'I' => SUBKEYSPACEITEM,
            b'V' => SUBKEYSPACEEVENT,
            _ => return None,
        };
        Some(flags | class)
    })
}

/// The value CONFIG GET shows for `flags`, in Redis's letter order.
pub fn render(flags: u32) -> String {
    const TYPES: [(u32, char); 14] = [
        (GENERIC, 'g'),
        (STRING, '$'),
        (LIST, 'l'),
        (SET, 's'),
        (HASH, 'h'),
        (ZSET, 'z'),
        (EXPIRED, 'x'),
        (EVICTED, 'e'),
        (STREAM, 't'),
        (MODULE, 'd'),
        (ARRAY, 'a'),
        (NEW, 'n'),
        (OVERWRITTEN, 'o'),
        (TYPE_CHANGED, 'c'),
    ];
    const CHANNELS: [(u32, char); 7] = [
        (KEYSPACE, 'K'),
        (KEYEVENT, 'E'),
        (KEY_MISS, 'm'),
        (SUBKEYSPACE, 'S'),
        (SUBKEYEVENT, 'T'),
        (SUBKEYSPACEITEM, 'I'),
        (SUBKEYSPACEEVENT, 'V'),
    ];
    let mut out = String::new();
    if flags & ALL == ALL {
        // Redis shows `A` alone then: `n`, `o` and `c` are not shown even when set.
        out.push('A');
    } else {
        out.extend(
            TYPES
                .iter()
                .filter(|(bit, _)| flags & bit != 0)
                .map(|&(_, c)| c),
        );
    }
    out.extend(
        CHANNELS
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|&(_, c)| c),
    );
    out
}

/// One event: Redis's event name and the key it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The database the key is in.
    pub db: usize,
    /// The event name (`xadd`, `expired`, `rename_from`, …).
    pub event: &'static str,
    /// The key.
    pub key: Bytes,
    /// The subkeys the event is about (a hash's fields), for the subkey channels (`S`, `T`,
    /// `I`, `V`); empty for a key-level event.
    pub subkeys: Vec<Bytes>,
}

/// Receives the events of each execution unit, under the keyspace lock.
pub trait NotificationSink: Send + Sync + fmt::Debug {
    /// One unit's events in firing order; `flags` are the classes in force (for `K`/`E`).
    fn notify(&self, flags: u32, events: Vec<Notification>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_parse_and_render_as_redis_does() {
        assert_eq!(parse(""), Some(0));
        assert_eq!(parse("KEA").map(render).as_deref(), Some("AKE"));
        assert_eq!(parse("Ex$").map(render).as_deref(), Some("$xE"));
        assert_eq!(parse("AKEmnoc").map(render).as_deref(), Some("AKEm"));
        assert_eq!(parse("gnoc").map(render).as_deref(), Some("gnoc"));
        assert_eq!(parse("tSTIV").map(render).as_deref(), Some("tSTIV"));
        assert_eq!(parse("KEr"), None);
        assert_eq!(parse("KEQ"), None);
    }
}

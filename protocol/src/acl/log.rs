//! ACL LOG: the most recent refusals, newest first, at most `acllog-max-len` (none kept at
//! 0). A refusal like one of the ten newest entries (same reason,
//! context, object and user, within a minute) updates that entry and moves it to the front
//! instead of adding one.

use std::collections::VecDeque;

use bytes::Bytes;
use echomq_engine::Reply;

use super::Reason;

/// How far apart two refusals may be and still share an entry, in milliseconds.
const GROUPING_MS: u64 = 60_000;

/// Where a refusal happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Context {
    Toplevel,
    Multi,
}

/// One entry.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub count: u64,
    pub reason: Reason,
    pub context: Context,
    pub object: Bytes,
    pub username: Bytes,
    pub client_info: String,
    pub entry_id: u64,
    pub created_ms: u64,
    pub updated_ms: u64,
}

/// The log.
#[derive(Debug, Default)]
pub(crate) struct Log {
    entries: VecDeque<Entry>,
    next_id: u64,
}

impl Log {
    /// Records a refusal at `now_ms`, keeping `max_len` entries at most.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        max_len: usize,
        reason: Reason,
        context: Context,
        object: &[u8],
        username: &[u8],
        client_info: String,
        now_ms: u64,
    ) {
        if max_len == 0 {
            self.entries.clear();
            return;
        }
        let similar = self.entries.iter().take(10).position(|e| {
            e.reason == reason
                && e.context == context
                && e.updated_ms.abs_diff(now_ms) <= GROUPING_MS
                && e.object[..] == *object
                && e.username[..] == *username
        });
        if let Some(at) = similar
            && let Some(mut entry) = self.entries.remove(at)
        {
            entry.count += 1;
            entry.client_info = client_info;
            entry.updated_ms = now_ms;
            self.entries.push_front(entry);
            return;
        }
        self.entries.push_front(Entry {
            count: 1,
            reason,
            context,
            object: Bytes::copy_from_slice(object),
            username: Bytes::copy_from_slice(username),
            client_info,
            entry_id: self.next_id,
            created_ms: now_ms,
            updated_ms: now_ms,
        });
        self.next_id += 1;
        self.entries.truncate(max_len);
    }

    /// Empties the log (ACL LOG RESET); entry ids go on counting.
    pub fn reset(&mut self) {
        self.entries.clear();
    }

    /// ACL LOG's reply for the `count` newest entries.
    pub fn reply(&self, count: usize, now_ms: u64) -> Reply {
        Reply::Array(
            self.entries
                .iter()
                .take(count)
                .map(|e| {
                    let reason = match e.reason {
                        Reason::Auth => "auth",
                        Reason::Command => "command",
                        Reason::Key => "key",
                        Reason::Channel => "channel",
                    };
                    let context = match e.context {
                        Context::Toplevel => "toplevel",
                        Context::Multi => "multi",
                    };
                    let age = now_ms.saturating_sub(e.updated_ms) as f64 / 1000.0;
                    Reply::Map(vec![
                        (Reply::bulk_static("count"), Reply::Int(e.count as i64)),
                        (Reply::bulk_static("reason"), Reply::bulk_static(reason)),
                        (Reply::bulk_static("context"), Reply::bulk_static(context)),
                        (Reply::bulk_static("object"), Reply::Bulk(e.object.clone())),
                        (
                            Reply::bulk_static("username"),
                            Reply::Bulk(e.username.clone()),
                        ),
                        (
                            Reply::bulk_static("age-seconds"),
                            Reply::Double(Bytes::from(format_double(age))),
                        ),
                        (
                            Reply::bulk_static("client-info"),
                            Reply::bulk(e.client_info.as_bytes()),
                        ),
                        (
                            Reply::bulk_static("entry-id"),
                            Reply::Int(e.entry_id as i64),
                        ),
                        (
                            Reply::bulk_static("timestamp-created"),
                            Reply::Int(e.created_ms as i64),
                        ),
                        (
                            Reply::bulk_static("timestamp-last-updated"),
                            Reply::Int(e.updated_ms as i64),
                        ),
                    ])
                })
                .collect(),
        )
    }
}

/// A double as Redis's `addReplyDouble` writes it (`%.17g`).
fn format_double(value: f64) -> String {
    if value == value.trunc() && value.abs() < 1e17 {
        return format!("{}", value as i64);
    }
    let text = format!("{value}");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(log: &mut Log, max_len: usize, reason: Reason, object: &[u8], now_ms: u64) {
        log.add(
            max_len,
            reason,
            Context::Toplevel,
            object,
            b"u",
            "c".into(),
            now_ms,
        );
    }

    #[test]
    fn similar_refusals_share_an_entry_and_the_log_is_bounded() {
        let mut log = Log::default();
        add(&mut log, 128, Reason::Command, b"get", 1000);
        add(&mut log, 128, Reason::Command, b"get", 2000);
        assert_eq!(log.entries.len(), 1);
        assert_eq!(log.entries[0].count, 2);
        for i in 0..200u64 {
            add(&mut log, 128, Reason::Key, &i.to_be_bytes(), 3000);
        }
        assert_eq!(log.entries.len(), 128);
        assert_eq!(log.entries[0].entry_id, 200);
        add(&mut log, 0, Reason::Auth, b"AUTH", 4000);
        assert!(log.entries.is_empty());
    }
}

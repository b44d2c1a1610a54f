//! Every known difference between the servers we compare with and the behaviour we target
//! (`docs/reference/streams.md`: current Redis, 7.4 / 8.0), in one place. The peers are
//! Debian's Redis 7.0.15 and Valkey 8.1 (a fork of Redis 7.2.4 that reports `redis_version`
//! 7.2.4).
//!
//! Cases that meet a difference are kept and skipped only on the servers it applies to, with
//! one of the reasons below (a few apply to both peers: those cases document the target and
//! wait for a newer peer). Random sequences steer around the differences instead, each site
//! naming the constant; for lag, which no steering can avoid once entries are deleted, see
//! [`LAG_FIXES_8_0`].
//!
//! | what | Redis 7.0.15 | Valkey 8.1 | constant |
//! |---|---|---|---|
//! | XSETID below max_deleted_entry_id | accepted | error, as §6.1 | [`XSETID_MAX_DELETED_CHECK`] |
//! | lowering stream-node-max-bytes under a node | server crash | fine | [`REDIS_7_0_SHRINK_CRASH`] |
//! | `<ms>-*` on an exhausted seq | wrong error text | as §3 | [`SEQ_AUTO_EXHAUSTED`] |
//! | XINFO CONSUMERS `inactive`, FULL `active-time` | absent | as §4.8 | [`CONSUMER_ACTIVE_TIME`] |
//! | XREADGROUP creates its consumer when nothing is served | no | as §4.2 | [`READ_CREATES_CONSUMER`] |
//! | XCLAIM/XAUTOCLAIM create the consumer | only when claiming | as §4.5/§4.6 | [`CLAIM_CREATES_CONSUMER`] |
//! | XREADGROUP `+` error text, `Unbalanced 'xreadgroup'` text | older texts | as §4.2 | [`XREADGROUP_ERROR_TEXTS`] |
//! | XREAD `+` (8.8: the last live entry; nothing at 0-0) | absent | 7.4's rule | [`XREAD_PLUS_8_8`] |
//! | `Unbalanced 'xread' ... ID, '+', or '$'` text | older text | older text | [`XREAD_UNBALANCED_TEXT`] |
//! | the 8.0 lag and entries-read rules (§4.7) | older rules | older rules | [`LAG_FIXES_8_0`] |
//! | HELP's last line | `Prints this help.` | as 8.8 | [`HELP_LAST_LINE`] |
//! | MULTI inside MULTI | `MULTI calls can not be nested` | `Command not allowed inside a transaction` | [`MULTI_NESTED`] |
//! | ENTRIESREAD above entries-added is capped (8.2.2) | not capped | not capped | [`ENTRIES_READ_CAP`] |
//!
//! Redis 8.8 is the target: every group case runs against it too (`group_cases_match_redis8`),
//! skipped only where a reason above names it. Checked against 8.8 in particular: HELP's last
//! line, XREAD `+` after the last entry is deleted and on an empty stream, and entries-read
//! after a trim past the group's cursor, where echomq followed 7.4 and now follows 8.8.
//!
//! Engine bugs these tests found are listed at the end ([`ENGINE_BUG_ERROR_TEXT_CRLF`]): their
//! cases run only in the ignored `*_engine_bugs_*` tests until the engine is fixed. So is a
//! difference the collections fuzzer steers around ([`ENGINE_HASH_DUMP_NEXT_EXPIRY`]).
//!
//! Not differences but limits of a differential test, also kept out of the comparison:
//! time fields (see `support::normalize`), HELLO's own reply (see `support::wire`), and
//! allocation failures (`XAUTOCLAIM ... COUNT` near `LONG_MAX/16` makes both peers fail to
//! allocate, "ERR Insufficient memory, failed allocating transient memory, COUNT too high.",
//! where the engine allocates lazily and succeeds).

use crate::support::peer::{PeerInfo, PeerKind};

/// Redis before 7.2 (7.0.15 here); never Valkey.
pub fn redis_before_7_2(peer: &PeerInfo) -> bool {
    peer.is_redis_before(7, 2)
}

/// Every peer we have: Redis 7.0 and Valkey 8.1 both predate the 8.0 lag rules.
pub fn lacks_lag_fixes(peer: &PeerInfo) -> bool {
    peer.kind == PeerKind::Valkey || peer.is_redis_before(8, 0)
}

/// Every peer we have: neither has the 7.4 unbalanced-XREAD text.
pub fn lacks_xread_unbalanced_text(peer: &PeerInfo) -> bool {
    peer.kind == PeerKind::Valkey || peer.is_redis_before(7, 4)
}

/// Valkey 8.1 and Redis before 8 (7.0 here, which has no `+` at all): 7.4's XREAD `+`.
pub fn lacks_xread_plus_8_8(peer: &PeerInfo) -> bool {
    peer.kind == PeerKind::Valkey || peer.is_redis_before(8, 0)
}

/// Every peer but Redis 8.2+: neither Redis 7.0 nor Valkey 8.1 caps ENTRIESREAD.
pub fn lacks_entries_read_cap(peer: &PeerInfo) -> bool {
    peer.kind == PeerKind::Valkey || peer.is_redis_before(8, 2)
}

/// Valkey.
pub fn is_valkey(peer: &PeerInfo) -> bool {
    peer.kind == PeerKind::Valkey
}

/// Redis 7.0 lacks XSETID's check against the current max_deleted_entry_id.
pub const XSETID_MAX_DELETED_CHECK: &str = "docs/reference/streams.md §6.1: XSETID below the \
     current max_deleted_entry_id is an error (checked before the top item); Redis 7.0.15 has no \
     such check and accepts it (Valkey 8.1, from Redis 7.2.4, agrees with §6.1)";

/// A Redis 7.0 crash, not a behaviour to match.
pub const REDIS_7_0_SHRINK_CRASH: &str = "Redis 7.0.15 bug, not in the reference: after \
     `CONFIG SET stream-node-max-bytes` is lowered (300 -> 50) under a node created with the \
     higher limit, an XADD that starts a new node corrupts the old one and the next XRANGE \
     aborts the server (listpack.c:576 'p' is not true). Valkey 8.1 is fine";

/// Redis 7.0's error for `<ms>-*` when the seq is exhausted.
pub const SEQ_AUTO_EXHAUSTED: &str = "docs/reference/streams.md §3: `<ms>-*` on an exhausted seq \
     is 'equal or smaller than the target stream top item'; Redis 7.0.15 replies 'Elements are \
     too large to be stored' (fixed later: Valkey 8.1, from Redis 7.2.4, agrees with §3)";

/// Redis 7.0 has no consumer active time.
pub const CONSUMER_ACTIVE_TIME: &str = "docs/reference/streams.md §4.8 and §8 (7.2): XINFO \
     CONSUMERS gains `inactive` (and `idle` becomes the time since seen), XINFO STREAM FULL gains \
     a consumer's `active-time`; Redis 7.0.15 has neither (Valkey 8.1 has both)";

/// Redis 7.0 creates the consumer of XREADGROUP only for a stream it serves.
pub const READ_CREATES_CONSUMER: &str = "docs/reference/streams.md §4.2 and §8 (7.2): XREADGROUP \
     creates its consumer in every group it names, even when nothing is served; Redis 7.0.15 \
     creates it only where it serves entries (Valkey 8.1 agrees with the reference)";

/// Redis 7.0 creates the consumer of XCLAIM/XAUTOCLAIM only when something is claimed.
pub const CLAIM_CREATES_CONSUMER: &str = "docs/reference/streams.md §4.5, §4.6 and §8 (7.2): \
     XCLAIM and XAUTOCLAIM create the consumer even when nothing is claimed; Redis 7.0.15 creates \
     it only on a claim (Valkey 8.1 agrees with the reference)";

/// Redis 7.0's XREADGROUP errors.
pub const XREADGROUP_ERROR_TEXTS: &str = "docs/reference/streams.md §4.2 and §8 (7.2): `+` as an \
     XREADGROUP id gets the '$ ID is meaningless' text with `+`, and an unbalanced list reads \
     `Unbalanced 'xreadgroup' list of streams`; Redis 7.0.15 rejects `+` as an invalid id and \
     names XREAD in the unbalanced text (Valkey 8.1 agrees with the reference)";

/// Redis 8.8's XREAD `+`.
pub const XREAD_PLUS_8_8: &str = "docs/reference/streams-8.md (Redis 8.8's `xreadCommand`): XREAD \
     `+` reads the last live entry (the stream's last id may be deleted), and on an existing \
     empty stream reads nothing, as on a missing key; 7.4's rule, which Valkey 8.1 keeps, steps \
     back from the last id even when that entry is deleted (serving nothing) and answers an empty \
     stream at 0-0 with `ERR the stream last element ID is 0-0`. Redis 7.0.15 has no `+`";

/// Neither peer has the 7.4 text.
pub const XREAD_UNBALANCED_TEXT: &str = "docs/reference/streams.md §5.1 and §8 (7.4): `Unbalanced \
     'xread' list of streams: for each stream key an ID, '+', or '$' must be specified.`; Redis \
     7.0.15 and Valkey 8.1 (which has `+` itself) still say `an ID or '$' must be specified.`";

/// Neither peer has the 8.0 lag rules.
pub const LAG_FIXES_8_0: &str = "docs/reference/streams.md §4.7 and §8 (8.0-m01, #13338 and \
     #13473): lag is 0 on an empty stream and the length when both the group's cursor and \
     max-deleted-entry-id lie before the first entry (whatever ENTRIESREAD said); the estimate is \
     invalid below max-deleted-entry-id; a delivery counts one more read only if no tombstone \
     lies after the group's previous cursor (not the delivered id) and that cursor is not before \
     the first entry. Redis 7.0.15 and Valkey 8.1 predate all four. Random sequences therefore \
     compare entries-read and lag on these peers only for keys that never saw a deletion, \
     trimming, ENTRIESREAD or XSETID ENTRIESADDED/MAXDELETEDID (`Differ::mask_lag_after`)";

/// Redis 8.2.2's ENTRIESREAD cap.
pub const ENTRIES_READ_CAP: &str = "docs/reference/streams-8.md §5 (8.4, backported to 8.2.2): \
     XGROUP CREATE and SETID cap an ENTRIESREAD above the stream's entries-added to \
     entries-added, as echomq does; Redis 7.0.15 and Valkey 8.1 keep the value given, so \
     entries-read runs ahead of the stream. Random sequences on these peers never give more than \
     entries-added; the hand cases run on Redis 8.8 (`group_cases_match_redis8`)";

/// Redis 7.0's help text.
pub const HELP_LAST_LINE: &str = "HELP is Redis's text: the last line of XGROUP HELP and \
     XINFO HELP reads `    Print this help.` on Redis 8.8 (and Valkey 8.1), as echomq's does; \
     Redis 7.0.15 reads `    Prints this help.`";

/// Valkey's error for a nested MULTI.
pub const MULTI_NESTED: &str = "Redis (7.0 and current) answers MULTI inside MULTI with `ERR \
     MULTI calls can not be nested`, as echomq does; Valkey 8.1 flags MULTI no-multi and answers \
     `ERR Command not allowed inside a transaction`";

/// Engine bug: errors echo CR and LF from client bytes.
pub const ENGINE_BUG_ERROR_TEXT_CRLF: &str = "the text of an engine error that echoes a key, \
     group, subcommand or option (NOGROUP, 'unknown subcommand', 'Unrecognized XCLAIM option') \
     keeps CR and LF from the client, where Redis's text has a space for each \
     (addReplyErrorFormat). `echomq serve` maps them when encoding, so the wire is right (the \
     wire case 'errors that echo CR and LF stay one line' passes); `Keyspace::execute` callers \
     see another text than Redis's";

/// echomq's DUMP of a listpackex hash heads it with the exact earliest field expiry.
pub const ENGINE_HASH_DUMP_NEXT_EXPIRY: &str = "a listpackex hash's DUMP payload (and a \
     table's with field TTLs) starts with the hash's next field expiry: Redis 8.8 writes the time \
     it registered for the hash in its field-expiry index (`hashTypeGetMinExpire(o, 0)`), which \
     it updates lazily (not when HDEL, HPERSIST or HGETDEL remove the earliest TTL while others \
     remain, nor for a change under HASH_NEW_EXPIRE_DIFF_THRESHOLD), where echomq writes the \
     exact earliest TTL. The payloads restore to the same hash; the collections fuzzer compares \
     the rest of the payload";

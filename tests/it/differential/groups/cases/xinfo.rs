//! `docs/reference/streams.md` §4.7 and §4.8: XINFO STREAM [FULL], GROUPS and CONSUMERS, and
//! entries-read and lag across deliveries, XDEL, XTRIM, SETID and XSETID.
//!
//! Every step of every case is also followed by the harness's group state check (XINFO GROUPS,
//! XPENDING, XINFO CONSUMERS), so the lag cases below compare lag after each command.

use crate::differential::case::Case;
use crate::differential::known_differences::{
    CONSUMER_ACTIVE_TIME, ENTRIES_READ_CAP, HELP_LAST_LINE, LAG_FIXES_8_0, lacks_entries_read_cap,
    lacks_lag_fixes, redis_before_7_2,
};

pub fn all() -> Vec<Case> {
    let mut cases = errors_and_shapes();
    cases.extend(lag());
    cases
}

fn errors_and_shapes() -> Vec<Case> {
    vec![
        Case::new("XINFO HELP")
            .cmd("XINFO HELP")
            .cmd("XINFO help")
            .skip_if(redis_before_7_2, HELP_LAST_LINE),
        Case::new("XINFO arity and unknown subcommands")
            .cmd("XINFO")
            .cmd("XINFO HELP extra")
            .cmd("XINFO FOO")
            .cmd("XINFO foo s")
            .cmd("XINFO STREAM")
            .cmd("XINFO GROUPS")
            .cmd("XINFO GROUPS s x")
            .cmd("XINFO CONSUMERS s")
            .cmd("XINFO CONSUMERS s g x"),
        Case::new("XINFO on a missing key or group")
            .cmd("XINFO STREAM nokey")
            .cmd("XINFO STREAM nokey FULL")
            .cmd("XINFO STREAM nokey FOO")
            .cmd("XINFO GROUPS nokey")
            .cmd("XINFO CONSUMERS nokey g")
            .cmd("XADD s 1-0 f v")
            .cmd("XINFO CONSUMERS s nog")
            .cmd("XINFO GROUPS s"),
        Case::new("XINFO STREAM options")
            .fill("s", 1, 12)
            .cmd("XINFO STREAM s FOO")
            .cmd("xinfo stream s foo")
            .cmd("XINFO STREAM s FULL COUNT")
            .cmd("XINFO STREAM s FULL COUNT x")
            .cmd("XINFO STREAM s FULL FOO 1")
            .cmd("XINFO STREAM s FULL COUNT 1 COUNT 2")
            .cmd("XINFO STREAM s COUNT 1")
            .cmd("XINFO STREAM s FULL")
            .cmd("XINFO STREAM s FULL COUNT 0")
            .cmd("XINFO STREAM s FULL COUNT -1")
            .cmd("XINFO STREAM s FULL COUNT 2")
            .cmd("xinfo stream s full count 3"),
        Case::new("XINFO STREAM of an empty stream and after deletions")
            .cmd("XGROUP CREATE s g $ MKSTREAM")
            .cmd("XINFO STREAM s")
            .cmd("XINFO STREAM s FULL")
            .fill("s", 1, 3)
            .cmd("XDEL s 1-0 3-0")
            .cmd("XINFO STREAM s")
            .cmd("XDEL s 2-0")
            .cmd("XINFO STREAM s")
            .cmd("XINFO STREAM s FULL"),
        Case::new("XINFO STREAM FULL: groups without consumers")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g1 0")
            .cmd("XGROUP CREATE s g2 $ ENTRIESREAD 3")
            .cmd("XGROUP CREATE s g0 2-0")
            .cmd("XINFO STREAM s FULL")
            .cmd("XINFO GROUPS s"),
        Case::new("XINFO STREAM FULL: groups, PELs and consumers, COUNT limits the PELs")
            .fill("s", 1, 14)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XGROUP CREATE s h $")
            .cmd("XREADGROUP GROUP g c1 COUNT 12 STREAMS s >")
            .cmd("XREADGROUP GROUP g c2 STREAMS s >")
            .cmd("XGROUP CREATECONSUMER s g c3")
            .cmd("XREADGROUP GROUP g c4 NOACK STREAMS s >")
            .cmd("XCLAIM s g c2 0 3-0 RETRYCOUNT 5")
            .cmd("XINFO STREAM s FULL")
            .cmd("XINFO STREAM s FULL COUNT 2")
            .cmd("XINFO STREAM s FULL COUNT 0")
            .cmd("XINFO CONSUMERS s g")
            .cmd("XINFO CONSUMERS s h")
            .skip_if(redis_before_7_2, CONSUMER_ACTIVE_TIME),
        Case::new("XINFO CONSUMERS: inactive stays -1 until a read or claim succeeds")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g $")
            .cmd("XGROUP CREATECONSUMER s g created")
            .cmd("XREADGROUP GROUP g empty STREAMS s >")
            .cmd("XREADGROUP GROUP g history STREAMS s 0")
            .cmd("XGROUP SETID s g 0")
            .cmd("XREADGROUP GROUP g noack NOACK COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g reader COUNT 1 STREAMS s >")
            .cmd("XCLAIM s g claimer 0 2-0 FORCE")
            .cmd("XAUTOCLAIM s g autoclaimer 0 0 COUNT 1")
            .cmd("XINFO CONSUMERS s g")
            .cmd("XINFO STREAM s FULL")
            .skip_if(redis_before_7_2, CONSUMER_ACTIVE_TIME),
    ]
}

/// §4.7's worked cases and the edges of its rules. Each command is followed by the group state
/// check, which compares `entries-read` and `lag`.
fn lag() -> Vec<Case> {
    vec![
        Case::new("lag: created at 0 on five entries, then reading")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c COUNT 3 STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XADD s 6-0 f 6")
            .cmd("XINFO GROUPS s"),
        Case::new("lag: created at $, at an id, past the top, with ENTRIESREAD")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s top $")
            .cmd("XGROUP CREATE s mid 3-0")
            .cmd("XGROUP CREATE s past 9-0")
            .cmd("XGROUP CREATE s first 1-0")
            .cmd("XGROUP CREATE s told 2-0 ENTRIESREAD 2")
            .cmd("XGROUP CREATE s wrong 2-0 ENTRIESREAD 4")
            .cmd("XGROUP CREATE s big 1-0 ENTRIESREAD 99")
            .cmd("XINFO GROUPS s")
            .cmd("XADD s 10-0 f 10")
            .cmd("XREADGROUP GROUP mid c STREAMS s >")
            .cmd("XREADGROUP GROUP past c STREAMS s >")
            .cmd("XREADGROUP GROUP wrong c COUNT 1 STREAMS s >")
            .cmd("XINFO GROUPS s")
            .skip_if(lacks_entries_read_cap, ENTRIES_READ_CAP),
        Case::new("lag: a tombstone before the cursor does not matter")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 3 STREAMS s >")
            .cmd("XDEL s 2-0")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XADD s 6-0 f 6"),
        Case::new("lag: an XDEL in the unread part, read past it")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XDEL s 3-0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XADD s 6-0 f 6")
            .cmd("XREADGROUP GROUP g c STREAMS s >"),
        Case::new("lag: XDEL of the first entry before any read")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XDEL s 1-0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s >"),
        Case::new("lag: XDEL of the last entry, then the group reaches the top")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 4 STREAMS s >")
            .cmd("XDEL s 5-0")
            .cmd("XGROUP SETID s g $")
            .cmd("XADD s 6-0 f 6"),
        Case::new("lag: a tombstone after the cursor")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XDEL s 4-0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s >"),
        Case::new("lag: reading past a tombstone after the cursor")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 1-0 ENTRIESREAD 1")
            .cmd("XDEL s 2-0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .skip_if(lacks_lag_fixes, LAG_FIXES_8_0),
        Case::new("lag: a cursor before the first entry counts the length")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0 ENTRIESREAD 2")
            .cmd("XGROUP CREATE s big 0 ENTRIESREAD 99")
            .cmd("XTRIM s MAXLEN 3")
            .cmd("XGROUP CREATE s h 1-0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .skip_if(lacks_lag_fixes, LAG_FIXES_8_0),
        Case::new("lag: the estimate is invalid below max-deleted-entry-id")
            .fill("s", 1, 5)
            .cmd("XDEL s 1-0 4-0")
            .cmd("XGROUP CREATE s g 2-0")
            .cmd("XGROUP CREATE s h 3-0")
            .cmd("XGROUP CREATE s top $")
            .skip_if(lacks_lag_fixes, LAG_FIXES_8_0),
        Case::new("lag: XTRIM past the cursor")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XTRIM s MAXLEN 2")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XADD s 6-0 f 6")
            .skip_if(lacks_lag_fixes, LAG_FIXES_8_0),
        Case::new("lag: XTRIM of everything, then new entries")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XGROUP CREATE s h $")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s >")
            .cmd("XTRIM s MAXLEN 0")
            .cmd("XADD s 6-0 f 6")
            .cmd("XREADGROUP GROUP h c STREAMS s >")
            .skip_if(lacks_lag_fixes, LAG_FIXES_8_0),
        Case::new("lag: SETID with and without ENTRIESREAD")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s >")
            .cmd("XGROUP SETID s g 3-0")
            .cmd("XGROUP SETID s g 3-0 ENTRIESREAD 3")
            .cmd("XGROUP SETID s g 0 ENTRIESREAD 0")
            .cmd("XGROUP SETID s g $ ENTRIESREAD 5")
            .cmd("XGROUP SETID s g 2-0 ENTRIESREAD 7")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .skip_if(lacks_entries_read_cap, ENTRIES_READ_CAP),
        Case::new("lag: XSETID ENTRIESADDED and MAXDELETEDID")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XSETID s 3-0 ENTRIESADDED 10")
            .cmd("XSETID s 3-0 MAXDELETEDID 2-5")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XSETID s 5-0 ENTRIESADDED 12 MAXDELETEDID 0-0")
            .cmd("XREADGROUP GROUP g c STREAMS s >"),
        Case::new("lag: an emptied stream")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XDEL s 1-0 2-0 3-0")
            .cmd("XGROUP CREATE s h 0")
            .cmd("XGROUP CREATECONSUMER s g c")
            .cmd("XGROUP SETID s g 1-0")
            .cmd("XREADGROUP GROUP g c STREAMS s >"),
    ]
}

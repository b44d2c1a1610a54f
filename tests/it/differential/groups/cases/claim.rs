//! `docs/reference/streams.md` §4.5 and §4.6: XCLAIM and XAUTOCLAIM, with their options and errors,
//! and pending entries whose stream entries are gone (§4.9).
//!
//! min-idle is 0 (everything qualifies on either clock) or an hour (only entries moved back two
//! hours by `IDLE 7200000` or `TIME 1000` qualify), never a value a few milliseconds could
//! cross.

use crate::differential::case::Case;
use crate::differential::known_differences::{CLAIM_CREATES_CONSUMER, redis_before_7_2};

/// `LONG_MAX / 16`, XAUTOCLAIM's largest COUNT: one more is an error. The largest itself is not
/// tried: both peers then fail to allocate (see `known_differences`).
const AUTOCLAIM_COUNT_TOO_BIG: &str = "576460752303423488";

/// `s` with `n` entries, all read by `c1` of group `g`; `c2` and `c3` exist (so that a claim
/// of nothing means the same on Redis 7.0, see `CLAIM_CREATES_CONSUMER`).
fn all_read(name: &'static str, n: u64) -> Case {
    Case::new(name)
        .fill("s", 1, n)
        .cmd("XGROUP CREATE s g 0")
        .cmd("XREADGROUP GROUP g c1 STREAMS s >")
        .cmd("XGROUP CREATECONSUMER s g c2")
        .cmd("XGROUP CREATECONSUMER s g c3")
}

pub fn all() -> Vec<Case> {
    let mut cases = xclaim();
    cases.extend(xautoclaim());
    cases
}

fn xclaim() -> Vec<Case> {
    vec![
        all_read(
            "XCLAIM errors: NOGROUP first, then min-idle, ids, options",
            3,
        )
        .cmd("XCLAIM s g c 0")
        .cmd("XCLAIM nokey g c x 1-0")
        .cmd("XCLAIM s nog c x 1-0")
        .cmd("XCLAIM s g c x 1-0")
        .cmd("XCLAIM s g c 1.5 1-0")
        .cmd("XCLAIM s g c 0 1-0 JUSTID 2-0")
        .cmd("XCLAIM s g c 0 1-0 FOO")
        .cmd("XCLAIM s g c 0 FOO")
        .cmd("XCLAIM s g c 0 1-0 IDLE x")
        .cmd("XCLAIM s g c 0 1-0 TIME x")
        .cmd("XCLAIM s g c 0 1-0 RETRYCOUNT x")
        .cmd("XCLAIM s g c 0 1-0 LASTID x")
        .cmd("XCLAIM s g c 0 1-0 LASTID -")
        .cmd("XCLAIM s g c 0 1-0 IDLE")
        .cmd("XCLAIM s g c 0 1-0 LASTID")
        .cmd("XCLAIM s g c 0 + 1-0")
        .cmd("XPENDING s g - + 10"),
        all_read("XCLAIM moves pending entries, counts +1 unless JUSTID", 5)
            .cmd("XCLAIM s g c2 0 1-0 2-0")
            .cmd("XCLAIM s g c2 0 3-0 JUSTID")
            .cmd("XCLAIM s g c2 0 4-0 RETRYCOUNT 7")
            .cmd("XCLAIM s g c2 0 5-0 RETRYCOUNT -5")
            .cmd("XCLAIM s g c1 -5 1-0")
            .cmd("XCLAIM s g c1 0 1-0 1-0")
            .cmd("XCLAIM s g c1 0 2 3")
            .cmd("xclaim s g c1 0 4-0 justid retrycount 0")
            .cmd("XPENDING s g - + 10"),
        all_read("XCLAIM min-idle: an hour claims only entries moved back", 4)
            .cmd("XCLAIM s g c2 3600000 1-0 2-0")
            .cmd("XCLAIM s g c1 0 2-0 IDLE 7200000 JUSTID")
            .cmd("XCLAIM s g c1 0 3-0 TIME 1000 JUSTID")
            .cmd("XCLAIM s g c1 0 4-0 TIME 99999999999999 JUSTID")
            .cmd("XCLAIM s g c1 0 1-0 IDLE -5 JUSTID")
            .cmd("XPENDING s g IDLE 3600000 - + 10")
            .cmd("XCLAIM s g c2 3600000 1-0 2-0 3-0 4-0")
            .cmd("XPENDING s g - + 10"),
        all_read("XCLAIM FORCE creates pending entries for live ids only", 5)
            .cmd("XACK s g 1-0 2-0")
            .cmd("XCLAIM s g c2 0 1-0")
            .cmd("XCLAIM s g c2 3600000 1-0 FORCE")
            .cmd("XDEL s 2-0")
            .cmd("XCLAIM s g c2 0 2-0 FORCE")
            .cmd("XCLAIM s g c2 0 99-0 FORCE JUSTID")
            .cmd("XCLAIM s g c3 0 3-0 FORCE RETRYCOUNT 4 JUSTID")
            .cmd("XPENDING s g - + 10"),
        all_read(
            "XCLAIM of a deleted entry drops its pending entry silently",
            5,
        )
        .cmd("XDEL s 2-0 3-0")
        .cmd("XCLAIM s g c2 0 2-0")
        .cmd("XCLAIM s g c2 0 3-0 4-0 JUSTID")
        .cmd("XTRIM s MAXLEN 0")
        .cmd("XCLAIM s g c2 0 1-0 5-0 FORCE")
        .cmd("XPENDING s g")
        .cmd("XINFO GROUPS s"),
        all_read(
            "XCLAIM LASTID raises the cursor only, entries-read untouched",
            5,
        )
        .cmd("XGROUP SETID s g 2-0")
        .cmd("XCLAIM s g c1 0 1-0 LASTID 1-0 JUSTID")
        .cmd("XINFO GROUPS s")
        .cmd("XCLAIM s g c1 0 1-0 LASTID 4-0 JUSTID")
        .cmd("XINFO GROUPS s")
        .cmd("XCLAIM s g c1 0 99-0 LASTID 99-0")
        .cmd("XINFO GROUPS s")
        .cmd("XREADGROUP GROUP g c1 STREAMS s >"),
        all_read(
            "XCLAIM creates its consumer even when nothing is claimed",
            2,
        )
        .cmd("XCLAIM s g c4 3600000 1-0")
        .cmd("XCLAIM s g c5 0 99-0")
        .cmd("XCLAIM s g c6 0 1-0 LASTID x")
        .cmd("XINFO GROUPS s")
        .skip_if(redis_before_7_2, CLAIM_CREATES_CONSUMER),
    ]
}

fn xautoclaim() -> Vec<Case> {
    vec![
        all_read("XAUTOCLAIM parses before looking up the key", 2)
            .cmd("XAUTOCLAIM s g c 0")
            .cmd("XAUTOCLAIM nokey g c 1 1 COUNT 0")
            .cmd("XAUTOCLAIM nokey g c x 0")
            .cmd("XAUTOCLAIM nokey g c 0 x")
            .cmd("XAUTOCLAIM nokey g c 0 0 FOO")
            .cmd("XAUTOCLAIM nokey g c 0 0")
            .cmd("XAUTOCLAIM s nog c 0 0")
            .cmd("XAUTOCLAIM s g c 0 0 COUNT x")
            .cmd("XAUTOCLAIM s g c 0 0 COUNT -1")
            .cmd("XAUTOCLAIM s g c 0 0 COUNT")
            .cmd("XAUTOCLAIM s g c 0 0 COUNT 1152921504606846976")
            .cmd("XAUTOCLAIM s g c 0 0 COUNT 922337203685477580")
            .cmd(&format!(
                "XAUTOCLAIM s g c 0 0 COUNT {AUTOCLAIM_COUNT_TOO_BIG}"
            ))
            .cmd("XAUTOCLAIM s g c 0 0 COUNT 1000000")
            .cmd("XAUTOCLAIM s g c 0 0 JUSTID FOO")
            .cmd("XAUTOCLAIM s g c 0 (- COUNT 1")
            .cmd("XAUTOCLAIM s g c 0 (18446744073709551615-18446744073709551615")
            .cmd("XAUTOCLAIM s g c 1.5 0")
            .cmd("XPENDING s g - + 10"),
        all_read("XAUTOCLAIM claims from the start id, cursor and COUNT", 5)
            .cmd("XAUTOCLAIM s g c2 0 0 COUNT 2")
            .cmd("XAUTOCLAIM s g c2 0 3-0 COUNT 2")
            .cmd("XAUTOCLAIM s g c2 0 5 COUNT 2")
            .cmd("XAUTOCLAIM s g c3 0 (1-0 JUSTID")
            .cmd("XAUTOCLAIM s g c3 0 - COUNT 1 JUSTID")
            .cmd("XAUTOCLAIM s g c3 -1 + JUSTID")
            .cmd("xautoclaim s g c1 0 0 justid count 100")
            .cmd("XPENDING s g - + 10"),
        all_read(
            "XAUTOCLAIM reports and removes deleted entries; they use up COUNT",
            6,
        )
        .cmd("XDEL s 1-0 3-0")
        .cmd("XAUTOCLAIM s g c2 0 0 COUNT 2")
        .cmd("XPENDING s g")
        .cmd("XDEL s 5-0")
        .cmd("XTRIM s MAXLEN 0")
        .cmd("XAUTOCLAIM s g c2 0 0 JUSTID")
        .cmd("XPENDING s g")
        .cmd("XINFO GROUPS s"),
        all_read("XAUTOCLAIM scans at most COUNT x 10 entries", 25)
            .cmd("XCLAIM s g c1 0 25-0 IDLE 7200000 JUSTID")
            .cmd("XAUTOCLAIM s g c2 3600000 0 COUNT 1")
            .cmd("XAUTOCLAIM s g c2 3600000 11-0 COUNT 1")
            .cmd("XAUTOCLAIM s g c2 3600000 21-0 COUNT 1")
            .cmd("XAUTOCLAIM s g c2 3600000 0 COUNT 3")
            .cmd("XPENDING s g - + 30 c2"),
        Case::new("XAUTOCLAIM on an empty PEL")
            .cmd("XGROUP CREATE s g $ MKSTREAM")
            .cmd("XGROUP CREATECONSUMER s g c")
            .cmd("XAUTOCLAIM s g c 0 0")
            .cmd("XAUTOCLAIM s g c 0 0 JUSTID")
            .cmd("XPENDING s g"),
        all_read(
            "XAUTOCLAIM creates its consumer even when nothing is claimed",
            2,
        )
        .cmd("XAUTOCLAIM s g c4 3600000 0")
        .cmd("XAUTOCLAIM s g c5 0 99-0")
        .cmd("XINFO GROUPS s")
        .skip_if(redis_before_7_2, CLAIM_CREATES_CONSUMER),
    ]
}

//! `docs/reference/streams.md` §4.3 and §4.4: XACK and XPENDING (summary, extended, IDLE, consumer,
//! errors).
//!
//! Idle filters use 0 or an hour: entries read "now" are idle for a few milliseconds on the
//! server and 0 on the engine, and `XCLAIM ... IDLE 7200000` moves chosen entries two hours
//! back on both, so an hour separates them on either clock.

use crate::differential::case::Case;

/// `s` with five entries, group `g` at 0; `c1` has read 1-0..3-0, `c2` 4-0 and 5-0, `c3`
/// exists with nothing pending.
fn read_by_two(name: &'static str) -> Case {
    Case::new(name)
        .fill("s", 1, 5)
        .cmd("XGROUP CREATE s g 0")
        .cmd("XREADGROUP GROUP g c1 COUNT 3 STREAMS s >")
        .cmd("XREADGROUP GROUP g c2 STREAMS s >")
        .cmd("XGROUP CREATECONSUMER s g c3")
}

pub fn all() -> Vec<Case> {
    vec![
        read_by_two("XACK counts what was pending")
            .cmd("XACK s g 1-0")
            .cmd("XACK s g 1-0")
            .cmd("XACK s g 2-0 2-0 4-0 99-0")
            .cmd("XACK s g 3")
            .cmd("XACK s nog 5-0")
            .cmd("XPENDING s g"),
        read_by_two("XACK parses every id before acking any")
            .cmd("XACK s g 1-0 bad")
            .cmd("XACK s g 1-0 +")
            .cmd("XACK s g -")
            .cmd("XACK s g (1-0")
            .cmd("XACK s g")
            .cmd("XPENDING s g"),
        Case::new("XACK on a missing key or group does not parse the ids")
            .cmd("XACK nokey g 1-0")
            .cmd("XACK nokey g bad")
            .cmd("XADD s 1-0 f v")
            .cmd("XACK s nog bad"),
        read_by_two("XACK of deleted and trimmed entries works")
            .cmd("XDEL s 1-0")
            .cmd("XTRIM s MAXLEN 1")
            .cmd("XPENDING s g")
            .cmd("XACK s g 1-0 2-0")
            .cmd("XPENDING s g - + 10"),
        Case::new("XPENDING argument count")
            .cmd("XADD s 1-0 f v")
            .cmd("XGROUP CREATE s g 0")
            .cmd("XPENDING s")
            .cmd("XPENDING s g -")
            .cmd("XPENDING s g - +")
            .cmd("XPENDING s g IDLE 5 - +")
            .cmd("XPENDING s g IDLE 5 - + 10 c x")
            .cmd("XPENDING s g - + 10 c x")
            .cmd("XPENDING s g - + 10 c x y"),
        Case::new("XPENDING parses before looking up the key")
            .cmd("XPENDING nokey g")
            .cmd("XPENDING nokey g - + 10")
            .cmd("XPENDING nokey g x + 10")
            .cmd("XPENDING nokey g - x 10")
            .cmd("XPENDING nokey g - + x")
            .cmd("XPENDING nokey g IDLE x - + 10")
            .cmd("XPENDING nokey g IDLE 5 - + 10")
            .cmd("XPENDING nokey g (- + 10")
            .cmd("XADD s 1-0 f v")
            .cmd("XPENDING s nog")
            .cmd("XPENDING s nog - + 10")
            .cmd("XPENDING s nog x + 10"),
        Case::new("XPENDING summary of an empty PEL")
            .cmd("XGROUP CREATE s g $ MKSTREAM")
            .cmd("XPENDING s g")
            .cmd("XGROUP CREATECONSUMER s g c")
            .cmd("XPENDING s g")
            .cmd("XPENDING s g - + 10")
            .cmd("XPENDING s g - + 10 c"),
        read_by_two("XPENDING summary: bulk counts, idle consumers left out")
            .cmd("XPENDING s g")
            .cmd("XACK s g 4-0 5-0")
            .cmd("XPENDING s g"),
        read_by_two("XPENDING extended: bounds, COUNT, consumer")
            .cmd("XPENDING s g - + 10")
            .cmd("XPENDING s g - + 2")
            .cmd("XPENDING s g - + 0")
            .cmd("XPENDING s g - + -1")
            .cmd("XPENDING s g 2 4 10")
            .cmd("XPENDING s g (2-0 (5-0 10")
            .cmd("XPENDING s g (5 + 10")
            .cmd("XPENDING s g 4 2 10")
            .cmd("XPENDING s g - (0-0 10")
            .cmd("XPENDING s g (18446744073709551615-18446744073709551615 + 10")
            .cmd("XPENDING s g + - 10")
            .cmd("XPENDING s g - + 10 c1")
            .cmd("XPENDING s g - + 1 c2")
            .cmd("XPENDING s g - + 10 c3")
            .cmd("XPENDING s g - + 10 nobody")
            .cmd("xpending s g - + 10 C1"),
        read_by_two("XPENDING IDLE: 0 lists all, an hour only what was moved back")
            .cmd("XPENDING s g IDLE 0 - + 10")
            .cmd("XPENDING s g IDLE -5 - + 10")
            .cmd("XPENDING s g IDLE 3600000 - + 10")
            .cmd("XCLAIM s g c3 0 2-0 5-0 IDLE 7200000 JUSTID")
            .cmd("XPENDING s g IDLE 3600000 - + 10")
            .cmd("XPENDING s g IDLE 3600000 - + 10 c3")
            .cmd("XPENDING s g IDLE 3600000 - + 10 c1")
            .cmd("XPENDING s g IDLE 3600000 (2-0 + 1")
            .cmd("XPENDING s g idle 3600000 - + 10")
            .cmd("XPENDING s g"),
        read_by_two("delivery counts in XPENDING follow history reads and claims")
            .cmd("XREADGROUP GROUP g c1 STREAMS s 0")
            .cmd("XREADGROUP GROUP g c1 STREAMS s 1-0")
            .cmd("XCLAIM s g c2 0 1-0")
            .cmd("XCLAIM s g c2 0 2-0 JUSTID")
            .cmd("XCLAIM s g c2 0 3-0 RETRYCOUNT 9")
            .cmd("XPENDING s g - + 10"),
    ]
}

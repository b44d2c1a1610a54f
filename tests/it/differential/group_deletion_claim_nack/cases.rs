//! The hand-written Redis 8.8 cases: one group per feature, each error in its checking order.

use crate::differential::case::Case;

pub fn all() -> Vec<Case> {
    let mut cases = strategies();
    cases.extend(xdelex());
    cases.extend(xackdel());
    cases.extend(entries_read());
    cases.extend(claim());
    cases.extend(xnack());
    cases
}

/// `fill` then a group `g` that read everything (consumer `c`).
fn read(case: Case, key: &str, n: u64) -> Case {
    case.fill(key, 1, n)
        .cmd(&format!("XGROUP CREATE {key} g 0"))
        .cmd(&format!("XREADGROUP GROUP g c STREAMS {key} >"))
}

fn strategies() -> Vec<Case> {
    vec![
        read(
            Case::new("XTRIM MINID ~ ACKED goes entry by entry").nodes(2, 4096),
            "s",
            5,
        )
        .cmd("XACK s g 1-0 2-0 4-0")
        .cmd("XTRIM s MINID ~ 6-0 ACKED")
        .cmd("XINFO STREAM s FULL"),
        Case::new("XADD MAXLEN = 1 ACKED with an unread group, then read and acked")
            .fill("s", 1, 5)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XADD s MAXLEN = 1 ACKED 6-0 f v")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XACK s g 1-0 2-0 3-0 4-0 5-0 6-0")
            .cmd("XADD s MAXLEN = 1 ACKED 7-0 f v")
            .cmd("XLEN s"),
        read(Case::new("XTRIM DELREF empties every PEL"), "s", 4)
            .cmd("XGROUP CREATE s g2 0")
            .cmd("XREADGROUP GROUP g2 c2 COUNT 2 STREAMS s >")
            .cmd("XTRIM s MINID ~ 5-0 DELREF")
            .cmd("XPENDING s g")
            .cmd("XINFO CONSUMERS s g2"),
        read(Case::new("KEEPREF leaves dangling PEL entries"), "s", 4)
            .cmd("XTRIM s MAXLEN 1 KEEPREF")
            .cmd("XADD s MAXLEN 0 keepref 5-0 f v")
            .cmd("XPENDING s g - + 10"),
        read(
            Case::new("~ with LIMIT, ACKED and DELREF across nodes").nodes(2, 4096),
            "s",
            9,
        )
        .cmd("XACK s g 1-0 2-0 3-0 4-0 5-0 6-0")
        .cmd("XTRIM s MAXLEN ~ 0 LIMIT 3 ACKED")
        .cmd("XTRIM s MAXLEN ~ 0 LIMIT 4 ACKED")
        .cmd("XTRIM s MAXLEN ~ 0 ACKED")
        .cmd("XTRIM s MAXLEN ~ 2 LIMIT 1 DELREF")
        .cmd("XTRIM s MAXLEN ~ 1 DELREF")
        .cmd("XTRIM s MINID 9-0 DELREF"),
        Case::new("ACKED on a stream without groups, and references by cursor")
            .fill("s", 1, 4)
            .cmd("XTRIM s MAXLEN 3 ACKED")
            .cmd("XGROUP CREATE s g 2-0")
            .cmd("XTRIM s MAXLEN 0 ACKED")
            .cmd("XGROUP CREATE s late 0")
            .cmd("XTRIM s MAXLEN 0 ACKED")
            .cmd("XGROUP DESTROY s late")
            .cmd("XGROUP SETID s g $")
            .cmd("XTRIM s MAXLEN 0 ACKED"),
        read(
            Case::new("XGROUP DESTROY drops the group's references"),
            "s",
            3,
        )
        .cmd("XGROUP CREATE s g2 $")
        .cmd("XTRIM s MAXLEN 0 ACKED")
        .cmd("XGROUP DESTROY s g")
        .cmd("XTRIM s MAXLEN 0 ACKED"),
        Case::new("strategy tokens: parsing quirks and errors")
            .cmd("XADD s 1-0 f v")
            .cmd("XADD s KEEPREF DELREF 2-0 f v")
            .cmd("XADD s ACKED ACKED 2-0 f v")
            .cmd("XADD s acked MAXLEN 5 2-0 f v")
            .cmd("XADD s MAXLEN 5 DeLrEf 3-0 f v")
            .cmd("XADD s DELREF 4-0 f v")
            .cmd("XADD s NOMKSTREAM KEEPREF MINID 2-0 5-0 f v")
            .cmd("XADD nokey NOMKSTREAM ACKED MAXLEN 0 1-0 f v")
            .cmd("XADD s ACKED")
            .cmd("XADD s ACKED 6-0")
            .cmd("XTRIM s ACKED MAXLEN 10")
            .cmd("XTRIM s MAXLEN 10 ACKED DELREF")
            .cmd("XTRIM s MAXLEN 10 ACKED ACKED")
            .cmd("XTRIM s KEEPREF")
            .cmd("XTRIM s KEEPREF LIMIT 5")
            .cmd("XTRIM s MAXLEN 1 LIMIT 5 ACKED")
            .cmd("XTRIM s ACKED MAXLEN ~ 1 LIMIT 0")
            .cmd("XTRIM s DELREF MINID = 3-0")
            .cmd("XTRIM nokey MAXLEN 0 ACKED")
            .cmd("SET str v")
            .cmd("XTRIM str MAXLEN 0 ACKED"),
    ]
}

fn xdelex() -> Vec<Case> {
    vec![
        Case::new("XDELEX: ACKED's reference check runs before existence")
            .fill("x", 1, 2)
            .cmd("XGROUP CREATE x g 0")
            .cmd("XDELEX x ACKED IDS 3 1-0 3-0 9-0")
            .cmd("XREADGROUP GROUP g c STREAMS x >")
            .cmd("XDELEX x ACKED IDS 2 1-0 2-0")
            .cmd("XACK x g 1-0")
            .cmd("XDELEX x ACKED IDS 3 1-0 1-0 9-0")
            .cmd("XDELEX x IDS 2 2-0 2-0")
            .cmd("XINFO STREAM x FULL"),
        read(Case::new("XDELEX: KEEPREF and DELREF"), "s", 4)
            .cmd("XDELEX s IDS 1 1-0")
            .cmd("XDELEX s KEEPREF IDS 2 2-0 9-0")
            .cmd("XDEL s 3-0")
            .cmd("XDELEX s DELREF IDS 3 3-0 4-0 1-0")
            .cmd("XPENDING s g")
            .cmd("XINFO STREAM s FULL"),
        Case::new("XDELEX: the IDS block anywhere")
            .fill("s", 1, 4)
            .cmd("XDELEX s IDS 1 1-0 ACKED")
            .cmd("XDELEX s IDS 1 2-0 IDS 1 3-0")
            .cmd("xdelex s delref ids 1 4-0"),
        Case::new("XDELEX: errors in order, and the missing key")
            .cmd("XDELEX nokey IDS 2 bad 1-0")
            .cmd("XDELEX nokey ACKED IDS 1 1-0")
            .cmd("XDELEX nokey BAD IDS 1 1-0")
            .cmd("XDELEX nokey IDS 0 1-0")
            .fill("s", 1, 2)
            .cmd("XDELEX s DELREF")
            .cmd("XDELEX s IDS 1")
            .cmd("XDELEX s IDS 0 1-0")
            .cmd("XDELEX s IDS -1 1-0")
            .cmd("XDELEX s IDS x 1-0")
            .cmd("XDELEX s IDS 3 1-0 2-0")
            .cmd("XDELEX s IDS 1 1-0 2-0")
            .cmd("XDELEX s ACKED DELREF IDS 1 1-0")
            .cmd("XDELEX s IDS 1 1-0 ACKED ACKED")
            .cmd("XDELEX s ACKED x 1-0")
            .cmd("XDELEX s KEEPREF ACKED IDS")
            .cmd("XDELEX s ACKED ACKED ACKED")
            .cmd("XDELEX s IDS 2 1-0 bad")
            .cmd("XDELEX s IDS 2 1-0 2")
            .cmd("XDELEX s IDS 1 1-0")
            .cmd("SET str v")
            .cmd("XDELEX str IDS 1 1-0")
            .cmd("XDELEX str BAD"),
    ]
}

fn xackdel() -> Vec<Case> {
    vec![
        Case::new("XACKDEL: ACKED with two groups")
            .fill("s", 1, 2)
            .cmd("XGROUP CREATE s g1 0")
            .cmd("XGROUP CREATE s g2 0")
            .cmd("XREADGROUP GROUP g1 c STREAMS s >")
            .cmd("XREADGROUP GROUP g2 c STREAMS s >")
            .cmd("XACKDEL s g1 ACKED IDS 2 1-0 2-0")
            .cmd("XLEN s")
            .cmd("XACKDEL s g1 ACKED IDS 2 1-0 2-0")
            .cmd("XACKDEL s g2 ACKED IDS 2 1-0 2-0")
            .cmd("XLEN s"),
        Case::new("XACKDEL: KEEPREF leaves others dangling, DELREF cleans them")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g1 0")
            .cmd("XGROUP CREATE s g2 0")
            .cmd("XGROUP CREATE s g3 0")
            .cmd("XREADGROUP GROUP g1 c STREAMS s >")
            .cmd("XREADGROUP GROUP g2 c STREAMS s >")
            .cmd("XREADGROUP GROUP g3 c STREAMS s >")
            .cmd("XACKDEL s g1 KEEPREF IDS 2 1-0 2-0")
            .cmd("XACKDEL s g2 IDS 2 1-0 2-0")
            .cmd("XACKDEL s g1 DELREF IDS 2 3-0 3-0")
            .cmd("XACKDEL s g2 DELREF IDS 1 3-0")
            .cmd("XINFO STREAM s FULL"),
        Case::new("XACKDEL: an id not in the PEL is not deleted")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XACKDEL s g IDS 3 2-0 1-0 9-0")
            .cmd("XLEN s")
            .cmd("XACKDEL s nog IDS 1 2-0")
            .cmd("XACKDEL nokey g IDS 2 x y"),
        Case::new("XACKDEL: errors in order")
            .cmd("XACKDEL")
            .cmd("XACKDEL s")
            .cmd("XACKDEL s g")
            .cmd("XACKDEL s g IDS 1")
            .cmd("XACKDEL nokey g BAD IDS 1 1-0")
            .fill("s", 1, 2)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XACKDEL s g KEEPREF ACKED")
            .cmd("XACKDEL s g IDS 0 1-0")
            .cmd("XACKDEL s g IDS 2 1-0")
            .cmd("XACKDEL s g IDS 1 1-0 2-0")
            .cmd("XACKDEL s g DELREF DELREF IDS 1 1-0")
            .cmd("XACKDEL s g IDS 1 bad")
            .cmd("XACKDEL s nog IDS 1 bad")
            .cmd("SET str v")
            .cmd("XACKDEL str g IDS 1 1-0"),
    ]
}

fn entries_read() -> Vec<Case> {
    vec![
        Case::new("ENTRIESREAD above entries-added is capped")
            .fill("s", 1, 1)
            .cmd("XGROUP CREATE s g $ ENTRIESREAD 10")
            .cmd("XGROUP CREATE s g2 0 ENTRIESREAD 5")
            .cmd("XINFO GROUPS s")
            .cmd("XGROUP SETID s g2 $ ENTRIESREAD 99")
            .cmd("XGROUP SETID s g 0 ENTRIESREAD 1")
            .cmd("XINFO GROUPS s")
            .cmd("XGROUP CREATE e g $ MKSTREAM ENTRIESREAD 3")
            .cmd("XINFO GROUPS e"),
    ]
}

fn claim() -> Vec<Case> {
    vec![
        read(
            Case::new("CLAIM: pending entries first, then new ones; COUNT caps the total"),
            "s",
            3,
        )
        .fill("s", 4, 6)
        .cmd("XREADGROUP GROUP g c2 COUNT 4 CLAIM 0 STREAMS s >")
        .cmd("XPENDING s g - + 10")
        .cmd("XREADGROUP GROUP g c3 COUNT 2 CLAIM 0 STREAMS s >")
        .cmd("XREADGROUP GROUP g c3 CLAIM 0 STREAMS s >")
        .cmd("XINFO CONSUMERS s g"),
        read(
            Case::new("CLAIM: nothing idle enough and nothing new"),
            "s",
            2,
        )
        .cmd("XREADGROUP GROUP g c2 CLAIM 3600000 STREAMS s >")
        .cmd("XREADGROUP GROUP g c2 CLAIM 3600000 COUNT 1 STREAMS s >")
        .fill("s", 3, 3)
        .cmd("XREADGROUP GROUP g c2 CLAIM 3600000 STREAMS s >")
        .cmd("XINFO CONSUMERS s g"),
        Case::new("CLAIM with NOACK: new entries stay out of the PEL")
            .fill("s", 1, 2)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XREADGROUP GROUP g c NOACK CLAIM 50 STREAMS s >")
            .cmd("XPENDING s g")
            .cmd("XREADGROUP GROUP g c NOACK CLAIM 50 STREAMS s >")
            .fill("s", 3, 3)
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XREADGROUP GROUP g c2 NOACK CLAIM 0 STREAMS s >")
            .cmd("XPENDING s g - + 10"),
        Case::new("CLAIM over several streams, and the history-read quirk")
            .fill("s", 1, 2)
            .fill("t", 1, 2)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XGROUP CREATE t g 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s t > >")
            .cmd("XREADGROUP GROUP g c2 CLAIM 0 STREAMS s t > >")
            .cmd("XREADGROUP GROUP g c2 CLAIM 0 STREAMS s t 0 >")
            .fill("t", 3, 3)
            .cmd("XREADGROUP GROUP g c2 CLAIM 0 STREAMS s t 0 >")
            .cmd("XREADGROUP GROUP g c3 CLAIM 0 STREAMS t s > 0")
            .cmd("XREADGROUP GROUP g c3 CLAIM 0 COUNT 1 STREAMS t s > >"),
        read(
            Case::new("CLAIM: ghosts are skipped and stay pending"),
            "s",
            3,
        )
        .cmd("XDEL s 1-0")
        .cmd("XTRIM s MINID 2-0")
        .cmd("XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >")
        .cmd("XPENDING s g - + 10")
        .cmd("XDEL s 2-0 3-0")
        .cmd("XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >")
        .cmd("XGROUP DELCONSUMER s g c2")
        .cmd("XREADGROUP GROUP g c2 CLAIM 0 STREAMS s >"),
        read(
            Case::new("CLAIM after SETID: once claimed and once new"),
            "s",
            2,
        )
        .cmd("XGROUP SETID s g 0")
        .cmd("XREADGROUP GROUP g c CLAIM 0 STREAMS s >")
        .cmd("XPENDING s g - + 10")
        .cmd("XREADGROUP GROUP g c CLAIM 0 BLOCK 100 STREAMS s >"),
        read(
            Case::new("CLAIM: options in any order, the last CLAIM wins"),
            "s",
            1,
        )
        .cmd("XREADGROUP CLAIM 3600000 GROUP g c2 CLAIM 0 STREAMS s >")
        .cmd("XREADGROUP COUNT 5 claim 0 GROUP g c3 NOACK STREAMS s >")
        .cmd("XREADGROUP GROUP g c4 CLAIM 0 STREAMS s 0"),
        read(Case::new("CLAIM: errors"), "s", 1)
            .cmd("XREAD CLAIM 10 STREAMS s 0")
            .cmd("XREAD COUNT 1 CLAIM x STREAMS s 0")
            .cmd("XREADGROUP GROUP g c CLAIM -1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c CLAIM 5.5 STREAMS s >")
            .cmd("XREADGROUP GROUP g c CLAIM +10 STREAMS s >")
            .cmd("XREADGROUP GROUP g c CLAIM -0 STREAMS s >")
            .cmd("XREADGROUP GROUP g c CLAIM x STREAMS s >")
            .cmd("XREADGROUP GROUP g c CLAIM 99999999999999999999 STREAMS s >")
            .cmd("XREADGROUP CLAIM GROUP g c STREAMS s >")
            .cmd("XREADGROUP GROUP g c CLAIM STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s CLAIM 0")
            .cmd("XREADGROUP GROUP g c STREAMS s CLAIM > >")
            .cmd("XREADGROUP GROUP g c CLAIM 0 STREAMS nokey >")
            .cmd("XREADGROUP GROUP nog c CLAIM 0 STREAMS s >")
            .cmd("XREADGROUP CLAIM 0 STREAMS s >"),
    ]
}

fn xnack() -> Vec<Case> {
    vec![
        read(Case::new("XNACK modes and RETRYCOUNT"), "s", 5)
            .cmd("XNACK s g SILENT IDS 1 1-0")
            .cmd("XNACK s g FAIL IDS 1 2-0")
            .cmd("XNACK s g FATAL IDS 1 3-0")
            .cmd("XNACK s g silent IDS 1 4-0 RETRYCOUNT 7")
            .cmd("XNACK s g FATAL RETRYCOUNT 0 IDS 1 5-0")
            .cmd("XPENDING s g")
            .cmd("XPENDING s g - + 10")
            .cmd("XPENDING s g IDLE 3600000 - + 10")
            .cmd("XPENDING s g - + 10 c")
            .cmd("XNACK s g SILENT IDS 2 1-0 1-0")
            .cmd("XPENDING s g - + 1")
            .cmd("XINFO STREAM s FULL")
            .cmd("XINFO GROUPS s")
            .cmd("XINFO CONSUMERS s g"),
        read(
            Case::new("XNACK: the zone is FIFO and claimed first"),
            "s",
            4,
        )
        .cmd("XNACK s g FAIL IDS 2 3-0 1-0")
        .cmd("XNACK s g FAIL IDS 1 3-0")
        .cmd("XREADGROUP GROUP g c2 COUNT 1 CLAIM 3600000 STREAMS s >")
        .cmd("XREADGROUP GROUP g c2 CLAIM 3600000 STREAMS s >")
        .cmd("XREADGROUP GROUP g c2 CLAIM 3600000 STREAMS s >")
        .cmd("XPENDING s g - + 10")
        .cmd("XNACK s g FATAL IDS 1 2-0")
        .cmd("XREADGROUP GROUP g c3 CLAIM 0 STREAMS s >")
        .cmd("XINFO STREAM s FULL"),
        Case::new("XNACK FORCE creates unowned entries for existing ids only")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g $")
            .cmd("XNACK s g FAIL IDS 2 1-0 9-0")
            .cmd("XNACK s g FAIL IDS 3 1-0 9-0 2-0 FORCE")
            .cmd("XNACK s g SILENT FORCE IDS 1 3-0")
            .cmd("XNACK s g FATAL FORCE IDS 1 3-0")
            .cmd("XNACK s g FAIL IDS 1 3-0 FORCE RETRYCOUNT 4")
            .cmd("XPENDING s g - + 10")
            .cmd("XINFO STREAM s FULL"),
        read(
            Case::new("XNACK: ghosts, XCLAIM, XAUTOCLAIM and XACK"),
            "s",
            4,
        )
        .cmd("XNACK s g FAIL IDS 3 1-0 2-0 3-0")
        .cmd("XDEL s 2-0")
        .cmd("XNACK s g FAIL IDS 2 2-0 2-0")
        .cmd("XCLAIM s g c2 3600000 1-0 2-0")
        .cmd("XPENDING s g - + 10")
        .cmd("XNACK s g FAIL IDS 1 1-0")
        .cmd("XDEL s 4-0")
        .cmd("XAUTOCLAIM s g c3 3600000 0 COUNT 10")
        .cmd("XNACK s g FAIL IDS 1 1-0")
        .cmd("XAUTOCLAIM s g c3 3600000 0 JUSTID")
        .cmd("XNACK s g FAIL IDS 1 3-0")
        .cmd("XACK s g 3-0")
        .cmd("XINFO STREAM s FULL"),
        read(
            Case::new("XNACK: XTRIM, DELCONSUMER, DESTROY and history reads"),
            "s",
            4,
        )
        .cmd("XNACK s g FAIL IDS 2 1-0 2-0")
        .cmd("XREADGROUP GROUP g c STREAMS s 0")
        .cmd("XTRIM s MINID 2-0")
        .cmd("XGROUP DELCONSUMER s g c")
        .cmd("XPENDING s g - + 10")
        .cmd("XINFO CONSUMERS s g")
        .cmd("XTRIM s MAXLEN 0 ACKED")
        .cmd("XTRIM s MAXLEN 0 DELREF")
        .cmd("XINFO STREAM s FULL")
        .cmd("XREADGROUP GROUP g c STREAMS s >")
        .cmd("XNACK s g FAIL IDS 1 3-0")
        .cmd("XGROUP DESTROY s g")
        .cmd("XTRIM s MAXLEN 0 ACKED"),
        read(Case::new("XNACK: errors in order"), "s", 1)
            .cmd("XNACK")
            .cmd("XNACK s g SILENT IDS 1")
            .cmd("XNACK nokey g BAD IDS 1 x")
            .cmd("XNACK s nog BAD IDS 1 x")
            .cmd("XNACK s g BAD IDS 1 1-0")
            .cmd("XNACK s g IDS 1 1-0 FAIL")
            .cmd("XNACK s g FAIL IDS 0 1-0")
            .cmd("XNACK s g FAIL IDS x 1-0")
            .cmd("XNACK s g FAIL IDS 2147483648 1-0")
            .cmd("XNACK s g FAIL IDS 3 1-0 2-0")
            .cmd("XNACK s g FAIL IDS 1 1-0 2-0")
            .cmd("XNACK s g FAIL IDS 1 1-0 FAIL")
            .cmd("XNACK s g FAIL IDS 1 1-0 RETRYCOUNT")
            .cmd("XNACK s g FAIL IDS 1 1-0 RETRYCOUNT x")
            .cmd("XNACK s g FAIL IDS 1 1-0 RETRYCOUNT -1")
            .cmd("XNACK s g FAIL FORCE RETRYCOUNT 1 FORCE")
            .cmd("XNACK s g FAIL IDS 1 bad")
            .cmd("XNACK s g FAIL IDS 1 1-0 IDS")
            .cmd("XNACK s g FAIL IDS 1 1-0 IDS 1 2-0")
            .cmd("SET str v")
            .cmd("XNACK str g BAD IDS 1 1-0")
            .cmd("XPENDING s g - + 10"),
    ]
}

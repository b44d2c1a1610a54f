//! Hand-written differential cases for XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM and XSETID,
//! taken from `docs/reference/streams.md` §2 (trimming), §3 (ids) and §6.1 (errors). Each case
//! starts from an empty server and engine with default settings; every reply is compared, and
//! after every command the stream state of the key it named.

use crate::differential::case::Case;
use crate::differential::known_differences::{
    REDIS_7_0_SHRINK_CRASH, SEQ_AUTO_EXHAUSTED, XSETID_MAX_DELETED_CHECK, redis_before_7_2,
};

/// Every case.
pub fn all() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(trim_option_errors());
    cases.extend(xadd_arity_and_options());
    cases.extend(trimming());
    cases.extend(ids());
    cases.extend(ranges());
    cases.extend(xdel());
    cases.extend(xsetid());
    cases.extend(wrong_type_and_unknown());
    cases
}

/// §2.1: every error of the trim options, in XADD and in XTRIM.
fn trim_option_errors() -> Vec<Case> {
    vec![
        Case::new("MAXLEN below zero")
            .cmd("XADD s MAXLEN -1 1-1 f v")
            .cmd("XADD s MAXLEN ~ -1 1-1 f v")
            .cmd("XTRIM s MAXLEN -1")
            .cmd("XTRIM s MAXLEN = -5"),
        Case::new("MAXLEN not an integer")
            .cmd("XADD s MAXLEN abc 1-1 f v")
            .cmd("XTRIM s MAXLEN 1.5")
            .cmd("XTRIM s MAXLEN ~ 99999999999999999999")
            .cmd("XTRIM s MAXLEN +5")
            .cmd("XTRIM s MAXLEN 05"),
        Case::new("MINID is a strict id")
            .fill("s", 1, 5)
            .cmd("XTRIM s MINID -")
            .cmd("XTRIM s MINID +")
            .cmd("XTRIM s MINID abc")
            .cmd("XTRIM s MINID (3")
            .cmd("XADD s MINID + 9-0 f v")
            .cmd("XTRIM s MINID 3")
            .cmd("XRANGE s - +"),
        Case::new("MAXLEN and MINID together or twice")
            .cmd("XADD s MAXLEN 1 MINID 1 1-1 f v")
            .cmd("XADD s MINID 1 MAXLEN 1 1-1 f v")
            .cmd("XTRIM s MAXLEN 1 MAXLEN 2")
            .cmd("XTRIM s MINID 1 MINID 2")
            .cmd("XTRIM s MAXLEN ~ 1 MINID = 2")
            .cmd("XADD s MAXLEN 1 MAXLEN 2 1-1 f v"),
        Case::new("LIMIT below zero and not an integer")
            .cmd("XTRIM s MAXLEN ~ 1 LIMIT -1")
            .cmd("XADD s MAXLEN ~ 1 LIMIT -1 1-1 f v")
            .cmd("XTRIM s MAXLEN ~ 1 LIMIT x"),
        Case::new("LIMIT without a strategy")
            .cmd("XADD s LIMIT 5 1-1 f v")
            .cmd("XADD s LIMIT 0 1-1 f v")
            .cmd("XTRIM s LIMIT 5 LIMIT 6")
            .cmd("XTRIM s LIMIT 0 x")
            .cmd("XLEN s"),
        Case::new("XTRIM without a strategy, unknown options, arity")
            .fill("s", 1, 3)
            .cmd("XTRIM s LIMIT 0")
            .cmd("XTRIM s FOO BAR")
            .cmd("XTRIM s ~ 5")
            .cmd("XTRIM s MAXLEN 5 FOO")
            .cmd("XTRIM s MAXLEN 5 LIMIT")
            .cmd("XTRIM s MAXLEN")
            .cmd("XTRIM s")
            .cmd("XTRIM s NOMKSTREAM MAXLEN 1"),
        Case::new("LIMIT without ~, LIMIT 0 included")
            .fill("s", 1, 3)
            .cmd("XTRIM s MAXLEN 1 LIMIT 10")
            .cmd("XTRIM s MAXLEN = 1 LIMIT 0")
            .cmd("XTRIM s MINID 2 LIMIT 0")
            .cmd("XADD s MAXLEN = 1 LIMIT 1 9-0 f v")
            .cmd("XTRIM s MAXLEN ~ 1 LIMIT 0"),
        Case::new("XTRIM parses before looking up the key")
            .cmd("XTRIM nokey MAXLEN 0")
            .cmd("XTRIM nokey MINID ~ 5 LIMIT 3")
            .cmd("XTRIM nokey MAXLEN -1")
            .cmd("XTRIM nokey MINID -")
            .cmd("XTRIM nokey MAXLEN 1 LIMIT 5"),
        Case::new("option words in any case")
            .cmd("xadd s maxlen ~ 5 limit 10 1-1 f v")
            .cmd("xadd s NoMkStream MinId = 1 2-1 f v")
            .cmd("xtrim s maxlen 1")
            .cmd("XtRiM s mInId ~ 5 LiMiT 0")
            .cmd("xrange s - + count 5"),
    ]
}

/// §2.1 and §2.3: XADD's own parsing, NOMKSTREAM, and append-then-trim.
fn xadd_arity_and_options() -> Vec<Case> {
    vec![
        Case::new("XADD arity is checked after the options")
            .cmd("XADD s")
            .cmd("XADD s 1-1")
            .cmd("XADD s 1-1 f")
            .cmd("XADD s 1-1 f v g")
            .cmd("XADD s MAXLEN 5 1-1 f")
            .cmd("XADD s NOMKSTREAM MAXLEN 5 1-1")
            .cmd("XADD s MAXLEN 5")
            .cmd("XADD s NOMKSTREAM 1-1 f v g")
            .cmd("XLEN s"),
        Case::new("XADD option values are consumed even when they look like ids")
            .cmd("XADD s MAXLEN 5 f v")
            .cmd("XADD s MAXLEN 5 5 f v")
            .cmd("XADD s LIMIT 1-1 f v")
            .cmd("XADD s NOMKSTREAM NOMKSTREAM 6-0 f v")
            .cmd("XADD s MAXLEN ~ LIMIT 5 7-0 f v"),
        Case::new("NOMKSTREAM on a missing key replies a null bulk and creates nothing")
            .cmd("XADD s NOMKSTREAM 1-1 f v")
            .cmd("XADD s NOMKSTREAM MAXLEN 0 1-1 f v")
            .cmd("XADD s NOMKSTREAM 0-* f v")
            .cmd("XLEN s")
            .cmd("XRANGE s - +")
            .cmd("XADD s 1-1 f v")
            .cmd("XADD s NOMKSTREAM 2-1 f v")
            .cmd("XADD s NOMKSTREAM 2-1 f v"),
        Case::new("NOMKSTREAM with an invalid id still reports the id error")
            .cmd("XADD s NOMKSTREAM 0-0 f v")
            .cmd("XADD s NOMKSTREAM abc f v"),
        Case::new("XADD MAXLEN 0 appends then trims, leaving an empty key")
            .cmd("XADD s MAXLEN 0 7-* a b")
            .cmd("XLEN s")
            .cmd("XRANGE s - +")
            .cmd("XADD s MAXLEN = 0 7-* a b")
            .cmd("XADD s MINID 100 8-0 a b")
            .cmd("XADD s 9-0 a b"),
        Case::new("XADD with * and MAXLEN 0: an id from the clock, an empty key")
            .cmd("XADD s MAXLEN 0 * a b")
            .cmd("XLEN s")
            .cmd("XADD s * MAXLEN 0 a b")
            .cmd("XLEN s")
            .cmd("XADD s MAXLEN * a b"),
        Case::new("XADD with duplicate field names keeps them")
            .cmd("XADD s 1-1 f 1 f 2 f 3")
            .cmd("XADD s 1-2 f 1 f 2 f 3")
            .cmd("XADD s 1-3 f 1 g 2")
            .cmd("XRANGE s - +"),
        Case::new("XADD with empty field names and values")
            .argv(&["XADD", "s", "1-1", "", ""])
            .argv(&["XADD", "s", "1-2", "", "x", "y", ""])
            .argv(&["XADD", "s", "1-3", "", ""])
            .cmd("XRANGE s - +"),
    ]
}

/// §2.2: the trim walk, exact and approximate, with the live-checked examples.
fn trimming() -> Vec<Case> {
    vec![
        Case::new("250 entries: MAXLEN ~ 151 removes 0, ~ 150 removes 100")
            .fill("s", 1, 250)
            .cmd("XTRIM s MAXLEN ~ 151")
            .cmd("XTRIM s MAXLEN ~ 150")
            .cmd("XTRIM s MAXLEN ~ 150"),
        Case::new("1000 entries: XADD MAXLEN ~ 555 leaves 600")
            .fill("s", 1, 999)
            .cmd("XADD s MAXLEN ~ 555 1000-0 f 1000")
            .cmd("XLEN s"),
        Case::new("555 entries: XTRIM MAXLEN ~ 444 leaves 500")
            .fill("s", 1, 555)
            .cmd("XTRIM s MAXLEN ~ 444")
            .cmd("XLEN s"),
        Case::new("node size 10, 101 entries: MAXLEN ~ 55 LIMIT 30, twice")
            .nodes(10, 4096)
            .fill("s", 1, 101)
            .cmd("XTRIM s MAXLEN ~ 55 LIMIT 30")
            .cmd("XADD s MAXLEN ~ 55 LIMIT 30 102-0 f 102")
            .cmd("XLEN s"),
        Case::new("node size 1, 102 entries: MAXLEN ~ 1 stops at the default LIMIT")
            .nodes(1, 4096)
            .fill("s", 1, 102)
            .cmd("XTRIM s MAXLEN ~ 1")
            .cmd("XLEN s")
            .cmd("XTRIM s MAXLEN ~ 1"),
        Case::new("node size 0 (no count limit): default LIMIT is 10000")
            .nodes(0, 50)
            .fill("s", 1, 60)
            .cmd("XTRIM s MAXLEN ~ 3")
            .cmd("XTRIM s MAXLEN ~ 0 LIMIT 2"),
        Case::new("MAXLEN ~ 0 LIMIT 0 can empty the stream")
            .fill("s", 1, 250)
            .cmd("XTRIM s MAXLEN ~ 0 LIMIT 0")
            .cmd("XLEN s")
            .cmd("XRANGE s - +"),
        Case::new("exact MAXLEN tombstones inside the head node")
            .fill("s", 1, 150)
            .cmd("XTRIM s MAXLEN 60")
            .cmd("XTRIM s MAXLEN = 60")
            .cmd("XRANGE s - + COUNT 2")
            .cmd("XTRIM s MAXLEN 0")
            .cmd("XADD s 151-0 f 151"),
        Case::new("exact MINID and approximate MINID")
            .fill("s", 1, 250)
            .cmd("XTRIM s MINID ~ 150")
            .cmd("XTRIM s MINID 150")
            .cmd("XTRIM s MINID 150")
            .cmd("XTRIM s MINID ~ 251")
            .cmd("XTRIM s MINID 251-1"),
        Case::new("MINID counts a tombstone as a node's last element")
            .fill("s", 1, 200)
            .cmd("XDEL s 100-0 99-0")
            .cmd("XTRIM s MINID ~ 99")
            .cmd("XTRIM s MINID ~ 101")
            .cmd("XDEL s 200-0")
            .cmd("XTRIM s MINID 201")
            .cmd("XLEN s")
            .cmd("XADD s 201-0 f 201"),
        Case::new("LIMIT bounds ~ by live entries removed")
            .nodes(10, 4096)
            .fill("s", 1, 100)
            .cmd("XDEL s 11-0 12-0 13-0")
            .cmd("XTRIM s MAXLEN ~ 0 LIMIT 9")
            .cmd("XTRIM s MAXLEN ~ 0 LIMIT 10")
            .cmd("XTRIM s MAXLEN ~ 0 LIMIT 17")
            .cmd("XTRIM s MINID ~ 60 LIMIT 20"),
        Case::new("XDEL then XTRIM leaves max-deleted-entry-id alone")
            .fill("s", 1, 10)
            .cmd("XDEL s 3-0")
            .cmd("XTRIM s MAXLEN 2")
            .cmd("XTRIM s MINID 10"),
        Case::new("byte limit splits nodes (mixed value kinds)")
            .nodes(100, 300)
            .argv(&["XADD", "s", "1-0", "f", &"x".repeat(120)])
            .argv(&["XADD", "s", "2-0", "f", &"y".repeat(63)])
            .argv(&["XADD", "s", "3-0", "f", &"z".repeat(64)])
            .cmd("XADD s 4-0 f 123 g -5")
            .cmd("XADD s 5-0 f 007 g 9223372036854775808")
            .argv(&["XADD", "s", "6-0", "f", &"w".repeat(200)])
            .cmd("XADD s 7-0 f 1")
            .cmd("XTRIM s MAXLEN ~ 3")
            .cmd("XTRIM s MAXLEN 3"),
        Case::new("lowering the byte limit under an existing node")
            .nodes(0, 300)
            .cmd("XADD s 0-1 f x")
            .cmd("XADD s 0-2 f y")
            .cmd("CONFIG SET stream-node-max-bytes 50")
            .argv(&["XADD", "s", "0-3", "f", &"z".repeat(227)])
            .cmd("XADD s 0-4 f 1")
            .cmd("XRANGE s - +")
            .skip_if(redis_before_7_2, REDIS_7_0_SHRINK_CRASH),
        Case::new("an entry larger than the byte limit gets a node of its own")
            .nodes(100, 50)
            .argv(&["XADD", "s", "1-0", "f", &"x".repeat(100)])
            .argv(&["XADD", "s", "2-0", "f", &"x".repeat(100)])
            .cmd("XADD s 3-0 f 1")
            .cmd("XADD s 4-0 f 2"),
    ]
}

/// §3: id parsing, incomplete ids, `<ms>-*`, XADD's id rules.
fn ids() -> Vec<Case> {
    let max = u64::MAX;
    vec![
        Case::new("- and + are invalid in strict contexts")
            .cmd("XADD s - f v")
            .cmd("XADD s + f v")
            .cmd("XADD s 1-1 f v")
            .cmd("XDEL s -")
            .cmd("XDEL s +")
            .cmd("XSETID s -")
            .cmd("XSETID s +"),
        Case::new("strtoull quirks: +5-0, leading space, 6-+1, 018-0")
            .cmd("XADD s +5-0 f v")
            .argv(&["XADD", "s", " 7-1", "f", "v"])
            .cmd("XADD s 8-+1 f v")
            .cmd("XADD s 018-0 f v")
            .cmd("XADD s 19-007 f v")
            .cmd("XRANGE s +5 +18")
            .cmd("XRANGE s 05 018-0")
            .cmd("XDEL s +5-0"),
        Case::new("malformed ids")
            .cmd("XADD s 1-1-1 f v")
            .cmd("XADD s -1-0 f v")
            .cmd("XADD s 1- f v")
            .cmd("XADD s -1 f v")
            .cmd("XADD s 1-x f v")
            .cmd("XADD s x f v")
            .argv(&["XADD", "s", "", "f", "v"])
            .cmd("XADD s 18446744073709551616-0 f v")
            .cmd("XADD s 1-18446744073709551616 f v")
            .cmd("XADD s 99999999999999999999999-0 f v")
            .argv(&["XADD", "s", &format!("{}-0", "0".repeat(126)), "f", "v"])
            .argv(&["XADD", "s", &format!("{}-1", "0".repeat(126)), "f", "v"])
            .argv(&["XADD", "s", &format!("{}-1", "0".repeat(125)), "f", "v"])
            .cmd("XLEN s"),
        Case::new("0-0 is rejected before the key is created")
            .cmd("XADD s 0-0 f v")
            .cmd("XADD s 0 f v")
            .cmd("XADD s 0-00 f v")
            .cmd("XADD s MAXLEN 5 0-0 f v")
            .cmd("XLEN s")
            .cmd("XADD s 0-1 f v")
            .cmd("XADD s 0-0 f v"),
        Case::new("an explicit id must exceed last_id, even after XDEL of the top")
            .cmd("XADD s 5-5 f v")
            .cmd("XADD s 5-5 f v")
            .cmd("XADD s 5-4 f v")
            .cmd("XADD s 4 f v")
            .cmd("XDEL s 5-5")
            .cmd("XADD s 5-5 f v")
            .cmd("XADD s 5-6 f v")
            .cmd("XADD s 6 f v")
            .cmd("XADD s 6-0 f v"),
        Case::new("<ms>-* ids")
            .cmd("XADD s 0-* f v")
            .cmd("XADD s 0-* f v")
            .cmd("XADD s 5-* f v")
            .cmd("XADD s 5-* f v")
            .cmd("XADD s 4-* f v")
            .cmd("XADD s 5-3 f v")
            .cmd("XADD s 5-*-1 f v")
            .cmd("XADD s *-1 f v")
            .cmd("XADD s -* f v")
            .cmd(&format!("XADD s {max}-* f v"))
            .cmd(&format!("XADD s {max}-* f v"))
            .cmd("XRANGE s - +"),
        Case::new("<ms>-* when the seq is exhausted")
            .cmd(&format!("XADD s 5-{max} f v"))
            .cmd("XADD s 5-* f v")
            .cmd("XADD s 6-* f v")
            .skip_if(redis_before_7_2, SEQ_AUTO_EXHAUSTED),
        Case::new("the last possible id exhausts the stream")
            .cmd(&format!("XADD s {max}-{max} f v"))
            .cmd("XADD s * f v")
            .cmd(&format!("XADD s {max}-* f v"))
            .cmd(&format!("XADD s {max}-{max} f v"))
            .cmd("XRANGE s - +")
            .cmd(&format!("XRANGE s {max} {max}"))
            .cmd("XREVRANGE s + -"),
        Case::new("incomplete ids default the seq to 0 in XADD and XDEL")
            .cmd("XADD s 5 f v")
            .cmd("XADD s 6 f v")
            .cmd("XDEL s 5")
            .cmd("XDEL s 6-1")
            .cmd("XRANGE s - +"),
    ]
}

/// §3: range bounds, COUNT, missing keys.
fn ranges() -> Vec<Case> {
    let max = u64::MAX;
    let base = Case::new("")
        .cmd("XADD s 1-0 a 1")
        .cmd("XADD s 1-1 a 2")
        .cmd(&format!("XADD s 1-{max} a 3"))
        .cmd("XADD s 2-0 a 4")
        .cmd("XADD s 5-0 a 5")
        .cmd("XADD s 5-1 a 6")
        .cmd("XADD s 5-2 a 7")
        .cmd("XADD s 6-0 a 8");
    let with_base = |name: &'static str| Case {
        name,
        steps: base.steps.clone(),
        ..Case::new(name)
    };
    vec![
        with_base("incomplete bounds: start seq 0, end seq max")
            .cmd("XRANGE s 5 5")
            .cmd("XREVRANGE s 5 5")
            .cmd("XRANGE s 1 2")
            .cmd("XRANGE s 2 4")
            .cmd("XREVRANGE s 5 1")
            .cmd("XRANGE s 0 0"),
        with_base("exclusive bounds")
            .cmd("XRANGE s (1-0 +")
            .cmd("XRANGE s - (2-0")
            .cmd(&format!("XRANGE s (1-{max} +"))
            .cmd("XRANGE s (5 +")
            .cmd("XRANGE s - (5")
            .cmd("XRANGE s (5-0 (5-2")
            .cmd("XREVRANGE s (5-2 (5-0")
            .cmd("XREVRANGE s (6 -")
            .cmd("XRANGE s (5-1 (5-1")
            .cmd("XRANGE s (5-1 (5-2")
            .cmd("XRANGE s (0-0 (1-1"),
        with_base("invalid exclusive bounds")
            .cmd("XRANGE s (- +")
            .cmd("XRANGE s - (+")
            .cmd(&format!("XRANGE s ({max}-{max} +"))
            .cmd("XRANGE s - (0-0")
            .cmd("XREVRANGE s (0-0 -")
            .cmd(&format!("XREVRANGE s + ({max}-{max}"))
            .cmd("XRANGE s ( +")
            .cmd("XRANGE s (x +")
            .cmd(&format!("XRANGE nokey ({max}-{max} +")),
        with_base("start after end gives an empty array")
            .cmd("XRANGE s 6 1")
            .cmd("XREVRANGE s 1 6")
            .cmd("XRANGE s + -")
            .cmd("XRANGE s 5-2 5-1"),
        with_base("COUNT: 0 and negative give a null array, others limit")
            .cmd("XRANGE s - + COUNT 0")
            .cmd("XRANGE s - + COUNT -1")
            .cmd("XREVRANGE s + - COUNT 0")
            .cmd("XRANGE s - + COUNT 1")
            .cmd("XREVRANGE s + - COUNT 3")
            .cmd("XRANGE s - + COUNT 100")
            .cmd("XRANGE s - + COUNT 1 COUNT 2")
            .cmd("XRANGE s - + COUNT 9223372036854775807")
            .cmd("XRANGE s 6 1 COUNT 0"),
        with_base("COUNT and trailing token errors")
            .cmd("XRANGE s - + COUNT")
            .cmd("XRANGE s - + COUNT x")
            .cmd("XRANGE s - + FOO")
            .cmd("XRANGE s - + COUNT 1 FOO")
            .cmd("XRANGE s - + COUNT 9223372036854775808")
            .cmd("XRANGE s x +")
            .cmd("XRANGE s - x")
            .cmd("XRANGE s x + COUNT 0")
            .cmd("XRANGE s - + COUNT 0 FOO"),
        Case::new("COUNT 0 on a missing key: the key is looked up first")
            .cmd("XRANGE nokey - + COUNT 0")
            .cmd("XREVRANGE nokey + - COUNT -1")
            .cmd("XRANGE nokey 6 1 COUNT 0"),
        Case::new("missing keys")
            .cmd("XRANGE nokey - +")
            .cmd("XREVRANGE nokey + -")
            .cmd("XLEN nokey")
            .cmd("XDEL nokey 1-1")
            .cmd("XDEL nokey not-an-id")
            .cmd("XTRIM nokey MAXLEN 0"),
        Case::new("arity")
            .cmd("XRANGE s -")
            .cmd("XREVRANGE s")
            .cmd("XLEN")
            .cmd("XLEN s t")
            .cmd("XDEL s")
            .cmd("XSETID s"),
    ]
}

/// XDEL and the bookkeeping of §2.4.
fn xdel() -> Vec<Case> {
    vec![
        Case::new("XDEL counts live entries, ignores repeats and missing ids")
            .fill("s", 1, 5)
            .cmd("XDEL s 2-0 2-0 9-0")
            .cmd("XDEL s 2-0")
            .cmd("XDEL s 1-0")
            .cmd("XDEL s 5-0")
            .cmd("XADD s 6-0 f 6")
            .cmd("XRANGE s - +"),
        Case::new("XDEL parses every id before deleting any")
            .fill("s", 1, 5)
            .cmd("XDEL s 1-0 2-0 bad")
            .cmd("XDEL s 1-0 +")
            .cmd("XLEN s"),
        Case::new("XDEL of every entry frees the nodes; the key stays")
            .nodes(2, 4096)
            .fill("s", 1, 5)
            .cmd("XDEL s 1-0 2-0")
            .cmd("XDEL s 4-0")
            .cmd("XDEL s 3-0 5-0")
            .cmd("XLEN s")
            .cmd("XADD s 6-0 f 6"),
        Case::new("max-deleted-entry-id only grows")
            .fill("s", 1, 5)
            .cmd("XDEL s 4-0")
            .cmd("XDEL s 2-0")
            .cmd("XDEL s 5-0 1-0"),
        Case::new("tombstones count toward the node entry limit")
            .nodes(3, 4096)
            .fill("s", 1, 3)
            .cmd("XDEL s 2-0")
            .fill("s", 4, 7)
            .cmd("XDEL s 4-0 5-0 6-0")
            .fill("s", 8, 9),
    ]
}

/// §6.1: XSETID.
fn xsetid() -> Vec<Case> {
    vec![
        Case::new("XSETID on a missing key, after parsing")
            .cmd("XSETID nokey 1-1")
            .cmd("XSETID nokey 1-1 ENTRIESADDED -1")
            .cmd("XSETID nokey 1-1 MAXDELETEDID 2-0")
            .cmd("XSETID nokey 1-1 FOO 1")
            .cmd("XSETID nokey - "),
        Case::new("XSETID below the top live entry")
            .fill("s", 1, 3)
            .cmd("XSETID s 2-9")
            .cmd("XSETID s 3-0")
            .cmd("XSETID s 3")
            .cmd("XSETID s 10-0")
            .cmd("XADD s 10-0 f v")
            .cmd("XADD s 10-* f v"),
        Case::new("XSETID at or above max_deleted_entry_id")
            .fill("s", 1, 3)
            .cmd("XDEL s 3-0")
            .cmd("XSETID s 3-0")
            .cmd("XSETID s 4-0")
            .cmd("XADD s 4-0 f v")
            .cmd("XADD s 4-1 f v"),
        Case::new("XSETID below max_deleted_entry_id")
            .fill("s", 1, 3)
            .cmd("XDEL s 3-0")
            .cmd("XSETID s 2-5")
            .cmd("XSETID s 2-0")
            .cmd("XSETID s 1-0")
            .cmd("XDEL s 1-0 2-0")
            .cmd("XSETID s 0-5")
            .cmd("XADD s 3-0 f v")
            .skip_if(redis_before_7_2, XSETID_MAX_DELETED_CHECK),
        Case::new("XSETID ENTRIESADDED and MAXDELETEDID")
            .fill("s", 1, 3)
            .cmd("XSETID s 10-0 MAXDELETEDID 11-0")
            .cmd("XSETID s 10-0 ENTRIESADDED 2")
            .cmd("XSETID s 10-0 ENTRIESADDED -5")
            .cmd("XSETID s 10-0 ENTRIESADDED x")
            .cmd("XSETID s 10-0 ENTRIESADDED 3")
            .cmd("XSETID s 10-0 ENTRIESADDED 50 MAXDELETEDID 7-0")
            .cmd("XSETID s 10-0 MAXDELETEDID 10-0")
            .cmd("XSETID s 10-0 MAXDELETEDID 9-0")
            .cmd("XSETID s 10-0 MAXDELETEDID -")
            .cmd("XSETID s 10-0 MAXDELETEDID 5")
            .cmd("XSETID s 10-0 ENTRIESADDED 0")
            .cmd("XSETID s 10-0 ENTRIESADDED 4 ENTRIESADDED 5"),
        Case::new("XSETID stray arguments")
            .fill("s", 1, 3)
            .cmd("XSETID s 10-0 FOO")
            .cmd("XSETID s 10-0 ENTRIESADDED")
            .cmd("XSETID s 10-0 ENTRIESADDED 5 MAXDELETEDID")
            .cmd("XSETID s 10-0 5")
            .cmd("XSETID s abc"),
        Case::new("XSETID on an emptied stream can go back to 0-0")
            .fill("s", 1, 3)
            .cmd("XTRIM s MAXLEN 0")
            .cmd("XSETID s 1-0")
            .cmd("XSETID s 0-0")
            .cmd("XADD s 0-* f v")
            .cmd("XDEL s 0-1")
            .cmd("XSETID s 0-1")
            .cmd("XADD s 0-2 f v"),
        Case::new("XSETID on an emptied stream stops at max_deleted_entry_id")
            .cmd("XADD s 0-* f v")
            .cmd("XDEL s 0-1")
            .cmd("XSETID s 0-0")
            .cmd("XSETID s 0-1")
            .skip_if(redis_before_7_2, XSETID_MAX_DELETED_CHECK),
    ]
}

/// WRONGTYPE for every command, and an unknown command.
fn wrong_type_and_unknown() -> Vec<Case> {
    vec![
        Case::new("every stream command on a string key")
            .cmd("SET str x")
            .cmd("XADD str 1-1 f v")
            .cmd("XADD str NOMKSTREAM 1-1 f v")
            .cmd("XADD str 0-0 f v")
            .cmd("XADD str MAXLEN -1 1-1 f v")
            .cmd("XLEN str")
            .cmd("XRANGE str - +")
            .cmd("XREVRANGE str + -")
            .cmd("XRANGE str x +")
            .cmd("XRANGE str - + COUNT x")
            .cmd("XDEL str 1-1")
            .cmd("XDEL str bad")
            .cmd("XTRIM str MAXLEN 0")
            .cmd("XTRIM str MAXLEN -1")
            .cmd("XSETID str 1-1")
            .cmd("XSETID str 1-1 ENTRIESADDED -1"),
        Case::new("COUNT 0 on a string key: WRONGTYPE")
            .cmd("SET str x")
            .cmd("XRANGE str - + COUNT 0")
            .cmd("XREVRANGE str + - COUNT -5"),
        Case::new("an unknown command").cmd("XFOO s a b"),
    ]
}

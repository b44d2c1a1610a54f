//! `docs/reference/streams.md` §4.2: XREADGROUP's options and errors, `>` and history reads, NOACK,
//! COUNT, several streams, pending entries whose stream entries are gone (§4.9).

use crate::differential::case::Case;
use crate::differential::known_differences::{
    ENGINE_BUG_ERROR_TEXT_CRLF, READ_CREATES_CONSUMER, XREADGROUP_ERROR_TEXTS, redis_before_7_2,
};

/// A stream `s` of five entries and a group `g` at 0.
fn five_and_group(name: &'static str) -> Case {
    Case::new(name).fill("s", 1, 5).cmd("XGROUP CREATE s g 0")
}

pub fn all() -> Vec<Case> {
    vec![
        five_and_group("XREADGROUP option errors")
            .cmd("XREADGROUP GROUP g c STREAMS s")
            .cmd("XREADGROUP COUNT 1 BLOCK 0 STREAMS s >")
            .cmd("XREADGROUP COUNT 1 STREAMS s t > >")
            .cmd("XREADGROUP GROUP g c STREAMS s $")
            .cmd("XREADGROUP GROUP g c FOO STREAMS s >")
            .cmd("XREADGROUP GROUP g c COUNT x STREAMS s >")
            .cmd("XREADGROUP GROUP g c BLOCK -1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c BLOCK x STREAMS s >")
            .cmd("XREADGROUP GROUP g c BLOCK 1.5 STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s abc")
            .cmd("XREADGROUP GROUP g c STREAMS s -")
            .cmd("XREADGROUP GROUP nog c STREAMS s abc")
            .cmd("XREADGROUP GROUP g STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS")
            .cmd("XREADGROUP GROUP g c COUNT 1 COUNT")
            .cmd("XREADGROUP GROUP g c NOACK NOACK STREAMS s >")
            .cmd("XINFO GROUPS s"),
        five_and_group("XREADGROUP + and unbalanced lists")
            .cmd("XREADGROUP GROUP g c STREAMS s +")
            .cmd("XREADGROUP GROUP g c STREAMS s t >")
            .cmd("XREADGROUP GROUP g c STREAMS s t u > >")
            .cmd("XREADGROUP GROUP g c STREAMS s s > + >")
            .skip_if(redis_before_7_2, XREADGROUP_ERROR_TEXTS),
        five_and_group("NOGROUP on any listed stream fails the whole command")
            .cmd("XADD t 1-0 f v")
            .cmd("XREADGROUP GROUP g c STREAMS s t > >")
            .cmd("XREADGROUP GROUP g c STREAMS s nokey > >")
            .cmd("XREADGROUP GROUP g c STREAMS nokey s > >")
            .cmd("XREADGROUP GROUP nog c STREAMS s >")
            .cmd("XREADGROUP GROUP g c STREAMS s t 0 0")
            .cmd("XINFO GROUPS s")
            .cmd("XPENDING s g"),
        five_and_group("> delivers new entries into the PEL, COUNT per stream")
            .cmd("XREADGROUP GROUP g c1 COUNT 2 STREAMS s >")
            .cmd("XREADGROUP GROUP g c2 COUNT 0 STREAMS s >")
            .cmd("XREADGROUP GROUP g c1 STREAMS s >")
            .cmd("XADD s 6-0 f 6")
            .cmd("XREADGROUP GROUP g c1 COUNT -5 STREAMS s >")
            .cmd("XPENDING s g")
            .cmd("XPENDING s g - + 10"),
        Case::new("the consumer is created even when nothing is read")
            .fill("s", 1, 2)
            .cmd("XGROUP CREATE s g $")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XREADGROUP GROUP g c2 STREAMS s 0")
            .cmd("XREADGROUP GROUP g c3 BLOCK 10 STREAMS s >")
            .cmd("XINFO GROUPS s")
            .skip_if(redis_before_7_2, READ_CREATES_CONSUMER),
        five_and_group("> skips a tombstone after the cursor and an all-deleted tail")
            .cmd("XDEL s 2-0")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s >")
            .cmd("XDEL s 4-0 5-0")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XADD s 6-0 f 6")
            .cmd("XREADGROUP GROUP g c STREAMS s >"),
        five_and_group("NOACK advances the cursor without pending entries")
            .cmd("XREADGROUP GROUP g c NOACK COUNT 2 STREAMS s >")
            .cmd("XPENDING s g")
            .cmd("XINFO GROUPS s")
            .cmd("XREADGROUP GROUP g c STREAMS s 0")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s >")
            .cmd("XREADGROUP GROUP g c noack STREAMS s >")
            .cmd("XPENDING s g - + 10"),
        five_and_group("history: the consumer's own PEL after an id, counts grow")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XACK s g 2-0")
            .cmd("XREADGROUP GROUP g c STREAMS s 0")
            .cmd("XREADGROUP GROUP g c COUNT 2 STREAMS s 1-0")
            .cmd("XREADGROUP GROUP g c STREAMS s 3")
            .cmd("XREADGROUP GROUP g c STREAMS s 5-0")
            .cmd("XREADGROUP GROUP g c STREAMS s 99-0")
            .cmd("XREADGROUP GROUP g other STREAMS s 0")
            .cmd("XREADGROUP GROUP g c BLOCK 100 STREAMS s 99")
            .cmd("XREADGROUP GROUP g c NOACK STREAMS s 0")
            .cmd("XPENDING s g - + 10"),
        five_and_group("history with deleted and trimmed entries replies [id, nil]")
            .cmd("XREADGROUP GROUP g c STREAMS s >")
            .cmd("XDEL s 2-0 4-0")
            .cmd("XREADGROUP GROUP g c STREAMS s 0")
            .cmd("XTRIM s MAXLEN 1")
            .cmd("XREADGROUP GROUP g c COUNT 3 STREAMS s 0")
            .cmd("XPENDING s g")
            .cmd("XDEL s 5-0")
            .cmd("XREADGROUP GROUP g c STREAMS s 0"),
        Case::new("several streams: served ones only, in argument order, repeats included")
            .fill("s", 1, 3)
            .fill("t", 1, 3)
            .cmd("XGROUP CREATE s g 0")
            .cmd("XGROUP CREATE t g $")
            .cmd("XGROUP CREATE u g $ MKSTREAM")
            // The consumer exists everywhere: see READ_CREATES_CONSUMER.
            .cmd("XGROUP CREATECONSUMER t g c")
            .cmd("XGROUP CREATECONSUMER u g c")
            .cmd("XREADGROUP GROUP g c COUNT 1 STREAMS s t u > > >")
            .cmd("XADD t 4-0 f 4")
            .cmd("XREADGROUP GROUP g c STREAMS u t s > > >")
            .cmd("XREADGROUP GROUP g c STREAMS s t 0 >")
            .cmd("XREADGROUP GROUP g c STREAMS s s > 0")
            .cmd("XREADGROUP GROUP g c STREAMS s s 0 0")
            .cmd("XREADGROUP GROUP g c STREAMS t u 0 >")
            .cmd("XREADGROUP GROUP g c STREAMS u u > >"),
        Case::new("option words in any case, options in any order")
            .fill("s", 1, 3)
            .cmd("XGROUP CREATE s g 0")
            .cmd("xreadgroup count 1 group g c noack streams s >")
            .cmd("XREADGROUP NOACK COUNT 1 GROUP g c STREAMS s >")
            .cmd("XREADGROUP GROUP g c GROUP g c2 STREAMS s >")
            .cmd("XINFO GROUPS s"),
        Case::new("keys and group names are binary safe")
            .argv(&["XADD", "k\r\n\0", "1-0", "f", "v"])
            .argv(&["XGROUP", "CREATE", "k\r\n\0", "g\r\nx", "0"])
            .argv(&[
                "XREADGROUP",
                "GROUP",
                "g\r\nx",
                "c\0",
                "STREAMS",
                "k\r\n\0",
                ">",
            ])
            .argv(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "k\r\n\0", ">"])
            .argv(&["XPENDING", "k\r\n\0", "g\r\nx", "-", "+", "5"])
            .argv(&["XCLAIM", "k\r\n\0", "g\r\nx", "c", "0", "1-0", "x\ry"])
            .argv(&["XGROUP", "x\ny"])
            .engine_bug(ENGINE_BUG_ERROR_TEXT_CRLF),
    ]
}

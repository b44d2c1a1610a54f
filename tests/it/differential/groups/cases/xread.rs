//! `docs/reference/streams.md` §5.1 without blocking: XREAD's options and errors, `$`, `+`, COUNT,
//! several keys. A BLOCK that would wait is given 10 ms: the server times out with a null array,
//! which is what the engine's non-blocking `execute` replies at once.

use crate::differential::case::Case;
use crate::differential::known_differences::{
    XREAD_PLUS_8_8, XREAD_UNBALANCED_TEXT, lacks_xread_plus_8_8, lacks_xread_unbalanced_text,
};

pub fn all() -> Vec<Case> {
    vec![
        Case::new("XREAD option errors")
            .fill("s", 1, 2)
            .cmd("XREAD STREAMS s")
            .cmd("XREAD GROUP g c STREAMS s 0")
            .cmd("XREAD NOACK STREAMS s 0")
            .cmd("XREAD STREAMS s >")
            .cmd("XREAD COUNT x STREAMS s 0")
            .cmd("XREAD BLOCK -1 STREAMS s 0")
            .cmd("XREAD BLOCK x STREAMS s 0")
            .cmd("XREAD FOO STREAMS s 0")
            .cmd("XREAD STREAMS s abc")
            .cmd("XREAD STREAMS s -")
            .cmd("XREAD STREAMS s (1-0")
            .cmd("XREAD COUNT 1 COUNT")
            .cmd("XREAD COUNT 1 BLOCK 0"),
        Case::new("XREAD unbalanced lists")
            .fill("s", 1, 2)
            .cmd("XREAD STREAMS s t 0")
            .cmd("XREAD COUNT 1 STREAMS s t u 0 0")
            .skip_if(lacks_xread_unbalanced_text, XREAD_UNBALANCED_TEXT),
        Case::new("XREAD reads after the id: COUNT, incomplete ids, deleted entries")
            .fill("s", 1, 5)
            .cmd("XREAD STREAMS s 0")
            .cmd("XREAD COUNT 2 STREAMS s 0")
            .cmd("XREAD COUNT 0 STREAMS s 0")
            .cmd("XREAD COUNT -1 STREAMS s 0")
            .cmd("XREAD STREAMS s 2")
            .cmd("XREAD STREAMS s 2-0")
            .cmd("XREAD STREAMS s 5-0")
            .cmd("XREAD STREAMS s 18446744073709551615-18446744073709551615")
            .cmd("XDEL s 5-0")
            .cmd("XREAD STREAMS s 4-0")
            .cmd("XREAD STREAMS s 3-0")
            .cmd("xread count 1 streams s 0"),
        Case::new("XREAD $ reads nothing; BLOCK on it times out")
            .fill("s", 1, 2)
            .cmd("XREAD STREAMS s $")
            .cmd("XREAD STREAMS nokey $")
            .cmd("XREAD BLOCK 10 STREAMS s $")
            .cmd("XREAD BLOCK 10 STREAMS nokey 0")
            .cmd("XREAD BLOCK 10 STREAMS s 0")
            .cmd("XREAD STREAMS s s $ 0"),
        Case::new("XREAD several keys: served ones only, in argument order, repeats included")
            .fill("s", 1, 3)
            .fill("t", 1, 2)
            .cmd("XREAD STREAMS s t 0 0")
            .cmd("XREAD COUNT 1 STREAMS t s 0 0")
            .cmd("XREAD STREAMS s nokey t 0 0 2-0")
            .cmd("XREAD STREAMS s s 0 2")
            .cmd("XREAD STREAMS nokey t 0 $"),
        Case::new("XREAD checks every key's type before serving")
            .fill("s", 1, 2)
            .cmd("SET str x")
            .cmd("XREAD STREAMS s str 0 0")
            .cmd("XREAD STREAMS str s 0 0")
            .cmd("XREAD STREAMS s str 0 abc"),
        Case::new("XREAD + reads the last live entry")
            .fill("s", 1, 3)
            .cmd("XREAD STREAMS s +")
            .cmd("XREAD COUNT 5 STREAMS s +")
            .cmd("XREAD STREAMS nokey +")
            .cmd("XREAD STREAMS s nokey s + + 0")
            .cmd("XDEL s 3-0")
            .cmd("XREAD STREAMS s +")
            .cmd("XADD s 4-0 f 4")
            .cmd("XREAD BLOCK 10 STREAMS s +")
            .cmd("XADD e 1-0 f v")
            .cmd("XDEL e 1-0")
            .cmd("XREAD STREAMS e +")
            .skip_if(lacks_xread_plus_8_8, XREAD_PLUS_8_8),
        Case::new("XREAD + on an empty stream at 0-0 reads nothing")
            .cmd("XGROUP CREATE e g $ MKSTREAM")
            .cmd("XREAD STREAMS e +")
            .cmd("XREAD STREAMS nokey e + +")
            .skip_if(lacks_xread_plus_8_8, XREAD_PLUS_8_8),
    ]
}

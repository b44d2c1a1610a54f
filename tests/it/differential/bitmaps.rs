//! The bitmap commands against Redis 8.8 over the wire, RESP2 and RESP3: SETBIT, GETBIT,
//! BITCOUNT, BITPOS, BITOP (Redis 8.2's DIFF, DIFF1, ANDOR and ONE too), BITFIELD and
//! BITFIELD_RO, their replies, the strings they leave and their errors in Redis's order.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<&'static str> {
    vec![
        "XADD s 1-1 f v",
        // SETBIT, GETBIT.
        "SETBIT b 7 1",
        "SETBIT b 7 1",
        "SETBIT b 7 0",
        "SETBIT b 100 1",
        "GET b",
        "STRLEN b",
        "OBJECT ENCODING b",
        "GETBIT b 100",
        "GETBIT b 99",
        "GETBIT b 100000",
        "GETBIT nokey 3",
        "SETBIT b -1 1",
        "SETBIT b abc 1",
        "SETBIT b 4294967296 1",
        "SETBIT b 1 2",
        "SETBIT b 1 -1",
        "SETBIT b 1 x",
        "SETBIT b abc x",
        "SETBIT s 1 1",
        "SETBIT s 1 x",
        "GETBIT s 1",
        "GETBIT s x",
        "GETBIT nokey -1",
        "SET n 12",
        "SETBIT n 0 0",
        "OBJECT ENCODING n",
        "GETBIT n 2",
        "SET n2 12",
        "GETBIT n2 2",
        "OBJECT ENCODING n2",
        // BITCOUNT.
        "SET c foobar",
        "BITCOUNT c",
        "BITCOUNT c 0 0",
        "BITCOUNT c 1 1",
        "BITCOUNT c 1 1 BYTE",
        "BITCOUNT c 5 30 BIT",
        "BITCOUNT c -3 -1 BIT",
        "BITCOUNT c -1 -3",
        "BITCOUNT c 3 1",
        "BITCOUNT c 0 -100",
        "BITCOUNT c -100 100",
        "BITCOUNT c 0",
        "BITCOUNT c 0 1 FOO",
        "BITCOUNT c a 1",
        "BITCOUNT c 0 a",
        "BITCOUNT c 0 1 BIT x",
        "BITCOUNT nokey",
        "BITCOUNT nokey 0 1",
        "BITCOUNT s",
        "BITCOUNT s 0 1",
        "BITCOUNT s 0",
        "SET e ''",
        "BITCOUNT e",
        "BITCOUNT e 0 -1",
        "BITCOUNT n",
        // BITPOS.
        "SET p \\xff\\xf0\\x00",
        "BITPOS p 0",
        "BITPOS p 1",
        "BITPOS p 1 2",
        "BITPOS p 0 0 0",
        "BITPOS p 0 1 1",
        "BITPOS p 0 8 -1 BIT",
        "BITPOS p 1 7 15 BIT",
        "BITPOS p 0 0 3 BIT",
        "BITPOS p 1 -1 -1 BIT",
        "SET ones \\xff\\xff",
        "BITPOS ones 0",
        "BITPOS ones 0 0",
        "BITPOS ones 0 0 -1",
        "BITPOS ones 0 0 -1 BIT",
        "BITPOS ones 0 0 99 BIT",
        "BITPOS ones 1 3 1",
        "BITPOS nokey 0",
        "BITPOS nokey 1",
        "BITPOS nokey 1 0 1",
        "BITPOS e 0",
        "BITPOS e 1",
        "BITPOS p 2",
        "BITPOS p x",
        "BITPOS p 1 x",
        "BITPOS p 1 0 x",
        "BITPOS p 1 0 1 FOO",
        "BITPOS p 1 x 1 FOO",
        "BITPOS p 1 0 x FOO",
        "BITPOS p 1 0 1 BIT x",
        "BITPOS s 1",
        "BITPOS s 2",
        // BITOP.
        "SET k1 foobar",
        "SET k2 abcdef",
        "SET k3 \\x0f",
        "BITOP AND d k1 k2",
        "GET d",
        "BITOP OR d k1 k2 k3",
        "GET d",
        "BITOP XOR d k1 k2 k3 nokey",
        "GET d",
        "BITOP NOT d k3",
        "GET d",
        "OBJECT ENCODING d",
        "BITOP DIFF d k1 k2 k3",
        "GET d",
        "BITOP DIFF1 d k1 k2 k3",
        "GET d",
        "BITOP ANDOR d k1 k2 k3",
        "GET d",
        "BITOP ONE d k1 k2 k3",
        "GET d",
        "BITOP ONE d k1",
        "GET d",
        "BITOP one d k1 k2",
        "GET d",
        "BITOP AND d nokey nokey2",
        "EXISTS d",
        "BITOP AND d nokey",
        "BITOP NOT d k1 k2",
        "BITOP NOT d",
        "BITOP DIFF d k1",
        "BITOP diff1 d k1",
        "BITOP andor d k1",
        "BITOP FOO d k1",
        "BITOP FOO d",
        "BITOP AND d k1 s",
        "BITOP AND s k1",
        "TYPE s",
        "SET ex v EX 100",
        "BITOP OR ex k1",
        "TTL ex",
        "BITOP AND d",
        // BITFIELD, BITFIELD_RO.
        "BITFIELD f SET i8 0 100 GET u4 0",
        "BITFIELD f INCRBY i8 0 100",
        "BITFIELD f OVERFLOW SAT INCRBY i8 0 100",
        "BITFIELD f OVERFLOW FAIL INCRBY i8 0 100 GET i8 0",
        "BITFIELD f OVERFLOW WRAP INCRBY u2 100 1 INCRBY u2 100 1 INCRBY u2 100 1 INCRBY u2 100 1",
        "BITFIELD f SET u8 #1 200 GET u8 8 GET i8 #1",
        "BITFIELD f SET i64 0 -1 GET i64 0 GET u63 1",
        "BITFIELD f INCRBY i64 0 9223372036854775807",
        "BITFIELD f OVERFLOW SAT INCRBY i64 0 -9223372036854775808 INCRBY i64 0 -1",
        "BITFIELD f SET u8 0 -1 OVERFLOW SAT SET u8 8 -1 SET u8 16 300 OVERFLOW FAIL SET u8 24 300",
        "BITFIELD f SET u1 0 3 SET i1 1 -5",
        "GET f",
        "STRLEN f",
        "BITFIELD nokey GET u8 0 GET i16 #3",
        "EXISTS nokey",
        "BITFIELD new OVERFLOW FAIL INCRBY u8 0 300",
        "EXISTS new",
        "GET new",
        "BITFIELD f",
        "BITFIELD f GET u64 0",
        "BITFIELD f GET i65 0",
        "BITFIELD f GET x8 0",
        "BITFIELD f GET i0 0",
        "BITFIELD f GET u8 -1",
        "BITFIELD f GET u8 #-1",
        "BITFIELD f GET u8 4294967296",
        "BITFIELD f SET u8 0 abc",
        "BITFIELD f SET u8 0",
        "BITFIELD f GET u8",
        "BITFIELD f OVERFLOW FOO",
        "BITFIELD f OVERFLOW",
        "BITFIELD f FOO u8 0",
        "BITFIELD f GET u8 0 OVERFLOW FOO GET x1 0",
        "BITFIELD f GET x1 0 OVERFLOW FOO",
        "BITFIELD s GET u8 0",
        "BITFIELD s SET u8 0 1",
        "BITFIELD s SET x8 0 1",
        "BITFIELD_RO f GET u8 0 GET i4 4",
        "BITFIELD_RO f SET u8 0 1",
        "BITFIELD_RO f SET u8 0 x",
        "BITFIELD_RO s GET u8 0",
        "BITFIELD_RO s SET u8 0 1",
        "BITFIELD_RO nokey GET u8 0",
        "BITFIELD_RO f",
        // Arity.
        "SETBIT b 1",
        "GETBIT b",
        "BITCOUNT",
        "BITPOS b",
        "BITOP AND d",
        "BITFIELD",
        "BITFIELD_RO",
    ]
}

/// Splits a line on spaces; `''` is the empty argument, `\xHH` a byte.
fn argv(line: &str) -> Vec<Vec<u8>> {
    let parts: Vec<&str> = line.split(' ').collect();
    let mut out = words(&parts);
    for (word, part) in out.iter_mut().zip(&parts) {
        if *part == "''" {
            word.clear();
        } else if part.contains("\\x") {
            *word = unescape(part);
        }
    }
    out
}

fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') && i + 3 < b.len() + 1 {
            let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn bitmap_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! The sorted set commands against Redis 8.8 over the wire, RESP2 and RESP3: ZADD and its
//! options, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, ZSCAN,
//! the ZRANGE family, ZRANGESTORE, ZREMRANGEBY*, ZPOPMIN, ZPOPMAX, ZMPOP, the blocking pops
//! when they serve at once, ZUNION, ZINTER, ZDIFF, their STORE forms, ZRANDMEMBER (its deterministic answers), ZINTERCARD, SORT, GEOADD, GEOPOS, GEODIST, GEOHASH, GEORADIUS(BYMEMBER)(_RO), GEOSEARCH(STORE) with sorted
//! answers, TYPE, OBJECT ENCODING over the conversions:
//! replies and errors byte for byte, score texts included.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        "SET str v",
        // ZADD and its options.
        "ZADD z 1 a 2 b 3 c",
        "ZADD z 1.5 d 0.1 e 1e300 f inf g -inf h -0 i",
        "ZRANGE z 0 -1 WITHSCORES",
        "ZSCORE z i",
        "ZSCORE z f",
        "ZSCORE z e",
        "ZSCORE z nokey",
        "ZSCORE nokey a",
        "ZSCORE str a",
        "ZADD z NX 10 a 10 new",
        "ZADD z XX CH 11 a 11 other",
        "ZADD z GT CH 5 b 0 c",
        "ZADD z LT CH 5 b 0 c",
        "ZADD z XX GT 100 a",
        "ZADD z NX XX 1 a",
        "ZADD z GT LT 1 a",
        "ZADD z NX GT 1 a",
        "ZADD z INCR 1 a 2 b",
        "ZADD z INCR 2.5 a",
        "ZADD z INCR NX 2.5 a",
        "ZADD z INCR XX 2.5 nope",
        "ZADD z INCR GT -1 a",
        "ZADD z 1",
        "ZADD z 1 a 2",
        "ZADD z",
        "ZADD z nan a",
        "ZADD z abc a",
        "ZADD z ' 1' a",
        "ZADD z 1e400 a",
        "ZADD z +inf plus",
        "ZADD z INCR -inf g",
        "ZADD str 1 a",
        "ZADD z CH 1 a 1 b",
        "ZADD xxkey XX 1 a",
        "EXISTS xxkey",
        "ZINCRBY z 1 a",
        "ZINCRBY z 0.1 newmember",
        "ZINCRBY z abc a",
        "ZINCRBY str 1 a",
        "ZINCRBY z -inf g",
        "ZINCRBY inc 1e-7 m",
        "ZSCORE inc m",
        "ZINCRBY inc 123456789012 m",
        "ZSCORE inc m",
        "ZINCRBY inc 1e20 m",
        "ZSCORE inc m",
        "ZMSCORE z a nope b",
        "ZMSCORE nokey a",
        "ZMSCORE str a",
        "ZCARD z",
        "ZCARD nokey",
        "ZCARD str",
        "TYPE z",
        "OBJECT ENCODING z",
        // ZRANK.
        "ZRANK z a",
        "ZREVRANK z a",
        "ZRANK z a WITHSCORE",
        "ZREVRANK z h WITHSCORE",
        "ZRANK z nope",
        "ZRANK z nope WITHSCORE",
        "ZRANK nokey a WITHSCORE",
        "ZRANK z a foo",
        "ZRANK z a WITHSCORE x",
        "ZRANK str a",
        // Ranges.
        "ZRANGE z 0 -1",
        "ZRANGE z 2 4 WITHSCORES",
        "ZRANGE z -3 -1 REV WITHSCORES",
        "ZRANGE z 5 2",
        "ZRANGE z 100 200",
        "ZRANGE z 0 -1 LIMIT 0 1",
        "ZRANGE z 0 -1 BYLEX WITHSCORES",
        "ZRANGE z a b",
        "ZRANGE z 0 -1 FOO",
        "ZRANGE z 0 1 LIMIT 0",
        "ZRANGE z 0 -1 LIMIT 0 -1",
        "ZRANGE z (1 3 BYSCORE WITHSCORES",
        "ZRANGE z 3 (1 BYSCORE REV WITHSCORES",
        "ZRANGE z -inf +inf BYSCORE LIMIT 1 2",
        "ZRANGE z -inf +inf BYSCORE LIMIT -1 2",
        "ZRANGE z -inf +inf BYSCORE LIMIT 0 0",
        "ZRANGE z +inf -inf BYSCORE REV LIMIT 0 0",
        "ZRANGEBYLEX lex - + LIMIT 0 0",
        "ZRANGESTORE dst z -inf +inf BYSCORE LIMIT 0 0",
        "ZRANGE z -inf +inf BYSCORE LIMIT 1 -1 WITHSCORES",
        "ZRANGE z +inf -inf BYSCORE REV LIMIT 2 3 WITHSCORES",
        "ZRANGE z x 1 BYSCORE",
        "ZRANGE z (x 1 BYSCORE",
        "ZRANGE z nan 1 BYSCORE",
        "ZRANGE z 1 1 BYSCORE",
        "ZRANGE z (1 1 BYSCORE",
        "ZRANGE nokey 0 -1",
        "ZRANGE str 0 -1",
        "ZRANGE z 0 -1 BYSCORE BYLEX",
        "ZRANGE z 0 -1 REV REV",
        "ZREVRANGE z 0 2 WITHSCORES",
        "ZREVRANGE z 0 2 REV",
        "ZRANGEBYSCORE z 1 3 WITHSCORES",
        "ZRANGEBYSCORE z -inf inf LIMIT 2 2",
        "ZRANGEBYSCORE z 1 3 BYSCORE",
        "ZREVRANGEBYSCORE z 3 1 WITHSCORES",
        "ZREVRANGEBYSCORE z inf -inf LIMIT 0 3",
        "ZCOUNT z 1 3",
        "ZCOUNT z (1 (3",
        "ZCOUNT z -inf +inf",
        "ZCOUNT z a b",
        "ZCOUNT nokey 1 2",
        "ZCOUNT str 1 2",
        // Lex ranges over equal scores.
        "ZADD lex 0 a 0 b 0 c 0 d 0 e 0 f 0 g",
        "ZRANGEBYLEX lex - +",
        "ZRANGEBYLEX lex [b (e",
        "ZRANGEBYLEX lex (b [e LIMIT 1 2",
        "ZREVRANGEBYLEX lex + -",
        "ZREVRANGEBYLEX lex [e (b",
        "ZRANGE lex [c + BYLEX",
        "ZRANGE lex + [c BYLEX REV LIMIT 0 2",
        "ZRANGEBYLEX lex b e",
        "ZRANGEBYLEX lex - + WITHSCORES",
        "ZRANGEBYLEX lex + -",
        "ZRANGEBYLEX lex [e [b",
        "ZLEXCOUNT lex - +",
        "ZLEXCOUNT lex [b [d",
        "ZLEXCOUNT lex (b (b",
        "ZLEXCOUNT lex x y",
        "ZLEXCOUNT nokey - +",
        "ZLEXCOUNT str - +",
        // ZRANGESTORE.
        "ZRANGESTORE dst z 0 2",
        "ZRANGE dst 0 -1 WITHSCORES",
        "OBJECT ENCODING dst",
        "ZRANGESTORE dst z 1 3 BYSCORE LIMIT 0 1",
        "ZRANGE dst 0 -1 WITHSCORES",
        "ZRANGESTORE dst lex [b [d BYLEX REV",
        "ZRANGE dst 0 -1",
        "ZRANGESTORE dst z 100 200",
        "EXISTS dst",
        "ZRANGESTORE dst nokey 0 -1",
        "ZRANGESTORE dst z 0 -1 WITHSCORES",
        "ZRANGESTORE dst str 0 -1",
        "ZRANGESTORE str z 0 0",
        "TYPE str",
        "SET str v",
        // Removal.
        "ZREM z a nope b",
        "ZREM z nope",
        "ZREM nokey a",
        "ZREM str a",
        "ZADD one 1 a",
        "ZREM one a a",
        "EXISTS one",
        "ZADD r 1 a 2 b 3 c 4 d 5 e 6 f",
        "ZREMRANGEBYRANK r 0 1",
        "ZREMRANGEBYRANK r -1 -1",
        "ZREMRANGEBYRANK r 10 20",
        "ZRANGE r 0 -1",
        "ZREMRANGEBYRANK r a 1",
        "ZREMRANGEBYSCORE r (3 4",
        "ZREMRANGEBYSCORE r x 4",
        "ZRANGE r 0 -1",
        "ZREMRANGEBYLEX lex [a (c",
        "ZREMRANGEBYLEX lex a c",
        "ZRANGE lex 0 -1",
        "ZREMRANGEBYSCORE r -inf +inf",
        "EXISTS r",
        "ZREMRANGEBYRANK nokey 0 -1",
        "ZREMRANGEBYRANK str 0 -1",
        // Pops.
        "ZADD p 1 a 2 b 3 c 4 d 5 e",
        "ZPOPMIN p",
        "ZPOPMAX p",
        "ZPOPMIN p 2",
        "ZPOPMAX p 0",
        "ZPOPMIN p -1",
        "ZPOPMIN p x",
        "ZPOPMIN p 1 2",
        "ZPOPMAX p 10",
        "EXISTS p",
        "ZPOPMIN nokey",
        "ZPOPMIN nokey 3",
        "ZPOPMIN str",
        "ZADD p 1 a 2 b 3 c",
        "ZMPOP 2 nokey p MIN",
        "ZMPOP 2 nokey p MAX COUNT 5",
        "ZMPOP 1 nokey MIN",
        "ZMPOP 0 p MIN",
        "ZMPOP 1 p",
        "ZMPOP 1 p MID",
        "ZMPOP 1 p MIN COUNT 0",
        "ZMPOP 1 p MIN COUNT 1 COUNT 1",
        "ZMPOP 1 str MIN",
        "ZADD p 1 a 2 b 3 c",
        "BZPOPMIN nokey p 0",
        "BZPOPMAX p 0",
        "BZMPOP 0 1 p MIN COUNT 3",
        "BZPOPMIN p x",
        "BZPOPMIN p -1",
        "BZMPOP 0 0 p MIN",
        "BZPOPMIN str 0",
        // ZSCAN.
        "ZADD s 1 a 2.5 b",
        "ZSCAN s 0",
        "ZSCAN s 0 MATCH a*",
        "ZSCAN nokey 0",
        "ZSCAN s x",
        "ZSCAN str 0",
        // Algebra; sets count as scores of 1.
        "ZADD u1 1 a 2 b 3 c",
        "ZADD u2 10 b 20 c 30 d",
        "SADD us c d e",
        "ZUNION 2 u1 u2",
        "ZUNION 2 u1 u2 WITHSCORES",
        "ZUNION 3 u1 u2 us WEIGHTS 1 2 3 WITHSCORES",
        "ZUNION 2 u1 u2 AGGREGATE MIN WITHSCORES",
        "ZUNION 2 u1 u2 AGGREGATE MAX WITHSCORES",
        "ZUNION 2 u1 u2 AGGREGATE COUNT WITHSCORES",
        "ZUNION 2 u1 u2 WEIGHTS 2 inf AGGREGATE COUNT WITHSCORES",
        "ZUNION 2 u1 nokey WITHSCORES",
        "ZINTER 2 u1 u2 WITHSCORES",
        "ZINTER 3 u1 u2 us WITHSCORES",
        "ZINTER 2 u1 nokey",
        "ZINTER 2 u1 u2 WEIGHTS 0 inf WITHSCORES",
        "ZDIFF 2 u1 u2 WITHSCORES",
        "ZDIFF 2 u2 us WITHSCORES",
        "ZDIFF 1 u1",
        "ZDIFF 2 u1 u1",
        "ZDIFF 2 u1 u2 WEIGHTS 1 1",
        "ZUNION 0 u1",
        "ZUNION -1 u1",
        "ZUNION x u1",
        "ZUNION 3 u1 u2",
        "ZUNION 2 u1 str",
        "ZUNION 2 u1 u2 WEIGHTS 1",
        "ZUNION 2 u1 u2 WEIGHTS 1 x",
        "ZUNION 2 u1 u2 AGGREGATE AVG",
        "ZUNION 2 u1 u2 AGGREGATE",
        "ZUNION 2 u1 u2 FOO",
        "ZUNIONSTORE ud 2 u1 u2",
        "ZRANGE ud 0 -1 WITHSCORES",
        "OBJECT ENCODING ud",
        "ZUNIONSTORE ud 2 u1 u2 WITHSCORES",
        "ZINTERSTORE ud 2 u1 u2 WEIGHTS 1 -1",
        "ZRANGE ud 0 -1 WITHSCORES",
        "ZDIFFSTORE ud 2 u1 u2",
        "ZRANGE ud 0 -1 WITHSCORES",
        "ZINTERSTORE ud 2 u1 nokey",
        "EXISTS ud",
        "ZINTERSTORE ud 0 u1",
        "ZDIFFSTORE us 1 u1",
        "TYPE us",
        "ZINTERCARD 2 u1 u2",
        "ZINTERCARD 2 u1 u2 LIMIT 1",
        "ZINTERCARD 2 u1 u2 LIMIT 0",
        "ZINTERCARD 2 u1 u2 LIMIT -1",
        "ZINTERCARD 2 u1 u2 WITHSCORES",
        "ZINTERCARD 0 u1",
        "ZINTERCARD 1 str",
        // SORT over sorted sets and sets.
        "ZADD so 3 x 1 10 2 2",
        "SORT so",
        "SORT so BY nosort",
        "SORT so BY nosort LIMIT 1 2",
        "SORT so ALPHA DESC",
        "SORT so BY nosort STORE sod",
        "LRANGE sod 0 -1",
        "SADD sset 3 1 2",
        "SORT sset",
        "SORT sset BY nosort STORE sod",
        "LRANGE sod 0 -1",
        // ZRANDMEMBER where the answer is not random.
        "ZRANDMEMBER u1 10",
        "ZRANDMEMBER u1 3 WITHSCORES",
        "ZRANDMEMBER u1 0",
        "ZRANDMEMBER nokey",
        "ZRANDMEMBER nokey 3",
        "ZRANDMEMBER str",
        "ZRANDMEMBER u1 x",
        "ZRANDMEMBER u1 -9223372036854775808",
        "ZRANDMEMBER u1 1 FOO",
        "ZRANDMEMBER u1 1 WITHSCORES x",
        "ZRANDMEMBER u1 -9223372036854775807 WITHSCORES",
        "ZRANDMEMBER u1 9223372036854775807 WITHSCORES",
        // Geo points on sorted sets.
        "GEOADD sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
        "GEOADD sicily NX CH 13.361389 38.115556 Palermo 2 3 Other",
        "GEOADD sicily XX CH 13.5 38.1 Palermo 0 0 Nope",
        "ZSCORE sicily Catania",
        "ZRANGE sicily 0 -1 WITHSCORES",
        "GEOPOS sicily Palermo Catania nope",
        "GEOPOS nokey a",
        "GEOHASH sicily Palermo Catania nope",
        "GEOHASH nokey a",
        "GEODIST sicily Palermo Catania",
        "GEODIST sicily Palermo Catania km",
        "GEODIST sicily Palermo Catania MI",
        "GEODIST sicily Palermo Catania ft",
        "GEODIST sicily Palermo nope",
        "GEODIST nokey a b",
        "GEODIST sicily Palermo Catania yards",
        "GEODIST sicily Palermo Catania km x",
        "GEODIST str a b",
        "GEOPOS str a",
        "GEOADD edge 180 85.05112878 ne -180 -85.05112878 sw 0 0 zero",
        "GEOPOS edge ne sw zero",
        "GEOHASH edge ne sw zero",
        "GEODIST edge ne sw",
        "GEOADD sicily 181 10 bad",
        "GEOADD sicily 10 86 bad",
        "GEOADD sicily x 10 bad",
        "GEOADD sicily 10 10",
        "GEOADD sicily NX XX 10 10 a",
        "GEOADD sicily NX",
        "GEOADD str 10 10 a",
        "GEOADD sicily 13.583333 37.316667 Agrigento 12.758489 38.788135 edge1 17.241510 38.788135 edge2",
        "GEORADIUS sicily 15 37 200 km ASC",
        "GEORADIUS sicily 15 37 200 km DESC WITHDIST WITHCOORD WITHHASH",
        "GEORADIUS sicily 15 37 200 km COUNT 2 WITHDIST",
        "GEORADIUS sicily 15 37 200 km COUNT 2 ANY",
        "GEORADIUS sicily 15 37 200 km ANY",
        "GEORADIUS sicily 15 37 200 km COUNT 0",
        "GEORADIUS sicily 15 37 -1 km",
        "GEORADIUS sicily 15 37 x km",
        "GEORADIUS sicily 15 37 10 parsecs",
        "GEORADIUS sicily 200 37 10 km",
        "GEORADIUS sicily 15 37 200 km ASC STORE gr",
        "ZRANGE gr 0 -1 WITHSCORES",
        "GEORADIUS sicily 15 37 200 km ASC STOREDIST gr",
        "ZRANGE gr 0 -1 WITHSCORES",
        "GEORADIUS sicily 15 37 200 km STORE gr WITHDIST",
        "GEORADIUS sicily 15 37 1 m STORE gr",
        "EXISTS gr",
        "GEORADIUS nokey 15 37 200 km",
        "GEORADIUS nokey 15 37 200 km STORE gr",
        "GEORADIUS str 15 37 200 km",
        "GEORADIUS_RO sicily 15 37 200 km DESC",
        "GEORADIUS_RO sicily 15 37 200 km STORE gr",
        "GEORADIUSBYMEMBER sicily Palermo 100 km ASC WITHDIST",
        "GEORADIUSBYMEMBER sicily nope 100 km",
        "GEORADIUSBYMEMBER nokey nope 100 km",
        "georadiusbymember_ro sicily Catania 300 km DESC WITHCOORD",
        "GEORADIUSBYMEMBER_RO sicily Catania 300 km STORE x",
        "GEOSEARCH sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST",
        "GEOSEARCH sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHCOORD",
        "GEOSEARCH sicily FROMMEMBER Palermo BYBOX 100 100 km ASC",
        "GEOSEARCH sicily FROMLONLAT 15 37 BYBOX 200 200 mi COUNT 3",
        "GEOSEARCH sicily FROMLONLAT 15 37",
        "GEOSEARCH sicily BYRADIUS 10 km",
        "GEOSEARCH sicily FROMLONLAT 15 37 BYRADIUS 10 km BYBOX 1 1 km",
        "GEOSEARCH sicily FROMMEMBER nope BYRADIUS 10 km",
        "GEOSEARCH sicily FROMLONLAT 15 37 BYBOX -1 1 km",
        "GEOSEARCH sicily FROMLONLAT 15 37 BYBOX x 1 km",
        "GEOSEARCH sicily FROMLONLAT 15 37 BYRADIUS 10 km STORE x",
        "GEOSEARCH nokey FROMMEMBER a BYRADIUS 10 km",
        "GEOSEARCHSTORE gs sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC COUNT 2",
        "ZRANGE gs 0 -1 WITHSCORES",
        "GEOSEARCHSTORE gs sicily FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST",
        "ZRANGE gs 0 -1 WITHSCORES",
        "GEOSEARCHSTORE gs sicily FROMLONLAT 15 37 BYRADIUS 200 km WITHDIST",
        "GEOSEARCHSTORE gs nokey FROMLONLAT 15 37 BYRADIUS 200 km",
        "EXISTS gs",
        // Arity.
        "ZCARD",
        "ZSCORE z",
        "ZRANGE z 0",
        "ZRANGESTORE d z 0",
        "ZPOPMIN",
        "ZREMRANGEBYRANK z 0",
        "ZINCRBY z 1",
        // Digests and copies.
        "COPY z zcopy",
        "ZRANGE zcopy 0 -1 WITHSCORES",
        "RENAME zcopy zren",
        "TYPE zren",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Encodings: 128 members are a listpack, one more a skiplist; a long member converts too.
    let many: Vec<String> = (0..128).map(|i| format!("{i} m{i}")).collect();
    lines.push(format!("ZADD big {}", many.join(" ")));
    lines.push("OBJECT ENCODING big".into());
    lines.push("ZADD big 1000 last".into());
    lines.push("OBJECT ENCODING big".into());
    lines.push("ZRANK big m77 WITHSCORE".into());
    lines.push("ZREVRANK big m77".into());
    lines.push("ZRANGE big 60 70 WITHSCORES".into());
    lines.push("ZRANGE big (50 60 BYSCORE REV LIMIT 1 3".into());
    lines.push("ZREMRANGEBYRANK big 0 120".into());
    lines.push("OBJECT ENCODING big".into());
    lines.push("ZADD big -0 negzero".into());
    lines.push("ZSCORE big negzero".into());
    lines.push("ZINCRBY big -0 m125".into());
    lines.push("ZRANGESTORE small big 0 2".into());
    lines.push("OBJECT ENCODING small".into());
    // Scores and bounds are read as strtod reads them: hexadecimal floats, and in a range
    // leading white space and no range check.
    for l in [
        "ZADD hexz 0x10 a 0x1.8p1 b",
        "ZSCORE hexz a",
        "ZINCRBY hexz 0x.8 b",
        "ZADD hexz 0x1p-1075 c",
        "ZADD hexz 0x1p1024 c",
        "ZADD hexz 0x c",
        "ZRANGEBYSCORE hexz 0x3 0x10 WITHSCORES",
        "ZRANGEBYSCORE hexz (0x1p1 0x1p2000",
        "ZCOUNT hexz ' 1' +inf",
        "ZCOUNT hexz -0x1p-2000 (0x10",
        "ZCOUNT hexz 0x1q 1",
        "ZUNIONSTORE hexu 1 hexz WEIGHTS 0x2",
        "ZRANGE hexu 0 -1 WITHSCORES",
    ] {
        lines.push(l.into());
    }
    // A -0 that a weight makes is stored as 0 once the result is a listpack.
    for l in [
        "ZADD negw -1 a 2 b",
        "ZINTERSTORE negz 1 negw WEIGHTS 0",
        "ZRANGE negz 0 -1 WITHSCORES",
        "ZSCORE negz a",
        "ZUNIONSTORE negu 1 negw WEIGHTS -0",
        "ZRANGE negu 0 -1 WITHSCORES",
        "DUMP negu",
    ] {
        lines.push(l.into());
    }
    let many: Vec<String> = (0..200).map(|i| format!("{i} m{i}")).collect();
    lines.push(format!("ZADD many {}", many.join(" ")));
    lines.push("OBJECT ENCODING many".into());
    lines.push("ZRANGESTORE rs many 0 149".into());
    lines.push("OBJECT ENCODING rs".into());
    lines.push("ZRANGESTORE rs many 0 149 BYSCORE".into());
    lines.push("OBJECT ENCODING rs".into());
    lines.push(format!("ZADD long 1 a 2 {}", "x".repeat(65)));
    lines.push("OBJECT ENCODING long".into());
    lines.push(format!("ZADD long2 1 {} 2 b", "y".repeat(65)));
    lines.push("OBJECT ENCODING long2".into());
    lines.push("ZADD grow 1 a".into());
    lines.push(format!("ZADD grow 2 {}", "z".repeat(65)));
    lines.push("OBJECT ENCODING grow".into());
    for l in [
        "CONFIG SET zset-max-listpack-entries 2 zset-max-listpack-value 4",
        "ZADD cz 1 a 2 b",
        "OBJECT ENCODING cz",
        "ZADD cz 3 c",
        "OBJECT ENCODING cz",
        "ZADD cv 1 abcde",
        "OBJECT ENCODING cv",
        "ZADD cw 1 a 2 b 3 c",
        "OBJECT ENCODING cw",
        "CONFIG SET zset-max-listpack-entries 128 zset-max-listpack-value 64",
    ] {
        lines.push(l.into());
    }
    lines
}

/// Splits a line on spaces; `''` is the empty argument and `' 1'` an argument with a space.
fn argv(line: &str) -> Vec<Vec<u8>> {
    if let Some(at) = line.find("' 1'") {
        let mut out = argv(line[..at].trim_end());
        out.push(b" 1".to_vec());
        out.extend(argv(line[at + 4..].trim_start()));
        return out;
    }
    if line.is_empty() {
        return Vec::new();
    }
    let parts: Vec<&str> = line
        .split(' ')
        .map(|w| if w == "''" { "" } else { w })
        .collect();
    words(&parts)
}

#[test]
fn zset_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<Vec<Vec<u8>>> = lines().iter().map(|l| argv(l)).collect();
    if std::env::var_os("ECHOMQ_ZSET_ALL_MISMATCHES").is_some() {
        let mut failures = Vec::new();
        for protocol in [2, 3] {
            differ.reset(protocol).expect("reset");
            for c in &commands {
                if let Err(m) = differ.run(c) {
                    failures.push(m.to_string());
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! The HyperLogLog commands against Redis 8.8 over the wire, RESP2 and RESP3: PFADD, PFCOUNT,
//! PFMERGE, PFDEBUG; the HLL strings themselves are compared byte for byte (GET, DUMP), sparse
//! and dense, so the formats agree, and so do the errors in Redis's order.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

fn lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        "XADD s 1-1 f v",
        "PFADD h",
        "GET h",
        "PFADD h",
        "PFCOUNT h",
        "PFADD h a b c d e f g",
        "GET h",
        "PFDEBUG ENCODING h",
        "PFDEBUG DECODE h",
        "PFCOUNT h",
        "GET h",
        "PFADD h a",
        "PFCOUNT h",
        "OBJECT ENCODING h",
        "TYPE h",
        "PFADD h2 x y z a",
        "PFCOUNT h h2",
        "PFCOUNT h h2 nokey",
        "PFMERGE m h h2",
        "GET m",
        "PFCOUNT m",
        "PFMERGE m",
        "PFMERGE nokey2",
        "GET nokey2",
        "DUMP h",
        "DUMP m",
        "PFDEBUG TODENSE h",
        "PFDEBUG TODENSE h",
        "PFDEBUG ENCODING h",
        "PFDEBUG DECODE h",
        "PFCOUNT h",
        "PFADD h more",
        "PFCOUNT h",
        "DUMP h",
        "PFMERGE m h",
        "PFDEBUG ENCODING m",
        "DUMP m",
        "PFDEBUG GETREG h2",
        "PFDEBUG ENCODING h2",
        // Errors.
        "SET str hello",
        "PFADD str a",
        "PFCOUNT str",
        "PFCOUNT h str",
        "PFMERGE h str",
        "PFMERGE str h",
        "PFDEBUG ENCODING str",
        "SET n 12345",
        "PFADD n a",
        "PFADD s a",
        "PFCOUNT s",
        "PFCOUNT h s",
        "PFMERGE h s",
        "PFDEBUG GETREG nokey",
        "PFDEBUG FOO nokey",
        "PFDEBUG FOO h",
        "PFDEBUG DECODE s",
        "PFDEBUG ENCODING",
        "PFADD",
        "PFCOUNT",
        "PFMERGE",
        "PFSELFTEST x",
        // A corrupt sparse HLL: an XZERO of 16383 registers only.
        "SET bad HYLL\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x80\\x7f\\xfe",
        "PFCOUNT bad",
        "PFCOUNT bad h",
        "PFADD bad a",
        "PFDEBUG TODENSE bad",
        "SET short HYLL",
        "PFCOUNT short",
        "SET baddense HYLL\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00",
        "PFCOUNT baddense",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Growth until the sparse form passes hll-sparse-max-bytes and turns dense, and a large
    // count checked against the estimate and the cache.
    for round in 0..40 {
        let elements: Vec<String> = (0..50).map(|i| format!("e{round}-{i}")).collect();
        lines.push(format!("PFADD big {}", elements.join(" ")));
        if round % 5 == 0 {
            lines.push("PFDEBUG ENCODING big".into());
            lines.push("DUMP big".into());
            lines.push("PFCOUNT big".into());
        }
    }
    lines.push("CONFIG SET hll-sparse-max-bytes 100".into());
    lines.push("CONFIG GET hll-sparse-max-bytes".into());
    for i in 0..30 {
        lines.push(format!("PFADD small x{i}"));
    }
    lines.push("PFDEBUG ENCODING small".into());
    lines.push("DUMP small".into());
    lines.push("CONFIG SET hll-sparse-max-bytes 3000".into());
    lines
}

/// Splits a line on spaces; `\xHH` is a byte.
fn argv(line: &str) -> Vec<Vec<u8>> {
    let parts: Vec<&str> = line.split(' ').collect();
    let mut out = words(&parts);
    for (word, part) in out.iter_mut().zip(&parts) {
        if part.contains("\\x") {
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
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') && i + 4 <= b.len() {
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
fn hyperloglog_commands_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = lines().iter().map(|l| argv(l)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! Redis's line splitting (`sdssplitargs`) and quoting (`sdscatrepr`), as its config file and
//! CONFIG REWRITE use them.
//!
//! Words are separated by whitespace. A word may hold double-quoted parts (with `\n`, `\r`,
//! `\t`, `\b`, `\a`, `\xHH` and `\<char>` escapes) and single-quoted parts (only `\'`
//! escaped); a closing quote must end the word. An unclosed quote, or a closing quote followed
//! by anything but whitespace, makes the line unparsable (`None`).

/// The words of `line`, or `None` when its quotes are unbalanced.
pub fn split_args(line: &str) -> Option<Vec<Vec<u8>>> {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut at = 0;
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at >= bytes.len() {
            return Some(words);
        }
        let mut word = Vec::new();
        let mut double = false;
        let mut single = false;
        loop {
            let Some(&c) = bytes.get(at) else {
                // The line ended inside a quote.
                if double || single {
                    return None;
                }
                break;
            };
            if double {
                if c == b'\\' && bytes.get(at + 1) == Some(&b'x') {
                    let hex = |i: usize| bytes.get(i).and_then(|b| (*b as char).to_digit(16));
                    if let (Some(hi), Some(lo)) = (hex(at + 2), hex(at + 3)) {
                        word.push((hi * 16 + lo) as u8);
                        at += 4;
                        continue;
                    }
                }
                if c == b'\\' && at + 1 < bytes.len() {
                    let escaped = bytes[at + 1];
                    word.push(match escaped {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                    at += 2;
                    continue;
                }
                if c == b'"' {
                    if bytes.get(at + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                        return None;
                    }
                    at += 1;
                    break;
                }
                word.push(c);
            } else if single {
                if c == b'\\' && bytes.get(at + 1) == Some(&b'\'') {
                    word.push(b'\'');
                    at += 2;
                    continue;
                }
                if c == b'\'' {
                    if bytes.get(at + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                        return None;
                    }
                    at += 1;
                    break;
                }
                word.push(c);
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        at += 1;
                        break;
                    }
                    b'"' => double = true,
                    b'\'' => single = true,
                    other => word.push(other),
                }
            }
            at += 1;
        }
        words.push(word);
    }
}

/// `value` quoted as Redis writes a string into a config file: in double quotes, with `\\`,
/// `\"`, `\n`, `\r`, `\t`, `\a`, `\b` escaped and other unprintable bytes as `\xHH`.
pub fn quote(value: &[u8]) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for &b in value {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            other => out.push_str(&format!("\\x{other:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Option<Vec<String>> {
        split_args(line).map(|w| {
            w.into_iter()
                .map(|w| String::from_utf8_lossy(&w).into_owned())
                .collect()
        })
    }

    #[test]
    fn splits_as_redis() {
        assert_eq!(words("  save 900 1 ").unwrap(), ["save", "900", "1"]);
        assert_eq!(words(r#"a "b c" 'd e'"#).unwrap(), ["a", "b c", "d e"]);
        assert_eq!(
            words(r#"x "\x41\n\"" 'it\'s'"#).unwrap(),
            ["x", "A\n\"", "it's"]
        );
        assert_eq!(words(r#"save """#).unwrap(), ["save", ""]);
        assert_eq!(words(r#"a"b c""#).unwrap(), ["ab c"]);
        assert_eq!(words(r#"a "b"c"#), None);
        assert_eq!(words(r#"a "b"#), None);
        assert_eq!(words("'a"), None);
        assert!(words("   ").unwrap().is_empty());
    }

    #[test]
    fn quotes_round_trip() {
        for value in [&b"plain"[..], b"with space", b"q\"b\\", b"\n\x01\xff"] {
            let line = format!("k {}", quote(value));
            assert_eq!(split_args(&line).unwrap()[1], value);
        }
        assert_eq!(quote(b""), "\"\"");
    }
}

//! Redis's glob matching (`stringmatchlen`): `*`, `?`, `[abc]`, `[^a-z]`, `\x`, for KEYS,
//! SCAN MATCH and CONFIG GET.

/// Whether `string` matches `pattern`.
pub fn matches(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    matches_at(pattern, string, nocase, 0)
}

/// Recursion depth limit: a pathological pattern (`*a*a*a...`) fails instead of recursing
/// without bound, like Redis's own guard.
const NESTING_MAX: usize = 1000;

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

fn matches_at(mut p: &[u8], mut s: &[u8], nocase: bool, depth: usize) -> bool {
    if depth > NESTING_MAX {
        return false;
    }
    while let Some(&c) = p.first() {
        match c {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                for skip in 0..=s.len() {
                    if matches_at(&p[1..], &s[skip..], nocase, depth + 1) {
                        return true;
                    }
                }
                return false;
            }
            b'?' => {
                if s.is_empty() {
                    return false;
                }
                s = &s[1..];
            }
            b'[' => {
                let Some(&ch) = s.first() else { return false };
                p = &p[1..];
                let negate = p.first() == Some(&b'^');
                if negate {
                    p = &p[1..];
                }
                let mut found = false;
                loop {
                    match p {
                        [] => break,
                        [b']', ..] => break,
                        [b'\\', x, ..] => {
                            found |= eq(*x, ch, nocase);
                            p = &p[2..];
                        }
                        [a, b'-', b, ..] if *b != b']' => {
                            let (lo, hi) = if a <= b { (*a, *b) } else { (*b, *a) };
                            let (lo, hi, ch) = if nocase {
                                (
                                    lo.to_ascii_lowercase(),
                                    hi.to_ascii_lowercase(),
                                    ch.to_ascii_lowercase(),
                                )
                            } else {
                                (lo, hi, ch)
                            };
                            found |= (lo..=hi).contains(&ch);
                            p = &p[3..];
                        }
                        [x, ..] => {
                            found |= eq(*x, ch, nocase);
                            p = &p[1..];
                        }
                    }
                }
                if found == negate {
                    return false;
                }
                s = &s[1..];
                if p.is_empty() {
                    // An unterminated class: Redis treats the end of pattern as the class end.
                    return s.is_empty();
                }
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if s.first().is_none_or(|&ch| !eq(p[0], ch, nocase)) {
                    return false;
                }
                s = &s[1..];
            }
            _ => {
                if s.first().is_none_or(|&ch| !eq(c, ch, nocase)) {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
    }
    s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches(b"*", b"anything", false));
        assert!(matches(b"h?llo", b"hello", false));
        assert!(matches(b"h[ae]llo", b"hallo", false));
        assert!(!matches(b"h[^e]llo", b"hello", false));
        assert!(matches(b"h[a-b]llo", b"hbllo", false));
        assert!(matches(b"stream-node-*", b"stream-node-max-bytes", false));
        assert!(matches(b"MAXMEM*", b"maxmemory", true));
        assert!(!matches(b"a*b", b"acd", false));
        assert!(matches(b"a\\*", b"a*", false));
        assert!(!matches(&[b'*', b'a'].repeat(2000), &[b'a'; 100], false));
    }
}

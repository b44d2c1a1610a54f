//! Redis's glob matching (`stringmatchlen`): `*`, `?`, `[abc]`, `[^a-z]`, `\x`, for KEYS and
//! SCAN MATCH here, and the server's CONFIG GET, PSUBSCRIBE and `archive-streams`.
//!
//! Matching walks the pattern once and, on a mismatch, backtracks only to the last `*` seen
//! (every other token matches exactly one byte), so the cost is at most pattern length times
//! string length even for patterns like `*a*a*a*b` that make naive recursion exponential.

/// One pattern token that matches a single byte: how long it is in the pattern and whether it
/// matches `c`.
fn single(p: &[u8], c: u8, nocase: bool) -> (usize, bool) {
    let eq = |a: u8, b: u8| {
        if nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    match p {
        [b'?', ..] => (1, true),
        [b'\\', x, ..] => (2, eq(*x, c)),
        [b'[', rest @ ..] => {
            let (negate, mut i) = if rest.first() == Some(&b'^') {
                (true, 1)
            } else {
                (false, 0)
            };
            let mut found = false;
            loop {
                match &rest[i..] {
                    // An unterminated class ends with the pattern, as in Redis.
                    [] => break,
                    [b']', ..] => {
                        i += 1;
                        break;
                    }
                    [b'\\', x, ..] => {
                        found |= eq(*x, c);
                        i += 2;
                    }
                    [a, b'-', b, ..] if *b != b']' => {
                        let (lo, hi) = if a <= b { (*a, *b) } else { (*b, *a) };
                        let (lo, hi, ch) = if nocase {
                            (
                                lo.to_ascii_lowercase(),
                                hi.to_ascii_lowercase(),
                                c.to_ascii_lowercase(),
                            )
                        } else {
                            (lo, hi, c)
                        };
                        found |= (lo..=hi).contains(&ch);
                        i += 3;
                    }
                    [x, ..] => {
                        found |= eq(*x, c);
                        i += 1;
                    }
                }
            }
            (1 + i, found != negate)
        }
        [x, ..] => (1, eq(*x, c)),
        [] => (0, false),
    }
}

/// Whether `string` matches `pattern`.
pub fn matches(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    let (mut p, mut s) = (0, 0);
    // Where to resume after the last `*`: pattern position after it, string position tried.
    let mut star: Option<(usize, usize)> = None;
    while s < string.len() {
        if pattern.get(p) == Some(&b'*') {
            while pattern.get(p) == Some(&b'*') {
                p += 1;
            }
            // A trailing `*` matches whatever is left (PSUBSCRIBE's `prefix*` patterns).
            if p == pattern.len() {
                return true;
            }
            star = Some((p, s));
            continue;
        }
        let (len, ok) = single(&pattern[p..], string[s], nocase);
        if len > 0 && ok {
            p += len;
            s += 1;
            continue;
        }
        match star {
            Some((after, tried)) => {
                star = Some((after, tried + 1));
                p = after;
                s = tried + 1;
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches(b"*", b"anything", false));
        assert!(matches(b"*", b"", false));
        assert!(matches(b"h?llo", b"hello", false));
        assert!(matches(b"h[ae]llo", b"hallo", false));
        assert!(!matches(b"h[^e]llo", b"hello", false));
        assert!(matches(b"h[a-b]llo", b"hbllo", false));
        assert!(matches(b"stream-node-*", b"stream-node-max-bytes", false));
        assert!(matches(b"MAXMEM*", b"maxmemory", true));
        assert!(!matches(b"a*b", b"acd", false));
        assert!(matches(b"a*b*c", b"axxbyyc", false));
        assert!(matches(b"__key*@0__:*", b"__keyspace@0__:k", false));
        assert!(!matches(b"__key*@1__:*", b"__keyspace@0__:k", false));
        assert!(matches(b"a*", b"a", false));
        assert!(matches(b"a\\*", b"a*", false));
        assert!(!matches(b"a\\*", b"ab", false));
        assert!(!matches(b"abc", b"ab", false));
        assert!(!matches(b"ab", b"abc", false));
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let pattern = [b'*', b'a'].repeat(2000);
        assert!(!matches(&pattern, &[b'a'; 100], false));
        let mut long = vec![b'a'; 5000];
        long.push(b'b');
        assert!(!matches(b"*a*a*a*a*a*a*c", &long, false));
    }
}

//! A strict reader of encoded replies: exactly one well-formed RESP value, using only the types
//! the client's protocol has, and every error starting with its code (`ERR`, `WRONGTYPE`, ...),
//! which clients read to tell errors apart.

/// Checks that `bytes` is exactly one reply; the error says where and why it is not.
pub(super) fn check_reply(bytes: &[u8], resp3: bool) -> Result<(), String> {
    check(bytes, resp3, true)
}

/// [`check_reply`] for a script's reply, whose errors need no code: a script's `{err = ...}`
/// tables reach the client verbatim (`-oops`), as Redis sends them.
pub(super) fn check_script_reply(bytes: &[u8], resp3: bool) -> Result<(), String> {
    check(bytes, resp3, false)
}

fn check(bytes: &[u8], resp3: bool, codes: bool) -> Result<(), String> {
    let end = value(bytes, 0, resp3, codes)?;
    if end != bytes.len() {
        return Err(format!("{} bytes after the reply", bytes.len() - end));
    }
    Ok(())
}

/// The position of the `\r\n` ending the line that starts at `start`.
fn line_end(bytes: &[u8], start: usize) -> Result<usize, String> {
    let rest = bytes.get(start..).ok_or("truncated")?;
    let cr = rest
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .ok_or_else(|| format!("unterminated line at {start}"))?;
    if rest.get(cr..cr + 2) != Some(b"\r\n") {
        return Err(format!("a bare CR or LF in the line at {start}"));
    }
    Ok(start + cr)
}

/// A length or count: `-1` only where `null_allowed`.
fn number(bytes: &[u8], start: usize, null_allowed: bool) -> Result<(i64, usize), String> {
    let end = line_end(bytes, start)?;
    let text = std::str::from_utf8(&bytes[start..end]).map_err(|e| e.to_string())?;
    let n: i64 = text
        .parse()
        .map_err(|_| format!("bad number {text:?} at {start}"))?;
    if text != n.to_string() || n < -1 || (n == -1 && !null_allowed) {
        return Err(format!("bad length {text:?} at {start}"));
    }
    Ok((n, end + 2))
}

/// Reads one value starting at `at`; returns where it ends.
fn value(bytes: &[u8], at: usize, resp3: bool, codes: bool) -> Result<usize, String> {
    let kind = *bytes.get(at).ok_or("truncated")?;
    let body = at + 1;
    match kind {
        b'+' => Ok(line_end(bytes, body)? + 2),
        b'-' => {
            let end = line_end(bytes, body)?;
            let text = &bytes[body..end];
            let code = text.split(|&b| b == b' ').next().unwrap_or_default();
            if codes && (code.is_empty() || !code.iter().all(u8::is_ascii_uppercase)) {
                return Err(format!(
                    "error at {at} has no code: {:?}",
                    String::from_utf8_lossy(text)
                ));
            }
            Ok(end + 2)
        }
        b':' => Ok(number_any(bytes, body)?),
        b'$' => {
            let (len, start) = number(bytes, body, !resp3)?;
            if len == -1 {
                return Ok(start);
            }
            let end = start + len as usize;
            if bytes.get(end..end + 2) != Some(b"\r\n") {
                return Err(format!("bulk at {at} is not {len} bytes and CRLF"));
            }
            Ok(end + 2)
        }
        b'=' if resp3 => {
            let (len, start) = number(bytes, body, false)?;
            let end = start + len as usize;
            if len < 4 || bytes.get(start + 3) != Some(&b':') {
                return Err(format!("verbatim string at {at} has no format"));
            }
            if bytes.get(end..end + 2) != Some(b"\r\n") {
                return Err(format!(
                    "verbatim string at {at} is not {len} bytes and CRLF"
                ));
            }
            Ok(end + 2)
        }
        b'*' | b'%' | b'~' => {
            if kind != b'*' && !resp3 {
                return Err(format!("a RESP3 map or set at {at} in RESP2"));
            }
            let (n, mut pos) = number(bytes, body, !resp3 && kind == b'*')?;
            let items = if kind == b'%' { 2 * n } else { n };
            for _ in 0..items.max(0) {
                pos = value(bytes, pos, resp3, codes)?;
            }
            Ok(pos)
        }
        // A big number's digits are a script's text as it gave them (Redis checks none).
        b'(' if resp3 => Ok(line_end(bytes, body)? + 2),
        b',' if resp3 => {
            let end = line_end(bytes, body)?;
            let text = std::str::from_utf8(&bytes[body..end]).map_err(|e| e.to_string())?;
            if !matches!(text, "inf" | "-inf" | "nan" | "-nan") && text.parse::<f64>().is_err() {
                return Err(format!("bad double {text:?} at {at}"));
            }
            Ok(end + 2)
        }
        b'#' if resp3 => match bytes.get(body..body + 3) {
            Some(b"t\r\n" | b"f\r\n") => Ok(body + 3),
            _ => Err(format!("bad boolean at {at}")),
        },
        b'_' if resp3 => {
            if bytes.get(body..body + 2) != Some(b"\r\n") {
                return Err(format!("null at {at} is not `_\\r\\n`"));
            }
            Ok(body + 2)
        }
        other => Err(format!(
            "type byte {:?} at {at} ({})",
            char::from(other),
            if resp3 { "RESP3" } else { "RESP2" }
        )),
    }
}

/// An integer reply's line: any `i64`.
fn number_any(bytes: &[u8], start: usize) -> Result<usize, String> {
    let end = line_end(bytes, start)?;
    let text = std::str::from_utf8(&bytes[start..end]).map_err(|e| e.to_string())?;
    match text.parse::<i64>() {
        Ok(n) if n.to_string() == text => Ok(end + 2),
        _ => Err(format!("bad integer {text:?} at {start}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_replies_pass() {
        assert_eq!(check_reply(b"+OK\r\n", false), Ok(()));
        assert_eq!(check_reply(b"*2\r\n$1\r\na\r\n:-5\r\n", false), Ok(()));
        assert_eq!(check_reply(b"*-1\r\n", false), Ok(()));
        assert_eq!(check_reply(b"%1\r\n$1\r\nk\r\n_\r\n", true), Ok(()));
        assert_eq!(check_reply(b"=5\r\ntxt:x\r\n", true), Ok(()));
        assert_eq!(check_reply(b"~2\r\n+RO\r\n+access\r\n", true), Ok(()));
        assert_eq!(check_reply(b"*1\r\n-ERR x\r\n", false), Ok(()));
        assert_eq!(check_reply(b"-EXECABORT\r\n", true), Ok(()));
        assert_eq!(check_reply(b"*3\r\n,1.5\r\n,-inf\r\n#t\r\n", true), Ok(()));
        assert_eq!(check_reply(b"(12\r\n", true), Ok(()));
        assert_eq!(check_script_reply(b"*2\r\n-oops\r\n-\r\n", false), Ok(()));
    }

    #[test]
    fn malformed_replies_fail() {
        for (bytes, resp3) in [
            (&b"+O\nK\r\n"[..], false),
            (b"$3\r\nab\r\n", false),
            (b"*2\r\n:1\r\n", false),
            (b"_\r\n", false),
            (b"%0\r\n", false),
            (b"~0\r\n", false),
            (b"$-1\r\n", true),
            (b"*-1\r\n", true),
            (b":01\r\n", false),
            (b"+OK\r\n+OK\r\n", false),
            (b"-Protocol error\r\n", false),
            (b"*1\r\n-\r\n", false),
            (b",1.5\r\n", false),
            (b",x\r\n", true),
            (b"#x\r\n", true),
            (b"(1\r\n", false),
        ] {
            assert!(check_reply(bytes, resp3).is_err(), "{bytes:?}");
        }
    }
}

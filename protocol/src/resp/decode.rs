//! Incremental request decoding: RESP multibulk (`*2\r\n$4\r\nPING\r\n...`) and inline
//! commands (`PING hello\r\n`), as Redis's `processMultibulkBuffer` / `processInlineBuffer`
//! read them, with the same limits and the same error texts.
//!
//! [`decode`] looks at the bytes received so far and either returns one complete command and
//! how many bytes it used, says more bytes are needed, or reports a protocol error (after which
//! Redis replies the error and closes the connection). It never allocates in proportion to a
//! length the client merely announced: the argument vector grows with the arguments actually
//! received, and a bulk is copied only once all of it is there (`tests/decode_allocation.rs`
//! measures it with a counting allocator).

use bytes::Bytes;

use crate::error::ProtocolError;

/// Longest inline command, and longest `*<n>` / `$<n>` header line without its CRLF
/// (Redis's `PROTO_INLINE_MAX_SIZE`).
pub const INLINE_BYTES_MAX: usize = 64 * 1024;
/// Largest multibulk count Redis accepts (`INT_MAX`).
pub const MULTIBULK_LEN_MAX: i64 = i32::MAX as i64;
/// Arguments preallocated for a multibulk, however many are announced.
const ARGV_PREALLOC_MAX: usize = 1024;
/// Multibulk count above which an unauthenticated client is refused.
pub const UNAUTHENTICATED_MULTIBULK_MAX: i64 = 10;
/// Bulk length above which an unauthenticated client is refused.
pub const UNAUTHENTICATED_BULK_MAX: i64 = 16 * 1024;

/// Limits the decoder enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// `proto-max-bulk-len`: the largest bulk argument.
    pub bulk_bytes_max: i64,
    /// Whether the client still has to AUTH (tighter limits, as in Redis).
    pub unauthenticated: bool,
}

/// The result of one decoding attempt.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A complete command (possibly empty: Redis skips `*0` and blank inline lines) and the
    /// bytes it took.
    Command(Vec<Bytes>, usize),
    /// More bytes are needed.
    Incomplete,
}

/// One argument of a decoded command: where it sits in the buffer (multibulk), or its bytes
/// (inline arguments are unquoted and unescaped, so they are not slices of the input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// `buf[start..end]`.
    Span(usize, usize),
    /// The argument itself.
    Owned(Bytes),
}

/// The result of [`decode_args`].
#[derive(Debug, PartialEq, Eq)]
pub enum DecodedArgs {
    /// A complete command's arguments and the bytes it took.
    Command(Vec<Arg>, usize),
    /// More bytes are needed.
    Incomplete,
}

/// Decodes one command from the front of `buf`, copying its arguments.
pub fn decode(buf: &[u8], limits: &DecodeLimits) -> Result<Decoded, ProtocolError> {
    Ok(match decode_args(buf, limits)? {
        DecodedArgs::Incomplete => Decoded::Incomplete,
        DecodedArgs::Command(args, used) => {
            let argv = args
                .into_iter()
                .map(|arg| match arg {
                    Arg::Span(start, end) => Bytes::copy_from_slice(&buf[start..end]),
                    Arg::Owned(bytes) => bytes,
                })
                .collect();
            Decoded::Command(argv, used)
        }
    })
}

/// Decodes one command from the front of `buf` without copying multibulk arguments: the
/// server freezes the command's bytes and slices them.
pub fn decode_args(buf: &[u8], limits: &DecodeLimits) -> Result<DecodedArgs, ProtocolError> {
    let mut args = Vec::new();
    Ok(match decode_args_into(buf, limits, &mut args)? {
        Some(used) => DecodedArgs::Command(args, used),
        None => DecodedArgs::Incomplete,
    })
}

/// [`decode_args`] into a vector the caller keeps from one command to the next (cleared
/// first), so a connection decodes without allocating: the bytes the command took, or `None`
/// when more bytes are needed (`args` is then empty).
pub fn decode_args_into(
    buf: &[u8],
    limits: &DecodeLimits,
    args: &mut Vec<Arg>,
) -> Result<Option<usize>, ProtocolError> {
    args.clear();
    let used = match buf.first() {
        None => None,
        Some(b'*') => decode_multibulk(buf, limits, args)?,
        Some(_) => decode_inline(buf, args)?,
    };
    if used.is_none() {
        args.clear();
    }
    Ok(used)
}

/// Finds the line starting at `start`: returns the position of its `\r`. `None` if the line
/// is not complete yet.
fn line_end(buf: &[u8], start: usize) -> Option<usize> {
    let rest = buf.get(start..)?;
    let cr = memchr(b'\r', rest)?;
    // Redis looks for '\r' and then needs one more byte for '\n'.
    (start + cr + 1 < buf.len()).then_some(start + cr)
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// Redis's `string2ll` over a header's digits. Headers are nearly always a few plain digits:
/// those are read here at once; anything else (a sign, a leading zero, 19 digits or more)
/// takes the strict general parse.
fn parse_len(digits: &[u8]) -> Option<i64> {
    const PLAIN_DIGITS_MAX: usize = 18;
    if let [b'1'..=b'9', ..] = digits
        && digits.len() <= PLAIN_DIGITS_MAX
    {
        let mut value: i64 = 0;
        for &d in digits {
            let d = d.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value * 10 + i64::from(d);
        }
        return Some(value);
    }
    echomq_engine::command::parse_i64(digits).ok()
}

/// A complete header line's length read in one pass, the common case: `buf[start..]` is 1 to
/// 18 plain digits (no sign, no leading zero) then `\r` and at least one more byte. Its
/// value and the position of its `\r`; `None` for anything else, which then takes the
/// general path ([`line_end`], [`parse_len`]), so the result is the same either way.
#[inline]
fn plain_header(buf: &[u8], start: usize) -> Option<(i64, usize)> {
    const PLAIN_DIGITS_MAX: usize = 18;
    let first = buf.get(start)?.wrapping_sub(b'1');
    if first > 8 {
        return None;
    }
    let mut value = i64::from(first) + 1;
    let mut at = start + 1;
    loop {
        match *buf.get(at)? {
            b'\r' if at + 1 < buf.len() => return Some((value, at)),
            d @ b'0'..=b'9' if at - start < PLAIN_DIGITS_MAX => {
                value = value * 10 + i64::from(d - b'0');
                at += 1;
            }
            _ => return None,
        }
    }
}

/// The multibulk count line at the front of `buf`: its value and the position of its `\r`,
/// `None` while incomplete.
fn count_line(buf: &[u8]) -> Result<Option<(i64, usize)>, ProtocolError> {
    if let Some(header) = plain_header(buf, 1) {
        return Ok(Some(header));
    }
    let Some(cr) = line_end(buf, 0) else {
        if buf.len() > INLINE_BYTES_MAX {
            return Err(ProtocolError::TooBigMultibulkCount);
        }
        return Ok(None);
    };
    match parse_len(&buf[1..cr]) {
        Some(n) => Ok(Some((n, cr))),
        None => Err(ProtocolError::InvalidMultibulkLength),
    }
}

/// The bulk length line at `buf[pos..]`: its value and the position of its `\r`, `None`
/// while incomplete.
fn bulk_line(buf: &[u8], pos: usize) -> Result<Option<(i64, usize)>, ProtocolError> {
    if buf.get(pos) == Some(&b'$')
        && let Some(header) = plain_header(buf, pos + 1)
    {
        return Ok(Some(header));
    }
    let Some(cr) = line_end(buf, pos) else {
        if buf.len() - pos > INLINE_BYTES_MAX {
            return Err(ProtocolError::TooBigBulkCount);
        }
        return Ok(None);
    };
    if buf[pos] != b'$' {
        return Err(ProtocolError::ExpectedDollar(buf[pos]));
    }
    match parse_len(&buf[pos + 1..cr]) {
        Some(n) => Ok(Some((n, cr))),
        None => Err(ProtocolError::InvalidBulkLength),
    }
}

fn decode_multibulk(
    buf: &[u8],
    limits: &DecodeLimits,
    argv: &mut Vec<Arg>,
) -> Result<Option<usize>, ProtocolError> {
    let Some((count, cr)) = count_line(buf)? else {
        return Ok(None);
    };
    if count > MULTIBULK_LEN_MAX {
        return Err(ProtocolError::InvalidMultibulkLength);
    }
    if count > UNAUTHENTICATED_MULTIBULK_MAX && limits.unauthenticated {
        return Err(ProtocolError::UnauthenticatedMultibulkLength);
    }
    let mut pos = cr + 2;
    if count <= 0 {
        return Ok(Some(pos));
    }
    let count = count as usize;
    argv.reserve(count.min(ARGV_PREALLOC_MAX));
    while argv.len() < count {
        let Some((len, cr)) = bulk_line(buf, pos)? else {
            return Ok(None);
        };
        let len = match len {
            n if n >= 0 && n <= limits.bulk_bytes_max => n as usize,
            _ => return Err(ProtocolError::InvalidBulkLength),
        };
        if len as i64 > UNAUTHENTICATED_BULK_MAX && limits.unauthenticated {
            return Err(ProtocolError::UnauthenticatedBulkLength);
        }
        let start = cr + 2;
        let Some(end) = start.checked_add(len) else {
            return Err(ProtocolError::InvalidBulkLength);
        };
        if buf.len() < end + 2 {
            return Ok(None);
        }
        argv.push(Arg::Span(start, end));
        // Redis skips the two bytes after a bulk without checking them.
        pos = end + 2;
    }
    Ok(Some(pos))
}

fn decode_inline(buf: &[u8], argv: &mut Vec<Arg>) -> Result<Option<usize>, ProtocolError> {
    let Some(nl) = memchr(b'\n', buf) else {
        if buf.len() > INLINE_BYTES_MAX {
            return Err(ProtocolError::TooBigInline);
        }
        return Ok(None);
    };
    let mut line = &buf[..nl];
    if line.last() == Some(&b'\r') {
        line = &line[..line.len() - 1];
    }
    let words = split_args(line).ok_or(ProtocolError::UnbalancedQuotes)?;
    argv.extend(words.into_iter().map(Arg::Owned));
    Ok(Some(nl + 1))
}

/// Redis's `sdssplitargs`: words separated by white space, with `"..."` (C escapes, `\xHH`)
/// and `'...'` quoting; a closing quote must be followed by white space or the end.
pub fn split_args(line: &[u8]) -> Option<Vec<Bytes>> {
    let mut args = Vec::new();
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n {
            return Some(args);
        }
        let mut current = Vec::new();
        let mut in_double = false;
        let mut in_single = false;
        loop {
            if in_double {
                let c = *line.get(i)?;
                if c == b'\\'
                    && i + 3 < n
                    && line[i + 1] == b'x'
                    && is_hex(line[i + 2])
                    && is_hex(line[i + 3])
                {
                    current.push(hex(line[i + 2]) * 16 + hex(line[i + 3]));
                    i += 3;
                } else if c == b'\\' && i + 1 < n {
                    i += 1;
                    current.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if c == b'"' {
                    if i + 1 < n && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    current.push(c);
                }
            } else if in_single {
                let c = *line.get(i)?;
                if c == b'\\' && i + 1 < n && line[i + 1] == b'\'' {
                    i += 1;
                    current.push(b'\'');
                } else if c == b'\'' {
                    if i + 1 < n && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    current.push(c);
                }
            } else {
                match line.get(i) {
                    None => break,
                    Some(c) if c.is_ascii_whitespace() => break,
                    Some(b'"') => in_double = true,
                    Some(b'\'') => in_single = true,
                    Some(&c) => current.push(c),
                }
            }
            i += 1;
        }
        args.push(Bytes::from(current));
    }
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_headers_read_as_the_general_path_reads_them() {
        let digits = [
            "1",
            "4",
            "9",
            "10",
            "0",
            "01",
            "-1",
            "+1",
            "",
            " 1",
            "1 ",
            "12a",
            "99999999999999999",
            "999999999999999999",
            "9999999999999999999",
            "123456789012345678",
        ];
        for d in digits {
            for tail in ["\r\n", "\r", "", "\rx", "\n"] {
                let buf = format!("${d}{tail}");
                let general = line_end(buf.as_bytes(), 0)
                    .and_then(|cr| parse_len(&buf.as_bytes()[1..cr]).map(|n| (n, cr)));
                if let Some(fast) = plain_header(buf.as_bytes(), 1) {
                    assert_eq!(Some(fast), general, "{buf:?}");
                }
                if matches!(d, "1" | "4" | "10" | "999999999999999999") && tail.len() > 1 {
                    assert!(plain_header(buf.as_bytes(), 1).is_some(), "{buf:?}");
                }
            }
        }
    }

    #[test]
    fn headers_parse_as_redis_string2ll_does() {
        for (digits, expected) in [
            (&b"0"[..], Some(0)),
            (b"7", Some(7)),
            (b"123456789012345678", Some(123_456_789_012_345_678)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"9223372036854775808", None),
            (b"-1", Some(-1)),
            (b"-0", None),
            (b"01", None),
            (b"", None),
            (b"1x", None),
            (b"12 ", None),
            (b"+1", None),
            (b"1:", None),
            (b"1/", None),
        ] {
            assert_eq!(
                parse_len(digits),
                expected,
                "{:?}",
                String::from_utf8_lossy(digits)
            );
        }
    }

    const LIMITS: DecodeLimits = DecodeLimits {
        bulk_bytes_max: 512 * 1024 * 1024,
        unauthenticated: false,
    };

    fn args(v: &[&str]) -> Vec<Bytes> {
        v.iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect()
    }

    #[test]
    fn multibulk_commands_decode_once_complete() {
        let frame = b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n";
        for cut in 0..frame.len() {
            assert_eq!(
                decode(&frame[..cut], &LIMITS),
                Ok(Decoded::Incomplete),
                "cut {cut}"
            );
        }
        assert_eq!(
            decode(frame, &LIMITS),
            Ok(Decoded::Command(args(&["PING", "hi"]), frame.len()))
        );
        assert_eq!(decode(b"*0\r\n", &LIMITS), Ok(Decoded::Command(vec![], 4)));
        assert_eq!(decode(b"*-1\r\n", &LIMITS), Ok(Decoded::Command(vec![], 5)));
    }

    #[test]
    fn multibulk_errors_use_redis_texts() {
        assert_eq!(
            decode(b"*x\r\n", &LIMITS),
            Err(ProtocolError::InvalidMultibulkLength)
        );
        assert_eq!(
            decode(b"*3000000000\r\n", &LIMITS),
            Err(ProtocolError::InvalidMultibulkLength)
        );
        assert_eq!(
            decode(b"*1\r\n+a\r\n", &LIMITS),
            Err(ProtocolError::ExpectedDollar(b'+'))
        );
        assert_eq!(
            decode(b"*1\r\n$-1\r\n", &LIMITS),
            Err(ProtocolError::InvalidBulkLength)
        );
        let small = DecodeLimits {
            bulk_bytes_max: 3,
            unauthenticated: false,
        };
        assert_eq!(
            decode(b"*1\r\n$4\r\n", &small),
            Err(ProtocolError::InvalidBulkLength)
        );
        let big = vec![b'1'; INLINE_BYTES_MAX + 10];
        let mut frame = b"*".to_vec();
        frame.extend_from_slice(&big);
        assert_eq!(
            decode(&frame, &LIMITS),
            Err(ProtocolError::TooBigMultibulkCount)
        );
        let anon = DecodeLimits {
            bulk_bytes_max: 1 << 29,
            unauthenticated: true,
        };
        assert_eq!(
            decode(b"*11\r\n", &anon),
            Err(ProtocolError::UnauthenticatedMultibulkLength)
        );
        assert_eq!(
            decode(b"*1\r\n$16385\r\n", &anon),
            Err(ProtocolError::UnauthenticatedBulkLength)
        );
    }

    #[test]
    fn inline_commands_split_like_sdssplitargs() {
        assert_eq!(
            decode(b"PING\r\n", &LIMITS),
            Ok(Decoded::Command(args(&["PING"]), 6))
        );
        assert_eq!(decode(b"  \r\n", &LIMITS), Ok(Decoded::Command(vec![], 4)));
        assert_eq!(
            decode(b"SET k \"a b\\x41\\n\"\n", &LIMITS),
            Ok(Decoded::Command(args(&["SET", "k", "a bA\n"]), 18))
        );
        assert_eq!(
            decode(b"SET 'it\\'s'\n", &LIMITS),
            Ok(Decoded::Command(args(&["SET", "it's"]), 12))
        );
        assert_eq!(
            decode(b"SET \"a\n", &LIMITS),
            Err(ProtocolError::UnbalancedQuotes)
        );
        assert_eq!(
            decode(b"SET \"a\"b\n", &LIMITS),
            Err(ProtocolError::UnbalancedQuotes)
        );
        assert_eq!(decode(b"PING", &LIMITS), Ok(Decoded::Incomplete));
        assert_eq!(
            decode(&vec![b'a'; INLINE_BYTES_MAX + 1], &LIMITS),
            Err(ProtocolError::TooBigInline)
        );
    }
}

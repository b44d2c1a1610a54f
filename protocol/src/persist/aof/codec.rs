//! Commands as the AOF holds them: RESP arrays of bulk strings, `*<n>\r\n$<len>\r\n<bytes>\r\n…`.
//!
//! [`parse`] reads one command and tells a complete command from a cut one (the file ends
//! inside it: a crash mid-write) and from bytes that are not a command at all (corruption),
//! so the loader can cut a truncated tail and refuse a corrupt file.

use bytes::Bytes;

/// Appends `argv` as a RESP array of bulk strings.
pub(crate) fn encode<A: AsRef<[u8]>>(argv: &[A], out: &mut Vec<u8>) {
    let mut n = itoa::Buffer::new();
    out.push(b'*');
    out.extend_from_slice(n.format(argv.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    for arg in argv {
        let arg = arg.as_ref();
        out.push(b'$');
        out.extend_from_slice(n.format(arg.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// What [`parse`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A command and the bytes it took.
    Command(Vec<Bytes>, usize),
    /// The input ends inside a command.
    Truncated,
    /// The bytes are not a command.
    Corrupt,
}

/// Longest header line (`*<n>` or `$<len>`) accepted.
const HEADER_BYTES_MAX: usize = 32;

/// Reads a `<prefix><number>\r\n` header at `at`: the number and where the line ends.
fn header(buf: &[u8], at: usize, prefix: u8) -> Result<Option<(u64, usize)>, ()> {
    let Some(&first) = buf.get(at) else {
        return Ok(None);
    };
    if first != prefix {
        return Err(());
    }
    let rest = &buf[at + 1..];
    let Some(nl) = rest.iter().take(HEADER_BYTES_MAX).position(|&b| b == b'\n') else {
        return if rest.len() < HEADER_BYTES_MAX {
            Ok(None)
        } else {
            Err(())
        };
    };
    let line = &rest[..nl];
    let Some(digits) = line.strip_suffix(b"\r") else {
        return Err(());
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(());
    }
    let n = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse().ok())
        .ok_or(())?;
    Ok(Some((n, at + 1 + nl + 1)))
}

/// Parses the command starting at `buf[0]`.
pub(crate) fn parse(buf: &[u8]) -> Parsed {
    /// Most arguments per command accepted (Redis's limit is INT_MAX; this bounds memory).
    const ARGS_MAX: u64 = 1 << 24;
    let (argc, mut at) = match header(buf, 0, b'*') {
        Err(()) => return Parsed::Corrupt,
        Ok(None) => return Parsed::Truncated,
        Ok(Some(found)) => found,
    };
    if argc == 0 || argc > ARGS_MAX {
        return Parsed::Corrupt;
    }
    let mut argv = Vec::with_capacity(argc as usize);
    for _ in 0..argc {
        let (len, start) = match header(buf, at, b'$') {
            Err(()) => return Parsed::Corrupt,
            Ok(None) => return Parsed::Truncated,
            Ok(Some(found)) => found,
        };
        let Some(end) = usize::try_from(len).ok().and_then(|l| start.checked_add(l)) else {
            return Parsed::Corrupt;
        };
        if buf.len() < end + 2 {
            return Parsed::Truncated;
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Parsed::Corrupt;
        }
        argv.push(Bytes::copy_from_slice(&buf[start..end]));
        at = end + 2;
    }
    Parsed::Command(argv, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_tells_truncated_from_corrupt() {
        let mut buf = Vec::new();
        encode(&["XADD", "k", "1-1", "f", "v\r\n"], &mut buf);
        let Parsed::Command(argv, used) = parse(&buf) else {
            panic!("not parsed");
        };
        assert_eq!(used, buf.len());
        assert_eq!(argv[4].as_ref(), b"v\r\n");
        for cut in 0..buf.len() {
            assert_eq!(parse(&buf[..cut]), Parsed::Truncated, "cut at {cut}");
        }
        for bad in [
            &b"+OK\r\n"[..],
            b"*0\r\n",
            b"*1\r\n:1\r\n",
            b"*1\r\n$1\r\nab\r\n",
            b"*-1\r\n",
            b"*1\n$1\r\na\r\n",
        ] {
            assert_eq!(parse(bad), Parsed::Corrupt, "{bad:?}");
        }
    }
}

//! An unknown command's error with the bytes the client sent.
//!
//! Redis echoes the name and first arguments as they are (`unknown command '%.128s', with
//! args beginning with: '...' `), invalid UTF-8 included, with CR and LF turned into spaces
//! and each C string ending at its first NUL byte. A reply error holds text, so when the
//! echo is not UTF-8, `execute` answers [`raw_unknown_command`]'s bytes as
//! `Action::Raw` instead.

/// Bytes of the name, and of all arguments together, that the message shows at most.
const SHOWN_BYTES_MAX: usize = 128;

/// `bytes` as C's `%.Ns` prints it: up to the first NUL, at most `max` bytes.
fn c_string(bytes: &[u8], max: usize) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end.min(max)]
}

/// The whole error line (`-ERR unknown command ...\r\n`) for `argv`, byte for byte Redis's.
pub(crate) fn unknown_command_line(argv: &[&[u8]]) -> Vec<u8> {
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(c_string(argv[0], SHOWN_BYTES_MAX));
    text.push(b'\'');
    if argv.len() > 1 {
        text.extend_from_slice(b", with args beginning with: ");
    }
    let mut shown = 0usize;
    for arg in &argv[1..] {
        if shown >= SHOWN_BYTES_MAX {
            break;
        }
        let arg = c_string(arg, SHOWN_BYTES_MAX - shown);
        text.push(b'\'');
        text.extend_from_slice(arg);
        text.extend_from_slice(b"' ");
        shown += arg.len() + 3;
    }
    let mut line = Vec::with_capacity(text.len() + 3);
    line.push(b'-');
    line.extend(
        text.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    line.extend_from_slice(b"\r\n");
    line
}

/// For an unknown command whose echo is not valid UTF-8: its error line; `None` when the
/// echo is text, which a [`echomq_engine::Reply::Error`] carries.
pub(crate) fn raw_unknown_command(argv: &[&[u8]]) -> Option<Vec<u8>> {
    let line = unknown_command_line(argv);
    std::str::from_utf8(&line).is_err().then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_raw_bytes_truncated_like_printf() {
        assert_eq!(
            unknown_command_line(&[b"\xff\xfeabc", b"x", b"y"]),
            b"-ERR unknown command '\xff\xfeabc', with args beginning with: 'x' 'y' \r\n".to_vec()
        );
        assert_eq!(
            unknown_command_line(&[b"a\r\nb\0c", b"\x80"]),
            b"-ERR unknown command 'a  b', with args beginning with: '\x80' \r\n".to_vec()
        );
        assert_eq!(
            unknown_command_line(&[b"\xff"]),
            b"-ERR unknown command '\xff'\r\n".to_vec()
        );
        let long = vec![b'z'; 300];
        let line = unknown_command_line(&[&long, &long, b"never"]);
        let text = String::from_utf8(line).unwrap();
        assert_eq!(text.matches('z').count(), 128 + 128);
        assert!(!text.contains("never"));
    }
}

//! The `resp_decode` target: a client's input stream through [`crate::resp::decode`].
//!
//! ```text
//! input := head stream
//! head  := bits 0-2: proto-max-bulk-len from BULK_BYTES_MAX
//!          bit 3:    the client has not authenticated (tighter limits)
//!          bits 4-7: size of the pieces the stream also arrives in (1 to 16 bytes)
//! ```
//!
//! Properties, for every input:
//! - decoding the whole stream command after command ends in "incomplete" or an error, each
//!   command using at least one byte and no more than it was given;
//! - a multibulk command respects the limits (bulk length, and the unauthenticated caps);
//! - the stream arriving in pieces (byte by byte for short inputs, and in pieces of the head's
//!   size) decodes to the same commands and ends the same way, except that a line longer than
//!   the inline limit may be refused earlier when it arrives in pieces, as in Redis;
//! - every command, re-encoded as multibulk and as an inline line with every argument quoted,
//!   decodes back to itself, using exactly the re-encoded bytes.

use bytes::Bytes;

use crate::error::ProtocolError;
use crate::resp::decode::{
    INLINE_BYTES_MAX, UNAUTHENTICATED_BULK_MAX, UNAUTHENTICATED_MULTIBULK_MAX,
};
use crate::resp::{DecodeLimits, Decoded, decode};

/// `proto-max-bulk-len` values the head picks from (Redis's own minimum is 1 MiB; smaller ones
/// exercise the check).
const BULK_BYTES_MAX: [i64; 8] = [0, 1, 3, 16, 1024, 1 << 20, 512 << 20, i64::MAX];
/// Streams up to this long also arrive one byte at a time (decoding is quadratic then).
const BYTEWISE_LEN_MAX: usize = 512;

/// How a decoding run ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Waiting for more bytes, with this many left over.
    Incomplete(usize),
    Error(ProtocolError),
}

/// Commands decoded, each with the bytes it used, and how decoding ended.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    commands: Vec<(Vec<Bytes>, usize)>,
    end: End,
}

/// Runs the decoder over `data`; panics if a property breaks.
pub fn run(data: &[u8]) {
    let Some((&head, stream)) = data.split_first() else {
        return;
    };
    let limits = DecodeLimits {
        bulk_bytes_max: BULK_BYTES_MAX[usize::from(head & 7)],
        unauthenticated: head & 8 != 0,
    };
    let whole = decode_in_pieces(stream, stream.len().max(1), &limits);
    let mut used = 0;
    for (argv, n) in &whole.commands {
        check_limits(&stream[used..used + n], argv, &limits);
        check_reencoding(argv);
        used += n;
    }
    if let End::Incomplete(rest) = whole.end {
        assert_eq!(used + rest, stream.len(), "bytes lost");
    }
    let piece = 1 + usize::from(head >> 4);
    if stream.len() <= BYTEWISE_LEN_MAX {
        compare(&whole, &decode_in_pieces(stream, 1, &limits), 1);
    }
    compare(&whole, &decode_in_pieces(stream, piece, &limits), piece);
}

/// Feeds `stream` to a buffer `piece` bytes at a time, decoding every complete command as a
/// connection does.
fn decode_in_pieces(stream: &[u8], piece: usize, limits: &DecodeLimits) -> Run {
    let mut buffer: Vec<u8> = Vec::new();
    let mut commands = Vec::new();
    for chunk in stream.chunks(piece) {
        buffer.extend_from_slice(chunk);
        loop {
            match decode(&buffer, limits) {
                Ok(Decoded::Command(argv, used)) => {
                    assert!(
                        used >= 1 && used <= buffer.len(),
                        "a command claims {used} of {} bytes",
                        buffer.len()
                    );
                    buffer.drain(..used);
                    commands.push((argv, used));
                }
                Ok(Decoded::Incomplete) => break,
                Err(e) => {
                    return Run {
                        commands,
                        end: End::Error(e),
                    };
                }
            }
        }
    }
    Run {
        commands,
        end: End::Incomplete(buffer.len()),
    }
}

/// Whether an error is one of the "line too long" ones, which depend on how much has arrived.
fn too_long(e: &ProtocolError) -> bool {
    matches!(
        e,
        ProtocolError::TooBigInline
            | ProtocolError::TooBigMultibulkCount
            | ProtocolError::TooBigBulkCount
    )
}

fn compare(whole: &Run, pieces: &Run, piece: usize) {
    if let End::Error(e) = &pieces.end
        && too_long(e)
        && whole.end != pieces.end
    {
        // Refused early: what was decoded before must agree.
        assert!(
            whole.commands.starts_with(&pieces.commands),
            "in pieces of {piece}: decoded differently before a line got too long"
        );
        return;
    }
    assert_eq!(
        whole, pieces,
        "the stream in pieces of {piece} decodes differently"
    );
}

/// The limits a multibulk command was decoded under.
fn check_limits(frame: &[u8], argv: &[Bytes], limits: &DecodeLimits) {
    if frame.first() != Some(&b'*') {
        return;
    }
    for arg in argv {
        assert!(
            arg.len() as i64 <= limits.bulk_bytes_max,
            "a {}-byte bulk passed proto-max-bulk-len {}",
            arg.len(),
            limits.bulk_bytes_max
        );
    }
    if limits.unauthenticated {
        assert!(argv.len() as i64 <= UNAUTHENTICATED_MULTIBULK_MAX);
        assert!(
            argv.iter()
                .all(|a| a.len() as i64 <= UNAUTHENTICATED_BULK_MAX)
        );
    }
}

/// Every command decodes back from a canonical multibulk and from a quoted inline line.
fn check_reencoding(argv: &[Bytes]) {
    let open = DecodeLimits {
        bulk_bytes_max: i64::MAX,
        unauthenticated: false,
    };
    let multibulk = multibulk(argv);
    assert_eq!(
        decode(&multibulk, &open),
        Ok(Decoded::Command(argv.to_vec(), multibulk.len())),
        "multibulk re-encoding of {argv:?}"
    );
    let inline = inline(argv);
    if inline.len() <= INLINE_BYTES_MAX {
        // An inline line of no arguments is skipped like an empty multibulk.
        assert_eq!(
            decode(&inline, &open),
            Ok(Decoded::Command(argv.to_vec(), inline.len())),
            "inline re-encoding of {argv:?}: {:?}",
            String::from_utf8_lossy(&inline)
        );
    }
}

/// `*<n>\r\n$<len>\r\n<arg>\r\n...`
pub(super) fn multibulk<A: AsRef<[u8]>>(argv: &[A]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for arg in argv {
        let arg = arg.as_ref();
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Every argument in double quotes, anything but letters and digits as `\xHH`.
fn inline(argv: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::new();
    for arg in argv {
        out.push(b'"');
        for &b in arg.iter() {
            if b.is_ascii_alphanumeric() {
                out.push(b);
            } else {
                out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
            }
        }
        out.extend_from_slice(b"\" ");
    }
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_too_long_for_pieces_but_whole_in_one_read_is_accepted() {
        // Whole, the inline line has its newline and decodes; in pieces of 16 the buffer
        // passes the inline limit before the newline arrives, and Redis refuses it there.
        let mut data = vec![0xF4];
        data.extend(std::iter::repeat_n(b'a', INLINE_BYTES_MAX + 10));
        data.extend_from_slice(b"\r\nPING\r\n");
        run(&data);
        // The same for a multibulk count line.
        let mut data = vec![0xF4, b'*'];
        data.extend(std::iter::repeat_n(b'1', INLINE_BYTES_MAX + 10));
        data.extend_from_slice(b"\r\n");
        run(&data);
    }
}

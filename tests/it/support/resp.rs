//! A minimal RESP client side: encode a command, read one RESP2 or RESP3 reply, and put engine
//! replies in the same form so a comparison is byte for byte.
//!
//! Why not the `redis` crate: its `Value` has a single `Nil` for both `$-1` (null bulk) and
//! `*-1` (null array), turns `+OK` into `Okay`, and splits an error into code and detail.
//! Those are exactly the distinctions a differential test must see (XRANGE COUNT 0 is `*-1`,
//! XADD NOMKSTREAM is `$-1`). Reading RESP2 takes a page of code, and the reader keeps the raw
//! bytes of every reply, so "equal" here means the server's bytes equal the bytes our encoding
//! of the engine's reply produces.
//!
//! The RESP3 types (after `HELLO 3`) are read too, for the wire tests that compare a real server
//! with ours: every RESP3 type byte except attributes (`|`), which neither server sends for the
//! commands compared. Their encoding also reproduces the bytes read.

use std::fmt;
use std::io::{self, BufRead, Write};

use echomq_engine::{Error, Reply};

/// One RESP2 or RESP3 reply. Every distinction is kept, so two values are equal exactly when
/// their canonical encodings are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    /// `+text`
    Simple(String),
    /// `-text`, the full line including the code (`ERR syntax error`).
    Error(String),
    /// `:n`
    Int(i64),
    /// `$len` + bytes
    Bulk(Vec<u8>),
    /// `$-1`
    NullBulk,
    /// `*-1`
    NullArray,
    /// `*n` + items
    Array(Vec<Resp>),
    /// RESP3 `_`
    Null,
    /// RESP3 `%n` + keys and values
    Map(Vec<(Resp, Resp)>),
    /// RESP3 `~n` + items
    Set(Vec<Resp>),
    /// RESP3 `>n` + items (out-of-band)
    Push(Vec<Resp>),
    /// RESP3 `#t` / `#f`
    Boolean(bool),
    /// RESP3 `,text`, the text as sent
    Double(String),
    /// RESP3 `(digits`
    BigNumber(String),
    /// RESP3 `=len` + `fmt:text`, the whole payload
    Verbatim(Vec<u8>),
    /// RESP3 `!len` + text
    BlobError(Vec<u8>),
}

impl Resp {
    /// The engine's reply as a RESP2 server sends it: errors as `-{Display}`, a map as a flat
    /// array of keys and values, XREAD's stream map as an array of `[key, value]` pairs,
    /// verbatim text as a bulk string.
    pub fn from_engine(reply: &Result<Reply, Error>) -> Resp {
        match reply {
            Ok(reply) => Resp::from_reply(reply),
            Err(error) => Resp::Error(error.to_string()),
        }
    }

    fn from_reply(reply: &Reply) -> Resp {
        match reply {
            Reply::Status(s) => Resp::Simple((*s).to_string()),
            Reply::Int(n) => Resp::Int(*n),
            Reply::Bulk(b) => Resp::Bulk(b.to_vec()),
            Reply::Null => Resp::NullBulk,
            Reply::NullArray => Resp::NullArray,
            Reply::Array(items) | Reply::Set(items) => {
                Resp::Array(items.iter().map(Resp::from_reply).collect())
            }
            Reply::Map(pairs) => Resp::Array(
                pairs
                    .iter()
                    .flat_map(|(k, v)| [Resp::from_reply(k), Resp::from_reply(v)])
                    .collect(),
            ),
            Reply::StreamMap(pairs) => Resp::Array(
                pairs
                    .iter()
                    .map(|(k, v)| Resp::Array(vec![Resp::from_reply(k), Resp::from_reply(v)]))
                    .collect(),
            ),
            Reply::Verbatim(text) | Reply::Double(text) => Resp::Bulk(text.to_vec()),
            Reply::Error(text) => Resp::Error(text.clone()),
            Reply::Entries(entries) => {
                Resp::Array(entries.to_replies().iter().map(Resp::from_reply).collect())
            }
            Reply::Bulks(bulks) => {
                Resp::Array(bulks.to_replies().iter().map(Resp::from_reply).collect())
            }
            Reply::Raw(bytes) => {
                let mut raw = Vec::new();
                Resp::read(&mut &bytes[..], &mut raw)
                    .unwrap_or_else(|e| Resp::Error(format!("unreadable reply: {e}")))
            }
        }
    }

    /// The canonical RESP2 bytes of this value.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Resp::Simple(s) => line(out, b'+', s.as_bytes()),
            Resp::Error(s) => line(out, b'-', s.as_bytes()),
            Resp::Int(n) => line(out, b':', n.to_string().as_bytes()),
            Resp::Bulk(b) => blob(out, b'$', b),
            Resp::NullBulk => out.extend_from_slice(b"$-1\r\n"),
            Resp::NullArray => out.extend_from_slice(b"*-1\r\n"),
            Resp::Array(items) => aggregate(out, b'*', items),
            Resp::Null => out.extend_from_slice(b"_\r\n"),
            Resp::Map(pairs) => {
                line(out, b'%', pairs.len().to_string().as_bytes());
                for (k, v) in pairs {
                    k.encode(out);
                    v.encode(out);
                }
            }
            Resp::Set(items) => aggregate(out, b'~', items),
            Resp::Push(items) => aggregate(out, b'>', items),
            Resp::Boolean(b) => line(out, b'#', if *b { b"t" } else { b"f" }),
            Resp::Double(text) => line(out, b',', text.as_bytes()),
            Resp::BigNumber(text) => line(out, b'(', text.as_bytes()),
            Resp::Verbatim(b) => blob(out, b'=', b),
            Resp::BlobError(b) => blob(out, b'!', b),
        }
    }

    /// The bytes as a fresh vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Reads one reply, appending every byte consumed to `raw`.
    pub fn read(reader: &mut impl BufRead, raw: &mut Vec<u8>) -> io::Result<Resp> {
        let start = raw.len();
        let n = reader.read_until(b'\n', raw)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        let header = raw[start..]
            .strip_suffix(b"\r\n")
            .ok_or_else(|| invalid(format!("line without CRLF: {:?}", lossy(&raw[start..]))))?;
        let (&kind, rest) = header
            .split_first()
            .ok_or_else(|| invalid("empty line".into()))?;
        let text = std::str::from_utf8(rest)
            .map_err(|_| invalid(format!("header is not UTF-8: {:?}", lossy(rest))))?
            .to_string();
        let number = || {
            text.parse::<i64>()
                .map_err(|_| invalid(format!("bad number {text:?}")))
        };
        let length = || {
            let n = number()?;
            usize::try_from(n).map_err(|_| invalid(format!("bad length {n}")))
        };
        Ok(match kind {
            b'+' => Resp::Simple(text),
            b'-' => Resp::Error(text),
            b':' => Resp::Int(number()?),
            b'$' if text == "-1" => Resp::NullBulk,
            b'$' => Resp::Bulk(read_blob(reader, raw, length()?)?),
            b'*' if text == "-1" => Resp::NullArray,
            b'*' => Resp::Array(read_items(reader, raw, length()?)?),
            b'_' if text.is_empty() => Resp::Null,
            b'%' => {
                let flat = read_items(reader, raw, 2 * length()?)?;
                let mut pairs = Vec::with_capacity(flat.len() / 2);
                let mut flat = flat.into_iter();
                while let (Some(k), Some(v)) = (flat.next(), flat.next()) {
                    pairs.push((k, v));
                }
                Resp::Map(pairs)
            }
            b'~' => Resp::Set(read_items(reader, raw, length()?)?),
            b'>' => Resp::Push(read_items(reader, raw, length()?)?),
            b'#' if text == "t" || text == "f" => Resp::Boolean(text == "t"),
            b',' => Resp::Double(text),
            b'(' => Resp::BigNumber(text),
            b'=' => Resp::Verbatim(read_blob(reader, raw, length()?)?),
            b'!' => Resp::BlobError(read_blob(reader, raw, length()?)?),
            other => {
                return Err(invalid(format!(
                    "not a RESP type byte (or an unsupported one): {:?} in {:?}",
                    char::from(other),
                    lossy(header)
                )));
            }
        })
    }

    /// The text of a `Bulk` that is valid UTF-8.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Resp::Bulk(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }
}

/// Writes a command as a RESP2 array of bulk strings.
pub fn write_command<A: AsRef<[u8]>>(out: &mut impl Write, argv: &[A]) -> io::Result<()> {
    let mut buf = Vec::new();
    line(&mut buf, b'*', argv.len().to_string().as_bytes());
    for arg in argv {
        let arg = arg.as_ref();
        line(&mut buf, b'$', arg.len().to_string().as_bytes());
        buf.extend_from_slice(arg);
        buf.extend_from_slice(b"\r\n");
    }
    out.write_all(&buf)?;
    out.flush()
}

/// Reads a blob's `len` bytes and its CRLF.
fn read_blob(reader: &mut impl BufRead, raw: &mut Vec<u8>, len: usize) -> io::Result<Vec<u8>> {
    let at = raw.len();
    raw.resize(at + len + 2, 0);
    reader.read_exact(&mut raw[at..])?;
    if &raw[at + len..] != b"\r\n" {
        return Err(invalid("blob without CRLF".into()));
    }
    Ok(raw[at..at + len].to_vec())
}

/// Reads `len` values.
fn read_items(reader: &mut impl BufRead, raw: &mut Vec<u8>, len: usize) -> io::Result<Vec<Resp>> {
    let mut items = Vec::with_capacity(len.min(1024));
    for _ in 0..len {
        items.push(Resp::read(reader, raw)?);
    }
    Ok(items)
}

fn blob(out: &mut Vec<u8>, kind: u8, body: &[u8]) {
    line(out, kind, body.len().to_string().as_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n");
}

fn aggregate(out: &mut Vec<u8>, kind: u8, items: &[Resp]) {
    line(out, kind, items.len().to_string().as_bytes());
    for item in items {
        item.encode(out);
    }
}

fn line(out: &mut Vec<u8>, kind: u8, body: &[u8]) {
    out.push(kind);
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n");
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An argument list as one readable line: `XADD s 1-1 f "two words"`, long arguments shortened.
pub fn show_argv<A: AsRef<[u8]>>(argv: &[A]) -> String {
    let shown: Vec<String> = argv.iter().map(|a| show_bytes(a.as_ref())).collect();
    shown.join(" ")
}

fn show_bytes(bytes: &[u8]) -> String {
    const SHOWN_MAX: usize = 40;
    let plain = !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_graphic() && *b != b'"' && *b != b'\\');
    let text = if plain {
        lossy(bytes)
    } else {
        format!("{:?}", lossy(bytes))
    };
    if text.chars().count() > SHOWN_MAX {
        let shown: String = text.chars().take(SHOWN_MAX).collect();
        format!("{shown}...({} bytes)", bytes.len())
    } else {
        text
    }
}

/// redis-cli style, one value per line, nested aggregates indented.
impl fmt::Display for Resp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list<'a>(
            f: &mut fmt::Formatter<'_>,
            depth: usize,
            what: &str,
            items: impl ExactSizeIterator<Item = &'a Resp>,
        ) -> fmt::Result {
            if items.len() == 0 {
                return write!(f, "(empty {what})");
            }
            for (i, item) in items.enumerate() {
                if i > 0 {
                    write!(f, "\n{:width$}", "", width = depth * 3)?;
                }
                write!(f, "{}) ", i + 1)?;
                go(item, f, depth + 1)?;
            }
            Ok(())
        }
        fn go(v: &Resp, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
            match v {
                Resp::Simple(s) => write!(f, "+{s}"),
                Resp::Error(s) => write!(f, "(error) {s}"),
                Resp::Int(n) => write!(f, "(integer) {n}"),
                Resp::Bulk(b) => write!(f, "{}", show_bytes(b)),
                Resp::NullBulk => write!(f, "(nil bulk $-1)"),
                Resp::NullArray => write!(f, "(nil array *-1)"),
                Resp::Null => write!(f, "(null _)"),
                Resp::Array(items) => list(f, depth, "array", items.iter()),
                Resp::Set(items) => list(f, depth, "set", items.iter()),
                Resp::Push(items) => list(f, depth, "push", items.iter()),
                Resp::Map(pairs) if pairs.is_empty() => write!(f, "(empty map)"),
                Resp::Map(pairs) => {
                    for (i, (k, v)) in pairs.iter().enumerate() {
                        if i > 0 {
                            write!(f, "\n{:width$}", "", width = depth * 3)?;
                        }
                        write!(f, "{}# ", i + 1)?;
                        go(k, f, depth + 1)?;
                        write!(f, " => ")?;
                        go(v, f, depth + 1)?;
                    }
                    Ok(())
                }
                Resp::Boolean(b) => write!(f, "(boolean) {b}"),
                Resp::Double(text) => write!(f, "(double) {text}"),
                Resp::BigNumber(text) => write!(f, "(big number) {text}"),
                Resp::Verbatim(b) => write!(f, "(verbatim) {}", show_bytes(b)),
                Resp::BlobError(b) => write!(f, "(blob error) {}", show_bytes(b)),
            }
        }
        go(self, f, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8]) -> (Resp, Vec<u8>) {
        let mut raw = Vec::new();
        let value = Resp::read(&mut &bytes[..], &mut raw).unwrap();
        (value, raw)
    }

    #[test]
    fn reader_keeps_null_bulk_and_null_array_apart() {
        assert_eq!(read_all(b"$-1\r\n").0, Resp::NullBulk);
        assert_eq!(read_all(b"*-1\r\n").0, Resp::NullArray);
        assert_eq!(read_all(b"*0\r\n").0, Resp::Array(vec![]));
        assert_eq!(read_all(b"$0\r\n\r\n").0, Resp::Bulk(vec![]));
    }

    #[test]
    fn reader_records_exactly_the_bytes_of_one_reply_and_encoding_reproduces_them() {
        let wire = b"*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$4\r\na\r\nb\r\n-ERR syntax error\r\n:7\r\n";
        let mut reader = &wire[..];
        let mut raw = Vec::new();
        let first = Resp::read(&mut reader, &mut raw).unwrap();
        assert_eq!(first.to_bytes(), raw);
        assert_eq!(
            first,
            Resp::Array(vec![
                Resp::Array(vec![
                    Resp::Bulk(b"1-1".to_vec()),
                    Resp::Array(vec![
                        Resp::Bulk(b"f".to_vec()),
                        Resp::Bulk(b"a\r\nb".to_vec())
                    ]),
                ]),
                Resp::Error("ERR syntax error".into()),
            ])
        );
        let mut raw = Vec::new();
        assert_eq!(Resp::read(&mut reader, &mut raw).unwrap(), Resp::Int(7));
        assert_eq!(raw, b":7\r\n");
    }

    #[test]
    fn resp3_types_are_read_and_encoded_back_to_the_same_bytes() {
        let wire = b"%2\r\n$4\r\nname\r\n_\r\n$1\r\nx\r\n~1\r\n#t\r\n\
            >2\r\n,1.5\r\n(123\r\n=8\r\ntxt:abcd\r\n!3\r\nERR\r\n";
        let mut reader = &wire[..];
        for _ in 0..4 {
            let mut raw = Vec::new();
            let value = Resp::read(&mut reader, &mut raw).unwrap();
            assert_eq!(value.to_bytes(), raw, "{value}");
        }
        assert!(reader.is_empty());
        assert_eq!(read_all(b"_\r\n").0, Resp::Null);
    }

    #[test]
    fn engine_errors_become_their_full_redis_text() {
        let reply = Resp::from_engine(&Err(Error::Syntax));
        assert_eq!(reply.to_bytes(), b"-ERR syntax error\r\n");
        let reply = Resp::from_engine(&Ok(Reply::Map(vec![(
            Reply::bulk_static("length"),
            Reply::Int(3),
        )])));
        assert_eq!(reply.to_bytes(), b"*2\r\n$6\r\nlength\r\n:3\r\n");
    }

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        write_command(&mut out, &["XLEN", "s"]).unwrap();
        assert_eq!(out, b"*2\r\n$4\r\nXLEN\r\n$1\r\ns\r\n");
    }
}

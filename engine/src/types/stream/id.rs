//! Stream entry ids and Redis's exact rules for reading them from arguments.
//!
//! A [`StreamId`] is `<ms>-<seq>`, two unsigned 64-bit numbers ordered by `(ms, seq)`. Its
//! 16-byte big-endian form ([`StreamId::to_be_bytes`]) sorts byte-wise in id order, which is why
//! it keys the node index.
//!
//! Parsing follows Redis (`streamGenericParseIDOrReply`), quirks included, because clients and
//! test suites depend on them:
//! - an argument longer than 127 bytes is invalid, and only the bytes before a NUL count;
//! - `-` and `+` mean `0-0` and `max-max`, but only where [`IdContext`] allows them;
//! - a missing `-<seq>` takes the context's default sequence (0, or `u64::MAX` for range ends);
//! - each number is read like C's `string2ull`: strict decimal first, then `strtoull`, so
//!   `+5`, ` 7` and `018` are accepted while `-1` is not;
//! - `(` marks an exclusive range bound and is followed by a strict id.

use std::fmt;

use crate::error::{Error, Result};

/// The id of a stream entry: milliseconds, then a sequence number within that millisecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Unix time in milliseconds for `*` ids; any value for explicit ids.
    pub ms: u64,
    /// Sequence number within `ms`.
    pub seq: u64,
}

impl StreamId {
    /// `0-0`: below every valid entry id.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// `max-max`: the last possible id.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// An id from its two parts.
    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The id as one 128-bit number, `ms` in the high half.
    pub const fn as_u128(self) -> u128 {
        ((self.ms as u128) << 64) | self.seq as u128
    }

    /// The inverse of [`StreamId::as_u128`].
    pub const fn from_u128(v: u128) -> StreamId {
        StreamId {
            ms: (v >> 64) as u64,
            seq: v as u64,
        }
    }

    /// The 16-byte big-endian key: byte order equals id order.
    pub fn to_be_bytes(self) -> [u8; 16] {
        self.as_u128().to_be_bytes()
    }

    /// The next id (`seq + 1`, carrying into `ms`), or `None` after `max-max`.
    pub fn next(self) -> Option<StreamId> {
        self.as_u128().checked_add(1).map(StreamId::from_u128)
    }

    /// The previous id (borrowing from `ms`), or `None` before `0-0`.
    pub fn prev(self) -> Option<StreamId> {
        self.as_u128().checked_sub(1).map(StreamId::from_u128)
    }

    /// Longest text form: two 20-digit numbers and a dash.
    pub const TEXT_BYTES_MAX: usize = 41;

    /// Writes `<ms>-<seq>` into `buf` without the formatting machinery (a hot path: every
    /// XADD reply and every entry of a range reply); returns the length written.
    pub fn write_text(self, buf: &mut [u8; StreamId::TEXT_BYTES_MAX]) -> usize {
        let mut ms = itoa::Buffer::new();
        let mut seq = itoa::Buffer::new();
        let (ms, seq) = (
            ms.format(self.ms).as_bytes(),
            seq.format(self.seq).as_bytes(),
        );
        let len = ms.len() + 1 + seq.len();
        buf[..ms.len()].copy_from_slice(ms);
        buf[ms.len()] = b'-';
        buf[ms.len() + 1..len].copy_from_slice(seq);
        len
    }

    /// Whether this is `0-0`.
    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// Parses a strict, complete-or-incomplete id (`<ms>` means `<ms>-0`); `-` and `+` are
    /// rejected. This is the form XDEL, XACK, XSETID, MINID and friends take.
    pub fn parse_strict(arg: &[u8]) -> Result<StreamId> {
        match parse_generic(arg, 0, true, false)? {
            Parsed::Id(id) => Ok(id),
            Parsed::SeqAuto(_) => Err(Error::InvalidStreamId),
        }
    }

    /// Parses an id where `-` and `+` are allowed (`<ms>` means `<ms>-<missing_seq>`).
    pub fn parse_lenient(arg: &[u8], missing_seq: u64) -> Result<StreamId> {
        match parse_generic(arg, missing_seq, false, false)? {
            Parsed::Id(id) => Ok(id),
            Parsed::SeqAuto(_) => Err(Error::InvalidStreamId),
        }
    }

    /// Parses the start of a range (XRANGE start, XREVRANGE second bound, XPENDING start,
    /// XAUTOCLAIM start): lenient, incomplete ids take seq 0, `(id` is the id after `id`.
    pub fn parse_range_start(arg: &[u8]) -> Result<StreamId> {
        let (id, exclusive) = parse_interval(arg, 0)?;
        if !exclusive {
            return Ok(id);
        }
        id.next().ok_or(Error::InvalidStartInterval)
    }

    /// Parses the end of a range: lenient, incomplete ids take seq `u64::MAX`, `(id` is the
    /// id before `id`.
    pub fn parse_range_end(arg: &[u8]) -> Result<StreamId> {
        let (id, exclusive) = parse_interval(arg, u64::MAX)?;
        if !exclusive {
            return Ok(id);
        }
        id.prev().ok_or(Error::InvalidEndInterval)
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// The id argument of XADD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddId {
    /// `*`: generated from the clock and the stream's `last_id`.
    Auto,
    /// `<ms>-*`: the given ms, with the next free sequence in it.
    AutoSeq(u64),
    /// A complete (or `<ms>`-only, meaning seq 0) explicit id.
    Explicit(StreamId),
}

impl AddId {
    /// Parses XADD's id argument with Redis's rules (strict, plus `*` and `<ms>-*`).
    pub fn parse(arg: &[u8]) -> Result<AddId> {
        if arg == b"*" {
            return Ok(AddId::Auto);
        }
        Ok(match parse_generic(arg, 0, true, true)? {
            Parsed::Id(id) => AddId::Explicit(id),
            Parsed::SeqAuto(ms) => AddId::AutoSeq(ms),
        })
    }
}

impl fmt::Display for AddId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddId::Auto => f.write_str("*"),
            AddId::AutoSeq(ms) => write!(f, "{ms}-*"),
            AddId::Explicit(id) => id.fmt(f),
        }
    }
}

/// Longest id argument Redis reads (its buffer is 128 bytes with the NUL).
const ID_ARG_LEN_MAX: usize = 127;

enum Parsed {
    Id(StreamId),
    SeqAuto(u64),
}

/// `(id` handling shared by both range bounds: returns the id and whether it was exclusive.
fn parse_interval(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool)> {
    if arg.len() > 1 && arg[0] == b'(' {
        match parse_generic(&arg[1..], missing_seq, true, false)? {
            Parsed::Id(id) => Ok((id, true)),
            Parsed::SeqAuto(_) => Err(Error::InvalidStreamId),
        }
    } else {
        match parse_generic(arg, missing_seq, false, false)? {
            Parsed::Id(id) => Ok((id, false)),
            Parsed::SeqAuto(_) => Err(Error::InvalidStreamId),
        }
    }
}

fn parse_generic(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    allow_seq_auto: bool,
) -> Result<Parsed> {
    if arg.len() > ID_ARG_LEN_MAX {
        return Err(Error::InvalidStreamId);
    }
    // Redis copies the argument into a C string: everything after a NUL is invisible.
    let arg = match arg.iter().position(|&b| b == 0) {
        Some(nul) => &arg[..nul],
        None => arg,
    };
    match arg {
        b"-" if !strict => return Ok(Parsed::Id(StreamId::MIN)),
        b"+" if !strict => return Ok(Parsed::Id(StreamId::MAX)),
        b"-" | b"+" => return Err(Error::InvalidStreamId),
        _ => {}
    }
    let (ms_part, seq_part) = match arg.iter().position(|&b| b == b'-') {
        Some(dash) => (&arg[..dash], Some(&arg[dash + 1..])),
        None => (arg, None),
    };
    let ms = string_to_u64(ms_part).ok_or(Error::InvalidStreamId)?;
    match seq_part {
        None => Ok(Parsed::Id(StreamId::new(ms, missing_seq))),
        Some(b"*") if allow_seq_auto => Ok(Parsed::SeqAuto(ms)),
        Some(seq) => {
            let seq = string_to_u64(seq).ok_or(Error::InvalidStreamId)?;
            Ok(Parsed::Id(StreamId::new(ms, seq)))
        }
    }
}

/// Redis's `string2ll`: strict decimal, no sign but `-`, no leading zeros, no spaces.
pub(crate) fn string_to_i64(s: &[u8]) -> Option<i64> {
    match s {
        [] => None,
        [b'0'] => Some(0),
        [b'-', digits @ ..] => {
            let magnitude = strict_digits(digits)?;
            if magnitude <= i64::MAX as u64 + 1 {
                Some((magnitude as i64).wrapping_neg())
            } else {
                None
            }
        }
        digits => i64::try_from(strict_digits(digits)?).ok(),
    }
}

/// Digits `[1-9][0-9]*` as a `u64`, or `None` on anything else or overflow.
fn strict_digits(digits: &[u8]) -> Option<u64> {
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut value: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(value)
}

/// Redis's `string2ull`: `string2ll` first (a negative result is rejected), then C's `strtoull`
/// (leading white space, an optional sign, at least one digit, nothing after, no overflow;
/// a `-` sign negates modulo 2^64 as C does).
fn string_to_u64(s: &[u8]) -> Option<u64> {
    if let Some(v) = string_to_i64(s) {
        return u64::try_from(v).ok();
    }
    let start = s.iter().position(|b| !is_c_space(*b)).unwrap_or(s.len());
    let mut rest = &s[start..];
    let negative = match rest.first() {
        Some(b'-') => {
            rest = &rest[1..];
            true
        }
        Some(b'+') => {
            rest = &rest[1..];
            false
        }
        _ => false,
    };
    if rest.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    for &d in rest {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    #[test]
    fn strict_ids_take_seq_zero_and_reject_dash_and_plus() {
        assert_eq!(StreamId::parse_strict(b"5"), Ok(id(5, 0)));
        assert_eq!(StreamId::parse_strict(b"5-3"), Ok(id(5, 3)));
        assert_eq!(StreamId::parse_strict(b"-"), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"+"), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b""), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"5-"), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"-5"), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"5-*"), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"a-1"), Err(Error::InvalidStreamId));
        assert_eq!(
            StreamId::parse_strict(b"1-1-1"),
            Err(Error::InvalidStreamId)
        );
    }

    #[test]
    fn numbers_follow_string2ull_quirks() {
        assert_eq!(StreamId::parse_strict(b"+5-0"), Ok(id(5, 0)));
        assert_eq!(StreamId::parse_strict(b" 7-1"), Ok(id(7, 1)));
        assert_eq!(StreamId::parse_strict(b"6-+1"), Ok(id(6, 1)));
        assert_eq!(StreamId::parse_strict(b"018-0"), Ok(id(18, 0)));
        assert_eq!(StreamId::parse_strict(b"1--1"), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"1--01"), Ok(id(1, u64::MAX)));
        assert_eq!(StreamId::parse_strict(b"7 -1"), Err(Error::InvalidStreamId));
        assert_eq!(
            StreamId::parse_strict(b"18446744073709551615-18446744073709551615"),
            Ok(StreamId::MAX)
        );
        assert_eq!(
            StreamId::parse_strict(b"18446744073709551616"),
            Err(Error::InvalidStreamId)
        );
    }

    #[test]
    fn long_arguments_are_invalid_and_nul_ends_the_argument() {
        let long = vec![b'1'; 128];
        assert_eq!(StreamId::parse_strict(&long), Err(Error::InvalidStreamId));
        assert_eq!(StreamId::parse_strict(b"5\0junk"), Ok(id(5, 0)));
        assert_eq!(StreamId::parse_lenient(b"-\0x", 0), Ok(StreamId::MIN));
    }

    #[test]
    fn lenient_ids_accept_dash_and_plus() {
        assert_eq!(StreamId::parse_lenient(b"-", 0), Ok(StreamId::MIN));
        assert_eq!(StreamId::parse_lenient(b"+", 0), Ok(StreamId::MAX));
        assert_eq!(StreamId::parse_lenient(b"9", u64::MAX), Ok(id(9, u64::MAX)));
    }

    #[test]
    fn range_bounds_default_and_exclusive() {
        assert_eq!(StreamId::parse_range_start(b"5"), Ok(id(5, 0)));
        assert_eq!(StreamId::parse_range_end(b"5"), Ok(id(5, u64::MAX)));
        assert_eq!(StreamId::parse_range_start(b"(5-1"), Ok(id(5, 2)));
        assert_eq!(StreamId::parse_range_start(b"(5"), Ok(id(5, 1)));
        assert_eq!(
            StreamId::parse_range_start(b"(5-18446744073709551615"),
            Ok(id(6, 0))
        );
        assert_eq!(StreamId::parse_range_end(b"(5-0"), Ok(id(4, u64::MAX)));
        assert_eq!(StreamId::parse_range_end(b"(5"), Ok(id(5, u64::MAX - 1)));
        assert_eq!(
            StreamId::parse_range_start(b"(-"),
            Err(Error::InvalidStreamId)
        );
        assert_eq!(
            StreamId::parse_range_end(b"(+"),
            Err(Error::InvalidStreamId)
        );
        assert_eq!(
            StreamId::parse_range_start(b"("),
            Err(Error::InvalidStreamId)
        );
        assert_eq!(
            StreamId::parse_range_start(b"(18446744073709551615-18446744073709551615"),
            Err(Error::InvalidStartInterval)
        );
        assert_eq!(
            StreamId::parse_range_end(b"(0-0"),
            Err(Error::InvalidEndInterval)
        );
    }

    #[test]
    fn xadd_ids() {
        assert_eq!(AddId::parse(b"*"), Ok(AddId::Auto));
        assert_eq!(AddId::parse(b"5-*"), Ok(AddId::AutoSeq(5)));
        assert_eq!(AddId::parse(b"5"), Ok(AddId::Explicit(id(5, 0))));
        assert_eq!(AddId::parse(b"*-5"), Err(Error::InvalidStreamId));
        assert_eq!(AddId::parse(b"-"), Err(Error::InvalidStreamId));
    }

    #[test]
    fn strict_i64_parsing_matches_string2ll() {
        assert_eq!(string_to_i64(b"0"), Some(0));
        assert_eq!(string_to_i64(b"-0"), None);
        assert_eq!(string_to_i64(b"01"), None);
        assert_eq!(string_to_i64(b"+1"), None);
        assert_eq!(string_to_i64(b" 1"), None);
        assert_eq!(string_to_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(string_to_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string_to_i64(b"9223372036854775808"), None);
    }

    #[test]
    fn big_endian_bytes_sort_in_id_order() {
        let ids = [id(0, 1), id(0, u64::MAX), id(1, 0), id(u64::MAX, 0)];
        for pair in ids.windows(2) {
            assert!(pair[0].to_be_bytes() < pair[1].to_be_bytes());
        }
    }
}

//! Small argument readers shared by the commands.

use crate::error::{Error, Result};
use crate::id::string_to_i64;

/// An integer argument, read strictly as Redis's `getLongLongFromObject` does.
pub fn parse_i64(arg: &[u8]) -> Result<i64> {
    string_to_i64(arg).ok_or(Error::NotAnInteger)
}

/// A non-negative integer argument; negative values give `negative`.
pub fn parse_u64_nonneg(arg: &[u8], negative: Error) -> Result<u64> {
    u64::try_from(parse_i64(arg)?).map_err(|_| negative)
}

/// Whether `arg` is the keyword `word` (ASCII, any case).
#[inline]
pub fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// The `HELP` reply: each line a status reply.
pub fn help(lines: &[&'static str]) -> crate::reply::Reply {
    crate::reply::Reply::Array(
        lines
            .iter()
            .map(|l| crate::reply::Reply::Status(l))
            .collect(),
    )
}

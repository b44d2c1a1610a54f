//! Scores as text: Redis's `string2d` (parsing) and `d2string` (the replies' form: integers
//! in full, else the shortest digits that read back the same, plain or in `%g`-style
//! exponent notation as Redis's `fpconv_dtoa` lays them out).

use bytes::Bytes;

use crate::reply::Reply;

/// Parses a score as Redis's `string2d`: no leading space, the whole text a number (`inf`,
/// `-inf`, `+inf`, `infinity` accepted), no NaN, no overflow to infinity and no underflow to
/// zero.
pub fn parse(arg: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(arg).ok()?;
    let first = *text.as_bytes().first()?;
    if first.is_ascii_whitespace() {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    if v.is_nan() {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    if v.is_infinite() && !lower.contains("inf") {
        return None;
    }
    if v == 0.0 {
        let mantissa = lower.split('e').next().unwrap_or("");
        if mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
            return None;
        }
    }
    Some(v)
}

/// A score as Redis's `d2string` writes it.
pub fn format(d: f64) -> String {
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() {
        return if d < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let half = (i64::MAX / 2) as f64;
    if (-half..=half).contains(&d) && (d as i64) as f64 == d {
        return (d as i64).to_string();
    }
    dtoa(d)
}

/// A double as Redis's `fpconv_dtoa` writes it (shortest digits, no integer fast path: what
/// DEBUG DIGEST mixes).
pub fn dtoa(d: f64) -> String {
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() || d == 0.0 {
        let sign = if d.is_sign_negative() { "-" } else { "" };
        let body = if d == 0.0 { "0" } else { "inf" };
        return format!("{sign}{body}");
    }
    // The shortest round-trip digits and the decimal exponent of the first one.
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp10: i32 = exp.parse().unwrap_or(0);
    let nd = digits.len() as i32;
    let k = exp10 - (nd - 1);
    let neg = d < 0.0;
    let mut out = String::with_capacity(24);
    if neg {
        out.push('-');
    }
    let e = (k + nd - 1).abs();
    if k >= 0 && e < nd + 7 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', k as usize));
    } else if k < 0 && (k > -7 || e < 4) {
        let offset = nd + k;
        if offset <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-offset) as usize));
            out.push_str(&digits);
        } else {
            out.push_str(&digits[..offset as usize]);
            out.push('.');
            out.push_str(&digits[offset as usize..]);
        }
    } else {
        let nd = nd.min(18 - i32::from(neg)) as usize;
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..nd]);
        }
        out.push('e');
        out.push(if k + nd as i32 - 1 < 0 { '-' } else { '+' });
        out.push_str(&e.to_string());
    }
    out
}

/// A score reply: RESP3's double, RESP2's bulk string.
pub fn reply(d: f64) -> Reply {
    Reply::Double(Bytes::from(format(d)))
}

/// A score as a plain bulk string (where Redis replies one in both protocols).
pub fn bulk(d: f64) -> Reply {
    Reply::Bulk(Bytes::from(format(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_format_as_redis_d2string() {
        for (d, s) in [
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e300, "1e+300"),
            (-0.0, "-0"),
            (3.0, "3"),
            (f64::INFINITY, "inf"),
            (1e-7, "1e-7"),
            (0.0001, "0.0001"),
            (123456.789, "123456.789"),
            (1e22, "1e+22"),
            (-2.5e-10, "-2.5e-10"),
        ] {
            assert_eq!(format(d), s, "{d}");
        }
    }

    #[test]
    fn scores_parse_as_redis_string2d() {
        assert_eq!(parse(b"1.5"), Some(1.5));
        assert_eq!(parse(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse(b"nan"), None);
        assert_eq!(parse(b" 1"), None);
        assert_eq!(parse(b"1e400"), None);
        assert_eq!(parse(b"1e-400"), None);
        assert_eq!(parse(b"0e5"), Some(0.0));
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"abc"), None);
    }
}

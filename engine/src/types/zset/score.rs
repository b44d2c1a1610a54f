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
    if let Some(hex) = parse_hex(arg) {
        // strtod's ERANGE: an overflow or an underflow to zero is refused.
        return hex.filter(|v| v.is_finite());
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

/// A hexadecimal float as `strtod` reads one (`[+-]0x` hex digits with an optional point, then
/// an optional `p` binary exponent), rounded to nearest even: `None` if `text` is not one,
/// `Some(None)` for a malformed one, an overflow (infinite) or an underflow to zero, which
/// `strtod` flags with ERANGE.
pub fn parse_hex(text: &[u8]) -> Option<Option<f64>> {
    let (negative, body) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let body = body
        .strip_prefix(b"0x")
        .or_else(|| body.strip_prefix(b"0X"))?;
    Some(hex_value(body).map(|v| if negative { -v } else { v }))
}

fn hex_value(body: &[u8]) -> Option<f64> {
    // The digits' value is `mant * 2^exp2`; digits past 60 bits only set `sticky`.
    let (mut mant, mut exp2, mut sticky) = (0u64, 0i64, false);
    let (mut seen, mut point, mut i) = (false, false, 0);
    while i < body.len() {
        match body[i] {
            b'.' if !point => point = true,
            c if c.is_ascii_hexdigit() => {
                seen = true;
                let d = u64::from(char::from(c).to_digit(16).unwrap_or(0));
                if mant < 1 << 60 {
                    mant = mant * 16 + d;
                    if point {
                        exp2 -= 4;
                    }
                } else {
                    sticky |= d != 0;
                    if !point {
                        exp2 += 4;
                    }
                }
            }
            _ => break,
        }
        i += 1;
    }
    if !seen {
        return None;
    }
    if i < body.len() {
        exp2 += crate::types::string::long_double::exponent(&body[i..], b'p')?;
    }
    if mant == 0 {
        return Some(0.0);
    }
    let bits = i64::from(64 - mant.leading_zeros());
    // The top bit's exponent, and how many bits a double keeps of it (fewer when subnormal).
    let top = exp2 + bits - 1;
    if top > 1023 {
        return None;
    }
    let keep = if top >= -1022 { 53 } else { top + 1075 };
    if keep <= 0 {
        // Below half the smallest subnormal (or exactly half: ties to even, to zero).
        let above_half = keep == 0 && (mant.count_ones() > 1 || sticky);
        return above_half.then(|| f64::from_bits(1));
    }
    let shift = bits - keep;
    let rounded = if shift > 0 {
        let dropped = mant & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        let kept = mant >> shift;
        let up = dropped > half || (dropped == half && (sticky || kept & 1 == 1));
        kept + u64::from(up)
    } else {
        mant << -shift
    };
    let v = scale(rounded as f64, exp2 + shift);
    (v.is_finite() && v != 0.0).then_some(v)
}

/// `x * 2^k`, exact when the result is representable.
fn scale(mut x: f64, mut k: i64) -> f64 {
    while k > 1000 {
        x *= 2f64.powi(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= 2f64.powi(-1000);
        k += 1000;
    }
    x * 2f64.powi(k as i32)
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
        // strtod reads hexadecimal floats (ZADD z 0x10 m scores 16 on Redis 8.8).
        assert_eq!(parse(b"0x10"), Some(16.0));
        assert_eq!(parse(b"-0X1.8p1"), Some(-3.0));
        assert_eq!(parse(b"0x.8"), Some(0.5));
        assert_eq!(parse(b"0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse(b"0x1p-1075"), None);
        assert_eq!(parse(b"0x1.8p-1075"), Some(f64::from_bits(1)));
        assert_eq!(parse(b"0x1p1024"), None);
        assert_eq!(parse(b"0x1.fffffffffffff8p0"), Some(2.0));
        assert_eq!(parse(b"0x1.fffffffffffff7ffp0"), Some(2.0 - f64::EPSILON));
        assert_eq!(parse(b"0x10000000000000001"), Some(2f64.powi(64)));
        assert_eq!(parse(b"0x0p5"), Some(0.0));
        for bad in ["0x", "0xp1", "0x1p", "0x1q", " 0x1"] {
            assert_eq!(parse(bad.as_bytes()), None, "{bad}");
        }
    }
}

//! The x87 80-bit `long double` INCRBYFLOAT computes in, emulated exactly so its replies match
//! Redis byte for byte: a 64-bit mantissa with its top bit set and a binary exponent, every
//! operation rounded to nearest, ties to even, as the hardware does.
//!
//! Three operations are needed: reading a decimal string as `strtold` does (correctly
//! rounded), adding two values, and printing as `printf("%.17Lf")` does (exact, rounded to
//! nearest even) before Redis trims the trailing zeros. Each works on an exact rational held
//! in [`Big`] integers, so no step loses more than the one rounding the hardware makes.
//!
//! Not emulated: subnormals (values below 2^-16382 are read as the nearest normal or as 0,
//! which Redis refuses as an underflow) and hexadecimal input (`0x1p3`, refused).

use std::cmp::Ordering;

/// A non-negative integer of any size: 32-bit limbs, least significant first, no high zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(n: u64) -> Big {
        let mut b = Big(vec![n as u32, (n >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bit_len(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }

    fn bit(&self, i: u64) -> bool {
        let limb = (i / 32) as usize;
        limb < self.0.len() && self.0[limb] >> (i % 32) & 1 == 1
    }

    /// Whether any bit below `i` is set.
    fn any_below(&self, i: u64) -> bool {
        let limb = ((i / 32) as usize).min(self.0.len());
        self.0[..limb].iter().any(|&l| l != 0)
            || (limb < self.0.len() && i % 32 != 0 && self.0[limb] & ((1 << (i % 32)) - 1) != 0)
    }

    fn mul_add_small(&mut self, mul: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(mul) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    /// Divides by `div` in place, returning the remainder.
    fn div_small(&mut self, div: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*limb);
            *limb = (v / u64::from(div)) as u32;
            rem = v % u64::from(div);
        }
        self.trim();
        rem as u32
    }

    fn mul_pow10(&mut self, mut k: u64) {
        while k >= 9 {
            self.mul_add_small(1_000_000_000, 0);
            k -= 9;
        }
        self.mul_add_small(10u32.pow(k as u32), 0);
    }

    fn shl(&self, bits: u64) -> Big {
        if self.is_zero() {
            return self.clone();
        }
        let (limbs, bits) = ((bits / 32) as usize, (bits % 32) as u32);
        let mut out = vec![0u32; limbs];
        let mut carry = 0u32;
        for &l in &self.0 {
            out.push(if bits == 0 { l } else { (l << bits) | carry });
            carry = if bits == 0 { 0 } else { l >> (32 - bits) };
        }
        out.push(carry);
        let mut b = Big(out);
        b.trim();
        b
    }

    fn shr(&self, bits: u64) -> Big {
        let (limbs, bits) = ((bits / 32) as usize, (bits % 32) as u32);
        if limbs >= self.0.len() {
            return Big(Vec::new());
        }
        let src = &self.0[limbs..];
        let mut out = Vec::with_capacity(src.len());
        for i in 0..src.len() {
            let high = if bits == 0 {
                0
            } else {
                src.get(i + 1).map_or(0, |&h| h << (32 - bits))
            };
            out.push((src[i] >> bits) | high);
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    fn add(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.0.len().max(other.0.len()) {
            let v = u64::from(*self.0.get(i).unwrap_or(&0))
                + u64::from(*other.0.get(i).unwrap_or(&0))
                + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        out.push(carry as u32);
        let mut b = Big(out);
        b.trim();
        b
    }

    /// `self - other`; the caller ensures `self >= other`.
    fn sub(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut v = i64::from(self.0[i]) - i64::from(*other.0.get(i).unwrap_or(&0)) - borrow;
            borrow = i64::from(v < 0);
            if v < 0 {
                v += 1 << 32;
            }
            out.push(v as u32);
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    fn to_decimal(&self) -> String {
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_small(1_000_000_000));
        }
        let mut s = chunks
            .pop()
            .map_or_else(|| "0".to_owned(), |c| c.to_string());
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        s
    }
}

/// Exponent bounds of a normal `long double` as `mantissa * 2^exp` with a 64-bit mantissa:
/// the largest finite value is below 2^16384, the smallest normal 2^-16382.
const EXP_MAX: i64 = 16384 - 64;
const EXP_MIN: i64 = -16382 - 63;

/// A finite `long double`: `±mantissa * 2^exp`, `mantissa` 0 or with its top bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongDouble {
    negative: bool,
    mantissa: u64,
    exp: i64,
}

/// What a result is when it is not a finite value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotFinite {
    /// Too large (or an infinity read).
    Infinite,
    /// A nonzero value too small to hold.
    Underflow,
}

/// The exponent a number's text ends with: `marker` (`e` for decimal, `p` for hexadecimal,
/// either case) then an optionally signed run of digits, clamped to ±100,000 (past which the
/// value is infinite or zero whatever its digits); `None` if `rest` is not that.
pub(crate) fn exponent(rest: &[u8], marker: u8) -> Option<i64> {
    let (&first, digits) = rest.split_first()?;
    if first.to_ascii_lowercase() != marker {
        return None;
    }
    let exp = std::str::from_utf8(digits).ok()?;
    let unsigned = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let e: i64 = exp.parse().unwrap_or(if exp.starts_with('-') {
        -100_000
    } else {
        100_000
    });
    Some(e.clamp(-100_000, 100_000))
}

/// `num / den * 2^exp2` (`num`, `den` nonzero) rounded to nearest even as a mantissa and
/// an exponent.
fn round(num: &Big, den: &Big, exp2: i64) -> (u64, i64) {
    let mut s = num.bit_len() as i64 - den.bit_len() as i64 - 64;
    let scaled = |s: i64| {
        if s >= 0 {
            (num.clone(), den.shl(s as u64))
        } else {
            (num.shl((-s) as u64), den.clone())
        }
    };
    let (mut n, mut d) = scaled(s);
    if n.cmp(&d.shl(64)) != Ordering::Less {
        s += 1;
        (n, d) = scaled(s);
    }
    let mut q = 0u64;
    for i in (0..64).rev() {
        let t = d.shl(i);
        if n.cmp(&t) != Ordering::Less {
            n = n.sub(&t);
            q |= 1 << i;
        }
    }
    let up = match n.shl(1).cmp(&d) {
        Ordering::Greater => true,
        Ordering::Equal => q & 1 == 1,
        Ordering::Less => false,
    };
    if up {
        match q.checked_add(1) {
            Some(next) => q = next,
            None => {
                q = 1 << 63;
                s += 1;
            }
        }
    }
    (q, exp2 + s)
}

impl LongDouble {
    /// +0.
    pub const ZERO: LongDouble = LongDouble {
        negative: false,
        mantissa: 0,
        exp: 0,
    };

    fn checked(negative: bool, mantissa: u64, exp: i64) -> Result<LongDouble, NotFinite> {
        if exp > EXP_MAX {
            Err(NotFinite::Infinite)
        } else if exp < EXP_MIN {
            Err(NotFinite::Underflow)
        } else {
            Ok(LongDouble {
                negative,
                mantissa,
                exp,
            })
        }
    }

    /// Reads `s` as Redis's `string2ld` does (`strtold` on the whole text): `[+-]` digits with
    /// an optional point and an optional exponent, a hexadecimal float (`0x1.8p3`), or an
    /// infinity (`inf`, `infinity`, read as `Err`). `None` for anything else, and for a value
    /// out of range (`ERANGE`).
    pub fn parse(s: &[u8]) -> Option<Result<LongDouble, NotFinite>> {
        let (negative, body) = match s.first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(Err(NotFinite::Infinite));
        }
        if let Some(hex) = body
            .strip_prefix(b"0x")
            .or_else(|| body.strip_prefix(b"0X"))
        {
            return LongDouble::parse_hex(negative, hex);
        }
        let mut digits = Big(Vec::new());
        let (mut seen, mut scale, mut i) = (false, 0i64, 0);
        let mut point = false;
        while i < body.len() {
            match body[i] {
                c @ b'0'..=b'9' => {
                    seen = true;
                    digits.mul_add_small(10, u32::from(c - b'0'));
                    if point {
                        scale -= 1;
                    }
                }
                b'.' if !point => point = true,
                _ => break,
            }
            i += 1;
        }
        if !seen {
            return None;
        }
        if i < body.len() {
            scale += exponent(&body[i..], b'e')?;
        }
        if digits.is_zero() {
            return Some(Ok(LongDouble {
                negative,
                ..LongDouble::ZERO
            }));
        }
        // strtold's ERANGE: Redis refuses a value that overflows or underflows to zero.
        let magnitude = digits.bit_len() as i64 + scale * 10 / 3;
        if !(-20_000..=20_000).contains(&magnitude) {
            return None;
        }
        let (num, den) = if scale >= 0 {
            digits.mul_pow10(scale as u64);
            (digits, Big::from_u64(1))
        } else {
            let mut den = Big::from_u64(1);
            den.mul_pow10((-scale) as u64);
            (digits, den)
        };
        let (mantissa, exp) = round(&num, &den, 0);
        LongDouble::checked(negative, mantissa, exp).ok().map(Ok)
    }

    /// The digits after `0x` of a hexadecimal float as `strtold` reads one: hex digits with an
    /// optional point, then an optional binary exponent (`p`, decimal digits).
    fn parse_hex(negative: bool, body: &[u8]) -> Option<Result<LongDouble, NotFinite>> {
        let mut digits = Big(Vec::new());
        let (mut seen, mut scale, mut i, mut point) = (false, 0i64, 0, false);
        while i < body.len() {
            match body[i] {
                b'.' if !point => point = true,
                c if c.is_ascii_hexdigit() => {
                    seen = true;
                    let d = char::from(c).to_digit(16).unwrap_or(0);
                    digits.mul_add_small(16, d);
                    if point {
                        scale -= 4;
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
            scale += exponent(&body[i..], b'p')?;
        }
        if digits.is_zero() {
            return Some(Ok(LongDouble {
                negative,
                ..LongDouble::ZERO
            }));
        }
        let magnitude = digits.bit_len() as i64 + scale;
        if !(-20_000..=20_000).contains(&magnitude) {
            return None;
        }
        let (mantissa, exp) = round(&digits, &Big::from_u64(1), scale);
        LongDouble::checked(negative, mantissa, exp).ok().map(Ok)
    }

    /// The largest finite value (`LDBL_MAX`).
    pub const MAX: LongDouble = LongDouble {
        negative: false,
        mantissa: u64::MAX,
        exp: EXP_MAX,
    };

    /// `-self`.
    pub fn neg(self) -> LongDouble {
        LongDouble {
            negative: !self.negative,
            ..self
        }
    }

    /// Orders the values as numbers (`-0` equals `+0`).
    pub fn cmp_value(self, other: LongDouble) -> Ordering {
        let sign = |x: LongDouble| match (x.mantissa, x.negative) {
            (0, _) => 0,
            (_, true) => -1,
            _ => 1,
        };
        let (a, b) = (sign(self), sign(other));
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        // Both nonzero, one sign: normalized mantissas order by exponent first.
        let magnitude = (self.exp, self.mantissa).cmp(&(other.exp, other.mantissa));
        if a < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// `self + other`, rounded as the hardware rounds.
    pub fn add(self, other: LongDouble) -> Result<LongDouble, NotFinite> {
        if other.mantissa == 0 {
            let negative = self.negative && other.negative;
            return Ok(if self.mantissa == 0 {
                LongDouble { negative, ..self }
            } else {
                self
            });
        }
        if self.mantissa == 0 {
            return Ok(other);
        }
        let low = self.exp.min(other.exp);
        let a = Big::from_u64(self.mantissa).shl((self.exp - low) as u64);
        let b = Big::from_u64(other.mantissa).shl((other.exp - low) as u64);
        let (negative, sum) = if self.negative == other.negative {
            (self.negative, a.add(&b))
        } else {
            match a.cmp(&b) {
                Ordering::Equal => return Ok(LongDouble::ZERO),
                Ordering::Greater => (self.negative, a.sub(&b)),
                Ordering::Less => (other.negative, b.sub(&a)),
            }
        };
        let (mantissa, exp) = round(&sum, &Big::from_u64(1), low);
        LongDouble::checked(negative, mantissa, exp)
    }

    /// Redis's human-friendly form: `printf("%.17Lf")` with the trailing zeros (and point)
    /// removed, and `-0` written `0`.
    pub fn to_human(self) -> String {
        const PLACES: usize = 17;
        let mut x = Big::from_u64(self.mantissa);
        x.mul_pow10(PLACES as u64);
        let q = if self.exp >= 0 {
            x.shl(self.exp as u64)
        } else {
            let s = (-self.exp) as u64;
            let mut q = x.shr(s);
            if x.bit(s - 1) && (x.any_below(s - 1) || q.bit(0)) {
                q = q.add(&Big::from_u64(1));
            }
            q
        };
        let digits = format!("{:0>width$}", q.to_decimal(), width = PLACES + 1);
        let (int, frac) = digits.split_at(digits.len() - PLACES);
        let frac = frac.trim_end_matches('0');
        let mut out = String::new();
        if self.negative && (int != "0" || !frac.is_empty()) {
            out.push('-');
        }
        out.push_str(int);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(s: &str) -> LongDouble {
        LongDouble::parse(s.as_bytes()).unwrap().unwrap()
    }

    fn sum(a: &str, b: &str) -> String {
        ld(a).add(ld(b)).unwrap().to_human()
    }

    #[test]
    fn sums_print_as_redis_on_x86() {
        // Values read from Redis 8.8 on x86-64.
        assert_eq!(sum("10.50", "0.1"), "10.6");
        assert_eq!(sum("5.6", "5000"), "5005.60000000000000009");
        assert_eq!(sum("3", "0"), "3");
        assert_eq!(sum("-3", "1.5"), "-1.5");
        assert_eq!(sum("1", "-1"), "0");
        assert_eq!(sum("-0", "-0"), "0");
        assert_eq!(sum("0.1", "0.2"), "0.3");
        assert_eq!(sum("1e20", "1"), "100000000000000000000");
        assert_eq!(sum("1.1", "2.2"), "3.3");
        assert_eq!(
            sum("3.14159265358979323846", "1e-10"),
            "3.14159265368979324"
        );
        assert_eq!(
            sum("123456789.123456789", "0.000001"),
            "123456789.123457788999076"
        );
        assert_eq!(sum("7", "-7.0000000000000000001"), "0");
        assert!(sum("1e4932", "1e400").starts_with("10000000000000000000060189493879638913"));
    }

    #[test]
    fn reads_as_strtold() {
        assert!(LongDouble::parse(b"").is_none());
        assert!(LongDouble::parse(b"1e").is_none());
        assert!(LongDouble::parse(b".").is_none());
        assert!(LongDouble::parse(b"1x").is_none());
        assert!(LongDouble::parse(b"nan").is_none());
        assert_eq!(LongDouble::parse(b"-inf"), Some(Err(NotFinite::Infinite)));
        assert_eq!(LongDouble::parse(b"1e5000"), None);
        assert_eq!(LongDouble::parse(b"1e-5000"), None);
        assert_eq!(ld("1e4932").add(ld("1e4932")), Err(NotFinite::Infinite));
        assert_eq!(ld(".5").to_human(), "0.5");
        assert_eq!(ld("5.").to_human(), "5");
        assert_eq!(ld("+2.5e1").to_human(), "25");
        assert_eq!(ld("0e999999999999").to_human(), "0");
        // Hexadecimal floats, as glibc's strtold reads them (HINCRBYFLOAT on "0x1" is -1 after
        // adding -2 on Redis 8.8).
        assert_eq!(ld("0x1").to_human(), "1");
        assert_eq!(ld("-0X10").to_human(), "-16");
        assert_eq!(ld("0xA.8").to_human(), "10.5");
        assert_eq!(ld("0x1.8p1").to_human(), "3");
        assert_eq!(ld("0x1p-2").to_human(), "0.25");
        assert_eq!(ld("0x.8").to_human(), "0.5");
        assert_eq!(ld("0x0p99999999").to_human(), "0");
        for bad in ["0x", "0x.", "0x1p", "0x1p+", "0xg", "0x1.8q1", "0x1p99999"] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad}");
        }
    }
}

//! Branded record ids: a brand plus a 64-bit value, `(unix_ms << 22) | seq`.
//!
//! Text form `<BRAND>_<13 Crockford base32 digits>` (`EVT_01JD3X...`): fixed width and
//! upper-case, so text order equals numeric order within a brand. The XADD id of a record is
//! `<v >> 22>-<v & 0x3FFFFF>`, so stream order is mint order. [`BrandedError`] says why a text
//! or a value is not a branded id; the feed's error enum wraps it.

use std::fmt;
use std::str::FromStr;

use echomq_engine::StreamId;
use thiserror::Error;

/// Bits of the sequence part.
pub const SEQ_BITS: u32 = 22;
/// The largest sequence (4194303).
pub const SEQ_MAX: u64 = (1 << SEQ_BITS) - 1;
/// The largest millisecond a branded id can carry (42 bits).
pub const MS_MAX: u64 = (1 << (64 - SEQ_BITS)) - 1;
/// Crockford base32 digits of the value.
const DIGITS: usize = 13;
/// Crockford's alphabet: no I, L, O, U.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Each byte's digit value, or 0xFF for bytes outside the alphabet.
const DIGIT_VALUES: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// What a branded id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Brand {
    /// A player account.
    Usr,
    /// A room.
    Rmm,
    /// A round: one secret to guess.
    Rnd,
    /// A guess job on a player's lane.
    Job,
    /// A scored guess.
    Ges,
    /// A feed entry.
    Evt,
}

impl Brand {
    /// Every brand.
    pub const ALL: [Brand; 6] = [
        Brand::Usr,
        Brand::Rmm,
        Brand::Rnd,
        Brand::Job,
        Brand::Ges,
        Brand::Evt,
    ];

    /// The three-letter prefix.
    pub fn as_str(self) -> &'static str {
        match self {
            Brand::Usr => "USR",
            Brand::Rmm => "RMM",
            Brand::Rnd => "RND",
            Brand::Job => "JOB",
            Brand::Ges => "GES",
            Brand::Evt => "EVT",
        }
    }

    fn from_prefix(prefix: &str) -> Option<Brand> {
        Brand::ALL.into_iter().find(|b| b.as_str() == prefix)
    }
}

impl fmt::Display for Brand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A branded id that does not parse or is not the expected kind.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BrandedError {
    /// No `_` between brand and digits.
    #[error("a branded id is <BRAND>_<13 base32 digits>")]
    Malformed,
    /// An unknown brand prefix.
    #[error("unknown brand '{0}'")]
    UnknownBrand(String),
    /// Not 13 digits.
    #[error("a branded id has 13 digits, not {0}")]
    Length(usize),
    /// A character outside Crockford's upper-case alphabet.
    #[error("'{0}' is not a Crockford base32 digit")]
    InvalidChar(char),
    /// A value past the 42 + 22-bit space.
    #[error("the value does not fit 42 bits of milliseconds and 22 of sequence")]
    OutOfRange,
    /// Another brand than the one required.
    #[error("expected a {expected} id, got a {found} id")]
    WrongBrand {
        /// The brand required.
        expected: Brand,
        /// The brand given.
        found: Brand,
    },
}

/// A branded id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Branded {
    brand: Brand,
    value: u64,
}

impl Branded {
    /// A branded id from its value.
    pub fn new(brand: Brand, value: u64) -> Branded {
        Branded { brand, value }
    }

    /// A branded id from a millisecond and a sequence.
    pub fn from_parts(brand: Brand, ms: u64, seq: u64) -> Result<Branded, BrandedError> {
        if ms > MS_MAX || seq > SEQ_MAX {
            return Err(BrandedError::OutOfRange);
        }
        Ok(Branded {
            brand,
            value: (ms << SEQ_BITS) | seq,
        })
    }

    /// The brand.
    pub fn brand(self) -> Brand {
        self.brand
    }

    /// The 64-bit value.
    pub fn value(self) -> u64 {
        self.value
    }

    /// The Unix millisecond of the mint.
    pub fn ms(self) -> u64 {
        self.value >> SEQ_BITS
    }

    /// The sequence within the millisecond.
    pub fn seq(self) -> u64 {
        self.value & SEQ_MAX
    }

    /// The XADD id this record is stored under.
    pub fn stream_id(self) -> StreamId {
        StreamId::new(self.ms(), self.seq())
    }

    /// The branded id stored under a stream id, if the id fits the 42 + 22-bit space.
    pub fn from_stream_id(brand: Brand, id: StreamId) -> Result<Branded, BrandedError> {
        Branded::from_parts(brand, id.ms, id.seq)
    }

    /// Checks the brand.
    pub fn expect_brand(self, brand: Brand) -> Result<Branded, BrandedError> {
        if self.brand == brand {
            Ok(self)
        } else {
            Err(BrandedError::WrongBrand {
                expected: brand,
                found: self.brand,
            })
        }
    }

    /// Parses `text`, requiring `brand`.
    pub fn parse_as(text: &str, brand: Brand) -> Result<Branded, BrandedError> {
        text.parse::<Branded>()?.expect_brand(brand)
    }
}

/// Bytes of a branded id's text: three letters, `_`, thirteen digits.
pub const TEXT_BYTES: usize = 3 + 1 + DIGITS;

impl Branded {
    /// The text form, written into a stack buffer (no allocation).
    pub fn to_text(self) -> [u8; TEXT_BYTES] {
        let mut text = [b'_'; TEXT_BYTES];
        text[..3].copy_from_slice(self.brand.as_str().as_bytes());
        let mut v = self.value;
        for digit in text[4..].iter_mut().rev() {
            *digit = ALPHABET[(v & 31) as usize];
            v >>= 5;
        }
        text
    }
}

impl fmt::Display for Branded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The alphabet and the brands are ASCII, so this never fails.
        f.write_str(std::str::from_utf8(&self.to_text()).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Branded {
    type Err = BrandedError;

    fn from_str(text: &str) -> Result<Branded, BrandedError> {
        let (prefix, digits) = text.split_once('_').ok_or(BrandedError::Malformed)?;
        let brand = Brand::from_prefix(prefix)
            .ok_or_else(|| BrandedError::UnknownBrand(prefix.to_string()))?;
        if digits.len() != DIGITS {
            return Err(BrandedError::Length(digits.len()));
        }
        let mut value: u128 = 0;
        for c in digits.bytes() {
            let d = DIGIT_VALUES[usize::from(c)];
            if d == 0xFF {
                return Err(BrandedError::InvalidChar(char::from(c)));
            }
            value = (value << 5) | u128::from(d);
        }
        let value = u64::try_from(value).map_err(|_| BrandedError::OutOfRange)?;
        Ok(Branded { brand, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        let id = Branded::new(Brand::Evt, 0);
        assert_eq!(id.to_string(), "EVT_0000000000000");
        let id = Branded::from_parts(Brand::Usr, 1, 2).unwrap();
        assert_eq!(id.value(), (1 << 22) | 2);
        assert_eq!(id.stream_id(), StreamId::new(1, 2));
        assert_eq!(
            Branded::new(Brand::Job, u64::MAX).to_string(),
            "JOB_FZZZZZZZZZZZZ"
        );
    }

    #[test]
    fn parse_errors_are_typed() {
        assert_eq!(
            "EVT0000000000000".parse::<Branded>(),
            Err(BrandedError::Malformed)
        );
        assert_eq!(
            "XYZ_0000000000000".parse::<Branded>(),
            Err(BrandedError::UnknownBrand("XYZ".into()))
        );
        assert_eq!("EVT_000".parse::<Branded>(), Err(BrandedError::Length(3)));
        assert_eq!(
            "EVT_000000000000I".parse::<Branded>(),
            Err(BrandedError::InvalidChar('I'))
        );
        assert_eq!(
            "EVT_000000000000a".parse::<Branded>(),
            Err(BrandedError::InvalidChar('a'))
        );
        assert_eq!(
            "EVT_G000000000000".parse::<Branded>(),
            Err(BrandedError::OutOfRange)
        );
        assert_eq!(
            Branded::parse_as("USR_0000000000001", Brand::Evt),
            Err(BrandedError::WrongBrand {
                expected: Brand::Evt,
                found: Brand::Usr
            })
        );
        assert_eq!(
            Branded::from_parts(Brand::Evt, MS_MAX + 1, 0),
            Err(BrandedError::OutOfRange)
        );
        assert_eq!(
            Branded::from_parts(Brand::Evt, 0, SEQ_MAX + 1),
            Err(BrandedError::OutOfRange)
        );
    }

    fn brand() -> impl Strategy<Value = Brand> {
        prop::sample::select(Brand::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn text_round_trips_and_sorts_like_values(b in brand(), x in any::<u64>(), y in any::<u64>()) {
            let (a, c) = (Branded::new(b, x), Branded::new(b, y));
            prop_assert_eq!(a.to_string().parse::<Branded>(), Ok(a));
            prop_assert_eq!(a.to_string().cmp(&c.to_string()), x.cmp(&y));
        }

        #[test]
        fn stream_ids_correspond(b in brand(), ms in 0..=MS_MAX, seq in 0..=SEQ_MAX) {
            let id = Branded::from_parts(b, ms, seq).unwrap();
            prop_assert_eq!(Branded::from_stream_id(b, id.stream_id()), Ok(id));
            prop_assert_eq!(id.stream_id(), StreamId::new(ms, seq));
        }
    }
}

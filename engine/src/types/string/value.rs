//! [`StringValue`]: the representation of a string value, at most 24 bytes, with the
//! encoding Redis 8.8 would give the same value after the same history.
//!
//! Three forms:
//! - an integer (Redis's `int` encoding): a string that reads back exactly as an `i64`
//!   (`string2l`: at most 20 characters, no `+`, no leading zeros, no `-0`) kept as the
//!   number;
//! - up to [`INLINE_BYTES`] bytes held inline;
//! - longer ones on the heap, in a buffer with spare room so APPEND, SETRANGE and SETBIT
//!   change it in place, growing as `sdsMakeRoomFor` does (doubling below 1 MiB, then by
//!   1 MiB), so appending costs amortized O(bytes appended).
//!
//! Independently of the form, a byte string carries Redis's encoding flag: `embstr` or
//! `raw`. A value made from a command's argument (SET, MSET, RESTORE...) is `int` when it
//! can be, else `embstr` up to [`EMBSTR_BYTES_MAX`] bytes, else `raw`, as
//! `tryObjectEncoding`. Any in-place change (APPEND to an existing key, SETRANGE, SETBIT,
//! the HyperLogLog commands) first turns the value `raw`, as `dbUnshareStringValue`, and it
//! stays `raw` whatever it later holds. When a value is stored under a key, an `embstr`
//! whose object would not fit one 64-byte cache line with that key becomes `raw`, as
//! `kvobjSet` ([`StringValue::settle`]).
//!
//! Invariants ([`StringValue::check_invariants`]): an inline value's length is at most
//! [`INLINE_BYTES`]; a heap value's length is at most its buffer's; an `embstr` holds at
//! most [`EMBSTR_BYTES_MAX`] bytes.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;

/// The most bytes held inline.
pub const INLINE_BYTES: usize = 22;
/// The longest string Redis embeds in its object (`OBJ_ENCODING_EMBSTR_SIZE_LIMIT`).
pub const EMBSTR_BYTES_MAX: usize = 44;
/// The longest string that may be an integer.
const INT_CHARS_MAX: usize = 20;
/// Redis's cache line, the most an object with an embedded string may take.
const CACHE_LINE_BYTES: usize = 64;
/// Redis's object header (`sizeof(kvobj)`).
const OBJECT_BYTES: usize = 16;
/// The flag of an inline value's `meta` byte marking it `raw`; the low bits are its length.
const INLINE_RAW: u8 = 0x80;
/// Past this size the heap buffer grows by this much rather than doubling (`SDS_MAX_PREALLOC`).
const PREALLOC_MAX: usize = 1024 * 1024;

/// Redis's encoding of a string object (OBJECT ENCODING).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// An integer held in the object.
    Int,
    /// The bytes allocated with the object.
    Embstr,
    /// The bytes in their own allocation.
    Raw,
}

impl Encoding {
    /// The name OBJECT ENCODING replies.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Int => "int",
            Encoding::Embstr => "embstr",
            Encoding::Raw => "raw",
        }
    }
}

/// A string value; see the module doc.
#[derive(Clone)]
pub struct StringValue(Repr);

#[derive(Clone)]
enum Repr {
    Int(i64),
    /// `meta` is the length, with [`INLINE_RAW`] set for a `raw` value.
    Inline {
        meta: u8,
        buf: [u8; INLINE_BYTES],
    },
    /// The length is `len_hi << 32 | len_lo`; `buf.len()` is the capacity.
    Heap {
        raw: bool,
        len_hi: u16,
        len_lo: u32,
        buf: Box<[u8]>,
    },
}

const _: () = assert!(std::mem::size_of::<StringValue>() <= 24);

/// The integer `bytes` spell exactly as Redis's `string2l` reads them, if any.
pub fn exact_i64(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > INT_CHARS_MAX {
        return None;
    }
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    match digits {
        [] => return None,
        [b'0'] if !negative => return Some(0),
        [b'0', ..] => return None,
        _ => {}
    }
    let mut n: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        let digit = i64::from(b - b'0');
        n = n.checked_mul(10)?;
        n = if negative {
            n.checked_sub(digit)?
        } else {
            n.checked_add(digit)?
        };
    }
    Some(n)
}

/// The length of `n`'s decimal form, without forming it.
fn int_len(n: i64) -> usize {
    let digits = n
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1);
    digits + usize::from(n < 0)
}

/// The decimal digits of `n` in a stack buffer: (buffer, start).
fn int_digits(n: i64) -> ([u8; INT_CHARS_MAX], usize) {
    let mut buf = [0u8; INT_CHARS_MAX];
    let mut at = INT_CHARS_MAX;
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    (buf, at)
}

/// The capacity `sdsMakeRoomFor` gives a buffer that must hold `needed` bytes.
fn grown_capacity(needed: usize) -> usize {
    if needed < PREALLOC_MAX {
        needed.saturating_mul(2)
    } else {
        needed.saturating_add(PREALLOC_MAX)
    }
}

impl StringValue {
    /// A value made from a command's argument or a loaded string (`tryObjectEncoding`):
    /// `int` when it can be, else `embstr` up to [`EMBSTR_BYTES_MAX`] bytes, else `raw`.
    pub fn from_arg(bytes: &[u8]) -> StringValue {
        match exact_i64(bytes) {
            Some(n) => StringValue::from_int(n),
            None => StringValue::bytes_with(bytes, bytes.len() > EMBSTR_BYTES_MAX),
        }
    }

    /// An integer (`int`), as INCR leaves it.
    pub fn from_int(n: i64) -> StringValue {
        StringValue(Repr::Int(n))
    }

    /// A value built by the server from bytes (`createStringObject`), never `int`:
    /// `embstr` up to [`EMBSTR_BYTES_MAX`] bytes, else `raw` (as INCRBYFLOAT's result).
    pub fn created(bytes: &[u8]) -> StringValue {
        StringValue::bytes_with(bytes, bytes.len() > EMBSTR_BYTES_MAX)
    }

    /// A `raw` value holding `bytes`.
    pub fn raw(bytes: &[u8]) -> StringValue {
        StringValue::bytes_with(bytes, true)
    }

    /// A `raw` value taking `bytes` (BITOP's result) without copying a long one.
    pub fn raw_from_vec(bytes: Vec<u8>) -> StringValue {
        if bytes.len() <= INLINE_BYTES {
            StringValue::raw(&bytes)
        } else {
            let len = bytes.len();
            StringValue::heap(true, bytes.into_boxed_slice(), len)
        }
    }

    /// A `raw` value of `len` zero bytes (SETRANGE and SETBIT on a missing key).
    pub fn zeroed(len: usize) -> StringValue {
        let mut value = StringValue::raw(b"");
        value.resize(len);
        value
    }

    fn bytes_with(bytes: &[u8], raw: bool) -> StringValue {
        if bytes.len() <= INLINE_BYTES {
            let mut buf = [0u8; INLINE_BYTES];
            buf[..bytes.len()].copy_from_slice(bytes);
            let meta = bytes.len() as u8 | if raw { INLINE_RAW } else { 0 };
            StringValue(Repr::Inline { meta, buf })
        } else {
            StringValue::heap(raw, Box::from(bytes), bytes.len())
        }
    }

    fn heap(raw: bool, buf: Box<[u8]>, len: usize) -> StringValue {
        let len = len as u64;
        StringValue(Repr::Heap {
            raw,
            len_hi: (len >> 32) as u16,
            len_lo: len as u32,
            buf,
        })
    }

    /// The length in bytes (of the decimal form for an integer).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Int(n) => int_len(*n),
            Repr::Inline { meta, .. } => usize::from(meta & !INLINE_RAW),
            Repr::Heap { len_hi, len_lo, .. } => {
                ((u64::from(*len_hi) << 32) | u64::from(*len_lo)) as usize
            }
        }
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The integer held in `int` encoding, if so.
    pub fn as_int(&self) -> Option<i64> {
        match self.0 {
            Repr::Int(n) => Some(n),
            _ => None,
        }
    }

    /// The bytes (borrowed, or the digits of an integer).
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        match &self.0 {
            Repr::Int(n) => {
                let (buf, at) = int_digits(*n);
                Cow::Owned(buf[at..].to_vec())
            }
            Repr::Inline { buf, .. } => Cow::Borrowed(&buf[..self.len()]),
            Repr::Heap { buf, .. } => Cow::Borrowed(&buf[..self.len()]),
        }
    }

    /// The bytes as a shared buffer (a reply's).
    pub fn to_bytes(&self) -> Bytes {
        Bytes::copy_from_slice(&self.bytes())
    }

    /// The value's own encoding (as its object has it before being stored under a key).
    pub fn encoding(&self) -> Encoding {
        match &self.0 {
            Repr::Int(_) => Encoding::Int,
            Repr::Inline { meta, .. } if meta & INLINE_RAW == 0 => Encoding::Embstr,
            Repr::Heap { raw: false, .. } => Encoding::Embstr,
            _ => Encoding::Raw,
        }
    }

    /// Whether an `embstr` of `len` bytes fits one cache line with a key of `key_len` bytes
    /// (`kvobjSet`).
    fn embeds_with(key_len: usize, len: usize) -> bool {
        OBJECT_BYTES + key_len + 3 + 4 + len <= CACHE_LINE_BYTES
    }

    /// Turns an `embstr` that would not fit one cache line with a key of `key_len` bytes
    /// `raw`, as Redis does storing the value under the key.
    pub fn settle(&mut self, key_len: usize) {
        if self.encoding() == Encoding::Embstr && !StringValue::embeds_with(key_len, self.len()) {
            self.set_raw_flag();
        }
    }

    fn set_raw_flag(&mut self) {
        match &mut self.0 {
            Repr::Int(_) => {}
            Repr::Inline { meta, .. } => *meta |= INLINE_RAW,
            Repr::Heap { raw, .. } => *raw = true,
        }
    }

    /// Turns the value `raw` (an integer into its digits), as Redis's `dbUnshareStringValue`
    /// before a change in place.
    pub fn make_raw(&mut self) {
        if let Repr::Int(n) = self.0 {
            let (buf, at) = int_digits(n);
            *self = StringValue::raw(&buf[at..]);
        }
        self.set_raw_flag();
    }

    fn set_len(&mut self, new_len: usize) {
        match &mut self.0 {
            Repr::Int(_) => {}
            Repr::Inline { meta, .. } => *meta = (*meta & INLINE_RAW) | new_len as u8,
            Repr::Heap { len_hi, len_lo, .. } => {
                *len_hi = ((new_len as u64) >> 32) as u16;
                *len_lo = new_len as u32;
            }
        }
    }

    /// Makes room for `needed` bytes, moving inline bytes to the heap when they no longer
    /// fit; the buffer grows by `sdsMakeRoomFor`'s rule.
    fn reserve(&mut self, needed: usize) {
        let len = self.len();
        let raw = self.encoding() != Encoding::Embstr;
        match &mut self.0 {
            Repr::Int(_) => {}
            Repr::Inline { buf, .. } => {
                if needed > INLINE_BYTES {
                    let mut heap = vec![0u8; grown_capacity(needed)];
                    heap[..len].copy_from_slice(&buf[..len]);
                    *self = StringValue::heap(raw, heap.into_boxed_slice(), len);
                }
            }
            Repr::Heap { buf, .. } => {
                if needed > buf.len() {
                    let mut heap = std::mem::take(buf).into_vec();
                    let capacity = grown_capacity(needed);
                    heap.reserve_exact(capacity - heap.len());
                    heap.resize(capacity, 0);
                    *buf = heap.into_boxed_slice();
                }
            }
        }
    }

    /// The bytes, mutably; the value must not be an integer (call [`StringValue::make_raw`]
    /// first), else the slice is empty.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        match &mut self.0 {
            Repr::Int(_) => &mut [],
            Repr::Inline { buf, .. } => &mut buf[..len],
            Repr::Heap { buf, .. } => &mut buf[..len],
        }
    }

    /// Sets the length to `new_len`: a longer string is padded with zero bytes, a shorter one
    /// cut. Turns the value `raw`.
    pub fn resize(&mut self, new_len: usize) {
        self.make_raw();
        let len = self.len();
        if new_len > len {
            self.reserve(new_len);
            // Bytes past the length may hold what a cut left behind.
            match &mut self.0 {
                Repr::Int(_) => {}
                Repr::Inline { buf, .. } => buf[len..new_len].fill(0),
                Repr::Heap { buf, .. } => buf[len..new_len].fill(0),
            }
        }
        self.set_len(new_len);
    }

    /// Adds `data` at the end. Turns the value `raw`.
    pub fn append(&mut self, data: &[u8]) {
        self.make_raw();
        let len = self.len();
        let new_len = len + data.len();
        self.reserve(new_len);
        self.set_len(new_len);
        self.bytes_mut()[len..].copy_from_slice(data);
    }

    /// Writes `data` at `offset`, padding with zero bytes up to it. Turns the value `raw`.
    pub fn write_at(&mut self, offset: usize, data: &[u8]) {
        let end = offset + data.len();
        if end > self.len() {
            self.resize(end);
        } else {
            self.make_raw();
        }
        self.bytes_mut()[offset..end].copy_from_slice(data);
    }

    /// The heap bytes the value holds beyond itself.
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Heap { buf, .. } => buf.len(),
            _ => 0,
        }
    }

    /// Checks the invariants of the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        let len = self.len();
        match &self.0 {
            Repr::Inline { .. } if len > INLINE_BYTES => {
                return Err(format!("inline string of {len} bytes"));
            }
            Repr::Heap { buf, .. } if len > buf.len() => {
                return Err(format!("heap string of {len} bytes in {}", buf.len()));
            }
            _ => {}
        }
        if self.encoding() == Encoding::Embstr && len > EMBSTR_BYTES_MAX {
            return Err(format!("embstr of {len} bytes"));
        }
        Ok(())
    }
}

impl PartialEq for StringValue {
    fn eq(&self, other: &StringValue) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for StringValue {}

impl PartialEq<[u8]> for StringValue {
    fn eq(&self, other: &[u8]) -> bool {
        *self.bytes() == *other
    }
}

impl fmt::Debug for StringValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", Bytes::copy_from_slice(&self.bytes()))
    }
}

impl From<&[u8]> for StringValue {
    fn from(bytes: &[u8]) -> StringValue {
        StringValue::from_arg(bytes)
    }
}

impl From<&str> for StringValue {
    fn from(s: &str) -> StringValue {
        StringValue::from_arg(s.as_bytes())
    }
}

impl From<Bytes> for StringValue {
    fn from(bytes: Bytes) -> StringValue {
        StringValue::from_arg(&bytes)
    }
}

impl From<Vec<u8>> for StringValue {
    fn from(bytes: Vec<u8>) -> StringValue {
        StringValue::from_arg(&bytes)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn encodings_follow_redis() {
        assert_eq!(StringValue::from_arg(b"123").encoding(), Encoding::Int);
        assert_eq!(
            StringValue::from_arg(b"-9223372036854775808").encoding(),
            Encoding::Int
        );
        assert_eq!(
            StringValue::from_arg(b"9223372036854775808").encoding(),
            Encoding::Embstr
        );
        for not_int in [&b"+1"[..], b"01", b"-0", b" 1", b"1 ", b"", b"-"] {
            assert_eq!(StringValue::from_arg(not_int).encoding(), Encoding::Embstr);
        }
        assert_eq!(
            StringValue::from_arg(&[b'a'; 44]).encoding(),
            Encoding::Embstr
        );
        assert_eq!(StringValue::from_arg(&[b'a'; 45]).encoding(), Encoding::Raw);
        assert_eq!(StringValue::created(b"3").encoding(), Encoding::Embstr);
        let mut v = StringValue::from_arg(b"12");
        v.append(b"3");
        assert_eq!((v.encoding(), &*v.bytes()), (Encoding::Raw, &b"123"[..]));
        let mut v = StringValue::from_arg(&[b'a'; 30]);
        v.settle(20);
        assert_eq!(v.encoding(), Encoding::Raw);
        let mut v = StringValue::from_arg(&[b'a'; 30]);
        v.settle(10);
        assert_eq!(v.encoding(), Encoding::Embstr);
    }

    #[test]
    fn int_digits_round_trip() {
        for n in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            i64::MAX,
            i64::MIN,
            1234567890,
        ] {
            let v = StringValue::from_int(n);
            assert_eq!(&*v.bytes(), n.to_string().as_bytes());
            assert_eq!(v.len(), n.to_string().len());
            assert_eq!(int_len(n), n.to_string().len());
            assert_eq!(exact_i64(n.to_string().as_bytes()), Some(n));
        }
    }

    #[test]
    fn append_grows_in_place() {
        let mut v = StringValue::from_arg(b"");
        for _ in 0..1000 {
            v.append(b"abc");
        }
        assert_eq!(v.len(), 3000);
        let capacity = v.heap_bytes();
        v.append(b"x");
        assert_eq!(v.heap_bytes(), capacity, "room was reserved ahead");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Append(Vec<u8>),
        Write(usize, Vec<u8>),
        Resize(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let data = proptest::collection::vec(any::<u8>(), 0..40);
        prop_oneof![
            data.clone().prop_map(Op::Append),
            (0usize..80, data).prop_map(|(o, d)| Op::Write(o, d)),
            (0usize..100).prop_map(Op::Resize),
        ]
    }

    proptest! {
        #[test]
        fn behaves_as_a_vec(start in proptest::collection::vec(any::<u8>(), 0..50),
                            ops in proptest::collection::vec(op(), 0..30)) {
            let mut model = start.clone();
            let mut v = StringValue::from_arg(&start);
            for op in ops {
                match op {
                    Op::Append(d) => { model.extend_from_slice(&d); v.append(&d); }
                    Op::Write(o, d) => {
                        if model.len() < o + d.len() { model.resize(o + d.len(), 0); }
                        model[o..o + d.len()].copy_from_slice(&d);
                        v.write_at(o, &d);
                    }
                    Op::Resize(n) => { model.resize(n, 0); v.resize(n); }
                }
                v.check_invariants().map_err(TestCaseError::fail)?;
                prop_assert_eq!(&*v.bytes(), &model[..]);
                prop_assert_eq!(v.encoding(), Encoding::Raw);
            }
        }
    }
}

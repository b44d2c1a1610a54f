//! A key of the table: its bytes, inline up to [`INLINE_KEY`] bytes, and in the same 24 bytes
//! its entry's access metadata and expiry slot.

use std::fmt;
use std::ops::Deref;

use super::{INLINE_KEY, NO_EXPIRY};

/// A key's bytes (inline up to [`INLINE_KEY`] bytes, else one exact heap allocation) and, in
/// the same 24 bytes, its entry's access metadata and expiry slot (see [`Entry`]). Compared,
/// ordered and printed by its bytes alone.
#[derive(Clone)]
pub struct Key(Cell);

/// The three shapes of a [`Key`]; each is 24 bytes with its tag (checked by a test).
#[derive(Clone)]
enum Cell {
    /// Exactly [`INLINE_KEY`] bytes.
    Full {
        meta: [u8; 3],
        exp: u32,
        bytes: [u8; INLINE_KEY],
    },
    /// Fewer bytes, then zeros.
    Short {
        len: u8,
        meta: [u8; 3],
        exp: u32,
        bytes: [u8; INLINE_KEY - 1],
    },
    /// More bytes.
    Heap {
        meta: [u8; 3],
        exp: u32,
        bytes: Box<[u8]>,
    },
}

impl Key {
    /// The key holding `bytes`, with metadata 0 and no expiry slot.
    pub fn new(bytes: &[u8]) -> Key {
        let (meta, exp) = ([0; 3], NO_EXPIRY);
        Key(if let Ok(full) = <[u8; INLINE_KEY]>::try_from(bytes) {
            Cell::Full {
                meta,
                exp,
                bytes: full,
            }
        } else if bytes.len() < INLINE_KEY {
            let mut inline = [0; INLINE_KEY - 1];
            inline[..bytes.len()].copy_from_slice(bytes);
            Cell::Short {
                len: bytes.len() as u8,
                meta,
                exp,
                bytes: inline,
            }
        } else {
            Cell::Heap {
                meta,
                exp,
                bytes: bytes.into(),
            }
        })
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Cell::Full { bytes, .. } => bytes,
            Cell::Short { len, bytes, .. } => &bytes[..usize::from(*len)],
            Cell::Heap { bytes, .. } => bytes,
        }
    }

    /// Bytes held on the heap for this key.
    pub(super) fn heap_bytes(&self) -> usize {
        match &self.0 {
            Cell::Heap { bytes, .. } => bytes.len(),
            _ => 0,
        }
    }

    /// The 24-bit access metadata.
    pub(super) fn meta(&self) -> u32 {
        let m = match &self.0 {
            Cell::Full { meta, .. } | Cell::Short { meta, .. } | Cell::Heap { meta, .. } => meta,
        };
        u32::from_le_bytes([m[0], m[1], m[2], 0])
    }

    /// Sets the access metadata (its low 24 bits).
    pub(super) fn set_meta(&mut self, value: u32) {
        let m = match &mut self.0 {
            Cell::Full { meta, .. } | Cell::Short { meta, .. } | Cell::Heap { meta, .. } => meta,
        };
        let [a, b, c, _] = value.to_le_bytes();
        *m = [a, b, c];
    }

    /// The expiry slot.
    pub(super) fn exp(&self) -> u32 {
        match &self.0 {
            Cell::Full { exp, .. } | Cell::Short { exp, .. } | Cell::Heap { exp, .. } => *exp,
        }
    }

    /// Sets the expiry slot.
    pub(super) fn set_exp(&mut self, slot: u32) {
        match &mut self.0 {
            Cell::Full { exp, .. } | Cell::Short { exp, .. } | Cell::Heap { exp, .. } => {
                *exp = slot;
            }
        }
    }
}

impl Deref for Key {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Key {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl std::borrow::Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl From<&Key> for bytes::Bytes {
    fn from(key: &Key) -> bytes::Bytes {
        bytes::Bytes::copy_from_slice(key.as_bytes())
    }
}

impl fmt::Debug for Key {
    // As `Bytes` prints (`b"..."`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&bytes::Bytes::copy_from_slice(self.as_bytes()), f)
    }
}

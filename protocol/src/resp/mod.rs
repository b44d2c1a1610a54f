//! RESP: decoding requests, encoding replies.

pub mod decode;
pub mod encode;

pub use decode::{DecodeLimits, Decoded, decode};
pub use encode::{Protocol, encode, encode_error};

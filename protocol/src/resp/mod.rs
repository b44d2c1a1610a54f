//! RESP: decoding requests, encoding replies.

pub mod decode;
pub mod encode;

pub use decode::{Arg, DecodeLimits, Decoded, DecodedArgs, decode, decode_args};
pub use encode::{Protocol, encode, encode_error};

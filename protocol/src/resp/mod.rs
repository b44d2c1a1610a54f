//! RESP: decoding requests, encoding replies.

pub mod decode;
pub mod encode;

pub use decode::{Arg, DecodeLimits, Decoded, DecodedArgs, decode, decode_args, decode_args_into};
pub use encode::{Protocol, encode, encode_error, encode_status};

//! Arbitrary bytes as a client's input stream through the RESP decoder, whole and in pieces;
//! see `echomq_protocol::fuzzing::resp_decode` for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_protocol::fuzzing::resp_decode(data);
});

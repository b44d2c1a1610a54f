//! Arbitrary bytes as an archive page through the record decoder; see
//! `echomq_archive::fuzzing::record_decode` for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_archive::fuzzing::record_decode(data);
});

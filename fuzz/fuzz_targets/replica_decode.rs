//! Arbitrary bytes through the replica's decoders (commit, segment, local state, reader); see
//! `echomq_archive::fuzzing::replica_decode` for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_archive::fuzzing::replica_decode(data);
});

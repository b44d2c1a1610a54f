//! Bytes as an append-only file through the loader; see `echomq_protocol::fuzzing::aof_load`
//! for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_protocol::fuzzing::aof_load(data);
});

//! Bytes as an RDB file and as a RESTORE payload through the loaders; see
//! `echomq_engine::rdb::fuzz` for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_engine::fuzzing::rdb_load(data);
});

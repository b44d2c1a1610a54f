//! Requests from a few clients of one server, through the decoder and the command dispatch;
//! see `echomq_protocol::fuzzing::server_commands` for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_protocol::fuzzing::server_commands(data);
});

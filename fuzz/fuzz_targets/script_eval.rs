//! Lua scripts from a small grammar of the scripting API, run as EVAL and EVAL_RO; see
//! `echomq_protocol::fuzzing::script_eval` for the input format and the properties.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_protocol::fuzzing::script_eval(data);
});

//! Arbitrary operation sequences against the engine; see `echomq_engine::fuzzing` for the input
//! format. A crash is an engine panic or a broken invariant.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    echomq_engine::fuzzing::run(data);
});

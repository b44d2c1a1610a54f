//! Test support shared by the echomq crates' fuzz-target replays: a dev-dependency of
//! `echomq-engine`, `echomq-protocol` and `echomq-archive`, depending on none of them.
//!
//! Each fuzz target is a plain function in its crate's `fuzzing` module (behind the `fuzzing`
//! feature, and always compiled for the crate's own tests). Under `cargo test` the crate
//! replays the target through this crate:
//!
//! - [`corpus`]: every committed input of `fuzz/corpus/<target>`, naming the file that fails,
//!   and writing seed inputs back there by hand after a format change.
//! - [`random`]: a fixed xorshift64* sequence of pseudo-random inputs, the same on every run.
//! - [`corrupt`]: every single-byte corruption and every truncation of a valid input.
//!
//! Invariant: nothing here is random between runs, so a failure reproduces with the same
//! command.

pub mod corpus;
pub mod corrupt;
pub mod random;

pub use corpus::{corpus_dir, replay_corpus, write_corpus};
pub use corrupt::{corruptions, flips, truncations};
pub use random::{XorShift, inputs};

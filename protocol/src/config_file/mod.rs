//! Redis's config file: its line syntax ([`split_args`], [`quote`]), reading a file with its
//! includes and the command line's options ([`load()`]), the table of every directive Redis 8.8
//! accepts ([`directives`]), and CONFIG REWRITE ([`rewrite`]).
//!
//! Applying the lines is the server binary's job (it reads some before the server exists:
//! `port`, `bind`, `daemonize` …); the server keeps the file's path for INFO and CONFIG
//! REWRITE, and the values of the directives echomq accepts without implementing them, for
//! CONFIG GET.

pub(crate) mod current;
pub mod directives;
pub mod load;
pub mod rewrite;
mod split;

pub use load::{Fatal, Line, command_line_options, load, load_changing_dir};
pub use split::{quote, split_args};

/// Whether echomq implements the directive called `name` (CONFIG SET takes it), as opposed to
/// accepting it without effect.
pub fn implemented(name: &str) -> bool {
    crate::state::settings::param(name).is_some()
}

//! The string commands, one file per command: each a struct named after the command, its
//! grammar and its effects in its doc. They are registered in the one command table
//! ([`crate::command`]), which checks arity and dispatches.

pub(crate) mod get;
pub(crate) mod incr;
pub(crate) mod set;
pub(crate) mod strlen;

#[cfg(test)]
mod tests;

//! The stream commands, one file per command (or pair of mirror commands): each a struct
//! named after the command with `parse` and `apply`, its grammar and its effects in its doc.
//! They are registered in the one command table ([`crate::command`]), which checks arity and
//! dispatches; the propagated forms they build are in `forms.rs`, the trim options XADD and
//! XTRIM share in `trim_args.rs`.

use crate::command::{args, subcommand};

pub(crate) mod forms;
pub(crate) mod read_caps;
pub(crate) mod trim_args;
pub(crate) mod xack;
pub(crate) mod xadd;
pub(crate) mod xautoclaim;
pub(crate) mod xcfgset;
pub(crate) mod xclaim;
pub(crate) mod xdel;
pub(crate) mod xdelex;
pub(crate) mod xgroup;
pub(crate) mod xidmprecord;
pub(crate) mod xinfo;
pub(crate) mod xlen;
pub(crate) mod xnack;
pub(crate) mod xpending;
pub(crate) mod xrange;
pub(crate) mod xread;
pub(crate) mod xreadgroup;
pub(crate) mod xsetid;
pub(crate) mod xtrim;

pub use xadd::XAdd;
pub use xrange::{RangeArgs, parse_range};
pub use xreadgroup::{Delivered, GroupFrom, GroupRead, GroupReadDone};

#[cfg(test)]
mod idmp_tests;
#[cfg(test)]
mod propagate_tests;
#[cfg(test)]
mod read_caps_tests;
#[cfg(test)]
mod typed_tests;

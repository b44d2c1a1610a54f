//! Hand-written differential cases for consumer groups and XREAD, from
//! `docs/reference/streams.md` §4 (groups), §5.1 (XREAD, without blocking) and §6 (errors and
//! shapes). One file per command family; each case starts from an empty server and engine.

mod claim;
mod pending;
mod xgroup;
mod xinfo;
mod xread;
mod xreadgroup;

use crate::differential::case::Case;

/// Every case.
pub fn all() -> Vec<Case> {
    let mut cases = xgroup::all();
    cases.extend(xreadgroup::all());
    cases.extend(pending::all());
    cases.extend(claim::all());
    cases.extend(xinfo::all());
    cases.extend(xread::all());
    cases
}

//! `rename-command` of the config file: commands answering under another name, or under none.
//!
//! The renames are fixed once, before serving ([`set_renames`]); a process without them pays
//! one load of an empty cell per request. Like Redis's, they hold for the whole process.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::table::{self, Found};
use crate::state::stats::CallId;

/// Lowercase name → the original command it calls (`None`: the name was renamed away).
static RENAMES: OnceLock<HashMap<Vec<u8>, Option<Vec<u8>>>> = OnceLock::new();

/// The command a client calls `name` (any case), after the renames.
pub(crate) fn find(name: &[u8]) -> Option<(Found, CallId)> {
    let Some(renames) = RENAMES.get() else {
        return table::find(name);
    };
    match renames.get(&name.to_ascii_lowercase()) {
        Some(Some(original)) => table::find(original),
        Some(None) => None,
        None => table::find(name),
    }
}

/// Applies `rename-command FROM TO` lines in order (an empty TO removes the command), with
/// Redis's refusals: `Err((index of the refused line, reason))`. Call once, before serving.
pub fn set_renames(renames: &[(String, String)]) -> Result<(), (usize, &'static str)> {
    let mut map: HashMap<Vec<u8>, Option<Vec<u8>>> = HashMap::new();
    let resolve = |map: &HashMap<Vec<u8>, Option<Vec<u8>>>, name: &[u8]| -> Option<Vec<u8>> {
        match map.get(name) {
            Some(to) => to.clone(),
            None => table::find(name).map(|_| name.to_vec()),
        }
    };
    for (i, (from, to)) in renames.iter().enumerate() {
        let from = from.to_ascii_lowercase().into_bytes();
        let to = to.to_ascii_lowercase().into_bytes();
        let Some(original) = resolve(&map, &from) else {
            return Err((i, "No such command in rename-command"));
        };
        map.insert(from, None);
        if !to.is_empty() {
            if resolve(&map, &to).is_some() {
                return Err((i, "Target command name already exists"));
            }
            map.insert(to, Some(original));
        }
    }
    if !map.is_empty() {
        let _ = RENAMES.set(map);
    }
    Ok(())
}

/// [`find`] without the call id.
pub(crate) fn lookup(name: &[u8]) -> Option<Found> {
    find(name).map(|(found, _)| found)
}

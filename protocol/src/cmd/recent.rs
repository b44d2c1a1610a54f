//! The command a connection called last, under the name it called it by: a pipeline of one
//! command, or a client repeating one, finds it with a comparison of a few bytes instead of
//! the table's hash and probe.
//!
//! What it remembers holds for the process's life: the command table is fixed, and
//! `rename-command` is applied once before serving (`rename.rs`).

use super::rename;
use super::table::Found;
use crate::state::stats::CallId;

/// Names longer than this are looked up every time (no command's name is).
const NAME_MAX: usize = 16;

/// The last command name found, byte for byte as called, and what it found.
#[derive(Clone, Copy, Default)]
pub(crate) struct RecentCommand {
    name: [u8; NAME_MAX],
    len: usize,
    found: Option<(Found, CallId)>,
}

impl RecentCommand {
    /// [`rename::find`], from memory when `name` is the one called last.
    #[inline]
    pub(crate) fn find(&mut self, name: &[u8]) -> Option<(Found, CallId)> {
        if let Some(found) = self.found
            && name == &self.name[..self.len]
        {
            return Some(found);
        }
        let found = rename::find(name)?;
        if name.len() <= NAME_MAX {
            self.name[..name.len()].copy_from_slice(name);
            self.len = name.len();
            self.found = Some(found);
        }
        Some(found)
    }
}

impl std::fmt::Debug for RecentCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecentCommand")
            .field("name", &String::from_utf8_lossy(&self.name[..self.len]))
            .field(
                "found",
                &self.found.map(|(found, id)| (found.spec().name, id)),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(found: Option<(Found, CallId)>) -> Option<(&'static str, CallId)> {
        found.map(|(found, id)| (found.spec().name, id))
    }

    #[test]
    fn it_answers_as_the_table_for_a_name_repeated_changed_or_unknown() {
        let mut recent = RecentCommand::default();
        for name in [
            "SET",
            "SET",
            "set",
            "GET",
            "GET",
            "nosuch",
            "GET",
            "sEt",
            "",
            "x".repeat(40).as_str(),
            "SET",
        ] {
            assert_eq!(
                name_of(recent.find(name.as_bytes())),
                name_of(rename::find(name.as_bytes())),
                "{name:?}"
            );
        }
    }

    #[test]
    fn an_unknown_name_is_not_remembered_as_the_last_found() {
        let mut recent = RecentCommand::default();
        assert!(recent.find(b"GET").is_some());
        assert!(recent.find(b"GETX").is_none());
        assert_eq!(name_of(recent.find(b"GET")).map(|(n, _)| n), Some("get"));
        assert!(recent.find(b"GE").is_none());
    }
}

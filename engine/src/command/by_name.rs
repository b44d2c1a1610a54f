//! The command table's rows by name, found in a few instructions: blocking commands (BRPOP,
//! XREAD BLOCK, ...), the reruns of blocked ones and the embedded API run commands by name,
//! and a scan of the table compared every name before them, about 2,000 instructions for a
//! row near its end (the blocking commands are there).
//!
//! Open addressing with linear probing over an FNV-1a hash of the lower-case name, built
//! once. Invariants: every row's index is in the slots, on the probe path of its name's hash
//! and after every row of the same name placed before it (so a name finds its first row, as a
//! scan of the table would); the slots are at least four times the rows, so a path is short
//! and ends at an empty slot.

use std::sync::OnceLock;

use super::{COMMANDS, Entry};

/// A slot holding no row.
const EMPTY: u16 = u16::MAX;
/// Longer than every command's name (`georadiusbymember_ro` is 20).
const NAME_MAX: usize = 24;

fn hash(lower: &[u8]) -> u64 {
    lower.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn slots() -> &'static [u16] {
    static SLOTS: OnceLock<Box<[u16]>> = OnceLock::new();
    SLOTS.get_or_init(|| {
        let len = (COMMANDS.len() * 4).next_power_of_two();
        let mask = len - 1;
        let mut slots = vec![EMPTY; len];
        for (row, entry) in COMMANDS.iter().enumerate() {
            let mut at = hash(entry.spec.name.as_bytes()) as usize & mask;
            while slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            // The table holds a few hundred rows: far below `EMPTY`.
            slots[at] = u16::try_from(row).unwrap_or(EMPTY);
        }
        slots.into_boxed_slice()
    })
}

/// The first row of the table named `name` (any case).
pub(super) fn find(name: &[u8]) -> Option<&'static Entry> {
    if name.len() > NAME_MAX {
        return None;
    }
    // Lower-cased once, then compared as plain bytes (the table's names are lower case).
    let mut lower = [0u8; NAME_MAX];
    for (to, from) in lower.iter_mut().zip(name) {
        *to = from.to_ascii_lowercase();
    }
    let lower = &lower[..name.len()];
    let slots = slots();
    let mask = slots.len() - 1;
    let mut at = hash(lower) as usize & mask;
    loop {
        let entry = COMMANDS.get(usize::from(slots[at]))?;
        if entry.spec.name.as_bytes() == lower {
            return Some(entry);
        }
        at = (at + 1) & mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `find` must answer: the first row of that name, by a scan of the table.
    fn scanned(name: &[u8]) -> Option<&'static Entry> {
        COMMANDS
            .iter()
            .find(|entry| entry.spec.name.as_bytes().eq_ignore_ascii_case(name))
    }

    #[test]
    fn every_name_in_any_case_finds_the_row_a_scan_finds() {
        for entry in COMMANDS {
            let name = entry.spec.name;
            for asked in [
                name.to_string(),
                name.to_ascii_uppercase(),
                name.chars()
                    .enumerate()
                    .map(|(i, c)| {
                        if i % 2 == 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect(),
            ] {
                let found = find(asked.as_bytes()).expect("a command of the table");
                let expected = scanned(asked.as_bytes()).expect("a command of the table");
                assert!(std::ptr::eq(found, expected), "{asked}");
            }
        }
    }

    #[test]
    fn names_the_table_lacks_are_not_found() {
        let long = "x".repeat(NAME_MAX + 1);
        for name in [
            "",
            "nosuchcommand",
            "se",
            "sett",
            "get ",
            "georadiusbymember_ro2",
        ] {
            assert!(find(name.as_bytes()).is_none(), "{name}");
        }
        assert!(find(long.as_bytes()).is_none());
        assert!(find(&[0xff, 0xfe]).is_none());
    }

    #[test]
    fn the_slots_hold_every_row_once_with_room_to_spare() {
        let slots = slots();
        assert!(slots.len() >= COMMANDS.len() * 4);
        let mut rows: Vec<u16> = slots.iter().copied().filter(|&s| s != EMPTY).collect();
        rows.sort_unstable();
        let expected: Vec<u16> = (0..COMMANDS.len())
            .map(|row| u16::try_from(row).expect("few rows"))
            .collect();
        assert_eq!(rows, expected);
    }
}

//! The sections about the data: keyspace (keys, keys with a TTL, the active expiry cycle's
//! average TTL estimate, per database) and keysizes (how many strings of each length class;
//! Redis tracks lists, sets, sorted sets and hashes too, which echomq does not have, and no
//! streams).

use echomq_engine::keyspace::SIZE_CLASSES;

use super::Lines;
use crate::cmd::Ctx;

pub(super) fn keyspace(ctx: &mut Ctx<'_>, out: &mut Lines) {
    for (index, db) in ctx.dbs.all().iter().enumerate() {
        let (keys, expires) = (db.len(), db.expires_count());
        if keys > 0 || expires > 0 {
            out.field(
                &format!("db{index}"),
                format!(
                    "keys={keys},expires={expires},avg_ttl={},subexpiry=0",
                    db.avg_ttl_ms()
                ),
            );
        }
    }
}

/// Redis's name of length class `class`: `0`, then powers of two with K, M, G, T, P, E.
fn class_label(class: usize) -> String {
    const UNITS: [&str; 7] = ["", "K", "M", "G", "T", "P", "E"];
    if class == 0 {
        return "0".into();
    }
    let power = class - 1;
    format!("{}{}", 1u64 << (power % 10), UNITS[power / 10])
}

pub(super) fn keysizes(ctx: &mut Ctx<'_>, out: &mut Lines) {
    for (index, db) in ctx.dbs.all().iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        let classes: Vec<String> = db
            .string_sizes()
            .iter()
            .take(SIZE_CLASSES)
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(class, n)| format!("{}={n}", class_label(class)))
            .collect();
        if !classes.is_empty() {
            out.field(
                &format!("db{index}_distrib_strings_sizes"),
                classes.join(","),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_classes_are_named_as_redis_names_them() {
        let labels: Vec<String> = [0, 1, 2, 3, 10, 11, 12, 21, 64]
            .iter()
            .map(|&c| class_label(c))
            .collect();
        assert_eq!(labels, ["0", "1", "2", "4", "512", "1K", "2K", "1M", "8E"]);
    }
}

//! The durable dedup store: marks in a redb file, so done marks survive a restart.
//!
//! One table, `dedup`: key `(scope, brand, value)` (the branded id's value last, so one scope's
//! marks of one brand sort by mint time and old ones prune with one range), value `(state,
//! token, until_ms)` with state 1 = leased by `token` until `until_ms`, 2 = done. Every
//! `begin` is one write transaction, which redb runs one at a time, so taking a lease is
//! atomic across threads. A done mark commits with [`Durability::Immediate`] before
//! [`DedupStore::finish`] returns; leases commit without a sync (a crash loses at most leases,
//! which a crash voids anyway).

use std::path::Path;

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};

use super::{Claim, DedupError, DedupStore};
use crate::feed::brand::{Brand, Branded};

/// `(scope, brand, value) -> (state, token, until_ms)`.
const MARKS: TableDefinition<(&str, &str, u64), (u8, u64, u64)> = TableDefinition::new("dedup");
/// Leased by a token.
const LEASED: u8 = 1;
/// Done.
const DONE: u8 = 2;

fn file(e: impl std::fmt::Display) -> DedupError {
    DedupError::File(e.to_string())
}

/// Marks in a redb file.
pub struct DurableDedup {
    db: Database,
}

impl std::fmt::Debug for DurableDedup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableDedup").finish_non_exhaustive()
    }
}

impl DurableDedup {
    /// Opens the store at `path`, creating the file if missing. A file that is not a redb
    /// database (or is corrupt) is an error, never a panic.
    pub fn open(path: impl AsRef<Path>) -> Result<DurableDedup, DedupError> {
        let db = Database::create(path).map_err(file)?;
        let tx = db.begin_write().map_err(file)?;
        tx.open_table(MARKS).map_err(file)?;
        tx.commit().map_err(file)?;
        Ok(DurableDedup { db })
    }

    /// Forgets done marks of `scope`'s `brand` ids minted before Unix ms `ms`; returns how
    /// many.
    pub fn prune_before(&self, scope: &str, brand: Brand, ms: u64) -> Result<u64, DedupError> {
        let Ok(cut) = Branded::from_parts(brand, ms.min(crate::feed::brand::MS_MAX), 0) else {
            return Ok(0);
        };
        let tx = self.db.begin_write().map_err(file)?;
        let mut removed = 0;
        {
            let mut table = tx.open_table(MARKS).map_err(file)?;
            let range = (scope, brand.as_str(), 0)..(scope, brand.as_str(), cut.value());
            table
                .retain_in(range, |_, (state, _, _)| {
                    let keep = state != DONE;
                    if !keep {
                        removed += 1;
                    }
                    keep
                })
                .map_err(file)?;
        }
        tx.commit().map_err(file)?;
        Ok(removed)
    }
}

fn key(scope: &str, id: Branded) -> (&str, &'static str, u64) {
    (scope, id.brand().as_str(), id.value())
}

impl DedupStore for DurableDedup {
    fn begin(
        &self,
        scope: &str,
        id: Branded,
        token: u64,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<Claim, DedupError> {
        let mut tx = self.db.begin_write().map_err(file)?;
        tx.set_durability(Durability::None).map_err(file)?;
        let claim = {
            let mut table = tx.open_table(MARKS).map_err(file)?;
            let current = table.get(key(scope, id)).map_err(file)?.map(|v| v.value());
            let claim = match current {
                Some((DONE, _, _)) => Claim::Done,
                Some((LEASED, holder, until_ms)) if holder != token && until_ms > now_ms => {
                    Claim::Busy
                }
                Some((LEASED, _, _)) | None => Claim::Taken,
                Some((state, _, _)) => {
                    return Err(DedupError::Corrupt(format!("{id} (state {state})")));
                }
            };
            if claim == Claim::Taken {
                table
                    .insert(
                        key(scope, id),
                        (LEASED, token, now_ms.saturating_add(lease_ms)),
                    )
                    .map_err(file)?;
            }
            claim
        };
        tx.commit().map_err(file)?;
        Ok(claim)
    }

    fn finish(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        let mut tx = self.db.begin_write().map_err(file)?;
        tx.set_durability(Durability::Immediate).map_err(file)?;
        {
            let mut table = tx.open_table(MARKS).map_err(file)?;
            table
                .insert(key(scope, id), (DONE, token, 0))
                .map_err(file)?;
        }
        tx.commit().map_err(file)
    }

    fn abandon(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        let mut tx = self.db.begin_write().map_err(file)?;
        tx.set_durability(Durability::None).map_err(file)?;
        {
            let mut table = tx.open_table(MARKS).map_err(file)?;
            let current = table.get(key(scope, id)).map_err(file)?.map(|v| v.value());
            if matches!(current, Some((LEASED, holder, _)) if holder == token) {
                table.remove(key(scope, id)).map_err(file)?;
            }
        }
        tx.commit().map_err(file)
    }

    fn is_done(&self, scope: &str, id: Branded) -> Result<bool, DedupError> {
        let tx = self.db.begin_read().map_err(file)?;
        let table = tx.open_table(MARKS).map_err(file)?;
        Ok(matches!(
            table.get(key(scope, id)).map_err(file)?.map(|v| v.value()),
            Some((DONE, _, _))
        ))
    }
}

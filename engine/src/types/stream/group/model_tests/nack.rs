//! The model's XNACK (`docs/reference/streams-8.md` §4), written from its checking order.

use super::model::{COUNT_MAX, GroupModel, NOT_AN_INTEGER, Res, id, int, live_entry, text, word};
use crate::reply::Reply;

impl GroupModel {
    /// `XNACK key group SILENT|FAIL|FATAL IDS n id... [RETRYCOUNT n] [FORCE]`: NOGROUP (after
    /// WRONGTYPE) first, then the mode, the options left to right, the IDS block's presence,
    /// the ids; then each id: pending ones (ghosts too) go to the end of the NACK zone with the
    /// mode's count; with FORCE, a live id not pending joins it with count 0 first.
    pub(super) fn xnack(&mut self, argv: &[Vec<u8>]) -> Res {
        let (key, g) = (&argv[1], &argv[2]);
        let stream = self.stream(key)?;
        if stream.is_none() || !self.groups_of(key).any(|(name, _)| name == g) {
            return Err(format!(
                "NOGROUP No such key '{}' or consumer group '{}'",
                text(key),
                text(g)
            ));
        }
        let mode = ["silent", "fail", "fatal"]
            .into_iter()
            .position(|m| word(&argv[3], m))
            .ok_or("ERR mode must be SILENT, FAIL, or FATAL")?;
        let mut ids_at = None;
        let mut force = false;
        let mut retry: Option<u64> = None;
        let mut i = 4;
        while i < argv.len() {
            let last = i + 1 == argv.len();
            if word(&argv[i], "ids") && !last {
                let n = int(&argv[i + 1])
                    .filter(|n| (1..=i64::from(i32::MAX)).contains(n))
                    .ok_or("ERR numids must be a positive integer")?
                    as usize;
                if n > argv.len() - (i + 2) {
                    return Err("ERR number of IDs doesn't match numids".into());
                }
                ids_at = Some((i + 2, n));
                i += 2 + n;
            } else if word(&argv[i], "force") {
                force = true;
                i += 1;
            } else if word(&argv[i], "retrycount") && !last {
                let n = int(&argv[i + 1]).ok_or(NOT_AN_INTEGER)?;
                if n < 0 {
                    return Err("ERR Invalid RETRYCOUNT value, must be >= 0".into());
                }
                retry = Some(n as u64);
                i += 2;
            } else {
                return Err(format!(
                    "ERR Unrecognized XNACK option '{}'",
                    text(&argv[i])
                ));
            }
        }
        let (at, n) = ids_at.ok_or("ERR syntax error, expected IDS keyword")?;
        let ids = argv[at..at + n]
            .iter()
            .map(|a| id(a, 0, true))
            .collect::<Result<Vec<_>, _>>()?;
        let stream = self.stream(key)?.cloned();
        let group = self.group_mut(key, g);
        let mut nacked = 0;
        for id in ids {
            let count = match group.pel.get(&id) {
                Some(nack) => nack.delivery_count,
                None if force && stream.as_ref().is_some_and(|s| live_entry(s, id).is_some()) => 0,
                None => continue,
            };
            let count = match (retry, mode) {
                (Some(n), _) => n,
                (None, 0) => count.saturating_sub(1),
                (None, 1) => count,
                (None, _) => COUNT_MAX,
            };
            group.nack(id, count);
            nacked += 1;
        }
        Ok(Reply::Int(nacked))
    }
}

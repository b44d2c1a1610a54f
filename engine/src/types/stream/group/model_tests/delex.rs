//! The model's XDELEX and XACKDEL (`docs/reference/streams-8.md` §1.4, §1.5). Deleting one entry is
//! the stream model's XDEL of that id, so the stream bookkeeping is XDEL's exactly.

use super::model::{GroupModel, Res, SYNTAX, id, int, word};
use crate::id::StreamId;
use crate::reply::Reply;

/// KEEPREF, DELREF, ACKED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    KeepRef,
    DelRef,
    Acked,
}

impl GroupModel {
    /// The options after `start`: a strategy at most once, the IDS block anywhere (the last
    /// one counts), anything else a syntax error; no IDS block is an error of its own.
    fn ackdel_options(argv: &[Vec<u8>], start: usize) -> Result<(Strategy, usize, usize), String> {
        let mut strategy = None;
        let mut ids = None;
        let mut j = start;
        while j < argv.len() {
            let token = [
                ("keepref", Strategy::KeepRef),
                ("delref", Strategy::DelRef),
                ("acked", Strategy::Acked),
            ]
            .into_iter()
            .find(|(w, _)| word(&argv[j], w));
            if let Some((_, s)) = token.filter(|_| strategy.is_none()) {
                strategy = Some(s);
                j += 1;
            } else if word(&argv[j], "ids") && j + 1 < argv.len() {
                let n = int(&argv[j + 1])
                    .filter(|n| *n >= 1)
                    .ok_or("ERR Number of IDs must be a positive integer")?
                    as usize;
                if n > argv.len() - j - 2 {
                    return Err(
                        "ERR The `numids` parameter must match the number of arguments".into(),
                    );
                }
                ids = Some((j + 2, n));
                j += 2 + n;
            } else {
                return Err(SYNTAX.into());
            }
        }
        let (at, n) = ids.ok_or("ERR IDS option is required")?;
        Ok((strategy.unwrap_or(Strategy::KeepRef), at, n))
    }

    /// DELREF: `id` leaves every PEL.
    fn drop_refs(&mut self, key: &[u8], id: StreamId) {
        if let Some(groups) = self.groups.get_mut(key) {
            for g in groups.values_mut() {
                g.unpend(id);
            }
        }
    }

    /// The stream model's XDEL of one id: whether it deleted a live entry.
    fn xdel_one(&mut self, key: &[u8], id: StreamId, now_ms: u64) -> bool {
        let argv = vec![b"XDEL".to_vec(), key.to_vec(), id.to_string().into_bytes()];
        self.streams.execute(&argv, now_ms).ok() == Some(Reply::Int(1))
    }

    /// `XDELEX key [strategy] IDS n id...`.
    pub(super) fn xdelex(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        let key = &argv[1];
        self.stream(key)?;
        let (strategy, at, n) = Self::ackdel_options(argv, 2)?;
        if self.stream(key)?.is_none() {
            return Ok(Reply::Array(vec![Reply::Int(-1); n]));
        }
        let ids = argv[at..at + n]
            .iter()
            .map(|a| id(a, 0, true))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::new();
        for id in ids {
            if strategy == Strategy::Acked && self.is_referenced(key, id) {
                out.push(Reply::Int(2));
                continue;
            }
            if strategy == Strategy::DelRef {
                self.drop_refs(key, id);
            }
            let deleted = self.xdel_one(key, id, now_ms);
            out.push(Reply::Int(if deleted { 1 } else { -1 }));
        }
        Ok(Reply::Array(out))
    }

    /// `XACKDEL key group [strategy] IDS n id...`.
    pub(super) fn xackdel(&mut self, argv: &[Vec<u8>], now_ms: u64) -> Res {
        let (key, g) = (&argv[1], &argv[2]);
        self.stream(key)?;
        let (strategy, at, n) = Self::ackdel_options(argv, 3)?;
        if self.stream(key)?.is_none() || !self.groups_of(key).any(|(name, _)| name == g) {
            return Ok(Reply::Array(vec![Reply::Int(-1); n]));
        }
        let ids = argv[at..at + n]
            .iter()
            .map(|a| id(a, 0, true))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::new();
        for id in ids {
            if self.group_mut(key, g).unpend(id).is_none() {
                out.push(Reply::Int(-1));
                continue;
            }
            if strategy == Strategy::Acked && self.is_referenced(key, id) {
                out.push(Reply::Int(2));
                continue;
            }
            if strategy == Strategy::DelRef {
                self.drop_refs(key, id);
            }
            self.xdel_one(key, id, now_ms);
            out.push(Reply::Int(1));
        }
        Ok(Reply::Array(out))
    }
}

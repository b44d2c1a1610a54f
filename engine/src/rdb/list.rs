//! A list in RDB form, as Redis 8.8's `rdbSaveObject` writes it: `RDB_TYPE_LIST_QUICKLIST_2`,
//! the node count, then per node its container (1 plain, 2 packed) and its bytes as a string
//! (a compressed node as its LZF blob, so its bytes are Redis's). A listpack-encoded list is a
//! quicklist of one packed node. Reading also accepts `RDB_TYPE_LIST` (a length and plain
//! strings); each packed node's listpack is checked whole before it is used, and the list is
//! converted as Redis's `LIST_CONV_AUTO` does (one node within the limits: listpack). The
//! ziplist forms of Redis before 7.0 (`RDB_TYPE_LIST_ZIPLIST`, `RDB_TYPE_LIST_QUICKLIST`) are
//! not read.

use crate::error::RdbError;
use crate::types::list::quicklist::Quicklist;
use crate::types::list::{List, ListConfig, listpack};

use super::codec::{Reader, Writer};

/// Node containers.
const PLAIN: u64 = 1;
const PACKED: u64 = 2;

/// Writes `list`'s body.
pub fn write(list: &List, w: &mut Writer) {
    if let Some(lp) = list.as_listpack() {
        w.len(1);
        w.len(PACKED);
        w.string(lp);
        return;
    }
    let Some(ql) = list.as_quicklist() else {
        return;
    };
    w.len(ql.node_count() as u64);
    for node in ql.nodes() {
        let (bytes, plain, compressed) = node.stored();
        w.len(if plain { PLAIN } else { PACKED });
        if compressed {
            // RDB_ENCVAL << 6 | RDB_ENC_LZF
            w.byte(0xc3);
            w.len(bytes.len() as u64);
            w.len(node.raw_len() as u64);
            w.raw(bytes);
        } else {
            w.string(bytes);
        }
    }
}

/// Reads a `RDB_TYPE_LIST_QUICKLIST_2` body.
pub fn read_quicklist(r: &mut Reader<'_>, cfg: ListConfig) -> Result<List, RdbError> {
    let nodes = r.count()?;
    if nodes == 0 {
        return Err(r.corrupt("Empty list"));
    }
    let mut ql = Quicklist::new(cfg.fill, cfg.depth);
    for _ in 0..nodes {
        let container = r.length()?;
        if container != PLAIN && container != PACKED {
            return Err(r.corrupt("Quicklist integrity check failed."));
        }
        let data = r.string()?;
        if data.is_empty() {
            return Err(r.corrupt("Quicklist node empty"));
        }
        if container == PLAIN {
            ql.append_plain(&data);
            continue;
        }
        listpack::check(&data).map_err(|_| r.corrupt("Listpack integrity check failed."))?;
        ql.append_listpack(data);
    }
    if ql.len() == 0 {
        return Err(r.corrupt("Empty list"));
    }
    Ok(List::from_quicklist(ql, cfg))
}

/// Reads a `RDB_TYPE_LIST` body: a length and that many strings.
pub fn read_plain(r: &mut Reader<'_>, cfg: ListConfig) -> Result<List, RdbError> {
    let n = r.count()?;
    if n == 0 {
        return Err(r.corrupt("Empty list"));
    }
    let mut list = List::new();
    for _ in 0..n {
        let value = r.string()?;
        list.push(&[&value], false, cfg);
    }
    Ok(list)
}

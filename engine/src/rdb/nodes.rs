//! A stream's nodes section (`nodes:len (master_id:string listpack:string){nodes}`, see
//! [`super::stream`]): written, and read, on two threads when the stream is large.
//!
//! Saving: each node's listpack (and its LZF compression) depends on that node only, and a
//! fresh [`Writer`] compresses as any other (see [`super::lzf::Compressor`]), so the second
//! part of the nodes is encoded on a worker thread into buffers of its own, handed over in
//! order and taken in after the first part (see [`write`]): the bytes are the one-thread
//! bytes, and the file is written while the worker still encodes.
//!
//! Loading: a first pass walks the section and takes each node's key and listpack frame
//! (slices of the input, nothing decoded); the frames are then decompressed and decoded, the
//! second half on a worker thread; last, in file order, each node's result is checked against
//! the one before (order, entry count). The first error in file order is returned, so the
//! error (and its offset) is the one a one-thread load reports.

use std::collections::BTreeMap;

use crate::error::RdbError;
use crate::id::StreamId;
use crate::node::Node;

use super::codec::{Frame, Reader, SPILL_BYTES, Writer};

/// Nodes from which a section is split across two threads (below it, one thread: a thread
/// costs more than a few nodes).
const PARALLEL_NODES: usize = 256;

/// Nodes encoded between two [`Writer::spill`]s of the first part (and two looks at the
/// worker's buffer).
const SPILL_NODES: usize = 64;

/// At most the bytes [`encode`] writes for `nodes`: per node its key (a 1-byte length and 16
/// bytes) and its listpack, stored (a length of up to 9 bytes) or compressed into less
/// (after 1 + 9 + 9 header bytes).
fn encoded_bytes_max(nodes: &[(&StreamId, &Node)]) -> usize {
    nodes
        .iter()
        .map(|(_, node)| 17 + 19 + node.listpack_bytes() as usize)
        .sum()
}

fn encode(nodes: &[(&StreamId, &Node)], w: &mut Writer<'_>) {
    // One allocation: a buffer grown by doubling copies itself about once more, page by page.
    // Only the pages written are ever touched.
    w.buf.reserve(encoded_bytes_max(nodes));
    let mut lp = Vec::new();
    for (master, node) in nodes {
        w.string(&master.to_be_bytes());
        lp.clear();
        node.write_listpack(&mut lp);
        w.string(&lp);
    }
}

/// Writes the nodes (those to save: the caller leaves out nodes without live entries).
///
/// A large section is split in two: this thread encodes the first part, a worker the second
/// in buffers of about [`SPILL_BYTES`] that it hands over as each fills. This thread, done
/// with its own part, takes them in order as parts of `w` (no copy; their checksum is
/// computed here) and spills them, so the file is written while the worker still encodes.
/// Writing is this thread's extra work, hence its smaller part when `w` spills.
pub(crate) fn write(nodes: &[(&StreamId, &Node)], w: &mut Writer<'_>) {
    write_handing_over(nodes, w, SPILL_BYTES);
}

/// [`write`], the worker handing its buffer over from `handover_bytes` (less in tests).
fn write_handing_over(nodes: &[(&StreamId, &Node)], w: &mut Writer<'_>, handover_bytes: usize) {
    w.len(nodes.len() as u64);
    if nodes.len() < PARALLEL_NODES || super::one_thread() {
        encode(nodes, w);
        return;
    }
    let split = if w.spills() {
        nodes.len() * 7 / 16
    } else {
        nodes.len() / 2
    };
    let (first, second) = nodes.split_at(split);
    let compress = w.compress;
    // (nodes of `second` encoded so far, their bytes since the last hand-over)
    // Unbounded: the worker must not wait for this thread, still busy with its own part (the
    // buffers waiting are at most the worker's part, which it would hold anyway).
    let (parts, handed) = std::sync::mpsc::channel::<(usize, Vec<u8>)>();
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("rdb-nodes".into())
            .spawn_scoped(scope, move || {
                let mut other = Writer::new(compress);
                let mut done = 0;
                for chunk in second.chunks(SPILL_NODES) {
                    encode(chunk, &mut other);
                    done += chunk.len();
                    if other.buf.len() >= handover_bytes || done == second.len() {
                        let part = std::mem::take(&mut other.buf);
                        if parts.send((done, part)).is_err() {
                            return;
                        }
                    }
                }
            });
        for chunk in first.chunks(SPILL_NODES) {
            encode(chunk, w);
            w.spill();
        }
        // Ahead of the worker (its part is the larger): the first part goes to the disk
        // meanwhile, leaving less for the save's final fsync.
        w.sync_spilled();
        // Ends when the worker is done (or gone: no thread, or a panic, a bug).
        let mut taken = 0;
        for (done, part) in handed.iter() {
            w.push_part(part);
            w.spill();
            taken = done;
        }
        if worker.map(|handle| handle.join().is_ok()).unwrap_or(false) && taken == second.len() {
            return;
        }
        // The rest of the second part on this thread.
        encode(&second[taken..], w);
    });
}

/// One node as the first pass found it.
struct Framed<'a> {
    master: StreamId,
    listpack: Frame<'a>,
    /// The input offset after the listpack (where a decoding error is reported).
    offset: usize,
}

fn decode(framed: &[Framed<'_>]) -> Vec<Result<(Node, u64), RdbError>> {
    let mut scratch = Vec::new();
    framed
        .iter()
        .map(|f| {
            let lp = f.listpack.bytes(&mut scratch)?;
            Node::from_listpack(f.master, lp).map_err(|what| RdbError::Corrupt {
                offset: f.offset,
                what,
            })
        })
        .collect()
}

/// Reads the nodes; returns them with their total of live entries.
pub(crate) fn read(r: &mut Reader<'_>) -> Result<(BTreeMap<StreamId, Node>, u64), RdbError> {
    let count = r.count()?;
    let mut framed = Vec::new();
    // A failure of the first pass is returned after the nodes before it, as one pass would.
    let mut walk_error = None;
    for _ in 0..count {
        let step = (|| {
            let key = r.string()?;
            let key: [u8; 16] = key
                .as_slice()
                .try_into()
                .map_err(|_| r.corrupt("Stream node key entry is not the size of a stream ID"))?;
            let listpack = r.string_frame()?;
            Ok::<_, RdbError>(Framed {
                master: StreamId::from_u128(u128::from_be_bytes(key)),
                listpack,
                offset: r.offset(),
            })
        })();
        match step {
            Ok(f) => framed.push(f),
            Err(e) => {
                walk_error = Some(e);
                break;
            }
        }
    }
    let decoded = if framed.len() < PARALLEL_NODES {
        decode(&framed)
    } else {
        let (first, second) = framed.split_at(framed.len() / 2);
        std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("rdb-nodes".into())
                .spawn_scoped(scope, || decode(second));
            let mut decoded = decode(first);
            match worker.map(|handle| handle.join()) {
                Ok(Ok(rest)) => decoded.extend(rest),
                _ => decoded.extend(decode(second)),
            }
            decoded
        })
    };
    let mut nodes: Vec<(StreamId, Node)> = Vec::with_capacity(decoded.len());
    let mut live_entries: u64 = 0;
    for (f, result) in framed.iter().zip(decoded) {
        let (node, live) = result?;
        let corrupt = |what: &str| RdbError::Corrupt {
            offset: f.offset,
            what: what.into(),
        };
        live_entries = live_entries
            .checked_add(live)
            .ok_or_else(|| corrupt("Stream listpack bad entry count"))?;
        if let Some((prev, prev_node)) = nodes.last()
            && (*prev >= f.master || prev_node.last() >= f.master)
        {
            return Err(corrupt(
                "Listpack re-added with existing key or out of order",
            ));
        }
        debug_assert!(node.check(f.master).is_ok());
        nodes.push((f.master, node));
    }
    if let Some(e) = walk_error {
        return Err(e);
    }
    // In strictly increasing key order (checked above): built in one go.
    Ok((nodes.into_iter().collect(), live_entries))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::ManualClock;
    use crate::keyspace::{Keyspace, Value};
    use crate::stream::Stream;

    /// A stream of 400 nodes (two entries each, some deleted): enough for two threads.
    fn stream() -> Stream {
        let ks = Keyspace::new(Arc::new(ManualClock::new(1_000)));
        ks.config().set_node_entries_max(2);
        for i in 1..=800u32 {
            let value = if i % 3 == 0 {
                i.to_string()
            } else {
                "v".repeat(30)
            };
            ks.execute(&["XADD", "s", &format!("{i}-1"), "f", &value, "g", "x"])
                .unwrap();
        }
        for i in (5..800u32).step_by(7) {
            ks.execute(&["XDEL", "s", &format!("{i}-1")]).unwrap();
        }
        match ks.run(|db, _| db.get(b"s").cloned()) {
            Some(Value::Stream(s)) => *s,
            _ => unreachable!("XADD made a stream"),
        }
    }

    fn one_thread(nodes: &[(&StreamId, &Node)], compress: bool) -> Vec<u8> {
        let mut w = Writer::new(compress);
        w.len(nodes.len() as u64);
        encode(nodes, &mut w);
        w.into_bytes()
    }

    #[test]
    fn two_threads_write_the_one_thread_bytes_and_read_them_back() {
        let s = stream();
        let nodes: Vec<_> = s.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
        assert!(nodes.len() >= PARALLEL_NODES);
        for compress in [true, false] {
            let mut w = Writer::new(compress);
            write(&nodes, &mut w);
            let bytes = w.into_bytes();
            assert_eq!(bytes, one_thread(&nodes, compress));
            // With the checksum kept, the halves' combined CRC is the whole's, also after more
            // bytes follow the appended half.
            let mut checked = Writer::with_checksum(compress, true);
            checked.raw(b"before the nodes");
            write(&nodes, &mut checked);
            checked.raw(b"after");
            let crc = checked.crc();
            let mut flushed = Vec::new();
            checked.flush_into(&mut flushed).unwrap();
            assert_eq!(flushed[16..flushed.len() - 5], bytes[..]);
            assert_eq!(crc, super::super::crc64::crc64(0, &flushed));
            // Spilling as it goes (the first part takes fewer nodes then): the same bytes
            // reach the output, with the same checksum.
            let mut out = Vec::new();
            let mut spilling = Writer::with_checksum(compress, true).spilling_into(&mut out);
            spilling.set_spill_bytes(100);
            // Many hand-overs from the worker, too.
            write_handing_over(&nodes, &mut spilling, 100);
            let spilled_crc = spilling.crc();
            spilling.finish_spill().unwrap();
            drop(spilling);
            assert_eq!(out, bytes);
            assert_eq!(spilled_crc, super::super::crc64::crc64(0, &bytes));
            let mut r = Reader::new(&bytes);
            let (back, live) = read(&mut r).unwrap();
            assert_eq!(r.remaining(), 0);
            assert_eq!(live, s.len());
            assert_eq!(back.len(), nodes.len());
            for ((master, node), (back_master, back_node)) in nodes.iter().zip(&back) {
                assert_eq!(*master, back_master);
                assert_eq!(node.parts(), back_node.parts());
            }
        }
    }

    /// An output whose writes fail once `room` bytes are in.
    struct Full {
        room: usize,
        writes: usize,
        syncs: usize,
    }

    impl std::io::Write for Full {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.writes += 1;
            if bytes.len() > self.room {
                return Err(std::io::Error::other("No space left on device"));
            }
            self.room -= bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl super::super::codec::SaveOutput for Full {
        fn sync_written(&mut self) -> std::io::Result<()> {
            self.syncs += 1;
            Ok(())
        }
    }

    #[test]
    fn the_first_part_is_made_durable_before_the_second_is_written() {
        let s = stream();
        let nodes: Vec<_> = s.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
        let mut out = Full {
            room: usize::MAX,
            writes: 0,
            syncs: 0,
        };
        let mut w = Writer::new(false).spilling_into(&mut out);
        w.set_spill_bytes(50);
        write_handing_over(&nodes, &mut w, 50);
        w.finish_spill().unwrap();
        drop(w);
        assert_eq!(out.syncs, 1);
        assert!(out.writes > 2, "{}", out.writes);
    }

    #[test]
    fn a_failed_spill_is_reported_at_the_end() {
        let s = stream();
        let nodes: Vec<_> = s.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
        let mut out = Full {
            room: 100,
            writes: 0,
            syncs: 0,
        };
        let mut w = Writer::new(false).spilling_into(&mut out);
        w.set_spill_bytes(50);
        write(&nodes, &mut w);
        w.spill();
        let err = w.finish_spill().unwrap_err();
        assert!(err.to_string().contains("No space left"), "{err}");
        drop(w);
        // The first spill did not fit, and nothing was written after it.
        assert_eq!(out.writes, 1);
    }

    #[test]
    fn the_first_error_in_file_order_is_the_one_returned() {
        let s = stream();
        let nodes: Vec<_> = s.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
        let bytes = one_thread(&nodes, false);
        let body = |k: usize| {
            let mut w = Writer::new(false);
            encode(&nodes[..k], &mut w);
            w.buf.len()
        };
        let header = bytes.len() - body(nodes.len());
        // Just past node `i`: its listpack's terminator is the byte before.
        let end = |i: usize| header + body(i + 1);
        let (early, late) = (10, nodes.len() - 10);
        let err = |bad: &[u8]| read(&mut Reader::new(bad)).err().map(|e| e.to_string());
        // A broken listpack in each half: the first half's is reported.
        let mut bad = bytes.clone();
        bad[end(early) - 1] = 0;
        bad[end(late) - 1] = 0;
        let mut first_only = bytes.clone();
        first_only[end(early) - 1] = 0;
        assert!(err(&bad).is_some());
        assert_eq!(err(&bad), err(&first_only));
        // A walk error late (a node key of the wrong size) after a broken listpack early: the
        // listpack's error, as one pass would meet it first.
        let mut walk = first_only.clone();
        walk[end(late)] = 15;
        assert_eq!(err(&walk), err(&first_only));
        // The walk error alone is reported as such.
        let mut walk_only = bytes.clone();
        walk_only[end(late)] = 15;
        let msg = err(&walk_only).unwrap();
        assert!(msg.contains("not the size of a stream ID"), "{msg}");
    }
}

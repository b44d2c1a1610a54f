//! What RESTORE and RDB loading refuse, as Redis 8.10's stream load hardening does
//! (`docs/reference/streams-8.md` §8), and the versions they accept: a stream payload of
//! version 15 (Redis 8.10's DUMP) restores, an unknown type is refused, and the corrupt shapes
//! (listpacks out of master-id order, a first or last id that disagrees with the entries, a
//! group-PEL entry owned by two consumers) are `Bad data format`, never a partial value.

use super::codec::Writer;
use super::crc64::crc64;
use super::{RDB_VERSION, RDB_VERSION_READ, dump, nodes, stream, types};
use crate::ManualClock;
use crate::error::RdbError;
use crate::id::StreamId;
use crate::keyspace::{Keyspace, Value};
use crate::stream::Stream;
use std::sync::Arc;

const NOW: u64 = 1_700_000_000_000;

/// A stream of `n` entries `1-0`..`n-0`, two per node.
fn stream_of(n: u64) -> Stream {
    let clock = Arc::new(ManualClock::new(NOW));
    let ks = Keyspace::new(clock.clone());
    ks.config().set_node_entries_max(2);
    for i in 1..=n {
        ks.execute(&["XADD", "s", &format!("{i}-0"), "f", "v"])
            .unwrap();
    }
    ks.run(|db, _| match db.get(b"s") {
        Some(Value::Stream(s)) => (**s).clone(),
        _ => unreachable!("XADD made a stream"),
    })
}

fn encode(f: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new(false);
    f(&mut w);
    w.into_bytes()
}

/// A DUMP payload of type `t` with `body`, version `version` and its checksum.
fn payload(t: u8, body: &[u8], version: u16) -> Vec<u8> {
    let mut p = vec![t];
    p.extend_from_slice(body);
    p.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

/// The stream's body split as it is written: nodes, counters, groups and IDMP (no groups).
struct Parts {
    nodes: Vec<u8>,
    counters: Vec<u8>,
    idmp: Vec<u8>,
}

fn parts(s: &Stream) -> Parts {
    assert_eq!(s.groups.len(), 0);
    let whole = encode(|w| stream::write(s, NOW, w));
    let live: Vec<_> = s.nodes.iter().filter(|(_, n)| n.live() > 0).collect();
    let nodes = encode(|w| nodes::write(&live, w));
    let counters = counters(s.len(), s.last_id(), s.first_id(), s.entries_added());
    let idmp = whole[nodes.len() + counters.len() + 1..].to_vec();
    Parts {
        nodes,
        counters,
        idmp,
    }
}

fn counters(length: u64, last: StreamId, first: StreamId, added: u64) -> Vec<u8> {
    encode(|w| {
        w.len(length);
        w.id_lens(last);
        w.id_lens(first);
        w.id_lens(StreamId::MIN);
        w.len(added);
    })
}

fn restore(body: &[u8]) -> Result<Value, RdbError> {
    let p = payload(types::STREAM_LISTPACKS_5, body, RDB_VERSION);
    assert!(dump::verify(&p));
    dump::restore(&p, NOW, &Default::default())
}

fn assert_corrupt(body: &[u8], what: &str) {
    match restore(body) {
        Err(RdbError::Corrupt { .. }) => {}
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn a_version_15_stream_payload_restores_and_dump_still_writes_14() {
    let s = stream_of(3);
    let value = Value::Stream(Box::new(s));
    let ours = dump::dump(&value, NOW, false);
    let n = ours.len();
    assert_eq!(&ours[n - 10..n - 8], &14u16.to_le_bytes());
    let as_8_10 = payload(ours[0], &ours[1..n - 10], RDB_VERSION_READ);
    assert!(dump::verify(&as_8_10));
    let back = dump::restore(&as_8_10, NOW, &Default::default()).unwrap();
    assert_eq!(dump::dump(&back, NOW, false), ours);
    let too_new = payload(ours[0], &ours[1..n - 10], RDB_VERSION_READ + 1);
    assert!(!dump::verify(&too_new));
}

#[test]
fn a_version_15_payload_of_an_unknown_type_is_refused() {
    // Redis 8.10's hash template types (29..=32) and anything else echomq does not hold.
    for t in [29u8, 30, 31, 32, 33, 200] {
        let p = payload(t, b"\x00", RDB_VERSION_READ);
        assert!(dump::verify(&p));
        assert!(
            dump::restore(&p, NOW, &Default::default()).is_err(),
            "type {t}"
        );
    }
}

#[test]
fn the_unchanged_parts_restore_as_a_sanity_check() {
    let s = stream_of(4);
    let p = parts(&s);
    let body = [&p.nodes[..], &p.counters, &[0], &p.idmp].concat();
    let Value::Stream(back) = restore(&body).unwrap() else {
        panic!("not a stream")
    };
    assert_eq!(back.len(), 4);
}

#[test]
fn listpacks_out_of_master_id_order_are_bad_data() {
    let s = stream_of(4);
    let p = parts(&s);
    let mut live: Vec<_> = s.nodes.iter().collect();
    assert_eq!(live.len(), 2);
    live.reverse();
    let reversed = encode(|w| nodes::write(&live, w));
    let body = [&reversed[..], &p.counters, &[0], &p.idmp].concat();
    assert_corrupt(&body, "reversed nodes");
}

#[test]
fn a_first_or_last_id_that_disagrees_with_the_entries_is_bad_data() {
    let s = stream_of(4);
    let p = parts(&s);
    let last = StreamId::new(4, 0);
    for (first, last, what) in [
        (StreamId::new(2, 0), last, "first id past the first entry"),
        (StreamId::MIN, last, "first id 0-0 on a non-empty stream"),
        (
            StreamId::new(1, 0),
            StreamId::new(3, 0),
            "last id below the last entry",
        ),
    ] {
        let body = [&p.nodes[..], &counters(4, last, first, 4), &[0], &p.idmp].concat();
        assert_corrupt(&body, what);
    }
    // An empty stream: first id 0-0 only.
    let empty = Stream::default();
    let e = parts(&empty);
    let ok = [&e.nodes[..], &e.counters, &[0], &e.idmp].concat();
    assert!(restore(&ok).is_ok());
    let nonzero = counters(0, last, StreamId::new(1, 0), 4);
    let body = [&e.nodes[..], &nonzero, &[0], &e.idmp].concat();
    assert_corrupt(&body, "non-zero first id on an empty stream");
}

#[test]
fn a_pel_entry_owned_by_two_consumers_is_bad_data() {
    let s = stream_of(1);
    let p = parts(&s);
    let groups = encode(|w| {
        w.len(1);
        w.string(b"g");
        w.id_lens(StreamId::new(1, 0));
        w.len(1);
        w.len(1);
        w.raw(&StreamId::new(1, 0).to_be_bytes());
        w.millis(NOW as i64);
        w.len(1);
        w.len(2);
        for name in [&b"consumerA"[..], b"consumerB"] {
            w.string(name);
            w.millis(NOW as i64);
            w.millis(NOW as i64);
            w.len(1);
            w.raw(&StreamId::new(1, 0).to_be_bytes());
        }
        w.len(0);
    });
    let body = [&p.nodes[..], &p.counters, &groups, &p.idmp].concat();
    assert_corrupt(&body, "shared NACK");
    // The same group with the entry owned once loads.
    let once = encode(|w| {
        w.len(1);
        w.string(b"g");
        w.id_lens(StreamId::new(1, 0));
        w.len(1);
        w.len(1);
        w.raw(&StreamId::new(1, 0).to_be_bytes());
        w.millis(NOW as i64);
        w.len(1);
        w.len(1);
        w.string(b"consumerA");
        w.millis(NOW as i64);
        w.millis(NOW as i64);
        w.len(1);
        w.raw(&StreamId::new(1, 0).to_be_bytes());
        w.len(0);
    });
    let body = [&p.nodes[..], &p.counters, &once, &p.idmp].concat();
    assert!(restore(&body).is_ok());
}

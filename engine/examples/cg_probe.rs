//! A fixed-work driver of the engine's hot paths, for instruction counts under callgrind
//! (wall-clock figures are noise on a loaded machine; instruction counts are not):
//!
//! ```text
//! cargo build --profile bench -p echomq-engine --example cg_probe
//! valgrind --tool=callgrind --toggle-collect='*cg_probe::measured*' \
//!     target/release/examples/cg_probe <case> [n]
//! ```
//!
//! Only `measured` is counted, so setup (building the stream, delivering what a case acks)
//! stays out. Cases: `xadd_typed`, `xadd_argv`, `deliver_ack_typed`, `deliver_ack_argv`,
//! `xackdel`, `xack_xdel`, `claim`, `idmp_plain`, `idmp_fresh`, `idmp_dup` (n rounds; an
//! XADD case appends n entries, a group case runs n rounds of 100 ids), and `memory` (bytes
//! per pending entry for n pending entries, from a counting allocator, as `benches/groups.rs`
//! reports them).

#[path = "../../benches/support/counting_alloc.rs"]
#[allow(dead_code)]
mod counting_alloc;

use std::hint::black_box;
use std::sync::Arc;

use echomq_engine::{
    AddId, DeleteStrategy, Keyspace, ManualClock, NodeLimits, Reply, Stream, StreamId, Value,
};

const KEY: &[u8] = b"bench";
const FIELDS: [&[u8]; 4] = [b"f1", b"v1", b"f2", b"v2"];
const XADD_ARGV: [&[u8]; 7] = [b"XADD", KEY, b"*", b"f1", b"v1", b"f2", b"v2"];
const START_MS: u64 = 1_704_067_200_000;
const ADDS_PER_MS: u64 = 5000;
const BATCH: usize = 100;

fn entry_id(i: u64) -> StreamId {
    StreamId::new(i + 1, 0)
}

fn build_stream(len: u64) -> Stream {
    let mut stream = Stream::new();
    append(&mut stream, &mut 0, len);
    stream
}

fn append(stream: &mut Stream, next: &mut u64, n: u64) {
    for _ in 0..n {
        let added = stream.add(
            AddId::Explicit(entry_id(*next)),
            &FIELDS,
            START_MS,
            NodeLimits::default(),
        );
        assert!(added.is_ok(), "{added:?}");
        *next += 1;
    }
}

fn keyspace_with(stream: Stream, clock: Arc<ManualClock>) -> Keyspace {
    let keyspace = Keyspace::new(clock);
    keyspace.run(|db, _| db.insert(KEY, Value::Stream(Box::new(stream))));
    keyspace
}

/// The counted part of every case: callgrind's `--toggle-collect` names it.
#[inline(never)]
fn measured<R>(f: impl FnOnce() -> R) -> R {
    black_box(f())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let case = args.get(1).map_or("xadd_argv", String::as_str);
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    match case {
        "xadd_typed" => {
            let mut stream = Stream::new();
            let mut now = START_MS;
            measured(|| {
                for i in 0..n {
                    if i % ADDS_PER_MS == 0 {
                        now += 1;
                    }
                    let added =
                        stream.add(AddId::Auto, black_box(&FIELDS), now, NodeLimits::default());
                    assert!(added.is_ok());
                }
            });
        }
        "xadd_argv" | "idmp_plain" | "idmp_fresh" | "idmp_dup" => {
            let clock = Arc::new(ManualClock::new(START_MS));
            let keyspace = Keyspace::new(clock.clone());
            let dup: [&[u8]; 10] = [
                b"XADD",
                KEY,
                b"IDMP",
                b"p",
                b"the-iid-00000000",
                b"*",
                b"f1",
                b"v1",
                b"f2",
                b"v2",
            ];
            if case == "idmp_dup" {
                assert!(keyspace.execute(&dup).is_ok());
            }
            let mut iid = *b"iid-0000000000000000";
            measured(|| {
                for i in 0..n {
                    if i % ADDS_PER_MS == 0 {
                        clock.advance(1);
                    }
                    let reply = match case {
                        "idmp_fresh" => {
                            write_hex(&mut iid[4..], i);
                            keyspace.execute(black_box(&[
                                b"XADD",
                                KEY,
                                b"IDMP",
                                b"p",
                                &iid[..],
                                b"*",
                                b"f1",
                                b"v1",
                                b"f2",
                                b"v2",
                            ]))
                        }
                        "idmp_dup" => keyspace.execute(black_box(&dup)),
                        _ => keyspace.execute(black_box(&XADD_ARGV)),
                    };
                    assert!(reply.is_ok());
                }
            });
        }
        "deliver_ack_typed" => {
            let mut stream = build_stream(n * BATCH as u64 + 1);
            assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
            let mut now = START_MS;
            let mut ids = Vec::with_capacity(BATCH);
            measured(|| {
                for _ in 0..n {
                    now += 1;
                    ids.clear();
                    let d =
                        stream.deliver_new(b"g", b"c", BATCH, false, now, &mut |e| ids.push(e.id));
                    assert_eq!(d.ok(), Some(BATCH));
                    black_box(stream.ack(b"g", &ids).ok());
                }
            });
        }
        "deliver_ack_argv" => {
            let mut stream = build_stream(n * BATCH as u64 + 1);
            assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
            let keyspace = keyspace_with(stream, Arc::new(ManualClock::new(START_MS)));
            let read: [&[u8]; 9] = [
                b"XREADGROUP",
                b"GROUP",
                b"g",
                b"c",
                b"COUNT",
                b"100",
                b"STREAMS",
                KEY,
                b">",
            ];
            let mut ack: Vec<Vec<u8>> = Vec::with_capacity(BATCH + 3);
            measured(|| {
                for _ in 0..n {
                    let reply = keyspace.execute(&read);
                    ack.clear();
                    ack.extend([b"XACK".to_vec(), KEY.to_vec(), b"g".to_vec()]);
                    if let Ok(Reply::StreamMap(streams)) = &reply
                        && let Some((_, Reply::Entries(entries))) = streams.first()
                    {
                        ack.extend(entries.iter().map(|e| e.id.to_vec()));
                    }
                    assert_eq!(ack.len(), BATCH + 3);
                    black_box(keyspace.execute(&ack).ok());
                }
            });
        }
        "xackdel" | "xack_xdel" => {
            let len = 10_000;
            let mut stream = build_stream(len);
            assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
            let (mut next, mut now) = (len, START_MS);
            let mut ids = Vec::with_capacity(BATCH);
            for _ in 0..n {
                append(&mut stream, &mut next, BATCH as u64);
                now += 1;
                ids.clear();
                let d = stream.deliver_new(b"g", b"c", BATCH, false, now, &mut |e| ids.push(e.id));
                assert_eq!(d.ok(), Some(BATCH));
                measured(|| {
                    if case == "xackdel" {
                        black_box(stream.ack_delete(b"g", &ids, DeleteStrategy::KeepRef));
                    } else {
                        black_box(stream.ack(b"g", &ids).ok());
                        black_box(stream.delete(&ids));
                    }
                });
            }
        }
        "claim" => {
            let pel = 100_000;
            let mut stream = build_stream(pel);
            assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
            let d = stream.deliver_new(b"g", b"c", 0, false, START_MS, &mut |e| {
                black_box(e.id);
            });
            assert_eq!(d.ok(), Some(pel as usize));
            let mut now = START_MS;
            measured(|| {
                for _ in 0..n {
                    now += 1;
                    let c = stream.claim_idle(b"g", b"c2", 0, BATCH, now, &mut |e, idle, k| {
                        black_box((e.id, idle, k));
                    });
                    assert_eq!(c.ok(), Some(BATCH));
                }
            });
        }
        "memory" => {
            let mut stream = build_stream(n);
            assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
            let window = counting_alloc::Window::open();
            let d = stream.deliver_new(b"g", b"c", 0, false, START_MS, &mut |e| {
                black_box(e.id);
            });
            let stats = window.close();
            assert_eq!(d.ok(), Some(n as usize));
            println!(
                "{n} pending: {:.2} B per pending entry allocated, {:.2} B as glibc chunks, \
                 {:.2} B by pel_heap_bytes",
                stats.live_bytes as f64 / n as f64,
                stats.live_chunk_bytes as f64 / n as f64,
                stream.pel_heap_bytes() as f64 / n as f64,
            );
        }
        other => panic!("unknown case {other}"),
    }
}

fn write_hex(out: &mut [u8], mut v: u64) {
    for b in out.iter_mut().rev() {
        *b = b"0123456789abcdef"[(v & 15) as usize];
        v >>= 4;
    }
}

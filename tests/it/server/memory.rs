//! Memory as Redis accounts it, over raw RESP: `used_memory` counts what the dataset and the
//! buffers hold (the counting allocator this test binary installs, as `echomq serve` does), not
//! the empty process; it goes down when data is freed; `maxmemory` is checked before every
//! DENY_OOM command, inside a pipeline and inside MULTI/EXEC. Expected bytes are what Redis
//! 8.8 sends for the same requests.

use echomq::testing::TestServer;

use super::{Wire, info_field, request, show};

const OOM: &[u8] = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n";

fn used_memory(wire: &mut Wire) -> u64 {
    info_field(wire, "memory", "used_memory").parse().unwrap()
}

/// Pipelines `n` SETs of `size`-byte values under keys `prefix:i`; returns how many were
/// refused with `-OOM` (every other reply must be `+OK`). The requests are written one by one
/// and never held together: the server runs in this process, so what the test holds counts.
fn set_many(wire: &mut Wire, prefix: &str, n: usize, size: usize) -> usize {
    let value = "v".repeat(size);
    for i in 0..n {
        wire.send(&request(&["SET", &format!("{prefix}:{i}"), &value]));
    }
    let mut refused = 0;
    for _ in 0..n {
        let reply = wire.read_reply();
        if reply == OOM {
            refused += 1;
        } else {
            assert_eq!(reply, b"+OK\r\n", "{}", show(&reply));
        }
    }
    refused
}

#[test]
fn the_empty_process_counts_nothing_so_a_small_maxmemory_accepts_the_first_writes() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    let empty = used_memory(&mut wire);
    assert!(empty < 1 << 20, "an empty server uses {empty} bytes");
    wire.expect(
        b"CONFIG SET maxmemory 6mb\r\nXADD s 1-1 f v\r\nSET k v\r\n",
        b"+OK\r\n$3\r\n1-1\r\n+OK\r\n",
    );
    let fields = [
        "used_memory_dataset",
        "maxmemory",
        "mem_fragmentation_ratio",
    ];
    for field in fields {
        info_field(&mut wire, "memory", field);
    }
    assert_eq!(info_field(&mut wire, "memory", "maxmemory"), "6291456");
}

#[test]
fn freed_memory_makes_room_again_after_flushall_del_and_xtrim() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(b"CONFIG SET maxmemory 4mb\r\n", b"+OK\r\n");
    // 8 MB of strings into 4 MB: the first half or so fits, the rest is refused.
    let refused = set_many(&mut wire, "a", 800, 10_000);
    assert!((200..800).contains(&refused), "{refused} refused");
    let full = used_memory(&mut wire);
    wire.expect(b"FLUSHALL\r\nSET x y\r\n", b"+OK\r\n+OK\r\n");
    let flushed = used_memory(&mut wire);
    assert!(
        flushed < 1 << 20,
        "{full} bytes before FLUSHALL, {flushed} after"
    );

    // DEL frees too, the keyspace's table included: 80,000 small keys (well over the limit,
    // written without it), then all deleted.
    wire.expect(b"CONFIG SET maxmemory 0\r\n", b"+OK\r\n");
    assert_eq!(set_many(&mut wire, "b", 80_000, 10), 0);
    wire.expect(
        b"CONFIG SET maxmemory 4mb\r\nSET x y\r\n",
        &[b"+OK\r\n", OOM].concat(),
    );
    let before_del = used_memory(&mut wire);
    for chunk in (0..80_000).collect::<Vec<_>>().chunks(1000) {
        let mut del = vec!["DEL".to_string()];
        del.extend(chunk.iter().map(|i| format!("b:{i}")));
        let del: Vec<&str> = del.iter().map(String::as_str).collect();
        wire.send(&request(&del));
        assert_eq!(wire.read_reply(), b":1000\r\n");
    }
    let deleted = used_memory(&mut wire);
    assert!(
        deleted < 1 << 20 && deleted < before_del / 2,
        "{before_del} bytes before DEL, {deleted} after"
    );
    wire.expect(b"SET x y\r\n", b"+OK\r\n");

    // And so does XTRIM: a stream filled past the limit, then trimmed to nothing.
    let field = "f".repeat(10_000);
    let mut added = 0;
    while added < 1000 {
        let reply = wire.command(&["XADD", "s", "*", &field, "v"]);
        if reply == OOM {
            break;
        }
        added += 1;
    }
    assert!(added < 1000, "the stream never reached maxmemory");
    wire.expect(b"XTRIM s MAXLEN 0\r\n", format!(":{added}\r\n").as_bytes());
    wire.expect(b"SET y z\r\n", b"+OK\r\n");
}

#[test]
fn a_pipelined_burst_is_checked_per_command_and_stays_at_the_limit() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    const LIMIT: u64 = 2 << 20;
    wire.expect(b"CONFIG SET maxmemory 2mb\r\n", b"+OK\r\n");
    // 20 MB in one write: each SET is checked as it runs, not against a stale reading.
    let refused = set_many(&mut wire, "k", 2000, 10_000);
    assert!(refused > 1500, "only {refused} refused");
    let used = used_memory(&mut wire);
    assert!(
        used <= LIMIT + LIMIT / 10,
        "{used} bytes used under a {LIMIT}-byte limit"
    );
}

#[test]
fn inside_multi_a_deny_oom_command_is_refused_and_exec_aborts_as_redis() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    // Refused while queuing: EXEC aborts for the earlier error; reads still queue and run.
    wire.expect(
        b"SET a 1\r\nCONFIG SET maxmemory 1\r\nMULTI\r\nGET a\r\nSET b 2\r\nEXEC\r\n\
          MULTI\r\nGET a\r\nEXEC\r\nCONFIG SET maxmemory 0\r\n",
        b"+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n\
          -OOM command not allowed when used memory > 'maxmemory'.\r\n\
          -EXECABORT Transaction discarded because of previous errors.\r\n\
          +OK\r\n+QUEUED\r\n*1\r\n$1\r\n1\r\n+OK\r\n",
    );
    // Over the limit only when EXEC comes: the transaction is discarded whole (its watches
    // with it), and the connection is out of MULTI.
    wire.expect(
        b"WATCH w\r\nMULTI\r\nSET c 3\r\nGET c\r\n",
        b"+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n",
    );
    let mut other = Wire::connect(&server);
    other.expect(b"CONFIG SET maxmemory 1\r\n", b"+OK\r\n");
    wire.expect(
        b"EXEC\r\nEXEC\r\nGET c\r\nMULTI\r\nGET x\r\nEXEC\r\n",
        b"-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n\
          -ERR EXEC without MULTI\r\n$-1\r\n+OK\r\n+QUEUED\r\n*1\r\n$-1\r\n",
    );
    assert_eq!(
        info_field(&mut wire, "clients", "total_watched_keys"),
        "0",
        "EXEC's abort dropped the watches"
    );
    other.expect(b"CONFIG SET maxmemory 0\r\n", b"+OK\r\n");
}

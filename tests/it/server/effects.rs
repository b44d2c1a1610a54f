//! One write path: an append made in process (the engine's typed write, the feed's embedded
//! backend) on a keyspace a server serves has every effect an XADD over RESP has: a reader
//! blocked on the key is woken, the `xadd` event fires, and the append is in the AOF.

use echomq::engine::{AddId, StreamId};
use echomq::feed::{Backend, Embedded};
use echomq::testing::TestServer;

use super::{Wire, wait_blocked_clients};

/// A server on `dir` with `appendonly yes` and `appendfsync always`, its AOF loaded.
fn serve_aof(dir: &std::path::Path) -> TestServer {
    let server = TestServer::start().unwrap();
    let handle = server.handle();
    handle.config_set("dir", dir.to_str().unwrap()).unwrap();
    handle.config_set("appendfsync", "always").unwrap();
    handle.config_set("appendonly", "yes").unwrap();
    handle.start_persistence().unwrap();
    server
}

#[test]
fn a_typed_xadd_wakes_a_reader_blocked_over_resp() {
    let server = TestServer::start().unwrap();
    let mut observer = Wire::connect(&server);
    let mut reader = Wire::connect(&server);
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n");
    wait_blocked_clients(&mut observer, 1);
    let id = server
        .keyspace()
        .run(|db, snapshot| {
            db.xadd(
                b"s",
                AddId::Explicit(StreamId { ms: 1, seq: 1 }),
                &[b"f".as_slice(), b"v"],
                snapshot,
            )
        })
        .unwrap();
    assert_eq!(id, StreamId { ms: 1, seq: 1 });
    reader.expect_replies(
        b"XREAD BLOCK 0 STREAMS s $",
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
}

#[test]
fn an_embedded_feed_append_fires_xadd_and_is_in_the_aof_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve_aof(dir.path());
    let mut subscriber = Wire::connect(&server);
    let mut client = Wire::connect(&server);
    client.expect(b"CONFIG SET notify-keyspace-events Et\r\n", b"+OK\r\n");
    subscriber.expect(
        b"SUBSCRIBE __keyevent@0__:xadd\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$19\r\n__keyevent@0__:xadd\r\n:1\r\n",
    );
    let backend = Embedded::new(server.keyspace().clone());
    let id = StreamId { ms: 5, seq: 1 };
    assert_eq!(
        backend.add("feed", id, &[b"f".as_slice(), b"v"]).unwrap(),
        id
    );
    subscriber.expect_replies(
        b"(the xadd event)",
        b"*3\r\n$7\r\nmessage\r\n$19\r\n__keyevent@0__:xadd\r\n$4\r\nfeed\r\n",
    );
    // A write over RESP replies once everything propagated before it is written (fsync
    // always), the embedded append included.
    client.expect(b"XADD other 1-1 a b\r\n", b"$3\r\n1-1\r\n");
    drop(subscriber);
    drop(client);
    drop(server);

    let server = serve_aof(dir.path());
    let mut client = Wire::connect(&server);
    client.expect(
        b"XRANGE feed - +\r\n",
        b"*1\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
}

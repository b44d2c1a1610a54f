//! The Redis backend's timeouts: a server that accepts and never answers, or answers the
//! client's handshake and then goes silent, fails feed calls with a timeout error instead of
//! hanging them; a blocking read is given its BLOCK time on top of the reply timeout.
//!
//! Timeouts are a few hundred milliseconds so each test takes well under a second. Elapsed
//! times are only checked from below (a timeout never fires early), never from above.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use echomq::feed::backend::{Block, GroupBackend, GroupStart, Interrupt, ReadFrom};
use echomq::feed::{Backend, Feed, FeedError, RedisBackend};
use echomq::testing::{TestServer, TestServerOptions};

const CONNECT: Duration = Duration::from_millis(200);
const REPLY: Duration = Duration::from_millis(200);
/// How often a fake connection's thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// A TCP listener on an ephemeral port that accepts every connection and never answers a
/// command, except, when `handshake` is set, the client's `CLIENT SETINFO` handshake with
/// `+OK`. Its threads stop when it is dropped.
struct Silent {
    addr: String,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Silent {
    fn start(handshake: bool) -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (accepted, stop) = (accepted.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut connections = Vec::new();
                for socket in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(socket) = socket else { continue };
                    accepted.fetch_add(1, Ordering::SeqCst);
                    let stop = stop.clone();
                    connections.push(std::thread::spawn(move || serve(socket, handshake, &stop)));
                }
                for connection in connections {
                    let _ = connection.join();
                }
            })
        };
        Silent {
            addr,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(&self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One RESP array of bulk strings, or `None` at end of input or on a read timeout.
fn read_command(reader: &mut BufReader<TcpStream>) -> Option<Vec<Vec<u8>>> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut argv = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut arg = vec![0; len + 2];
        reader.read_exact(&mut arg).ok()?;
        arg.truncate(len);
        argv.push(arg);
    }
    Some(argv)
}

/// Answers the handshake (if asked to), then holds the connection open without a word until
/// the client closes it or the listener stops.
fn serve(socket: TcpStream, handshake: bool, stop: &AtomicBool) {
    let _ = socket.set_read_timeout(Some(POLL));
    let mut writer = socket.try_clone().unwrap();
    let mut reader = BufReader::new(socket);
    let mut answering = handshake;
    while !stop.load(Ordering::SeqCst) {
        if answering {
            match reader.fill_buf() {
                Ok([]) => return,
                Ok(_) => {}
                // The poll interval ran out: look at the flag again.
                Err(_) => continue,
            }
            match read_command(&mut reader) {
                Some(argv)
                    if argv
                        .first()
                        .is_some_and(|a| a.eq_ignore_ascii_case(b"CLIENT")) =>
                {
                    let _ = writer.write_all(b"+OK\r\n");
                }
                // The first real command: from now on, silence.
                Some(_) => answering = false,
                None => {}
            }
        } else {
            let mut buf = [0u8; 4096];
            if let Ok(0) = reader.read(&mut buf) {
                return;
            }
        }
    }
}

#[test]
fn connecting_to_a_server_that_never_answers_times_out() {
    let silent = Silent::start(false);
    let started = Instant::now();
    let Err(e) = RedisBackend::connect_with(&silent.url(), CONNECT, REPLY) else {
        panic!("connected to a server that never answers");
    };
    assert!(started.elapsed() >= CONNECT, "gave up early");
    assert!(e.is_timeout(), "{e}");
    let FeedError::ConnectTimeout { server, after_ms } = &e else {
        panic!("not a connect timeout: {e:?}");
    };
    assert_eq!(*after_ms, 200);
    assert_eq!(server, &silent.addr);
    assert!(e.to_string().contains(&silent.addr), "{e}");
}

#[test]
fn a_feed_call_to_a_server_that_stops_answering_times_out_then_reconnects() {
    let silent = Silent::start(true);
    let backend = RedisBackend::connect_with(&silent.url(), CONNECT, REPLY).unwrap();
    assert_eq!(silent.accepted.load(Ordering::SeqCst), 1);
    let feed = Feed::new(backend);
    let started = Instant::now();
    let e = feed
        .append("q", "events", &[("kind", "guess")])
        .unwrap_err();
    assert!(started.elapsed() >= REPLY, "gave up early");
    assert!(
        matches!(&e, FeedError::ReplyTimeout { server, after_ms: 200 } if *server == silent.addr),
        "{e:?}"
    );
    assert!(e.to_string().contains("may or may not have run"), "{e}");
    // The timed-out connection is dropped, never reused for the next command's reply.
    let e = feed.backend().meta("emq:{q}:stream:events").unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert_eq!(silent.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn a_blocking_read_waits_its_block_time_plus_the_reply_timeout() {
    let silent = Silent::start(true);
    let backend = RedisBackend::connect_with(&silent.url(), CONNECT, REPLY).unwrap();
    let interrupt = Interrupt::new();
    let block = Block {
        ms: 300,
        interrupt: &interrupt,
    };
    let started = Instant::now();
    let e = backend
        .read_group("k", "g", "c", ReadFrom::New, 10, Some(block))
        .unwrap_err();
    // 300 ms of BLOCK, then 200 ms for the reply.
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "gave up early"
    );
    assert!(
        matches!(e, FeedError::ReplyTimeout { after_ms: 500, .. }),
        "{e:?}"
    );
}

#[test]
fn a_blocking_read_longer_than_the_reply_timeout_returns_normally() {
    // The wall clock, so that the server's BLOCK runs out by itself.
    let server = TestServer::start_with(TestServerOptions {
        system_clock: true,
        ..TestServerOptions::default()
    })
    .unwrap();
    let reply = Duration::from_millis(100);
    let backend = RedisBackend::connect_with(&server.url(), CONNECT, reply).unwrap();
    assert!(backend.create_group("k", "g", GroupStart::End).unwrap());
    let interrupt = Interrupt::new();
    let block = Block {
        ms: 400,
        interrupt: &interrupt,
    };
    let started = Instant::now();
    let entries = backend
        .read_group("k", "g", "c", ReadFrom::New, 10, Some(block))
        .unwrap();
    assert!(entries.is_empty());
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "did not block"
    );
    // The same connection still serves ordinary commands.
    assert_eq!(backend.pending_count("k", "g", "c").unwrap(), 0);
}

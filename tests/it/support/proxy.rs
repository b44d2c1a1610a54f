//! A fault-injecting TCP proxy on loopback: it forwards bytes both ways between a client and a
//! server, and breaks the connection around chosen XADDs, at random from a seed.
//!
//! A client chunk (one `read` of what the client wrote) that holds `XADD` is, with probability
//! `1 / one_in`, a fault of one of three kinds, chosen evenly:
//! - [`Fault::Before`]: the chunk is not forwarded, both connections are closed (the command
//!   never ran);
//! - [`Fault::After`]: the chunk is forwarded, the server's reply is read and thrown away, then
//!   both connections are closed (the command ran, its reply is lost);
//! - [`Fault::Racing`]: the chunk is forwarded and both connections are closed at once (the
//!   command may or may not run, possibly after the client already reconnected).
//!
//! One thread accepts, two per connection copy; all stop when the proxy is dropped. The
//! client reconnects through the proxy, which accepts any number of connections.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What a fault did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Before,
    After,
    Racing,
}

/// How many faults of each kind, and how many XADD chunks passed untouched.
#[derive(Debug, Default)]
pub struct Counts {
    pub before: AtomicUsize,
    pub after: AtomicUsize,
    pub racing: AtomicUsize,
    pub passed: AtomicUsize,
}

/// A small seeded generator (xorshift64*): the same seed gives the same faults per chunk order.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The running proxy.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
    accept: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// Listens on an ephemeral loopback port and forwards to `upstream`.
    pub fn start(upstream: SocketAddr, seed: u64, one_in: u64) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let rng = Arc::new(Mutex::new(Rng(seed | 1)));
        let accept = {
            let (stop, counts) = (Arc::clone(&stop), Arc::clone(&counts));
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    let Ok(server) = TcpStream::connect(upstream) else {
                        continue;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    connection(client, server, &rng, &counts, one_in);
                }
            })
        };
        FaultProxy {
            addr,
            stop,
            counts,
            accept: Some(accept),
        }
    }

    /// `redis://` URL of the proxy.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// The faults so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn close(a: &TcpStream, b: &TcpStream) {
    let _ = a.shutdown(Shutdown::Both);
    let _ = b.shutdown(Shutdown::Both);
}

fn has_xadd(chunk: &[u8]) -> bool {
    chunk.windows(4).any(|w| w.eq_ignore_ascii_case(b"XADD"))
}

/// Starts the two copying threads of one proxied connection.
fn connection(
    client: TcpStream,
    server: TcpStream,
    rng: &Arc<Mutex<Rng>>,
    counts: &Arc<Counts>,
    one_in: u64,
) {
    let swallow = Arc::new(AtomicBool::new(false));
    let (Ok(client_w), Ok(server_r)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    {
        // Server to client, unless a fault wants the reply thrown away.
        let swallow = Arc::clone(&swallow);
        let (mut from, mut to) = (server_r, client_w);
        std::thread::spawn(move || {
            let mut buf = vec![0; 64 * 1024];
            loop {
                let n = match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if swallow.load(Ordering::SeqCst) || to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            close(&from, &to);
        });
    }
    let (rng, counts) = (Arc::clone(rng), Arc::clone(counts));
    let (mut from, mut to) = (client, server);
    std::thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            let fault = has_xadd(chunk).then(|| {
                let mut rng = rng.lock().expect("the proxy's rng");
                (rng.next() % one_in == 0).then(|| match rng.next() % 3 {
                    0 => Fault::Before,
                    1 => Fault::After,
                    _ => Fault::Racing,
                })
            });
            match fault.flatten() {
                None => {
                    if fault.is_some() {
                        counts.passed.fetch_add(1, Ordering::SeqCst);
                    }
                    if to.write_all(chunk).is_err() {
                        break;
                    }
                }
                Some(Fault::Before) => {
                    counts.before.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                Some(Fault::After) => {
                    counts.after.fetch_add(1, Ordering::SeqCst);
                    // The reply thread closes both once the reply starts to arrive.
                    swallow.store(true, Ordering::SeqCst);
                    let _ = to.write_all(chunk);
                    return;
                }
                Some(Fault::Racing) => {
                    counts.racing.fetch_add(1, Ordering::SeqCst);
                    let _ = to.write_all(chunk);
                    break;
                }
            }
        }
        close(&from, &to);
    });
}

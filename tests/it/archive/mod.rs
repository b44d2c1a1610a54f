//! The archive through the server and the feed: XTRIM and XADD-with-trim fold before they
//! trim, EMQ.XRANGE / EMQ.XREVRANGE equal XRANGE on a log that was never trimmed (an untrimmed
//! copy, and a real Redis stream), INFO's archive section, `echomq serve --archive`, the feed
//! over a remote server, the crash test, and a replicated archive behind the server (the
//! replicator woken by folds, INFO's `archive_replica_*` fields, fencing).

mod crash;
mod replicated;
mod server;

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::resp::{Resp, write_command};

/// A plain RESP2 client.
pub(crate) struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    pub(crate) fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Client {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    pub(crate) fn call<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Resp {
        let mut bytes = Vec::new();
        write_command(&mut bytes, argv).unwrap();
        self.writer.write_all(&bytes).unwrap();
        let mut raw = Vec::new();
        Resp::read(&mut self.reader, &mut raw).unwrap()
    }
}

/// A small deterministic generator (tests must replay the same way every run).
pub(crate) struct Lcg(pub u64);

impl Lcg {
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

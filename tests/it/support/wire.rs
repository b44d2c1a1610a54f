//! The differential harness over the wire: a real server and echomq's own server
//! ([`TestServer`], in-process, manual clock) receive the same bytes on a connection each, and
//! must answer with the same bytes.
//!
//! Commands go out one at a time ([`WireDiffer::run`]), or as a pipeline written in one go and
//! read back reply by reply ([`WireDiffer::pipeline`]), which a `MULTI ... EXEC` batch is too
//! ([`WireDiffer::transaction`]). Replies are compared byte for byte, except the time fields
//! [`normalize`](super::normalize) lists (inside EXEC, by the command queued at each position).
//!
//! [`WireDiffer::reset`] opens fresh connections, empties both servers, restores the node
//! limits, and with RESP3 sends `HELLO 3` to both. HELLO's own reply is not compared: it names
//! the server, its version and the connection id, which differ by design. It is checked to be
//! a map with `proto` 3 on both sides.

use std::collections::BTreeSet;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use echomq::testing::TestServer;

use super::differ::{Mismatch, indent, show_raw};
use super::normalize;
use super::peer::{Peer, PeerInfo, PeerKind};
use super::resp::{Resp, show_argv, write_command};

/// A reply slower than this means a server hung.
const REPLY_TIMEOUT: Duration = Duration::from_secs(20);
/// History lines shown in a mismatch report (the most recent ones).
const HISTORY_SHOWN_MAX: usize = 300;

/// Replies, each with its raw bytes.
type Replies = Vec<(Resp, Vec<u8>)>;

/// One client connection, reading replies with their raw bytes.
#[derive(Debug)]
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(REPLY_TIMEOUT))?;
        Ok(Conn {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
        })
    }

    /// Writes every command in one write (a pipeline).
    fn send(&mut self, batch: &[Vec<Vec<u8>>]) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        for argv in batch {
            write_command(&mut bytes, argv)?;
        }
        self.writer.write_all(&bytes)?;
        self.writer.flush()
    }

    fn read(&mut self) -> std::io::Result<(Resp, Vec<u8>)> {
        let mut raw = Vec::new();
        let reply = Resp::read(&mut self.reader, &mut raw)?;
        Ok((reply, raw))
    }
}

/// A real server and echomq's server, driven in lockstep over the wire.
#[derive(Debug)]
pub struct WireDiffer {
    peer: Peer,
    ours: TestServer,
    theirs_conn: Conn,
    ours_conn: Conn,
    /// 2 or 3, as set by the last reset.
    protocol: u8,
    /// What was sent since the last reset, one line per command (batches marked).
    history: Vec<String>,
    /// Whether to mask entries-read and lag after a taint, as [`Differ`] does.
    ///
    /// [`Differ`]: super::differ::Differ
    lag_masking: bool,
    /// Keys whose lag is masked.
    lag_masked: BTreeSet<Vec<u8>>,
}

impl WireDiffer {
    /// Starts a server of `kind` and echomq's server; `None` if the former is not installed
    /// (see [`Peer::start`]).
    pub fn start(kind: PeerKind) -> Option<WireDiffer> {
        let peer = Peer::start(kind)?;
        let ours = TestServer::start().expect("echomq's test server starts");
        let theirs_conn = Conn::open(peer.addr()).expect("connect to the peer");
        let ours_conn = Conn::open(ours.addr()).expect("connect to echomq");
        let mut differ = WireDiffer {
            peer,
            ours,
            theirs_conn,
            ours_conn,
            protocol: 2,
            history: Vec::new(),
            lag_masking: false,
            lag_masked: BTreeSet::new(),
        };
        differ.reset(2).expect("the first reset");
        Some(differ)
    }

    /// The real server's kind and version.
    pub fn info(&self) -> PeerInfo {
        self.peer.info()
    }

    /// echomq's server (its keyspace is what random sequences render against).
    pub fn ours(&self) -> &TestServer {
        &self.ours
    }

    /// Fresh connections speaking `protocol` (2 or 3), both servers emptied, default node
    /// limits.
    pub fn reset(&mut self, protocol: u8) -> Result<(), Mismatch> {
        if !self.peer.is_running() {
            let kind = self.info().kind;
            self.peer = Peer::start(kind).unwrap_or_else(|| panic!("{kind} vanished"));
        }
        self.history.clear();
        self.lag_masked.clear();
        self.protocol = 2;
        self.theirs_conn = Conn::open(self.peer.addr()).map_err(|e| self.io_failed("peer", &e))?;
        self.ours_conn = Conn::open(self.ours.addr()).map_err(|e| self.io_failed("echomq", &e))?;
        for argv in [
            &["FLUSHALL"][..],
            &["CONFIG", "SET", "stream-node-max-entries", "100"],
            &["CONFIG", "SET", "stream-node-max-bytes", "4096"],
        ] {
            let (theirs, ours) = self.exchange(&[words(argv)])?;
            let ok = Resp::Simple("OK".into());
            if theirs[0].0 != ok || ours[0].0 != ok {
                return Err(self.report(&format!(
                    "reset step `{}` failed: {} / echomq: {}",
                    argv.join(" "),
                    theirs[0].0,
                    ours[0].0
                )));
            }
        }
        if protocol == 3 {
            let (theirs, ours) = self.exchange(&[words(&["HELLO", "3"])])?;
            for (side, reply) in [("peer", &theirs[0].0), ("echomq", &ours[0].0)] {
                let proto = match reply {
                    Resp::Map(pairs) => pairs
                        .iter()
                        .find(|(k, _)| k.as_text() == Some("proto"))
                        .map(|(_, v)| v.clone()),
                    _ => None,
                };
                if proto != Some(Resp::Int(3)) {
                    return Err(self.report(&format!("{side}: HELLO 3 answered {reply}")));
                }
            }
            self.protocol = 3;
        }
        self.history.clear();
        Ok(())
    }

    /// Masks entries-read and lag of keys after a command that takes them where a peer without
    /// the 8.0 lag rules differs, as `Differ::mask_lag_after_taint` does.
    pub fn mask_lag_after_taint(&mut self) {
        self.lag_masking = true;
    }

    fn note_taint(&mut self, argv: &[Vec<u8>]) {
        if self.lag_masking
            && let Some(key) = normalize::taints_lag(argv)
        {
            self.lag_masked.insert(key.to_vec());
        }
    }

    /// Runs `commands` in order after a reset to RESP2, then again after a reset to RESP3;
    /// returns each protocol's first mismatch as text (empty when both matched throughout).
    pub fn run_in_both_protocols(&mut self, commands: &[Vec<Vec<u8>>]) -> Vec<String> {
        let mut failures = Vec::new();
        for protocol in [2, 3] {
            let outcome = self
                .reset(protocol)
                .and_then(|()| commands.iter().try_for_each(|c| self.run(c).map(drop)));
            if let Err(mismatch) = outcome {
                failures.push(mismatch.to_string());
            }
        }
        failures
    }

    /// Sends one command to both and compares the replies. Returns the real server's reply.
    pub fn run<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Result<Resp, Mismatch> {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_ref().to_vec()).collect();
        self.history.push(show_argv(&argv));
        self.note_taint(&argv);
        let (theirs, ours) = self.exchange(std::slice::from_ref(&argv))?;
        self.compare(&argv, &[], &theirs[0], &ours[0])?;
        Ok(theirs[0].0.clone())
    }

    /// Sends one command to both and returns both replies uncompared, the real server's
    /// first: for replies that differ by design (random art) and are compared by shape.
    pub fn run_uncompared<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Result<(Resp, Resp), Mismatch> {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_ref().to_vec()).collect();
        self.history.push(show_argv(&argv));
        let (mut theirs, mut ours) = self.exchange(std::slice::from_ref(&argv))?;
        Ok((theirs.remove(0).0, ours.remove(0).0))
    }

    /// Sends `theirs` to the real server and `ours` to echomq, uncompared: for requests that
    /// differ by design, such as a scan's next call with each server's own cursor.
    pub fn run_apart<A: AsRef<[u8]>>(
        &mut self,
        theirs: &[A],
        ours: &[A],
    ) -> Result<(Resp, Resp), Mismatch> {
        let owned =
            |argv: &[A]| -> Vec<Vec<u8>> { argv.iter().map(|a| a.as_ref().to_vec()).collect() };
        let (theirs, ours) = (owned(theirs), owned(ours));
        self.history
            .push(format!("{} | {}", show_argv(&theirs), show_argv(&ours)));
        if let Err(e) = self.theirs_conn.send(std::slice::from_ref(&theirs)) {
            return Err(self.io_failed("peer", &e));
        }
        if let Err(e) = self.ours_conn.send(std::slice::from_ref(&ours)) {
            return Err(self.io_failed("echomq", &e));
        }
        let theirs = self
            .theirs_conn
            .read()
            .map_err(|e| self.io_failed("peer", &e))?;
        let ours = self
            .ours_conn
            .read()
            .map_err(|e| self.io_failed("echomq", &e))?;
        Ok((theirs.0, ours.0))
    }

    /// Sends the commands as one pipeline to both, then compares the replies one by one.
    /// Inside the batch, an EXEC's elements are normalized by the commands queued since the
    /// MULTI before it.
    pub fn pipeline(&mut self, batch: &[Vec<Vec<u8>>]) -> Result<(), Mismatch> {
        for (i, argv) in batch.iter().enumerate() {
            let mark = if i == 0 { "pipeline [" } else { "         " };
            self.history.push(format!("{mark} {}", show_argv(argv)));
        }
        if let Some(last) = self.history.last_mut() {
            last.push_str(" ]");
        }
        for argv in batch {
            self.note_taint(argv);
        }
        let (theirs, ours) = self.exchange(batch)?;
        let mut queued: Option<Vec<Vec<Vec<u8>>>> = None;
        for (i, argv) in batch.iter().enumerate() {
            let name = argv[0].to_ascii_lowercase();
            let in_exec = match name.as_slice() {
                b"exec" => queued.take().unwrap_or_default(),
                _ => Vec::new(),
            };
            self.compare(argv, &in_exec, &theirs[i], &ours[i])
                .map_err(|m| Mismatch::new(format!("reply {} of the pipeline: {m}", i + 1)))?;
            match name.as_slice() {
                b"multi" => queued = Some(Vec::new()),
                b"discard" => queued = None,
                _ => {
                    if let Some(queued) = queued.as_mut()
                        && name != b"exec"
                    {
                        queued.push(argv.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// `MULTI`, the commands, `EXEC`, as one pipeline.
    pub fn transaction(&mut self, commands: &[Vec<Vec<u8>>]) -> Result<(), Mismatch> {
        let mut batch = vec![words(&["MULTI"])];
        batch.extend(commands.iter().cloned());
        batch.push(words(&["EXEC"]));
        self.pipeline(&batch)
    }

    /// Writes a batch to both servers, then reads as many replies from each.
    fn exchange(&mut self, batch: &[Vec<Vec<u8>>]) -> Result<(Replies, Replies), Mismatch> {
        if let Err(e) = self.theirs_conn.send(batch) {
            return Err(self.io_failed("peer", &e));
        }
        if let Err(e) = self.ours_conn.send(batch) {
            return Err(self.io_failed("echomq", &e));
        }
        let mut theirs = Vec::with_capacity(batch.len());
        let mut ours = Vec::with_capacity(batch.len());
        for _ in batch {
            match self.theirs_conn.read() {
                Ok(reply) => theirs.push(reply),
                Err(e) => return Err(self.io_failed("peer", &e)),
            }
            match self.ours_conn.read() {
                Ok(reply) => ours.push(reply),
                Err(e) => return Err(self.io_failed("echomq", &e)),
            }
        }
        Ok((theirs, ours))
    }

    fn compare(
        &self,
        argv: &[Vec<u8>],
        queued: &[Vec<Vec<u8>>],
        (theirs, theirs_raw): &(Resp, Vec<u8>),
        (ours, ours_raw): &(Resp, Vec<u8>),
    ) -> Result<(), Mismatch> {
        let masked = |key: &[u8]| self.lag_masked.contains(key);
        let lacks_idmp = super::differ::lacks_idmp(&self.info());
        let one = |argv: &[Vec<u8>], reply: &mut Resp| {
            let idmp = lacks_idmp && normalize::drop_idmp_fields(argv, reply);
            normalize::times(argv, reply) | normalize::lag(argv, reply, masked) | idmp
        };
        // Fields only newer servers have are aligned first, inside an EXEC per queued command.
        let (mut t, mut o) = (theirs.clone(), ours.clone());
        let aligned = match (argv[0].eq_ignore_ascii_case(b"exec"), &mut t, &mut o) {
            (true, Resp::Array(ts), Resp::Array(os)) => queued
                .iter()
                .zip(ts.iter_mut().zip(os.iter_mut()))
                .map(|(q, (te, oe))| normalize::align_newer_fields(q, te, oe))
                .fold(false, |a, b| a | b),
            (true, _, _) => false,
            (false, t, o) => normalize::align_newer_fields(argv, t, o),
        };
        let (t_raw, o_raw) = if aligned {
            (t.to_bytes(), o.to_bytes())
        } else {
            (theirs_raw.clone(), ours_raw.clone())
        };
        let same = normalize::same(
            |reply| match (argv[0].eq_ignore_ascii_case(b"exec"), reply) {
                (true, Resp::Array(replies)) => queued
                    .iter()
                    .zip(replies.iter_mut())
                    .map(|(argv, reply)| one(argv, reply))
                    .fold(false, |a, b| a | b),
                (true, _) => false,
                (false, reply) => one(argv, reply),
            },
            (&t, &t_raw),
            (&o, &o_raw),
        );
        if same {
            return Ok(());
        }
        Err(self.report(&format!(
            "replies to `{argv}` differ\n  {peer}: {theirs}\n  echomq: {ours}\n  {peer} bytes: {theirs_raw}\n  echomq bytes: {ours_raw}",
            argv = show_argv(argv),
            peer = self.info(),
            theirs = indent(&theirs.to_string()),
            ours = indent(&ours.to_string()),
            theirs_raw = show_raw(theirs_raw),
            ours_raw = show_raw(ours_raw),
        )))
    }

    fn io_failed(&mut self, side: &str, error: &std::io::Error) -> Mismatch {
        let state = if self.peer.is_running() {
            "running"
        } else {
            "exited"
        };
        self.report(&format!(
            "I/O error talking to {side}: {error} (the peer is {state})\npeer output (tail):\n{}",
            self.peer.log_tail()
        ))
    }

    fn report(&self, what: &str) -> Mismatch {
        let mut text = format!(
            "echomq server vs {} over RESP{}: {what}\n",
            self.info(),
            self.protocol
        );
        let skipped = self.history.len().saturating_sub(HISTORY_SHOWN_MAX);
        text.push_str(&format!(
            "sent since the reset ({} lines{}):\n",
            self.history.len(),
            if skipped > 0 {
                format!(", first {skipped} not shown")
            } else {
                String::new()
            }
        ));
        for (i, line) in self.history.iter().enumerate().skip(skipped) {
            text.push_str(&format!("  {:>4}  {line}\n", i + 1));
        }
        Mismatch::new(text)
    }
}

/// Words as an argument vector.
/// A command line's arguments: split on spaces, `''` standing for an empty argument.
pub fn line_words(line: &str) -> Vec<Vec<u8>> {
    let parts: Vec<&str> = line
        .split(' ')
        .map(|w| if w == "''" { "" } else { w })
        .collect();
    words(&parts)
}

pub fn words(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

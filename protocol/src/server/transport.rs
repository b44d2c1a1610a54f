//! The byte streams a connection runs over: plain TCP, TLS over TCP, and a unix socket.
//!
//! The connection loop is generic over [`Transport`], so each kind gets its own compiled loop
//! and the plain TCP path stays what it was: owned halves, and [`WriteHalf::try_write_now`]
//! writing straight to the socket before building a wait. A TLS write is polled once instead
//! (rustls takes the bytes into its buffer and sends what the socket takes), and its writer is
//! flushed after each reply batch ([`WriteHalf::BUFFERED`]).

use futures_util::FutureExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream, tcp, unix};
use tokio_rustls::server::TlsStream;

/// A connected stream the server serves a client over.
pub(crate) trait Transport: tokio::io::AsyncWrite + Unpin + Send + 'static {
    /// The read half.
    type Reader: AsyncRead + Unpin + Send;
    /// The write half.
    type Writer: WriteHalf;
    /// Splits the stream into halves the loop reads and writes independently.
    fn split(self) -> (Self::Reader, Self::Writer);
}

/// The write half of a [`Transport`].
pub(crate) trait WriteHalf: AsyncWrite + Unpin + Send {
    /// Whether written bytes may wait in a buffer until flushed (TLS records).
    const BUFFERED: bool;

    /// One write without waiting: `Some(bytes written)` (at least one), or `None` when the
    /// stream takes nothing now (or cannot tell without waiting).
    fn try_write_now(&mut self, bytes: &[u8]) -> std::io::Result<Option<usize>>;
}

/// `try_write` of a socket half as [`WriteHalf::try_write_now`] answers.
fn nonblocking(written: std::io::Result<usize>) -> std::io::Result<Option<usize>> {
    match written {
        Ok(0) => Err(std::io::ErrorKind::WriteZero.into()),
        Ok(wrote) => Ok(Some(wrote)),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

impl Transport for TcpStream {
    type Reader = tcp::OwnedReadHalf;
    type Writer = tcp::OwnedWriteHalf;
    fn split(self) -> (Self::Reader, Self::Writer) {
        self.into_split()
    }
}

impl WriteHalf for tcp::OwnedWriteHalf {
    const BUFFERED: bool = false;
    fn try_write_now(&mut self, bytes: &[u8]) -> std::io::Result<Option<usize>> {
        nonblocking(self.try_write(bytes))
    }
}

impl Transport for UnixStream {
    type Reader = unix::OwnedReadHalf;
    type Writer = unix::OwnedWriteHalf;
    fn split(self) -> (Self::Reader, Self::Writer) {
        self.into_split()
    }
}

impl WriteHalf for unix::OwnedWriteHalf {
    const BUFFERED: bool = false;
    fn try_write_now(&mut self, bytes: &[u8]) -> std::io::Result<Option<usize>> {
        nonblocking(self.try_write(bytes))
    }
}

impl Transport for TlsStream<TcpStream> {
    type Reader = tokio::io::ReadHalf<TlsStream<TcpStream>>;
    type Writer = tokio::io::WriteHalf<TlsStream<TcpStream>>;
    fn split(self) -> (Self::Reader, Self::Writer) {
        tokio::io::split(self)
    }
}

impl WriteHalf for tokio::io::WriteHalf<TlsStream<TcpStream>> {
    const BUFFERED: bool = true;
    /// One poll of the write (a Pending one leaves nothing behind: the caller's wait polls it
    /// again with its own waker).
    fn try_write_now(&mut self, bytes: &[u8]) -> std::io::Result<Option<usize>> {
        match tokio::io::AsyncWriteExt::write(self, bytes).now_or_never() {
            Some(written) => nonblocking(written),
            None => Ok(None),
        }
    }
}

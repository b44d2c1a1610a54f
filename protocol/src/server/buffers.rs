//! A connection's query and reply buffers, given back once they outgrow their use, as Redis's
//! `clientsCronResizeQueryBuffer` and `clientsCronResizeOutputBuffer` do.
//!
//! A buffer grows to hold the largest request read or reply written and, left alone, would
//! keep that size until the client disconnects: a client that once sent a 50 MB value would
//! hold 50 MB for good. Only a buffer over [`RESIZE_THRESHOLD`] is ever resized, so a
//! connection at its usual size pays a comparison per batch for this and nothing else:
//! - a client idle for [`IDLE_TRIM`] gets fresh buffers of [`BUFFER_BYTES`] (what its query
//!   buffer holds of an unfinished request is kept);
//! - a busy client's empty buffer is cut to the most it held during the last
//!   [`PEAK_PERIOD`] (at least [`BUFFER_BYTES`]) when that is under half its size.

use std::time::{Duration, Instant};

use bytes::BytesMut;

/// A buffer's usual size (Redis's `PROTO_IOBUF_LEN` and `PROTO_REPLY_CHUNK_BYTES`).
pub(super) const BUFFER_BYTES: usize = 16 * 1024;
/// Buffers this large or smaller are never resized (Redis's `PROTO_RESIZE_THRESHOLD`).
const RESIZE_THRESHOLD: usize = 32 * 1024;
/// An idle client's oversized buffers are given back after this long (Redis: over 2 s idle).
pub(super) const IDLE_TRIM: Duration = Duration::from_secs(2);
/// How long a busy client's peaks are watched before its buffers are cut to them.
const PEAK_PERIOD: Duration = Duration::from_secs(1);

/// The peaks of a connection's buffers since they were last looked at.
#[derive(Debug, Default)]
pub(super) struct Trim {
    query_peak: usize,
    reply_peak: usize,
    /// When the peaks started being watched (`None`: no buffer is oversized).
    since: Option<Instant>,
}

impl Trim {
    /// Notes the query buffer's bytes after a read.
    pub(super) fn note_query(&mut self, len: usize) {
        self.query_peak = self.query_peak.max(len);
    }

    /// Notes the reply bytes about to be written.
    pub(super) fn note_reply(&mut self, len: usize) {
        self.reply_peak = self.reply_peak.max(len);
    }

    /// The most reply bytes held since the reply buffer was last looked at (CLIENT LIST's
    /// `rbp`).
    pub(super) fn reply_peak(&self) -> usize {
        self.reply_peak
    }

    /// Whether either buffer is over [`RESIZE_THRESHOLD`].
    pub(super) fn oversized(input: &BytesMut, output: &BytesMut) -> bool {
        input.capacity() > RESIZE_THRESHOLD || output.capacity() > RESIZE_THRESHOLD
    }

    /// A busy connection between batches: once a [`PEAK_PERIOD`] has passed since its peaks
    /// were last looked at, cuts each empty oversized buffer that held under half its size to
    /// that peak. Reads the clock only when a buffer is oversized.
    pub(super) fn on_busy(&mut self, input: &mut BytesMut, output: &mut BytesMut) {
        if !Trim::oversized(input, output) {
            self.since = None;
            return;
        }
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        if now.duration_since(since) < PEAK_PERIOD {
            return;
        }
        cut_to_peak(input, self.query_peak);
        cut_to_peak(output, self.reply_peak);
        self.query_peak = input.len();
        self.reply_peak = output.len();
        self.since = Some(now);
    }

    /// An idle connection: its buffers go back to [`BUFFER_BYTES`], keeping what the query
    /// buffer holds.
    pub(super) fn on_idle(&mut self, input: &mut BytesMut, output: &mut BytesMut) {
        for buffer in [input, output] {
            if buffer.capacity() > RESIZE_THRESHOLD {
                let mut fresh = BytesMut::with_capacity(BUFFER_BYTES.max(buffer.len()));
                fresh.extend_from_slice(buffer);
                *buffer = fresh;
            }
        }
        *self = Trim::default();
    }
}

/// Replaces an empty oversized `buffer` by a smaller one when it held under half its size.
fn cut_to_peak(buffer: &mut BytesMut, peak: usize) {
    let capacity = buffer.capacity();
    if buffer.is_empty() && capacity > RESIZE_THRESHOLD && peak < capacity / 2 {
        *buffer = BytesMut::with_capacity(peak.max(BUFFER_BYTES));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_connection_gets_usual_buffers_back_and_keeps_its_unread_bytes() {
        let mut trim = Trim::default();
        let mut input = BytesMut::with_capacity(1 << 20);
        input.extend_from_slice(b"*1\r\n$4\r\nPI");
        let mut output = BytesMut::with_capacity(1 << 20);
        assert!(Trim::oversized(&input, &output));
        trim.on_idle(&mut input, &mut output);
        assert_eq!(&input[..], b"*1\r\n$4\r\nPI");
        assert!(input.capacity() < RESIZE_THRESHOLD);
        assert!(output.capacity() < RESIZE_THRESHOLD);
        assert!(!Trim::oversized(&input, &output));
    }

    #[test]
    fn a_busy_connection_keeps_a_buffer_it_uses_and_loses_one_it_outgrew() {
        let mut trim = Trim::default();
        let mut input = BytesMut::with_capacity(1 << 20);
        let mut output = BytesMut::with_capacity(1 << 20);
        // The first look starts the period; nothing is cut before it ends.
        trim.note_query(900_000);
        trim.note_reply(1000);
        trim.on_busy(&mut input, &mut output);
        assert!(input.capacity() >= 1 << 20 && output.capacity() >= 1 << 20);
        trim.since = Some(Instant::now() - PEAK_PERIOD);
        trim.on_busy(&mut input, &mut output);
        // The query buffer held 900 KB of its 1 MB: kept. The reply buffer held 1 KB: cut.
        assert!(input.capacity() >= 1 << 20);
        assert!(output.capacity() < RESIZE_THRESHOLD);
        // The next period saw no query at all: the query buffer is cut too.
        trim.since = Some(Instant::now() - PEAK_PERIOD);
        trim.on_busy(&mut input, &mut output);
        assert!(input.capacity() < RESIZE_THRESHOLD);
        // Nothing oversized: the clock is no longer watched.
        trim.on_busy(&mut input, &mut output);
        assert!(trim.since.is_none());
    }

    #[test]
    fn a_buffer_holding_bytes_is_not_cut_while_busy() {
        let mut input = BytesMut::with_capacity(1 << 20);
        input.extend_from_slice(b"partial");
        cut_to_peak(&mut input, 0);
        assert!(input.capacity() >= 1 << 20);
    }
}

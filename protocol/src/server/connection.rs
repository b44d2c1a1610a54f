//! One client connection: read, decode every complete request, run it, write the replies.
//!
//! Requests that arrive together (pipelining) are all run ([`pipeline::run_ready`], under one
//! acquisition of the keyspace lock) before the replies go out in one write; replies are
//! flushed early once [`pipeline::OUTPUT_FLUSH_BYTES`] pile up, so a client that sends much
//! and reads slowly is held back by TCP instead of growing our memory. A blocked
//! XREAD/XREADGROUP waits for its engine wake-up, its deadline, the socket closing, or CLIENT
//! KILL; requests arriving meanwhile wait their turn, as in Redis. A malformed request gets
//! Redis's protocol error and closes only this connection.
//!
//! A subscriber's messages wait in its mailbox (`state::pubsub`): the loop writes them when
//! woken for them (after yielding once, so that every task ready to run — publishers among
//! them — runs first and the write carries all their messages), and before each command it
//! runs, so a message published before a command ran reaches the client before that
//! command's reply, and one the command itself published to its own client after it, as in
//! Redis.
//!
//! The loop knows no command: it hands each request to the [`Execute`] function it was given
//! and acts on the [`Action`] that comes back.
//!
//! Before each wait for input the connection publishes what its buffers hold (CLIENT LIST's
//! memory fields, `maxmemory-clients`: `crate::state::client_memory`) and gives back buffers
//! it outgrew ([`buffers`](super::buffers)).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use echomq_engine::{BlockedHandle, Reply, Wake};
use futures_util::FutureExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use super::buffers::{BUFFER_BYTES, IDLE_TRIM, Trim};
use super::pipeline::{self, Scratch, Step};
use super::transport::{Transport, WriteHalf};
use crate::persist::aof::Commit;
use crate::resp::encode;
use crate::state::output_limit::{self, OutputGuard};
use crate::state::{ClientInfo, ClientState, Execute, ServerState};

/// Longest wait between deadline checks of a blocked command: the clock may be a manual one.
const BLOCK_POLL_MS_MAX: u64 = 100;

/// Wakes the connection task when its blocked command has a reply.
struct TaskWake(Notify);

impl Wake for TaskWake {
    fn wake(&self) {
        self.0.notify_one();
    }
}

/// Answers a non-loopback connection in protected mode with Redis's `-DENIED` and closes it.
pub(super) async fn deny(mut socket: impl AsyncWrite + Unpin) {
    let _ = socket.write_all(super::protected::DENIED.as_bytes()).await;
    let _ = socket.shutdown().await;
}

/// Writes `output` to `writer`, watching the client's `client-output-buffer-limit` while
/// bytes stay unwritten: a client over its limit is dropped (an error ends the connection).
async fn write_out<W: WriteHalf>(
    writer: &mut W,
    output: &[u8],
    state: &ServerState,
    client: &ClientState,
    guard: &mut OutputGuard,
) -> std::io::Result<()> {
    let mut written = 0;
    let mut waited = false;
    let subscriber = &client.info.pubsub;
    loop {
        // A subscribed client is in Redis's `pubsub` class; its mailbox counts too.
        let limit = state.output_limit(subscriber.is_subscribed());
        // Only a subscriber or a MONITOR has a mailbox to count (and its lock to take).
        let mailbox = if subscriber.expects_mail() {
            subscriber.waiting()
        } else {
            0
        };
        let pending = output_limit::counted(output.len() - written + mailbox);
        if let Err(overrun) = guard.check(pending, &limit, !client.authenticated) {
            output_limit::log_drop(&state.client_line(&client.info), overrun);
            state.stats().output_limit_disconnection();
            return Err(std::io::Error::other("over client-output-buffer-limit"));
        }
        if written == output.len() {
            if W::BUFFERED {
                // Usually done at once; else wait for the socket, or a kill.
                match writer.flush().now_or_never() {
                    Some(flushed) => flushed?,
                    None => tokio::select! {
                        biased;
                        () = client.info.killed() => {
                            return Err(std::io::Error::other("killed"));
                        }
                        flushed = writer.flush() => flushed?,
                    },
                }
            }
            subscriber.written();
            if waited {
                client.info.memory.note_pending(0);
                state.publish_client_memory(&client.info);
            }
            return Ok(());
        }
        let soft_deadline = async {
            match guard.soft_deadline(&limit) {
                Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                None => std::future::pending().await,
            }
        };
        // The socket usually takes everything at once: try that without building a wait.
        if let Some(wrote) = writer.try_write_now(&output[written..])? {
            written += wrote;
            continue;
        }
        // Waiting for the socket: the bytes it has not taken (and the messages waiting behind
        // them) show in CLIENT LIST and count towards `maxmemory-clients`.
        client
            .info
            .memory
            .note_pending(output.len() - written + mailbox);
        state.publish_client_memory(&client.info);
        waited = true;
        // A publisher drops a subscriber over its limit by killing it: stop writing then.
        let wrote = tokio::select! {
            biased;
            () = client.info.killed() => {
                return Err(std::io::Error::other("killed"));
            }
            wrote = writer.write(&output[written..]) => wrote?,
            () = soft_deadline => continue,
        };
        if wrote == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        written += wrote;
    }
}

/// Runs the commit pipeline (deferred archive trims, then the AOF write) and, with
/// `appendfsync always`, waits for the group fsync that covers it: the replies about to go out
/// may acknowledge only writes it holds. On failure the caller decides ([`Out::flush`]); a
/// failure under `always` stops the server.
async fn commit(state: &ServerState) -> std::io::Result<()> {
    // Under `everysec` and `no`, every connection ready to run feeds first: the first commit
    // then writes them all in one write (the others find nothing left), as Redis writes the
    // AOF once per event-loop turn.
    if state.aof().commit_would_write() {
        tokio::task::yield_now().await;
    }
    let commit = state.commit().map_err(|e| {
        state.stop_if_aof_fatal();
        std::io::Error::other(format!("commit failed: {e}"))
    })?;
    let waited = match commit {
        Commit::Done => return Ok(()),
        Commit::Bytes(target) => state.aof().wait_durable(target).await,
        // Let every connection ready to run feed first: one round then covers them all.
        Commit::Round(fed) => {
            tokio::task::yield_now().await;
            state.aof().wait_round(fed).await
        }
    };
    waited.map_err(|e| {
        state.stop_if_aof_fatal();
        std::io::Error::other(e)
    })
}

/// Answers a connection over `maxclients` and closes it.
pub(super) async fn refuse(mut socket: impl AsyncWrite + Unpin) {
    let _ = socket
        .write_all(b"-ERR max number of clients reached\r\n")
        .await;
    let _ = socket.shutdown().await;
}

/// Serves one client until it quits, is killed, errs, or the server stops.
pub(super) async fn serve<S: Transport>(
    socket: S,
    state: Arc<ServerState>,
    mut client: ClientState,
    execute: Execute,
) {
    if let Err(e) = run(socket, &state, &mut client, execute).await {
        tracing::debug!(client = client.info.id, error = %e, "connection ended");
    }
    state.disconnect(client);
}

async fn run<S: Transport>(
    socket: S,
    state: &ServerState,
    client: &mut ClientState,
    execute: Execute,
) -> std::io::Result<()> {
    let (mut reader, mut writer) = socket.split();
    let mut input = BytesMut::with_capacity(BUFFER_BYTES);
    let mut output = BytesMut::with_capacity(BUFFER_BYTES);
    let mut scratch = Scratch::default();
    let task_wake = Arc::new(TaskWake(Notify::new()));
    let waker: Arc<dyn Wake> = task_wake.clone();
    let mut out = Out {
        writer: &mut writer,
        guard: OutputGuard::default(),
        fed_before: state.aof().fed(),
        trim: Trim::default(),
    };
    loop {
        if output.is_empty() {
            out.fed_before = state.aof().fed();
        }
        let step = pipeline::run_ready(
            state,
            client,
            execute,
            &waker,
            &mut input,
            &mut output,
            &mut scratch,
        );
        match step {
            Step::NeedInput => {}
            Step::Flush => {
                out.flush(state, client, &mut output).await?;
                continue;
            }
            // CLIENT PAUSE: what came before goes out, then the request waits its turn.
            Step::Postpone(until) => {
                out.flush(state, client, &mut output).await?;
                let poll = until.min(Instant::now() + Duration::from_millis(BLOCK_POLL_MS_MAX));
                tokio::select! {
                    biased;
                    () = client.info.killed() => return Ok(()),
                    () = tokio::time::sleep_until(poll.into()) => {}
                }
                continue;
            }
            Step::Block(handle) => {
                out.flush(state, client, &mut output).await?;
                client.info.set_blocked(true);
                let waited = wait_blocked(
                    state,
                    &handle,
                    &task_wake,
                    &client.info,
                    &mut reader,
                    &mut input,
                )
                .await;
                client.info.set_blocked(false);
                let Some(result) = waited? else {
                    return Ok(());
                };
                let reply = result.unwrap_or_else(|e| Reply::Error(e.to_string()));
                if let Reply::Error(text) = &reply {
                    state.stats().record_error(text);
                }
                encode(&reply, client.protocol, &mut output);
                continue;
            }
            Step::Close => {
                out.flush(state, client, &mut output).await?;
                return Ok(());
            }
            // Running and answering nothing more, replies still pending included.
            Step::Drop => {
                commit(state).await?;
                return Ok(());
            }
        }
        // See `pipeline::LONG_BATCH_NS`.
        if scratch.write_after_others && !output.is_empty() {
            super::turn::after_ready_tasks().await;
        }
        client.info.pubsub.take_into(&mut output);
        if !output.is_empty() {
            out.flush(state, client, &mut output).await?;
        }
        out.trim.on_busy(&mut input, &mut output);
        let memory = &client.info.memory;
        memory.note_query(input.len(), input.capacity());
        memory.note_reply(output.capacity(), out.trim.reply_peak());
        state.publish_client_memory(&client.info);
        let oversized = Trim::oversized(&input, &output);
        let trim_when_idle = async {
            if !oversized {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(IDLE_TRIM).await;
        };
        let (query_limit, timeout_s) = state.connection_limits();
        let idle = async {
            if timeout_s == 0 {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(Duration::from_secs(timeout_s)).await;
        };
        // Biased: the branches are polled in order, with no random draw per wait; a killed
        // client is seen first, at the cost of one atomic load.
        tokio::select! {
            biased;
            () = client.info.killed() => return Ok(()),
            read = reader.read_buf(&mut input) => {
                let read = read?;
                if read == 0 {
                    return Ok(());
                }
                state.stats().read_processed_in(client.counter.as_ref(), read);
                client.info.count_read(read);
                scratch.read_since_batch = true;
                out.trim.note_query(input.len());
            }
            () = idle => return Ok(()),
            () = trim_when_idle => {
                out.trim.on_idle(&mut input, &mut output);
                continue;
            }
            // A message arrived in the empty mailbox: let the tasks ready to run go first (a
            // burst of publishers appends meanwhile), then write all of it at the top of the
            // loop, once, as Redis writes a client's buffer once per event-loop turn.
            () = client.info.pubsub.ready(), if client.info.pubsub.expects_mail() => {
                tokio::task::yield_now().await;
                continue;
            }
        }
        if input.len() as u64 > query_limit {
            tracing::warn!(
                client = client.info.id,
                "closing client that reached max query buffer length"
            );
            return Ok(());
        }
    }
}

/// The connection's write side and its output-limit watch.
struct Out<'a, W> {
    writer: &'a mut W,
    guard: OutputGuard,
    /// The AOF's fed offset when the commands now answered in the output began to run: if it
    /// has not moved, none of them (nor anyone's) propagated a write, so the replies
    /// acknowledge nothing the AOF lacks.
    fed_before: u64,
    /// The buffers' peaks, for giving back what they outgrew.
    trim: Trim,
}

impl<W: WriteHalf> Out<'_, W> {
    /// Commits the AOF (the replies may acknowledge only writes it holds), then writes
    /// `output` and empties it. When the AOF write fails (`everysec`, `no`) replies that
    /// acknowledge no write still go out (reads, `-MISCONF`: the server keeps serving, as
    /// Redis does); a connection whose commands wrote closes unanswered instead, since the
    /// write is not in the file.
    async fn flush(
        &mut self,
        state: &ServerState,
        client: &ClientState,
        output: &mut BytesMut,
    ) -> std::io::Result<()> {
        if let Err(e) = commit(state).await {
            let wrote = state.aof().fed() != self.fed_before;
            if wrote || state.aof().fatal_error().is_some() {
                return Err(e);
            }
        }
        self.trim.note_reply(output.len());
        write_out(self.writer, output, state, client, &mut self.guard).await?;
        state
            .stats()
            .write_processed_in(client.counter.as_ref(), output.len());
        client.info.count_written(output.len());
        output.clear();
        Ok(())
    }
}

/// Waits for a blocked command's reply. `None` means the client went away (or was killed):
/// dropping the handle unblocks the command.
async fn wait_blocked(
    state: &ServerState,
    handle: &BlockedHandle,
    wake: &TaskWake,
    info: &ClientInfo,
    reader: &mut (impl AsyncRead + Unpin),
    input: &mut BytesMut,
) -> std::io::Result<Option<echomq_engine::Result<Reply>>> {
    let query_limit = state.settings().client_query_buffer_limit;
    loop {
        if let Some(result) = handle.try_take() {
            return Ok(Some(result));
        }
        let now = state.clock().now_ms();
        let poll_ms = match handle.deadline_ms() {
            Some(deadline) if deadline <= now => {
                state.keyspace().expire_blocked();
                continue;
            }
            Some(deadline) => (deadline - now).min(BLOCK_POLL_MS_MAX),
            None => BLOCK_POLL_MS_MAX,
        };
        tokio::select! {
            biased;
            () = info.killed() => return Ok(None),
            () = info.unblock_requested() => {
                let error = info.take_unblock();
                return Ok(Some(handle.cancel().unwrap_or(if error {
                    Err(echomq_engine::Error::Unblocked)
                } else {
                    Ok(Reply::NullArray)
                })));
            }
            () = wake.0.notified() => {}
            () = tokio::time::sleep(Duration::from_millis(poll_ms)) => {}
            read = reader.read_buf(input) => {
                if read? == 0 || input.len() as u64 > query_limit {
                    return Ok(None);
                }
            }
        }
    }
}

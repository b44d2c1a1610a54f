//! The server cron: Redis's `serverCron` tasks echomq has, run `hz` times a second.
//!
//! Each tick runs the engine's active expiry cycle (Redis's slow cycle) with Redis's budget:
//! 25% of the tick, counting only the cycle's own time, one lock hold at a time with a yield
//! between holds (so no client waits longer than one hold for it), then eviction while memory
//! is over `maxmemory` (one command's time budget), then the commit pipeline, so the DELs that cycle propagated reach the AOF
//! within the tick rather than with the next client's write (and deferred archive trims run
//! even when no client writes), samples the instantaneous rates INFO reports (at most every
//! 100 ms), and, once no background child runs, starts a scheduled AOF rewrite, a BGSAVE
//! when a `save` point is due (`crate::persist::rdb`), or a scheduled BGSAVE. The tick
//! length is real time and `hz` is re-read every tick, so CONFIG SET hz takes effect at once;
//! which keys are due is read from the keyspace's injected clock.

use std::sync::Arc;
use std::time::Duration;

use crate::state::ServerState;

/// Share of a tick the active expiry cycle may use (Redis's
/// `ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC`).
const EXPIRE_CYCLE_TIME_PERC: u64 = 25;

/// Runs until the task is aborted.
pub(super) async fn run(state: Arc<ServerState>) {
    loop {
        let hz = state.settings().hz.max(1);
        let tick = Duration::from_micros(1_000_000 / hz);
        tokio::time::sleep(tick).await;
        // A running script holds the keyspace lock: waiting for it here would take the worker
        // thread the other clients need for their `-BUSY` answers.
        if state.busy().script_running() {
            continue;
        }
        let budget = tick * EXPIRE_CYCLE_TIME_PERC as u32 / 100;
        // One lock hold at a time, yielding between them: the clients' tasks on this worker
        // run between holds instead of waiting for the whole cycle.
        if state
            .active_expire()
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            let mut cycle = state.keyspace().expire_cycle(budget);
            while cycle.step() {
                tokio::task::yield_now().await;
            }
        }
        // Eviction goes on between commands (Redis's eviction timer, here at the cron's
        // rate): a server left over `maxmemory` by a command whose eviction ran out of time
        // gets back under it without waiting for the next command. Not while loading, as
        // Redis.
        if !state.loading() {
            let keyspace = Arc::clone(state.keyspace());
            let mut batch = keyspace.batch();
            state.make_room(&mut batch);
        }
        // Clients over `maxmemory-clients` that no growth of their own has evicted (Redis
        // evicts from its cron too).
        state.evict_clients();
        if let Err(e) = state.commit_tick() {
            tracing::debug!(error = %e, "the cron's commit failed");
        }
        if state.stop_if_aof_fatal() {
            return;
        }
        state.stats().sample_instantaneous();
        // In Redis's order: a scheduled rewrite, the save points, then a scheduled BGSAVE;
        // each only while no child runs.
        state.scheduled_rewrite_cron();
        state.save_point_cron();
        state.scheduled_bgsave_cron();
    }
}

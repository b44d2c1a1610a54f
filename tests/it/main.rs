//! echomq's integration tests: one binary for the whole root crate, so the workspace links one
//! test executable instead of one per file.
//!
//! - `support`: real servers (Redis, Valkey), a RESP2 reader, the differential harness.
//! - `archive`: fold-before-trim and merge-reads through the server and the feed, and the
//!   crash test.
//! - `bench`: `echomq bench` end to end against the engine, `echomq serve` and Redis.
//! - `cluster`: the feed on a real Redis Cluster under resharding, failover and bad input.
//! - `feed`: the feed layer's backend-independent suite on every backend.
//! - `feed_idmp`: idempotent appends (IDMP records) per backend, and the proof by fault through
//!   a proxy that breaks connections around XADDs.
//! - `feed_timeouts`: the Redis backend against servers that stop answering.
//! - `consumer`: the consumer runtime, dedup and retention on the engine and on servers.
//! - `differential`: the engine against a real server, reply by reply, one module per command
//!   family.
//! - `replica`: archive replication against the in-memory store and a real moto server:
//!   racing writers, round trips, bad buckets and credentials.

// Helpers here sit outside `#[test]` functions, where clippy's allow-unwrap-in-tests does not
// reach; a failed unwrap in test support is a failed test, never a crash on client data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The counting allocator `echomq serve` installs, so in-process servers account memory as
/// the binary does.
#[global_allocator]
static ALLOC: echomq::protocol::CountingAlloc = echomq::protocol::CountingAlloc(std::alloc::System);

mod aof;
mod archive;
mod bench;
mod cli;
mod cluster;
mod consumer;
mod differential;
mod feed;
mod feed_idmp;
mod feed_timeouts;
mod rdb;
mod replica;
mod replica_cli;
mod server;
mod support;

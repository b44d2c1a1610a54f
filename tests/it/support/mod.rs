//! Shared test support: real servers to compare with, a RESP reader, and the differential
//! harnesses.
//!
//! - [`cluster`]: a 3-master, 3-replica Redis Cluster on loopback, with resharding and
//!   SIGKILL faults.
//! - [`peer`]: start and stop `redis-server` / `valkey-server` on a free loopback port; skip (or
//!   fail under `CI=true`) when the binary is missing.
//! - [`resp`]: command encoding and a byte-recording RESP2/RESP3 reader; the engine's replies in
//!   the same form.
//! - [`differ`]: run each command on a server and on the engine and compare the bytes, plus the
//!   stream bookkeeping `XINFO STREAM` shows and the consumer groups' state.
//! - [`fuzz`]: the seeded fuzzers' random source and knobs, and a driver with blocked
//!   clients in lockstep on two servers.
//! - [`moto`]: a local S3-compatible server (moto) for replication tests.
//! - [`process`]: child processes (`echomq serve` among them), killed by pid when dropped.
//! - [`proxy`]: a loopback TCP proxy that breaks connections around XADDs, at random from a
//!   seed (the feed's proof by fault).
//! - [`normalize`]: the time fields (idle, delivery, seen and active times) that differ between
//!   two clocks, blanked on both sides before comparing.
//! - [`tmpfs`]: a small tmpfs mounted for one test (a disk that fills up), unmounted after.
//! - [`wire`]: the same comparison over the wire, a real server against `echomq serve`, in
//!   RESP2 and RESP3, with pipelining and transactions.

pub mod cluster;
pub mod differ;
pub mod fuzz;
pub mod moto;
pub mod normalize;
pub mod peer;
pub mod process;
pub mod proxy;
pub mod resp;
pub mod tmpfs;
pub mod wire;

/// A field of an INFO-style `name:value` text, trimmed.
pub fn field_of_info(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

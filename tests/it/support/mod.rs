//! Shared test support: real servers to compare with, a RESP2 reader, and the differential
//! harness.
//!
//! - [`peer`]: start and stop `redis-server` / `valkey-server` on a free loopback port; skip (or
//!   fail under `CI=true`) when the binary is missing.
//! - [`resp`]: RESP2 encoding and a byte-recording reader; the engine's replies in the same form.
//! - [`differ`]: run each command on a server and on the engine and compare the bytes, plus the
//!   stream bookkeeping `XINFO STREAM` shows.

pub mod differ;
pub mod peer;
pub mod resp;

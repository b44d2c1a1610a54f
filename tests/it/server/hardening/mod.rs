//! What a hostile network, a file-descriptor limit and a failing disk do to the server
//! (issue 14), one module per failure, each compared with Redis 8.8 where Redis defines the
//! reply:
//!
//! - `archive_failure`: a fold fails on a full disk; trims of archived streams answer
//!   `-MISCONF` and change nothing until the archive reopens itself, then fold again.
//! - `watermark`: after a restart with an archive, each archived stream's live last id is its
//!   W (`*` continues above it, an id at or below it gets XADD's "equal or smaller" error).
//! - `descriptors`: `maxclients` lowered to a low `ulimit -n` as Redis does, extra clients
//!   refused with Redis's error, and an accept loop out of descriptors backing off.

mod archive_failure;
mod descriptors;
mod watermark;

//! ROLE: the server's place in replication, as Redis's `roleCommand` reports it.
//!
//! echomq serves as a master that never has replicas attached (its archive replicates to an
//! object store, not to other servers), and keeps no replication backlog, so its offset stays
//! where a Redis master without replicas leaves it: 0.

use echomq_engine::Reply;

use crate::state::{ClientState, ServerState};

/// `ROLE`: `master`, the replication offset, and the connected replicas (none).
pub(crate) fn role(_: &ServerState, _: &ClientState, _: &[&[u8]]) -> Reply {
    Reply::Array(vec![
        Reply::bulk_static("master"),
        Reply::Int(0),
        Reply::Array(Vec::new()),
    ])
}

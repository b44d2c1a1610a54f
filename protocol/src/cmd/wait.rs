//! WAIT: acknowledgement of writes by replicas.

use echomq_engine::Reply;

use super::{Ctx, int_arg};

use crate::error::CommandError;

/// `WAIT numreplicas timeout`: echomq has no replicas, so 0 at once. (Redis with
/// `numreplicas` > 0 waits out the timeout first, forever for 0.)
pub(crate) fn wait(_: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if let Err(reply) = int_arg(argv[1]) {
        return reply;
    }
    match int_arg(argv[2]) {
        Ok(t) if t < 0 => CommandError::TimeoutNegative.into(),
        Ok(_) => Reply::Int(0),
        Err(_) => CommandError::TimeoutNotInteger.into(),
    }
}

//! The open-files limit and `maxclients`, as Redis's `adjustOpenFilesLimit` ties them.
//!
//! A server with `maxclients` N needs N + [`RESERVED_FDS`] descriptors (the listener, the
//! runtime's own, an archive file, log and peers). At start [`fit_maxclients`] raises
//! `RLIMIT_NOFILE` (soft and hard together, as Redis does) to that figure, trying 16 fewer at
//! a time when the system refuses; if it cannot reach it, `maxclients` is lowered to what the
//! limit allows and the reason is logged in Redis's words. So connections past the limit are
//! refused with `-ERR max number of clients reached` instead of failing `accept` with
//! `EMFILE`. A limit at or below [`RESERVED_FDS`] is an error: the server cannot start.

/// Descriptors kept beyond `maxclients` (Redis's `CONFIG_MIN_RESERVED_FDS`).
pub const RESERVED_FDS: u64 = 32;
/// How much smaller each retry asks for when raising the limit is refused.
const DECREMENT: u64 = 16;

/// What [`fit_maxclients`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// The limit was already enough.
    Enough,
    /// The limit was raised from `from` to `to`.
    Raised {
        /// The limit before.
        from: u64,
        /// The limit now.
        to: u64,
    },
    /// The limit could not be raised enough; `maxclients` must be lowered to `maxclients`.
    Lowered {
        /// The limit in force.
        limit: u64,
        /// The `maxclients` it allows.
        maxclients: u64,
        /// Why raising failed.
        error: String,
    },
}

/// `RLIMIT_NOFILE` too low for the clients asked for, in Redis's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FdLimitError {
    /// At start: the limit does not even cover the descriptors the server reserves.
    #[error(
        "Your current 'ulimit -n' of {current} is not enough for the server to start. Please increase your open file limit to at least {wanted}. Exiting."
    )]
    TooLowToStart {
        /// The limit.
        current: u64,
        /// What the server needs.
        wanted: u64,
    },
    /// CONFIG SET maxclients: the limit allows only `allowed` clients.
    #[error(
        "The operating system is not able to handle the specified number of clients, try with {allowed}"
    )]
    TooManyClients {
        /// The `maxclients` the limit allows.
        allowed: u64,
    },
}

/// Makes room for `maxclients` clients: raises the soft and hard `RLIMIT_NOFILE` if needed
/// and possible, and says what `maxclients` can be. `Err` (with Redis's message) when the
/// limit does not even cover the reserve.
pub fn fit_maxclients(maxclients: u64) -> Result<Fit, FdLimitError> {
    let wanted = maxclients.saturating_add(RESERVED_FDS);
    let Some(current) = limit::current() else {
        return Ok(Fit::Enough);
    };
    if current >= wanted {
        return Ok(Fit::Enough);
    }
    let mut best = wanted;
    let mut error = String::new();
    while best > current {
        match limit::set(best) {
            Ok(()) => break,
            Err(e) => error = e,
        }
        if best < DECREMENT {
            best = current;
            break;
        }
        best -= DECREMENT;
    }
    let best = best.max(current);
    if best >= wanted {
        return Ok(Fit::Raised {
            from: current,
            to: wanted,
        });
    }
    if best <= RESERVED_FDS {
        return Err(FdLimitError::TooLowToStart { current, wanted });
    }
    // Asking for less than was needed may still have raised the limit part way.
    let limit = limit::current().unwrap_or(best).max(best);
    Ok(Fit::Lowered {
        limit,
        maxclients: limit - RESERVED_FDS,
        error,
    })
}

/// Runs [`fit_maxclients`] at start and logs what it did in Redis's words; returns the
/// `maxclients` to use.
pub fn adjust_at_start(maxclients: u64) -> Result<u64, FdLimitError> {
    let wanted = maxclients.saturating_add(RESERVED_FDS);
    match fit_maxclients(maxclients)? {
        Fit::Enough => Ok(maxclients),
        Fit::Raised { from, to } => {
            tracing::info!(
                "Increased maximum number of open files to {to} (it was originally set to {from})."
            );
            Ok(maxclients)
        }
        Fit::Lowered {
            limit,
            maxclients: lowered,
            error,
        } => {
            tracing::warn!(
                "You requested maxclients of {maxclients} requiring at least {wanted} max file descriptors."
            );
            tracing::warn!(
                "Server can't set maximum open files to {wanted} because of OS error: {error}."
            );
            tracing::warn!(
                "Current maximum open files is {limit}. maxclients has been reduced to {lowered} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."
            );
            Ok(lowered)
        }
    }
}

/// What CONFIG SET maxclients checks (Redis's `updateMaxclients`): the limit is raised if it
/// can be; if it cannot reach `maxclients`, the error names what it allows.
pub fn check_config_set(maxclients: u64) -> Result<(), FdLimitError> {
    match fit_maxclients(maxclients) {
        Ok(Fit::Enough | Fit::Raised { .. }) => Ok(()),
        Ok(Fit::Lowered {
            maxclients: allowed,
            ..
        }) => Err(FdLimitError::TooManyClients { allowed }),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
mod limit {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

    /// The soft limit; `None` when unlimited.
    pub(super) fn current() -> Option<u64> {
        getrlimit(Resource::Nofile).current
    }

    /// Sets soft and hard limits to `n`, with the OS's error text on failure.
    pub(super) fn set(n: u64) -> Result<(), String> {
        setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(n),
                maximum: Some(n),
            },
        )
        .map_err(|e| {
            // strerror's words, as Redis logs them, without Rust's "(os error N)".
            let text = std::io::Error::from(e).to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        })
    }
}

#[cfg(not(unix))]
mod limit {
    pub(super) fn current() -> Option<u64> {
        None
    }

    pub(super) fn set(_: u64) -> Result<(), String> {
        Ok(())
    }
}

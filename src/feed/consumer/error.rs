//! The consumer runtime's errors.

use thiserror::Error;

use crate::feed::error::FeedError;

/// Why a consumer did not start or stopped.
#[derive(Debug, Error)]
pub enum ConsumerError {
    /// A setting is out of range; the text names it and its range.
    #[error("invalid consumer settings: {0}")]
    Settings(&'static str),
    /// A queue, stream, group or consumer name is empty.
    #[error("the {0} name must not be empty")]
    EmptyName(&'static str),
    /// The group disappeared and the settings say stop (or it disappeared again right after
    /// being recreated).
    #[error(
        "consumer group '{group}' on '{key}' was deleted while the consumer ran; recreate it \
         and start the consumer again"
    )]
    GroupLost {
        /// The stream key.
        key: String,
        /// The group.
        group: String,
    },
    /// A backend call failed where the consumer cannot go on (creating the group at start).
    #[error(transparent)]
    Feed(#[from] FeedError),
    /// The consumer's thread could not be started.
    #[error("could not start the consumer thread: {0}")]
    Spawn(std::io::Error),
    /// The consumer's thread panicked outside the handler (a bug in echomq).
    #[error("the consumer thread panicked: {0}")]
    Panicked(String),
}

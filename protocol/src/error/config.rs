//! A CONFIG SET value refused, in Redis's words: `CONFIG SET failed (possibly related to
//! argument '<name>') - <why>`. CONFIG SET's reply adds the `ERR ` prefix
//! ([`super::CommandError::ConfigRefused`]); an embedder's `config_set` gets it bare.

use thiserror::Error;

/// A refused value of parameter `name` (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("CONFIG SET failed (possibly related to argument '{name}') - {why}")]
pub struct ConfigRefusal {
    /// The parameter, as the request named it.
    pub name: String,
    /// What is wrong with the value.
    pub why: ConfigWhy,
}

impl ConfigRefusal {
    /// A refusal of `name`'s value for `why`.
    pub fn new(name: &str, why: ConfigWhy) -> ConfigRefusal {
        ConfigRefusal {
            name: name.to_string(),
            why,
        }
    }
}

/// Why a CONFIG SET value is refused (Redis's text after the dash).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigWhy {
    /// Not an integer.
    #[error("argument couldn't be parsed into an integer")]
    NotInteger,
    /// An integer outside the parameter's bounds.
    #[error("argument must be between {min} and {max} inclusive")]
    OutOfRange {
        /// The least value.
        min: i128,
        /// The greatest value.
        max: i128,
    },
    /// Not a memory value (an integer with an optional unit).
    #[error("argument must be a memory value")]
    NotMemory,
    /// Neither `yes` nor `no`.
    #[error("argument must be 'yes' or 'no'")]
    NotYesNo,
    /// Not one of an enumerated parameter's values (listed, comma separated).
    #[error("argument(s) must be one of the following: {0}")]
    NotOneOf(&'static str),
    /// `save` that is not pairs of `seconds changes`.
    #[error("Invalid save parameters")]
    InvalidSave,
    /// A file name parameter (named) holding a path.
    #[error("{0} can't be a path, just a filename")]
    FilenameIsPath(&'static str),
    /// A directory name parameter (named) holding a path.
    #[error("{0} can't be a path, just a dirname")]
    DirnameIsPath(&'static str),
    /// `dir` naming no directory.
    #[error("No such file or directory")]
    NoSuchDirectory,
    /// A parameter that cannot change once persistence started.
    #[error("can't set immutable config")]
    Immutable,
    /// `appendonly yes` whose first rewrite failed.
    #[error("Unable to turn on AOF. Check server logs.")]
    AofNotStarted,
    /// A parameter's own check, in its words (the file descriptor limit for `maxclients`,
    /// the class and value checks of `client-output-buffer-limit`, the classes of
    /// `notify-keyspace-events`).
    #[error("{0}")]
    Other(String),
}

//! What a command table says about one command: the vocabulary both command tables (this
//! crate's stream commands, the protocol crate's server commands) are written in.
//!
//! A [`CommandSpec`] is a command's lower-case name, Redis's arity (positive: exactly that
//! many arguments, name included; negative: at least that many), its [`flags`], its key
//! positions as COMMAND INFO reports them, and, for a container command (XGROUP, CONFIG ...),
//! its [`Subcommand`]s and the upper-case name its errors show (`Try XGROUP HELP.`). Whoever
//! dispatches derives everything from the spec: the arity check, the unknown-subcommand
//! error, the name a call is counted under (`xgroup|create`), deny-OOM, COMMAND INFO.

use crate::error::{Error, shown};

/// Command flags (a bit set).
pub mod flags {
    /// Allowed before AUTH.
    pub const NO_AUTH: u8 = 1;
    /// Runs at once inside MULTI instead of being queued (MULTI, EXEC, WATCH, QUIT ...).
    pub const TX_CONTROL: u8 = 2;
    /// Refused when memory in use is over `maxmemory` (Redis's `denyoom`).
    pub const DENY_OOM: u8 = 4;
    /// May block the client until data arrives (XREAD, XREADGROUP with BLOCK).
    pub const BLOCKING: u8 = 8;
    /// May change the keyspace (Redis's `write`): refused with `-MISCONF` while the AOF cannot
    /// be written, held by `CLIENT PAUSE WRITE`.
    pub const WRITE: u8 = 16;
    /// Not a write, but may be replicated (Redis's `may-replicate`: PUBLISH, EXEC): held by
    /// `CLIENT PAUSE WRITE` too.
    pub const MAY_REPLICATE: u8 = 32;
    /// Allowed while the dataset loads (Redis's `loading`), instead of `-LOADING`.
    pub const LOADING_OK: u8 = 64;
    /// Refused inside MULTI, which then fails at EXEC (Redis's `no-multi`: SHUTDOWN).
    pub const NO_MULTI: u8 = 128;
}

/// Where a command's keys are, as COMMAND INFO's first-key, last-key and step report them:
/// `(0, 0, 0)` for none, `(1, -1, 1)` for every argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPositions {
    /// The first key's argument index.
    pub first: i64,
    /// The last key's index, negative counting from the end.
    pub last: i64,
    /// The distance between keys.
    pub step: i64,
}

impl KeyPositions {
    /// No key.
    pub const NONE: KeyPositions = KeyPositions {
        first: 0,
        last: 0,
        step: 0,
    };

    /// The argument indexes these positions name in a call of `argc` arguments (name
    /// included), in order; none past the last argument.
    pub fn indexes(&self, argc: usize) -> impl Iterator<Item = usize> {
        let n = argc as i64;
        let last = if self.last < 0 {
            n + self.last
        } else {
            self.last
        };
        let first = if self.first >= 1 { self.first } else { n };
        (first..=last.min(n - 1))
            .step_by(self.step.max(1) as usize)
            .map(|i| i as usize)
    }
}

/// One subcommand of a container command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subcommand {
    /// Redis's full name, `container|sub`, lower case: the name its calls are counted under
    /// and its arity errors show.
    pub full_name: &'static str,
    /// Its arity, counting the container's name and the subcommand's.
    pub arity: i32,
    /// Its [`flags`].
    pub flags: u8,
}

impl Subcommand {
    /// A subcommand without flags.
    pub const fn new(full_name: &'static str, arity: i32) -> Subcommand {
        Subcommand {
            full_name,
            arity,
            flags: 0,
        }
    }

    /// The same with `flags` added.
    pub const fn flags(self, flags: u8) -> Subcommand {
        Subcommand {
            flags: self.flags | flags,
            ..self
        }
    }

    /// Whether it has every flag in `flags`.
    pub fn has(&self, flags: u8) -> bool {
        self.flags & flags == flags
    }

    /// Whether `argc` arguments (container and subcommand names included) satisfy its arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        arity_ok(self.arity, argc)
    }

    /// The part after `|`: `create` for `xgroup|create`.
    pub fn name(&self) -> &'static str {
        match self.full_name.split_once('|') {
            Some((_, sub)) => sub,
            None => self.full_name,
        }
    }
}

/// One command, as a command table declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Lower-case name.
    pub name: &'static str,
    /// Redis's arity, counting the name (negative: at least).
    pub arity: i32,
    /// Its [`flags`].
    pub flags: u8,
    /// COMMAND INFO's key positions.
    pub keys: KeyPositions,
    /// Where the elements it looks up in its key's collection are (a hash's fields, a set's
    /// or a sorted set's members), in the same terms; `(0, 0, 0)` for none. A hint only: a
    /// pipelined batch brings their records into the cache before it runs.
    pub elements: KeyPositions,
    /// The subcommands of a container command; empty for others.
    pub subcommands: &'static [Subcommand],
    /// A container's upper-case name, as `Try XGROUP HELP.` shows it; empty for others.
    pub container: &'static str,
}

impl CommandSpec {
    /// A command without flags, keys or subcommands.
    pub const fn new(name: &'static str, arity: i32) -> CommandSpec {
        CommandSpec {
            name,
            arity,
            flags: 0,
            keys: KeyPositions::NONE,
            elements: KeyPositions::NONE,
            subcommands: &[],
            container: "",
        }
    }

    /// The same with `flags` added.
    pub const fn flags(self, flags: u8) -> CommandSpec {
        CommandSpec {
            flags: self.flags | flags,
            ..self
        }
    }

    /// The same with these key positions.
    pub const fn keys(self, first: i64, last: i64, step: i64) -> CommandSpec {
        CommandSpec {
            keys: KeyPositions { first, last, step },
            ..self
        }
    }

    /// The same with these element positions.
    pub const fn elements(self, first: i64, last: i64, step: i64) -> CommandSpec {
        CommandSpec {
            elements: KeyPositions { first, last, step },
            ..self
        }
    }

    /// The same as a container: `container` is its upper-case name.
    pub const fn subcommands(
        self,
        container: &'static str,
        subcommands: &'static [Subcommand],
    ) -> CommandSpec {
        CommandSpec {
            subcommands,
            container,
            ..self
        }
    }

    /// Whether it has every flag in `flags`.
    pub fn has(&self, flags: u8) -> bool {
        self.flags & flags == flags
    }

    /// Whether `argc` arguments (name included) satisfy its arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        arity_ok(self.arity, argc)
    }

    /// The subcommand `sub` (any case), if it is a container that has it.
    pub fn subcommand(&self, sub: &[u8]) -> Option<&'static Subcommand> {
        self.subcommands
            .iter()
            .find(|s| sub.eq_ignore_ascii_case(s.name().as_bytes()))
    }

    /// `argv`'s subcommand (`argv[1]`) checked against the table, with Redis's errors:
    /// `unknown subcommand 'x'. Try XGROUP HELP.` and `wrong number of arguments for
    /// 'xgroup|create' command`.
    pub fn checked_subcommand(&self, argv: &[&[u8]]) -> Result<&'static Subcommand, Error> {
        let sub = argv.get(1).copied().unwrap_or_default();
        let Some(found) = self.subcommand(sub) else {
            return Err(self.unknown_subcommand(sub));
        };
        if !found.arity_ok(argv.len()) {
            return Err(Error::WrongArity(found.full_name.to_string()));
        }
        Ok(found)
    }

    /// The error for a subcommand this container does not have.
    pub fn unknown_subcommand(&self, sub: &[u8]) -> Error {
        Error::UnknownSubcommand {
            sub: shown(sub),
            command: self.container,
        }
    }
}

/// Whether `argc` arguments satisfy `arity` (negative: at least).
fn arity_ok(arity: i32, argc: usize) -> bool {
    let (arity, argc) = (i64::from(arity), argc as i64);
    !((arity > 0 && argc != arity) || argc < -arity)
}

/// XREAD's and XREADGROUP's keys: the first half of the arguments after the `STREAMS` token,
/// found as Redis 8.10 finds it (`docs/reference/streams-8.md` §7) by walking the options:
/// COUNT, BLOCK, CLAIM, MAXCOUNT and MAXSIZE skip their value, GROUP its group and consumer,
/// NOACK stands alone, and any other token is a syntax error that names no key. So a key,
/// group or consumer named `STREAMS` cannot move the keys. The one extraction behind lazy
/// expiry, COMMAND GETKEYS and the cluster slot check.
pub fn streams_keys<'a>(argv: &[&'a [u8]]) -> Vec<&'a [u8]> {
    /// The options that take one value.
    const WITH_VALUE: [&[u8]; 5] = [b"block", b"count", b"claim", b"maxcount", b"maxsize"];
    let mut at = 1;
    while at < argv.len() {
        let arg = argv[at];
        if arg.eq_ignore_ascii_case(b"streams") {
            let rest = &argv[at + 1..];
            if rest.is_empty() || rest.len() % 2 != 0 {
                return Vec::new();
            }
            return rest[..rest.len() / 2].to_vec();
        }
        at += if arg.eq_ignore_ascii_case(b"group") {
            3
        } else if WITH_VALUE.iter().any(|o| arg.eq_ignore_ascii_case(o)) {
            2
        } else if arg.eq_ignore_ascii_case(b"noack") {
            1
        } else {
            return Vec::new();
        };
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTAINER: CommandSpec = CommandSpec::new("xgroup", -2).subcommands(
        "XGROUP",
        &[
            Subcommand::new("xgroup|create", -5).flags(flags::DENY_OOM),
            Subcommand::new("xgroup|help", 2),
        ],
    );

    #[test]
    fn positions_name_the_arguments_a_call_has() {
        let pairs = KeyPositions {
            first: 2,
            last: -1,
            step: 2,
        };
        assert_eq!(pairs.indexes(6).collect::<Vec<_>>(), [2, 4]);
        assert_eq!(pairs.indexes(2).count(), 0, "a call too short has none");
        let one = KeyPositions {
            first: 3,
            last: 3,
            step: 1,
        };
        assert_eq!(one.indexes(4).collect::<Vec<_>>(), [3]);
        assert_eq!(one.indexes(9).collect::<Vec<_>>(), [3]);
        assert_eq!(KeyPositions::NONE.indexes(5).count(), 0);
    }

    #[test]
    fn arity_is_exact_when_positive_and_a_minimum_when_negative() {
        let exact = CommandSpec::new("xlen", 2);
        assert!(exact.arity_ok(2));
        assert!(!exact.arity_ok(1) && !exact.arity_ok(3));
        assert!(CONTAINER.arity_ok(2) && CONTAINER.arity_ok(9));
        assert!(!CONTAINER.arity_ok(1));
    }

    #[test]
    fn subcommands_are_found_in_any_case_and_checked_with_redis_errors() {
        let create: &[&[u8]] = &[b"XGROUP", b"Create", b"k", b"g", b"$"];
        let found = CONTAINER.checked_subcommand(create).unwrap();
        assert_eq!(found.name(), "create");
        assert!(found.has(flags::DENY_OOM));
        let short: &[&[u8]] = &[b"xgroup", b"create", b"k"];
        assert_eq!(
            CONTAINER.checked_subcommand(short).unwrap_err().to_string(),
            "ERR wrong number of arguments for 'xgroup|create' command"
        );
        let unknown: &[&[u8]] = &[b"xgroup", b"frob"];
        assert_eq!(
            CONTAINER
                .checked_subcommand(unknown)
                .unwrap_err()
                .to_string(),
            "ERR unknown subcommand 'frob'. Try XGROUP HELP."
        );
    }
}

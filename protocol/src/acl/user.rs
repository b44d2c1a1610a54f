//! A user and its selectors.
//!
//! A [`Selector`] says which commands (a bitmap over call ids, plus first arguments allowed
//! for a command otherwise denied: `+select|0`), which keys (glob patterns, each readable,
//! writable or both) and which channels (glob patterns) a request may use; a user may run a
//! request when one of its selectors allows all of it. The first selector is the root one
//! (the rules given outside parentheses); `(…)` rules add more.
//!
//! Invariants ([`User::check_invariants`]): the root selector is first and the only root;
//! every bitmap has the catalog's width; `all_keys` means no key pattern is kept (and
//! `all_channels` no channel pattern); a `nopass` user keeps no password; passwords are 64
//! lower-case hex digits, each once.

use std::collections::BTreeMap;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::catalog;

/// A key pattern and what it allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyPattern {
    pub pattern: Bytes,
    pub read: bool,
    pub write: bool,
}

/// What a request may use (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Selector {
    pub root: bool,
    pub all_keys: bool,
    pub all_channels: bool,
    /// Every command (cleared by any command denied after `+@all`).
    pub all_commands: bool,
    /// Whether the command rules start from `+@all` (Redis's reserved "future commands" bit).
    pub future: bool,
    pub allowed: Vec<u64>,
    /// First arguments allowed for a command whose bit is not set, by id (lower case).
    pub first_args: BTreeMap<usize, Vec<Bytes>>,
    pub keys: Vec<KeyPattern>,
    pub channels: Vec<Bytes>,
    /// The command and category rules, in the order they still matter (`+get`, `-@write`),
    /// each lower case with its sign: how ACL LIST describes the bitmap.
    pub rules: Vec<String>,
}

impl Selector {
    /// A selector allowing nothing.
    pub fn new(root: bool, all_channels: bool) -> Selector {
        Selector {
            root,
            all_keys: false,
            all_channels,
            all_commands: false,
            future: false,
            allowed: vec![0; catalog().words()],
            first_args: BTreeMap::new(),
            keys: Vec::new(),
            channels: Vec::new(),
            rules: Vec::new(),
        }
    }

    /// Whether command `id`'s bit is set.
    pub fn bit(&self, id: usize) -> bool {
        self.allowed
            .get(id / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// Sets or clears command `id`'s bit; clearing one ends `all_commands`.
    pub fn set_bit(&mut self, id: usize, on: bool) {
        let Some(word) = self.allowed.get_mut(id / 64) else {
            return;
        };
        if on {
            *word |= 1 << (id % 64);
        } else {
            *word &= !(1 << (id % 64));
            self.all_commands = false;
        }
    }

    /// Whether it allows everything.
    pub fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels
    }
}

/// A user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct User {
    pub name: Bytes,
    pub enabled: bool,
    pub nopass: bool,
    /// `skip-sanitize-payload` (RESTORE's payloads are not checked deeply).
    pub skip_sanitize: bool,
    /// SHA-256 hex digests, in the order added.
    pub passwords: Vec<String>,
    /// The root selector first.
    pub selectors: Vec<Selector>,
    /// `acl-pubsub-default allchannels` as the rules are applied: a new selector, and
    /// `reset`, allow every channel (Redis reads the setting as it applies them).
    pub channels_default_all: bool,
}

impl User {
    /// A new user: off, no password, nothing allowed.
    pub fn new(name: &[u8]) -> User {
        User::with_channels_default(name, false)
    }

    /// A new user under `acl-pubsub-default` (`all`: `allchannels`): off, no password, no
    /// command or key, and every channel or none.
    pub fn with_channels_default(name: &[u8], all: bool) -> User {
        User {
            name: Bytes::copy_from_slice(name),
            enabled: false,
            nopass: false,
            skip_sanitize: false,
            passwords: Vec::new(),
            selectors: vec![Selector::new(true, all)],
            channels_default_all: all,
        }
    }

    /// The default user as the server starts: on, nopass, everything allowed.
    pub fn default_user() -> User {
        let mut user = User::new(b"default");
        for rule in ["+@all", "~*", "&*", "on", "nopass"] {
            let applied = user.apply(rule.as_bytes());
            debug_assert!(applied.is_ok());
        }
        user
    }

    /// The root selector.
    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// The root selector, to change.
    pub fn root_mut(&mut self) -> &mut Selector {
        &mut self.selectors[0]
    }

    /// Whether its root selector allows everything.
    pub fn unrestricted(&self) -> bool {
        self.root().unrestricted()
    }

    /// Sets the password as `requirepass` does: the one password, or `nopass` when empty.
    pub fn set_requirepass(&mut self, requirepass: &str) {
        self.passwords.clear();
        self.nopass = requirepass.is_empty();
        if !requirepass.is_empty() {
            self.passwords.push(hash_password(requirepass.as_bytes()));
        }
    }

    /// Whether `password` opens this user (an enabled one).
    pub fn accepts(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hashed = hash_password(password);
        // Every stored hash is compared whole, so timing does not tell how much matched.
        self.passwords
            .iter()
            .fold(false, |found, p| found | constant_time_eq(p, &hashed))
    }

    /// Panics if an invariant of the module docs does not hold.
    #[cfg(test)]
    pub fn check_invariants(&self) {
        assert!(!self.selectors.is_empty() && self.selectors[0].root);
        assert!(self.selectors[1..].iter().all(|s| !s.root));
        for s in &self.selectors {
            assert_eq!(s.allowed.len(), catalog().words());
            assert!(!s.all_keys || s.keys.is_empty());
            assert!(!s.all_channels || s.channels.is_empty());
        }
        assert!(!self.nopass || self.passwords.is_empty());
        for (i, p) in self.passwords.iter().enumerate() {
            assert!(is_hash(p.as_bytes()), "{p}");
            assert!(!self.passwords[..i].contains(p));
        }
    }
}

/// SHA-256 of `password`, in lower-case hex.
pub(crate) fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    hex
}

/// Whether `hash` is 64 lower-case hex digits.
pub(crate) fn is_hash(hash: &[u8]) -> bool {
    hash.len() == 64 && hash.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_as_redis_does() {
        assert_eq!(
            hash_password(b"foo"),
            "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
        );
    }

    #[test]
    fn the_default_user_allows_everything_without_a_password() {
        let user = User::default_user();
        user.check_invariants();
        assert!(user.unrestricted() && user.accepts(b"anything"));
        let mut with_pass = user.clone();
        with_pass.set_requirepass("secret");
        assert!(with_pass.accepts(b"secret") && !with_pass.accepts(b"other"));
        with_pass.check_invariants();
    }
}

//! Access control lists, as Redis 8.8 has them: named users, each with passwords (kept as
//! SHA-256 hex digests) and one or more selectors saying which commands, keys and channels
//! it may use; the server's clients each run as one user (`default` until AUTH or HELLO
//! names another).
//!
//! - [`user`]: a user and its selectors;
//! - [`rules`]: the rules ACL SETUSER (and the `user` directives) apply, with Redis's errors;
//! - [`describe`]: ACL LIST's and ACL GETUSER's rendering of a user;
//! - [`check`]: whether a user may run a request, and why not.
//!
//! Commands are identified by their call ids (the server's command table, containers and
//! subcommands alike, [`crate::cmd`]); a selector's allowed commands are a bitmap over those
//! ids. The categories a command belongs to are its row in the command metadata table (the
//! same rows COMMAND INFO shows).
//!
//! Invariants: the `default` user always exists; every user has its root selector first;
//! [`Acl::restricted`] is false only when every user may run every command on every key and
//! channel (then no request needs checking: the hot path's one branch).

pub(crate) mod check;
pub(crate) mod describe;
pub(crate) mod file;
pub(crate) mod log;
pub(crate) mod rules;
pub(crate) mod user;

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use parking_lot::{Mutex, MutexGuard};

use crate::cmd::{acl_calls, acl_find};
use log::Log;
pub(crate) use user::User;

/// Redis's command categories, in its order (ACL CAT, COMMAND INFO).
pub(crate) const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "array",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The bit of category `name` (any case, without `@`); `None` for an unknown one.
pub(crate) fn category_bit(name: &[u8]) -> Option<u32> {
    CATEGORIES
        .iter()
        .position(|c| name.eq_ignore_ascii_case(c.as_bytes()))
        .map(|at| 1 << at)
}

/// One command or subcommand as ACLs see it.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Full lower-case name (`client|kill`).
    pub name: &'static str,
    /// The container's id, for a subcommand.
    pub parent: Option<usize>,
    /// A container's subcommands' ids.
    pub subs: Range<usize>,
    /// Category bits ([`category_bit`]).
    pub categories: u32,
    /// May run before authentication (always allowed).
    pub no_auth: bool,
}

/// Every command and subcommand, by call id.
pub(crate) struct Catalog {
    pub entries: Vec<Entry>,
}

impl Catalog {
    /// Words of a command bitmap.
    pub fn words(&self) -> usize {
        self.entries.len().div_ceil(64)
    }

    /// The id of the command `name` names: `cmd` or `cmd|sub`, any case (Redis's
    /// `ACLLookupCommand`).
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        acl_find(name)
    }
}

/// The catalog, built once from the command tables.
pub(crate) fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog {
        entries: acl_calls(),
    })
}

/// Why a request or an authentication was refused (INFO's `acl_access_denied_*`, ACL LOG's
/// `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    Auth,
    Command,
    Key,
    Channel,
}

/// The users, the log and the counters.
pub(crate) struct Acl {
    users: Mutex<Users>,
    restricted: AtomicBool,
    /// Bumped on every change of the users: a client's cached user is current while the
    /// generation it was read at is.
    generation: AtomicU64,
    denied: [AtomicU64; 4],
}

/// The users by name (in byte order, as ACL LIST and ACL USERS show them), the log, and the
/// `requirepass` the default user last took.
pub(crate) struct Users {
    pub map: BTreeMap<Bytes, Arc<User>>,
    pub log: Log,
    synced_requirepass: Option<String>,
}

impl Users {
    /// The user called `name`.
    pub fn get(&self, name: &[u8]) -> Option<&Arc<User>> {
        self.map.get(name)
    }

    /// The default user.
    pub fn default_user(&self) -> &Arc<User> {
        &self.map[&b"default"[..]]
    }
}

impl Default for Acl {
    fn default() -> Acl {
        let mut map = BTreeMap::new();
        map.insert(
            Bytes::from_static(b"default"),
            Arc::new(User::default_user()),
        );
        Acl {
            users: Mutex::new(Users {
                map,
                log: Log::default(),
                synced_requirepass: None,
            }),
            restricted: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            denied: Default::default(),
        }
    }
}

impl Acl {
    /// Whether some user may not run everything (requests then need checking).
    #[inline]
    pub fn restricted(&self) -> bool {
        self.restricted.load(Ordering::Relaxed)
    }

    /// The users, the default user's password first brought in line with `requirepass`
    /// when that changed (Redis sets the default user's password as `requirepass` is set).
    pub fn users(&self, requirepass: &str) -> MutexGuard<'_, Users> {
        let mut users = self.users.lock();
        if users.synced_requirepass.as_deref() != Some(requirepass) {
            let mut default = User::clone(users.default_user());
            default.set_requirepass(requirepass);
            users
                .map
                .insert(Bytes::from_static(b"default"), Arc::new(default));
            users.synced_requirepass = Some(requirepass.to_string());
        }
        users
    }

    /// Replaces every user by those of the ACL file at `path` (ACL LOAD, `aclfile` at start),
    /// or returns Redis's error text and changes nothing.
    /// `channels_default_all`: `acl-pubsub-default allchannels`.
    pub fn load_file(
        &self,
        users: &mut Users,
        path: &str,
        channels_default_all: bool,
    ) -> Result<(), String> {
        let text = std::fs::read(path).map_err(|e| {
            format!(
                "Error loading ACLs, opening file '{path}': {}",
                file::strerror(&e)
            )
        })?;
        let loaded = file::parse(&String::from_utf8_lossy(&text), path, channels_default_all)?;
        users.map = loaded
            .into_iter()
            .map(|(name, user)| (name, Arc::new(user)))
            .collect();
        self.changed(users);
        Ok(())
    }

    /// Applies a config file's `user <name> <rules…>` line: the user is created (the default
    /// one reset first) with the rules, as Redis loads configured users at start.
    /// `channels_default_all`: `acl-pubsub-default allchannels`.
    pub fn configure_user(
        &self,
        users: &mut Users,
        words: &[&str],
        channels_default_all: bool,
    ) -> Result<(), String> {
        let [keyword, name, rules @ ..] = words else {
            return Err("user directive needs a user name".into());
        };
        if !keyword.eq_ignore_ascii_case("user") || rules::has_spaces(name.as_bytes()) {
            return Err("Spaces not allowed in ACL usernames".into());
        }
        let mut user = User::with_channels_default(name.as_bytes(), channels_default_all);
        if *name == "default" {
            user = User::clone(users.default_user());
            user.channels_default_all = channels_default_all;
            let reset = user.apply(b"reset");
            debug_assert!(reset.is_ok());
        }
        let args: Vec<&[u8]> = rules.iter().map(|r| r.as_bytes()).collect();
        let merged = rules::merge_selectors(&args).map_err(|_| {
            format!("Unmatched parenthesis in the rules of the user named '{name}'")
        })?;
        for rule in &merged {
            user.apply(rule).map_err(|e| {
                format!(
                    "Error loading ACL rule '{}' for the user named '{name}': {}",
                    String::from_utf8_lossy(rule),
                    e.text()
                )
            })?;
        }
        users
            .map
            .insert(Bytes::copy_from_slice(name.as_bytes()), Arc::new(user));
        self.changed(users);
        Ok(())
    }

    /// Recomputes [`Acl::restricted`] after a change of `users`.
    pub fn changed(&self, users: &Users) {
        let restricted = users.map.values().any(|u| !u.unrestricted());
        self.restricted.store(restricted, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// The users' generation (see the field).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Counts a refusal.
    pub fn count(&self, reason: Reason) {
        self.denied[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Refusals so far, for `reason`.
    pub fn denied(&self, reason: Reason) -> u64 {
        self.denied[reason as usize].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_and_subcommand_has_categories() {
        let missing: Vec<&str> = catalog()
            .entries
            .iter()
            .filter(|e| e.categories == 0)
            .map(|e| e.name)
            .collect();
        assert!(missing.is_empty(), "no categories: {missing:?}");
    }

    #[test]
    fn subcommands_follow_their_container() {
        for (id, entry) in catalog().entries.iter().enumerate() {
            for sub in entry.subs.clone() {
                assert_eq!(catalog().entries[sub].parent, Some(id));
            }
            assert_eq!(catalog().lookup(entry.name.as_bytes()), Some(id));
        }
    }
}

//! The rules ACL SETUSER applies, as Redis 8.8's `ACLSetUser` and `ACLSetSelector` read them,
//! with its errors.
//!
//! [`set_user`] applies a list of rules to a copy of the user (or a new one) and returns the
//! copy only when every rule applied: a failed SETUSER changes nothing. Arguments between a
//! word starting with `(` and one ending with `)` form one selector rule first (Redis's
//! `ACLMergeSelectorArguments`).

use bytes::Bytes;

use super::catalog;
use super::user::{KeyPattern, Selector, User, hash_password, is_hash};

/// Why a rule failed (Redis's errno values in `ACLSetUser`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuleError {
    /// ENOENT.
    UnknownName,
    /// EINVAL.
    Syntax,
    /// EEXIST.
    KeyAfterAll,
    /// EISDIR.
    ChannelAfterAll,
    /// ENODEV.
    NoSuchPassword,
    /// EBADMSG.
    BadHash,
    /// ECHILD.
    FirstArgOfSubcommand,
}

impl RuleError {
    /// Redis's text (`ACLSetUserStringError`).
    pub fn text(self) -> &'static str {
        match self {
            RuleError::UnknownName => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeyAfterAll => {
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
            }
            RuleError::ChannelAfterAll => {
                "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
            }
            RuleError::NoSuchPassword => {
                "The password you are trying to remove from the user does not exist"
            }
            RuleError::BadHash => {
                "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
            }
            RuleError::FirstArgOfSubcommand => {
                "Allowing first-arg of a subcommand is not supported"
            }
        }
    }
}

/// Whether `s` holds a space or a NUL (C's `isspace`), refused in names and patterns.
pub(crate) fn has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0))
}

/// Merges a selector's words (`(~a`, `+get)`) into one rule each; `Err(at)` when the word
/// at `at` opens a selector never closed.
pub(crate) fn merge_selectors(args: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut merged = Vec::with_capacity(args.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (at, &arg) in args.iter().enumerate() {
        if let Some((_, selector)) = open.as_mut() {
            selector.push(b' ');
            selector.extend_from_slice(arg);
            if arg.last() == Some(&b')') {
                merged.push(open.take().map(|(_, s)| s).unwrap_or_default());
            }
            continue;
        }
        if arg.first() == Some(&b'(') && arg.last() != Some(&b')') {
            open = Some((at, arg.to_vec()));
            continue;
        }
        merged.push(arg.to_vec());
    }
    match open {
        Some((at, _)) => Err(at),
        None => Ok(merged),
    }
}

/// ACL SETUSER's rules applied to `user` (a new user called `name` when `None`): the user
/// they make, or Redis's error text.
pub(crate) fn set_user(
    user: Option<&User>,
    name: &[u8],
    args: &[&[u8]],
    channels_default_all: bool,
) -> Result<User, String> {
    let rules = merge_selectors(args).map_err(|at| {
        format!(
            "Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(args[at])
        )
    })?;
    let mut staged = user
        .cloned()
        .unwrap_or_else(|| User::with_channels_default(name, channels_default_all));
    staged.channels_default_all = channels_default_all;
    for rule in &rules {
        staged.apply(rule).map_err(|e| {
            format!(
                "Error in ACL SETUSER modifier '{}': {}",
                String::from_utf8_lossy(rule),
                e.text()
            )
        })?;
    }
    Ok(staged)
}

impl User {
    /// Applies one rule (Redis's `ACLSetUser`).
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if op.is_empty() {
            return Ok(());
        }
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.skip_sanitize = true;
        } else if is("sanitize-payload") {
            self.skip_sanitize = false;
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' {
                hash_password(&op[1..])
            } else if is_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' {
                hash_password(&op[1..])
            } else if is_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            let at = self
                .passwords
                .iter()
                .position(|p| *p == hash)
                .ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let mut selector = Selector::new(false, self.channels_default_all);
            let inner = &op[1..op.len() - 1];
            for word in inner
                .split(|c| c.is_ascii_whitespace())
                .filter(|w| !w.is_empty())
            {
                selector.apply(word)?;
            }
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            for rule in ["resetpass", "resetkeys", "resetchannels", "off"] {
                self.apply(rule.as_bytes())?;
            }
            if self.channels_default_all {
                self.apply(b"allchannels")?;
            }
            self.skip_sanitize = false;
            self.selectors.truncate(1);
            self.apply(b"-@all")?;
        } else {
            self.root_mut().apply(op)?;
        }
        Ok(())
    }
}

impl Selector {
    /// Applies one selector rule (Redis's `ACLSetSelector`).
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.all_keys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
        } else if is("allchannels") || op == b"&*" {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.allowed.iter_mut().for_each(|w| *w = u64::MAX);
            self.all_commands = true;
            self.future = true;
            self.rules.clear();
            self.first_args.clear();
        } else if is("nocommands") || is("-@all") {
            self.allowed.iter_mut().for_each(|w| *w = 0);
            self.all_commands = false;
            self.future = false;
            self.rules.clear();
            self.first_args.clear();
        } else if op[0] == b'~' || op[0] == b'%' {
            self.add_key_pattern(op)?;
        } else if op[0] == b'&' {
            if self.all_channels {
                return Err(RuleError::ChannelAfterAll);
            }
            if has_spaces(&op[1..]) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c[..] == op[1..]) {
                self.channels.push(Bytes::copy_from_slice(&op[1..]));
            }
            self.all_channels = false;
        } else if op[0] == b'+' && op.get(1) != Some(&b'@') {
            self.allow_command(&op[1..])?;
        } else if op[0] == b'-' && op.get(1) != Some(&b'@') {
            let id = catalog().lookup(&op[1..]).ok_or(RuleError::UnknownName)?;
            self.change_command(id, false);
            self.update_rules(catalog().entries[id].name.as_bytes(), false);
        } else if op[0] == b'+' || op[0] == b'-' {
            let bit = super::category_bit(&op[2..]).ok_or(RuleError::UnknownName)?;
            let allow = op[0] == b'+';
            self.update_rules(&op[1..], allow);
            for id in 0..catalog().entries.len() {
                if catalog().entries[id].categories & bit != 0 {
                    self.change_command(id, allow);
                }
            }
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeyAfterAll);
        }
        let (mut read, mut write) = (true, true);
        let mut offset = 1;
        if op[0] == b'%' {
            (read, write) = (false, false);
            let mut ok = true;
            while offset < op.len() {
                match op[offset].to_ascii_uppercase() {
                    b'R' if !read => read = true,
                    b'W' if !write => write = true,
                    b'~' => {
                        offset += 1;
                        break;
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
                offset += 1;
            }
            if !(read || write) || !ok {
                return Err(RuleError::Syntax);
            }
        }
        let pattern = &op[offset.min(op.len())..];
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|k| k.pattern[..] == *pattern) {
            Some(existing) => {
                existing.read |= read;
                existing.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern: Bytes::copy_from_slice(pattern),
                read,
                write,
            }),
        }
        self.all_keys = false;
        Ok(())
    }

    /// `+cmd`, `+cmd|sub`, `+cmd|first-arg`.
    fn allow_command(&mut self, name: &[u8]) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&c| c == b'|') else {
            let id = catalog().lookup(name).ok_or(RuleError::UnknownName)?;
            self.change_command(id, true);
            self.update_rules(catalog().entries[id].name.as_bytes(), true);
            return Ok(());
        };
        let (command, sub) = (&name[..bar], &name[bar + 1..]);
        let id = catalog().lookup(command).ok_or(RuleError::UnknownName)?;
        let entry = &catalog().entries[id];
        if entry.parent.is_some() {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if entry.subs.is_empty() {
            let allowed = self.first_args.entry(id).or_default();
            if !allowed.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
                allowed.push(Bytes::copy_from_slice(sub));
            }
        } else {
            let sub_id = catalog().lookup(name).ok_or(RuleError::UnknownName)?;
            self.change_command(sub_id, true);
        }
        self.update_rules(name, true);
        Ok(())
    }

    /// Allows or denies command `id`, and a container's subcommands with it (Redis's
    /// `ACLChangeSelectorPerm`).
    fn change_command(&mut self, id: usize, allow: bool) {
        self.set_bit(id, allow);
        self.first_args.remove(&id);
        for sub in catalog().entries[id].subs.clone() {
            self.set_bit(sub, allow);
        }
    }

    /// Records `+rule` or `-rule`, dropping the earlier rules it overrides: the same one, or
    /// a subcommand's of the same command (Redis's `ACLUpdateCommandRules`).
    fn update_rules(&mut self, rule: &[u8], allow: bool) {
        let rule = String::from_utf8_lossy(rule).to_ascii_lowercase();
        self.rules.retain(|existing| {
            let body = &existing[1..];
            !(body == rule
                || (body.len() > rule.len()
                    && body.starts_with(rule.as_str())
                    && body.as_bytes()[rule.len()] == b'|'))
        });
        self.rules
            .push(format!("{}{rule}", if allow { '+' } else { '-' }));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::acl::describe::describe_user;

    fn described(args: &[&str]) -> Result<String, String> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let user = set_user(None, b"u", &args, false)?;
        user.check_invariants();
        Ok(String::from_utf8_lossy(&describe_user(&user)).into_owned())
    }

    #[test]
    fn a_new_user_is_off_and_allowed_nothing() {
        assert_eq!(
            described(&[]).unwrap(),
            "off sanitize-payload resetchannels -@all"
        );
    }

    #[test]
    fn rules_are_described_as_redis_keeps_them() {
        assert_eq!(
            described(&[
                "on", "nopass", "+@all", "-get", "+GET", "-@write", "~a*", "%R~b", "&c"
            ])
            .unwrap(),
            "on nopass sanitize-payload ~a* %R~b resetchannels &c +@all +get -@write"
        );
        assert_eq!(
            described(&["+client|kill", "+client", "+select|0", "+select|1"]).unwrap(),
            "off sanitize-payload resetchannels -@all +client +select|0 +select|1"
        );
        assert_eq!(
            described(&["%RW~x", "%W~x", "~y", "%R~y"]).unwrap(),
            "off sanitize-payload ~x ~y resetchannels -@all"
        );
        assert_eq!(
            described(&["allkeys", "allchannels", "(+get ~k)", "(-@all)"]).unwrap(),
            "off sanitize-payload ~* &* -@all (~k resetchannels -@all +get) (resetchannels -@all)"
        );
    }

    /// Rules, valid and not, from a small vocabulary.
    fn rule() -> impl Strategy<Value = String> {
        const WORDS: &[&str] = &[
            "on",
            "off",
            "nopass",
            "resetpass",
            ">a",
            ">b",
            "<a",
            "reset",
            "allkeys",
            "resetkeys",
            "allchannels",
            "resetchannels",
            "allcommands",
            "nocommands",
            "+@all",
            "-@all",
            "+@read",
            "-@write",
            "+@stream",
            "-@dangerous",
            "+get",
            "-get",
            "+set",
            "+client",
            "-client",
            "+client|kill",
            "-client|list",
            "+select|0",
            "+select|1",
            "~k*",
            "%R~r*",
            "%W~w*",
            "%RW~b",
            "&c*",
            "&d",
            "(+get ~s*)",
            "(-@all +xadd)",
            "clearselectors",
            "+nosuch",
            "bogus",
            "%X~y",
            "#abc",
        ];
        proptest::sample::select(WORDS).prop_map(str::to_string)
    }

    proptest! {
        /// After any sequence of SETUSER calls the invariants hold, and the description, applied to a new user, makes the same user (Redis
        /// checks its description against the bitmap the same way).
        #[test]
        fn descriptions_rebuild_the_same_user(calls in proptest::collection::vec(
            proptest::collection::vec(rule(), 0..5), 1..8)
        ) {
            let mut user = User::new(b"u");
            for call in &calls {
                let args: Vec<&[u8]> = call.iter().map(|r| r.as_bytes()).collect();
                // A failed call leaves `user` as it was: set_user works on a copy.
                if let Ok(changed) = set_user(Some(&user), b"u", &args, false) {
                    user = changed;
                }
                user.check_invariants();
            }
            let description = describe_user(&user);
            let words: Vec<&[u8]> = description.split(|&c| c == b' ').collect();
            let rebuilt = set_user(None, b"u", &words, false).unwrap();
            rebuilt.check_invariants();
            prop_assert_eq!(describe_user(&rebuilt), description);
            for (a, b) in user.selectors.iter().zip(&rebuilt.selectors) {
                prop_assert_eq!(&a.allowed, &b.allowed);
                // The allowed first arguments are a set: a rule given again moves to the end
                // of the description (as in Redis) but not in the list it adds to.
                let sorted = |m: &std::collections::BTreeMap<usize, Vec<bytes::Bytes>>| {
                    m.iter()
                        .map(|(k, v)| {
                            let mut v = v.clone();
                            v.sort();
                            (*k, v)
                        })
                        .collect::<Vec<_>>()
                };
                prop_assert_eq!(sorted(&a.first_args), sorted(&b.first_args));
                prop_assert_eq!(&a.keys, &b.keys);
                prop_assert_eq!(&a.channels, &b.channels);
            }
            prop_assert_eq!(user.selectors.len(), rebuilt.selectors.len());
        }
    }

    #[test]
    fn malformed_rules_get_redis_errors_and_change_nothing() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["+nosuch"],
                "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL",
            ),
            (
                &["-@nosuch"],
                "Error in ACL SETUSER modifier '-@nosuch': Unknown command or category name in ACL",
            ),
            (
                &["bogus"],
                "Error in ACL SETUSER modifier 'bogus': Syntax error",
            ),
            (
                &["~*", "~a"],
                "Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            ),
            (
                &["<nope"],
                "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist",
            ),
            (
                &["#abc"],
                "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            ),
            (
                &["+client|kill|x"],
                "Error in ACL SETUSER modifier '+client|kill|x': Allowing first-arg of a subcommand is not supported",
            ),
            (
                &["+select|"],
                "Error in ACL SETUSER modifier '+select|': Syntax error",
            ),
            (
                &["%X~a"],
                "Error in ACL SETUSER modifier '%X~a': Syntax error",
            ),
            (
                &["(~a", "+get"],
                "Unmatched parenthesis in acl selector starting at '(~a'.",
            ),
            (
                &["(~a", "+nosuch)"],
                "Error in ACL SETUSER modifier '(~a +nosuch)': Unknown command or category name in ACL",
            ),
        ];
        for (args, error) in cases {
            assert_eq!(described(args).unwrap_err(), *error, "{args:?}");
        }
    }
}

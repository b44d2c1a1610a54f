//! The ACL file (`aclfile`): one `user <name> <rules…>` line per user, as ACL LIST shows them;
//! blank lines and `#` comments skipped. [`parse`] reads one as Redis 8.8's `ACLLoadFromFile`
//! does, gathering every line's errors in its words; the users replace the current ones only
//! when there is none (a file without `default` gets the starting default user). [`render`]
//! writes the users back (ACL SAVE), which [`save`] puts in place atomically (a temporary
//! file, synced, renamed over the old one).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use bytes::Bytes;

use super::rules::has_spaces;
use super::user::User;
use super::{describe, rules};

/// The users of an ACL file's `text` (shown as `path` in errors), or Redis's error text.
pub(crate) fn parse(
    text: &str,
    path: &str,
    channels_default_all: bool,
) -> Result<BTreeMap<Bytes, User>, String> {
    let mut users: BTreeMap<Bytes, User> = BTreeMap::new();
    let mut errors = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let line_number = i + 1;
        let line = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split(' ').collect();
        if words[0] != "user" || words.len() < 2 {
            errors.push_str(&format!(
                "{path}:{line_number} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = words[1].as_bytes();
        if has_spaces(name) {
            errors.push_str(&format!(
                "'{path}:{line_number}: username '{}' contains invalid characters. ",
                words[1]
            ));
            continue;
        }
        if users.contains_key(name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{}' found on line {line_number}. ",
                words[1]
            ));
            continue;
        }
        let args: Vec<&[u8]> = words[2..].iter().map(|w| w.as_bytes()).collect();
        let mut user = User::with_channels_default(name, channels_default_all);
        let mut syntax_error = false;
        match rules::merge_selectors(&args) {
            Err(_) => errors.push_str(&format!(
                "{path}:{line_number}: Unmatched parenthesis in selector definition."
            )),
            Ok(merged) => {
                for rule in merged {
                    let rule = trim_end_controls(&rule);
                    if let Err(e) = user.apply(rule) {
                        if e == rules::RuleError::UnknownName {
                            errors.push_str(&format!(
                                "{path}:{line_number}: Error in applying operation '{}': {}. ",
                                String::from_utf8_lossy(rule),
                                e.text()
                            ));
                        } else if !syntax_error {
                            errors.push_str(&format!("{path}:{line_number}: {}. ", e.text()));
                            syntax_error = true;
                        }
                    }
                }
            }
        }
        users.insert(Bytes::copy_from_slice(name), user);
    }
    if !errors.is_empty() {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
        );
        return Err(errors);
    }
    users
        .entry(Bytes::from_static(b"default"))
        .or_insert_with(User::default_user);
    Ok(users)
}

/// `rule` without the tabs and line ends Redis trims from each.
fn trim_end_controls(rule: &[u8]) -> &[u8] {
    let is_control = |c: &u8| matches!(c, b'\t' | b'\r' | b'\n');
    let start = rule
        .iter()
        .position(|c| !is_control(c))
        .unwrap_or(rule.len());
    let end = rule
        .iter()
        .rposition(|c| !is_control(c))
        .map_or(start, |e| e + 1);
    &rule[start..end]
}

/// The ACL file for `users`.
pub(crate) fn render<'a>(users: impl Iterator<Item = &'a User>) -> Vec<u8> {
    let mut out = Vec::new();
    for user in users {
        out.extend_from_slice(&describe::user_line(user));
        out.push(b'\n');
    }
    out
}

/// Writes `contents` to `path` atomically.
pub(crate) fn save(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// C's `strerror` text for an I/O error (Redis's messages quote it).
pub(crate) fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_file_loads_back_the_same_users() {
        let mut alice = User::new(b"alice");
        for rule in ["on", ">pw", "~k*", "+get", "(+set ~s*)"] {
            alice.apply(rule.as_bytes()).unwrap();
        }
        let users = [User::default_user(), alice];
        let text = render(users.iter());
        let loaded = parse(std::str::from_utf8(&text).unwrap(), "f", false).unwrap();
        assert_eq!(loaded.len(), 2);
        for user in &users {
            assert_eq!(loaded[&user.name], *user);
        }
    }

    #[test]
    fn errors_are_gathered_and_nothing_loads() {
        let text = "user a on +nosuch\nbogus\nuser a on\nuser b on ~x ~*x bad\n";
        assert_eq!(
            parse(text, "/f.acl", false).unwrap_err(),
            "/f.acl:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. /f.acl:2 should start with user keyword followed by the username. WARNING: Duplicate user 'a' found on line 3. /f.acl:4: Syntax error. WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
        );
        assert!(
            parse("# only a comment\n\n", "f", false)
                .unwrap()
                .contains_key(&b"default"[..])
        );
    }
}

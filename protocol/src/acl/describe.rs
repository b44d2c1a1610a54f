//! How ACL LIST and ACL GETUSER show a user, byte for byte as Redis 8.8.
//!
//! A user is its flags (`on`/`off`, `nopass`, `sanitize-payload`/`skip-sanitize-payload`),
//! its password hashes (`#…`), then its root selector and each other selector in
//! parentheses. A selector is its key patterns (`~*`, or each of `~p`, `%R~p`, `%W~p`), its
//! channels (`&*`, or `resetchannels` and each `&p`) and its command rules: `+@all` or
//! `-@all` (as the rules start from everything or nothing), then the rules still in effect,
//! in the order given (Redis keeps them rather than deriving them from the bitmap).

use echomq_engine::Reply;

use super::user::{KeyPattern, Selector, User};

/// A key pattern as rules write it.
fn pattern(out: &mut Vec<u8>, key: &KeyPattern) {
    match (key.read, key.write) {
        (true, true) => out.push(b'~'),
        (true, false) => out.extend_from_slice(b"%R~"),
        _ => out.extend_from_slice(b"%W~"),
    }
    out.extend_from_slice(&key.pattern);
}

/// The command rules (GETUSER's `commands`).
pub(crate) fn command_rules(selector: &Selector) -> String {
    let mut out = String::from(if selector.future { "+@all" } else { "-@all" });
    for rule in &selector.rules {
        out.push(' ');
        out.push_str(rule);
    }
    out
}

/// A selector as ACL LIST shows it.
fn describe_selector(selector: &Selector) -> Vec<u8> {
    let mut out = Vec::new();
    if selector.all_keys {
        out.extend_from_slice(b"~* ");
    } else {
        for key in &selector.keys {
            pattern(&mut out, key);
            out.push(b' ');
        }
    }
    if selector.all_channels {
        out.extend_from_slice(b"&* ");
    } else {
        out.extend_from_slice(b"resetchannels ");
        for channel in &selector.channels {
            out.push(b'&');
            out.extend_from_slice(channel);
            out.push(b' ');
        }
    }
    out.extend_from_slice(command_rules(selector).as_bytes());
    out
}

/// A user as ACL LIST, the ACL file and CONFIG REWRITE show it: `user <name> <rules>`.
pub(crate) fn user_line(user: &User) -> Vec<u8> {
    let mut line = b"user ".to_vec();
    line.extend_from_slice(&user.name);
    line.push(b' ');
    line.extend_from_slice(&describe_user(user));
    line
}

/// A user's rules as ACL LIST shows them (after `user <name> `).
pub(crate) fn describe_user(user: &User) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(if user.enabled { b"on " } else { b"off " });
    if user.nopass {
        out.extend_from_slice(b"nopass ");
    }
    out.extend_from_slice(if user.skip_sanitize {
        &b"skip-sanitize-payload "[..]
    } else {
        b"sanitize-payload "
    });
    for password in &user.passwords {
        out.push(b'#');
        out.extend_from_slice(password.as_bytes());
        out.push(b' ');
    }
    for selector in &user.selectors {
        if selector.root {
            out.extend_from_slice(&describe_selector(selector));
        } else {
            out.extend_from_slice(b" (");
            out.extend_from_slice(&describe_selector(selector));
            out.push(b')');
        }
    }
    out
}

/// A selector's fields in GETUSER's reply.
fn selector_fields(selector: &Selector) -> Vec<(Reply, Reply)> {
    let keys = if selector.all_keys {
        b"~*".to_vec()
    } else {
        let mut out = Vec::new();
        for (i, key) in selector.keys.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            pattern(&mut out, key);
        }
        out
    };
    let channels = if selector.all_channels {
        b"&*".to_vec()
    } else {
        let mut out = Vec::new();
        for (i, channel) in selector.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(channel);
        }
        out
    };
    vec![
        (
            Reply::bulk_static("commands"),
            Reply::bulk(command_rules(selector).as_bytes()),
        ),
        (Reply::bulk_static("keys"), Reply::bulk(&keys)),
        (Reply::bulk_static("channels"), Reply::bulk(&channels)),
    ]
}

/// ACL GETUSER's reply.
pub(crate) fn getuser_reply(user: &User) -> Reply {
    let mut flags = vec![Reply::bulk_static(if user.enabled { "on" } else { "off" })];
    if user.nopass {
        flags.push(Reply::bulk_static("nopass"));
    }
    flags.push(Reply::bulk_static(if user.skip_sanitize {
        "skip-sanitize-payload"
    } else {
        "sanitize-payload"
    }));
    let mut fields = vec![
        (Reply::bulk_static("flags"), Reply::Set(flags)),
        (
            Reply::bulk_static("passwords"),
            Reply::Array(
                user.passwords
                    .iter()
                    .map(|p| Reply::bulk(p.as_bytes()))
                    .collect(),
            ),
        ),
    ];
    fields.extend(selector_fields(user.root()));
    fields.push((
        Reply::bulk_static("selectors"),
        Reply::Array(
            user.selectors[1..]
                .iter()
                .map(|s| Reply::Map(selector_fields(s)))
                .collect(),
        ),
    ));
    Reply::Map(fields)
}

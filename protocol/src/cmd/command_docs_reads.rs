//! COMMAND INFO and COMMAND DOCS rows for XREAD and XREADGROUP, as Redis 8.10 answers them
//! (`docs/reference/streams-8.md` §7): Redis 8.8's rows plus 8.10's history entries, the
//! MAXCOUNT and MAXSIZE arguments (`since 8.10.0`, between COUNT and BLOCK), XREADGROUP
//! CLAIM's `since 8.4.0`, and key specs flagged `incomplete` with Redis's notes: the keyword
//! search for `STREAMS` can be fooled by a key, group or consumer named `STREAMS`, so the keys
//! are found by walking the options ([`crate::slot::keys_of`]), for COMMAND GETKEYS and the
//! cluster slot check alike.
//!
//! They are written by hand in the generated rows' types ([`super::command_rows`]), since
//! Redis 8.8's `src/commands/*.json`, which the generator reads, has not got these additions.

use super::command_rows::{Arg, Begin, Find, Row, Spec};

const XREAD_NOTES: &str = "Incomplete because a stream key named STREAMS (or options before \
     it) can shift the STREAMS keyword; fall back to xreadGetKeys";
const XREADGROUP_NOTES: &str = "Incomplete because a consumer/group named STREAMS (or options \
     before GROUP) can shift the STREAMS keyword; fall back to xreadGetKeys";
const CAPS_HISTORY: (&str, &str) = ("8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options.");

const fn streams_key_spec(notes: &'static str, startfrom: i64) -> Spec {
    Spec {
        notes: Some(notes),
        flags: &["RO", "access", "incomplete"],
        begin: Begin::Keyword("STREAMS", startfrom),
        find: Find::Range(-1, 1, 2),
    }
}

/// An argument of `kind` named `name`, nothing else said.
const fn arg(name: &'static str, kind: &'static str) -> Arg {
    Arg {
        name,
        kind,
        display: None,
        key_spec_index: None,
        token: None,
        summary: None,
        since: None,
        deprecated_since: None,
        flags: &[],
        arguments: &[],
    }
}

impl Arg {
    const fn key_spec(self, index: i64) -> Arg {
        Arg {
            key_spec_index: Some(index),
            ..self
        }
    }

    const fn token(self, token: &'static str) -> Arg {
        Arg {
            token: Some(token),
            ..self
        }
    }

    const fn since(self, version: &'static str) -> Arg {
        Arg {
            since: Some(version),
            ..self
        }
    }

    const fn flags(self, flags: &'static [&'static str]) -> Arg {
        Arg { flags, ..self }
    }

    const fn args(self, arguments: &'static [Arg]) -> Arg {
        Arg { arguments, ..self }
    }
}

const STREAMS_BLOCK: Arg = arg("streams", "block").token("STREAMS").args(&[
    arg("key", "key").key_spec(0).flags(&["multiple"]),
    arg("id", "string").flags(&["multiple"]),
]);

pub(crate) static XREAD: Row = Row {
    name: "xread",
    arity: -4,
    keys: (0, 0, 0),
    flags: &["readonly", "blocking", "movablekeys"],
    categories: &["@read", "@stream", "@slow", "@blocking"],
    tips: &[],
    key_specs: &[streams_key_spec(XREAD_NOTES, 1)],
    summary: Some(
        "Returns messages from multiple streams with IDs greater than the ones requested. \
         Blocks until a message is available otherwise.",
    ),
    since: Some("5.0.0"),
    group: "stream",
    complexity: None,
    doc_flags: &[],
    deprecated_since: None,
    replaced_by: None,
    history: &[CAPS_HISTORY],
    arguments: &[
        arg("count", "integer").token("COUNT").flags(&["optional"]),
        arg("maxcount", "integer")
            .token("MAXCOUNT")
            .since("8.10.0")
            .flags(&["optional"]),
        arg("maxsize", "integer")
            .token("MAXSIZE")
            .since("8.10.0")
            .flags(&["optional"]),
        arg("milliseconds", "integer")
            .token("BLOCK")
            .flags(&["optional"]),
        STREAMS_BLOCK,
    ],
    subcommands: &[],
};

pub(crate) static XREADGROUP: Row = Row {
    name: "xreadgroup",
    arity: -7,
    keys: (0, 0, 0),
    flags: &["write", "blocking", "movablekeys"],
    categories: &["@write", "@stream", "@slow", "@blocking"],
    tips: &[],
    key_specs: &[streams_key_spec(XREADGROUP_NOTES, 4)],
    summary: Some(
        "Returns new or historical messages from a stream for a consumer in a group. Blocks \
         until a message is available otherwise.",
    ),
    since: Some("5.0.0"),
    group: "stream",
    complexity: Some(
        "For each stream mentioned: O(M) with M being the number of elements returned. If M \
         is constant (e.g. always asking for the first 10 elements with COUNT), you can \
         consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) \
         time in order to serve the N clients blocked on the stream getting new data.",
    ),
    doc_flags: &[],
    deprecated_since: None,
    replaced_by: None,
    history: &[("8.4.0", "Added the `CLAIM` option."), CAPS_HISTORY],
    arguments: &[
        arg("group-block", "block")
            .token("GROUP")
            .args(&[arg("group", "string"), arg("consumer", "string")]),
        arg("count", "integer").token("COUNT").flags(&["optional"]),
        arg("maxcount", "integer")
            .token("MAXCOUNT")
            .since("8.10.0")
            .flags(&["optional"]),
        arg("maxsize", "integer")
            .token("MAXSIZE")
            .since("8.10.0")
            .flags(&["optional"]),
        arg("milliseconds", "integer")
            .token("BLOCK")
            .flags(&["optional"]),
        arg("min-idle-time", "integer")
            .token("CLAIM")
            .since("8.4.0")
            .flags(&["optional"]),
        arg("noack", "pure-token")
            .token("NOACK")
            .flags(&["optional"]),
        STREAMS_BLOCK,
    ],
    subcommands: &[],
};

/// The row of `name` (lower case) if it is XREAD or XREADGROUP.
pub(crate) fn row(name: &str) -> Option<&'static Row> {
    [&XREAD, &XREADGROUP].into_iter().find(|r| r.name == name)
}

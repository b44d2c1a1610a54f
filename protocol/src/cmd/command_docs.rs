//! Redis 8.8's COMMAND INFO and COMMAND DOCS rows for XGROUP and XINFO, the two stream
//! containers, and every subcommand of theirs: flags, key positions, ACL categories, tips, key
//! specs, and the docs (summary, since, group, complexity, history, arguments), so that
//! cluster-aware clients and tooling that read key specs find each subcommand's key.
//!
//! The rows hold what Redis 8.8.0 answers (taken from its replies; they match its
//! `src/commands/x{group,info}*.json`). Rendering follows Redis's reply layout: flags,
//! categories, tips, key specs and argument flags are sets (RESP3 `~`), a container's
//! subcommands an array in COMMAND INFO and a map in COMMAND DOCS, a doc's optional fields
//! (history, arguments, subcommands) present only when there are some, `display_text` for
//! every argument but a oneof or block one (its name unless it has its own).
//!
//! Invariant (tested): the rows name exactly the subcommands of the engine's table, with the
//! same arity, and each row's key positions are those of its one key spec.

use echomq_engine::Reply;

/// One key spec: the key at argument `index` (or, with `keyword`, after that keyword, searched
/// from argument `index` on), then a range (`lastkey`, `keystep`, `limit`).
pub(crate) struct KeySpec {
    /// Redis's note on the spec, sent first when there is one.
    pub notes: Option<&'static str>,
    pub flags: &'static [&'static str],
    /// `begin_search` by keyword: the keyword, `index` then being its `startfrom`.
    pub keyword: Option<&'static str>,
    pub index: i64,
    pub lastkey: i64,
    pub keystep: i64,
    pub limit: i64,
}

/// One documented argument.
pub(crate) struct Arg {
    pub name: &'static str,
    pub kind: &'static str,
    /// Shown instead of the name (`entries-read` for `entriesread`).
    pub display: Option<&'static str>,
    pub key_spec_index: Option<i64>,
    pub token: Option<&'static str>,
    /// The version that added the argument, when later than the command's.
    pub since: Option<&'static str>,
    pub flags: &'static [&'static str],
    /// A oneof's or block's own arguments.
    pub arguments: &'static [Arg],
}

/// An argument of `kind` named `name`, nothing else said.
pub(crate) const fn arg(name: &'static str, kind: &'static str) -> Arg {
    Arg {
        name,
        kind,
        display: None,
        key_spec_index: None,
        token: None,
        since: None,
        flags: &[],
        arguments: &[],
    }
}

impl Arg {
    pub(crate) const fn display(self, text: &'static str) -> Arg {
        Arg {
            display: Some(text),
            ..self
        }
    }

    pub(crate) const fn key_spec(self, index: i64) -> Arg {
        Arg {
            key_spec_index: Some(index),
            ..self
        }
    }

    pub(crate) const fn token(self, token: &'static str) -> Arg {
        Arg {
            token: Some(token),
            ..self
        }
    }

    pub(crate) const fn since(self, version: &'static str) -> Arg {
        Arg {
            since: Some(version),
            ..self
        }
    }

    pub(crate) const fn flags(self, flags: &'static [&'static str]) -> Arg {
        Arg { flags, ..self }
    }

    pub(crate) const fn args(self, arguments: &'static [Arg]) -> Arg {
        Arg { arguments, ..self }
    }

    /// COMMAND DOCS's map for this argument.
    fn reply(&self) -> Reply {
        let mut fields = vec![
            field("name", bulk(self.name)),
            field("type", bulk(self.kind)),
        ];
        let nested = matches!(self.kind, "oneof" | "block");
        if !nested {
            fields.push(field(
                "display_text",
                bulk(self.display.unwrap_or(self.name)),
            ));
        }
        if let Some(index) = self.key_spec_index {
            fields.push(field("key_spec_index", Reply::Int(index)));
        }
        if let Some(token) = self.token {
            fields.push(field("token", bulk(token)));
        }
        // Redis sends summary, since and deprecated_since here where an argument has them;
        // only `since` is used (XREAD's MAXCOUNT and MAXSIZE, XREADGROUP's CLAIM).
        if let Some(since) = self.since {
            fields.push(field("since", bulk(since)));
        }
        if !self.flags.is_empty() {
            fields.push(field("flags", statuses(self.flags)));
        }
        if nested {
            fields.push(field(
                "arguments",
                Reply::Array(self.arguments.iter().map(Arg::reply).collect()),
            ));
        }
        Reply::Map(fields)
    }
}

/// A command's or subcommand's COMMAND DOCS fields.
pub(crate) struct Docs {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    pub complexity: &'static str,
    pub history: &'static [(&'static str, &'static str)],
    pub arguments: &'static [Arg],
}

impl Docs {
    /// The doc map's fields, in Redis's order, `subcommands` left to the caller.
    fn fields(&self) -> Vec<(Reply, Reply)> {
        let mut fields = vec![
            field("summary", bulk(self.summary)),
            field("since", bulk(self.since)),
            field("group", bulk(self.group)),
        ];
        // XREAD's row has no complexity.
        if !self.complexity.is_empty() {
            fields.push(field("complexity", bulk(self.complexity)));
        }
        if !self.history.is_empty() {
            let history = self
                .history
                .iter()
                .map(|(since, change)| Reply::Array(vec![bulk(since), bulk(change)]))
                .collect();
            fields.push(field("history", Reply::Set(history)));
        }
        if !self.arguments.is_empty() {
            let arguments = self.arguments.iter().map(Arg::reply).collect();
            fields.push(field("arguments", Reply::Array(arguments)));
        }
        fields
    }
}

/// One subcommand's row.
pub(crate) struct Sub {
    pub full_name: &'static str,
    pub arity: i64,
    pub flags: &'static [&'static str],
    /// COMMAND INFO's first key, last key and step.
    pub keys: (i64, i64, i64),
    pub categories: &'static [&'static str],
    pub tips: &'static [&'static str],
    pub key_specs: &'static [KeySpec],
    pub docs: Docs,
}

impl Sub {
    /// COMMAND INFO's entry.
    pub(crate) fn info(&self) -> Reply {
        let (first, last, step) = self.keys;
        Reply::Array(vec![
            bulk(self.full_name),
            Reply::Int(self.arity),
            statuses(self.flags),
            Reply::Int(first),
            Reply::Int(last),
            Reply::Int(step),
            statuses(self.categories),
            Reply::Set(self.tips.iter().map(|&t| bulk(t)).collect()),
            Reply::Set(self.key_specs.iter().map(key_spec).collect()),
            Reply::Set(vec![]),
        ])
    }

    /// COMMAND DOCS's map.
    pub(crate) fn docs(&self) -> Reply {
        Reply::Map(self.docs.fields())
    }
}

/// A container's row.
pub(crate) struct Container {
    pub name: &'static str,
    pub arity: i64,
    pub categories: &'static [&'static str],
    pub docs: Docs,
    pub subcommands: &'static [Sub],
}

impl Container {
    /// COMMAND INFO's entry: no flags or keys of its own, its subcommands' entries last.
    pub(crate) fn info(&self) -> Reply {
        Reply::Array(vec![
            bulk(self.name),
            Reply::Int(self.arity),
            Reply::Set(vec![]),
            Reply::Int(0),
            Reply::Int(0),
            Reply::Int(0),
            statuses(self.categories),
            Reply::Set(vec![]),
            Reply::Set(vec![]),
            Reply::Array(self.subcommands.iter().map(Sub::info).collect()),
        ])
    }

    /// COMMAND DOCS's map, its subcommands' docs by full name last.
    pub(crate) fn docs(&self) -> Reply {
        let mut fields = self.docs.fields();
        let subs = self
            .subcommands
            .iter()
            .map(|s| (bulk(s.full_name), s.docs()))
            .collect();
        fields.push(field("subcommands", Reply::Map(subs)));
        Reply::Map(fields)
    }
}

/// The containers described here.
pub(crate) const CONTAINERS: [&Container; 2] = [&XGROUP, &XINFO];

/// The row of container `name` (lower case), if it is one described here.
pub(crate) fn container(name: &str) -> Option<&'static Container> {
    CONTAINERS.into_iter().find(|c| c.name == name)
}

/// The COMMAND INFO entry and the COMMAND DOCS map of a `container|sub` name (any case).
pub(crate) fn subcommand(full_name: &[u8]) -> Option<(Reply, Reply)> {
    CONTAINERS
        .iter()
        .flat_map(|c| c.subcommands)
        .find(|s| s.full_name.as_bytes().eq_ignore_ascii_case(full_name))
        .map(|s| (s.info(), s.docs()))
}

fn bulk(text: &'static str) -> Reply {
    Reply::bulk_static(text)
}

fn field(name: &'static str, value: Reply) -> (Reply, Reply) {
    (Reply::bulk_static(name), value)
}

fn statuses(names: &'static [&'static str]) -> Reply {
    Reply::Set(names.iter().map(|&n| Reply::Status(n)).collect())
}

fn key_spec(spec: &KeySpec) -> Reply {
    let map = |pairs: Vec<(&'static str, Reply)>| {
        Reply::Map(pairs.into_iter().map(|(k, v)| field(k, v)).collect())
    };
    let begin_search = match spec.keyword {
        None => map(vec![
            ("type", bulk("index")),
            ("spec", map(vec![("index", Reply::Int(spec.index))])),
        ]),
        Some(keyword) => map(vec![
            ("type", bulk("keyword")),
            (
                "spec",
                map(vec![
                    ("keyword", bulk(keyword)),
                    ("startfrom", Reply::Int(spec.index)),
                ]),
            ),
        ]),
    };
    let mut fields = Vec::new();
    if let Some(notes) = spec.notes {
        fields.push(("notes", bulk(notes)));
    }
    fields.extend([
        ("flags", statuses(spec.flags)),
        ("begin_search", begin_search),
        (
            "find_keys",
            map(vec![
                ("type", bulk("range")),
                (
                    "spec",
                    map(vec![
                        ("lastkey", Reply::Int(spec.lastkey)),
                        ("keystep", Reply::Int(spec.keystep)),
                        ("limit", Reply::Int(spec.limit)),
                    ]),
                ),
            ]),
        ),
    ]);
    map(fields)
}

pub(crate) const XGROUP: Container = Container {
    name: "xgroup",
    arity: -2,
    categories: &["@slow"],
    docs: Docs {
        summary: "A container for consumer groups commands.",
        since: "5.0.0",
        group: "stream",
        complexity: "Depends on subcommand.",
        history: &[],
        arguments: &[],
    },
    subcommands: &[
        Sub {
            full_name: "xgroup|create",
            arity: -5,
            flags: &["write", "denyoom"],
            keys: (2, 2, 1),
            categories: &["@write", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RW", "insert"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Creates a consumer group.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[("7.0.0", "Added the `entries_read` named argument.")],
                arguments: &[
                    arg("key", "key").key_spec(0),
                    arg("group", "string"),
                    arg("id-selector", "oneof")
                        .args(&[arg("id", "string"), arg("new-id", "pure-token").token("$")]),
                    arg("mkstream", "pure-token")
                        .token("MKSTREAM")
                        .flags(&["optional"]),
                    arg("entriesread", "integer")
                        .display("entries-read")
                        .token("ENTRIESREAD")
                        .flags(&["optional"]),
                ],
            },
        },
        Sub {
            full_name: "xgroup|createconsumer",
            arity: 5,
            flags: &["write", "denyoom"],
            keys: (2, 2, 1),
            categories: &["@write", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RW", "insert"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Creates a consumer in a consumer group.",
                since: "6.2.0",
                group: "stream",
                complexity: "O(1)",
                history: &[],
                arguments: &[
                    arg("key", "key").key_spec(0),
                    arg("group", "string"),
                    arg("consumer", "string"),
                ],
            },
        },
        Sub {
            full_name: "xgroup|delconsumer",
            arity: 5,
            flags: &["write"],
            keys: (2, 2, 1),
            categories: &["@write", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RW", "delete"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Deletes a consumer from a consumer group.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[],
                arguments: &[
                    arg("key", "key").key_spec(0),
                    arg("group", "string"),
                    arg("consumer", "string"),
                ],
            },
        },
        Sub {
            full_name: "xgroup|destroy",
            arity: 4,
            flags: &["write"],
            keys: (2, 2, 1),
            categories: &["@write", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RW", "delete"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Destroys a consumer group.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(N) where N is the number of entries in the group's pending entries list (PEL).",
                history: &[],
                arguments: &[arg("key", "key").key_spec(0), arg("group", "string")],
            },
        },
        Sub {
            full_name: "xgroup|help",
            arity: 2,
            flags: &["loading", "stale"],
            keys: (0, 0, 0),
            categories: &["@stream", "@slow"],
            tips: &[],
            key_specs: &[],
            docs: Docs {
                summary: "Returns helpful text about the different subcommands.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[],
                arguments: &[],
            },
        },
        Sub {
            full_name: "xgroup|setid",
            arity: -5,
            flags: &["write"],
            keys: (2, 2, 1),
            categories: &["@write", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RW", "update"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Sets the last-delivered ID of a consumer group.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[("7.0.0", "Added the optional `entries_read` argument.")],
                arguments: &[
                    arg("key", "key").key_spec(0),
                    arg("group", "string"),
                    arg("id-selector", "oneof")
                        .args(&[arg("id", "string"), arg("new-id", "pure-token").token("$")]),
                    arg("entriesread", "integer")
                        .display("entries-read")
                        .token("ENTRIESREAD")
                        .flags(&["optional"]),
                ],
            },
        },
    ],
};

pub(crate) const XINFO: Container = Container {
    name: "xinfo",
    arity: -2,
    categories: &["@slow"],
    docs: Docs {
        summary: "A container for stream introspection commands.",
        since: "5.0.0",
        group: "stream",
        complexity: "Depends on subcommand.",
        history: &[],
        arguments: &[],
    },
    subcommands: &[
        Sub {
            full_name: "xinfo|consumers",
            arity: 4,
            flags: &["readonly"],
            keys: (2, 2, 1),
            categories: &["@read", "@stream", "@slow"],
            tips: &["nondeterministic_output"],
            key_specs: &[KeySpec {
                flags: &["RO", "access"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Returns a list of the consumers in a consumer group.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[(
                    "7.2.0",
                    "Added the `inactive` field, and changed the meaning of `idle`.",
                )],
                arguments: &[arg("key", "key").key_spec(0), arg("group", "string")],
            },
        },
        Sub {
            full_name: "xinfo|groups",
            arity: 3,
            flags: &["readonly"],
            keys: (2, 2, 1),
            categories: &["@read", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RO", "access"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Returns a list of the consumer groups of a stream.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[("7.0.0", "Added the `entries-read` and `lag` fields")],
                arguments: &[arg("key", "key").key_spec(0)],
            },
        },
        Sub {
            full_name: "xinfo|help",
            arity: 2,
            flags: &["loading", "stale"],
            keys: (0, 0, 0),
            categories: &["@stream", "@slow"],
            tips: &[],
            key_specs: &[],
            docs: Docs {
                summary: "Returns helpful text about the different subcommands.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[],
                arguments: &[],
            },
        },
        Sub {
            full_name: "xinfo|stream",
            arity: -3,
            flags: &["readonly"],
            keys: (2, 2, 1),
            categories: &["@read", "@stream", "@slow"],
            tips: &[],
            key_specs: &[KeySpec {
                flags: &["RO", "access"],
                index: 2,
                lastkey: 0,
                keystep: 1,
                limit: 0,
                keyword: None,
                notes: None,
            }],
            docs: Docs {
                summary: "Returns information about a stream.",
                since: "5.0.0",
                group: "stream",
                complexity: "O(1)",
                history: &[
                    ("6.0.0", "Added the `FULL` modifier."),
                    (
                        "7.0.0",
                        "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields",
                    ),
                    (
                        "7.2.0",
                        "Added the `active-time` field, and changed the meaning of `seen-time`.",
                    ),
                    (
                        "8.6.0",
                        "Added the `idmp-duration`, `idmp-maxsize`, `pids-tracked`, `iids-tracked`, `iids-added` and `iids-duplicates` fields for IDMP tracking.",
                    ),
                    (
                        "8.8.0",
                        "Added the `nacked-count` field to consumer groups in `FULL` output.",
                    ),
                ],
                arguments: &[
                    arg("key", "key").key_spec(0),
                    arg("full-block", "block").flags(&["optional"]).args(&[
                        arg("full", "pure-token").token("FULL"),
                        arg("count", "integer").token("COUNT").flags(&["optional"]),
                    ]),
                ],
            },
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_are_the_engine_tables_subcommands_with_their_arity_and_keys() {
        for container in CONTAINERS {
            let Some(found) = super::super::lookup(container.name.as_bytes()) else {
                panic!("{} is not a command", container.name);
            };
            let spec = found.spec();
            assert_eq!(i64::from(spec.arity), container.arity, "{}", container.name);
            let mut ours: Vec<(&str, i64)> = spec
                .subcommands
                .iter()
                .map(|s| (s.full_name, i64::from(s.arity)))
                .collect();
            let mut rows: Vec<(&str, i64)> = container
                .subcommands
                .iter()
                .map(|s| (s.full_name, s.arity))
                .collect();
            ours.sort_unstable();
            rows.sort_unstable();
            assert_eq!(ours, rows, "{}", container.name);
            for sub in container.subcommands {
                let expected = match sub.key_specs {
                    [] => (0, 0, 0),
                    [one] => (one.index, one.index + one.lastkey, one.keystep),
                    _ => panic!("{} has several key specs", sub.full_name),
                };
                assert_eq!(sub.keys, expected, "{}", sub.full_name);
            }
        }
    }

    #[test]
    fn a_subcommand_is_found_by_its_full_name_in_any_case() {
        assert!(subcommand(b"XGROUP|Create").is_some());
        assert!(subcommand(b"xinfo|stream").is_some());
        assert!(subcommand(b"xgroup|nosuch").is_none());
        assert!(subcommand(b"xgroup").is_none());
    }
}

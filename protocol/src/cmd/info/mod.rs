//! `INFO [section ...]`: Redis 8.8's sections, fields, order and units, lines ending in CRLF.
//!
//! Which sections: none named means the default ones; `default` adds them, `all` means every
//! section of Redis's own, `everything` those plus the extension sections (Redis's module
//! sections; echomq's one is `archive`), and other names (any case) pick sections; an
//! unknown name adds nothing. Whatever was asked, sections come out in Redis's fixed order
//! ([`SECTIONS`]), separated by an empty line, extension sections last. `modules` also asks
//! for every extension section, and `all` with names adds the named extension sections, as
//! Redis does for modules' sections.
//!
//! The fields are Redis's; what echomq does not have (RDB, replicas, Lua, pub/sub
//! until it lands) reports what Redis reports without it: zero, `-1`, `ok`, or nothing. The
//! sections are written by `process.rs` (server, clients, memory, persistence, threads,
//! cpu), `stats.rs` (stats, replication, hotkeys, modules, commandstats, errorstats,
//! latencystats, cluster), `keyspace.rs` (keyspace, keysizes) and `archive.rs` (archive).

mod archive;
mod keyspace;
mod process;
mod stats;

use std::fmt::Display;
use std::fmt::Write as _;

use bytes::Bytes;
use echomq_engine::Reply;

use super::Ctx;

/// One of Redis's sections: its INFO name, its header, whether INFO alone shows it.
struct Section {
    name: &'static str,
    title: &'static str,
    default: bool,
    write: fn(&mut Ctx<'_>, &mut Lines),
}

const fn section(
    name: &'static str,
    title: &'static str,
    default: bool,
    write: fn(&mut Ctx<'_>, &mut Lines),
) -> Section {
    Section {
        name,
        title,
        default,
        write,
    }
}

/// Redis 8.8's sections, in its order.
const SECTIONS: &[Section] = &[
    section("server", "Server", true, process::server),
    section("clients", "Clients", true, process::clients),
    section("memory", "Memory", true, process::memory),
    section("persistence", "Persistence", true, process::persistence),
    section("threads", "Threads", true, process::threads),
    section("stats", "Stats", true, stats::stats),
    section("replication", "Replication", true, stats::replication),
    section("cpu", "CPU", true, process::cpu),
    section("hotkeys", "Hotkeys", true, |_, _| {}),
    section("modules", "Modules", true, |_, _| {}),
    section("commandstats", "Commandstats", false, stats::commandstats),
    section("errorstats", "Errorstats", true, stats::errorstats),
    section("latencystats", "Latencystats", false, stats::latencystats),
    section("cluster", "Cluster", true, stats::cluster),
    section("keyspace", "Keyspace", true, keyspace::keyspace),
    section("keysizes", "Keysizes", true, keyspace::keysizes),
];

/// echomq's extension sections (Redis's place for module sections: after its own).
const EXTENSIONS: &[Section] = &[section("archive", "Archive", false, archive::archive)];

/// The fields of one section being written.
pub(super) struct Lines {
    text: String,
}

impl Lines {
    /// `name:value`.
    pub fn field(&mut self, name: &str, value: impl Display) {
        let _ = write!(self.text, "{name}:{value}\r\n");
    }
}

/// `1.23M`-style sizes, as Redis's `bytesToHuman`.
pub(super) fn human(bytes: u64) -> String {
    let b = bytes as f64;
    const K: f64 = 1024.0;
    match bytes {
        0..1024 => format!("{bytes}B"),
        1024..1_048_576 => format!("{:.2}K", b / K),
        1_048_576..1_073_741_824 => format!("{:.2}M", b / (K * K)),
        1_073_741_824..1_099_511_627_776 => format!("{:.2}G", b / (K * K * K)),
        _ => format!("{:.2}T", b / (K * K * K * K)),
    }
}

/// `text` fit for an INFO value: no CR or LF, which would end the field.
pub(super) fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// What INFO's arguments ask for.
struct Wanted {
    names: Vec<String>,
    all: bool,
    everything: bool,
}

impl Wanted {
    fn parse(args: &[&[u8]]) -> Wanted {
        let mut wanted = Wanted {
            names: Vec::new(),
            all: false,
            everything: false,
        };
        if args.is_empty() {
            wanted.add_defaults();
        }
        for arg in args {
            let name = String::from_utf8_lossy(arg).to_ascii_lowercase();
            match name.as_str() {
                "default" => wanted.add_defaults(),
                "all" => wanted.all = true,
                "everything" => {
                    wanted.all = true;
                    wanted.everything = true;
                }
                _ => wanted.names.push(name),
            }
        }
        wanted
    }

    fn add_defaults(&mut self) {
        let defaults = SECTIONS.iter().filter(|s| s.default);
        // Redis's default list names the modules section `module_list`.
        self.names.extend(defaults.map(|s| match s.name {
            "modules" => "module_list".to_string(),
            name => name.to_string(),
        }));
    }

    fn named(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    fn shows(&self, section: &Section) -> bool {
        self.all
            || self.named(section.name)
            || (section.name == "modules" && self.named("module_list"))
    }

    fn shows_extension(&self, section: &Section) -> bool {
        self.everything || self.named("modules") || self.named(section.name)
    }
}

/// INFO.
pub(crate) fn info(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let wanted = Wanted::parse(&argv[1..]);
    let mut lines = Lines {
        text: String::new(),
    };
    let chosen = SECTIONS
        .iter()
        .filter(|s| wanted.shows(s))
        .chain(EXTENSIONS.iter().filter(|s| wanted.shows_extension(s)));
    for (written, section) in chosen.enumerate() {
        if written > 0 {
            lines.text.push_str("\r\n");
        }
        let _ = write!(lines.text, "# {}\r\n", section.title);
        (section.write)(ctx, &mut lines);
    }
    Reply::Verbatim(Bytes::from(lines.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(args: &[&str]) -> Vec<&'static str> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let wanted = Wanted::parse(&args);
        SECTIONS
            .iter()
            .filter(|s| wanted.shows(s))
            .chain(EXTENSIONS.iter().filter(|s| wanted.shows_extension(s)))
            .map(|s| s.name)
            .collect()
    }

    #[test]
    fn sections_come_in_redis_order_whatever_the_request_order() {
        assert_eq!(shown(&["KEYSPACE", "server"]), ["server", "keyspace"]);
        assert_eq!(shown(&["nosuch"]), Vec::<&str>::new());
        assert!(!shown(&[]).contains(&"commandstats"));
        assert!(shown(&[]).contains(&"modules"));
        assert_eq!(shown(&[]), shown(&["default"]));
        assert!(shown(&["default", "commandstats"]).contains(&"commandstats"));
    }

    #[test]
    fn all_is_redis_sections_and_everything_adds_the_extensions() {
        assert_eq!(shown(&["all"]).len(), SECTIONS.len());
        assert_eq!(
            shown(&["everything"]).len(),
            SECTIONS.len() + EXTENSIONS.len()
        );
        assert_eq!(shown(&["archive"]), ["archive"]);
        assert_eq!(shown(&["modules"]), ["modules", "archive"]);
        assert!(shown(&["all", "archive"]).contains(&"archive"));
    }

    #[test]
    fn human_sizes_read_as_redis_writes_them() {
        assert_eq!(human(0), "0B");
        assert_eq!(human(751_336), "733.73K");
        assert_eq!(human(8_093_696), "7.72M");
        assert_eq!(human(25_276_502_016), "23.54G");
    }
}

//! Checking the configuration's lines in order, as Redis's `loadServerConfigFromString`
//! does, and sorting them: what `echomq serve` needs before the server exists (the
//! addresses, the log, daemonizing; [`Startup`]) and the lines set on the server once it is
//! bound ([`Setting`]), each keeping its line for Redis's fatal message.
//!
//! `save` lines add up (the first one replaces the default points, `save ""` clears them);
//! without any, Redis's default points stand. A line naming no directive is fatal: with no
//! value as Redis's "Bad directive", with values as Redis's module configuration that no
//! module claimed ([`Startup::unclaimed`]).

use echomq_protocol::config_file::directives::{self, Directive};
use echomq_protocol::config_file::{Fatal, Line, implemented, split_args};

/// Redis 8.8's default save points (with or without a config file).
pub const SAVE_DEFAULT: &str = "3600 1 300 100 60 10000";

/// What the server needs before it exists, and the lines to apply to it.
#[derive(Debug)]
pub struct Startup {
    /// `port`.
    pub port: u16,
    /// `bind`'s addresses (echomq's default: loopback only).
    pub bind: Vec<String>,
    /// `tcp-backlog`.
    pub tcp_backlog: u32,
    /// `cluster-enabled`.
    pub cluster_enabled: bool,
    /// `databases`.
    pub databases: usize,
    /// `daemonize`.
    pub daemonize: bool,
    /// `pidfile` (empty: none, unless daemonized).
    pub pidfile: String,
    /// `logfile` (empty: stdout).
    pub logfile: String,
    /// `loglevel`.
    pub loglevel: String,
    /// `supervised`.
    pub supervised: String,
    /// The save points, `seconds changes` pairs.
    pub save: String,
    /// The lines to apply once the server is bound, in order.
    pub settings: Vec<Setting>,
    /// `rename-command` lines: from, to, and the line.
    pub renames: Vec<(String, String, Line)>,
    /// Lines naming no directive, with values (`name value…`): Redis takes them for a
    /// module's configuration, and aborts when no module claims them.
    pub unclaimed: Vec<String>,
    /// The directives set that echomq accepts without effect, each once.
    pub no_effect: Vec<&'static str>,
}

/// One line to apply to the bound server.
#[derive(Debug)]
pub struct Setting {
    /// What to do.
    pub what: SettingKind,
    /// The line, for the fatal message.
    pub line: Line,
}

/// What a line sets.
#[derive(Debug)]
pub enum SettingKind {
    /// A parameter CONFIG SET takes, with its value (several words joined by spaces).
    Param(String, String),
    /// A directive accepted without effect (or applied by `echomq serve` itself), kept for
    /// CONFIG GET.
    Accepted(&'static Directive, String),
    /// `user name rules…`.
    User(Vec<String>),
    /// `aclfile path`.
    Aclfile(String),
}

impl Default for Startup {
    fn default() -> Self {
        Startup {
            port: 6379,
            bind: vec!["127.0.0.1".into()],
            tcp_backlog: echomq_protocol::server::TCP_BACKLOG_DEFAULT,
            cluster_enabled: false,
            databases: 16,
            daemonize: false,
            pidfile: String::new(),
            logfile: String::new(),
            loglevel: "notice".into(),
            supervised: "no".into(),
            save: SAVE_DEFAULT.into(),
            settings: Vec::new(),
            renames: Vec::new(),
            unclaimed: Vec::new(),
            no_effect: Vec::new(),
        }
    }
}

/// Directives `echomq serve` applies itself (they also show in CONFIG GET).
const SERVE_APPLIES: &[&str] = &["daemonize", "pidfile", "logfile", "loglevel", "supervised"];

fn integer(value: &str, min: i64, max: i64) -> Result<i64, String> {
    let n: i64 = value
        .parse()
        .map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

fn yes_no(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

fn one_of(value: &str, allowed: &[&str]) -> Result<String, String> {
    let lower = value.to_ascii_lowercase();
    if allowed.contains(&lower.as_str()) {
        Ok(lower)
    } else {
        Err(format!(
            "argument(s) must be one of the following: {}",
            allowed.join(", ")
        ))
    }
}

/// Checks and sorts `lines`.
pub fn sort(lines: Vec<Line>) -> Result<Startup, Fatal> {
    let mut startup = Startup::default();
    let mut save_loaded = false;
    for line in lines {
        let name = line.args[0].clone();
        let argc = line.args.len();
        let Some(d) = directives::lookup(&name) else {
            if directives::DEPRECATED
                .iter()
                .any(|(n, words)| name == *n && argc == *words)
            {
                continue;
            }
            match (name.as_str(), argc) {
                ("rename-command", 3) => {
                    let (from, to) = (line.args[1].clone(), line.args[2].clone());
                    startup.renames.push((from, to, line));
                }
                ("user", 2..) => {
                    let words = line.args.clone();
                    startup.settings.push(Setting {
                        what: SettingKind::User(words),
                        line,
                    });
                }
                ("loadmodule", 2..) => no_effect(&mut startup, "loadmodule"),
                ("sentinel", 1) => no_effect(&mut startup, "sentinel"),
                ("sentinel", _) => {
                    return Err(Fatal::at(
                        &line,
                        "sentinel directive while not in sentinel mode",
                    ));
                }
                (_, 0 | 1) => {
                    return Err(Fatal::at(
                        &line,
                        "Bad directive or wrong number of arguments",
                    ));
                }
                _ => startup.unclaimed.push(line.args.join(" ")),
            }
            continue;
        };
        if !d.multi() && argc != 2 {
            return Err(Fatal::at(&line, "wrong number of arguments"));
        }
        // A multi-word directive given as one word ("--save '900 1'") is split again.
        let values: Vec<String> = if d.multi() && argc == 2 && !line.args[1].is_empty() {
            split_args(&line.args[1])
                .unwrap_or_default()
                .into_iter()
                .map(|w| String::from_utf8_lossy(&w).into_owned())
                .collect()
        } else {
            line.args[1..].to_vec()
        };
        let value = values.join(" ");
        let at = |reason: String| Fatal::at(&line, reason);
        match d.name {
            "port" => startup.port = integer(&value, 0, 65535).map_err(at)? as u16,
            "bind" => startup.bind = values.clone(),
            "tcp-backlog" => {
                startup.tcp_backlog = integer(&value, 0, i64::from(i32::MAX)).map_err(at)? as u32;
            }
            "cluster-enabled" => startup.cluster_enabled = yes_no(&value).map_err(at)?,
            "databases" => {
                startup.databases = integer(&value, 1, i64::from(i32::MAX)).map_err(at)? as usize;
            }
            "save" => {
                let points = if values.iter().all(String::is_empty) {
                    Vec::new()
                } else {
                    values.clone()
                };
                let valid = points.len() % 2 == 0
                    && points.iter().enumerate().all(|(i, w)| {
                        w.parse::<i64>()
                            .is_ok_and(|n| if i % 2 == 0 { n >= 1 } else { n >= 0 })
                    });
                if !valid {
                    return Err(at("Invalid save parameters".into()));
                }
                if points.is_empty() || !save_loaded {
                    startup.save.clear();
                }
                save_loaded = true;
                for point in points {
                    if !startup.save.is_empty() {
                        startup.save.push(' ');
                    }
                    startup.save.push_str(&point);
                }
            }
            "aclfile" => startup.settings.push(Setting {
                what: SettingKind::Aclfile(value),
                line,
            }),
            name if SERVE_APPLIES.contains(&name) => {
                match name {
                    "daemonize" => startup.daemonize = yes_no(&value).map_err(at)?,
                    "pidfile" => startup.pidfile = value.clone(),
                    "logfile" => startup.logfile = value.clone(),
                    "loglevel" => {
                        let names: Vec<&str> =
                            crate::logging::LEVELS.iter().map(|(n, _)| *n).collect();
                        startup.loglevel = one_of(&value, &names).map_err(at)?;
                    }
                    _ => {
                        startup.supervised =
                            one_of(&value, &["upstart", "systemd", "auto", "no"]).map_err(at)?;
                    }
                }
                startup.settings.push(Setting {
                    what: SettingKind::Accepted(d, value),
                    line,
                });
            }
            name if implemented(name) => startup.settings.push(Setting {
                what: SettingKind::Param(name.to_string(), value),
                line,
            }),
            name => {
                // `disable-thp` takes effect through the accepted value the server reads.
                if name != "disable-thp" {
                    no_effect(&mut startup, name);
                }
                startup.settings.push(Setting {
                    what: SettingKind::Accepted(d, value),
                    line,
                });
            }
        }
    }
    Ok(startup)
}

fn no_effect(startup: &mut Startup, name: &'static str) {
    if !startup.no_effect.contains(&name) {
        startup.no_effect.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use echomq_protocol::config_file::load;

    fn sorted(text: &str) -> Result<Startup, Fatal> {
        sort(load(None, text)?)
    }

    #[test]
    fn save_lines_add_up_and_reset() {
        assert_eq!(sorted("").unwrap().save, SAVE_DEFAULT);
        assert_eq!(
            sorted("save 900 1\nsave 300 10").unwrap().save,
            "900 1 300 10"
        );
        assert_eq!(sorted("save 900 1\nsave \"\"").unwrap().save, "");
        assert_eq!(sorted("save \"\"\nsave 5 1").unwrap().save, "5 1");
        assert_eq!(sorted("save '60 1 30 2'").unwrap().save, "60 1 30 2");
        let err = sorted("save 0 1").unwrap_err().to_string();
        assert!(
            err.ends_with(">>> 'save 0 1'\nInvalid save parameters"),
            "{err}"
        );
    }

    #[test]
    fn startup_lines_and_unknown_ones() {
        let s =
            sorted("port 7000\nbind 127.0.0.1 -::1\nloglevel WARNING\ntcp-keepalive 300").unwrap();
        assert_eq!(
            (s.port, s.bind.len(), s.loglevel.as_str()),
            (7000, 2, "warning")
        );
        assert_eq!(s.no_effect, ["tcp-keepalive"]);
        let err = sorted("nosuch").unwrap_err().to_string();
        assert!(
            err.ends_with("Bad directive or wrong number of arguments"),
            "{err}"
        );
        assert_eq!(sorted("nosuch 1 2").unwrap().unclaimed, ["nosuch 1 2"]);
        let err = sorted("port 1 2").unwrap_err().to_string();
        assert!(err.ends_with("wrong number of arguments"), "{err}");
        let err = sorted("port x").unwrap_err().to_string();
        assert!(
            err.ends_with("argument couldn't be parsed into an integer"),
            "{err}"
        );
        assert!(sorted("list-max-ziplist-entries 5").is_ok());
    }
}

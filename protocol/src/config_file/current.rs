//! The server's current value of every directive, for CONFIG GET (the directives echomq
//! accepts without implementing them) and CONFIG REWRITE (all of them, in the form Redis
//! writes).

use echomq_engine::Config as EngineConfig;

use super::directives::{self, DIRECTIVES, Directive, Kind};
use super::quote;
use super::rewrite::OptionLines;
use crate::state::Settings;
use crate::state::settings::{Param, all_params, param, parse_memory};

/// Whether echomq implements `d` (a CONFIG parameter of its own carries it).
pub(crate) fn implemented(d: &Directive) -> Option<&'static Param> {
    param(d.name).or_else(|| d.alias.and_then(param))
}

/// The value of an accepted (not implemented) directive: what the config file or CONFIG SET
/// gave it, else Redis's default.
pub(crate) fn accepted_value(settings: &Settings, d: &'static Directive) -> String {
    settings
        .accepted
        .get(d.name)
        .cloned()
        .unwrap_or_else(|| d.default.to_string())
}

/// The value CONFIG GET shows for `d`.
pub(crate) fn value(settings: &Settings, engine: &EngineConfig, d: &'static Directive) -> String {
    match implemented(d) {
        Some(p) => (p.get)(settings, engine),
        None => accepted_value(settings, d),
    }
}

/// Checks and normalizes a value for an accepted directive as CONFIG SET or the file give it.
pub(crate) fn accept(
    d: &'static Directive,
    value: &str,
) -> Result<String, crate::error::ConfigWhy> {
    use crate::error::ConfigWhy;
    match d.kind {
        Kind::Bool => match value.to_ascii_lowercase().as_str() {
            v @ ("yes" | "no") => Ok(v.to_string()),
            _ => Err(ConfigWhy::NotYesNo),
        },
        Kind::Int => {
            let n = echomq_engine::command::parse_i64(value.as_bytes())
                .map_err(|_| ConfigWhy::NotInteger)?;
            within(d, i128::from(n))?;
            Ok(n.to_string())
        }
        Kind::Memory => {
            let n = parse_memory(value).ok_or(ConfigWhy::NotMemory)?;
            within(d, i128::from(n))?;
            // Redis's `resizeReplicationBacklog` raises a smaller backlog to 16 KB.
            const REPL_BACKLOG_MIN: u64 = 16 * 1024;
            let n = if d.name == "repl-backlog-size" {
                n.max(REPL_BACKLOG_MIN)
            } else {
                n
            };
            Ok(n.to_string())
        }
        Kind::Percent => percent_value(d, value),
        Kind::Special if d.name == "oom-score-adj-values" => oom_score_adj_values(value),
        Kind::Enum => match directives::enum_words(d.name) {
            Some(words) => enum_value(d, words, value),
            None => Ok(value.to_string()),
        },
        _ => Ok(value.to_string()),
    }
}

/// `oom-score-adj-values`: three integers from -2000 to 2000, read as `strtoll` reads them
/// (Redis's `setConfigOOMScoreAdjValuesOption`).
fn oom_score_adj_values(value: &str) -> Result<String, crate::error::ConfigWhy> {
    use crate::error::ConfigWhy;
    let words: Vec<&str> = if value.is_empty() {
        Vec::new()
    } else {
        value.split(' ').collect()
    };
    if words.len() != 3 {
        return Err(ConfigWhy::Other("wrong number of arguments".into()));
    }
    let invalid = || {
        ConfigWhy::Other(
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into(),
        )
    };
    let mut shown = Vec::with_capacity(3);
    for word in words {
        let text = word.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let (negative, digits) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        // `strtoll` reads no digits as 0 and stops at the first byte that is not one.
        if !digits.bytes().all(|b| b.is_ascii_digit()) || (digits.is_empty() && !text.is_empty()) {
            return Err(invalid());
        }
        let magnitude: i64 = if digits.is_empty() {
            0
        } else {
            digits.parse().unwrap_or(i64::MAX)
        };
        let n = if negative { -magnitude } else { magnitude };
        if !(-2000..=2000).contains(&n) {
            return Err(invalid());
        }
        shown.push(n.to_string());
    }
    Ok(shown.join(" "))
}

/// Redis's `numericBoundaryCheck` of `n` against `d`'s bounds.
fn within(d: &Directive, n: i128) -> Result<(), crate::error::ConfigWhy> {
    match directives::numeric_bounds(d.name) {
        Some((min, max)) if n < min || n > max => {
            Err(crate::error::ConfigWhy::OutOfRange { min, max })
        }
        _ => Ok(()),
    }
}

/// A value of bytes or a percentage (`10%`), as Redis's `numericParseString` reads a
/// parameter that takes either; a percentage is shown as given.
fn percent_value(d: &Directive, value: &str) -> Result<String, crate::error::ConfigWhy> {
    use crate::error::ConfigWhy;
    if let Some(n) = parse_memory(value) {
        within(d, i128::from(n))?;
        return Ok(n.to_string());
    }
    let percent = value
        .strip_suffix('%')
        .filter(|digits| !digits.is_empty())
        .and_then(|digits| echomq_engine::command::parse_i64(digits.as_bytes()).ok())
        .filter(|&p| p >= 0);
    let Some(p) = percent else {
        return Err(ConfigWhy::Other(
            "argument must be a memory or percent value".into(),
        ));
    };
    if let Some((lo, _)) = directives::numeric_bounds(d.name)
        && -i128::from(p) < lo
    {
        return Err(ConfigWhy::Other(format!(
            "percentage argument must be less or equal to {}",
            -lo
        )));
    }
    Ok(format!("{p}%"))
}

/// An enumerated directive's value, as Redis's `enumConfigSet` takes it and `enumConfigGet`
/// shows it: each word (any case; a [`MULTI`](directives::MULTI) directive's words are split
/// at single spaces and OR-ed) must be one of `words`; the value shows as the first word
/// standing for exactly it, else as the flags' words in table order.
fn enum_value(
    d: &Directive,
    words: &directives::EnumWords,
    value: &str,
) -> Result<String, crate::error::ConfigWhy> {
    use crate::error::ConfigWhy;
    let given: Vec<&str> = if d.multi() {
        if value.is_empty() {
            Vec::new()
        } else {
            value.split(' ').collect()
        }
    } else {
        vec![value]
    };
    let refused = ConfigWhy::NotOneOf(words.listed);
    if given.is_empty() {
        return Err(refused);
    }
    let mut bits = 0;
    for word in given {
        let mut matched = false;
        for (name, v) in words.words {
            if name.eq_ignore_ascii_case(word) {
                bits |= v;
                matched = true;
            }
        }
        if !matched {
            return Err(refused);
        }
    }
    if let Some((flags, refusal)) = words.exclusive
        && bits & flags == flags
    {
        return Err(ConfigWhy::Other(refusal.into()));
    }
    if let Some((name, _)) = words.words.iter().find(|(_, v)| *v == bits) {
        return Ok(name.to_string());
    }
    let mut unmatched = bits;
    let mut shown: Vec<&str> = Vec::new();
    for (name, v) in words.words {
        if *v != 0 && v & unmatched == *v {
            shown.push(name);
            unmatched &= !v;
        }
    }
    Ok(shown.join(" "))
}

/// Bytes as Redis's rewrite writes them: the largest unit (`gb`, `mb`, `kb`) dividing them.
fn memory(value: &str) -> String {
    const KB: i64 = 1024;
    let Ok(n) = value.parse::<i64>() else {
        return value.to_string();
    };
    for (unit, size) in [("gb", KB * KB * KB), ("mb", KB * KB), ("kb", KB)] {
        if n != 0 && n % size == 0 {
            return format!("{}{unit}", n / size);
        }
    }
    n.to_string()
}

fn plain(name: &str, value: &str, default: &str) -> Vec<(String, bool)> {
    vec![(format!("{name} {value}"), value != default)]
}

/// `d`'s lines as CONFIG REWRITE writes them.
fn lines_of(d: &'static Directive, value: &str) -> Vec<(String, bool)> {
    let name = d.name;
    match d.kind {
        Kind::Bool | Kind::Int | Kind::Enum | Kind::Octal => plain(name, value, d.default),
        Kind::Memory => vec![(format!("{name} {}", memory(value)), value != d.default)],
        Kind::Percent if value.ends_with('%') => plain(name, value, d.default),
        Kind::Percent => vec![(format!("{name} {}", memory(value)), value != d.default)],
        Kind::StrOrNull if value.is_empty() => Vec::new(),
        Kind::Str | Kind::StrOrNull => {
            vec![(
                format!("{name} {}", quote(value.as_bytes())),
                value != d.default,
            )]
        }
        Kind::Special => special(d, value),
    }
}

fn special(d: &'static Directive, value: &str) -> Vec<(String, bool)> {
    let name = d.name;
    match name {
        "save" => {
            let words: Vec<&str> = value.split_whitespace().collect();
            if words.is_empty() {
                return vec![("save \"\"".into(), true)];
            }
            words
                .chunks(2)
                .map(|pair| (format!("save {}", pair.join(" ")), true))
                .collect()
        }
        "bind" if value == d.default => Vec::new(),
        "bind" => vec![(format!("bind {value}"), true)],
        "dir" => vec![(format!("dir {}", quote(value.as_bytes())), true)],
        "replicaof" if value.is_empty() => Vec::new(),
        // Always written, as Redis writes it (`""` for none).
        "latency-tracking-info-percentiles" if value.is_empty() => {
            vec![(format!("{name} \"\""), true)]
        }
        "latency-tracking-info-percentiles" => vec![(format!("{name} {value}"), true)],
        "notify-keyspace-events" => vec![(
            format!("{name} {}", quote(value.as_bytes())),
            !value.is_empty(),
        )],
        "client-output-buffer-limit" => {
            let defaults: Vec<&str> = d.default.split_whitespace().collect();
            value
                .split_whitespace()
                .collect::<Vec<_>>()
                .chunks(4)
                .enumerate()
                .map(|(i, class)| {
                    let force = defaults.get(i * 4..i * 4 + 4) != Some(class);
                    let kind = if class[0] == "slave" {
                        "replica"
                    } else {
                        class[0]
                    };
                    let hard = class.get(1).map_or_else(String::new, |v| memory(v));
                    let soft = class.get(2).map_or_else(String::new, |v| memory(v));
                    let secs = class.get(3).copied().unwrap_or("0");
                    (format!("{name} {kind} {hard} {soft} {secs}"), force)
                })
                .collect()
        }
        _ => plain(name, value, d.default),
    }
}

/// The primary name CONFIG REWRITE files a directive's lines under, if the server knows it.
pub(crate) fn known(name: &str) -> Option<String> {
    if let Some(d) = directives::lookup(name) {
        return Some(d.name.to_string());
    }
    if directives::FILE_ONLY.contains(&name) || param(name).is_some() {
        return Some(name.to_string());
    }
    None
}

/// Every option's current lines, in the order CONFIG REWRITE appends them: Redis's
/// directives, echomq's own parameters, then the users (`user_lines`, unless an ACL file
/// keeps them).
pub(crate) fn options(
    settings: &Settings,
    engine: &EngineConfig,
    user_lines: Vec<String>,
) -> Vec<OptionLines> {
    let mut out: Vec<OptionLines> = DIRECTIVES
        .iter()
        .map(|d| OptionLines {
            name: d.name.to_string(),
            lines: lines_of(d, &value(settings, engine, d)),
        })
        .collect();
    let defaults = Settings::default();
    let default_engine = EngineConfig::default();
    for p in all_params().filter(|p| directives::lookup(p.name).is_none()) {
        let value = (p.get)(settings, engine);
        let force = value != (p.get)(&defaults, &default_engine);
        out.push(OptionLines {
            name: p.name.to_string(),
            lines: vec![(format!("{} {}", p.name, quote(value.as_bytes())), force)],
        });
    }
    let users = if settings.aclfile.is_empty() {
        user_lines.into_iter().map(|l| (l, true)).collect()
    } else {
        Vec::new()
    };
    out.push(OptionLines {
        name: "user".into(),
        lines: users,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_redis_writes_them() {
        assert_eq!(memory("67108864"), "64mb");
        assert_eq!(memory("1000"), "1000");
        assert_eq!(memory("0"), "0");
        let d = directives::lookup("client-output-buffer-limit").unwrap();
        let lines = lines_of(d, "normal 0 0 0 slave 268435456 67108864 60 pubsub 1 2 3");
        assert_eq!(
            lines,
            [
                ("client-output-buffer-limit normal 0 0 0".to_string(), false),
                (
                    "client-output-buffer-limit replica 256mb 64mb 60".to_string(),
                    false
                ),
                ("client-output-buffer-limit pubsub 1 2 3".to_string(), true),
            ]
        );
        let save = directives::lookup("save").unwrap();
        assert_eq!(lines_of(save, "")[0].0, "save \"\"");
        assert_eq!(lines_of(save, "10 1 20 2").len(), 2);
        let logfile = directives::lookup("logfile").unwrap();
        assert_eq!(lines_of(logfile, "a b")[0].0, "logfile \"a b\"");
        assert!(directives::lookup("SLAVEOF").is_some());
    }
}

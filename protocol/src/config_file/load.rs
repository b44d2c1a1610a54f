//! Reading a config file as Redis does: the file's text, then the command line's
//! `--name value …` options as more lines after it ([`command_line_options`]), split into
//! words by [`super::split_args`]; `include FILE` (or a glob of files) reads another file in
//! its place. Blank lines and `#` comments are skipped; the directive's name is lowercased.
//!
//! What a line means is not judged here (the caller applies the lines in order and reports a
//! bad one with [`Fatal::at`]); only unreadable files and unbalanced quotes stop the reading.
//! The one exception is `dir` for a process that follows it ([`load_changing_dir`]): Redis
//! changes directory as it reads the line, so an `include` after it is relative to it.

use std::fmt;
use std::path::{Path, PathBuf};

use super::split_args;

/// One directive line, in the order it takes effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its number in the text it was read from (the included file's, for included lines).
    pub number: usize,
    /// The line as written (trimmed).
    pub text: String,
    /// Its words; the first, the directive's name, lowercased.
    pub args: Vec<String>,
}

/// Why the server cannot start with this configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fatal {
    /// A line is refused (or, with no line, the configuration as a whole): printed as Redis's
    /// `*** FATAL CONFIG FILE ERROR ***` block.
    Config {
        /// The line's number and text.
        at: Option<(usize, String)>,
        /// Why, in Redis's words.
        reason: String,
    },
    /// Anything else (an unreadable file): one line, as Redis logs it.
    Other(String),
}

impl Fatal {
    /// `reason`, about `line`.
    pub fn at(line: &Line, reason: impl Into<String>) -> Fatal {
        Fatal::Config {
            at: Some((line.number, line.text.clone())),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fatal::Config { at, reason } => {
                writeln!(f)?;
                writeln!(
                    f,
                    "*** FATAL CONFIG FILE ERROR (Redis {}) ***",
                    crate::REDIS_VERSION
                )?;
                if let Some((number, text)) = at {
                    writeln!(f, "Reading the configuration file, at line {number}")?;
                    writeln!(f, ">>> '{text}'")?;
                }
                write!(f, "{reason}")
            }
            Fatal::Other(text) => f.write_str(text),
        }
    }
}

/// The command line's options (what follows the config file) as config text, as
/// `redis-server` builds it: `--name` starts a line, the words after it are its values
/// (quoted), and a word right after a bare `--name` is its value even if it starts with `--`.
/// `--save` with nothing after it (or followed by another `--name`) means `save ""`.
pub fn command_line_options(args: &[String]) -> String {
    let mut options = String::new();
    // Whether the last word completed a `--name` (so a `--word` now starts a new one).
    let mut after_value = true;
    for (i, arg) in args.iter().enumerate() {
        let next_is_name = args.get(i + 1).is_some_and(|n| n.starts_with("--"));
        let last = i + 1 == args.len();
        if after_value && let Some(name) = arg.strip_prefix("--") {
            if !options.is_empty() {
                options.push('\n');
            }
            options.push_str(name);
            options.push(' ');
            let words = split_args(arg).map_or(0, |w| w.len());
            if words == 1 {
                after_value = false;
                if name.eq_ignore_ascii_case("save") && (next_is_name || last) {
                    options.push_str("\"\"");
                    after_value = true;
                } else if name.eq_ignore_ascii_case("sentinel") && (next_is_name || last) {
                    after_value = true;
                }
            } else {
                after_value = true;
            }
        } else {
            options.push_str(&super::quote(arg.as_bytes()));
            options.push(' ');
            after_value = true;
        }
    }
    options
}

/// The lines of `file` (when given) followed by those of `options`, includes read in place.
pub fn load(file: Option<&Path>, options: &str) -> Result<Vec<Line>, Fatal> {
    load_with(file, options, false)
}

/// [`load`] for a process whose working directory follows `dir`, as redis-server's: each
/// `dir` line changes directory where it stands (a later relative `include` reads from
/// there), and its value becomes the absolute path, so applying it again later changes
/// nothing. A directory it cannot enter is fatal, with the system's reason.
pub fn load_changing_dir(file: Option<&Path>, options: &str) -> Result<Vec<Line>, Fatal> {
    load_with(file, options, true)
}

fn load_with(file: Option<&Path>, options: &str, changing_dir: bool) -> Result<Vec<Line>, Fatal> {
    let mut text = match file {
        Some(path) => read(path)?,
        None => String::new(),
    };
    text.push('\n');
    text.push_str(options);
    let mut lines = Vec::new();
    parse(&text, &mut lines, 0, changing_dir)?;
    Ok(lines)
}

/// How deep includes may nest (Redis has no limit, and recurses until the stack ends).
const INCLUDE_DEPTH_MAX: usize = 32;

fn parse(text: &str, lines: &mut Vec<Line>, depth: usize, changing_dir: bool) -> Result<(), Fatal> {
    for (i, raw) in text.split('\n').enumerate() {
        let trimmed = raw.trim_matches([' ', '\t', '\r', '\n']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let line = Line {
            number: i + 1,
            text: trimmed.to_string(),
            args: Vec::new(),
        };
        let Some(words) = split_args(trimmed) else {
            return Err(Fatal::at(&line, "Unbalanced quotes in configuration line"));
        };
        if words.is_empty() {
            continue;
        }
        let mut args: Vec<String> = words
            .into_iter()
            .map(|w| String::from_utf8_lossy(&w).into_owned())
            .collect();
        args[0].make_ascii_lowercase();
        if args[0] == "include" && args.len() == 2 {
            if depth >= INCLUDE_DEPTH_MAX {
                return Err(Fatal::at(&line, "Too many nested include directives"));
            }
            for path in included(&args[1])? {
                parse(&read(&path)?, lines, depth + 1, changing_dir)?;
            }
            continue;
        }
        if changing_dir && args[0] == "dir" && args.len() == 2 {
            let entered =
                std::env::set_current_dir(&args[1]).and_then(|()| std::env::current_dir());
            match entered {
                Ok(cwd) => args[1] = cwd.display().to_string(),
                Err(e) => {
                    let why = crate::persist::aof::failure::os_error_text(&e);
                    return Err(Fatal::at(&line, why));
                }
            }
        }
        lines.push(Line { args, ..line });
    }
    Ok(())
}

/// The files `include PATTERN` reads: the file itself, or with `*`, `?` or `[` in its name
/// the files matching it in order (none is fine, as an empty `conf.d`).
fn included(pattern: &str) -> Result<Vec<PathBuf>, Fatal> {
    if !pattern.contains(['*', '?', '[']) {
        return Ok(vec![PathBuf::from(pattern)]);
    }
    let path = Path::new(pattern);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Ok(Vec::new());
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let file = e.file_name();
            let file = file.to_string_lossy();
            // A glob's `*` does not match a leading dot.
            (!file.starts_with('.') || name.starts_with('.'))
                && crate::glob::matches(name.as_bytes(), file.as_bytes(), false)
        })
        .map(|e| dir.join(e.file_name()))
        .collect();
    found.sort();
    Ok(found)
}

fn read(path: &Path) -> Result<String, Fatal> {
    std::fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| {
            Fatal::Other(format!(
                "Fatal error, can't open config file '{}': {}",
                path.display(),
                crate::persist::aof::failure::os_error_text(&e)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(args: &[&str]) -> String {
        command_line_options(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn command_line_becomes_lines() {
        assert_eq!(options(&["--port", "7000"]), "port \"7000\" ");
        assert_eq!(
            options(&["--save", "--port", "1"]),
            "save \"\"\nport \"1\" "
        );
        assert_eq!(options(&["--save"]), "save \"\"");
        assert_eq!(
            options(&["--bind", "a", "b", "--x", "--y"]),
            "bind \"a\" \"b\" \nx \"--y\" "
        );
        assert_eq!(options(&["--port 7000"]), "port 7000 ");
    }

    #[test]
    fn lines_keep_their_numbers_and_words() {
        let lines = load(None, "# c\n\nPORT 1\n  save \"\"  ").unwrap();
        // One empty line (the absent file's) comes first.
        assert_eq!(lines[0].number, 4);
        assert_eq!(lines[0].args, ["port", "1"]);
        assert_eq!(lines[1].text, "save \"\"");
        assert_eq!(lines[1].args, ["save", ""]);
        let err = load(None, "a 'b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\n*** FATAL CONFIG FILE ERROR (Redis 8.8.0) ***\nReading the configuration file, at line 2\n>>> 'a 'b'\nUnbalanced quotes in configuration line"
        );
    }
}

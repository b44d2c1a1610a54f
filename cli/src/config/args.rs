//! Splitting `echomq serve`'s arguments: the config file (the first word, when it is not an
//! option), echomq's own flags (`--resp3`, `--threads N`, `--archive [DIR]`, `--replicate URL`,
//! `--s3-endpoint URL`, and `--config FILE` naming the config file), and everything else, which
//! is config directives as `redis-server` takes them (`--port 7000 --save ""`).

use std::path::PathBuf;

/// echomq's flags that take no value.
const FLAGS: &[&str] = &["--resp3"];
/// echomq's flags that take one value.
const WITH_VALUE: &[&str] = &[
    "--threads",
    "--replicate",
    "--s3-endpoint",
    "--config",
    "--clock",
];
/// echomq's flags whose value is optional (taken unless the next word is an option).
const OPTIONAL_VALUE: &[&str] = &["--archive"];

/// `echomq serve`'s arguments, split.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// The config file.
    pub file: Option<PathBuf>,
    /// echomq's own flags, for clap.
    pub echomq: Vec<String>,
    /// The config directives, as `redis-server`'s command line takes them.
    pub directives: Vec<String>,
}

/// Splits `args` (what follows `serve`).
pub fn split(args: &[String]) -> Result<Split, String> {
    let mut out = Split::default();
    let mut rest = args;
    if let Some(first) = rest.first()
        && !first.starts_with('-')
    {
        out.file = Some(PathBuf::from(first));
        rest = &rest[1..];
    }
    let mut i = 0;
    while i < rest.len() {
        let arg = &rest[i];
        let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
        let inline = arg.contains('=') && arg.starts_with("--");
        if FLAGS.contains(&arg.as_str()) {
            out.echomq.push(arg.clone());
        } else if WITH_VALUE.contains(&name) {
            let value = if inline {
                arg[name.len() + 1..].to_string()
            } else {
                i += 1;
                rest.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{arg} needs a value"))?
            };
            if name == "--config" {
                if out.file.is_some() {
                    return Err("two config files: give one, first or with --config".into());
                }
                out.file = Some(PathBuf::from(value));
            } else {
                out.echomq.push(name.to_string());
                out.echomq.push(value);
            }
        } else if OPTIONAL_VALUE.contains(&name) {
            out.echomq.push(arg.clone());
            if !inline && let Some(value) = rest.get(i + 1).filter(|v| !v.starts_with("--")) {
                out.echomq.push(value.clone());
                i += 1;
            }
        } else {
            // A directive and its values, up to the next `--name` (a bare `--name`'s first
            // value is its own even when it starts with `--`, as `redis-server` reads it).
            out.directives.push(arg.clone());
            if arg.starts_with("--") && !arg.contains(' ') {
                if let Some(value) = rest.get(i + 1)
                    && !(value.starts_with("--") && arg.eq_ignore_ascii_case("--save"))
                    && !is_echomq_flag(value)
                {
                    out.directives.push(value.clone());
                    i += 1;
                }
                while let Some(value) = rest.get(i + 1).filter(|v| !v.starts_with("--")) {
                    out.directives.push(value.clone());
                    i += 1;
                }
            }
        }
        i += 1;
    }
    Ok(out)
}

fn is_echomq_flag(word: &str) -> bool {
    let name = word.split_once('=').map_or(word, |(n, _)| n);
    FLAGS.contains(&name) || WITH_VALUE.contains(&name) || OPTIONAL_VALUE.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_of(args: &[&str]) -> Split {
        split(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn separates_the_file_flags_and_directives() {
        let s = split_of(&[
            "redis.conf",
            "--port",
            "0",
            "--resp3",
            "--save",
            "",
            "--archive",
            "--bind",
            "a",
            "-b",
            "--threads=2",
        ]);
        assert_eq!(s.file, Some(PathBuf::from("redis.conf")));
        assert_eq!(s.echomq, ["--resp3", "--archive", "--threads", "2"]);
        assert_eq!(
            s.directives,
            ["--port", "0", "--save", "", "--bind", "a", "-b"]
        );
        let s = split_of(&[
            "--config",
            "x.conf",
            "--archive",
            "dir",
            "--save",
            "--port",
            "1",
        ]);
        assert_eq!(s.file, Some(PathBuf::from("x.conf")));
        assert_eq!(s.echomq, ["--archive", "dir"]);
        assert_eq!(s.directives, ["--save", "--port", "1"]);
    }
}

//! Logging for every subcommand, in Redis's log line format:
//!
//! ```text
//! 12345:M 06 Dec 2026 05:20:01.123 * Ready to accept connections
//! ```
//!
//! the process id, the role (`M`, always: echomq has no replicas or child processes), the
//! local time (as Redis's `serverLogRaw`: the time zone is read once, when the log is set up,
//! from `TZ` or `/etc/localtime` through jiff, with no libc call; UTC when neither names
//! one), the level (`.` debug, `-` verbose, `*` notice,
//! `#` warning, as Redis marks its levels) and the message, with a structured event's fields
//! after it as `name=value`. Colour (the level mark) only when writing to a terminal.
//!
//! `echomq serve` logs where `logfile` says (empty: stdout, as Redis) at `loglevel`; the other
//! subcommands to stderr at `notice`. `RUST_LOG`, when set, picks the levels instead.
//!
//! A log file is opened for each line and closed after it, as Redis's `serverLogRaw` does: a
//! file moved away by log rotation is followed by a new one at the path, and a relative path
//! follows the working directory (`CONFIG SET dir`). Where Redis drops a line when the file
//! cannot be opened (out of descriptors, say), echomq writes it to the file it last opened,
//! which it keeps open for that.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Redis's `loglevel` names and the tracing level each maps to (`nothing`: none).
pub const LEVELS: &[(&str, Option<Level>)] = &[
    ("debug", Some(Level::TRACE)),
    ("verbose", Some(Level::DEBUG)),
    ("notice", Some(Level::INFO)),
    ("warning", Some(Level::WARN)),
    ("nothing", None),
];

/// Where the log goes.
#[derive(Debug)]
pub enum Target {
    /// Standard error (the subcommands other than `serve`).
    Stderr,
    /// Standard output (`logfile ""`).
    Stdout,
    /// A file, appended to (opened for each line, see the module doc): its path and the file
    /// opened there at start.
    File(PathBuf, std::fs::File),
}

/// The log file: its path, and the file last opened there (kept for the lines written while
/// the path cannot be opened).
struct LogFile {
    path: PathBuf,
    last: Arc<Mutex<std::fs::File>>,
}

impl LogFile {
    /// The writer of one line: the file opened again, or the one last opened.
    fn line(&self) -> LogLine {
        let opened = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path);
        match opened {
            Ok(file) => {
                if let (Ok(copy), Ok(mut last)) = (file.try_clone(), self.last.lock()) {
                    *last = copy;
                }
                LogLine::Opened(file)
            }
            Err(_) => LogLine::Last(Arc::clone(&self.last)),
        }
    }
}

/// The writer of one line to the log file.
enum LogLine {
    Opened(std::fs::File),
    Last(Arc<Mutex<std::fs::File>>),
}

impl std::io::Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            LogLine::Opened(file) => file.write(buf),
            LogLine::Last(last) => match last.lock() {
                Ok(mut file) => file.write(buf),
                Err(_) => Ok(buf.len()),
            },
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Logs to stderr at `notice` (the subcommands other than `serve`).
pub fn init() {
    init_with(Target::Stderr, "notice");
}

/// Logs to `target` at Redis's `loglevel` (checked by the caller; unknown names mean notice).
pub fn init_with(target: Target, loglevel: &str) {
    let level = LEVELS
        .iter()
        .find(|(name, _)| *name == loglevel)
        .map_or(Some(Level::INFO), |(_, level)| *level);
    let default = match level {
        Some(level) => level.to_string().to_ascii_lowercase(),
        None => "off".into(),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let zone = jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC);
    let _ = match target {
        Target::Stderr => {
            let colour = std::io::stderr().is_terminal();
            builder
                .event_format(RedisFormat {
                    colour,
                    zone: zone.clone(),
                })
                .with_writer(std::io::stderr)
                .try_init()
        }
        Target::Stdout => {
            let colour = std::io::stdout().is_terminal();
            builder
                .event_format(RedisFormat {
                    colour,
                    zone: zone.clone(),
                })
                .with_writer(std::io::stdout)
                .try_init()
        }
        Target::File(path, file) => {
            let log = LogFile {
                path,
                last: Arc::new(Mutex::new(file)),
            };
            builder
                .event_format(RedisFormat {
                    colour: false,
                    zone,
                })
                .with_writer(move || log.line())
                .try_init()
        }
    };
}

/// Redis's line format (see the module docs).
#[derive(Debug)]
struct RedisFormat {
    colour: bool,
    /// The local time zone, read once as Redis's `tzset()` at start.
    zone: jiff::tz::TimeZone,
}

impl<S, N> FormatEvent<S, N> for RedisFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let level = *event.metadata().level();
        let mark = match level {
            Level::TRACE => '.',
            Level::DEBUG => '-',
            Level::INFO => '*',
            Level::WARN | Level::ERROR => '#',
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let now = self.zone.to_datetime(jiff::Timestamp::now());
        write!(writer, "{}:M {} ", std::process::id(), timestamp(now))?;
        if self.colour && level <= Level::WARN {
            write!(writer, "\x1b[31m{mark}\x1b[0m")?;
        } else {
            write!(writer, "{mark}")?;
        }
        writeln!(writer, " {}{}", fields.message, fields.rest)
    }
}

/// An event's message and its other fields (` name=value` each).
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.rest, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.rest, " {}={value}", field.name());
        }
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `dd Mon yyyy hh:mm:ss.mmm`, Redis's `%d %b %Y %H:%M:%S.` and milliseconds.
fn timestamp(at: jiff::civil::DateTime) -> String {
    let month = MONTHS[usize::from(at.month().unsigned_abs()).saturating_sub(1) % 12];
    format!(
        "{:02} {month} {} {:02}:{:02}:{:02}.{:03}",
        at.day(),
        at.year(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::TimeZone;

    fn at(ms: i64, zone: &TimeZone) -> String {
        let ts = jiff::Timestamp::from_millisecond(ms).unwrap();
        timestamp(zone.to_datetime(ts))
    }

    #[test]
    fn timestamps_read_as_redis_writes_them() {
        let utc = TimeZone::UTC;
        assert_eq!(at(1_796_534_401_123, &utc), "06 Dec 2026 05:20:01.123");
        assert_eq!(at(0, &utc), "01 Jan 1970 00:00:00.000");
        assert_eq!(at(951_782_400_000, &utc), "29 Feb 2000 00:00:00.000");
        let ist = TimeZone::fixed(jiff::tz::Offset::from_seconds(5 * 3600 + 1800).unwrap());
        assert_eq!(at(1_796_534_401_123, &ist), "06 Dec 2026 10:50:01.123");
    }
}

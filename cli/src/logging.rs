//! Logging for every subcommand, in Redis's log line format:
//!
//! ```text
//! 12345:M 06 Dec 2026 05:20:01.123 * Ready to accept connections
//! ```
//!
//! the process id, the role (`M`, always: echomq has no replicas or child processes), the
//! time in UTC (Redis prints local time), the level (`.` debug, `-` verbose, `*` notice,
//! `#` warning, as Redis marks its levels) and the message, with a structured event's fields
//! after it as `name=value`. Colour (the level mark) only when writing to a terminal.
//!
//! `echomq serve` logs where `logfile` says (empty: stdout, as Redis) at `loglevel`; the other
//! subcommands to stderr at `notice`. `RUST_LOG`, when set, picks the levels instead.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Mutex;

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
    /// A file, appended to.
    File(std::fs::File),
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
    let _ = match target {
        Target::Stderr => {
            let colour = std::io::stderr().is_terminal();
            builder
                .event_format(RedisFormat { colour })
                .with_writer(std::io::stderr)
                .try_init()
        }
        Target::Stdout => {
            let colour = std::io::stdout().is_terminal();
            builder
                .event_format(RedisFormat { colour })
                .with_writer(std::io::stdout)
                .try_init()
        }
        Target::File(file) => builder
            .event_format(RedisFormat { colour: false })
            .with_writer(Mutex::new(file))
            .try_init(),
    };
}

/// Redis's line format (see the module docs).
#[derive(Debug)]
struct RedisFormat {
    colour: bool,
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
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
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

/// `dd Mon yyyy hh:mm:ss.mmm` in UTC for `since_epoch`.
fn timestamp(since_epoch: std::time::Duration) -> String {
    let secs = since_epoch.as_secs();
    let (days, day_secs) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (Howard Hinnant's algorithm), for dates after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{day:02} {} {year} {:02}:{:02}:{:02}.{:03}",
        MONTHS[(month - 1) as usize],
        day_secs / 3600,
        day_secs % 3600 / 60,
        day_secs % 60,
        since_epoch.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_redis_writes_them() {
        let t = std::time::Duration::from_millis(1_796_534_401_123);
        assert_eq!(timestamp(t), "06 Dec 2026 05:20:01.123");
        assert_eq!(
            timestamp(std::time::Duration::ZERO),
            "01 Jan 1970 00:00:00.000"
        );
        assert_eq!(
            timestamp(std::time::Duration::from_secs(951_782_400)),
            "29 Feb 2000 00:00:00.000"
        );
    }
}

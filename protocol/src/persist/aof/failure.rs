//! What a failed AOF write or fsync does, as Redis 8.8's `flushAppendOnlyFile` and
//! `writeCommandsDeniedByDiskError` decide it.
//!
//! - `appendfsync everysec` or `no`: the bytes stay pending and every commit (a connection's,
//!   the cron's each tick) retries them; meanwhile `aof_last_write_status` is `err` and write
//!   commands (and PING) answer `-MISCONF Errors writing to the AOF file: <strerror>`. The
//!   first write that succeeds clears it ("AOF write error looks solved"). A failed fsync
//!   refuses writes the same way until an fsync or a write succeeds.
//! - `appendfsync always`: a reply may already promise the bytes are on disk, and the command
//!   cannot be undone, so Redis exits; here the failure is recorded as fatal
//!   ([`Aof::fatal_error`]) and the server stops without a final save, its caller exiting
//!   with an error.
//!
//! The error's text is the system's message alone (C's `strerror`), as Redis shows it.

use std::sync::atomic::Ordering;

use super::{Aof, Fsync};

/// The text C's `strerror` gives for `e` (Rust's message without its ` (os error N)`).
pub(crate) fn os_error_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if e.raw_os_error().is_some() => text[..at].to_string(),
        _ => text,
    }
}

impl Aof {
    /// Whether writes fail now ([`Aof::write_error`] without the text).
    #[inline]
    pub fn write_failed_now(&self) -> bool {
        self.write_failed.load(Ordering::Acquire)
    }

    /// The last write's error, while writes fail.
    pub fn write_error(&self) -> Option<String> {
        self.write_failed
            .load(Ordering::Acquire)
            .then(|| self.write_error.lock().clone())
    }

    /// The end of everything fed so far (see [`super::Buffer`]): unchanged across a run of
    /// commands means none of them propagated a write.
    pub fn fed(&self) -> u64 {
        self.buffer.fed()
    }

    /// Why the server must stop (a failure under `appendfsync always`), once one happened.
    pub fn fatal_error(&self) -> Option<String> {
        self.fatal.lock().clone()
    }

    /// Records a failed write (`aof_last_write_status:err`, `-MISCONF` for writes); under
    /// `always`, a fatal one.
    pub(crate) fn fail_write(&self, error: &str) {
        if self.fsync_policy() == Fsync::Always {
            self.fail_fatal(
                "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..."
                    .to_string(),
            );
        }
        if !self.write_failed.swap(true, Ordering::AcqRel) {
            tracing::warn!("Error writing to the AOF file: {error}");
        }
        *self.write_error.lock() = error.to_string();
    }

    /// Records a failed fsync: writes are refused as after a failed write; under `always`,
    /// fatal.
    pub(crate) fn fail_fsync(&self, e: &std::io::Error) {
        let text = os_error_text(e);
        if self.fsync_policy() == Fsync::Always {
            self.fail_fatal(format!(
                "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {text}. Exiting..."
            ));
        }
        if !self.write_failed.swap(true, Ordering::AcqRel) {
            tracing::warn!("Fsync of the AOF file failed: {text}");
        }
        *self.write_error.lock() = text;
    }

    /// A write went through: a write error recorded before is over.
    pub(crate) fn write_succeeded(&self) {
        if self.write_failed.swap(false, Ordering::AcqRel) {
            tracing::info!("AOF write error looks solved, Redis can write again.");
        }
    }

    fn fail_fatal(&self, line: String) {
        let mut fatal = self.fatal.lock();
        if fatal.is_none() {
            tracing::warn!("{line}");
            *fatal = Some(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_text_is_strerror_s() {
        let e = std::io::Error::from_raw_os_error(28);
        assert_eq!(os_error_text(&e), "No space left on device");
        assert_eq!(os_error_text(&std::io::Error::other("odd")), "odd");
    }

    #[test]
    fn a_failed_fsync_refuses_writes_until_a_write_succeeds_under_everysec() {
        let aof = Aof::default();
        aof.set_fsync(Fsync::EverySec);
        assert!(!aof.write_failed_now());
        aof.fail_fsync(&std::io::Error::from_raw_os_error(5));
        assert!(aof.write_failed_now());
        assert_eq!(aof.write_error().as_deref(), Some("Input/output error"));
        assert_eq!(aof.fatal_error(), None);
        // A later write error replaces the reason; a successful write clears it.
        aof.fail_write("No space left on device");
        assert_eq!(
            aof.write_error().as_deref(),
            Some("No space left on device")
        );
        aof.write_succeeded();
        assert!(!aof.write_failed_now());
        assert_eq!(aof.write_error(), None);
        assert_eq!(aof.fatal_error(), None);
    }

    #[test]
    fn a_failed_write_or_fsync_under_always_is_fatal_with_redis_line() {
        let aof = Aof::default();
        aof.set_fsync(Fsync::Always);
        aof.fail_fsync(&std::io::Error::from_raw_os_error(5));
        assert_eq!(
            aof.fatal_error().as_deref(),
            Some(
                "Can't persist AOF for fsync error when the AOF fsync policy is 'always': Input/output error. Exiting..."
            )
        );
        // The first reason stays.
        aof.fail_write("No space left on device");
        assert!(aof.fatal_error().unwrap().contains("fsync error"));

        let aof = Aof::default();
        aof.set_fsync(Fsync::Always);
        aof.fail_write("No space left on device");
        assert_eq!(
            aof.fatal_error().as_deref(),
            Some(
                "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..."
            )
        );
        assert!(aof.write_failed_now());
    }
}

//! The server's side of RDB snapshots: where and how a save writes (from the settings), SAVE,
//! BGSAVE, the save points the cron checks, the save at shutdown, the `-MISCONF` refusal after
//! a failed background save, and loading `dump.rdb` at start. The files themselves are
//! written and read by `crate::persist::rdb`.

use std::sync::Arc;

use echomq_engine::Db;
use echomq_engine::rdb::file::SaveOptions;

use crate::error::{CommandError, PersistError};
use crate::persist::rdb::load::RdbLoaded;
use crate::persist::rdb::save::Target;
use crate::persist::rdb::{self, Rdb};
use crate::state::ServerState;
use crate::state::settings::Settings;

/// `rdb-key-save-delay` (a hidden testing knob, as in Redis; 0 unless set).
pub(super) fn key_save_delay_us(settings: &Settings) -> i64 {
    settings
        .accepted
        .get("rdb-key-save-delay")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl ServerState {
    /// The RDB state.
    pub(crate) fn rdb(&self) -> &Arc<Rdb> {
        &self.rdb
    }

    /// Where a save writes now, and how.
    pub(crate) fn rdb_target(&self, aof_base: bool) -> Target {
        let settings = self.settings();
        Target {
            dir: settings.dir.clone().into(),
            filename: settings.dbfilename.clone(),
            options: self.save_options(&settings, aof_base),
        }
    }

    /// How a file is written under `settings` (taken by the caller: this takes no lock).
    pub(crate) fn save_options(&self, settings: &Settings, aof_base: bool) -> SaveOptions {
        let now_ms = self.clock().now_ms();
        SaveOptions {
            compress: settings.rdbcompression,
            checksum: settings.rdbchecksum,
            now_ms,
            redis_ver: crate::REDIS_VERSION.into(),
            ctime_s: now_ms / 1000,
            used_mem: self.memory_used(),
            aof_base,
            functions: self.functions().codes(),
            key_save_delay_us: key_save_delay_us(settings),
        }
    }

    /// SAVE: writes the file now, holding the keyspace lock (`dbs` are its databases).
    pub(crate) fn save(&self, dbs: &[Db]) -> Result<(), CommandError> {
        let target = self.rdb_target(false);
        self.rdb.save(dbs, &target, self.clock().as_ref())
    }

    /// DEBUG RELOAD's save: SAVE's, or while a BGSAVE's child runs, the file written beside it
    /// without waiting, as Redis's `rdbSave` does (the child's older snapshot then replaces it
    /// when it ends, as in Redis).
    pub(crate) fn save_for_reload(&self, dbs: &[Db]) -> Result<(), CommandError> {
        if !self.rdb.bgsave_in_progress() {
            return self.save(dbs);
        }
        crate::persist::rdb::save::write_atomically(&self.rdb_target(false), dbs)
            .map(|_| tracing::info!("DB saved on disk"))
            .map_err(|e| {
                tracing::warn!(error = %e, "Error saving DB on disk");
                CommandError::SaveFailed
            })
    }

    /// BGSAVE: forks (under the keyspace lock, `dbs`); the child writes the file. Refused
    /// while any child runs (one at a time, as Redis's `rdbSaveBackground`).
    pub(crate) fn bgsave(&self, dbs: &[Db]) -> Result<(), CommandError> {
        if self.aof().rewriting() {
            return Err(CommandError::AnotherChildActive);
        }
        self.rdb.bgsave(dbs, self.rdb_target(false), self.clock())
    }

    /// The server cron's check: starts a BGSAVE when a `save` point is due, but never while
    /// a child runs (the point waits for it to end, as in Redis).
    pub(crate) fn save_point_cron(&self) {
        if self.child_active() {
            return;
        }
        let points = {
            let settings = self.settings();
            if settings.save.is_empty() {
                return;
            }
            rdb::save_points(&settings.save).unwrap_or_default()
        };
        let now_s = self.clock().now_ms() / 1000;
        let dirty = self.keyspace().dirty();
        if self.rdb.save_point_due(&points, now_s, dirty) {
            self.keyspace().run_all(|dbs, _| {
                if !self.child_active() {
                    let _ = self.bgsave(dbs);
                }
            });
        }
    }

    /// The server cron's check: starts the scheduled BGSAVE once no child runs (and, after a
    /// failed save, the retry delay passed); it stays scheduled until one starts.
    pub(crate) fn scheduled_bgsave_cron(&self) {
        let now_s = self.clock().now_ms() / 1000;
        if !self.rdb.scheduled() || self.child_active() || !self.rdb.retry_ok(now_s) {
            return;
        }
        self.keyspace().run_all(|dbs, _| {
            if !self.child_active() && self.bgsave(dbs).is_ok() {
                self.rdb.clear_scheduled();
            }
        });
    }

    /// Before a shutdown saves, as Redis's `prepareForShutdown`: a BGSAVE's child is killed
    /// (it could rename its older snapshot over the final one) and its temp file removed, and
    /// a rewrite's child too (the AOF as it stands holds every write).
    pub(crate) fn kill_children(&self) {
        if self.rdb.kill_child() {
            tracing::warn!("There is a child saving an .rdb. Killing it!");
        }
        if self.aof().kill_child() {
            tracing::warn!("There is a child rewriting the AOF. Killing it!");
        }
        while self.aof().rewriting() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// At shutdown: kills a running child ([`ServerState::kill_children`]); with `save` points
    /// configured, saves once more, as Redis does on SIGTERM (a failure is logged; the server stops either way);
    /// nothing after a SHUTDOWN command, which saved (or was told not to) itself.
    pub(crate) fn save_on_shutdown(&self) {
        self.kill_children();
        if self.settings().save.is_empty() || self.loading() || self.rdb.final_save_skipped() {
            return;
        }
        self.rdb.wait_for_background_save();
        tracing::info!("Saving the final RDB snapshot before exiting.");
        if let Err(e) = self.keyspace().run_all(|dbs, _| self.save(dbs)) {
            tracing::warn!(error = %e, "Error trying to save the DB, can't exit.");
        }
    }

    /// Redis's shutdown on SIGTERM or SIGINT, before anything stops: the AOF flushed, a
    /// running child killed, then with `save` points configured (and not loading) a save. Whether the server
    /// may now stop: a failed save is logged with Redis's lines and the server goes on
    /// serving, as Redis does (its data is in memory only; exiting would lose it). After a
    /// successful save nothing at exit saves again.
    pub(crate) fn save_before_signal_exit(&self) -> bool {
        // As Redis's `finishShutdown`: the AOF's pending bytes written and fsynced first.
        self.aof().flush_for_shutdown();
        self.kill_children();
        if self.settings().save.is_empty() || self.loading() || self.rdb.final_save_skipped() {
            return true;
        }
        self.rdb.wait_for_background_save();
        tracing::info!("Saving the final RDB snapshot before exiting.");
        match self.keyspace().run_all(|dbs, _| self.save(dbs)) {
            Ok(()) => {
                self.rdb.skip_final_save();
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "Error trying to save the DB, can't exit.");
                tracing::warn!(
                    "Errors trying to shut down the server. Check the logs for more information."
                );
                false
            }
        }
    }

    /// Whether writes are refused (`-MISCONF`) after a failed background save: with save
    /// points configured and `stop-writes-on-bgsave-error yes`.
    pub(crate) fn rdb_write_refusal(&self) -> bool {
        if !self.rdb.last_failed() {
            return false;
        }
        let settings = self.settings();
        settings.stop_writes_on_bgsave_error && !settings.save.is_empty()
    }

    /// Loads `dir/dbfilename` if it exists (the caller marked the server as loading).
    pub(crate) fn load_rdb(&self) -> Result<Option<RdbLoaded>, PersistError> {
        let (path, databases) = {
            let s = self.settings();
            (
                std::path::Path::new(&s.dir).join(&s.dbfilename),
                s.databases as usize,
            )
        };
        rdb::load::load(
            &path,
            databases,
            self.keyspace(),
            self.functions(),
            &self.rdb,
        )
    }
}

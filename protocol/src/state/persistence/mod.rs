//! The server's side of persistence: the AOF's settings, the startup load (the AOF, or with
//! it off `dump.rdb`; `loading:1` and `-LOADING` meanwhile), commits before replies, and the
//! automatic rewrite; RDB snapshots in [`rdb`]. The files are written and read by
//! `crate::persist`; this module decides when, from the settings.
//!
//! Invariant: at most one background child runs, a BGSAVE's or an AOF rewrite's, as in Redis
//! ([`ServerState::child_active`]). Every start checks it under the keyspace lock, which all
//! starts hold; what cannot start now is refused or scheduled, and the cron starts what was
//! scheduled once no child runs.

mod rdb;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::error::{AofWriteError, ConfigRefusal, ConfigWhy, PersistError};
use crate::persist::aof::load::{self, Loaded};
use crate::persist::aof::{Aof, AofConfig, Commit, Fsync};

use super::ServerState;
use super::settings::Settings;

/// Replays one AOF file's commands through the command path (`crate::cmd::replay`, handed
/// down by the server, which knows the commands): the state, the file's name, its bytes,
/// whether it may be cut, the count so far; where to cut it, if it ends inside a command.
pub(crate) type ReplayFn =
    fn(&ServerState, &str, &[u8], bool, &mut Loaded) -> Result<Option<usize>, PersistError>;

impl ServerState {
    /// The AOF.
    pub(crate) fn aof(&self) -> &Arc<Aof> {
        &self.aof
    }

    /// Whether the AOF is being loaded (`loading:1`).
    pub(crate) fn loading(&self) -> bool {
        self.loading.load(Ordering::Acquire)
    }

    /// The AOF's settings as they are now.
    pub(crate) fn aof_config(&self) -> AofConfig {
        aof_config(&self.settings(), self)
    }

    /// At startup, once the settings are in: with `appendonly yes`, loads the AOF the
    /// directory holds, then appends to it (or, with none there, starts one with a rewrite).
    /// Fixes `appenddirname` and `appendfilename` either way.
    pub(crate) fn start_persistence(
        &self,
        replay: ReplayFn,
    ) -> Result<Option<Loaded>, PersistError> {
        if !self.prepare_persistence() {
            // No AOF: the RDB file, if there is one (as Redis loads it).
            let loaded = self.load_rdb();
            if loaded.is_err() {
                // A server that failed to load stops; its partial data must overwrite nothing.
                self.rdb.skip_final_save();
            }
            self.loading.store(false, Ordering::Release);
            loaded?;
            return Ok(None);
        }
        let config = self.aof_config();
        let started = std::time::Instant::now();
        let databases = self.settings().databases as usize;
        let mut replay = |name: &str, bytes: &[u8], cut_ok: bool, loaded: &mut Loaded| {
            replay(self, name, bytes, cut_ok, loaded)
        };
        let loaded = match load::load(
            &config,
            self.keyspace(),
            databases,
            self.functions(),
            &mut replay,
        ) {
            Ok(loaded) => loaded,
            Err(e) => {
                self.rdb.skip_final_save();
                self.loading.store(false, Ordering::Release);
                return Err(e);
            }
        };
        if let Some(loaded) = &loaded {
            tracing::info!(
                commands = loaded.commands,
                "DB loaded from append only file: {:.3} seconds",
                started.elapsed().as_secs_f64()
            );
        }
        // Loading ends only once the AOF appends again: a write let in before (no -LOADING)
        // would run, and be acknowledged, with nothing to propagate it to (Redis serves no
        // client before its AOF is open either).
        let keyspace = Arc::clone(self.keyspace());
        let appending = keyspace.run_all(|dbs, _| self.aof.start(&keyspace, dbs, &config));
        self.loading.store(false, Ordering::Release);
        appending?;
        Ok(loaded)
    }

    /// Fixes `appenddirname` and `appendfilename` and, with `appendonly yes`, marks the server
    /// as loading (so clients get `-LOADING` from their first command on). Returns
    /// `appendonly`.
    pub(crate) fn prepare_persistence(&self) -> bool {
        // Redis's `disable-thp yes`, its default: a write during a background save then copies
        // a 4 KiB page, not a 2 MiB one.
        let thp_allowed = self
            .settings
            .read()
            .accepted
            .get("disable-thp")
            .is_some_and(|v| v.eq_ignore_ascii_case("no"));
        if !thp_allowed {
            crate::persist::fork::disable_thp();
        }
        let mut settings = self.settings.write();
        settings.persistence_started = true;
        let rdb_file = std::path::Path::new(&settings.dir).join(&settings.dbfilename);
        if settings.appendonly || rdb_file.exists() {
            self.loading.store(true, Ordering::Release);
        }
        settings.appendonly
    }

    /// The commit pipeline a connection runs (outside the keyspace lock) before it sends
    /// replies, and the cron every tick: the archive's deferred folds handed to its syncer
    /// thread, which makes them durable and applies their trims without anyone waiting
    /// ([`crate::state::ServerArchive::request_commit`]), then the AOF written with everything
    /// propagated so far, trims the syncer applied included ([`ServerState::commit_aof`]).
    /// With `appendfsync always` it returns the target the caller waits for
    /// ([`crate::persist::aof::Aof::wait_durable`]) before its replies go out.
    pub(crate) fn commit(&self) -> Result<Commit, AofWriteError> {
        if let Some(archive) = self.archive() {
            archive.request_commit(self.keyspace(), false);
        }
        if !self.aof.enabled() {
            return Ok(Commit::Done);
        }
        let commit = self.aof.commit_for_reply()?;
        self.rewrite_if_grown();
        Ok(commit)
    }

    /// Whether the AOF failed under `appendfsync always` ([`crate::persist::aof`]'s
    /// `failure`): then the server stops now, without a final save, as Redis exits.
    pub(crate) fn stop_if_aof_fatal(&self) -> bool {
        if self.aof.fatal_error().is_none() {
            return false;
        }
        self.rdb.skip_final_save();
        self.shutdown();
        true
    }

    /// [`ServerState::commit`] for the cron: writes what is pending whatever the policy (the
    /// `everysec` thread fsyncs it), and retries an archive fsync that failed.
    pub(crate) fn commit_tick(&self) -> Result<(), AofWriteError> {
        if let Some(archive) = self.archive() {
            archive.request_commit(self.keyspace(), true);
        }
        self.commit_aof().map(|_| ())
    }

    /// Writes what the commands run so far propagated (with `always`, returning the fsync
    /// target to wait for). Then starts an automatic rewrite if the AOF grew past
    /// `auto-aof-rewrite-percentage`.
    pub(crate) fn commit_aof(&self) -> Result<Option<u64>, AofWriteError> {
        let aof = &self.aof;
        if !aof.enabled() {
            return Ok(None);
        }
        let target = aof.commit()?;
        self.rewrite_if_grown();
        Ok(target)
    }

    /// Whether a background child runs, a BGSAVE's or an AOF rewrite's (Redis's
    /// `hasActiveChildProcess`): only one runs at a time.
    pub(crate) fn child_active(&self) -> bool {
        self.rdb.bgsave_in_progress() || self.aof.rewriting()
    }

    /// Starts an AOF rewrite (under the keyspace lock, `dbs` its databases). Refused while
    /// any child runs. With `appendonly yes` waiting for its first rewrite (turned on while a
    /// BGSAVE ran), appending starts with it.
    pub(crate) fn rewrite_aof(&self, dbs: &[echomq_engine::Db]) -> Result<(), PersistError> {
        if self.rdb.bgsave_in_progress() {
            return Err(PersistError::RewriteNotStarted(
                "another child process is active".into(),
            ));
        }
        self.aof.rewrite(dbs, &self.aof_config())?;
        if !self.aof.enabled() && self.settings().appendonly && !self.loading() {
            self.aof.enable_appending(self.keyspace());
        }
        Ok(())
    }

    /// The server cron's check: starts the scheduled rewrite (BGREWRITEAOF while another
    /// child ran, or inside EXEC) once no child runs.
    pub(crate) fn scheduled_rewrite_cron(&self) {
        if !self.aof.rewrite_scheduled() || self.child_active() {
            return;
        }
        self.keyspace().run_all(|dbs, _| {
            if !self.child_active() {
                let _ = self.rewrite_aof(dbs);
            }
        });
    }

    /// Starts an automatic rewrite if the AOF grew past `auto-aof-rewrite-percentage` and no
    /// child runs (the growth waits for it to end, as in Redis).
    fn rewrite_if_grown(&self) {
        let aof = &self.aof;
        let (percentage, min_size) = self.auto_aof_rewrite();
        let current = aof.current_size();
        let base = aof.rewrite_base_size().max(1);
        if percentage > 0
            && !self.child_active()
            && current > min_size
            && current.saturating_mul(100) >= base.saturating_mul(100 + percentage)
        {
            let _ = self.keyspace().run_all(|dbs, _| {
                if self.child_active() {
                    return Ok(());
                }
                tracing::info!(current, base, "Starting automatic rewriting of AOF");
                self.rewrite_aof(dbs)
            });
        }
    }

    /// Applies a CONFIG SET's persistence changes (under the keyspace lock, `dbs` its
    /// databases): `appendonly yes` starts the AOF with a rewrite (while a BGSAVE's child runs,
    /// a scheduled one), `no` stops it;
    /// `appendfsync` takes effect at once. A refusal is the reply's text.
    pub(crate) fn apply_persistence(
        &self,
        dbs: &[echomq_engine::Db],
        before: &Settings,
        after: &Settings,
    ) -> Result<(), ConfigRefusal> {
        if before.appendfsync != after.appendfsync {
            self.aof
                .set_fsync(Fsync::parse(&after.appendfsync).unwrap_or_default());
        }
        if before.appendonly == after.appendonly || self.loading() {
            return Ok(());
        }
        if after.appendonly {
            let config = aof_config(after, self);
            self.aof.set_fsync(config.fsync);
            if self.rdb.bgsave_in_progress() {
                // As Redis: the AOF starts with the rewrite the cron starts once the save's
                // child ended ([`ServerState::rewrite_aof`]); the keyspace it writes then holds
                // every write made meanwhile.
                tracing::info!(
                    "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible."
                );
                self.aof.schedule_rewrite();
                return Ok(());
            }
            let started = self
                .aof
                .rewrite(dbs, &config)
                .map(|()| self.aof.enable_appending(self.keyspace()));
            if let Err(e) = started {
                tracing::warn!(error = %e, "Unable to turn on AOF");
                return Err(ConfigRefusal::new("appendonly", ConfigWhy::AofNotStarted));
            }
        } else {
            self.aof.stop(self.keyspace());
        }
        Ok(())
    }
}

fn aof_config(settings: &Settings, state: &ServerState) -> AofConfig {
    AofConfig {
        dir: settings.dir.clone().into(),
        dirname: settings.appenddirname.clone(),
        filename: settings.appendfilename.clone(),
        fsync: Fsync::parse(&settings.appendfsync).unwrap_or_default(),
        load_truncated: settings.aof_load_truncated,
        idmp: state.engine_config().idmp_defaults(),
        functions: state.functions().codes(),
        rdb_preamble: settings
            .aof_use_rdb_preamble
            .then(|| state.save_options(settings, true)),
        key_save_delay_us: rdb::key_save_delay_us(settings),
    }
}

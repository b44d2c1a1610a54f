//! Setting the configuration's lines on the bound server, in order, before the first client:
//! parameters as CONFIG SET sets them, accepted directives kept for CONFIG GET, users and the
//! ACL file, the save points, and the command renames. A refused line is fatal, with Redis's
//! message naming it.

use echomq_protocol::ServerHandle;
use echomq_protocol::config_file::Fatal;
use echomq_protocol::server::SettingError;

use super::startup::{SettingKind, Startup};

/// Applies `startup`'s lines; returns whether the configuration declared users.
pub fn apply(handle: &ServerHandle, startup: &Startup) -> Result<bool, Fatal> {
    let mut users_configured = false;
    for setting in &startup.settings {
        let line = &setting.line;
        match &setting.what {
            SettingKind::Param(name, value) => match handle.config_set(name, value) {
                Ok(()) => {}
                Err(SettingError::Invalid(refusal)) => {
                    return Err(Fatal::at(line, refusal.why.to_string()));
                }
                Err(e) => return Err(Fatal::at(line, e.to_string())),
            },
            SettingKind::Accepted(directive, value) => {
                handle
                    .config_accept(directive, value)
                    .map_err(|reason| Fatal::at(line, reason))?;
            }
            SettingKind::User(words) => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                handle
                    .config_user(&words)
                    .map_err(|e| Fatal::at(line, format!("Error in user declaration: {e}")))?;
                users_configured = true;
            }
            SettingKind::Aclfile(path) => handle.set_aclfile(path),
        }
    }
    if let Err(e) = handle.config_set("save", &startup.save) {
        return Err(Fatal::Config {
            at: None,
            reason: e.to_string(),
        });
    }
    let renames: Vec<(String, String)> = startup
        .renames
        .iter()
        .map(|(from, to, _)| (from.clone(), to.clone()))
        .collect();
    if let Err((i, reason)) = echomq_protocol::server::set_command_renames(&renames) {
        return Err(Fatal::at(&startup.renames[i].2, reason));
    }
    Ok(users_configured)
}

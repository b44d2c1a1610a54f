//! Redis's protected actions: what a client may do only when the server's operator allowed it
//! at start (`enable-protected-configs`, `enable-debug-command`, `enable-module-command`,
//! each `no`, `yes` or `local`, Redis's default `no`).
//!
//! - A protected parameter ([`PROTECTED_PARAMS`]: `dir` and `dbfilename`, the two that choose
//!   where a save writes) is set from the command line or a config file; a client's CONFIG SET
//!   of one is refused unless `enable-protected-configs` allows that client. Otherwise any
//!   client could make SAVE write a file anywhere the server may write.
//! - DEBUG runs only where `enable-debug-command` allows it (checked at dispatch, right after
//!   arity, as Redis does).
//! - The three switches themselves, and the AOF's names, are fixed once clients connect
//!   ([`STARTUP_ONLY_PARAMS`]): a client's CONFIG SET refuses them as immutable, as Redis does,
//!   while the command line and config file set them through the server handle.
//!
//! `local` allows a client on the loopback interface ([`is_loopback`], Redis's `connIsLocal`).

use std::net::{IpAddr, SocketAddr};

use echomq_engine::Config as EngineConfig;

use super::addr::Peer;
use super::settings::{Param, Settings};
use crate::error::{ConfigRefusal, ConfigWhy};

/// Who may take a protected action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Allowed {
    /// Nobody (Redis's default).
    #[default]
    No,
    /// Every client.
    Yes,
    /// Clients on the loopback interface.
    Local,
}

impl Allowed {
    /// The value as CONFIG GET shows it.
    pub fn name(self) -> &'static str {
        match self {
            Allowed::No => "no",
            Allowed::Yes => "yes",
            Allowed::Local => "local",
        }
    }

    fn parse(name: &'static str, value: &str) -> Result<Allowed, ConfigRefusal> {
        match value.to_ascii_lowercase().as_str() {
            "no" => Ok(Allowed::No),
            "yes" => Ok(Allowed::Yes),
            "local" => Ok(Allowed::Local),
            _ => Err(ConfigRefusal::new(
                name,
                ConfigWhy::NotOneOf("no, yes, local"),
            )),
        }
    }

    /// Whether a client connected from `peer` may take the action (Redis's
    /// `allowProtectedAction`).
    pub fn allows(self, peer: &impl Peer) -> bool {
        match self {
            Allowed::No => false,
            Allowed::Yes => true,
            Allowed::Local => peer.is_local(),
        }
    }
}

/// Whether `peer` is on the loopback interface, as Redis decides it (`connIsLocal`): the
/// textual address starts `127.` (IPv4) or is `::1` (IPv6; an IPv4-mapped `::ffff:127.x` is
/// not, as Redis prints it in its IPv6 form).
pub fn is_loopback(peer: &SocketAddr) -> bool {
    match peer.ip() {
        IpAddr::V4(ip) => ip.octets()[0] == 127,
        IpAddr::V6(ip) => ip.is_loopback(),
    }
}

/// The parameters Redis marks `PROTECTED_CONFIG`.
pub const PROTECTED_PARAMS: &[&str] = &["dir", "dbfilename"];

/// Parameters Redis marks `IMMUTABLE_CONFIG` that echomq's handle still sets before the
/// server serves (the command line and config file go through it).
pub const STARTUP_ONLY_PARAMS: &[&str] = &[
    "enable-protected-configs",
    "enable-debug-command",
    "enable-module-command",
    "appenddirname",
    "appendfilename",
];

/// How a client's CONFIG SET may touch a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// It may set it.
    Settable,
    /// Fixed while the server runs.
    Immutable,
    /// Protected, and `enable-protected-configs` does not allow this client.
    Protected,
}

/// How a client connected from `peer` may touch `param`.
pub fn access(settings: &Settings, param: &Param, peer: &impl Peer) -> Access {
    if param.set.is_none()
        || STARTUP_ONLY_PARAMS.contains(&param.name)
        || super::listeners::is_startup_only(param.name)
    {
        return Access::Immutable;
    }
    if PROTECTED_PARAMS.contains(&param.name) && !settings.enable_protected_configs.allows(peer) {
        return Access::Protected;
    }
    Access::Settable
}

/// `enable-protected-configs`'s entry in the parameter table.
pub const ENABLE_PROTECTED_CONFIGS: Param = Param {
    name: "enable-protected-configs",
    get: |s, _| s.enable_protected_configs.name().into(),
    set: Some(set_protected_configs),
};

/// `enable-debug-command`'s entry in the parameter table.
pub const ENABLE_DEBUG_COMMAND: Param = Param {
    name: "enable-debug-command",
    get: |s, _| s.enable_debug_command.name().into(),
    set: Some(set_debug_command),
};

/// `enable-module-command`'s entry in the parameter table (echomq has no MODULE command; the
/// setting is kept so configs written for Redis load and CONFIG GET shows it).
pub const ENABLE_MODULE_COMMAND: Param = Param {
    name: "enable-module-command",
    get: |s, _| s.enable_module_command.name().into(),
    set: Some(set_module_command),
};

fn set_protected_configs(s: &mut Settings, _: &EngineConfig, v: &str) -> Result<(), ConfigRefusal> {
    s.enable_protected_configs = Allowed::parse("enable-protected-configs", v)?;
    Ok(())
}

fn set_debug_command(s: &mut Settings, _: &EngineConfig, v: &str) -> Result<(), ConfigRefusal> {
    s.enable_debug_command = Allowed::parse("enable-debug-command", v)?;
    Ok(())
}

fn set_module_command(s: &mut Settings, _: &EngineConfig, v: &str) -> Result<(), ConfigRefusal> {
    s.enable_module_command = Allowed::parse("enable-module-command", v)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn local_allows_loopback_peers_only() {
        let (local, remote) = (peer("127.0.0.1:5"), peer("10.0.0.1:5"));
        assert!(Allowed::Local.allows(&local) && !Allowed::Local.allows(&remote));
        assert!(Allowed::Yes.allows(&remote) && !Allowed::No.allows(&local));
        assert!(Allowed::Local.allows(&peer("[::1]:5")));
        assert!(!Allowed::Local.allows(&peer("[::ffff:127.0.0.1]:5")));
    }

    #[test]
    fn dir_and_dbfilename_are_protected_and_the_switches_immutable() {
        let mut s = Settings::default();
        let p = |name| super::super::settings::param(name).unwrap();
        let local = peer("127.0.0.1:5");
        assert_eq!(access(&s, p("dir"), &local), Access::Protected);
        assert_eq!(access(&s, p("DBFILENAME"), &local), Access::Protected);
        assert_eq!(
            access(&s, p("enable-debug-command"), &local),
            Access::Immutable
        );
        assert_eq!(access(&s, p("appenddirname"), &local), Access::Immutable);
        assert_eq!(access(&s, p("hz"), &local), Access::Settable);
        s.enable_protected_configs = Allowed::Local;
        assert_eq!(access(&s, p("dir"), &local), Access::Settable);
        assert_eq!(access(&s, p("dir"), &peer("10.1.1.1:5")), Access::Protected);
    }
}

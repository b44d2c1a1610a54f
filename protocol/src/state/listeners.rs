//! The listeners beyond the plain TCP port, with Redis 8.8's CONFIG names and defaults: the
//! TLS port and its certificates (`tls-*`), and the unix socket (`unixsocket`,
//! `unixsocketperm`).
//!
//! The listeners open when the server starts (`Server::open_listeners`). The unix socket's
//! `unixsocket` and `unixsocketperm` are startup-only ([`is_startup_only`]): a config file
//! and the command line set them, CONFIG GET shows them, a client's CONFIG SET refuses them as
//! immutable, as Redis does. A CONFIG SET of `tls-port` opens the new TLS port (or closes it,
//! with 0) as Redis's does (`crate::server::sockets`). The other `tls-*` parameters may change
//! at run time: with a TLS port open, CONFIG SET of any of them
//! builds the configuration anew (files are read again even when their paths did not change,
//! as Redis's `VOLATILE_CONFIG` files are), refuses the change when it fails (Redis's "Unable
//! to update TLS configuration"), and new connections use it
//! ([`super::ServerState::tls_acceptor`]).
//!
//! `tls-replication`, `tls-cluster`, `tls-client-*` (the client side of replication and the
//! cluster bus), `tls-dh-params-file` (rustls offers no finite-field Diffie-Hellman),
//! `tls-auth-clients-user` and `tls-session-cache-timeout` are accepted and shown, with no
//! effect.

use super::settings::{Param, int_in, yes_no, yes_no_text};
use crate::error::{ConfigRefusal, ConfigWhy};

/// `tls-auth-clients`: whether a TLS client must present a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsAuthClients {
    /// No certificate asked for.
    No,
    /// A certificate the CA signed is required (Redis's default).
    Yes,
    /// A certificate is asked for; without one the client still connects.
    Optional,
}

impl TlsAuthClients {
    fn name(self) -> &'static str {
        match self {
            TlsAuthClients::No => "no",
            TlsAuthClients::Yes => "yes",
            TlsAuthClients::Optional => "optional",
        }
    }
}

/// The TLS and unix socket settings (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerSettings {
    /// `unixsocket`: the socket's path; empty for none.
    pub unixsocket: String,
    /// `unixsocketperm`: the socket file's mode (octal in the config); 0 leaves the umask's.
    pub unixsocketperm: u32,
    /// `tls-port`: 0 for none.
    pub tls_port: u16,
    /// `tls-cert-file`: the server's certificate chain (PEM).
    pub tls_cert_file: String,
    /// `tls-key-file`: its private key (PEM).
    pub tls_key_file: String,
    /// `tls-key-file-pass`: the key's passphrase (an encrypted PKCS#8 key).
    pub tls_key_file_pass: String,
    /// `tls-client-cert-file`, `tls-client-key-file`, `tls-client-key-file-pass` (no effect).
    pub tls_client_cert_file: String,
    /// See `tls_client_cert_file`.
    pub tls_client_key_file: String,
    /// See `tls_client_cert_file`.
    pub tls_client_key_file_pass: String,
    /// `tls-dh-params-file` (no effect).
    pub tls_dh_params_file: String,
    /// `tls-ca-cert-file`: the CA certificates client certificates are checked against.
    pub tls_ca_cert_file: String,
    /// `tls-ca-cert-dir`: a directory of CA certificates (every PEM file in it).
    pub tls_ca_cert_dir: String,
    /// `tls-auth-clients`.
    pub tls_auth_clients: TlsAuthClients,
    /// `tls-auth-clients-user`: `off` or `CN` (no effect).
    pub tls_auth_clients_user: &'static str,
    /// `tls-protocols`: `TLSv1.2`, `TLSv1.3` (space separated); empty for both.
    pub tls_protocols: String,
    /// `tls-ciphers`: TLS 1.2 cipher suites (OpenSSL names, colon separated).
    pub tls_ciphers: String,
    /// `tls-ciphersuites`: TLS 1.3 cipher suites (colon separated).
    pub tls_ciphersuites: String,
    /// `tls-prefer-server-ciphers`.
    pub tls_prefer_server_ciphers: bool,
    /// `tls-session-caching`.
    pub tls_session_caching: bool,
    /// `tls-session-cache-size`: sessions the server remembers.
    pub tls_session_cache_size: u64,
    /// `tls-session-cache-timeout` (seconds; no effect: rustls's tickets have their own).
    pub tls_session_cache_timeout: u64,
    /// `tls-replication` (no effect).
    pub tls_replication: bool,
    /// `tls-cluster` (no effect).
    pub tls_cluster: bool,
}

impl Default for ListenerSettings {
    fn default() -> Self {
        ListenerSettings {
            unixsocket: String::new(),
            unixsocketperm: 0,
            tls_port: 0,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_key_file_pass: String::new(),
            tls_client_cert_file: String::new(),
            tls_client_key_file: String::new(),
            tls_client_key_file_pass: String::new(),
            tls_dh_params_file: String::new(),
            tls_ca_cert_file: String::new(),
            tls_ca_cert_dir: String::new(),
            tls_auth_clients: TlsAuthClients::Yes,
            tls_auth_clients_user: "off",
            tls_protocols: String::new(),
            tls_ciphers: String::new(),
            tls_ciphersuites: String::new(),
            tls_prefer_server_ciphers: false,
            tls_session_caching: true,
            tls_session_cache_size: 20 * 1024,
            tls_session_cache_timeout: 300,
            tls_replication: false,
            tls_cluster: false,
        }
    }
}

/// A string parameter kept in [`ListenerSettings`]'s field of the same name.
macro_rules! text_param {
    ($name:literal, $field:ident) => {
        Param {
            name: $name,
            get: |s, _| s.listeners.$field.clone(),
            set: Some(|s, _, v| {
                s.listeners.$field = v.to_string();
                Ok(())
            }),
        }
    };
}

/// A yes/no parameter kept in [`ListenerSettings`]'s field of the same name.
macro_rules! bool_param {
    ($name:literal, $field:ident) => {
        Param {
            name: $name,
            get: |s, _| yes_no_text(s.listeners.$field),
            set: Some(|s, _, v| {
                s.listeners.$field = yes_no($name, v)?;
                Ok(())
            }),
        }
    };
}

/// `unixsocketperm`: an octal mode up to 0777, refused in Redis's words.
fn parse_perm(value: &str) -> Result<u32, ConfigRefusal> {
    const NAME: &str = "unixsocketperm";
    let mode = i64::from_str_radix(value, 8).map_err(|_| {
        ConfigRefusal::new(
            NAME,
            ConfigWhy::Other("argument couldn't be parsed as an octal number".into()),
        )
    })?;
    if !(0..=0o777).contains(&mode) {
        return Err(ConfigRefusal::new(
            NAME,
            ConfigWhy::Other("argument must be between 0 and 777 inclusive".into()),
        ));
    }
    Ok(mode as u32)
}

/// The TLS and unix socket parameters, in the order CONFIG GET * lists them.
pub const LISTENER_PARAMS: &[Param] = &[
    text_param!("unixsocket", unixsocket),
    Param {
        name: "unixsocketperm",
        get: |s, _| format!("{:o}", s.listeners.unixsocketperm),
        set: Some(|s, _, v| {
            s.listeners.unixsocketperm = parse_perm(v)?;
            Ok(())
        }),
    },
    Param {
        name: "tls-port",
        get: |s, _| s.listeners.tls_port.to_string(),
        set: Some(|s, _, v| {
            s.listeners.tls_port = int_in("tls-port", v, 0, 65535)? as u16;
            Ok(())
        }),
    },
    Param {
        name: "tls-session-cache-size",
        get: |s, _| s.listeners.tls_session_cache_size.to_string(),
        set: Some(|s, _, v| {
            let max = i32::MAX as u64;
            s.listeners.tls_session_cache_size = int_in("tls-session-cache-size", v, 0, max)?;
            Ok(())
        }),
    },
    Param {
        name: "tls-session-cache-timeout",
        get: |s, _| s.listeners.tls_session_cache_timeout.to_string(),
        set: Some(|s, _, v| {
            let max = i32::MAX as u64;
            s.listeners.tls_session_cache_timeout = int_in("tls-session-cache-timeout", v, 0, max)?;
            Ok(())
        }),
    },
    bool_param!("tls-cluster", tls_cluster),
    bool_param!("tls-replication", tls_replication),
    Param {
        name: "tls-auth-clients",
        get: |s, _| s.listeners.tls_auth_clients.name().into(),
        set: Some(|s, _, v| {
            s.listeners.tls_auth_clients = match v.to_ascii_lowercase().as_str() {
                "no" => TlsAuthClients::No,
                "yes" => TlsAuthClients::Yes,
                "optional" => TlsAuthClients::Optional,
                _ => {
                    let why = ConfigWhy::NotOneOf("no, yes, optional");
                    return Err(ConfigRefusal::new("tls-auth-clients", why));
                }
            };
            Ok(())
        }),
    },
    Param {
        name: "tls-auth-clients-user",
        get: |s, _| s.listeners.tls_auth_clients_user.into(),
        set: Some(|s, _, v| {
            s.listeners.tls_auth_clients_user = match v.to_ascii_lowercase().as_str() {
                "cn" => "CN",
                "off" => "off",
                _ => {
                    let why = ConfigWhy::NotOneOf("CN, off");
                    return Err(ConfigRefusal::new("tls-auth-clients-user", why));
                }
            };
            Ok(())
        }),
    },
    bool_param!("tls-prefer-server-ciphers", tls_prefer_server_ciphers),
    bool_param!("tls-session-caching", tls_session_caching),
    text_param!("tls-cert-file", tls_cert_file),
    text_param!("tls-key-file", tls_key_file),
    text_param!("tls-key-file-pass", tls_key_file_pass),
    text_param!("tls-client-cert-file", tls_client_cert_file),
    text_param!("tls-client-key-file", tls_client_key_file),
    text_param!("tls-client-key-file-pass", tls_client_key_file_pass),
    text_param!("tls-dh-params-file", tls_dh_params_file),
    text_param!("tls-ca-cert-file", tls_ca_cert_file),
    text_param!("tls-ca-cert-dir", tls_ca_cert_dir),
    text_param!("tls-protocols", tls_protocols),
    text_param!("tls-ciphers", tls_ciphers),
    text_param!("tls-ciphersuites", tls_ciphersuites),
];

/// Whether a client's CONFIG SET refuses the parameter: the unix socket opens at start only.
pub fn is_startup_only(name: &str) -> bool {
    matches!(name, "unixsocket" | "unixsocketperm")
}

impl super::ServerState {
    /// The TLS port's configuration for the next connection, when the server has one.
    pub(crate) fn tls_acceptor(&self) -> Option<tokio_rustls::TlsAcceptor> {
        self.tls.read().clone()
    }

    /// Installs the TLS configuration new connections get.
    pub(crate) fn set_tls_acceptor(&self, acceptor: tokio_rustls::TlsAcceptor) {
        *self.tls.write() = Some(acceptor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Settings;
    use crate::state::settings::set_one;

    #[test]
    fn values_read_back_as_redis_shows_them() {
        let mut s = Settings::default();
        let e = echomq_engine::Config::default();
        set_one(&mut s, &e, "unixsocketperm", "700").unwrap();
        set_one(&mut s, &e, "tls-auth-clients", "OPTIONAL").unwrap();
        set_one(&mut s, &e, "tls-port", "6380").unwrap();
        let get = |s: &Settings, name: &str| {
            let p = LISTENER_PARAMS.iter().find(|p| p.name == name).unwrap();
            (p.get)(s, &e)
        };
        assert_eq!(get(&s, "unixsocketperm"), "700");
        assert_eq!(s.listeners.unixsocketperm, 0o700);
        assert_eq!(get(&s, "tls-auth-clients"), "optional");
        assert_eq!(get(&s, "tls-port"), "6380");
        assert_eq!(get(&s, "tls-session-caching"), "yes");
        let refused = set_one(&mut s, &e, "unixsocketperm", "800").unwrap_err();
        assert!(
            refused
                .to_string()
                .ends_with("couldn't be parsed as an octal number")
        );
        let refused = set_one(&mut s, &e, "unixsocketperm", "1000").unwrap_err();
        assert!(refused.to_string().ends_with("between 0 and 777 inclusive"));
        let refused = set_one(&mut s, &e, "tls-auth-clients", "maybe").unwrap_err();
        assert!(
            refused
                .to_string()
                .ends_with("one of the following: no, yes, optional")
        );
        assert!(set_one(&mut s, &e, "tls-port", "65536").is_err());
    }
}

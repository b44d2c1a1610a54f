//! The TLS listener's configuration: a rustls server (ring provider) built from the `tls-*`
//! settings ([`crate::state::listeners`]), with Redis's start-up refusals.
//!
//! - `tls-cert-file` (a PEM chain) and `tls-key-file` (PEM: PKCS#8, PKCS#1 or SEC1); with
//!   `tls-key-file-pass`, an encrypted PKCS#8 key (`BEGIN ENCRYPTED PRIVATE KEY`, PBES2 as
//!   `openssl genpkey -aes256` or `openssl pkcs8 -topk8 -v2 aes256` write it). OpenSSL's
//!   legacy encrypted PEM (`Proc-Type: 4,ENCRYPTED`) is refused: convert it with
//!   `openssl pkcs8 -topk8`.
//! - `tls-auth-clients yes` requires a client certificate signed by a CA of `tls-ca-cert-file`
//!   or `tls-ca-cert-dir` (every PEM file in it); `optional` asks for one and checks it when
//!   sent; `no` asks for none.
//! - `tls-protocols`: `TLSv1.2` and `TLSv1.3` (rustls has no older ones); empty for both.
//! - `tls-ciphersuites` (TLS 1.3, IANA names) and `tls-ciphers` (TLS 1.2, OpenSSL names) keep
//!   the listed suites rustls implements; names it lacks are skipped (a list that keeps none
//!   is refused), and OpenSSL's keywords (`HIGH`, `DEFAULT`, `!aNULL` ...) leave its defaults.
//! - `tls-prefer-server-ciphers`: the server's order wins; `tls-session-caching` and
//!   `tls-session-cache-size`: resumption from an in-memory cache of that many sessions.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::error::{ConfigRefusal, ConfigWhy};
use crate::state::ServerState;
use crate::state::listeners::{ListenerSettings, TlsAuthClients};

/// OpenSSL's names of the TLS 1.2 suites rustls implements, with rustls's.
const TLS12_NAMES: &[(&str, &str)] = &[
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// Builds the acceptor of the TLS port from the settings, or says (in Redis's words where it
/// has them) why the server cannot start.
pub fn acceptor(settings: &ListenerSettings) -> Result<TlsAcceptor, String> {
    if settings.tls_cert_file.is_empty() {
        return Err("No tls-cert-file configured!".into());
    }
    if settings.tls_key_file.is_empty() {
        return Err("No tls-key-file configured!".into());
    }
    let versions = protocol_versions(&settings.tls_protocols)?;
    let provider = Arc::new(provider(settings)?);
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(&settings.tls_cert_file)
            .and_then(|certs| certs.collect::<Result<_, _>>())
            .map_err(|e| {
                format!(
                    "Failed to load certificate: {}: {e}",
                    settings.tls_cert_file
                )
            })?;
    if certs.is_empty() {
        return Err(format!(
            "Failed to load certificate: {}: no certificate in the file",
            settings.tls_cert_file
        ));
    }
    let key = private_key(&settings.tls_key_file, &settings.tls_key_file_pass)
        .map_err(|e| format!("Failed to load private key: {}: {e}", settings.tls_key_file))?;
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Invalid tls-protocols specified: {e}"))?;
    let builder = match settings.tls_auth_clients {
        TlsAuthClients::No => builder.with_no_client_auth(),
        auth => {
            let roots = ca_roots(settings)?;
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if auth == TlsAuthClients::Optional {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier.build().map_err(|e| {
                format!("Failed to configure CA certificate(s) file/directory: {e}")
            })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Failed to load private key: {}: {e}", settings.tls_key_file))?;
    config.ignore_client_order = settings.tls_prefer_server_ciphers;
    if settings.tls_session_caching && settings.tls_session_cache_size > 0 {
        config.session_storage =
            ServerSessionMemoryCache::new(settings.tls_session_cache_size as usize);
    } else {
        config.session_storage = Arc::new(NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
    }
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The TLS configuration after a CONFIG SET of `tls-*` parameters, built (its files read
/// again) before anything changes: `None` when the server has no TLS port open (as Redis
/// checks `tls-port`; a TLS port opened later builds it then, or reuses the one it had
/// before `tls-port 0`); a refusal naming
/// `name` (the first `tls-*` parameter set) when it cannot be built, as Redis refuses it.
pub(crate) fn prepare_reload(
    state: &ServerState,
    name: &str,
    after: &ListenerSettings,
) -> Result<Option<TlsAcceptor>, ConfigRefusal> {
    if after.tls_port == 0 || state.tls_acceptor().is_none() {
        return Ok(None);
    }
    acceptor(after).map(Some).map_err(|e| {
        tracing::warn!("{e}");
        let why = "Unable to update TLS configuration. Check server logs.";
        ConfigRefusal::new(name, ConfigWhy::Other(why.into()))
    })
}

/// `tls-protocols` as rustls versions.
fn protocol_versions(text: &str) -> Result<Vec<&'static SupportedProtocolVersion>, String> {
    let mut versions = Vec::new();
    let mut older = false;
    for word in text.split_whitespace() {
        match word.to_ascii_lowercase().as_str() {
            "tlsv1.2" => versions.push(&rustls::version::TLS12),
            "tlsv1.3" => versions.push(&rustls::version::TLS13),
            "tlsv1" | "tlsv1.1" => older = true,
            _ => {
                return Err("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.".into());
            }
        }
    }
    if versions.is_empty() {
        if older {
            return Err(
                "tls-protocols: echomq's TLS (rustls) supports TLSv1.2 and TLSv1.3 only".into(),
            );
        }
        return Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]);
    }
    Ok(versions)
}

/// ring's provider, its suites narrowed by `tls-ciphersuites` and `tls-ciphers`.
fn provider(settings: &ListenerSettings) -> Result<CryptoProvider, String> {
    let mut provider = rustls::crypto::ring::default_provider();
    let all = provider.cipher_suites.clone();
    let name = |suite: &rustls::SupportedCipherSuite| {
        format!("{:?}", suite.suite()).replace("TLS13_", "TLS_")
    };
    let tls13 = |suite: &rustls::SupportedCipherSuite| suite.version() == &rustls::version::TLS13;
    // TLS 1.3 from tls-ciphersuites, TLS 1.2 from tls-ciphers; each list empty = all.
    let pick = |list: &str, want13: bool, what: &str| -> Result<Vec<_>, String> {
        let of_version = all.iter().filter(|s| tls13(s) == want13);
        if list.trim().is_empty() {
            return Ok(of_version.copied().collect());
        }
        let names: Vec<String> = list
            .split([':', ',', ' '])
            .filter(|n| !n.is_empty())
            .map(|n| {
                TLS12_NAMES
                    .iter()
                    .find(|(openssl, _)| openssl.eq_ignore_ascii_case(n))
                    .map_or_else(|| n.to_ascii_uppercase(), |(_, iana)| (*iana).to_string())
            })
            .collect();
        let keyword = names
            .iter()
            .any(|n| !n.starts_with("TLS_") || n.starts_with('!'));
        let kept: Vec<_> = of_version
            .clone()
            .filter(|s| names.contains(&name(s)))
            .copied()
            .collect();
        match (kept.is_empty(), keyword) {
            (false, _) => Ok(kept),
            (true, true) => Ok(of_version.copied().collect()),
            (true, false) => Err(format!("Failed to configure {what}: {list}")),
        }
    };
    let mut suites = pick(&settings.tls_ciphersuites, true, "ciphersuites")?;
    suites.extend(pick(&settings.tls_ciphers, false, "ciphers")?);
    provider.cipher_suites = suites;
    Ok(provider)
}

/// The server's private key; `pass` decrypts an encrypted PKCS#8 key.
fn private_key(path: &str, pass: &str) -> Result<PrivateKeyDer<'static>, String> {
    const BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
    const END: &str = "-----END ENCRYPTED PRIVATE KEY-----";
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let encrypted = text.find(BEGIN).and_then(|start| {
        let end = text[start..].find(END)? + start + END.len();
        Some(&text[start..end])
    });
    let Some(pem) = encrypted else {
        if text.contains("Proc-Type: 4,ENCRYPTED") {
            return Err(
                "a legacy encrypted PEM key: convert it with 'openssl pkcs8 -topk8'".into(),
            );
        }
        return PrivateKeyDer::from_pem_slice(text.as_bytes()).map_err(|e| e.to_string());
    };
    if pass.is_empty() {
        return Err("the key is encrypted and tls-key-file-pass is not set".into());
    }
    let (_, der) = pkcs8::der::pem::decode_vec(pem.as_bytes()).map_err(|e| e.to_string())?;
    let info =
        pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice()).map_err(|e| e.to_string())?;
    let document = info
        .decrypt(pass)
        .map_err(|_| "bad decrypt (wrong tls-key-file-pass?)".to_string())?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        document.as_bytes().to_vec(),
    )))
}

/// The CA certificates of `tls-ca-cert-file` and every PEM file of `tls-ca-cert-dir`.
fn ca_roots(settings: &ListenerSettings) -> Result<RootCertStore, String> {
    if settings.tls_ca_cert_file.is_empty() && settings.tls_ca_cert_dir.is_empty() {
        return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!".into());
    }
    let refused = |e: String| format!("Failed to configure CA certificate(s) file/directory: {e}");
    let mut roots = RootCertStore::empty();
    let mut add_file = |path: &Path, strict: bool| -> Result<(), String> {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>());
        match certs {
            Ok(certs) => {
                for cert in certs {
                    roots
                        .add(cert)
                        .map_err(|e| refused(format!("{}: {e}", path.display())))?;
                }
                Ok(())
            }
            // A CA directory may hold other files (OpenSSL's hash links are PEM too).
            Err(_) if !strict => Ok(()),
            Err(e) => Err(refused(format!("{}: {e}", path.display()))),
        }
    };
    if !settings.tls_ca_cert_file.is_empty() {
        add_file(Path::new(&settings.tls_ca_cert_file), true)?;
    }
    if !settings.tls_ca_cert_dir.is_empty() {
        let entries = std::fs::read_dir(&settings.tls_ca_cert_dir)
            .map_err(|e| refused(format!("{}: {e}", settings.tls_ca_cert_dir)))?;
        for entry in entries.flatten() {
            if entry.path().is_file() {
                add_file(&entry.path(), false)?;
            }
        }
    }
    if roots.is_empty() {
        return Err(refused("no CA certificate found".into()));
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_map_to_rustls_versions() {
        assert_eq!(protocol_versions("").unwrap().len(), 2);
        let only12 = protocol_versions("TLSv1.2").unwrap();
        assert_eq!(only12.len(), 1);
        assert_eq!(only12[0].version, rustls::ProtocolVersion::TLSv1_2);
        assert_eq!(protocol_versions("tlsv1.2 TLSv1.3").unwrap().len(), 2);
        assert!(protocol_versions("TLSv1.1").is_err());
        assert!(
            protocol_versions("SSLv3")
                .unwrap_err()
                .starts_with("Invalid tls-protocols")
        );
    }

    #[test]
    fn cipher_lists_keep_the_suites_named() {
        let mut settings = ListenerSettings {
            tls_ciphersuites: "TLS_CHACHA20_POLY1305_SHA256".into(),
            tls_ciphers: "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305".into(),
            ..ListenerSettings::default()
        };
        let suites = provider(&settings).unwrap().cipher_suites;
        assert_eq!(suites.len(), 3);
        settings.tls_ciphers = "HIGH:!aNULL".into();
        assert_eq!(provider(&settings).unwrap().cipher_suites.len(), 1 + 6);
        settings.tls_ciphersuites = "TLS_NOPE".into();
        assert!(provider(&settings).is_err());
    }

    #[test]
    fn missing_files_are_refused_in_redis_words() {
        let settings = ListenerSettings::default();
        assert_eq!(
            acceptor(&settings).err().unwrap(),
            "No tls-cert-file configured!"
        );
    }
}

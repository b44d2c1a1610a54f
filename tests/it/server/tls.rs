//! The TLS port (`tls-port`) beside the plain one, driven by redis-cli `--tls`, redis-py
//! (`ssl=True`) and redis-rs (`rediss://`), with certificates the test makes with the
//! `openssl` command: a CA, a server certificate for 127.0.0.1, client certificates from that
//! CA and from a stranger's. Client certificates required (`tls-auth-clients yes`), optional,
//! and not asked for, changed at run time; `port 0` for a TLS-only server; an encrypted key
//! (`tls-key-file-pass`).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

use super::clients::{python, redis_cli, run};
use crate::support::process::{Running, echomq};

/// The `openssl` command, or a skip notice (a failure under `CI=true`).
fn openssl() -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("openssl"))
        .find(|p| p.is_file());
    if found.is_none() {
        let why = "the openssl command is not installed";
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true requires it: {why}");
        }
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// Certificates in a temporary directory: `ca.crt`, `server.{crt,key}`, `server.enc.key`
/// (encrypted with `secret`), `client.{crt,key}` (from the CA) and `stranger.{crt,key}` (from
/// another CA).
pub(super) struct Certs {
    pub dir: TempDir,
}

impl Certs {
    pub fn make() -> Option<Certs> {
        let openssl = openssl()?;
        let dir = tempfile::tempdir().unwrap();
        let ssl = |args: &[&str]| {
            let output = run(
                Command::new(&openssl).current_dir(dir.path()).args(args),
                b"",
            );
            assert!(
                output.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for ca in ["ca", "other-ca"] {
            let subject = format!("/CN=echomq test {ca}");
            let mut args = vec!["req", "-x509", "-days", "2", "-subj", &subject];
            args.extend(ec);
            let (key, crt) = (format!("{ca}.key"), format!("{ca}.crt"));
            args.extend(["-keyout", &key, "-out", &crt]);
            ssl(&args);
        }
        std::fs::write(
            dir.path().join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("client.ext"),
            "extendedKeyUsage=clientAuth\n",
        )
        .unwrap();
        for (name, ca, ext) in [
            ("server", "ca", "server.ext"),
            ("client", "ca", "client.ext"),
            ("stranger", "other-ca", "client.ext"),
        ] {
            let (key, csr, crt) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.crt"),
            );
            let subject = format!("/CN={name}");
            let mut args = vec![
                "req", "-new", "-subj", &subject, "-keyout", &key, "-out", &csr,
            ];
            args.extend(ec);
            ssl(&args);
            let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
            ssl(&[
                "x509",
                "-req",
                "-days",
                "2",
                "-in",
                &csr,
                "-CA",
                &ca_crt,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-extfile",
                ext,
                "-out",
                &crt,
            ]);
        }
        ssl(&[
            "pkcs8",
            "-topk8",
            "-v2",
            "aes256",
            "-in",
            "server.key",
            "-out",
            "server.enc.key",
            "-passout",
            "pass:secret",
        ]);
        Some(Certs { dir })
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.path().join(name)).unwrap()
    }
}

/// A port free now on loopback.
pub(super) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `echomq serve --port PORT --config FILE` (the file holding `lines`): the process and the
/// `lines_out` lines it prints first (its listeners).
pub(super) fn serve_with(
    dir: &Path,
    port: u16,
    lines: &str,
    lines_out: usize,
) -> (Running, Vec<String>) {
    let config = dir.join("echomq.conf");
    std::fs::write(&config, lines).unwrap();
    let mut running = Running(
        echomq()
            .args(["serve", "--port", &port.to_string(), "--config"])
            .arg(&config)
            // Persistence off (the test's servers must not save `dump.rdb` where they run).
            .args(["--save", ""])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut stdout = BufReader::new(running.0.stdout.take().unwrap());
    let mut printed = Vec::new();
    for _ in 0..lines_out {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "echomq serve stopped after {printed:?}");
        printed.push(line.trim().to_string());
    }
    (running, printed)
}

/// `redis-cli --tls -p PORT --cacert ca.crt [extra] args`: its output, or its error text.
fn cli_tls(certs: &Certs, port: u16, extra: &[&str], args: &[&str]) -> Result<String, String> {
    let cli = redis_cli().expect("redis-cli");
    let output = run(
        Command::new(cli)
            .args(["--tls", "-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["--cacert", &certs.path("ca.crt")])
            .args(extra)
            .args(args),
        b"",
    );
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    if output.status.success() && !out.starts_with("Could not connect") && !out.contains("Error") {
        Ok(out)
    } else {
        Err(format!("{out}{err}"))
    }
}

/// A redis-py client script over TLS: `ssl_ca_certs` and the client certificate if `client`.
fn redis_py_tls(certs: &Certs, port: u16, client: Option<&str>) -> Result<String, String> {
    let python = python().expect("python");
    let (certfile, keyfile) = match client {
        Some(name) => (
            format!("'{}'", certs.path(&format!("{name}.crt"))),
            format!("'{}'", certs.path(&format!("{name}.key"))),
        ),
        None => ("None".into(), "None".into()),
    };
    let script = format!(
        "import redis\n\
         r = redis.Redis(host='127.0.0.1', port={port}, ssl=True, ssl_ca_certs='{ca}', \
         ssl_certfile={certfile}, ssl_keyfile={keyfile}, socket_timeout=10)\n\
         r.set('py', 'over tls')\n\
         print(r.get('py').decode())\n",
        ca = certs.path("ca.crt"),
    );
    let output = run(Command::new(python).args(["-c", &script]), b"");
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// A redis-rs connection over `rediss://`, trusting the test CA, with the client certificate
/// if `client`.
pub(super) fn redis_rs_connect(
    certs: &Certs,
    port: u16,
    client: Option<&str>,
) -> redis::RedisResult<redis::Connection> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client_tls = client.map(|name| redis::ClientTlsConfig {
        client_cert: certs.read(&format!("{name}.crt")),
        client_key: certs.read(&format!("{name}.key")),
    });
    let tls = redis::TlsCertificates {
        client_tls,
        root_cert: Some(certs.read("ca.crt")),
    };
    let client = redis::Client::build_with_tls(format!("rediss://127.0.0.1:{port}/"), tls)?;
    client.get_connection_with_timeout(std::time::Duration::from_secs(10))
}

/// SET and GET over [`redis_rs_connect`].
pub(super) fn redis_rs_tls(
    certs: &Certs,
    port: u16,
    client: Option<&str>,
) -> redis::RedisResult<String> {
    let mut conn = redis_rs_connect(certs, port, client)?;
    redis::cmd("SET")
        .arg("rs")
        .arg("over tls")
        .exec(&mut conn)?;
    redis::cmd("GET").arg("rs").query(&mut conn)
}

fn tls_config(certs: &Certs, tls_port: u16, extra: &str) -> String {
    format!(
        "tls-port {tls_port}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\n{extra}",
        certs.path("server.crt"),
        certs.path("server.key"),
        certs.path("ca.crt"),
    )
}

#[test]
fn tls_port_serves_redis_cli_redis_py_and_redis_rs_beside_the_plain_port() {
    let Some(certs) = Certs::make() else { return };
    let (Some(_), Some(_)) = (redis_cli(), python()) else {
        return;
    };
    let tls_port = free_port();
    let config = tls_config(&certs, tls_port, "tls-auth-clients no\n");
    let (_server, lines) = serve_with(certs.dir.path(), free_port(), &config, 2);
    assert!(
        lines[1].ends_with(&format!("127.0.0.1:{tls_port} (tls)")),
        "{lines:?}"
    );
    let plain: u16 = lines[0].rsplit(':').next().unwrap().parse().unwrap();

    assert_eq!(
        cli_tls(&certs, tls_port, &[], &["SET", "k", "v"]).unwrap(),
        "OK\n"
    );
    assert_eq!(
        cli_tls(&certs, tls_port, &[], &["GET", "k"]).unwrap(),
        "v\n"
    );
    let list = cli_tls(&certs, tls_port, &[], &["CLIENT", "LIST"]).unwrap();
    assert!(
        list.contains(&format!("laddr=127.0.0.1:{tls_port} ")),
        "{list}"
    );
    let got = cli_tls(&certs, tls_port, &[], &["CONFIG", "GET", "tls-port"]).unwrap();
    assert_eq!(got, format!("tls-port\n{tls_port}\n"));
    assert_eq!(redis_py_tls(&certs, tls_port, None).unwrap(), "over tls");
    assert_eq!(redis_rs_tls(&certs, tls_port, None).unwrap(), "over tls");
    // A reply far larger than the socket's buffers goes out whole.
    let mut conn = redis_rs_connect(&certs, tls_port, None).unwrap();
    let big: Vec<u8> = (0..8 << 20).map(|i| (i % 251) as u8).collect();
    redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .exec(&mut conn)
        .unwrap();
    let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut conn).unwrap();
    assert!(
        got == big,
        "a {} byte value came back as {} bytes",
        big.len(),
        got.len()
    );

    // The plain port serves the same data; plain text to the TLS port gets no answer.
    let cli = redis_cli().unwrap();
    let get = |port: u16| {
        let output = run(
            Command::new(&cli).args(["-h", "127.0.0.1", "-p", &port.to_string(), "GET", "rs"]),
            b"",
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(get(plain), "over tls\n");
    assert_ne!(get(tls_port), "over tls\n");
}

#[test]
fn client_certificates_required_optional_and_refused() {
    let Some(certs) = Certs::make() else { return };
    let (Some(_), Some(_)) = (redis_cli(), python()) else {
        return;
    };
    let with = |name: &str| {
        vec![
            "--cert".to_string(),
            certs.path(&format!("{name}.crt")),
            "--key".to_string(),
            certs.path(&format!("{name}.key")),
        ]
    };
    let (client, stranger) = (with("client"), with("stranger"));
    fn as_args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    // Required (Redis's default): a certificate from the CA, or no connection.
    let tls_port = free_port();
    let config = tls_config(&certs, tls_port, "");
    let (_server, _) = serve_with(certs.dir.path(), free_port(), &config, 2);
    let ping = |extra: &[&str]| cli_tls(&certs, tls_port, extra, &["PING"]);
    assert_eq!(ping(&as_args(&client)).unwrap(), "PONG\n");
    assert!(ping(&[]).is_err());
    assert!(ping(&as_args(&stranger)).is_err());
    assert_eq!(
        redis_py_tls(&certs, tls_port, Some("client")).unwrap(),
        "over tls"
    );
    assert!(redis_py_tls(&certs, tls_port, None).is_err());
    assert_eq!(
        redis_rs_tls(&certs, tls_port, Some("client")).unwrap(),
        "over tls"
    );
    assert!(redis_rs_tls(&certs, tls_port, Some("stranger")).is_err());
    // At run time: a certificate that cannot load is refused and changes nothing; turning
    // client certificates off lets the next connection in without one.
    let set = |name: &str, value: &str| {
        let (Ok(reply) | Err(reply)) = cli_tls(
            &certs,
            tls_port,
            &as_args(&client),
            &["CONFIG", "SET", name, value],
        );
        reply
    };
    let refused = set("tls-cert-file", "/nonexistent.crt");
    assert!(
        refused.contains("(possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs."),
        "{refused}"
    );
    assert_eq!(ping(&as_args(&client)).unwrap(), "PONG\n");
    assert!(ping(&[]).is_err());
    assert_eq!(set("tls-auth-clients", "no"), "OK\n");
    assert_eq!(ping(&[]).unwrap(), "PONG\n");
    drop(_server);

    // Optional: no certificate is fine, one the CA did not sign is not.
    let tls_port = free_port();
    let config = tls_config(&certs, tls_port, "tls-auth-clients optional\n");
    let (_server, _) = serve_with(certs.dir.path(), free_port(), &config, 2);
    let ping = |extra: &[&str]| cli_tls(&certs, tls_port, extra, &["PING"]);
    assert_eq!(ping(&[]).unwrap(), "PONG\n");
    assert_eq!(ping(&as_args(&client)).unwrap(), "PONG\n");
    assert!(ping(&as_args(&stranger)).is_err());
    assert_eq!(redis_py_tls(&certs, tls_port, None).unwrap(), "over tls");
}

#[test]
fn port_zero_serves_tls_only_with_an_encrypted_key_and_tls_protocols() {
    let Some(certs) = Certs::make() else { return };
    let Some(_) = redis_cli() else { return };
    let tls_port = free_port();
    let config = format!(
        "port 0\ntls-port {tls_port}\ntls-cert-file {}\ntls-key-file {}\ntls-key-file-pass secret\ntls-auth-clients no\ntls-protocols \"TLSv1.2\"\n",
        certs.path("server.crt"),
        certs.path("server.enc.key"),
    );
    let (_server, lines) = serve_with(certs.dir.path(), 0, &config, 1);
    assert!(lines[0].ends_with("(tls)"), "{lines:?}");
    let got = cli_tls(&certs, tls_port, &[], &["CONFIG", "GET", "port"]).unwrap();
    assert_eq!(got, "port\n0\n");
    let got = cli_tls(&certs, tls_port, &[], &["CONFIG", "GET", "tls-protocols"]).unwrap();
    assert_eq!(got, "tls-protocols\nTLSv1.2\n");
    // TLS 1.3 only on the client side finds no common version.
    let openssl = openssl().unwrap();
    let output = run(
        Command::new(&openssl).args([
            "s_client",
            "-tls1_3",
            "-connect",
            &format!("127.0.0.1:{tls_port}"),
        ]),
        b"",
    );
    assert!(!output.status.success());

    // A wrong passphrase stops the start with the reason.
    let config = config.replace("pass secret", "pass wrong");
    let config_file = certs.dir.path().join("wrong.conf");
    std::fs::write(&config_file, config).unwrap();
    let output = run(
        echomq()
            .args(["serve", "--port", "0", "--config"])
            .arg(&config_file)
            .args(["--save", ""]),
        b"",
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Failed to load private key"), "{stderr}");
}

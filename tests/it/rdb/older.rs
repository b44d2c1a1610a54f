//! Files older servers write load into echomq: Redis 7.0 (RDB 10, streams as
//! `RDB_TYPE_STREAM_LISTPACKS_2`) and Valkey 8.1 (a Redis 7.2 fork: RDB 11,
//! `RDB_TYPE_STREAM_LISTPACKS_3`). What the two versions both report must match: entries, the
//! stream's counters, each group's cursor, entries-read and PEL (owners, delivery counts).
//! Skipped (with a note) where a server is not installed.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::serve_rdb;
use crate::aof::{Conn, free_port, text, workload};
use crate::support::process::Running;

/// The fields both an older server and echomq report, for `key`.
fn neutral_state(c: &mut Conn, key: &str) -> String {
    let mut out = c.ok(&["XRANGE", key, "-", "+"]);
    let info = c.run(&["XINFO", "STREAM", key]).unwrap();
    if let redis::Value::Array(items) = info {
        for pair in items.chunks(2) {
            let name = text(&pair[0]);
            if [
                "length",
                "last-generated-id",
                "max-deleted-entry-id",
                "entries-added",
                "recorded-first-entry-id",
                "groups",
            ]
            .contains(&name.as_str())
            {
                out.push_str(&format!("\n{name}: {}", text(&pair[1])));
            }
        }
    }
    if let redis::Value::Array(groups) = c.run(&["XINFO", "GROUPS", key]).unwrap() {
        for group in groups {
            let redis::Value::Array(items) = group else {
                continue;
            };
            let mut name = String::new();
            for pair in items.chunks(2) {
                let field = text(&pair[0]);
                if [
                    "name",
                    "consumers",
                    "pending",
                    "last-delivered-id",
                    "entries-read",
                    "lag",
                ]
                .contains(&field.as_str())
                {
                    out.push_str(&format!("\n{field}: {}", text(&pair[1])));
                }
                if field == "name" {
                    name = text(&pair[1]);
                }
            }
            let pending = c.run(&["XPENDING", key, &name, "-", "+", "1000"]).unwrap();
            if let redis::Value::Array(rows) = pending {
                for row in rows {
                    if let redis::Value::Array(f) = row
                        && f.len() == 4
                    {
                        out.push_str(&format!(
                            "\n  {} {} {}",
                            text(&f[0]),
                            text(&f[1]),
                            text(&f[3])
                        ));
                    }
                }
            }
        }
    }
    out
}

fn all(c: &mut Conn) -> String {
    let mut out = neutral_state(c, "s");
    out.push_str(&neutral_state(c, "e"));
    c.ok(&["SELECT", "3"]);
    out.push_str(&neutral_state(c, "s3"));
    out.push_str(&c.ok(&["GET", "str"]));
    c.ok(&["SELECT", "0"]);
    out
}

fn older_servers() -> Vec<(&'static str, PathBuf)> {
    let mut found = Vec::new();
    for (name, var) in [
        ("Redis 7.0", "ECHOMQ_REDIS_SERVER"),
        ("Valkey 8.1", "ECHOMQ_VALKEY_SERVER"),
    ] {
        match std::env::var(var) {
            Ok(path) if std::path::Path::new(&path).is_file() => found.push((name, path.into())),
            _ => eprintln!("SKIPPED: {name} not found (set {var})"),
        }
    }
    found
}

#[test]
fn rdb_files_of_redis7_and_valkey8_load_into_echomq() {
    for (name, binary) in older_servers() {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(&binary)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--dir", dir.path().to_str().unwrap(), "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Running(child);
        let mut r = Conn::open(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
        workload(&mut r);
        assert_eq!(r.ok(&["SAVE"]), "OK");
        let theirs = all(&mut r);
        drop(server);
        let (_echomq, addr) = serve_rdb(dir.path(), &[]);
        let mut c = Conn::open(addr);
        assert_eq!(all(&mut c), theirs, "{name}'s dump.rdb");
    }
}

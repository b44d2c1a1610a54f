//! `echomq serve FILE [--directive value …]` reading Redis's config files: Debian's stock
//! `redis.conf`, Redis's fatal messages, includes and quoting, `save` lines adding up,
//! `rename-command`, CONFIG REWRITE against Redis 8.8's, `supervised systemd` and
//! `daemonize` with a pid file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::aof::free_port;
use crate::support::process::{Running, SERVE_ARGS, echomq, listening_addr, serve};

/// How long a started server may take to answer.
const START_TIMEOUT: Duration = Duration::from_secs(20);

fn connect(port: u16) -> redis::Connection {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
        match client.get_connection() {
            Ok(mut conn) => {
                if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                    return conn;
                }
            }
            Err(e) if Instant::now() > deadline => panic!("no server on {port}: {e}"),
            Err(_) => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn config_get(conn: &mut redis::Connection, name: &str) -> String {
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(conn)
        .unwrap();
    assert_eq!(pair.len(), 2, "CONFIG GET {name}: {pair:?}");
    pair[1].clone()
}

/// Runs `echomq serve <args>` to its exit; its stderr.
fn serve_fails(args: &[&str]) -> String {
    let out = echomq().arg("serve").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Kills the process whose pid `pidfile` holds when dropped.
struct Daemon(PathBuf);

impl Daemon {
    fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(&self.0).ok()?.trim().parse().ok()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + START_TIMEOUT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn debian_stock_redis_conf_starts_it_daemonized() {
    let stock = Path::new("/etc/redis/redis.conf");
    if !stock.exists() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true requires /etc/redis/redis.conf (scripts/install-peers)"
        );
        eprintln!("SKIPPED: no /etc/redis/redis.conf");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (log, pidfile) = (dir.path().join("echomq.log"), dir.path().join("echomq.pid"));
    let text = std::fs::read_to_string(stock).unwrap();
    let edited: String = text
        .lines()
        .map(|line| {
            let name = line.split_whitespace().next().unwrap_or("");
            match name {
                "port" => format!("port {port}"),
                "dir" => format!("dir {}", dir.path().display()),
                "logfile" => format!("logfile {}", log.display()),
                "pidfile" => format!("pidfile {}", pidfile.display()),
                _ => line.to_string(),
            }
        })
        .map(|line| line + "\n")
        .collect();
    let config = dir.path().join("redis.conf");
    std::fs::write(&config, edited).unwrap();
    // Debian's file says `daemonize yes`: the command returns at once, the daemon serves.
    let status = echomq()
        .arg("serve")
        .arg(&config)
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let daemon = Daemon(pidfile.clone());
    let mut conn = connect(port);
    wait_for("the pid file", || daemon.pid().is_some());
    let info: String = redis::cmd("INFO").arg("server").query(&mut conn).unwrap();
    assert!(
        info.contains(&format!("process_id:{}", daemon.pid().unwrap())),
        "{info}"
    );
    assert!(
        info.contains(&format!("config_file:{}", config.display())),
        "{info}"
    );
    assert_eq!(config_get(&mut conn, "port"), port.to_string());
    assert_eq!(config_get(&mut conn, "bind"), "127.0.0.1 -::1");
    assert_eq!(config_get(&mut conn, "tcp-keepalive"), "300");
    assert_eq!(config_get(&mut conn, "daemonize"), "yes");
    assert_eq!(config_get(&mut conn, "hash-max-listpack-entries"), "512");
    assert_eq!(config_get(&mut conn, "save"), "3600 1 300 100 60 10000");
    assert_eq!(config_get(&mut conn, "repl-diskless-sync-delay"), "5");
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert!(
        log_text.contains("accepted, no effect in echomq: tcp-keepalive"),
        "{log_text}"
    );
    assert!(
        log_text.contains("Persistence: RDB snapshots"),
        "{log_text}"
    );
    // SIGTERM: the final save, then the pid file goes.
    let pid = daemon.pid().unwrap();
    Command::new("kill").arg(pid.to_string()).status().unwrap();
    wait_for("the pid file's removal", || !pidfile.exists());
    assert!(dir.path().join("dump.rdb").exists());
}

#[test]
fn an_unknown_directive_is_fatal_as_in_redis() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.conf");
    std::fs::write(&config, "# comment\nport 0\n\nnosuch-directive\n").unwrap();
    let stderr = serve_fails(&[config.to_str().unwrap()]);
    assert_eq!(
        stderr,
        "\n*** FATAL CONFIG FILE ERROR (Redis 8.8.0) ***\nReading the configuration file, at line 4\n>>> 'nosuch-directive'\nBad directive or wrong number of arguments\n"
    );
    // Command-line options are lines after the file's.
    let stderr = serve_fails(&[config.to_str().unwrap(), "--maxmemory", "lots"]);
    assert!(stderr.contains("at line 4\n"), "{stderr}");
    let stderr = serve_fails(&["--port", "0", "--hz", "1", "2"]);
    assert!(
        stderr.ends_with(">>> 'hz \"1\" \"2\"'\nwrong number of arguments\n"),
        "{stderr}"
    );
    // With a value, Redis takes it for a module's configuration, and aborts in its log.
    let out = echomq()
        .args(SERVE_ARGS)
        .args(["--no-such", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("# >>> 'no-such 1'"), "{log}");
    assert!(
        log.contains("Module Configuration detected without loadmodule directive or no ApplyConfig call: aborting"),
        "{log}"
    );
}

#[test]
fn includes_quoting_save_lines_and_renamed_commands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("conf.d")).unwrap();
    std::fs::write(
        dir.path().join("conf.d/b.conf"),
        "save 300 10\nmasterauth \"pass word\\x21\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("conf.d/a.conf"), "save 900 1\n").unwrap();
    let config = dir.path().join("main.conf");
    std::fs::write(
        &config,
        format!(
            "include {}/conf.d/*.conf\nsave 60 10000\nrequirepass 'its'\n\
             rename-command CONFIG MYCONFIG\nrename-command FLUSHALL \"\"\n\
             rename-command INCR MYINCR\n\
             notify-keyspace-events \"Ex\"\nslaveof-nothing-here 1 2\n",
            dir.path().display()
        ),
    )
    .unwrap();
    // (the last line is no directive: remove it once the fatal message is checked)
    let stderr = {
        let out = echomq()
            .args(SERVE_ARGS)
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(
        stderr.contains(">>> 'slaveof-nothing-here 1 2'"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("slaveof-nothing-here 1 2\n", "")).unwrap();
    // The file first; `--save` on the command line would clear its points, so it goes
    // through CONFIG afterwards.
    let mut running = Running(
        echomq()
            .args(["serve"])
            .arg(&config)
            .args(["--port", "0", "--logfile", "/dev/stderr", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let port = listening_addr(&mut running).port();
    let mut conn = connect_auth(port, "its");
    let get = |conn: &mut redis::Connection, name: &str| -> String {
        let pair: Vec<String> = redis::cmd("MYCONFIG")
            .arg("GET")
            .arg(name)
            .query(conn)
            .unwrap();
        pair[1].clone()
    };
    assert_eq!(get(&mut conn, "save"), "900 1 300 10 60 10000");
    assert_eq!(get(&mut conn, "masterauth"), "pass word!");
    assert_eq!(get(&mut conn, "notify-keyspace-events"), "xE");
    let refused = redis::cmd("CONFIG")
        .arg("GET")
        .arg("save")
        .query::<Vec<String>>(&mut conn);
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("unknown command 'CONFIG'"),
        "CONFIG is renamed"
    );
    let refused = redis::cmd("FLUSHALL").query::<String>(&mut conn);
    assert!(refused.is_err(), "FLUSHALL is removed");
    // Inside MULTI the new name queues too.
    let (pair,): (Vec<String>,) = redis::pipe()
        .atomic()
        .cmd("MYCONFIG")
        .arg("GET")
        .arg("hz")
        .query(&mut conn)
        .unwrap();
    assert_eq!(pair, ["hz", "10"]);
    // A script calls a renamed command by its new name; the old name is unknown to it.
    let script = |conn: &mut redis::Connection, name: &str| {
        redis::cmd("EVAL")
            .arg(format!("return redis.call('{name}', KEYS[1])"))
            .arg(1)
            .arg("counter")
            .query::<i64>(conn)
    };
    assert_eq!(script(&mut conn, "myincr").unwrap(), 1);
    let refused = script(&mut conn, "incr").unwrap_err().to_string();
    assert!(
        refused.contains("Unknown Redis command called from script"),
        "{refused}"
    );
    // The save points are written back one per line.
    let () = redis::cmd("MYCONFIG")
        .arg("REWRITE")
        .query(&mut conn)
        .unwrap();
    let rewritten = std::fs::read_to_string(&config).unwrap();
    assert!(rewritten.contains("\nsave 900 1\n"), "{rewritten}");
    assert!(
        rewritten.contains("\nsave 300 10\nsave 60 10000\n"),
        "{rewritten}"
    );
    assert!(
        rewritten.contains("rename-command CONFIG MYCONFIG\n"),
        "{rewritten}"
    );
    // A rename to an existing name is fatal.
    let bad = dir.path().join("rename.conf");
    std::fs::write(&bad, "rename-command GET SET\n").unwrap();
    let stderr = serve_fails(&[bad.to_str().unwrap(), "--port", "0"]);
    assert!(
        stderr.ends_with("Target command name already exists\n"),
        "{stderr}"
    );
}

fn connect_auth(port: u16, password: &str) -> redis::Connection {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let url = format!("redis://:{password}@127.0.0.1:{port}/");
        match redis::Client::open(url).unwrap().get_connection() {
            Ok(conn) => return conn,
            Err(e) if Instant::now() > deadline => panic!("no server on {port}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The config file both servers start from: Redis's own shapes (comments, an alias, a
/// repeated option, an option at its default, an unknown-to-both line is avoided as Redis
/// would refuse it).
const REWRITE_BASE: &str = "\
# A config file rewritten by CONFIG REWRITE.
bind 127.0.0.1
port PORT
dir DIR

# memory
maxmemory 100mb
maxmemory-policy noeviction
slave-read-only yes

save 900 1
save 300 10
save 60 10000
appendonly no
tcp-keepalive 300
timeout 0
";

/// Starts `argv` with `config`, runs the same CONFIG SETs and REWRITE, returns the file.
fn rewrite_with(argv: &[&std::ffi::OsStr], dir: &Path, name: &str) -> String {
    let port = free_port();
    let config = dir.join(format!("{name}.conf"));
    let text = REWRITE_BASE
        .replace("PORT", &port.to_string())
        .replace("DIR", &dir.display().to_string());
    std::fs::write(&config, text).unwrap();
    let _running = Running(
        Command::new(argv[0])
            .args(&argv[1..])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut conn = connect(port);
    for (name, value) in [
        ("maxmemory", "200mb"),
        ("save", "120 5"),
        ("timeout", "30"),
        ("tcp-keepalive", "60"),
        ("replica-read-only", "no"),
        ("hz", "20"),
        ("maxmemory-policy", "noeviction"),
    ] {
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(&mut conn)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let () = redis::cmd("CONFIG")
        .arg("REWRITE")
        .query(&mut conn)
        .unwrap();
    let () = redis::cmd("SHUTDOWN")
        .arg("NOSAVE")
        .query(&mut conn)
        .unwrap_or(());
    std::fs::read_to_string(&config)
        .unwrap()
        .replace(&port.to_string(), "PORT")
}

/// The file with what may differ for a reason other than the rewrite: `maxclients` (fitted
/// to each process's open-files limit) and the appended block's order (Redis appends in its
/// hash table's order, which changes from run to run).
fn comparable(text: &str) -> (String, Vec<String>) {
    let (kept, appended) = text
        .split_once("# Generated by CONFIG REWRITE\n")
        .unwrap_or((text, ""));
    let mut appended: Vec<String> = appended
        .lines()
        .filter(|l| !l.starts_with("maxclients "))
        .map(str::to_string)
        .collect();
    appended.sort();
    (kept.to_string(), appended)
}

#[test]
fn config_rewrite_writes_what_redis_writes() {
    let Some(redis8) = crate::aof::interchange::redis8() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let echomq_bin = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_echomq"));
    let ours = rewrite_with(&[echomq_bin, "serve".as_ref()], dir.path(), "echomq");
    let theirs = rewrite_with(&[redis8.as_os_str()], dir.path(), "redis");
    assert_eq!(
        comparable(&ours),
        comparable(&theirs),
        "echomq:\n{ours}\nredis:\n{theirs}"
    );
    assert!(ours.contains("maxmemory 200mb\n"), "{ours}");
}

#[test]
fn every_bind_address_listens_and_loglevel_filters() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    // 127.0.0.2 is loopback too; `-` makes an address optional (none such here).
    let (_running, addr) = serve(
        echomq(),
        &[
            "--bind",
            "127.0.0.1",
            "127.0.0.2",
            "-192.0.2.1",
            "--loglevel",
            "warning",
            "--logfile",
            log.to_str().unwrap(),
        ],
    );
    let mut conn = connect(addr.port());
    assert_eq!(
        config_get(&mut conn, "bind"),
        "127.0.0.1 127.0.0.2 -192.0.2.1"
    );
    // Directives without effect: CONFIG SET keeps them (immutable ones refused as in Redis),
    // CONFIG GET shows them, under a glob too.
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tcp-keepalive")
        .arg("60")
        .query(&mut conn)
        .unwrap();
    assert_eq!(config_get(&mut conn, "tcp-keepalive"), "60");
    let refused = redis::cmd("CONFIG")
        .arg("SET")
        .arg("daemonize")
        .arg("yes")
        .query::<()>(&mut conn)
        .unwrap_err();
    assert!(
        refused.to_string().contains("can't set immutable config"),
        "{refused}"
    );
    let repl: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("repl-diskless-*")
        .query(&mut conn)
        .unwrap();
    assert!(
        repl.contains(&"repl-diskless-sync-delay".to_string()),
        "{repl:?}"
    );
    let client = redis::Client::open(format!("redis://127.0.0.2:{}/", addr.port())).unwrap();
    let mut other = client.get_connection().unwrap();
    assert_eq!(
        redis::cmd("PING").query::<String>(&mut other).unwrap(),
        "PONG"
    );
    let info: String = redis::cmd("INFO").arg("server").query(&mut conn).unwrap();
    assert!(
        info.contains(&format!(
            "listener0:name=tcp,bind=127.0.0.1,bind=127.0.0.2,bind=-192.0.2.1,port={}",
            addr.port()
        )),
        "{info}"
    );
    // At `warning`, the notices (persistence, ready) are not logged; the warnings are.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(" # Could not create server TCP listening socket 192.0.2.1"),
        "{text}"
    );
    assert!(!text.contains("Ready to accept connections"), "{text}");
}

#[test]
fn supervised_systemd_notifies_ready_and_stopping() {
    use std::os::unix::net::UnixDatagram;
    let dir = tempfile::tempdir().unwrap();
    let socket_path = dir.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket.set_read_timeout(Some(START_TIMEOUT)).unwrap();
    let mut command = echomq();
    command.env("NOTIFY_SOCKET", &socket_path);
    let (running, addr) = serve(command, &["--supervised", "systemd"]);
    let mut buf = [0u8; 512];
    let n = socket.recv(&mut buf).unwrap();
    let ready = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(ready.contains("READY=1\n"), "{ready}");
    assert!(
        ready.contains("STATUS=Ready to accept connections\n"),
        "{ready}"
    );
    let mut conn = connect(addr.port());
    assert_eq!(config_get(&mut conn, "supervised"), "systemd");
    let info: String = redis::cmd("INFO").arg("server").query(&mut conn).unwrap();
    assert!(info.contains("process_supervised:systemd\r\n"), "{info}");
    Command::new("kill")
        .arg(running.0.id().to_string())
        .status()
        .unwrap();
    let n = socket.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"STOPPING=1\n");
    drop(running);
    // An abstract socket (`@name`), as systemd may hand out.
    use std::os::linux::net::SocketAddrExt;
    let name = format!("echomq-notify-{}", std::process::id());
    let abstract_addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
    let socket = UnixDatagram::bind_addr(&abstract_addr).unwrap();
    socket.set_read_timeout(Some(START_TIMEOUT)).unwrap();
    let mut command = echomq();
    command.env("NOTIFY_SOCKET", format!("@{name}"));
    let (_running, _) = serve(command, &["--supervised", "auto"]);
    let n = socket.recv(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).contains("READY=1\n"));
}

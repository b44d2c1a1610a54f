//! Manifests that must not load, compared with Redis 8.8 on the same files: one naming a
//! missing incremental file (the last one: loading the rest would serve half the data as if
//! it were all) and one naming a file by a path (`../x`, an absolute path: loading, or
//! deleting it after a rewrite, would reach outside the AOF directory). Both refuse to start,
//! as Redis does, and say which file and what is wrong; the same files with nothing missing
//! load.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::peer::{Launch, Peer, PeerKind};
use crate::support::process::Running;

/// Longest wait for a server that refuses to start to exit.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Ten SETs as an incremental AOF file holds them, keys `{prefix}0`..`{prefix}9`.
fn ten_sets(prefix: &str) -> Vec<u8> {
    let mut out = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n".to_vec();
    for n in 0..10 {
        let key = format!("{prefix}{n}");
        out.extend_from_slice(
            format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$1\r\nv\r\n", key.len()).as_bytes(),
        );
    }
    out
}

/// `dir/appendonlydir` with a manifest of `lines` and the files `present` holding ten SETs.
fn aof_dir(dir: &Path, lines: &[&str], present: &[&str]) {
    let aof = dir.join("appendonlydir");
    std::fs::create_dir_all(&aof).unwrap();
    let manifest: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(aof.join("appendonly.aof.manifest"), manifest).unwrap();
    for (n, name) in present.iter().enumerate() {
        std::fs::write(aof.join(name), ten_sets(&format!("k{n}-"))).unwrap();
    }
}

/// Runs `binary` with the AOF on in `dir`: `Some(log)` if it exited (refused), `None` if it
/// was still running after [`REFUSAL_TIMEOUT`] (then it is stopped).
fn refusal(binary: &Path, dir: &Path, args: &[&str]) -> Option<String> {
    let log_path = dir.join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut child = Running(
        Command::new(binary)
            .args(args)
            .args(["--appendonly", "yes", "--dir", dir.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + REFUSAL_TIMEOUT;
    while Instant::now() < deadline {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(!status.success(), "a refusal exits with an error");
            return Some(std::fs::read_to_string(&log_path).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn echomq_refusal(dir: &Path) -> Option<String> {
    let binary = Path::new(env!("CARGO_BIN_EXE_echomq"));
    refusal(binary, dir, crate::support::process::SERVE_ARGS)
}

fn redis_refusal(dir: &Path) -> Option<Option<String>> {
    let binary = crate::aof::interchange::redis8()?;
    let port = crate::aof::free_port().to_string();
    Some(refusal(
        &binary,
        dir,
        &["--port", &port, "--bind", "127.0.0.1", "--save", ""],
    ))
}

const TWO_INCRS: &[&str] = &[
    "file appendonly.aof.1.incr.aof seq 1 type i",
    "file appendonly.aof.2.incr.aof seq 2 type i",
];

#[test]
fn a_manifest_naming_a_missing_file_refuses_to_start_as_redis() {
    let ours = tempfile::tempdir().unwrap();
    aof_dir(ours.path(), TWO_INCRS, &["appendonly.aof.1.incr.aof"]);
    let log = echomq_refusal(ours.path()).expect("echomq refuses to start");
    assert!(
        log.contains(
            "Unable to obtain the AOF file appendonly.aof.2.incr.aof length. stat: No such file or directory"
        ),
        "{log}"
    );
    let theirs = tempfile::tempdir().unwrap();
    aof_dir(theirs.path(), TWO_INCRS, &["appendonly.aof.1.incr.aof"]);
    if let Some(redis) = redis_refusal(theirs.path()) {
        let log = redis.expect("Redis refuses to start");
        assert!(log.contains("appendonly.aof.2.incr.aof"), "{log}");
    }
}

#[test]
fn a_manifest_naming_a_path_refuses_to_start_as_redis() {
    for name in ["../outside.aof", "/tmp/echomq-outside.aof", "sub\\x.aof"] {
        let line = format!("file {name} seq 1 type i");
        let ours = tempfile::tempdir().unwrap();
        aof_dir(ours.path(), &[&line], &[]);
        std::fs::write(ours.path().join("outside.aof"), ten_sets("o")).unwrap();
        let log = echomq_refusal(ours.path()).expect("echomq refuses to start");
        assert!(
            log.contains("File can't be a path, just a filename"),
            "{log}"
        );
        assert!(log.contains("appendonly.aof.manifest at line 1"), "{log}");
        assert!(ours.path().join("outside.aof").exists());
        let theirs = tempfile::tempdir().unwrap();
        aof_dir(theirs.path(), &[&line], &[]);
        if let Some(redis) = redis_refusal(theirs.path()) {
            let log = redis.expect("Redis refuses to start");
            assert!(
                log.contains("File can't be a path, just a filename"),
                "{log}"
            );
        }
    }
}

#[test]
fn the_same_manifest_with_every_file_loads_all_as_redis() {
    let files = ["appendonly.aof.1.incr.aof", "appendonly.aof.2.incr.aof"];
    let ours = tempfile::tempdir().unwrap();
    aof_dir(ours.path(), TWO_INCRS, &files);
    let (_server, addr) = crate::aof::serve_aof(ours.path(), &[]);
    let mut c = crate::aof::Conn::open(addr);
    assert_eq!(c.ok(&["DBSIZE"]), "20");
    let theirs = tempfile::tempdir().unwrap();
    aof_dir(theirs.path(), TWO_INCRS, &files);
    let launch = Launch {
        args: vec![
            "--appendonly".into(),
            "yes".into(),
            "--dir".into(),
            theirs.path().display().to_string(),
        ],
        ..Launch::default()
    };
    if let Some(mut redis) = Peer::start_with(PeerKind::Redis8, &launch) {
        assert_eq!(redis.call(&["DBSIZE"]), crate::support::resp::Resp::Int(20));
    }
}

#[test]
fn load_errors_name_the_file_and_what_failed_as_redis() {
    // An AOF command the server does not know: Redis's line, naming command and file.
    let unknown =
        "Unknown command 'FOOBARX' reading the append only file appendonly.aof.1.incr.aof";
    let write_unknown = |dir: &Path| {
        aof_dir(dir, &TWO_INCRS[..1], &[]);
        let aof = dir.join("appendonlydir").join("appendonly.aof.1.incr.aof");
        std::fs::write(aof, b"*2\r\n$7\r\nFOOBARX\r\n$1\r\nk\r\n").unwrap();
    };
    let ours = tempfile::tempdir().unwrap();
    write_unknown(ours.path());
    let log = echomq_refusal(ours.path()).expect("echomq refuses to start");
    assert!(log.contains(unknown), "{log}");
    let theirs = tempfile::tempdir().unwrap();
    write_unknown(theirs.path());
    if let Some(redis) = redis_refusal(theirs.path()) {
        assert!(redis.expect("Redis refuses to start").contains(unknown));
    }
    // A corrupt dump.rdb without an AOF: an RDB error, naming the file, not the AOF.
    let rdb = tempfile::tempdir().unwrap();
    std::fs::write(rdb.path().join("dump.rdb"), b"garbage").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_echomq"))
        .args(crate::support::process::SERVE_ARGS)
        .args(["--dir", rdb.path().to_str().unwrap()])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(log.contains("Fatal error loading the DB"), "{log}");
    assert!(log.contains("dump.rdb"), "{log}");
    assert!(!log.contains("append only file"), "{log}");
}

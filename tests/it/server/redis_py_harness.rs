//! redis-py's own test suite (its source release's `tests/`, run by pytest) against
//! `echomq serve`, unchanged: its harness starts (it reads INFO's `redis_version`,
//! `arch_bits` and `cluster_enabled` first), and its tests for pub/sub, keyspace
//! notifications, MONITOR, streams, expiry, introspection and functions pass.
//!
//! `scripts/install-peers` unpacks the release and makes a venv with pytest
//! (`ECHOMQ_REDIS_PY_TESTS`, `ECHOMQ_PYTEST_PYTHON`, else under the peers folder); without them
//! the tests are skipped with a notice (under `CI=true` they fail).
//!
//! Deselected, each for a reason: cluster, module, TLS and replica tests (redis-py's own
//! markers). Its hash (field expiry included) and set tests
//! pass too, and its hash-field (subkey) notification tests, run in database 0 as they
//! subscribe there (they fail against Redis 8.8 as well in redis-py's database 9). INFO says 8.8.0, so
//! redis-py runs its tests
//! of the 8.x stream commands and expects 8.8's rules (entries-read capped at the entries
//! added) from the XGROUP ones.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::process::{echomq, serve};

/// The slowest selection (pub/sub waits in many tests) takes about a minute on a quiet machine.
const SUITE_TIMEOUT: Duration = Duration::from_secs(600);

/// The markers redis-py's CI deselects for a standalone server without modules.
const MARKERS: &str = "not onlycluster and not redismod and not ssl and not replica";

/// redis-py's source tree and the Python with pytest, or a skip notice (a failure under CI).
fn harness() -> Option<(PathBuf, PathBuf)> {
    let peers = env::var_os("ECHOMQ_PEERS")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cache/echomq/peers")))
        .unwrap_or_default();
    let from = |var: &str, default: PathBuf| {
        env::var_os(var)
            .filter(|p| !p.is_empty())
            .map_or(default, PathBuf::from)
    };
    let src = from("ECHOMQ_REDIS_PY_TESTS", peers.join("redis-py-tests/src"));
    let python = from(
        "ECHOMQ_PYTEST_PYTHON",
        peers.join("redis-py-tests/venv/bin/python"),
    );
    if src.join("tests/conftest.py").is_file() && python.is_file() {
        return Some((python, src));
    }
    let why = "redis-py's test suite not found (set ECHOMQ_REDIS_PY_TESTS and ECHOMQ_PYTEST_PYTHON or run scripts/install-peers)";
    if env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true requires it: {why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// Runs pytest over `selection` against a fresh `echomq serve`; returns how many passed, after
/// checking that none failed.
fn pytest(selection: &[&str]) -> u64 {
    pytest_in_db(selection, 9)
}

/// [`pytest`] with the clients in database `db` (redis-py's CI uses 9).
fn pytest_in_db(selection: &[&str], db: u8) -> u64 {
    let Some((python, src)) = harness() else {
        return 0;
    };
    let (_server, addr) = serve(echomq(), &[]);
    let out_path = env::temp_dir().join(format!(
        "echomq-redis-py-{}-{}.log",
        std::process::id(),
        addr.port()
    ));
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new(&python)
        .current_dir(&src)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-W",
            "ignore",
        ])
        .arg(format!("--redis-url=redis://{addr}/{db}"))
        .args(["-m", MARKERS])
        .args(selection)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {}: {e}", python.display()));
    let deadline = Instant::now() + SUITE_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pytest {selection:?} did not finish within {SUITE_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let summary = log.lines().rev().find(|l| l.contains(" in ")).unwrap_or("");
    assert!(
        status.success() && !summary.contains("failed") && !summary.contains("error"),
        "redis-py's tests {selection:?}: {status}\n{}",
        log.lines()
            .filter(|l| l.starts_with("FAILED") || l.starts_with("ERROR") || l.starts_with("E "))
            .chain(std::iter::once(summary))
            .collect::<Vec<_>>()
            .join("\n")
    );
    summary
        .split(',')
        .find_map(|part| {
            part.trim()
                .strip_suffix(" passed")?
                .rsplit(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

#[test]
fn redis_py_suite_passes_for_pubsub_keyspace_notifications_and_monitor() {
    let passed = pytest(&[
        "tests/test_keyspace_notifications.py",
        "tests/test_pubsub.py",
        "tests/test_monitor.py",
        // The subkey notification tests subscribe in database 0 whatever the client's: they
        // run in their own selection below.
        "--deselect",
        "tests/test_keyspace_notifications.py::TestSubkeyNotifications",
    ]);
    if harness().is_some() {
        // Its keyspace-notification, pub/sub and MONITOR tests ran, not only skips.
        assert!(passed >= 200, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_streams_expiry_and_introspection() {
    let passed = pytest(&[
        "tests/test_commands.py",
        "-k",
        "test_x or expire or ttl or persist or test_info or test_object or memory_usage \
         or slowlog or test_copy or test_move or test_rename or swapdb or test_dbsize \
         or test_exists or test_delete or test_unlink or test_ping or test_echo or test_time \
         or test_wait or client_pause or client_unpause",
    ]);
    if harness().is_some() {
        assert!(passed >= 80, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_hashes_and_sets() {
    let passed = pytest(&[
        "tests/test_hash.py",
        "tests/test_commands.py",
        "-k",
        "test_hash or hrandfield or hscan or sscan or test_scan or zscan or test_sadd or test_scard or test_sdiff \
         or test_sinter or test_sismember or test_smembers or test_smismember or test_smove \
         or test_spop or test_srandmember or test_srem or test_sunion or test_hget or test_hset \
         or test_hdel or test_hexists or test_hgetall or test_hincr or test_hkeys or test_hlen \
         or test_hmget or test_hmset or test_hsetnx or test_hvals or test_hstrlen or test_hexpire or test_hpexpire or test_httl or test_hpttl \
         or test_hpersist or test_hgetdel or test_hgetex or test_hsetex or test_hexpiretime \
         or test_hpexpiretime or test_hexpireat or test_hpexpireat",
    ]);
    if harness().is_some() {
        // test_hash.py's 45 (field expiry included) and test_commands.py's hash and set tests.
        assert!(passed >= 85, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_strings_bitmaps_and_hyperloglogs() {
    let passed = pytest(&[
        "tests/test_commands.py",
        "-k",
        "increx or msetex or test_incr or test_decr or test_append or test_setrange \
         or test_getrange or test_substr or test_strlen or test_getset or test_getdel \
         or test_getex or test_setex or test_psetex or test_setnx or test_mset or test_mget \
         or test_get_and_set or test_lcs or test_set_ or test_bitcount or test_bitfield \
         or test_bitop or test_bitpos or test_get_set_bit or test_pfadd or test_pfcount \
         or test_pfmerge",
        // Needs the `xxhash` Python package, which the peers' venv does not install.
        "--deselect",
        "tests/test_commands.py::TestRedisCommands::test_set_ifdeq_and_ifdne",
    ]);
    if harness().is_some() {
        assert!(passed >= 40, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_hash_field_subkey_notifications() {
    let passed = pytest_in_db(
        &[
            "tests/test_keyspace_notifications.py",
            "-k",
            "TestSubkeyNotifications",
        ],
        0,
    );
    if harness().is_some() {
        assert!(passed >= 11, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_lists_and_sort() {
    let passed = pytest(&[
        "tests/test_commands.py",
        "-k",
        "test_bl or test_br or test_lmpop or test_lindex or test_linsert or test_llen \
         or test_lpop or test_lpush or test_lrange or test_lrem or test_lset or test_ltrim \
         or test_rpop or test_rpush or test_lpos or test_lmove or test_sort",
    ]);
    if harness().is_some() {
        assert!(passed >= 40, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_sorted_sets_geo_scripting_locks_and_acl() {
    let passed = pytest(&[
        "tests/test_scripting.py",
        "tests/test_lock.py",
        "tests/test_pipeline.py",
        "tests/test_commands.py",
        "tests/test_asyncio/test_commands.py",
        "-k",
        "test_scripting or Script or test_eval or test_lua or test_lock or Lock or test_pipeline \
         or Pipeline or test_z or test_bz or test_geo or acl or auth",
    ]);
    if harness().is_some() {
        // Redis 8.8 passes the same 357 (both clients' sorted set, geo, scripting, pipeline,
        // ACL and AUTH tests, and the lock tests, which run on Lua scripts).
        assert!(passed >= 350, "only {passed} passed");
    }
}

#[test]
fn redis_py_suite_passes_for_functions() {
    let passed = pytest(&["tests/test_function.py"]);
    if harness().is_some() {
        assert!(passed >= 7, "only {passed} passed");
    }
}

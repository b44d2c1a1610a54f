//! The AOF through a whole server: write commands and PING answer `-MISCONF` while the AOF cannot
//! be written; a load rebuilds the state random writes (and a rewrite among them) left; clients get
//! `-LOADING` until the load is done.

use std::sync::Arc;

use echomq_engine::Reply;

use crate::server::{Server, ServerConfig};

#[test]
fn writes_and_ping_get_misconf_while_the_aof_cannot_be_written() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = aof_state(&runtime, dir.path(), "no");
    state.aof().fail_write("No space left on device");
    let client = state.connect("127.0.0.1:1".parse().unwrap(), None);
    let misconf = Some(Reply::Error(
        "MISCONF Errors writing to the AOF file: No space left on device".into(),
    ));
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "xadd"),
        misconf
    );
    // Redis refuses PING too, so a health check sees the disk error; reads are served.
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "ping"),
        misconf
    );
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "xrange"),
        None
    );
}

/// Everything a load must reproduce, as text (consumers' seen and active times excepted).
/// A rewrite carries a pending entry as an XCLAIM, which drops it when its stream entry was
/// deleted or trimmed, in Redis 8.8 as here: such PEL entries are left out of the comparison
/// (replaying incremental files alone keeps them: see the engine's propagation proptest).
fn dump(keyspace: &echomq_engine::Keyspace) -> String {
    use echomq_engine::{StreamId, Value};
    let mut out = String::new();
    keyspace.dirty_with(|dbs| {
        for (i, db) in dbs.iter().enumerate() {
            let mut keys: Vec<_> = db.keys().cloned().collect();
            keys.sort();
            for key in keys {
                out.push_str(&format!("db{i} {key:?}: "));
                match db.get(&key) {
                    Some(Value::Stream(s)) => {
                        out.push_str(&format!(
                            "len {} last {} maxdel {} added {}\n",
                            s.len(),
                            s.last_id(),
                            s.max_deleted_entry_id(),
                            s.entries_added()
                        ));
                        for e in s.range(StreamId::MIN, StreamId::MAX) {
                            out.push_str(&format!(
                                "  {} {:?}\n",
                                e.id,
                                e.fields().collect::<Vec<_>>()
                            ));
                        }
                        for (name, g) in s.groups() {
                            out.push_str(&format!(
                                "  group {name:?} {} {:?}\n",
                                g.last_id, g.entries_read
                            ));
                            for (id, n) in g.pending().filter(|(id, _)| s.get(**id).is_some()) {
                                out.push_str(&format!(
                                    "    {id} {:?} {} {}\n",
                                    n.owner.as_ref().map(|o| o.as_bytes()),
                                    n.delivery_time,
                                    n.delivery_count
                                ));
                            }
                            let consumers: Vec<_> =
                                g.consumers().map(|(c, _)| c.as_bytes().to_vec()).collect();
                            out.push_str(&format!("    {consumers:?}\n"));
                        }
                    }
                    Some(Value::List(l)) => out.push_str(&format!("list {:?}\n", l.to_vec())),
                    Some(Value::String(v)) => out.push_str(&format!("{v:?}\n")),
                    Some(Value::Hash(h)) => {
                        let mut fields: Vec<_> = h.entries().collect();
                        fields.sort();
                        out.push_str(&format!("hash {fields:?}\n"));
                    }
                    Some(Value::Set(set)) => {
                        let mut members = set.members();
                        members.sort();
                        out.push_str(&format!("set {members:?}\n"));
                    }
                    Some(Value::ZSet(z)) => {
                        let entries: Vec<_> = z.order().iter().collect();
                        out.push_str(&format!("zset {} {entries:?}\n", z.encoding()));
                    }
                    None => out.push_str("gone\n"),
                }
                if let Some(at) = db.expiry(&key) {
                    out.push_str(&format!("  expires {at}\n"));
                }
            }
        }
    });
    out
}

/// A server state with `appendonly yes` in `dir` and `aof-use-rdb-preamble` `preamble`,
/// persistence started.
fn aof_state(
    runtime: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    preamble: &str,
) -> Arc<crate::state::ServerState> {
    let config = ServerConfig {
        port: 0,
        databases: 2,
        ..ServerConfig::default()
    };
    let server = runtime.block_on(Server::bind(config)).unwrap();
    let state = Arc::clone(server.handle().state());
    state.config_set("dir", dir.to_str().unwrap()).unwrap();
    state.config_set("appendonly", "yes").unwrap();
    state.config_set("appendfsync", "no").unwrap();
    state.config_set("aof-use-rdb-preamble", preamble).unwrap();
    state.start_persistence(crate::cmd::replay::replay).unwrap();
    while state.aof().rewriting() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    state
}

#[test]
fn replaying_the_aof_of_random_writes_with_a_rewrite_among_them_rebuilds_the_state() {
    struct NoWake;
    impl echomq_engine::Wake for NoWake {
        fn wake(&self) {}
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let waker: Arc<dyn echomq_engine::Wake> = Arc::new(NoWake);
    for seed in 0..6u64 {
        // The base as commands for even seeds, as RDB (Redis's default) for odd ones.
        let preamble = if seed % 2 == 0 { "no" } else { "yes" };
        let dir = tempfile::tempdir().unwrap();
        let state = aof_state(&runtime, dir.path(), preamble);
        let mut client = state.connect("127.0.0.1:1".parse().unwrap(), None);
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let rewrite_at = next(150);
        for step in 0..200 {
            if step == rewrite_at {
                let config = state.aof_config();
                state
                    .keyspace()
                    .run_all(|dbs, _| state.aof().rewrite(dbs, &config))
                    .unwrap();
            }
            let key = ["s", "t"][next(2) as usize];
            let group = ["g", "h"][next(2) as usize];
            let consumer = ["a", "b"][next(2) as usize];
            let id = format!("{}-{}", next(40), next(2));
            let n = next(6).to_string();
            let member = ["a", "b", "c"][next(3) as usize];
            let words: Vec<&str> = match next(26) {
                0..=2 => vec!["XADD", key, "MAXLEN", "~", "3", "*", "f", "v"],
                3 => vec!["XADD", key, &id, "f", "v"],
                4 => vec!["XDEL", key, &id],
                5 => vec!["XTRIM", key, "MAXLEN", &n],
                6 => vec!["XGROUP", "CREATE", key, group, "0", "MKSTREAM"],
                7 | 8 => vec![
                    "XREADGROUP",
                    "GROUP",
                    group,
                    consumer,
                    "COUNT",
                    "2",
                    "STREAMS",
                    key,
                    ">",
                ],
                9 => vec!["XACK", key, group, &id],
                10 => vec!["XCLAIM", key, group, consumer, "0", &id],
                11 => vec!["SELECT", ["0", "1"][next(2) as usize]],
                12 => vec!["PEXPIRE", key, "100000"],
                13 => vec!["EXPIREAT", "k", "99999999999", "GT"],
                14 => vec!["PERSIST", ["k", key][next(2) as usize]],
                15 => vec!["COPY", key, ["s", "t"][next(2) as usize], "REPLACE"],
                16 => vec!["MOVE", ["k", key][next(2) as usize], "1"],
                17 => vec!["XDELEX", key, "IDS", "1", &id],
                18 => vec!["XACKDEL", key, group, "IDS", "1", &id],
                19 => vec!["EXPIRE", key, "0"],
                20 => vec!["ZADD", "z", &n, member, "0.5", "d", "-inf", "e"],
                21 => vec!["ZINCRBY", "z", "1.25", member],
                22 => vec!["ZPOPMIN", "z"],
                23 => vec!["ZREM", "z", member],
                24 => vec!["ZUNIONSTORE", "u", "2", "z", "u", "WEIGHTS", "2", "1"],
                _ => vec!["SET", "k", &n, "PX", "100000"],
            };
            let argv: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
            let mut batch = state.keyspace().batch();
            let action = crate::cmd::execute(&state, &mut client, &mut batch, &argv, &waker);
            // A blocked command's handle unregisters under the lock: after the batch.
            batch.end();
            drop(action);
            state.commit_aof().unwrap();
        }
        while state.aof().rewriting() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        state.commit_aof().unwrap();
        let expected = dump(state.keyspace());
        let loaded = aof_state(&runtime, dir.path(), preamble);
        assert_eq!(dump(loaded.keyspace()), expected, "seed {seed}");
        loaded.keyspace().check_invariants().unwrap();
    }
}

#[test]
fn an_aof_is_loaded_whole_under_a_maxmemory_it_exceeds() {
    struct NoWake;
    impl echomq_engine::Wake for NoWake {
        fn wake(&self) {}
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let waker: Arc<dyn echomq_engine::Wake> = Arc::new(NoWake);
    let dir = tempfile::tempdir().unwrap();
    let state = aof_state(&runtime, dir.path(), "no");
    let mut client = state.connect("127.0.0.1:1".parse().unwrap(), None);
    let writes: [&[&str]; 2] = [&["SET", "k", "v"], &["XADD", "s", "1-1", "f", "v"]];
    for words in writes {
        let argv: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        let mut batch = state.keyspace().batch();
        drop(crate::cmd::execute(
            &state,
            &mut client,
            &mut batch,
            &argv,
            &waker,
        ));
        batch.end();
    }
    state.commit_aof().unwrap();
    let expected = dump(state.keyspace());
    // A restart under a limit the data is over (any process is over one byte): Redis's AOF
    // load is not refused by `maxmemory`, and neither is the replay here.
    let config = ServerConfig {
        port: 0,
        databases: 2,
        ..ServerConfig::default()
    };
    let server = runtime.block_on(Server::bind(config)).unwrap();
    let loaded = Arc::clone(server.handle().state());
    loaded
        .config_set("dir", dir.path().to_str().unwrap())
        .unwrap();
    loaded.config_set("appendonly", "yes").unwrap();
    loaded.config_set("maxmemory", "1").unwrap();
    loaded
        .start_persistence(crate::cmd::replay::replay)
        .unwrap();
    assert_eq!(dump(loaded.keyspace()), expected);
    assert!(expected.contains("k"), "{expected}");
}

#[test]
fn clients_get_loading_until_the_aof_is_loaded() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = ServerConfig {
        port: 0,
        ..ServerConfig::default()
    };
    let server = runtime.block_on(Server::bind(config)).unwrap();
    let state = Arc::clone(server.handle().state());
    let dir = tempfile::tempdir().unwrap();
    state
        .config_set("dir", dir.path().to_str().unwrap())
        .unwrap();
    state.config_set("appendonly", "yes").unwrap();
    let client = state.connect("127.0.0.1:1".parse().unwrap(), None);
    assert!(state.prepare_persistence());
    let loading = Some(Reply::Error(
        "LOADING Redis is loading the dataset in memory".into(),
    ));
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "xrange"),
        loading
    );
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "ping"),
        loading
    );
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "info"),
        None
    );
    // appenddirname and appendfilename are fixed from here on.
    assert!(state.config_set("appendfilename", "x.aof").is_err());
    state.start_persistence(crate::cmd::replay::replay).unwrap();
    assert!(!state.loading());
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "xrange"),
        None
    );
}

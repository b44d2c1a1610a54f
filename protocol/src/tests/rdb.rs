//! Loading `dump.rdb` at start through the server state: `-LOADING` until it is in, then the
//! data and INFO's load figures; a damaged file stops the start and stores nothing.

use std::sync::Arc;

use echomq_engine::Reply;

use crate::server::{Server, ServerConfig};
use crate::state::ServerState;

fn state(runtime: &tokio::runtime::Runtime, dir: &std::path::Path) -> Arc<ServerState> {
    let config = ServerConfig {
        port: 0,
        ..ServerConfig::default()
    };
    let server = runtime.block_on(Server::bind(config)).unwrap();
    let state = Arc::clone(server.handle().state());
    state.config_set("dir", dir.to_str().unwrap()).unwrap();
    state
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn clients_get_loading_until_dump_rdb_is_loaded() {
    let runtime = runtime();
    let dir = tempfile::tempdir().unwrap();
    let first = state(&runtime, dir.path());
    first
        .keyspace()
        .execute(&["XADD", "s", "1-1", "f", "v"])
        .unwrap();
    first.keyspace().run_all(|dbs, _| first.save(dbs)).unwrap();
    let state = state(&runtime, dir.path());
    let client = state.connect("127.0.0.1:1".parse().unwrap(), None);
    assert!(!state.prepare_persistence(), "no AOF");
    assert!(state.loading());
    assert_eq!(
        crate::cmd::persistence_refusal(&state, &client, "xrange"),
        Some(Reply::Error(
            "LOADING Redis is loading the dataset in memory".into()
        ))
    );
    state.start_persistence(crate::cmd::replay::replay).unwrap();
    assert!(!state.loading());
    assert_eq!(state.rdb().load_keys(), (1, 0));
    assert_eq!(
        state.keyspace().execute(&["XLEN", "s"]).unwrap(),
        Reply::Int(1)
    );
    assert_eq!(state.rdb().changes_since_save(state.keyspace().dirty()), 0);
}

#[test]
fn a_damaged_dump_rdb_stops_the_start_and_stores_nothing() {
    let runtime = runtime();
    let dir = tempfile::tempdir().unwrap();
    let first = state(&runtime, dir.path());
    for n in 1..=50 {
        let id = format!("{n}-1");
        first
            .keyspace()
            .execute(&["XADD", "s", &id, "f", "v"])
            .unwrap();
    }
    first
        .keyspace()
        .execute(&["XADD", "t", "1-1", "f", "v"])
        .unwrap();
    first.keyspace().run_all(|dbs, _| first.save(dbs)).unwrap();
    let path = dir.path().join("dump.rdb");
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let state = state(&runtime, dir.path());
    state.prepare_persistence();
    assert!(state.start_persistence(crate::cmd::replay::replay).is_err());
    assert!(!state.loading());
    let keys = state.keyspace().run(|db, _| db.len());
    assert_eq!(keys, 0, "nothing stored from a damaged file");
}

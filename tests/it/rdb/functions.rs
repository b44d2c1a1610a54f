//! Function libraries in RDB files and FUNCTION DUMP payloads, with Redis 8.8: a `dump.rdb`
//! echomq saved with libraries passes `redis-check-rdb` and loads into Redis 8.8 with the same
//! libraries, one Redis 8.8 saved loads into echomq, and each side's FUNCTION DUMP restores on
//! the other. Skipped (with a note) where Redis 8.8 is not installed.

use super::{redis_check_rdb, serve_rdb, start_redis};
use crate::aof::interchange::redis8;
use crate::aof::{Conn, text};

/// Long enough for its RDB string to be LZF-compressed.
const LIB: &str = "#!lua name=lib\n\
    redis.register_function('incrby', function(keys, args) \
    return redis.call('incrby', keys[1], args[1]) end)\n\
    -- padding padding padding padding padding padding padding padding";
const LIB_RO: &str = "#!lua name=ro\n\
    redis.register_function{function_name='get', callback=function(keys) \
    return redis.call('get', keys[1]) end, flags={'no-writes'}, description='d'}";

fn build(c: &mut Conn) {
    assert_eq!(c.ok(&["FUNCTION", "LOAD", LIB]), "lib");
    assert_eq!(c.ok(&["FUNCTION", "LOAD", LIB_RO]), "ro");
    assert_eq!(c.ok(&["FCALL", "incrby", "1", "n", "5"]), "5");
}

/// The libraries (sorted by name, as the servers list them in their own orders) and a call.
fn contents(c: &mut Conn) -> String {
    let mut libs = Vec::new();
    for name in ["lib", "ro"] {
        libs.push(c.ok(&["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", name]));
    }
    libs.push(c.ok(&["FCALL_RO", "get", "1", "n"]));
    libs.push(c.ok(&["FCALL", "incrby", "1", "n", "1"]));
    libs.join("\n")
}

fn function_dump(c: &mut Conn) -> Vec<u8> {
    redis::cmd("FUNCTION").arg("DUMP").query(c.raw()).unwrap()
}

fn function_restore(c: &mut Conn, payload: &[u8], policy: &str) -> String {
    match redis::cmd("FUNCTION")
        .arg("RESTORE")
        .arg(payload)
        .arg(policy)
        .query::<redis::Value>(c.raw())
    {
        Ok(v) => text(&v),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn libraries_move_both_ways_with_redis8_in_rdb_files() {
    let Some(redis) = redis8() else { return };
    // echomq's file into Redis.
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    build(&mut c);
    assert_eq!(c.ok(&["SAVE"]), "OK");
    drop(server);
    redis_check_rdb(&redis, &dir.path().join("dump.rdb"));
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let mut r = Conn::open(raddr);
    let (server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(contents(&mut r), contents(&mut c));
    drop(server);

    // Redis's file into echomq.
    let dir = tempfile::tempdir().unwrap();
    let (redis_server, raddr) = start_redis(&redis, dir.path());
    let mut r = Conn::open(raddr);
    build(&mut r);
    assert_eq!(r.ok(&["SAVE"]), "OK");
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(contents(&mut c), contents(&mut r));
    drop(redis_server);
}

#[test]
fn function_dumps_restore_both_ways_with_redis8() {
    let Some(redis) = redis8() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = start_redis(&redis, dir.path());
    let mut r = Conn::open(raddr);
    let ours_dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve_rdb(ours_dir.path(), &[]);
    let mut c = Conn::open(addr);
    build(&mut c);
    build(&mut r);
    let theirs = function_dump(&mut r);
    let ours = function_dump(&mut c);
    assert_eq!(function_restore(&mut c, &theirs, "FLUSH"), "OK");
    assert_eq!(function_restore(&mut r, &ours, "FLUSH"), "OK");
    assert_eq!(contents(&mut c), contents(&mut r));
    assert_eq!(
        function_restore(&mut c, &theirs, "APPEND"),
        function_restore(&mut r, &ours, "APPEND")
    );
}

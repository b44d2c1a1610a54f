//! A SIGKILL during a save never leaves a damaged `dump.rdb`: the server writes a temp file,
//! fsyncs it, renames it over `dump.rdb` and fsyncs the directory, so after each kill the next
//! start loads either the previous file or the new one, whole (and Redis 8.8's
//! `redis-check-rdb`, where installed, accepts it).

use std::time::Duration;

use super::serve_rdb;
use crate::aof::Conn;
use crate::archive::Lcg;

/// Kills and restarts.
const KILLS: usize = 12;

#[test]
fn sigkill_during_save_never_damages_dump_rdb() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(0x05ee_d4db);
    let value = "v".repeat(200);
    // Entries in `dump.rdb` as last known (a SAVE answered, or a start loaded it), and in the
    // stream at the last kill.
    let mut saved: Option<u64> = None;
    let mut at_kill = 0u64;
    let mut next = 1u64;
    for round in 0..KILLS {
        let (server, addr) = serve_rdb(dir.path(), &[]);
        let mut c = Conn::open(addr);
        let len: u64 = c.ok(&["XLEN", "s"]).parse().unwrap();
        match saved {
            // The last save that answered is there whole, or the interrupted BGSAVE's, if it
            // got as far as its rename before the kill.
            Some(n) => assert!(
                len == n || len == at_kill,
                "round {round}: {len} entries, saved {n}, {at_kill} at the kill"
            ),
            None => assert_eq!(len, 0),
        }
        if saved.is_some() {
            // What was loaded is what the file holds now.
            saved = Some(len);
        }
        // Enough data that a save takes a while, then a save the kill interrupts.
        for _ in 0..2000 {
            c.ok(&["XADD", "s", &format!("{next}-1"), "f", &value]);
            next += 1;
        }
        at_kill = c.ok(&["XLEN", "s"]).parse().unwrap();
        if round % 3 == 0 {
            assert_eq!(c.ok(&["SAVE"]), "OK");
            saved = Some(at_kill);
        }
        c.ok(&["BGSAVE"]);
        std::thread::sleep(Duration::from_millis(rng.below(40)));
        drop(server);
        if let Some(checker) = crate::aof::interchange::redis8() {
            let out = std::process::Command::new(checker.with_file_name("redis-check-rdb"))
                .arg(dir.path().join("dump.rdb"))
                .output()
                .unwrap();
            assert!(out.status.success() || saved.is_none(), "round {round}");
        }
    }
}

//! Lazy freeing against Redis 8.8 over the wire, RESP2 and RESP3: INFO's `lazyfreed_objects` after
//! UNLINK of big and small values of every type (a value counts when freeing it costs more than 64
//! allocations), DEL and the flushes with and without `lazyfree-lazy-user-del` and `-user-flush`,
//! FLUSHALL ASYNC (a database counts its keys), a SET over a big value with and without
//! `lazyfree-lazy-server-del`, an expiry under `lazyfree-lazy-expire`, and CONFIG RESETSTAT. Each
//! figure is read once both servers have nothing pending.

use crate::support::differ::Mismatch;
use crate::support::peer::PeerKind;
use crate::support::resp::Resp;
use crate::support::wire::{WireDiffer, line_words};

/// `lazyfree_pending_objects` and `lazyfreed_objects` of one INFO reply.
fn counts(info: &Resp) -> (u64, u64) {
    let text = match info {
        Resp::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Resp::Verbatim(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("INFO gave {other:?}"),
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in INFO"))
    };
    (
        field("lazyfree_pending_objects"),
        field("lazyfreed_objects"),
    )
}

/// Both servers' `lazyfreed_objects` once neither has anything pending.
fn freed(differ: &mut WireDiffer) -> Result<(u64, u64), Mismatch> {
    for _ in 0..500 {
        let (theirs, ours) = differ.run_uncompared(&line_words("INFO memory"))?;
        let ((their_pending, their_freed), (our_pending, our_freed)) =
            (counts(&theirs), counts(&ours));
        if their_pending == 0 && our_pending == 0 {
            return Ok((their_freed, our_freed));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err(Mismatch::new("lazy freeing never settled".into()))
}

/// Writes `n` elements to `key` with `command` (`SADD`, `HSET`, `ZADD`, `RPUSH`, `XADD`),
/// a hundred a request.
fn fill(differ: &mut WireDiffer, command: &str, key: &str, n: usize) -> Result<(), Mismatch> {
    let mut batch = Vec::new();
    for start in (0..n).step_by(100) {
        let mut line = format!("{command} {key}");
        for i in start..(start + 100).min(n) {
            match command {
                "SADD" | "RPUSH" => line += &format!(" element-of-some-forty-bytes-{i:012}"),
                "HSET" => line += &format!(" f{i} v{i}"),
                "ZADD" => line += &format!(" {i} m{i}"),
                _ => {}
            }
        }
        if command == "XADD" {
            for i in start..(start + 100).min(n) {
                batch.push(line_words(&format!("XADD {key} {}-1 f v", i + 1)));
            }
        } else {
            batch.push(line_words(&line));
        }
    }
    differ.pipeline(&batch)
}

/// The whole sequence over `protocol`: the steps after which the counts differ.
fn sequence(differ: &mut WireDiffer, protocol: u8) -> Result<Vec<String>, Mismatch> {
    differ.reset(protocol)?;
    let mut differences = Vec::new();
    let mut check = |differ: &mut WireDiffer, step: &str| -> Result<(), Mismatch> {
        let (theirs, ours) = freed(differ)?;
        if theirs != ours {
            differences.push(format!(
                "RESP{protocol}, after {step}: Redis {theirs}, echomq {ours}"
            ));
        }
        Ok(())
    };
    differ.run(&line_words("CONFIG RESETSTAT"))?;
    differ.run(&line_words("CONFIG SET stream-node-max-entries 100"))?;
    for (command, size) in [
        ("SADD", 1000),
        ("HSET", 1000),
        ("ZADD", 1000),
        ("RPUSH", 20000),
        ("XADD", 20000),
    ] {
        fill(differ, command, "big", size)?;
        fill(differ, command, "small", 3)?;
        differ.run(&line_words("UNLINK big small nokey"))?;
        check(differ, &format!("UNLINK of a big and a small {command}"))?;
    }
    fill(differ, "SADD", "big", 1000)?;
    differ.run(&line_words("DEL big"))?;
    check(differ, "DEL")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-user-del yes"))?;
    fill(differ, "SADD", "big", 1000)?;
    differ.run(&line_words("DEL big"))?;
    check(differ, "DEL under lazyfree-lazy-user-del")?;
    fill(differ, "HSET", "h", 500)?;
    differ.run(&line_words("MSET a 1 b 2 c 3"))?;
    differ.run(&line_words("FLUSHALL"))?;
    check(differ, "FLUSHALL")?;
    differ.run(&line_words("MSET a 1 b 2 c 3"))?;
    differ.run(&line_words("SELECT 3"))?;
    differ.run(&line_words("MSET d 4 e 5"))?;
    differ.run(&line_words("FLUSHALL ASYNC"))?;
    check(differ, "FLUSHALL ASYNC")?;
    differ.run(&line_words("MSET a 1 b 2 c 3"))?;
    differ.run(&line_words("FLUSHDB ASYNC"))?;
    check(differ, "FLUSHDB ASYNC")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-user-flush yes"))?;
    differ.run(&line_words("MSET a 1 b 2"))?;
    differ.run(&line_words("FLUSHDB"))?;
    check(differ, "FLUSHDB under lazyfree-lazy-user-flush")?;
    differ.run(&line_words("MSET a 1 b 2"))?;
    differ.run(&line_words("FLUSHDB SYNC"))?;
    check(differ, "FLUSHDB SYNC")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-server-del yes"))?;
    fill(differ, "SADD", "big", 1000)?;
    differ.run(&line_words("SET big now-a-string"))?;
    check(differ, "SET over a big set under lazyfree-lazy-server-del")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-server-del no"))?;
    fill(differ, "SADD", "big2", 1000)?;
    differ.run(&line_words("SET big2 now-a-string"))?;
    check(differ, "SET over a big set")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-expire yes"))?;
    fill(differ, "HSET", "doomed", 1000)?;
    differ.run(&line_words("PEXPIRE doomed 50"))?;
    // Past its time on both: Redis's wall clock, echomq's manual one.
    std::thread::sleep(std::time::Duration::from_millis(60));
    differ.ours().clock().advance(60);
    // A read deletes it on both (the lazy expiry).
    differ.run(&line_words("EXISTS doomed"))?;
    check(differ, "expiry of a big hash under lazyfree-lazy-expire")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-expire no"))?;
    differ.run(&line_words("CONFIG RESETSTAT"))?;
    check(differ, "CONFIG RESETSTAT")?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-user-del no"))?;
    differ.run(&line_words("CONFIG SET lazyfree-lazy-user-flush no"))?;
    Ok(differences)
}

#[test]
fn lazily_freed_objects_count_as_on_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut differences = Vec::new();
    for protocol in [2, 3] {
        match sequence(&mut differ, protocol) {
            Ok(found) => differences.extend(found),
            Err(mismatch) => panic!("RESP{protocol}: {mismatch}"),
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

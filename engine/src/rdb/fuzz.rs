//! The `rdb_load` fuzz target: arbitrary bytes as an RDB file and as a RESTORE payload.
//!
//! Properties: neither the file loader nor the payload loader panics; whatever loads is whole
//! and sound (every stream, list, hash and set passes its `check_invariants`, every string
//! [`crate::StringValue::check_invariants`]; a string that is a HyperLogLog counts, merges,
//! turns dense and takes an addition without panicking, staying a valid HLL) and dumps to a
//! payload that loads back to the same bytes (hashes and sets: the same contents and encoding,
//! as a table's order is its own). The first input byte picks how the rest is read: even,
//! the rest is a payload body (the version and a zero checksum are appended, so it passes the
//! footer check and reaches the decoder; the version is 14 or, when the mode byte's bit 1 is
//! set, Redis 8.10's 15); odd, a file, tried as it is and with `REDIS0014` or `REDIS0015`
//! before it.

use super::{RDB_VERSION, RDB_VERSION_READ, dump, file};
use crate::keyspace::Value;
use crate::types::string::hyperloglog as hll;

const NOW: u64 = 1_700_000_000_000;

/// A value's contents in an order that does not depend on a table's (hashes and sets), with
/// its encoding; `None` for the other types, compared by their dumps.
fn canonical(value: &Value) -> Option<String> {
    match value {
        Value::Hash(h) => {
            let mut fields: Vec<_> = h.entries().collect();
            fields.sort();
            Some(format!("{} {fields:?}", h.encoding()))
        }
        Value::Set(s) => {
            let mut members = s.members();
            members.sort();
            Some(format!("{} {members:?}", s.encoding()))
        }
        _ => None,
    }
}

fn check(value: &Value) {
    let sound = match value {
        Value::Stream(s) => s.check_invariants(),
        Value::Hash(h) => h.check_invariants(),
        Value::Set(s) => s.check_invariants(),
        Value::ZSet(z) => z.check_invariants(),
        Value::String(_) | Value::List(_) => Ok(()),
    };
    if let Err(e) = sound {
        panic!("a loaded value breaks its invariants: {e}");
    }
    if let Value::List(l) = value {
        if let Err(e) = l.check_invariants() {
            panic!("a loaded list breaks its invariants: {e}");
        }
        assert!(!l.is_empty(), "an empty list loaded");
    }
    if let Value::String(s) = value {
        if let Err(e) = s.check_invariants() {
            panic!("a loaded string breaks its invariants: {e}");
        }
        exercise_hll(&s.bytes());
    }
    let payload = dump::dump(value, NOW, true);
    let back = dump::restore(&payload, NOW, &Default::default())
        .unwrap_or_else(|e| panic!("a dump does not load: {e}"));
    match canonical(value) {
        // A table's order is its own: the same contents and encoding are what must come back.
        Some(text) => assert_eq!(
            canonical(&back),
            Some(text),
            "a dump does not reload the same"
        ),
        None => assert_eq!(
            dump::dump(&back, NOW, true),
            payload,
            "a dump does not reload the same"
        ),
    }
}

/// The HyperLogLog operations on a loaded string that passes the HLL checks.
fn exercise_hll(bytes: &[u8]) {
    if !hll::is_valid(bytes) {
        return;
    }
    let _ = hll::count(bytes);
    let mut max = [0u8; hll::REGISTERS];
    let _ = hll::merge_into(&mut max, bytes);
    let mut dense = bytes.to_vec();
    if hll::to_dense(&mut dense).is_ok() {
        assert!(
            hll::is_valid(&dense),
            "a dense conversion is not a valid HLL"
        );
    }
    let mut added = bytes.to_vec();
    let (index, run) = hll::pattern(bytes);
    if hll::set(&mut added, index, run, 3000).is_ok() {
        assert!(hll::is_valid(&added), "an addition leaves no valid HLL");
    }
}

/// Runs one input; panics if a property breaks.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let mut payload = rest.to_vec();
        let version = if mode & 2 != 0 {
            RDB_VERSION_READ
        } else {
            RDB_VERSION
        };
        payload.extend_from_slice(&version.to_le_bytes());
        payload.extend_from_slice(&[0; 8]);
        if dump::verify(&payload)
            && let Ok(value) = dump::restore(&payload, NOW, &Default::default())
        {
            check(&value);
        }
        return;
    }
    let options = file::LoadOptions {
        now_ms: NOW,
        databases: 16,
        drop_expired: mode & 2 != 0,
        limits: Default::default(),
    };
    let header: &[u8] = if mode & 4 != 0 {
        b"REDIS0015"
    } else {
        b"REDIS0014"
    };
    let mut prefixed = header.to_vec();
    prefixed.extend_from_slice(rest);
    for bytes in [rest, &prefixed[..]] {
        if let Ok(loaded) = file::read(bytes, &options) {
            for (_, value, _) in loaded.dbs.iter().flatten() {
                check(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::string::StringValue;

    const TARGET: &str = "rdb_load";

    #[test]
    fn the_committed_corpus_runs_clean() {
        echomq_testkit::replay_corpus(TARGET, run);
    }

    #[test]
    fn pseudo_random_inputs_run_clean() {
        for data in echomq_testkit::inputs(2000, 600) {
            run(&data);
        }
    }

    /// Damaged forms of real payloads and files: every cut and many byte flips.
    #[test]
    fn damaged_real_inputs_run_clean() {
        for seed in seeds() {
            for cut in 0..seed.len() {
                run(&seed[..cut]);
            }
            for at in 1..seed.len() {
                let mut bad = seed.clone();
                bad[at] = bad[at].wrapping_add(1 + (at % 7) as u8);
                run(&bad);
            }
        }
    }

    /// Payload seeds of every hash and set encoding, field TTLs included.
    fn collection_seeds() -> Vec<Vec<u8>> {
        let f = crate::effects_fixture::Fixture::new();
        let long = "x".repeat(70);
        for line in [
            "HSET hlp a 1 b two".to_string(),
            "HSET hex a 1 b 2".into(),
            format!("HPEXPIREAT hex {} FIELDS 1 b", NOW + 10),
            format!("HSET hht a {long}"),
            format!("HPEXPIREAT hht {} FIELDS 1 a", NOW + 10),
            "SADD sint 1 -70000 5".into(),
            "SADD slp a 1".into(),
            format!("SADD sht a {long}"),
        ] {
            f.run(&line).expect("builds");
        }
        ["hlp", "hex", "hht", "sint", "slp", "sht"]
            .iter()
            .map(|key| {
                let value =
                    f.ks.run(|db, _| db.get(key.as_bytes()).cloned())
                        .expect("built");
                let payload = dump::dump(&value, NOW, false);
                let mut seed = vec![0u8];
                seed.extend_from_slice(&payload[..payload.len() - 10]);
                seed
            })
            .collect()
    }

    #[test]
    fn damaged_collection_payloads_run_clean() {
        for seed in collection_seeds() {
            run(&seed);
            for cut in 0..seed.len() {
                run(&seed[..cut]);
            }
            for at in 1..seed.len() {
                for delta in [1u8, 0x40, 0x80, 0xff] {
                    let mut bad = seed.clone();
                    bad[at] = bad[at].wrapping_add(delta);
                    run(&bad);
                }
            }
        }
    }

    fn seeds() -> Vec<Vec<u8>> {
        let (ks, _) = crate::rdb::tests::rich_keyspace();
        let value = ks.run(|db, _| db.get(b"s").cloned()).expect("stream");
        let payload = dump::dump(&value, NOW, false);
        let mut as_payload = vec![0u8];
        as_payload.extend_from_slice(&payload[..payload.len() - 10]);
        let dbs = vec![vec![(
            bytes::Bytes::from_static(b"s"),
            value,
            Some(NOW + 5),
        )]];
        let opts = file::SaveOptions {
            compress: true,
            checksum: false,
            now_ms: NOW,
            redis_ver: "8.8.0".into(),
            ctime_s: 1,
            used_mem: 2,
            aof_base: false,
            functions: Vec::new(),
            key_save_delay_us: 0,
        };
        let mut as_file = vec![1u8];
        file::write(&dbs, &opts, &mut as_file).expect("in memory");
        vec![as_payload, as_file]
    }

    #[test]
    #[ignore = "regenerates the committed seeds by hand"]
    fn write_seed_corpus() {
        let files = seeds()
            .into_iter()
            .enumerate()
            .map(|(i, s)| (format!("seed-{i}"), s));
        echomq_testkit::write_corpus(TARGET, files.chain([("short".to_string(), vec![1, 2, 3])]));
    }

    #[test]
    fn string_and_hll_payloads_pass() {
        let sparse = hll::new_sparse();
        let mut dense = sparse.clone();
        let _ = hll::to_dense(&mut dense);
        let mut truncated = sparse.clone();
        truncated.pop();
        let mut added = sparse.clone();
        let _ = hll::set(&mut added, 5, 3, 3000);
        for bytes in [
            sparse,
            dense,
            truncated,
            added,
            b"12345".to_vec(),
            vec![b'x'; 300],
        ] {
            let payload = dump::dump(&Value::String(StringValue::from_arg(&bytes)), NOW, true);
            let mut input = vec![0u8];
            input.extend_from_slice(&payload[..payload.len() - 10]);
            run(&input);
        }
    }
}

//! Refusing sizes that do not fit, before anything is loaded.
//!
//! An entry costs about its `id` field (the 17-byte branded text), its values and a few bytes
//! of listpack framing per item and per entry (field names are shared by a node's entries).
//! The estimate takes 1.5 times that, since nodes are not full and the allocator rounds up.
//! Streams of one size are deleted before the next size loads, so the largest size decides.
//! Targets whose memory is this machine's (embedded, loopback servers) add up against
//! `MemAvailable`; a server with `maxmemory` must also fit under it.

use super::error::BenchError;
use super::target::Target;

/// Listpack framing per entry: flags, id deltas, field count, back-length.
const ENTRY_OVERHEAD_BYTES: u64 = 8;
/// Framing per stored value (length prefix and back-length).
const VALUE_OVERHEAD_BYTES: u64 = 2;
/// The branded id text in the `id` field.
const ID_TEXT_BYTES: u64 = echomq::feed::brand::TEXT_BYTES as u64;
/// Headroom over the byte count for partly filled nodes and allocator rounding, as a ratio
/// (3/2).
const SAFETY_NUM: u64 = 3;
const SAFETY_DEN: u64 = 2;
/// Share of available memory a run may plan to use (4/5): the rest is for everything else.
const AVAILABLE_NUM: u64 = 4;
const AVAILABLE_DEN: u64 = 5;

/// Estimated bytes per entry.
pub fn entry_bytes(fields: u32, value_bytes: u32) -> u64 {
    let values = u64::from(fields) * (u64::from(value_bytes) + VALUE_OVERHEAD_BYTES);
    (ENTRY_OVERHEAD_BYTES + ID_TEXT_BYTES + VALUE_OVERHEAD_BYTES + values) * SAFETY_NUM / SAFETY_DEN
}

/// `MemAvailable` from /proc/meminfo, in bytes.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuses if a stream of `entries` (plus `extra` appended during the run) on every target
/// does not fit.
pub fn check(
    targets: &[Target],
    entries: u64,
    extra: u64,
    entry_bytes: u64,
    available: Option<u64>,
) -> Result<(), BenchError> {
    let stream_bytes = entries.saturating_add(extra).saturating_mul(entry_bytes);
    let mb = |b: u64| b / (1 << 20);
    let local = targets.iter().filter(|t| t.local).count() as u64;
    if let Some(available) = available {
        let need = stream_bytes.saturating_mul(local);
        let usable = available / AVAILABLE_DEN * AVAILABLE_NUM;
        if need > usable {
            return Err(BenchError::TooBig {
                entries,
                need_mb: mb(need),
                available_mb: mb(usable),
                place: format!("this machine ({local} local targets, 80% of MemAvailable)"),
            });
        }
    }
    for target in targets {
        let m = target.memory;
        let limits = [
            (m.max_bytes, "maxmemory"),
            (m.system_bytes, "total_system_memory"),
        ];
        for (limit, name) in limits {
            if limit == 0 || (name == "total_system_memory" && target.local) {
                continue;
            }
            let free = limit.saturating_sub(m.used_bytes);
            if stream_bytes > free {
                return Err(BenchError::TooBig {
                    entries,
                    need_mb: mb(stream_bytes),
                    available_mb: mb(free),
                    place: format!("{} ({name} less used_memory)", target.label()),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_grows_with_fields_and_value_size() {
        let small = entry_bytes(2, 8);
        assert!((40..120).contains(&small), "{small}");
        assert!(entry_bytes(4, 8) > small);
        assert!(entry_bytes(2, 100) > entry_bytes(2, 8) + 2 * 92);
    }

    #[test]
    fn sizes_past_the_available_memory_are_refused() {
        let targets =
            [super::super::target::connect(&super::super::args::TargetSpec::Embedded).unwrap()];
        let per = entry_bytes(2, 8);
        assert!(check(&targets, 1_000_000, 0, per, Some(1 << 30)).is_ok());
        let refused = check(&targets, 100_000_000, 0, per, Some(1 << 30)).unwrap_err();
        assert!(refused.to_string().contains("do not fit"), "{refused}");
        assert!(check(&targets, 100_000_000, 0, per, None).is_ok());
    }
}

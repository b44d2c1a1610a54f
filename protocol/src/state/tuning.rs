//! CONFIG parameters that tune internals rather than behaviour, with Redis 8.8's names,
//! aliases, defaults, ranges and refusal texts:
//!
//! - the value types' encoding thresholds (`hash-max-listpack-entries` and its `ziplist`
//!   alias, `set-max-intset-entries` ...), kept in the engine's
//!   [`EncodingConfig`](echomq_engine::config::EncodingConfig), where each value type reads
//!   the ones it needs, and the list and HyperLogLog tuning (`list-max-listpack-size`,
//!   `list-compress-depth`, `hll-sparse-max-bytes`), kept in the engine's `Config`;
//! - the latency monitor (`latency-monitor-threshold`) and per-command latency tracking
//!   (`latency-tracking`, `latency-tracking-info-percentiles`), read by LATENCY and INFO;
//! - lazy freeing (`lazyfree-lazy-*`, `replica-lazy-flush`): `lazyfree-lazy-user-del`,
//!   `-user-flush`, `-expire` and `-server-del` are the engine's (`engine/src/lazyfree.rs`,
//!   which says what each frees in the background); `lazyfree-lazy-eviction` and
//!   `replica-lazy-flush` are accepted and shown.
//!
//! - `jemalloc-bg-thread`: the allocator's background purging thread, which gives freed pages
//!   back to the system while no traffic prompts it (Redis's `set_jemalloc_bg_thread`); set
//!   when the server starts serving and on every CONFIG SET.
//!
//! An alias is a parameter of its own here, as Redis lists both names in CONFIG GET *.

use std::sync::atomic::Ordering;

use super::settings::{Param, int_in, memory_in, yes_no, yes_no_text};
use crate::error::{ConfigRefusal, ConfigWhy};

/// The tuning parameters kept by the server (the encoding thresholds are the engine's).
#[derive(Debug, Clone, PartialEq)]
pub struct Tuning {
    /// `latency-monitor-threshold`: milliseconds from which an event is recorded; 0 = off.
    pub latency_monitor_threshold_ms: u64,
    /// `latency-tracking`: per-command latency histograms (INFO latencystats).
    pub latency_tracking: bool,
    /// `latency-tracking-info-percentiles`: the percentiles INFO latencystats shows.
    pub latency_tracking_info_percentiles: Vec<f64>,
    /// `lazyfree-lazy-eviction`, `-expire`, `-server-del`, `-user-del`, `-user-flush`, and
    /// `replica-lazy-flush`, in that order.
    pub lazyfree: [bool; 6],
    /// `jemalloc-bg-thread`.
    pub jemalloc_bg_thread: bool,
}

impl Tuning {
    /// Turns the allocator's background purging thread on or off as `jemalloc-bg-thread`
    /// says (nothing for an allocator without one).
    pub fn apply_allocator_settings(&self) {
        if let Some(allocator) = crate::alloc::allocator_introspection() {
            allocator.set_background_thread(self.jemalloc_bg_thread);
        }
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            latency_monitor_threshold_ms: 0,
            latency_tracking: true,
            latency_tracking_info_percentiles: vec![50.0, 99.0, 99.9],
            lazyfree: [false; 6],
            jemalloc_bg_thread: true,
        }
    }
}

/// `percentiles` as Redis shows them: `%f` with the trailing zeros (and point) trimmed.
fn percentiles_text(percentiles: &[f64]) -> String {
    percentiles
        .iter()
        .map(|p| {
            let text = format!("{p:.6}");
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses `latency-tracking-info-percentiles` (space-separated, `""` for none).
fn parse_percentiles(value: &str) -> Result<Vec<f64>, ConfigRefusal> {
    const NAME: &str = "latency-tracking-info-percentiles";
    let mut out = Vec::new();
    for word in value.split_ascii_whitespace() {
        let p: f64 = word
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite())
            .ok_or_else(|| {
                ConfigRefusal::new(
                    NAME,
                    ConfigWhy::Other("Invalid latency-tracking-info-percentiles parameters".into()),
                )
            })?;
        if !(0.0..=100.0).contains(&p) {
            return Err(ConfigRefusal::new(
                NAME,
                ConfigWhy::Other(
                    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                        .into(),
                ),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// A non-negative integer parameter read as Redis reads one (`string2ll`: a figure beyond a
/// 64-bit integer does not parse).
fn long_long(name: &str, value: &str) -> Result<u64, ConfigRefusal> {
    value
        .parse::<i64>()
        .map_err(|_| ConfigRefusal::new(name, ConfigWhy::NotInteger))?;
    int_in(name, value, 0, i64::MAX as u64)
}

/// An `int` parameter (Redis's `INT_MIN..=INT_MAX` range).
fn int32(name: &str, value: &str, min: i64) -> Result<i64, ConfigRefusal> {
    let n: i64 = value
        .parse()
        .map_err(|_| ConfigRefusal::new(name, ConfigWhy::NotInteger))?;
    let max = i64::from(i32::MAX);
    if n < min || n > max {
        return Err(ConfigRefusal::new(
            name,
            ConfigWhy::Other(format!(
                "argument must be between {min} and {max} inclusive"
            )),
        ));
    }
    Ok(n)
}

/// A `size_t` threshold of the engine's encoding config: an integer, or with `memory` a
/// memory value, from 0 to `LONG_MAX`.
macro_rules! encoding_param {
    ($name:literal, $field:ident, memory) => {
        Param {
            name: $name,
            get: |_, e| e.encoding.$field.load(Ordering::Relaxed).to_string(),
            set: Some(|_, e, v| {
                let n = memory_in($name, v, 0)?;
                if n > i64::MAX as u64 {
                    return Err(ConfigRefusal::new(
                        $name,
                        ConfigWhy::OutOfRange {
                            min: 0,
                            max: i64::MAX.into(),
                        },
                    ));
                }
                e.encoding.$field.store(n, Ordering::Relaxed);
                Ok(())
            }),
        }
    };
    ($name:literal, $field:ident) => {
        Param {
            name: $name,
            get: |_, e| e.encoding.$field.load(Ordering::Relaxed).to_string(),
            set: Some(|_, e, v| {
                let n = long_long($name, v)?;
                e.encoding.$field.store(n, Ordering::Relaxed);
                Ok(())
            }),
        }
    };
}

/// `list-max-listpack-size` under `$name` (it or its alias).
macro_rules! list_size_param {
    ($name:literal) => {
        Param {
            name: $name,
            get: |_, e| e.list_config().fill.to_string(),
            set: Some(|_, e, v| {
                let n = int32($name, v, i64::from(i32::MIN))?;
                e.set_list_fill(n as i32);
                Ok(())
            }),
        }
    };
}

/// A lazy freeing switch: `$index` in [`Tuning::lazyfree`].
macro_rules! lazyfree_param {
    ($name:literal, $index:literal) => {
        Param {
            name: $name,
            get: |s, _| yes_no_text(s.tuning.lazyfree[$index]),
            set: Some(|s, e, v| {
                let on = yes_no($name, v)?;
                s.tuning.lazyfree[$index] = on;
                match $name {
                    "lazyfree-lazy-user-del" => e.lazyfree.set_user_del(on),
                    "lazyfree-lazy-user-flush" => e.lazyfree.set_user_flush(on),
                    "lazyfree-lazy-expire" => e.lazyfree.set_expire(on),
                    "lazyfree-lazy-server-del" => e.lazyfree.set_server_del(on),
                    _ => {}
                }
                Ok(())
            }),
        }
    };
}

/// The tuning parameters, after the others in CONFIG GET *.
pub const TUNING_PARAMS: &[Param] = &[
    encoding_param!("hash-max-listpack-entries", hash_max_listpack_entries),
    encoding_param!("hash-max-ziplist-entries", hash_max_listpack_entries),
    encoding_param!("hash-max-listpack-value", hash_max_listpack_value, memory),
    encoding_param!("hash-max-ziplist-value", hash_max_listpack_value, memory),
    encoding_param!("set-max-intset-entries", set_max_intset_entries),
    encoding_param!("set-max-listpack-entries", set_max_listpack_entries),
    encoding_param!("set-max-listpack-value", set_max_listpack_value),
    encoding_param!("zset-max-listpack-entries", zset_max_listpack_entries),
    encoding_param!("zset-max-ziplist-entries", zset_max_listpack_entries),
    encoding_param!("zset-max-listpack-value", zset_max_listpack_value, memory),
    encoding_param!("zset-max-ziplist-value", zset_max_listpack_value, memory),
    list_size_param!("list-max-listpack-size"),
    list_size_param!("list-max-ziplist-size"),
    Param {
        name: "list-compress-depth",
        get: |_, e| e.list_config().depth.to_string(),
        set: Some(|_, e, v| {
            let n = int32("list-compress-depth", v, 0)?;
            e.set_list_depth(n as u32);
            Ok(())
        }),
    },
    Param {
        name: "hll-sparse-max-bytes",
        get: |_, e| e.hll_sparse_max_bytes().to_string(),
        set: Some(|_, e, v| {
            let n = memory_in("hll-sparse-max-bytes", v, 0)?;
            if n > i64::MAX as u64 {
                return Err(ConfigRefusal::new(
                    "hll-sparse-max-bytes",
                    ConfigWhy::OutOfRange {
                        min: 0,
                        max: i64::MAX.into(),
                    },
                ));
            }
            e.set_hll_sparse_max_bytes(n);
            Ok(())
        }),
    },
    Param {
        name: "latency-monitor-threshold",
        get: |s, _| s.tuning.latency_monitor_threshold_ms.to_string(),
        set: Some(|s, _, v| {
            s.tuning.latency_monitor_threshold_ms = long_long("latency-monitor-threshold", v)?;
            Ok(())
        }),
    },
    Param {
        name: "latency-tracking",
        get: |s, _| yes_no_text(s.tuning.latency_tracking),
        set: Some(|s, _, v| {
            s.tuning.latency_tracking = yes_no("latency-tracking", v)?;
            Ok(())
        }),
    },
    Param {
        name: "latency-tracking-info-percentiles",
        get: |s, _| percentiles_text(&s.tuning.latency_tracking_info_percentiles),
        set: Some(|s, _, v| {
            s.tuning.latency_tracking_info_percentiles = parse_percentiles(v)?;
            Ok(())
        }),
    },
    Param {
        name: "jemalloc-bg-thread",
        get: |s, _| yes_no_text(s.tuning.jemalloc_bg_thread),
        set: Some(|s, _, v| {
            s.tuning.jemalloc_bg_thread = yes_no("jemalloc-bg-thread", v)?;
            s.tuning.apply_allocator_settings();
            Ok(())
        }),
    },
    lazyfree_param!("lazyfree-lazy-eviction", 0),
    lazyfree_param!("lazyfree-lazy-expire", 1),
    lazyfree_param!("lazyfree-lazy-server-del", 2),
    lazyfree_param!("lazyfree-lazy-user-del", 3),
    lazyfree_param!("lazyfree-lazy-user-flush", 4),
    lazyfree_param!("replica-lazy-flush", 5),
    lazyfree_param!("slave-lazy-flush", 5),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_read_and_show_as_redis() {
        assert_eq!(percentiles_text(&[50.0, 99.0, 99.9]), "50 99 99.9");
        assert_eq!(parse_percentiles("").unwrap(), Vec::<f64>::new());
        assert_eq!(parse_percentiles("1 2.5").unwrap(), vec![1.0, 2.5]);
        assert!(parse_percentiles("50 101").is_err());
        assert!(parse_percentiles("50 abc").is_err());
    }
}

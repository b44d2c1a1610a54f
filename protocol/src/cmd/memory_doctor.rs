//! MEMORY DOCTOR: Redis's report of what looks wrong with the server's memory
//! (`getMemoryDoctorReport` in object.c), from the figures INFO memory shows, in its words.
//!
//! Not reported, having no figure here: big replica buffers (no replicas).

use super::overhead::Overhead;
use crate::state::ServerState;

/// Below this much `used_memory` the instance counts as empty.
const EMPTY_BELOW: u64 = 5 * 1024 * 1024;
/// A ratio reports only with this many bytes behind it.
const SIGNIFICANT_BYTES: i128 = 10 << 20;
/// More cached EVAL scripts than this reports.
const MANY_SCRIPTS: usize = 1000;
/// More client memory than this per client, on average, reports.
const BIG_CLIENT_BYTES: u64 = 200 * 1024;

const NO_ISSUE: &str = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n";
const EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";
const ISSUES: &str = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
const BIG_PEAK: &str = " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n";
const HIGH_ALLOCATOR_FRAG: &str = " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n";
const HIGH_ALLOCATOR_RSS: &str = " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n";
const HIGH_PROCESS_RSS: &str = " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n";
const BIG_CLIENT_BUFFERS: &str = " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n";
const MANY_SCRIPTS_TEXT: &str = " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n";
const SIGN_OFF: &str = "I'm here to keep you safe, Sam. I want to help you.\n";

/// The total fragmentation's item, naming the allocator.
fn high_total_rss(allocator: &str) -> String {
    format!(
        " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"{allocator}\".\n\n"
    )
}

/// The report for the server now.
pub(crate) fn report(state: &ServerState) -> String {
    let clients = Clients {
        memory: state.clients_memory().total(),
        count: state.clients().len() as u64,
    };
    report_of(
        &Overhead::now(state),
        &clients,
        state.scripts().count(),
        crate::alloc::allocator_name(),
    )
}

/// The clients' memory together, and how many there are.
struct Clients {
    memory: u64,
    count: u64,
}

/// The report for these figures, `clients`, `scripts` EVAL scripts cached, under `allocator`.
fn report_of(m: &Overhead, clients: &Clients, scripts: usize, allocator: &str) -> String {
    if m.used < EMPTY_BELOW {
        return EMPTY.to_string();
    }
    let significant =
        |ratio: f64, limit: f64, bytes: i128| ratio > limit && bytes > SIGNIFICANT_BYTES;
    let allocator_frag_bytes = i128::from(m.allocator.small_free);
    let mut items = Vec::new();
    if super::overhead::ratio(m.peak, m.used) > 1.5 {
        items.push(BIG_PEAK.to_string());
    }
    if significant(m.total_frag(), 1.4, m.total_frag_bytes()) {
        items.push(high_total_rss(allocator));
    }
    if significant(m.allocator_frag(), 1.1, allocator_frag_bytes) {
        items.push(HIGH_ALLOCATOR_FRAG.to_string());
    }
    if significant(m.allocator_rss(), 1.1, m.allocator_rss_bytes()) {
        items.push(HIGH_ALLOCATOR_RSS.to_string());
    }
    if significant(m.rss_extra(), 1.1, m.rss_extra_bytes()) {
        items.push(HIGH_PROCESS_RSS.to_string());
    }
    if clients.count > 0 && clients.memory / clients.count > BIG_CLIENT_BYTES {
        items.push(BIG_CLIENT_BUFFERS.to_string());
    }
    if scripts > MANY_SCRIPTS {
        items.push(MANY_SCRIPTS_TEXT.to_string());
    }
    if items.is_empty() {
        return NO_ISSUE.to_string();
    }
    let mut out = ISSUES.to_string();
    out.extend(items);
    out.push_str(SIGN_OFF);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::AllocatorStats;

    const MB: u64 = 1 << 20;

    /// Two clients of usual size.
    fn few() -> Clients {
        Clients {
            memory: 2 * 35 * 1024,
            count: 2,
        }
    }

    /// A healthy 100 MB server: every ratio near 1.
    fn healthy() -> Overhead {
        Overhead {
            used: 100 * MB,
            heap: 102 * MB,
            rss: 110 * MB,
            peak: 120 * MB,
            allocator: AllocatorStats {
                allocated: 102 * MB,
                active: 104 * MB,
                resident: 106 * MB,
                muzzy: 0,
                small_free: 2 * MB,
            },
        }
    }

    #[test]
    fn a_small_instance_is_empty_and_a_healthy_one_has_no_issue() {
        let small = Overhead {
            used: 4 * MB,
            ..healthy()
        };
        assert_eq!(report_of(&small, &few(), 0, "libc"), EMPTY);
        assert_eq!(report_of(&healthy(), &few(), 1000, "libc"), NO_ISSUE);
    }

    #[test]
    fn each_issue_is_reported_past_its_ratio_and_ten_megabytes_in_redis_order() {
        let mut m = healthy();
        m.peak = 151 * MB;
        m.rss = 200 * MB;
        m.allocator.small_free = 20 * MB;
        let big = Clients {
            memory: 2 * 200 * 1024 + 2,
            count: 2,
        };
        let report = report_of(&m, &big, 1001, "jemalloc-5.3.0");
        assert!(report.starts_with(ISSUES), "{report}");
        assert!(report.ends_with(SIGN_OFF), "{report}");
        let at = |text: &str| {
            report
                .find(text)
                .unwrap_or_else(|| panic!("{text} in {report}"))
        };
        assert!(at("* Peak memory") < at("* High total RSS"));
        assert!(at("\"jemalloc-5.3.0\"") < at("* High allocator fragmentation"));
        assert!(at("* High allocator fragmentation") < at("* High process RSS overhead"));
        assert!(at("* High process RSS overhead") < at("* Big client buffers"));
        assert!(at("* Big client buffers") < at("* Many scripts"));
        assert!(!report.contains("High allocator RSS overhead"), "{report}");
    }

    #[test]
    fn a_ratio_past_its_limit_reports_only_with_ten_megabytes_behind_it() {
        // Resident 1.5 times the heap, but only 5 MB of it.
        let m = Overhead {
            used: 10 * MB,
            heap: 10 * MB,
            rss: 15 * MB,
            peak: 10 * MB,
            allocator: AllocatorStats {
                allocated: 10 * MB,
                active: 10 * MB,
                resident: 10 * MB,
                muzzy: 0,
                small_free: 0,
            },
        };
        assert_eq!(report_of(&m, &few(), 0, "libc"), NO_ISSUE);
        let mut m = healthy();
        m.allocator.resident = 130 * MB;
        assert!(report_of(&m, &few(), 0, "libc").contains("* High allocator RSS overhead"));
    }

    #[test]
    fn client_buffers_report_past_200k_a_client_on_average() {
        let at_limit = Clients {
            memory: 3 * 200 * 1024,
            count: 3,
        };
        assert_eq!(report_of(&healthy(), &at_limit, 0, "libc"), NO_ISSUE);
        let past = Clients {
            memory: 3 * 201 * 1024,
            count: 3,
        };
        let report = report_of(&healthy(), &past, 0, "libc");
        assert_eq!(report, format!("{ISSUES}{BIG_CLIENT_BUFFERS}{SIGN_OFF}"));
    }
}

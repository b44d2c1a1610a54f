//! The terminal tables: one per operation, rows grouped by size, targets side by side in
//! consecutive rows so their figures read as a comparison.

use std::fmt::Write;

use super::results::Report;

/// A count the way people read it: `1.0M`, `10k`, `950`.
pub fn human(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.1}G", n / 1e9),
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e4 => format!("{:.0}k", n / 1e3),
        n if n >= 1e3 => format!("{:.1}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

/// A duration in microseconds with a fitting unit.
pub fn duration(us: f64) -> String {
    match us {
        us if us >= 1e6 => format!("{:.2} s", us / 1e6),
        us if us >= 1e3 => format!("{:.2} ms", us / 1e3),
        us if us >= 10.0 => format!("{us:.1} us"),
        us => format!("{us:.2} us"),
    }
}

/// How many rows of each table are already shown: the tables print as their measurements
/// end, each showing only the rows added since.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    load: usize,
    window: usize,
    trim: usize,
    append: usize,
    append_aggregate: usize,
    consume: usize,
    consume_aggregate: usize,
}

impl Shown {
    /// Every row `report` holds now.
    pub fn all(report: &Report) -> Shown {
        Shown {
            load: report.load.len(),
            window: report.window.len(),
            trim: report.trim.len(),
            append: report.append.len(),
            append_aggregate: report.append_aggregate.len(),
            consume: report.consume.len(),
            consume_aggregate: report.consume_aggregate.len(),
        }
    }
}

/// The whole report as text: the [`header`], then every table.
#[cfg(test)]
pub fn render(report: &Report) -> String {
    header(report) + &tables_since(report, &Shown::default())
}

/// What the run is about, known before anything is measured: the load average, the targets
/// and, with several queues or on a cluster, where each queue lives.
pub fn header(report: &Report) -> String {
    let mut out = String::new();
    let w = &mut out;
    let [l1, l5, l15] = report.load_average;
    let _ = writeln!(w, "load average at start: {l1:.2} {l5:.2} {l15:.2}");
    for t in &report.targets {
        let _ = writeln!(w, "target: {}", t.label);
    }
    let queues = report.config.queues;
    for q in &report.queues {
        if queues < 2 && q.master.is_none() {
            continue;
        }
        let _ = match (&q.slot, &q.master) {
            (Some(slot), Some(master)) => writeln!(
                w,
                "queue q{} of {}: {} (slot {slot}, on master {master})",
                q.queue, q.target, q.name
            ),
            _ => writeln!(w, "queue q{} of {}: {}", q.queue, q.target, q.name),
        };
    }
    out
}

/// The tables of the rows added since `shown`, each with its heading; empty if none were.
pub fn tables_since(report: &Report, shown: &Shown) -> String {
    let mut out = String::new();
    let w = &mut out;
    let queues = report.config.queues;
    // A row's target, with its queue when there are several.
    let lane = |target: &str, queue: usize| {
        if queues > 1 {
            format!("{target} q{queue}")
        } else {
            target.to_string()
        }
    };
    let all = |target: &str| format!("{target} all {queues}");
    if report.load.len() > shown.load {
        let _ = writeln!(
            w,
            "\nload (pipelined XADD over RESP; direct adds in process)"
        );
        let _ = writeln!(
            w,
            "{:>8}  {:<30} {:>10} {:>12}",
            "entries", "target", "time", "entries/s"
        );
        for r in &report.load[shown.load..] {
            let _ = writeln!(
                w,
                "{:>8}  {:<30} {:>10} {:>12}",
                human(r.entries as f64),
                lane(&r.target, r.queue),
                duration(r.seconds * 1e6),
                human(r.entries_per_s)
            );
        }
    }
    if report.window.len() > shown.window {
        let _ = writeln!(
            w,
            "\nwindow: Feed::read_window (rate {}/s)",
            report.config.rate
        );
        let _ = writeln!(
            w,
            "{:>8}  {:<30} {:>5} {:>7} {:>7} {:>10} {:>10} {:>11}",
            "entries", "target", "span", "where", "read", "p50", "p99", "entries/s"
        );
        for r in &report.window[shown.window..] {
            let _ = writeln!(
                w,
                "{:>8}  {:<30} {:>5} {:>7} {:>7} {:>10} {:>10} {:>11}",
                human(r.entries as f64),
                r.target,
                r.span,
                r.position,
                r.read_entries,
                duration(r.p50_us),
                duration(r.p99_us),
                human(r.entries_per_s)
            );
        }
    }
    if report.trim.len() > shown.trim {
        let _ = writeln!(
            w,
            "\ntrim: XTRIM (median of {}; `~` with LIMIT {})",
            report.config.trim_repeats, report.config.trim_limit
        );
        let _ = writeln!(
            w,
            "{:>8}  {:<30} {:<9} {:>4} {:>8} {:>8} {:>8} {:>7} {:>10} {:>9}",
            "entries",
            "target",
            "trim",
            "ask",
            "removed",
            "left",
            "under",
            "nodes",
            "time",
            "ns/entry"
        );
        for r in &report.trim[shown.trim..] {
            let ns = r
                .ns_per_entry
                .map_or("-".to_string(), |ns| format!("{ns:.1}"));
            let _ = writeln!(
                w,
                "{:>8}  {:<30} {:<9} {:>3.0}% {:>8} {:>8} {:>8} {:>7} {:>10} {:>9}",
                human(r.entries as f64),
                r.target,
                r.strategy,
                r.fraction * 100.0,
                r.removed,
                r.left,
                r.under_trim,
                r.nodes_freed,
                duration(r.time_us),
                ns
            );
        }
    }
    if report.append.len() > shown.append {
        let _ = writeln!(w, "\nappend: one XADD per round trip");
        let _ = writeln!(
            w,
            "{:>8}  {:<30} {:<8} {:>10} {:>10}",
            "entries", "target", "mode", "per XADD", "XADD/s"
        );
        for r in &report.append[shown.append..] {
            let _ = writeln!(
                w,
                "{:>8}  {:<30} {:<8} {:>10} {:>10}",
                human(r.entries as f64),
                lane(&r.target, r.queue),
                r.mode,
                duration(r.us_per_op),
                human(r.ops_per_s)
            );
        }
        if queues > 1 {
            for r in &report.append_aggregate[shown.append_aggregate..] {
                let _ = writeln!(
                    w,
                    "{:>8}  {:<30} {:<8} {:>10} {:>10}",
                    human(r.entries as f64),
                    all(&r.target),
                    r.mode,
                    "-",
                    human(r.entries_per_s)
                );
            }
        }
    }
    if report.consume.len() > shown.consume {
        let _ = writeln!(w, "\nconsume: {}", report.consume_method);
        let _ = writeln!(
            w,
            "{:>8}  {:<30} {:<8} {:>10} {:>10} {:>12}",
            "entries", "target", "mode", "per entry", "entries/s", "of it append"
        );
        for r in &report.consume[shown.consume..] {
            let _ = writeln!(
                w,
                "{:>8}  {:<30} {:<8} {:>10} {:>10} {:>12}",
                human(r.entries as f64),
                lane(&r.target, r.queue),
                r.mode,
                duration(r.us_per_entry),
                human(r.entries_per_s),
                duration(r.append_us_per_entry)
            );
        }
        if queues > 1 {
            for r in &report.consume_aggregate[shown.consume_aggregate..] {
                let _ = writeln!(
                    w,
                    "{:>8}  {:<30} {:<8} {:>10} {:>10} {:>12}",
                    human(r.entries as f64),
                    all(&r.target),
                    r.mode,
                    "-",
                    human(r.entries_per_s),
                    "-"
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_people_write_them() {
        assert_eq!(human(950.0), "950");
        assert_eq!(human(1500.0), "1.5k");
        assert_eq!(human(10_000.0), "10k");
        assert_eq!(human(1_000_000.0), "1.0M");
        assert_eq!(duration(0.5), "0.50 us");
        assert_eq!(duration(1500.0), "1.50 ms");
        assert_eq!(duration(2.5e6), "2.50 s");
    }

    #[test]
    fn several_queues_show_per_queue_rows_an_aggregate_and_their_masters() {
        use crate::results::{AggregateRow, AppendRow, QueueInfo};
        let mut report = Report::default();
        report.config.queues = 2;
        for q in 0..2 {
            report.queues.push(QueueInfo {
                target: "c".into(),
                queue: q,
                name: format!("run:q{q}"),
                slot: Some(100 * q as u16),
                master: Some(format!("127.0.0.1:700{q}")),
            });
            report.append.push(AppendRow {
                target: "c".into(),
                entries: 1000,
                queue: q,
                mode: "plain".into(),
                ops: 10,
                ops_per_s: 1e5,
                us_per_op: 10.0,
            });
        }
        report.append_aggregate.push(AggregateRow {
            target: "c".into(),
            entries: 1000,
            mode: "plain".into(),
            queues: 2,
            total: 20,
            entries_per_s: 2e5,
        });
        let text = render(&report);
        assert!(
            text.contains("queue q1 of c: run:q1 (slot 100, on master 127.0.0.1:7001)"),
            "{text}"
        );
        assert!(text.contains("c q0 "), "{text}");
        assert!(text.contains("c q1 "), "{text}");
        let total = text.lines().find(|l| l.contains("c all 2")).unwrap();
        assert!(total.contains("200k"), "{text}");
        report.config.queues = 1;
        report.queues.clear();
        assert!(!render(&report).contains(" all "));
    }

    #[test]
    fn tables_since_show_only_the_rows_added_since() {
        use crate::results::LoadRow;
        let mut report = Report::default();
        report.config.queues = 1;
        let row = |entries| LoadRow {
            target: "embedded".into(),
            entries,
            queue: 0,
            seconds: 0.5,
            entries_per_s: entries as f64 * 2.0,
        };
        report.load.push(row(1000));
        let first = tables_since(&report, &Shown::default());
        assert!(
            first.contains("load (") && first.contains("1.0k"),
            "{first}"
        );
        let shown = Shown::all(&report);
        assert_eq!(tables_since(&report, &shown), "");
        report.load.push(row(10_000));
        let second = tables_since(&report, &shown);
        assert!(
            second.contains("load (") && second.contains("10k"),
            "{second}"
        );
        assert!(!second.contains("1.0k"), "{second}");
        assert!(render(&report).starts_with("load average at start"));
    }
}

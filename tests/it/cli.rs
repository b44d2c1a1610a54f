//! The `echomq` binary: `echomq serve` starts, prints its address, applies a config file, and
//! answers clients; it stops on SIGTERM. INFO memory and MEMORY MALLOC-STATS report its
//! allocator (jemalloc) as Redis reports its own, a flush gives its pages back, and an
//! embedded server reports its heap count.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::process::Running;

#[test]
fn serve_prints_its_address_and_applies_a_config_file() {
    let dir = std::env::temp_dir().join(format!("echomq-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("echomq.conf");
    std::fs::write(
        &config,
        "# test settings\nstream-node-max-entries 7\nmaxclients 50\nnotify-keyspace-events \"Ex$\"\n",
    )
    .unwrap();
    let mut running = Running(
        Command::new(env!("CARGO_BIN_EXE_echomq"))
            .args(crate::support::process::SERVE_ARGS)
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let child = &mut running.0;
    let mut first_line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let addr = first_line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(
        first_line.contains("listening on 127.0.0.1:"),
        "{first_line}"
    );

    let mut client = TcpStream::connect(&addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    client
        .write_all(b"CONFIG GET stream-node-max-entries\r\n")
        .unwrap();
    let expected = b"*2\r\n$23\r\nstream-node-max-entries\r\n$1\r\n7\r\n";
    let mut reply = vec![0u8; expected.len()];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(reply, expected);
    // The notification classes, shown in Redis's letter order.
    client
        .write_all(b"CONFIG GET notify-keyspace-events\r\n")
        .unwrap();
    let expected = b"*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\n$xE\r\n";
    let mut reply = vec![0u8; expected.len()];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(reply, expected);

    // SIGTERM stops it cleanly.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A field of INFO's text.
fn info_field(info: &str, name: &str) -> String {
    crate::support::field_of_info(info, name).unwrap_or_else(|| panic!("no {name} in {info}"))
}

#[test]
fn serve_reports_its_allocators_figures_as_redis_does() {
    let (_running, addr) = crate::support::process::serve(crate::support::process::echomq(), &[]);
    let client = redis::Client::open(format!("redis://{addr}")).unwrap();
    let mut c = client.get_connection().unwrap();
    let mut value = String::new();
    for i in 0..2000 {
        value.push('x');
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(&value)
            .query(&mut c)
            .unwrap();
    }
    let info: String = redis::cmd("INFO").arg("memory").query(&mut c).unwrap();
    assert_eq!(info_field(&info, "mem_allocator"), "jemalloc-5.3.0");
    let number = |name: &str| -> u64 { info_field(&info, name).parse().unwrap() };
    let (allocated, active, resident) = (
        number("allocator_allocated"),
        number("allocator_active"),
        number("allocator_resident"),
    );
    // 2,000 values of 1 to 2,000 bytes: 2 MB held.
    assert!(allocated > 2_000_000, "{info}");
    assert!(active >= allocated && resident >= active, "{info}");
    // The ratios are Redis's: the small pages' free slots over the blocks held, plus one;
    // resident over active; the process's resident size over the allocator's.
    let free = number("allocator_frag_bytes");
    assert_eq!(
        info_field(&info, "allocator_frag_ratio"),
        format!("{:.2}", free as f64 / allocated as f64 + 1.0)
    );
    assert_eq!(
        info_field(&info, "allocator_rss_ratio"),
        format!("{:.2}", resident as f64 / active as f64)
    );
    assert_eq!(number("allocator_rss_bytes"), resident - active);
    let report: String = redis::cmd("MEMORY")
        .arg("MALLOC-STATS")
        .query(&mut c)
        .unwrap();
    assert!(report.contains("Allocated:"), "{report}");
    let purged: String = redis::cmd("MEMORY").arg("PURGE").query(&mut c).unwrap();
    assert_eq!(purged, "OK");
}

#[test]
fn a_flush_gives_its_pages_back_and_jemallocs_purging_thread_follows_its_setting() {
    let (_running, addr) = crate::support::process::serve(crate::support::process::echomq(), &[]);
    let client = redis::Client::open(format!("redis://{addr}")).unwrap();
    let mut c = client.get_connection().unwrap();
    let purging_thread = |c: &mut redis::Connection| -> bool {
        let report: String = redis::cmd("MEMORY").arg("MALLOC-STATS").query(c).unwrap();
        let on = report.contains("(background_thread: true)");
        assert!(
            on || report.contains("(background_thread: false)"),
            "{report}"
        );
        on
    };
    // On by default, as Redis turns it on.
    assert!(purging_thread(&mut c));
    for (value, on) in [("no", false), ("yes", true)] {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("jemalloc-bg-thread")
            .arg(value)
            .query(&mut c)
            .unwrap();
        assert_eq!(
            purging_thread(&mut c),
            on,
            "after jemalloc-bg-thread {value}"
        );
    }
    let resident = |c: &mut redis::Connection| -> u64 {
        let info: String = redis::cmd("INFO").arg("memory").query(c).unwrap();
        info_field(&info, "allocator_resident").parse().unwrap()
    };
    // 20,000 values of 1,000 bytes, then a FLUSHALL: its reply comes once their pages are
    // back with the system, not kept by the allocator for a traffic that may never come.
    let value = "x".repeat(1000);
    let mut pipe = redis::pipe();
    for i in 0..20_000 {
        pipe.cmd("SET").arg(format!("key:{i}")).arg(&value).ignore();
    }
    let _: () = pipe.query(&mut c).unwrap();
    let full = resident(&mut c);
    let _: () = redis::cmd("FLUSHALL").arg("SYNC").query(&mut c).unwrap();
    let flushed = resident(&mut c);
    assert!(
        flushed + 15_000_000 < full,
        "allocator_resident {full} with the values, {flushed} after FLUSHALL"
    );
}

#[test]
fn an_embedded_server_reports_its_heap_count_as_the_allocators() {
    // No allocator figures in process (the system's allocator): what Redis reports for one.
    let server = echomq::testing::TestServer::start().unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_connection().unwrap();
    let info: String = redis::cmd("INFO").arg("memory").query(&mut c).unwrap();
    assert_eq!(
        info_field(&info, "allocator_active"),
        info_field(&info, "allocator_resident")
    );
    assert_eq!(info_field(&info, "allocator_frag_ratio"), "1.00");
    assert_eq!(info_field(&info, "allocator_frag_bytes"), "0");
    let report: String = redis::cmd("MEMORY")
        .arg("MALLOC-STATS")
        .query(&mut c)
        .unwrap();
    assert_eq!(report, "Stats not supported for the current allocator");
}

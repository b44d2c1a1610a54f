//! The `echomq` command line: `echomq serve` runs the Redis-protocol server on the embedded
//! engine; `echomq archive` inspects, restores and verifies an archive and its replica;
//! `echomq bench` measures window reads, trims, appends and group reads on the engine and on
//! Redis-protocol servers.
//!
//! This package (`echomq-cli`) holds the binary and nothing a library user links: the
//! subcommands are one file each ([`serve`] with its [`config`] and [`service`], [`archive`]
//! with [`replica`]'s S3 options, [`logging`]; the server's [`allocator`]), and `bench` is the `echomq-bench` crate. It also owns the integration tests
//! (`tests/it` at the repository root), which start this binary.

mod allocator;
mod archive;
mod config;
mod jemalloc_stats;
mod logging;
mod replica;
mod serve;
mod service;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// jemalloc, as Redis's allocator (its size classes hold small values tighter than glibc's
/// malloc, which adds a header and rounds to 16 bytes; see [`allocator`]), counting what the
/// process holds: INFO's `used_memory` and the `maxmemory` check read it (see
/// `echomq_protocol::alloc`).
#[global_allocator]
static ALLOC: echomq_protocol::CountingAlloc<allocator::Jemalloc8> =
    echomq_protocol::CountingAlloc(allocator::Jemalloc8);

/// A pure-Rust stream engine that speaks Redis Streams natively.
#[derive(Debug, Parser)]
#[command(name = "echomq", version, about)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the Redis-protocol server (RESP2/RESP3) on the embedded engine.
    // `serve --help` is answered by `serve` itself: its arguments are config directives.
    #[command(disable_help_flag = true)]
    Serve(Box<serve::ServeArgs>),
    /// Inspect, restore or verify an archive and its S3 replica.
    Archive(archive::ArchiveArgs),
    /// Measure window reads, trims, appends and group reads, embedded and over RESP.
    Bench(echomq_bench::BenchArgs),
}

fn main() -> ExitCode {
    echomq_protocol::alloc::name_allocator("jemalloc-5.3.0");
    echomq_protocol::alloc::introspect_allocator(&jemalloc_stats::JemallocStats);
    echomq_engine::lazyfree::set_release(jemalloc_stats::release);
    let args = Args::parse();
    // `serve` sets its log up from its configuration (`logfile`, `loglevel`).
    if !matches!(args.command, Command::Serve(_)) {
        logging::init();
    }
    let result = match args.command {
        Command::Serve(serve) => serve::run(*serve),
        Command::Archive(archive) => archive::run(archive),
        Command::Bench(bench) => echomq_bench::run(bench),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("echomq: {message}");
            ExitCode::FAILURE
        }
    }
}

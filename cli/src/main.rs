//! The `echomq` command line: `echomq serve` runs the Redis-protocol server on the embedded
//! engine; `echomq archive` inspects, restores and verifies an archive and its replica;
//! `echomq bench` measures window reads, trims, appends and group reads on the engine and on
//! Redis-protocol servers.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Serve(cli::serve::ServeArgs),
    /// Inspect, restore or verify an archive and its S3 replica.
    Archive(cli::archive::ArchiveArgs),
    /// Measure window reads, trims, appends and group reads, embedded and over RESP.
    Bench(cli::bench::BenchArgs),
}

fn main() -> ExitCode {
    let args = Args::parse();
    cli::init_logging();
    let result = match args.command {
        Command::Serve(serve) => cli::serve::run(serve),
        Command::Archive(archive) => cli::archive::run(archive),
        Command::Bench(bench) => cli::bench::run(bench),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("echomq: {message}");
            ExitCode::FAILURE
        }
    }
}

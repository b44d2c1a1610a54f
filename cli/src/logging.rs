//! The subcommands of the `echomq` binary, one file each.

pub mod archive;
pub mod bench;
pub mod replica;
pub mod serve;

/// Logs to stderr; `RUST_LOG` picks the level (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

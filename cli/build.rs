//! Lays out the release `echomq` with its hot functions together: `link-order.txt` (written by
//! `scripts/gen-link-order` from a profile of start-up and common commands) goes to the linker
//! as its symbol ordering file. The kernel maps up to 64 KB around each page fault in the
//! binary, so code the server runs scattered among code it never runs keeps megabytes of the
//! binary resident; laid out together, a few hundred kilobytes. Its relative relocations are
//! packed (`DT_RELR`) where the C library applies packed ones: a few kilobytes for the loader
//! to read at start-up rather than about 470 KB.
//!
//! Only where the linker is LLD: Rust's default for x86_64 Linux from 1.90 (GNU ld before, which
//! has no such option). Names the build does not define are skipped, so a stale list costs
//! layout, never correctness.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-changed=build.rs");
    let release = env::var("PROFILE").is_ok_and(|p| p == "release");
    let target = env::var("TARGET").unwrap_or_default();
    if !release || target != "x86_64-unknown-linux-gnu" || !lld_by_default() {
        return;
    }
    let order =
        Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link-order.txt");
    if order.exists() {
        println!(
            "cargo:rustc-link-arg-bin=echomq=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=echomq=-Wl,--no-warn-symbol-ordering");
    }
    if loader_reads_packed_relocations() {
        println!("cargo:rustc-link-arg-bin=echomq=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's C library applies packed relative relocations (`DT_RELR`, glibc
/// 2.36 on), which it says by defining the symbol version `GLIBC_ABI_DT_RELR`. Packed, the
/// binary's relocations take a few kilobytes rather than about 470 KB the loader reads, and
/// keeps resident, at every start.
fn loader_reads_packed_relocations() -> bool {
    const VERSION: &[u8] = b"GLIBC_ABI_DT_RELR";
    std::fs::read("/lib/x86_64-linux-gnu/libc.so.6")
        .is_ok_and(|libc| libc.windows(VERSION.len()).any(|w| w == VERSION))
}

/// Whether this rustc links x86_64 Linux binaries with LLD unless told otherwise (1.90 on), and
/// neither the build's flags nor Cargo's configuration names another linker.
fn lld_by_default() -> bool {
    // `RUSTC_LINKER`: the linker Cargo was configured to use for the target, if any.
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("-V").output() else {
        return false;
    };
    // "rustc 1.95.0 (...)"
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}

//! A small tmpfs mounted for one test, to make a disk full on purpose: [`Tmpfs::mount`]
//! mounts it on a fresh temporary directory and unmounts it when dropped. Where mounting is
//! not permitted (not root, no `mount`), the test is skipped with a notice, or fails under
//! `CI=true`, where the fault must be exercised.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs; unmounted when dropped.
#[derive(Debug)]
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size_bytes`; `None` (after a printed notice) where that is not
    /// permitted and `CI` is not `true`.
    pub fn mount(size_bytes: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_bytes}"), "tmpfs"])
            .arg(dir.path())
            .output();
        let why = match mounted {
            Ok(out) if out.status.success() => return Some(Tmpfs { dir }),
            Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true requires mounting a tmpfs: {why}"
        );
        eprintln!("SKIPPED: cannot mount a tmpfs ({why})");
        None
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the free space with a file named `ballast` (removed to free the space again).
    pub fn fill(&self) -> PathBuf {
        let path = self.path().join("ballast");
        let mut file = File::create(&path).unwrap();
        let block = vec![0u8; 4096];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::StorageFull => break,
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a server still holding a file open must not leave the mount behind.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

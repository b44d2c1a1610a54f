//! The committed fuzz corpora, `fuzz/corpus/<target>` at the repository root: one file per
//! input, replayed by the owning crate's tests and by `cargo fuzz run <target>`.

use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

/// The folder of `target`'s corpus. Found from the running test's package (cargo and nextest
/// set `CARGO_MANIFEST_DIR` when they run a test; every crate that replays a corpus sits one
/// level below the repository root, as this one does), not from where this crate was
/// compiled: checkouts sharing a target directory share this crate's build.
pub fn corpus_dir(target: &str) -> PathBuf {
    let package = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    package.join("../fuzz/corpus").join(target)
}

/// Runs every file of `target`'s corpus through `run`, in file-name order. Panics if the
/// folder is missing or empty, or naming the first file on which `run` panics.
pub fn replay_corpus(target: &str, run: impl Fn(&[u8])) {
    let dir = corpus_dir(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus folder {} missing: {e}", dir.display()));
    let mut paths = entries
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("corpus folder {} unreadable: {e}", dir.display()));
    paths.sort();
    assert!(
        !paths.is_empty(),
        "corpus folder {} is empty",
        dir.display()
    );
    for path in paths {
        let data = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("corpus file {} unreadable: {e}", path.display()));
        // The target's own panic message is printed by the panic hook; this names the file.
        let result = panic::catch_unwind(AssertUnwindSafe(|| run(&data)));
        assert!(result.is_ok(), "corpus file {} fails", path.display());
    }
}

/// Writes `files` (name, contents) into `target`'s corpus folder, creating it. For the
/// `#[ignore]`d tests that regenerate seed inputs by hand after a format change; the files
/// are committed.
pub fn write_corpus(target: &str, files: impl IntoIterator<Item = (String, Vec<u8>)>) {
    let dir = corpus_dir(target);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    for (name, data) in files {
        let path = dir.join(name);
        std::fs::write(&path, data)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_committed_corpus_is_found_and_replayed_file_by_file() {
        let files = std::cell::Cell::new(0);
        replay_corpus("resp_decode", |_| files.set(files.get() + 1));
        let on_disk = std::fs::read_dir(corpus_dir("resp_decode"))
            .unwrap()
            .count();
        assert_eq!(files.get(), on_disk);
    }

    #[test]
    #[should_panic(expected = "fails")]
    fn a_panicking_target_names_the_file() {
        replay_corpus("resp_decode", |_| panic!("broken property"));
    }

    #[test]
    #[should_panic(expected = "missing")]
    fn a_missing_corpus_fails() {
        replay_corpus("no_such_target", |_| {});
    }
}

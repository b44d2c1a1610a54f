//! Background saves in a forked child, as Redis makes them: BGSAVE and BGREWRITEAOF fork under
//! the keyspace lock, and the child writes its file from its copy of the parent's memory
//! image while the parent goes on serving. The kernel copies a page only when one side writes
//! to it, so taking the snapshot costs the fork (page tables, O(memory mapped) but no data
//! copied) and the save costs the parent only the pages writers touch meanwhile. The only
//! unsafe code of the crate outside the allocator is here.
//!
//! Why the child is safe although the server is multi-threaded (only the forking thread
//! exists in the child; any lock another thread held at the fork stays held there forever):
//! - it takes no lock of ours: it reads the databases through the reference its closure
//!   captured while the forking thread held the keyspace lock (the lock is held in the child
//!   too, by that same thread, so nothing else could hold it), and its file names and options
//!   were computed before the fork;
//! - it never logs (`tracing` takes its subscriber's locks) and never writes to stdout or
//!   stderr; a panic (a bug) prints nothing (the panic hook is emptied first: the standard
//!   error's lock may be held) and the child exits with a failure status;
//! - it puts back the default action of every signal with a handler before anything else: the
//!   server's handlers write to descriptors the child closes and may reuse;
//! - it allocates only through the C library's `malloc` (the counting allocator adds an atomic
//!   and a thread-local slot of the forking thread): glibc's `fork` takes every arena lock
//!   before forking and resets them in the child, so `malloc` works there. It starts no
//!   thread: a save encodes on its one thread in the child
//!   (`echomq_engine::rdb::encode_on_one_thread`), leaving the other cores to the server;
//! - it ends with `_exit`: no destructor, no `atexit` handler, no flushing of buffers that
//!   belong to the parent.
//!
//! The child closes every descriptor it inherited but its report pipe (sockets stay with the
//! parent only: a client the parent drops is closed at once; a listening port is free when the
//! parent stops), writes its file, then reports through the pipe: whether it succeeded, the
//! bytes written, and its copy-on-write size (Private_Dirty of `/proc/self/smaps_rollup`, as
//! Redis's `zmalloc_get_private_dirty`). While it runs, it counts the keys it wrote in a page
//! mapped shared with the parent (`current_save_keys_processed`), and the parent samples its
//! copy-on-write size every second (`current_cow_size`). The parent installs the file (rename, manifest) only
//! after a successful report: a child whose parent died never replaces anything, and removes
//! its temp file if it finds itself orphaned.
//!
//! Invariants: a [`Slot`] knows at most one child; its pid is cleared before the child is
//! reaped, so [`Slot::kill`] can never signal a recycled pid.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

/// Orders forks across slots, so INFO's `latest_fork_usec` is the most recent one's.
static FORK_SEQ: AtomicU64 = AtomicU64::new(0);

/// Seconds between two samples of a running child's copy-on-write size.
const COW_SAMPLE_MS: i32 = 1000;

/// One kind of background child (the RDB's or the AOF rewrite's) and its INFO figures.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    /// The running child, if any.
    pid: Mutex<Option<i32>>,
    /// The server killed the running child: its end is not a failure.
    aborted: AtomicBool,
    /// The last finished child's copy-on-write bytes (`rdb_last_cow_size`, `aof_last_cow_size`).
    last_cow: AtomicU64,
    /// The running child's copy-on-write bytes as last sampled, their peak, and when (ms on
    /// the monotonic clock of [`Slot::sampled_at`]).
    current_cow: AtomicU64,
    current_cow_peak: AtomicU64,
    current_cow_at_ms: AtomicU64,
    /// The running child's keys at the fork.
    keys_total: AtomicU64,
    /// The last fork's duration, its order among all forks, and the forks so far.
    fork_usec: AtomicU64,
    fork_seq: AtomicU64,
    forks: AtomicU64,
    /// The running child's pid again, for the sampler (0 when none); readable without the lock.
    running: AtomicI32,
    /// The keys the running child has saved: a counter in a page shared with it (made at the
    /// first fork; `None` if it could not be mapped).
    saved: std::sync::OnceLock<Option<SharedCounter>>,
}

/// An `AtomicU64` in an anonymous page mapped shared, so a forked child's increments are seen
/// by the server.
#[derive(Debug)]
struct SharedCounter(std::ptr::NonNull<AtomicU64>);

// SAFETY: the page is only ever accessed through the atomic.
#[allow(unsafe_code)]
unsafe impl Send for SharedCounter {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl Sync for SharedCounter {}

impl SharedCounter {
    fn new() -> Option<SharedCounter> {
        sys::map_shared_counter().map(SharedCounter)
    }

    fn get(&self) -> &AtomicU64 {
        // SAFETY: the page is mapped, zero-initialized (a valid AtomicU64) and aligned, until
        // `drop` unmaps it, which needs `&mut self`.
        #[allow(unsafe_code)]
        unsafe {
            self.0.as_ref()
        }
    }
}

impl Drop for SharedCounter {
    fn drop(&mut self) {
        sys::unmap_shared_counter(self.0);
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It wrote its file: `bytes` long.
    Done { bytes: u64 },
    /// It failed (its error is lost with it: the child never logs).
    Failed,
    /// The server killed it ([`Slot::kill`]).
    Aborted,
    /// Something else killed it (the OOM killer, an operator), by this signal.
    Signaled(i32),
}

/// The figures of a slot for INFO.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    pub running: bool,
    pub last_cow: u64,
    pub current_cow: u64,
    pub current_cow_peak: u64,
    /// Seconds since `current_cow` was sampled (0 before the first sample).
    pub current_cow_age_s: u64,
    pub keys_total: u64,
    /// The keys the running child has saved so far.
    pub keys_processed: u64,
    pub fork_usec: u64,
    pub fork_seq: u64,
    pub forks: u64,
}

/// A forked child the caller reaps with [`Child::wait`] (on a thread of its own).
#[derive(Debug)]
pub(crate) struct Child {
    pid: i32,
    report: std::os::fd::OwnedFd,
}

impl Child {
    /// The child's pid (its temp file is named after it).
    pub(crate) fn pid(&self) -> u32 {
        self.pid as u32
    }
}

/// A monotonic clock in ms for the sample ages.
fn monotonic_ms() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

impl Slot {
    /// Kills the running child, if any, as Redis's `killRDBChild`: its end then counts as
    /// [`Outcome::Aborted`] (not a failure; its temp file is removed by whoever reaps it).
    pub(crate) fn kill(&self) -> bool {
        let pid = self.pid.lock();
        let Some(pid) = *pid else {
            return false;
        };
        self.aborted.store(true, Ordering::Release);
        sys::kill(pid);
        true
    }

    /// Kills and reaps the running child whose [`Child`] was lost (no thread could be
    /// started to wait for it).
    pub(crate) fn kill_unreaped(&self) {
        let pid = self.pid.lock().take();
        self.running.store(0, Ordering::Release);
        if let Some(pid) = pid {
            sys::kill(pid);
            let _ = sys::reap(pid);
            echomq_engine::access::child_ended();
        }
    }

    /// INFO's figures.
    pub(crate) fn figures(&self) -> Figures {
        let at = self.current_cow_at_ms.load(Ordering::Acquire);
        Figures {
            running: self.running.load(Ordering::Acquire) != 0,
            last_cow: self.last_cow.load(Ordering::Relaxed),
            current_cow: self.current_cow.load(Ordering::Relaxed),
            current_cow_peak: self.current_cow_peak.load(Ordering::Relaxed),
            current_cow_age_s: if at == 0 {
                0
            } else {
                monotonic_ms().saturating_sub(at) / 1000
            },
            keys_total: self.keys_total.load(Ordering::Relaxed),
            keys_processed: self
                .saved_counter()
                .map_or(0, |c| c.load(Ordering::Relaxed)),
            fork_usec: self.fork_usec.load(Ordering::Relaxed),
            fork_seq: self.fork_seq.load(Ordering::Relaxed),
            forks: self.forks.load(Ordering::Relaxed),
        }
    }

    fn saved_counter(&self) -> Option<&AtomicU64> {
        self.saved
            .get_or_init(SharedCounter::new)
            .as_ref()
            .map(SharedCounter::get)
    }

    /// Forks (call holding the keyspace lock, with everything `work` reads borrowed from what
    /// it guards or computed before). The child runs `work`, which writes the file at
    /// `temp(pid)` and returns its size, reports and exits; the parent gets the [`Child`] to
    /// reap. `keys_total`: the keys the child saves (`current_save_keys_total`).
    pub(crate) fn spawn(
        &self,
        keys_total: u64,
        temp: impl Fn(u32) -> PathBuf,
        work: impl FnOnce(&AtomicU64) -> Result<u64, ()>,
    ) -> io::Result<Child> {
        let mut slot = self.pid.lock();
        if slot.is_some() {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "a child runs"));
        }
        let (read, write) = sys::pipe()?;
        let parent = std::process::id();
        let unshared = AtomicU64::new(0);
        let saved = self.saved_counter().unwrap_or(&unshared);
        saved.store(0, Ordering::Relaxed);
        let started = Instant::now();
        let pid = sys::fork()?;
        if pid == 0 {
            child(read, write, parent, temp, || work(saved));
        }
        let took = started.elapsed().as_micros() as u64;
        echomq_engine::access::child_started();
        drop(write);
        *slot = Some(pid);
        self.running.store(pid, Ordering::Release);
        self.aborted.store(false, Ordering::Release);
        self.current_cow.store(0, Ordering::Relaxed);
        self.current_cow_peak.store(0, Ordering::Relaxed);
        self.current_cow_at_ms.store(0, Ordering::Release);
        self.keys_total.store(keys_total, Ordering::Relaxed);
        self.fork_usec.store(took.max(1), Ordering::Relaxed);
        self.fork_seq.store(
            FORK_SEQ.fetch_add(1, Ordering::Relaxed) + 1,
            Ordering::Relaxed,
        );
        self.forks.fetch_add(1, Ordering::Relaxed);
        Ok(Child { pid, report: read })
    }

    /// Waits for `child` to end (sampling its copy-on-write size meanwhile), reaps it and
    /// returns how it ended.
    pub(crate) fn wait(&self, child: Child) -> Outcome {
        let mut report = [0u8; REPORT_BYTES];
        let mut got = 0;
        loop {
            match sys::poll_read(&child.report, COW_SAMPLE_MS) {
                Ok(true) => match sys::read(&child.report, &mut report[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                },
                Ok(false) => self.sample(child.pid),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
            if got == REPORT_BYTES {
                break;
            }
        }
        // Cleared before reaping: until then the pid cannot be reused, so a kill meanwhile
        // still reaches this child (or its zombie).
        *self.pid.lock() = None;
        self.running.store(0, Ordering::Release);
        let status = sys::reap(child.pid);
        echomq_engine::access::child_ended();
        let aborted = self.aborted.swap(false, Ordering::AcqRel);
        let reported = (got == REPORT_BYTES).then(|| Report::decode(&report));
        if let Some(r) = &reported {
            self.last_cow.store(r.cow_bytes, Ordering::Relaxed);
        }
        if aborted {
            return Outcome::Aborted;
        }
        match (status, reported) {
            (Status::Exited(0), Some(r)) if r.ok => Outcome::Done { bytes: r.bytes },
            (Status::Signaled(signal), _) => Outcome::Signaled(signal),
            _ => Outcome::Failed,
        }
    }

    fn sample(&self, pid: i32) {
        let path = format!("/proc/{pid}/smaps_rollup");
        if let Some(bytes) = private_dirty(&path) {
            self.current_cow.store(bytes, Ordering::Relaxed);
            self.current_cow_peak.fetch_max(bytes, Ordering::Relaxed);
            self.current_cow_at_ms
                .store(monotonic_ms(), Ordering::Release);
        }
    }
}

/// Private_Dirty of an `smaps_rollup` file, in bytes.
fn private_dirty(path: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let kib: u64 = text
        .lines()
        .filter_map(|line| line.strip_prefix("Private_Dirty:"))
        .filter_map(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .sum();
    Some(kib * 1024)
}

/// The child's report: success, bytes written, copy-on-write bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Report {
    ok: bool,
    bytes: u64,
    cow_bytes: u64,
}

const REPORT_BYTES: usize = 17;

impl Report {
    fn encode(&self) -> [u8; REPORT_BYTES] {
        let mut out = [0u8; REPORT_BYTES];
        out[0] = u8::from(self.ok);
        out[1..9].copy_from_slice(&self.bytes.to_le_bytes());
        out[9..17].copy_from_slice(&self.cow_bytes.to_le_bytes());
        out
    }

    fn decode(bytes: &[u8; REPORT_BYTES]) -> Report {
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(w)
        };
        Report {
            ok: bytes[0] == 1,
            bytes: word(1),
            cow_bytes: word(9),
        }
    }
}

/// How much lower than the server's the child's scheduling priority is (`nice`).
const CHILD_NICENESS: i32 = 10;

/// The child's life: never returns.
fn child(
    read: std::os::fd::OwnedFd,
    write: std::os::fd::OwnedFd,
    parent: u32,
    temp: impl Fn(u32) -> PathBuf,
    work: impl FnOnce() -> Result<u64, ()>,
) -> ! {
    use std::os::fd::IntoRawFd;
    // Raw: the descriptors are closed by number below and at exit, never by a destructor.
    let _ = read.into_raw_fd();
    let write = write.into_raw_fd();
    // First the handlers: one inherited from the server (its signal driver's) would write to
    // a descriptor number the child reuses for its file. The default ends the child on
    // SIGTERM or SIGINT, which the server sees as a killed save.
    sys::default_signal_handlers();
    sys::close_all_but(write);
    // A panic must not print: the standard error's lock may be held by a thread that is gone.
    std::panic::set_hook(Box::new(|_| {}));
    // One thread: the server's need the other cores while the child writes.
    echomq_engine::rdb::encode_on_one_thread();
    // And below them: a save that takes longer costs only the pages writers touch meanwhile,
    // where a server thread waiting for the child's core costs every client's latency.
    let _ = rustix::process::nice(CHILD_NICENESS);
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    let bytes = match done {
        Ok(Ok(bytes)) => Some(bytes),
        _ => None,
    };
    let report = Report {
        ok: bytes.is_some(),
        bytes: bytes.unwrap_or(0),
        cow_bytes: private_dirty("/proc/self/smaps_rollup").unwrap_or(0),
    };
    let sent = sys::write_all(write, &report.encode());
    if sent.is_err() || sys::parent() != parent {
        // Nobody will install or remove the file.
        let _ = std::fs::remove_file(temp(std::process::id()));
    }
    sys::exit(if report.ok { 0 } else { 1 })
}

/// How a reaped child ended.
enum Status {
    Exited(i32),
    Signaled(i32),
    Unknown,
}

/// Disables transparent huge pages for the process, as Redis's `disable-thp yes`: with them a
/// write during a background save copies 2 MiB instead of 4 KiB.
pub(crate) fn disable_thp() {
    sys::disable_thp();
}

#[allow(unsafe_code)]
mod sys {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

    use super::Status;

    pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded: both descriptors are open and owned by nothing else.
        Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    }

    /// `fork()`: 0 in the child, the child's pid in the parent.
    pub(super) fn fork() -> io::Result<i32> {
        // SAFETY: the caller holds the keyspace lock and runs in the child only the code the
        // module docs describe (no lock, no logging, malloc made fork-safe by glibc, `_exit`).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(pid)
    }

    /// Closes every descriptor from 3 on but `keep` (best effort: an old kernel without
    /// close_range leaves them open, which only delays the closing of sockets).
    pub(super) fn close_all_but(keep: RawFd) {
        let keep = keep as libc::c_uint;
        // SAFETY: close_range only closes descriptors; nothing in the child uses one but `keep`
        // and those it opens afterwards.
        unsafe {
            if keep > 3 {
                libc::syscall(
                    libc::SYS_close_range,
                    3 as libc::c_uint,
                    keep - 1,
                    0 as libc::c_uint,
                );
            }
            libc::syscall(
                libc::SYS_close_range,
                keep + 1,
                libc::c_uint::MAX,
                0 as libc::c_uint,
            );
        }
    }

    /// Puts back the default disposition of every signal that has a handler (ignored ones
    /// stay ignored: SIGPIPE's write errors are errors, not the end).
    pub(super) fn default_signal_handlers() {
        for signal in 1..=64 {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            // SAFETY: a zeroed sigaction is a valid out-parameter; querying and resetting a
            // disposition has no other effect.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
                    libc::signal(signal, libc::SIG_DFL);
                }
            }
        }
    }

    pub(super) fn write_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            // SAFETY: `bytes` is valid for reads of its length.
            let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            bytes = &bytes[n as usize..];
        }
        Ok(())
    }

    pub(super) fn read(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// A zeroed page mapped shared and anonymous, as a counter (`None` if mmap fails).
    pub(super) fn map_shared_counter() -> Option<std::ptr::NonNull<std::sync::atomic::AtomicU64>> {
        // SAFETY: a new anonymous mapping; no existing memory is touched.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return None;
        }
        std::ptr::NonNull::new(page.cast())
    }

    /// Unmaps a page [`map_shared_counter`] mapped.
    pub(super) fn unmap_shared_counter(page: std::ptr::NonNull<std::sync::atomic::AtomicU64>) {
        // SAFETY: `page` is a 4096-byte mapping of ours that nothing refers to any more.
        unsafe {
            libc::munmap(page.as_ptr().cast(), 4096);
        }
    }

    /// Whether `fd` is readable (or at its end) within `timeout_ms`.
    pub(super) fn poll_read(fd: &OwnedFd, timeout_ms: i32) -> io::Result<bool> {
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut poll, 1, timeout_ms) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n > 0)
    }

    pub(super) fn reap(pid: i32) -> Status {
        let mut status: libc::c_int = 0;
        loop {
            // SAFETY: `status` is a valid int; `pid` is our unreaped child.
            let got = unsafe { libc::waitpid(pid, &mut status, 0) };
            if got == pid {
                break;
            }
            if got < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Status::Unknown;
        }
        if libc::WIFEXITED(status) {
            Status::Exited(libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            Status::Signaled(libc::WTERMSIG(status))
        } else {
            Status::Unknown
        }
    }

    pub(super) fn kill(pid: i32) {
        // SAFETY: `pid` is our child, not yet reaped (the caller holds the slot's lock).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }

    pub(super) fn parent() -> u32 {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() as u32 }
    }

    pub(super) fn exit(code: i32) -> ! {
        // SAFETY: `_exit` ends the process without running anything of the parent's image.
        unsafe { libc::_exit(code) }
    }

    pub(super) fn disable_thp() {
        #[cfg(target_os = "linux")]
        // SAFETY: PR_SET_THP_DISABLE takes plain integers.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1 as libc::c_ulong, 0, 0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_round_trips() {
        let r = Report {
            ok: true,
            bytes: 1 << 40,
            cow_bytes: 12345,
        };
        assert_eq!(Report::decode(&r.encode()), r);
    }

    #[test]
    fn a_child_reports_and_a_killed_child_is_aborted() {
        let dir = tempfile::tempdir().unwrap();
        let slot = Slot::default();
        let path = dir.path().to_path_buf();
        let temp = |pid: u32| path.join(format!("t-{pid}"));
        let data = vec![7u8; 1000];
        let child = slot
            .spawn(3, temp, |saved| {
                saved.fetch_add(3, Ordering::Relaxed);
                std::fs::write(temp(std::process::id()), &data).map_err(|_| ())?;
                Ok(data.len() as u64)
            })
            .unwrap();
        let pid = child.pid();
        assert!(slot.figures().running);
        assert_eq!(slot.wait(child), Outcome::Done { bytes: 1000 });
        assert_eq!(std::fs::read(temp(pid)).unwrap(), data);
        let figures = slot.figures();
        assert!(figures.fork_usec > 0 && figures.forks == 1 && figures.keys_total == 3);
        // The child's count, through the shared page.
        assert_eq!(figures.keys_processed, 3);
        assert!(!slot.figures().running);

        let child = slot
            .spawn(0, temp, |_| {
                std::thread::sleep(std::time::Duration::from_secs(30));
                Ok(0)
            })
            .unwrap();
        assert!(slot.kill());
        assert_eq!(slot.wait(child), Outcome::Aborted);
        assert!(!slot.kill());

        let child = slot.spawn(0, temp, |_| Err(())).unwrap();
        assert_eq!(slot.wait(child), Outcome::Failed);
        let child = slot.spawn(0, temp, |_| panic!("a bug")).unwrap();
        assert_eq!(slot.wait(child), Outcome::Failed);
        assert_eq!(slot.figures().forks, 4);
    }
}

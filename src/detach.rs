//! Finishing a link in a forked child, so that whoever waits for dtld is released as soon as the
//! output is in place.
//!
//! The end of a large link is the kernel tearing down the process: unmapping the output and
//! every input, freeing the heap, evicting the replaced output's blocks. None of it changes a
//! byte of the result, yet a build system waits for it, because it waits for the process to exit
//! and for its stdout and stderr pipes to close (ninja reads both). So, as mold and wild do, the
//! process forks before the link starts (still single-threaded): the child links; the parent
//! only waits. When the child is done (output renamed into place, every message written), it
//! points its stdin, stdout and stderr at /dev/null, sends its exit code through a pipe, and
//! then exits in its own time; the parent exits at once with that code. (mold keeps stdio
//! open in its child, so a build system that reads the linker's output still waits for the
//! teardown; dtld releases it.)
//!
//! Nothing else changes for the caller:
//! * the exit status is the link's; a child that dies without a word (a panic, a signal) is
//!   waited for and its status reported as the parent's own (the same signal is raised);
//! * SIGINT, SIGTERM and SIGHUP sent to the parent are passed to the child, which removes its
//!   temporaries and stops its own children as before (cleanup.rs), and the parent then exits
//!   with the child's status;
//! * SIGKILL to the parent kills the child too (PR_SET_PDEATHSIG), so a killed link leaves the
//!   previous output as it was, as before. The few system calls that put a finished file in
//!   place (`linkat` of the unnamed temporary, `rename`) run with that signal off
//!   (`shielded`): a kill landing there lets them finish, then takes effect, so the caller
//!   finds the old file or the new one and never the temporary's name.
//!
//! The parent holds no memory worth measuring; the child's peak RSS is the link's. A process
//! that measures the link's memory through wait4 must reap the child as well (a subreaper:
//! scripts/bench.py). `--no-fork` (mold's name) or DTLD_NO_FORK=1 keeps the link in one process,
//! for debuggers; library entry points never fork.

use std::sync::atomic::{AtomicI32, Ordering};

/// The child the parent forwards signals to: the one process-wide value here, because a signal
/// handler can reach nothing else.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// The child's end of the parent's pipe: `finish` releases the parent.
pub struct Detached {
    notify: libc::c_int,
}

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe; `pid` is our own child.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Whether the process is still single-threaded (fork copies only the calling thread; a lock
/// another thread held would stay locked in the child forever).
fn single_threaded() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    status.lines().find_map(|l| l.strip_prefix("Threads:")).is_some_and(|n| n.trim() == "1")
}

/// Whether DTLD_NO_FORK's value asks for one process: set to anything but an empty string, `0`,
/// `false`, `no` or `off` (in any case), as the distributors read their boolean variables.
fn no_fork(v: Option<&std::ffi::OsStr>) -> bool {
    v.is_some_and(|v| {
        let v = v.to_string_lossy().to_ascii_lowercase();
        !matches!(v.as_str(), "" | "0" | "false" | "no" | "off")
    })
}

/// Forks when `wanted` (and DTLD_NO_FORK is not set) and the process can: returns in the child
/// with the handle that releases the parent, or `None` when the link stays in this process.
/// The parent never returns from here: it exits with the child's status.
pub fn fork(wanted: bool) -> Option<Detached> {
    if !wanted || no_fork(std::env::var_os("DTLD_NO_FORK").as_deref()) || !single_threaded() {
        return None;
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two descriptors; close-on-exec, so that no program the link starts
    // (a distributor, llvm-lto2) holds the write end and delays the parent's end-of-file.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the process is single-threaded (checked above), so the child is a consistent copy.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the two descriptors pipe2 returned.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return None;
    }
    if pid == 0 {
        // SAFETY: prctl/getppid/close with valid arguments. If the parent died before prctl
        // took effect, there is nobody to link for.
        unsafe {
            libc::close(fds[0]);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
        }
        return Some(Detached { notify: fds[1] });
    }
    parent_wait(pid, fds)
}

/// The parent's whole life after the fork: pass termination signals on, wait for the child's
/// word or its end, exit accordingly.
/// `waitpid` for child `pid`, again when a signal interrupts it: its status, `None` if it
/// cannot be waited for.
pub(crate) fn wait_child(pid: libc::pid_t) -> Option<libc::c_int> {
    let mut status = 0;
    // SAFETY: waitpid into a local.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
    Some(status)
}

fn parent_wait(pid: libc::pid_t, fds: [libc::c_int; 2]) -> ! {
    CHILD.store(pid, Ordering::Relaxed);
    // SAFETY: plain sigaction calls installing an async-signal-safe handler; close on a
    // descriptor we own; read into a one-byte buffer; waitpid on our child; _exit/raise.
    unsafe {
        libc::close(fds[1]);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(fds[0], (&mut byte as *mut u8).cast(), 1);
            if n == 1 {
                libc::_exit(i32::from(byte));
            }
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        let Some(status) = wait_child(pid) else { libc::_exit(1) };
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(1)
    }
}

/// Runs `f` (a few system calls that must not be cut in half) so that the parent's death does
/// not kill this process in the middle of it: the parent-death signal is turned off around it,
/// and if the parent died meanwhile, the signal this process was due is raised afterwards.
/// Only the thread that runs the link holds a parent-death signal (`DeathSignal` moved it
/// there); elsewhere, and in a link that did not fork, `f` just runs.
pub fn shielded<T>(f: impl FnOnce() -> T) -> T {
    let held = DeathSignal::take();
    let r = f();
    held.arm();
    r
}

/// The parent-death signal of the thread that forked, moved to the thread that runs the link
/// (`take` on the first, `arm` on the second): the kernel sends it when the parent dies if any
/// thread of this process holds it, and `shielded` can only turn off the calling thread's.
#[derive(Clone, Copy)]
pub struct DeathSignal {
    sig: libc::c_int,
    parent: libc::pid_t,
}

impl DeathSignal {
    /// Takes the calling thread's parent-death signal off it (none: nothing to move). If the
    /// parent died before the signal was off, the signal is already on its way (the kernel sends
    /// it as it re-parents this process); it is raised to make sure.
    pub fn take() -> DeathSignal {
        let mut sig: libc::c_int = 0;
        // SAFETY: PR_GET_PDEATHSIG writes one int through the pointer; getppid and raise have
        // no preconditions; PR_SET_PDEATHSIG with 0 turns the signal off.
        unsafe {
            if libc::prctl(libc::PR_GET_PDEATHSIG, &mut sig as *mut libc::c_int) != 0 {
                sig = 0;
            }
            let parent = libc::getppid();
            if sig != 0 {
                libc::prctl(libc::PR_SET_PDEATHSIG, 0 as libc::c_ulong);
                if libc::getppid() != parent {
                    libc::raise(sig);
                }
            }
            DeathSignal { sig, parent }
        }
    }

    /// Gives the signal to the calling thread; if the parent died since `take`, it is raised.
    pub fn arm(self) {
        if self.sig == 0 {
            return;
        }
        // SAFETY: prctl with a valid option and argument; getppid/raise have no preconditions.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, self.sig as libc::c_ulong);
            if libc::getppid() != self.parent {
                libc::raise(self.sig);
            }
        }
    }
}

impl Detached {
    /// Releases the parent with exit code `code`: everything the link printed is flushed, stdio
    /// is handed to /dev/null (so that pipes reading it see their end), then the code is sent.
    /// The caller exits afterwards; its teardown no longer delays anyone.
    pub fn finish(self, code: i32) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        crate::diag::flush();
        // SAFETY: open/dup2/close/write on descriptors we own, with a NUL-terminated path.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
                libc::close(null);
            }
            let byte = code.clamp(0, 255) as u8;
            libc::write(self.notify, (&byte as *const u8).cast(), 1);
            libc::close(self.notify);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::no_fork;
    use std::ffi::OsStr;

    #[test]
    fn no_fork_reads_booleans() {
        for v in ["1", "true", "YES", "on", "y"] {
            assert!(no_fork(Some(OsStr::new(v))), "{v}");
        }
        for v in ["", "0", "false", "No", "OFF"] {
            assert!(!no_fork(Some(OsStr::new(v))), "{v}");
        }
        assert!(!no_fork(None));
    }
}

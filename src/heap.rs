//! glibc's malloc, tuned for a short-lived process that allocates fast on several threads.
//!
//! Every rayon worker allocates from a glibc arena of its own, and such an arena grows its heap
//! by `mprotect`-ing 128 KiB more of its reservation at a time (`M_TOP_PAD`'s default): OpenSSL's
//! native link made 1,182 `mprotect` calls, each taking the address space's lock for writing,
//! which stalls the other thread's page faults behind it (4% of the link's samples were in
//! `mprotect`). Growing by 16 MiB makes that 17 calls. Pages are still only resident once they
//! are touched, so the peak RSS does not change. Setting `M_TOP_PAD` turns glibc's adaptive mmap
//! threshold off, so the mmap and trim thresholds are set where the adaptive ones end (32 and
//! 64 MiB, as glibc sets them after the first free of a large block).

/// Applies the tuning; called first thing in `main`, before any thread exists.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation parameters; no allocation is in flight.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

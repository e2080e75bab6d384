//! Temporaries removed on SIGINT, SIGTERM and SIGHUP.
//!
//! A link that is interrupted must not leave its temporaries behind (the output's temporary
//! file, the ThinLTO staging directory with its shards and objects), just as a failed link does
//! not. Destructors do that on every normal return path; a signal needs process-wide state,
//! the one exception to "no globals" in dtld: paths register here while they exist, and a
//! watcher thread removes them, stops child processes (a distributor) and ends the process by
//! the signal, as ld.lld does.

use std::path::PathBuf;
use std::sync::{Mutex, Once};

/// Registered paths; a directory registered with its identity (device, inode) is removed only
/// while its name still refers to it (see staging.rs).
static PATHS: Mutex<Vec<(u64, PathBuf, Option<(u64, u64)>)>> = Mutex::new(Vec::new());
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static NEXT: Mutex<u64> = Mutex::new(0);
static INIT: Once = Once::new();
/// A signal arrived: the link is being torn down (a child that fails now failed because of it).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a signal is ending the link (the watcher is removing the temporaries and will end
/// the process): a failure seen now is the signal's, not one to report.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Removes the path when dropped, and on a signal while it lives.
pub struct Registered {
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut p = PATHS.lock().unwrap_or_else(|e| e.into_inner());
        p.retain(|(i, _, _)| *i != self.id);
    }
}

/// Registers a temporary file or directory for removal on a signal. Dropping the handle only
/// unregisters it (the owner removes or keeps it).
pub fn register(path: PathBuf) -> Registered {
    register_with(path, None)
}

/// Registers a staging directory, removed on a signal only if `path` is still the directory
/// with this (device, inode).
pub fn register_dir(path: PathBuf, id: (u64, u64)) -> Registered {
    register_with(path, Some(id))
}

fn register_with(path: PathBuf, ident: Option<(u64, u64)>) -> Registered {
    let group = register_group();
    PATHS.lock().unwrap_or_else(|e| e.into_inner()).push((group.id, path, ident));
    group
}

/// An empty group of temporary files, to which `Registered::add` adds paths (DTLTO's
/// temporaries, thousands in a large link: one handle for all, unregistered at once).
pub fn register_group() -> Registered {
    install();
    let mut n = NEXT.lock().unwrap_or_else(|e| e.into_inner());
    *n += 1;
    Registered { id: *n }
}

impl Registered {
    /// Adds a file to this group: removed on a signal while the group is registered.
    pub fn add(&self, path: PathBuf) {
        PATHS.lock().unwrap_or_else(|e| e.into_inner()).push((self.id, path, None));
    }
}

/// A child process to terminate on a signal (e.g. the DTLTO distributor).
pub struct ChildGuard {
    pid: u32,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != self.pid);
    }
}

pub fn register_child(pid: u32) -> ChildGuard {
    install();
    CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    ChildGuard { pid }
}

fn install() {
    INIT.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP])
        else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
                for &pid in CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    // SAFETY: kill(2) with a pid we spawned and a valid signal number.
                    unsafe {
                        libc::kill(pid as libc::pid_t, libc::SIGTERM);
                    }
                }
                let paths: Vec<(PathBuf, Option<(u64, u64)>)> =
                    PATHS.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(_, p, i)| (p.clone(), *i)).collect();
                // Twice: a child that was still finishing may have written one more file.
                for round in 0..2 {
                    std::thread::sleep(std::time::Duration::from_millis(if round == 0 { 50 } else { 200 }));
                    for (p, ident) in paths.iter().rev() {
                        use std::os::unix::fs::MetadataExt;
                        let Ok(m) = std::fs::symlink_metadata(p) else { continue };
                        match ident {
                            // Not ours any more (renamed, replaced by a link): left alone.
                            Some(id) if (m.dev(), m.ino()) != *id || !m.is_dir() => {}
                            _ if m.is_dir() => {
                                let _ = std::fs::remove_dir_all(p);
                            }
                            _ => {
                                let _ = std::fs::remove_file(p);
                            }
                        }
                    }
                }
                // As ld.lld (LLVM's signal handler): nothing printed, and the process ends by the
                // signal itself, so the caller sees it die of SIGINT, SIGTERM or SIGHUP.
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        });
    });
}

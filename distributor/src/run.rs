//! Running the jobs: a small process pool that owns every child it starts.
//!
//! Why it is shaped this way:
//! - The main thread alone starts, polls (`try_wait`) and kills children, so killing on SIGINT or
//!   SIGTERM never races with reaping: a `Child` is only killed by the thread that owns it.
//! - Each child writes stdout and stderr into one pipe, drained by a small reader thread, so a
//!   job's messages keep their order and are printed as one block when the job ends.
//! - The largest module starts first: it is usually the slowest, and starting it last would leave
//!   every other core idle while it finishes.
//! - A zero exit status is not trusted alone. clang's ThinLTO backend can exit 0 after writing an
//!   empty object, and lld silently links an empty object as "no code", so each output must exist,
//!   be non-empty and start like an ELF or COFF object. A bad output is deleted, so that a linker
//!   that ignores our exit status still cannot link it.

use crate::jobfile::{Job, JobFile};
use crate::progress::Progress;
use std::collections::VecDeque;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How often running children are polled when nothing else wakes the loop.
const POLL: Duration = Duration::from_millis(10);
/// How soon a child whose output pipe closed is looked at again when it was not yet reapable.
const EXITING_POLL: Duration = Duration::from_millis(1);
/// How long to wait for a job's output pipe to close after the job exited. It stays open only if
/// the compiler left a background process holding it; its output is then cut short.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

pub struct Options {
    /// Jobs run at once (at least 1).
    pub parallelism: usize,
    /// Print each command before running it.
    pub verbose: bool,
}

/// A job that did not produce a usable object.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub module: String,
    pub output: String,
    pub reason: String,
}

pub enum Outcome {
    /// Every job ran; `failures` is in job-file order.
    Finished { failures: Vec<Failure>, elapsed: Duration, max_parallel: usize },
    /// A signal arrived; running jobs were killed and their outputs removed.
    Interrupted { signal: i32, killed: usize },
}

/// SIGINT and SIGTERM, caught so that running jobs can be stopped and their outputs removed.
pub struct Signals {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

impl Signals {
    pub fn install() -> io::Result<Signals> {
        let s = Signals { int: Arc::new(AtomicBool::new(false)), term: Arc::new(AtomicBool::new(false)) };
        signal_hook::flag::register(signal_hook::consts::SIGINT, s.int.clone())?;
        signal_hook::flag::register(signal_hook::consts::SIGTERM, s.term.clone())?;
        Ok(s)
    }

    /// A stand-in that never reports a signal (if installing the handlers failed).
    pub fn none() -> Signals {
        Signals { int: Arc::new(AtomicBool::new(false)), term: Arc::new(AtomicBool::new(false)) }
    }

    fn received(&self) -> Option<i32> {
        if self.int.load(Ordering::Relaxed) {
            Some(signal_hook::consts::SIGINT)
        } else if self.term.load(Ordering::Relaxed) {
            Some(signal_hook::consts::SIGTERM)
        } else {
            None
        }
    }
}

/// Jobs at once when not told: one per core.
pub fn default_parallelism() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Finds the compiler named by `common.args[0]`: a path if it contains `/`, else a `PATH` lookup.
pub fn resolve_compiler(name: &str) -> Result<PathBuf, String> {
    if name.is_empty() {
        return Err("job file names no compiler (common.args[0] is empty); pass --thinlto-remote-compiler=".into());
    }
    if name.contains('/') {
        let path = PathBuf::from(name);
        if !path.is_file() {
            return Err(format!("compiler '{name}' (common.args[0]) does not exist"));
        }
        if !is_executable(&path) {
            return Err(format!("compiler '{name}' (common.args[0]) is not executable"));
        }
        return Ok(path);
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file() && is_executable(candidate))
        .ok_or_else(|| format!("compiler '{name}' (common.args[0]) not found on PATH"))
}

fn is_executable(path: &Path) -> bool {
    path.metadata().map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// Job indices in start order: largest module (`inputs[0]`) first, file order among equals.
pub fn schedule(jobs: &[Job]) -> Vec<usize> {
    let sizes: Vec<u64> = jobs.iter().map(|j| std::fs::metadata(j.module()).map(|m| m.len()).unwrap_or(0)).collect();
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    order
}

/// A started job.
struct Running {
    id: usize,
    child: Child,
    started: Instant,
    /// Everything the job wrote to stdout and stderr so far.
    captured: Arc<Mutex<Vec<u8>>>,
    /// The reader thread saw the end of the pipe.
    reader_done: bool,
    /// Exit status (or why it could not be had) and when it was seen.
    exit: Option<(Result<ExitStatus, String>, Instant)>,
}

/// Runs every job of `file` with `compiler`; never returns early on a failed job, so that all
/// failures can be reported at once.
pub fn run(file: &JobFile, compiler: &Path, opts: &Options, progress: &mut Progress, signals: &Signals) -> Outcome {
    let begin = Instant::now();
    let mut queue: VecDeque<usize> = schedule(&file.jobs).into();
    let mut running: Vec<Running> = Vec::new();
    let mut failures: Vec<(usize, Failure)> = Vec::new();
    let mut max_parallel = 0;
    let (done_tx, done_rx) = mpsc::channel::<usize>();

    loop {
        if let Some(signal) = signals.received() {
            return interrupt(file, running, progress, signal);
        }
        while running.len() < opts.parallelism.max(1) {
            let Some(id) = queue.pop_front() else { break };
            let job = &file.jobs[id];
            if opts.verbose {
                let argv = file.common_args.iter().chain(&job.args);
                let line = argv.map(|a| quote(a)).collect::<Vec<_>>().join(" ");
                progress.message(&format!("{}: running: {line}\n", progress.name()));
            }
            match start(id, job, compiler, &file.common_args, done_tx.clone()) {
                Ok(r) => {
                    progress.started(id, job.module());
                    running.push(r);
                    max_parallel = max_parallel.max(running.len());
                }
                Err(e) => {
                    let reason = format!("cannot run {}: {e}", compiler.display());
                    report(progress, job, b"", Some(&reason));
                    progress.finished(id, job.output(), false, Duration::ZERO);
                    failures.push((id, failure(job, reason)));
                }
            }
        }
        if running.is_empty() {
            break;
        }

        // Sleep until a job's pipe closes (usually: it exited) or the poll interval passes. A job
        // whose pipe closed but that was not reapable yet (it is exiting) is looked at again
        // after a millisecond, not a whole interval: every job's end is on the link's path.
        let exiting = running.iter().any(|r| r.reader_done && r.exit.is_none());
        let mut closed: Vec<usize> = done_rx.recv_timeout(if exiting { EXITING_POLL } else { POLL }).into_iter().collect();
        closed.extend(done_rx.try_iter());
        // Ctrl-C reaches the jobs too (same process group): their deaths are not job failures.
        if let Some(signal) = signals.received() {
            return interrupt(file, running, progress, signal);
        }
        let now = Instant::now();
        for r in running.iter_mut() {
            r.reader_done |= closed.contains(&r.id);
            if r.exit.is_none() {
                match r.child.try_wait() {
                    Ok(Some(status)) => r.exit = Some((Ok(status), now)),
                    Ok(None) => {}
                    Err(e) => {
                        let _ = r.child.kill();
                        r.exit = Some((Err(format!("cannot wait for the compiler: {e}")), now));
                    }
                }
            }
        }
        let mut i = 0;
        while i < running.len() {
            let complete = match &running[i].exit {
                Some((_, at)) => running[i].reader_done || now.duration_since(*at) > OUTPUT_GRACE,
                None => false,
            };
            if !complete {
                i += 1;
                continue;
            }
            let r = running.remove(i);
            let job = &file.jobs[r.id];
            let Some((status, exited_at)) = r.exit else { continue };
            let result = status.and_then(check_status).and_then(|()| check_output(Path::new(job.output())));
            if result.is_err() {
                remove_output(job);
            }
            let captured = std::mem::take(&mut *r.captured.lock().unwrap_or_else(|e| e.into_inner()));
            report(progress, job, &captured, result.as_ref().err());
            progress.finished(r.id, job.output(), result.is_ok(), exited_at.duration_since(r.started));
            if let Err(reason) = result {
                failures.push((r.id, failure(job, reason)));
            }
        }
    }

    failures.sort_by_key(|(id, _)| *id);
    Outcome::Finished { failures: failures.into_iter().map(|(_, f)| f).collect(), elapsed: begin.elapsed(), max_parallel }
}

/// Starts job `id`: `compiler common_args[1..] job.args`, its stdout and stderr into one pipe.
fn start(id: usize, job: &Job, compiler: &Path, common_args: &[String], done: mpsc::Sender<usize>) -> io::Result<Running> {
    let (mut reader, writer) = io::pipe()?;
    let mut cmd = Command::new(compiler);
    cmd.arg0(&common_args[0]).args(&common_args[1..]).args(&job.args).stdin(Stdio::null()).stdout(writer.try_clone()?).stderr(writer);
    let child = cmd.spawn();
    // The command holds our copies of the pipe's write end; without dropping them the reader
    // would never see the end of the output.
    drop(cmd);
    let mut child = child?;

    let captured = Arc::new(Mutex::new(Vec::new()));
    let sink = captured.clone();
    let spawned = std::thread::Builder::new().name(format!("job-{id}-output")).spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => sink.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done.send(id);
    });
    if let Err(e) = spawned {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok(Running { id, child, started: Instant::now(), captured, reader_done: false, exit: None })
}

/// Prints a job's captured output under a header naming the job, then why it failed, if it did.
fn report(progress: &mut Progress, job: &Job, captured: &[u8], error: Option<&String>) {
    let name = format!("{} -> {}", job.module(), job.output());
    let mut block = String::new();
    if !captured.is_empty() {
        block.push_str(&format!("{}: output of {name}:\n", progress.name()));
        block.push_str(&String::from_utf8_lossy(captured));
        if !block.ends_with('\n') {
            block.push('\n');
        }
    }
    if let Some(reason) = error {
        block.push_str(&format!("{}: error: {name} failed: {reason}\n", progress.name()));
    }
    if !block.is_empty() {
        progress.message(&block);
    }
}

fn failure(job: &Job, reason: String) -> Failure {
    Failure { module: job.module().to_string(), output: job.output().to_string(), reason }
}

fn check_status(status: ExitStatus) -> Result<(), String> {
    if status.success() {
        Ok(())
    } else if let Some(code) = status.code() {
        Err(format!("compiler exited with code {code}"))
    } else if let Some(sig) = status.signal() {
        Err(format!("compiler killed by signal {sig}{}", signal_name(sig)))
    } else {
        Err(format!("compiler failed ({status})"))
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        3 => " (SIGQUIT)",
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// The job exited 0: its output must be there, non-empty, and an object file.
pub fn check_output(path: &Path) -> Result<(), String> {
    let shown = path.display();
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(format!("compiler exited 0 but did not write {shown}")),
        Err(e) => return Err(format!("cannot open {shown}: {e}")),
    };
    let mut head = Vec::with_capacity(20);
    if let Err(e) = file.by_ref().take(20).read_to_end(&mut head) {
        return Err(format!("cannot read {shown}: {e}"));
    }
    check_object_bytes(&head, &shown.to_string())
}

/// The first bytes (or all) of a job's output, named `shown` in messages: non-empty and an ELF or
/// COFF object. Shared with distributors that receive outputs over the network.
pub fn check_object_bytes(head: &[u8], shown: &str) -> Result<(), String> {
    if head.is_empty() {
        return Err(format!("compiler exited 0 but wrote an empty {shown}"));
    }
    if !is_object(&head[..head.len().min(20)]) {
        let hex = head.iter().take(4).map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
        return Err(format!("{shown} is not an ELF or COFF object (starts with {hex})"));
    }
    Ok(())
}

/// Whether `head` (the first bytes of a file) starts an ELF or COFF object.
pub fn is_object(head: &[u8]) -> bool {
    const ELF: &[u8] = b"\x7fELF";
    // COFF machine types an LLVM backend emits: x86-64, i386, ARM64, ARMv7 Thumb.
    const COFF_MACHINES: [u16; 4] = [0x8664, 0x014c, 0xaa64, 0x01c4];
    if head.starts_with(ELF) {
        return true;
    }
    if head.len() < 20 {
        return false; // shorter than a COFF file header
    }
    let machine = u16::from_le_bytes([head[0], head[1]]);
    // An anonymous object (bigobj, import object): Sig1 = 0, Sig2 = 0xffff.
    let anonymous = head[..4] == [0, 0, 0xff, 0xff];
    anonymous || COFF_MACHINES.contains(&machine)
}

fn remove_output(job: &Job) {
    // A missing file is fine; any other failure leaves a bad object the linker will reject.
    let _ = std::fs::remove_file(job.output());
}

/// Stops every running job and removes the outputs they may have half-written.
fn interrupt(file: &JobFile, mut running: Vec<Running>, progress: &mut Progress, signal: i32) -> Outcome {
    for r in running.iter_mut() {
        let _ = r.child.kill();
    }
    for r in running.iter_mut() {
        let _ = r.child.wait();
        remove_output(&file.jobs[r.id]);
    }
    progress.finish();
    Outcome::Interrupted { signal, killed: running.len() }
}

/// Quotes an argument for display so that the command line can be pasted into a shell.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=+./,:@%".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(module: &str) -> Job {
        Job { args: vec![], inputs: vec![module.into(), "shard".into()], outputs: vec!["o".into()] }
    }

    #[test]
    fn recognises_objects() {
        assert!(is_object(b"\x7fELF\x02\x01\x01"));
        let mut coff = vec![0x64, 0x86];
        coff.resize(20, 0);
        assert!(is_object(&coff));
        let mut bigobj = vec![0, 0, 0xff, 0xff, 2, 0, 0x64, 0x86];
        bigobj.resize(20, 0);
        assert!(is_object(&bigobj));
        assert!(!is_object(b"\x64\x86"));
        assert!(!is_object(b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00\x62\x0c\x30\x24\x4a\x59\xbe\x66"));
        assert!(!is_object(b"!<arch>\n"));
        assert!(!is_object(b""));
    }

    #[test]
    fn largest_module_first() {
        let dir = std::env::temp_dir().join(format!("dtld-distribute-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = |n: &str| dir.join(n).to_string_lossy().into_owned();
        std::fs::write(path("small"), [0u8; 10]).unwrap();
        std::fs::write(path("big"), [0u8; 1000]).unwrap();
        std::fs::write(path("mid"), [0u8; 100]).unwrap();
        std::fs::write(path("mid2"), [0u8; 100]).unwrap();
        let jobs = [job(&path("small")), job(&path("mid")), job(&path("missing")), job(&path("big")), job(&path("mid2"))];
        assert_eq!(schedule(&jobs), [3, 1, 4, 0, 2]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn compiler_lookup() {
        assert!(resolve_compiler("").unwrap_err().contains("pass --thinlto-remote-compiler="));
        assert_eq!(resolve_compiler("sh").unwrap().file_name().unwrap(), "sh");
        assert!(resolve_compiler("no-such-compiler-xyz").unwrap_err().contains("not found on PATH"));
        assert!(resolve_compiler("/no/such/clang").unwrap_err().contains("does not exist"));
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("-fthinlto-index=a.bc"), "-fthinlto-index=a.bc");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }
}

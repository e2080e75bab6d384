//! Why this exists: what dtld promises when things go wrong around a link, not inside it
//! (docs/reliability.md), checked on the real binary:
//!
//! * output integrity: a full disk (a 300 KiB tmpfs; needs root to mount, else the trial is
//!   ignored) and SIGKILL at many moments of a 64 MiB link leave the previous output
//!   byte-identical and no temporaries; links racing to one output leave exactly one link's
//!   result; an input that is also the output (`-o a.o a.o`, `-r`, `-Map=b.o`) is read whole
//!   before it is replaced; the output of a forked link (32 MiB and more, written through a
//!   shared map) can be executed the moment the linker returns; the page cache of the output
//!   being replaced is dropped when it is clean (and kept when it is not), its bytes unchanged;
//! * resource limits: decompression bombs (a lying header, a real 256 MiB zlib bomb),
//!   absurd section and symbol counts (claimed, and real: 100,000 sections, past SHN_XINDEX, linked and
//!   combined by `-r`, 300,000 symbols),
//!   linker scripts that name themselves or fan out, response files that are endless
//!   (`@/dev/zero`), fan out or name themselves: each a clean `dtld: error:`, exit 1, peak RSS
//!   under 1 GiB measured by /usr/bin/time -v (the legitimate big inputs link, also under
//!   1 GiB);
//!
//! The fuzzers' corpora and findings are replayed by the dtld crate's own unit test
//! (`fuzz::tests::replay`, src/fuzz.rs).
//!
//! Knobs: `DTLD` (linker under test), `DTLD_HARNESS_KEEP=1` (keep trial directories).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dtld_tests::{find_dtld, fresh_dir, lock_target_subdir, run_tool, run_tool_ok, run_with_timeout, target_dir, CLANG};
use libtest_mimic::{Arguments, Failed, Trial};

const GIB: u64 = 1 << 30;

struct Ctx {
    dtld: PathBuf,
    root: PathBuf,
    keep: bool,
}

type TrialFn = fn(&Ctx, &Path) -> Result<(), String>;

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("reliability-tests", "reliability test");
    let ctx = find_dtld().map(|dtld| {
        Arc::new(Ctx { dtld, root: target_dir().join("reliability-tests"), keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0") })
    });
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    let mut trials = Vec::new();
    let mut add = |name: &str, needs_root: bool, f: TrialFn| {
        let ctx = ctx.clone();
        let owned = name.to_string();
        trials.push(
            Trial::test(name, move || {
                let ctx = ctx.map_err(Failed::from)?;
                let dir = ctx.root.join(owned.replace('/', "-"));
                fresh_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
                let r = f(&ctx, &dir);
                if r.is_ok() && !ctx.keep {
                    let _ = fs::remove_dir_all(&dir);
                }
                r.map_err(|e| Failed::from(format!("{e}\ntrial directory: {}", dir.display())))
            })
            .with_ignored_flag(needs_root && !root_user),
        );
    };
    add("output/enospc-keeps-old-output", true, enospc);
    add("output/sigkill-keeps-old-output", false, sigkill);
    add("output/concurrent-links-one-result", false, concurrent);
    add("output/input-is-output", false, input_is_output);
    add("output/forked-finish", false, forked_finish);
    add("output/replaced-output-page-cache", false, replaced_output_cache);
    add("limits/zlib-claimed-size", false, zlib_claim);
    add("limits/zlib-bomb", false, zlib_bomb);
    add("limits/section-and-symbol-counts-claimed", false, counts_claimed);
    add("limits/section-and-symbol-counts-real", false, counts_real);
    add("limits/linker-script-recursion", false, script_recursion);
    add("limits/response-files", false, response_files);
    libtest_mimic::run(&args, trials).exit();
}

// ---- helpers -------------------------------------------------------------------------------

fn write(p: &Path, data: impl AsRef<[u8]>) -> Result<(), String> {
    fs::write(p, data).map_err(|e| format!("write {}: {e}", p.display()))
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    fs::read(p).map_err(|e| format!("read {}: {e}", p.display()))
}

fn compile(dir: &Path, name: &str, src: &str, flags: &[&str]) -> Result<PathBuf, String> {
    let c = dir.join(format!("{name}.c"));
    write(&c, src)?;
    let o = dir.join(format!("{name}.o"));
    run_tool_ok(Command::new(CLANG).arg("-c").args(flags).arg(&c).arg("-o").arg(&o))?;
    Ok(o)
}

fn assemble(dir: &Path, name: &str, src: &str) -> Result<PathBuf, String> {
    let s = dir.join(format!("{name}.s"));
    write(&s, src)?;
    let o = dir.join(format!("{name}.o"));
    run_tool_ok(Command::new(CLANG).arg("-c").arg(&s).arg("-o").arg(&o))?;
    Ok(o)
}

/// `dtld <args>` in `dir`.
fn dtld(ctx: &Ctx, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(&ctx.dtld);
    c.current_dir(dir).args(args);
    c
}

/// What a run under `/usr/bin/time -v` did, with its peak RSS.
struct Measured {
    status: String,
    stderr: String,
    rss_kib: u64,
}

fn measured(ctx: &Ctx, dir: &Path, args: &[&str]) -> Result<Measured, String> {
    let mut c = Command::new("/usr/bin/time");
    // In one process: a successful link otherwise finishes in a forked child that /usr/bin/time
    // does not wait for (detach.rs), and the peak RSS would be the parent's.
    c.current_dir(dir).env("DTLD_NO_FORK", "1").arg("-v").arg(&ctx.dtld).args(args);
    let o = run_with_timeout(&mut c, &[], Duration::from_secs(300)).map_err(|e| format!("cannot run /usr/bin/time (package `time`): {e}"))?;
    let text = o.stderr_text();
    let rss_kib = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes): "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no RSS in /usr/bin/time output:\n{text}"))?;
    // time -v reports the child's exit through its own status.
    let status = match text.lines().find_map(|l| l.trim().strip_prefix("Exit status: ")) {
        Some(code) => format!("exit {}", code.trim()),
        None => o.status_text(),
    };
    let status = if text.contains("Command terminated by signal") { format!("signal ({})", o.status_text()) } else { status };
    let stderr = text.lines().take_while(|l| !l.starts_with("\tCommand being timed")).collect::<Vec<_>>().join("\n");
    Ok(Measured { status, stderr, rss_kib })
}

/// A resource-limit case: exit 1, a `dtld: error:` line containing `want`, no panic, peak
/// RSS under 1 GiB. Prints the measurement (the docs quote these lines).
fn expect_clean_error(ctx: &Ctx, dir: &Path, what: &str, args: &[&str], want: &str) -> Result<(), String> {
    let m = measured(ctx, dir, args)?;
    println!("limits: {what}: {}, peak RSS {} MiB", m.status, m.rss_kib / 1024);
    let mut problems = Vec::new();
    if m.status != "exit 1" {
        problems.push(format!("{}, expected exit 1", m.status));
    }
    if !m.stderr.lines().any(|l| l.starts_with("dtld: error: ") && l.contains(want)) {
        problems.push(format!("no `dtld: error:` line containing `{want}`"));
    }
    if m.stderr.contains("panicked") || m.stderr.contains("internal linker error") {
        problems.push("a panic".into());
    }
    if m.rss_kib * 1024 >= GIB {
        problems.push(format!("peak RSS {} MiB, the limit is 1024 MiB", m.rss_kib / 1024));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: {}\nstderr:\n{}", problems.join("; "), m.stderr))
    }
}

/// The names in `dir` other than `allowed`.
fn extra_entries(dir: &Path, allowed: &[&str]) -> Result<Vec<String>, String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map_err(|e| format!("read_dir {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect();
    v.sort();
    Ok(v)
}

const MAIN_C: &str = "extern char big[]; int main(void) { return big[1] - 2; }\n";

/// An object with an initialized `big` of `size` bytes (an assembler `.zero`, so it is quick
/// to build whatever the size).
fn big_object(dir: &Path, name: &str, size: usize, fill: u8) -> Result<PathBuf, String> {
    assemble(dir, name, &format!(".data\n.globl big\nbig:\n.byte 1, {fill}\n.fill {}, 1, {fill}\n", size - 2))
}

// ---- output integrity ----------------------------------------------------------------------

struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn enospc(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let small = big_object(dir, "small", 1000, 2)?;
    let large = big_object(dir, "large", 400_000, 2)?;
    let main = compile(dir, "main", MAIN_C, &["-O1"])?;
    let fs_dir = dir.join("tmpfs");
    fs::create_dir_all(&fs_dir).map_err(|e| e.to_string())?;
    run_tool_ok(Command::new("mount").args(["-t", "tmpfs", "-o", "size=300k", "tmpfs"]).arg(&fs_dir))?;
    let _m = Mount(fs_dir.clone());
    let out = fs_dir.join("prog");
    let out_s = out.to_string_lossy().into_owned();
    let (main_s, small_s, large_s) = (main.to_string_lossy().into_owned(), small.to_string_lossy().into_owned(), large.to_string_lossy().into_owned());
    run_tool_ok(&mut dtld(ctx, dir, &["-e", "main", &main_s, &small_s, "-o", &out_s]))?;
    let before = read(&out)?;
    let mut problems = Vec::new();
    let o = run_tool(&mut dtld(ctx, dir, &["-e", "main", &main_s, &large_s, "-o", &out_s]))?;
    let stderr = o.stderr_text();
    println!("output: ENOSPC: {}: {}", o.status_text(), stderr.lines().next().unwrap_or(""));
    if o.status_text() != "exit 1" {
        problems.push(format!("{}, expected exit 1", o.status_text()));
    }
    if !stderr.lines().any(|l| l.starts_with("dtld: error: ") && l.contains("No space left on device")) {
        problems.push(format!("no `dtld: error: ... No space left on device` line:\n{stderr}"));
    }
    if read(&out)? != before {
        problems.push("the previous output changed".into());
    }
    let extra = extra_entries(&fs_dir, &["prog"])?;
    if !extra.is_empty() {
        problems.push(format!("left in the output directory: {extra:?}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// A link finishes in a forked child that releases the caller (detach.rs): the caller sees the
/// link's exit status and messages through its pipes, the output complete when it exits and the
/// same bytes as `--no-fork`'s; the link's memory is the child's (the process the caller waited
/// for is small), so the fork really happened; `--no-fork` and DTLD_NO_FORK=1 keep one process.
fn forked_finish(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let big = big_object(dir, "big", 32 << 20, 2)?;
    let main = compile(dir, "main", MAIN_C, &["-O1"])?;
    let (main, big) = (main.to_string_lossy().into_owned(), big.to_string_lossy().into_owned());
    let mut problems = Vec::new();
    // A failing link: exit 1 and lld's message, through the pipes, nothing written.
    let o = run_tool(&mut dtld(ctx, dir, &["-e", "main", &main, "-lno-such-library", "-o", "bad"]))?;
    if o.status.and_then(|s| s.code()) != Some(1) || !o.stderr_text().contains("dtld: error: unable to find library -lno-such-library") {
        problems.push(format!("failing link: {}, stderr {:?}", o.status_text(), o.stderr_text()));
    }
    if dir.join("bad").exists() {
        problems.push("the failing link wrote an output".into());
    }
    // The same link forked, in one process, and with the environment knob: the same bytes,
    // complete the moment the waited-for process has exited.
    let mut outputs = Vec::new();
    for (name, extra, env) in [("forked", None, None), ("one", Some("--no-fork"), None), ("env", None, Some("1"))] {
        let mut c = Command::new("/usr/bin/time");
        c.current_dir(dir).arg("-v").arg(&ctx.dtld).args(["-e", "main", &main, &big, "-o", name]).args(extra);
        if let Some(v) = env {
            c.env("DTLD_NO_FORK", v);
        }
        let o = run_with_timeout(&mut c, &[], Duration::from_secs(300)).map_err(|e| format!("cannot run /usr/bin/time: {e}"))?;
        let text = o.stderr_text();
        if !text.contains("Exit status: 0") {
            problems.push(format!("{name}: the link failed:\n{text}"));
            continue;
        }
        // The output can be executed the moment the linker returns: nothing (such as a shared
        // map of the output left to the forked link's exit) still has it open for writing.
        // (`-e main` returns into nothing, so how it ends does not matter here, only the exec.)
        if let Err(e) = Command::new(dir.join(name)).stdout(Stdio::null()).stderr(Stdio::null()).status() {
            if e.raw_os_error() == Some(libc::ETXTBSY) {
                problems.push(format!("{name}: the output could not be executed right after the link: {e}"));
            }
        }
        let rss: u64 = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes): "))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no RSS in /usr/bin/time output:\n{text}"))?;
        outputs.push((name, read(&dir.join(name))?, rss));
    }
    // SIGKILL to the process the caller started ends the link in the child too: here the link
    // blocks opening an input that is a FIFO nobody writes.
    let fifo = dir.join("fifo.o");
    let cpath = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: mkfifo with a NUL-terminated path.
    if unsafe { libc::mkfifo(cpath.as_ptr(), 0o600) } != 0 {
        return Err(format!("mkfifo {}: {}", fifo.display(), std::io::Error::last_os_error()));
    }
    let mut child = dtld(ctx, dir, &["-e", "main", &main, "fifo.o", "-o", "blocked"]).spawn().map_err(|e| e.to_string())?;
    let start = Instant::now();
    while processes_in(dir).len() < 2 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    let start = Instant::now();
    while !processes_in(dir).is_empty() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let left = processes_in(dir);
    if !left.is_empty() {
        problems.push(format!("the link's processes {left:?} outlived a SIGKILL of the linker by 5 s"));
        for pid in left {
            // SAFETY: kill(2) of a process running in this trial's directory.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
    if let [(_, forked, forked_rss), (_, one, one_rss), (_, env, env_rss)] = &outputs[..] {
        if forked != one || env != one {
            problems.push("the forked link's output differs from the one-process link's".into());
        }
        // The 32 MiB section passes through the link's memory (the output map), never the
        // waiting parent's.
        if *forked_rss * 4 > *one_rss || *forked_rss * 4 > *env_rss {
            problems.push(format!(
                "peak RSS of the waited-for process: {forked_rss} KiB forked, {one_rss} KiB with --no-fork, {env_rss} KiB with DTLD_NO_FORK=1: the link did not run in a child"
            ));
        }
        println!("forked finish: waited-for process {} MiB, one process {} MiB", forked_rss / 1024, one_rss / 1024);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The processes whose working directory is `dir` (this trial's links run there, nothing else).
fn processes_in(dir: &Path) -> Vec<u32> {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir))
        .collect()
}

/// SIGKILL at 24 moments spread over a 64 MiB link (its fastest time): each time the output is either the old
/// one or the complete new one, and nothing else is in the directory. At least a third of
/// the kills must land while the link ran (else the trial says nothing).
fn sigkill(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let old_obj = big_object(dir, "old", 4096, 3)?;
    let new_obj = big_object(dir, "new", 64 << 20, 2)?;
    let main = compile(dir, "main", MAIN_C, &["-O1"])?;
    let work = dir.join("out");
    fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let args = |obj: &Path| -> Vec<String> {
        vec!["-e".into(), "main".into(), main.to_string_lossy().into(), obj.to_string_lossy().into(), "-o".into(), "prog".into()]
    };
    let link = |obj: &Path| {
        let mut c = Command::new(&ctx.dtld);
        c.current_dir(&work).args(args(obj));
        c
    };
    run_tool_ok(&mut link(&new_obj))?;
    let new_bytes = read(&work.join("prog"))?;
    // The fastest of five links, and afterwards of every round the link won: one sample on a
    // busy machine (or with a cold page cache) can be several times the usual time, and kills
    // spread over it would mostly land after the link.
    let mut took = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        run_tool_ok(&mut link(&new_obj))?;
        took = took.min(t.elapsed());
    }
    run_tool_ok(&mut link(&old_obj))?;
    let old_bytes = read(&work.join("prog"))?;
    let mut killed_mid = 0;
    let rounds = 24;
    // Spread over the whole link, then 24 more around its end, where the finished file is put
    // in place (a kill there must not leave the temporary's name behind).
    for i in 0..rounds * 2 {
        let delay = if i < rounds { took.mul_f64(i as f64 / (rounds as f64 * 0.8)) } else { took.mul_f64(0.8 + 0.4 * (i - rounds) as f64 / rounds as f64) };
        let started = Instant::now();
        let mut child = link(&new_obj).stderr(std::process::Stdio::null()).spawn().map_err(|e| e.to_string())?;
        while started.elapsed() < delay {
            if child.try_wait().map_err(|e| e.to_string())?.is_some() {
                took = took.min(started.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let _ = child.kill();
        let status = child.wait().map_err(|e| e.to_string())?;
        // The link runs in a forked child (detach.rs): a SIGKILL to the process the caller
        // started must end it too, before it could still replace the output.
        let start = Instant::now();
        while !processes_in(&work).is_empty() {
            if start.elapsed() > Duration::from_secs(2) {
                return Err(format!("round {i}: linker processes still running 2 s after the SIGKILL: {:?}", processes_in(&work)));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let now = read(&work.join("prog"))?;
        if now == old_bytes {
            if status.success() {
                return Err(format!("round {i}: the link succeeded but the output is the old one"));
            }
            if i < rounds {
                killed_mid += 1;
            }
        } else if now != new_bytes {
            return Err(format!("round {i} (kill after {delay:?}): the output is neither the old nor the new one ({} bytes)", now.len()));
        } else {
            // Completed: back to the old output for the next round.
            run_tool_ok(&mut link(&old_obj))?;
        }
        let extra = extra_entries(&work, &["prog"])?;
        if !extra.is_empty() {
            return Err(format!("round {i} (kill after {delay:?}): left behind: {extra:?}"));
        }
    }
    println!("output: SIGKILL: {killed_mid} of {rounds} kills landed during a {took:?} link; old output intact each time");
    if killed_mid < rounds / 3 {
        return Err(format!("only {killed_mid} of {rounds} kills landed during the link (the trial is not testing anything)"));
    }
    Ok(())
}

/// Eight links of two different programs race to one output, five times: the output is each
/// time exactly one of the two programs, and no temporary is left.
fn concurrent(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let a = big_object(dir, "a", 1 << 20, 2)?;
    let b = big_object(dir, "b", 2 << 20, 2)?;
    let main = compile(dir, "main", MAIN_C, &["-O1"])?;
    let work = dir.join("out");
    fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let link = |obj: &Path, out: &str| {
        let mut c = Command::new(&ctx.dtld);
        c.current_dir(&work).args(["-e", "main"]).arg(&main).arg(obj).args(["-o", out]);
        c
    };
    run_tool_ok(&mut link(&a, "ref-a"))?;
    run_tool_ok(&mut link(&b, "ref-b"))?;
    let (ra, rb) = (read(&work.join("ref-a"))?, read(&work.join("ref-b"))?);
    for round in 0..5 {
        let children: Vec<_> = (0..8).map(|i| link(if i % 2 == 0 { &a } else { &b }, "prog").spawn()).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
        for mut c in children {
            let s = c.wait().map_err(|e| e.to_string())?;
            if !s.success() {
                return Err(format!("round {round}: a racing link failed: {s}"));
            }
        }
        let now = read(&work.join("prog"))?;
        if now != ra && now != rb {
            return Err(format!("round {round}: the output is neither program ({} bytes)", now.len()));
        }
        let extra = extra_entries(&work, &["prog", "ref-a", "ref-b"])?;
        if !extra.is_empty() {
            return Err(format!("round {round}: left behind: {extra:?}"));
        }
    }
    Ok(())
}

/// An input named as the output (or as the map file) is read whole before it is replaced:
/// the result equals the same link writing elsewhere.
fn input_is_output(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let a = compile(dir, "a", "int helper(int x) { return x * 3; }\n", &["-O1", "-g"])?;
    let b = compile(dir, "b", "int helper(int); int main(void) { return helper(2) - 6; }\n", &["-O1", "-g"])?;
    let (a_s, b_s) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
    let mut problems = Vec::new();
    // -r over its first input.
    run_tool_ok(&mut dtld(ctx, dir, &["-r", &a_s, &b_s, "-o", "ref.o"]))?;
    let a_copy = read(&a)?;
    run_tool_ok(&mut dtld(ctx, dir, &["-r", &a_s, &b_s, "-o", &a_s]))?;
    if read(&a)? != read(&dir.join("ref.o"))? {
        problems.push("-r -o a.o a.o b.o differs from -o ref.o".to_string());
    }
    write(&a, &a_copy)?;
    // An executable over an input, with -Map naming the other input.
    run_tool_ok(&mut dtld(ctx, dir, &["-e", "main", &a_s, &b_s, "-o", "ref"]))?;
    run_tool_ok(&mut dtld(ctx, dir, &["-e", "main", &a_s, &b_s, "-o", "ref2", "-Map", "ref2.map"]))?;
    let b_copy = read(&b)?;
    run_tool_ok(&mut dtld(ctx, dir, &["-e", "main", &a_s, &b_s, "-o", &a_s, "-Map", &b_s]))?;
    if read(&a)? != read(&dir.join("ref"))? {
        problems.push("-o a.o a.o b.o differs from -o ref".to_string());
    }
    if read(&b)? != read(&dir.join("ref2.map"))? {
        problems.push("-Map=b.o (an input) differs from the map of the same link".to_string());
    }
    write(&a, &a_copy)?;
    write(&b, &b_copy)?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// How many of `p`'s pages are in the page cache (`mincore` over a read-only map; this process
/// owns the file, so the kernel answers for it).
fn resident_pages(p: &Path) -> Result<usize, String> {
    use std::os::fd::AsRawFd;
    let f = fs::File::open(p).map_err(|e| format!("open {}: {e}", p.display()))?;
    let len = f.metadata().map_err(|e| e.to_string())?.len() as usize;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    // SAFETY: a read-only shared map of a file we opened, unmapped below; never dereferenced.
    let map = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
    if map == libc::MAP_FAILED {
        return Err(format!("mmap {}: {}", p.display(), std::io::Error::last_os_error()));
    }
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `vec` has one byte per page of the mapping; `map` is the mapping of `len` bytes.
    let r = unsafe { libc::mincore(map, len, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(map, len) };
    if r != 0 {
        return Err(format!("mincore {}: {err}", p.display()));
    }
    Ok(vec.iter().filter(|&&b| b & 1 != 0).count())
}

/// The detail of the `--time-trace` event that says what became of the replaced output's page
/// cache, if the trace has one.
fn recycle_event(trace: &Path) -> Result<Option<String>, String> {
    let v: serde_json::Value = serde_json::from_slice(&read(trace)?).map_err(|e| format!("{}: {e}", trace.display()))?;
    Ok(v["traceEvents"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == "Drop the replaced output's page cache")
        .and_then(|e| e["args"]["detail"].as_str().map(str::to_string)))
}

/// The link drops the page cache of the output it replaces when every page of it is clean (its
/// memory then serves the link: outfile.rs), and leaves a file with dirty pages alone. Either
/// way the old file (seen here through a second hard link) keeps its bytes, and the new output
/// is what a link to a fresh name writes.
fn replaced_output_cache(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    // About 1 MiB of initialised data, so that the output has a few hundred pages.
    let a = compile(dir, "a", "const char big[1 << 20] = {1, 2, 3};\nint main(int argc, char **argv) { (void)argv; return big[argc]; }\n", &["-O1"])?;
    let a_s = a.to_string_lossy().into_owned();
    let link = |out: &str, extra: &[&str]| -> Result<(), String> {
        let mut args = vec!["-e", "main", a_s.as_str(), "-o", out];
        args.extend_from_slice(extra);
        run_tool_ok(&mut dtld(ctx, dir, &args)).map(drop)
    };
    link("ref", &[])?;
    let reference = read(&dir.join("ref"))?;
    let mut problems = Vec::new();

    // Clean: the old output, written back (fsync), is dropped from the cache.
    link("out", &[])?;
    fs::hard_link(dir.join("out"), dir.join("keep")).map_err(|e| format!("ln out keep: {e}"))?;
    fs::File::open(dir.join("keep")).and_then(|f| f.sync_all()).map_err(|e| format!("fsync keep: {e}"))?;
    let before = read(&dir.join("keep"))?;
    let cached = resident_pages(&dir.join("keep"))?;
    link("out", &["--time-trace=clean.json", "--time-trace-granularity=0"])?;
    let what = recycle_event(&dir.join("clean.json"))?;
    let no_cachestat = what.as_deref().is_some_and(|w| w.contains("no cachestat"));
    match what.as_deref() {
        _ if no_cachestat => {}
        Some(w) if w.starts_with("dropped ") => {
            let left = resident_pages(&dir.join("keep"))?;
            if left != 0 {
                problems.push(format!("a clean replaced output: {w}, but {left} of its {cached} cached pages are still cached"));
            }
        }
        other => problems.push(format!("a clean replaced output: expected its page cache dropped, the trace says {other:?}")),
    }
    if read(&dir.join("keep"))? != before {
        problems.push("the replaced output (clean) changed: its other hard link differs".to_string());
    }
    if read(&dir.join("out"))? != reference {
        problems.push("the new output (over a clean one) differs from the same link to a fresh name".to_string());
    }

    // Dirty: an old output just written (not yet written back) keeps its cache. A `sync` by
    // anything else on the machine in between cleans it, so three tries.
    let mut dirty_ok = no_cachestat;
    let mut said = Vec::new();
    for k in 0..3 {
        let (out, keep) = (format!("dirty{k}"), format!("keep{k}"));
        write(&dir.join(&out), &before)?;
        fs::hard_link(dir.join(&out), dir.join(&keep)).map_err(|e| format!("ln {out} {keep}: {e}"))?;
        let trace = format!("dirty{k}.json");
        link(&out, &[&format!("--time-trace={trace}"), "--time-trace-granularity=0"])?;
        let what = recycle_event(&dir.join(&trace))?;
        if read(&dir.join(&keep))? != before {
            problems.push(format!("the replaced output (dirty, try {k}) changed: its other hard link differs"));
        }
        if read(&dir.join(&out))? != reference {
            problems.push(format!("the new output (over a dirty one, try {k}) differs from the same link to a fresh name"));
        }
        if what.as_deref().is_some_and(|w| w.starts_with("kept: ") && w.contains("not yet written back")) {
            dirty_ok = true;
            break;
        }
        said.push(format!("{what:?}"));
    }
    if !dirty_ok {
        problems.push(format!("a replaced output with dirty pages: expected its cache kept, the trace said {}", said.join(", ")));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

// ---- resource limits -----------------------------------------------------------------------

/// A real object with one zlib-compressed `.debug_junk` section of `size` zero bytes.
fn compressed_object(dir: &Path, size: usize) -> Result<PathBuf, String> {
    let base = compile(dir, "base", "int main(void) { return 0; }\n", &["-O1"])?;
    let raw = dir.join("junk.bin");
    write(&raw, vec![0u8; size])?;
    let plain = dir.join("plain.o");
    run_tool_ok(Command::new("llvm-objcopy-22").arg(format!("--add-section=.debug_junk={}", raw.display())).arg(&base).arg(&plain))?;
    let _ = fs::remove_file(&raw);
    let out = dir.join("bomb.o");
    run_tool_ok(Command::new("llvm-objcopy-22").arg("--compress-debug-sections=zlib").arg(&plain).arg(&out))?;
    let _ = fs::remove_file(&plain);
    Ok(out)
}

/// The byte offset of section `name`'s contents in an ELF64 file, and its header's offset.
fn section(elf: &[u8], name: &str) -> Option<(usize, usize)> {
    let rd16 = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let rd32 = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
    let rd64 = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
    let (shoff, shnum, shstrndx) = (rd64(0x28), rd16(0x3c), rd16(0x3e));
    let strtab = rd64(shoff + shstrndx * 64 + 0x18);
    (0..shnum).find_map(|i| {
        let h = shoff + i * 64;
        let n = strtab + rd32(h);
        let end = elf[n..].iter().position(|&b| b == 0)?;
        (&elf[n..n + end] == name.as_bytes()).then(|| (rd64(h + 0x18), h))
    })
}

fn zlib_claim(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let obj = compressed_object(dir, 1 << 20)?;
    let mut data = read(&obj)?;
    let (off, _) = section(&data, ".debug_junk").ok_or("no .debug_junk in the object")?;
    let mut results = Vec::new();
    for (claim, want) in [(3u64 << 30, "cannot come from"), (1u64 << 40, "too large")] {
        data[off + 8..off + 16].copy_from_slice(&claim.to_le_bytes());
        let p = dir.join(format!("claim-{claim}.o"));
        write(&p, &data)?;
        results.push(expect_clean_error(
            ctx,
            dir,
            &format!("a compressed section claiming {claim} bytes"),
            &["-e", "main", &p.to_string_lossy(), "-o", "prog"],
            want,
        ));
    }
    results.into_iter().collect()
}

fn zlib_bomb(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    // 256 MiB of zeros compress to about 256 KiB: a real bomb, honest about its size.
    let obj = compressed_object(dir, 256 << 20)?;
    let size = fs::metadata(&obj).map_err(|e| e.to_string())?.len();
    println!("limits: the zlib bomb object is {} KiB", size / 1024);
    expect_clean_error(ctx, dir, "a 256 MiB zlib bomb", &["-e", "main", &obj.to_string_lossy(), "-o", "prog"], "decompression bomb")?;
    // An honest 16 MiB compressed section still links.
    let ok = compressed_object(dir, 16 << 20)?;
    let m = measured(ctx, dir, &["-e", "main", &ok.to_string_lossy(), "-o", "prog"])?;
    println!("limits: a 16 MiB compressed section links: {}, peak RSS {} MiB", m.status, m.rss_kib / 1024);
    if m.status != "exit 0" {
        return Err(format!("a 16 MiB compressed debug section did not link: {}\n{}", m.status, m.stderr));
    }
    Ok(())
}

fn counts_claimed(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let obj = compile(dir, "base", "int g; int main(void) { return g; }\n", &["-O1"])?;
    let data = read(&obj)?;
    let mut results = Vec::new();
    // e_shnum = 65535 with the table where the file ends.
    let mut d = data.clone();
    d[0x3c..0x3e].copy_from_slice(&0xffffu16.to_le_bytes());
    let p = dir.join("shnum.o");
    write(&p, &d)?;
    results.push(expect_clean_error(ctx, dir, "e_shnum 65535 in a 1 KiB object", &["-e", "main", &p.to_string_lossy(), "-o", "prog"], "shnum.o"));
    // A symbol table claiming 2^40 bytes.
    let mut d = data.clone();
    let (_, h) = section(&d, ".symtab").ok_or("no .symtab")?;
    d[h + 0x20..h + 0x28].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let p = dir.join("symtab.o");
    write(&p, &d)?;
    results.push(expect_clean_error(ctx, dir, "a symbol table of 2^40 bytes", &["-e", "main", &p.to_string_lossy(), "-o", "prog"], "symtab.o"));
    // An archive member claiming 2^40 bytes.
    let ar = dir.join("libhuge.a");
    let mut a = b"!<arch>\n".to_vec();
    a.extend_from_slice(format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", "m.o/", 0, 0, 0, 644, 1u64 << 40).as_bytes());
    a.extend_from_slice(&data);
    write(&ar, &a)?;
    results.push(expect_clean_error(
        ctx,
        dir,
        "an archive member of 2^40 bytes",
        &["-e", "main", &obj.to_string_lossy(), &ar.to_string_lossy(), "-o", "prog"],
        "libhuge.a",
    ));
    results.into_iter().collect()
}

/// Big but honest inputs link within the same memory bound.
fn counts_real(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let mut s = String::from(".text\n.globl main\nmain:\n xor %eax, %eax\n ret\n");
    // Past 65,279 sections: extended section numbering (SHN_XINDEX symbols).
    for i in 0..100_000 {
        s.push_str(&format!(".section .text.f{i},\"ax\",@progbits\n.globl f{i}\nf{i}:\n ret\n"));
    }
    let sections = assemble(dir, "sections", &s)?;
    let mut s = String::from(".text\n.globl main\nmain:\n xor %eax, %eax\n ret\n.data\n");
    for i in 0..300_000 {
        s.push_str(&format!(".globl s{i}\ns{i}: .byte 1\n"));
    }
    let symbols = assemble(dir, "symbols", &s)?;
    let (sections, symbols) = (sections.to_string_lossy(), symbols.to_string_lossy());
    for (what, args) in [
        ("100,000 sections", vec!["-e", "main", &sections, "-o", "prog"]),
        ("100,000 sections, -r", vec!["-r", &sections, "-o", "r.o"]),
        ("300,000 symbols", vec!["-e", "main", &symbols, "-o", "prog"]),
    ] {
        let m = measured(ctx, dir, &args)?;
        println!("limits: an object with {what} links: {}, peak RSS {} MiB", m.status, m.rss_kib / 1024);
        if m.status != "exit 0" || m.rss_kib * 1024 >= GIB {
            return Err(format!("{what}: {}, peak RSS {} MiB\n{}", m.status, m.rss_kib / 1024, m.stderr));
        }
    }
    Ok(())
}

fn script_recursion(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let main = compile(dir, "main", "int main(void) { return 0; }\n", &["-O1"])?;
    let main_s = main.to_string_lossy().into_owned();
    let mut results = Vec::new();
    write(&dir.join("self.lds"), "INPUT(self.lds)\n")?;
    results.push(expect_clean_error(ctx, dir, "a linker script naming itself", &["-e", "main", &main_s, "self.lds", "-o", "prog"], "names itself"));
    write(&dir.join("ping.lds"), "GROUP(pong.lds)\n")?;
    write(&dir.join("pong.lds"), "INPUT(ping.lds)\n")?;
    results.push(expect_clean_error(ctx, dir, "two linker scripts naming each other", &["-e", "main", &main_s, "ping.lds", "-o", "prog"], "names itself"));
    // 30 levels, each naming the next twice: 2^30 reads without the budget.
    for i in 0..30 {
        write(&dir.join(format!("fan{i}.lds")), if i == 29 { "ENTRY(main)\n".to_string() } else { format!("INPUT(fan{n}.lds fan{n}.lds)\n", n = i + 1) })?;
    }
    results.push(expect_clean_error(
        ctx,
        dir,
        "linker scripts fanning out 2^30 times",
        &["-e", "main", &main_s, "fan0.lds", "-o", "prog"],
        "linker scripts read",
    ));
    write(&dir.join("inc.lds"), "INCLUDE inc.lds\n")?;
    results.push(expect_clean_error(ctx, dir, "a linker script INCLUDEing itself", &["-e", "main", &main_s, "-T", "inc.lds", "-o", "prog"], "inc.lds"));
    results.into_iter().collect()
}

fn response_files(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let mut results = Vec::new();
    results.push(expect_clean_error(ctx, dir, "an endless response file (@/dev/zero)", &["@/dev/zero"], "larger than"));
    // 1000 x 1000 x 40 words: 40 million arguments from 40 KiB of text.
    write(&dir.join("leaf.rsp"), "-L. ".repeat(40))?;
    write(&dir.join("mid.rsp"), "@leaf.rsp\n".repeat(1000))?;
    write(&dir.join("top.rsp"), "@mid.rsp\n".repeat(1000))?;
    results.push(expect_clean_error(ctx, dir, "response files fanning out to 40M words", &["@top.rsp"], "response file"));
    write(&dir.join("loop.rsp"), "-L. @loop.rsp\n")?;
    results.push(expect_clean_error(ctx, dir, "a response file naming itself", &["@loop.rsp"], "recursive expansion"));
    // A big honest one (200,000 words) is fine: it fails only for the missing inputs.
    write(&dir.join("big.rsp"), (0..200_000).map(|i| format!("missing{i}.o\n")).collect::<String>())?;
    let m = measured(ctx, dir, &["@big.rsp", "-o", "prog"])?;
    println!("limits: a 200,000-word response file: {}, peak RSS {} MiB", m.status, m.rss_kib / 1024);
    if !m.stderr.contains("cannot open missing0.o") || m.rss_kib * 1024 >= GIB {
        results.push(Err(format!("the 200,000-word response file: {}\n{}", m.status, m.stderr.lines().take(3).collect::<Vec<_>>().join("\n"))));
    }
    results.into_iter().collect()
}

//! Why this exists: `dtld-reapi` (reapi/) runs DTLTO backends as Actions on a REAPI engine, and
//! only a real engine shows that its Actions execute, that its cache keys are the same across
//! build directories, output names and process ids (the job files of dtld and ld.lld-22 name
//! their temporaries with the link's process id; dtld-reapi names every file inside an Action by
//! its content and renames the modules inside each summary shard to match), and that it fails
//! cleanly when the engine misbehaves. Each trial starts its
//! own buildbox-casd in local-execution mode (actions run by buildbox-run in a bubblewrap
//! sandbox) on a free 127.0.0.1 port with a fresh absolute cache directory, and kills it by PID
//! when the trial ends, also on failure (a guard). If casd, buildbox-run or bwrap is missing, every
//! trial FAILS and says how to install them (`scripts/buildbox.sh install`, Debian `bubblewrap`).
//!
//! Inputs (built once per run with clang-22 -flto=thin -O2): `main.o`, `util.o`, `cold.o`, the
//! regular archive `libpart.a` (member `part.o`) and the thin archive `lib/libthn.a` (member
//! `lib/thn.o`), plus the native object `nat.o`: five ThinLTO modules; main imports from util,
//! part and thn. Links go through `clang-22 -flto=thin -fthinlto-distributor=<dtld-reapi>` with
//! the engine given only by `DTLD_REAPI_ENDPOINT` (the env default), and the distributor's summary
//! line (`dtld-reapi: summary: jobs=.. cache_hits=.. executed=..`) is what the counts are read from.
//!
//! Trials:
//! * `link/dtld-vs-lld`: dtld through dtld-reapi (with `-Xthinlto-distributor=--platform=..`)
//!   and ld.lld-22 through the local dtld-distribute: same program output; 5 jobs executed on a
//!   fresh engine; nothing but the program is left; and the program is byte for byte the one dtld
//!   links through dtld-distribute (the backends compiled under content names, `m/<sha>.o`,
//!   make the same code as under the job file's names).
//! * `cache/cross-directory`: the link in tree A (`-o prog`), then in a copy of it at another,
//!   deeper path, with absolute input paths and another output (`-o bin/other`), by another
//!   process: the relink has 5/5 cache hits, no Execute, uploads nothing, and the programs are
//!   identical.
//! * `cache/cross-directory-sample-profile-above-cwd`: the same from a subdirectory with
//!   `-Wl,--lto-sample-profile=../prof/app.prof` and `-o ../out/prog`: the profile, a common
//!   input, keeps its path in the input root (which is then the parent of the working
//!   directory); 5/5 hits from the copy, then 0/5 once the profile's content changes.
//! * `cache/lld-cross-directory`: ld.lld-22 through dtld-reapi in tree A, then in the copy with
//!   another output name: 5/5 hits, no Execute, no upload, and both programs print the expected
//!   line. (lld orders a shard's modules by their paths, so its relinks hit when the inputs and
//!   the output directory are named alike relative to the working directory, as here; and with
//!   many regular-archive members its shards change with its process id, see docs/remote.md,
//!   which this program's one member was not seen to do in 200 links.)
//! * `faults/unreachable`, `faults/action-fails`, `faults/output-missing`,
//!   `faults/engine-killed`: exit 1, a `dtld: error:` line, the reason from dtld-reapi (the
//!   engine's status; the compiler's message and the job's module; the missing output), no output
//!   file and the directory exactly as before. `faults/unreachable-local-fallback`: with
//!   `--local-fallback` the link succeeds and the summary says `fell_back=5`.
//! * `usage/*`: unknown option and bad header exit 2; no endpoint is a usage error naming
//!   `DTLD_REAPI_ENDPOINT`.
//!
//! Environment: `DTLD`, `DTLD_DISTRIBUTOR` as in tests/dtlto; `DTLD_REAPI` (default
//! `<target>/release/dtld-reapi`); `DTLD_BUILDBOX_DIR` (default `~/.cache/dtld/buildbox-2.8.1`);
//! `DTLD_HARNESS_KEEP=1` keeps trial directories.

use std::collections::BTreeMap;
use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use dtld_tests::{
    changes, command_line, copy_tree, find_distributor, find_dtld, find_in_path, fresh_dir, run_tool, run_tool_ok, snapshot, target_dir, Linker, Outcome,
};
use libtest_mimic::{Arguments, Failed, Trial};

const CLANG: &str = "/usr/lib/llvm-22/bin/clang";
const LLVM_AR: &str = "/usr/lib/llvm-22/bin/llvm-ar";
const EXPECTED: &str = "util=30 cold=9 part=14 thn=40 nat=0\n";
const INPUTS: [&str; 6] = ["main.o", "util.o", "cold.o", "libpart.a", "lib/libthn.a", "nat.o"];

const SOURCES: [(&str, &str); 6] = [
    (
        "main.c",
        "#include <stdio.h>\nint util(int); int cold(int); int part(int); int thn(int); int nat(int);\n\
         int (*volatile cold_ptr)(int) = cold;\n\
         int main(void) { printf(\"util=%d cold=%d part=%d thn=%d nat=%d\\n\", util(3), cold_ptr(4), part(5), thn(8), nat(1)); return 0; }\n",
    ),
    ("util.c", "int util(int x) { return x * 10; }\n"),
    ("cold.c", "int cold(int x) { return x + 5; }\n"),
    ("partobj/part.c", "int util(int);\nint part(int x) { return util(x) / 5 + 4; }\n"),
    ("lib/thn.c", "int thn(int x) { return x * 5; }\n"),
    ("nat.c", "int nat(int x) { return x - 1; }\n"),
];

struct Context {
    dtld: PathBuf,
    reapi: PathBuf,
    distributor: Result<PathBuf, String>,
    /// The directory of buildbox-casd and buildbox-run, or why they cannot be used.
    buildbox: Result<PathBuf, String>,
    root: PathBuf,
    keep: bool,
    inputs: OnceLock<Result<PathBuf, String>>,
}

type TrialFn = fn(&Context, &Path) -> Result<(), String>;

fn main() {
    let args = Arguments::from_args();
    let ctx = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    let mut add = |name: &str, f: TrialFn| {
        let ctx = ctx.clone();
        let owned = name.to_string();
        trials.push(Trial::test(name, move || {
            let ctx = ctx.map_err(Failed::from)?;
            run_trial(&ctx, &owned, f).map_err(Failed::from)
        }));
    };
    add("link/dtld-vs-lld", dtld_vs_lld);
    add("cache/cross-directory", cross_directory);
    add("cache/cross-directory-sample-profile-above-cwd", cross_directory_profile);
    add("cache/lld-cross-directory", lld_cross_directory);
    add("faults/unreachable", |c, d| fault(c, d, Fault::Unreachable));
    add("faults/unreachable-local-fallback", |c, d| fault(c, d, Fault::UnreachableFallback));
    add("faults/action-fails", |c, d| fault(c, d, Fault::ActionFails));
    add("faults/output-missing", |c, d| fault(c, d, Fault::OutputMissing));
    add("faults/engine-killed", |c, d| fault(c, d, Fault::EngineKilled));
    add("usage/errors", usage);
    libtest_mimic::run(&args, trials).exit();
}

impl Context {
    fn new() -> Result<Context, String> {
        for tool in [CLANG, LLVM_AR] {
            if !Path::new(tool).is_file() {
                return Err(format!("{tool} is missing (install clang-22 / llvm-22)"));
            }
        }
        let reapi = match std::env::var_os("DTLD_REAPI") {
            Some(p) => PathBuf::from(p),
            None => target_dir().join("release/dtld-reapi"),
        };
        if !reapi.is_file() {
            return Err(format!("{} does not exist: build it with `cargo build --release --workspace --bins`", reapi.display()));
        }
        let dir = match std::env::var_os("DTLD_BUILDBOX_DIR") {
            Some(d) => PathBuf::from(d),
            None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/dtld/buildbox-2.8.1"),
        };
        let buildbox = if !dir.join("buildbox-casd").is_file() || !dir.join("buildbox-run").is_file() {
            Err(format!(
                "the REAPI engine is not installed: {0}/buildbox-casd and {0}/buildbox-run are missing; run `scripts/buildbox.sh install` \
                 (or scripts/setup.sh), or set DTLD_BUILDBOX_DIR",
                dir.display()
            ))
        } else if find_in_path("bwrap").is_none() {
            Err("bwrap is missing: buildbox-run needs it to execute actions (apt-get install bubblewrap, or scripts/setup.sh)".into())
        } else {
            Ok(dir)
        };
        Ok(Context {
            dtld: find_dtld()?,
            reapi,
            distributor: find_distributor(),
            buildbox,
            root: target_dir().join("reapi-tests"),
            keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            inputs: OnceLock::new(),
        })
    }

    fn inputs(&self) -> Result<&Path, String> {
        self.inputs.get_or_init(|| build_inputs(&self.root.join(".inputs"))).as_deref().map_err(|e| format!("building the inputs failed: {e}"))
    }
}

fn build_inputs(dir: &Path) -> Result<PathBuf, String> {
    fresh_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, text) in SOURCES {
        let p = dir.join(name);
        fs::create_dir_all(p.parent().expect("parent")).map_err(|e| e.to_string())?;
        fs::write(&p, text).map_err(|e| format!("write {}: {e}", p.display()))?;
    }
    for (name, _) in SOURCES {
        let obj = name.replace(".c", ".o");
        let mut cmd = Command::new(CLANG);
        cmd.current_dir(dir).args(["-c", "-O2"]);
        if name != "nat.c" {
            cmd.arg("-flto=thin");
        }
        run_tool_ok(cmd.arg(name).arg("-o").arg(&obj))?;
    }
    run_tool_ok(Command::new(LLVM_AR).current_dir(dir).args(["rcs", "libpart.a", "partobj/part.o"]))?;
    run_tool_ok(Command::new(LLVM_AR).current_dir(dir.join("lib")).args(["rcsT", "libthn.a", "thn.o"]))?;
    Ok(dir.to_path_buf())
}

fn run_trial(ctx: &Context, name: &str, f: TrialFn) -> Result<(), String> {
    let dir = ctx.root.join(name.replace('/', "-"));
    fresh_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    match f(ctx, &dir) {
        Ok(()) => {
            if !ctx.keep {
                let _ = fs::remove_dir_all(&dir);
            }
            Ok(())
        }
        Err(msg) => Err(format!("{msg}\n\ntrial directory (kept): {}", dir.display())),
    }
}

/// A buildbox-casd serving REAPI with local execution, killed by PID when dropped.
struct Engine {
    child: Option<Child>,
    port: u16,
    cache: PathBuf,
}

impl Engine {
    fn start(ctx: &Context, dir: &Path) -> Result<Engine, String> {
        let bb = ctx.buildbox.as_ref().map_err(|e| e.clone())?;
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| format!("no free port: {e}"))?.port();
        let cache = dir.join("casd-cache");
        fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
        let log = fs::File::create(dir.join("casd.log")).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(bb.join("buildbox-casd"));
        cmd.arg(format!("--bind=127.0.0.1:{port}"))
            .arg(format!("--buildbox-run={}", bb.join("buildbox-run").display()))
            .args(["--jobs=2", "--cache-failures=false", "--log-level=warning"])
            .args(["--runner-arg=--ro-bind-mount=/usr:/usr", "--runner-arg=--ro-bind-mount=/usr/lib:/lib"])
            .args(["--runner-arg=--ro-bind-mount=/usr/lib64:/lib64", "--runner-arg=--ro-bind-mount=/usr/bin:/bin"])
            .arg(&cache)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        let child = cmd.spawn().map_err(|e| format!("cannot start `{}`: {e}", command_line(&cmd)))?;
        let mut engine = Engine { child: Some(child), port, cache };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(engine);
            }
            if let Some(Ok(Some(st))) = engine.child.as_mut().map(|c| c.try_wait()) {
                let log = fs::read_to_string(dir.join("casd.log")).unwrap_or_default();
                return Err(format!("buildbox-casd exited ({st}) before serving:\n{log}"));
            }
            if Instant::now() > deadline {
                return Err("buildbox-casd did not start serving within 15 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn endpoint(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }

    /// Kills the engine now (SIGKILL, by PID).
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.cache);
    }
}

/// The distributor's summary counters (`key=value` pairs of its last summary line).
fn summary(stderr: &str) -> Result<BTreeMap<String, String>, String> {
    let line = stderr.lines().rev().find_map(|l| l.strip_prefix("dtld-reapi: summary: ")).ok_or_else(|| format!("no summary line in:\n{stderr}"))?;
    Ok(line.split_whitespace().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

fn expect_counts(stderr: &str, want: &[(&str, &str)]) -> Result<(), String> {
    let s = summary(stderr)?;
    for (k, v) in want {
        if s.get(*k).map(String::as_str) != Some(*v) {
            return Err(format!("summary: expected {k}={v}, got {:?}\nstderr:\n{stderr}", s.get(*k)));
        }
    }
    Ok(())
}

/// `clang -flto=thin` linking the inputs in `cwd` to `out`, through `distributor` with extra
/// linker flags; the engine comes from `DTLD_REAPI_ENDPOINT` only.
fn link(ctx: &Context, linker: Linker, cwd: &Path, out: &str, distributor: &Path, endpoint: &str, extra: &[&str]) -> Result<Outcome, String> {
    let inputs: Vec<PathBuf> = INPUTS.iter().map(PathBuf::from).collect();
    link_inputs(ctx, linker, cwd, &inputs, out, distributor, endpoint, extra)
}

/// `link` with the inputs named by `inputs` (relative to `cwd`, or absolute).
#[allow(clippy::too_many_arguments)]
fn link_inputs(
    ctx: &Context,
    linker: Linker,
    cwd: &Path,
    inputs: &[PathBuf],
    out: &str,
    distributor: &Path,
    endpoint: &str,
    extra: &[&str],
) -> Result<Outcome, String> {
    let mut cmd = Command::new(CLANG);
    cmd.current_dir(cwd).env("DTLD_REAPI_ENDPOINT", endpoint).env("DTLD_REAPI_RETRIES", "2").args(["-flto=thin", "-O2"]);
    cmd.arg(linker.fuse_ld(&ctx.dtld));
    cmd.arg(format!("-fthinlto-distributor={}", distributor.display())).args(extra).args(inputs).arg("-o").arg(out);
    run_tool(&mut cmd)
}

fn run_program(p: &Path) -> Result<String, String> {
    let o = run_tool_ok(&mut Command::new(p))?;
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn ok(o: &Outcome, what: &str) -> Result<(), String> {
    if o.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({}):\n{}", o.status_text(), o.stderr_text()))
    }
}

/// A copy of the inputs at `dir`.
fn tree(ctx: &Context, dir: &Path) -> Result<(), String> {
    copy_tree(ctx.inputs()?, dir)
}

/// Every file left in `dir` besides the inputs and `keep`.
fn leftovers(dir: &Path, keep: &[&str]) -> Result<Vec<String>, String> {
    let snap = snapshot(dir)?;
    Ok(snap
        .keys()
        .filter(|k| !k.ends_with('/') && !keep.contains(&k.as_str()) && !k.ends_with(".c") && !INPUTS.contains(&k.as_str()))
        .filter(|k| !k.starts_with("partobj/") && k.as_str() != "lib/thn.o")
        .cloned()
        .collect())
}

fn dtld_vs_lld(ctx: &Context, dir: &Path) -> Result<(), String> {
    let engine = Engine::start(ctx, dir)?;
    let (a, b, c) = (dir.join("dtld"), dir.join("lld"), dir.join("dtld-local"));
    tree(ctx, &a)?;
    tree(ctx, &b)?;
    tree(ctx, &c)?;
    let o = link(ctx, Linker::Dtld, &a, "prog", &ctx.reapi, &engine.endpoint(), &["-Xthinlto-distributor=--platform=OSFamily=linux,--platform=ISA=x86-64"])?;
    ok(&o, "dtld link through dtld-reapi")?;
    expect_counts(&o.stderr_text(), &[("jobs", "5"), ("executed", "5"), ("cache_hits", "0"), ("failed", "0"), ("fell_back", "0"), ("retried", "0")])?;
    let local = ctx.distributor.as_ref().map_err(|e| e.clone())?;
    let o = link(ctx, Linker::Lld, &b, "prog", local, &engine.endpoint(), &[])?;
    ok(&o, "ld.lld-22 link through dtld-distribute")?;
    let (x, y) = (run_program(&a.join("prog"))?, run_program(&b.join("prog"))?);
    if x != EXPECTED || y != EXPECTED {
        return Err(format!("programs print {x:?} (dtld, REAPI) and {y:?} (lld, local); expected {EXPECTED:?}"));
    }
    // The backends on the engine compile `m/<sha>.o` with a renamed shard; here they compile
    // the job file's own names: the code must be the same.
    let o = link(ctx, Linker::Dtld, &c, "prog", local, &engine.endpoint(), &[])?;
    ok(&o, "dtld link through dtld-distribute")?;
    if fs::read(a.join("prog")).map_err(|e| e.to_string())? != fs::read(c.join("prog")).map_err(|e| e.to_string())? {
        return Err("dtld's program linked through dtld-reapi differs from the one linked through dtld-distribute".into());
    }
    let left = leftovers(&a, &["prog"])?;
    if !left.is_empty() {
        return Err(format!("left behind by the dtld link: {left:?}"));
    }
    Ok(())
}

fn cross_directory(ctx: &Context, dir: &Path) -> Result<(), String> {
    let engine = Engine::start(ctx, dir)?;
    // Tree B is deeper and differently named, its inputs are named by absolute paths and its
    // output is another file in a subdirectory, and the link is another process: nothing of
    // that may matter.
    let (a, b) = (dir.join("a"), dir.join("elsewhere/deeper/b"));
    let mut programs = Vec::new();
    for (n, t) in [&a, &b].into_iter().enumerate() {
        tree(ctx, t)?;
        let (inputs, out): (Vec<PathBuf>, &str) = if n == 0 {
            (INPUTS.iter().map(PathBuf::from).collect(), "prog")
        } else {
            fs::create_dir_all(t.join("bin")).map_err(|e| e.to_string())?;
            (INPUTS.iter().map(|i| t.join(i)).collect(), "bin/other")
        };
        let o = link_inputs(ctx, Linker::Dtld, t, &inputs, out, &ctx.reapi, &engine.endpoint(), &["-Xthinlto-distributor=--verbose"])?;
        ok(&o, "dtld link through dtld-reapi")?;
        let err = o.stderr_text();
        if n == 0 {
            expect_counts(&err, &[("jobs", "5"), ("executed", "5"), ("cache_hits", "0")])?;
        } else {
            // Every Action is in the cache: no Execute call, no upload.
            expect_counts(&err, &[("jobs", "5"), ("executed", "0"), ("cache_hits", "5"), ("uploaded_bytes", "0"), ("failed", "0")])?;
        }
        let prog = t.join(out);
        let got = run_program(&prog)?;
        if got != EXPECTED {
            return Err(format!("program prints {got:?}, expected {EXPECTED:?}"));
        }
        programs.push(fs::read(&prog).map_err(|e| e.to_string())?);
        let left = leftovers(t, &[out])?;
        if !left.is_empty() {
            return Err(format!("left behind by the link: {left:?}"));
        }
    }
    if programs[0] != programs[1] {
        return Err("the two links' programs differ".into());
    }
    Ok(())
}

const PROFILE: &str = "main:1000:1\n 1: 1000\nutil:400:40\n 1: 400\n";

fn cross_directory_profile(ctx: &Context, dir: &Path) -> Result<(), String> {
    let engine = Engine::start(ctx, dir)?;
    let (a, b) = (dir.join("a"), dir.join("elsewhere/b"));
    let extra = ["-Wl,--lto-sample-profile=../prof/app.prof"];
    // The third link changes the profile's content, not its name: every key changes.
    for (n, t) in [&a, &b, &b].into_iter().enumerate() {
        let cwd = t.join("work");
        if n < 2 {
            tree(ctx, &cwd)?;
            fs::create_dir_all(t.join("out")).map_err(|e| e.to_string())?;
            fs::create_dir_all(t.join("prof")).map_err(|e| e.to_string())?;
        }
        let profile = if n < 2 { PROFILE.to_string() } else { PROFILE.replace("1000", "900") };
        fs::write(t.join("prof/app.prof"), profile).map_err(|e| e.to_string())?;
        let o = link(ctx, Linker::Dtld, &cwd, "../out/prog", &ctx.reapi, &engine.endpoint(), &extra)?;
        ok(&o, "dtld link through dtld-reapi")?;
        let err = o.stderr_text();
        match n {
            1 => expect_counts(&err, &[("jobs", "5"), ("executed", "0"), ("cache_hits", "5"), ("uploaded_bytes", "0")])?,
            _ => expect_counts(&err, &[("jobs", "5"), ("executed", "5"), ("cache_hits", "0")])?,
        }
        let got = run_program(&t.join("out/prog"))?;
        if got != EXPECTED {
            return Err(format!("program prints {got:?}, expected {EXPECTED:?}"));
        }
    }
    Ok(())
}

fn lld_cross_directory(ctx: &Context, dir: &Path) -> Result<(), String> {
    let engine = Engine::start(ctx, dir)?;
    let (a, b) = (dir.join("a"), dir.join("elsewhere/b"));
    for (n, (t, out)) in [(&a, "prog"), (&b, "other")].into_iter().enumerate() {
        tree(ctx, t)?;
        let o = link(ctx, Linker::Lld, t, out, &ctx.reapi, &engine.endpoint(), &[])?;
        ok(&o, "ld.lld-22 link through dtld-reapi")?;
        // lld's shard and object names contain its process id, and a regular-archive member's
        // name its process id in hex, inside the shards too: none of it enters an Action.
        let err = o.stderr_text();
        if n == 0 {
            expect_counts(&err, &[("jobs", "5"), ("cache_hits", "0"), ("executed", "5")])?;
        } else {
            expect_counts(&err, &[("jobs", "5"), ("cache_hits", "5"), ("executed", "0"), ("uploaded_bytes", "0"), ("failed", "0")])?;
        }
        let got = run_program(&t.join(out))?;
        if got != EXPECTED {
            return Err(format!("program prints {got:?}, expected {EXPECTED:?}"));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    Unreachable,
    UnreachableFallback,
    ActionFails,
    OutputMissing,
    EngineKilled,
}

fn fault(ctx: &Context, dir: &Path, f: Fault) -> Result<(), String> {
    let mut engine = Engine::start(ctx, dir)?;
    let work = dir.join("work");
    tree(ctx, &work)?;
    let before = snapshot(&work)?;
    let endpoint = match f {
        Fault::Unreachable | Fault::UnreachableFallback => {
            let ep = engine.endpoint();
            engine.kill();
            ep
        }
        _ => engine.endpoint(),
    };
    let extra: Vec<String> = match f {
        Fault::Unreachable => vec![],
        Fault::UnreachableFallback => vec!["-Xthinlto-distributor=--local-fallback".into()],
        // clang rejects the option: every action exits 1 with clang's message.
        Fault::ActionFails => vec!["-Wl,--thinlto-remote-compiler-arg=-fno-such-option-dtld".into()],
        // `true` exits 0 and writes nothing: the result lacks the declared output.
        Fault::OutputMissing => vec!["-Wl,--thinlto-remote-compiler=/usr/bin/true".into()],
        // Actions that sleep (sh -c 'sleep 20' ...), so the engine can be killed mid-link.
        Fault::EngineKilled => vec![
            "-Wl,--thinlto-remote-compiler=/usr/bin/sh".into(),
            "-Wl,--thinlto-remote-compiler-prepend-arg=-c".into(),
            "-Wl,--thinlto-remote-compiler-prepend-arg=sleep 20".into(),
            "-Xthinlto-distributor=--compiler-id=sleep".into(),
        ],
    };
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let start = Instant::now();
    let o = if f == Fault::EngineKilled {
        std::thread::scope(|s| {
            let h = s.spawn(|| link(ctx, Linker::Dtld, &work, "prog", &ctx.reapi, &endpoint, &extra));
            std::thread::sleep(Duration::from_millis(1500));
            engine.kill();
            h.join().unwrap_or_else(|_| Err("link thread panicked".into()))
        })?
    } else {
        link(ctx, Linker::Dtld, &work, "prog", &ctx.reapi, &endpoint, &extra)?
    };
    let took = start.elapsed();
    let err = o.stderr_text();
    if f == Fault::UnreachableFallback {
        ok(&o, "link with --local-fallback")?;
        expect_counts(&err, &[("jobs", "5"), ("fell_back", "5"), ("failed", "0"), ("executed", "0")])?;
        if !err.contains("compiling it locally") {
            return Err(format!("no fallback warning:\n{err}"));
        }
        let got = run_program(&work.join("prog"))?;
        return if got == EXPECTED { Ok(()) } else { Err(format!("program prints {got:?}")) };
    }
    if o.status.and_then(|s| s.code()) != Some(1) {
        return Err(format!("expected exit 1, got {}:\n{err}", o.status_text()));
    }
    if !err.lines().any(|l| l.starts_with("dtld: error: ")) {
        return Err(format!("no dtld error line:\n{err}"));
    }
    let want: &[&str] = match f {
        Fault::Unreachable => &["the REAPI engine is not usable", "UNAVAILABLE"],
        Fault::ActionFails => {
            &["dtld-reapi: output of main.o -> main.1.", "unknown argument: '-fno-such-option-dtld'", "compiler exited with code 1 on the engine"]
        }
        Fault::OutputMissing => &["main.o -> main.1.", "the engine's result has no output 'out.o'"],
        Fault::EngineKilled => &["dtld-reapi: error: ", "UNAVAILABLE"],
        Fault::UnreachableFallback => &[],
    };
    for w in want {
        if !err.contains(w) {
            return Err(format!("stderr lacks {w:?}:\n{err}"));
        }
    }
    expect_counts(&err, &[("jobs", "5"), ("failed", "5")])?;
    if f == Fault::EngineKilled && took > Duration::from_secs(15) {
        return Err(format!("the link took {took:?} after the engine died"));
    }
    let diff = changes(&before, &snapshot(&work)?);
    if !diff.is_empty() {
        return Err(format!("the directory changed: {diff:?}\n{err}"));
    }
    Ok(())
}

fn usage(ctx: &Context, dir: &Path) -> Result<(), String> {
    let job = dir.join("job.json");
    fs::write(&job, r#"{"common":{"linker_output":"p","args":["/usr/bin/true"],"inputs":[]},"jobs":[]}"#).map_err(|e| e.to_string())?;
    let cases: [(&[&str], bool, &str); 4] = [
        (&["--no-such-option"], true, "unexpected argument"),
        (&["--header=novalue"], true, "is not NAME=VALUE"),
        (&["--endpoint=http:/x"], true, "must start with grpc://"),
        (&[], false, "DTLD_REAPI_ENDPOINT"),
    ];
    for (args, with_endpoint, want) in cases {
        let mut cmd = Command::new(&ctx.reapi);
        cmd.env_remove("DTLD_REAPI_ENDPOINT");
        if with_endpoint {
            cmd.env("DTLD_REAPI_ENDPOINT", "grpc://127.0.0.1:1");
        }
        let o = run_tool(cmd.args(args).arg(&job))?;
        let err = o.stderr_text();
        if o.status.and_then(|s| s.code()) != Some(2) || !err.contains(want) {
            return Err(format!("dtld-reapi {args:?}: expected exit 2 and {want:?}, got {}:\n{err}", o.status_text()));
        }
    }
    // No jobs: nothing to do, success, and a summary.
    let o = run_tool(Command::new(&ctx.reapi).env("DTLD_REAPI_ENDPOINT", "grpc://127.0.0.1:1").arg(&job))?;
    ok(&o, "an empty job file")?;
    expect_counts(&o.stderr_text(), &[("jobs", "0")])
}

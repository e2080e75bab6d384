//! Why this exists: Rust programs reach dtld through rustc and cargo, with bitcode from rustc's
//! own LLVM (22.1.2, the same as clang-22's) when `-C linker-plugin-lto` is on, and with build
//! scripts and proc macros linked on the way. None of the other targets sees such links, and
//! issue 35 found them broken (cross-language LTO with several codegen units: "undefined hidden
//! symbol"). Every trial builds with rustc or cargo, links with dtld and with ld.lld-22 through
//! `clang-22` as rustc's linker, runs both programs and requires the same stdout, stderr and exit
//! status, and proves from the `.comment` section (`Linker: ...`, which both linkers write) that
//! the linker meant really did the link:
//!
//! * `rustc/two/{thin,dtlto}`: the reproducer, tests/rust/two.rs, with
//!   `rustc -O -C linker-plugin-lto -C codegen-units=4 -C linker=clang-22
//!   -C link-arg=-fuse-ld=<linker>`: the thin link in process, and distributed through
//!   dtld-distribute. For DTLTO rustc also needs `-C link-arg=-flto=thin`: rustc does not pass
//!   `-flto` to clang, and without it clang ignores `-fthinlto-distributor=` (with a warning
//!   that rustc does not show) and adds no `--thinlto-remote-compiler=`. The distributor runs
//!   through a wrapper that logs its calls, so the trial knows DTLTO really happened.
//! * `cargo/{debug,release,release-lto,release-dtlto}`: the workspace fixtures/rust-workspace/
//!   (a build script compiling C to ThinLTO bitcode, a proc macro, a generic library) built
//!   with `cargo build --offline --locked`, codegen-units=4 for release, once per linker with
//!   `RUSTFLAGS` selecting it; the build script and the proc macro (a shared
//!   library) must have been linked by the same linker as the program.
//! * `trap/default-cc-with-B`: with rustc's default linker `cc`, rustc 1.95 passes
//!   `-B<sysroot>/.../gcc-ld -fuse-ld=lld` itself, so `-C link-arg=-B<dir>` with `<dir>/ld` being
//!   dtld links with rust-lld. The trial requires exactly that (if rustc changes this, the trial
//!   and docs/rust.md must change too): dtld never runs, so it cannot warn.
//!   `trap/linker-features-minus-lld`: `-C linker-features=-lld` (stable) turns that off, and gcc
//!   then runs `<dir>/ld`, which is dtld.
//!
//! Every trial works in `<target>/rust-tests/<trial>/` (cargo's target directories inside it,
//! `CARGO_HOME` in `<target>/rust-tests/cargo-home` so no user configuration applies), deleted
//! when it passes (kept on failure, or with `DTLD_HARNESS_KEEP=1`). Nothing needs the network.
//!
//! Environment: `DTLD` (the linker under test, default `<target>/release/dtld`; its in-process
//! thin-link library must be where it finds it, e.g. next to it), `DTLD_DISTRIBUTOR` (default
//! `<target>/release/dtld-distribute`). With a `DTLD` that is a wrapper running ld.lld-22 the
//! comparisons still run; the trap trials, which tell the linkers apart by their markers, are
//! then ignored.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{
    command_line, find_distributor, find_dtld, lock_target_subdir, run_tool_ok, run_with_timeout, shell_quote, target_dir, workspace_root, Outcome, CLANG,
};
use libtest_mimic::{Arguments, Failed, Trial};

/// The reference linker as clang-22 finds it for `-fuse-ld=lld`: /usr/lib/llvm-22/bin/ld.lld,
/// which is ld.lld-22.
const LLD_FUSE: &str = "lld";
/// The GNU driver rustc uses by default (`cc`) for the trap trials.
const CC: &str = "cc";
/// Cargo builds take seconds each; this bounds a hung one.
const BUILD_TIMEOUT: Duration = Duration::from_secs(900);
/// The programs run in well under a second.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

struct Context {
    dtld: PathBuf,
    distributor: PathBuf,
    root: PathBuf,
    keep: bool,
    /// The `Linker:` line of a program linked by the linker under test, and by ld.lld-22.
    dtld_marker: String,
    lld_marker: String,
    cargo: PathBuf,
}

/// The four cargo builds of the fixture.
#[derive(Clone, Copy, PartialEq)]
enum Build {
    Debug,
    Release,
    ReleaseLto,
    ReleaseDtlto,
}

/// Which linker a side links with.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Dtld,
    Lld,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Dtld => "dtld",
            Side::Lld => "lld",
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("rust-tests", "rust test");
    let ctx = Context::new().map(Arc::new);
    let same_markers = ctx.as_ref().is_ok_and(|c| c.dtld_marker == c.lld_marker);
    let mut trials = Vec::new();
    let mut add = |name: &'static str, ignored: bool, f: Box<dyn FnOnce(&Context, &TrialDir) -> Result<(), String> + Send>| {
        let ctx = ctx.clone();
        trials.push(
            Trial::test(name, move || {
                let ctx = ctx.map_err(Failed::from)?;
                let context = [format!("linker under test: {}", ctx.dtld.display()), format!("distributor: {}", ctx.distributor.display())];
                run_in(&ctx.root.join(name.replace('/', "-")), ctx.keep, &context, |t| f(&ctx, t)).map_err(Failed::from)
            })
            .with_ignored_flag(ignored),
        );
    };
    // The cargo builds first: they take longest, and the trials run two at a time.
    add("cargo/release-dtlto", false, Box::new(|c, t| c.cargo_build(t, Build::ReleaseDtlto)));
    add("cargo/release-lto", false, Box::new(|c, t| c.cargo_build(t, Build::ReleaseLto)));
    add("cargo/release", false, Box::new(|c, t| c.cargo_build(t, Build::Release)));
    add("cargo/debug", false, Box::new(|c, t| c.cargo_build(t, Build::Debug)));
    add("rustc/two/thin", false, Box::new(|c, t| c.two(t, false)));
    add("rustc/two/dtlto", false, Box::new(|c, t| c.two(t, true)));
    add("trap/default-cc-with-B", same_markers, Box::new(|c, t| c.trap(t, false)));
    add("trap/linker-features-minus-lld", same_markers, Box::new(|c, t| c.trap(t, true)));
    libtest_mimic::run(&args, trials).exit();
}

/// The strings of an ELF file's `.comment` section.
fn comments(path: &Path) -> Result<Vec<String>, String> {
    let bytes = fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let elf = goblin::elf::Elf::parse(&bytes).map_err(|e| format!("{}: not an ELF file: {e}", path.display()))?;
    let section = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".comment"))
        .ok_or_else(|| format!("{}: no .comment section", path.display()))?;
    let start = section.sh_offset as usize;
    let data = bytes.get(start..start + section.sh_size as usize).ok_or_else(|| format!("{}: .comment out of the file", path.display()))?;
    Ok(data.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect())
}

/// The `Linker: ...` line of `.comment` (exactly one).
fn linker_marker(path: &Path) -> Result<String, String> {
    let lines: Vec<String> = comments(path)?.into_iter().filter(|l| l.starts_with("Linker:")).collect();
    match lines.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!("{}: expected one `Linker:` line in .comment, found {lines:?}", path.display())),
    }
}

/// Requires `path` to have been linked by the linker whose marker is `expected`.
fn require_marker(path: &Path, expected: &str, who: &str) -> Result<(), String> {
    let found = linker_marker(path)?;
    if found != expected {
        return Err(format!("{} was not linked by {who}: its .comment says {found:?}, {who}'s outputs say {expected:?}", path.display()));
    }
    Ok(())
}

/// Runs a program; the result is compared between the sides.
fn run_program(t: &TrialDir, program: &Path) -> Result<Outcome, String> {
    let mut cmd = t.cmd(program);
    t.note(&cmd);
    run_with_timeout(&mut cmd, &[], RUN_TIMEOUT).map_err(|e| format!("cannot run {}: {e}", program.display()))
}

/// The two runs must be equal, and the reference must have succeeded.
fn compare_runs(what: &str, dtld: &Outcome, lld: &Outcome) -> Result<(), String> {
    if !lld.success() {
        return Err(format!("{what}: the ld.lld-22 build failed ({}):\n{}{}", lld.status_text(), String::from_utf8_lossy(&lld.stdout), lld.stderr_text()));
    }
    if (dtld.status_text(), &dtld.stdout, &dtld.stderr) != (lld.status_text(), &lld.stdout, &lld.stderr) {
        return Err(format!(
            "{what}: the dtld build behaves differently\n--- dtld ({}):\n{}{}\n--- ld.lld-22 ({}):\n{}{}",
            dtld.status_text(),
            String::from_utf8_lossy(&dtld.stdout),
            dtld.stderr_text(),
            lld.status_text(),
            String::from_utf8_lossy(&lld.stdout),
            lld.stderr_text()
        ));
    }
    Ok(())
}

/// Writes `<dir>/<name>`, a distributor that logs each call (one line: its arguments) to
/// `<log>` and runs the real one.
fn logging_distributor(dir: &Path, name: &str, real: &Path, log: &Path) -> Result<PathBuf, String> {
    let path = dir.join(name);
    let script = format!("#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\nexec {} \"$@\"\n", shell_quote(log.as_os_str()), shell_quote(real.as_os_str()));
    fs::write(&path, script).map_err(|e| format!("write {}: {e}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).map_err(|e| format!("chmod {}: {e}", path.display()))?;
    Ok(path)
}

/// How many times the logging distributor ran.
fn distributor_calls(log: &Path) -> usize {
    fs::read_to_string(log).map(|s| s.lines().count()).unwrap_or(0)
}

/// DTLTO's temporaries (job files, native objects) left in `dir`, recursively.
fn dtlto_leftovers(dir: &Path) -> Vec<PathBuf> {
    find_files(dir, |p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        name.ends_with(".dist-file.json") || name.ends_with(".native.o") || name.ends_with(".thinlto.bc") || name.contains(".dtld-lto")
    })
}

impl Context {
    fn new() -> Result<Context, String> {
        dtld_tests::check_tools(&[CLANG, CC, "rustc", "llvm-ar-22", "ld.lld-22"])?;
        let dtld = find_dtld()?;
        let distributor = find_distributor()?;
        let root = target_dir().join("rust-tests");
        fs::create_dir_all(&root).map_err(|e| format!("mkdir {}: {e}", root.display()))?;
        // `cargo test` names the cargo that runs it; else the one in PATH.
        let cargo = std::env::var_os("CARGO").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("cargo"));
        // The markers: a trivial C program linked by each linker.
        let probe = root.join("probe");
        fs::create_dir_all(&probe).map_err(|e| format!("mkdir {}: {e}", probe.display()))?;
        let source = probe.join("main.c");
        fs::write(&source, "int main(void) { return 0; }\n").map_err(|e| format!("write {}: {e}", source.display()))?;
        let mut markers = Vec::new();
        for (name, fuse) in [("dtld", format!("-fuse-ld={}", dtld.display())), ("lld", format!("-fuse-ld={LLD_FUSE}"))] {
            let out = probe.join(name);
            run_tool_ok(Command::new(CLANG).arg(&fuse).arg(&source).arg("-o").arg(&out))?;
            markers.push(linker_marker(&out)?);
        }
        let _ = fs::remove_dir_all(&probe);
        let lld_marker = markers.pop().expect("two markers");
        let dtld_marker = markers.pop().expect("two markers");
        Ok(Context { dtld, distributor, root, keep: keep_requested(), dtld_marker, lld_marker, cargo })
    }

    fn marker(&self, side: Side) -> &str {
        match side {
            Side::Dtld => &self.dtld_marker,
            Side::Lld => &self.lld_marker,
        }
    }

    /// `-C link-arg=-fuse-ld=...` for a side.
    fn fuse_ld(&self, side: Side) -> String {
        match side {
            Side::Dtld => format!("link-arg=-fuse-ld={}", self.dtld.display()),
            Side::Lld => format!("link-arg=-fuse-ld={LLD_FUSE}"),
        }
    }

    /// The rustc flags that link with clang-22 and the side's linker, with `-C
    /// linker-plugin-lto` when `lto`, and DTLTO through `distributor` when given.
    fn rust_flags(&self, side: Side, lto: bool, distributor: Option<&Path>) -> Vec<String> {
        let mut flags: Vec<String> = ["-C", "linker=clang-22", "-C"].map(String::from).to_vec();
        flags.push(self.fuse_ld(side));
        if lto {
            flags.extend(["-C", "linker-plugin-lto"].map(String::from));
        }
        if let Some(d) = distributor {
            // Without -flto=thin, clang-22 ignores -fthinlto-distributor= (see the header).
            flags.extend(["-C", "link-arg=-flto=thin", "-C"].map(String::from));
            flags.push(format!("link-arg=-fthinlto-distributor={}", d.display()));
        }
        flags
    }

    /// `rustc/two/*`: the reproducer of issue 35.
    fn two(&self, t: &TrialDir, dtlto: bool) -> Result<(), String> {
        let source = workspace_root().join("tests/rust/two.rs");
        let mut runs = Vec::new();
        for side in [Side::Dtld, Side::Lld] {
            let log = t.path(&format!("distributor-{}.log", side.name()));
            let distributor = if dtlto { Some(logging_distributor(&t.dir, &format!("distribute-{}", side.name()), &self.distributor, &log)?) } else { None };
            let out = t.path(&format!("two-{}", side.name()));
            let mut cmd = t.cmd("rustc");
            cmd.args(["-O", "-C", "linker-plugin-lto", "-C", "codegen-units=4"]).args(self.rust_flags(side, false, distributor.as_deref()));
            cmd.arg(&source).arg("-o").arg(&out);
            t.ok(&mut cmd).map_err(|e| format!("{} link failed: {e}", side.name()))?;
            require_marker(&out, self.marker(side), side.name())?;
            if dtlto && distributor_calls(&log) == 0 {
                return Err(format!("the {} link did not run the distributor (no DTLTO)", side.name()));
            }
            runs.push(run_program(t, &out)?);
        }
        if dtlto {
            let left = dtlto_leftovers(&t.dir);
            if !left.is_empty() {
                return Err(format!("DTLTO temporaries left behind: {left:?}"));
            }
        }
        compare_runs("two.rs", &runs[0], &runs[1])
    }

    /// `cargo/*`: the fixture workspace built once per linker.
    fn cargo_build(&self, t: &TrialDir, build: Build) -> Result<(), String> {
        let manifest = workspace_root().join("fixtures/rust-workspace/Cargo.toml");
        let profile = if build == Build::Debug { "debug" } else { "release" };
        let mut runs = Vec::new();
        for side in [Side::Dtld, Side::Lld] {
            let target = t.path(&format!("target-{}", side.name()));
            let log = t.path(&format!("distributor-{}.log", side.name()));
            let distributor = if build == Build::ReleaseDtlto {
                Some(logging_distributor(&t.dir, &format!("distribute-{}", side.name()), &self.distributor, &log)?)
            } else {
                None
            };
            let lto = matches!(build, Build::ReleaseLto | Build::ReleaseDtlto);
            let flags = self.rust_flags(side, lto, distributor.as_deref());
            let mut cmd = t.cmd(&self.cargo);
            cmd.args(["build", "--offline", "--locked", "--manifest-path"]).arg(&manifest);
            if build != Build::Debug {
                cmd.arg("--release");
            }
            // Only what is set here applies: no user configuration, no flags from outside.
            for var in [
                "RUSTFLAGS",
                "CARGO_ENCODED_RUSTFLAGS",
                "CARGO_BUILD_RUSTFLAGS",
                "CARGO_BUILD_TARGET",
                "CARGO_BUILD_TARGET_DIR",
                "RUSTC_WRAPPER",
                "RUSTC_WORKSPACE_WRAPPER",
                "CARGO_MAKEFLAGS",
                "MAKEFLAGS",
                "MFLAGS",
                "CLANG",
                "LLVM_AR",
            ] {
                cmd.env_remove(var);
            }
            // RUSTFLAGS, which a reader can copy from the commands shown, unless a flag holds
            // whitespace (a path), which only CARGO_ENCODED_RUSTFLAGS can carry.
            if flags.iter().any(|f| f.contains(char::is_whitespace)) {
                cmd.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"));
            } else {
                cmd.env("RUSTFLAGS", flags.join(" "));
            }
            cmd.env("CARGO_HOME", self.root.join("cargo-home"))
                .env("CARGO_TARGET_DIR", &target)
                .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "4")
                .env("CARGO_INCREMENTAL", "0")
                .env("CARGO_TERM_COLOR", "never")
                .env("CARGO_TERM_PROGRESS_WHEN", "never");
            t.note(&cmd);
            let outcome = run_with_timeout(&mut cmd, &[], BUILD_TIMEOUT).map_err(|e| format!("cannot run cargo: {e}"))?;
            if !outcome.success() {
                return Err(format!(
                    "cargo build with {} failed ({}):\n  {}\n{}",
                    side.name(),
                    outcome.status_text(),
                    command_line(&cmd),
                    outcome.stderr_text()
                ));
            }
            // The program, the build script and the proc macro were all linked by this side.
            let dir = target.join(profile);
            let program = dir.join("app");
            let mut linked = vec![program.clone()];
            linked
                .extend(find_files(&dir.join("build"), |p| p.file_name().is_some_and(|n| n == "build-script-build") && p.to_string_lossy().contains("/app-")));
            linked.extend(find_files(&dir.join("deps"), |p| {
                p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libkit_derive-") && n.to_string_lossy().ends_with(".so"))
            }));
            // cargo builds the proc macro twice in release (once with the release profile's
            // opt-level 3, once with build-override's 0): any number but none is fine.
            if linked.len() < 3 || !linked[1].ends_with("build-script-build") {
                return Err(format!("expected the program, one build script and the proc macro, found {linked:?}"));
            }
            for path in &linked {
                require_marker(path, self.marker(side), side.name())?;
            }
            if distributor.is_some() {
                // The program, the build script and the proc macro each went through DTLTO.
                let calls = distributor_calls(&log);
                if calls < 3 {
                    return Err(format!(
                        "the {} build ran the distributor {calls} time(s); the program, the build script and the proc macro need 3 or more",
                        side.name()
                    ));
                }
                if side == Side::Dtld {
                    let left = dtlto_leftovers(&target);
                    if !left.is_empty() {
                        return Err(format!("DTLTO temporaries left behind: {left:?}"));
                    }
                }
            }
            runs.push(run_program(t, &program)?);
        }
        let last = String::from_utf8_lossy(&runs[1].stdout).lines().last().unwrap_or_default().to_string();
        if last != "all checks passed" {
            return Err(format!("the ld.lld-22 build's last line is {last:?}, not \"all checks passed\""));
        }
        compare_runs("the fixture program", &runs[0], &runs[1])
    }

    /// `trap/*`: rustc's default linker `cc` with `-B<dir>`, `<dir>/ld` being dtld (the layout
    /// of an installed `<prefix>/libexec/dtld`).
    fn trap(&self, t: &TrialDir, linker_features: bool) -> Result<(), String> {
        let bin = t.path("libexec/dtld");
        fs::create_dir_all(&bin).map_err(|e| format!("mkdir {}: {e}", bin.display()))?;
        std::os::unix::fs::symlink(&self.dtld, bin.join("ld")).map_err(|e| format!("symlink: {e}"))?;
        let source = workspace_root().join("tests/rust/two.rs");
        let out = t.path("two");
        let mut cmd = t.cmd("rustc");
        cmd.arg("-O");
        if linker_features {
            cmd.args(["-C", "linker-features=-lld"]);
        }
        cmd.arg("-C").arg(format!("link-arg=-B{}", bin.display())).arg(&source).arg("-o").arg(&out);
        t.ok(&mut cmd)?;
        let marker = linker_marker(&out)?;
        if linker_features {
            require_marker(&out, &self.dtld_marker, "dtld")?;
        } else if marker == self.dtld_marker || !marker.contains("LLD") {
            return Err(format!(
                "rustc's default linker no longer picks rust-lld over `-B<dir>/ld` (the program's .comment says {marker:?}): \
                 the trap docs/rust.md describes is gone, update it and this trial"
            ));
        }
        let run = run_program(t, &out)?;
        if !run.success() || !String::from_utf8_lossy(&run.stdout).starts_with("square 2 4\n") {
            return Err(format!("two.rs ran wrongly ({}):\n{}{}", run.status_text(), String::from_utf8_lossy(&run.stdout), run.stderr_text()));
        }
        Ok(())
    }
}

/// Files under `dir` (recursively) for which `keep` holds.
fn find_files(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else if keep(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

//! Why this exists: the small things a newcomer meets first — how dtld's command line, its
//! environment variables and its two distributors answer — are where a drop-in linker loses
//! trust, and the differential harnesses never look at them (issue 35). Each trial runs dtld
//! and ld.lld-22 (or the distributors) on the same command line and compares what a user sees:
//!
//! * `color/*`: `--color-diagnostics` bare and with `=always|never|auto`, and
//!   `--no-color-diagnostics`: the whole stderr of an undefined-symbol error, colour escapes
//!   included, equal to ld.lld-22's (its program name read as dtld's).
//! * `archive-stats/*`: `--print-archive-stats=<file>` writes lld's table (members, extracted,
//!   archive) for regular, thin and whole archives and for lazy objects; `--stats` is accepted
//!   and the link is lld's.
//! * `installed/thin-bitcode`: dtld copied into a prefix as the installers lay it out
//!   (`bin/dtld`, `lib/dtld/libdtld-lto-22.so`), run directly on ThinLTO bitcode
//!   (`dtld -e main a.o b.o`, no compiler driver, no DTLD_* variable): it links with its own
//!   thin-link library, as ld.lld-22 links, and the programs agree.
//! * `llvm-options/known-without-bitcode`: `-mllvm` and `-plugin-opt=-` options LLVM knows, in
//!   a link without bitcode: read by LLVM's parser as lld reads them, and the link is lld's.
//! * `format/*`: `-b binary` / `--format=default` embed a file as lld does (the program that
//!   prints it agrees, and `-r` gives the `_binary_*` symbols lld gives); unknown formats and
//!   script targets are refused in lld's words.
//! * `env/*`: boolean variables read as `1/0/true/false/yes/no/on/off`; a bad value is an error
//!   that starts with the program's name and names the variable; `--help` says what dtld is.
//!
//! Every trial works in `<target>/cli-tests/<trial>/`, deleted when it passes (kept on failure, or
//! with `DTLD_HARNESS_KEEP=1`). Environment: `DTLD` (default `<target>/release/dtld`); the
//! distributors are taken from next to it.

use std::fs;
use std::path::{Path, PathBuf};

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{find_dtld, target_dir, Outcome, CLANG, LLD, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

struct Context {
    dtld: PathBuf,
    root: PathBuf,
    keep: bool,
}

type Body = fn(&Context, &TrialDir) -> Result<(), String>;

fn main() {
    let args = Arguments::from_args();
    let ctx: &'static Context = match find_dtld() {
        Ok(dtld) => Box::leak(Box::new(Context { dtld, root: target_dir().join("cli-tests"), keep: keep_requested() })),
        Err(e) => {
            eprintln!("cli: {e}");
            std::process::exit(1);
        }
    };
    let trials: Vec<(&str, Body)> = vec![
        ("color/bare", |c, w| color(c, w, &["--color-diagnostics"])),
        ("color/always", |c, w| color(c, w, &["--color-diagnostics=always"])),
        ("color/never", |c, w| color(c, w, &["--color-diagnostics=never"])),
        ("color/auto", |c, w| color(c, w, &["--color-diagnostics=auto"])),
        ("color/bare-then-no", |c, w| color(c, w, &["--color-diagnostics", "--no-color-diagnostics"])),
        ("archive-stats/regular-thin-whole-lazy", archive_stats),
        ("archive-stats/stats", stats),
        ("installed/thin-bitcode", installed_thin_bitcode),
        ("env/reapi-booleans", reapi_booleans),
        ("env/distribute-usage", distribute_usage),
        ("env/help", help),
        ("llvm-options/known-without-bitcode", llvm_options_known),
        ("version/v-unknown-argument", |c, w| version(c, w, &["-v", "--bogus"])),
        ("version/version-unknown-argument", |c, w| version(c, w, &["--version", "--bogus"])),
        ("version/version-bad-mllvm", |c, w| version(c, w, &["--version", "-mllvm", "-bogus-opt"])),
        ("version/v-bad-lto-level", |c, w| version(c, w, &["-v", "--lto-O9"])),
        ("version/v-warning", |c, w| version(c, w, &["-v", "-z", "foo"])),
        ("version/v-alone", |c, w| version(c, w, &["-v"])),
        ("version/version-and-help", |c, w| version(c, w, &["--version", "--help"])),
        ("format/binary", format_binary),
        ("format/unknown", |c, w| format_words(c, w, &["--format=elf32", "x.o"])),
        ("format/unknown-target", |c, w| {
            w.write("t.lds", "TARGET(foo)\n")?;
            format_words(c, w, &["-T", "t.lds"])
        }),
    ];
    let trials = trials
        .into_iter()
        .map(|(name, body)| {
            Trial::test(name, move || {
                let dir = ctx.root.join(name.replace('/', "-"));
                run_in(&dir, ctx.keep, &[format!("dtld: {}", ctx.dtld.display())], |w| body(ctx, w)).map_err(Failed::from)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// A program name at the start of a line (`ld.lld-22: `, `dtld: `) read as `LINKER: `.
fn unname(text: &str) -> String {
    text.lines()
        .map(|l| {
            for p in ["ld.lld-22: ", "ld.lld: ", "dtld: "] {
                if let Some(rest) = l.strip_prefix(p) {
                    return format!("LINKER: {rest}");
                }
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compile(w: &TrialDir, name: &str, src: &str, flags: &[&str]) -> Result<(), String> {
    w.write(&format!("{name}.c"), src)?;
    w.ok(w.cmd(CLANG).args(["-c", "-O1", "-fPIC"]).args(flags).arg(format!("{name}.c")).arg("-o").arg(format!("{name}.o")))?;
    Ok(())
}

/// Runs ld.lld-22 and dtld on the same arguments (`{out}` is each side's output name).
fn both(c: &Context, w: &TrialDir, args: &[&str]) -> Result<(Outcome, Outcome), String> {
    let run = |linker: &Path, out: &str| {
        let args: Vec<String> = args.iter().map(|a| a.replace("{out}", out)).collect();
        w.run(w.cmd(linker).args(&args))
    };
    Ok((run(Path::new(LLD), "lld")?, run(&c.dtld, "dtld")?))
}

fn color(c: &Context, w: &TrialDir, flags: &[&str]) -> Result<(), String> {
    compile(w, "u", "int f(void);\nint main(void){return f();}\n", &["-g"])?;
    let mut args = flags.to_vec();
    args.extend(["u.o", "-o", "{out}"]);
    let (lld, dtld) = both(c, w, &args)?;
    if lld.status_text() != dtld.status_text() {
        return Err(format!("exit status: ld.lld-22 {}, dtld {}", lld.status_text(), dtld.status_text()));
    }
    let (a, b) = (unname(&lld.stderr_text()), unname(&dtld.stderr_text()));
    if a != b {
        return Err(format!("stderr differs:\n--- ld.lld-22\n{a:?}\n--- dtld\n{b:?}"));
    }
    if flags.iter().any(|f| *f == "--color-diagnostics" || f.ends_with("=always")) && !flags.contains(&"--no-color-diagnostics") && !b.contains('\u{1b}') {
        return Err(format!("no colour in {b:?}"));
    }
    Ok(())
}

/// LLVM options LLVM knows, in a link without bitcode: LLVM's parser reads them (as lld's
/// command line does, `lto/cloptions.rs`) and the link goes on as lld's does, saying nothing.
/// (The unknown ones are tests/diagnostics' `elf-mllvm-*`; the options reaching the thin link
/// after that parse, tests/lto's `-mllvm -time-passes`.)
fn llvm_options_known(c: &Context, w: &TrialDir) -> Result<(), String> {
    compile(w, "u", "int main(void){return 0;}\n", &[])?;
    let args = ["-mllvm", "-import-instr-limit=5", "--plugin-opt=-function-sections", "-mllvm=-x86-asm-syntax=intel", "-e", "main", "u.o", "-o", "{out}"];
    let (lld, dtld) = both(c, w, &args)?;
    if lld.status_text() != "exit 0" || dtld.status_text() != "exit 0" {
        return Err(format!("exit status: ld.lld-22 {}, dtld {}\n{}", lld.status_text(), dtld.status_text(), dtld.stderr_text()));
    }
    let (a, b) = (unname(&lld.stderr_text()), unname(&dtld.stderr_text()));
    if a != b || !b.is_empty() {
        return Err(format!("stderr:\n--- ld.lld-22\n{a:?}\n--- dtld\n{b:?}"));
    }
    Ok(())
}

/// `--version` and `-v` with other options, errors among them: lld prints its version line
/// whenever one is given (`--help` aside), even when the run then fails; the same exit status,
/// the same messages (program names read as `LINKER`), and stdout either the version line
/// (`Debian LLD 22... (compatible with GNU linkers)` / `dtld 0.1.0 (compatible ...)`) or help.
fn version(c: &Context, w: &TrialDir, args: &[&str]) -> Result<(), String> {
    let (lld, dtld) = both(c, w, args)?;
    if lld.status_text() != dtld.status_text() {
        return Err(format!(
            "exit status: ld.lld-22 {}, dtld {}
{}",
            lld.status_text(),
            dtld.status_text(),
            dtld.stderr_text()
        ));
    }
    let words = |o: &Outcome| unname(&o.stderr_text()).replace("ld.lld-22", "LINKER").replace("dtld", "LINKER");
    if words(&lld) != words(&dtld) {
        return Err(format!("stderr:\n--- ld.lld-22\n{:?}\n--- dtld\n{:?}", words(&lld), words(&dtld)));
    }
    let kind = |o: &Outcome| {
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        if out.starts_with("OVERVIEW:") {
            "help".to_string()
        } else {
            out.lines().map(|l| if l.ends_with(" (compatible with GNU linkers)") { "version line" } else { l }).collect::<Vec<_>>().join("\n")
        }
    };
    if kind(&lld) != kind(&dtld) {
        return Err(format!("stdout: ld.lld-22 {:?}, dtld {:?}", kind(&lld), kind(&dtld)));
    }
    Ok(())
}

fn archive_stats(c: &Context, w: &TrialDir) -> Result<(), String> {
    compile(w, "main", "int f(void); int g(void);\nint main(void){return f() + g();}\n", &[])?;
    compile(w, "f", "int f(void){return 1;}\n", &[])?;
    compile(w, "g", "int g(void){return 2;}\n", &[])?;
    compile(w, "unused", "int unused(void){return 3;}\n", &[])?;
    compile(w, "h", "int h(void){return 4;}\n", &[])?;
    compile(w, "lazy", "int lazy(void){return 5;}\n", &[])?;
    w.ok(w.cmd(LLVM_AR).args(["rc", "libf.a", "f.o", "unused.o"]))?;
    w.ok(w.cmd(LLVM_AR).args(["rc", "--thin", "libg.a", "g.o", "unused.o"]))?;
    w.ok(w.cmd(LLVM_AR).args(["rc", "libh.a", "h.o"]))?;
    // An archive without members (glibc's librt.a and libdl.a are such): lld lists it, `0 0`,
    // in its place; one named twice is listed twice (lld counts per occurrence).
    w.write("libempty.a", "!<arch>\n")?;
    let args = [
        "--print-archive-stats={out}.txt",
        "-e",
        "main",
        "libempty.a",
        "main.o",
        "libf.a",
        "libempty.a",
        "libf.a",
        "libg.a",
        "--whole-archive",
        "libh.a",
        "--no-whole-archive",
        "--start-lib",
        "lazy.o",
        "--end-lib",
        "libempty.a",
        "-o",
        "{out}",
    ];
    let (lld, dtld) = both(c, w, &args)?;
    if !lld.success() || !dtld.success() {
        return Err(format!("ld.lld-22: {} {}; dtld: {} {}", lld.status_text(), lld.stderr_text(), dtld.status_text(), dtld.stderr_text()));
    }
    let (a, b) = (w.read_string("lld.txt")?, w.read_string("dtld.txt")?);
    if a.matches("libempty.a").count() != 3 {
        return Err(format!("ld.lld-22 did not list the empty archive three times:\n{a}"));
    }
    if a != b {
        return Err(format!("archive stats differ:\n--- ld.lld-22\n{a}--- dtld\n{b}"));
    }
    if !a.starts_with("members\textracted\tarchive\n") {
        return Err(format!("not lld's table: {a}"));
    }
    Ok(())
}

fn stats(c: &Context, w: &TrialDir) -> Result<(), String> {
    compile(w, "main", "int main(void){return 0;}\n", &[])?;
    let (lld, dtld) = both(c, w, &["--stats", "-e", "main", "main.o", "-o", "{out}"])?;
    let seen = |o: &Outcome| (o.status_text(), String::from_utf8_lossy(&o.stdout).into_owned(), unname(&o.stderr_text()));
    if seen(&lld) != seen(&dtld) {
        return Err(format!("ld.lld-22: {:?}; dtld: {:?}", seen(&lld), seen(&dtld)));
    }
    Ok(())
}

/// What the C library start files and libraries add to a `-e main` link of a program that
/// prints through libc: a dynamic link against libc.so.6 (found by its path).
const LIBC_ARGS: &[&str] = &["-dynamic-linker", "/lib64/ld-linux-x86-64.so.2", "-L/lib/x86_64-linux-gnu", "-lc"];

fn installed_thin_bitcode(c: &Context, w: &TrialDir) -> Result<(), String> {
    let dir = c.dtld.parent().ok_or("dtld has no directory")?;
    let lib = dir.join("libdtld-lto-22.so");
    if !lib.is_file() {
        return Err(format!("{} does not exist: build it with scripts/build-lto-shim.sh", lib.display()));
    }
    // The installers' layout (scripts/install.sh, the .deb): bin/dtld, lib/dtld/libdtld-lto-22.so.
    let prefix = w.path("prefix");
    fs::create_dir_all(prefix.join("bin")).map_err(|e| e.to_string())?;
    fs::create_dir_all(prefix.join("lib/dtld")).map_err(|e| e.to_string())?;
    fs::copy(&c.dtld, prefix.join("bin/dtld")).map_err(|e| e.to_string())?;
    fs::copy(&lib, prefix.join("lib/dtld/libdtld-lto-22.so")).map_err(|e| e.to_string())?;
    for (name, src) in [
        // write(2) and _exit(2) alone: entered at main without start files, nothing else of
        // libc is safe to call.
        (
            "a",
            "#include <unistd.h>\nint twice(int);\nstatic int helper(int x){return x + 1;}\n\
int main(void){ int v = twice(helper(20)); char b[2] = {(char)('0' + v / 10), (char)('0' + v % 10)}; write(1, b, 2); _exit(0); }\n",
        ),
        ("b", "__attribute__((noinline)) int twice(int x){return 2 * x;}\n"),
    ] {
        w.write(&format!("{name}.c"), src)?;
        w.ok(w.cmd(CLANG).args(["-c", "-O2", "-flto=thin", "-fPIC"]).arg(format!("{name}.c")).arg("-o").arg(format!("{name}.o")))?;
    }
    let run_link = |linker: &Path, out: &str| -> Result<Outcome, String> {
        let mut cmd = w.cmd(linker);
        // No compiler driver and nothing that names an LLVM: the installed dtld must find
        // its own library.
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("DTLD") {
                cmd.env_remove(k);
            }
        }
        cmd.env("PATH", "/usr/bin:/bin").args(["-e", "main", "a.o", "b.o"]).args(LIBC_ARGS).args(["-o", out]);
        w.run(&mut cmd)
    };
    let lld = run_link(Path::new(LLD), "lld")?;
    let dtld = run_link(&prefix.join("bin/dtld"), "dtld")?;
    if !lld.success() || !dtld.success() {
        return Err(format!("ld.lld-22: {} {}; installed dtld: {} {}", lld.status_text(), lld.stderr_text(), dtld.status_text(), dtld.stderr_text()));
    }
    let out = |p: &str| -> Result<String, String> { Ok(String::from_utf8_lossy(&w.run(&mut w.cmd(w.path(p)))?.stdout).into_owned()) };
    let (a, b) = (out("lld")?, out("dtld")?);
    if a != b || a != "42" {
        return Err(format!("outputs: ld.lld-22 {a:?}, dtld {b:?}"));
    }
    Ok(())
}

/// A blob embedded with `-b binary` (path as given, so `_binary_data_blob_txt_*`), printed by
/// a program entered at main (write(2) and _exit(2) only, as `installed_thin_bitcode`).
fn format_binary(c: &Context, w: &TrialDir) -> Result<(), String> {
    compile(
        w,
        "m",
        "#include <unistd.h>\nextern const char _binary_data_blob_txt_start[], _binary_data_blob_txt_end[], _binary_data_blob_txt_size[];\n\
int main(void){ long n = _binary_data_blob_txt_end - _binary_data_blob_txt_start; \
if (n != (long)_binary_data_blob_txt_size) _exit(3); write(1, _binary_data_blob_txt_start, n); _exit(0); }\n",
        &[],
    )?;
    fs::create_dir_all(w.path("data")).map_err(|e| e.to_string())?;
    w.write("data/blob.txt", "embedded by -b binary\n")?;
    let mut args = vec!["-e", "main", "m.o", "-b", "binary", "data/blob.txt", "--format=default"];
    args.extend(LIBC_ARGS);
    args.extend(["-o", "{out}"]);
    let (lld, dtld) = both(c, w, &args)?;
    if !lld.success() || !dtld.success() {
        return Err(format!("ld.lld-22: {} {}; dtld: {} {}", lld.status_text(), lld.stderr_text(), dtld.status_text(), dtld.stderr_text()));
    }
    let out = |p: &str| -> Result<String, String> { Ok(String::from_utf8_lossy(&w.run(&mut w.cmd(w.path(p)))?.stdout).into_owned()) };
    let (a, b) = (out("lld")?, out("dtld")?);
    if a != b || a != "embedded by -b binary\n" {
        return Err(format!("outputs: ld.lld-22 {a:?}, dtld {b:?}"));
    }
    // -r: the same symbols (name, value, section kind) in both objects.
    let (lld, dtld) = both(c, w, &["-r", "-m", "elf_x86_64", "-b", "binary", "data/blob.txt", "-o", "{out}.o"])?;
    if !lld.success() || !dtld.success() {
        return Err(format!("-r: ld.lld-22: {} {}; dtld: {} {}", lld.status_text(), lld.stderr_text(), dtld.status_text(), dtld.stderr_text()));
    }
    let nm = |p: &str| -> Result<String, String> { Ok(String::from_utf8_lossy(&w.run(w.cmd("llvm-nm-22").arg(p))?.stdout).into_owned()) };
    let (a, b) = (nm("lld.o")?, nm("dtld.o")?);
    if a != b || !a.contains("_binary_data_blob_txt_size") {
        return Err(format!("-r symbols differ:\n--- ld.lld-22\n{a}--- dtld\n{b}"));
    }
    Ok(())
}

/// A refused format: the same exit status and words as ld.lld-22.
fn format_words(c: &Context, w: &TrialDir, args: &[&str]) -> Result<(), String> {
    compile(w, "x", "int x;\n", &[])?;
    let mut args = args.to_vec();
    args.extend(["-o", "{out}"]);
    let (lld, dtld) = both(c, w, &args)?;
    let seen = |o: &Outcome| (o.status_text(), unname(&o.stderr_text()));
    if lld.success() || seen(&lld) != seen(&dtld) {
        return Err(format!("ld.lld-22: {:?}; dtld: {:?}", seen(&lld), seen(&dtld)));
    }
    Ok(())
}

fn sibling(c: &Context, name: &str) -> Result<PathBuf, String> {
    let p = c.dtld.with_file_name(name);
    p.is_file().then_some(p.clone()).ok_or_else(|| format!("{} does not exist (cargo build --release --workspace)", p.display()))
}

fn reapi_booleans(c: &Context, w: &TrialDir) -> Result<(), String> {
    let reapi = sibling(c, "dtld-reapi")?;
    for v in ["1", "0", "true", "false", "yes", "no", "on", "off", "TRUE"] {
        // Without an engine, dtld-reapi stops at the endpoint: the value itself was accepted.
        let r = w.run(w.cmd(&reapi).env_remove("DTLD_REAPI_ENDPOINT").env("DTLD_REAPI_LOCAL_FALLBACK", v).arg("jobs.json"))?;
        if !r.stderr_text().starts_with("dtld-reapi: error: no REAPI engine given") {
            return Err(format!("DTLD_REAPI_LOCAL_FALLBACK={v}: {}", r.stderr_text()));
        }
    }
    let r = w.run(w.cmd(&reapi).env_remove("DTLD_REAPI_ENDPOINT").env("DTLD_REAPI_LOCAL_FALLBACK", "maybe").arg("jobs.json"))?;
    let err = r.stderr_text();
    if r.status_text() != "exit 2" || !err.starts_with("dtld-reapi: error: invalid value 'maybe'") || !err.contains("DTLD_REAPI_LOCAL_FALLBACK") {
        return Err(format!("a bad value: {} {err}", r.status_text()));
    }
    Ok(())
}

fn distribute_usage(c: &Context, w: &TrialDir) -> Result<(), String> {
    let d = sibling(c, "dtld-distribute")?;
    let r = w.run(w.cmd(&d).arg("--bogus"))?;
    if r.status_text() != "exit 2" || !r.stderr_text().starts_with("dtld-distribute: error: unexpected argument '--bogus'") {
        return Err(format!("{} {}", r.status_text(), r.stderr_text()));
    }
    Ok(())
}

fn help(c: &Context, w: &TrialDir) -> Result<(), String> {
    let r = w.run(w.cmd(&c.dtld).arg("--help"))?;
    let stdout = String::from_utf8_lossy(&r.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    if !r.success() || !first.contains("ELF and COFF") || !first.contains("compatible with GNU linkers") {
        return Err(format!("--help: {first:?}"));
    }
    Ok(())
}

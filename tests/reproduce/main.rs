//! Why this exists: `--reproduce=<file.tar>` (and `LLD_REPRODUCE`) must capture a link so
//! completely that it can be replayed elsewhere, in the same layout lld uses (bug-report tooling
//! unpacks lld's archives). This target links a program whose inputs include an archive, a thin
//! archive, a linker script naming an object by absolute path and a version script, through
//! `clang-22 -fuse-ld=`, and checks:
//!
//! * `tar -tf` lists `r/response.txt`, `r/version.txt` and every input below `r/<absolute path>`;
//!   `version.txt` is `dtld --version`'s line;
//! * `response.txt` and the list of files are the ones ld.lld-22 writes for the same link;
//! * after the original inputs are deleted, `cd r && dtld @response.txt` (the archive extracted
//!   with the system `tar`) links successfully and writes a byte-identical program (the script's
//!   absolute path is found through `--chroot .`);
//! * `LLD_REPRODUCE=<file>` does the same as the option; a link that fails after loading still
//!   leaves the archive; an unwritable archive path fails with lld's message and exit 1.
//!
//! `coff.rs` does the same for lld-link's `/linkrepro:` and `/reproduce:` against lld-link-22.
//!
//! Trials work in `<target>/reproduce-tests/<trial>/`, deleted when they pass (kept on failure,
//! or always with `DTLD_HARNESS_KEEP=1`). `DTLD` names the linker under test.

mod coff;

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{check_tools, find_dtld, target_dir, CLANG, LLD, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        trial("reproduce/replay-from-tar", replay),
        trial("reproduce/env-and-errors", env_and_errors),
        trial("reproduce/coff-linkrepro", coff::linkrepro),
        trial("reproduce/coff-reproduce-and-failure", coff::reproduce_and_failure),
    ];
    libtest_mimic::run(&args, trials).exit();
}

fn trial(name: &'static str, f: fn(&Work) -> Result<(), String>) -> Trial {
    Trial::test(name, move || run_trial(name, f).map_err(Failed::from))
}

struct Work<'a> {
    dtld: PathBuf,
    t: &'a TrialDir,
}

impl std::ops::Deref for Work<'_> {
    type Target = TrialDir;
    fn deref(&self) -> &TrialDir {
        self.t
    }
}

fn run_trial(name: &str, f: fn(&Work) -> Result<(), String>) -> Result<(), String> {
    check_tools(&[CLANG, LLD, LLVM_AR, "tar", "lld-link-22"])?;
    let dtld = find_dtld()?;
    let dir = target_dir().join("reproduce-tests").join(name.replace('/', "-"));
    run_in(&dir, keep_requested(), &[], |t| f(&Work { dtld, t }))
}

impl Work<'_> {
    fn compile(&self, src: &str) -> Result<(), String> {
        let obj = src.replace(".c", ".o");
        self.ok(self.cmd(CLANG).args(["-c", "-O1"]).arg(src).arg("-o").arg(obj)).map(drop)
    }

    fn link(&self, linker: &str) -> Command {
        let mut c = self.cmd(CLANG);
        if linker == "dtld" {
            c.arg(format!("-fuse-ld={}", self.dtld.display()));
        } else {
            c.arg("-fuse-ld=lld");
        }
        c
    }

    fn tar_list(&self, tar: &str) -> Result<Vec<String>, String> {
        let o = self.ok(self.cmd("tar").arg("-tf").arg(tar))?;
        Ok(String::from_utf8_lossy(&o.stdout).lines().map(str::to_string).collect())
    }

    fn tar_member(&self, tar: &str, member: &str) -> Result<String, String> {
        let o = self.ok(self.cmd("tar").arg("-xOf").arg(tar).arg(member))?;
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }
}

/// The trial directory as `relativeToRoot` writes it (absolute, without the leading `/`).
fn rel_root(w: &Work) -> Result<String, String> {
    let abs = fs::canonicalize(&w.dir).map_err(|e| format!("canonicalize: {e}"))?;
    if abs != w.dir {
        // The archive holds the path as given; keep the trial directory free of symlinks.
        return Err(format!("trial directory {} is not canonical ({})", w.dir.display(), abs.display()));
    }
    Ok(abs.to_string_lossy().trim_start_matches('/').to_string())
}

/// main.o; libfoo.a (foo.o); libthin.a, thin, of sub/thin.o; sub/script.o named by absolute path
/// in extra.t; ver.map.
fn build_inputs(w: &Work) -> Result<(), String> {
    w.write(
        "main.c",
        "#include <stdio.h>\nint foo(void); int thin(void); int scripted(void);\n\
         int main(void) { printf(\"%d\\n\", foo() + thin() + scripted()); return 0; }\n",
    )?;
    w.write("foo.c", "int foo(void) { return 100; }\n")?;
    w.write("sub/thin.c", "int thin(void) { return 20; }\n")?;
    w.write("sub/script.c", "int scripted(void) { return 3; }\n")?;
    for c in ["main.c", "foo.c", "sub/thin.c", "sub/script.c"] {
        w.compile(c)?;
    }
    w.ok(w.cmd(LLVM_AR).args(["rc", "libfoo.a", "foo.o"]))?;
    w.ok(w.cmd(LLVM_AR).args(["rcT", "libthin.a", "sub/thin.o"]))?;
    w.write("extra.t", format!("/* names an object by absolute path */\nINPUT({})\n", w.path("sub/script.o").display()))?;
    w.write("ver.map", "{ global: main; local: *; };\n")
}

const LINK_ARGS: &[&str] = &["main.o", "extra.t", "libthin.a", "-L.", "-lfoo", "-Wl,--version-script=ver.map", "-o", "prog"];

fn replay(w: &Work) -> Result<(), String> {
    build_inputs(w)?;
    fs::create_dir_all(w.path("lld-out")).map_err(|e| e.to_string())?;
    fs::create_dir_all(w.path("out")).map_err(|e| e.to_string())?;
    // lld first (its program is overwritten by dtld's: the same `-o prog` in both commands).
    w.ok(w.link("lld").args(LINK_ARGS).arg("-Wl,--reproduce=lld-out/r.tar"))?;
    w.ok(w.link("dtld").args(LINK_ARGS).arg("-Wl,--reproduce=out/r.tar"))?;
    let ran = w.ok(&mut w.cmd(w.path("prog")))?;
    if String::from_utf8_lossy(&ran.stdout) != "123\n" {
        return Err(format!("prog printed {:?}", String::from_utf8_lossy(&ran.stdout)));
    }

    // The archive's contents.
    let root = rel_root(w)?;
    let list = w.tar_list("out/r.tar")?;
    for want in ["r/response.txt".to_string(), "r/version.txt".to_string()]
        .into_iter()
        .chain(["main.o", "extra.t", "libthin.a", "sub/thin.o", "sub/script.o", "libfoo.a", "ver.map"].iter().map(|f| format!("r/{root}/{f}")))
    {
        if !list.contains(&want) {
            return Err(format!("the archive lacks {want}; it has:\n  {}", list.join("\n  ")));
        }
    }
    if !list.iter().any(|f| f.ends_with("/libc.so.6")) {
        return Err(format!("the archive lacks libc.so.6 (named by the libc.so script):\n  {}", list.join("\n  ")));
    }
    let version = w.ok(Command::new(&w.dtld).arg("--version"))?;
    if w.tar_member("out/r.tar", "r/version.txt")? != String::from_utf8_lossy(&version.stdout) {
        return Err("version.txt is not `dtld --version`'s line".into());
    }

    // The same response file and files as lld's archive.
    let ours = w.tar_member("out/r.tar", "r/response.txt")?;
    let lld = w.tar_member("lld-out/r.tar", "r/response.txt")?;
    if ours != lld {
        return Err(format!("response.txt differs from lld's:\n--- dtld\n{ours}--- lld\n{lld}"));
    }
    if !ours.starts_with("--chroot .\n") || !ours.contains(&format!("\n{root}/main.o\n")) || !ours.contains("\n-o prog\n") {
        return Err(format!("unexpected response.txt:\n{ours}"));
    }
    let mut a = list.clone();
    let mut b = w.tar_list("lld-out/r.tar")?;
    a.sort();
    b.sort();
    if a != b {
        return Err(format!("the archive's files differ from lld's:\n  dtld: {a:?}\n  lld:  {b:?}"));
    }

    // Replay from the extracted tree alone: the trial's own inputs are gone.
    let original = fs::read(w.path("prog")).map_err(|e| e.to_string())?;
    for f in ["main.o", "extra.t", "libthin.a", "libfoo.a", "ver.map", "foo.o", "sub/thin.o", "sub/script.o"] {
        fs::remove_file(w.path(f)).map_err(|e| format!("rm {f}: {e}"))?;
    }
    fs::create_dir_all(w.path("ext")).map_err(|e| e.to_string())?;
    w.ok(w.cmd("tar").args(["-xf", "out/r.tar", "-C", "ext"]))?;
    let tree = w.path("ext/r");
    let mut relink = Command::new(&w.dtld);
    relink.current_dir(&tree).arg("@response.txt");
    w.ok(&mut relink)?;
    let again = fs::read(tree.join("prog")).map_err(|e| format!("the replay wrote no prog: {e}"))?;
    if again != original {
        return Err("the program linked from the archive differs from the original".into());
    }
    Ok(())
}

fn env_and_errors(w: &Work) -> Result<(), String> {
    build_inputs(w)?;
    // LLD_REPRODUCE instead of the option.
    w.ok(w.link("dtld").args(LINK_ARGS).env("LLD_REPRODUCE", w.path("env.tar")))?;
    let list = w.tar_list("env.tar")?;
    if !list.contains(&"env/response.txt".to_string()) || !list.iter().any(|f| f.ends_with("/libfoo.a")) {
        return Err(format!("LLD_REPRODUCE wrote no usable archive:\n  {}", list.join("\n  ")));
    }
    // A link that fails after loading (an undefined symbol) still leaves the archive.
    let o = w.run(w.cmd(&w.dtld).args(["main.o", "-o", "broken", "--reproduce=broken.tar"]))?;
    if o.success() {
        return Err("linking main.o alone should fail (undefined symbols)".into());
    }
    let list = w.tar_list("broken.tar")?;
    if !list.contains(&"broken/response.txt".to_string()) || !list.iter().any(|f| f.ends_with("/main.o")) {
        return Err(format!("a failed link left no archive:\n  {}", list.join("\n  ")));
    }
    // An unwritable archive path: lld's message, exit 1, no output.
    let bad = w.path("no-such-dir/r.tar");
    let mut msgs = Vec::new();
    for (linker, out) in [(w.dtld.as_os_str().to_owned(), "x.dtld"), (LLD.into(), "x.lld")] {
        let o = w.run(w.cmd(&linker).args(["main.o", "-o", out]).arg(format!("--reproduce={}", bad.display())))?;
        if o.status.and_then(|s| s.code()) != Some(1) || w.path(out).exists() {
            return Err(format!("{}: expected exit 1 and no output, got {}", linker.to_string_lossy(), o.status_text()));
        }
        msgs.push(o.stderr_text());
    }
    let want = format!("error: --reproduce: cannot open {}\n", bad.display());
    let first = |s: &str| s.lines().next().map(|l| format!("{l}\n")).unwrap_or_default();
    if first(&msgs[0]) != format!("dtld: {want}") {
        return Err(format!("dtld said {:?}, expected dtld: {want:?}", msgs[0]));
    }
    if !first(&msgs[1]).ends_with(&want) {
        return Err(format!("lld's wording changed: {:?}", msgs[1]));
    }
    Ok(())
}

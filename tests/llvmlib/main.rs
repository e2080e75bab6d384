//! Why this exists: `lld-link /lib` (dtld acting as llvm-lib) makes archives that build systems
//! and LLVM's DTLTO tests then link or compare, and that the differential harnesses never see.
//! This target runs the same `/lib` command lines through lld-link-22 and through dtld (a
//! symlink named `lld-link` to the binary under test) and requires the same result:
//!
//! * `archive/*` and `error/*`: each side runs in a fresh copy of the same inputs, in the same
//!   absolute directory (one after the other, so absolute paths in thin archives agree); the
//!   whole directory afterwards (the archive byte for byte, and no temporaries or partial
//!   output), stdout (`/list`, `/help`), stderr (lld-link-22's program name read as
//!   `lld-link`) and the exit status must be equal. The inputs: clang-22 objects for x64,
//!   i386 and arm64 (C and C++ with templates, vtables, TLS, weak functions, aliases, module
//!   asm, commons), ThinLTO and regular-LTO bitcode, bitcode without an irsymtab (`llvm-as`
//!   with module asm), a `/bigobj` object, an object cut in its symbol table (read as one
//!   without symbols, as LLVM does), an import library, a resource file, libraries given as
//!   input (COFF, GNU, thin), a response file; bad inputs (missing file, text file, a two-byte
//!   file, an object cut in its section table, i386 objects and bitcode mixed with x64,
//!   unknown `/machine:`, an output directory that does not exist, `/WX` without inputs).
//! * `refused/*`: what dtld does not implement (`/def:`, ARM64EC libraries) must fail with a
//!   `not supported` message, exit 1 and no output.
//! * `link/*`: an .exe linked from dtld's archive must equal the one linked from
//!   lld-link-22's, both by lld-link-22 and by dtld (native objects, and a thin archive of
//!   ThinLTO bitcode).
//! * `thin-input`: given a thin library as input, dtld stores the members' files (lld-link-22
//!   stores freed memory there, the one intended difference).
//!
//! Every trial works in `<target>/llvmlib-tests/<trial>/`, deleted when it passes (kept on
//! failure, or with `DTLD_HARNESS_KEEP=1`). Environment: `DTLD` (the binary under test, default
//! `<target>/release/dtld`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{copy_tree, find_dtld, run_tool_ok, snapshot, target_dir, CLANG, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

const LLD_LINK: &str = "lld-link-22";
const LLVM_RC: &str = "llvm-rc-22";
const LLVM_AS: &str = "llvm-as-22";
const LLVM_NM: &str = "llvm-nm-22";
/// The LLVM that rebuilds a missing irsymtab for dtld (lld-link-22 is that LLVM).
const LLVM_DIR: &str = "/usr/lib/llvm-22";

struct Context {
    /// `<root>/bin/lld-link`, a symlink to the binary under test.
    lld_link: PathBuf,
    root: PathBuf,
    keep: bool,
    /// The shared inputs, built once (`inputs/`), and the `/bigobj` object (`inputs-big/`).
    inputs: OnceLock<Result<PathBuf, String>>,
    big: OnceLock<Result<PathBuf, String>>,
}

const A_C: &str = "int foo(void){return 1;}\nint bar_data = 3;\nextern int ext(void);\nint usef(void){return ext();}\n\
static int st(void){return 2;}\nint common_thing;\n__declspec(selectany) int sel = 4;\nint (*pst)(void) = st;\n";
const B_C: &str = "int baz(void){return 2;}\nint ext(void){return 5;}\n";
const M_C: &str = "int foo(void); int baz(void); extern int bar_data;\nint main(void){ return foo() + baz() + bar_data; }\n";
const C_CC: &str = r#"template<class T> struct Box { T v; virtual T get() const { return v; } virtual ~Box() {} };
int use_box(int x) { Box<int> b; b.v = x; return b.get(); }
inline int inl(int x) { return x * 2; }
int call_inl(int y) { return inl(y); }
thread_local int tls_var = 5;
__attribute__((weak)) int weakfn(void) { return 3; }
extern "C" int alias_target(void) { return 7; }
extern "C" int alias_name(void) __attribute__((alias("alias_target")));
__asm__(".globl asm_sym\nasm_sym:\n ret\n");
int common_x;
"#;
const D_CC: &str = r#"template<class T> struct Box { T v; virtual T get() const { return v; } virtual ~Box() {} };
int use_box2(int x) { Box<int> b; b.v = x; return b.get(); }
inline int inl(int x) { return x * 2; }
int call_inl2(int y) { return inl(y) + 1; }
"#;
const E_C: &str = "__declspec(dllexport) int expfn(void){return 1;}\n__declspec(dllexport) int expdata = 3;\n\
__attribute__((weak)) int wk(void){return 2;}\nextern int wref(void) __attribute__((weak));\nint callw(void){ return wref ? wref() : 0; }\n";
const RC: &str = "1 VERSIONINFO\nBEGIN\nEND\nSTRINGTABLE\nBEGIN\n 1, \"hi\"\nEND\n";

/// One `/lib` command line; `{dir}` in an argument is the absolute working directory.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// Extra environment for both sides.
    env: &'static [(&'static str, &'static str)],
    big: bool,
}

const fn case(name: &'static str, args: &'static [&'static str]) -> Case {
    Case { name, args, env: &[], big: false }
}

const CASES: &[Case] = &[
    case("archive/objects", &["/out:x.lib", "a.o", "b.o", "c.o", "sub/long_member_name_d.o"]),
    case("archive/bitcode", &["/out:x.lib", "c.bc", "sub/d.bc", "full.bc", "b.o"]),
    case("archive/default-output", &["a.o", "b.o"]),
    case("archive/default-output-subdir", &["sub/d.bc"]),
    // The forms of LLVM's DTLTO tests (cross-project-tests/dtlto/link-*.test).
    case("archive/dtlto-thin", &["/llvmlibthin", "/out:foo.lib", "c.bc"]),
    case("archive/dtlto-thin-subdir", &["/llvmlibthin", "/out:lib/bar.lib", "c.bc"]),
    case("archive/dtlto-thin-absolute-dotdot", &["/llvmlibthin", "/out:dog.lib", "{dir}/lib/../sub/d.bc"]),
    case("archive/dtlto-regular", &["/out:t.lib", "c.bc"]),
    case("archive/thin-paths", &["/llvmlibthin", "/out:lib/x.lib", "a.o", "./sub/long_member_name_d.o", "../work/b.o", "{dir}/sub/../a.o"]),
    case("archive/regular-paths", &["/out:lib/x.lib", "a.o", "./sub/long_member_name_d.o", "{dir}/sub/../b.o"]),
    case("archive/duplicates", &["/out:x.lib", "a.o", "a.o", "./a.o"]),
    case("archive/library-inputs", &["/out:x.lib", "lib/reg.lib", "nest.lib", "r.res", "e.o"]),
    case("archive/import-library", &["/out:x.lib", "e.imp.lib"]),
    case("archive/thin-import-and-resource", &["/llvmlibthin", "/out:x.lib", "e.imp.lib", "r.res"]),
    Case { name: "archive/no-irsymtab", args: &["/out:x.lib", "noirs.bc", "a.o"], env: &[("DTLD_LLVM_DIR", LLVM_DIR)], big: false },
    case("archive/machine", &["/out:x.lib", "/machine:X64", "a.o", "c.bc"]),
    case("archive/x86", &["/out:x.lib", "a32.o", "a32.bc"]),
    case("archive/arm64", &["/out:x.lib", "arm64.o"]),
    case("archive/no-index", &["/llvmlibindex:no", "/out:x.lib", "a.o", "c.bc"]),
    case("archive/libpath", &["/libpath:sub", "/out:x.lib", "long_member_name_d.o", "a.o"]),
    Case { name: "archive/lib-env", args: &["/out:x.lib", "d.bc"], env: &[("LIB", "nowhere;sub")], big: false },
    case("archive/response-file", &["@args.rsp"]),
    case(
        "archive/spellings",
        &["-OUT:x.lib", "/?llvmlibthin", "-LlvmLibIndex", "/NOLOGO", "/verbose", "/ltcg", "/subsystem:console", "/nodefaultlib", "/nodefaultlib:libcmt", "a.o"],
    ),
    case("archive/overwrite", &["/out:old.lib", "a.o"]),
    case("archive/empty", &["/llvmlibempty", "/out:e.lib"]),
    case("archive/empty-thin", &["/llvmlibempty", "/llvmlibthin", "/out:e.lib"]),
    case("archive/no-inputs", &[]),
    case("archive/no-inputs-ignored", &["/ignore:emptyoutput"]),
    case("archive/unknown-option", &["-foo", "/out:x.lib", "a.o"]),
    case("archive/list", &["/list", "lib/reg.lib"]),
    case("archive/list-first-library", &["/list", "a.o", "lib/thin.lib", "lib/reg.lib"]),
    case("archive/list-no-library", &["/list", "a.o"]),
    case("archive/help", &["/help"]),
    case("archive/help-question-mark", &["/?"]),
    Case { name: "archive/bigobj", args: &["/out:x.lib", "big.o", "a.o"], env: &[], big: true },
    case("error/missing-file", &["/out:x.lib", "a.o", "nope.o"]),
    case("error/text-file", &["/out:x.lib", "a.o", "t.txt"]),
    case("error/tiny-file", &["tiny.o"]),
    case("archive/symbol-table-cut", &["/out:x.lib", "nosyms.o", "a.o"]),
    case("error/section-table-cut", &["/out:x.lib", "trunc.o"]),
    case("error/i386-with-x64", &["/out:x.lib", "a.o", "a32.o"]),
    case("error/i386-bitcode-with-x64", &["/out:x.lib", "a32.bc", "a.o"]),
    case("error/machine-flag-conflict", &["/out:x.lib", "/machine:x86", "a.o"]),
    case("error/unknown-machine", &["/out:x.lib", "/machine:foo", "a.o"]),
    case("error/no-output-directory", &["/out:nodir/x.lib", "a.o"]),
    case("error/no-output-name", &["/llvmlibempty"]),
    case("error/wx-without-inputs", &["/WX"]),
    case("error/lib-twice", &["/out:x.lib", "/lib", "a.o"]),
    case("error/list-missing", &["/list", "nope.o", "lib/reg.lib"]),
    case("error/old-output-kept", &["/out:old.lib", "a.o", "t.txt"]),
];

fn main() {
    let args = Arguments::from_args();
    let ctx = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    for c in CASES {
        let ctx = ctx.clone();
        trials.push(Trial::test(c.name, move || {
            let ctx = ctx.map_err(Failed::from)?;
            ctx.trial(c.name, |t| ctx.compare(t, c)).map_err(Failed::from)
        }));
    }
    let others: [(&str, fn(&Context, &TrialDir) -> Result<(), String>); 5] = [
        ("refused/def", |c, t| c.refused(t, &["/def:x.def", "/machine:x64", "/out:x.lib"])),
        ("refused/arm64ec", |c, t| c.refused(t, &["/machine:arm64ec", "/out:x.lib", "a.o"])),
        ("link/objects", |c, t| c.link(t, false)),
        ("link/thin-bitcode", |c, t| c.link(t, true)),
        ("thin-input", Context::thin_input),
    ];
    for (name, f) in others {
        let ctx = ctx.clone();
        trials.push(Trial::test(name, move || {
            let ctx = ctx.map_err(Failed::from)?;
            ctx.trial(name, |t| f(&ctx, t)).map_err(Failed::from)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// What one side printed and how it ended.
#[derive(PartialEq, Eq, Debug)]
struct Run {
    status: String,
    stdout: String,
    stderr: String,
}

impl Context {
    fn new() -> Result<Context, String> {
        dtld_tests::check_tools(&[CLANG, LLD_LINK, LLVM_AR, LLVM_RC, LLVM_AS, LLVM_NM])?;
        let dtld = find_dtld()?;
        let root = target_dir().join("llvmlib-tests");
        let bin = root.join("bin");
        fs::create_dir_all(&bin).map_err(|e| format!("mkdir {}: {e}", bin.display()))?;
        // A symlink, not a wrapper script: dtld picks the lld-link flavour from argv[0].
        let tmp = bin.join(format!(".lld-link.{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&dtld, &tmp).map_err(|e| format!("symlink {}: {e}", tmp.display()))?;
        fs::rename(&tmp, bin.join("lld-link")).map_err(|e| format!("rename {}: {e}", tmp.display()))?;
        Ok(Context { lld_link: bin.join("lld-link"), root, keep: keep_requested(), inputs: OnceLock::new(), big: OnceLock::new() })
    }

    fn trial(&self, name: &str, f: impl FnOnce(&TrialDir) -> Result<(), String>) -> Result<(), String> {
        let context = [format!("lld-link under test: {}", self.lld_link.display())];
        run_in(&self.root.join(name.replace('/', "-")), self.keep, &context, f)
    }

    fn inputs(&self) -> Result<&Path, String> {
        self.inputs.get_or_init(|| build_inputs(&self.root.join("inputs"))).as_deref().map_err(Clone::clone)
    }

    fn big_inputs(&self) -> Result<&Path, String> {
        self.big.get_or_init(|| build_big(&self.root.join("inputs-big"), self.inputs()?)).as_deref().map_err(Clone::clone)
    }

    /// Runs `args` after `/lib` with `program` in a fresh copy of `inputs` at `<trial>/work`,
    /// then moves the directory to `<trial>/<side>`.
    fn side(&self, t: &TrialDir, program: &Path, side: &str, inputs: &Path, c: &Case) -> Result<Run, String> {
        let work = t.path("work");
        copy_tree(inputs, &work)?;
        let dir = work.to_string_lossy().into_owned();
        let args: Vec<String> = c.args.iter().map(|a| a.replace("{dir}", &dir)).collect();
        let mut cmd = Command::new(program);
        cmd.current_dir(&work).arg("/lib").args(&args).envs(c.env.iter().copied()).env_remove("LINK").env_remove("_LINK_");
        if !c.env.iter().any(|(k, _)| *k == "LIB") {
            cmd.env_remove("LIB");
        }
        let o = t.run(&mut cmd)?;
        fs::rename(&work, t.path(side)).map_err(|e| format!("rename work: {e}"))?;
        let stderr = o.stderr_text().replace(&format!("{LLD_LINK}:"), "lld-link:");
        Ok(Run { status: o.status_text(), stdout: String::from_utf8_lossy(&o.stdout).into_owned(), stderr })
    }

    /// The `archive/*` and `error/*` trials: both sides must leave the same tree and print the
    /// same.
    fn compare(&self, t: &TrialDir, c: &Case) -> Result<(), String> {
        let inputs = if c.big { self.big_inputs()? } else { self.inputs()? };
        let want = self.side(t, Path::new(LLD_LINK), "lld", inputs, c)?;
        let got = self.side(t, &self.lld_link, "dtld", inputs, c)?;
        if got != want {
            return Err(format!("lld-link-22 /lib printed or ended differently:\nlld:  {want:?}\ndtld: {got:?}"));
        }
        let (lld, dtld) = (snapshot(&t.path("lld"))?, snapshot(&t.path("dtld"))?);
        let differ = differences(&lld, &dtld);
        if !differ.is_empty() {
            return Err(format!("the directories differ after the run (lld/ vs dtld/): {}", differ.join(", ")));
        }
        let before = snapshot(inputs)?;
        let made = differences(&before, &dtld);
        if c.name.starts_with("error/") && (want.status != "exit 1" || !made.is_empty()) {
            return Err(format!("an error case must exit 1 and leave nothing: {} and {made:?}", want.status));
        }
        Ok(())
    }

    /// A `/lib` command line dtld refuses: exit 1, `not supported`, nothing written.
    fn refused(&self, t: &TrialDir, args: &'static [&'static str]) -> Result<(), String> {
        let c = Case { name: "refused", args, env: &[], big: false };
        let inputs = self.inputs()?;
        let got = self.side(t, &self.lld_link, "dtld", inputs, &c)?;
        let made = differences(&snapshot(inputs)?, &snapshot(&t.path("dtld"))?);
        if got.status != "exit 1" || !got.stderr.contains("not supported") || !got.stderr.ends_with("lld-link: error: lib failed\n") || !made.is_empty() {
            return Err(format!("expected a refusal with exit 1 and no output: {got:?}, wrote {made:?}"));
        }
        Ok(())
    }

    /// An .exe from dtld's archive equals the one from lld-link-22's, linked by either.
    fn link(&self, t: &TrialDir, bitcode: bool) -> Result<(), String> {
        let ext = if bitcode { "bc" } else { "o" };
        let flags: &[&str] = if bitcode { &["-flto=thin"] } else { &[] };
        for (name, text) in [("a.c", A_C), ("b.c", B_C), ("m.c", M_C)] {
            t.write(name, text)?;
            let out = format!("{}.{ext}", &name[..1]);
            t.ok(t.cmd(CLANG).args(["--target=x86_64-pc-windows-msvc", "-c", "-O1"]).args(flags).arg(name).arg("-o").arg(out))?;
        }
        let lib_args: &[&str] = if bitcode { &["/lib", "/llvmlibthin"] } else { &["/lib"] };
        let members = [format!("a.{ext}"), format!("b.{ext}")];
        t.ok(t.cmd(LLD_LINK).args(lib_args).arg("/out:lld.lib").args(&members))?;
        t.ok(t.cmd(&self.lld_link).args(lib_args).arg("/out:dtld.lib").args(&members))?;
        if t.read("lld.lib")? != t.read("dtld.lib")? {
            return Err("the archives differ".into());
        }
        let link = |program: &Path, lib: &str, exe: &str| -> Result<Vec<u8>, String> {
            let main = format!("m.{ext}");
            let mut cmd = t.cmd(program);
            cmd.args(["/entry:main", "/nodefaultlib", "/subsystem:console", "/timestamp:1"]).arg(format!("/out:{exe}")).arg(&main).arg(lib);
            t.ok(cmd.env("DTLD_LLVM_DIR", LLVM_DIR))?;
            t.read(exe)
        };
        let want = link(Path::new(LLD_LINK), "lld.lib", "lld.exe")?;
        for (program, lib, exe) in
            [(Path::new(LLD_LINK), "dtld.lib", "lld-dtld.exe"), (&self.lld_link, "dtld.lib", "dtld.exe"), (&self.lld_link, "lld.lib", "dtld-lld.exe")]
        {
            if link(program, lib, exe)? != want {
                return Err(format!("{exe} differs from lld.exe (lld-link-22 linking lld-link-22's archive)"));
            }
        }
        Ok(())
    }

    /// A thin library given as input: dtld stores its members' files, with their symbols.
    fn thin_input(&self, t: &TrialDir) -> Result<(), String> {
        let inputs = self.inputs()?;
        let c = Case { name: "thin-input", args: &["/out:x.lib", "lib/thin.lib"], env: &[], big: false };
        let got = self.side(t, &self.lld_link, "dtld", inputs, &c)?;
        if got.status != "exit 0" {
            return Err(format!("dtld failed: {got:?}"));
        }
        let dir = t.path("dtld");
        for (member, file) in [("../a.o", "a.o"), ("../sub/long_member_name_d.o", "sub/long_member_name_d.o")] {
            let o = t.ok(Command::new(LLVM_AR).current_dir(&dir).args(["p", "x.lib", member]))?;
            if o.stdout != fs::read(dir.join(file)).map_err(|e| e.to_string())? {
                return Err(format!("member {member} of x.lib is not {file}"));
            }
        }
        // The same members as regular inputs give the same symbol tables.
        let o = t.ok(Command::new(LLVM_AR).current_dir(&dir).args(["t", "x.lib"]))?;
        if String::from_utf8_lossy(&o.stdout) != "../a.o\n../sub/long_member_name_d.o\n" {
            return Err(format!("unexpected members: {}", String::from_utf8_lossy(&o.stdout)));
        }
        let nm = |lib: &str| t.ok(Command::new(LLVM_NM).current_dir(&dir).args(["--print-armap", lib])).map(|o| o.stdout);
        t.ok(Command::new(LLD_LINK).current_dir(&dir).args(["/lib", "/out:y.lib", "sub/long_member_name_d.o", "a.o"]))?;
        let (x, y) = (nm("x.lib")?, nm("y.lib")?);
        let index = |b: &[u8]| {
            String::from_utf8_lossy(b).lines().take_while(|l| !l.is_empty()).map(|l| l.split(" in ").next().unwrap_or("").to_string()).collect::<Vec<_>>()
        };
        if index(&x) != index(&y) {
            return Err(format!("symbol index differs:\n{}\nvs\n{}", String::from_utf8_lossy(&x), String::from_utf8_lossy(&y)));
        }
        Ok(())
    }
}

/// Paths whose presence or contents differ between two snapshots.
fn differences(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> Vec<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).cloned().collect()
}

fn compile(dir: &Path, src: &str, target: &str, flags: &[&str], out: &str) -> Result<(), String> {
    run_tool_ok(Command::new(CLANG).current_dir(dir).arg(format!("--target={target}")).args(["-c", "-O1"]).args(flags).arg(src).arg("-o").arg(out)).map(drop)
}

/// The inputs every case copies: objects, bitcode and libraries of every kind llvm-lib takes,
/// and bad files.
fn build_inputs(dir: &Path) -> Result<PathBuf, String> {
    dtld_tests::fresh_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for d in ["src", "sub", "lib"] {
        fs::create_dir_all(dir.join(d)).map_err(|e| e.to_string())?;
    }
    for (name, text) in [("a.c", A_C), ("b.c", B_C), ("c.cc", C_CC), ("d.cc", D_CC), ("e.c", E_C), ("r.rc", RC)] {
        fs::write(dir.join("src").join(name), text).map_err(|e| e.to_string())?;
    }
    const X64: &str = "x86_64-pc-windows-msvc";
    let thin: &[&str] = &["-flto=thin"];
    compile(dir, "src/a.c", X64, &[], "a.o")?;
    compile(dir, "src/b.c", X64, &[], "b.o")?;
    compile(dir, "src/c.cc", X64, &[], "c.o")?;
    compile(dir, "src/d.cc", X64, &[], "sub/long_member_name_d.o")?;
    compile(dir, "src/c.cc", X64, thin, "c.bc")?;
    compile(dir, "src/d.cc", X64, thin, "sub/d.bc")?;
    compile(dir, "src/c.cc", X64, &["-flto"], "full.bc")?;
    compile(dir, "src/a.c", "i686-pc-windows-msvc", &[], "a32.o")?;
    compile(dir, "src/a.c", "i686-pc-windows-msvc", thin, "a32.bc")?;
    compile(dir, "src/a.c", "aarch64-pc-windows-msvc", &[], "arm64.o")?;
    compile(dir, "src/e.c", X64, &[], "e.o")?;
    // Bitcode without an irsymtab: llvm-as writes none for a module with module-level asm.
    compile(dir, "src/c.cc", X64, &["-S", "-emit-llvm"], "src/c.ll")?;
    run_tool_ok(Command::new(LLVM_AS).current_dir(dir).args(["src/c.ll", "-o", "noirs.bc"]))?;
    run_tool_ok(Command::new(LLVM_RC).current_dir(dir).args(["/fo", "r.res", "src/r.rc"]))?;
    run_tool_ok(Command::new(LLD_LINK).current_dir(dir).args(["/dll", "/noentry", "/out:src/e.dll", "/implib:e.imp.lib", "e.o"]))?;
    run_tool_ok(Command::new(LLVM_AR).current_dir(dir).args(["rc", "src/gnu.a", "a.o", "b.o"]))?;
    run_tool_ok(Command::new(LLD_LINK).current_dir(dir).args(["/lib", "/out:nest.lib", "e.imp.lib", "src/gnu.a"]))?;
    run_tool_ok(Command::new(LLD_LINK).current_dir(dir).args(["/lib", "/out:lib/reg.lib", "b.o", "sub/d.bc", "c.bc"]))?;
    run_tool_ok(Command::new(LLD_LINK).current_dir(dir).args(["/lib", "/llvmlibthin", "/out:lib/thin.lib", "a.o", "sub/long_member_name_d.o"]))?;
    let a = fs::read(dir.join("a.o")).map_err(|e| e.to_string())?;
    let files: [(&str, &[u8]); 6] = [
        ("t.txt", b"hello\n"),
        ("tiny.o", b"\x64\x86"),
        ("trunc.o", &a[..40]),
        ("nosyms.o", &a[..300]),
        ("old.lib", b"not an archive\n"),
        ("args.rsp", b"/out:rsp.lib a.o \"b.o\"\n"),
    ];
    for (name, bytes) in files {
        fs::write(dir.join(name), bytes).map_err(|e| e.to_string())?;
    }
    fs::remove_dir_all(dir.join("src")).map_err(|e| e.to_string())?;
    Ok(dir.to_path_buf())
}

/// `a.o` and an object of 66,000 sections, which LLVM writes in the `/bigobj` format.
fn build_big(dir: &Path, inputs: &Path) -> Result<PathBuf, String> {
    dtld_tests::fresh_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut s = String::new();
    for i in 0..66_000 {
        s.push_str(&format!(".section .text$f{i},\"xr\"\n.globl f{i}\nf{i}:\n ret\n"));
    }
    fs::write(dir.join("big.s"), s).map_err(|e| e.to_string())?;
    compile(dir, "big.s", "x86_64-pc-windows-msvc", &[], "big.o")?;
    fs::remove_file(dir.join("big.s")).map_err(|e| e.to_string())?;
    fs::copy(inputs.join("a.o"), dir.join("a.o")).map_err(|e| e.to_string())?;
    Ok(dir.to_path_buf())
}

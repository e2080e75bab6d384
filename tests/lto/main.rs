//! Why this exists: ThinLTO has behaviours that the differential fixtures (which only compare
//! the linked programs) cannot see. This target checks them against ld.lld-22 on the same
//! inputs, or, where lld has no equivalent, against dtld's own documented contract:
//!
//! * `index-only[/...]`: distributed ThinLTO. `--thinlto-index-only[=file]` must write the same
//!   files as lld (`<module>.thinlto.bc`, `<module>.imports`, the list file) with the same
//!   contents (`.thinlto.bc` byte for byte; as `llvm-dis` text for the `llvm-lto2` variant), including the empty index files lld
//!   writes for unextracted lazy archive members, and no program. Variants cover
//!   `--thinlto-prefix-replace=` and `--thinlto-object-suffix-replace=` (with minimized
//!   `-fthin-link-bitcode=` inputs), the option without `=file`, and the thin link's other
//!   paths (`llvm-lto2`, LLVMgold in a fork of dtld, and LLVMgold in the exec'd helper). The
//!   default path must be dtld's in-process library (`--verbose` says so).
//! * `cache/dtld-only`: `--thinlto-cache-dir=` reuses backend results. dtld reports them with
//!   `--verbose` as `dtld: thinlto: N modules, C compiled, K cached`: 3/3/0 on the first link,
//!   3/0/3 on relinks of unchanged inputs (to the same output name, then to another one, as
//!   lld's cache keys ignore it), and 3/1-or-2/rest after changing one module that imports
//!   nothing and is imported by nobody. lld has no such line, so this trial is ignored when the
//!   linker under test is lld.
//! * `link-cache/{in-process,in-process-llvm-lto2,dtlto}/dtld-only`: with a cache directory
//!   (in-process ThinLTO through dtld's in-process library, which must be used, or through
//!   `llvm-lto2`; or DTLTO), a relink whose inputs
//!   and options did not change reuses the previous link's LTO result and skips the thin link
//!   (`--verbose` says so); its program is byte for byte the one a link with an empty cache
//!   writes. Changing one module, or an LTO option, takes the normal path again; a damaged
//!   link-cache entry is not used (the link takes the normal path, writes the same program,
//!   and stores a good entry that the next relink uses), nor is a damaged entry of the store of
//!   archive members (`.dtld/member-*`) the staging links from (which the library, staging
//!   nothing, must not create).
//! * `staging/persistent`: in-process ThinLTO by `llvm-lto2` with a cache directory keeps its staging tree
//!   in the cache (`.dtld/stage-*`) from one link of an output to the next. Relinks that change
//!   a module and drop another (so a `lto.<task>` object of the previous link is left over) must
//!   print what ld.lld-22's program of the same inputs prints, be byte for byte the program of a
//!   link with an empty cache, reuse the unchanged module's staged entry and rewrite `lto.1` in
//!   place (same inodes), keep nothing of a module no longer linked, and leave no
//!   `<output>.dtld-lto` next to the output.
//! * `errors/...`: bad bitcode (both linkers must fail; the linker under test with exit 1, an
//!   error line, and no output or temporary file left anywhere), and two dtld-only contracts:
//!   bitcode from a newer LLVM than the one found, and no usable LLVM at all (dtld run
//!   directly, no `-plugin`, `PATH=/usr/bin` whose LLVM 14 tools must not be used).
//! * `options/backend`: the backend options lld sets in LLVM's LTO configuration reach the
//!   backends as in lld. A `-g -gsplit-dwarf` build (clang passes `-plugin-opt=dwo_dir=`)
//!   linked with optimization remarks, a statistics file, a sample profile and the basic-block
//!   address map: the same files as lld's link (`.dwo` files and per-backend remarks byte for
//!   byte), the same program output, the address map section of the same size. Options that
//!   reach LLVM must fail as lld's links fail: a missing sample or CS profile. A malformed pass
//!   pipeline, which stops lld with LLVM's fatal error, is a clean `dtld: error:` (exit 1,
//!   nothing left behind).
//! * `options/not-implemented/dtld-only`: no silent acceptance. An option that no path of dtld
//!   implements warns (`--lto-partitions=2`: `... is not supported; ignored`) when ignoring it
//!   keeps the program's meaning, and is a clean error otherwise (`--lto-emit-asm`,
//!   `--thinlto-single-module=`); with DTLTO, whose backend command line is lld's (no CS-PGO,
//!   no DWO directory), `--lto-cs-profile-generate` is an error and `dwo_dir` a warning.
//! * `llvm/from-parent-clang/dtld-only`: clang runs dtld as its `ld.lld` (no `-plugin`), and
//!   dtld finds the LLVM of that clang although the link runs in a forked child.
//!
//! Inputs are built with `/usr/lib/llvm-22/bin/clang -flto=thin -O2 -c` and
//! `/usr/lib/llvm-22/bin/llvm-ar`. Every trial works in `<target>/lto-tests/<trial>/`, which is
//! recreated for each run and deleted when the trial passes (kept on failure, or always with
//! `DTLD_HARNESS_KEEP=1`).
//!
//! Environment: `DTLD` (linker under test, default `<target>/release/dtld`, as for the
//! differential harness); `DTLD_ERROR_PREFIX` (the error-line prefix the `errors/` trials
//! require; default `dtld: error: `, or any `<...ld.lld...>: error: ` when the linker under test
//! identifies itself as LLD, so the target can be self-tested with a wrapper that runs lld).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{changes, copy_tree, find_dtld, lock_target_subdir, shell_quote, snapshot, split_words, target_dir, Linker};
use libtest_mimic::{Arguments, Failed, Trial};
use regex::Regex;

/// The LLVM that builds the inputs and whose clang drives the links.
const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

fn llvm(tool: &str) -> PathBuf {
    Path::new(LLVM_BIN).join(tool)
}

struct Context {
    dtld: PathBuf,
    /// The linker under test says it is LLD (`--version`): the self-test with a wrapper.
    dtld_is_lld: bool,
    root: PathBuf,
    keep: bool,
}

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("lto-tests", "lto test");
    let ctx = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    let mut add = |name: &str, ignored: bool, f: fn(&Work) -> Result<(), String>| {
        let ctx = ctx.clone();
        let name_owned = name.to_string();
        trials.push(
            Trial::test(name, move || {
                let ctx = ctx.map_err(Failed::from)?;
                run_trial(&ctx, &name_owned, f).map_err(Failed::from)
            })
            .with_ignored_flag(ignored),
        );
    };
    let lld = ctx.as_ref().is_ok_and(|c| c.dtld_is_lld);
    add("index-only", false, |t| index_only(t, IndexVariant::Plain));
    add("index-only/no-file", false, |t| index_only(t, IndexVariant::NoFile));
    add("index-only/prefix-replace", false, |t| index_only(t, IndexVariant::PrefixReplace));
    add("index-only/object-suffix-replace", false, |t| index_only(t, IndexVariant::SuffixReplace));
    add("index-only/llvm-lto2", false, |t| index_only(t, IndexVariant::Lto2));
    add("index-only/helper", false, |t| index_only(t, IndexVariant::Helper));
    add("index-only/gold", false, |t| index_only(t, IndexVariant::Gold));
    add("index-only/lto-obj-path", false, |t| index_only(t, IndexVariant::ObjPath));
    // lld prints no `dtld: thinlto:` line; ignored (not failed) in the lld self-test.
    add("cache/dtld-only", lld, cache);
    add("cache/policy", false, cache_policy);
    add("link-cache/in-process/dtld-only", lld, |t| link_cache(t, CacheMode::Library));
    add("link-cache/in-process-llvm-lto2/dtld-only", lld, |t| link_cache(t, CacheMode::Lto2));
    add("link-cache/dtlto/dtld-only", lld, |t| link_cache(t, CacheMode::Dtlto));
    // lld has no staging tree; the programs are compared with lld's all the same.
    add("staging/persistent/dtld-only", lld, persistent_staging);
    add("errors/truncated-bitcode", false, |t| bad_bitcode(t, BadBitcode::Truncated));
    add("errors/garbage-after-magic", false, |t| bad_bitcode(t, BadBitcode::Garbage));
    add("errors/llvm-names-modules", false, llvm_names_modules);
    // lld rebuilds the symbol table of bitcode from another producer from the IR and links it.
    add("errors/newer-producer/dtld-only", lld, newer_producer);
    // lld has LLVM built in and links bitcode without any plugin.
    add("errors/no-usable-llvm/dtld-only", lld, no_usable_llvm);
    add("libcall-archive", false, libcall_archive);
    // dtld on bitcode with nothing naming LLVM uses its own library's, as lld its built-in one.
    add("llvm/own-library", false, llvm_own_library);
    // lld has LLVM built in: nothing to discover.
    add("llvm/from-parent-clang/dtld-only", lld, llvm_from_parent_clang);
    add("options/backend", false, backend_options);
    add("options/time-passes", false, time_passes);
    add("options/fatal-warnings-llvm", false, fatal_llvm_warnings);
    // lld implements the options dtld refuses, and prints no such warnings.
    add("options/not-implemented/dtld-only", lld, not_implemented_options);
    libtest_mimic::run(&args, trials).exit();
}

impl Context {
    fn new() -> Result<Context, String> {
        for tool in ["clang", "llvm-ar", "llvm-dis"] {
            if !llvm(tool).is_file() {
                return Err(format!("{} is missing (install clang-22 / llvm-22)", llvm(tool).display()));
            }
        }
        let dtld = find_dtld()?;
        let version = Command::new(&dtld).arg("--version").output().map_err(|e| format!("cannot run {} --version: {e}", dtld.display()))?;
        let text = String::from_utf8_lossy(&version.stdout);
        let dtld_is_lld = text.contains("LLD ") && !text.starts_with("dtld");
        Ok(Context { dtld, dtld_is_lld, root: target_dir().join("lto-tests"), keep: keep_requested() })
    }

    /// Whether `line` is an error line of the linker under test.
    fn is_error_line(&self, line: &str) -> bool {
        if let Ok(prefix) = std::env::var("DTLD_ERROR_PREFIX") {
            return line.starts_with(&prefix);
        }
        if self.dtld_is_lld {
            Regex::new(r"^\S*ld\.lld\S*: error: ").expect("valid regex").is_match(line)
        } else {
            line.starts_with("dtld: error: ")
        }
    }
}

/// One trial's state: its directory and the commands run so far (printed on failure).
struct Work<'a> {
    ctx: &'a Context,
    t: &'a TrialDir,
}

impl std::ops::Deref for Work<'_> {
    type Target = TrialDir;
    fn deref(&self) -> &TrialDir {
        self.t
    }
}

fn run_trial(ctx: &Context, name: &str, f: fn(&Work) -> Result<(), String>) -> Result<(), String> {
    let context = [format!("linker under test: {}", ctx.dtld.display())];
    run_in(&ctx.root.join(name.replace('/', "-")), ctx.keep, &context, |t| f(&Work { ctx, t }))
}

impl Work<'_> {
    /// Runs a linked program of the trial (in the trial directory); its stdout, or an error
    /// with its status and stderr when it fails.
    fn run_program(&self, out: &str) -> Result<String, String> {
        let mut run = Command::new(self.path(out));
        run.current_dir(&self.dir);
        let r = self.run(&mut run)?;
        if !r.success() {
            return Err(format!("{out} failed ({}):\n{}", r.status_text(), r.stderr_text()));
        }
        Ok(String::from_utf8_lossy(&r.stdout).into_owned())
    }

    /// `clang -c` in `cwd` (relative to the trial directory).
    fn compile(&self, cwd: &str, src: &str, out: &str, flags: &[&str]) -> Result<(), String> {
        let mut cmd = Command::new(llvm("clang"));
        cmd.current_dir(self.path(cwd)).arg("-c").args(flags).arg(src).arg("-o").arg(out);
        self.ok(&mut cmd).map(drop)
    }

    fn ar(&self, cwd: &str, flags: &str, archive: &str, members: &[&str]) -> Result<(), String> {
        let mut cmd = Command::new(llvm("llvm-ar"));
        cmd.current_dir(self.path(cwd)).arg(flags).arg(archive).args(members);
        self.ok(&mut cmd).map(drop)
    }

    /// A clang link command run in `cwd`, using the linker under test or ld.lld-22.
    fn clang_link(&self, cwd: &Path, linker: Linker) -> Command {
        let mut cmd = Command::new(llvm("clang"));
        cmd.current_dir(cwd);
        cmd.arg(linker.fuse_ld(&self.ctx.dtld));
        cmd
    }
}

// ---- index-only ---------------------------------------------------------------------------

/// main.o and a.o (bitcode), libb.a (b.o pulled, d.o an unused lazy member that would be a
/// duplicate definition of shared_name), libthin.a (thin archive with c.o, pulled by b.o), n.o
/// (native, calls a_fn). Imports: main.o from a.o, libb.a(b.o) and libthin.a(c.o); b.o from c.o.
const IO_MAIN: &str = r#"
int a_fn(int), b_fn(int), n_fn(int);
const char *shared_name(void) { return "main"; }
int main(void) { return a_fn(1) + b_fn(2) + n_fn(3) == 0 && shared_name()[0] == 'x'; }
"#;
const IO_A: &str = "int a_fn(int x) { return x + 1; }\n";
const IO_B: &str = "int c_fn(int);\nint b_fn(int x) { return c_fn(x) * 2; }\n";
const IO_C: &str = "int c_fn(int x) { return x * 3; }\n";
const IO_D: &str = "const char *shared_name(void) { return \"d\"; }\nint d_fn(int x) { return x - 1; }\n";
const IO_N: &str = "int a_fn(int);\nint n_fn(int x) { return a_fn(x) + 4; }\n";

#[derive(Clone, Copy, PartialEq, Eq)]
enum IndexVariant {
    /// `--thinlto-index-only=linked.txt --thinlto-emit-imports-files`
    Plain,
    /// `--thinlto-index-only --thinlto-emit-imports-files` (no list file)
    NoFile,
    /// inputs under `in/`, `--thinlto-prefix-replace=in/;out/`
    PrefixReplace,
    /// minimized `-fthin-link-bitcode=x.min.o` inputs, `--thinlto-object-suffix-replace=.min.o;.o`
    SuffixReplace,
    /// `Plain` with dtld's thin link by `llvm-lto2` (`DTLD_THIN_LINK=llvm-lto2`): the path for
    /// resolutions LLVMgold cannot be told. Its skip indexes are dtld's own (same meaning,
    /// other bytes), so index files are compared as `llvm-dis` text.
    Lto2,
    /// `Plain` with LLVMgold in the exec'd helper (`DTLD_THIN_LINK=helper`) instead of a fork of
    /// dtld: the path of a process that cannot fork. Byte for byte lld's files, as the fork's.
    Helper,
    /// `Plain` with LLVMgold in a fork of dtld (`DTLD_THIN_LINK=gold`): the path of an LLVM
    /// installation without dtld's in-process library. Byte for byte lld's files.
    Gold,
    /// `Plain` with `--lto-obj-path=lto.o`: lld writes the (empty) regular-LTO partition's
    /// object there although every module is ThinLTO. Compared by its symbols (`llvm-nm -a`)
    /// and its kind, since LLVM's code generator and dtld write the empty object differently.
    ObjPath,
}

fn index_only(t: &Work, variant: IndexVariant) -> Result<(), String> {
    // Build the inputs once, in src/ (src/in/ for the prefix variant).
    let sub = if variant == IndexVariant::PrefixReplace { "src/in" } else { "src" };
    for (name, text) in [("main.c", IO_MAIN), ("a.c", IO_A), ("b.c", IO_B), ("c.c", IO_C), ("d.c", IO_D), ("n.c", IO_N)] {
        t.write(&format!("{sub}/{name}"), text)?;
    }
    let bitcode = ["main", "a", "b", "c", "d"];
    let suffix = variant == IndexVariant::SuffixReplace;
    for stem in bitcode {
        let (src, obj, min) = (format!("{stem}.c"), format!("{stem}.o"), format!("-fthin-link-bitcode={stem}.min.o"));
        let mut flags = vec!["-flto=thin", "-O2"];
        if suffix {
            flags.push(&min);
        }
        t.compile(sub, &src, &obj, &flags)?;
    }
    t.compile(sub, "n.c", "n.o", &["-O2"])?;
    let obj = |stem: &str| {
        if suffix {
            format!("{stem}.min.o")
        } else {
            format!("{stem}.o")
        }
    };
    // llvm-ar cannot read the symbols of minimized bitcode, so those archives get no index.
    let (ar_flags, thin_flags) = if suffix { ("rcS", "rcST") } else { ("rcs", "rcsT") };
    t.ar(sub, ar_flags, "libb.a", &[&obj("b"), &obj("d")])?;
    t.ar(sub, thin_flags, "libthin.a", &[&obj("c")])?;
    for stem in ["main", "a", "b", "c", "d", "n"] {
        let p = t.path(&format!("{sub}/{stem}.o"));
        if !p.is_file() {
            return Err(format!("{} was not built", p.display()));
        }
    }

    let prefix = if variant == IndexVariant::PrefixReplace { "in/" } else { "" };
    let inputs: Vec<String> = [obj("main"), obj("a"), "libb.a".into(), "libthin.a".into(), "n.o".into()].iter().map(|f| format!("{prefix}{f}")).collect();
    let mut wl: Vec<&str> = Vec::new();
    match variant {
        IndexVariant::NoFile => wl.push("-Wl,--thinlto-index-only"),
        _ => wl.push("-Wl,--thinlto-index-only=linked.txt"),
    }
    wl.push("-Wl,--thinlto-emit-imports-files");
    match variant {
        IndexVariant::PrefixReplace => wl.push("-Wl,--thinlto-prefix-replace=in/;out/"),
        IndexVariant::SuffixReplace => wl.push("-Wl,--thinlto-object-suffix-replace=.min.o;.o"),
        IndexVariant::ObjPath => wl.push("-Wl,--lto-obj-path=lto.o"),
        _ => {}
    }

    let mut created = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let dir = t.path(linker.name());
        copy_tree(&t.path("src"), &dir)?;
        let before = snapshot(&dir)?;
        let mut cmd = t.clang_link(&dir, linker);
        cmd.arg("-flto=thin").args(&wl).args(&inputs).arg("-o").arg("prog");
        match variant {
            IndexVariant::Lto2 => {
                cmd.env("DTLD_THIN_LINK", "llvm-lto2");
            }
            IndexVariant::Helper => {
                cmd.env("DTLD_THIN_LINK", "helper");
            }
            IndexVariant::Gold => {
                cmd.env("DTLD_THIN_LINK", "gold");
            }
            IndexVariant::Plain if linker == Linker::Dtld => {
                // The default path: the in-process library, which must be there and be used.
                cmd.arg("-Wl,--verbose");
            }
            _ => {}
        }
        let out = t.run(&mut cmd)?;
        if !out.success() {
            return Err(format!("the {} link failed ({}):\n{}", linker.name(), out.status_text(), out.stderr_text()));
        }
        if variant == IndexVariant::Plain && linker == Linker::Dtld {
            in_process_used(&out.stderr_text())?;
        }
        let after = snapshot(&dir)?;
        let new = changes(&before, &after);
        if new.iter().any(|f| f == "prog") {
            return Err(format!("{} wrote a program with --thinlto-index-only", linker.name()));
        }
        created.push(new);
    }
    let (ours, theirs) = (&created[0], &created[1]);
    // Guard against a broken trial: lld must have written the index of main's module.
    let main_index = match variant {
        IndexVariant::PrefixReplace => "out/main.o.thinlto.bc",
        _ => "main.o.thinlto.bc",
    };
    if !theirs.iter().any(|f| f == main_index) {
        return Err(format!("lld did not write {main_index} (trial bug?); it wrote: {theirs:?}"));
    }
    let mut problems = Vec::new();
    if ours != theirs {
        problems.push(format!(
            "different files created or changed:\n  dtld only: {:?}\n  lld only:  {:?}",
            ours.iter().filter(|f| !theirs.contains(f)).collect::<Vec<_>>(),
            theirs.iter().filter(|f| !ours.contains(f)).collect::<Vec<_>>()
        ));
    }
    for rel in ours.iter().filter(|f| theirs.contains(f) && !f.ends_with('/')) {
        let (a, b) = (t.path("dtld").join(rel), t.path("lld").join(rel));
        // LLVMgold writes every index file with lld's own code: the same bytes.
        let (a_text, b_text) = if rel.ends_with(".thinlto.bc") && variant != IndexVariant::Lto2 && !t.ctx.dtld_is_lld {
            let read = |p: &Path| fs::read(p).map_err(|e| format!("read {}: {e}", p.display()));
            let (a, b) = (read(&a)?, read(&b)?);
            if a != b {
                problems.push(format!("{rel}: {} bytes from dtld, {} from lld, not the same", a.len(), b.len()));
            }
            continue;
        } else if rel.ends_with(".thinlto.bc") {
            (disassemble(t, "dtld", rel)?, disassemble(t, "lld", rel)?)
        } else if rel == "lto.o" {
            (object_summary(t, "dtld", rel)?, object_summary(t, "lld", rel)?)
        } else {
            let read = |p: &Path| fs::read(p).map_err(|e| format!("read {}: {e}", p.display()));
            (String::from_utf8_lossy(&read(&a)?).into_owned(), String::from_utf8_lossy(&read(&b)?).into_owned())
        };
        if a_text != b_text {
            problems.push(format!("{rel} differs:\n{}", first_difference(&a_text, &b_text)));
        }
    }
    if variant == IndexVariant::Plain && problems.is_empty() {
        rerun_index_only(t, &wl, &inputs, ours)?;
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The same index-only link run again by dtld, after one index file was damaged and another
/// given an old modification time: every file holds lld's bytes again, and each (rewritten or
/// found identical) has a new modification time, as if written (build systems compare them).
fn rerun_index_only(t: &Work, wl: &[&str], inputs: &[String], files: &[String]) -> Result<(), String> {
    let dir = t.path("dtld");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    let set_old = |rel: &str| fs::File::options().write(true).open(dir.join(rel)).and_then(|f| f.set_modified(old)).map_err(|e| format!("{rel}: {e}"));
    set_old("main.o.thinlto.bc")?;
    fs::write(dir.join("a.o.thinlto.bc"), b"not an index").map_err(|e| e.to_string())?;
    set_old("a.o.thinlto.bc")?;
    let mut cmd = t.clang_link(&dir, Linker::Dtld);
    cmd.arg("-flto=thin").args(wl).args(inputs).arg("-o").arg("prog");
    let out = t.run(&mut cmd)?;
    if !out.success() {
        return Err(format!("the second dtld link failed ({}):\n{}", out.status_text(), out.stderr_text()));
    }
    let mut problems = Vec::new();
    for rel in files.iter().filter(|f| f.ends_with(".thinlto.bc") || f.ends_with(".imports")) {
        let (a, b) = (fs::read(dir.join(rel)).map_err(|e| e.to_string())?, fs::read(t.path("lld").join(rel)).map_err(|e| e.to_string())?);
        if a != b {
            problems.push(format!("{rel}: not lld's bytes after the second link"));
        }
    }
    for rel in ["main.o.thinlto.bc", "a.o.thinlto.bc"] {
        let m = fs::metadata(dir.join(rel)).and_then(|m| m.modified()).map_err(|e| e.to_string())?;
        if m <= old {
            problems.push(format!("{rel}: the second link left its modification time as it was"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// `llvm-dis` of an index file, run in the copy's directory with the relative name, with the
/// file name the tool prints (`; ModuleID = '...'`, `source_filename = "..."`) normalised.
/// What an object is and defines: `llvm-readobj --file-header`'s format line and `llvm-nm -a`.
fn object_summary(t: &Work, copy: &str, rel: &str) -> Result<String, String> {
    let mut nm = Command::new(llvm("llvm-nm"));
    nm.current_dir(t.path(copy)).args(["-a", rel]);
    let mut ro = Command::new(llvm("llvm-readobj"));
    ro.current_dir(t.path(copy)).args(["--file-header", rel]);
    let format =
        String::from_utf8_lossy(&t.ok(&mut ro)?.stdout).lines().filter(|l| l.starts_with("Format:") || l.contains("Type:")).collect::<Vec<_>>().join("\n");
    Ok(format!("{format}\n{}", String::from_utf8_lossy(&t.ok(&mut nm)?.stdout)))
}

fn disassemble(t: &Work, copy: &str, rel: &str) -> Result<String, String> {
    let mut cmd = Command::new(llvm("llvm-dis"));
    cmd.current_dir(t.path(copy)).arg(rel).arg("-o").arg("-");
    let out = t.ok(&mut cmd)?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(text
        .lines()
        .map(|l| if l.starts_with("; ModuleID = ") || l.starts_with("source_filename = ") { l.replace(rel, "<file>") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n"))
}

fn first_difference(a: &str, b: &str) -> String {
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = al.iter().zip(&bl).position(|(x, y)| x != y).unwrap_or(al.len().min(bl.len()));
    format!("  first difference at line {}:\n  dtld: {}\n  lld:  {}", i + 1, al.get(i).unwrap_or(&"<end of file>"), bl.get(i).unwrap_or(&"<end of file>"))
}

// ---- cache --------------------------------------------------------------------------------

/// main.c calls mid_value (so main.o imports from mid.o) and reaches leaf_value only through a
/// pointer: ThinLTO imports along call edges, so no module imports from leaf.o and leaf.o
/// imports nothing. Changing leaf.c must therefore recompile leaf.o's backend only.
const CACHE_MAIN: &str = r#"
#include <stdio.h>
int mid_value(int);
int leaf_value(int);
int (*volatile leaf_ptr)(int) = leaf_value;
int main(void) {
  printf("mid=%d leaf=%d\n", mid_value(3), leaf_ptr(4));
  return 0;
}
"#;
const CACHE_MID: &str = "int mid_value(int x) { return x * 11; }\n";

fn cache_leaf(value: i32) -> String {
    format!("int leaf_value(int x) {{ return x + {value}; }}\n")
}

/// The numbers of `dtld: thinlto: N modules, C compiled, K cached` (exactly one such line).
fn thinlto_stats(stderr: &str) -> Result<(u32, u32, u32), String> {
    let re = Regex::new(r"^dtld: thinlto: (\d+) modules?, (\d+) compiled, (\d+) cached$").expect("valid regex");
    let found: Vec<(u32, u32, u32)> =
        stderr.lines().filter_map(|l| re.captures(l)).map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap(), c[3].parse().unwrap())).collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("no `dtld: thinlto: N modules, C compiled, K cached` line in the --verbose output:\n{stderr}")),
        _ => Err(format!("more than one `dtld: thinlto:` line:\n{stderr}")),
    }
}

/// `-mllvm -time-passes`: LLVM's timing reports on stderr, as ld.lld-22 prints them (the
/// in-process library printed none: LLVM prints them when it shuts down, which dtld never
/// does), and the same program.
fn time_passes(t: &Work) -> Result<(), String> {
    t.write("main.c", CACHE_MAIN)?;
    t.write("mid.c", CACHE_MID)?;
    t.write("leaf.c", cache_leaf(100))?;
    for stem in ["main", "mid", "leaf"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2"])?;
    }
    let mut said = Vec::new();
    for (linker, out) in [(Linker::Dtld, "prog"), (Linker::Lld, "prog-lld")] {
        let mut cmd = t.clang_link(&t.dir, linker);
        cmd.args(["-flto=thin", "-Wl,-mllvm,-time-passes", "main.o", "mid.o", "leaf.o", "-o", out]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("{out}: the link failed ({}):\n{}", o.status_text(), o.stderr_text()));
        }
        let text = o.stderr_text();
        let mut reports: Vec<&str> = text.lines().map(str::trim).filter(|l| l.ends_with("execution timing report")).collect();
        reports.sort_unstable();
        if reports.is_empty() || !text.contains("Total Execution Time") {
            return Err(format!("{out}: no LLVM timing report on stderr:\n{text}"));
        }
        said.push((reports.join(", "), t.run_program(out)?));
    }
    if said[0] != said[1] {
        return Err(format!("dtld printed the reports and ran as {:?}, ld.lld-22 as {:?}", said[0], said[1]));
    }
    Ok(())
}

/// An LLVM warning during LTO is a linker warning, as in lld: `--fatal-warnings` makes it an
/// error (exit 1, nothing written) and `--no-warnings` silences it. Two modules whose module
/// flag `foo` (behaviour Warning) conflict, merged by regular LTO: ld.lld-22 and dtld must give
/// the same verdicts and words in the three modes (dtld once exited 0 under
/// `--fatal-warnings`).
fn fatal_llvm_warnings(t: &Work) -> Result<(), String> {
    const LAYOUT: &str =
        "target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128\"\ntarget triple = \"x86_64-pc-linux-gnu\"\n";
    t.write("main.ll", format!("{LAYOUT}define i32 @main() {{ ret i32 0 }}\n"))?;
    for i in 1..=2 {
        t.write(
            &format!("m{i}.ll"),
            format!("{LAYOUT}define i32 @f{i}() {{ ret i32 {i} }}\n!llvm.module.flags = !{{!0}}\n!0 = !{{i32 2, !\"foo\", i32 {i}}}\n"),
        )?;
    }
    for stem in ["main", "m1", "m2"] {
        let o = t.run(Command::new(llvm("llvm-as")).current_dir(&t.dir).args([&format!("{stem}.ll"), "-o", &format!("{stem}.o")]))?;
        if !o.success() {
            return Err(format!("llvm-as {stem}.ll failed:\n{}", o.stderr_text()));
        }
    }
    // dtld's two paths: LLVM in its process (the library), and `llvm-lto2` in a child whose
    // stderr dtld passes on through its diagnostics.
    for (path, flags) in ["", "llvm-lto2"].into_iter().flat_map(|p| [&[][..], &["--fatal-warnings"][..], &["--no-warnings"][..]].map(|f| (p, f))) {
        let mut said = Vec::new();
        for (linker, out) in [(t.ctx.dtld.clone(), "x.dtld"), (llvm("ld.lld"), "x.lld")] {
            let _ = std::fs::remove_file(t.path(out));
            let mut cmd = Command::new(&linker);
            if !path.is_empty() {
                cmd.env("DTLD_THIN_LINK", path);
            }
            let o = t.run(cmd.current_dir(&t.dir).args(flags).args(["main.o", "m1.o", "m2.o", "-e", "main", "-o", out]))?;
            let text = o.stderr_text().replace(out, "OUT").replace("ld.lld-22: ", "LINKER: ").replace("ld.lld: ", "LINKER: ").replace("dtld: ", "LINKER: ");
            said.push((o.success(), t.path(out).exists(), text));
        }
        if said[0] != said[1] {
            return Err(format!("{flags:?} (DTLD_THIN_LINK={path:?}): dtld (exit 0, output, stderr) {:?}, ld.lld-22 {:?}", said[0], said[1]));
        }
    }
    Ok(())
}

/// `--thinlto-cache-policy` as LLVM's `pruneCache` applies it, against ld.lld-22: each linker
/// gets its own cache directory, seeded with files of the same names, sizes and ages, and runs
/// the same sequence of links (expiry, size and file-count limits, limits of 0 meaning none,
/// files not named `llvmcache-*` left alone, least recently used removed first). After each,
/// the names left in the directory (not dtld's own `.dtld/`) and LLVM's warnings on stderr must
/// be the same.
fn cache_policy(t: &Work) -> Result<(), String> {
    t.write("main.c", CACHE_MAIN)?;
    t.write("mid.c", CACHE_MID)?;
    t.write("leaf.c", cache_leaf(7))?;
    for stem in ["main", "mid", "leaf"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2"])?;
    }
    let age = |p: &Path, when: std::time::SystemTime| -> Result<(), String> {
        fs::File::options()
            .write(true)
            .open(p)
            .and_then(|f| f.set_times(fs::FileTimes::new().set_accessed(when).set_modified(when)))
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    // (policy, files to plant first: (name, size, seconds old))
    let steps: &[(&str, &[(&str, usize, u64)])] = &[
        ("prune_after=1h:prune_interval=0s", &[("llvmcache-old", 10, 7200), ("unrelated", 10, 7200)]),
        ("cache_size_bytes=128k:prune_interval=0s", &[("llvmcache-big", 65537, 0)]),
        ("cache_size_bytes=32k:prune_interval=0s", &[]),
        ("prune_after=0s:cache_size=0%:cache_size_files=0:prune_interval=0s", &[]),
        ("prune_after=0s:cache_size=0%:cache_size_files=1:prune_interval=0s", &[]),
        ("prune_after=0s:cache_size=0%:cache_size_files=3:prune_interval=0s", &[("llvmcache-lru", 4, 3000), ("llvmcache-recent", 4, 60)]),
        ("prune_interval=0s:cache_size_files=1:cache_size_bytes=1", &[]),
    ];
    let mut seen: Vec<Vec<String>> = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let dir = t.path(&format!("cache-{}", linker.name()));
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut record = Vec::new();
        for (k, (policy, plant)) in steps.iter().enumerate() {
            for &(name, size, secs) in plant.iter() {
                let p = dir.join(name);
                fs::write(&p, vec![b' '; size]).map_err(|e| e.to_string())?;
                age(&p, std::time::SystemTime::now() - std::time::Duration::from_secs(secs))?;
            }
            let mut cmd = t.clang_link(&t.dir, linker);
            cmd.args(["-flto=thin", "main.o", "mid.o", "leaf.o", "-o", &format!("prog-{}", linker.name())]);
            cmd.arg(format!("-Wl,--thinlto-cache-dir={}", dir.display())).arg(format!("-Wl,--thinlto-cache-policy={policy}"));
            let o = t.run(&mut cmd)?;
            if !o.success() {
                return Err(format!("{} step {k} ({policy}): the link failed ({}):\n{}", linker.name(), o.status_text(), o.stderr_text()));
            }
            let mut names: Vec<String> = fs::read_dir(&dir)
                .map_err(|e| e.to_string())?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                // LLVM's entries are named by content hashes that differ between the two
                // linkers' inputs only in what each wrote; the planted ones keep their names.
                .map(|n| if n.starts_with("llvmcache-") && n.len() == 50 { "llvmcache-<hash>".to_string() } else { n })
                .collect();
            names.sort();
            let stderr = o.stderr_text();
            let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("warning: ThinLTO cache")).map(|l| l.trim()).collect::<Vec<_>>();
            record.push(format!("step {k} ({policy}): {names:?} {warnings:?}"));
        }
        seen.push(record);
    }
    let diffs: Vec<String> = seen[0].iter().zip(&seen[1]).filter(|(a, b)| a != b).map(|(a, b)| format!("dtld:      {a}\nld.lld-22: {b}")).collect();
    if !diffs.is_empty() {
        return Err(diffs.join("\n"));
    }
    if !seen[1].iter().any(|s| s.contains("warning: ThinLTO cache pruning")) {
        return Err(format!("ld.lld-22 printed no pruning warning (trial bug?):\n{}", seen[1].join("\n")));
    }
    Ok(())
}

fn cache(t: &Work) -> Result<(), String> {
    t.write("main.c", CACHE_MAIN)?;
    t.write("mid.c", CACHE_MID)?;
    t.write("leaf.c", cache_leaf(100))?;
    for stem in ["main", "mid", "leaf"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2"])?;
    }
    fs::create_dir_all(t.path("cache")).map_err(|e| e.to_string())?;
    let link = |out: &str| -> Result<((u32, u32, u32), String), String> {
        let mut cmd = t.clang_link(&t.dir, Linker::Dtld);
        cmd.args(["-flto=thin", "-Wl,--thinlto-cache-dir=cache", "-Wl,--verbose"]).args(["main.o", "mid.o", "leaf.o", "-o", out]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("link of {out} failed ({}):\n{}", o.status_text(), o.stderr_text()));
        }
        let stats = thinlto_stats(&o.stderr_text()).map_err(|e| format!("{out}: {e}"))?;
        let stdout = t.run_program(out)?;
        Ok((stats, stdout))
    };

    let (first, out1) = link("prog")?;
    if first != (3, 3, 0) {
        return Err(format!("first link with an empty cache: expected 3 modules, 3 compiled, 0 cached; got {first:?}"));
    }
    let entries = fs::read_dir(t.path("cache")).map_err(|e| e.to_string())?.count();
    if entries == 0 {
        return Err("the first link left the cache directory empty".into());
    }
    if out1 != "mid=33 leaf=104\n" {
        return Err(format!("the program printed {out1:?}, expected \"mid=33 leaf=104\\n\""));
    }

    // The usual relink: same inputs, same output name.
    let (second, out2) = link("prog")?;
    if second != (3, 0, 3) {
        return Err(format!("relink of unchanged inputs: expected 3 modules, 0 compiled, 3 cached; got {second:?}"));
    }
    if out2 != out1 {
        return Err(format!("the relinked program printed {out2:?}, the first one {out1:?}"));
    }
    // lld's cache keys do not depend on the output file's name, nor may dtld's.
    let (third, out3) = link("prog-renamed")?;
    if third != (3, 0, 3) {
        return Err(format!(
            "relink of unchanged inputs to another output name: expected 3 modules, 0 compiled, 3 cached; got {third:?} (does the cache key depend on the output or temporary file names?)"
        ));
    }
    if out3 != out1 {
        return Err(format!("prog-renamed printed {out3:?}, the first program {out1:?}"));
    }

    t.write("leaf.c", cache_leaf(200))?;
    t.compile(".", "leaf.c", "leaf.o", &["-flto=thin", "-O2"])?;
    let (fourth, out4) = link("prog")?;
    let (modules, compiled, cached) = fourth;
    if modules != 3 || compiled == 0 || compiled >= 3 || compiled + cached != 3 {
        return Err(format!("relink after changing leaf.c only: expected 3 modules, 1 or 2 compiled, the rest cached; got {fourth:?}"));
    }
    if out4 != "mid=33 leaf=204\n" {
        return Err(format!("after the change the program printed {out4:?}, expected \"mid=33 leaf=204\\n\" (a stale cache entry?)"));
    }
    Ok(())
}

// ---- link cache ---------------------------------------------------------------------------

const SKIPPED: &str = "the thin link skipped";

/// `--verbose` of a dtld ThinLTO link says that the thin link ran in dtld's process, through
/// the library `scripts/build-lto-shim.sh` builds next to dtld.
fn in_process_used(stderr: &str) -> Result<(), String> {
    if stderr.contains("dtld: thinlto: thin link in process") {
        return Ok(());
    }
    Err(format!(
        "the thin link did not run in dtld's process (is libdtld-lto-22.so next to dtld? scripts/build-lto-shim.sh builds it); --verbose printed:\n{stderr}"
    ))
}

/// How `link_cache`'s links run LTO.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CacheMode {
    /// In-process ThinLTO through dtld's in-process library (the default).
    Library,
    /// In-process ThinLTO through `llvm-lto2` (`DTLD_THIN_LINK=llvm-lto2`), which stages
    /// archive members from the cache directory's member store.
    Lto2,
    /// DTLTO with dtld-distribute.
    Dtlto,
}

fn link_cache(t: &Work, mode: CacheMode) -> Result<(), String> {
    let dtlto = mode == CacheMode::Dtlto;
    t.write("main.c", CACHE_MAIN)?;
    t.write("mid.c", CACHE_MID)?;
    t.write("leaf.c", cache_leaf(100))?;
    for stem in ["main", "mid", "leaf"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2", "-g"])?;
    }
    // mid.o as an archive member: staged from the member store of the cache directory.
    t.ar(".", "rcs", "libmid.a", &["mid.o"])?;
    let distributor = t.ctx.dtld.with_file_name("dtld-distribute");
    if dtlto && !distributor.is_file() {
        return Err(format!("{} is missing (cargo build --release --workspace --bins)", distributor.display()));
    }
    // (skipped the thin link, program bytes, program output)
    let link = |out: &str, cache: &str, extra: &[&str]| -> Result<(bool, Vec<u8>, String), String> {
        let mut cmd = t.clang_link(&t.dir, Linker::Dtld);
        cmd.args(["-flto=thin", "-Wl,--verbose"]).arg(format!("-Wl,--thinlto-cache-dir={cache}")).args(extra);
        if dtlto {
            cmd.arg(format!("-fthinlto-distributor={}", distributor.display()));
        }
        if mode == CacheMode::Lto2 {
            cmd.env("DTLD_THIN_LINK", "llvm-lto2");
        }
        cmd.args(["main.o", "libmid.a", "leaf.o", "-o", out]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("link of {out} failed ({}):\n{}", o.status_text(), o.stderr_text()));
        }
        let stderr = o.stderr_text();
        if mode == CacheMode::Library && !stderr.contains(SKIPPED) {
            in_process_used(&stderr).map_err(|e| format!("{out}: {e}"))?;
        }
        thinlto_stats(&stderr).map_err(|e| format!("{out}: {e}"))?;
        let bytes = fs::read(t.path(out)).map_err(|e| format!("read {out}: {e}"))?;
        let stdout = t.run_program(out)?;
        Ok((stderr.contains(SKIPPED), bytes, stdout))
    };
    // dtld's own files are in the cache directory's hidden `.dtld/`.
    let named = |prefix: &str| -> Vec<PathBuf> {
        let (dir, prefix) = match prefix.strip_prefix(".dtld/") {
            Some(p) => (t.path("cache/.dtld"), p),
            None => (t.path("cache"), prefix),
        };
        fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix))).collect())
            .unwrap_or_default()
    };
    let entries = || named(".dtld/link-");

    let (skipped, first, out1) = link("p1", "cache", &[])?;
    if skipped || out1 != "mid=33 leaf=104\n" {
        return Err(format!("first link: skipped the thin link: {skipped}, printed {out1:?}"));
    }
    if entries().len() != 1 {
        return Err(format!("after the first link, expected one .dtld/link-* entry in the cache, found {:?}", entries()));
    }
    let (skipped, second, _) = link("p2", "cache", &[])?;
    if !skipped {
        return Err(format!("relink of unchanged inputs: no '{SKIPPED}' in --verbose"));
    }
    // The reference: the same link with an empty cache, to the same output name.
    let (skipped, fresh, _) = link("p2", "cache-fresh", &[])?;
    if skipped {
        return Err("a link with an empty cache directory skipped the thin link".into());
    }
    if second != fresh {
        return Err("the program of the link-cache hit differs from the same link with an empty cache".into());
    }
    if first.len() != second.len() {
        return Err(format!("p1 has {} bytes, the link-cache hit p2 {}", first.len(), second.len()));
    }

    // One input stamp per output (it decides only whether LLVM is loaded early): p1's and
    // p2's. Relinking p1 unchanged keeps both; after an input's modification time changes,
    // p1's stamp changes and p2's does not, and the link is the same program.
    let stamps = || -> Vec<(PathBuf, Vec<u8>)> {
        let mut v: Vec<_> = named(".dtld/inputs-").into_iter().map(|p| (p.clone(), fs::read(&p).unwrap_or_default())).collect();
        v.sort();
        v
    };
    let before = stamps();
    if before.len() != 2 || before.iter().any(|(_, d)| d.len() != 16) {
        return Err(format!("after links of p1 and p2, expected two 16-byte .dtld/inputs-* files in the cache, found {before:?}"));
    }
    link("p1", "cache", &[])?;
    if stamps() != before {
        return Err(format!("a relink of p1 with unchanged inputs changed the input stamps: {before:?} -> {:?}", stamps()));
    }
    let touched =
        fs::File::options().append(true).open(t.path("leaf.o")).and_then(|f| f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(2)));
    touched.map_err(|e| format!("set leaf.o's modification time: {e}"))?;
    let (_, _, out) = link("p1", "cache", &[])?;
    let after = stamps();
    let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
    if after.len() != 2 || changed != 1 || out != out1 {
        return Err(format!("after leaf.o's time changed: expected p1's stamp alone to change, found {before:?} -> {after:?}; p1 printed {out:?}"));
    }

    // An LTO option that changes code generation misses.
    let (skipped, _, out) = link("p3", "cache", &["-Wl,--lto-O1"])?;
    if skipped || out != out1 {
        return Err(format!("with --lto-O1: skipped the thin link: {skipped}, printed {out:?}"));
    }

    // The paths that stage modules stage archive members from the cache's member store; the
    // in-process library stages nothing.
    let members = named(".dtld/member-");
    if (mode == CacheMode::Library) != members.is_empty() {
        return Err(format!(".dtld/member-* entries (staged archive members) in the cache directory: {members:?}"));
    }
    // A damaged entry is not used: the normal path, the same program, then a good entry. The
    // damaged member store entry is not staged either.
    for e in entries().into_iter().chain(named(".dtld/member-")) {
        let mut d = fs::read(&e).map_err(|x| x.to_string())?;
        let mid = d.len() / 2;
        d[mid] ^= 0x5a;
        fs::write(&e, d).map_err(|x| x.to_string())?;
    }
    let (skipped, damaged, _) = link("p2", "cache", &[])?;
    if skipped {
        return Err("a damaged link-cache entry was used".into());
    }
    if damaged != fresh {
        return Err("after a damaged link-cache entry, the program differs from a link with an empty cache".into());
    }
    let (skipped, again, _) = link("p2", "cache", &[])?;
    if !skipped || again != fresh {
        return Err(format!("after recovering from a damaged entry: skipped the thin link: {skipped}, same program: {}", again == fresh));
    }

    // One module changed: the normal path, and the new code.
    t.write("leaf.c", cache_leaf(200))?;
    t.compile(".", "leaf.c", "leaf.o", &["-flto=thin", "-O2", "-g"])?;
    let (skipped, _, out4) = link("p4", "cache", &[])?;
    if skipped || out4 != "mid=33 leaf=204\n" {
        return Err(format!("after changing leaf.c: skipped the thin link: {skipped}, printed {out4:?} (expected \"mid=33 leaf=204\\n\")"));
    }
    Ok(())
}

// ---- persistent staging -------------------------------------------------------------------

fn persistent_staging(t: &Work) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    t.write("main.c", CACHE_MAIN)?;
    t.write("mid.c", CACHE_MID)?;
    t.write("extra.c", "int extra_value(int x) { return x - 7; }\nint extra_table[3] = { 1, 2, 3 };\n")?;
    for (stem, value) in [("leaf1", 100), ("leaf2", 200)] {
        t.write(&format!("{stem}.c"), cache_leaf(value))?;
    }
    for stem in ["main", "mid", "extra", "leaf1", "leaf2"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2"])?;
    }
    t.ar(".", "rcs", "libmid.a", &["mid.o"])?;
    // (program bytes, program output) of a link of `inputs` to `out`.
    let link = |linker: Linker, out: &str, cache: &str, inputs: &[&str]| -> Result<(Vec<u8>, String), String> {
        let mut cmd = t.clang_link(&t.dir, linker);
        // The subject is llvm-lto2's staging tree (the in-process library stages nothing).
        cmd.env("DTLD_THIN_LINK", "llvm-lto2");
        cmd.arg("-flto=thin").arg(format!("-Wl,--thinlto-cache-dir={cache}")).args(inputs).args(["-o", out]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("{linker:?} link of {out} failed ({}):\n{}", o.status_text(), o.stderr_text()));
        }
        let bytes = fs::read(t.path(out)).map_err(|e| format!("read {out}: {e}"))?;
        let stdout = t.run_program(out)?;
        Ok((bytes, stdout))
    };
    let stage = || -> Result<PathBuf, String> {
        let dirs: Vec<PathBuf> = fs::read_dir(t.path("cache/.dtld"))
            .map_err(|e| format!("read cache/.dtld: {e}"))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("stage-")))
            .collect();
        match dirs.as_slice() {
            [d] => Ok(d.clone()),
            _ => Err(format!("expected one .dtld/stage-* directory in the cache, found {dirs:?}")),
        }
    };
    let inode = |dir: &Path, pred: &dyn Fn(&str) -> bool| -> Option<u64> {
        fs::read_dir(dir).ok()?.flatten().find(|e| pred(&e.file_name().to_string_lossy())).and_then(|e| e.metadata().ok()).map(|m| m.ino())
    };
    let is_main = |n: &str| n.ends_with("-main.o");
    let steps: [&[&str]; 3] = [&["main.o", "libmid.a", "leaf1.o", "extra.o"], &["main.o", "libmid.a", "leaf2.o"], &["main.o", "libmid.a", "leaf1.o"]];
    let mut before: Option<(u64, u64)> = None;
    for (k, inputs) in steps.iter().enumerate() {
        let (ours, out) = link(Linker::Dtld, "prog", "cache", inputs)?;
        let (_, theirs) = link(Linker::Lld, "prog-lld", "cache-lld", inputs)?;
        if out != theirs {
            return Err(format!("link {}: dtld's program printed {out:?}, ld.lld-22's {theirs:?}", k + 1));
        }
        let (fresh, _) = link(Linker::Dtld, "prog", &format!("cache-fresh-{k}"), inputs)?;
        if ours != fresh {
            return Err(format!("link {}: the relink with the persistent staging tree differs from a link with an empty cache", k + 1));
        }
        if t.path("prog.dtld-lto").exists() {
            return Err("prog.dtld-lto was left next to the output".into());
        }
        let dir = stage()?;
        let names: Vec<String> = fs::read_dir(&dir).map_err(|e| e.to_string())?.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        let modules = names.iter().filter(|n| n.ends_with(".o")).count();
        if modules != inputs.len() || names.iter().any(|n| n.contains("extra") && k > 0) {
            return Err(format!("link {}: the staging tree holds {names:?}, expected the {} modules of this link", k + 1, inputs.len()));
        }
        let now = (inode(&dir, &is_main).ok_or("no staged main.o")?, inode(&dir, &|n| n == "lto.1").ok_or("no lto.1")?);
        if let Some(b) = before {
            if b != now {
                return Err(format!("link {}: main.o's staged entry or lto.1 is a new file (inodes {b:?} -> {now:?}), not reused", k + 1));
            }
        }
        before = Some(now);
    }
    Ok(())
}

// ---- errors -------------------------------------------------------------------------------

/// A program needing nothing from libc (for links without crt files and libraries).
const ERR_MAIN: &str = "int a_fn(int);\nint main(void) { return a_fn(41) - 42; }\n";
const ERR_A: &str = "int a_fn(int x) { return x + 1; }\n";

#[derive(Clone, Copy)]
enum BadBitcode {
    /// The magic and one more word.
    Truncated,
    /// The magic followed by 4 KiB of deterministic pseudo-random bytes.
    Garbage,
}

fn bad_bitcode_bytes(kind: BadBitcode) -> Vec<u8> {
    let mut bytes = b"BC\xC0\xDE".to_vec();
    match kind {
        BadBitcode::Truncated => bytes.extend_from_slice(&[0x35, 0x14, 0x00, 0x00]),
        BadBitcode::Garbage => {
            let mut x: u64 = 0x2545_f491_4f6c_dd1d;
            for _ in 0..4096 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bytes.push((x >> 24) as u8);
            }
        }
    }
    bytes
}

/// The linker command clang would run for `clang -flto=thin <args>` (argv, from `-###`).
fn linker_argv(t: &Work, linker: Linker, args: &[&str]) -> Result<Vec<String>, String> {
    let mut cmd = t.clang_link(&t.dir, linker);
    cmd.arg("-###").arg("-flto=thin").args(args);
    let out = t.ok(&mut cmd)?;
    let listing = out.stderr_text();
    let want = |argv0: &str| match linker {
        Linker::Dtld => Path::new(argv0) == t.ctx.dtld,
        Linker::Lld => argv0.ends_with("ld.lld"),
    };
    listing
        .lines()
        .filter_map(|l| split_words(l).ok())
        .find(|argv| argv.first().is_some_and(|a| want(a)))
        .ok_or_else(|| format!("no {} command in `clang -###` output:\n{listing}", linker.name()))
}

/// Runs the linker under test directly and checks the failure contract: exit 1, an error line,
/// no output file, and nothing created or changed anywhere in the trial directory (`TMPDIR`
/// points into it).
fn expect_clean_failure(t: &Work, argv: &[String], env: &[(&str, Option<&str>)]) -> Result<String, String> {
    fs::create_dir_all(t.path("tmp")).map_err(|e| e.to_string())?;
    fs::create_dir_all(t.path("out")).map_err(|e| e.to_string())?;
    let before = snapshot(&t.dir)?;
    let mut cmd = Command::new(&argv[0]);
    cmd.current_dir(&t.dir).args(&argv[1..]).env("TMPDIR", t.path("tmp"));
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = t.run(&mut cmd)?;
    let after = snapshot(&t.dir)?;
    let stderr = out.stderr_text();
    let mut problems = Vec::new();
    if out.status_text() != "exit 1" {
        problems.push(format!("the linker under test: {}, expected exit 1", out.status_text()));
    }
    if !stderr.lines().any(|l| t.ctx.is_error_line(l)) {
        problems.push("no error line with the expected prefix (`dtld: error: `)".to_string());
    }
    let new = changes(&before, &after);
    if !new.is_empty() {
        problems.push(format!("files left behind or changed: {new:?}"));
    }
    if problems.is_empty() {
        Ok(stderr)
    } else {
        Err(format!("{}\nstderr:\n{stderr}", problems.join("\n")))
    }
}

fn build_err_inputs(t: &Work, env: &[(&str, &str)], a_flags: &[&str]) -> Result<(), String> {
    t.write("main.c", ERR_MAIN)?;
    t.write("a.c", ERR_A)?;
    t.compile(".", "main.c", "main.o", &["-flto=thin", "-O2"])?;
    let mut cmd = Command::new(llvm("clang"));
    cmd.current_dir(&t.dir).arg("-c").args(["-flto=thin", "-O2"]).args(a_flags).args(["a.c", "-o", "a.o"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    t.ok(&mut cmd).map(drop)
}

/// LLVM's own error about two modules names them as lld does: dtld's in-process backends
/// know the modules by short IDs (`inproc::ModuleIds`), and every message LLVM writes must get
/// the names back. m1.o and libm.a(m2.o) carry a module flag with the Error behaviour and
/// different values: regular LTO fails when it links them (the message, with the archive
/// member's name, must be ld.lld-22's), ThinLTO when a backend imports across them (which pair
/// is reported depends on the backends' order, so only the names are checked there).
fn llvm_names_modules(t: &Work) -> Result<(), String> {
    for v in [1, 2] {
        t.write(
            &format!("m{v}.ll"),
            format!(
                "target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128\"\n\
                 target triple = \"x86_64-pc-linux-gnu\"\n\
                 define i32 @f{v}() {{ ret i32 {v} }}\n\
                 !llvm.module.flags = !{{!0}}\n\
                 !0 = !{{i32 1, !\"dtld-flag\", i32 {v}}}\n"
            ),
        )?;
    }
    t.write("mm.c", "int f1(void); int f2(void); int main(void) { return f1() + f2(); }\n")?;
    for (lto, dir) in [("-flto", "full"), ("-flto=thin", "thin")] {
        fs::create_dir_all(t.path(dir)).map_err(|e| e.to_string())?;
        for (src, obj) in [("mm.c", "mm.o"), ("m1.ll", "m1.o"), ("m2.ll", "m2.o")] {
            t.compile(".", src, &format!("{dir}/{obj}"), &[lto, "-O2"])?;
        }
        let mut ar = Command::new(llvm("llvm-ar"));
        ar.current_dir(t.path(dir)).args(["rc", "libm.a", "m2.o"]);
        t.ok(&mut ar)?;
        let mut said = Vec::new();
        for linker in [Linker::Dtld, Linker::Lld] {
            let mut cmd = t.clang_link(&t.path(dir), linker);
            cmd.args([lto, "mm.o", "m1.o", "libm.a", "-o", "prog"]);
            let out = t.run(&mut cmd)?;
            if out.success() {
                return Err(format!("{dir}: the {} link of modules with conflicting module flags succeeded", linker.name()));
            }
            let text = out.stderr_text();
            let line = text.lines().find(|l| l.contains("linking module flags 'dtld-flag'")).map(str::to_string);
            said.push(line.ok_or_else(|| format!("{dir}: {} said nothing of the module flag:\n{text}", linker.name()))?);
        }
        let tail = |l: &str| l.split_once("linking module flags").map(|(_, r)| r.to_string()).unwrap_or_default();
        let (ours, theirs) = (tail(&said[0]), tail(&said[1]));
        if ours.contains('\u{1}') {
            return Err(format!("{dir}: dtld's message holds a module ID instead of a name: {:?}", said[0]));
        }
        let named = |l: &str| ["mm.o", "m1.o", "libm.a(m2.o at "].iter().filter(|n| l.contains(*n)).count() + usize::from(l.contains("ld-temp.o"));
        if named(&ours) != 2 {
            return Err(format!("{dir}: dtld's message does not name two of the modules: {:?}", said[0]));
        }
        if dir == "full" && ours != theirs {
            return Err(format!("{dir}: dtld said {:?}, ld.lld-22 {:?}", said[0], said[1]));
        }
    }
    Ok(())
}

fn bad_bitcode(t: &Work, kind: BadBitcode) -> Result<(), String> {
    build_err_inputs(t, &[], &[])?;
    t.write("bad.o", bad_bitcode_bytes(kind))?;
    let args = ["main.o", "a.o", "bad.o", "-o", "out/prog"];
    let ours = linker_argv(t, Linker::Dtld, &args)?;
    expect_clean_failure(t, &ours, &[])?;
    // lld must reject the file too (only that is compared).
    let theirs = linker_argv(t, Linker::Lld, &args)?;
    let mut cmd = Command::new(&theirs[0]);
    cmd.current_dir(&t.dir).args(&theirs[1..]);
    let out = t.run(&mut cmd)?;
    if out.success() {
        return Err("ld.lld-22 accepted the bad bitcode (trial bug?)".into());
    }
    Ok(())
}

/// a.o claims (irsymtab producer, through LLVM_OVERRIDE_PRODUCER) to come from LLVM 99.0.0,
/// newer than the LLVM 22 that clang's `-plugin` points dtld at: dtld must refuse it cleanly.
fn newer_producer(t: &Work) -> Result<(), String> {
    build_err_inputs(t, &[("LLVM_OVERRIDE_PRODUCER", "99.0.0")], &[])?;
    let bytes = fs::read(t.path("a.o")).map_err(|e| e.to_string())?;
    if !bytes.windows(6).any(|w| w == b"99.0.0") {
        return Err("LLVM_OVERRIDE_PRODUCER did not reach a.o (trial bug?)".into());
    }
    let ours = linker_argv(t, Linker::Dtld, &["main.o", "a.o", "-o", "out/prog"])?;
    expect_clean_failure(t, &ours, &[]).map(drop)
}

/// clang runs dtld as its `ld.lld` (`-fuse-ld=lld` and a `-B` directory holding an `ld.lld`
/// link to dtld): clang passes no `-plugin` to lld, so with `DTLD_LLVM_DIR` unset dtld finds
/// the LLVM of the clang that started it (its parent; the link itself runs in a forked child,
/// whose parent is dtld). The ThinLTO link must succeed and the program run.
fn llvm_from_parent_clang(t: &Work) -> Result<(), String> {
    build_err_inputs(t, &[], &[])?;
    let bin = t.path("bin");
    fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&t.ctx.dtld, bin.join("ld.lld")).map_err(|e| e.to_string())?;
    fs::create_dir_all(t.path("out")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(llvm("clang"));
    cmd.current_dir(&t.dir).env_remove("DTLD_LLVM_DIR").arg("-fuse-ld=lld").arg(format!("-B{}/", bin.display())).args([
        "-flto=thin",
        "main.o",
        "a.o",
        "-o",
        "out/prog",
    ]);
    t.ok(&mut cmd)?;
    let mut run = Command::new(t.path("out/prog"));
    let out = t.run(&mut run)?;
    if !out.success() {
        return Err(format!("the program: {}", out.status_text()));
    }
    Ok(())
}

/// dtld run directly (no clang, so no `-plugin`), `DTLD_LLVM_DIR` unset and `PATH=/usr/bin`,
/// where Debian 12's LLVM 14 tools live and cannot read LLVM 22 bitcode: no usable LLVM.
/// A second run puts spy scripts named like LLVM tools first in `PATH` and checks that none
/// was run (dtld never takes LLVM tools from `PATH`).
fn no_usable_llvm(t: &Work) -> Result<(), String> {
    build_err_inputs(t, &[], &[])?;
    // A copy of dtld without its thin-link library beside it (whose LLVM it would use).
    let bare = t.ctx.root.join(".bare-dtld");
    fs::create_dir_all(&bare).map_err(|e| e.to_string())?;
    fs::copy(&t.ctx.dtld, bare.join("dtld")).map_err(|e| format!("copy dtld: {e}"))?;
    let dtld = bare.join("dtld").to_string_lossy().into_owned();
    let argv: Vec<String> = [dtld.as_str(), "-e", "main", "main.o", "a.o", "-o", "out/prog"].iter().map(|s| s.to_string()).collect();
    expect_clean_failure(t, &argv, &[("PATH", Some("/usr/bin")), ("DTLD_LLVM_DIR", None)])?;

    // The spies and their marker live outside the trial directory, which must stay unchanged.
    let spy_dir = t.ctx.root.join(".spy-bin");
    let marker = t.ctx.root.join(".spy-called");
    let _ = fs::remove_file(&marker);
    fs::create_dir_all(&spy_dir).map_err(|e| e.to_string())?;
    for tool in ["llvm-lto2", "llvm-lto", "clang", "clang-22", "llvm-lto2-22", "llvm-lto2-14", "ld.lld", "opt", "llc"] {
        let script = format!("#!/bin/sh\necho \"$0 $*\" >> {}\nexit 1\n", shell_quote(marker.as_os_str()));
        let p = spy_dir.join(tool);
        fs::write(&p, script).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    let path = format!("{}:/usr/bin", spy_dir.display());
    expect_clean_failure(t, &argv, &[("PATH", Some(&path)), ("DTLD_LLVM_DIR", None)])?;
    if let Ok(calls) = fs::read_to_string(&marker) {
        return Err(format!("dtld ran LLVM tools found in PATH:\n{calls}"));
    }
    Ok(())
}

/// `dtld -e main main.o a.o` on ThinLTO bitcode, run directly with no environment naming LLVM
/// (no clang as its parent, no `-plugin`, no `DTLD_LLVM_DIR`): it uses the LLVM its own
/// thin-link library was built for and links, as ld.lld-22 links with its built-in LLVM; both
/// programs print the same.
fn llvm_own_library(t: &Work) -> Result<(), String> {
    build_err_inputs(t, &[], &[])?;
    let mut outputs = Vec::new();
    for (name, linker) in [("dtld", t.ctx.dtld.clone()), ("lld", PathBuf::from("/usr/bin/ld.lld-22"))] {
        let crt: Vec<String> = ["Scrt1.o", "crti.o", "crtn.o"].iter().map(|c| format!("/lib/x86_64-linux-gnu/{c}")).collect();
        let mut cmd = Command::new(&linker);
        cmd.current_dir(&t.dir)
            .env_remove("DTLD_LLVM_DIR")
            .env("PATH", "/usr/bin:/bin")
            .args(["-pie", "-dynamic-linker", "/lib64/ld-linux-x86-64.so.2", "-o", &format!("prog.{name}")])
            .args(&crt[..2])
            .args(["main.o", "a.o", "-L/lib/x86_64-linux-gnu", "-lc"])
            .arg(&crt[2]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("{name} on bitcode without LLVM named failed ({}):\n{}", o.status_text(), o.stderr_text()));
        }
        outputs.push(t.run_program(&format!("prog.{name}"))?);
    }
    if outputs[0] != outputs[1] {
        return Err(format!("dtld's program printed {:?}, lld's {:?}", outputs[0], outputs[1]));
    }
    Ok(())
}

/// A runtime library call only LTO's code generator makes (`__builtin_memcpy` of 1024 bytes:
/// memcpy is in no module's symbol table), defined by a bitcode archive member: lld extracts
/// such a member before LTO (`LTO::getRuntimeLibcallSymbols`), so LTO compiles it with the
/// program; a native member defining another libcall stays out. Both outputs must define
/// memcpy and not the native member's `__sync_val_compare_and_swap_8`.
fn libcall_archive(t: &Work) -> Result<(), String> {
    t.write("s.c", "void _start(char *a, char *b) { __builtin_memcpy(a, b, 1024); }\n")?;
    t.write("m.c", "void *memcpy(void *d, const void *s, unsigned long n) { (void)s; (void)n; return d; }\n")?;
    t.write("sync.s", ".globl __sync_val_compare_and_swap_8\n__sync_val_compare_and_swap_8:\n  ret\n")?;
    t.ok(Command::new(llvm("clang")).current_dir(&t.dir).args(["-O2", "-flto=thin", "-c", "s.c", "m.c"]))?;
    t.ok(Command::new(llvm("clang")).current_dir(&t.dir).args(["-c", "sync.s"]))?;
    t.ok(Command::new(llvm("llvm-ar")).current_dir(&t.dir).args(["rcs", "lib.a", "m.o", "sync.o"]))?;
    let mut symbols = Vec::new();
    for (name, linker) in [("dtld", t.ctx.dtld.clone()), ("lld", PathBuf::from("/usr/bin/ld.lld-22"))] {
        let out = format!("prog.{name}");
        t.ok(Command::new(&linker).current_dir(&t.dir).args(["-e", "_start", "s.o", "lib.a", "-o", &out]))?;
        let nm = t.run(Command::new(llvm("llvm-nm")).current_dir(&t.dir).arg(&out))?;
        let defined: Vec<String> =
            String::from_utf8_lossy(&nm.stdout).lines().filter(|l| l.contains(" T ")).filter_map(|l| l.split_whitespace().last().map(str::to_string)).collect();
        symbols.push(defined);
    }
    if symbols[0] != symbols[1] || !symbols[1].iter().any(|s| s == "memcpy") {
        return Err(format!("defined functions: dtld {:?}, ld.lld-22 {:?}", symbols[0], symbols[1]));
    }
    Ok(())
}

// ---- options ------------------------------------------------------------------------------

const OPT_MAIN: &str = r#"
#include <stdio.h>
int work(int);
__attribute__((noinline)) int twice(int x) { for (int i = 0; i < x; i++) x += i * 3; return x; }
int main(int argc, char **argv) {
  (void)argv;
  printf("%d %d\n", work(argc + 4), twice(argc + 2));
  return 0;
}
"#;
const OPT_WORK: &str = r#"
int work(int x) {
  int s = 0;
  for (int i = 0; i < x * 10; i++)
    s += i ^ x;
  return s;
}
"#;
/// A text sample profile: `work` hot, `twice` with few samples.
const OPT_PROFILE: &str = "work:200000:5000\n 1: 5000\n 2: 100000\n 3: 100000\ntwice:10:1\n 0: 1\n";

fn section_size(path: &Path, name: &str) -> Result<Option<u64>, String> {
    let data = fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(elf.section_headers.iter().find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name)).map(|s| s.sh_size))
}

fn backend_options(t: &Work) -> Result<(), String> {
    t.write("main.c", OPT_MAIN)?;
    t.write("work.c", OPT_WORK)?;
    t.write("prof.txt", OPT_PROFILE)?;
    for stem in ["main", "work"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2", "-g", "-gsplit-dwarf"])?;
    }
    // Each linker in its own directory, with the same relative names (the skeleton units name
    // their `.dwo` files by the path clang gives: `out-dwo/<task>.dwo`).
    let knobs = [
        "-Wl,--plugin-opt=opt-remarks-filename=remarks.yaml",
        "-Wl,--plugin-opt=stats-file=stats.txt",
        "-Wl,--lto-sample-profile=../prof.txt",
        "-Wl,--lto-basic-block-address-map",
    ];
    let mut results = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let dir = t.path(linker.name());
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut cmd = t.clang_link(&dir, linker);
        cmd.args(["-flto=thin", "-gsplit-dwarf", "../main.o", "../work.o", "-o", "out"]).args(knobs);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("{} link failed ({}):\n{}", linker.name(), o.status_text(), o.stderr_text()));
        }
        if o.stderr_text().contains("warning") {
            return Err(format!("{} warned:\n{}", linker.name(), o.stderr_text()));
        }
        let output = t.run_program(&format!("{}/out", linker.name()))?;
        let map = section_size(&dir.join("out"), ".llvm_bb_addr_map")?;
        // The files the link wrote (directories left out), sorted.
        let files: Vec<String> = snapshot(&dir)?.into_keys().filter(|k| !k.ends_with('/')).collect();
        results.push((files, output, map));
    }
    let (ours, theirs) = (&results[0], &results[1]);
    if ours.0 != theirs.0 {
        return Err(format!("files written: dtld {:?}, lld {:?}", ours.0, theirs.0));
    }
    for f in ["out-dwo/1.dwo", "out-dwo/2.dwo"] {
        if !ours.0.iter().any(|x| x == f) {
            return Err(format!("no {f}: the DWO directory did not reach the backends; files: {:?}", ours.0));
        }
    }
    for f in ours.0.iter().filter(|f| f.ends_with(".dwo") || f.starts_with("remarks.yaml.thin.")) {
        let (a, b) = (t.read(&format!("dtld/{f}"))?, t.read(&format!("lld/{f}"))?);
        if a != b {
            return Err(format!("{f} differs from lld's ({} vs {} bytes)", a.len(), b.len()));
        }
    }
    if ours.1 != theirs.1 {
        return Err(format!("program output: dtld {:?}, lld {:?}", ours.1, theirs.1));
    }
    if ours.2.is_none() || ours.2 != theirs.2 {
        return Err(format!(".llvm_bb_addr_map size: dtld {:?}, lld {:?}", ours.2, theirs.2));
    }

    // Options that reach LLVM fail where lld's links fail.
    for bad in ["-Wl,--lto-sample-profile=missing.prof", "-Wl,--lto-cs-profile-file=missing.prof"] {
        for linker in [Linker::Dtld, Linker::Lld] {
            let mut cmd = t.clang_link(&t.dir, linker);
            cmd.args(["-flto=thin", "main.o", "work.o", "-o", "bad.out", bad]);
            let o = t.run(&mut cmd)?;
            if o.success() || !o.stderr_text().contains("missing.prof") {
                return Err(format!("{} with {bad}: {} (expected a failure naming missing.prof):\n{}", linker.name(), o.status_text(), o.stderr_text()));
            }
        }
    }
    if t.ctx.dtld_is_lld {
        return Ok(());
    }
    // A pipeline LLVM cannot parse: lld dies of LLVM's fatal error; dtld fails cleanly.
    for bad in ["--lto-newpm-passes=no-such-pass", "--lto-aa-pipeline=no-such-aa"] {
        let ours = linker_argv(t, Linker::Dtld, &["main.o", "work.o", "-o", "out/prog", &format!("-Wl,{bad}")])?;
        let stderr = expect_clean_failure(t, &ours, &[])?;
        if !stderr.contains("unable to parse") {
            return Err(format!("{bad}: no word of the pipeline:\n{stderr}"));
        }
    }
    Ok(())
}

fn not_implemented_options(t: &Work) -> Result<(), String> {
    t.write("main.c", OPT_MAIN)?;
    t.write("work.c", OPT_WORK)?;
    for stem in ["main", "work"] {
        t.compile(".", &format!("{stem}.c"), &format!("{stem}.o"), &["-flto=thin", "-O2", "-g", "-gsplit-dwarf"])?;
    }
    // Ignoring it keeps the program: a warning, and the link is made.
    let mut cmd = t.clang_link(&t.dir, Linker::Dtld);
    cmd.args(["-flto=thin", "main.o", "work.o", "-o", "partitions", "-Wl,--lto-partitions=2"]);
    let o = t.ok(&mut cmd)?;
    if !o.stderr_text().contains("dtld: warning: --lto-partitions=2 is not supported; ignored") {
        return Err(format!("--lto-partitions=2: no warning:\n{}", o.stderr_text()));
    }
    t.run_program("partitions")?;
    // Ignoring it would change the output: an error, nothing written.
    for bad in ["--lto-emit-asm", "--plugin-opt=emit-llvm", "--thinlto-single-module=main.o"] {
        let ours = linker_argv(t, Linker::Dtld, &["main.o", "work.o", "-o", "out/prog", &format!("-Wl,{bad}")])?;
        let stderr = expect_clean_failure(t, &ours, &[])?;
        if !stderr.contains(&format!("{bad} is not supported")) {
            return Err(format!("{bad}: unexpected message:\n{stderr}"));
        }
    }
    // DTLTO's backend command line is lld's: no DWO directory (a warning), no CS-PGO (an error).
    let distributor = t.ctx.dtld.with_file_name("dtld-distribute");
    if !distributor.is_file() {
        return Err(format!("{} is missing (cargo build --release --workspace --bins)", distributor.display()));
    }
    let dist = format!("-fthinlto-distributor={}", distributor.display());
    let mut cmd = t.clang_link(&t.dir, Linker::Dtld);
    cmd.args(["-flto=thin", "-gsplit-dwarf", "main.o", "work.o", "-o", "dtlto", &dist]);
    let o = t.ok(&mut cmd)?;
    if !o.stderr_text().contains("dtld: warning: --plugin-opt=dwo_dir=dtlto-dwo is not supported with backends compiled by clang") {
        return Err(format!("DTLTO with dwo_dir: no warning:\n{}", o.stderr_text()));
    }
    t.run_program("dtlto")?;
    // Refused before anything is made: no staging, and no cache directory for the archive
    // member's store.
    t.ar(".", "rcs", "libwork.a", &["work.o"])?;
    let ours =
        linker_argv(t, Linker::Dtld, &["main.o", "libwork.a", "-o", "out/prog", &dist, "-Wl,--lto-cs-profile-generate", "-Wl,--thinlto-cache-dir=cache"])?;
    let stderr = expect_clean_failure(t, &ours, &[])?;
    if !stderr.contains("--lto-cs-profile-generate is not supported with backends compiled by clang") {
        return Err(format!("DTLTO with CS-PGO generation: unexpected message:\n{stderr}"));
    }
    Ok(())
}

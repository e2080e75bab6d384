//! Why this exists: the worst bug a linker can have is to link what lld refuses, and the next
//! worst is to refuse in other words. docs/diagnostics.md lists every error and warning ld.lld 22
//! (x86-64 ELF) and lld-link 22 (x86-64 COFF) can give; this target holds one differential trial
//! per diagnostic that can arise, and checks the catalogue against the trials.
//!
//! Each trial builds real inputs (C or C++ compiled by clang-22 where a compiler can produce
//! the situation, assembly only where it cannot, linker scripts and other text files as
//! written), links them with dtld and with the reference (ld.lld-22, or lld-link-22 for COFF
//! cases, dtld then being run as `lld-link` through a symlink: it picks its flavour from its
//! program name), and requires the same verdict (the one the case states for lld: error,
//! warning or success), the same exit status, the whole stderr the same (but for the program
//! name and the scratch directory), and no output file after an error. The trial also checks
//! that lld's stderr still holds the words docs/diagnostics.md records for the rows naming the
//! case, and the `catalogue` trial that every `tested` row names a case that exists, that every
//! case is named by a row, and that the summary's counts are right.
//!
//! The cases are split by area: `elf_driver.rs` (command line), `elf_input.rs` (input files),
//! `elf_symbols.rs` (resolution, versions), `elf_relocs.rs` (relocations, layout, writing),
//! `elf_script.rs` (linker scripts), `coff.rs` (lld-link and the MinGW driver), `coff_crafted.rs` (lld-link with crafted inputs).
//!
//! Knobs: `DTLD` (linker under test), `DTLD_HARNESS_KEEP=1` (keep trial directories).

mod catalogue;
mod coff;
mod coff_crafted;
mod elf_driver;
mod elf_input;
mod elf_relocs;
mod elf_script;
mod elf_symbols;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use dtld_tests::{find_dtld, fresh_dir, lock_target_subdir, run_tool, run_tool_ok, target_dir, CLANG, LLD};
use libtest_mimic::{Arguments, Failed, Trial};

/// The reference for lld-link cases.
const LLD_LINK: &str = "lld-link-22";

struct Ctx {
    dtld: PathBuf,
    /// A directory holding `lld-link`, a symlink to dtld (its COFF flavour).
    lld_link_dir: PathBuf,
    root: PathBuf,
    keep: bool,
}

/// Which command line the case speaks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flavor {
    /// ld.lld (and dtld as `dtld`); sources compiled for x86_64-linux-gnu. `-m i386pep`
    /// selects lld's MinGW driver here too.
    Elf,
    /// lld-link (and dtld as `lld-link`); sources compiled for x86_64-pc-windows-msvc.
    Coff,
}

/// One trial: sources (name, text, compiler flags) written to the trial directory and compiled
/// when they are C, C++ or assembly (`.c`, `.cc`, `.s`; objects are named after their sources),
/// written as they are otherwise (linker scripts, version scripts, lists); then the `prep`
/// commands; then a link with `args` (and `-o out-<who>` / `/out:out-<who>.exe` unless
/// `output` is false).
#[derive(Clone, Copy)]
pub struct Case {
    pub name: &'static str,
    pub flavor: Flavor,
    pub sources: &'static [(&'static str, &'static str, &'static [&'static str])],
    /// A shared library built first with ld.lld-22 from C: (name, source).
    pub library: Option<(&'static str, &'static str)>,
    /// Commands run in the trial directory before the link (`llvm-ar-22 rc libx.a x.o`).
    pub prep: &'static [&'static [&'static str]],
    pub args: &'static [&'static str],
    /// Append the output option.
    pub output: bool,
    /// What the reference does with it (checked: a case the reference no longer treats so is a
    /// trial bug).
    pub lld: Verdict,
}

/// The defaults a case's table row starts from (`..D`).
pub const D: Case = Case { name: "", flavor: Flavor::Elf, sources: &[], library: None, prep: &[], args: &[], output: true, lld: Verdict::Error };

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Exit 1 with an error.
    Error,
    /// Exit 0 with a warning.
    Warning,
    /// Exit 0 without a diagnostic.
    Success,
    /// Exit 1 with another program's words and no `error: ` line: lld-link leaves through LLVM's
    /// option parser, which prints its complaint about a `/mllvm:` option and exits.
    Exit1,
}

/// `_start` in C: the input most command-line cases need (any linkable object).
pub const START: &[(&str, &str, &[&str])] = &[("start.c", "void _start(void) {}\n", &[])];

fn cases() -> Vec<&'static Case> {
    [
        elf_driver::CASES,
        elf_input::CASES,
        elf_symbols::CASES,
        elf_relocs::CASES,
        elf_script::CASES,
        coff::CASES,
        coff::CASES2,
        coff_crafted::CASES3,
        coff::OUTPUT_OPTION_CASES,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// stderr with the program name and the trial directory taken out, and a line that repeats the
/// one before it said once: lld reports an expression's error once per address-assignment
/// pass (`--defsym:1: symbol not found` three times), the same diagnostic.
fn normalize(err: &str, dir: &Path) -> String {
    let d = format!("{}/", dir.display());
    let mut lines: Vec<String> = err
        .lines()
        .map(|l| {
            // LLVM's option parser names the program inside its words too (`-mllvm: ld.lld:
            // Unknown command line argument ...  Try: 'ld.lld --help'`).
            let l = l.replace(&d, "").replace(": dtld: ", ": ld.lld-22: ").replace("'dtld --help'", "'ld.lld-22 --help'");
            for p in ["dtld: ", "ld.lld-22: ", "ld.lld: ", "lld-link-22: ", "lld-link: ", "lld: "] {
                if let Some(rest) = l.strip_prefix(p) {
                    return rest.to_string();
                }
            }
            l
        })
        .collect();
    lines.dedup();
    lines.join("\n")
}

fn compile(case: &Case, dir: &Path) -> Result<(), String> {
    let target = match case.flavor {
        Flavor::Elf => "--target=x86_64-linux-gnu",
        Flavor::Coff => "--target=x86_64-pc-windows-msvc",
    };
    for (name, text, flags) in case.sources {
        fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
        let ext = Path::new(name).extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "c" | "cc" | "s" | "S") {
            continue;
        }
        let obj = Path::new(name).with_extension(if case.flavor == Flavor::Coff { "obj" } else { "o" });
        let compiler = if ext == "cc" { dtld_tests::CLANGXX } else { CLANG };
        run_tool_ok(Command::new(compiler).current_dir(dir).args(["-c", target]).args(*flags).arg(name).arg("-o").arg(obj))?;
    }
    if let Some((lib, text)) = case.library {
        fs::write(dir.join("lib_src.c"), text).map_err(|e| e.to_string())?;
        run_tool_ok(Command::new(CLANG).current_dir(dir).args(["-c", "-fPIC", "--target=x86_64-linux-gnu", "lib_src.c", "-o", "lib_src.o"]))?;
        run_tool_ok(Command::new(LLD).current_dir(dir).args(["-shared", "lib_src.o", "-o", lib, "-soname", lib]))?;
    }
    for cmd in case.prep {
        run_tool_ok(Command::new(cmd[0]).current_dir(dir).args(&cmd[1..]))?;
    }
    Ok(())
}

fn run_case(ctx: &Ctx, case: &Case, dir: &Path) -> Result<(), String> {
    compile(case, dir)?;
    let (status, word) = match case.lld {
        Verdict::Error => ("exit 1", Some("error: ")),
        Verdict::Warning => ("exit 0", Some("warning: ")),
        Verdict::Success => ("exit 0", None),
        Verdict::Exit1 => ("exit 1", None),
    };
    let mut errs = Vec::new();
    // The reference first: its verdict must be the case's (else the case tests nothing).
    for who in ["lld", "dtld"] {
        let (mut cmd, out) = match (case.flavor, who) {
            (Flavor::Elf, "lld") => (Command::new(LLD), format!("out-{who}")),
            (Flavor::Elf, _) => (Command::new(&ctx.dtld), format!("out-{who}")),
            (Flavor::Coff, "lld") => (Command::new(LLD_LINK), format!("out-{who}.exe")),
            (Flavor::Coff, _) => (Command::new(ctx.lld_link_dir.join("lld-link")), format!("out-{who}.exe")),
        };
        if who == "dtld" && std::env::var_os("DTLD_LLVM_DIR").is_none() {
            // dtld's LTO runs the LLVM of the clang that started it; run directly, it is told
            // which (Debian's LLVM 22, whose clang-22 compiled the inputs).
            cmd.env("DTLD_LLVM_DIR", "/usr/lib/llvm-22");
        }
        cmd.current_dir(dir).args(case.args);
        if case.output {
            match case.flavor {
                Flavor::Elf => cmd.args(["-o", &out]),
                Flavor::Coff => cmd.arg(format!("/out:{out}")),
            };
        }
        let r = run_tool(&mut cmd)?;
        if r.status_text() != status {
            let reference = errs.first().map(|e| format!("\n--- the reference said\n{e}")).unwrap_or_default();
            return Err(format!("{who}: {} (the reference's verdict is {:?}: {status})\n{}{reference}", r.status_text(), case.lld, r.stderr_text()));
        }
        if matches!(case.lld, Verdict::Error | Verdict::Exit1) && dir.join(&out).exists() {
            return Err(format!("{who} left an output file after an error"));
        }
        errs.push(normalize(&r.stderr_text(), dir));
        // Kept for whoever reads the trial directory (DTLD_HARNESS_KEEP) or edits the catalogue.
        let _ = fs::write(dir.join(format!("{who}.stderr")), errs.last().map_or("", String::as_str));
    }
    if errs[0] != errs[1] {
        return Err(format!("diagnostics differ\n--- dtld\n{}\n--- reference\n{}", errs[1], errs[0]));
    }
    match word {
        Some(w) if !errs[0].contains(w) => return Err(format!("no {w}message: {}", errs[0])),
        None if case.lld == Verdict::Success && !errs[0].is_empty() => return Err(format!("the reference said something on a success: {}", errs[0])),
        None if case.lld == Verdict::Exit1 && errs[0].is_empty() => return Err("the reference failed without a word".into()),
        _ => {}
    }
    // The words docs/diagnostics.md records for this case must still be the reference's.
    for (id, words) in catalogue::words_for(case.name)? {
        if let Some(missing) = catalogue::missing_fragment(&words, &errs[0]) {
            return Err(format!("{id}: the reference no longer says `{missing}` (docs/diagnostics.md records `{words}`)\n{}", errs[0]));
        }
    }
    Ok(())
}

fn setup(root: &Path, dtld: &Path) -> Result<PathBuf, String> {
    let bin = root.join("bin");
    fs::create_dir_all(&bin).map_err(|e| format!("mkdir {}: {e}", bin.display()))?;
    let link = bin.join("lld-link");
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(dtld, &link).map_err(|e| format!("symlink {}: {e}", link.display()))?;
    Ok(bin)
}

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("diagnostics-tests", "diagnostics test");
    let root = target_dir().join("diagnostics-tests");
    let ctx = find_dtld().and_then(|dtld| {
        let lld_link_dir = setup(&root, &dtld)?;
        Ok(Arc::new(Ctx { dtld, lld_link_dir, root: root.clone(), keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0") }))
    });
    let all = cases();
    let names: Vec<&'static str> = all.iter().map(|c| c.name).collect();
    let mut trials = vec![Trial::test("catalogue", move || catalogue::check(&names).map_err(Failed::from))];
    trials.extend(all.into_iter().map(|case| {
        let ctx = ctx.clone();
        Trial::test(case.name, move || {
            let ctx = ctx.map_err(Failed::from)?;
            let dir = ctx.root.join(case.name);
            fresh_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
            let r = run_case(&ctx, case, &dir);
            if r.is_ok() && !ctx.keep {
                let _ = fs::remove_dir_all(&dir);
            }
            r.map_err(Failed::from)
        })
    }));
    libtest_mimic::run(&args, trials).exit();
}

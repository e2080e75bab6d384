//! Why this exists: the differential fixtures compare only the first line of an error, and only
//! links both linkers refuse; this compares lld's *verdicts*. lld's diagnostics carry their most
//! useful part after the first line: the source line from DWARF (`>>> referenced by main.c:7`),
//! the definition (`>>> defined in libp.so`), the spell corrector's `>>> did you mean`. And the
//! worst bug a linker can have is to link what lld refuses. Each trial builds real objects with
//! clang-22 (`-g`, DWARF 4 and 5, `-ffunction-sections`, non-PIC code against a library), links
//! them with dtld and with ld.lld-22, and requires the same verdict (the one the case states for
//! lld: error, warning or success), the same exit status, the whole stderr the same (but for
//! the program name and the scratch directory), and no output file after an error.
//!
//! Knobs: `DTLD` (linker under test), `DTLD_HARNESS_KEEP=1` (keep trial directories).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use dtld_tests::{find_dtld, fresh_dir, lock_target_subdir, run_tool, run_tool_ok, target_dir, CLANG, LLD};
use libtest_mimic::{Arguments, Failed, Trial};

struct Ctx {
    dtld: PathBuf,
    root: PathBuf,
    keep: bool,
}

/// One trial: sources (name, text) compiled with their flags, then a link with `args`
/// (`$DIR` is the trial directory; objects are named after their sources).
struct Case {
    name: &'static str,
    sources: &'static [(&'static str, &'static str, &'static [&'static str])],
    /// A shared library built first with ld.lld-22: (name, source, flags).
    library: Option<(&'static str, &'static str)>,
    args: &'static [&'static str],
    /// What ld.lld-22 does with it (checked: a case lld no longer treats so is a trial bug).
    lld: Verdict,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Verdict {
    /// Exit 1 with an error.
    Error,
    /// Exit 0 with a warning.
    Warning,
}
use Verdict::{Error, Warning};

/// A native x86-64 object and an AArch64 ThinLTO bitcode file.
const OTHER_MACHINE: &[(&str, &str, &[&str])] = &[
    ("main.c", "int arm_fn(void);\nint main(void) { return 0; }\n", &[]),
    ("arm.c", "int arm_fn(void) { return 1; }\n", &["--target=aarch64-linux-gnu", "-flto=thin"]),
];

const CASES: &[Case] = &[
    // Bitcode for another machine: refused when the file is parsed, as lld does (dtld's thin
    // link registers only LLVM's X86 target), named against the emulation or the first ELF file.
    Case { name: "bitcode-other-machine-emulation", sources: OTHER_MACHINE, library: None, args: &["-m", "elf_x86_64", "main.o", "arm.o"], lld: Error },
    Case { name: "bitcode-other-machine-first-file", sources: OTHER_MACHINE, library: None, args: &["main.o", "arm.o"], lld: Error },
    // --warn-backrefs: main.o refers to foo, which only a --start-lib object named before it
    // defines (GNU ld would not find it); --fatal-warnings makes the warning fail the link.
    Case {
        name: "warn-backrefs-start-lib",
        sources: &[("main.c", "int foo(void);\nint main(void) { return foo(); }\n", &[]), ("foo.c", "int foo(void) { return 0; }\n", &[])],
        library: None,
        args: &["-e", "main", "--fatal-warnings", "--warn-backrefs", "--start-lib", "foo.o", "--end-lib", "main.o"],
        lld: Error,
    },
    Case {
        name: "undefined-dwarf5-function-sections",
        sources: &[(
            "main.c",
            "int missing_fn(int);\nint helper(int x) {\n  return missing_fn(x) + 1;\n}\nint main(void) {\n  return missing_fn(2);\n}\n",
            &["-g", "-gdwarf-5", "-ffunction-sections", "-O1"],
        )],
        library: None,
        args: &["main.o"],
        lld: Error,
    },
    Case {
        name: "undefined-dwarf4-variable",
        sources: &[("main.c", "extern int missing_var;\nint *p = &missing_var;\nint main(void) { return *p; }\n", &["-g", "-gdwarf-4"])],
        library: None,
        args: &["main.o"],
        lld: Error,
    },
    Case {
        name: "duplicate-variable-and-function",
        sources: &[
            ("a.c", "int shared_counter = 1;\nint twice(void) { return 2; }\nint main(void) { return twice(); }\n", &["-g"]),
            ("b.c", "\n\nint shared_counter = 2;\nint twice(void) {\n  return 3;\n}\n", &["-g"]),
        ],
        library: None,
        args: &["a.o", "b.o"],
        lld: Error,
    },
    Case {
        name: "spell-corrector",
        sources: &[
            ("a.c", "int compute_total(int);\nint main(void) { return compute_total(1); }\n", &["-g"]),
            ("b.c", "int compute_totals(int x) { return x; }\n", &[]),
        ],
        library: None,
        args: &["a.o", "b.o"],
        lld: Error,
    },
    Case {
        name: "protected-data-copy",
        sources: &[("main.c", "extern int prot_var;\nint main(void) {\n  return prot_var;\n}\n", &["-g", "-fno-pic"])],
        library: Some(("libp.so", "__attribute__((visibility(\"protected\"))) int prot_var = 3;\n")),
        args: &["-no-pie", "main.o", "libp.so"],
        lld: Error,
    },
    Case {
        name: "protected-function-address",
        sources: &[(
            "main.c",
            "void prot_fn(void);\nvoid *addr(void) {\n  return (void *)prot_fn;\n}\nint main(void) { return addr() != 0; }\n",
            &["-g", "-fno-pic"],
        )],
        library: Some(("libp.so", "__attribute__((visibility(\"protected\"))) void prot_fn(void) {}\n")),
        args: &["-no-pie", "main.o", "libp.so"],
        lld: Error,
    },
    Case {
        name: "pic-error-in-shared",
        sources: &[("lib.c", "int global_data = 5;\nint get(void) {\n  return global_data;\n}\n", &["-g", "-fno-pic", "-mcmodel=small"])],
        library: None,
        args: &["-shared", "lib.o"],
        lld: Error,
    },
    Case {
        name: "cxx-no-demangle",
        sources: &[
            ("a.cc", "int twice(int x) { return 2 * x; }\nint main() { return twice(1); }\n", &["-g"]),
            ("b.cc", "double scale(double);\nint twice(int x) {\n  return (int)scale(x);\n}\n", &["-g", "-O1"]),
        ],
        library: None,
        args: &["--no-demangle", "a.o", "b.o"],
        lld: Error,
    },
    Case {
        name: "cxx-demangle-default",
        sources: &[
            ("a.cc", "namespace geo { double area(double r); }\nint main() { return (int)geo::area(2.0); }\n", &["-g"]),
            ("b.cc", "namespace geo { double area(float r) { return r * r; } }\n", &[]),
        ],
        library: None,
        args: &["--demangle", "a.o", "b.o"],
        lld: Error,
    },
    Case {
        // lld checks the map file can be written before it resolves anything: the undefined
        // symbol is never reported.
        name: "unwritable-map-before-undefined",
        sources: &[("main.c", "int missing_fn(void);\nint main(void) { return missing_fn(); }\n", &["-g"])],
        library: None,
        args: &["-Map=no-such-dir/out.map", "main.o"],
        lld: Error,
    },
    Case {
        name: "version-script-not-found",
        sources: &[("main.c", "int main(void) { return 0; }\n", &[])],
        library: None,
        args: &["-L.", "--version-script=exports.map", "main.o"],
        lld: Error,
    },
    Case {
        // A reference past the end of a mergeable section from a non-allocated one: lld finds
        // it while writing, as dtld's writer does.
        name: "merge-offset-from-non-alloc",
        sources: &[(
            "start.s",
            ".globl _start\n_start: ret\n.section .mystr,\"MS\",@progbits,1\n.asciz \"abc\"\n.section .myinfo,\"\",@progbits\n.long .mystr + 2\n.long .mystr + 100\n",
            &[],
        )],
        library: None,
        args: &["start.o"],
        lld: Error,
    },
    Case {
        // ... which lld never reaches when the scan found an undefined symbol.
        name: "merge-offset-from-non-alloc-after-undefined",
        sources: &[(
            "start.s",
            ".globl _start\n_start: call missing_fn\n.section .mystr,\"MS\",@progbits,1\n.asciz \"abc\"\n.section .myinfo,\"\",@progbits\n.long .mystr + 100\n",
            &[],
        )],
        library: None,
        args: &["start.o"],
        lld: Error,
    },
    Case {
        name: "time-trace-granularity-not-a-number",
        sources: &[("start.s", ".globl _start\n_start: ret\n", &[])],
        library: None,
        args: &["--time-trace", "--time-trace-granularity=abc", "start.o"],
        lld: Error,
    },
    // --- Links lld refuses that dtld used to complete (issue 34) ---
    Case {
        // Non-PIC code (a PC-relative reference to an extern variable) in a shared library.
        name: "pic-error-in-shared-undefined",
        sources: &[("lib.c", "extern int ext_var;\nint get(void) {\n  return ext_var;\n}\n", &["-g", "-fno-pic", "-O2"])],
        library: None,
        args: &["-shared", "lib.o"],
        lld: Error,
    },
    Case {
        // An absolute reference to an undefined weak symbol a library may define, in a PIE: it
        // stays dynamic, and no dynamic relocation fills a 32-bit field.
        name: "pic-error-undefined-weak-in-pie",
        sources: &[("main.c", "extern int wv __attribute__((weak));\nint main(void) {\n  return &wv != 0;\n}\n", &["-g", "-fno-pic"])],
        library: Some(("libp.so", "int other = 1;\n")),
        args: &["-pie", "-e", "main", "main.o", "libp.so"],
        lld: Error,
    },
    Case {
        // An executable against a library that needs a symbol nothing defines
        // (--no-allow-shlib-undefined, lld's default for executables).
        name: "shlib-undefined",
        sources: &[("main.c", "int lib_fn(void);\nint main(void) { return lib_fn(); }\n", &["-g"])],
        library: Some(("libp.so", "extern int missing_fn(void);\nint lib_fn(void) { return missing_fn(); }\n")),
        args: &["-e", "main", "main.o", "libp.so"],
        lld: Error,
    },
    Case {
        // A library's reference to a hidden definition of the executable.
        name: "shlib-references-hidden-definition",
        sources: &[(
            "main.c",
            "int lib_fn(void);\n__attribute__((visibility(\"hidden\"))) int hidden_in_exe(void) { return 3; }\nint main(void) { return lib_fn(); }\n",
            &["-g"],
        )],
        library: Some(("libp.so", "extern int hidden_in_exe(void);\nint lib_fn(void) { return hidden_in_exe(); }\n")),
        args: &["-e", "main", "main.o", "libp.so"],
        lld: Error,
    },
    Case {
        // -shared with --unresolved-symbols=report-all: a library's undefined symbols are errors.
        name: "shared-report-all-undefined",
        sources: &[("lib.c", "int missing_fn(void);\nint get(void) {\n  return missing_fn();\n}\n", &["-g", "-fPIC"])],
        library: None,
        args: &["-shared", "--unresolved-symbols=report-all", "lib.o"],
        lld: Error,
    },
    Case {
        // ... and --allow-shlib-undefined after it lets the library's through, not the object's.
        name: "report-all-then-allow-shlib-undefined",
        sources: &[("main.c", "int lib_fn(void);\nint missing_here(void);\nint main(void) { return lib_fn() + missing_here(); }\n", &["-g"])],
        library: Some(("libp.so", "extern int missing_fn(void);\nint lib_fn(void) { return missing_fn(); }\n")),
        args: &["-e", "main", "--unresolved-symbols=report-all", "--allow-shlib-undefined", "main.o", "libp.so"],
        lld: Error,
    },
    Case {
        // -z undefs in an executable: lld ignores an undefined function (a warning about the
        // missing entry is all that remains).
        name: "z-undefs-executable",
        sources: &[("main.c", "int missing_fn(void);\nint start(void) { return missing_fn(); }\n", &["-g", "-fPIC"])],
        library: None,
        args: &["-pie", "-z", "undefs", "main.o"],
        lld: Warning,
    },
    Case {
        name: "relocation-out-of-range",
        sources: &[("start.s", ".globl _start\n_start:\n  movl $far_away, %eax\n  ret\n", &["-g"])],
        library: None,
        args: &["--defsym=far_away=0x100000000", "start.o"],
        lld: Error,
    },
];

/// stderr with the program name and the trial directory taken out.
fn normalize(err: &str, dir: &Path) -> String {
    let d = format!("{}/", dir.display());
    err.lines()
        .map(|l| {
            let l = l.replace(&d, "");
            for p in ["dtld: ", "ld.lld-22: ", "ld.lld: "] {
                if let Some(rest) = l.strip_prefix(p) {
                    return rest.to_string();
                }
            }
            l
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn run_case(ctx: &Ctx, case: &Case, dir: &Path) -> Result<(), String> {
    for (name, text, flags) in case.sources {
        fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
        let obj = Path::new(name).with_extension("o");
        run_tool_ok(Command::new(CLANG).current_dir(dir).args(["-c", "--target=x86_64-linux-gnu"]).args(*flags).arg(name).arg("-o").arg(obj))?;
    }
    if let Some((lib, text)) = case.library {
        fs::write(dir.join("lib_src.c"), text).map_err(|e| e.to_string())?;
        run_tool_ok(Command::new(CLANG).current_dir(dir).args(["-c", "-fPIC", "lib_src.c", "-o", "lib_src.o"]))?;
        run_tool_ok(Command::new(LLD).current_dir(dir).args(["-shared", "lib_src.o", "-o", lib, "-soname", lib]))?;
    }
    let (status, word) = match case.lld {
        Error => ("exit 1", "error: "),
        Warning => ("exit 0", "warning: "),
    };
    let mut errs = Vec::new();
    // ld.lld-22 first: its verdict must be the case's (else the case tests nothing).
    for (who, linker) in [("lld", std::ffi::OsStr::new(LLD)), ("dtld", ctx.dtld.as_os_str())] {
        let out = format!("out-{who}");
        let r = run_tool(Command::new(linker).current_dir(dir).args(case.args).args(["-o", &out]))?;
        if r.status_text() != status {
            return Err(format!("{who}: {} (ld.lld-22's verdict is {:?}: {status})\n{}", r.status_text(), case.lld, r.stderr_text()));
        }
        if case.lld == Error && dir.join(&out).exists() {
            return Err(format!("{who} left an output file after an error"));
        }
        errs.push(normalize(&r.stderr_text(), dir));
    }
    if errs[0] != errs[1] {
        return Err(format!("diagnostics differ\n--- dtld\n{}\n--- ld.lld-22\n{}", errs[1], errs[0]));
    }
    if !errs[0].contains(word) {
        return Err(format!("no {word}message: {}", errs[0]));
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("diagnostics-tests", "diagnostics test");
    let ctx = find_dtld().map(|dtld| {
        Arc::new(Ctx { dtld, root: target_dir().join("diagnostics-tests"), keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0") })
    });
    let trials = CASES
        .iter()
        .map(|case| {
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
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

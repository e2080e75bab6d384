//! Why this exists: the differential fixtures compare only the first line of an error, but lld's
//! diagnostics carry their most useful part after it: the source line from DWARF
//! (`>>> referenced by main.c:7`), the definition (`>>> defined in libp.so`), the spell
//! corrector's `>>> did you mean`. Each trial builds real objects with clang-22 (`-g`, DWARF 4
//! and 5, `-ffunction-sections`, non-PIC code against a library), links them with dtld and with
//! ld.lld-22, and requires the whole stderr to be the same (but for the program name and the
//! scratch directory), exit status 1 and no output file.
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
}

/// A native x86-64 object and an AArch64 ThinLTO bitcode file.
const OTHER_MACHINE: &[(&str, &str, &[&str])] = &[
    ("main.c", "int arm_fn(void);\nint main(void) { return 0; }\n", &[]),
    ("arm.c", "int arm_fn(void) { return 1; }\n", &["--target=aarch64-linux-gnu", "-flto=thin"]),
];

const CASES: &[Case] = &[
    // Bitcode for another machine: refused when the file is parsed, as lld does (dtld's thin
    // link registers only LLVM's X86 target), named against the emulation or the first ELF file.
    Case { name: "bitcode-other-machine-emulation", sources: OTHER_MACHINE, library: None, args: &["-m", "elf_x86_64", "main.o", "arm.o"] },
    Case { name: "bitcode-other-machine-first-file", sources: OTHER_MACHINE, library: None, args: &["main.o", "arm.o"] },
    // --warn-backrefs: main.o refers to foo, which only a --start-lib object named before it
    // defines (GNU ld would not find it); --fatal-warnings makes the warning fail the link.
    Case {
        name: "warn-backrefs-start-lib",
        sources: &[("main.c", "int foo(void);\nint main(void) { return foo(); }\n", &[]), ("foo.c", "int foo(void) { return 0; }\n", &[])],
        library: None,
        args: &["-e", "main", "--fatal-warnings", "--warn-backrefs", "--start-lib", "foo.o", "--end-lib", "main.o"],
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
    },
    Case {
        name: "undefined-dwarf4-variable",
        sources: &[("main.c", "extern int missing_var;\nint *p = &missing_var;\nint main(void) { return *p; }\n", &["-g", "-gdwarf-4"])],
        library: None,
        args: &["main.o"],
    },
    Case {
        name: "duplicate-variable-and-function",
        sources: &[
            ("a.c", "int shared_counter = 1;\nint twice(void) { return 2; }\nint main(void) { return twice(); }\n", &["-g"]),
            ("b.c", "\n\nint shared_counter = 2;\nint twice(void) {\n  return 3;\n}\n", &["-g"]),
        ],
        library: None,
        args: &["a.o", "b.o"],
    },
    Case {
        name: "spell-corrector",
        sources: &[
            ("a.c", "int compute_total(int);\nint main(void) { return compute_total(1); }\n", &["-g"]),
            ("b.c", "int compute_totals(int x) { return x; }\n", &[]),
        ],
        library: None,
        args: &["a.o", "b.o"],
    },
    Case {
        name: "protected-data-copy",
        sources: &[("main.c", "extern int prot_var;\nint main(void) {\n  return prot_var;\n}\n", &["-g", "-fno-pic"])],
        library: Some(("libp.so", "__attribute__((visibility(\"protected\"))) int prot_var = 3;\n")),
        args: &["-no-pie", "main.o", "libp.so"],
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
    },
    Case {
        name: "pic-error-in-shared",
        sources: &[("lib.c", "int global_data = 5;\nint get(void) {\n  return global_data;\n}\n", &["-g", "-fno-pic", "-mcmodel=small"])],
        library: None,
        args: &["-shared", "lib.o"],
    },
    Case {
        name: "cxx-no-demangle",
        sources: &[
            ("a.cc", "int twice(int x) { return 2 * x; }\nint main() { return twice(1); }\n", &["-g"]),
            ("b.cc", "double scale(double);\nint twice(int x) {\n  return (int)scale(x);\n}\n", &["-g", "-O1"]),
        ],
        library: None,
        args: &["--no-demangle", "a.o", "b.o"],
    },
    Case {
        name: "cxx-demangle-default",
        sources: &[
            ("a.cc", "namespace geo { double area(double r); }\nint main() { return (int)geo::area(2.0); }\n", &["-g"]),
            ("b.cc", "namespace geo { double area(float r) { return r * r; } }\n", &[]),
        ],
        library: None,
        args: &["--demangle", "a.o", "b.o"],
    },
    Case {
        // lld checks the map file can be written before it resolves anything: the undefined
        // symbol is never reported.
        name: "unwritable-map-before-undefined",
        sources: &[("main.c", "int missing_fn(void);\nint main(void) { return missing_fn(); }\n", &["-g"])],
        library: None,
        args: &["-Map=no-such-dir/out.map", "main.o"],
    },
    Case {
        name: "version-script-not-found",
        sources: &[("main.c", "int main(void) { return 0; }\n", &[])],
        library: None,
        args: &["-L.", "--version-script=exports.map", "main.o"],
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
    },
    Case {
        name: "time-trace-granularity-not-a-number",
        sources: &[("start.s", ".globl _start\n_start: ret\n", &[])],
        library: None,
        args: &["--time-trace", "--time-trace-granularity=abc", "start.o"],
    },
    Case {
        name: "relocation-out-of-range",
        sources: &[("start.s", ".globl _start\n_start:\n  movl $far_away, %eax\n  ret\n", &["-g"])],
        library: None,
        args: &["--defsym=far_away=0x100000000", "start.o"],
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
    let mut errs = Vec::new();
    for (who, linker) in [("dtld", ctx.dtld.as_os_str()), ("lld", std::ffi::OsStr::new(LLD))] {
        let out = format!("out-{who}");
        let r = run_tool(Command::new(linker).current_dir(dir).args(case.args).args(["-o", &out]))?;
        if r.status_text() != "exit 1" {
            return Err(format!("{who}: {} (expected exit 1)\n{}", r.status_text(), r.stderr_text()));
        }
        if dir.join(&out).exists() {
            return Err(format!("{who} left an output file after an error"));
        }
        errs.push(normalize(&r.stderr_text(), dir));
    }
    if errs[0] != errs[1] {
        return Err(format!("diagnostics differ\n--- dtld\n{}\n--- ld.lld-22\n{}", errs[0], errs[1]));
    }
    if !errs[0].contains("error: ") {
        return Err(format!("no error message: {}", errs[0]));
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

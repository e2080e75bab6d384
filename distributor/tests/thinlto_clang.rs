//! `dtld-distribute` as the distributor of an unmodified LLVM 22 toolchain: clang-22 with
//! `-fthinlto-distributor=` (which drives ld.lld-22's DTLTO). The program must link, run and give
//! the right answer, and a failing backend must fail the link with the job named. Skipped, with a
//! note, where LLVM 22 is not installed.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const CLANG: &str = "/usr/lib/llvm-22/bin/clang";
const LLD: &str = "/usr/lib/llvm-22/bin/ld.lld";

fn llvm22_missing() -> bool {
    if Path::new(CLANG).exists() && Path::new(LLD).exists() {
        return false;
    }
    eprintln!("note: {CLANG} or {LLD} is missing; skipping the clang-22 DTLTO test");
    true
}

/// Compiles three small C files to ThinLTO bitcode in `dir`.
fn compile(dir: &Path) {
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\nint scale(int);\nint offset(int);\n\
         int main(void) { printf(\"result=%d\\n\", scale(4) + offset(2)); return 0; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("a.c"), "int offset(int);\nint scale(int x) { return offset(x) * 10; }\n").unwrap();
    std::fs::write(dir.join("b.c"), "int offset(int x) { return x + 7; }\n").unwrap();
    let out = output(Command::new(CLANG).current_dir(dir).args(["-O2", "-flto=thin", "-c", "main.c", "a.c", "b.c"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn clang22_links_and_runs_with_dtld_distribute() {
    if llvm22_missing() {
        return;
    }
    let dir = scratch("clang22");
    compile(&dir);
    let out = output(Command::new(CLANG).current_dir(&dir).args([
        "-flto=thin",
        "-fuse-ld=lld",
        &format!("-fthinlto-distributor={DISTRIBUTOR}"),
        "-Xthinlto-distributor=-j2,--verbose",
        "main.o",
        "a.o",
        "b.o",
        "-o",
        "prog",
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("dtld-distribute: 3 jobs, total "), "the distributor did not run:\n{stderr}");
    assert!(stderr.contains("-fthinlto-index=a.2."), "{stderr}");

    let run = output(Command::new(dir.join("prog")).current_dir(&dir));
    assert!(run.status.success());
    // scale(4) + offset(2) = (4 + 7) * 10 + (2 + 7)
    assert_eq!(String::from_utf8_lossy(&run.stdout), "result=119\n");
    // ld.lld removes its job file, shards and objects; the distributor must leave nothing either.
    assert_eq!(files_in(&dir), ["a.c", "a.o", "b.c", "b.o", "main.c", "main.o", "prog"]);
}

#[test]
fn ld_lld22_reports_a_failing_backend() {
    if llvm22_missing() {
        return;
    }
    let dir = scratch("lld22-fails");
    compile(&dir);
    // A remote compiler that fails for one module only (the module is the first `*.o` argument);
    // ld.lld-22 passes it to the distributor unchanged.
    let cc = dir.join("cc");
    write_executable(
        &cc,
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.o) [ -z \"$name\" ] && name=$a;; esac; done\n\
             if [ \"$name\" = a.o ]; then echo 'backend: cannot compile a.o' >&2; exit 1; fi\n\
             exec {CLANG} \"$@\"\n"
        ),
    );
    let out = output(Command::new(LLD).current_dir(&dir).args([
        "main.o",
        "a.o",
        "b.o",
        "-e",
        "main",
        "-o",
        "prog",
        "--unresolved-symbols=ignore-all",
        &format!("--thinlto-distributor={DISTRIBUTOR}"),
        "--thinlto-distributor-arg=--progress=never",
        &format!("--thinlto-remote-compiler={}", cc.display()),
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("dtld-distribute: output of a.o -> a.2."), "{stderr}");
    assert!(stderr.contains("backend: cannot compile a.o\n"), "{stderr}");
    assert!(stderr.contains("dtld-distribute: error: 1 of 3 jobs failed:\n  a.o -> a.2."), "{stderr}");
    assert!(stderr.contains("ld.lld: error:"), "{stderr}");
    assert!(!dir.join("prog").exists());
}

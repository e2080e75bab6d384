//! lld-link and MinGW diagnostics (lld/COFF): see docs/diagnostics.md.

use crate::{Case, Flavor::Coff, Flavor::Elf, Verdict::*, D};

/// `main` in C, the input most command-line cases need.
const MAIN: &[(&str, &str, &[&str])] = &[("main.c", "int main(void) { return 0; }\n", &[])];
/// `main` and a second object defining `g`.
const MAIN_G: &[(&str, &str, &[&str])] = &[MAIN[0], ("g.c", "int g(void) { return 1; }\n", &[])];

/// A link of main.obj (entry `main`, console) with more arguments.
macro_rules! cl {
    ($name:literal, $verdict:expr, $($arg:literal),*) => {
        Case { name: $name, flavor: Coff, sources: MAIN, args: &["main.obj", "/entry:main", "/subsystem:console", $($arg),*], lld: $verdict, ..D }
    };
}

/// Like `cl!`, with g.obj too.
macro_rules! clg {
    ($name:literal, $verdict:expr, $($arg:literal),*) => {
        Case { name: $name, flavor: Coff, sources: MAIN_G, args: &["main.obj", "g.obj", "/entry:main", "/subsystem:console", $($arg),*], lld: $verdict, ..D }
    };
}

/// A module-definition file `x.def` given to a DLL link of main.obj and g.obj.
macro_rules! def {
    ($name:literal, $verdict:expr, $text:literal) => {
        Case {
            name: $name,
            flavor: Coff,
            sources: &[MAIN[0], MAIN_G[1], ("x.def", $text, &[])],
            args: &["main.obj", "g.obj", "/entry:main", "/subsystem:console", "/dll", "/def:x.def"],
            lld: $verdict,
            ..D
        }
    };
}

/// An object whose `.drectve` holds the given linker directive (`#pragma comment(linker, ...)`).
macro_rules! drectve {
    ($name:literal, $verdict:expr, $directive:literal) => {
        Case {
            name: $name,
            flavor: Coff,
            sources: &[("main.c", concat!("#pragma comment(linker, \"", $directive, "\")\nint main(void) { return 0; }\n"), &[])],
            args: &["main.obj", "/entry:main", "/subsystem:console"],
            lld: $verdict,
            ..D
        }
    };
}

pub const CASES: &[Case] = &[
    // The command line.
    Case { name: "coff-no-input-files", flavor: Coff, args: &[], output: false, lld: Error, ..D },
    cl!("coff-missing-file", Error, "nosuch.obj"),
    cl!("coff-missing-file-did-you-mean", Error, "/nodefaultlibs"),
    cl!("coff-unknown-machine", Error, "/machine:foo"),
    cl!("coff-unknown-subsystem", Error, "/subsystem:bogus"),
    Case { name: "coff-subsystem-must-be-defined", flavor: Coff, sources: &[("f.c", "int f(void) { return 0; }\n", &[])], args: &["f.obj"], lld: Error, ..D },
    Case {
        name: "coff-default-entry-undefined",
        flavor: Coff,
        sources: &[("f.c", "int f(void) { return 0; }\n", &[])],
        args: &["f.obj", "/subsystem:console"],
        lld: Error,
        ..D
    },
    cl!("coff-entry-undefined", Error, "/entry:nosuch"),
    cl!("coff-entry-empty", Error, "/entry:"),
    cl!("coff-noentry-without-dll", Error, "/noentry"),
    cl!("coff-base-invalid-number", Error, "/base:xyz"),
    cl!("coff-stack-invalid-number", Error, "/stack:abc"),
    cl!("coff-stack-commit-invalid-number", Error, "/stack:0x100000,abc"),
    cl!("coff-heap-invalid-number", Error, "/heap:x"),
    cl!("coff-version-invalid-number", Error, "/version:x"),
    cl!("coff-version-invalid-minor", Error, "/version:1.x"),
    cl!("coff-subsystem-version-invalid", Error, "/subsystem:console,x"),
    cl!("coff-osversion-invalid", Error, "/osversion:y"),
    cl!("coff-filealign-not-power-of-two", Error, "/filealign:3"),
    cl!("coff-align-not-power-of-two", Error, "/align:3"),
    cl!("coff-align-without-driver", Warning, "/align:8192"),
    cl!("coff-timestamp-invalid", Error, "/timestamp:zz"),
    cl!("coff-alternatename-invalid", Error, "/alternatename:foo"),
    cl!("coff-alternatename-conflicts", Error, "/alternatename:a=b", "/alternatename:a=c"),
    cl!("coff-merge-invalid", Error, "/merge:foo"),
    cl!("coff-merge-rsrc", Error, "/merge:.rsrc=.text"),
    cl!("coff-merge-reloc", Error, "/merge:.reloc=.text"),
    cl!("coff-merge-already-merged", Warning, "/merge:.a=.b", "/merge:.a=.c"),
    cl!("coff-merge-default-already-merged", Warning, "/merge:.bss=.text"),
    cl!("coff-section-invalid", Error, "/section:foo"),
    cl!("coff-section-invalid-attribute", Error, "/section:.text,z"),
    cl!("coff-aligncomm-invalid", Error, "/aligncomm:x"),
    cl!("coff-aligncomm-invalid-alignment", Error, "/aligncomm:x,y"),
    cl!("coff-aligncomm-not-found", Warning, "/aligncomm:foo,2"),
    cl!("coff-functionpadmin-invalid", Error, "/functionpadmin:z"),
    cl!("coff-dependentloadflag-invalid", Error, "/dependentloadflag:z"),
    cl!("coff-dependentloadflag-missing", Error, "/dependentloadflag"),
    cl!("coff-manifest-invalid", Error, "/manifest:foo"),
    cl!("coff-manifest-embed-invalid", Error, "/manifest:embed,x"),
    cl!("coff-manifest-embed-id-invalid", Error, "/manifest:embed,id=z"),
    cl!("coff-manifestuac-invalid", Error, "/manifestuac:bad"),
    cl!("coff-manifestinput-without-embed", Error, "/manifestinput:x.xml"),
    cl!("coff-swaprun-invalid", Error, "/swaprun:foo"),
    cl!("coff-swaprun-missing", Error, "/swaprun:cd,"),
    cl!("coff-guard-invalid", Error, "/guard:foo"),
    cl!("coff-debug-unknown", Error, "/debug:foo"),
    cl!("coff-debug-fastlink", Warning, "/debug:fastlink"),
    cl!("coff-debugtype-unknown", Warning, "/debugtype:foo"),
    cl!("coff-pdbpagesize-invalid", Error, "/debug", "/pdbpagesize:7"),
    cl!("coff-pdbaltpath-env", Warning, "/debug", "/pdbaltpath:%FOO%"),
    cl!("coff-opt-unknown", Error, "/opt:foo"),
    cl!("coff-opt-lldlto-invalid", Error, "/opt:lldlto=9"),
    cl!("coff-opt-lldltocgo-invalid", Error, "/opt:lldltocgo=9"),
    cl!("coff-opt-lldltojobs-invalid", Error, "/opt:lldltojobs=x"),
    cl!("coff-opt-lldltopartitions-invalid", Error, "/opt:lldltopartitions=0"),
    cl!("coff-lldsavetemps-unknown", Error, "/lldsavetemps:foo"),
    cl!("coff-lldemit-unknown", Error, "/lldemit:foo"),
    cl!("coff-errorlimit-invalid", Error, "/errorlimit:x"),
    cl!("coff-threads-zero", Error, "/threads:0"),
    cl!("coff-fixed-dynamicbase", Error, "/fixed", "/dynamicbase"),
    cl!("coff-failifmismatch-invalid", Error, "/failifmismatch:a"),
    cl!("coff-failifmismatch-cmdline", Error, "/failifmismatch:a=1", "/failifmismatch:a=2"),
    cl!("coff-export-invalid", Error, "/export:f,bogus"),
    cl!("coff-export-ordinal-zero", Error, "/export:f,@0"),
    cl!("coff-inferasanlibs", Warning, "/inferasanlibs"),
    cl!("coff-incremental-profile", Warning, "/incremental", "/profile"),
    cl!("coff-incremental-ref", Warning, "/incremental"),
    cl!("coff-incremental-icf", Warning, "/incremental", "/opt:noref,icf"),
    Case {
        name: "coff-incremental-order",
        flavor: Coff,
        sources: &[MAIN[0], ("order.txt", "main\n", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/incremental", "/opt:noref", "/order:@order.txt"],
        lld: Warning,
        ..D
    },
    cl!("coff-order-malformed", Error, "/order:x"),
    cl!("coff-order-missing-file", Error, "/order:@nosuch.txt"),
    Case {
        name: "coff-order-missing-symbol",
        flavor: Coff,
        sources: &[MAIN[0], ("order.txt", "nosuch\n", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/order:@order.txt"],
        lld: Warning,
        ..D
    },
    cl!("coff-lib-not-first", Warning, "/lib"),
    cl!("coff-rsp-quoting-invalid", Error, "--rsp-quoting=foo"),
    cl!("coff-color-diagnostics-invalid", Error, "--color-diagnostics=foo"),
    cl!("coff-stray-end-lib", Error, "/end-lib"),
    cl!("coff-nested-start-lib", Error, "/start-lib", "/start-lib"),
    cl!("coff-wholearchive-missing", Error, "/wholearchive:nosuch.lib"),
    cl!("coff-defaultlib-missing", Error, "/defaultlib:nosuch"),
    cl!("coff-lldltocachepolicy-invalid", Error, "/lldltocachepolicy:foo"),
    cl!("coff-mllvm-unknown", Exit1, "/mllvm:-bogus-option", "/mllvm:-another-bogus-option"),
    cl!("coff-thinlto-prefix-replace-format", Error, "/thinlto-prefix-replace:x"),
    cl!("coff-vctoolsdir-mingw", Warning, "/lldmingw", "/vctoolsdir:x"),
    cl!("coff-stub-missing", Error, "/stub:nosuch"),
    cl!("coff-stub-bad-signature", Error, "/stub:main.obj"),
    cl!("coff-pdbstripped", Warning, "/pdbstripped:x.pdb"),
    cl!("coff-unknown-argument", Warning, "-bogus"),
    cl!("coff-unknown-argument-did-you-mean", Warning, "-nodefaultlibs"),
    cl!("coff-merge-cycle", Error, "/merge:.a=.b", "/merge:.b=.a"),
    Case {
        name: "coff-cannot-open-output",
        flavor: Coff,
        sources: MAIN,
        args: &["main.obj", "/entry:main", "/subsystem:console", "/out:nodir/x.exe"],
        output: false,
        lld: Error,
        ..D
    },
    // Symbols.
    Case {
        name: "coff-undefined-symbol",
        flavor: Coff,
        sources: &[("u.c", "int f(void);\nint main(void) { return f(); }\n", &[])],
        args: &["u.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-undefined-symbol-force",
        flavor: Coff,
        sources: &[("u.c", "int f(void);\nint main(void) { return f(); }\n", &[])],
        args: &["u.obj", "/entry:main", "/subsystem:console", "/force:unresolved"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-duplicate-symbol",
        flavor: Coff,
        sources: &[MAIN[0], MAIN_G[1], ("g2.c", "int g(void) { return 2; }\n", &[])],
        args: &["main.obj", "g.obj", "g2.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-duplicate-symbol-force",
        flavor: Coff,
        sources: &[MAIN[0], MAIN_G[1], ("g2.c", "int g(void) { return 2; }\n", &[])],
        args: &["main.obj", "g.obj", "g2.obj", "/entry:main", "/subsystem:console", "/force:multiple"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-locally-defined-imported",
        flavor: Coff,
        sources: &[("main.c", "__declspec(dllimport) int g(void);\nint main(void) { return g(); }\n", &[]), MAIN_G[1]],
        args: &["main.obj", "g.obj", "/entry:main", "/subsystem:console"],
        lld: Warning,
        ..D
    },
    cl!("coff-include-undefined", Error, "/include:nosuch"),
    clg!("coff-export-undefined", Error, "/dll", "/export:nosuch"),
    clg!("coff-export-duplicate-ordinal", Error, "/dll", "/export:g,@1", "/export:h=g,@1"),
    Case {
        name: "coff-failifmismatch-objects",
        flavor: Coff,
        sources: &[
            ("main.c", "#pragma detect_mismatch(\"k\", \"1\")\nint main(void) { return 0; }\n", &[]),
            ("g.c", "#pragma detect_mismatch(\"k\", \"2\")\nint g(void) { return 1; }\n", &[]),
        ],
        args: &["main.obj", "g.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // Input files.
    Case {
        name: "coff-unknown-file-type",
        flavor: Coff,
        sources: &[MAIN[0], ("junk.obj", "not an object\n", &[])],
        args: &["main.obj", "junk.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-could-not-parse",
        flavor: Coff,
        sources: MAIN,
        prep: &[&["sh", "-c", "head -c 30 main.obj > short.obj"]],
        args: &["main.obj", "short.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-dll-instead-of-import-library",
        flavor: Coff,
        sources: MAIN_G,
        prep: &[&["lld-link-22", "/dll", "/noentry", "g.obj", "/export:g", "/out:g.dll"]],
        args: &["main.obj", "g.dll", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-machine-conflict-x86",
        flavor: Coff,
        sources: &[MAIN[0], ("g.c", "int g(void) { return 1; }\n", &["--target=i386-pc-windows-msvc"])],
        args: &["main.obj", "g.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-machine-conflict-arm64",
        flavor: Coff,
        sources: &[MAIN[0], ("g.c", "int g(void) { return 1; }\n", &["--target=aarch64-pc-windows-msvc"])],
        args: &["main.obj", "g.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-thin-archive-member-missing",
        flavor: Coff,
        sources: MAIN_G,
        prep: &[&["sh", "-c", "llvm-ar-22 rc --thin thin.lib g.obj && rm g.obj"]],
        args: &["main.obj", "thin.lib", "/include:g", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-wholearchive-thin-member-missing",
        flavor: Coff,
        sources: MAIN_G,
        prep: &[&["sh", "-c", "llvm-ar-22 rc --thin thin.lib g.obj && rm g.obj"]],
        args: &["main.obj", "/wholearchive:thin.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-literal-edata",
        flavor: Coff,
        sources: &[MAIN[0], MAIN_G[1], ("edata.s", ".section .edata,\"dr\"\n.long 0\n", &[])],
        args: &["main.obj", "g.obj", "edata.obj", "/entry:main", "/subsystem:console", "/dll", "/export:g"],
        lld: Warning,
        ..D
    },
    // .drectve.
    drectve!("coff-drectve-not-allowed", Error, "/out:foo.exe"),
    drectve!("coff-drectve-input-not-allowed", Error, "bare.lib"),
    drectve!("coff-drectve-unknown-argument", Error, "-bogus"),
    Case {
        name: "coff-drectve-defaultlib-missing",
        flavor: Coff,
        sources: &[("main.c", "#pragma comment(lib, \"nosuchlib\")\nint main(void) { return 0; }\n", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // Module-definition files.
    def!("coff-def-unknown-directive", Error, "FOO\n"),
    def!("coff-def-integer-expected", Error, "HEAPSIZE x\n"),
    def!("coff-def-version-integer-expected", Error, "VERSION x\n"),
    def!("coff-def-identifier-expected", Error, "EXPORTS\n  g =\n"),
    def!("coff-def-export-undefined", Error, "EXPORTS\n  nosuch\n"),
    cl!("coff-def-missing", Error, "/def:nosuch.def"),
];

/// A MinGW link (`ld.lld -m i386pep`) of `f.o` (entry `f`) with more arguments.
macro_rules! mingw {
    ($name:literal, $verdict:expr, $($arg:literal),*) => {
        Case { name: $name, flavor: Elf, sources: MINGW_F, args: &["-m", "i386pep", "f.o", "-e", "f", $($arg),*], lld: $verdict, ..D }
    };
}

/// `f` compiled for MinGW (the MinGW driver's cases run as ld.lld, hence the second target).
const MINGW_F: &[(&str, &str, &[&str])] = &[("f.c", "int f(void) { return 0; }\n", &["--target=x86_64-w64-mingw32"])];
/// `var`, data, in a DLL with its import library v.lib (the auto-import cases).
const VAR_DLL: &[&[&str]] = &[&["lld-link-22", "/dll", "/noentry", "v.o", "/export:var,DATA", "/out:v.dll", "/implib:v.lib"]];
/// A 32-bit PC-relative reference to `var` (auto-imported: a runtime pseudo relocation).
const NARROW: (&str, &str, &[&str]) = ("n.s", ".globl f\nf:\n  movl var(%rip), %eax\n  ret\n", &["--target=x86_64-w64-mingw32"]);
const VAR: (&str, &str, &[&str]) = ("v.c", "int var = 3;\n", &["--target=x86_64-w64-mingw32"]);
const RELOCATOR: (&str, &str, &[&str]) = ("rr.s", ".globl _pei386_runtime_relocator\n_pei386_runtime_relocator:\n  ret\n", &["--target=x86_64-w64-mingw32"]);
/// `main` and `mainCRTStartup` (a console entry that is not missing).
const CRT: (&str, &str, &[&str]) = ("crt.c", "int mainCRTStartup(void) { return 0; }\nint WinMainCRTStartup(void) { return 0; }\n", &[]);
/// `main` in an object built with guard CF (`@feat.00` bit 0x800: its `.gfids$y` lists the
/// address-taken functions), as assembly.
macro_rules! guard_main {
    () => {
        ".def @feat.00; .scl 3; .type 0; .endef\n.globl @feat.00\n@feat.00 = 0x800\n.text\n.def main; .scl 2; .type 32; .endef\n.globl main\nmain:\n  ret\n"
    };
}

/// `_load_config_used` as assembly (the load configuration checks).
macro_rules! loadcfg {
    ($name:literal, $verdict:expr, $asm:literal $(, $arg:literal)*) => {
        Case {
            name: $name,
            flavor: Coff,
            sources: &[MAIN[0], ("lc.s", $asm, &[])],
            args: &["main.obj", "lc.obj", "/entry:main", "/subsystem:console" $(, $arg)*],
            lld: $verdict,
            ..D
        }
    };
}

pub const CASES2: &[Case] = &[
    // The MinGW driver (lld/MinGW/Driver.cpp).
    Case { name: "coff-mingw-no-input-files", flavor: Elf, args: &["-m", "i386pep"], lld: Error, ..D },
    Case {
        name: "coff-mingw-missing-argument",
        flavor: Elf,
        sources: MINGW_F,
        args: &["-m", "i386pep", "f.o", "-e", "f", "-o"],
        output: false,
        lld: Error,
        ..D
    },
    mingw!("coff-mingw-mllvm-unknown", Exit1, "-mllvm", "-bogus-option"),
    // LTO options lld-link reads from what the MinGW driver passes on (their last occurrence):
    // errors of every link, in lld-link's words.
    mingw!("coff-mingw-lto-O-invalid", Error, "--lto-O9"),
    mingw!("coff-mingw-plugin-opt-jobs-invalid", Error, "--plugin-opt=jobs=x"),
    mingw!("coff-mingw-plugin-opt-unknown", Error, "--plugin-opt=bogus"),
    mingw!("coff-mingw-thinlto-prefix-replace-format", Error, "--thinlto-prefix-replace=x"),
    mingw!("coff-mingw-thinlto-cache-policy-invalid", Error, "--thinlto-cache-policy=bad"),
    mingw!("coff-mingw-unknown-argument", Error, "--bogus-x"),
    mingw!("coff-mingw-library-not-found", Error, "-lnosuch"),
    mingw!("coff-mingw-library-colon-not-found", Error, "-l:nosuch.a"),
    mingw!("coff-mingw-icf-unknown", Error, "--icf=foo"),
    mingw!("coff-mingw-unknown-emulation", Error, "-m", "foo"),
    mingw!("coff-mingw-guard-longjmp", Warning, "--guard-longjmp"),
    mingw!("coff-mingw-error-limit-invalid", Error, "--error-limit=x"),
    // MinGW auto-import and runtime pseudo relocations.
    Case {
        name: "coff-auto-import-needs-pseudo-relocs",
        flavor: Elf,
        sources: &[NARROW, VAR],
        prep: VAR_DLL,
        args: &["-m", "i386pep", "n.o", "v.lib", "-e", "f", "--disable-runtime-pseudo-reloc"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-pseudo-reloc-too-narrow",
        flavor: Elf,
        sources: &[NARROW, VAR, RELOCATOR],
        prep: VAR_DLL,
        args: &["-m", "i386pep", "n.o", "rr.o", "v.lib", "-e", "f"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-pseudo-reloc-no-relocator",
        flavor: Elf,
        sources: &[NARROW, VAR],
        prep: VAR_DLL,
        args: &["-m", "i386pep", "n.o", "v.lib", "-e", "f"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-auto-import-bad-relocation",
        flavor: Elf,
        sources: &[("r.s", ".globl f\nf:\n  ret\n.data\n.rva var\n", &["--target=x86_64-w64-mingw32"]), VAR],
        prep: VAR_DLL,
        args: &["-m", "i386pep", "r.o", "v.lib", "-e", "f"],
        lld: Error,
        ..D
    },
    // Symbols, exports, entry points.
    Case {
        name: "coff-machine-not-specified",
        flavor: Coff,
        sources: MAIN_G,
        prep: &[&["llvm-ar-22", "rc", "g.lib", "g.obj"]],
        args: &["g.lib", "/dll", "/noentry"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-secrel-absolute",
        flavor: Coff,
        sources: &[MAIN[0], ("sa.s", ".section .data,\"dw\"\n.secrel32 abs_sym\n", &[]), ("ab.s", ".globl abs_sym\nabs_sym = 0x10\n", &[])],
        args: &["main.obj", "sa.obj", "ab.obj", "/entry:main", "/subsystem:console", "/opt:noref"],
        lld: Error,
        ..D
    },
    clg!("coff-root-locally-defined-imported", Warning, "/include:__imp_g"),
    Case {
        name: "coff-errorlimit-reached",
        flavor: Coff,
        sources: &[("u.c", "int f(void);\nint h(void);\nint main(void) { return f() + h(); }\n", &[])],
        args: &["u.obj", "/entry:main", "/subsystem:console", "/errorlimit:1"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-stub-too-small",
        flavor: Coff,
        sources: &[MAIN[0], ("s.bin", "MZxx", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/stub:s.bin"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-found-both-main-wmain",
        flavor: Coff,
        sources: &[MAIN[0], ("wm.c", "int wmain(void) { return 0; }\n", &[]), CRT],
        args: &["main.obj", "wm.obj", "crt.obj", "/subsystem:console"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-found-both-winmain-wwinmain",
        flavor: Coff,
        sources: &[("w.c", "int WinMain(void) { return 0; }\nint wWinMain(void) { return 0; }\n", &[]), CRT],
        args: &["w.obj", "crt.obj", "/subsystem:windows"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-found-main-and-winmain",
        flavor: Coff,
        sources: &[MAIN[0], ("w.c", "int WinMain(void) { return 0; }\n", &[]), CRT],
        args: &["main.obj", "w.obj", "crt.obj"],
        lld: Warning,
        ..D
    },
    cl!("coff-thinlto-distributor-without-compiler", Error, "/thinlto-distributor:x"),
    cl!("coff-hotpatchcompatible-padmin", Error, "/hotpatchcompatible"),
    cl!("coff-includeglob-invalid", Error, "/includeglob:["),
    Case {
        name: "coff-too-many-exports",
        flavor: Coff,
        sources: MAIN_G,
        prep: &[&["sh", "-c", "{ echo EXPORTS; seq 1 65536 | sed 's/.*/  e&=g/'; } > big.def"]],
        args: &["main.obj", "g.obj", "/dll", "/noentry", "/def:big.def"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-discarded-section-reference",
        flavor: Coff,
        sources: &[
            MAIN[0],
            ("c1.s", ".section .text$f,\"xr\",discard,f\n.globl f\nf: ret\n", &[]),
            ("c2.s", ".section .text$f,\"xr\",discard,f\n.globl f\nf: ret\n.section .rdata$x,\"dr\",associative,f\nlx: .long 1\n.data\n.quad lx\n", &[]),
        ],
        args: &["main.obj", "c1.obj", "c2.obj", "/entry:main", "/subsystem:console", "/opt:noref"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-conflicting-comdat",
        flavor: Coff,
        sources: &[
            MAIN[0],
            ("c3.s", ".section .text$g,\"xr\",largest,g\n.globl g\ng: ret\n", &[]),
            ("c4.s", ".section .text$g,\"xr\",same_size,g\n.globl g\ng: ret\n", &[]),
        ],
        args: &["main.obj", "c3.obj", "c4.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-unsupported-relocation",
        flavor: Coff,
        sources: &[("ur.yaml", UR_YAML, &[])],
        prep: &[&["yaml2obj-22", "ur.yaml", "-o", "ur.obj"]],
        args: &["ur.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-section-too-large",
        flavor: Coff,
        sources: &[MAIN[0], ("hb.s", ".section .bss$a,\"bw\"\n.zero 0x80000000\n.section .bss$b,\"bw\"\n.zero 0x80000000\n", &[])],
        args: &["main.obj", "hb.obj", "/entry:main", "/subsystem:console", "/opt:noref"],
        lld: Error,
        ..D
    },
    // Input files.
    Case {
        name: "coff-failed-to-parse-archive",
        flavor: Coff,
        sources: &[MAIN[0], ("bad.lib", "!<arch>\ngarbage garbage garbage\n", &[])],
        args: &["main.obj", "/wholearchive:bad.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-malformed-archive",
        flavor: Coff,
        sources: &[MAIN[0], ("bad.lib", "!<arch>\ngarbage garbage garbage\n", &[])],
        args: &["main.obj", "bad.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-archive-member-unknown-file-type",
        flavor: Coff,
        sources: &[MAIN[0], ("junk.txt", "junk\n", &[])],
        prep: &[&["llvm-ar-22", "rc", "j.lib", "junk.txt"]],
        args: &["main.obj", "/wholearchive:j.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // The load configuration (lld's Writer::checkLoadConfig).
    cl!("coff-dependentloadflag-no-load-config", Warning, "/dependentloadflag:0x800"),
    loadcfg!(
        "coff-load-config-misaligned",
        Warning,
        ".section .rdata,\"dr\"\n.p2align 2\n.globl _load_config_used\n_load_config_used:\n.long 0x140\n.zero 0x13c\n"
    ),
    loadcfg!(
        "coff-load-config-misaligned-offset",
        Warning,
        ".section .rdata,\"dr\"\n.p2align 3\n.long 0\n.globl _load_config_used\n_load_config_used:\n.long 0x140\n.zero 0x13c\n"
    ),
    loadcfg!("coff-load-config-chunk-too-small", Error, ".section .rdata,\"dr\"\n.p2align 3\n.globl _load_config_used\n_load_config_used:\n.short 0\n"),
    loadcfg!(
        "coff-load-config-size-too-large",
        Error,
        ".section .rdata,\"dr\"\n.p2align 3\n.globl _load_config_used\n_load_config_used:\n.long 0x140\n.long 0\n"
    ),
    loadcfg!("coff-load-config-uninitialized", Error, ".bss\n.p2align 3\n.globl _load_config_used\n_load_config_used:\n.zero 0x140\n"),
    loadcfg!(
        "coff-load-config-no-dependentloadflags",
        Warning,
        ".section .rdata,\"dr\"\n.p2align 3\n.globl _load_config_used\n_load_config_used:\n.long 0x40\n.zero 0x3c\n",
        "/dependentloadflag:0x800"
    ),
    // Control Flow Guard (lld's createGuardCFTables and checkLoadConfigGuardData).
    cl!("coff-guard-no-load-config", Warning, "/guard:cf"),
    loadcfg!(
        "coff-load-config-guard-too-small",
        Warning,
        ".section .rdata,\"dr\"\n.p2align 3\n.globl _load_config_used\n_load_config_used:\n.long 0x40\n.zero 0x3c\n",
        "/guard:cf"
    ),
    loadcfg!(
        "coff-load-config-guard-not-set",
        Warning,
        ".section .rdata,\"dr\"\n.p2align 3\n.globl _load_config_used\n_load_config_used:\n.long 0x140\n.zero 0x13c\n",
        "/guard:cf"
    ),
    Case {
        name: "coff-guard-index-section-size",
        flavor: Coff,
        sources: &[("gf.s", concat!(guard_main!(), ".section .gfids$y,\"dr\"\n.symidx main\n.byte 0\n"), &[])],
        args: &["gf.obj", "/entry:main", "/subsystem:console", "/guard:cf"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-guard-index-invalid",
        flavor: Coff,
        sources: &[("gf.s", concat!(guard_main!(), ".section .gfids$y,\"dr\"\n.symidx main\n.long 0x400\n"), &[])],
        args: &["gf.obj", "/entry:main", "/subsystem:console", "/guard:cf"],
        lld: Warning,
        ..D
    },
];

/// An object with an IMAGE_REL_AMD64_SREL32 relocation, which lld-link does not apply.
const UR_YAML: &str = "--- !COFF
header:
  Machine:         IMAGE_FILE_MACHINE_AMD64
  Characteristics: [  ]
sections:
  - Name:            .text
    Characteristics: [ IMAGE_SCN_CNT_CODE, IMAGE_SCN_MEM_EXECUTE, IMAGE_SCN_MEM_READ ]
    Alignment:       16
    SectionData:     C300000000
    Relocations:
      - VirtualAddress:  1
        SymbolName:      main
        Type:            IMAGE_REL_AMD64_SREL32
symbols:
  - Name:            .text
    Value:           0
    SectionNumber:   1
    SimpleType:      IMAGE_SYM_TYPE_NULL
    ComplexType:     IMAGE_SYM_DTYPE_NULL
    StorageClass:    IMAGE_SYM_CLASS_STATIC
  - Name:            main
    Value:           0
    SectionNumber:   1
    SimpleType:      IMAGE_SYM_TYPE_NULL
    ComplexType:     IMAGE_SYM_DTYPE_FUNCTION
    StorageClass:    IMAGE_SYM_CLASS_EXTERNAL
...
";

/// lld-link's output options (`/linkrepro`, `/reproduce`, `/call-graph-ordering-file`, `/map`),
/// kept apart from the lists above so that work on them and on those merges cleanly.
pub const OUTPUT_OPTION_CASES: &[Case] = &[
    cl!("coff-linkrepro-failed", Error, "/linkrepro:nodir"),
    Case {
        name: "coff-order-and-call-graph-file",
        flavor: Coff,
        sources: &[MAIN[0], ("o.txt", "main\n", &[]), ("cg.txt", "main main 1\n", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/order:@o.txt", "/call-graph-ordering-file:cg.txt"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-call-graph-parse-error",
        flavor: Coff,
        sources: &[MAIN[0], ("cg.txt", "main main 1\nmain  main 2\n", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/call-graph-ordering-file:cg.txt"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-call-graph-no-such-symbol",
        flavor: Coff,
        sources: &[MAIN[0], ("cg.txt", "# a comment\nmain nosuch 0x10\n", &[])],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/call-graph-ordering-file:cg.txt"],
        lld: Warning,
        ..D
    },
    cl!("coff-lldmap-map-same-file", Warning, "/map:x.map", "/lldmap:x.map"),
    cl!("coff-mapinfo-unknown", Error, "/map:x.map", "/mapinfo:exports", "/mapinfo:bogus"),
];

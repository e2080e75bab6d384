//! lld-link and MinGW diagnostics (lld/COFF): see docs/diagnostics.md.

use crate::{Case, Flavor::Coff, Verdict::*, D};

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

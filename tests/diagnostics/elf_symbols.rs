//! Symbol diagnostics (lld/ELF/Symbols.cpp, SymbolTable.cpp, Relocations.cpp's undefined-symbol
//! reports, Writer.cpp's shared-library checks): undefined and duplicate symbols with their
//! DWARF source lines and the spell corrector, versions, common symbols, ordering files.

use crate::{Case, Verdict::*, D, START};

/// A main calling `foo`, and `foo` in its own object (for archives and ordering files).
const MAIN_FOO: &[(&str, &str, &[&str])] =
    &[("main.c", "int foo(void);\nvoid _start(void) { foo(); }\n", &[]), ("foo.c", "int foo(void) { return 0; }\n", &[])];

pub const CASES: &[Case] = &[
    // A --defsym naming a symbol nothing defines (lld names the option `--defsym`, however
    // it was spelt).
Case {
        name: "elf-defsym-symbol-not-found",
        sources: &[("main.c", "int main(void) { return 0; }\n", &[])],
        args: &["-e", "main", "-defsym=alias=nosuch", "main.o"],
        lld: Error, ..D },
    // --warn-backrefs: main.o refers to foo, which only a --start-lib object named before it
    // defines (GNU ld would not find it); --fatal-warnings makes the warning fail the link.
Case {
        name: "warn-backrefs-start-lib",
        sources: &[("main.c", "int foo(void);\nint main(void) { return foo(); }\n", &[]), ("foo.c", "int foo(void) { return 0; }\n", &[])],
        args: &["-e", "main", "--fatal-warnings", "--warn-backrefs", "--start-lib", "foo.o", "--end-lib", "main.o"],
        lld: Error, ..D },
Case {
        name: "undefined-dwarf5-function-sections",
        sources: &[(
            "main.c",
            "int missing_fn(int);\nint helper(int x) {\n  return missing_fn(x) + 1;\n}\nint main(void) {\n  return missing_fn(2);\n}\n",
            &["-g", "-gdwarf-5", "-ffunction-sections", "-O1"],
        )],
        args: &["main.o"],
        lld: Error, ..D },
Case {
        name: "undefined-dwarf4-variable",
        sources: &[("main.c", "extern int missing_var;\nint *p = &missing_var;\nint main(void) { return *p; }\n", &["-g", "-gdwarf-4"])],
        args: &["main.o"],
        lld: Error, ..D },
Case {
        name: "duplicate-variable-and-function",
        sources: &[
            ("a.c", "int shared_counter = 1;\nint twice(void) { return 2; }\nint main(void) { return twice(); }\n", &["-g"]),
            ("b.c", "\n\nint shared_counter = 2;\nint twice(void) {\n  return 3;\n}\n", &["-g"]),
        ],
        args: &["a.o", "b.o"],
        lld: Error, ..D },
Case {
        name: "spell-corrector",
        sources: &[
            ("a.c", "int compute_total(int);\nint main(void) { return compute_total(1); }\n", &["-g"]),
            ("b.c", "int compute_totals(int x) { return x; }\n", &[]),
        ],
        args: &["a.o", "b.o"],
        lld: Error, ..D },
Case {
        name: "cxx-no-demangle",
        sources: &[
            ("a.cc", "int twice(int x) { return 2 * x; }\nint main() { return twice(1); }\n", &["-g"]),
            ("b.cc", "double scale(double);\nint twice(int x) {\n  return (int)scale(x);\n}\n", &["-g", "-O1"]),
        ],
        args: &["--no-demangle", "a.o", "b.o"],
        lld: Error, ..D },
Case {
        name: "cxx-demangle-default",
        sources: &[
            ("a.cc", "namespace geo { double area(double r); }\nint main() { return (int)geo::area(2.0); }\n", &["-g"]),
            ("b.cc", "namespace geo { double area(float r) { return r * r; } }\n", &[]),
        ],
        args: &["--demangle", "a.o", "b.o"],
        lld: Error, ..D },
Case {
        name: "version-script-not-found",
        sources: &[("main.c", "int main(void) { return 0; }\n", &[])],
        args: &["-L.", "--version-script=exports.map", "main.o"],
        lld: Error, ..D },
Case {
        // An executable against a library that needs a symbol nothing defines
        // (--no-allow-shlib-undefined, lld's default for executables).
        name: "shlib-undefined",
        sources: &[("main.c", "int lib_fn(void);\nint main(void) { return lib_fn(); }\n", &["-g"])],
        library: Some(("libp.so", "extern int missing_fn(void);\nint lib_fn(void) { return missing_fn(); }\n")),
        args: &["-e", "main", "main.o", "libp.so"],
        lld: Error, ..D },
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
        lld: Error, ..D },
Case {
        // -shared with --unresolved-symbols=report-all: a library's undefined symbols are errors.
        name: "shared-report-all-undefined",
        sources: &[("lib.c", "int missing_fn(void);\nint get(void) {\n  return missing_fn();\n}\n", &["-g", "-fPIC"])],
        args: &["-shared", "--unresolved-symbols=report-all", "lib.o"],
        lld: Error, ..D },
Case {
        // ... and --allow-shlib-undefined after it lets the library's through, not the object's.
        name: "report-all-then-allow-shlib-undefined",
        sources: &[("main.c", "int lib_fn(void);\nint missing_here(void);\nint main(void) { return lib_fn() + missing_here(); }\n", &["-g"])],
        library: Some(("libp.so", "extern int missing_fn(void);\nint lib_fn(void) { return missing_fn(); }\n")),
        args: &["-e", "main", "--unresolved-symbols=report-all", "--allow-shlib-undefined", "main.o", "libp.so"],
        lld: Error, ..D },
Case {
        // -z undefs in an executable: lld ignores an undefined function (a warning about the
        // missing entry is all that remains).
        name: "z-undefs-executable",
        sources: &[("main.c", "int missing_fn(void);\nint start(void) { return missing_fn(); }\n", &["-g", "-fPIC"])],
        args: &["-pie", "-z", "undefs", "main.o"],
        lld: Warning, ..D },
    Case {
        name: "elf-backward-reference",
        sources: MAIN_FOO,
        prep: &[&["llvm-ar-22", "rc", "libfoo.a", "foo.o"]],
        args: &["--warn-backrefs", "libfoo.a", "main.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-duplicate-absolute",
        sources: &[
            ("a.s", ".globl _start, limit\n_start: ret\n.set limit, 16\n", &[]),
            ("b.s", ".globl limit\n.set limit, 32\n", &[]),
        ],
        args: &["a.o", "b.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-warn-common-overridden",
        sources: &[("a.c", "int shared_count;\nvoid _start(void) {}\n", &["-fcommon"]), ("b.c", "int shared_count = 1;\n", &[])],
        args: &["--warn-common", "a.o", "b.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-warn-common-multiple",
        sources: &[("a.c", "int shared_count;\nvoid _start(void) {}\n", &["-fcommon"]), ("b.c", "long shared_count;\n", &["-fcommon"])],
        args: &["--warn-common", "a.o", "b.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-version-script-undefined-symbol",
        sources: &[("a.c", "int foo(void) { return 1; }\n", &["-fPIC"]), ("v.map", "V1 { global: foo; nosuch; local: *; };\n", &[])],
        args: &["-shared", "--version-script=v.map", "a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-version-script-reassign",
        sources: &[("a.c", "int foo(void) { return 1; }\n", &["-fPIC"]), ("v.map", "V1 { global: foo; };\nV2 { global: foo; };\n", &[])],
        args: &["-shared", "--version-script=v.map", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-version-script-star-local-global",
        sources: &[("a.c", "int foo(void) { return 1; }\n", &["-fPIC"]), ("v.map", "{ global: *; local: *; };\n", &[])],
        args: &["-shared", "--version-script=v.map", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-version-script-star-twice",
        sources: &[("a.c", "int foo(void) { return 1; }\n", &["-fPIC"]), ("v.map", "V1 { global: *; };\nV2 { global: *; };\n", &[])],
        args: &["-shared", "--version-script=v.map", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-undefined-versioned",
        sources: &[("a.c", "int foo(void);\n__asm__(\".symver foo, foo@VER1\");\nvoid _start(void) { foo(); }\n", &[])],
        args: &["a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-undefined-hidden",
        sources: &[("a.c", "__attribute__((visibility(\"hidden\"))) int helper(void);\nvoid _start(void) { helper(); }\n", &["-g"])],
        args: &["a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-undefined-protected",
        sources: &[("a.c", "__attribute__((visibility(\"protected\"))) int helper(void);\nvoid _start(void) { helper(); }\n", &["-g"])],
        args: &["a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-undefined-warn-unresolved",
        sources: &[("a.c", "int missing_fn(void);\nvoid _start(void) { missing_fn(); }\n", &["-g"])],
        args: &["--warn-unresolved-symbols", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-undefined-noinhibit-exec",
        sources: &[("a.c", "int missing_fn(void);\nvoid _start(void) { missing_fn(); }\n", &["-g"])],
        args: &["--noinhibit-exec", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-undefined-vtable-key-function",
        sources: &[(
            "a.cc",
            "struct Shape {\n  Shape() {}\n  virtual int sides() const;\n};\nint make() {\n  Shape s;\n  return 0;\n}\nextern \"C\" void _start() { make(); }\n",
            &["-fno-exceptions"],
        )],
        args: &["a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-undefined-start-stop-gc",
        sources: &[("a.c", "extern char __start_mydata[];\nchar *first(void) { return __start_mydata; }\nvoid _start(void) { first(); }\n", &[])],
        args: &["--gc-sections", "a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-undefined-many-references",
        sources: &[(
            "a.c",
            "int missing_fn(int);\nint a(void) { return missing_fn(1); }\nint b(void) { return missing_fn(2); }\nint c(void) { return missing_fn(3); }\nint d(void) { return missing_fn(4); }\nvoid _start(void) {}\n",
            &["-g", "-ffunction-sections"],
        )],
        args: &["a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-redefine-global-offset-table",
        sources: &[("a.c", "int _GLOBAL_OFFSET_TABLE_ = 1;\nvoid _start(void) {}\n", &[])],
        args: &["a.o"],
        lld: Error,
        ..D
    },
    Case { name: "elf-missing-entry", sources: &[("a.c", "int main(void) { return 0; }\n", &[])], args: &["a.o"], lld: Warning, ..D },
    Case {
        name: "elf-symbol-ordering-no-such-symbol",
        sources: &[START[0], ("order.txt", "_start\nnosuch\n", &[])],
        args: &["--symbol-ordering-file=order.txt", "start.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-symbol-ordering-duplicate",
        sources: &[START[0], ("order.txt", "_start\n_start\n", &[])],
        args: &["--symbol-ordering-file=order.txt", "start.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-symbol-ordering-undefined",
        sources: &[("a.c", "extern void hook(void) __attribute__((weak));\nvoid _start(void) { if (hook) hook(); }\n", &[]), ("order.txt", "hook\n", &[])],
        args: &["--symbol-ordering-file=order.txt", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-symbol-ordering-absolute",
        sources: &[("a.s", ".globl _start, limit\n_start: ret\n.set limit, 16\n", &[]), ("order.txt", "limit\n", &[])],
        args: &["--symbol-ordering-file=order.txt", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-symbol-ordering-shared",
        sources: &[("a.c", "int lib_fn(void);\nvoid _start(void) { lib_fn(); }\n", &[]), ("order.txt", "lib_fn\n", &[])],
        library: Some(("libp.so", "int lib_fn(void) { return 1; }\n")),
        args: &["--symbol-ordering-file=order.txt", "a.o", "libp.so"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-symbol-ordering-discarded",
        sources: &[("a.c", "int unused_fn(void) { return 1; }\nvoid _start(void) {}\n", &["-ffunction-sections"]), ("order.txt", "unused_fn\n", &[])],
        args: &["--gc-sections", "--symbol-ordering-file=order.txt", "a.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-keep-unique-missing",
        sources: START,
        args: &["--icf=all", "--keep-unique=nosuch", "start.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-call-graph-file-no-such-symbol",
        sources: &[START[0], ("cg.txt", "_start nosuch 10\n", &[])],
        args: &["--call-graph-ordering-file=cg.txt", "start.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-call-graph-file-parse-error",
        sources: &[START[0], ("cg.txt", "_start\n", &[])],
        args: &["--call-graph-ordering-file=cg.txt", "start.o"],
        lld: Error,
        ..D
    },
];

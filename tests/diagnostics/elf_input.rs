//! Input-file diagnostics (lld/ELF/InputFiles.cpp, InputSection.cpp, EhFrame.cpp, the input
//! side of Driver.cpp): what a file is, whether it fits the link, sections lld refuses.

use crate::{Case, Verdict::*, D, START};

/// A native x86-64 object and an AArch64 ThinLTO bitcode file.
const OTHER_MACHINE: &[(&str, &str, &[&str])] = &[
    ("main.c", "int arm_fn(void);\nint main(void) { return 0; }\n", &[]),
    ("arm.c", "int arm_fn(void) { return 1; }\n", &["--target=aarch64-linux-gnu", "-flto=thin"]),
];

/// Patches one byte of a copy of start.o (`sh -c`).
macro_rules! patch {
    ($out:literal, $offset:literal, $byte:literal) => {
        &["sh", "-c", concat!("cp start.o ", $out, " && printf '\\", $byte, "' | dd of=", $out, " bs=1 seek=", $offset, " conv=notrunc status=none")]
    };
}

pub const CASES: &[Case] = &[
    // Bitcode for another machine: refused when the file is parsed, as lld does (dtld's thin
    // link registers only LLVM's X86 target), named against the emulation or the first ELF file.
    Case { name: "bitcode-other-machine-emulation", sources: OTHER_MACHINE, args: &["-m", "elf_x86_64", "main.o", "arm.o"], lld: Error, ..D },
    Case { name: "bitcode-other-machine-first-file", sources: OTHER_MACHINE, args: &["main.o", "arm.o"], lld: Error, ..D },
    Case {
        name: "elf-incompatible-object",
        sources: &[START[0], ("i386.c", "int i386_fn(void) { return 1; }\n", &["--target=i386-linux-gnu"])],
        args: &["start.o", "i386.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-archive-member-not-object",
        sources: &[START[0], ("notes.txt", "not an object\n", &[])],
        prep: &[&["llvm-ar-22", "rc", "libx.a", "notes.txt"]],
        args: &["start.o", "libx.a"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-static-dynamic-object",
        sources: START,
        library: Some(("libp.so", "int p = 1;\n")),
        args: &["-static", "start.o", "libp.so"],
        lld: Error,
        ..D
    },
    Case { name: "elf-unknown-file-type", sources: START, prep: &[&["ld.lld-22", "start.o", "-o", "prog"]], args: &["start.o", "prog"], lld: Error, ..D },
    Case {
        name: "elf-dependent-library-not-found",
        sources: &[("start.c", "#pragma comment(lib, \"nosuch\")\nvoid _start(void) {}\n", &[])],
        args: &["start.o"],
        lld: Error,
        ..D
    },
    Case { name: "elf-file-too-short", sources: START, prep: &[&["sh", "-c", "head -c 40 start.o > short.o"]], args: &["short.o"], lld: Error, ..D },
    Case { name: "elf-invalid-data-encoding", sources: START, prep: &[patch!("bad.o", "5", "000")], args: &["bad.o"], lld: Error, ..D },
    Case { name: "elf-invalid-file-class", sources: START, prep: &[patch!("bad.o", "4", "000")], args: &["bad.o"], lld: Error, ..D },
    Case {
        name: "elf-merge-size-not-multiple",
        sources: &[START[0], ("m.s", ".section .rodata.m,\"aM\",@progbits,4\n.byte 1,2,3,4,5\n", &[])],
        args: &["start.o", "m.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-writable-merge",
        sources: &[START[0], ("m.s", ".section .data.m,\"awM\",@progbits,4\n.long 1\n", &[])],
        args: &["start.o", "m.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-unknown-section-type",
        sources: &[START[0], ("t.s", ".section .foo,\"a\",@0x30\n.byte 1\n", &[])],
        args: &["start.o", "t.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-executable-stack-note",
        sources: &[START[0], ("x.s", ".section .note.GNU-stack,\"x\",@progbits\n", &[])],
        args: &["start.o", "x.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-split-stack-relocatable",
        sources: &[("ss.c", "void f(void);\nvoid _start(void) { f(); }\n", &["-fsplit-stack"])],
        args: &["-r", "ss.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-tls-attribute-mismatch",
        sources: &[
            ("a.c", "__thread int counter = 1;\nint get(void) { return counter; }\nvoid _start(void) {}\n", &[]),
            ("b.c", "int counter __attribute__((weak)) = 2;\n", &[]),
        ],
        args: &["a.o", "b.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-string-not-null-terminated",
        sources: &[START[0], ("s.s", ".section .rodata.str,\"aMS\",@progbits,1\n.ascii \"abc\"\n", &[])],
        args: &["start.o", "s.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-unknown-relocation",
        sources: &[("r.s", ".globl _start\n_start: ret\n.reloc ., R_X86_64_COPY, _start\n.byte 0\n", &[])],
        args: &["r.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-eh-frame-bad-cie-version",
        sources: &[START[0], ("e.s", ".section .eh_frame,\"a\",@unwind\n.long 12\n.long 0\n.byte 2\n.asciz \"zR\"\n.byte 1, 0x78, 16, 1, 0x1b\n", &[])],
        args: &["--eh-frame-hdr", "start.o", "e.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-eh-frame-record-past-end",
        sources: &[START[0], ("e.s", ".section .eh_frame,\"a\",@unwind\n.long 100\n.long 0\n", &[])],
        args: &["start.o", "e.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-eh-frame-too-small",
        sources: &[START[0], ("e.s", ".section .eh_frame,\"a\",@unwind\n.byte 1, 2\n", &[])],
        args: &["start.o", "e.o"],
        lld: Error,
        ..D
    },
];

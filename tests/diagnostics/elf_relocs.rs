//! Relocation and output diagnostics (lld/ELF/Relocations.cpp, Arch/X86_64.cpp, Target.cpp,
//! InputSection.cpp's relocation of non-allocated sections, Writer.cpp): what a reference
//! cannot become in the output, instruction sequences lld cannot relax, values that do not fit.

use crate::{Case, Verdict::*, D, START};

pub const CASES: &[Case] = &[
Case {
        name: "protected-data-copy",
        sources: &[("main.c", "extern int prot_var;\nint main(void) {\n  return prot_var;\n}\n", &["-g", "-fno-pic"])],
        library: Some(("libp.so", "__attribute__((visibility(\"protected\"))) int prot_var = 3;\n")),
        args: &["-no-pie", "main.o", "libp.so"],
        lld: Error, ..D },
Case {
        name: "protected-function-address",
        sources: &[(
            "main.c",
            "void prot_fn(void);\nvoid *addr(void) {\n  return (void *)prot_fn;\n}\nint main(void) { return addr() != 0; }\n",
            &["-g", "-fno-pic"],
        )],
        library: Some(("libp.so", "__attribute__((visibility(\"protected\"))) void prot_fn(void) {}\n")),
        args: &["-no-pie", "main.o", "libp.so"],
        lld: Error, ..D },
Case {
        name: "pic-error-in-shared",
        sources: &[("lib.c", "int global_data = 5;\nint get(void) {\n  return global_data;\n}\n", &["-g", "-fno-pic", "-mcmodel=small"])],
        args: &["-shared", "lib.o"],
        lld: Error, ..D },
Case {
        // A reference past the end of a mergeable section from a non-allocated one: lld finds
        // it while writing, as dtld's writer does.
        name: "merge-offset-from-non-alloc",
        sources: &[(
            "start.s",
            ".globl _start\n_start: ret\n.section .mystr,\"MS\",@progbits,1\n.asciz \"abc\"\n.section .myinfo,\"\",@progbits\n.long .mystr + 2\n.long .mystr + 100\n",
            &[],
        )],
        args: &["start.o"],
        lld: Error, ..D },
Case {
        // ... which lld never reaches when the scan found an undefined symbol.
        name: "merge-offset-from-non-alloc-after-undefined",
        sources: &[(
            "start.s",
            ".globl _start\n_start: call missing_fn\n.section .mystr,\"MS\",@progbits,1\n.asciz \"abc\"\n.section .myinfo,\"\",@progbits\n.long .mystr + 100\n",
            &[],
        )],
        args: &["start.o"],
        lld: Error, ..D },
    // --- Links lld refuses that dtld used to complete (issue 34) ---
Case {
        // Non-PIC code (a PC-relative reference to an extern variable) in a shared library.
        name: "pic-error-in-shared-undefined",
        sources: &[("lib.c", "extern int ext_var;\nint get(void) {\n  return ext_var;\n}\n", &["-g", "-fno-pic", "-O2"])],
        args: &["-shared", "lib.o"],
        lld: Error, ..D },
Case {
        // An absolute reference to an undefined weak symbol a library may define, in a PIE: it
        // stays dynamic, and no dynamic relocation fills a 32-bit field.
        name: "pic-error-undefined-weak-in-pie",
        sources: &[("main.c", "extern int wv __attribute__((weak));\nint main(void) {\n  return &wv != 0;\n}\n", &["-g", "-fno-pic"])],
        library: Some(("libp.so", "int other = 1;\n")),
        args: &["-pie", "-e", "main", "main.o", "libp.so"],
        lld: Error, ..D },
Case {
        name: "relocation-out-of-range",
        sources: &[("start.s", ".globl _start\n_start:\n  movl $far_away, %eax\n  ret\n", &["-g"])],
        args: &["--defsym=far_away=0x100000000", "start.o"],
        lld: Error, ..D },
    Case {
        name: "elf-tls-local-exec-in-shared",
        sources: &[("a.c", "__thread int counter;\nint get(void) { return counter; }\n", &["-fPIC", "-ftls-model=local-exec"])],
        args: &["-shared", "a.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-pc-relative-to-absolute-in-shared",
        sources: &[
            ("a.c", "extern char table_base[] __attribute__((visibility(\"hidden\")));\nchar *base(void) { return table_base; }\n", &["-fPIC", "-g"]),
            ("abs.s", ".globl table_base\n.set table_base, 0x1000\n", &[]),
        ],
        args: &["-shared", "a.o", "abs.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-nocopyreloc",
        sources: &[("main.c", "extern int lib_var;\nint main(void) { return lib_var; }\n", &["-fno-pic", "-g"])],
        library: Some(("libp.so", "int lib_var = 3;\n")),
        args: &["-no-pie", "-z", "nocopyreloc", "-e", "main", "main.o", "libp.so"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-copy-relocation-zero-size",
        sources: &[("main.c", "extern int marker;\nint main(void) { return marker; }\n", &["-fno-pic"])],
        library: Some(("libp.so", "__asm__(\".data\\n.globl marker\\n.type marker,@object\\nmarker: .long 1\\n\");\n")),
        args: &["-no-pie", "-e", "main", "main.o", "libp.so"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-non-abs-reloc-in-non-alloc",
        sources: &[START[0], ("n.s", ".section .mynotes,\"\",@progbits\n.long _start@GOTPCREL\n", &[])],
        args: &["start.o", "n.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-pc-reloc-in-non-alloc",
        sources: &[START[0], ("n.s", ".section .mynotes,\"\",@progbits\n.long _start - .\n", &[])],
        args: &["start.o", "n.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-gottpoff-not-movq-addq",
        sources: &[(
            "t.s",
            ".globl _start\n_start:\n  andq counter@gottpoff(%rip), %rax\n  ret\n.section .tbss,\"awT\",@nobits\n.globl counter\ncounter: .zero 8\n",
            &[],
        )],
        args: &["t.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-tlsld-without-call",
        sources: &[(
            "t.s",
            ".globl _start\n_start:\n  leaq counter@tlsld(%rip), %rdi\n  movq data(%rip), %rax\n  ret\n.data\ndata: .quad 0\n.section .tbss,\"awT\",@nobits\n.type counter,@object\ncounter: .zero 8\n",
            &[],
        )],
        args: &["t.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-tlsdesc-not-leaq",
        sources: &[(
            "t.s",
            ".globl _start\n_start:\n  movq counter@tlsdesc(%rip), %rax\n  call *counter@tlscall(%rax)\n  ret\n.section .tbss,\"awT\",@nobits\n.globl counter\ncounter: .zero 8\n",
            &[],
        )],
        args: &["t.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-discarded-comdat-section-reference",
        sources: &[
            ("keep.s", ".section .text.pick,\"axG\",@progbits,pick,comdat\n.globl pick\npick: ret\n.text\n.globl _start\n_start: ret\n", &[]),
            ("drop.s", ".section .text.pick,\"axG\",@progbits,pick,comdat\n.globl pick\npick: nop\nlocal_label: ret\n.data\n.quad local_label\n", &[]),
        ],
        args: &["keep.o", "drop.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-section-below-image-base",
        sources: START,
        args: &["-no-pie", "-Ttext=0x1000", "start.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-section-address-misaligned",
        sources: &[
            ("a.c", "long table[4] = {1, 2, 3, 4};
void _start(void) {}
", &["-fno-asynchronous-unwind-tables"]),
            ("script.ld", "SECTIONS { .text : { *(.text) } .data 0x300001 : { *(.data) } }
", &[]),
        ],
        args: &["-T", "script.ld", "a.o"],
        lld: Warning,
        ..D
    },
];

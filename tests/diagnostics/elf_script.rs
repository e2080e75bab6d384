//! Linker-script diagnostics (lld/ELF/ScriptLexer.cpp, ScriptParser.cpp, LinkerScript.cpp and
//! the script checks of Writer.cpp), plus version scripts and dynamic lists: scripts as people
//! write them, with one mistake each.

use crate::{Case, Verdict::*, D};

/// `_start` without `.eh_frame` (which lld places in a script's memory regions and orphan
/// lists where dtld's writer adds it later).
const START: &[(&str, &str, &[&str])] = &[("start.c", "void _start(void) {}\n", &["-fno-asynchronous-unwind-tables"])];

/// `-T script.ld start.o` with the given script.
macro_rules! script {
    ($name:literal, $text:literal, $verdict:ident) => {
        Case { name: $name, sources: &[START[0], ("script.ld", $text, &[])], args: &["-T", "script.ld", "start.o"], lld: $verdict, ..D }
    };
}

/// `-shared --version-script=v.map start.o` with the given version script.
macro_rules! version_script {
    ($name:literal, $text:literal, $verdict:ident) => {
        Case {
            name: $name,
            sources: &[
                ("start.c", "void _start(void) {}\nint foo(void) { return 1; }\n", &["-fPIC", "-fno-asynchronous-unwind-tables"]),
                ("v.map", $text, &[]),
            ],
            args: &["-shared", "--version-script=v.map", "start.o"],
            lld: $verdict,
            ..D
        }
    };
}

pub const CASES: &[Case] = &[
    script!("elf-script-unclosed-comment", "/* the layout\nSECTIONS { .text : { *(.text) } }\n", Error),
    script!("elf-script-unexpected-eof", "SECTIONS { .text : { *(.text)\n", Error),
    script!("elf-script-expected-but-got", "ENTRY _start\n", Error),
    script!("elf-script-unknown-directive", "LAYOUT(fast)\n", Error),
    script!("elf-script-input-not-found", "INPUT(missing.o)\n", Error),
    script!("elf-script-include-missing", "INCLUDE missing.ld\n", Error),
    script!("elf-script-output-format-unknown", "OUTPUT_FORMAT(elf64-bogus)\n", Error),
    script!("elf-script-phdrs-bad-attribute", "PHDRS { text PT_LOAD BOGUS; }\nSECTIONS { .text : { *(.text) } :text }\n", Error),
    script!("elf-script-region-alias-undefined", "REGION_ALIAS(alias, nosuch)\n", Error),
    script!("elf-script-target-unknown", "TARGET(bogus)\n", Error),
    script!("elf-script-section-pattern-expected", "SECTIONS { .text : { *(.text ( ) } }\n", Error),
    script!("elf-script-assert", "SECTIONS { .text : { *(.text) } }\nASSERT(SIZEOF(.text) > 0x100000, \"text is too small\");\n", Error),
    script!("elf-script-unknown-section-directive", "SECTIONS { .text 0x1000 (BOGUS) : { *(.text) } }\n", Error),
    script!("elf-script-alignment-not-power-of-2", "SECTIONS { .text : ALIGN(3) { *(.text) } }\n", Error),
    script!("elf-script-fill-without-parentheses", "SECTIONS { .text : { FILL 0x90; *(.text) } }\n", Error),
    script!(
        "elf-script-lma-and-load-region",
        "MEMORY { rom : ORIGIN = 0x100000, LENGTH = 1M }\nSECTIONS { .text : AT(0x200000) { *(.text) } AT>rom }\n",
        Error
    ),
    script!("elf-script-filler-too-large", "SECTIONS { .text : { *(.text) } =0x123456789 }\n", Error),
    script!("elf-script-provide-without-equals", "PROVIDE(limit 1);\n", Error),
    script!("elf-script-unknown-constant", "limit = CONSTANT(BOGUS);\n", Error),
    script!("elf-script-unknown-section-flag", "SECTIONS { .text : { INPUT_SECTION_FLAGS(SHF_BOGUS) *(.text) } }\n", Error),
    script!("elf-script-section-flags-bar", "SECTIONS { .text : { INPUT_SECTION_FLAGS(SHF_ALLOC | SHF_EXECINSTR) *(.text) } }\n", Error),
    script!("elf-script-undefined-section", "SECTIONS { .text : { *(.text) } }\nlimit = ADDR(.nosuch);\n", Error),
    script!("elf-script-malformed-number", "limit = 12abc;\n", Error),
    script!("elf-script-invalid-phdr-type", "PHDRS { text PT_BOGUS; }\n", Error),
    script!("elf-script-memory-bad-key", "MEMORY { ram : START = 0x100000, LENGTH = 1M }\n", Error),
    script!("elf-script-memory-region-twice", "MEMORY { ram : ORIGIN = 0x100000, LENGTH = 1M\n ram : ORIGIN = 0x200000, LENGTH = 1M }\n", Error),
    script!("elf-script-memory-bad-attribute", "MEMORY { ram (q) : ORIGIN = 0x100000, LENGTH = 1M }\n", Error),
    script!("elf-script-memory-region-not-declared", "SECTIONS { .text : { *(.text) } > nosuch }\n", Error),
    script!("elf-script-phdr-not-listed", "PHDRS { text PT_LOAD; }\nSECTIONS { .text : { *(.text) } :nosuch }\n", Error),
    script!(
        "elf-script-region-overflow",
        "MEMORY { rom (rx) : ORIGIN = 0x100000, LENGTH = 4 }\nSECTIONS { .text : { *(.text) LONG(1) LONG(2) } > rom }\n",
        Error
    ),
    script!("elf-script-discard-shstrtab", "SECTIONS { .text : { *(.text) } /DISCARD/ : { *(.shstrtab) } }\n", Error),
    script!("elf-script-insert-unknown-section", "SECTIONS { .text.extra : { *(.text.extra) } } INSERT AFTER .nosuch;\n", Error),
    script!("elf-script-insert-expected-after-before", "SECTIONS { .text : { *(.text) } } INSERT .data;\n", Error),
    script!("elf-script-could-not-allocate-headers", "PHDRS { all PT_LOAD FILEHDR PHDRS; }\nSECTIONS { . = 0; .text : { *(.text) } :all }\n", Error),
    Case {
        name: "elf-script-orphan-error",
        sources: &[
            START[0],
            ("extra.c", "int extra_data __attribute__((section(\".extra\"))) = 1;\n", &["-fno-asynchronous-unwind-tables"]),
            ("script.ld", "SECTIONS { .text : { *(.text) } }\n", &[]),
        ],
        args: &["--orphan-handling=error", "-T", "script.ld", "start.o", "extra.o"],
        lld: Error,
        ..D
    },
    Case {
        name: "elf-script-orphan-warn",
        sources: &[
            START[0],
            ("extra.c", "int extra_data __attribute__((section(\".extra\"))) = 1;\n", &["-fno-asynchronous-unwind-tables"]),
            ("script.ld", "SECTIONS { .text : { *(.text) } }\n", &[]),
        ],
        args: &["--orphan-handling=warn", "-T", "script.ld", "start.o", "extra.o"],
        lld: Warning,
        ..D
    },
    Case {
        name: "elf-script-include-cycle",
        sources: &[START[0], ("script.ld", "INCLUDE other.ld\n", &[]), ("other.ld", "INCLUDE script.ld\n", &[])],
        args: &["-T", "script.ld", "start.o"],
        lld: Error,
        ..D
    },
    version_script!("elf-version-script-unknown-language", "V1 { extern \"Java\" { foo; }; };\n", Error),
    version_script!("elf-version-script-anonymous-and-named", "V1 { global: foo; };\n{ global: _start; };\n", Error),
    version_script!("elf-version-script-trailing-text", "V1 { global: foo; }; extra\n", Error),
    Case {
        name: "elf-dynamic-list-local",
        sources: &[START[0], ("dyn.list", "{ local: foo; };\n", &[])],
        args: &["--dynamic-list=dyn.list", "start.o"],
        lld: Error,
        ..D
    },
];

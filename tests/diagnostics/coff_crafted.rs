//! lld-link diagnostics that need inputs no compiler writes: objects crafted with yaml2obj-22
//! (bad symbol section numbers, COMDAT selections, address-significance and call-graph
//! tables, `.debug$S` subsections), a hand-made import member, and the export and library
//! cases that go with them. See docs/diagnostics.md; coff.rs holds the cases ordinary inputs
//! reach.

use crate::{Case, Flavor::Coff, Verdict::*, D};

/// `main` (entry), plus `g` for the DLL cases.
const MAIN: (&str, &str, &[&str]) = ("main.c", "int main(void) { return 0; }\n", &[]);
const G: (&str, &str, &[&str]) = ("g.c", "int g(void) { return 1; }\n", &[]);

/// A link of `x.obj`, made by yaml2obj-22 from `x.yaml`, with `main` as the entry.
macro_rules! yaml {
    ($name:literal, $verdict:expr, $yaml:expr $(, $arg:literal)*) => {
        Case {
            name: $name,
            flavor: Coff,
            sources: &[("x.yaml", $yaml, &[])],
            prep: &[&["yaml2obj-22", "x.yaml", "-o", "x.obj"]],
            args: &["x.obj", "/entry:main", "/subsystem:console" $(, $arg)*],
            lld: $verdict,
            ..D
        }
    };
}

/// An AMD64 object: `.text` holding `main`, then the given sections and symbols (yaml2obj-22).
macro_rules! obj {
    ($sections:expr, $symbols:expr) => {
        concat!(
            "--- !COFF\nheader:\n  Machine: IMAGE_FILE_MACHINE_AMD64\n  Characteristics: [ ]\nsections:\n",
            "  - Name: .text\n    Characteristics: [ IMAGE_SCN_CNT_CODE, IMAGE_SCN_MEM_EXECUTE, IMAGE_SCN_MEM_READ ]\n",
            "    Alignment: 16\n    SectionData: C3\n",
            $sections,
            "symbols:\n",
            "  - Name: main\n    Value: 0\n    SectionNumber: 1\n    SimpleType: IMAGE_SYM_TYPE_NULL\n",
            "    ComplexType: IMAGE_SYM_DTYPE_FUNCTION\n    StorageClass: IMAGE_SYM_CLASS_EXTERNAL\n",
            $symbols,
            "...\n"
        )
    };
}

/// An external symbol `odd` in the section numbered as given.
macro_rules! odd_symbol {
    ($section:literal) => {
        obj!(
            "",
            concat!(
                "  - Name: odd\n    Value: 0\n    SectionNumber: ",
                $section,
                "\n    SimpleType: IMAGE_SYM_TYPE_NULL\n    ComplexType: IMAGE_SYM_DTYPE_NULL\n",
                "    StorageClass: IMAGE_SYM_CLASS_EXTERNAL\n"
            )
        )
    };
}

/// One more section, discarded from the image, holding the given bytes.
macro_rules! extra_section {
    ($name:literal, $hex:literal) => {
        obj!(
            concat!(
                "  - Name: '",
                $name,
                "'\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_DISCARDABLE, IMAGE_SCN_MEM_READ ]\n",
                "    Alignment: 4\n    SectionData: '",
                $hex,
                "'\n"
            ),
            ""
        )
    };
}

/// `.debug$S` with the given bytes, in a `/debug` link (the PDB writer reads it).
macro_rules! debug_s {
    ($name:literal, $verdict:expr, $hex:literal) => {
        yaml!($name, $verdict, extra_section!(".debug$S", $hex), "/debug")
    };
}

/// A COMDAT section `.text$c` led by `cf`, selection ANY; the trial rewrites the selection.
const COMDAT: &str = obj!(
    "  - Name: .text$c\n    Characteristics: [ IMAGE_SCN_CNT_CODE, IMAGE_SCN_MEM_EXECUTE, IMAGE_SCN_MEM_READ, IMAGE_SCN_LNK_COMDAT ]\n    Alignment: 16\n    SectionData: C3\n",
    "  - Name: .text$c\n    Value: 0\n    SectionNumber: 2\n    SimpleType: IMAGE_SYM_TYPE_NULL\n    ComplexType: IMAGE_SYM_DTYPE_NULL\n    StorageClass: IMAGE_SYM_CLASS_STATIC\n    SectionDefinition:\n      Length: 1\n      NumberOfRelocations: 0\n      NumberOfLinenumbers: 0\n      CheckSum: 0\n      Number: 2\n      Selection: IMAGE_COMDAT_SELECT_ANY\n  - Name: cf\n    Value: 0\n    SectionNumber: 2\n    SimpleType: IMAGE_SYM_TYPE_NULL\n    ComplexType: IMAGE_SYM_DTYPE_FUNCTION\n    StorageClass: IMAGE_SYM_CLASS_EXTERNAL\n"
);

/// yaml2obj only writes the selections COFF defines: selection 7 goes into the section
/// definition (the auxiliary record after symbol 1, its 15th byte) by hand.
const SELECTION_7: &[&str] = &[
    "python3",
    "-c",
    "import struct; d = bytearray(open('x.obj', 'rb').read()); p = struct.unpack_from('<I', d, 8)[0]; d[p + 36 + 14] = 7; open('x.obj', 'wb').write(d)",
];

/// Two associative COMDATs: `.rdata$a` follows `.rdata$b`, which comes after it in the file.
const ASSOCIATIVE_FORWARD: &str = obj!(
    "  - Name: .rdata$a\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_READ, IMAGE_SCN_LNK_COMDAT ]\n    Alignment: 4\n    SectionData: '01000000'\n  - Name: .rdata$b\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_READ, IMAGE_SCN_LNK_COMDAT ]\n    Alignment: 4\n    SectionData: '02000000'\n",
    "  - Name: .rdata$a\n    Value: 0\n    SectionNumber: 2\n    SimpleType: IMAGE_SYM_TYPE_NULL\n    ComplexType: IMAGE_SYM_DTYPE_NULL\n    StorageClass: IMAGE_SYM_CLASS_STATIC\n    SectionDefinition:\n      Length: 4\n      NumberOfRelocations: 0\n      NumberOfLinenumbers: 0\n      CheckSum: 0\n      Number: 3\n      Selection: IMAGE_COMDAT_SELECT_ASSOCIATIVE\n  - Name: .rdata$b\n    Value: 0\n    SectionNumber: 3\n    SimpleType: IMAGE_SYM_TYPE_NULL\n    ComplexType: IMAGE_SYM_DTYPE_NULL\n    StorageClass: IMAGE_SYM_CLASS_STATIC\n    SectionDefinition:\n      Length: 4\n      NumberOfRelocations: 0\n      NumberOfLinenumbers: 0\n      CheckSum: 0\n      Number: 1\n      Selection: IMAGE_COMDAT_SELECT_ASSOCIATIVE\n"
);

/// `.data` with a SECREL to `far`, whose value (0xfffff000) takes it, added to its chunk's RVA
/// in 32 bits, to below the start of its output section (`.rdata`).
const SECREL_WRAP: &str = obj!(
    "  - Name: .rdata\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_READ ]\n    Alignment: 16\n    SectionData: '00000000'\n  - Name: .data\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_READ, IMAGE_SCN_MEM_WRITE ]\n    Alignment: 4\n    SectionData: '00000000'\n    Relocations:\n      - VirtualAddress: 0\n        SymbolName: far\n        Type: IMAGE_REL_AMD64_SECREL\n",
    "  - Name: far\n    Value: 4294963200\n    SectionNumber: 2\n    SimpleType: IMAGE_SYM_TYPE_NULL\n    ComplexType: IMAGE_SYM_DTYPE_NULL\n    StorageClass: IMAGE_SYM_CLASS_STATIC\n"
);

const PCH_GHASH: &str = obj!(
    "  - Name: '.debug$P'\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_DISCARDABLE, IMAGE_SCN_MEM_READ ]\n    Alignment: 4\n    SectionData: '0400000006001400EFBEADDE'\n  - Name: '.debug$H'\n    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_DISCARDABLE, IMAGE_SCN_MEM_READ ]\n    Alignment: 4\n    SectionData: 'C5C93301000002000000000000000000'\n",
    ""
);

/// A short import member for `g` in g.dll whose SizeOfData (9) is one more than its names.
const BROKEN_IMPORT: &[&str] = &["sh", "-c", "printf '\\0\\0\\377\\377\\0\\0\\144\\206\\0\\0\\0\\0\\11\\0\\0\\0\\0\\0\\4\\0g\\0g.dll\\0' > imp.obj"];
/// The same member with its size right (8).
const GOOD_IMPORT: &[&str] = &["sh", "-c", "printf '\\0\\0\\377\\377\\0\\0\\144\\206\\0\\0\\0\\0\\10\\0\\0\\0\\0\\0\\4\\0g\\0g.dll\\0' > imp.obj"];
/// `main` calling `g`.
const CALLS_G: (&str, &str, &[&str]) = ("main.c", "int g(void);\nint main(void) { return g(); }\n", &[]);

/// An anonymous object header with the class id of cl.exe's `/GL` objects (MSVC's own IR).
const CL_GL: &[&str] = &[
    "sh",
    "-c",
    "{ printf '\\0\\0\\377\\377\\1\\0\\144\\206\\0\\0\\0\\0\\070\\376\\263\\014\\245\\331\\253\\115\\254\\233\\326\\266\\042\\046\\123\\302'; head -c 36 /dev/zero; } > gl.obj && llvm-ar-22 rc gl.lib gl.obj",
];

/// Two resource scripts defining RCDATA 1, and their compilation.
const RC_A: (&str, &str, &[&str]) = ("a.rc", "1 RCDATA { \"a\" }\n", &[]);
const RC_B: (&str, &str, &[&str]) = ("b.rc", "1 RCDATA { \"b\" }\n", &[]);
const RES_A: &[&str] = &["llvm-rc-22", "/fo", "a.res", "a.rc"];
const RES_B: &[&str] = &["llvm-rc-22", "/fo", "b.res", "b.rc"];

pub const CASES3: &[Case] = &[
    // Symbols and sections of crafted objects (lld's ObjFile).
    Case {
        name: "coff-unknown-comdat-type",
        flavor: Coff,
        sources: &[("x.yaml", COMDAT, &[])],
        prep: &[&["yaml2obj-22", "x.yaml", "-o", "x.obj"], SELECTION_7],
        args: &["x.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    yaml!("coff-special-section", Error, odd_symbol!("-3")),
    yaml!("coff-nonexistent-section", Error, odd_symbol!("5")),
    yaml!("coff-associative-invalid", Error, ASSOCIATIVE_FORWARD),
    Case {
        name: "coff-cl-gl-object",
        flavor: Coff,
        sources: &[MAIN],
        prep: &[CL_GL],
        args: &["main.obj", "gl.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-cl-gl-member",
        flavor: Coff,
        sources: &[MAIN],
        prep: &[CL_GL],
        args: &["main.obj", "/wholearchive:gl.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // Tables lld reads from objects late in the link.
    yaml!("coff-addrsig-decode", Error, extra_section!(".llvm_addrsig", "80")),
    yaml!("coff-addrsig-bad-index", Error, extra_section!(".llvm_addrsig", "05")),
    yaml!("coff-callgraph-section-truncated", Error, extra_section!(".llvm.call-graph-profile", "0000")),
    yaml!("coff-callgraph-count-truncated", Error, extra_section!(".llvm.call-graph-profile", "000000000000000000")),
    yaml!("coff-long-section-name", Warning, extra_section!(".longsectionname", "01020304")),
    yaml!("coff-secrel-overflow", Error, SECREL_WRAP, "/opt:noref"),
    // `.debug$S` as the PDB writer reads it.
    debug_s!("coff-debugs-unrecognized-magic", Warning, "AB000000"),
    debug_s!("coff-debugs-unknown-subsection", Warning, "040000009900000000000000"),
    debug_s!("coff-debugs-empty-symbols", Warning, "04000000F100000000000000"),
    debug_s!("coff-debugs-checksums-without-strings", Error, "04000000F4000000080000000000000000000000"),
    // An S_FILESTATIC record naming its file by a string table offset, and no string table.
    debug_s!("coff-debugs-no-string-table", Warning, "04000000F1000000100000000E005311740000000000000000007800"),
    // A precompiled-header object (`.debug$P`, one LF_ENDPRECOMP record) with BLAKE3 type hashes.
    Case {
        name: "coff-debugh-pch-ghash",
        flavor: Coff,
        sources: &[("x.yaml", PCH_GHASH, &[])],
        prep: &[&["yaml2obj-22", "x.yaml", "-o", "x.obj"]],
        args: &["x.obj", "/entry:main", "/subsystem:console", "/debug"],
        lld: Warning,
        ..D
    },
    // A type server record (LF_TYPESERVER2) naming a PDB that is not there.
    yaml!(
        "coff-pdb-debug-unusable",
        Warning,
        extra_section!(".debug$T", "040000002200151500000000000000000000000000000000010000006E6F737563682E7064620000"),
        "/debug"
    ),
    Case {
        name: "coff-pdb-write-failed",
        flavor: Coff,
        sources: &[MAIN],
        args: &["main.obj", "/entry:main", "/subsystem:console", "/debug", "/pdb:nodir/x.pdb"],
        lld: Error,
        ..D
    },
    // `/lib` first: lld-link is llvm-lib, whose own message comes first.
    Case { name: "coff-lib-failed", flavor: Coff, args: &["/lib", "nosuch.obj"], lld: Error, ..D },
    // Import members.
    Case {
        name: "coff-broken-import-library",
        flavor: Coff,
        sources: &[CALLS_G],
        prep: &[BROKEN_IMPORT, &["llvm-ar-22", "rc", "imp.lib", "imp.obj"]],
        args: &["main.obj", "imp.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-import-member-as-object",
        flavor: Coff,
        sources: &[CALLS_G],
        prep: &[GOOD_IMPORT],
        args: &["main.obj", "imp.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-mingw-dllmain-imported",
        flavor: Coff,
        sources: &[MAIN, ("dm.c", "int DllMain(void) { return 1; }\n", &[])],
        prep: &[&["lld-link-22", "/dll", "/noentry", "dm.obj", "/export:DllMain", "/out:dm.dll", "/implib:dm.lib"]],
        args: &["main.obj", "dm.lib", "/entry:main", "/subsystem:console"],
        lld: Warning,
        ..D
    },
    // A MinGW link reads a DLL as an input; this one is 64 bytes, `MZ` with a PE signature
    // inside its DOS header: too short for LLVM to find a PE header after it.
    Case {
        name: "coff-not-pe-executable",
        flavor: Coff,
        sources: &[MAIN],
        prep: &[&["sh", "-c", "{ printf 'MZ\\0\\0PE\\0\\0'; head -c 52 /dev/zero; printf '\\4\\0\\0\\0'; } > tiny.dll"]],
        args: &["main.obj", "tiny.dll", "/entry:main", "/subsystem:console", "/lldmingw"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-arm64ec-ambiguous",
        flavor: Coff,
        sources: &[MAIN, ("ec.c", "int g(void) { return 1; }\n", &["--target=arm64ec-pc-windows-msvc"])],
        args: &["main.obj", "ec.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // LTO's code refers to `_fltused` (a call passing a double), which only a bitcode member
    // of a library defines: lld has compiled the bitcode already.
    Case {
        name: "coff-lto-after-compilation",
        flavor: Coff,
        sources: &[
            ("main.c", "double d(double x);\nint main(void) { return (int)d(2.5); }\n", &["-flto"]),
            ("d.c", "double d(double x) { return x * 1.5; }\n", &["-flto"]),
            ("fl.c", "int _fltused = 0;\n", &["-flto"]),
        ],
        prep: &[&["llvm-ar-22", "rc", "fl.lib", "fl.obj"]],
        args: &["main.obj", "d.obj", "fl.lib", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // Resources: `.res` files from llvm-rc-22, resource objects from llvm-cvtres-22.
    Case {
        name: "coff-resource-duplicate",
        flavor: Coff,
        sources: &[MAIN, RC_A, RC_B],
        prep: &[RES_A, RES_B],
        args: &["main.obj", "a.res", "b.res", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-resource-duplicate-force",
        flavor: Coff,
        sources: &[MAIN, RC_A, RC_B],
        prep: &[RES_A, RES_B],
        args: &["main.obj", "a.res", "b.res", "/entry:main", "/subsystem:console", "/force:multipleres"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-more-than-one-resource-obj",
        flavor: Coff,
        sources: &[MAIN, RC_A, RC_B],
        prep: &[RES_A, RES_B, &["llvm-cvtres-22", "/machine:x64", "/out:ra.obj", "a.res"], &["llvm-cvtres-22", "/machine:x64", "/out:rb.obj", "b.res"]],
        args: &["main.obj", "ra.obj", "rb.obj", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    Case {
        name: "coff-resource-obj-and-res",
        flavor: Coff,
        sources: &[MAIN, RC_A, RC_B],
        prep: &[RES_A, RES_B, &["llvm-cvtres-22", "/machine:x64", "/out:ra.obj", "a.res"]],
        args: &["main.obj", "ra.obj", "b.res", "/entry:main", "/subsystem:console"],
        lld: Error,
        ..D
    },
    // Exports.
    Case {
        name: "coff-export-duplicate-same-source",
        flavor: Coff,
        sources: &[MAIN, G],
        args: &["main.obj", "g.obj", "/dll", "/noentry", "/export:g", "/export:g,@2"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-export-duplicate-sources",
        flavor: Coff,
        sources: &[MAIN, G, ("x.def", "EXPORTS\n  g @3\n", &[])],
        args: &["main.obj", "g.obj", "/dll", "/noentry", "/def:x.def", "/export:g"],
        lld: Warning,
        ..D
    },
    // A `.drectve` export read after the command line's: it comes after `/export` in lld's list.
    Case {
        name: "coff-export-duplicate-late-directive",
        flavor: Coff,
        sources: &[MAIN, G, ("d.c", "#pragma comment(linker, \"/export:g,@4\")\nint h(void) { return 0; }\n", &[])],
        prep: &[&["llvm-ar-22", "rc", "d.lib", "d.obj"]],
        args: &["main.obj", "g.obj", "d.lib", "/dll", "/noentry", "/export:g", "/export:h"],
        lld: Warning,
        ..D
    },
    Case {
        name: "coff-export-deleting-dtor",
        flavor: Coff,
        sources: &[("dd.s", ".text\n.globl \"??_GFoo@@UEAAPEAXI@Z\"\n\"??_GFoo@@UEAAPEAXI@Z\":\n  ret\n", &[])],
        args: &["dd.obj", "/dll", "/noentry", "/export:??_GFoo@@UEAAPEAXI@Z"],
        lld: Warning,
        ..D
    },
];

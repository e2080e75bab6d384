"""The work packages that lld's failing tests are grouped into, and how a failure is assigned to one.

Why this exists: a list of 400 failing tests is not a plan. Grouped by the lld feature each test
needs, with the lld source file that implements it, the list says what to build next and how many
tests it should fix. The assignment is made from what analyse.py found out about the failure
(dtld's or lld's message, the failing CHECK line, the test's name and text) by the rules below,
first match wins. Where the output only differs (a section address, a symbol's visibility), no
message names the cause; for those tests NOTES holds the reason found by reading the test and
comparing both linkers' outputs. A note only applies while the test fails with the kind of
failure it was written for; when the failure changes, the heuristics take over again.

Linker-script tests are assigned by the script commands they use (read from the test file): a
test that needs SECTIONS and PHDRS is counted under PHDRS, the later of the two in SCRIPT_ORDER,
because it can only pass once both exist.
"""

import os
import re

# id -> (title, lld source, what is missing)
PACKAGES = {
    # linker scripts
    "script-include": ("linker scripts: INCLUDE", "ELF/ScriptParser.cpp (readInclude)",
                       "INCLUDE of another script, searched in -L paths, with lld's cycle error."),
    "script-sections": ("linker scripts: SECTIONS", "ELF/ScriptParser.cpp, ELF/LinkerScript.cpp",
                        "Output section descriptions with input section patterns (KEEP, SORT*, EXCLUDE_FILE), `.` "
                        "assignments, ALIGN/AT/SUBALIGN, FILL and data commands, /DISCARD/, ONLY_IF_RO/RW, "
                        "orphan placement, and the expression functions (ADDR, LOADADDR, SIZEOF, DEFINED, "
                        "SEGMENT_START, ...); errors with file:line."),
    "script-phdrs": ("linker scripts: PHDRS", "ELF/ScriptParser.cpp (readPhdrs), ELF/LinkerScript.cpp (createPhdrs)",
                     "Program headers declared by the script (`:phdr` assignment, FILEHDR/PHDRS/AT/FLAGS), "
                     "on top of SECTIONS."),
    "script-memory": ("linker scripts: MEMORY", "ELF/ScriptParser.cpp (readMemory), ELF/LinkerScript.cpp (findMemoryRegion)",
                      "MEMORY regions, `>region` and `AT>lma`, ORIGIN/LENGTH, REGION_ALIAS and the overflow "
                      "errors, on top of SECTIONS."),
    "script-overlay-insert": ("linker scripts: OVERLAY and INSERT", "ELF/ScriptParser.cpp (readOverlay, readInsert)",
                              "OVERLAY and INSERT BEFORE/AFTER, on top of SECTIONS."),
    "script-other": ("linker scripts: other commands", "ELF/ScriptParser.cpp, ELF/Driver.cpp",
                     "Script commands outside SECTIONS whose behaviour differs (TARGET(binary), assignment "
                     "order against --defsym)."),
    # options
    "icf": ("ICF (--icf=all/safe, --print-icf-sections, --keep-unique)", "ELF/ICF.cpp",
            "Identical code folding: today --icf is accepted and ignored and --print-icf-sections, "
            "--ignore-data-address-equality are refused."),
    "emit-relocs": ("--emit-relocs", "ELF/InputSection.cpp (copyRelocations), ELF/Writer.cpp",
                    "Keep relocation sections in the output, rewritten for the final addresses (also for "
                    ".eh_frame, merged and ICF'd sections)."),
    "start-lib": ("--start-lib/--end-lib", "ELF/Driver.cpp (inLib), ELF/InputFiles.cpp (lazy object files)",
                  "Object files between --start-lib and --end-lib behave like archive members."),
    "symbol-ordering": ("--symbol-ordering-file and call-graph ordering warnings",
                        "ELF/Writer.cpp (buildSectionOrder), ELF/CallGraphSort.cpp",
                        "--symbol-ordering-file, and lld's warnings (not errors) for call-graph entries "
                        "that cannot be ordered."),
    "section-start": ("-Ttext/-Tdata/-Tbss/--section-start", "ELF/Driver.cpp (getSectionStartMap), ELF/Options.td",
                      "`-Ttext=ADDR` is read as `-T text=ADDR` (a script file); section start addresses."),
    "omagic": ("-N/--omagic, -n/--nmagic", "ELF/Driver.cpp, ELF/Writer.cpp",
               "Unaligned, writable-text layouts of -N/-n (and their warnings)."),
    "filter-aux": ("-f/-F (DT_AUXILIARY/DT_FILTER)", "ELF/Driver.cpp, ELF/SyntheticSections.cpp (DynamicSection)",
                   "Filter and auxiliary-filter entries in .dynamic."),
    "small-options": ("other refused options", "ELF/Driver.cpp, ELF/Options.td",
                      "--retain-symbols-file, --gnu-unique, --apply-dynamic-relocs, -disable-verify, "
                      "--thinlto-cache-policy VALUE as two arguments, `-o -`."),
    "unresolved-symbols": ("--warn-unresolved-symbols/--error-unresolved-symbols, --noinhibit-exec",
                           "ELF/Driver.cpp, ELF/Relocations.cpp (reportUndefinedSymbols)",
                           "Undefined symbols as warnings (with --noinhibit-exec too) and the options that "
                           "switch between warning and error."),
    "vs-diagnostics": ("--vs-diagnostics", "Common/ErrorHandler.cpp",
                       "Visual Studio style `file(line): error:` messages."),
    "gdb-index": ("--gdb-index", "ELF/SyntheticSections.cpp (GdbIndexSection), ELF/DWARF.cpp",
                  ".gdb_index from the inputs' DWARF (today the option is accepted and ignored)."),
    # diagnostics
    "demangle": ("diagnostics: demangling", "Common/Strings.cpp (demangle), ELF/Symbols.cpp (toString), ELF/Driver.cpp",
                 "C++ names in messages are printed demangled (`foo()`, not `_Z3foov`), and mangled with "
                 "--no-demangle."),
    "diag-location": ("diagnostics: source locations, --warn-common and wording of symbol messages",
                      "ELF/InputSection.cpp (getLocation, getSrcMsg), ELF/DWARF.cpp, ELF/Relocations.cpp",
                      "`>>> defined at file.c:2` from DWARF line tables, `(function f: .text+0x3)`, "
                      "`>>> did you mean:`, the object named in symbol-version errors, --warn-common."),
    "eh-frame": (".eh_frame checks", "ELF/EhFrame.cpp, ELF/InputSection.cpp (EhInputSection::split)",
                 "lld's checks of CIE/FDE structure (augmentation strings, encodings, sizes) with its "
                 "`corrupted .eh_frame: ...` wording; FDEs lld keeps."),
    "reloc-checks": ("relocation checks", "ELF/Relocations.cpp, ELF/Arch/X86_64.cpp, ELF/Target.cpp",
                     "Range checks (also in .debug_*), `cannot preempt symbol` for protected symbols, "
                     "relocations to discarded sections, TLS relaxation instruction checks, copy "
                     "relocation errors, undefined hidden and local symbols."),
    "merge-checks": ("mergeable section checks", "ELF/InputSection.cpp (MergeInputSection)",
                     "`offset is outside the section` and friends for SHF_MERGE sections."),
    "input-checks": ("input validation", "ELF/InputFiles.cpp, ELF/InputSection.cpp, ELF/OutputSections.cpp",
                     "lld's checks of malformed inputs: SHT_GROUP format and indices, sh_link, "
                     "SHF_LINK_ORDER targets, incompatible section flags, DT_SONAME, versym without "
                     "symtab, redefined reserved symbols, and their wording."),
    "early-errors": ("errors lld reports first", "ELF/Driver.cpp (link: output path checks, readDynamicList)",
                     "lld checks the output path and parses --dynamic-list/--version-script before "
                     "anything else, so those errors come first; version scripts are searched in -L."),
    # output
    "hash-style": ("default --hash-style", "ELF/Driver.cpp",
                   "lld 22 emits both .hash and .gnu.hash unless --hash-style says otherwise; dtld emits "
                   "only .gnu.hash, so every later address moves."),
    "reserved-symbols": ("linker-defined symbols", "ELF/Writer.cpp (addReservedSymbols), ELF/Symbols.cpp",
                         "_DYNAMIC (hidden, at .dynamic), __dso_handle and _GLOBAL_OFFSET_TABLE_ as hidden "
                         "symbols, _end exported from -shared links, __start_/__stop_ symbols defined locally "
                         "and taking the visibility of their references, reserved names defined by scripts "
                         "staying local."),
    "segments": ("program headers", "ELF/Writer.cpp (createPhdrs, setPhdrs)",
                 "No PT_LOAD for empty parts (an empty .text, a .tbss-only RW part), the first PT_LOAD "
                 "covering the ELF and program headers, PT_GNU_RELRO p_filesz without .relro_padding, "
                 "PT_NOTE p_align from the notes."),
    "section-details": ("section details", "ELF/OutputSections.cpp, ELF/Writer.cpp (getSectionRank), ELF/SyntheticSections.cpp",
                        "sh_entsize of merged sections, orphan section order, NOBITS sh_offset, same-named "
                        "input sections of different types in one output section, build-id notes of inputs, "
                        "-z keep-text-section-prefix, EI_OSABI from the inputs, -z rodynamic, "
                        "PT_OPENBSD_WXNEEDED, DF_SYMBOLIC, COMMON alignment, copy-relocation alignment."),
    "symbol-resolution": ("symbol resolution", "ELF/SymbolTable.cpp, ELF/InputFiles.cpp, ELF/Symbols.cpp",
                          "Identical absolute duplicates, hidden undefined symbols that must not bind to a "
                          "DSO, archive members extracted for a DSO's undefined symbols, --as-needed given "
                          "twice, dependent libraries (.deplibs)."),
    "symbol-versioning": ("symbol versioning", "ELF/SymbolTable.cpp (scanVersionScript), ELF/InputFiles.cpp",
                          "Undefined or unknown versions that lld accepts (with -r, in archives, for "
                          "`.symver` without a version script), one symbol with two versions, "
                          "--exclude-libs with versioned symbols."),
    "relocatable": ("-r output", "ELF/Writer.cpp, ELF/InputFiles.cpp, ELF/SyntheticSections.cpp",
                    "SHF_MERGE sections merged in -r, section group signature symbols first, "
                    ".note.gnu.property kept, scripts with -r."),
    "shn-xindex": ("extended section numbering (SHN_XINDEX)", "ELF/InputFiles.cpp, ELF/Writer.cpp",
                   "More than 65,279 sections in inputs and in -r output."),
    "rel-sections": ("SHT_REL relocation sections in inputs", "ELF/InputFiles.cpp, ELF/InputSection.cpp",
                     "REL (not RELA) relocation sections and relocations in empty sections are refused "
                     "(`relocation offset 0x0 is out of bounds`)."),
    "cgprofile": ("call-graph profile sections", "ELF/InputFiles.cpp, ELF/CallGraphSort.cpp",
                  "Relocations in .llvm.call-graph-profile are not references to the symbols they name."),
    # LTO
    "lto-save-temps": ("LTO: -save-temps and .lto.o files", "ELF/LTO.cpp (BitcodeCompiler), LLVM LTO Config::addSaveTemps",
                       "-save-temps writes lld's files (<out>.0.0.preopt.bc, .0.2.internalize.bc, "
                       ".0.4.opt.bc, <out>.lto.o) next to the output."),
    "lto-irsymtab": ("LTO: bitcode without a usable irsymtab", "ELF/InputFiles.cpp (BitcodeFile), LLVM lto::InputFile",
                     "Bitcode whose symbol table must be rebuilt (module asm, no datalayout) is refused "
                     "with `bitcode file has no usable irsymtab`."),
    "lto-symbols": ("LTO: symbols", "ELF/LTO.cpp (add), ELF/InputFiles.cpp",
                    "Bitcode symbols referenced by DSOs, undefined bitcode symbols in the output, "
                    "library calls resolved to bitcode archive members, bitcode with -r."),
    "lto-options": ("LTO: options and diagnostics", "ELF/LTO.cpp (createConfig), ELF/Driver.cpp",
                    "--lto-O0, -plugin-opt=-debugger-tune, -mllvm -time-passes, LLVM's IR-linker warnings."),
    # COFF (lld-link)
    "coff-pdb": ("COFF: PDB and CodeView", "COFF/PDB.cpp, COFF/DebugTypes.cpp",
                 "/debug writes no PDB (dtld warns); CodeView line information in diagnostics "
                 "(`>>> defined at file1.cpp:2`); type-server warnings."),
    "coff-guard": ("COFF: /guard:cf", "COFF/Writer.cpp (createGuardCFTables), COFF/Driver.cpp",
                   "Control-flow-guard tables (.gfids/.giats/.gljmp/.gehcont, load config fields); "
                   "implemented in src/coff/guardcf.rs (the lld 2019 tests lld-link 22 passes pass)."),
    "coff-order": ("COFF: /order and section contribution order", "COFF/Driver.cpp (parseOrderFile), COFF/Writer.cpp (sortBySectionOrder, sortCRTSectionChunks)",
                   "/order files (refused today), the order of `.CRT$XCU` chunks, associative COMDAT order checks."),
    "coff-verbose": ("COFF: /verbose output", "COFF/SymbolTable.cpp, COFF/Driver.cpp, COFF/InputFiles.cpp",
                     "lld's /verbose lines: `lib(member) for sym`, `Directives:`, entry points found through "
                     "the C++ mangling, LIB environment variable searching."),
    "coff-diagnostics": ("COFF: diagnostics", "COFF/Chunks.cpp, COFF/InputFiles.cpp, COFF/SymbolTable.cpp, COFF/Driver.cpp, Common/ErrorHandler.cpp",
                         "Associative COMDAT errors, relocations against discarded sections, `MessageBoxA was "
                         "replaced`, /includeoptional, /incremental warnings, /GL objects, LLVM's object-reader "
                         "wording, DWARF line information, --color-diagnostics."),
    "coff-lto": ("COFF: LTO", "COFF/LTO.cpp, COFF/Driver.cpp",
                 "/lldsavetemps resolution files, LTO cache pruning and file count, /lto-obj-path, .drectve "
                 "options in bitcode, entry points only defined in bitcode, -mllvm -debug-pass."),
    "coff-other": ("COFF: other features", "COFF/Chunks.cpp, COFF/Writer.cpp, COFF/Driver.cpp, COFF/DriverUtils.cpp",
                   "COMDAT `largest` selection, .rdata string tail merging, an object's own .edata, /linkrepro, "
                   "`lld-link /lib` (llvm-lib mode), weak-alias-only object files, /debugtype parsing, "
                   "/nodefaultlib, absolute SECREL relocations."),
    # not to be fixed
    "identity": ("dtld's own identity (by design)", "-",
                 "The test expects lld's --help text, lld's version string in .comment, or the "
                 "`ld.lld:`/`lld-link:` program name in messages (dtld says `dtld:`)."),
    "unclassified": ("not yet classified", "-", "Read the test."),
}

# The order in which the linker-script commands can be built; a test needs every command it uses.
SCRIPT_ORDER = ["script-include", "script-sections", "script-phdrs", "script-memory", "script-overlay-insert"]
SCRIPT_COMMANDS = [
    ("script-include", r"\bINCLUDE\b"),
    ("script-sections", r"\bSECTIONS\b"),
    ("script-phdrs", r"\bPHDRS\b"),
    ("script-memory", r"\bMEMORY\b|\bREGION_ALIAS\b"),
    ("script-overlay-insert", r"\bOVERLAY\b|\bINSERT\s+(AFTER|BEFORE)\b"),
]

# (package, field, regex[, field, regex ...]): every pair must match; first matching rule wins. Fields: msg (dtld's message), lldmsg (lld's message
# where dtld has none), check (the CHECK pattern that failed), test (path), text (the test file).
RULES = [
    ("icf", "msg", r"print-icf-sections|ignore-data-address-equality|keep-unique|\bicf\b"),
    ("emit-relocs", "msg", r"--emit-relocs"),
    ("start-lib", "msg", r"--start-lib|--end-lib"),
    ("symbol-ordering", "msg", r"--symbol-ordering-file|call-graph-ordering"),
    ("section-start", "msg", r"cannot open text=|cannot open data=|cannot open bss=|section-start|-T(text|data|bss)(-segment)?=.* is not supported"),
    ("omagic", "msg", r"unknown argument '-(N|n|omagic|nmagic)'"),
    ("filter-aux", "msg", r"unknown argument '-(f|F)'"),
    ("unresolved-symbols", "msg", r"(warn|error)-unresolved-symbols"),
    ("vs-diagnostics", "msg", r"vs-diagnostics"),
    ("small-options", "msg", r"retain-symbols-file|gnu-unique|apply-dynamic-relocs|disable-verify|cannot open prune_"),
    ("shn-xindex", "msg", r"SHN_XINDEX"),
    ("lto-irsymtab", "msg", r"no usable irsymtab"),
    ("lto-symbols", "msg", r"bitcode member needed after LTO|LLVM bitcode input with -r"),
    ("symbol-versioning", "msg", r"has undefined version"),
    ("rel-sections", "msg", r"relocation offset 0x0 is out of bounds"),
    ("lto-save-temps", "msg", r"\.lto\.o|preopt\.bc|internalize\.bc|opt\.bc"),
    ("lto-save-temps", "check", r"\.lto\.o|preopt\.bc"),
    ("lto-save-temps", "tool", r"\.lto\.o|\.bc'?:"),
    ("lto-save-temps", "first", r"\.\d\.\d\.[a-z]+\.bc|\.lto\.o"),
    ("gdb-index", "test", r"^ELF/gdb-index"),
    ("demangle", "check", r"\b_Z\w+", "msg", r"\w\(|::"),
    ("demangle", "msg", r"\b_Z\w+", "check", r"\b[A-Za-z_][\w:]*\([\w ,*&:]*\)|[A-Za-z_]\w*::[A-Za-z_]"),
    ("eh-frame", "lldmsg", r"\.eh_frame"),
    ("eh-frame", "check", r"\.eh_frame|CIE|FDE"),
    ("merge-checks", "lldmsg", r"offset is outside the section|string is not null terminated"),
    ("input-checks", "lldmsg", r"SHT_GROUP|sh_link|SHF_LINK_ORDER|incompatible section flags|DT_SONAME|versym|"
                               r"cannot redefine linker defined symbol"),
    ("reloc-checks", "lldmsg", r"relocation .* out of range|cannot preempt|discarded section|must be used in|"
                               r"cannot refer to absolute|copy relocation|recompile with -fPIC|undefined hidden symbol|"
                               r"^undefined symbol"),
    ("input-checks", "check", r"unknown relocation|invalid section index in group|sh_addralign|corrupted dependent libraries"),
    ("symbol-resolution", "lldmsg", r"dependent library"),
    ("symbol-resolution", "check", r"dependent library"),
    ("diag-location", "check", r">>> (defined|referenced) (at|by) \S+:\d|>>> defined at \S*\.o:\(\w+\)|did you mean|\(function \w+:|referenced by \w+\.c|\.o: symbol"),
    ("early-errors", "check", r"cannot open output file|cannot find version script|expected, but got foobar"),
    ("relocatable", "check", r"\.rela\.text"),
]

NOTES = {
    # (kind, package, reason) found by reading the test and diffing both linkers' outputs.
    # The hash-style ones were confirmed by a run with a wrapper adding --hash-style=both.
    "ELF/abs-hidden.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/copy-rel-large.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/copy-rel-tls.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/copy-relocation-zero-abs-addr.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/merge-gc-piece.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/merge-shared-str.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/merge-shared.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/merge-sym.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/merge-to-non-alloc.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/rel-offset.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/relocation-copy-align-common.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/sysv-hash-no-rosegment.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/version-script-reassign-glob.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/x86-64-got-plt-header.s": ("output", "hash-style", "addresses differ only because lld also emits .hash (passes with --hash-style=both)"),
    "ELF/as-needed-not-in-regular.s": ("output", "symbol-resolution", "a DSO named again after --no-as-needed must become DT_NEEDED although its first mention was --as-needed"),
    "ELF/avoid-empty-program-headers.s": ("output", "segments", "a .tbss-only RW part gets its own PT_LOAD and .relro_padding; lld creates no PT_LOAD for it"),
    "ELF/basic-freebsd.s": ("output", "section-details", "EI_OSABI is not taken from the input objects (FreeBSD)"),
    "ELF/comdat-discarded-reloc.s": ("output", "relocatable", "-r: the discarded-section warning names the relocated section (.text.bar2), lld names the relocation section (.rela.text.bar2)"),
    "ELF/comment-gc.s": ("output", "identity", ".comment says dtld's name; the test expects lld's LLD_VERSION string (\"LLD 1.0\")"),
    "ELF/common-page.s": ("output", "segments", "the first PT_LOAD has p_filesz 0 when no read-only section follows the headers, so the ELF and program headers are not mapped"),
    "ELF/common.s": ("output", "section-details", "COMMON symbols: the largest alignment is not kept (.bss align 4 and size 0x16; lld: 16 and 0x24)"),
    "ELF/compatible-section-types.s": ("output", "section-details", "same-named sections of types NOTE/INIT_ARRAY/PREINIT_ARRAY/FINI_ARRAY/PROGBITS stay separate output sections; lld makes one .foo"),
    "ELF/start-lib-comdat.s": ("output", "start-lib", "a lazy --start-lib object whose COMDAT group lost keeps zed lazy; lld makes it an undefined symbol in .dynsym"),
    "ELF/symbol-ordering-file-icf.s": ("output", "icf", "the order is right but --icf=all does not fold, so addresses differ"),
    "ELF/vs-diagnostics-duplicate-split.s": ("wording", "diag-location", "duplicate-symbol messages have no `>>> defined at file:line` from DWARF, so --vs-diagnostics has no location"),
    "ELF/vs-diagnostics-versionscript.s": ("wording", "early-errors", "lld parses --version-script before it reports `no input files`"),
    "ELF/warn-backrefs.s": ("refused", "small-options", "--warn-backrefs is not implemented (warns `not supported; ignored`, fatal under --fatal-warnings)"),
    "ELF/x86-64-reloc-range.s": ("refused", "reloc-checks", "R_X86_64_PC32 out of range: lld's message ends `references section '.bss'`, dtld's `references ''` (a section symbol's name is not looked up)"),
    "ELF/dso_handle.s": ("output", "reserved-symbols", "__dso_handle is LOCAL DEFAULT ABS; lld defines it hidden, relative to the first section"),
    "ELF/dt_flags.s": ("output", "section-details", "-Bsymbolic does not set DF_SYMBOLIC in DT_FLAGS"),
    "ELF/dynamic-no-rosegment.s": ("output", "section-details", "-z rodynamic is accepted but .dynamic stays in a writable segment"),
    "ELF/dynamic.s": ("output", "reserved-symbols", "_DYNAMIC is not defined in -shared/-pie links"),
    "ELF/empty-pt-load.s": ("output", "segments", "an empty .text still gets an R E PT_LOAD"),
    "ELF/fill-trap.s": ("output", "segments", "the first PT_LOAD has p_filesz 0 when no read-only section follows the headers"),
    "ELF/gc-merge-local-sym.s": ("output", "section-details", "merged string output sections get sh_entsize 0; lld keeps 1"),
    "ELF/gc-sections-linker-defined-symbol.s": ("output", "reserved-symbols", "_end referenced in a -shared link is not exported to .dynsym"),
    "ELF/gc-sections-local-sym.s": ("output", "reserved-symbols", "_DYNAMIC is not defined in -shared/-pie links"),
    "ELF/gc-sections-merge-addend.s": ("output", "section-details", "merged string output sections get sh_entsize 0; lld keeps 1"),
    "ELF/gc-sections-merge.s": ("output", "section-details", "merged string output sections get sh_entsize 0; lld keeps 1"),
    "ELF/global-offset-table-position.s": ("output", "reserved-symbols", "_GLOBAL_OFFSET_TABLE_ is LOCAL DEFAULT, lld makes it hidden; _DYNAMIC missing"),
    "ELF/global_offset_table_shared.s": ("output", "reserved-symbols", "_GLOBAL_OFFSET_TABLE_ is LOCAL DEFAULT, lld makes it hidden; _DYNAMIC missing"),
    "ELF/help.s": ("output", "identity", "--help prints dtld's own text; the test expects lld's option list"),
    "ELF/hidden-vis-shared.s": ("output", "symbol-resolution", "a weak hidden undefined symbol binds to a DSO's definition through a PLT; lld leaves it 0 without a relocation"),
    "ELF/merge-reloc.s": ("output", "relocatable", "-r: SHF_MERGE sections are concatenated, lld merges them"),
    "ELF/merge-string-align2.s": ("output", "section-details", "merged string output sections get sh_entsize 0; lld keeps 1"),
    "ELF/note-alignment.s": ("output", "segments", "an empty R E PT_LOAD (empty .text) shifts the PT_NOTE indices"),
    "ELF/note-contiguous.s": ("output", "segments", "PT_NOTE p_align is always 4; lld uses the notes' alignment (1)"),
    "ELF/note.s": ("output", "segments", "PT_NOTE p_align is always 4; lld uses the notes' alignment (1)"),
    "ELF/openbsd-wxneeded.s": ("output", "section-details", "-z wxneeded is accepted but PT_OPENBSD_WXNEEDED is not emitted"),
    "ELF/program-header-layout.s": ("output", "segments", "an empty R E PT_LOAD is created for an empty .text"),
    "ELF/relocatable-build-id.s": ("output", "section-details", "an input's .note.gnu.build-id (from -r --build-id) survives into the final link; lld drops input build-id notes"),
    "ELF/relocatable-comdat-multiple.s": ("output", "relocatable", "-r: group sh_info (signature symbol index) and .symtab order differ; lld puts signature symbols first"),
    "ELF/relocatable-comdat.s": ("output", "relocatable", "-r: group sh_info (signature symbol index) and .symtab order differ; lld puts signature symbols first"),
    "ELF/relocatable-comdat2.s": ("output", "relocatable", "-r: group sh_info (signature symbol index) and .symtab order differ; lld puts signature symbols first"),
    "ELF/relocation-copy-flags.s": ("output", "section-details", "a copy-relocated symbol gets alignment 32 where lld derives 16 from the DSO symbol's address"),
    "ELF/relro-tls.s": ("output", "segments", "PT_GNU_RELRO p_filesz includes .relro_padding (NOBITS)"),
    "ELF/rodynamic.s": ("output", "section-details", "-z rodynamic is accepted but .dynamic stays writable"),
    "ELF/section-layout.s": ("output", "section-details", "orphan sections are ranked differently (lld: by flags, PROGBITS before NOBITS)"),
    "ELF/section-symbol.s": ("output", "reserved-symbols", "_DYNAMIC is not defined in -shared/-pie links"),
    "ELF/shlib-undefined-archive.s": ("output", "symbol-resolution", "an archive member defining a symbol a DSO leaves undefined is not extracted"),
    "ELF/startstop-shared.s": ("output", "reserved-symbols", "a `.hidden __start_bar` reference does not make the synthesized __start_bar hidden (it is exported)"),
    "ELF/startstop-shared2.s": ("output", "reserved-symbols", "__start_foo binds to a DSO's definition; lld defines it locally because the output has a `foo` section"),
    "ELF/text-section-prefix.s": ("output", "section-details", "-z keep-text-section-prefix is accepted but .text.hot/.text.unlikely/... are still merged into .text"),
    "ELF/tls-offset.s": ("output", "section-details", ".tbss sh_offset is aligned past the file data; lld uses the offset where .tdata ends"),
    "ELF/version-script-twice.s": ("output", "symbol-versioning", "a symbol with two .symver names gets one .dynsym entry"),
    "ELF/visibility.s": ("output", "reserved-symbols", "_DYNAMIC is not defined in -shared/-pie links"),
    "ELF/x86-property-relocatable.s": ("output", "relocatable", "-r drops .note.gnu.property"),
    "ELF/eh-frame-hdr-icf.s": ("output", "icf", "--icf=all does nothing, so the folded function's FDE stays in .eh_frame_hdr"),
    "ELF/invalid-fde-rel.s": ("output", "eh-frame", "an FDE with a relocation lld tolerates is dropped from .eh_frame"),
    "ELF/linkerscript/defsym.s": ("output", "script-other", "a -T script assignment always wins over --defsym; in lld the later one on the command line wins"),
    "ELF/linkerscript/dynamic-sym.s": ("output", "reserved-symbols", "a script-defined _DYNAMIC is exported; lld keeps it local"),
    "ELF/local-dynamic.s": ("output", "reserved-symbols", "_DYNAMIC is not defined in -shared/-pie links"),
    "ELF/lto/common.ll": ("output", "section-details", "COMMON symbols from bitcode: .bss alignment 4 where lld gives 8"),
    "ELF/lto/debugger-tune.ll": ("output", "lto-options", "-plugin-opt=-debugger-tune=sce does not reach code generation"),
    "ELF/lto/dynsym.ll": ("output", "lto-symbols", "a bitcode function referenced only by a DSO is dropped by LTO and left undefined in .dynsym"),
    "ELF/lto/irmover-warning.ll": ("output", "lto-options", "LLVM's IR-linker warning (conflicting module flags) is not printed"),
    "ELF/lto/opt-level.ll": ("output", "lto-options", "--lto-O0 / --plugin-opt=O0 do not set the optimisation level"),
    "ELF/lto/undef.ll": ("output", "lto-symbols", "an undefined bitcode symbol is missing from the -shared output's symbol tables"),
    "ELF/lto/linkage.ll": ("output", "reserved-symbols", "_DYNAMIC is not defined, so llvm-nm prints nothing"),
    "ELF/lto/timepasses.ll": ("output", "lto-options", "-mllvm -time-passes prints no timing report"),
    "ELF/fatal-warnings.s": ("output", "diag-location", "--warn-common warnings are not emitted"),
    "ELF/warn-common.s": ("output", "diag-location", "--warn-common warnings are not emitted"),
    "ELF/version-exclude-libs.s": ("output", "symbol-versioning", "--exclude-libs ALL with a versioned archive member loses the member's symbols from .symtab"),
    "ELF/copy-rel-version.s": ("refused", "symbol-versioning", "a DSO whose version script lists v1 and v2 does not export foo@@v2, so the executable's foo is undefined"),
    "ELF/cgprofile-warn.s": ("refused", "unresolved-symbols", "--noinhibit-exec does not turn the undefined-symbol error into a warning"),
    "ELF/cgprofile-shared-warn.s": ("refused", "cgprofile", "a symbol named only in .llvm.call-graph-profile is reported undefined"),
    "ELF/abs-conflict.s": ("refused", "symbol-resolution", "two identical absolute definitions are a duplicate-symbol error; lld accepts them"),
    "ELF/linkerscript/target.s": ("refused", "script-other", "TARGET(binary) before INPUT is ignored, so the file is linked twice as ELF"),
    "ELF/stdout.s": ("tool-error", "small-options", "`-o -` does not write the output to stdout"),
    "ELF/local-undefined-symbol.s": ("no-error", "reloc-checks", "a relocation against an undefined local symbol links; lld reports `undefined symbol`"),
    "ELF/hidden-shared-err.s": ("no-error", "reloc-checks", "a hidden undefined reference resolved only by a DSO links; lld reports `undefined hidden symbol`"),
    "ELF/lto/deplibs.s": ("no-error", "symbol-resolution", "dependent libraries (.deplibs) are not read"),
    "ELF/deplibs-colon-prefix.s": ("wording", "symbol-resolution", "dependent libraries (.deplibs) are not read"),
    "ELF/strip-all.s": ("wording", "emit-relocs", "--emit-relocs is refused before --strip-all's conflict can be reported"),
    "ELF/relro-non-contiguous.s": ("wording", "script-sections", "needs SECTIONS to reach lld's non-contiguous relro error"),
}


COFF_RULES = [
    ("coff-guard", "msg", r"/guard:cf"),
    ("coff-guard", "test", r"guardcf|gfids"),
    ("coff-order", "msg", r"/order"),
    ("coff-order", "test", r"order"),
    ("coff-pdb", "test", r"pdb|debug-dwarf|debug-fastlink|s_udt|used-lto|-cv\.s|line-error"),
    ("coff-lto", "test", r"lto|\.ll$"),
    ("coff-verbose", "check", r"\.lib\(.*\) for \w+|Directives:|-aligncomm"),
    ("coff-verbose", "test", r"libpath|entry-inference"),
    ("coff-diagnostics", "kind", r"no-error|wording"),
    ("coff-diagnostics", "test", r"incremental|cl-gl"),
]

COFF_NOTES = {
    "COFF/comdat-selection.s": ("wording", "identity", "expects `lld-link: error: duplicate symbol`; the `newest` COMDAT selection is also not refused"),
    "COFF/color-diagnostics.test": ("wording", "coff-diagnostics", "--color-diagnostics does not colour the `warning:` of lld-link's messages"),
    "COFF/nodefaultlib.test": ("no-error", "coff-other", "/nodefaultlib:std64.lib does not cancel /defaultlib:std64 (without extension)"),
    "COFF/comdat-selection-associative-largest.s": ("output", "coff-other", "COMDAT `largest` selection keeps the first copy"),
    "COFF/string-tail-merge.s": ("output", "coff-other", ".rdata string literals are not tail-merged"),
    "COFF/edata.s": ("output", "coff-other", "an object's own .edata section is not used as the export directory"),
    "COFF/dllimport-gc.test": ("refused", "coff-other", "an object file containing only weak aliases is `unknown file type`"),
    "COFF/thin-archive.s": ("refused", "coff-other", "`lld-link /lib` (llvm-lib mode) is refused"),
    "COFF/invalid-debug-type.test": ("refused", "coff-other", "an unknown /debugtype: value is an error; lld warns and goes on"),
    "COFF/pdb-secrel-absolute.yaml": ("refused", "coff-pdb", "a SECREL relocation against an absolute symbol in .debug$S is refused as out of range"),
    "COFF/linkrepro-res.test": ("refused", "coff-other", "/linkrepro is refused"),
    "COFF/linkrepro-pdb.test": ("refused", "coff-pdb", "/linkrepro with /debug is refused"),
}


class Rules:
    def __init__(self, suite, test_root):
        self.suite = suite
        self.root = test_root

    def text(self, test):
        try:
            with open(os.path.join(self.root, test), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def script_package(self, test):
        """the last linker-script command (in SCRIPT_ORDER) the test uses, or None"""
        text = self.text(test)
        used = [p for p, rx in SCRIPT_COMMANDS if re.search(rx, text)]
        return max(used, key=SCRIPT_ORDER.index) if used else None

    def package(self, kind, facts, first):
        """(package id, reason or '')"""
        if self.suite == "coff":
            return self.coff_package(kind, facts, first)
        test = facts["test"]
        note = NOTES.get(test)
        if note and note[0] == kind:
            return note[1], note[2]
        msg = facts.get("msg", "")
        m = re.search(r"(SECTIONS|MEMORY|PHDRS|INCLUDE|OVERLAY|INSERT) is not supported in linker scripts", msg)
        if m:
            pkg = self.script_package(test) or "script-sections"
            needs = [p.split("-", 1)[1].upper().replace("OVERLAY-INSERT", "OVERLAY/INSERT")
                     for p in SCRIPT_ORDER if re.search(dict(SCRIPT_COMMANDS)[p], self.text(test))]
            needs = [n for n in needs if m.group(1) not in n.split("/")]
            return pkg, "dtld refuses the script's %s%s" % (m.group(1), (" (the test also uses %s)" % ", ".join(needs)) if needs else "")
        if kind == "program-name":
            return "identity", "only the `dtld:` program name differs"
        fields = dict(facts)
        fields["first"] = first
        for pkg, *conds in RULES:
            if all(re.search(rx, fields.get(field, "") or "") for field, rx in zip(conds[::2], conds[1::2])):
                if pkg == "lto-save-temps":
                    f = re.search(r"(\.\d\.\d\.[a-z]+\.bc|\.lto\.o)\b", first)
                    return pkg, "-save-temps does not write lld's `<output>%s`" % (f.group(1) if f else "...")
                return pkg, ""
        if test.startswith("ELF/linkerscript/") or re.search(r"(^|\s)(-T|--script)", self.text(test)):
            p = self.script_package(test)
            if p:
                return p, ""
        if test.startswith("ELF/lto/"):
            return "lto-symbols", ""
        return "unclassified", ""

    def coff_package(self, kind, facts, first):
        test = facts["test"]
        note = COFF_NOTES.get(test)
        if note and note[0] == kind:
            return note[1], note[2]
        if kind == "program-name":
            return "identity", "only the `dtld:` program name differs"
        fields = dict(facts, first=first, kind=kind)
        for pkg, *conds in COFF_RULES:
            if all(re.search(rx, fields.get(field, "") or "") for field, rx in zip(conds[::2], conds[1::2])):
                return pkg, ""
        return "coff-other", ""

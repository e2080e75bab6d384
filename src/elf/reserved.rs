//! The symbol names the linker reserves (lld's `ElfSym` and `addReservedSymbols`): which it
//! defines when they are referenced, and which of those it exports.
//!
//! Why it is a module of its own: resolution, the version checks, layout and the writer all ask
//! these questions of a name; the answer depends on nothing but the name, so it sits below all
//! of them.

/// The reserved symbols lld defines with default visibility (the end markers): the others are
/// hidden, or protected (`__start_`/`__stop_`).
pub fn is_public_linker_defined(name: &[u8]) -> bool {
    matches!(name, b"_end" | b"end" | b"_etext" | b"etext" | b"_edata" | b"edata" | b"__bss_start")
}

/// Names the linker may define when referenced (`decide_linker_symbols` says when it does).
pub fn is_linker_defined(name: &[u8]) -> bool {
    matches!(
        name,
        b"_GLOBAL_OFFSET_TABLE_"
            | b"__ehdr_start"
            | b"__executable_start"
            | b"_DYNAMIC"
            | b"__bss_start"
            | b"_end"
            | b"end"
            | b"_etext"
            | b"etext"
            | b"_edata"
            | b"edata"
            | b"__init_array_start"
            | b"__init_array_end"
            | b"__fini_array_start"
            | b"__fini_array_end"
            | b"__preinit_array_start"
            | b"__preinit_array_end"
            | b"__rela_iplt_start"
            | b"__rela_iplt_end"
            | b"_TLS_MODULE_BASE_"
            | b"__dso_handle"
            | b"__GNU_EH_FRAME_HDR"
    ) || name.starts_with(b"__start_")
        || name.starts_with(b"__stop_")
}

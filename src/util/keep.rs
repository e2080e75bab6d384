//! What a link keeps until its process exits, and why: the one place dtld leaks on purpose.
//!
//! A dtld process runs one link. Its inputs (mapped or read), the objects LTO compiles, the
//! sections it decompresses, the names it interns and the model built on them are read until
//! the output is written, and then the process exits: freeing them before would only cost time
//! (lld skips its destructors at exit, `exitLld`; mold never frees its context). Their
//! `'static` lifetime says so in the types: no stage can hold a borrow that outlives its data,
//! and no arena has to be threaded through every stage. So they are handed here, and nothing
//! else in `src/` calls `Box::leak` or `mem::forget` (`scripts/checks/modgraph.py` checks it).
//!
//! - `slice`, `str`, `value`: data of the link (inputs, LTO objects, decompressed sections,
//!   interned names, the configuration), and data handed to a library dtld loaded (module
//!   names and result sinks the LTO library's threads write to, a plugin's transfer vector),
//!   which must outlive every call the library may still make;
//! - `skip_drop`: a structure whose destruction at the end of a link is only work: the symbol
//!   table, the layout, the output's mapping (unmapping 230 MB took milliseconds);
//! - `loaded_library`: a shared library dtld loaded (libLLVM through dtld's LTO library,
//!   LLVMgold.so, GCC's plugin) is never unloaded: unloading runs its static destructors while
//!   its threads may still run, and LLVM is not made to be unloaded.
//!
//! Tests and fuzz targets, which run many links in one process, keep this memory too; each is
//! short.

/// `v` for the rest of the process (data of the link, or handed to a loaded library).
pub fn slice<T>(v: Vec<T>) -> &'static mut [T] {
    Box::leak(v.into_boxed_slice())
}

/// `s` for the rest of the process (an interned or synthesized name).
pub fn str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `v` for the rest of the process (the configuration, an input, a sink a library writes to).
pub fn value<T>(v: T) -> &'static mut T {
    Box::leak(Box::new(v))
}

/// Leaves `v` to the process's exit instead of destroying it (a big structure whose destructor
/// would only free memory and unmap files).
pub fn skip_drop<T>(v: T) {
    std::mem::forget(v)
}

/// Never unloads the loaded library `lib` (see the module comment).
pub fn loaded_library<T>(lib: T) {
    std::mem::forget(lib)
}

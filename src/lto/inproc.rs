//! The thin link and the ThinLTO backends inside dtld's own process, through
//! `libdtld-lto-<major>.so` (`src/lto/shim/dtld_lto.cpp`, built against the user's libLLVM by
//! `scripts/build-lto-shim.sh`).
//!
//! Why: issue 15 measured the out-of-process ways to their floor. `llvm-lto2` needs every module
//! staged as a file, parses them all again, and writes each object (cached or not) to a file that
//! dtld reads back; LLVMgold.so in a fork parses each module twice and tears the combined index
//! down before it exits. lld does none of that: it runs `lto::LTO` over the buffers it has. The
//! library gives dtld the same: modules passed as the mapped bytes dtld already holds (named as
//! lld names them, so LLVM's messages need no renaming), each parsed right before it is
//! added, resolutions passed as one byte per symbol, objects returned in memory (the buffers
//! LLVM holds, used in place), and the LTO state never torn down (the process exit frees it;
//! tearing it down took LLVMgold 19 ms on OpenSSL). Three modes (`Mode`): the index-only link,
//! in-process backends, and DTLTO's thin link (each module's index and import list handed back in memory: dtld writes
//! those of the jobs its cache does not hold, with their modules, for the distributor).
//!
//! The library is used only when it was built against the very libLLVM the link's LLVM
//! installation uses (its `RUNPATH`/`DT_NEEDED` resolve to the same file as `llvm-lto2`'s or
//! `LLVMgold.so`'s), and only for what it does exactly as the `llvm-lto2` path does; anything
//! else (regular-LTO modules in an index-only link, `-save-temps`, index files next to
//! in-process backends, two modules with one name) takes the other paths, and `--verbose` says
//! why. `DTLD_THIN_LINK=llvm-lto2`, `=gold` or `=helper` choose those paths; `DTLD_LTO_SHIM=`
//! names the library (empty: none).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::request::LtoRequest;
use super::thinlink::CodegenSettings;
use crate::error::{Error, Result};

/// The interface version `dtld_lto_abi()` must return.
const ABI: c_uint = 7;

#[repr(C)]
struct Config {
    opt_level: c_uint,
    cg_opt_level: c_int,
    threads: c_uint,
    debug_pass_manager: c_uint,
    cl_args: *const *const c_char,
    cl_argc: usize,
    index_only: c_uint,
    index_sink: Option<IndexFn>,
    index_ctx: *mut c_void,
    cache_dir: *const c_char,
    settings: *const *const c_char,
    settingc: usize,
    probe: Option<ProbeFn>,
    sha1: Option<Sha1Fn>,
}

type DiagFn = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, usize);
type ObjectFn = unsafe extern "C" fn(*mut c_void, c_uint, *const c_char, usize, *const c_char, usize);
type IndexFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize, *const c_char, usize);
type ProbeFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> c_int;
type Sha1Fn = unsafe extern "C" fn(*const u8, usize, *mut u8);

/// SHA-1 for the library's backend cache keys (`cache_key.h`): the `sha1` crate uses the
/// CPU's SHA instructions where LLVM's is portable code.
unsafe extern "C" fn on_sha1(data: *const u8, len: usize, out: *mut u8) {
    use sha1::Digest as _;
    // SAFETY: the library passes `len` readable bytes at `data` and 20 writable bytes at `out`.
    let (data, out) = unsafe { (std::slice::from_raw_parts(data, len), std::slice::from_raw_parts_mut(out, 20)) };
    out.copy_from_slice(&sha1::Sha1::digest(data));
}

/// DTLTO's question to the backend cache, asked with LLVM's cache key of a module's backend
/// (`computeLTOCacheKey`) before its shard is written: dtld's key for the job and, if the
/// cache holds its object, the object (then no shard is written).
pub type Probe = Box<dyn Fn(&[u8]) -> super::backend::Known + Send + Sync>;

/// The library's entry points (see `dtld_lto.cpp` for their contracts).
struct Api {
    create: unsafe extern "C" fn(*const Config, DiagFn, *mut c_void, *mut *mut c_char) -> *mut c_void,
    parse: unsafe extern "C" fn(*const c_char, usize, *const c_char, usize, *mut *mut c_char) -> *mut c_void,
    symbol_count: unsafe extern "C" fn(*const c_void) -> usize,
    symbol_name: unsafe extern "C" fn(*const c_void, usize, *mut usize) -> *const c_char,
    input_free: unsafe extern "C" fn(*mut c_void),
    add: unsafe extern "C" fn(*mut c_void, *mut c_void, *const u8, usize, *mut *mut c_char) -> c_int,
    run: unsafe extern "C" fn(*mut c_void, ObjectFn, *mut c_void, *mut *mut c_char) -> c_int,
    skip_index: unsafe extern "C" fn(*mut usize) -> *mut c_char,
    release: unsafe extern "C" fn(*mut c_void),
    free_string: unsafe extern "C" fn(*mut c_char),
    llvm_version: unsafe extern "C" fn() -> *const c_char,
    runtime_libcalls: unsafe extern "C" fn(*const c_char) -> *mut c_char,
    check_options: unsafe extern "C" fn(*const c_char, *const *const c_char, usize, c_int) -> *mut c_char,
}

/// The loaded library. It is never unloaded (LLVM registers process-wide state).
pub struct Shim {
    api: Api,
}

/// `DTLD_THIN_LINK` names another path (llvm-lto2, LLVMgold in a fork or in the helper).
fn other_path_forced() -> bool {
    ["llvm-lto2", "gold", "helper"].iter().any(|h| super::llvm::thin_link_forced(h))
}

/// The library for the LLVM installation at `dir` (`/usr/lib/llvm-22`): next to the dtld
/// executable, or in `<exe>/../lib/dtld/` (an installed dtld), or `$DTLD_LTO_SHIM`; only one
/// built against the libLLVM the installation's tools load.
pub fn find(dir: &Path) -> Option<PathBuf> {
    if other_path_forced() {
        return None;
    }
    let tool = [dir.join("bin/llvm-lto2"), dir.join("lib/LLVMgold.so")].into_iter().find(|p| p.is_file())?;
    let (lib_name, lib) = super::llvm::linked_llvm_lib(&tool, dir)?;
    let lib = std::fs::canonicalize(lib).ok()?;
    let major = lib_name.strip_prefix("libLLVM.so.").or_else(|| lib_name.strip_prefix("libLLVM-"))?.split(['.', '-']).next()?.to_string();
    let candidates: Vec<PathBuf> = match std::env::var_os("DTLD_LTO_SHIM") {
        Some(p) if p.is_empty() => return None,
        Some(p) => vec![PathBuf::from(p)],
        None => {
            let exe = std::env::current_exe().ok()?;
            let exe_dir = exe.parent()?.to_path_buf();
            let file = format!("libdtld-lto-{major}.so");
            vec![exe_dir.join(&file), exe_dir.join("../lib/dtld").join(&file)]
        }
    };
    candidates.into_iter().find(|c| c.is_file() && super::llvm::links_library(c, &lib))
}

impl Shim {
    /// Loads the library at `path` and checks its interface version.
    pub fn load(path: &Path) -> std::result::Result<Shim, String> {
        // SAFETY: loading the library runs libLLVM's static initializers, as loading
        // LLVMgold.so does; it is never unloaded (forgotten below).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{}: cannot load: {e}", path.display()))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol has the signature of the field it fills (dtld_lto.cpp,
                // checked by the interface version below).
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{}: {e}", path.display()))?
            };
        }
        let abi: unsafe extern "C" fn() -> c_uint = sym!("dtld_lto_abi");
        // SAFETY: takes nothing, returns a number.
        let v = unsafe { abi() };
        if v != ABI {
            return Err(format!("{}: interface version {v}, dtld needs {ABI}", path.display()));
        }
        let api = Api {
            create: sym!("dtld_lto_create"),
            parse: sym!("dtld_lto_parse"),
            symbol_count: sym!("dtld_lto_symbol_count"),
            symbol_name: sym!("dtld_lto_symbol_name"),
            input_free: sym!("dtld_lto_input_free"),
            add: sym!("dtld_lto_add"),
            run: sym!("dtld_lto_run"),
            skip_index: sym!("dtld_lto_skip_index"),
            release: sym!("dtld_lto_release"),
            free_string: sym!("dtld_lto_free_string"),
            llvm_version: sym!("dtld_lto_llvm_version"),
            runtime_libcalls: sym!("dtld_lto_runtime_libcalls"),
            check_options: sym!("dtld_lto_check_options"),
        };
        crate::util::keep::loaded_library(lib);
        Ok(Shim { api })
    }

    /// The LLVM version the library was built with (`22.1.8`).
    pub fn llvm_version(&self) -> String {
        // SAFETY: returns a static NUL-terminated string.
        unsafe { CStr::from_ptr((self.api.llvm_version)()) }.to_string_lossy().into_owned()
    }

    /// The runtime library functions code generation may call for `triple` (LLVM's
    /// `LTO::getRuntimeLibcallSymbols`).
    pub fn runtime_libcalls(&self, triple: &str) -> Vec<String> {
        let t = cstr(triple);
        // SAFETY: takes a NUL-terminated string, returns a malloc'd one (or null).
        let p = unsafe { (self.api.runtime_libcalls)(t.as_ptr()) };
        if p.is_null() {
            return Vec::new();
        }
        // SAFETY: a NUL-terminated string from the library's malloc, freed once here.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: as above.
        unsafe { (self.api.free_string)(p) };
        s.lines().map(str::to_string).collect()
    }

    /// LLVM's option parser on the user's options (`dtld_lto_check_options`), as lld's command
    /// line reading runs it; `prog` is the name LLVM's messages start with. `together`: one
    /// parse of all (lld-link). Empty when every option parsed; else each failed option's index
    /// and LLVM's words (one entry, index 0, for `together`).
    pub fn check_options(&self, prog: &str, opts: &[String], together: bool) -> Vec<(usize, String)> {
        let prog = cstr(prog);
        let opts: Vec<CString> = opts.iter().map(|o| cstr(o)).collect();
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: NUL-terminated strings that outlive the call; returns a malloc'd string or null.
        let p = unsafe { (self.api.check_options)(prog.as_ptr(), ptrs.as_ptr(), ptrs.len(), c_int::from(together)) };
        if p.is_null() {
            return Vec::new();
        }
        // SAFETY: a NUL-terminated string from the library's malloc, freed once here.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: as above.
        unsafe { (self.api.free_string)(p) };
        if together {
            return vec![(0, s)];
        }
        s.split('\x1e').filter_map(|e| e.split_once('\x1f')).filter_map(|(i, words)| Some((i.parse().ok()?, words.to_string()))).collect()
    }

    /// Takes an error string the library allocated.
    fn take_error(&self, e: *mut c_char) -> String {
        if e.is_null() {
            return "unknown error".into();
        }
        // SAFETY: a NUL-terminated string from the library's malloc, freed once here.
        let s = unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned();
        // SAFETY: as above.
        unsafe { (self.api.free_string)(e) };
        s
    }

    /// LLVM's own bytes for the index of a bitcode file the link did not need (lld's
    /// `thinLTOCreateEmptyIndexFiles`).
    pub fn skip_index(&self) -> Vec<u8> {
        let mut len = 0usize;
        // SAFETY: returns a malloc'ed buffer of `len` bytes (or null), freed here.
        let p = unsafe { (self.api.skip_index)(&mut len) };
        if p.is_null() {
            return super::skipindex::skip_module_index();
        }
        // SAFETY: `p` holds `len` bytes.
        let v = unsafe { std::slice::from_raw_parts(p as *const u8, len) }.to_vec();
        // SAFETY: the same allocation, freed once.
        unsafe { (self.api.free_string)(p) };
        v
    }
}

/// What the library's callbacks collect: LLVM's diagnostics, the native objects and (DTLTO)
/// the index shards.
#[derive(Default)]
struct Sink {
    diags: Mutex<Vec<(c_int, String)>>,
    objects: Mutex<Vec<(u32, &'static [u8], Option<PathBuf>)>>,
    indexes: Mutex<Vec<Index>>,
    /// `Mode::IndexOnly`: where the indexes go. Each is written as it comes (kept until the run
    /// ends, OpenSSL's shards added 11 MiB to the thin link's peak memory); write errors are
    /// collected.
    files: Option<IndexFiles>,
    write_errors: Mutex<Vec<(String, Error)>>,
    /// `Mode::Distributed` with a backend cache: the question, and its answers by module.
    probe: Option<Probe>,
    probed: Mutex<Vec<(String, super::backend::Known)>>,
}

/// Where an index-only link writes its index and imports files: lld's
/// `--thinlto-prefix-replace` (`old` -> `new`) applied to the module name.
pub struct IndexFiles {
    pub old: String,
    pub new: String,
    pub imports: bool,
}

/// One ThinLTO module's index shard and import sources, as the thin link produced them in
/// memory (`Mode::Distributed`): what LLVM would write to `<module>.thinlto.bc` and
/// `<module>.imports`.
pub struct Index {
    /// The module ID.
    pub module: String,
    pub shard: Vec<u8>,
    /// Module IDs, in LLVM's order.
    pub imports: Vec<String>,
}

unsafe extern "C" fn on_index(
    ctx: *mut c_void,
    module: *const c_char,
    module_len: usize,
    shard: *const c_char,
    shard_len: usize,
    imports: *const c_char,
    imports_len: usize,
) {
    // SAFETY: `ctx` as for `on_diag`; the three buffers hold their lengths for the call.
    let (sink, module, shard, imports) = unsafe {
        (
            &*(ctx as *const Sink),
            std::slice::from_raw_parts(module as *const u8, module_len),
            std::slice::from_raw_parts(shard as *const u8, shard_len),
            std::slice::from_raw_parts(imports as *const u8, imports_len),
        )
    };
    let module = String::from_utf8_lossy(module).into_owned();
    if let Some(files) = &sink.files {
        if let Err(e) = write_index(files, &module, shard, imports) {
            sink.write_errors.lock().unwrap_or_else(|p| p.into_inner()).push((module, e));
        }
        return;
    }
    let index = Index {
        module,
        shard: shard.to_vec(),
        imports: imports.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| String::from_utf8_lossy(l).into_owned()).collect(),
    };
    sink.indexes.lock().unwrap_or_else(|p| p.into_inner()).push(index);
}

unsafe extern "C" fn on_probe(ctx: *mut c_void, module: *const c_char, module_len: usize, key: *const c_char, key_len: usize) -> c_int {
    // SAFETY: `ctx` as for `on_diag`; the two buffers hold their lengths for the call.
    let (sink, module, key) =
        unsafe { (&*(ctx as *const Sink), std::slice::from_raw_parts(module as *const u8, module_len), std::slice::from_raw_parts(key as *const u8, key_len)) };
    let Some(probe) = &sink.probe else { return 0 };
    let known = probe(key);
    let hit = known.hit.is_some();
    sink.probed.lock().unwrap_or_else(|p| p.into_inner()).push((String::from_utf8_lossy(module).into_owned(), known));
    c_int::from(hit)
}

unsafe extern "C" fn on_diag(ctx: *mut c_void, severity: c_int, msg: *const c_char, len: usize) {
    // SAFETY: `ctx` is the `Sink` passed to `create`, alive for the whole link; `msg` holds
    // `len` bytes for the duration of the call.
    let (sink, bytes) = unsafe { (&*(ctx as *const Sink), std::slice::from_raw_parts(msg as *const u8, len)) };
    sink.diags.lock().unwrap_or_else(|p| p.into_inner()).push((severity, String::from_utf8_lossy(bytes).into_owned()));
}

unsafe extern "C" fn on_object(ctx: *mut c_void, task: c_uint, data: *const c_char, len: usize, path: *const c_char, path_len: usize) {
    // SAFETY: `ctx` as for `on_diag`; the bytes stay valid until the LTO state is destroyed,
    // which dtld never does (the process exit frees them); `path` holds `path_len` bytes for
    // the call.
    let (sink, bytes) = unsafe { (&*(ctx as *const Sink), std::slice::from_raw_parts(data as *const u8, len)) };
    let file = (!path.is_null()).then(|| {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: as above.
        PathBuf::from(std::ffi::OsStr::from_bytes(unsafe { std::slice::from_raw_parts(path as *const u8, path_len) }))
    });
    sink.objects.lock().unwrap_or_else(|p| p.into_inner()).push((task, bytes, file));
}

/// A parsed module, owned until `add` consumes it.
struct Input<'s> {
    shim: &'s Shim,
    ptr: *mut c_void,
}

impl Drop for Input<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: a pointer from `parse`, not yet consumed by `add`.
            unsafe { (self.shim.api.input_free)(self.ptr) };
        }
    }
}

/// What an in-process run produced.
pub struct Produced {
    /// Native objects by task (0: the regular-LTO partition), in task order: LLVM's buffers
    /// (cache hits are its maps of the cache files), never freed; and the LLVM cache file
    /// holding each, if any.
    pub objects: Vec<(u32, &'static [u8], Option<PathBuf>)>,
    /// `Mode::Distributed`: each module's index, by module (`None` for a module without one,
    /// or whose object the backend cache holds; `Mode::IndexOnly` writes them as they come).
    pub indexes: Vec<Option<Index>>,
    /// `Mode::Distributed` with a probe: what the backend cache said of each module, by module
    /// (`None`: not asked, for a module without a module hash).
    pub probed: Vec<Option<super::backend::Known>>,
    /// The parts of the run, for `--time-trace`.
    pub laps: crate::trace::Laps,
    /// LLVM's state, to be freed while the link goes on (`Release`); `None` for an index-only
    /// thin link, after which the process ends.
    pub state: Option<Release>,
}

/// The thin link's LLVM state after an in-process run (the combined index, every module's
/// symbol table: tens of MiB for OpenSSL), which nothing needs once the objects are out; the
/// objects themselves are kept (`Produced::objects` points into them).
pub struct Release {
    lto: *mut c_void,
    release: unsafe extern "C" fn(*mut c_void),
}

// SAFETY: the state is used by no other thread after the run; `dtld_lto_release` may run on
// any thread.
unsafe impl Send for Release {}

impl Release {
    /// Frees the state on a thread of its own, while the link goes on; dropping the returned
    /// `Removal` waits for it, which must happen before the process exits (LLVM's static
    /// destructors run at exit). Without a thread the state stays to the process exit.
    pub fn in_background(self) -> crate::staging::Removal {
        crate::staging::Removal::thread(std::thread::Builder::new().name("dtld-lto-free".into()).spawn(move || self.free()).ok())
    }

    /// Frees the state, then gives the freed memory back to the system (LLVM's threads
    /// allocated much of it in their own arenas, which keep it resident until trimmed).
    fn free(self) {
        // SAFETY: `lto` is the live handle of a finished run, released once (`self` is moved).
        unsafe { (self.release)(self.lto) };
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free memory of the allocator's arenas.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// What the library is asked to do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `--thinlto-index-only`: each module's index and import list in memory (`Index`); dtld
    /// writes them where lld does.
    IndexOnly,
    /// In-process ThinLTO: the backends in LLVM's thread pool, with LLVM's cache.
    Backends,
    /// DTLTO: each module's index and import list in memory (`Index`), for the backend jobs;
    /// dtld writes the files of the jobs its cache does not hold (the regular-LTO partition is
    /// compiled here).
    Distributed,
}

/// Why the library cannot do this link exactly as the `llvm-lto2` path would, if it cannot.
pub fn unsupported(req: &LtoRequest, names: &[String], mode: Mode) -> Option<String> {
    let o = req.opts;
    if mode == Mode::IndexOnly && req.modules.iter().any(|m| m.bitcode.ir.modules.iter().any(|im| !im.thin)) {
        return Some("a module is regular LTO".into());
    }
    if mode == Mode::Backends && o.save_temps {
        return Some("-save-temps".into());
    }
    if mode == Mode::Backends && (o.emit_index_files || o.emit_imports_files) {
        return Some("index files are asked for next to in-process backends".into());
    }
    if o.obj_path.is_some() {
        return Some("an LTO option the in-process library does not pass".into());
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(n) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Some(format!("two bitcode files are named {n}"));
    }
    None
}

/// The code generation options as `llvm-lto2` gets them on its command line (`thinlink.rs`),
/// for LLVM's option parser.
fn cl_args(req: &LtoRequest, cg: &CodegenSettings) -> Vec<CString> {
    let mut a = Vec::new();
    if !cg.relocatable {
        a.push(format!("--relocation-model={}", if cg.pic { "pic" } else { "static" }));
    }
    a.extend(["--function-sections".into(), "--data-sections".into(), "--addrsig".into()]);
    if let Some(c) = &cg.mcpu {
        a.push(format!("--mcpu={c}"));
    }
    if !cg.mattrs.is_empty() {
        a.push(format!("--mattr={}", cg.mattrs.join(",")));
    }
    for t in &req.opts.tuning {
        if t.knob.library_setting(&t.value).is_none() {
            a.extend(t.knob.lto2_args(&t.value));
        }
    }
    a.extend(req.opts.mllvm.iter().cloned());
    a.into_iter().filter_map(|s| CString::new(s).ok()).collect()
}

/// The `lto::Config` settings lld makes from its options that LLVM's option parser does not
/// reach (`apply_setting` in `dtld_lto.cpp`).
fn settings(o: &super::options::LtoOptions) -> Vec<CString> {
    let mut s: Vec<String> = o.tuning.iter().filter_map(|t| t.knob.library_setting(&t.value)).collect();
    if let Some(p) = &o.sample_profile {
        s.push(format!("sample-profile={p}"));
    }
    if o.no_pgo_warn_mismatch {
        s.push("no-pgo-warn-mismatch=".into());
    }
    s.iter().map(|a| cstr(a)).collect()
}

fn cstr(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

/// Why a module could not be parsed for the library.
enum Parse {
    /// LLVM's symbol table is not the one dtld resolved (another path must do the link).
    Differs(String),
    /// LLVM cannot read the module.
    Failed(String),
}

/// Whether LLVM rebuilds `file`'s symbol table rather than reading it: a table of another
/// producer than the library's LLVM (`version`, `LLVM_VERSION_STRING`; rustc's bitcode says `22.1.2-rust-1.95.0-stable`),
/// none at all, or any table when `LLVM_OVERRIDE_PRODUCER` changes what LLVM expects. The names
/// of a rebuilt table live in LLVM's `InputFile`, which `LTO::add` frees; LLVM's resolutions
/// would then be keyed by freed names (hidden symbols shared between two of rustc's codegen
/// units came out internalized: issue 35), so the library keeps copies of them.
fn symtab_rebuilt(file: &super::bitcode::BitcodeFile, version: &str) -> bool {
    std::env::var_os("LLVM_OVERRIDE_PRODUCER").is_some() || file.ir.producer != version.as_bytes()
}

/// Parses module `m` under its module ID `name` (which must outlive the LTO state) and checks
/// that LLVM lists the symbols dtld resolved, in dtld's order.
/// Parses module `m` under the module ID `id` (`name` in messages; `ids` says how to turn IDs
/// in LLVM's words back into names).
fn parse<'s>(shim: &'s Shim, m: &super::bitcode::LtoModule, id: &str, name: &str, ids: &ModuleIds) -> std::result::Result<Input<'s>, Parse> {
    let data = m.bitcode.input.data;
    let mut err = std::ptr::null_mut();
    // SAFETY: `data` and `id` outlive the call and the InputFile: dtld's mapped inputs live
    // until exit, and the caller keeps the IDs for the LTO state's lifetime.
    let ptr = unsafe { (shim.api.parse)(data.as_ptr() as *const c_char, data.len(), id.as_ptr() as *const c_char, id.len(), &mut err) };
    if ptr.is_null() {
        return Err(Parse::Failed(format!("{name}: {}", ids.unmask(&shim.take_error(err)))));
    }
    let input = Input { shim, ptr };
    // SAFETY: a valid parsed input.
    let n = unsafe { (shim.api.symbol_count)(ptr) };
    if n != m.flags.len() {
        return Err(Parse::Differs(format!("{name}: LLVM lists {n} symbols, dtld {}", m.flags.len())));
    }
    for k in 0..n {
        let mut len = 0usize;
        // SAFETY: `k` < the symbol count; the name lives as long as the input.
        let p = unsafe { (shim.api.symbol_name)(ptr, k, &mut len) };
        // SAFETY: `p` holds `len` bytes.
        let sym = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
        if sym != m.bitcode.sym(k).name {
            return Err(Parse::Differs(format!(
                "{name}: symbol {k} is {} for LLVM, {} for dtld",
                String::from_utf8_lossy(sym),
                String::from_utf8_lossy(m.bitcode.sym(k).name)
            )));
        }
    }
    Ok(input)
}

/// The module IDs LLVM knows the modules by. For in-process backends they need not be names
/// of files (nothing reads a module by its ID, LLVM's cache keys and the objects do not
/// contain them), and short ones are cheaper: the thin link and the cache keys look module IDs
/// up in string maps millions of times (11.8 million lookups for an OpenSSL relink, each
/// hashing and comparing the whole ID). `\x01<n>\x01` (at most 16 bytes, XXH3's shortest case)
/// instead of lld's `./libcrypto.a(libcrypto-lib-cms_env.o at 2083662)`: 5% fewer instructions
/// in the whole relink (callgrind). The number is the name's rank, zero-padded to one width,
/// so the IDs sort as the names do: a backend imports from its source modules in the sorted
/// order of their IDs, and the first module a declaration is imported from decides its
/// attributes (`dso_local` of an `extern_weak` function from a `-fno-pic` module), so another
/// order is other code than lld's. LLVM's messages get the names back (`unmask`). Where LLVM
/// may print a module ID itself (`-mllvm` options, the pass manager's debug output) or write
/// one into a file (remarks and the other `Knob`s), and for an index-only link's files, the IDs
/// are the names; DTLTO's shards get theirs back (`shardpaths.rs`).
pub struct ModuleIds {
    pub ids: &'static [String],
    /// The names by rank (the number inside a short ID).
    by_rank: Vec<&'static str>,
    short: bool,
}

impl ModuleIds {
    /// `sorted`: the numbers rank the names (in-process backends, which import in the IDs'
    /// order); otherwise they are the command-line order (DTLTO: the backends see the paths
    /// again, and the thin link's shards then do not depend on the directory the names are
    /// relative to, which a remote cache keyed by content needs).
    pub fn new(names: &'static [String], short: bool, sorted: bool) -> ModuleIds {
        let mut by_rank: Vec<&'static str> = names.iter().map(String::as_str).collect();
        if sorted {
            by_rank.sort_unstable();
        }
        if !short {
            return ModuleIds { ids: names, by_rank, short };
        }
        if !sorted {
            let ids = (0..names.len()).map(|i| format!("\u{1}{i}\u{1}")).collect::<Vec<_>>();
            return ModuleIds { ids: crate::util::keep::slice(ids), by_rank, short };
        }
        let width = names.len().saturating_sub(1).to_string().len();
        let ids = names
            .iter()
            .map(|n| {
                // Equal names share a rank (LLVM refuses two modules of one ID anyway).
                let rank = by_rank.partition_point(|m| *m < n.as_str());
                format!("\u{1}{rank:0width$}\u{1}")
            })
            .collect::<Vec<_>>();
        ModuleIds { ids: crate::util::keep::slice(ids), by_rank, short }
    }

    /// `text` with every short module ID replaced by the module's name.
    pub fn unmask(&self, text: &str) -> String {
        if !self.short || !text.contains('\u{1}') {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('\u{1}') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let name =
                (digits > 0 && after[digits..].starts_with('\u{1}')).then(|| after[..digits].parse::<usize>().ok()).flatten().and_then(|i| self.by_rank.get(i));
            match name {
                Some(n) => {
                    out.push_str(n);
                    rest = &after[digits + 1..];
                }
                None => {
                    out.push('\u{1}');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// Runs the thin link of `req` in this process, its modules named `names` (module IDs; files
/// are written next to them, relative to the current directory): `mode` says what follows it.
/// Objects come back (the regular-LTO partition in every mode; the backends' through LLVM's
/// ThinLTO cache when the link has a cache directory). `Ok(Err(why))`: the library cannot do
/// it (its symbol table differs from dtld's); nothing was written.
pub fn run(
    shim: &Shim,
    req: &LtoRequest,
    cg: &CodegenSettings,
    names: &[String],
    mode: Mode,
    probe: Option<Probe>,
    version: &str,
) -> Result<std::result::Result<Produced, String>> {
    let opts = req.opts;
    let index = mode != Mode::Backends;
    // LLVM keeps the module IDs by reference (in the LTO state, which outlives this call).
    let names: &'static [String] = crate::util::keep::slice(names.to_vec());
    // Short IDs for in-process backends and for DTLTO (whose shards get the paths back,
    // `shardpaths.rs`); index files the user keeps (index-only links, -save-temps,
    // --thinlto-emit-index-files) are LLVM's bytes exactly.
    let keeps_files = opts.save_temps || opts.emit_index_files || opts.emit_imports_files;
    let short = match mode {
        Mode::IndexOnly => false,
        Mode::Backends => true,
        Mode::Distributed => !keeps_files,
    };
    let ids = ModuleIds::new(names, short && opts.mllvm.is_empty() && opts.tuning.is_empty() && !opts.debug_pass_manager, mode == Mode::Backends);
    let fail = |m: String| Error::new(format!("thin link (LLVM {version}): {m}"));
    let mut laps = crate::trace::Laps::default();
    let args = cl_args(req, cg);
    let arg_ptrs: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    let mut settings = settings(opts);
    if cg.relocatable {
        // lld's `RelocModel = std::nullopt` for `-r`: each module keeps its own.
        settings.push(cstr("relocation-model-from-module="));
    }
    let producer = shim.llvm_version();
    if req.modules.iter().any(|m| symtab_rebuilt(m.bitcode, &producer)) {
        settings.push(cstr("keep-symbol-names"));
    }
    if mode == Mode::Distributed && opts.save_temps {
        // lld's `-save-temps` under DTLTO: LLVM's files of the thin link (`<out>.resolution.txt`,
        // the regular-LTO task's bitcode, `<out>.index.bc`, `<out>.index.dot`).
        settings.push(cstr(&format!("save-temps={}.", req.output.display())));
    }
    let setting_ptrs: Vec<*const c_char> = settings.iter().map(|a| a.as_ptr()).collect();
    // The sink lives until the process exits: LLVM's state (which holds the callbacks'
    // context) is not torn down after an index-only link.
    let files = (mode == Mode::IndexOnly).then(|| {
        let (old, new, _) = opts.prefix_replace.clone().unwrap_or_default();
        IndexFiles { old, new, imports: opts.emit_imports_files }
    });
    let probe = probe.filter(|_| mode == Mode::Distributed);
    let probing = probe.is_some();
    let sink: &'static Sink = crate::util::keep::value(Sink { files, probe, ..Default::default() });
    let ctx = sink as *const Sink as *mut c_void;
    let cache = opts.cache_dir.as_ref().filter(|_| mode == Mode::Backends).map(|d| cstr(&crate::util::path::abs(d).to_string_lossy()));
    let config = Config {
        opt_level: opts.opt_level,
        cg_opt_level: cg.cg_opt_level.map_or(-1, |l| l as c_int),
        threads: cg.threads.max(1) as c_uint,
        debug_pass_manager: opts.debug_pass_manager as c_uint,
        cl_args: arg_ptrs.as_ptr(),
        cl_argc: arg_ptrs.len(),
        index_only: index as c_uint,
        cache_dir: cache.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        index_sink: index.then_some(on_index as IndexFn),
        index_ctx: ctx,
        settings: setting_ptrs.as_ptr(),
        settingc: setting_ptrs.len(),
        probe: probing.then_some(on_probe as ProbeFn),
        sha1: Some(on_sha1 as Sha1Fn),
    };
    let mut err = std::ptr::null_mut();
    // SAFETY: `config` and everything it points to live across the call (the library copies
    // what it keeps); `on_diag` with `ctx` stays valid for the library's lifetime.
    let lto = unsafe { (shim.api.create)(&config, on_diag, ctx, &mut err) };
    if lto.is_null() {
        return Err(fail(shim.take_error(err)));
    }
    let report = |first: Option<String>| -> Error {
        let mut msgs: Vec<String> = first.into_iter().map(|m| ids.unmask(&m)).collect();
        for (sev, m) in sink.diags.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            if sev == 0 {
                msgs.push(ids.unmask(&m));
            } else {
                print_diag(req.diag, sev, &ids.unmask(&m));
            }
        }
        Error::many(msgs.into_iter().map(|m| format!("thin link (LLVM {version}): {m}")).collect())
    };
    // One module after the other, parsed and added at once, as lld does: each parsed input is
    // freed by the add, and the memory it held serves the next (parsed on other threads, the
    // inputs' memory stayed in those threads' arenas while the combined index grew in the main
    // one: 4 MiB more at the peak of OpenSSL's thin link, for 3 ms saved).
    for ((m, name), id) in req.modules.iter().zip(names).zip(ids.ids) {
        let mut input = match parse(shim, m, id, name, &ids) {
            Ok(input) => input,
            Err(Parse::Differs(why)) => return Ok(Err(why)),
            Err(Parse::Failed(e)) => return Err(fail(e)),
        };
        // `Res` is the library's resolution byte (`DTLD_RES_*`).
        let res: Vec<u8> = m.flags.iter().map(|f| f.0).collect();
        let ptr = std::mem::replace(&mut input.ptr, std::ptr::null_mut());
        let mut err = std::ptr::null_mut();
        // SAFETY: `lto` is live; `ptr` is a parsed input, consumed by the call; `res` holds
        // one byte per symbol.
        if unsafe { (shim.api.add)(lto, ptr, res.as_ptr(), res.len(), &mut err) } != 0 {
            return Err(report(Some(format!("{name}: {}", shim.take_error(err)))));
        }
    }
    laps.lap("Parse and add modules to LTO");
    let mut err = std::ptr::null_mut();
    // SAFETY: `lto` is live; `on_object` and `ctx` as for `on_diag`.
    let status = unsafe { (shim.api.run)(lto, on_object, ctx, &mut err) };
    if status != 0 {
        return Err(report((!err.is_null()).then(|| shim.take_error(err))));
    }
    for (sev, m) in sink.diags.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
        print_diag(req.diag, sev, &ids.unmask(&m));
    }
    // The LTO state (the combined index, every module's symbol table) is left to the process
    // exit after an index-only thin link (tearing it down took LLVMgold 19 ms on OpenSSL);
    // otherwise the caller frees it on a thread of its own while the link goes on
    // (`Produced::state`), or the final link's memory comes on top of it.
    let mut objects = std::mem::take(&mut *sink.objects.lock().unwrap_or_else(|p| p.into_inner()));
    objects.sort_by_key(|o| o.0);
    let position: std::collections::HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let at = |module: &str| position.get(module).copied().unwrap_or(usize::MAX);
    let produced_indexes = std::mem::take(&mut *sink.indexes.lock().unwrap_or_else(|p| p.into_inner()));
    let indexes = module_indexes(produced_indexes, &ids, names.len(), &at).map_err(fail)?;
    let mut probed: Vec<Option<super::backend::Known>> = (0..names.len()).map(|_| None).collect();
    for (module, known) in std::mem::take(&mut *sink.probed.lock().unwrap_or_else(|p| p.into_inner())) {
        let module = ids.unmask(&module);
        let Some(slot) = probed.get_mut(at(&module)) else {
            return Err(fail(format!("internal error: a cache key for {module}, which is no module of the link")));
        };
        *slot = Some(known);
    }
    // The first write error in module order.
    let mut errors = std::mem::take(&mut *sink.write_errors.lock().unwrap_or_else(|p| p.into_inner()));
    errors.sort_by_key(|(module, _)| at(module));
    if let Some((_, e)) = errors.into_iter().next() {
        return Err(e);
    }
    laps.lap(if index { "Thin link and index files" } else { "Thin link and backends" });
    let state = (mode != Mode::IndexOnly).then_some(Release { lto, release: shim.api.release });
    Ok(Ok(Produced { objects, indexes, probed, laps, state }))
}

/// The index files the thin link produced (DTLTO's shards, index-only links), one per module
/// in module order (`at`: a module's position), the short module IDs turned back into paths.
fn module_indexes(mut produced_indexes: Vec<Index>, ids: &ModuleIds, n: usize, at: &dyn Fn(&str) -> usize) -> std::result::Result<Vec<Option<Index>>, String> {
    let mut indexes: Vec<Option<Index>> = (0..n).map(|_| None).collect();
    if ids.short {
        // The shards name their modules by path again, as the backends read them.
        use rayon::prelude::*;
        produced_indexes
            .par_iter_mut()
            .map(|ix| {
                ix.module = ids.unmask(&ix.module);
                for i in &mut ix.imports {
                    *i = ids.unmask(i);
                }
                let rename = |p: &[u8]| -> Option<Vec<u8>> { p.contains(&1).then(|| ids.unmask(&String::from_utf8_lossy(p)).into_bytes()) };
                ix.shard = dtld_bitcode::shardpaths::rename_modules(&ix.shard, &rename).map_err(|e| format!("{}: {e}", ix.module))?;
                Ok(())
            })
            .collect::<std::result::Result<(), String>>()
            .map_err(|e| format!("internal error: {e}"))?;
    }
    for ix in produced_indexes {
        let Some(slot) = indexes.get_mut(at(&ix.module)) else {
            return Err(format!("internal error: an index for {}, which is no module of the link", ix.module));
        };
        *slot = Some(ix);
    }
    Ok(indexes)
}

/// LLVM's warning or remark as lld prints it (`diagnostics.rs`'s words); a warning is lld's
/// `warn`, so `--fatal-warnings` makes it an error and `-w`/`--no-warnings` silences it.
fn print_diag(diag: &crate::diag::Diag, severity: c_int, msg: &str) {
    match severity {
        2 => diag.log(&format!("remark: {msg}")),
        3 => diag.log(&format!("note: {msg}")),
        _ => diag.warn(msg),
    }
}

/// Writes one module's index (and, when asked, imports: `imports` is the file's text) file
/// where lld writes it: next to the module, under `--thinlto-prefix-replace`'s new prefix. Called
/// by the in-process index-only thin link for each module as LLVM produces it. A file that already
/// holds exactly those bytes (the same link run again, or a module whose imports did not change)
/// is not written again, only given a new modification time (build systems see it as written):
/// LLVM truncated and rewrote each, and ext4 flushes a file truncated and written again when it is
/// closed, 60-70 ms of OpenSSL's 650 ms thin link.
pub(crate) fn write_index(files: &IndexFiles, module: &str, shard: &[u8], imports: &[u8]) -> Result<()> {
    let dest = super::naming::prefix_replaced(module, &files.old, &files.new);
    super::files::write_file_if_changed(Path::new(&format!("{dest}.thinlto.bc")), shard)?;
    if files.imports {
        super::files::write_file_if_changed(Path::new(&format!("{dest}.imports")), imports)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_module_ids_unmask() {
        let names: &'static [String] = crate::util::keep::slice(vec!["b.o".to_string(), "./a.a(x.o at 8)".to_string()]);
        let ids = super::ModuleIds::new(names, true, true);
        // Ranked as the names sort, so the IDs sort the same way.
        assert_eq!(ids.ids, ["\u{1}1\u{1}", "\u{1}0\u{1}"]);
        assert!(ids.ids.iter().all(|i| i.len() <= 16));
        let text = format!("conflicting values in '{}' and '{}'", ids.ids[1], ids.ids[0]);
        assert_eq!(ids.unmask(&text), "conflicting values in './a.a(x.o at 8)' and 'b.o'");
        let many: &'static [String] = crate::util::keep::slice((0..12).rev().map(|i| format!("m{i:02}.o")).collect::<Vec<_>>());
        let wide = super::ModuleIds::new(many, true, true);
        assert_eq!(wide.ids[0], "\u{1}11\u{1}");
        assert_eq!(wide.ids[11], "\u{1}00\u{1}");
        let mut sorted = wide.ids.to_vec();
        sorted.sort();
        assert_eq!(sorted.iter().map(|i| wide.unmask(i)).collect::<Vec<_>>(), many.iter().rev().cloned().collect::<Vec<_>>());
        // Not an ID: left as it is.
        assert_eq!(ids.unmask("a\u{1}7\u{1}b \u{1}x\u{1} \u{1}"), "a\u{1}7\u{1}b \u{1}x\u{1} \u{1}");
        let same = super::ModuleIds::new(names, false, true);
        let ordered = super::ModuleIds::new(names, true, false);
        assert_eq!(ordered.ids, ["\u{1}0\u{1}", "\u{1}1\u{1}"]);
        assert_eq!(ordered.unmask(&ordered.ids[1]), "./a.a(x.o at 8)");
        assert_eq!(same.ids, names);
        assert_eq!(same.unmask(&text), text);
    }

    #[test]
    fn resolution_bits_are_the_librarys() {
        // dtld_lto.cpp: DTLD_RES_PREVAILING 1, FINAL_IN_LINKAGE_UNIT 2, VISIBLE_TO_REGULAR_OBJ 4,
        // LINKER_REDEFINED 8.
        use super::super::bitcode::Res;
        assert_eq!((Res::PREVAILING, Res::FINAL_IN_UNIT, Res::VISIBLE_TO_REGULAR, Res::LINKER_REDEFINED), (1, 2, 4, 8));
        assert_eq!(Res(0).as_str(), "");
        assert_eq!(Res(7).as_str(), "plx");
        assert_eq!(Res(8).as_str(), "r");
        assert_eq!(Res(5).as_str(), "px");
        assert_eq!(Res(15).as_str(), "plxr");
    }
}

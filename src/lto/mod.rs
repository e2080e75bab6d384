//! Link-time optimization: bitcode inputs, the thin link with the user's LLVM, and backends.
//!
//! dtld resolves bitcode symbols itself (from the irsymtab, `irsymtab.rs`, in `resolve.rs`);
//! the user's LLVM only performs the summary analysis (`thinlink.rs`, `llvm-lto2 run`) and code
//! generation (`backend.rs`, `clang -fthinlto-index=`). This stage runs between resolution and
//! layout: it takes pass 1's bindings, computes lld's resolutions (`elf/lto.rs` for ELF), and returns
//! native objects that join the link in pass 2 — or, with `--thinlto-index-only`, writes the
//! index and imports files a distributed build needs and stops the link.

pub mod backend;
pub mod diagnostics;
pub mod distributed;
pub mod dtlto;
pub mod emptyobj;
pub mod goldhost;
pub mod goldindex;
pub mod inproc;
pub mod irsymtab;
pub mod linkcache;
pub mod llvm;
pub mod llvm_symtab;
pub mod options;
pub mod plugin_api;
pub mod plugin_host;
pub mod skipindex;
pub mod temps;
pub mod thinlink;

// LLVM's bitstream and the summary shards' module tables: a crate of their own (the REAPI
// distributor renames shards too), used here as parts of this stage.
pub use dtld_bitcode::{bitstream, shardpaths};

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::{FileKind, InputFile};
use irsymtab::{IrFile, IrSymbol};
use options::LtoOptions;
use thinlink::{CodegenSettings, Module};

/// A bitcode input: its irsymtab, and the symbols LTO wants a resolution for, in LTO's order.
/// Format-neutral: the ELF and the COFF resolvers both keep their bitcode inputs as these.
pub struct BitcodeFile {
    pub input: &'static InputFile,
    pub ir: IrFile<'static>,
    /// Indices into `ir.symbols` of the symbols `lto::InputFile::symbols()` lists.
    pub syms: Vec<u32>,
}

impl BitcodeFile {
    /// Reads `input`'s symbols; with `llvm` (the link's LTO options, which say where the
    /// user's LLVM is), a file without a usable irsymtab gets its table from that LLVM
    /// (`llvm_symtab.rs`), as LLVM itself rebuilds one; without, that is an error.
    pub fn parse(input: &'static InputFile, llvm: Option<&LtoOptions>) -> Result<BitcodeFile> {
        let ir = match (irsymtab::parse(input.data), llvm) {
            (Err(e), Some(o)) if e.starts_with(irsymtab::NO_IRSYMTAB) => llvm_symtab::rebuild(input, o, &e),
            (r, _) => r,
        };
        let ir = ir.map_err(|e| Error::new(format!("{}: {e}", input.name)))?;
        // `lto_symbols()` order, as indices (the table's size bounds them well below 2^32).
        let syms = ir.modules.iter().flat_map(|m| m.begin..m.end).filter(|&i| ir.symbols.get(i as usize).is_some_and(|s| s.is_lto_symbol())).collect();
        Ok(BitcodeFile { input, ir, syms })
    }
    /// The machine of a module for another machine than x86-64, by its triple's arch: lld-link's
    /// name for it ("x86", "arm", "arm64", "arm64ec"), or "" for an arch lld-link does not map
    /// to a machine type; `None` for x86-64 or no triple. dtld links x86-64 alone (its thin-link
    /// library registers only LLVM's X86 target), so the resolvers refuse such a module as lld
    /// refuses it, rather than LLVM failing on it ("No available targets").
    pub fn foreign_machine(&self) -> Option<&'static str> {
        let arch = self.ir.target_triple.split(|&b| b == b'-').next().unwrap_or_default();
        Some(match arch {
            b"" | b"x86_64" | b"amd64" | b"x86_64h" => return None,
            b"i386" | b"i486" | b"i586" | b"i686" | b"x86" => "x86",
            b"aarch64" | b"arm64" => "arm64",
            b"arm64ec" => "arm64ec",
            a if a.starts_with(b"arm") || a.starts_with(b"thumb") => "arm",
            _ => "",
        })
    }

    pub fn sym(&self, k: usize) -> &IrSymbol<'static> {
        &self.ir.symbols[self.syms[k] as usize]
    }
}

/// One bitcode file that joined the link, with the resolution of each of its LTO symbols
/// (`BitcodeFile::syms` order).
pub struct LtoModule<'a> {
    pub bitcode: &'a BitcodeFile,
    pub flags: Vec<Res>,
}

/// One symbol's LTO resolution: `llvm-lto2`'s `-r` letters `p` (prevailing), `l` (final
/// definition in the linkage unit), `x` (visible to regular objects), `r` (linker-redefined), as
/// bits (the in-process library's resolution byte); it reads as its letters, in that order. A
/// byte instead of a string per symbol: OpenSSL's thin link has 76,000 of them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Res(pub u8);

impl Res {
    pub const PREVAILING: u8 = 1;
    pub const FINAL_IN_UNIT: u8 = 2;
    pub const VISIBLE_TO_REGULAR: u8 = 4;
    pub const LINKER_REDEFINED: u8 = 8;

    /// The letters, e.g. `plx`.
    pub fn as_str(&self) -> &'static str {
        const LETTERS: [&str; 16] = ["", "p", "l", "pl", "x", "px", "lx", "plx", "r", "pr", "lr", "plr", "xr", "pxr", "lxr", "plxr"];
        LETTERS[(self.0 & 15) as usize]
    }
}

impl std::ops::Deref for Res {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Res {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything LTO needs from a link, whatever the object format: the format's driver and
/// resolver fill this in (ELF: `run`; COFF: `coff`), and `run_request` does the rest.
pub struct LtoRequest<'a> {
    pub output: &'a Path,
    /// The object format the link produces (COFF backends always generate position-independent
    /// code, but their remote command line never says `-fpic`: lld 22's DTLTO rule).
    pub format: irsymtab::ObjectFormat,
    /// Position-independent code for the backends (ELF `-pie`/`-shared`; never for COFF).
    pub pic: bool,
    /// `-r`: the backends keep each module's own relocation model (lld's `RelocModel =
    /// std::nullopt`), and the objects join a relocatable output.
    pub relocatable: bool,
    pub verbose: bool,
    pub opts: &'a LtoOptions,
    /// Loaded bitcode files, in the order they joined the link.
    pub modules: Vec<LtoModule<'a>>,
    /// Bitcode inputs that stayed lazy (index-only mode writes skip indexes for them).
    pub lazy: Vec<&'a InputFile>,
    /// The thin link's library (dtld's in-process library, or LLVMgold.so for an index-only
    /// link), loading since the inputs were read (`preload`).
    pub preload: Option<&'a goldhost::Preload>,
    /// Where the LTO step's warnings go (`--fatal-warnings` applies).
    pub diag: &'a crate::diag::Diag,
}

/// Whether `DTLD_THIN_LINK` chooses the thin link's way `how` (`llvm-lto2`: never LLVMgold nor
/// the in-process library; `gold`: LLVMgold in a fork of dtld; `helper`: LLVMgold in the exec'd
/// helper).
pub(crate) fn thin_link_forced(how: &str) -> bool {
    std::env::var_os("DTLD_THIN_LINK").is_some_and(|v| v == how)
}

/// For a link with bitcode: starts loading, on a thread of its own, the library its thin link
/// will most likely use (that of the first LLVM installation `llvm.rs` would look at), while
/// the inputs are resolved: dtld's in-process library (`inproc.rs`; libLLVM's load, its
/// relocations and static constructors, is 10-12 ms, which lld pays before `main`), or, for
/// an index-only link without it, the LLVMgold.so that a fork will host (`goldindex.rs`).
/// (Stop 28 measured the in-process library's early load slowing the resolution by more than
/// the load took. Since glibc's thread arenas no longer grow by 1,182 `mprotect` calls
/// (`heap.rs`), each of which stalls the loader's page faults and the parser's alike, it pays:
/// Lua's relink after a change 40 -> 34 ms, OpenSSL's 553 -> 536 ms.)
pub fn preload(o: &LtoOptions) -> Option<goldhost::Preload> {
    if thin_link_forced("llvm-lto2") || thin_link_forced("helper") {
        return None;
    }
    let dir = llvm::first_dir(o)?;
    if let Some(shim) = inproc::find(&dir) {
        return goldhost::Preload::start(shim);
    }
    if !o.index_only {
        return None;
    }
    let gold = llvm::first_gold(o)?;
    goldhost::Preload::start(gold)
}

/// lld's libcall handling before LTO: the runtime library functions code generation may call
/// for `triple`, from the in-process library of the LLVM the link will use (`None` without
/// one, or when another LLVM was loaded early: one process hosts one libLLVM).
pub fn runtime_libcalls(o: &LtoOptions, producers: &[(String, String)], triple: &str, preload: Option<&goldhost::Preload>) -> Option<Vec<String>> {
    if thin_link_forced("llvm-lto2") || thin_link_forced("helper") {
        return None;
    }
    let llvm = llvm::discover(o, producers).ok()?;
    let path = inproc::find(&llvm.dir)?;
    if preload.is_some_and(|p| !p.ready_for(&path)) {
        return None;
    }
    Some(inproc::Shim::load(&path).ok()?.runtime_libcalls(triple))
}

/// The in-process library for the link's LLVM, loaded, when it can do this link; otherwise why
/// not, for `--verbose` (`None`: there is no library).
fn shim_for(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    names: &[String],
    mode: inproc::Mode,
    trace: &mut crate::trace::Trace,
) -> Option<std::result::Result<inproc::Shim, String>> {
    let path = inproc::find(&llvm.dir)?;
    if let Some(why) = inproc::unsupported(req, names, mode) {
        return Some(Err(why));
    }
    // libLLVM's load (10-12 ms: its relocations and static constructors), which lld pays
    // before `main`; usually started while the inputs were resolved (`preload`).
    let t = std::time::Instant::now();
    if req.preload.is_some_and(|p| !p.ready_for(&path)) {
        // The early load guessed another LLVM installation (the bitcode's producer chose this
        // one): one process does not host two libLLVMs; the thin link runs out of process.
        return Some(Err(format!("{} is loaded already", req.preload.map_or_else(String::new, |p| p.path().display().to_string()))));
    }
    let shim = inproc::Shim::load(&path);
    trace.stage("Load LLVM", &path.display().to_string(), t);
    Some(shim)
}

/// `inproc::run` with its `--verbose` lines: the thin link in process, or why not (`None`:
/// nothing was written, the caller takes another path).
fn run_in_process(
    req: &LtoRequest,
    shim: &inproc::Shim,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    mode: inproc::Mode,
    probe: Option<inproc::Probe>,
) -> Result<Option<inproc::Produced>> {
    match inproc::run(shim, req, cg, names, mode, probe, &llvm.version)? {
        Ok(p) => {
            if req.verbose {
                req.diag.log(&format!("thinlto: thin link in process (LLVM {})", shim.llvm_version()));
            }
            Ok(Some(p))
        }
        Err(why) => {
            if req.verbose {
                req.diag.log(&format!("thinlto: thin link not in process: {why}"));
            }
            Ok(None)
        }
    }
}

/// What an LTO object was compiled from, which is what names it (`object_name`): the
/// regular-LTO partition, the ThinLTO backend of module `i` (in the request's order), or
/// backend task `k` when the objects do not match the modules one to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectOf {
    Regular,
    Module(usize),
    Task(usize),
}

impl ObjectOf {
    /// One number for the link cache's entries.
    pub fn code(self) -> u64 {
        match self {
            ObjectOf::Regular => 0,
            ObjectOf::Module(i) => 1 + 2 * i as u64,
            ObjectOf::Task(k) => 2 + 2 * k as u64,
        }
    }

    pub fn from_code(c: u64) -> Option<ObjectOf> {
        if c == 0 {
            return Some(ObjectOf::Regular);
        }
        let n = usize::try_from((c - 1) / 2).ok()?;
        Some(if c % 2 == 1 { ObjectOf::Module(n) } else { ObjectOf::Task(n) })
    }
}

/// The name of an LTO object of a link writing `out`, given each module's ID (`ids`).
fn object_name(out: &str, of: ObjectOf, ids: &[String], format: irsymtab::ObjectFormat) -> String {
    let ext = if format == irsymtab::ObjectFormat::Coff { "obj" } else { "o" };
    match of {
        ObjectOf::Regular => format!("{out}.lto.{ext}"),
        ObjectOf::Module(i) => lto_object_name(out, &ids[i], ext),
        ObjectOf::Task(k) => format!("{out}.lto.{}.{ext}", k + 1),
    }
}

/// What LTO hands back to the link.
pub struct LtoOutput {
    /// Native objects, in lld's order: the regular-LTO partition, then one per ThinLTO module.
    pub objects: Vec<InputFile>,
    /// `--thinlto-index-only`: the index files are written; the link stops here.
    pub stop: bool,
    /// The staging directory's removal, under way while the link goes on; kept until the
    /// output is written (dropping it waits for the removal).
    pub cleanup: Option<crate::staging::Removal>,
}

/// lld's module name, with `--thinlto-object-suffix-replace=` applied (lld applies it in
/// index-only mode, to the file or member name before the archive decoration). An archive
/// member is `lib.a(m.o at 8)` for ELF and `lib.libm.obj8` for COFF (lld-link's `BitcodeFile`).
fn module_name(input: &InputFile, o: Option<&LtoOptions>, format: irsymtab::ObjectFormat) -> String {
    let replace = |s: &str| match o {
        Some(o) if o.index_only => suffix_replaced(s, o),
        _ => s.to_string(),
    };
    match &input.archive {
        Some((archive, member)) => {
            let member = replace(member);
            let file = Path::new(&member).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(member.clone());
            if format == irsymtab::ObjectFormat::Coff {
                format!("{archive}{file}{}", input.archive_offset)
            } else {
                format!("{archive}({file} at {})", input.archive_offset)
            }
        }
        None => replace(&input.name),
    }
}

/// A short content hash (of the module's XXH3-128 fingerprint), so that staged module paths are the same for
/// the same bitcode in every link (backend cache keys then do not depend on the output name or
/// directory).
fn content_tag(digest: &[u8]) -> String {
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Applies `--thinlto-object-suffix-replace=old;new` to a module name.
fn suffix_replaced(name: &str, o: &LtoOptions) -> String {
    match &o.object_suffix_replace {
        Some((old, new)) => match name.strip_suffix(old.as_str()) {
            Some(stem) => format!("{stem}{new}"),
            None => name.to_string(),
        },
        None => name.to_string(),
    }
}

/// Applies `--thinlto-prefix-replace=old;new` to a path (lld's `getThinLTOOutputFile`).
fn prefix_replaced(path: &str, old: &str, new: &str) -> String {
    match path.strip_prefix(old) {
        Some(rest) => format!("{new}{rest}"),
        None => path.to_string(),
    }
}

/// The file name a module gets in the staging tree: the last component of lld's name (so no
/// directory, absolute or not, enters a backend job), the member's for an archive member
/// (`lib.a(m.o at 8)` becomes `m.o`: the content tag in front of it keeps IDs apart), ending in
/// an extension clang compiles (`.o`/`.bc`). Short because the thin link and its cache keys
/// hash and compare module IDs millions of times (11.8 million string-map lookups for an
/// OpenSSL relink): `<tag>-libcrypto.a(libcrypto-lib-cms_env.o at 2083662).o` was 27 bytes
/// longer.
fn stage_name(name: &str) -> String {
    let member = name.strip_suffix(')').and_then(|n| n.rsplit_once('(')).map(|(_, m)| m.rsplit_once(" at ").map_or(m, |(m, _)| m));
    let n = thinlink::normalize(Path::new(member.unwrap_or(name)));
    let mut s = n.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    if s.is_empty() {
        s.push_str("module");
    }
    let ext_ok = Path::new(&s).extension().is_some_and(|e| e == "o" || e == "bc" || e == "obj");
    if !ext_ok {
        s.push_str(".o");
    }
    s
}

/// `p` relative to the current directory when it is inside it (so a job file written for an
/// absolute `-o` does not carry the build directory).
fn relative_to_cwd(p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() {
        if let Ok(cwd) = std::env::current_dir() {
            if let Ok(rel) = path.strip_prefix(&cwd) {
                if !rel.as_os_str().is_empty() {
                    return rel.to_string_lossy().into_owned();
                }
            }
        }
    }
    p.to_string()
}

fn create_dir(p: &Path) -> Result<()> {
    std::fs::create_dir_all(p).map_err(|e| Error::new(format!("cannot create directory {}: {}", p.display(), crate::error::io_error(&e))))
}

fn thread_count(o: &LtoOptions) -> usize {
    o.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1)
}

/// Runs LTO for a link of any format: thin link, backends (in process or through the
/// distributor) or the index-only files; returns the native objects for pass 2.
pub fn run_request(req: &LtoRequest, trace: &mut crate::trace::Trace) -> Result<LtoOutput> {
    let opts = req.opts;
    let producers: Vec<(String, String)> =
        req.modules.iter().map(|m| (m.bitcode.input.name.clone(), String::from_utf8_lossy(m.bitcode.ir.producer).into_owned())).collect();
    let llvm = llvm::discover(opts, &producers)?;
    let cg = codegen_settings(req);
    let names: Vec<String> = req.modules.iter().map(|m| module_name(m.bitcode.input, Some(opts), req.format)).collect();
    let warn = |m: &str| req.diag.warn(m);
    opts.report_unimplemented(&warn)?;
    if opts.index_only {
        index_only(req, &llvm, &cg, &names, |i, id| make_module(req, i, id), trace)?;
        return Ok(LtoOutput { objects: Vec::new(), stop: true, cleanup: None });
    }

    // In-process ThinLTO or DTLTO: stage under `<output>.dtld-lto/`, thin link, backends
    // (here or through the distributor), objects; or, with unchanged inputs and a cache
    // directory, the previous link's objects (`linkcache.rs`).
    let dtlto = opts.distributor.is_some();
    let in_process_lto2 = !dtlto && llvm.lto2.is_file();
    let out = req.output.to_string_lossy().into_owned();
    let t_digest = std::time::Instant::now();
    let inputs: Vec<&InputFile> = req.modules.iter().map(|m| m.bitcode.input).collect();
    let fingerprints = linkcache::fingerprints(&inputs);
    let common = backend_command(req, &llvm, &cg);
    let mode = match &opts.distributor {
        Some(d) => format!("dtlto {d} {:?}", opts.distributor_args),
        None if in_process_lto2 => "in-process llvm-lto2".to_string(),
        None => "local backends".to_string(),
    };
    // Read and hashed once, for the link cache's key and the backend cache's.
    let profiles = if opts.cache_dir.is_some() { profile_digests(opts) } else { Vec::new() };
    let parts = linkcache::KeyParts {
        profiles: &profiles,
        mode,
        backend_command: &common,
        tools: &llvm.identity,
        format: if req.format == irsymtab::ObjectFormat::Coff { "coff" } else { "elf" },
        pic: req.pic,
        opts,
        cg: &cg,
    };
    let link_cache = linkcache::LinkCache::new(req, &names, &fingerprints, &parts);
    // A hit's objects are named as this link names them: after the modules' IDs (DTLTO's carry
    // this process's id).
    let object_ids = if dtlto { distributed::object_ids(req, &names) } else { names.clone() };
    let name = |of: ObjectOf| object_name(&out, of, &object_ids, req.format);
    if let Some(hit) = link_cache.as_ref().and_then(|c| c.lookup(&name)) {
        // What the link that stored the entry said of the options.
        let way = if !dtlto && inproc::find(&llvm.dir).is_some() && inproc::unsupported(req, &names, inproc::Mode::Backends).is_none() {
            options::Way::Library
        } else if in_process_lto2 {
            options::Way::Lto2
        } else {
            options::Way::Clang
        };
        opts.report_knobs(way, &warn)?;
        trace.stage("Link cache", &format!("hit: {} modules, thin link skipped", hit.modules), t_digest);
        if let Some(d) = &opts.cache_dir {
            backend::Cache::new(d.clone(), String::new()).prune(opts.cache_policy.as_deref(), None)?;
        }
        if req.verbose {
            req.diag.log(&format!("thinlto: {} modules, 0 compiled, {} cached", hit.modules, hit.modules));
            req.diag.log("thinlto: inputs and options unchanged since a previous link: its result is reused, the thin link skipped");
        }
        return Ok(LtoOutput { objects: hit.objects, stop: false, cleanup: None });
    }
    if !dtlto {
        // In this process through the library built for this LLVM (`inproc.rs`), as lld: nothing
        // staged, the objects (cached or compiled) handed over in memory.
        match shim_for(req, &llvm, &names, inproc::Mode::Backends, trace) {
            Some(Ok(shim)) => {
                if let Some(InProcessObjects { objects, of, tasks: n, cache_files, state }) = in_process_shim(req, &shim, &llvm, &cg, &names, trace)? {
                    // The link-cache entry (references to LLVM's cache files) is written, and
                    // LLVM's state freed, while the link goes on (lld frees its LTO state before
                    // its final link; at OpenSSL's relink it kept dtld's peak memory above lld's).
                    let store = link_cache.map(|c| {
                        let stored: Vec<linkcache::Stored<'static>> = objects
                            .iter()
                            .zip(&of)
                            .map(|(o, &of)| linkcache::Stored { of, data: o.data, cache_file: cache_files.get(&(o.data.as_ptr() as usize)).cloned() })
                            .collect();
                        crate::staging::Removal::thread(
                            std::thread::Builder::new().name("dtld-link-cache".into()).spawn(move || c.store_parts(&stored, n)).ok(),
                        )
                    });
                    let cleanup = match (store, state) {
                        (Some(s), Some(f)) => Some(s.and(f.in_background())),
                        (s, f) => s.or(f.map(inproc::Release::in_background)),
                    };
                    return Ok(LtoOutput { objects, stop: false, cleanup });
                }
            }
            Some(Err(why)) if req.verbose => req.diag.log(&format!("thinlto: thin link not in process: {why}")),
            _ => {}
        }
    }
    // Committed to `llvm-lto2` or to clang backends: what they cannot pass on is said (or
    // refused) before anything is staged.
    opts.report_knobs(if in_process_lto2 { options::Way::Lto2 } else { options::Way::Clang }, &warn)?;
    let prepared = distributed::Prepared {
        llvm: &llvm,
        cg: &cg,
        names: &names,
        common: &common,
        digests: &fingerprints,
        profiles_salt: profiles_salt(&profiles),
        link_cache,
    };
    if dtlto {
        return distributed::run(req, prepared, trace);
    }
    run_local(req, prepared, in_process_lto2, trace)
}

/// Local backends: the thin link by llvm-lto2 (or in-process llvm-lto2, `in_process_lto2`) on
/// modules staged under `<output>.dtld-lto/` (content-named: the same bitcode gets the same path
/// in every link), clang for each backend.
fn run_local(req: &LtoRequest, p: distributed::Prepared, in_process_lto2: bool, trace: &mut crate::trace::Trace) -> Result<LtoOutput> {
    let (opts, llvm, cg, names, common, link_cache) = (req.opts, p.llvm, p.cg, p.names, p.common, p.link_cache);
    let out = req.output.to_string_lossy().into_owned();
    let digests = p.digests;
    let persistent = in_process_lto2.then_some(opts.cache_dir.as_ref()).flatten().filter(|_| !opts.save_temps && !crate::output::is_special_output(req.output));
    let (staging, _) = open_staging(req, &out, persistent)?;
    let base = staging.path().to_path_buf();
    let ids = module_ids(req, names, digests, "");
    if persistent.is_some() {
        // What a previous link of this output staged and that this one does not use goes;
        // the rest is reused (`thinlink::place`) or rewritten in place (`lto.<task>`).
        // A module staged by an earlier link under another rank (the set of modules changed)
        // is renamed to its new ID rather than staged again.
        let by_content: std::collections::HashMap<&[u8], &str> = ids.iter().filter_map(|i| Some((unranked(i.as_bytes())?, i.as_str()))).collect();
        staging.rename_entries(&|n: &std::ffi::CStr| {
            let id = by_content.get(unranked(n.to_bytes())?)?;
            std::ffi::CString::new(*id).ok()
        });
        let keep: std::collections::HashSet<&[u8]> = ids.iter().map(|i| i.as_bytes()).collect();
        staging.retain(&|n: &std::ffi::CStr| {
            let n = n.to_bytes();
            keep.contains(n) || n == b"thinlink.rsp" || thinlink::task_output(n).is_some()
        });
    }
    // Archive members are staged from a content-addressed store in the cache directory
    // (`.dtld/member-<XXH3-128>`, hard links: written once, not on every link).
    let store = |i: usize| opts.cache_dir.as_ref().map(|d| backend::own_dir(&crate::util::path::abs(d)).join(format!("member-{}", hex(&digests[i]))));
    let modules: Vec<Module> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let m = make_module(req, i, id.clone());
            let store = if m.source.is_none() { store(i) } else { None };
            Module { store, ..m }
        })
        .collect();
    if let Some(d) = opts.cache_dir.as_ref().filter(|_| modules.iter().any(|m| m.store.is_some())) {
        create_dir(&backend::own_dir(d))?;
    }
    if in_process_lto2 {
        // In-process ThinLTO, as lld: llvm-lto2 runs the thin link and the backends in its
        // thread pool, with LLVM's own ThinLTO cache.
        let ((objects, of), n) = in_process(req, llvm, cg, names, &ids, &modules, &base, trace)?;
        let cleanup = Some(staging.remove_in_background());
        if let Some(c) = &link_cache {
            c.store(&objects, &of, n);
        }
        return Ok(LtoOutput { objects, stop: false, cleanup });
    }
    let cache = opts
        .cache_dir
        .as_ref()
        .map(|d| backend::Cache::new(d.clone(), format!("{} {} {}{}", llvm.clang.display(), llvm.version, llvm.identity, p.profiles_salt)));
    let t_thin = std::time::Instant::now();
    let tl = thin_link(llvm, opts, cg, &base, &base, &modules, true)?;
    req.diag.forward(&tl.messages);
    staging.check()?;
    trace.stage("Thin link", &format!("{} modules, LLVM {}", modules.len(), llvm.version), t_thin);
    let (jobs, job_module) = backend_jobs(&tl, names, &ids);
    let t_backend = std::time::Instant::now();
    let (objs, stats) = backend::run_local(common, &jobs, &base, cg.threads, cache.as_ref())?;
    trace.stage("ThinLTO backends", &format!("{} jobs, {} compiled, {} cached", jobs.len(), stats.compiled, stats.cached), t_backend);
    if let Some(c) = &cache {
        c.prune(opts.cache_policy.as_deref(), Some((jobs.len() + 1, objs.iter().map(|o| o.len() as u64).sum())))?;
    }
    if req.verbose {
        req.diag.log(&format!("thinlto: {} modules, {} compiled, {} cached", jobs.len(), stats.compiled, stats.cached));
    }
    emit_index_files(opts, &tl, names, &ids, &base)?;
    let regular = tl.regular_object.is_some();
    let (objects, of) = native_objects(opts, &out, tl.regular_object, objs, names, &job_module, req.format)?;
    let removal = staging.remove_in_background();
    let cleanup = store_link_cache(link_cache, &objects, &of, regular, &stats.cache_files, jobs.len(), removal);
    Ok(LtoOutput { objects, stop: false, cleanup: Some(cleanup) })
}

/// The link-cache entry for `objects` (the regular-LTO object first when `regular`), written
/// on a thread of its own while the link goes on (as `removal` goes on); it names the
/// backend cache's files that hold the objects (`cache_files`, by ThinLTO object) rather than
/// copying them (25 MiB and 24 ms for OpenSSL).
fn store_link_cache(
    link_cache: Option<linkcache::LinkCache>,
    objects: &[InputFile],
    of: &[ObjectOf],
    regular: bool,
    cache_files: &[Option<String>],
    n: usize,
    removal: crate::staging::Removal,
) -> crate::staging::Removal {
    let Some(c) = link_cache else { return removal };
    let files = std::iter::repeat_n(None, regular as usize).chain(cache_files.iter().cloned().chain(std::iter::repeat(None)));
    let stored: Vec<linkcache::Stored<'static>> =
        objects.iter().zip(of).zip(files).map(|((o, &of), cache_file)| linkcache::Stored { of, data: o.data, cache_file }).collect();
    crate::staging::Removal::thread(std::thread::Builder::new().name("dtld-link-cache".into()).spawn(move || c.store_parts(&stored, n)).ok()).and(removal)
}

/// The SHA-1 of each profile the backends read (`LtoOptions::profiles`), `None` for one that
/// cannot be read: a new profile under the same name changes the objects, so the caches key on
/// the contents.
fn profile_digests(opts: &LtoOptions) -> Vec<Option<[u8; 20]>> {
    use sha1::Digest;
    opts.profiles().iter().map(|p| std::fs::read(p).ok().map(|d| sha1::Sha1::digest(&d).into())).collect()
}

/// The profiles' digests for the backend cache's keys: the key of a job otherwise covers the
/// command line, which names a profile but not what is in it (LLVM's own key, used when the
/// thin link runs in this process, reads the sample profile itself). A profile that cannot be
/// read adds a marker, and the backend reports it.
fn profiles_salt(profiles: &[Option<[u8; 20]>]) -> String {
    profiles
        .iter()
        .map(|d| match d {
            Some(d) => format!(" profile {}", d.iter().map(|b| format!("{b:02x}")).collect::<String>()),
            None => " profile unreadable".to_string(),
        })
        .collect()
}

/// The code generation settings of the link: the request's optimization levels, CPU and
/// threads; position-independent for `-pie`/`-shared` and always for COFF (lld/COFF/LTO.cpp:
/// the PIC relocation model on x86-64).
fn codegen_settings(req: &LtoRequest) -> CodegenSettings {
    let opts = req.opts;
    let coff = req.format == irsymtab::ObjectFormat::Coff;
    CodegenSettings {
        opt_level: opts.opt_level,
        cg_opt_level: opts.cg_opt_level,
        pic: req.pic || coff,
        relocatable: req.relocatable,
        mcpu: opts.mcpu.clone(),
        mattrs: opts.mattrs.clone(),
        threads: thread_count(opts),
    }
}

/// Module `i` of the request for the thin link under module ID `id`: its bytes, the file
/// it came from when it is a file of its own, and its symbols' resolutions.
fn make_module(req: &LtoRequest, i: usize, id: String) -> Module {
    let m = &req.modules[i];
    let b = m.bitcode;
    let input = b.input;
    let source = if (input.archive.is_none() || input.thin_member) && !input.fat_lto { Some(input.path.clone()) } else { None };
    let name = module_name(input, Some(req.opts), req.format);
    Module { id, name, data: input.data, source, resolutions: (0..b.syms.len()).map(|k| (b.sym(k).name, m.flags[k])).collect(), place: true, store: None }
}

/// The staging directory and its name as the backends see it: `<output>.dtld-lto` next to
/// the output (relative to the current directory when inside it), or a private directory
/// under the temporary directory when the output is a device (`-o /dev/null`). Created 0700
/// or refused (a planted symlink, someone else's directory), locked against another link of
/// the same output, emptied, and reached through its descriptor.
///
/// In-process ThinLTO with a cache directory (`persistent`) stages in
/// `<cache dir>/.dtld/stage-<hash of the output's path>` instead, kept between links of that
/// output: a relink reuses the staged modules and llvm-lto2 rewrites its objects in place, as
/// lld creates no file for them (on a loaded ext4, allocating and freeing 3,000 inodes per
/// link of OpenSSL took seconds). Nothing in it reaches a job or an output: module IDs are
/// relative to it, and LLVM's cache keys do not name modules.
fn open_staging(req: &LtoRequest, out: &str, persistent: Option<&PathBuf>) -> Result<(crate::staging::StagingDir, String)> {
    if let Some(cache) = persistent {
        use sha1::Digest as _;
        create_dir(cache)?;
        let key = sha1::Sha1::digest(crate::util::path::abs(req.output).as_os_str().as_encoded_bytes());
        create_dir(&backend::own_dir(cache))?;
        let dir = backend::own_dir(&crate::util::path::abs(cache)).join(format!("stage-{}", hex(&key[..8])));
        let staging = crate::staging::StagingDir::open_persistent(&dir)?;
        return Ok((staging, dir.to_string_lossy().into_owned()));
    }
    let special = crate::output::is_special_output(req.output);
    let stage_rel = if special {
        std::env::temp_dir().join(format!("dtld-lto-{}", std::process::id())).to_string_lossy().into_owned()
    } else {
        format!("{}.dtld-lto", relative_to_cwd(out))
    };
    let staging = crate::staging::StagingDir::open(Path::new(&stage_rel), req.opts.save_temps)?;
    Ok((staging, stage_rel))
}

/// Each module's ID in the staging tree: `<prefix><rank>-<content hash>-<file name>`, so the
/// same bitcode under the same names gets the same ID in every link; the same bytes under the
/// same name twice (a file named twice, or copies in two directories) get `-2`, `-3`... after
/// the hash. The rank (zero-padded) is the module name's place in sorted order, so the IDs sort
/// as lld's module names do: a backend imports from its source modules in that order, and the
/// first one a declaration comes from decides its attributes (see `inproc::ModuleIds`). All
/// in one directory: a directory per module was an inode more to allocate and free per module.
fn module_ids(req: &LtoRequest, names: &[String], digests: &[[u8; 16]], prefix: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let width = names.len().saturating_sub(1).to_string().len();
    req.modules
        .iter()
        .zip(names)
        .zip(digests)
        .map(|((_, n), digest)| {
            let tag = content_tag(digest);
            let file = stage_name(n);
            let rank = sorted.partition_point(|m| *m < n.as_str());
            let mut id = format!("{prefix}{rank:0width$}-{tag}-{file}");
            let mut k = 1;
            while !seen.insert(id.clone()) {
                k += 1;
                id = format!("{prefix}{rank:0width$}-{tag}-{k}-{file}");
            }
            id
        })
        .collect()
}

/// A staged module ID without its rank (`<hash>-<file>` of `<rank>-<hash>-<file>`).
fn unranked(id: &[u8]) -> Option<&[u8]> {
    let dash = id.iter().position(|&b| b == b'-')?;
    (dash > 0 && id[..dash].iter().all(u8::is_ascii_digit)).then(|| &id[dash + 1..])
}

/// One backend job per module the thin link wrote a shard for (its output
/// `<id>.native.o`), and for each job the index of its module.
fn backend_jobs(tl: &thinlink::ThinLinkOutput, names: &[String], ids: &[String]) -> (Vec<backend::Job>, Vec<usize>) {
    let mut jobs = Vec::new();
    let mut job_module = Vec::new();
    for (i, shard) in tl.shards.iter().enumerate() {
        if let Some(shard) = shard {
            jobs.push(backend::Job {
                display: names[i].clone(),
                module: ids[i].clone(),
                shard: shard.to_string_lossy().into_owned(),
                output: format!("{}.native.o", ids[i]),
                imports: tl.imports[i].clone(),
            });
            job_module.push(i);
        }
    }
    (jobs, job_module)
}

/// The compiler command line every backend job shares. With a distributor it is lld 22's
/// remote command line exactly (`-fpic` never for COFF); without `--thinlto-remote-compiler`
/// (lld would send "") the clang of the LLVM that ran the thin link. Locally, as lld's
/// in-process backends, non-PIC output gets the static relocation model.
fn backend_command(req: &LtoRequest, llvm: &llvm::Llvm, cg: &CodegenSettings) -> Vec<String> {
    let opts = req.opts;
    let coff = req.format == irsymtab::ObjectFormat::Coff;
    let triple = req.modules.first().map(|m| String::from_utf8_lossy(m.bitcode.ir.target_triple).into_owned()).unwrap_or_default();
    let local_clang = llvm.clang.to_string_lossy().into_owned();
    if opts.distributor.is_some() {
        // lld 22's remote command line exactly; without --thinlto-remote-compiler (lld would
        // send ""), the clang of the LLVM that ran the thin link.
        backend::common_args(
            opts.remote_compiler.as_deref().unwrap_or(&local_clang),
            &opts.remote_compiler_prepend_args,
            &triple,
            opts.opt_level,
            cg.pic && !coff,
            opts.sample_profile.as_deref(),
            opts.no_pgo_warn_mismatch,
            &opts.remote_compiler_args,
        )
    } else {
        backend::common_args(
            &local_clang,
            &[],
            &triple,
            opts.opt_level,
            cg.pic && !coff,
            opts.sample_profile.as_deref(),
            opts.no_pgo_warn_mismatch,
            // lld's in-process backends use the static relocation model for non-PIC output;
            // clang would otherwise default to PIE code. `-r` keeps the module's.
            &if cg.pic || cg.relocatable { Vec::new() } else { vec!["-fno-pic".to_string()] },
        )
    }
}

/// The name lld gives the object compiled from `module` (a module ID, or `ld-temp.o` for the
/// regular-LTO partition) when `out` is the output: `<module's directory>/<output's file
/// name>.lto.<module's stem>.<ext>` with `.`/`..` removed (an archive member `d/a.a(m.o at 8)`
/// keeps its whole file name), so `a.out.lto.t1.o`. Messages about the object use it, and
/// `--save-temps` writes it.
fn lto_object_name(out: &str, module: &str, ext: &str) -> String {
    let base = if module.ends_with(')') { temps::llvm_filename(module) } else { temps::llvm_stem(module) };
    let dir = Path::new(module).parent().unwrap_or(Path::new(""));
    let file = format!("{}.lto.{base}.{ext}", temps::llvm_filename(out));
    thinlink::normalize(&dir.join(file)).to_string_lossy().into_owned()
}

/// The native objects for pass 2, in lld's order: the regular-LTO partition (also written
/// to `--lto-obj-path`; an invalid one is an error), then each backend's object, named as lld
/// names them (`lto_object_name` of its module ID, `ids`), each checked.
fn native_objects(
    opts: &LtoOptions,
    out: &str,
    regular: Option<Vec<u8>>,
    objs: Vec<backend::Object>,
    ids: &[String],
    job_module: &[usize],
    format: irsymtab::ObjectFormat,
) -> Result<(Vec<InputFile>, Vec<ObjectOf>)> {
    let mut objects = Vec::new();
    let mut of = Vec::new();
    if let Some(data) = regular {
        if let Some(p) = &opts.obj_path {
            write_file(p, &data)?;
        }
        if backend::check_object(&data).is_err() {
            crate::bail!("regular LTO: the thin link produced an invalid object");
        }
        objects.push(lto_input(object_name(out, ObjectOf::Regular, ids, format), data));
        of.push(ObjectOf::Regular);
    }
    for (k, data) in objs.into_iter().enumerate() {
        let o = ObjectOf::Module(job_module[k]);
        let name = object_name(out, o, ids, format);
        if let Err(e) = backend::check_object(&data) {
            if format == irsymtab::ObjectFormat::Elf && !data.starts_with(b"\x7fELF") {
                crate::bail!("{name}: not an ELF file");
            }
            crate::bail!("{name}: {e}");
        }
        objects.push(lto_input_bytes(name, data));
        of.push(o);
    }
    Ok((objects, of))
}

/// `--thinlto-emit-index-files` / `--thinlto-emit-imports-files` while linking: lld's files
/// next to the inputs (after `--thinlto-prefix-replace`), import lists in lld's module names.
/// `base` is the directory the thin link's paths are relative to.
fn emit_index_files(opts: &LtoOptions, tl: &thinlink::ThinLinkOutput, names: &[String], ids: &[String], base: &Path) -> Result<()> {
    if !opts.emit_index_files && !opts.emit_imports_files {
        return Ok(());
    }
    let id_to_name: std::collections::HashMap<&str, &str> = ids.iter().map(String::as_str).zip(names.iter().map(String::as_str)).collect();
    let (old, new) = opts.prefix_replace.as_ref().map(|(o, n, _)| (o.as_str(), n.as_str())).unwrap_or(("", ""));
    for (i, shard) in tl.shards.iter().enumerate() {
        let dest = prefix_replaced(&names[i], old, new);
        if opts.emit_index_files {
            match shard {
                Some(s) => copy_file(&base.join(s), Path::new(&format!("{dest}.thinlto.bc")))?,
                None => write_file(Path::new(&format!("{dest}.thinlto.bc")), b"")?,
            }
        }
        if opts.emit_imports_files {
            let text: String = tl.imports[i].iter().map(|m| format!("{}\n", id_to_name.get(m.as_str()).copied().unwrap_or(m))).collect();
            write_file(Path::new(&format!("{dest}.imports")), text.as_bytes())?;
        }
    }
    Ok(())
}

/// Entries of LLVM's ThinLTO cache in `dir`.
fn llvm_cache_entries(dir: Option<&PathBuf>) -> usize {
    let Some(dir) = dir else { return 0 };
    std::fs::read_dir(dir).map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("llvmcache-")).count()).unwrap_or(0)
}

/// In-process ThinLTO through `llvm-lto2 run` (thin link, backends, cache in one process).
#[allow(clippy::too_many_arguments)]
fn in_process(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    ids: &[String],
    modules: &[Module],
    stage: &Path,
    trace: &mut crate::trace::Trace,
) -> Result<((Vec<InputFile>, Vec<ObjectOf>), usize)> {
    let opts = req.opts;
    let out = req.output.to_string_lossy().into_owned();
    let thin_modules: Vec<usize> = (0..req.modules.len()).filter(|&i| req.modules[i].bitcode.ir.modules.iter().any(|m| m.thin)).collect();
    let before = llvm_cache_entries(opts.cache_dir.as_ref());
    if let Some(d) = &opts.cache_dir {
        create_dir(d)?;
    }
    let t = std::time::Instant::now();
    let mode = thinlink::Mode::InProcess {
        cache_dir: opts.cache_dir.clone(),
        emit_indexes: opts.emit_index_files || opts.emit_imports_files,
        save_temps: opts.save_temps,
    };
    let tl = thinlink::run(llvm, opts, cg, stage, stage, modules, &mode)?;
    req.diag.forward(&tl.messages);
    tl.record(trace, "Thin link and backends (llvm-lto2)");
    let bytes = tl.thin_objects.iter().map(|o| o.len() as u64).sum();
    backend_stats(req, llvm, before, (tl.thin_objects.len(), bytes), modules.len(), t, trace)?;
    emit_index_files(opts, &tl, names, ids, stage)?;
    let tasks = tl.thin_objects.len();
    let objects = lto_objects(req, names, tl.regular_object.map(Cow::Owned), tl.thin_objects.into_iter().map(Cow::Owned).collect())?;
    if opts.save_temps {
        save_temps(req, stage, &out, names, &thin_modules, &objects.0)?;
    }
    Ok((objects, tasks))
}

/// In-process ThinLTO through the library (`inproc.rs`): the thin link and the backends in
/// LLVM's thread pool, with LLVM's ThinLTO cache, the objects returned in memory. `None`: the
/// library cannot do this link (`--verbose` says why); nothing was done. Also the LLVM cache
/// file of each object that has one, by the address of its bytes.
fn in_process_shim(
    req: &LtoRequest,
    shim: &inproc::Shim,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    trace: &mut crate::trace::Trace,
) -> Result<Option<InProcessObjects>> {
    let opts = req.opts;
    let before = llvm_cache_entries(opts.cache_dir.as_ref());
    if let Some(d) = &opts.cache_dir {
        create_dir(d)?;
    }
    let t = std::time::Instant::now();
    let Some(mut produced) = run_in_process(req, shim, llvm, cg, names, inproc::Mode::Backends, None)? else {
        return Ok(None);
    };
    let mut regular = None;
    let mut thin = Vec::with_capacity(produced.objects.len());
    // Objects in LLVM's cache, by the address of their bytes: the link cache refers to those
    // files instead of storing the bytes again.
    let mut cache_files = std::collections::HashMap::new();
    for (task, data, file) in std::mem::take(&mut produced.objects) {
        if let Some(name) = file.as_deref().and_then(Path::file_name) {
            cache_files.insert(data.as_ptr() as usize, name.to_string_lossy().into_owned());
        }
        if task == 0 {
            regular = Some(Cow::Borrowed(data));
        } else {
            thin.push(Cow::Borrowed(data));
        }
    }
    let tasks = thin.len();
    let bytes = thin.iter().map(|o| o.len() as u64).sum();
    backend_stats(req, llvm, before, (tasks, bytes), req.modules.len(), t, trace)?;
    trace.laps(&produced.laps);
    let (objects, of) = lto_objects(req, names, regular, thin)?;
    Ok(Some(InProcessObjects { objects, of, tasks, cache_files, state: produced.state.take() }))
}

/// What `in_process_shim` hands back.
struct InProcessObjects {
    objects: Vec<InputFile>,
    /// What each object was compiled from.
    of: Vec<ObjectOf>,
    /// ThinLTO tasks.
    tasks: usize,
    /// The LLVM cache file of each object that has one, by the address of its bytes.
    cache_files: std::collections::HashMap<usize, String>,
    /// LLVM's state, freed while the objects are linked.
    state: Option<inproc::Release>,
}

/// Records and reports how many of `tasks` ThinLTO objects were compiled and how many came from
/// LLVM's cache (new cache entries since `before`), and prunes the cache (`bytes`: the size of
/// those objects, for LLVM's warnings).
fn backend_stats(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    before: usize,
    (tasks, bytes): (usize, u64),
    modules: usize,
    t: std::time::Instant,
    trace: &mut crate::trace::Trace,
) -> Result<()> {
    let opts = req.opts;
    let compiled = llvm_cache_entries(opts.cache_dir.as_ref()).saturating_sub(before);
    let (compiled, cached) = if opts.cache_dir.is_some() { (compiled.min(tasks), tasks.saturating_sub(compiled)) } else { (tasks, 0) };
    trace.stage("Thin link and ThinLTO backends", &format!("{modules} modules, {compiled} compiled, {cached} cached, LLVM {}", llvm.version), t);
    if let Some(d) = &opts.cache_dir {
        let cache = backend::Cache::new(d.clone(), String::new());
        // lld's count is LTO's tasks: the regular partition and one per ThinLTO module.
        cache.prune(opts.cache_policy.as_deref(), Some((tasks + 1, bytes)))?;
    }
    if req.verbose {
        req.diag.log(&format!("thinlto: {tasks} modules, {compiled} compiled, {cached} cached"));
    }
    Ok(())
}

/// The objects of in-process LTO as link inputs, named as lld names them (`<out>.lto.o`,
/// `<out>.lto.<module>.o`; lld-link `.obj`), each checked.
fn lto_objects(
    req: &LtoRequest,
    names: &[String],
    regular_object: Option<Cow<'static, [u8]>>,
    thin_objects: Vec<Cow<'static, [u8]>>,
) -> Result<(Vec<InputFile>, Vec<ObjectOf>)> {
    let opts = req.opts;
    let out = req.output.to_string_lossy().into_owned();
    let thin_modules: Vec<usize> = (0..req.modules.len()).filter(|&i| req.modules[i].bitcode.ir.modules.iter().any(|m| m.thin)).collect();
    let mut objects = Vec::new();
    let mut of = Vec::new();
    if let Some(data) = regular_object {
        if let Some(p) = &opts.obj_path {
            write_file(p, &data)?;
        }
        objects.push(lto_input_bytes(object_name(&out, ObjectOf::Regular, names, req.format), data));
        of.push(ObjectOf::Regular);
    }
    let named = thin_objects.len() == thin_modules.len();
    // Checked in parallel (998 objects in an OpenSSL relink).
    use rayon::prelude::*;
    let checked: Vec<Result<Option<(InputFile, ObjectOf)>>> = thin_objects
        .into_par_iter()
        .enumerate()
        .map(|(k, data)| {
            let o = if named { ObjectOf::Module(thin_modules[k]) } else { ObjectOf::Task(k) };
            let name = object_name(&out, o, names, req.format);
            // An empty object is what a task with nothing to compile produces; anything else
            // must be a valid object.
            if data.is_empty() {
                return Ok(None);
            }
            if let Err(e) = backend::check_object(&data) {
                crate::bail!("{name}: {e}");
            }
            Ok(Some((lto_input_bytes(name, data), o)))
        })
        .collect();
    for c in checked {
        if let Some((obj, o)) = c? {
            objects.push(obj);
            of.push(o);
        }
    }
    Ok((objects, of))
}

/// `-save-temps` for in-process LTO, with lld's file names: the resolutions
/// (`<out>.resolution.txt`), LLVM's intermediate bitcode of the regular-LTO task
/// (`<out>.0.<stage>.bc`) and of each ThinLTO module (`<module>.<stage>.bc`, next to the input),
/// the combined index (`<out>.index.bc`) and the native objects (`<out>.lto.o`, `<out>.lto.<m>.o`).
fn save_temps(req: &LtoRequest, stage: &Path, out: &str, names: &[String], thin_modules: &[usize], objects: &[InputFile]) -> Result<()> {
    let mut res = String::new();
    for (m, name) in req.modules.iter().zip(names) {
        res.push_str(&format!("{name}\n"));
        for (k, flags) in m.flags.iter().enumerate() {
            res.push_str(&format!("-r={name},{},{flags}\n", String::from_utf8_lossy(m.bitcode.sym(k).name)));
        }
    }
    write_file(Path::new(&format!("{out}.resolution.txt")), res.as_bytes())?;
    let entries = std::fs::read_dir(stage).map_err(|e| Error::new(format!("cannot read {}: {}", stage.display(), crate::error::io_error(&e))))?;
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix("lto.") else { continue };
        let to = match rest.split_once('.') {
            // llvm-lto2's own resolutions name the staged modules; ours name lld's.
            Some(("resolution", _)) => {
                let _ = std::fs::remove_file(e.path());
                continue;
            }
            // `lto.N` alone is a task's object, read already.
            None if rest.parse::<u32>().is_ok() => continue,
            Some((task, stage_name)) if task.parse::<u32>().is_ok_and(|t| t > 0) => {
                let t: usize = task.parse().unwrap_or(0);
                match thin_modules.get(t - 1) {
                    Some(&i) => format!("{}.{stage_name}", names[i]),
                    None => format!("{out}.{rest}"),
                }
            }
            _ => format!("{out}.{rest}"),
        };
        if std::fs::rename(e.path(), &to).is_err() {
            copy_file(&e.path(), Path::new(&to))?;
        }
    }
    for o in objects {
        write_file(&o.path, o.data)?;
    }
    Ok(())
}

/// `lto_input` of bytes that may already live as long as the process.
fn lto_input_bytes(name: String, data: Cow<'static, [u8]>) -> InputFile {
    match data {
        Cow::Owned(v) => lto_input(name, v),
        Cow::Borrowed(b) => InputFile { data: b, ..lto_input(name, Vec::new()) },
    }
}

pub(crate) fn lto_input(name: String, data: Vec<u8>) -> InputFile {
    InputFile {
        path: PathBuf::from(&name),
        name,
        data: Box::leak(data.into_boxed_slice()),
        kind: FileKind::Object,
        lazy: false,
        archive: None,
        as_needed: false,
        needed_name: String::new(),
        archive_offset: 0,
        thin_member: false,
        fat_lto: false,
        group: 0,
    }
}

fn write_file(p: &Path, data: &[u8]) -> Result<()> {
    if let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(parent)?;
    }
    crate::outfile::write_atomic(p, data).map_err(|e| Error::new(format!("cannot open {}: {}", p.display(), crate::error::io_error(&e))))
}

fn copy_file(from: &Path, to: &Path) -> Result<()> {
    let data = std::fs::read(from).map_err(|e| Error::new(format!("cannot open {}: {}", from.display(), crate::error::io_error(&e))))?;
    write_file(to, &data)
}

/// `write_file` for the index and imports files of `--thinlto-index-only`, which a relink
/// mostly writes again with the same bytes: a regular file that already holds exactly `data`
/// only gets a new modification time (as if written: build systems compare it), so a relink
/// does not replace a thousand files (each a new inode and a freed one) for nothing.
fn write_file_if_changed(p: &Path, data: &[u8]) -> Result<()> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt;
    let same = (|| {
        let f = std::fs::File::options().read(true).write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(p).ok()?;
        let m = f.metadata().ok()?;
        if !m.is_file() || m.len() != data.len() as u64 {
            return None;
        }
        let mut old = Vec::with_capacity(data.len());
        (&f).take(data.len() as u64 + 1).read_to_end(&mut old).ok()?;
        (old == data).then(|| f.set_modified(std::time::SystemTime::now()).ok()).flatten()
    })();
    match same {
        Some(()) => Ok(()),
        None => write_file(p, data),
    }
}

fn copy_file_if_changed(from: &Path, to: &Path) -> Result<()> {
    let data = std::fs::read(from).map_err(|e| Error::new(format!("cannot open {}: {}", from.display(), crate::error::io_error(&e))))?;
    write_file_if_changed(to, &data)
}

/// `--thinlto-index-only[=file]`: the thin link only, with lld's module names, so the index
/// and imports files (and the module paths inside them) are the ones ld.lld writes.
#[allow(clippy::too_many_arguments)]
fn index_only(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    make_module: impl Fn(usize, String) -> Module,
    trace: &mut crate::trace::Trace,
) -> Result<()> {
    let opts = req.opts;
    // In this process through the library built for this LLVM (`inproc.rs`), as lld: no
    // module staged or parsed twice, every file written once where lld writes it.
    match shim_for(req, llvm, names, inproc::Mode::IndexOnly, trace) {
        Some(Ok(shim)) => {
            let t = std::time::Instant::now();
            if let Some(produced) = run_in_process(req, &shim, llvm, cg, names, inproc::Mode::IndexOnly, None)? {
                trace.stage("Thin link", &format!("in process, LLVM {}", shim.llvm_version()), t);
                trace.laps(&produced.laps);
                let t_write = std::time::Instant::now();
                finish_index_only(req, names, &|_| true, Some(&shim.skip_index()))?;
                trace.stage("Write index files", &format!("{} modules, {} lazy", names.len(), req.lazy.len()), t_write);
                return Ok(());
            }
        }
        Some(Err(why)) if req.verbose => req.diag.log(&format!("thinlto: thin link not in process: {why}")),
        _ => {}
    }
    // In place through LLVMgold when it can be told dtld's resolutions (`goldindex.rs`): no
    // module staged, every file written once where lld writes it.
    if let Some(gold) = llvm.gold.as_ref().filter(|_| !thin_link_forced("llvm-lto2")) {
        let t = std::time::Instant::now();
        match goldindex::run(gold, req, cg, names)? {
            goldindex::Outcome::Written => {
                trace.stage("Thin link", "LLVMgold, in place", t);
                let t_write = std::time::Instant::now();
                finish_index_only(req, names, &|_| true, None)?;
                trace.stage("Write index files", "the list of objects", t_write);
                return Ok(());
            }
            goldindex::Outcome::Fallback(why) => {
                if req.verbose {
                    req.diag.log(&format!("thinlto: thin link by llvm-lto2: {why}"));
                }
            }
        }
    }
    // Stage in a private tree deep enough that every relative name (even `../x.o`) stays
    // inside it; llvm-lto2 runs there and sees exactly lld's module names.
    let out = req.output.to_string_lossy().into_owned();
    let root = PathBuf::from(format!("{out}.dtld-index"));
    let depth = names.iter().map(|n| thinlink::leading_parents(&thinlink::normalize(Path::new(n)))).max().unwrap_or(0);
    let staging = crate::staging::StagingDir::open(&root, opts.save_temps)?;
    let mut cwd = staging.path().to_path_buf();
    for _ in 0..depth {
        cwd.push("_");
    }
    create_dir(&cwd)?;
    let mut modules = Vec::new();
    let mut materialized_abs = Vec::new();
    // llvm-lto2 writes `<id>.thinlto.bc` and `<id>.imports` next to an absolute module: those it
    // creates are removed at the end unless they are the files lld writes there (lld writes
    // them under `--thinlto-prefix-replace`'s new prefix, and imports files only when asked).
    let mut side_files = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let m = make_module(i, n.clone());
        if Path::new(n).is_absolute() {
            for ext in ["thinlto.bc", "imports"] {
                let p = PathBuf::from(format!("{n}.{ext}"));
                if std::fs::symlink_metadata(&p).is_err() {
                    side_files.push(p);
                }
            }
            // An absolute module name cannot be redirected: plain files are used in place,
            // archive members are written next to their archive for the thin link only.
            let is_file_itself = m.source.as_ref().is_some_and(|s| s == Path::new(n));
            if !is_file_itself {
                write_file(Path::new(n), m.data)?;
                materialized_abs.push(PathBuf::from(n));
            }
            modules.push(Module { place: false, ..m });
            continue;
        }
        modules.push(m);
    }
    let result = thinlink_placed(llvm, opts, cg, &cwd, staging.path(), &modules);
    for p in &materialized_abs {
        let _ = std::fs::remove_file(p);
    }
    let mut written = std::collections::HashSet::new();
    let remove_side_files = |written: &std::collections::HashSet<PathBuf>| {
        for p in side_files.iter().filter(|p| !written.contains(*p)) {
            let _ = std::fs::remove_file(p);
        }
    };
    let tl = match result {
        Ok(tl) => {
            req.diag.forward(&tl.messages);
            tl
        }
        Err(e) => {
            remove_side_files(&written);
            return Err(e);
        }
    };
    tl.record(trace, "Thin link");
    let t_write = std::time::Instant::now();
    let (old, new, _) = opts.prefix_replace.clone().unwrap_or_default();
    for (i, n) in names.iter().enumerate() {
        let Some(shard) = &tl.shards[i] else { continue };
        let dest = prefix_replaced(n, &old, &new);
        let shard_src = cwd.join(shard);
        written.insert(PathBuf::from(format!("{dest}.thinlto.bc")));
        copy_file_if_changed(&shard_src, Path::new(&format!("{dest}.thinlto.bc")))?;
        if opts.emit_imports_files {
            written.insert(PathBuf::from(format!("{dest}.imports")));
            copy_file_if_changed(&cwd.join(format!("{n}.imports")), Path::new(&format!("{dest}.imports")))?;
        }
    }
    finish_index_only(req, names, &|i| tl.shards[i].is_some(), Some(&skipindex::skip_module_index()))?;
    remove_side_files(&written);
    trace.stage("Write index files", &format!("{} modules, {} lazy", names.len(), req.lazy.len()), t_write);
    let t_clean = std::time::Instant::now();
    drop(staging);
    trace.stage("Remove the staging directory", "", t_clean);
    Ok(())
}

/// Gives the memory freed so far back to the system: glibc keeps freed blocks, and the blocks
/// LLVM's threads allocated stay in those threads' arenas, resident, until trimmed.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Writes one module's index (and, when asked, imports: `imports` is the file's text) file
/// where lld writes it: next to the module, under `--thinlto-prefix-replace`'s new prefix. Called
/// by the in-process index-only thin link for each module as LLVM produces it. A file that already
/// holds exactly those bytes (the same link run again, or a module whose imports did not change)
/// is not written again, only given a new modification time (build systems see it as written):
/// LLVM truncated and rewrote each, and ext4 flushes a file truncated and written again when it is
/// closed, 60-70 ms of OpenSSL's 650 ms thin link.
pub(crate) fn write_index(files: &inproc::IndexFiles, module: &str, shard: &[u8], imports: &[u8]) -> Result<()> {
    let dest = prefix_replaced(module, &files.old, &files.new);
    write_file_if_changed(Path::new(&format!("{dest}.thinlto.bc")), shard)?;
    if files.imports {
        write_file_if_changed(Path::new(&format!("{dest}.imports")), imports)?;
    }
    Ok(())
}

/// The end of an index-only link, once the thin link wrote the shards: skip indexes for the
/// bitcode files the link did not need, and the `--thinlto-index-only=` list of the native
/// objects the final link will read (modules `indexed` says got a shard). `skip_index`: the
/// bytes of the skip indexes to write, when the thin link did not write them itself (LLVMgold
/// does).
fn finish_index_only(req: &LtoRequest, names: &[String], indexed: &dyn Fn(usize) -> bool, skip_index: Option<&[u8]>) -> Result<()> {
    let opts = req.opts;
    let (old, new, native) = opts.prefix_replace.clone().unwrap_or_default();
    let obj_prefix = if native.is_empty() { new.clone() } else { native.clone() };
    let mut linked = String::new();
    for (_, n) in names.iter().enumerate().filter(|(i, _)| indexed(*i)) {
        linked.push_str(&prefix_replaced(n, &old, &obj_prefix));
        linked.push('\n');
    }
    // Bitcode files the link did not need still get an index that tells a distributed backend
    // to skip them (and an empty imports file), as lld writes.
    for input in req.lazy.iter().filter(|_| skip_index.is_some()) {
        let name = module_name(input, Some(opts), req.format);
        let dest = prefix_replaced(&name, &old, &new);
        write_file_if_changed(Path::new(&format!("{dest}.thinlto.bc")), skip_index.unwrap_or_default())?;
        if opts.emit_imports_files {
            write_file_if_changed(Path::new(&format!("{dest}.imports")), b"")?;
        }
    }
    if let Some(f) = &opts.index_only_file {
        write_file(f, linked.as_bytes())?;
    }
    // lld runs the regular partition even when it is empty, and writes its object.
    let all_thin = req.modules.iter().all(|m| m.bitcode.ir.modules.iter().all(|im| im.thin));
    if let (Some(p), true) = (&opts.obj_path, all_thin) {
        if let Some(data) = emptyobj::empty_object(req.format) {
            write_file(p, &data)?;
        }
    }
    Ok(())
}

fn thinlink_placed(
    llvm: &llvm::Llvm,
    opts: &LtoOptions,
    cg: &CodegenSettings,
    cwd: &Path,
    work: &Path,
    modules: &[Module],
) -> Result<thinlink::ThinLinkOutput> {
    // Absolute modules are already in place; the others are staged under `cwd`.
    let work = crate::util::path::abs(work);
    thin_link(llvm, opts, cg, cwd, &work, modules, opts.emit_imports_files)
}

/// The thin link by `llvm-lto2`, or by the installation's `LLVMgold.so` when it has no
/// `llvm-lto2` (`goldhost.rs`).
fn thin_link(
    llvm: &llvm::Llvm,
    opts: &LtoOptions,
    cg: &CodegenSettings,
    cwd: &Path,
    work: &Path,
    modules: &[Module],
    imports: bool,
) -> Result<thinlink::ThinLinkOutput> {
    match &llvm.gold {
        Some(gold) if !llvm.lto2.is_file() => goldhost::run(gold, opts, cg, cwd, work, modules),
        _ => thinlink::run(llvm, opts, cg, cwd, work, modules, &thinlink::Mode::DistributedIndexes { imports }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_names() {
        assert_eq!(stage_name("main.o"), "main.o");
        assert_eq!(stage_name("../lib/x.o"), "x.o");
        assert_eq!(stage_name("/abs/y.bc"), "y.bc");
        assert_eq!(stage_name("lib/libb.a(b.o at 100)"), "b.o");
        assert_eq!(stage_name("libt.a(dir/t.o)"), "t.o");
        assert_eq!(stage_name("libb.a(b at 8)"), "b.o");
        assert_eq!(stage_name("./a/../m.lto"), "m.lto.o");
        assert_eq!(relative_to_cwd("x/y"), "x/y");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(relative_to_cwd(&cwd.join("out/prog").to_string_lossy()), "out/prog");
    }

    #[test]
    fn replacements() {
        assert_eq!(prefix_replaced("obj/a.o", "obj/", "idx/"), "idx/a.o");
        assert_eq!(prefix_replaced("a.o", "", "idx/"), "idx/a.o");
        assert_eq!(prefix_replaced("x/a.o", "obj/", "idx/"), "x/a.o");
    }
}

//! The thin link through the user's `LLVMgold.so`, for LLVM installations without `llvm-lto2`.
//!
//! `llvm-lto2` is in Debian's `llvm-NN` package, which clang does not require; `LLVMgold.so` is
//! a hard dependency of clang and clang even passes its path to the linker. So when
//! `<llvm>/bin/llvm-lto2` is missing, dtld hosts the gold plugin instead, with the same contract
//! as `thinlink::run`: modules are staged at their IDs under `cwd`, and the plugin writes
//! `<id>.thinlto.bc` and `<id>.imports` next to them (`thinlto-index-only`) and the regular-LTO
//! partition to `<work>/lto.0` (`obj-path=`).
//!
//! In index-only mode LLVMgold calls `exit(0)` from its all-symbols-read hook and shuts LLVM
//! down, so it can only run in a process of its own: the parent writes a request file and
//! re-executes dtld as `dtld --dtld-gold-helper <request>` in `cwd`. The helper dlopens the
//! plugin, claims every module, answers `get_symbols` with gold resolutions derived from dtld's
//! own (`p`/`l`/`x`/`r`) flags, and runs the hook. Its exit status, its stderr and the files
//! left on disk are the result.
//!
//! Resolution mapping (gold derives lld's bits from an `LDPR_*` value, so not every flag
//! combination can be expressed):
//! * defined, `p` and `x` → `PREVAILING_DEF`; `p` without `x` → `PREVAILING_DEF_IRONLY`;
//! * defined, not `p` → `PREEMPTED_IR` if a bitcode module prevails for the name, else
//!   `PREEMPTED_REG`;
//! * undefined → `RESOLVED_IR` if a bitcode module prevails for the name, else `RESOLVED_EXEC`
//!   when dtld says `l` (final in the linkage unit) and `UNDEF` otherwise (e.g. a symbol from a
//!   shared library; gold then does not mark it dso-local).
//! * `l` on definitions is recomputed by LLVMgold from the output kind (executable/PIE, or
//!   non-default visibility). With `cg.pic` the output is `LDPO_PIE` unless some prevailing
//!   definition lacks `l`, which only happens in a shared object (`LDPO_DYN`).
//! * `r` (linker-redefined, `--wrap`/`--defsym`) and `x` on undefined symbols cannot be passed.
//!
//! The regular-LTO object: LLVMgold writes `obj-path` even when every module is ThinLTO (an
//! empty ELF object). dtld reports it only when it has a symbol other than file and section
//! symbols, as `llvm-lto2` only writes one when there is a regular-LTO module.

use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::lto::bitcode::Module;
use crate::lto::options::LtoOptions;
use crate::lto::thinlink::{self, CodegenSettings, ThinLinkOutput};

/// The hidden subcommand that runs the plugin host.
pub const HELPER_FLAG: &str = "--dtld-gold-helper";

use super::plugin_api::{
    format_message, is_undef, PluginInputFile, PluginSymbol, LDPL_ERROR, LDPL_FATAL, LDPL_WARNING, LDPO_DYN, LDPO_EXEC, LDPO_PIE, LDPO_REL, LDPR_PREEMPTED_IR,
    LDPR_PREEMPTED_REG, LDPR_PREVAILING_DEF, LDPR_PREVAILING_DEF_IRONLY, LDPR_RESOLVED_EXEC, LDPR_RESOLVED_IR, LDPR_UNDEF, LDPS_BAD_HANDLE, LDPS_ERR,
    LDPS_NO_SYMS, LDPS_OK, LDPT_ADD_INPUT_FILE, LDPT_ADD_SYMBOLS, LDPT_GET_INPUT_FILE, LDPT_GET_SYMBOLS, LDPT_GET_SYMBOLS_V2, LDPT_GET_SYMBOLS_V3,
    LDPT_GET_VIEW, LDPT_MESSAGE, LDPT_RELEASE_INPUT_FILE,
};
use super::plugin_host::{self, c_str_lossy, decode_request, guarded, handle_index, handle_of, hex, unhex, unhex_str, RequestHead};

// ---------------------------------------------------------------------------------------------
// The request file: one item per line, `key value...`; strings are hex-encoded so any byte
// (spaces, newlines in symbol names) survives.

/// What the helper is asked to do.
#[derive(Debug, Default, PartialEq)]
struct Request {
    head: RequestHead,
    modules: Vec<ReqModule>,
}

#[derive(Debug, Default, PartialEq)]
struct ReqModule {
    /// Path to open, relative to the helper's working directory (or absolute).
    path: String,
    /// Name given to the plugin: the module ID.
    name: String,
    /// (symbol name, dtld flags) in irsymtab `lto_symbols()` order.
    syms: Vec<(Vec<u8>, String)>,
    /// The module's bytes as (offset, length) in the data that follows the request on the
    /// helper's standard input (`goldindex.rs`), instead of a file at `path`.
    view: Option<(u64, u64)>,
    /// A bitcode file the link did not need: claimed, but `get_symbols` says it has none, so
    /// LLVMgold writes its skip index (and empty imports file) as lld does.
    skip: bool,
}

const REQUEST_MAGIC: &str = "dtld-gold-request 1";

impl Request {
    fn encode(&self) -> String {
        let mut s = self.head.encode(REQUEST_MAGIC);
        for m in &self.modules {
            match m.view {
                Some((off, len)) => {
                    let _ = writeln!(s, "module-view {} {off} {len}{}", hex(m.name.as_bytes()), if m.skip { " skip" } else { "" });
                }
                None => {
                    let _ = writeln!(s, "module {} {}", hex(m.path.as_bytes()), hex(m.name.as_bytes()));
                }
            }
            for (name, flags) in &m.syms {
                let _ = writeln!(s, "sym {} {}", hex(name), hex(flags.as_bytes()));
            }
        }
        s.push_str("end\n");
        s
    }

    fn decode(text: &str) -> std::result::Result<Request, String> {
        let line = |r: &mut Request, f: &[&str]| match f {
            ["module", p, name] => match (unhex_str(p), unhex_str(name)) {
                (Some(path), Some(name)) => {
                    r.modules.push(ReqModule { path, name, syms: Vec::new(), view: None, skip: false });
                    true
                }
                _ => false,
            },
            ["module-view", name, off, len, rest @ ..] => match (unhex_str(name), off.parse(), len.parse(), rest) {
                (Some(name), Ok(off), Ok(len), [] | ["skip"]) => {
                    r.modules.push(ReqModule { path: String::new(), name, syms: Vec::new(), view: Some((off, len)), skip: !rest.is_empty() });
                    true
                }
                _ => false,
            },
            ["sym", name, flags] => match (r.modules.last_mut(), unhex(name), unhex_str(flags)) {
                (Some(m), Some(name), Some(flags)) => {
                    m.syms.push((name, flags));
                    true
                }
                _ => false,
            },
            _ => false,
        };
        decode_request(text, REQUEST_MAGIC, "not a dtld gold-helper request (version 1)", line, |r| &mut r.head)
    }
}

// ---------------------------------------------------------------------------------------------
// The parent side.

/// Same contract as `thinlink::run`, via LLVMgold.so hosted in a helper process (this
/// executable, re-run with `--dtld-gold-helper`).
pub fn run(plugin: &Path, opts: &LtoOptions, cg: &CodegenSettings, cwd: &Path, work: &Path, modules: &[Module]) -> Result<ThinLinkOutput> {
    let exe =
        std::env::current_exe().map_err(|e| Error::new(format!("thin link (LLVMgold): cannot find the dtld executable: {}", crate::error::io_error(&e))))?;
    run_with_helper(&exe, plugin, opts, cg, cwd, work, modules)
}

/// The plugin options dtld passes (what clang and `-plugin-opt=` would): index-only, with
/// imports files when `imports`, the regular-LTO partition to `obj_path` when given.
pub(crate) fn plugin_options(opts: &LtoOptions, cg: &CodegenSettings, obj_path: Option<&Path>, imports: bool) -> Vec<String> {
    let mut o = vec![format!("O{}", cg.opt_level)];
    if let Some(c) = &cg.mcpu {
        o.push(format!("mcpu={c}"));
    }
    o.push("thinlto".into());
    o.push("thinlto-index-only".into());
    if imports {
        o.push("thinlto-emit-imports-files".into());
    }
    if let Some(p) = obj_path {
        o.push(format!("obj-path={}", p.display()));
    }
    o.push(format!("jobs={}", cg.threads.max(1)));
    if !cg.mattrs.is_empty() {
        o.push(format!("-mattr={}", cg.mattrs.join(",")));
    }
    for m in &opts.mllvm {
        o.push(if m.starts_with('-') { m.clone() } else { format!("-{m}") });
    }
    o
}

fn linker_output(cg: &CodegenSettings, modules: &[Module]) -> usize {
    if cg.relocatable {
        return LDPO_REL;
    }
    if !cg.pic {
        return LDPO_EXEC;
    }
    // In a PIE every prevailing definition is final in the linkage unit; in a shared object
    // the default-visibility ones are not.
    let dso = modules.iter().flat_map(|m| &m.resolutions).any(|(_, f)| f.contains('p') && !f.contains('l'));
    if dso {
        LDPO_DYN
    } else {
        LDPO_PIE
    }
}

/// `run`, with the helper program given (unit tests run the helper from the built `dtld`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_with_helper(
    helper: &Path,
    plugin: &Path,
    opts: &LtoOptions,
    cg: &CodegenSettings,
    cwd: &Path,
    work: &Path,
    modules: &[Module],
) -> Result<ThinLinkOutput> {
    thinlink::stage(cwd, modules)?;
    let work = crate::util::path::abs(work);
    let obj_path = work.join("lto.0");
    let _ = std::fs::remove_file(&obj_path);
    let mut req = Request {
        head: RequestHead {
            plugin: plugin.to_string_lossy().into_owned(),
            output_name: work.join("lto").to_string_lossy().into_owned(),
            linker_output: linker_output(cg, modules),
            options: plugin_options(opts, cg, Some(&obj_path), true),
        },
        modules: Vec::new(),
    };
    for m in modules {
        req.modules.push(ReqModule {
            path: m.id.clone(),
            name: m.id.clone(),
            syms: m.resolutions.iter().map(|(n, f)| (n.to_vec(), f.to_string())).collect(),
            view: None,
            skip: false,
        });
    }
    let req_path = work.join("goldhost.req");
    std::fs::write(&req_path, req.encode()).map_err(|e| Error::new(format!("cannot write {}: {}", req_path.display(), crate::error::io_error(&e))))?;
    let out = Command::new(helper)
        .arg(HELPER_FLAG)
        .arg(&req_path)
        .current_dir(cwd)
        .output()
        .map_err(|e| Error::new(format!("thin link (LLVMgold): cannot run {}: {}", helper.display(), crate::error::io_error(&e))))?;
    let messages = check_helper(&out)?;
    let mut shards = Vec::new();
    let mut imports = Vec::new();
    for m in modules {
        let shard = PathBuf::from(format!("{}.thinlto.bc", m.id));
        // 0-byte index files are what LLVMgold writes for regular-LTO modules.
        let has_shard = std::fs::metadata(cwd.join(&shard)).is_ok_and(|md| md.is_file() && md.len() > 0);
        let list = std::fs::read_to_string(cwd.join(format!("{}.imports", m.id))).unwrap_or_default();
        imports.push(list.lines().filter(|l| !l.is_empty()).map(str::to_string).collect());
        shards.push(has_shard.then_some(shard));
    }
    let regular_object = std::fs::read(&obj_path).ok().filter(|d| has_real_symbols(d));
    let now = std::time::Instant::now();
    Ok(ThinLinkOutput { shards, imports, regular_object, thin_objects: Vec::new(), in_memory: None, known: Vec::new(), times: [now; 4], messages })
}

/// The helper's result: its errors (`dtld: error: ` lines, or all it said when it failed
/// without one) as the link's; otherwise what it said, for the link to pass on
/// (`Diag::forward`).
pub(crate) fn check_helper(out: &std::process::Output) -> Result<String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<String> = lines.iter().filter_map(|l| l.strip_prefix("dtld: error: ").map(str::to_string)).collect();
    if !out.status.success() || !errors.is_empty() {
        let mut msgs = if errors.is_empty() { lines.iter().map(|l| format!("thin link (LLVMgold): {l}")).collect() } else { errors };
        if msgs.is_empty() {
            msgs.push(format!("thin link (LLVMgold): helper process failed with {}", out.status));
        }
        return Err(Error::many(msgs));
    }
    Ok(stderr.into_owned())
}

/// The exit status of a helper that found the plugin's view of a module's symbols differing
/// from dtld's before anything was written (`goldindex.rs` then runs `llvm-lto2`); its reason
/// is the last line of its standard error.
pub const HELPER_DIFFERS: i32 = 3;

/// A module for a request whose bytes follow it (`goldindex.rs`).
pub struct ViewModule<'a> {
    /// The module ID (lld's name).
    pub name: &'a str,
    pub data: &'a [u8],
    /// (symbol name, dtld flags) in irsymtab `lto_symbols()` order.
    pub syms: Vec<(&'a [u8], &'a str)>,
    /// Not linked: LLVMgold writes its skip index.
    pub skip: bool,
}

/// The request for `modules` whose bytes follow it, in order (each module's view is its
/// offset and length there).
fn views_request(plugin: &Path, output: &str, linker_output: usize, options: &[String], modules: &[ViewModule]) -> Request {
    let mut off = 0u64;
    Request {
        head: RequestHead { plugin: plugin.to_string_lossy().into_owned(), output_name: output.to_string(), linker_output, options: options.to_vec() },
        modules: modules
            .iter()
            .map(|m| {
                let view = Some((off, m.data.len() as u64));
                off += m.data.len() as u64;
                ReqModule {
                    path: String::new(),
                    name: m.name.to_string(),
                    syms: m.syms.iter().map(|(n, f)| (n.to_vec(), f.to_string())).collect(),
                    view,
                    skip: m.skip,
                }
            })
            .collect(),
    }
}

/// The request text for `modules` whose bytes follow it, in order, on the helper's standard
/// input (`dtld --dtld-gold-helper -`).
pub fn view_request(plugin: &Path, output: &str, linker_output: usize, options: &[String], modules: &[ViewModule]) -> String {
    views_request(plugin, output, linker_output, options, modules).encode()
}

/// `LLVMgold.so` (and the libLLVM it links) loaded on a thread of its own while dtld reads and
/// resolves its inputs, for an index-only link that will fork its thin link (`run_forked`):
/// the load is ~11 ms of relocations and static constructors that then overlap dtld's own work
/// instead of preceding the plugin's. The library stays loaded; the fork finds it in place.
pub struct Preload {
    path: PathBuf,
    loading: Mutex<Option<std::thread::JoinHandle<bool>>>,
}

impl Preload {
    /// Starts loading `path`; `None` when no thread can be started.
    pub fn start(path: PathBuf) -> Option<Preload> {
        let p = path.clone();
        let handle = std::thread::Builder::new()
            .name("dtld-llvm-load".into())
            .spawn(move || {
                // SAFETY: loading the user's plugin runs its initializers (as the thin link
                // would); it is never unloaded.
                unsafe { libloading::Library::new(&p) }.map(crate::util::keep::loaded_library).is_ok()
            })
            .ok()?;
        Some(Preload { path, loading: Mutex::new(Some(handle)) })
    }

    /// The library being loaded.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the load to finish (a fork must not copy a half-done `dlopen`); whether `plugin`
    /// is the library loaded.
    pub(crate) fn ready_for(&self, plugin: &Path) -> bool {
        if let Some(h) = self.loading.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
        self.path == plugin
    }
}

impl Drop for Preload {
    fn drop(&mut self) {
        // The process does not exit in the middle of a load.
        if let Some(h) = self.loading.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }
}

/// Runs the index-only thin link of `modules` through LLVMgold in a forked copy of this
/// process (`goldindex.rs`): the child hosts the plugin over the module bytes dtld already has
/// mapped, with the request built in memory, so nothing is encoded, copied into a memory file,
/// executed or decoded (on OpenSSL's `openssl`, 1,141 modules, that was ~30 ms before the
/// plugin started). The child's standard error comes back through a pipe and its exit status
/// as a helper's, so the caller judges both as it judges the helper's (`check_helper`).
/// `None` when the process cannot fork, or holds another LLVM than `plugin`'s (a `preload`
/// of a different installation): the caller runs the helper instead.
///
/// The child runs nothing of dtld's but this module's single-threaded host code and the
/// plugin, and leaves with `_exit` (or LLVMgold's `exit`): no destructor of the parent's
/// state runs twice. It dies with the parent (PR_SET_PDEATHSIG) and takes the default action
/// on SIGINT/SIGTERM/SIGHUP, while the parent's cleanup stops it as any child it starts.
pub(crate) fn run_forked(
    plugin: &Path,
    preload: Option<&Preload>,
    output: &str,
    linker_output: usize,
    options: &[String],
    modules: &[ViewModule],
) -> Option<std::process::Output> {
    if preload.is_some_and(|p| !p.ready_for(plugin)) {
        return None;
    }
    // The views mark each module as one (a symbol table differing from dtld's is then a
    // fallback, not an error); the child reads the bytes from `data`, not at those offsets.
    let req = views_request(plugin, output, linker_output, options, modules);
    let mut files = Vec::with_capacity(modules.len());
    for (m, r) in modules.iter().zip(&req.modules) {
        // SAFETY: the child never returns from this function (it leaves with `_exit`), so the
        // bytes, mapped by the parent for the whole link, outlive every use of them.
        let data: &'static [u8] = unsafe { std::slice::from_raw_parts(m.data.as_ptr(), m.data.len()) };
        files.push(host_file(r, -1, 0, data).ok()?);
    }
    let mut fds = [0 as c_int; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    let [read_end, write_end] = fds;
    let mut st = [0 as c_int; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(st.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        // SAFETY: closing the two descriptors pipe2 returned.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return None;
    }
    let [status_read, status_write] = st;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork; the child only runs the host below (see the function comment).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the descriptors pipe2 returned.
        unsafe {
            for fd in [read_end, write_end, status_read, status_write] {
                libc::close(fd);
            }
        }
        return None;
    }
    if pid == 0 {
        // SAFETY: plain system calls on descriptors and signals this process owns.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                libc::signal(sig, libc::SIG_DFL);
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            libc::dup2(write_end, 2);
            libc::close(write_end);
            libc::close(read_end);
            libc::close(status_read);
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                libc::dup2(null, 0);
                libc::dup2(null, 1);
                libc::close(null);
            }
            // LLVMgold ends an index-only link with exit(0) once the files are written: the
            // parent learns the status then, not after the kernel has torn down the child's
            // address space (~100 MB on OpenSSL).
            #[cfg(target_env = "gnu")]
            on_exit(release_parent, status_write as usize as *mut c_void);
        }
        let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| host(req, files))) {
            Ok(Ok(code)) => code,
            Ok(Err(e)) => helper_fail(e),
            Err(_) => helper_fail("internal error in the plugin host"),
        };
        // SAFETY: leaving the child without running the parent's destructors or exit handlers.
        unsafe { libc::_exit(code) };
    }
    drop(req);
    drop(files);
    let _guard = crate::cleanup::register_child(pid as u32);
    // SAFETY: closing our copies of the write ends (the child holds its own); the read ends
    // are ours alone from here.
    unsafe {
        libc::close(write_end);
        libc::close(status_write);
    }
    use std::os::fd::FromRawFd as _;
    // SAFETY: `read_end` and `status_read` are open descriptors owned by nothing else.
    let (mut reader, mut status_reader) = unsafe { (std::fs::File::from_raw_fd(read_end), std::fs::File::from_raw_fd(status_read)) };
    let mut stderr = Vec::new();
    let _ = std::io::Read::read_to_end(&mut reader, &mut stderr);
    let mut byte = [0u8; 1];
    let reap = move || crate::detach::wait_child(pid).unwrap_or(1 << 8);
    let status = if std::io::Read::read(&mut status_reader, &mut byte).is_ok_and(|n| n == 1) {
        // The child called exit(): its status is known; it is reaped while it finishes dying
        // (or, if no thread can be started, here).
        if std::thread::Builder::new().name("dtld-reap".into()).spawn(reap).is_err() {
            reap();
        }
        c_int::from(byte[0]) << 8
    } else {
        reap()
    };
    Some(std::process::Output { status: std::os::unix::process::ExitStatusExt::from_raw(status), stdout: Vec::new(), stderr })
}

#[cfg(target_env = "gnu")]
extern "C" {
    /// glibc's `on_exit`: an exit handler that receives the exit status and an argument.
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

/// The forked thin link's exit handler (`run_forked`): sends the exit status through the
/// status pipe (`arg`) and lets go of the parent's standard-error pipe.
/// (Without glibc there is no `on_exit`: the parent then waits for the child's end, as before.)
#[cfg_attr(not(target_env = "gnu"), allow(dead_code))]
extern "C" fn release_parent(status: c_int, arg: *mut c_void) {
    let fd = arg as usize as c_int;
    let byte = status.clamp(0, 255) as u8;
    // SAFETY: write/close/open/dup2 on descriptors this process owns; async-signal-safe calls.
    unsafe {
        libc::write(fd, (&byte as *const u8).cast(), 1);
        libc::close(fd);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 2);
            libc::close(null);
        }
    }
}

/// Whether an object defines or references anything (LLVMgold's empty partition does not).
fn has_real_symbols(data: &[u8]) -> bool {
    use object::{Object as _, ObjectSymbol as _, SymbolKind};
    match object::File::parse(data) {
        Ok(f) => f.symbols().any(|s| !matches!(s.kind(), SymbolKind::File | SymbolKind::Section) && s.name_bytes().is_ok_and(|n| !n.is_empty())),
        // Not ours to judge: the caller checks the object and reports it.
        Err(_) => true,
    }
}

// ---------------------------------------------------------------------------------------------
// The helper process: the plugin's host. The plugin API has no context pointer, so the state
// is global; the lock is never held while calling into the plugin (claim_file re-enters
// add_symbols).

struct HostFile {
    /// The descriptor and offset `get_input_file` reports (the module's own file, or the
    /// helper's standard input holding every module).
    fd: c_int,
    offset: i64,
    name: CString,
    data: &'static [u8],
    /// (name, kind) as the plugin reported them in add_symbols.
    syms: Vec<(Vec<u8>, u8)>,
    flags: Vec<String>,
    added: bool,
    /// `get_symbols` answers `LDPS_NO_SYMS` (a skip index).
    skip: bool,
}

#[derive(Default)]
struct Host {
    files: Vec<HostFile>,
    /// Per file, the LDPR_* answer for each symbol (computed once all files are claimed).
    resolutions: Option<Vec<Vec<c_int>>>,
    errors: usize,
}

static STATE: Mutex<Option<Host>> = Mutex::new(None);

fn with_host<R>(f: impl FnOnce(&mut Host) -> R) -> Option<R> {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    g.as_mut().map(f)
}

unsafe extern "C" fn cb_add_symbols(handle: *mut c_void, n: c_int, syms: *const PluginSymbol) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let n = usize::try_from(n).unwrap_or(0);
        let mut list = Vec::with_capacity(n);
        for k in 0..n {
            // SAFETY: the plugin passes `n` valid symbols.
            let s = unsafe { &*syms.add(k) };
            // SAFETY: a non-null symbol name from the plugin is a NUL-terminated string it owns during the call.
            let name = if s.name.is_null() { Vec::new() } else { unsafe { CStr::from_ptr(s.name) }.to_bytes().to_vec() };
            list.push((name, (s.def & 0xff) as u8));
        }
        with_host(|h| match h.files.get_mut(i) {
            Some(f) => {
                f.syms.extend(list);
                f.added = true;
                LDPS_OK
            }
            None => LDPS_BAD_HANDLE,
        })
        .unwrap_or(LDPS_ERR)
    })
}

/// The gold resolution for every symbol of every file, from dtld's flags.
fn compute_resolutions(files: &[(&[(Vec<u8>, u8)], &[String])]) -> Vec<Vec<c_int>> {
    let prevailing: HashSet<&[u8]> = files
        .iter()
        .flat_map(|(syms, flags)| syms.iter().zip(flags.iter()).filter(|((_, k), f)| !is_undef(*k) && f.contains('p')).map(|((n, _), _)| n.as_slice()))
        .collect();
    files
        .iter()
        .map(|(syms, flags)| {
            syms.iter()
                .zip(flags.iter())
                .map(|((name, kind), f)| {
                    let ir_prevails = prevailing.contains(name.as_slice());
                    if is_undef(*kind) {
                        if ir_prevails {
                            LDPR_RESOLVED_IR
                        } else if f.contains('l') {
                            LDPR_RESOLVED_EXEC
                        } else {
                            LDPR_UNDEF
                        }
                    } else if f.contains('p') {
                        if f.contains('x') {
                            LDPR_PREVAILING_DEF
                        } else {
                            LDPR_PREVAILING_DEF_IRONLY
                        }
                    } else if ir_prevails {
                        LDPR_PREEMPTED_IR
                    } else {
                        LDPR_PREEMPTED_REG
                    }
                })
                .collect()
        })
        .collect()
}

unsafe extern "C" fn cb_get_symbols(handle: *const c_void, n: c_int, syms: *mut PluginSymbol) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        if with_host(|h| h.files.get(i).is_some_and(|f| f.skip)).unwrap_or(false) {
            return LDPS_NO_SYMS;
        }
        let res = with_host(|h| {
            if h.resolutions.is_none() {
                let input: Vec<_> = h.files.iter().map(|f| (f.syms.as_slice(), f.flags.as_slice())).collect();
                let r = compute_resolutions(&input);
                h.resolutions = Some(r);
            }
            h.resolutions.as_ref().and_then(|r| r.get(i).cloned())
        })
        .flatten();
        let Some(res) = res else { return LDPS_BAD_HANDLE };
        let n = usize::try_from(n).unwrap_or(0);
        if n != res.len() {
            return LDPS_ERR;
        }
        for (k, r) in res.iter().enumerate() {
            // SAFETY: the plugin passes the `n` symbols it added for this handle.
            unsafe { (*syms.add(k)).resolution = *r };
        }
        LDPS_OK
    })
}

unsafe extern "C" fn cb_get_input_file(handle: *const c_void, out: *mut PluginInputFile) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let info = with_host(|h| h.files.get(i).map(|f| (f.name.as_ptr(), f.fd, f.offset, f.data.len()))).flatten();
        let Some((name, fd, offset, len)) = info else { return LDPS_BAD_HANDLE };
        // SAFETY: `out` points to a struct the plugin owns; the name lives as long as STATE.
        unsafe {
            *out = PluginInputFile { name, fd, offset, filesize: len as i64, handle: handle as *mut c_void };
        }
        LDPS_OK
    })
}

unsafe extern "C" fn cb_release_input_file(_handle: *const c_void) -> c_int {
    LDPS_OK
}

unsafe extern "C" fn cb_get_view(handle: *const c_void, view: *mut *const c_void) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let Some(data) = with_host(|h| h.files.get(i).map(|f| f.data)).flatten() else { return LDPS_BAD_HANDLE };
        // SAFETY: `view` is the plugin's out-pointer; the data is leaked, so it stays valid.
        unsafe { *view = data.as_ptr() as *const c_void };
        LDPS_OK
    })
}

unsafe extern "C" fn cb_add_input_file(path: *const c_char) -> c_int {
    // Only reached outside index-only mode, which dtld never asks for.
    guarded(|| {
        let p = c_str_lossy(path);
        crate::diag::to_parent(&format!("error: thin link (LLVMgold): unexpected native object from the plugin: {p}"));
        with_host(|h| h.errors += 1);
        LDPS_ERR
    })
}

/// `ld_plugin_message` is C-variadic. On x86-64 SysV the first integer/pointer variadic
/// arguments travel in the same registers as fixed ones, so reading them as four extra
/// `usize` parameters is sound for the integer and pointer arguments LLVMgold passes.
unsafe extern "C" fn cb_message(level: c_int, fmt: *const c_char, a1: usize, a2: usize, a3: usize, a4: usize) -> c_int {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `fmt` is the plugin's NUL-terminated printf format and a1..a4 its arguments (see above).
        let text = if fmt.is_null() { String::new() } else { unsafe { format_message(CStr::from_ptr(fmt).to_bytes(), [a1, a2, a3, a4]) } };
        match level {
            LDPL_FATAL | LDPL_ERROR => {
                crate::diag::to_parent(&format!("error: thin link (LLVMgold): {text}"));
                with_host(|h| h.errors += 1);
            }
            // The plugin runs in a helper process: the link prints its lines (`check_helper`).
            LDPL_WARNING => crate::diag::to_parent(&format!("warning: thin link (LLVMgold): {text}")),
            _ => crate::diag::to_parent(&format!("thin link (LLVMgold): {text}")),
        }
    });
    if level == LDPL_FATAL || r.is_err() {
        // The plugin expects a fatal message not to return.
        std::process::exit(1);
    }
    LDPS_OK
}

fn helper_fail(msg: impl std::fmt::Display) -> i32 {
    crate::diag::to_parent(&format!("error: thin link (LLVMgold): {msg}"));
    1
}

/// Entry of the hidden helper subcommand (argv: `dtld --dtld-gold-helper <request file>`);
/// returns the exit code. In index-only mode LLVMgold exits the process itself.
pub fn helper_main(args: &[String]) -> i32 {
    match std::panic::catch_unwind(|| helper(args)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => helper_fail(e),
        Err(_) => helper_fail("internal error in the plugin host"),
    }
}

/// The host's record of module `m`, whose bytes are `data` (reported as at `offset` of `fd`).
fn host_file(m: &ReqModule, fd: c_int, offset: i64, data: &'static [u8]) -> std::result::Result<HostFile, String> {
    let name = CString::new(m.name.clone()).map_err(|_| format!("module name contains a NUL byte: {}", m.name))?;
    Ok(HostFile { fd, offset, name, data, syms: Vec::new(), flags: m.syms.iter().map(|(_, f)| f.clone()).collect(), added: false, skip: m.skip })
}

/// The request and the host's files: from a request file naming each module's file, or (`-`)
/// from standard input, a request followed by every module's bytes (`goldindex.rs`).
fn read_request(args: &[String]) -> std::result::Result<(Request, Vec<HostFile>), String> {
    let req_path = match args {
        [flag, p] if flag == HELPER_FLAG => p,
        [p] => p,
        _ => return Err(format!("usage: dtld {HELPER_FLAG} <request file>|-")),
    };
    if req_path == "-" {
        let input = crate::input::map_file(Path::new("/dev/stdin")).map_err(|e| format!("cannot read the request: {}", crate::error::io_error(&e)))?;
        let end = input.windows(5).position(|w| w == b"\nend\n").map(|p| p + 5).ok_or("request is truncated")?;
        let text = std::str::from_utf8(&input[..end]).map_err(|_| "request is not text")?;
        let req = Request::decode(text)?;
        let data = &input[end..];
        let mut files = Vec::new();
        for m in &req.modules {
            let (off, len) = m.view.ok_or("a module without its bytes")?;
            let bytes = usize::try_from(off)
                .ok()
                .zip(usize::try_from(len).ok())
                .and_then(|(o, l)| data.get(o..o.checked_add(l)?))
                .ok_or("a module's bytes are out of range")?;
            files.push(host_file(m, 0, (end as u64 + off) as i64, bytes)?);
        }
        return Ok((req, files));
    }
    let text = std::fs::read_to_string(req_path).map_err(|e| format!("cannot read {req_path}: {}", crate::error::io_error(&e)))?;
    let req = Request::decode(&text)?;
    let mut files = Vec::new();
    for m in &req.modules {
        let file = std::fs::File::open(&m.path).map_err(|e| format!("cannot open {}: {}", m.path, crate::error::io_error(&e)))?;
        let data = std::fs::read(&m.path).map_err(|e| format!("cannot read {}: {}", m.path, crate::error::io_error(&e)))?;
        // The descriptor stays open until the process exits (the plugin reads through it).
        let fd = std::os::fd::IntoRawFd::into_raw_fd(file);
        files.push(host_file(m, fd, 0, crate::util::keep::slice(data))?);
    }
    Ok((req, files))
}

fn helper(args: &[String]) -> std::result::Result<i32, String> {
    let (req, files) = read_request(args)?;
    host(req, files)
}

/// The plugin host's work once it has its request and files: load the plugin, claim every
/// module, check that the plugin sees dtld's symbols, run the all-symbols-read hook. Returns
/// the exit code; in index-only mode LLVMgold exits the process itself after writing.
fn host(req: Request, files: Vec<HostFile>) -> std::result::Result<i32, String> {
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Host { files, ..Default::default() });

    plugin_host::load(
        &req.head,
        "",
        &[
            (LDPT_MESSAGE, cb_message as *const () as usize),
            (LDPT_ADD_SYMBOLS, cb_add_symbols as *const () as usize),
            (LDPT_GET_SYMBOLS, cb_get_symbols as *const () as usize),
            (LDPT_GET_SYMBOLS_V2, cb_get_symbols as *const () as usize),
            (LDPT_GET_SYMBOLS_V3, cb_get_symbols as *const () as usize),
            (LDPT_GET_INPUT_FILE, cb_get_input_file as *const () as usize),
            (LDPT_RELEASE_INPUT_FILE, cb_release_input_file as *const () as usize),
            (LDPT_GET_VIEW, cb_get_view as *const () as usize),
            (LDPT_ADD_INPUT_FILE, cb_add_input_file as *const () as usize),
        ],
    )?;
    let claim = plugin_host::claim_hook().ok_or("the plugin registered no claim-file hook")?;
    for (i, m) in req.modules.iter().enumerate() {
        let (name, fd, len) = with_host(|h| (h.files[i].name.as_ptr(), h.files[i].fd, h.files[i].data.len())).ok_or("no host state")?;
        let input = PluginInputFile { name, fd, offset: 0, filesize: len as i64, handle: handle_of(i) };
        let mut claimed: c_int = 0;
        // SAFETY: the hook gets a valid input file; the lock is not held.
        let st = unsafe { claim(&input, &mut claimed) };
        if st != LDPS_OK || claimed == 0 {
            return Err(format!("{}: LLVMgold did not accept this module as bitcode (status {st})", m.name));
        }
        if m.skip {
            continue;
        }
        // The plugin reports symbols in irsymtab `lto_symbols()` order; dtld's resolutions
        // are in that order too. A mismatch means the two disagree on the symbol table.
        let names = with_host(|h| (h.files[i].added, h.files[i].syms.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>())).ok_or("no host state")?;
        let want: Vec<&[u8]> = m.syms.iter().map(|(n, _)| n.as_slice()).collect();
        let got: Vec<&[u8]> = names.1.iter().map(Vec::as_slice).collect();
        if want != got {
            let first = want.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(want.len().min(got.len()));
            let msg = format!(
                "{}: LLVMgold lists {} symbols, dtld {}; they first differ at #{first} ({} vs {})",
                m.name,
                got.len(),
                want.len(),
                got.get(first).map_or("-".into(), |n| String::from_utf8_lossy(n).into_owned()),
                want.get(first).map_or("-".into(), |n| String::from_utf8_lossy(n).into_owned()),
            );
            // Nothing is written yet: the in-place thin link falls back to llvm-lto2.
            if m.view.is_some() {
                crate::diag::verbatim(&msg);
                return Ok(HELPER_DIFFERS);
            }
            return Err(msg);
        }
    }
    if with_host(|h| h.errors).unwrap_or(0) > 0 {
        return Ok(1);
    }
    // The thin link's peak memory comes next; the request is not needed any more.
    drop(req);
    let hook = plugin_host::all_symbols_read_hook().ok_or("the plugin registered no all-symbols-read hook")?;
    // In index-only mode the plugin exits the process from here after writing the files.
    // SAFETY: the plugin registered this hook through the transfer vector; it takes no arguments.
    let st = unsafe { hook() };
    // The cleanup hook runs once after all-symbols-read, as gold and lld call it.
    plugin_host::run_cleanup();
    if st != LDPS_OK || with_host(|h| h.errors).unwrap_or(0) > 0 {
        return Ok(1);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lto::plugin_api::LDPK_UNDEF;

    #[test]
    fn request_roundtrip() {
        let r = Request {
            head: RequestHead {
                plugin: "/x/LLVMgold.so".into(),
                output_name: "out dir/lto".into(),
                linker_output: LDPO_PIE,
                options: vec!["O2".into(), "obj-path=/a b/lto.0".into()],
            },
            modules: vec![
                ReqModule {
                    path: "m a.o".into(),
                    name: "m a.o".into(),
                    syms: vec![(b"f\nx".to_vec(), "".into()), (b"g".to_vec(), "plx".into())],
                    view: None,
                    skip: false,
                },
                ReqModule { path: String::new(), name: "lib.a(b.o at 8)".into(), syms: vec![(b"h".to_vec(), "l".into())], view: Some((10, 20)), skip: false },
                ReqModule { path: String::new(), name: "lib.a(c.o at 90)".into(), syms: vec![], view: Some((30, 5)), skip: true },
            ],
        };
        assert_eq!(Request::decode(&r.encode()).unwrap(), r);
        assert!(Request::decode("dtld-gold-request 1\nplugin x00\n").is_err());
        assert!(Request::decode("junk").is_err());
        assert!(Request::decode("dtld-gold-request 1\nsym x61 x\nend\n").is_err());
    }

    #[test]
    fn resolutions() {
        let files: [(Vec<(Vec<u8>, u8)>, Vec<String>); 2] = [
            (vec![(b"main".to_vec(), 0), (b"foo".to_vec(), LDPK_UNDEF), (b"printf".to_vec(), LDPK_UNDEF)], vec!["plx".into(), "l".into(), "".into()]),
            (vec![(b"foo".to_vec(), 0), (b"w".to_vec(), 1)], vec!["pl".into(), "l".into()]),
        ];
        let r = compute_resolutions(&files.iter().map(|(a, b)| (a.as_slice(), b.as_slice())).collect::<Vec<_>>());
        assert_eq!(r[0], vec![LDPR_PREVAILING_DEF, LDPR_RESOLVED_IR, LDPR_UNDEF]);
        assert_eq!(r[1], vec![LDPR_PREVAILING_DEF_IRONLY, LDPR_PREEMPTED_REG]);
    }

    /// LLVMgold (via the built `dtld` as helper) and llvm-lto2 write the same index and imports
    /// files for the same modules and resolutions.
    #[test]
    fn same_as_llvm_lto2() {
        let llvm = Path::new("/usr/lib/llvm-22");
        let gold = llvm.join("lib/LLVMgold.so");
        let lto2 = llvm.join("bin/llvm-lto2");
        // The helper must be a dtld binary built from this tree (the test binary is not one).
        let helper =
            std::env::var_os("DTLD_GOLD_HELPER_EXE").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/dtld"));
        if !gold.is_file() || !lto2.is_file() {
            eprintln!("skipped: no {} or {}", gold.display(), lto2.display());
            return;
        }
        if !helper.is_file() {
            eprintln!("skipped: build {} first (cargo build --release)", helper.display());
            return;
        }
        let tmp = std::env::temp_dir().join(format!("dtld-goldhost-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let srcs = [
            ("main.c", "int printf(const char*, ...); int foo(int); int bar(int);\nint main(void){ printf(\"%d\\n\", foo(1) + bar(2)); return 0; }\n"),
            ("a.c", "int bar(int); int foo(int x){ return bar(x) * 2 + 1; }\nint a_unused(int x){ return x; }\n"),
            ("b.c", "static int k = 3; int bar(int x){ return x + k; }\n"),
        ];
        let mut datas = Vec::new();
        for (name, text) in srcs {
            std::fs::write(tmp.join(name), text).unwrap();
            let obj = tmp.join(name.replace(".c", ".o"));
            let st = Command::new(llvm.join("bin/clang")).args(["-O2", "-flto=thin", "-c"]).arg(tmp.join(name)).arg("-o").arg(&obj).status().unwrap();
            assert!(st.success());
            datas.push((name.replace(".c", ".o"), &*crate::util::keep::slice(std::fs::read(&obj).unwrap())));
        }
        // Executable resolutions as gold derives them: definitions prevail and are final,
        // `main` is visible to regular objects, references to bitcode definitions are final.
        let irs: Vec<_> = datas.iter().map(|(_, d)| crate::lto::irsymtab::parse(d).unwrap()).collect();
        let defined: HashSet<&[u8]> = irs.iter().flat_map(|f| f.lto_symbols().filter(|s| !s.undefined()).map(|s| s.name)).collect();
        let modules: Vec<Module> = datas
            .iter()
            .zip(&irs)
            .map(|((id, data), ir)| Module {
                id: format!("m/{id}"),
                name: id.to_string(),
                data,
                source: None,
                store: None,
                resolutions: ir
                    .lto_symbols()
                    .map(|s| {
                        let f = if !s.undefined() {
                            if s.name == b"main" {
                                7 // plx
                            } else {
                                3 // pl
                            }
                        } else if defined.contains(s.name) {
                            2 // l
                        } else {
                            0
                        };
                        (s.name, crate::lto::bitcode::Res(f))
                    })
                    .collect(),
                place: true,
            })
            .collect();
        let cg = CodegenSettings { opt_level: 2, cg_opt_level: None, pic: false, relocatable: false, mcpu: None, mattrs: Vec::new(), threads: 2 };
        let opts = LtoOptions::default();
        let (dg, dl) = (tmp.join("gold"), tmp.join("lto2"));
        for d in [&dg, &dl] {
            std::fs::create_dir_all(d.join("work")).unwrap();
        }
        let g = run_with_helper(&helper, &gold, &opts, &cg, &dg, &dg.join("work"), &modules).unwrap();
        let l = crate::lto::llvm::Llvm {
            dir: llvm.to_path_buf(),
            lto2: lto2.clone(),
            clang: llvm.join("bin/clang"),
            version: "22".into(),
            gold: None,
            identity: String::new(),
        };
        let t = thinlink::run(&l, &opts, &cg, &dl, &dl.join("work"), &modules, &thinlink::Mode::DistributedIndexes { imports: true }).unwrap();
        assert_eq!(g.shards, t.shards);
        assert_eq!(g.imports, t.imports);
        assert!(g.imports.iter().any(|i| !i.is_empty()), "expected some imports: {:?}", g.imports);
        assert_eq!(g.regular_object.is_some(), t.regular_object.is_some());
        for m in &modules {
            let rel = format!("{}.thinlto.bc", m.id);
            let a = std::fs::read(dg.join(&rel)).unwrap();
            let b = std::fs::read(dl.join(&rel)).unwrap();
            eprintln!("{rel}: {} bytes, {}", a.len(), if a == b { "byte-identical" } else { "differs; comparing llvm-dis output" });
            if a != b {
                let dis = |p: PathBuf| {
                    let o = Command::new(llvm.join("bin/llvm-dis")).arg(&p).arg("-o").arg("-").output().unwrap();
                    String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.starts_with("; ModuleID")).collect::<Vec<_>>().join("\n")
                };
                assert_eq!(dis(dg.join(&rel)), dis(dl.join(&rel)), "{rel}");
            }
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

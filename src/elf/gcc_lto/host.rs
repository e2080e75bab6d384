//! Hosting GCC's LTO plugin (`liblto_plugin.so`) in a helper process.
//!
//! GCC's plugin is what turns GCC IR into machine code at link time: the linker offers it each
//! input (`claim_file`), the plugin answers with the file's IR symbols (`add_symbols`), and once
//! the linker has resolved everything (`all_symbols_read`) the plugin asks for the resolutions
//! (`get_symbols`), writes them to the resolution file, runs `lto-wrapper` (which runs `lto1`
//! for WPA and the LTRANS partitions, itself or through `make` with GCC's jobserver), and hands
//! back the objects it produced (`add_input_file`) and the libraries they may need
//! (`add_input_library`). `cleanup` removes its temporaries.
//!
//! **Why a helper process.** GNU ld and mold load the plugin into the linker. dtld re-executes
//! itself as `dtld --dtld-gcc-lto-helper` instead, as it already does for LLVMgold
//! (`goldhost.rs`), for robustness at no measurable cost:
//! * the plugin ends the process on a fatal error (`message(LDPL_FATAL)` must not return, and
//!   without a `message` callback it calls `abort()`), and its internal `assert`s abort; in a
//!   helper that is an exit status, and dtld reports it and removes its own temporaries;
//! * the plugin is not thread-safe and keeps global state; dtld's own process stays free of it
//!   (and of `dlopen`ing a foreign library at all when the link has no GCC IR);
//! * the exchange is one batch, because dtld resolves GCC IR symbols itself (`symtab.rs`) before
//!   the plugin is involved: the helper gets every file to claim with every symbol's resolution
//!   up front, so there is one process start and no back-and-forth per file. Against the
//!   seconds `lto1` takes, the helper's start and the copy of the objects through a pipe are
//!   noise (see docs/bench.md).
//!
//! **Protocol.** The request goes to the helper's stdin (no temporary file), as text lines with
//! hex-encoded strings (any byte survives): the plugin, its options, the output kind and name,
//! then every file in link order with its offset and size (archive members are offered as
//! `archive@offset`, as GNU ld does) and, for files to claim, each symbol's kind and resolution.
//! The helper's stdout carries the response: error records, then each object the plugin added
//! (its path, its length, its bytes — read before the plugin's cleanup deletes it), the
//! libraries and library directories it asked for, and an end marker. The helper moves that
//! channel off descriptor 1 before loading the plugin and points 1 at stderr, so whatever the
//! plugin, `lto-wrapper` or `lto1` print reaches the user's terminal and never the response;
//! the helper's warnings go to stderr too. Before answering `get_symbols`, the helper checks that the plugin listed, for each
//! claimed file, exactly the symbols dtld read (a disagreement would mean a wrong link, so it
//! is an error).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::lto::plugin_api::{
    format_message, is_undef, PluginInputFile, PluginSymbol, LDPK_WEAKDEF, LDPL_ERROR, LDPL_FATAL, LDPL_WARNING, LDPR_PREVAILING_DEF,
    LDPR_PREVAILING_DEF_IRONLY_EXP, LDPR_UNKNOWN, LDPS_BAD_HANDLE, LDPS_ERR, LDPS_OK, LDPT_ADD_INPUT_FILE, LDPT_ADD_INPUT_LIBRARY, LDPT_ADD_SYMBOLS,
    LDPT_GET_INPUT_FILE, LDPT_GET_SYMBOLS, LDPT_GET_SYMBOLS_V2, LDPT_GET_SYMBOLS_V3, LDPT_GET_VIEW, LDPT_MESSAGE, LDPT_RELEASE_INPUT_FILE,
    LDPT_SET_EXTRA_LIBRARY_PATH,
};
use crate::lto::plugin_host::{self, c_str_lossy, decode_request, guarded, handle_index, handle_of, hex, run_cleanup, unhex, unhex_str, RequestHead};

/// The hidden subcommand that runs the plugin host.
pub const HELPER_FLAG: &str = "--dtld-gcc-lto-helper";

const REQUEST_MAGIC: &str = "dtld-gcc-lto-request 1";
const RESPONSE_MAGIC: &str = "dtld-gcc-lto-response 1";

// ---------------------------------------------------------------------------------------------
// The request.

/// What the helper is asked to do.
#[derive(Debug, Default, PartialEq)]
pub struct Request {
    pub head: RequestHead,
    /// Every file offered to the plugin, in link order.
    pub files: Vec<ReqFile>,
}

#[derive(Debug, Default, PartialEq)]
pub struct ReqFile {
    /// The file to open (an archive for its members), as the link names it.
    pub path: String,
    /// Where the member's bytes start in `path` (0 for a plain file).
    pub offset: u64,
    pub size: u64,
    /// The name for messages (`lib.a(m.o)`).
    pub display: String,
    /// The plugin must claim this file (GCC IR) with these symbols: (name, `LDPK_*`,
    /// `LDPR_*`). Files not to claim (native objects offered in a `-r` link, as GNU ld offers
    /// every input) have `claim` false.
    pub claim: bool,
    pub syms: Vec<(Vec<u8>, u8, c_int)>,
}

impl Request {
    pub fn encode(&self) -> String {
        let mut s = self.head.encode(REQUEST_MAGIC);
        for f in &self.files {
            let what = if f.claim { "claim" } else { "offer" };
            let _ = writeln!(s, "{what} {} {} {} {}", hex(f.path.as_bytes()), f.offset, f.size, hex(f.display.as_bytes()));
            for (name, kind, res) in &f.syms {
                let _ = writeln!(s, "sym {} {kind} {res}", hex(name));
            }
        }
        s.push_str("end\n");
        s
    }

    pub fn decode(text: &str) -> std::result::Result<Request, String> {
        decode_request(text, REQUEST_MAGIC, "not a dtld GCC LTO helper request (version 1)", decode_file_line, |r| &mut r.head)
    }
}

/// A request line after the head: a file to offer or claim, or a symbol of the last claimed
/// file. False if malformed.
fn decode_file_line(r: &mut Request, f: &[&str]) -> bool {
    match f {
        [what @ ("claim" | "offer"), p, off, size, name] => {
            let (Some(path), Ok(offset), Ok(size), Some(display)) = (unhex_str(p), off.parse(), size.parse(), unhex_str(name)) else { return false };
            r.files.push(ReqFile { path, offset, size, display, claim: *what == "claim", syms: Vec::new() });
            true
        }
        ["sym", name, kind, res] => {
            let (Some(file), Some(name), Ok(kind), Ok(res)) = (r.files.last_mut().filter(|f| f.claim), unhex(name), kind.parse(), res.parse()) else {
                return false;
            };
            file.syms.push((name, kind, res));
            true
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// The response.

/// What the plugin produced.
#[derive(Debug, Default, PartialEq)]
pub struct Response {
    /// Errors the plugin or the helper reported.
    pub errors: Vec<String>,
    /// (path, contents) of every object the plugin added, in order.
    pub objects: Vec<(String, Vec<u8>)>,
    /// `add_input_library` names (`gcc` for `-lgcc`), in order.
    pub libraries: Vec<String>,
    /// `set_extra_library_path` directories.
    pub library_paths: Vec<String>,
    /// The end marker arrived (the helper did not die halfway).
    pub complete: bool,
}

fn write_record(out: &mut (impl Write + ?Sized), kind: &str, text: &str) -> std::io::Result<()> {
    writeln!(out, "{kind} {}", hex(text.as_bytes()))
}

impl Response {
    /// Parses the helper's stdout (errors on a malformed stream; a truncated one is `complete:
    /// false`).
    pub fn decode(data: &[u8]) -> std::result::Result<Response, String> {
        let mut r = Response::default();
        let mut at = 0;
        fn line<'d>(data: &'d [u8], at: &mut usize) -> Option<&'d [u8]> {
            let rest = data.get(*at..)?;
            let n = rest.iter().position(|&b| b == b'\n')?;
            *at += n + 1;
            Some(&rest[..n])
        }
        match line(data, &mut at) {
            Some(l) if l == RESPONSE_MAGIC.as_bytes() => {}
            Some(_) => return Err("the GCC LTO helper wrote an unexpected response".into()),
            None => return Ok(r),
        }
        loop {
            let Some(l) = line(data, &mut at) else { return Ok(r) };
            let text = String::from_utf8_lossy(l).into_owned();
            let bad = || format!("malformed GCC LTO helper response: {text}");
            let f: Vec<&str> = text.split_whitespace().collect();
            match f.as_slice() {
                ["error", m] => r.errors.push(unhex_str(m).ok_or_else(bad)?),
                ["library", m] => r.libraries.push(unhex_str(m).ok_or_else(bad)?),
                ["library-path", m] => r.library_paths.push(unhex_str(m).ok_or_else(bad)?),
                ["object", p, len] => {
                    let path = unhex_str(p).ok_or_else(bad)?;
                    let len: usize = len.parse().map_err(|_| bad())?;
                    let bytes = data.get(at..at.checked_add(len).ok_or_else(bad)?).ok_or_else(|| format!("GCC LTO helper response truncated in {path}"))?;
                    at += len;
                    r.objects.push((path, bytes.to_vec()));
                }
                ["end"] => {
                    r.complete = true;
                    return Ok(r);
                }
                _ => return Err(bad()),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The parent side.

/// Runs the plugin in a helper process (this executable with `HELPER_FLAG`), in the current
/// directory and with dtld's environment (`COLLECT_GCC_OPTIONS`, `MAKEFLAGS` and the jobserver
/// file descriptors reach `lto-wrapper` unchanged).
pub fn run(req: &Request) -> Result<Response> {
    let exe = std::env::current_exe().map_err(|e| Error::new(format!("GCC LTO: cannot find the dtld executable: {}", crate::error::io_error(&e))))?;
    run_with_helper(&exe, req)
}

pub(crate) fn run_with_helper(helper: &Path, req: &Request) -> Result<Response> {
    let mut child = Command::new(helper)
        .arg(HELPER_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::new(format!("GCC LTO: cannot run {}: {}", helper.display(), crate::error::io_error(&e))))?;
    let _guard = crate::cleanup::register_child(child.id());
    let text = req.encode();
    let mut stdin = child.stdin.take().expect("piped stdin");
    // The helper reads the whole request before it writes anything, so writing first cannot
    // deadlock. A helper that died early makes this fail with EPIPE; its exit status says why.
    let _ = stdin.write_all(text.as_bytes());
    drop(stdin);
    let mut out = Vec::new();
    let read = child.stdout.take().expect("piped stdout").read_to_end(&mut out);
    let status = child.wait().map_err(|e| Error::new(format!("GCC LTO: waiting for the plugin host: {}", crate::error::io_error(&e))))?;
    read.map_err(|e| Error::new(format!("GCC LTO: reading from the plugin host: {}", crate::error::io_error(&e))))?;
    let resp = Response::decode(&out).map_err(|e| Error::new(format!("GCC LTO: {e}")))?;
    if !resp.errors.is_empty() {
        return Err(Error::many(resp.errors));
    }
    if !status.success() || !resp.complete {
        let how = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
            (_, Some(sig)) => format!("was killed by signal {sig}"),
            (Some(c), _) => format!("exited with status {c}"),
            _ => status.to_string(),
        };
        return Err(Error::new(format!("GCC LTO: the plugin host ({}) {how}", req.head.plugin)));
    }
    Ok(resp)
}

// ---------------------------------------------------------------------------------------------
// The helper process. The plugin API has no context pointer, so the host's state is global;
// the lock is never held while calling into the plugin (claim_file re-enters add_symbols, the
// all-symbols-read hook re-enters get_symbols and add_input_file).

struct HostFile {
    path: CString,
    offset: u64,
    size: u64,
    display: String,
    /// Expected symbols, by name: (kind, resolution).
    expected: HashMap<Vec<u8>, (u8, c_int)>,
    /// What the plugin reported in add_symbols: (name, kind).
    added: Option<Vec<(Vec<u8>, u8)>>,
    /// An open descriptor handed out by get_input_file.
    fd: Option<std::fs::File>,
    view: Option<&'static [u8]>,
}

#[derive(Default)]
struct Host {
    files: Vec<HostFile>,
    objects: Vec<String>,
    libraries: Vec<String>,
    library_paths: Vec<String>,
    errors: usize,
}

static STATE: Mutex<Option<Host>> = Mutex::new(None);

/// The response channel: the helper's original stdout. File descriptor 1 itself is pointed at
/// stderr before the plugin loads, so nothing the plugin or its children print can mix with
/// the response.
static RESPONSE: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Moves the response channel off descriptor 1 (see `RESPONSE`).
fn take_stdout() {
    use std::os::fd::FromRawFd;
    // SAFETY: plain descriptor duplication; the new descriptor is owned by the File.
    unsafe {
        let fd = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if fd >= 0 {
            *RESPONSE.lock().unwrap_or_else(|p| p.into_inner()) = Some(std::fs::File::from_raw_fd(fd));
            libc::dup2(2, 1);
        }
    }
}

/// Runs `f` on the response channel (stdout when it could not be moved).
fn with_response<R>(f: impl FnOnce(&mut dyn Write) -> R) -> R {
    let mut g = RESPONSE.lock().unwrap_or_else(|p| p.into_inner());
    match g.as_mut() {
        Some(file) => f(file),
        None => f(&mut std::io::stdout().lock()),
    }
}

fn with_host<R>(f: impl FnOnce(&mut Host) -> R) -> Option<R> {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    g.as_mut().map(f)
}

/// Writes one response record to stdout (the parent reads them in order).
fn emit(kind: &str, text: &str) {
    with_response(|out| {
        let _ = write_record(out, kind, text);
        let _ = out.flush();
    });
}

fn report_error(msg: String) {
    emit("error", &msg);
    with_host(|h| h.errors += 1);
}

unsafe extern "C" fn cb_add_symbols(handle: *mut c_void, n: c_int, syms: *const PluginSymbol) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let n = usize::try_from(n).unwrap_or(0);
        let mut list = Vec::with_capacity(n);
        for k in 0..n {
            // SAFETY: the plugin passes `n` valid symbols.
            let s = unsafe { &*syms.add(k) };
            // SAFETY: the symbol's name is a NUL-terminated string owned by the plugin for this call.
            list.push((unsafe { s.name_bytes() }.to_vec(), s.kind()));
        }
        with_host(|h| match h.files.get_mut(i) {
            Some(f) => {
                f.added.get_or_insert_with(Vec::new).extend(list);
                LDPS_OK
            }
            None => LDPS_BAD_HANDLE,
        })
        .unwrap_or(LDPS_ERR)
    })
}

/// `get_symbols` (v1, v2 and v3): the resolutions dtld computed, by name. Version 1 predates
/// `PREVAILING_DEF_IRONLY_EXP`, which it spells `PREVAILING_DEF` (GNU ld's rule).
fn get_symbols(handle: *const c_void, n: c_int, syms: *mut PluginSymbol, v1: bool) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let n = usize::try_from(n).unwrap_or(0);
        let missing = with_host(|h| {
            let Some(f) = h.files.get(i) else { return Err(()) };
            let mut missing = Vec::new();
            for k in 0..n {
                // SAFETY: the plugin passes the `n` symbols it added for this handle.
                let s = unsafe { &mut *syms.add(k) };
                // SAFETY: the symbol's name is a NUL-terminated string the plugin keeps for this handle.
                let found = f.expected.get(unsafe { s.name_bytes() }).map(|&(_, r)| r);
                match found {
                    Some(r) => s.resolution = if v1 && r == LDPR_PREVAILING_DEF_IRONLY_EXP { LDPR_PREVAILING_DEF } else { r },
                    None => {
                        // SAFETY: as above: the plugin's NUL-terminated name for this symbol.
                        missing.push(String::from_utf8_lossy(unsafe { s.name_bytes() }).into_owned());
                        s.resolution = LDPR_UNKNOWN;
                    }
                }
            }
            Ok((f.display.clone(), missing))
        });
        match missing {
            Some(Ok((_, m))) if m.is_empty() => LDPS_OK,
            Some(Ok((display, m))) => {
                report_error(format!("{display}: GCC's LTO plugin asks for the resolution of symbols dtld did not read: {}", m.join(", ")));
                LDPS_ERR
            }
            _ => LDPS_BAD_HANDLE,
        }
    })
}

unsafe extern "C" fn cb_get_symbols_v1(handle: *const c_void, n: c_int, syms: *mut PluginSymbol) -> c_int {
    get_symbols(handle, n, syms, true)
}

unsafe extern "C" fn cb_get_symbols_v2(handle: *const c_void, n: c_int, syms: *mut PluginSymbol) -> c_int {
    get_symbols(handle, n, syms, false)
}

unsafe extern "C" fn cb_get_input_file(handle: *const c_void, out: *mut PluginInputFile) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let info = with_host(|h| {
            let f = h.files.get_mut(i)?;
            if f.fd.is_none() {
                f.fd = std::fs::File::open(Path::new(&*f.path.to_string_lossy())).ok();
            }
            Some((f.path.as_ptr(), f.fd.as_ref()?.as_raw_fd(), f.offset, f.size))
        })
        .flatten();
        let Some((name, fd, offset, size)) = info else { return LDPS_ERR };
        // SAFETY: `out` points to a struct the plugin owns; the name lives as long as STATE.
        unsafe {
            *out = PluginInputFile { name, fd, offset: offset as i64, filesize: size as i64, handle: handle as *mut c_void };
        }
        LDPS_OK
    })
}

unsafe extern "C" fn cb_release_input_file(handle: *const c_void) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        with_host(|h| h.files.get_mut(i).map(|f| f.fd = None)).flatten().map_or(LDPS_BAD_HANDLE, |_| LDPS_OK)
    })
}

unsafe extern "C" fn cb_get_view(handle: *const c_void, view: *mut *const c_void) -> c_int {
    guarded(|| {
        let Some(i) = handle_index(handle) else { return LDPS_BAD_HANDLE };
        let data = with_host(|h| {
            let f = h.files.get_mut(i)?;
            if f.view.is_none() {
                let all = crate::input::map_file(Path::new(&*f.path.to_string_lossy())).ok()?;
                f.view = all.get(f.offset as usize..(f.offset + f.size) as usize);
            }
            f.view
        })
        .flatten();
        let Some(data) = data else { return LDPS_ERR };
        // SAFETY: `view` is the plugin's out-pointer; the mapping lives until the process exits.
        unsafe { *view = data.as_ptr() as *const c_void };
        LDPS_OK
    })
}

unsafe extern "C" fn cb_add_input_file(path: *const c_char) -> c_int {
    guarded(|| {
        let p = c_str_lossy(path);
        with_host(|h| h.objects.push(p)).map_or(LDPS_ERR, |_| LDPS_OK)
    })
}

unsafe extern "C" fn cb_add_input_library(name: *const c_char) -> c_int {
    guarded(|| {
        let p = c_str_lossy(name);
        with_host(|h| h.libraries.push(p)).map_or(LDPS_ERR, |_| LDPS_OK)
    })
}

unsafe extern "C" fn cb_set_extra_library_path(path: *const c_char) -> c_int {
    guarded(|| {
        let p = c_str_lossy(path);
        with_host(|h| h.library_paths.push(p)).map_or(LDPS_ERR, |_| LDPS_OK)
    })
}

/// `ld_plugin_message` (C-variadic; see `plugin_api::format_message`). Errors go to the parent;
/// warnings and notes to stderr. A fatal message must not return: the plugin's cleanup runs
/// and the helper exits.
unsafe extern "C" fn cb_message(level: c_int, fmt: *const c_char, a1: usize, a2: usize, a3: usize, a4: usize) -> c_int {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `fmt` is the plugin's NUL-terminated printf format and a1..a4 its arguments (see above).
        let text = if fmt.is_null() { String::new() } else { unsafe { format_message(CStr::from_ptr(fmt).to_bytes(), [a1, a2, a3, a4]) } };
        match level {
            LDPL_FATAL | LDPL_ERROR => report_error(format!("GCC LTO: {text}")),
            // The plugin runs in a helper process without the link's diagnostics context; its
            // stderr is the link's (GNU ld prints the plugin's warnings as they come, too).
            LDPL_WARNING => crate::diag::warn_plain(&format!("GCC LTO: {text}")),
            _ => crate::diag::log_plain(&format!("GCC LTO: {text}")),
        }
    });
    if level == LDPL_FATAL || r.is_err() {
        run_cleanup();
        std::process::exit(1);
    }
    LDPS_OK
}

/// Entry of the hidden helper subcommand (`dtld --dtld-gcc-lto-helper`, request on stdin);
/// returns the exit code.
pub fn helper_main(_args: &[String]) -> i32 {
    emit_magic();
    let code = match std::panic::catch_unwind(helper) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            report_error(e);
            1
        }
        Err(_) => {
            report_error("GCC LTO: internal error in the plugin host".into());
            1
        }
    };
    run_cleanup();
    code
}

fn emit_magic() {
    take_stdout();
    with_response(|out| {
        let _ = writeln!(out, "{RESPONSE_MAGIC}");
        let _ = out.flush();
    });
}

/// The plugin's symbols for one claimed file against dtld's: `None` when they agree.
fn symbol_mismatch(f: &HostFile) -> Option<String> {
    let added = f.added.as_deref().unwrap_or(&[]);
    let strength = |k: u8| match k {
        _ if is_undef(k) => 0,
        LDPK_WEAKDEF => 1,
        _ => 2,
    };
    // Strongest kind per name, as the linker side sees a file (duplicates can appear).
    let mut got: HashMap<&[u8], u8> = HashMap::new();
    for (n, k) in added {
        let e = got.entry(n.as_slice()).or_insert(*k);
        if strength(*k) > strength(*e) {
            *e = *k;
        }
    }
    let mut problems = Vec::new();
    for (n, &(k, _)) in &f.expected {
        match got.get(n.as_slice()) {
            None => problems.push(format!("{} (not listed by the plugin)", String::from_utf8_lossy(n))),
            Some(&pk) if pk != k => problems.push(format!("{} (kind {pk} from the plugin, {k} read by dtld)", String::from_utf8_lossy(n))),
            _ => {}
        }
    }
    for n in got.keys() {
        if !f.expected.contains_key(*n) {
            problems.push(format!("{} (not read by dtld)", String::from_utf8_lossy(n)));
        }
    }
    if problems.is_empty() {
        return None;
    }
    problems.sort();
    problems.truncate(5);
    Some(format!("{}: GCC's LTO plugin and dtld disagree on the IR symbols: {}", f.display, problems.join(", ")))
}

fn helper() -> std::result::Result<i32, String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| format!("GCC LTO: cannot read the request: {}", crate::error::io_error(&e)))?;
    let req = Request::decode(&text).map_err(|e| format!("GCC LTO: {e}"))?;

    let mut files = Vec::new();
    for f in &req.files {
        files.push(HostFile {
            path: CString::new(f.path.clone()).map_err(|_| format!("GCC LTO: file name contains a NUL byte: {}", f.display))?,
            offset: f.offset,
            size: f.size,
            display: f.display.clone(),
            expected: f.syms.iter().map(|(n, k, r)| (n.clone(), (*k, *r))).collect(),
            added: None,
            fd: None,
            view: None,
        });
    }
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Host { files, ..Default::default() });

    // GCC's plugin refuses to load under `-fno-use-linker-plugin` (COLLECT_GCC_OPTIONS).
    plugin_host::load(
        &req.head,
        "GCC LTO: ",
        &[
            (LDPT_MESSAGE, cb_message as *const () as usize),
            (LDPT_ADD_SYMBOLS, cb_add_symbols as *const () as usize),
            (LDPT_GET_INPUT_FILE, cb_get_input_file as *const () as usize),
            (LDPT_GET_VIEW, cb_get_view as *const () as usize),
            (LDPT_RELEASE_INPUT_FILE, cb_release_input_file as *const () as usize),
            (LDPT_GET_SYMBOLS, cb_get_symbols_v1 as *const () as usize),
            (LDPT_GET_SYMBOLS_V2, cb_get_symbols_v2 as *const () as usize),
            (LDPT_GET_SYMBOLS_V3, cb_get_symbols_v2 as *const () as usize),
            (LDPT_ADD_INPUT_FILE, cb_add_input_file as *const () as usize),
            (LDPT_ADD_INPUT_LIBRARY, cb_add_input_library as *const () as usize),
            (LDPT_SET_EXTRA_LIBRARY_PATH, cb_set_extra_library_path as *const () as usize),
        ],
    )?;
    let claim = plugin_host::claim_hook().ok_or("GCC LTO: the plugin registered no claim-file hook")?;
    for (i, f) in req.files.iter().enumerate() {
        let file = std::fs::File::open(&f.path).map_err(|e| format!("cannot open {}: {}", f.path, crate::error::io_error(&e)))?;
        let name = with_host(|h| h.files[i].path.as_ptr()).ok_or("GCC LTO: no host state")?;
        let input = PluginInputFile { name, fd: file.as_raw_fd(), offset: f.offset as i64, filesize: f.size as i64, handle: handle_of(i) };
        let mut claimed: c_int = 0;
        // SAFETY: the hook gets a valid input file whose descriptor stays open during the
        // call; the lock is not held.
        let st = unsafe { claim(&input, &mut claimed) };
        drop(file);
        if st != LDPS_OK {
            return Err(format!("{}: GCC's LTO plugin reported an error claiming the file (status {st})", f.display));
        }
        if f.claim && claimed == 0 {
            return Err(format!(
                "{}: GCC's LTO plugin did not claim this GCC LTO object (is it from another GCC version than the plugin, {}?)",
                f.display, req.head.plugin
            ));
        }
        if !f.claim && claimed != 0 {
            return Err(format!("{}: GCC's LTO plugin claimed a file dtld reads as native code", f.display));
        }
        if f.claim {
            if let Some(m) = with_host(|h| symbol_mismatch(&h.files[i])).flatten() {
                return Err(m);
            }
        }
    }
    if with_host(|h| h.errors).unwrap_or(0) > 0 {
        return Ok(1);
    }
    let Some(hook) = plugin_host::all_symbols_read_hook() else {
        return Err("GCC LTO: the plugin registered no all-symbols-read hook".into());
    };
    // SAFETY: the hook the plugin registered; the lock is not held. It calls get_symbols, runs
    // lto-wrapper and calls add_input_file / add_input_library.
    let st = unsafe { hook() };
    if st != LDPS_OK {
        report_error(format!("GCC LTO: the plugin's all-symbols-read hook failed (status {st})"));
    }
    if with_host(|h| h.errors).unwrap_or(0) > 0 {
        return Ok(1);
    }
    let (objects, libraries, library_paths) =
        with_host(|h| (h.objects.clone(), h.libraries.clone(), h.library_paths.clone())).ok_or("GCC LTO: no host state")?;
    let io = |e: std::io::Error| format!("GCC LTO: writing to dtld: {}", crate::error::io_error(&e));
    with_response(|out| -> std::result::Result<(), String> {
        for p in &objects {
            let data = std::fs::read(p).map_err(|e| format!("cannot open {p}: {}", crate::error::io_error(&e)))?;
            writeln!(out, "object {} {}", hex(p.as_bytes()), data.len()).map_err(io)?;
            out.write_all(&data).map_err(io)?;
        }
        for l in &libraries {
            write_record(out, "library", l).map_err(io)?;
        }
        for l in &library_paths {
            write_record(out, "library-path", l).map_err(io)?;
        }
        writeln!(out, "end").map_err(io)?;
        out.flush().map_err(io)
    })?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lto::plugin_api::{LDPK_DEF, LDPK_UNDEF, LDPR_RESOLVED_IR};

    #[test]
    fn request_roundtrip() {
        let r = Request {
            head: RequestHead {
                plugin: "/usr/lib/gcc/x86_64-linux-gnu/12/liblto_plugin.so".into(),
                output_name: "out dir/prog".into(),
                linker_output: 3,
                options: vec!["/usr/lib/gcc/x86_64-linux-gnu/12/lto-wrapper".into(), "-fresolution=/tmp/a b.res".into()],
            },
            files: vec![
                ReqFile {
                    path: "lib.a".into(),
                    offset: 68,
                    size: 1000,
                    display: "lib.a(m.o)".into(),
                    claim: true,
                    syms: vec![(b"f\nx".to_vec(), LDPK_DEF, LDPR_RESOLVED_IR)],
                },
                ReqFile { path: "n.o".into(), offset: 0, size: 5, display: "n.o".into(), claim: false, syms: Vec::new() },
            ],
        };
        assert_eq!(Request::decode(&r.encode()).unwrap(), r);
        assert!(Request::decode("dtld-gcc-lto-request 1\nplugin x00\n").unwrap_err().contains("truncated"));
        assert!(Request::decode("junk").is_err());
        assert!(Request::decode("dtld-gcc-lto-request 1\nsym x61 0 1\nend\n").is_err());
        assert!(Request::decode("dtld-gcc-lto-request 1\noffer x61 0 1 x61\nsym x61 0 1\nend\n").is_err());
    }

    #[test]
    fn response_stream() {
        let mut out = Vec::new();
        out.extend_from_slice(format!("{RESPONSE_MAGIC}\n").as_bytes());
        write_record(&mut out, "error", "GCC LTO: lto-wrapper failed").unwrap();
        out.extend_from_slice(format!("object {} 5\n", hex(b"/tmp/cc.ltrans0.ltrans.o")).as_bytes());
        out.extend_from_slice(b"\x7fELF\n");
        write_record(&mut out, "library", "gcc").unwrap();
        write_record(&mut out, "library-path", "/x").unwrap();
        out.extend_from_slice(b"end\n");
        let r = Response::decode(&out).unwrap();
        assert_eq!(r.errors, vec!["GCC LTO: lto-wrapper failed"]);
        assert_eq!(r.objects, vec![("/tmp/cc.ltrans0.ltrans.o".to_string(), b"\x7fELF\n".to_vec())]);
        assert_eq!(r.libraries, vec!["gcc"]);
        assert_eq!(r.library_paths, vec!["/x"]);
        assert!(r.complete);
        // Truncated in the middle of an object, or before the end marker.
        let obj = out.windows(4).position(|w| w == b"\x7fELF").unwrap();
        assert!(Response::decode(&out[..obj + 2]).unwrap_err().contains("truncated in /tmp/cc.ltrans0.ltrans.o"));
        assert!(!Response::decode(&out[..out.len() - 4]).unwrap().complete);
        let cut = Response::decode(&out[..RESPONSE_MAGIC.len() + 1]).unwrap();
        assert!(!cut.complete);
        assert!(Response::decode(b"garbage\n").is_err());
    }

    #[test]
    fn mismatches() {
        let mut f = HostFile {
            path: CString::new("a.o").unwrap(),
            offset: 0,
            size: 0,
            display: "a.o".into(),
            expected: [(b"main".to_vec(), (LDPK_DEF, LDPR_PREVAILING_DEF)), (b"puts".to_vec(), (LDPK_UNDEF, 1))].into_iter().collect(),
            added: Some(vec![(b"main".to_vec(), LDPK_DEF), (b"puts".to_vec(), LDPK_UNDEF)]),
            fd: None,
            view: None,
        };
        assert_eq!(symbol_mismatch(&f), None);
        f.added = Some(vec![(b"main".to_vec(), LDPK_DEF), (b"puts".to_vec(), LDPK_DEF), (b"extra".to_vec(), LDPK_UNDEF)]);
        let m = symbol_mismatch(&f).unwrap();
        assert!(m.contains("extra (not read by dtld)") && m.contains("puts (kind 0 from the plugin, 2 read by dtld)"), "{m}");
    }
}

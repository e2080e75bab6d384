//! What dtld's two linker-plugin hosts do identically: the request wire format, the hook
//! registry and loading the plugin.
//!
//! LLVMgold (`goldhost.rs`) and GCC's LTO plugin (`elf/gcc_lto/host.rs`) each run in a helper
//! process that dtld starts with a text request. The two requests share a head (the plugin, the
//! output name and kind, the `-plugin-opt` values) and an encoding (hex strings, so any byte
//! survives `split_whitespace`); both hosts register the same three hooks and hand the plugin a
//! transfer vector that differs only in the callbacks each one serves. `plugin_api.rs` holds
//! the C interface itself; this module holds the host side both use, so a fix to how a plugin is
//! loaded or how a request is read lands once.
//!
//! The plugin ABI has no context pointer, so the registered hooks live in a process-wide
//! registry (a helper process hosts exactly one plugin). The lock is never held while calling
//! into the plugin.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write as _;
use std::sync::Mutex;

use super::plugin_api::{
    ClaimHook, Onload, Tv, VoidHook, API_VERSION, LDPS_ERR, LDPS_OK, LDPT_API_VERSION, LDPT_LINKER_OUTPUT, LDPT_NULL, LDPT_OPTION, LDPT_OUTPUT_NAME,
    LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK, LDPT_REGISTER_CLAIM_FILE_HOOK, LDPT_REGISTER_CLEANUP_HOOK,
};

// ---------------------------------------------------------------------------------------------
// The wire format.

/// Hex-encodes bytes for a request or response field (`x` + two digits per byte; never empty,
/// so `split_whitespace` keeps the field).
pub fn hex(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = Vec::with_capacity(b.len() * 2 + 1);
    s.push(b'x');
    for &x in b {
        s.push(DIGITS[usize::from(x >> 4)]);
        s.push(DIGITS[usize::from(x & 15)]);
    }
    // ASCII only.
    String::from_utf8(s).unwrap_or_default()
}

/// The inverse of `hex`; `None` for a malformed field.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.strip_prefix('x')?.as_bytes();
    if s.len() % 2 != 0 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    s.chunks_exact(2).map(|p| Some(nibble(p[0])? << 4 | nibble(p[1])?)).collect()
}

/// `unhex` of a UTF-8 string (paths and options are passed as Rust strings).
pub fn unhex_str(s: &str) -> Option<String> {
    String::from_utf8(unhex(s)?).ok()
}

/// The part of a helper request both hosts send: which plugin, and what the transfer vector
/// says about the output.
#[derive(Debug, Default, PartialEq)]
pub struct RequestHead {
    pub plugin: String,
    pub output_name: String,
    /// `LDPO_*`.
    pub linker_output: usize,
    /// `-plugin-opt=` values, in order (`LDPT_OPTION`).
    pub options: Vec<String>,
}

impl RequestHead {
    /// The request's first lines: the format's magic line, then the head.
    pub fn encode(&self, magic: &str) -> String {
        let mut s = format!("{magic}\n");
        let _ = writeln!(s, "plugin {}", hex(self.plugin.as_bytes()));
        let _ = writeln!(s, "output {}", hex(self.output_name.as_bytes()));
        let _ = writeln!(s, "linker-output {}", self.linker_output);
        for o in &self.options {
            let _ = writeln!(s, "option {}", hex(o.as_bytes()));
        }
        s
    }

    /// Reads one request line's fields if they belong to the head: `Some(true)` taken,
    /// `Some(false)` a head line that is malformed, `None` not a head line.
    pub fn decode_line(&mut self, fields: &[&str]) -> Option<bool> {
        let ok = match fields {
            ["plugin", p] => unhex_str(p).map(|p| self.plugin = p).is_some(),
            ["output", p] => unhex_str(p).map(|p| self.output_name = p).is_some(),
            ["linker-output", v] => v.parse().map(|v| self.linker_output = v).is_ok(),
            ["option", o] => unhex_str(o).map(|o| self.options.push(o)).is_some(),
            _ => return None,
        };
        Some(ok)
    }
}

/// Reads a request: the magic line, then lines that `line` (for the host's own records) or the
/// head take, up to `end`. `line` gets the request being built and a line's fields, and
/// returns false for a malformed line.
pub fn decode_request<R>(
    text: &str,
    magic: &str,
    not_ours: &str,
    mut line: impl FnMut(&mut R, &[&str]) -> bool,
    head: impl Fn(&mut R) -> &mut RequestHead,
) -> Result<R, String>
where
    R: Default,
{
    let mut lines = text.lines().enumerate();
    if lines.next().map(|(_, l)| l) != Some(magic) {
        return Err(not_ours.into());
    }
    let mut r = R::default();
    for (n, l) in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.as_slice() == ["end"] {
            return Ok(r);
        }
        let ok = match head(&mut r).decode_line(&f) {
            Some(ok) => ok,
            None => line(&mut r, &f),
        };
        if !ok {
            return Err(format!("request line {}: malformed: {l}", n + 1));
        }
    }
    Err("request is truncated".into())
}

// ---------------------------------------------------------------------------------------------
// Callback helpers.

/// Runs a callback body, turning a panic into `LDPS_ERR` (a panic must not unwind into C).
pub fn guarded(f: impl FnOnce() -> c_int) -> c_int {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(LDPS_ERR)
}

/// The file index behind a plugin handle (hosts hand out `index + 1`, so null is no file).
pub fn handle_index(h: *const c_void) -> Option<usize> {
    (h as usize).checked_sub(1)
}

/// The plugin's handle for file `index`.
pub fn handle_of(index: usize) -> *mut c_void {
    (index + 1) as *mut c_void
}

/// A C string from the plugin, lossily as UTF-8 (empty for null).
pub fn c_str_lossy(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: a non-null string the plugin passes to a callback is NUL-terminated and lives
        // during the call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

// ---------------------------------------------------------------------------------------------
// The hooks the plugin registers.

#[derive(Default)]
struct Hooks {
    claim: Option<ClaimHook>,
    all_read: Option<VoidHook>,
    cleanup: Option<VoidHook>,
    cleaned: bool,
}

static HOOKS: Mutex<Hooks> = Mutex::new(Hooks { claim: None, all_read: None, cleanup: None, cleaned: false });

fn with_hooks<R>(f: impl FnOnce(&mut Hooks) -> R) -> R {
    f(&mut HOOKS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The claim-file hook the plugin registered.
pub fn claim_hook() -> Option<ClaimHook> {
    with_hooks(|h| h.claim)
}

/// The all-symbols-read hook the plugin registered.
pub fn all_symbols_read_hook() -> Option<VoidHook> {
    with_hooks(|h| h.all_read)
}

/// Runs the plugin's cleanup hook, once per process whatever the number of calls (a fatal
/// message and the normal end may both ask for it).
pub fn run_cleanup() {
    let hook = with_hooks(|h| if std::mem::replace(&mut h.cleaned, true) { None } else { h.cleanup });
    if let Some(c) = hook {
        // SAFETY: the hook the plugin registered; it takes no arguments and the lock is not held.
        unsafe { c() };
    }
}

unsafe extern "C" fn cb_register_claim(hook: ClaimHook) -> c_int {
    guarded(|| {
        with_hooks(|h| h.claim = Some(hook));
        LDPS_OK
    })
}

unsafe extern "C" fn cb_register_all_read(hook: VoidHook) -> c_int {
    guarded(|| {
        with_hooks(|h| h.all_read = Some(hook));
        LDPS_OK
    })
}

unsafe extern "C" fn cb_register_cleanup(hook: VoidHook) -> c_int {
    guarded(|| {
        with_hooks(|h| h.cleanup = Some(hook));
        LDPS_OK
    })
}

// ---------------------------------------------------------------------------------------------
// Loading the plugin.

/// Loads the plugin `head` names and calls its `onload` with a transfer vector of the host's
/// own `callbacks` (tag, function address; given first, so a host's `message` is set before
/// the plugin reads its options), the head's values, the hook registrations and the options.
/// The library, the vector and its strings are never freed: the plugin's hooks run until the
/// process exits. Errors are worded for the host's messages, prefixed by `who`.
pub fn load(head: &RequestHead, who: &str, callbacks: &[(c_int, usize)]) -> Result<(), String> {
    // SAFETY: loading the user's plugin runs its initializers; it is never unloaded.
    let lib = unsafe { libloading::Library::new(&head.plugin) }.map_err(|e| format!("{who}cannot load plugin {}: {e}", head.plugin))?;
    // SAFETY: `onload` is the plugin API's entry point with the signature `Onload` declares.
    let onload: Onload = *unsafe { lib.get::<Onload>(b"onload\0") }.map_err(|e| format!("{who}{}: no onload: {e}", head.plugin))?;
    crate::util::keep::loaded_library(lib);

    let leak = |s: &str| -> Result<usize, String> { Ok(CString::new(s).map_err(|_| format!("{who}option contains a NUL byte: {s}"))?.into_raw() as usize) };
    let mut tv: Vec<Tv> = callbacks.iter().map(|&(tag, val)| Tv { tag, val }).collect();
    tv.extend([
        Tv { tag: LDPT_API_VERSION, val: API_VERSION },
        Tv { tag: LDPT_LINKER_OUTPUT, val: head.linker_output },
        Tv { tag: LDPT_OUTPUT_NAME, val: leak(&head.output_name)? },
        Tv { tag: LDPT_REGISTER_CLAIM_FILE_HOOK, val: cb_register_claim as *const () as usize },
        Tv { tag: LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK, val: cb_register_all_read as *const () as usize },
        Tv { tag: LDPT_REGISTER_CLEANUP_HOOK, val: cb_register_cleanup as *const () as usize },
    ]);
    for o in &head.options {
        tv.push(Tv { tag: LDPT_OPTION, val: leak(o)? });
    }
    tv.push(Tv { tag: LDPT_NULL, val: 0 });
    let tv: &'static mut [Tv] = crate::util::keep::slice(tv);
    // SAFETY: a valid, NULL-terminated transfer vector that outlives the plugin's use of it.
    let status = unsafe { onload(tv.as_mut_ptr()) };
    if status != LDPS_OK {
        return Err(format!("{who}{}: onload failed with status {status}", head.plugin));
    }
    if claim_hook().is_none() {
        return Err(format!("{who}the plugin registered no claim-file hook"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_roundtrip() {
        for b in [&b""[..], b"a b\n\0\xff"] {
            assert_eq!(unhex(&hex(b)).as_deref(), Some(b));
        }
        assert_eq!(unhex("x0"), None);
        assert_eq!(unhex("xzz"), None);
        assert_eq!(unhex("x0A").as_deref(), Some(&[10u8][..]));
        assert_eq!(hex(&[0x00, 0x7f, 0xab]), "x007fab");
        assert_eq!(unhex("00"), None);
        assert_eq!(unhex_str("xff"), None);
    }

    #[derive(Default, Debug, PartialEq)]
    struct Req {
        head: RequestHead,
        extra: Vec<String>,
    }

    fn decode(text: &str) -> Result<Req, String> {
        decode_request(
            text,
            "magic 1",
            "not a request",
            |r: &mut Req, f| match f {
                ["extra", v] => unhex_str(v).map(|v| r.extra.push(v)).is_some(),
                _ => false,
            },
            |r| &mut r.head,
        )
    }

    #[test]
    fn request_head() {
        let head = RequestHead { plugin: "/p/gold.so".into(), output_name: "a out".into(), linker_output: 3, options: vec!["O2".into(), "".into()] };
        let text = format!("{}extra {}\nend\n", head.encode("magic 1"), hex(b"e"));
        assert_eq!(decode(&text), Ok(Req { head, extra: vec!["e".into()] }));
        assert_eq!(decode("magic 2\nend\n"), Err("not a request".into()));
        assert_eq!(decode("magic 1\nplugin x0\n"), Err("request line 2: malformed: plugin x0".into()));
        assert_eq!(decode("magic 1\nwhat\nend\n"), Err("request line 2: malformed: what".into()));
        assert_eq!(decode("magic 1\nlinker-output 1\n"), Err("request is truncated".into()));
    }
}

//! The linker-plugin ABI (binutils' `include/plugin-api.h`), shared by dtld's two plugin hosts.
//!
//! dtld hosts two plugins written for GNU linkers: LLVM's `LLVMgold.so` (`goldhost.rs`, for the
//! ThinLTO thin link when `llvm-lto2` is missing) and GCC's `liblto_plugin.so` (`gcc/host.rs`,
//! which is how `gcc -flto` links at all). Both speak the same C interface: a transfer vector of
//! tagged callbacks handed to the plugin's `onload`, symbol records with `LDPK_*` kinds and
//! `LDPR_*` resolutions, and a C-variadic `message` callback. This module holds that interface
//! once: the numeric values (they are ABI, copied from the header's enums), the `repr(C)`
//! layouts for x86-64, and the printf-style formatting of plugin messages. It holds no state;
//! each host keeps its own.

use std::ffi::{c_char, c_int, c_void, CStr};

// Transfer-vector tags (`enum ld_plugin_tag`).
pub const LDPT_NULL: c_int = 0;
pub const LDPT_API_VERSION: c_int = 1;
pub const LDPT_LINKER_OUTPUT: c_int = 3;
pub const LDPT_OPTION: c_int = 4;
pub const LDPT_REGISTER_CLAIM_FILE_HOOK: c_int = 5;
pub const LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK: c_int = 6;
pub const LDPT_REGISTER_CLEANUP_HOOK: c_int = 7;
pub const LDPT_ADD_SYMBOLS: c_int = 8;
pub const LDPT_GET_SYMBOLS: c_int = 9;
pub const LDPT_ADD_INPUT_FILE: c_int = 10;
pub const LDPT_MESSAGE: c_int = 11;
pub const LDPT_GET_INPUT_FILE: c_int = 12;
pub const LDPT_RELEASE_INPUT_FILE: c_int = 13;
pub const LDPT_ADD_INPUT_LIBRARY: c_int = 14;
pub const LDPT_OUTPUT_NAME: c_int = 15;
pub const LDPT_SET_EXTRA_LIBRARY_PATH: c_int = 16;
pub const LDPT_GET_VIEW: c_int = 18;
pub const LDPT_GET_SYMBOLS_V2: c_int = 25;
pub const LDPT_GET_SYMBOLS_V3: c_int = 28;

/// `LD_PLUGIN_API_VERSION`, the value of `LDPT_API_VERSION`.
pub const API_VERSION: usize = 1;

// Output kinds (`enum ld_plugin_output_file_type`).
pub const LDPO_REL: usize = 0;
pub const LDPO_EXEC: usize = 1;
pub const LDPO_DYN: usize = 2;
pub const LDPO_PIE: usize = 3;

// Status values (`enum ld_plugin_status`).
pub const LDPS_OK: c_int = 0;
pub const LDPS_NO_SYMS: c_int = 1;
pub const LDPS_BAD_HANDLE: c_int = 2;
pub const LDPS_ERR: c_int = 3;

// Message levels (`enum ld_plugin_level`).
pub const LDPL_WARNING: c_int = 1;
pub const LDPL_ERROR: c_int = 2;
pub const LDPL_FATAL: c_int = 3;

// Symbol kinds (`enum ld_plugin_symbol_kind`, the `def` byte).
#[cfg(test)]
pub const LDPK_DEF: u8 = 0;
pub const LDPK_WEAKDEF: u8 = 1;
pub const LDPK_UNDEF: u8 = 2;
pub const LDPK_WEAKUNDEF: u8 = 3;
pub const LDPK_COMMON: u8 = 4;

// Visibilities (`enum ld_plugin_symbol_visibility`).
pub const LDPV_PROTECTED: u8 = 1;
pub const LDPV_INTERNAL: u8 = 2;
pub const LDPV_HIDDEN: u8 = 3;

// Resolutions (`enum ld_plugin_symbol_resolution`).
pub const LDPR_UNKNOWN: c_int = 0;
pub const LDPR_UNDEF: c_int = 1;
pub const LDPR_PREVAILING_DEF: c_int = 2;
pub const LDPR_PREVAILING_DEF_IRONLY: c_int = 3;
pub const LDPR_PREEMPTED_REG: c_int = 4;
pub const LDPR_PREEMPTED_IR: c_int = 5;
pub const LDPR_RESOLVED_IR: c_int = 6;
pub const LDPR_RESOLVED_EXEC: c_int = 7;
pub const LDPR_RESOLVED_DYN: c_int = 8;
pub const LDPR_PREVAILING_DEF_IRONLY_EXP: c_int = 9;

#[cfg(test)]
/// The names GCC's resolution file (and `ld --plugin-save-temps`) uses for `LDPR_*` values.
pub fn resolution_name(r: c_int) -> &'static str {
    match r {
        LDPR_UNDEF => "UNDEF",
        LDPR_PREVAILING_DEF => "PREVAILING_DEF",
        LDPR_PREVAILING_DEF_IRONLY => "PREVAILING_DEF_IRONLY",
        LDPR_PREEMPTED_REG => "PREEMPTED_REG",
        LDPR_PREEMPTED_IR => "PREEMPTED_IR",
        LDPR_RESOLVED_IR => "RESOLVED_IR",
        LDPR_RESOLVED_EXEC => "RESOLVED_EXEC",
        LDPR_RESOLVED_DYN => "RESOLVED_DYN",
        LDPR_PREVAILING_DEF_IRONLY_EXP => "PREVAILING_DEF_IRONLY_EXP",
        _ => "UNKNOWN",
    }
}

/// `struct ld_plugin_tv`: a tag and a value that is an integer, a string or a function.
#[repr(C)]
pub struct Tv {
    pub tag: c_int,
    pub val: usize,
}

/// `struct ld_plugin_input_file`.
#[repr(C)]
pub struct PluginInputFile {
    pub name: *const c_char,
    pub fd: c_int,
    pub offset: i64,
    pub filesize: i64,
    pub handle: *mut c_void,
}

/// `struct ld_plugin_symbol` on x86-64 (48 bytes). `def` is an `int` in old headers and a `char`
/// followed by `symbol_type`, `section_kind` and an unused byte in new ones; on little-endian
/// its low byte is the kind either way.
#[repr(C)]
pub struct PluginSymbol {
    pub name: *mut c_char,
    pub version: *mut c_char,
    pub def: c_int,
    pub visibility: c_int,
    pub size: u64,
    pub comdat_key: *mut c_char,
    pub resolution: c_int,
}

impl PluginSymbol {
    /// The `LDPK_*` kind.
    pub fn kind(&self) -> u8 {
        (self.def & 0xff) as u8
    }

    /// The name as bytes (empty for a null pointer).
    ///
    /// # Safety
    /// `name` must be null or a valid C string.
    pub unsafe fn name_bytes(&self) -> &[u8] {
        if self.name.is_null() {
            b""
        } else {
            // SAFETY: a non-null `name` in a plugin symbol is a NUL-terminated string owned by the plugin.
            unsafe { CStr::from_ptr(self.name) }.to_bytes()
        }
    }
}

pub type ClaimHook = unsafe extern "C" fn(*const PluginInputFile, *mut c_int) -> c_int;
pub type VoidHook = unsafe extern "C" fn() -> c_int;
pub type Onload = unsafe extern "C" fn(*mut Tv) -> c_int;

/// Whether a kind is an undefined reference.
pub fn is_undef(kind: u8) -> bool {
    kind == LDPK_UNDEF || kind == LDPK_WEAKUNDEF
}

/// Formats a printf format with up to four integer or pointer arguments (all that LLVMgold and
/// GCC's plugin pass to `message`).
///
/// `ld_plugin_message` is C-variadic. On x86-64 SysV the first integer/pointer variadic
/// arguments travel in the same registers as fixed ones, so a host can declare its callback with
/// four extra `usize` parameters and hand them here.
///
/// # Safety
/// `%s` arguments must be null or valid C strings.
pub unsafe fn format_message(fmt: &[u8], args: [usize; 4]) -> String {
    let mut out = Vec::new();
    let mut next = args.iter().copied();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let start = i - 1;
        // Flags, width and precision are ignored; length modifiers pick the width of integers.
        while i < fmt.len() && matches!(fmt[i], b'-' | b'+' | b' ' | b'#' | b'0'..=b'9' | b'.') {
            i += 1;
        }
        let mut long = false;
        while i < fmt.len() && matches!(fmt[i], b'l' | b'z' | b'j' | b't' | b'h') {
            long |= matches!(fmt[i], b'l' | b'z' | b'j' | b't');
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            out.extend_from_slice(&fmt[start..]);
            break;
        };
        i += 1;
        match conv {
            b'%' => out.push(b'%'),
            b's' => {
                let p = next.next().unwrap_or(0) as *const c_char;
                if p.is_null() {
                    out.extend_from_slice(b"(null)");
                } else {
                    // SAFETY: a `%s` argument of a plugin message is a NUL-terminated string (the caller's contract).
                    out.extend_from_slice(unsafe { CStr::from_ptr(p) }.to_bytes());
                }
            }
            b'd' | b'i' => {
                let v = next.next().unwrap_or(0);
                let v = if long { v as i64 } else { v as u32 as i32 as i64 };
                out.extend_from_slice(v.to_string().as_bytes());
            }
            b'u' => {
                let v = next.next().unwrap_or(0);
                let v = if long { v as u64 } else { v as u32 as u64 };
                out.extend_from_slice(v.to_string().as_bytes());
            }
            b'x' | b'p' => {
                let v = next.next().unwrap_or(0);
                let v = if long || conv == b'p' { v as u64 } else { v as u32 as u64 };
                out.extend_from_slice(format!("{}{v:x}", if conv == b'p' { "0x" } else { "" }).as_bytes());
            }
            b'c' => out.push(next.next().unwrap_or(0) as u8),
            _ => out.extend_from_slice(&fmt[start..i]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn layouts() {
        assert_eq!(std::mem::size_of::<PluginSymbol>(), 48);
        assert_eq!(std::mem::size_of::<PluginInputFile>(), 40);
        assert_eq!(std::mem::size_of::<Tv>(), 16);
    }

    #[test]
    fn messages() {
        let s = CString::new("boom").unwrap();
        // SAFETY: `%s` gets a live CString; the other conversions take integers.
        let m = unsafe { format_message(b"%s: %d%% of %zu, %lld %q", [s.as_ptr() as usize, (-3i32) as u32 as usize, 7, (-9i64) as usize]) };
        assert_eq!(m, "boom: -3% of 7, -9 %q");
        // SAFETY: integer conversions only.
        assert_eq!(unsafe { format_message(b"%u/%x", [5, 255, 0, 0]) }, "5/ff");
        // SAFETY: a null `%s` is printed as "(null)", never read.
        assert_eq!(unsafe { format_message(b"%s", [0, 0, 0, 0]) }, "(null)");
        // SAFETY: integer conversions only.
        assert_eq!(unsafe { format_message(b"unsupported linker output %i", [7, 0, 0, 0]) }, "unsupported linker output 7");
    }

    #[test]
    fn resolution_names() {
        assert_eq!(resolution_name(LDPR_PREVAILING_DEF_IRONLY_EXP), "PREVAILING_DEF_IRONLY_EXP");
        assert_eq!(resolution_name(LDPR_RESOLVED_DYN), "RESOLVED_DYN");
        assert_eq!(resolution_name(42), "UNKNOWN");
    }
}

//! `--thinlto-index-only` in place, through the user's `LLVMgold.so`: no file staged, every
//! index and imports file written once, by LLVM, where lld writes it.
//!
//! The `llvm-lto2` path (`thinlink.rs`) needs each module as a file at its module ID and writes
//! the shards next to it, so an index-only link of OpenSSL wrote 1,000 archive members out,
//! had 1,000 shards written beside them and copied them to their place: more file-system work
//! than the thin link itself (issue 15). LLVMgold takes module bytes from the host
//! (`get_view`), names each module as the host says (lld's `lib.a(m.o at 8)`), and writes the
//! files with lld's own `--thinlto-prefix-replace` code (`createWriteIndexesThinBackend`) under
//! the link's working directory, exactly as lld. So when every resolution dtld computed can be
//! said in gold's terms (`expressible`: the `LDPR_*` value dtld would pass makes LLVMgold derive
//! exactly dtld's `p`/`l`/`x` bits, and there is no `r`), the thin link runs there; otherwise (and
//! if the helper finds the plugin's symbol table differing from dtld's) `llvm-lto2` does it.
//!
//! LLVMgold ends an index-only link with `exit(0)`, so it runs in a process of its own: a fork
//! of dtld (`goldhost::run_forked`), which hosts the plugin over the module bytes dtld already
//! has mapped and the resolutions already in memory. Where the process cannot fork, the modules
//! reach a helper (`goldhost.rs`, `dtld --dtld-gold-helper -`) in one anonymous memory file on
//! its standard input: the request text, then every module's bytes; the helper maps it and
//! hands the plugin views into it (`DTLD_THIN_LINK=helper` chooses that way).

use crate::util::fasthash::FastMap;
use std::io::Write as _;
use std::os::fd::FromRawFd as _;
use std::path::Path;
use std::process::{Command, Stdio};

use super::goldhost;
use super::plugin_api::{LDPO_DYN, LDPO_EXEC, LDPO_PIE};
use super::request::LtoRequest;
use super::thinlink::CodegenSettings;
use crate::error::{Error, Result};

/// What the in-place thin link did.
pub enum Outcome {
    /// The index (and imports) files are written.
    Written,
    /// It could not be done this way (the reason, for `--verbose`); nothing was written.
    Fallback(String),
}

/// Whether a section name is a C identifier (LLVMgold then keeps the symbol for
/// `__start_`/`__stop_`: `x`).
fn c_identifier(s: &[u8]) -> bool {
    match s.split_first() {
        Some((c, rest)) => (c.is_ascii_alphabetic() || *c == b'_') && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_'),
        None => false,
    }
}

/// The `LDPO_*` output kind under which LLVMgold derives exactly the `p`/`l`/`x` bits dtld
/// computed for every symbol, from the `LDPR_*` value `goldhost::compute_resolutions` gives it;
/// or why there is none. LLVMgold's rules (`addModule`): `p` for a prevailing resolution of a
/// definition; `x` for `PREVAILING_DEF` or a C-identifier section; `l` unless `UNDEF`, when the
/// output is an executable or any module gives the name a non-default visibility. `r` has no
/// `LDPR_*` value.
pub fn expressible(req: &LtoRequest) -> std::result::Result<usize, String> {
    if req.modules.iter().any(|m| m.bitcode.ir.modules.iter().any(|im| !im.thin)) {
        return Err("a module is regular LTO".into());
    }
    // Names with a prevailing bitcode definition: whether it is `x`.
    let mut prevailing: FastMap<&[u8], bool> = FastMap::default();
    let mut default_vis: FastMap<&[u8], bool> = FastMap::default();
    let mut dso = false;
    for m in &req.modules {
        for (k, f) in m.flags.iter().enumerate() {
            let s = m.bitcode.sym(k);
            let d = default_vis.entry(s.name).or_insert(true);
            *d &= s.visibility() == 0;
            if !s.undefined() && f.contains('p') {
                prevailing.insert(s.name, f.contains('x'));
                dso |= !f.contains('l');
            }
        }
    }
    let kind = match (req.pic, dso) {
        (false, _) => LDPO_EXEC,
        (true, false) => LDPO_PIE,
        (true, true) => LDPO_DYN,
    };
    let executable = kind != LDPO_DYN;
    for m in &req.modules {
        for (k, f) in m.flags.iter().enumerate() {
            let s = m.bitcode.sym(k);
            let has = |c: char| f.contains(c);
            if has('r') || f.chars().any(|c| !"plx".contains(c)) {
                return Err(format!("{}: symbol {} has resolution '{f}'", m.bitcode.input.name, String::from_utf8_lossy(s.name)));
            }
            // The LDPR_* value compute_resolutions picks, as (prevailing, PREVAILING_DEF, UNDEF).
            let (p, def_x, undef) =
                if s.undefined() { (false, false, !prevailing.contains_key(s.name) && !has('l')) } else { (has('p'), has('p') && has('x'), false) };
            let x = def_x || c_identifier(m.bitcode.ir.uncommon(s).section_name);
            let l = !undef && (executable || !default_vis[s.name]);
            // `x` on a symbol that does not prevail only makes LTO keep the prevailing bitcode
            // definition (`VisibleOutsideSummary`, an external partition): nothing when none
            // prevails (a definition in a native object or a shared library), the same as its
            // own `x` when it has one. lld gives a reference `x` when a native object uses the
            // symbol, and the definition then has it too.
            let x_implied = !p && has('x') && prevailing.get(s.name).is_none_or(|&def_x| def_x);
            if (p, x || x_implied, l) != (has('p'), has('x'), has('l')) {
                return Err(format!(
                    "{}: symbol {} has resolution '{f}', which LLVMgold cannot be told",
                    m.bitcode.input.name,
                    String::from_utf8_lossy(s.name)
                ));
            }
        }
    }
    Ok(kind)
}

/// An anonymous memory file holding `parts` one after the other.
fn memory_file(parts: &[&[u8]]) -> std::io::Result<std::fs::File> {
    // SAFETY: memfd_create with a NUL-terminated name; the result is a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c"dtld-thin-link".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nothing else.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    let total: usize = parts.iter().map(|p| p.len()).sum();
    f.set_len(total as u64)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut f);
    for p in parts {
        w.write_all(p)?;
    }
    w.flush()?;
    drop(w);
    Ok(f)
}

/// Runs the index-only thin link of `req` (module IDs `names`, already lld's) through LLVMgold
/// in a helper process in the current directory.
pub fn run(plugin: &Path, req: &LtoRequest, cg: &CodegenSettings, names: &[String]) -> Result<Outcome> {
    let opts = req.opts;
    let kind = match expressible(req) {
        Ok(k) => k,
        Err(why) => return Ok(Outcome::Fallback(why)),
    };
    let mut options = goldhost::plugin_options(opts, cg, None, opts.emit_imports_files);
    if let Some((old, new, _)) = &opts.prefix_replace {
        if old.contains(';') || new.contains(';') {
            return Ok(Outcome::Fallback("a --thinlto-prefix-replace path contains ';'".into()));
        }
        options.push(format!("thinlto-prefix-replace={old};{new}"));
    }
    let mut modules: Vec<goldhost::ViewModule> = req
        .modules
        .iter()
        .zip(names)
        .map(|(m, name)| goldhost::ViewModule {
            name: name.as_str(),
            data: m.bitcode.input.data,
            syms: (0..m.bitcode.syms.len()).map(|k| (m.bitcode.sym(k).name, m.flags[k].as_str())).collect(),
            skip: false,
        })
        .collect();
    // Bitcode files the link did not need get LLVM's skip index, as lld writes them.
    let lazy_names: Vec<String> = req.lazy.iter().map(|i| super::naming::module_name(i, Some(opts), req.format)).collect();
    for (input, name) in req.lazy.iter().zip(&lazy_names) {
        modules.push(goldhost::ViewModule { name, data: input.data, syms: Vec::new(), skip: true });
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(m) = modules.iter().find(|m| !seen.insert(m.name)) {
        return Ok(Outcome::Fallback(format!("two bitcode files are named {}", m.name)));
    }
    let forked = !super::llvm::thin_link_forced("helper");
    let out = match forked.then(|| goldhost::run_forked(plugin, req.preload, &req.output.to_string_lossy(), kind, &options, &modules)).flatten() {
        Some(out) => out,
        None => {
            let exe = std::env::current_exe()
                .map_err(|e| Error::new(format!("thin link (LLVMgold): cannot find the dtld executable: {}", crate::error::io_error(&e))))?;
            let text = goldhost::view_request(plugin, &req.output.to_string_lossy(), kind, &options, &modules);
            let mut parts: Vec<&[u8]> = vec![text.as_bytes()];
            parts.extend(modules.iter().map(|m| m.data));
            let input =
                memory_file(&parts).map_err(|e| Error::new(format!("thin link (LLVMgold): cannot create its input: {}", crate::error::io_error(&e))))?;
            Command::new(&exe)
                .arg(goldhost::HELPER_FLAG)
                .arg("-")
                .stdin(Stdio::from(input))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| Error::new(format!("thin link (LLVMgold): cannot run {}: {}", exe.display(), crate::error::io_error(&e))))?
        }
    };
    if out.status.code() == Some(goldhost::HELPER_DIFFERS) {
        let why = String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string();
        return Ok(Outcome::Fallback(why));
    }
    req.diag.forward(&goldhost::check_helper(&out)?);
    Ok(Outcome::Written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_identifiers() {
        assert!(c_identifier(b"my_sec"));
        assert!(c_identifier(b"_x1"));
        assert!(!c_identifier(b".text.x"));
        assert!(!c_identifier(b"1a"));
        assert!(!c_identifier(b""));
    }
}

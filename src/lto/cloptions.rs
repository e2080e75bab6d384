//! The user's LLVM options (`-mllvm`, `-plugin-opt=-...`; lld-link's `/mllvm:`) checked by
//! LLVM's own option parser when the command line is read, as lld checks them: an unknown
//! option is an error of every link, with bitcode or without. Build systems probe the linker
//! that way (the Linux kernel's `ld-option` runs `$(LD) -mllvm <option> -v` and uses the
//! option only if that fails), so a linker that accepts any option makes them pass an option
//! the thin link then refuses, or drop none where they should.
//!
//! lld has LLVM linked in; dtld's LLVM is the library it loads for LTO (`inproc.rs`), so the
//! check loads it, and only when such options are given. The parse leaves every option at its
//! default again, so the thin link's own parse (`inproc.rs`) starts from scratch; the library
//! loaded here is the one a thin link in this process must use (`LtoOptions::llvm_loaded`).

use std::path::PathBuf;

use super::options::LtoOptions;
use super::{inproc, llvm};

/// How the options are parsed and their errors worded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// ld.lld's `parseClangOption`: each option on its own, named by the program as invoked;
    /// each failure is `error: <spelling>: <LLVM's words>`.
    Lld,
    /// lld-link (and MinGW, which is lld-link underneath): one parse of all of them, named
    /// `lld-link (LLVM option parsing)`; LLVM's words are printed as they are and the link
    /// ends there with exit status 1.
    LldLink,
}

/// What the check found.
#[derive(Default)]
pub struct Checked {
    /// `Style::Lld`: lld's error messages. `Style::LldLink`: LLVM's words, to print verbatim.
    pub errors: Vec<String>,
    /// The options could not be checked (no library for the link's LLVM): said as a warning.
    pub warning: Option<String>,
    /// The library the check loaded.
    pub loaded: Option<PathBuf>,
}

/// LLVM's verdict on `opts`, each `(spelling, option)`: the spelling is how lld names the
/// command-line option that carried it (`-mllvm`, `--mllvm`, `-plugin-opt=-`). `o` is the
/// link's finished LTO options (which LLVM installation the link uses).
pub fn check(o: &LtoOptions, opts: &[(String, String)], style: Style) -> Checked {
    if opts.is_empty() {
        return Checked::default();
    }
    let Some(dir) = llvm::first_dir(o) else {
        return Checked { warning: Some(unchecked(opts, "no LLVM installation was found")), ..Checked::default() };
    };
    let Some(path) = inproc::find(&dir) else {
        return Checked { warning: Some(unchecked(opts, &format!("dtld's LTO library for {} was not found", dir.display()))), ..Checked::default() };
    };
    let shim = match inproc::Shim::load(&path) {
        Ok(s) => s,
        Err(e) => return Checked { warning: Some(unchecked(opts, &e)), ..Checked::default() },
    };
    let values: Vec<String> = opts.iter().map(|(_, v)| v.clone()).collect();
    let errors = match style {
        Style::Lld => shim
            .check_options(crate::diag::program(), &values, false)
            .into_iter()
            .filter_map(|(i, words)| opts.get(i).map(|(spelling, _)| format!("{spelling}: {}", words.trim())))
            .collect(),
        Style::LldLink => shim.check_options("lld-link (LLVM option parsing)", &values, true).into_iter().map(|(_, words)| words).collect(),
    };
    Checked { errors, warning: None, loaded: Some(path) }
}

fn unchecked(opts: &[(String, String)], why: &str) -> String {
    let names: Vec<&str> = opts.iter().map(|(_, v)| v.as_str()).collect();
    format!("LLVM options not checked ({why}): {}", names.join(" "))
}

//! `.drectve` sections: linker options embedded in objects (`/defaultlib`, `/export`,
//! `/include`, `/alternatename`, `/failifmismatch`, ...), lld's `LinkerDriver::parseDirectives`.
//!
//! It exists apart from loading because directives are command-line options arriving late, with
//! their own rules for what an object may ask for.

use std::path::{Path, PathBuf};

use super::Resolver;
use crate::coff::config::CoffInput;
use crate::coff::drectve::{self, Directive, ExportSource, ExportSpec};
use crate::coff::symtab::FileId;

impl Resolver<'_> {
    pub(super) fn parse_directives(&mut self, f: FileId, text: &[u8]) {
        self.log(&format!("Directives: {}: {}", self.r.files[f].name, String::from_utf8_lossy(text)));
        let ds = match drectve::parse(text) {
            Ok(d) => d,
            Err(e) => {
                self.errors.push(format!("{}: {e}", self.r.files[f].name));
                return;
            }
        };
        for d in ds {
            match d {
                Directive::DefaultLib(l) => self.add_default_lib(&l),
                Directive::Export(e) => {
                    // lld skips a directive export it has seen (headers repeat them in every
                    // object) and keeps the others for `fixupExports` to merge.
                    let e = ExportSpec { source: ExportSource::Directives { early: !self.exports_added }, ..e };
                    if !self.directive_exports.insert(ExportSpec { source: ExportSource::default(), ..e.clone() }) {
                        continue;
                    }
                    if self.export_names.insert(e.name.clone()) {
                        self.add_undefined(e.internal.as_deref().unwrap_or(&e.name).to_string().as_str(), false);
                    }
                    self.export_specs.push(e);
                }
                Directive::Include(n) => {
                    self.add_undefined(&n, false);
                    self.include.push(n);
                }
                Directive::AlternateName { from, to } => self.alternate_names.push((from, to)),
                Directive::ExcludeSymbols(v) => self.r.exclude_symbols.extend(v),
                Directive::Merge { from, to } => self.r.merges.push((from, to)),
                Directive::Section { name, characteristics } => self.r.section_attrs.push((name, characteristics)),
                Directive::AlignComm { name, alignment } => {
                    let a = self.r.align_comm.entry(name).or_insert(alignment);
                    *a = (*a).max(alignment);
                }
                Directive::FailIfMismatch { key, value } => {
                    let src = self.r.files[f].name.clone();
                    self.fail_if_mismatch(&key, &value, src);
                }
                // lld's `parseDirectives`: an option it does not know is warned about (when
                // it starts with `-`: a `/` word is an input), and any option or input it does
                // not take from `.drectve` is an error naming the object.
                Directive::Unknown(t) => {
                    let spelling = match crate::driver::link::option_spelling(&t) {
                        Some(s) => s,
                        None => {
                            if t.starts_with('-') {
                                self.config.diag.warn(&format!("ignoring unknown argument: {t}"));
                            }
                            t
                        }
                    };
                    self.errors.push(format!("{spelling} is not allowed in .drectve ({})", self.r.files[f].name));
                }
                _ => {}
            }
        }
    }

    /// lld-link's `findLib` (with MinGW's `lib<name>.a` first) for `/defaultlib:`.
    pub(super) fn add_default_lib(&mut self, name: &str) {
        // lld compares the libraries as `findLib` resolves them: `.lib` added to a name
        // without an extension on both sides (`/nodefaultlib:std64.lib` cancels `std64`).
        let key = |n: &str| {
            let l = n.to_ascii_lowercase();
            if Path::new(&l).extension().is_none() {
                format!("{l}.lib")
            } else {
                l
            }
        };
        if self.config.no_default_all || self.config.no_default_libs.iter().any(|n| key(n) == key(name)) {
            return;
        }
        if self.default_libs.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return;
        }
        self.default_libs.push(name.to_string());
        let mut cands = Vec::new();
        if self.config.mingw && !name.contains('/') && !name.contains('\\') {
            let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
            cands.push(format!("lib{stem}.a"));
        }
        if Path::new(name).extension().is_none() {
            cands.push(format!("{name}.lib"));
        } else {
            cands.push(name.to_string());
        }
        for c in &cands {
            if Path::new(c).is_absolute() && Path::new(c).exists() {
                self.enqueue_path(CoffInput::new(PathBuf::from(c), false));
                return;
            }
            // lld's `findFile`: the current directory is the first search path.
            for d in std::iter::once(Path::new("")).chain(self.config.lib_paths.iter().map(PathBuf::as_path)) {
                let p = d.join(c);
                if p.exists() {
                    self.enqueue_path(CoffInput::new(p, false));
                    return;
                }
            }
        }
        // lld-link 22 opens what `findLib` returned, and fails on a library it cannot find
        // (MinGW's `findLibMinGW` having the last word there).
        let shown = if self.config.mingw { cands.first() } else { cands.last() }.cloned().unwrap_or_default();
        self.errors.push(format!("could not open '{shown}': No such file or directory"));
    }

    /// lld's `checkFailIfMismatch`: every `/failifmismatch:key=value` (command line and
    /// `.drectve`) must agree on each key's value.
    pub(super) fn fail_if_mismatch(&mut self, key: &str, value: &str, source: String) {
        if let Some((old, old_src)) = self.must_match.get(key) {
            if old != value {
                self.errors.push(format!("/failifmismatch: mismatch detected for '{key}':\n>>> {old_src} has value {old}\n>>> {source} has value {value}"));
            }
        }
        self.must_match.insert(key.to_string(), (value.to_string(), source));
    }
}

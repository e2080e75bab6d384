//! `--wrap=foo` while symbols are bound: a reference written `foo` binds to `__wrap_foo` and
//! one written `__real_foo` to `foo`, as the files are read, but what they extract and how
//! `foo` is bound follow lld, which reads the files with the names they wrote and redirects
//! only afterwards (`addWrappedSymbols`): a strong `foo` still extracts `foo`'s member, and
//! `__real_foo` binds `foo` after the files, with `foo`'s own binding.
//!
//! Why it exists: those rules are the part of resolution that only `--wrap` needs; apart from
//! `resolve.rs` (over its size limit) they read as one piece.

use super::state::{leak_name, Resolver, Step, WrapRefs};
use crate::elf::symtab::NameKey;
use crate::elf::symtab::{Def, FileId, SymbolId};

impl Resolver<'_> {
    /// The steps of an undefined reference written as `written` and bound to `id` (named `name`):
    /// a plain reference, or under `--wrap=foo` one written `foo` (bound to `__wrap_foo`, and
    /// extracting `foo`'s member as in lld) or `__real_foo` (bound to `foo`, extracting nothing
    /// until `bind_wrapped`).
    pub(super) fn wrapped_steps(&mut self, written: &'static [u8], name: &'static [u8], id: SymbolId, weak: bool, native: bool, steps: &mut Vec<Step>) {
        if written == name {
            steps.push(Step::Undefined { id, weak, native });
        } else if written.strip_prefix(b"__real_") == Some(name) {
            steps.push(Step::Real { id, weak, native });
        } else {
            steps.push(Step::Undefined { id, weak, native });
            let wid = self.intern(written);
            steps.push(Step::Wrapped { id: wid, weak });
        }
    }

    /// A reference written `foo` that `--wrap=foo` bound to `__wrap_foo` (`id` is `foo`'s): lld
    /// reads the files before it redirects, so a strong one extracts the member defining `foo`
    /// (and makes a library defining it needed); returns that member.
    pub(super) fn add_wrapped_reference(&mut self, id: SymbolId, weak: bool) -> Option<FileId> {
        let w = self.wrap_refs.entry(id).or_default();
        w.renamed = true;
        if weak {
            // lld: a weak reference to a lazy symbol makes its binding weak, also after
            // `bind_wrapped` gave it `__real_foo`'s (an object LTO generated that still refers
            // to `foo` weakly: the redirected `__real_foo` references are then weak ones).
            let sym = &mut self.r.symbols[id];
            if matches!(sym.def, Def::Lazy(_)) {
                sym.strong_ref = false;
                sym.strong_ref_native = false;
            }
            return None;
        }
        w.renamed_strong = true;
        match self.r.symbols[id].def {
            Def::Lazy(m) => Some(m),
            Def::Shared(df, _) => {
                self.r.dso_needed[df] = true;
                None
            }
            _ => None,
        }
    }

    /// A reference written `__real_foo`, bound to `foo` (`id`): it neither extracts nor binds
    /// while the files are read (lld binds `foo` after them, `bind_wrapped`); after LTO, where
    /// lld resolves it against `__real_foo` and redirects it only then, it changes nothing.
    pub(super) fn add_real_reference(&mut self, id: SymbolId, weak: bool, native: bool) {
        let sym = &mut self.r.symbols[id];
        sym.obj_ref = true;
        sym.obj_ref_native |= native;
        if self.lto_first_file.is_some() {
            return;
        }
        let w = self.wrap_refs.entry(id).or_default();
        w.real = true;
        w.real_strong |= !weak;
    }

    /// Whether lld's symbol table would have `foo` (`id`, named `w`) when it applies `--wrap`:
    /// a file refers to it as written (an object's reference, bound as `__wrap_foo`; a
    /// library's), something defines it (also lazily), or `-u`, a script (reading or assigning it)
    /// or `--defsym` names it.
    fn names_wrapped(&self, id: SymbolId, w: &str, refs: WrapRefs) -> bool {
        let sym = &self.r.symbols[id];
        let config = self.config;
        refs.renamed
            || !matches!(sym.def, Def::Undefined)
            || sym.dso_ref
            || config.undefined.iter().any(|u| u == w)
            || config.script.referenced_symbols().iter().any(|n| n == w)
            || config.script.assigns().iter().any(|a| a.name == w)
            || config.defsym.iter().any(|(n, e)| n == w || crate::elf::config::defsym_target(e) == Some(w))
    }

    /// After the files, as lld's `addWrappedSymbols`: for `--wrap=foo` with `__real_foo`
    /// referenced, `foo` is referenced with the binding the files gave it (weak when every
    /// reference written `foo` was weak, so nothing is extracted then; strong when `foo` was
    /// not referenced at all), and then takes `__real_foo`'s binding, which decides whether an
    /// unresolved `foo` is an error.
    pub(super) fn bind_wrapped(&mut self) {
        let config = self.config;
        for (k, w) in config.wrap.iter().enumerate() {
            if config.wrap[..k].contains(w) {
                continue;
            }
            let Some(id) = self.r.lookup(w.as_bytes()) else { continue };
            let Some(refs) = self.wrap_refs.get(&id).copied() else { continue };
            if !refs.real {
                continue;
            }
            if !self.names_wrapped(id, w, refs) {
                // lld's `addWrappedSymbols` skips a `foo` its symbol table does not have (no
                // file, `-u`, script or `--defsym` names it): the references written
                // `__real_foo` keep that name, an undefined `__real_foo` (its error, its
                // `.dynsym` entry), and the objects LTO generates are read without the wrap.
                // (`__real_foo` itself is in the table as the placeholder `start` interns for
                // LTO; it trades names with `foo`'s symbol, which the references bound to.)
                let real = leak_name(&format!("__real_{w}"));
                let placeholder = self.r.lookup(real);
                let bare = |s: &crate::elf::symtab::Symbol| matches!(s.def, Def::Undefined) && !s.obj_ref && !s.dso_ref;
                if placeholder.is_none_or(|p| bare(&self.r.symbols[p])) {
                    let name = self.r.symbols[id].name;
                    self.r.by_name.insert(NameKey::new(real), id);
                    self.r.symbols[id].name = real;
                    match placeholder {
                        Some(p) => {
                            self.r.by_name.insert(NameKey::new(name), p);
                            self.r.symbols[p].name = name;
                        }
                        None => {
                            self.r.by_name.remove(&NameKey::new(name));
                        }
                    }
                    self.wrap_active.retain(|x| x != w);
                }
            }
            if !refs.renamed || refs.renamed_strong {
                self.add_unused_undefined(id);
            }
            // The binding outlives LTO (lld sets it on the symbol, not on a file's reference).
            let sym = &mut self.r.symbols[id];
            sym.strong_ref |= refs.real_strong;
            sym.strong_ref_native |= refs.real_strong;
        }
    }
}

//! Diagnostics of resolution: undefined and unresolvable symbols with their `>>> referenced by`
//! lines, and LNK4217 (locally defined symbol imported), in lld's wording (`reportProblemSymbols`).
//!
//! It exists because the wording and ordering of these messages are matched against lld and are
//! easier to check in one place.

use std::collections::{HashMap, HashSet};

use super::Resolver;
use crate::coff::demangle::display as demangle;
use crate::coff::symtab::{Def, FileId, Kind, SymId, SymRef};
use crate::error::{Error, Result};

impl Resolver<'_> {
    /// lld's `reportUnresolvable`, before LTO spends time on a link that cannot succeed: every
    /// undefined symbol no alias, local definition or automatic import will resolve, referenced
    /// from objects or bitcode.
    pub fn report_unresolvable(&self) -> Result<()> {
        let mut undefs = Vec::new();
        for (id, s) in self.r.symbols.iter().enumerate() {
            if s.def != Def::Undefined || s.deferred {
                continue;
            }
            let mut cur = s.weak_alias;
            let mut aliased = false;
            for _ in 0..100 {
                let Some(t) = cur else { break };
                if self.r.symbols[t].def != Def::Undefined {
                    aliased = true;
                    break;
                }
                cur = self.r.symbols[t].weak_alias;
            }
            if aliased {
                continue;
            }
            let defined = |n: &str| self.r.find(n).is_some_and(|t| !matches!(self.r.symbols[t].def, Def::Undefined | Def::Lazy(..)));
            if let Some(base) = s.name.strip_prefix("__imp_") {
                if defined(base) {
                    continue;
                }
            }
            if s.name.contains("_PchSym_") {
                continue;
            }
            if self.config.auto_import && !s.name.starts_with("__imp_") && defined(&format!("__imp_{}", s.name)) {
                continue;
            }
            undefs.push(id);
        }
        if undefs.is_empty() {
            return Ok(());
        }
        // (Diag separates a multi-line message from the next by a blank line, as lld.)
        Err(Error::many(self.problem_messages(&undefs, true)))
    }

    /// lld's LNK4217 warning: an object imports (`__imp_x`) what another object defines; once
    /// per object and symbol (`/ignore:4217` silences it; MinGW does not warn).
    pub(super) fn warn_local_imports(&self) {
        if self.config.mingw || self.r.local_imports.is_empty() {
            return;
        }
        let locals: HashSet<SymId> = self.r.local_imports.iter().copied().collect();
        let warn = |who: &str, id: SymId| {
            let Def::LocalImport(t) = self.r.symbols[id].def else { return };
            let def_file = match self.r.symbols[t].def {
                Def::Regular(df, _) | Def::Common(df, _, _) | Def::Bitcode(df, _) => self.r.files[df].name.clone(),
                _ => "<internal>".into(),
            };
            let msg =
                format!("{who}: locally defined symbol imported: {} (defined in {def_file}) [LNK4217]", demangle(self.r.symbols[t].name, self.config.demangle));
            self.config.diag.warn_code("4217", &msg);
        };
        // GC roots first (the entry, `/include:`), as `<root>`, as lld's reportProblemSymbols.
        let mut roots: Vec<SymId> = self.r.entry.into_iter().collect();
        roots.extend(self.include.iter().filter_map(|n| self.r.find(n)));
        let mut root_seen = HashSet::new();
        for id in roots {
            if locals.contains(&id) && root_seen.insert(id) {
                warn("<root>", id);
            }
        }
        for &f in &self.r.obj_order {
            let mut seen = HashSet::new();
            for r in &self.r.files[f].syms {
                let SymRef::Global(id) = *r else { continue };
                if !locals.contains(&id) || !seen.insert(id) {
                    continue;
                }
                warn(&self.r.files[f].name, id);
            }
        }
    }

    /// lld's `reportProblemSymbols`: undefined GC roots (entry, `/include:`, exports) as
    /// `<root>: undefined symbol: x`, then every undefined symbol in the order objects (and,
    /// before LTO, bitcode files) first refer to it, with up to three `>>> referenced by` lines.
    pub(super) fn problem_messages(&self, undefs: &[SymId], with_bitcode: bool) -> Vec<String> {
        let dm = self.config.demangle;
        let mut msgs = Vec::new();
        let undef_set: HashSet<SymId> = undefs.iter().copied().collect();
        let mut roots: Vec<SymId> = self.r.entry.into_iter().collect();
        roots.extend(self.include.iter().filter_map(|n| self.r.find(n)));
        roots.extend(self.export_specs.iter().filter(|e| e.forward_to.is_none()).filter_map(|e| self.r.find(e.internal.as_deref().unwrap_or(&e.name))));
        let mut root_seen = HashSet::new();
        for id in roots {
            if undef_set.contains(&id) && root_seen.insert(id) {
                msgs.push(format!("<root>: undefined symbol: {}", demangle(self.r.symbols[id].name, dm)));
            }
        }
        // (symbol, [(file, symbol-table index)]) in first-reference order.
        let mut diags: Vec<(SymId, Vec<(FileId, usize)>)> = Vec::new();
        let mut first: HashMap<SymId, usize> = HashMap::new();
        let mut note = |id: SymId, f: FileId, idx: usize, diags: &mut Vec<(SymId, Vec<(FileId, usize)>)>| match first.get(&id) {
            Some(&k) => diags[k].1.push((f, idx)),
            None => {
                first.insert(id, diags.len());
                diags.push((id, vec![(f, idx)]));
            }
        };
        for &f in &self.r.obj_order {
            for (idx, r) in self.r.files[f].syms.iter().enumerate() {
                if let SymRef::Global(id) = *r {
                    if undef_set.contains(&id) {
                        note(id, f, idx, &mut diags);
                    }
                }
            }
        }
        if with_bitcode {
            for (f, file) in self.r.files.iter().enumerate() {
                let Kind::Bitcode(b) = &file.kind else { continue };
                for k in 0..b.syms.len() {
                    let name = String::from_utf8_lossy(b.sym(k).name);
                    if let Some(id) = self.r.find(&name) {
                        if undef_set.contains(&id) {
                            note(id, f, k, &mut diags);
                        }
                    }
                }
            }
        }
        const MAX_REFS: usize = 3;
        for (id, refs) in diags {
            let mut m = format!("undefined symbol: {}", demangle(self.r.symbols[id].name, dm));
            let (mut shown, mut total) = (0, 0);
            for (f, idx) in refs {
                let (lines, n) = match self.r.files[f].kind {
                    Kind::Bitcode(_) => {
                        let v = if shown < MAX_REFS { vec![crate::coff::locations::bitcode_reference(&self.r, f)] } else { Vec::new() };
                        (v, 1)
                    }
                    _ => crate::coff::locations::symbol_locations(&self.r, f, idx, MAX_REFS - shown, self.config.mingw, dm),
                };
                total += n;
                shown += lines.len();
                m.push_str(&lines.concat());
            }
            if shown < total {
                m.push_str(&format!("\n>>> referenced {} more times", total - shown));
            }
            let name = self.r.symbols[id].name;
            // lld's hint for a dllimport reference that only an archive's plain definition matches.
            if let Some(Def::Lazy(a, _)) = name.strip_prefix("__imp_").and_then(|n| self.r.find(n)).map(|t| self.r.symbols[t].def) {
                m.push_str(&format!(
                    "\nNOTE: a relevant symbol '{}' is available in {} but cannot be used because it is not an import library.",
                    &name[6..],
                    self.archives[a].path
                ));
            }
            msgs.push(m);
        }
        msgs
    }
}

//! MinGW-only resolution rules: automatic export of all definitions when a DLL has no explicit
//! exports, `.refptr.` replacement for auto-imported data, and crtend.o detection (lld's
//! `MinGW.cpp` and `handleMinGWAutomaticImport`).
//!
//! It exists so that the GNU-toolchain compatibility rules stay out of the MSVC path.

use std::collections::HashSet;

use super::Resolver;
use crate::coff::config::ExportSpec;
use crate::coff::symtab::{Def, Kind, SymId, SymRef};

impl Resolver<'_> {
    /// MinGW: with no explicit exports, a DLL exports every eligible definition (lld's
    /// `maybeExportMinGWSymbols` with the `AutoExporter` rules).
    pub(super) fn auto_export(&mut self) {
        let config = self.config;
        let mut ae = crate::coff::exports::AutoExporter::new(&self.r.exclude_symbols, &[], config.exclude_all);
        for i in config.inputs.iter().filter(|i| i.whole_archive) {
            ae.add_whole_archive(&i.path.to_string_lossy());
        }
        if !ae.enabled(config.dll, config.export_all, !self.export_specs.is_empty()) {
            return;
        }
        let mut ids: Vec<SymId> = (0..self.r.symbols.len()).collect();
        ids.sort_by(|&a, &b| self.r.symbols[a].name.cmp(self.r.symbols[b].name));
        let mut named: HashSet<String> = self.export_specs.iter().map(|e| e.name.clone()).collect();
        for id in ids {
            let s = &self.r.symbols[id];
            let (f, idx) = match s.def {
                Def::Regular(f, idx) | Def::Common(f, idx, _) => (f, idx),
                Def::Bitcode(f, k) => {
                    // A bitcode definition (lld gives it a fake chunk: code or data).
                    let file = &self.r.files[f];
                    let Kind::Bitcode(b) = &file.kind else { continue };
                    let exec = b.sym(k).executable();
                    let archive = (!file.parent.is_empty()).then_some(file.parent.as_str());
                    if s.pseudo_reloc || named.contains(s.name) || !ae.should_export_from(s.name, archive, &file.obj_name) {
                        continue;
                    }
                    named.insert(s.name.to_string());
                    self.export_names.insert(s.name.to_string());
                    self.export_specs.push(ExportSpec { name: s.name.to_string(), data: !exec, ..Default::default() });
                    self.r.symbols[id].used_in_regular = true;
                    continue;
                }
                _ => continue,
            };
            if s.pseudo_reloc || named.contains(s.name) {
                continue;
            }
            let file = &self.r.files[f];
            let Kind::Obj(obj) = &file.kind else { continue };
            // Members of dlltool-style import libraries (their thunks are imports, not ours).
            if obj.sections.iter().any(|s| s.name.starts_with(".idata$")) {
                continue;
            }
            let sym = &obj.symbols[idx as usize];
            let exec = match sym.section {
                n if n > 0 => {
                    if !file.live[n as usize - 1] {
                        continue;
                    }
                    obj.sections[n as usize - 1].chars & ::object::pe::IMAGE_SCN_MEM_EXECUTE != 0
                }
                0 => false, // common
                _ => continue,
            };
            let archive = (!file.parent.is_empty()).then_some(file.parent.as_str());
            if !ae.should_export_from(s.name, archive, &file.obj_name) {
                continue;
            }
            named.insert(s.name.to_string());
            self.export_names.insert(s.name.to_string());
            self.export_specs.push(ExportSpec { name: s.name.to_string(), data: !exec, ..Default::default() });
            self.r.symbols[id].used_in_regular = true;
        }
    }

    /// MinGW: a `.refptr.<name>` holding only a pointer to an auto-imported `name` is replaced
    /// by the IAT slot itself (lld's `handleMinGWAutomaticImport`).
    pub(super) fn drop_refptr(&mut self, name: &str, sym: SymId, imp: Def) {
        let Some(r) = self.r.find(&format!(".refptr.{name}")) else { return };
        let Def::Regular(f, idx) = self.r.symbols[r].def else { return };
        let file = &self.r.files[f];
        let Kind::Obj(obj) = &file.kind else { return };
        let s = &obj.symbols[idx as usize];
        let Some(sec) = (s.section as usize).checked_sub(1) else { return };
        let section = &obj.sections[sec];
        if section.size != 8 || section.relocs.len() != 1 {
            return;
        }
        let target = section.relocs[0].symbol_table_index.get(::object::LittleEndian) as usize;
        if file.syms.get(target) != Some(&SymRef::Global(sym)) {
            return;
        }
        self.r.files[f].live[sec] = false;
        let rs = &mut self.r.symbols[r];
        rs.def = imp;
    }

    /// MinGW: crtend.o is linked last, whatever its place on the command line (lld's
    /// `isCrtend` in `LinkerDriver::linkerMain`).
    pub(super) fn move_crtend_last(&mut self) {
        if let Some(p) = self.r.obj_order.iter().position(|&f| is_crtend(&self.r.files[f].obj_name)) {
            let f = self.r.obj_order.remove(p);
            self.r.obj_order.push(f);
        }
    }
}

/// lld's `isCrtend`.
fn is_crtend(name: &str) -> bool {
    let Some(s) = name.strip_suffix(".o") else { return false };
    if s.ends_with("crtend") {
        return true;
    }
    !s.is_empty() && s[..s.len() - 1].ends_with("crtend")
}

//! COFF COMDAT resolution: which copy of a COMDAT section prevails when several objects define
//! the same leader symbol (lld's `SymbolTable::addComdat` and `handleComdatSelection`).
//!
//! It exists apart from the rest of resolution because the selection rules (any, no-duplicates,
//! same-size, exact-match, largest) are a self-contained table of link.exe/lld behaviour.

use super::Resolver;
use crate::coff::demangle::display as demangle;
use crate::coff::object::ObjFile;
use crate::coff::symtab::{Def, FileId, SymId};

impl Resolver<'_> {
    pub(super) fn add_comdat(&mut self, name: &str, f: FileId, idx: u32) -> (SymId, bool) {
        let (id, new) = self.insert(name);
        if new || !matches!(self.r.symbols[id].def, Def::Regular(..)) {
            let s = &mut self.r.symbols[id];
            s.def = Def::Regular(f, idx);
            s.comdat = true;
            s.weak_alias = None;
            s.bitcode_common = 0;
            return (id, true);
        }
        if !self.r.symbols[id].comdat {
            self.duplicate(id, Some(f));
        }
        (id, false)
    }

    /// lld's `handleComdatSelection`: a second COMDAT leader for symbol `id` (section `sec`,
    /// 1-based, of `obj`, leader symbol `idx`, selection `sel`) meets the one already chosen. Returns whether the
    /// new section prevails ("largest" replaces a smaller leader).
    pub(super) fn comdat_selection(&mut self, id: SymId, f: FileId, obj: &ObjFile, sec: usize, idx: u32, sel: u8) -> bool {
        const NODUPLICATES: u8 = 1;
        const ANY: u8 = 2;
        const SAME_SIZE: u8 = 3;
        const EXACT_MATCH: u8 = 4;
        const LARGEST: u8 = 6;
        let Def::Regular(lf, li) = self.r.symbols[id].def else { return false };
        let lobj = self.r.obj(lf);
        let lsec = lobj.symbols[li as usize].section as usize;
        let Some(lsection) = lsec.checked_sub(1).and_then(|k| lobj.sections.get(k)) else { return false };
        let (lsize, ldata) = (lsection.size, lsection.data);
        let llength = lobj.symbols.iter().find(|y| !y.is_aux && y.secdef.is_some() && y.section == lsec as i32).map(|y| y.sec_length);
        let mut lsel = self.comdat_sel.get(&(lf, lsec as u32)).copied().unwrap_or(ANY);
        let mut sel = sel;
        // "any" and "largest" merge as "largest" (cl.exe's vftables with and without /GR).
        if (sel == ANY && lsel == LARGEST) || (sel == LARGEST && lsel == ANY) {
            sel = LARGEST;
            lsel = LARGEST;
        }
        // GCC's selectany is "same size".
        if self.config.mingw && ((sel == ANY && lsel == SAME_SIZE) || (sel == SAME_SIZE && lsel == ANY)) {
            sel = SAME_SIZE;
            lsel = SAME_SIZE;
        }
        let new = &obj.sections[sec - 1];
        if sel != lsel {
            let name = demangle(self.r.symbols[id].name, self.config.demangle);
            self.log(&format!("conflicting comdat type for {name}: {lsel} in {} and {sel} in {}", self.r.files[lf].name, self.r.files[f].name));
            self.duplicate(id, Some(f));
            return false;
        }
        match sel {
            NODUPLICATES => self.duplicate(id, Some(f)),
            SAME_SIZE if lsize != new.size => {
                let length = obj.symbols.iter().find(|y| !y.is_aux && y.secdef.is_some() && y.section == sec as i32).map(|y| y.sec_length);
                if !self.config.mingw || llength.is_none() || llength != length {
                    self.duplicate(id, Some(f));
                }
            }
            EXACT_MATCH if ldata != new.data => {
                let value = obj.symbols[idx as usize].value;
                self.duplicate_at(id, Some(f), Some((sec as u32, value)));
            }
            LARGEST if lsize < new.size => {
                // The old section stays (unreferenced, so `/opt:ref` drops it), as in lld.
                self.r.symbols[id].def = Def::Regular(f, idx);
                return true;
            }
            _ => {}
        }
        false
    }
}

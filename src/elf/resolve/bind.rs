//! The binding rules of one name: what a reference does (`add_undefined`: extraction, needed
//! libraries, weak or strong), how a common meets another definition (`add_common`), which of
//! two definitions wins or is a duplicate (`add_defined`, lld's words for the error), and the
//! TLS mismatch checks.
//!
//! Why it exists: these are the rules lld's `Symbol::resolve` holds, the part of resolution that
//! decides between definitions; `resolve.rs` drives the files through them.

use object::elf;
use object::read::elf::Sym as _;

use super::state::*;
use crate::elf::symtab::*;
use crate::elf::types::LE;

impl Resolver<'_> {
    /// A reference to `id`; returns the archive member it extracts, if any.
    pub(super) fn add_undefined(&mut self, id: SymbolId, weak: bool, native: bool) -> Option<FileId> {
        let sym = &mut self.r.symbols[id];
        sym.obj_ref = true;
        if !weak {
            sym.strong_ref = true;
        }
        if native {
            sym.obj_ref_native = true;
            if !weak {
                sym.strong_ref_native = true;
            }
        }
        match sym.def {
            Def::Lazy(m) if !weak => return Some(m),
            // Only references left in regular objects make an --as-needed library needed (lld's
            // isUsedInRegularObj): bitcode's count through the objects LTO makes of it (pass 2).
            Def::Shared(df, _) if !weak && native => {
                self.r.dso_needed[df] = true;
            }
            Def::Undefined => {
                sym.weak = weak && !sym.strong_ref;
            }
            _ => {}
        }
        None
    }

    /// The size of a common symbol definition (native or bitcode), `None` if `def` is not one.
    pub(super) fn common_size(&self, def: Def) -> Option<u64> {
        match def {
            Def::Common(f, i) => Some(self.r.obj(f).symbols[i].st_size(LE)),
            Def::Bitcode(f, k) => match &self.r.files[f] {
                File::Bitcode(b) if b.sym(k).common() => Some(b.ir.uncommon(b.sym(k)).common_size as u64),
                File::GccIr(g) if g.syms[k].common() => Some(g.syms[k].size),
                _ => None,
            },
            _ => None,
        }
    }

    /// A common symbol (`def` is `Common` or a bitcode common): the largest common wins; any
    /// non-weak definition beats it; it beats weak definitions, as in lld.
    pub(super) fn add_common(&mut self, id: SymbolId, def: Def) {
        let new_size = self.common_size(def).unwrap_or(0);
        let sym = &self.r.symbols[id];
        let old = sym.def;
        if self.config.warn_common {
            let name = String::from_utf8_lossy(sym.name);
            if self.common_size(old).is_some() {
                self.config.diag.warn(&format!("multiple common of {name}"));
            } else if matches!(old, Def::Defined(..) | Def::Bitcode(..)) {
                self.config.diag.warn(&format!("common {name} is overridden"));
            }
        }
        let replace = match old {
            Def::Undefined | Def::Lazy(_) | Def::Shared(..) => true,
            _ if self.common_size(old).is_some() => new_size > self.common_size(old).unwrap_or(0),
            Def::Defined(..) | Def::Bitcode(..) => sym.weak,
            _ => false,
        };
        // A bitcode common's alignment counts too, although LTO may drop its definition when
        // an object's larger common prevails (lld: `lto/common.ll`).
        let align = |d: Def| match d {
            Def::Common(f, i) => self.r.obj(f).symbols[i].st_value(LE),
            Def::Bitcode(f, k) => match &self.r.files[f] {
                File::Bitcode(b) if b.sym(k).common() => b.ir.uncommon(b.sym(k)).common_align as u64,
                _ => 0,
            },
            _ => 0,
        };
        if self.common_size(old).is_some() {
            let a = align(old).max(align(def)).max(self.r.common_align.get(&id).copied().unwrap_or(0));
            self.r.common_align.insert(id, a);
        }
        if replace {
            let sym = &mut self.r.symbols[id];
            sym.def = def;
            sym.weak = false;
        }
    }

    pub(super) fn add_defined(&mut self, id: SymbolId, def: Def, weak: bool) {
        let sym = &self.r.symbols[id];
        match sym.def {
            Def::Undefined | Def::Lazy(_) | Def::Shared(..) | Def::Synthetic => {
                let sym = &mut self.r.symbols[id];
                sym.def = def;
                sym.weak = weak;
            }
            Def::Common(..) => {
                if self.config.warn_common {
                    self.config.diag.warn(&format!("common {} is overridden", String::from_utf8_lossy(sym.name)));
                }
                if !weak {
                    let sym = &mut self.r.symbols[id];
                    sym.def = def;
                    sym.weak = false;
                }
            }
            old @ (Def::Defined(..) | Def::Bitcode(..)) if self.common_size(old).is_some() => {
                if self.config.warn_common {
                    self.config.diag.warn(&format!("common {} is overridden", String::from_utf8_lossy(sym.name)));
                }
                if !weak {
                    let sym = &mut self.r.symbols[id];
                    sym.def = def;
                    sym.weak = false;
                }
            }
            old @ (Def::Defined(..) | Def::Bitcode(..)) => {
                if sym.weak && !weak {
                    let sym = &mut self.r.symbols[id];
                    sym.def = def;
                    sym.weak = false;
                } else if !sym.weak && !weak && !self.config.allow_multiple_definition && !self.same_absolute(old, def) {
                    let msg = self.duplicate_message(id, old, def);
                    self.errors.push(msg);
                }
            }
        }
    }

    /// lld's postParse check: a TLS definition meets a non-TLS symbol (a definition or a typed
    /// reference) of the same name in a loaded object, in the order the objects joined.
    pub(super) fn tls_mismatches(&self) -> Vec<String> {
        let r = &self.r;
        let tls_file = |id: SymbolId| match r.symbols[id].def {
            Def::Defined(df, i) | Def::Common(df, i) => (r.obj(df).symbols[i].st_type() == elf::STT_TLS).then_some(df),
            _ => None,
        };
        let mut out = Vec::new();
        for &f in &r.load_order {
            let File::Obj(o) = &r.files[f] else { continue };
            for (k, s) in o.symbols.iter().skip(o.first_global).enumerate() {
                if matches!(s.st_type(), elf::STT_TLS | elf::STT_NOTYPE) {
                    continue;
                }
                let Some(&id) = r.sym_ids[f].get(k) else { continue };
                if let Some(df) = tls_file(id) {
                    let name = crate::elf::diag::demangle(r.symbols[id].name);
                    out.push(format!("TLS attribute mismatch: {name}\n>>> in {}\n>>> in {}", r.inputs[df].name, r.inputs[f].name));
                }
            }
        }
        out
    }

    /// Two absolute definitions of the same value are no conflict (lld, for GNU ld
    /// compatibility).
    pub(super) fn same_absolute(&self, a: Def, b: Def) -> bool {
        let abs = |d: Def| match d {
            Def::Defined(f, i) => {
                let s = &self.r.obj(f).symbols[i];
                (s.st_shndx(LE) == elf::SHN_ABS).then(|| s.st_value(LE))
            }
            _ => None,
        };
        matches!((abs(a), abs(b)), (Some(x), Some(y)) if x == y && x != 0)
    }

    /// lld's `duplicate symbol` message: each definition's source line (DWARF, else the STT_FILE
    /// name) and place. The new definition's object is still being read, so only its local
    /// symbols can name the place (as in lld).
    pub(super) fn duplicate_message(&self, id: SymbolId, a: Def, b: Def) -> String {
        let sym_name = self.r.symbols[id].name;
        let name = crate::elf::diag::demangle(sym_name);
        // An absolute definition has no section: lld names only the files.
        let is_abs = |d: Def| matches!(d, Def::Defined(f, i) if self.r.obj(f).symbols[i].st_shndx(LE) == elf::SHN_ABS);
        if is_abs(a) || is_abs(b) {
            let file = |d: Def| match d {
                Def::Defined(f, _) | Def::Bitcode(f, _) => self.r.inputs[f].name.clone(),
                _ => String::new(),
            };
            return format!("duplicate symbol: {name}\n>>> defined in {}\n>>> defined in {}", file(a), file(b));
        }
        let loc = |d: Def, new: bool| {
            let (f, i) = match d {
                Def::Defined(f, i) => (f, i),
                // lld: ">>> defined in a.o" for bitcode (no section is known before LTO).
                Def::Bitcode(f, _) => return format!(">>> defined in {}", self.r.inputs[f].name),
                _ => return String::new(),
            };
            let o = self.r.obj(f);
            let s = &o.symbols[i];
            let (shndx, off) = (o.shndx(i) as usize, s.st_value(LE));
            let src = crate::elf::diag::src_msg(o, shndx, off, sym_name);
            let obj = crate::elf::diag::obj_msg(o, shndx, off, new);
            if src.is_empty() {
                format!(">>> defined at {obj}")
            } else {
                format!(">>> defined at {src}\n>>>            {obj}")
            }
        };
        format!("duplicate symbol: {name}\n{}\n{}", loc(a, false), loc(b, true))
    }
}

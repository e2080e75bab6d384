//! Reading one regular COFF object into the resolver: its symbol table, its COMDAT leaders and
//! associative sections, weak externals and held-back resource sections (lld's
//! `ObjFile::initializeSymbols`).
//!
//! It exists because this is the longest single step of resolution; it is split into named
//! passes so each rule can be read on its own.

use std::collections::HashMap;

use ::object::pe as object_pe;

use super::Resolver;
use crate::coff::object::{self, ObjFile};
use crate::coff::symtab::{ChunkSrc, Def, FileId, Kind, SymId, SymRef};

impl Resolver<'_> {
    /// lld's `ObjFile::initializeChunks` + `initializeSymbols`, in passes: the symbol table with
    /// its COMDAT leaders (`read_symbols`), the sections whose fate waited for a leader
    /// (`decide_pending_comdats`), weak-external aliases (`bind_weak_aliases`), then the file's
    /// tables are stored with resource sections held back (`store_object`).
    pub(super) fn add_object(&mut self, obj: ObjFile, display: String, name: &str, parent: &str) {
        let directives = obj.directives;
        let obj = std::sync::Arc::new(obj);
        let f = self.new_file(Kind::Obj(obj.clone()), display, name, parent);
        self.r.obj_order.push(f);
        // The resolver's own handle: `self` may grow its file list while this object is read.
        let obj: &ObjFile = &obj;
        let mut st = ObjRead::new(f, obj, self.config.debug == crate::coff::config::DebugMode::Dwarf);
        self.read_symbols(obj, &mut st);
        self.decide_pending_comdats(obj, &mut st);
        let weak = std::mem::take(&mut st.weak);
        self.bind_weak_aliases(f, &st.syms, weak);
        self.store_object(obj, st);
        if let Some(d) = directives {
            self.parse_directives(f, d);
        }
    }

    /// Pass 1: every symbol-table entry in order. Undefined, weak, common and absolute symbols
    /// bind at once; the first symbol of a COMDAT section after its section symbol is the leader
    /// and decides whether the section prevails; other symbols of undecided COMDAT sections wait
    /// in `pending`.
    fn read_symbols(&mut self, obj: &ObjFile, st: &mut ObjRead) {
        let f = st.f;
        let mut i = 0;
        while i < obj.symbols.len() {
            let s = &obj.symbols[i];
            let naux = s.naux as usize;
            if s.is_undefined() {
                st.syms[i] = SymRef::Global(self.add_undefined(s.name, false));
            } else if s.is_weak_external() {
                let id = self.add_undefined(s.name, true);
                st.syms[i] = SymRef::Global(id);
                if let Some(tag) = s.weak_tag {
                    st.weak.push((id, tag));
                }
            } else if s.is_common() {
                st.commons.push(i as u32);
                st.order.push(ChunkSrc::Common(i as u32));
                st.syms[i] = SymRef::Global(self.add_common(s.name, f, i as u32, s.value));
            } else if s.is_absolute() {
                if s.name == "@comp.id" || s.name == "@feat.00" {
                } else if s.is_external() {
                    st.syms[i] = SymRef::Global(self.add_absolute(s.name, s.value as u64, Some(f)));
                } else {
                    st.syms[i] = SymRef::Absolute(s.value);
                }
            } else if s.section <= 0 {
                // Debug (-2) symbols and other reserved numbers.
            } else {
                let sec = s.section as usize;
                if let Some(sel) = st.comdat_defs[sec].take() {
                    self.read_comdat_leader(obj, st, i, sec, sel);
                } else if st.state[sec - 1].is_none() {
                    if let Some((sel, _)) = s.secdef {
                        if sel != 5 {
                            st.comdat_defs[sec] = Some(sel);
                        }
                    }
                    st.pending.push(i);
                } else {
                    st.syms[i] = self.create_regular(f, obj, i);
                }
            }
            i += 1 + naux;
        }
    }

    /// The leader symbol `i` of COMDAT section `sec` (1-based) with selection `sel`: records the
    /// selection and decides, against an earlier copy, whether this file's section prevails.
    fn read_comdat_leader(&mut self, obj: &ObjFile, st: &mut ObjRead, i: usize, sec: usize, sel: u8) {
        let f = st.f;
        let s = &obj.symbols[i];
        st.leaders.insert(sec as u32 - 1, i as u32);
        let mut prevailing;
        if !(1..=6).contains(&sel) {
            // lld's `fatal`: link.exe does not know "newest" (7) either.
            self.errors.push(format!("unknown comdat type {sel} for {} in {}", s.name, self.r.files[f].name));
        }
        self.comdat_sel.insert((f, sec as u32), sel);
        if s.is_external() {
            let was_comdat = self.r.find(s.name).is_some_and(|id| self.r.symbols[id].comdat && matches!(self.r.symbols[id].def, Def::Regular(..)));
            let (id, p) = self.add_comdat(s.name, f, i as u32);
            prevailing = p;
            st.syms[i] = SymRef::Global(id);
            if !p && was_comdat {
                prevailing = self.comdat_selection(id, f, obj, sec, i as u32, sel);
            }
        } else {
            prevailing = true;
            st.syms[i] = SymRef::Local { sec: sec as u32, value: s.value };
        }
        st.state[sec - 1] = Some(prevailing && keep_section(&obj.sections[sec - 1], st.include_dwarf));
        if st.state[sec - 1] == Some(true) {
            st.order.push(ChunkSrc::Sec(sec as u32 - 1));
        }
        if self.config.mingw && prevailing && obj.sections[sec - 1].chars & 0x2000_0000 != 0 {
            if let Some((_, suffix)) = obj.sections[sec - 1].name.split_once('$') {
                st.prevailing_text.insert(suffix, sec as u32);
            }
        }
    }

    /// Pass 2: the sections whose fate waited for a leader — an associative COMDAT follows its
    /// parent, and in MinGW `.pdata$f`/`.xdata$f`/`.eh_frame$f` follow a prevailing `.text$f` —
    /// then their symbols bind. A section still undecided is discarded, as in lld.
    fn decide_pending_comdats(&mut self, obj: &ObjFile, st: &mut ObjRead) {
        let f = st.f;
        let include_dwarf = st.include_dwarf;
        let mingw = self.config.mingw;
        let pending = std::mem::take(&mut st.pending);
        for &i in &pending {
            let s = &obj.symbols[i];
            let sec = s.section as usize;
            if let Some((sel, assoc)) = s.secdef {
                if sel == 5 {
                    // IMAGE_COMDAT_SELECT_ASSOCIATIVE: live if the parent is.
                    let parent_state = (assoc as usize).checked_sub(1).and_then(|p| st.state.get(p).copied());
                    if parent_state == Some(None) {
                        // The parent is a COMDAT not decided yet: an associative section later
                        // in the file, or one without a leader (lld's readAssociativeDefinition).
                        let file = &self.r.files[f].name;
                        self.errors.push(format!(
                            "{file}: associative comdat {} (sec {sec}) has invalid reference to section {} (sec {assoc})",
                            s.name,
                            obj.sections[assoc as usize - 1].name
                        ));
                        continue;
                    }
                    let parent = parent_state.flatten();
                    st.state[sec - 1] = Some(parent == Some(true) && keep_section(&obj.sections[sec - 1], include_dwarf));
                } else if mingw {
                    for prefix in [".pdata$", ".xdata$", ".eh_frame$"] {
                        if let Some(func) = s.name.strip_prefix(prefix) {
                            if st.prevailing_text.contains_key(func) {
                                st.state[sec - 1] = Some(keep_section(&obj.sections[sec - 1], include_dwarf));
                            }
                        }
                    }
                }
            }
            if st.state[sec - 1].is_none() {
                // Stays undecided (an associative reference to it is an error, as in lld).
                self.log(&format!("comdat section {} without leader and unassociated, discarding", s.name));
                continue;
            }
            if st.state[sec - 1] == Some(true) && !st.order.contains(&ChunkSrc::Sec(sec as u32 - 1)) {
                st.order.push(ChunkSrc::Sec(sec as u32 - 1));
            }
            st.syms[i] = self.create_regular_in(f, obj, i, &st.state);
        }
    }

    /// Pass 3: each weak external of file `f` gets its default definition (`weak`: symbol,
    /// index of the default in `syms`) as alias; a second, different default is a duplicate
    /// outside MinGW.
    fn bind_weak_aliases(&mut self, f: FileId, syms: &[SymRef], weak: Vec<(SymId, u32)>) {
        for (id, tag) in weak {
            let target = match syms[tag as usize] {
                SymRef::Global(t) => Some(t),
                _ => None,
            };
            if let Some(t) = target {
                let s = &mut self.r.symbols[id];
                if s.def == Def::Undefined && s.weak_alias.is_none() {
                    s.weak_alias = Some(t);
                } else if s.def == Def::Undefined && s.weak_alias != Some(t) && !self.config.mingw {
                    self.duplicate(id, Some(f));
                }
            }
        }
    }

    /// Pass 4: resource sections are held back for `convert_resources` (lld's
    /// `resourceChunks`), every global the object refers to counts as used by regular code, and
    /// the file's symbol, liveness and chunk tables are stored.
    fn store_object(&mut self, obj: &ObjFile, st: ObjRead) {
        let f = st.f;
        let nsec = obj.sections.len();
        let live: Vec<bool> = st.state.into_iter().map(|s| s == Some(true)).collect();
        let mut order = st.order;
        let rsrc: Vec<u32> = (0..nsec as u32)
            .filter(|&k| live[k as usize] && (obj.sections[k as usize].name == ".rsrc" || obj.sections[k as usize].name.starts_with(".rsrc$")))
            .collect();
        if !rsrc.is_empty() {
            order.retain(|c| !matches!(c, ChunkSrc::Sec(k) if rsrc.contains(k)));
            self.rsrc_objs.push((f, rsrc));
        }
        // `/guard:cf`'s symbol-index sections are read by `guardcf.rs`, never output (lld keeps
        // them out of the file's chunks).
        let is_guard = |c: &ChunkSrc| matches!(*c, ChunkSrc::Sec(k) if crate::coff::guardcf::is_guard_section(obj.sections[k as usize].name));
        let guard_sections: Vec<u32> = order.iter().filter(|c| is_guard(c)).map(|c| if let ChunkSrc::Sec(k) = *c { k } else { 0 }).collect();
        order.retain(|c| !is_guard(c));
        for r in &st.syms {
            if let SymRef::Global(id) = *r {
                self.r.symbols[id].used_in_regular = true;
            }
        }
        let file = &mut self.r.files[f];
        file.syms = st.syms;
        file.live = live;
        file.commons = st.commons;
        file.chunks = order;
        file.leaders = st.leaders;
        file.guard_sections = guard_sections;
    }

    pub(super) fn create_regular(&mut self, f: FileId, obj: &ObjFile, i: usize) -> SymRef {
        let sec = obj.symbols[i].section as usize;
        let live = keep_section(&obj.sections[sec - 1], self.config.debug == crate::coff::config::DebugMode::Dwarf);
        self.regular(f, obj, i, live)
    }

    pub(super) fn create_regular_in(&mut self, f: FileId, obj: &ObjFile, i: usize, state: &[Option<bool>]) -> SymRef {
        let sec = obj.symbols[i].section as usize;
        self.regular(f, obj, i, state[sec - 1] == Some(true))
    }

    /// lld's `createRegular`.
    pub(super) fn regular(&mut self, f: FileId, obj: &ObjFile, i: usize, live: bool) -> SymRef {
        let s = &obj.symbols[i];
        if s.is_external() {
            if live {
                return SymRef::Global(self.add_regular(s.name, f, i as u32));
            }
            if self.config.mingw && s.name.starts_with(".weak.") {
                return SymRef::None;
            }
            return SymRef::Global(self.add_undefined(s.name, false));
        }
        if live {
            SymRef::Local { sec: s.section as u32, value: s.value }
        } else {
            SymRef::None
        }
    }
}

/// lld's `readSection` filter: sections that never become chunks.
pub(super) fn keep_section(s: &object::Section, include_dwarf: bool) -> bool {
    if s.name == ".drectve" || s.name == ".llvm_addrsig" || s.name == ".llvm.call-graph-profile" || s.name == ".deplibs" {
        return false;
    }
    if s.name == ".debug" || s.name.starts_with(".debug$") {
        return false;
    }
    if s.name.starts_with(".debug_") && !include_dwarf {
        return false;
    }
    s.chars & object_pe::IMAGE_SCN_LNK_REMOVE == 0
}

/// One object's state while `add_object` reads it, handed from pass to pass.
struct ObjRead {
    f: FileId,
    include_dwarf: bool,
    /// Per section: `Some(true)` live, `Some(false)` dropped, `None` a COMDAT not decided yet.
    state: Vec<Option<bool>>,
    /// What each symbol-table entry binds to.
    syms: Vec<SymRef>,
    /// Symbol indices of common symbols.
    commons: Vec<u32>,
    /// The file's chunks in lld's order: non-COMDAT sections, then COMDATs and commons as met.
    order: Vec<ChunkSrc>,
    /// Indexed by 1-based section: the selection of a COMDAT whose leader symbol comes next.
    comdat_defs: Vec<Option<u8>>,
    /// 0-based COMDAT section → its leader's symbol index.
    leaders: HashMap<u32, u32>,
    /// Section symbols of COMDATs decided only after every leader is known.
    pending: Vec<usize>,
    /// Weak externals and the symbol index of their default definition.
    weak: Vec<(SymId, u32)>,
    /// MinGW: the `$suffix` of each prevailing `.text$suffix` → its 1-based section.
    prevailing_text: HashMap<&'static str, u32>,
}

impl ObjRead {
    fn new(f: FileId, obj: &ObjFile, include_dwarf: bool) -> ObjRead {
        let nsec = obj.sections.len();
        let state: Vec<Option<bool>> = obj.sections.iter().map(|s| if s.is_comdat() { None } else { Some(keep_section(s, include_dwarf)) }).collect();
        let order = (0..nsec).filter(|&k| state[k] == Some(true)).map(|k| ChunkSrc::Sec(k as u32)).collect();
        ObjRead {
            f,
            include_dwarf,
            state,
            syms: vec![SymRef::None; obj.symbols.len()],
            commons: Vec::new(),
            order,
            comdat_defs: vec![None; nsec + 1],
            leaders: HashMap::new(),
            pending: Vec::new(),
            weak: Vec::new(),
            prevailing_text: HashMap::new(),
        }
    }
}

//! Liveness: which input sections reach the output (`--gc-sections`), as lld's `MarkLive`.
//!
//! Without `--gc-sections` every section of a loaded object goes out, except COMDAT losers and
//! sections the linker never copies. With it, a mark phase starts from the roots — the entry
//! point, `-u`, `-init`/`-fini`, everything the dynamic symbol table exports, sections the loader
//! or the runtime reads by themselves (init/fini arrays, notes, `.init`/`.fini`, `.ctors`,
//! `SHF_GNU_RETAIN`) and the personality routines and LSDAs that `.eh_frame` names — and follows
//! relocations. The rules that make debug builds come out like lld's:
//!
//! * A non-`SHF_ALLOC` section outside any group (`.debug_*`, `.comment`, ...) is kept, but its
//!   relocations keep nothing alive: debug information mentions every function, so following
//!   it would keep them all. Relocations from it into dead sections get tombstone values in the
//!   writer instead.
//! * Members of a section group with an allocated member live and die together; that is how a
//!   non-alloc section tied to code (coverage records) goes away with it. A group of non-alloc
//!   sections only (`.debug_types`, GCC's `.debug_macro`) is kept like any debug section.
//! * `SHF_LINK_ORDER` sections live exactly when the section they are linked to does.
//! * `.eh_frame` keeps the personality routines its CIEs name and the LSDAs its FDEs name, but
//!   never the functions the FDEs describe (those FDEs are dropped later if the function dies).
//! * `__start_X`/`__stop_X` references keep sections named `X` only with `-z nostart-stop-gc`
//!   (or for glibc's `__libc_*` sections), as in lld 13 and later.
//! * In an alloc SHF_MERGE section, each piece is live on its own: the mark records which
//!   offsets are referenced, and the merge keeps only those pieces.
//!
//! The roots are collected in one pass; then each wave of newly live sections is scanned in
//! parallel (mold's way): a section is marked with an atomic flag, and the thread that sets it
//! scans it. What is reached does not depend on the order, so the result is the serial one.

use crate::util::fasthash::FastMap as HashMap;
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use object::elf;
use object::read::elf::{Rela as _, SectionHeader as _, Sym as _};

use crate::elf::config::Config;
use crate::elf::object::{ObjFile, SecKind};
use crate::elf::symtab::{Def, File, FileId, Resolved, SymbolId};
use crate::elf::types::LE;

/// Per file, per section: whether the section goes into the output.
pub type Live = Vec<Vec<bool>>;

/// What the mark phase found.
/// The global symbols a live section references (`--gc-sections`): a flag per symbol id, set
/// for every relocation of every live section (a hashed insert each was ~2% of a large link).
pub struct Used(Vec<bool>);

impl Used {
    pub fn contains(&self, id: &SymbolId) -> bool {
        self.0.get(*id).copied().unwrap_or(false)
    }
}

pub struct Liveness {
    pub live: Live,
    /// Under `--gc-sections`: global symbols referenced from live sections (lld's `used`; only
    /// those are worth a `.dynsym` entry when undefined or defined by a shared library).
    pub used: Option<Used>,
    /// Under `--gc-sections`: for alloc SHF_MERGE sections, the input offsets referenced from
    /// live code (pieces holding none of them are dropped).
    pub merge_refs: Option<HashMap<(FileId, u32), Vec<u64>>>,
    /// Under `--gc-sections`: shared libraries a live section refers to by a non-weak
    /// reference (for `--as-needed`).
    pub dso_needed: Option<Vec<bool>>,
}

fn flag(flags: u64, f: u32) -> bool {
    flags & f as u64 != 0
}

pub fn is_c_ident(s: &[u8]) -> bool {
    !s.is_empty() && !s[0].is_ascii_digit() && s.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Sections that can go to the output at all: loaded, not COMDAT losers, not ignored.
fn candidate(r: &Resolved, f: FileId, s: usize) -> bool {
    let sec = &r.obj(f).sections[s];
    sec.kind != SecKind::Ignored && !r.discarded[f][s]
}

/// An input's `.note.gnu.build-id` (from `-r --build-id`) when the output gets its own: lld
/// drops it so that the output has one build ID.
fn replaced_build_id(config: &Config, o: &ObjFile, s: usize) -> bool {
    let has_own = config.build_id != crate::elf::config::BuildId::None || !config.build_id_hex.is_empty();
    has_own && o.sections[s].name == b".note.gnu.build-id"
}

/// lld's `isReserved`: sections the loader or the C runtime use without any reference.
fn is_reserved(o: &ObjFile, s: usize, in_gc_group: bool) -> bool {
    let sec = &o.sections[s];
    match sec.sh_type {
        elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY => true,
        // A note in a group is collected with its group.
        elf::SHT_NOTE => !in_gc_group,
        _ => {
            let n = sec.name;
            n == b".init" || n == b".fini" || n.starts_with(b".init_array") || n == b".jcr" || n.starts_with(b".ctors") || n.starts_with(b".dtors")
        }
    }
}

pub fn mark_live(config: &Config, r: &Resolved) -> Liveness {
    let mut live: Live = r
        .files
        .par_iter()
        .enumerate()
        .map(|(f, file)| match file {
            File::Obj(o) if r.loaded[f] => (0..o.sections.len()).map(|s| candidate(r, f, s) && !replaced_build_id(config, o, s)).collect(),
            File::Obj(o) => vec![false; o.sections.len()],
            _ => Vec::new(),
        })
        .collect();
    if !config.gc_sections {
        return Liveness { live, used: None, merge_refs: None, dso_needed: None };
    }
    let mut m = Marker::new(config, r, std::mem::take(&mut live));
    m.run();
    let live_marks: Live = m.live.par_iter().map(|v| v.iter().map(|b| b.load(Relaxed)).collect()).collect();
    if config.print_gc_sections {
        m.print_removed(&live_marks);
    }
    // EhFrame sections stay: their records are filtered by the liveness of what they describe.
    let mut live = std::mem::take(&mut m.candidate);
    for (f, v) in live.iter_mut().enumerate() {
        let File::Obj(o) = &r.files[f] else { continue };
        for (s, b) in v.iter_mut().enumerate() {
            if *b && o.sections[s].kind != SecKind::EhFrame {
                *b = live_marks[f][s];
            }
        }
    }
    let used = Used(m.used.iter().map(|b| b.load(Relaxed)).collect());
    let dso_needed = m.dso_needed.iter().map(|b| b.load(Relaxed)).collect();
    Liveness { live, used: Some(used), merge_refs: Some(m.merge_refs), dso_needed: Some(dso_needed) }
}

/// What marking one section (or one root) found: sections newly marked live, to be scanned
/// next, and references into alloc SHF_MERGE sections. Each parallel task fills its own.
#[derive(Default)]
struct Found {
    queue: Vec<(FileId, usize)>,
    merge_refs: Vec<((FileId, u32), u64)>,
}

impl Found {
    fn join(mut self, other: Found) -> Found {
        self.queue.extend(other.queue);
        self.merge_refs.extend(other.merge_refs);
        self
    }
}

/// A section before marking: what `Marker::run` does with it.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Root {
    /// Not a root (or not in the output at all).
    No,
    /// `.eh_frame`: its records keep personality routines and LSDAs.
    EhFrame,
    /// Live from the start, and followed (SHF_GNU_RETAIN, KEEP, reserved sections).
    Kept,
    /// Named like a C identifier: a `__start_`/`__stop_` reference keeps it.
    CNamed,
}

struct Marker<'a> {
    config: &'a Config,
    r: &'a Resolved,
    /// Sections that may go out at all.
    candidate: Live,
    /// Marked live; set from several threads at once (a section is scanned by whichever
    /// thread marks it first).
    live: Vec<Vec<AtomicBool>>,
    used: Vec<AtomicBool>,
    merge_refs: HashMap<(FileId, u32), Vec<u64>>,
    dso_needed: Vec<AtomicBool>,
    /// Per file: section → the SHF_LINK_ORDER sections linked to it.
    dependents: Vec<HashMap<usize, Vec<usize>>>,
    /// Per file: section → its group (an index into `groups`), for groups with an allocated
    /// member (COMDAT or not).
    group_of: Vec<HashMap<usize, usize>>,
    /// Per file: each such group's members that may go out.
    groups: Vec<Vec<Vec<u32>>>,
    /// `__start_X`/`__stop_X` → the sections named `X` such a reference keeps.
    c_named: HashMap<Vec<u8>, Vec<(FileId, usize)>>,
}

impl<'a> Marker<'a> {
    fn new(config: &'a Config, r: &'a Resolved, candidate: Live) -> Self {
        type PerFile = (HashMap<usize, Vec<usize>>, HashMap<usize, usize>, Vec<Vec<u32>>);
        // Per file, independently (in parallel): its SHF_LINK_ORDER dependents and its groups.
        let per_file: Vec<PerFile> = r
            .files
            .par_iter()
            .enumerate()
            .map(|(f, file)| {
                let mut dependents: HashMap<usize, Vec<usize>> = HashMap::default();
                let mut group_of: HashMap<usize, usize> = HashMap::default();
                let mut groups: Vec<Vec<u32>> = Vec::new();
                let File::Obj(o) = file else { return (dependents, group_of, groups) };
                if !r.loaded[f] {
                    return (dependents, group_of, groups);
                }
                for (s, sec) in o.sections.iter().enumerate() {
                    if flag(sec.flags, elf::SHF_LINK_ORDER) {
                        let to = sec.hdr.sh_link(LE) as usize;
                        if to != 0 && to < o.sections.len() {
                            dependents.entry(to).or_default().push(s);
                        }
                    }
                }
                // lld links a group's members (`nextInSectionGroup`) only when one of them is
                // allocated: a group of debug sections alone (`.debug_types`, GCC's
                // `.debug_macro` groups) stays like any other non-alloc section.
                let all = o.groups.iter().map(|(_, _, m)| m).chain(o.plain_groups.iter());
                for members in all {
                    let member = |m: &u32| candidate[f].get(*m as usize).copied().unwrap_or(false);
                    let has_alloc = members.iter().filter(|m| member(m)).any(|&m| flag(o.sections[m as usize].flags, elf::SHF_ALLOC));
                    if !has_alloc {
                        continue;
                    }
                    let live_members: Vec<u32> = members.iter().copied().filter(|m| member(m)).collect();
                    let gi = groups.len();
                    for &mem in &live_members {
                        group_of.insert(mem as usize, gi);
                    }
                    groups.push(live_members);
                }
                (dependents, group_of, groups)
            })
            .collect();
        let mut dependents = Vec::with_capacity(per_file.len());
        let mut group_of = Vec::with_capacity(per_file.len());
        let mut groups = Vec::with_capacity(per_file.len());
        for (d, g, m) in per_file {
            dependents.push(d);
            group_of.push(g);
            groups.push(m);
        }
        let live = candidate.par_iter().map(|v| v.iter().map(|_| AtomicBool::new(false)).collect()).collect();
        Marker {
            config,
            r,
            candidate,
            live,
            used: (0..r.symbols.len()).map(|_| AtomicBool::new(false)).collect(),
            merge_refs: HashMap::default(),
            dso_needed: (0..r.files.len()).map(|_| AtomicBool::new(false)).collect(),
            dependents,
            group_of,
            groups,
            c_named: HashMap::default(),
        }
    }

    fn enqueue(&self, found: &mut Found, f: FileId, s: usize, offset: u64) {
        if s >= self.candidate[f].len() || !self.candidate[f][s] {
            return;
        }
        let o = self.r.obj(f);
        let sec = &o.sections[s];
        if sec.kind == SecKind::Merge && flag(sec.flags, elf::SHF_ALLOC) {
            found.merge_refs.push(((f, s as u32), offset));
        }
        // A plain load first: most references go to sections already live.
        if self.live[f][s].load(Relaxed) || self.live[f][s].swap(true, Relaxed) {
            return;
        }
        found.queue.push((f, s));
    }

    /// A root or referenced global symbol: its defining section lives.
    fn mark_symbol(&self, found: &mut Found, id: SymbolId) {
        if let Def::Defined(f, i) = self.r.symbols[id].def {
            let sym = &self.r.obj(f).symbols[i];
            if let Some(sh) = self.r.obj(f).sym_section(i) {
                self.enqueue(found, f, sh as usize, sym.st_value(LE));
            }
        }
    }

    /// lld's `resolveReloc`: what one relocation of a live section keeps alive. `from_fde`: the
    /// relocation is in an FDE, which keeps its LSDA but never the code it describes.
    fn resolve_reloc(&self, found: &mut Found, f: FileId, si: usize, addend: i64, from_fde: bool) {
        let r = self.r;
        let o = r.obj(f);
        if si == 0 {
            return;
        }
        let (df, di) = match r.reloc_target(f, si) {
            Some(id) => {
                if let Some(u) = self.used.get(id) {
                    if !u.load(Relaxed) {
                        u.store(true, Relaxed);
                    }
                }
                match r.symbols[id].def {
                    Def::Defined(df, di) => (df, di),
                    Def::Shared(df, _) => {
                        // lld's SharedSymbol keeps the binding of the objects' references
                        // (weak only if all are), not the library's: a weak definition in
                        // the library makes it needed too.
                        if r.symbols[id].strong_ref {
                            self.dso_needed[df].store(true, Relaxed);
                        }
                        return;
                    }
                    Def::Undefined | Def::Lazy(_) => {
                        if let Some(secs) = self.c_named.get(r.symbols[id].name) {
                            for &(cf, cs) in secs {
                                self.enqueue(found, cf, cs, 0);
                            }
                        }
                        return;
                    }
                    _ => return,
                }
            }
            None => (f, si),
        };
        let sym = &r.obj(df).symbols[di];
        let Some(sh) = r.obj(df).sym_section(di) else { return };
        let target = &r.obj(df).sections[sh as usize];
        let mut offset = sym.st_value(LE);
        if sym.st_type() == elf::STT_SECTION {
            offset = offset.wrapping_add(addend as u64);
        }
        if from_fde && (flag(target.flags, elf::SHF_EXECINSTR) || flag(target.flags, elf::SHF_LINK_ORDER) || self.group_of[df].contains_key(&(sh as usize))) {
            return;
        }
        let _ = o;
        self.enqueue(found, df, sh as usize, offset);
    }

    fn run(&mut self) {
        let r = self.r;
        let config = self.config;
        let this = &*self;
        // Symbols the output exports, and the ones the command line names.
        let mut found = r
            .symbols
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .fold(Found::default, |mut found, (id, s)| {
                // A definition a shared library also defines is exported too (it must preempt
                // the library's), as the dynamic symbol table does (`lto/dynsym.ll`).
                let preempts_dso = s.in_dso && matches!(s.def, Def::Defined(..) | Def::Common(..));
                // A hidden or local symbol is never exported, even when a shared library
                // refers to it (lld's isExported), so that reference keeps nothing alive.
                let visible = matches!(s.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED) && !s.forced_local;
                let exported = (config.export_dynamic || config.shared || s.dynamic_listed || preempts_dso || s.dso_ref) && visible;
                if exported {
                    this.mark_symbol(&mut found, id);
                }
                found
            })
            .reduce(Found::default, Found::join);
        let entry = config.entry.clone().unwrap_or_else(|| "_start".to_string());
        let init = config.init.clone().unwrap_or_else(|| "_init".into());
        let fini = config.fini.clone().unwrap_or_else(|| "_fini".into());
        let names: Vec<String> = [entry, init, fini].into_iter().chain(config.undefined.iter().cloned()).chain(config.script.referenced_symbols()).collect();
        // Looked up as lld's `symtab.find` after `--wrap` renamed its map: `-u foo` or a script
        // reading `foo` under `--wrap=foo` keeps `__wrap_foo`.
        for name in &names {
            if let Some(id) = r.lookup_expr(name.as_bytes()) {
                this.mark_symbol(&mut found, id);
            }
        }
        // What `--defsym` expressions read (lld turns them into script assignments, whose
        // symbols are roots): an ifunc whose only reference is `--defsym=alias=f` keeps its
        // resolver.
        for t in config.defsym.iter().filter_map(|(_, e)| crate::elf::config::defsym_target(e)) {
            if let Some(id) = r.lookup_expr(t.as_bytes()) {
                this.mark_symbol(&mut found, id);
            }
        }
        // The sections that are roots, each file on its own, and the ones named like C
        // identifiers (`c_named` is filled after this pass, so the roots' `.eh_frame`
        // references to a `__start_X` keep nothing).
        let per_file: Vec<(Found, Vec<usize>)> = r
            .files
            .par_iter()
            .enumerate()
            .map(|(f, file)| {
                let mut found = Found::default();
                let mut c_named = Vec::new();
                let File::Obj(o) = file else { return (found, c_named) };
                if !r.loaded[f] {
                    return (found, c_named);
                }
                for s in 0..o.sections.len() {
                    let (root, unfollowed) = this.root_kind(o, f, s);
                    if unfollowed {
                        // Kept, but not followed: see the module comment.
                        this.live[f][s].store(true, Relaxed);
                        if let Some(deps) = this.dependents[f].get(&s) {
                            for &d in deps {
                                if this.candidate[f][d] {
                                    this.live[f][d].store(true, Relaxed);
                                }
                            }
                        }
                    }
                    match root {
                        Root::EhFrame => this.scan_eh_frame(&mut found, f, s),
                        Root::Kept => this.enqueue(&mut found, f, s, 0),
                        Root::CNamed => c_named.push(s),
                        Root::No => {}
                    }
                }
                (found, c_named)
            })
            .collect();
        let mut c_named: HashMap<Vec<u8>, Vec<(FileId, usize)>> = HashMap::default();
        for (f, (file_found, named)) in per_file.into_iter().enumerate() {
            found = found.join(file_found);
            for s in named {
                let name = r.obj(f).sections[s].name;
                for prefix in [&b"__start_"[..], b"__stop_"] {
                    let mut key = prefix.to_vec();
                    key.extend_from_slice(name);
                    c_named.entry(key).or_default().push((f, s));
                }
            }
        }
        self.c_named = c_named;
        self.mark(found);
    }

    /// What section `s` of file `f` is before marking (lld's `MarkLive::run` loop), and
    /// whether it is a non-allocated section outside any group: kept but not followed (see the
    /// module comment), whatever else it is.
    fn root_kind(&self, o: &ObjFile, f: FileId, s: usize) -> (Root, bool) {
        if !self.candidate[f][s] {
            return (Root::No, false);
        }
        let sec = &o.sections[s];
        if sec.kind == SecKind::EhFrame {
            return (Root::EhFrame, false);
        }
        if flag(sec.flags, elf::SHF_GNU_RETAIN) || crate::elf::script::select::is_kept(self.config, self.r, f, s) {
            return (Root::Kept, false);
        }
        if flag(sec.flags, elf::SHF_LINK_ORDER) {
            return (Root::No, false);
        }
        let in_gc_group = self.group_of[f].contains_key(&s);
        let unfollowed = !flag(sec.flags, elf::SHF_ALLOC) && !in_gc_group;
        let root = if is_reserved(o, s, in_gc_group) {
            Root::Kept
        } else if (!self.config.z_start_stop_gc || sec.name.starts_with(b"__libc_")) && is_c_ident(sec.name) {
            Root::CNamed
        } else {
            Root::No
        };
        (root, unfollowed)
    }

    /// CIEs keep their personality routines, FDEs their LSDAs (lld's `scanEhFrameSection`).
    fn scan_eh_frame(&self, found: &mut Found, f: FileId, s: usize) {
        let o = self.r.obj(f);
        let sec = &o.sections[s];
        let Ok(records) = super::eh_frame::split(sec.data) else { return };
        let relocs = sec.relocs;
        let mut k = 0;
        for rec in records {
            while k < relocs.len() && relocs[k].r_offset(LE) < rec.offset {
                k += 1;
            }
            let mut j = k;
            while j < relocs.len() && relocs[j].r_offset(LE) < rec.offset + rec.len {
                let rel = &relocs[j];
                self.resolve_reloc(found, f, rel.r_sym(LE, false) as usize, rel.r_addend(LE), !rec.is_cie);
                j += 1;
            }
        }
    }

    /// Follows references from the roots to a fixed point, one wave of newly live sections at
    /// a time, each wave's sections scanned in parallel (whichever thread marks a section
    /// first scans it; the set reached does not depend on the order).
    fn mark(&mut self, roots: Found) {
        let mut refs = roots.merge_refs;
        let mut wave = roots.queue;
        while !wave.is_empty() {
            let this = &*self;
            let found = wave
                .par_iter()
                .with_min_len(64)
                .fold(Found::default, |mut found, &(f, s)| {
                    this.scan(&mut found, f, s);
                    found
                })
                .reduce(Found::default, Found::join);
            wave = found.queue;
            refs.extend(found.merge_refs);
        }
        for (key, off) in refs {
            self.merge_refs.entry(key).or_default().push(off);
        }
    }

    /// One live section: what its relocations, its SHF_LINK_ORDER dependents and its group
    /// keep alive.
    fn scan(&self, found: &mut Found, f: FileId, s: usize) {
        let o = self.r.obj(f);
        let sec = &o.sections[s];
        for rel in sec.relocs {
            self.resolve_reloc(found, f, rel.r_sym(LE, false) as usize, rel.r_addend(LE), false);
        }
        if let Some(deps) = self.dependents[f].get(&s) {
            for &d in deps {
                self.enqueue(found, f, d, 0);
            }
        }
        if let Some(&g) = self.group_of[f].get(&s) {
            for &mem in &self.groups[f][g] {
                self.enqueue(found, f, mem as usize, 0);
            }
        }
    }

    /// `--print-gc-sections`: every dropped section, in input order, on standard output.
    fn print_removed(&self, live: &Live) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for (f, o) in self.r.objects_in_load_order() {
            for (s, sec) in o.sections.iter().enumerate() {
                // With --emit-relocs a removed section's relocation section is named too (lld).
                let removed = |t: usize| self.candidate[f][t] && !live[f][t] && o.sections[t].kind != SecKind::EhFrame;
                // (`.eh_frame`'s is never marked live.)
                let rela_of_removed = self.config.emit_relocs && sec.sh_type == elf::SHT_RELA && {
                    let t = sec.hdr.sh_info(LE) as usize;
                    t < o.sections.len() && (removed(t) || (self.candidate[f][t] && o.sections[t].kind == SecKind::EhFrame))
                };
                if removed(s) || rela_of_removed {
                    let _ = writeln!(out, "removing unused section {}:({})", o.input.name, String::from_utf8_lossy(sec.name));
                }
            }
        }
    }
}

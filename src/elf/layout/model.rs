//! The layout as data: the `Layout` every phase of `layout` fills and the writer, the map and
//! the script engine read (output sections, chunks, GOT and PLT slots, dynamic relocations,
//! the fixes of relocation sites, segments), with the questions they ask of it.
//!
//! Why it is a module of its own: the phases (`sections`, `scan`, `create`, `addresses`, ...)
//! and the later stages need the model but not the driver that runs the phases in order
//! (`layout/mod.rs`); kept here, below all of them, they import it without importing each
//! other's driver.

use std::collections::HashMap;

use crate::util::fasthash::{FastMap, FastSet};

use dtld_arch::x86_64 as arch;
use object::elf;
use object::read::elf::Sym as _;

use crate::elf::config::Config;
use crate::elf::object::{ObjFile, SecKind};
use crate::elf::symtab::{Def, File, FileId, Resolved, SymbolId};
use crate::elf::types::{Sym, LE};

use super::pieces::PieceCursor;

/// What the relocation scan finds a symbol needs (bits of its `needs`): a GOT slot, a PLT entry,
/// a copy, a canonical PLT entry, ...
pub(crate) const N_GOT: u16 = 1;
pub(crate) const N_PLT: u16 = 2;
pub(crate) const N_GOTTP: u16 = 4;
pub(crate) const N_COPY: u16 = 8;
pub(crate) const N_CANON: u16 = 16;
pub(crate) const N_IPLT: u16 = 32;
/// The IFUNC's address is taken directly: its IPLT entry becomes its canonical address.
pub(crate) const N_CANON_IFUNC: u16 = 64;
/// A general-dynamic GOT pair (or, for `TLS_LD_TARGET`, the local-dynamic pair).
pub(crate) const N_GOTGD: u16 = 128;
/// A TLS descriptor (two GOT slots resolved by the loader's R_X86_64_TLSDESC).
pub(crate) const N_GOTDESC: u16 = 256;

/// An input section: (file, section index).
pub type Sec = (FileId, u32);

/// `--icf`: each folded section → the section that stays in its place (`elf::icf`).
pub type Folded = HashMap<Sec, Sec>;

pub const PAGE: u64 = 0x1000;

/// What a relocation refers to: a global symbol, or a local symbol of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Global(SymbolId),
    Local(FileId, u32),
}

/// One piece of an output section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    Input(FileId, u32),
    /// Deduplicated SHF_MERGE contents (index into `Layout::merged`).
    Merged(usize),
    /// Space in .bss for a common symbol or a copy relocation.
    Bss(SymbolId),
    Synthetic(Synth),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Synth {
    Interp,
    /// `.note.gnu.property`: the x86 feature bits (IBT, SHSTK) every input has, or `-z shstk`.
    GnuProperty,
    BuildId,
    DynSym,
    DynStr,
    Versym,
    Verdef,
    Verneed,
    GnuHash,
    SysvHash,
    RelaDyn,
    /// `.relr.dyn`: packed relative relocations (`elf::relr`).
    RelrDyn,
    RelaPlt,
    EhFrameHdr,
    EhFrame,
    Plt,
    Iplt,
    Dynamic,
    Got,
    GotPlt,
    RelroPadding,
    Comment,
    /// `.gdb_index` (`elf::gdb_index`).
    GdbIndex,
}

#[derive(Debug, Clone)]
pub struct OutSec {
    pub name: String,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
    pub chunks: Vec<Chunk>,
    /// Offsets of `chunks` within the section.
    pub chunk_off: Vec<u64>,
    pub size: u64,
    pub addr: u64,
    pub offset: u64,
    pub relro: bool,
    /// Index in the output section header table (0 = not written).
    pub shndx: u32,
    /// With a SECTIONS script: the output section description this section is (orphans: None).
    pub script_desc: Option<usize>,
    /// `(NOLOAD)`: no PT_LOAD covers it.
    pub noload: bool,
}

pub use crate::elf::merge::Merged;

/// A record of an input `.eh_frame` section kept in the output.
#[derive(Debug, Clone, Copy)]
pub struct EhRecord {
    pub file: FileId,
    pub sec: u32,
    pub in_off: u64,
    pub len: u64,
    pub out_off: u64,
    pub is_cie: bool,
    /// For FDEs: output offset of the (deduplicated) CIE they refer to.
    pub cie_out_off: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GotKind {
    /// Holds the target's address (GLOB_DAT when preemptible, RELATIVE in PIC output).
    Addr,
    /// Holds the target's TP offset (TPOFF64 when preemptible, or in a shared library).
    TpOff,
    /// General-dynamic pair, first slot: the module ID (DTPMOD64, filled by the loader).
    TlsGdMod,
    /// General-dynamic pair, second slot: the offset in the module's TLS block (DTPOFF64 when
    /// preemptible, else written here).
    TlsGdOff,
    /// Local-dynamic pair, first slot: this module's ID (DTPMOD64 without a symbol).
    TlsLdMod,
    /// A slot that stays zero (the second half of the local-dynamic pair and of a TLS
    /// descriptor).
    Zero,
    /// A TLS descriptor's first slot (R_X86_64_TLSDESC; the loader fills both slots).
    TlsDesc,
}

/// The key of the one local-dynamic GOT pair of the output.
pub const TLS_LD_TARGET: Target = Target::Local(usize::MAX, u32::MAX);

/// A dynamic relocation; its place is resolved by the writer.
#[derive(Debug, Clone, Copy)]
pub struct DynRel {
    pub place: Place,
    pub r_type: u32,
    /// Dynamic symbol (for symbolic relocations).
    pub sym: Option<SymbolId>,
    pub addend: Addend,
}

#[derive(Debug, Clone, Copy)]
pub enum Place {
    /// Offset inside an input section.
    Input(FileId, u32, u64),
    GotSlot(u32),
    GotPltSlot(u32),
    /// The `.bss` copy of a copy-relocated symbol.
    Copy(SymbolId),
}

#[derive(Debug, Clone, Copy)]
pub enum Addend {
    Const(i64),
    /// The target's address plus a constant (RELATIVE / IRELATIVE).
    AddrOf(Target, i64),
    /// The target's offset in this module's TLS block plus a constant (TPOFF64 without a
    /// symbol, in a shared library).
    TlsOffsetOf(Target, i64),
}

/// What the scan decided for a relocation site that is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteFix {
    /// Apply as the relocation says.
    Normal,
    /// Relocation was consumed by the previous (TLS) relaxation, or a dynamic relocation
    /// applies it at load time (the field keeps the input's bytes, as lld leaves it).
    Skip,
    /// `--apply-dynamic-relocs` with a symbolic dynamic relocation: the addend is written.
    WriteAddend,
    GotPcRelax,
    TlsGdToLe,
    TlsGdToIe,
    TlsLdToLe,
    TlsIeToLe,
    TlsDescToLe,
    TlsDescToIe,
    TlsDescCallNop,
}

#[derive(Default, Clone)]
pub struct SymFlags {
    pub got: bool,
    pub gottp: bool,
    pub plt: bool,
    pub copy: bool,
    /// PLT entry whose address is the symbol's canonical address (non-PIC address-taking of a
    /// function defined in a shared library).
    pub canonical: bool,
}

pub struct Layout<'r> {
    pub config: &'r Config,
    pub r: &'r Resolved,
    pub osecs: Vec<OutSec>,
    /// Per file, per section: output section index (u32::MAX = not in output).
    pub sec_osec: Vec<Vec<u32>>,
    /// Per file, per section: offset within the output section.
    pub sec_off: Vec<Vec<u64>>,
    pub merged: Vec<Merged>,
    /// Each merged chunk's address, filled when the layout is final (empty before: the
    /// address is then looked up in its output section's chunk list).
    pub merged_addr: Vec<u64>,
    pub eh_records: Vec<EhRecord>,
    /// Per (file, sec) of .eh_frame inputs: its kept records (indices into `eh_records`), by
    /// input offset.
    pub eh_index: FastMap<(FileId, u32), Vec<u32>>,
    pub eh_size: u64,
    pub sym_flags: FastMap<Target, SymFlags>,
    pub got: Vec<(Target, GotKind)>,
    pub got_index: FastMap<(Target, GotKind), u32>,
    /// PLT entries (preemptible functions), in order.
    pub plt: Vec<SymbolId>,
    pub plt_index: FastMap<SymbolId, u32>,
    /// IFUNC entries: target and its .got.plt slot.
    pub iplt: Vec<Target>,
    pub iplt_index: FastMap<Target, u32>,
    /// IFUNCs whose address is taken other than through the GOT: every reference uses the
    /// IPLT entry's address (lld's canonical PLT for IFUNCs).
    pub ifunc_canonical: FastSet<Target>,
    /// Non-preemptible IFUNCs loaded through the GOT but not canonical: their GOT references
    /// read the IPLT entry's `.got.plt` slot, which IRELATIVE fills (lld's `gotInIgot`).
    pub got_in_igot: FastSet<Target>,
    pub dynrels: Vec<DynRel>,
    pub irelatives: Vec<DynRel>,
    pub relative_count: usize,
    /// Relative relocations packed into `.relr.dyn` (RELR), and their encoding once addresses
    /// are known.
    pub relr: Vec<Place>,
    pub relr_words: Vec<u64>,
    /// `.rela.dyn` in Android's packed format, once addresses are known (`elf::android_rela`).
    pub android_rela: Vec<u8>,
    /// What the relocation scan decided for single relocations (relaxations, skips), per file,
    /// as (section, relocation index, fix) in that order: the writer walks a section's entries
    /// alongside its relocations instead of looking each relocation up in a table.
    pub site_fix: Vec<Vec<(u32, u32, SiteFix)>>,
    /// Per global symbol: whether its definition is in an SHF_EXCLUDE section (which the link
    /// drops: `reloc_check::in_excluded_section`, asked for every reference). Empty when no
    /// loaded object has such a section (most links; Rust's `.llvmbc` is one).
    pub excluded_defs: Vec<bool>,
    pub dynsyms: Vec<SymbolId>,
    pub dynsym_index: FastMap<SymbolId, u32>,
    pub copies: Vec<SymbolId>,
    /// Other names of a copy-relocated object in its library (`environ`, `__environ`, ...):
    /// alias → the copied symbol. They share the copy's address and are exported with it.
    pub copy_alias: FastMap<SymbolId, SymbolId>,
    /// Under --gc-sections: global symbols referenced from live sections.
    pub gc_used: Option<crate::elf::gc::Used>,
    pub needed: Vec<FileId>,
    pub sym_value: Vec<u64>,
    pub synth_osec: FastMap<Synth, usize>,
    pub has_dynamic: bool,
    pub is_pic: bool,
    pub tls: Option<(u64, u64, u64)>,
    pub image_base: u64,
    pub entry: u64,
    pub phdrs: Vec<Phdr>,
    pub file_size: u64,
    /// Synthetic symbols defined by the linker: name → (output section, offset, or absolute).
    pub synthetic_syms: FastMap<SymbolId, u64>,
    /// Per symbol: an undefined reference the linker will define (`_DYNAMIC`, `__ehdr_start`,
    /// `__start_foo` with an output section `foo`, ...). Decided before the relocation scan, as
    /// lld's `addReservedSymbols`, so that GOT, PLT and relaxation see them as defined and
    /// non-preemptible.
    pub linker_defined: Vec<bool>,
    pub verneed: Vec<(FileId, Vec<&'static [u8]>)>,
    pub dynstr: Vec<u8>,
    pub dynstr_off: FastMap<Vec<u8>, u32>,
    /// x86 feature bits written in `.note.gnu.property` (0: no note).
    pub x86_features: u32,
    /// Warnings a repeated address pass must say once (lld says them after the last pass).
    pub warned_once: std::sync::Mutex<std::collections::HashSet<String>>,
    /// With a SECTIONS script: the matching of input sections to its descriptions.
    pub script_plan: Option<crate::elf::script::plan::Plan>,
    /// INSERT blocks without a SECTIONS command: the default layout, with their sections.
    pub insert_plan: Option<crate::elf::script::plan::InsertPlan>,
    /// With a SECTIONS script: the priorities of `--symbol-ordering-file` or the call graph,
    /// applied inside each input section description (lld's sortISDBySectionOrder).
    pub section_priority: HashMap<(FileId, u32), u32>,
    /// Symbols a linker script assigns: value and output section (None: absolute).
    pub script_syms: FastMap<SymbolId, (u64, Option<usize>)>,
    /// Data commands, fills and load addresses of the script's output sections.
    pub script_extra: crate::elf::script::plan::Extra,
    /// `--icf`: each folded input section → the one kept in its place (`elf::icf`).
    pub icf_folded: Folded,
    /// `--gdb-index`: the index, sized with the synthetic sections.
    pub gdb_index: Option<crate::elf::gdb_index::read::GdbIndex>,
    /// How long each part of the layout took (`--time-trace`).
    pub laps: crate::trace::Laps,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Phdr {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
    /// p_paddr when it differs from p_vaddr (a linker script's `AT`).
    pub paddr: Option<u64>,
}

pub(crate) fn flag(flags: u64, f: u32) -> bool {
    flags & f as u64 != 0
}

/// lld's rule for the output section name of an input section.
pub fn output_name(name: &[u8], keep_text_prefix: bool) -> &[u8] {
    // `-z keep-text-section-prefix`: lld's hot/unknown/cold/startup/exit/split text keeps its
    // own output section (`.text.hot.f` and `.text.hot` go to `.text.hot`).
    if keep_text_prefix {
        for v in [&b".text.hot"[..], b".text.unknown", b".text.unlikely", b".text.startup", b".text.exit", b".text.split"] {
            if name.starts_with(v) && (name.len() == v.len() || name[v.len()] == b'.') {
                return v;
            }
        }
    }
    // lld's prefix list, by the character after the dot (called for every input section: a
    // debug section no longer compares itself with all 18 prefixes).
    let candidates: &[&[u8]] = match name.get(1) {
        _ if name.first() != Some(&b'.') => &[],
        Some(b't') => &[b".text", b".tbss", b".tdata"],
        Some(b'r') => &[b".rodata"],
        Some(b'd') => &[b".data.rel.ro", b".data", b".dtors"],
        Some(b'b') => &[b".bss.rel.ro", b".bss"],
        Some(b'l') => &[b".ldata", b".lrodata", b".lbss"],
        Some(b'g') => &[b".gcc_except_table"],
        Some(b'i') => &[b".init_array"],
        Some(b'f') => &[b".fini_array"],
        Some(b'A') => &[b".ARM.exidx", b".ARM.extab"],
        Some(b'c') => &[b".ctors"],
        // The small-data sections (lld 22 names them for every target).
        Some(b's') => &[b".sbss", b".sdata", b".srodata"],
        _ => &[],
    };
    for p in candidates {
        if name == *p {
            return name;
        }
        if name.len() > p.len() && name.starts_with(p) && name[p.len()] == b'.' {
            return p;
        }
    }
    name
}

impl<'r> Layout<'r> {
    /// The scan's fixes of section `s` of file `f`, by relocation index (see `site_fix`).
    pub fn section_fixes(&self, f: FileId, s: u32) -> &[(u32, u32, SiteFix)] {
        let Some(v) = self.site_fix.get(f) else { return &[] };
        let a = v.partition_point(|e| e.0 < s);
        let b = a + v[a..].partition_point(|e| e.0 == s);
        &v[a..b]
    }

    pub fn obj(&self, f: FileId) -> &'r ObjFile {
        self.r.obj(f)
    }

    pub fn sym(&self, f: FileId, i: usize) -> &'r Sym {
        &self.r.obj(f).symbols[i]
    }

    /// Resolves an object's symbol index to what a relocation refers to.
    pub fn target_of(&self, f: FileId, i: usize) -> Target {
        match self.r.reloc_target(f, i) {
            Some(id) => Target::Global(id),
            None => Target::Local(f, i as u32),
        }
    }

    /// The index of the last allocated output section whose range holds `v` (its end
    /// included), `SHN_ABS` if none: where a `--defsym` alias of an address is written.
    pub fn shndx_at(&self, v: u64) -> u32 {
        self.osecs
            .iter()
            .filter(|o| o.flags & elf::SHF_ALLOC as u64 != 0 && o.addr <= v && v <= o.addr + o.size)
            .map(|o| o.shndx)
            .next_back()
            .unwrap_or(crate::elf::types::reserved_shndx(elf::SHN_ABS))
    }

    pub fn is_preemptible(&self, t: Target) -> bool {
        match t {
            Target::Local(..) => false,
            Target::Global(id) => {
                let s = &self.r.symbols[id];
                match s.def {
                    Def::Shared(..) => true,
                    // What the linker defines is hidden or protected, except the end markers
                    // a library exports (lld); never preempted otherwise.
                    Def::Undefined | Def::Lazy(_) if self.is_linker_defined(id) => {
                        // lld defines them STB_GLOBAL and STT_NOTYPE.
                        let symbolic = self.config.bsymbolic.binds_locally(elf::STT_NOTYPE, false) || !self.config.dynamic_lists.is_empty();
                        self.config.shared && self.exports_linker_defined(id) && self.visibility(id) == elf::STV_DEFAULT && (s.dynamic_listed || !symbolic)
                    }
                    // A shared library leaves undefined symbols to the loader.
                    Def::Undefined | Def::Lazy(_) if self.config.shared => {
                        s.visibility == elf::STV_DEFAULT && (self.config.z_dynamic_undefined_weak || !s.weak)
                    }
                    // An undefined weak reference may be bound by a library at load time,
                    // unless hidden or protected (those resolve to 0 here, as in lld); so may a
                    // non-weak one that --unresolved-symbols=ignore-* or --warn-unresolved-symbols
                    // let through (lld: an undefined symbol of a dynamic output is preemptible).
                    Def::Undefined | Def::Lazy(_) => {
                        let let_through = self.config.unresolved_ignored() || self.config.warn_unresolved_symbols;
                        (s.weak || let_through) && s.visibility == elf::STV_DEFAULT && self.has_dso()
                    }
                    // In a shared library an exported default-visibility definition can be
                    // interposed by the executable or an earlier library (unless -Bsymbolic).
                    Def::Defined(f, i) if self.config.shared && s.visibility == elf::STV_DEFAULT && !s.forced_local => {
                        let d = self.sym(f, i);
                        let weak = d.st_bind() == elf::STB_WEAK;
                        // With --dynamic-list, a library's unlisted symbols bind locally (lld).
                        let symbolic = self.config.bsymbolic.binds_locally(d.st_type(), weak) || !self.config.dynamic_lists.is_empty();
                        (s.dynamic_listed || !symbolic) && self.sym(f, i).st_shndx(LE) != elf::SHN_ABS
                    }
                    Def::Common(..) if self.config.shared && s.visibility == elf::STV_DEFAULT && !s.forced_local => {
                        // A common symbol becomes a global STT_OBJECT definition in `.bss`.
                        let symbolic = self.config.bsymbolic.binds_locally(elf::STT_OBJECT, false) || !self.config.dynamic_lists.is_empty();
                        s.dynamic_listed || !symbolic
                    }
                    _ => false,
                }
            }
        }
    }

    /// An undefined reference the linker defines (see `linker_defined`).
    pub fn is_linker_defined(&self, id: SymbolId) -> bool {
        self.linker_defined.get(id).copied().unwrap_or(false)
    }

    /// A referenced end marker (`_end`, `etext`, `__bss_start`, ...) the linker defines: lld
    /// defines them with default visibility, so a -shared or --export-dynamic link exports them,
    /// and so does any link with a shared library that defines the name.
    pub fn exports_linker_defined(&self, id: SymbolId) -> bool {
        let s = &self.r.symbols[id];
        self.is_linker_defined(id)
            && crate::elf::reserved::is_public_linker_defined(s.name)
            && matches!(s.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED)
            && !s.forced_local
            // A shared library that defines the name sees the output's definition (lld).
            && (self.config.shared || self.config.export_dynamic || s.in_dso)
    }

    /// Symbol `id`'s visibility in the output: lld adds a hidden `_DYNAMIC` to every output
    /// with a dynamic section, which makes any other definition of it (a script's) hidden too.
    pub fn visibility(&self, id: SymbolId) -> u8 {
        let s = &self.r.symbols[id];
        if s.name == b"_DYNAMIC" && self.has_dynamic {
            elf::STV_HIDDEN
        } else {
            s.visibility
        }
    }

    pub fn has_dso(&self) -> bool {
        !self.needed.is_empty() || self.r.files.iter().zip(&self.r.loaded).any(|(f, l)| *l && matches!(f, File::Shared(_)))
    }

    pub fn is_ifunc(&self, t: Target) -> bool {
        match t {
            Target::Local(f, i) => self.sym(f, i as usize).st_type() == elf::STT_GNU_IFUNC,
            Target::Global(id) => match self.r.symbols[id].def {
                Def::Defined(f, i) => self.sym(f, i).st_type() == elf::STT_GNU_IFUNC,
                Def::Synthetic => self.script_alias_is_ifunc(id, 0),
                _ => false,
            },
        }
    }

    /// A script assignment `alias = sym;` or `--defsym=alias=sym` (a bare symbol, nothing else;
    /// a script without SECTIONS has its plain assignments read as `--defsym`s) gives `alias` the
    /// type of `sym` in lld (ExprValue carries it): the alias of an IFUNC is an IFUNC itself, at
    /// the resolver's address, called through an IPLT entry of its own.
    pub(crate) fn script_alias_is_ifunc(&self, id: SymbolId, depth: u32) -> bool {
        let Some(tid) = self.script_alias_target(id) else { return false };
        match self.r.symbols[tid].def {
            Def::Defined(f, i) => self.sym(f, i).st_type() == elf::STT_GNU_IFUNC,
            Def::Synthetic if depth < 16 && tid != id => self.script_alias_is_ifunc(tid, depth + 1),
            _ => false,
        }
    }

    /// The symbol a script assignment or `--defsym` that is a bare name (`alias = sym;`) makes
    /// `id` an alias of.
    pub fn script_alias_target(&self, id: SymbolId) -> Option<SymbolId> {
        let name = String::from_utf8_lossy(self.r.symbols[id].name);
        let target = match self.config.defsym.iter().rev().find(|(n, _)| *n == name) {
            Some((_, e)) => e.trim().to_string(),
            None => {
                let a = self.config.script.assigns().into_iter().rev().find(|a| a.name == name)?;
                let crate::elf::script::ast::Expr::Sym(target) = &a.expr else { return None };
                target.clone()
            }
        };
        self.r.lookup_expr(target.as_bytes())
    }

    /// The address of defined global `id`'s canonical IPLT entry, when it is an IFUNC whose
    /// entry is canonical: the value a script expression naming it reads, as lld evaluates
    /// scripts after redirecting such a symbol to its entry.
    pub fn canonical_ifunc_addr(&self, id: SymbolId) -> Option<u64> {
        let t = Target::Global(id);
        if !matches!(self.r.symbols[id].def, Def::Defined(..)) || !self.ifunc_canonical.contains(&t) {
            return None;
        }
        self.iplt_index.get(&t).map(|&i| self.iplt_entry_addr(i))
    }

    pub(crate) fn is_func(&self, id: SymbolId) -> bool {
        match self.r.symbols[id].def {
            Def::Shared(f, k) => {
                let t = self.r.dso(f).syms[k].sym.st_type();
                t == elf::STT_FUNC || t == elf::STT_GNU_IFUNC
            }
            _ => false,
        }
    }

    /// True for symbols whose value does not move with the load address (SHN_ABS, undefined
    /// weak resolved to zero).
    pub fn is_absolute(&self, t: Target) -> bool {
        let (f, i) = match t {
            Target::Local(f, i) => (f, i as usize),
            Target::Global(id) => match self.r.symbols[id].def {
                Def::Defined(f, i) => (f, i),
                // Linker-defined symbols (`__start_foo`, `_end`, ...) are section-relative.
                Def::Undefined | Def::Lazy(_) => return !self.is_linker_defined(id),
                Def::Synthetic => return self.synthetic_is_abs(id),
                _ => return false,
            },
        };
        self.sym(f, i).st_shndx(LE) == elf::SHN_ABS
    }

    /// `--defsym=foo=0x1000` is absolute; `--defsym=foo=bar` moves with `bar`.
    pub(crate) fn synthetic_is_abs(&self, id: SymbolId) -> bool {
        let name = self.r.symbols[id].name;
        // A script's assignment, in SECTIONS or at the top level of a script without it
        // (`PROVIDE(sym = 0x1234)` is absolute, as in lld).
        if let Some(abs) = self.script_sym_is_abs(&String::from_utf8_lossy(name), 0) {
            return abs;
        }
        self.config.defsym.iter().any(|(n, e)| n.as_bytes() == name && crate::elf::config::defsym_target(e).is_none())
    }

    /// A symbol a linker script assigns: whether its (last) assignment is absolute; `None` if
    /// no script assigns it.
    pub(crate) fn script_sym_is_abs(&self, name: &str, depth: u32) -> Option<bool> {
        let a = self.config.script.assigns().into_iter().rev().find(|a| a.name == name)?;
        if depth > 16 {
            return Some(false);
        }
        Some(crate::elf::script::eval::is_absolute(&a.expr, &|s| match self.script_sym_is_abs(s, depth + 1) {
            Some(v) => v,
            None => self.r.lookup(s.as_bytes()).is_some_and(|id| match self.r.symbols[id].def {
                Def::Defined(f, i) => self.sym(f, i).st_shndx(LE) == elf::SHN_ABS,
                _ => false,
            }),
        }))
    }

    pub fn is_tls(&self, t: Target) -> bool {
        match t {
            Target::Local(f, i) => self.sym(f, i as usize).st_type() == elf::STT_TLS,
            Target::Global(id) => match self.r.symbols[id].def {
                Def::Defined(f, i) | Def::Common(f, i) => self.sym(f, i).st_type() == elf::STT_TLS,
                Def::Shared(f, k) => self.r.dso(f).syms[k].sym.st_type() == elf::STT_TLS,
                _ => false,
            },
        }
    }

    /// Address of an input-section offset, following merged pieces and moved .eh_frame records.
    pub fn section_addr(&self, f: FileId, s: u32, off: u64) -> Option<u64> {
        self.section_addr_at(f, s, off, &mut PieceCursor::default())
    }

    /// `section_addr` with a cursor into the merged pieces, for a caller that looks up many
    /// offsets of the same sections, mostly ascending (the writer).
    pub fn section_addr_at<'l>(&'l self, f: FileId, s: u32, off: u64, cur: &mut PieceCursor<'l>) -> Option<u64> {
        let os = *self.sec_osec[f].get(s as usize)?;
        if os == u32::MAX {
            return None;
        }
        let osec = &self.osecs[os as usize];
        let sec = &self.obj(f).sections[s as usize];
        match sec.kind {
            SecKind::Merge => {
                let m = self.sec_off[f][s as usize] as usize;
                let pieces = cur.pieces((f, s), || self.merged[m].pieces.get(&(f, s)))?;
                let Some((pin, pout)) = pieces.find(off) else { return Some(osec.addr) };
                let base = self.merged_chunk_addr(os as usize, m);
                Some(base + pout + (off - pin))
            }
            SecKind::EhFrame => {
                let recs = self.eh_index.get(&(f, s)).map(Vec::as_slice).unwrap_or(&[]);
                let k = recs.partition_point(|&i| self.eh_records[i as usize].in_off <= off);
                if k > 0 {
                    let r = &self.eh_records[recs[k - 1] as usize];
                    if off < r.in_off + r.len {
                        return Some(osec.addr + r.out_off + (off - r.in_off));
                    }
                    // Between kept records: the position after the previous one.
                    return Some(osec.addr + r.out_off + r.len);
                }
                Some(osec.addr + recs.first().map_or(0, |&i| self.eh_records[i as usize].out_off))
            }
            _ => Some(osec.addr + self.sec_off[f][s as usize] + off),
        }
    }

    /// Whether input offset `off` of section `s` is in the output as far as merging goes: false
    /// only for an offset in a merge piece that `--gc-sections` left out.
    pub fn merge_piece_live(&self, f: FileId, s: u32, off: u64) -> bool {
        let os = self.sec_osec[f].get(s as usize).copied().unwrap_or(u32::MAX);
        if os == u32::MAX || self.obj(f).sections[s as usize].kind != SecKind::Merge {
            return true;
        }
        let m = self.sec_off[f][s as usize] as usize;
        self.merged[m].pieces.get(&(f, s)).is_none_or(|p| p.is_live(off))
    }

    pub(crate) fn merged_chunk_addr(&self, os: usize, m: usize) -> u64 {
        if let Some(&a) = self.merged_addr.get(m) {
            return a;
        }
        let osec = &self.osecs[os];
        for (c, off) in osec.chunks.iter().zip(&osec.chunk_off) {
            if *c == Chunk::Merged(m) {
                return osec.addr + off;
            }
        }
        osec.addr
    }

    pub fn synth_addr(&self, s: Synth) -> u64 {
        let Some(&i) = self.synth_osec.get(&s) else { return 0 };
        let os = &self.osecs[i];
        // A linker script may put a synthetic section among others in one output section.
        if os.chunks.len() > 1 {
            if let Some(k) = os.chunks.iter().position(|c| *c == Chunk::Synthetic(s)) {
                return os.addr + os.chunk_off.get(k).copied().unwrap_or(0);
            }
        }
        os.addr
    }

    pub fn got_slot_addr(&self, slot: u32) -> u64 {
        self.synth_addr(Synth::Got) + slot as u64 * 8
    }

    /// The address of the GOT slot holding `t`'s address, if it has one: the IPLT entry's
    /// `.got.plt` slot for an IFUNC only loaded through the GOT (lld's `getGotVA`).
    pub fn got_addr(&self, t: Target) -> Option<u64> {
        if self.got_in_igot.contains(&t) {
            return self.iplt_index.get(&t).map(|&i| self.gotplt_slot_addr(self.iplt_slot(i)));
        }
        self.got_index.get(&(t, GotKind::Addr)).map(|&i| self.got_slot_addr(i))
    }

    pub fn gotplt_slot_addr(&self, slot: u32) -> u64 {
        self.synth_addr(Synth::GotPlt) + (3 + slot as u64) * 8
    }

    pub fn iplt_slot(&self, i: u32) -> u32 {
        self.plt.len() as u32 + i
    }

    pub fn plt_entry_addr(&self, i: u32) -> u64 {
        self.synth_addr(Synth::Plt) + arch::PLT_HEADER_SIZE as u64 + i as u64 * arch::PLT_ENTRY_SIZE as u64
    }

    pub fn iplt_entry_addr(&self, i: u32) -> u64 {
        self.synth_addr(Synth::Iplt) + i as u64 * arch::IPLT_ENTRY_SIZE as u64
    }

    /// The address relocations against `t` use (S): the PLT entry for canonical PLT symbols and
    /// IFUNCs, the copy in .bss for copy-relocated symbols, the definition otherwise.
    /// A script alias of an IFUNC, canonical or not, is the value its expression gives (lld
    /// evaluates it again after the scan): the aliased IFUNC's entry or resolver.
    pub fn addr_of(&self, t: Target) -> u64 {
        if let Some(&i) = self.iplt_index.get(&t) {
            let alias = matches!(t, Target::Global(id) if matches!(self.r.symbols[id].def, Def::Synthetic));
            if self.ifunc_canonical.contains(&t) && !alias {
                return self.iplt_entry_addr(i);
            }
        }
        match t {
            Target::Local(f, i) => self.local_value(f, i as usize),
            Target::Global(id) => {
                if let Some(fl) = self.sym_flags.get(&t) {
                    if fl.canonical {
                        return self.plt_entry_addr(self.plt_index[&id]);
                    }
                }
                self.sym_value[id]
            }
        }
    }

    pub fn local_value(&self, f: FileId, i: usize) -> u64 {
        let s = self.sym(f, i);
        if s.st_shndx(LE) == elf::SHN_ABS {
            return s.st_value(LE);
        }
        let Some(shndx) = self.obj(f).sym_section(i) else { return 0 };
        if s.st_type() == elf::STT_SECTION {
            return self.section_addr(f, shndx, 0).unwrap_or(0);
        }
        self.section_addr(f, shndx, s.st_value(LE)).unwrap_or(0)
    }

    /// Address for a relocation with addend: section symbols in merge sections must add the
    /// addend before the piece lookup (the addend selects the piece).
    pub fn addr_with_addend(&self, t: Target, addend: i64) -> u64 {
        self.addr_with_addend_at(t, addend, &mut PieceCursor::default())
    }

    /// `addr_with_addend` with a cursor into the merged pieces (see `section_addr_at`).
    pub fn addr_with_addend_at<'l>(&'l self, t: Target, addend: i64, cur: &mut PieceCursor<'l>) -> u64 {
        if let Target::Local(f, i) = t {
            let s = self.sym(f, i as usize);
            if let Some(shndx) = self.obj(f).sym_section(i as usize) {
                let sec = &self.obj(f).sections[shndx as usize];
                // A section symbol's addend selects the piece of a merge section (lld does the
                // same); named symbols in merge sections are looked up by their own value.
                if s.st_type() == elf::STT_SECTION && matches!(sec.kind, SecKind::Merge | SecKind::EhFrame) {
                    let off = s.st_value(LE).wrapping_add(addend as u64);
                    return self.section_addr_at(f, shndx, off, cur).unwrap_or(0);
                }
            }
        }
        self.addr_of(t).wrapping_add(addend as u64)
    }

    /// The thread pointer's place relative to the TLS segment (x86-64's variant II: the block
    /// ends at the thread pointer): its end rounded up to the segment's alignment. The loader
    /// keeps `p_vaddr`'s offset within the alignment (glibc's `l_tls_firstbyte_offset`), so
    /// a segment a script starts off-alignment still gets aligned variables (lld's
    /// `getTlsTpOffset`: `p_memsz + ((-p_vaddr - p_memsz) & (p_align - 1))` below the pointer).
    pub fn tls_end(&self) -> u64 {
        match self.tls {
            Some((start, memsz, align)) => align_up(start + memsz, align),
            None => 0,
        }
    }

    pub fn tls_start(&self) -> u64 {
        self.tls.map(|t| t.0).unwrap_or(0)
    }
}

pub fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        (v + a - 1) & !(a - 1)
    }
}

// Dynamic relocations as the writer and the packed formats (RELR, Android) write them.

pub(crate) fn place_addr(l: &Layout, p: Place) -> u64 {
    match p {
        Place::Input(f, s, off) => l.section_addr(f, s, off).unwrap_or(0),
        Place::GotSlot(i) => l.got_slot_addr(i),
        Place::GotPltSlot(i) => l.gotplt_slot_addr(i),
        Place::Copy(id) => l.sym_value[id],
    }
}

/// A dynamic relocation's `r_offset`, `r_info` and `r_addend`.
pub fn rela_fields(l: &Layout, d: &DynRel) -> (u64, u64, u64) {
    let sym = d.sym.and_then(|id| l.dynsym_index.get(&id).copied()).unwrap_or(0) as u64;
    let addend = match d.addend {
        Addend::Const(a) => a as u64,
        Addend::TlsOffsetOf(t, a) => l.addr_of(t).wrapping_sub(l.tls_start()).wrapping_add(a as u64),
        Addend::AddrOf(t, a) => {
            if d.r_type == arch::r::IRELATIVE {
                // The resolver's own address, not the IPLT entry.
                resolver_addr(l, t).wrapping_add(a as u64)
            } else {
                l.addr_with_addend(t, a)
            }
        }
    };
    (place_addr(l, d.place), (sym << 32) | d.r_type as u64, addend)
}

/// The address of an IFUNC's resolver (its symbol value; for a script alias of an IFUNC, the
/// aliased one's, which the alias's value no longer is once that one's IPLT entry is canonical).
pub fn resolver_addr(l: &Layout, t: Target) -> u64 {
    match t {
        Target::Local(f, i) => l.local_value(f, i as usize),
        Target::Global(mut id) => {
            for _ in 0..16 {
                match (l.r.symbols[id].def, l.script_alias_target(id)) {
                    (Def::Synthetic, Some(tid)) if tid != id => id = tid,
                    _ => break,
                }
            }
            l.sym_value[id]
        }
    }
}

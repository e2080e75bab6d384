//! Layout: what goes into the output, where, and what the dynamic loader must do.
//!
//! This stage takes the resolved symbols and decides everything the writer needs, so the writer
//! can fill the output in parallel without further decisions:
//! 1. which input sections are live (`--gc-sections`, COMDAT losers and dead `.eh_frame` records
//!    dropped);
//! 2. which output section each input section joins (lld's name rules: `.text.*` → `.text`, ...),
//!    with SHF_MERGE pieces deduplicated;
//! 3. a scan of every relocation, which decides — from the relocation's generic kind and the
//!    target's properties, never from raw x86 numbers — which symbols need GOT slots, PLT entries,
//!    copy relocations, which places need dynamic relocations, and which code sequences are relaxed;
//! 4. section order, segments and addresses (lld's order: read-only, code, RELRO, data), then
//!    the final value of every symbol.

use std::collections::{BTreeMap, HashMap};

use dtld_arch::x86_64::{self as arch, RelKind};
use object::elf;
use object::read::elf::{Rela as _, Sym as _};

use crate::elf::config::Config;
use crate::elf::object::{ObjFile, SecKind};
use crate::elf::{Sym, LE};
use crate::error::{Error, Result};
use crate::elf::resolve::{Def, File, FileId, Resolved, SymbolId};

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
    /// Relocation was consumed by the previous (TLS) relaxation.
    Skip,
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
    pub eh_records: Vec<EhRecord>,
    /// Per (file, sec) of .eh_frame inputs: its kept records (indices into `eh_records`), by
    /// input offset.
    pub eh_index: HashMap<(FileId, u32), Vec<u32>>,
    pub eh_size: u64,
    pub sym_flags: HashMap<Target, SymFlags>,
    pub got: Vec<(Target, GotKind)>,
    pub got_index: HashMap<(Target, GotKind), u32>,
    /// PLT entries (preemptible functions), in order.
    pub plt: Vec<SymbolId>,
    pub plt_index: HashMap<SymbolId, u32>,
    /// IFUNC entries: target and its .got.plt slot.
    pub iplt: Vec<Target>,
    pub iplt_index: HashMap<Target, u32>,
    /// IFUNCs whose address is taken other than through the GOT: every reference uses the
    /// IPLT entry's address (lld's canonical PLT for IFUNCs).
    pub ifunc_canonical: std::collections::HashSet<Target>,
    pub dynrels: Vec<DynRel>,
    pub irelatives: Vec<DynRel>,
    pub relative_count: usize,
    pub site_fix: HashMap<(FileId, u32, usize), SiteFix>,
    pub dynsyms: Vec<SymbolId>,
    pub dynsym_index: HashMap<SymbolId, u32>,
    pub copies: Vec<SymbolId>,
    /// Other names of a copy-relocated object in its library (`environ`, `__environ`, ...):
    /// alias → the copied symbol. They share the copy's address and are exported with it.
    pub copy_alias: HashMap<SymbolId, SymbolId>,
    /// Under --gc-sections: global symbols referenced from live sections.
    pub gc_used: Option<std::collections::HashSet<SymbolId>>,
    pub needed: Vec<FileId>,
    pub sym_value: Vec<u64>,
    pub synth_osec: HashMap<Synth, usize>,
    pub has_dynamic: bool,
    pub is_pic: bool,
    pub tls: Option<(u64, u64, u64)>,
    pub image_base: u64,
    pub entry: u64,
    pub phdrs: Vec<Phdr>,
    pub shstrtab_size: u64,
    pub file_size: u64,
    pub symtab: Option<SymtabPlan>,
    /// Synthetic symbols defined by the linker: name → (output section, offset, or absolute).
    pub synthetic_syms: HashMap<SymbolId, u64>,
    /// Per symbol: an undefined reference the linker will define (`_DYNAMIC`, `__ehdr_start`,
    /// `__start_foo` with an output section `foo`, ...). Decided before the relocation scan, as
    /// lld's `addReservedSymbols`, so that GOT, PLT and relaxation see them as defined and
    /// non-preemptible.
    pub linker_defined: Vec<bool>,
    pub verneed: Vec<(FileId, Vec<&'static [u8]>)>,
    pub dynstr: Vec<u8>,
    pub dynstr_off: HashMap<Vec<u8>, u32>,
    /// x86 feature bits written in `.note.gnu.property` (0: no note).
    pub x86_features: u32,
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
}

pub struct SymtabPlan {
    /// Local symbols to write: (file, index).
    pub locals: Vec<(FileId, u32)>,
    pub globals: Vec<SymbolId>,
    pub strtab_size: u64,
    pub symtab_off: u64,
    pub strtab_off: u64,
    pub shdr_off: u64,
}

fn flag(flags: u64, f: u32) -> bool {
    flags & f as u64 != 0
}

/// lld's rule for the output section name of an input section.
pub fn output_name(name: &[u8]) -> &[u8] {
    const PREFIXES: &[&[u8]] = &[
        b".text", b".rodata", b".data.rel.ro", b".data", b".bss.rel.ro", b".bss", b".ldata", b".lrodata",
        b".lbss", b".gcc_except_table", b".init_array", b".fini_array", b".tbss", b".tdata", b".ARM.exidx",
        b".ARM.extab", b".ctors", b".dtors",
    ];
    for p in PREFIXES {
        if name == *p {
            return name;
        }
        if name.len() > p.len() && name.starts_with(p) && name[p.len()] == b'.' {
            return p;
        }
    }
    name
}


/// Priority of `.init_array.N` / `.ctors.N` style names for sorting (no suffix = 65536).
fn init_priority(name: &[u8]) -> u32 {
    let s = String::from_utf8_lossy(name);
    for p in [".init_array.", ".fini_array.", ".preinit_array."] {
        if let Some(rest) = s.strip_prefix(p) {
            return rest.parse().unwrap_or(65536);
        }
    }
    65536
}

/// Where an output section goes: lld's ranking, coarse groups in address order.
fn rank(os: &OutSec, relro_enabled: bool) -> u32 {
    if !flag(os.flags, elf::SHF_ALLOC) {
        return 100;
    }
    if os.name == ".interp" {
        return 1;
    }
    if os.sh_type == elf::SHT_NOTE {
        return 2;
    }
    let w = flag(os.flags, elf::SHF_WRITE);
    let x = flag(os.flags, elf::SHF_EXECINSTR);
    if !w && !x {
        return 10;
    }
    if !w && x {
        return 20;
    }
    let nobits = os.sh_type == elf::SHT_NOBITS;
    if os.relro && relro_enabled {
        let tls = flag(os.flags, elf::SHF_TLS);
        // NOBITS RELRO sections (.bss.rel.ro, .relro_padding) end the RELRO region.
        return if tls { 30 } else if nobits { 33 } else { 32 };
    }
    if os.relro && flag(os.flags, elf::SHF_TLS) {
        return 30;
    }
    if nobits {
        50
    } else {
        40
    }
}

fn is_relro_name(name: &str, flags: u64, sh_type: u32) -> bool {
    if !flag(flags, elf::SHF_WRITE) {
        return false;
    }
    if flag(flags, elf::SHF_TLS) {
        return true;
    }
    matches!(sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY)
        || matches!(name, ".data.rel.ro" | ".bss.rel.ro" | ".ctors" | ".dtors" | ".jcr" | ".dynamic" | ".got" | ".init_array" | ".fini_array" | ".preinit_array" | ".relro_padding")
        || name.starts_with(".data.rel.ro.")
}

impl<'r> Layout<'r> {
    pub fn obj(&self, f: FileId) -> &'r ObjFile {
        self.r.obj(f)
    }

    pub fn sym(&self, f: FileId, i: usize) -> &'r Sym {
        &self.r.obj(f).symbols[i]
    }

    /// Resolves an object's symbol index to what a relocation refers to.
    pub fn target_of(&self, f: FileId, i: usize) -> Target {
        match self.r.global_of(f, i) {
            Some(id) => Target::Global(id),
            None => Target::Local(f, i as u32),
        }
    }

    pub fn is_preemptible(&self, t: Target) -> bool {
        match t {
            Target::Local(..) => false,
            Target::Global(id) => {
                let s = &self.r.symbols[id];
                match s.def {
                    Def::Shared(..) => true,
                    // What the linker defines is hidden or protected: never preempted.
                    Def::Undefined | Def::Lazy(_) if self.is_linker_defined(id) => false,
                    // A shared library leaves undefined symbols to the loader.
                    Def::Undefined | Def::Lazy(_) if self.config.shared => {
                        s.visibility == elf::STV_DEFAULT && (self.config.z_dynamic_undefined_weak || !s.weak)
                    }
                    // An undefined weak reference may be bound by a library at load time,
                    // unless hidden or protected (those resolve to 0 here, as in lld).
                    Def::Undefined | Def::Lazy(_) => s.weak && s.visibility == elf::STV_DEFAULT && self.has_dso(),
                    // In a shared library an exported default-visibility definition can be
                    // interposed by the executable or an earlier library (unless -Bsymbolic).
                    Def::Defined(f, i) if self.config.shared && s.visibility == elf::STV_DEFAULT && !s.forced_local => {
                        let func = matches!(self.sym(f, i).st_type(), elf::STT_FUNC | elf::STT_GNU_IFUNC);
                        // With --dynamic-list, a library's unlisted symbols bind locally (lld).
                        let symbolic = self.config.bsymbolic || (self.config.bsymbolic_functions && func) || !self.config.dynamic_lists.is_empty();
                        (s.dynamic_listed || !symbolic) && self.sym(f, i).st_shndx(LE) != elf::SHN_ABS
                    }
                    Def::Common(..) if self.config.shared && s.visibility == elf::STV_DEFAULT && !s.forced_local => {
                        s.dynamic_listed || !(self.config.bsymbolic || !self.config.dynamic_lists.is_empty())
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

    pub fn has_dso(&self) -> bool {
        !self.needed.is_empty() || self.r.files.iter().zip(&self.r.loaded).any(|(f, l)| *l && matches!(f, File::Shared(_)))
    }

    pub fn is_ifunc(&self, t: Target) -> bool {
        match t {
            Target::Local(f, i) => self.sym(f, i as usize).st_type() == elf::STT_GNU_IFUNC,
            Target::Global(id) => match self.r.symbols[id].def {
                Def::Defined(f, i) => self.sym(f, i).st_type() == elf::STT_GNU_IFUNC,
                _ => false,
            },
        }
    }

    fn is_func(&self, id: SymbolId) -> bool {
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
    fn synthetic_is_abs(&self, id: SymbolId) -> bool {
        let name = self.r.symbols[id].name;
        self.config.defsym.iter().any(|(n, e)| n.as_bytes() == name && crate::elf::resolve::defsym_target(e).is_none())
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
        let os = *self.sec_osec[f].get(s as usize)?;
        if os == u32::MAX {
            return None;
        }
        let osec = &self.osecs[os as usize];
        let sec = &self.obj(f).sections[s as usize];
        match sec.kind {
            SecKind::Merge => {
                let m = self.sec_off[f][s as usize] as usize;
                let pieces = self.merged[m].pieces.get(&(f, s))?;
                let idx = match pieces.binary_search_by(|p| p.0.cmp(&off)) {
                    Ok(i) => i,
                    Err(0) => return Some(osec.addr),
                    Err(i) => i - 1,
                };
                let (pin, pout) = pieces[idx];
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

    fn merged_chunk_addr(&self, os: usize, m: usize) -> u64 {
        let osec = &self.osecs[os];
        for (c, off) in osec.chunks.iter().zip(&osec.chunk_off) {
            if *c == Chunk::Merged(m) {
                return osec.addr + off;
            }
        }
        osec.addr
    }

    pub fn synth_addr(&self, s: Synth) -> u64 {
        self.synth_osec.get(&s).map(|&i| self.osecs[i].addr).unwrap_or(0)
    }

    pub fn synth_size(&self, s: Synth) -> u64 {
        self.synth_osec.get(&s).map(|&i| self.osecs[i].size).unwrap_or(0)
    }

    pub fn got_slot_addr(&self, slot: u32) -> u64 {
        self.synth_addr(Synth::Got) + slot as u64 * 8
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
    pub fn addr_of(&self, t: Target) -> u64 {
        if let Some(&i) = self.iplt_index.get(&t) {
            if self.ifunc_canonical.contains(&t) {
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
        let shndx = s.st_shndx(LE);
        if shndx == elf::SHN_ABS {
            return s.st_value(LE);
        }
        if shndx == elf::SHN_UNDEF || shndx >= elf::SHN_LORESERVE {
            return 0;
        }
        if s.st_type() == elf::STT_SECTION {
            return self.section_addr(f, shndx as u32, 0).unwrap_or(0);
        }
        self.section_addr(f, shndx as u32, s.st_value(LE)).unwrap_or(0)
    }

    /// Address for a relocation with addend: section symbols in merge sections must add the
    /// addend before the piece lookup (the addend selects the piece).
    pub fn addr_with_addend(&self, t: Target, addend: i64) -> u64 {
        if let Target::Local(f, i) = t {
            let s = self.sym(f, i as usize);
            let shndx = s.st_shndx(LE);
            if shndx != elf::SHN_UNDEF && shndx < elf::SHN_LORESERVE {
                let sec = &self.obj(f).sections[shndx as usize];
                // A section symbol's addend selects the piece of a merge section (lld does the
                // same); named symbols in merge sections are looked up by their own value.
                if s.st_type() == elf::STT_SECTION && matches!(sec.kind, SecKind::Merge | SecKind::EhFrame) {
                    let off = s.st_value(LE).wrapping_add(addend as u64);
                    return self.section_addr(f, shndx as u32, off).unwrap_or(0);
                }
            }
        }
        self.addr_of(t).wrapping_add(addend as u64)
    }

    pub fn tls_end(&self) -> u64 {
        match self.tls {
            Some((start, memsz, align)) => start + align_up(memsz, align),
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

/// Builds the layout. `errors` collects undefined-symbol and relocation errors.
pub fn layout<'r>(config: &'r Config, r: &'r Resolved) -> Result<Layout<'r>> {
    let is_pic = config.pie || config.shared;
    let mut l = Layout {
        config,
        r,
        osecs: Vec::new(),
        sec_osec: Vec::new(),
        sec_off: Vec::new(),
        merged: Vec::new(),
        eh_records: Vec::new(),
        eh_index: HashMap::new(),
        eh_size: 0,
        sym_flags: HashMap::new(),
        got: Vec::new(),
        got_index: HashMap::new(),
        plt: Vec::new(),
        plt_index: HashMap::new(),
        iplt: Vec::new(),
        iplt_index: HashMap::new(),
        ifunc_canonical: Default::default(),
        dynrels: Vec::new(),
        irelatives: Vec::new(),
        relative_count: 0,
        site_fix: HashMap::new(),
        dynsyms: Vec::new(),
        dynsym_index: HashMap::new(),
        copies: Vec::new(),
        copy_alias: HashMap::new(),
        gc_used: None,
        needed: Vec::new(),
        sym_value: vec![0; r.symbols.len()],
        synth_osec: HashMap::new(),
        has_dynamic: false,
        is_pic,
        tls: None,
        image_base: if is_pic { 0 } else { 0x200000 },
        entry: 0,
        phdrs: Vec::new(),
        shstrtab_size: 0,
        file_size: 0,
        symtab: None,
        synthetic_syms: HashMap::new(),
        linker_defined: Vec::new(),
        verneed: Vec::new(),
        dynstr: vec![0],
        dynstr_off: HashMap::new(),
        x86_features: 0,
    };
    let liveness = crate::elf::gc::mark_live(config, r);
    // Shared libraries that stay: all loaded ones not under --as-needed, and as-needed ones that
    // satisfy a non-weak reference (under --gc-sections, one from a live section, as lld).
    let dso_needed = liveness.dso_needed.as_ref().unwrap_or(&r.dso_needed);
    for (f, file) in r.files.iter().enumerate() {
        if let File::Shared(s) = file {
            if r.loaded[f] && (!s.input.as_needed || dso_needed[f]) {
                l.needed.push(f);
            }
        }
    }
    l.has_dynamic = !config.relocatable && (is_pic || !l.needed.is_empty() || r.files.iter().zip(&r.loaded).any(|(f, ld)| *ld && matches!(f, File::Shared(_))));
    l.gc_used = liveness.used;
    let live = liveness.live;
    assign_sections(&mut l, &live, liveness.merge_refs.as_ref())?;
    order_sections(&mut l)?;
    decide_linker_symbols(&mut l);
    scan_relocations(&mut l, &live)?;
    build_dynsyms(&mut l);
    crate::elf::synthetic::prepare_dynamic_strings(&mut l);
    create_synthetic(&mut l);
    assign_addresses(&mut l)?;
    compute_symbol_values(&mut l)?;
    Ok(l)
}

// ------------------------------------------------------------------------------------------------
// Liveness
// ------------------------------------------------------------------------------------------------

pub use crate::elf::gc::Live;

// ------------------------------------------------------------------------------------------------
// Output sections
// ------------------------------------------------------------------------------------------------

fn new_osec(name: &str, sh_type: u32, flags: u64, align: u64) -> OutSec {
    OutSec {
        name: name.to_string(),
        sh_type,
        flags,
        align,
        entsize: 0,
        chunks: Vec::new(),
        chunk_off: Vec::new(),
        size: 0,
        addr: 0,
        offset: 0,
        relro: false,
        shndx: 0,
    }
}

fn assign_sections(l: &mut Layout, live: &Live, merge_refs: Option<&HashMap<(FileId, u32), Vec<u64>>>) -> Result<()> {
    let r = l.r;
    let mut by_key: HashMap<(Vec<u8>, u32, u64), usize> = HashMap::new();
    let mut osecs: Vec<OutSec> = Vec::new();
    l.sec_osec = live.iter().map(|v| vec![u32::MAX; v.len()]).collect();
    l.sec_off = live.iter().map(|v| vec![0; v.len()]).collect();
    let mut merge_key: HashMap<(usize, u64, u64, u64), usize> = HashMap::new();
    let mut merged_inputs: Vec<Vec<(FileId, u32)>> = Vec::new();
    let mut eh_inputs: Vec<(FileId, u32)> = Vec::new();
    let mut eh_osec = None;
    for (f, o) in r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            if !live[f][s] {
                continue;
            }
            if sec.kind == SecKind::EhFrame {
                eh_inputs.push((f, s as u32));
                continue;
            }
            // --strip-debug / -S (and --strip-all / -s) drop debug information, as lld does.
            if (l.config.strip_debug || l.config.strip_all) && sec.flags & elf::SHF_ALLOC as u64 == 0 && (sec.name.starts_with(b".debug") || sec.name.starts_with(b".zdebug")) {
                continue;
            }
            let oname = if l.config.relocatable { sec.name } else { output_name(sec.name) };
            // Sections of different types or with different write/exec/TLS flags get separate
            // output sections, as in lld (which errors or splits on conflicts).
            let mut ty = sec.sh_type;
            if matches!(ty, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY) || oname == b".init_array" || oname == b".fini_array" {
                ty = if oname.starts_with(b".fini_array") { elf::SHT_FINI_ARRAY } else if oname.starts_with(b".preinit_array") { elf::SHT_PREINIT_ARRAY } else if oname.starts_with(b".init_array") { elf::SHT_INIT_ARRAY } else { ty };
            }
            let is_alloc = flag(sec.flags, elf::SHF_ALLOC);
            let key_flags = sec.flags & (elf::SHF_ALLOC | elf::SHF_WRITE | elf::SHF_EXECINSTR | elf::SHF_TLS) as u64;
            let key_ty = if ty == elf::SHT_NOBITS { elf::SHT_PROGBITS } else { ty };
            let key = (oname.to_vec(), key_ty, if is_alloc { key_flags } else { 0 });
            let idx = *by_key.entry(key).or_insert_with(|| {
                let name = String::from_utf8_lossy(oname).into_owned();
                let mut os = new_osec(&name, ty, 0, 1);
                os.relro = is_relro_name(&name, sec.flags, ty);
                osecs.push(os);
                osecs.len() - 1
            });
            let os = &mut osecs[idx];
            if os.sh_type == elf::SHT_NOBITS && ty != elf::SHT_NOBITS {
                os.sh_type = ty;
            }
            // Output flags are the union of the inputs' (lld keeps SHF_MERGE/STRINGS/GNU_RETAIN
            // too), minus the ones that only describe an input section.
            os.flags |= sec.flags & !(elf::SHF_GROUP as u64 | elf::SHF_INFO_LINK as u64);
            if !is_alloc && flag(sec.flags, elf::SHF_MERGE) && flag(sec.flags, elf::SHF_STRINGS) {
                // .comment: keep merge flags so readers see strings.
                os.flags |= (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
                os.entsize = 1;
            }
            os.align = os.align.max(sec.align);
            l.sec_osec[f][s] = idx as u32;
            if sec.kind == SecKind::Merge {
                let ent = sec.hdr.sh_entsize.get(LE);
                let strings = flag(sec.flags, elf::SHF_STRINGS);
                // lld's grouping: same flags and entry size, and for strings the same
                // alignment (constants of different alignments share the largest).
                let key_flags = sec.flags & !(elf::SHF_GROUP as u64);
                let mk = (idx, ent, key_flags, if strings { sec.align } else { 0 });
                let m = *merge_key.entry(mk).or_insert_with(|| {
                    merged_inputs.push(Vec::new());
                    osecs[idx].chunks.push(Chunk::Merged(merged_inputs.len() - 1));
                    merged_inputs.len() - 1
                });
                merged_inputs[m].push((f, s as u32));
                l.sec_off[f][s] = m as u64;
            } else {
                osecs[idx].chunks.push(Chunk::Input(f, s as u32));
            }
        }
    }
    // Deduplicate merge pieces, deterministically in input order.
    let tail = l.config.opt_level >= 2;
    for inputs in merged_inputs {
        l.merged.push(crate::elf::merge::merge(r, &inputs, merge_refs, tail)?);
    }
    // .eh_frame: split records, drop FDEs of dead functions, deduplicate CIEs.
    if !eh_inputs.is_empty() && !l.config.relocatable {
        build_eh_frame(l, &eh_inputs, live)?;
        for &(f, s) in &eh_inputs {
            l.sec_osec[f][s as usize] = u32::MAX - 1; // patched below
        }
        let mut os = new_osec(".eh_frame", elf::SHT_PROGBITS, elf::SHF_ALLOC as u64, 8);
        os.chunks.push(Chunk::Synthetic(Synth::EhFrame));
        osecs.push(os);
        let idx = osecs.len() - 1;
        eh_osec = Some(idx);
        l.synth_osec.insert(Synth::EhFrame, idx);
    }
    if let Some(idx) = eh_osec {
        for v in l.sec_osec.iter_mut() {
            for x in v.iter_mut() {
                if *x == u32::MAX - 1 {
                    *x = idx as u32;
                }
            }
        }
    }
    // Sort init/fini array inputs by priority (stable: same priority keeps input order).
    for os in osecs.iter_mut() {
        if matches!(os.sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY) {
            let mut chunks = std::mem::take(&mut os.chunks);
            chunks.sort_by_key(|c| match c {
                Chunk::Input(f, s) => init_priority(r.obj(*f).sections[*s as usize].name),
                _ => 65536,
            });
            os.chunks = chunks;
        }
    }
    l.osecs = osecs;
    Ok(())
}

/// Input sections the call graph profile orders go first in their output section, in that
/// order; the others follow in input order (lld's `sortISDBySectionOrder`; x86-64 needs no
/// thunk-aware insertion point).
fn order_sections(l: &mut Layout) -> Result<()> {
    let order = crate::elf::cgsort::section_order(l)?;
    if order.is_empty() {
        return Ok(());
    }
    for os in l.osecs.iter_mut() {
        if os.name == ".init" || os.name == ".fini" {
            continue;
        }
        let prio = |c: &Chunk| match c {
            Chunk::Input(f, s) => order.get(&(*f, *s)).copied(),
            _ => None,
        };
        if !os.chunks.iter().any(|c| prio(c).is_some()) {
            continue;
        }
        let (mut ordered, unordered): (Vec<Chunk>, Vec<Chunk>) = os.chunks.iter().partition(|c| prio(c).is_some());
        ordered.sort_by_key(|c| prio(c));
        ordered.extend(unordered);
        os.chunks = ordered;
    }
    Ok(())
}

/// lld's `EhFrameSection`: every live FDE (one whose function's section is live) is kept, and
/// CIEs are deduplicated across all inputs by their bytes and personality routine. The output
/// is each distinct CIE, in order of first use, followed by the FDEs that use it, in input
/// order.
fn build_eh_frame(l: &mut Layout, eh_inputs: &[(FileId, u32)], live: &Live) -> Result<()> {
    let r = l.r;
    // Per distinct CIE: (file, section, input offset of its first copy), then its FDEs.
    let mut cies: Vec<((FileId, u32, u64, u64), Vec<(FileId, u32, u64, u64)>)> = Vec::new();
    let mut cie_key: HashMap<(&'static [u8], Option<Target>), usize> = HashMap::new();
    for &(f, s) in eh_inputs {
        let o = r.obj(f);
        let sec = &o.sections[s as usize];
        let recs = crate::elf::eh_frame::split(sec.data).map_err(|e| e.context(format!("{}:(.eh_frame)", o.input.name)))?;
        let relocs = sec.relocs;
        // Relocations are sorted by offset in practice; the first one inside a record is the
        // CIE's personality or the FDE's initial location (lld's `firstRelocation`).
        let first_rel = |off: u64, len: u64| relocs.iter().find(|rel| rel.r_offset(LE) >= off && rel.r_offset(LE) < off + len);
        // Input offset of a CIE → its index in `cies`, for this section.
        let mut local: HashMap<u64, usize> = HashMap::new();
        for rec in &recs {
            if rec.is_terminator() {
                continue;
            }
            if rec.is_cie {
                let data: &'static [u8] = &sec.data[rec.offset as usize..(rec.offset + rec.len) as usize];
                let personality = first_rel(rec.offset, rec.len).map(|rel| l.target_of(f, rel.r_sym(LE, false) as usize));
                let idx = *cie_key.entry((data, personality)).or_insert_with(|| {
                    cies.push(((f, s, rec.offset, rec.len), Vec::new()));
                    cies.len() - 1
                });
                local.insert(rec.offset, idx);
                continue;
            }
            let Some(rel) = first_rel(rec.offset, rec.len) else { continue };
            let si = rel.r_sym(LE, false) as usize;
            let (tf, ts) = match r.global_of(f, si) {
                Some(id) => match r.symbols[id].def {
                    Def::Defined(tf, ti) => (tf, r.obj(tf).symbols[ti].st_shndx(LE) as usize),
                    _ => continue,
                },
                None => (f, o.symbols[si].st_shndx(LE) as usize),
            };
            if !live.get(tf).and_then(|v| v.get(ts)).copied().unwrap_or(false) {
                continue;
            }
            match local.get(&rec.cie_offset) {
                Some(&c) => cies[c].1.push((f, s, rec.offset, rec.len)),
                None => crate::bail!("{}:(.eh_frame+0x{:x}): invalid CIE reference", o.input.name, rec.offset + 4),
            }
        }
    }
    let mut out = 0u64;
    for ((cf, cs, coff, clen), fdes) in cies {
        if fdes.is_empty() {
            continue;
        }
        let cie_out = out;
        l.eh_records.push(EhRecord { file: cf, sec: cs, in_off: coff, len: clen, out_off: out, is_cie: true, cie_out_off: 0 });
        out += clen;
        for (f, s, off, len) in fdes {
            l.eh_records.push(EhRecord { file: f, sec: s, in_off: off, len, out_off: out, is_cie: false, cie_out_off: cie_out });
            out += len;
        }
    }
    // Per input section, its records by input offset (a CIE copy that was deduplicated away
    // has none: addresses into it resolve to the section's first kept record).
    let mut index: HashMap<(FileId, u32), Vec<u32>> = HashMap::new();
    for (i, rec) in l.eh_records.iter().enumerate() {
        index.entry((rec.file, rec.sec)).or_default().push(i as u32);
    }
    for v in index.values_mut() {
        v.sort_by_key(|&i| l.eh_records[i as usize].in_off);
    }
    l.eh_index = index;
    // A zero-length record ends the section: glibc's `classify_object_over_fdes` expects it
    // (lld adds it unconditionally, too).
    l.eh_size = out + 4;
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Relocation scan
// ------------------------------------------------------------------------------------------------

struct ScanOut {
    needs: Vec<(Target, u16)>,
    dynrels: Vec<DynRel>,
    fixes: Vec<((FileId, u32, usize), SiteFix)>,
    undefined: Vec<(SymbolId, FileId, u32, u64)>,
    errors: Vec<String>,
}

const N_GOT: u16 = 1;
const N_PLT: u16 = 2;
const N_GOTTP: u16 = 4;
const N_COPY: u16 = 8;
const N_CANON: u16 = 16;
const N_IPLT: u16 = 32;
/// The IFUNC's address is taken directly: its IPLT entry becomes its canonical address.
const N_CANON_IFUNC: u16 = 64;
/// A general-dynamic GOT pair (or, for `TLS_LD_TARGET`, the local-dynamic pair).
const N_GOTGD: u16 = 128;
/// A TLS descriptor (two GOT slots resolved by the loader's R_X86_64_TLSDESC).
const N_GOTDESC: u16 = 256;

fn scan_relocations(l: &mut Layout, live: &Live) -> Result<()> {
    use rayon::prelude::*;
    let r = l.r;
    let files: Vec<FileId> = (0..r.files.len()).filter(|&f| r.loaded[f] && matches!(r.files[f], File::Obj(_))).collect();
    let outs: Vec<ScanOut> = {
        let lr: &Layout = l;
        files.par_iter().map(|&f| scan_file(lr, f, live)).collect()
    };
    let mut errors = Vec::new();
    let mut undefined: BTreeMap<SymbolId, Vec<(FileId, u32, u64)>> = BTreeMap::new();
    let mut undef_order: Vec<SymbolId> = Vec::new();
    for out in outs {
        errors.extend(out.errors);
        for (t, n) in out.needs {
            let fl = l.sym_flags.entry(t).or_default();
            if n & N_GOT != 0 && !fl.got {
                fl.got = true;
                l.got_index.insert((t, GotKind::Addr), l.got.len() as u32);
                l.got.push((t, GotKind::Addr));
            }
            if n & N_GOTTP != 0 && !fl.gottp {
                fl.gottp = true;
                l.got_index.insert((t, GotKind::TpOff), l.got.len() as u32);
                l.got.push((t, GotKind::TpOff));
            }
            if n & N_GOTGD != 0 {
                let (first, second) = if t == TLS_LD_TARGET { (GotKind::TlsLdMod, GotKind::Zero) } else { (GotKind::TlsGdMod, GotKind::TlsGdOff) };
                if !l.got_index.contains_key(&(t, first)) {
                    l.got_index.insert((t, first), l.got.len() as u32);
                    l.got.push((t, first));
                    l.got.push((t, second));
                }
            }
            if n & N_GOTDESC != 0 && !l.got_index.contains_key(&(t, GotKind::TlsDesc)) {
                l.got_index.insert((t, GotKind::TlsDesc), l.got.len() as u32);
                l.got.push((t, GotKind::TlsDesc));
                l.got.push((t, GotKind::Zero));
            }
            if n & N_CANON_IFUNC != 0 {
                l.ifunc_canonical.insert(t);
            }
            if n & (N_IPLT | N_CANON_IFUNC) != 0 && !l.iplt_index.contains_key(&t) {
                l.iplt_index.insert(t, l.iplt.len() as u32);
                l.iplt.push(t);
            }
            if let Target::Global(id) = t {
                if n & N_PLT != 0 && !fl.plt {
                    fl.plt = true;
                    l.plt_index.insert(id, l.plt.len() as u32);
                    l.plt.push(id);
                }
                if n & N_CANON != 0 {
                    fl.canonical = true;
                    if !fl.plt {
                        fl.plt = true;
                        l.plt_index.insert(id, l.plt.len() as u32);
                        l.plt.push(id);
                    }
                }
                if n & N_COPY != 0 && !fl.copy {
                    fl.copy = true;
                    l.copies.push(id);
                }
            }
        }
        l.dynrels.extend(out.dynrels);
        for (k, v) in out.fixes {
            l.site_fix.insert(k, v);
        }
        for (id, f, s, off) in out.undefined {
            let e = undefined.entry(id).or_default();
            if e.is_empty() {
                undef_order.push(id);
            }
            e.push((f, s, off));
        }
    }
    // Undefined symbols, grouped per symbol with up to 3 references, like lld.
    for id in undef_order {
        let refs = &undefined[&id];
        let sym = &r.symbols[id];
        let vis = match sym.visibility {
            elf::STV_HIDDEN => "hidden ",
            elf::STV_PROTECTED => "protected ",
            elf::STV_INTERNAL => "internal ",
            _ => "",
        };
        let mut msg = format!("undefined {vis}symbol: {}", crate::elf::diag::demangle(sym.name));
        for &(f, s, off) in refs.iter().take(3) {
            let o = r.obj(f);
            if let Some(src) = crate::elf::diag::source_file(o) {
                msg.push_str(&format!("\n>>> referenced by {src}\n>>>               {}", crate::elf::diag::location(o, s as usize, off)));
            } else {
                msg.push_str(&format!("\n>>> referenced by {}", crate::elf::diag::location(o, s as usize, off)));
            }
        }
        if refs.len() > 3 {
            msg.push_str(&format!("\n>>> referenced {} more times", refs.len() - 3));
        }
        if sym.name.starts_with(b"_ZTV") {
            msg.push_str("\n>>> the vtable symbol may be undefined because the class is missing its key function (see https://lld.llvm.org/missingkeyfunction)");
        }
        if l.config.gc_sections && l.config.z_start_stop_gc && sym.name.starts_with(b"__start_") {
            msg.push_str("\n>>> the encapsulation symbol needs to be retained under --gc-sections properly; consider -z nostart-stop-gc (see https://lld.llvm.org/ELF/start-stop-gc)");
        }
        errors.push(msg);
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    // Aliases of copy-relocated objects (same library, same address) move with the copy, so the
    // library's own references through any of its names see the executable's copy.
    for &id in &l.copies.clone() {
        let Def::Shared(f, k) = r.symbols[id].def else { continue };
        let dso = r.dso(f);
        let v = dso.syms[k].sym.st_value(LE);
        for (k2, ds) in dso.syms.iter().enumerate() {
            if k2 == k || !ds.defined || ds.hidden || ds.sym.st_value(LE) != v || ds.sym.st_type() != elf::STT_OBJECT {
                continue;
            }
            if let Some(aid) = r.lookup(ds.name) {
                if r.symbols[aid].def == Def::Shared(f, k2) && !l.copies.contains(&aid) {
                    l.copy_alias.insert(aid, id);
                    l.sym_flags.entry(Target::Global(aid)).or_default().copy = true;
                }
            }
        }
    }
    Ok(())
}

fn scan_file(l: &Layout, f: FileId, live: &Live) -> ScanOut {
    let r = l.r;
    let o = r.obj(f);
    let mut out = ScanOut { needs: Vec::new(), dynrels: Vec::new(), fixes: Vec::new(), undefined: Vec::new(), errors: Vec::new() };
    let exe = !l.config.shared;
    for (s, sec) in o.sections.iter().enumerate() {
        if !live[f][s] || sec.relocs.is_empty() {
            continue;
        }
        let alloc = flag(sec.flags, elf::SHF_ALLOC);
        let writable = flag(sec.flags, elf::SHF_WRITE);
        let mut skip_next = false;
        for (k, rel) in sec.relocs.iter().enumerate() {
            if skip_next {
                skip_next = false;
                out.fixes.push(((f, s as u32, k), SiteFix::Skip));
                continue;
            }
            let r_type = rel.r_type(LE, false);
            let info = arch::rel_info(r_type);
            let si = rel.r_sym(LE, false) as usize;
            let off = rel.r_offset(LE);
            let addend = rel.r_addend(LE);
            if info.kind == RelKind::None {
                continue;
            }
            if info.kind == RelKind::Unknown {
                out.errors.push(format!("{}: unknown relocation ({}) against symbol {}", crate::elf::diag::location(o, s, off), r_type, String::from_utf8_lossy(o.sym_name(si))));
                continue;
            }
            if (off as usize).saturating_add(info.field.size()) > sec.data.len() && sec.sh_type != elf::SHT_NOBITS {
                out.errors.push(format!("{}: relocation {} at offset 0x{:x} is out of bounds", o.input.name, arch::rel_name(r_type), off));
                continue;
            }
            let t = l.target_of(f, si);
            if si == 0 {
                // Relocation against the null symbol: S = 0.
                continue;
            }
            // Undefined symbols.
            if let Target::Global(id) = t {
                let sym = &r.symbols[id];
                // In a shared library (without -z defs) default-visibility undefined symbols
                // are resolved at load time.
                let allowed_in_dso = !exe && (!l.config.z_defs || l.config.ignore_unresolved_in_objects) && sym.visibility == elf::STV_DEFAULT;
                if matches!(sym.def, Def::Undefined | Def::Lazy(_)) && !sym.weak && !l.is_linker_defined(id) && !allowed_in_dso {
                    // Only allocated sections count: references from debug information and other
                    // non-alloc data resolve to 0, as lld resolves them.
                    if alloc {
                        out.undefined.push((id, f, s as u32, off));
                    }
                    continue;
                }
            }
            if !alloc {
                // Debug and other non-allocated sections: resolved statically by the writer.
                continue;
            }
            let preempt = l.is_preemptible(t);
            let ifunc = l.is_ifunc(t);
            let site = (f, s as u32, k);
            let mut need = |t: Target, n: u16| out.needs.push((t, n));
            match info.kind {
                RelKind::Abs => {
                    if preempt {
                        let Target::Global(id) = t else { unreachable!() };
                        if info.field.size() == 8 && (writable || !l.config.z_text) {
                            out.dynrels.push(DynRel { place: Place::Input(f, s as u32, off), r_type: arch::r::R64, sym: Some(id), addend: Addend::Const(addend) });
                        } else if l.config.shared {
                            out.errors.push(pic_error(o, s, off, r_type, r.symbols[id].name));
                        } else if matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_)) {
                            // Undefined weak: resolves to zero.
                        } else if l.is_func(id) {
                            need(t, N_CANON);
                        } else {
                            need(t, N_COPY);
                        }
                    } else if ifunc {
                        need(t, N_CANON_IFUNC);
                        if l.is_pic && info.field.size() == 8 {
                            out.dynrels.push(DynRel { place: Place::Input(f, s as u32, off), r_type: arch::r::RELATIVE, sym: None, addend: Addend::AddrOf(t, addend) });
                        }
                    } else if l.is_pic && !l.is_absolute(t) {
                        if info.field.size() == 8 {
                            out.dynrels.push(DynRel { place: Place::Input(f, s as u32, off), r_type: arch::r::RELATIVE, sym: None, addend: Addend::AddrOf(t, addend) });
                        } else {
                            let name = match t { Target::Global(id) => r.symbols[id].name, Target::Local(..) => b"" as &[u8] };
                            out.errors.push(pic_error(o, s, off, r_type, name));
                        }
                    }
                }
                RelKind::Pc | RelKind::PltPc => {
                    if preempt {
                        let Target::Global(id) = t else { unreachable!() };
                        if info.kind == RelKind::PltPc {
                            need(t, N_PLT);
                        } else if matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_)) {
                        } else if l.config.shared {
                            // Only an executable (PIE included, as lld) can take a library
                            // symbol's address with a copy or a canonical PLT entry.
                            if l.is_func(id) {
                                need(t, N_PLT);
                            }
                            out.errors.push(pic_error(o, s, off, r_type, r.symbols[id].name));
                        } else if l.is_func(id) {
                            need(t, N_CANON);
                        } else {
                            need(t, N_COPY);
                        }
                    } else if ifunc {
                        need(t, if info.kind == RelKind::PltPc { N_IPLT } else { N_CANON_IFUNC });
                    }
                }
                RelKind::GotPc | RelKind::GotPcRelax | RelKind::GotPcRelaxRex | RelKind::GotOff => {
                    // --no-relax keeps every GOT load (lld: only GOTPCRELX rewriting is off).
                    let relaxable = matches!(info.kind, RelKind::GotPcRelax | RelKind::GotPcRelaxRex)
                        && l.config.relax
                        && !preempt
                        && !(l.is_pic && l.is_absolute(t))
                        && !is_undef(l, t);
                    let mut relaxed = false;
                    if relaxable {
                        let d = sec.data;
                        let o2 = off as usize;
                        let is_mov = o2 >= 2 && d[o2 - 2] == 0x8b;
                        let is_branch = o2 >= 2 && info.kind == RelKind::GotPcRelax && d[o2 - 2] == 0xff && matches!((d[o2 - 1] >> 3) & 7, 2 | 4);
                        // lld keeps GOT loads of IFUNC addresses (the slot then holds the
                        // canonical IPLT address) and relaxes only calls and jumps.
                        let is_mov = is_mov && !ifunc;
                        if o2 >= 2 && d[o2 - 1] & 0xc7 == 0x05 && (is_mov || is_branch) {
                            out.fixes.push((site, SiteFix::GotPcRelax));
                            relaxed = true;
                            // An IFUNC reached through a relaxed GOT load is called through its
                            // IPLT entry; loading its address makes that entry canonical.
                            if ifunc {
                                need(t, if is_branch { N_IPLT } else { N_CANON_IFUNC });
                            }
                        }
                    }
                    if !relaxed {
                        need(t, N_GOT);
                        if ifunc && !preempt && !l.is_pic {
                            // Non-PIC: the GOT slot holds the canonical IPLT address (lld).
                            need(t, N_CANON_IFUNC);
                        }
                    }
                }
                RelKind::GotBasePc | RelKind::RelGotBase => {}
                RelKind::PltRelGotBase => {
                    if preempt {
                        need(t, N_PLT);
                    }
                }
                RelKind::Size => {}
                RelKind::TlsGd => {
                    if !exe {
                        // A shared library keeps general-dynamic: a GOT pair for the loader.
                        need(t, N_GOTGD);
                        continue;
                    } else if preempt {
                        out.fixes.push((site, SiteFix::TlsGdToIe));
                        need(t, N_GOTTP);
                        skip_next = true;
                    } else {
                        out.fixes.push((site, SiteFix::TlsGdToLe));
                        skip_next = true;
                    }
                    if !tls_gd_pattern(sec.data, off as usize) {
                        out.errors.push(format!("{}: R_X86_64_TLSGD must be followed by a call to __tls_get_addr", crate::elf::diag::location(o, s, off)));
                    }
                }
                RelKind::TlsLd => {
                    if !exe {
                        need(TLS_LD_TARGET, N_GOTGD);
                        continue;
                    }
                    out.fixes.push((site, SiteFix::TlsLdToLe));
                    skip_next = true;
                    let d = sec.data;
                    let o2 = off as usize;
                    if !(o2 >= 3 && d.len() >= o2 + 6 && d[o2 - 3..o2] == [0x48, 0x8d, 0x3d] && (d[o2 + 4] == 0xe8 || (d[o2 + 4] == 0xff && d[o2 + 5] == 0x15))) {
                        out.errors.push(format!("{}: R_X86_64_TLSLD must be followed by a call to __tls_get_addr", crate::elf::diag::location(o, s, off)));
                    }
                }
                RelKind::DtpOff | RelKind::TpOff => {
                    if preempt && info.kind == RelKind::TpOff {
                        out.errors.push(format!("{}: relocation {} against preemptible symbol", crate::elf::diag::location(o, s, off), arch::rel_name(r_type)));
                    }
                }
                RelKind::GotTpOff => {
                    let d = sec.data;
                    let o2 = off as usize;
                    let can = exe && !preempt && o2 >= 3 && (d[o2 - 3] & 0xf0) == 0x40 && d[o2 - 1] & 0xc7 == 0x05 && matches!(d[o2 - 2], 0x8b | 0x03);
                    if can {
                        out.fixes.push((site, SiteFix::TlsIeToLe));
                    } else {
                        need(t, N_GOTTP);
                    }
                }
                RelKind::TlsDescPc if !exe => {
                    // A library keeps the descriptor: dlopen cannot count on static TLS.
                    need(t, N_GOTDESC);
                }
                RelKind::TlsDescCall if !exe => {}
                RelKind::TlsDescPc => {
                    if preempt {
                        out.fixes.push((site, SiteFix::TlsDescToIe));
                        need(t, N_GOTTP);
                    } else {
                        out.fixes.push((site, SiteFix::TlsDescToLe));
                    }
                }
                RelKind::TlsDescCall => {
                    out.fixes.push((site, SiteFix::TlsDescCallNop));
                }
                RelKind::None | RelKind::Unknown => {}
            }
        }
    }
    out
}

fn is_undef(l: &Layout, t: Target) -> bool {
    match t {
        Target::Global(id) => matches!(l.r.symbols[id].def, Def::Undefined | Def::Lazy(_)) && !l.is_linker_defined(id),
        Target::Local(..) => false,
    }
}

fn tls_gd_pattern(d: &[u8], off: usize) -> bool {
    off >= 4 && d.len() >= off + 12 && d[off - 4..off] == [0x66, 0x48, 0x8d, 0x3d] && (d[off + 4..off + 8] == [0x66, 0x66, 0x48, 0xe8] || d[off + 4..off + 8] == [0x66, 0x48, 0xff, 0x15])
}

/// Which undefined references the linker defines, now that the output sections are known
/// (lld's `addReservedSymbols`, `addStartEndSymbols`, `addStartStopSymbols`, `_DYNAMIC`).
fn decide_linker_symbols(l: &mut Layout) {
    let r = l.r;
    let osec_exists = |name: &[u8]| l.osecs.iter().any(|o| o.name.as_bytes() == name);
    let eh_frame_hdr = l.config.eh_frame_hdr && !l.eh_records.is_empty();
    let defined: Vec<bool> = r
        .symbols
        .iter()
        .map(|s| {
            if !matches!(s.def, Def::Undefined | Def::Lazy(_)) || !is_linker_defined(s.name) {
                return false;
            }
            match s.name {
                b"_DYNAMIC" => l.has_dynamic,
                // glibc's static start-up code applies IRELATIVE relocations between these;
                // position-independent output has none of them (lld: non-PIC only).
                b"__rela_iplt_start" | b"__rela_iplt_end" => !l.is_pic,
                b"__GNU_EH_FRAME_HDR" => eh_frame_hdr,
                n => match n.strip_prefix(b"__start_").or_else(|| n.strip_prefix(b"__stop_")) {
                    Some(sec) => osec_exists(sec),
                    None => true,
                },
            }
        })
        .collect();
    l.linker_defined = defined;
}

/// Names the linker may define when referenced (`decide_linker_symbols` says when it does).
pub fn is_linker_defined(name: &[u8]) -> bool {
    matches!(
        name,
        b"_GLOBAL_OFFSET_TABLE_" | b"__ehdr_start" | b"__executable_start" | b"_DYNAMIC" | b"__bss_start" | b"_end" | b"end" | b"_etext"
            | b"etext" | b"_edata" | b"edata" | b"__init_array_start" | b"__init_array_end" | b"__fini_array_start" | b"__fini_array_end"
            | b"__preinit_array_start" | b"__preinit_array_end" | b"__rela_iplt_start" | b"__rela_iplt_end" | b"_TLS_MODULE_BASE_" | b"__dso_handle"
            | b"__GNU_EH_FRAME_HDR"
    ) || name.starts_with(b"__start_")
        || name.starts_with(b"__stop_")
}

fn pic_error(o: &ObjFile, s: usize, off: u64, r_type: u32, name: &[u8]) -> String {
    let what = if name.is_empty() { "local symbol".to_string() } else { format!("symbol '{}'", crate::elf::diag::demangle(name)) };
    format!(
        "relocation {} cannot be used against {what}; recompile with -fPIC\n>>> referenced by {}",
        arch::rel_name(r_type),
        crate::elf::diag::location(o, s, off)
    )
}

// ------------------------------------------------------------------------------------------------
// Dynamic symbols
// ------------------------------------------------------------------------------------------------

/// `__start_foo`/`__stop_foo` with an output section `foo`: the linker defines it.
fn start_stop_section_exists(l: &Layout, name: &[u8]) -> bool {
    match name.strip_prefix(b"__start_").or_else(|| name.strip_prefix(b"__stop_")) {
        Some(sec) => l.osecs.iter().any(|o| o.name.as_bytes() == sec),
        None => false,
    }
}

fn build_dynsyms(l: &mut Layout) {
    if !l.has_dynamic {
        return;
    }
    let r = l.r;
    let mut list: Vec<SymbolId> = Vec::new();
    let dynamic_link = l.has_dso();
    for (id, s) in r.symbols.iter().enumerate() {
        let include = match s.def {
            Def::Shared(..) => (s.obj_ref && l.gc_used.as_ref().map_or(true, |u| u.contains(&id))) || l.sym_flags.contains_key(&Target::Global(id)),
            Def::Undefined | Def::Lazy(_) if l.config.shared => {
                s.obj_ref && s.visibility == elf::STV_DEFAULT && !l.is_linker_defined(id) && (l.config.z_dynamic_undefined_weak || !s.weak) && l.gc_used.as_ref().map_or(true, |u| u.contains(&id))
                    || ((l.config.export_dynamic || l.config.shared) && s.obj_ref && start_stop_section_exists(l, s.name))
            }
            Def::Undefined | Def::Lazy(_) => {
                (dynamic_link && s.weak && s.obj_ref && s.visibility == elf::STV_DEFAULT && !l.is_linker_defined(id) && l.gc_used.as_ref().map_or(true, |u| u.contains(&id)))
                    || ((l.config.export_dynamic || l.config.shared) && s.obj_ref && start_stop_section_exists(l, s.name))
            }
            Def::Defined(..) | Def::Common(..) => {
                !s.forced_local && matches!(s.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED) && (s.dso_ref || s.in_dso || s.dynamic_listed || l.config.export_dynamic || l.config.shared)
            }
            // `--defsym` definitions are exported like any definition.
            Def::Synthetic => {
                l.config.defsym.iter().any(|(n, _)| n.as_bytes() == s.name)
                    && !s.forced_local
                    && s.visibility == elf::STV_DEFAULT
                    && (l.config.shared || l.config.export_dynamic || s.dso_ref || s.dynamic_listed)
            }
            Def::Bitcode(..) => false,
        };
        if include {
            list.push(id);
        }
    }
    for &aid in l.copy_alias.keys() {
        if !list.contains(&aid) {
            list.push(aid);
        }
    }
    // Undefined first, then defined ones in .gnu.hash bucket order (assigned when the hash
    // table is built; here: stable order by name hash modulo is done in synthetic).
    list.sort_by_key(|&id| (is_defined_for_dynsym(l, id), 0u32, id));
    let nbuckets = crate::elf::synthetic::gnu_hash_nbuckets(list.iter().filter(|&&id| is_defined_for_dynsym(l, id)).count());
    list.sort_by_key(|&id| {
        let d = is_defined_for_dynsym(l, id);
        let b = if d { crate::elf::synthetic::gnu_hash(dyn_name(l, id)) % nbuckets } else { 0 };
        (d, b)
    });
    for (i, &id) in list.iter().enumerate() {
        l.dynsym_index.insert(id, i as u32 + 1);
    }
    l.dynsyms = list;
}

/// Defined-in-this-output for .dynsym purposes (copy relocations and canonical PLT entries are
/// "defined" in the sense that they have an address here, but lld keeps canonical PLT symbols
/// undefined with a non-zero value; copies are defined).
/// Section index, value and symbol type of a `--defsym` symbol: absolute for a number, else
/// in the output section its value falls in, typed like its target (lld).
pub fn defsym_fields(l: &Layout, id: SymbolId) -> (u16, u64, u8) {
    let name = l.r.symbols[id].name;
    let v = l.sym_value[id];
    let expr = l.config.defsym.iter().find(|(n, _)| n.as_bytes() == name).map(|(_, e)| e.as_str());
    let target = expr.and_then(crate::elf::resolve::defsym_target);
    let shndx = if target.is_none() {
        elf::SHN_ABS
    } else {
        l.osecs.iter().filter(|o| o.flags & elf::SHF_ALLOC as u64 != 0 && o.addr <= v && v <= o.addr + o.size).map(|o| o.shndx as u16).last().unwrap_or(elf::SHN_ABS)
    };
    let ty = target.and_then(|t| l.r.lookup(t.as_bytes())).map_or(elf::STT_NOTYPE, |tid| match l.r.symbols[tid].def {
        Def::Defined(f, i) => l.sym(f, i).st_type(),
        _ => elf::STT_NOTYPE,
    });
    (shndx, v, ty)
}

pub fn is_defined_for_dynsym(l: &Layout, id: SymbolId) -> bool {
    match l.r.symbols[id].def {
        Def::Defined(..) | Def::Common(..) | Def::Synthetic => true,
        // Canonical PLT entries must be found by the loader's hash lookup, so the library's own
        // references bind to the executable's address: they count as defined here.
        Def::Shared(..) => l.sym_flags.get(&Target::Global(id)).map_or(false, |f| f.copy || f.canonical),
        // `__start_foo`/`__stop_foo` exported dynamically: the linker defines them.
        Def::Undefined => start_stop_section_exists(l, l.r.symbols[id].name) && (l.config.export_dynamic || l.config.shared),
        _ => false,
    }
}

/// The name written to .dynsym/.dynstr (without an `@version` suffix).
pub fn dyn_name(l: &Layout, id: SymbolId) -> &'static [u8] {
    let name = l.r.symbols[id].name;
    match name.iter().position(|&c| c == b'@') {
        Some(p) => &name[..p],
        None => name,
    }
}

// ------------------------------------------------------------------------------------------------
// Synthetic sections
// ------------------------------------------------------------------------------------------------

fn add_synth(l: &mut Layout, s: Synth, name: &str, sh_type: u32, flags: u32, align: u64) {
    let mut os = new_osec(name, sh_type, flags as u64, align);
    os.chunks.push(Chunk::Synthetic(s));
    os.relro = is_relro_name(name, flags as u64, sh_type);
    l.osecs.push(os);
    l.synth_osec.insert(s, l.osecs.len() - 1);
}

fn create_synthetic(l: &mut Layout) {
    let c = l.config;
    let a = elf::SHF_ALLOC;
    let w = elf::SHF_WRITE;
    let x = elf::SHF_EXECINSTR;
    // lld's needsInterpSection: any executable given a dynamic linker, even one that links
    // no shared library (`-nostdlib` with clang's default `-dynamic-linker`).
    let interp = !c.shared && !c.relocatable && !c.no_dynamic_linker && c.dynamic_linker.as_deref().is_some_and(|d| !d.is_empty());
    if interp {
        add_synth(l, Synth::Interp, ".interp", elf::SHT_PROGBITS, a, 1);
    }
    // x86 CET properties: the AND of every object's feature bits (an object without the note
    // has none), plus what -z shstk forces, as lld.
    let mut features = u32::MAX;
    for (f, file) in l.r.files.iter().enumerate() {
        if let File::Obj(o) = file {
            if l.r.loaded[f] {
                features &= crate::elf::relocatable::x86_features(o);
            }
        }
    }
    if features == u32::MAX {
        features = 0;
    }
    if c.z_shstk {
        features |= 2;
    }
    l.x86_features = features & 3;
    if l.x86_features != 0 {
        add_synth(l, Synth::GnuProperty, ".note.gnu.property", elf::SHT_NOTE, a, 8);
    }
    if c.build_id != crate::elf::config::BuildId::None || !c.build_id_hex.is_empty() {
        add_synth(l, Synth::BuildId, ".note.gnu.build-id", elf::SHT_NOTE, a, 4);
    }
    if l.has_dynamic {
        add_synth(l, Synth::DynSym, ".dynsym", elf::SHT_DYNSYM, a, 8);
        let verdefs = !l.r.versions.is_empty();
        if !l.verneed.is_empty() || verdefs {
            add_synth(l, Synth::Versym, ".gnu.version", elf::SHT_GNU_VERSYM, a, 2);
        }
        if verdefs {
            add_synth(l, Synth::Verdef, ".gnu.version_d", elf::SHT_GNU_VERDEF, a, 4);
        }
        if !l.verneed.is_empty() {
            add_synth(l, Synth::Verneed, ".gnu.version_r", elf::SHT_GNU_VERNEED, a, 4);
        }
        if c.hash_gnu {
            add_synth(l, Synth::GnuHash, ".gnu.hash", elf::SHT_GNU_HASH, a, 8);
        }
        if c.hash_sysv {
            add_synth(l, Synth::SysvHash, ".hash", elf::SHT_HASH, a, 4);
        }
        add_synth(l, Synth::DynStr, ".dynstr", elf::SHT_STRTAB, a, 1);
    }
    // Count relocations now so section sizes are known.
    // IFUNC: IRELATIVE for each IPLT slot.
    for i in 0..l.iplt.len() {
        let t = l.iplt[i];
        l.irelatives.push(DynRel { place: Place::GotPltSlot(l.plt.len() as u32 + i as u32), r_type: arch::r::IRELATIVE, sym: None, addend: Addend::AddrOf(t, 0) });
    }
    // GOT slots.
    let got = l.got.clone();
    for (slot, (t, kind)) in got.iter().enumerate() {
        let preempt = l.is_preemptible(*t);
        let place = Place::GotSlot(slot as u32);
        match kind {
            GotKind::Addr if !preempt && l.is_ifunc(*t) && !l.ifunc_canonical.contains(t) => {
                // Only loaded through the GOT: the slot gets the resolver's result directly.
                l.irelatives.push(DynRel { place, r_type: arch::r::IRELATIVE, sym: None, addend: Addend::AddrOf(*t, 0) });
            }
            GotKind::Addr => {
                if preempt {
                    let Target::Global(id) = *t else { unreachable!() };
                    l.dynrels.push(DynRel { place, r_type: arch::r::GLOB_DAT, sym: Some(id), addend: Addend::Const(0) });
                } else if l.is_pic && !l.is_absolute(*t) || (l.is_pic && l.iplt_index.contains_key(t)) {
                    l.dynrels.push(DynRel { place, r_type: arch::r::RELATIVE, sym: None, addend: Addend::AddrOf(*t, 0) });
                }
            }
            GotKind::TpOff => {
                if preempt {
                    let Target::Global(id) = *t else { unreachable!() };
                    l.dynrels.push(DynRel { place, r_type: arch::r::TPOFF64, sym: Some(id), addend: Addend::Const(0) });
                } else if c.shared {
                    // The library's TLS block is placed by the loader: TP offset at load time.
                    l.dynrels.push(DynRel { place, r_type: arch::r::TPOFF64, sym: None, addend: Addend::TlsOffsetOf(*t, 0) });
                }
            }
            GotKind::TlsGdMod => {
                let sym = if preempt { if let Target::Global(id) = *t { Some(id) } else { None } } else { None };
                l.dynrels.push(DynRel { place, r_type: arch::r::DTPMOD64, sym, addend: Addend::Const(0) });
            }
            GotKind::TlsGdOff => {
                if preempt {
                    let Target::Global(id) = *t else { unreachable!() };
                    l.dynrels.push(DynRel { place, r_type: arch::r::DTPOFF64, sym: Some(id), addend: Addend::Const(0) });
                }
            }
            GotKind::TlsLdMod => {
                l.dynrels.push(DynRel { place, r_type: arch::r::DTPMOD64, sym: None, addend: Addend::Const(0) });
            }
            GotKind::Zero => {}
            GotKind::TlsDesc => {
                if preempt {
                    let Target::Global(id) = *t else { unreachable!() };
                    l.dynrels.push(DynRel { place, r_type: arch::r::TLSDESC, sym: Some(id), addend: Addend::Const(0) });
                } else {
                    l.dynrels.push(DynRel { place, r_type: arch::r::TLSDESC, sym: None, addend: Addend::TlsOffsetOf(*t, 0) });
                }
            }
        }
    }
    for &id in &l.copies.clone() {
        l.dynrels.push(DynRel { place: Place::Copy(id), r_type: arch::r::COPY, sym: Some(id), addend: Addend::Const(0) });
    }
    // RELATIVE first (so DT_RELACOUNT can cover them), then symbolic, as lld sorts them.
    let mut rels = std::mem::take(&mut l.dynrels);
    rels.sort_by_key(|d| if d.r_type == arch::r::RELATIVE { 0 } else { 1 });
    l.relative_count = rels.iter().filter(|d| d.r_type == arch::r::RELATIVE).count();
    l.dynrels = rels;
    let need_reladyn = !l.dynrels.is_empty() || !l.irelatives.is_empty();
    if need_reladyn {
        add_synth(l, Synth::RelaDyn, ".rela.dyn", elf::SHT_RELA, a, 8);
    }
    if !l.plt.is_empty() {
        add_synth(l, Synth::RelaPlt, ".rela.plt", elf::SHT_RELA, a | elf::SHF_INFO_LINK, 8);
    }
    if c.eh_frame_hdr && l.synth_osec.contains_key(&Synth::EhFrame) {
        add_synth(l, Synth::EhFrameHdr, ".eh_frame_hdr", elf::SHT_PROGBITS, a, 4);
    }
    if !l.plt.is_empty() {
        add_synth(l, Synth::Plt, ".plt", elf::SHT_PROGBITS, a | x, 16);
    }
    if !l.iplt.is_empty() {
        add_synth(l, Synth::Iplt, ".iplt", elf::SHT_PROGBITS, a | x, 16);
    }
    if l.has_dynamic {
        add_synth(l, Synth::Dynamic, ".dynamic", elf::SHT_DYNAMIC, a | w, 8);
    }
    if !l.got.is_empty() {
        add_synth(l, Synth::Got, ".got", elf::SHT_PROGBITS, a | w, 8);
    }
    let got_sym_used = l.r.lookup(b"_GLOBAL_OFFSET_TABLE_").map_or(false, |id| l.r.symbols[id].obj_ref);
    let need_gotplt = !l.plt.is_empty() || !l.iplt.is_empty() || got_sym_used;
    if need_gotplt {
        add_synth(l, Synth::GotPlt, ".got.plt", elf::SHT_PROGBITS, a | w, 8);
        if c.z_now && c.z_relro {
            let i = l.synth_osec[&Synth::GotPlt];
            l.osecs[i].relro = true;
        }
    }
    add_synth(l, Synth::Comment, ".comment", elf::SHT_PROGBITS, 0, 1);
    {
        let i = l.synth_osec[&Synth::Comment];
        l.osecs[i].flags = (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
        l.osecs[i].entsize = 1;
    }
    // Merge input .comment sections into ours.
    if let Some(pos) = l.osecs.iter().position(|o| o.name == ".comment" && !o.chunks.iter().any(|c| matches!(c, Chunk::Synthetic(_)))) {
        let chunks = l.osecs[pos].chunks.clone();
        let ci = l.synth_osec[&Synth::Comment];
        l.osecs[ci].chunks = chunks.into_iter().chain(std::iter::once(Chunk::Synthetic(Synth::Comment))).collect();
        l.osecs[pos].chunks.clear();
        l.osecs[pos].name = String::new();
    }
    // Common symbols and copy relocations go to .bss.
    let mut bss_syms: Vec<SymbolId> = Vec::new();
    for (id, s) in l.r.symbols.iter().enumerate() {
        if let Def::Common(..) = s.def {
            bss_syms.push(id);
        }
    }
    bss_syms.extend(l.copies.iter().copied());
    if !bss_syms.is_empty() {
        let idx = match l.osecs.iter().position(|o| o.name == ".bss" && !flag(o.flags, elf::SHF_TLS)) {
            Some(i) => i,
            None => {
                l.osecs.push(new_osec(".bss", elf::SHT_NOBITS, (a | w) as u64, 1));
                l.osecs.len() - 1
            }
        };
        let mut tbss_idx = None;
        let mut relro_idx = None;
        for id in bss_syms {
            let is_tls = l.is_tls(Target::Global(id));
            let ro_copy = match l.r.symbols[id].def {
                Def::Shared(f, k) => l.r.dso(f).is_read_only(l.r.dso(f).syms[k].sym.st_value(LE)),
                _ => false,
            };
            let target = if ro_copy {
                *relro_idx.get_or_insert_with(|| {
                    let mut os = new_osec(".bss.rel.ro", elf::SHT_NOBITS, (a | w) as u64, 1);
                    os.relro = true;
                    l.osecs.push(os);
                    l.osecs.len() - 1
                })
            } else if is_tls {
                *tbss_idx.get_or_insert_with(|| match l.osecs.iter().position(|o| o.name == ".tbss") {
                    Some(i) => i,
                    None => {
                        let mut os = new_osec(".tbss", elf::SHT_NOBITS, (a | w | elf::SHF_TLS) as u64, 1);
                        os.relro = true;
                        l.osecs.push(os);
                        l.osecs.len() - 1
                    }
                })
            } else {
                idx
            };
            l.osecs[target].chunks.push(Chunk::Bss(id));
            let al = bss_align(l, id);
            l.osecs[target].align = l.osecs[target].align.max(al);
        }
    }
    if c.z_relro && l.osecs.iter().any(|o| o.relro && flag(o.flags, elf::SHF_ALLOC)) && !c.relocatable {
        add_synth(l, Synth::RelroPadding, ".relro_padding", elf::SHT_NOBITS, a | w, 1);
        let i = l.synth_osec[&Synth::RelroPadding];
        l.osecs[i].relro = true;
    }
}

fn bss_align(l: &Layout, id: SymbolId) -> u64 {
    match l.r.symbols[id].def {
        Def::Common(f, i) => l.sym(f, i).st_value(LE).max(1),
        Def::Shared(f, k) => {
            // Alignment of the copy: the largest power of two dividing the DSO address (max 32),
            // like lld's estimate.
            let v = l.r.dso(f).syms[k].sym.st_value(LE);
            let tz = if v == 0 { 5 } else { v.trailing_zeros().min(5) };
            1u64 << tz
        }
        _ => 1,
    }
}

pub fn bss_size(l: &Layout, id: SymbolId) -> u64 {
    match l.r.symbols[id].def {
        Def::Common(f, i) => l.sym(f, i).st_size(LE),
        Def::Shared(f, k) => l.r.dso(f).syms[k].sym.st_size(LE),
        _ => 0,
    }
}

// ------------------------------------------------------------------------------------------------
// Addresses
// ------------------------------------------------------------------------------------------------

fn chunk_size_align(l: &Layout, c: Chunk) -> (u64, u64) {
    match c {
        Chunk::Input(f, s) => {
            let sec = &l.obj(f).sections[s as usize];
            (sec.size, sec.align)
        }
        Chunk::Merged(m) => (l.merged[m].data.len() as u64, l.merged[m].align),
        Chunk::Bss(id) => (bss_size(l, id), bss_align(l, id)),
        Chunk::Synthetic(s) => (crate::elf::synthetic::size(l, s), 1),
    }
}

fn assign_addresses(l: &mut Layout) -> Result<()> {
    let relro_on = l.config.z_relro;
    // Order: stable by rank; synthetic sections placed in lld's order within their rank.
    let synth_order = |o: &OutSec| -> u32 {
        match o.chunks.first() {
            Some(Chunk::Synthetic(s)) => match s {
                Synth::Interp => 0,
                // lld creates these after the input sections' output sections, so they follow
                // notes such as `.note.ABI-tag`.
                Synth::BuildId => 600,
                Synth::GnuProperty => 601,
                Synth::DynSym => 2,
                Synth::Versym => 3,
                Synth::Verdef => 4,
                Synth::Verneed => 4,
                Synth::GnuHash => 5,
                Synth::SysvHash => 6,
                Synth::DynStr => 7,
                Synth::RelaDyn => 8,
                Synth::RelaPlt => 9,
                Synth::EhFrameHdr => 1001,
                Synth::EhFrame => 1002,
                Synth::Plt => 1003,
                Synth::Iplt => 1004,
                Synth::Dynamic => 1005,
                Synth::Got => 1006,
                Synth::RelroPadding => 1007,
                Synth::GotPlt => 1003,
                Synth::Comment => 0,
            },
            _ => 500,
        }
    };
    // Placeholders emptied earlier (their contents moved elsewhere) have no name: dropped here.
    let mut order: Vec<usize> = (0..l.osecs.len()).filter(|&i| !l.osecs[i].name.is_empty()).collect();
    order.sort_by_key(|&i| {
        let o = &l.osecs[i];
        let mut rk = rank(o, relro_on);
        // NOBITS after PROGBITS within the TLS group.
        if rk == 30 && o.sh_type == elf::SHT_NOBITS {
            rk = 31;
        }
        let so = synth_order(o);
        // Non-synthetic .bss-like sections go before .got.plt? No: keep data, then .got.plt, then bss.
        (rk, so, i)
    });
    let osecs: Vec<OutSec> = order.iter().map(|&i| l.osecs[i].clone()).collect();
    // Remap synth_osec and sec_osec indices.
    let mut remap = vec![usize::MAX; l.osecs.len()];
    for (new, &old) in order.iter().enumerate() {
        remap[old] = new;
    }
    for v in l.synth_osec.values_mut() {
        *v = remap[*v];
    }
    for v in l.sec_osec.iter_mut() {
        for x in v.iter_mut() {
            if *x != u32::MAX {
                let n = remap[*x as usize];
                *x = if n == usize::MAX { u32::MAX } else { n as u32 };
            }
        }
    }
    l.osecs = osecs;
    sort_link_order(l);

    // Chunk offsets and section sizes (synthetic sizes may depend on earlier decisions only).
    for i in 0..l.osecs.len() {
        let chunks = l.osecs[i].chunks.clone();
        let mut off = 0u64;
        let mut offs = Vec::with_capacity(chunks.len());
        let mut align = l.osecs[i].align;
        for c in &chunks {
            let (size, al) = chunk_size_align(l, *c);
            off = align_up(off, al);
            offs.push(off);
            if let Chunk::Input(f, s) = c {
                if l.obj(*f).sections[*s as usize].kind != SecKind::EhFrame {
                    l.sec_off[*f][*s as usize] = off;
                }
            }
            off += size;
            align = align.max(al);
        }
        l.osecs[i].chunk_off = offs;
        l.osecs[i].size = off;
        l.osecs[i].align = align;
    }
    // Drop empty non-synthetic output sections that have no chunks at all.
    // Program headers.
    let has_interp = l.synth_osec.contains_key(&Synth::Interp);
    // lld maps the program headers with PT_PHDR in every executable and shared object.
    let has_phdr = !l.config.relocatable;
    let has_tls = l.osecs.iter().any(|o| flag(o.flags, elf::SHF_TLS) && flag(o.flags, elf::SHF_ALLOC));
    let has_relro = relro_on && l.osecs.iter().any(|o| o.relro && flag(o.flags, elf::SHF_ALLOC));
    let mut nphdr = 0;
    if has_phdr {
        nphdr += 1;
    }
    if has_interp {
        nphdr += 1;
    }
    // LOAD count: R, RX, RW(relro), RW.
    let groups = segment_groups(l, relro_on);
    nphdr += groups.len();
    if has_tls {
        nphdr += 1;
    }
    if l.has_dynamic {
        nphdr += 1;
    }
    if has_relro {
        nphdr += 1;
    }
    if l.synth_osec.contains_key(&Synth::EhFrameHdr) {
        nphdr += 1;
    }
    nphdr += 1; // GNU_STACK
    // One PT_NOTE per run of adjacent notes with the same alignment (lld): a reader walks a
    // PT_NOTE with its p_align, so 8-aligned property notes cannot share one with 4-aligned ones.
    let note_runs = |l: &Layout| -> Vec<Vec<usize>> {
        let mut runs: Vec<Vec<usize>> = Vec::new();
        let mut prev: Option<(usize, u64)> = None;
        for (i, o) in l.osecs.iter().enumerate() {
            if !(o.sh_type == elf::SHT_NOTE && flag(o.flags, elf::SHF_ALLOC)) {
                continue;
            }
            match (prev, runs.last_mut()) {
                (Some((pi, pa)), Some(run)) if pi + 1 == i && pa == o.align => run.push(i),
                _ => runs.push(vec![i]),
            }
            prev = Some((i, o.align));
        }
        runs
    };
    let n_note_runs = note_runs(l).len();
    nphdr += n_note_runs;
    let has_note = n_note_runs > 0;
    let has_property = l.synth_osec.contains_key(&Synth::GnuProperty);
    if has_property {
        nphdr += 1;
    }
    let headers_size = 64 + nphdr as u64 * 56;
    // Assign addresses.
    let base = l.image_base;
    let mut off = headers_size;
    let mut addr = base + headers_size;
    let mut loads: Vec<Phdr> = Vec::new();
    let mut tls_range: Option<(u64, u64, u64, u64)> = None; // (start addr, offset, filesz, memsz)
    let mut tls_align = 1;
    let mut relro_range: Option<(u64, u64, u64)> = None;
    // .tbss-like sections take no address space, but follow each other in the TLS template.
    let mut tbss_cursor: Option<u64> = None;
    // -z max-page-size aligns segments; -z common-page-size ends RELRO (lld's defaults: 4 KiB).
    let max_page = l.config.max_page_size.unwrap_or(PAGE);
    let common_page = l.config.common_page_size.unwrap_or(PAGE).min(max_page);
    for (gi, g) in groups.iter().enumerate() {
        if gi > 0 {
            // New segment: next page, same offset modulo the page size (no file padding).
            addr = align_up(addr, max_page) + (off % max_page);
        }
        let seg_start_addr = if gi == 0 { base } else { addr };
        let seg_start_off = if gi == 0 { 0 } else { off };
        let mut seg_end_addr = seg_start_addr;
        let mut seg_end_off = seg_start_off;
        for &i in &g.sections {
            let os = &l.osecs[i];
            let nobits = os.sh_type == elf::SHT_NOBITS;
            let is_tls = flag(os.flags, elf::SHF_TLS);
            let mut al = os.align;
            if is_tls && tls_range.is_none() {
                // The TLS block starts aligned to the largest TLS alignment.
                let max_tls = l.osecs.iter().filter(|o| flag(o.flags, elf::SHF_TLS)).map(|o| o.align).max().unwrap_or(1);
                al = al.max(max_tls);
            }
            if matches!(l.osecs[i].chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding))) {
                let end = addr;
                let padded = align_up(end, common_page);
                l.osecs[i].size = padded - end;
            }
            let os = &l.osecs[i];
            let size = os.size;
            let saved_addr = addr;
            if nobits && is_tls {
                if let Some(c) = tbss_cursor {
                    addr = addr.max(c);
                }
            }
            let a = align_up(addr, al);
            addr = a;
            // Inside a segment the file offset tracks the address, so a PROGBITS section after a
            // NOBITS one (e.g. .got after .bss.rel.ro) still has offset ≡ address (mod page).
            off = seg_start_off + (addr - seg_start_addr);
            let os = &mut l.osecs[i];
            os.addr = addr;
            os.offset = off;
            if is_tls {
                tls_align = tls_align.max(os.align);
                let e = tls_range.get_or_insert((addr, off, 0, 0));
                if !nobits {
                    e.2 = addr + size - e.0;
                }
                e.3 = addr + size - e.0;
            }
            if os.relro && relro_on {
                let e = relro_range.get_or_insert((addr, off, 0));
                e.2 = addr + size - e.0;
            }
            if nobits && is_tls {
                // .tbss takes no address space outside the TLS template.
                tbss_cursor = Some(addr + size);
                addr = saved_addr;
                off = seg_start_off + (addr - seg_start_addr);
                continue;
            }
            addr += size;
            if !nobits {
                off += size;
                seg_end_off = off;
            }
            seg_end_addr = addr;
        }
        loads.push(Phdr {
            p_type: elf::PT_LOAD,
            flags: g.flags,
            offset: seg_start_off,
            vaddr: seg_start_addr,
            filesz: seg_end_off.max(seg_start_off) - seg_start_off,
            memsz: seg_end_addr - seg_start_addr,
            align: max_page,
        });
    }
    // Non-allocated sections follow in the file.
    for os in l.osecs.iter_mut() {
        if flag(os.flags, elf::SHF_ALLOC) {
            continue;
        }
        off = align_up(off, os.align);
        os.offset = off;
        os.addr = 0;
        off += os.size;
    }
    if let Some((start, _, _, memsz)) = tls_range {
        l.tls = Some((start, memsz, tls_align));
    }
    // Program header table.
    let mut ph = Vec::new();
    if has_phdr {
        ph.push(Phdr { p_type: elf::PT_PHDR, flags: elf::PF_R, offset: 64, vaddr: base + 64, filesz: nphdr as u64 * 56, memsz: nphdr as u64 * 56, align: 8 });
    }
    if has_interp {
        let i = l.synth_osec[&Synth::Interp];
        let o = &l.osecs[i];
        ph.push(Phdr { p_type: elf::PT_INTERP, flags: elf::PF_R, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 1 });
    }
    ph.extend(loads);
    if let Some((start, toff, filesz, memsz)) = tls_range {
        ph.push(Phdr { p_type: elf::PT_TLS, flags: elf::PF_R, offset: toff, vaddr: start, filesz, memsz, align: tls_align });
    }
    if l.has_dynamic {
        let i = l.synth_osec[&Synth::Dynamic];
        let o = &l.osecs[i];
        ph.push(Phdr { p_type: elf::PT_DYNAMIC, flags: elf::PF_R | elf::PF_W, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 8 });
    }
    if has_relro {
        if let Some((start, roff, size)) = relro_range {
            ph.push(Phdr { p_type: elf::PT_GNU_RELRO, flags: elf::PF_R, offset: roff, vaddr: start, filesz: size, memsz: size, align: 1 });
        }
    }
    if let Some(&i) = l.synth_osec.get(&Synth::EhFrameHdr) {
        let o = &l.osecs[i];
        ph.push(Phdr { p_type: elf::PT_GNU_EH_FRAME, flags: elf::PF_R, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 4 });
    }
    ph.push(Phdr { p_type: elf::PT_GNU_STACK, flags: if l.config.z_execstack { elf::PF_R | elf::PF_W | elf::PF_X } else { elf::PF_R | elf::PF_W }, offset: 0, vaddr: 0, filesz: 0, memsz: l.config.z_stack_size.unwrap_or(0), align: 0 });
    if has_note {
        for run in note_runs(l) {
            let first = &l.osecs[run[0]];
            let last = &l.osecs[run[run.len() - 1]];
            ph.push(Phdr { p_type: elf::PT_NOTE, flags: elf::PF_R, offset: first.offset, vaddr: first.addr, filesz: last.offset + last.size - first.offset, memsz: last.addr + last.size - first.addr, align: first.align.max(4) });
        }
    }
    if has_property {
        let o = &l.osecs[l.synth_osec[&Synth::GnuProperty]];
        ph.push(Phdr { p_type: elf::PT_GNU_PROPERTY, flags: elf::PF_R, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 8 });
    }
    debug_assert_eq!(ph.len(), nphdr);
    l.phdrs = ph;
    // Section header indices.
    let mut idx = 1;
    for os in l.osecs.iter_mut() {
        os.shndx = idx;
        idx += 1;
    }
    l.file_size = off;
    Ok(())
}

/// The section an `SHF_LINK_ORDER` input section is linked to (its `sh_link`), if any.
pub fn link_order_dep(l: &Layout, f: FileId, s: u32) -> Option<u32> {
    let sec = &l.obj(f).sections[s as usize];
    if !flag(sec.flags, elf::SHF_LINK_ORDER) {
        return None;
    }
    let to = object::read::elf::SectionHeader::sh_link(sec.hdr, LE);
    (to != 0 && (to as usize) < l.obj(f).sections.len()).then_some(to)
}

/// lld's `resolveShfLinkOrder`: the inputs of an `SHF_LINK_ORDER` output section are ordered as
/// the sections they are linked to are (sanitizer coverage's PC table must follow its counters,
/// for example); those linked to nothing go last. Output sections are already in address
/// order, and chunk positions follow offsets, so positions stand in for addresses.
fn sort_link_order(l: &mut Layout) {
    let targets: Vec<usize> = (0..l.osecs.len()).filter(|&i| flag(l.osecs[i].flags, elf::SHF_LINK_ORDER)).collect();
    if targets.is_empty() {
        return;
    }
    let mut pos: HashMap<(FileId, u32), (usize, usize)> = HashMap::new();
    for (oi, os) in l.osecs.iter().enumerate() {
        for (ci, c) in os.chunks.iter().enumerate() {
            if let Chunk::Input(f, s) = c {
                pos.insert((*f, *s), (oi, ci));
            }
        }
    }
    for oi in targets {
        let mut chunks = std::mem::take(&mut l.osecs[oi].chunks);
        chunks.sort_by_key(|c| match c {
            Chunk::Input(f, s) => match link_order_dep(l, *f, *s).and_then(|d| pos.get(&(*f, d))) {
                Some(&(o, k)) => (0, o, k),
                None => (1, 0, 0),
            },
            _ => (1, 0, 0),
        });
        l.osecs[oi].chunks = chunks;
    }
}

pub struct SegGroup {
    pub flags: u32,
    pub sections: Vec<usize>,
}

fn segment_groups(l: &Layout, relro_on: bool) -> Vec<SegGroup> {
    let mut groups: Vec<SegGroup> = Vec::new();
    let mut last_key = None;
    for (i, os) in l.osecs.iter().enumerate() {
        if !flag(os.flags, elf::SHF_ALLOC) {
            continue;
        }
        let mut pf = elf::PF_R;
        if flag(os.flags, elf::SHF_WRITE) {
            pf |= elf::PF_W;
        }
        if flag(os.flags, elf::SHF_EXECINSTR) {
            pf |= elf::PF_X;
        }
        let relro = os.relro && relro_on;
        let key = (pf, relro);
        if last_key != Some(key) {
            groups.push(SegGroup { flags: pf, sections: Vec::new() });
            last_key = Some(key);
        }
        groups.last_mut().unwrap().sections.push(i);
    }
    if groups.is_empty() || groups[0].flags != elf::PF_R {
        // The first segment maps the ELF and program headers: make it read-only on its own.
        groups.insert(0, SegGroup { flags: elf::PF_R, sections: Vec::new() });
    }
    groups
}

// ------------------------------------------------------------------------------------------------
// Symbol values
// ------------------------------------------------------------------------------------------------

fn compute_symbol_values(l: &mut Layout) -> Result<()> {
    let r = l.r;
    let find = |l: &Layout, name: &str| l.osecs.iter().find(|o| o.name == name).map(|o| (o.addr, o.size));
    let mut values = vec![0u64; r.symbols.len()];
    let mut bss_addr: HashMap<SymbolId, u64> = HashMap::new();
    for os in &l.osecs {
        for (c, off) in os.chunks.iter().zip(&os.chunk_off) {
            if let Chunk::Bss(id) = c {
                bss_addr.insert(*id, os.addr + off);
            }
        }
    }
    for (id, s) in r.symbols.iter().enumerate() {
        values[id] = match s.def {
            Def::Defined(f, i) => {
                let sym = l.sym(f, i);
                let sh = sym.st_shndx(LE);
                if sh == elf::SHN_ABS {
                    sym.st_value(LE)
                } else {
                    l.section_addr(f, sh as u32, sym.st_value(LE)).unwrap_or(0)
                }
            }
            Def::Common(..) => bss_addr.get(&id).copied().unwrap_or(0),
            Def::Shared(..) => {
                let primary = l.copy_alias.get(&id).copied().unwrap_or(id);
                bss_addr.get(&primary).copied().unwrap_or(0)
            }
            _ => 0,
        };
    }
    // Linker-defined symbols (only when referenced and not defined by an input).
    let text_end = l.osecs.iter().filter(|o| flag(o.flags, elf::SHF_EXECINSTR) && flag(o.flags, elf::SHF_ALLOC)).map(|o| o.addr + o.size).max().unwrap_or(0);
    let data_end = l.osecs.iter().filter(|o| flag(o.flags, elf::SHF_ALLOC) && o.sh_type != elf::SHT_NOBITS).map(|o| o.addr + o.size).max().unwrap_or(0);
    let end = l.osecs.iter().filter(|o| flag(o.flags, elf::SHF_ALLOC) && !flag(o.flags, elf::SHF_TLS)).map(|o| o.addr + o.size).max().unwrap_or(0);
    let bss_start = l.osecs.iter().find(|o| o.name == ".bss").map(|o| o.addr).unwrap_or(data_end);
    let gotplt = l.synth_osec.get(&Synth::GotPlt).map(|&i| l.osecs[i].addr);
    let got = l.synth_osec.get(&Synth::Got).map(|&i| l.osecs[i].addr);
    let reladyn = l.synth_osec.get(&Synth::RelaDyn).map(|&i| (l.osecs[i].addr, l.osecs[i].size));
    let dynamic = l.synth_osec.get(&Synth::Dynamic).map(|&i| l.osecs[i].addr);
    let static_nonpic = !l.has_dynamic;
    for (id, s) in r.symbols.iter().enumerate() {
        if !matches!(s.def, Def::Undefined | Def::Lazy(_)) || !l.is_linker_defined(id) {
            continue;
        }
        let name = s.name;
        let v = match name {
            b"_GLOBAL_OFFSET_TABLE_" => gotplt.or(got),
            b"__ehdr_start" | b"__executable_start" => Some(l.image_base),
            b"__dso_handle" => Some(l.image_base),
            b"_DYNAMIC" => dynamic,
            b"__bss_start" => Some(bss_start),
            b"_end" | b"end" => Some(end),
            b"_etext" | b"etext" => Some(text_end),
            b"_edata" | b"edata" => Some(data_end),
            b"__init_array_start" => Some(find(l, ".init_array").map(|x| x.0).unwrap_or(0)),
            b"__init_array_end" => Some(find(l, ".init_array").map(|x| x.0 + x.1).unwrap_or(0)),
            b"__fini_array_start" => Some(find(l, ".fini_array").map(|x| x.0).unwrap_or(0)),
            b"__fini_array_end" => Some(find(l, ".fini_array").map(|x| x.0 + x.1).unwrap_or(0)),
            b"__preinit_array_start" => Some(find(l, ".preinit_array").map(|x| x.0).unwrap_or(0)),
            b"__preinit_array_end" => Some(find(l, ".preinit_array").map(|x| x.0 + x.1).unwrap_or(0)),
            b"__rela_iplt_start" => Some(match reladyn {
                Some((a, sz)) if static_nonpic => a + sz - l.irelatives.len() as u64 * 24,
                Some((a, _)) => a,
                None => 0,
            }),
            b"__rela_iplt_end" => Some(match reladyn {
                Some((a, sz)) if static_nonpic => a + sz,
                Some((a, _)) => a,
                None => 0,
            }),
            // In an executable local-dynamic code is relaxed to TP-relative offsets (DTPOFF is
            // written as a TP offset), so the module base relaxes to TP + 0: the TLS block end.
            b"_TLS_MODULE_BASE_" => Some(if l.config.shared { l.tls_start() } else { l.tls_end() }),
            b"__GNU_EH_FRAME_HDR" => l.synth_osec.get(&Synth::EhFrameHdr).map(|&i| l.osecs[i].addr),
            _ => {
                if let Some(rest) = name.strip_prefix(b"__start_") {
                    l.osecs.iter().find(|o| o.name.as_bytes() == rest).map(|o| o.addr)
                } else if let Some(rest) = name.strip_prefix(b"__stop_") {
                    l.osecs.iter().find(|o| o.name.as_bytes() == rest).map(|o| o.addr + o.size)
                } else {
                    None
                }
            }
        };
        if let Some(v) = v {
            values[id] = v;
            l.synthetic_syms.insert(id, v);
        }
    }
    // --defsym values, in command-line order (a later one may use an earlier one).
    for (name, expr) in &l.config.defsym {
        let Some(id) = r.lookup(name.as_bytes()) else { continue };
        let off = crate::elf::resolve::defsym_offset(expr).unwrap_or(0);
        let base = match crate::elf::resolve::defsym_target(expr) {
            Some(t) => match r.lookup(t.as_bytes()) {
                Some(tid) if !matches!(r.symbols[tid].def, Def::Undefined | Def::Lazy(_)) || l.synthetic_syms.contains_key(&tid) => values[tid],
                _ => return Err(Error::new(format!("-defsym:1: symbol not found: {t}"))),
            },
            None => 0,
        };
        values[id] = base.wrapping_add(off as u64);
        l.synthetic_syms.insert(id, values[id]);
    }
    l.sym_value = values;
    // Entry point.
    let entry_name = l.config.entry.clone().unwrap_or_else(|| "_start".to_string());
    l.entry = match r.lookup(entry_name.as_bytes()) {
        Some(id) if !matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_)) => l.sym_value[id],
        _ => {
            if let Some(v) = parse_int(&entry_name) {
                v
            } else {
                if l.config.entry.is_some() || !l.config.shared {
                    l.config.diag.warn(&format!("cannot find entry symbol {entry_name}; not setting start address"));
                }
                0
            }
        }
    };
    Ok(())
}

fn parse_int(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

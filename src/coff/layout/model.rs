//! The laid-out PE image as the stages after layout read it: output sections (`OutSec`), their
//! chunks (`Chunk`, `ChunkKind`) with their RVAs, the guard tables layout decided
//! (`GuardTables`), and `Layout`, which answers where a symbol or a relocation target ended up.
//! Below `layout()` (which fills it), the guard-table pass, the PDB writer, the map files and
//! the writer, so that none of them imports the stage that drives layout.

use object::pe;

use crate::coff::config::CoffConfig;
use crate::coff::exports::Export;
use crate::coff::idata::{self, DllImports};
use crate::coff::pseudoreloc::PseudoReloc;
use crate::coff::symtab::{Def, FileId, Kind, Resolved, SymId, SymRef, Synth};

pub const R: u32 = pe::IMAGE_SCN_MEM_READ;

pub const W: u32 = pe::IMAGE_SCN_MEM_WRITE;

pub const X: u32 = pe::IMAGE_SCN_MEM_EXECUTE;

pub const DATA: u32 = pe::IMAGE_SCN_CNT_INITIALIZED_DATA;

pub const BSS: u32 = pe::IMAGE_SCN_CNT_UNINITIALIZED_DATA;

pub const CODE: u32 = pe::IMAGE_SCN_CNT_CODE;

pub const DISCARD: u32 = pe::IMAGE_SCN_MEM_DISCARDABLE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKind {
    Section {
        file: FileId,
        sec: u32,
    },
    Common {
        file: FileId,
        sym: u32,
    },
    ImportThunk(FileId),
    ImportDir(usize),
    NullDir,
    Lookup(FileId),
    Address(FileId),
    NullEntry,
    HintName(FileId),
    DllName(usize),
    LocalImport(SymId),
    PseudoTable,
    Empty,
    Sentinel(u64),
    DebugDir,
    CvRecord,
    Edata,
    Reloc,
    /// Tail-merged string literals of one alignment (`merged[i]`).
    Merge(usize),
    /// A `/guard:cf` table of RVAs (`guard.tables[i]`).
    GuardTable(usize),
}

#[derive(Debug, Clone)]
pub struct Chunk {
    pub kind: ChunkKind,
    pub size: u32,
    pub align: u32,
    pub has_data: bool,
    pub rva: u32,
    pub osec: usize,
}

#[derive(Debug, Clone)]
pub struct OutSec {
    pub name: String,
    pub chars: u32,
    pub chunks: Vec<usize>,
    pub rva: u32,
    pub vsize: u32,
    pub raw_size: u32,
    pub file_off: u32,
    /// 1-based section number in the output.
    pub index: u16,
}

pub struct Layout<'a> {
    pub config: &'a CoffConfig,
    pub r: &'a Resolved,
    pub chunks: Vec<Chunk>,
    pub osecs: Vec<OutSec>,
    /// (file, section) → chunk.
    pub sec_chunk: Vec<Vec<Option<usize>>>,
    pub common_chunk: Vec<(FileId, u32, usize)>,
    pub thunk_chunk: Vec<(FileId, usize)>,
    pub address_chunk: Vec<(FileId, usize)>,
    pub local_import_chunk: Vec<(SymId, usize)>,
    pub dlls: Vec<DllImports>,
    pub dll_name_chunk: Vec<usize>,
    pub pseudo: Vec<PseudoReloc>,
    pub pseudo_chunk: Option<(usize, usize)>,
    pub ctor_chunks: Option<(usize, usize)>,
    pub exports: Vec<Export>,
    pub edata_chunk: Option<usize>,
    pub debug_dir: Option<(usize, usize)>,
    pub reloc: Vec<u8>,
    pub reloc_chunk: Option<usize>,
    pub import_dir: Option<(usize, u32)>,
    pub iat: Option<(usize, u32)>,
    pub pdata: Option<(usize, usize)>,
    pub size_of_headers: u32,
    pub size_of_image: u32,
    pub file_size: u32,
    pub image_base: u64,
    pub dll_name: String,
    /// Tail-merged string literals (`merge.rs`): per chunk, its bytes and the section chunks
    /// placed inside it with their offsets.
    pub merged: Vec<(Vec<u8>, Vec<(usize, u32)>)>,
    /// `/guard:cf`'s tables and the values of the `__guard_*` symbols (`guardcf.rs`).
    pub guard: GuardTables,
}

impl<'a> Layout<'a> {
    pub(in crate::coff) fn add_chunk(&mut self, kind: ChunkKind, size: u32, align: u32, has_data: bool) -> usize {
        self.chunks.push(Chunk { kind, size, align: align.max(1), has_data, rva: 0, osec: usize::MAX });
        self.chunks.len() - 1
    }

    /// The RVA of a global symbol's definition (absolute symbols: VA minus the image base), or
    /// `None` if it has no address (undefined, or in a discarded section).
    pub fn sym_rva(&self, id: SymId) -> Option<u64> {
        match self.r.symbols[id].def {
            Def::Regular(f, idx) => {
                let s = &self.r.obj(f).symbols[idx as usize];
                let c = self.sec_chunk[f].get((s.section as usize).checked_sub(1)?).copied().flatten()?;
                Some(self.chunks[c].rva as u64 + s.value as u64)
            }
            Def::Common(f, idx, _) => self.common_chunk.iter().find(|c| c.0 == f && c.1 == idx).map(|c| self.chunks[c.2].rva as u64),
            Def::Absolute(v) => match self.guard.value(id) {
                Some(GuardValue::Table(c)) => Some(self.chunks[c].rva as u64),
                Some(GuardValue::Absolute(n)) => Some(n.wrapping_sub(self.image_base)),
                None => Some(v.wrapping_sub(self.image_base)),
            },
            Def::Synthetic(Synth::ImageBase) => Some(0),
            Def::Synthetic(Synth::CtorList) => self.ctor_chunks.map(|c| self.chunks[c.0].rva as u64),
            Def::Synthetic(Synth::DtorList) => self.ctor_chunks.map(|c| self.chunks[c.1].rva as u64),
            Def::Synthetic(Synth::PseudoRelocList) => self.pseudo_chunk.map(|c| self.chunks[c.0].rva as u64),
            Def::Synthetic(Synth::PseudoRelocListEnd) => self.pseudo_chunk.map(|c| self.chunks[c.1].rva as u64),
            Def::Synthetic(s @ (Synth::DataStart | Synth::DataEnd | Synth::BssStart | Synth::BssEnd)) => self.data_bound(s),
            Def::ImportData(f) => self.address_chunk.iter().find(|c| c.0 == f).map(|c| self.chunks[c.1].rva as u64),
            Def::ImportThunk(f) => self.thunk_chunk.iter().find(|c| c.0 == f).map(|c| self.chunks[c.1].rva as u64),
            Def::LocalImport(_) => self.local_import_chunk.iter().find(|c| c.0 == id).map(|c| self.chunks[c.1].rva as u64),
            Def::Undefined | Def::Lazy(..) | Def::Bitcode(..) => None,
        }
    }

    /// MinGW's data and bss bounds in `.data` (GNU ld's script: `__data_start__` before
    /// `.data`, `.data2`, `.data$*` and `.jcr`, `__data_end__` after them; `__bss_start__` and
    /// `__bss_end__` around `.bss` and commons). Without such chunks: the start of `.data`.
    fn data_bound(&self, which: Synth) -> Option<u64> {
        let os = self.osecs.iter().find(|o| o.name == ".data")?;
        let is_bss = matches!(which, Synth::BssStart | Synth::BssEnd);
        let member = |c: &Chunk| match c.kind {
            ChunkKind::Section { file, sec } => {
                let n = self.r.obj(file).sections[sec as usize].name;
                if is_bss {
                    n == ".bss" || n.starts_with(".bss$")
                } else {
                    n == ".data" || n == ".data2" || n.starts_with(".data$") || n == ".jcr"
                }
            }
            ChunkKind::Common { .. } => is_bss,
            _ => false,
        };
        let mut range: Option<(u32, u32)> = None;
        for &c in &os.chunks {
            let ch = &self.chunks[c];
            if member(ch) {
                let (a, b) = range.unwrap_or((ch.rva, ch.rva));
                range = Some((a.min(ch.rva), b.max(ch.rva + ch.size)));
            }
        }
        let (a, b) = range.unwrap_or((os.rva, os.rva));
        Some(if matches!(which, Synth::DataStart | Synth::BssStart) { a } else { b } as u64)
    }

    /// The chunk a global symbol lives in (for SECREL/SECTION and the symbol table).
    pub fn sym_chunk(&self, id: SymId) -> Option<usize> {
        match self.r.symbols[id].def {
            Def::Regular(f, idx) => {
                let s = &self.r.obj(f).symbols[idx as usize];
                self.sec_chunk[f].get((s.section as usize).checked_sub(1)?).copied().flatten()
            }
            Def::Common(f, idx, _) => self.common_chunk.iter().find(|c| c.0 == f && c.1 == idx).map(|c| c.2),
            Def::ImportData(f) => self.address_chunk.iter().find(|c| c.0 == f).map(|c| c.1),
            Def::ImportThunk(f) => self.thunk_chunk.iter().find(|c| c.0 == f).map(|c| c.1),
            Def::LocalImport(_) => self.local_import_chunk.iter().find(|c| c.0 == id).map(|c| c.1),
            Def::Synthetic(Synth::CtorList) => self.ctor_chunks.map(|c| c.0),
            Def::Synthetic(Synth::DtorList) => self.ctor_chunks.map(|c| c.1),
            Def::Synthetic(Synth::PseudoRelocList) => self.pseudo_chunk.map(|c| c.0),
            Def::Synthetic(Synth::PseudoRelocListEnd) => self.pseudo_chunk.map(|c| c.1),
            Def::Absolute(_) => self.guard.table_chunk(id),
            _ => None,
        }
    }

    /// A relocation target in file `f`: (RVA, chunk if any, is absolute). `None`: discarded or
    /// undefined.
    pub fn target(&self, f: FileId, idx: usize) -> Option<(u64, Option<usize>, bool)> {
        match self.r.files[f].syms.get(idx).copied()? {
            SymRef::None => None,
            SymRef::Global(id) => {
                let rva = self.sym_rva(id)?;
                let abs = matches!(self.r.symbols[id].def, Def::Absolute(_)) && self.guard.table_chunk(id).is_none();
                Some((rva, self.sym_chunk(id), abs))
            }
            SymRef::Local { sec, value } => {
                let c = self.sec_chunk[f].get(sec as usize - 1).copied().flatten()?;
                Some((self.chunks[c].rva as u64 + value as u64, Some(c), false))
            }
            SymRef::Absolute(v) => Some(((v as u64).wrapping_sub(self.image_base), None, true)),
        }
    }

    /// Where a relocation target's chunk sits, for `SECTION`/`SECREL` relocations: the output
    /// section's RVA (`None` for an absolute target) and its 1-based index (one past the last
    /// section for an absolute target, as lld-link writes it).
    pub fn target_section(&self, chunk: Option<usize>) -> (Option<u64>, u16) {
        match chunk {
            Some(tc) if self.chunks[tc].osec != usize::MAX => {
                let tos = &self.osecs[self.chunks[tc].osec];
                (Some(tos.rva as u64), tos.index)
            }
            _ => (None, self.osecs.len() as u16 + 1),
        }
    }
}

impl<'a> Layout<'a> {
    /// A layout with no chunks or sections yet; import libraries grouped by DLL.
    pub(super) fn empty(config: &'a CoffConfig, r: &'a Resolved) -> Layout<'a> {
        let dll_name = config.output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Layout {
            config,
            r,
            chunks: Vec::new(),
            osecs: Vec::new(),
            sec_chunk: r
                .files
                .iter()
                .map(|f| match &f.kind {
                    Kind::Obj(o) => vec![None; o.sections.len()],
                    _ => Vec::new(),
                })
                .collect(),
            common_chunk: Vec::new(),
            thunk_chunk: Vec::new(),
            address_chunk: Vec::new(),
            local_import_chunk: Vec::new(),
            dlls: idata::group(r),
            dll_name_chunk: Vec::new(),
            pseudo: Vec::new(),
            pseudo_chunk: None,
            ctor_chunks: None,
            exports: Vec::new(),
            edata_chunk: None,
            debug_dir: None,
            reloc: Vec::new(),
            reloc_chunk: None,
            import_dir: None,
            iat: None,
            pdata: None,
            size_of_headers: 0,
            size_of_image: 0,
            file_size: 0,
            image_base: config.image_base(),
            dll_name,
            merged: Vec::new(),
            guard: Default::default(),
        }
    }
}

/// One table entry before addresses are known (lld's `ChunkAndOffset`): the chunk and the
/// offset in it; without a chunk (an absolute symbol) the offset is the RVA.
pub type Entry = (Option<usize>, u32);

/// What a linker-defined `__guard_*` symbol became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardValue {
    /// `__guard_*_table`: the table's chunk (lld replaces the absolute symbol by a synthetic
    /// one, so references to it get base relocations).
    Table(usize),
    /// `__guard_*_count` and `__guard_flags`: a new absolute value.
    Absolute(u64),
}

/// The tables and the symbol values this stage decided.
#[derive(Debug, Default)]
pub struct GuardTables {
    /// The entries of each table (`ChunkKind::GuardTable(i)`).
    pub tables: Vec<Vec<Entry>>,
    /// The `__guard_*` symbols that got a value.
    pub values: Vec<(SymId, GuardValue)>,
}

impl GuardTables {
    pub fn value(&self, id: SymId) -> Option<GuardValue> {
        self.values.iter().find(|v| v.0 == id).map(|v| v.1)
    }

    pub fn table_chunk(&self, id: SymId) -> Option<usize> {
        match self.value(id) {
            Some(GuardValue::Table(c)) => Some(c),
            _ => None,
        }
    }

    /// Table `i` as written: the entries' RVAs, sorted.
    pub fn rvas(&self, l: &Layout, i: usize) -> Vec<u32> {
        let mut v: Vec<u32> = self.tables[i].iter().map(|&(c, off)| c.map_or(0, |c| l.chunks[c].rva).wrapping_add(off)).collect();
        v.sort_unstable();
        v
    }
}

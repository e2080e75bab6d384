//! The link map (`-Map=<file>`, `--Map <file>`, `-M`/`--print-map` to stdout).
//!
//! Why this exists: build systems and people debugging a link read the map to see where every
//! input section and symbol ended up. dtld is a drop-in for ld.lld, so the map has lld's default
//! layout (lld's `ELF/MapFile.cpp`), which tools already parse:
//!
//! ```text
//!              VMA              LMA     Size Align Out     In      Symbol
//!             1670             1670      146    16 .text
//!             1760             1760       38    16         a.o:(.text)
//!             1760             1760        8     1                 foo
//! ```
//!
//! Columns: VMA and LMA (equal here: dtld has no linker-script `AT()`), size in hex (widths
//! 16/16/8), alignment in decimal (width 5), then the output section name, an input section
//! indented by 8 (`file:(name)`, `lib.a(m.o):(name)`, `<internal>:(name)` for linker-made
//! sections, `file:(COMMON)` for common symbols, `file:(.eh_frame+0xoff)` for runs of kept
//! `.eh_frame` records), or a symbol indented by 16 (alignment 1, size = `st_size`; defined
//! symbols of the section's own file, locals included, sorted by address; TLS symbols show their
//! offset in the TLS segment, as in `.symtab`; a copy-relocated symbol is listed with its space
//! `<internal>:(.bss)`, a canonical IFUNC with `<internal>:(.iplt)`, where lld moves them).
//! Everything is computed from the finished `Layout`; nothing here changes the output file.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::layout::model::{Chunk, Layout, Synth, Target};
use crate::elf::object::SecKind;
use crate::elf::symtab::{Def, File, FileId, SymbolId};
use crate::elf::types::LE;
use crate::error::{Error, Result};

/// Where a symbol lives, for grouping symbols under their input-section line.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Home {
    Input(FileId, u32),
    Bss(SymbolId),
    Synthetic(Synth),
}

/// One symbol line: address, size, printed name.
struct SymLine {
    addr: u64,
    size: u64,
    name: String,
}

/// Writes the map of `l` to `path` (`-` is stdout).
pub fn write_map(l: &Layout, path: &Path) -> Result<()> {
    let text = map_text(l);
    let shown = path.display();
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| Error::new(format!("cannot write map file {shown}: {}", crate::error::io_error(&e))));
    }
    // Through a temporary: `-Map` naming an input never truncates it while it is mapped.
    crate::outfile::write_atomic(path, text.as_bytes()).map_err(|e| Error::new(format!("cannot open map file {shown}: {}", crate::error::io_error(&e))))
}

/// The whole map as text.
pub fn map_text(l: &Layout) -> String {
    let syms = section_symbols(l);
    let mut s = String::new();
    s.push_str(&format!("{:>16} {:>16}     Size Align Out     In      Symbol\n", "VMA", "LMA"));
    let no_syms: Vec<SymLine> = Vec::new();
    for os in &l.osecs {
        if os.name.is_empty() {
            continue;
        }
        header(&mut s, os.addr, os.size, os.align);
        s.push_str(&os.name);
        s.push('\n');
        if os.name == ".comment" && os.flags & elf::SHF_ALLOC as u64 == 0 {
            // lld merges every input .comment and its own string into one synthetic section.
            input_line(&mut s, os.addr, os.size, 1, "<internal>:(.comment)");
            continue;
        }
        for (k, c) in os.chunks.iter().enumerate() {
            let addr = os.addr + os.chunk_off.get(k).copied().unwrap_or(0);
            match *c {
                Chunk::Input(f, sec) => {
                    let Some(isec) = l.obj(f).sections.get(sec as usize) else { continue };
                    let label = format!("{}:({})", file_name(l, f), String::from_utf8_lossy(isec.name));
                    input_line(&mut s, addr, isec.size, isec.align.max(1), &label);
                    symbol_lines(&mut s, syms.get(&Home::Input(f, sec)).unwrap_or(&no_syms));
                }
                Chunk::Merged(m) => {
                    let Some(mg) = l.merged.get(m) else { continue };
                    // lld names a merged section after its first input section.
                    let name = mg
                        .pieces
                        .keys()
                        .min()
                        .and_then(|&(f, sec)| l.obj(f).sections.get(sec as usize))
                        .map(|x| String::from_utf8_lossy(x.name).into_owned())
                        .unwrap_or_else(|| os.name.clone());
                    input_line(&mut s, addr, mg.size(), mg.align.max(1), &format!("<internal>:({name})"));
                }
                Chunk::Bss(id) => {
                    let (label, align) = match l.r.symbols.get(id).map(|x| x.def) {
                        Some(Def::Common(f, i)) => (format!("{}:(COMMON)", file_name(l, f)), l.sym(f, i).st_value(LE).max(1)),
                        // A copy of read-only data is lld's `.bss.rel.ro` input, wherever a
                        // script put it (a `.data.rel.ro` description takes it).
                        Some(Def::Shared(f, k)) if l.r.dso(f).is_read_only(l.r.dso(f).syms[k].sym.st_value(LE)) => {
                            ("<internal>:(.bss.rel.ro)".to_string(), copy_align(l, id))
                        }
                        _ => (format!("<internal>:({})", os.name), copy_align(l, id)),
                    };
                    input_line(&mut s, addr, crate::elf::layout::sizes::bss_size(l, id), align, &label);
                    symbol_lines(&mut s, syms.get(&Home::Bss(id)).unwrap_or(&no_syms));
                }
                Chunk::Synthetic(Synth::EhFrame) => eh_frame_lines(&mut s, l, addr),
                Chunk::Synthetic(sy) => {
                    let align = if sy == Synth::RelroPadding { 1 } else { os.align.max(1) };
                    let size = crate::elf::synthetic::size(l, sy);
                    input_line(&mut s, addr, size, align, &format!("<internal>:({})", synth_name(sy, &os.name)));
                    symbol_lines(&mut s, syms.get(&Home::Synthetic(sy)).unwrap_or(&no_syms));
                }
            }
        }
    }
    // The sections the writer adds after the layout's: .symtab, .shstrtab, .strtab.
    let shstrtab: u64 = 1 + l.osecs.iter().map(|o| o.name.len() as u64 + 1).sum::<u64>() + 26;
    let tables: Vec<(&str, u64, u64)> = match crate::elf::write::symtab_sizes(l) {
        Some((symtab, strtab)) => vec![(".symtab", symtab, 8), (".shstrtab", shstrtab, 1), (".strtab", strtab, 1)],
        None => vec![(".shstrtab", shstrtab, 1)],
    };
    for (name, size, align) in tables {
        header(&mut s, 0, size, align);
        s.push_str(name);
        s.push('\n');
        input_line(&mut s, 0, size, align, &format!("<internal>:({name})"));
    }
    s
}

/// The first four columns (VMA, LMA, size, alignment), as lld's `writeHeader` on a 64-bit target.
fn header(s: &mut String, vma: u64, size: u64, align: u64) {
    s.push_str(&format!("{vma:16x} {vma:16x} {size:8x} {align:5} "));
}

fn input_line(s: &mut String, vma: u64, size: u64, align: u64, label: &str) {
    header(s, vma, size, align);
    s.push_str("        ");
    s.push_str(label);
    s.push('\n');
}

fn symbol_lines(s: &mut String, syms: &[SymLine]) {
    for sym in syms {
        header(s, sym.addr, sym.size, 1);
        s.push_str("                ");
        s.push_str(&sym.name);
        s.push('\n');
    }
}

/// lld's `toString(InputFile)`: `a.o`, `lib.a(m.o)`.
fn file_name<'a>(l: &'a Layout, f: FileId) -> &'a str {
    l.r.files.get(f).map_or("<internal>", File::name)
}

/// The name lld gives each linker-made section.
fn synth_name(s: Synth, osec: &str) -> &str {
    match s {
        Synth::Interp => ".interp",
        Synth::BuildId => ".note.gnu.build-id",
        Synth::DynSym => ".dynsym",
        Synth::DynStr => ".dynstr",
        Synth::Versym => ".gnu.version",
        Synth::Verdef => ".gnu.version_d",
        Synth::Verneed => ".gnu.version_r",
        Synth::GnuHash => ".gnu.hash",
        Synth::SysvHash => ".hash",
        Synth::RelaDyn => ".rela.dyn",
        Synth::RelrDyn => ".relr.dyn",
        Synth::RelaPlt => ".rela.plt",
        Synth::EhFrameHdr => ".eh_frame_hdr",
        Synth::EhFrame => ".eh_frame",
        Synth::Plt => ".plt",
        Synth::Iplt => ".iplt",
        Synth::Dynamic => ".dynamic",
        Synth::Got => ".got",
        Synth::GotPlt => ".got.plt",
        Synth::RelroPadding => ".relro_padding",
        Synth::Comment => ".comment",
        Synth::GdbIndex => ".gdb_index",
        #[allow(unreachable_patterns)]
        _ => osec,
    }
}

/// The alignment of a copy-relocated symbol's space in .bss: the largest power of two dividing
/// its address in the library, at most 32 (the layout's rule, as lld estimates it).
fn copy_align(l: &Layout, id: SymbolId) -> u64 {
    match l.r.symbols.get(id).map(|x| x.def) {
        Some(Def::Shared(f, k)) => {
            let v = l.r.dso(f).syms.get(k).map_or(0, |s| s.sym.st_value(LE));
            let tz = if v == 0 { 5 } else { v.trailing_zeros().min(5) };
            1u64 << tz
        }
        _ => 1,
    }
}

/// `.eh_frame`: one line per run of kept records that are contiguous in both the input section
/// and the output (lld's `printEhFrame`), named `file:(.eh_frame+0x<input offset>)`.
fn eh_frame_lines(s: &mut String, l: &Layout, base: u64) {
    let mut recs: Vec<_> = l.eh_records.iter().collect();
    recs.sort_by_key(|r| r.out_off);
    // (file, section, input offset, output offset, size)
    let mut runs: Vec<(FileId, u32, u64, u64, u64)> = Vec::new();
    for r in recs {
        if let Some(last) = runs.last_mut() {
            if last.0 == r.file && last.1 == r.sec && last.2 + last.4 == r.in_off && last.3 + last.4 == r.out_off {
                last.4 += r.len;
                continue;
            }
        }
        runs.push((r.file, r.sec, r.in_off, r.out_off, r.len));
    }
    for (f, sec, in_off, out_off, size) in runs {
        let name = l.obj(f).sections.get(sec as usize).map_or(".eh_frame".into(), |x| String::from_utf8_lossy(x.name).into_owned());
        input_line(s, base + out_off, size, 1, &format!("{}:({name}+0x{in_off:x})", file_name(l, f)));
    }
}

/// Every symbol the map lists, grouped by the input section (or .bss space) it is defined in,
/// sorted by address (stable: symbol-table order among equal addresses), as lld's
/// `getSectionSyms`.
fn section_symbols(l: &Layout) -> HashMap<Home, Vec<SymLine>> {
    // lld's map names symbols as its diagnostics do: demangled unless --no-demangle.
    let demangle = |name: &[u8]| if l.config.diag.demangle { demangle_versioned(name) } else { String::from_utf8_lossy(name).into_owned() };
    let mut out: HashMap<Home, Vec<SymLine>> = HashMap::new();
    let tls_start = l.tls_start();
    let mut copies_done = std::collections::HashSet::new();
    for (f, file) in l.r.files.iter().enumerate() {
        let File::Obj(o) = file else { continue };
        if !l.r.loaded.get(f).copied().unwrap_or(false) {
            continue;
        }
        for (i, s) in o.symbols.iter().enumerate().skip(1) {
            let ty = s.st_type();
            if ty == elf::STT_SECTION || ty == elf::STT_FILE {
                continue;
            }
            let (home, addr, size, name) = if i < o.first_global {
                let Some(home) = regular_home(l, f, o.sym_section(i)) else { continue };
                let v = l.local_value(f, i);
                let v = if ty == elf::STT_TLS { v.wrapping_sub(tls_start) } else { v };
                (home, v, s.st_size(LE), demangle(o.sym_name(i)))
            } else {
                let Some(id) = l.r.global_of(f, i) else { continue };
                let Some(sym) = l.r.symbols.get(id) else { continue };
                match sym.def {
                    Def::Defined(df, di) if df == f && di == i && l.ifunc_canonical.contains(&Target::Global(id)) => {
                        // A canonical IFUNC is, to everyone, the function at its IPLT entry (lld
                        // moves the symbol there).
                        (Home::Synthetic(Synth::Iplt), l.addr_of(Target::Global(id)), 0, demangle(sym.name))
                    }
                    Def::Defined(df, di) if df == f && di == i => {
                        let Some(home) = regular_home(l, f, o.sym_section(i)) else { continue };
                        let v = l.sym_value.get(id).copied().unwrap_or(0);
                        let v = if ty == elf::STT_TLS { v.wrapping_sub(tls_start) } else { v };
                        (home, v, s.st_size(LE), demangle(sym.name))
                    }
                    Def::Common(df, di) if df == f && di == i => (Home::Bss(id), l.sym_value.get(id).copied().unwrap_or(0), s.st_size(LE), demangle(sym.name)),
                    Def::Shared(..) => {
                        // A copy relocation: listed with the copy (in the .bss space of the
                        // symbol that owns it; aliases share it), once.
                        let copied = l.sym_flags.get(&Target::Global(id)).is_some_and(|fl| fl.copy) || l.copy_alias.contains_key(&id);
                        if !copied || !copies_done.insert(id) {
                            continue;
                        }
                        let primary = l.copy_alias.get(&id).copied().unwrap_or(id);
                        let size = crate::elf::layout::sizes::bss_size(l, id);
                        (Home::Bss(primary), l.sym_value.get(id).copied().unwrap_or(0), size, demangle(sym.name))
                    }
                    _ => continue,
                }
            };
            out.entry(home).or_default().push(SymLine { addr, size, name });
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|x| x.addr);
    }
    out
}

/// The input section a symbol with section index `shndx` of file `f` is listed under: only
/// regular sections that are in the output (merged and .eh_frame pieces have no symbol lines).
fn regular_home(l: &Layout, f: FileId, shndx: Option<u32>) -> Option<Home> {
    let shndx = shndx?;
    let sec = l.obj(f).sections.get(shndx as usize)?;
    if sec.kind != SecKind::Regular {
        return None;
    }
    let os = *l.sec_osec.get(f)?.get(shndx as usize)?;
    if os == u32::MAX {
        return None;
    }
    Some(Home::Input(f, shndx))
}

use crate::util::demangle::demangle_versioned;

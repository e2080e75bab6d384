//! PE layout: which chunks go where, in lld's order, and every RVA.
//!
//! lld's `Writer`, as a sequence of phases (each a function below, called in order by
//! `layout`): live section chunks (plus commons, import thunks, import tables,
//! the pseudo-relocation table, MinGW's `.ctors`/`.dtors` sentinels, the export table and the
//! build-id debug directory) are binned into *partial sections* keyed by (name, characteristics)
//! — MinGW COMDAT `.text$f` joins `.text`, `.idata$*` chunks are sorted by library and member —
//! then partial sections become output sections (`.text$x` → `.text`, `.ctors.65535` →
//! `.ctors`), lld's default merges apply (`.idata`, `.xdata`, `.CRT`, `.ctors`, `.dtors`,
//! `.edata` → `.rdata`; `.bss` → `.data`), discardable sections move to the end, and addresses
//! are assigned section by section. Base relocations are collected when `.reloc` is reached.

pub mod model;

use std::collections::BTreeMap;

use dtld_arch::coff_x86_64 as arch;

use super::config::{CoffConfig, DebugMode};
use super::exports::Export;
use super::idata;
use super::pseudoreloc::{self, PseudoReloc};
use super::symtab::{ChunkSrc, Def, Kind, Resolved, SymId, SymRef};
use crate::error::{Error, Result};
use model::{Chunk, ChunkKind, Layout, OutSec, BSS, CODE, DATA, DISCARD, R, W, X};

/// lld's `getOutputSectionName`.
fn output_name(name: &str) -> &str {
    let s = name.split('$').next().unwrap_or(name);
    // Bytes, not chars: a corrupt name may start with a multi-byte character.
    match s.bytes().skip(1).position(|b| b == b'.') {
        Some(p) => &s[..p + 1],
        None => s,
    }
}

/// lld's `shouldStripSectionSuffix` (MinGW COMDAT standard sections join the main partial).
fn strip_suffix(name: &str, comdat: bool, mingw: bool) -> bool {
    mingw && comdat && [".text$", ".data$", ".rdata$", ".pdata$", ".xdata$", ".eh_frame$"].iter().any(|p| name.starts_with(p))
}

fn align_to(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

/// The PE layout stage, as lld's `Writer::run` orders its phases: input chunks binned into
/// partial sections, synthetic import tables, sorting, output sections, the synthetic chunks
/// (import thunks, merged strings, local imports, debug directory, pseudo relocations, ctor
/// sentinels, exports), section merging and ordering, addresses (with base relocations), empty
/// sections removed, and the values that need addresses.
pub fn layout<'a>(config: &'a CoffConfig, r: &'a Resolved) -> Result<Layout<'a>> {
    let mut l = Layout::empty(config, r);
    let (mut osecs, pre) = predefined_sections();
    let Binned { mut partial, parent_key, merge_groups } = bin_input_chunks(&mut l);
    apply_icf(&mut l);
    force_data_sections(&mut partial);
    let mut has_idata = sort_idata(&mut partial, &parent_key);
    if has_idata || !l.dlls.is_empty() {
        // lld's addSyntheticIdata runs whenever there is any `.idata` (its null directory entry
        // terminates dlltool-style tables too).
        has_idata = true;
        add_import_tables(&mut l, &mut partial);
    }
    sort_partials(&l, &mut partial)?;
    let (import_dir, iat) = if has_idata { import_directory_ranges(&l, &partial) } else { (None, None) };
    for ((name, chars), v) in &partial {
        let out = output_name(name);
        let chars = if out == ".CRT" { DATA | R } else { *chars };
        let o = find_or_create(&mut osecs, out, chars);
        osecs[o].chunks.extend(v.iter().copied());
    }
    check_import_symbols(config, r)?;
    add_import_thunks(&mut l, &mut osecs[pre.text]);
    add_merged_strings(&mut l, &mut osecs[pre.rdata], merge_groups);
    add_local_imports(&mut l, &mut osecs[pre.rdata]);
    add_debug_directory(&mut l, &mut osecs[if config.mingw { pre.buildid } else { pre.rdata }]);
    super::guardcf::add_tables(&mut l, &mut osecs[pre.rdata]);
    let pseudo_sites = add_pseudo_relocs(&mut l, &mut osecs[pre.rdata])?;
    if config.mingw {
        add_ctor_sentinels(&mut l, &mut osecs, pre.ctors, pre.dtors);
    }
    add_export_table(&mut l, &mut osecs[pre.edata])?;
    // lld's writer, with the export table made: a scalar deleting destructor should not be
    // exported (its callers would delete with the DLL's allocator).
    for (_, id) in &l.r.exports {
        let name = l.r.symbols[*id].name;
        if name.starts_with("??_G") {
            l.config.diag.warn(&format!("export of deleting dtor: {}", super::demangle::display(name, l.config.demangle)));
        }
    }
    let pdata_chunks = &osecs[pre.pdata].chunks;
    let pdata_range = (pdata_chunks.first().copied(), pdata_chunks.last().copied());
    let merge = merge_rules(config, r)?;
    apply_merges(&mut osecs, &merge)?;
    order_output_sections(&mut l, osecs);
    assign_addresses(&mut l)?;
    remove_empty_sections(&mut l);
    l.import_dir = import_dir;
    l.iat = iat;
    l.pdata = match pdata_range {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    fill_address_values(&mut l, pseudo_sites);
    Ok(l)
}

/// Partial sections: (name, characteristics) → chunks, before they become output sections.
type Partial = BTreeMap<(String, u32), Vec<usize>>;

/// Indices in the output-section list of the predefined sections synthetic chunks go to.
struct Predefined {
    text: usize,
    rdata: usize,
    buildid: usize,
    pdata: usize,
    edata: usize,
    ctors: usize,
    dtors: usize,
}

/// The output section `name` with characteristics `chars`, created at the end if missing.
fn find_or_create(osecs: &mut Vec<OutSec>, name: &str, chars: u32) -> usize {
    if let Some(i) = osecs.iter().position(|o| o.name == name && o.chars == chars) {
        return i;
    }
    osecs.push(OutSec { name: name.to_string(), chars, chunks: Vec::new(), rva: 0, vsize: 0, raw_size: 0, file_off: 0, index: 0 });
    osecs.len() - 1
}

/// Predefined output sections, in link.exe's order.
fn predefined_sections() -> (Vec<OutSec>, Predefined) {
    let mut osecs: Vec<OutSec> = Vec::new();
    let text = find_or_create(&mut osecs, ".text", CODE | R | X);
    find_or_create(&mut osecs, ".bss", BSS | R | W);
    let rdata = find_or_create(&mut osecs, ".rdata", DATA | R);
    let buildid = find_or_create(&mut osecs, ".buildid", DATA | R);
    find_or_create(&mut osecs, ".data", DATA | R | W);
    let pdata = find_or_create(&mut osecs, ".pdata", DATA | R);
    find_or_create(&mut osecs, ".idata", DATA | R);
    let edata = find_or_create(&mut osecs, ".edata", DATA | R);
    find_or_create(&mut osecs, ".didat", DATA | R);
    find_or_create(&mut osecs, ".rsrc", DATA | R);
    find_or_create(&mut osecs, ".reloc", DATA | DISCARD | R);
    let ctors = find_or_create(&mut osecs, ".ctors", DATA | R | W);
    let dtors = find_or_create(&mut osecs, ".dtors", DATA | R | W);
    (osecs, Predefined { text, rdata, buildid, pdata, edata, ctors, dtors })
}

/// What `bin_input_chunks` produced.
struct Binned {
    partial: Partial,
    /// Per chunk: "parent/objname", for sorting `.idata$*` (empty for other chunks).
    parent_key: Vec<String>,
    /// String literals to tail-merge, by alignment (lld's `MergeChunk` instances).
    merge_groups: BTreeMap<u32, Vec<usize>>,
}

/// Every live section and common symbol of the objects, in file order, becomes a chunk in a
/// partial section keyed by (name, characteristics); MinGW COMDAT `.text$f` joins `.text`.
fn bin_input_chunks(l: &mut Layout) -> Binned {
    let (config, r) = (l.config, l.r);
    let mut partial: Partial = BTreeMap::new();
    let mut parent_key: Vec<String> = Vec::new();
    let mut merge_groups: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &f in &r.obj_order {
        let file = &r.files[f];
        let Kind::Obj(obj) = &file.kind else { continue };
        for src in &file.chunks {
            let (name, chars, c) = match *src {
                ChunkSrc::Sec(k) => {
                    if !file.live[k as usize] {
                        continue;
                    }
                    let s = &obj.sections[k as usize];
                    let c = l.add_chunk(ChunkKind::Section { file: f, sec: k }, s.size, s.align, !s.is_bss());
                    l.sec_chunk[f][k as usize] = Some(c);
                    if super::merge::is_mergeable(config, file, obj, k) {
                        merge_groups.entry(s.align).or_default().push(c);
                        continue;
                    }
                    let name = if strip_suffix(s.name, s.is_comdat(), config.mingw) { s.name.split('$').next().unwrap() } else { s.name };
                    (name.to_string(), s.out_chars(), c)
                }
                ChunkSrc::Common(idx) => {
                    let size = obj.symbols[idx as usize].value;
                    let mut align = (size as u64).next_power_of_two().min(32) as u32;
                    // `/aligncomm:` raises it (lld's CommonChunk::setAlignment).
                    if let Some(&a) = r.align_comm.get(obj.symbols[idx as usize].name) {
                        align = align.max(a);
                    }
                    let c = l.add_chunk(ChunkKind::Common { file: f, sym: idx }, size, align, false);
                    l.common_chunk.push((f, idx, c));
                    (".bss".to_string(), BSS | R | W, c)
                }
            };
            while parent_key.len() < c {
                parent_key.push(String::new());
            }
            parent_key.push(format!("{}/{}", file.parent, file.obj_name));
            partial.entry((name, chars)).or_default().push(c);
        }
    }
    parent_key.resize(l.chunks.len(), String::new());
    Binned { partial, parent_key, merge_groups }
}

/// Sections ICF folded take the address of the one that stays, which gets the largest
/// alignment of its class (lld's `SectionChunk::replace`).
fn apply_icf(l: &mut Layout) {
    let r = l.r;
    for (&(f, k), &(kf, kk)) in &r.icf_folded {
        let c = l.sec_chunk[kf][kk as usize];
        l.sec_chunk[f][k as usize] = c;
        if let Some(c) = c {
            l.chunks[c].align = l.chunks[c].align.max(r.obj(f).sections[k as usize].align);
        }
    }
}

/// `.rsrc`, `.edata` and `.idata` partial sections are forced to DATA|R.
fn force_data_sections(partial: &mut Partial) {
    for prefix in [".rsrc", ".edata", ".idata"] {
        let keys: Vec<(String, u32)> =
            partial.keys().filter(|(n, c)| (n == prefix || n.starts_with(&format!("{prefix}$"))) && *c != DATA | R).cloned().collect();
        for k in keys {
            let v = partial.remove(&k).unwrap();
            partial.entry((k.0, DATA | R)).or_default().extend(v);
        }
    }
}

/// GNU import libraries: `.idata$*` chunks grouped by library, sorted by member name. Returns
/// whether any `.idata` chunk exists.
fn sort_idata(partial: &mut Partial, parent_key: &[String]) -> bool {
    let mut has_idata = false;
    for ((n, _), v) in partial.iter_mut() {
        if n.starts_with(".idata") {
            has_idata |= !v.is_empty();
            v.sort_by(|&a, &b| parent_key[a].cmp(&parent_key[b]));
        }
    }
    has_idata
}

/// Synthetic import tables for short imports (lld's `IdataContents`): directory entries, lookup
/// and address tables, hint/name entries and DLL names as `.idata$2`..`.idata$7`.
fn add_import_tables(l: &mut Layout, partial: &mut Partial) {
    let r = l.r;
    let dlls = std::mem::take(&mut l.dlls);
    let mut dirs = Vec::new();
    let mut lookups = Vec::new();
    let mut addrs = Vec::new();
    let mut hints = Vec::new();
    let mut names = Vec::new();
    for (d, g) in dlls.iter().enumerate() {
        for &f in &g.entries {
            let imp = idata::import(r, f);
            lookups.push(l.add_chunk(ChunkKind::Lookup(f), 8, 8, true));
            let a = l.add_chunk(ChunkKind::Address(f), 8, 8, true);
            l.address_chunk.push((f, a));
            addrs.push(a);
            if let Some(h) = idata::hint_name(imp) {
                hints.push(l.add_chunk(ChunkKind::HintName(f), h.len() as u32, 2, true));
            }
        }
        lookups.push(l.add_chunk(ChunkKind::NullEntry, 8, 8, true));
        addrs.push(l.add_chunk(ChunkKind::NullEntry, 8, 8, true));
        let n = l.add_chunk(ChunkKind::DllName(d), g.dll.len() as u32 + 1, 1, true);
        l.dll_name_chunk.push(n);
        names.push(n);
        dirs.push(l.add_chunk(ChunkKind::ImportDir(d), 20, 4, true));
    }
    dirs.push(l.add_chunk(ChunkKind::NullDir, 20, 4, true));
    l.dlls = dlls;
    for (n, v) in [(".idata$2", dirs), (".idata$4", lookups), (".idata$5", addrs), (".idata$6", hints), (".idata$7", names)] {
        if !v.is_empty() || n != ".idata$6" {
            partial.entry((n.to_string(), DATA | R)).or_default().extend(v);
        }
    }
}

/// `/order:@file` or the call graph (lld's sortSections), then `.CRT` chunks in section order.
fn sort_partials(l: &Layout, partial: &mut Partial) -> Result<()> {
    let (config, r) = (l.config, l.r);
    if config.order_file.is_some() && config.call_graph_ordering_file.is_some() {
        config.diag.error("/order and /call-graph-order-file may not be used together");
    }
    let mut order = super::order::read_order_file(config, r)?;
    // The call graph's order replaces `/order`'s (which turns it off), as lld's sortSections.
    order.extend(super::cgsort::order(config, r)?);
    let sec_key = |chunks: &[Chunk], c: usize| match chunks[c].kind {
        ChunkKind::Section { file, sec } => Some((file, sec)),
        _ => None,
    };
    if !order.is_empty() {
        for v in partial.values_mut() {
            v.sort_by_key(|&c| sec_key(&l.chunks, c).map_or(0, |(f, k)| super::order::priority(&order, r, f, k)));
        }
    }
    for ((name, _), v) in partial.iter_mut() {
        if output_name(name) == ".CRT" {
            if config.verbose {
                config.diag.log(&format!("Processing section {name} -> .CRT"));
            }
            super::order::sort_crt(v, |c| sec_key(&l.chunks, c).map(|(f, k)| (f, k + 1)));
            if config.verbose {
                for &c in v.iter() {
                    if let Some((f, k)) = sec_key(&l.chunks, c) {
                        config.diag.log(&format!("  {}: {} ({})", r.files[f].name, r.obj(f).sections[k as usize].name, k + 1));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The import directory (`.idata$2`) and IAT (`.idata$5`): first chunk and total size each.
#[allow(clippy::type_complexity)]
fn import_directory_ranges(l: &Layout, partial: &Partial) -> (Option<(usize, u32)>, Option<(usize, u32)>) {
    let range = |name: &str| {
        let v = partial.get(&(name.to_string(), DATA | R))?;
        v.first().map(|&c| (c, v.iter().map(|&c| l.chunks[c].size).sum::<u32>()))
    };
    (range(".idata$2"), range(".idata$5"))
}

/// lld's createImportTables and appendImportThunks: an import's symbols must still be its own.
fn check_import_symbols(config: &CoffConfig, r: &Resolved) -> Result<()> {
    for &f in &r.imports {
        let (imp, thunk) = r.import_syms.get(&f).copied().unwrap_or((None, None));
        if let Some(id) = imp.filter(|&id| r.symbols[id].def != Def::ImportData(f)) {
            return Err(Error::new(format!("{} was replaced", super::demangle::display(r.symbols[id].name, config.demangle))));
        }
        if let Some(id) = thunk.filter(|&id| r.symbols[id].def != Def::ImportThunk(f)) {
            return Err(Error::new(format!("{} was replaced", super::demangle::display(r.symbols[id].name, config.demangle))));
        }
    }
    Ok(())
}

/// Import thunks (`jmp *__imp_f`) of code imports still used, at the end of `.text`.
fn add_import_thunks(l: &mut Layout, text: &mut OutSec) {
    let r = l.r;
    for &f in &r.imports {
        let imp = idata::import(r, f);
        if imp.kind != super::implib::ImportKind::Code {
            continue;
        }
        if r.find(&imp.symbol).map(|id| r.symbols[id].def) != Some(Def::ImportThunk(f)) || r.gc_dead_thunks.contains(&f) {
            continue;
        }
        let c = l.add_chunk(ChunkKind::ImportThunk(f), arch::IMPORT_THUNK_SIZE as u32, 16, true);
        l.thunk_chunk.push((f, c));
        text.chunks.push(c);
    }
}

/// Mergeable string literals, tail-merged into one chunk per alignment in `.rdata`.
fn add_merged_strings(l: &mut Layout, rdata: &mut OutSec, merge_groups: BTreeMap<u32, Vec<usize>>) {
    let r = l.r;
    for (align, members) in merge_groups {
        let data: Vec<&[u8]> = members
            .iter()
            .map(|&c| match l.chunks[c].kind {
                ChunkKind::Section { file, sec } => r.obj(file).sections[sec as usize].data,
                _ => &[][..],
            })
            .collect();
        let (bytes, offsets) = super::merge::tail_merge(&data, align);
        let c = l.add_chunk(ChunkKind::Merge(l.merged.len()), bytes.len() as u32, align, true);
        rdata.chunks.push(c);
        l.merged.push((bytes, members.into_iter().zip(offsets).collect()));
    }
}

/// `__imp_` pointers to local definitions (lld's `LocalImportChunk`), in `.rdata`.
fn add_local_imports(l: &mut Layout, rdata: &mut OutSec) {
    for &id in &l.r.local_imports {
        let c = l.add_chunk(ChunkKind::LocalImport(id), 8, 8, true);
        l.local_import_chunk.push((id, c));
        rdata.chunks.push(c);
    }
}

/// The debug directory and its CodeView record, when a build id, DWARF or a PDB asks for it.
fn add_debug_directory(l: &mut Layout, sec: &mut OutSec) {
    let config = l.config;
    let pdb_path = super::pdb::cv_path(config);
    if config.build_id || config.debug == DebugMode::Dwarf || pdb_path.is_some() {
        let d = l.add_chunk(ChunkKind::DebugDir, 28, 4, true);
        // CodeView record: "RSDS", GUID, age, the PDB path and its NUL.
        let cv_size = 25 + pdb_path.map_or(0, |p| p.len() as u32);
        let cv = l.add_chunk(ChunkKind::CvRecord, cv_size, 4, true);
        sec.chunks.push(d);
        sec.chunks.push(cv);
        l.debug_dir = Some((d, cv));
    }
}

/// A runtime pseudo relocation site: (chunk, offset in it, symbol, width in bits).
type PseudoSite = (usize, u32, SymId, u32);

/// MinGW runtime pseudo relocations: every relocation against an auto-imported symbol is a
/// site (their RVAs are known after address assignment), and the table goes to `.rdata`.
fn add_pseudo_relocs(l: &mut Layout, rdata: &mut OutSec) -> Result<Vec<PseudoSite>> {
    let (config, r) = (l.config, l.r);
    let mut pseudo_sites: Vec<PseudoSite> = Vec::new();
    let (mut errors, mut late) = (Vec::new(), Vec::new());
    if !(config.auto_import || config.pseudo_relocs) {
        return Ok(pseudo_sites);
    }
    for &f in &r.obj_order {
        let file = &r.files[f];
        let Kind::Obj(obj) = &file.kind else { continue };
        for (k, s) in obj.sections.iter().enumerate() {
            let Some(c) = l.sec_chunk[f][k] else { continue };
            for rel in s.relocs {
                let idx = rel.symbol_table_index.get(object::LittleEndian) as usize;
                let SymRef::Global(id) = file.syms[idx] else { continue };
                if !r.symbols[id].pseudo_reloc {
                    continue;
                }
                let ty = rel.typ.get(object::LittleEndian);
                let bits = arch::kind(ty).map(arch::pseudo_reloc_bits).unwrap_or(0);
                if bits == 0 {
                    errors.push(format!("unable to automatically import from {} with relocation type {} in {}", r.symbols[id].name, arch::name(ty), file.name));
                    continue;
                }
                if bits < 64 {
                    config.diag.warn(&format!("runtime pseudo relocation in {} against symbol {} is too narrow (only {bits} bits wide); this can fail at runtime depending on memory layout", file.name, r.symbols[id].name));
                }
                if !config.pseudo_relocs {
                    late.push(format!("automatic dllimport of {} in {} requires pseudo relocations", r.symbols[id].name, file.name));
                }
                pseudo_sites.push((c, rel.virtual_address.get(object::LittleEndian), id, bits));
            }
        }
    }
    // lld's createRuntimePseudoRelocs: every site is an error without pseudo relocations, and
    // with them the MinGW runtime's relocator must be there to apply them.
    errors.extend(late);
    if config.pseudo_relocs && !pseudo_sites.is_empty() && r.find("_pei386_runtime_relocator").is_none() {
        errors.push("output image has runtime pseudo relocations, but the function _pei386_runtime_relocator is missing; it is needed for fixing the relocations at runtime".into());
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    let t = l.add_chunk(ChunkKind::PseudoTable, pseudoreloc::table_size(pseudo_sites.len()), 4, true);
    let e = l.add_chunk(ChunkKind::Empty, 0, 1, false);
    rdata.chunks.push(t);
    rdata.chunks.push(e);
    l.pseudo_chunk = Some((t, e));
    Ok(pseudo_sites)
}

/// MinGW: `-1` head and `0` tail sentinels around `.ctors` and `.dtors`.
fn add_ctor_sentinels(l: &mut Layout, osecs: &mut [OutSec], ctors: usize, dtors: usize) {
    let ch = l.add_chunk(ChunkKind::Sentinel(u64::MAX), 8, 8, true);
    let ce = l.add_chunk(ChunkKind::Sentinel(0), 8, 8, true);
    let dh = l.add_chunk(ChunkKind::Sentinel(u64::MAX), 8, 8, true);
    let de = l.add_chunk(ChunkKind::Sentinel(0), 8, 8, true);
    osecs[ctors].chunks.insert(0, ch);
    osecs[ctors].chunks.push(ce);
    osecs[dtors].chunks.insert(0, dh);
    osecs[dtors].chunks.push(de);
    l.ctor_chunks = Some((ch, dh));
}

/// The export table, with ordinals assigned, unless an object brought its own `.edata`.
fn add_export_table(l: &mut Layout, edata: &mut OutSec) -> Result<()> {
    let r = l.r;
    if !edata.chunks.is_empty() {
        // An object's own `.edata` is the export directory (write.rs points at it).
        if !l.config.exports.is_empty() {
            l.config.diag.warn("literal .edata sections override exports");
        }
        return Ok(());
    }
    if r.exports.is_empty() {
        return Ok(());
    }
    let mut ex = Vec::new();
    for (e, _) in &r.exports {
        ex.push(Export {
            name: e.table_name().to_string(),
            ordinal: e.ordinal,
            rva: 0,
            forward: e.forward_to.clone(),
            data: e.data,
            private: e.private,
            noname: e.noname,
        });
    }
    super::exports::assign_ordinals(&mut ex).map_err(Error::new)?;
    let size = super::exports::edata_size(&l.dll_name, &ex);
    let c = l.add_chunk(ChunkKind::Edata, size, 4, true);
    edata.chunks.push(c);
    l.edata_chunk = Some(c);
    l.exports = ex;
    Ok(())
}

/// lld's `config->merge` map: the user's `/merge:` rules from the command line, lld's defaults
/// (which give way to them), then `.drectve` (read with the files, after the driver added the
/// defaults); every conflict warns and the first rule stays.
fn merge_rules(config: &CoffConfig, r: &Resolved) -> Result<BTreeMap<String, String>> {
    let mut merge: BTreeMap<String, String> = BTreeMap::new();
    let mut defaults: Vec<(&str, &str)> = vec![
        (".idata", ".rdata"),
        (".didat", ".rdata"),
        (".edata", ".rdata"),
        (".xdata", ".rdata"),
        (".00cfg", ".rdata"),
        (".voltbl", ".rdata"),
        (".bss", ".data"),
    ];
    if config.mingw {
        defaults.extend([(".ctors", ".rdata"), (".dtors", ".rdata"), (".CRT", ".rdata")]);
    }
    let ncmd = config.merges.len().min(r.merges.len());
    let cmd = r.merges[..ncmd].iter().map(|(a, b)| (a.as_str(), b.as_str()));
    let drectve = r.merges[ncmd..].iter().map(|(a, b)| (a.as_str(), b.as_str()));
    for (from, to) in cmd.chain(defaults.iter().copied()).chain(drectve) {
        if from == ".rsrc" || to == ".rsrc" || from == ".reloc" || to == ".reloc" {
            let which = if from == ".rsrc" || to == ".rsrc" { ".rsrc" } else { ".reloc" };
            return Err(Error::new(format!("/merge: cannot merge '{which}' with any section")));
        }
        match merge.get(from) {
            Some(existing) if existing != to => config.diag.warn(&format!("{from}={to}: already merged into {existing}")),
            Some(_) => {}
            None => {
                merge.insert(from.to_string(), to.to_string());
            }
        }
    }
    Ok(merge)
}

/// lld's mergeSections: applied in name order, each rule followed to its final target.
fn apply_merges(osecs: &mut [OutSec], merge: &BTreeMap<String, String>) -> Result<()> {
    for (from, first) in merge {
        if from == first {
            continue;
        }
        let mut to = first.clone();
        let mut seen = std::collections::HashSet::new();
        loop {
            if !seen.insert(to.clone()) {
                return Err(Error::new(format!("/merge: cycle found for section '{from}'")));
            }
            match merge.get(&to) {
                Some(next) => to = next.clone(),
                None => break,
            }
        }
        let Some(fi) = osecs.iter().position(|o| &o.name == from) else { continue };
        match osecs.iter().position(|o| o.name == to) {
            Some(ti) if ti != fi => {
                let moved = std::mem::take(&mut osecs[fi].chunks);
                osecs[ti].chunks.extend(moved);
            }
            Some(_) => {}
            None => osecs[fi].name = to,
        }
    }
    Ok(())
}

/// `/section:` permissions, unused sections removed, discardable sections (DWARF last) and
/// `.rsrc` moved to the end; the final list goes into the layout.
fn order_output_sections(l: &mut Layout, mut osecs: Vec<OutSec>) {
    // `/section:name,attrs` (lld's `setSectionPermissions`).
    for (name, perm) in &l.r.section_attrs {
        for o in osecs.iter_mut().filter(|o| &o.name == name) {
            o.chars = (o.chars & !0xFE00_0000) | perm;
        }
    }
    // removeUnusedSections, then discardable sections to the end.
    osecs.retain(|o| !o.chunks.is_empty() || o.name == ".reloc");
    let rank = |o: &OutSec| -> u8 {
        if o.chars & DISCARD != 0 {
            if o.name.starts_with(".debug_") {
                3
            } else {
                2
            }
        } else if o.name == ".rsrc" {
            1
        } else {
            0
        }
    };
    osecs.sort_by_key(|o| rank(o));
    if !l.config.relocatable() {
        osecs.retain(|o| o.name != ".reloc" || !o.chunks.is_empty());
    }
    for (i, o) in osecs.iter().enumerate() {
        for &c in &o.chunks {
            l.chunks[c].osec = i;
        }
    }
    l.osecs = osecs;
}

/// RVAs and file offsets, section by section; base relocations are collected when `.reloc`
/// is reached. The header size counts every section header, `.reloc` included; empty sections
/// are removed afterwards (as lld does, so the header size stays).
fn assign_addresses(l: &mut Layout) -> Result<()> {
    let config = l.config;
    let has_reloc = config.relocatable();
    let nsec = l.osecs.len() as u32;
    l.size_of_headers = align_to((120 + 4 + 20 + 112 + 16 * 8 + 40 * nsec) as u64, config.file_align as u64) as u32;
    let mut file_off = l.size_of_headers as u64;
    let mut rva = align_to(l.size_of_headers as u64, config.section_align as u64);
    for i in 0..l.osecs.len() {
        if l.osecs[i].name == ".reloc" && l.osecs[i].chars & DISCARD != 0 && has_reloc {
            let entries = collect_baserels(l);
            l.reloc = super::baserel::build(&entries);
            if !l.reloc.is_empty() {
                let c = l.add_chunk(ChunkKind::Reloc, l.reloc.len() as u32, 4, true);
                l.chunks[c].osec = i;
                l.osecs[i].chunks = vec![c];
                l.reloc_chunk = Some(c);
            }
        }
        let (mut vsize, mut raw) = (0u64, 0u64);
        l.osecs[i].rva = rva as u32;
        for k in 0..l.osecs[i].chunks.len() {
            let c = l.osecs[i].chunks[k];
            vsize = align_to(vsize, l.chunks[c].align as u64);
            l.chunks[c].rva = (rva + vsize) as u32;
            vsize += l.chunks[c].size as u64;
            if l.chunks[c].has_data {
                raw = align_to(vsize, config.file_align as u64);
            }
        }
        if vsize > u32::MAX as u64 {
            return Err(Error::new(format!("section larger than 4 GiB: {}", l.osecs[i].name)));
        }
        l.osecs[i].vsize = vsize as u32;
        l.osecs[i].raw_size = raw as u32;
        if raw != 0 {
            l.osecs[i].file_off = file_off as u32;
        }
        rva += align_to(vsize, config.section_align as u64);
        file_off += align_to(raw, config.file_align as u64);
    }
    // Merged string literals live inside their merge chunk.
    for k in 0..l.merged.len() {
        let Some(mc) = l.chunks.iter().position(|c| c.kind == ChunkKind::Merge(k)) else { continue };
        let (rva, osec) = (l.chunks[mc].rva, l.chunks[mc].osec);
        for i in 0..l.merged[k].1.len() {
            let (c, off) = l.merged[k].1[i];
            l.chunks[c].rva = rva + off;
            l.chunks[c].osec = osec;
        }
    }
    l.size_of_image = align_to(rva, config.section_align as u64) as u32;
    l.file_size = file_off as u32;
    Ok(())
}

/// lld's removeEmptySections, then the final 1-based section indices.
fn remove_empty_sections(l: &mut Layout) {
    let keep: Vec<bool> = l.osecs.iter().map(|o| o.vsize != 0).collect();
    let mut remap = vec![usize::MAX; l.osecs.len()];
    let mut n = 0;
    for (i, k) in keep.iter().enumerate() {
        if *k {
            remap[i] = n;
            n += 1;
        }
    }
    let mut idx = 0;
    l.osecs.retain(|_| {
        idx += 1;
        keep[idx - 1]
    });
    for c in &mut l.chunks {
        if c.osec != usize::MAX {
            c.osec = remap[c.osec];
        }
    }
    for (i, o) in l.osecs.iter_mut().enumerate() {
        o.index = i as u16 + 1;
    }
}

/// Pseudo relocation entries and export RVAs, now that addresses are known.
fn fill_address_values(l: &mut Layout, pseudo_sites: Vec<PseudoSite>) {
    let r = l.r;
    for (c, off, id, bits) in pseudo_sites {
        if let Some(s) = l.sym_rva(id) {
            l.pseudo.push(PseudoReloc { sym_rva: s as u32, target_rva: l.chunks[c].rva + off, bits });
        }
    }
    let mut ex = std::mem::take(&mut l.exports);
    let by_name = r.exports_by_table_name();
    for e in &mut ex {
        if e.forward.is_some() {
            continue;
        }
        let id = by_name.get(e.name.as_str()).map(|&k| r.exports[k].1);
        e.rva = id.and_then(|id| l.sym_rva(id)).unwrap_or(0) as u32;
    }
    l.exports = ex;
}

/// Every (RVA, type) needing a base relocation, section by section (lld's `addBaserels`).
fn collect_baserels(l: &Layout) -> Vec<(u32, u16)> {
    let mut v = Vec::new();
    for o in &l.osecs {
        if o.chars & DISCARD != 0 {
            continue;
        }
        for &c in &o.chunks {
            match l.chunks[c].kind {
                ChunkKind::Section { file, sec } => {
                    let obj = l.r.obj(file);
                    for rel in obj.sections[sec as usize].relocs {
                        let Some(k) = arch::kind(rel.typ.get(object::LittleEndian)) else { continue };
                        let Some(t) = arch::baserel_type(k) else { continue };
                        let idx = rel.symbol_table_index.get(object::LittleEndian) as usize;
                        if let Some((_, _, false)) = l.target(file, idx) {
                            v.push((l.chunks[c].rva + rel.virtual_address.get(object::LittleEndian), t))
                        }
                    }
                }
                ChunkKind::LocalImport(_) => v.push((l.chunks[c].rva, 10)),
                _ => {}
            }
        }
    }
    v
}

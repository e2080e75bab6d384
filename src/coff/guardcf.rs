//! Control Flow Guard tables (`/guard:cf`, MinGW `--guard-cf`), as lld's
//! `Writer::createGuardCFTables` builds them.
//!
//! It exists because the tables need what only the layout knows (the chunk each listed symbol
//! lives in, ICF's replacements, the import thunks) and give the linker's `__guard_*` symbols
//! their values. The stage runs in `layout` once the input chunks and import thunks exist and
//! before addresses are assigned:
//!
//! - an object compiled with guard CF (`@feat.00` bit 0x800) lists its address-taken functions
//!   in `.gfids$y`, address-taken IAT entries in `.giats$y` and longjmp targets in `.gljmp$y`
//!   (with bit 0x4000, EH continuation targets in `.gehcont$y`): sections of 32-bit symbol-table
//!   indices that never reach the output (`resolve` keeps them out of the file's chunks);
//! - in any other object every live relocation to a function in an executable section (or to an
//!   import thunk) is taken as taking its address;
//! - the entry point and exported functions are address-taken too.
//!
//! Each table is a set of (chunk, offset) written as sorted RVAs (`write`); address-taken
//! functions get 16-byte alignment. `check_load_config` is lld's `checkLoadConfigGuardData`:
//! the load configuration must point at what was made here.

use std::collections::BTreeSet;

use object::LittleEndian as LE;

use super::layout::model::{ChunkKind, Entry, GuardValue, Layout, OutSec};
use super::symtab::{ChunkSrc, Def, FileId, Kind, SymId, SymRef, Synth};

/// `GuardFlags` bits (winnt.h `IMAGE_GUARD_*`).
const CF_INSTRUMENTED: u64 = 0x100;
const CF_FUNCTION_TABLE_PRESENT: u64 = 0x400;
const CF_LONGJUMP_TABLE_PRESENT: u64 = 0x1_0000;
const EH_CONTINUATION_TABLE_PRESENT: u64 = 0x40_0000;

/// `@feat.00` bits: the object has guard CF tables, and EH continuation tables.
const FEAT_GUARD_CF: u32 = 0x800;
const FEAT_GUARD_EHCONT: u32 = 0x4000;

/// The sections of symbol-table indices lld reads for the tables and never outputs.
pub fn is_guard_section(name: &str) -> bool {
    matches!(name, ".gfids$y" | ".giats$y" | ".gljmp$y" | ".gehcont$y")
}

/// The object's `@feat.00` value (0 without one).
fn feat00(obj: &super::object::ObjFile) -> u32 {
    obj.symbols.iter().rfind(|s| !s.is_aux && s.is_absolute() && s.name == "@feat.00").map_or(0, |s| s.value)
}

/// The tables being collected.
#[derive(Default)]
struct Sets {
    fids: BTreeSet<Entry>,
    iat: BTreeSet<Entry>,
    longjmp: BTreeSet<Entry>,
    ehcont: BTreeSet<Entry>,
}

/// lld's `createGuardCFTables`: the tables go to `.rdata` (after the debug directory) and the
/// `__guard_*` symbols get their values. Without `/guard:cf`, an object built with guard CF
/// still marks the image instrumented (`__guard_flags`), as MSVC does.
pub fn add_tables(l: &mut Layout, rdata: &mut OutSec) {
    let (config, r) = (l.config, l.r);
    let mut values = Vec::new();
    let set_abs = |values: &mut Vec<(SymId, GuardValue)>, name: &str, v: u64| {
        if let Some(id) = r.find(name).filter(|&id| matches!(r.symbols[id].def, Def::Absolute(_))) {
            values.push((id, GuardValue::Absolute(v)));
        }
    };
    if !config.guard_cf {
        if r.obj_order.iter().any(|&f| matches!(&r.files[f].kind, Kind::Obj(o) if feat00(o) & FEAT_GUARD_CF != 0)) {
            set_abs(&mut values, "__guard_flags", CF_INSTRUMENTED);
        }
        l.guard.values = values;
        return;
    }
    let mut sets = Sets::default();
    for &f in &r.obj_order {
        let Kind::Obj(obj) = &r.files[f].kind else { continue };
        let feat = feat00(obj);
        if feat & FEAT_GUARD_CF != 0 {
            sets.fids.extend(listed(l, f, ".gfids$y"));
            sets.iat.extend(listed(l, f, ".giats$y"));
            // lld reads `.giats$y` a second time (for delay-load thunks dtld does not make):
            // its warnings come twice.
            listed(l, f, ".giats$y");
            sets.longjmp.extend(listed(l, f, ".gljmp$y"));
        } else {
            relocation_targets(l, f, &mut sets.fids);
        }
        if feat & FEAT_GUARD_EHCONT != 0 {
            sets.ehcont.extend(listed(l, f, ".gehcont$y"));
        }
    }
    let exported = r.exports.iter().filter(|(e, _)| e.forward_to.is_none()).map(|(_, id)| *id);
    for id in r.entry.into_iter().chain(exported) {
        sets.fids.extend(address_taken(l, id));
    }
    for &(c, _) in &sets.fids {
        if let Some(c) = c {
            l.chunks[c].align = l.chunks[c].align.max(16);
        }
    }
    let mut flags = CF_INSTRUMENTED | CF_FUNCTION_TABLE_PRESENT;
    add_table(l, rdata, sets.fids, ("__guard_fids_table", "__guard_fids_count"), &mut values);
    add_table(l, rdata, sets.iat, ("__guard_iat_table", "__guard_iat_count"), &mut values);
    if config.guard_longjmp {
        add_table(l, rdata, sets.longjmp, ("__guard_longjmp_table", "__guard_longjmp_count"), &mut values);
        flags |= CF_LONGJUMP_TABLE_PRESENT;
    }
    if config.guard_ehcont {
        add_table(l, rdata, sets.ehcont, ("__guard_eh_cont_table", "__guard_eh_cont_count"), &mut values);
        flags |= EH_CONTINUATION_TABLE_PRESENT;
    }
    set_abs(&mut values, "__guard_flags", flags);
    l.guard.values = values;
}

/// lld's `maybeAddRVATable`: a non-empty set becomes a table chunk of 4-byte RVAs; its symbol
/// points at it and the count symbol gets the number of entries.
fn add_table(l: &mut Layout, rdata: &mut OutSec, set: BTreeSet<Entry>, (table, count): (&str, &str), values: &mut Vec<(SymId, GuardValue)>) {
    if set.is_empty() {
        return;
    }
    let r = l.r;
    let n = set.len();
    let c = l.add_chunk(ChunkKind::GuardTable(l.guard.tables.len()), 4 * n as u32, 1, true);
    rdata.chunks.push(c);
    l.guard.tables.push(set.into_iter().collect());
    if let Some(id) = r.find(table) {
        values.push((id, GuardValue::Table(c)));
    }
    if let Some(id) = r.find(count).filter(|&id| matches!(r.symbols[id].def, Def::Absolute(_))) {
        values.push((id, GuardValue::Absolute(n as u64)));
    }
}

/// lld's `getSymbolsFromSections` for the live sections named `name` of object `f`: the live
/// symbols their indices name, with lld's warnings for a malformed section or index.
fn listed(l: &Layout, f: FileId, name: &str) -> Vec<Entry> {
    let (r, diag) = (l.r, &l.config.diag);
    let file = &r.files[f];
    let obj = r.obj(f);
    let mut out = Vec::new();
    for &k in &file.guard_sections {
        let s = &obj.sections[k as usize];
        if s.name != name || !file.live.get(k as usize).copied().unwrap_or(false) {
            continue;
        }
        if !s.data.len().is_multiple_of(4) {
            diag.warn(&format!("ignoring {name} symbol table index section in object {}", file.name));
            continue;
        }
        for w in s.data.chunks_exact(4) {
            let idx = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize;
            match file.syms.get(idx) {
                None => diag.warn(&format!("ignoring invalid symbol table index in section {name} in object {}", file.name)),
                Some(&SymRef::Global(id)) => out.extend(symbol_entry(l, id)),
                Some(&SymRef::Local { sec, value }) => out.extend(section_chunk(l, f, sec).map(|c| (Some(c), value))),
                Some(&SymRef::Absolute(v)) => out.push((None, (v as u64).wrapping_sub(l.image_base) as u32)),
                Some(SymRef::None) => {}
            }
        }
    }
    out
}

/// The chunk of section `sec` (1-based) of file `f`, through ICF's replacement; `None` when the
/// section is not in the output.
fn section_chunk(l: &Layout, f: FileId, sec: u32) -> Option<usize> {
    l.sec_chunk[f].get((sec as usize).checked_sub(1)?).copied().flatten()
}

/// lld's `addSymbolToRVASet` for a live defined symbol: its chunk and offset.
fn symbol_entry(l: &Layout, id: SymId) -> Option<Entry> {
    let r = l.r;
    match r.symbols[id].def {
        Def::Undefined | Def::Lazy(..) | Def::Bitcode(..) => None,
        Def::Regular(f, i) => l.sym_chunk(id).map(|c| (Some(c), r.obj(f).symbols[i as usize].value)),
        Def::Absolute(_) | Def::Synthetic(Synth::ImageBase) => l.sym_rva(id).map(|v| (None, v as u32)),
        _ => l.sym_chunk(id).map(|c| (Some(c), 0)),
    }
}

/// lld's `markSymbolsWithRelocations`: every relocation of a live section of object `f` makes
/// its target address-taken if it is a function.
fn relocation_targets(l: &Layout, f: FileId, fids: &mut BTreeSet<Entry>) {
    let file = &l.r.files[f];
    let obj = l.r.obj(f);
    for src in &file.chunks {
        let ChunkSrc::Sec(k) = *src else { continue };
        if !file.live.get(k as usize).copied().unwrap_or(false) {
            continue;
        }
        for rel in obj.sections[k as usize].relocs {
            let idx = rel.symbol_table_index.get(LE) as usize;
            let e = match file.syms.get(idx) {
                Some(&SymRef::Global(id)) => address_taken(l, id),
                Some(&SymRef::Local { sec, value }) => function_entry(l, f, sec, value, obj.symbols[idx].typ),
                _ => None,
            };
            fids.extend(e);
        }
    }
}

/// lld's `maybeAddAddressTakenFunction`: import thunks, and functions defined in executable
/// sections; any other symbol is data or has no address.
fn address_taken(l: &Layout, id: SymId) -> Option<Entry> {
    match l.r.symbols[id].def {
        Def::ImportThunk(_) => l.sym_chunk(id).map(|c| (Some(c), 0)),
        Def::Regular(f, i) => {
            let s = &l.r.obj(f).symbols[i as usize];
            function_entry(l, f, u32::try_from(s.section).ok()?, s.value, s.typ)
        }
        _ => None,
    }
}

/// A symbol of COFF type function at `value` in section `sec` (1-based) of file `f`, if that
/// section (or its ICF replacement) is live and executable.
fn function_entry(l: &Layout, f: FileId, sec: u32, value: u32, typ: u16) -> Option<Entry> {
    // The complex type (bits 4-5) IMAGE_SYM_DTYPE_FUNCTION.
    if (typ & 0xf0) >> 4 != 2 {
        return None;
    }
    let c = section_chunk(l, f, sec)?;
    let ChunkKind::Section { file, sec } = l.chunks[c].kind else { return None };
    (l.r.obj(file).sections[sec as usize].chars & object::pe::IMAGE_SCN_MEM_EXECUTE != 0).then_some((Some(c), value))
}

/// lld's `checkLoadConfigGuardData` on the written `_load_config_used` (`lc`: its bytes in the
/// image, `size`: the size its first field states; the 64-bit structure).
pub fn check_load_config(l: &Layout, lc: &[u8], size: u32) {
    let config = l.config;
    if !config.guard_cf {
        return;
    }
    let contains = |off: usize, width: usize| size as usize >= off + width;
    let too_small = |field: &str| config.diag.warn(&format!("'_load_config_used' structure too small to include {field}"));
    if !contains(144, 4) {
        return too_small("GuardFlags");
    }
    check_table(l, lc, 128, "GuardCFFunctionTable", "__guard_fids_table");
    check_value(l, lc, (136, 8), "GuardCFFunctionCount", "__guard_fids_count");
    check_value(l, lc, (144, 4), "GuardFlags", "__guard_flags");
    if contains(168, 8) {
        check_table(l, lc, 160, "GuardAddressTakenIatEntryTable", "__guard_iat_table");
        check_value(l, lc, (168, 8), "GuardAddressTakenIatEntryCount", "__guard_iat_count");
    }
    if !config.guard_longjmp {
        return;
    }
    if !contains(184, 8) {
        return too_small("GuardLongJumpTargetCount");
    }
    check_table(l, lc, 176, "GuardLongJumpTargetTable", "__guard_longjmp_table");
    check_value(l, lc, (184, 8), "GuardLongJumpTargetCount", "__guard_longjmp_count");
    if !config.guard_ehcont {
        return;
    }
    if !contains(272, 8) {
        return too_small("GuardEHContinuationCount");
    }
    check_table(l, lc, 264, "GuardEHContinuationTable", "__guard_eh_cont_table");
    check_value(l, lc, (272, 8), "GuardEHContinuationCount", "__guard_eh_cont_count");
}

/// The little-endian field of `width` bytes at `off` (missing bytes read as 0).
fn field(lc: &[u8], off: usize, width: usize) -> u64 {
    let mut b = [0u8; 8];
    for (i, v) in b.iter_mut().enumerate().take(width) {
        *v = lc.get(off + i).copied().unwrap_or(0);
    }
    u64::from_le_bytes(b)
}

/// A table field must hold the table's VA, when the table was made.
fn check_table(l: &Layout, lc: &[u8], off: usize, name: &str, sym: &str) {
    let Some(c) = l.r.find(sym).and_then(|id| l.guard.table_chunk(id)) else { return };
    if field(lc, off, 8) != l.image_base.wrapping_add(l.chunks[c].rva as u64) {
        l.config.diag.warn(&format!("{name} not set correctly in '_load_config_used'"));
    }
}

/// A count or flags field must hold the absolute symbol's value.
fn check_value(l: &Layout, lc: &[u8], (off, width): (usize, usize), name: &str, sym: &str) {
    let Some(id) = l.r.find(sym).filter(|&id| matches!(l.r.symbols[id].def, Def::Absolute(_))) else { return };
    let v = match (l.guard.value(id), l.r.symbols[id].def) {
        (Some(GuardValue::Absolute(v)), _) | (_, Def::Absolute(v)) => v,
        _ => return,
    };
    if field(lc, off, width) != v {
        l.config.diag.warn(&format!("{name} not set correctly in '_load_config_used'"));
    }
}

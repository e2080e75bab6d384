//! Symbol values: the final address of every symbol (defined, linker-defined, `--defsym`,
//! copy-relocated, PLT-canonical) and the entry point.

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::symtab::{Def, SymbolId};
use crate::elf::types::LE;
use crate::error::{Error, Result};

use super::model::*;

/// Every symbol's value from the current addresses (`l.sym_value`, and the linker-defined ones
/// in `l.synthetic_syms`): what the address-dependent sections (Android's packed relocations,
/// the GOTPCRELX range check) read while the layout still moves, and the start of
/// `compute_symbol_values`.
pub(super) fn symbol_values(l: &mut Layout) -> Result<()> {
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
                match l.obj(f).sym_section(i) {
                    _ if sym.st_shndx(LE) == elf::SHN_ABS => sym.st_value(LE),
                    Some(sh) => l.section_addr(f, sh, sym.st_value(LE)).unwrap_or(0),
                    None => 0,
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
    // Without a `.bss`, lld leaves `__bss_start` absolute at 0.
    let bss_start = l.osecs.iter().find(|o| o.name == ".bss").map(|o| o.addr).unwrap_or(0);
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
    for (k, (name, expr)) in l.config.defsym.iter().enumerate() {
        let Some(id) = r.lookup(name.as_bytes()) else { continue };
        let off = crate::elf::config::defsym_offset(expr).unwrap_or(0);
        let base = match crate::elf::config::defsym_target(expr) {
            // lld's getSymbolValue: a definition of the output (a library's does not count).
            Some(t) => match r.lookup_expr(t.as_bytes()) {
                Some(tid) if !matches!(r.symbols[tid].def, Def::Undefined | Def::Lazy(_) | Def::Shared(..)) || l.synthetic_syms.contains_key(&tid) => {
                    l.canonical_ifunc_addr(tid).unwrap_or(values[tid])
                }
                // A library's symbol the executable gives a canonical PLT entry or a copy is
                // defined there (lld replaces it by a Defined during the scan, before scripts
                // are evaluated): its address is that entry or copy.
                Some(tid) if matches!(r.symbols[tid].def, Def::Shared(..)) && l.sym_flags.get(&Target::Global(tid)).is_some_and(|f| f.canonical || f.copy) => {
                    if l.sym_flags[&Target::Global(tid)].canonical {
                        l.addr_of(Target::Global(tid))
                    } else {
                        values[tid]
                    }
                }
                _ => {
                    let loc = l.config.defsym_loc.get(k).map_or("--defsym:1", String::as_str);
                    return Err(Error::new(format!("{loc}: symbol not found: {t}")));
                }
            },
            None => 0,
        };
        values[id] = base.wrapping_add(off as u64);
        l.synthetic_syms.insert(id, values[id]);
    }
    // Linker-script assignments (evaluated by the script layout stage).
    for (&id, &(v, _)) in &l.script_syms {
        values[id] = v;
        l.synthetic_syms.insert(id, v);
    }
    l.sym_value = values;
    Ok(())
}

/// The final symbol values, the script's top-level assignments and the entry point.
pub(super) fn compute_symbol_values(l: &mut Layout) -> Result<()> {
    symbol_values(l)?;
    let r = l.r;
    // A script's assignments outside SECTIONS, now that sections have their addresses.
    crate::elf::script::toplevel::assign_symbols(l)?;
    // Entry point.
    let entry_name = l.config.entry.clone().unwrap_or_else(|| "_start".to_string());
    l.entry = match r.lookup(entry_name.as_bytes()) {
        Some(id) if !matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_)) => l.sym_value[id],
        _ => {
            if let Some(v) = parse_int(&entry_name) {
                v
            } else {
                // lld warns while writing the header, which an earlier error never reaches.
                if (l.config.entry.is_some() || !l.config.shared) && l.config.diag.error_count() == 0 {
                    l.config.diag.warn(&format!("cannot find entry symbol {entry_name}; not setting start address"));
                }
                0
            }
        }
    };
    Ok(())
}

pub(super) fn parse_int(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// lld evaluates `--defsym` expressions before it scans relocations, so a target that nothing
/// defines is reported (`--defsym:1: symbol not found: f`) before the undefined references to
/// it: the errors of the targets that are undefined here (not defined by the link itself, nor
/// by a script or another `--defsym`).
pub(super) fn defsym_target_errors(l: &Layout) -> Vec<String> {
    let r = l.r;
    let mut errors = Vec::new();
    for (k, (name, expr)) in l.config.defsym.iter().enumerate() {
        let (Some(_), Some(t)) = (r.lookup(name.as_bytes()), crate::elf::config::defsym_target(expr)) else { continue };
        let missing = match r.lookup_expr(t.as_bytes()) {
            None => true,
            Some(tid) => matches!(r.symbols[tid].def, Def::Undefined | Def::Lazy(_)) && !r.symbols[tid].script_defined && !l.is_linker_defined(tid),
        };
        if missing {
            let loc = l.config.defsym_loc.get(k).map_or("--defsym:1", String::as_str);
            errors.push(format!("{loc}: symbol not found: {t}"));
        }
    }
    errors
}

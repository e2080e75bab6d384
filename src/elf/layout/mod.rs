//! Layout: what goes into the output, where, and what the dynamic loader must do.
//!
//! This stage takes the resolved symbols and decides everything the writer needs, so the writer
//! can fill the output in parallel without further decisions. `layout` runs the phases in order,
//! one module each, all working on the one `Layout`:
//! 1. liveness (`elf::gc`): `--gc-sections`, COMDAT losers and dead `.eh_frame` records dropped;
//! 2. `sections`: which output section each input section joins (lld's name rules: `.text.*` →
//!    `.text`, ...), with SHF_MERGE pieces deduplicated, and the order of sections;
//! 3. `scan`: every relocation, read by its generic kind (never raw x86 numbers) with the
//!    target's properties, decides GOT slots, PLT entries, copy relocations, dynamic relocations
//!    and relaxations; linker-defined symbols are decided just before;
//! 4. `dynsym`: the dynamic symbol table; `create`: the synthetic sections the link needs;
//! 5. `addresses`: segments and addresses (lld's order: read-only, code, RELRO, data);
//! 6. `symbols`: the final value of every symbol and the entry point.

use std::collections::HashMap;

use crate::elf::config::Config;
use crate::elf::symtab::{File, Resolved};
use crate::error::{Error, Result};

pub(crate) mod addresses;
mod checks;
pub(crate) mod create;
pub(crate) mod dynsym;
pub(crate) mod model;
pub(crate) mod pieces;
mod relax;
pub(crate) mod reloc_check;
mod scan;
pub(crate) mod sections;
pub(crate) mod sizes;
mod symbols;
mod undef;

#[allow(unused_imports)]
use model::*;
use {addresses::*, create::*, dynsym::*, scan::*, sections::*, symbols::*};

/// Addresses: the script layout stage with a `SECTIONS` command (`script::place`), lld's
/// default rules otherwise (`addresses`).
fn place(l: &mut Layout) -> Result<()> {
    if let Some(plan) = l.script_plan.take() {
        let r = crate::elf::script::place::assign_addresses(l, &plan);
        l.script_plan = Some(plan);
        return r;
    }
    assign_addresses(l)
}

/// What comes before the layout and may still change the resolution, in lld's order: the
/// reserved-symbol checks and `-z cet-report`, then liveness (`gc::mark_live`). A library
/// `--as-needed` that only sections `--gc-sections` collected needed is then not needed, and its
/// symbols are demoted to weak undefined ones, as lld's `demoteSharedAndLazySymbols` does after
/// `markLive` (so a weak reference to one resolves to zero, and no version need names the
/// library; the resolution demotes those of libraries no reference needed at all).
pub fn mark_live(config: &Config, r: &mut Resolved) -> Result<crate::elf::gc::Liveness> {
    let reserved = checks::reserved_symbol_errors(config, r);
    if !reserved.is_empty() {
        return Err(Error::many(reserved));
    }
    checks::cet_report(config, r);
    let liveness = crate::elf::gc::mark_live(config, r);
    if let Some(needed) = &liveness.dso_needed {
        crate::elf::resolve::demote_unneeded_shared(r, needed);
    }
    Ok(liveness)
}

/// Builds the layout from the resolution and its liveness (`mark_live`). `errors` collects
/// undefined-symbol and relocation errors.
pub fn layout<'r>(config: &'r Config, r: &'r Resolved, liveness: crate::elf::gc::Liveness) -> Result<Layout<'r>> {
    let is_pic = config.pie || config.shared;
    let mut l = Layout {
        config,
        r,
        osecs: Vec::new(),
        sec_osec: Vec::new(),
        sec_off: Vec::new(),
        merged: Vec::new(),
        merged_addr: Vec::new(),
        eh_records: Vec::new(),
        eh_index: Default::default(),
        eh_size: 0,
        sym_flags: Default::default(),
        got: Vec::new(),
        got_index: Default::default(),
        plt: Vec::new(),
        plt_index: Default::default(),
        iplt: Vec::new(),
        iplt_index: Default::default(),
        ifunc_canonical: Default::default(),
        got_in_igot: Default::default(),
        dynrels: Vec::new(),
        irelatives: Vec::new(),
        relative_count: 0,
        relr: Vec::new(),
        relr_words: Vec::new(),
        android_rela: Vec::new(),
        site_fix: Default::default(),
        excluded_defs: reloc_check::excluded_defs(r),
        dynsyms: Vec::new(),
        dynsym_index: Default::default(),
        copies: Vec::new(),
        copy_alias: Default::default(),
        gc_used: None,
        needed: Vec::new(),
        sym_value: vec![0; r.symbols.len()],
        synth_osec: Default::default(),
        has_dynamic: false,
        is_pic,
        tls: None,
        image_base: config.image_base.unwrap_or(if is_pic { 0 } else { 0x200000 }),
        entry: 0,
        phdrs: Vec::new(),
        file_size: 0,
        synthetic_syms: Default::default(),
        linker_defined: Vec::new(),
        verneed: Vec::new(),
        dynstr: vec![0],
        dynstr_off: Default::default(),
        x86_features: 0,
        warned_once: Default::default(),
        script_plan: None,
        insert_plan: None,
        section_priority: HashMap::new(),
        script_syms: Default::default(),
        script_extra: Default::default(),
        icf_folded: Default::default(),
        gdb_index: None,
        laps: Default::default(),
    };
    let link_order = checks::link_order_errors(r, &liveness.live);
    if !link_order.is_empty() {
        return Err(Error::many(link_order));
    }
    // Shared libraries that stay: all loaded ones not under --as-needed, and as-needed ones that
    // satisfy a non-weak reference (under --gc-sections, one from a live section, as lld).
    let dso_needed = liveness.dso_needed.as_ref().unwrap_or(&r.dso_needed);
    for (f, file) in r.files.iter().enumerate() {
        if let File::Shared(_) = file {
            if r.loaded[f] && (!r.dso_as_needed[f] || dso_needed[f]) {
                l.needed.push(f);
            }
        }
    }
    l.has_dynamic = !config.relocatable && (is_pic || !l.needed.is_empty() || r.files.iter().zip(&r.loaded).any(|(f, ld)| *ld && matches!(f, File::Shared(_))));
    l.gc_used = liveness.used;
    let mut live = liveness.live;
    if config.icf != crate::elf::config::Icf::None {
        l.icf_folded = crate::elf::icf::fold(&l, &mut live)?;
    }
    // INSERT blocks without SECTIONS: the default layout takes their descriptions (with
    // SECTIONS they are already part of its command list).
    l.insert_plan = crate::elf::script::insert::plan(config, r, &live)?;
    if config.gdb_index {
        crate::elf::gdb_index::drop_pub_sections(r, &mut live);
    }
    if (config.script.has_sections || !config.script.phdrs.is_empty()) && !config.relocatable {
        if crate::elf::script::select::discards_shstrtab(config) {
            return Err(Error::new("discarding .shstrtab section is not allowed"));
        }
        l.script_plan = Some(crate::elf::script::place::plan(config, r, &live));
    }
    l.laps.lap("Fold identical code");
    assign_sections(&mut l, &live, liveness.merge_refs.as_ref())?;
    crate::elf::script::insert::order_chunks(&mut l);
    if config.emit_relocs {
        crate::elf::emit_relocs::create(&mut l);
    }
    crate::elf::icf::alias(&mut l, false);
    order_sections(&mut l)?;
    decide_linker_symbols(&mut l);
    l.laps.lap("Order sections");
    let defsym_errors = symbols::defsym_target_errors(&l);
    match scan_relocations(&mut l, &live) {
        Err(mut e) if !defsym_errors.is_empty() => {
            e.messages.splice(0..0, defsym_errors);
            return Err(e);
        }
        r => r?,
    }
    if !defsym_errors.is_empty() {
        return Err(Error::many(defsym_errors));
    }
    l.laps.lap("Scan relocations");
    build_dynsyms(&mut l);
    crate::elf::synthetic::prepare_dynamic_strings(&mut l);
    create_synthetic(&mut l);
    if config.gdb_index {
        crate::elf::gdb_index::create(&mut l)?;
        add_synth(&mut l, Synth::GdbIndex, ".gdb_index", object::elf::SHT_PROGBITS, 0, 1);
    }
    l.laps.lap("Create synthetic sections");
    place(&mut l)?;
    finalize_address_dependent(&mut l)?;
    crate::elf::icf::alias(&mut l, true);
    crate::elf::emit_relocs::finish(&mut l);
    compute_symbol_values(&mut l)?;
    l.merged_addr = merged_chunk_addrs(&l);
    l.laps.lap("Assign addresses");
    Ok(l)
}

/// What depends on the addresses and changes sizes, redone with addresses assigned again until
/// nothing changes (lld's finalizeAddressDependentContent): GOTPCRELX relaxations that do not
/// reach go back to the GOT (`relax`), then `.rela.dyn` in Android's packed format and
/// `.relr.dyn` are re-encoded. None of them shrinks, so this ends.
fn finalize_address_dependent(l: &mut Layout) -> Result<()> {
    loop {
        // Relocation addends and relaxed targets need symbol values.
        if relax::may_overflow(l) || crate::elf::android_rela::enabled(l) {
            crate::elf::icf::alias(l, true);
            symbol_values(l)?;
        }
        let mut changed = relax::revert_out_of_range(l);
        changed |= crate::elf::android_rela::update(l);
        changed |= crate::elf::relr::update(l);
        if !changed {
            return Ok(());
        }
        place(l)?;
    }
}

/// The address of every merged chunk, once the layout is final: the writer resolves every
/// relocation into a merge section (each `.debug_str` reference of `.debug_info`) through it.
fn merged_chunk_addrs(l: &Layout) -> Vec<u64> {
    let mut addr = vec![0; l.merged.len()];
    for osec in &l.osecs {
        for (c, off) in osec.chunks.iter().zip(&osec.chunk_off) {
            if let Chunk::Merged(m) = *c {
                addr[m] = osec.addr + off;
            }
        }
    }
    addr
}

// ------------------------------------------------------------------------------------------------
// Liveness
// ------------------------------------------------------------------------------------------------

// ------------------------------------------------------------------------------------------------
// Output sections
// ------------------------------------------------------------------------------------------------

#[cfg(test)]
mod output_name_tests {
    use super::output_name;

    #[test]
    fn lld_prefixes() {
        let cases: &[(&str, &str)] = &[
            (".text.main", ".text"),
            (".text", ".text"),
            (".textual", ".textual"),
            (".tbss.x", ".tbss"),
            (".tdata.x", ".tdata"),
            (".rodata.str1.1", ".rodata"),
            (".data.rel.ro.local", ".data.rel.ro"),
            (".data.rel.ro", ".data.rel.ro"),
            (".data.x", ".data"),
            (".dtors.65535", ".dtors"),
            (".bss.rel.ro.x", ".bss.rel.ro"),
            (".bss.x", ".bss"),
            (".ldata.x", ".ldata"),
            (".lrodata.x", ".lrodata"),
            (".lbss.x", ".lbss"),
            (".gcc_except_table._Z1fv", ".gcc_except_table"),
            (".init_array.00100", ".init_array"),
            (".fini_array.00100", ".fini_array"),
            (".ARM.exidx.text.f", ".ARM.exidx"),
            (".ARM.extab.text.f", ".ARM.extab"),
            (".ctors.00100", ".ctors"),
            (".debug_info", ".debug_info"),
            ("text.x", "text.x"),
            ("", ""),
            (".", "."),
        ];
        for (input, want) in cases {
            assert_eq!(output_name(input.as_bytes(), false), want.as_bytes(), "{input}");
        }
        assert_eq!(output_name(b".text.hot.f", true), b".text.hot");
        assert_eq!(output_name(b".text.hot.f", false), b".text");
        assert_eq!(output_name(b".text.unknown.f", true), b".text.unknown");
        assert_eq!(output_name(b".srodata.x", false), b".srodata");
        assert_eq!(output_name(b".sdata2.x", false), b".sdata2.x");
    }
}

//! GOTPCRELX relaxations that do not reach (lld's `X86_64::relaxOnce`).
//!
//! The scan rewrites a GOT load of a symbol the link defines into a direct reference (`lea`, a
//! direct call or jump, an immediate operand) before addresses exist, assuming the target is
//! within ±2 GiB of the instruction (or, for the immediate form, below 2 GiB). An image that
//! spans 2 GiB or more — a program with a 3 GiB `.bss` — can break that: lld then keeps the GOT
//! load for each such reference (giving the symbol a GOT slot, with its RELATIVE relocation in
//! position-independent output) and lays the image out again, rather than refusing the link.
//! This module is that check, run in the layout's address loop.

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use dtld_arch::x86_64::{self as arch};
use object::elf;
use object::read::elf::Rela as _;

use crate::elf::symtab::FileId;
use crate::elf::types::LE;

use super::create::*;
use super::model::*;

/// Reverts the relaxed GOTPCRELX references in executable sections whose value no longer fits
/// 32 signed bits, giving their symbols GOT slots; true when a slot was added (sizes changed,
/// so addresses must be assigned again). Nothing to do while the image ends below 2 GiB (or,
/// position-independent, spans less), as in lld.
pub(super) fn revert_out_of_range(l: &mut Layout) -> bool {
    if !may_overflow(l) {
        return false;
    }
    let mut revert: Vec<(FileId, usize, Target)> = Vec::new();
    for (f, fixes) in l.site_fix.iter().enumerate() {
        for (n, &(s, k, fix)) in fixes.iter().enumerate() {
            if fix != SiteFix::GotPcRelax {
                continue;
            }
            let Some(&os) = l.sec_osec[f].get(s as usize).filter(|&&o| o != u32::MAX) else { continue };
            if !flag(l.osecs[os as usize].flags, elf::SHF_EXECINSTR) {
                continue;
            }
            let sec = &l.obj(f).sections[s as usize];
            let rel = &sec.relocs[k as usize];
            let off = rel.r_offset(LE);
            let Some(p) = l.section_addr(f, s, off) else { continue };
            let t = l.target_of(f, rel.r_sym(LE, false) as usize);
            let a = rel.r_addend(LE);
            let sa = match l.iplt_index.get(&t) {
                Some(&i) => l.iplt_entry_addr(i).wrapping_add(a as u64),
                None => l.addr_with_addend(t, a),
            };
            // `mov` becomes `lea` and an indirect call or jump a direct one (S + A - P); the
            // other forms (`test`, binary operations, non-PIC only) take S as an immediate.
            let op = sec.data.get((off as usize).wrapping_sub(2)).copied();
            let v = if matches!(op, Some(0x8b | 0xff)) { sa.wrapping_sub(p) } else { sa.wrapping_sub(a as u64) };
            if i32::try_from(v as i64).is_err() {
                revert.push((f, n, t));
            }
        }
    }
    let mut changed = false;
    for (f, n, t) in revert {
        l.site_fix[f][n].2 = SiteFix::Normal;
        if !l.got_index.contains_key(&(t, GotKind::Addr)) {
            add_got_slot(l, t);
            changed = true;
        }
    }
    changed
}

/// lld's shortcut: no relaxed reference can overflow while every section ends below 2 GiB, or
/// (position-independent output, which has no immediate form) while the image spans less.
pub(super) fn may_overflow(l: &Layout) -> bool {
    if l.config.relocatable || !l.site_fix.iter().flatten().any(|e| e.2 == SiteFix::GotPcRelax) {
        return false;
    }
    let min = l.osecs.iter().map(|o| o.addr).min().unwrap_or(0);
    let max = l.osecs.iter().map(|o| o.addr.wrapping_add(o.size)).max().unwrap_or(0);
    !(max < 1 << 31 || (l.is_pic && max.wrapping_sub(min) < 1 << 31))
}

/// A GOT slot for `t`'s address, added after the scan, with the dynamic relocation it needs
/// (RELATIVE in PIC output: into `.relr.dyn` when RELR packs it, else after the other
/// RELATIVE ones), and `.got` / `.rela.dyn` if the link had none.
fn add_got_slot(l: &mut Layout, t: Target) {
    let slot = l.got.len();
    l.got_index.insert((t, GotKind::Addr), slot as u32);
    l.got.push((t, GotKind::Addr));
    l.sym_flags.entry(t).or_default().got = true;
    let n = l.dynrels.len();
    got_slot_reloc(l, slot, t, GotKind::Addr);
    let added: Vec<DynRel> = l.dynrels.drain(n..).collect();
    for d in added {
        if d.r_type == arch::r::RELATIVE && l.config.relr() && crate::elf::relr::qualifies(l, d.place) {
            l.relr.push(d.place);
        } else if d.r_type == arch::r::RELATIVE {
            l.dynrels.insert(l.relative_count, d);
            l.relative_count += 1;
        } else {
            l.dynrels.push(d);
        }
    }
    let (a, w) = (elf::SHF_ALLOC, elf::SHF_WRITE);
    if !l.synth_osec.contains_key(&Synth::Got) {
        add_synth(l, Synth::Got, ".got", elf::SHT_PROGBITS, a | w, 8);
    }
    let has_rela = !l.dynrels.is_empty() || !l.irelatives.is_empty();
    if !l.synth_osec.contains_key(&Synth::RelaDyn) && has_rela {
        let t = if crate::elf::android_rela::enabled(l) { crate::elf::android_rela::SHT_ANDROID_RELA } else { elf::SHT_RELA };
        add_synth(l, Synth::RelaDyn, ".rela.dyn", t, a, 8);
    }
    if !l.synth_osec.contains_key(&Synth::RelrDyn) && !l.relr.is_empty() {
        let t = if l.config.use_android_relr_tags { crate::elf::android_rela::SHT_ANDROID_RELR } else { elf::SHT_RELR };
        add_synth(l, Synth::RelrDyn, ".relr.dyn", t, a, 8);
    }
}

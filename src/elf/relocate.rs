//! Applying relocations: an input section's copy in the output (`apply_relocs`), the pieces of
//! merged constant sections (`apply_merged_relocs`), allocated sections with the scan's fixes
//! (GOT and TLS relaxations, dynamic relocations' addends) and debug sections with their
//! tombstones, and lld's out-of-range and alignment messages. lld's `InputSection::relocate*`,
//! mold's `apply_reloc_alloc`/`apply_reloc_nonalloc`.
//!
//! Why it exists: the writer (`write.rs`) fills the output; what each relocation writes is a
//! concern of its own, used by the section filler and the `.eh_frame` rebuild alike.

use dtld_arch::x86_64::{self as arch, Field, RelKind};
use object::elf;
use object::read::elf::{Rela as _, Sym as _};

use crate::elf::layout::model::{Layout, SiteFix, Synth, Target};
use crate::elf::symtab::Def;
use crate::elf::types::LE;
use crate::error::{Error, Result};

fn tpoff(l: &Layout, s: u64) -> u64 {
    s.wrapping_sub(l.tls_end())
}

/// Applies the relocations of the mergeable input sections of merged chunk `m` (at `base`,
/// written to `dst`): gcc's constant pools of non-PIC code (`.rodata.cst8` holding a function's
/// address) carry them. Each relocation is applied to its piece where the piece landed, as lld
/// does: pieces are merged by their bytes before relocation, so when two merged pieces carry
/// different relocations the later input's value wins, as in lld.
pub(crate) fn apply_merged_relocs(l: &Layout, m: usize, base: u64, dst: &mut [u8], errs: &mut Vec<String>) {
    let merged = &l.merged[m];
    let mut inputs: Vec<(usize, u32)> = merged.pieces.keys().copied().filter(|&(f, s)| !l.obj(f).sections[s as usize].relocs.is_empty()).collect();
    if inputs.is_empty() {
        return;
    }
    inputs.sort_unstable();
    for (f, s) in inputs {
        let sec = &l.obj(f).sections[s as usize];
        let pieces = &merged.pieces[&(f, s)];
        let mut copy = sec.data.to_vec();
        let mut touched: Vec<(u64, u64)> = Vec::new();
        for (k, rel) in sec.relocs.iter().enumerate() {
            let off = rel.r_offset(LE);
            let Some((pin, pout)) = pieces.find(off) else { continue };
            if !pieces.is_live(off) {
                continue;
            }
            apply_relocs_in(l, f, s, (base + pout).wrapping_sub(pin), &mut copy, errs, k..k + 1);
            touched.push((pin, pout));
        }
        touched.sort_unstable();
        touched.dedup();
        for (pin, pout) in touched {
            // The piece runs to the next piece's start (or the section's end).
            let next = pieces.list.partition_point(|&(i, _)| i <= pin);
            let end = pieces.list.get(next).map_or(copy.len() as u64, |&(i, _)| i);
            let len = (end - pin) as usize;
            let (pin, pout) = (pin as usize, pout as usize);
            if pout + len <= dst.len() {
                dst[pout..pout + len].copy_from_slice(&copy[pin..pin + len]);
            }
        }
    }
}

/// Applies the relocations of input section (f, s), whose copy is `dst` at address `base`.
pub(crate) fn apply_relocs(l: &Layout, f: usize, s: u32, base: u64, dst: &mut [u8], errs: &mut Vec<String>) {
    let n = l.obj(f).sections[s as usize].relocs.len();
    apply_relocs_in(l, f, s, base, dst, errs, 0..n);
}

/// `apply_relocs` for the relocations `ks` (indexes into the section's relocations).
fn apply_relocs_in(l: &Layout, f: usize, s: u32, base: u64, dst: &mut [u8], errs: &mut Vec<String>, ks: std::ops::Range<usize>) {
    let o = l.obj(f);
    let sec = &o.sections[s as usize];
    let alloc = sec.flags & elf::SHF_ALLOC as u64 != 0;
    let tombstone = if alloc { None } else { tombstone_of(l, sec.name) };
    let got_base = l.synth_osec.get(&Synth::GotPlt).or(l.synth_osec.get(&Synth::Got)).map(|&i| l.osecs[i].addr).unwrap_or(0);
    let mut cur = crate::elf::layout::pieces::PieceCursor::default();
    // `nonalloc_local` leaves code ICF folded (tombstoned in debug info) to the general path.
    let fast_local = l.icf_folded.is_empty();
    // The scan's fixes of this section, in relocation order, walked alongside.
    let fixes = if alloc { l.section_fixes(f, s) } else { &[] };
    let mut next_fix = 0;
    for (k, rel) in sec.relocs.iter().enumerate().skip(ks.start).take(ks.len()) {
        let mut fix = SiteFix::Normal;
        while next_fix < fixes.len() && fixes[next_fix].1 as usize <= k {
            if fixes[next_fix].1 as usize == k {
                fix = fixes[next_fix].2;
            }
            next_fix += 1;
        }
        let r_type = rel.r_type(LE, false);
        let info = arch::rel_info(r_type);
        if info.kind == RelKind::None || info.kind == RelKind::Unknown {
            continue;
        }
        let off = rel.r_offset(LE) as usize;
        if off.saturating_add(info.field.size()) > dst.len() {
            errs.push(format!("{}: relocation {} at offset 0x{:x} is out of bounds", o.input.name, arch::rel_name(r_type), off));
            continue;
        }
        let a = rel.r_addend(LE);
        let si = rel.r_sym(LE, false) as usize;
        if !alloc && si != 0 && si < o.first_global && fast_local {
            match nonalloc_local(l, f, si, a, &mut cur) {
                Some(Ok((sa, dead))) => {
                    let site = Site { f, s, r_type, info, off, a, t: Target::Local(f, si as u32), p: base + off as u64, base, sa, s_val: 0 };
                    write_nonalloc(l, &site, dead, tombstone, dst, errs);
                    continue;
                }
                Some(Err(e)) => {
                    errs.push(e);
                    continue;
                }
                None => {}
            }
        }
        let t = l.target_of(f, si);
        if !alloc && si != 0 {
            if let Some(e) = crate::elf::layout::reloc_check::merge_offset_error(l, t, a) {
                errs.push(e);
                continue;
            }
        }
        let p = base + off as u64;
        let undef_weak = match t {
            Target::Global(id) => matches!(l.r.symbols[id].def, Def::Undefined | Def::Lazy(_)) && !l.synthetic_syms.contains_key(&id),
            _ => si == 0,
        };
        // S + A, with merge-section section symbols resolved through their piece.
        let sa = if (undef_weak && !l.is_preemptible(t)) || si == 0 { a as u64 } else { l.addr_with_addend_at(t, a, &mut cur) };
        let site = Site { f, s, r_type, info, off, a, t, p, base, sa, s_val: sa.wrapping_sub(a as u64) };
        if alloc {
            apply_alloc_reloc(l, &site, fix, got_base, dst, errs);
        } else {
            apply_nonalloc_reloc(l, &site, tombstone, dst, errs);
        }
    }
}

/// One relocation being applied: where, of which type, against what, and its S + A.
struct Site {
    /// The input section (file, section index) holding the relocation.
    f: usize,
    s: u32,
    r_type: u32,
    info: arch::RelInfo,
    /// The field's offset in the section copy, and its address (P).
    off: usize,
    p: u64,
    /// The section copy's address.
    base: u64,
    a: i64,
    t: Target,
    /// S + A (merge-section section symbols resolved through their piece; A alone for an
    /// undefined weak symbol that is not preemptible) and S.
    sa: u64,
    s_val: u64,
}

/// A relocation in debug info and other non-allocated data: absolute values (lld's
/// relocateNonAlloc). A reference to discarded code gets the section's `tombstone` in
/// `.debug_*` (and wherever `-z dead-reloc-in-nonalloc=` says), else resolves as if the
/// symbol were 0.
fn apply_nonalloc_reloc(l: &Layout, site: &Site, tombstone: Option<u64>, dst: &mut [u8], errs: &mut Vec<String>) {
    let t = site.t;
    // lld also tombstones references to code ICF folded away (their debug info describes
    // code that is not there), except in .debug_line, where breakpoints would be lost.
    let folded = || tombstone.is_some() && crate::elf::icf::is_folded(l, t) && l.obj(site.f).sections[site.s as usize].name != b".debug_line";
    let dead = is_dead_target(l, t) || folded();
    write_nonalloc(l, site, dead, tombstone, dst, errs)
}

/// The most common relocation of a link with debug information: one in a non-allocated
/// section against a local symbol defined in an input section (`.debug_info` to `.debug_str`,
/// `.debug_abbrev`, `.debug_line`, code). Its symbol and section are read once, for the
/// merge-offset check, whether the section is in the output, and S + A, giving what
/// `addr_with_addend_at`, `is_dead_target` and `merge_offset_error` would (`None`: another
/// kind of symbol, for the general path).
fn nonalloc_local<'l>(
    l: &'l Layout,
    f: usize,
    si: usize,
    a: i64,
    cur: &mut crate::elf::layout::pieces::PieceCursor<'l>,
) -> Option<std::result::Result<(u64, bool), String>> {
    use crate::elf::object::SecKind;
    let o = l.obj(f);
    let sym = o.symbols.get(si)?;
    if sym.st_shndx(LE) == elf::SHN_ABS || sym.st_type() == elf::STT_GNU_IFUNC {
        return None;
    }
    let sh = o.sym_section(si)?;
    let sec = o.sections.get(sh as usize)?;
    if let Some(e) = crate::elf::layout::reloc_check::merge_offset_error_in(o, sym, sec, a) {
        return Some(Err(e));
    }
    if l.sec_osec[f].get(sh as usize).is_none_or(|&os| os == u32::MAX) {
        return Some(Ok((0, true)));
    }
    // As `addr_with_addend_at` and `local_value`: a section symbol's addend selects the piece
    // of a merge section; otherwise the section's address plus the value, then the addend.
    let section_sym = sym.st_type() == elf::STT_SECTION;
    let value = sym.st_value(LE);
    let sa = if section_sym && matches!(sec.kind, SecKind::Merge | SecKind::EhFrame) {
        l.section_addr_at(f, sh, value.wrapping_add(a as u64), cur).unwrap_or(0)
    } else {
        l.section_addr_at(f, sh, if section_sym { 0 } else { value }, cur).unwrap_or(0).wrapping_add(a as u64)
    };
    Some(Ok((sa, false)))
}

/// Writes a non-allocated section's relocation `site` whose target is `dead` (discarded or
/// folded): the tombstone where there is one, else S + A as the kind says.
fn write_nonalloc(l: &Layout, site: &Site, dead: bool, tombstone: Option<u64>, dst: &mut [u8], errs: &mut Vec<String>) {
    let Site { r_type, info, off, p, a, t, sa, .. } = *site;
    // lld's relocateNonAlloc: absolute values only. A PC-relative one is resolved as if the
    // section were at address 0 (GNU ld does so), with a warning; anything else is an error.
    if !matches!(info.kind, RelKind::None | RelKind::Abs | RelKind::DtpOff | RelKind::Size | RelKind::RelGotBase) {
        let o = l.obj(site.f);
        let name = match t {
            Target::Global(id) => crate::elf::diag::demangle(l.r.symbols[id].name),
            Target::Local(g, i) => {
                let og = l.r.obj(g);
                if og.symbols[i as usize].st_type() == elf::STT_SECTION {
                    String::new()
                } else {
                    crate::elf::diag::demangle(og.sym_name(i as usize))
                }
            }
        };
        let msg = format!(
            "{}: has non-ABS relocation {} against symbol '{name}'",
            crate::elf::diag::reloc_location(o, site.s as usize, off as u64),
            arch::rel_name(r_type)
        );
        if info.kind != RelKind::Pc {
            errs.push(msg);
            return;
        }
        l.config.diag.warn(&msg);
    }
    if dead && matches!(info.kind, RelKind::Abs | RelKind::DtpOff) {
        if let Some(tomb) = tombstone {
            let v = if r_type == arch::r::R32 { tomb & 0xffff_ffff } else { tomb };
            arch::write_field(&mut dst[off..], info.field, v);
            return;
        }
    }
    let sa = if dead { a as u64 } else { sa };
    let v = match info.kind {
        RelKind::DtpOff => sa.wrapping_sub(l.tls_start()),
        RelKind::Pc => sa.wrapping_sub(p),
        RelKind::Size => symbol_size(l, t).wrapping_add(a as u64),
        _ => sa,
    };
    if !arch::write_field(&mut dst[off..], info.field, v) {
        errs.push(out_of_range(l, RangeAt::Input(site.f, site.s, off as u64), r_type, v, None));
    }
}

/// A relocation in allocated data, as the scan decided (`fix`): skipped, relaxed (GOTPCRELX
/// to a direct reference, TLS models to cheaper ones, the instruction rewritten and the new
/// field written) or applied normally. A value that does not fit its field is an error.
fn apply_alloc_reloc(l: &Layout, site: &Site, fix: SiteFix, got_base: u64, dst: &mut [u8], errs: &mut Vec<String>) {
    let Site { f, s, r_type, info, off, p, base, a, t, sa, s_val } = *site;
    let write = |dst: &mut [u8], at: usize, field: Field, v: u64, errs: &mut Vec<String>| {
        if !arch::write_field(&mut dst[at..], field, v) {
            errs.push(out_of_range(l, RangeAt::Input(f, s, at as u64), r_type, v, Some(t)));
        }
    };
    match fix {
        SiteFix::Skip => {}
        SiteFix::WriteAddend => write(dst, off, info.field, a as u64, errs),
        SiteFix::GotPcRelax => match arch::relax_gotpcrelx(dst, off, info.kind == RelKind::GotPcRelaxRex) {
            Some(arch::Relaxed::Jmp) => {
                let sa = match l.iplt_index.get(&t) {
                    Some(&i) => l.iplt_entry_addr(i).wrapping_add(a as u64),
                    None => sa,
                };
                let disp = sa.wrapping_sub(p) as i64;
                arch::write_relaxed_jmp(dst, off, disp);
            }
            // Non-PIC `test`/binary operation: the immediate is the address S (the field's
            // A is the -4 the scan required), sign-extended by the CPU.
            Some(arch::Relaxed::Abs) => write(dst, off, Field::I32, sa.wrapping_sub(a as u64), errs),
            Some(_) => {
                let sa = match l.iplt_index.get(&t) {
                    Some(&i) => l.iplt_entry_addr(i).wrapping_add(a as u64),
                    None => sa,
                };
                write(dst, off, Field::I32, sa.wrapping_sub(p), errs)
            }
            None => errs.push(format!("{}: cannot relax {}", l.obj(f).input.name, arch::rel_name(r_type))),
        },
        SiteFix::TlsGdToLe => {
            if let Some(no) = arch::relax_tls_gd_to_le(dst, off) {
                write(dst, no, Field::I32, tpoff(l, s_val), errs);
            }
        }
        SiteFix::TlsGdToIe => {
            if let Some(no) = arch::relax_tls_gd_to_ie(dst, off) {
                let slot = l.got_slot_addr(l.got_index[&(t, crate::elf::layout::model::GotKind::TpOff)]);
                let np = base + no as u64;
                write(dst, no, Field::I32, slot.wrapping_sub(np + 4), errs);
            }
        }
        SiteFix::TlsLdToLe => {
            arch::relax_tls_ld_to_le(dst, off);
        }
        SiteFix::TlsIeToLe => {
            if arch::relax_tls_ie_to_le(dst, off) {
                write(dst, off, Field::I32, tpoff(l, s_val).wrapping_add((a + 4) as u64), errs);
            }
        }
        SiteFix::TlsDescToLe => {
            if arch::relax_tlsdesc_to_le(dst, off) {
                write(dst, off, Field::I32, tpoff(l, s_val).wrapping_add((a + 4) as u64), errs);
            }
        }
        SiteFix::TlsDescToIe => {
            if arch::relax_tlsdesc_to_ie(dst, off) {
                let slot = l.got_slot_addr(l.got_index[&(t, crate::elf::layout::model::GotKind::TpOff)]);
                write(dst, off, Field::I32, slot.wrapping_add(a as u64).wrapping_sub(p), errs);
            }
        }
        SiteFix::TlsDescCallNop => {
            arch::relax_tlsdesc_call(dst, off);
        }
        SiteFix::Normal => {
            if let Some(v) = reloc_value(l, site, got_base) {
                write(dst, off, info.field, v, errs);
            }
        }
    }
}

/// The value a relocation in allocated data writes when nothing relaxed it: from S + A, P,
/// the PLT entry (for a preemptible or IFUNC target), the GOT slot of the right kind, the GOT
/// base `got_base`, or the thread pointer. `None` for the TLS relocations that only mark an
/// instruction (nothing to write in an executable).
fn reloc_value(l: &Layout, site: &Site, got_base: u64) -> Option<u64> {
    let Site { info, p, a, t, sa, s_val, .. } = *site;
    let plt_or_s = || -> u64 {
        if let Some(&i) = l.iplt_index.get(&t) {
            return l.iplt_entry_addr(i);
        }
        if let Target::Global(id) = t {
            if let Some(&i) = l.plt_index.get(&id) {
                if l.is_preemptible(t) {
                    return l.plt_entry_addr(i);
                }
            }
        }
        s_val
    };
    let got_slot = |kind| l.got_index.get(&(t, kind)).map(|&i| l.got_slot_addr(i)).unwrap_or(0);
    Some(match info.kind {
        RelKind::Abs => sa,
        RelKind::Pc => sa.wrapping_sub(p),
        RelKind::PltPc => plt_or_s().wrapping_add(a as u64).wrapping_sub(p),
        RelKind::GotPc | RelKind::GotPcRelax | RelKind::GotPcRelaxRex => l.got_addr(t).unwrap_or(0).wrapping_add(a as u64).wrapping_sub(p),
        RelKind::GotOff => l.got_addr(t).unwrap_or(0).wrapping_sub(got_base).wrapping_add(a as u64),
        RelKind::GotBasePc => got_base.wrapping_add(a as u64).wrapping_sub(p),
        RelKind::RelGotBase => sa.wrapping_sub(got_base),
        RelKind::PltRelGotBase => plt_or_s().wrapping_add(a as u64).wrapping_sub(got_base),
        RelKind::Size => symbol_size(l, t).wrapping_add(a as u64),
        // Relaxed local-dynamic code in an executable addresses TLS from the thread
        // pointer; elsewhere (shared libraries; debug info goes through
        // `apply_nonalloc_reloc`) DTPOFF is the offset in the module's TLS block.
        RelKind::DtpOff if !l.config.shared => tpoff(l, s_val).wrapping_add(a as u64),
        RelKind::DtpOff => s_val.wrapping_sub(l.tls_start()).wrapping_add(a as u64),
        RelKind::TpOff => tpoff(l, s_val).wrapping_add(a as u64),
        RelKind::GotTpOff => got_slot(crate::elf::layout::model::GotKind::TpOff).wrapping_add(a as u64).wrapping_sub(p),
        RelKind::TlsGd if l.config.shared => got_slot(crate::elf::layout::model::GotKind::TlsGdMod).wrapping_add(a as u64).wrapping_sub(p),
        RelKind::TlsLd if l.config.shared => l
            .got_index
            .get(&(crate::elf::layout::model::TLS_LD_TARGET, crate::elf::layout::model::GotKind::TlsLdMod))
            .map(|&i| l.got_slot_addr(i))
            .unwrap_or(0)
            .wrapping_add(a as u64)
            .wrapping_sub(p),
        RelKind::TlsDescPc if l.config.shared => got_slot(crate::elf::layout::model::GotKind::TlsDesc).wrapping_add(a as u64).wrapping_sub(p),
        RelKind::TlsGd | RelKind::TlsLd | RelKind::TlsDescPc | RelKind::TlsDescCall => return None,
        RelKind::None | RelKind::Unknown => return None,
    })
}

/// lld's tombstone for relocations from a non-alloc section to discarded code: 1 in
/// `.debug_ranges`/`.debug_loc` (where 0 would end a list), all ones in `.debug_names`, 0 in the
/// other `.debug_*` sections; `-z dead-reloc-in-nonalloc=` overrides (the last match wins).
fn tombstone_of(l: &Layout, name: &[u8]) -> Option<u64> {
    if let Some((_, v)) = l.config.dead_reloc_in_nonalloc.iter().rev().find(|(g, _)| crate::util::glob::glob_match(g.as_bytes(), name)) {
        return Some(*v);
    }
    if !name.starts_with(b".debug") {
        return None;
    }
    Some(match name {
        b".debug_ranges" | b".debug_loc" => 1,
        b".debug_names" => u64::MAX,
        _ => 0,
    })
}

fn is_dead_target(l: &Layout, t: Target) -> bool {
    let (f, i) = match t {
        Target::Local(f, i) => (f, i as usize),
        Target::Global(id) => match l.r.symbols[id].def {
            Def::Defined(f, i) => (f, i),
            _ => return false,
        },
    };
    let Some(sh) = l.obj(f).sym_section(i) else { return false };
    l.sec_osec[f].get(sh as usize).is_none_or(|&x| x == u32::MAX)
}

fn symbol_size(l: &Layout, t: Target) -> u64 {
    match t {
        Target::Local(f, i) => l.sym(f, i as usize).st_size(LE),
        Target::Global(id) => match l.r.symbols[id].def {
            Def::Defined(f, i) | Def::Common(f, i) => l.sym(f, i).st_size(LE),
            Def::Shared(f, k) => l.r.dso(f).syms[k].sym.st_size(LE),
            _ => 0,
        },
    }
}

/// The errors of applying relocations fail the link; under `--noinhibit-exec` they are
/// warnings and the output is written (lld's `errorOrWarn`).
pub(crate) fn relocation_errors(l: &Layout, errors: Vec<String>) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    if l.config.noinhibit_exec {
        for e in &errors {
            l.config.diag.warn(e);
        }
        return Ok(());
    }
    Err(Error::many(errors))
}

/// lld's `reportRangeError`: where (`file.o:(function f: .text+0x3)`), the value and the range,
/// what the relocation references, the source line and the defining file.
pub(crate) fn out_of_range(l: &Layout, at: RangeAt, r_type: u32, v: u64, t: Option<Target>) -> String {
    let info = arch::rel_info(r_type);
    let (min, max) = field_range(info.field);
    let section_sym = |g: usize, i: usize| l.sym(g, i).st_type() == elf::STT_SECTION;
    let (name, is_section) = match t {
        Some(Target::Global(id)) => (l.r.symbols[id].name, false),
        Some(Target::Local(g, i)) => (l.obj(g).sym_name(i as usize), section_sym(g, i as usize)),
        // Relocations in non-allocated sections name no symbol (lld's relocateNoSym).
        None => (&b""[..], true),
    };
    let place = match at {
        RangeAt::Input(f, s, off) => crate::elf::diag::reloc_location(l.obj(f), s as usize, off),
        RangeAt::EhFrame(off) => format!("<internal>:(.eh_frame+0x{off:x})"),
    };
    let mut msg = format!("{place}: relocation {} out of range: {} is not in [{}, {}]", arch::rel_name(r_type), v as i64, min, max);
    if let (true, Some(Target::Local(g, i))) = (is_section, t) {
        let sh = l.obj(g).shndx(i as usize) as usize;
        let sec = l.obj(g).sections.get(sh).map(|x| String::from_utf8_lossy(x.name).into_owned()).unwrap_or_default();
        msg.push_str(&format!("; references section '{sec}'"));
    } else if !is_section {
        msg.push_str(&format!("; references '{}'", crate::elf::diag::demangle(name)));
    }
    let src = match at {
        RangeAt::Input(f, s, off) => crate::elf::diag::src_msg(l.obj(f), s as usize, off, b""),
        RangeAt::EhFrame(_) => String::new(),
    };
    if !src.is_empty() {
        msg.push_str(&format!("\n>>> referenced by {src}"));
    }
    if let (false, Some(t)) = (is_section, t) {
        let file = match t {
            Target::Local(g, _) => l.r.inputs[g].name.clone(),
            Target::Global(id) => match l.r.symbols[id].def {
                Def::Defined(g, _) | Def::Common(g, _) | Def::Shared(g, _) => l.r.inputs[g].name.clone(),
                Def::Synthetic if l.config.defsym.iter().any(|(n, _)| n.as_bytes() == name) => "--defsym".to_string(),
                Def::Synthetic => "<internal>".to_string(),
                _ => "<internal>".to_string(),
            },
        };
        msg.push_str(&format!("\n>>> defined in {file}"));
    }
    if matches!(at, RangeAt::Input(f, s, _) if l.obj(f).sections[s as usize].name.starts_with(b".debug")) {
        msg.push_str("; consider recompiling with -fdebug-types-section to reduce size of debug sections");
    }
    msg
}

/// Where a relocation that overflows its field is: in an input section (file, section,
/// offset), or at an offset in the synthetic `.eh_frame`.
#[derive(Clone, Copy)]
pub(crate) enum RangeAt {
    Input(usize, u32, u64),
    EhFrame(u64),
}

/// The values a relocation field can hold, as lld prints them.
fn field_range(field: Field) -> (i128, i128) {
    match field {
        Field::I32 => (i32::MIN as i128, i32::MAX as i128),
        Field::U32 => (0, u32::MAX as i128),
        Field::I16 => (i16::MIN as i128, i16::MAX as i128),
        Field::U16 => (i16::MIN as i128, u16::MAX as i128),
        Field::I8 => (i8::MIN as i128, i8::MAX as i128),
        Field::U8 => (i8::MIN as i128, u8::MAX as i128),
        _ => (i64::MIN as i128, u64::MAX as i128),
    }
}

//! The relocation scan: every relocation of every live section, read by its generic kind, decides
//! the GOT slots, PLT entries, copy relocations, canonical PLTs, dynamic relocations and
//! relaxations (lld's `scanRelocations`); linker-defined symbols are decided before it.

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use dtld_arch::x86_64::{self as arch, RelKind};
use object::elf;
use object::read::elf::{Rela as _, Sym as _};

use crate::elf::object::ObjFile;
use crate::elf::symtab::{Def, File, FileId, SymbolId};
use crate::elf::types::LE;
use crate::error::{Error, Result};

use super::model::*;
use super::reloc_check;
use crate::elf::gc::Live;

pub(super) struct ScanOut {
    needs: Vec<(Target, u16)>,
    dynrels: Vec<DynRel>,
    /// (section, relocation index, fix), in scan order, which is that order.
    fixes: Vec<(u32, u32, SiteFix)>,
    undefined: Vec<(SymbolId, FileId, u32, u64)>,
    errors: Vec<String>,
}

pub(super) fn scan_relocations(l: &mut Layout, live: &Live) -> Result<()> {
    use rayon::prelude::*;
    let r = l.r;
    let files: Vec<FileId> = (0..r.files.len()).filter(|&f| r.loaded[f] && matches!(r.files[f], File::Obj(_))).collect();
    let outs: Vec<ScanOut> = {
        let lr: &Layout = l;
        files.par_iter().map(|&f| scan_file(lr, f, live)).collect()
    };
    let mut errors = Vec::new();
    let mut copy_errors = Vec::new();
    let mut undefined: BTreeMap<SymbolId, Vec<(FileId, u32, u64)>> = BTreeMap::new();
    let mut undef_order: Vec<SymbolId> = Vec::new();
    l.site_fix = vec![Vec::new(); r.files.len()];
    let mut ifunc_gots: Vec<Target> = Vec::new();
    for (&f, out) in files.iter().zip(outs) {
        errors.extend(out.errors);
        for (t, n) in out.needs {
            let ifunc_got = n & N_GOT != 0 && l.is_ifunc(t) && !l.is_preemptible(t);
            let fl = l.sym_flags.entry(t).or_default();
            if n & N_GOT != 0 && !fl.got {
                fl.got = true;
                if ifunc_got {
                    ifunc_gots.push(t);
                } else {
                    l.got_index.insert((t, GotKind::Addr), l.got.len() as u32);
                    l.got.push((t, GotKind::Addr));
                }
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
                    copy_errors.push(id);
                }
            }
        }
        l.dynrels.extend(out.dynrels);
        let mut fixes = out.fixes;
        // Already in order; a stable sort keeps it so for certain (and equal keys in push order:
        // the writer takes the last, as a table insert did).
        fixes.sort_by_key(|e| (e.0, e.1));
        l.site_fix[f] = fixes;
        for (id, f, s, off) in out.undefined {
            let e = undefined.entry(id).or_default();
            if e.is_empty() {
                undef_order.push(id);
            }
            e.push((f, s, off));
        }
    }
    // A non-preemptible IFUNC loaded through the GOT (lld's handleNonPreemptibleIfunc): when its
    // IPLT entry is canonical (a direct reference), a `.got` slot holds that entry's address;
    // otherwise GOT references read the entry's own `.got.plt` slot, the resolver's result.
    for t in ifunc_gots {
        if l.ifunc_canonical.contains(&t) {
            l.got_index.insert((t, GotKind::Addr), l.got.len() as u32);
            l.got.push((t, GotKind::Addr));
        } else {
            l.got_in_igot.insert(t);
        }
    }
    errors.extend(copy_errors.into_iter().filter_map(|id| reloc_check::copy_error(l, id)));
    undefined_messages(l, &undefined, undef_order, &mut errors);
    // A section `--icf` folded is not dead: its symbols now name the one kept in its place.
    let dead = |f: FileId, di: usize| match &r.files[f] {
        File::Obj(o) => o.sym_section(di).is_some_and(|sh| live[f].get(sh as usize).is_some_and(|&lv| !lv) && !l.icf_folded.contains_key(&(f, sh))),
        _ => false,
    };
    errors.extend(super::checks::shlib_undefined_errors(l.config, r, &|id| l.is_linker_defined(id), &dead));
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    share_copies_with_aliases(l);
    Ok(())
}

/// Aliases of a copy-relocated object (same library, same address) share its one copy (see
/// the comment inside).
fn share_copies_with_aliases(l: &mut Layout) {
    let r = l.r;
    // Aliases of a copy-relocated object (same library, same address) share its one copy, as
    // lld's `addCopyRelSymbol` makes them: the library's own references through any of its names
    // see the executable's copy, and `&foo == &bar` holds when the program takes both (one copy,
    // the first the scan met, stands for all). As in lld's getSymbolsAt, an alias is any global
    // of the library at that address but a TLS or absolute one, and the name joins the copy
    // whichever library the link bound it to (an earlier library defining it too is overruled:
    // the copy is defined and exported under that name).
    let copies = std::mem::take(&mut l.copies);
    let mut aliased = std::collections::HashSet::new();
    for id in copies {
        if aliased.contains(&id) {
            continue;
        }
        l.copies.push(id);
        let Def::Shared(f, k) = r.symbols[id].def else { continue };
        let dso = r.dso(f);
        let v = dso.syms[k].sym.st_value(LE);
        for (k2, ds) in dso.syms.iter().enumerate() {
            let (ty, shndx) = (ds.sym.st_type(), ds.sym.st_shndx(LE));
            if k2 == k || !ds.defined || ds.hidden || ds.sym.st_value(LE) != v || ty == elf::STT_TLS || shndx == elf::SHN_ABS {
                continue;
            }
            if let Some(aid) = r.lookup(ds.name) {
                if matches!(r.symbols[aid].def, Def::Shared(..)) && !l.copies.contains(&aid) && aliased.insert(aid) {
                    l.copy_alias.insert(aid, id);
                    l.sym_flags.entry(Target::Global(aid)).or_default().copy = true;
                }
            }
        }
    }
}

/// The undefined-symbol messages, in the order the symbols were met (errors, or warnings with
/// `--warn-unresolved-symbols`).
fn undefined_messages(l: &Layout, undefined: &BTreeMap<SymbolId, Vec<(FileId, u32, u64)>>, undef_order: Vec<SymbolId>, errors: &mut Vec<String>) {
    let r = l.r;
    // Undefined symbols, grouped per symbol with up to 3 references, like lld (which tries to
    // correct the spelling of the first two).
    for (k, id) in undef_order.into_iter().enumerate() {
        let refs = &undefined[&id];
        let sym = &r.symbols[id];
        let mut msg = super::undef::message(l, id, refs, k < 2);
        if sym.name.starts_with(b"_ZTV") {
            msg.push_str(
                "\n>>> the vtable symbol may be undefined because the class is missing its key function (see https://lld.llvm.org/missingkeyfunction)",
            );
        }
        if l.config.gc_sections && l.config.z_start_stop_gc && sym.name.starts_with(b"__start_") {
            msg.push_str("\n>>> the encapsulation symbol needs to be retained under --gc-sections properly; consider -z nostart-stop-gc (see https://lld.llvm.org/ELF/start-stop-gc)");
        }
        if l.config.warn_unresolved_symbols && sym.visibility == elf::STV_DEFAULT && !versioned_reference(sym) {
            l.config.diag.warn(&msg);
        } else {
            errors.push(msg);
        }
    }
}

/// Scans the relocations of file `f`'s live sections: what each needs (GOT slots, PLT
/// entries, copies, dynamic relocations, relaxations), the undefined symbols allocated
/// sections use, and the errors. The instruction after a relaxed TLSGD/TLSLD sequence's
/// first relocation is skipped (the relaxation rewrites both).
pub(super) fn scan_file(l: &Layout, f: FileId, live: &Live) -> ScanOut {
    let o = l.r.obj(f);
    let mut out = ScanOut { needs: Vec::new(), dynrels: Vec::new(), fixes: Vec::new(), undefined: Vec::new(), errors: Vec::new() };
    for (s, sec) in o.sections.iter().enumerate() {
        if !live[f][s] || sec.relocs.is_empty() {
            continue;
        }
        if !flag(sec.flags, elf::SHF_ALLOC) {
            check_non_alloc(l, f, s, &mut out);
            continue;
        }
        let mut skip_next = false;
        for (k, rel) in sec.relocs.iter().enumerate() {
            if skip_next {
                skip_next = false;
                out.fixes.push((s as u32, k as u32, SiteFix::Skip));
                continue;
            }
            let r_type = rel.r_type(LE, false);
            let si = rel.r_sym(LE, false) as usize;
            let site =
                RelSite { f, s, k, o, sec, r_type, info: arch::rel_info(r_type), off: rel.r_offset(LE), addend: rel.r_addend(LE), t: l.target_of(f, si) };
            if needs_scan(l, &site, si, &mut out) {
                skip_next = scan_reloc(l, &site, &mut out);
            }
        }
    }
    out
}

/// The relocations of a non-allocated section (most relocations of a debug build): the writer
/// resolves them statically, so the scan only checks them, exactly as `needs_scan` does for
/// such a section (unknown types, offsets out of bounds), without building a `RelSite` or
/// looking up symbols. A reference past the end of a mergeable section is the writer's
/// error, which reads the same symbol and section anyway (lld reports it there too).
fn check_non_alloc(l: &Layout, f: FileId, s: usize, out: &mut ScanOut) {
    let o = l.r.obj(f);
    let sec = &o.sections[s];
    for rel in sec.relocs {
        let r_type = rel.r_type(LE, false);
        let info = arch::rel_info(r_type);
        if info.kind == RelKind::None {
            continue;
        }
        let si = rel.r_sym(LE, false) as usize;
        if info.kind == RelKind::Unknown || (rel.r_offset(LE) as usize).saturating_add(info.field.size()) > sec.data.len() {
            // The rare error paths: `needs_scan` words them.
            let site = RelSite { f, s, k: 0, o, sec, r_type, info, off: rel.r_offset(LE), addend: rel.r_addend(LE), t: l.target_of(f, si) };
            needs_scan(l, &site, si, out);
        }
    }
}

/// One relocation being scanned: relocation `k` of section `s` (`sec`) of object `f` (`o`),
/// of type `r_type` at `off`, against `t`.
struct RelSite<'a> {
    f: FileId,
    s: usize,
    k: usize,
    o: &'a ObjFile,
    sec: &'a crate::elf::object::InputSection,
    r_type: u32,
    info: arch::RelInfo,
    off: u64,
    addend: i64,
    t: Target,
}

/// Whether the relocation needs anything from the link: not for R_X86_64_NONE, the null
/// symbol, or a non-allocated section (the writer resolves those statically); an unknown type
/// or an offset out of bounds is an error, and an undefined symbol (strong, not
/// linker-defined, not left to the loader) is recorded when the section is allocated.
fn needs_scan(l: &Layout, site: &RelSite, si: usize, out: &mut ScanOut) -> bool {
    let RelSite { f, s, o, sec, r_type, info, off, t, .. } = *site;
    if info.kind == RelKind::None {
        return false;
    }
    if info.kind == RelKind::Unknown {
        // lld's getErrorLoc: the place when it lies inside the section's bytes, else nothing.
        let place = if sec.sh_type != elf::SHT_NOBITS && off < sec.data.len() as u64 {
            format!("{}: ", crate::elf::diag::reloc_location(o, s, off))
        } else {
            String::new()
        };
        out.errors.push(format!("{place}unknown relocation ({r_type}) against symbol {}", crate::elf::diag::demangle(o.sym_name(si))));
        return false;
    }
    if (off as usize).saturating_add(info.field.size()) > sec.data.len() && sec.sh_type != elf::SHT_NOBITS {
        out.errors.push(format!("{}: relocation {} at offset 0x{:x} is out of bounds", o.input.name, arch::rel_name(r_type), off));
        return false;
    }
    if si == 0 {
        // Relocation against the null symbol: S = 0.
        return false;
    }
    let alloc = flag(sec.flags, elf::SHF_ALLOC);
    if !alloc {
        // Debug and other non-allocated sections are resolved statically by the writer, and
        // an undefined symbol there resolves to 0 without a diagnostic (as in lld); the
        // writer reports a reference past the end of a mergeable section.
        return false;
    }
    if let Target::Local(..) = t {
        // An FDE of a function a COMDAT group dropped goes with it (lld scans only the FDEs it
        // keeps), so only other sections' references are errors.
        // `.gcc_except_table` entries of such a function are not reported either (lld).
        if sec.kind != crate::elf::object::SecKind::EhFrame && sec.name != b".gcc_except_table" {
            if let Some(e) = reloc_check::discarded_local(l, f, si, s, off) {
                // --noinhibit-exec makes it a warning, as every undefined-symbol report.
                if l.config.noinhibit_exec {
                    l.config.diag.warn(&e);
                } else {
                    out.errors.push(e);
                }
                return false;
            }
        }
        if let Some(e) = reloc_check::undefined_local(o, si, s, off) {
            out.errors.push(e);
            return false;
        }
        if let Some(e) = reloc_check::merge_offset_error(l, t, site.addend) {
            out.errors.push(e);
            return false;
        }
    }
    // Undefined symbols.
    if let Target::Global(id) = t {
        let sym = &l.r.symbols[id];
        // lld's UnresolvedPolicy::Ignore (a shared library's default, `-z undefs`,
        // `--unresolved-symbols=ignore-*`): no diagnostic for a default-visibility symbol, which
        // a library leaves to the loader and an executable resolves as an undefined weak one.
        let ignored = l.config.unresolved_ignored() && sym.visibility == elf::STV_DEFAULT;
        // A hidden or protected reference cannot be resolved by a library (lld demotes the
        // library's definition to undefined).
        let undef = matches!(sym.def, Def::Undefined | Def::Lazy(_))
            || (matches!(sym.def, Def::Shared(..)) && sym.visibility != elf::STV_DEFAULT)
            || (matches!(sym.def, Def::Defined(..)) && reloc_check::in_excluded_section(l, id));
        // A library's definition demoted by a hidden reference leaves the references' binding:
        // all weak resolves to 0 without a diagnostic (lld).
        let weak = if matches!(sym.def, Def::Shared(..)) { !sym.strong_ref } else { sym.weak };
        // lld's maybeReportUndefined: a versioned reference (`foo@VER`) is an error whatever
        // the policy or binding, since no Verneed entry can be made without a defining file.
        let versioned = undef && versioned_reference(sym);
        if undef && (versioned || !weak && !ignored) && !l.is_linker_defined(id) {
            out.undefined.push((id, f, s as u32, off));
            // --warn-unresolved-symbols: the reference resolves to 0, as a weak one (a hidden
            // or protected symbol, which cannot come from elsewhere, stays an error, as in lld).
            if versioned || !(l.config.warn_unresolved_symbols && sym.visibility == elf::STV_DEFAULT) {
                return false;
            }
        }
    }
    true
}

/// A symbol an object names with a version (`foo@VER`; lld's `hasVersionSuffix`), or one
/// an archive member's `foo@@VER` definition renamed without being extracted (lld's
/// `SymbolTable::insert` files `foo@@VER` under `foo` and gives the symbol that name).
fn versioned_reference(sym: &crate::elf::symtab::Symbol) -> bool {
    sym.name.contains(&b'@') || sym.default_version.is_some()
}

/// What a relocation in an allocated section needs, by its kind; returns whether the next
/// relocation belongs to a relaxed TLS sequence and is to be skipped.
fn scan_reloc(l: &Layout, site: &RelSite, out: &mut ScanOut) -> bool {
    let RelSite { t, .. } = *site;
    match site.info.kind {
        RelKind::Abs => scan_abs(l, site, out),
        RelKind::Pc | RelKind::PltPc => scan_pc(l, site, out),
        RelKind::GotPc | RelKind::GotPcRelax | RelKind::GotPcRelaxRex | RelKind::GotOff => scan_got(l, site, out),
        RelKind::GotBasePc | RelKind::RelGotBase => {}
        RelKind::PltRelGotBase => {
            if l.is_preemptible(t) {
                out.needs.push((t, N_PLT));
            }
        }
        RelKind::Size => {}
        _ => return scan_tls(l, site, out),
    }
    false
}

/// An absolute reference: a symbolic dynamic relocation for a preemptible symbol (64-bit
/// field in writable data or with `-z notext`), else a canonical PLT entry or a copy in an
/// executable; RELATIVE for a PIC address; an error where a library cannot express it.
fn scan_abs(l: &Layout, site: &RelSite, out: &mut ScanOut) {
    let RelSite { f, s, k, sec, r_type, info, off, addend, t, .. } = *site;
    let r = l.r;
    let writable = flag(sec.flags, elf::SHF_WRITE);
    // The field of a dynamic relocation keeps the input's bytes (lld with RELA), unless
    // --apply-dynamic-relocs writes the value (RELATIVE) or the addend (symbolic). A RELR
    // relocation has no addend: its field always holds the value.
    let apply = l.config.apply_dynamic_relocs;
    let relative_fix = |out: &mut ScanOut| {
        let relr = l.config.relr() && crate::elf::relr::qualifies(l, Place::Input(f, s as u32, off));
        if !apply && !relr {
            out.fixes.push((s as u32, k as u32, SiteFix::Skip));
        }
    };
    if l.is_preemptible(t) {
        let Target::Global(id) = t else { unreachable!() };
        // A position-dependent executable's absolute address of a symbol no input defines is
        // zero at link time (lld: no dynamic relocation, although the symbol is dynamic and
        // its GOT and PLT entries are bound by the loader).
        let undefined_in_pde = !l.is_pic && matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_));
        if info.field.size() == 8 && (writable || !l.config.z_text) && !undefined_in_pde {
            out.dynrels.push(DynRel { place: Place::Input(f, s as u32, off), r_type: arch::r::R64, sym: Some(id), addend: Addend::Const(addend) });
            out.fixes.push((s as u32, k as u32, if apply { SiteFix::WriteAddend } else { SiteFix::Skip }));
        } else if l.config.shared {
            out.errors.push(reloc_check::pic_error(l, f, s, off, r_type, t));
        } else if matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_)) {
            // An undefined weak symbol a library may define at load time: in a position-
            // independent executable it stays dynamic (lld's -z dynamic-undefined-weak default
            // for PIC), so a field that no dynamic relocation can fill is lld's error; in a
            // position-dependent one it resolves to zero.
            if l.is_pic {
                out.errors.push(reloc_check::pic_error(l, f, s, off, r_type, t));
            }
        } else if let Some(n) = reloc_check::define_in_exe(l, f, s, off, r_type, id, &mut out.errors) {
            out.needs.push((t, n));
        }
    } else if l.is_ifunc(t) {
        // The canonical IPLT entry's address; in PIC output patched where a dynamic relocation
        // may write (as below), else lld's -fPIC error.
        out.needs.push((t, N_CANON_IFUNC));
        if l.is_pic && info.field.size() == 8 && (writable || !l.config.z_text) {
            out.dynrels.push(DynRel { place: Place::Input(f, s as u32, off), r_type: arch::r::RELATIVE, sym: None, addend: Addend::AddrOf(t, addend) });
            relative_fix(out);
        } else if l.is_pic {
            out.errors.push(reloc_check::pic_error(l, f, s, off, r_type, t));
        }
    } else if l.is_pic && !l.is_absolute(t) {
        // lld's canWrite: a dynamic relocation may patch a writable section, or any with
        // -z notext; a read-only one (non-PIC code's movabs in .text) is the -fPIC error.
        if info.field.size() == 8 && (writable || !l.config.z_text) {
            out.dynrels.push(DynRel { place: Place::Input(f, s as u32, off), r_type: arch::r::RELATIVE, sym: None, addend: Addend::AddrOf(t, addend) });
            relative_fix(out);
        } else {
            out.errors.push(reloc_check::pic_error(l, f, s, off, r_type, t));
        }
    }
}

/// A PC-relative reference or call: a PLT entry for a preemptible call, else a canonical
/// PLT entry or a copy in an executable (an error in a library); an IPLT entry for an IFUNC.
fn scan_pc(l: &Layout, site: &RelSite, out: &mut ScanOut) {
    let RelSite { f, s, r_type, info, off, t, .. } = *site;
    let r = l.r;
    if l.is_preemptible(t) {
        let Target::Global(id) = t else { unreachable!() };
        if info.kind == RelKind::PltPc {
            out.needs.push((t, N_PLT));
        } else if matches!(r.symbols[id].def, Def::Undefined | Def::Lazy(_)) {
            // A symbol left to the loader (undefined in a library, undefined weak in a
            // position-independent executable): no dynamic relocation fills a PC-relative field,
            // lld's error; in a position-dependent executable an undefined weak one is zero.
            if l.is_pic {
                out.errors.push(reloc_check::pic_error(l, f, s, off, r_type, t));
            }
        } else if l.config.shared {
            // Only an executable (PIE included, as lld) can take a library
            // symbol's address with a copy or a canonical PLT entry.
            if l.is_func(id) {
                out.needs.push((t, N_PLT));
            }
            out.errors.push(reloc_check::pic_error(l, f, s, off, r_type, t));
        } else if let Some(n) = reloc_check::define_in_exe(l, f, s, off, r_type, id, &mut out.errors) {
            out.needs.push((t, n));
        }
    } else if l.is_ifunc(t) {
        out.needs.push((t, if info.kind == RelKind::PltPc { N_IPLT } else { N_CANON_IFUNC }));
    } else if l.is_pic {
        if let Some(e) = reloc_check::absolute_pc_error(l, f, s, off, r_type, t) {
            out.errors.push(e);
        }
    }
}

/// A GOT reference: relaxed to a direct reference (GOTPCRELX on a `mov` or an indirect
/// call/jump, to a symbol that is final and not an absolute one in PIC; in non-PIC output also
/// REX_GOTPCRELX on `test` and the binary operations, which take the address as an immediate)
/// when `--relax` allows, else a GOT slot. As lld, only an addend of -4 relaxes: another one
/// reads part of the slot. A non-preemptible IFUNC never relaxes (lld): it gets an IPLT entry,
/// whose `.got.plt` slot the GOT load reads unless the entry is canonical (see the merge).
fn scan_got(l: &Layout, site: &RelSite, out: &mut ScanOut) {
    let RelSite { s, k, sec, info, off, t, addend, .. } = *site;
    let preempt = l.is_preemptible(t);
    if !preempt && l.is_ifunc(t) {
        out.needs.push((t, N_GOT | N_IPLT));
        return;
    }
    // --no-relax keeps every GOT load (lld: only GOTPCRELX rewriting is off).
    let relaxable = matches!(info.kind, RelKind::GotPcRelax | RelKind::GotPcRelaxRex)
        && addend == -4
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
        let is_imm = !l.is_pic && info.kind == RelKind::GotPcRelaxRex && arch::is_gotpcrelx_imm_form(d, o2);
        if o2 >= 2 && d[o2 - 1] & 0xc7 == 0x05 && (is_mov || is_branch || is_imm) {
            out.fixes.push((s as u32, k as u32, SiteFix::GotPcRelax));
            relaxed = true;
        }
    }
    if !relaxed {
        out.needs.push((t, N_GOT));
    }
}

/// The name `t` has in messages (empty for a section symbol).
fn target_sym_name(l: &Layout, t: Target) -> &'static [u8] {
    match t {
        Target::Global(id) => l.r.symbols[id].name,
        Target::Local(g, i) => {
            let o = l.r.obj(g);
            if o.symbols[i as usize].st_type() == elf::STT_SECTION {
                b""
            } else {
                o.sym_name(i as usize)
            }
        }
    }
}

/// A TLS relocation: a library keeps the general/local-dynamic and descriptor models (GOT
/// entries for the loader); an executable relaxes them to initial-exec (preemptible symbol)
/// or local-exec, checking the code sequences lld can rewrite. Returns whether the next
/// relocation (the `__tls_get_addr` call of a relaxed TLSGD/TLSLD) is to be skipped.
fn scan_tls(l: &Layout, site: &RelSite, out: &mut ScanOut) -> bool {
    let RelSite { s, k, o, sec, r_type, info, off, t, .. } = *site;
    let exe = !l.config.shared;
    let preempt = l.is_preemptible(t);
    let fix = (s as u32, k as u32);
    let mut need = |t: Target, n: u16| out.needs.push((t, n));
    match info.kind {
        RelKind::TlsGd => {
            if !exe {
                // A shared library keeps general-dynamic: a GOT pair for the loader.
                need(t, N_GOTGD);
                return false;
            } else if preempt {
                out.fixes.push((fix.0, fix.1, SiteFix::TlsGdToIe));
                need(t, N_GOTTP);
            } else {
                out.fixes.push((fix.0, fix.1, SiteFix::TlsGdToLe));
            }
            if !tls_gd_pattern(sec.data, off as usize) {
                out.errors.push(format!("{}: R_X86_64_TLSGD must be followed by a call to __tls_get_addr", crate::elf::diag::location(o, s, off)));
            }
            return true;
        }
        RelKind::TlsLd => {
            if !exe {
                need(TLS_LD_TARGET, N_GOTGD);
                return false;
            }
            out.fixes.push((fix.0, fix.1, SiteFix::TlsLdToLe));
            let d = sec.data;
            let o2 = off as usize;
            // lld rewrites what follows a direct or GOT-indirect call, and refuses the rest.
            if !(d.len() >= o2 + 6 && (d[o2 + 4] == 0xe8 || (d[o2 + 4] == 0xff && d[o2 + 5] == 0x15))) {
                out.errors.push(format!(
                    "{}: expected R_X86_64_PLT32 or R_X86_64_GOTPCRELX after R_X86_64_TLSLD",
                    crate::elf::diag::reloc_location(o, s, off.saturating_sub(3))
                ));
            }
            return true;
        }
        // lld's checkTlsLe: local-exec needs the executable's TLS block.
        RelKind::TpOff if l.config.shared => {
            let name = match t {
                Target::Global(id) => crate::elf::diag::demangle(l.r.symbols[id].name),
                Target::Local(g, i) => crate::elf::diag::demangle(l.r.obj(g).sym_name(i as usize)),
            };
            out.errors.push(format!(
                "relocation {} against {name} cannot be used with -shared{}",
                arch::rel_name(r_type),
                crate::elf::diag::print_location(&super::reloc_check::defined_in(l, t, site.f), o, s, off, target_sym_name(l, t))
            ));
        }
        RelKind::TpOff if preempt => {
            out.errors.push(format!("{}: relocation {} against preemptible symbol", crate::elf::diag::location(o, s, off), arch::rel_name(r_type)));
        }
        RelKind::DtpOff | RelKind::TpOff => {}
        RelKind::GotTpOff => {
            let d = sec.data;
            let o2 = off as usize;
            let can = exe && !preempt && o2 >= 3 && (d[o2 - 3] & 0xf0) == 0x40 && d[o2 - 1] & 0xc7 == 0x05 && matches!(d[o2 - 2], 0x8b | 0x03);
            if can {
                out.fixes.push((fix.0, fix.1, SiteFix::TlsIeToLe));
            } else if exe && !preempt && r_type == elf::R_X86_64_GOTTPOFF {
                // lld relaxes every such reference in an executable and refuses other code.
                out.errors.push(format!(
                    "{}: R_X86_64_GOTTPOFF must be used in MOVQ or ADDQ instructions only",
                    crate::elf::diag::reloc_location(o, s, off.saturating_sub(3))
                ));
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
            let d = sec.data;
            let o2 = off as usize;
            // lld rewrites `leaq x@tlsdesc(%rip), %reg` only.
            if !(o2 >= 3 && (d[o2 - 3] & 0xfb) == 0x48 && d[o2 - 2] == 0x8d && (d[o2 - 1] & 0xc7) == 0x05) {
                out.errors.push(format!(
                    "{}: R_X86_64_GOTPC32_TLSDESC/R_X86_64_CODE_4_GOTPC32_TLSDESC must be used in leaq x@tlsdesc(%rip), %REG",
                    crate::elf::diag::reloc_location(o, s, off.saturating_sub(3))
                ));
                return false;
            }
            if preempt {
                out.fixes.push((fix.0, fix.1, SiteFix::TlsDescToIe));
                need(t, N_GOTTP);
            } else {
                out.fixes.push((fix.0, fix.1, SiteFix::TlsDescToLe));
            }
        }
        RelKind::TlsDescCall => {
            out.fixes.push((fix.0, fix.1, SiteFix::TlsDescCallNop));
        }
        _ => {}
    }
    false
}

pub(super) fn is_undef(l: &Layout, t: Target) -> bool {
    match t {
        Target::Global(id) => matches!(l.r.symbols[id].def, Def::Undefined | Def::Lazy(_)) && !l.is_linker_defined(id),
        Target::Local(..) => false,
    }
}

pub(super) fn tls_gd_pattern(d: &[u8], off: usize) -> bool {
    off >= 4
        && d.len() >= off + 12
        && d[off - 4..off] == [0x66, 0x48, 0x8d, 0x3d]
        && (d[off + 4..off + 8] == [0x66, 0x66, 0x48, 0xe8] || d[off + 4..off + 8] == [0x66, 0x48, 0xff, 0x15])
}

/// Which undefined references the linker defines, now that the output sections are known
/// (lld's `addReservedSymbols`, `addStartEndSymbols`, `addStartStopSymbols`, `_DYNAMIC`).
pub(super) fn decide_linker_symbols(l: &mut Layout) {
    let r = l.r;
    let osec_exists = |name: &[u8]| l.osecs.iter().any(|o| o.name.as_bytes() == name);
    let eh_frame_hdr = l.config.eh_frame_hdr && !l.eh_records.is_empty();
    let defined: Vec<bool> = r
        .symbols
        .iter()
        .map(|s| {
            if !matches!(s.def, Def::Undefined | Def::Lazy(_)) || !crate::elf::reserved::is_linker_defined(s.name) {
                return false;
            }
            match s.name {
                b"_DYNAMIC" => l.has_dynamic,
                // glibc's static start-up code applies IRELATIVE relocations between these;
                // position-independent output has none of them (lld: non-PIC only).
                b"__rela_iplt_start" | b"__rela_iplt_end" => !l.is_pic,
                b"__GNU_EH_FRAME_HDR" => eh_frame_hdr,
                // lld's addReservedSymbols: a SECTIONS script defines these itself, if at all.
                b"__bss_start" | b"_end" | b"end" | b"_etext" | b"etext" | b"_edata" | b"edata" => !l.config.script.has_sections,
                n => match n.strip_prefix(b"__start_").or_else(|| n.strip_prefix(b"__stop_")) {
                    Some(sec) => osec_exists(sec),
                    None => true,
                },
            }
        })
        .collect();
    l.linker_defined = defined;
}

// ------------------------------------------------------------------------------------------------
// Dynamic symbols
// ------------------------------------------------------------------------------------------------

/// `__start_foo`/`__stop_foo` with an output section `foo`: the linker defines it.
pub(super) fn start_stop_section_exists(l: &Layout, name: &[u8]) -> bool {
    match name.strip_prefix(b"__start_").or_else(|| name.strip_prefix(b"__stop_")) {
        Some(sec) => l.osecs.iter().any(|o| o.name.as_bytes() == sec),
        None => false,
    }
}

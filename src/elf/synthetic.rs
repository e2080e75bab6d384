//! Contents of the sections the linker makes itself.
//!
//! `.dynsym`, `.dynstr`, `.gnu.version(_r)`, `.gnu.hash`, `.hash`, `.rela.dyn`, `.rela.plt`,
//! `.plt`, `.iplt`, `.got`, `.got.plt`, `.dynamic`, `.eh_frame` (rebuilt from kept records),
//! `.eh_frame_hdr`, `.interp`, `.comment` and the build-id note. Sizes are known as soon as the
//! relocation scan has run (`size`); contents are written once addresses are final (`write`).

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::android_rela as android;
use crate::elf::layout::dynsym::is_defined_for_dynsym;
use crate::elf::layout::model::{rela_fields, Chunk, DynRel, Layout, Synth, Target};
use crate::elf::symtab::{Def, SymbolId};
use crate::elf::types::LE;
use crate::output::{put16, put32, put64};
use dtld_arch::x86_64 as arch;

use crate::elf::types::{gnu_hash, gnu_hash_nbuckets, sysv_hash};

fn bloom_words(ndefined: usize) -> usize {
    // One 64-bit word per 8 symbols (two bits each at about 1/4 fill), a power of two.
    let n = (ndefined / 8).max(1);
    n.next_power_of_two()
}

/// Prepares `.dynstr` and version needs. Called once dynamic symbols are chosen.
pub fn prepare_dynamic_strings(l: &mut Layout) {
    let mut strs: Vec<u8> = vec![0];
    let mut index: crate::util::fasthash::FastMap<Vec<u8>, u32> = Default::default();
    let mut add = |s: &[u8], strs: &mut Vec<u8>| -> u32 {
        if let Some(&o) = index.get(s) {
            return o;
        }
        let o = strs.len() as u32;
        strs.extend_from_slice(s);
        strs.push(0);
        index.insert(s.to_vec(), o);
        o
    };
    // lld's order: the dynamic symbols' names, then the .dynamic entries' strings in the
    // order of their tags (DT_FILTER, DT_AUXILIARY, DT_RUNPATH, DT_NEEDED, DT_SONAME).
    for &id in &l.dynsyms.clone() {
        add(crate::elf::layout::dynsym::dyn_name(l, id), &mut strs);
    }
    for name in l.config.filter.iter().chain(&l.config.auxiliary) {
        add(name.as_bytes(), &mut strs);
    }
    if !l.config.rpath.is_empty() {
        add(l.config.rpath.join(":").as_bytes(), &mut strs);
    }
    for &f in &l.needed.clone() {
        let so = l.r.dso(f).soname.clone();
        add(so.as_bytes(), &mut strs);
    }
    if let Some(s) = &l.config.soname {
        add(s.as_bytes(), &mut strs);
    }
    // Version needs: per library, the versions our dynamic symbols bind to (a library
    // `--as-needed` left out has no symbols left: `layout::mark_live` demoted them).
    let mut verneed: Vec<(usize, Vec<&'static [u8]>)> = Vec::new();
    for &id in &l.dynsyms {
        if let Def::Shared(f, k) = l.r.symbols[id].def {
            if let Some(v) = l.r.dso(f).syms[k].version {
                let pos = match verneed.iter().position(|(ff, _)| *ff == f) {
                    Some(p) => p,
                    None => {
                        verneed.push((f, Vec::new()));
                        verneed.len() - 1
                    }
                };
                if !verneed[pos].1.contains(&v) {
                    verneed[pos].1.push(v);
                }
            }
        }
    }
    for (f, vers) in &verneed {
        add(l.r.dso(*f).soname.as_bytes(), &mut strs);
        for v in vers {
            add(v, &mut strs);
        }
    }
    // Version definitions: the base version (the soname or output name), then the script's.
    if !l.r.versions.is_empty() {
        add(verdef_base_name(l).as_bytes(), &mut strs);
        for v in &l.r.versions.clone() {
            add(v.as_bytes(), &mut strs);
        }
    }
    if crate::elf::relr::glibc_verneed(l.config, l.r, &verneed).is_some() {
        add(crate::elf::relr::GLIBC_ABI_DT_RELR, &mut strs);
    }
    l.verneed = verneed;
    l.dynstr = strs;
    l.dynstr_off = index;
}

/// The name of the base version definition (index 1): the soname, else the output's
/// file name (lld's `getFileDefName`).
pub fn verdef_base_name(l: &Layout) -> String {
    match &l.config.soname {
        Some(s) => s.clone(),
        None => l.config.output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
    }
}

/// Number of version definitions including the base one (0 without a version script).
pub fn verdef_count(l: &Layout) -> usize {
    if l.r.versions.is_empty() {
        0
    } else {
        1 + l.r.versions.len()
    }
}

pub fn dynstr(l: &Layout, s: &[u8]) -> u32 {
    l.dynstr_off.get(s).copied().unwrap_or(0)
}

fn ndefined_dynsyms(l: &Layout) -> usize {
    l.dynsyms.iter().filter(|&&id| is_defined_for_dynsym(l, id)).count()
}

pub fn size(l: &Layout, s: Synth) -> u64 {
    let c = l.config;
    match s {
        Synth::Interp => c.dynamic_linker.as_ref().map_or(0, |d| d.len() as u64 + 1),
        Synth::GnuProperty => 32,
        Synth::BuildId => 16 + build_id_len(l) as u64,
        Synth::DynSym => (1 + l.dynsyms.len() as u64) * 24,
        Synth::DynStr => l.dynstr.len() as u64,
        Synth::Versym => (1 + l.dynsyms.len() as u64) * 2,
        Synth::Verneed => {
            let relr = crate::elf::relr::glibc_verneed(c, l.r, &l.verneed).map_or(0, |_| 16);
            l.verneed.iter().map(|(_, v)| 16 + 16 * v.len() as u64).sum::<u64>() + relr
        }
        Synth::Verdef => verdef_count(l) as u64 * 28,
        Synth::GnuHash => {
            let nd = ndefined_dynsyms(l);
            16 + bloom_words(nd) as u64 * 8 + gnu_hash_nbuckets(nd) as u64 * 4 + nd as u64 * 4
        }
        Synth::SysvHash => {
            let n = 1 + l.dynsyms.len() as u64;
            (2 + n + n) * 4
        }
        Synth::RelaDyn if crate::elf::android_rela::enabled(l) => l.android_rela.len() as u64,
        Synth::RelaDyn => (l.dynrels.len() + l.irelatives.len()) as u64 * 24,
        Synth::RelrDyn => l.relr_words.len() as u64 * 8,
        Synth::RelaPlt => l.plt.len() as u64 * 24,
        Synth::EhFrameHdr => 12 + 8 * l.eh_records.iter().filter(|r| !r.is_cie).count() as u64,
        Synth::EhFrame => l.eh_size,
        Synth::Plt => arch::PLT_HEADER_SIZE as u64 + arch::PLT_ENTRY_SIZE as u64 * l.plt.len() as u64,
        Synth::Iplt => arch::IPLT_ENTRY_SIZE as u64 * l.iplt.len() as u64,
        Synth::Dynamic => dynamic_entries(l).len() as u64 * 16,
        Synth::Got => l.got.len() as u64 * 8,
        Synth::GotPlt => (3 + l.plt.len() + l.iplt.len()) as u64 * 8,
        Synth::RelroPadding => 0,
        Synth::Comment => l.config.comment.len() as u64 + 1,
        Synth::GdbIndex => l.gdb_index.as_ref().map_or(0, |g| g.size),
    }
}

pub fn build_id_len(l: &Layout) -> usize {
    build_id_size(l.config)
}

/// Bytes of the build ID the options ask for (0: no note). Also used by the `-r` writer.
pub fn build_id_size(c: &crate::elf::config::Config) -> usize {
    use crate::elf::config::BuildId;
    if !c.build_id_hex.is_empty() {
        return c.build_id_hex.len();
    }
    match c.build_id {
        BuildId::None => 0,
        BuildId::Fast => 8,
        BuildId::Md5 | BuildId::Uuid => 16,
        BuildId::Sha1 => 20,
    }
}

pub fn dynamic_entries(l: &Layout) -> Vec<(u32, u64)> {
    let c = l.config;
    let mut d: Vec<(u32, u64)> = Vec::new();
    let addr = |s: Synth| l.synth_addr(s);
    // lld's order (DynamicSection::computeContents).
    for name in &c.filter {
        d.push((elf::DT_FILTER, dynstr(l, name.as_bytes()) as u64));
    }
    for name in &c.auxiliary {
        d.push((elf::DT_AUXILIARY, dynstr(l, name.as_bytes()) as u64));
    }
    if !c.rpath.is_empty() {
        let tag = if c.enable_new_dtags { elf::DT_RUNPATH } else { elf::DT_RPATH };
        d.push((tag, dynstr(l, c.rpath.join(":").as_bytes()) as u64));
    }
    for &f in &l.needed {
        d.push((elf::DT_NEEDED, dynstr(l, l.r.dso(f).soname.as_bytes()) as u64));
    }
    if let Some(s) = &c.soname {
        d.push((elf::DT_SONAME, dynstr(l, s.as_bytes()) as u64));
    }
    let mut flags = 0u64;
    let mut flags1 = 0u64;
    if c.z_now {
        flags |= elf::DF_BIND_NOW as u64;
        flags1 |= elf::DF_1_NOW as u64;
    }
    if c.pie {
        flags1 |= elf::DF_1_PIE as u64;
    }
    // The rest of lld's flags (lld/ELF/SyntheticSections.cpp, DynamicSection).
    if c.z_nodefaultlib {
        flags1 |= elf::DF_1_NODEFLIB as u64;
    }
    if c.z_nodelete {
        flags1 |= elf::DF_1_NODELETE as u64;
    }
    if c.z_nodlopen {
        flags1 |= elf::DF_1_NOOPEN as u64;
    }
    if c.z_origin {
        flags |= elf::DF_ORIGIN as u64;
        flags1 |= elf::DF_1_ORIGIN as u64;
    }
    if c.z_initfirst {
        flags1 |= elf::DF_1_INITFIRST as u64;
    }
    if c.z_interpose {
        flags1 |= elf::DF_1_INTERPOSE as u64;
    }
    if c.z_global {
        flags1 |= elf::DF_1_GLOBAL as u64;
    }
    if !c.z_text {
        flags |= elf::DF_TEXTREL as u64;
    }
    // lld sets DF_SYMBOLIC for -Bsymbolic in any output with a .dynamic, executables too.
    if c.bsymbolic == crate::elf::config::Bsymbolic::All {
        flags |= elf::DF_SYMBOLIC as u64;
    }
    // Initial-exec TLS in a shared library needs static TLS space at load time.
    if c.shared && l.got.iter().any(|(_, k)| *k == crate::elf::layout::model::GotKind::TpOff) {
        flags |= elf::DF_STATIC_TLS as u64;
    }
    if flags != 0 {
        d.push((elf::DT_FLAGS, flags));
    }
    if flags1 != 0 {
        d.push((elf::DT_FLAGS_1, flags1));
    }
    if !c.shared && !c.z_rodynamic {
        d.push((elf::DT_DEBUG, 0));
    }
    let nrela = (l.dynrels.len() + l.irelatives.len()) as u64;
    if nrela > 0 {
        d.extend(rela_tags(l, nrela, addr(Synth::RelaDyn)));
    }
    if !l.relr.is_empty() {
        // DT_RELR, DT_RELRSZ, DT_RELRENT (the gABI's numbers; `object` does not name them), or
        // Android's older tags with --use-android-relr-tags.
        let tags = if c.use_android_relr_tags { [android::DT_ANDROID_RELR, android::DT_ANDROID_RELRSZ, android::DT_ANDROID_RELRENT] } else { [36, 35, 37] };
        d.push((tags[0], addr(Synth::RelrDyn)));
        d.push((tags[1], l.relr_words.len() as u64 * 8));
        d.push((tags[2], 8));
    }
    if !l.plt.is_empty() {
        d.push((elf::DT_JMPREL, addr(Synth::RelaPlt)));
        d.push((elf::DT_PLTRELSZ, l.plt.len() as u64 * 24));
        d.push((elf::DT_PLTGOT, addr(Synth::GotPlt)));
        d.push((elf::DT_PLTREL, elf::DT_RELA as u64));
    }
    d.push((elf::DT_SYMTAB, addr(Synth::DynSym)));
    d.push((elf::DT_SYMENT, 24));
    d.push((elf::DT_STRTAB, addr(Synth::DynStr)));
    d.push((elf::DT_STRSZ, l.dynstr.len() as u64));
    if l.synth_osec.contains_key(&Synth::GnuHash) {
        d.push((elf::DT_GNU_HASH, addr(Synth::GnuHash)));
    }
    if l.synth_osec.contains_key(&Synth::SysvHash) {
        d.push((elf::DT_HASH, addr(Synth::SysvHash)));
    }
    for (name, tag, sz) in [
        (".preinit_array", elf::DT_PREINIT_ARRAY, elf::DT_PREINIT_ARRAYSZ),
        (".init_array", elf::DT_INIT_ARRAY, elf::DT_INIT_ARRAYSZ),
        (".fini_array", elf::DT_FINI_ARRAY, elf::DT_FINI_ARRAYSZ),
    ] {
        if let Some(os) = l.osecs.iter().find(|o| o.name == name) {
            d.push((tag, os.addr));
            d.push((sz, os.size));
        } else if c.script.has_sections && c.script.cmds.iter().any(|sc| matches!(sc, crate::elf::script::ast::SecCmd::Out(d) if d.name == name)) {
            // lld creates a script's output sections when it reads the script, and finds this
            // one by name even after dropping it as empty: the tags stay, with address and size 0.
            d.push((tag, 0));
            d.push((sz, 0));
        }
    }
    // `-init`/`-fini` name the functions (default `_init`/`_fini`); the tag is written only
    // when this output defines the symbol, as lld does.
    let init = c.init.as_deref().unwrap_or("_init");
    let fini = c.fini.as_deref().unwrap_or("_fini");
    for (name, tag) in [(init, elf::DT_INIT), (fini, elf::DT_FINI)] {
        if let Some(id) = l.r.lookup(name.as_bytes()) {
            if let Def::Defined(..) = l.r.symbols[id].def {
                d.push((tag, l.sym_value[id]));
            }
        }
    }
    if !l.verneed.is_empty() || verdef_count(l) > 0 {
        d.push((elf::DT_VERSYM, addr(Synth::Versym)));
    }
    if verdef_count(l) > 0 {
        d.push((elf::DT_VERDEF, addr(Synth::Verdef)));
        d.push((elf::DT_VERDEFNUM, verdef_count(l) as u64));
    }
    if !l.verneed.is_empty() {
        d.push((elf::DT_VERNEED, addr(Synth::Verneed)));
        d.push((elf::DT_VERNEEDNUM, l.verneed.len() as u64));
    }
    d.push((elf::DT_NULL, 0));
    d
}

/// The section index and value a dynamic symbol gets.
fn dynsym_fields(l: &Layout, id: SymbolId) -> (u16, u64, u64, u8) {
    let s = &l.r.symbols[id];
    let t = Target::Global(id);
    match s.def {
        // A canonical IFUNC (its address taken in non-PIC code) is exported as the plain
        // function at its IPLT entry, so that a library's references resolve to the address
        // the executable uses (lld; the loader would otherwise call the resolver).
        Def::Defined(f, i) if l.ifunc_canonical.contains(&t) => {
            let iplt = l.synth_osec.get(&Synth::Iplt).map_or(0, |&o| crate::elf::types::split_shndx(l.osecs[o].shndx).0);
            let bind = l.sym(f, i).st_bind();
            (iplt, l.addr_of(t), 0, (bind << 4) | elf::STT_FUNC)
        }
        Def::Defined(f, i) => {
            let sym = l.sym(f, i);
            // A definition in a section that is not in the output (discarded, or one the linker
            // never copies) reads as undefined, as lld demotes such symbols.
            let shndx = if sym.st_shndx(LE) == elf::SHN_ABS {
                elf::SHN_ABS
            } else {
                match l.obj(f).sym_section(i).and_then(|sh| l.sec_osec[f].get(sh as usize).copied()) {
                    Some(o) if o != u32::MAX => crate::elf::types::split_shndx(l.osecs[o as usize].shndx).0,
                    _ => return (elf::SHN_UNDEF, 0, 0, sym.st_info()),
                }
            };
            // A TLS symbol's value is its offset in the TLS segment.
            let v = if sym.st_type() == elf::STT_TLS { l.sym_value[id].wrapping_sub(l.tls_start()) } else { l.sym_value[id] };
            // --no-gnu-unique: STB_GNU_UNIQUE is exported as STB_GLOBAL (lld).
            let info = if sym.st_bind() == elf::STB_GNU_UNIQUE && l.config.no_gnu_unique { (elf::STB_GLOBAL << 4) | sym.st_type() } else { sym.st_info() };
            (shndx, v, sym.st_size(LE), info)
        }
        Def::Common(f, i) => {
            let sym = l.sym(f, i);
            let os = l.osecs.iter().find(|o| o.chunks.contains(&Chunk::Bss(id))).map(|o| o.shndx).unwrap_or(0);
            (crate::elf::types::split_shndx(os).0, l.sym_value[id], sym.st_size(LE), (elf::STB_GLOBAL << 4) | elf::STT_OBJECT)
        }
        Def::Shared(f, k) => {
            let ds = l.r.dso(f).syms[k].sym;
            let bind = if s.strong_ref || l.sym_flags.get(&t).is_some_and(|f| f.copy) { elf::STB_GLOBAL } else { elf::STB_WEAK };
            let bind = if ds.st_bind() == elf::STB_WEAK && !s.strong_ref { elf::STB_WEAK } else { bind };
            // An undefined reference is a plain function even when the library's definition
            // is an IFUNC (the library resolves it), as lld writes it.
            let ty = if ds.st_type() == elf::STT_GNU_IFUNC { elf::STT_FUNC } else { ds.st_type() };
            let info = (bind << 4) | ty;
            let flags = l.sym_flags.get(&t);
            if flags.is_some_and(|f| f.copy) {
                let primary = l.copy_alias.get(&id).copied().unwrap_or(id);
                let os = l.osecs.iter().find(|o| o.chunks.contains(&Chunk::Bss(primary))).map(|o| o.shndx).unwrap_or(0);
                // A copy keeps the binding its references give it; an alias nobody referenced
                // keeps the library's.
                let bind = if s.obj_ref {
                    if s.strong_ref {
                        elf::STB_GLOBAL
                    } else {
                        elf::STB_WEAK
                    }
                } else {
                    ds.st_bind()
                };
                (crate::elf::types::split_shndx(os).0, l.sym_value[id], ds.st_size(LE), (bind << 4) | ty)
            } else if flags.is_some_and(|f| f.canonical) {
                (0, l.plt_entry_addr(l.plt_index[&id]), 0, info)
            } else {
                (0, 0, 0, info)
            }
        }
        Def::Synthetic => {
            let (shndx, v, ty) = crate::elf::symentry::defsym_fields(l, id);
            (crate::elf::types::split_shndx(shndx).0, v, 0, (elf::STB_GLOBAL << 4) | ty)
        }
        _ => match l.synthetic_syms.get(&id) {
            // `__start_foo`/`__stop_foo` exported with --export-dynamic or -shared: defined in
            // the output section `foo`, as lld writes them.
            // So are the end markers (`_end` in the section it ends).
            Some(&v) => {
                let (info, shndx, v, size) = crate::elf::symentry::linker_defined_entry(l, s.name, v);
                (crate::elf::types::split_shndx(shndx).0, v, size, info)
            }
            // An undefined symbol (weak in executables; a library's may be strong).
            None => {
                let bind = if s.strong_ref { elf::STB_GLOBAL } else { elf::STB_WEAK };
                (0, 0, 0, (bind << 4) | s.ref_type.unwrap_or(elf::STT_NOTYPE))
            }
        },
    }
}

fn version_index(l: &Layout, id: SymbolId) -> u16 {
    if let Def::Shared(f, k) = l.r.symbols[id].def {
        if let Some(v) = l.r.dso(f).syms[k].version {
            // Needed versions are numbered after the defined ones.
            let mut idx = (verdef_count(l).max(1) + 1) as u16;
            for (ff, vers) in &l.verneed {
                for vv in vers {
                    if *ff == f && *vv == v {
                        return idx;
                    }
                    idx += 1;
                }
            }
        }
        return 1;
    }
    let s = &l.r.symbols[id];
    if matches!(s.def, Def::Defined(..) | Def::Common(..)) || l.exports_linker_defined(id) {
        s.version | if s.version_hidden { 0x8000 } else { 0 }
    } else if is_defined_for_dynsym(l, id) {
        1
    } else {
        // Undefined weak: global.
        1
    }
}

/// Writes a synthetic section's contents into `buf` (exactly `size(l, s)` bytes).
pub fn write(l: &Layout, s: Synth, buf: &mut [u8]) {
    match s {
        Synth::Interp => {
            if let Some(d) = &l.config.dynamic_linker {
                buf[..d.len()].copy_from_slice(d.as_bytes());
            }
        }
        Synth::GnuProperty => write_gnu_property(l, buf),
        Synth::BuildId => write_build_id_header(l, buf),
        Synth::DynSym => write_dynsym(l, buf),
        Synth::DynStr => buf.copy_from_slice(&l.dynstr),
        Synth::Versym => write_versym(l, buf),
        Synth::Verdef => write_verdef(l, buf),
        Synth::Verneed => write_verneed(l, buf),
        Synth::GnuHash => write_gnu_hash(l, buf),
        Synth::SysvHash => write_sysv_hash(l, buf),
        Synth::RelaDyn if crate::elf::android_rela::enabled(l) => crate::elf::android_rela::write(l, buf),
        Synth::RelaDyn => write_rela_dyn(l, buf),
        Synth::RelrDyn => crate::elf::relr::write(l, buf),
        Synth::RelaPlt => write_rela_plt(l, buf),
        Synth::Plt => write_plt(l, buf),
        Synth::Iplt => write_iplt(l, buf),
        Synth::Dynamic => write_dynamic(l, buf),
        Synth::Got => write_got(l, buf),
        Synth::GotPlt => write_gotplt(l, buf),
        Synth::RelroPadding => {}
        Synth::Comment => {
            let n = l.config.comment.len();
            buf[..n].copy_from_slice(l.config.comment.as_bytes());
            buf[n] = 0;
        }
        Synth::GdbIndex => crate::elf::gdb_index::write(l, buf),
        Synth::EhFrame | Synth::EhFrameHdr => unreachable!("written by the writer"),
    }
}

/// `.note.gnu.property`: NT_GNU_PROPERTY_TYPE_0 "GNU" with GNU_PROPERTY_X86_FEATURE_1_AND
/// set to the output's x86 features.
fn write_gnu_property(l: &Layout, buf: &mut [u8]) {
    // NT_GNU_PROPERTY_TYPE_0 "GNU": GNU_PROPERTY_X86_FEATURE_1_AND = features.
    put32(buf, 0, 4);
    put32(buf, 4, 16);
    put32(buf, 8, elf::NT_GNU_PROPERTY_TYPE_0);
    buf[12..16].copy_from_slice(b"GNU\0");
    put32(buf, 16, 0xc000_0002);
    put32(buf, 20, 4);
    put32(buf, 24, l.x86_features);
    put32(buf, 28, 0);
}

/// `.note.gnu.build-id`'s header; the id itself is hashed in once the image is complete.
fn write_build_id_header(l: &Layout, buf: &mut [u8]) {
    put32(buf, 0, 4);
    put32(buf, 4, build_id_len(l) as u32);
    put32(buf, 8, elf::NT_GNU_BUILD_ID);
    buf[12..16].copy_from_slice(b"GNU\0");
}

/// `.dynsym`: after the null symbol, each dynamic symbol's name, binding, section and value;
/// visibility default for shared symbols, protected for `__start_`/`__stop_`.
fn write_dynsym(l: &Layout, buf: &mut [u8]) {
    for (i, &id) in l.dynsyms.iter().enumerate() {
        let o = (i + 1) * 24;
        let (shndx, value, size, info) = dynsym_fields(l, id);
        put32(buf, o, dynstr(l, crate::elf::layout::dynsym::dyn_name(l, id)));
        buf[o + 4] = info;
        let name = l.r.symbols[id].name;
        let start_stop =
            matches!(l.r.symbols[id].def, Def::Undefined) && l.synthetic_syms.contains_key(&id) && !crate::elf::reserved::is_public_linker_defined(name);
        buf[o + 5] = if matches!(l.r.symbols[id].def, Def::Shared(..)) {
            0
        } else if start_stop {
            elf::STV_PROTECTED
        } else {
            l.r.symbols[id].visibility
        };
        put16(buf, o + 6, shndx);
        put64(buf, o + 8, value);
        put64(buf, o + 16, size);
    }
}

/// `.gnu.version`: each dynamic symbol's version index.
fn write_versym(l: &Layout, buf: &mut [u8]) {
    for (i, &id) in l.dynsyms.iter().enumerate() {
        put16(buf, (i + 1) * 2, version_index(l, id));
    }
}

/// `.gnu.version_d`: the base version (the output's name), then each version the version
/// script defines, in index order.
fn write_verdef(l: &Layout, buf: &mut [u8]) {
    let n = verdef_count(l);
    let names: Vec<String> = std::iter::once(verdef_base_name(l)).chain(l.r.versions.iter().cloned()).collect();
    for (i, name) in names.iter().enumerate() {
        let off = i * 28;
        put16(buf, off, 1); // vd_version
        put16(buf, off + 2, if i == 0 { elf::VER_FLG_BASE } else { 0 });
        put16(buf, off + 4, (i + 1) as u16); // vd_ndx
        put16(buf, off + 6, 1); // vd_cnt
        put32(buf, off + 8, sysv_hash(name.as_bytes()));
        put32(buf, off + 12, 20); // vd_aux
        put32(buf, off + 16, if i + 1 == n { 0 } else { 28 });
        put32(buf, off + 20, dynstr(l, name.as_bytes())); // vda_name
        put32(buf, off + 24, 0); // vda_next
    }
}

/// `.gnu.version_r`: per shared library, the versions the output needs from it, numbered
/// after the defined ones.
fn write_verneed(l: &Layout, buf: &mut [u8]) {
    let mut off = 0usize;
    let mut idx = (verdef_count(l).max(1) + 1) as u16;
    // `-z pack-relative-relocs`: glibc's libc.so also lists GLIBC_ABI_DT_RELR, numbered after
    // every other needed version (lld).
    let relr = crate::elf::relr::glibc_verneed(l.config, l.r, &l.verneed);
    let relr_idx = idx + l.verneed.iter().map(|(_, v)| v.len() as u16).sum::<u16>();
    for (n, (f, vers)) in l.verneed.iter().enumerate() {
        let last = n + 1 == l.verneed.len();
        let mut names: Vec<(&[u8], u16)> = vers.iter().map(|v| (*v, 0)).collect();
        for (k, e) in names.iter_mut().enumerate() {
            e.1 = idx + k as u16;
        }
        idx += vers.len() as u16;
        if relr == Some(n) {
            names.push((crate::elf::relr::GLIBC_ABI_DT_RELR, relr_idx));
        }
        put16(buf, off, 1);
        put16(buf, off + 2, names.len() as u16);
        put32(buf, off + 4, dynstr(l, l.r.dso(*f).soname.as_bytes()));
        put32(buf, off + 8, 16);
        put32(buf, off + 12, if last { 0 } else { 16 + 16 * names.len() as u32 });
        let mut a = off + 16;
        for (j, (v, vidx)) in names.iter().enumerate() {
            put32(buf, a, sysv_hash(v));
            put16(buf, a + 4, 0);
            put16(buf, a + 6, *vidx);
            put32(buf, a + 8, dynstr(l, v));
            put32(buf, a + 12, if j + 1 == names.len() { 0 } else { 16 });
            a += 16;
        }
        off = a;
    }
}

/// `.hash`: the SysV hash table, one bucket per dynamic symbol.
fn write_sysv_hash(l: &Layout, buf: &mut [u8]) {
    let n = 1 + l.dynsyms.len();
    put32(buf, 0, n as u32);
    put32(buf, 4, n as u32);
    let (buckets, chains) = buf[8..].split_at_mut(n * 4);
    for (i, &id) in l.dynsyms.iter().enumerate() {
        let idx = i + 1;
        let h = sysv_hash(crate::elf::layout::dynsym::dyn_name(l, id)) as usize % n;
        let prev = u32::from_le_bytes(buckets[h * 4..h * 4 + 4].try_into().unwrap());
        put32(chains, idx * 4, prev);
        put32(buckets, h * 4, idx as u32);
    }
}

/// `.rela.dyn`: the dynamic relocations, then the IRELATIVE ones. As lld does (-z combreloc,
/// its default), the non-RELATIVE ones before the IRELATIVE ones are sorted by (symbol
/// index, offset), so a COPY relocation for an earlier .dynsym symbol comes first.
fn write_rela_dyn(l: &Layout, buf: &mut [u8]) {
    for (i, d) in l.dynrels.iter().chain(l.irelatives.iter()).enumerate() {
        write_rela(l, d, &mut buf[i * 24..i * 24 + 24]);
    }
    let first = l.dynrels.iter().take_while(|d| d.r_type == arch::r::RELATIVE).count();
    let part = &mut buf[first * 24..l.dynrels.len() * 24];
    let mut entries: Vec<[u8; 24]> = part.chunks_exact(24).map(|c| c.try_into().unwrap()).collect();
    let word = |e: &[u8; 24], at: usize| u64::from_le_bytes(e[at..at + 8].try_into().unwrap());
    entries.sort_by_key(|e| (word(e, 8) >> 32, word(e, 0)));
    for (c, e) in part.chunks_exact_mut(24).zip(&entries) {
        c.copy_from_slice(e);
    }
}

/// `.rela.plt`: one JUMP_SLOT per PLT entry, for its `.got.plt` slot.
fn write_rela_plt(l: &Layout, buf: &mut [u8]) {
    for (i, &id) in l.plt.iter().enumerate() {
        let o = i * 24;
        put64(buf, o, l.gotplt_slot_addr(i as u32));
        let sym = *l.dynsym_index.get(&id).unwrap_or(&0) as u64;
        put64(buf, o + 8, (sym << 32) | arch::r::JUMP_SLOT as u64);
        put64(buf, o + 16, 0);
    }
}

/// `.plt`: the header, then one lazy-binding entry per PLT symbol.
fn write_plt(l: &Layout, buf: &mut [u8]) {
    let plt = l.synth_addr(Synth::Plt);
    let gotplt = l.synth_addr(Synth::GotPlt);
    arch::write_plt_header(&mut buf[..16], plt, gotplt);
    for i in 0..l.plt.len() {
        let o = 16 + i * 16;
        arch::write_plt_entry(&mut buf[o..o + 16], plt + o as u64, l.gotplt_slot_addr(i as u32), i as u32, plt);
    }
}

/// The IPLT: one entry per IFUNC, jumping through its `.got.plt` slot.
fn write_iplt(l: &Layout, buf: &mut [u8]) {
    for i in 0..l.iplt.len() {
        let o = i * 16;
        arch::write_iplt_entry(&mut buf[o..o + 16], l.iplt_entry_addr(i as u32), l.gotplt_slot_addr(l.iplt_slot(i as u32)));
    }
}

/// `.dynamic`: the entries `dynamic_entries` decides.
fn write_dynamic(l: &Layout, buf: &mut [u8]) {
    for (i, (tag, val)) in dynamic_entries(l).iter().enumerate() {
        put64(buf, i * 16, *tag as u64);
        put64(buf, i * 16 + 8, *val);
    }
}

/// `.got`: each slot's link-time value: an address (0 when preemptible: the dynamic
/// relocation fills it), a TP offset, a DTP offset, or 0 for slots only the loader fills.
fn write_got(l: &Layout, buf: &mut [u8]) {
    for (i, &(t, kind)) in l.got.iter().enumerate() {
        let v = match kind {
            crate::elf::layout::model::GotKind::Addr => {
                if l.is_preemptible(t) {
                    0
                } else {
                    l.addr_of(t)
                }
            }
            crate::elf::layout::model::GotKind::TpOff => {
                if l.is_preemptible(t) || l.config.shared {
                    0
                } else {
                    l.addr_of(t).wrapping_sub(l.tls_end())
                }
            }
            crate::elf::layout::model::GotKind::TlsGdOff => {
                if l.is_preemptible(t) {
                    0
                } else {
                    l.addr_of(t).wrapping_sub(l.tls_start())
                }
            }
            crate::elf::layout::model::GotKind::TlsGdMod
            | crate::elf::layout::model::GotKind::TlsLdMod
            | crate::elf::layout::model::GotKind::Zero
            | crate::elf::layout::model::GotKind::TlsDesc => 0,
        };
        put64(buf, i * 8, v);
    }
}

/// `.got.plt`: `_DYNAMIC`, two slots for the loader, then each PLT slot pointing at its
/// entry's push (lazy binding) and the IPLT slots (0 until IRELATIVE runs).
fn write_gotplt(l: &Layout, buf: &mut [u8]) {
    put64(buf, 0, if l.has_dynamic { l.synth_addr(Synth::Dynamic) } else { 0 });
    for i in 0..l.plt.len() {
        // Lazy binding: the slot starts out pointing at the PLT entry's push.
        put64(buf, (3 + i) * 8, l.plt_entry_addr(i as u32) + 6);
    }
    for (i, &t) in l.iplt.iter().enumerate() {
        // Static non-PIE output: the IRELATIVE addend is also what the slot holds before
        // start-up code runs the resolver.
        let _ = t;
        put64(buf, (3 + l.plt.len() + i) * 8, 0);
    }
}

fn write_rela(l: &Layout, d: &DynRel, out: &mut [u8]) {
    let (offset, info, addend) = rela_fields(l, d);
    put64(out, 0, offset);
    put64(out, 8, info);
    put64(out, 16, addend);
}

/// `.rela.dyn`'s dynamic tags for `nrela` relocations at `at`: in Android's packed format its
/// own tags, the entry size kept and no DT_RELACOUNT (lld).
fn rela_tags(l: &Layout, nrela: u64, at: u64) -> Vec<(u32, u64)> {
    if android::enabled(l) {
        return vec![(android::DT_ANDROID_RELA, at), (android::DT_ANDROID_RELASZ, l.android_rela.len() as u64), (elf::DT_RELAENT, 24)];
    }
    let mut d = vec![(elf::DT_RELA, at), (elf::DT_RELASZ, nrela * 24), (elf::DT_RELAENT, 24)];
    if l.relative_count > 0 {
        d.push((elf::DT_RELACOUNT, l.relative_count as u64));
    }
    d
}

fn write_gnu_hash(l: &Layout, buf: &mut [u8]) {
    let nd = ndefined_dynsyms(l);
    let nbuckets = gnu_hash_nbuckets(nd);
    let words = bloom_words(nd);
    let shift = 26u32;
    let first_defined = l.dynsyms.len() - nd + 1;
    put32(buf, 0, nbuckets);
    put32(buf, 4, first_defined as u32);
    put32(buf, 8, words as u32);
    put32(buf, 12, shift);
    let bloom_off = 16;
    let buckets_off = bloom_off + words * 8;
    let chain_off = buckets_off + nbuckets as usize * 4;
    let defined: Vec<(usize, u32)> =
        l.dynsyms.iter().enumerate().skip(first_defined - 1).map(|(i, &id)| (i + 1, gnu_hash(crate::elf::layout::dynsym::dyn_name(l, id)))).collect();
    for &(_, h) in &defined {
        let w = ((h / 64) as usize) & (words - 1);
        let mut v = u64::from_le_bytes(buf[bloom_off + w * 8..bloom_off + w * 8 + 8].try_into().unwrap());
        v |= 1u64 << (h % 64);
        v |= 1u64 << ((h >> shift) % 64);
        put64(buf, bloom_off + w * 8, v);
    }
    for (j, &(idx, h)) in defined.iter().enumerate() {
        let b = (h % nbuckets) as usize;
        if u32::from_le_bytes(buf[buckets_off + b * 4..buckets_off + b * 4 + 4].try_into().unwrap()) == 0 {
            put32(buf, buckets_off + b * 4, idx as u32);
        }
        let last = j + 1 == defined.len() || (defined[j + 1].1 % nbuckets) as usize != b;
        let v = if last { h | 1 } else { h & !1 };
        put32(buf, chain_off + j * 4, v);
    }
}

//! The structural fingerprint of a linked ELF file, computed with goblin (a parser independent
//! of the `object` crate dtld uses, so a shared parser bug cannot hide a linker bug).
//!
//! A fingerprint is a map from key (e.g. `dynamic.needed`) to a JSON value. It deliberately
//! leaves out everything that legitimately depends on layout: addresses, offsets, section and
//! segment order, padding, and hash-table bytes. Hash tables are validated instead (every
//! defined dynamic symbol must be found by the lookup the dynamic loader performs), and the
//! result of that validation is a key. Sets are sorted lists and multisets are sorted lists with
//! repeats, so two fingerprints compare with `==` key by key.

use std::collections::{BTreeMap, BTreeSet};

pub use crate::common::Fingerprint;
use crate::common::{bit_names, read_u32, set};

use goblin::container::{Container, Ctx, Endian};
use goblin::elf::dynamic::*;
use goblin::elf::program_header::*;
use goblin::elf::section_header::*;
use goblin::elf::sym;
use goblin::elf::Elf;
use serde_json::{json, Value};

/// Every key a fingerprint can contain (`DiffIgnore` is checked against this list).
pub const KEYS: &[&str] = &[
    "header.type",
    "header.machine",
    "header.entry",
    "segments.kinds",
    "segments.load_count",
    "interp",
    "dynamic.needed",
    "dynamic.soname",
    "dynamic.rpath",
    "dynamic.runpath",
    "dynamic.flags",
    "dynamic.flags_1",
    "dynamic.tags",
    "dynamic.init",
    "dynamic.fini",
    "dynamic.init_arrays",
    "dynsym",
    "dynrel",
    "dynrel.relative_count",
    "dynrel.irelative_count",
    "verneed",
    "verdef",
    "sections",
    "symtab.globals",
    "tls",
    "gnu_stack",
    "relro",
    "eh_frame_hdr",
    "build_id",
    "comment",
    "comment.text",
    "gnu_hash",
    "hash",
];

/// Keys that are never compared unless a future fixture needs them, with the reason.
pub const DEFAULT_IGNORE: &[(&str, &str)] = &[
    // The number of PT_LOAD segments is a layout decision (lld splits R / RX / RW / RW-after-
    // RELRO; other linkers may merge the read-only ones), so it is reported but not compared.
    ("segments.load_count", "layout choice"),
    // `.comment` names the linker and its version ("Linker: Debian LLD 22.1.8" vs dtld's own
    // string); whether it is present is still compared (key `comment`).
    ("comment.text", "names the linker"),
];

/// Whether `key` is left out of the comparison: by [`DEFAULT_IGNORE`] (which also applies to
/// every library's `lib:<name>:` keys) or by a fixture's `DiffIgnore` patterns (matched against
/// the full key, so `lib:libfoo.so:dynsym` names one library's key).
pub fn is_ignored(key: &str, extra: &[String]) -> bool {
    crate::common::is_ignored(DEFAULT_IGNORE, key, extra)
}

/// Replaces every occurrence of each `(from, to)` in the fingerprint's strings (absolute build
/// paths, e.g. in `-rpath $DIR`, become placeholders so that the two sides compare equal).
pub fn replace_paths(fp: &mut Fingerprint, replacements: &[(String, &str)]) {
    fn walk(v: &mut Value, replacements: &[(String, &str)]) {
        match v {
            Value::String(s) => {
                for (from, to) in replacements {
                    if !from.is_empty() && s.contains(from.as_str()) {
                        *s = s.replace(from.as_str(), to);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, replacements)),
            Value::Object(map) => map.values_mut().for_each(|i| walk(i, replacements)),
            _ => {}
        }
    }
    for v in fp.values_mut() {
        walk(v, replacements);
    }
}

fn multiset<I: IntoIterator<Item = String>>(items: I) -> Value {
    let mut v: Vec<String> = items.into_iter().collect();
    v.sort();
    json!(v)
}

fn pt_name(pt: u32) -> String {
    match pt {
        PT_GNU_PROPERTY_TYPE => "GNU_PROPERTY".into(),
        _ => {
            let name = pt_to_str(pt);
            match name.strip_prefix("PT_") {
                Some(n) if name != "UNKNOWN_PT" => n.to_string(),
                _ => format!("{pt:#x}"),
            }
        }
    }
}

const PT_GNU_PROPERTY_TYPE: u32 = 0x6474_e553;
const DT_RELR: u64 = 36;
const DT_RELRSZ: u64 = 35;
const DT_RELRENT: u64 = 37;
const NT_GNU_BUILD_ID: u32 = 3;
const R_X86_64_RELATIVE: u32 = 8;
const R_X86_64_IRELATIVE: u32 = 37;

fn dt_name(tag: u64) -> String {
    match tag {
        DT_RELR => "RELR".into(),
        DT_RELRSZ => "RELRSZ".into(),
        DT_RELRENT => "RELRENT".into(),
        _ => {
            let name = tag_to_str(tag);
            match name.strip_prefix("DT_") {
                Some(n) if name != "UNKNOWN_TAG" => n.to_string(),
                _ => format!("{tag:#x}"),
            }
        }
    }
}

const DF_NAMES: &[(u64, &str)] =
    &[(DF_ORIGIN, "ORIGIN"), (DF_SYMBOLIC, "SYMBOLIC"), (DF_TEXTREL, "TEXTREL"), (DF_BIND_NOW, "BIND_NOW"), (DF_STATIC_TLS, "STATIC_TLS")];

const DF_1_NAMES: &[(u64, &str)] = &[
    (DF_1_NOW, "NOW"),
    (DF_1_GLOBAL, "GLOBAL"),
    (DF_1_GROUP, "GROUP"),
    (DF_1_NODELETE, "NODELETE"),
    (DF_1_LOADFLTR, "LOADFLTR"),
    (DF_1_INITFIRST, "INITFIRST"),
    (DF_1_NOOPEN, "NOOPEN"),
    (DF_1_ORIGIN, "ORIGIN"),
    (DF_1_DIRECT, "DIRECT"),
    (DF_1_INTERPOSE, "INTERPOSE"),
    (DF_1_NODEFLIB, "NODEFLIB"),
    (DF_1_NODUMP, "NODUMP"),
    (DF_1_PIE, "PIE"),
];

fn section_flags(flags: u64) -> String {
    let table: &[(u64, char)] = &[
        (SHF_WRITE as u64, 'W'),
        (SHF_ALLOC as u64, 'A'),
        (SHF_EXECINSTR as u64, 'X'),
        (SHF_MERGE as u64, 'M'),
        (SHF_STRINGS as u64, 'S'),
        (SHF_INFO_LINK as u64, 'I'),
        (SHF_LINK_ORDER as u64, 'L'),
        (SHF_GROUP as u64, 'G'),
        (SHF_TLS as u64, 'T'),
        (SHF_EXCLUDE as u64, 'E'),
    ];
    let mut out = String::new();
    let mut rest = flags;
    for &(bit, c) in table {
        if flags & bit != 0 {
            out.push(c);
            rest &= !bit;
        }
    }
    if rest != 0 {
        out.push_str(&format!("+{rest:#x}"));
    }
    out
}

fn sht_name(sh_type: u32) -> String {
    let name = sht_to_str(sh_type);
    match name.strip_prefix("SHT_") {
        Some(n) if name != "UNKNOWN_SHT" => n.to_string(),
        _ => format!("{sh_type:#x}"),
    }
}

/// Maps a virtual address to a file offset through the PT_LOAD segments.
fn vaddr_to_offset(elf: &Elf, addr: u64) -> Option<usize> {
    elf.program_headers
        .iter()
        .filter(|p| p.p_type == PT_LOAD)
        .find(|p| addr >= p.p_vaddr && addr < p.p_vaddr + p.p_filesz)
        .map(|p| (addr - p.p_vaddr + p.p_offset) as usize)
}

fn read_u64(data: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(data.get(off..off + 8)?.try_into().ok()?))
}

fn dyn_value(elf: &Elf, tag: u64) -> Option<u64> {
    elf.dynamic.as_ref()?.dyns.iter().find(|d| d.d_tag == tag).map(|d| d.d_val)
}

/// Version names by version index, from .gnu.version_d and .gnu.version_r.
fn version_names(elf: &Elf) -> BTreeMap<u16, String> {
    let mut names = BTreeMap::new();
    if let Some(verdef) = &elf.verdef {
        for def in verdef.iter() {
            if let Some(aux) = def.iter().next() {
                if let Some(name) = elf.dynstrtab.get_at(aux.vda_name) {
                    names.insert(def.vd_ndx, name.to_string());
                }
            }
        }
    }
    if let Some(verneed) = &elf.verneed {
        for need in verneed.iter() {
            for aux in need.iter() {
                if let Some(name) = elf.dynstrtab.get_at(aux.vna_name) {
                    names.insert(aux.vna_other, name.to_string());
                }
            }
        }
    }
    names
}

/// The dynamic symbols, counted from the SHT_DYNSYM section header. (goblin derives the count
/// from the hash tables, which would let a broken hash table hide symbols from the check.)
fn dynamic_symbols(elf: &Elf, data: &[u8]) -> Result<Vec<sym::Sym>, String> {
    let Some(sh) = elf.section_headers.iter().find(|sh| sh.sh_type == SHT_DYNSYM) else {
        return Ok(elf.dynsyms.iter().collect());
    };
    let ctx = Ctx::new(Container::Big, Endian::Little);
    let count = (sh.sh_size / sym::sym64::SIZEOF_SYM as u64) as usize;
    let table = sym::Symtab::parse(data, sh.sh_offset as usize, count, ctx).map_err(|e| format!("cannot read .dynsym: {e}"))?;
    Ok(table.iter().collect())
}

fn sym_desc(s: &sym::Sym) -> String {
    format!(
        "{} {} {}",
        sym::bind_to_str(s.st_bind()).trim_start_matches("STB_"),
        sym::type_to_str(s.st_type()).trim_start_matches("STT_"),
        sym::visibility_to_str(s.st_visibility()).trim_start_matches("STV_"),
    )
}

fn section_name(elf: &Elf, shndx: usize) -> String {
    match shndx as u32 {
        SHN_UNDEF => "*UND*".into(),
        SHN_ABS => "*ABS*".into(),
        SHN_COMMON => "*COM*".into(),
        _ => elf.section_headers.get(shndx).and_then(|sh| elf.shdr_strtab.get_at(sh.sh_name)).unwrap_or("?").to_string(),
    }
}

/// Computes the fingerprint of an ELF file.
pub fn fingerprint(data: &[u8]) -> Result<Fingerprint, String> {
    let elf = Elf::parse(data).map_err(|e| format!("goblin cannot parse the output: {e}"))?;
    let dynsyms = dynamic_symbols(&elf, data)?;
    let mut fp = Fingerprint::new();
    segments(&elf, &mut fp);
    dynamic_section(&elf, &mut fp);
    dynsym_entries(&elf, &dynsyms, &mut fp);
    dynamic_relocations(&elf, data, &dynsyms, &mut fp);
    version_tables(&elf, &mut fp);
    sections_and_symbols(&elf, &mut fp);
    notes(&elf, data, &mut fp);
    hash_tables(&elf, data, &dynsyms, &mut fp);
    Ok(fp)
}

/// Records one fingerprint key (every key is declared in `KEYS`).
fn put(fp: &mut Fingerprint, k: &str, v: Value) {
    debug_assert!(KEYS.contains(&k), "undeclared fingerprint key {k}");
    fp.insert(k.to_string(), v);
}

/// The ELF header and the program headers.
fn segments(elf: &Elf, fp: &mut Fingerprint) {
    put(fp, "header.type", json!(goblin::elf::header::et_to_str(elf.header.e_type)));
    put(fp, "header.machine", json!(goblin::elf::header::machine_to_str(elf.header.e_machine)));
    put(fp, "header.entry", json!(entry_symbol(elf)));

    let phdrs = &elf.program_headers;
    put(fp, "segments.kinds", set(phdrs.iter().map(|p| pt_name(p.p_type))));
    put(fp, "segments.load_count", json!(phdrs.iter().filter(|p| p.p_type == PT_LOAD).count()));
    put(fp, "interp", json!(elf.interpreter));
    put(
        fp,
        "tls",
        match phdrs.iter().find(|p| p.p_type == PT_TLS) {
            Some(p) => json!(format!("memsz={} align={}", p.p_memsz, p.p_align)),
            None => json!("absent"),
        },
    );
    put(
        fp,
        "gnu_stack",
        match phdrs.iter().find(|p| p.p_type == PT_GNU_STACK) {
            Some(p) => {
                let mut f = String::new();
                f.push(if p.p_flags & PF_R != 0 { 'R' } else { '-' });
                f.push(if p.p_flags & PF_W != 0 { 'W' } else { '-' });
                f.push(if p.p_flags & PF_X != 0 { 'X' } else { '-' });
                json!(f)
            }
            None => json!("absent"),
        },
    );
    put(fp, "relro", json!(phdrs.iter().any(|p| p.p_type == PT_GNU_RELRO)));
    put(fp, "eh_frame_hdr", json!(phdrs.iter().any(|p| p.p_type == PT_GNU_EH_FRAME)));
}

/// The dynamic section: libraries, paths, flags, tags, init/fini.
fn dynamic_section(elf: &Elf, fp: &mut Fingerprint) {
    put(fp, "dynamic.needed", json!(elf.libraries));
    put(fp, "dynamic.soname", json!(elf.soname));
    put(fp, "dynamic.rpath", json!(elf.rpaths));
    put(fp, "dynamic.runpath", json!(elf.runpaths));
    put(fp, "dynamic.flags", bit_names(dyn_value(elf, DT_FLAGS).unwrap_or(0), DF_NAMES));
    put(fp, "dynamic.flags_1", bit_names(dyn_value(elf, DT_FLAGS_1).unwrap_or(0), DF_1_NAMES));
    put(fp, "dynamic.tags", set(elf.dynamic.iter().flat_map(|d| d.dyns.iter()).filter(|d| d.d_tag != DT_NULL).map(|d| dt_name(d.d_tag))));
    // DT_INIT / DT_FINI as symbol names (`_init` by default, `--init=<sym>` otherwise).
    for (key, tag) in [("dynamic.init", DT_INIT), ("dynamic.fini", DT_FINI)] {
        put(
            fp,
            key,
            json!(match dyn_value(elf, tag) {
                None => "absent".to_string(),
                Some(addr) => symbol_at(elf, addr, None),
            }),
        );
    }
    // The number of entries of each init/fini array (their order is checked by the programs).
    let mut arrays = Vec::new();
    for (name, tag) in [("preinit", DT_PREINIT_ARRAYSZ), ("init", DT_INIT_ARRAYSZ), ("fini", DT_FINI_ARRAYSZ)] {
        if let Some(size) = dyn_value(elf, tag) {
            arrays.push(format!("{name}={}", size / 8));
        }
    }
    put(fp, "dynamic.init_arrays", json!(arrays.join(" ")));
}

/// Dynamic symbols with their versions.
fn dynsym_entries(elf: &Elf, dynsyms: &[sym::Sym], fp: &mut Fingerprint) {
    let versions = version_names(elf);
    let mut dynsym_items = Vec::new();
    for (i, s) in dynsyms.iter().enumerate().skip(1) {
        let name = elf.dynstrtab.get_at(s.st_name).unwrap_or("?");
        let mut item = name.to_string();
        if let Some(vs) = elf.versym.as_ref().and_then(|v| v.get_at(i)) {
            let idx = vs.version();
            if idx == 0 && s.st_shndx != 0 {
                // VER_NDX_LOCAL on an exported definition.
                item.push_str("@<local>");
            } else if idx >= 2 {
                let vname = versions.get(&idx).cloned().unwrap_or_else(|| format!("#{idx}"));
                let sep = if s.st_shndx == 0 || vs.is_hidden() { "@" } else { "@@" };
                item.push_str(&format!("{sep}{vname}"));
            }
        }
        item.push(' ');
        item.push_str(&sym_desc(s));
        if s.st_shndx == 0 {
            item.push_str(" undef");
        } else {
            item.push_str(&format!(" defined size={}", s.st_size));
        }
        dynsym_items.push(item);
    }
    put(fp, "dynsym", multiset(dynsym_items));
}

/// Dynamic relocations, RELR counted as RELATIVE.
fn dynamic_relocations(elf: &Elf, data: &[u8], dynsyms: &[sym::Sym], fp: &mut Fingerprint) {
    // Dynamic relocations: every allocated SHT_RELA/SHT_REL section (this also covers the
    // IRELATIVE relocations of static executables, which have no dynamic section).
    let dynsym_shndx = elf.section_headers.iter().position(|sh| sh.sh_type == SHT_DYNSYM);
    let mut rels = Vec::new();
    let mut relative = 0usize;
    let mut irelative = 0usize;
    for (shndx, relocs) in &elf.shdr_relocs {
        let Some(sh) = elf.section_headers.get(*shndx) else {
            continue;
        };
        if sh.sh_flags & SHF_ALLOC as u64 == 0 {
            continue;
        }
        for r in relocs.iter() {
            match r.r_type {
                R_X86_64_RELATIVE => relative += 1,
                R_X86_64_IRELATIVE => irelative += 1,
                t => {
                    let target = if r.r_sym == 0 {
                        "-".to_string()
                    } else if Some(sh.sh_link as usize) == dynsym_shndx {
                        dynsyms.get(r.r_sym).and_then(|s| elf.dynstrtab.get_at(s.st_name)).unwrap_or("?").to_string()
                    } else {
                        format!("sym#{}", r.r_sym)
                    };
                    let ty = goblin::elf::reloc::r_to_str(t, elf.header.e_machine);
                    rels.push(format!("{ty} {target}"));
                }
            }
        }
    }
    // SHT_RELR (packed relative relocations) count as RELATIVE.
    if let (Some(addr), Some(size)) = (dyn_value(elf, DT_RELR), dyn_value(elf, DT_RELRSZ)) {
        if let Some(off) = vaddr_to_offset(elf, addr) {
            for i in 0..(size as usize / 8) {
                let Some(word) = read_u64(data, off + i * 8) else {
                    break;
                };
                relative += if word & 1 == 0 { 1 } else { (word >> 1).count_ones() as usize };
            }
        }
    }
    put(fp, "dynrel", multiset(rels));
    put(fp, "dynrel.relative_count", json!(relative));
    put(fp, "dynrel.irelative_count", json!(irelative));
}

/// Version requirements and definitions.
fn version_tables(elf: &Elf, fp: &mut Fingerprint) {
    let mut verneed = BTreeMap::new();
    if let Some(vn) = &elf.verneed {
        for need in vn.iter() {
            let file = elf.dynstrtab.get_at(need.vn_file).unwrap_or("?").to_string();
            let names: BTreeSet<String> = need.iter().filter_map(|a| elf.dynstrtab.get_at(a.vna_name)).map(String::from).collect();
            verneed.insert(file, names.into_iter().collect::<Vec<_>>());
        }
    }
    put(fp, "verneed", json!(verneed));
    let mut verdef = Vec::new();
    if let Some(vd) = &elf.verdef {
        for def in vd.iter() {
            let names: Vec<&str> = def.iter().filter_map(|a| elf.dynstrtab.get_at(a.vda_name)).collect();
            verdef.push(format!("{} flags={:#x}", names.join(" "), def.vd_flags));
        }
    }
    put(fp, "verdef", set(verdef));
}

/// Allocated sections and the non-local defined symbols of `.symtab`.
fn sections_and_symbols(elf: &Elf, fp: &mut Fingerprint) {
    put(
        fp,
        "sections",
        set(elf
            .section_headers
            .iter()
            .filter(|sh| sh.sh_flags & SHF_ALLOC as u64 != 0)
            .map(|sh| format!("{} {} {}", elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("?"), sht_name(sh.sh_type), section_flags(sh.sh_flags)))),
    );

    // Non-local defined symbols of .symtab and the output section each lives in.
    put(
        fp,
        "symtab.globals",
        multiset(
            elf.syms
                .iter()
                .filter(|s| s.st_bind() != sym::STB_LOCAL && s.st_shndx != 0)
                .map(|s| format!("{} {} {}", elf.strtab.get_at(s.st_name).unwrap_or("?"), sym_desc(&s), section_name(elf, s.st_shndx))),
        ),
    );
}

/// The build ID note and `.comment`.
fn notes(elf: &Elf, data: &[u8], fp: &mut Fingerprint) {
    let mut build_id = "absent".to_string();
    if let Some(notes) = elf.iter_note_headers(data) {
        for note in notes.flatten() {
            if note.n_type == NT_GNU_BUILD_ID && note.name == "GNU" {
                build_id = format!("GNU len={}", note.desc.len());
            }
        }
    }
    put(fp, "build_id", json!(build_id));
    let comment = elf
        .section_headers
        .iter()
        .find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(".comment"))
        .and_then(|sh| data.get(sh.sh_offset as usize..(sh.sh_offset + sh.sh_size) as usize));
    put(fp, "comment", json!(comment.is_some()));
    put(
        fp,
        "comment.text",
        json!(comment
            .map(|c| c.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect::<Vec<_>>())
            .unwrap_or_default()),
    );
}

/// Hash tables: validated, not compared.
fn hash_tables(elf: &Elf, data: &[u8], dynsyms: &[sym::Sym], fp: &mut Fingerprint) {
    let names: Vec<&str> = dynsyms.iter().map(|s| elf.dynstrtab.get_at(s.st_name).unwrap_or("")).collect();
    put(
        fp,
        "gnu_hash",
        json!(match dyn_value(elf, DT_GNU_HASH).and_then(|a| vaddr_to_offset(elf, a)) {
            None => "absent".to_string(),
            Some(off) => validation_text(check_gnu_hash(data, off, dynsyms, &names)),
        }),
    );
    put(
        fp,
        "hash",
        json!(match dyn_value(elf, DT_HASH).and_then(|a| vaddr_to_offset(elf, a)) {
            None => "absent".to_string(),
            Some(off) => validation_text(check_sysv_hash(data, off, dynsyms, &names)),
        }),
    );
}

fn validation_text(problems: Vec<String>) -> String {
    if problems.is_empty() {
        "ok".into()
    } else {
        let shown: Vec<_> = problems.iter().take(5).cloned().collect();
        format!("invalid ({} problems): {}", problems.len(), shown.join("; "))
    }
}

/// The entry point as a symbol name: a defined .symtab symbol at `e_entry` (`_start`
/// preferred), else a dynamic symbol, else the section it points into.
fn entry_symbol(elf: &Elf) -> String {
    symbol_at(elf, elf.entry, Some("_start"))
}

/// An address as a symbol name: a defined .symtab symbol there (`preferred` if it is one of
/// them, else the first by name), else a dynamic symbol, else `section+offset`.
fn symbol_at(elf: &Elf, entry: u64, preferred: Option<&str>) -> String {
    if entry == 0 {
        return "0".into();
    }
    let mut candidates: Vec<String> = elf
        .syms
        .iter()
        .filter(|s| s.st_value == entry && s.st_shndx != 0 && s.st_type() != sym::STT_SECTION)
        .filter_map(|s| elf.strtab.get_at(s.st_name))
        .chain(elf.dynsyms.iter().filter(|s| s.st_value == entry && s.st_shndx != 0).filter_map(|s| elf.dynstrtab.get_at(s.st_name)))
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    candidates.sort();
    candidates.dedup();
    if let Some(p) = preferred.filter(|p| candidates.iter().any(|n| n == p)) {
        return p.into();
    }
    if let Some(first) = candidates.first() {
        return first.clone();
    }
    let section = elf.section_headers.iter().find(|sh| sh.sh_flags & SHF_ALLOC as u64 != 0 && entry >= sh.sh_addr && entry < sh.sh_addr + sh.sh_size);
    match section {
        Some(sh) => format!("{}+{:#x}", elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("?"), entry - sh.sh_addr),
        None => "<outside any section>".into(),
    }
}

fn gnu_hash(name: &str) -> u32 {
    name.bytes().fold(5381u32, |h, b| h.wrapping_mul(33).wrapping_add(u32::from(b)))
}

fn sysv_hash(name: &str) -> u32 {
    let mut h = 0u32;
    for b in name.bytes() {
        h = (h << 4).wrapping_add(u32::from(b));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

/// Looks every defined dynamic symbol up through .gnu.hash the way ld.so does (bloom filter,
/// bucket, chain) and returns the problems found.
fn check_gnu_hash(data: &[u8], off: usize, syms: &[sym::Sym], names: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let header = (|| Some((read_u32(data, off)?, read_u32(data, off + 4)?, read_u32(data, off + 8)?, read_u32(data, off + 12)?)))();
    let Some((nbuckets, symoffset, bloom_size, bloom_shift)) = header else {
        return vec!["truncated header".into()];
    };
    if nbuckets == 0 || bloom_size == 0 || !bloom_size.is_power_of_two() {
        return vec![format!("bad header nbuckets={nbuckets} bloom_size={bloom_size}")];
    }
    let bloom_off = off + 16;
    let buckets_off = bloom_off + bloom_size as usize * 8;
    let chain_off = buckets_off + nbuckets as usize * 4;
    for (idx, s) in syms.iter().enumerate().skip(1) {
        if s.st_shndx == 0 {
            continue;
        }
        let name = names[idx];
        if (idx as u32) < symoffset {
            problems.push(format!("{name} (index {idx}) is below symoffset {symoffset}"));
            continue;
        }
        let h = gnu_hash(name);
        let word_idx = (h / 64) % bloom_size;
        let Some(word) = read_u64(data, bloom_off + word_idx as usize * 8) else {
            problems.push("truncated bloom filter".into());
            break;
        };
        let mask = (1u64 << (h % 64)) | (1u64 << ((h >> bloom_shift) % 64));
        if word & mask != mask {
            problems.push(format!("{name} rejected by the bloom filter"));
            continue;
        }
        let Some(mut i) = read_u32(data, buckets_off + (h % nbuckets) as usize * 4) else {
            problems.push("truncated buckets".into());
            break;
        };
        let mut found = false;
        if i >= symoffset {
            // Several entries can share a name (`foo@VER_1` and `foo@@VER_2`): ld.so goes on
            // to the version check, so the walk continues past same-named entries.
            while let Some(ch) = read_u32(data, chain_off + (i - symoffset) as usize * 4) {
                if (ch | 1) == (h | 1) && names.get(i as usize) == Some(&name) && i as usize == idx {
                    found = true;
                    break;
                }
                if ch & 1 != 0 {
                    break;
                }
                i += 1;
            }
        }
        if !found {
            problems.push(format!("{name} not found through bucket/chain"));
        }
    }
    problems
}

/// Looks every defined dynamic symbol up through the SysV .hash table.
fn check_sysv_hash(data: &[u8], off: usize, syms: &[sym::Sym], names: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let (Some(nbucket), Some(nchain)) = (read_u32(data, off), read_u32(data, off + 4)) else {
        return vec!["truncated header".into()];
    };
    if nbucket == 0 {
        return vec!["nbucket is 0".into()];
    }
    if nchain as usize != syms.len() {
        problems.push(format!("nchain {nchain} != dynsym count {}", syms.len()));
    }
    let buckets_off = off + 8;
    let chain_off = buckets_off + nbucket as usize * 4;
    for (idx, s) in syms.iter().enumerate().skip(1) {
        if s.st_shndx == 0 {
            continue;
        }
        let name = names[idx];
        let h = sysv_hash(name);
        let mut i = read_u32(data, buckets_off + (h % nbucket) as usize * 4).unwrap_or(0);
        let mut steps = 0;
        let mut found = false;
        while i != 0 && steps <= nchain {
            if i as usize == idx {
                found = true;
                break;
            }
            i = read_u32(data, chain_off + i as usize * 4).unwrap_or(0);
            steps += 1;
        }
        if !found {
            problems.push(format!("{name} not found through bucket/chain"));
        }
    }
    problems
}

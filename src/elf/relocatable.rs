//! `-r` / `--relocatable`: combine the inputs into one relocatable object (ET_REL).
//!
//! This is a writer of its own, separate from `layout`/`write`, because a relocatable output
//! must undo nearly everything the executable path does: nothing gets an address, no relocation
//! is applied, `.text.foo` is not folded into `.text`, `.eh_frame` is not rebuilt, COMDAT groups
//! survive as groups, and the symbol table is rebuilt for the next link rather than for a
//! debugger. It follows ld.lld's `-r` behaviour (Writer.cpp, OutputSections.cpp,
//! `InputSection::copyRelocations`):
//!
//! * Input sections are grouped into output sections by exact name, in input order (load order:
//!   command line, archive members when extracted), the first input deciding the position.
//!   Flags are OR-ed, alignment is the maximum, types must agree (PROGBITS-like types may mix
//!   and become PROGBITS). A SHT_GROUP section of a kept group, and every SHF_GROUP member,
//!   is an output section of its own (merging would change the group's meaning), and the group
//!   lists the members' output indices (their relocation sections included). COMDAT copies the
//!   resolver discarded are dropped. SHF_LINK_ORDER sections merge only when their linked
//!   sections end up in the same output section, and their output section stands right after
//!   that of the first linked section (lld adds them with their linked sections).
//! * `.eh_frame` is concatenated with its relocations; a relocation that points at a discarded
//!   section (through a section symbol) becomes R_X86_64_NONE against symbol 0, which makes the
//!   final link drop that FDE, exactly as lld does.
//! * Each output section with relocations gets `.rela<name>` right after it (a script's description
//!   where lld's orphan placement puts it, `script::described_rela_places`): every input
//!   relocation, r_offset shifted by the input section's offset in the output section; a
//!   section symbol becomes the output section's symbol, its addend the output offset of
//!   (input offset + addend); other locals map to their copies, globals to the output global.
//! * SHF_MERGE sections (`.rodata.str*`, `.debug_str`, `.comment`, `.rodata.cst*`) are
//!   deduplicated as lld does in -r links (no tail merging, as lld at -O1): strings ended by
//!   a zero entry, or fixed-size entries without SHF_STRINGS, each distinct piece once at a
//!   multiple of the section's alignment; symbols and section-symbol addends pointing into
//!   them follow their pieces.
//! * Symbol table: the null symbol, then the locals in lld's order (`symtab_order`): each
//!   input's kept locals (STT_FILE included, section symbols not) followed by the STT_SECTION
//!   symbols of the output sections whose first input it holds (one per output section except
//!   the relocation sections and the synthetic notes, as lld), then the globals: defined ones
//!   (value relative to the output section), commons (SHN_COMMON, alignment in st_value), and
//!   undefined ones that an object names. Names are copied as they are (`foo@VER` included).
//!   The order matters: group sh_info and relocations name symbols by index.
//! * `.note.GNU-stack` is always written (empty), `.note.gnu.property` is rebuilt as the AND of
//!   the inputs' x86 feature bits (written only when non-zero), `--build-id` adds a note.
//!   `-s`/`-S` are ignored with `-r` (lld keeps symbols and debug sections too);
//!   `--discard-all`/`--discard-locals` drop locals no relocation uses.
//!
//! Intentional differences from lld:
//! * SHF_MERGE sections with relocations of their own, or whose contents do not split into
//!   pieces (lld: an error), are concatenated with the other inputs of their output section
//!   (lld concatenates only those and merges the rest); each input is placed at a multiple of
//!   its entry size so the output is still a valid SHF_MERGE section. Sections of one name with
//!   different entry sizes lose SHF_MERGE (lld keeps one merged part per entry size). The
//!   order of merged pieces differs from lld's (input order rather than hash shards).
//! * lld creates an unused NOBITS `COMMON` section (sized for the commons, which stay
//!   SHN_COMMON); dtld does not.
//! * `--gc-sections` is ignored (lld collects garbage from the `-e`/`-u` roots).
//! * A linker script's `SECTIONS` is applied as lld applies it under `-r` (`relocatable/
//!   script.rs`), but data commands and assignments inside a description are an error.
//! * lld places a `.rela` section where its first input relocation section appeared; dtld puts
//!   each `.rela` right after its section.
//! * LLVM bitcode inputs go through LTO first (`elf::link`), as lld's: the objects it returns,
//!   every symbol kept visible, are what this writes.
//!   GCC LTO objects are not: with GCC's plugin they are replaced, before this writer runs, by
//!   the object the plugin returns for `LDPO_REL` (merged IR, or native code), as GNU ld does
//!   (`elf::gcc_lto`); that object's `.gnu.lto_*` sections (SHF_EXCLUDE) are kept like any section.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;

mod model;
mod script;
mod symtab;
mod symtab_order;

use model::*;

use symtab::{global_facts, globals, used_locals, SymTab};

use object::elf;
use object::read::elf::{Rela as _, SectionHeader as _};
use rayon::prelude::*;

use crate::elf::config::{BuildId, Config};
use crate::elf::object::ObjFile;
use crate::elf::object::{x86_features, GNU_PROPERTY_X86_FEATURE_1_AND};
use crate::elf::symtab::{File, FileId, Resolved};
use crate::elf::types::LE;
use crate::elf::types::{progbits_like, type_name};
use crate::error::{Error, Result};

/// Deduplicates the pieces of the SHF_MERGE sections `members` (lld merges them in -r links
/// too, without tail merging): with SHF_STRINGS, strings ended by an all-zero entry of
/// `entsize` bytes; otherwise entries of `entsize` bytes. Each distinct piece is placed once,
/// at a multiple of `align`, in input order. `None` when an input does not split that way
/// (lld's "string is not null terminated" or a size that is not a multiple of the entry size)
/// or has relocations of its own (lld then treats it as an ordinary section): the section is
/// then concatenated.
fn merge_pieces(r: &Resolved, members: &[Member], strings: bool, entsize: u64, align: u64) -> Option<Merged> {
    let k = usize::try_from(entsize).ok().filter(|&k| k > 0)?;
    let mut data: Vec<u8> = Vec::new();
    let mut seen: HashMap<&'static [u8], u64> = HashMap::new();
    let mut pieces = HashMap::with_capacity(members.len());
    for m in members {
        let s = &r.obj(m.file).sections[m.shndx as usize];
        let d: &'static [u8] = s.data;
        if s.sh_type == elf::SHT_NOBITS || !s.relocs.is_empty() || !d.len().is_multiple_of(k) {
            return None;
        }
        if strings && d.len() >= k && d[d.len() - k..].iter().any(|&b| b != 0) {
            return None;
        }
        let mut t = Vec::new();
        let mut p = 0usize;
        while p < d.len() {
            let end = if strings {
                // The terminator: the first all-zero entry at a multiple of the entry size.
                p + d[p..].chunks_exact(k).position(|e| e.iter().all(|&b| b == 0))? * k + k
            } else {
                p + k
            };
            let piece = &d[p..end];
            let o = match seen.get(piece) {
                Some(&o) => o,
                None => {
                    let o = align_to(data.len() as u64, align).ok()?;
                    data.resize(o as usize, 0);
                    data.extend_from_slice(piece);
                    seen.insert(piece, o);
                    o
                }
            };
            t.push((p as u64, o));
            p = end;
        }
        pieces.insert((m.file, m.shndx), t);
    }
    Some(Merged { data, pieces })
}

fn too_large() -> Error {
    Error::new("output file too large".to_string())
}

fn align_to(v: u64, a: u64) -> Result<u64> {
    if a <= 1 {
        return Ok(v);
    }
    v.checked_add(a - 1).map(|x| x / a * a).ok_or_else(too_large)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    let (a, b) = (a.max(1), b.max(1));
    (a / gcd(a, b)).checked_mul(b)
}

fn lossy(s: &[u8]) -> String {
    String::from_utf8_lossy(s).into_owned()
}

fn is_debug(name: &[u8]) -> bool {
    name.starts_with(b".debug") || name.starts_with(b".zdebug")
}

/// Writes `config.output` as the relocatable combination of every object in the link.
pub fn write_relocatable(config: &Config, r: &Resolved) -> Result<()> {
    if config.compress_debug.is_some() {
        config.diag.warn("--compress-debug-sections is not supported with -r; ignored");
    }
    if config.shared {
        return Err(Error::new("-r and -shared may not be used together"));
    }
    if config.pie {
        return Err(Error::new("-r and -pie may not be used together"));
    }
    let mut errors = Vec::new();
    for (f, file) in r.files.iter().enumerate() {
        if !r.loaded[f] {
            continue;
        }
        if let File::Shared(s) = file {
            errors.push(format!("attempted static link of dynamic object {}", s.input.name));
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    let mut out = build(config, r)?;
    if let Some((at, len)) = out.build_id {
        let id = crate::elf::write::build_id_bytes(out.build_id_kind.0, &out.build_id_kind.1, &out.buf);
        let n = id.len().min(len);
        out.buf[at..at + n].copy_from_slice(&id[..n]);
    }
    write_file(&config.output, &out.buf)
}

/// Everything decided before bytes are written.
struct Plan<'a> {
    r: &'a Resolved,
    osecs: Vec<OutSec>,
    place: Vec<Vec<Place>>,
    /// Per object: output symbol index of each local (0 = not written).
    lidx: Vec<Vec<u32>>,
    /// Per global symbol: output symbol index (0 = not written).
    gidx: Vec<u32>,
}

impl Plan<'_> {
    fn obj(&self, f: FileId) -> &ObjFile {
        self.r.obj(f)
    }

    /// For a relocation of file `f` against its symbol `sym` with type `ty` and `addend`: the
    /// output symbol index, type and addend, and whether the target was a section symbol of a
    /// discarded section (then R_X86_64_NONE against symbol 0, as lld does).
    fn map_reloc(&self, f: FileId, sym: usize, ty: u32, addend: i64) -> (u32, u32, i64, bool) {
        let o = self.obj(f);
        if sym == 0 {
            return (0, ty, addend, false);
        }
        if sym >= o.first_global {
            let id = self.r.sym_ids[f].get(sym - o.first_global).copied();
            return (id.and_then(|id| self.gidx.get(id).copied()).unwrap_or(0), ty, addend, false);
        }
        let s = &o.symbols[sym];
        if s.st_type() == elf::STT_SECTION {
            // The section symbol plus addend is an offset in the input section (lld's
            // `getVA(addend)`): where that offset went, relative to the output section symbol.
            let shndx = o.shndx(sym) as usize;
            match locate(&self.place, &self.osecs, f, shndx, addend as u64) {
                Some((os, at)) => (self.osecs[os as usize].sym, ty, at as i64, false),
                None => (0, elf::R_X86_64_NONE, addend, true),
            }
        } else {
            (self.lidx[f].get(sym).copied().unwrap_or(0), ty, addend, false)
        }
    }

    /// The output symbol a kept group's sh_info names: its signature, a global, a local
    /// copy, or a section symbol's output section symbol (0 when not written).
    fn group_info(&self, g: &Group) -> u32 {
        let o = self.obj(g.file);
        if g.sig_sym >= o.first_global {
            let id = self.r.sym_ids[g.file].get(g.sig_sym - o.first_global).copied();
            return id.map_or(0, |id| self.gidx[id]);
        }
        match o.symbols.get(g.sig_sym) {
            Some(s) if s.st_type() == elf::STT_SECTION => {
                self.place[g.file].get(o.shndx(g.sig_sym) as usize).copied().flatten().map_or(0, |(os, _)| self.osecs[os as usize].sym)
            }
            Some(_) => self.lidx[g.file].get(g.sig_sym).copied().unwrap_or(0),
            None => 0,
        }
    }
}

struct Built {
    buf: Vec<u8>,
    build_id: Option<(usize, usize)>,
    build_id_kind: (BuildId, Vec<u8>),
}

/// The `-r` output, built by the passes below, each taking what the previous ones decided:
/// COMDAT selection, output sections, input offsets (and merged pieces), section indices,
/// the symbol table (section symbols, kept locals, globals), then the image (section names,
/// group contents, notes, file offsets, headers, contents).
fn build(config: &Config, r: &Resolved) -> Result<Built> {
    let objs: Vec<FileId> = r.load_order.iter().copied().filter(|&f| r.loaded[f] && matches!(r.files[f], File::Obj(_))).collect();
    let mut sel = select_comdats(r, &objs)?;
    let smap = script::apply(config, r, &objs, &mut sel.dropped)?;
    let mut secs = output_sections(r, &objs, &mut sel, &smap)?;
    place_inputs(r, &mut secs, &smap)?;
    let features = gnu_property_features(config, r, &objs);
    let idx = number_sections(config, &mut secs.osecs, features)?;

    let used = used_locals(r, &secs.place);
    let mut syms = SymTab::new();
    let lidx = symtab_order::push_locals(config, r, &objs, &mut secs, &idx.order, &used, &mut syms);
    let first_global = syms.count();
    let facts = global_facts(r, &objs);
    let gidx = globals(config, r, &secs, &facts, &mut syms)?;
    let plan = Plan { r, osecs: secs.osecs, place: secs.place, lidx, gidx };

    let (shstrtab, name_off) = section_names(&plan, &idx.slots);
    let group_data = group_contents(&plan);
    let synth = SynthData {
        gnu_property: gnu_property_note(features),
        build_id_note: build_id_note(idx.build_id_len),
        symtab: syms.data,
        symtab_shndx: syms.xindex.iter().flat_map(|x| x.to_le_bytes()).collect(),
        first_global,
        strtab: syms.strtab.data,
        shstrtab: shstrtab.data,
    };
    let mut hdrs = section_headers(&plan, &idx, &group_data, &synth)?;
    let shoff = assign_file_offsets(&mut hdrs)?;
    let mut buf = alloc_image(shoff, idx.nsections)?;
    write_elf_header(&mut buf, shoff, idx.nsections, idx.shstrtab_index);
    write_section_headers(&mut buf, shoff, &hdrs, &name_off);
    let warnings = write_contents(&plan, &idx.slots, &hdrs, &group_data, &synth, &mut buf[..shoff as usize]);
    for w in &warnings {
        config.diag.warn(w);
    }
    if config.diag.error_count() > 0 {
        return Err(Error::many(Vec::new()));
    }
    let build_id = idx.slots.iter().position(|s| matches!(s, Slot::Synth(Synth::BuildId))).map(|k| (hdrs[k].off as usize + 16, idx.build_id_len));
    Ok(Built { buf, build_id, build_id_kind: (config.build_id, config.build_id_hex.clone()) })
}

/// The COMDAT verdicts: per object, which input sections are dropped, and the groups that
/// survive (by their SHT_GROUP section index).
struct Selection {
    dropped: Vec<Vec<bool>>,
    kept_groups: Vec<HashMap<u32, Group>>,
}

/// COMDAT selection, recomputed in load order as the resolver did (the first file to bring a
/// signature keeps its group); non-COMDAT groups are always kept, and so are the groups of
/// LTO's objects (lld reads them ignoring COMDATs). A discarded group drops its
/// members and its SHT_GROUP section, on top of what the resolver discarded.
fn select_comdats(r: &Resolved, objs: &[FileId]) -> Result<Selection> {
    let nfiles = r.files.len();
    let mut dropped: Vec<Vec<bool>> = vec![Vec::new(); nfiles];
    let mut errors: Vec<String> = Vec::new();
    let mut comdat_seen: HashSet<&'static [u8]> = HashSet::new();
    let mut kept_groups: Vec<HashMap<u32, Group>> = (0..nfiles).map(|_| HashMap::new()).collect();
    for &f in objs {
        let o = r.obj(f);
        dropped[f] = r.discarded[f].clone();
        dropped[f].resize(o.sections.len(), false);
        for (i, s) in o.sections.iter().enumerate() {
            if s.sh_type != elf::SHT_GROUP || i == 0 {
                continue;
            }
            let d = s.data;
            if d.len() < 4 || d.len() % 4 != 0 {
                errors.push(format!("{}: invalid SHT_GROUP section", o.name()));
                continue;
            }
            let words: Vec<u32> = d.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            let members: Vec<u32> = words[1..].to_vec();
            if members.iter().any(|&m| m == 0 || m as usize >= o.sections.len()) {
                errors.push(format!("{}: invalid section index in group", o.name()));
                continue;
            }
            let comdat = words[0] & elf::GRP_COMDAT != 0;
            let from_lto = r.lto_first_file.is_some_and(|first| f >= first);
            let kept = if comdat && !from_lto {
                let sig = o.groups.iter().find(|g| g.0 as usize == i).map(|g| g.1).unwrap_or(b"");
                comdat_seen.insert(sig) && !members.iter().any(|&m| r.discarded[f].get(m as usize).copied().unwrap_or(false))
            } else {
                true
            };
            if kept {
                let sig_sym = s.hdr.sh_info(LE) as usize;
                kept_groups[f].insert(i as u32, Group { file: f, flag: words[0], members, sig_sym });
            } else {
                for &m in &members {
                    dropped[f][m as usize] = true;
                }
                dropped[f][i] = true;
            }
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok(Selection { dropped, kept_groups })
}

/// Output sections, in input order: each kept input section joins the output section of its
/// name (a kept group's SHT_GROUP section and every SHF_GROUP member get their own);
/// SHF_LINK_ORDER sections wait until their linked sections are placed, and are dropped with
/// them. Takes the kept groups out of `sel`.
fn output_sections(r: &Resolved, objs: &[FileId], sel: &mut Selection, smap: &script::ScriptMap) -> Result<Sections> {
    let mut place: Vec<Vec<Place>> = vec![Vec::new(); r.files.len()];
    for &f in objs {
        place[f] = vec![None; r.obj(f).sections.len()];
    }
    let mut errors: Vec<String> = Vec::new();
    let mut osecs: Vec<OutSec> = Vec::new();
    let mut by_name: HashMap<(&'static [u8], Option<usize>), usize> = HashMap::new();
    let mut members_of: Vec<Vec<(FileId, u32)>> = Vec::new();
    let mut deferred: Vec<(usize, FileId, u32)> = Vec::new();
    for (pos, &f) in objs.iter().enumerate() {
        let o = r.obj(f);
        for (i, s) in o.sections.iter().enumerate().skip(1) {
            if sel.dropped[f][i] {
                continue;
            }
            match s.sh_type {
                elf::SHT_NULL | elf::SHT_SYMTAB | elf::SHT_STRTAB | elf::SHT_RELA | elf::SHT_REL | crate::elf::object::SHT_CREL | elf::SHT_SYMTAB_SHNDX => {
                    continue
                }
                _ => {}
            }
            if s.name == b".note.GNU-stack" || s.name == b".note.gnu.property" {
                continue;
            }
            if s.sh_type == elf::SHT_GROUP {
                let Some(g) = sel.kept_groups[f].remove(&(i as u32)) else { continue };
                osecs.push(new_osec(s.name, Some(g), s, (pos + 1, i as u32, 0), None));
                members_of.push(Vec::new());
                place[f][i] = Some(((osecs.len() - 1) as u32, 0));
                continue;
            }
            if s.flags & SHF_LINK_ORDER != 0 {
                deferred.push((pos, f, i as u32));
                continue;
            }
            if let Some(id) = add_input(&mut osecs, &mut members_of, &mut by_name, r, smap, (pos, f, i as u32), None, &mut errors) {
                // The offset is known later; linked-order sections only need the output section.
                place[f][i] = Some((id as u32, 0));
            }
        }
    }
    for (pos, f, i) in deferred {
        let o = r.obj(f);
        let s = &o.sections[i as usize];
        let link = s.hdr.sh_link(LE) as usize;
        let dep = if link == 0 || link >= o.sections.len() {
            None
        } else {
            match place[f][link] {
                Some((os, _)) => Some(os as usize),
                // The linked section is gone (a discarded COMDAT member): so is this one.
                None if o.sections[link].flags & SHF_LINK_ORDER == 0 => continue,
                None => None,
            }
        };
        if let Some(id) = add_input(&mut osecs, &mut members_of, &mut by_name, r, smap, (pos, f, i), Some(dep), &mut errors) {
            place[f][i as usize] = Some((id as u32, 0));
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    // Data commands join their description's section (made for them when nothing else does).
    for (desc, name, data) in &smap.data {
        let id = *by_name.entry((name, None)).or_insert_with(|| {
            osecs.push(script::data_osec(name, *desc));
            members_of.push(Vec::new());
            osecs.len() - 1
        });
        let os = &mut osecs[id];
        os.data = data.clone();
        os.merge_ok = false;
        if os.sh_type == elf::SHT_NOBITS {
            os.sh_type = elf::SHT_PROGBITS;
        }
    }
    // A description's inputs in its order; its ALIGN.
    for (id, os) in osecs.iter_mut().enumerate() {
        if let Some(&a) = smap.align.get(os.name) {
            os.align = os.align.max(a);
        }
        if os.first.0 == 0 {
            members_of[id].sort_by_key(|k| smap.rename.get(k).map_or(u64::MAX, |m| m.2));
        }
    }
    sort_link_order_members(r, &osecs, &place, &mut members_of);
    script::described_rela_places(r, objs, &mut osecs, &members_of);
    Ok(Sections { osecs, place, members_of })
}

/// The SHF_LINK_ORDER inputs of one output section in the order of the sections they link to
/// (output section, then position in it), as lld's resolveShfLinkOrder.
fn sort_link_order_members(r: &Resolved, osecs: &[OutSec], place: &[Vec<Place>], members_of: &mut [Vec<(FileId, u32)>]) {
    let pos_in: HashMap<(FileId, u32), usize> = members_of.iter().flat_map(|m| m.iter().enumerate().map(|(k, &x)| (x, k))).collect();
    for (id, os) in osecs.iter().enumerate() {
        if os.link_dep.is_none() || os.group.is_some() || members_of[id].len() < 2 {
            continue;
        }
        members_of[id].sort_by_key(|&(f, i)| {
            let link = r.obj(f).sections[i as usize].hdr.sh_link(LE);
            match place[f].get(link as usize).copied().flatten() {
                Some((out, _)) => (osecs[out as usize].first, pos_in.get(&(f, link)).copied().unwrap_or(usize::MAX)),
                None => ((usize::MAX, u32::MAX, u32::MAX), usize::MAX),
            }
        });
    }
}

/// Offsets of the inputs inside their output sections (each at its alignment, or at a
/// multiple of the entry size too while the section stays SHF_MERGE), the sections' sizes
/// and relocation counts; then the SHF_MERGE sections that can be deduplicated are, which
/// replaces their size.
fn place_inputs(r: &Resolved, secs: &mut Sections, smap: &script::ScriptMap) -> Result<()> {
    for (id, os) in secs.osecs.iter_mut().enumerate() {
        if os.group.is_some() {
            continue;
        }
        if !os.merge_ok {
            os.flags &= !(SHF_MERGE | SHF_STRINGS);
        }
        let mut off = 0u64;
        // A script's data commands go before the first input that follows them, unaligned.
        let mut data_off = Vec::with_capacity(os.data.len());
        let mut place_data = |until: u64, off: &mut u64| {
            while let Some(d) = os.data.get(data_off.len()).filter(|d| d.key < until) {
                data_off.push(*off);
                *off += d.size as u64;
            }
        };
        for &(f, i) in &secs.members_of[id] {
            if !os.data.is_empty() {
                place_data(smap.rename.get(&(f, i)).map_or(u64::MAX, |m| m.2), &mut off);
            }
            let s = &r.obj(f).sections[i as usize];
            let step = if os.merge_ok { lcm(s.align, os.entsize).ok_or_else(too_large)? } else { s.align };
            off = align_to(off, step)?;
            os.members.push(Member { file: f, shndx: i, off });
            secs.place[f][i as usize] = Some((id as u32, off));
            os.nrelocs += s.relocs.len() as u64;
            off = off.checked_add(s.size).ok_or_else(too_large)?;
        }
        place_data(u64::MAX, &mut off);
        os.data_off = data_off;
        os.size = off;
    }
    let merged: Vec<(usize, Option<Merged>)> = secs
        .osecs
        .par_iter()
        .enumerate()
        .filter(|(_, os)| os.group.is_none() && os.merge_ok)
        .map(|(id, os)| (id, merge_pieces(r, &os.members, os.flags & SHF_STRINGS != 0, os.entsize, os.align)))
        .collect();
    for (id, m) in merged {
        if let Some(m) = m {
            secs.osecs[id].size = m.data.len() as u64;
            secs.osecs[id].merged = Some(m);
        }
    }
    Ok(())
}

/// The x86 feature bits of the output's `.note.gnu.property`: the AND of the objects' bits,
/// plus `-z ibt`/`-z shstk`; 0 (no note) without objects.
fn gnu_property_features(config: &Config, r: &Resolved, objs: &[FileId]) -> u32 {
    if objs.is_empty() {
        return 0;
    }
    let mut features = objs.iter().fold(u32::MAX, |acc, &f| acc & x86_features(r.obj(f)));
    if config.z_ibt {
        features |= GNU_PROPERTY_X86_FEATURE_1_IBT;
    }
    if config.z_shstk {
        features |= GNU_PROPERTY_X86_FEATURE_1_SHSTK;
    }
    features
}

/// The output's section header order and the indices fixed by it.
struct Indices {
    /// Output sections by first input: the order of their headers and section symbols.
    order: Vec<usize>,
    /// Every section header after the null one, in index order.
    slots: Vec<Slot>,
    /// Section headers, the null one included.
    nsections: usize,
    build_id_len: usize,
    symtab_index: u32,
    strtab_index: u32,
    shstrtab_index: u32,
}

/// Section indices: each output section in the order of its first input, its `.rela` right
/// after it, then the synthetic ones (the property note when `features` is non-zero, the
/// build-id note with `--build-id`). Sets each output section's `index` and `rela_index`.
/// More sections than the ELF header can count is an error.
fn number_sections(config: &Config, osecs: &mut [OutSec], features: u32) -> Result<Indices> {
    let mut order: Vec<usize> = (0..osecs.len()).collect();
    order.sort_by_key(|&i| osecs[i].first);
    // Each `.rela` right after its section, or for a script's description where lld's orphan
    // placement puts it (`rela_first`).
    let mut keyed: Vec<((usize, u32, u32), u8, Slot)> = Vec::with_capacity(order.len() * 2);
    for &i in &order {
        keyed.push((osecs[i].first, 0, Slot::Sec(i)));
        if osecs[i].nrelocs > 0 {
            keyed.push(match osecs[i].rela_first {
                Some(k) => (k, 0, Slot::Rela(i)),
                None => (osecs[i].first, 1, Slot::Rela(i)),
            });
        }
    }
    keyed.sort_by_key(|k| (k.0, k.1));
    let mut slots: Vec<Slot> = Vec::with_capacity(keyed.len());
    for (_, _, slot) in keyed {
        slots.push(slot);
        match slot {
            Slot::Sec(i) => osecs[i].index = slots.len() as u32,
            Slot::Rela(i) => osecs[i].rela_index = slots.len() as u32,
            Slot::Synth(_) => {}
        }
    }
    if features != 0 {
        slots.push(Slot::Synth(Synth::GnuProperty));
    }
    let build_id_len = crate::elf::synthetic::build_id_size(config);
    if build_id_len > 0 {
        slots.push(Slot::Synth(Synth::BuildId));
    }
    // A symbol can name any section numbered so far: past SHN_LORESERVE, their indices go to
    // `.symtab_shndx` (ELF's extended section numbering; the header's counts escape too).
    let extended = slots.len() + 1 >= elf::SHN_LORESERVE as usize;
    for s in [Synth::GnuStack, Synth::Symtab, Synth::SymtabShndx, Synth::Shstrtab, Synth::Strtab] {
        if s != Synth::SymtabShndx || extended {
            slots.push(Slot::Synth(s));
        }
    }
    let nsections = slots.len() + 1;
    if nsections > u32::MAX as usize {
        return Err(Error::new(format!("too many output sections ({nsections})")));
    }
    let slot_index = |s: Synth| slots.iter().position(|x| matches!(x, Slot::Synth(y) if *y == s)).map_or(0, |p| p as u32 + 1);
    let symtab_index = slot_index(Synth::Symtab);
    let strtab_index = slot_index(Synth::Strtab);
    let shstrtab_index = slot_index(Synth::Shstrtab);
    Ok(Indices { order, slots, nsections, build_id_len, symtab_index, strtab_index, shstrtab_index })
}

/// Section names: `.shstrtab` and each header's name offset in it, in index order
/// (`.rela<name>` for relocation sections).
fn section_names(plan: &Plan, slots: &[Slot]) -> (StrTab, Vec<u32>) {
    let mut shstrtab = StrTab::new();
    let mut name_off: Vec<u32> = Vec::with_capacity(slots.len());
    for s in slots {
        let n: &'static [u8] = match *s {
            Slot::Sec(i) => plan.osecs[i].name,
            Slot::Rela(i) => {
                let mut v = b".rela".to_vec();
                v.extend_from_slice(plan.osecs[i].name);
                crate::util::keep::slice(v)
            }
            Slot::Synth(Synth::GnuProperty) => b".note.gnu.property",
            Slot::Synth(Synth::BuildId) => b".note.gnu.build-id",
            Slot::Synth(Synth::GnuStack) => b".note.GNU-stack",
            Slot::Synth(Synth::Symtab) => b".symtab",
            Slot::Synth(Synth::SymtabShndx) => b".symtab_shndx",
            Slot::Synth(Synth::Shstrtab) => b".shstrtab",
            Slot::Synth(Synth::Strtab) => b".strtab",
        };
        name_off.push(shstrtab.add(n));
    }
    (shstrtab, name_off)
}

/// Group contents, by output section: the flag word, then the output indices of the
/// members (a member relocation section becomes the `.rela` of its target's output
/// section), each once, those not written left out.
fn group_contents(plan: &Plan) -> HashMap<usize, Vec<u8>> {
    plan.osecs
        .iter()
        .enumerate()
        .filter_map(|(id, os)| {
            let g = os.group.as_ref()?;
            let o = plan.obj(g.file);
            let mut seen = HashSet::new();
            let mut v = g.flag.to_le_bytes().to_vec();
            for &m in &g.members {
                let s = &o.sections[m as usize];
                let idx = if s.sh_type == elf::SHT_RELA {
                    let t = s.hdr.sh_info(LE) as usize;
                    plan.place[g.file].get(t).copied().flatten().map(|(os, _)| plan.osecs[os as usize].rela_index).unwrap_or(0)
                } else {
                    plan.place[g.file][m as usize].map(|(os, _)| plan.osecs[os as usize].index).unwrap_or(0)
                };
                if idx != 0 && seen.insert(idx) {
                    v.extend_from_slice(&idx.to_le_bytes());
                }
            }
            Some((id, v))
        })
        .collect()
}

/// The `.note.gnu.property` contents for x86 `features` (empty when 0: no note).
fn gnu_property_note(features: u32) -> Vec<u8> {
    if features == 0 {
        return Vec::new();
    }
    let mut v = Vec::with_capacity(32);
    for w in [4u32, 16, elf::NT_GNU_PROPERTY_TYPE_0] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.extend_from_slice(b"GNU\0");
    for w in [GNU_PROPERTY_X86_FEATURE_1_AND, 4, features, 0] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

/// The `.note.gnu.build-id` contents with a zeroed id of `len` bytes, filled once the image
/// is complete (empty when 0: no note).
fn build_id_note(len: usize) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    let mut v = Vec::with_capacity(16 + len);
    for w in [4u32, len as u32, elf::NT_GNU_BUILD_ID] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.extend_from_slice(b"GNU\0");
    v.resize(16 + len, 0);
    v
}

/// The contents of the sections the writer adds itself.
struct SynthData {
    gnu_property: Vec<u8>,
    build_id_note: Vec<u8>,
    symtab: Vec<u8>,
    symtab_shndx: Vec<u8>,
    /// The index of the first global in `symtab` (its sh_info).
    first_global: u32,
    strtab: Vec<u8>,
    shstrtab: Vec<u8>,
}

impl SynthData {
    fn bytes(&self, k: Synth) -> &[u8] {
        match k {
            Synth::GnuProperty => &self.gnu_property,
            Synth::BuildId => &self.build_id_note,
            Synth::GnuStack => &[],
            Synth::Symtab => &self.symtab,
            Synth::SymtabShndx => &self.symtab_shndx,
            Synth::Shstrtab => &self.shstrtab,
            Synth::Strtab => &self.strtab,
        }
    }
}

/// One output section header (the name aside).
struct Hdr {
    ty: u32,
    flags: u64,
    off: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// The section headers in index order, file offsets still 0: a group's sh_info is its
/// signature symbol, a `.rela`'s sh_info its section, a link-order section's sh_link its
/// linked output section.
fn section_headers(plan: &Plan, idx: &Indices, group_data: &HashMap<usize, Vec<u8>>, synth: &SynthData) -> Result<Vec<Hdr>> {
    let mut hdrs: Vec<Hdr> = Vec::with_capacity(idx.slots.len());
    for s in &idx.slots {
        let h = match *s {
            Slot::Sec(i) => {
                let os = &plan.osecs[i];
                match &os.group {
                    Some(g) => Hdr {
                        ty: elf::SHT_GROUP,
                        flags: os.flags,
                        off: 0,
                        size: group_data.get(&i).map_or(4, |d| d.len() as u64),
                        link: idx.symtab_index,
                        info: plan.group_info(g),
                        align: 4,
                        entsize: 4,
                    },
                    None => Hdr {
                        ty: os.sh_type,
                        flags: os.flags,
                        off: 0,
                        size: os.size,
                        link: os.link_dep.map_or(0, |d| plan.osecs[d].index),
                        info: 0,
                        align: os.align,
                        entsize: os.entsize,
                    },
                }
            }
            Slot::Rela(i) => {
                let os = &plan.osecs[i];
                Hdr {
                    ty: elf::SHT_RELA,
                    flags: SHF_INFO_LINK | (os.flags & SHF_GROUP),
                    off: 0,
                    size: os.nrelocs.checked_mul(RELA_SIZE).ok_or_else(too_large)?,
                    link: idx.symtab_index,
                    info: os.index,
                    align: 8,
                    entsize: RELA_SIZE,
                }
            }
            Slot::Synth(k) => {
                let size = synth.bytes(k).len() as u64;
                let (ty, flags, link, info, align, entsize) = match k {
                    Synth::GnuProperty => (elf::SHT_NOTE, SHF_ALLOC, 0, 0, 8, 0),
                    Synth::BuildId => (elf::SHT_NOTE, SHF_ALLOC, 0, 0, 4, 0),
                    Synth::GnuStack => (elf::SHT_PROGBITS, 0, 0, 0, 1, 0),
                    Synth::Symtab => (elf::SHT_SYMTAB, 0, idx.strtab_index, synth.first_global, 8, SYM_SIZE),
                    Synth::SymtabShndx => (elf::SHT_SYMTAB_SHNDX, 0, idx.symtab_index, 0, 4, 4),
                    Synth::Shstrtab => (elf::SHT_STRTAB, 0, 0, 0, 1, 0),
                    Synth::Strtab => (elf::SHT_STRTAB, 0, 0, 0, 1, 0),
                };
                Hdr { ty, flags, off: 0, size, link, info, align, entsize }
            }
        };
        hdrs.push(h);
    }
    Ok(hdrs)
}

/// File offsets: the ELF header, then every section in index order at its alignment
/// (NOBITS taking no room); returns the section header table's offset.
fn assign_file_offsets(hdrs: &mut [Hdr]) -> Result<u64> {
    let mut off = 64u64;
    for h in hdrs.iter_mut() {
        off = align_to(off, h.align.max(1))?;
        h.off = off;
        if h.ty != elf::SHT_NOBITS {
            off = off.checked_add(h.size).ok_or_else(too_large)?;
        }
    }
    align_to(off, 8)
}

/// The zeroed image: contents up to `shoff`, then `nsections` headers; an image the address
/// space cannot hold is "output file too large".
fn alloc_image(shoff: u64, nsections: usize) -> Result<Vec<u8>> {
    let total = (nsections as u64).checked_mul(SHDR_SIZE).and_then(|n| n.checked_add(shoff)).ok_or_else(too_large)?;
    if total > isize::MAX as u64 {
        return Err(too_large());
    }
    let mut buf: Vec<u8> = Vec::new();
    buf.try_reserve_exact(total as usize).map_err(|_| too_large())?;
    buf.resize(total as usize, 0);
    Ok(buf)
}

/// The ELF header of an x86-64 ET_REL with `nsections` headers at `shoff`. A count or a
/// `.shstrtab` index of SHN_LORESERVE or more escapes to the null section header (its
/// sh_size and sh_link), as ELF's extended section numbering says.
fn write_elf_header(buf: &mut [u8], shoff: u64, nsections: usize, shstrtab_index: u32) {
    let null = shoff as usize;
    let (e_shnum, e_shstrndx) = crate::elf::types::section_header_counts(&mut buf[null..null + 64], nsections, shstrtab_index as usize);
    let h = &mut buf[..64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = elf::ELFCLASS64;
    h[5] = elf::ELFDATA2LSB;
    h[6] = elf::EV_CURRENT;
    h[16..18].copy_from_slice(&elf::ET_REL.to_le_bytes());
    h[18..20].copy_from_slice(&elf::EM_X86_64.to_le_bytes());
    h[20..24].copy_from_slice(&(elf::EV_CURRENT as u32).to_le_bytes());
    h[40..48].copy_from_slice(&shoff.to_le_bytes());
    h[52..54].copy_from_slice(&64u16.to_le_bytes());
    h[58..60].copy_from_slice(&64u16.to_le_bytes());
    h[60..62].copy_from_slice(&e_shnum.to_le_bytes());
    h[62..64].copy_from_slice(&e_shstrndx.to_le_bytes());
}

/// The section header table at `shoff`, after the null header.
fn write_section_headers(buf: &mut [u8], shoff: u64, hdrs: &[Hdr], name_off: &[u32]) {
    for (k, h) in hdrs.iter().enumerate() {
        let p = (shoff + (k as u64 + 1) * SHDR_SIZE) as usize;
        let b = &mut buf[p..p + 64];
        b[0..4].copy_from_slice(&name_off[k].to_le_bytes());
        b[4..8].copy_from_slice(&h.ty.to_le_bytes());
        b[8..16].copy_from_slice(&h.flags.to_le_bytes());
        b[24..32].copy_from_slice(&h.off.to_le_bytes());
        b[32..40].copy_from_slice(&h.size.to_le_bytes());
        b[40..44].copy_from_slice(&h.link.to_le_bytes());
        b[44..48].copy_from_slice(&h.info.to_le_bytes());
        b[48..56].copy_from_slice(&h.align.to_le_bytes());
        b[56..64].copy_from_slice(&h.entsize.to_le_bytes());
    }
}

/// Contents, in parallel over the disjoint slices of `body` (the image before the section
/// headers) that the headers give each section with bytes. Returns the warnings (relocations
/// against discarded sections), in section order.
fn write_contents(plan: &Plan, slots: &[Slot], hdrs: &[Hdr], group_data: &HashMap<usize, Vec<u8>>, synth: &SynthData, body: &mut [u8]) -> Vec<String> {
    let mut jobs: Vec<(usize, &mut [u8])> = Vec::new();
    let mut spans: Vec<(u64, u64, usize)> =
        hdrs.iter().enumerate().filter(|(_, h)| h.ty != elf::SHT_NOBITS && h.size > 0).map(|(k, h)| (h.off, h.size, k)).collect();
    spans.sort_unstable();
    let mut rest: &mut [u8] = body;
    let mut pos = 0u64;
    for (o, size, k) in spans {
        let tmp = std::mem::take(&mut rest);
        let (_, tail) = tmp.split_at_mut((o - pos) as usize);
        let (mine, tail) = tail.split_at_mut(size as usize);
        rest = tail;
        pos = o + size;
        jobs.push((k, mine));
    }
    jobs.into_par_iter()
        .flat_map(|(k, dst)| {
            let mut warns = Vec::new();
            match slots[k] {
                Slot::Sec(i) => write_section(plan, i, group_data, dst),
                Slot::Rela(i) => write_relas(plan, i, dst, &mut warns),
                Slot::Synth(s) => dst.copy_from_slice(synth.bytes(s)),
            }
            warns
        })
        .collect()
}

/// Output section `i`'s contents: a group's member list, the merged pieces, or the inputs
/// at their offsets (gaps in code filled with the trap instruction).
fn write_section(plan: &Plan, i: usize, group_data: &HashMap<usize, Vec<u8>>, dst: &mut [u8]) {
    let os = &plan.osecs[i];
    if os.group.is_some() {
        if let Some(d) = group_data.get(&i) {
            dst.copy_from_slice(d);
        }
    } else if let Some(m) = &os.merged {
        dst.copy_from_slice(&m.data);
    } else {
        if os.flags & SHF_EXECINSTR != 0 {
            dst.fill(dtld_arch::x86_64::TRAP);
        }
        for m in &os.members {
            let s = &plan.obj(m.file).sections[m.shndx as usize];
            let at = m.off as usize;
            if s.sh_type == elf::SHT_NOBITS {
                dst[at..at + s.size as usize].fill(0);
            } else {
                dst[at..at + s.data.len()].copy_from_slice(s.data);
            }
        }
        for (d, &at) in os.data.iter().zip(&os.data_off) {
            let n = d.size as usize;
            dst[at as usize..at as usize + n].copy_from_slice(&d.value.to_le_bytes()[..n]);
        }
    }
}

fn new_osec(name: &'static [u8], group: Option<Group>, s: &crate::elf::object::InputSection, first: (usize, u32, u32), link_dep: Option<usize>) -> OutSec {
    let entsize = s.hdr.sh_entsize(LE);
    OutSec { group, entsize, merge_ok: s.flags & SHF_MERGE != 0 && entsize > 0, link_dep, ..empty_osec(name, s.sh_type, s.flags, s.align.max(1), first) }
}

/// Adds input section (`pos`, `f`, `i`) to the output section of its name, creating it when
/// needed, and returns that output section (`None` after an error). `link` is `Some(dep)` for
/// SHF_LINK_ORDER sections.
fn add_input(
    osecs: &mut Vec<OutSec>,
    members_of: &mut Vec<Vec<(FileId, u32)>>,
    by_name: &mut HashMap<(&'static [u8], Option<usize>), usize>,
    r: &Resolved,
    smap: &script::ScriptMap,
    (pos, f, i): (usize, FileId, u32),
    link: Option<Option<usize>>,
    errors: &mut Vec<String>,
) -> Option<usize> {
    let o = r.obj(f);
    let s = &o.sections[i as usize];
    let dep = link.flatten();
    let linked = s.hdr.sh_link(LE);
    // A script's description comes first, in script order (key 0); the rest in input order.
    let renamed = smap.rename.get(&(f, i));
    let name = renamed.map_or(s.name, |m| m.1);
    let key = match renamed {
        Some(m) => (0, m.0, 0),
        None if link.is_some() && linked != 0 && (linked as usize) < o.sections.len() => (pos + 1, linked, i + 1),
        None => (pos + 1, i, 0),
    };
    // Group members stay separate; link-order sections merge only with the same linked output.
    let existing = if s.flags & SHF_GROUP != 0 { None } else { by_name.get(&(name, dep)).copied() };
    let Some(id) = existing else {
        osecs.push(new_osec(name, None, s, key, dep));
        members_of.push(vec![(f, i)]);
        if s.flags & SHF_GROUP == 0 {
            by_name.insert((name, dep), osecs.len() - 1);
        }
        return Some(osecs.len() - 1);
    };
    let os = &mut osecs[id];
    if (os.flags ^ s.flags) & SHF_TLS != 0 {
        errors.push(format!(
            "incompatible section flags for {}\n>>> {}:({}): 0x{:x}\n>>> output section {}: 0x{:x}",
            lossy(s.name),
            o.name(),
            lossy(s.name),
            s.flags,
            lossy(os.name),
            os.flags
        ));
        return None;
    }
    if os.sh_type != s.sh_type {
        if !progbits_like(os.sh_type) || !progbits_like(s.sh_type) {
            errors.push(format!(
                "section type mismatch for {}\n>>> {}:({}): {}\n>>> output section {}: {}",
                lossy(s.name),
                o.name(),
                lossy(s.name),
                type_name(s.sh_type),
                lossy(os.name),
                type_name(os.sh_type)
            ));
            return None;
        }
        os.sh_type = elf::SHT_PROGBITS;
    }
    let entsize = s.hdr.sh_entsize(LE);
    os.merge_ok = os.merge_ok && s.flags & SHF_MERGE != 0 && entsize == os.entsize && (s.flags & SHF_STRINGS) == (os.flags & SHF_STRINGS);
    if entsize != os.entsize {
        os.entsize = 0;
    }
    os.flags |= s.flags;
    os.align = os.align.max(s.align);
    os.first = os.first.min(key);
    members_of[id].push((f, i));
    Some(id)
}

/// Writes output section `i`'s relocations: offsets shifted, symbols remapped.
fn write_relas(plan: &Plan, i: usize, dst: &mut [u8], warns: &mut Vec<String>) {
    let os = &plan.osecs[i];
    let mut p = 0usize;
    for m in &os.members {
        let o = plan.obj(m.file);
        let sec = &o.sections[m.shndx as usize];
        for rel in sec.relocs {
            let sym = rel.r_sym(LE, false) as usize;
            let ty = rel.r_type(LE, false);
            let (osym, oty, addend, discarded) = plan.map_reloc(m.file, sym, ty, rel.r_addend(LE));
            if discarded && !is_debug(sec.name) && sec.name != b".eh_frame" && sec.name != b".gcc_except_table" {
                let target = o.shndx(sym) as usize;
                let tname = o.sections.get(target).map_or(String::new(), |s| lossy(s.name));
                // lld names the place in the relocation section being copied.
                let rela = o.sections.iter().find(|r| matches!(r.sh_type, elf::SHT_RELA | elf::SHT_REL) && r.hdr.sh_info(LE) == m.shndx);
                let rname = rela.map_or(String::new(), |r| lossy(r.name));
                warns.push(format!("relocation refers to a discarded section: {tname}\n>>> referenced by {}:({rname}+0x{:x})", o.input.name, rel.r_offset(LE)));
            }
            let b = &mut dst[p..p + RELA_SIZE as usize];
            b[0..8].copy_from_slice(&rel.r_offset(LE).wrapping_add(m.off).to_le_bytes());
            b[8..16].copy_from_slice(&(((osym as u64) << 32) | oty as u64).to_le_bytes());
            b[16..24].copy_from_slice(&addend.to_le_bytes());
            p += RELA_SIZE as usize;
        }
    }
}

/// Writes the finished image: a temporary file next to the output, mode 0644 (less the umask),
/// renamed over the output at the end, so a failure never leaves a partial file. An existing
/// output that is not a regular file (`/dev/null`, a FIFO) is written in place, as lld does.
fn write_file(out_path: &Path, image: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let open_err = |e: std::io::Error| Error::new(format!("cannot open output file {}: {}", out_path.display(), crate::error::io_error(&e)));
    let write_err = |e: std::io::Error| Error::new(format!("failed to write output '{}': {}", out_path.display(), crate::error::io_error(&e)));
    if crate::output::is_stdout(out_path) {
        let mut so = std::io::stdout().lock();
        return so.write_all(image).and_then(|_| so.flush()).map_err(write_err);
    }
    let special = crate::output::is_special_output(out_path);
    if special {
        let mut f = fs::OpenOptions::new().write(true).open(out_path).map_err(open_err)?;
        return f.write_all(image).map_err(write_err);
    }
    let mut tmp = crate::outfile::TmpFile::create(out_path, 0).map_err(open_err)?;
    tmp.file.write_all(image).map_err(write_err)?;
    tmp.persist(out_path, 0o644 & !crate::output::umask()).map_err(open_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_helpers() {
        assert_eq!(align_to(5, 4).unwrap(), 8);
        assert_eq!(align_to(8, 8).unwrap(), 8);
        assert_eq!(align_to(3, 1).unwrap(), 3);
        assert!(align_to(u64::MAX - 1, 16).is_err());
        assert_eq!(lcm(16, 24), Some(48));
        assert_eq!(lcm(1, 12), Some(12));
        assert_eq!(lcm(0, 8), Some(8));
    }

    #[test]
    fn pieces_map_offsets() {
        // Input strings at 0, 4 and 9 went to 20, 0 and 4.
        let t = [(0, 20), (4, 0), (9, 4)];
        assert_eq!(map_piece(&t, 0), 20);
        assert_eq!(map_piece(&t, 2), 22);
        assert_eq!(map_piece(&t, 4), 0);
        assert_eq!(map_piece(&t, 10), 5);
        assert_eq!(map_piece(&t, 30), 25);
        assert_eq!(map_piece(&t, (-4i64) as u64), 16);
        assert_eq!(map_piece(&[], 7), 7);
    }

    #[test]
    fn strtab_dedups() {
        let mut t = StrTab::new();
        let a = t.add(b"foo");
        let b = t.add(b"bar");
        assert_eq!(t.add(b"foo"), a);
        assert_ne!(a, b);
        assert_eq!(t.add(b""), 0);
        assert_eq!(t.data, b"\0foo\0bar\0");
    }
}

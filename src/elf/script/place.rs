//! The script layout stage: with a `SECTIONS` command, the linker script instead of lld's
//! default rules decides which output section each input section joins (`plan`, before the
//! output sections are built), the order of output sections with orphans placed as lld places
//! them, the addresses (the location counter `.`, symbol assignments evaluated in order,
//! `ASSERT`s), and the program headers (`assign_addresses`, called by the ELF layout in place of
//! its default address assignment).

use std::collections::{HashMap, HashSet};

use object::elf;

use super::ast::*;
use super::eval::{self, Env, SecInfo, Val};
use super::plan::{Extra, Match, Plan};
use super::segments::max_page;
use super::select::{file_matches, name_for_script};
use crate::elf::config::Config;
use crate::elf::layout::model::{align_up, Chunk, Layout, OutSec, Synth};
use crate::elf::symtab::{Def, FileId, Resolved, SymbolId};
use crate::error::{Error, Result};

fn descs_of(script: &LayoutScript) -> Vec<OutDesc> {
    script
        .cmds
        .iter()
        .filter_map(|c| match c {
            SecCmd::Out(o) => Some(o.clone()),
            _ => None,
        })
        .collect()
}

fn sort_key_cmp(kind: SortKind, a: &Cand, b: &Cand) -> std::cmp::Ordering {
    match kind {
        SortKind::Name => a.name.cmp(&b.name),
        SortKind::Alignment => b.align.cmp(&a.align),
        SortKind::Priority => init_priority(a.name.as_bytes()).cmp(&init_priority(b.name.as_bytes())),
        SortKind::Default | SortKind::None => std::cmp::Ordering::Equal,
    }
}

fn init_priority(name: &[u8]) -> u64 {
    let s = String::from_utf8_lossy(name);
    for p in [".init_array.", ".fini_array.", ".ctors.", ".dtors."] {
        if let Some(rest) = s.strip_prefix(p) {
            if let Ok(v) = rest.parse::<u64>() {
                return if p == ".ctors." || p == ".dtors." { 65535 - v.min(65535) } else { v };
            }
        }
    }
    65536
}

/// A candidate input section: an input section, or a common symbol (lld's `COMMON` section).
struct Cand {
    what: CandOf,
    name: String,
    fname: String,
    flags: u64,
    align: u64,
}

enum CandOf {
    Section(FileId, u32),
    Common(SymbolId),
}

/// Sorts matched candidates (indices into `cands`) as lld's `sortInputSections`: nothing for
/// SORT_NONE, else stably by the inner key (`--sort-section`'s when there is none), then by
/// the outer key.
fn sort_block(cands: &[Cand], block: &mut [usize], outer: SortKind, inner: SortKind, cmdline: SortKind) {
    if outer == SortKind::None {
        return;
    }
    let inner = if inner == SortKind::Default { cmdline } else { inner };
    for kind in [inner, outer] {
        if !matches!(kind, SortKind::Default | SortKind::None) {
            block.sort_by(|&a, &b| sort_key_cmp(kind, &cands[a], &cands[b]));
        }
    }
}

/// Matches every live input section against the script (lld's `processSectionCommands`).
pub fn plan(config: &Config, r: &Resolved, live: &crate::elf::gc::Live) -> Plan {
    plan_descs(config, r, live, descs_of(&config.script))
}

/// Matches every live input section against output section descriptions `descs`, in order.
pub fn plan_descs(config: &Config, r: &Resolved, live: &crate::elf::gc::Live, descs: Vec<OutDesc>) -> Plan {
    let mut disabled = vec![false; descs.len()];
    let mut matches: HashMap<(FileId, u32), Match> = HashMap::new();
    let mut commons: HashMap<SymbolId, Match> = HashMap::new();
    let mut discard = HashSet::new();
    // Candidates in lld's input order: the common symbols first (lld turns them into
    // `COMMON` sections before it gathers the objects' sections: by file in load order, then
    // by the file's global symbols, each common once), then the input sections in input order
    // (with their names and file names).
    let mut cands: Vec<Cand> = Vec::new();
    let mut seen_common: HashSet<SymbolId> = HashSet::new();
    for (f, o) in r.objects_in_load_order() {
        let globals = o.first_global.min(o.symbols.len())..o.symbols.len();
        if !o.symbols[globals.clone()].iter().any(|y| object::read::elf::Sym::st_shndx(y, crate::elf::types::LE) == elf::SHN_COMMON) {
            continue;
        }
        for i in globals {
            let Some(id) = r.global_of(f, i) else { continue };
            let Def::Common(g, _) = r.symbols[id].def else { continue };
            if seen_common.insert(id) {
                let flags = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
                cands.push(Cand { what: CandOf::Common(id), name: "COMMON".into(), fname: name_for_script(r, g), flags, align: r.common_alignment(id) });
            }
        }
    }
    for (f, o) in r.objects_in_load_order() {
        let fname = name_for_script(r, f);
        for (s, sec) in o.sections.iter().enumerate() {
            if !live[f][s] {
                continue;
            }
            let name = String::from_utf8_lossy(sec.name).into_owned();
            cands.push(Cand { what: CandOf::Section(f, s as u32), name, fname: fname.clone(), flags: sec.flags, align: sec.align });
        }
    }
    let mut taken = vec![false; cands.len()];
    let mut seq: u64 = 0;
    for (di, d) in descs.iter().enumerate() {
        let mut got: Vec<(usize, u64)> = Vec::new();
        let mut local_taken: HashSet<usize> = HashSet::new();
        for (ci, ic) in d.cmds.iter().enumerate() {
            let InCmd::Input(id) = ic else { continue };
            // lld: per pattern, collect in input order; SORT patterns are sorted as a block.
            let mut ret: Vec<usize> = Vec::new();
            let mut after_prev_sort = 0;
            for pat in &id.patterns {
                let before = ret.len();
                for (ci, Cand { name, fname, flags, .. }) in cands.iter().enumerate() {
                    if taken[ci] || local_taken.contains(&ci) || !id.flags_match(*flags) {
                        continue;
                    }
                    if !file_matches(&id.file, fname) || id.exclude_files.matches(fname) || pat.exclude_files.matches(fname) || !pat.names.matches(name) {
                        continue;
                    }
                    ret.push(ci);
                    local_taken.insert(ci);
                }
                if pat.sort_outer == SortKind::Default {
                    continue;
                }
                // lld: what earlier patterns matched is sorted by (--sort-section, input
                // order); this SORT pattern's block by (outer, inner or --sort-section).
                let cmdline = config.sort_section;
                ret[after_prev_sort..before].sort();
                sort_block(&cands, &mut ret[after_prev_sort..before], cmdline, SortKind::None, cmdline);
                sort_block(&cands, &mut ret[before..], pat.sort_outer, pat.sort_inner, cmdline);
                after_prev_sort = ret.len();
            }
            ret[after_prev_sort..].sort();
            sort_block(&cands, &mut ret[after_prev_sort..], config.sort_section, SortKind::None, config.sort_section);
            for c in ret {
                got.push((c, ((ci as u64) << 40) | seq));
                seq += 1;
            }
        }
        if let Some(c) = d.constraint {
            let any_write = got.iter().any(|&(ci, _)| cands[ci].flags & elf::SHF_WRITE as u64 != 0);
            let ok = match c {
                Constraint::ReadOnly => !any_write,
                Constraint::ReadWrite => any_write,
            };
            if !ok {
                disabled[di] = true;
                continue;
            }
        }
        for (ci, order) in got {
            taken[ci] = true;
            match cands[ci].what {
                // A discarded common stays where lld's default rules put it.
                CandOf::Common(_) if d.name == "/DISCARD/" => {}
                CandOf::Common(id) => {
                    commons.insert(id, Match { desc: di, order });
                }
                CandOf::Section(f, s) if d.name == "/DISCARD/" => {
                    discard.insert((f, s));
                }
                CandOf::Section(f, s) => {
                    matches.insert((f, s), Match { desc: di, order });
                }
            }
        }
    }
    discard_link_order_dependents(r, &mut discard, &mut matches);
    Plan { descs, matches, commons, discard, disabled }
}

/// lld's `LinkerScript::discard` discards a section's SHF_LINK_ORDER dependents with it (and
/// theirs), whatever description their own names match.
fn discard_link_order_dependents(r: &Resolved, discard: &mut HashSet<(FileId, u32)>, matches: &mut HashMap<(FileId, u32), Match>) {
    let mut work: Vec<(FileId, u32)> = discard.iter().copied().collect();
    let mut by_file: HashMap<FileId, HashMap<u32, Vec<u32>>> = HashMap::new();
    while let Some((f, s)) = work.pop() {
        let deps = by_file.entry(f).or_insert_with(|| {
            let mut m: HashMap<u32, Vec<u32>> = HashMap::new();
            if let crate::elf::symtab::File::Obj(o) = &r.files[f] {
                for (k, sec) in o.sections.iter().enumerate() {
                    if sec.flags & elf::SHF_LINK_ORDER as u64 != 0 {
                        m.entry(object::read::elf::SectionHeader::sh_link(sec.hdr, crate::elf::types::LE)).or_default().push(k as u32);
                    }
                }
            }
            m
        });
        for &d in deps.get(&s).map(Vec::as_slice).unwrap_or(&[]) {
            if discard.insert((f, d)) {
                matches.remove(&(f, d));
                work.push((f, d));
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Address assignment
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Body {
    /// Chunk indices of the output section, in order.
    Chunks(Vec<usize>),
    Assign(Assign),
    Data(u8, Expr),
}

#[derive(Debug, Clone)]
enum Item {
    Assign(Assign),
    Sec { osec: usize, desc: Option<usize>, body: Vec<Body>, has_inputs: bool },
}

/// lld's section rank bits (for orphan placement by proximity).
fn bit_rank(os: &OutSec) -> u32 {
    let mut rank: u32 = 1 << 27;
    if os.flags & elf::SHF_ALLOC as u64 == 0 {
        return rank | 1 << 26;
    }
    rank |= 1 << 17 | 1 << 16;
    if os.name == ".interp" {
        return rank;
    }
    rank |= 1 << 15;
    if os.sh_type == elf::SHT_NOTE {
        return rank;
    }
    rank |= 1 << 14;
    let x = os.flags & elf::SHF_EXECINSTR as u64 != 0;
    let w = os.flags & elf::SHF_WRITE as u64 != 0;
    if x {
        rank |= if w { 1 << 12 } else { 1 << 11 };
    } else if w {
        rank |= 1 << 13;
    } else if os.sh_type == elf::SHT_PROGBITS {
        rank |= 1 << 10;
    }
    if !os.relro {
        rank |= 1 << 9;
    }
    if os.flags & elf::SHF_TLS as u64 == 0 {
        rank |= 1 << 8;
    }
    if os.sh_type == elf::SHT_NOBITS {
        rank |= 1 << 7;
    }
    rank
}

fn proximity(a: u32, b: u32) -> u32 {
    (a ^ b).leading_zeros()
}

/// State of one evaluation pass (lld's `AddressState`).
struct Pass<'a, 'r> {
    l: &'a mut Layout<'r>,
    plan: &'a Plan,
    dot: u64,
    cur: Option<usize>,
    /// Symbol values assigned so far.
    syms: HashMap<String, Val>,
    header_size: u64,
    errors: std::cell::RefCell<Vec<String>>,
    lma: HashMap<usize, u64>,
    regions: HashMap<String, (u64, u64)>,
    region_pos: HashMap<String, u64>,
    assert_msgs: std::cell::RefCell<Vec<String>>,
    /// With PHDRS and no SECTIONS: the output section that begins the PT_LOAD.
    load_start: Option<usize>,
}

impl Env for Pass<'_, '_> {
    fn sec_addr(&self, sec: usize) -> u64 {
        self.l.osecs.get(sec).map_or(0, |o| o.addr)
    }
    fn dot(&self) -> std::result::Result<Val, String> {
        match self.cur {
            Some(s) => Ok(Val { off: self.dot.wrapping_sub(self.l.osecs[s].addr), sec: Some(s), align: 1 }),
            _ => Ok(Val::abs(self.dot)),
        }
    }
    fn symbol(&self, name: &str) -> std::result::Result<Val, String> {
        if let Some(v) = self.syms.get(name) {
            return Ok(*v);
        }
        let r = self.l.r;
        let Some(id) = r.lookup_expr(name.as_bytes()) else { return Err(format!("symbol not found: {name}")) };
        if let Some(v) = self.l.canonical_ifunc_addr(id) {
            return Ok(super::toplevel::iplt_val(self.l, v));
        }
        match r.symbols[id].def {
            Def::Defined(f, i) => {
                let s = self.l.sym(f, i);
                use object::read::elf::Sym as _;
                if s.st_shndx(crate::elf::types::LE) == elf::SHN_ABS {
                    return Ok(Val::abs(s.st_value(crate::elf::types::LE)));
                }
                let sh = self.l.obj(f).shndx(i);
                let os = self.l.sec_osec.get(f).and_then(|v| v.get(sh as usize)).copied().unwrap_or(u32::MAX);
                let addr = self.l.section_addr(f, sh, s.st_value(crate::elf::types::LE)).unwrap_or(0);
                if os == u32::MAX {
                    return Ok(Val::abs(addr));
                }
                Ok(Val { off: addr.wrapping_sub(self.l.osecs[os as usize].addr), sec: Some(os as usize), align: 1 })
            }
            Def::Synthetic => Ok(Val::abs(self.l.sym_value.get(id).copied().unwrap_or(0))),
            Def::Common(..) => Ok(Val::abs(0)),
            // A copy-relocated symbol is defined where its copy is, one with a canonical PLT
            // entry at that entry (lld replaces them with Defineds); other shared symbols have no
            // address here.
            Def::Shared(..) => super::toplevel::shared_defined_val(self.l, id).ok_or_else(|| format!("symbol not found: {name}")),
            _ => Err(format!("symbol not found: {name}")),
        }
    }
    fn defined(&self, name: &str) -> bool {
        if self.syms.contains_key(name) {
            return true;
        }
        let r = self.l.r;
        r.lookup(name.as_bytes()).is_some_and(|id| matches!(r.symbols[id].def, Def::Defined(..) | Def::Common(..) | Def::Shared(..)))
    }
    fn section(&self, name: &str) -> std::result::Result<SecInfo, String> {
        match self.l.osecs.iter().position(|o| o.name == name) {
            Some(i) => {
                let o = &self.l.osecs[i];
                Ok(SecInfo { index: Some(i), addr: o.addr, lma: self.lma.get(&i).copied().unwrap_or(o.addr), size: o.size, align: o.align })
            }
            None => {
                if self.plan.desc_by_name(name).is_some() {
                    Ok(SecInfo { index: None, addr: 0, lma: 0, size: 0, align: 1 })
                } else {
                    Err(format!("undefined section {name}"))
                }
            }
        }
    }
    fn header_size(&self) -> u64 {
        self.header_size
    }
    fn max_page_size(&self) -> u64 {
        max_page(self.l.config)
    }
    fn common_page_size(&self) -> u64 {
        self.l.config.common_page_size.unwrap_or(crate::elf::layout::model::PAGE).min(max_page(self.l.config))
    }
    fn region(&self, name: &str) -> std::result::Result<(u64, u64), String> {
        self.regions.get(name).copied().ok_or_else(|| format!("memory region not defined: {name}"))
    }
    fn assert_failed(&self, msg: &str) {
        self.assert_msgs.borrow_mut().push(msg.to_string());
    }
}

/// Builds the item list: script commands with their output sections, empty descriptions
/// kept or dropped as lld does, orphans inserted at lld's positions.
fn build_items(l: &mut Layout, plan: &Plan) -> Result<Vec<Item>> {
    let (desc_osec, chunk_cmd) = adopt_synthetic(l, plan)?;
    order_chunks(l, plan, &desc_osec, &chunk_cmd);
    // Items in script order.
    let mut items: Vec<Item> = Vec::new();
    let mut di = 0usize;
    let mut prev_flags: u64 = elf::SHF_ALLOC as u64;
    for c in &l.config.script.cmds {
        match c {
            SecCmd::Assign(a) => items.push(Item::Assign(a.clone())),
            SecCmd::Out(_) => {
                let d = di;
                di += 1;
                if plan.disabled[d] || plan.descs[d].name == "/DISCARD/" {
                    continue;
                }
                let desc = &plan.descs[d];
                let taken = lld_synthetic_taken(l, desc);
                let osec = match desc_osec.get(&d) {
                    Some(&o) => {
                        if let Some((f, a)) = taken {
                            l.osecs[o].flags |= f;
                            l.osecs[o].align = l.osecs[o].align.max(a);
                        }
                        o
                    }
                    None => {
                        if discardable(desc, l) {
                            continue;
                        }
                        let mut os = crate::elf::layout::sections::new_osec(&desc.name, elf::SHT_PROGBITS, 0, 1);
                        let mask = (if desc.nonalloc { 0 } else { elf::SHF_ALLOC as u64 }) | elf::SHF_WRITE as u64 | elf::SHF_EXECINSTR as u64;
                        os.flags = prev_flags & mask;
                        // An empty synthetic section of lld's it took leaves its flags and
                        // alignment, and later empty sections inherit them.
                        if let Some((f, a)) = taken {
                            os.flags = f & mask;
                            os.align = a;
                            prev_flags = f;
                        }
                        os.script_desc = Some(d);
                        // An empty `.init_array`, `.data.rel.ro`, ... kept for its symbols is
                        // RELRO by name, as in lld (else PT_GNU_RELRO would stop before it).
                        os.relro = crate::elf::layout::sections::is_relro_name(&desc.name, os.flags, os.sh_type);
                        l.osecs.push(os);
                        l.osecs.len() - 1
                    }
                };
                if !l.osecs[osec].chunks.is_empty() {
                    prev_flags = l.osecs[osec].flags;
                }
                if desc.noload {
                    l.osecs[osec].sh_type = elf::SHT_NOBITS;
                }
                if desc.nonalloc {
                    l.osecs[osec].flags &= !(elf::SHF_ALLOC as u64);
                }
                let body = desc_body(l, plan, d, osec);
                // lld's hasInputSections: an empty synthetic section it took counts.
                let has_inputs = !l.osecs[osec].chunks.is_empty() || taken.is_some();
                items.push(Item::Sec { osec, desc: Some(d), body, has_inputs });
            }
        }
    }
    // Orphans, sorted by rank, each placed by proximity (lld's findOrphanPos).
    let mut orphans: Vec<usize> = (0..l.osecs.len()).filter(|&i| l.osecs[i].script_desc.is_none() && !l.osecs[i].name.is_empty()).collect();
    let ranks: Vec<u32> = l.osecs.iter().map(bit_rank).collect();
    orphans.sort_by_key(|&i| (ranks[i], crate::elf::layout::sizes::synth_order(&l.osecs[i]), i));
    // lld skips a leading `. = ...` before the first section.
    let first = items.iter().position(|it| !matches!(it, Item::Assign(a) if a.name != ".")).map_or(items.len(), |p| {
        if matches!(items[p], Item::Assign(_)) {
            p + 1
        } else {
            p
        }
    });
    report_orphans(l, &orphans);
    // Orphans of one rank go one after another: once the first of a rank is placed, findOrphanPos
    // puts the next just after the previous one (it is the end of the first run of sections of
    // that rank, and what follows it is not a symbol assignment), so a run is placed with one
    // search and one splice, not one each (65,000 orphans took minutes).
    let mut k = 0;
    while k < orphans.len() {
        let o = orphans[k];
        let relro_pad = matches!(l.osecs[o].chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding)));
        let mut end = k + 1;
        if !relro_pad {
            while end < orphans.len()
                && ranks[orphans[end]] == ranks[o]
                && !matches!(l.osecs[orphans[end]].chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding)))
            {
                end += 1;
            }
        }
        let relro_end = if relro_pad { items.iter().position(|it| matches!(it, Item::Assign(a) if is_relro_end(&a.expr))) } else { None };
        let pos = match relro_end {
            Some(p) => p,
            None => orphan_pos(&items, first, ranks[o], &ranks, l),
        };
        let run: Vec<Item> = orphans[k..end]
            .iter()
            .map(|&o| Item::Sec { osec: o, desc: None, body: vec![Body::Chunks((0..l.osecs[o].chunks.len()).collect())], has_inputs: true })
            .collect();
        items.splice(pos..pos, run);
        k = end;
    }
    Ok(items)
}

/// lld creates these synthetic sections in every link and removes them when empty, after a
/// script's description took them: such a description keeps their flags and alignment (lld's
/// removeUnusedSyntheticSections leaves the output section's flags; `pr36475`). Name, flags,
/// alignment.
const LLD_ALWAYS_SYNTHETIC: &[(&str, u32, u64)] = &[
    (".got", elf::SHF_ALLOC | elf::SHF_WRITE, 8),
    (".got.plt", elf::SHF_ALLOC | elf::SHF_WRITE, 8),
    (".plt", elf::SHF_ALLOC | elf::SHF_EXECINSTR, 16),
    (".iplt", elf::SHF_ALLOC | elf::SHF_EXECINSTR, 16),
    (".rela.dyn", elf::SHF_ALLOC, 8),
    (".rela.plt", elf::SHF_ALLOC, 8),
];

/// The flags and alignment lld's always-created synthetic sections give description `desc`
/// when it takes one that dtld did not create (by its name, or a pattern of file `*`).
fn lld_synthetic_taken(l: &Layout, desc: &OutDesc) -> Option<(u64, u64)> {
    let mut got: Option<(u64, u64)> = None;
    for &(name, flags, align) in LLD_ALWAYS_SYNTHETIC {
        if l.osecs.iter().any(|o| o.name == name) {
            continue;
        }
        let by_pattern = desc.cmds.iter().any(|ic| matches!(ic, InCmd::Input(id) if id.file == "*" && id.patterns.iter().any(|p| p.names.matches(name))));
        if desc.name == name || by_pattern {
            let g = got.get_or_insert((0, 1));
            g.0 |= u64::from(flags);
            g.1 = g.1.max(align);
        }
    }
    got
}

/// Synthetic output sections a description's pattern (or name) takes join that description;
/// returns each description's output section and, for the chunks moved, their command key.
/// `/DISCARD/` drops the synthetic sections nothing else refers to by address (lld discards any
/// synthetic section but `.shstrtab`); one dtld cannot leave out is an error, never ignored.
type Adopted = (HashMap<usize, usize>, HashMap<(usize, usize), u64>);
fn adopt_synthetic(l: &mut Layout, plan: &Plan) -> Result<Adopted> {
    let mut refused = Vec::new();
    let mut desc_osec: HashMap<usize, usize> = HashMap::new();
    let mut chunk_cmd: HashMap<(usize, usize), u64> = HashMap::new();
    for (i, os) in l.osecs.iter().enumerate() {
        if let Some(d) = os.script_desc {
            desc_osec.insert(d, i);
        }
    }
    let n = l.osecs.len();
    for i in 0..n {
        if l.osecs[i].script_desc.is_some() || l.osecs[i].name.is_empty() {
            continue;
        }
        // Synthetic sections, and `.bss.rel.ro` of copy relocations (an input section named
        // so in lld, where a pattern or the description of that name takes it).
        let sy = match l.osecs[i].chunks.first().copied() {
            Some(Chunk::Synthetic(sy)) => Some(sy),
            Some(Chunk::Bss(_)) if l.osecs[i].name == ".bss.rel.ro" => None,
            _ => continue,
        };
        let name = l.osecs[i].name.clone();
        // With a `.data.rel.ro` description, lld names its copy-relocation section
        // `.data.rel.ro.bss` so that the description's patterns take it and RELRO stays
        // contiguous (the map still prints `.bss.rel.ro`).
        let name = if name == ".bss.rel.ro" && plan.desc_by_name(".data.rel.ro").is_some() { ".data.rel.ro.bss".to_string() } else { name };
        // Which description's pattern takes it (file pattern `*`).
        let mut found = None;
        'd: for (di, d) in plan.descs.iter().enumerate() {
            if plan.disabled[di] {
                continue;
            }
            for (ci, ic) in d.cmds.iter().enumerate() {
                let InCmd::Input(id) = ic else { continue };
                if id.file == "*" && id.patterns.iter().any(|p| p.names.matches(&name)) {
                    found = Some((di, ci));
                    break 'd;
                }
            }
        }
        if found.is_none() {
            if let Some(di) = plan.desc_by_name(&name) {
                found = Some((di, usize::MAX));
            }
        }
        let Some((di, ci)) = found else { continue };
        if plan.descs[di].name == "/DISCARD/" {
            match sy {
                Some(s @ (Synth::Comment | Synth::GnuHash | Synth::SysvHash | Synth::BuildId | Synth::GnuProperty)) => {
                    l.osecs[i].name = String::new();
                    l.osecs[i].chunks.clear();
                    l.synth_osec.remove(&s);
                }
                _ => refused.push(format!("discarding {name} section is not supported by dtld")),
            }
            continue;
        }
        match desc_osec.get(&di) {
            Some(&t) => {
                let chunks = std::mem::take(&mut l.osecs[i].chunks);
                for c in chunks {
                    if let Chunk::Synthetic(s) = c {
                        l.synth_osec.insert(s, t);
                    }
                    let k = l.osecs[t].chunks.len();
                    l.osecs[t].chunks.push(c);
                    chunk_cmd.insert((t, k), ((ci as u64) << 32) | 0xffff_fff0);
                }
                let (fl, al, relro) = (l.osecs[i].flags, l.osecs[i].align, l.osecs[i].relro);
                l.osecs[t].flags |= fl;
                l.osecs[t].align = l.osecs[t].align.max(al);
                l.osecs[t].relro |= relro;
                l.osecs[i].name = String::new();
            }
            None => {
                l.osecs[i].name = plan.descs[di].name.clone();
                l.osecs[i].script_desc = Some(di);
                desc_osec.insert(di, i);
                for k in 0..l.osecs[i].chunks.len() {
                    chunk_cmd.insert((i, k), ((ci as u64) << 32) | k as u64);
                }
            }
        }
    }
    if !refused.is_empty() {
        return Err(Error::many(refused));
    }
    Ok((desc_osec, chunk_cmd))
}

/// The order of chunks inside each description's section: by the script's sequence.
fn order_chunks(l: &mut Layout, plan: &Plan, desc_osec: &HashMap<usize, usize>, chunk_cmd: &HashMap<(usize, usize), u64>) {
    for (&_d, &os) in desc_osec.iter() {
        let chunks = l.osecs[os].chunks.clone();
        // Inside one input section description (the bits of a key above 40), the sections an
        // ordering file or the call graph ranks go first, by rank; the others follow in their
        // order (not in .init and .fini).
        let ranked = !l.section_priority.is_empty() && l.osecs[os].name != ".init" && l.osecs[os].name != ".fini";
        const LOW: u64 = (1u64 << 40) - 1;
        let split = |v: u64| (v >> 40, (1u64 << 40) | (v & LOW));
        let mut keyed: Vec<((u64, u64), usize, Chunk)> = chunks
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let key = match c {
                    Chunk::Input(f, s) => match plan.matches.get(&(*f, *s)) {
                        Some(m) => match l.section_priority.get(&(*f, *s)) {
                            Some(&p) if ranked => (m.order >> 40, p as u64),
                            _ => split(m.order),
                        },
                        // An orphan: its output section is one description of its own.
                        None => match l.section_priority.get(&(*f, *s)) {
                            Some(&p) if ranked => (u64::MAX >> 40, p as u64),
                            _ => split(u64::MAX),
                        },
                    },
                    Chunk::Merged(m) => split(l.merged[*m].pieces.keys().filter_map(|k| plan.matches.get(k)).map(|m| m.order).min().unwrap_or(u64::MAX)),
                    Chunk::Bss(id) if plan.commons.contains_key(id) => split(plan.commons[id].order),
                    _ => split(chunk_cmd.get(&(os, k)).map_or(u64::MAX - 1, |&v| seq_of_cmd((v >> 32) as usize))),
                };
                (key, k, *c)
            })
            .collect();
        keyed.sort_by_key(|&(key, k, _)| (key, k));
        l.osecs[os].chunks = keyed.into_iter().map(|(_, _, c)| c).collect();
    }
}

/// `--orphan-handling=warn|error`: one message per input section no description took, as
/// lld's diagnoseOrphanHandling (`file.o:(.name) is being placed in '.name'`; synthetic
/// sections are `<internal>`, `.relro_padding` is left out as lld places it itself).
fn report_orphans(l: &Layout, orphans: &[usize]) {
    use crate::elf::config::OrphanHandling;
    let mode = l.config.orphan_handling;
    if mode == OrphanHandling::Place {
        return;
    }
    let say = |msg: String| {
        if mode == OrphanHandling::Error {
            l.config.diag.error(&msg);
        } else {
            l.config.diag.warn(&msg);
        }
    };
    // lld's order: input sections as the objects joined the link (file, then section), then
    // its own sections (`.comment` first, which it adds before the other synthetic ones).
    let rank: std::collections::HashMap<usize, usize> = l.r.load_order.iter().enumerate().map(|(k, &f)| (f, k)).collect();
    let mut inputs: Vec<((usize, usize), String)> = Vec::new();
    let mut synthetic: Vec<String> = Vec::new();
    let input_msg = |f: usize, s: u32, os: &str| {
        format!(
            "{}:({}) is being placed in '{os}'",
            l.r.files.get(f).map_or("<internal>", crate::elf::symtab::File::name),
            String::from_utf8_lossy(l.obj(f).sections[s as usize].name)
        )
    };
    for &o in orphans {
        let os = &l.osecs[o];
        for c in &os.chunks {
            match *c {
                Chunk::Input(f, s) => inputs.push(((rank.get(&f).copied().unwrap_or(usize::MAX), s as usize), input_msg(f, s, &os.name))),
                Chunk::Merged(m) => {
                    let mut keys: Vec<_> = l.merged[m].pieces.keys().copied().collect();
                    keys.sort();
                    keys.dedup();
                    for (f, s) in keys {
                        inputs.push(((rank.get(&f).copied().unwrap_or(usize::MAX), s as usize), input_msg(f, s, &os.name)));
                    }
                }
                Chunk::Synthetic(Synth::RelroPadding) => {}
                _ => {
                    let msg = format!("<internal>:({}) is being placed in '{}'", os.name, os.name);
                    if os.name == ".comment" {
                        synthetic.insert(0, msg);
                    } else {
                        synthetic.push(msg);
                    }
                }
            }
        }
    }
    inputs.sort_by_key(|(k, _)| *k);
    inputs.dedup_by(|a, b| a.1 == b.1);
    synthetic.dedup();
    for m in inputs.into_iter().map(|(_, m)| m).chain(synthetic) {
        say(m);
    }
    // The symbol and string tables are lld's synthetic sections too, and orphans.
    for name in [".symtab", ".shstrtab", ".strtab"] {
        if name == ".shstrtab" || !l.config.strip_all {
            say(format!("<internal>:({name}) is being placed in '{name}'"));
        }
    }
}

/// The sequence key of a synthetic chunk named by input command `ci`: after that command's
/// input sections.
fn seq_of_cmd(ci: usize) -> u64 {
    if ci == usize::MAX {
        return u64::MAX - 1;
    }
    ((ci as u64) << 40) | ((1u64 << 40) - 1)
}

fn orphan_pos(items: &[Item], first: usize, rank: u32, ranks: &[u32], _l: &Layout) -> usize {
    let e = items.len();
    let prox = |it: &Item| -> i64 {
        match it {
            Item::Sec { osec, has_inputs: true, .. } => proximity(rank, ranks[*osec]) as i64,
            _ => -1,
        }
    };
    if first >= e {
        return e;
    }
    // The first item with the best proximity.
    let mut best = first;
    let mut bp = prox(&items[first]);
    for (i, it) in items.iter().enumerate().take(e).skip(first) {
        let p = prox(it);
        if p > bp {
            bp = p;
            best = i;
        }
    }
    if bp < 0 {
        return e;
    }
    let mut i = best;
    while i < e {
        if let Item::Sec { osec, has_inputs: true, .. } = &items[i] {
            if proximity(rank, ranks[*osec]) as i64 != bp || rank < ranks[*osec] {
                break;
            }
        }
        i += 1;
    }
    // Back to just after the last section with inputs.
    let mut j = i;
    while j > first {
        if matches!(items[j - 1], Item::Sec { has_inputs: true, .. }) {
            break;
        }
        j -= 1;
    }
    let i = j;
    if !items[i..].iter().any(|it| matches!(it, Item::Sec { has_inputs: true, .. })) {
        return e;
    }
    let mut i = i;
    while i < e && matches!(&items[i], Item::Assign(a) if a.name != ".") {
        i += 1;
    }
    i
}

/// lld's `isDiscardable` for a description that received no input section.
fn discardable(d: &OutDesc, l: &Layout) -> bool {
    if d.name == "/DISCARD/" {
        return true;
    }
    // lld's expressionsUseSymbols: an address, AT, ALIGN or SUBALIGN naming a symbol keeps
    // the section (and is evaluated: a missing symbol is an error).
    let mut v = Vec::new();
    for e in [&d.addr, &d.lma, &d.align, &d.subalign].into_iter().flatten() {
        e.symbols(&mut v);
    }
    if !v.is_empty() {
        return false;
    }
    let used_in_expr = l.config.script.assigns().iter().any(|a| uses_section(&a.expr, &d.name));
    if used_in_expr {
        return false;
    }
    for c in &d.cmds {
        match c {
            InCmd::Assign(a) => {
                if a.name != "." && a.provide {
                    let referenced = l.r.lookup(a.name.as_bytes()).is_some_and(|id| matches!(l.r.symbols[id].def, Def::Synthetic));
                    if !referenced {
                        continue;
                    }
                }
                return false;
            }
            InCmd::Data(..) => return false,
            InCmd::Input(_) => {}
        }
    }
    true
}

fn uses_section(e: &Expr, name: &str) -> bool {
    e.any(&|x| matches!(x, Expr::Addr(n) | Expr::LoadAddr(n) if n == name))
}

/// The body of description `d` (output section `os`): its commands with the chunks each input
/// description took.
fn desc_body(l: &Layout, plan: &Plan, d: usize, os: usize) -> Vec<Body> {
    let desc = &plan.descs[d];
    let o = &l.osecs[os];
    // Which command each chunk belongs to: by its match order range.
    let cmd_of = |c: &Chunk, k: usize| -> usize {
        let order = match c {
            Chunk::Input(f, s) => plan.matches.get(&(*f, *s)).map(|m| m.order),
            Chunk::Merged(m) => l.merged[*m].pieces.keys().filter_map(|k| plan.matches.get(k)).map(|m| m.order).min(),
            Chunk::Bss(id) => plan.commons.get(id).map(|m| m.order),
            _ => None,
        };
        let _ = k;
        match order {
            Some(ord) => cmd_index_of_order(ord),
            None => match c {
                Chunk::Bss(_) => common_cmd(desc).unwrap_or(usize::MAX),
                Chunk::Synthetic(_) => synth_cmd(desc, &o.name).unwrap_or(usize::MAX),
                _ => usize::MAX,
            },
        }
    };
    let mut by_cmd: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, c) in o.chunks.iter().enumerate() {
        by_cmd.entry(cmd_of(c, k)).or_default().push(k);
    }
    let mut body = Vec::new();
    for (ci, c) in desc.cmds.iter().enumerate() {
        match c {
            InCmd::Assign(a) => body.push(Body::Assign(a.clone())),
            InCmd::Data(sz, e) => body.push(Body::Data(*sz, e.clone())),
            InCmd::Input(_) => {
                if let Some(v) = by_cmd.remove(&ci) {
                    body.push(Body::Chunks(v));
                }
            }
        }
    }
    let mut rest: Vec<usize> = by_cmd.into_values().flatten().collect();
    rest.sort();
    if !rest.is_empty() {
        body.push(Body::Chunks(rest));
    }
    body
}

fn common_cmd(d: &OutDesc) -> Option<usize> {
    d.cmds.iter().position(|c| matches!(c, InCmd::Input(id) if id.patterns.iter().any(|p| p.names.matches("COMMON"))))
}

fn synth_cmd(d: &OutDesc, name: &str) -> Option<usize> {
    d.cmds.iter().position(|c| matches!(c, InCmd::Input(id) if id.file == "*" && id.patterns.iter().any(|p| p.names.matches(name))))
}

/// The command index (within its description) of a match's sequence key.
fn cmd_index_of_order(ord: u64) -> usize {
    (ord >> 40) as usize
}

/// Runs the script: order, sizes, addresses, symbol values, program headers, file offsets.
pub fn assign_addresses(l: &mut Layout, plan: &Plan) -> Result<()> {
    let items = build_items(l, plan)?;
    // Reorder the output sections to the item order; non-alloc ones keep their place too.
    let mut order: Vec<usize> = Vec::new();
    for it in &items {
        if let Item::Sec { osec, .. } = it {
            order.push(*osec);
        }
    }
    let remap = reorder(l, &order);
    let items: Vec<Item> = items
        .into_iter()
        .map(|it| match it {
            Item::Sec { osec, desc, body, has_inputs } => Item::Sec { osec: remap[osec], desc, body, has_inputs },
            a => a,
        })
        .collect();
    crate::elf::layout::sections::sort_link_order(l);
    // Program header plan (needs only the order and flags).
    let relro_on = l.config.z_relro;
    let nphdr = super::segments::count_phdrs(l, plan, relro_on);
    let header_size = 64 + 56 * nphdr as u64;
    let mut regions = HashMap::new();
    for m in &l.config.script.memory {
        let o = eval::const_value(&m.origin).unwrap_or(0);
        let n = eval::const_value(&m.length).unwrap_or(0);
        regions.insert(m.name.clone(), (o, n));
    }
    for (a, r, _) in &l.config.script.aliases {
        if let Some(v) = regions.get(r).copied() {
            regions.insert(a.clone(), v);
        }
    }
    let mut extra = Extra::default();
    let mut syms = HashMap::new();
    // `.` starts at --image-base (else 0) with SECTIONS; with only PHDRS, after the headers at
    // the default image base, and the first section of the PT_LOAD takes a page of its own
    // (at the same offset in the page), as in lld's layout without SECTIONS.
    let only_phdrs = !l.config.script.has_sections;
    let start_dot = if only_phdrs { l.image_base + header_size } else { l.config.image_base.unwrap_or(0) };
    let load_start = if only_phdrs && l.config.script.phdrs.iter().any(|d| d.p_type == elf::PT_LOAD) {
        l.osecs.iter().position(|o| o.flags & elf::SHF_ALLOC as u64 != 0 && o.flags & elf::SHF_TLS as u64 == 0)
    } else {
        None
    };
    for pass in 0..3 {
        let mut p = Pass {
            l: &mut *l,
            plan,
            dot: start_dot,
            cur: None,
            syms: std::mem::take(&mut syms),
            header_size,
            errors: Default::default(),
            lma: extra.lma.clone(),
            regions: regions.clone(),
            region_pos: HashMap::new(),
            assert_msgs: Default::default(),
            load_start,
        };
        extra = run_pass(&mut p, &items)?;
        let errs = p.errors.take();
        let asserts = p.assert_msgs.take();
        syms = std::mem::take(&mut p.syms);
        if pass == 2 {
            if !errs.is_empty() {
                return Err(Error::many(errs));
            }
            // lld's errorOrWarn: a failed ASSERT only warns under --noinhibit-exec.
            if !asserts.is_empty() && p.l.config.noinhibit_exec {
                asserts.iter().for_each(|m| p.l.config.diag.warn(m));
            } else if !asserts.is_empty() {
                return Err(Error::many(asserts));
            }
        }
    }
    // Symbol values.
    for (name, v) in &syms {
        if name == "." {
            continue;
        }
        let Some(id) = l.r.lookup(name.as_bytes()) else { continue };
        if !matches!(l.r.symbols[id].def, Def::Synthetic) {
            continue;
        }
        let value = match v.sec {
            Some(s) => l.osecs[s].addr.wrapping_add(v.off),
            None => v.off,
        };
        let value = if v.align > 1 { align_up(value, v.align) } else { value };
        l.script_syms.insert(id, (value, v.sec));
    }
    super::segments::place_segments(l, plan, &extra, relro_on)?;
    l.script_extra = extra;
    Ok(())
}

/// Puts the output sections in `order` (sections not named drop out: emptied placeholders);
/// returns old index → new index.
fn reorder(l: &mut Layout, order: &[usize]) -> Vec<usize> {
    let mut remap = vec![usize::MAX; l.osecs.len()];
    let mut new = Vec::with_capacity(order.len());
    for (ni, &oi) in order.iter().enumerate() {
        remap[oi] = ni;
        new.push(l.osecs[oi].clone());
    }
    for v in l.synth_osec.values_mut() {
        *v = remap[*v];
    }
    l.synth_osec.retain(|_, v| *v != usize::MAX);
    for v in l.sec_osec.iter_mut() {
        for x in v.iter_mut() {
            if *x != u32::MAX {
                let n = remap[*x as usize];
                *x = if n == usize::MAX { u32::MAX } else { n as u32 };
            }
        }
    }
    l.osecs = new;
    remap
}

fn chunk_size_align(l: &Layout, c: Chunk) -> (u64, u64) {
    crate::elf::layout::sizes::chunk_size_align(l, c)
}

fn err_at(pos: &Pos, msg: &str) -> String {
    format!("{pos}: {msg}")
}

fn run_pass(p: &mut Pass, items: &[Item]) -> Result<Extra> {
    let mut extra = Extra::default();
    let mut tbss_addr: Option<u64> = None;
    let mut lma_offset: u64 = 0;
    let mut prev_region: Option<String> = None;
    for (name, (o, _)) in p.regions.clone() {
        p.region_pos.insert(name, o);
    }
    for it in items {
        match it {
            Item::Assign(a) => assign(p, a, false)?,
            Item::Sec { osec, desc, body, .. } => {
                let os = *osec;
                let d = desc.map(|d| &p.plan.descs[d]);
                let alloc = p.l.osecs[os].flags & elf::SHF_ALLOC as u64 != 0;
                let is_tbss = p.l.osecs[os].flags & elf::SHF_TLS as u64 != 0 && p.l.osecs[os].sh_type == elf::SHT_NOBITS;
                let saved = p.dot;
                let region = choose_region(p, os, d, alloc, &prev_region)?;
                let same_region = region == prev_region;
                // Sub-alignment and section alignment.
                if let Some(d) = d {
                    if let Some(e) = &d.align {
                        let v = eval_at(p, e, &d.pos)?.value(p);
                        if !v.max(1).is_power_of_two() {
                            return Err(Error::new(err_at(&d.pos, "alignment must be power of 2")));
                        }
                        p.l.osecs[os].align = p.l.osecs[os].align.max(v.max(1));
                    }
                }
                let subalign = match d.and_then(|d| d.subalign.as_ref().map(|e| (d, e))) {
                    Some((d, e)) => {
                        // lld evaluates SUBALIGN before addresses exist: `.` has no value.
                        if e.any(&|x| matches!(x, Expr::Dot | Expr::AlignDot(_))) {
                            return Err(Error::new(err_at(&d.pos, "unable to get location counter value")));
                        }
                        let v = eval_at(p, e, &d.pos)?.value(p).max(1);
                        if !v.is_power_of_two() {
                            return Err(Error::new(err_at(&d.pos, "alignment must be power of 2")));
                        }
                        Some(v)
                    }
                    None => None,
                };
                if let Some(sa) = subalign {
                    p.l.osecs[os].align = sa.max(1);
                }
                // `--section-start`/`-Ttext` win over the script's address (lld).
                let start = p.l.config.section_start.get(&p.l.osecs[os].name).copied();
                let has_addr = d.is_some_and(|d| d.addr.is_some()) || start.is_some();
                if !alloc {
                    p.dot = 0;
                } else if is_tbss {
                    match tbss_addr {
                        None => tbss_addr = Some(p.dot),
                        Some(t) => p.dot = t,
                    }
                } else {
                    if let Some(r) = &region {
                        p.dot = p.region_pos[r];
                    }
                    if let Some(e) = d.and_then(|d| d.addr.as_ref()) {
                        p.cur = None;
                        let v = eval_at(p, e, &d.map(|d| d.pos.clone()).unwrap_or_default())?.value(p);
                        p.dot = v;
                    }
                    if let Some(a) = start {
                        p.dot = a;
                    }
                }
                if p.load_start == Some(os) && !has_addr {
                    let mp = max_page(p.l.config);
                    p.dot = align_up(p.dot, mp) + p.dot % mp;
                }
                if !has_addr || !alloc {
                    p.dot = align_up(p.dot, p.l.osecs[os].align);
                } else if !p.dot.is_multiple_of(p.l.osecs[os].align.max(1)) {
                    // lld keeps an explicit address that is not aligned, with a warning.
                    let msg = format!("address (0x{:x}) of section {} is not a multiple of alignment ({})", p.dot, p.l.osecs[os].name, p.l.osecs[os].align);
                    if p.l.warned_once.lock().is_ok_and(|mut w| w.insert(msg.clone())) {
                        p.l.config.diag.warn(&msg);
                    }
                }
                p.l.osecs[os].addr = p.dot;
                p.cur = Some(os);
                // LMA.
                if let Some(e) = d.and_then(|d| d.lma.as_ref()) {
                    let v = eval_at(p, e, &d.map(|d| d.pos.clone()).unwrap_or_default())?.value(p);
                    lma_offset = v.wrapping_sub(p.dot);
                } else if let Some(r) = d.and_then(|d| d.lma_region.clone()) {
                    let r = resolve_alias(p, &r);
                    let cur = *p.region_pos.get(&r).ok_or_else(|| Error::new(format!("memory region '{r}' not declared")))?;
                    let start = align_up(cur, p.l.osecs[os].align);
                    p.region_pos.insert(r.clone(), start);
                    lma_offset = start.wrapping_sub(p.dot);
                } else if !same_region || !alloc {
                    lma_offset = 0;
                }
                prev_region = region.clone();
                if lma_offset != 0 {
                    extra.lma.insert(os, p.dot.wrapping_add(lma_offset));
                }
                let start = p.dot;
                p.l.osecs[os].size = 0;
                let nchunks = p.l.osecs[os].chunks.len();
                let mut offs = vec![0u64; nchunks];
                place_body(p, os, d, body, subalign, start, &mut offs, &mut extra)?;
                // .relro_padding ends RELRO on a common-page boundary.
                if matches!(p.l.osecs[os].chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding))) {
                    let cp = p.common_page_size();
                    let end = align_up(p.dot, cp);
                    p.l.osecs[os].size += end - p.dot;
                    p.dot = end;
                }
                p.l.osecs[os].chunk_off = offs;
                if let Some(f) = d.and_then(|d| d.fill) {
                    extra.fill.insert(os, f);
                }
                if let Some(r) = &region {
                    let (o, len) = p.regions[r];
                    let used = p.dot;
                    p.region_pos.insert(r.clone(), used);
                    if used > o + len {
                        let over = used - (o + len);
                        return Err(Error::new(format!("section '{}' will not fit in region '{}': overflowed by {} bytes", p.l.osecs[os].name, r, over)));
                    }
                }
                if let Some(r) = d.and_then(|d| d.lma_region.clone()).map(|r| resolve_alias(p, &r)).filter(|r| Some(r) != region.as_ref()) {
                    check_lma_region(p, os, &r, p.dot.wrapping_add(lma_offset))?;
                }
                if !alloc {
                    p.dot = saved;
                } else if is_tbss {
                    tbss_addr = Some(p.dot);
                    p.dot = saved;
                }
            }
        }
    }
    Ok(extra)
}

/// The memory region an output section goes to (lld's findMemoryRegion): its `>region`; with
/// MEMORY, an allocated orphan continues the previous section's region and a description
/// without `>region` takes the first region whose attributes its flags satisfy.
fn choose_region(p: &Pass, os: usize, d: Option<&OutDesc>, alloc: bool, prev_region: &Option<String>) -> Result<Option<String>> {
    let region = d.and_then(|d| d.region.clone()).map(|r| resolve_alias(p, &r));
    // lld's findMemoryRegion: with MEMORY, every allocated section has a region. An
    // orphan continues the previous section's; a description without `>region`
    // takes the first region whose attributes its flags satisfy.
    let region = match region {
        Some(r) => Some(r),
        None if !alloc || p.l.config.script.memory.is_empty() => None,
        None if d.is_none() => prev_region.clone(),
        None => {
            let fl = p.l.osecs[os].flags;
            match p.l.config.script.memory.iter().find(|m| fl & m.neg_flags == 0 && fl & m.flags != 0) {
                Some(m) => Some(m.name.clone()),
                None => return Err(Error::new(format!("no memory region specified for section '{}'", p.l.osecs[os].name))),
            }
        }
    };
    if let Some(r) = &region {
        if !p.regions.contains_key(r) {
            // lld says it without a place.
            let _ = d;
            return Err(Error::new(format!("memory region '{r}' not declared")));
        }
    }
    Ok(region)
}

/// Places the body of an output section description from `start`: assignments, data
/// commands and input sections (each at its alignment, or the description's SUBALIGN), setting
/// the section's size and each chunk's offset in `offs`.
#[allow(clippy::too_many_arguments)]
fn place_body(
    p: &mut Pass,
    os: usize,
    d: Option<&OutDesc>,
    body: &[Body],
    subalign: Option<u64>,
    start: u64,
    offs: &mut [u64],
    extra: &mut Extra,
) -> Result<()> {
    for b in body {
        match b {
            Body::Assign(a) => {
                assign(p, a, true)?;
                p.l.osecs[os].size = p.dot.wrapping_sub(start).max(p.l.osecs[os].size);
            }
            Body::Data(sz, e) => {
                let v = eval_at(p, e, &d.map(|d| d.pos.clone()).unwrap_or_default())?.value(p);
                extra.data.entry(os).or_default().push((p.dot - start, *sz, v));
                p.dot += *sz as u64;
                p.l.osecs[os].size = p.dot - start;
            }
            Body::Chunks(v) => {
                for &k in v {
                    let c = p.l.osecs[os].chunks[k];
                    let (size, mut al) = chunk_size_align(p.l, c);
                    if let Some(sa) = subalign {
                        al = sa;
                    }
                    p.l.osecs[os].align = p.l.osecs[os].align.max(al);
                    p.dot = align_up(p.dot, al);
                    offs[k] = p.dot - start;
                    if let Chunk::Input(f, s) = c {
                        if p.l.obj(f).sections[s as usize].kind != crate::elf::object::SecKind::EhFrame {
                            p.l.sec_off[f][s as usize] = p.dot - start;
                        }
                    }
                    p.dot += size;
                    p.l.osecs[os].size = p.dot - start;
                }
            }
        }
    }
    Ok(())
}

/// After a section placed with `AT> r` (a load region other than its memory region): the
/// region continues after the section's file contents, which must fit in it (lld).
fn check_lma_region(p: &mut Pass, os: usize, r: &str, end: u64) -> Result<()> {
    if p.l.osecs[os].sh_type != elf::SHT_NOBITS {
        p.region_pos.insert(r.to_string(), end);
    }
    if let Some(&(o, len)) = p.regions.get(r) {
        if end > o.wrapping_add(len) {
            let over = end - o.wrapping_add(len);
            return Err(Error::new(format!("section '{}' will not fit in region '{}': overflowed by {} bytes", p.l.osecs[os].name, r, over)));
        }
    }
    Ok(())
}

fn resolve_alias(p: &Pass, r: &str) -> String {
    for (a, t, _) in &p.l.config.script.aliases {
        if a == r {
            return t.clone();
        }
    }
    r.to_string()
}

fn eval_at(p: &Pass, e: &Expr, pos: &Pos) -> Result<Val> {
    eval::eval(e, p).map_err(|m| Error::new(err_at(pos, &m)))
}

fn assign(p: &mut Pass, a: &Assign, in_sec: bool) -> Result<()> {
    if a.name == "." {
        let v = eval_at(p, &a.expr, &a.pos)?;
        let val = v.value(p);
        if let Expr::Assert(..) = a.expr {
            return Ok(());
        }
        if in_sec && val < p.dot {
            let name = p.cur.map(|c| p.l.osecs[c].name.clone()).unwrap_or_default();
            return Err(Error::new(format!("{}: unable to move location counter (0x{:x}) backward to 0x{:x} for section '{}'", a.pos, p.dot, val, name)));
        }
        p.dot = val;
        return Ok(());
    }
    if a.provide {
        // Only when referenced and not defined elsewhere.
        let r = p.l.r;
        let Some(id) = r.lookup(a.name.as_bytes()) else { return Ok(()) };
        if !matches!(r.symbols[id].def, Def::Synthetic) {
            return Ok(());
        }
    }
    let v = eval_at(p, &a.expr, &a.pos)?;
    p.syms.insert(a.name.clone(), v);
    Ok(())
}

//! A linker script's `SECTIONS` in a `-r` link (lld's `processSectionCommands` under
//! `--relocatable`): input sections a description takes are renamed to it and merged, in the
//! description's order; `/DISCARD/` drops sections (and their SHF_LINK_ORDER dependents);
//! `ALIGN(n)` raises the output section's alignment. The described sections come first in
//! the object, in script order, and the others follow in input order, as lld appends orphans
//! when it does not sort (`-r`). Nothing gets an address, so `. =` and section addresses have
//! no effect, as in lld's output.
//!
//! Why it exists: `ld -r -T script` is how kernel modules and prelinked objects are built;
//! dtld refused any description but `/DISCARD/` rather than ignoring the script. Data commands
//! (`BYTE` .. `QUAD`) with constant values are written where they stand among the inputs (a
//! description with only data makes an `A` section, as lld's); what dtld still cannot apply
//! (assignments inside a description, data naming symbols) stays an error.

use std::collections::HashMap;

use object::elf;
use object::read::elf::SectionHeader as _;

use super::model::{empty_osec, DataCmd, OutSec};
use crate::elf::config::Config;
use crate::elf::script::ast::{InCmd, SecCmd};
use crate::elf::symtab::{FileId, Resolved};
use crate::elf::types::LE;
use crate::error::{Error, Result};

/// Where the script puts the inputs it takes.
#[derive(Default)]
pub(super) struct ScriptMap {
    /// (file, section) → (description index, its name, order inside the description).
    pub rename: HashMap<(FileId, u32), (u32, &'static [u8], u64)>,
    /// Output section name → the alignment its description's `ALIGN` asks for.
    pub align: HashMap<&'static [u8], u64>,
    /// The descriptions with data commands: (description index, its name, the commands).
    pub data: Vec<(u32, &'static [u8], Vec<DataCmd>)>,
}

/// Applies `config`'s script to the objects: marks the discarded sections in `dropped` and
/// returns the renaming (empty without SECTIONS).
pub(super) fn apply(config: &Config, r: &Resolved, objs: &[FileId], dropped: &mut [Vec<bool>]) -> Result<ScriptMap> {
    let mut map = ScriptMap::default();
    if !config.script.has_sections {
        return Ok(map);
    }
    let mut live: crate::elf::gc::Live = vec![Vec::new(); r.files.len()];
    for (f, o) in r.objects_in_load_order() {
        live[f] = vec![false; o.sections.len()];
    }
    for &f in objs {
        live[f] = dropped[f].iter().map(|&d| !d).collect();
    }
    let plan = crate::elf::script::place::plan(config, r, &live);
    for &(f, i) in &plan.discard {
        if let Some(d) = dropped.get_mut(f).and_then(|d| d.get_mut(i as usize)) {
            *d = true;
        }
    }
    let mut errors = Vec::new();
    let mut names: Vec<&'static [u8]> = Vec::new();
    for c in &config.script.cmds {
        let SecCmd::Out(d) = c else { continue };
        if d.name == "/DISCARD/" {
            names.push(b"/DISCARD/");
            continue;
        }
        // Few and small: the names live as long as the link's other names.
        let name: &'static [u8] = crate::util::keep::slice(d.name.clone().into_bytes());
        let mut data = Vec::new();
        for (ci, ic) in d.cmds.iter().enumerate() {
            match ic {
                InCmd::Input(_) => {}
                InCmd::Assign(_) => {
                    errors.push(format!("{}: -r with symbol assignments inside an output section description is not supported by dtld: {}", d.pos, d.name))
                }
                // The key sorts before the inputs of later commands (`place::plan`'s order).
                InCmd::Data(size, e) => match crate::elf::script::eval::const_value(e) {
                    Some(value) => data.push(DataCmd { key: (ci as u64) << 40, size: *size, value }),
                    None => errors.push(format!("{}: -r with a data command naming a symbol is not supported by dtld: {}", d.pos, d.name)),
                },
            }
        }
        if !data.is_empty() {
            map.data.push((names.len() as u32, name, data));
        }
        names.push(name);
        if let Some(e) = &d.align {
            match crate::elf::script::eval::const_value(e) {
                Some(a) if a.is_power_of_two() => {
                    let v = map.align.entry(name).or_insert(1);
                    *v = (*v).max(a);
                }
                _ => errors.push(format!("{}: -r with a non-constant ALIGN is not supported by dtld: {}", d.pos, d.name)),
            }
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    for (&(f, i), m) in &plan.matches {
        if let Some(&name) = names.get(m.desc) {
            map.rename.insert((f, i), (m.desc as u32, name, m.order));
        }
    }
    Ok(map)
}

/// The output section of description `desc` (named `name`) that has data commands but no
/// inputs: allocated, bytes of its own (lld's flags for it).
pub(super) fn data_osec(name: &'static [u8], desc: u32) -> OutSec {
    empty_osec(name, elf::SHT_PROGBITS, elf::SHF_ALLOC as u64, 1, (0, desc, 0))
}

/// Sets `rela_first` of the script's descriptions that have relocations: the input order key
/// of their inputs' first relocation section.
pub(super) fn described_rela_places(r: &Resolved, objs: &[FileId], osecs: &mut [OutSec], members_of: &[Vec<(FileId, u32)>]) {
    let pos_of: HashMap<FileId, usize> = objs.iter().enumerate().map(|(p, &f)| (f, p)).collect();
    let mut rela_of: HashMap<FileId, HashMap<u32, u32>> = HashMap::new();
    for (id, os) in osecs.iter_mut().enumerate() {
        if os.first.0 != 0 || os.group.is_some() {
            continue;
        }
        os.rela_first = members_of[id]
            .iter()
            .filter(|&&(f, i)| !r.obj(f).sections[i as usize].relocs.is_empty())
            .filter_map(|&(f, i)| {
                let relas = rela_of.entry(f).or_insert_with(|| {
                    let o = r.obj(f);
                    let is_rel = |t: u32| matches!(t, elf::SHT_RELA | elf::SHT_REL | crate::elf::object::SHT_CREL);
                    o.sections.iter().enumerate().filter(|(_, s)| is_rel(s.sh_type)).map(|(k, s)| (s.hdr.sh_info(LE), k as u32)).collect()
                });
                Some((pos_of.get(&f)? + 1, *relas.get(&i)?, 0))
            })
            .min();
    }
}

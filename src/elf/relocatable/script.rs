//! A linker script's `SECTIONS` in a `-r` link (lld's `processSectionCommands` under
//! `--relocatable`): input sections a description takes are renamed to it and merged, in the
//! description's order; `/DISCARD/` drops sections (and their SHF_LINK_ORDER dependents);
//! `ALIGN(n)` raises the output section's alignment. The described sections come first in
//! the object, in script order, and the others follow in input order, as lld appends orphans
//! when it does not sort (`-r`). Nothing gets an address, so `. =` and section addresses have
//! no effect, as in lld's output.
//!
//! Why it exists: `ld -r -T script` is how kernel modules and prelinked objects are built;
//! dtld refused any description but `/DISCARD/` rather than ignoring the script. What it still
//! cannot apply (data commands, assignments inside a description) stays an error.

use std::collections::HashMap;

use crate::elf::config::Config;
use crate::elf::resolve::{FileId, Resolved};
use crate::elf::script::ast::{InCmd, SecCmd};
use crate::error::{Error, Result};

/// Where the script puts the inputs it takes.
#[derive(Default)]
pub(super) struct ScriptMap {
    /// (file, section) → (description index, its name, order inside the description).
    pub rename: HashMap<(FileId, u32), (u32, &'static [u8], u64)>,
    /// Output section name → the alignment its description's `ALIGN` asks for.
    pub align: HashMap<&'static [u8], u64>,
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
        if d.cmds.iter().any(|ic| !matches!(ic, InCmd::Input(_))) {
            errors.push(format!("{}: -r with data or symbol assignments inside an output section description is not supported by dtld: {}", d.pos, d.name));
        }
        // Few and small: the names live as long as the link's other names.
        let name: &'static [u8] = Box::leak(d.name.clone().into_bytes().into_boxed_slice());
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

//! `SECTIONS { ... } INSERT AFTER|BEFORE name` in a link without a SECTIONS command. lld then
//! keeps its default layout (`hasSectionsCommand` stays false): the blocks' output section
//! descriptions take the input sections their patterns match (orphans of the same name join
//! them), every output section is sorted by lld's default rules, and then
//! `processInsertCommands` moves each block's descriptions just after (or before) the output
//! section named `name`. This module is that: the matching (`plan`, reusing the script
//! stage's matcher), the order of the inputs inside the descriptions (`order_chunks`) and the
//! move after the default sort (`apply_moves`). A SECTIONS command with INSERT blocks is the
//! script stage's business instead (`LayoutScript::splice_inserts`).
//!
//! Only descriptions that list input sections are taken; addresses, regions, data commands,
//! assignments and `/DISCARD/` in such blocks are refused as not supported.

use super::ast::{InCmd, OutDesc, SecCmd};
use super::plan::InsertPlan;
use crate::elf::config::Config;
use crate::elf::layout::model::{Chunk, Layout};
use crate::elf::symtab::Resolved;
use crate::error::{Error, Result};

/// Why dtld cannot lay out description `d` of an INSERT block, if it cannot.
fn unsupported(d: &OutDesc) -> Option<&'static str> {
    if d.name == "/DISCARD/" {
        return Some("/DISCARD/");
    }
    if d.addr.is_some() || d.lma.is_some() || d.align.is_some() || d.subalign.is_some() || d.region.is_some() || d.lma_region.is_some() {
        return Some("an address, alignment or memory region");
    }
    if !d.phdrs.is_empty() || d.fill.is_some() || d.noload || d.nonalloc {
        return Some("program headers, a fill or a section type");
    }
    if d.cmds.iter().any(|c| !matches!(c, InCmd::Input(_))) {
        return Some("assignments or data");
    }
    None
}

/// Matches the live input sections against the INSERT blocks' descriptions (None without
/// INSERT blocks).
pub fn plan(config: &Config, r: &Resolved, live: &crate::elf::gc::Live) -> Result<Option<InsertPlan>> {
    let script = &config.script;
    if script.inserts.is_empty() {
        return Ok(None);
    }
    let mut descs = Vec::new();
    let mut moves = Vec::new();
    for i in &script.inserts {
        let head = format!("INSERT {} {}", i.word().to_uppercase(), i.anchor);
        if config.relocatable {
            return Err(Error::new(format!("{head} with -r is not supported by dtld")));
        }
        for c in &i.cmds {
            match c {
                SecCmd::Assign(_) => return Err(Error::new(format!("{head}: assignments in an INSERT block are not supported by dtld"))),
                SecCmd::Out(o) => {
                    if let Some(what) = unsupported(o) {
                        return Err(Error::new(format!("{head}: {}: {what} in an INSERT block is not supported by dtld", o.name)));
                    }
                    descs.push(o.clone());
                }
            }
        }
        let names: Vec<String> = i.names().into_iter().map(str::to_string).collect();
        if !names.is_empty() {
            moves.push((names, i.after, i.anchor.clone()));
        }
    }
    let plan = super::place::plan_descs(config, r, live, descs);
    if let Some(d) = plan.commons.values().next() {
        return Err(Error::new(format!("{}: common symbols in an INSERT block are not supported by dtld", plan.descs[d.desc].name)));
    }
    Ok(Some(InsertPlan { plan, moves }))
}

/// Puts the input sections of each INSERT description in the order its patterns matched
/// them; orphans that joined it by name follow, in input order (lld's `recordSection`).
pub fn order_chunks(l: &mut Layout) {
    let Some(ip) = &l.insert_plan else { return };
    let order = |k: &(crate::elf::symtab::FileId, u32)| ip.plan.matches.get(k).map(|m| m.order);
    for os in l.osecs.iter_mut().filter(|o| o.script_desc.is_some()) {
        // A merged section goes where its first matched input would (lld's merge synthetic
        // section takes the place of the first input it absorbs).
        os.chunks.sort_by_key(|c| match c {
            Chunk::Input(f, s) => order(&(*f, *s)).unwrap_or(u64::MAX),
            Chunk::Merged(m) => l.merged[*m].pieces.keys().filter_map(order).min().unwrap_or(u64::MAX),
            _ => u64::MAX,
        });
    }
}

/// Moves the INSERT descriptions' output sections in `order` (indices into `l.osecs`, sorted
/// by lld's default rules) next to their anchors, block by block, as lld's
/// `processInsertCommands`. An anchor that no output section has is lld's error, unless it
/// names an INSERT description that received nothing (lld still has it then, and drops it
/// later; dtld leaves the block where the default sort put it).
pub fn apply_moves(l: &Layout, order: &mut Vec<usize>) -> Result<()> {
    let Some(ip) = &l.insert_plan else { return Ok(()) };
    let mut errors = Vec::new();
    let pos = |order: &[usize], name: &str| order.iter().position(|&i| l.osecs[i].name == name);
    for (names, after, anchor) in &ip.moves {
        let before = order.clone();
        let mut moved = Vec::new();
        for name in names {
            if let Some(k) = pos(order, name) {
                moved.push(order.remove(k));
            }
        }
        match pos(order, anchor) {
            Some(k) => {
                let k = if *after { k + 1 } else { k };
                order.splice(k..k, moved);
            }
            None if ip.plan.descs.iter().any(|d| d.name == *anchor) => *order = before,
            None => errors.push(format!("unable to insert {} {} {anchor}", names[0], if *after { "after" } else { "before" })),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::many(errors))
    }
}

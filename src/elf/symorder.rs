//! `--symbol-ordering-file`: input sections placed in the order of the symbols a file lists
//! (lld's `getSymbolOrderingFile` and `buildSectionOrder`).
//!
//! Why it exists: builds that order hot functions or data by hand (or from a profile turned
//! into a symbol list, as Chromium and Android do) pass a file with one symbol per line. The
//! linker gives each listed symbol's input section the priority of the symbol's first line, and
//! those sections go first in their output sections, in that order (`layout::order_sections`,
//! shared with the call-graph ordering of `cgsort.rs`, which this option replaces as in lld).
//! Nothing else changes: the program is the same, only where its sections are.
//!
//! The warnings are lld's, and `--no-warn-symbol-ordering` silences them: a name listed twice,
//! a name no input has, and a symbol that cannot be ordered (shared, absolute, discarded; lld
//! also names undefined ones, which dtld does not yet).

use std::collections::HashMap;

use crate::elf::cgsort::{section_of, unorderable, Sec};
use crate::elf::layout::model::Layout;
use crate::elf::symtab::Def;
use crate::error::{Error, Result};

/// The names of ordering file `file` (its text) in order, each once: lines are trimmed, empty
/// lines and lines starting with `#` are skipped (lld's `args::getLines`); repeats warn.
pub fn read_names<'t>(file: &str, text: &'t str, mut warn: impl FnMut(String)) -> Vec<&'t str> {
    let mut seen = std::collections::HashSet::new();
    let mut names = Vec::new();
    for line in text.split('\n').map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !seen.insert(line) {
            warn(format!("{file}: duplicate ordered symbol: {line}"));
            continue;
        }
        names.push(line);
    }
    names
}

/// The priority (lower first, from 1) of every input section a listed symbol is defined in.
pub fn section_order(l: &Layout, path: &std::path::Path) -> Result<HashMap<Sec, u32>> {
    let warn = l.config.warn_symbol_ordering;
    let text = std::fs::read_to_string(path).map_err(|e| Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e))))?;
    let names = read_names(&path.display().to_string(), &text, |m| {
        if warn {
            l.config.diag.warn(&m)
        }
    });
    // name -> (priority, seen in an input)
    let mut prio: HashMap<&[u8], (u32, bool)> = names.iter().enumerate().map(|(i, n)| (n.as_bytes(), (i as u32 + 1, false))).collect();
    let mut order: HashMap<Sec, u32> = HashMap::new();
    let r = l.r;
    let place = |order: &mut HashMap<Sec, u32>, sec: Option<Sec>, p: u32| {
        if let Some(s) = sec {
            let e = order.entry(s).or_insert(p);
            *e = (*e).min(p);
        }
    };
    // Globals from the symbol table, then every object's locals, as lld.
    for s in &r.symbols {
        let Some(e) = prio.get_mut(s.name) else { continue };
        e.1 = true;
        let p = e.0;
        match s.def {
            Def::Defined(f, i) => {
                if warn {
                    if let Some(m) = unorderable(l, f, i) {
                        l.config.diag.warn(&m);
                    }
                }
                place(&mut order, section_of(l, f, i), p);
            }
            Def::Shared(f, _) if warn => {
                l.config.diag.warn(&format!("{}: unable to order shared symbol: {}", r.inputs[f].name, String::from_utf8_lossy(s.name)))
            }
            // lld names the file that referred to it first (none when unresolved symbols are
            // ignored, as it then reports no undefined symbol either).
            Def::Undefined if warn && !l.config.unresolved_ignored() => {
                let first = r
                    .objects_in_load_order()
                    .find(|(g, o)| (o.first_global..o.symbols.len()).any(|k| r.global_of(*g, k).is_some_and(|id| std::ptr::eq(&r.symbols[id], s))));
                if let Some((g, _)) = first {
                    l.config.diag.warn(&format!("{}: unable to order undefined symbol: {}", r.inputs[g].name, String::from_utf8_lossy(s.name)));
                }
            }
            _ => {}
        }
    }
    for (f, o) in r.objects_in_load_order() {
        for k in 1..o.first_global.min(o.symbols.len()) {
            let Some(e) = prio.get_mut(o.sym_name(k)) else { continue };
            e.1 = true;
            let p = e.0;
            if warn {
                if let Some(m) = unorderable(l, f, k) {
                    l.config.diag.warn(&m);
                }
            }
            place(&mut order, section_of(l, f, k), p);
        }
    }
    if warn {
        for n in &names {
            if !prio[n.as_bytes()].1 {
                l.config.diag.warn(&format!("symbol ordering file: no such symbol: {n}"));
            }
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::read_names;

    #[test]
    fn names_trimmed_once_each() {
        let mut w = Vec::new();
        let n = read_names("o.txt", "_foo4  \n  _foo3\n\n # c\n_foo4\n_bar\n", |m| w.push(m));
        assert_eq!(n, ["_foo4", "_foo3", "_bar"]);
        assert_eq!(w, ["o.txt: duplicate ordered symbol: _foo4"]);
    }
}

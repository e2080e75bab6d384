//! Linker-script assignments in a link without `SECTIONS`: lld evaluates a script's top-level
//! `sym = expr;`, `PROVIDE(...)`, `HIDDEN(...)` and `ASSERT(...)` after its default layout has
//! given every output section its address. Plain `sym = number` / `sym = other+N` assignments
//! are handled as `--defsym`s (in command-line order, `input::load_logged`); this stage
//! evaluates the rest with the script expression evaluator, once the addresses are final.

use std::cell::RefCell;
use std::collections::HashMap;

use object::elf;
use object::read::elf::Sym as _;

use super::ast::SecCmd;
use super::eval::{self, Env, SecInfo, Val};
use crate::elf::layout::model::Layout;
use crate::elf::symtab::Def;
use crate::error::{Error, Result};

/// Whether a top-level assignment's expression is one `--defsym` handles: a number, or a
/// symbol name with an optional `+N` / `-N`.
pub fn is_simple_defsym(text: &str) -> bool {
    if crate::elf::config::defsym_offset(text).is_none() {
        return false;
    }
    crate::elf::config::defsym_target(text).is_none_or(|t| t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')))
}

/// A canonical IFUNC's IPLT entry at `v`, relative to `.iplt` (lld evaluates script
/// expressions after redirecting the symbol there).
pub(crate) fn iplt_val(l: &Layout, v: u64) -> Val {
    match l.synth_osec.get(&crate::elf::layout::model::Synth::Iplt) {
        Some(&os) => Val { off: v.wrapping_sub(l.osecs[os].addr), sec: Some(os), align: 1 },
        None => Val::abs(v),
    }
}

/// A library's symbol the executable defines itself, as lld's scan replaces it by a Defined
/// before scripts are evaluated: at its canonical PLT entry (relative to `.plt`) or at its
/// copy (relative to the copy's output section). `None` for any other symbol.
pub(crate) fn shared_defined_val(l: &Layout, id: crate::elf::symtab::SymbolId) -> Option<Val> {
    use crate::elf::layout::model::{Chunk, Synth, Target};
    if !matches!(l.r.symbols[id].def, Def::Shared(..)) {
        return None;
    }
    let fl = l.sym_flags.get(&Target::Global(id))?;
    if fl.canonical {
        let v = l.plt_entry_addr(*l.plt_index.get(&id)?);
        return Some(match l.synth_osec.get(&Synth::Plt) {
            Some(&os) => Val { off: v.wrapping_sub(l.osecs[os].addr), sec: Some(os), align: 1 },
            None => Val::abs(v),
        });
    }
    if fl.copy {
        let primary = l.copy_alias.get(&id).copied().unwrap_or(id);
        return l.osecs.iter().enumerate().find_map(|(oi, o)| {
            let k = o.chunks.iter().position(|c| *c == Chunk::Bss(primary))?;
            Some(Val { off: o.chunk_off.get(k).copied().unwrap_or(0), sec: Some(oi), align: 1 })
        });
    }
    None
}

struct TopEnv<'a, 'r> {
    l: &'a Layout<'r>,
    /// Values assigned so far by this stage.
    syms: &'a HashMap<String, Val>,
    asserts: RefCell<Vec<String>>,
}

impl Env for TopEnv<'_, '_> {
    fn sec_addr(&self, sec: usize) -> u64 {
        self.l.osecs.get(sec).map_or(0, |o| o.addr)
    }
    /// Outside SECTIONS `.` is 0 (lld's "aether" section at address 0).
    fn dot(&self) -> std::result::Result<Val, String> {
        Ok(Val::abs(0))
    }
    fn symbol(&self, name: &str) -> std::result::Result<Val, String> {
        if let Some(v) = self.syms.get(name) {
            return Ok(*v);
        }
        let l = self.l;
        let Some(id) = l.r.lookup_expr(name.as_bytes()) else { return Err(format!("symbol not found: {name}")) };
        if let Some(&v) = l.synthetic_syms.get(&id) {
            return Ok(Val::abs(v));
        }
        if let Some(v) = l.canonical_ifunc_addr(id) {
            return Ok(iplt_val(l, v));
        }
        match l.r.symbols[id].def {
            Def::Defined(f, i) => {
                let s = l.sym(f, i);
                let sh = l.obj(f).shndx(i);
                let v = l.sym_value[id];
                let os = l.sec_osec.get(f).and_then(|v| v.get(sh as usize)).copied().unwrap_or(u32::MAX);
                if s.st_shndx(crate::elf::types::LE) == elf::SHN_ABS || os == u32::MAX {
                    return Ok(Val::abs(v));
                }
                Ok(Val { off: v.wrapping_sub(l.osecs[os as usize].addr), sec: Some(os as usize), align: 1 })
            }
            Def::Common(..) => Ok(Val::abs(l.sym_value[id])),
            Def::Shared(..) => shared_defined_val(l, id).ok_or_else(|| format!("symbol not found: {name}")),
            _ => Err(format!("symbol not found: {name}")),
        }
    }
    fn defined(&self, name: &str) -> bool {
        self.symbol(name).is_ok()
    }
    fn section(&self, name: &str) -> std::result::Result<SecInfo, String> {
        match self.l.osecs.iter().position(|o| o.name == name) {
            Some(i) => {
                let o = &self.l.osecs[i];
                Ok(SecInfo { index: Some(i), addr: o.addr, lma: o.addr, size: o.size, align: o.align })
            }
            None => Err(format!("undefined section {name}")),
        }
    }
    fn header_size(&self) -> u64 {
        64 + 56 * self.l.phdrs.len() as u64
    }
    fn max_page_size(&self) -> u64 {
        self.l.config.max_page_size.unwrap_or(crate::elf::layout::model::PAGE)
    }
    fn common_page_size(&self) -> u64 {
        self.l.config.common_page_size.unwrap_or(crate::elf::layout::model::PAGE).min(self.max_page_size())
    }
    fn region(&self, name: &str) -> std::result::Result<(u64, u64), String> {
        Err(format!("memory region '{name}' not declared"))
    }
    fn assert_failed(&self, msg: &str) {
        self.asserts.borrow_mut().push(msg.to_string());
    }
}

/// Evaluates the top-level assignments of a script without `SECTIONS` (in order, each seeing
/// the ones before it) into `l.script_syms`; `ASSERT`s that fail are errors (warnings under
/// `--noinhibit-exec`).
pub fn assign_symbols(l: &mut Layout) -> Result<()> {
    if l.config.script.has_sections {
        return Ok(());
    }
    let mut syms: HashMap<String, Val> = HashMap::new();
    let mut errors = Vec::new();
    let mut asserts = Vec::new();
    for c in &l.config.script.cmds {
        let SecCmd::Assign(a) = c else { continue };
        let id = l.r.lookup(a.name.as_bytes());
        // A PROVIDE nothing needed (resolve left it alone) defines nothing.
        if a.name != "." && !id.is_some_and(|id| matches!(l.r.symbols[id].def, Def::Synthetic)) {
            continue;
        }
        let env = TopEnv { l, syms: &syms, asserts: RefCell::new(Vec::new()) };
        let v = eval::eval(&a.expr, &env);
        asserts.extend(env.asserts.into_inner().into_iter().map(|m| format!("{}: {m}", a.pos)));
        let v = match v {
            Ok(v) => v,
            Err(m) => {
                errors.push(format!("{}: {m}", a.pos));
                continue;
            }
        };
        if a.name != "." {
            syms.insert(a.name.clone(), v);
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    if l.config.noinhibit_exec {
        asserts.iter().for_each(|m| l.config.diag.warn(m));
    } else if !asserts.is_empty() {
        return Err(Error::many(asserts));
    }
    for (name, v) in syms {
        let Some(id) = l.r.lookup(name.as_bytes()) else { continue };
        let value = match v.sec {
            Some(s) => l.osecs[s].addr.wrapping_add(v.off),
            None => v.off,
        };
        let value = eval::align_to(value, v.align);
        l.script_syms.insert(id, (value, v.sec));
        l.synthetic_syms.insert(id, value);
        l.sym_value[id] = value;
    }
    Ok(())
}

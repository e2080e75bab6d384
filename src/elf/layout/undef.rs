//! The `undefined symbol` diagnostic as lld writes it: up to three references with their source
//! lines, and for the first two symbols lld's spell corrector (`>>> did you mean: abcde`),
//! which tries every name one edit away, a different case, and a missing `extern "C"`.

use std::collections::HashMap;

use object::elf;
use object::read::elf::Sym as _;

use super::model::Layout;
use crate::elf::diag;
use crate::elf::symtab::{Def, FileId, SymbolId};
use crate::elf::types::LE;

/// The message for undefined symbol `id` referenced at `refs` (file, section, offset);
/// `spell`: look for a near name that is defined.
pub(super) fn message(l: &Layout, id: SymbolId, refs: &[(FileId, u32, u64)], spell: bool) -> String {
    let r = l.r;
    let sym = &r.symbols[id];
    let vis = match sym.visibility {
        elf::STV_HIDDEN => "hidden ",
        elf::STV_PROTECTED => "protected ",
        elf::STV_INTERNAL => "internal ",
        _ => "",
    };
    let discarded = super::reloc_check::in_excluded_section(l, id);
    let mut msg = match sym.def {
        Def::Defined(g, _) if discarded => {
            format!("relocation refers to a symbol in a discarded section: {}\n>>> defined in {}", diag::demangle(sym.name), r.inputs[g].name)
        }
        // lld prints the version suffix a `foo@@VER` definition gave the name (`scan.rs`).
        _ => format!("undefined {vis}symbol: {}", sym.shown_name()),
    };
    for &(f, s, off) in refs.iter().take(3) {
        let o = r.obj(f);
        // Without a line for the place, the variable that holds the reference may have one.
        let name = match diag::enclosing_symbol(o, s as usize, off, false, false) {
            Some(i) => o.sym_name(i),
            None => sym.name,
        };
        msg.push_str(&diag::referenced_by(o, s as usize, off, name));
    }
    if refs.len() > 3 {
        msg.push_str(&format!("\n>>> referenced {} more times", refs.len() - 3));
    }
    if spell && !discarded {
        if let Some((pre, name, post, file)) = refs.first().and_then(|&(f, ..)| suggest(l, f, sym.name)) {
            msg.push_str(&format!("\n>>> did you mean{pre}{}{post}\n>>> defined in: {file}", diag::demangle(name)));
        }
    }
    msg
}

/// A defined symbol whose name is close to `name`, looked up among the local symbols of the
/// referencing object `f` and in the symbol table: (text before, its name, text after, the file
/// that defines it).
fn suggest(l: &Layout, f: FileId, name: &[u8]) -> Option<(&'static str, &'static [u8], &'static str, String)> {
    let r = l.r;
    let o = r.obj(f);
    let mut locals: HashMap<&[u8], ()> = HashMap::new();
    for (i, s) in o.symbols.iter().enumerate().take(o.first_global).skip(1) {
        if s.st_shndx(LE) != elf::SHN_UNDEF && !matches!(s.st_type(), elf::STT_SECTION | elf::STT_FILE) && !o.sym_name(i).is_empty() {
            locals.insert(o.sym_name(i), ());
        }
    }
    let file_of = |id: SymbolId| -> String {
        match r.symbols[id].def {
            Def::Defined(g, _) | Def::Common(g, _) | Def::Shared(g, _) | Def::Lazy(g) | Def::Bitcode(g, _) => r.inputs[g].name.clone(),
            _ => "<internal>".to_string(),
        }
    };
    let find = |cand: &[u8]| -> Option<(&'static [u8], String)> {
        if let Some((k, _)) = locals.get_key_value(cand) {
            let (i, _) = o.symbols.iter().enumerate().take(o.first_global).find(|&(i, _)| o.sym_name(i) == *k)?;
            return Some((o.sym_name(i), o.input.name.clone()));
        }
        let id = r.lookup(cand)?;
        if matches!(r.symbols[id].def, Def::Undefined) {
            return None;
        }
        Some((r.symbols[id].name, file_of(id)))
    };
    let n = name.len();
    let mut cand = Vec::with_capacity(n + 1);
    for i in 0..=n {
        // Insert a character before name[i].
        for c in b'0'..=b'z' {
            cand.clear();
            cand.extend_from_slice(&name[..i]);
            cand.push(c);
            cand.extend_from_slice(&name[i..]);
            if let Some((s, file)) = find(&cand) {
                return Some((": ", s, "", file));
            }
        }
        if i == n {
            break;
        }
        // Substitute name[i].
        cand.clear();
        cand.extend_from_slice(name);
        for c in b'0'..=b'z' {
            cand[i] = c;
            if let Some((s, file)) = find(&cand) {
                return Some((": ", s, "", file));
            }
        }
        // Transpose name[i] and name[i + 1].
        if i + 1 < n {
            cand[i] = name[i + 1];
            cand[i + 1] = name[i];
            if let Some((s, file)) = find(&cand) {
                return Some((": ", s, "", file));
            }
        }
        // Delete name[i].
        cand.clear();
        cand.extend_from_slice(&name[..i]);
        cand.extend_from_slice(&name[i + 1..]);
        if let Some((s, file)) = find(&cand) {
            return Some((": ", s, "", file));
        }
    }
    // A different case.
    let lower = name.to_ascii_lowercase();
    for (i, _) in o.symbols.iter().enumerate().take(o.first_global).skip(1) {
        if locals.contains_key(o.sym_name(i)) && o.sym_name(i).to_ascii_lowercase() == lower {
            return Some((": ", o.sym_name(i), "", o.input.name.clone()));
        }
    }
    for (id, s) in r.symbols.iter().enumerate() {
        if !matches!(s.def, Def::Undefined) && s.name.len() == n && s.name.to_ascii_lowercase() == lower {
            return Some((": ", s.name, "", file_of(id)));
        }
    }
    extern_c_hint(l, &find, name)
}

/// A mangled reference to a C function (`extern "C"` missing at the declaration), or a plain
/// reference to a C++ function (`extern "C"` missing at the definition).
fn extern_c_hint(
    l: &Layout,
    find: &dyn Fn(&[u8]) -> Option<(&'static [u8], String)>,
    name: &[u8],
) -> Option<(&'static str, &'static [u8], &'static str, String)> {
    if name.starts_with(b"_Z") {
        let base = function_name(name)?;
        let (s, file) = find(base.as_bytes())?;
        return Some((": extern \"C\" ", s, "", file));
    }
    let r = l.r;
    for s in r.symbols.iter() {
        if matches!(s.def, Def::Undefined) || !s.name.starts_with(b"_Z") {
            continue;
        }
        if function_name(s.name).is_some_and(|b| b.as_bytes() == name) {
            let file = match s.def {
                Def::Defined(g, _) | Def::Common(g, _) | Def::Shared(g, _) | Def::Lazy(g) | Def::Bitcode(g, _) => r.inputs[g].name.clone(),
                _ => "<internal>".to_string(),
            };
            return Some((" to declare ", s.name, " as extern \"C\"?", file));
        }
    }
    None
}

/// The qualified function name of a mangled C++ function (`ns::foo` of `_ZN2ns3fooEi`).
fn function_name(mangled: &[u8]) -> Option<String> {
    let d = diag::demangled(mangled);
    if d.as_bytes() == mangled {
        return None;
    }
    let mut depth = 0i32;
    for (k, c) in d.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => return Some(d[..k].to_string()),
            _ => {}
        }
    }
    None
}

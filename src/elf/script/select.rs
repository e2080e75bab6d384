//! Which input sections a linker script's input section descriptions take: file and section
//! name patterns, `KEEP`, and the `/DISCARD/` check on `.shstrtab`.
//!
//! Why it is a module of its own: liveness (`elf::gc`, whose roots include `KEEP`), the script
//! layout stage (`place.rs`) and `INSERT` (`insert.rs`) ask the same questions of the script's
//! AST and the resolved files; kept here, below all of them, liveness does not import the
//! layout stage.

use super::ast::{glob_match, InCmd, InputDesc, SecCmd};
use crate::elf::config::Config;
use crate::elf::symtab::{FileId, Resolved};

/// The name a file pattern matches: the path as given, `archive:member` for archive members.
pub(crate) fn name_for_script(r: &Resolved, f: FileId) -> String {
    match &r.inputs[f].archive {
        Some((a, m)) => format!("{a}:{m}"),
        None => r.inputs[f].name.clone(),
    }
}

pub(crate) fn file_matches(pat: &str, name: &str) -> bool {
    pat == "*" || glob_match(pat, name)
}

/// Whether input section (f, s) is named by a `KEEP` pattern (a `--gc-sections` root).
pub fn is_kept(config: &Config, r: &Resolved, f: FileId, s: usize) -> bool {
    if !config.script.has_sections && config.script.inserts.is_empty() {
        return false;
    }
    let sec = &r.obj(f).sections[s];
    let name = String::from_utf8_lossy(sec.name);
    let fname = name_for_script(r, f);
    for c in config.script.cmds.iter().chain(config.script.inserts.iter().flat_map(|i| i.cmds.iter())) {
        let SecCmd::Out(o) = c else { continue };
        for ic in &o.cmds {
            let InCmd::Input(d) = ic else { continue };
            if d.keep && d.flags_match(sec.flags) && input_matches(d, &fname, &name).is_some() {
                return true;
            }
        }
    }
    false
}

/// Whether a `/DISCARD/` pattern takes the section header string table, which lld's
/// `LinkerScript::discard` refuses (`.shstrtab` is a section of the linker's own file).
pub fn discards_shstrtab(config: &Config) -> bool {
    config.script.cmds.iter().any(|c| {
        let SecCmd::Out(o) = c else { return false };
        o.name == "/DISCARD/"
            && o.cmds.iter().any(|ic| matches!(ic, InCmd::Input(d) if d.flags_match(0) && input_matches(d, "<internal>", ".shstrtab").is_some()))
    })
}

/// The index of the first pattern of `d` that takes a section `name` of file `fname`.
pub(crate) fn input_matches(d: &InputDesc, fname: &str, name: &str) -> Option<usize> {
    if !file_matches(&d.file, fname) || d.exclude_files.matches(fname) {
        return None;
    }
    d.patterns.iter().position(|p| p.names.matches(name) && !p.exclude_files.matches(fname))
}

//! What LTO is told about every bitcode symbol: lld's `SymbolResolution` rules.
//!
//! dtld binds bitcode symbols in its own resolver (`resolve.rs`); this module turns those
//! bindings into the four bits `llvm-lto2 run -r=<file>,<symbol>,<flags>` takes, following
//! `lld/ELF/LTO.cpp` (`BitcodeCompiler::add`):
//!
//! * `p` Prevailing: this file's definition is the one the link chose;
//! * `x` VisibleToRegularObj: native code, the command line (`-u`, the entry point — `_start` by
//!   default —, `-init`/`-fini`, `--wrap`, `--defsym`) or the dynamic symbol table can see the
//!   symbol (a shared library's reference counts only through it: a hidden definition a library
//!   references is internalized, as lld does), or it lives in a section named like a C
//!   identifier whose `__start_`/`__stop_` symbols are referenced;
//! * `l` FinalDefinitionInLinkageUnit: (executable output or non-default visibility) and
//!   defined in this link (not by a shared library, not absolute, not common) when the file
//!   is added: a bitcode definition counts only for its own file and those added before it;
//! * `r` LinkerRedefined: `--defsym` (a script) defines it.

use std::collections::HashSet;

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::config::Config;
use crate::elf::symtab::{Def, FileId, Resolved, Symbol};
use crate::elf::version_script::{VersionAssign, VersionScript};
use crate::lto::bitcode::SymRes;

fn is_c_identifier(s: &[u8]) -> bool {
    !s.is_empty() && !s[0].is_ascii_digit() && s.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Whether the output can export `sym` dynamically (lld's `isExported` for a definition; a
/// version script's `local:` hides it, as lld applies version scripts before LTO).
fn exported(config: &Config, script: Option<&VersionScript>, sym: &Symbol) -> bool {
    if !matches!(sym.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED) {
        return false;
    }
    if !sym.name.contains(&b'@') && sym.default_version.is_none() && script.is_some_and(|s| s.assign(sym.name) == Some(VersionAssign::Local)) {
        return false;
    }
    if config.shared {
        return true;
    }
    // A static, non-PIE executable has no dynamic symbol table to export anything to.
    if config.is_static && !config.pie {
        return false;
    }
    if config.export_dynamic {
        return true;
    }
    // A shared library references it, or defines it too (the executable's copy must be
    // exported so that it preempts the library's).
    sym.dso_ref || sym.in_dso || sym.dynamic_listed
}

/// lld gives a definition LLVM says can be omitted from the symbol table (`linkonce_odr`
/// with `unnamed_addr`) no dynamic export of its own (`lto/unnamed-addr-comdat.ll`): only a
/// shared library's reference or definition, or `--dynamic-list`, exports it then.
fn dynamic_anyway(sym: &Symbol) -> bool {
    sym.dso_ref || sym.in_dso || sym.dynamic_listed
}

/// Resolutions for every LTO symbol of every loaded bitcode file, in LTO's order.
pub fn compute(config: &Config, script: Option<&VersionScript>, r: &Resolved, files: &[FileId]) -> Vec<Vec<SymRes>> {
    // `__start_X` / `__stop_X` referenced anywhere keep bitcode symbols in section X visible.
    let start_stop: HashSet<&[u8]> =
        r.symbols.iter().filter(|s| s.obj_ref).filter_map(|s| s.name.strip_prefix(b"__start_").or_else(|| s.name.strip_prefix(b"__stop_"))).collect();
    let executable = !config.shared && !config.relocatable;
    // Symbols the linker itself refers to: the entry point (`_start` unless `-e` says otherwise,
    // even in a shared library, as lld's `handleUndefined(entry)`), `-init` and `-fini`.
    let mut linker_refs: Vec<String> = Vec::new();
    if !config.relocatable {
        linker_refs.push(config.entry.clone().unwrap_or_else(|| "_start".to_string()));
    }
    linker_refs.push(config.init.clone().unwrap_or_else(|| "_init".to_string()));
    linker_refs.push(config.fini.clone().unwrap_or_else(|| "_fini".to_string()));
    let linker_refs: HashSet<&[u8]> = linker_refs.iter().map(|n| n.as_bytes()).collect();
    let linker_refs = &linker_refs;
    // `--defsym` and a script's (non-PROVIDE) assignments replace a bitcode definition before
    // LTO, as lld declares them: the bitcode copy does not prevail and LTO drops it
    // (`lto/linker-script-symbols-assign.ll`: lld's `-r` flags are `xr`).
    let assigned: Vec<String> = config
        .defsym
        .iter()
        .map(|(n, _)| n.clone())
        .chain(config.script.assigns().into_iter().filter(|a| a.name != "." && !a.provide).map(|a| a.name.clone()))
        .collect();
    let assigned: HashSet<&[u8]> = assigned.iter().map(|n| n.as_bytes()).collect();
    let assigned = &assigned;
    // lld hands the files to LTO in this order and turns each prevailing bitcode definition
    // into an undefined symbol once its file is added, so a later file's reference to it is
    // not a final definition (`dyn_cast<Defined>(sym)` fails): `u3.o,t0,` after `main.o,t0,pl`.
    let mut position = vec![usize::MAX; r.sym_ids.len()];
    for (k, &f) in files.iter().enumerate() {
        position[f] = k;
    }
    let position = &position;
    // Per file independently (1,141 files and ~100,000 symbols for OpenSSL's thin link).
    use rayon::prelude::*;
    files
        .par_iter()
        .map(|&f| {
            let b = r.bitcode(f).expect("a bitcode file");
            (0..b.syms.len())
                .map(|k| {
                    let ir = b.sym(k);
                    let id = r.sym_ids[f][k];
                    let sym = &r.symbols[id];
                    let replaced = assigned.contains(sym.name);
                    // By file, as lld (`sym->file == &f`): `foo` and `foo@@V` of one file are one symbol.
                    let prevailing = !ir.undefined() && matches!(sym.def, Def::Bitcode(df, _) if df == f) && !replaced;
                    let defined_here = match sym.def {
                        Def::Bitcode(df, _) => position[f] <= position[df],
                        // A common symbol is not `Defined` in lld.
                        Def::Common(..) => false,
                        Def::Defined(df, di) => {
                            let s = &r.obj(df).symbols[di];
                            s.st_shndx(crate::elf::types::LE) != elf::SHN_ABS
                        }
                        _ => false,
                    };
                    let visible = config.relocatable
                        || sym.used_in_regular
                        || (!ir.undefined() && linker_refs.contains(sym.name))
                        || (prevailing && exported(config, script, sym) && (!ir.may_omit() || dynamic_anyway(sym)))
                        || {
                            let section = b.ir.uncommon(ir).section_name;
                            !section.is_empty() && is_c_identifier(section) && start_stop.contains(section)
                        };
                    SymRes {
                        prevailing,
                        visible_to_regular: visible,
                        final_in_unit: (executable || sym.visibility != elf::STV_DEFAULT) && defined_here && !replaced,
                        linker_redefined: sym.script_defined,
                    }
                })
                .collect()
        })
        .collect()
}

/// Runs LTO for the bitcode files pass 1 of the ELF link loaded.
pub fn run(
    config: &Config,
    r: &Resolved,
    preload: Option<&crate::lto::goldhost::Preload>,
    trace: &mut crate::trace::Trace,
) -> crate::error::Result<crate::lto::request::LtoOutput> {
    let opts = &config.lto;
    let files: Vec<usize> = r.load_order.iter().copied().filter(|&f| r.bitcode(f).is_some()).collect();
    let script = crate::elf::version_input::version_script(config)?;
    let res = compute(config, script.as_ref(), r, &files);
    let modules = files
        .iter()
        .zip(res)
        .map(|(&f, res)| crate::lto::bitcode::LtoModule { bitcode: r.bitcode(f).expect("bitcode"), flags: res.iter().map(|s| s.flags()).collect() })
        .collect();
    let lazy = (0..r.files.len()).filter(|&f| r.bitcode(f).is_some() && !r.loaded[f]).map(|f| r.inputs[f]).collect();
    let req = crate::lto::request::LtoRequest {
        output: &config.output,
        format: crate::lto::irsymtab::ObjectFormat::Elf,
        pic: config.pie || config.shared,
        relocatable: config.relocatable,
        verbose: config.verbose,
        opts,
        modules,
        lazy,
        preload,
        diag: &config.diag,
    };
    crate::lto::run_request(&req, trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_letters() {
        let r = SymRes { prevailing: true, visible_to_regular: true, final_in_unit: true, linker_redefined: false };
        assert_eq!(r.flags().as_str(), "plx");
        assert_eq!(SymRes::default().flags().as_str(), "");
        assert!(is_c_identifier(b"my_sec"));
        assert!(!is_c_identifier(b".text.x"));
        assert!(!is_c_identifier(b"1abc"));
    }
}

#[cfg(test)]
mod option_tests {
    use crate::error::Result;
    use crate::lto::options::LtoOptions;

    fn opts(args: &[&str]) -> Result<LtoOptions> {
        let mut argv = vec!["dtld".to_string()];
        argv.extend(args.iter().map(|s| s.to_string()));
        match crate::driver::gnu::parse(&argv)? {
            crate::driver::Action::Link(c) => Ok(c.lto),
            _ => panic!("not a link"),
        }
    }

    #[test]
    fn clang_plugin_options() {
        let o = opts(&[
            "-plugin",
            "/usr/lib/llvm-22/bin/../lib/LLVMgold.so",
            "-plugin-opt=mcpu=x86-64",
            "-plugin-opt=O3",
            "-plugin-opt=thinlto",
            "-plugin-opt=jobs=3",
            "x.o",
        ])
        .unwrap();
        assert_eq!(o.opt_level, 3);
        assert_eq!(o.mcpu.as_deref(), Some("x86-64"));
        assert_eq!(o.jobs, Some(3));
        assert_eq!(o.plugin.as_deref(), Some(std::path::Path::new("/usr/lib/llvm-22/bin/../lib/LLVMgold.so")));
    }

    #[test]
    fn gcc_plugin_options_are_ignored() {
        let o = opts(&[
            "-plugin",
            "/usr/lib/gcc/x86_64-linux-gnu/12/liblto_plugin.so",
            "-plugin-opt=/usr/lib/gcc/x86_64-linux-gnu/12/lto-wrapper",
            "-plugin-opt=-fresolution=/tmp/x.res",
            "x.o",
        ])
        .unwrap();
        assert!(o.plugin.is_none());
        assert!(o.mllvm.is_empty());
    }

    #[test]
    fn lld_options() {
        let o = opts(&[
            "--lto-O0",
            "--thinlto-jobs=all",
            "--thinlto-cache-dir=/tmp/c",
            "--thinlto-index-only=l.txt",
            "--thinlto-emit-imports-files",
            "--thinlto-prefix-replace=a/;b/",
            "x.o",
        ])
        .unwrap();
        assert_eq!(o.opt_level, 0);
        assert_eq!(o.jobs, None);
        assert!(o.index_only);
        assert_eq!(o.index_only_file.as_deref(), Some(std::path::Path::new("l.txt")));
        assert_eq!(o.prefix_replace, Some(("a/".into(), "b/".into(), String::new())));
        let e = opts(&["--thinlto-prefix-replace=a:b", "x.o"]).unwrap_err();
        assert!(e.messages[0].contains("expects 'old;new' format"), "{:?}", e.messages);
        let e = opts(&["-plugin", "/x/LLVMgold.so", "-plugin-opt=bogus", "x.o"]).unwrap_err();
        assert_eq!(e.messages[0], "-plugin-opt=: unknown plugin option 'bogus'");
        let e = opts(&["--lto-O7", "x.o"]).unwrap_err();
        assert!(e.messages[0].contains("invalid optimization level"), "{:?}", e.messages);
    }
}

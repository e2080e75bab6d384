//! The symbol table of a bitcode file that carries no usable irsymtab, from the user's LLVM.
//!
//! dtld reads bitcode symbols itself (`irsymtab.rs`), but not every bitcode file has a table:
//! `llvm-as` writes none for a module with module-level asm (it has no asm parser registered to
//! read the asm's symbols), and older or foreign producers may write a table this reader does
//! not accept. LLVM (and so lld) rebuilds the table from the IR in those cases. dtld cannot do
//! that without LLVM, so it asks the same LLVM installation that runs its thin link:
//! `llvm-lto2 dump-symtab FILE` prints exactly `lto::InputFile::symbols()` (the list LTO wants
//! resolutions for, module-asm symbols included, with their flags, common sizes, comdats and
//! sections), and LLVM's own error for IR it cannot take (`input module has no datalayout`).
//!
//! The printed table is parsed back into an `IrFile`; the module facts (ThinLTO or not, byte
//! ranges) still come from the file (`irsymtab::modules_only`). The text is cached per content
//! digest and tool identity in the ThinLTO cache directory when there is one.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use sha1::{Digest, Sha1};

use super::irsymtab::{flags, IrComdat, IrFile, IrSymbol, IrUncommon, IRSYMTAB_VERSION, NO_IRSYMTAB, NO_UNCOMMON};
use super::options::LtoOptions;
use crate::input::InputFile;

/// The table of `input` as the user's LLVM builds it. `why` is the reader's complaint.
pub fn rebuild(input: &InputFile, opts: &LtoOptions, why: &str) -> Result<IrFile<'static>, String> {
    let (mut modules, ident) = super::irsymtab::modules_only(input.data)?;
    let producer = ident.as_deref().and_then(|p| p.strip_prefix("LLVM")).unwrap_or("").to_string();
    let llvm = super::llvm::discover(opts, &[(input.name.clone(), producer)])
        .map_err(|e| format!("{why}; reading its symbols needs llvm-lto2 from the LLVM that produced it: {}", e.messages.join("; ")))?;
    if !llvm.lto2.is_file() {
        return Err(format!("{why}; reading its symbols needs {}, which is missing (on Debian it is in the llvm-NN package)", llvm.lto2.display()));
    }
    let mut h = Sha1::new();
    h.update(input.data);
    h.update(llvm.identity.as_bytes());
    let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let cached = opts.cache_dir.as_ref().map(|d| super::backend::own_dir(d).join(format!("symtab-{key}")));
    let text = match cached.as_ref().and_then(|p| std::fs::read(p).ok()) {
        Some(t) => t,
        None => {
            let t = dump_symtab(&llvm.lto2, input.data)?;
            if let Some(p) = &cached {
                // Best effort: a cache that cannot be written only costs the next link a run.
                let tmp = p.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, &t).is_ok() && std::fs::rename(&tmp, p).is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
            }
            t
        }
    };
    let text: &'static [u8] = crate::util::keep::slice(text);
    let mut file = parse_dump(text)?;
    file.ident_producer = ident;
    // The dump does not say which module a symbol belongs to: the first module gets them all
    // (their order, the one LTO wants, is kept; nothing else reads module ranges).
    let n = file.symbols.len() as u32;
    if let Some(m) = modules.first_mut() {
        m.end = n;
    }
    file.modules = modules;
    Ok(file)
}

/// Runs `llvm-lto2 dump-symtab` on `data`, handed over as an anonymous memory file (an archive
/// member has no path of its own, and nothing is left behind on disk).
fn dump_symtab(lto2: &std::path::Path, data: &[u8]) -> Result<Vec<u8>, String> {
    // SAFETY: memfd_create with a constant, NUL-terminated name; the result is checked.
    let fd = unsafe { libc::memfd_create(c"dtld-bitcode".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("cannot create a memory file: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a fresh descriptor this function owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(owned);
    f.write_all(data).map_err(|e| format!("cannot write a memory file: {e}"))?;
    let raw = f.as_raw_fd();
    let mut cmd = Command::new(lto2);
    cmd.arg("dump-symtab").arg(format!("/proc/self/fd/{raw}"));
    // SAFETY: fcntl is async-signal-safe; it only clears close-on-exec on the descriptor the
    // child is to read, in the child.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(raw, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", lto2.display()))?;
    drop(f);
    if out.status.success() {
        return Ok(out.stdout);
    }
    // "llvm-lto2: /proc/self/fd/N: input module has no datalayout" → LLVM's message alone.
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let msg = first.strip_prefix("llvm-lto2: ").unwrap_or(first);
    let msg = msg.strip_prefix(&format!("/proc/self/fd/{raw}: ")).unwrap_or(msg);
    Err(if msg.is_empty() { format!("{} dump-symtab failed ({})", lto2.display(), out.status) } else { msg.to_string() })
}

/// Parses what `llvm-lto2 dump-symtab` prints for one file (`IrFile::dump_bytes` writes the
/// same text): header lines, then one line per LTO symbol (visibility letter, seven flag
/// letters, a space, the name) followed by its indented details.
pub fn parse_dump(text: &'static [u8]) -> Result<IrFile<'static>, String> {
    let mut f = IrFile {
        version: IRSYMTAB_VERSION,
        producer: b"",
        ident_producer: None,
        target_triple: b"",
        source_filename: b"",
        coff_linker_opts: b"",
        dependent_libraries: Vec::new(),
        modules: Vec::new(),
        comdats: Vec::new(),
        symbols: Vec::new(),
        uncommons: Vec::new(),
    };
    let bad = |l: &[u8]| format!("{NO_IRSYMTAB}, and llvm-lto2 dump-symtab printed an unexpected line: {}", String::from_utf8_lossy(l));
    for l in text.split(|&c| c == b'\n') {
        if l.is_empty() || l.starts_with(b"version: ") {
            continue;
        }
        if let Some(detail) = l.strip_prefix(b"         ") {
            let s = f.symbols.last_mut().ok_or_else(|| bad(l))?;
            symbol_detail(s, detail, &mut f.comdats, &mut f.uncommons).ok_or_else(|| bad(l))?;
        } else if let Some(v) = l.strip_prefix(b"producer: ") {
            f.producer = v;
        } else if let Some(v) = l.strip_prefix(b"target triple: ") {
            f.target_triple = v;
        } else if let Some(v) = l.strip_prefix(b"source filename: ") {
            f.source_filename = v;
        } else if let Some(v) = l.strip_prefix(b"linker opts: ") {
            f.coff_linker_opts = v;
        } else if let Some(v) = l.strip_prefix(b"dependent libraries:") {
            f.dependent_libraries = quoted_list(v).ok_or_else(|| bad(l))?;
        } else {
            f.symbols.push(symbol_line(l).ok_or_else(|| bad(l))?);
        }
    }
    Ok(f)
}

/// ` "a" "b c"` → [`a`, `b c`] (dump-symtab does not escape quotes; neither does a specifier).
fn quoted_list(v: &'static [u8]) -> Option<Vec<&'static [u8]>> {
    let mut out = Vec::new();
    let mut rest = v;
    while !rest.is_empty() {
        rest = rest.strip_prefix(b" \"")?;
        let end = rest.windows(2).position(|w| w == b"\" ").unwrap_or(rest.len().checked_sub(1)?);
        if rest.get(end) != Some(&b'"') {
            return None;
        }
        out.push(&rest[..end]);
        rest = &rest[end + 1..];
    }
    Some(out)
}

/// `DU-----X name` → a global symbol with those flags.
fn symbol_line(l: &'static [u8]) -> Option<IrSymbol<'static>> {
    if l.len() < 9 || l[8] != b' ' {
        return None;
    }
    let mut fl = flags::GLOBAL
        | match l[0] {
            b'D' => 0,
            b'H' => 1,
            b'P' => 2,
            _ => return None,
        };
    let letters = [
        (b'U', flags::UNDEFINED),
        (b'C', flags::COMMON),
        (b'W', flags::WEAK),
        (b'I', flags::INDIRECT),
        (b'O', flags::MAY_OMIT),
        (b'T', flags::TLS),
        (b'X', flags::EXECUTABLE),
    ];
    for (&c, (letter, bit)) in l[1..8].iter().zip(letters) {
        match c {
            _ if c == letter => fl |= bit,
            b'-' => {}
            _ => return None,
        }
    }
    Some(IrSymbol { name: &l[9..], comdat: None, flags: fl, uncommon: NO_UNCOMMON })
}

/// One indented line after a symbol: `size N align M`, `comdat KIND NAME`, `fallback NAME`
/// or `section NAME`.
fn symbol_detail(s: &mut IrSymbol<'static>, d: &'static [u8], comdats: &mut Vec<IrComdat<'static>>, uncommons: &mut Vec<IrUncommon<'static>>) -> Option<()> {
    fn uncommon<'u>(s: &mut IrSymbol<'static>, uncommons: &'u mut Vec<IrUncommon<'static>>) -> &'u mut IrUncommon<'static> {
        if s.uncommon == NO_UNCOMMON {
            s.uncommon = uncommons.len() as u32;
            uncommons.push(IrUncommon::default());
        }
        &mut uncommons[s.uncommon as usize]
    }
    if let Some(v) = d.strip_prefix(b"size ") {
        let v = std::str::from_utf8(v).ok()?;
        let (size, align) = v.split_once(" align ")?;
        let u = uncommon(s, uncommons);
        u.common_size = size.parse().ok()?;
        u.common_align = align.parse().ok()?;
    } else if let Some(v) = d.strip_prefix(b"comdat ") {
        let sp = v.iter().position(|&c| c == b' ')?;
        let kind = ["any", "exactmatch", "largest", "nodeduplicate", "samesize"].iter().position(|k| k.as_bytes() == &v[..sp]).unwrap_or(5) as u32;
        let name = &v[sp + 1..];
        let i = match comdats.iter().position(|c| c.name == name && c.selection_kind == kind) {
            Some(i) => i,
            None => {
                comdats.push(IrComdat { name, selection_kind: kind });
                comdats.len() - 1
            }
        };
        s.comdat = Some(i as u32);
        return Some(());
    } else if let Some(v) = d.strip_prefix(b"fallback ") {
        uncommon(s, uncommons).coff_weak_fallback = v;
    } else if let Some(v) = d.strip_prefix(b"section ") {
        uncommon(s, uncommons).section_name = v;
    } else {
        return None;
    }
    s.flags |= flags::HAS_UNCOMMON;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The printed form of every table the reader can read parses back to the same symbols.
    #[test]
    fn dump_round_trips() {
        let text: &'static [u8] = b"version: 3\nproducer: 22.1.8\ntarget triple: x86_64-unknown-linux-gnu\n\
source filename: a.c\ndependent libraries: \"m\" \"a b\"\nDU-----X patatino\nH-C----- buf\n         size 40 align 16\n\
D-----T- tv\nP--W---X f\n         comdat any f\n         section .text.hot\n\n";
        let f = parse_dump(text).unwrap();
        assert_eq!(f.dependent_libraries, vec![&b"m"[..], b"a b"]);
        assert_eq!(f.symbols.len(), 4);
        assert!(f.symbols[0].undefined() && f.symbols[0].executable());
        assert_eq!((f.symbols[1].visibility(), f.uncommon(&f.symbols[1]).common_size, f.uncommon(&f.symbols[1]).common_align), (1, 40, 16));
        assert!(f.symbols[2].tls());
        assert_eq!(f.comdats, vec![IrComdat { name: b"f", selection_kind: 0 }]);
        assert_eq!(f.uncommon(&f.symbols[3]).section_name, b".text.hot");
        let mut f = f;
        f.modules = vec![super::super::irsymtab::IrModule {
            begin: 0,
            end: 4,
            unc_begin: 0,
            thin: false,
            has_summary: false,
            split_lto_unit: false,
            unified_lto: false,
            bitcode: 0..0,
        }];
        assert_eq!(f.dump_bytes(), text);
    }

    /// A module with module-level asm, written by `llvm-as` (no table): the table LLVM gives is
    /// the one `opt` writes into the same module, read by dtld's own reader.
    #[test]
    fn module_asm_matches_llvm_written_table() {
        let dir = std::path::PathBuf::from("/usr/lib/llvm-22");
        if !dir.join("bin/llvm-as").is_file() || !dir.join("bin/opt").is_file() || !dir.join("bin/llvm-lto2").is_file() {
            return;
        }
        let tmp = std::env::temp_dir().join(format!("dtld-llvm-symtab-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let ll = tmp.join("a.ll");
        std::fs::write(
            &ll,
            "target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128\"\n\
target triple = \"x86_64-unknown-linux-gnu\"\n\
module asm \".weak patatino\"\nmodule asm \".equ patatino, foo\"\nmodule asm \".comm cbuf,24,8\"\n\
$c = comdat any\n@g = global i32 1, comdat($c), section \"mysec\"\n@t = thread_local global i32 0\n\
@k = common global [4 x i64] zeroinitializer, align 32\n\
declare void @patatino()\ndefine hidden void @foo() { ret void }\n\
define void @_start() { call void @patatino() ret void }\n",
        )
        .unwrap();
        let bc = tmp.join("a.bc");
        let opt_bc = tmp.join("a.opt.bc");
        assert!(Command::new(dir.join("bin/llvm-as")).arg(&ll).arg("-o").arg(&bc).status().unwrap().success());
        assert!(Command::new(dir.join("bin/opt")).arg(&bc).arg("-o").arg(&opt_bc).status().unwrap().success());
        let data: &'static [u8] = crate::util::keep::slice(std::fs::read(&bc).unwrap());
        let written: &'static [u8] = crate::util::keep::slice(std::fs::read(&opt_bc).unwrap());
        let _ = std::fs::remove_dir_all(&tmp);
        assert!(super::super::irsymtab::parse(data).unwrap_err().starts_with(NO_IRSYMTAB));
        let input = InputFile {
            name: "a.bc".into(),
            path: bc.clone(),
            data,
            kind: crate::input::FileKind::Bitcode,
            lazy: false,
            archive: None,
            as_needed: false,
            needed_name: String::new(),
            archive_offset: 0,
            thin_member: false,
            fat_lto: false,
            group: 0,
        };
        let opts = LtoOptions { llvm_dir: Some(dir), ..Default::default() };
        let rebuilt = rebuild(&input, &opts, NO_IRSYMTAB).unwrap();
        let exact = super::super::irsymtab::parse(written).unwrap();
        let strip = |f: &IrFile| {
            f.lto_symbols()
                .map(|s| {
                    let u = f.uncommon(s);
                    (s.name.to_vec(), s.flags & !flags::USED, u.common_size, u.common_align, u.section_name.to_vec(), s.comdat)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&rebuilt), strip(&exact));
        assert!(rebuilt.lto_symbols().any(|s| s.name == b"patatino" && s.weak()));
        assert!(rebuilt.lto_symbols().any(|s| s.name == b"k" && s.common() && rebuilt.uncommon(s).common_align == 32));
    }

    #[test]
    fn unexpected_lines_are_errors() {
        assert!(parse_dump(b"Q------- x\n").is_err());
        assert!(parse_dump(b"         size 1 align 1\n").is_err());
        assert!(parse_dump(b"dependent libraries: \"x\n").is_err());
    }
}

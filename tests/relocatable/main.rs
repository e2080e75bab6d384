//! Why this exists: `-r` output is an object file, which the differential harness (it
//! fingerprints executables) cannot judge. This target checks dtld's `-r` against
//! `ld.lld-22 -r` on the same inputs, in two ways:
//!
//! * behaviour: each combined object is linked with the same `main` object into a program by
//!   `clang -fuse-ld=lld` (so only the `-r` output differs), and once more with dtld as the final
//!   linker (dtld must consume its own `-r` output); the programs must print the same and exit
//!   the same way;
//! * structure (read with goblin, and `llvm-readelf-22 -a` must read dtld's output without a
//!   warning): the multiset of sections (name, type, flags), of COMDAT/other groups (signature,
//!   member names), of global symbols (name, binding, type, visibility, and where: UND, COM,
//!   ABS or the section name), of non-section locals (name, type, where), the sequence of
//!   locals (section symbols by their section's name: a group's sh_info and relocations name
//!   symbols by index), the number of relocations per (relocated section, type), and the
//!   multiset of pieces (strings or fixed-size entries) of the SHF_MERGE sections without
//!   relocations (deduplicated by both) must be equal; with `-g`, `llvm-dwarfdump-22
//!   --debug-info --debug-line` (which applies the relocations) must print the same. Intentional differences, removed
//!   before comparing: lld's unused NOBITS `COMMON` section (dtld keeps commons as SHN_COMMON
//!   without allocating a section); offsets, sizes and symbol values are not compared (merged
//!   strings are laid out in another order).
//!
//! Input sets: C with functions, data, static locals and strings; C++ with inline functions,
//! templates and a vtable in COMDAT groups plus exceptions (`.eh_frame`, `.gcc_except_table`,
//! discarded duplicate groups); TLS; `-fcommon` commons; weak definitions and references;
//! `-ffunction-sections -fdata-sections`; `-g`; float constants and wide strings (`.rodata.cst*`,
//! `.rodata.str4.4`) equal across objects; an archive member pulled in by `-r`; an object
//! of 200,000 sections (extended section numbering: SHN_XINDEX symbols, `.symtab_shndx`). Error
//! trials: corrupt objects (truncated, garbage after the ELF magic, section table out of bounds)
//! (and a symbol claiming an extended section index without the table: ld.lld-22's message)
//! must fail with exit 1, a `dtld: error:` line, no output and no temporary file; a shared
//! library must be refused with lld's message. Bitcode inputs (ThinLTO and full LTO) go
//! through LTO first and are compared like the others.
//!
//! Every trial works in `<target>/relocatable-tests/<trial>/`, recreated for each run and
//! deleted when the trial passes (kept on failure, or always with `DTLD_HARNESS_KEEP=1`).
//! Environment: `DTLD` (linker under test, default `<target>/release/dtld`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{find_dtld, target_dir, CLANG, CLANGXX, GCC, GXX, LLD, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

const READELF: &str = "llvm-readelf-22";
const DWARFDUMP: &str = "llvm-dwarfdump-22";

struct Context {
    dtld: PathBuf,
    root: PathBuf,
    keep: bool,
}

/// One combined-object trial: sources, how to compile them, what `-r` combines.
struct Case {
    name: &'static str,
    /// (file name, contents).
    sources: &'static [(&'static str, &'static str)],
    /// Compiler flags for every source.
    flags: &'static [&'static str],
    /// Objects (or archives) given to `-r`, in order.
    combine: &'static [&'static str],
    /// Archives to build first: (archive, members).
    archives: &'static [(&'static str, &'static [&'static str])],
    /// The object linked with the combined one.
    main: &'static str,
    cxx: bool,
    /// Compile with gcc/g++ instead of clang (the programs are still linked by clang).
    gnu: bool,
    /// Extra flags of the program links.
    link_flags: &'static [&'static str],
    /// Extra flags of both `-r` links.
    r_flags: &'static [&'static str],
    /// `-r` links run first, whose outputs both sides then combine: (linker, output, inputs),
    /// the linker being "dtld" or "lld" (nested `-r`: each linker reading the other's output).
    pre: &'static [(&'static str, &'static str, &'static [&'static str])],
}

const BASE: Case = Case {
    name: "",
    sources: &[("a.c", C_A), ("b.c", C_B), ("main.c", C_MAIN)],
    flags: &["-O1"],
    combine: &["a.o", "b.o"],
    archives: &[],
    main: "main.o",
    cxx: false,
    gnu: false,
    link_flags: &[],
    r_flags: &[],
    pre: &[],
};

const CXX_SOURCES: &[(&str, &str)] = &[("i.h", CXX_H), ("c1.cc", CXX_1), ("c2.cc", CXX_2), ("main.cc", CXX_MAIN)];

fn main() {
    let args = Arguments::from_args();
    let ctx = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    for case in CASES {
        let ctx = ctx.clone();
        trials.push(Trial::test(format!("combine/{}", case.name), move || {
            let ctx = ctx.map_err(Failed::from)?;
            run_trial(&ctx, &format!("combine-{}", case.name), |w| combine(w, case)).map_err(Failed::from)
        }));
    }
    let errs: [(&str, fn(&Work) -> Result<(), String>); 3] =
        [("errors/corrupt-objects", corrupt_objects), ("errors/shared-library", shared_library), ("errors/script-output-sections", script_output_sections)];
    for (name, f) in errs {
        let ctx = ctx.clone();
        let dir = name.replace('/', "-");
        trials.push(Trial::test(name, move || {
            let ctx = ctx.map_err(Failed::from)?;
            run_trial(&ctx, &dir, f).map_err(Failed::from)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

impl Context {
    fn new() -> Result<Context, String> {
        dtld_tests::check_tools(&[CLANG, CLANGXX, GCC, GXX, LLD, LLVM_AR, READELF, DWARFDUMP])?;
        Ok(Context { dtld: find_dtld()?, root: target_dir().join("relocatable-tests"), keep: keep_requested() })
    }
}

struct Work<'a> {
    ctx: &'a Context,
    t: &'a TrialDir,
}

impl std::ops::Deref for Work<'_> {
    type Target = TrialDir;
    fn deref(&self) -> &TrialDir {
        self.t
    }
}

fn run_trial(ctx: &Context, name: &str, f: impl FnOnce(&Work) -> Result<(), String>) -> Result<(), String> {
    let context = [format!("linker under test: {}", ctx.dtld.display())];
    run_in(&ctx.root.join(name), ctx.keep, &context, |t| f(&Work { ctx, t }))
}

impl Work<'_> {}

fn combine(w: &Work, case: &Case) -> Result<(), String> {
    let compiler = if case.cxx { CLANGXX } else { CLANG };
    for (name, text) in case.sources {
        w.write(name, text)?;
        if name.ends_with(".h") {
            continue;
        }
        let stem = name.rsplit_once('.').map_or(*name, |(s, _)| s);
        let cc = match (name.ends_with(".cc"), case.gnu) {
            (true, false) => CLANGXX,
            (false, false) => CLANG,
            (true, true) => GXX,
            (false, true) => GCC,
        };
        w.ok(w.cmd(cc).arg("-c").args(case.flags).arg(name).arg("-o").arg(format!("{stem}.o")))?;
    }
    for (archive, members) in case.archives {
        w.ok(w.cmd(LLVM_AR).arg("rcs").arg(archive).args(*members))?;
    }
    for (linker, out, inputs) in case.pre {
        let program = if *linker == "lld" { PathBuf::from(LLD) } else { w.ctx.dtld.clone() };
        w.ok(w.cmd(program).arg("-r").args(*inputs).arg("-o").arg(out))?;
    }
    w.ok(w.cmd(&w.ctx.dtld).arg("-r").args(case.r_flags).args(case.combine).arg("-o").arg("ab.o"))?;
    w.ok(w.cmd(LLD).arg("-r").args(case.r_flags).args(case.combine).arg("-o").arg("ab.lld.o"))?;
    // llvm-readelf must read the whole file with no more complaint than about lld's (GCC's
    // `-g3` macro sections already draw some from the inputs).
    let ours = w.ok(w.cmd(READELF).args(["-a", "--wide", "ab.o"]))?.stderr_text().replace("ab.o", "FILE");
    let theirs = w.ok(w.cmd(READELF).args(["-a", "--wide", "ab.lld.o"]))?.stderr_text().replace("ab.lld.o", "FILE");
    let (mut a, mut b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    a.sort_unstable();
    b.sort_unstable();
    if a != b {
        return Err(format!("{READELF} -a warns about ab.o:\n{ours}\nbut about ab.lld.o:\n{theirs}"));
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(w.path("ab.o")).map_err(|e| e.to_string())?.permissions().mode() & 0o777;
    if mode & 0o111 != 0 {
        return Err(format!("ab.o has mode {mode:o}: a relocatable output must not be executable"));
    }
    // Debug information, read through the relocations (llvm-dwarfdump applies them in objects):
    // the same DIEs and line tables, whatever the string layout.
    if case.flags.iter().any(|f| f.starts_with("-g")) {
        let dump = |file: &str| -> Result<String, String> {
            // Not `ok`: GCC's `-g3` inputs already draw errors (the same for both outputs).
            let out = w.run(w.cmd(DWARFDUMP).args(["--debug-info", "--debug-line", file]))?;
            let text = format!("{}\n{}{}", out.status_text(), String::from_utf8_lossy(&out.stdout), out.stderr_text());
            Ok(text.replace(file, "FILE"))
        };
        let (ours, theirs) = (dump("ab.o")?, dump("ab.lld.o")?);
        if ours != theirs {
            let first = ours.lines().zip(theirs.lines()).position(|(a, b)| a != b).unwrap_or(0);
            let ctx = |t: &str| t.lines().skip(first.saturating_sub(3)).take(8).collect::<Vec<_>>().join("\n");
            return Err(format!(
                "{DWARFDUMP} --debug-info --debug-line differs from line {}:\n--- ab.o\n{}\n--- ab.lld.o\n{}",
                first + 1,
                ctx(&ours),
                ctx(&theirs)
            ));
        }
    }
    // Behaviour: the same main with each combined object.
    let mut outputs = Vec::new();
    for (prog, obj, linker) in [("prog.lld", "ab.lld.o", None), ("prog.dtld", "ab.o", None), ("prog.dtld2", "ab.o", Some(&w.ctx.dtld))] {
        let mut c = w.cmd(compiler);
        match linker {
            None => c.arg("-fuse-ld=lld"),
            Some(d) => {
                let mut a = OsString::from("-fuse-ld=");
                a.push(d);
                c.arg(a)
            }
        };
        w.ok(c.args(case.link_flags).arg(case.main).arg(obj).arg("-o").arg(prog))?;
        let out = w.run(&mut w.cmd(w.path(prog)))?;
        outputs.push((prog, out));
    }
    let (ref_name, reference) = &outputs[0];
    if !reference.success() {
        return Err(format!("{ref_name} (the reference) failed: {}\n{}", reference.status_text(), reference.stderr_text()));
    }
    for (name, out) in &outputs[1..] {
        if out.status_text() != reference.status_text() || out.stdout != reference.stdout {
            return Err(format!(
                "{name} differs from {ref_name}:\n--- {ref_name} ({})\n{}\n--- {name} ({})\n{}{}",
                reference.status_text(),
                String::from_utf8_lossy(&reference.stdout),
                out.status_text(),
                String::from_utf8_lossy(&out.stdout),
                out.stderr_text()
            ));
        }
    }
    // Structure.
    let ours = Structure::of(&w.read("ab.o")?)?;
    let lld = Structure::of(&w.read("ab.lld.o")?)?;
    let mut diffs = Vec::new();
    compare("sections (name, type, flags)", &ours.sections, &lld.sections, &mut diffs);
    compare("groups (signature, members)", &ours.groups, &lld.groups, &mut diffs);
    compare("global symbols (name, bind, type, visibility, where)", &ours.globals, &lld.globals, &mut diffs);
    compare("local symbols (name, type, where)", &ours.locals, &lld.locals, &mut diffs);
    compare("relocations per (section, type)", &ours.relocs, &lld.relocs, &mut diffs);
    compare("pieces of SHF_MERGE sections (section, contents)", &ours.pieces, &lld.pieces, &mut diffs);
    compare_order(&ours.local_order, &lld.local_order, &mut diffs);
    if ours.header != lld.header {
        diffs.push(format!("ELF header (type, machine, entry, phnum, flags): dtld {:?}, lld {:?}", ours.header, lld.header));
    }
    if !diffs.is_empty() {
        return Err(format!("ab.o (dtld -r) and ab.lld.o (ld.lld-22 -r) differ:\n{}", diffs.join("\n")));
    }
    Ok(())
}

/// The locals must stand in lld's order, section symbols included: a group's sh_info and every
/// relocation name their symbol by index.
fn compare_order(ours: &[String], lld: &[String], diffs: &mut Vec<String>) {
    if ours == lld {
        return;
    }
    let first = ours.iter().zip(lld).position(|(a, b)| a != b).unwrap_or(ours.len().min(lld.len()));
    let around = |v: &[String]| v.iter().skip(first.saturating_sub(2)).take(6).cloned().collect::<Vec<_>>().join(", ");
    diffs.push(format!("  local symbol order differs at index {}:\n    dtld: {}\n    lld:  {}", first + 1, around(ours), around(lld)));
}

fn compare(what: &str, ours: &BTreeMap<String, usize>, lld: &BTreeMap<String, usize>, diffs: &mut Vec<String>) {
    let mut lines = Vec::new();
    for (k, &n) in ours {
        let m = lld.get(k).copied().unwrap_or(0);
        if n != m {
            lines.push(format!("    {k}: dtld {n}, lld {m}"));
        }
    }
    for (k, &m) in lld {
        if !ours.contains_key(k) {
            lines.push(format!("    {k}: dtld 0, lld {m}"));
        }
    }
    if !lines.is_empty() {
        diffs.push(format!("  {what}:\n{}", lines.join("\n")));
    }
}

/// The comparable structure of a relocatable object (multisets as key → count).
struct Structure {
    header: (u16, u16, u64, u16, u32),
    sections: BTreeMap<String, usize>,
    groups: BTreeMap<String, usize>,
    globals: BTreeMap<String, usize>,
    locals: BTreeMap<String, usize>,
    /// Every local (section symbols included, by their section's name) in symbol index order.
    local_order: Vec<String>,
    relocs: BTreeMap<String, usize>,
    /// The pieces of the SHF_MERGE sections without relocations of their own (lld
    /// deduplicates them in -r links; the order differs, the multiset must not): strings
    /// (empty ones skipped: alignment padding looks the same), or fixed-size entries.
    pieces: BTreeMap<String, usize>,
}

fn bump(m: &mut BTreeMap<String, usize>, k: String) {
    *m.entry(k).or_default() += 1;
}

impl Structure {
    fn of(bytes: &[u8]) -> Result<Structure, String> {
        use goblin::elf::section_header::{SHT_GROUP, SHT_NOBITS};
        use goblin::elf::sym::STT_SECTION;
        let elf = goblin::elf::Elf::parse(bytes).map_err(|e| format!("goblin: {e}"))?;
        let h = &elf.header;
        let header = (h.e_type, h.e_machine, h.e_entry, h.e_phnum, h.e_flags);
        let shs = &elf.section_headers;
        let sec_name = |i: usize| shs.get(i).and_then(|s| elf.shdr_strtab.get_at(s.sh_name)).unwrap_or("?").to_string();
        let mut sections = BTreeMap::new();
        let mut groups = BTreeMap::new();
        for (i, s) in shs.iter().enumerate().skip(1) {
            let name = sec_name(i);
            // lld's unused COMMON section (intentional difference, see the header).
            if name == "COMMON" && s.sh_type == SHT_NOBITS {
                continue;
            }
            bump(&mut sections, format!("{name} type={:#x} flags={:#x}", s.sh_type, s.sh_flags));
            if s.sh_type == SHT_GROUP {
                let data = bytes.get(s.sh_offset as usize..(s.sh_offset + s.sh_size) as usize).ok_or("group section out of bounds")?;
                let words: Vec<u32> = data.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                let sig = elf.syms.get(s.sh_info as usize).map(|y| {
                    if y.st_type() == STT_SECTION {
                        sec_name(y.st_shndx)
                    } else {
                        elf.strtab.get_at(y.st_name).unwrap_or("?").to_string()
                    }
                });
                let mut members: Vec<String> = words.iter().skip(1).map(|&m| sec_name(m as usize)).collect();
                members.sort();
                bump(&mut groups, format!("[{}] flag={:#x} {{{}}}", sig.unwrap_or_default(), words.first().copied().unwrap_or(0), members.join(", ")));
            }
        }
        let mut globals = BTreeMap::new();
        let mut locals = BTreeMap::new();
        let mut local_order = Vec::new();
        for y in elf.syms.iter().skip(1) {
            let name = elf.strtab.get_at(y.st_name).unwrap_or("?").to_string();
            let place = match y.st_shndx {
                0 => "UND".to_string(),
                0xfff1 => "ABS".to_string(),
                0xfff2 => format!("COM(align={},size={})", y.st_value, y.st_size),
                i => sec_name(i),
            };
            if y.st_bind() == goblin::elf::sym::STB_LOCAL {
                if y.st_type() == STT_SECTION {
                    local_order.push(format!("section {place}"));
                    continue;
                }
                local_order.push(format!("{name} type={} in {place}", y.st_type()));
                bump(&mut locals, format!("{name} type={} in {place}", y.st_type()));
            } else {
                bump(&mut globals, format!("{name} bind={} type={} vis={} in {place}", y.st_bind(), y.st_type(), y.st_visibility()));
            }
        }
        let mut relocs = BTreeMap::new();
        for (idx, rs) in &elf.shdr_relocs {
            let target = shs.get(*idx).map_or(0, |s| s.sh_info as usize);
            let tname = sec_name(target);
            for r in rs.iter() {
                bump(&mut relocs, format!("{tname} type={}", r.r_type));
            }
        }
        let relocated: Vec<usize> = elf.shdr_relocs.iter().filter_map(|(idx, _)| shs.get(*idx).map(|s| s.sh_info as usize)).collect();
        let mut pieces = BTreeMap::new();
        for (i, s) in shs.iter().enumerate().skip(1) {
            const SHF_MERGE: u64 = 0x10;
            const SHF_STRINGS: u64 = 0x20;
            let k = s.sh_entsize as usize;
            if s.sh_flags & SHF_MERGE == 0 || k == 0 || s.sh_type == SHT_NOBITS || relocated.contains(&i) {
                continue;
            }
            let data = bytes.get(s.sh_offset as usize..(s.sh_offset + s.sh_size) as usize).ok_or("section out of bounds")?;
            let name = sec_name(i);
            let hex = |p: &[u8]| p.iter().map(|b| format!("{b:02x}")).collect::<String>();
            if s.sh_flags & SHF_STRINGS != 0 {
                let mut p = 0;
                while p + k <= data.len() {
                    let n = data[p..].chunks_exact(k).position(|e| e.iter().all(|&b| b == 0)).ok_or(format!("{name}: unterminated string"))?;
                    if n > 0 {
                        bump(&mut pieces, format!("{name}: {}", hex(&data[p..p + n * k])));
                    }
                    p += (n + 1) * k;
                }
            } else {
                // Each entry at a multiple of the alignment.
                let stride = k.next_multiple_of(s.sh_addralign.max(1) as usize);
                for e in data.chunks(stride) {
                    bump(&mut pieces, format!("{name}: {}", hex(&e[..k.min(e.len())])));
                }
            }
        }
        Ok(Structure { header, sections, groups, globals, locals, local_order, relocs, pieces })
    }
}

/// Corrupt inputs: exit 1, an error line, no output, no temporary file left behind.
fn corrupt_objects(w: &Work) -> Result<(), String> {
    w.write("ok.c", "int ok(void) { return 1; }\n")?;
    w.ok(w.cmd(CLANG).args(["-c", "ok.c", "-o", "ok.o"]))?;
    let good = w.read("ok.o")?;
    let mut garbage = good[..16].to_vec();
    garbage.extend(std::iter::repeat_n(0xa5u8, 200));
    let mut bad_shoff = good.clone();
    bad_shoff[40..48].copy_from_slice(&(good.len() as u64 * 4).to_le_bytes());
    let mut bad_section = good.clone();
    {
        // First real section header: sh_offset far past the end of the file.
        let shoff = u64::from_le_bytes(good[40..48].try_into().unwrap()) as usize;
        let sh1 = shoff + 64;
        bad_section[sh1 + 24..sh1 + 32].copy_from_slice(&(1u64 << 40).to_le_bytes());
    }
    // The last symbol says its section index is in SHT_SYMTAB_SHNDX, which the object lacks.
    let mut xindex_no_table = good.clone();
    {
        let shoff = u64::from_le_bytes(good[40..48].try_into().unwrap()) as usize;
        let shnum = u16::from_le_bytes(good[60..62].try_into().unwrap()) as usize;
        let symtab =
            (0..shnum).map(|i| shoff + 64 * i).find(|&h| u32::from_le_bytes(good[h + 4..h + 8].try_into().unwrap()) == 2).ok_or("ok.o has no .symtab")?;
        let (off, size) =
            (u64::from_le_bytes(good[symtab + 24..symtab + 32].try_into().unwrap()), u64::from_le_bytes(good[symtab + 32..symtab + 40].try_into().unwrap()));
        let last = (off + size - 24) as usize;
        xindex_no_table[last + 6..last + 8].copy_from_slice(&0xffffu16.to_le_bytes());
    }
    let cases: [(&str, Vec<u8>); 5] = [
        ("truncated.o", good[..good.len() / 2].to_vec()),
        ("garbage.o", garbage),
        ("bad-shoff.o", bad_shoff),
        ("bad-section.o", bad_section),
        ("xindex-no-table.o", xindex_no_table),
    ];
    for (name, bytes) in cases {
        w.write(name, &bytes)?;
        // The previous output is kept, byte for byte, as ld.lld keeps it (docs/reliability.md):
        // a failed link never touches it.
        w.write("out.o", "stale")?;
        let before: Vec<String> = w.listing().into_iter().filter(|f| f != "out.o").collect();
        let out = w.run(w.cmd(&w.ctx.dtld).args(["-r", "ok.o", name, "-o", "out.o"]))?;
        let err = out.stderr_text();
        if out.status_text() != "exit 1" {
            return Err(format!("dtld -r ok.o {name}: expected exit 1, got {}\n{err}", out.status_text()));
        }
        if !err.lines().any(|l| l.starts_with("dtld: error: ")) {
            return Err(format!("dtld -r ok.o {name}: no `dtld: error:` line in:\n{err}"));
        }
        if err.contains("panicked") {
            return Err(format!("dtld -r ok.o {name} panicked:\n{err}"));
        }
        let after: Vec<String> = w.listing().into_iter().filter(|f| f != "out.o").collect();
        if w.read("out.o").ok().as_deref() != Some(&b"stale"[..]) {
            return Err(format!("dtld -r ok.o {name} failed and changed or removed the previous out.o"));
        }
        if after != before {
            return Err(format!("dtld -r ok.o {name} left files behind: before {before:?}, after {after:?}"));
        }
        // Extended section numbering is new: its message must be ld.lld-22's (dtld names the
        // file in front of it, which lld does not for this one).
        if name == "xindex-no-table.o" {
            let lld = w.run(w.cmd(LLD).args(["-r", "ok.o", name, "-o", "out-lld.o"]))?;
            let message = |t: &str| t.lines().find_map(|l| l.split_once("error: ").map(|(_, m)| m.to_string()));
            let (ours, theirs) = (message(&err), message(&lld.stderr_text()));
            if !matches!((&ours, &theirs), (Some(o), Some(t)) if o == &format!("{name}: {t}")) {
                return Err(format!("dtld -r ok.o {name}: the error differs from ld.lld-22's:\n{err}\n{}", lld.stderr_text()));
            }
        }
    }
    Ok(())
}

fn expect_error(w: &Work, args: &[&str], needle: &str) -> Result<(), String> {
    let out = w.run(w.cmd(&w.ctx.dtld).args(args))?;
    let err = out.stderr_text();
    if out.status_text() != "exit 1" || !err.lines().any(|l| l.starts_with("dtld: error: ") && l.contains(needle)) {
        return Err(format!("dtld {}: expected exit 1 and an error containing {needle:?}, got {}:\n{err}", args.join(" "), out.status_text()));
    }
    if w.path("out.o").exists() {
        return Err("out.o was written by a failed link".into());
    }
    Ok(())
}

fn shared_library(w: &Work) -> Result<(), String> {
    w.write("s.c", "int s(void) { return 1; }\n")?;
    w.ok(w.cmd(CLANG).args(["-fPIC", "-shared", "s.c", "-o", "libs.so"]))?;
    w.ok(w.cmd(CLANG).args(["-c", "s.c", "-o", "s.o"]))?;
    expect_error(w, &["-r", "s.o", "libs.so", "-o", "out.o"], "attempted static link of dynamic object libs.so")?;
    expect_error(w, &["-r", "-shared", "s.o", "-o", "out.o"], "-r and -shared may not be used together")?;
    expect_error(w, &["-r", "-pie", "s.o", "-o", "out.o"], "-r and -pie may not be used together")
}

/// A script's output section descriptions under -r, as ld.lld-22 applies them: they rename and
/// merge what they take, in their order, described sections first with ALIGN applied, data
/// commands written among the inputs (a description of data alone makes a section of its own),
/// each description's `.rela` where lld's orphan placement puts it; `/DISCARD/` drops.
/// What dtld cannot apply (data naming a symbol) is refused, never ignored.
fn script_output_sections(w: &Work) -> Result<(), String> {
    w.write("t.c", "int t(void) { return 1; }\nint u(void) { return 2; }\nint v = 3;\nint x(void) { return t() + u(); }\n")?;
    w.ok(w.cmd(CLANG).args(["-c", "-ffunction-sections", "-fdata-sections", "t.c", "-o", "t.o"]))?;
    w.write("out.lds", "SECTIONS { .foo : ALIGN(64) { *(.text.u) *(.text.t) *(.text.x) } .bar : { *(.data*) } }\n")?;
    w.write(
        "data.lds",
        "SECTIONS { .foo : { BYTE(1) *(.text.u) SHORT(0x2233) *(.text.t) LONG(0x44556677) *(.text.x) QUAD(0x1122334455667788) } .dat : { BYTE(9) } }\n",
    )?;
    // Name, type, flags, link, info and alignment of every section (offsets differ: lld puts
    // the relocation sections' contents last), the symbols and the relocations.
    let table = |f: &str| -> Result<String, String> {
        let out = String::from_utf8_lossy(&w.ok(w.cmd(READELF).args(["-S", "-s", "-r", "--wide", f]))?.stdout).into_owned();
        Ok(out
            .lines()
            .filter(|l| !l.contains(".comment") && !l.contains(" at offset ") && !l.contains("starting at offset"))
            .map(|l| {
                if !l.trim_start().starts_with('[') {
                    return l.to_string();
                }
                let c: Vec<&str> = l.split(']').nth(1).unwrap_or("").split_whitespace().collect();
                let n = c.len();
                if n < 7 {
                    return c.join(" ");
                }
                format!("{} {} {} {} {} {}", c[0], c[1], if n >= 10 { c[n - 4] } else { "" }, c[n - 3], c[n - 2], c[n - 1])
            })
            .collect::<Vec<_>>()
            .join("\n"))
    };
    let dump =
        |f: &str, sec: &str| -> Result<String, String> { Ok(String::from_utf8_lossy(&w.ok(w.cmd(READELF).args(["-x", sec, f]))?.stdout).replace(f, "FILE")) };
    for script in ["out.lds", "data.lds"] {
        w.ok(w.cmd(&w.ctx.dtld).args(["-r", "t.o", "-T", script, "-o", "out.o"]))?;
        w.ok(w.cmd(LLD).args(["-r", "t.o", "-T", script, "-o", "out.lld.o"]))?;
        let (ours, theirs) = (table("out.o")?, table("out.lld.o")?);
        if ours != theirs {
            return Err(format!("{script}: sections differ:\n--- dtld\n{ours}\n--- ld.lld-22\n{theirs}"));
        }
        if dump("out.o", ".foo")? != dump("out.lld.o", ".foo")? {
            return Err(format!("{script}: .foo differs:\n{}\n{}", dump("out.o", ".foo")?, dump("out.lld.o", ".foo")?));
        }
    }
    if dump("out.o", ".dat")? != dump("out.lld.o", ".dat")? {
        return Err(format!(".dat differs:\n{}\n{}", dump("out.o", ".dat")?, dump("out.lld.o", ".dat")?));
    }
    w.write("sym.lds", "SECTIONS { .foo : { *(.text*) LONG(t) } }\n")?;
    std::fs::remove_file(w.path("out.o")).map_err(|e| e.to_string())?;
    expect_error(w, &["-r", "t.o", "-T", "sym.lds", "-o", "out.o"], "-r with a data command naming a symbol is not supported by dtld")?;
    w.write("discard.lds", "SECTIONS { /DISCARD/ : { *(.comment) } }\n")?;
    w.ok(w.cmd(&w.ctx.dtld).args(["-r", "t.o", "-T", "discard.lds", "-o", "out.o"]))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Input sets.
// ---------------------------------------------------------------------------------------------

const C_A: &str = r#"
#include <stdio.h>
static int counter;
int gdata = 5;
int gbss;
static const char table[] = "static table";
extern int bfunc(int);
static const char *msg(void) { return "hello from a"; }
int afunc(int x) { counter += x; return bfunc(x) + gdata + counter + gbss; }
const char *amsg(void) { return msg(); }
const char *atable(void) { return table; }
"#;

const C_B: &str = r#"
int gdata2 = 7;
static int helper(int x) { return x * 2; }
int bfunc(int x) { static int calls; calls++; return helper(x) + calls; }
const char *bmsg(void) { return "hello from b"; }
const char *bdup(void) { return "hello from a"; }
"#;

const C_MAIN: &str = r#"
#include <stdio.h>
extern int afunc(int), bfunc(int), gdata, gdata2, gbss;
extern const char *amsg(void), *bmsg(void), *bdup(void), *atable(void);
int main(void) {
  gbss = 3;
  printf("%d %d %d %d\n", afunc(1), afunc(2), bfunc(3), gdata + gdata2);
  printf("%s|%s|%s|%s\n", amsg(), bmsg(), bdup(), atable());
  return 0;
}
"#;

const CXX_H: &str = r#"
#include <stdexcept>
#include <string>
template <class T> T twice(T x) { return x + x; }
inline int counter_inl(int x) { static int s; return x + (++s); }
struct Shape {
  virtual ~Shape() {}
  virtual int area() const { return 0; }
};
struct Square : Shape {
  int side;
  explicit Square(int s) : side(s) {}
  int area() const override { return side * side; }
};
inline int throws_if_negative(int x) {
  if (x < 0) throw std::runtime_error("negative: " + std::to_string(x));
  return x;
}
"#;

const CXX_1: &str = r#"
#include "i.h"
int c1(int x) {
  Square s(x < 0 ? 1 : x);
  const Shape &sh = s;
  return twice(throws_if_negative(x)) + counter_inl(x) + sh.area();
}
"#;

const CXX_2: &str = r#"
#include "i.h"
int c2(int x) {
  try { if (x == 3) throw 42; throws_if_negative(x); }
  catch (int e) { return e; }
  catch (const std::exception &e) { return -static_cast<int>(std::string(e.what()).size()); }
  Square s(x);
  return twice(x) + counter_inl(x) + twice<long>(x) + s.area();
}
"#;

const CXX_MAIN: &str = r#"
#include <cstdio>
#include <stdexcept>
int c1(int), c2(int);
int main() {
  std::printf("%d %d %d %d\n", c1(2), c2(3), c2(4), c2(-7));
  try { c1(-5); } catch (const std::runtime_error &e) { std::printf("caught %s\n", e.what()); }
  std::printf("%d\n", c1(6));
  return 0;
}
"#;

const TLS_1: &str = r#"
__thread int tv = 3;
__thread int tz;
static __thread int tstatic = 11;
extern __thread int text;
int tls_sum(void) { tz += 2; tstatic++; return tv + tz + text + tstatic; }
int *tls_addr(void) { return &tv; }
"#;

const TLS_2: &str = r#"
__thread int text = 9;
__thread long tarr[4] = {1, 2, 3, 4};
long tls_arr(int i) { return tarr[i & 3]; }
"#;

const TLS_MAIN: &str = r#"
#include <stdio.h>
#include <pthread.h>
extern __thread int tv;
int tls_sum(void); int *tls_addr(void); long tls_arr(int);
static void *thr(void *p) { (void)p; *tls_addr() = 100; printf("thread %d\n", tls_sum()); return 0; }
int main(void) {
  pthread_t t;
  printf("%d %d %ld\n", tls_sum(), tls_sum(), tls_arr(2));
  pthread_create(&t, 0, thr, 0); pthread_join(t, 0);
  printf("%d %d\n", tls_sum(), tv);
  return 0;
}
"#;

const COMMON_1: &str = r#"
int cm;
int cm2[10];
int cm_init = 4;
void set1(void) { cm = 1; cm2[9] = 9; }
"#;

const COMMON_2: &str = r#"
int cm;
long cm2[20];
char cm3[3];
void set2(void) { cm += 2; cm2[19] = 19; cm3[2] = 'x'; }
"#;

const COMMON_MAIN: &str = r#"
#include <stdio.h>
extern int cm, cm_init; extern long cm2[20]; extern char cm3[3];
void set1(void), set2(void);
int main(void) { set1(); set2(); printf("%d %ld %c %d %zu\n", cm, cm2[19], cm3[2], cm_init, sizeof cm2); return 0; }
"#;

const WEAK_1: &str = r#"
__attribute__((weak)) int wf(void) { return 1; }
__attribute__((weak)) int wdata = 10;
extern __attribute__((weak)) int maybe(void);
extern __attribute__((weak)) int maybe_data;
int wcall(void) { return wf() * 100 + wdata + (maybe ? maybe() : 7) + (&maybe_data ? 1000 : 0); }
"#;

const WEAK_2: &str = r#"
int wf(void) { return 2; }
__attribute__((weak)) int wonly(void) { return 5; }
"#;

const WEAK_MAIN: &str = r#"
#include <stdio.h>
int wcall(void); int wonly(void);
int main(void) { printf("%d %d\n", wcall(), wonly()); return 0; }
"#;

const MANY_SECTIONS: &str = r#"
// 100,000 data sections (-fdata-sections): past 65,279 sections, ELF numbers them through
// SHT_SYMTAB_SHNDX (SHN_XINDEX symbols) and the header counts escape to section 0. Half the
// variables are static, so their relocations name section symbols of sections numbered
// above 65,280 too.
#define V(p) int p = 1; __attribute__((used)) static int s_##p = 2;
#define A(p) V(p##0) V(p##1) V(p##2) V(p##3) V(p##4) V(p##5) V(p##6) V(p##7) V(p##8) V(p##9)
#define B(p) A(p##0) A(p##1) A(p##2) A(p##3) A(p##4) A(p##5) A(p##6) A(p##7) A(p##8) A(p##9)
#define C(p) B(p##0) B(p##1) B(p##2) B(p##3) B(p##4) B(p##5) B(p##6) B(p##7) B(p##8) B(p##9)
#define E(p) C(p##0) C(p##1) C(p##2) C(p##3) C(p##4) C(p##5) C(p##6) C(p##7) C(p##8) C(p##9)
#define F(p) E(p##0) E(p##1) E(p##2) E(p##3) E(p##4) E(p##5) E(p##6) E(p##7) E(p##8) E(p##9)
F(v)
int sum(void) { return v99999 + v12345 + v70000 + s_v99999 + s_v70000 + s_v65300 + s_v00001; }
"#;

const MANY_MAIN: &str = r#"
#include <stdio.h>
extern int v99999, v00000, v65300;
int sum(void);
int main(void) { printf("%d %d\n", sum(), v99999 + v00000 + v65300); return 0; }
"#;

const ARCH_B1: &str = "int needed(int x) { return x + 40; }\n";
const ARCH_B2: &str = "int not_needed(int x) { return x - 40; }\n";
const ARCH_A: &str = r#"
int needed(int);
int front(int x) { return needed(x) * 2; }
"#;
const WRAP_W: &str = r#"
int __real_bfunc(int);
int __wrap_bfunc(int x) { return 1000 + __real_bfunc(x); }
"#;

const WRAP_MAIN: &str = r#"
#include <stdio.h>
extern int afunc(int), afunc_alias(int), bfunc(int);
extern char magic[];
int main(void) {
  printf("%d %d %d %lu\n", afunc(1), afunc_alias(2), bfunc(3), (unsigned long)magic);
  return 0;
}
"#;

const ARCH_MAIN: &str = r#"
#include <stdio.h>
int front(int);
int main(void) { printf("%d\n", front(1)); return 0; }
"#;

// Floating-point constants (`.rodata.cst4`, `.rodata.cst8`, `.rodata.cst16`), wide strings
// (`.rodata.str4.4`, `.rodata.str2.2`) and narrow ones, some equal across the two objects, which
// `-r` must deduplicate as lld does (each distinct piece once).
const MERGE_1: &str = r#"
#include <wchar.h>
typedef float v4 __attribute__((vector_size(16)));
double scale1(double x) { return x * 3.25 + 1.5; }
float fscale1(float x) { return x * 2.5f; }
v4 vec1(v4 x) { return x * (v4){1.5f, 2.5f, 3.5f, 4.5f}; }
const wchar_t *wide1(void) { return L"shared wide"; }
const unsigned short *u16a(void) { return (const unsigned short *)u"shared u16"; }
const char *str1(void) { return "shared narrow"; }
"#;

const MERGE_2: &str = r#"
#include <wchar.h>
typedef float v4 __attribute__((vector_size(16)));
double scale2(double x) { return x * 3.25 - 7.0; }
float fscale2(float x) { return x * 2.5f + 0.75f; }
v4 vec2(v4 x) { return x * (v4){1.5f, 2.5f, 3.5f, 4.5f} + (v4){1, 2, 3, 4}; }
const wchar_t *wide2(void) { return L"shared wide"; }
const wchar_t *wide3(void) { return L"other wide"; }
const unsigned short *u16b(void) { return (const unsigned short *)u"shared u16"; }
const char *str2(void) { return "shared narrow"; }
"#;

const MERGE_MAIN: &str = r#"
#include <stdio.h>
#include <wchar.h>
typedef float v4 __attribute__((vector_size(16)));
double scale1(double), scale2(double);
float fscale1(float), fscale2(float);
v4 vec1(v4), vec2(v4);
const wchar_t *wide1(void), *wide2(void), *wide3(void);
const unsigned short *u16a(void), *u16b(void);
const char *str1(void), *str2(void);
int main(void) {
    v4 a = vec1((v4){1, 1, 1, 1}), b = vec2((v4){2, 2, 2, 2});
    printf("%g %g %g %g\n", scale1(2), scale2(2), fscale1(2), fscale2(2));
    printf("%g %g %g %g %g %g\n", a[0], a[3], b[1], b[2], (double)sizeof a, 0.0);
    printf("%ls %ls %ls %s %s\n", wide1(), wide2(), wide3(), str1(), str2());
    printf("%d %d\n", u16a()[0], u16b()[9]);
    return 0;
}
"#;

static CASES: &[Case] = &[
    Case { name: "c-basic", ..BASE },
    // Bitcode: LTO first (every symbol kept), then the relocatable link of its objects, as lld.
    Case { name: "c-thinlto", flags: &["-O1", "-flto=thin"], ..BASE },
    Case { name: "c-full-lto", flags: &["-O1", "-flto"], ..BASE },
    Case { name: "cxx-thinlto-comdat-eh", sources: CXX_SOURCES, flags: &["-O1", "-flto=thin"], combine: &["c1.o", "c2.o"], cxx: true, ..BASE },
    Case { name: "c-O0-debug", flags: &["-O0", "-g"], ..BASE },
    Case { name: "c-function-sections", flags: &["-O2", "-ffunction-sections", "-fdata-sections"], ..BASE },
    Case { name: "c-compressed-debug", flags: &["-O1", "-g", "-gz=zlib"], ..BASE },
    Case { name: "c-discard-all", r_flags: &["--discard-all"], ..BASE },
    Case { name: "c-discard-locals", flags: &["-O0", "-g"], r_flags: &["--discard-locals"], ..BASE },
    Case { name: "c-build-id", r_flags: &["--build-id=sha1"], ..BASE },
    Case { name: "c-cet-property", flags: &["-O1", "-fcf-protection=full"], ..BASE },
    Case { name: "c-nested-own-output", pre: &[("dtld", "a1.o", &["a.o"]), ("dtld", "b1.o", &["b.o"])], combine: &["a1.o", "b1.o"], ..BASE },
    Case { name: "cxx-comdat-eh", sources: CXX_SOURCES, flags: &["-O0"], combine: &["c1.o", "c2.o"], cxx: true, ..BASE },
    Case {
        name: "cxx-comdat-eh-O2-function-sections-debug",
        sources: CXX_SOURCES,
        flags: &["-O2", "-ffunction-sections", "-fdata-sections", "-g"],
        combine: &["c1.o", "c2.o"],
        cxx: true,
        ..BASE
    },
    Case {
        name: "cxx-link-order-patchable",
        sources: CXX_SOURCES,
        flags: &["-O1", "-ffunction-sections", "-fpatchable-function-entry=2"],
        combine: &["c1.o", "c2.o"],
        cxx: true,
        ..BASE
    },
    Case {
        name: "cxx-nested-lld-output",
        sources: CXX_SOURCES,
        flags: &["-O0", "-g"],
        pre: &[("lld", "c1r.o", &["c1.o"]), ("lld", "c2r.o", &["c2.o"])],
        combine: &["c1r.o", "c2r.o"],
        cxx: true,
        ..BASE
    },
    Case { name: "tls", sources: &[("t1.c", TLS_1), ("t2.c", TLS_2), ("main.c", TLS_MAIN)], combine: &["t1.o", "t2.o"], ..BASE },
    Case { name: "tls-pic", sources: &[("t1.c", TLS_1), ("t2.c", TLS_2), ("main.c", TLS_MAIN)], flags: &["-O1", "-fPIC"], combine: &["t1.o", "t2.o"], ..BASE },
    Case {
        name: "common",
        sources: &[("m1.c", COMMON_1), ("m2.c", COMMON_2), ("main.c", COMMON_MAIN)],
        flags: &["-O1", "-fcommon"],
        combine: &["m1.o", "m2.o"],
        ..BASE
    },
    Case {
        name: "many-sections-extended-numbering",
        sources: &[("many.c", MANY_SECTIONS), ("main.c", MANY_MAIN)],
        flags: &["-O1", "-fdata-sections"],
        combine: &["many.o"],
        ..BASE
    },
    Case {
        name: "merge-constants-wide-strings",
        sources: &[("k1.c", MERGE_1), ("k2.c", MERGE_2), ("main.c", MERGE_MAIN)],
        flags: &["-O2"],
        combine: &["k1.o", "k2.o"],
        ..BASE
    },
    Case { name: "weak", sources: &[("w1.c", WEAK_1), ("w2.c", WEAK_2), ("main.c", WEAK_MAIN)], combine: &["w1.o", "w2.o"], ..BASE },
    Case {
        name: "archive-member",
        sources: &[("a.c", ARCH_A), ("b1.c", ARCH_B1), ("b2.c", ARCH_B2), ("main.c", ARCH_MAIN)],
        combine: &["a.o", "libb.a"],
        archives: &[("libb.a", &["b1.o", "b2.o"])],
        ..BASE
    },
    Case {
        name: "wrap-defsym",
        sources: &[("a.c", C_A), ("b.c", C_B), ("w.c", WRAP_W), ("main.c", WRAP_MAIN)],
        combine: &["a.o", "b.o", "w.o"],
        r_flags: &["--wrap=bfunc", "--defsym=afunc_alias=afunc", "--defsym=magic=0x2a"],
        ..BASE
    },
    Case { name: "gcc-c-O2", flags: &["-O2", "-g"], gnu: true, ..BASE },
    Case {
        name: "gcc-cxx-comdat-eh-g3",
        sources: CXX_SOURCES,
        // Non-PIE: GCC's PIE code reaches libstdc++'s typeinfo with R_X86_64_PC32 (a copy
        // relocation in a PIE), which dtld's executable path does not support yet.
        flags: &["-O0", "-g3", "-fno-pie"],
        combine: &["c1.o", "c2.o"],
        cxx: true,
        gnu: true,
        link_flags: &["-no-pie"],
        ..BASE
    },
];

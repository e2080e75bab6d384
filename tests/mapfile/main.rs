//! Why this exists: the link map (`-Map=<file>`, `-M`) is read by tools that were written for
//! ld.lld's format, and its addresses must be the ones in the linked program. The differential
//! fixtures compare programs, not maps, so this target links small C programs with dtld and with
//! ld.lld-22 (through `clang-22 -fuse-ld=`) and checks:
//!
//! * the format: lld's header line, fixed columns (VMA, LMA, size in hex at widths 16/16/8,
//!   alignment in decimal at width 5), indentation 0/8/16 for output section / input section /
//!   symbol;
//! * output sections: the same names in the same order as lld's map (when both maps have the
//!   same set), and address, size and alignment equal to the section headers of dtld's output;
//! * input sections: every `file:(section)` line names an input that exists (an archive member
//!   as `lib.a(m.o)`, present in the archive), under the same output section as in lld's map,
//!   and unextracted archive members do not appear;
//! * symbols: every function in `.text` of the program's `.symtab` is listed under `.text` at
//!   its `.symtab` address with its size, inside the input section that holds it; symbols are
//!   sorted by address; the symbols under each input section are lld's (commons, TLS symbols at
//!   their TLS offsets, copy-relocated symbols included);
//! * `-M` prints to stdout exactly what `-Map=` writes;
//! * an unwritable map path fails the link with lld's message, exit 1 and no output file;
//! * COFF: MinGW's `-Map` and lld-link's `/lldmap:` write lld's COFF map (`LLDMapFile.cpp`),
//!   byte-identical to ld.lld-22's / lld-link-22's for the same MinGW program (two objects, an
//!   archive, commons, statics) and for an lld-link link of `llvm-mc` objects;
//! * lld-link's `/map` (link.exe's format): `linkmap.rs`.
//!
//! * `--time-trace`: a program built with `-g -ffunction-sections` and linked with
//!   `--gc-sections` by dtld and by ld.lld-22, both traces read as Chrome traces (lld's is the
//!   format reference), the two programs printing the same; in dtld's trace every stage lies
//!   inside `Total Link` and the parts of layout and writing inside their stage, one after the
//!   other (`--time-trace-granularity=0`); at the default granularity no event but the total
//!   is shorter than 500 µs; `--verbose` lists the stages but not their parts.
//!
//! Trials work in `<target>/mapfile-tests/<trial>/`, deleted when they pass (kept on failure,
//! or always with `DTLD_HARNESS_KEEP=1`). `DTLD` names the linker under test (default
//! `<target>/release/dtld`).

mod linkmap;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{check_tools, find_dtld, target_dir, CLANG, LLD, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

const HEADER: &str = "             VMA              LMA     Size Align Out     In      Symbol";

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        trial("map/program-vs-lld", program_vs_lld),
        trial("map/data-vs-lld", data_vs_lld),
        trial("map/print-map-to-stdout", print_map_stdout),
        trial("map/unwritable-path", unwritable),
        trial("map/coff-mingw-vs-lld", coff_mingw_vs_lld),
        trial("map/coff-lld-link-vs-lld", coff_lld_link_vs_lld),
        trial("map/coff-link-exe-map-vs-lld-link", linkmap::link_map_vs_lld_link),
        trial("time-trace/debug-gc-sections-vs-lld", time_trace_vs_lld),
    ];
    libtest_mimic::run(&args, trials).exit();
}

fn trial(name: &'static str, f: fn(&Work) -> Result<(), String>) -> Trial {
    Trial::test(name, move || run_trial(name, f).map_err(Failed::from))
}

struct Work<'a> {
    dtld: PathBuf,
    t: &'a TrialDir,
}

impl std::ops::Deref for Work<'_> {
    type Target = TrialDir;
    fn deref(&self) -> &TrialDir {
        self.t
    }
}

fn run_trial(name: &str, f: fn(&Work) -> Result<(), String>) -> Result<(), String> {
    check_tools(&[CLANG, LLD, LLVM_AR])?;
    let dtld = find_dtld()?;
    let dir = target_dir().join("mapfile-tests").join(name.replace('/', "-"));
    run_in(&dir, keep_requested(), &[], |t| f(&Work { dtld, t }))
}

impl Work<'_> {
    fn compile(&self, src: &str, flags: &[&str]) -> Result<(), String> {
        let obj = src.replace(".c", ".o");
        self.ok(self.cmd(CLANG).args(["-c", "-O1"]).args(flags).arg(src).arg("-o").arg(obj)).map(drop)
    }

    /// A clang link with the linker under test (`dtld`) or ld.lld-22 (`lld`).
    fn link(&self, linker: &str, args: &[&str]) -> Command {
        let mut c = self.cmd(CLANG);
        if linker == "dtld" {
            c.arg(format!("-fuse-ld={}", self.dtld.display()));
        } else {
            c.arg("-fuse-ld=lld");
        }
        c.args(args);
        c
    }
}

// ------------------------------------------------------------------------------------------------
// The map, parsed.
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Sym {
    name: String,
    vma: u64,
    size: u64,
}

#[derive(Debug, Clone)]
struct Input {
    label: String,
    vma: u64,
    size: u64,
    syms: Vec<Sym>,
}

#[derive(Debug, Clone)]
struct OutSec {
    name: String,
    vma: u64,
    size: u64,
    align: u64,
    inputs: Vec<Input>,
}

fn hex(s: &str, what: &str, line: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim(), 16).map_err(|_| format!("bad {what} in map line `{line}`"))
}

/// Parses a map in lld's format, checking the fixed columns.
fn parse_map(text: &str) -> Result<Vec<OutSec>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!("the map does not start with lld's header line:\n{HEADER}\n---\n{}", text.lines().next().unwrap_or("")));
    }
    let mut out: Vec<OutSec> = Vec::new();
    for line in lines {
        let b = line.as_bytes();
        if b.len() < 50 || b[16] != b' ' || b[33] != b' ' || b[42] != b' ' || b[48] != b' ' || !line.is_char_boundary(49) {
            return Err(format!("map line does not have lld's columns: `{line}`"));
        }
        let vma = hex(&line[..16], "VMA", line)?;
        let lma = hex(&line[17..33], "LMA", line)?;
        let size = hex(&line[34..42], "size", line)?;
        let align: u64 = line[43..48].trim().parse().map_err(|_| format!("bad alignment in `{line}`"))?;
        let rest = &line[49..];
        let depth = rest.len() - rest.trim_start_matches(' ').len();
        let text = rest[depth..].to_string();
        if vma != lma {
            return Err(format!("VMA != LMA in `{line}`"));
        }
        match depth {
            0 => out.push(OutSec { name: text, vma, size, align, inputs: Vec::new() }),
            8 => out.last_mut().ok_or("input section before any output section")?.inputs.push(Input { label: text, vma, size, syms: Vec::new() }),
            16 => {
                if align != 1 {
                    return Err(format!("symbol line with alignment {align}: `{line}`"));
                }
                out.last_mut().and_then(|o| o.inputs.last_mut()).ok_or("symbol before any input section")?.syms.push(Sym { name: text, vma, size })
            }
            _ => return Err(format!("unexpected indentation {depth} in `{line}`")),
        }
    }
    Ok(out)
}

/// `a.o:(.text)` → (`a.o`, `.text`).
fn split_label(label: &str) -> Option<(&str, &str)> {
    let p = label.rfind(":(")?;
    Some((&label[..p], label[p + 2..].strip_suffix(')')?))
}

fn is_eh_frame_piece(label: &str) -> bool {
    split_label(label).is_some_and(|(_, s)| s.starts_with(".eh_frame+0x"))
}

/// (output section, input label) → symbol names, over both maps' lines except `.eh_frame` pieces
/// (whose offsets depend on CIE deduplication).
fn placement(map: &[OutSec]) -> BTreeMap<(String, String), Vec<Vec<String>>> {
    let mut m: BTreeMap<(String, String), Vec<Vec<String>>> = BTreeMap::new();
    for o in map {
        for i in &o.inputs {
            if is_eh_frame_piece(&i.label) {
                continue;
            }
            let mut names: Vec<String> = i.syms.iter().map(|s| s.name.clone()).collect();
            names.sort();
            m.entry((o.name.clone(), i.label.clone())).or_default().push(names);
        }
    }
    for v in m.values_mut() {
        v.sort();
    }
    m
}

// ------------------------------------------------------------------------------------------------
// Checks.
// ------------------------------------------------------------------------------------------------

/// The map against lld's map of the same link.
fn compare_with_lld(w: &Work, dtld: &[OutSec], lld: &[OutSec]) -> Result<(), String> {
    let dn: Vec<&str> = dtld.iter().map(|o| o.name.as_str()).collect();
    let ln: Vec<&str> = lld.iter().map(|o| o.name.as_str()).collect();
    let mut ds = dn.clone();
    let mut ls = ln.clone();
    ds.sort();
    ls.sort();
    if ds == ls {
        if dn != ln {
            return Err(format!("output sections in another order than lld's map:\n  dtld: {dn:?}\n  lld:  {ln:?}"));
        }
    } else {
        eprintln!("note: output section sets differ (order not compared):\n  dtld: {dn:?}\n  lld:  {ln:?}");
    }
    // Input sections (with their symbols) under the same output sections as in lld's map.
    let dp = placement(dtld);
    let lp = placement(lld);
    if dp != lp {
        let mut diff = String::new();
        for (k, v) in &lp {
            if dp.get(k) != Some(v) {
                diff.push_str(&format!("  lld  {} {} {:?}  dtld {:?}\n", k.0, k.1, v, dp.get(k)));
            }
        }
        for (k, v) in &dp {
            if !lp.contains_key(k) {
                diff.push_str(&format!("  dtld only: {} {} {v:?}\n", k.0, k.1));
            }
        }
        return Err(format!("input sections or their symbols differ from lld's map:\n{diff}"));
    }
    // Every file named exists (an archive member in its archive).
    for o in dtld {
        for i in &o.inputs {
            let (file, _) = split_label(&i.label).ok_or_else(|| format!("input line is not `file:(section)`: {}", i.label))?;
            if file == "<internal>" {
                continue;
            }
            let (path, member) = match file.strip_suffix(')').and_then(|f| f.split_once('(')) {
                Some((a, m)) => (a, Some(m)),
                None => (file, None),
            };
            if !w.dir.join(path).is_file() {
                return Err(format!("the map names `{file}`, but {path} is not a file"));
            }
            if let Some(m) = member {
                let t = w.ok(w.cmd(LLVM_AR).arg("t").arg(path))?;
                if !String::from_utf8_lossy(&t.stdout).lines().any(|l| l == m) {
                    return Err(format!("the map names `{file}`, but {path} has no member {m}"));
                }
            }
        }
    }
    Ok(())
}

/// The map against the linked program: section headers and `.symtab`.
fn check_against_binary(map: &[OutSec], exe: &Path) -> Result<(), String> {
    let data = fs::read(exe).map_err(|e| format!("read {}: {e}", exe.display()))?;
    let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("goblin cannot parse {}: {e}", exe.display()))?;
    let shdrs: Vec<(String, u64, u64, u64)> = elf
        .section_headers
        .iter()
        .skip(1)
        .map(|s| (elf.shdr_strtab.get_at(s.sh_name).unwrap_or("").to_string(), s.sh_addr, s.sh_size, s.sh_addralign.max(1)))
        .collect();
    let from_map: Vec<(String, u64, u64, u64)> = map.iter().map(|o| (o.name.clone(), o.vma, o.size, o.align.max(1))).collect();
    if shdrs != from_map {
        return Err(format!(
            "output sections (name, address, size, alignment) differ from the section headers:\n  map:     {from_map:x?}\n  headers: {shdrs:x?}"
        ));
    }
    let text_idx = elf.section_headers.iter().position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text")).ok_or("the program has no .text")?;
    let text = map.iter().find(|o| o.name == ".text").ok_or("the map has no .text")?;
    for o in map {
        for i in &o.inputs {
            if i.syms.windows(2).any(|p| p[0].vma > p[1].vma) {
                return Err(format!("symbols under {} are not sorted by address", i.label));
            }
        }
    }
    let mut checked = 0;
    for s in elf.syms.iter() {
        if s.st_type() != goblin::elf::sym::STT_FUNC || s.st_shndx != text_idx {
            continue;
        }
        let name = elf.strtab.get_at(s.st_name).unwrap_or("");
        if name.is_empty() {
            continue;
        }
        let found = text.inputs.iter().find(|i| i.syms.iter().any(|m| m.name == name && m.vma == s.st_value));
        let Some(input) = found else {
            return Err(format!("function {name} (.symtab address {:#x}) is not listed under .text at that address", s.st_value));
        };
        let m = input.syms.iter().find(|m| m.name == name && m.vma == s.st_value).ok_or("unreachable")?;
        if m.size != s.st_size {
            return Err(format!("function {name}: map size {:#x}, .symtab size {:#x}", m.size, s.st_size));
        }
        if s.st_value < input.vma || s.st_value > input.vma + input.size {
            return Err(format!("function {name} at {:#x} is listed under {} ({:#x}+{:#x})", s.st_value, input.label, input.vma, input.size));
        }
        checked += 1;
    }
    if checked == 0 {
        return Err("no function symbol in .text to check".into());
    }
    Ok(())
}

/// The input section of the map that lists `sym`.
fn home_of<'a>(map: &'a [OutSec], sym: &str) -> Option<(&'a OutSec, &'a Input, &'a Sym)> {
    map.iter().find_map(|o| o.inputs.iter().find_map(|i| i.syms.iter().find(|s| s.name == sym).map(|s| (o, i, s))))
}

fn expect_home(map: &[OutSec], sym: &str, osec: &str, label: &str) -> Result<(), String> {
    match home_of(map, sym) {
        Some((o, i, _)) if o.name == osec && i.label == label => Ok(()),
        Some((o, i, _)) => Err(format!("{sym} is listed under {} / {}, expected {osec} / {label}", o.name, i.label)),
        None => Err(format!("{sym} is not in the map")),
    }
}

// ------------------------------------------------------------------------------------------------
// Trials.
// ------------------------------------------------------------------------------------------------

const MAIN_C: &str = r#"#include <stdio.h>
static __attribute__((noinline)) int twice(int x) { return 2 * x; }
__attribute__((noinline)) int square(int x) { return x * x; }
int lib_add(int, int);
int lib_mul(int, int);
int counter = 1;
int table[64];
const char *greeting = "hello";
int main(void) {
    table[3] = lib_add(square(3), twice(counter));
    printf("%s %d\n", greeting, table[3] + lib_mul(2, 3));
    return 0;
}
"#;

/// Builds main.o and libm2.a (add.o, mul.o and an unused member).
fn build_program(w: &Work) -> Result<(), String> {
    w.write("main.c", MAIN_C)?;
    w.write("add.c", "int lib_add(int a, int b) { return a + b; }\nstatic int add_local;\nint *add_ptr(void) { return &add_local; }\n")?;
    w.write("mul.c", "int lib_mul(int a, int b) { return a * b; }\n")?;
    w.write("unused.c", "int never_used(void) { return 42; }\n")?;
    for c in ["main.c", "add.c", "mul.c", "unused.c"] {
        w.compile(c, &[])?;
    }
    w.ok(w.cmd(LLVM_AR).args(["rc", "libm2.a", "add.o", "mul.o", "unused.o"])).map(drop)
}

fn program_vs_lld(w: &Work) -> Result<(), String> {
    build_program(w)?;
    // No build-id: lld orders .note.gnu.build-id after the inputs' notes, a layout difference
    // that is not the map's business.
    let common = ["-Wl,--build-id=none", "main.o", "libm2.a"];
    w.ok(w.link("dtld", &common).args(["-Wl,-Map=dtld.map", "-o", "prog.dtld"]))?;
    w.ok(w.link("lld", &common).args(["-Wl,-Map=lld.map", "-o", "prog.lld"]))?;
    let out = w.ok(&mut w.cmd(w.path("prog.dtld")))?;
    if String::from_utf8_lossy(&out.stdout) != "hello 17\n" {
        return Err(format!("prog.dtld printed {:?}", String::from_utf8_lossy(&out.stdout)));
    }
    let dmap = parse_map(&w.read_string("dtld.map")?)?;
    let lmap = parse_map(&w.read_string("lld.map")?)?;
    compare_with_lld(w, &dmap, &lmap)?;
    check_against_binary(&dmap, &w.path("prog.dtld"))?;
    expect_home(&dmap, "main", ".text", "main.o:(.text)")?;
    expect_home(&dmap, "square", ".text", "main.o:(.text)")?;
    expect_home(&dmap, "twice", ".text", "main.o:(.text)")?;
    expect_home(&dmap, "lib_add", ".text", "libm2.a(add.o):(.text)")?;
    expect_home(&dmap, "lib_mul", ".text", "libm2.a(mul.o):(.text)")?;
    expect_home(&dmap, "counter", ".data", "main.o:(.data)")?;
    expect_home(&dmap, "table", ".bss", "main.o:(.bss)")?;
    expect_home(&dmap, "add_local", ".bss", "libm2.a(add.o):(.bss)")?;
    if dmap.iter().any(|o| o.inputs.iter().any(|i| i.label.contains("unused.o"))) || home_of(&dmap, "never_used").is_some() {
        return Err("an archive member that was not extracted is in the map".into());
    }
    Ok(())
}

const DATA_C: &str = r#"#include <stdio.h>
extern char **environ;
int common_var;
__thread int tls_data = 3;
__thread int tls_bss;
static const char *names[] = { "alpha", "beta", "alpha" };
int main(void) {
    printf("%s %s %d %d %d\n", names[0], names[1], common_var, tls_data + tls_bss, environ != 0);
    fputs("done\n", stdout);
    return 0;
}
"#;

/// Commons, TLS, merged strings and (non-PIE) copy relocations.
fn data_vs_lld(w: &Work) -> Result<(), String> {
    w.write("data.c", DATA_C)?;
    w.compile("data.c", &["-fcommon", "-fno-pic"])?;
    let common = ["-no-pie", "-Wl,--build-id=none", "data.o"];
    w.ok(w.link("dtld", &common).args(["-Wl,-Map=dtld.map", "-o", "prog.dtld"]))?;
    w.ok(w.link("lld", &common).args(["-Wl,-Map=lld.map", "-o", "prog.lld"]))?;
    let dmap = parse_map(&w.read_string("dtld.map")?)?;
    let lmap = parse_map(&w.read_string("lld.map")?)?;
    let bss = |m: &[OutSec]| -> Vec<String> { m.iter().filter(|o| o.name == ".bss").flat_map(|o| o.inputs.iter().map(|i| i.label.clone())).collect() };
    // dtld places commons after the .bss input sections (lld: first), so only this output
    // section's order is left to the layout: compare its lines as a set.
    let (mut db, mut lb) = (bss(&dmap), bss(&lmap));
    db.sort();
    lb.sort();
    if db != lb {
        return Err(format!(".bss input sections differ:\n  dtld: {db:?}\n  lld:  {lb:?}"));
    }
    compare_with_lld(w, &dmap, &lmap)?;
    check_against_binary(&dmap, &w.path("prog.dtld"))?;
    expect_home(&dmap, "common_var", ".bss", "data.o:(COMMON)")?;
    expect_home(&dmap, "environ", ".bss", "<internal>:(.bss)")?;
    expect_home(&dmap, "tls_data", ".tdata", "data.o:(.tdata)")?;
    expect_home(&dmap, "tls_bss", ".tbss", "data.o:(.tbss)")?;
    // TLS symbols show their offset in the TLS segment, as their .symtab value.
    let (_, _, t) = home_of(&dmap, "tls_data").ok_or("no tls_data")?;
    let (_, _, b) = home_of(&dmap, "tls_bss").ok_or("no tls_bss")?;
    if t.vma != 0 || b.vma != 4 {
        return Err(format!("TLS symbol addresses {:#x}, {:#x}: expected offsets 0 and 4", t.vma, b.vma));
    }
    if !dmap.iter().any(|o| o.name == ".rodata" && o.inputs.iter().any(|i| i.label.starts_with("<internal>:(.rodata.str1"))) {
        return Err("merged strings are not listed as <internal>:(.rodata.str1.1)".into());
    }
    Ok(())
}

fn print_map_stdout(w: &Work) -> Result<(), String> {
    build_program(w)?;
    let common = ["main.o", "libm2.a", "-o", "prog"];
    w.ok(w.link("dtld", &common).arg("-Wl,-Map=file.map"))?;
    let printed = w.ok(w.link("dtld", &common).arg("-Wl,-M"))?;
    let printed = String::from_utf8_lossy(&printed.stdout).into_owned();
    let file = w.read_string("file.map")?;
    if printed != file {
        return Err(format!("-M printed something else than -Map= wrote:\n--- -M\n{printed}\n--- -Map\n{file}"));
    }
    let also = w.ok(w.link("dtld", &common).arg("-Wl,--print-map"))?;
    if String::from_utf8_lossy(&also.stdout) != file {
        return Err("--print-map printed something else than -Map= wrote".into());
    }
    parse_map(&file).map(drop)
}

fn unwritable(w: &Work) -> Result<(), String> {
    w.write("start.c", "void _start(void) { for (;;) {} }\n")?;
    w.compile("start.c", &[])?;
    let bad = w.path("no-such-dir/out.map");
    let mut msgs = Vec::new();
    for (linker, out) in [(w.dtld.as_os_str().to_owned(), "out.dtld"), (LLD.into(), "out.lld")] {
        let o = w.run(w.cmd(&linker).args(["start.o", "-o", out]).arg(format!("-Map={}", bad.display())))?;
        if o.status.and_then(|s| s.code()) != Some(1) {
            return Err(format!("{}: expected exit 1, got {}", linker.to_string_lossy(), o.status_text()));
        }
        if w.path(out).exists() {
            return Err(format!("{} left an output file after failing", linker.to_string_lossy()));
        }
        msgs.push(o.stderr_text());
    }
    let expected = format!("dtld: error: cannot open map file {}: No such file or directory\n", bad.display());
    if msgs[0] != expected {
        return Err(format!("dtld said {:?}, expected {expected:?}", msgs[0]));
    }
    let tail = expected.trim_start_matches("dtld: ");
    if !msgs[1].ends_with(tail) {
        return Err(format!("lld's wording changed: {:?} (dtld: {expected:?})", msgs[1]));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// --time-trace
// ------------------------------------------------------------------------------------------------

/// The complete ("X") events of a Chrome trace: (name, start µs, duration µs).
fn trace_events(text: &str, who: &str) -> Result<Vec<(String, u64, u64)>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("{who}'s trace is not JSON: {e}"))?;
    let events = v["traceEvents"].as_array().ok_or_else(|| format!("{who}'s trace has no traceEvents array"))?;
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (Some(name), Some(ts), Some(dur)) = (e["name"].as_str(), e["ts"].as_u64(), e["dur"].as_u64()) else {
            return Err(format!("{who}'s trace has an X event without name, ts or dur: {e}"));
        };
        out.push((name.to_string(), ts, dur));
    }
    if out.is_empty() {
        return Err(format!("{who}'s trace has no complete events"));
    }
    Ok(out)
}

fn time_trace_vs_lld(w: &Work) -> Result<(), String> {
    w.write(
        "main.c",
        "#include <stdio.h>\nstatic const char *unused(void) { return \"never linked\"; }\nint twice(int x) { return 2 * x; }\nint main(void) {\n  printf(\"%d %s\\n\", twice(21), \"kept\");\n  return 0;\n}\n",
    )?;
    w.compile("main.c", &["-g", "-ffunction-sections", "-fdata-sections"])?;
    let mut runs = Vec::new();
    for linker in ["dtld", "lld"] {
        let prog = format!("prog.{linker}");
        let trace = format!("{prog}.json");
        // Every event, however short: the program is small (lld's default keeps those of 500 µs
        // and more).
        w.ok(&mut w.link(linker, &["main.o", "-Wl,--gc-sections", &format!("-Wl,--time-trace={trace}"), "-Wl,--time-trace-granularity=0", "-o", &prog]))?;
        let ran = w.ok(&mut w.cmd(w.path(&prog)))?;
        runs.push(String::from_utf8_lossy(&ran.stdout).into_owned());
        trace_events(&w.read_string(&trace)?, linker)?;
    }
    if runs[0] != runs[1] {
        return Err(format!("the programs differ: dtld's printed {:?}, lld's {:?}", runs[0], runs[1]));
    }
    let events = trace_events(&w.read_string("prog.dtld.json")?, "dtld")?;
    let find = |name: &str| events.iter().find(|e| e.0 == name).cloned().ok_or_else(|| format!("dtld's trace has no {name:?} event: {events:?}"));
    let total = find("Total Link")?;
    let inside = |inner: &(String, u64, u64), outer: &(String, u64, u64)| inner.1 >= outer.1 && inner.1 + inner.2 <= outer.1 + outer.2;
    for e in &events {
        if !inside(e, &total) {
            return Err(format!("{e:?} lies outside Total Link {total:?}"));
        }
    }
    for (stage, parts) in [
        ("Layout", &["Mark live sections", "Assign sections", "Merge sections", "Scan relocations", "Assign addresses"][..]),
        ("Resolve symbols", &["Parse input files", "Bind symbols"][..]),
        ("Write output file", &["Place sections", "Write sections and symbol table", "Commit output file"][..]),
    ] {
        let outer = find(stage)?;
        let mut end = outer.1;
        for part in parts {
            let p = find(part)?;
            if !inside(&p, &outer) {
                return Err(format!("{part} {p:?} lies outside {stage} {outer:?}"));
            }
            if p.1 < end {
                return Err(format!("{part} {p:?} starts before the part listed before it ends ({end})"));
            }
            end = p.1 + p.2;
        }
    }
    // At the default granularity no event but the totals is shorter than 500 µs (LLVM's
    // `Total <name>` events sum every event of a name, however short, as lld's do).
    w.ok(&mut w.link("dtld", &["main.o", "-Wl,--gc-sections", "-Wl,--time-trace=default.json", "-o", "prog.default"]))?;
    let short: Vec<_> = trace_events(&w.read_string("default.json")?, "dtld")?.into_iter().filter(|e| !e.0.starts_with("Total ") && e.2 < 500).collect();
    if !short.is_empty() {
        return Err(format!("--time-trace wrote events shorter than the default granularity (500 µs): {short:?}"));
    }
    let verbose = w.ok(&mut w.link("dtld", &["main.o", "-Wl,--gc-sections", "-Wl,--verbose", "-o", "prog.verbose"]))?;
    let line = verbose.stderr_text().lines().find(|l| l.starts_with("dtld: time: ")).map(str::to_string).ok_or("--verbose printed no `dtld: time:` line")?;
    if !line.contains("Layout ") || line.contains("Mark live sections") {
        return Err(format!("--verbose should list the stages, not their parts: {line}"));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// COFF: lld's map format (`/lldmap`, MinGW `-Map`), compared byte for byte.
// ------------------------------------------------------------------------------------------------

const COFF_MAIN_C: &str = r#"#include <stdio.h>
int lib_add(int, int);
int common_counter;
static int local_table[4] = { 1, 2, 3, 4 };
static int square(int x) { return x * x; }
int main(void) {
    common_counter = lib_add(square(3), local_table[2]);
    printf("coff %d\n", common_counter);
    return 0;
}
"#;

fn coff_mingw_vs_lld(w: &Work) -> Result<(), String> {
    let target = "--target=x86_64-w64-mingw32";
    w.write("main.c", COFF_MAIN_C)?;
    w.write("add.c", "int lib_add(int a, int b) { return a + b; }\nint common_counter;\n")?;
    w.write("unused.c", "int never_used(void) { return 42; }\n")?;
    for c in ["main.c", "add.c", "unused.c"] {
        w.compile(c, &[target, "-fcommon"])?;
    }
    w.ok(w.cmd(LLVM_AR).args(["rcs", "libcoff.a", "add.o", "unused.o"]))?;
    let common = [target, "-Wl,--no-insert-timestamp", "main.o", "libcoff.a"];
    w.ok(w.link("dtld", &common).args(["-Wl,-Map,dtld.map", "-o", "prog-dtld.exe"]))?;
    w.ok(w.link("lld", &common).args(["-Wl,-Map,lld.map", "-o", "prog-lld.exe"]))?;
    same_map(w, "dtld.map", "lld.map", &["main.o:(.text)", "add.o:(.text)", "main"])
}

fn coff_lld_link_vs_lld(w: &Work) -> Result<(), String> {
    let asm = ".globl main\nmain:\n  call helper\n  movl data_word(%rip), %eax\n  ret\n.data\n.globl data_word\ndata_word:\n  .long 7\n";
    let helper = ".text\n.globl helper\nhelper:\n  ret\nlocal_label:\n  nop\n";
    w.write("main.s", asm)?;
    w.write("helper.s", helper)?;
    for s in ["main.s", "helper.s"] {
        w.ok(w.cmd("llvm-mc-22").args(["-filetype=obj", "-triple=x86_64-windows-msvc", s, "-o"]).arg(s.replace(".s", ".obj")))?;
    }
    // dtld runs as lld-link through a symlink with that name.
    let link = w.path("lld-link");
    std::os::unix::fs::symlink(&w.dtld, &link).map_err(|e| format!("symlink: {e}"))?;
    let args = ["/entry:main", "/subsystem:console", "/timestamp:0", "main.obj", "helper.obj"];
    w.ok(w.cmd(&link).args(args).args(["/out:dtld.exe", "/lldmap:dtld.map"]))?;
    w.ok(w.cmd("lld-link-22").args(args).args(["/out:lld.exe", "/lldmap:lld.map"]))?;
    same_map(w, "dtld.map", "lld.map", &["main.obj:(.text)", "helper.obj:(.text)", "data_word"])
}

/// Both maps byte-identical, and naming what they must.
fn same_map(w: &Work, ours: &str, theirs: &str, must: &[&str]) -> Result<(), String> {
    let (d, l) = (w.read_string(ours)?, w.read_string(theirs)?);
    if d != l {
        let line = d.lines().zip(l.lines()).position(|(a, b)| a != b).unwrap_or(d.lines().count().min(l.lines().count()));
        return Err(format!("COFF map differs from lld's at line {}:\n  dtld: {:?}\n  lld:  {:?}", line + 1, d.lines().nth(line), l.lines().nth(line)));
    }
    if !d.starts_with("Address  Size     Align Out     In      Symbol\n") {
        return Err("the COFF map does not start with lld's header".into());
    }
    for m in must {
        if !d.contains(m) {
            return Err(format!("the COFF map does not mention {m}"));
        }
    }
    Ok(())
}

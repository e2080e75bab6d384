//! Why this exists: profile-guided code ordering must put every function where ld.lld-22 puts
//! it. A PGO build's objects carry `.llvm.call-graph-profile` sections, and lld orders the code
//! they connect with Cache-Directed Sort (its default) or C³ (`hfsort`); both are deterministic
//! functions of the graph, so the same inputs must give the same order to the byte. The
//! differential fixtures cannot train a profile, so this target builds one:
//!
//! * a generated C program (about 120 functions over four files, two of them in an archive
//!   whose member order is not the extraction order, a fifth of the functions static, call
//!   frequencies skewed over four orders of magnitude, sizes from a few to a few hundred bytes)
//!   is compiled with `-fprofile-instr-generate`, run, its profile merged with
//!   `llvm-profdata-22`, and recompiled with `-fprofile-instr-use`;
//! * linked by dtld and by ld.lld-22 under `--call-graph-profile-sort=cdsort` (the default),
//!   `hfsort` and `none`, the functions of `.text` (read with goblin, sorted by address) must be
//!   in the same order, the programs must print the same, hfsort's `--print-symbol-order=` files
//!   must be identical and cdsort must write none (as lld); cdsort's order must differ from
//!   both the unordered layout and hfsort's, or the trial would test nothing;
//! * `--call-graph-ordering-file=` (names of static functions, comments, hex and octal
//!   weights, zero weights, self calls, unknown and shared-library names), with and without
//!   `--gc-sections`: the same order and the same warnings as lld;
//! * 60 small random graphs full of ties (few distinct sizes and weights, repeated pairs,
//!   calls both ways) over functions of exact sizes, given as ordering files to `ld.lld-22` and
//!   `dtld` directly: the same order under cdsort and hfsort. Ties are where a reimplementation
//!   goes wrong (which orientation, which pair first); a PGO program rarely has them.
//!
//! `coff.rs` does the same for lld-link (C³ over the objects' profiles or an ordering file).
//!
//! Trials work in `<target>/cgprofile-tests/<trial>/`, deleted when they pass (kept on failure,
//! or always with `DTLD_HARNESS_KEEP=1`). `DTLD` names the linker under test (default
//! `<target>/release/dtld`).

mod coff;

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{check_tools, find_dtld, target_dir, CLANG, LLD, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

const PROFDATA: &str = "llvm-profdata-22";

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        trial("cgprofile/pgo-program-vs-lld", pgo_program),
        trial("cgprofile/ordering-file-vs-lld", ordering_file),
        trial("cgprofile/small-graphs-vs-lld", small_graphs),
        trial("cgprofile/symbol-ordering-file-vs-lld", symbol_ordering_file),
        trial("cgprofile/coff-pgo-and-file-vs-lld-link", coff::pgo_and_file),
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
    check_tools(&[CLANG, LLD, LLVM_AR, PROFDATA, "lld-link-22"])?;
    let dtld = find_dtld()?;
    let dir = target_dir().join("cgprofile-tests").join(name.replace('/', "-"));
    run_in(&dir, keep_requested(), &[], |t| f(&Work { dtld, t }))
}

impl Work<'_> {
    /// Compiles the program's sources with `flags` into objects, and the archive.
    fn build(&self, p: &Program, flags: &[&str]) -> Result<(), String> {
        for (file, _) in &p.files {
            let obj = file.replace(".c", ".o");
            self.ok(self.cmd(CLANG).args(["-c", "-O2", "-ffunction-sections", "-fPIE"]).args(flags).arg(file).arg("-o").arg(obj))?;
        }
        let _ = fs::remove_file(self.path("libcg.a"));
        // Members in the reverse of the order they are extracted in.
        self.ok(self.cmd(LLVM_AR).args(["rcs", "libcg.a", "t3.o", "t2.o"])).map(drop)
    }

    /// A clang link of the program with the linker under test (`dtld`) or ld.lld-22 (`lld`).
    fn link(&self, linker: &str, out: &str, args: &[&str]) -> Command {
        let mut c = self.cmd(CLANG);
        if linker == "dtld" {
            c.arg(format!("--ld-path={}", self.dtld.display()));
        } else {
            c.arg("-fuse-ld=lld");
        }
        c.args(["-pie", "t0.o", "t1.o", "libcg.a", "-o", out]).args(args);
        c
    }

    /// The names of the functions in `.text` of a linked program, by address.
    fn text_order(&self, prog: &str) -> Result<Vec<String>, String> {
        let data = fs::read(self.path(prog)).map_err(|e| format!("read {prog}: {e}"))?;
        let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("{prog}: {e}"))?;
        let text = elf.section_headers.iter().position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text")).ok_or_else(|| format!("{prog}: no .text"))?;
        let mut funcs: Vec<(u64, String)> = elf
            .syms
            .iter()
            .filter(|s| s.st_type() == goblin::elf::sym::STT_FUNC && s.st_shndx == text)
            .map(|s| (s.st_value, elf.strtab.get_at(s.st_name).unwrap_or("").to_string()))
            .collect();
        funcs.sort();
        Ok(funcs.into_iter().map(|(_, n)| n).collect())
    }

    fn run_prog(&self, prog: &str) -> Result<String, String> {
        let out = self.ok(self.cmd(self.path(prog)).arg("3000"))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// Where two function orders first differ, for the failure message.
fn order_diff(lld: &[String], dtld: &[String]) -> String {
    let i = lld.iter().zip(dtld).position(|(a, b)| a != b).unwrap_or(lld.len().min(dtld.len()));
    let same = lld.iter().zip(dtld).filter(|(a, b)| a == b).count();
    let window = |v: &[String]| v[i.saturating_sub(2)..(i + 6).min(v.len())].join(" ");
    format!("{same} of {} functions at lld's rank; first difference at rank {i}:\n  lld:  {}\n  dtld: {}", lld.len(), window(lld), window(dtld))
}

// ------------------------------------------------------------------------------------------------
// The generated program.
// ------------------------------------------------------------------------------------------------

/// A small deterministic pseudo-random generator (xorshift64*), so the program is the same on
/// every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T: ?Sized>(&mut self, items: &'a [&'a T]) -> &'a T {
        items[self.below(items.len() as u64) as usize]
    }

    fn pick_n(&mut self, items: &[usize]) -> usize {
        items[self.below(items.len() as u64) as usize]
    }
}

struct Program {
    /// (file name, source).
    files: Vec<(String, String)>,
    /// Function names with the file defining them; static ones are local to it.
    funcs: Vec<(String, usize, bool)>,
}

/// `n` functions `f0..` over files t0.c (with `main`, which calls f0..f7 with frequencies from
/// every iteration to one in 200) .. t3.c. A function calls a few later
/// ones (so the graph is acyclic), each call taken with a probability between 1 and 1/1024 of
/// the caller's runs; a global budget bounds the calls per iteration of `main`'s loop.
fn program(seed: u64, n: usize) -> Program {
    const FILES: usize = 4;
    let mut rng = Rng(seed);
    let file_of: Vec<usize> = (0..n).map(|i| if i == 0 { 0 } else { rng.below(FILES as u64) as usize }).collect();
    // `main` calls the first eight functions, which must be global.
    let is_static: Vec<bool> = (0..n).map(|i| i >= 8 && rng.below(5) == 0).collect();
    let mut bodies: Vec<Vec<String>> = vec![Vec::new(); FILES];
    for i in 0..n {
        let mut body = String::new();
        for _ in 0..rng.pick_n(&[1, 2, 3, 6, 12, 30]) {
            body += &format!("  x = x * {}u + {}u; x ^= x >> {};\n", rng.below(500) * 2 + 3, rng.below(1000), rng.below(12) + 1);
        }
        let mut kids: Vec<usize> = (i + 1..n).filter(|&j| !is_static[j] || file_of[j] == file_of[i]).collect();
        for k in (1..kids.len()).rev() {
            kids.swap(k, rng.below(k as u64 + 1) as usize);
        }
        for &j in kids.iter().take(rng.pick_n(&[0, 1, 2, 2, 3, 4])) {
            let mask = rng.pick_n(&[0, 0, 1, 3, 7, 15, 63, 255, 1023]);
            body += &format!("  if ((x & {mask}u) == 0 && cg_budget) {{ cg_budget--; x += f{j}(x + {j}u); }}\n");
        }
        let st = if is_static[i] { "static " } else { "" };
        bodies[file_of[i]].push(format!("{st}__attribute__((noinline)) unsigned f{i}(unsigned x) {{\n{body}  return x;\n}}\n"));
    }
    let mut files = Vec::new();
    for (k, defs) in bodies.iter().enumerate() {
        let mut src = String::from("#include <stdio.h>\n#include <stdlib.h>\nextern unsigned cg_budget;\n");
        for i in 0..n {
            if !is_static[i] || file_of[i] == k {
                src += &format!("{}unsigned f{i}(unsigned x);\n", if is_static[i] { "static " } else { "" });
            }
        }
        src += &defs.concat();
        if k == 0 {
            src += "unsigned cg_budget;\nint main(int argc, char **argv) {\n  unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000, s = 0;\n  for (unsigned i = 0; i < n; i++) { cg_budget = 40; s += f0(i * 2654435761u); if (i % 3 == 0) s += f1(s); if (i % 16 == 0) s += f2(s) + f3(i) + f4(s ^ i); if (i % 200 == 0) s += f5(i) + f6(s) + f7(i); }\n  printf(\"%u\\n\", s);\n  return 0;\n}\n";
        }
        files.push((format!("t{k}.c"), src));
    }
    let funcs = (0..n).map(|i| (format!("f{i}"), file_of[i], is_static[i])).collect();
    Program { files, funcs }
}

fn write_program(w: &Work, p: &Program) -> Result<(), String> {
    for (name, src) in &p.files {
        w.write(name, src)?;
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Trials.
// ------------------------------------------------------------------------------------------------

fn pgo_program(w: &Work) -> Result<(), String> {
    let p = program(0x5eed_c0de, 120);
    write_program(w, &p)?;
    // Train.
    w.build(&p, &["-fprofile-instr-generate"])?;
    w.ok(&mut w.link("lld", "gen", &["-fprofile-instr-generate"]))?;
    w.ok(w.cmd(w.path("gen")).arg("20000").env("LLVM_PROFILE_FILE", w.path("cg.profraw")))?;
    w.ok(w.cmd(PROFDATA).args(["merge", "-o", "cg.profdata", "cg.profraw"]))?;
    // Rebuild with the profile: the objects must carry call graph profiles.
    w.build(&p, &["-fprofile-instr-use=cg.profdata", "-Wno-profile-instr-out-of-date"])?;
    let mut with_profile = 0;
    for (file, _) in &p.files {
        let obj = file.replace(".c", ".o");
        let data = fs::read(w.path(&obj)).map_err(|e| format!("read {obj}: {e}"))?;
        let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("{obj}: {e}"))?;
        if elf.section_headers.iter().any(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".llvm.call-graph-profile") && s.sh_size > 0) {
            with_profile += 1;
        }
    }
    if with_profile < 3 {
        return Err(format!("only {with_profile} of 4 objects have a .llvm.call-graph-profile section: the PGO build did not work"));
    }

    let mut orders = Vec::new();
    for (alg, flag) in [("cdsort", None), ("hfsort", Some("-Wl,--call-graph-profile-sort=hfsort")), ("none", Some("-Wl,--no-call-graph-profile-sort"))] {
        let mut order = Vec::new();
        let mut output = Vec::new();
        for linker in ["lld", "dtld"] {
            let out = format!("{linker}-{alg}");
            let sym = format!("-Wl,--print-symbol-order={out}.sym");
            let mut args: Vec<&str> = flag.into_iter().collect();
            args.push(&sym);
            let _ = fs::remove_file(w.path(&format!("{out}.sym")));
            w.ok(&mut w.link(linker, &out, &args))?;
            order.push(w.text_order(&out)?);
            output.push(w.run_prog(&out)?);
        }
        if order[0] != order[1] {
            return Err(format!("{alg}: dtld's function order differs from ld.lld-22's: {}", order_diff(&order[0], &order[1])));
        }
        if output[0] != output[1] {
            return Err(format!("{alg}: the programs print differently: lld {:?}, dtld {:?}", output[0], output[1]));
        }
        let syms: Vec<Option<Vec<u8>>> = ["lld", "dtld"].iter().map(|l| fs::read(w.path(&format!("{l}-{alg}.sym"))).ok()).collect();
        match alg {
            "hfsort" => match (&syms[0], &syms[1]) {
                (Some(a), Some(b)) if a == b && !a.is_empty() => {}
                (Some(_), Some(_)) => return Err("hfsort: the --print-symbol-order= files differ (or are empty)".into()),
                _ => return Err(format!("hfsort: --print-symbol-order= written by lld: {}, by dtld: {}", syms[0].is_some(), syms[1].is_some())),
            },
            "cdsort" if syms.iter().any(Option::is_some) => {
                return Err(format!(
                    "cdsort: --print-symbol-order= written by lld: {}, by dtld: {} (lld's cdsort writes none)",
                    syms[0].is_some(),
                    syms[1].is_some()
                ))
            }
            _ => {}
        }
        orders.push(order.swap_remove(0));
    }
    let ours = |o: &[String]| o.iter().filter(|n| n.starts_with('f') && n[1..].parse::<u32>().is_ok()).count();
    if ours(&orders[0]) < p.funcs.len() * 3 / 4 {
        return Err(format!("only {} of the {} generated functions are in .text", ours(&orders[0]), p.funcs.len()));
    }
    if orders[0] == orders[2] || orders[0] == orders[1] {
        return Err("cdsort's order equals the unordered (or hfsort's) layout: the profile orders nothing, the trial tests nothing".into());
    }
    Ok(())
}

fn ordering_file(w: &Work) -> Result<(), String> {
    let p = program(0x0bad_cafe, 80);
    write_program(w, &p)?;
    w.build(&p, &[])?;
    // A call graph over the functions (statics included), main, names that are not there
    // (`nosuch`), a shared library's (`printf`), an absolute one (`t0.c`, the STT_FILE symbol),
    // with lld's syntax corners.
    let mut rng = Rng(0x0c0f_fee5);
    let mut names: Vec<&str> = p.funcs.iter().map(|(n, _, _)| n.as_str()).collect();
    names.extend(["main", "printf", "nosuch", "t0.c"]);
    let mut text = String::from("# from to weight\n\n");
    for k in 0..300 {
        let (a, b) = (rng.pick(&names), rng.pick(&names));
        let b = if k % 41 == 0 { a } else { b };
        let weight = rng.pick(&["0", "1", "1", "2", "5", "10", "10", "100", "1000", "50000", "0x20", "017"]);
        text += &format!("{a} {b} {weight}\n");
        if k % 97 == 0 {
            text += "   \n";
        }
    }
    w.write("cg.txt", &text)?;
    for alg in ["cdsort", "hfsort"] {
        for gc in [None, Some("-Wl,--gc-sections")] {
            let what = format!("{alg}{}", gc.map_or(String::new(), |g| format!(" {g}")));
            let mut order = Vec::new();
            let mut warnings = Vec::new();
            for linker in ["lld", "dtld"] {
                let out = format!("{linker}-{alg}");
                let sort = format!("-Wl,--call-graph-ordering-file=cg.txt,--call-graph-profile-sort={alg}");
                let args: Vec<&str> = [sort.as_str()].into_iter().chain(gc).collect();
                let res = w.ok(&mut w.link(linker, &out, &args))?;
                order.push(w.text_order(&out)?);
                let mut lines: Vec<String> = res.stderr_text().lines().filter_map(|l| l.split_once("warning: ").map(|(_, m)| m.to_string())).collect();
                lines.sort();
                warnings.push(lines);
            }
            if order[0] != order[1] {
                return Err(format!("{what}: dtld's function order differs from ld.lld-22's: {}", order_diff(&order[0], &order[1])));
            }
            if warnings[0] != warnings[1] {
                let only = |a: &[String], b: &[String]| a.iter().filter(|l| !b.contains(l)).take(5).cloned().collect::<Vec<_>>().join("\n    ");
                return Err(format!(
                    "{what}: warnings differ ({} from lld, {} from dtld)\n  only lld:\n    {}\n  only dtld:\n    {}",
                    warnings[0].len(),
                    warnings[1].len(),
                    only(&warnings[0], &warnings[1]),
                    only(&warnings[1], &warnings[0])
                ));
            }
            for needle in ["no such symbol: nosuch", "unable to order shared symbol: printf"] {
                if !warnings[0].iter().any(|l| l.contains(needle)) {
                    return Err(format!("{what}: lld gave no '{needle}' warning: the ordering file no longer tests it"));
                }
            }
        }
    }
    // A malformed line: both refuse the file with lld's message.
    w.write("bad.txt", "f1 f2 10\nf1 f2\n")?;
    let mut msgs = Vec::new();
    for linker in ["lld", "dtld"] {
        let mut c = w.link(linker, &format!("{linker}-bad"), &["-Wl,--call-graph-ordering-file=bad.txt"]);
        let res = w.run(&mut c)?;
        if res.success() {
            return Err(format!("{linker} accepted a malformed --call-graph-ordering-file"));
        }
        msgs.push(res.stderr_text().lines().find_map(|l| l.split_once("error: ").map(|(_, m)| m.to_string())).unwrap_or_default());
    }
    if msgs[0] != msgs[1] || !msgs[0].contains("bad.txt: parse error") {
        return Err(format!("malformed ordering file: lld says {:?}, dtld says {:?}", msgs[0], msgs[1]));
    }
    Ok(())
}

/// `--symbol-ordering-file=`: a shuffled list of the program's functions (statics included),
/// with a repeated name, a missing one, a shared library's and an absolute one, comments and
/// blank lines, with and without `--gc-sections` and `--no-warn-symbol-ordering`: the same
/// function order and the same warnings as lld.
fn symbol_ordering_file(w: &Work) -> Result<(), String> {
    let p = program(0x5eed_0123, 60);
    write_program(w, &p)?;
    w.build(&p, &[])?;
    let mut rng = Rng(0x0dd_0de5);
    let mut names: Vec<&str> = p.funcs.iter().map(|(n, _, _)| n.as_str()).collect();
    for i in (1..names.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        names.swap(i, j);
    }
    let mut text = String::from("# hot first\n");
    for (k, n) in names.iter().take(40).enumerate() {
        text += &format!("{}{n}{}\n", if k % 7 == 0 { "  " } else { "" }, if k % 5 == 0 { " " } else { "" });
        if k == 10 {
            text += "\nnosuch\nprintf\nt0.c\nmain\n";
        }
    }
    text += &format!("{}\n", names[3]);
    w.write("order.txt", &text)?;
    for extra in [None, Some("-Wl,--gc-sections"), Some("-Wl,--no-warn-symbol-ordering")] {
        let what = extra.unwrap_or("default");
        let mut order = Vec::new();
        let mut warnings = Vec::new();
        for linker in ["lld", "dtld"] {
            let out = format!("{linker}-order");
            let args: Vec<&str> = ["-Wl,--symbol-ordering-file=order.txt"].into_iter().chain(extra).collect();
            let res = w.ok(&mut w.link(linker, &out, &args))?;
            order.push(w.text_order(&out)?);
            let mut lines: Vec<String> = res.stderr_text().lines().filter_map(|l| l.split_once("warning: ").map(|(_, m)| m.to_string())).collect();
            lines.sort();
            // ld.lld-22 prints its warning for a shared library's symbol twice; the set of
            // warnings is what is compared.
            lines.dedup();
            warnings.push(lines);
        }
        if order[0] != order[1] {
            return Err(format!("{what}: dtld's function order differs from ld.lld-22's: {}", order_diff(&order[0], &order[1])));
        }
        if warnings[0] != warnings[1] {
            return Err(format!("{what}: warnings differ\n  lld:  {:?}\n  dtld: {:?}", warnings[0], warnings[1]));
        }
        let expect: &[&str] = if extra == Some("-Wl,--no-warn-symbol-ordering") {
            &[]
        } else {
            &["no such symbol: nosuch", "order.txt: duplicate ordered symbol:", "unable to order shared symbol: printf"]
        };
        for needle in expect {
            if !warnings[0].iter().any(|l| l.contains(needle)) {
                return Err(format!("{what}: lld gave no '{needle}' warning: the ordering file no longer tests it"));
            }
        }
        if order[0].iter().take(5).map(String::as_str).ne(names.iter().copied().filter(|n| order[0].iter().any(|o| o == n)).take(5)) {
            return Err(format!("{what}: lld's order does not start with the listed functions: the trial tests nothing"));
        }
    }
    Ok(())
}

fn small_graphs(w: &Work) -> Result<(), String> {
    // Functions of exact sizes from a small set (equal sizes make equal gains).
    let mut rng = Rng(0x71e5_7a11);
    let n = 40;
    let mut asm = String::new();
    for i in 0..n {
        let size = rng.pick_n(&[16, 16, 32, 64, 100, 100, 300]);
        asm += &format!(".section .text.f{i},\"ax\",@progbits\n.globl f{i}\n.type f{i},@function\nf{i}:\n.fill {size},1,0x90\n.size f{i},{size}\n");
    }
    asm += ".text\n.globl _start\n_start: ret\n";
    w.write("funcs.s", &asm)?;
    w.ok(w.cmd(CLANG).args(["-c", "funcs.s", "-o", "funcs.o"]))?;
    let mut reordered = 0;
    for g in 0..60 {
        let m = rng.pick_n(&[3, 6, 10, 20, 40]);
        let mut text = String::new();
        for _ in 0..2 + rng.below(59) {
            let (a, b) = (rng.below(m as u64), rng.below(m as u64));
            text += &format!("f{a} f{b} {}\n", rng.pick_n(&[0, 1, 1, 2, 10, 10, 100, 1000]));
        }
        let file = format!("g{g}.txt");
        w.write(&file, &text)?;
        for alg in ["cdsort", "hfsort"] {
            let mut order = Vec::new();
            for linker in [LLD.to_string(), w.dtld.display().to_string()] {
                let args = [format!("--call-graph-ordering-file={file}"), format!("--call-graph-profile-sort={alg}")];
                w.ok(w.cmd(&linker).arg("funcs.o").args(&args).args(["-o", "g.out"]))?;
                order.push(w.text_order("g.out")?);
            }
            if order[0] != order[1] {
                return Err(format!("{alg}, graph {file}: dtld's function order differs from ld.lld-22's: {}", order_diff(&order[0], &order[1])));
            }
            if order[0].len() != n {
                return Err(format!("{alg}, graph {file}: {} functions in .text, expected {n}", order[0].len()));
            }
            if order[0].iter().zip(0..n).any(|(name, i)| *name != format!("f{i}")) {
                reordered += 1;
            }
        }
        let _ = fs::remove_file(w.path(&file));
    }
    // Nearly every graph reorders something; if none did, the trial compared input orders.
    if reordered < 100 {
        return Err(format!("only {reordered} of 120 links reordered the functions: the ordering files order nothing"));
    }
    Ok(())
}

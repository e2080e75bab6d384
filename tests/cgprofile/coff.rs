//! lld-link's call-graph ordering (`.llvm.call-graph-profile` sections, on by default, and
//! `/call-graph-ordering-file:`) against lld-link-22.
//!
//! Why this exists: lld-link orders the COMDAT sections of a PGO build's call graph with C³
//! whenever the objects carry a profile, so dtld must place every function where lld-link
//! does. The generated program of `main.rs` is trained as an ELF program (the profile's
//! function hashes do not depend on the target), recompiled for x86_64-pc-windows-msvc with
//! `-fprofile-instr-use` and `-ffunction-sections` (every function a COMDAT), and linked by both
//! linkers: by default, with `/call-graph-profile-sort:no`, with an ordering file (statics,
//! unknown names, comments, hex and octal weights, self calls) with and without `/opt:noref`,
//! and with `/ignore:4037`. The lld maps (`/lldmap`, which dtld writes byte for byte as lld
//! does), the warnings and the `/print-symbol-order:` files must be the same (no file when
//! nothing is ordered); the default order must differ from the unordered one, or the trial
//! would test nothing.

use std::fs;
use std::path::PathBuf;

use super::{program, Rng, Work, PROFDATA};

const LLD_LINK: &str = "lld-link-22";

/// The program's sources with the C library declared rather than included (there are no
/// Windows headers here); the functions, and so the profile, are the same.
fn sources(p: &super::Program) -> Vec<(String, String)> {
    p.files
        .iter()
        .map(|(n, s)| (n.clone(), s.replace("#include <stdio.h>\n#include <stdlib.h>\n", "int printf(const char *, ...);\nint atoi(const char *);\n")))
        .collect()
}

pub fn pgo_and_file(w: &Work) -> Result<(), String> {
    let p = program(0x00c0_ff1e, 120);
    let srcs = sources(&p);
    for (name, src) in &srcs {
        w.write(name, src)?;
    }
    // Train as an ELF program.
    w.build(&p, &["-fprofile-instr-generate"])?;
    w.ok(&mut w.link("lld", "gen", &["-fprofile-instr-generate"]))?;
    w.ok(w.cmd(w.path("gen")).arg("20000").env("LLVM_PROFILE_FILE", w.path("cg.profraw")))?;
    w.ok(w.cmd(PROFDATA).args(["merge", "-o", "cg.profdata", "cg.profraw"]))?;
    // The COFF objects, with the profile.
    w.write("stub.c", "int printf(const char *f, ...) { return 0; }\nint atoi(const char *s) { return s[0]; }\n")?;
    let mut with_profile = 0;
    for (file, _) in srcs.iter().map(|(n, s)| (n.as_str(), s)).chain([("stub.c", &String::new())]) {
        let obj = file.replace(".c", ".obj");
        let profile: &[&str] = if file == "stub.c" { &[] } else { &["-fprofile-instr-use=cg.profdata", "-Wno-profile-instr-out-of-date"] };
        w.ok(w.cmd(super::CLANG).args(["-c", "-O2", "-ffunction-sections", "--target=x86_64-pc-windows-msvc"]).args(profile).arg(file).arg("-o").arg(&obj))?;
        let data = fs::read(w.path(&obj)).map_err(|e| format!("read {obj}: {e}"))?;
        if data.windows(24).any(|x| x == b".llvm.call-graph-profile") {
            with_profile += 1;
        }
    }
    if with_profile < 3 {
        return Err(format!("only {with_profile} of 4 objects have a .llvm.call-graph-profile section: the PGO build did not work"));
    }
    w.ok(w.cmd(super::LLVM_AR).args(["rcs", "libcg.lib", "t3.obj", "t2.obj"]))?;

    // An ordering file over the functions (statics included), main and unknown names.
    let mut rng = Rng(0x5151_0ff1);
    let mut names: Vec<&str> = p.funcs.iter().map(|(n, _, _)| n.as_str()).collect();
    names.extend(["main", "printf", "nosuch"]);
    let mut text = String::from("# from to weight\n\n");
    for k in 0..300 {
        let (a, b) = (rng.pick(&names), rng.pick(&names));
        let b = if k % 41 == 0 { a } else { b };
        let weight = rng.pick(&["0", "1", "2", "5", "10", "100", "1000", "50000", "0x20", "017"]);
        text += &format!("{a} {b} {weight}\n");
    }
    w.write("cg.txt", &text)?;

    let dtld = w.path("bin/lld-link");
    fs::create_dir_all(w.path("bin")).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&w.dtld, &dtld).map_err(|e| format!("symlink: {e}"))?;
    let variants: &[(&str, &[&str])] = &[
        ("default", &[]),
        ("no-sort", &["/call-graph-profile-sort:no"]),
        ("file", &["/call-graph-ordering-file:cg.txt"]),
        // `/demangle:no`: the string literal kept by `/opt:noref` is named differently in the map
        // (lld writes `"%u\n"`, dtld's demangler `` `string' ``), which is no ordering matter.
        ("file-noref", &["/call-graph-ordering-file:cg.txt", "/opt:noref", "/demangle:no"]),
        ("file-quiet", &["/call-graph-ordering-file:cg.txt", "/ignore:4037"]),
    ];
    let mut maps = Vec::new();
    for (what, extra) in variants {
        let mut out = Vec::new();
        for (linker, prog) in [("lld", PathBuf::from(LLD_LINK)), ("dtld", dtld.clone())] {
            let base = format!("{linker}-{what}");
            let res = w.ok(w
                .cmd(&prog)
                .args(["t0.obj", "t1.obj", "libcg.lib", "stub.obj", "/entry:main", "/subsystem:console", "/nodefaultlib"])
                .args(*extra)
                .arg(format!("/lldmap:{base}.map"))
                .arg(format!("/print-symbol-order:{base}.sym"))
                .arg(format!("/out:{base}.exe")))?;
            let mut warnings: Vec<String> = res.stderr_text().lines().filter_map(|l| l.split_once("warning: ").map(|(_, m)| m.to_string())).collect();
            warnings.sort();
            let sym = fs::read_to_string(w.path(&format!("{base}.sym"))).ok();
            out.push((w.read_string(&format!("{base}.map"))?, warnings, sym));
        }
        if out[0].0 != out[1].0 {
            let (a, b) = (out[0].0.lines(), out[1].0.lines());
            let first = a.zip(b).position(|(x, y)| x != y).unwrap_or(0);
            let show = |m: &str| m.lines().skip(first.saturating_sub(2)).take(8).collect::<Vec<_>>().join("\n    ");
            return Err(format!(
                "{what}: dtld's map differs from lld-link's at line {first}:\n  lld:\n    {}\n  dtld:\n    {}",
                show(&out[0].0),
                show(&out[1].0)
            ));
        }
        if out[0].2 != out[1].2 || (*what != "no-sort" && out[0].2.as_ref().is_none_or(|s| s.is_empty())) {
            return Err(format!("{what}: /print-symbol-order: files differ or are empty:\n  lld:  {:?}\n  dtld: {:?}", out[0].2, out[1].2));
        }
        if out[0].1 != out[1].1 {
            return Err(format!("{what}: warnings differ:\n  lld:  {:?}\n  dtld: {:?}", out[0].1, out[1].1));
        }
        let nosuch = out[0].1.iter().any(|l| l.ends_with("cg.txt: no such symbol: nosuch"));
        if nosuch != (what.starts_with("file") && *what != "file-quiet") {
            return Err(format!("{what}: lld-link's `no such symbol` warnings are not what the trial expects: {:?}", out[0].1));
        }
        maps.push(out.swap_remove(0).0);
    }
    if maps[0] == maps[1] || maps[2] == maps[1] {
        return Err("the call graph orders nothing (the default or the file's map equals /call-graph-profile-sort:no's): the trial tests nothing".into());
    }
    Ok(())
}

//! lld-link's `/map` (link.exe's format, lld's `MapFile.cpp`) against lld-link-22.
//!
//! Why this exists: tools parse link.exe-style maps (publics by value, static symbols, the
//! exports of `/mapinfo:exports`), so dtld's must be lld-link's. Two links, each by lld-link-22
//! and by dtld (as `lld-link`), with `/timestamp:` so that the header's date is fixed:
//!
//! * a program of C objects, an `llvm-mc` object with an absolute symbol, an archive member,
//!   a common, statics, and imports from a DLL's import library (`__imp_` symbols and a thunk);
//! * a DLL with a `.def` file that renames an export and gives another an ordinal, with
//!   `/mapinfo:exports` and `/opt:noref`.
//!
//! The maps must be byte-identical. The `/map`-`/lldmap` clash and `/mapinfo:` errors are
//! diagnostics trials (tests/diagnostics).

use std::fs;
use std::path::PathBuf;

use super::Work;

const LLD_LINK: &str = "lld-link-22";

fn cl(w: &Work, src: &str, text: &str) -> Result<(), String> {
    w.write(src, text)?;
    let obj = src.replace(".c", ".obj");
    w.ok(w.cmd(super::CLANG).args(["-c", "-O1", "-fcommon", "--target=x86_64-pc-windows-msvc"]).arg(src).arg("-o").arg(obj)).map(drop)
}

pub fn link_map_vs_lld_link(w: &Work) -> Result<(), String> {
    cl(w, "dll.c", "__declspec(dllexport) int dfun(int x) { return x + 1; }\n__declspec(dllexport) int dvar = 5;\n")?;
    w.ok(w.cmd(LLD_LINK).args(["/dll", "/noentry", "dll.obj", "/out:dd.dll", "/implib:dd.lib"]))?;
    cl(
        w,
        "u.c",
        "__declspec(dllimport) int dfun(int);\n__declspec(dllimport) extern int dvar;\nint viathunk(int);\nint g(void);\n\
         int common_var;\nstatic __attribute__((noinline)) int sfun(int x) { return x * 7; }\nstatic int sdata[4] = {1, 2, 3, 4};\n\
         int main(void) { return dfun(sdata[common_var & 3]) + dvar + sfun(common_var) + viathunk(1) + g(); }\n",
    )?;
    cl(w, "g.c", "int g(void) { return 1; }\n")?;
    w.ok(w.cmd(super::LLVM_AR).args(["rc", "libg.lib", "g.obj"]))?;
    w.write("a.s", ".globl absym\n.set absym, 0x1234\n.globl viathunk\n.text\nviathunk: jmp dfun\n")?;
    w.ok(w.cmd("llvm-mc-22").args(["-filetype=obj", "-triple=x86_64-pc-windows-msvc", "a.s", "-o", "a.obj"]))?;
    cl(
        w,
        "e.c",
        "static __attribute__((noinline)) int sfun(int x) { return x * 7; }\nstatic int sdata[4] = {1, 2, 3, 4};\n\
         int internal_name(int x) { return sfun(x) + sdata[x & 3]; }\n__declspec(dllexport) int other(int x) { return x; }\n",
    )?;
    w.write("e.def", "EXPORTS\n  renamed=internal_name\n  other @7\n")?;

    let dtld = w.path("bin/lld-link");
    fs::create_dir_all(w.path("bin")).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&w.dtld, &dtld).map_err(|e| format!("symlink: {e}"))?;
    let links: &[(&str, &[&str])] = &[
        ("exe", &["u.obj", "a.obj", "libg.lib", "dd.lib", "/entry:main", "/subsystem:console", "/include:absym", "/out:prog.exe"]),
        ("dll", &["e.obj", "/dll", "/noentry", "/def:e.def", "/mapinfo:exports", "/opt:noref", "/out:lib.dll"]),
    ];
    for (what, args) in links {
        let mut maps = Vec::new();
        for (linker, prog) in [("lld", PathBuf::from(LLD_LINK)), ("dtld", dtld.clone())] {
            let map = format!("{linker}-{what}.map");
            w.ok(w.cmd(&prog).args(*args).args(["/timestamp:1700000000"]).arg(format!("/map:{map}")))?;
            maps.push(w.read_string(&map)?);
        }
        if maps[0] != maps[1] {
            return Err(format!("{what}: dtld's /map differs from lld-link's:\n--- lld\n{}--- dtld\n{}", maps[0], maps[1]));
        }
        let want: &[&str] = match *what {
            "exe" => &["<absolute>", "<common>", "dd:dd.dll", "__imp_dvar", "libg:g.obj", " Static symbols\n\n 0001:"],
            _ => &["exported name: renamed", "        7    other"],
        };
        if let Some(missing) = want.iter().find(|n| !maps[0].contains(**n)) {
            return Err(format!("{what}: lld-link's map no longer has {missing:?}: the trial tests less than it says\n{}", maps[0]));
        }
    }
    Ok(())
}

//! lld-link's `/linkrepro:<dir>` and `/reproduce:<file>`: the same archive as lld-link-22's.
//!
//! Why this exists: a COFF bug report made with dtld must unpack and replay like one made with
//! lld-link. The trials link the same inputs (objects, an archive named on the command line and
//! one a `.drectve` `/defaultlib` finds in the current directory before `/libpath:`, a thin
//! archive whose member is extracted, `/wholearchive:`, `/def:` and `/order:@` files, a
//! quoted value) with lld-link-22 and with dtld (as `lld-link`) and check:
//!
//! * the archives hold the same files (sorted; lld's order follows its reading threads);
//! * `response.txt` is lld's, line for line, but for the three clang library directories, which
//!   each linker derives from its own place (`<root>/lib/clang/22/lib/windows`, ...): their
//!   root is replaced by `<root>` on both sides;
//! * after the inputs are deleted, `cd repro && lld-link @response.txt` (dtld) writes the same
//!   image (`/Brepro`) from the extracted tree alone;
//! * `/reproduce:<file>` roots the archive at the file's stem; a link that fails reading its
//!   inputs leaves an archive with what was read and no `response.txt`, as lld's does.

use std::fs;
use std::path::{Path, PathBuf};

use super::Work;

const LLD_LINK: &str = "lld-link-22";

impl Work<'_> {
    /// dtld as `lld-link` (its flavour comes from its program name).
    fn dtld_link(&self) -> Result<PathBuf, String> {
        let link = self.path("bin/lld-link");
        if !link.exists() {
            fs::create_dir_all(self.path("bin")).map_err(|e| e.to_string())?;
            std::os::unix::fs::symlink(&self.dtld, &link).map_err(|e| format!("symlink: {e}"))?;
        }
        Ok(link)
    }

    fn cl(&self, src: &str) -> Result<(), String> {
        let obj = src.replace(".c", ".obj");
        self.ok(self.cmd(super::CLANG).args(["-c", "--target=x86_64-pc-windows-msvc", "-O1"]).arg(src).arg("-o").arg(obj)).map(drop)
    }
}

/// The root of a linker's installation as lld-link's `addClangLibSearchPaths` finds it, as
/// `relativeToRoot` writes it.
fn install_root(program: &Path) -> Result<String, String> {
    let exe = if program.components().count() > 1 { program.to_path_buf() } else { which(program)? };
    let real = fs::canonicalize(&exe).map_err(|e| format!("canonicalize {}: {e}", exe.display()))?;
    let root = real.parent().and_then(Path::parent).ok_or("no root")?;
    Ok(root.to_string_lossy().trim_start_matches('/').to_string())
}

fn which(program: &Path) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.exists()).ok_or(format!("{} not in PATH", program.display()))
}

/// `response.txt` with the linker's clang library directories made neutral.
fn neutral(response: &str, root: &str) -> Result<String, String> {
    let mut n = 0;
    let out: String = response
        .lines()
        .map(|l| match l.strip_prefix(&format!("/libpath:{root}/lib")) {
            Some(rest) => {
                n += 1;
                format!("/libpath:<root>/lib{rest}\n")
            }
            None => format!("{l}\n"),
        })
        .collect();
    if n != 3 {
        return Err(format!("expected the 3 clang library directories below {root}:\n{response}"));
    }
    Ok(out)
}

/// main.obj (pulls `g` through its `.drectve` `/defaultlib:libg`, `t` from a thin archive);
/// lib/libg.lib; libt.lib (thin) of sub/t.obj; whole.lib; x.def; order.txt.
fn build_inputs(w: &Work) -> Result<(), String> {
    w.write(
        "main.c",
        "#pragma comment(lib, \"libg\")\nint g(void); int t(void); int w(void);\n\
         int main(void) { return g() + t() + w(); }\n",
    )?;
    w.write("lib/g.c", "int g(void) { return 1; }\n")?;
    w.write("sub/t.c", "int t(void) { return 2; }\n")?;
    w.write("whole.c", "int w(void) { return 3; }\nint unused(void) { return 4; }\n")?;
    for c in ["main.c", "lib/g.c", "sub/t.c", "whole.c"] {
        w.cl(c)?;
    }
    w.ok(w.cmd(super::LLVM_AR).args(["rc", "lib/libg.lib", "lib/g.obj"]))?;
    w.ok(w.cmd(super::LLVM_AR).args(["rcT", "libt.lib", "sub/t.obj"]))?;
    w.ok(w.cmd(super::LLVM_AR).args(["rc", "whole.lib", "whole.obj"]))?;
    w.write("x.def", "EXPORTS\n  g\n")?;
    w.write("order.txt", "main\n")
}

const ARGS: &[&str] = &[
    "main.obj",
    "libt.lib",
    "/libpath:lib",
    "/wholearchive:whole.lib",
    "/def:x.def",
    "/order:@order.txt",
    "/ENTRY:main",
    "-subsystem:console",
    "/failifmismatch:k=a b",
    "/Brepro",
    "/ignore:4037",
    "/out:out/prog.exe",
];

pub fn linkrepro(w: &Work) -> Result<(), String> {
    build_inputs(w)?;
    for d in ["out", "lld-dir", "dtld-dir"] {
        fs::create_dir_all(w.path(d)).map_err(|e| e.to_string())?;
    }
    w.ok(w.cmd(LLD_LINK).args(ARGS).arg("/linkrepro:lld-dir"))?;
    let dtld = w.dtld_link()?;
    w.ok(w.cmd(&dtld).args(ARGS).arg("/linkrepro:dtld-dir"))?;
    let original = w.read("out/prog.exe")?;

    let mut lld_list = w.tar_list("lld-dir/repro.tar")?;
    let mut list = w.tar_list("dtld-dir/repro.tar")?;
    lld_list.sort();
    list.sort();
    if list != lld_list {
        return Err(format!("the archive's files differ from lld-link's:\n  dtld: {list:?}\n  lld:  {lld_list:?}"));
    }
    let root = super::rel_root(w)?;
    for want in ["lib/libg.lib", "sub/t.obj", "x.def", "order.txt"] {
        if !list.contains(&format!("repro/{root}/{want}")) {
            return Err(format!("the archive lacks {want}: {list:?}"));
        }
    }
    let ours = neutral(&w.tar_member("dtld-dir/repro.tar", "repro/response.txt")?, &install_root(&w.dtld)?)?;
    let lld = neutral(&w.tar_member("lld-dir/repro.tar", "repro/response.txt")?, &install_root(Path::new(LLD_LINK))?)?;
    if ours != lld {
        return Err(format!("response.txt differs from lld-link's:\n--- dtld\n{ours}--- lld\n{lld}"));
    }
    if !ours.contains("\n/failifmismatch:\"k=a b\"\n") || !ours.contains(&format!("\n/def:{root}/x.def\n")) {
        return Err(format!("unexpected response.txt:\n{ours}"));
    }

    // Replay from the extracted tree alone.
    for f in ["main.obj", "libt.lib", "sub/t.obj", "lib/libg.lib", "whole.lib", "x.def", "order.txt"] {
        fs::remove_file(w.path(f)).map_err(|e| format!("rm {f}: {e}"))?;
    }
    fs::create_dir_all(w.path("ext")).map_err(|e| e.to_string())?;
    w.ok(w.cmd("tar").args(["-xf", "dtld-dir/repro.tar", "-C", "ext"]))?;
    let tree = w.path("ext/repro");
    let mut relink = w.cmd(&dtld);
    relink.current_dir(&tree).arg("@response.txt");
    w.ok(&mut relink)?;
    let again = fs::read(tree.join("prog.exe")).map_err(|e| format!("the replay wrote no prog.exe: {e}"))?;
    if again != original {
        return Err("the image linked from the archive differs from the original".into());
    }
    Ok(())
}

pub fn reproduce_and_failure(w: &Work) -> Result<(), String> {
    build_inputs(w)?;
    let dtld = w.dtld_link()?;
    // `/reproduce:` wins over `/linkrepro:` and roots the archive at its stem.
    w.ok(w.cmd(&dtld).args([
        "main.obj",
        "libt.lib",
        "whole.lib",
        "/libpath:lib",
        "/entry:main",
        "/subsystem:console",
        "/out:p.exe",
        "/linkrepro:nodir",
        "/reproduce:my.tar",
    ]))?;
    let list = w.tar_list("my.tar")?;
    if !list.contains(&"my/response.txt".to_string()) || !list.iter().all(|f| f.starts_with("my/")) {
        return Err(format!("/reproduce:my.tar: {list:?}"));
    }
    // lld-link's `findFile` looks in the current directory before the `/libpath:`s: a `libg.lib`
    // here is the one `.drectve`'s `/defaultlib:libg` reads.
    w.write("g.c", "int g(void) { return 5; }\n")?;
    w.cl("g.c")?;
    w.ok(w.cmd(super::LLVM_AR).args(["rc", "libg.lib", "g.obj"]))?;
    let args = ["main.obj", "libt.lib", "whole.lib", "/libpath:lib", "/entry:main", "/subsystem:console", "/out:p.exe", "/reproduce:cwd.tar"];
    w.ok(w.cmd(LLD_LINK).args(args))?;
    let lld = w.tar_list("cwd.tar")?;
    w.ok(w.cmd(&dtld).args(args))?;
    let ours = w.tar_list("cwd.tar")?;
    let root = super::rel_root(w)?;
    let (mut a, mut b) = (ours.clone(), lld.clone());
    a.sort();
    b.sort();
    if a != b || !ours.contains(&format!("cwd/{root}/libg.lib")) {
        return Err(format!("/defaultlib found another file than lld-link's:\n  dtld: {ours:?}\n  lld:  {lld:?}"));
    }
    // A link that cannot read an input: what was read before it, no response.txt.
    for (linker, tar) in [(PathBuf::from(LLD_LINK), "lld.tar"), (dtld, "dtld.tar")] {
        let o = w.run(w.cmd(&linker).args(["main.obj", "nosuch.obj", "/entry:main", "/subsystem:console", "/out:q.exe"]).arg(format!("/reproduce:{tar}")))?;
        if o.success() {
            return Err(format!("{}: a link of a missing file succeeded", linker.display()));
        }
    }
    let strip = |l: Vec<String>| l.into_iter().map(|f| f.split_once('/').map_or(f.clone(), |(_, r)| r.to_string())).collect::<Vec<_>>();
    let (lld, ours) = (strip(w.tar_list("lld.tar")?), strip(w.tar_list("dtld.tar")?));
    if ours != lld || ours.iter().any(|f| f == "response.txt") {
        return Err(format!("after a failed read:\n  dtld: {ours:?}\n  lld:  {lld:?}"));
    }
    Ok(())
}

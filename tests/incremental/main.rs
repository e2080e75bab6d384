//! `--incremental` (issue 38, docs/incremental.md), on the real binary through clang's driver:
//! what the first step of incremental relinking promises.
//!
//! * A relink that finds nothing changed ends without linking (`--verbose`: `incremental: ...
//!   is up to date`), leaves the output byte-identical and renews its time stamps; an input
//!   rebuilt with the same bytes is unchanged.
//! * Everything else is a full link that says why (`incremental: full link: <why>`): an edited
//!   source, other options, an output changed since (stripped), a library found in another
//!   directory, an edited version script, a damaged state; its output is byte-identical to a
//!   from-scratch link of the same inputs, and the program behaves as the ld.lld-22 build of
//!   the same inputs.
//! * No state is kept for a link that warned (a skipped relink would not warn again) or wrote a
//!   side output (`-Map`), and none without `--incremental`.
//!
//! Every trial works in `<target>/incremental-tests/<trial>/` (kept on failure or with
//! `DTLD_HARNESS_KEEP=1`). Environment: `DTLD` (default `<target>/release/dtld`).

use std::fs;
use std::path::{Path, PathBuf};

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{find_dtld, target_dir, Outcome, CLANG, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

struct Context {
    dtld: PathBuf,
    root: PathBuf,
    keep: bool,
}

type Body = fn(&Context, &TrialDir) -> Result<(), String>;

const MAIN: &str = "#include <stdio.h>\nint f(int);\nextern const char *greeting;\nint main(void) { printf(\"%s %d\\n\", greeting, f(20)); return 0; }\n";
const F1: &str = "const char *greeting = \"hello\";\nint f(int x) { return x + 1; }\n";
const F2: &str = "const char *greeting = \"hello, world\";\nint f(int x) { return x * 3 + 2; }\n";

fn main() {
    let args = Arguments::from_args();
    let ctx: &'static Context = match find_dtld() {
        Ok(dtld) => Box::leak(Box::new(Context { dtld, root: target_dir().join("incremental-tests"), keep: keep_requested() })),
        Err(e) => {
            eprintln!("incremental: {e}");
            std::process::exit(1);
        }
    };
    let trials: Vec<(&str, Body)> = vec![
        ("up-to-date/nothing-changed", nothing_changed),
        ("up-to-date/rebuilt-same-bytes", rebuilt_same_bytes),
        ("full/edited-source", edited_source),
        ("full/options-changed", options_changed),
        ("full/output-stripped", output_stripped),
        ("full/library-shadowed", library_shadowed),
        ("full/version-script-edited", version_script_edited),
        ("full/damaged-state", damaged_state),
        ("no-state/warning", no_state_after_warning),
        ("no-state/map-file", no_state_with_map),
        ("no-state/without-incremental", no_state_without_option),
    ];
    let trials = trials
        .into_iter()
        .map(|(name, body)| {
            Trial::test(name, move || {
                let dir = ctx.root.join(name.replace('/', "-"));
                run_in(&dir, ctx.keep, &[format!("dtld: {}", ctx.dtld.display())], |w| body(ctx, w)).map_err(Failed::from)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn compile(w: &TrialDir, name: &str, src: &str) -> Result<(), String> {
    w.write(&format!("{name}.c"), src)?;
    w.ok(w.cmd(CLANG).args(["-c", "-O1", "-fPIE"]).arg(format!("{name}.c")).arg("-o").arg(format!("{name}.o")))?;
    Ok(())
}

/// Links `args` into `out` with dtld (`--incremental --verbose`, plus `extra`) and returns its
/// `incremental:` lines.
fn link(c: &Context, w: &TrialDir, out: &str, args: &[&str], extra: &[&str]) -> Result<String, String> {
    let mut cmd = w.cmd(CLANG);
    cmd.arg(format!("-fuse-ld={}", c.dtld.display())).args(args).args(extra).args(["-Wl,--incremental", "-Wl,--verbose", "-o", out]);
    let o = w.ok(&mut cmd)?;
    Ok(o.stderr_text().lines().filter(|l| l.contains(": incremental: ")).collect::<Vec<_>>().join("\n"))
}

fn expect(what: &str, lines: &str, want: &str) -> Result<(), String> {
    if lines.contains(want) {
        Ok(())
    } else {
        Err(format!("{what}: expected `{want}` in the incremental lines, got:\n{lines}"))
    }
}

/// The program's output, and the same from the ld.lld-22 build of the same arguments.
fn run_both(c: &Context, w: &TrialDir, prog: &str, args: &[&str]) -> Result<(), String> {
    let _ = c;
    w.ok(w.cmd(CLANG).arg("-fuse-ld=lld").args(args).args(["-o", "prog.lld"]))?;
    let ours = w.run(&mut w.cmd(w.path(prog)))?;
    let theirs = w.run(&mut w.cmd(w.path("prog.lld")))?;
    let show = |o: &Outcome| format!("{} {:?}", o.status_text(), String::from_utf8_lossy(&o.stdout));
    if show(&ours) != show(&theirs) {
        return Err(format!("dtld's program: {}, ld.lld-22's: {}", show(&ours), show(&theirs)));
    }
    Ok(())
}

/// The output is byte-identical to a from-scratch `--incremental` link of the same arguments
/// (made to the same path: a shared library without `-soname` names itself by the output path).
fn same_as_from_scratch(c: &Context, w: &TrialDir, prog: &str, args: &[&str]) -> Result<(), String> {
    let relinked = read(&w.path(prog))?;
    fs::remove_file(w.path(prog)).and_then(|()| fs::remove_file(w.path(&format!("{prog}.dtld-incremental")))).map_err(|e| e.to_string())?;
    expect("from scratch", &link(c, w, prog, args, &[])?, "full link: no state")?;
    if read(&w.path(prog))? != relinked {
        return Err(format!("{prog} differs from a from-scratch link of the same inputs"));
    }
    Ok(())
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn mtime(p: &Path) -> Result<std::time::SystemTime, String> {
    fs::metadata(p).and_then(|m| m.modified()).map_err(|e| format!("{}: {e}", p.display()))
}

fn two_units(w: &TrialDir) -> Result<(), String> {
    compile(w, "main", MAIN)?;
    compile(w, "f", F1)
}

const ARGS: &[&str] = &["-pie", "main.o", "f.o"];

fn nothing_changed(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    expect("first link", &link(c, w, "prog", ARGS, &[])?, "full link: no state")?;
    if !w.path("prog.dtld-incremental").is_file() {
        return Err("no state beside the output".into());
    }
    run_both(c, w, "prog", ARGS)?;
    let (bytes, before) = (read(&w.path("prog"))?, mtime(&w.path("prog"))?);
    std::thread::sleep(std::time::Duration::from_millis(20));
    expect("relink", &link(c, w, "prog", ARGS, &[])?, "prog is up to date")?;
    if read(&w.path("prog"))? != bytes {
        return Err("the output changed".into());
    }
    if mtime(&w.path("prog"))? <= before {
        return Err("the output's modification time was not renewed".into());
    }
    // And again: the refreshed state is valid.
    expect("second relink", &link(c, w, "prog", ARGS, &[])?, "prog is up to date")
}

fn rebuilt_same_bytes(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    link(c, w, "prog", ARGS, &[])?;
    std::thread::sleep(std::time::Duration::from_millis(20));
    compile(w, "f", F1)?;
    expect("relink after rebuilding f.o", &link(c, w, "prog", ARGS, &[])?, "prog is up to date")
}

fn edited_source(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    link(c, w, "prog", ARGS, &[])?;
    compile(w, "f", F2)?;
    expect("relink after an edit", &link(c, w, "prog", ARGS, &[])?, "full link: f.o changed")?;
    run_both(c, w, "prog", ARGS)?;
    same_as_from_scratch(c, w, "prog", ARGS)?;
    expect("relink after that", &link(c, w, "prog", ARGS, &[])?, "prog is up to date")
}

fn options_changed(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    link(c, w, "prog", ARGS, &["-Wl,--threads=1"])?;
    // Options that cannot change the output (threads, colours, the error limit) are no change.
    expect("relink with other threads", &link(c, w, "prog", ARGS, &["-Wl,--threads=2", "-Wl,--error-limit=5"])?, "prog is up to date")?;
    expect("relink with -z now", &link(c, w, "prog", ARGS, &["-Wl,-z,now"])?, "full link: the command line")
}

fn output_stripped(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    link(c, w, "prog", ARGS, &[])?;
    let bytes = read(&w.path("prog"))?;
    w.ok(w.cmd("llvm-strip-22").arg("prog"))?;
    expect("relink after strip", &link(c, w, "prog", ARGS, &[])?, "prog changed since the last link")?;
    if read(&w.path("prog"))? != bytes {
        return Err("the relinked output differs from the first link's".into());
    }
    Ok(())
}

fn library_shadowed(c: &Context, w: &TrialDir) -> Result<(), String> {
    compile(w, "main", MAIN)?;
    compile(w, "f", F1)?;
    fs::create_dir_all(w.path("d1")).and_then(|()| fs::create_dir_all(w.path("d2"))).map_err(|e| e.to_string())?;
    w.ok(w.cmd(LLVM_AR).args(["rcs", "d1/libf.a", "f.o"]))?;
    let args = ["-pie", "main.o", "-Ld2", "-Ld1", "-lf"];
    link(c, w, "prog", &args, &[])?;
    // A libf.a appears in the directory searched first: the link reads another file.
    compile(w, "f", F2)?;
    w.ok(w.cmd(LLVM_AR).args(["rcs", "d2/libf.a", "f.o"]))?;
    expect("relink", &link(c, w, "prog", &args, &[])?, "full link: the link reads other files than last time")?;
    run_both(c, w, "prog", &args)
}

fn version_script_edited(c: &Context, w: &TrialDir) -> Result<(), String> {
    compile(w, "f", F1)?;
    w.write("v.map", "V1 { global: f; local: *; };\n")?;
    let args = ["-shared", "f.o", "-Wl,--version-script=v.map"];
    link(c, w, "libf.so", &args, &[])?;
    w.write("v.map", "V1 { global: f; greeting; local: *; };\n")?;
    expect("relink", &link(c, w, "libf.so", &args, &[])?, "full link: v.map changed")?;
    same_as_from_scratch(c, w, "libf.so", &args)
}

fn damaged_state(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    link(c, w, "prog", ARGS, &[])?;
    let state = w.path("prog.dtld-incremental");
    let mut s = read(&state)?;
    let i = s.len() / 2;
    s[i] ^= 0x40;
    fs::write(&state, s).map_err(|e| e.to_string())?;
    expect("relink", &link(c, w, "prog", ARGS, &[])?, "prog.dtld-incremental is damaged")?;
    expect("relink after that", &link(c, w, "prog", ARGS, &[])?, "prog is up to date")
}

fn no_state_after_warning(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    link(c, w, "prog", ARGS, &[])?;
    // `-z foo` warns (as in lld): the state goes, and the next link is a full one that warns again.
    expect("link that warns", &link(c, w, "prog", ARGS, &["-Wl,-z,foo"])?, "no state kept: the link printed warnings")?;
    if w.path("prog.dtld-incremental").exists() {
        return Err("a state was kept for a link that warned".into());
    }
    expect("relink", &link(c, w, "prog", ARGS, &["-Wl,-z,foo"])?, "full link: no state")
}

fn no_state_with_map(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    expect("link with -Map", &link(c, w, "prog", ARGS, &["-Wl,-Map=prog.map"])?, "no state kept: -Map writes more than the output")?;
    if w.path("prog.dtld-incremental").exists() {
        return Err("a state was kept for a link with -Map".into());
    }
    Ok(())
}

fn no_state_without_option(c: &Context, w: &TrialDir) -> Result<(), String> {
    two_units(w)?;
    w.ok(w.cmd(CLANG).arg(format!("-fuse-ld={}", c.dtld.display())).args(ARGS).args(["-o", "prog"]))?;
    if w.path("prog.dtld-incremental").exists() {
        return Err("a state was written without --incremental".into());
    }
    Ok(())
}

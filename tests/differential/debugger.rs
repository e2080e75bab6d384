//! What a debugger sees in the two outputs of a debug build: the `//#Gdb:` commands run by gdb
//! in batch mode on each program, and the `//#DwarfDump:` dumps of `llvm-dwarfdump-22`. A
//! linker can produce a program that runs correctly and still break debugging: a relocation
//! from `.debug_info`/`.debug_ranges`/`.debug_line` to a discarded function resolved to an
//! address that collides with live code (lld writes tombstones: 0, or 1 in `.debug_ranges` and
//! `.debug_loc`), a line table that is cut short, a `.debug_str` offset pointing at the wrong
//! string. Both transcripts are normalised so that only what does not depend on addresses,
//! pids or the build directory is compared.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use dtld_tests::{run_with_timeout, Outcome};
use regex::Regex;

use crate::directives::Fixture;

pub const GDB: &str = "gdb";
pub const LLVM_DWARFDUMP: &str = "llvm-dwarfdump-22";

/// How long one gdb session may take.
pub const GDB_TIMEOUT: Duration = Duration::from_secs(60);

/// The settings every session starts with: no init files, no network (debuginfod), no paging,
/// no line wrapping, no questions.
const GDB_SETTINGS: &[&str] = &["set debuginfod enabled off", "set pagination off", "set width 0", "set height 0", "set confirm off"];

/// `gdb -batch` running `fx`'s `Gdb` commands on `./<prog>` (with the fixture's run arguments
/// and environment) in `dir`.
pub fn gdb_command(fx: &Fixture, dir: &Path, prog: &str) -> Command {
    let mut cmd = Command::new(GDB);
    cmd.current_dir(dir).env("DEBUGINFOD_URLS", "").args(["-nx", "-nh", "-batch"]);
    for c in GDB_SETTINGS.iter().copied().chain(fx.gdb.iter().map(String::as_str)) {
        cmd.arg("-ex").arg(c);
    }
    cmd.arg("--args").arg(format!("./{prog}")).args(&fx.run_args);
    for (k, v) in &fx.env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs one gdb session (no stdin) and returns its outcome.
pub fn run_gdb(cmd: &mut Command) -> Result<Outcome, String> {
    run_with_timeout(cmd, &[], GDB_TIMEOUT).map_err(|e| format!("cannot run gdb: {e}"))
}

/// Replaces the paths a transcript may contain (`replacements`: longest first) and the
/// program's file name, so that both sides read the same.
fn replace_paths(text: &str, replacements: &[(String, &str)], prog: &str) -> String {
    let mut text = text.to_string();
    for (from, to) in replacements {
        if !from.is_empty() {
            text = text.replace(from.as_str(), to);
        }
    }
    // `prog.dtld` / `prog.lld` → `prog`, only as a whole word.
    let re = Regex::new(&format!(r"\b{}\b", regex::escape(prog))).expect("valid regex");
    re.replace_all(&text, "prog").into_owned()
}

/// A gdb transcript without what depends on the run rather than on the program: addresses
/// (`0x…`), pids and LWP ids, the thread-library banner lines, paths and the program's name.
pub fn normalize_gdb(text: &str, replacements: &[(String, &str)], prog: &str) -> String {
    let text = replace_paths(text, replacements, prog);
    let hex = Regex::new(r"0x[0-9a-f]+").expect("valid regex");
    let pid = Regex::new(r"\b(process|LWP) [0-9]+").expect("valid regex");
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("[Thread debugging using libthread_db enabled]") || line.starts_with("Using host libthread_db library ") {
            continue;
        }
        let line = hex.replace_all(line, "0x…");
        let line = pid.replace_all(&line, "$1 N");
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// An `llvm-dwarfdump` dump without what depends on the layout: addresses are the same in both
/// outputs only if the two linkers place code and data alike, so every hexadecimal value of at
/// least 0x1000 (no x86-64 program maps code or data below that), `0x`-prefixed or a bare
/// 16-digit address, is written `0xADDR` (`ADDR`), while the
/// small values the linker writes for references to discarded code (lld's tombstones: 0, or 1
/// in `.debug_ranges`/`.debug_loc`) stay visible. Offsets into `.debug_str`/`.debug_line_str`
/// (which depend on how the strings were merged) are dropped; the strings themselves stay.
pub fn normalize_dwarfdump(text: &str, replacements: &[(String, &str)], prog: &str) -> String {
    let text = replace_paths(text, replacements, prog);
    let strp = Regex::new(r"\.debug_(line_)?str\[0x[0-9a-f]+\]").expect("valid regex");
    let text = strp.replace_all(&text, ".debug_${1}str[…]");
    // `0x…` values, and the bare 16-digit addresses of the raw `.debug_ranges`/`.debug_loc`
    // listings (`00000000 000000000022a1b0 000000000022a20f`).
    let hex = Regex::new(r"\b(0x)?([0-9a-f]{16})\b|0x([0-9a-f]+)").expect("valid regex");
    hex.replace_all(&text, |c: &regex::Captures| {
        let (digits, prefix) = match (c.get(2), c.get(3)) {
            (Some(d), _) => (d.as_str(), c.get(1).map_or("", |p| p.as_str())),
            (None, Some(d)) => (d.as_str(), "0x"),
            (None, None) => unreachable!("the regex captures digits"),
        };
        match u64::from_str_radix(digits, 16) {
            Ok(v) if v < 0x1000 => c[0].to_string(),
            _ => format!("{prefix}ADDR"),
        }
    })
    .into_owned()
}

/// `llvm-dwarfdump-22 <args> <file>` in `dir`.
pub fn dwarfdump_command(dir: &Path, args: &[String], file: &str) -> Command {
    let mut cmd = Command::new(LLVM_DWARFDUMP);
    cmd.current_dir(dir).args(args).arg(file);
    cmd
}

pub const LLVM_READELF: &str = "llvm-readelf-22";

/// `llvm-readelf --wide -l/-S` output made comparable between linkers: the program's name is
/// `prog`, and for sections at address 0 (the non-allocated ones: `.comment`, which names the
/// linker, the symbol and string tables) only the name and type stay, as does the section
/// header table's offset. Everything about allocated sections and segments stays exact.
pub fn normalize_readelf(text: &str, prog: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.replace(prog, "prog");
        if line.contains("section headers, starting at offset") {
            out.push_str(line.split(", starting").next().unwrap_or(""));
            out.push('\n');
            continue;
        }
        // `  [ 5] .comment  PROGBITS  0000000000000000 0012ab 00006a 01  MS  0   0  1`
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('[') {
            if let Some((_, fields)) = rest.split_once(']') {
                let w: Vec<&str> = fields.split_whitespace().collect();
                if w.len() >= 3 && w[2].len() == 16 && w[2].bytes().all(|b| b == b'0') && w[0] != "Name" {
                    out.push_str(&format!("  [{}] {} {} (not allocated)\n", rest.split(']').next().unwrap_or("").trim(), w[0], w[1]));
                    continue;
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The first line at which two texts differ, with some context from both.
pub fn first_line_difference(ours: &str, theirs: &str) -> String {
    let a: Vec<&str> = ours.lines().collect();
    let b: Vec<&str> = theirs.lines().collect();
    let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let around = |lines: &[&str]| {
        let from = at.saturating_sub(3);
        let to = (at + 4).min(lines.len());
        lines[from..to]
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mark = if from + i == at { ">" } else { " " };
                format!("    {mark}| {l}\n")
            })
            .collect::<String>()
    };
    format!(
        "  first difference at line {} ({} lines from dtld's, {} from ld.lld's):\n  --- dtld ---\n{}  --- ld.lld ---\n{}",
        at + 1,
        a.len(),
        b.len(),
        around(&a),
        around(&b)
    )
}
